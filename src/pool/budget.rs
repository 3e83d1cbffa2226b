//! The idle bound: a shared budget of idle slots, handed to threads in batches.
//!
//! `max_idle` counts every idle object, magazines included, yet the hit path must not touch
//! a shared counter. So the pool keeps a budget of idle slots and hands it out in batches,
//! as Linux's per-CPU counters do. A magazine holds one slot per object in it plus at most
//! [`SLOT_BATCH`] spare ones; it goes to the budget only when it has no spare slot on a
//! put (reserving `SLOT_BATCH` at once), holds more than `SLOT_BATCH` spare after a get, or
//! refills (giving back all its spare slots). Objects moving between a magazine and a depot
//! carry their slots with them. So at every instant:
//!
//! ```text
//! idle objects <= slots in use = objects in magazines + spare slots + objects in depots <= max
//! ```
//!
//! Spare slots of threads that went quiet can make the pool drop an object while fewer
//! than `max` are idle: at most `SLOT_BATCH` per such thread.
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

/// How many slots of the idle budget ([`PoolBuilder::max_idle`]) a thread takes or gives
/// back at once, and the most it holds spare: each thread that uses a pool may hold up to
/// this many slots it is not using.
///
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
