//! Idle objects: `trim` and `clear` drop them, `prefill` makes them, and a trimmer
//! thread trims a pool nobody calls.

#[cfg(not(loom))]
use std::time::Duration;

use super::shared::{Discard, PoolLocal, Shared};
use super::Pool;
#[cfg(not(loom))]
use crate::sync::Arc;

impl<T> Pool<T> {
    /// Go's two-generation victim decay, driven by the caller instead of a garbage
    /// collector: drops the objects that were idle at the previous `trim` and are still
    /// idle (down to [`min_idle`](crate::PoolBuilder::min_idle) in all), and marks the rest as
    /// the next victims.
    ///
    /// An object is thus freed by the second `trim` after it was last put back, unless a
    /// `get` took it in between; `get` takes fresh objects before victims, so a steady
    /// user keeps its working set and a `trim` causes no burst of factory calls. Call it
    /// from a timer (every few seconds, say) to let a pool shrink after a burst, or let the
    /// pool do it ([`PoolBuilder::decay`](crate::PoolBuilder::decay), [`Pool::spawn_trimmer`]). Without a set
    /// [`max_idle`](crate::PoolBuilder::max_idle), it also lowers the adaptive idle bound to the
    /// objects live after it.
    ///
    /// The calling thread's magazine is moved to its depot first. With `membarrier`
    /// (the membarrier mode, chosen when the process makes its first container), so are the magazines of other
    /// live threads that are not in the middle of a `get` or a return: one `membarrier`
    /// per call if some magazine holds an object, one lock per such magazine, and one lock
    /// on each such thread's next operation; so idle threads hide nothing. In `Fence` mode,
    /// objects in the magazines of *other* live threads (at most 16 per thread, and none for a thread in its first 32 slow-path
    /// operations on the pool, its slow start) are not reached: they move to their depots,
    /// where `trim` reaches them, when the magazine overflows or the thread exits. Runs the
    /// objects' destructors on the calling thread; takes each depot's lock once per object
    /// moved.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| vec![0u8; 1024], |v: &mut Vec<u8>| v.fill(0))
    ///     .max_idle(1000)
    ///     .build();
    /// let burst: Vec<_> = (0..100).map(|_| pool.get()).collect();
    /// drop(burst);
    /// assert_eq!(pool.stats().idle, 100);
    /// pool.trim(); // marks them
    /// pool.trim(); // frees them: idle across two trims
    /// assert_eq!(pool.stats().idle, 0);
    /// ```
    pub fn trim(&self) {
        Shared::trim(&self.shared, true, Discard::Trim);
    }

    /// Drops idle objects until at most [`min_idle`](crate::PoolBuilder::min_idle) remain, the
    /// calling thread's magazine included (other threads' magazines: see
    /// [`trim`](Pool::trim)).
    ///
    /// Runs the objects' destructors on the calling thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::builder(|| 0u8, |n| *n = 0).min_idle(1).build();
    /// let held: Vec<_> = (0..3).map(|_| pool.get()).collect();
    /// drop(held);
    /// pool.clear(); // at once, down to min_idle
    /// assert_eq!(pool.stats().idle, 1);
    /// ```
    pub fn clear(&self) {
        Shared::shed(&self.shared, true, PoolLocal::pop_any, Discard::Trim);
    }

    /// Builds objects with the factory until `n` are idle in the pool (or the idle bound, or
    /// the [`max_live`](crate::PoolBuilder::max_live) bound, is reached), so that the first `get`s,
    /// on any thread, find them. Never waits.
    ///
    /// Also the knob for a container whose writer updates often: a writer whose pool has
    /// nothing idle reclaims at each `get_new` (a heavy barrier and a scan of every
    /// thread's hazard slots, see [`reclaim`](crate::reclaim())); with `n` spare objects it
    /// reclaims about once per 8 updates (the retired list's threshold), at
    /// the price of `n` more objects in memory.
    ///
    /// Costs, per object built: the factory, one allocation (its node), one atomic
    /// read-modify-write on the idle budget, and the calling thread's depot lock.
    ///
    /// # Panics
    ///
    /// If the factory panics; the pool stays usable.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Pool;
    ///
    /// let pool = Pool::new(|| vec![0u8; 4096], |v| v.fill(0));
    /// pool.prefill(4);
    /// assert_eq!((pool.stats().idle, pool.stats().created), (4, 4));
    /// drop(pool.get()); // a hit
    /// assert_eq!(pool.stats().misses, 0);
    /// ```
    pub fn prefill(&self, n: usize) {
        let shared = &*self.shared;
        let Some(local) = Shared::local(&self.shared) else {
            return;
        };
        // Idle permits held spare in this thread's magazine would stop the loop short.
        // SAFETY: the calling thread's own `Local`.
        unsafe { local.flush(&shared.budget) };
        let missing = n.min(shared.budget.max()).saturating_sub(shared.idle_now());
        for _ in 0..missing {
            // One permit at a time, reserved before the factory runs and given back if it
            // panics, so the idle bound holds and a panic leaves every count as it was.
            let Some(node) = shared.make_idle() else {
                return;
            };
            // The permit goes with the object into the depot; this thread holds a handle, so
            // the pool is open and the depot takes it.
            match local.donate(node) {
                // A getter may wait at the live bound while the factory ran.
                Ok(()) => shared.wake(),
                Err(node) => {
                    shared.budget.unreserve(1);
                    shared.discard(node, Discard::Closed);
                }
            }
        }
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
    pub fn spawn_trimmer(&self, period: Duration) -> std::io::Result<std::thread::JoinHandle<()>> {
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
