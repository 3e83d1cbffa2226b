//! [`ReadHandle`]: what an op log's readers hold. It reads the container and cannot
//! publish: the writer ([`OpLog`](super::OpLog)) is the only one that can.

use std::fmt;

// std's `Arc`, as the op log's own: the handle only shares the container, whose atomics are
// the facade's (see the import in `oplog.rs`).
#[allow(clippy::disallowed_types)]
use std::sync::Arc;

use super::Versioned;
use crate::{Container, Guard, Subscriber};

/// A reader's handle on an [`OpLog`](super::OpLog)'s versions, from
/// [`OpLog::read_handle`](super::OpLog::read_handle): it acquires the current version and
/// subscribes to new ones, and nothing else. Only the writer publishes; no method of the
/// handle, nor of the [`Subscriber`] it hands out, reaches the container's
/// [`update`](Container::update). (left-right's and flashmap's `ReadHandle`.)
///
/// A guard derefs to [`Versioned<T>`], which derefs to `T`.
///
/// `Clone` for another reader: an `Arc` clone (one atomic increment). The handle keeps the
/// container alive, not the writer: readers keep reading the last version published after
/// the writer is dropped. `Send` and `Sync` when `T: Send + Sync`, as the container.
///
/// # Examples
///
/// ```
/// use std::thread;
/// use poolswap::oplog::{OpLog, VecOp};
///
/// let mut w = OpLog::new(vec![1]);
/// let reader = w.read_handle();
/// let t = thread::spawn(move || reader.acquire().len());
/// w.append(VecOp::Push(2));
/// w.publish();
/// assert!(matches!(t.join().unwrap(), 1 | 2)); // before or after the publish
/// ```
pub struct ReadHandle<T> {
    // std's `Arc`: see the import.
    #[allow(clippy::disallowed_types)]
    container: Arc<Container<Versioned<T>>>,
}

impl<T> ReadHandle<T> {
    /// A handle on the writer's container.
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    pub(super) fn new(container: Arc<Container<Versioned<T>>>) -> Self {
        ReadHandle { container }
    }

    /// A guard on the current version. Never waits for the writer. Costs what
    /// [`Container::acquire`] does: two loads and a store to a hazard slot, no atomic
    /// read-modify-write, no lock, no allocation after the thread's first read. The
    /// version stays readable, and out of the writer's reach, until the guard is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{MapOp, OpLog, Versioned};
    ///
    /// let mut w = OpLog::new(HashMap::from([("a", 1)]));
    /// let r = w.read_handle();
    /// let before = r.acquire();
    /// w.append(MapOp::Insert("a", 2));
    /// w.publish();
    /// assert_eq!(before["a"], 1); // still the version it acquired
    /// let now = r.acquire();
    /// assert_eq!((now["a"], Versioned::seq(&now)), (2, 1));
    /// ```
    #[doc(alias = "load")]
    #[inline]
    #[must_use = "a guard that is dropped at once reads nothing"]
    pub fn acquire(&self) -> Guard<Versioned<T>> {
        self.container.acquire()
    }

    /// Calls `f` with the current version and drops the guard afterwards:
    /// [`acquire`](ReadHandle::acquire)'s cost.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{OpLog, VecOp};
    ///
    /// let mut w = OpLog::new(vec![1, 2]);
    /// w.append(VecOp::Push(3));
    /// w.publish();
    /// assert_eq!(w.read_handle().with_acquire(|v| v.len()), 3);
    /// ```
    pub fn with_acquire<R>(&self, f: impl FnOnce(&Versioned<T>) -> R) -> R {
        self.container.with_acquire(f)
    }

    /// A [`Subscriber`] to the op log's publishes: it remembers the last version it saw
    /// (the current one, at first) and waits for the next. It owns its handle (a `Weak` on
    /// the container; [`Container::subscribe_owned`]), so it may go to another thread; once
    /// the writer and every read handle are gone, its waits return the last version, then
    /// [`Closed`](crate::Closed). See [`Subscriber`] for what it costs.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::thread;
    /// use poolswap::oplog::{OpLog, VecOp};
    ///
    /// let mut w = OpLog::new(Vec::new());
    /// let mut sub = w.read_handle().subscribe();
    /// let watcher = thread::spawn(move || {
    ///     sub.wait_changed().unwrap();
    ///     sub.acquire().unwrap().len()
    /// });
    /// w.append(VecOp::Push(1));
    /// w.publish();
    /// assert_eq!(watcher.join().unwrap(), 1);
    /// ```
    #[must_use = "a subscriber that is dropped at once waits for nothing"]
    pub fn subscribe(&self) -> Subscriber<'static, Container<Versioned<T>>>
    where
        T: 'static,
    {
        self.container.subscribe_owned()
    }
}

impl<T> Clone for ReadHandle<T> {
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    fn clone(&self) -> Self {
        ReadHandle {
            container: Arc::clone(&self.container),
        }
    }
}

/// Shows the current version's number (an acquire), not its contents.
impl<T> fmt::Debug for ReadHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadHandle")
            .field("seq", &Versioned::seq(&self.acquire()))
            .finish_non_exhaustive()
    }
}
