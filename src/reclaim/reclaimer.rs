//! [`Reclaimer`]: a background thread that runs the reclamation passes, so that the
//! returns of retired versions (and the `T::drop` of those their pools do not keep) run
//! neither on a reader nor, normally, on the writer. The handshake that wakes it is in
//! `wake.rs`.

use std::fmt;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use super::barrier;
use super::retired::{self, has_pending, retirements};
use super::wake::Wake;
use crate::sync::{Arc, Mutex, Ordering};

#[cfg(loom)]
use loom::thread;
#[cfg(not(loom))]
use std::thread;

/// The reclaimer thread's name.
const NAME: &str = "poolswap-reclaimer";

/// How often the reclaimer looks again while versions stay retired because guards hold
/// them: the longest a version waits after its last guard's drop. Each look is one pass (a
/// heavy barrier), so a shorter period would cost readers more.
#[cfg(not(loom))]
const POLL: Duration = Duration::from_millis(1);
/// Under loom, below the 1 ms at which the facade's timed wait stops polling and waits for
/// a notification only (`sync.rs`): the models look again, as real threads do.
#[cfg(loom)]
const POLL: Duration = Duration::from_micros(100);

/// How long a sleeping reclaimer waits for a wake-up when nothing is retired, as a
/// backstop (the handshake makes it unnecessary).
const IDLE_WAIT: Duration = Duration::from_millis(100);

/// A background thread that returns retired versions to their pools: the reclamation
/// passes (a heavy barrier and a scan of the hazard slots each) and the `T::drop` of a
/// version its pool does not keep (over [`max_idle`](crate::PoolBuilder::max_idle), or a
/// closed pool) run there rather than on the thread that updates. For versions whose drop
/// takes long (a map of a gigabyte), and for writers that should not pay the barrier. (A
/// pool's `reset` runs when [`get`](crate::Pool::get) hands an object out, on the getter's
/// thread, with or without a reclaimer.)
///
/// Without a reclaimer, retired versions go back at reclamations on a writer's side (see
/// [`reclaim`](crate::reclaim())). While one runs:
///
/// - an update that retires a version wakes the reclaimer if it sleeps (a lock and a
///   notify; nothing if it is awake) instead of reclaiming at 8 retired versions; it still
///   reclaims by itself at 32 retired versions on its pool's list (and twice those that
///   guards held at its last pass), should the reclaimer fall behind;
/// - the reclaimer runs a pass at once, then one every millisecond while versions stay
///   retired because guards hold them (a guard's drop notifies nobody), and sleeps while
///   nothing is retired;
/// - a pool getter that finds nothing idle still reclaims on its own thread before it
///   builds a new object or waits: building a second gigabyte map would cost more.
///
/// Each pass costs the reclaimer's thread what [`reclaim`](crate::reclaim()) costs and
/// interrupts readers as an update's pass would; a pass with nothing retired is a load per
/// list and two locks. The thread takes a CPU while it works. One reclaimer runs at a time
/// in a process; its thread is named `poolswap-reclaimer`. Dropping the handle stops the
/// thread after a last pass and joins it.
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
/// use poolswap::{Container, Pool, Reclaimer};
///
/// let reclaimer = Reclaimer::spawn().expect("spawn the reclaimer");
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

impl Reclaimer {
    /// Starts the reclaimer thread. Costs a thread spawn and one allocation.
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::AlreadyExists`] if a reclaimer already runs in this process, or
    /// the error of [`std::thread::Builder::spawn`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::ErrorKind;
    /// use poolswap::Reclaimer;
    ///
    /// let reclaimer = Reclaimer::spawn()?;
    /// // One runs at a time in a process.
    /// let refused = Reclaimer::spawn().unwrap_err();
    /// assert_eq!(refused.kind(), ErrorKind::AlreadyExists);
    /// reclaimer.join().expect("no version's drop panicked");
    /// let again = Reclaimer::spawn()?; // the first one stopped
    /// drop(again); // stops this one too
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn spawn() -> io::Result<Reclaimer> {
        let wake = retired::wake();
        if wake
            .running
            // Acquire: sees the previous reclaimer's last writes (its `Release` in
            // `Reclaimer::stop_and_join`), so its `stop` flag is cleared below, not raced.
            // loom-mutants: no model starts a reclaimer after another one stopped (each
            // starts one at most), the only case this pairs with a `Release`.
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
        let spawned = thread::Builder::new()
            .name(NAME.into())
            .spawn(move || run(wake, &seen));
        match spawned {
            Ok(handle) => Ok(Reclaimer {
                handle: Some(handle),
                panic,
            }),
            Err(e) => {
                // Release: as in `stop_and_join`.
                // loom-mutants: not modelled: loom's thread spawn does not fail.
                wake.running.store(false, Ordering::Release);
                Err(e)
            }
        }
    }

    /// Stops the thread after a last reclamation pass and waits for it.
    ///
    /// # Errors
    ///
    /// The payload of the first panic of a version's return path on the reclaimer, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool, Reclaimer};
    ///
    /// #[derive(Default)]
    /// struct Fragile(bool); // `true`: its drop panics
    /// impl Drop for Fragile {
    ///     fn drop(&mut self) {
    ///         if self.0 {
    ///             panic!("a version's drop failed");
    ///         }
    ///     }
    /// }
    ///
    /// let reclaimer = Reclaimer::spawn().expect("spawn the reclaimer");
    /// // Keeps no idle object: the reclaimer drops each version it brings back.
    /// let pool = Pool::builder(Fragile::default, |_: &mut Fragile| {}).max_idle(0).build();
    /// let table = Container::from_value(&pool, Fragile(true));
    /// table.update(pool.get()); // retires the fragile version
    /// let payload = reclaimer.join().unwrap_err(); // the reclaimer went on, and kept it
    /// assert_eq!(payload.downcast_ref::<&str>(), Some(&"a version's drop failed"));
    /// ```
    pub fn join(mut self) -> std::thread::Result<()> {
        self.stop_and_join();
        let first = self.panic.lock().take();
        match first {
            Some(payload) => Err(payload),
            None => Ok(()),
        }
    }

    /// Asks the thread to stop, wakes it and joins it; once.
    fn stop_and_join(&mut self) {
        let Some(handle) = self.handle.take() else {
            return;
        };
        let wake = retired::wake();
        // Relaxed: the notify below takes the lock that the reclaimer holds while it
        // decides to wait, and it reads `stop` under it.
        wake.stop.store(true, Ordering::Relaxed);
        wake.notify();
        // The thread catches every panic of a pass: it does not panic itself.
        let _ = handle.join();
        // Release: pairs with the Acquire of the next `spawn`.
        // loom-mutants: no model starts a reclaimer after this one stopped (see `spawn`).
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

/// The reclaimer's loop: a pass, then the handshake (`wake.rs`) and a sleep unless a
/// version was retired since the pass.
fn run(wake: &'static Wake, panicked: &PanicSlot) {
    loop {
        // A pass; a panic of a return path is kept for `join` and the loop goes on.
        pass(panicked);
        let left = retirements();
        let mut lock = wake.lock.lock();
        // Relaxed: read under the lock the stopper notifies under.
        if wake.stop.load(Ordering::Relaxed) {
            drop(lock);
            // The last pass: what was retired before the stop.
            pass(panicked);
            return;
        }
        // Relaxed: ordered by the fence below (`wake.rs`).
        wake.asleep.store(true, Ordering::Relaxed);
        // SeqCst: pairs with the fence in `Wake::after_retire` (`wake.rs`).
        barrier::full();
        // Nothing retired since the pass (the count only grows): sleep.
        if retirements() == left {
            let wait = if has_pending() { POLL } else { IDLE_WAIT };
            lock = wake.cond.wait_for(&wake.lock, lock, wait);
        }
        // Relaxed: only this thread writes it; writers read it as a hint.
        wake.asleep.store(false, Ordering::Relaxed);
        drop(lock);
    }
}

/// One reclamation pass; the first panic of a return path is kept for `join`.
fn pass(panicked: &PanicSlot) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(retired::reclaim)) {
        panicked.lock().get_or_insert(payload);
    }
}
