//! The container: the current version of a shared object, and read guards on it.
//!
//! This file is the public front: [`Container`] and [`OptionContainer`], two thin flavours
//! of one private state and protocol (Go's poolswap `Container`, whose `Acquire`/`Release`
//! and `GetNew`/`Update` they follow), and the re-exports of the children's public types:
//!
//! | module | what |
//! |---|---|
//! | `raw` | `Raw`, the state and lock-free protocol both flavours share |
//! | `guard` | `Guard` with its trait impls, and `MappedGuard` |
//! | `cache` | `Cache`, a per-thread reader that re-acquires only when the version changed |
//! | `subscribe` | `Subscriber`, a reader that waits for the next version, and `Closed` |
//! | `wakers` | the list of tasks awaiting `Subscriber::changed` (feature `async`) |
//!
//! Every method of the two flavours is one line that delegates to `Raw` (or to its pool);
//! they differ in what they return (`Guard<T>` or `Option<Guard<T>>`).

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};

mod cache;
mod guard;
mod raw;
mod subscribe;
#[cfg(all(feature = "async", not(loom)))]
mod wakers;

pub use self::cache::Cache;
pub use self::guard::{Guard, MappedGuard};
use self::raw::Raw;
pub use self::subscribe::{Closed, Subscriber, Watched};
use crate::pool::{Pool, Pooled, Publishable};
use crate::recycle::{Recycle, Recycled};

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
pub struct Container<T> {
    /// Never empty: filled at construction, and nothing here stores null.
    raw: Raw<T>,
}

// SAFETY: the container owns a reference on a `T` that many threads read (`T: Sync`) and
// that any thread may end up returning to the pool (`T: Send`). `Pool<T>` needs `T: Send`.
unsafe impl<T: Send + Sync> Send for Container<T> {}
// SAFETY: `&Container` hands out guards, i.e. `&T` on any thread and the last release on any
// thread: the same bounds.
unsafe impl<T: Send + Sync> Sync for Container<T> {}

// A panic cannot leave a container half-updated: every change is one atomic store of a
// whole version, and guards only read. As for `ArcSwap` and `Arc`. Manual: the raw
// pointers and atomics of `Raw` and the pool's cells would make the auto impls stricter.
impl<T: RefUnwindSafe> UnwindSafe for Container<T> {}
impl<T: RefUnwindSafe> RefUnwindSafe for Container<T> {}

/// The message of the one `expect` that the non-empty invariant makes unreachable.
const NEVER_EMPTY: &str = "poolswap: a Container is never empty";

impl<T> Container<T> {
    /// Makes a container whose current version is `init` (a [`Pooled`] or an
    /// [`OwnedPooled`](crate::OwnedPooled) from `pool`); Go's `NewContainer`. The container
    /// keeps its own handle on `pool` (one atomic increment), so the pool's idle objects are
    /// dropped once both the container and every other handle (`pool` included) are gone.
    ///
    /// # Panics
    ///
    /// If `init` did not come from `pool` (see [`update`](Container::update)).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let mut init = pool.get();
    /// init.push_str("v1");
    /// let c = Container::new(&pool, init);
    /// assert_eq!(&*c.acquire(), "v1");
    /// ```
    #[must_use = "a container that is dropped at once publishes nothing"]
    #[track_caller]
    pub fn new<P: Publishable<T>>(pool: &Pool<T>, init: P) -> Container<T> {
        Container {
            raw: Raw::new(pool, init),
        }
    }

    /// Makes a container whose current version is `value`, built elsewhere and taken into
    /// `pool` ([`Pool::adopt`]: one allocation for its node, unless a discarded object
    /// left one behind).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(Vec::<u32>::new, Vec::clear);
    /// let c = Container::from_value(&pool, vec![1, 2, 3]);
    /// assert_eq!(c.acquire().len(), 3);
    /// ```
    #[must_use = "a container that is dropped at once publishes nothing"]
    pub fn from_value(pool: &Pool<T>, value: T) -> Container<T> {
        Container::new(pool, pool.adopt(value))
    }

    /// A guard on the current version; Go's `Acquire`, with its `Release` done by the
    /// guard's `Drop`; arc-swap's `load`.
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
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 7);
    /// let v = c.acquire();
    /// assert_eq!(*v, 7);
    /// ```
    #[doc(alias = "load")]
    #[inline]
    #[must_use = "a guard that is dropped at once reads nothing"]
    pub fn acquire(&self) -> Guard<T> {
        self.raw.acquire().expect(NEVER_EMPTY)
    }

    /// Calls `f` with the current version and drops the guard afterwards; Go's
    /// `WithAcquire`.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(Vec::<u8>::new, Vec::clear);
    /// let c = Container::from_value(&pool, vec![1, 2]);
    /// assert_eq!(c.with_acquire(|v| v.len()), 2);
    /// ```
    pub fn with_acquire<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.acquire())
    }

    /// An object from the container's pool, to fill and pass to
    /// [`update`](Container::update); Go's `GetNew`. The same as `self.pool().get()`, which
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
        self.raw.pool().get()
    }

    /// Publishes `new` as the current version; Go's `Update`, arc-swap's `store`.
    ///
    /// Readers that acquire after this see `new`. The old version goes on its pool's
    /// retired list and returns to the pool at the first reclamation that finds no guard on
    /// it: usually the writer's next [`get_new`](Container::get_new) (see
    /// [`reclaim`](crate::reclaim()) for every moment one runs). Concurrent updates are
    /// allowed; the last one to swap wins, as in Go ([`rcu`](Container::rcu) loses none).
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
    /// Subscribers ([`subscribe`](Container::subscribe)): one load when the container never
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

    /// Publishes `new` like [`update`](Container::update) and returns a (counted) guard on
    /// the version it replaced; arc-swap's `swap`. Costs an `update` and one atomic
    /// increment of the old version's count.
    ///
    /// # Panics
    ///
    /// If `new` came from a pool other than this container's.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let old = c.swap(pool.adopt(2));
    /// assert_eq!((*old, *c.acquire()), (1, 2));
    /// ```
    #[must_use = "use `update` if the old version is not needed"]
    #[track_caller]
    pub fn swap<P: Publishable<T>>(&self, new: P) -> Guard<T> {
        self.raw.swap(new).expect(NEVER_EMPTY)
    }

    /// Publishes `new` only if the current version is still the one `expected` reads;
    /// otherwise gives `new` back untouched, for the caller to refill and retry. For
    /// writers that manage their own retries; [`rcu`](Container::rcu) is the loop most
    /// want.
    ///
    /// A guard keeps its version from going back to the pool, so the comparison cannot be
    /// fooled by a reused object at the same address (no ABA).
    ///
    /// Costs: an [`update`](Container::update) whose swap is a compare-and-swap; on failure,
    /// the pool handle's increment and decrement and nothing else (no allocation).
    ///
    /// # Errors
    ///
    /// `Err(new)` if another version was published since `expected` was acquired.
    ///
    /// # Panics
    ///
    /// If `new` came from a pool other than this container's.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
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
    /// ```
    #[doc(alias = "cas")]
    #[track_caller]
    pub fn compare_and_swap<P: Publishable<T>>(
        &self,
        expected: &Guard<T>,
        new: P,
    ) -> Result<(), P> {
        self.raw
            .compare_and_swap(Some(Guard::version(expected)), new)
    }

    /// Read-copy-update: fills an object from the pool from the current version with
    /// `f(current, next)` and publishes it, retrying on the newer version if another writer
    /// updated in between, so that concurrent `rcu`s never lose an update (a read through
    /// [`acquire`](Container::acquire) then an [`update`](Container::update) can). Returns
    /// what the successful call of `f` returned.
    ///
    /// `next` comes from the pool, already reset: to make it a copy of `current` without
    /// allocating, reuse its buffers, e.g. with
    /// [`Recycled::copy_from`](crate::recycle::Recycled::copy_from) for a `Recycled<T>`, or
    /// `clone_from` for types whose `clone_from` keeps capacity (`Vec<u64>`, `String`).
    /// `f` may run more than once; each retry gets a freshly reset object.
    ///
    /// Costs: per attempt, an `acquire`, a `get_new`, `f`, and a compare-and-swap; the
    /// successful one costs what an [`update`](Container::update) does.
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
    pub fn rcu<R>(&self, f: impl FnMut(&T, &mut T) -> R) -> R {
        self.raw.rcu(f).expect(NEVER_EMPTY)
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
    /// assert!(Pool::ptr_eq(c.pool(), &pool));
    /// ```
    #[must_use]
    pub fn pool(&self) -> &Pool<T> {
        self.raw.pool()
    }

    /// Gives up the container, returning a (counted) guard on its last version, which its
    /// [`Subscriber`]s keep reading as at its drop.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let c = Container::from_value(&pool, String::from("last"));
    /// let last = c.into_inner();
    /// assert_eq!(&*last, "last");
    /// ```
    #[must_use = "the last version goes back to the pool if the guard is dropped"]
    pub fn into_inner(self) -> Guard<T> {
        let mut raw = self.raw;
        // Before the take: the subscribers keep this version, not an empty container.
        raw.close_subscribers();
        raw.take().expect(NEVER_EMPTY)
    }
}

/// Shows the current version, as `RwLock`'s `Debug` shows its value.
impl<T: fmt::Debug> fmt::Debug for Container<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Container")
            .field("current", &*self.acquire())
            .field("pool", self.raw.pool())
            .finish()
    }
}

/// A container holding an empty `Recycled<T>`, on a [default pool](Pool::default).
///
/// # Examples
///
/// ```
/// use poolswap::{Container, Recycled};
///
/// let c: Container<Recycled<Vec<String>>> = Container::default();
/// let mut next = c.get_new();
/// next.push("a".into());
/// c.update(next);
/// assert_eq!(c.acquire().len(), 1);
/// ```
impl<T: Recycle + Default> Default for Container<Recycled<T>> {
    fn default() -> Self {
        Container::from_value(&Pool::default(), Recycled::default())
    }
}

/// A container that may be empty, like Go's: reads return an `Option`. Made empty by
/// [`empty`](OptionContainer::empty) (Go's `NewEmptyContainer`) or emptied by
/// [`take`](OptionContainer::take) (Go's `Update(nil)`). Everything else is as in
/// [`Container`], with the same costs; arc-swap's `ArcSwapOption` is the model.
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
pub struct OptionContainer<T> {
    raw: Raw<T>,
}

// SAFETY: as for `Container`.
unsafe impl<T: Send + Sync> Send for OptionContainer<T> {}
// SAFETY: as for `Container`.
unsafe impl<T: Send + Sync> Sync for OptionContainer<T> {}

// As for `Container`.
impl<T: RefUnwindSafe> UnwindSafe for OptionContainer<T> {}
impl<T: RefUnwindSafe> RefUnwindSafe for OptionContainer<T> {}

impl<T> OptionContainer<T> {
    /// Makes an empty container: [`acquire`](OptionContainer::acquire) returns `None` until
    /// the first [`update`](OptionContainer::update). Go's `NewEmptyContainer`.
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
        OptionContainer {
            raw: Raw::empty(pool),
        }
    }

    /// Makes a container whose current version is `init`, as [`Container::new`].
    ///
    /// # Panics
    ///
    /// If `init` did not come from `pool`.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = OptionContainer::new(&pool, pool.adopt(3));
    /// assert_eq!(c.acquire().as_deref(), Some(&3));
    /// ```
    #[must_use = "a container that is dropped at once publishes nothing"]
    #[track_caller]
    pub fn new<P: Publishable<T>>(pool: &Pool<T>, init: P) -> OptionContainer<T> {
        OptionContainer {
            raw: Raw::new(pool, init),
        }
    }

    /// Makes a container whose current version is `value`, as [`Container::from_value`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = OptionContainer::from_value(&pool, 3);
    /// assert!(!c.is_empty());
    /// ```
    #[must_use = "a container that is dropped at once publishes nothing"]
    pub fn from_value(pool: &Pool<T>, value: T) -> OptionContainer<T> {
        OptionContainer::new(pool, pool.adopt(value))
    }

    /// A guard on the current version, or `None` while the container is empty; Go's
    /// `Acquire`, arc-swap's `load`. Costs as [`Container::acquire`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = OptionContainer::from_value(&pool, 7);
    /// assert_eq!(*c.acquire().expect("not empty"), 7);
    /// ```
    #[doc(alias = "load")]
    #[inline]
    #[must_use = "a guard that is dropped at once reads nothing"]
    pub fn acquire(&self) -> Option<Guard<T>> {
        self.raw.acquire()
    }

    /// Calls `f` with the current version (or `None` while empty) and drops the guard
    /// afterwards; Go's `WithAcquire`.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(Vec::<u8>::new, Vec::clear);
    /// let c = OptionContainer::empty(&pool);
    /// assert_eq!(c.with_acquire(|v| v.map(Vec::len)), None);
    /// ```
    pub fn with_acquire<R>(&self, f: impl FnOnce(Option<&T>) -> R) -> R {
        f(self.acquire().as_deref())
    }

    /// An object from the container's pool, as [`Container::get_new`] (which says when it
    /// can wait).
    ///
    /// # Panics
    ///
    /// As [`Pool::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let c = OptionContainer::empty(&pool);
    /// let mut next = c.get_new();
    /// next.push_str("v1");
    /// c.update(next);
    /// assert!(!c.is_empty());
    /// ```
    #[must_use = "the object goes straight back to the pool if it is dropped"]
    #[track_caller]
    pub fn get_new(&self) -> Pooled<'_, T> {
        self.raw.pool().get()
    }

    /// Publishes `new` as the current version, as [`Container::update`] (which says what it
    /// costs); Go's `Update`, arc-swap's `store`.
    ///
    /// # Panics
    ///
    /// If `new` came from a pool other than this container's.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = OptionContainer::empty(&pool);
    /// c.update(pool.adopt(5));
    /// assert_eq!(c.acquire().as_deref(), Some(&5));
    /// ```
    #[doc(alias = "store")]
    #[track_caller]
    pub fn update<P: Publishable<T>>(&self, new: P) {
        self.raw.update(new);
    }

    /// Publishes `new` and returns a guard on the version it replaced (`None` if the
    /// container was empty), as [`Container::swap`].
    ///
    /// # Panics
    ///
    /// If `new` came from a pool other than this container's.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = OptionContainer::empty(&pool);
    /// assert!(c.swap(pool.adopt(1)).is_none());
    /// assert_eq!(c.swap(pool.adopt(2)).as_deref(), Some(&1));
    /// ```
    #[must_use = "use `update` if the old version is not needed"]
    #[track_caller]
    pub fn swap<P: Publishable<T>>(&self, new: P) -> Option<Guard<T>> {
        self.raw.swap(new)
    }

    /// Publishes `new` only if the current version is still the one `expected` reads
    /// (`None`: the container is still empty), as [`Container::compare_and_swap`].
    ///
    /// # Errors
    ///
    /// `Err(new)` if the container changed since `expected` was acquired.
    ///
    /// # Panics
    ///
    /// If `new` came from a pool other than this container's.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = OptionContainer::empty(&pool);
    /// assert!(c.compare_and_swap(None, pool.adopt(1)).is_ok()); // was empty
    /// assert!(c.compare_and_swap(None, pool.adopt(2)).is_err()); // is not any more
    /// ```
    #[doc(alias = "cas")]
    #[track_caller]
    pub fn compare_and_swap<P: Publishable<T>>(
        &self,
        expected: Option<&Guard<T>>,
        new: P,
    ) -> Result<(), P> {
        self.raw.compare_and_swap(expected.map(Guard::version), new)
    }

    /// Read-copy-update, as [`Container::rcu`]; `None` if the container is empty (`f` is
    /// not called).
    ///
    /// # Panics
    ///
    /// If `f` panics, or as [`Pool::get`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = OptionContainer::from_value(&pool, 1);
    /// assert_eq!(c.rcu(|cur, next| { *next = cur + 1; *next }), Some(2));
    /// ```
    #[doc(alias = "read_copy_update")]
    #[track_caller]
    pub fn rcu<R>(&self, f: impl FnMut(&T, &mut T) -> R) -> Option<R> {
        self.raw.rcu(f)
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
    #[must_use = "the old version goes back to the pool if the guard is dropped; drop it explicitly if that is the point"]
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

    /// The pool this container's versions come from.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = OptionContainer::empty(&pool);
    /// assert_eq!(c.pool().stats().created, 0);
    /// ```
    #[must_use]
    pub fn pool(&self) -> &Pool<T> {
        self.raw.pool()
    }

    /// Gives up the container, returning a guard on its last version (`None` if empty),
    /// which its [`Subscriber`]s keep reading as at its drop.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = OptionContainer::from_value(&pool, 4);
    /// assert_eq!(c.into_inner().as_deref(), Some(&4));
    /// ```
    #[must_use = "the last version goes back to the pool if the guard is dropped"]
    pub fn into_inner(self) -> Option<Guard<T>> {
        let mut raw = self.raw;
        // As for `Container::into_inner`.
        raw.close_subscribers();
        raw.take()
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
        OptionContainer { raw }
    }
}

/// Shows the current version (or `None`), as `RwLock<Option<T>>`'s `Debug` would.
impl<T: fmt::Debug> fmt::Debug for OptionContainer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OptionContainer")
            .field("current", &self.acquire().as_deref())
            .field("pool", self.raw.pool())
            .finish()
    }
}
