//! Waiting at the live bound with a deadline: [`Pool::get_timeout`] and its owned twin, and
//! how long a getter may wait ([`Wait`]). The awaitable get is in `wait_async.rs`.
//!
//! # Synchronization
//!
//! A timed getter waits as a blocking one does (`shared.rs`, "The live bound"): it searches
//! under `waiters`, waits on `returned` with a timeout, and looks again at each wake-up. The
//! only difference is where it stops: it gives up **after a look**, never between a wake-up
//! and the look that follows it. So a notification that reaches it is never lost: either it
//! was woken (parking_lot's `wait_for` reports a timeout only for a waiter that was not
//! notified: a notification and a timeout race under the queue's lock, one wins), and it
//! looks, finding what the notifier made available unless another getter took it first; or
//! it timed out, and the notification went to another waiter. The loom model
//! `timed_get_vs_return` (tests/loom_pool.rs) checks the look-then-give-up order in every
//! interleaving; loom has no clock, so there a deadline passes after one wait (see
//! `sync::Deadline`).
//!
//! The deadline bounds the sleep, not the work: a look at the deadline (a lock per depot)
//! and a reclamation if versions are retired (a heavy barrier and a scan of the hazard
//! slots, microseconds) may run past it, and so may the reset of the object found.

use std::time::Duration;

use super::{OwnedPooled, Pool, Pooled, Shared};
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

impl<T> Pool<T> {
    /// [`get`](Pool::get) that waits at most `timeout` at the
    /// [`max_live`](crate::PoolBuilder::max_live) bound: `None` if no object could be had by
    /// then. Without a bound, or below it, the same as `get` (in `Some`): it never waits.
    ///
    /// While it waits it reclaims retired container versions (which guards' drops do not
    /// announce) before it sleeps and at each wake-up, as `get` does, waking at least every
    /// 0.5 ms while versions are retired.
    ///
    /// # Costs
    ///
    /// As `get` when an object is at hand. At the bound: one clock read per look (a vDSO
    /// call, no syscall), the `get` search under the pool's waiter lock, and a condition
    /// variable wait (a futex) until a return, a drop, a poll or the deadline. No
    /// allocation. It may return up to one look, one reclamation (microseconds) and the
    /// object's reset past the deadline, plus the scheduler's delay in waking the thread.
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
        self.get_bounded(local, Wait::within(timeout))
    }

    /// [`get_timeout`](Pool::get_timeout), returning an [`OwnedPooled`] (as
    /// [`get_owned`](Pool::get_owned) does); costs one atomic increment more.
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
    /// let pool = Pool::builder(String::new, String::clear).max_live(1).build();
    /// let s = pool.get_owned_timeout(Duration::from_secs(1)).expect("room for one");
    /// assert!(pool.get_owned_timeout(Duration::ZERO).is_none());
    /// drop(s);
    /// ```
    #[must_use = "the object goes straight back to the pool if the guard is dropped"]
    pub fn get_owned_timeout(&self, timeout: Duration) -> Option<OwnedPooled<T>> {
        self.get_timeout(timeout).map(Pooled::into_owned)
    }
}
