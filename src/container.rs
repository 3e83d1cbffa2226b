//! The container: the current version of a shared object, and read guards on it.
//!
//! The container holds one counted reference on its current version and a pointer to it in
//! `current`. Readers normally hold no counted reference at all: a [`Guard`] is a *hazard
//! slot* of the reading thread that names the version (see `hazard.rs`), and the version
//! goes back to its pool once no slot names it and no counted reference is left. Go's
//! original takes a read lock around "load the pointer, increment its count"; here neither
//! is needed on the fast path.
//!
//! # Reader (`acquire`)
//!
//! With a free slot in the thread's block (the fast path; no atomic read-modify-write, no
//! lock, no write to a line another reader reads):
//!
//! 1. Load `current` (`Acquire`: makes the version's contents visible).
//! 2. Store the pointer in the slot and issue the light barrier (`barrier.rs`).
//! 3. Re-load `current` (`Acquire`). The same pointer: return a guard on it. Another: empty
//!    the slot and start over with the new pointer.
//!
//! Without one (all [`SLOTS`](crate::hazard::SLOTS) held by this thread's guards, or the
//! thread is exiting), a *counted* guard, as before hazard slots:
//!
//! 1. Load `current` (`Acquire`: makes the node's memory visible).
//! 2. Increment the node's count *unless it is zero*
//!    ([`RefCount::try_increment`](crate::refcount::RefCount::try_increment), `Acquire`).
//!    A zero count means idle: nothing is written, start over.
//! 3. Re-load `current` (`Acquire`). The same pointer: return a counted guard. Another:
//!    drop the reference (if it was the last, recycle the node, as any last holder does)
//!    and start over.
//!
//! Neither reader reads the object before its step 3 succeeds. Nodes are type-stable (see
//! `pool/node.rs`): a node's memory lives while its pool has a handle, and the container
//! holds one, so steps 1-3 may touch a node that was recycled meanwhile.
//!
//! # Writer (`update`, `swap`, `take`)
//!
//! 1. Mark the filled [`Pooled`]'s node published, with its keepalive (the pool) and its
//!    home depot (the writer's).
//! 2. `swap` it into `current` (`AcqRel`): its reference becomes the container's.
//! 3. Hand the container's reference on the old version to the retired list
//!    (`hazard::retire`), which drops it once no slot protects the old version; whoever
//!    drops the last counted reference returns the node to its home depot. The writer
//!    never waits: a version still protected stays on the list, and the last guard to let
//!    go of it collects it (in `Fence` mode, in a rare race, the next collection does:
//!    `hazard.rs`, "Guard drop").
//!
//! # A recycled node (the ABA case)
//!
//! Between steps 1 and 3 of a reader, the node may be retired, recycled and handed out
//! again, even published anew.
//!
//! - Hazard slot: a node is recycled only after a heavy barrier that follows its
//!   retirement; a reader whose light barrier precedes it is seen in its slot, and one whose
//!   light barrier follows re-loads a newer `current` (`hazard.rs`, "Why a recycled node is
//!   never read"). If step 3 sees the same address, it is the version published anew, and
//!   its `Acquire` makes the new contents visible.
//! - Counted: if step 2 read a count from before the node was recycled, the reader's
//!   reference keeps the node from being recycled at all. If it read a count written after,
//!   it read (or followed, in the release sequence) the `Release` store of
//!   [`RefCount::reset_to_one`](crate::refcount::RefCount::reset_to_one) made by whoever
//!   took the node from the pool. That taker's view includes the swap that retired the
//!   node's old version (the swap happened before the last decrement, which happened before
//!   the free-list push, which happened before the pop). So step 3 cannot read the pointer
//!   from before that swap: it sees another pointer (and lets go), or the same pointer from
//!   a later store that published the node anew, whose contents its `Acquire` makes
//!   visible.
//!
//! # Orderings
//!
//! - `current`: loads `Acquire`, swap `AcqRel` (publishes the new version, acquires the
//!   old one's contents for the guard `swap` returns).
//! - Slots and barriers: see `hazard.rs`.
//! - The count: `Arc`'s orderings, plus `try_increment` `Acquire` and `reset_to_one`
//!   `Release` for the ABA case (see `refcount.rs`).
//!
//! The loom models in `tests/loom.rs` check this protocol against updates, releases and
//! collections, with both barriers as `fence(SeqCst)`.

use std::borrow::Borrow;
use std::cmp::Ordering as CmpOrdering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::Deref;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::hazard::{self, Slot};
use crate::pool::shared::{self, PoolNode};
use crate::pool::{self, OwnedPooled, Pool, Pooled, Publishable};
use crate::sync::{self, Arc, AtomicPtr, Ordering};

/// The state and protocol both container flavours share: `current` (null while empty) and
/// the pool. [`Container`] keeps `current` non-null from construction on; an
/// [`OptionContainer`] may be empty.
struct Raw<T> {
    /// The current version, or null while empty. Holds one reference on it.
    current: CachePadded<AtomicPtr<PoolNode<T>>>,
    /// Every version published here comes from this pool, whose node memory outlives
    /// `&self`: the reader protocol depends on it (see the module docs).
    pool: Pool<T>,
}

impl<T> Raw<T> {
    /// An empty container on its own handle of `pool`.
    fn empty(pool: &Pool<T>) -> Raw<T> {
        // Before any reader of this container can exist: see `barrier.rs`.
        crate::barrier::init();
        Raw {
            current: CachePadded::new(AtomicPtr::new(ptr::null_mut())),
            pool: pool.clone(),
        }
    }

    /// A container holding `init`.
    fn new<P: Publishable<T>>(pool: &Pool<T>, init: P) -> Raw<T> {
        let raw = Raw::empty(pool);
        raw.update(init);
        raw
    }

    /// A guard on the current version, or `None` while empty.
    #[inline]
    fn acquire(&self) -> Option<Guard<T>> {
        match hazard::free_slot() {
            Some(slot) => self.acquire_protected(slot),
            None => self.acquire_counted(),
        }
    }

    /// The reader's fast path (module docs, "Reader"): protects the current version with
    /// `slot`, a free slot of this thread's block.
    #[inline]
    fn acquire_protected(&self, slot: &'static Slot) -> Option<Guard<T>> {
        // Acquire: makes the version's contents visible (pairs with the Release half of
        // `swap`).
        let mut node = self.current.load(Ordering::Acquire);
        loop {
            let protect = NonNull::new(node)?;
            slot.protect(protect.cast());
            // Acquire: as above; after the light barrier, see `hazard.rs`.
            let again = self.current.load(Ordering::Acquire);
            if again == node {
                // The re-loaded pointer, not `protect`: the same address, but its
                // provenance is the store that published the version now current.
                return NonNull::new(again).map(|node| Guard::protected(node, slot));
            }
            hazard::clear(slot);
            node = again;
        }
    }

    /// The reader's fallback: a counted reference (module docs, "Reader").
    #[cold]
    #[inline(never)]
    fn acquire_counted(&self) -> Option<Guard<T>> {
        loop {
            // Acquire: makes the node's memory and, if it is still current, the version's
            // contents visible (pairs with the Release half of `swap`).
            let node = self.current.load(Ordering::Acquire);
            let node = NonNull::new(node)?;
            // SAFETY: every node ever stored in `current` belongs to `self.pool`, whose
            // node memory lives as long as the pool, which `&self` keeps alive.
            let refs = unsafe { PoolNode::refs_at(node.as_ptr()) };
            if refs.try_increment() {
                // Acquire: see the module docs: this load cannot return a value older than
                // the swap that retired the node we now hold, if it was retired.
                if self.current.load(Ordering::Acquire) == node.as_ptr() {
                    return Some(Guard::counted(node));
                }
                // SAFETY: `try_increment` gave this thread a reference; hand it back. The
                // node may now be held by a `Pooled` (no `home`), so name its pool: ours.
                unsafe { shared::release(node, Some(self.pool.shared())) };
            }
            sync::spin_hint();
        }
    }

    /// Publishes `new` and retires the old version.
    fn update<P: Publishable<T>>(&self, new: P) {
        // The guard's pool handle (a reference, or an owned handle dropped here) is not
        // needed: the node's keepalive and the container's handle hold the pool.
        let (node, _handle) = self.publish(new);
        if let Some(old) = self.replace(node.as_ptr()) {
            Self::retire(old);
        }
    }

    /// [`update`](Raw::update), returning a counted guard on the old version.
    fn swap<P: Publishable<T>>(&self, new: P) -> Option<Guard<T>> {
        let (node, _handle) = self.publish(new);
        let old = self.replace(node.as_ptr())?;
        Some(Self::retire_with_guard(old))
    }

    /// Marks `new` published in this container, and returns its node and the pool handle
    /// the guard held (for [`compare_and_swap`](Raw::compare_and_swap) to rebuild it);
    /// panics if it came from another pool.
    fn publish<P: Publishable<T>>(&self, new: P) -> (NonNull<PoolNode<T>>, P::Handle) {
        assert!(
            Pool::ptr_eq(new.pool_of(), &self.pool),
            "poolswap: a container was given an object from another pool to publish; \
             use this container's `get_new()` or `pool().adopt(value)`"
        );
        let (node, handle) = new.into_raw();
        let node = node.cast::<PoolNode<T>>();
        pool::publish(node, Arc::clone(self.pool.shared()));
        (node, handle)
    }

    /// Publishes `new` if `current` is still `expected`; gives it back otherwise.
    fn compare_and_swap<P: Publishable<T>>(
        &self,
        expected: *mut PoolNode<T>,
        new: P,
    ) -> Result<(), P> {
        let (node, handle) = self.publish(new);
        // AcqRel on success, as `replace`. Relaxed on failure: nothing is read through the
        // value seen, and `node` was never visible.
        match self.current.compare_exchange(
            expected,
            node.as_ptr(),
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(old) => {
                if let Some(old) = NonNull::new(old) {
                    Self::retire(old);
                }
                Ok(())
            }
            Err(_) => {
                // SAFETY: `node` was published just above and never stored in `current`.
                unsafe { pool::unpublish(node) };
                // SAFETY: `node` and `handle` came from `into_raw` of a `P`, and the node
                // is checked out again.
                Err(unsafe { P::from_raw(node.cast(), handle) })
            }
        }
    }

    /// Read-copy-update; `None` (and `f` not called) while empty.
    fn rcu<R>(&self, mut f: impl FnMut(&T, &mut T) -> R) -> Option<R> {
        let mut current = self.acquire()?;
        loop {
            let mut next = self.pool.get();
            let result = f(&current, &mut next);
            match self.compare_and_swap(current.node.as_ptr(), next) {
                Ok(()) => return Some(result),
                // Dropping `next` returns it to the pool, where the next `get` finds it.
                Err(next) => drop(next),
            }
            current = self.acquire()?;
        }
    }

    /// Empties the container; a counted guard on the version it held.
    fn take(&self) -> Option<Guard<T>> {
        let old = self.replace(ptr::null_mut())?;
        Some(Self::retire_with_guard(old))
    }

    /// Stores `new` (null, or a published node carrying the container's reference) as the
    /// current version, and returns the old one, with the container's counted reference.
    fn replace(&self, new: *mut PoolNode<T>) -> Option<NonNull<PoolNode<T>>> {
        // AcqRel. Release: readers that load `new` see it filled. Acquire: the old version's
        // contents, published by an earlier swap, are visible to the guard `swap` returns.
        NonNull::new(self.current.swap(new, Ordering::AcqRel))
    }

    /// Hands the container's reference on `old`, no longer current, to the retired list.
    fn retire(old: NonNull<PoolNode<T>>) {
        // SAFETY: the caller passes the container's counted reference on `old`, which it
        // just swapped out; `release_retired::<T>` drops exactly one such reference.
        unsafe { hazard::retire(old.cast(), release_retired::<T>) }
    }

    /// [`retire`](Self::retire), keeping a counted guard on `old` for the caller.
    fn retire_with_guard(old: NonNull<PoolNode<T>>) -> Guard<T> {
        // SAFETY: the container's reference keeps the node live while we add one.
        unsafe { old.as_ref() }.refs.increment();
        let guard = Guard::counted(old);
        Self::retire(old);
        guard
    }

    fn is_empty(&self) -> bool {
        // Relaxed: an instantaneous reading; nothing is dereferenced.
        self.current.load(Ordering::Relaxed).is_null()
    }
}

impl<T> Drop for Raw<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

/// The current version of a heavy, read-mostly object, readable without waiting and
/// replaceable without allocating. Always holds a version: reads return a [`Guard`], not an
/// `Option` (see [`OptionContainer`] for one that may be empty, like Go's).
///
/// Readers [`acquire`](Container::acquire) a [`Guard`] on the current version; a writer takes
/// an object from the pool with [`get_new`](Container::get_new), fills it, and publishes it
/// with [`update`](Container::update). The old version goes back to the pool when its last
/// guard is dropped, and is reset when the pool next hands it out — never while a guard on
/// it exists.
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
/// - [`acquire`](Container::acquire): a thread-local load, a look for a free hazard slot
///   of the thread (usually the first), two loads of the current pointer and one store to
///   the slot, with a light barrier between (no instruction in
///   [`BarrierMode::Membarrier`](crate::BarrierMode), a `fence(SeqCst)` otherwise); no
///   atomic read-modify-write, no lock, no allocation, and no write to a cache line that
///   another reader reads. Retries only if an update lands between its two loads. Dropping
///   the guard: a store to its slot and a load of the slot's `help` flag (same cache line),
///   no barrier instruction in either mode. A thread's first read registers it (a lock
///   and, if no exited thread left a block behind, one allocation of 128 bytes per
///   [`HAZARD_SLOTS`](crate::HAZARD_SLOTS) slots).
/// - [`update`](Container::update): a thread-local lookup (the writer's share of the pool,
///   where the version will go back to), one atomic increment of the pool handle (a version
///   keeps its pool alive for guards that outlive it), one atomic swap, then the retired
///   list: a process-wide lock, a heavy barrier (`membarrier`: an interrupt to every CPU
///   running a thread of this process; or a fence), and a look at every slot of every
///   thread that ever read (`HAZARD_SLOTS` loads per thread). If no slot holds the old
///   version and no counted guard does, its return to the depot of the thread that
///   published it: one budget read-modify-write, one lock, and the pool handle's decrement.
///   If some guard still holds it, the writer does not wait: the last guard to let go
///   returns it (never resets it: the reset runs in the writer's next `get_new`); in
///   [`BarrierMode::Fence`](crate::BarrierMode::Fence), if that drop races with this
///   collection, the next collection does (see [`reclaim`](crate::reclaim)). No
///   allocation at steady state (the retired list keeps its capacity), except on a thread's
///   first use of the pool (see [`Pool`]'s costs).
///
/// # Send and Sync
///
/// `Send + Sync` when `T: Send + Sync`: readers on many threads share `&T`, and the last
/// one to let go hands the `T` to the pool for another thread to reuse.
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
// whole version, and guards only read. As for `ArcSwap` and `Arc`.
impl<T: RefUnwindSafe> UnwindSafe for Container<T> {}
impl<T: RefUnwindSafe> RefUnwindSafe for Container<T> {}

/// The message of the one `expect` that the non-empty invariant makes unreachable.
const NEVER_EMPTY: &str = "poolswap: a Container is never empty";

impl<T> Container<T> {
    /// Makes a container whose current version is `init` (a [`Pooled`] or an
    /// [`OwnedPooled`] from `pool`); Go's `NewContainer`. The container
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
    /// guard's `Drop`.
    ///
    /// Never waits for a writer and never allocates (after the thread's first read). See
    /// the type's docs for its cost.
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
    /// [`update`](Container::update); Go's `GetNew`. The same as `self.pool().get()`.
    ///
    /// Never waits, unless the pool has a [`max_live`](crate::PoolBuilder::max_live)
    /// bound: then, at the bound, it waits until a reader lets go of an old version (see
    /// [`Pool::get`], and [`try_get_new`](Container::try_get_new) for one that does not
    /// wait). A writer that holds guards on old versions itself can deadlock there.
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
    pub fn get_new(&self) -> Pooled<'_, T> {
        self.raw.pool.get()
    }

    /// [`get_new`](Container::get_new), returning an [`OwnedPooled`]
    /// that can be filled on another thread or task (`'static`). Waits as `get_new` does.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let c = Arc::new(Container::from_value(&pool, String::from("v1")));
    /// let mut next = c.get_new_owned();
    /// let filled = std::thread::spawn(move || {
    ///     next.push_str("v2");
    ///     next
    /// });
    /// c.update(filled.join().unwrap());
    /// assert_eq!(&*c.acquire(), "v2");
    /// ```
    #[must_use = "the object goes straight back to the pool if it is dropped"]
    pub fn get_new_owned(&self) -> OwnedPooled<T> {
        self.raw.pool.get_owned()
    }

    /// [`get_new`](Container::get_new) that never waits: `None` when the pool's
    /// [`max_live`](crate::PoolBuilder::max_live) bound is reached and no object is idle
    /// ([`Pool::try_get`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::builder(|| 0u64, |n: &mut u64| *n = 0).max_live(2).build();
    /// let c = Container::from_value(&pool, 1); // one object is the current version
    /// let reader = c.acquire();
    /// let next = c.try_get_new().expect("the second object");
    /// c.update(next); // version 1 is retired, but `reader` still reads it
    /// assert!(c.try_get_new().is_none()); // both objects are in use
    /// drop(reader); // version 1 goes back to the pool
    /// assert!(c.try_get_new().is_some());
    /// ```
    #[must_use = "the object goes straight back to the pool if it is dropped"]
    pub fn try_get_new(&self) -> Option<Pooled<'_, T>> {
        self.raw.pool.try_get()
    }

    /// Publishes `new` as the current version; Go's `Update`.
    ///
    /// Readers that acquire after this see `new`. The old version returns to the pool when
    /// its last guard drops — during this call if none exists, or a moment after it if
    /// another thread's collection picked it up first. Concurrent updates are allowed; the
    /// last one to swap wins, as in Go ([`rcu`](Container::rcu) loses none).
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
    pub fn update<P: Publishable<T>>(&self, new: P) {
        self.raw.update(new);
    }

    /// Publishes `new` like [`update`](Container::update) and returns a (counted) guard on
    /// the version it replaced.
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
    pub fn swap<P: Publishable<T>>(&self, new: P) -> Guard<T> {
        self.raw.swap(new).expect(NEVER_EMPTY)
    }

    /// Publishes `new` only if the current version is still the one `expected` reads;
    /// otherwise gives `new` back untouched, for the caller to refill and retry. For
    /// writers that manage their own retries; [`rcu`](Container::rcu) is the loop most
    /// want.
    ///
    /// A guard keeps its version from being recycled, so the comparison cannot be fooled by
    /// a recycled object at the same address (no ABA).
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
    pub fn compare_and_swap<P: Publishable<T>>(
        &self,
        expected: &Guard<T>,
        new: P,
    ) -> Result<(), P> {
        self.raw.compare_and_swap(expected.node.as_ptr(), new)
    }

    /// Read-copy-update: fills a recycled object from the current version with
    /// `f(current, next)` and publishes it, retrying on the newer version if another writer
    /// updated in between, so that concurrent `rcu`s never lose an update (a read through
    /// [`acquire`](Container::acquire) then an [`update`](Container::update) can). Returns
    /// what the successful call of `f` returned.
    ///
    /// `next` comes from the pool, already reset: to make it a copy of `current` without
    /// allocating, reuse its buffers, e.g. with
    /// [`Recycled::copy_from`](crate::arena::Recycled::copy_from) for a `Recycled<T>`, or
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
        &self.raw.pool
    }

    /// Gives up the container, returning a (counted) guard on its last version.
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
        self.raw.take().expect(NEVER_EMPTY)
    }
}

/// Shows the current version, as `RwLock`'s `Debug` shows its value.
impl<T: fmt::Debug> fmt::Debug for Container<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Container")
            .field("current", &*self.acquire())
            .field("pool", &self.raw.pool)
            .finish()
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
    /// `Acquire`. Costs as [`Container::acquire`].
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
        let guard = self.acquire();
        f(guard.as_deref())
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
    pub fn get_new(&self) -> Pooled<'_, T> {
        self.raw.pool.get()
    }

    /// An owned object from the container's pool, as [`Container::get_new_owned`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let c = OptionContainer::empty(&pool);
    /// let next = std::thread::spawn({
    ///     let mut next = c.get_new_owned();
    ///     move || { next.push_str("v1"); next }
    /// });
    /// c.update(next.join().unwrap());
    /// assert!(!c.is_empty());
    /// ```
    #[must_use = "the object goes straight back to the pool if it is dropped"]
    pub fn get_new_owned(&self) -> OwnedPooled<T> {
        self.raw.pool.get_owned()
    }

    /// An object from the container's pool if one can be had without waiting, as
    /// [`Container::try_get_new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::builder(|| 0u64, |n: &mut u64| *n = 0).max_live(1).build();
    /// let c = OptionContainer::empty(&pool);
    /// let first = c.try_get_new().expect("nothing exists yet");
    /// assert!(c.try_get_new().is_none()); // the one object allowed is out
    /// c.update(first);
    /// drop(c.take()); // back to the pool
    /// assert!(c.try_get_new().is_some());
    /// ```
    #[must_use = "the object goes straight back to the pool if it is dropped"]
    pub fn try_get_new(&self) -> Option<Pooled<'_, T>> {
        self.raw.pool.try_get()
    }

    /// Publishes `new` as the current version, as [`Container::update`].
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
    pub fn update<P: Publishable<T>>(&self, new: P) {
        self.raw.update(new);
    }

    /// Publishes `new` and returns a guard on the version it replaced (`None` if the
    /// container was empty).
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
    pub fn compare_and_swap<P: Publishable<T>>(
        &self,
        expected: Option<&Guard<T>>,
        new: P,
    ) -> Result<(), P> {
        let expected = expected.map_or(ptr::null_mut(), |g| g.node.as_ptr());
        self.raw.compare_and_swap(expected, new)
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
        &self.raw.pool
    }

    /// Gives up the container, returning a guard on its last version (`None` if empty).
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
        self.raw.take()
    }
}

/// A container that always holds a version, seen as one that may be empty.
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
        OptionContainer { raw: c.raw }
    }
}

/// Shows the current version (or `None`), as `RwLock<Option<T>>`'s `Debug` would.
impl<T: fmt::Debug> fmt::Debug for OptionContainer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OptionContainer")
            .field("current", &self.acquire().as_deref())
            .field("pool", &self.raw.pool)
            .finish()
    }
}

/// A read handle on one version of a [`Container`]'s object.
///
/// Dereferences to `&T`. The version it reads is never reset, reused or dropped while the
/// guard exists, whatever updates happen meanwhile. A guard does not borrow its container:
/// it may outlive the container and the pool, be held across `.await`, or be sent to
/// another thread and dropped there.
///
/// A guard from [`Container::acquire`] normally holds a *hazard slot* of the thread that
/// acquired it: making and dropping it writes only that thread's slot, never a cache line
/// another reader reads. Once a thread holds [`HAZARD_SLOTS`](crate::HAZARD_SLOTS) guards,
/// further ones hold a counted reference instead, as do clones (see
/// [`Guard::is_counted`]). Dropping the last guard on a version that is no longer current
/// returns it to the pool: for a slot guard, that takes the domain lock and a heavy barrier
/// (`membarrier`, about 0.3-12 µs, or a fence); dropping a guard on the current version
/// costs a store and a load of the slot's own line, no fence in either [`barrier_mode`]
/// (in `Fence` mode, a drop that races with its version's collection may leave the version
/// for the next collection: see [`reclaim`](crate::reclaim)).
///
/// A guard held for long keeps its version out of the pool, and a slot guard keeps one of
/// its thread's slots busy, wherever it travels.
///
/// # Send and Sync
///
/// `Send + Sync` when `T: Send + Sync`, like `Arc<T>`.
///
/// # Examples
///
/// ```
/// use poolswap::{Container, Guard, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let c = Container::from_value(&pool, 1);
/// let a = c.acquire();
/// let b = Guard::clone(&a);
/// assert!(Guard::ptr_eq(&a, &b));
/// drop(c);
/// assert_eq!((*a, *b), (1, 1)); // still readable
/// let t = std::thread::spawn(move || *b); // and movable to another thread
/// assert_eq!(t.join().unwrap(), 1);
/// ```
///
/// [`barrier_mode`]: crate::barrier_mode
#[must_use = "a guard that is dropped at once reads nothing"]
pub struct Guard<T> {
    /// The version this guard reads.
    node: NonNull<PoolNode<T>>,
    /// The hazard slot that protects `node`, or `None` if the guard owns a counted
    /// reference on it instead.
    slot: Option<&'static Slot>,
    _shares: PhantomData<T>,
}

// SAFETY: guards on one version on several threads read one `T` at once (`T: Sync`) and the
// last one dropped hands the `T` to the pool (`T: Send`): `Arc<T>`'s bounds.
unsafe impl<T: Send + Sync> Send for Guard<T> {}
// SAFETY: `&Guard` gives `&T` and `Guard::clone`, so the same bounds as `Send`.
unsafe impl<T: Send + Sync> Sync for Guard<T> {}

impl<T> Guard<T> {
    /// Wraps a counted reference on `node` that the caller owns and hands over.
    fn counted(node: NonNull<PoolNode<T>>) -> Guard<T> {
        Guard {
            node,
            slot: None,
            _shares: PhantomData,
        }
    }

    /// Wraps the protection of `node` by `slot`, which the caller hands over.
    fn protected(node: NonNull<PoolNode<T>>, slot: &'static Slot) -> Guard<T> {
        Guard {
            node,
            slot: Some(slot),
            _shares: PhantomData,
        }
    }

    /// The version's count of *counted* references: one while it is some container's
    /// current version (or, once retired, while the retired list keeps it for guards that
    /// protect it with hazard slots), plus one per counted guard ([`Guard::is_counted`]).
    /// Guards that hold a hazard slot are not counted. For tests and debugging (Go's
    /// `DebugPeekRef`); other threads may change it at any moment.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Guard, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let g = c.acquire();
    /// assert_eq!(Guard::ref_count(&g), 1); // the container's: `g` holds a hazard slot
    /// let old = c.swap(pool.adopt(2)); // a counted guard on the old version
    /// assert_eq!(Guard::ref_count(&old), 2); // `old`'s and the retired list's
    /// ```
    #[must_use]
    pub fn ref_count(this: &Guard<T>) -> usize {
        // SAFETY: this guard keeps the node live.
        unsafe { this.node.as_ref() }.refs.load()
    }

    /// Whether this guard owns a counted reference on its version (`true`) or protects it
    /// with a hazard slot of the thread that acquired it (`false`).
    ///
    /// A thread's first [`HAZARD_SLOTS`](crate::HAZARD_SLOTS) guards held at once take
    /// slots; further ones, clones, and the guards [`Container::swap`] and
    /// [`OptionContainer::take`] return are counted. Both kinds behave the same; a counted guard
    /// costs an atomic read-modify-write on the version's shared count to make and drop.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Guard, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let a = c.acquire();
    /// let b = Guard::clone(&a);
    /// assert!(!Guard::is_counted(&a));
    /// assert!(Guard::is_counted(&b));
    /// assert_eq!(Guard::ref_count(&a), 2); // the container's reference and b's
    /// ```
    #[must_use]
    pub fn is_counted(this: &Guard<T>) -> bool {
        this.slot.is_none()
    }

    /// Whether two guards read the same version (the same object, not equal values).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Guard, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let a = c.acquire();
    /// assert!(Guard::ptr_eq(&a, &c.acquire()));
    /// c.update(pool.adopt(1)); // an equal value, another version
    /// assert!(!Guard::ptr_eq(&a, &c.acquire()));
    /// ```
    #[must_use]
    pub fn ptr_eq(a: &Guard<T>, b: &Guard<T>) -> bool {
        a.node == b.node
    }
}

impl<T> Deref for Guard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard owns a reference on the node for as long as `&self` lives.
        unsafe { PoolNode::object(self.node) }
    }
}

impl<T> Clone for Guard<T> {
    /// A counted guard on the same version: one atomic increment of its count.
    fn clone(&self) -> Self {
        // SAFETY: this guard keeps the node live while we add one. Its count is at least
        // one even if this guard holds only a slot: the container holds a reference while
        // the version is current, and the retired list holds it while any slot protects
        // it (`hazard.rs`).
        unsafe { self.node.as_ref() }.refs.increment();
        Guard::counted(self.node)
    }
}

impl<T> Drop for Guard<T> {
    #[inline]
    fn drop(&mut self) {
        match self.slot {
            Some(slot) => hazard::clear(slot),
            // SAFETY: this guard owns one counted reference, consumed here; the node is a
            // container version, so it holds its pool in its keepalive.
            None => unsafe { shared::release(self.node, None) },
        }
    }
}

/// Drops one counted reference on a retired version: the retired list's `release`.
///
/// # Safety
///
/// `node` is a `PoolNode<T>` on which the caller owns a counted reference, consumed here.
unsafe fn release_retired<T>(node: NonNull<()>) {
    // SAFETY: per the caller; a retired version holds its pool in its keepalive.
    unsafe { shared::release(node.cast::<PoolNode<T>>(), None) }
}

impl<T: fmt::Debug> fmt::Debug for Guard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Guard").field(&**self).finish()
    }
}

/// Formats the version, as `Arc`'s `Display` does.
///
/// ```
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(String::new, String::clear);
/// let c = Container::from_value(&pool, String::from("v1"));
/// assert_eq!(format!("{}", c.acquire()), "v1");
/// ```
impl<T: fmt::Display> fmt::Display for Guard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

/// ```
/// use poolswap::{Container, Pool};
///
/// fn len(s: impl AsRef<String>) -> usize { s.as_ref().len() }
/// let pool = Pool::new(String::new, String::clear);
/// let c = Container::from_value(&pool, String::from("v1"));
/// assert_eq!(len(c.acquire()), 2);
/// ```
impl<T> AsRef<T> for Guard<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

/// Lets a guard stand for its version in a `HashSet<T>` lookup, as `Arc` does (comparison
/// and `Hash` below are by value, so they agree).
///
/// ```
/// use std::borrow::Borrow;
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(String::new, String::clear);
/// let c = Container::from_value(&pool, String::from("v1"));
/// let g = c.acquire();
/// let s: &String = g.borrow();
/// assert_eq!(s, "v1");
/// ```
impl<T> Borrow<T> for Guard<T> {
    fn borrow(&self) -> &T {
        self
    }
}

/// By value, as `Arc`: two guards are equal if their versions are, even if they are
/// different versions ([`Guard::ptr_eq`] compares identity).
///
/// ```
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let a = Container::from_value(&pool, 1);
/// let b = Container::from_value(&pool, 1);
/// assert!(a.acquire() == b.acquire());
/// assert!(a.acquire() < Container::from_value(&pool, 2).acquire());
/// ```
impl<T: PartialEq> PartialEq for Guard<T> {
    fn eq(&self, other: &Guard<T>) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Guard<T> {}

impl<T: PartialOrd> PartialOrd for Guard<T> {
    fn partial_cmp(&self, other: &Guard<T>) -> Option<CmpOrdering> {
        (**self).partial_cmp(&**other)
    }
}

impl<T: Ord> Ord for Guard<T> {
    fn cmp(&self, other: &Guard<T>) -> CmpOrdering {
        (**self).cmp(&**other)
    }
}

/// By value, consistent with `Eq` and `Borrow<T>`. (Clippy's `mutable_key_type` lint
/// flags a `HashSet<Guard<T>>`, because a guard holds a reference to its atomic hazard
/// slot; hashing and equality read only the value, so the lint does not apply.)
///
/// ```
/// use std::collections::HashSet;
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(String::new, String::clear);
/// let c = Container::from_value(&pool, String::from("v1"));
/// let seen: HashSet<_> = [c.acquire()].into_iter().collect();
/// assert!(seen.contains(&String::from("v1")));
/// ```
impl<T: Hash> Hash for Guard<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

// A guard only reads its version: a panic while one is held leaves nothing half-written
// (as `Arc<T>`, it is unwind-safe when `&T` is).
impl<T: RefUnwindSafe> UnwindSafe for Guard<T> {}
impl<T: RefUnwindSafe> RefUnwindSafe for Guard<T> {}

impl<T> Guard<T> {
    /// A guard on a part of the version (a field, an entry), keeping the whole version
    /// alive; like `parking_lot`'s mapped guards and left-right's `ReadGuard::map`. Costs
    /// nothing: it moves this guard into the new one.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Guard, Pool};
    ///
    /// struct Config { name: String, port: u16 }
    /// let pool = Pool::new(
    ///     || Config { name: String::new(), port: 0 },
    ///     |c| c.name.clear(),
    /// );
    /// let c = Container::from_value(&pool, Config { name: "api".into(), port: 80 });
    /// let name = Guard::map(c.acquire(), |c| c.name.as_str());
    /// let port = Guard::map(c.acquire(), |c| &c.port);
    /// assert_eq!((&*name, *port), ("api", 80));
    /// ```
    pub fn map<U: ?Sized, F>(this: Guard<T>, f: F) -> MappedGuard<T, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let part = NonNull::from(f(&this));
        MappedGuard { guard: this, part }
    }
}

/// A guard on a part of a version, made by [`Guard::map`]. Dereferences to `&U`; keeps the
/// whole version from being recycled, like the [`Guard`] it was made from.
///
/// # Send and Sync
///
/// `Send + Sync` when `T: Send + Sync` and `U: Sync` (it is a `Guard<T>` and a `&U`).
pub struct MappedGuard<T, U: ?Sized> {
    guard: Guard<T>,
    /// Borrowed from `guard`'s version (or `'static`), valid while `guard` lives: the
    /// version is never moved or recycled while a guard on it exists.
    part: NonNull<U>,
}

// SAFETY: a `Guard<T>` (sendable for `T: Send + Sync`) and a `&U` (sendable for `U: Sync`).
unsafe impl<T: Send + Sync, U: ?Sized + Sync> Send for MappedGuard<T, U> {}
// SAFETY: `&MappedGuard` gives only `&U` and `&Guard<T>`.
unsafe impl<T: Send + Sync, U: ?Sized + Sync> Sync for MappedGuard<T, U> {}

impl<T: RefUnwindSafe, U: ?Sized + RefUnwindSafe> UnwindSafe for MappedGuard<T, U> {}
impl<T: RefUnwindSafe, U: ?Sized + RefUnwindSafe> RefUnwindSafe for MappedGuard<T, U> {}

impl<T, U: ?Sized> MappedGuard<T, U> {
    /// The guard on the whole version.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Guard, MappedGuard, Pool};
    ///
    /// let pool = Pool::new(|| (0u8, 0u8), |p: &mut (u8, u8)| *p = (0, 0));
    /// let c = Container::from_value(&pool, (1u8, 2u8));
    /// let second = Guard::map(c.acquire(), |p| &p.1);
    /// assert_eq!(**MappedGuard::guard(&second), (1, 2));
    /// ```
    pub fn guard(this: &MappedGuard<T, U>) -> &Guard<T> {
        &this.guard
    }
}

impl<T, U: ?Sized> Deref for MappedGuard<T, U> {
    type Target = U;
    fn deref(&self) -> &U {
        // SAFETY: `part` came from a `&U` borrowed from the guard's version (or with a
        // longer life), and the guard keeps that version in place and unrecycled.
        unsafe { self.part.as_ref() }
    }
}

impl<T, U: ?Sized + fmt::Debug> fmt::Debug for MappedGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("MappedGuard").field(&&**self).finish()
    }
}

impl<T, U: ?Sized + fmt::Display> fmt::Display for MappedGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

/// A per-thread cached reader of a [`Container`]: [`load`](Cache::load) returns the current
/// version with one atomic load when nothing changed since the last call.
///
/// It keeps a [`Guard`] on the version it returned last, and replaces it when `load` sees
/// a newer one. So the cached version is not recycled until the cache next loads (or is
/// dropped): a cache that is not used for a while holds one old version out of the pool, and
/// a slot of the thread that loaded it. `load` takes `&mut self`: one cache per thread or
/// task, as with arc-swap's `Cache`.
///
/// `C` is anything that dereferences to the container: `&Container<T>`,
/// `Arc<Container<T>>`, ...
///
/// # Costs
///
/// `load` when the version is unchanged: one `Relaxed` load of the container's current
/// pointer and a compare; no barrier, no write. When it changed: an
/// [`acquire`](Container::acquire) and the drop of the old guard.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use poolswap::{Cache, Container, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let config = Arc::new(Container::from_value(&pool, 1));
/// let mut cache = Cache::new(Arc::clone(&config));
/// assert_eq!(*cache.load(), 1);
/// config.update(pool.adopt(2));
/// assert_eq!(*cache.load(), 2);
/// ```
pub struct Cache<T, C> {
    container: C,
    cached: Guard<T>,
}

impl<T, C: Deref<Target = Container<T>>> Cache<T, C> {
    /// A cache on `container`, holding a guard on its current version (an
    /// [`acquire`](Container::acquire)).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Cache, Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let mut cache = Cache::new(&c);
    /// assert_eq!(*cache.load(), 1);
    /// ```
    pub fn new(container: C) -> Cache<T, C> {
        let cached = container.acquire();
        Cache { container, cached }
    }

    /// The container's current version: the cached one if it is still current (one load),
    /// else a fresh [`acquire`](Container::acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Cache, Container, Pool};
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let c = Container::from_value(&pool, String::from("v1"));
    /// let mut cache = Cache::new(&c);
    /// assert_eq!(cache.load(), "v1");
    /// c.update(pool.adopt(String::from("v2")));
    /// assert_eq!(cache.load(), "v2");
    /// ```
    #[inline]
    pub fn load(&mut self) -> &T {
        // Relaxed: comparing with the cached pointer reads nothing through it; the guard
        // protects the cached version, and a newer one is acquired properly below.
        let current = self.container.raw.current.load(Ordering::Relaxed);
        if self.cached.node.as_ptr() != current {
            self.reload();
        }
        &self.cached
    }

    #[cold]
    #[inline(never)]
    fn reload(&mut self) {
        // The new guard first: acquiring before dropping keeps the old slot busy for one
        // more moment, never the other way round.
        let next = self.container.acquire();
        self.cached = next;
    }

    /// The container this cache reads.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Cache, Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let cache = Cache::new(&c);
    /// assert!(std::ptr::eq(*cache.container(), &c));
    /// ```
    #[must_use]
    pub fn container(&self) -> &C {
        &self.container
    }
}

/// Shows the cached version (which may be older than the container's current one).
impl<T: fmt::Debug, C: fmt::Debug> fmt::Debug for Cache<T, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cache")
            .field("cached", &*self.cached)
            .field("container", &self.container)
            .finish()
    }
}
