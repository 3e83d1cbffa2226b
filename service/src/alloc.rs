//! A counting global allocator: what the calling thread allocated, for the bytes and
//! allocations of one reload.
//!
//! The reloader runs on a thread of its own, so its thread's counters are exactly what its
//! reloads allocated, whatever the request tasks allocate meanwhile on the runtime's
//! threads. Counting costs two thread-local additions per allocation, on every thread: the
//! same for every backend.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

std::thread_local! {
    /// Allocation calls (`alloc`, `alloc_zeroed`, `realloc`) and the bytes they asked for,
    /// made by this thread. `const`-initialised, with no destructor: counting never
    /// allocates.
    static MINE: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// Counts one allocation call of `bytes` on the calling thread (none while its
/// thread-locals are being destroyed).
fn count(bytes: usize) {
    let _ = MINE.try_with(|c| {
        let (n, b) = c.get();
        c.set((n + 1, b + bytes as u64));
    });
}

/// The counting allocator: installed as `#[global_allocator]` in `main.rs`.
#[derive(Debug)]
pub struct Counting;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is exactly `System`'s; the counters are plain thread-local
// statistics that never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` came from `System` through this type.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// What the calling thread allocated so far: (allocation calls, bytes).
pub fn thread_allocated() -> (u64, u64) {
    MINE.try_with(Cell::get).unwrap_or((0, 0))
}
