//! The one place that names the concurrency primitives (the exceptions carry an `#[allow]`
//! that says why).
//!
//! Under `cfg(loom)` every atomic, lock and `UnsafeCell` the crate uses comes from
//! [loom](https://docs.rs/loom), so the model checker sees every access the protocol makes;
//! otherwise they are `std`'s and `parking_lot`'s. (The same facade as left-right's
//! `src/sync.rs` and tokio's `src/loom/`.) Thread-locals are not here: each of the few
//! (`reclaim/hazard.rs`, `reclaim/registry.rs`) is a `std::thread_local!` beside its
//! `loom::thread_local!` twin, or std-only with its reason.
//!
//! `clippy.toml` makes the rule a lint (`disallowed_types`, `disallowed_methods`). The lint
//! goes by the item a path resolves to, not by its spelling, so a re-export of
//! `std::sync::Arc` would be flagged wherever the crate names it: the `std` side is
//! therefore a set of thin newtypes (`#[repr(transparent)]`, `Deref` to the real type,
//! `#[inline(always)]`), as tokio's `src/loom/std/atomic_*.rs` are; they compile to the same
//! code. Each has what the crate uses of its loom counterpart: `new` and, through `Deref`,
//! the real type's methods. This module is exempt (the `#[allow]` on `mod sync` in
//! `lib.rs`), and so is `reclaim/barrier.rs` for the fences; the few other places that name a
//! primitive directly say why at an `#[allow(clippy::disallowed_types)]`.
//!
//! Lock guards are not listed in `clippy.toml` (a guard comes only from a lock), so
//! `MutexGuard` is a plain re-export.

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering},
    Arc,
};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::Ordering;

#[cfg(not(loom))]
pub(crate) use std_types::{Arc, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};

/// The `std` side of the facade: newtypes that the lint does not see as `std`'s types.
#[cfg(not(loom))]
mod std_types {
    use std::fmt;
    use std::ops::Deref;

    macro_rules! atomic {
        ($(#[$doc:meta])* $name:ident, $value:ty) => {
            $(#[$doc])*
            #[repr(transparent)]
            #[derive(Default)]
            pub(crate) struct $name(std::sync::atomic::$name);

            impl $name {
                #[inline(always)]
                pub(crate) const fn new(value: $value) -> Self {
                    $name(std::sync::atomic::$name::new(value))
                }
            }

            impl Deref for $name {
                type Target = std::sync::atomic::$name;
                #[inline(always)]
                fn deref(&self) -> &Self::Target {
                    &self.0
                }
            }

            impl fmt::Debug for $name {
                fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    fmt::Debug::fmt(&self.0, f)
                }
            }
        };
    }

    atomic!(
        /// `std`'s `AtomicBool`.
        AtomicBool,
        bool
    );
    atomic!(
        /// `std`'s `AtomicU64`.
        AtomicU64,
        u64
    );
    atomic!(
        /// `std`'s `AtomicUsize`.
        AtomicUsize,
        usize
    );

    /// `std`'s `AtomicPtr`.
    #[repr(transparent)]
    pub(crate) struct AtomicPtr<T>(std::sync::atomic::AtomicPtr<T>);

    impl<T> AtomicPtr<T> {
        #[inline(always)]
        pub(crate) const fn new(ptr: *mut T) -> Self {
            AtomicPtr(std::sync::atomic::AtomicPtr::new(ptr))
        }
    }

    impl<T> Deref for AtomicPtr<T> {
        type Target = std::sync::atomic::AtomicPtr<T>;
        #[inline(always)]
        fn deref(&self) -> &Self::Target {
            &self.0
        }
    }

    impl<T> fmt::Debug for AtomicPtr<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            fmt::Debug::fmt(&self.0, f)
        }
    }

    /// `std`'s `Arc`, with the associated functions the crate uses (loom's `Arc` has them
    /// too).
    #[repr(transparent)]
    pub(crate) struct Arc<T>(std::sync::Arc<T>);

    impl<T> Arc<T> {
        #[inline(always)]
        pub(crate) fn new(value: T) -> Self {
            Arc(std::sync::Arc::new(value))
        }

        #[inline(always)]
        pub(crate) fn ptr_eq(this: &Self, other: &Self) -> bool {
            std::sync::Arc::ptr_eq(&this.0, &other.0)
        }

        /// The pointer to the value, giving up this handle's count without dropping it.
        pub(crate) fn into_raw(this: Self) -> *const T {
            std::sync::Arc::into_raw(this.0)
        }

        /// The handle [`into_raw`](Arc::into_raw) gave up.
        ///
        /// # Safety
        ///
        /// As `std::sync::Arc::from_raw`: `ptr` came from `into_raw` of an `Arc<T>`, and
        /// the count it gave up is taken back once.
        pub(crate) unsafe fn from_raw(ptr: *const T) -> Self {
            // SAFETY: the caller's contract is std's.
            Arc(unsafe { std::sync::Arc::from_raw(ptr) })
        }

        /// Adds one to the count of the `Arc` whose [`into_raw`](Arc::into_raw) gave `ptr`.
        ///
        /// # Safety
        ///
        /// As `std::sync::Arc::increment_strong_count`: `ptr` came from `into_raw` and that
        /// `Arc`'s count is at least one for the whole call.
        pub(crate) unsafe fn increment_strong_count(ptr: *const T) {
            // SAFETY: the caller's contract is std's.
            unsafe { std::sync::Arc::increment_strong_count(ptr) }
        }

        /// A `Weak` on the same value (std only: loom's `Arc` has none).
        pub(crate) fn downgrade(this: &Self) -> Weak<T> {
            Weak(std::sync::Arc::downgrade(&this.0))
        }
    }

    /// `std`'s `Weak`, for [`Arc::downgrade`].
    pub(crate) struct Weak<T>(std::sync::Weak<T>);

    impl<T> Weak<T> {
        /// The `Arc` again, if the value is still alive.
        pub(crate) fn upgrade(&self) -> Option<Arc<T>> {
            self.0.upgrade().map(Arc)
        }
    }

    impl<T> Clone for Arc<T> {
        #[inline(always)]
        fn clone(&self) -> Self {
            Arc(std::sync::Arc::clone(&self.0))
        }
    }

    impl<T> Deref for Arc<T> {
        type Target = T;
        #[inline(always)]
        fn deref(&self) -> &T {
            &self.0
        }
    }

    impl<T: fmt::Debug> fmt::Debug for Arc<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            fmt::Debug::fmt(&self.0, f)
        }
    }
}

#[cfg(loom)]
pub(crate) use loom::sync::MutexGuard;
#[cfg(not(any(loom, miri)))]
pub(crate) use parking_lot::MutexGuard;
#[cfg(all(miri, not(loom)))]
pub(crate) use std::sync::MutexGuard;

/// A mutual-exclusion lock with `parking_lot`'s infallible `lock` shape: `parking_lot`'s.
#[cfg(not(any(loom, miri)))]
#[derive(Debug)]
pub(crate) struct Mutex<T>(parking_lot::Mutex<T>);

#[cfg(not(any(loom, miri)))]
impl<T> Mutex<T> {
    #[inline(always)]
    pub(crate) fn new(value: T) -> Self {
        Mutex(parking_lot::Mutex::new(value))
    }
    #[inline(always)]
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.0.get_mut()
    }
    #[inline(always)]
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock()
    }
}

/// Under Miri, `std`'s mutex: `parking_lot_core`'s queue lock (`word_lock.rs`) casts
/// integers to pointers, which Miri's `-Zmiri-strict-provenance` rejects whenever a thread
/// parks, so the facade keeps Miri's verdict about this crate's code.
#[cfg(all(miri, not(loom)))]
#[derive(Debug)]
pub(crate) struct Mutex<T>(std::sync::Mutex<T>);

#[cfg(all(miri, not(loom)))]
impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Mutex(std::sync::Mutex::new(value))
    }
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        // No critical section of this crate runs user code, so a poisoned lock's data is
        // still consistent: take it.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Mutex(loom::sync::Mutex::new(value))
    }
    pub(crate) fn get_mut(&mut self) -> &mut T {
        // As in `lock`.
        self.0.get_mut().unwrap()
    }
    pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        // A poisoned lock means a model thread panicked: the model has failed already.
        self.0.lock().unwrap()
    }
}

/// A condition variable for the facade's [`Mutex`], with a by-value timed `wait_for`
/// and no poisoning: `parking_lot`'s normally, `std`'s under Miri
/// (for the reason given at `Mutex`), loom's under loom.
#[derive(Debug, Default)]
pub(crate) struct Condvar(
    #[cfg(not(any(loom, miri)))] parking_lot::Condvar,
    #[cfg(all(miri, not(loom)))] std::sync::Condvar,
    #[cfg(loom)] loom::sync::Condvar,
);

impl Condvar {
    pub(crate) fn new() -> Self {
        Condvar::default()
    }

    /// Unlocks `guard`'s mutex, waits for a notification, a spurious wake-up or `timeout`,
    /// and locks it again: for a waiter that must also look again at something nobody
    /// notifies it of. Under loom, which has no clock,
    /// it unlocks, yields and locks again (a wait that always times out at once).
    #[cfg(not(any(loom, miri)))]
    pub(crate) fn wait_for<'a, T>(
        &self,
        _mutex: &'a Mutex<T>,
        mut guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
    ) -> MutexGuard<'a, T> {
        let _ = self.0.wait_for(&mut guard, timeout);
        guard
    }

    /// As above.
    #[cfg(all(miri, not(loom)))]
    pub(crate) fn wait_for<'a, T>(
        &self,
        _mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
    ) -> MutexGuard<'a, T> {
        // As in `Mutex::lock`: no critical section runs user code.
        match self.0.wait_timeout(guard, timeout) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        }
    }

    /// As above, for loom, which has no clock. A timeout under a millisecond (a poll for
    /// something nobody notifies) times out at once: unlocks, yields, locks again. A longer
    /// one (a backstop) waits for a notification only, so that a model whose waiter is
    /// never notified deadlocks, and loom reports the lost wake-up.
    #[cfg(loom)]
    pub(crate) fn wait_for<'a, T>(
        &self,
        mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
    ) -> MutexGuard<'a, T> {
        if timeout >= std::time::Duration::from_millis(1) {
            return self.0.wait(guard).unwrap();
        }
        drop(guard);
        loom::thread::yield_now();
        mutex.lock()
    }

    /// Unlocks `guard`'s mutex, waits for a notification (or a spurious wake-up), and
    /// locks it again.
    #[cfg(not(any(loom, miri)))]
    pub(crate) fn wait<'a, T>(
        &self,
        _mutex: &'a Mutex<T>,
        mut guard: MutexGuard<'a, T>,
    ) -> MutexGuard<'a, T> {
        self.0.wait(&mut guard);
        guard
    }

    /// As above.
    #[cfg(all(miri, not(loom)))]
    pub(crate) fn wait<'a, T>(
        &self,
        _mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
    ) -> MutexGuard<'a, T> {
        // As in `Mutex::lock`: no critical section runs user code.
        self.0
            .wait(guard)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// As above.
    #[cfg(loom)]
    pub(crate) fn wait<'a, T>(
        &self,
        _mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
    ) -> MutexGuard<'a, T> {
        // As in `Mutex::lock`: a poisoned lock means the model has failed already.
        self.0.wait(guard).unwrap()
    }

    /// Wakes one waiting thread, if any.
    pub(crate) fn notify_one(&self) {
        self.0.notify_one();
    }

    /// Wakes every waiting thread.
    pub(crate) fn notify_all(&self) {
        self.0.notify_all();
    }
}

/// `UnsafeCell` with loom's closure-based access, so loom can check every access.
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `UnsafeCell` with the same `with`/`with_mut` shape as loom's (tokio's
/// `src/loom/std/unsafe_cell.rs`).
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Spin-loop hint for retry loops; under loom a yield so the model explores other threads.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Lets other threads run, for a wait on another thread's bounded work (a reclamation
/// pass); under loom a yield as well.
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(loom))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// When a timed waiter gives up: an [`Instant`](std::time::Instant), or, under loom, which
/// has no clock (and whose executions must be deterministic), a deadline that passes after
/// the waiter's first wait. A model thus sees a timed getter look, wait once (a wait under a
/// millisecond yields, see [`Condvar::wait_for`]), look again and give up, in every
/// interleaving.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    #[cfg(not(loom))]
    at: std::time::Instant,
    /// Under loom: whether the deadline passes at the first look (a zero timeout).
    #[cfg(loom)]
    now: bool,
}

impl Deadline {
    /// `timeout` from now; `None` if that is past what the clock can represent (a wait
    /// without a deadline, then). One clock read (a vDSO call, no syscall, on Linux).
    pub(crate) fn after(timeout: std::time::Duration) -> Option<Deadline> {
        #[cfg(not(loom))]
        return std::time::Instant::now()
            .checked_add(timeout)
            .map(|at| Deadline { at });
        #[cfg(loom)]
        return Some(Deadline {
            now: timeout.is_zero(),
        });
    }

    /// How long a waiter that has waited `waits` times may still sleep: `None` once the
    /// deadline has passed. One clock read (none under loom).
    pub(crate) fn left(self, waits: u32) -> Option<std::time::Duration> {
        #[cfg(not(loom))]
        {
            let _ = waits;
            self.at
                .checked_duration_since(std::time::Instant::now())
                .filter(|left| !left.is_zero())
        }
        #[cfg(loom)]
        {
            (!self.now && waits == 0).then_some(std::time::Duration::from_micros(1))
        }
    }
}
