//! A counting global allocator shared by the tests, examples and benches.
//!
//! Include it with `#[path = "…/tests/support/counting_alloc.rs"] mod counting_alloc;` and
//! install it with `#[global_allocator] static A: counting_alloc::Counting = counting_alloc::Counting;`.
//! It forwards to the system allocator and counts, process-wide, how many allocations
//! (`alloc`, `alloc_zeroed`, `realloc`) were made and how many bytes they asked for.
//! Counting costs two relaxed `fetch_add`s and a thread-local increment per allocation
//! ([`thread_allocs`] reads the calling thread's count).
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

std::thread_local! {
    /// Allocation calls made by this thread: for a test whose bound must not count what the
    /// test harness's own threads allocate meanwhile (spawning the next test's thread).
    /// `const`-initialised, with no destructor: reading it never allocates.
    static MINE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one allocation call of the calling thread (none while its thread-locals are
/// being destroyed).
fn count_mine() {
    let _ = MINE.try_with(|n| n.set(n.get() + 1));
}

/// Allocation calls (`alloc`, `alloc_zeroed`, `realloc`) the calling thread made so far.
pub fn thread_allocs() -> u64 {
    MINE.try_with(std::cell::Cell::get).unwrap_or(0)
}

/// The counting allocator: install it as `#[global_allocator]`.
pub struct Counting;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is exactly `System`'s; the counters are plain relaxed statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        count_mine();
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        count_mine();
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size as u64, Relaxed);
        count_mine();
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

static LIVE: AtomicU64 = AtomicU64::new(0);
/// The highest [`LIVE`] seen since the start or the last [`reset_peak_live`].
static PEAK: AtomicU64 = AtomicU64::new(0);

/// [`Counting`] that also tracks live bytes (allocated, not yet freed) and their peak: one
/// more relaxed read-modify-write per allocation and one per deallocation (plus a load, and
/// a read-modify-write when the peak rises), so the benches that need no memory figures
/// keep the cheaper [`Counting`].
pub struct CountingLive;

// SAFETY: every method forwards to `Counting` (hence `System`) with the caller's arguments
// unchanged; the extra counter is a plain relaxed statistic.
unsafe impl GlobalAlloc for CountingLive {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        live(unsafe { Counting.alloc(layout) }, layout.size(), 0)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        live(unsafe { Counting.alloc_zeroed(layout) }, layout.size(), 0)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        live(
            unsafe { Counting.realloc(ptr, layout, new_size) },
            new_size,
            layout.size(),
        )
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as u64, Relaxed);
        // SAFETY: forwarded unchanged; `ptr` came from `Counting` through this type.
        unsafe { Counting.dealloc(ptr, layout) }
    }
}

/// Counts `added - freed` live bytes if the allocation `at` succeeded, and raises the peak.
/// A `realloc` counts its new size before it frees the old one, so its peak may include
/// both, as the allocator itself may hold both while it copies.
fn live(at: *mut u8, added: usize, freed: usize) -> *mut u8 {
    if !at.is_null() {
        let now = LIVE.fetch_add(added as u64, Relaxed) + added as u64;
        // The load first: the peak rises rarely, and a load keeps the line shared.
        if now > PEAK.load(Relaxed) {
            PEAK.fetch_max(now, Relaxed);
        }
        LIVE.fetch_sub(freed as u64, Relaxed);
    }
    at
}

/// Bytes allocated through [`CountingLive`] and not yet freed, process-wide.
pub fn live_bytes() -> u64 {
    LIVE.load(Relaxed)
}

/// The most bytes live at once through [`CountingLive`] since the start or the last
/// [`reset_peak_live`], process-wide.
pub fn peak_live_bytes() -> u64 {
    PEAK.load(Relaxed).max(LIVE.load(Relaxed))
}

/// Starts a new peak from the live bytes now: [`peak_live_bytes`] then reports the peak of
/// what follows.
pub fn reset_peak_live() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

/// One test at a time: the counters are process-wide, so a test that reads them must not
/// run beside another test of its binary; every test of such a binary holds this.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Makes the calling thread wait on a `parking_lot` lock once.
///
/// `parking_lot` allocates its global parking table, and each thread's parking data, the
/// first time a thread has to wait for a lock. The pool's depot locks are rarely contended,
/// so that first time can fall anywhere in a run; these are one-time allocations of the
/// lock library, not per-update ones, so each thread pays them before a measurement.
pub fn warm_parking_lot() {
    if cfg!(miri) {
        // Under Miri the pool uses std's mutex (see src/sync.rs), and parking_lot's queue
        // lock casts integers to pointers, which `-Zmiri-strict-provenance` rejects.
        return;
    }
    let lock = parking_lot::Mutex::new(());
    let ready = parking_lot::Condvar::new();
    let mut guard = lock.lock();
    // Parks this thread for 1 µs (a timed wait always parks first).
    let _ = ready.wait_for(&mut guard, std::time::Duration::from_micros(1));
}
