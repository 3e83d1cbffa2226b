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
//!    go of it collects it.
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

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::hazard::{self, Slot};
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
/// - [`acquire`](Container::acquire): a thread-local load, a look for a free hazard slot
///   of the thread (usually the first), two loads of the current pointer and one store to
///   the slot, with a light barrier between (no instruction in
///   [`BarrierMode::Membarrier`](crate::BarrierMode), a `fence(SeqCst)` otherwise); no
///   atomic read-modify-write, no lock, no allocation, and no write to a cache line that
///   another reader reads. Retries only if an update lands between its two loads. Dropping
///   the guard: a store, a light barrier and a load of the thread's own slot line. A
///   thread's first read registers it (a lock and, if no exited thread left a block behind,
///   one allocation of 128 bytes per [`HAZARD_SLOTS`](crate::HAZARD_SLOTS) slots).
/// - [`update`](Container::update): a thread-local lookup (the writer's share of the pool,
///   where the version will go back to), one atomic increment of the pool handle (a version
///   keeps its pool alive for guards that outlive it), one atomic swap, then the retired
///   list: a process-wide lock, a heavy barrier (`membarrier`: an interrupt to every CPU
///   running a thread of this process; or a fence), and a look at every slot of every
///   thread that ever read (`HAZARD_SLOTS` loads per thread). If no slot holds the old
///   version and no counted guard does, its return to the depot of the thread that
///   published it: one budget read-modify-write, one lock, and the pool handle's decrement.
///   If some guard still holds it, the writer does not wait: the last guard to let go
///   returns it (never resets it: the reset runs in the writer's next `get_new`). No
///   allocation at steady state (the retired list keeps its capacity), except on a thread's
///   first use of the pool (see [`Pool`]'s costs).
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
        // Before any reader of this container can exist: see `barrier.rs`.
        crate::barrier::init();
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
    #[inline]
    pub fn acquire(&self) -> Option<Guard<T>> {
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
            // SeqCst: completes the store-buffering pattern of `protect` (`barrier.rs`,
            // `store_light`); it acquires as above. A plain load on x86-64.
            let again = self.current.load(Ordering::SeqCst);
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
        if let Some(old) = self.replace(self.publish(new)) {
            Self::retire(old);
        }
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
        let old = self.replace(self.publish(new))?;
        Some(Self::retire_with_guard(old))
    }

    /// Marks `new` published in this container; panics if it came from another pool.
    fn publish(&self, new: Pooled<'_, T>) -> *mut PoolNode<T> {
        assert!(
            Pool::ptr_eq(Pooled::pool(&new), &self.pool),
            "poolswap: Container::update/swap given an object from another pool; \
             use this container's `get_new()` or `pool().adopt(value)`"
        );
        Pooled::publish(new, Arc::clone(self.pool.shared())).as_ptr()
    }

    /// Publishes `new` only if the current version is still `expected` (`None`: the
    /// container is empty); otherwise gives `new` back untouched, for the caller to refill
    /// and retry. For writers that manage their own retries; [`rcu`](Container::rcu) is the
    /// loop most want.
    ///
    /// A guard keeps its version from being recycled, so the comparison cannot be fooled by
    /// a recycled object at the same address (no ABA).
    ///
    /// Costs: an [`update`](Container::update) whose swap is a compare-and-swap; on failure,
    /// the pool handle's increment and decrement and nothing else (no allocation).
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
    /// let seen = c.acquire().unwrap();
    /// c.update(pool.adopt(2)); // another writer got there first
    /// let mut next = pool.adopt(*seen + 10);
    /// next = c.compare_and_swap(Some(&seen), next).unwrap_err(); // refused: given back
    /// let seen = c.acquire().unwrap();
    /// *next = *seen + 10;
    /// assert!(c.compare_and_swap(Some(&seen), next).is_ok());
    /// assert_eq!(*c.acquire().unwrap(), 12);
    /// ```
    pub fn compare_and_swap<'a>(
        &self,
        expected: Option<&Guard<T>>,
        new: Pooled<'a, T>,
    ) -> Result<(), Pooled<'a, T>> {
        let pool = Pooled::pool(&new);
        let expected = expected.map_or(ptr::null_mut(), |g| g.node.as_ptr());
        let new = self.publish(new);
        // AcqRel on success, as `replace`. Relaxed on failure: nothing is read through the
        // value seen, and `new` was never visible.
        match self
            .current
            .compare_exchange(expected, new, Ordering::AcqRel, Ordering::Relaxed)
        {
            Ok(old) => {
                if let Some(old) = NonNull::new(old) {
                    Self::retire(old);
                }
                Ok(())
            }
            Err(_) => {
                // SAFETY: `new` was published by `self.publish` just above and never stored
                // in `current`; `publish` checked that it belongs to `pool`.
                Err(unsafe { Pooled::unpublish(NonNull::new(new).expect("published"), pool) })
            }
        }
    }

    /// Read-copy-update: fills a recycled object from the current version with
    /// `f(current, next)` and publishes it, retrying on the newer version if another writer
    /// updated in between, so that concurrent `rcu`s never lose an update (a read through
    /// [`acquire`](Container::acquire) then an [`update`](Container::update) can). Returns
    /// what the successful call of `f` returned, or `None` if the container is empty (`f`
    /// is not called).
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
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(Vec::<u32>::new, |v| { v.clear(); true });
    /// let c = Container::new(pool.clone(), pool.adopt(vec![]));
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
    /// assert_eq!(c.acquire().unwrap().len(), 200); // no update lost
    /// ```
    pub fn rcu<R>(&self, mut f: impl FnMut(&T, &mut T) -> R) -> Option<R> {
        let mut current = self.acquire()?;
        loop {
            let mut next = self.get_new();
            let result = f(&current, &mut next);
            match self.compare_and_swap(Some(&current), next) {
                Ok(()) => return Some(result),
                // Dropping `next` returns it to the pool, where the next `get_new` finds it.
                Err(next) => drop(next),
            }
            current = self.acquire()?;
        }
    }

    /// Empties the container and returns a guard on the version it held.
    pub fn take(&self) -> Option<Guard<T>> {
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
/// another thread and dropped there.
///
/// A guard from [`Container::acquire`] normally holds a *hazard slot* of the thread that
/// acquired it: making and dropping it writes only that thread's slot, never a cache line
/// another reader reads. Once a thread holds [`HAZARD_SLOTS`](crate::HAZARD_SLOTS) guards,
/// further ones hold a counted reference instead, as do clones (see
/// [`Guard::is_counted`]). Dropping the last guard on a version that is no longer current
/// returns it to the pool: for a slot guard, that takes the domain lock and a heavy barrier
/// (`membarrier`, about 0.3-12 µs, or a fence); dropping a guard on the current version
/// costs a store and a compiler fence (or a `fence(SeqCst)`, see [`barrier_mode`]).
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
/// let pool = Pool::new(|| 0u32, |n| { *n = 0; true });
/// let c = Container::new(pool.clone(), pool.adopt(1));
/// let a = c.acquire().unwrap();
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
    pub fn ref_count(this: &Guard<T>) -> usize {
        // SAFETY: this guard keeps the node live.
        unsafe { this.node.as_ref() }.refs.load()
    }

    /// Whether this guard owns a counted reference on its version (`true`) or protects it
    /// with a hazard slot of the thread that acquired it (`false`).
    ///
    /// A thread's first [`HAZARD_SLOTS`](crate::HAZARD_SLOTS) guards held at once take
    /// slots; further ones, clones, and the guards [`Container::swap`] and
    /// [`Container::take`] return are counted. Both kinds behave the same; a counted guard
    /// costs an atomic read-modify-write on the version's shared count to make and drop.
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
    /// assert!(!Guard::is_counted(&a));
    /// assert!(Guard::is_counted(&b));
    /// assert_eq!(Guard::ref_count(&a), 2); // the container's reference and b's
    /// ```
    pub fn is_counted(this: &Guard<T>) -> bool {
        this.slot.is_none()
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
/// let pool = Pool::new(|| 0u32, |n| { *n = 0; true });
/// let config = Arc::new(Container::new(pool.clone(), pool.adopt(1)));
/// let mut cache = Cache::new(Arc::clone(&config));
/// assert_eq!(cache.load(), Some(&1));
/// config.update(pool.adopt(2));
/// assert_eq!(cache.load(), Some(&2));
/// ```
pub struct Cache<T, C> {
    container: C,
    cached: Option<Guard<T>>,
}

impl<T, C: Deref<Target = Container<T>>> Cache<T, C> {
    /// A cache on `container`, holding no version yet.
    pub fn new(container: C) -> Cache<T, C> {
        Cache {
            container,
            cached: None,
        }
    }

    /// The container's current version (`None` while it is empty).
    #[inline]
    pub fn load(&mut self) -> Option<&T> {
        // Relaxed: comparing with the cached pointer reads nothing through it; the guard
        // protects the cached version, and a newer one is acquired properly below.
        let current = self.container.current.load(Ordering::Relaxed);
        let fresh = match &self.cached {
            Some(guard) => guard.node.as_ptr() == current,
            None => current.is_null(),
        };
        if !fresh {
            self.reload();
        }
        self.cached.as_deref()
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
    pub fn container(&self) -> &C {
        &self.container
    }
}

impl<T, C: fmt::Debug> fmt::Debug for Cache<T, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cache")
            .field("container", &self.container)
            .field("cached", &self.cached.as_ref().map(|g| g.node))
            .finish()
    }
}
