//! Change notification: [`Subscriber`], a reader-side handle that remembers the last version
//! it saw and waits for the next one (blocking, or awaited with the `async` feature), and
//! [`Signal`], the state a container shares with its subscribers, which keeps the
//! container's last version readable once it is gone.
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
//! - Closing (the container's drop, `into_inner`, a change of flavour) first stores a counted
//!   guard on the container's last version in `Signal::last` (under that field's lock), then
//!   sets `CLOSED` with a `fetch_or` (`AcqRel`) and wakes every waiter the same way, whatever
//!   the flags said. No publication follows a close (the container's side holds `&mut`), so
//!   the count it leaves is the final version's. A subscriber that reads `CLOSED` takes
//!   `Signal::last`'s lock after the closer released it, and clones the guard found there.
//!
//! # The final version
//!
//! A subscriber marks seen the count of the version it read; `CLOSED` does not change the
//! count. So after the close, a subscriber whose count is the final one has read the final
//! version (or a later one, which cannot exist) and its waits return [`Closed`]; one whose
//! count is older gets one more change, and its `acquire` returns `Signal::last`.
//!
//! `Signal::last` is an ordinary counted [`Guard`]: the closer clones the container's
//! reference on the version, which the container then retires as always (or keeps current,
//! after a change of flavour). Once retired, the version stays on its pool's retired list
//! until the signal goes (with its last subscriber), and goes back to the pool, or is
//! dropped if the pool is closed, at the next reclamation after that (or by the orphans'
//! thread, `reclaim/orphans.rs`), like the version of any guard that outlived its
//! container. The guard holds no pool handle (the node's keepalive is the pool's shared
//! state): the pool closes when its own last handle goes, and drops its idle objects and
//! its other versions as they come back.
//!
//! An owned subscriber reaches the container through a `Weak`, which no longer upgrades
//! from the moment the container's last `Arc` goes, before the drop closes the signal (or
//! at all, for a container moved out of its `Arc` with `Arc::try_unwrap`). An `acquire`
//! that finds it so returns [`Closed`] and sets `Subscriber::gone`; until the close, the
//! subscriber's waits then wait for the close, not for a count (which could only repeat
//! the failed acquire), and the close is a change whatever the count: a wait may have
//! marked the final count seen before the acquire failed to read its version. (If it had
//! read it before, the change is a spurious one.)
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
//! subscriber holds another, and the last one to go drops the final version's guard.

use std::error::Error;
use std::fmt;
#[cfg(all(feature = "async", not(loom)))]
use std::future::Future;
#[cfg(all(feature = "async", not(loom)))]
use std::pin::Pin;
// std's `Arc`, not the facade's: an owned subscriber's handle on the container is a `Weak`
// of the `Arc` users hold (`Container::subscribe_owned` takes `self: &Arc<Self>`), which is
// public. Named `Arc` so that the docs show the type users know; the facade's is
// `sync::Arc` here.
#[allow(clippy::disallowed_types)]
use std::sync::{Arc, Weak};
#[cfg(all(feature = "async", not(loom)))]
use std::task::{Context, Poll};
use std::time::Duration;

#[cfg(all(feature = "async", not(loom)))]
use super::wakers::{Slot, Wakers};
use super::{ContainerAny, Flavour, Guard};
use crate::sync::{self, AtomicU64, Condvar, Deadline, Mutex, Ordering};

/// `Signal::state`: the container is gone; `Signal::last` holds its last version.
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

/// What a container shares with its subscribers: the publication count, the waiters, and,
/// once the container is gone, its last version.
pub(super) struct Signal<T> {
    /// | bits | meaning |
    /// |---|---|
    /// | 0 (`CLOSED`) | the container is gone: `last` holds its last version |
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
    /// The container's last version (a counted guard; `None` for an `OptionContainer`
    /// closed empty), stored by the close before it sets `CLOSED`, and read only after
    /// (module docs, "The final version"). Dropped with the signal, after the last
    /// subscriber.
    last: Mutex<Option<Guard<T>>>,
}

impl<T> Signal<T> {
    pub(super) fn new() -> Signal<T> {
        Signal {
            state: AtomicU64::new(0),
            lock: Mutex::new(()),
            cond: Condvar::new(),
            #[cfg(all(feature = "async", not(loom)))]
            wakers: Wakers::new(),
            last: Mutex::new(None),
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
        // loom-mutants: both halves restate orders that hold without them. Acquire: the
        // `fetch_add` that called this already read the flag with Acquire. Release: this
        // read-modify-write continues the release sequence that `fetch_add` heads, so a
        // waiter that reads the cleared state synchronizes with that `fetch_add` anyway.
        self.state.fetch_and(!WAITING, Ordering::AcqRel);
        self.notify_all();
    }

    /// Hands the subscribers `last`, the container's last version, marks the container gone
    /// and wakes every waiter. Called once, with no publication after it.
    pub(super) fn close(&self, last: Option<Guard<T>>) {
        *self.last.lock() = last;
        // AcqRel, as in `published`; the Release half also publishes `last`'s store to a
        // subscriber that reads `CLOSED`, whose lock of `last` then follows ours.
        // loom-mutants: neither half is needed by itself. Acquire: the close reads nothing
        // from `state` (it wakes every waiter, flag or not). Release: a subscriber that
        // reads `CLOSED` and then locks `last` cannot lock it before our unlock (its load
        // would then happen before the store it reads), so the mutex orders `last`.
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
        self.notify_all();
    }

    /// The container's last version; call after reading `CLOSED` (`Acquire`). One lock and,
    /// for a version, one atomic increment.
    fn last(&self) -> Option<Guard<T>> {
        self.last.lock().clone()
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
        // to the acquire that follows; and with the close's: its `last` is stored.
        // loom-mutants: loom runs the fence mode, where the acquire that follows issues a
        // `fence(SeqCst)` after this load (the read path's light barrier), and an acquire
        // fence after a load that reads a Release store synchronizes with it: the models
        // cannot tell `Relaxed` here. The membarrier mode has no such fence and needs this
        // Acquire; `last` is ordered by its mutex (see `close`).
        self.state.load(Ordering::Acquire)
    }

    /// Sets `WAITING` and returns the state; call after registering where a publisher wakes.
    fn register(&self) -> u64 {
        // AcqRel. Release: the registration before it happens before the notification of a
        // publisher that reads the flag. Acquire: as in `load`.
        // loom-mutants: neither half is caught. Release: the waiter registers under the lock
        // that the publisher's notification takes, and a publisher whose `fetch_add` reads
        // this flag locks after the waiter (locking first would put its `fetch_add` before
        // this `fetch_or`, which it then could not read); as in `published`. Acquire: as
        // in `load` (the fence mode's read path fences after it).
        self.state.fetch_or(WAITING, Ordering::AcqRel)
    }
}

/// The error of a [`Subscriber`]'s wait once its container is gone and the subscriber has
/// seen its last version: the container was dropped, turned into an [`OptionContainer`](crate::OptionContainer) or
/// the other way, or given up with `into_inner`. [`Subscriber::acquire`] returns it only
/// while an owned subscriber's container is unreachable and has not handed its last
/// version over yet (see [`Subscriber`]).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use poolswap::{Closed, Container, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let c = Arc::new(Container::from_value(&pool, 1));
/// let mut sub = c.subscribe_owned();
/// drop(c);
/// assert_eq!(*sub.acquire().unwrap(), 1); // the last version stays readable
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

/// The containers a [`Subscriber`] watches: [`Container<T>`](crate::Container) and [`OptionContainer<T>`](crate::OptionContainer)
/// (each a [`ContainerAny<T, F>`](ContainerAny)), for code generic over both (`fn f<C: Watched>(sub: &Subscriber<'_, C>)`). Sealed: no
/// other type implements it.
///
/// # Examples
///
/// ```
/// use poolswap::{Container, OptionContainer, Pool, Subscriber, Watched};
///
/// fn news<C: Watched>(sub: &Subscriber<'_, C>) -> bool {
///     sub.has_changed().unwrap_or(false)
/// }
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let (c, o) = (Container::from_value(&pool, 1), OptionContainer::empty(&pool));
/// let (sub, option_sub) = (c.subscribe(), o.subscribe());
/// o.update(pool.adopt(2));
/// assert!(!news(&sub) && news(&option_sub));
/// ```
pub trait Watched: sealed::Sealed {
    /// The object type `T` of the container's versions.
    type Object;
}

impl<T, F: Flavour> Watched for ContainerAny<T, F> {
    type Object = T;
}

/// Keeps [`Watched`] to this crate's containers.
mod sealed {
    /// Implemented by the containers only; not nameable outside the crate.
    pub trait Sealed {}

    impl<T, F: super::Flavour> Sealed for super::ContainerAny<T, F> {}
}

/// How a subscriber reaches its container.
enum Handle<'a, C> {
    /// From `subscribe_owned`: does not keep the container alive.
    Owned(Weak<C>),
    /// From `subscribe`: the container outlives the subscriber.
    Borrowed(&'a C),
}

impl<C> Clone for Handle<'_, C> {
    fn clone(&self) -> Self {
        match self {
            Handle::Owned(weak) => Handle::Owned(Weak::clone(weak)),
            Handle::Borrowed(container) => Handle::Borrowed(container),
        }
    }
}

impl<C> Handle<'_, C> {
    /// `read` of the container, or `None` if it is unreachable (an owned handle's `Arc` is
    /// gone).
    #[inline]
    fn read<R>(&self, read: impl FnOnce(&C) -> R) -> Option<R> {
        match self {
            Handle::Owned(weak) => weak.upgrade().map(|container| read(&container)),
            Handle::Borrowed(container) => Some(read(container)),
        }
    }
}

/// A reader-side handle on a container that remembers the last version it saw and can wait
/// for the next one: `tokio::sync::watch::Receiver`'s role, for a [`Container`](crate::Container) or an
/// [`OptionContainer`](crate::OptionContainer) (`C`), from their `subscribe` (borrowing the container, for one in a
/// `static` or shared by reference: `'a` is the borrow) or `subscribe_owned` (on an `Arc`,
/// without keeping it alive: `'a` is `'static`).
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
/// A change may be reported for a version that the subscriber already read, if its
/// `acquire` raced with the update (a spurious change, at most once per race); a
/// publication is never missed.
///
/// # The container's end
///
/// When the container is dropped (its last `Arc`, for an owned subscriber), given up with
/// `into_inner` or turned into the other flavour, it hands its last version to its
/// subscribers, as `watch::Sender`'s drop leaves its last value to the receivers:
///
/// - [`acquire`](Subscriber::acquire) returns that version from then on;
/// - a subscriber that had not seen it gets it as one more change (its next wait returns
///   `Ok`), then every wait returns [`Closed`], as does
///   [`has_changed`](Subscriber::has_changed); a subscriber that had seen it gets
///   [`Closed`] at once (a wait asleep wakes).
///
/// The subscribers keep that one version (a counted guard) until the last of them goes,
/// as a [`Guard`] that outlived its container would: it then goes back to its pool at the
/// next reclamation or, if the pool has no handle left, is dropped (within about 32 ms, by
/// a background thread, if no reclamation comes first). They keep neither the container
/// nor any other version or pooled object.
///
/// An owned subscriber's `acquire` returns [`Closed`] in one case: its container's last
/// `Arc` is gone but the container has not handed its version over yet (its drop is under
/// way, or it was moved out of the `Arc` with `Arc::try_unwrap`). Its waits then wait for
/// the hand-over and return it as a change, so the loop below sees the last version
/// whenever the container goes.
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
/// let mut sub = config.subscribe_owned(); // `Subscriber<'static, _>`: for a thread
/// let watcher = thread::spawn(move || {
///     let mut seen = Vec::new();
///     while sub.wait_changed().is_ok() {
///         if let Ok(current) = sub.acquire() {
///             seen.push(current.as_str().to_owned());
///         }
///     }
///     seen
/// });
/// let mut next = config.get_new();
/// next.push_str("v2");
/// config.update(next);
/// drop(config); // the watcher reads "v2", then its wait returns `Closed`
/// assert_eq!(watcher.join().unwrap().last().map(String::as_str), Some("v2"));
/// ```
///
/// A container in a `static`, or shared by reference, lends its subscribers a borrow:
///
/// ```
/// use std::sync::LazyLock;
/// use std::thread;
/// use poolswap::{Container, Pool};
///
/// static LIMIT: LazyLock<Container<u32>> =
///     LazyLock::new(|| Container::from_value(&Pool::new(|| 0, |n| *n = 0), 10));
///
/// let mut sub = LIMIT.subscribe(); // `Subscriber<'static, Container<u32>>`
/// thread::scope(|s| {
///     s.spawn(|| LIMIT.update(LIMIT.pool().adopt(20)));
///     // Returns at once if the update came first.
///     while *sub.acquire().unwrap() != 20 {
///         sub.wait_changed().unwrap();
///     }
/// });
/// ```
///
/// # Costs
///
/// - `subscribe`: one atomic increment (the signal's `Arc`) and a compare-and-swap of the
///   container's current version that stores the value it read; the first subscriber of a
///   container allocates its signal (one allocation, a compare-and-swap).
///   `subscribe_owned`: one atomic increment more (the `Weak`).
/// - A publication: with no signal (nobody ever subscribed), one load. With one and no
///   waiter asleep, one atomic read-modify-write. With waiters asleep, one more, a lock
///   and unlock, and a wake-up of each (the condition variable's `notify_all`; for tasks,
///   one lock of the wakers' list, taken whole, and each waker's `wake` after the unlock).
/// - [`has_changed`](Subscriber::has_changed): one load.
///   [`acquire`](Subscriber::acquire): one load and the container's `acquire`; for an
///   owned subscriber, the `Weak`'s upgrade and drop too (two atomic read-modify-writes on
///   the `Arc`'s count, shared with the other subscribers). Once the container is gone:
///   one load, a lock and an atomic increment (a counted guard).
/// - A wait that finds a change: one load. One that sleeps: a read-modify-write to
///   register, and a lock (blocking), or a lock of the wakers' list and a clone of the
///   task's waker (async; an allocation only when the list grows past its largest size).
///   A woken task takes no lock; a future dropped while registered takes one.
///
/// # Send and Sync
///
/// `Send` and `Sync` when the container is (for `Container<T>`: `T: Send + Sync`), like
/// the `Weak` or the reference it holds and the guard on the last version it may share;
/// the rest of the signal is `Send + Sync`. A `Subscriber` is one reader's position: waits
/// take `&mut self`. [`Clone`] it for another reader, which starts with the same seen
/// version.
pub struct Subscriber<'a, C: Watched> {
    /// The container.
    container: Handle<'a, C>,
    /// The container's signal.
    signal: sync::Arc<Signal<C::Object>>,
    /// The publication count of the last version marked seen.
    seen: u64,
    /// An `acquire` found an owned handle's container unreachable before its close: until
    /// the close, waits wait for it rather than for a count (module docs, "The final
    /// version").
    gone: bool,
}

impl<C: Watched> Clone for Subscriber<'_, C> {
    fn clone(&self) -> Self {
        Subscriber {
            container: self.container.clone(),
            signal: self.signal.clone(),
            seen: self.seen,
            gone: self.gone,
        }
    }
}

impl<C: Watched> fmt::Debug for Subscriber<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.signal.load();
        f.debug_struct("Subscriber")
            .field(
                "has_changed",
                &matches!(news(self.seen, self.gone, state), Some(Ok(()))),
            )
            .field("closed", &(state & CLOSED != 0))
            .finish_non_exhaustive()
    }
}

/// What a wait would find in `state`: `Some(Ok)` a change, `Some(Err)` the container gone
/// with its last version seen, `None` neither. `gone`: see `Subscriber::gone`.
#[inline]
fn news(seen: u64, gone: bool, state: u64) -> Option<Result<(), Closed>> {
    let closed = state & CLOSED != 0;
    if gone {
        // Only the close has news for this subscriber, and its last version is news even at
        // the count marked seen, which a wait may have marked before the failed acquire
        // (module docs, "The final version").
        closed.then_some(Ok(()))
    } else if count(state) != seen {
        Some(Ok(()))
    } else if closed {
        Some(Err(Closed))
    } else {
        None
    }
}

/// [`news`], marking a change seen.
#[inline]
fn check(seen: &mut u64, gone: &mut bool, state: u64) -> Option<Result<(), Closed>> {
    let found = news(*seen, *gone, state)?;
    *seen = count(state);
    *gone = false;
    Some(found)
}

impl<'a, C: Watched> Subscriber<'a, C> {
    fn new(container: Handle<'a, C>, (signal, seen): (sync::Arc<Signal<C::Object>>, u64)) -> Self {
        Subscriber {
            container,
            signal,
            seen,
            gone: false,
        }
    }

    /// Whether a version was published since the last one this subscriber marked seen,
    /// the container's last version included: whether a wait would return at once. Marks
    /// nothing. One load.
    ///
    /// # Errors
    ///
    /// [`Closed`] if the container is gone and this subscriber has seen its last version.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let mut sub = c.subscribe();
    /// assert_eq!(sub.has_changed(), Ok(false));
    /// c.update(pool.adopt(2));
    /// assert_eq!(sub.has_changed(), Ok(true));
    /// assert_eq!(*sub.acquire().unwrap(), 2); // marks it seen
    /// assert_eq!(sub.has_changed(), Ok(false));
    /// ```
    pub fn has_changed(&self) -> Result<bool, Closed> {
        news(self.seen, self.gone, self.signal.load())
            .map_or(Ok(false), |found| found.map(|()| true))
    }

    /// Marks the latest version seen without reading it, as if it had been acquired: the
    /// next wait waits for a version published after this call. One load.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let mut sub = c.subscribe();
    /// c.update(pool.adopt(2));
    /// sub.mark_seen();
    /// assert_eq!(sub.has_changed(), Ok(false));
    /// ```
    pub fn mark_seen(&mut self) {
        self.seen = count(self.signal.load());
    }

    /// Blocks the thread until a version is published that this subscriber has not marked
    /// seen, and marks it seen; returns at once if one already was (the container's last
    /// version included, once it is gone). Call [`acquire`](Subscriber::acquire) to read
    /// it. Spurious wake-ups are handled here.
    ///
    /// # Errors
    ///
    /// [`Closed`] if the container is gone and this subscriber has seen its last version
    /// (a wait asleep then wakes).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let mut sub = c.subscribe();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| c.update(pool.adopt(2)));
    ///     sub.wait_changed().unwrap();
    ///     assert_eq!(*sub.acquire().unwrap(), 2);
    /// });
    /// ```
    pub fn wait_changed(&mut self) -> Result<(), Closed> {
        if let Some(found) = check(&mut self.seen, &mut self.gone, self.signal.load()) {
            return found;
        }
        let signal = &*self.signal;
        let mut locked = signal.lock.lock();
        loop {
            // Under the lock, which a publisher takes before it notifies (module docs).
            if let Some(found) = check(&mut self.seen, &mut self.gone, signal.register()) {
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
    /// [`Closed`] if the container is gone and this subscriber has seen its last version.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let mut sub = c.subscribe();
    /// assert_eq!(sub.wait_changed_timeout(Duration::from_millis(1)), Ok(false));
    /// c.update(pool.adopt(2));
    /// assert_eq!(sub.wait_changed_timeout(Duration::from_millis(1)), Ok(true));
    /// ```
    pub fn wait_changed_timeout(&mut self, timeout: Duration) -> Result<bool, Closed> {
        if let Some(found) = check(&mut self.seen, &mut self.gone, self.signal.load()) {
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
            if let Some(found) = check(&mut self.seen, &mut self.gone, signal.register()) {
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
    /// already was (the container's last version included, once it is gone). Needs the
    /// `async` feature; works under any executor: it needs no timer and no reactor. For a
    /// deadline, wrap it in the runtime's timeout (e.g.
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
    /// [`Closed`] if the container is gone and this subscriber has seen its last version
    /// (a pending future then wakes).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let mut sub = c.subscribe();
    /// futures_lite::future::block_on(async {
    ///     let ((), changed) = futures_lite::future::zip(
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
            gone: &mut self.gone,
            slot: None,
        }
        .await
    }

    /// The version to hand out: `read` of the container, or its last version once it is
    /// gone (`None` for an `OptionContainer` closed empty); marks it seen. The count is read
    /// before the acquire (module docs, "Synchronization").
    #[inline]
    fn read(
        &mut self,
        read: impl FnOnce(&C) -> Option<Guard<C::Object>>,
    ) -> Result<Option<Guard<C::Object>>, Closed> {
        let state = self.signal.load();
        let guard = if state & CLOSED == 0 {
            let Some(guard) = self.container.read(read) else {
                // The container's `Arc` is gone, its close not here yet.
                self.gone = true;
                return Err(Closed);
            };
            guard
        } else {
            self.signal.last()
        };
        self.seen = count(state);
        self.gone = false;
        Ok(guard)
    }
}

/// The future of [`Subscriber::changed`]: registers its task's waker, then sets `WAITING`
/// and looks (module docs); unregisters when dropped.
#[cfg(all(feature = "async", not(loom)))]
struct Changed<'a, T> {
    signal: &'a Signal<T>,
    seen: &'a mut u64,
    gone: &'a mut bool,
    /// Its registration in the signal's wakers, once it has one.
    slot: Option<Slot>,
}

#[cfg(all(feature = "async", not(loom)))]
impl<T> Future for Changed<'_, T> {
    type Output = Result<(), Closed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(found) = check(this.seen, this.gone, this.signal.load()) {
            return Poll::Ready(found);
        }
        this.signal.wakers.register(&mut this.slot, cx.waker());
        // After the registration (module docs).
        match check(this.seen, this.gone, this.signal.register()) {
            Some(found) => Poll::Ready(found),
            None => Poll::Pending,
        }
    }
}

#[cfg(all(feature = "async", not(loom)))]
impl<T> Drop for Changed<'_, T> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            self.signal.wakers.unregister(slot);
        }
    }
}

impl<T, F: Flavour> Subscriber<'_, ContainerAny<T, F>> {
    /// A guard on the current version (for an [`OptionContainer`](crate::OptionContainer), `None` while it is
    /// empty), marked seen: the container's [`acquire`](ContainerAny::acquire) plus the
    /// subscriber's bookkeeping (one load; for an owned subscriber, the `Weak`'s upgrade
    /// and drop: two atomic read-modify-writes). Once the container is gone, a guard on its
    /// last version (one load, a lock and an atomic increment; for an `OptionContainer`,
    /// `None` if it was empty then).
    ///
    /// # Errors
    ///
    /// [`Closed`] only for an owned subscriber whose container's last `Arc` is gone while
    /// the container has not handed its last version over yet (see [`Subscriber`]); the
    /// next wait returns once it has.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{Container, OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(Container::from_value(&pool, 1));
    /// let mut sub = c.subscribe_owned();
    /// assert_eq!(*sub.acquire().unwrap(), 1);
    /// c.update(pool.adopt(2));
    /// drop(c);
    /// assert_eq!(*sub.acquire().unwrap(), 2);
    ///
    /// let o = OptionContainer::empty(&pool);
    /// let mut sub = o.subscribe();
    /// assert!(sub.acquire().unwrap().is_none());
    /// o.update(pool.adopt(1));
    /// sub.wait_changed().unwrap();
    /// assert_eq!(sub.acquire().unwrap().as_deref(), Some(&1));
    /// ```
    pub fn acquire(&mut self) -> Result<F::Wrap<Guard<T>>, Closed> {
        let current = self.read(|c| c.raw.acquire())?;
        // `None` only where the flavour cannot return it: a `Container`'s signal closes
        // with a version, so this is unreachable there.
        F::wrap(current).ok_or(Closed)
    }
}

impl<T, F: Flavour> ContainerAny<T, F> {
    /// A [`Subscriber`] to this container that borrows it: a handle that remembers the
    /// last version it saw (the current one, at first) and waits for the next;
    /// `watch::Sender::subscribe`. For a container in a `static` (e.g. a `LazyLock`) or
    /// shared by reference (`thread::scope`); on an `Arc` whose subscriber must own its
    /// handle (to move it to a spawned thread), see
    /// [`subscribe_owned`](ContainerAny::subscribe_owned). See [`Subscriber`] for what it
    /// costs (the first subscriber of a container allocates its signal; a container nobody
    /// subscribed to pays one load per publication). Emptying an [`OptionContainer`](crate::OptionContainer)
    /// ([`take`](ContainerAny::take)) is a change too.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, OptionContainer, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let mut sub = c.subscribe();
    /// c.update(pool.adopt(2));
    /// sub.wait_changed().unwrap(); // returns at once: 2 was published since
    /// assert_eq!(*sub.acquire().unwrap(), 2);
    ///
    /// let o = OptionContainer::from_value(&pool, 1);
    /// let mut sub = o.subscribe();
    /// drop(o.take());
    /// assert_eq!(sub.has_changed(), Ok(true));
    /// assert!(sub.acquire().unwrap().is_none());
    /// ```
    #[must_use = "a subscriber that is dropped at once waits for nothing"]
    pub fn subscribe(&self) -> Subscriber<'_, Self> {
        Subscriber::new(Handle::Borrowed(self), self.raw.subscribe())
    }

    /// A [`Subscriber`] to this container that owns its handle, as
    /// [`subscribe`](ContainerAny::subscribe) otherwise: it holds a `Weak` on this `Arc`,
    /// so it may go to another thread and does not keep the container alive. Once the
    /// container is gone, its last version stays readable (see [`Subscriber`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::{Container, Pool};
    ///
    /// let pool = Pool::new(|| 0u32, |n| *n = 0);
    /// let c = Arc::new(Container::from_value(&pool, 1));
    /// let mut sub = c.subscribe_owned();
    /// let watcher = std::thread::spawn(move || {
    ///     while sub.wait_changed().is_ok() {}
    ///     *sub.acquire().unwrap()
    /// });
    /// c.update(pool.adopt(2));
    /// drop(c); // the watcher's wait returns the last version, then `Closed`
    /// assert_eq!(watcher.join().unwrap(), 2);
    /// ```
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    #[must_use = "a subscriber that is dropped at once waits for nothing"]
    pub fn subscribe_owned(self: &Arc<Self>) -> Subscriber<'static, Self>
    where
        T: 'static,
    {
        Subscriber::new(Handle::Owned(Arc::downgrade(self)), self.raw.subscribe())
    }
}
