//! [`Cache`]: a per-thread reader that re-acquires only when the version changed.

use std::fmt;
use std::ops::Deref;

use super::guard::Guard;
use super::Container;

/// A per-thread cached reader of a [`Container`]: [`load`](Cache::load) returns the current
/// version with one atomic load when nothing changed since the last call.
///
/// It keeps a [`Guard`] on the version it returned last, and replaces it when `load` sees a newer
/// one. So the cached version does not go back to its pool until the cache next loads (or is
/// dropped): a cache that is not used for a while holds one old version out of the pool, and a slot
/// of the thread that loaded it. `load` takes `&mut self`: one cache per thread or task, as with
/// arc-swap's `Cache`.
///
/// `C` is anything that dereferences to the container: `&Container<T>`,
/// `Arc<Container<T>>`, ...
///
/// # Costs
///
/// `load` when the version is unchanged: one `Relaxed` load of the container's current
/// pointer and a compare; no barrier, no write. When it changed: an
/// [`acquire`](Container::acquire) and the drop of the old guard.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use poolswap::{Cache, Container, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let config = Arc::new(Container::from_value(&pool, 1));
/// let mut cache = Cache::new(Arc::clone(&config));
/// assert_eq!(*cache.load(), 1);
/// config.update(pool.adopt(2));
/// assert_eq!(*cache.load(), 2);
/// ```
pub struct Cache<T, C> {
    container: C,
    cached: Guard<T>,
}

impl<T, C: Deref<Target = Container<T>>> Cache<T, C> {
    /// A cache on `container`, holding a guard on its current version (an
    /// [`acquire`](Container::acquire)).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Cache, Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let mut cache = Cache::new(&c);
    /// assert_eq!(*cache.load(), 1);
    /// ```
    pub fn new(container: C) -> Cache<T, C> {
        let cached = container.acquire();
        Cache { container, cached }
    }

    /// The container's current version: the cached one if it is still current (one load),
    /// else a fresh [`acquire`](Container::acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Cache, Container, Pool};
    ///
    /// let pool = Pool::new(String::new, String::clear);
    /// let c = Container::from_value(&pool, String::from("v1"));
    /// let mut cache = Cache::new(&c);
    /// assert_eq!(cache.load(), "v1");
    /// c.update(pool.adopt(String::from("v2")));
    /// assert_eq!(cache.load(), "v2");
    /// ```
    #[inline]
    pub fn load(&mut self) -> &T {
        // One Relaxed load (see `Raw::is_current`): the guard protects the cached version,
        // and a newer one is acquired properly below.
        if !self.container.raw.is_current(Guard::version(&self.cached)) {
            self.reload();
        }
        &self.cached
    }

    #[cold]
    #[inline(never)]
    fn reload(&mut self) {
        // The new guard first: acquiring before dropping keeps the old slot busy for one
        // more moment, never the other way round.
        let next = self.container.acquire();
        self.cached = next;
    }
}

/// Shows the cached version (which may be older than the container's current one).
impl<T: fmt::Debug, C: fmt::Debug> fmt::Debug for Cache<T, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cache")
            .field("cached", &*self.cached)
            .field("container", &self.container)
            .finish()
    }
}
