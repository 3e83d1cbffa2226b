//! The lifecycle of a pooled version, ported from Go's `TestLifecycle`, and the documented
//! behaviour of `Pool`, `Pooled`, `Container` and `Guard`, single-threaded where possible.
//!
//! Every object is a `Tracked` whose log keeps its history: when the factory made it, when
//! reset ran on it (and on which thread), and when it was dropped, so the tests can check
//! *when* each of those happens, not only that the API returns something.

#[path = "../support/tracked.rs"]
mod tracked;

mod container;
mod pool_api;
mod recycle;

use std::sync::Arc;

use poolswap::{Container, Pool, DEFAULT_MAX_IDLE};
use tracked::{tracked_pool, Log, Tracked};

/// A pool with the default bounds, and the log of its objects, with history.
fn logged_pool() -> (Arc<Log>, Pool<Tracked>) {
    let log = Log::with_history();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE, 0);
    (log, pool)
}

/// An empty container on a [`logged_pool`], with that pool's handle and log.
fn logged_container() -> (Arc<Log>, Pool<Tracked>, Container<Tracked>) {
    let (log, pool) = logged_pool();
    let c = Container::empty(pool.clone());
    (log, pool, c)
}

/// Publishes a new version holding `value`; returns its id.
fn publish(c: &Container<Tracked>, value: u64) -> usize {
    let mut next = c.get_new();
    next.value = value;
    next.recycled = false;
    let id = next.id;
    c.update(next);
    id
}
