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
    /// The most slots that may be in use: the pool's `max_idle`.
    max: usize,
}

impl IdleBudget {
    pub(crate) fn new(max: usize) -> IdleBudget {
        IdleBudget {
            in_use: CachePadded::new(AtomicUsize::new(0)),
            max,
        }
    }

    /// The most slots that may be in use.
    pub(crate) fn max(&self) -> usize {
        self.max
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
        loop {
            let grant = n.min(self.max.saturating_sub(used));
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
}
