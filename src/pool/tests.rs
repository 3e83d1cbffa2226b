//! Unit tests of the pool's internal bookkeeping (the idle budget, the registry, a
//! checked-out node's count) and of decay on a clock the tests advance by hand
//! (`PoolBuilder::clock` is crate-private).

use super::local::MAGAZINE_SIZE;
use super::pooled::pooled_node;
use super::*;
use crate::reclaim::registry;

/// The idle bound's invariant: the budget in use is exactly the permits held by magazines
/// (one per object plus the spare ones, at most `MAGAZINE_PERMITS` in all) plus the objects
/// in depots and the permits parked there.
fn assert_budget_balances<T>(pool: &Pool<T>) {
    let shared = &pool.shared;
    // No other thread uses the pool here (the test's threads have been joined, exit
    // hooks included), as `permits_held` requires.
    let held: usize = shared.locals.iter().map(|l| l.permits_held()).sum();
    assert_eq!(shared.budget.in_use(), held, "budget out of balance");
    assert!(held <= shared.budget.max());
}

#[test]
fn budget_balances_through_spills_refills_steals_and_trims() {
    let pool = Pool::builder(|| 0u32, |_: &mut u32| true)
        .max_idle(20)
        .build();
    // Bursts bigger than a magazine: spills to the depot, refills, over-cap drops.
    for burst in [3, MAGAZINE_SIZE + 3, 30, 1] {
        let held: Vec<_> = (0..burst).map(|_| pool.get()).collect();
        drop(held);
        assert_budget_balances(&pool);
    }
    // Objects put on another thread, stolen by this one.
    std::thread::scope(|s| {
        // `join`, not just the end of the scope: only `join` waits for the thread's
        // thread-local destructors, where its exit hook flushes its magazine.
        let putter = s.spawn(|| drop((0..12).map(|_| pool.get()).collect::<Vec<_>>()));
        putter.join().unwrap();
    });
    assert_budget_balances(&pool);
    let stolen: Vec<_> = (0..15).map(|_| pool.get()).collect();
    assert_budget_balances(&pool);
    drop(stolen);
    pool.trim();
    assert_budget_balances(&pool);
    pool.trim();
    pool.prefill(7);
    assert_budget_balances(&pool);
    pool.clear();
    assert_budget_balances(&pool);
}

#[test]
fn a_thread_keeps_registry_entries_for_live_pools_only() {
    let live: Vec<Pool<u8>> = (0..3).map(|_| Pool::new(|| 0u8, |_| true)).collect();
    for pool in &live {
        drop(pool.get());
    }
    let before = registry::len();
    // 100 under Miri (slow there) still pass several doublings, and without sweeps would
    // leave ~100 entries, far above the bound below.
    let dead = if cfg!(miri) { 100 } else { 1000 };
    for _ in 0..dead {
        let pool = Pool::new(|| 0u8, |_| true);
        drop(pool.get());
    }
    for pool in &live {
        drop(pool.get());
    }
    // Sweeps run when the registry doubles: at most twice the live entries, plus the
    // first sweep's threshold.
    let after = registry::len();
    assert!(
        after <= 2 * before.max(4) + 8,
        "{after} registry entries after {dead} dead pools ({before} before)"
    );
}

/// The reference count of a checked-out object: 1, whether fresh or back from a
/// container's version (its check-out resets the count that the version's last release
/// left at 0).
#[test]
fn a_checked_out_object_holds_one_reference() {
    let pool = Pool::new(|| 0u8, |n| *n = 0);
    let count = |p: &Pooled<'_, u8>| {
        // SAFETY: the guard's reference keeps the node live.
        unsafe { pooled_node(p).as_ref() }.refs().load()
    };
    let fresh = pool.get();
    assert_eq!(count(&fresh), 1);
    let (published, _pool) = version::Version::publish(fresh, &pool);
    // SAFETY: `publish` left the version one counted reference (the container's), which
    // this consumes; the version holds its pool. Its node goes back to this thread's depot.
    unsafe { published.release() };
    let back = pool.get();
    assert_eq!(
        pooled_node(&back).as_ptr(),
        published.as_ptr(),
        "the same node"
    );
    assert_eq!(count(&back), 1, "a released version, checked out again");
}

/// Decay on a clock the test moves by hand, in whole periods.
mod decay {
    use std::thread;
    use std::time::Duration;

    use super::super::{Pool, PoolBuilder};
    use crate::sync::{Arc, AtomicU64, Ordering::Relaxed};

    const PERIOD: Duration = Duration::from_secs(10);

    /// An object that counts its drops.
    struct Obj(Arc<AtomicU64>);

    impl Drop for Obj {
        fn drop(&mut self) {
            self.0.fetch_add(1, Relaxed);
        }
    }

    /// A pool of [`Obj`]s, the count of their drops, and the clock its decay reads.
    struct Setup {
        dropped: Arc<AtomicU64>,
        clock: Arc<AtomicU64>,
    }

    impl Setup {
        fn new() -> Setup {
            Setup {
                dropped: Arc::new(AtomicU64::new(0)),
                clock: Arc::new(AtomicU64::new(0)),
            }
        }

        /// A builder whose pool decays every `PERIOD` on this clock.
        fn builder(&self) -> PoolBuilder<Obj> {
            let dropped = Arc::clone(&self.dropped);
            let now = Arc::clone(&self.clock);
            Pool::builder(move || Obj(Arc::clone(&dropped)), |_: &mut Obj| ())
                .decay(PERIOD)
                .clock(move || PERIOD * now.load(Relaxed) as u32)
        }

        fn advance(&self, periods: u64) {
            self.clock.fetch_add(periods, Relaxed);
        }

        fn dropped(&self) -> u64 {
            self.dropped.load(Relaxed)
        }
    }

    /// Gets `n` objects on a new thread and drops them there, then joins it: its exit moves
    /// its magazine to its depot, where decay reaches every object.
    fn burst_on_another_thread<T: Send + 'static>(p: &Pool<T>, n: usize) {
        thread::scope(|s| {
            s.spawn(|| drop((0..n).map(|_| p.get()).collect::<Vec<_>>()))
                .join()
                .unwrap();
        });
    }

    /// One `get` (and drop) on a new thread: its magazine is empty, so it takes the slow
    /// path, where a due tick runs.
    fn one_slow_operation<T: Send + 'static>(p: &Pool<T>) {
        thread::scope(|s| s.spawn(|| drop(p.get())).join().unwrap());
    }

    /// A burst is kept whole by the adaptive bound, then decays: one period later a tick
    /// only marks it, two periods later the next slow-path operation drops everything above
    /// `min_idle`, counted in `decayed`. The adaptive bound follows demand down.
    #[test]
    fn a_burst_decays_to_min_idle_within_two_periods_and_one_operation() {
        let n = if cfg!(miri) { 1_000 } else { 100_000 };
        let min_idle = 5;
        let setup = Setup::new();
        let p = setup.builder().min_idle(min_idle).build();
        let floor = Pool::new(|| 0u8, |_| ()).stats().max_idle;
        burst_on_another_thread(&p, n);
        let s = p.stats();
        assert_eq!((s.idle, s.dropped_over_cap), (n as u64, 0), "kept: {s:?}");
        assert!(s.max_idle >= n as u64, "the bound followed demand up");

        one_slow_operation(&p);
        assert_eq!(p.stats().decayed, 0, "no period has passed");
        setup.advance(1);
        one_slow_operation(&p);
        let s = p.stats();
        assert_eq!(
            (s.decayed, s.idle),
            (0, n as u64),
            "one period: marked: {s:?}"
        );
        setup.advance(1);
        one_slow_operation(&p);
        let s = p.stats();
        assert_eq!(s.idle, min_idle as u64, "{s:?}");
        assert_eq!(s.decayed, (n - min_idle) as u64, "{s:?}");
        assert_eq!(setup.dropped(), s.decayed, "really dropped");
        assert_eq!(s.max_idle, floor, "the bound followed demand down");
        assert_eq!(s.trimmed, 0, "decay is counted apart from trim");
    }

    /// A pool quiet for two periods or more drops its whole burst at the first slow-path
    /// operation: no tick ran in between to mark it.
    #[test]
    fn a_quiet_pool_drops_its_burst_at_the_first_operation() {
        let setup = Setup::new();
        let p = setup.builder().build();
        burst_on_another_thread(&p, 300);
        setup.advance(7);
        one_slow_operation(&p);
        let s = p.stats();
        // The tick runs before the operation's own `get`, which then builds the one idle.
        assert_eq!((s.idle, s.decayed, s.created), (1, 300, 301), "{s:?}");
        assert_eq!(setup.dropped(), 300);
    }

    /// A thread that only hits its magazine still drives decay, at one `get` in 256 hits:
    /// the thread's own magazine is reached too (it runs the tick and flushes it first).
    #[test]
    fn a_thread_that_only_hits_its_magazine_drives_decay() {
        let n = if cfg!(miri) { 100 } else { 1_000 };
        let setup = Setup::new();
        let p = setup.builder().build();
        drop((0..n).map(|_| p.get()).collect::<Vec<_>>());
        setup.advance(2);
        let mut gets = 0;
        while p.stats().decayed == 0 {
            drop(p.get());
            gets += 1;
            assert!(gets <= 256, "no tick in {gets} gets");
        }
        let s = p.stats();
        // All but the object the tick's own `get` had taken, which it then gave back.
        assert_eq!(s.idle, 1, "this thread's magazine too: {s:?}");
        assert_eq!(s.decayed, n as u64 - 1, "{s:?}");
    }

    /// Objects a steady user takes in every period survive decay; only the burst beyond
    /// them goes.
    #[test]
    fn decay_keeps_what_a_steady_user_takes() {
        let setup = Setup::new();
        let p = setup.builder().build();
        let steady = 3 * super::MAGAZINE_SIZE; // more than a magazine: through the depot
        burst_on_another_thread(&p, 200);
        for _ in 0..4 {
            setup.advance(1);
            // The steady user, on a thread of its own each period (its slow path ticks).
            burst_on_another_thread(&p, steady);
        }
        let s = p.stats();
        assert_eq!(s.idle, steady as u64, "{s:?}");
        assert_eq!(s.decayed, (200 - steady) as u64, "{s:?}");
        assert_eq!(s.created, 200, "the steady user never rebuilt: {s:?}");
    }

    /// The statistics count what the idle bound, `trim` (and `clear`) and decay dropped,
    /// each under its own name.
    #[test]
    fn stats_count_what_the_bound_trim_and_decay_dropped() {
        let setup = Setup::new();
        let now = Arc::clone(&setup.clock);
        let p = Pool::builder(|| Vec::<u8>::with_capacity(100), Vec::clear)
            .max_idle(3)
            .decay(PERIOD)
            .clock(move || PERIOD * now.load(Relaxed) as u32)
            .build();
        // On threads that exit, so that every idle object is in a depot, where ticks reach.
        burst_on_another_thread(&p, 5); // 2 over the bound
        p.clear(); // 3 trimmed
        burst_on_another_thread(&p, 2);
        setup.advance(2);
        burst_on_another_thread(&p, 1); // its slow path runs the tick: the 2 decay
        let s = p.stats();
        assert_eq!(
            (s.dropped_over_cap, s.trimmed, s.decayed),
            (2, 3, 2),
            "{s:?}"
        );
    }

    /// Threads that each touched the pool once and then idle, alive, hide at most two
    /// objects per core from `trim` and decay, in either barrier mode: in their slow start
    /// (`SLOW_START_OPS`) they put what they got in their depots, which trim and decay
    /// reach; in `Membarrier` mode a trim also takes idle threads' magazines
    /// (`local/steal.rs`).
    #[test]
    fn idle_threads_hide_at_most_two_objects_per_core() {
        use std::sync::mpsc;
        let threads = if cfg!(miri) { 8 } else { 256 };
        let setup = Setup::new();
        let p = setup.builder().build();
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        let hidden = thread::scope(|s| {
            let (ready_tx, ready) = mpsc::channel::<()>();
            let mut release = Vec::new();
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let (release_tx, released) = mpsc::channel::<()>();
                    release.push(release_tx);
                    let ready_tx = ready_tx.clone();
                    let p = &p;
                    s.spawn(move || {
                        drop(p.get());
                        drop(ready_tx);
                        let _ = released.recv();
                    })
                })
                .collect();
            drop(ready_tx);
            let _ = ready.recv(); // every thread got and dropped its object
            setup.advance(2);
            one_slow_operation(&p);
            p.trim();
            p.trim();
            // What is still idle is what neither reached, less the slow operation's own.
            let hidden = p.stats().idle.saturating_sub(1);
            drop(release);
            for h in handles {
                h.join().unwrap();
            }
            hidden
        });
        let bound = 2 * cores as u64;
        assert!(
            hidden <= bound,
            "{hidden} objects hidden by {threads} idle threads ({cores} cores, membarrier: {})",
            crate::reclaim::barrier::membarrier()
        );
    }
}
