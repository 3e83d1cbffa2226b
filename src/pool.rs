//! The object pool: a stand-in for Go's `sync.Pool` with reference-counted nodes.
//!
//! # Design
//!
//! Every pooled object lives in a heap [`Node`] made once, when the factory builds the
//! object (or when [`Pool::adopt`] takes one in): the node holds the object, its
//! [`RefCount`] and, while the object is checked out, a handle on its pool. Recycling moves
//! the node, never the object, so a steady state allocates nothing: no wrapper per version,
//! no `Arc` per update.
//!
//! Idle nodes wait on a free list split into shards, one per thread slot (threads are
//! numbered in order of first use and share a shard when there are more threads than
//! shards). Each shard is a `parking_lot` mutex over a `Vec`, padded to its own cache line.
//! A thread puts into and takes from its home shard; when that is empty it steals from the
//! others before it calls the factory. Stealing matters: in the hot-swap pattern the last
//! reader releases the old version on *its* thread while the writer asks for a fresh one on
//! *another*, and free lists that other threads cannot take from starve the writer (see
//! `NOTES.md`: regex-automata's pool made ~1 factory call per update in that pattern).
//!
//! The reset function runs in [`Pool::get`], on the thread that asks for an object — in a
//! container, the writer — not when the last reference drops, which may be on a reader's
//! thread. Clearing a 100k-entry map costs about a millisecond; the reader that happens to
//! be last should not pay it. The price: an idle object keeps its old contents (and their
//! memory, which `clear` keeps anyway) until it is handed out again or dropped.
//!
//! # Type-stable nodes
//!
//! A node's memory is freed only when the pool's shared state is dropped (after the last
//! [`Pool`], [`Pooled`], [`Container`](crate::Container) and [`Guard`](crate::Guard) on it).
//! When an object is discarded (its reset returned `false`, the idle bound was full, or
//! [`Pool::clear`] ran) the object is dropped but its node is kept, empty, to house the
//! factory's next object. This is what lets a container reader touch the reference count of
//! a node that was recycled under it, and find out, without a lock: the memory is still a
//! node of the same pool (the technique Linux calls `SLAB_TYPESAFE_BY_RCU`). The cost is
//! `size_of::<Node<T>>()` bytes (128 + `size_of::<T>()`, rounded up) per node made, kept
//! until the pool goes away.

use std::fmt;
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::refcount::RefCount;
use crate::sync::{self, Arc, AtomicUsize, Mutex, Ordering, UnsafeCell};

/// How many idle objects a pool keeps by default; see [`PoolBuilder::max_idle`].
pub const DEFAULT_MAX_IDLE: usize = 16;

/// Free-list slots reserved per shard when a pool is built: beyond this, a shard's list
/// grows (allocates) the first time it holds that many objects.
const SHARD_PRESIZE: usize = 64;

type Factory<T> = dyn Fn() -> T + Send + Sync;
type Reset<T> = dyn Fn(&mut T) -> bool + Send + Sync;

/// One pooled object with its reference count.
pub(crate) struct Node<T> {
    /// 0: idle in a free list, being recycled, or empty (no object). 1 or more: checked out
    /// as one [`Pooled`] or as a container's current version plus its guards.
    pub(crate) refs: RefCount,
    /// `Some` exactly while `refs > 0`: written by whoever moves the count 0 -> 1 (before its
    /// `Release` store) and taken by whoever moves it 1 -> 0 (after its `Acquire` fence).
    /// Keeps the pool alive while any handle on the object exists.
    home: UnsafeCell<Option<Arc<Shared<T>>>>,
    /// Initialised unless the node is empty (in `Shared::empty`).
    value: UnsafeCell<MaybeUninit<T>>,
}

/// A node pointer that may cross threads with the object it owns.
struct NodePtr<T>(NonNull<Node<T>>);

// SAFETY: a `NodePtr` in a free list is the only handle on its node (count 0), so sending it
// sends the `T` inside: `T: Send` is exactly what that needs.
unsafe impl<T: Send> Send for NodePtr<T> {}

/// One shard of the free list.
struct Shard<T> {
    free: Vec<NodePtr<T>>,
    /// `get`s served from this shard's list (by its own threads or by thieves).
    hits: u64,
}

/// State shared by every handle on one pool.
pub(crate) struct Shared<T> {
    factory: Box<Factory<T>>,
    reset: Box<Reset<T>>,
    shards: Box<[CachePadded<Mutex<Shard<T>>>]>,
    /// Nodes whose object was dropped, kept so node memory stays type-stable.
    empty: Mutex<Vec<NodePtr<T>>>,
    /// Objects on the free lists, give or take the ones in flight; bounds them.
    idle: CachePadded<AtomicUsize>,
    max_idle: usize,
    min_idle: usize,
    created: AtomicUsize,
    misses: AtomicUsize,
    discarded: AtomicUsize,
    dropped_over_cap: AtomicUsize,
    trimmed: AtomicUsize,
}

// SAFETY: `Shared` owns `T`s (in its free lists) and hands them from thread to thread, which
// `T: Send` allows; it never gives out `&T`, so `T: Sync` is not needed. The closures are
// `Send + Sync` by their type. Every other field is a lock or an atomic.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above: all access to the free lists goes through their locks.
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
/// same objects. [`get`](Pool::get) hands out an exclusive [`Pooled`] handle; dropping that
/// handle puts the object back, to be reset and handed out again.
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
/// - [`get`](Pool::get) with an idle object on the calling thread's shard: one uncontended
///   lock, two atomic read-modify-writes (the idle count and the pool handle the object
///   carries while out), and the reset closure. On an empty shard, one lock per other shard
///   until one has an object; on a miss, the factory and at most one allocation (the node),
///   none if a discarded object left its node behind.
/// - Dropping a [`Pooled`]: one atomic decrement on the object's count, one on the idle
///   count, one lock, one atomic decrement of the pool handle.
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

/// Counters of one pool, summed over its shards; see [`Pool::stats`].
///
/// Counts are objects, cumulative since the pool was built, except `idle`, which is a
/// reading of the moment. Readings taken while other threads use the pool are each exact
/// but not taken at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Objects the factory built (plus those taken in by [`Pool::adopt`]).
    pub created: u64,
    /// Objects waiting in the pool now.
    pub idle: u64,
    /// [`Pool::get`] calls served with an idle object.
    pub hits: u64,
    /// [`Pool::get`] calls that found no idle object and ran the factory.
    pub misses: u64,
    /// Objects dropped because the reset function returned `false` (or panicked).
    pub discarded: u64,
    /// Objects dropped on their way back because the pool already held `max_idle`.
    pub dropped_over_cap: u64,
    /// Objects dropped by [`Pool::clear`].
    pub trimmed: u64,
}

impl<T> Pool<T> {
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

    /// Hands out an object: an idle one, reset, or else a new one from the factory.
    ///
    /// Looks in the calling thread's shard first, then steals from the others. Idle objects
    /// whose reset returns `false` are dropped on the way.
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
    pub fn get(&self) -> Pooled<T> {
        while let Some(node) = self.shared.take_idle() {
            if self.shared.reset(&node) {
                return Pooled::check_out(node, &self.shared);
            }
        }
        self.shared.misses.fetch_add(1, Ordering::Relaxed); // Relaxed: a statistic.
        let value = (self.shared.factory)();
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
    pub fn adopt(&self, value: T) -> Pooled<T> {
        // Relaxed: a statistic.
        self.shared.created.fetch_add(1, Ordering::Relaxed);
        let node = self.shared.house(value);
        Pooled::check_out(node, &self.shared)
    }

    /// Reads the pool's counters. Locks each shard briefly, one at a time.
    pub fn stats(&self) -> PoolStats {
        let mut stats = PoolStats::default();
        for shard in self.shared.shards.iter() {
            let shard = shard.lock();
            stats.idle += shard.free.len() as u64;
            stats.hits += shard.hits;
        }
        // Relaxed: statistics, each read on its own.
        let read = |n: &AtomicUsize| n.load(Ordering::Relaxed) as u64;
        stats.created = read(&self.shared.created);
        stats.misses = read(&self.shared.misses);
        stats.discarded = read(&self.shared.discarded);
        stats.dropped_over_cap = read(&self.shared.dropped_over_cap);
        stats.trimmed = read(&self.shared.trimmed);
        stats
    }

    /// Drops idle objects until at most [`min_idle`](PoolBuilder::min_idle) remain.
    ///
    /// Runs the objects' destructors on the calling thread. Objects checked out now are not
    /// affected; they come back as usual.
    pub fn clear(&self) {
        self.shared.clear_down_to(self.shared.min_idle);
    }

    /// Builds objects with the factory until `n` are idle (or the idle bound is reached),
    /// so that the first `get`s find them.
    pub fn prefill(&self, n: usize) {
        let target = n.min(self.shared.max_idle);
        // Relaxed: a bound, re-checked by `put`.
        while self.shared.idle.load(Ordering::Relaxed) < target {
            drop(self.get_fresh());
        }
    }

    /// A new object from the factory, never an idle one.
    fn get_fresh(&self) -> Pooled<T> {
        let value = (self.shared.factory)();
        self.adopt(value)
    }

    /// The most idle objects this pool keeps.
    pub fn max_idle(&self) -> usize {
        self.shared.max_idle
    }

    /// Whether two handles are on the same pool.
    pub fn ptr_eq(a: &Pool<T>, b: &Pool<T>) -> bool {
        Arc::ptr_eq(&a.shared, &b.shared)
    }

    pub(crate) fn owns(&self, pooled: &Pooled<T>) -> bool {
        // SAFETY: a `Pooled` is a checked-out node (count >= 1), so `home` is `Some` and no
        // one writes it until the count returns to 0, which needs this `Pooled` dropped.
        let home = unsafe { pooled.node.as_ref() }
            .home
            .with(|home| unsafe { (*home).as_ref().map(Arc::as_ptr) });
        home == Some(Arc::as_ptr(&self.shared))
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
        // Never blocks: the idle count is an atomic, not a walk over the locked shards.
        f.debug_struct("Pool")
            .field("idle", &self.shared.idle.load(Ordering::Relaxed))
            .field("max_idle", &self.shared.max_idle)
            .field("created", &self.shared.created.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<T> PoolBuilder<T> {
    /// The most idle objects the pool keeps (default [`DEFAULT_MAX_IDLE`]). An object that
    /// comes back to a full pool is dropped, on the thread that gave it back.
    ///
    /// A bound of 0 makes a pool that never keeps anything.
    pub fn max_idle(mut self, n: usize) -> Self {
        self.max_idle = n;
        self
    }

    /// How many idle objects [`Pool::clear`] leaves in place (default 0).
    pub fn min_idle(mut self, n: usize) -> Self {
        self.min_idle = n;
        self
    }

    /// Builds the pool. It starts empty; see [`Pool::prefill`].
    pub fn build(self) -> Pool<T> {
        // Room for the whole idle bound in every shard (up to a limit), so that a shard first
        // used late, or a burst onto one shard, does not allocate on a release path.
        let room = self.max_idle.min(SHARD_PRESIZE);
        let shards = (0..sync::shard_count())
            .map(|_| {
                CachePadded::new(Mutex::new(Shard {
                    free: Vec::with_capacity(room),
                    hits: 0,
                }))
            })
            .collect();
        Pool {
            shared: Arc::new(Shared {
                factory: self.factory,
                reset: self.reset,
                shards,
                empty: Mutex::new(Vec::new()),
                idle: CachePadded::new(AtomicUsize::new(0)),
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

impl<T> Shared<T> {
    fn home_shard(&self) -> &Mutex<Shard<T>> {
        // `shards.len()` is a power of two.
        &self.shards[sync::thread_index() & (self.shards.len() - 1)]
    }

    /// Takes an idle node: from the home shard, else stolen from another.
    fn take_idle(&self) -> Option<NodePtr<T>> {
        let start = sync::thread_index();
        let mask = self.shards.len() - 1;
        for i in 0..self.shards.len() {
            // A blocking lock, not `try_lock`: a steal that skipped a busy shard would call
            // the factory while an object waits. Critical sections are a push or a pop.
            let mut shard = self.shards[(start + i) & mask].lock();
            if let Some(node) = shard.free.pop() {
                shard.hits += 1;
                drop(shard);
                // Relaxed: the bound is approximate by design; the lock orders the node.
                self.idle.fetch_sub(1, Ordering::Relaxed);
                return Some(node);
            }
        }
        None
    }

    /// Runs the reset function on an idle node; on `false` or a panic drops the object.
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
        // SAFETY: the node came off a free list: count 0, so this thread owns it and its
        // object is initialised. Stale readers touch only `refs`, and only to fail.
        let keep = unsafe { node.0.as_ref() }
            .value
            .with_mut(|value| (self.reset)(unsafe { (*value).assume_init_mut() }));
        guard.node = None;
        if !keep {
            self.discard(NodePtr(node.0), Discard::Reset);
        }
        keep
    }

    /// Puts `value` in a node: an empty one if there is one, else a new allocation.
    fn house(&self, value: T) -> NodePtr<T> {
        if let Some(node) = self.empty.lock().pop() {
            // SAFETY: an empty node has count 0 and sits only in `empty`, which we just
            // popped it from: this thread owns it, and its value slot is uninitialised.
            unsafe { node.0.as_ref() }.value.with_mut(|slot| unsafe {
                (*slot).write(value);
            });
            return node;
        }
        let node = Box::new(Node {
            refs: RefCount::new(),
            home: UnsafeCell::new(None),
            value: UnsafeCell::new(MaybeUninit::new(value)),
        });
        NodePtr(NonNull::from(Box::leak(node)))
    }

    /// Returns a node whose count just reached zero to a free list, or drops its object if
    /// the pool is full.
    fn put(&self, node: NodePtr<T>) {
        // Relaxed: the bound is a budget, not a synchronization point; the node itself is
        // handed over under the shard lock.
        if self.idle.fetch_add(1, Ordering::Relaxed) >= self.max_idle {
            self.idle.fetch_sub(1, Ordering::Relaxed);
            self.discard(node, Discard::OverCap);
            return;
        }
        self.home_shard().lock().free.push(node);
    }

    /// Drops the object in `node` and keeps the empty node for reuse.
    fn discard(&self, node: NodePtr<T>, why: Discard) {
        let counter = match why {
            Discard::Reset => &self.discarded,
            Discard::OverCap => &self.dropped_over_cap,
            Discard::Trim => &self.trimmed,
        };
        counter.fetch_add(1, Ordering::Relaxed); // Relaxed: a statistic.

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
        unsafe { keep.1.as_ref() }.value.with_mut(|value| unsafe {
            (*value).assume_init_drop();
        });
    }

    /// Drops idle objects until at most `keep` remain.
    fn clear_down_to(&self, keep: usize) {
        for shard in self.shards.iter() {
            loop {
                // Relaxed: a budget; the node moves under the lock.
                if self.idle.load(Ordering::Relaxed) <= keep {
                    return;
                }
                let Some(node) = shard.lock().free.pop() else {
                    break;
                };
                self.idle.fetch_sub(1, Ordering::Relaxed);
                self.discard(node, Discard::Trim);
            }
        }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // Every handle is gone, so no node is checked out and no reader holds a pointer:
        // the locks below are uncontended (taken, not `get_mut`, to keep loom's shape).
        // each node is either on a free list (with an object) or empty.
        for shard in self.shards.iter() {
            for node in shard.lock().free.drain(..) {
                // SAFETY: owned exclusively (see above); made by `Box::leak` in `house`.
                let node = unsafe { Box::from_raw(node.0.as_ptr()) };
                // SAFETY: an idle node's object is initialised and dropped once, here.
                node.value
                    .with_mut(|value| unsafe { (*value).assume_init_drop() });
            }
        }
        for node in self.empty.lock().drain(..) {
            // SAFETY: as above; the object slot is uninitialised and `MaybeUninit` drops
            // nothing.
            drop(unsafe { Box::from_raw(node.0.as_ptr()) });
        }
    }
}

/// Drops one reference on a checked-out node and, if it was the last, returns the node to
/// its pool.
///
/// # Safety
///
/// `node` must be a node whose count includes a reference owned by the caller, which this
/// call consumes.
pub(crate) unsafe fn release<T>(node: NonNull<Node<T>>) {
    // SAFETY: the caller's reference keeps the node checked out, so its memory is live.
    if !unsafe { node.as_ref() }.refs.decrement() {
        return;
    }
    // Count 0 with the Acquire fence done: this thread owns the node and sees every write
    // made through other references. Take the pool handle out before the node is visible on
    // a free list, where another thread could check it out and overwrite `home`.
    // SAFETY: exclusive ownership (above); `home` is `Some` while checked out.
    let home = unsafe { node.as_ref() }
        .home
        .with_mut(|home| unsafe { (*home).take() });
    let home = home.expect("a checked-out node holds its pool");
    home.put(NodePtr(node));
    // If this was the last handle on the pool, this drop frees every node, this one too.
    drop(home);
}

/// An exclusive handle on one pooled object: Go's `pool.Get()` result, with its `Release`
/// done by `Drop`.
///
/// Dereferences to `T` mutably. Dropping it returns the object to its pool (to be reset
/// when next handed out); [`Container::update`](crate::Container::update) publishes it as a
/// container's new version instead.
///
/// # Send and Sync
///
/// `Send` when `T: Send` and `Sync` when `T: Sync`, like `Box<T>`.
///
/// # Examples
///
/// ```
/// use poolswap::Pool;
///
/// let pool = Pool::new(String::new, |s| { s.clear(); true });
/// let mut s = pool.get();
/// s.push_str("pooled");
/// std::thread::spawn(move || assert_eq!(&*s, "pooled")).join().unwrap();
/// assert_eq!(pool.stats().idle, 1); // dropped on the other thread, back in the pool
/// ```
pub struct Pooled<T> {
    node: NonNull<Node<T>>,
    _owns: PhantomData<T>,
}

// SAFETY: a `Pooled` owns its object as a `Box` does; moving it moves a `T` (and, on drop,
// hands the `T` to the pool, which `T: Send` also covers).
unsafe impl<T: Send> Send for Pooled<T> {}
// SAFETY: `&Pooled<T>` gives only `&T`.
unsafe impl<T: Sync> Sync for Pooled<T> {}

impl<T> Pooled<T> {
    /// Marks an owned node checked out and wraps it.
    fn check_out(node: NodePtr<T>, shared: &Arc<Shared<T>>) -> Pooled<T> {
        // SAFETY: the caller owns the node (count 0, on no list); `home` is ours to write
        // until the Release store below publishes it.
        let n = unsafe { node.0.as_ref() };
        // SAFETY: as above: no one else reads or writes `home` while the count is 0.
        n.home
            .with_mut(|home| unsafe { *home = Some(Arc::clone(shared)) });
        n.refs.reset_to_one();
        Pooled {
            node: node.0,
            _owns: PhantomData,
        }
    }

    /// Gives up the handle without dropping the reference it holds.
    pub(crate) fn into_raw(this: Pooled<T>) -> NonNull<Node<T>> {
        ManuallyDrop::new(this).node
    }

    /// The object's reference count: 1, unless a container reader is in the middle of
    /// finding out that this object is not the container's current version.
    pub fn ref_count(this: &Pooled<T>) -> usize {
        // SAFETY: this handle's reference keeps the node live.
        unsafe { this.node.as_ref() }.refs.load()
    }
}

impl<T> Deref for Pooled<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: checked out, so the object is initialised; this handle is exclusive, and
        // other parties touch only `refs`.
        unsafe { self.node.as_ref() }
            .value
            .with(|value| unsafe { (*value).assume_init_ref() })
    }
}

impl<T> DerefMut for Pooled<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { self.node.as_ref() }
            .value
            .with_mut(|value| unsafe { (*value).assume_init_mut() })
    }
}

impl<T> Drop for Pooled<T> {
    fn drop(&mut self) {
        // SAFETY: this handle owns one reference.
        unsafe { release(self.node) }
    }
}

impl<T: fmt::Debug> fmt::Debug for Pooled<T> {
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
    unsafe { node.as_ref() }
        .value
        .with(|value| unsafe { (*value).assume_init_ref() })
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
