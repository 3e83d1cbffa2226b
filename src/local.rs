//! Per-thread caches and depots of a pool, and the registry that finds the calling thread's.
//!
//! # Layout: magazines and depots
//!
//! Every thread that uses a pool gets a [`Local`] for it (Bonwick's magazine layer, and Go's
//! per-P `poolLocal`):
//!
//! - a **cache** of at most [`CACHE`] (16) idle objects that only the owning thread
//!   touches: no lock, no atomic read-modify-write (Go's `private` slot, widened);
//! - a **depot** behind it, a `parking_lot` mutex over two lists, *primary* and *victim*
//!   (Go's `local` and `victim` generations). The owner spills the older half of its cache
//!   there ([`BATCH`], 8 objects) when the cache is full; an empty cache refills with up to
//!   [`REFILL`] (16) objects at once from the thread's own depot, or else steals them from
//!   another thread's. The last reference to a container version is donated to the depot of
//!   the thread that published it (the writer), which is where its next `get_new` looks
//!   first.
//!
//! Batches are what a handoff (one thread gets, another puts back) pays for: each spill and
//! each steal takes a contended lock, so their size sets how often. In
//! `cargo bench --bench pool -- pool-handoff` on the 2-core VM (2026-11-21, rustc 1.95), a
//! cache of 8 moving 4 at a time cost 115-120 ns per handed-off object (two runs), and 16
//! moving 8 (stealing up to 16) 95 ns, the channel's own cost included in both.
//!
//! The owner's half of a `Local` and the depot's half sit on separate cache lines, so a
//! thief locking the depot does not evict the owner's cache.
//!
//! # The idle bound without a shared counter per operation
//!
//! `max_idle` counts every idle object, caches included, yet the hit path must not touch a
//! shared counter. So the pool keeps a shared *budget* (`Shared::budget`) of idle slots and
//! hands it out in batches, as Linux's per-CPU counters do: a cache holds one token of the
//! budget per cached object plus a few *spare* ones, and only goes to the budget when it
//! runs out of spare tokens on a put (reserving [`TOKENS`], 4, at once), holds more than
//! `TOKENS` spare after a get, or refills (giving back all its spare tokens). Objects moving
//! between a cache and a depot carry their tokens with them. So at any moment: idle objects
//! <= budget in use = cached objects + spare tokens + objects in depots <= `max_idle`.
//! Spare tokens of threads that went quiet can make the pool drop an object while fewer than
//! `max_idle` are idle: up to `TOKENS` per such thread.
//!
//! # Threads
//!
//! The registry is a `thread_local!` list of (pool id, `Local`) per thread. A `Local` is made
//! the first time a thread uses a pool (one allocation), and is never freed before the pool.
//! When the thread exits, a thread-local destructor flushes its caches into their depots,
//! where other threads steal them, and marks each `Local` free for the next new thread to
//! adopt, so a pool holds at most as many `Local`s as threads that used it at once. (The
//! `thread_local` crate would give a dead thread's slot to a new thread without a hook to
//! flush it first; a flush running beside the new owner would race on the cache.)

use std::cell::RefCell;
use std::fmt;
use std::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::pool::{free_node, Node, NodePtr, Shared};
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Mutex, MutexGuard, Ordering, UnsafeCell};

/// The most idle objects a thread's cache holds (2 under loom, so that models reach a
/// spill and a refill in a few operations).
const CACHE: usize = if cfg!(loom) { 2 } else { 16 };
/// How many objects a full cache spills to its depot at once.
const BATCH: usize = CACHE / 2;
/// How many budget slots move at once between a cache and the pool's budget, and the
/// most a cache keeps spare.
const TOKENS: usize = if cfg!(loom) { 1 } else { 4 };
/// The most objects an empty cache takes at once from a depot's primary list.
const REFILL: usize = CACHE;

/// One thread's share of one pool.
///
/// Laid out in two `CachePadded` halves so that the owner's hit path and the thieves and
/// donors never write to the same cache line: a thief that takes the depot's lock does
/// not evict the owner's cache from the owner's CPU.
pub(crate) struct Local<T> {
    /// The owner's side.
    own: CachePadded<Own<T>>,
    /// Shared with thieves and donors.
    depot: CachePadded<Depot<T>>,
    /// Whether a live thread owns this `Local`. Cleared on thread exit, after the flush;
    /// set by a thread that adopts it.
    owned: AtomicBool,
    /// The next `Local` of the same pool: written once, before this one is published.
    pub(crate) next: *const Local<T>,
}

/// The part of a `Local` that only its owner writes.
struct Own<T> {
    /// Touched only by the owning thread (the one whose registry lists this `Local`), or by
    /// the pool's destructor when no thread can touch it.
    cache: UnsafeCell<Cache<T>>,
    /// How many of the cache's slots hold a node (the first `len`). Written only by the
    /// owner, with plain (`Relaxed`) loads and stores, no read-modify-write; an atomic so
    /// that `stats` may read it from any thread.
    len: AtomicUsize,
    /// `get`s this thread served from idle objects. Written only by the owner
    /// (`load` + `store`, no read-modify-write); read by `stats`.
    hits: AtomicU64,
}

struct Cache<T> {
    /// The first `Own::len` slots hold idle nodes this cache owns; the rest hold stale or
    /// dangling pointers, never dereferenced. A fixed array: a push is one store, never an
    /// allocation, and `get(i)` both bounds-checks and tests for empty/full in one compare.
    nodes: [NonNull<Node<T>>; CACHE],
    /// Budget slots held beyond the nodes cached: this cache holds `len + spare` tokens.
    spare: usize,
}

/// A thread's depot: two lists behind a lock, and their total length readable without it.
struct Depot<T> {
    lists: Mutex<Lists<T>>,
    /// Mirror of `lists`' total length, stored when a [`DepotGuard`] unlocks. Read
    /// without the lock as a hint.
    len: AtomicUsize,
}

/// Go's two generations. `trim` drops `victim` and demotes `primary`.
struct Lists<T> {
    primary: Vec<NodePtr<T>>,
    victim: Vec<NodePtr<T>>,
}

/// A locked depot; updates the depot's length mirror when it unlocks.
struct DepotGuard<'a, T> {
    lists: MutexGuard<'a, Lists<T>>,
    len: &'a AtomicUsize,
}

impl<T> Depot<T> {
    fn new(room: usize) -> Depot<T> {
        Depot {
            lists: Mutex::new(Lists {
                primary: Vec::with_capacity(room),
                victim: Vec::with_capacity(room),
            }),
            len: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> DepotGuard<'_, T> {
        DepotGuard {
            lists: self.lists.lock(),
            len: &self.len,
        }
    }

    /// The length at the last unlock: a hint, possibly stale.
    fn len_hint(&self) -> usize {
        // Relaxed: a hint; whoever acts on it takes the lock first, or accepts a miss.
        self.len.load(Ordering::Relaxed)
    }
}

impl<T> Drop for DepotGuard<'_, T> {
    fn drop(&mut self) {
        // Relaxed: a mirror for hints and statistics, written under the lock (this runs
        // before the `lists` field, the lock guard, is dropped).
        self.len.store(self.lists.len(), Ordering::Relaxed);
    }
}

impl<T> std::ops::Deref for DepotGuard<'_, T> {
    type Target = Lists<T>;
    fn deref(&self) -> &Lists<T> {
        &self.lists
    }
}

impl<T> std::ops::DerefMut for DepotGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut Lists<T> {
        &mut self.lists
    }
}

impl<T> Lists<T> {
    fn len(&self) -> usize {
        self.primary.len() + self.victim.len()
    }
}

/// Depot slots reserved up front per list (beyond them a list grows, once).
const DEPOT_PRESIZE: usize = 64;

// SAFETY: a `Local` is shared between threads, but its only non-`Sync` part, the cache, is
// touched by a single thread at a time (its owner, or the pool's destructor once no thread
// can reach it), per the field's invariant. The depot is behind a lock; the rest is atomic.
// The nodes it holds are sent between threads, which `T: Send` allows.
unsafe impl<T: Send> Sync for Local<T> {}
// SAFETY: as above; moving a `Local` moves the nodes it owns.
unsafe impl<T: Send> Send for Local<T> {}

impl<T> Local<T> {
    pub(crate) fn new(max_idle: usize, next: *const Local<T>) -> Local<T> {
        let depot_room = max_idle.min(DEPOT_PRESIZE);
        Local {
            own: CachePadded::new(Own {
                cache: UnsafeCell::new(Cache {
                    nodes: [NonNull::dangling(); CACHE],
                    spare: 0,
                }),
                len: AtomicUsize::new(0),
                hits: AtomicU64::new(0),
            }),
            depot: CachePadded::new(Depot::new(depot_room)),
            owned: AtomicBool::new(true),
            next,
        }
    }

    /// Runs `f` on the cache.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, and `f` runs no user code (no reset, factory
    /// or destructor of `T`) that could re-enter the pool.
    #[inline]
    unsafe fn with_cache<R>(&self, f: impl FnOnce(&mut Cache<T>) -> R) -> R {
        self.own.cache.with_mut(|cache| {
            // SAFETY: per the caller, no other reference to the cache exists meanwhile.
            f(unsafe { &mut *cache })
        })
    }

    /// The number of nodes in the cache. Owner only (others read it for statistics).
    #[inline]
    fn cache_len(&self) -> usize {
        // Relaxed: only the owner writes it, so the owner reads its own last store.
        self.own.len.load(Ordering::Relaxed)
    }

    #[inline]
    fn set_cache_len(&self, len: usize) {
        // Relaxed: owner-written; others read it only for statistics.
        self.own.len.store(len, Ordering::Relaxed);
    }

    /// Counts a `get` served from idle objects. Owner only.
    #[inline]
    pub(crate) fn count_hit(&self) {
        // Relaxed load + store, not `fetch_add`: only the owner writes this counter.
        let hits = self.own.hits.load(Ordering::Relaxed);
        self.own.hits.store(hits + 1, Ordering::Relaxed);
    }

    /// The hit path of `get`: pops the most recently cached node, if any. Plain loads and
    /// stores; once per `TOKENS` pops, one budget RMW to give back spare tokens.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, which belongs to `shared`.
    #[inline]
    pub(crate) unsafe fn pop(&self, shared: &Shared<T>) -> Option<NodePtr<T>> {
        let len = self.cache_len();
        // SAFETY: the caller owns the cache; nothing here runs user code.
        unsafe {
            self.with_cache(|c| {
                // `len - 1`, or `usize::MAX` (out of bounds) when the cache is empty.
                let node = *c.nodes.get(len.wrapping_sub(1))?;
                self.set_cache_len(len - 1);
                // The popped node's token stays here, spare. Spare tokens are budget that
                // other threads cannot use: in a handoff, the thread that gets holds the
                // tokens of the objects it stole, while the thread that puts needs them.
                // Keeping at most `TOKENS` bounds that.
                c.spare += 1;
                if c.spare > TOKENS {
                    shared.unreserve(TOKENS);
                    c.spare -= TOKENS;
                }
                Some(NodePtr(node))
            })
        }
    }

    /// Takes an idle node: from the cache, else a batch from this thread's depot, else a
    /// batch stolen from another thread's depot (primary lists before victim lists).
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, which belongs to `shared`.
    pub(crate) unsafe fn take(&self, shared: &Shared<T>) -> Option<NodePtr<T>> {
        // SAFETY: per the caller.
        unsafe { self.pop(shared).or_else(|| self.refill(shared)) }
    }

    /// `take`'s slow path: the cache is empty. Looks at the depots' length hints, without
    /// locks, and locks only a depot that seems to hold something: this thread's own depot
    /// first (donations to it wait there), then the others'; primary lists before victim
    /// lists. Before it gives up, it locks its own depot whatever the hint said.
    ///
    /// # Safety
    ///
    /// As for `take`.
    #[cold]
    unsafe fn refill(&self, shared: &Shared<T>) -> Option<NodePtr<T>> {
        for from_victim in [false, true] {
            // SAFETY: the caller owns this `Local`.
            let mut found = unsafe { self.refill_from(self, from_victim, true) };
            let mut other = shared.first_local();
            while found == 0 && !other.is_null() {
                // SAFETY: `Local`s live as long as `shared`, which the caller borrows.
                let victim = unsafe { &*other };
                if !ptr::eq(victim, self) {
                    // SAFETY: the caller owns this `Local`.
                    found = unsafe { self.refill_from(victim, from_victim, true) };
                }
                other = victim.next;
            }
            if found > 0 {
                // SAFETY: as above.
                return unsafe { self.pop_refilled(shared) };
            }
        }
        // A hint may be stale: a donation to this thread's depot may have been stored while
        // we read 0 (Miri's weak-memory emulation returns such stale values). Better a lock
        // here than a factory call while a donated object waits.
        for from_victim in [false, true] {
            // SAFETY: the caller owns this `Local`.
            if unsafe { self.refill_from(self, from_victim, false) } > 0 {
                // SAFETY: as above.
                return unsafe { self.pop_refilled(shared) };
            }
        }
        None
    }

    /// Pops the node a refill just brought, and gives its budget slot back at once, with
    /// the cache's spare slots (one read-modify-write per refill): the slots a refilling
    /// thread keeps spare are ones that the threads putting objects back lack, and with a
    /// small `max_idle`, one a donation to this thread's depot would lack (with
    /// `max_idle(1)`, every retired version would be dropped).
    ///
    /// # Safety
    ///
    /// As for `take`.
    unsafe fn pop_refilled(&self, shared: &Shared<T>) -> Option<NodePtr<T>> {
        let len = self.cache_len();
        // SAFETY: the caller owns the cache; nothing here runs user code.
        let (node, spare) = unsafe {
            self.with_cache(|c| {
                let node = c.nodes.get(len.wrapping_sub(1)).copied()?;
                Some((node, std::mem::take(&mut c.spare)))
            })
        }?;
        self.set_cache_len(len - 1);
        shared.unreserve(spare + 1);
        Some(NodePtr(node))
    }

    /// Moves nodes from `victim`'s depot into this thread's cache, with their tokens:
    /// up to [`REFILL`] from its primary list, or one from its victim list. Returns how
    /// many. If `hinted`, a depot whose length hint reads 0 is passed over unlocked.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local` (not necessarily `victim`).
    unsafe fn refill_from(&self, victim: &Local<T>, from_victim: bool, hinted: bool) -> usize {
        if hinted && victim.depot.len_hint() == 0 {
            return 0;
        }
        let mut depot = victim.depot.lock();
        // From a victim list, one object, handed out at once, as Go's `Get` takes from the
        // victim generation: a batch would sit in this cache and be flushed back as fresh by
        // the next `trim`, escaping the decay.
        let (list, most) = if from_victim {
            (&mut depot.victim, 1)
        } else {
            (&mut depot.primary, REFILL)
        };
        let len = self.cache_len();
        let n = list.len().min(most).min(CACHE - len);
        if n == 0 {
            return 0;
        }
        let from = list.len() - n;
        // SAFETY: the caller owns this cache; moving nodes runs no user code. Exactly `n`
        // nodes are drained into exactly `n` free slots.
        unsafe {
            self.with_cache(|c| {
                for (slot, node) in c.nodes[len..len + n].iter_mut().zip(list.drain(from..)) {
                    *slot = node.0;
                }
            })
        };
        self.set_cache_len(len + n);
        n
    }

    /// The hit path of dropping a `Pooled`: caches `node` if the cache has room and a spare
    /// budget token, with plain loads and stores. Hands the node back otherwise, for
    /// [`put_slow`](Self::put_slow).
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, which belongs to the node's pool.
    #[inline]
    pub(crate) unsafe fn push(&self, node: NodePtr<T>) -> Result<(), NodePtr<T>> {
        let len = self.cache_len();
        // SAFETY: the caller owns the cache; nothing here runs user code.
        unsafe {
            self.with_cache(|c| {
                if c.spare == 0 {
                    return Err(node);
                }
                let Some(slot) = c.nodes.get_mut(len) else {
                    return Err(node);
                };
                *slot = node.0;
                c.spare -= 1;
                self.set_cache_len(len + 1);
                Ok(())
            })
        }
    }

    /// `push`'s slow path: spills half of a full cache to the depot, and reserves budget
    /// if no token is spare; returns the node if the idle bound is reached, for the caller
    /// to drop.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, which belongs to `shared`.
    #[cold]
    pub(crate) unsafe fn put_slow(
        &self,
        shared: &Shared<T>,
        node: NodePtr<T>,
    ) -> Option<NodePtr<T>> {
        let mut len = self.cache_len();
        // SAFETY: the caller owns the cache; nothing here runs user code.
        unsafe {
            self.with_cache(|c| {
                if len == CACHE {
                    // The oldest half goes (the newest is likeliest still in the CPU cache).
                    let mut depot = self.depot.lock();
                    depot
                        .primary
                        .extend(c.nodes[..BATCH].iter().map(|&n| NodePtr(n)));
                    c.nodes.copy_within(BATCH.., 0);
                    len -= BATCH;
                    self.set_cache_len(len);
                }
                if c.spare == 0 {
                    c.spare = shared.reserve(TOKENS);
                    if c.spare == 0 {
                        return Some(node);
                    }
                }
                c.nodes[len] = node.0;
                c.spare -= 1;
                self.set_cache_len(len + 1);
                None
            })
        }
    }

    /// Moves the whole cache to the depot and gives back spare tokens.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, which belongs to `shared`.
    pub(crate) unsafe fn flush(&self, shared: &Shared<T>) {
        let len = self.cache_len();
        // SAFETY: per the caller; no user code runs.
        unsafe {
            self.with_cache(|c| {
                let mut depot = self.depot.lock();
                depot
                    .primary
                    .extend(c.nodes[..len].iter().map(|&n| NodePtr(n)));
                self.set_cache_len(0);
                shared.unreserve(c.spare);
                c.spare = 0;
            })
        }
    }

    /// What a thread's exit does to its `Local`: moves its cache to the depot, where other
    /// threads steal it, gives back spare tokens, and gives the `Local` up for adoption.
    ///
    /// # Safety
    ///
    /// The calling thread owns this `Local`, which belongs to `shared`, and will not use it
    /// again.
    pub(crate) unsafe fn retire(&self, shared: &Shared<T>) {
        // SAFETY: per the caller.
        unsafe { self.flush(shared) };
        self.release_ownership();
    }

    /// Pushes a node, which brings its own budget token, into this `Local`'s depot: a
    /// donation from any thread.
    pub(crate) fn donate(&self, node: NodePtr<T>) {
        self.depot.lock().primary.push(node);
    }

    /// Pops one node from the depot for `trim`/`clear`: from the victim list if
    /// `victim_only`, else from either.
    pub(crate) fn pop_depot(&self, victim_only: bool) -> Option<NodePtr<T>> {
        let mut depot = self.depot.lock();
        match depot.victim.pop() {
            Some(node) => Some(node),
            None if !victim_only => depot.primary.pop(),
            None => None,
        }
    }

    /// Demotes the primary list to victim (which `trim` has emptied first, down to what
    /// `min_idle` keeps). Swaps the lists so that no allocation happens.
    pub(crate) fn age(&self) {
        let mut depot = self.depot.lock();
        let depot = &mut *depot;
        if depot.victim.is_empty() {
            std::mem::swap(&mut depot.primary, &mut depot.victim);
        } else {
            let kept = std::mem::take(&mut depot.victim);
            std::mem::swap(&mut depot.primary, &mut depot.victim);
            depot.primary = kept;
        }
    }

    /// Idle objects held here now (cache and depot), for statistics.
    pub(crate) fn idle(&self) -> usize {
        self.cache_len() + self.depot.len_hint()
    }

    /// Hits counted here.
    pub(crate) fn hits(&self) -> u64 {
        // Relaxed: a statistic.
        self.own.hits.load(Ordering::Relaxed)
    }

    /// Claims this `Local` for the calling thread if no live thread owns it.
    pub(crate) fn try_adopt(&self) -> bool {
        // Acquire: pairs with the Release in `release_ownership`, so the exiting thread's
        // last use of the cache happens-before ours.
        self.owned
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Gives up ownership, after a flush; another thread may then adopt this `Local`.
    pub(crate) fn release_ownership(&self) {
        // Release: see `try_adopt`.
        self.owned.store(false, Ordering::Release);
    }
}

impl<T> Drop for Local<T> {
    fn drop(&mut self) {
        // Only the pool's destructor drops a `Local`: no thread can reach it any more.
        let len = self.cache_len();
        let cache = self.own.cache.with_mut(|cache| {
            // SAFETY: `&mut self`: nothing else refers to the cache.
            unsafe { (*cache).nodes }
        });
        let depot = std::mem::replace(
            &mut *self.depot.lock(),
            Lists {
                primary: Vec::new(),
                victim: Vec::new(),
            },
        );
        let cached = cache[..len].iter().map(|&n| NodePtr(n));
        for node in cached.chain(depot.primary).chain(depot.victim) {
            // SAFETY: idle nodes owned by this `Local`, which is being dropped.
            unsafe { free_node(node) };
        }
    }
}

impl<T> fmt::Debug for Local<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Local")
            .field("idle", &self.idle())
            .field("hits", &self.hits())
            .finish_non_exhaustive()
    }
}

/// Runs when a thread exits, for one pool it used.
pub(crate) trait ExitHook {
    fn thread_exit(&self);
}

/// One row of a thread's registry: the thread's `Local` for the pool with id `id`.
struct Entry {
    id: u64,
    local: NonNull<()>,
    on_exit: Option<Box<dyn ExitHook>>,
}

/// A thread's registry; its destructor runs the exit hooks.
struct Registry {
    entries: RefCell<Vec<Entry>>,
}

impl Drop for Registry {
    fn drop(&mut self) {
        // From here on this thread must not use its `Local`s through the fast path: their
        // exit hooks hand them to other threads.
        #[cfg(not(loom))]
        LAST.with(|last| last.iter().for_each(|slot| slot.set(NONE)));
        for entry in self.entries.get_mut().drain(..) {
            if let Some(hook) = entry.on_exit {
                hook.thread_exit();
            }
        }
    }
}

#[cfg(not(loom))]
std::thread_local! {
    static REGISTRY: Registry = const { Registry { entries: RefCell::new(Vec::new()) } };
}

#[cfg(loom)]
loom::thread_local! {
    static REGISTRY: Registry = Registry { entries: RefCell::new(Vec::new()) };
}

// The (pool id, `Local`) pairs this thread looked up last: a `const`-initialised
// thread-local without a destructor, so reading it is a plain load, unlike `REGISTRY`,
// whose destructor makes every access check its state (and its `Drop` clears this).
//
// Two slots, so that a thread alternating between two pools (a buffer pool and a string
// pool, say) stays on the hit path: a pool goes into slot `id % 2` (ids are handed out in
// sequence, so two pools made one after the other never evict each other), and a lookup
// compares slot 0, then slot 1. Both sit at fixed addresses, so their loads run beside
// the load of the pool's id; indexing the slot by id instead put two dependent steps on
// the hit path, and a get + drop in `benches/pool.rs` went from ~9 to 13-15 ns.
#[cfg(not(loom))]
std::thread_local! {
    static LAST: [std::cell::Cell<(u64, NonNull<()>)>; 2] =
        const { [const { std::cell::Cell::new(NONE) }; 2] };
}

/// An empty `LAST` slot: `u64::MAX` is never a pool id.
#[cfg(not(loom))]
const NONE: (u64, NonNull<()>) = (u64::MAX, NonNull::dangling());

/// Remembers that pool `id`'s `Local` on this thread is `local`.
#[cfg(not(loom))]
fn remember(id: u64, local: NonNull<()>) {
    LAST.with(|last| last[(id % 2) as usize].set((id, local)));
}

/// The calling thread's `Local` for pool `id`, type-erased; `None` if it has none yet or
/// its thread-locals are being destroyed.
#[inline]
pub(crate) fn find(id: u64) -> Option<NonNull<()>> {
    find_fast(id).or_else(|| find_slow(id))
}

/// [`find`] if pool `id` is one of the last two the calling thread looked up: two
/// thread-local loads and compares. `None` means "ask [`find`]", not "no `Local`".
#[inline]
pub(crate) fn find_fast(id: u64) -> Option<NonNull<()>> {
    #[cfg(not(loom))]
    {
        LAST.with(|last| {
            let (a, at_a) = last[0].get();
            if a == id {
                return Some(at_a);
            }
            let (b, at_b) = last[1].get();
            (b == id).then_some(at_b)
        })
    }
    // Under loom, the registry itself: models then run the same hit paths as real threads.
    #[cfg(loom)]
    REGISTRY.with(|r| lookup(r, id))
}

#[cold]
fn find_slow(id: u64) -> Option<NonNull<()>> {
    #[cfg(not(loom))]
    {
        let found = REGISTRY.try_with(|r| lookup(r, id)).ok().flatten()?;
        remember(id, found);
        Some(found)
    }
    #[cfg(loom)]
    REGISTRY.with(|r| lookup(r, id))
}

fn lookup(registry: &Registry, id: u64) -> Option<NonNull<()>> {
    let entries = registry.entries.try_borrow().ok()?;
    entries.iter().find(|e| e.id == id).map(|e| e.local)
}

/// Removes the calling thread's registry entry for pool `id` and returns its `Local`: what
/// a thread's exit does, for loom models (see `Pool::loom_thread_exit`).
#[cfg(loom)]
pub(crate) fn unregister(id: u64) -> Option<NonNull<()>> {
    REGISTRY.with(|r| {
        let mut entries = r.entries.borrow_mut();
        let at = entries.iter().position(|e| e.id == id)?;
        Some(entries.swap_remove(at).local)
    })
}

/// Records the calling thread's `Local` for pool `id`; returns `false` if the thread's
/// thread-locals are being destroyed (the caller then must not keep the `Local`).
pub(crate) fn register(id: u64, local: NonNull<()>, on_exit: Option<Box<dyn ExitHook>>) -> bool {
    let entry = Entry { id, local, on_exit };
    let insert = move |r: &Registry| match r.entries.try_borrow_mut() {
        Ok(mut entries) => {
            entries.push(entry);
            true
        }
        Err(_) => false,
    };
    #[cfg(not(loom))]
    let done = REGISTRY.try_with(insert).unwrap_or(false);
    #[cfg(not(loom))]
    if done {
        remember(id, local);
    }
    #[cfg(loom)]
    let done = REGISTRY.with(insert);
    done
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::pool::Pool;

    /// The idle bound's invariant: the budget in use is exactly the tokens held by caches
    /// (one per cached object plus the spare ones) plus the objects in depots, and no cache
    /// holds more than `TOKENS` spare tokens.
    fn assert_budget_balances<T>(pool: &Pool<T>) {
        let shared = pool.shared();
        let mut held = 0;
        let mut local = shared.first_local();
        while !local.is_null() {
            // SAFETY: `Local`s live as long as the pool; this test's other threads have been
            // joined (exit hooks included), so no owner touches a cache while we read it.
            let l = unsafe { &*local };
            // SAFETY: as above.
            let spare = l.own.cache.with(|c| unsafe { (*c).spare });
            assert!(spare <= TOKENS, "a cache holds {spare} spare tokens");
            held += l.cache_len() + spare + l.depot.lock().len();
            local = l.next;
        }
        assert_eq!(shared.budget_in_use(), held, "budget out of balance");
        assert!(held <= pool.max_idle());
    }

    #[test]
    fn budget_balances_through_spills_refills_steals_and_trims() {
        let pool = Pool::builder(|| 0u32, |_: &mut u32| true)
            .max_idle(20)
            .build();
        // Bursts bigger than a cache: spills to the depot, refills, over-cap drops.
        for burst in [3, CACHE + 3, 30, 1] {
            let held: Vec<_> = (0..burst).map(|_| pool.get()).collect();
            drop(held);
            assert_budget_balances(&pool);
        }
        // Objects put on another thread, stolen by this one.
        std::thread::scope(|s| {
            // `join`, not just the end of the scope: only `join` waits for the thread's
            // thread-local destructors, where its exit hook flushes its cache.
            let putter = s.spawn(|| drop((0..12).map(|_| pool.get()).collect::<Vec<_>>()));
            putter.join().unwrap();
        });
        assert_budget_balances(&pool);
        let stolen: Vec<_> = (0..15).map(|_| pool.get()).collect();
        assert_budget_balances(&pool);
        drop(stolen);
        pool.trim();
        assert_budget_balances(&pool);
        pool.trim();
        pool.prefill(7);
        assert_budget_balances(&pool);
        pool.clear();
        assert_budget_balances(&pool);
    }
}
