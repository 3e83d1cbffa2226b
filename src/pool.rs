//! The object pool: Go's `sync.Pool` with a reset function and bounds, whose objects a
//! [`Container`](crate::Container) publishes as versions.
//!
//! # How it works
//!
//! Idle objects wait in per-thread *magazines* and *depots*, Bonwick's magazine layer
//! ("Magazines and Vmem", USENIX 2001) in the shape of Go's per-P `poolLocal`
//! (`sync/pool.go`). A thread gets and puts back through its own magazine (up to 16
//! objects) with plain loads and stores: no lock, no atomic read-modify-write. A full
//! magazine spills into the thread's depot (a locked list), an empty one refills from it,
//! and a thread whose depot is empty steals a batch from another thread's before it runs
//! the factory. Stealing is what the hot-swap pattern needs: the last reader of an old
//! version releases it on *its* thread while the writer gets on *another*. A container
//! version's last release goes to the depot of the thread that published it (the writer),
//! where that thread's next `get` looks first.
//!
//! The idle bound counts magazines too, through a budget of *idle permits* handed to
//! threads in batches, as Linux's per-CPU counters hand out counts (`budget.rs`); without a
//! set `max_idle` it adapts to demand. Depots keep Go's two generations (`sync.Pool`'s
//! `local` and `victim`): `trim` and decay drop what stayed idle across two of them. A trim
//! takes other live threads' magazines through a `membarrier` handshake (`local/steal.rs`),
//! and a thread's first 32 slow-path operations bypass its magazine (a *slow start*, as
//! tcmalloc's per-thread caches grow with use), so a thread that used a pool a few times
//! and went idle hides nothing from a trim. With a live bound (`max_live`) the magazines
//! stay empty: every return goes to a depot, where a getter waiting at the bound on any
//! thread finds it (`shared.rs`, "The live bound").
//!
//! The reset function runs in [`Pool::get`], on the thread that asks for an object (in a
//! container, the writer), not when the last reference drops, which may be on a reader's
//! thread: the reader that happens to be last should not pay for clearing a large map. An
//! idle object so keeps its old contents until it is handed out again or dropped.
//!
//! # Map
//!
//! This file is the front: [`Pool`], [`PoolStats`], [`ResetOutcome`] and the re-exports.
//! Each child imports only the children listed below it (and this file's `Pool`):
//!
//! | file | holds |
//! |---|---|
//! | `builder.rs` | [`PoolBuilder`] |
//! | `version.rs` | `Version`: a container's handle on a node, its one door into the pool |
//! | `pooled.rs` | [`Pooled`], [`OwnedPooled`], [`Publishable`]: the checked-out objects |
//! | `writer.rs` | [`Writer`]: the writer's side, what container and op log writers ask (below) |
//! | `get_idle.rs` | getters that hand out idle objects only, behind `Writer` |
//! | `idle.rs` | `trim`, `clear`, `prefill` and `spawn_trimmer`: the idle objects as a user manages them |
//! | `shared.rs` | `Shared`, the state every handle shares: put, return of retired versions, the live bound, close |
//! | `wait_async.rs` | `get_async` and the `poolswap-reclaim` thread (feature `async`) |
//! | `node.rs` | `Node`: one object, its count, its type-stable memory |
//! | `local.rs` | `Local`, a thread's magazine and depot; `local/list.rs` the list of them, `local/depot_ops.rs` what any thread does to a depot, `local/steal.rs` a trim's handshake |
//! | `depot.rs` | `Depot`: two generations of idle nodes behind a lock |
//! | `budget.rs` | `IdleBudget`: the idle bound's permits |
//! | `decay.rs` | `Decay`: the period grid and the clock |
//! | `wait_blocking.rs` | `Wait`: how long a getter at the live bound waits |
//!
//! # The writer's side
//!
//! Whatever writes a container's versions (a [`Container`](crate::Container)'s `get_new`,
//! `rcu` and `update`, and the op log's `publish`) asks the pool and its reclamation
//! through one crate-private interface, [`Writer`] (`pool.writer()`), never through the
//! retired list or a getter of its own:
//!
//! - **take** a version: [`Pool::get`]'s (idle, else after a pass, else new), the one
//!   returned last to this thread's depot (usually the version published last but one),
//!   any idle one without a pass or the factory, or any but a new one;
//! - **build** one from the factory, whatever is idle (a writer for which an idle version
//!   is worth no more than a new one, having looked already);
//! - **put** one **back** on top of this thread's depot, or **set** it **aside** as a victim
//!   (taken only when nothing else is idle), or **discard** it;
//! - **retire** the version an update replaced, and look at the retired versions: whether
//!   any is pending, whether a given one still is, whether a hazard slot seems to hold it,
//!   and pass over them (optionally only when no heavy barrier is needed).
//!
//! A bounded wait for a retired version is built from those looks and passes by the writer
//! that wants one (the op log's `publish`: its module docs, "What it costs"); the pool
//! itself never waits for a reader. The getters behind `Writer` are private to the pool and
//! marked `// layout: one caller`: `scripts/check-layout.py` fails if a file outside
//! `src/pool/` names one, or if the op log imports from `src/reclaim/`.

use std::fmt;
use std::time::Duration;

mod budget;
mod builder;
mod decay;
mod depot;
mod get_idle;
mod idle;
mod local;
mod node;
mod pooled;
mod shared;
pub(crate) mod version;
#[cfg(all(feature = "async", not(loom)))]
mod wait_async;
mod wait_blocking;
mod writer;

pub use self::builder::PoolBuilder;
use self::depot::NodePtr;
pub use self::pooled::{OwnedPooled, Pooled, Publishable};
use self::shared::{PoolLocal, PoolNode, Shared};
use self::wait_blocking::{NoObject, Wait};
pub(crate) use self::writer::Writer;
use crate::sync::{Arc, AtomicU64, Ordering};

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
///   thread-local lookup, the reset, and plain loads and stores (no lock, no atomic
///   read-modify-write, no fence: the busy mark that lets `trim` take an idle thread's
///   magazine is a store, a compiler fence, a load and a branch). Otherwise one lock per
///   depot that seems to hold objects (its own first, then other threads'), moving up to
///   16 objects at once; on a miss, the factory and one allocation (the node), none if a
///   discarded object left its node behind.
/// - Dropping a [`Pooled`]: the same, the other way. A full magazine spills half of itself
///   (all of it if the thread got nothing since its last spill) to the thread's depot under
///   one lock; a put with no spare idle permit and none parked in its depot takes 4 from the
///   budget in one atomic read-modify-write.
/// - A thread's first use of a pool: two allocations (its magazine and depot, and its
///   registry entry), once.
/// - With [`decay`](PoolBuilder::decay): one clock read per slow path and per 256 hits on a
///   thread; a due tick drops objects on the thread that finds it due.
/// - Cloning a handle: two atomic increments (the handle count and the `Arc`).
/// - With a [`max_live`](PoolBuilder::max_live) bound, `get` and the return of an object
///   take locks instead (see there), and `get` may wait.
///
/// # Lifetime
///
/// When the last handle (`Pool`, or the [`Container`](crate::Container) that holds one) is
/// dropped, every idle object is dropped, on that thread, even while guards on container
/// versions remain: a version still held then is dropped at the first reclamation after its
/// last guard drops (see [`reclaim`](crate::reclaim())), not kept. So an
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

/// Counters of one pool; see [`Pool::stats`].
///
/// Counts are objects, cumulative since the pool was built, except `idle`, `live` and
/// `max_idle`, which are readings of the moment. Each field is exact when no other thread
/// uses the pool. Under traffic the per-thread counters are read one after another, not at
/// one instant, so `idle` may miss an object, or count one twice, while it moves between a
/// thread's magazine and a depot; it never reads more than `max_idle` (it is capped by the
/// idle permits in use, which at every instant are at least the idle count).
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
    /// Objects dropped by [`Pool::trim`] and [`Pool::clear`] (and by the thread of
    /// [`Pool::spawn_trimmer`]).
    pub trimmed: u64,
    /// Objects dropped by decay ticks (see [`PoolBuilder::decay`]).
    pub decayed: u64,
    /// The idle bound in effect now: the one set with [`PoolBuilder::max_idle`], or else the
    /// adaptive bound's value (at least 256; it rises with the objects live at a miss and
    /// falls at `trim` and decay ticks).
    pub max_idle: u64,
    /// Objects of this pool that exist now: idle, checked out, published in containers,
    /// held by readers (and leaked ones). With a [`max_live`](PoolBuilder::max_live) bound,
    /// the bound's own count: at most `max_live`, except for objects taken in by
    /// [`Pool::adopt`]. Without one, `created` less the four counts of dropped objects.
    pub live: u64,
}

/// What a pool's reset function returns: whether to keep the object it just reset.
///
/// Implemented for `()` (always keep: `Pool::new(Vec::new, Vec::clear)`) and for `bool`
/// (`true` keeps the object, `false` drops it). The pool stores the reset function as one
/// closure returning `bool` either way, so the choice costs nothing at run time.
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
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::ResetOutcome;
    ///
    /// assert!(().keep()); // a reset that returns nothing keeps every object
    /// assert!(true.keep());
    /// assert!(!false.keep()); // the pool drops the object
    /// ```
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
    /// `reset`, with the default bounds: an idle bound that adapts to demand (at least 256;
    /// see [`PoolBuilder::max_idle`]), no `min_idle`, no live bound, no decay.
    ///
    /// `reset` runs on each returned object just before [`get`](Pool::get) hands it out
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
    /// assert_eq!(pool.stats().max_idle, 2);
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn builder<F, R, O>(factory: F, reset: R) -> PoolBuilder<T>
    where
        F: Fn() -> T + Send + Sync + 'static,
        R: Fn(&mut T) -> O + Send + Sync + 'static,
        O: ResetOutcome,
    {
        PoolBuilder::new(
            Box::new(factory),
            // One closure returning `bool`, whatever `O` is: `keep` inlines into it, so a
            // reset is one indirect call either way.
            Box::new(move |object: &mut T| reset(object).keep()),
        )
    }
}

impl<T> Pool<T> {
    /// The end of every hit that leaves the magazine's fast path: resets `node` and hands
    /// it out, counting the hit on `local` (the calling thread's share, if it has one);
    /// `None` if the reset discarded it (`shared.reset` then dropped it). Costs the reset
    /// and a relaxed load and store.
    #[inline]
    pub(super) fn hand_out(
        &self,
        node: NodePtr<PoolNode<T>>,
        local: Option<&PoolLocal<T>>,
    ) -> Option<Pooled<'_, T>> {
        if !self.shared.reset(&node) {
            return None;
        }
        if let Some(local) = local {
            local.count_hit();
        }
        Some(Pooled::check_out(node, self))
    }

    /// Reads the pool's counters. Walks every thread's share with relaxed atomic loads
    /// (O(threads that used the pool)): it takes no lock and never blocks.
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
        // reading within the bound. (Without traffic it holds the spare permits too, so the
        // cap changes nothing.)
        stats.idle = stats.idle.min(shared.budget.in_use() as u64);
        stats.created = read(&shared.created);
        stats.misses = read(&shared.misses);
        stats.discarded = read(&shared.discarded);
        stats.dropped_over_cap = read(&shared.dropped_over_cap);
        stats.trimmed = read(&shared.trimmed);
        stats.decayed = read(&shared.decayed);
        stats.live = shared.live();
        stats.max_idle = shared.budget.max() as u64;
        stats
    }

    /// Whether two handles are on the same pool: a pointer comparison.
    #[must_use]
    pub(crate) fn ptr_eq(a: &Pool<T>, b: &Pool<T>) -> bool {
        Arc::ptr_eq(&a.shared, &b.shared)
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
    /// (see [`try_get`](Pool::try_get) for a `get` that does not wait,
    /// [`get_timeout`](Pool::get_timeout) for one with a deadline, and `get_async`, with the
    /// `async` feature, for one that awaits).
    ///
    /// # Deadlocks
    ///
    /// With a `max_live` bound, a thread that holds objects of the pool itself (`Pooled`s,
    /// or guards on container versions that keep them from coming back) and calls `get`
    /// at the bound waits forever if no other thread will give one back. Without the bound,
    /// `get` never waits.
    ///
    /// `get` tells that case only where it is sure: when, about to wait, the calling thread
    /// is the process's only thread (read from `/proc/self/stat`: Linux only), a last
    /// reclamation returned nothing and a last look found nothing, it panics (see below)
    /// instead of waiting. Nothing is checked before a getter is about to wait, so a `get`
    /// that finds an object pays nothing for it. Not detected, and so still a wait without
    /// end:
    ///
    /// - any wait while the process has another thread, even one that will never give an
    ///   object back: one blocked too, or holding guards or `Pooled`s it never drops (a
    ///   guard or a `Pooled` may have been sent to it by the calling thread: both are
    ///   `Send`, so what a thread acquired says nothing of what it still holds);
    /// - every platform but Linux, and builds under Miri;
    /// - `get_async` (feature `async`), which another task of the same thread may serve;
    ///   and [`get_timeout`](Pool::get_timeout), which ends at its deadline.
    ///
    /// # Panics
    ///
    /// If the factory or the reset function panics, the panic reaches the caller; the
    /// object being reset is dropped, and the pool stays usable (a live permit taken for the
    /// factory is given back).
    ///
    /// If the wait at the live bound could never end, as above: the message names
    /// [`try_get`](Pool::try_get) and [`get_timeout`](Pool::get_timeout), and the panic
    /// points at the line that called `get` (or `get_owned`, a container's `get_new` or
    /// `rcu`).
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
    // `always`: the hit path is a few loads and stores; with the decay look (a test and a
    // cold call) LLVM's heuristics may decline to inline it into a caller's loop, which
    // then pays a call per `get`.
    #[inline(always)]
    #[track_caller]
    #[must_use = "the object goes straight back to the pool if the guard is dropped"]
    pub fn get(&self) -> Pooled<'_, T> {
        let shared = &*self.shared;
        if let Some(local) = shared.local_fast() {
            // SAFETY: `local_fast` returns the calling thread's own `Local`, of this pool.
            if let Some(node) = unsafe { local.pop(&shared.budget) } {
                if shared.reset(&node) {
                    // No clock here: one hit in `POLL_EVERY` looks whether decay is due.
                    if local.count_hit() % decay::POLL_EVERY == 0 {
                        return self.hit_and_poll_decay(node);
                    }
                    return Pooled::check_out(node, self);
                }
            }
        }
        self.get_slow()
    }

    /// The end of `get`'s hit path once in `POLL_EVERY` hits: hands out `node` and runs a
    /// decay tick if one is due. Out of line, so that `get` stays small enough to inline.
    /// The tick runs after the check-out: a destructor that panics in it puts the object
    /// back as the guard unwinds.
    #[cold]
    #[inline(never)]
    fn hit_and_poll_decay(&self, node: NodePtr<PoolNode<T>>) -> Pooled<'_, T> {
        let pooled = Pooled::check_out(node, self);
        Shared::poll_decay(&self.shared);
        pooled
    }

    /// `get` past the calling thread's magazine: its depot, other threads' depots, and at
    /// last the factory; also a thread's first `get`, which registers it.
    #[cold]
    #[inline(never)]
    #[track_caller] // `get`'s caller: the panic at a wait that cannot end points there
    fn get_slow(&self) -> Pooled<'_, T> {
        let shared = &*self.shared;
        Shared::poll_decay(&self.shared);
        let local = Shared::local(&self.shared);
        if shared.max_live.is_some() {
            return match self.get_bounded(local, Wait::Forever) {
                Ok(pooled) => pooled,
                Err(NoObject::Alone) => would_wait_forever(),
                Err(NoObject::Deadline) => unreachable!("a wait without end has no deadline"),
            };
        }
        if let Some(local) = local {
            // SAFETY: `Shared::local` returns the calling thread's own `Local`, of this pool.
            if let Some(pooled) = unsafe { self.take_or_reclaim(local) } {
                return pooled;
            }
        }
        self.get_made()
    }

    /// What [`get`](Pool::get) hands out short of the factory, for a pool without a live
    /// bound: an idle object from the calling thread's share or another's (`Local::take`),
    /// else after a reclamation pass that returned retired versions; `None` if neither
    /// found one.
    ///
    /// # Safety
    ///
    /// `local` is the calling thread's own `Local`, of this pool (what `Shared::local`
    /// returns).
    unsafe fn take_or_reclaim(&self, local: &PoolLocal<T>) -> Option<Pooled<'_, T>> {
        let shared = &*self.shared;
        // Again after a reclamation returned retired versions (the writer's own old
        // versions, usually) to their pools, or after another thread's pass ended; at
        // most 16 times, should others' passes keep returning only their own.
        for _ in 0..16 {
            let looked = shared.retired.passes_ended();
            // SAFETY: per the caller, `local` is the calling thread's own, of this pool.
            while let Some(node) = unsafe { local.take(&shared.budget, &shared.locals) } {
                if let Some(pooled) = self.hand_out(node, Some(local)) {
                    return Some(pooled);
                }
            }
            if shared.retired.reclaim_pending(looked) == 0 {
                break;
            }
        }
        None
    }

    /// [`get`](Pool::get) without the factory: an idle object, or one a reclamation pass
    /// returned; `None` if there is none (every object is checked out or still held by
    /// readers), or the pool has a live bound. For the op log, whose factory's versions
    /// cost a full copy. Costs as `get`'s slow path without the factory.
    // layout: one caller (`Writer::take_unless_new`)
    fn get_unless_new(&self) -> Option<Pooled<'_, T>> {
        if self.shared.max_live.is_some() {
            return None;
        }
        let local = Shared::local(&self.shared)?;
        // SAFETY: `Shared::local` returns the calling thread's own `Local`, of this pool.
        unsafe { self.take_or_reclaim(local) }
    }

    /// `get`'s last step alone, for a pool without a live bound: a new object from the
    /// factory, whatever is idle. For the op log once [`get_unless_new`](Pool::get_unless_new)
    /// and its wait found nothing. Costs the factory and a node (the empty nodes' lock, or
    /// an allocation).
    // layout: one caller (`Writer::build`; and `get` here)
    fn get_made(&self) -> Pooled<'_, T> {
        debug_assert!(
            self.shared.max_live.is_none(),
            "a bounded pool waits instead"
        );
        // No live bound: the permit is always granted (and counted, for `stats`).
        let granted = self.shared.try_acquire_live_permit();
        debug_assert!(granted);
        self.make_new()
    }

    /// Runs the factory for a `get` that holds a permit; gives the permit back if it panics.
    fn make_new(&self) -> Pooled<'_, T> {
        let shared = &*self.shared;
        let value = shared.make();
        // Counted once the factory has returned: one that panics built nothing.
        // Relaxed: statistics.
        shared.misses.fetch_add(1, Ordering::Relaxed);
        // Nothing was idle: what is live now is the working set (the adaptive idle bound).
        shared.budget.note_demand(shared.live_now());
        Pooled::check_out(shared.node_for(value), self)
    }

    /// `get`, `try_get` and `get_timeout` in a pool with a live bound: an idle object from
    /// any thread's depot (this thread's first), else a new one if the bound allows, else
    /// waits as `wait` allows until an object comes back or one is dropped; `Err` when
    /// `wait` gives up, or when nothing could end a wait without end.
    fn get_bounded(
        &self,
        local: Option<&PoolLocal<T>>,
        wait: Wait,
    ) -> Result<Pooled<'_, T>, NoObject> {
        let shared = &*self.shared;
        if let Some(local) = local {
            // SAFETY: `Shared::local` returns the calling thread's own `Local`.
            debug_assert!(unsafe { local.magazine_unused() });
        }
        loop {
            match shared.take_or_acquire_live_permit(local, wait) {
                Ok(Some(node)) => {
                    // Outside the lock: the reset is user code. If it discards the object,
                    // the permit it frees is ours to take on the next turn (or a
                    // waiter's, which the discard wakes).
                    if let Some(pooled) = self.hand_out(node, local) {
                        return Ok(pooled);
                    }
                }
                Ok(None) => return Ok(self.make_new()),
                Err(why) => return Err(why),
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
        self.get_bounded(local, Wait::No).ok()
    }

    /// [`get`](Pool::get) that waits at most `timeout` at the
    /// [`max_live`](PoolBuilder::max_live) bound: `None` if no object could be had by then.
    /// Without a bound, or below it, the same as `get` (in `Some`): it never waits.
    ///
    /// While it waits it reclaims retired container versions (which guards' drops do not
    /// announce) before it sleeps and at each wake-up, as `get` does, waking at least every
    /// 0.5 ms while versions are retired. The deadline bounds the sleep, not the work: the
    /// last look, a reclamation and the object's reset may run past it.
    ///
    /// # Costs
    ///
    /// As `get` when an object is at hand. At the bound: one clock read per look, the
    /// search under the pool's waiter lock (a lock per depot), and a condition variable
    /// wait until a return, a drop, a poll or the deadline. No allocation.
    ///
    /// # Panics
    ///
    /// As [`get`](Pool::get).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| vec![0u8; 1024], |v: &mut Vec<u8>| v.fill(0))
    ///     .max_live(1)
    ///     .build();
    /// let only = pool.get();
    /// // The one object the bound allows is out, and nobody gives it back.
    /// assert!(pool.get_timeout(Duration::from_millis(5)).is_none());
    /// drop(only);
    /// assert!(pool.get_timeout(Duration::from_millis(5)).is_some());
    /// ```
    #[must_use = "the object goes straight back to the pool if the guard is dropped"]
    pub fn get_timeout(&self, timeout: Duration) -> Option<Pooled<'_, T>> {
        if self.shared.max_live.is_none() {
            return Some(self.get());
        }
        let local = Shared::local(&self.shared);
        self.get_bounded(local, Wait::within(timeout)).ok()
    }

    /// Takes an object built elsewhere into the pool, as Go's `NewContainer(pool, obj)` does.
    ///
    /// The object will be reset and reused like any other; it counts as created, not as a
    /// miss. With a [`max_live`](PoolBuilder::max_live) bound it counts toward the bound,
    /// even over it, and never waits. For an [`OwnedPooled`], write
    /// `Pooled::into_owned(pool.adopt(value))`.
    ///
    /// Costs one allocation (its node) unless a discarded object left an empty node behind
    /// (then a lock), and one relaxed atomic increment (two with a live bound).
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
        self.shared.acquire_live_permit_over_bound();
        // Relaxed: a statistic.
        self.shared.created.fetch_add(1, Ordering::Relaxed);
        let node = self.shared.node_for(value);
        Pooled::check_out(node, self)
    }

    /// [`get`](Pool::get), returning a guard that owns a handle on the pool instead of
    /// borrowing it, for `thread::spawn`, `tokio::spawn` or a struct field. Costs what
    /// `get` does, plus a handle clone (two atomic increments; two decrements when the
    /// guard goes). The
    /// other getters' guards convert the same way: `pool.get_timeout(t).map(Pooled::into_owned)`,
    /// `Pooled::into_owned(pool.get_async().await)`.
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
    #[track_caller]
    #[must_use = "the object goes straight back to the pool if the guard is dropped"]
    pub fn get_owned(&self) -> OwnedPooled<T> {
        Pooled::into_owned(self.get())
    }
}

/// The panic of a `get` whose wait nothing could end (`wait_blocking.rs`, "A wait that
/// cannot end"), at the line that called the public getter.
#[cold]
#[inline(never)]
#[track_caller]
fn would_wait_forever() -> ! {
    panic!(
        "poolswap: a get at the pool's max_live bound would wait for ever: no object is \
         idle, none may be made, and the calling thread is the process's only thread, so \
         nothing can give one back (this thread holds them: `Pooled`s, or guards on \
         container versions); drop one first, or use `try_get` or `get_timeout`, which \
         do not wait for ever"
    )
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

#[cfg(all(test, not(loom)))]
mod tests;
