//! A background reclaimer: a thread the user starts that recycles retired versions, so
//! that their `reset` and `T::drop` run neither on a reader nor, normally, on the writer.
//!
//! # Protocol
//!
//! One reclaimer runs at a time (it passes over every pool's retired list). While it runs, an update
//! that retires a version does not reclaim by itself below [`BACKSTOP`] retired versions;
//! it wakes the reclaimer instead, if that one sleeps. The wake-up is a Dekker handshake
//! on two flags, each written before a `fence(SeqCst)` and read after it:
//!
//! - the writer: pushes the version and stores the retired count (`Domain::pending`),
//!   `fence(SeqCst)`, then loads [`Wake::asleep`]; if set, it notifies under the lock;
//! - the reclaimer: under the lock, stores `asleep`, `fence(SeqCst)`, then loads the
//!   retired count; if it grew since its last pass, it does not sleep.
//!
//! The two fences are totally ordered, so at least one side sees the other's store: the
//! reclaimer never sleeps on a version retired after its pass unless the writer saw it
//! asleep, and that writer's notify, taken under the lock the reclaimer holds until it
//! waits, cannot come before the wait. Versions still held by a guard stay retired; a
//! guard's drop notifies nobody (it is one store), so while any is retired the reclaimer
//! looks again every [`ReclaimerBuilder::poll`].

use std::fmt;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use crate::barrier;
use crate::hazard;
use crate::sync::{Arc, AtomicBool, Condvar, Mutex, Ordering};

#[cfg(loom)]
use loom::thread;
#[cfg(not(loom))]
use std::thread;

/// Retired versions at which an update reclaims by itself even while a background
/// reclaimer runs (one that fell behind): the bound on what an update-only writer leaves
/// retired, as [`RECLAIM_THRESHOLD`](crate::RECLAIM_THRESHOLD) is without one.
pub(crate) const BACKSTOP: usize = 4 * hazard::RECLAIM_THRESHOLD;

/// How long a sleeping reclaimer waits for a wake-up when nothing is retired, as a
/// backstop (the handshake makes it unnecessary).
const IDLE_WAIT: Duration = Duration::from_millis(100);

/// The reclaimer's half of the handshake, one per domain.
pub(crate) struct Wake {
    /// Whether a reclaimer runs (claimed by [`Reclaimer::spawn`]).
    running: AtomicBool,
    /// Whether the reclaimer is about to wait or waits: see the module docs.
    asleep: AtomicBool,
    /// Whether the running reclaimer was asked to stop.
    stop: AtomicBool,
    lock: Mutex<()>,
    cond: Condvar,
}

impl Wake {
    pub(crate) fn new() -> Wake {
        Wake {
            running: AtomicBool::new(false),
            asleep: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            lock: Mutex::new(()),
            cond: Condvar::new(),
        }
    }

    /// Whether a background reclaimer runs now.
    #[inline]
    pub(crate) fn running(&self) -> bool {
        // Relaxed: a hint. A reclaimer that starts or stops meanwhile changes only which
        // thread reclaims a version first; the stop does a last pass (see `run`).
        self.running.load(Ordering::Relaxed)
    }

    /// The writer's half of the handshake: called after a retirement was counted in
    /// `List::retirements`.
    pub(crate) fn after_retire(&self) {
        // SeqCst: orders the retired count, stored before, against the load of `asleep`
        // (module docs); pairs with the fence in `run`.
        barrier::full();
        // Relaxed: ordered by the fence above.
        if self.asleep.load(Ordering::Relaxed) {
            self.notify();
        }
    }

    /// Notifies the reclaimer under the lock it holds until it waits (module docs).
    fn notify(&self) {
        let _lock = self.lock.lock();
        self.cond.notify_one();
    }
}

impl fmt::Debug for Wake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wake")
            .field("running", &self.running.load(Ordering::Relaxed))
            .field("asleep", &self.asleep.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// A background thread that recycles retired versions: the reclamation passes (a heavy
/// barrier and a scan of the hazard slots each) and the `T::drop` of a version its pool
/// does not keep (over [`max_idle`](crate::PoolBuilder::max_idle), or a closed pool) run
/// there rather than on the thread that updates. For versions whose drop takes long (a map
/// of a gigabyte), and for writers that should not pay the barrier. (A pool's `reset` runs
/// when [`get`](crate::Pool::get) hands an object out, on the getter's thread, with or
/// without a reclaimer.)
///
/// Without a reclaimer, retired versions go back at reclamations on a writer's side (see
/// [`reclaim`](crate::reclaim)). While one runs:
///
/// - an update that retires a version wakes the reclaimer (if it sleeps: a futex wake, a
///   few µs; nothing if it is awake) instead of reclaiming at
///   [`RECLAIM_THRESHOLD`](crate::RECLAIM_THRESHOLD); it still reclaims by itself past 32
///   retired versions (four thresholds), should the reclaimer fall behind;
/// - the reclaimer recycles them at once, then again every
///   [`poll`](ReclaimerBuilder::poll) period while versions stay retired because guards
///   hold them (a guard's drop notifies nobody), and sleeps while nothing is retired;
/// - a pool getter that finds nothing idle (`get_new`, `get`, a `get` waiting at
///   `max_live`) still reclaims on its own thread before it builds a new object or
///   sleeps: building a second gigabyte map would cost more. With versions back in time,
///   the writer finds one idle and does not.
///
/// Each pass costs the reclaimer's thread what [`reclaim`](crate::reclaim) costs (one
/// heavy barrier, one load per hazard slot) and interrupts readers as an update's
/// reclamation would; a pass with nothing retired is one lock. The thread takes a CPU
/// while it works: on a machine with no CPU to spare it competes with the readers and
/// the writer. One reclaimer runs at a time in a process. Dropping the handle stops the
/// thread, after a last pass, and joins it.
///
/// If a version's return path panics on the reclaimer (its `T::drop`), the reclaimer goes
/// on (every other version of the pass went back) and [`join`](Reclaimer::join) returns
/// the first panic.
///
/// `Send` and `Sync`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use poolswap::{Container, Pool, Reclaimer};
///
/// let reclaimer = Reclaimer::builder()
///     .name("table-reclaimer")
///     .poll(Duration::from_millis(5))
///     .spawn()
///     .expect("spawn the reclaimer");
/// let pool = Pool::new(Vec::<u64>::new, Vec::clear);
/// let table = Container::from_value(&pool, vec![1, 2, 3]);
/// let mut next = table.get_new();
/// next.extend([4, 5]);
/// table.update(next); // the reclaimer brings the old version back to the pool
/// reclaimer.join().expect("no drop panicked");
/// assert_eq!(pool.stats().idle, 1);
/// ```
pub struct Reclaimer {
    handle: Option<thread::JoinHandle<()>>,
    panic: Arc<PanicSlot>,
}

/// Configures a [`Reclaimer`]; see [`Reclaimer::builder`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `spawn` is called"]
pub struct ReclaimerBuilder {
    name: String,
    poll: Duration,
}

impl ReclaimerBuilder {
    /// The thread's name (default `"poolswap-reclaimer"`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// How often the reclaimer looks again while versions stay retired because guards hold
    /// them (default 1 ms): the longest a version waits after its last guard's drop. Each
    /// look is one reclamation pass (a heavy barrier: an interrupt to every CPU running a
    /// thread of the process), so a shorter period costs readers more.
    pub fn poll(mut self, period: Duration) -> Self {
        self.poll = period;
        self
    }

    /// Starts the thread.
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::AlreadyExists`] if a reclaimer already runs in this process, or
    /// the error of [`std::thread::Builder::spawn`].
    pub fn spawn(self) -> io::Result<Reclaimer> {
        let wake = hazard::wake();
        if wake
            .running
            // Acquire: sees the previous reclaimer's last writes (its `Release` in
            // `Reclaimer::stop_and_join`), so its `stop` flag is cleared below, not raced.
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "poolswap::Reclaimer: a reclaimer already runs in this process",
            ));
        }
        // Relaxed: the thread that reads it is spawned below (spawn synchronizes).
        wake.stop.store(false, Ordering::Relaxed);
        let panic = Arc::new(Mutex::new(None));
        let seen = Arc::clone(&panic);
        let poll = self.poll;
        let spawned = thread::Builder::new()
            .name(self.name)
            .spawn(move || run(wake, poll, &seen));
        match spawned {
            Ok(handle) => Ok(Reclaimer {
                handle: Some(handle),
                panic,
            }),
            Err(e) => {
                // Release: as in `stop_and_join`.
                wake.running.store(false, Ordering::Release);
                Err(e)
            }
        }
    }
}

impl Reclaimer {
    /// A reclaimer with the default name and poll period; see [`ReclaimerBuilder::spawn`].
    ///
    /// # Errors
    ///
    /// As [`ReclaimerBuilder::spawn`].
    pub fn spawn() -> io::Result<Reclaimer> {
        Reclaimer::builder().spawn()
    }

    /// Starts configuring a reclaimer.
    pub fn builder() -> ReclaimerBuilder {
        ReclaimerBuilder {
            name: "poolswap-reclaimer".into(),
            poll: Duration::from_millis(1),
        }
    }

    /// Stops the thread after a last reclamation pass and waits for it. Returns the first
    /// panic of a version's return path on the reclaimer, if any.
    ///
    /// # Errors
    ///
    /// The payload of that panic.
    pub fn join(mut self) -> std::thread::Result<()> {
        self.stop_and_join();
        let first = self.panic.lock().take();
        match first {
            Some(payload) => Err(payload),
            None => Ok(()),
        }
    }

    fn stop_and_join(&mut self) {
        let Some(handle) = self.handle.take() else {
            return;
        };
        let wake = hazard::wake();
        // Relaxed: the notify below takes the lock that the reclaimer holds while it
        // decides to wait, and it reads `stop` under it.
        wake.stop.store(true, Ordering::Relaxed);
        wake.notify();
        // The thread catches every panic of a pass: it does not panic itself.
        let _ = handle.join();
        // Release: pairs with the Acquire of the next `spawn`.
        wake.running.store(false, Ordering::Release);
    }
}

impl Drop for Reclaimer {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

impl fmt::Debug for Reclaimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reclaimer")
            .field("running", &self.handle.is_some())
            .finish_non_exhaustive()
    }
}

/// The first panic of a version's return path on the reclaimer, for `join`.
type PanicSlot = Mutex<Option<Box<dyn std::any::Any + Send>>>;

/// The reclaimer's loop.
fn run(wake: &'static Wake, poll: Duration, panicked: &PanicSlot) {
    loop {
        // A pass; a panic of a return path is kept for `join` and the loop goes on.
        pass(panicked);
        let left = hazard::retirements();
        let mut lock = wake.lock.lock();
        // Relaxed: read under the lock the stopper notifies under.
        if wake.stop.load(Ordering::Relaxed) {
            drop(lock);
            // The last pass: what was retired before the stop.
            pass(panicked);
            return;
        }
        // Relaxed: ordered by the fence below (module docs).
        wake.asleep.store(true, Ordering::Relaxed);
        // SeqCst: pairs with the fence in `Wake::after_retire` (module docs).
        barrier::full();
        // Nothing retired since the pass (the count only grows): sleep.
        if hazard::retirements() == left {
            let wait = if hazard::has_pending() {
                poll
            } else {
                IDLE_WAIT
            };
            lock = wake.cond.wait_for(&wake.lock, lock, wait);
        }
        // Relaxed: only this thread writes it; writers read it as a hint.
        wake.asleep.store(false, Ordering::Relaxed);
        drop(lock);
    }
}

/// One reclamation pass; the first panic of a return path is kept for `join`.
fn pass(panicked: &PanicSlot) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(hazard::reclaim)) {
        panicked.lock().get_or_insert(payload);
    }
}
