//! The object pool: a stand-in for Go's `sync.Pool`, with reference-counted nodes.
//!
//! This file is the public front (`Pool`, `PoolBuilder`, `PoolStats`, `Pooled`,
//! `ResetOutcome`); the machinery lives in private children, each importing only the ones
//! below it:
//!
//! | module | what | knows of `T` |
//! |---|---|---|
//! | `shared` | the state all handles share; reset, discard, put, return of retired versions, the live bound, close | yes |
//! | `node` | the type-stable node and its lifecycle | yes |
//! | `local` | a thread's magazine and depot handle, the list of them | no: generic over the node |
//! | `depot` | the lock-backed lists other threads take from | no |
//! | `budget` | the idle bound's shared budget | no |
//!
//! Idle nodes wait in per-thread magazines and depots: a hit takes no lock and makes no
//! atomic read-modify-write; threads whose magazine and depot are empty steal from other
//! threads' depots in batches before they call the factory. Stealing matters: in the
//! hot-swap pattern the last reader releases the old version on *its* thread while the
//! writer asks for a fresh one on *another*; free lists that other threads cannot take from
//! starve the writer. A container version's last release goes straight to the depot of the
//! thread that published it (the writer), which is where that thread's next `get` looks.
//!
//! With a live bound ([`PoolBuilder::max_live`]) the magazines stay empty: a returned object
//! goes to a depot, where a `get` waiting at the bound on another thread can take it (see
//! `shared.rs`, "The live bound"). Without one, nothing of it is on the paths above.
//!
//! The reset function runs in [`Pool::get`], on the thread that asks for an object (in a
//! container, the writer), not when the last reference drops, which may be on a reader's
//! thread: clearing a large map can take a millisecond, and the reader that happens to be
//! last should not pay it. The price: an idle object keeps its old contents (and their
//! memory, which `clear` keeps anyway) until it is handed out again or dropped.

use std::borrow::{Borrow, BorrowMut};
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::ptr::{self, NonNull};

mod budget;
mod depot;
mod local;
mod node;
pub(crate) mod shared;

pub use self::budget::SLOT_BATCH;
use self::depot::NodePtr;
pub use self::local::MAGAZINE_SIZE;
use self::node::Node;
use self::shared::{Discard, Factory, PoolLocal, PoolNode, Reset, Shared};
use crate::sync::{Arc, AtomicU64, Ordering};

/// How many idle objects a pool keeps by default; see [`PoolBuilder::max_idle`].
///
/// A safety net against a burst pinning memory forever, sized for small objects shared by
/// many threads (each thread's magazine alone may hold [`MAGAZINE_SIZE`]). For objects of
/// megabytes, set [`max_idle`](PoolBuilder::max_idle) to the working set you expect — a
/// container needs its current version, the one being filled, and one per reader that
/// holds a guard across an update — and call [`Pool::trim`] from a timer.
pub const DEFAULT_MAX_IDLE: usize = 256;

/// A pool of reusable objects: Go's `sync.Pool` plus a reset function, with reference
/// counting for [`Container`](crate::Container).
///
/// `Pool` is a handle: cloning it (two atomic increments) gives another handle on the
/// same objects. [`get`](Pool::get) hands out an exclusive [`Pooled`] guard; dropping the
/// guard puts the object back, to be reset when it is handed out again.
///
/// # Examples
///
/// ```
/// use poolswap::Pool;
///
/// // The reset may return `()` (keep every object) or a `bool` (see `Pool::new`).
/// let pool = Pool::new(|| Vec::<u8>::with_capacity(4096), Vec::clear);
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
/// - [`get`](Pool::get) that finds an object in the calling thread's magazine: a
///   thread-local lookup, the reset closure, and plain loads and stores: no lock, no atomic
///   read-modify-write. Otherwise one lock per depot that seems to hold objects (its own
///   first, then other threads'), moving up to [`MAGAZINE_SIZE`] objects at once, and one
///   atomic read-modify-write on the idle budget; on a miss, the factory and one allocation
///   (the node), none if a discarded object left its node behind.
/// - Dropping a [`Pooled`]: the same, the other way. A full magazine spills half of itself
///   to the thread's depot under one lock; once per [`SLOT_BATCH`] puts, one atomic
///   read-modify-write on the idle budget.
/// - The first use of a pool on a thread allocates that thread's magazine and depot
///   (once), and an entry in the thread's registry (one allocation).
/// - Cloning a handle: one atomic increment of the handle count and one of the `Arc`.
/// - With a [`max_live`](PoolBuilder::max_live) bound, `get` and the return of an object
///   take locks instead (see there), and `get` may wait.
///
/// # Lifetime
///
/// When the last handle (`Pool`, or the [`Container`](crate::Container) that holds one) is
/// dropped, every idle object is dropped, on that thread, even while guards on container
/// versions remain: a version whose last guard drops later is dropped then, not kept. So an
/// object that holds a guard on an older version (a history, a diff base) never keeps its
/// pool alive, and a `mem::forget` of a guard leaks that version and the pool's bookkeeping
/// (a few hundred bytes per thread that used it), never the idle objects. If an object's
/// destructor panics, the other objects are still dropped, then the panic continues.
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
/// let pool = Pool::builder(String::new, String::clear)
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
    max_live: Option<usize>,
}

/// Counters of one pool; see [`Pool::stats`].
///
/// Counts are objects, cumulative since the pool was built, except `idle` and `live`,
/// which are readings of the moment. Each field is exact when no other thread uses the pool. Under
/// traffic the per-thread counters are read one after another, not at one instant, so
/// `idle` may miss an object, or count one twice, while it moves between a thread's magazine
/// and a depot; it never reads more than [`max_idle`](PoolBuilder::max_idle) (it is capped
/// by the idle budget in use, which is at every instant at least the idle count).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Objects the factory built, plus those taken in by [`Pool::adopt`].
    pub created: u64,
    /// Objects waiting in the pool now, per-thread magazines included.
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
    /// Objects of this pool that exist now: idle, checked out, published in containers,
    /// held by readers (and leaked ones). With a [`max_live`](PoolBuilder::max_live) bound,
    /// the bound's own count: at most `max_live`, except for objects taken in by
    /// [`Pool::adopt`]. Without one, `created` less the three counts of dropped objects.
    pub live: u64,
}

/// What a pool's reset function returns: whether to keep the object it just reset.
///
/// Implemented for `()` (always keep: `Pool::new(Vec::new, Vec::clear)`) and for `bool`
/// (`true` keeps the object, `false` drops it, as Go's `Reset` returning false does). The
/// pool stores the reset function as one closure returning `bool` either way, so the choice
/// costs nothing at run time.
///
/// The trait is sealed: it is implemented for these two types only, so that it may grow
/// without breaking anyone.
///
/// # Examples
///
/// ```
/// use poolswap::{Pool, ResetOutcome};
///
/// // `()`: every object is kept.
/// let keep_all: Pool<Vec<u8>> = Pool::new(Vec::new, Vec::clear);
/// // `bool`: objects that grew too large are dropped instead of kept.
/// let keep_small = Pool::new(Vec::<u8>::new, |v| {
///     v.clear();
///     v.capacity() <= 4096
/// });
/// # drop((keep_all, keep_small));
///
/// assert!(().keep());
/// assert!(!false.keep());
/// ```
///
/// Any other return type is refused, so a reset that returns, say, the count it cleared
/// does not silently mean "keep":
///
/// ```compile_fail,E0277
/// let pool = poolswap::Pool::new(Vec::<u8>::new, |v| { v.clear(); v.len() });
/// ```
/// ```
/// let pool = poolswap::Pool::new(Vec::<u8>::new, |v| { v.clear(); v.is_empty() });
/// # drop(pool);
/// ```
pub trait ResetOutcome: sealed::Sealed {
    /// Whether the pool keeps the object: `true` to keep it, `false` to drop it.
    fn keep(self) -> bool;
}

impl ResetOutcome for () {
    #[inline(always)]
    fn keep(self) -> bool {
        true
    }
}

impl ResetOutcome for bool {
    #[inline(always)]
    fn keep(self) -> bool {
        self
    }
}

mod sealed {
    /// Seals [`ResetOutcome`](super::ResetOutcome).
    pub trait Sealed {}
    impl Sealed for () {}
    impl Sealed for bool {}
}

impl<T: Send + 'static> Pool<T> {
    /// Makes a pool that builds objects with `factory` and readies them for reuse with
    /// `reset`, keeping at most [`DEFAULT_MAX_IDLE`] idle objects.
    ///
    /// `reset` runs on each recycled object just before [`get`](Pool::get) hands it out
    /// again. It returns `()` to keep every object, or a `bool` (see [`ResetOutcome`]): if
    /// it returns `false`, the object is dropped and never handed out again (Go's `Reset`
    /// returning false), and `get` tries the next idle object or the factory.
    ///
    /// # Examples
    ///
    /// A reset that keeps everything:
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool: Pool<Vec<u8>> = Pool::new(Vec::new, Vec::clear);
    /// pool.get().push(1);
    /// assert!(pool.get().is_empty()); // the same Vec, cleared
    /// assert_eq!(pool.stats().created, 1);
    /// ```
    ///
    /// One that drops some objects:
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
    #[must_use = "a pool that is dropped at once drops every object it made"]
    pub fn new<F, R, O>(factory: F, reset: R) -> Pool<T>
    where
        F: Fn() -> T + Send + Sync + 'static,
        R: Fn(&mut T) -> O + Send + Sync + 'static,
        O: ResetOutcome,
    {
        Pool::builder(factory, reset).build()
    }

    /// Starts configuring a pool; see [`PoolBuilder`]. `factory` and `reset` are as for
    /// [`Pool::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(String::new, String::clear).max_idle(2).build();
    /// assert_eq!(pool.max_idle(), 2);
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn builder<F, R, O>(factory: F, reset: R) -> PoolBuilder<T>
    where
        F: Fn() -> T + Send + Sync + 'static,
        R: Fn(&mut T) -> O + Send + Sync + 'static,
        O: ResetOutcome,
    {
        PoolBuilder {
            factory: Box::new(factory),
            // One closure returning `bool`, whatever `O` is: `keep` inlines into it, so the
            // pool makes the same single indirect call per reset as before.
            reset: Box::new(move |object: &mut T| reset(object).keep()),
            max_idle: DEFAULT_MAX_IDLE,
            min_idle: 0,
            max_live: None,
        }
    }
}

impl<T> Pool<T> {
    /// Reads the pool's counters. Walks every thread's share with plain atomic loads: it
    /// takes no lock and never blocks.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// drop(pool.get()); // a miss: the factory runs
    /// drop(pool.get()); // a hit: the same object again
    /// let stats = pool.stats();
    /// assert_eq!((stats.created, stats.hits, stats.misses, stats.idle), (1, 1, 1, 1));
    /// ```
    #[must_use]
    pub fn stats(&self) -> PoolStats {
        let shared = &*self.shared;
        let mut stats = PoolStats::default();
        for local in shared.locals.iter() {
            stats.idle += local.idle() as u64;
            stats.hits += local.hits();
        }
        // Relaxed: statistics, each read on its own.
        let read = |n: &AtomicU64| n.load(Ordering::Relaxed);
        // Under traffic the sum above may count an object twice, as it moves between a
        // magazine and a depot between two reads. The budget in use is at every instant at
        // least the number of idle objects, and at most `max_idle`: capping by it keeps the
        // reading within the bound. (Without traffic it holds the spare slots too, so the
        // cap changes nothing.)
        stats.idle = stats.idle.min(shared.budget.in_use() as u64);
        stats.created = read(&shared.created);
        stats.misses = read(&shared.misses);
        stats.discarded = read(&shared.discarded);
        stats.dropped_over_cap = read(&shared.dropped_over_cap);
        stats.trimmed = read(&shared.trimmed);
        stats.live = shared.live();
        stats
    }

    /// The bound on objects that exist at once, if set; see
    /// [`PoolBuilder::max_live`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| 0u8, |n| *n = 0).max_live(3).build();
    /// assert_eq!(pool.max_live(), Some(3));
    /// assert_eq!(Pool::new(|| 0u8, |n| *n = 0).max_live(), None);
    /// ```
    #[must_use]
    pub fn max_live(&self) -> Option<usize> {
        self.shared.max_live
    }

    /// The most idle objects this pool keeps.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// assert_eq!(pool.max_idle(), poolswap::DEFAULT_MAX_IDLE);
    /// ```
    #[must_use]
    pub fn max_idle(&self) -> usize {
        self.shared.budget.max()
    }

    /// The fewest idle objects [`trim`](Pool::trim) and [`clear`](Pool::clear) leave.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| 0u8, |n| *n = 0).min_idle(1).build();
    /// assert_eq!(pool.min_idle(), 1);
    /// ```
    #[must_use]
    pub fn min_idle(&self) -> usize {
        self.shared.min_idle
    }

    /// Whether two handles are on the same pool.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let a = Pool::new(|| 0u8, |n| *n = 0);
    /// assert!(Pool::ptr_eq(&a, &a.clone()));
    /// assert!(!Pool::ptr_eq(&a, &Pool::new(|| 0u8, |n| *n = 0)));
    /// ```
    #[must_use]
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
    /// Looks in the calling thread's magazine, then its depot, then steals from other threads'
    /// depots. Idle objects whose reset returns `false` are dropped on the way.
    ///
    /// Never waits for other threads' objects, unless the pool has a
    /// [`max_live`](PoolBuilder::max_live) bound: then, when every object the bound allows
    /// exists and none is idle, it waits until one comes back or is dropped, on any thread
    /// (see [`try_get`](Pool::try_get) for a `get` that does not wait).
    ///
    /// # Deadlocks
    ///
    /// With a `max_live` bound, a thread that holds objects of the pool itself (`Pooled`s,
    /// or guards on container versions that keep them from coming back) and calls `get`
    /// at the bound waits forever if no other thread will give one back. Without the bound,
    /// `get` never waits.
    ///
    /// # Panics
    ///
    /// If the factory or the reset function panics, the panic reaches the caller; the
    /// object being reset is dropped, and the pool stays usable (a live slot taken for the
    /// factory is given back).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::new(|| 0u64, |n| *n = 0);
    /// let mut n = pool.get();
    /// *n += 1;
    /// assert_eq!(*n, 1);
    /// ```
    #[inline]
    #[must_use = "the object goes straight back to the pool if the guard is dropped"]
    pub fn get(&self) -> Pooled<'_, T> {
        let shared = &*self.shared;
        if let Some(local) = shared.local_fast() {
            // SAFETY: `local_fast` returns the calling thread's own `Local`, of this pool.
            if let Some(node) = unsafe { local.pop(&shared.budget) } {
                if shared.reset(&node) {
                    local.count_hit();
                    return Pooled::check_out(node, self);
                }
            }
        }
        self.get_slow()
    }

    /// `get` past the calling thread's magazine: its depot, other threads' depots, and at
    /// last the factory; also a thread's first `get`, which registers it.
    #[cold]
    #[inline(never)]
    fn get_slow(&self) -> Pooled<'_, T> {
        let shared = &*self.shared;
        let local = Shared::local(&self.shared);
        if shared.max_live.is_some() {
            return self
                .get_bounded(local, true)
                .expect("a waiting get returns an object");
        }
        if let Some(local) = local {
            // SAFETY: `Shared::local` returns the calling thread's own `Local`.
            while let Some(node) = unsafe { local.take(&shared.budget, &shared.locals) } {
                if shared.reset(&node) {
                    local.count_hit();
                    return Pooled::check_out(node, self);
                }
            }
        }
        // No live bound: the slot is always granted (and counted, for `stats`).
        let _granted = shared.reserve_live();
        debug_assert!(_granted);
        self.make_new()
    }

    /// Runs the factory for a `get` that holds a live slot; gives the slot back if it panics.
    fn make_new(&self) -> Pooled<'_, T> {
        let shared = &*self.shared;
        let value = shared.make();
        // Counted once the factory has returned: one that panics built nothing.
        // Relaxed: statistics.
        shared.misses.fetch_add(1, Ordering::Relaxed);
        Pooled::check_out(shared.house(value), self)
    }

    /// `get` and `try_get` in a pool with a live bound: an idle object from any thread's
    /// depot (this thread's first), else a new one if the bound allows, else (if `wait`)
    /// waits until an object comes back or one is dropped. `None` only if not `wait`.
    fn get_bounded(&self, local: Option<&PoolLocal<T>>, wait: bool) -> Option<Pooled<'_, T>> {
        let shared = &*self.shared;
        if let Some(local) = local {
            // SAFETY: `Shared::local` returns the calling thread's own `Local`.
            debug_assert!(unsafe { local.magazine_unused() });
        }
        loop {
            match shared.take_or_reserve(local, wait) {
                Ok(Some(node)) => {
                    // Outside the lock: the reset is user code. If it discards the object,
                    // the live slot it frees is ours to take on the next turn (or a
                    // waiter's, which the discard wakes).
                    if shared.reset(&node) {
                        if let Some(local) = local {
                            local.count_hit();
                        }
                        return Some(Pooled::check_out(node, self));
                    }
                }
                Ok(None) => return Some(self.make_new()),
                Err(()) => return None,
            }
        }
    }

    /// [`get`](Pool::get) that never waits: `None` when the pool has a
    /// [`max_live`](PoolBuilder::max_live) bound, every object it allows exists, and none is
    /// idle. Without the bound, the same as `get`, in `Some`.
    ///
    /// # Panics
    ///
    /// As for `get`.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| vec![0u8; 1 << 20], |v: &mut Vec<u8>| v.fill(0))
    ///     .max_live(1)
    ///     .build();
    /// let only = pool.try_get().unwrap();
    /// assert!(pool.try_get().is_none()); // the one object the bound allows is out
    /// drop(only);
    /// assert!(pool.try_get().is_some()); // back: handed out again
    /// ```
    #[must_use = "the object goes straight back to the pool if the guard is dropped"]
    pub fn try_get(&self) -> Option<Pooled<'_, T>> {
        if self.shared.max_live.is_none() {
            return Some(self.get());
        }
        let local = Shared::local(&self.shared);
        self.get_bounded(local, false)
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
    /// let pool = Pool::new(Vec::<u32>::new, Vec::clear);
    /// let c = Container::new(&pool, pool.adopt(vec![1, 2, 3]));
    /// assert_eq!(c.acquire().len(), 3);
    /// ```
    #[must_use = "the object goes straight back to the pool if the guard is dropped"]
    pub fn adopt(&self, value: T) -> Pooled<'_, T> {
        self.shared.add_live();
        // Relaxed: a statistic.
        self.shared.created.fetch_add(1, Ordering::Relaxed);
        let node = self.shared.house(value);
        Pooled::check_out(node, self)
    }

    /// [`get`](Pool::get), returning a guard that owns a handle on the pool instead of
    /// borrowing it, for `thread::spawn`, `tokio::spawn` or a struct field. Costs what
    /// `get` does, plus one atomic increment (and a decrement when the guard goes).
    ///
    /// # Panics
    ///
    /// As [`get`](Pool::get).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OwnedPooled, Pool};
    ///
    /// struct Conn {
    ///     buf: OwnedPooled<Vec<u8>>, // no lifetime: the guard holds the pool
    /// }
    /// let pool = Pool::new(Vec::new, Vec::clear);
    /// let mut conn = Conn { buf: pool.get_owned() };
    /// conn.buf.extend_from_slice(b"hello");
    /// assert_eq!(conn.buf.len(), 5);
    /// ```
    #[must_use = "the object goes straight back to the pool if the guard is dropped"]
    pub fn get_owned(&self) -> OwnedPooled<T> {
        Pooled::into_owned(self.get())
    }

    /// [`adopt`](Pool::adopt), returning an [`OwnedPooled`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let s = pool.adopt_owned(String::from("built elsewhere"));
    /// assert_eq!(s.len(), 15);
    /// ```
    #[must_use = "the object goes straight back to the pool if the guard is dropped"]
    pub fn adopt_owned(&self, value: T) -> OwnedPooled<T> {
        Pooled::into_owned(self.adopt(value))
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
    /// Objects in the magazines of *other* live threads (at most [`MAGAZINE_SIZE`] per
    /// thread) are not reached: they are in use by those threads' next operations, and move
    /// to their depots, where `trim` reaches them, when the magazine overflows or the thread
    /// exits. The calling thread's magazine is moved to its depot first. Runs the objects'
    /// destructors on the calling thread; takes each depot's lock once per object moved.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| vec![0u8; 1024], |v: &mut Vec<u8>| v.fill(0))
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
        self.shed(PoolLocal::pop_victim);
        for local in self.shared.locals.iter() {
            local.age();
        }
    }

    /// Drops idle objects until at most [`min_idle`](PoolBuilder::min_idle) remain, the
    /// calling thread's magazine included (other threads' magazines: see
    /// [`trim`](Pool::trim)).
    ///
    /// Runs the objects' destructors on the calling thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| 0u8, |n| *n = 0).min_idle(1).build();
    /// let held: Vec<_> = (0..3).map(|_| pool.get()).collect();
    /// drop(held);
    /// pool.clear(); // at once, down to min_idle
    /// assert_eq!(pool.stats().idle, 1);
    /// ```
    pub fn clear(&self) {
        self.shed(PoolLocal::pop_any);
    }

    /// `trim` and `clear`: moves the calling thread's magazine to its depot, then drops
    /// idle objects that `pop` takes from each depot while more than `min_idle` are idle.
    fn shed(&self, pop: fn(&PoolLocal<T>) -> Option<NodePtr<PoolNode<T>>>) {
        let shared = &*self.shared;
        if let Some(local) = Shared::local(&self.shared) {
            // SAFETY: the calling thread's own `Local`.
            unsafe { local.flush(&shared.budget) };
        }
        for local in shared.locals.iter() {
            // Counted once per thread's share, not once per object: a walk of every
            // `Local`. Each object dropped lowers it by one.
            let excess = shared.idle_now().saturating_sub(shared.min_idle);
            for _ in 0..excess {
                let Some(node) = pop(local) else {
                    break;
                };
                shared.budget.unreserve(1);
                shared.discard(node, Discard::Trim);
            }
        }
    }

    /// Builds objects with the factory until `n` are idle in the pool (or the idle bound, or
    /// the [`max_live`](PoolBuilder::max_live) bound, is reached), so that the first `get`s,
    /// on any thread, find them. Never waits.
    ///
    /// # Panics
    ///
    /// If the factory panics; the pool stays usable.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::new(|| vec![0u8; 4096], |v| v.fill(0));
    /// pool.prefill(4);
    /// assert_eq!((pool.stats().idle, pool.stats().created), (4, 4));
    /// drop(pool.get()); // a hit
    /// assert_eq!(pool.stats().misses, 0);
    /// ```
    pub fn prefill(&self, n: usize) {
        let shared = &*self.shared;
        let Some(local) = Shared::local(&self.shared) else {
            return;
        };
        // Budget slots held spare in this thread's magazine would stop the loop short.
        // SAFETY: the calling thread's own `Local`.
        unsafe { local.flush(&shared.budget) };
        let missing = n.min(shared.budget.max()).saturating_sub(shared.idle_now());
        for _ in 0..missing {
            // One slot at a time, reserved before the factory runs and given back if it
            // panics, so the idle bound holds and a panic leaves every count as it was.
            let Some(node) = shared.make_idle() else {
                return;
            };
            // The slot goes with the object into the depot; this thread holds a handle, so
            // the pool is open and the depot takes it.
            match local.donate(node) {
                // A getter may wait at the live bound while the factory ran.
                Ok(()) => shared.wake(),
                Err(node) => {
                    shared.budget.unreserve(1);
                    shared.discard(node, Discard::Closed);
                }
            }
        }
    }
}

impl<T> Clone for Pool<T> {
    fn clone(&self) -> Self {
        self.shared.add_handle();
        Pool {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Drop for Pool<T> {
    /// Drops the handle; the last one drops every idle object (see [`Pool`]'s lifetime).
    fn drop(&mut self) {
        self.shared.drop_handle();
    }
}

impl<T> fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never blocks: `stats` reads atomics only.
        let stats = self.stats();
        f.debug_struct("Pool")
            .field("idle", &stats.idle)
            .field("max_idle", &self.shared.budget.max())
            .field("max_live", &self.shared.max_live)
            .field("created", &stats.created)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> PoolBuilder<T> {
    /// The most idle objects the pool keeps, per-thread magazines included (default
    /// [`DEFAULT_MAX_IDLE`]). An object that comes back to a full pool is dropped, on the
    /// thread that gave it back. A bound of 0 makes a pool that never keeps anything.
    ///
    /// The bound is enforced through a shared budget handed to threads [`SLOT_BATCH`] slots
    /// at a time, so that the hit path need not touch a shared counter. It is never
    /// exceeded, but each thread that uses the pool may hold up to `SLOT_BATCH` slots it is
    /// not using, so the pool may drop a returned object while up to `SLOT_BATCH` per thread
    /// fewer than `max_idle` are idle. With many threads and a tight bound, leave room for
    /// that.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| 0u8, |n| *n = 0).max_idle(1).build();
    /// let held: Vec<_> = (0..3).map(|_| pool.get()).collect();
    /// drop(held);
    /// assert_eq!(pool.stats().idle, 1);
    /// ```
    #[must_use = "a builder method returns the changed builder"]
    pub fn max_idle(mut self, n: usize) -> Self {
        self.max_idle = n;
        self
    }

    /// How many idle objects [`Pool::trim`] and [`Pool::clear`] leave in place (default 0;
    /// at most `max_idle`).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| 0u8, |n| *n = 0).min_idle(2).build();
    /// let held: Vec<_> = (0..3).map(|_| pool.get()).collect();
    /// drop(held);
    /// pool.trim();
    /// pool.trim(); // idle across two trims: dropped, down to min_idle
    /// assert_eq!(pool.stats().idle, 2);
    /// ```
    #[must_use = "a builder method returns the changed builder"]
    pub fn min_idle(mut self, n: usize) -> Self {
        self.min_idle = n;
        self
    }

    /// Bounds how many objects of this pool exist at once, idle and in use together
    /// (checked out, published in containers, held by readers, idle): the memory cap that
    /// Go's `GOMEMLIMIT` stands for, and tighter, since it holds whatever readers do. With
    /// `max_live(3)`, at most three copies of a 100 MB table exist, however many readers
    /// hold guards on old versions. Default: no bound.
    ///
    /// At the bound, [`Pool::get`] (and so [`Container::get_new`](crate::Container::get_new))
    /// **waits** until an object comes back to the pool (its last guard or `Pooled` is
    /// dropped, on any thread) or one is dropped (its reset discards it, or it comes back
    /// to a pool that holds `max_idle` idle objects, or [`Pool::trim`] drops it); then it
    /// reuses that object or builds a new one. So a writer can wait for readers, which it
    /// never does without the bound. [`Pool::try_get`] returns `None` instead of waiting.
    /// [`Pool::prefill`] stops at the bound. [`Pool::adopt`] never waits: an object taken in
    /// counts toward the bound, and may push the count over it until objects are dropped.
    ///
    /// A thread that itself holds every object the bound allows (as `Pooled`s, or guards on
    /// container versions) and calls `get` waits forever: see `get`'s `# Deadlocks`.
    ///
    /// # Costs
    ///
    /// Nothing on the paths of a pool without the bound. With it, the per-thread magazines
    /// are not used, so that an object a reader's thread gives back can be taken by the
    /// writer's: every `get` and every return takes the pool's wait lock and one depot lock
    /// per thread that used the pool (a `get`) or one (a return). Meant for large objects,
    /// where that is noise.
    ///
    /// # Panics
    ///
    /// If `n` is 0: no `get` could ever return.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| vec![0u8; 1 << 20], |v: &mut Vec<u8>| v.fill(0))
    ///     .max_live(2)
    ///     .build();
    /// let a = pool.get();
    /// let b = pool.get();
    /// assert!(pool.try_get().is_none()); // two exist: a third must wait
    /// let (tx, rx) = mpsc::channel();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let c = pool.get(); // waits until `b` is dropped below
    ///         tx.send(c.len()).unwrap();
    ///     });
    ///     drop(b); // on this thread; the waiting `get` takes it
    /// });
    /// assert_eq!(rx.recv().unwrap(), 1 << 20);
    /// assert!(pool.stats().live <= 2);
    /// drop(a);
    /// ```
    #[must_use = "a builder method returns the changed builder"]
    pub fn max_live(mut self, n: usize) -> Self {
        assert!(n > 0, "max_live(0): no object could ever be handed out");
        self.max_live = Some(n);
        self
    }

    /// Builds the pool. It starts empty; see [`Pool::prefill`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(Vec::<u8>::new, Vec::clear).max_idle(8).build();
    /// assert_eq!((pool.max_idle(), pool.stats().created), (8, 0));
    /// ```
    #[must_use = "a pool that is dropped at once drops every object it made"]
    pub fn build(self) -> Pool<T> {
        Pool {
            shared: Arc::new(Shared::new(
                shared::claim_local::<T>,
                self.factory,
                self.reset,
                self.max_idle,
                self.min_idle,
                self.max_live,
            )),
        }
    }
}

impl<T> fmt::Debug for PoolBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBuilder")
            .field("max_idle", &self.max_idle)
            .field("min_idle", &self.min_idle)
            .field("max_live", &self.max_live)
            .finish_non_exhaustive()
    }
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
/// let pool = Pool::new(String::new, String::clear);
/// let mut s = pool.get();
/// s.push_str("pooled");
/// std::thread::scope(|scope| {
///     scope.spawn(move || assert_eq!(&*s, "pooled")); // dropped on the other thread
/// });
/// assert_eq!(pool.stats().idle, 1);
/// ```
#[must_use = "dropping it at once returns the object to the pool unused"]
pub struct Pooled<'a, T> {
    node: NonNull<PoolNode<T>>,
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
    fn check_out(node: NodePtr<PoolNode<T>>, pool: &'a Pool<T>) -> Self {
        // SAFETY: the caller owns the node (it came off a free list or was just made).
        let n = unsafe { node.0.as_ref() };
        // Release: a stale reader that reads this 1 sees the retirement of the node's
        // previous version (see `RefCount::reset_to_one`).
        n.refs.reset_to_one();
        Pooled { node: node.0, pool }
    }

    /// Turns this guard into one that owns a handle on the pool (one atomic increment),
    /// for a `'static` guard.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OwnedPooled, Pool, Pooled};
    ///
    /// let pool = Pool::new(Vec::<u8>::new, Vec::clear);
    /// let owned: OwnedPooled<Vec<u8>> = Pooled::into_owned(pool.get());
    /// std::thread::spawn(move || drop(owned)).join().unwrap();
    /// assert_eq!(pool.stats().idle, 1);
    /// ```
    pub fn into_owned(this: Pooled<'a, T>) -> OwnedPooled<T> {
        let pool = this.pool.clone();
        let this = ManuallyDrop::new(this);
        OwnedPooled {
            node: this.node,
            pool,
        }
    }

    /// The pool this object came from.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Pool, Pooled};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let n = pool.get();
    /// assert!(Pool::ptr_eq(Pooled::pool(&n), &pool));
    /// ```
    #[must_use]
    pub fn pool(this: &Pooled<'a, T>) -> &'a Pool<T> {
        this.pool
    }

    /// The object's reference count: 1, unless a container reader is in the middle of
    /// finding out that this object is not the container's current version.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Pool, Pooled};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let n = pool.get();
    /// assert_eq!(Pooled::ref_count(&n), 1);
    /// ```
    #[must_use]
    pub fn ref_count(this: &Pooled<'_, T>) -> usize {
        // SAFETY: this guard's reference keeps the node live.
        unsafe { this.node.as_ref() }.refs.load()
    }
}

impl<T> Drop for Pooled<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the guard owns the node, checked out of `self.pool`.
        unsafe { give_back(self.node, self.pool) }
    }
}

/// Marks a checked-out node published, with its keepalive, for a container to store.
pub(crate) fn publish<T>(node: NonNull<PoolNode<T>>, pool: Arc<Shared<T>>) {
    // The publishing thread (the writer) is where the version goes back to, whose next
    // `get` looks in its own depot first.
    let home = Shared::local(&pool).map_or(ptr::null(), ptr::from_ref);
    // SAFETY: the caller owns the node exclusively (stale readers touch only `refs`), so
    // it holds no keepalive; the caller's Release swap publishes it next.
    unsafe { node.as_ref().publish(home, pool) };
}

/// Undoes [`publish`] for a node that never became visible (a container's
/// compare-and-swap failed): the node is checked out again, and the pool handle it held
/// is dropped.
///
/// # Safety
///
/// `node` was published by `publish` and never stored where a reader could find it.
pub(crate) unsafe fn unpublish<T>(node: NonNull<PoolNode<T>>) {
    // SAFETY: per the caller, nobody else owns the node (stale readers touch only `refs`,
    // and leave it as they found it).
    drop(unsafe { node.as_ref().take_keepalive() });
}

/// Returns a checked-out node to `pool`: the drop of [`Pooled`] and [`OwnedPooled`].
///
/// # Safety
///
/// The caller owns the node's checked-out reference, and the node belongs to `pool`.
#[inline]
unsafe fn give_back<T>(node: NonNull<PoolNode<T>>, pool: &Pool<T>) {
    // SAFETY: the caller owns the node.
    let published = unsafe { node.as_ref().ever_published() };
    // A node that was never a container version has no stale readers: no atomic needed.
    // One that was may have one holding a brief reference; the last of them recycles.
    // SAFETY: the caller owns a reference.
    if published && !unsafe { node.as_ref() }.refs.decrement() {
        return;
    }
    Shared::put(&pool.shared, NodePtr(node));
}

/// An exclusive guard on one pooled object that owns a handle on its pool instead of
/// borrowing it: made by [`Pool::get_owned`] or [`Pooled::into_owned`], in the style of
/// tokio's `acquire_owned`.
///
/// Everything a [`Pooled`] does, and `'static` when `T` is: it can go into
/// `thread::spawn`, `tokio::spawn` or a struct field. [`Container::update`](crate::Container::update)
/// and the other publishing methods take either kind.
///
/// Costs over a [`Pooled`]: one atomic increment of the pool's handle count when made, one
/// decrement when dropped or published (two `Arc`-style read-modify-writes in all).
///
/// # Send and Sync
///
/// `Send` when `T: Send` and `Sync` when `T: Send + Sync`, as [`Pooled`].
///
/// # Examples
///
/// ```
/// use poolswap::Pool;
///
/// let pool = Pool::new(String::new, String::clear);
/// let mut s = pool.get_owned();
/// let filler = std::thread::spawn(move || {
///     s.push_str("filled elsewhere");
///     s
/// });
/// let s = filler.join().unwrap();
/// assert_eq!(&*s, "filled elsewhere");
/// drop(s); // back to the pool
/// assert_eq!(pool.stats().idle, 1);
/// ```
#[must_use = "dropping it at once returns the object to the pool unused"]
pub struct OwnedPooled<T> {
    node: NonNull<PoolNode<T>>,
    pool: Pool<T>,
}

// SAFETY: as for `Pooled`: the guard owns its object as a `Box` does, and `Pool<T>` is
// `Send` for `T: Send`.
unsafe impl<T: Send> Send for OwnedPooled<T> {}
// SAFETY: `&OwnedPooled<T>` gives only `&T` and `&Pool<T>`.
unsafe impl<T: Sync + Send> Sync for OwnedPooled<T> {}

impl<T> OwnedPooled<T> {
    /// The pool this object came from.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OwnedPooled, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let n = pool.get_owned();
    /// assert!(Pool::ptr_eq(OwnedPooled::pool(&n), &pool));
    /// ```
    #[must_use]
    pub fn pool(this: &OwnedPooled<T>) -> &Pool<T> {
        &this.pool
    }

    /// The object's reference count, as [`Pooled::ref_count`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OwnedPooled, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let n = pool.get_owned();
    /// assert_eq!(OwnedPooled::ref_count(&n), 1);
    /// ```
    #[must_use]
    pub fn ref_count(this: &OwnedPooled<T>) -> usize {
        // SAFETY: this guard's reference keeps the node live.
        unsafe { this.node.as_ref() }.refs.load()
    }
}

impl<T> Drop for OwnedPooled<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the guard owns the node, checked out of `self.pool`.
        unsafe { give_back(self.node, &self.pool) }
    }
}

/// `Deref`, `DerefMut`, `Debug`, `Display`, `AsRef`, `AsMut`, `Borrow` and `BorrowMut` for
/// the two pooled guards, which own their node's object exclusively.
macro_rules! exclusive_guard_traits {
    ($name:literal, [$($lt:lifetime)?], $ty:ty) => {
        impl<$($lt,)? T> Deref for $ty {
            type Target = T;
            #[inline]
            fn deref(&self) -> &T {
                // SAFETY: this guard owns the node, so its object is initialised and only
                // this guard reaches it, for as long as `&self` lives.
                unsafe { Node::object(self.node) }
            }
        }

        impl<$($lt,)? T> DerefMut for $ty {
            #[inline]
            fn deref_mut(&mut self) -> &mut T {
                // SAFETY: as above, and `&mut self` makes the access unique.
                unsafe { Node::object_mut(self.node) }
            }
        }

        impl<$($lt,)? T: fmt::Debug> fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_tuple($name).field(&**self).finish()
            }
        }

        impl<$($lt,)? T: fmt::Display> fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&**self, f)
            }
        }

        impl<$($lt,)? T> AsRef<T> for $ty {
            fn as_ref(&self) -> &T {
                self
            }
        }

        impl<$($lt,)? T> AsMut<T> for $ty {
            fn as_mut(&mut self) -> &mut T {
                self
            }
        }

        impl<$($lt,)? T> Borrow<T> for $ty {
            fn borrow(&self) -> &T {
                self
            }
        }

        impl<$($lt,)? T> BorrowMut<T> for $ty {
            fn borrow_mut(&mut self) -> &mut T {
                self
            }
        }

        // Unwinding can leave `T` half-updated only through `&mut T`, which a caught
        // panic's closure cannot hold across the boundary without `AssertUnwindSafe`, as
        // for `Box<T>`; the pool's own state is kept consistent on unwind.
        impl<$($lt,)? T: UnwindSafe> UnwindSafe for $ty {}
        impl<$($lt,)? T: RefUnwindSafe> RefUnwindSafe for $ty {}

        impl<$($lt,)? T> publishable::Publishable<T> for $ty {
            type Handle = exclusive_guard_traits!(@handle [$($lt)?]);

            fn pool_of(&self) -> &Pool<T> {
                &self.pool
            }

            fn into_raw(self) -> (NonNull<()>, Self::Handle) {
                let this = ManuallyDrop::new(self);
                // SAFETY: `this` is never dropped, so the handle is read out once.
                (this.node.cast(), unsafe { ptr::read(&this.pool) })
            }

            unsafe fn from_raw(node: NonNull<()>, pool: Self::Handle) -> Self {
                Self { node: node.cast(), pool }
            }
        }

        impl<$($lt,)? T> Publishable<T> for $ty {}
    };
    (@handle [$lt:lifetime]) => { &$lt Pool<T> };
    (@handle []) => { Pool<T> };
}

exclusive_guard_traits!("Pooled", ['a], Pooled<'a, T>);
exclusive_guard_traits!("OwnedPooled", [], OwnedPooled<T>);

/// An object checked out of a pool and ready to become a container's version: a
/// [`Pooled`] or an [`OwnedPooled`]. [`Container::update`](crate::Container::update),
/// `swap`, `compare_and_swap` and the constructors take either.
///
/// Sealed: only this crate implements it.
pub trait Publishable<T>: publishable::Publishable<T> {}

pub(crate) mod publishable {
    use super::{NonNull, Pool};

    /// What a container needs of a checked-out object.
    pub trait Publishable<T>: Sized {
        /// What the guard keeps its pool by (a reference or a handle).
        type Handle;
        /// The pool the object came from.
        fn pool_of(&self) -> &Pool<T>;
        /// Gives up the guard without dropping it: its node (a `PoolNode<T>`, erased: the
        /// type is private) and its pool handle.
        fn into_raw(self) -> (NonNull<()>, Self::Handle);
        /// Rebuilds the guard from what `into_raw` returned.
        ///
        /// # Safety
        ///
        /// `node` and `pool` came from `into_raw` of this type, and the node is checked out
        /// (owned by the caller, unpublished).
        unsafe fn from_raw(node: NonNull<()>, pool: Self::Handle) -> Self;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::registry;

    /// The idle bound's invariant: the budget in use is exactly the slots held by magazines
    /// (one per object plus the spare ones, at most `SLOT_BATCH`) plus the objects in
    /// depots.
    fn assert_budget_balances<T>(pool: &Pool<T>) {
        let shared = pool.shared();
        // No other thread uses the pool here (the test's threads have been joined, exit
        // hooks included), as `slots_held` requires.
        let held: usize = shared.locals.iter().map(|l| l.slots_held()).sum();
        assert_eq!(shared.budget.in_use(), held, "budget out of balance");
        assert!(held <= pool.max_idle());
    }

    #[test]
    fn budget_balances_through_spills_refills_steals_and_trims() {
        let pool = Pool::builder(|| 0u32, |_: &mut u32| true)
            .max_idle(20)
            .build();
        // Bursts bigger than a magazine: spills to the depot, refills, over-cap drops.
        for burst in [3, MAGAZINE_SIZE + 3, 30, 1] {
            let held: Vec<_> = (0..burst).map(|_| pool.get()).collect();
            drop(held);
            assert_budget_balances(&pool);
        }
        // Objects put on another thread, stolen by this one.
        std::thread::scope(|s| {
            // `join`, not just the end of the scope: only `join` waits for the thread's
            // thread-local destructors, where its exit hook flushes its magazine.
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

    #[test]
    fn a_thread_keeps_registry_entries_for_live_pools_only() {
        let live: Vec<Pool<u8>> = (0..3).map(|_| Pool::new(|| 0u8, |_| true)).collect();
        for pool in &live {
            drop(pool.get());
        }
        let before = registry::len();
        for _ in 0..1000 {
            let pool = Pool::new(|| 0u8, |_| true);
            drop(pool.get());
        }
        for pool in &live {
            drop(pool.get());
        }
        // Sweeps run when the registry doubles: at most twice the live entries, plus the
        // first sweep's threshold.
        let after = registry::len();
        assert!(
            after <= 2 * before.max(4) + 8,
            "{after} registry entries after 1000 dead pools ({before} before)"
        );
    }
}
