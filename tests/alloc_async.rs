//! Zero allocations per awaitable wait at steady state (feature `async`).
//!
//! A task waits at the live bound until another side returns the object, over and over:
//! once the pool's waiter list exists (its first wait) and the `poolswap-reclaim` thread has
//! started (the first wait in the process), a wait (register, look, sleep, wake, look,
//! take) must not call the allocator. The future is polled by hand, pinned on the stack,
//! with a waker made once, so the count is the crate's and event-listener's alone, on the
//! thread that waits and returns (see `MEASURED`).
//!
//! Run with `cargo test --features async --test alloc_async`. This file holds a single test:
//! the allocator's counters are process-wide.
#![cfg(feature = "async")]

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use poolswap::Pool;

thread_local! {
    /// Whether this thread's allocations are counted: the measuring thread's only. The
    /// `poolswap-reclaim` thread, started by the first wait, allocates as it starts (its
    /// name, its thread-locals) at a moment nobody can observe; it does nothing per wait
    /// here (no version is retired), so leaving it out leaves out its start only.
    static MEASURED: Cell<bool> = const { Cell::new(false) };
}

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting the measuring thread's allocations.
struct CountMeasured;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// counter is a statistic, and the thread-local is const-initialized with no destructor, so
// reading it never allocates.
unsafe impl GlobalAlloc for CountMeasured {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above; `ptr` came from `System` through this type.
        unsafe { System.dealloc(ptr, layout) }
    }
}

fn count() {
    if MEASURED.try_with(Cell::get).unwrap_or(false) {
        ALLOCS.fetch_add(1, SeqCst);
    }
}

#[global_allocator]
static ALLOC: CountMeasured = CountMeasured;

#[derive(Default)]
struct Counter(AtomicUsize);

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

#[test]
fn a_wait_at_the_bound_allocates_nothing_at_steady_state() {
    let waits = if cfg!(miri) { 20 } else { 10_000 };
    let pool = Pool::builder(|| vec![0u8; 64], |v: &mut Vec<u8>| v.fill(0))
        .max_live(1)
        .build();
    let counter = Arc::new(Counter::default());
    let waker = Waker::from(counter.clone());
    let mut cx = Context::from_waker(&waker);
    let mut held = Some(pool.get());
    let mut round = || {
        let mut future = pin!(pool.get_async());
        assert!(future.as_mut().poll(&mut cx).is_pending(), "at the bound");
        let before = counter.0.load(SeqCst);
        drop(held.take()); // the return notifies the waiting future
        assert_eq!(counter.0.load(SeqCst), before + 1, "woken by the return");
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(obj) => held = Some(obj),
            Poll::Pending => panic!("the object is back"),
        }
    };
    // Warm-up: the pool's waiter list, this thread's share of the pool, the reclaiming
    // thread.
    for _ in 0..3 {
        round();
    }
    MEASURED.with(|m| m.set(true));
    for _ in 0..waits {
        round();
    }
    MEASURED.with(|m| m.set(false));
    let allocs = ALLOCS.load(SeqCst);
    assert_eq!(allocs, 0, "{allocs} allocations in {waits} waits");
    assert_eq!(pool.stats().created, 1);
}
