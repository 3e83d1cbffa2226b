//! The awaitable get at the live bound (feature `async`): [`Pool::get_async`], what it
//! waits on ([`AsyncWaiters`]), and the `poolswap-reclaim` thread that reclaims for it. The
//! container's awaitable getter builds on it.
//!
//! # Synchronization
//!
//! An awaitable getter cannot block its thread on `returned` (the condition variable that
//! blocking getters wait on). It registers on the pool's [`AsyncWaiters`] instead: it counts
//! itself in `count`, inserts a listener in `event` (an event-listener `Event`, whose list is
//! intrusive: the listener lives in the future), then looks as [`Pool::try_get`] does, under
//! `waiters` (reclaiming once if versions are retired), and, if that finds nothing, awaits
//! the listener. [`Shared::wake`](super::shared::Shared::wake) (after every return to a
//! depot and every freed live permit) locks and unlocks `waiters`, then, if `count` is not
//! zero, notifies one more listener.
//!
//! No wake-up is lost: if the getter's look locked `waiters` after the notifier did, it sees
//! the change; otherwise its count and its listener came before its unlock of `waiters`,
//! which came before the notifier's lock, so the notifier reads a non-zero count and its
//! notification (under the event's lock) finds the listener. The notifier's `count` load
//! and the notification are ordered after the change by that lock, so both are `Relaxed`
//! (the notification without event-listener's `SeqCst` fence). Each notification is
//! *additional* (one more listener, not "at least one"): each stands for one object or
//! live permit, and two returns must wake two getters.
//!
//! event-listener wakes a listener while it holds its list's lock, which a woken getter
//! needs to take its notification: a getter woken on another thread at once would block
//! there until the notifier's wake-up (a futex wake of a sleeping worker) returned. So a
//! getter polls its listener with a waker of its own that only moves the task's waker
//! aside, and the notifier wakes the task after `notify` returns ([`WakerCell`]).
//!
//! A woken getter looks first and takes its notification after (`Listener::discard` when the
//! look found an object, a poll of the listener when it did not): the look needs only the
//! pool's locks, and it leaves one lock of the list per wake-up, not three (poll, listen
//! again, drop). A getter that takes an object discards the notification rather than pass
//! it on: each notification stands for one object or live permit, and if the
//! one it received stood for another object than the one it took, the getter that
//! object's own notification reached finds this one. A look that finds nothing after a
//! notification registers a new listener and looks again before it waits.
//!
//! # Cancellation
//!
//! A getter holds nothing between polls but its listener and its count: no live permit, no
//! object (a look that finds one returns it at once). Dropping the future drops the
//! listener, and event-listener hands a notification it had received but not yet taken to
//! the next listener; the count goes down with it.
//!
//! # Reclamation while waiting
//!
//! A guard's drop is a store that wakes nobody, so a version retired while a getter waits
//! comes back only at a reclamation. A blocking getter polls for it (every 0.5 ms while
//! versions are retired); an awaitable one has no timer without a runtime. So the crate
//! keeps one thread of its own, `poolswap-reclaim`, started at the first awaitable wait in
//! the process: while any awaitable getter waits, it reclaims every [`RECLAIM_POLL`] while
//! versions are retired and looks every [`IDLE_POLL`] otherwise (the blocking getter's
//! schedule); a version it frees comes back through `return_to`, whose `wake` notifies the
//! getter. A second after the last awaitable getter stopped waiting, it parks with no
//! timer; until then it keeps that schedule, so that getters waiting one after another do
//! not each pay a syscall to wake it (a getter wakes it only if it is parked, or if versions
//! are retired as it starts waiting). Also, each wake-up of a getter reclaims before it
//! looks, as a blocking getter does.

use std::cell::RefCell;
use std::fmt;
use std::future::{self, Future};
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use event_listener::{Event, IntoNotification, Listener};

use super::wait_blocking::{IDLE_POLL, RECLAIM_POLL};
use super::{Pool, Pooled};
use crate::reclaim;
use crate::sync::{AtomicUsize, Mutex, Ordering};

/// The awaitable getters waiting at one pool's live bound. `Sync`: an `Event` and an
/// atomic.
pub(crate) struct AsyncWaiters {
    /// Their listeners. Its shared state is allocated at the first wait, once.
    event: Event,
    /// Getters registered on `event` (or about to be): zero lets `notify_one` skip the
    /// event's lock, so a pool nobody awaits pays one load per wake-up.
    count: AtomicUsize,
}

impl AsyncWaiters {
    /// No waiter; allocates nothing until the first wait.
    pub(super) fn new() -> AsyncWaiters {
        AsyncWaiters {
            event: Event::new(),
            count: AtomicUsize::new(0),
        }
    }

    /// Notifies one more waiting getter, if any; call from [`Shared::wake`], after its lock
    /// and unlock of `waiters` (see the module docs).
    ///
    /// [`Shared::wake`]: super::shared::Shared::wake
    pub(super) fn notify_one(&self) {
        // Relaxed: `wake`'s lock of `waiters` orders this after any getter's registration
        // whose look missed the change (module docs).
        if self.count.load(Ordering::Relaxed) != 0 {
            // `relaxed()`: no fence, for the same reason; `additional()`: one notification
            // per object or permit (module docs).
            self.event.notify(1.additional().relaxed());
            // After the event's unlock: the getter it woke runs without finding the list
            // locked (see `WakerCell`).
            wake_deferred();
        }
    }
}

impl fmt::Debug for AsyncWaiters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncWaiters")
            // Relaxed: a reading for display.
            .field("count", &self.count.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Where a waiting getter's waker is while it is registered, so that event-listener, which
/// wakes a listener while it holds its list's lock, wakes it only after the unlock.
///
/// The getter polls its listener with a waker of its own (`WakerCell::waker`) that points to
/// this cell, and keeps its task's waker here. event-listener calls that waker inside
/// `Event::notify` (or inside a listener's removal, when it passes a notification on), on
/// the notifying thread, with its list locked: it moves the task's waker to that thread's
/// [`DEFERRED`] list, and the notifier wakes it once `notify` has returned
/// ([`wake_deferred`], in [`AsyncWaiters::notify_one`] and in [`Waiting`]'s drop). Woken
/// under the lock, a task on another worker runs at once and blocks on the lock to take its
/// notification until the notifier's wake-up (a futex wake) returns; woken after, it finds
/// the list free.
///
/// Every path that makes event-listener wake a listener of ours runs on one of those
/// two: nothing else can reach the pool's `Event`.
struct WakerCell {
    /// The task's waker, as of the last poll; taken by a wake-up.
    waker: Mutex<Option<Waker>>,
}

impl WakerCell {
    /// A cell with no waker.
    fn new() -> WakerCell {
        WakerCell {
            waker: Mutex::new(None),
        }
    }

    /// Keeps `waker` as the one to wake (a clone, unless it is the same as the last).
    fn set(&self, waker: &Waker) {
        let mut kept_waker = self.waker.lock();
        match &*kept_waker {
            Some(kept) if kept.will_wake(waker) => {}
            _ => *kept_waker = Some(waker.clone()),
        }
    }

    /// A waker that defers the wake-up of the task whose waker is in this cell.
    ///
    /// # Safety
    ///
    /// The cell must outlive every use of the returned waker and of its clones. A getter
    /// hands it to its listener only, and event-listener uses it (clones, wakes, compares or
    /// drops it) under its list's lock, or drops it on the getter's own thread as the
    /// listener leaves the list; the listener leaves the list (under that lock) before the
    /// cell is dropped, since the getter declares the cell first.
    unsafe fn waker(&self) -> Waker {
        // SAFETY: the vtable's functions uphold `RawWaker`'s contract for a pointer to a
        // `WakerCell` that outlives them (the caller's duty): a clone is the same pointer,
        // a drop does nothing, a wake moves the task's waker out under the cell's lock
        // (so from any thread).
        unsafe { Waker::from_raw(RawWaker::new(ptr::from_ref(self).cast(), &DEFERRING)) }
    }
}

impl fmt::Debug for WakerCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WakerCell").finish_non_exhaustive()
    }
}

/// The deferring waker's functions; its data is a `*const WakerCell`.
static DEFERRING: RawWakerVTable =
    RawWakerVTable::new(|data| RawWaker::new(data, &DEFERRING), defer, defer, |_| {});

/// The deferring waker's wake-up: moves the task's waker to this thread's [`DEFERRED`], or
/// wakes it at once while the thread's thread-locals are being destroyed.
fn defer(data: *const ()) {
    // SAFETY: `data` points to a live `WakerCell` (`WakerCell::waker`'s contract).
    let cell = unsafe { &*data.cast::<WakerCell>() };
    let Some(waker) = cell.waker.lock().take() else {
        return;
    };
    let mut waker = Some(waker);
    let _ = DEFERRED.try_with(|deferred| deferred.borrow_mut().extend(waker.take()));
    if let Some(waker) = waker {
        // The thread's thread-locals are gone (a notification from a destructor): woken
        // under the list's lock, which is correct, only slower.
        waker.wake();
    }
}

std::thread_local! {
    /// Task wakers whose wake-up this thread deferred until the waiter list's unlock. Its
    /// capacity is kept: it allocates once per thread.
    static DEFERRED: RefCell<Vec<Waker>> = const { RefCell::new(Vec::new()) };
}

/// Wakes the tasks this thread deferred, one at a time, outside any borrow of the list (a
/// waker may poll inline and notify again).
fn wake_deferred() {
    while let Some(waker) = DEFERRED
        .try_with(|deferred| deferred.borrow_mut().pop())
        .ok()
        .flatten()
    {
        waker.wake();
    }
}

/// A getter's registration while it waits: in its pool's count and with the reclaiming
/// thread. Dropped with the future, or when it returns.
struct Waiting<'a>(&'a AsyncWaiters);

impl<'a> Waiting<'a> {
    /// Registers a getter: counts it, and wakes (or starts) the reclaiming thread if needed.
    fn new(waiters: &'a AsyncWaiters) -> Waiting<'a> {
        // Relaxed: the getter's next look locks `waiters`, which orders this before any
        // notifier that the look misses (module docs).
        waiters.count.fetch_add(1, Ordering::Relaxed);
        reclaimer::enter();
        Waiting(waiters)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        // A listener dropped with an untaken notification passed it on, under the list's
        // lock: wake that getter now that the lock is released.
        wake_deferred();
        reclaimer::leave();
        // Relaxed: a stale non-zero costs a notifier one needless notification.
        self.0.count.fetch_sub(1, Ordering::Relaxed);
    }
}

impl<T> Pool<T> {
    /// [`get`](Pool::get) that awaits at the [`max_live`](crate::PoolBuilder::max_live)
    /// bound instead of blocking the thread: the future is ready with an object as soon as
    /// one comes back, is dropped, or can be built. Without a bound, or below it, it is ready
    /// at its first poll, with what `get` returns. Needs the `async` feature; works under any
    /// executor (tokio, smol, async-std, a plain `block_on`): it needs no timer and no reactor.
    ///
    /// While it waits, retired container versions come back to the pool by the
    /// reclamation that each wake-up runs (as a blocking `get` does), and by the crate's
    /// `poolswap-reclaim` thread, started at the first wait in the process, which reclaims
    /// every 0.5 ms while versions are retired and any awaitable getter waits (a guard's
    /// drop wakes nobody). That thread is the one background thread the crate ever starts;
    /// it parks (no timer) a second after the last getter stopped waiting.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: between polls the future holds no object and no permit, only its place
    /// in the pool's waiter list; dropping it removes that place and, if a returned object
    /// had already woken it, wakes the next waiter in its stead. Waiters are woken in the
    /// order they started waiting. So it composes with any runtime's timer for a get with a
    /// timeout (deadpool's `timeout_get`): `tokio::time::timeout(d, pool.get_async())`, or
    /// a race with the timer of the runtime in use, gives up its place when the timer wins.
    ///
    /// # Costs
    ///
    /// As [`try_get`](Pool::try_get) when an object is at hand. At the bound: two atomic
    /// read-modify-writes to register, a lock of the waiter list to insert the listener
    /// (and one to remove it), one `try_get` look per wake-up (a lock per depot, and a
    /// reclamation if versions are retired), and no allocation at steady state (the pool's
    /// waiter list is allocated at its first wait; the reclaiming thread once per
    /// process). A return to a pool that has awaiting getters costs one more lock (the
    /// waiter list's) and the waker's `wake`, made after that lock is released; to one
    /// without, one atomic load. `cargo bench -p poolswap-benches --features async --bench
    /// wait` measures the wake-up latency against deadpool's.
    ///
    /// The future is `Send` and `Sync` when `T: Send` (as `Pool<T>` is).
    ///
    /// # Panics
    ///
    /// As [`get`](Pool::get): the factory's or the reset's panic reaches the poller; the
    /// future then holds nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| vec![0u8; 4096], |v: &mut Vec<u8>| v.fill(0))
    ///     .max_live(1)
    ///     .build();
    /// futures_lite::future::block_on(async {
    ///     let buf = pool.get_async().await; // the one object the bound allows
    ///     let (waited, ()) = futures_lite::future::zip(
    ///         pool.get_async(), // at the bound: awaits the return below
    ///         async move { drop(buf) },
    ///     )
    ///     .await;
    ///     assert_eq!(waited.len(), 4096);
    /// });
    /// assert_eq!(pool.stats().created, 1);
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "async")))]
    pub async fn get_async(&self) -> Pooled<'_, T> {
        if let Some(object) = self.try_get() {
            return object;
        }
        let waiters = &self.shared.async_waiters;
        // Declared before the listeners, so dropped after them: `Waiting` wakes what their
        // removal deferred, and `cell` outlives every use of the wakers that point to it.
        let _waiting = Waiting::new(waiters);
        let cell = WakerCell::new();
        loop {
            // On the future's own state: no allocation (event-listener's stack listener).
            event_listener::listener!(waiters.event => listener);
            // Registered: a return that this look misses notifies the listener (module docs).
            let mut found = self.try_get();
            if found.is_none() {
                let mut woken = false;
                found = future::poll_fn(|cx| {
                    // Woken (or polled again): look first, and take the notification after.
                    // The notifier wakes us while it holds the waiter list's lock, and the
                    // look needs only the pool's: looking first spares a block on the list.
                    if woken {
                        if let Some(object) = self.try_get() {
                            return Poll::Ready(Some(object));
                        }
                    }
                    woken = true;
                    // Ready: notified, and the look above (or the one before the wait) found
                    // nothing, another getter having been first: register and look again.
                    // Through `cell`'s deferring waker: see `WakerCell`.
                    cell.set(cx.waker());
                    // SAFETY: `cell` outlives every use of this waker and its clones (its
                    // declaration comes before the listener's: see `WakerCell::waker`).
                    let waker = unsafe { cell.waker() };
                    Pin::new(&mut listener)
                        .poll(&mut Context::from_waker(&waker))
                        .map(|()| None)
                })
                .await;
            }
            if let Some(object) = found {
                // Takes the notification, if one came: it stood for the object this getter
                // took (or for another, which the getter it went to finds, see the module
                // docs); passing it on would wake a getter for nothing.
                listener.discard();
                return object;
            }
        }
    }
}

/// The `poolswap-reclaim` thread: reclaims retired versions for awaitable getters, which
/// cannot poll (module docs).
mod reclaimer {
    use std::panic::{self, AssertUnwindSafe};
    use std::thread::{self, Thread};
    use std::time::{Duration, Instant};

    use super::{reclaim, IDLE_POLL, RECLAIM_POLL};
    use crate::sync::{AtomicBool, AtomicUsize, Ordering};

    /// Awaitable getters waiting now, in every pool.
    static WAITING: AtomicUsize = AtomicUsize::new(0);

    /// Whether the thread is parked without a timeout (or about to be), or not started:
    /// only then does a getter that starts waiting need to wake (or start) it. Otherwise it
    /// is looking on its own schedule, and the getter's registration makes no syscall.
    static PARKED: AtomicBool = AtomicBool::new(true);

    /// How long the thread keeps looking on its schedule after the last getter stopped
    /// waiting, before it parks for good: so that getters waiting one after another (a
    /// writer that waits at each update) do not each pay an unpark.
    const LINGER: Duration = Duration::from_secs(1);

    /// The thread, once started; `None` if it could not be (the getters then rely on the
    /// reclamations of their own wake-ups and of other threads).
    // `OnceLock`: started once per process; this module is not built under loom, which has
    // nothing to check in it (the thread only calls `reclaim`, which is
    // modelled).
    #[allow(clippy::disallowed_types)]
    static THREAD: std::sync::OnceLock<Option<Thread>> = std::sync::OnceLock::new();

    /// Counts a getter that starts waiting; wakes the thread (starting it the first time)
    /// if it is parked for good, or if versions are retired now (so that it reclaims at
    /// once rather than at its next look).
    pub(super) fn enter() {
        // SeqCst, with `PARKED`'s SeqCst accesses here and in `run`: of this increment and
        // the thread's store of `true`, each side reads the other's, or one of them does
        // (the store-load pattern): the thread does not park while a getter waits unseen.
        let first = WAITING.fetch_add(1, Ordering::SeqCst) == 0;
        if !first && !reclaim::has_pending() {
            return;
        }
        // SeqCst: see above.
        if PARKED.load(Ordering::SeqCst) || reclaim::has_pending() {
            if let Some(thread) = THREAD.get_or_init(start) {
                // A token if the thread is not parked yet: its `park` returns at once.
                thread.unpark();
            }
        }
    }

    /// Counts a getter that stops waiting.
    pub(super) fn leave() {
        // Relaxed: a stale non-zero costs the thread one more look.
        WAITING.fetch_sub(1, Ordering::Relaxed);
    }

    /// Spawns the thread; `None` if it cannot be spawned.
    fn start() -> Option<Thread> {
        thread::Builder::new()
            .name("poolswap-reclaim".into())
            .spawn(run)
            .ok()
            .map(|handle| handle.thread().clone())
    }

    /// The thread's loop: reclaims on the blocking getter's schedule while getters wait,
    /// and parks for good `LINGER` after the last one left.
    fn run() {
        // Relaxed: as after a park below.
        PARKED.store(false, Ordering::Relaxed);
        let mut idle_since: Option<Instant> = None;
        loop {
            // Relaxed: a stale zero only makes the thread look once more, or reach the
            // SeqCst check below.
            if WAITING.load(Ordering::Relaxed) == 0 {
                let since = *idle_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= LINGER {
                    // SeqCst: see `enter`.
                    PARKED.store(true, Ordering::SeqCst);
                    if WAITING.load(Ordering::SeqCst) == 0 {
                        thread::park();
                    }
                    // Relaxed: only this thread sets it; getters that read a stale `true`
                    // make one needless unpark.
                    PARKED.store(false, Ordering::Relaxed);
                    idle_since = None;
                    continue;
                }
            } else {
                idle_since = None;
            }
            // The objects of a version whose pool is full or closed are dropped here: a
            // destructor's panic must not end the thread (the reclamation drops the rest
            // of its batch before it resumes the panic).
            let _ = panic::catch_unwind(AssertUnwindSafe(crate::reclaim));
            thread::park_timeout(if reclaim::has_pending() {
                RECLAIM_POLL
            } else {
                IDLE_POLL
            });
        }
    }
}
