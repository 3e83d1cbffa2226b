//! One thread's share of a pool, its `Local`: a magazine and a depot (Bonwick's magazine
//! layer, in the shape of Go's per-P `poolLocal`).
//!
//! - A **magazine** of at most [`MAGAZINE_SIZE`] idle nodes that only the owning thread
//!   touches: no lock, no atomic read-modify-write (Go's `poolLocal.private`, widened).
//! - A **depot** behind it (`depot.rs`), which any thread may lock. A full magazine spills
//!   its older half there ([`SPILL`] nodes), or all of it if the thread got nothing since its
//!   last spill (it only puts, as a pipeline's consumer does): one lock per batch on each
//!   side of a handoff. An empty magazine refills with up to [`REFILL`] nodes at once from
//!   the thread's own depot, or else steals them from another thread's.
//! - A **slow start** ([`SLOW_START_OPS`]): a thread's first slow-path operations leave its
//!   magazine empty and go to depots directly, so that a thread that touches a pool a few
//!   times hides nothing where a trim cannot reach.
//!
//! The owner's half of a `Local` and the depot's sit on separate cache lines, so a thief
//! locking the depot does not evict the owner's magazine. Idle permits travel with the
//! nodes, and spare ones back through the depots (`Lists::parked`; see `budget.rs`). A trim
//! takes the magazines of other live threads that are not in the middle of an operation
//! through a handshake with the owner's hit path (`local/steal.rs`); in `Fence` mode it
//! takes none.
//!
//! This layer never looks inside a node: it is generic over the node type `N` and moves
//! [`NodePtr`]s. Freeing nodes is the pool's business (`shared.rs`), which drains a `Local`
//! before it drops it. Children: `local/list.rs` (the list of a pool's `Local`s),
//! `local/depot_ops.rs` (what any thread does to a depot alone), `local/steal.rs`.
//!
//! # Synchronization
//!
//! 1. The magazine (`OwnerSide::magazine`) is touched by one thread at a time: its owner,
//!    without a lock; or, holding the depot's lock, the owner's exit hook and the pool's
//!    close, which run only when the owner can no longer touch it unlocked (the thread is
//!    exiting; no pool handle is left); or a trimmer, under rule 5. Ownership passes from
//!    an exiting thread to the next through `owned`: a Release store on exit, under the
//!    depot's lock (a thief parks no permit at a depot whose thread exited: nothing would
//!    take it back), an Acquire CAS to claim.
//! 2. Nodes change hands only under a depot's lock, or through the refcount's last
//!    decrement (see `refcount.rs`).
//! 3. The depot's length and parked-permit mirrors, `hits` and the budget are Relaxed:
//!    hints and counts that never publish a node; parked permits themselves change only
//!    under their depot's lock. `OwnerSide::len`'s loads and stores are Relaxed too, but
//!    for rule 5's.
//! 4. The list of `Local`s is pushed at the front with a Release CAS and read with Acquire
//!    loads; a `Local`'s `next` is written only before it is published, and a `Local` is
//!    freed only with the pool.
//! 5. A trimmer touches a live owner's magazine only under the handshake (`steal.rs`):
//!    holding the depot's lock and the list's `stealing` lock, after its own request and a
//!    heavy barrier, and only if the owner's length shows no busy mark. The owner clears a
//!    request only under the depot's lock; `request` is Relaxed (the barrier and the lock
//!    order it); the owner clears its busy mark with a Release store of `len`, which the
//!    trimmer reads with Acquire.

use std::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use super::budget::{IdleBudget, PERMIT_BATCH};
use super::depot::{Depot, DepotGuard, Generation, NodePtr};
use crate::reclaim::barrier;
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Ordering, UnsafeCell};

mod depot_ops;
mod list;
mod steal;

pub(crate) use list::LocalList;

/// The most idle objects one thread's magazine holds, per pool (16; 2 under loom): the
/// share it gets and puts without a lock or an atomic read-modify-write. `Pool::trim`
/// reaches other live threads' magazines only in `Membarrier` mode.
pub(crate) const MAGAZINE_SIZE: usize = if cfg!(loom) { 2 } else { 16 };

/// How many nodes a full magazine spills to its depot at once.
const SPILL: usize = MAGAZINE_SIZE / 2;
/// The most idle permits a magazine holds, one per node in it and the rest spare: a `get`
/// turns a node's permit into a spare one, a put the other way, so the hit paths never
/// reach this bound and never touch the shared budget (see `budget.rs`).
pub(crate) const MAGAZINE_PERMITS: usize = MAGAZINE_SIZE + PERMIT_BATCH;
/// The most idle permits a depot keeps parked (see `budget.rs`); more go back to the
/// budget.
pub(crate) const PARKED_MAX: usize = 2 * MAGAZINE_SIZE;
/// The most nodes an empty magazine takes at once from a depot's primary list.
const REFILL: usize = MAGAZINE_SIZE;
/// Depot room reserved up front per list (beyond it a list grows, once).
const DEPOT_PRESIZE: usize = 64;

/// A thread's first slow-path operations on a pool that keep its magazine empty (the
/// *slow start* of tcmalloc's per-thread caches, whose length starts small and grows with
/// use): a get takes one object from a depot and hands it out, a put goes to the thread's
/// own depot, each under that depot's lock. A thread that touches a pool a few times and
/// then idles so hides nothing from `trim` and decay, even in `Fence` mode, where they
/// cannot reach another live thread's magazine; a thread that keeps using the pool pays
/// these locked operations once (about 16 gets and 16 puts), then runs on its magazine.
/// The hit paths do not look at it: an empty magazine with no spare permit already sends
/// both to their slow paths. 0 under loom, where most models check the magazine's paths;
/// the models of the slow start itself set a length per pool (`PoolBuilder::slow_start_ops`,
/// loom builds only), which the pool passes to [`LocalList::claim`] and
/// [`abandon`](Local::abandon).
pub(super) const SLOW_START_OPS: u32 = if cfg!(loom) {
    0
} else {
    2 * MAGAZINE_SIZE as u32
};

/// `OwnerSide::len` while the owner touches its magazine without a lock: the busy mark of
/// the handshake (`local/steal.rs`). A constant rather
/// than a bit beside the length: the owner keeps the length in a register meanwhile, and
/// storing an immediate is one instruction.
const BUSY: usize = usize::MAX;

/// `OwnerSide::request`: no trimmer has asked for the magazine since the owner last looked.
const NO_REQUEST: usize = 0;
/// A trimmer has asked for the magazine and issued (or is about to issue) a heavy barrier.
const REQUESTED: usize = 1;
/// A trimmer took the magazine: the owner's next operation must read it as empty.
const STOLEN: usize = 2;

/// One thread's share of one pool.
pub(crate) struct Local<N> {
    /// The owner's side.
    owner: CachePadded<OwnerSide<N>>,
    /// Shared with thieves and donors.
    depot: CachePadded<Depot<N>>,
    /// Whether a live thread owns this `Local`. Cleared on thread exit, after the flush;
    /// set by the thread that claims it.
    owned: AtomicBool,
    /// The next `Local` of the same pool; written only before this one is published.
    next: *const Local<N>,
}

/// The part of a `Local` that only its owner writes.
struct OwnerSide<N> {
    /// See the module's synchronization rule 1.
    magazine: UnsafeCell<Magazine<N>>,
    /// How many of the magazine's entries hold a node (the first `len`), or [`BUSY`] while
    /// the owner is in the middle of an unlocked operation; stale while `request` is
    /// [`STOLEN`] (the magazine is then empty). Written only by whoever may touch the
    /// magazine as its owner (rule 1); an atomic so that `stats` and trimmers may read it.
    len: AtomicUsize,
    /// [`NO_REQUEST`], [`REQUESTED`] or [`STOLEN`]: the trimmer's side of the handshake
    /// (rule 5). Set by trimmers, cleared only by the owner, under the depot's lock.
    request: AtomicUsize,
    /// `get`s this thread served from idle objects. Written only by the owner (`load` +
    /// `store`, no read-modify-write); read by `stats`.
    hits: AtomicU64,
}

/// A thread's cache of idle nodes and the idle permits it holds; see [`OwnerSide`].
struct Magazine<N> {
    /// The first `OwnerSide::len` entries hold idle nodes this magazine owns; the rest are
    /// stale or dangling, never dereferenced. A fixed array: a push is one store, never an
    /// allocation, and `get(i)` both bounds-checks and tests for empty/full in one compare.
    nodes: [NonNull<N>; MAGAZINE_SIZE],
    /// Idle permits held beyond the nodes in the magazine: it holds `len + spare` permits,
    /// at most [`MAGAZINE_PERMITS`].
    spare: usize,
    /// Whether the budget was at least [`MAGAZINE_PERMITS`] permits under its ceiling at this
    /// magazine's last refill or put slow path. If so, a get keeps the permits it frees
    /// spare (up to `MAGAZINE_PERMITS` in all), for the next refill to park in the depot it takes
    /// from; if not, it gives them back to the budget once `PERMIT_BATCH` are spare.
    roomy: bool,
    /// `OwnerSide::hits` at the last spill: unchanged at the next one, the thread only
    /// puts (a consumer of objects another thread gets), and spills its whole magazine.
    hits_at_spill: u64,
    /// Slow-path operations left before the magazine holds objects (the pool's slow-start
    /// length, [`SLOW_START_OPS`] outside loom, for a new or newly claimed `Local`).
    slow_start: u32,
}

/// Whether `refill_from` may skip a depot whose length hint reads 0.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Look {
    /// Trust the hint: lock only a depot that seems to hold something.
    Hinted,
    /// Lock whatever the hint says.
    Locked,
}

// SAFETY: a `Local` is shared between threads, but its only non-`Sync` part, the magazine,
// is touched by one thread at a time (synchronization rule 1). The depot is behind a lock;
// the rest is atomic. The nodes it holds move between threads, which `N: Send` allows.
unsafe impl<N: Send> Sync for Local<N> {}
// SAFETY: as above; moving a `Local` moves the nodes it owns.
unsafe impl<N: Send> Send for Local<N> {}

impl<N> Local<N> {
    /// A `Local` owned by the calling thread, whose magazine starts slow for `slow_start`
    /// slow-path operations.
    fn new(max_idle: usize, slow_start: u32) -> Local<N> {
        Local {
            owner: CachePadded::new(OwnerSide {
                magazine: UnsafeCell::new(Magazine {
                    nodes: [NonNull::dangling(); MAGAZINE_SIZE],
                    spare: 0,
                    roomy: false,
                    hits_at_spill: u64::MAX,
                    slow_start,
                }),
                len: AtomicUsize::new(0),
                request: AtomicUsize::new(NO_REQUEST),
                hits: AtomicU64::new(0),
            }),
            depot: CachePadded::new(Depot::new(max_idle.min(DEPOT_PRESIZE))),
            owned: AtomicBool::new(true),
            next: ptr::null(),
        }
    }

    /// Runs `f` on the magazine and its length, as its owner without a lock: marks the
    /// magazine busy, answers a trimmer's request if there is one (rule 5), and clears the
    /// mark when `f` is done. Two stores, a compiler fence, a load and a branch around `f`.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, holds no depot lock (answering a request takes
    /// this `Local`'s), and `f` runs no user code (no reset, factory or destructor of an
    /// object) that could re-enter the pool.
    #[inline]
    unsafe fn with_magazine<R>(&self, f: impl FnOnce(&mut Magazine<N>, &mut usize) -> R) -> R {
        let (mut len, asked) = self.mark_busy();
        if asked {
            len = self.answer_request(len);
        }
        // SAFETY: per the caller.
        unsafe { self.run_marked(len, f) }
    }

    /// [`with_magazine`](Self::with_magazine) for the hit paths (`pop`, `push`): the same
    /// handshake, but a request seen makes it give up (`None`, the magazine untouched), so
    /// that the caller's slow path answers it. Inlined whole, with no call on the hit path,
    /// so the registers the caller keeps live across it stay put.
    ///
    /// # Safety
    ///
    /// As for `with_magazine`.
    #[inline(always)]
    unsafe fn with_magazine_hit<R>(
        &self,
        f: impl FnOnce(&mut Magazine<N>, &mut usize) -> R,
    ) -> Option<R> {
        let (len, asked) = self.mark_busy();
        if asked {
            // Release: clears the busy mark. If a trimmer took the magazine meanwhile, the
            // request it left (`STOLEN`) says so to whoever answers it.
            // loom-mutants: loom runs the fence mode, where `mark_busy`'s `barrier::signal`
            // is a `fence(SeqCst)` sequenced before this store: a release fence, with which
            // `steal_magazine`'s Acquire load synchronizes through any later store, Relaxed
            // or not. In the membarrier mode `signal` is a compiler fence only, and this
            // Release is what orders the magazine before a steal.
            self.owner.len.store(len, Ordering::Release);
            return None;
        }
        // SAFETY: per the caller.
        Some(unsafe { self.run_marked(len, f) })
    }

    /// The owner's side of the handshake (rule 5): marks the magazine busy and says whether
    /// a trimmer asked for it. Returns the length from before the mark.
    #[inline(always)]
    fn mark_busy(&self) -> (usize, bool) {
        // Relaxed: outside a steal only the owner writes `len` (rules 1 and 5); a steal
        // that races with this load is caught by the request it leaves.
        let len = self.owner.len.load(Ordering::Relaxed);
        debug_assert!(len != BUSY, "a magazine operation nested in another");
        // Relaxed: the busy mark. `barrier::signal` orders it before the request load
        // against a trimmer's heavy barrier; it publishes nothing by itself.
        self.owner.len.store(BUSY, Ordering::Relaxed);
        barrier::signal();
        // Relaxed: the flag's meaning is read under the depot's lock in `answer_request`.
        (
            len,
            self.owner.request.load(Ordering::Relaxed) != NO_REQUEST,
        )
    }

    /// Runs `f` on the marked magazine of length `len`, then stores the new length, which
    /// clears the busy mark.
    ///
    /// # Safety
    ///
    /// As for `with_magazine`; the caller marked the magazine busy and found no request
    /// pending (or answered it).
    #[inline(always)]
    unsafe fn run_marked<R>(
        &self,
        mut len: usize,
        f: impl FnOnce(&mut Magazine<N>, &mut usize) -> R,
    ) -> R {
        let r = self.owner.magazine.with_mut(|m| {
            // SAFETY: per the caller and rule 5, no other reference to the magazine exists
            // meanwhile: a trimmer takes it only while it is not marked busy.
            let m = unsafe { &mut *m };
            let r = f(m, &mut len);
            debug_assert!(
                len <= MAGAZINE_SIZE && len + m.spare <= MAGAZINE_PERMITS,
                "magazine over bounds"
            );
            r
        });
        // Release: clears the busy mark; a trimmer that reads this value (Acquire) sees the
        // magazine as `f` left it.
        self.owner.len.store(len, Ordering::Release);
        r
    }

    /// The owner's answer to a trimmer's request (rule 5): waits on the depot's lock for a
    /// steal in progress, clears the request, and returns the magazine's length, 0 if it
    /// was stolen. Once per request, not per operation.
    #[cold]
    #[inline(never)]
    fn answer_request(&self, len: usize) -> usize {
        let _depot = self.depot.lock();
        // Relaxed: trimmers write `request` under this lock (but for the first request,
        // which a heavy barrier orders instead), and only the owner clears it.
        let stolen = self.owner.request.load(Ordering::Relaxed) == STOLEN;
        // Relaxed: as above.
        self.owner.request.store(NO_REQUEST, Ordering::Relaxed);
        if stolen {
            0
        } else {
            len
        }
    }

    /// Runs `f` on the magazine and its length while the caller holds this `Local`'s depot
    /// lock: for a flush, the pool's close, and tests. No busy mark: the lock excludes
    /// trimmers.
    ///
    /// # Safety
    ///
    /// The calling thread may touch the magazine (rule 1), holds this `Local`'s depot lock,
    /// and is not in the middle of a [`with_magazine`](Self::with_magazine); `f` runs no
    /// user code.
    unsafe fn with_magazine_locked<R>(
        &self,
        f: impl FnOnce(&mut Magazine<N>, &mut usize) -> R,
    ) -> R {
        // Relaxed: the lock orders this with a trimmer's store; the owner's own last store
        // is in program order or (on another thread) ordered by rule 1's hand-over.
        let mut len = self.owner.len.load(Ordering::Relaxed);
        debug_assert!(
            len != BUSY,
            "a locked magazine operation inside an unlocked one"
        );
        // Relaxed: trimmers write it under the lock we hold. A steal the owner has not
        // answered yet leaves the length it may have overwritten stale: the magazine is
        // empty.
        if self.owner.request.load(Ordering::Relaxed) == STOLEN {
            // Relaxed: as above.
            self.owner.request.store(NO_REQUEST, Ordering::Relaxed);
            len = 0;
        }
        let r = self.owner.magazine.with_mut(|m| {
            // SAFETY: per the caller, and the lock held excludes a trimmer (rule 5).
            f(unsafe { &mut *m }, &mut len)
        });
        // Relaxed: as above.
        self.owner.len.store(len, Ordering::Relaxed);
        r
    }

    /// Counts a `get` served from idle objects, and returns the count. Owner only.
    #[inline]
    pub(crate) fn count_hit(&self) -> u64 {
        // Relaxed load + store, not `fetch_add`: only the owner writes this counter.
        let hits = self.owner.hits.load(Ordering::Relaxed) + 1;
        self.owner.hits.store(hits, Ordering::Relaxed);
        hits
    }

    /// The hit path of `get`: pops the most recently stored node, if any. Plain loads and
    /// stores: the node's idle permit stays in the magazine, spare; past [`PERMIT_BATCH`]
    /// spare, an out-of-line look at the budget (see `pop_top`). Gives up (`None`) when a
    /// trimmer's request is pending: `take` answers it.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, and `budget` is its pool's.
    #[inline]
    pub(crate) unsafe fn pop(&self, budget: &IdleBudget) -> Option<NodePtr<N>> {
        // SAFETY: the caller owns the magazine; nothing here runs user code.
        unsafe { self.with_magazine_hit(|m, len| pop_top(m, len, budget)) }.flatten()
    }

    /// Takes an idle node: from the magazine (answering a trimmer's request if one is
    /// pending), else a batch from this thread's depot, else a batch stolen from another
    /// thread's depot (primary lists before victim lists).
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, which is on `list`, and `budget` is its pool's.
    pub(crate) unsafe fn take(
        &self,
        budget: &IdleBudget,
        list: &LocalList<N>,
    ) -> Option<NodePtr<N>> {
        // SAFETY: per the caller; `pop_top` runs no user code.
        unsafe {
            self.pop(budget)
                .or_else(|| self.with_magazine(|m, len| pop_top(m, len, budget)))
                .or_else(|| self.refill(budget, list))
        }
    }

    /// `take`'s slow path: the magazine is empty. Looks at the depots' length hints, without
    /// locks, and locks only a depot that seems to hold something: this thread's own depot
    /// first (donations to it wait there), then the others'; primary lists before victim
    /// lists. Before it gives up, it locks its own depot whatever the hint said.
    ///
    /// # Safety
    ///
    /// As for `take`.
    #[cold]
    unsafe fn refill(&self, budget: &IdleBudget, list: &LocalList<N>) -> Option<NodePtr<N>> {
        for generation in [Generation::Primary, Generation::Victim] {
            // SAFETY: the caller owns this `Local`.
            let mut found = unsafe { self.refill_from(self, generation, Look::Hinted, budget) };
            for target in list.iter() {
                if found.is_some() {
                    break;
                }
                if !ptr::eq(target, self) {
                    // SAFETY: as above.
                    found = unsafe { self.refill_from(target, generation, Look::Hinted, budget) };
                }
            }
            if found.is_some() {
                return found;
            }
        }
        // A hint may be stale: a donation to this thread's depot may have been stored while
        // we read 0 (Miri's weak-memory emulation returns such stale values). Better a lock
        // here than a factory call while a donated object waits.
        for generation in [Generation::Primary, Generation::Victim] {
            // SAFETY: the caller owns this `Local`.
            if let Some(node) = unsafe { self.refill_from(self, generation, Look::Locked, budget) }
            {
                return Some(node);
            }
        }
        None
    }

    /// Moves nodes from `target`'s depot into this thread's magazine, with their permits: up
    /// to [`REFILL`] from its primary list, or one from its victim list; pops the newest
    /// and returns it, if it moved any.
    ///
    /// Then it parks the magazine's spare permits in `target`'s depot under the same lock,
    /// with the permit of the node it returns: the permits a getting thread frees are the ones
    /// that the thread putting nodes in that depot needs, and it takes them back there on
    /// its next spill; a donation to the depot uses them too (with `max_idle(1)`, a
    /// writer's retired versions would otherwise be dropped while its magazine held the
    /// one permit). What `PARKED_MAX` leaves over goes back to `budget`. The pop is in the
    /// same magazine operation as the park: a trimmer that took the magazine in between
    /// would move the node back to the depot with its permit, parked already (a permit counted
    /// twice; the loom model `decay_tick_vs_get` covers it).
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local` (not necessarily `target`), and `budget` is its
    /// pool's.
    unsafe fn refill_from(
        &self,
        target: &Local<N>,
        generation: Generation,
        look: Look,
        budget: &IdleBudget,
    ) -> Option<NodePtr<N>> {
        if look == Look::Hinted && target.depot.len_hint() == 0 {
            return None;
        }
        // From a victim list, one object, handed out at once, as Go's `Get` takes from the
        // victim generation: a batch would sit in this magazine and be flushed back as
        // fresh by the next `trim`, escaping the decay.
        let most = match generation {
            Generation::Primary => REFILL,
            Generation::Victim => 1,
        };
        // SAFETY: the caller owns this magazine and holds no depot lock (the target's is
        // taken inside, after the busy mark); moving nodes runs no user code. Exactly `n`
        // nodes are drained into exactly `n` free entries.
        let (node, excess) = unsafe {
            self.with_magazine(|m, len| {
                // In its slow start, one object, handed out (its permit parked or given
                // back like the spare ones): the magazine stays empty.
                let most = if m.slow_start > 0 { 1 } else { most };
                let mut depot = target.depot.lock();
                let list = depot.list(generation);
                let n = list.len().min(most).min(MAGAZINE_SIZE - *len);
                if n == 0 {
                    return (None, 0);
                }
                m.slow_start = m.slow_start.saturating_sub(1);
                let from = list.len() - n;
                for (entry, node) in m.nodes[*len..*len + n].iter_mut().zip(list.drain(from..)) {
                    *entry = node.0;
                }
                *len += n - 1;
                let node = NodePtr(m.nodes[*len]);
                let freed = std::mem::take(&mut m.spare) + 1;
                m.roomy = !budget.near_ceiling(MAGAZINE_PERMITS);
                // A depot whose thread exited gets no spill that would take its parked
                // permits back: parked there, they would be lost to every put until a trim
                // (the exit gave back what was parked before it, and it gives up the
                // `Local` under this lock, so this load sees it). Relaxed: the lock orders
                // it after the exit's store; a stale `false` after a newcomer's claim only
                // gives permits back that could have parked.
                let parkable = ptr::eq(target, self) || target.owned.load(Ordering::Relaxed);
                let excess = if m.roomy && parkable {
                    depot.park(freed, PARKED_MAX)
                } else {
                    freed // parked, they would be out of reach of other threads' puts
                };
                (Some(node), excess)
            })
        };
        budget.unreserve(excess);
        node
    }

    /// The hit path of dropping a `Pooled`: stores `node` if the magazine has room and a
    /// spare idle permit, with plain loads and stores. Hands the node back otherwise, for
    /// [`put_slow`](Self::put_slow).
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, which belongs to the node's pool.
    #[inline]
    pub(crate) unsafe fn push(&self, node: NodePtr<N>) -> Result<(), NodePtr<N>> {
        let node = node.0;
        // SAFETY: the caller owns the magazine; nothing here runs user code.
        unsafe {
            self.with_magazine_hit(|m, len| {
                if m.spare == 0 {
                    return false;
                }
                let Some(entry) = m.nodes.get_mut(*len) else {
                    return false;
                };
                *entry = node;
                m.spare -= 1;
                *len += 1;
                true
            })
        }
        .unwrap_or(false)
        .then_some(())
        .ok_or(NodePtr(node))
    }

    /// `push`'s slow path: spills half of a full magazine to the depot (all of it if the
    /// thread got nothing since its last spill), taking the permits parked there (see
    /// `refill_from`) under the same lock; if no permit is spare, takes the depot's parked
    /// permits if its hint shows any, else reserves [`PERMIT_BATCH`] from the budget. Notes
    /// whether the budget is near its ceiling (`Magazine::roomy`). Returns the node if the
    /// idle bound is reached, for the caller to drop.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, and `budget` is its pool's.
    #[cold]
    pub(crate) unsafe fn put_slow(
        &self,
        budget: &IdleBudget,
        node: NodePtr<N>,
    ) -> Option<NodePtr<N>> {
        // SAFETY: the caller owns the magazine; nothing here runs user code.
        unsafe {
            self.with_magazine(|m, len| {
                if m.slow_start > 0 {
                    // To this thread's depot, with a permit parked there or reserved: trim
                    // and decay reach it (see `SLOW_START_OPS`). The magazine is empty
                    // and holds no spare permit: every permit it got went back at its get.
                    m.slow_start -= 1;
                    debug_assert!(*len == 0 && m.spare == 0, "a slow start with a magazine");
                    return self
                        .donate_reserving(node, budget)
                        .err()
                        .map(|(node, _)| node);
                }
                m.roomy = !budget.near_ceiling(MAGAZINE_PERMITS);
                if *len == MAGAZINE_SIZE {
                    // The oldest half goes (the newest is likeliest still in the CPU cache),
                    // or all of it if this thread got nothing since its last spill: it
                    // only puts, and another thread takes its objects, in batches of up to
                    // `REFILL`: one lock a batch on either side, not two for the putter.
                    // Relaxed: only this thread writes `hits`.
                    let hits = self.owner.hits.load(Ordering::Relaxed);
                    let n = if hits == m.hits_at_spill {
                        MAGAZINE_SIZE
                    } else {
                        SPILL
                    };
                    m.hits_at_spill = hits;
                    let mut depot = self.depot.lock();
                    spill(&mut depot, &m.nodes[..n]);
                    m.nodes.copy_within(n.., 0);
                    *len -= n;
                    m.spare += depot.unpark(unpark_most(m, *len));
                }
                if m.spare == 0 && self.depot.parked_hint() > 0 {
                    m.spare = self.depot.lock().unpark(unpark_most(m, *len));
                }
                if m.spare == 0 {
                    m.spare = budget.reserve(PERMIT_BATCH);
                    if m.spare == 0 {
                        return Some(node);
                    }
                }
                m.nodes[*len] = node.0;
                m.spare -= 1;
                *len += 1;
                None
            })
        }
    }

    /// Moves the whole magazine to the depot and gives back its spare permits and those
    /// parked in the depot.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, and `budget` is its pool's.
    pub(crate) unsafe fn flush(&self, budget: &IdleBudget) {
        // SAFETY: per the caller.
        unsafe { self.flush_restarting(budget, None) }
    }

    /// [`flush`](Self::flush), and with `Some(ops)`, the magazine starts slow again for
    /// `ops` slow-path operations (for the next thread to claim this `Local`).
    ///
    /// # Safety
    ///
    /// As for `flush`.
    unsafe fn flush_restarting(&self, budget: &IdleBudget, restart: Option<u32>) {
        // The magazine is read under the depot's lock, so that this may run as a thread's
        // exit hook beside the pool's close (synchronization rule 1).
        let mut depot = self.depot.lock();
        // SAFETY: per the caller; no user code runs.
        unsafe {
            self.with_magazine_locked(|m, len| {
                if let Some(ops) = restart {
                    m.slow_start = ops;
                }
                debug_assert!(
                    !depot.closed || *len == 0,
                    "a closed pool's magazine refilled"
                );
                spill(&mut depot, &m.nodes[..*len]);
                *len = 0;
                let parked = depot.unpark(usize::MAX);
                budget.unreserve(std::mem::take(&mut m.spare) + parked);
            })
        };
        if restart.is_some() {
            // Under the depot's lock, so that a thief refilling from this depot either
            // parked before the unpark above or sees the `Local` given up and parks
            // nothing (see `refill_from`).
            self.release_ownership();
        }
        drop(depot);
    }

    /// What a thread's exit does to its `Local`: moves its magazine to the depot, where other
    /// threads steal it, gives back spare permits, and gives the `Local` up to be claimed,
    /// with a slow start of `slow_start` operations for the thread that claims it.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local` and will not use it again; `budget` is its
    /// pool's.
    pub(crate) unsafe fn abandon(&self, budget: &IdleBudget, slow_start: u32) {
        // SAFETY: per the caller.
        unsafe { self.flush_restarting(budget, Some(slow_start)) };
    }

    /// Empties this `Local` for the pool's close: moves every node (magazine and depot) to
    /// `out`, frees the depot's lists, and marks the depot closed so that it takes nothing
    /// in again. Returns the idle permits it held (nodes and spare permits), for the caller to
    /// give back.
    ///
    /// # Safety
    ///
    /// No pool handle is left: the owner can no longer touch the magazine without the
    /// depot's lock (synchronization rule 1).
    unsafe fn close(&self, out: &mut Vec<NodePtr<N>>) -> usize {
        let mut depot = self.depot.lock();
        depot.closed = true;
        // Relaxed: under the lock the exit's store is made under (see `refill_from`).
        debug_assert!(
            self.owned.load(Ordering::Relaxed) || depot.parked == 0,
            "{} idle permits parked at the depot of a thread that exited, where no put takes them",
            depot.parked
        );
        let mut permits = 0;
        // SAFETY: per the caller, the lock held here excludes every other user of the
        // magazine; no user code runs.
        unsafe {
            self.with_magazine_locked(|m, len| {
                out.extend(m.nodes[..*len].iter().map(|&n| NodePtr(n)));
                permits += *len + std::mem::take(&mut m.spare);
                *len = 0;
            })
        };
        let lists = &mut *depot;
        permits += lists.unpark(usize::MAX);
        for list in [&mut lists.primary, &mut lists.victim] {
            permits += list.len();
            out.append(list);
            *list = Vec::new(); // frees the capacity too: nothing comes in any more
        }
        permits
    }

    /// Whether the magazine holds no node and no spare idle permit, as it always does in a
    /// pool with a live bound. For debug assertions, by the owner.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`.
    pub(crate) unsafe fn magazine_unused(&self) -> bool {
        // SAFETY: per the caller; nothing here runs user code.
        unsafe { self.with_magazine(|m, len| *len == 0 && m.spare == 0) }
    }

    /// Idle objects held here now (magazine and depot), for statistics.
    pub(crate) fn idle(&self) -> usize {
        // Relaxed: a statistic; a magazine in the middle of an operation, or taken by a
        // trimmer and not yet told so, counts as empty.
        let len = self.owner.len.load(Ordering::Relaxed);
        // Relaxed: as above.
        let stolen = self.owner.request.load(Ordering::Relaxed) == STOLEN;
        (if len == BUSY || stolen { 0 } else { len }) + self.depot.len_hint()
    }

    /// Hits counted here.
    pub(crate) fn hits(&self) -> u64 {
        // Relaxed: a statistic.
        self.owner.hits.load(Ordering::Relaxed)
    }

    /// Claims this `Local` for the calling thread if no live thread owns it.
    fn try_claim(&self) -> bool {
        // Acquire: pairs with the Release in `release_ownership`, so the exiting thread's
        // last use of the magazine happens-before ours. One CAS, so two new threads cannot
        // both claim it.
        self.owned
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Gives up ownership, after a flush and under the depot's lock (see `refill_from`);
    /// another thread may then claim this `Local`.
    fn release_ownership(&self) {
        // Release: see `try_claim`.
        self.owned.store(false, Ordering::Release);
    }

    /// The idle permits this `Local` holds: nodes in its magazine and depot plus spare
    /// permits. For tests, when no thread uses the pool.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn permits_held(&self) -> usize {
        let depot = self.depot.lock();
        // SAFETY: per the caller's contract (no thread uses the pool); no user code runs.
        let (len, spare) = unsafe { self.with_magazine_locked(|m, len| (*len, m.spare)) };
        assert!(
            len + spare <= MAGAZINE_PERMITS,
            "a magazine holds {len} + {spare} permits"
        );
        assert!(
            depot.parked <= PARKED_MAX,
            "a depot parks {} permits",
            depot.parked
        );
        len + spare + depot.len() + depot.parked
    }
}

/// Pops the top of a magazine of length `len`, keeping its idle permit spare (see `pop`).
#[inline(always)]
fn pop_top<N>(m: &mut Magazine<N>, len: &mut usize, budget: &IdleBudget) -> Option<NodePtr<N>> {
    // `len - 1`, or `usize::MAX` (out of bounds) when the magazine is empty.
    let node = *m.nodes.get(len.wrapping_sub(1))?;
    *len -= 1;
    // The popped node's permit stays here, spare: `len + spare` does not change, so it stays
    // within `MAGAZINE_PERMITS`. Spare permits are budget other threads cannot use; in a handoff the
    // thread that gets frees the permits the thread that puts needs: its next refill parks
    // them in the depot it refills from (`refill_from`).
    m.spare += 1;
    // Near the budget's ceiling (as the last slow path found it), permits go back in batches,
    // so that a put or a donation on another thread is not refused while this thread holds
    // them. Inline, as the plain `spare > PERMIT_BATCH` test is all a thread that gets and
    // puts in turn ever runs: a call here would cost the hit path its registers.
    if m.spare > PERMIT_BATCH && !m.roomy {
        budget.unreserve(PERMIT_BATCH);
        m.spare -= PERMIT_BATCH;
    }
    Some(NodePtr(node))
}

/// How many parked permits a put may take into magazine `m` of `len` nodes: as many as fit,
/// but near the budget's ceiling (`roomy` false) only what a reservation would take (up to
/// [`PERMIT_BATCH`] spare): the rest are better left parked for a donation.
fn unpark_most<N>(m: &Magazine<N>, len: usize) -> usize {
    let room = MAGAZINE_PERMITS - len - m.spare;
    if m.roomy {
        room
    } else {
        room.min(PERMIT_BATCH.saturating_sub(m.spare))
    }
}

/// Moves `nodes` to the depot's primary list.
fn spill<N>(depot: &mut DepotGuard<'_, N>, nodes: &[NonNull<N>]) {
    depot.primary.extend(nodes.iter().map(|&n| NodePtr(n)));
}

impl<N> Drop for Local<N> {
    fn drop(&mut self) {
        // The pool drains every `Local` (`close`) before it frees them. (Not under loom:
        // two more atomic loads per `Local` at the end of every model, for nothing a model
        // checks that the models' drop counts do not.)
        #[cfg(not(loom))]
        debug_assert_eq!(self.idle(), 0, "a Local dropped with idle nodes");
    }
}

impl<N> std::fmt::Debug for Local<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local")
            .field("idle", &self.idle())
            .field("hits", &self.hits())
            .finish_non_exhaustive()
    }
}
