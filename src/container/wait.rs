//! The container's waits at its pool's live bound with a deadline (and, with the `async`
//! feature, awaitable): each is its pool's, as [`Container::get_new`] is [`Pool::get`].
//!
//! [`Pool::get`]: crate::Pool::get

use std::time::Duration;

use super::{Container, OptionContainer};
use crate::pool::Pooled;

impl<T> Container<T> {
    /// [`get_new`](Container::get_new) that waits at most `timeout` at the pool's
    /// [`max_live`](crate::PoolBuilder::max_live) bound for a reader to let go of an old
    /// version: `None` if no object could be had by then ([`Pool::get_timeout`], which says
    /// what it costs and how far past the deadline it may return).
    ///
    /// # Panics
    ///
    /// As [`Pool::get`](crate::Pool::get).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::builder(|| 0u64, |n: &mut u64| *n = 0).max_live(2).build();
    /// let c = Container::from_value(&pool, 1);
    /// let reader = c.acquire(); // holds version 1
    /// c.update(c.get_new()); // version 1 is retired, still read
    /// assert!(c.get_new_timeout(Duration::from_millis(5)).is_none()); // both in use
    /// drop(reader); // a store: the waiting getter's reclamation brings version 1 back
    /// assert!(c.get_new_timeout(Duration::from_secs(5)).is_some());
    /// ```
    ///
    /// [`Pool::get_timeout`]: crate::Pool::get_timeout
    #[must_use = "the object goes straight back to the pool if it is dropped"]
    pub fn get_new_timeout(&self, timeout: Duration) -> Option<Pooled<'_, T>> {
        self.raw.pool().get_timeout(timeout)
    }
}

impl<T> OptionContainer<T> {
    /// An object from the container's pool, waiting at most `timeout` at its live bound, as
    /// [`Container::get_new_timeout`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::builder(|| 0u64, |n: &mut u64| *n = 0).max_live(1).build();
    /// let c = OptionContainer::empty(&pool);
    /// c.update(c.get_new());
    /// assert!(c.get_new_timeout(Duration::ZERO).is_none()); // the one object is current
    /// drop(c.take());
    /// assert!(c.get_new_timeout(Duration::ZERO).is_some());
    /// ```
    #[must_use = "the object goes straight back to the pool if it is dropped"]
    pub fn get_new_timeout(&self, timeout: Duration) -> Option<Pooled<'_, T>> {
        self.raw.pool().get_timeout(timeout)
    }
}

#[cfg(all(feature = "async", not(loom)))]
impl<T> Container<T> {
    /// [`get_new`](Container::get_new) that awaits at the pool's
    /// [`max_live`](crate::PoolBuilder::max_live) bound instead of blocking the thread, for
    /// a writer task: ready once a reader lets go of an old version (the `poolswap-reclaim`
    /// thread reclaims it while the writer awaits) or another object comes back
    /// ([`Pool::get_async`], which says what it costs). Needs the `async` feature.
    ///
    /// Cancel-safe: a dropped future holds nothing and passes a wake-up it received to the
    /// next waiter. The future is `Send` and `Sync` when `T: Send`.
    ///
    /// # Panics
    ///
    /// As [`Pool::get`](crate::Pool::get).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::builder(|| 0u64, |n: &mut u64| *n = 0).max_live(2).build();
    /// let c = Container::from_value(&pool, 1);
    /// let reader = c.acquire(); // holds version 1
    /// c.update(c.get_new()); // version 1 is retired, still read
    /// let reader = std::thread::spawn(move || drop(reader)); // lets go, on another thread
    /// let mut next = smol::block_on(c.get_new_async()); // awaits version 1's return
    /// *next = 3;
    /// c.update(next);
    /// reader.join().unwrap();
    /// assert_eq!(*c.acquire(), 3);
    /// ```
    ///
    /// [`Pool::get_async`]: crate::Pool::get_async
    pub async fn get_new_async(&self) -> Pooled<'_, T> {
        self.raw.pool().get_async().await
    }
}

#[cfg(all(feature = "async", not(loom)))]
impl<T> OptionContainer<T> {
    /// An object from the container's pool, awaited at its live bound, as
    /// [`Container::get_new_async`]. Needs the `async` feature.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::builder(String::new, String::clear).max_live(1).build();
    /// let c = OptionContainer::empty(&pool);
    /// let mut next = smol::block_on(c.get_new_async());
    /// next.push_str("v1");
    /// c.update(next);
    /// assert!(!c.is_empty());
    /// ```
    pub async fn get_new_async(&self) -> Pooled<'_, T> {
        self.raw.pool().get_async().await
    }
}
