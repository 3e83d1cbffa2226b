//! A counting global allocator shared by the tests, examples and benches.
//!
//! Include it with `#[path = "…/tests/support/counting_alloc.rs"] mod counting_alloc;` and
//! install it with `#[global_allocator] static A: counting_alloc::Counting = counting_alloc::Counting;`.
//! It forwards to the system allocator and counts, process-wide, how many allocations
//! (`alloc`, `alloc_zeroed`, `realloc`) were made and how many bytes they asked for.
//! Counting costs two relaxed `fetch_add`s per allocation.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

/// The counting allocator: install it as `#[global_allocator]`.
pub struct Counting;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is exactly `System`'s; the counters are plain relaxed statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size as u64, Relaxed);
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` came from `System` through this type.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// A reading of the counters; subtract two readings to get what happened in between.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Allocation calls (`alloc`, `alloc_zeroed`, `realloc`) so far, process-wide.
    pub allocs: u64,
    /// Bytes requested by those calls so far.
    pub bytes: u64,
}

impl Snapshot {
    /// The counters now.
    pub fn now() -> Self {
        Snapshot {
            allocs: ALLOCS.load(Relaxed),
            bytes: BYTES.load(Relaxed),
        }
    }
    /// What was allocated since `earlier`.
    pub fn since(earlier: Snapshot) -> Snapshot {
        let now = Self::now();
        Snapshot {
            allocs: now.allocs - earlier.allocs,
            bytes: now.bytes - earlier.bytes,
        }
    }
}
