//! The container: the current version of a shared object, and read guards on it.
//!
//! This file is the public front: [`ContainerAny`], the one implementation of the
//! container (Go's poolswap `Container`, whose `Acquire`/`Release` and `GetNew`/`Update` it
//! follows), with its two flavours named [`Container`] (never empty) and
//! [`OptionContainer`] (may be empty), as arc-swap names `ArcSwapAny`'s `ArcSwap` and
//! `ArcSwapOption`; and the re-exports of the children's public types:
//!
//! | module | what |
//! |---|---|
//! | `raw` | `Raw`, the state and lock-free protocol both flavours share |
//! | `flavour` | `Flavour`, `NonEmpty` and `MaybeEmpty`: what a read returns |
//! | `guard` | `Guard` with its trait impls, and `MappedGuard` |
//! | `cache` | `Cache`, a per-thread reader that re-acquires only when the version changed |
//! | `subscribe` | `Subscriber`, a reader that waits for the next version, and `Closed` |
//! | `wakers` | the list of tasks awaiting `Subscriber::changed` (feature `async`) |
//!
//! Every method is written once, for both flavours, and delegates to `Raw` (or to its
//! pool); the flavour only turns what `Raw` returns (`Option<Guard<T>>`, `None` while
//! empty) into what the method returns ([`Flavour::Wrap`]: `Guard<T>` or
//! `Option<Guard<T>>`). The three methods of an empty container (`empty`, `take`,
//! `is_empty`) exist for `OptionContainer` only, which keeps `Container` non-empty.

use std::fmt;
use std::marker::PhantomData;
use std::panic::{RefUnwindSafe, UnwindSafe};

mod cache;
mod flavour;
mod guard;
mod raw;
mod subscribe;
#[cfg(all(feature = "async", not(loom)))]
mod wakers;

pub use self::cache::Cache;
pub use self::flavour::{Flavour, MaybeEmpty, NonEmpty};
pub use self::guard::{Guard, MappedGuard};
use self::raw::Raw;
pub use self::subscribe::{Closed, Subscriber, Watched};
use crate::pool::{Pool, Pooled, Publishable};

/// The current version of a heavy, read-mostly object, readable without waiting and
/// replaceable without allocating. Always holds a version: reads return a [`Guard`], not an
/// `Option` (see [`OptionContainer`] for one that may be empty, like Go's).
///
/// Readers [`acquire`](Container::acquire) a [`Guard`] on the current version; a writer takes
/// an object from the pool with [`get_new`](Container::get_new), fills it, and publishes it
/// with [`update`](Container::update). The old version goes back to the pool at the first
/// reclamation pass, on a writer's side, that finds no guard on it (usually the writer's next
/// [`get_new`](Container::get_new); [`reclaim`](crate::reclaim()) lists every moment one
/// runs), and is reset when the pool next hands it out: never while a guard on it exists.
/// Dropping a guard returns nothing: it is one store.
///
/// # Examples
///
/// ```
/// use std::collections::HashMap;
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(HashMap::<&str, u32>::new, HashMap::clear);
/// let mut init = pool.get();
/// init.insert("timeout_ms", 250);
/// let config = Container::new(&pool, init);
///
/// let current = config.acquire();
/// assert_eq!(current["timeout_ms"], 250);
///
/// let mut next = config.get_new(); // a fresh map: `current` still holds the old one
/// next.insert("timeout_ms", 500);
/// config.update(next);
/// assert_eq!(current["timeout_ms"], 250); // a guard keeps its version
/// assert_eq!(config.acquire()["timeout_ms"], 500);
/// ```
///
/// Shared between threads through an `Arc` (or a `static`, e.g. in a `LazyLock`, or by
/// reference in `thread::scope`); a `Container` is not `Clone`, like `ArcSwap`:
///
/// ```
/// use std::sync::Arc;
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(Vec::<u32>::new, Vec::clear);
/// let table = Arc::new(Container::from_value(&pool, vec![1, 2, 3]));
/// let reader = {
///     let table = Arc::clone(&table);
///     std::thread::spawn(move || table.acquire().len())
/// };
/// let mut next = table.get_new();
/// next.extend([4, 5]);
/// table.update(next);
/// let len = reader.join().unwrap();
/// assert!(len == 3 || len == 2);
/// ```
///
/// # Costs
///
/// - [`acquire`](Container::acquire): no atomic read-modify-write, no lock, no allocation
///   after the thread's first read, and no write to a cache line another reader reads (a
///   store to a hazard slot of the thread, see its docs). Dropping the guard: one store.
/// - [`update`](Container::update): an atomic swap, a lock and a push on the pool's retired
///   list, and, at every 8th version left retired, a reclamation pass over that list (see
///   [`reclaim`](crate::reclaim())). Never waits for a reader. No allocation at steady
///   state.
/// - The old version goes back to its pool at a reclamation that finds no guard on it, on
///   the reclaiming thread: usually the writer's next [`get_new`](Container::get_new),
///   which reclaims when the pool has nothing idle. Never on a reader's thread.
///
/// # Unwind safety
///
/// `UnwindSafe` and `RefUnwindSafe` when `T: RefUnwindSafe`, as `Arc<T>` and `ArcSwap`: a
/// panic cannot leave a container half-updated (every change is one atomic store of a
/// whole version, and guards only read), so an `Arc<Container<T>>` may cross
/// `catch_unwind`.
///
/// # Send and Sync
///
/// `Send + Sync` when `T: Send + Sync`: readers on many threads share `&T`, and the `T`
/// goes back to the pool on whichever thread reclaims it, for another thread to reuse.
///
/// # One implementation
///
/// `Container<T>` is [`ContainerAny<T, NonEmpty>`](ContainerAny), whose methods it has: one
/// implementation for both flavours, where [`F::Wrap<X>`](Flavour::Wrap) (in
/// `acquire`'s `F::Wrap<Guard<T>>`, for example) is `X` itself here.
pub type Container<T> = ContainerAny<T, NonEmpty>;

/// A container that may be empty, like Go's: reads return an `Option`. Made empty by
/// [`empty`](OptionContainer::empty) (Go's `NewEmptyContainer`) or emptied by
/// [`take`](OptionContainer::take) (Go's `Update(nil)`). Everything else is as in
/// [`Container`], with the same costs; arc-swap's `ArcSwapOption` is the model.
///
/// `OptionContainer<T>` is [`ContainerAny<T, MaybeEmpty>`](ContainerAny): the same
/// methods as `Container`, where [`F::Wrap<X>`](Flavour::Wrap) is `Option<X>` (`None`
/// while empty), and three more.
///
/// # Examples
///
/// ```
/// use poolswap::{OptionContainer, Pool};
///
/// let pool = Pool::new(String::new, String::clear);
/// let c = OptionContainer::empty(&pool);
/// assert!(c.acquire().is_none());
/// let mut next = c.get_new();
/// next.push_str("first");
/// c.update(next);
/// assert_eq!(c.acquire().as_deref().map(String::as_str), Some("first"));
/// let last = c.take();
/// assert!(c.is_empty() && last.is_some());
/// ```
///
/// # Send and Sync
///
/// As [`Container`].
pub type OptionContainer<T> = ContainerAny<T, MaybeEmpty>;

/// The one implementation of [`Container`] (`F` = [`NonEmpty`]) and [`OptionContainer`]
/// (`F` = [`MaybeEmpty`]), as arc-swap's `ArcSwapAny` is of `ArcSwap` and
/// `ArcSwapOption`. Use those two names; this one shows in the signatures of the methods
/// they share, where [`F::Wrap<X>`](Flavour::Wrap) is what a read returns: `X` for a
/// `Container`, `Option<X>` for an `OptionContainer`. Name it (with `F: Flavour`) in code
/// generic over both.
///
/// # Examples
///
/// ```
/// use poolswap::{Container, ContainerAny, Flavour, OptionContainer, Pool};
///
/// fn publish<F: Flavour>(c: &ContainerAny<u32, F>, value: u32) {
///     let mut next = c.get_new();
///     *next = value;
///     c.update(next);
/// }
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let (c, o) = (Container::from_value(&pool, 1), OptionContainer::empty(&pool));
/// publish(&c, 2);
/// publish(&o, 3);
/// assert_eq!((*c.acquire(), o.acquire().as_deref()), (2, Some(&3)));
/// ```
///
/// # Unwind safety, Send and Sync
///
/// As [`Container`]'s: `UnwindSafe` and `RefUnwindSafe` when `T: RefUnwindSafe`,
/// `Send + Sync` when `T: Send + Sync`, for either flavour.
pub struct ContainerAny<T, F: Flavour> {
    /// Never empty when `F` is `NonEmpty`: filled at construction, and only the methods of
    /// `OptionContainer` (`empty`, `take`) store null.
    raw: Raw<T>,
    /// The flavour, which holds nothing: a function pointer, so that `F` changes none of
    /// the auto traits.
    flavour: PhantomData<fn() -> F>,
}

// SAFETY: the container owns a reference on a `T` that many threads read (`T: Sync`) and
// that any thread may end up returning to the pool (`T: Send`). `Pool<T>` needs `T: Send`.
// The flavour holds nothing.
unsafe impl<T: Send + Sync, F: Flavour> Send for ContainerAny<T, F> {}
// SAFETY: `&ContainerAny` hands out guards, i.e. `&T` on any thread and the last release
// on any thread: the same bounds.
unsafe impl<T: Send + Sync, F: Flavour> Sync for ContainerAny<T, F> {}

// A panic cannot leave a container half-updated: every change is one atomic store of a
// whole version, and guards only read. As for `ArcSwap` and `Arc`. Manual: the raw
// pointers and atomics of `Raw` and the pool's cells would make the auto impls stricter.
impl<T: RefUnwindSafe, F: Flavour> UnwindSafe for ContainerAny<T, F> {}
impl<T: RefUnwindSafe, F: Flavour> RefUnwindSafe for ContainerAny<T, F> {}

/// The message of the `expect`s that a `Container`'s invariant (never empty) makes
/// unreachable.
const NEVER_EMPTY: &str = "poolswap: a Container is never empty";

impl<T, F: Flavour> ContainerAny<T, F> {
    /// A container on `raw`, of this flavour.
    fn from_raw(raw: Raw<T>) -> Self {
        ContainerAny {
            raw,
            flavour: PhantomData,
        }
    }

    /// `value`, read from `raw`, as this flavour returns it.
    #[inline]
    #[track_caller]
    fn wrap<X>(value: Option<X>) -> F::Wrap<X> {
        F::wrap(value).expect(NEVER_EMPTY)
    }

    /// Makes a container whose current version is `init` (a [`Pooled`] or an
    /// [`OwnedPooled`](crate::OwnedPooled) from `pool`); Go's `NewContainer`. The container
    /// keeps its own handle on `pool` (one atomic increment), so the pool's idle objects are
    /// dropped once both the container and every other handle (`pool` included) are gone.
    ///
    /// # Panics
    ///
    /// If `init` did not come from `pool` (see [`update`](Self::update)).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, OptionContainer, Pool};
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let mut init = pool.get();
    /// init.push_str("v1");
    /// let c = Container::new(&pool, init);
    /// assert_eq!(&*c.acquire(), "v1");
    /// let o = OptionContainer::new(&pool, pool.adopt(String::from("v1")));
    /// assert!(!o.is_empty());
    /// ```
    #[must_use = "a container that is dropped at once publishes nothing"]
    #[track_caller]
    pub fn new<P: Publishable<T>>(pool: &Pool<T>, init: P) -> Self {
        Self::from_raw(Raw::new(pool, init))
    }

    /// Makes a container whose current version is `value`, built elsewhere and taken into
    /// `pool` ([`Pool::adopt`]: one allocation for its node, unless a discarded object
    /// left one behind).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, OptionContainer, Pool};
    ///
    /// let pool = Pool::new(Vec::<u32>::new, Vec::clear);
    /// let c = Container::from_value(&pool, vec![1, 2, 3]);
    /// assert_eq!(c.acquire().len(), 3);
    /// let o = OptionContainer::from_value(&pool, vec![4]);
    /// assert!(!o.is_empty());
    /// ```
    #[must_use = "a container that is dropped at once publishes nothing"]
    pub fn from_value(pool: &Pool<T>, value: T) -> Self {
        Self::new(pool, pool.adopt(value))
    }

    /// A guard on the current version (for an [`OptionContainer`], `None` while it is
    /// empty); Go's `Acquire`, with its `Release` done by the guard's `Drop`; arc-swap's
    /// `load`.
    ///
    /// Never waits for a writer. Costs a thread-local load, a look for a free hazard slot
    /// of the thread (usually the first), two `Acquire` loads of the current version and a
    /// `Release` store to the slot with a light barrier between (at most a `fence(SeqCst)`;
    /// usually no instruction where the process uses `membarrier(2)`, on Linux); retries
    /// only if an update lands between the two loads. No atomic read-modify-write, no lock, no allocation. A thread's
    /// first read takes a block of 8 slots (a lock; one allocation of 128 bytes unless an
    /// exited thread left one). A thread holds up to 128 slot guards at once (taking one
    /// more block per 8); further guards take a counted reference instead, one atomic
    /// read-modify-write to make and one to drop.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 7);
    /// let v = c.acquire(); // a `Guard<u32>`
    /// assert_eq!(*v, 7);
    /// let o = OptionContainer::empty(&pool);
    /// assert!(o.acquire().is_none()); // an `Option<Guard<u32>>`
    /// ```
    #[doc(alias = "load")]
    #[inline]
    #[must_use = "a guard that is dropped at once reads nothing"]
    pub fn acquire(&self) -> F::Wrap<Guard<T>> {
        Self::wrap(self.raw.acquire())
    }

    /// Calls `f` with the current version (for an [`OptionContainer`], `None` while it is
    /// empty) and drops the guard afterwards; Go's `WithAcquire`.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, OptionContainer, Pool};
    ///
    /// let pool = Pool::new(Vec::<u8>::new, Vec::clear);
    /// let c = Container::from_value(&pool, vec![1, 2]);
    /// assert_eq!(c.with_acquire(|v| v.len()), 2);
    /// let o = OptionContainer::empty(&pool);
    /// assert_eq!(o.with_acquire(|v| v.map(Vec::len)), None);
    /// ```
    pub fn with_acquire<R>(&self, f: impl FnOnce(F::Wrap<&T>) -> R) -> R {
        let current = self.raw.acquire();
        f(Self::wrap(current.as_deref()))
    }

    /// An object from the container's pool, to fill and pass to
    /// [`update`](Self::update); Go's `GetNew`. The same as `self.pool().get()`, which
    /// says what it costs; the pool's other getters serve the other cases:
    /// `self.pool().get_owned()` for an object to fill on another thread or task,
    /// `try_get()` and `get_timeout()` for a pool with a live bound, and `get_async()` (the
    /// `async` feature) to await there.
    ///
    /// Never waits, unless the pool has a [`max_live`](crate::PoolBuilder::max_live)
    /// bound: then, at the bound, it waits until a reader lets go of an old version (see
    /// [`Pool::get`]). A writer that holds guards on old versions itself can deadlock there
    /// (`get` panics instead where it can tell: see its "Deadlocks").
    ///
    /// # Panics
    ///
    /// As [`Pool::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let c = Container::from_value(&pool, String::from("v1"));
    /// let mut next = c.get_new(); // reset: empty, with its capacity
    /// assert!(next.is_empty());
    /// next.push_str("v2");
    /// c.update(next);
    /// assert_eq!(&*c.acquire(), "v2");
    /// ```
    #[must_use = "the object goes straight back to the pool if it is dropped"]
    #[track_caller]
    pub fn get_new(&self) -> Pooled<'_, T> {
        self.raw.pool().writer().get()
    }

    /// Publishes `new` as the current version; Go's `Update`, arc-swap's `store`.
    ///
    /// Readers that acquire after this see `new`. The old version goes on its pool's
    /// retired list and returns to the pool at the first reclamation that finds no guard on
    /// it: usually the writer's next [`get_new`](Self::get_new) (see
    /// [`reclaim`](crate::reclaim()) for every moment one runs). Concurrent updates are
    /// allowed; the last one to swap wins, as in Go ([`rcu`](Self::rcu) loses none).
    ///
    /// Costs a thread-local lookup (the writer's share of the pool), one atomic increment
    /// of the pool handle (a version keeps its pool alive), a clock read, one atomic swap
    /// (`AcqRel`: publishes `new`, acquires the old version), then a lock and a push on the
    /// pool's retired list. No barrier, unless the list then holds 8 versions and twice
    /// those that guards held at its last pass: then a reclamation pass over that list (at
    /// most one heavy barrier and two loads per used hazard slot, as
    /// [`reclaim`](crate::reclaim()) costs for one list), so that reclamation costs O(1)
    /// amortised per update however many versions guards hold. Never waits for a reader; no
    /// allocation at steady state.
    /// Subscribers ([`subscribe`](Self::subscribe)): one load when the container never
    /// had one; otherwise one atomic read-modify-write more, and, if some are waiting, a
    /// lock and a wake-up of each, on this thread.
    ///
    /// # Panics
    ///
    /// If `new` came from a pool other than this container's: the container's readers rely
    /// on every version's memory belonging to the container's own pool.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u64, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let mut next = c.get_new();
    /// *next = 2;
    /// c.update(next);
    /// assert_eq!(*c.acquire(), 2);
    /// ```
    #[doc(alias = "store")]
    #[track_caller]
    pub fn update<P: Publishable<T>>(&self, new: P) {
        self.raw.update(new);
    }

    /// Publishes `new` like [`update`](Self::update) and returns a (counted) guard on
    /// the version it replaced (for an [`OptionContainer`], `None` if it was empty);
    /// arc-swap's `swap`. Costs an `update` and one atomic increment of the old version's
    /// count.
    ///
    /// # Panics
    ///
    /// If `new` came from a pool other than this container's.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let old = c.swap(pool.adopt(2));
    /// assert_eq!((*old, *c.acquire()), (1, 2));
    /// let o = OptionContainer::empty(&pool);
    /// assert!(o.swap(pool.adopt(1)).is_none());
    /// assert_eq!(o.swap(pool.adopt(2)).as_deref(), Some(&1));
    /// ```
    #[must_use = "use `update` if the old version is not needed"]
    #[track_caller]
    pub fn swap<P: Publishable<T>>(&self, new: P) -> F::Wrap<Guard<T>> {
        Self::wrap(self.raw.swap(new))
    }

    /// Publishes `new` only if the current version is still the one `expected` reads (for
    /// an [`OptionContainer`], `None`: the container is still empty); otherwise gives `new`
    /// back untouched, for the caller to refill and retry. For writers that manage their
    /// own retries; [`rcu`](Self::rcu) is the loop most want.
    ///
    /// A guard keeps its version from going back to the pool, so the comparison cannot be
    /// fooled by a reused object at the same address (no ABA).
    ///
    /// Costs: an [`update`](Self::update) whose swap is a compare-and-swap; on failure,
    /// the pool handle's increment and decrement and nothing else (no allocation).
    ///
    /// # Errors
    ///
    /// `Err(new)` if another version was published (or the container emptied) since
    /// `expected` was acquired.
    ///
    /// # Panics
    ///
    /// If `new` came from a pool other than this container's.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let seen = c.acquire();
    /// c.update(pool.adopt(2)); // another writer got there first
    /// let mut next = pool.adopt(*seen + 10);
    /// next = c.compare_and_swap(&seen, next).unwrap_err(); // refused: given back
    /// let seen = c.acquire();
    /// *next = *seen + 10;
    /// assert!(c.compare_and_swap(&seen, next).is_ok());
    /// assert_eq!(*c.acquire(), 12);
    ///
    /// let o = OptionContainer::empty(&pool);
    /// assert!(o.compare_and_swap(None, pool.adopt(1)).is_ok()); // was empty
    /// assert!(o.compare_and_swap(None, pool.adopt(2)).is_err()); // is not any more
    /// ```
    #[doc(alias = "cas")]
    #[track_caller]
    pub fn compare_and_swap<P: Publishable<T>>(
        &self,
        expected: F::Wrap<&Guard<T>>,
        new: P,
    ) -> Result<(), P> {
        self.raw
            .compare_and_swap(F::unwrap(expected).map(Guard::version), new)
    }

    /// Read-copy-update: fills an object from the pool from the current version with
    /// `f(current, next)` and publishes it, retrying on the newer version if another writer
    /// updated in between, so that concurrent `rcu`s never lose an update (a read through
    /// [`acquire`](Self::acquire) then an [`update`](Self::update) can). Returns
    /// what the successful call of `f` returned (for an [`OptionContainer`], `None` if it
    /// is empty: `f` is not called).
    ///
    /// `next` comes from the pool, already reset: to make it a copy of `current` without
    /// allocating, reuse its buffers, e.g. with
    /// [`Recycled::copy_from`](crate::recycle::Recycled::copy_from) for a `Recycled<T>`, or
    /// `clone_from` for types whose `clone_from` keeps capacity (`Vec<u64>`, `String`).
    /// `f` may run more than once; each retry gets a freshly reset object.
    ///
    /// Costs: per attempt, an `acquire`, a `get_new`, `f`, and a compare-and-swap; the
    /// successful one costs what an [`update`](Self::update) does.
    ///
    /// `f` is given both versions, and `next` is whatever the pool's reset left in it: with
    /// a reset that keeps the contents, `next` holds an older version, which `f` may bring
    /// up to date by replaying only what changed since (an operation log, as left-right
    /// applies to its second copy), in time proportional to the change and without waiting
    /// for readers.
    ///
    /// # Panics
    ///
    /// If `f` panics (the object goes back to the pool), or as [`Pool::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(Vec::<u32>::new, Vec::clear);
    /// let c = Container::from_value(&pool, vec![]);
    /// thread::scope(|s| {
    ///     for t in 0..2 {
    ///         let c = &c;
    ///         s.spawn(move || {
    ///             for i in 0..100 {
    ///                 c.rcu(|current, next| {
    ///                     next.clone_from(current); // reuses next's capacity
    ///                     next.push(t * 1000 + i);
    ///                 });
    ///             }
    ///         });
    ///     }
    /// });
    /// assert_eq!(c.acquire().len(), 200); // no update lost
    /// ```
    #[doc(alias = "read_copy_update")]
    #[track_caller]
    pub fn rcu<R>(&self, f: impl FnMut(&T, &mut T) -> R) -> F::Wrap<R> {
        Self::wrap(self.raw.rcu(f))
    }

    /// The pool this container's versions come from.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// c.pool().prefill(2); // objects for the next updates, made ahead of time
    /// assert_eq!(c.pool().stats().idle, 2);
    /// ```
    #[must_use]
    pub fn pool(&self) -> &Pool<T> {
        self.raw.pool()
    }

    /// Gives up the container, returning a (counted) guard on its last version (for an
    /// [`OptionContainer`], `None` if it is empty), which its [`Subscriber`]s keep reading
    /// as at its drop.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, OptionContainer, Pool};
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let c = Container::from_value(&pool, String::from("last"));
    /// let last = c.into_inner();
    /// assert_eq!(&*last, "last");
    /// assert!(OptionContainer::empty(&pool).into_inner().is_none());
    /// ```
    #[must_use = "a guard dropped at once lets the pool take the last version back"]
    pub fn into_inner(self) -> F::Wrap<Guard<T>> {
        let mut raw = self.raw;
        // Before the take: the subscribers keep this version, not an empty container.
        raw.close_subscribers();
        Self::wrap(raw.take())
    }
}

impl<T> OptionContainer<T> {
    /// Makes an empty container: [`acquire`](ContainerAny::acquire) returns `None` until
    /// the first [`update`](ContainerAny::update). Go's `NewEmptyContainer`.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = OptionContainer::empty(&pool);
    /// assert!(c.is_empty());
    /// ```
    #[must_use = "a container that is dropped at once publishes nothing"]
    pub fn empty(pool: &Pool<T>) -> OptionContainer<T> {
        Self::from_raw(Raw::empty(pool))
    }

    /// Empties the container and returns a guard on the version it held; Go's
    /// `Update(nil)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = OptionContainer::from_value(&pool, 9);
    /// assert_eq!(c.take().as_deref(), Some(&9));
    /// assert!(c.acquire().is_none());
    /// ```
    #[must_use = "a guard dropped at once lets the pool take the old version back; use `update` if that is the point"]
    pub fn take(&self) -> Option<Guard<T>> {
        self.raw.take()
    }

    /// Whether the container holds no version now (another thread may change that at
    /// any moment).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = OptionContainer::empty(&pool);
    /// assert!(c.is_empty());
    /// c.update(pool.adopt(1));
    /// assert!(!c.is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
}

/// A container that always holds a version, seen as one that may be empty. The
/// `Container`'s subscribers are closed: they keep reading the version it holds now.
///
/// # Examples
///
/// ```
/// use poolswap::{Container, OptionContainer, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let c = OptionContainer::from(Container::from_value(&pool, 1));
/// assert!(c.take().is_some());
/// ```
impl<T> From<Container<T>> for OptionContainer<T> {
    fn from(c: Container<T>) -> OptionContainer<T> {
        let mut raw = c.raw;
        // Its subscribers are a `Container`'s: they keep the version it holds now.
        raw.close_subscribers();
        OptionContainer::from_raw(raw)
    }
}

/// Shows the current version as [`acquire`](ContainerAny::acquire) returns it (for an
/// [`OptionContainer`], an `Option`), as `RwLock`'s `Debug` shows its value.
impl<T: fmt::Debug, F: Flavour> fmt::Debug for ContainerAny<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let current = self.raw.acquire();
        let mut out = f.debug_struct(F::NAME);
        match current.as_deref() {
            // As this flavour's `acquire` returns it: the value, or an `Option` of it.
            Some(value) if !F::MAY_BE_EMPTY => out.field("current", value),
            current => out.field("current", &current),
        };
        out.field("pool", self.raw.pool()).finish()
    }
}

#[cfg(test)]
#[cfg(not(loom))]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_current_version_as_acquire_returns_it() {
        let pool = Pool::new(|| 0u32, |n| *n = 0);
        let c = Container::from_value(&pool, 1);
        assert!(format!("{c:?}").starts_with("Container { current: 1, pool: "));
        let o = OptionContainer::from_value(&pool, 2);
        assert!(format!("{o:?}").starts_with("OptionContainer { current: Some(2), pool: "));
        drop(o.take());
        assert!(format!("{o:?}").starts_with("OptionContainer { current: None, pool: "));
    }
}
