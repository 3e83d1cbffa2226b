//! The one place that names the concurrency primitives.
//!
//! Under `cfg(loom)` every atomic, lock, `UnsafeCell` and thread-local the crate uses comes
//! from [loom](https://docs.rs/loom), so the model checker sees every access the protocol
//! makes; otherwise they are `std`'s and `parking_lot`'s. (The same facade as
//! left-right's `src/sync.rs` and tokio's `src/loom/`.)

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering},
    Arc,
};

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering},
    Arc,
};

#[cfg(loom)]
pub(crate) use loom::sync::MutexGuard;
/// A mutual-exclusion lock with `parking_lot`'s infallible `lock` shape.
#[cfg(not(any(loom, miri)))]
pub(crate) use parking_lot::{Mutex, MutexGuard};
#[cfg(all(miri, not(loom)))]
pub(crate) use std::sync::MutexGuard;

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

/// A condition variable for the facade's [`Mutex`], with `std`'s by-value `wait` shape
/// (which loom's has too) and no poisoning: `parking_lot`'s normally, `std`'s under Miri
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

    /// Unlocks `guard`'s mutex, waits for a notification (or a spurious wake-up), and locks
    /// it again.
    #[cfg(not(any(loom, miri)))]
    pub(crate) fn wait<'a, T>(&self, mut guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.0.wait(&mut guard);
        guard
    }

    /// Unlocks `guard`'s mutex, waits for a notification (or a spurious wake-up), and locks
    /// it again.
    #[cfg(all(miri, not(loom)))]
    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        // As in `Mutex::lock`: no critical section runs user code.
        self.0
            .wait(guard)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Unlocks `guard`'s mutex, waits for a notification (or a spurious wake-up), and locks
    /// it again.
    #[cfg(loom)]
    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        // As in `Mutex::lock`.
        self.0.wait(guard).unwrap()
    }

    /// Wakes one waiting thread, if any.
    pub(crate) fn notify_one(&self) {
        self.0.notify_one();
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
