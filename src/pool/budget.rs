//! The idle bound: a shared budget of *idle permits*, one per idle object, handed to
//! threads in batches.
//!
//! `max_idle` counts every idle object, magazines included, yet the hit paths must not
//! touch a shared counter. So the pool keeps a budget of permits and hands it out in
//! batches of [`PERMIT_BATCH`], as Linux's per-CPU counters (`percpu_counter`) batch their
//! updates to a shared count. A magazine holds one permit per object in it and up to
//! `PERMIT_BATCH` more spare ([`MAGAZINE_PERMITS`](super::local::MAGAZINE_PERMITS) in
//! all): a get turns its object's permit into a spare one and a put the other way, so
//! neither hit path touches the budget. Objects moving between a magazine and a depot carry
//! their permits, and spare permits travel back the way objects came:
//!
//! - a thread that refills its magazine from a depot *parks* its spare permits there (with
//!   the permit of the object it hands out), under the depot's lock it holds anyway, up to
//!   `PARKED_MAX` per depot;
//! - a thread that spills into its own depot takes the permits parked there, under the
//!   same lock; a donation to a depot (a retired version coming back) takes a parked
//!   permit first.
//!
//! So in a handoff (one thread gets, another puts back) neither thread touches the shared
//! count per batch. The budget is reached only by a put that finds no spare permit and none
//! parked ([`PERMIT_BATCH`] at once, one atomic read-modify-write), a refill that parks past
//! `PARKED_MAX`, a donation to a depot with nothing parked, and flushes, trims and closes
//! (which give back what they find). Near the ceiling (fewer than `MAGAZINE_PERMITS` left
//! at a magazine's last slow path), a magazine keeps at most `PERMIT_BATCH` spare and a
//! refill gives its freed permits back instead of parking them, so a tight bound is not
//! eaten by permits that other threads' puts cannot reach. At every instant:
//!
//! ```text
//! idle objects <= permits in use
//!               = objects in magazines + spare permits + objects in depots + parked permits
//!              <= max
//! ```
//!
//! Spare and parked permits of threads that went quiet can make the pool drop an object
//! while fewer than `max` are idle: per thread, up to `PERMIT_BATCH` near the ceiling, and
//! further from it up to `MAGAZINE_PERMITS` in its magazine and `PARKED_MAX` in its depot.
//! `trim` and decay give the parked permits back. Threads that *exited* strand none: the
//! exit gives back its spare and parked permits, and a refill from a depot whose thread
//! exited gives its freed permits back instead of parking them there, where no spill would
//! take them back.
//!
//! # The adaptive bound
//!
//! A pool built without `max_idle` has an *adaptive* ceiling:
//! `max = max(DEFAULT_MAX_IDLE, demand + demand / 4)`, where `demand` is the most objects
//! that were live at once at a miss since the last `trim` or decay tick. A miss means the
//! caller found nothing idle anywhere, so the objects live then are (nearly) all out: demand
//! is the working set just seen, and a bound below it would drop returns that the next gets
//! must rebuild (a producer thread sending batches of buffers to a consumer thread does
//! exactly that). The quarter on top absorbs the spare permits threads hold. `trim` and
//! decay set `demand` to the objects live after they drop theirs, so the ceiling follows
//! demand down. A set `max_idle` is a fixed ceiling.
//!
//! This module knows nothing of objects or threads: it is a counter with a ceiling.

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicUsize, Ordering};

/// The floor of the adaptive idle bound, and so the most a pool built without
/// `PoolBuilder::max_idle` keeps idle until demand raises the bound (see the module docs).
/// Sized for small objects shared by many threads (each thread's magazine may hold 16).
pub(crate) const DEFAULT_MAX_IDLE: usize = 256;

/// How many idle permits a thread takes from the budget at once when it puts an object back
/// and has no spare permit, and how many spare permits a magazine may hold beyond one per
/// object in it.
pub(crate) const PERMIT_BATCH: usize = if cfg!(loom) { 1 } else { 4 };

/// A pool's budget of idle permits. `Sync`: every field is atomic or immutable.
pub(crate) struct IdleBudget {
    /// Permits in use. On cache lines of its own: the threads of a handoff write it once
    /// per batch, and every slow path reads the fields around it.
    in_use: CachePadded<AtomicUsize>,
    /// The fixed ceiling (`max_idle` set), or the floor of the adaptive one.
    floor: usize,
    /// Whether the ceiling adapts to `demand` (see the module docs).
    adaptive: bool,
    /// Adaptive ceilings only: the most objects live at once at a miss since the last trim
    /// or decay tick. Raised on misses, set by trim and decay; read by `reserve`, a slow
    /// path. Not on `in_use`'s cache lines: it changes rarely and is read often.
    demand: AtomicUsize,
}

impl IdleBudget {
    /// A budget whose ceiling is `max`, fixed.
    pub(crate) fn new(max: usize) -> IdleBudget {
        IdleBudget {
            in_use: CachePadded::new(AtomicUsize::new(0)),
            floor: max,
            adaptive: false,
            demand: AtomicUsize::new(0),
        }
    }

    /// A budget whose ceiling adapts to demand, never below `floor`.
    pub(crate) fn adaptive(floor: usize) -> IdleBudget {
        IdleBudget {
            adaptive: true,
            ..IdleBudget::new(floor)
        }
    }

    /// The most permits that may be in use now.
    pub(crate) fn max(&self) -> usize {
        if !self.adaptive {
            return self.floor;
        }
        // Relaxed: a bound read on slow paths; a stale value drops or keeps one batch more.
        let demand = self.demand.load(Ordering::Relaxed);
        self.floor.max(demand.saturating_add(demand / 4))
    }

    /// The fixed ceiling, or the adaptive ceiling's floor.
    pub(crate) fn floor(&self) -> usize {
        self.floor
    }

    /// Records that `live` objects were live at a miss: raises the adaptive ceiling's
    /// demand to it. Nothing for a fixed ceiling.
    pub(crate) fn note_demand(&self, live: usize) {
        // Relaxed: a bound, not a synchronization point (see `reserve`). The load first:
        // at steady state demand is already there, and a load leaves the line shared.
        if self.adaptive && live > self.demand.load(Ordering::Relaxed) {
            self.demand.fetch_max(live, Ordering::Relaxed);
        }
    }

    /// Sets the adaptive ceiling's demand to `live` (after a trim or a decay tick).
    pub(crate) fn reset_demand(&self, live: usize) {
        if self.adaptive {
            // Relaxed: as in `note_demand`.
            self.demand.store(live, Ordering::Relaxed);
        }
    }

    /// Permits in use now: a reading for statistics (and tests), possibly stale.
    pub(crate) fn in_use(&self) -> usize {
        // Relaxed: a reading, used for no synchronization.
        self.in_use.load(Ordering::Relaxed)
    }

    /// Whether fewer than `margin` permits are left under the ceiling: threads then hand
    /// permits back to the budget rather than keep them (see the module docs). A load of
    /// `in_use` and of the ceiling.
    pub(crate) fn near_ceiling(&self, margin: usize) -> bool {
        self.in_use().saturating_add(margin) > self.max()
    }

    /// Takes up to `n` permits; returns how many it got (0 when the budget is spent). A
    /// load and a compare-exchange loop: one atomic read-modify-write unless contended.
    pub(crate) fn reserve(&self, n: usize) -> usize {
        // Relaxed: a budget, not a synchronization point; nodes travel under locks or
        // through the refcount's last decrement.
        let mut used = self.in_use.load(Ordering::Relaxed);
        let max = self.max();
        loop {
            let grant = n.min(max.saturating_sub(used));
            if grant == 0 {
                return 0;
            }
            // Relaxed both ways: only the count matters; the CAS makes it exact.
            match self.in_use.compare_exchange_weak(
                used,
                used + grant,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return grant,
                Err(now) => used = now,
            }
        }
    }

    /// Gives back `n` permits: one atomic read-modify-write (none for 0).
    pub(crate) fn unreserve(&self, n: usize) {
        if n > 0 {
            // Relaxed: as in `reserve`.
            let before = self.in_use.fetch_sub(n, Ordering::Relaxed);
            debug_assert!(before >= n, "gave back {n} permits of {before} in use");
        }
    }
}

/// Gives back one reserved permit if dropped: armed around user code (the factory) that runs
/// between a reservation and the object that will use it.
pub(crate) struct PermitOnUnwind<'a>(pub(crate) &'a IdleBudget);

impl PermitOnUnwind<'_> {
    /// The permit found its object: keep it reserved.
    pub(crate) fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for PermitOnUnwind<'_> {
    fn drop(&mut self) {
        self.0.unreserve(1);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::IdleBudget;

    #[test]
    fn reserve_never_exceeds_the_ceiling() {
        let budget = IdleBudget::new(5);
        assert_eq!(budget.reserve(4), 4);
        assert_eq!(budget.reserve(4), 1, "only one permit was left");
        assert_eq!(budget.reserve(1), 0);
        budget.unreserve(2);
        assert_eq!(budget.in_use(), 3);
        assert_eq!(budget.reserve(9), 2);
    }

    #[test]
    fn an_adaptive_ceiling_follows_demand_up_and_down() {
        let budget = IdleBudget::adaptive(8);
        assert_eq!(budget.max(), 8, "the floor while demand is low");
        budget.note_demand(100);
        budget.note_demand(40); // a lower reading never lowers it
        assert_eq!(budget.max(), 125, "demand and a quarter");
        assert_eq!(budget.reserve(200), 125);
        budget.reset_demand(3);
        assert_eq!(budget.max(), 8);
        assert_eq!(budget.reserve(1), 0, "over the lowered ceiling");
        let fixed = IdleBudget::new(8);
        fixed.note_demand(100);
        assert_eq!(fixed.max(), 8, "a fixed ceiling ignores demand");
    }
}
