//! The one place that names the concurrency primitives.
//!
//! Under `cfg(loom)` every atomic, lock, `UnsafeCell` and thread-local the crate uses comes
//! from [loom](https://docs.rs/loom), so the model checker sees every access the protocol
//! makes; otherwise they are `std`'s and `parking_lot`'s. (The same facade as
//! left-right's `src/sync.rs` and tokio's `src/loom/`.)

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{fence, AtomicPtr, AtomicUsize, Ordering},
    Arc,
};

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{fence, AtomicPtr, AtomicUsize, Ordering},
    Arc,
};

/// A mutual-exclusion lock with `parking_lot`'s infallible `lock`/`try_lock` shape.
#[cfg(not(loom))]
pub(crate) use parking_lot::Mutex;

#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Mutex(loom::sync::Mutex::new(value))
    }
    pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        // A poisoned lock means a model thread panicked: the model has failed already.
        self.0.lock().unwrap()
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

/// A small number naming the calling thread, used to pick its home shard of the free list.
///
/// Handed out in order of first use; it is a placement hint, never part of a
/// synchronization argument, so its counter is `Relaxed`.
pub(crate) fn thread_index() -> usize {
    #[cfg(not(loom))]
    {
        use std::cell::Cell;
        use std::sync::atomic::AtomicUsize as StdAtomic;
        static NEXT: StdAtomic = StdAtomic::new(0);
        std::thread_local! {
            static INDEX: Cell<usize> = const { Cell::new(usize::MAX) };
        }
        INDEX
            .try_with(|index| {
                if index.get() == usize::MAX {
                    // Relaxed: a unique-ish number is all that is needed.
                    index.set(NEXT.fetch_add(1, Ordering::Relaxed));
                }
                index.get()
            })
            // During thread-local destruction: any shard is correct, just less local.
            .unwrap_or(0)
    }
    #[cfg(loom)]
    {
        loom::lazy_static! {
            static ref NEXT: AtomicUsize = AtomicUsize::new(0);
        }
        loom::thread_local! {
            static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed);
        }
        INDEX.with(|index| *index)
    }
}

/// How many shards the free list has: enough that threads rarely share one.
pub(crate) fn shard_count() -> usize {
    #[cfg(not(loom))]
    {
        std::thread::available_parallelism()
            .map_or(4, |n| n.get())
            .clamp(2, 64)
            .next_power_of_two()
    }
    // Two shards are enough for a model to have a thread that must steal.
    #[cfg(loom)]
    {
        2
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
