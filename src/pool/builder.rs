//! [`PoolBuilder`]: a pool's settings, gathered before [`build`](PoolBuilder::build) makes
//! the pool's shared state from them.

use std::fmt;

use super::shared::{self, Factory, Reset, Shared};
use super::Pool;
use crate::sync::Arc;

/// How many idle objects a pool keeps by default; see [`PoolBuilder::max_idle`].
///
/// A safety net against a burst pinning memory forever, sized for small objects shared by
/// many threads (each thread's magazine alone may hold [`MAGAZINE_SIZE`]). For objects of
/// megabytes, set [`max_idle`](PoolBuilder::max_idle) to the working set you expect — a
/// container needs its current version, the one being filled, and one per reader that
/// holds a guard across an update — and call [`Pool::trim`] from a timer.
///
/// [`MAGAZINE_SIZE`]: crate::MAGAZINE_SIZE
pub const DEFAULT_MAX_IDLE: usize = 256;

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

impl<T: Send + 'static> PoolBuilder<T> {
    /// A builder with the default settings, for [`Pool::builder`].
    pub(super) fn new(factory: Box<Factory<T>>, reset: Box<Reset<T>>) -> PoolBuilder<T> {
        PoolBuilder {
            factory,
            reset,
            max_idle: DEFAULT_MAX_IDLE,
            min_idle: 0,
            max_live: None,
        }
    }

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
    /// [`SLOT_BATCH`]: crate::SLOT_BATCH
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
    /// **waits** until an object comes back to the pool (a `Pooled` is dropped, or a
    /// reclamation returns a retired version whose guards are gone: the waiting getter
    /// reclaims before it sleeps and every 0.5 ms while versions are retired) or one is
    /// dropped (its reset discards it, or it comes back
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
