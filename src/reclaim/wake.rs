//! The handshake that wakes a sleeping background reclaimer when a version is retired.
//!
//! One reclaimer runs at a time. While it runs, an update that retires a version does not
//! run a pass below `BACKSTOP` retired versions (`retired.rs`); it wakes the reclaimer
//! instead, if that one sleeps. The wake-up is a Dekker handshake on two flags, each
//! written before a `fence(SeqCst)` and read after it:
//!
//! - the writer: pushes the version and counts it (`List::retirements`), `fence(SeqCst)`,
//!   then loads [`Wake::asleep`]; if set, it notifies under the lock;
//! - the reclaimer: under the lock, stores `asleep`, `fence(SeqCst)`, then loads the
//!   count of retirements; if it grew since its last pass, it does not sleep.
//!
//! The two fences are totally ordered, so at least one side sees the other's store: the
//! reclaimer never sleeps on a version retired after its pass unless the writer saw it
//! asleep, and that writer's notify, taken under the lock the reclaimer holds until it
//! waits, cannot come before the wait. A guard's drop notifies nobody (it is one store), so
//! while versions stay retired the reclaimer looks again after a poll period.

use super::barrier;
use crate::sync::{AtomicBool, Condvar, Mutex, Ordering};

/// The reclaimer's half of the handshake and its stop flag, one per process (per model
/// execution under loom).
pub(super) struct Wake {
    /// Whether a reclaimer runs (claimed by `Reclaimer::spawn`, `Acquire`; cleared by its
    /// join, `Release`).
    pub(super) running: AtomicBool,
    /// Whether the reclaimer is about to wait or waits: see the module docs.
    pub(super) asleep: AtomicBool,
    /// Whether the running reclaimer was asked to stop; read under `lock`.
    pub(super) stop: AtomicBool,
    /// Held by the reclaimer from its check to its wait, and by a notifier.
    pub(super) lock: Mutex<()>,
    pub(super) cond: Condvar,
}

impl Wake {
    pub(super) fn new() -> Wake {
        Wake {
            running: AtomicBool::new(false),
            asleep: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            lock: Mutex::new(()),
            cond: Condvar::new(),
        }
    }

    /// Whether a background reclaimer runs now: one `Relaxed` load.
    #[inline]
    pub(super) fn running(&self) -> bool {
        // Relaxed: a hint. A reclaimer that starts or stops meanwhile changes only which
        // thread reclaims a version first; the stop does a last pass.
        self.running.load(Ordering::Relaxed)
    }

    /// The writer's half of the handshake, called after a retirement was counted in
    /// `List::retirements`: a `fence(SeqCst)`, a load, and, if the reclaimer sleeps, a lock
    /// and a notify.
    pub(super) fn after_retire(&self) {
        // SeqCst: orders the retired count, stored before, against the load of `asleep`
        // (module docs); pairs with the fence in the reclaimer's loop.
        barrier::full();
        // Relaxed: ordered by the fence above.
        if self.asleep.load(Ordering::Relaxed) {
            self.notify();
        }
    }

    /// Notifies the reclaimer under the lock it holds until it waits (module docs).
    pub(super) fn notify(&self) {
        let _lock = self.lock.lock();
        self.cond.notify_one();
    }
}

impl std::fmt::Debug for Wake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Relaxed: an instantaneous reading for debugging.
        f.debug_struct("Wake")
            .field("running", &self.running.load(Ordering::Relaxed))
            .field("asleep", &self.asleep.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}
