//! The state every handle on one pool shares, and the paths that move nodes between the
//! pool's threads: reset, discard, put, the return of a retired version, registration of a
//! thread, and the close when the last handle goes.
//!
//! # What keeps what alive
//!
//! `Shared` lives in an `Arc` held by every [`Pool`] handle (a [`Container`] holds one),
//! by every container version (its node's keepalive, so that guards may outlive the pool),
//! and by each thread's registry entry for the pool. Only the handles count as *users*:
//! `handles` counts them, and when the last goes the pool **closes**: every idle object is
//! dropped and its node freed (no reader can exist without a handle, so type-stability is
//! no longer needed), and every depot refuses what comes later, so a version whose last
//! guard drops afterwards is dropped too. The rest of `Shared` (the `Local`s, counters and
//! closures) is freed when the last `Arc` goes.
//!
//! So idle objects never keep their pool alive (an object holding a guard on an older
//! version would otherwise make a cycle: idle object → guard → node → pool → idle object),
//! a forgotten guard leaks its own version and this bookkeeping only, and a thread's
//! registry entry for a closed pool is swept away lazily (see `registry.rs`).
//!
//! # The live bound
//!
//! With [`PoolBuilder::max_live`] set, `live` counts the objects that exist (idle, checked
//! out, published, held by readers) and never exceeds the bound: each object holds a
//! *live permit* (tokio's `Semaphore` word), taken before the factory runs (given back if it
//! panics) and given back after the object is dropped. Such a pool never uses its
//! magazines: a returned object goes to a depot, where every thread can take it, so a
//! thread waiting at the bound sees every object that comes back, whichever thread returns
//! it.
//!
//! ## Synchronization
//!
//! A getter at the bound looks for an idle object in every depot (locking each) and tries
//! to take a live permit, all while holding `waiters`; then waits on `returned`, which
//! unlocks `waiters`. Whoever makes an object available (a donation to a depot) or frees a
//! live permit (a drop) does so first, then locks `waiters` and notifies ([`Shared::wake`]).
//! So either the getter's search comes after that lock, and sees the change (the lock
//! orders it after the change), or the getter was already waiting when the notifier got the
//! lock, and is woken. Lock order: `waiters`, then a depot; nobody locks `waiters` while
//! holding a depot's lock.
//!
//! A retired version comes back only at a reclamation, and a guard's drop neither reclaims
//! nor notifies (it is one store). So a getter that finds nothing reclaims (with `waiters`
//! unlocked: a version it frees comes back through the path above) and looks again before
//! it waits, and waits with a timeout while versions are retired: it never sleeps past
//! [`RECLAIM_POLL`] while a retired version could come back.
//!
//! [`Pool`]: crate::Pool
//! [`Container`]: crate::Container
//! [`PoolBuilder::max_live`]: crate::PoolBuilder::max_live

use std::ptr::NonNull;

use super::budget::{IdleBudget, PermitOnUnwind, DEFAULT_MAX_IDLE};
use super::decay::{Decay, Tick};
use super::depot::{Generation, NodePtr};
use super::local::{Local, LocalList};
use super::node::{free_all, Node};
use super::wait_blocking::{alone, NoObject, Wait, ALONE_EVERY, CAN_TELL, IDLE_POLL, RECLAIM_POLL};
use crate::reclaim::{self, registry};
use crate::sync::{Arc, AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex, Ordering};

/// A node of a pool of `T`: its keepalive is the pool's shared state.
pub(crate) type PoolNode<T> = Node<T, Arc<Shared<T>>>;
/// A thread's share of a pool of `T`.
pub(super) type PoolLocal<T> = Local<PoolNode<T>>;

/// The factory: builds a new object.
pub(super) type Factory<T> = dyn Fn() -> T + Send + Sync;
/// The reset, as the builder stores it: readies an object for reuse; `false` drops it.
pub(super) type Reset<T> = dyn Fn(&mut T) -> bool + Send + Sync;

/// A pool's settings, gathered by the builder.
pub(super) struct Settings<T> {
    pub(super) factory: Box<Factory<T>>,
    pub(super) reset: Box<Reset<T>>,
    /// A fixed idle bound, or `None` for the adaptive one.
    pub(super) max_idle: Option<usize>,
    pub(super) min_idle: usize,
    pub(super) max_live: Option<usize>,
    pub(super) decay: Option<Decay>,
    /// The slow start's length (`PoolBuilder::slow_start_ops`): loom builds only.
    #[cfg(loom)]
    pub(super) slow_start_ops: u32,
}

/// Counts above this abort the process, as std's `Arc` does: leaked handles
/// (`mem::forget` in a loop) must not wrap the count around and close a pool in use.
const MAX_HANDLES: usize = isize::MAX as usize;

/// State shared by every handle on one pool.
pub(crate) struct Shared<T> {
    /// Unique for the life of the process: keys the per-thread registries.
    pub(super) id: u64,
    /// Makes or claims the calling thread's `Local`: [`claim_local::<T>`], instantiated
    /// where `build` knows `T: Send + 'static`, so that paths without that bound
    /// (`Pooled`'s `Drop`) can claim one too.
    pub(super) claim_local: fn(&Arc<Shared<T>>) -> Option<&PoolLocal<T>>,
    pub(super) factory: Box<Factory<T>>,
    pub(super) reset: Box<Reset<T>>,
    /// Decay by itself, if the builder asked for it.
    pub(super) decay: Option<Decay>,
    pub(super) locals: LocalList<PoolNode<T>>,
    /// How many slow-path operations a thread's magazine starts slow for: set per pool
    /// under loom only, so that its models reach the slow start (see [`Shared::slow_start`]).
    #[cfg(loom)]
    slow_start_ops: u32,
    /// Published nodes whose object was dropped, kept so their memory stays type-stable.
    empty: Mutex<Vec<NodePtr<PoolNode<T>>>>,
    pub(super) budget: IdleBudget,
    pub(super) min_idle: usize,
    /// The live bound ([`PoolBuilder::max_live`](crate::PoolBuilder::max_live)), if set.
    /// Read only on slow paths: with a bound the magazines stay empty, so every `get` and
    /// every put misses its magazine and reaches the branches that read it.
    pub(super) max_live: Option<usize>,
    /// With a live bound, the objects that exist now (see the module's "live bound"):
    /// raised before the factory runs (and by `adopt`), lowered after an object is
    /// dropped; at most `max_live`, but for objects taken in by `adopt`. Unused (0) without
    /// a bound, whose paths so touch no atomic they did not touch before: `stats` derives
    /// the count from the other counters instead.
    live: AtomicUsize,
    /// Held by a getter waiting at the live bound while it searches; see the module docs.
    waiters: Mutex<()>,
    /// Notified when an object comes back to a depot or a live permit is freed.
    returned: Condvar,
    /// The awaitable getters waiting at the live bound (`wait_async.rs`), notified with
    /// `returned`.
    #[cfg(all(feature = "async", not(loom)))]
    pub(super) async_waiters: super::wait_async::AsyncWaiters,
    /// `Pool` handles. When it reaches zero the pool closes (see the module docs).
    handles: AtomicUsize,
    /// Set once the last handle is gone.
    closed: AtomicBool,
    /// The retired list of the pool's container versions (`hazard.rs`): taken from the
    /// domain when the pool is built, given back when this state goes (every retired
    /// version holds the pool, so none is left on it then).
    pub(crate) retired: &'static reclaim::List,
    // Counters of slow paths only (a miss runs the factory; the others drop an object),
    // so a shared atomic costs nothing that matters. Hits are counted per thread.
    pub(super) created: AtomicU64,
    pub(super) misses: AtomicU64,
    pub(super) discarded: AtomicU64,
    pub(super) dropped_over_cap: AtomicU64,
    pub(super) trimmed: AtomicU64,
    pub(super) decayed: AtomicU64,
}

// SAFETY: `Shared` owns `T`s (idle, in its `Local`s) and hands them from thread to thread,
// which `T: Send` allows; it never gives out `&T`, so `T: Sync` is not needed. The closures
// are `Send + Sync` by their type; `Local<PoolNode<T>>` is `Send + Sync` for `T: Send`.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<T> {}

/// Why an object left the pool for good (which counter it goes to).
#[derive(Clone, Copy)]
pub(super) enum Discard {
    /// `reset` returned `false` or panicked.
    Reset,
    /// The idle bound was reached.
    OverCap,
    /// `clear` or `trim`.
    Trim,
    /// A decay tick.
    Decay,
    /// The pool has no handle left (counted nowhere: nobody can read the counters).
    Closed,
}

impl<T> Shared<T> {
    /// State for a new pool with one handle.
    pub(super) fn new(
        claim_local: fn(&Arc<Shared<T>>) -> Option<&PoolLocal<T>>,
        settings: Settings<T>,
    ) -> Shared<T> {
        let budget = match settings.max_idle {
            Some(max) => IdleBudget::new(max),
            None => IdleBudget::adaptive(DEFAULT_MAX_IDLE),
        };
        Shared {
            id: registry::next_id(),
            claim_local,
            factory: settings.factory,
            reset: settings.reset,
            decay: settings.decay,
            locals: LocalList::new(),
            #[cfg(loom)]
            slow_start_ops: settings.slow_start_ops,
            empty: Mutex::new(Vec::new()),
            min_idle: settings.min_idle.min(budget.floor()),
            budget,
            max_live: settings.max_live,
            live: AtomicUsize::new(0),
            waiters: Mutex::new(()),
            returned: Condvar::new(),
            #[cfg(all(feature = "async", not(loom)))]
            async_waiters: super::wait_async::AsyncWaiters::new(),
            handles: AtomicUsize::new(1),
            closed: AtomicBool::new(false),
            retired: reclaim::claim_list(),
            created: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            discarded: AtomicU64::new(0),
            dropped_over_cap: AtomicU64::new(0),
            trimmed: AtomicU64::new(0),
            decayed: AtomicU64::new(0),
        }
    }

    /// How many slow-path operations a thread's magazine starts slow for, new or newly
    /// claimed: outside loom, a constant (`SLOW_START_OPS`), read on a thread's first use of
    /// the pool and at its exit only.
    #[cfg(not(loom))]
    #[inline]
    pub(super) fn slow_start(&self) -> u32 {
        super::local::SLOW_START_OPS
    }

    /// How many slow-path operations a thread's magazine starts slow for, new or newly
    /// claimed: under loom, what the model set (`PoolBuilder::slow_start_ops`, default 0).
    #[cfg(loom)]
    pub(super) fn slow_start(&self) -> u32 {
        self.slow_start_ops
    }

    /// Counts one more handle; the caller holds one.
    pub(super) fn add_handle(&self) {
        // Relaxed: the caller's handle keeps the count above zero (std's `Arc::clone`).
        if self.handles.fetch_add(1, Ordering::Relaxed) > MAX_HANDLES {
            std::process::abort();
        }
    }

    /// Drops one handle; closes the pool if it was the last.
    pub(super) fn drop_handle(&self) {
        // Release: this handle's uses of the pool (its thread's unlocked magazine accesses
        // included) happen-before the close.
        // loom-mutants: `Relaxed` survives although `last_handle_vs_thread_exit` (tests/
        // loom_pool.rs) drains a magazine another thread filled just before its handle's
        // drop; what else orders that magazine in loom's fence mode is not established.
        // Kept: the last-reference pattern of std's `Arc` (Release decrement, Acquire
        // before the cleanup), which C11 needs here.
        if self.handles.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        // Acquire: pairs with every other handle's Release decrement (as in `RefCount`).
        let now = self.handles.load(Ordering::Acquire);
        debug_assert_eq!(now, 0);
        self.close();
    }

    /// Drops every idle object and frees its node; from now on depots refuse nodes.
    ///
    /// Runs on the thread that dropped the last handle, with the objects' destructors. If
    /// one panics, the rest are dropped first.
    fn close(&self) {
        // Release: pairs with `discard`'s Acquire, which then knows no reader exists.
        // loom-mutants: what this orders is a reader's last touch of a node before a
        // `discard` on another thread frees it (instead of keeping it, type-stable, on the
        // empty list); loom checks causality on its own cells and atomics, not on memory
        // the global allocator frees, so no model fails on `Relaxed` here.
        self.closed.store(true, Ordering::Release);
        let mut idle = Vec::new();
        // SAFETY: no handle is left, so no thread touches a magazine without its depot's
        // lock (the exit hooks take it).
        unsafe { self.locals.close(&self.budget, &mut idle) };
        let empty = std::mem::take(&mut *self.empty.lock());
        for node in empty {
            // SAFETY: an empty node sits only on the empty list, which we took; without a
            // handle no reader can reach it.
            unsafe { Node::free_empty(node) };
        }
        // Versions that guards still hold: no writer of this pool is left to reclaim them.
        reclaim::adopt_orphans(self.retired);
        // SAFETY: idle nodes, now owned here, each with its object; no reader can exist.
        unsafe { free_all(idle) };
    }

    /// Whether the pool has no handle left; a hint (Relaxed), for the registry's sweep.
    pub(super) fn is_closed(&self) -> bool {
        // Relaxed: `closed` never goes back to false; acting on a stale `false` only
        // delays a sweep.
        self.closed.load(Ordering::Relaxed)
    }

    /// Runs the reset function on an idle node; on `false` or a panic drops the object.
    #[inline]
    pub(super) fn reset(&self, node: &NodePtr<PoolNode<T>>) -> bool {
        /// Drops the object if `reset` unwinds, so nothing leaks and the pool stays usable.
        struct OnUnwind<'a, T> {
            shared: &'a Shared<T>,
            node: Option<NonNull<PoolNode<T>>>,
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
        // SAFETY: the node came off a free list, so this thread owns it and its object is
        // initialised. Stale readers touch only `refs`, and only to fail.
        let keep = (self.reset)(unsafe { Node::object_mut(node.0) });
        guard.node = None;
        if !keep {
            self.discard(NodePtr(node.0), Discard::Reset);
        }
        keep
    }

    /// Puts `object` in a node: an empty one if there is one, else a new allocation.
    pub(super) fn node_for(&self, object: T) -> NodePtr<PoolNode<T>> {
        match self.empty.lock().pop() {
            Some(node) => {
                // SAFETY: an empty node sits only on `empty`, which we just popped it from:
                // this thread owns it, and it is empty.
                unsafe { node.0.as_ref().fill(object) };
                node
            }
            None => Node::alloc(object),
        }
    }

    /// Drops the object in `node`; frees the node too unless readers may still reach it
    /// (it was published and the pool has a handle), in which case it is kept empty for
    /// reuse (type-stable memory).
    pub(super) fn discard(&self, node: NodePtr<PoolNode<T>>, why: Discard) {
        let counter = match why {
            Discard::Reset => Some(&self.discarded),
            Discard::OverCap => Some(&self.dropped_over_cap),
            Discard::Trim => Some(&self.trimmed),
            Discard::Decay => Some(&self.decayed),
            Discard::Closed => None,
        };
        if let Some(counter) = counter {
            counter.fetch_add(1, Ordering::Relaxed); // Relaxed: a statistic.
        }
        // Gives the object's live permit back once it is dropped (declared first, so dropped
        // last: after the object, even if its destructor panics).
        let _permit = LivePermit(self);
        // SAFETY: the caller owns the node exclusively.
        let published = unsafe { node.0.as_ref().ever_published() };
        // Acquire: pairs with `close`'s Release, after the last handle's decrement: no
        // reader can exist.
        // loom-mutants: as beside `close`'s store: it orders readers' touches of the node
        // before its free, which loom does not track.
        if !published || self.closed.load(Ordering::Acquire) {
            // SAFETY: owned, initialised, and no stale reader can reach it.
            unsafe { Node::free(node) };
            return;
        }
        /// Files the node as empty even if the object's destructor panics.
        struct Keep<'a, T>(&'a Shared<T>, NonNull<PoolNode<T>>);
        impl<T> Drop for Keep<'_, T> {
            fn drop(&mut self) {
                self.0.empty.lock().push(NodePtr(self.1));
            }
        }
        let keep = Keep(self, node.0);
        // SAFETY: the caller owns the node (count 0, on no list) and its object is
        // initialised; after this it is not, and the node goes to `empty`.
        unsafe { keep.1.as_ref().drop_object() };
    }

    /// Returns a published node whose last reference was just dropped to the depot of the
    /// thread that published it (or drops its object if the pool is full or closed); `true`
    /// if it dropped the object.
    fn return_retired(&self, node: NodePtr<PoolNode<T>>) -> bool {
        // SAFETY: the caller owns the node (its count is zero).
        let home = unsafe { node.0.as_ref().home() };
        // SAFETY: a `Local` lives as long as its pool's shared state, which `&self` is.
        self.return_to(unsafe { home.as_ref() }, node)
    }

    /// Donates an idle node to `local`'s depot (or, if `None`, the newest `Local`'s), with
    /// an idle permit; drops its object if the pool is full or closed. Wakes a getter waiting
    /// at the live bound either way.
    fn return_to(&self, local: Option<&PoolLocal<T>>, node: NodePtr<PoolNode<T>>) -> bool {
        self.return_to_list(local, node, Generation::Primary)
    }

    /// [`return_to`](Self::return_to), to the list of `generation`; `true` if it dropped
    /// the object instead.
    fn return_to_list(
        &self,
        local: Option<&PoolLocal<T>>,
        node: NodePtr<PoolNode<T>>,
        generation: Generation,
    ) -> bool {
        // The node takes a permit parked in the depot, or one reserved from the budget.
        let refused = match local.or_else(|| self.locals.first()) {
            Some(local) => match local.donate_reserving_to(node, &self.budget, generation) {
                Ok(()) => None,
                Err((node, true)) => Some((node, Discard::Closed)),
                Err((node, false)) => Some((node, Discard::OverCap)),
            },
            None => Some((node, Discard::OverCap)),
        };
        match refused {
            // Frees a live permit, and so wakes a waiter.
            Some((node, why)) => {
                self.discard(node, why);
                true
            }
            // After the donation, whose depot lock is released (see the module docs).
            None => {
                self.wake();
                false
            }
        }
    }

    /// Returns an idle node to the calling thread's depot (not its magazine), to the list
    /// of `generation`, with a permit parked there or reserved; drops it if the idle bound is
    /// reached.
    pub(super) fn put_in_depot(
        this: &Arc<Shared<T>>,
        node: NodePtr<PoolNode<T>>,
        generation: Generation,
    ) {
        this.return_to_list(Shared::local(this), node, generation);
    }

    /// The calling thread's `Local` for this pool if it is one of the last two the thread
    /// looked up: two thread-local loads and compares. `None` sends the caller to its slow
    /// path.
    #[inline]
    pub(super) fn local_fast(&self) -> Option<&PoolLocal<T>> {
        // SAFETY: the registry maps this pool's id to a `Local` of this pool, which lives as
        // long as `self`; ids are never reused.
        registry::find_fast(self.id).map(|found| unsafe { found.cast::<PoolLocal<T>>().as_ref() })
    }

    /// The calling thread's `Local` for this pool, made or claimed on first use; `None`
    /// while the thread's thread-locals are being destroyed. Takes the `Arc` because the
    /// thread's registry entry keeps one.
    #[inline]
    pub(super) fn local(this: &Arc<Shared<T>>) -> Option<&PoolLocal<T>> {
        match registry::find(this.id) {
            // SAFETY: as in `local_fast`.
            Some(found) => Some(unsafe { found.cast::<PoolLocal<T>>().as_ref() }),
            None => (this.claim_local)(this),
        }
    }

    /// Returns an idle node on the calling thread (to its magazine if it has one).
    #[inline]
    pub(super) fn put(this: &Arc<Shared<T>>, node: NodePtr<PoolNode<T>>) {
        let node = match this.local_fast() {
            // SAFETY: the calling thread's own `Local`, of this pool.
            Some(local) => match unsafe { local.push(node) } {
                Ok(()) => return,
                Err(node) => node,
            },
            None => node,
        };
        Shared::put_slow(this, node);
    }

    /// `put` when the magazine is full or has no spare permit, or the thread has no `Local`
    /// at hand.
    #[cold]
    #[inline(never)]
    fn put_slow(this: &Arc<Shared<T>>, node: NodePtr<PoolNode<T>>) {
        Shared::poll_decay(this);
        if this.max_live.is_some() {
            // Not to the magazine, where only this thread could take it: to this thread's
            // depot, where a getter waiting at the bound finds it.
            this.return_to(Shared::local(this), node);
            return;
        }
        match Shared::local(this) {
            Some(local) => {
                // SAFETY: the calling thread's own `Local`, of this pool.
                if let Some(node) = unsafe { local.put_slow(&this.budget, node) } {
                    this.discard(node, Discard::OverCap);
                }
            }
            None => {
                this.return_retired(node);
            }
        }
    }

    /// Idle objects now, summed over every thread.
    pub(super) fn idle_now(&self) -> usize {
        self.locals.iter().map(Local::idle).sum()
    }

    /// `trim`, `clear` and decay: moves the calling thread's magazine to its depot (if
    /// `own`: a trimmer thread has none of its own), then drops the idle objects that `pop`
    /// takes from each depot while more than `min_idle` are idle, counted as `why`. Runs
    /// the objects' destructors on the calling thread; takes each depot's lock once per
    /// object dropped.
    pub(super) fn shed(
        this: &Arc<Shared<T>>,
        own: bool,
        pop: fn(&PoolLocal<T>) -> Option<NodePtr<PoolNode<T>>>,
        why: Discard,
    ) {
        if own {
            if let Some(local) = Shared::local(this) {
                // SAFETY: the calling thread's own `Local`.
                unsafe { local.flush(&this.budget) };
            }
        }
        // Other live threads' magazines (in `Membarrier` mode): see `local.rs`, "Reaching an
        // idle thread's magazine".
        this.locals.steal_magazines(&this.budget);
        for local in this.locals.iter() {
            // Parked permits hold no object: back to the budget, which then bounds the idle
            // objects alone.
            local.unpark_all(&this.budget);
            // Counted once per thread's share, not once per object: a walk of every
            // `Local`. Each object dropped lowers it by one.
            let excess = this.idle_now().saturating_sub(this.min_idle);
            for _ in 0..excess {
                let Some(node) = pop(local) else {
                    break;
                };
                this.budget.unreserve(1);
                this.discard(node, why);
            }
        }
    }

    /// `trim`, and a decay tick one period after the last: drops the victims, demotes the
    /// rest, and lowers the adaptive idle bound's demand to the objects now live.
    pub(super) fn trim(this: &Arc<Shared<T>>, own: bool, why: Discard) {
        Shared::shed(this, own, PoolLocal::pop_victim, why);
        for local in this.locals.iter() {
            local.age();
        }
        this.budget.reset_demand(this.live_now());
    }

    /// Runs a decay tick if one is due (see `decay.rs`): on the pool's slow paths. Nothing
    /// but a branch for a pool without decay.
    #[inline]
    pub(super) fn poll_decay(this: &Arc<Shared<T>>) {
        if let Some(decay) = &this.decay {
            if let Some(tick) = decay.due() {
                Shared::tick(this, tick);
            }
        }
    }

    /// A decay tick (see `decay.rs`).
    #[cold]
    fn tick(this: &Arc<Shared<T>>, tick: Tick) {
        match tick {
            Tick::Age => Shared::trim(this, true, Discard::Decay),
            Tick::Drop => {
                Shared::shed(this, true, PoolLocal::pop_any, Discard::Decay);
                this.budget.reset_demand(this.live_now());
            }
        }
    }

    /// Objects live now (see `live`), as a count for the idle bound's demand.
    pub(super) fn live_now(&self) -> usize {
        usize::try_from(self.live()).unwrap_or(usize::MAX)
    }

    /// Builds one object with the factory for `prefill`, holding an idle permit and a permit
    /// for it; `None` if the idle bound or the live bound is reached. A factory that panics
    /// leaves the idle permit, the live permit and the counters as they were.
    pub(super) fn make_idle(&self) -> Option<NodePtr<PoolNode<T>>> {
        if self.budget.reserve(1) == 0 {
            return None;
        }
        let idle_permit = PermitOnUnwind(&self.budget);
        if !self.try_acquire_live_permit() {
            return None; // `idle_permit` gives the idle permit back
        }
        let object = self.make();
        idle_permit.disarm();
        Some(self.node_for(object))
    }

    /// Runs the factory for an object whose live permit the caller acquired, and counts it
    /// created; if the factory panics, gives the live permit back.
    pub(super) fn make(&self) -> T {
        let permit = LivePermit(self);
        let object = (self.factory)();
        std::mem::forget(permit);
        // Relaxed: a statistic.
        self.created.fetch_add(1, Ordering::Relaxed);
        object
    }

    /// Takes a live permit for a new object: always granted without a live bound; with one,
    /// `false` at the bound.
    pub(super) fn try_acquire_live_permit(&self) -> bool {
        let Some(max) = self.max_live else {
            return true;
        };
        // Relaxed: the count publishes nothing (objects travel under depot locks). A stale
        // reading that says "full" is safe: every release of a live permit is followed by a lock
        // of `waiters`, so a getter that waits on it reads again (module docs).
        let mut live = self.live.load(Ordering::Relaxed);
        loop {
            if live >= max {
                return false;
            }
            // Relaxed both ways: only the count matters; the CAS makes it exact.
            match self.live.compare_exchange_weak(
                live,
                live + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => live = now,
            }
        }
    }

    /// Counts an object taken in from outside (`adopt`): with a bound it counts toward
    /// it, even over it.
    pub(super) fn acquire_live_permit_over_bound(&self) {
        if self.max_live.is_some() {
            // Relaxed: as in `try_acquire_live_permit`.
            self.live.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Objects that exist now: a reading for statistics. Without a bound, objects made
    /// less objects dropped, from the counters, read one after another (so under traffic
    /// only roughly the count at one instant).
    pub(super) fn live(&self) -> u64 {
        // Relaxed: statistics.
        let read = |n: &AtomicU64| n.load(Ordering::Relaxed);
        match self.max_live {
            Some(_) => self.live.load(Ordering::Relaxed) as u64,
            // Drops read before the count of objects made, so that a drop is never
            // counted without its object (the difference never goes negative, unless the
            // reads are reordered, which the saturation absorbs).
            None => {
                let dropped = read(&self.discarded)
                    + read(&self.dropped_over_cap)
                    + read(&self.trimmed)
                    + read(&self.decayed);
                read(&self.created).saturating_sub(dropped)
            }
        }
    }

    /// Gives back a live permit (its object is gone, or was never made) and wakes a waiter;
    /// nothing without a bound.
    fn release_live_permit(&self) {
        if self.max_live.is_none() {
            return;
        }
        // Relaxed: as in `try_acquire_live_permit`; `wake` orders it before a waiter's next reading.
        let before = self.live.fetch_sub(1, Ordering::Relaxed);
        debug_assert!(before > 0, "a live permit given back twice");
        self.wake();
    }

    /// Wakes a getter waiting at the live bound, if the pool has one; call after the change
    /// it should see, holding no depot lock (see the module docs).
    pub(super) fn wake(&self) {
        if self.max_live.is_some() {
            // Lock then unlock: a getter still searching finishes first, and sees the change
            // (or waits, unlocking, before we get here). Notifying after the unlock spares
            // the woken thread a block on the lock we hold.
            drop(self.waiters.lock());
            self.returned.notify_one();
            // After the unlock, as for `returned`: an awaitable getter that registered before
            // our lock is notified (see `wait_async.rs`).
            #[cfg(all(feature = "async", not(loom)))]
            self.async_waiters.notify_one();
        }
    }

    /// Takes one idle node from `local`'s depot list of `generation`, under its lock, and
    /// gives back the node's idle permit (it leaves the idle objects). The depot part of
    /// every take that bypasses the magazine: `take_or_acquire_live_permit` and
    /// `Pool::get_returned`. Costs the depot's lock (uncontended: two atomic
    /// read-modify-writes) and one budget read-modify-write when a node is there.
    pub(super) fn take_from_depot(
        &self,
        local: &PoolLocal<T>,
        generation: Generation,
    ) -> Option<NodePtr<PoolNode<T>>> {
        let node = local.take_one(generation)?;
        self.budget.unreserve(1);
        Some(node)
    }

    /// For a pool with a live bound: takes an idle object from some depot (the calling
    /// thread's `Local`'s first, primary lists before victim lists), else a live permit for a
    /// new object (`Ok(None)`); if neither is to be had, reclaims retired versions (which
    /// may bring one back) and looks again, then waits for one as `wait` allows, else
    /// returns `Err(NoObject::Deadline)`. A waiter reclaims again at each wake-up: guards
    /// never wake it (their drop is a store), so while versions are retired it wakes up
    /// every [`RECLAIM_POLL`] to look. Runs no user code under the lock (a reclamation's
    /// returns run outside it). A wait without end that nothing could end returns
    /// `Err(NoObject::Alone)` instead (`wait_blocking.rs`, "A wait that cannot end").
    pub(super) fn take_or_acquire_live_permit(
        &self,
        own: Option<&PoolLocal<T>>,
        wait: Wait,
    ) -> Result<Option<NodePtr<PoolNode<T>>>, NoObject> {
        let mut waiting = self.waiters.lock();
        // Whether to reclaim before the next wait: once per look.
        let mut reclaim = true;
        // Waits so far: a loom deadline passes after the first (`sync::Deadline`).
        let mut waits = 0;
        // Whether this thread asked whether it is alone since its last sleep.
        let mut asked = false;
        // Whether the last look followed the finding that this thread is alone and a
        // reclamation that returned nothing: then its finding nothing is final.
        let mut alone_look = false;
        loop {
            for generation in [Generation::Primary, Generation::Victim] {
                let others = self
                    .locals
                    .iter()
                    .filter(|l| !own.is_some_and(|o| ptr_eq(l, o)));
                for local in own.into_iter().chain(others) {
                    if let Some(node) = self.take_from_depot(local, generation) {
                        return Ok(Some(node));
                    }
                }
            }
            if self.try_acquire_live_permit() {
                return Ok(None);
            }
            if reclaim && self.retired.has_pending() {
                // Unlocked: a version the reclamation frees comes back through
                // `return_to`, which locks `waiters` to wake us.
                drop(waiting);
                self.retired.reclaim();
                waiting = self.waiters.lock();
                reclaim = false;
                continue;
            }
            // A timed getter gives up only here, after a look: one that was notified looks
            // before it can give up, so no wake-up is lost on it (see `wait_blocking.rs`).
            let Some(left) = wait.left(waits) else {
                return Err(NoObject::Deadline);
            };
            if alone_look {
                // Unlocked: the caller panics.
                drop(waiting);
                return Err(NoObject::Alone);
            }
            // Only when about to sleep, and only for a wait without end: the question
            // costs system calls (`alone`), never a getter that finds an object.
            if CAN_TELL && wait.is_forever() && !asked && waits % ALONE_EVERY == 0 {
                asked = true;
                // Unlocked: a thread that gives an object back locks `waiters` to wake
                // this one, and should not wait for system calls. So a look follows.
                drop(waiting);
                if alone() {
                    // No other thread: nothing changes now but what this one does.
                    // Reclaim (a version whose last guard a thread now gone dropped
                    // comes back only so), then look once more. If that reclamation
                    // returned nothing, it ran no user code that could start a thread,
                    // and a look that finds nothing then is final.
                    alone_look = self.retired.reclaim() == 0;
                }
                waiting = self.waiters.lock();
                reclaim = false;
                continue;
            }
            // Timed while versions wait on the retired list (no guard drop will notify),
            // and as a backstop otherwise (a version retired after the look above).
            let timeout = if self.retired.has_pending() {
                RECLAIM_POLL
            } else {
                IDLE_POLL
            };
            waiting = self
                .returned
                .wait_for(&self.waiters, waiting, timeout.min(left));
            reclaim = true;
            asked = false;
            waits += 1;
        }
    }
}

/// Gives back a live permit when dropped: after an object's drop (even one that panics), or
/// around a factory that may panic.
struct LivePermit<'a, T>(&'a Shared<T>);

impl<T> Drop for LivePermit<'_, T> {
    fn drop(&mut self) {
        self.0.release_live_permit();
    }
}

/// Whether `a` and `b` are the same `Local`.
fn ptr_eq<N>(a: &Local<N>, b: &Local<N>) -> bool {
    std::ptr::eq(a, b)
}

/// Makes or claims the calling thread's `Local` for `shared` and records it in the thread's
/// registry; `None` while the thread's thread-locals are being destroyed.
#[cold]
pub(super) fn claim_local<T: Send + 'static>(shared: &Arc<Shared<T>>) -> Option<&PoolLocal<T>> {
    let local = shared
        .locals
        .claim(shared.budget.max(), shared.slow_start());
    let hook = Box::new(ThreadShare {
        shared: Arc::clone(shared),
        local: NonNull::from(local),
    });
    if registry::insert(shared.id, NonNull::from(local).cast(), hook) {
        Some(local)
    } else {
        // The thread is exiting: leave the `Local` (empty: just made, or flushed by the
        // thread that left it) for another thread to claim, as its exit hook would, giving
        // back what a thief parked there since the claim.
        // SAFETY: this thread claimed the `Local` above and will not use it again; `shared`
        // keeps it alive, and the budget is its pool's.
        unsafe { local.abandon(&shared.budget, shared.slow_start()) };
        None
    }
}

/// A thread's registry entry for one pool: keeps the pool's shared state alive while the
/// entry exists, and flushes the thread's magazine when the thread exits.
struct ThreadShare<T> {
    shared: Arc<Shared<T>>,
    local: NonNull<PoolLocal<T>>,
}

impl<T: Send> registry::Hook for ThreadShare<T> {
    fn owner_is_gone(&self) -> bool {
        self.shared.is_closed()
    }

    fn thread_exit(&self) {
        // SAFETY: `self.shared` keeps the `Local` alive; this exiting thread owns it, and
        // its registry entry is gone, so it will not use it again.
        unsafe {
            self.local
                .as_ref()
                .abandon(&self.shared.budget, self.shared.slow_start())
        };
    }
}

/// Drops one reference on a published node and, if it was the last, returns the node to
/// the depot of the thread that published it.
///
/// `pool` is the pool to return it to when the caller knows it (a container reader that took
/// a reference on a node that went back to its pool meanwhile: the node may then have no
/// keepalive).
///
/// # Safety
///
/// `node` must be a node whose count includes a reference owned by the caller, which this
/// call consumes. If `pool` is `None`, the node must be a container version (with its
/// keepalive set); if `Some`, it must be the node's pool.
pub(super) unsafe fn release<T>(node: NonNull<PoolNode<T>>, pool: Option<&Shared<T>>) {
    // SAFETY: the caller's reference keeps the node's memory live.
    if !unsafe { node.as_ref() }.refs().decrement() {
        return;
    }
    // SAFETY: count 0, read with Acquire: this thread owns the node.
    unsafe { give_back_version(node, pool) };
}

/// Returns a published node that the caller owns (its count reached zero in the caller's
/// hands) to the depot of the thread that published it; `pool` as for [`release`].
///
/// # Safety
///
/// The caller owns `node` exclusively (count zero, read or set with `Acquire` after every
/// other holder's `Release`). `pool` as for [`release`].
/// Returns `true` if the pool dropped the object (closed or full).
pub(super) unsafe fn give_back_version<T>(
    node: NonNull<PoolNode<T>>,
    pool: Option<&Shared<T>>,
) -> bool {
    // Take the keepalive out before the node is visible in a depot, where another thread
    // could check it out and publish it again.
    // SAFETY: exclusive ownership (per the caller).
    let keepalive = unsafe { node.as_ref().take_keepalive() };
    let shared = pool
        .or(keepalive.as_deref())
        .expect("a container version holds its pool");
    let dropped = shared.return_retired(NodePtr(node));
    // If this was the last `Arc` on the pool's state, this frees it.
    drop(keepalive);
    dropped
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // The pool closed when its last handle went: every magazine and depot was drained
        // then, and depots refuse nodes since (each `Local` checks it is empty as the list
        // frees it). Only empty nodes filed after the close are left.
        for node in std::mem::take(self.empty.get_mut()) {
            // SAFETY: `&mut self`: no thread can reach the pool; the node is empty.
            unsafe { Node::free_empty(node) };
        }
        reclaim::release_list(self.retired);
    }
}
