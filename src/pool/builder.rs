//! [`PoolBuilder`]: a pool's settings, gathered before [`build`](PoolBuilder::build) makes
//! the pool's shared state from them. Nothing here runs on a pool's paths.

use std::fmt;
use std::time::Duration;

use super::decay::{ClockFn, Decay};
use super::shared::{self, Factory, Reset, Settings, Shared};
use super::Pool;
use crate::sync::Arc;

/// Configures a [`Pool`] before it is built; made by [`Pool::builder`]. Its methods only
/// store settings; `Send + Sync`, as the closures it holds are.
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
    max_idle: Option<usize>,
    min_idle: usize,
    max_live: Option<usize>,
    decay: Option<Duration>,
    clock: Option<Box<ClockFn>>,
    /// See [`slow_start_ops`](Self::slow_start_ops): loom builds only.
    #[cfg(loom)]
    slow_start_ops: u32,
}

impl<T: Send + 'static> PoolBuilder<T> {
    /// A builder with the default settings, for [`Pool::builder`].
    pub(super) fn new(factory: Box<Factory<T>>, reset: Box<Reset<T>>) -> PoolBuilder<T> {
        PoolBuilder {
            factory,
            reset,
            max_idle: None,
            min_idle: 0,
            max_live: None,
            decay: None,
            clock: None,
            #[cfg(loom)]
            slow_start_ops: super::local::SLOW_START_OPS,
        }
    }

    /// Sets a fixed bound on idle objects, per-thread magazines included. An object that
    /// comes back to a full pool is dropped, on the thread that gave it back. A bound of 0
    /// makes a pool that never keeps anything.
    ///
    /// **Default: a bound that adapts to demand.** The pool keeps up to
    /// `max(256, demand + demand / 4)` idle objects, where `demand` is the most objects that
    /// were live at once when a `get` found nothing idle (the working set just seen), since
    /// the last [`Pool::trim`] or decay tick; those lower `demand` to the objects live after
    /// they drop theirs. So a working set of any size (a producer thread sending batches of
    /// buffers to a consumer thread) is kept whole instead of being dropped and rebuilt, and
    /// a burst is kept until a `trim` or decay drops it: build with [`decay`](Self::decay),
    /// or set this bound, if a burst must not pin memory. For objects of megabytes, set it
    /// to the working set you expect (a container needs its current version, the one being
    /// filled, and one per reader that holds a guard across an update).
    /// [`PoolStats::max_idle`](crate::PoolStats::max_idle) reads the bound in effect.
    ///
    /// # Slack
    ///
    /// The bound is kept through a budget of idle permits that threads take 4 at a time and
    /// that travel with the objects, so that neither the hit path nor a handoff between
    /// threads touches a shared counter per object. It is never exceeded, but each thread
    /// that uses the pool may hold permits it is not using: up to 4 once the pool is within
    /// 20 permits of the bound; further from it, up to 20 in its magazine (16 objects and 4
    /// spare) and 32 parked in its depot by threads that took objects from it
    /// ([`Pool::trim`] gives those back). So the pool may drop a returned object while that
    /// many per thread fewer than the bound are idle. With many threads and a tight bound,
    /// leave room for that.
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
        self.max_idle = Some(n);
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
    #[track_caller]
    pub fn max_live(mut self, n: usize) -> Self {
        assert!(n > 0, "max_live(0): no object could ever be handed out");
        self.max_live = Some(n);
        self
    }

    /// Makes the pool shrink by itself: every `period`, the pool runs what [`Pool::trim`]
    /// does, from its own slow paths, so an object left idle is dropped within two periods
    /// (down to [`min_idle`](Self::min_idle)) unless a `get` takes it first. Default: off
    /// (the pool shrinks only when `trim` or `clear` is called).
    ///
    /// A *tick* runs when an operation reaches one of the pool's slow paths (a `get` that
    /// finds its thread's magazine empty, a return that finds it full) in a later period
    /// than the last tick, or at one `get` in 256 on each thread: the hit path reads no
    /// clock. One period after the last tick, the tick drops the objects idle since the
    /// tick before and demotes the rest; two periods or more after it (the pool saw no slow
    /// path for a whole period), it drops every idle object it reaches. So objects put back
    /// at time `t` are gone after the first such operation at or after `t + 2 * period`.
    /// A tick also lowers the adaptive idle bound ([`max_idle`](Self::max_idle)) to what is
    /// live after it.
    ///
    /// A tick reaches every depot, the calling thread's magazine, and other live threads'
    /// magazines as [`Pool::trim`] does (with `membarrier`, those of threads not in the
    /// middle of an operation; in `Fence` mode none, at most 16 objects each).
    ///
    /// **A pool nobody touches does not decay**: no operation, no tick. For a pool that may
    /// go quiet after a burst, start [`Pool::spawn_trimmer`] (a thread that calls `trim`
    /// every period) or call `trim` from a timer of your own.
    ///
    /// # Costs
    ///
    /// One clock read (`Instant::elapsed`) per slow path and per 256 hits on a thread, and a
    /// compare-exchange per tick; a tick takes each depot's lock
    /// and runs the dropped objects' destructors, on the thread that runs it. Nothing on
    /// the hit path but the test of the hit count it already keeps.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| vec![0u8; 4096], |v: &mut Vec<u8>| v.fill(0))
    ///     .decay(Duration::from_secs(10))
    ///     .build();
    /// drop(pool.get()); // idle: dropped by the first slow path 20 s or more from now
    /// ```
    #[must_use = "a builder method returns the changed builder"]
    pub fn decay(mut self, period: Duration) -> Self {
        self.decay = Some(period);
        self
    }

    /// The clock [`decay`](Self::decay) reads, as the time since some fixed start; default:
    /// monotonic time (`Instant`) since the pool was built. For tests that advance time by
    /// hand (`pool/tests/decay.rs`). It should never go backwards (if it does, ticks stop
    /// until it passes its highest reading again). Crate-private, but for the loom models.
    #[cfg(not(loom))]
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn clock(mut self, now: impl Fn() -> Duration + Send + Sync + 'static) -> Self {
        self.clock = Some(Box::new(now));
        self
    }

    /// [`clock`](Self::clock) for the loom models (`tests/loom_pool.rs`), which are
    /// integration tests: loom builds only.
    #[cfg(loom)]
    #[doc(hidden)]
    #[must_use = "a builder method returns the changed builder"]
    pub fn clock(mut self, now: impl Fn() -> Duration + Send + Sync + 'static) -> Self {
        self.clock = Some(Box::new(now));
        self
    }

    /// How many slow-path operations each thread's magazine stays empty for, on its first
    /// use of the pool and again after a thread that exited left it to the next (the slow
    /// start, `SLOW_START_OPS` in `src/pool/local.rs`). For loom models only, which
    /// otherwise never reach the slow start: under loom its default is 0, so that the other
    /// models keep their state space. Builds without loom have no such method; their slow
    /// start is a constant.
    #[cfg(loom)]
    #[doc(hidden)]
    #[must_use = "a builder method returns the changed builder"]
    pub fn slow_start_ops(mut self, ops: u32) -> Self {
        self.slow_start_ops = ops;
        self
    }

    /// Builds the pool. It starts empty; see [`Pool::prefill`].
    ///
    /// Costs one allocation (the shared state) and a lock to claim the pool's retired list;
    /// the first pool or container of the process also chooses the barrier mode
    /// (`membarrier(2)` where the kernel offers it, else a fence), which may register with
    /// `membarrier`.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(Vec::<u8>::new, Vec::clear).max_idle(8).build();
    /// assert_eq!((pool.stats().max_idle, pool.stats().created), (8, 0));
    /// ```
    #[must_use = "a pool that is dropped at once drops every object it made"]
    pub fn build(self) -> Pool<T> {
        // The barrier mode decides whether trims may take other threads' magazines
        // (`local.rs`): chosen before the pool exists, as for a container.
        crate::reclaim::barrier::init();
        Pool {
            shared: Arc::new(Shared::new(
                shared::claim_local::<T>,
                Settings {
                    factory: self.factory,
                    reset: self.reset,
                    max_idle: self.max_idle,
                    min_idle: self.min_idle,
                    max_live: self.max_live,
                    decay: self.decay.map(|period| Decay::new(period, self.clock)),
                    #[cfg(loom)]
                    slow_start_ops: self.slow_start_ops,
                },
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
            .field("decay", &self.decay)
            .finish_non_exhaustive()
    }
}
