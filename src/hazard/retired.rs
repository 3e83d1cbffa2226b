//! Retired lists and reclamation passes: where a version swapped out of its container
//! waits until no reader can still read it, and the passes that judge and recycle it. The
//! protocol is told in the parent module's docs ("Writer", "Reclaimer (passes)", "Why a
//! recycled node is never read"); the slots a pass scans live there too.

use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use super::{domain, untag, BLOCK_SLOTS};
use crate::barrier::{full, heavy};
use crate::reclaimer::{Wake, BACKSTOP};
use crate::sync::{AtomicBool, AtomicPtr, AtomicUsize, Mutex, MutexGuard, Ordering};

/// Retired versions on a list at which [`retire`] reclaims that list by itself. Below it,
/// retired versions wait for a getter of the pool that finds nothing idle
/// ([`List::reclaim_pending`]), for the next version that reaches the threshold, or for
/// [`reclaim`]. A bound on the versions an update-only
/// writer (one that never gets objects from the pool) leaves waiting.
pub(crate) const RECLAIM_THRESHOLD: usize = 8;

/// The most yields a pool getter that found nothing idle waits for other threads'
/// reclamation passes over its pool's list to end ([`List::reclaim_pending`]): a pass is a heavy barrier, a scan and
/// the returns, microseconds, unless it runs a long `T::drop`.
#[cfg(not(loom))]
const PASS_WAIT: u32 = 256;
/// Under loom, one: enough for a model to take both branches.
#[cfg(loom)]
const PASS_WAIT: u32 = 1;

/// A retired node and what a reclaimer does with it.
#[derive(Clone, Copy)]
pub(crate) struct Retired {
    node: NonNull<()>,
    /// Whether every reader that protected the node with a slot issued a full fence
    /// (`fence(SeqCst)`) between its slot store and its re-load: the node was published
    /// *fenced* (see `container/raw.rs`, "Fenced versions"). A pass whose nodes are all
    /// fenced needs only a fence of its own, not the heavy barrier.
    fenced: bool,
    /// Takes the node's count from one (the retired list's reference) to zero; `false`,
    /// changing nothing, if a counted guard still holds it.
    claim: unsafe fn(NonNull<()>) -> bool,
    /// Returns a claimed node (count zero, owned by the caller) to its pool.
    recycle: unsafe fn(NonNull<()>),
    /// The list the node was retired to (its pool's), set by [`retire`]: where a pass
    /// that keeps the node puts it back. Lists are never freed.
    home: *const List,
}

impl Retired {
    /// A retired node with the two functions a reclaimer calls on it.
    ///
    /// # Safety
    ///
    /// `claim(node)` must take the node's count from one to zero and report whether it
    /// did, and `recycle(node)` must give a node so claimed back to its pool; both may be
    /// called on any thread while the node is on the retired list.
    /// `fenced` must be `true` only if every slot protection of `node` since it became
    /// current was followed by a full fence before its re-load (see the field).
    pub(crate) unsafe fn new(
        node: NonNull<()>,
        fenced: bool,
        claim: unsafe fn(NonNull<()>) -> bool,
        recycle: unsafe fn(NonNull<()>),
    ) -> Retired {
        Retired {
            node,
            fenced,
            claim,
            recycle,
            home: ptr::null(),
        }
    }
}

/// The room a list and a pass's buffers are made with: for the versions retired between
/// reclamations and a burst that guards hold, made once (they grow only past their
/// largest size so far).
#[cfg(not(loom))]
const INITIAL_CAPACITY: usize = 4 * RECLAIM_THRESHOLD;
/// Under loom, none: every model execution has its own domain, leaked with its lists.
#[cfg(loom)]
const INITIAL_CAPACITY: usize = 0;

/// Buffers a pass takes out of its lock and gives back, kept for their capacity: the
/// retired nodes it judges (then those it keeps, then those it claimed), the protected
/// addresses (sorted), and the claimed nodes while the kept ones are moved up. A pass that
/// finds one taken by another makes its own.
pub(super) struct Buffers {
    judged: Vec<Retired>,
    protected: Vec<*mut ()>,
    claimed: Vec<Retired>,
}

impl Buffers {
    pub(super) fn new() -> Buffers {
        Buffers {
            judged: Vec::with_capacity(INITIAL_CAPACITY),
            protected: Vec::new(),
            claimed: Vec::with_capacity(INITIAL_CAPACITY),
        }
    }

    fn take(&mut self) -> Buffers {
        Buffers {
            judged: std::mem::take(&mut self.judged),
            protected: std::mem::take(&mut self.protected),
            claimed: std::mem::take(&mut self.claimed),
        }
    }

    /// Keeps each of `other`'s buffers (emptied) that is larger than this one's.
    fn keep_larger(&mut self, other: Buffers) {
        keep_larger(&mut self.judged, other.judged);
        keep_larger(&mut self.protected, other.protected);
        keep_larger(&mut self.claimed, other.claimed);
    }
}

/// One pool's retired list: the versions its containers retired, waiting until no reader
/// can still read them. Made by the domain and never freed; a pool takes one when it is
/// built and gives it back when its shared state goes (then the list is empty: every
/// retired version holds its pool), for a later pool to take over.
#[repr(align(128))]
pub(crate) struct List {
    state: Mutex<ListState>,
    /// `state.retired.len()` as of the last change, read without the lock to decide
    /// whether a reclamation could return anything.
    pending: AtomicUsize,
    /// Versions ever retired to this list (wrapping): the background reclaimer's
    /// handshake reads the sum over every list (`reclaimer.rs`). Written under the lock.
    retirements: AtomicUsize,
    /// Passes in flight that took nodes off this list: each holds them until it has
    /// returned them. A getter of the pool that finds nothing idle waits for them
    /// ([`List::reclaim_pending`]) rather than build an object while its own version is in
    /// one.
    passes: AtomicUsize,
    /// Passes ended so far that took nodes off this list: a getter that looked at its pool
    /// before one ended looks again.
    passes_ended: AtomicUsize,
    /// Whether a pool owns the list: set by `claim_list` under the domain lock, cleared by
    /// `release_list`.
    owned: AtomicBool,
    /// The list made before this one (null for the first): the domain's lists form a
    /// list that a global pass walks without the domain lock. Set before the list is
    /// published (`Domain::lists`), never changed after.
    next: AtomicPtr<List>,
}

struct ListState {
    /// Retired nodes, oldest first.
    retired: Vec<Retired>,
    buffers: Buffers,
}

// SAFETY: `Retired` holds node pointers whose counted references may be dropped on any
// thread: nodes are `Send` (see `pool/node.rs`), and `Container` requires `T: Send + Sync`
// before any node is retired; `home` points at a list, which is `Sync`. `protected` holds
// addresses only, never dereferenced.
unsafe impl Send for ListState {}

impl List {
    fn new(next: *mut List) -> List {
        List {
            state: Mutex::new(ListState {
                // Room for the versions retired between reclamations and for a burst that
                // guards hold, made once: the lists grow (allocate) only past their
                // largest size so far.
                retired: Vec::with_capacity(INITIAL_CAPACITY),
                buffers: Buffers::new(),
            }),
            pending: AtomicUsize::new(0),
            retirements: AtomicUsize::new(0),
            passes: AtomicUsize::new(0),
            passes_ended: AtomicUsize::new(0),
            owned: AtomicBool::new(false),
            next: AtomicPtr::new(next),
        }
    }
}

/// Gives a new pool a retired list: one an earlier pool gave back, or a new one (an
/// allocation of a few hundred bytes). One lock (process-wide).
pub(crate) fn claim_list() -> &'static List {
    let mut state = domain().state.lock();
    let state = &mut *state;
    // Relaxed: a list given back has no pass of its own pool left; one of a global pass
    // that took nothing from it may still end on it (it only counts), so prefer one
    // without.
    let free = (0..state.lists.len()).find(|&i| {
        let list = &state.lists[i];
        // Acquire: pairs with `release_list`'s Release: the pool that gave the list back
        // is done with it.
        !list.owned.load(Ordering::Acquire) && list.passes.load(Ordering::Relaxed) == 0
    });
    let at = match free {
        Some(at) => at,
        None => {
            // Relaxed: the head is only written under the lock we hold.
            let newest = domain().lists.load(Ordering::Relaxed);
            state.lists.push(Box::new(List::new(newest)));
            let at = state.lists.len() - 1;
            let list: *const List = &*state.lists[at];
            // Release: a global pass that loads the head sees the list whole, and every
            // list before it (each was published the same way, under this lock).
            domain().lists.store(list.cast_mut(), Ordering::Release);
            at
        }
    };
    // Relaxed: only claimers set it, under the domain lock we hold.
    state.lists[at].owned.store(true, Ordering::Relaxed);
    let list: *const List = &*state.lists[at];
    // SAFETY: boxes in `lists` are never dropped or moved (the domain lives for the
    // process; under loom it is leaked).
    unsafe { &*list }
}

/// Gives a pool's list back to the domain when the pool's shared state goes: no node of
/// the pool is left on it (each holds the pool).
/// A store: no lock, and no use of the domain, which under loom may be gone by then (a
/// pool's last reference can go with a thread's registry, after loom's statics).
pub(crate) fn release_list(list: &'static List) {
    // Relaxed: a check; only this pool's drop clears it.
    debug_assert!(
        list.owned.load(Ordering::Relaxed),
        "a retired list released twice"
    );
    // Release: pairs with `claim_list`'s Acquire.
    list.owned.store(false, Ordering::Release);
}

/// Hands a node just swapped out of its container, with the container's counted reference
/// on it, to `list` (its pool's); reclaims that list if it reached [`RECLAIM_THRESHOLD`],
/// or, while a background reclaimer runs, wakes that one instead (reclaiming only at
/// [`BACKSTOP`]).
///
/// # Safety
///
/// The node of `retired` is no longer any container's current version, and the caller
/// hands over one counted reference on it, which the list keeps until a reclaimer claims
/// the node.
pub(crate) unsafe fn retire(list: &'static List, mut retired: Retired) {
    retired.home = list;
    let mut state = list.state.lock();
    state.retired.push(retired);
    let len = state.retired.len();
    // Relaxed: a hint (see `List::pending`); the list itself is under the lock.
    list.pending.store(len, Ordering::Relaxed);
    // Relaxed: written under the lock only; the reclaimer's handshake orders it with a
    // fence (`Wake::after_retire`).
    let retirements = list.retirements.load(Ordering::Relaxed);
    list.retirements
        .store(retirements.wrapping_add(1), Ordering::Relaxed);
    let background = domain().wake.running();
    if len
        >= if background {
            BACKSTOP
        } else {
            RECLAIM_THRESHOLD
        }
    {
        list_pass(list, state);
    } else if background {
        drop(state);
        domain().wake.after_retire();
    }
}

/// The background reclaimer's handshake.
pub(crate) fn wake() -> &'static Wake {
    &domain().wake
}

/// Every list of the domain, newest first: the ones made before the head's load, each
/// whole.
fn lists() -> impl Iterator<Item = &'static List> {
    // Acquire: see `Domain::lists`.
    let mut list = domain().lists.load(Ordering::Acquire);
    std::iter::from_fn(move || {
        // SAFETY: lists are never freed (loom: not before the model ends), and each was
        // whole when published.
        let l = unsafe { list.as_ref() }?;
        // Relaxed: set before the list was published; the head's Acquire made it visible.
        list = l.next.load(Ordering::Relaxed);
        Some(l)
    })
}

/// Versions ever retired, over every list (wrapping), as of a recent moment: grows with
/// each retirement, whichever pass takes the versions off (the reclaimer's handshake).
pub(crate) fn retirements() -> usize {
    // Relaxed: a hint; the reclaimer orders it with a fence where it matters.
    lists().fold(0, |sum, l| {
        sum.wrapping_add(l.retirements.load(Ordering::Relaxed))
    })
}

/// Recycles every retired node, of every pool, that no slot protects and no counted guard
/// holds (see the module docs); returns how many. Never waits for a reader: held nodes
/// stay on their lists.
pub(crate) fn reclaim() -> usize {
    global_pass()
}

/// Whether any node of any pool was retired and not yet reclaimed, as of a recent moment.
pub(crate) fn has_pending() -> bool {
    lists().any(List::has_pending)
}

impl List {
    /// Whether any node was retired to this list and not yet reclaimed, as of a recent
    /// moment.
    #[inline]
    pub(crate) fn has_pending(&self) -> bool {
        // Relaxed: a hint. A stale zero at worst skips a reclamation that a later getter,
        // the next threshold or `reclaim` runs; a stale non-zero costs a lock.
        self.pending.load(Ordering::Relaxed) != 0
    }

    /// A pass over this list alone ([`reclaim`] for one pool); returns how many nodes went
    /// back.
    pub(crate) fn reclaim(&'static self) -> usize {
        list_pass(self, self.state.lock()).unwrap_or(0)
    }

    /// [`reclaim`](Self::reclaim), unless the pass would need the heavy barrier and
    /// `heavy` is `false`: for a writer that reclaims ahead of its pool's getter because a
    /// fresher version saves it work, but only when the pass is cheap enough to pay.
    /// `None` when no pass ran (the list was empty, or the pass was not worth a heavy
    /// barrier); else how many nodes went back. The test takes the list's lock (as
    /// [`retire`] does) and reads each retired node's flag: a few ns for the handful that
    /// wait between passes.
    pub(crate) fn reclaim_unless_heavy(&'static self, heavy: bool) -> Option<usize> {
        let state = self.state.lock();
        // `judge`'s rule, on the nodes the pass would take now (a node retired between this
        // look and the take can only make it take the heavy barrier anyway: a hint, as the
        // caller's rule is). In `Fence` mode the heavy barrier is a fence too.
        let full_only = crate::barrier::mode() == crate::barrier::BarrierMode::Fence
            || all_fenced(&state.retired);
        if !heavy && !full_only {
            return None;
        }
        list_pass(self, state)
    }

    /// How many passes that took nodes off this list have ended: read by a pool getter
    /// before it looks at its pool, and given to [`reclaim_pending`](Self::reclaim_pending)
    /// after the look found nothing.
    pub(crate) fn passes_ended(&self) -> usize {
        // Acquire: pairs with the Release at a pass's end (see `end_pass`).
        self.passes_ended.load(Ordering::Acquire)
    }

    /// [`reclaim`](Self::reclaim) if any node is retired here: for a pool getter that found
    /// nothing idle, before it builds an object or waits. `looked` is
    /// [`passes_ended`](Self::passes_ended) as read before the getter looked at its pool.
    /// Returns how many nodes went back to the pool, plus 1 if another pass over this list
    /// ended since `looked` (it may have returned the getter's own version): a non-zero
    /// return sends the getter to look again.
    ///
    /// First waits, for at most [`PASS_WAIT`] yields, for the passes in flight on other
    /// threads that hold nodes of this list (a background reclaimer's, another writer's of
    /// the same pool): one may hold the getter's own retired version, which it returns when
    /// it ends. Bounded, because a pass may be this thread's own (a `T::drop` run by it
    /// that gets from the pool) or run a long `T::drop`.
    pub(crate) fn reclaim_pending(&'static self, looked: usize) -> usize {
        let mut waits = 0;
        let mut returned = 0;
        let mut own = 0;
        loop {
            // Acquire: pairs with the Release at a pass's end (see `end_pass`); the returns
            // themselves are ordered by the pools' own synchronization.
            while waits < PASS_WAIT && self.passes.load(Ordering::Acquire) != 0 {
                waits += 1;
                crate::sync::yield_now();
            }
            if !self.has_pending() {
                break;
            }
            let n = match list_pass(self, self.state.lock()) {
                Some(n) => {
                    own += 1;
                    n
                }
                None => 0,
            };
            returned += n;
            // A pass that another thread began since the wait above may have taken the
            // list (this one found it empty): wait for that one too.
            if n != 0 || waits >= PASS_WAIT || self.passes.load(Ordering::Acquire) == 0 {
                break;
            }
        }
        // Passes of this thread's own (above) ended too: what they returned is in
        // `returned`.
        let others = self.passes_ended().wrapping_sub(looked) > own;
        returned + usize::from(others)
    }

    /// Takes every node off the list for a pass, counting the pass in flight on it; `false`
    /// (nothing taken, nothing counted) if the list is empty.
    fn take_into(&self, state: &mut ListState, judged: &mut Vec<Retired>) -> bool {
        if state.retired.is_empty() {
            return false;
        }
        // Every node taken here was retired before the pass's heavy barrier: the pass
        // judges those only (module docs, "Why a recycled node is never read"). Nodes
        // retired after the take wait on the list for the next pass.
        // Relaxed: taken under the lock with the nodes; only `reclaim_pending` reads it,
        // to wait for the end (the Release in `end_pass`).
        self.passes.fetch_add(1, Ordering::Relaxed);
        judged.append(&mut state.retired);
        true
    }

    /// Puts back the nodes of `kept` whose home is this list, ahead of what was retired
    /// meanwhile (oldest first).
    fn put_back(&self, state: &mut ListState, kept: &[Retired]) {
        if kept.is_empty() {
            // Relaxed: a hint, as in `retire`.
            self.pending.store(state.retired.len(), Ordering::Relaxed);
            return;
        }
        let meanwhile = state.retired.len();
        state
            .retired
            .extend(kept.iter().filter(|r| ptr::eq(r.home, self)));
        let back = state.retired.len() - meanwhile;
        if meanwhile != 0 && back != 0 {
            state.retired.rotate_right(back);
        }
        // Relaxed: a hint, as in `retire`.
        self.pending.store(state.retired.len(), Ordering::Relaxed);
    }

    /// Ends a pass that took nodes off this list, after it returned them.
    fn end_pass(&self) {
        // Release: the pass's returns happen before a getter that sees either count
        // change looks at its pool again.
        self.passes_ended.fetch_add(1, Ordering::Release);
        self.passes.fetch_sub(1, Ordering::Release);
    }
}

/// A pass over one list, whose lock `state` is: held only to take the list and to give
/// back what stays on it; `None` if nothing was retired (no pass ran).
fn list_pass(list: &'static List, mut state: MutexGuard<'_, ListState>) -> Option<usize> {
    let mut buffers = state.buffers.take();
    if !list.take_into(&mut state, &mut buffers.judged) {
        state.buffers.keep_larger(buffers);
        return None;
    }
    drop(state);
    let kept = judge(&mut buffers);
    list.put_back(&mut list.state.lock(), &buffers.judged[..kept]);
    let released = recycle(&buffers.judged[kept..]);
    list.state.lock().buffers.keep_larger(buffers);
    list.end_pass();
    Some(released.unwrap_or_else(|payload| panic::resume_unwind(payload)))
}

/// A pass over every list ([`reclaim`]).
fn global_pass() -> usize {
    let (mut buffers, mut taken) = {
        let mut state = domain().state.lock();
        (state.buffers.take(), std::mem::take(&mut state.taken))
    };
    for list in lists() {
        // A list with nothing retired as of a moment ago: skipped without its lock. A
        // node retired before the caller's call is seen (program order, or whatever
        // happens-before made the caller call); one retired concurrently waits for the
        // next pass.
        if list.has_pending() && list.take_into(&mut list.state.lock(), &mut buffers.judged) {
            taken.push(list);
        }
    }
    let mut released = Ok(0);
    if !taken.is_empty() {
        let kept = judge(&mut buffers);
        for list in &taken {
            list.put_back(&mut list.state.lock(), &buffers.judged[..kept]);
        }
        released = recycle(&buffers.judged[kept..]);
        for list in &taken {
            list.end_pass();
        }
    }
    taken.clear();
    {
        let mut state = domain().state.lock();
        state.buffers.keep_larger(buffers);
        keep_larger(&mut state.taken, taken);
    }
    released.unwrap_or_else(|payload| panic::resume_unwind(payload))
}

/// Whether every node of a batch was published fenced, so that a `fence(SeqCst)` serves
/// the pass as its heavy barrier (`judge`).
fn all_fenced(batch: &[Retired]) -> bool {
    batch.iter().all(|r| r.fenced)
}

/// The unlocked middle of a pass: judges the nodes in `buffers.judged` (taken off their
/// lists), claims those no slot protects and no counted guard holds, and orders the
/// buffer: the `n` nodes it keeps first (in their order), then those it claimed. Returns
/// `n`.
fn judge(buffers: &mut Buffers) -> usize {
    let Buffers {
        judged,
        protected,
        claimed,
    } = buffers;
    // A fenced node's readers fenced after their slot stores: a fence pairs with theirs as
    // two `fence(SeqCst)`s do (fence mode's argument, node by node). One node that is not
    // fenced needs the heavy barrier, which serves the whole batch.
    if all_fenced(judged) {
        full();
    } else {
        heavy();
    }
    if judged.len() <= DIRECT {
        let mut held = [false; DIRECT];
        scan(|node| {
            for (held, r) in held.iter_mut().zip(judged.iter()) {
                *held |= r.node.as_ptr() == node;
            }
        });
        return partition(judged, claimed, |at, _| held[at]);
    }
    protected.clear();
    // Relaxed: a size hint (see the field); a block made meanwhile may grow the snapshot.
    protected.reserve(domain().block_count.load(Ordering::Relaxed) * BLOCK_SLOTS);
    scan(|node| protected.push(node));
    protected.sort_unstable();
    partition(judged, claimed, |_, r| {
        protected.binary_search(&r.node.as_ptr()).is_ok()
    })
}

/// Batches of at most this many nodes are judged without a snapshot: each protected
/// address the scan finds is compared with every node of the batch, so still one load per
/// slot, at most `DIRECT` comparisons per full slot, and no buffer.
const DIRECT: usize = 8;

/// Moves the nodes of `judged` that stay retired (those `held(index, node)` says a slot
/// protects, and those a counted guard holds) to the front and claims the others, which
/// follow them; returns how many stay. Both groups keep their order (through `claimed`,
/// an empty buffer, left empty): the claimed ones go back oldest first, so that the
/// freshest is on top of its depot, and a pool's idle bound drops the oldest when it is
/// reached (tests/model.rs follows that order).
fn partition(
    judged: &mut Vec<Retired>,
    claimed: &mut Vec<Retired>,
    held: impl Fn(usize, &Retired) -> bool,
) -> usize {
    debug_assert!(claimed.is_empty());
    let mut kept = 0;
    for at in 0..judged.len() {
        let r = judged[at];
        // SAFETY: the list owns a counted reference on `r.node` (see `retire`), so the
        // node is live; `claim` is the function `Retired::new` was given for it.
        if held(at, &r) || !unsafe { (r.claim)(r.node) } {
            // `kept <= at`: the slot written was read already.
            judged[kept] = r;
            kept += 1;
        } else {
            claimed.push(r);
        }
    }
    judged.truncate(kept);
    judged.append(claimed);
    kept
}

/// Calls `protected` with the address (untagged) that each full hazard slot of every block
/// holds now, one load per slot: every block published before the pass's heavy barrier is
/// walked, and of each block the slots under its high-water mark (`Block::mark`): a block
/// whose owner only ever held one guard at a time (a parked thread, an exited one's) costs
/// the mark's load and one slot's, not its 8 slots'. A plain loop, not an iterator chain:
/// `flat_map` over the blocks compiled to about twice the instructions per slot, which 64
/// registered threads made 2,100 per pass.
#[inline(always)]
fn scan(mut protected: impl FnMut(*mut ())) {
    // Acquire: see `Domain::directory` (every block published before the heavy barrier;
    // a directory made later holds every block of the ones before it).
    let directory = domain().directory.load(Ordering::Acquire);
    // SAFETY: directories are never freed (loom: not before the model ends), and each was
    // whole when published.
    let Some(directory) = (unsafe { directory.as_ref() }) else {
        return;
    };
    for b in directory.blocks() {
        // Acquire, each: see the module docs. Each slot loaded is loaded once: a null read
        // here is a guard's `Release` clear (its reads of the node happen before this pass
        // recycles it) or a slot never filled since the barrier. A block whose mark is 1
        // has only slot 0 loaded: the slots past the mark protect no node of this pass's
        // batch (module docs, "Why a recycled node is never read": the mark's store
        // precedes the reader's barrier). A block whose mark is past 1 is loaded whole
        // (its 8 loads, their OR, one branch), in line: a call per such block to load
        // only the slots under its mark cost ~8 ns a block in `benches/read.rs`, whose
        // `update-held` group leaves 64 empty blocks with mark 8 behind.
        if b.mark() > 1 {
            let nodes: [*mut (); super::BLOCK_SLOTS] =
                std::array::from_fn(|i| b.slots[i].node.load(Ordering::Acquire));
            if nodes.iter().fold(0, |any, &node| any | node as usize) == 0 {
                continue;
            }
            for node in nodes {
                if !node.is_null() {
                    protected(untag(node).0);
                }
            }
            continue;
        }
        let node = b.first().node.load(Ordering::Acquire);
        if !node.is_null() {
            protected(untag(node).0);
        }
    }
}

/// Returns the claimed nodes of a pass to their pools, no lock held: the pool's return
/// path may drop an object (`T::drop`), which may read or update a container itself.
/// Oldest first, so the freshest version is the one on top of its depot. Every node goes
/// back even if one return panics; returns how many, or the first panic, for the caller
/// to resume after it ended its pass.
fn recycle(batch: &[Retired]) -> Result<usize, Box<dyn std::any::Any + Send>> {
    let mut panicked = None;
    for r in batch {
        // SAFETY: `claim` succeeded: this thread owns the node (count zero) and no slot
        // protects it, so no reader can still read it.
        let recycle = || unsafe { (r.recycle)(r.node) };
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(recycle)) {
            panicked.get_or_insert(payload);
        }
    }
    panicked.map_or(Ok(batch.len()), Err)
}

/// Puts `buffer` (emptied) back in `slot` unless `slot` holds a larger one.
fn keep_larger<T>(slot: &mut Vec<T>, mut buffer: Vec<T>) {
    if buffer.capacity() > slot.capacity() {
        buffer.clear();
        *slot = buffer;
    }
}
