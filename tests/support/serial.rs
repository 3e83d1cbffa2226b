//! One test at a time, each from an empty retired list.
//!
//! The tests of a binary share one process, and so one retired list: a reclamation in any
//! test (a pool getter that finds nothing idle, an update at the threshold, a container's
//! drop, `poolswap::reclaim`) may take another test's retired version into its batch and
//! return it to its pool, or drop it, at any moment, or a moment after the other test's own
//! `reclaim` has returned. A test that counts idle objects, resets, drops, full copies or
//! what `reclaim` returns would then read the count too early or too late. One at a time, a
//! retired version goes back exactly when the test itself reclaims; the reclamation here
//! first returns what an earlier test left retired.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Holds this binary's test lock, after a reclamation; hold the guard for the whole test.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    // A failing (or `should_panic`) test poisons the lock; the `()` behind it cannot be
    // half-updated.
    let serial = LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    poolswap::reclaim();
    serial
}
