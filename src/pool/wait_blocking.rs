//! How a getter at the live bound waits: how long ([`Wait`]) and how often it looks again
//! ([`RECLAIM_POLL`], [`IDLE_POLL`]). The waiting loop itself is
//! `Shared::take_or_acquire_live_permit` (`shared.rs`); the awaitable getter is in
//! `wait_async.rs`.
//!
//! # Synchronization
//!
//! A timed getter waits as a blocking one does (`shared.rs`, "The live bound"): it searches
//! under `waiters`, waits on `returned` with a timeout, and looks again at each wake-up. It
//! gives up only **after a look**, never between a wake-up and the look that follows it, so
//! no notification is lost on it: parking_lot's `wait_for` reports a timeout only for a
//! waiter that was not notified (the notification and the timeout race under the queue's
//! lock, and one wins), so either it was woken and looks, or it timed out and the
//! notification went to another waiter. The loom model `timed_get_vs_return`
//! (`tests/loom_pool.rs`) checks that order; loom has no clock, so there a deadline passes
//! after one wait (`sync::Deadline`).
//!
//! The deadline bounds the sleep, not the work: the last look (a lock per depot), a
//! reclamation if versions are retired, and the reset of the object found may run past it.

use std::time::Duration;

use crate::sync::Deadline;

/// How long a getter at the live bound may wait.
#[derive(Clone, Copy, Debug)]
pub(super) enum Wait {
    /// Not at all (`try_get`).
    No,
    /// Until an object can be had (`get`).
    Forever,
    /// Until the deadline (`get_timeout`).
    Until(Deadline),
}

impl Wait {
    /// A wait of at most `timeout` from now (without end if that cannot be represented).
    pub(super) fn within(timeout: Duration) -> Wait {
        Deadline::after(timeout).map_or(Wait::Forever, Wait::Until)
    }

    /// How long a getter that has waited `waits` times may sleep now; `None`: give up.
    pub(super) fn left(self, waits: u32) -> Option<Duration> {
        match self {
            Wait::No => None,
            Wait::Forever => Some(Duration::MAX),
            Wait::Until(deadline) => deadline.left(waits),
        }
    }
}

/// How often a getter waiting at the live bound reclaims and looks again while versions are
/// retired: a guard's drop wakes nobody, so a retired version comes back only at a
/// reclamation.
pub(super) const RECLAIM_POLL: Duration = Duration::from_micros(500);

/// How often a getter waiting at the live bound looks again when no version is retired: a
/// backstop for a version retired after its last look.
pub(super) const IDLE_POLL: Duration = Duration::from_millis(20);
