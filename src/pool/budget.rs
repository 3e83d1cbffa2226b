//! The idle bound: a shared budget of idle slots, handed to threads in batches.
//!
//! `max_idle` counts every idle object, magazines included, yet the hit path must not touch
//! a shared counter. So the pool keeps a budget of idle slots and hands it out in batches,
//! as Linux's per-CPU counters do. A magazine holds one slot per object in it and the rest
//! spare, at most `MAGAZINE_SIZE + SLOT_BATCH` slots in all: a get turns an object's slot
//! into a spare one and a put the other way, so neither hit path reaches that bound or
//! touches the budget. Objects moving between a magazine and a depot carry their slots with
//! them, and so do the spare slots, the other way:
//!
//! - a thread that refills its magazine from a depot *parks* its spare slots there (with
//!   the slot of the object it hands out), under the depot's lock it holds anyway, up to
//!   `PARKED_MAX` per depot;
//! - a thread that spills into its own depot takes the slots parked there, under the same
//!   lock, up to its magazine's room; a donation to a depot (a retired version coming
//!   back) takes a parked slot first.
//!
//! Near the ceiling (fewer than `SLOTS_MAX` slots left when a magazine last reached a slow
//! path), a magazine keeps at most [`SLOT_BATCH`] spare, giving the rest back to the budget
//! in batches, and a refill gives its freed slots back instead of parking them: parked
//! slots are out of reach of other threads' puts. So a tight bound behaves as before.
//!
//! So in a handoff (one thread gets, another puts back) the slots go back the way the
//! objects came, and neither thread touches the shared counter per batch: in the
//! producer/consumer pipeline of `benches/pool.rs` (`examples/pipeline_loop.rs`, with a
//! temporary counter in each budget operation), 0.26-0.43 budget read-modify-writes per 16
//! objects (when a parked count runs dry or fills up), against 8 before (one per
//! `SLOT_BATCH` objects on each side). The budget is reached only by a put that finds no spare slot and none
//! parked in its depot ([`SLOT_BATCH`] at once), a refill that parks past `PARKED_MAX`,
//! donations to a depot with nothing parked, and flushes, trims and closes (which give
//! back what they find). So at every instant:
//!
//! ```text
//! idle objects <= slots in use
//!               = objects in magazines + spare slots + objects in depots + parked slots
//!              <= max
//! ```
//!
//! Spare and parked slots of threads that went quiet can make the pool drop an object while
//! fewer than `max` are idle: [`SLOT_BATCH`] per such thread's magazine near the ceiling;
//! further from it, at most `MAGAZINE_SIZE + SLOT_BATCH` per magazine (objects and spare
//! slots together, the same as before slots travelled back) and `PARKED_MAX` per depot.
//! `trim` and decay give the parked slots back.
//!
//! # The adaptive bound
//!
//! A pool built without [`max_idle`](crate::PoolBuilder::max_idle) has an *adaptive*
//! ceiling: `max = max(floor, demand + demand / 4)`, where `floor` is
//! [`DEFAULT_MAX_IDLE`](crate::DEFAULT_MAX_IDLE) and `demand` the most objects that were
//! live at once at a miss since the last `trim` or decay tick. A miss means that the caller
//! found nothing idle anywhere, so the objects live then are (nearly) all out: demand is
//! the working set the pool has just seen, and a pool that keeps fewer idle objects than
//! that drops returns that its next gets must rebuild (a producer thread that sends
//! batches of buffers to a consumer thread does exactly that). The quarter on top absorbs
//! the spare slots threads hold. `trim` and decay set `demand` to the objects live after
//! they drop theirs, so the ceiling follows demand down. A set `max_idle` is a fixed
//! ceiling: `demand` stays 0.
//!
//! This module knows nothing of objects or threads: it is a counter with a ceiling.

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicUsize, Ordering};

/// How many slots of the idle budget ([`PoolBuilder::max_idle`]) a thread takes at once
/// when it puts an object back and has no spare slot, and how many slots a thread's
/// magazine holds beyond [`MAGAZINE_SIZE`]: each thread that uses a pool holds at most
/// `MAGAZINE_SIZE + SLOT_BATCH` slots, one per object in its magazine, the rest spare.
///
/// [`MAGAZINE_SIZE`]: crate::MAGAZINE_SIZE
/// [`PoolBuilder::max_idle`]: crate::PoolBuilder::max_idle
pub const SLOT_BATCH: usize = if cfg!(loom) { 1 } else { 4 };

/// The pool's idle-slot budget.
pub(crate) struct IdleBudget {
    /// Slots in use. On cache lines of its own: the threads of a handoff write it once per
    /// batch, and every slow path reads the fields around it.
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

    /// The most slots that may be in use now.
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

    /// Slots in use now: a reading for statistics (and tests), possibly stale.
    pub(crate) fn in_use(&self) -> usize {
        // Relaxed: a reading, used for no synchronization.
        self.in_use.load(Ordering::Relaxed)
    }

    /// Whether fewer than `margin` slots are left under the ceiling: threads then hand
    /// slots back to the budget rather than keep them (see the module docs). A load of
    /// `in_use` and of the ceiling.
    pub(crate) fn near_ceiling(&self, margin: usize) -> bool {
        self.in_use().saturating_add(margin) > self.max()
    }

    /// Takes up to `n` slots; returns how many it got (0 when the budget is spent).
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

    /// Gives back `n` slots.
    pub(crate) fn unreserve(&self, n: usize) {
        if n > 0 {
            // Relaxed: as in `reserve`.
            let before = self.in_use.fetch_sub(n, Ordering::Relaxed);
            debug_assert!(before >= n, "gave back {n} slots of {before} in use");
        }
    }
}

/// Gives back one reserved slot if dropped: armed around user code (the factory) that runs
/// between a reservation and the object that will use it.
pub(crate) struct SlotOnUnwind<'a>(pub(crate) &'a IdleBudget);

impl SlotOnUnwind<'_> {
    /// The slot found its object: keep it reserved.
    pub(crate) fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for SlotOnUnwind<'_> {
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
        assert_eq!(budget.reserve(4), 1, "only one slot was left");
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
