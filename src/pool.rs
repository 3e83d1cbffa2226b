//! The object pool: a stand-in for Go's `sync.Pool`, with reference-counted nodes.
//!
//! # Design
//!
//! Every pooled object lives in a heap [`Node`] made once, when the factory builds the
//! object (or when [`Pool::adopt`] takes one in): the node holds the object, its
//! [`RefCount`], the thread that last published it, and, while it is a container's
//! version, a handle on its pool. Recycling moves the node, never the object, so a steady
//! state allocates nothing: no wrapper per version, no `Arc` per update.
//!
//! Idle nodes wait in per-thread caches and depots (see `local.rs`): a hit takes no lock
//! and makes no atomic read-modify-write; threads whose cache and depot are empty steal
//! from other threads' depots in batches before they call the factory. Stealing matters: in
//! the hot-swap pattern the last reader releases the old version on *its* thread while the
//! writer asks for a fresh one on *another*; free lists that other threads cannot take from
//! starve the writer (regex-automata's pool made ~1 factory call per update in that pattern,
//! see `NOTES.md`). A container version's last release goes straight to the depot of the
//! thread that published it (the writer), which is where that thread's next `get` looks.
//!
//! The reset function runs in [`Pool::get`], on the thread that asks for an object — in a
//! container, the writer — not when the last reference drops, which may be on a reader's
//! thread. Clearing a 100k-entry map costs about a millisecond; the reader that happens to
//! be last should not pay it. The price: an idle object keeps its old contents (and their
//! memory, which `clear` keeps anyway) until it is handed out again or dropped.
//!
//! # Type-stable nodes
//!
//! Once a node has been a container's version, readers may touch its reference count
//! through a stale pointer (see `container.rs`). So the memory of such a node is freed only
//! when the pool's shared state is dropped: when its object is discarded (reset said
//! `false`, the idle bound was full, `trim` or `clear`), the object is dropped but the empty
//! node is kept to house the factory's next object (the technique Linux calls
//! `SLAB_TYPESAFE_BY_RCU`). Nodes never published in a container are freed outright.

use std::fmt;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::local::{self, Local};
use crate::refcount::RefCount;
use crate::sync::{Arc, AtomicPtr, AtomicUsize, Mutex, Ordering, UnsafeCell};

/// How many idle objects a pool keeps by default; see [`PoolBuilder::max_idle`].
///
/// A safety net against a burst pinning memory forever, sized for small objects shared by
/// many threads (each thread's cache alone may hold 16). For objects of megabytes, set
/// [`max_idle`](PoolBuilder::max_idle) to the working set you expect — a container needs
/// its current version, the one being filled, and one per reader that holds a guard across
/// an update — and call [`Pool::trim`] from a timer.
pub const DEFAULT_MAX_IDLE: usize = 256;

type Factory<T> = dyn Fn() -> T + Send + Sync;
type Reset<T> = dyn Fn(&mut T) -> bool + Send + Sync;

/// One pooled object with its reference count.
pub(crate) struct Node<T> {
    /// For a container version: the container's reference plus one per guard; 0 once the
    /// last is gone. For a [`Pooled`]: 1 (plus, briefly, stale readers if `published`).
    /// Idle nodes hold 0 if `published`, else any value (nobody reads it).
    pub(crate) refs: RefCount,
    /// Set before the node is first published in a container, never cleared: from then on
    /// readers may touch `refs` through stale pointers. Written and read only by the node's
    /// exclusive owner.
    published: UnsafeCell<bool>,
    /// The `Local` of the thread that last published the node (null if it has not been
    /// published, or that thread had none): where a container version goes back to.
    /// Owner-written, like `published`.
    origin: UnsafeCell<*const Local<T>>,
    /// `Some` while the node is a container version with guards or a container on it: keeps
    /// the pool alive for guards that outlive it. Written by the publisher before its
    /// `Release` swap, taken by whoever drops the last reference, after its `Acquire` load of the count.
    home: UnsafeCell<Option<Arc<Shared<T>>>>,
    /// Initialised unless the node is empty (in `Shared::empty`).
    value: UnsafeCell<MaybeUninit<T>>,
}

/// A node pointer that may cross threads with the object it owns.
pub(crate) struct NodePtr<T>(pub(crate) NonNull<Node<T>>);

// SAFETY: a `NodePtr` on a free list or in flight is the only handle on its node, so
// sending it sends the `T` inside: `T: Send` is exactly what that needs.
unsafe impl<T: Send> Send for NodePtr<T> {}

/// State shared by every handle on one pool.
pub(crate) struct Shared<T> {
    /// Unique for the life of the process: keys the per-thread registries.
    id: u64,
    /// Makes the calling thread's `Local`: `register::<T>`, instantiated where `build`
    /// knows `T: Send + 'static`, so that paths without that bound (`Pooled`'s `Drop`)
    /// can register a thread too.
    register: fn(&Arc<Shared<T>>) -> Option<&Local<T>>,
    factory: Box<Factory<T>>,
    reset: Box<Reset<T>>,
    /// Head of the list of `Local`s (linked through `Local::next`), pushed at the front,
    /// never shortened before `Drop`.
    locals: AtomicPtr<Local<T>>,
    /// Published nodes whose object was dropped, kept so their memory stays type-stable.
    empty: Mutex<Vec<NodePtr<T>>>,
    /// Idle-object budget in use: objects in caches and depots, plus the caches' spare
    /// slots; at most `max_idle`.
    /// On cache lines of its own: the threads of a handoff write it once per batch, and
    /// every slow path reads the fields around it.
    budget: CachePadded<AtomicUsize>,
    max_idle: usize,
    min_idle: usize,
    // Counters of slow paths only (a miss runs the factory; the others drop an object),
    // so a shared atomic costs nothing that matters. Hits are counted per thread.
    created: AtomicUsize,
    misses: AtomicUsize,
    discarded: AtomicUsize,
    dropped_over_cap: AtomicUsize,
    trimmed: AtomicUsize,
}

// SAFETY: `Shared` owns `T`s (idle, in its `Local`s) and hands them from thread to thread,
// which `T: Send` allows; it never gives out `&T`, so `T: Sync` is not needed. The closures
// are `Send + Sync` by their type; `Local<T>` is `Send + Sync` for `T: Send`.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<T> {}

/// Why an object left the pool for good.
#[derive(Clone, Copy)]
enum Discard {
    /// `reset` returned `false` or panicked.
    Reset,
    /// The idle bound was reached.
    OverCap,
    /// `clear` or `trim`.
    Trim,
}

/// A pool of reusable objects: Go's `sync.Pool` plus a reset function, with reference
/// counting for [`Container`](crate::Container).
///
/// `Pool` is a handle: cloning it is one atomic increment and gives another handle on the
/// same objects. [`get`](Pool::get) hands out an exclusive [`Pooled`] guard; dropping the
/// guard puts the object back, to be reset when it is handed out again.
///
/// # Examples
///
/// ```
/// use poolswap::Pool;
///
/// let pool = Pool::new(|| Vec::<u8>::with_capacity(4096), |v| {
///     v.clear();
///     true // keep it; `false` would drop it
/// });
///
/// let mut buf = pool.get(); // made by the factory: the pool was empty
/// buf.extend_from_slice(b"hello");
/// drop(buf); // back to the pool, contents and all
///
/// let buf = pool.get(); // the same Vec, reset by the closure above
/// assert!(buf.is_empty());
/// assert!(buf.capacity() >= 4096);
/// assert_eq!(pool.stats().created, 1);
/// ```
///
/// # Costs
///
/// - [`get`](Pool::get) that finds an object in the calling thread's cache: a thread-local
///   lookup, the reset closure, and plain loads and stores: no lock, no atomic
///   read-modify-write. Otherwise one lock per depot that seems to hold objects (its own
///   first, then other threads'), moving up to 16 objects at once, and one atomic
///   read-modify-write on the idle budget; on a miss, the factory and one allocation (the
///   node), none if a discarded object left its node behind.
/// - Dropping a [`Pooled`]: the same, the other way. A full cache (16) spills 8 objects
///   to the thread's depot under one lock; once per 4 puts, one atomic read-modify-write
///   on the idle budget.
/// - The first use of a pool on a thread allocates that thread's cache and depot (once).
///
/// # Send and Sync
///
/// `Pool<T>` is `Send + Sync` when `T: Send`: objects move between the threads that put and
/// get them, and the pool never shares a `&T`.
pub struct Pool<T> {
    shared: Arc<Shared<T>>,
}

/// Configures a [`Pool`] before it is built; made by [`Pool::builder`].
///
/// # Examples
///
/// ```
/// use poolswap::Pool;
///
/// let pool = Pool::builder(String::new, |s: &mut String| { s.clear(); true })
///     .max_idle(4)
///     .build();
/// let held: Vec<_> = (0..10).map(|_| pool.get()).collect();
/// drop(held); // ten objects come back, four stay idle, six are dropped
/// assert_eq!(pool.stats().idle, 4);
/// assert_eq!(pool.stats().dropped_over_cap, 6);
/// ```
pub struct PoolBuilder<T> {
    factory: Box<Factory<T>>,
    reset: Box<Reset<T>>,
    max_idle: usize,
    min_idle: usize,
}

/// Counters of one pool; see [`Pool::stats`].
///
/// Counts are objects, cumulative since the pool was built, except `idle`, which is a
/// reading of the moment. Each field is exact when no other thread uses the pool. Under
/// traffic the per-thread counters are read one after another, not at one instant, so
/// `idle` may miss an object, or count one twice, while it moves between a thread's cache
/// and a depot; it never reads more than [`max_idle`](PoolBuilder::max_idle) (it is capped
/// by the idle budget in use, which is at every instant at least the idle count).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Objects the factory built, plus those taken in by [`Pool::adopt`].
    pub created: u64,
    /// Objects waiting in the pool now, per-thread caches included.
    pub idle: u64,
    /// [`Pool::get`] calls served with an idle object.
    pub hits: u64,
    /// [`Pool::get`] calls that found no idle object and ran the factory.
    pub misses: u64,
    /// Objects dropped because the reset function returned `false` (or panicked).
    pub discarded: u64,
    /// Objects dropped on their way back because the pool already held `max_idle`.
    pub dropped_over_cap: u64,
    /// Objects dropped by [`Pool::trim`] and [`Pool::clear`].
    pub trimmed: u64,
}

impl<T: Send + 'static> Pool<T> {
    /// Makes a pool that builds objects with `factory` and readies them for reuse with
    /// `reset`, keeping at most [`DEFAULT_MAX_IDLE`] idle objects.
    ///
    /// `reset` runs on each recycled object just before [`get`](Pool::get) hands it out
    /// again. If it returns `false`, the object is dropped and never handed out again (Go's
    /// `Reset` returning false), and `get` tries the next idle object or the factory.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::new(HashMap::<String, u32>::new, |m| {
    ///     m.clear();
    ///     m.capacity() < 1 << 20 // drop maps that grew too large
    /// });
    /// let mut m = pool.get();
    /// m.insert("a".into(), 1);
    /// ```
    pub fn new<F, R>(factory: F, reset: R) -> Pool<T>
    where
        F: Fn() -> T + Send + Sync + 'static,
        R: Fn(&mut T) -> bool + Send + Sync + 'static,
    {
        Pool::builder(factory, reset).build()
    }

    /// Starts configuring a pool; see [`PoolBuilder`].
    pub fn builder<F, R>(factory: F, reset: R) -> PoolBuilder<T>
    where
        F: Fn() -> T + Send + Sync + 'static,
        R: Fn(&mut T) -> bool + Send + Sync + 'static,
    {
        PoolBuilder {
            factory: Box::new(factory),
            reset: Box::new(reset),
            max_idle: DEFAULT_MAX_IDLE,
            min_idle: 0,
        }
    }
}

impl<T> Pool<T> {
    /// Reads the pool's counters. Walks every thread's share with plain atomic loads: it
    /// takes no lock and never blocks.
    pub fn stats(&self) -> PoolStats {
        let shared = &*self.shared;
        let mut stats = PoolStats::default();
        for local in shared.locals() {
            stats.idle += local.idle() as u64;
            stats.hits += local.hits();
        }
        // Relaxed: statistics, each read on its own.
        let read = |n: &AtomicUsize| n.load(Ordering::Relaxed) as u64;
        // Under traffic the sum above may count an object twice, as it moves between a
        // cache and a depot between two reads. The budget in use is at every instant at
        // least the number of idle objects, and at most `max_idle`: capping by it keeps the
        // reading within the bound. (Without traffic it holds the spare slots too, so the
        // cap changes nothing.)
        stats.idle = stats.idle.min(read(&shared.budget));
        stats.created = read(&shared.created);
        stats.misses = read(&shared.misses);
        stats.discarded = read(&shared.discarded);
        stats.dropped_over_cap = read(&shared.dropped_over_cap);
        stats.trimmed = read(&shared.trimmed);
        stats
    }

    /// The most idle objects this pool keeps.
    pub fn max_idle(&self) -> usize {
        self.shared.max_idle
    }

    /// The fewest idle objects [`trim`](Pool::trim) and [`clear`](Pool::clear) leave.
    pub fn min_idle(&self) -> usize {
        self.shared.min_idle
    }

    /// Whether two handles are on the same pool.
    pub fn ptr_eq(a: &Pool<T>, b: &Pool<T>) -> bool {
        Arc::ptr_eq(&a.shared, &b.shared)
    }

    pub(crate) fn shared(&self) -> &Arc<Shared<T>> {
        &self.shared
    }
}

impl<T> Pool<T> {
    /// Hands out an object: an idle one, reset, or else a new one from the factory.
    ///
    /// Looks in the calling thread's cache, then its depot, then steals from other threads'
    /// depots. Idle objects whose reset returns `false` are dropped on the way.
    ///
    /// # Panics
    ///
    /// If the factory or the reset function panics, the panic reaches the caller; the
    /// object being reset is dropped, and the pool stays usable.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::new(|| 0u64, |n| { *n = 0; true });
    /// let mut n = pool.get();
    /// *n += 1;
    /// assert_eq!(*n, 1);
    /// ```
    #[inline]
    pub fn get(&self) -> Pooled<'_, T> {
        let shared = &*self.shared;
        if let Some(local) = shared.local_fast() {
            // SAFETY: `local_fast` returns the calling thread's own `Local`, of this pool.
            if let Some(node) = unsafe { local.pop(shared) } {
                if shared.reset(&node) {
                    local.count_hit();
                    return Pooled::check_out(node, self);
                }
            }
        }
        self.get_slow()
    }

    /// `get` past the calling thread's cache: its depot, other threads' depots, and at
    /// last the factory; also a thread's first `get`, which registers it.
    #[cold]
    #[inline(never)]
    fn get_slow(&self) -> Pooled<'_, T> {
        let shared = &*self.shared;
        let local = Shared::local(&self.shared);
        if let Some(local) = local {
            // SAFETY: `Shared::local` returns the calling thread's own `Local`.
            while let Some(node) = unsafe { local.take(shared) } {
                if shared.reset(&node) {
                    local.count_hit();
                    return Pooled::check_out(node, self);
                }
            }
        }
        // Relaxed: statistics.
        shared.misses.fetch_add(1, Ordering::Relaxed);
        let value = (shared.factory)();
        self.adopt(value)
    }

    /// Takes an object built elsewhere into the pool, as Go's `NewContainer(pool, obj)` does.
    ///
    /// The object will be reset and reused like any other. Costs one allocation (its node)
    /// unless a discarded object left an empty node behind.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(Vec::<u32>::new, |v| { v.clear(); true });
    /// let c = Container::new(pool.clone(), pool.adopt(vec![1, 2, 3]));
    /// assert_eq!(c.acquire().unwrap().len(), 3);
    /// ```
    pub fn adopt(&self, value: T) -> Pooled<'_, T> {
        // Relaxed: a statistic.
        self.shared.created.fetch_add(1, Ordering::Relaxed);
        let node = self.shared.house(value);
        Pooled::check_out(node, self)
    }

    /// Go's two-generation victim decay, driven by the caller instead of a garbage
    /// collector: drops the objects that were idle at the previous `trim` and are still
    /// idle (down to [`min_idle`](PoolBuilder::min_idle) in all), and marks the rest as
    /// the next victims.
    ///
    /// An object is thus freed by the second `trim` after it was last put back, unless a
    /// `get` took it in between; `get` takes fresh objects before victims, so a steady
    /// user keeps its working set and a `trim` causes no burst of factory calls. Call it
    /// from a timer (every few seconds, say) to let a pool shrink after a burst.
    ///
    /// Objects in the caches of *other* live threads (at most 16 per thread) are not
    /// reached: they are in use by those threads' next operations, and move to their depots,
    /// where `trim` reaches them, when the cache overflows or the thread exits. The calling
    /// thread's cache is moved to its depot first. Runs the objects' destructors on the
    /// calling thread; takes each depot's lock once per object moved.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| vec![0u8; 1024], |v: &mut Vec<u8>| { v.fill(0); true })
    ///     .max_idle(1000)
    ///     .build();
    /// let burst: Vec<_> = (0..100).map(|_| pool.get()).collect();
    /// drop(burst);
    /// assert_eq!(pool.stats().idle, 100);
    /// pool.trim(); // marks them
    /// pool.trim(); // frees them: idle across two trims
    /// assert_eq!(pool.stats().idle, 0);
    /// ```
    pub fn trim(&self) {
        self.shed(true);
    }

    /// Drops idle objects until at most [`min_idle`](PoolBuilder::min_idle) remain, the
    /// calling thread's cache included (other threads' caches: see [`trim`](Pool::trim)).
    ///
    /// Runs the objects' destructors on the calling thread.
    pub fn clear(&self) {
        self.shed(false);
    }

    /// `trim` (`victims_only`) and `clear`: moves the calling thread's cache to its depot,
    /// drops idle objects from every depot while more than `min_idle` are idle (only victims
    /// for `trim`), and for `trim` demotes what is left to victims.
    fn shed(&self, victims_only: bool) {
        let shared = &*self.shared;
        if let Some(local) = Shared::local(&self.shared) {
            // SAFETY: the calling thread's own `Local`.
            unsafe { local.flush(shared) };
        }
        for local in shared.locals() {
            // Counted once per thread's share, not once per object: a walk of every
            // `Local`. Each object dropped lowers it by one.
            let excess = shared.idle_now().saturating_sub(shared.min_idle);
            for _ in 0..excess {
                let Some(node) = local.pop_depot(victims_only) else {
                    break;
                };
                shared.unreserve(1);
                shared.discard(node, Discard::Trim);
            }
            if victims_only {
                local.age();
            }
        }
    }

    /// Builds objects with the factory until `n` are idle in the pool (or the idle bound is
    /// reached), so that the first `get`s, on any thread, find them.
    ///
    /// # Panics
    ///
    /// If the factory panics; the pool stays usable.
    pub fn prefill(&self, n: usize) {
        let shared = &*self.shared;
        let Some(local) = Shared::local(&self.shared) else {
            return;
        };
        // Budget slots held spare in this thread's cache would stop the loop short.
        // SAFETY: the calling thread's own `Local`.
        unsafe { local.flush(shared) };
        let missing = n.min(shared.max_idle).saturating_sub(shared.idle_now());
        for _ in 0..missing {
            // One slot at a time: a factory that panics leaves no slot reserved.
            if shared.reserve(1) == 0 {
                return;
            }
            // Relaxed: a statistic.
            shared.created.fetch_add(1, Ordering::Relaxed);
            let value = (shared.factory)();
            // The token reserved above goes with the object into the depot.
            local.donate(shared.house(value));
        }
    }
}

impl<T> Clone for Pool<T> {
    fn clone(&self) -> Self {
        Pool {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never blocks: `stats` reads atomics only.
        let stats = self.stats();
        f.debug_struct("Pool")
            .field("idle", &stats.idle)
            .field("max_idle", &self.shared.max_idle)
            .field("created", &stats.created)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> PoolBuilder<T> {
    /// The most idle objects the pool keeps, per-thread caches included (default
    /// [`DEFAULT_MAX_IDLE`]). An object that comes back to a full pool is dropped, on the
    /// thread that gave it back. A bound of 0 makes a pool that never keeps anything.
    ///
    /// The bound is enforced through a shared budget handed to threads 4 slots at a time, so
    /// that the hit path need not touch a shared counter. It is never exceeded, but each
    /// thread that uses the pool may hold up to 4 slots it is not using, so the pool may drop
    /// a returned object while up to 4 per thread fewer than `max_idle` are idle. With many
    /// threads and a tight bound, leave room for that.
    pub fn max_idle(mut self, n: usize) -> Self {
        self.max_idle = n;
        self
    }

    /// How many idle objects [`Pool::trim`] and [`Pool::clear`] leave in place (default 0;
    /// at most `max_idle`).
    pub fn min_idle(mut self, n: usize) -> Self {
        self.min_idle = n;
        self
    }

    /// Builds the pool. It starts empty; see [`Pool::prefill`].
    pub fn build(self) -> Pool<T> {
        Pool {
            shared: Arc::new(Shared {
                id: crate::sync::next_pool_id(),
                register: register::<T>,
                factory: self.factory,
                reset: self.reset,
                locals: AtomicPtr::new(ptr::null_mut()),
                empty: Mutex::new(Vec::new()),
                budget: CachePadded::new(AtomicUsize::new(0)),
                max_idle: self.max_idle,
                min_idle: self.min_idle.min(self.max_idle),
                created: AtomicUsize::new(0),
                misses: AtomicUsize::new(0),
                discarded: AtomicUsize::new(0),
                dropped_over_cap: AtomicUsize::new(0),
                trimmed: AtomicUsize::new(0),
            }),
        }
    }
}

impl<T> fmt::Debug for PoolBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBuilder")
            .field("max_idle", &self.max_idle)
            .field("min_idle", &self.min_idle)
            .finish_non_exhaustive()
    }
}

/// Iterates over a pool's `Local`s.
struct Locals<'a, T> {
    next: *const Local<T>,
    _pool: std::marker::PhantomData<&'a Shared<T>>,
}

impl<'a, T> Iterator for Locals<'a, T> {
    type Item = &'a Local<T>;
    fn next(&mut self) -> Option<&'a Local<T>> {
        // SAFETY: `Local`s are freed only by `Shared::drop`; the iterator borrows `Shared`.
        let local = unsafe { self.next.as_ref()? };
        self.next = local.next;
        Some(local)
    }
}

impl<T> Shared<T> {
    /// The first `Local` of the list (null if none).
    pub(crate) fn first_local(&self) -> *const Local<T> {
        // Acquire: pairs with the Release push in `register`, so the `Local` (its `next`
        // field included) is fully built when we read it.
        self.locals.load(Ordering::Acquire)
    }

    fn locals(&self) -> Locals<'_, T> {
        Locals {
            next: self.first_local(),
            _pool: std::marker::PhantomData,
        }
    }

    /// Idle objects now, summed over every thread.
    fn idle_now(&self) -> usize {
        self.locals().map(Local::idle).sum()
    }

    /// Takes up to `n` slots of the idle budget; returns how many it got.
    pub(crate) fn reserve(&self, n: usize) -> usize {
        // Relaxed: a budget, not a synchronization point; nodes travel under locks.
        let mut used = self.budget.load(Ordering::Relaxed);
        loop {
            let grant = n.min(self.max_idle.saturating_sub(used));
            if grant == 0 {
                return 0;
            }
            // Relaxed both ways: only the count matters; the CAS makes it exact.
            match self.budget.compare_exchange_weak(
                used,
                used + grant,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return grant,
                Err(now) => used = now,
            }
        }
    }

    /// The idle budget in use, for tests.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn budget_in_use(&self) -> usize {
        self.budget.load(Ordering::Relaxed)
    }

    /// Gives back `n` slots of the idle budget.
    pub(crate) fn unreserve(&self, n: usize) {
        if n > 0 {
            // Relaxed: as in `reserve`.
            self.budget.fetch_sub(n, Ordering::Relaxed);
        }
    }

    /// Runs the reset function on an idle node; on `false` or a panic drops the object.
    #[inline]
    fn reset(&self, node: &NodePtr<T>) -> bool {
        /// Drops the object if `reset` unwinds, so nothing leaks and the pool stays usable.
        struct OnUnwind<'a, T> {
            shared: &'a Shared<T>,
            node: Option<NonNull<Node<T>>>,
        }
        impl<T> Drop for OnUnwind<'_, T> {
            fn drop(&mut self) {
                if let Some(node) = self.node.take() {
                    self.shared.discard(NodePtr(node), Discard::Reset);
                }
            }
        }

        let mut guard = OnUnwind {
            shared: self,
            node: Some(node.0),
        };
        // SAFETY: the node came off a free list, so this thread owns it and its object is
        // initialised. Stale readers touch only `refs`, and only to fail.
        let keep = unsafe { node.0.as_ref() }.value.with_mut(|value| {
            // SAFETY: as above.
            (self.reset)(unsafe { (*value).assume_init_mut() })
        });
        guard.node = None;
        if !keep {
            self.discard(NodePtr(node.0), Discard::Reset);
        }
        keep
    }

    /// Puts `value` in a node: an empty one if there is one, else a new allocation.
    fn house(&self, value: T) -> NodePtr<T> {
        if let Some(node) = self.empty.lock().pop() {
            // SAFETY: an empty node sits only in `empty`, which we just popped it from: this
            // thread owns it, and its value slot is uninitialised.
            unsafe { node.0.as_ref() }.value.with_mut(|slot| {
                // SAFETY: as above.
                unsafe { (*slot).write(value) };
            });
            return node;
        }
        let node = Box::new(Node {
            refs: RefCount::new(),
            published: UnsafeCell::new(false),
            origin: UnsafeCell::new(ptr::null()),
            home: UnsafeCell::new(None),
            value: UnsafeCell::new(MaybeUninit::new(value)),
        });
        NodePtr(NonNull::from(Box::leak(node)))
    }

    /// Drops the object in `node`; frees the node too unless it was ever published, in
    /// which case it is kept empty for reuse (type-stable memory).
    fn discard(&self, node: NodePtr<T>, why: Discard) {
        let counter = match why {
            Discard::Reset => &self.discarded,
            Discard::OverCap => &self.dropped_over_cap,
            Discard::Trim => &self.trimmed,
        };
        counter.fetch_add(1, Ordering::Relaxed); // Relaxed: a statistic.

        // SAFETY: the caller owns the node exclusively.
        let published = unsafe { node.0.as_ref() }.published.with(|p| unsafe { *p });
        if !published {
            // SAFETY: owned, initialised, never reachable by a stale reader.
            unsafe { free_node(node) };
            return;
        }
        /// Files the node as empty even if the object's destructor panics.
        struct Keep<'a, T>(&'a Shared<T>, NonNull<Node<T>>);
        impl<T> Drop for Keep<'_, T> {
            fn drop(&mut self) {
                self.0.empty.lock().push(NodePtr(self.1));
            }
        }
        let keep = Keep(self, node.0);
        // SAFETY: the caller owns the node (count 0, on no list) and its object is
        // initialised; after this it is not, and the node goes to `empty`.
        unsafe { keep.1.as_ref() }.value.with_mut(|value| {
            // SAFETY: as above.
            unsafe { (*value).assume_init_drop() };
        });
    }

    /// The calling thread's `Local` for this pool, made on first use; `None` while the
    /// thread's thread-locals are being destroyed.
    ///
    /// Takes the `Arc` (not `&Shared`) because registering a thread keeps a `Weak` on it.
    /// The calling thread's `Local` for this pool if it is the one it used last: one
    /// thread-local load and compare. `None` sends the caller to its slow path.
    #[inline]
    fn local_fast(&self) -> Option<&Local<T>> {
        // SAFETY: the registry maps this pool's id to a `Local<T>` of this pool, which
        // lives as long as `self`; ids are never reused.
        local::find_fast(self.id).map(|found| unsafe { found.cast::<Local<T>>().as_ref() })
    }

    #[inline]
    pub(crate) fn local(this: &Arc<Shared<T>>) -> Option<&Local<T>> {
        match local::find(this.id) {
            // SAFETY: the registry maps this pool's id to a `Local<T>` of this pool, which
            // lives as long as `this`; ids are never reused.
            Some(found) => Some(unsafe { found.cast::<Local<T>>().as_ref() }),
            None => (this.register)(this),
        }
    }

    /// Returns a published node whose last reference was just dropped to the depot of the
    /// thread that published it (or drops its object if the pool is full).
    fn donate(&self, node: NodePtr<T>) {
        if self.reserve(1) == 0 {
            self.discard(node, Discard::OverCap);
            return;
        }
        // SAFETY: the caller owns the node; `origin` is owner-written.
        let origin = unsafe { node.0.as_ref() }.origin.with(|o| unsafe { *o });
        // SAFETY: a `Local` lives as long as its pool, which `&self` is.
        match unsafe { origin.as_ref() }.or_else(|| {
            // SAFETY: as above.
            unsafe { self.first_local().as_ref() }
        }) {
            // The reserved token goes with the node into the depot.
            Some(local) => local.donate(node),
            None => {
                self.unreserve(1);
                self.discard(node, Discard::OverCap);
            }
        }
    }

    /// Returns an idle node on the calling thread (to its cache if it has one).
    #[inline]
    fn put(this: &Arc<Shared<T>>, node: NodePtr<T>) {
        let node = match this.local_fast() {
            // SAFETY: the calling thread's own `Local`, of this pool.
            Some(local) => match unsafe { local.push(node) } {
                Ok(()) => return,
                Err(node) => node,
            },
            None => node,
        };
        Shared::put_slow(this, node);
    }

    /// `put` when the cache is full or has no spare budget token, or the thread has no
    /// `Local` at hand.
    #[cold]
    #[inline(never)]
    fn put_slow(this: &Arc<Shared<T>>, node: NodePtr<T>) {
        match Shared::local(this) {
            Some(local) => {
                // SAFETY: the calling thread's own `Local`, of this pool.
                if let Some(node) = unsafe { local.put_slow(this, node) } {
                    this.discard(node, Discard::OverCap);
                }
            }
            None => this.donate(node),
        }
    }
}

/// Makes (or adopts) the calling thread's `Local` for `shared` and records it in the
/// thread's registry; `None` while the thread's thread-locals are being destroyed.
#[cold]
fn register<T: Send + 'static>(shared: &Arc<Shared<T>>) -> Option<&Local<T>> {
    // Adopt the `Local` of an exited thread, else make one.
    let adopted = shared.locals().find(|l| l.try_adopt());
    let local: &Local<T> = match adopted {
        Some(local) => local,
        None => {
            let mut head = shared.first_local();
            let local = Box::leak(Box::new(Local::new(shared.max_idle, head)));
            loop {
                // Release: publishes the `Local` to `first_local`'s Acquire. Acquire on
                // failure: we re-link to the new head and try again.
                match shared.locals.compare_exchange_weak(
                    head as *mut _,
                    local,
                    Ordering::Release,
                    Ordering::Acquire,
                ) {
                    Ok(_) => break,
                    Err(now) => {
                        head = now;
                        local.next = head;
                    }
                }
            }
            local
        }
    };
    let hook = exit_hook(shared, local);
    if local::register(shared.id, NonNull::from(local).cast(), hook) {
        Some(local)
    } else {
        // The thread is exiting: leave the `Local` for another thread to adopt.
        local.release_ownership();
        None
    }
}

/// The hook that flushes a thread's cache when it exits (not under loom: loom's `Arc` has
/// no `Weak`; models run the same work through `Pool::loom_thread_exit`).
#[cfg(not(loom))]
fn exit_hook<T: Send + 'static>(
    shared: &Arc<Shared<T>>,
    local: &Local<T>,
) -> Option<Box<dyn local::ExitHook>> {
    struct Hook<T> {
        shared: std::sync::Weak<Shared<T>>,
        local: NonNull<Local<T>>,
    }
    impl<T: Send> local::ExitHook for Hook<T> {
        fn thread_exit(&self) {
            if let Some(shared) = self.shared.upgrade() {
                // SAFETY: the pool is alive, so is its `Local`, and this exiting thread owns
                // it; its registry entry is gone, so it will not use it again.
                unsafe { self.local.as_ref().retire(&shared) };
            }
        }
    }
    Some(Box::new(Hook {
        shared: Arc::downgrade(shared),
        local: NonNull::from(local),
    }))
}

/// Under loom the exit hook above cannot be built (loom's `Arc` has no `Weak`); models
/// call this instead, at the end of a thread, to run what the hook runs.
#[cfg(loom)]
impl<T> Pool<T> {
    #[doc(hidden)]
    pub fn loom_thread_exit(&self) {
        if let Some(found) = local::unregister(self.shared.id) {
            // SAFETY: the registry mapped this pool's id to this thread's `Local<T>`, alive
            // as long as the pool; the entry is gone, so this thread will not use it again.
            unsafe { found.cast::<Local<T>>().as_ref().retire(&self.shared) };
        }
    }
}

#[cfg(loom)]
fn exit_hook<T>(_: &Arc<Shared<T>>, _: &Local<T>) -> Option<Box<dyn local::ExitHook>> {
    None
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // Every handle is gone, so no node is checked out and no reader holds a pointer: each
        // node is in a `Local` or empty, and no thread can reach a `Local`.
        let mut next = self.first_local();
        while !next.is_null() {
            // SAFETY: made by `Box::leak` in `register`, freed only here, once.
            let local = unsafe { Box::from_raw(next.cast_mut()) };
            next = local.next;
            drop(local); // frees its idle nodes
        }
        for node in self.empty.lock().drain(..) {
            // SAFETY: as above; the object slot is uninitialised and `MaybeUninit` drops
            // nothing.
            drop(unsafe { Box::from_raw(node.0.as_ptr()) });
        }
    }
}

/// Drops an idle node's object and frees the node.
///
/// # Safety
///
/// The caller owns `node` exclusively, its object is initialised, and no stale reader can
/// reach it (it was never published, or its pool is being dropped).
pub(crate) unsafe fn free_node<T>(node: NodePtr<T>) {
    // SAFETY: made by `Box::leak` in `house`; owned per the caller.
    let node = unsafe { Box::from_raw(node.0.as_ptr()) };
    node.value.with_mut(|value| {
        // SAFETY: initialised, per the caller; dropped once.
        unsafe { (*value).assume_init_drop() };
    });
}

/// Drops one reference on a published node and, if it was the last, returns the node to
/// the depot of the thread that published it.
///
/// `via` is the pool to return it to when the caller knows it (a container reader that took
/// a reference on a node that had been recycled: the node may then have no `home`).
///
/// # Safety
///
/// `node` must be a node whose count includes a reference owned by the caller, which this
/// call consumes, and if `via` is `None`, the node must be a container version (with
/// `home` set); if `Some`, it must be the node's pool.
pub(crate) unsafe fn release<T>(node: NonNull<Node<T>>, via: Option<&Shared<T>>) {
    // SAFETY: the caller's reference keeps the node's memory live.
    if !unsafe { node.as_ref() }.refs.decrement() {
        return;
    }
    // Count 0, read with Acquire: this thread owns the node and sees every write
    // made through other references. Take the pool handle out before the node is visible
    // in a depot, where another thread could check it out and overwrite `home`.
    // SAFETY: exclusive ownership (above).
    let home = unsafe { node.as_ref() }.home.with_mut(|home| {
        // SAFETY: as above.
        unsafe { (*home).take() }
    });
    let shared = via
        .or(home.as_deref())
        .expect("a container version holds its pool");
    shared.donate(NodePtr(node));
    // If this was the last handle on the pool, this drop frees every node, this one too.
    drop(home);
}

/// An exclusive guard on one pooled object: Go's `pool.Get()` result, with its `Release`
/// done by `Drop`.
///
/// Dereferences to `T` mutably. Dropping it returns the object to its pool, on the dropping
/// thread (to be reset when next handed out); [`Container::update`](crate::Container::update)
/// publishes it as a container's new version instead. It borrows the [`Pool`] it came from,
/// like the guards of other Rust pools: that is what lets `get` and drop run without any
/// atomic read-modify-write. (A container's [`Guard`](crate::Guard)s do not borrow.)
///
/// # Send and Sync
///
/// `Send` when `T: Send` and `Sync` when `T: Sync`, like `&mut T`.
///
/// # Examples
///
/// ```
/// use poolswap::Pool;
///
/// let pool = Pool::new(String::new, |s| { s.clear(); true });
/// let mut s = pool.get();
/// s.push_str("pooled");
/// std::thread::scope(|scope| {
///     scope.spawn(move || assert_eq!(&*s, "pooled")); // dropped on the other thread
/// });
/// assert_eq!(pool.stats().idle, 1);
/// ```
pub struct Pooled<'a, T> {
    node: NonNull<Node<T>>,
    pool: &'a Pool<T>,
}

// SAFETY: a `Pooled` owns its object as a `Box` does; moving it moves a `T` (and, on drop,
// hands the `T` to the pool, which `T: Send` also covers; `&Pool<T>` is `Send` for
// `T: Send`).
unsafe impl<T: Send> Send for Pooled<'_, T> {}
// SAFETY: `&Pooled<T>` gives only `&T` and `&Pool<T>` (which is `Sync` for `T: Send`).
unsafe impl<T: Sync + Send> Sync for Pooled<'_, T> {}

impl<'a, T> Pooled<'a, T> {
    /// Marks an owned node checked out, and wraps it.
    #[inline]
    fn check_out(node: NodePtr<T>, pool: &'a Pool<T>) -> Self {
        // SAFETY: the caller owns the node (it came off a free list or was just made).
        let n = unsafe { node.0.as_ref() };
        // Release: a stale reader that reads this 1 sees the retirement of the node's
        // previous version (see `RefCount::reset_to_one`).
        n.refs.reset_to_one();
        Pooled { node: node.0, pool }
    }

    /// Gives up the guard, marking the node published, and returns its reference.
    pub(crate) fn publish(this: Pooled<'a, T>, home: Arc<Shared<T>>) -> NonNull<Node<T>> {
        let this = ManuallyDrop::new(this);
        // SAFETY: the guard owns the node exclusively (stale readers touch only `refs`);
        // these writes happen before the caller's Release swap publishes the node.
        let n = unsafe { this.node.as_ref() };
        n.published.with_mut(|p| {
            // SAFETY: as above.
            unsafe { *p = true };
        });
        // The publishing thread (the writer) is where the version goes back to, whose next
        // `get` looks in its own depot first.
        let origin = Shared::local(&home).map_or(ptr::null(), ptr::from_ref);
        n.origin.with_mut(|o| {
            // SAFETY: as above: owner-written.
            unsafe { *o = origin };
        });
        n.home.with_mut(|h| {
            // SAFETY: as above; `home` is `None` while a node is held by a `Pooled`.
            unsafe { *h = Some(home) };
        });
        this.node
    }

    /// The pool this object came from.
    pub fn pool(this: &Pooled<'a, T>) -> &'a Pool<T> {
        this.pool
    }

    /// The object's reference count: 1, unless a container reader is in the middle of
    /// finding out that this object is not the container's current version.
    pub fn ref_count(this: &Pooled<'_, T>) -> usize {
        // SAFETY: this guard's reference keeps the node live.
        unsafe { this.node.as_ref() }.refs.load()
    }
}

impl<T> Deref for Pooled<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard owns the node for as long as `&self` lives.
        unsafe { value(self.node) }
    }
}

impl<T> DerefMut for Pooled<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: checked out, so the object is initialised; this guard is exclusive (other
        // parties touch only `refs`), and `&mut self` makes the access unique.
        unsafe { self.node.as_ref() }.value.with_mut(|value| {
            // SAFETY: as above.
            unsafe { (*value).assume_init_mut() }
        })
    }
}

impl<T> Drop for Pooled<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the guard owns the node; `published` is owner-written.
        let published = unsafe { self.node.as_ref() }
            .published
            .with(|p| unsafe { *p });
        // A node that was never a container version has no stale readers: no atomic needed.
        // One that was may have one holding a brief reference; the last of them recycles.
        // SAFETY: the guard owns a reference.
        if published && !unsafe { self.node.as_ref() }.refs.decrement() {
            return;
        }
        Shared::put(&self.pool.shared, NodePtr(self.node));
    }
}

impl<T: fmt::Debug> fmt::Debug for Pooled<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pooled").field(&**self).finish()
    }
}

/// Reads the object of a checked-out node.
///
/// # Safety
///
/// The caller holds a reference on `node` for at least `'a`.
pub(crate) unsafe fn value<'a, T>(node: NonNull<Node<T>>) -> &'a T {
    // SAFETY: per the caller, the node is checked out, so its object is initialised, and no
    // one mutates it while shared references exist (`Pooled` is exclusive; versions in a
    // container are only read).
    unsafe { node.as_ref() }.value.with(|value| {
        // SAFETY: as above.
        unsafe { (*value).assume_init_ref() }
    })
}

/// The count of a node whose memory is live (type-stable while its pool lives).
///
/// # Safety
///
/// `node` points to a node of a pool that outlives `'a`.
pub(crate) unsafe fn refs<'a, T>(node: *const Node<T>) -> &'a RefCount {
    // SAFETY: per the caller; only the `refs` field is borrowed, never the object.
    unsafe { &*ptr::addr_of!((*node).refs) }
}

#[cfg(all(test, not(loom), target_arch = "x86_64"))]
mod tests {
    use super::Node;
    use std::mem::size_of;

    /// The node size the crate docs and README state: a 128-byte padded count, 24 bytes of
    /// bookkeeping (`published`, `origin`, `home`), the object, rounded up to 128.
    #[test]
    fn node_size_is_what_the_docs_say() {
        let stated = |object: usize| (128 + 24 + object).div_ceil(128) * 128;
        assert_eq!(size_of::<Node<u64>>(), stated(8));
        assert_eq!(size_of::<Node<[u8; 100]>>(), stated(100));
        assert_eq!(
            size_of::<Node<std::collections::HashMap<u64, u64>>>(),
            256,
            "the docs say 256 for a HashMap"
        );
    }
}
