//! Decay by itself: the period grid, the clock, and which thread runs each tick. What a
//! tick drops is `Shared::tick` (`shared.rs`): Go's two-generation victim cache
//! (`sync/pool.go`'s `poolCleanup`), run from the pool's own slow paths instead of the
//! garbage collector.
//!
//! Time is cut into periods on a fixed grid: period `k` is `[k * period, (k + 1) * period)`
//! on the pool's clock. A *tick* runs when an operation reaches one of the pool's slow paths
//! in a later period than the last tick's: a `get` that finds its thread's magazine empty,
//! a return that finds it full or without a spare idle permit, and one `get` in
//! [`POLL_EVERY`] hits on each thread (the hit path reads no clock; it tests its hit count's
//! low bits), so that a thread that only hits its magazine still drives decay. A tick one
//! period after the last drops the victims and demotes the rest ([`Tick::Age`], what `trim`
//! does); two or more periods after it (the pool saw no slow path for a whole period), it
//! drops every idle object it reaches, down to `min_idle` ([`Tick::Drop`]). So objects put
//! back at time `t` are gone after the first slow-path operation at or after
//! `t + 2 * period`. A pool nobody touches runs no tick: `Pool::spawn_trimmer` is for that.
//!
//! # Synchronization
//!
//! `last` (the index of the last tick's period) is claimed with a compare-exchange, so one
//! thread runs each tick. Relaxed: the tick's work moves nodes under depot locks, and a
//! stale reading only makes a thread skip a tick that another thread runs, or lose the race
//! for it.

use std::fmt;
use std::time::{Duration, Instant};

use crate::sync::{AtomicU64, Ordering};

/// One `get` in this many hits on a thread looks at the clock (see the module docs): a
/// power of two, tested with a mask on the thread's hit count.
pub(crate) const POLL_EVERY: u64 = 256;

/// The clock a pool's decay reads: the time since some fixed start, never going backwards
/// (if it does, ticks stop until it passes its highest reading again).
pub(super) type ClockFn = dyn Fn() -> Duration + Send + Sync;

/// A pool's decay: its period, its clock, and the last tick.
pub(super) struct Decay {
    /// The period in nanoseconds, at least 1.
    period: u64,
    /// The clock; `None`: monotonic time since `start`.
    clock: Option<Box<ClockFn>>,
    /// When the pool was built, for the monotonic clock.
    start: Instant,
    /// The index of the period in which the last tick ran (0 before the first).
    last: AtomicU64,
}

/// What a tick does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tick {
    /// One period since the last tick: drop victims, demote the rest (`trim`).
    Age,
    /// Two or more: drop every idle object above `min_idle`.
    Drop,
}

impl Decay {
    /// Decay every `period` (rounded up to a nanosecond), on `clock` or on monotonic time.
    pub(super) fn new(period: Duration, clock: Option<Box<ClockFn>>) -> Decay {
        let period = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX).max(1);
        let start = Instant::now();
        let decay = Decay {
            period,
            clock,
            start,
            last: AtomicU64::new(0),
        };
        let now = decay.period_now();
        // Relaxed: nobody else sees the pool yet.
        decay.last.store(now, Ordering::Relaxed);
        decay
    }

    /// The period.
    pub(super) fn period(&self) -> Duration {
        Duration::from_nanos(self.period)
    }

    /// The index of the period the clock reads now.
    fn period_now(&self) -> u64 {
        let now = match &self.clock {
            Some(clock) => clock(),
            None => self.start.elapsed(),
        };
        u64::try_from(now.as_nanos()).unwrap_or(u64::MAX) / self.period
    }

    /// Reads the clock; if a period began since the last tick and this thread wins the
    /// race to run the tick, says which tick to run. Costs a clock read (`Instant::elapsed`,
    /// or the pool's clock) and a load; a compare-exchange when a period began.
    pub(super) fn due(&self) -> Option<Tick> {
        let now = self.period_now();
        // Relaxed: see the module's synchronization section.
        let last = self.last.load(Ordering::Relaxed);
        if now <= last {
            return None;
        }
        // Relaxed both ways: the claim only picks the thread that runs the tick.
        self.last
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .ok()?;
        Some(if now - last >= 2 {
            Tick::Drop
        } else {
            Tick::Age
        })
    }
}

impl fmt::Debug for Decay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decay")
            .field("period", &self.period())
            .field("custom_clock", &self.clock.is_some())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::Arc;
    use Ordering::Relaxed;

    #[test]
    fn ticks_follow_the_grid_and_one_thread_runs_each() {
        let now = Arc::new(AtomicU64::new(5));
        let clock = Arc::clone(&now);
        let decay = Decay::new(
            Duration::from_nanos(10),
            Some(Box::new(move || Duration::from_nanos(clock.load(Relaxed)))),
        );
        assert_eq!(decay.due(), None, "same period as the build");
        now.store(10, Relaxed);
        assert_eq!(decay.due(), Some(Tick::Age));
        assert_eq!(decay.due(), None, "the period's tick ran");
        now.store(29, Relaxed);
        assert_eq!(decay.due(), Some(Tick::Age), "one period later: 10 -> 20");
        now.store(45, Relaxed);
        assert_eq!(decay.due(), Some(Tick::Drop), "two periods later: 20 -> 40");
    }
}
