//! Change notification: [`Subscriber`], a reader-side handle that remembers the last version
//! it saw and waits for the next one (blocking, or awaited with the `async` feature), and
//! [`Signal`], the state a container shares with its subscribers.
//!
//! # The seen token
//!
//! Versions are recycled objects, so a subscriber cannot remember the address of the version
//! it saw: a version recycled and published anew at the same address would look unchanged
//! (ABA). It remembers a *publication count* instead: `Signal::state` counts every store to
//! the container's `current` made while the signal exists (an update, a swap, a
//! compare-and-swap that succeeded, a take), and a subscriber's `seen` is the count it read
//! last. The count has 62 bits: it does not wrap within any process's lifetime.
//!
//! # Synchronization
//!
//! `state` packs the count with two flags (see [`Signal::state`]); every change to it is a
//! read-modify-write, so all of them are totally ordered on that one location, and the
//! protocol needs no `SeqCst` (which loom models as `AcqRel`).
//!
//! - A publisher stores the new version in `current` (`AcqRel`), then, if the container has a
//!   signal, adds one to the count (`fetch_add`, `AcqRel`). Release: a subscriber that reads
//!   the new count (`Acquire`) and then acquires gets that version or a later one. So a
//!   subscriber marks as seen the count it read *before* acquiring: it may get a version
//!   newer than its count (a later change is then reported for a version it already has, at
//!   most once per race), never an older one.
//! - A waiter first registers where the publisher will wake it (blocking: holds the
//!   signal's lock; async: puts its task's waker in the signal's list, `wakers.rs`, under
//!   that list's lock), then sets `WAITING` with a
//!   `fetch_or` (`AcqRel`) that also returns the count, and sleeps only if the count is the
//!   one it saw. A publisher whose `fetch_add` returns `WAITING` clears it (`fetch_and`,
//!   `AcqRel`) and wakes every waiter: it locks and unlocks the lock, then notifies the
//!   condition variable and takes the wakers' list to wake it. No wake-up is lost: the two read-modify-writes are
//!   ordered. If the waiter's `fetch_or` came first, the publisher's `fetch_add` or
//!   `fetch_and` reads its flag, so the waiter's registration happens before the publisher's
//!   notification: a blocking waiter held the lock from before its `fetch_or` until its wait
//!   released it, so the publisher's lock comes after it sleeps; an async waiter unlocked the
//!   wakers' list before its `fetch_or`, so the publisher's lock of that list comes after,
//!   and finds its waker. If the publisher's `fetch_add` came first, the waiter's `fetch_or` returns the
//!   new count and it does not sleep. A waiter whose flag a `fetch_and` cleared before it
//!   slept is woken by that publisher's notification, sees no change, and sets the flag again.
//! - Closing (the container's drop) sets `CLOSED` with a `fetch_or` and wakes every waiter the
//!   same way, whatever the flags said.
//!
//! # The signal's installation
//!
//! A container has no signal until its first subscriber: `Raw::signal` is null, and a
//! publisher that loads null (one `Acquire` load) does nothing more. The first `subscribe`
//! installs one (a compare-and-swap of `Raw::signal`, `Release`). A publisher that loaded null
//! did not count its version, so every `subscribe` must not miss it either: after loading or
//! installing the signal, `subscribe` makes a read-modify-write of `current` that stores the
//! value it read (`Release`). The modifications of `current` are totally ordered: if this one
//! comes after the publisher's swap, it reads the new version (or a later one), and the
//! subscriber's later loads of `current` return it or a later one; if it comes before, the
//! publisher's swap (`Acquire`) reads from it, so the signal's installation happens before the
//! publisher's load of `Raw::signal`, which therefore returns the signal, and the publisher
//! counts its version.
//!
//! The container holds one count of the signal's `Arc` (`Raw::signal` is an `Arc::into_raw`
//! pointer, taken back at the container's drop, which closes the signal first); each
//! subscriber holds another.

use std::error::Error;
use std::fmt;
#[cfg(all(feature = "async", not(loom)))]
use std::future::Future;
#[cfg(all(feature = "async", not(loom)))]
use std::pin::Pin;
// std's `Arc`, not the facade's: the subscriber's handle on the container is a `Weak` of the
// `Arc` users hold (`Container::subscribe` takes `self: &Arc<Self>`), which is public.
#[allow(clippy::disallowed_types)]
use std::sync::{Arc as StdArc, Weak as StdWeak};
#[cfg(all(feature = "async", not(loom)))]
use std::task::{Context, Poll};
use std::time::Duration;

#[cfg(all(feature = "async", not(loom)))]
use super::wakers::{Slot, Wakers};
use super::{Container, Guard, OptionContainer};
use crate::sync::{self, AtomicU64, Condvar, Deadline, Mutex, Ordering};

/// `Signal::state`: the container is gone.
const CLOSED: u64 = 1;
/// `Signal::state`: a waiter may be asleep; the next publisher wakes every waiter.
const WAITING: u64 = 2;
/// `Signal::state`: one publication.
const ONE: u64 = 4;

/// The publication count in `state`.
#[inline]
pub(super) fn count(state: u64) -> u64 {
    state >> 2
}

/// What a container shares with its subscribers: the publication count and the waiters.
pub(super) struct Signal {
    /// | bits | meaning |
    /// |---|---|
    /// | 0 (`CLOSED`) | the container is gone: every wait returns an error |
    /// | 1 (`WAITING`) | a waiter may be asleep: the next publisher wakes every waiter |
    /// | 2..64 | publications since the signal was installed (wrapping) |
    ///
    /// Changed only by read-modify-writes (module docs, "Synchronization").
    state: AtomicU64,
    /// Held by a blocking waiter from its `WAITING` flag to its sleep, and taken by a
    /// publisher before it notifies `cond`, so that the notification cannot fall between.
    lock: Mutex<()>,
    /// Blocking waiters sleep here.
    cond: Condvar,
    /// Async waiters' wakers (`wakers.rs`). Allocates at the first async wait.
    #[cfg(all(feature = "async", not(loom)))]
    wakers: Wakers,
}

impl Signal {
    pub(super) fn new() -> Signal {
        Signal {
            state: AtomicU64::new(0),
            lock: Mutex::new(()),
            cond: Condvar::new(),
            #[cfg(all(feature = "async", not(loom)))]
            wakers: Wakers::new(),
        }
    }

    /// Counts a publication that has been stored in `current`, and wakes the waiters if any.
    #[inline]
    pub(super) fn published(&self) {
        // AcqRel. Release: a subscriber that reads this count and then acquires gets the
        // version just stored or a later one. Acquire: if a waiter's `fetch_or` set WAITING,
        // its registration happens before the notification below (module docs).
        // loom-mutants: `Release` alone is not caught: the lock that the waiter registers
        // under (the signal's, or the wakers' list's) orders it too. Had this publisher's
        // lock come first, the lock would put this `fetch_add` before the waiter's
        // `fetch_or`, which it then could not read; so a `fetch_add` that reads the flag
        // locks after the waiter. The Acquire half restates that order on `state` itself.
        let prev = self.state.fetch_add(ONE, Ordering::AcqRel);
        if prev & WAITING != 0 {
            self.wake_waiters();
        }
    }

    /// Wakes every waiter, clearing `WAITING` first: a waiter that sets it afterwards reads
    /// the new state.
    #[cold]
    #[inline(never)]
    fn wake_waiters(&self) {
        // AcqRel, as in `published`: a waiter whose flag this clears is woken below.
        self.state.fetch_and(!WAITING, Ordering::AcqRel);
        self.notify_all();
    }

    /// Marks the container gone and wakes every waiter.
    pub(super) fn close(&self) {
        // AcqRel, as in `published`.
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
        self.notify_all();
    }

    fn notify_all(&self) {
        // After a blocking waiter's sleep, if it registered before this call: it holds the
        // lock from its `fetch_or` to its sleep.
        drop(self.lock.lock());
        self.cond.notify_all();
        // Takes the list's lock: after the registration of an async waiter that set
        // `WAITING` before (module docs).
        #[cfg(all(feature = "async", not(loom)))]
        self.wakers.wake_all();
    }

    /// The state, for a subscriber that is about to compare its count.
    #[inline]
    pub(super) fn load(&self) -> u64 {
        // Acquire: pairs with the Release of `published`: a version counted here is visible
        // to the acquire that follows.
        self.state.load(Ordering::Acquire)
    }

    /// Sets `WAITING` and returns the state; call after registering where a publisher wakes.
    fn register(&self) -> u64 {
        // AcqRel. Release: the registration before it happens before the notification of a
        // publisher that reads the flag. Acquire: as in `load`.
        self.state.fetch_or(WAITING, Ordering::AcqRel)
    }
}

/// The error of a [`Subscriber`]'s wait or read once its container is gone: the container
/// was dropped (its last `Arc` handle), turned into an [`OptionContainer`] or the other way,
/// or given up with `into_inner`.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use poolswap::{Closed, Container, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let c = Arc::new(Container::from_value(&pool, 1));
/// let mut sub = c.subscribe();
/// drop(c);
/// assert_eq!(sub.wait_changed(), Err(Closed));
/// assert_eq!(Closed.to_string(), "the container was dropped");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Closed;

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the container was dropped")
    }
}

impl Error for Closed {}

/// A reader-side handle on a container that remembers the last version it saw and can wait
/// for the next one: `tokio::sync::watch::Receiver`'s role, for a [`Container`] or an
/// [`OptionContainer`] (`C`), from their `subscribe`.
///
/// A subscriber marks a version *seen* when it [`acquire`](Subscriber::acquire)s it or when
/// a wait returns. [`has_changed`](Subscriber::has_changed) says whether a version was
/// published since; [`wait_changed`](Subscriber::wait_changed) (blocking),
/// [`wait_changed_timeout`](Subscriber::wait_changed_timeout) and, with the `async` feature,
/// `changed` return as soon as one is, at once if one already was:
/// a version published while nobody waited is seen by the next wait. Every publication
/// counts (an update, a swap, a successful compare-and-swap or `rcu`, a `take`), even of
/// equal contents; several publications between two waits make one change.
///
/// The subscriber does not keep its container alive: it holds a `Weak` on the `Arc` that
/// `subscribe` was called on. Once the container is gone, every wait and read returns
/// [`Closed`] (a wait asleep then wakes).
///
/// A change may be reported for a version that the subscriber already read, if its
/// `acquire` raced with the update (a spurious change, at most once per race); a
/// publication is never missed.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::thread;
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(String::new, String::clear);
/// let config = Arc::new(Container::from_value(&pool, String::from("v1")));
/// let mut sub = config.subscribe();
/// let watcher = thread::spawn(move || {
///     let mut seen = Vec::new();
///     while sub.wait_changed().is_ok() {
///         match sub.acquire() {
///             Ok(current) => seen.push(current.as_str().to_owned()),
///             Err(_closed) => break,
///         }
///     }
///     seen
/// });
/// let mut next = config.get_new();
/// next.push_str("v2");
/// config.update(next);
/// drop(config); // the watcher's wait returns `Closed`
/// let seen = watcher.join().unwrap();
/// assert!(seen.is_empty() || seen == ["v2"]);
/// ```
///
/// # Costs
///
/// - `subscribe`: one atomic increment (the signal's `Arc`) and a compare-and-swap of the
///   container's current version that stores the value it read; the first subscriber of a
///   container allocates its signal (one allocation, a compare-and-swap).
/// - A publication: with no signal (nobody ever subscribed), one load. With one and no
///   waiter asleep, one atomic read-modify-write. With waiters asleep, one more, a lock
///   and unlock, and a wake-up of each (the condition variable's `notify_all`; for tasks,
///   one lock of the wakers' list, taken whole, and each waker's `wake` after the unlock).
/// - [`has_changed`](Subscriber::has_changed): one load.
///   [`acquire`](Subscriber::acquire): one load, the `Weak`'s upgrade and drop (two atomic
///   read-modify-writes on the `Arc`'s count, shared with the other subscribers), and the
///   container's `acquire`.
/// - A wait that finds a change: one load. One that sleeps: a read-modify-write to
///   register, and a lock (blocking), or a lock of the wakers' list and a clone of the
///   task's waker (async; an allocation only when the list grows past its largest size).
///   A woken task takes no lock; a future dropped while registered takes one.
///
/// # Send and Sync
///
/// `Send` and `Sync` when the container is (for `Container<T>`: `T: Send + Sync`), like
/// the `Weak` it holds; the signal is `Send + Sync`. A `Subscriber` is one reader's
/// position: waits take `&mut self`. [`Clone`] it for another reader, which starts with
/// the same seen version.
pub struct Subscriber<C> {
    /// The container, which this handle does not keep alive.
    container: StdWeak<C>,
    /// The container's signal.
    signal: sync::Arc<Signal>,
    /// The publication count of the last version marked seen.
    seen: u64,
}

impl<C> Clone for Subscriber<C> {
    fn clone(&self) -> Self {
        Subscriber {
            container: self.container.clone(),
            signal: self.signal.clone(),
            seen: self.seen,
        }
    }
}

impl<C> fmt::Debug for Subscriber<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.signal.load();
        f.debug_struct("Subscriber")
            .field("has_changed", &(count(state) != self.seen))
            .field("closed", &(state & CLOSED != 0))
            .finish_non_exhaustive()
    }
}

/// What a wait found in `state`: `Some(Ok)` a change (now marked seen in `seen`),
/// `Some(Err)` the container gone, `None` neither.
#[inline]
fn check(seen: &mut u64, state: u64) -> Option<Result<(), Closed>> {
    if state & CLOSED != 0 {
        Some(Err(Closed))
    } else if count(state) != *seen {
        *seen = count(state);
        Some(Ok(()))
    } else {
        None
    }
}

impl<C> Subscriber<C> {
    fn new(container: StdWeak<C>, (signal, seen): (sync::Arc<Signal>, u64)) -> Self {
        Subscriber {
            container,
            signal,
            seen,
        }
    }

    /// Whether a version was published since the last one this subscriber marked seen.
    /// Marks nothing. One load.
    ///
    /// # Errors
    ///
    /// [`Closed`] if the container is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(Container::from_value(&pool, 1));
    /// let mut sub = c.subscribe();
    /// assert_eq!(sub.has_changed(), Ok(false));
    /// c.update(pool.adopt(2));
    /// assert_eq!(sub.has_changed(), Ok(true));
    /// assert_eq!(*sub.acquire().unwrap(), 2); // marks it seen
    /// assert_eq!(sub.has_changed(), Ok(false));
    /// ```
    pub fn has_changed(&self) -> Result<bool, Closed> {
        let state = self.signal.load();
        if state & CLOSED != 0 {
            return Err(Closed);
        }
        Ok(count(state) != self.seen)
    }

    /// Marks the latest version seen without reading it, as if it had been acquired: the
    /// next wait waits for a version published after this call. One load.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(Container::from_value(&pool, 1));
    /// let mut sub = c.subscribe();
    /// c.update(pool.adopt(2));
    /// sub.mark_seen();
    /// assert_eq!(sub.has_changed(), Ok(false));
    /// ```
    pub fn mark_seen(&mut self) {
        self.seen = count(self.signal.load());
    }

    /// Blocks the thread until a version is published that this subscriber has not marked
    /// seen, and marks it seen; returns at once if one already was. Call
    /// [`acquire`](Subscriber::acquire) to read it. Spurious wake-ups are handled here.
    ///
    /// # Errors
    ///
    /// [`Closed`] if the container is gone (a wait asleep then wakes).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(Container::from_value(&pool, 1));
    /// let mut sub = c.subscribe();
    /// let writer = {
    ///     let (c, pool) = (Arc::clone(&c), pool.clone());
    ///     std::thread::spawn(move || c.update(pool.adopt(2)))
    /// };
    /// sub.wait_changed().unwrap();
    /// assert_eq!(*sub.acquire().unwrap(), 2);
    /// writer.join().unwrap();
    /// ```
    pub fn wait_changed(&mut self) -> Result<(), Closed> {
        if let Some(found) = check(&mut self.seen, self.signal.load()) {
            return found;
        }
        let signal = &*self.signal;
        let mut locked = signal.lock.lock();
        loop {
            // Under the lock, which a publisher takes before it notifies (module docs).
            if let Some(found) = check(&mut self.seen, signal.register()) {
                return found;
            }
            locked = signal.cond.wait(&signal.lock, locked);
        }
    }

    /// [`wait_changed`](Subscriber::wait_changed) for at most `timeout`: `Ok(true)` when a
    /// version not seen was published (now marked seen), `Ok(false)` when `timeout` passed
    /// first.
    ///
    /// # Errors
    ///
    /// [`Closed`] if the container is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(Container::from_value(&pool, 1));
    /// let mut sub = c.subscribe();
    /// assert_eq!(sub.wait_changed_timeout(Duration::from_millis(1)), Ok(false));
    /// c.update(pool.adopt(2));
    /// assert_eq!(sub.wait_changed_timeout(Duration::from_millis(1)), Ok(true));
    /// ```
    pub fn wait_changed_timeout(&mut self, timeout: Duration) -> Result<bool, Closed> {
        if let Some(found) = check(&mut self.seen, self.signal.load()) {
            return found.map(|()| true);
        }
        if timeout.is_zero() {
            // A poll: no registration, so no `WAITING` left for the next publisher.
            return Ok(false);
        }
        let Some(deadline) = Deadline::after(timeout) else {
            // Past what the clock represents: no deadline.
            return self.wait_changed().map(|()| true);
        };
        let signal = &*self.signal;
        let mut locked = signal.lock.lock();
        let mut waits = 0;
        loop {
            // As in `wait_changed`.
            if let Some(found) = check(&mut self.seen, signal.register()) {
                return found.map(|()| true);
            }
            let Some(left) = deadline.left(waits) else {
                return Ok(false);
            };
            locked = signal.cond.wait_for(&signal.lock, locked, left);
            waits += 1;
        }
    }

    /// Waits, without blocking the thread, until a version is published that this
    /// subscriber has not marked seen, and marks it seen; ready at its first poll if one
    /// already was. Needs the `async` feature; works under any executor: it needs no timer
    /// and no reactor. For a deadline, wrap it in the runtime's timeout (e.g.
    /// `tokio::time::timeout(d, sub.changed())`): it is cancel-safe.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: the future marks a version seen only when it returns it, and holds
    /// nothing between polls but its task's waker in the signal's list (cleared when it
    /// is dropped). A
    /// version published while the future was pending and before it was dropped is seen
    /// by the next wait.
    ///
    /// # Errors
    ///
    /// [`Closed`] if the container is gone (a pending future then wakes).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(Container::from_value(&pool, 1));
    /// let mut sub = c.subscribe();
    /// smol::block_on(async {
    ///     let ((), changed) = smol::future::zip(
    ///         async { c.update(pool.adopt(2)) },
    ///         sub.changed(),
    ///     )
    ///     .await;
    ///     changed.unwrap();
    /// });
    /// assert_eq!(*sub.acquire().unwrap(), 2);
    /// ```
    #[cfg(all(feature = "async", not(loom)))]
    #[cfg_attr(docsrs, doc(cfg(feature = "async")))]
    pub async fn changed(&mut self) -> Result<(), Closed> {
        Changed {
            signal: &self.signal,
            seen: &mut self.seen,
            slot: None,
        }
        .await
    }
}

/// The future of [`Subscriber::changed`]: registers its task's waker, then sets `WAITING`
/// and looks (module docs); unregisters when dropped.
#[cfg(all(feature = "async", not(loom)))]
struct Changed<'a> {
    signal: &'a Signal,
    seen: &'a mut u64,
    /// Its registration in the signal's wakers, once it has one.
    slot: Option<Slot>,
}

#[cfg(all(feature = "async", not(loom)))]
impl Future for Changed<'_> {
    type Output = Result<(), Closed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(found) = check(this.seen, this.signal.load()) {
            return Poll::Ready(found);
        }
        this.signal.wakers.register(&mut this.slot, cx.waker());
        // After the registration (module docs).
        match check(this.seen, this.signal.register()) {
            Some(found) => Poll::Ready(found),
            None => Poll::Pending,
        }
    }
}

#[cfg(all(feature = "async", not(loom)))]
impl Drop for Changed<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            self.signal.wakers.unregister(slot);
        }
    }
}

impl<T> Subscriber<Container<T>> {
    /// A guard on the current version, marked seen; the container's
    /// [`acquire`](Container::acquire) plus the subscriber's bookkeeping (one load, and the
    /// `Weak`'s upgrade and drop: two atomic read-modify-writes).
    ///
    /// # Errors
    ///
    /// [`Closed`] if the container is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(Container::from_value(&pool, 1));
    /// let mut sub = c.subscribe();
    /// assert_eq!(*sub.acquire().unwrap(), 1);
    /// ```
    pub fn acquire(&mut self) -> Result<Guard<T>, Closed> {
        let (container, token) = self.upgrade()?;
        let guard = container.acquire();
        self.seen = token;
        Ok(guard)
    }
}

impl<T> Subscriber<OptionContainer<T>> {
    /// A guard on the current version (`None` while the container is empty), marked seen;
    /// as [`Subscriber::<Container<T>>::acquire`](Subscriber::acquire).
    ///
    /// # Errors
    ///
    /// [`Closed`] if the container is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(OptionContainer::empty(&pool));
    /// let mut sub = c.subscribe();
    /// assert!(sub.acquire().unwrap().is_none());
    /// c.update(pool.adopt(1));
    /// sub.wait_changed().unwrap();
    /// assert_eq!(sub.acquire().unwrap().as_deref(), Some(&1));
    /// ```
    pub fn acquire(&mut self) -> Result<Option<Guard<T>>, Closed> {
        let (container, token) = self.upgrade()?;
        let guard = container.acquire();
        self.seen = token;
        Ok(guard)
    }
}

impl<C> Subscriber<C> {
    /// The container and the count to mark seen once a guard is taken: read before the
    /// acquire (module docs, "Synchronization").
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    fn upgrade(&self) -> Result<(StdArc<C>, u64), Closed> {
        let state = self.signal.load();
        if state & CLOSED != 0 {
            return Err(Closed);
        }
        let container = self.container.upgrade().ok_or(Closed)?;
        Ok((container, count(state)))
    }
}

impl<T> Container<T> {
    /// A [`Subscriber`] to this container: a handle that remembers the last version it
    /// saw (the current one, at first) and waits for the next; `watch::Sender::subscribe`.
    /// It holds a `Weak` on this `Arc`, so it does not keep the container alive: once the
    /// container is gone its waits return [`Closed`]. See [`Subscriber`] for what it costs
    /// (the first subscriber of a container allocates its signal; a container nobody
    /// subscribed to pays one load per publication).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(Container::from_value(&pool, 1));
    /// let mut sub = c.subscribe();
    /// c.update(pool.adopt(2));
    /// sub.wait_changed().unwrap(); // returns at once: 2 was published since
    /// assert_eq!(*sub.acquire().unwrap(), 2);
    /// ```
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    #[must_use = "a subscriber that is dropped at once waits for nothing"]
    pub fn subscribe(self: &StdArc<Self>) -> Subscriber<Container<T>> {
        Subscriber::new(StdArc::downgrade(self), self.raw.subscribe())
    }
}

impl<T> OptionContainer<T> {
    /// A [`Subscriber`] to this container, as [`Container::subscribe`]; emptying it
    /// ([`take`](OptionContainer::take)) is a change too.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(OptionContainer::from_value(&pool, 1));
    /// let mut sub = c.subscribe();
    /// drop(c.take());
    /// assert_eq!(sub.has_changed(), Ok(true));
    /// assert!(sub.acquire().unwrap().is_none());
    /// ```
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    #[must_use = "a subscriber that is dropped at once waits for nothing"]
    pub fn subscribe(self: &StdArc<Self>) -> Subscriber<OptionContainer<T>> {
        Subscriber::new(StdArc::downgrade(self), self.raw.subscribe())
    }
}
