//! The container: the current version of a shared object, and read guards on it.
//!
//! The container holds one reference on its current version and a pointer to it in
//! `current`. Go's original takes a read lock around "load the pointer, increment its
//! count" so that the count cannot reach zero in between; here there is no lock, which is
//! safe because nodes are type-stable (see `pool/node.rs`): a node's memory lives while its
//! pool has a handle, and the container holds one.
//!
//! # Reader (`acquire`)
//!
//! 1. Load `current` (`Acquire`: makes the node's memory visible).
//! 2. Increment the node's count *unless it is zero*
//!    ([`RefCount::try_increment`](crate::refcount::RefCount::try_increment), `Acquire`). A
//!    zero count means idle: nothing is written, start over.
//! 3. Re-load `current` (`Acquire`). The same pointer: the reference is on the current
//!    version; return a guard. Another: drop the reference (if it was the last, recycle the
//!    node, as any last holder does) and start over.
//!
//! The reader never reads the object before step 3 succeeds.
//!
//! # Writer (`update`, `swap`, `take`)
//!
//! 1. Mark the filled [`Pooled`]'s node published, with its keepalive (the pool) and its
//!    home depot (the writer's).
//! 2. `swap` it into `current` (`AcqRel`): its reference becomes the container's.
//! 3. Drop the container's reference on the old version; whoever drops the last reference
//!    returns the node to its home depot.
//!
//! # A recycled node (the ABA case)
//!
//! Between steps 1 and 2 of a reader, the node may be retired, recycled and handed out
//! again, even published anew.
//!
//! - If step 2 read a count from before the node was recycled, the reader's reference keeps
//!   the node from being recycled at all.
//! - If it read a count written after, it read (or followed, in the release sequence) the
//!   `Release` store of [`RefCount::reset_to_one`](crate::refcount::RefCount::reset_to_one)
//!   made by whoever took the node from the pool. That taker's view includes the swap that
//!   retired the node's old version (the swap happened before the last decrement, which
//!   happened before the free-list push, which happened before the pop). So step 3 cannot
//!   read the pointer from before that swap: it sees another pointer (and lets go), or the
//!   same pointer from a later store that published the node anew, whose contents its
//!   `Acquire` makes visible.
//!
//! # Orderings
//!
//! - `current`: loads `Acquire`, swap `AcqRel` (publishes the new version, acquires the
//!   old one's contents for the returned guard).
//! - The count: `Arc`'s orderings, plus `try_increment` `Acquire` and `reset_to_one`
//!   `Release` for the ABA case (see `refcount.rs`).
//!
//! The price is the guard's two atomic read-modify-writes on the version's count, whose
//! cache line is shared by every reader of that version. A read path that writes no shared
//! line (per-thread hazard slots, as arc-swap's debts do) can sit in front of this one and
//! fall back to it.
//!
//! The loom models in `tests/loom.rs` check this protocol against updates and releases;
//! they fail when `try_increment` or `reset_to_one` is weakened to `Relaxed`.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::pool::shared::{self, PoolNode};
use crate::pool::{Pool, Pooled};
use crate::sync::{self, Arc, AtomicPtr, Ordering};

/// The current version of a heavy, read-mostly object, readable without waiting and
/// replaceable without allocating.
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
/// let pool = Pool::new(HashMap::<&str, u32>::new, |m| { m.clear(); true });
/// let config = Container::empty(pool);
/// assert!(config.acquire().is_none());
///
/// let mut next = config.get_new();
/// next.insert("timeout_ms", 250);
/// config.update(next);
///
/// let current = config.acquire().unwrap();
/// assert_eq!(current["timeout_ms"], 250);
///
/// let mut next = config.get_new(); // a fresh map: `current` still holds the old one
/// next.insert("timeout_ms", 500);
/// config.update(next);
/// assert_eq!(current["timeout_ms"], 250); // a guard keeps its version
/// assert_eq!(config.acquire().unwrap()["timeout_ms"], 500);
/// ```
///
/// # Costs
///
/// - [`acquire`](Container::acquire): two atomic loads and one compare-and-swap on the
///   version's reference count; no lock, no allocation. Retries only if an update lands
///   between its first load and its check. Dropping the guard: one atomic decrement.
/// - [`update`](Container::update): a thread-local lookup (the writer's share of the pool,
///   where the version will go back to), one atomic increment of the pool handle (a version
///   keeps its pool alive for guards that outlive it), one atomic swap, and one decrement on the
///   old version. If no guard holds the old version, its return to the depot of the thread
///   that published it: one budget read-modify-write, one lock, and the pool handle's
///   decrement. No allocation, except on a thread's first use of the pool (see
///   [`Pool`]'s costs). Whoever drops the last guard on a retired version pays that
///   return instead (never the reset, which runs in the writer's next `get_new`).
///
/// # Send and Sync
///
/// `Send + Sync` when `T: Send + Sync`: readers on many threads share `&T`, and the last
/// one to let go hands the `T` to the pool for another thread to reuse.
pub struct Container<T> {
    /// The current version, or null while empty. Holds one reference on it.
    current: CachePadded<AtomicPtr<PoolNode<T>>>,
    /// Every version published here comes from this pool, whose node memory outlives
    /// `&self`: the reader protocol depends on it (see the module docs).
    pool: Pool<T>,
}

// SAFETY: the container owns a reference on a `T` that many threads read (`T: Sync`) and
// that any thread may end up returning to the pool (`T: Send`). `Pool<T>` needs `T: Send`.
unsafe impl<T: Send + Sync> Send for Container<T> {}
// SAFETY: `&Container` hands out guards, i.e. `&T` on any thread and the last release on any
// thread: the same bounds.
unsafe impl<T: Send + Sync> Sync for Container<T> {}

impl<T> Container<T> {
    /// Makes a container whose current version is `init`; Go's `NewContainer`.
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
    /// let pool = Pool::new(String::new, |s| { s.clear(); true });
    /// let mut init = pool.get();
    /// init.push_str("v1");
    /// // `init` borrows `pool`, so the container gets its own handle on the pool.
    /// let c = Container::new(pool.clone(), init);
    /// assert_eq!(&*c.acquire().unwrap(), "v1");
    /// ```
    pub fn new(pool: Pool<T>, init: Pooled<'_, T>) -> Container<T> {
        let container = Container::empty(pool);
        container.update(init);
        container
    }

    /// Makes an empty container: [`acquire`](Container::acquire) returns `None` until the
    /// first [`update`](Container::update). Go's `NewEmptyContainer`.
    pub fn empty(pool: Pool<T>) -> Container<T> {
        Container {
            current: CachePadded::new(AtomicPtr::new(ptr::null_mut())),
            pool,
        }
    }

    /// A guard on the current version, or `None` while the container is empty; Go's
    /// `Acquire`, with its `Release` done by the guard's `Drop`.
    ///
    /// Never waits for a writer and never allocates. See the type's docs for its cost.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| { *n = 0; true });
    /// let c = Container::new(pool.clone(), pool.adopt(7));
    /// let v = c.acquire().expect("not empty");
    /// assert_eq!(*v, 7);
    /// ```
    pub fn acquire(&self) -> Option<Guard<T>> {
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
                    return Some(Guard::owning(node));
                }
                // SAFETY: `try_increment` gave this thread a reference; hand it back. The
                // node may now be held by a `Pooled` (no `home`), so name its pool: ours.
                unsafe { shared::release(node, Some(self.pool.shared())) };
            }
            sync::spin_hint();
        }
    }

    /// Calls `f` with the current version (or `None` while empty) and drops the guard
    /// afterwards; Go's `WithAcquire`. Nothing is allocated: `f` is called by value.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(Vec::<u8>::new, |v| { v.clear(); true });
    /// let c = Container::empty(pool);
    /// assert_eq!(c.with_acquire(|v| v.map(Vec::len)), None);
    /// ```
    pub fn with_acquire<R>(&self, f: impl FnOnce(Option<&T>) -> R) -> R {
        let guard = self.acquire();
        f(guard.as_deref())
    }

    /// An object from the container's pool, to fill and pass to
    /// [`update`](Container::update); Go's `GetNew`. The same as `self.pool().get()`.
    pub fn get_new(&self) -> Pooled<'_, T> {
        self.pool.get()
    }

    /// Publishes `new` as the current version; Go's `Update`.
    ///
    /// Readers that acquire after this see `new`. The old version returns to the pool when
    /// its last guard drops — here, if none exists. Concurrent updates are allowed; the last
    /// one to swap wins, as in Go.
    ///
    /// # Panics
    ///
    /// If `new` came from a pool other than this container's: the container's readers rely
    /// on every version's memory belonging to the container's own pool.
    pub fn update(&self, new: Pooled<'_, T>) {
        drop(self.swap(new));
    }

    /// Publishes `new` like [`update`](Container::update) and returns a guard on the
    /// version it replaced (`None` if the container was empty).
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
    /// let pool = Pool::new(|| 0u32, |n| { *n = 0; true });
    /// let c = Container::new(pool.clone(), pool.adopt(1));
    /// let old = c.swap(pool.adopt(2)).unwrap();
    /// assert_eq!((*old, *c.acquire().unwrap()), (1, 2));
    /// ```
    pub fn swap(&self, new: Pooled<'_, T>) -> Option<Guard<T>> {
        assert!(
            Pool::ptr_eq(Pooled::pool(&new), &self.pool),
            "poolswap: Container::update/swap given an object from another pool; \
             use this container's `get_new()` or `pool().adopt(value)`"
        );
        let new = Pooled::publish(new, Arc::clone(self.pool.shared()));
        self.replace(new.as_ptr())
    }

    /// Empties the container and returns a guard on the version it held.
    pub fn take(&self) -> Option<Guard<T>> {
        self.replace(ptr::null_mut())
    }

    /// Stores `new` (null, or a published node carrying the container's reference) as the
    /// current version, and returns the container's reference on the old one as a guard.
    fn replace(&self, new: *mut PoolNode<T>) -> Option<Guard<T>> {
        // AcqRel. Release: readers that load `new` see it filled. Acquire: the old version's
        // contents, published by an earlier swap, are visible to the guard returned here.
        let old = self.current.swap(new, Ordering::AcqRel);
        NonNull::new(old).map(Guard::owning)
    }

    /// Whether the container holds no version now.
    pub fn is_empty(&self) -> bool {
        // Relaxed: an instantaneous reading; nothing is dereferenced.
        self.current.load(Ordering::Relaxed).is_null()
    }

    /// The pool this container's versions come from.
    pub fn pool(&self) -> &Pool<T> {
        &self.pool
    }
}

impl<T> Drop for Container<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

impl<T> fmt::Debug for Container<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Container")
            .field("empty", &self.is_empty())
            .field("pool", &self.pool)
            .finish()
    }
}

/// A read handle on one version of a [`Container`]'s object.
///
/// Dereferences to `&T`. The version it reads is never reset, reused or dropped while the
/// guard exists, whatever updates happen meanwhile. A guard does not borrow its container:
/// it may outlive the container and the pool, be held across `.await`, or be sent to
/// another thread. Cloning it adds a reference to the same version (one atomic increment);
/// dropping it removes one (one atomic decrement, and the return to the pool if it was the
/// last).
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
/// let pool = Pool::new(|| 0u32, |n| { *n = 0; true });
/// let c = Container::new(pool.clone(), pool.adopt(1));
/// let a = c.acquire().unwrap();
/// let b = Guard::clone(&a);
/// assert_eq!(Guard::ref_count(&a), 3); // the container's reference, a and b
/// drop(c);
/// assert_eq!(*b, 1); // still readable
/// ```
#[must_use = "a guard that is dropped at once reads nothing"]
pub struct Guard<T> {
    /// A node on which this guard owns one reference.
    node: NonNull<PoolNode<T>>,
    _shares: PhantomData<T>,
}

// SAFETY: guards on one version on several threads read one `T` at once (`T: Sync`) and the
// last one dropped hands the `T` to the pool (`T: Send`): `Arc<T>`'s bounds.
unsafe impl<T: Send + Sync> Send for Guard<T> {}
// SAFETY: `&Guard` gives `&T` and `Guard::clone`, so the same bounds as `Send`.
unsafe impl<T: Send + Sync> Sync for Guard<T> {}

impl<T> Guard<T> {
    /// Wraps a reference on `node` that the caller owns and hands over.
    fn owning(node: NonNull<PoolNode<T>>) -> Guard<T> {
        Guard {
            node,
            _shares: PhantomData,
        }
    }

    /// The version's reference count: one per guard, plus one while it is some container's
    /// current version. For tests and debugging (Go's `DebugPeekRef`); other threads may
    /// change it at any moment.
    pub fn ref_count(this: &Guard<T>) -> usize {
        // SAFETY: this guard's reference keeps the node live.
        unsafe { this.node.as_ref() }.refs.load()
    }

    /// Whether two guards read the same version.
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
    fn clone(&self) -> Self {
        // SAFETY: this guard's reference keeps the node live while we add one.
        unsafe { self.node.as_ref() }.refs.increment();
        Guard::owning(self.node)
    }
}

impl<T> Drop for Guard<T> {
    fn drop(&mut self) {
        // SAFETY: this guard owns one reference, consumed here; the node is a container
        // version, so it holds its pool in `home`.
        unsafe { shared::release(self.node, None) }
    }
}

impl<T: fmt::Debug> fmt::Debug for Guard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Guard").field(&**self).finish()
    }
}
