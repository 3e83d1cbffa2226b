//! What the loom models share (`tests/loom.rs`, `tests/loom_pool.rs`): pooled integers
//! whose makes, resets and drops are counted, pools and containers of them, integers whose
//! reads loom tracks, and a model runner with a lower preemption bound.
//!
//! Include it with `#[path = "support/loom_objects.rs"] mod objects;`. The counters use
//! std's atomics and `Arc`, not loom's: loom then has no extra operations of the test's to
//! interleave, only the crate's. Each execution makes its own, and loom runs one thread at
//! a time.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use poolswap::{Container, Pool};

/// Runs a model with at most `bound` preemptions (or fewer, if `LOOM_MAX_PREEMPTIONS` says
/// so), for models whose three threads would take too long at the CI's bound.
pub fn bounded(bound: usize, f: impl Fn() + Send + Sync + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(bound, |b| b.min(bound)));
    builder.check(f);
}

/// A pooled integer whose drops are counted.
pub struct Obj {
    pub value: usize,
    pub counts: Arc<Counts>,
}

impl Drop for Obj {
    fn drop(&mut self) {
        self.counts.dropped.fetch_add(1, SeqCst);
    }
}

#[derive(Default)]
pub struct Counts {
    pub made: AtomicUsize,
    pub resets: AtomicUsize,
    pub dropped: AtomicUsize,
}

impl Counts {
    /// Reclaims once more ([`poolswap::reclaim`]), then checks that every object made was
    /// dropped exactly once; call once every handle, guard and `Pooled` is gone. The
    /// reclamation is for a version whose last guard was dropped after the last
    /// container's drop reclaimed: guards never reclaim.
    pub fn assert_all_dropped(&self) {
        poolswap::reclaim();
        self.assert_all_dropped_unaided();
    }

    /// As [`assert_all_dropped`](Self::assert_all_dropped), without a reclamation of its
    /// own: for models whose own writer-side calls must have returned every version.
    pub fn assert_all_dropped_unaided(&self) {
        assert_eq!(
            self.dropped.load(SeqCst),
            self.made.load(SeqCst),
            "objects leaked"
        );
    }
}

/// A factory of `Obj`s that counts them in `counts`.
pub fn counted_objects(counts: &Arc<Counts>) -> impl Fn() -> Obj + Send + Sync + 'static {
    let c = counts.clone();
    move || {
        c.made.fetch_add(1, SeqCst);
        Obj {
            value: 0,
            counts: c.clone(),
        }
    }
}

/// A pool of `Obj` whose reset zeroes the value, and its counters.
pub fn counting_pool() -> (Pool<Obj>, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let pool = Pool::builder(counted_objects(&counts), |o: &mut Obj| {
        o.value = 0;
        o.counts.resets.fetch_add(1, SeqCst);
        true
    })
    .max_idle(8)
    .build();
    (pool, counts)
}

/// Takes an object, checks that it was reset, and stores `v` in it.
pub fn take_reset(pool: &Pool<Obj>, v: usize) -> poolswap::Pooled<'_, Obj> {
    let mut mine = pool.get();
    assert_eq!(mine.value, 0, "handed out without a reset");
    mine.value = v;
    mine
}

/// A container whose first version has the value `v`.
pub fn first_version(pool: &Pool<Obj>, v: usize) -> Container<Obj> {
    Container::new(pool, take_reset(pool, v))
}

/// A version published with the value `v`.
pub fn publish(c: &Container<Obj>, v: usize) {
    c.update(take_reset(c.pool(), v));
}

/// A pooled integer that loom tracks: its value lives in a `loom::cell::UnsafeCell`, so a
/// read through a guard that does not happen-before the pool's reset (a write) is a race
/// that loom reports, wherever the guard's reference to the object was taken.
pub struct Tracked(loom::cell::UnsafeCell<usize>);

// SAFETY: shared access (guards, on any thread) only reads; writes take `&mut self` (the
// pool's reset, a getter's refill), which the pool and container give to one owner at a
// time. Loom checks that every read happens-before the next write.
unsafe impl Sync for Tracked {}

impl Tracked {
    /// The value; a read loom tracks.
    pub fn get(&self) -> usize {
        // SAFETY: a shared read; see the `Sync` impl.
        self.0.with(|p| unsafe { *p })
    }

    /// Stores `v`; a write loom tracks.
    pub fn set(&mut self, v: usize) {
        // SAFETY: `&mut self` is the only reference to the object.
        self.0.with_mut(|p| unsafe { *p = v })
    }
}

/// A pool of `Tracked` whose reset stores 0.
pub fn tracked_pool() -> Pool<Tracked> {
    Pool::new(|| Tracked(loom::cell::UnsafeCell::new(0)), |t| t.set(0))
}

/// Takes a `Tracked`, checks that it was reset, and stores `v` in it.
pub fn take_tracked(pool: &Pool<Tracked>, v: usize) -> poolswap::Pooled<'_, Tracked> {
    let mut mine = pool.get();
    assert_eq!(mine.get(), 0, "handed out without a reset");
    mine.set(v);
    mine
}
