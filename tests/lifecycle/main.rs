//! The lifecycle of a pooled version, ported from Go's `TestLifecycle`, and the documented
//! behaviour of `Pool`, `Pooled`, `Container` and `Guard`, single-threaded where possible.
//!
//! Every object is a `Tracked` whose log keeps its history: when the factory made it, when
//! reset ran on it (and on which thread), and when it was dropped, so the tests can check
//! *when* each of those happens, not only that the API returns something.
//!
//! A retired version goes back to its pool only at a reclamation (an update at
//! 8 (`Container::update`), a pool getter that finds nothing idle, a container's drop,
//! or `poolswap::reclaim`), never at a guard's drop: the tests call `poolswap::reclaim`
//! where they mean "now it is back", and every test takes [`serial`] first.

#[path = "../support/tracked.rs"]
mod tracked;

mod container;
mod pool_api;
mod recycle;

#[path = "../support/serial.rs"]
mod serial;

use serial::serial;
use std::sync::Arc;

use poolswap::{Container, OptionContainer, Pool, Pooled};
use tracked::{tracked_pool, Log, Tracked, DEFAULT_MAX_IDLE};

/// A pool with the default bounds, and the log of its objects, with history.
fn logged_pool() -> (Arc<Log>, Pool<Tracked>) {
    let log = Log::with_history();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE, 0);
    (log, pool)
}

/// An empty container on a [`logged_pool`], with that pool's handle and log. An
/// `OptionContainer`: the tests count every object made, so none is made before the first
/// [`publish`].
fn logged_container() -> (Arc<Log>, Pool<Tracked>, OptionContainer<Tracked>) {
    let (log, pool) = logged_pool();
    let c = OptionContainer::empty(&pool);
    (log, pool, c)
}

/// Either flavour of container, for [`publish`].
trait Publish {
    fn pool(&self) -> &Pool<Tracked>;
    fn update(&self, next: Pooled<'_, Tracked>);
}

impl Publish for Container<Tracked> {
    fn pool(&self) -> &Pool<Tracked> {
        Container::pool(self)
    }
    fn update(&self, next: Pooled<'_, Tracked>) {
        Container::update(self, next);
    }
}

impl Publish for OptionContainer<Tracked> {
    fn pool(&self) -> &Pool<Tracked> {
        OptionContainer::pool(self)
    }
    fn update(&self, next: Pooled<'_, Tracked>) {
        OptionContainer::update(self, next);
    }
}

/// Publishes a new version holding `value` (from the container's pool, as `get_new`);
/// returns its id.
fn publish(c: &impl Publish, value: u64) -> usize {
    let mut next = c.pool().get();
    next.value = value;
    next.recycled = false;
    let id = next.id;
    c.update(next);
    id
}
