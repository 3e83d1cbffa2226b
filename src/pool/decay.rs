//! Decay without a caller: a pool built with [`PoolBuilder::decay`] runs Go's two-generation
//! victim decay (what [`Pool::trim`] does) by itself, once per period, from its own slow
//! paths.
//!
//! # When a tick runs
//!
//! Time is cut into periods on a fixed grid: period `k` is `[k * period, (k + 1) * period)`
//! on the pool's clock. A *tick* runs when an operation reaches one of the pool's slow paths
//! in a period later than the last tick's:
//!
//! - a `get` that finds the calling thread's magazine empty (it refills from a depot, steals,
//!   or runs the factory);
//! - a return that finds the magazine full (it spills half of it to the depot) or that has
//!   no spare budget slot;
//! - one `get` in [`POLL_EVERY`] hits on each thread, so that a thread that only ever hits
//!   its magazine still drives decay.
//!
//! The hit path itself reads no clock: it counts its hits (as it did before) and tests the
//! count's low bits. A tick one period after the last drops the victims (objects idle since
//! the tick before) and demotes the rest, as `trim` does; a tick two or more periods after
//! the last (the pool was quiet for a whole period) drops every idle object it reaches, down
//! to `min_idle`: none of them was taken during the last full period. So objects put back
//! at time `t` are gone after the first slow-path operation at or after `t + 2 * period`.
//!
//! A tick reaches the calling thread's magazine and every depot, and the magazines of other
//! live threads as `trim` does: with `membarrier`, those not in the middle of an operation;
//! in `Fence` mode, none (at most [`MAGAZINE_SIZE`](crate::MAGAZINE_SIZE) objects each).
//!
//! # A pool nobody touches
//!
//! No operation, no tick: a pool that nobody uses keeps what it holds. For that case
//! [`Pool::spawn_trimmer`] starts a thread that calls `trim` every period, or call
//! `trim` from a timer of your own.
//!
//! # Synchronization
//!
//! `last` (the index of the last tick's period) is claimed with a compare-exchange, so one
//! thread runs each tick; it is Relaxed: the tick's work moves nodes under depot locks, and
//! a stale reading only makes a thread skip a tick another thread runs, or lose the race
//! for it.
//!
//! [`PoolBuilder::decay`]: crate::PoolBuilder::decay
//! [`Pool::trim`]: crate::Pool::trim
//! [`Pool::spawn_trimmer`]: crate::Pool::spawn_trimmer

use std::fmt;
#[cfg(not(loom))]
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[cfg(not(loom))]
use super::shared::{Discard, Shared};
use super::Pool;
#[cfg(not(loom))]
use crate::sync::Arc;
use crate::sync::{AtomicU64, Ordering};

/// One `get` in this many hits on a thread looks at the clock (see the module docs): a
/// power of two, tested with a mask on the thread's hit count.
pub(crate) const POLL_EVERY: u64 = 256;

/// The clock a pool's decay reads: nanoseconds since some fixed start.
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
    /// race to run the tick, says which tick to run.
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

impl<T> Pool<T> {
    /// The period of decay, if the pool decays by itself; see [`PoolBuilder::decay`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// assert_eq!(pool.decay_period(), None);
    /// let pool = Pool::builder(|| 0u8, |n| *n = 0).decay(Duration::from_secs(5)).build();
    /// assert_eq!(pool.decay_period(), Some(Duration::from_secs(5)));
    /// ```
    ///
    /// [`PoolBuilder::decay`]: crate::PoolBuilder::decay
    #[must_use]
    pub fn decay_period(&self) -> Option<Duration> {
        self.shared.decay.as_ref().map(Decay::period)
    }
}

#[cfg(not(loom))]
impl<T: Send + 'static> Pool<T> {
    /// Starts a thread, named `poolswap-trim`, that calls [`trim`](Pool::trim) on this pool
    /// every `period`, so that a pool that nobody uses still shrinks: an object left idle is
    /// dropped within two periods (down to [`min_idle`](crate::PoolBuilder::min_idle)).
    ///
    /// The thread holds no handle: it does not keep the pool open, and it exits within a
    /// period of the pool's last handle being dropped (it sleeps, then finds the pool
    /// gone). It reaches the magazines of live threads as `trim` does. Trims are counted
    /// in [`PoolStats::trimmed`](crate::PoolStats::trimmed). Join the handle to wait for it
    /// after dropping the pool, or drop the handle to let it go.
    ///
    /// # Costs
    ///
    /// One thread with a small stack (64 KiB), asleep but for one `trim` per period (each
    /// depot's lock, the dropped objects' destructors).
    ///
    /// # Errors
    ///
    /// If the thread cannot be spawned (see `std::thread::Builder::spawn`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::new(|| vec![0u8; 4096], |v| v.fill(0));
    /// let trimmer = pool.spawn_trimmer(Duration::from_millis(10)).unwrap();
    /// drop(pool);
    /// trimmer.join().unwrap(); // exits at its next wake-up: the pool is gone
    /// ```
    pub fn spawn_trimmer(&self, period: Duration) -> std::io::Result<JoinHandle<()>> {
        let pool = Arc::downgrade(&self.shared);
        std::thread::Builder::new()
            .name("poolswap-trim".into())
            .stack_size(64 * 1024)
            .spawn(move || loop {
                std::thread::sleep(period);
                let Some(shared) = pool.upgrade() else {
                    return;
                };
                if shared.is_closed() {
                    return;
                }
                // Not `own`: this thread has no share of the pool, and takes none.
                Shared::trim(&shared, false, Discard::Trim);
            })
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
