//! Versions held past their pool's last handle go with no call of the user's, whatever else
//! the process does meanwhile: other pools closing, retired lists that a released pool gave
//! back and a new pool took over, `reclaim()` calls and background reclaimers on other
//! threads (the orphans' thread, `src/reclaim/orphans.rs`).
//!
//! Every test takes [`serial`]: the retired lists are the process's, and a list is reused
//! only once no pool owns it.
#![cfg(not(miri))] // no orphans' thread under Miri, which reports a thread alive at exit

#[path = "support/serial.rs"]
mod serial;

use serial::serial;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use poolswap::{Container, Guard, Pool, Reclaimer};

/// How long a test waits for the drops it expects before it fails: a bound on a hang, far
/// above the contract's 100 ms so that a loaded machine does not fail it (BENCHMARKS.md has
/// the latency).
const DEADLINE: Duration = Duration::from_secs(10);

/// Objects made and dropped, over every pool of a test; a drop wakes the waiters.
#[derive(Default)]
struct Count {
    counts: Mutex<(usize, usize)>,
    dropped: Condvar,
}

impl Count {
    fn lock(&self) -> MutexGuard<'_, (usize, usize)> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until every object made so far was dropped; panics past [`DEADLINE`], saying
    /// how many are left and `what` the test did.
    fn wait_all_dropped(&self, what: &str) {
        let start = Instant::now();
        let mut counts = self.lock();
        while counts.1 < counts.0 {
            let left = DEADLINE.saturating_sub(start.elapsed());
            assert!(
                !left.is_zero(),
                "{what}: {} of {} objects dropped after {DEADLINE:?}",
                counts.1,
                counts.0
            );
            counts = self
                .dropped
                .wait_timeout(counts, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        assert_eq!(counts.1, counts.0, "{what}: an object dropped twice");
    }
}

/// A version: counts its drop.
struct Obj(Arc<Count>);

impl Obj {
    fn new(count: &Arc<Count>) -> Obj {
        count.lock().0 += 1;
        Obj(Arc::clone(count))
    }
}

impl Drop for Obj {
    fn drop(&mut self) {
        self.0.lock().1 += 1;
        self.0.dropped.notify_all();
    }
}

/// A pool of [`Obj`] counted in `count`, which keeps nothing idle past its close.
fn pool(count: &Arc<Count>) -> Pool<Obj> {
    let count = Arc::clone(count);
    Pool::new(move || Obj::new(&count), |_: &mut Obj| {})
}

/// A pool with one container, closed (container and pool dropped) while the returned
/// guard holds its version: the pool's list goes to the orphans' thread.
fn closed_while_held(count: &Arc<Count>) -> Guard<Obj> {
    let pool = pool(count);
    let c = Container::new(&pool, pool.get());
    let held = c.acquire();
    drop(c);
    drop(pool);
    held
}

/// Lets the orphans' thread run for `time` while this one holds its guards: its passes, and
/// how long it waits between them, are what the defects below needed. A window, not a
/// synchronisation: the tests' verdicts do not depend on it.
fn hold(time: Duration) {
    thread::sleep(time);
}

/// A pool whose retired list the orphans' thread still keeps (its pool closed while a guard
/// held a version, then the version went at a `reclaim()` on this thread and the pool gave
/// the list back) is taken over by a new pool, which closes while a guard holds one of its
/// versions too. The new pool's version must go once its guard does. Before, the close
/// found the list adopted already and left the count of releases stored for the first
/// pool: at its next wake-up the thread saw the count changed, dropped the list and exited,
/// and the version was never dropped.
///
/// Which free list a new pool takes is not for a test to choose: new pools are made until
/// they have taken every free list, the reused one among them, and all close while held.
/// The first guard is held a while (the thread's wait grows to its longest while its passes
/// return nothing), and the new pools' guards past the thread's next wake-up.
#[test]
fn a_list_adopted_again_by_a_new_pool_is_not_forgotten() {
    let _serial = serial();
    for round in 0..5 {
        let count = Arc::<Count>::default();
        let first = closed_while_held(&count);
        hold(Duration::from_millis(40));
        drop(first);
        if poolswap::reclaim() == 0 {
            // The orphans' thread returned it first: its list was dropped as it should be,
            // and there is nothing to reuse in this round.
            continue;
        }
        // The first pool's state went with its last version: its list is free. 64 new
        // pools take the lowest free lists; each closes while a guard holds its version.
        let held: Vec<Guard<Obj>> = (0..64).map(|_| closed_while_held(&count)).collect();
        // Held past the thread's next wake-up (its longest wait is 32 ms), at which it
        // dropped the reused list before.
        hold(Duration::from_millis(100));
        drop(held);
        count.wait_all_dropped(&format!("round {round}"));
    }
}

/// A `reclaim()` in flight on another thread holds a guarded version off its list while the
/// pool closes. The close must still hand the list to the orphans' thread. Before, the
/// close looked at the list's length hint, which a concurrent pass of the writer's own
/// (one that returned everything it took) could have set to zero, and handed over nothing.
/// The loom model `a_close_during_a_pass_holding_a_guarded_version_adopts_the_list`
/// (tests/loom.rs) covers the interleaving; this runs it on real threads, many times.
#[test]
fn a_close_beside_passes_in_flight_loses_no_version() {
    let _serial = serial();
    let count = Arc::<Count>::default();
    let rounds = 200;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reclaimer = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                poolswap::reclaim();
            }
        })
    };
    for _ in 0..rounds {
        let pool = pool(&count);
        let c = Container::new(&pool, pool.get());
        let held = c.acquire();
        // Versions retired and returned by the writer's own passes, beside the other
        // thread's, while `held` stays retired.
        for _ in 0..3 {
            c.update(c.get_new());
        }
        drop(c);
        drop(pool);
        drop(held);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    reclaimer.join().unwrap();
    count.wait_all_dropped("after the rounds");
}

/// Pools closing while guards hold their versions, on several threads at once, with
/// `reclaim()` calls and a background reclaimer beside them, retired lists given back and
/// taken over all along: every object made is dropped exactly once, with no call once the
/// threads are done.
#[test]
fn every_version_goes_whatever_pools_close_and_reclaim_meanwhile() {
    let _serial = serial();
    let count = Arc::<Count>::default();
    let reclaimer = Reclaimer::spawn().expect("a thread");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let count = Arc::clone(&count);
            thread::spawn(move || {
                let mut held = Vec::new();
                for i in 0..150 {
                    let pool = pool(&count);
                    let c = Container::new(&pool, pool.get());
                    for _ in 0..(i % 4) {
                        held.push(c.acquire());
                        c.update(c.get_new());
                    }
                    held.push(c.acquire());
                    drop(c);
                    drop(pool);
                    // Some guards go now, some with later pools, some at the end.
                    if (i + t) % 3 == 0 {
                        held.drain(..held.len() / 2);
                    }
                    if (i + t) % 5 == 0 {
                        poolswap::reclaim();
                    }
                }
                held
            })
        })
        .collect();
    let held: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    reclaimer.join().unwrap();
    drop(held);
    count.wait_all_dropped("after the threads");
}
