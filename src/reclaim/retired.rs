//! Retired lists and reclamation passes.
//!
//! # Retire
//!
//! [`retire`] pushes a version just swapped out of its container, with the container's
//! counted reference on it, on its pool's [`List`] (one per pool: writers of independent
//! containers share no lock and no written cache line). The list's reference keeps the
//! version from being returned by anyone but a pass: a counted guard's drop only takes the
//! count down to the list's one. The writer runs a pass over the list when it holds
//! [`RECLAIM_THRESHOLD`] versions; below that, the versions wait for the next pass, which a
//! getter of the pool that finds nothing idle runs first ([`List::reclaim_pending`]). So an
//! update usually makes no heavy barrier, and one pass serves every version retired since
//! the last.
//!
//! The writer's pass at the threshold waits, besides, until the list holds twice the
//! versions the last pass left on it because guards held them, so that as many were
//! retired since (folly's `hazptr` and haphazard's `reclaim` trigger the same way, against
//! a multiple of the hazard pointers). A pass then returns or judges for the first time at
//! least half of what it takes, so the work of testing the list costs O(1) amortised per
//! retirement however many versions guards hold. A getter's pass, which saves a build,
//! follows that rule only on a list longer than [`SHORT_LIST`]; on a shorter one it passes
//! whenever a version was retired since the last pass (and then judges those alone, not the
//! ones left held before them) or a look at the slots shows one no guard holds
//! ([`ListState::getter_pass`]): a warm writer does not build an object while a free
//! version waits. (A getter that finds nothing idle and no pass due builds a
//! new object, as if the list were empty: a pool whose guards hold `h > SHORT_LIST`
//! retired versions builds up to about `h` more objects.) Explicit passes
//! ([`reclaim`], [`List::reclaim`], [`List::reclaim_unless_heavy`], a container's drop, the
//! background reclaimer, a getter at its pool's live bound) run whenever called; [`reclaim`]
//! and the orphans' thread (`orphans.rs`) pass again while a pass dropped a version and
//! left another held ([`Pass::again`]).
//!
//! # Passes
//!
//! A *pass* takes every node off one list (a getter's, a writer's at the threshold) or off
//! every list ([`reclaim`]: a container's drop, the background reclaimer), each list under
//! its own lock, and counts itself in flight on each (`List::passes`). Then, unlocked: the
//! heavy barrier (a fence if every node taken was published fenced), one [`scan`] of the
//! hazard slots, and for each node a test against the protected addresses (at most 8 nodes:
//! a comparison with each; more: a binary search of a sorted snapshot). A node no slot
//! holds whose count the pass takes from one to zero (`Retired::claim`, a compare-and-swap:
//! no counted guard holds it) is the pass's; the others go back on their list (its lock
//! again), ahead of what was retired meanwhile. Then each claimed node goes back to its
//! pool (`Retired::give_back`, the pool's return path, which may run `T::drop`), and the
//! pass ends on each list (`List::passes_ended`). No lock is held across the barrier or
//! user code. A panic in one return does not stop the others: the pass finishes its batch,
//! then resumes the panic on its thread.
//!
//! # Which barrier a pass takes
//!
//! The public docs (`Container::update`, [`reclaim`]) promise at most one heavy barrier and
//! two loads per used slot per pass; which barrier, and why, is this rule:
//!
//! - In fence mode both barriers are `fence(SeqCst)`: a pass takes a fence.
//! - In membarrier mode, a version published less than 50 µs after the previous one
//!   (`container/raw.rs`, `FENCED_WITHIN_NS`) is published *fenced*: its readers issue a
//!   `fence(SeqCst)` per acquire until it is replaced or a reader thread stores it back plain
//!   (`UNFENCE_AFTER` fenced acquisitions), and a pass whose nodes are all fenced takes a
//!   fence, not `membarrier(2)` ([`all_fenced`]).
//! - A batch of at most [`SHORT_LIST`] nodes whose plain nodes a slot all shows held in a look
//!   before the barrier ([`plain_ones_look_held`]: the second load of each used slot) keeps
//!   those plain nodes unjudged, for a later pass, and takes a fence for the fenced ones: a
//!   version that a descheduled reader holds across many passes then costs none of them a
//!   `membarrier(2)`.
//! - Otherwise the heavy barrier, `membarrier(2)`, which serves the whole batch.
//!
//! A getter that found nothing idle first waits (a bounded number of yields) for the passes
//! in flight on its own pool's list, which may hold its retired version, and looks again if
//! one ended since it looked.
//!
//! Lists are never freed: a pool takes one when it is built ([`claim_list`]: a lock, maybe
//! an allocation) and gives it back when its shared state goes ([`release_list`]), which no
//! retired version outlives (each holds its pool); a later pool takes it over.
//!
//! # Orderings
//!
//! - Each list is under its own lock; its `pending` hint is `Relaxed` and only decides
//!   whether a getter or a global pass takes the lock.
//! - The claim's compare-and-swap is `Acquire` on success: it reads the tail of the release
//!   sequence of every counted guard's `Release` decrement.
//! - The lists are published with a `Release` store of the newest list, read `Acquire` by
//!   a global pass.
//! - A pass's end on a list (`passes_ended`, then `passes`) is `Release`, read `Acquire` by
//!   a getter of the pool: the pass's returns happen before the getter's next look.

use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use super::barrier::{self, full, heavy};
use super::hazard::{block_count, scan, BLOCK_SLOTS};
use super::wake::Wake;
use super::RECLAIM_THRESHOLD;
use crate::sync::{AtomicBool, AtomicPtr, AtomicUsize, Mutex, MutexGuard, Ordering};

/// Retired versions on a list at which [`retire`] runs a pass even while a background
/// reclaimer runs (one that fell behind): four times [`RECLAIM_THRESHOLD`].
pub(super) const BACKSTOP: usize = 4 * RECLAIM_THRESHOLD;

/// The most yields a pool getter that found nothing idle waits for other threads' passes
/// over its pool's list to end ([`List::reclaim_pending`]): a pass is a heavy barrier, a
/// scan and the returns, short unless it runs a long `T::drop`.
#[cfg(not(loom))]
const PASS_WAIT: u32 = 256;
/// Under loom, one: enough for a model to take both branches.
#[cfg(loom)]
const PASS_WAIT: u32 = 1;

/// A retired node, type-erased, with the two functions a pass calls on it: its pool's, given
/// when the node is retired, so that this layer never names a pool or a container. Two
/// function pointers, no allocation.
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
    /// Returns a claimed node (count zero, owned by the caller) to its pool; `true` if the
    /// pool dropped its object (closed or full), which may have let go of guards it held.
    give_back: unsafe fn(NonNull<()>) -> bool,
    /// The list the node was retired to (its pool's), set by [`retire`]: where a pass
    /// that keeps the node puts it back. Lists are never freed.
    home: *const List,
}

impl Retired {
    /// A retired node with the two functions a pass calls on it.
    ///
    /// # Safety
    ///
    /// `claim(node)` must take the node's count from one to zero and report whether it
    /// did, and `give_back(node)` must give a node so claimed back to its pool and say
    /// whether the pool dropped its object; both may be called on any thread while the node
    /// is on the retired list.
    /// `fenced` must be `true` only if every slot protection of `node` since it became
    /// current was followed by a full fence before its re-load (see the field).
    pub(crate) unsafe fn new(
        node: NonNull<()>,
        fenced: bool,
        claim: unsafe fn(NonNull<()>) -> bool,
        give_back: unsafe fn(NonNull<()>) -> bool,
    ) -> Retired {
        Retired {
            node,
            fenced,
            claim,
            give_back,
            home: ptr::null(),
        }
    }
}

/// The room a list and a pass's buffers are made with: for the versions retired between
/// reclamations and a burst that guards hold, made once (they grow only past their
/// largest size so far).
#[cfg(not(loom))]
const INITIAL_CAPACITY: usize = 4 * RECLAIM_THRESHOLD;
/// Under loom, none: every model execution has its own set of lists, leaked.
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
/// can still read them. Made by [`claim_list`] and never freed; a pool takes one when it is
/// built and gives it back when its shared state goes (then the list is empty: every
/// retired version holds its pool), for a later pool to take over. On its own cache lines.
#[repr(align(128))]
pub(crate) struct List {
    state: Mutex<ListState>,
    /// `state.retired.len()` as of the last change, read without the lock to decide
    /// whether a reclamation could return anything.
    pending: AtomicUsize,
    /// Versions ever retired to this list (wrapping): the background reclaimer's
    /// handshake reads the sum over every list (`wake.rs`). Written under the lock.
    retirements: AtomicUsize,
    /// Passes in flight that took nodes off this list: each holds them until it has
    /// returned them. A getter of the pool that finds nothing idle waits for them
    /// ([`List::reclaim_pending`]) rather than build an object while its own version is in
    /// one.
    passes: AtomicUsize,
    /// Passes ended so far that took nodes off this list: a getter that looked at its pool
    /// before one ended looks again.
    passes_ended: AtomicUsize,
    /// Whether a pool owns the list: set by `claim_list` under the lists' lock, cleared by
    /// `release_list`.
    owned: AtomicBool,
    /// Pools that gave the list back so far (wrapping): a list adopted for a closed pool
    /// (`orphans.rs`) is its until this changes.
    releases: AtomicUsize,
    /// The list made before this one (null for the first): a global pass walks them from
    /// `Lists::newest` without the lists' lock. Set before the list is published, never
    /// changed after.
    next: AtomicPtr<List>,
}

struct ListState {
    /// Retired nodes, oldest first.
    retired: Vec<Retired>,
    /// How many of `retired` passes put back because a guard held them, since the last
    /// take (which takes them all): what the last pass left held. An automatic pass waits
    /// until as many were retired after them ([`ListState::due`]). Passes put them at the
    /// front: `retired[held..]` were retired since.
    held: usize,
    /// Nodes retired since the last pass that took the whole list (saturating): a getter's
    /// pass over the new nodes alone leaves the older ones unjudged, for at most
    /// [`SHORT_LIST`] retirements ([`ListState::getter_pass`]).
    since_whole: usize,
    buffers: Buffers,
}

/// What a getter's pass takes off its list ([`ListState::getter_pass`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scope {
    /// Every node.
    Whole,
    /// The nodes retired since the last pass (`retired[held..]`), not those it left held.
    New,
}

impl ListState {
    /// Whether an automatic pass is due: the list holds at least `base` nodes and at least
    /// twice those the last pass left held ([`retire`]'s rule; `base` 1 for a getter's).
    fn due(&self, base: usize) -> bool {
        debug_assert!(self.held <= self.retired.len());
        self.retired.len() >= base.max(2 * self.held)
    }

    /// Whether a pool getter that found nothing idle passes before it builds an object
    /// ([`List::reclaim_pending`]), and over what. On a list longer than [`SHORT_LIST`],
    /// over the whole list at twice what the last pass left held ([`due`](Self::due)), as
    /// an update's pass. On a shorter one, so that a warm writer does not build while a
    /// version that no guard holds waits:
    /// - the whole list at twice what was left held, or once [`SHORT_LIST`] nodes were
    ///   retired since a pass last took it whole (so that a version whose last guard went
    ///   comes back within that many retirements, at O(1) amortised cost);
    /// - else the nodes retired since the last pass, if any ([`Scope::New`]): the pass
    ///   judges those only, O(new) comparisons after its scan of the slots, not O(held);
    /// - else the whole list if a look at the slots shows a node that none holds (its last
    ///   guard went since): one scan and a sort of the protected addresses
    ///   ([`slots_show`]), a hint only, without a barrier.
    fn getter_pass(&mut self) -> Option<Scope> {
        let len = self.retired.len();
        if len == 0 {
            return None;
        }
        if self.due(1) || (len <= SHORT_LIST && self.since_whole >= SHORT_LIST) {
            return Some(Scope::Whole);
        }
        if len > SHORT_LIST {
            return None;
        }
        if len > self.held {
            return Some(Scope::New);
        }
        (slots_show(&self.retired, &mut self.buffers.protected) != all(len)).then_some(Scope::Whole)
    }
}

/// The longest retired list on which a pool getter that found nothing idle passes as soon
/// as a pass could return something ([`ListState::getter_pass`]); past it, only at
/// twice what the last pass left held, which keeps the work O(1) amortised per retirement
/// however many versions guards hold. What it costs a getter that found nothing idle, at
/// most: a pass over its new versions (a scan of the slots, a comparison per protected
/// address and new version), a look at the rest (a scan and a sort of the protected
/// addresses, under the list's lock), and, once per `SHORT_LIST` retirements, a pass over
/// the whole list.
const SHORT_LIST: usize = 64;

/// The mask of the first `n` nodes (at most [`SHORT_LIST`]) of a batch.
fn all(n: usize) -> u64 {
    debug_assert!(n <= SHORT_LIST);
    u64::MAX >> (SHORT_LIST - n)
}

// SAFETY: `Retired` holds node pointers whose counted references may be dropped on any
// thread: nodes are `Send` (see `pool/node.rs`), and `Container` requires `T: Send + Sync`
// before any node is retired; `home` points at a list, which is `Sync`. `protected` holds
// addresses only, never dereferenced.
unsafe impl Send for ListState {}

/// The process-wide set of retired lists, and the background reclaimer's handshake.
pub(super) struct Lists {
    state: Mutex<ListsState>,
    /// The newest list; older ones follow through [`List::next`]. Written under the lock
    /// (`Release`, after the list is whole), read by global passes without it (`Acquire`).
    newest: AtomicPtr<List>,
    /// The background reclaimer's handshake (`wake.rs`).
    pub(super) wake: Wake,
}

/// What the lists' lock guards.
struct ListsState {
    /// Every retired list ever made (`List::owned` says whether a pool owns it). Boxed:
    /// pools and retired nodes point at their list.
    #[allow(clippy::vec_box)]
    lists: Vec<Box<List>>,
    /// A global pass's buffers ([`reclaim`]), as [`Buffers`] are a list's, and the lists
    /// it took nodes from.
    buffers: Buffers,
    taken: Vec<&'static List>,
}

// SAFETY: `Buffers` holds retired entries between passes only emptied (see `ListState`'s
// impl); `taken` holds references to lists, which are `Sync`.
unsafe impl Send for ListsState {}

impl Lists {
    fn new() -> Lists {
        Lists {
            state: Mutex::new(ListsState {
                lists: Vec::new(),
                buffers: Buffers::new(),
                taken: Vec::new(),
            }),
            newest: AtomicPtr::new(ptr::null_mut()),
            wake: Wake::new(),
        }
    }
}

/// The process's lists.
#[cfg(not(loom))]
fn all_lists() -> &'static Lists {
    // The std half of a pair: under loom, `loom::lazy_static!` below.
    #[allow(clippy::disallowed_types)]
    static LISTS: std::sync::OnceLock<Lists> = std::sync::OnceLock::new();
    LISTS.get_or_init(Lists::new)
}

// Under loom, one set per model execution, leaked: a pool's last handle, which gives its
// list back, may go with a thread's registry, after loom drops its lazy statics.
#[cfg(loom)]
loom::lazy_static! {
    static ref LISTS: &'static Lists = Box::leak(Box::new(Lists::new()));
}

/// The model execution's lists.
#[cfg(loom)]
fn all_lists() -> &'static Lists {
    &LISTS
}

impl List {
    fn new(next: *mut List) -> List {
        List {
            state: Mutex::new(ListState {
                // Room for the versions retired between reclamations and for a burst that
                // guards hold, made once: the lists grow (allocate) only past their
                // largest size so far.
                retired: Vec::with_capacity(INITIAL_CAPACITY),
                held: 0,
                since_whole: 0,
                buffers: Buffers::new(),
            }),
            pending: AtomicUsize::new(0),
            retirements: AtomicUsize::new(0),
            passes: AtomicUsize::new(0),
            passes_ended: AtomicUsize::new(0),
            owned: AtomicBool::new(false),
            releases: AtomicUsize::new(0),
            next: AtomicPtr::new(next),
        }
    }
}

/// Gives a new pool a retired list: one an earlier pool gave back, or a new one (an
/// allocation of a few hundred bytes). One lock (process-wide) and a load per list.
pub(crate) fn claim_list() -> &'static List {
    let mut state = all_lists().state.lock();
    let state = &mut *state;
    // Relaxed: a list given back has no pass of its own pool left; one of a global pass
    // that took nothing from it may still end on it (it only counts), so prefer one
    // without.
    let free = (0..state.lists.len()).find(|&i| {
        let list = &state.lists[i];
        // Acquire: pairs with `release_list`'s Release: the pool that gave the list back
        // is done with it.
        // loom-mutants: no model makes a pool after another pool's drop, on another
        // thread, gave its list back, the only case where this pairs with a `Release`.
        !list.owned.load(Ordering::Acquire) && list.passes.load(Ordering::Relaxed) == 0
    });
    let at = match free {
        Some(at) => at,
        None => {
            // Relaxed: the head is only written under the lock we hold.
            let newest = all_lists().newest.load(Ordering::Relaxed);
            state.lists.push(Box::new(List::new(newest)));
            let at = state.lists.len() - 1;
            let list: *const List = &*state.lists[at];
            // Release: a global pass that loads the head sees the list whole, and every
            // list before it (each was published the same way, under this lock).
            // loom-mutants: loom checks that memory is visible before it is used only for
            // its `UnsafeCell`s: a list's fields are atomics and a lock, made visible to
            // loom by their creation alone, so a pass that reads a list this store did not
            // publish is not caught.
            all_lists().newest.store(list.cast_mut(), Ordering::Release);
            at
        }
    };
    // Relaxed: only claimers set it, under the lock we hold.
    state.lists[at].owned.store(true, Ordering::Relaxed);
    let list: *const List = &*state.lists[at];
    // SAFETY: boxes in `lists` are never dropped or moved (the set lives for the process;
    // under loom it is leaked).
    unsafe { &*list }
}

/// Gives a pool's list back when the pool's shared state goes: no node of the pool is left
/// on it (each holds the pool). One store: no lock, and no use of the set of lists, which
/// under loom may be gone by then (a pool's last reference can go with a thread's
/// registry, after loom's statics).
pub(crate) fn release_list(list: &'static List) {
    // Relaxed: a check; only this pool's drop clears it.
    debug_assert!(
        list.owned.load(Ordering::Relaxed),
        "a retired list released twice"
    );
    // Relaxed: a name for the pool that owned the list (see `List::releases`). The Release
    // store below orders it before a new pool's claim, and so before any version of that
    // pool reaches the list: the orphans' thread, which reads it under the list's lock
    // (`reclaim_orphaned`), sees it changed before it could take one of them.
    list.releases.fetch_add(1, Ordering::Relaxed);
    // Release: pairs with `claim_list`'s Acquire.
    // loom-mutants: as there, no model makes a pool after this one's drop on another thread.
    list.owned.store(false, Ordering::Release);
}

/// Hands a node just swapped out of its container, with the container's counted reference
/// on it, to `list` (its pool's); runs a pass over that list if it reached
/// [`RECLAIM_THRESHOLD`] and twice what the last pass left held (module docs), or, while a
/// background reclaimer runs, wakes that one instead (passing only at [`BACKSTOP`], or
/// twice what the last pass left held). Costs a lock and a push (no allocation once the
/// list has grown to its largest size), and, while a reclaimer runs, a `fence(SeqCst)`.
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
    state.since_whole = state.since_whole.saturating_add(1);
    let len = state.retired.len();
    // Relaxed: a hint (see `List::pending`); the list itself is under the lock.
    list.pending.store(len, Ordering::Relaxed);
    // Relaxed: written under the lock only; the reclaimer's handshake orders it with a
    // fence (`Wake::after_retire`).
    let retirements = list.retirements.load(Ordering::Relaxed);
    list.retirements
        .store(retirements.wrapping_add(1), Ordering::Relaxed);
    let background = all_lists().wake.running();
    let threshold = if background {
        BACKSTOP
    } else {
        RECLAIM_THRESHOLD
    };
    if state.due(threshold) {
        list_pass(list, state);
    } else if background {
        drop(state);
        all_lists().wake.after_retire();
    }
}

/// The background reclaimer's handshake.
pub(super) fn wake() -> &'static Wake {
    &all_lists().wake
}

/// Every list, newest first: the ones made before the head's load, each
/// whole.
fn lists() -> impl Iterator<Item = &'static List> {
    // Acquire: see `Lists::newest`.
    // loom-mutants: as the store it pairs with (`claim_list`).
    let mut list = all_lists().newest.load(Ordering::Acquire);
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
pub(super) fn retirements() -> usize {
    // Relaxed: a hint; the reclaimer orders it with a fence where it matters.
    lists().fold(0, |sum, l| {
        sum.wrapping_add(l.retirements.load(Ordering::Relaxed))
    })
}

/// Returns every retired node, of every pool, that no slot protects and no counted guard
/// holds (module docs); returns how many. Never waits for a reader: held nodes stay on
/// their lists. Passes again while a pass dropped an object and left nodes held
/// ([`Pass::again`]). See [`crate::reclaim()`] for its costs.
pub(super) fn reclaim() -> usize {
    until_settled(|| Some(global_pass()))
}

/// What a pass did.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Pass {
    /// Nodes it returned to their pools.
    pub(super) returned: usize,
    /// Nodes it put back because a guard held them.
    kept: usize,
    /// Whether a pool dropped the object of a node it returned (the pool was closed or
    /// full).
    dropped: bool,
}

impl Pass {
    /// Whether another pass could return more at once: an object dropped here may have
    /// held the last guard on a node this pass kept (a version holding a guard on an older
    /// one, as a history does). So a chain of `n` such versions goes in one explicit
    /// reclamation of `n` passes, not in `n` reclamations. No object dropped, or nothing
    /// kept: no second pass (a pool that keeps its returns keeps their guards too, until
    /// their reset).
    fn again(&self) -> bool {
        self.dropped && self.kept > 0
    }
}

/// Runs `pass` until it runs none (`None`) or has nothing more to free ([`Pass::again`]);
/// returns how many nodes went back in all. At most one pass more than the longest chain
/// of versions that hold guards on one another.
pub(super) fn until_settled(mut pass: impl FnMut() -> Option<Pass>) -> usize {
    let mut returned = 0;
    while let Some(done) = pass() {
        returned += done.returned;
        if !done.again() {
            break;
        }
    }
    returned
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
        list_pass(self, self.state.lock()).map_or(0, |p| p.returned)
    }

    /// For the orphans (`orphans.rs`): [`reclaim`](Self::reclaim), again while a pass
    /// dropped an object and left nodes held ([`Pass::again`]), as long as the list still
    /// belongs to the closed pool it was adopted for: `releases` is
    /// [`releases`](Self::releases) as read when the pool closed. No pass once that pool
    /// gave the list back: a new pool may own it now, and its versions are its own writers'
    /// to reclaim. Returns how many nodes went back.
    ///
    /// The test is made under the list's lock, with the take: a new pool's versions reach
    /// the list only after it claimed the list, which the release happens before
    /// (`release_list`'s `Release`, `claim_list`'s `Acquire`), and through the list's lock;
    /// so a take that sees the count unchanged takes none of them.
    #[cfg_attr(miri, allow(dead_code))] // the orphans' thread's, left out there
    pub(super) fn reclaim_orphaned(&'static self, releases: usize) -> usize {
        until_settled(|| {
            let state = self.state.lock();
            if self.releases() != releases {
                return None;
            }
            list_pass(self, state)
        })
    }

    /// Whether any node of this list waits to be returned: one is on the list, or a pass in
    /// flight took one off it (and may put it back). Exact, unlike
    /// [`has_pending`](Self::has_pending): the list's lock, and one load. For a pool's
    /// close, which hands the list to the orphans' thread if so, and for that thread, which
    /// keeps passing while so.
    pub(crate) fn holds_any(&self) -> bool {
        let state = self.state.lock();
        // Relaxed, under the lock: a pass counts itself in `take_into`, under this lock,
        // with its take, so a take before ours shows; it uncounts itself (`end_pass`) only
        // after it put back what it kept, under this lock too: a count gone is a put-back
        // that `retired` shows (a load cannot read a store that its own lock's release
        // happens before).
        !state.retired.is_empty() || self.passes.load(Ordering::Relaxed) != 0
    }

    /// Whether the node at address `node` is on this list now: retired, and not taken by
    /// a pass (one in flight holds its nodes off the list). The list's lock and a scan,
    /// O(versions on the list).
    pub(crate) fn holds(&self, node: usize) -> bool {
        self.state
            .lock()
            .retired
            .iter()
            .any(|r| r.node.as_ptr() as usize == node)
    }

    /// Whether no hazard slot seems to protect the node at address `node` now: one scan of
    /// every thread's slots, without a barrier, so only a hint (a slot stored a moment ago
    /// may not show yet, one cleared a moment ago may still show; a counted guard does not
    /// show). For a writer that waits for a version to be free before it runs a pass,
    /// which decides. O(slots in use), loads only.
    pub(crate) fn looks_unprotected(node: usize) -> bool {
        let mut held = false;
        scan(|p| held |= p as usize == node);
        !held
    }

    /// How many pools gave this list back so far (see the field).
    pub(super) fn releases(&self) -> usize {
        // Relaxed: see `release_list`.
        self.releases.load(Ordering::Relaxed)
    }

    /// [`reclaim`](Self::reclaim), unless the pass would need the heavy barrier and
    /// `heavy` is `false`: for a writer that reclaims ahead of its pool's getter because a
    /// fresher version saves it work, but only when the pass is cheap enough to pay.
    /// `None` when no pass ran (the list was empty, or the pass was not worth a heavy
    /// barrier); else how many nodes went back. The test takes the list's lock (as
    /// [`retire`] does) and reads each retired node's flag: O(versions on the list); and
    /// if some are not fenced, looks at the slots as `judge` would ([`plain_ones_look_held`]:
    /// a pass that keeps them needs only a fence).
    pub(crate) fn reclaim_unless_heavy(&'static self, heavy: bool) -> Option<usize> {
        let mut guard = self.state.lock();
        let state = &mut *guard;
        // `judge`'s rule, on the nodes the pass would take now (a node retired between this
        // look and the take can only make it take the heavy barrier anyway: a hint, as the
        // caller's rule is). In `Fence` mode the heavy barrier is a fence too.
        // Tested only when the caller would not pay the heavy barrier (`plain_ones_look_held`
        // scans the slots).
        if !heavy
            && barrier::membarrier()
            && !all_fenced(&state.retired)
            && !plain_ones_look_held(&state.retired, &mut state.buffers.protected)
        {
            return None;
        }
        list_pass(self, guard).map(|p| p.returned)
    }

    /// How many passes that took nodes off this list have ended: read by a pool getter
    /// before it looks at its pool, and given to [`reclaim_pending`](Self::reclaim_pending)
    /// after the look found nothing.
    pub(crate) fn passes_ended(&self) -> usize {
        // Acquire: pairs with the Release at a pass's end (see `end_pass`).
        // loom-mutants: the returns are ordered by the depots' locks, which the getter's
        // look takes; under loom no getter's look depends on this count's order alone.
        self.passes_ended.load(Ordering::Acquire)
    }

    /// [`reclaim`](Self::reclaim) if a getter's pass is due
    /// ([`ListState::getter_pass`]). For a pool getter that found
    /// nothing idle, before it builds an object. `looked` is
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
        let mut new_only = 0;
        loop {
            // Acquire: pairs with the Release at a pass's end (see `end_pass`); the returns
            // themselves are ordered by the pools' own synchronization.
            // loom-mutants: as `passes_ended`'s load.
            while waits < PASS_WAIT && self.passes.load(Ordering::Acquire) != 0 {
                waits += 1;
                crate::sync::yield_now();
            }
            if !self.has_pending() {
                break;
            }
            let mut state = self.state.lock();
            let Some(scope) = state.getter_pass() else {
                break;
            };
            let n = match scoped_pass(self, state, scope) {
                Some(pass) => {
                    own += 1;
                    pass.returned
                }
                None => 0,
            };
            returned += n;
            // A pass over the new nodes that found them all held: the older ones may not be
            // (their last guards went since), which the next turn looks at (once more: the
            // list's own writers may retire meanwhile).
            if n == 0 && scope == Scope::New && new_only < 2 {
                new_only += 1;
                continue;
            }
            // A pass that another thread began since the wait above may have taken the
            // list (this one found it empty): wait for that one too.
            // loom-mutants: as `passes_ended`'s load.
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
        self.take_scope_into(state, judged, Scope::Whole)
    }

    /// [`take_into`](Self::take_into), or, for [`Scope::New`], the nodes retired since the
    /// last pass only (the ones it left held stay at the front of the list).
    fn take_scope_into(
        &self,
        state: &mut ListState,
        judged: &mut Vec<Retired>,
        scope: Scope,
    ) -> bool {
        let from = match scope {
            Scope::Whole => 0,
            Scope::New => state.held.min(state.retired.len()),
        };
        if state.retired.len() == from {
            return false;
        }
        // Every node taken here was retired before the pass's heavy barrier: the pass
        // judges those only (`reclaim.rs`, "Why a returned version is never read"). Nodes
        // retired after the take wait on the list for the next pass.
        // Relaxed: taken under the lock with the nodes; only `reclaim_pending` reads it,
        // to wait for the end (the Release in `end_pass`).
        self.passes.fetch_add(1, Ordering::Relaxed);
        judged.extend(state.retired.drain(from..));
        if from == 0 {
            state.held = 0;
            state.since_whole = 0;
        }
        true
    }

    /// Puts back the nodes of `kept` whose home is this list, ahead of what was retired
    /// meanwhile (oldest first): at the front, or after the first `at` nodes (those a pass
    /// over the new nodes left on the list, if they are still there).
    fn put_back(&self, state: &mut ListState, kept: &[Retired], at: usize) {
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
        let at = at.min(meanwhile);
        if meanwhile != at && back != 0 {
            state.retired[at..].rotate_right(back);
        }
        // Added to what passes that ended since the last take put back: every node they
        // left is on the list still.
        state.held += back;
        // Relaxed: a hint, as in `retire`.
        self.pending.store(state.retired.len(), Ordering::Relaxed);
    }

    /// Ends a pass that took nodes off this list, after it returned them.
    fn end_pass(&self) {
        // Release: the pass's returns happen before a getter that sees either count
        // change looks at its pool again.
        // loom-mutants: as `passes_ended`'s load.
        self.passes_ended.fetch_add(1, Ordering::Release);
        self.passes.fetch_sub(1, Ordering::Release); // loom-mutants: as the line above.
    }
}

/// A pass over one list, whose lock `state` is: held only to take the list and to give
/// back what stays on it; `None` if nothing was retired (no pass ran).
fn list_pass(list: &'static List, state: MutexGuard<'_, ListState>) -> Option<Pass> {
    scoped_pass(list, state, Scope::Whole)
}

/// [`list_pass`] over `scope`: the whole list, or the nodes retired since the last pass.
fn scoped_pass(
    list: &'static List,
    mut state: MutexGuard<'_, ListState>,
    scope: Scope,
) -> Option<Pass> {
    let mut buffers = state.buffers.take();
    let at = match scope {
        Scope::Whole => 0,
        Scope::New => state.held,
    };
    if !list.take_scope_into(&mut state, &mut buffers.judged, scope) {
        state.buffers.keep_larger(buffers);
        return None;
    }
    drop(state);
    let kept = judge(&mut buffers);
    list.put_back(&mut list.state.lock(), &buffers.judged[..kept], at);
    let released = give_back(&buffers.judged[kept..]);
    list.state.lock().buffers.keep_larger(buffers);
    list.end_pass();
    let (returned, dropped) = released.unwrap_or_else(|payload| panic::resume_unwind(payload));
    Some(Pass {
        returned,
        kept,
        dropped,
    })
}

/// A pass over every list ([`reclaim`]).
fn global_pass() -> Pass {
    let (mut buffers, mut taken) = {
        let mut state = all_lists().state.lock();
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
    let mut released = Ok((0, false));
    let mut kept = 0;
    if !taken.is_empty() {
        kept = judge(&mut buffers);
        for list in &taken {
            list.put_back(&mut list.state.lock(), &buffers.judged[..kept], 0);
        }
        released = give_back(&buffers.judged[kept..]);
        for list in &taken {
            list.end_pass();
        }
    }
    taken.clear();
    {
        let mut state = all_lists().state.lock();
        state.buffers.keep_larger(buffers);
        keep_larger(&mut state.taken, taken);
    }
    let (returned, dropped) = released.unwrap_or_else(|payload| panic::resume_unwind(payload));
    Pass {
        returned,
        kept,
        dropped,
    }
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
    // fenced needs the heavy barrier, which serves the whole batch; unless the pass keeps
    // every such node without judging it, and returns only fenced ones (`keep_plain`).
    let keep_plain = if all_fenced(judged) {
        full();
        false
    } else if plain_ones_look_held(judged, protected) {
        full();
        true
    } else {
        heavy();
        false
    };
    if judged.len() <= SHORT_LIST {
        let held = slots_show(judged, protected);
        return partition(judged, claimed, |at, r| {
            held & (1 << at) != 0 || (keep_plain && !r.fenced)
        });
    }
    debug_assert!(
        !keep_plain,
        "a long batch keeps none of its plain nodes unjudged"
    );
    snapshot(protected);
    partition(judged, claimed, |_, r| {
        protected.binary_search(&r.node.as_ptr()).is_ok()
    })
}

/// Whether a pass over `batch` may take a fence instead of the heavy barrier by keeping its
/// nodes that were not published fenced: in `membarrier` mode (and under loom and Miri), a
/// batch of at most [`SHORT_LIST`] nodes each of whose plain nodes a slot shows now, in a look
/// without a barrier ([`slots_show`], as [`List::looks_unprotected`]). The heavy barrier would
/// most likely find them protected too: a reader descheduled while it holds a version holds
/// it for a time slice, and each pass meanwhile would interrupt every CPU for nothing. Once
/// no slot shows them, a pass with the heavy barrier judges them. Only a hint: a node the
/// look missed is judged under the heavy barrier, one it saw is only kept longer.
fn plain_ones_look_held(batch: &[Retired], protected: &mut Vec<*mut ()>) -> bool {
    // Under loom and Miri too (their heavy barrier is a fence; every other version is
    // fenced there), so that the models and tests run the passes that keep plain nodes.
    if !(cfg!(any(loom, miri)) || barrier::membarrier()) || batch.len() > SHORT_LIST {
        return false;
    }
    let seen = slots_show(batch, protected);
    batch
        .iter()
        .enumerate()
        .all(|(at, r)| r.fenced || seen & (1 << at) != 0)
}

/// Which nodes of `batch` (at most [`SHORT_LIST`]) some hazard slot holds, as a mask (bit
/// `i` for node `i`): one scan of every thread's slots. Up to [`DIRECT`] nodes, each
/// protected address is compared with each node; more, the addresses are sorted into
/// `protected` ([`snapshot`]) and each node looked up. What it proves depends on the
/// barrier before it (`judge`); with none, a hint.
fn slots_show(batch: &[Retired], protected: &mut Vec<*mut ()>) -> u64 {
    debug_assert!(batch.len() <= SHORT_LIST);
    let mut shown = 0;
    if batch.len() <= DIRECT {
        scan(|node| {
            for (at, r) in batch.iter().enumerate() {
                shown |= u64::from(r.node.as_ptr() == node) << at;
            }
        });
    } else {
        snapshot(protected);
        for (at, r) in batch.iter().enumerate() {
            shown |= u64::from(protected.binary_search(&r.node.as_ptr()).is_ok()) << at;
        }
    }
    shown
}

/// Sorts every address the hazard slots protect now into `protected` (one scan; allocates
/// only past the largest count so far).
fn snapshot(protected: &mut Vec<*mut ()>) {
    protected.clear();
    protected.reserve(block_count() * BLOCK_SLOTS);
    scan(|node| protected.push(node));
    protected.sort_unstable();
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

/// Returns the claimed nodes of a pass to their pools, no lock held: the pool's return
/// path may drop an object (`T::drop`), which may read or update a container itself.
/// Oldest first, so the freshest version is the one on top of its depot. Every node goes
/// back even if one return panics; returns how many and whether a pool dropped an object
/// (a panicking drop counts), or the first panic, for the caller to resume after it ended
/// its pass.
fn give_back(batch: &[Retired]) -> Result<(usize, bool), Box<dyn std::any::Any + Send>> {
    let mut panicked = None;
    let mut dropped = false;
    for r in batch {
        // SAFETY: `claim` succeeded: this thread owns the node (count zero) and no slot
        // protects it, so no reader can still read it.
        let give_back = || unsafe { (r.give_back)(r.node) };
        match panic::catch_unwind(AssertUnwindSafe(give_back)) {
            Ok(d) => dropped |= d,
            Err(payload) => {
                dropped = true;
                panicked.get_or_insert(payload);
            }
        }
    }
    panicked.map_or(Ok((batch.len(), dropped)), Err)
}

/// Puts `buffer` (emptied) back in `slot` unless `slot` holds a larger one.
fn keep_larger<T>(slot: &mut Vec<T>, mut buffer: Vec<T>) {
    if buffer.capacity() > slot.capacity() {
        buffer.clear();
        *slot = buffer;
    }
}
