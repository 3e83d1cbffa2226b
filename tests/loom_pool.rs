//! Loom models of the pool: its free lists (magazines, depots, stealing, trim and decay),
//! a thread's exit and its `Local` claimed by a newcomer, and the waits at the live bound.
//! The swap/reclaim protocol's models are in `tests/loom.rs`.
//!
//! Run in both builds (as CI does):
//!
//! ```text
//! RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_pool
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_pool
//! ```
//!
//! The crate's debug assertions load atomics, which are loom operations of their own, so
//! each build explores interleavings the other does not: a model's assertions must hold in
//! every execution, whichever pass, getter or thread returns a version.
//!
//! Under `cfg(loom)` every atomic, lock, `UnsafeCell` and thread-local in the crate is loom's
//! (see `src/sync.rs`), so loom explores every interleaving of these small programs (up to
//! the preemption bound), its `UnsafeCell` tracking reports a read of an object that races
//! with its reset or refill (the use-after-return the Go README's notes describe), and the
//! crate's `debug_assert!`s run in every interleaving of the debug build. Objects hold an
//! integer: writers store a version number, the pool's reset stores 0, so a reader that saw
//! 0 saw an object that was being reset for reuse.
//!
//! Loom runs each model thread's thread-local destructors (where the pool's exit hook runs)
//! after the thread's closure, but its `JoinHandle::join` returns before them, unlike std's.
//! So a model that checks that every object is accounted for drops the pool and counts
//! drops: the close drains every magazine, whether or not its thread's exit hook has run.
#![cfg(loom)]

// The models' own bookkeeping (counters, the handles shared between model threads) uses
// std's atomics and `Arc` (see `support/loom_objects.rs`).
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use loom::thread;
use poolswap::Pool;

#[path = "support/loom_objects.rs"]
mod objects;
use objects::*;

/// A thread fills its magazine until it spills a batch to its depot while another thread,
/// with nothing of its own, steals from that depot: no object is handed out twice (loom's
/// cell tracking reports two owners writing one object), none is lost.
///
/// Two preemptions: three ran 8-9 minutes on the 2-core VM (most of CI's loom leg), two
/// run 34 s. What the two threads share is behind the depot's lock (the magazine is the
/// putter's alone), and a lock held over the wrong span shows within one preemption.
#[test]
fn steal_vs_spill() {
    bounded(2, || {
        let (pool, counts) = counting_pool();
        let putter = {
            let pool = pool.clone();
            thread::spawn(move || {
                // Three objects through a magazine of two: the third put spills one.
                let mut held = [pool.get(), pool.get(), pool.get()];
                for (i, p) in held.iter_mut().enumerate() {
                    p.value = i + 1;
                }
            })
        };
        let taker = {
            let pool = pool.clone();
            thread::spawn(move || drop(take_reset(&pool, 9)))
        };
        putter.join().unwrap();
        taker.join().unwrap();

        let stats = pool.stats();
        // The taker stole one of the three or built a fourth.
        assert!(stats.created == 3 || stats.created == 4, "{stats:?}");
        assert_eq!(stats.hits + stats.misses, 4, "{stats:?}");
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// Budget slots travel with the nodes between two threads' magazines (`budget.rs`): a
/// thread that refills from another's depot parks its spare slots there, under the depot's
/// lock, and the owner takes them back when it spills into that depot. The owner fills its
/// magazine, spills, takes, and fills and spills again, while the taker refills from that
/// depot and puts its object back on its own thread. No object is handed out twice or
/// lost, and when the pool closes every slot in use is found again (the close's debug
/// assertion, `LocalList::close`): fails (checked 2026-11-26) when the refill parks the
/// spare slots without the slot of the node it hands out, or when the close leaves the
/// parked slots out.
///
/// Two preemptions: three ran 280 s.
#[test]
fn refill_parks_slots_for_the_spill() {
    bounded(2, || {
        let (pool, counts) = counting_pool();
        let owner = {
            let pool = pool.clone();
            thread::spawn(move || {
                for round in 0..2 {
                    // Three objects through a magazine of two: the third put spills.
                    let mut held = [pool.get(), pool.get(), pool.get()];
                    for p in held.iter_mut() {
                        p.value = round + 1;
                    }
                }
            })
        };
        let taker = {
            let pool = pool.clone();
            thread::spawn(move || drop(take_reset(&pool, 9)))
        };
        owner.join().unwrap();
        taker.join().unwrap();

        let stats = pool.stats();
        assert_eq!(stats.hits + stats.misses, 7, "{stats:?}");
        assert_eq!(stats.dropped_over_cap, 0, "{stats:?}");
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// The last guard on a retired version is dropped on a reader thread, which donates the
/// object to the writer's depot, while a third thread steals from that depot: the object is
/// not handed out before the reader is done with it, and not twice.
#[test]
fn donate_vs_steal() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let g = c.acquire();
        publish(&c, 2); // version 1 now lives only through `g`

        let reader = thread::spawn(move || {
            assert_eq!(g.value, 1);
            drop(g); // donates version 1 to the main thread's depot
        });
        let thief = {
            let pool = pool.clone();
            thread::spawn(move || drop(take_reset(&pool, 7)))
        };
        reader.join().unwrap();
        thief.join().unwrap();
        assert_eq!(c.acquire().value, 2);
        drop((c, pool));
        counts.assert_all_dropped();
    });
}

/// The second `trim` frees the victims the first one marked while another thread, with
/// nothing of its own, steals from that same victim list: nothing is freed twice or handed
/// out after being freed, and every object made is either trimmed or still idle. One
/// preemption: since a trim also asks for the other thread's magazine (`local/steal.rs`),
/// three ran past 10 minutes and two past 5; the magazine handshake itself has its own
/// model (`trim_steals_a_magazine_vs_its_owner`) at the full bound.
#[test]
fn trim_vs_steal() {
    bounded(1, || {
        let (pool, counts) = counting_pool();
        pool.prefill(2); // two idle objects in the main thread's depot
        pool.trim(); // ... now both victims

        let trimmer = {
            let pool = pool.clone();
            thread::spawn(move || pool.trim())
        };
        let user = {
            let pool = pool.clone();
            thread::spawn(move || drop(take_reset(&pool, 5)))
        };
        trimmer.join().unwrap();
        user.join().unwrap();

        let stats = pool.stats();
        assert!(stats.trimmed >= 1, "two trims freed nothing: {stats:?}");
        assert!(
            counts.dropped.load(SeqCst) as u64 >= stats.trimmed,
            "{stats:?}"
        );
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A trim on another thread takes this thread's magazine (one idle object) while this
/// thread gets and returns an object through it, the lock-free hit path: the handshake
/// (`local.rs`, "Reaching an idle thread's magazine") lets the trimmer take the magazine
/// only while its owner is not in the middle of an operation, and the owner then reads it
/// as empty. Loom's `UnsafeCell` tracking reports an owner and a trimmer in the magazine at
/// once, and a node taken twice shows as a second object handed out without a reset or a
/// wrong count. Fails (checked 2026-11-25) without the owner's `barrier::signal`, without
/// the trimmer's heavy barrier, or without the owner's request check.
#[test]
fn trim_steals_a_magazine_vs_its_owner() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        drop(take_reset(&pool, 1)); // one object in this thread's magazine

        let trimmer = {
            let pool = pool.clone();
            thread::spawn(move || pool.trim())
        };
        // The hit path, or (after a steal) a refill from this thread's depot.
        let mut mine = take_reset(&pool, 2);
        mine.value = 3;
        drop(mine);
        trimmer.join().unwrap();

        let stats = pool.stats();
        assert_eq!((stats.created, stats.trimmed), (1, 0), "{stats:?}");
        assert_eq!(stats.idle, 1, "{stats:?}");
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// Two threads reach a slow path when a decay tick is due (the pool's clock reads two
/// periods after the build) while they get and return objects: one thread runs the tick,
/// which drops the idle objects in depots and magazines it reaches; the other's `get`
/// steals or builds. Nothing is
/// dropped twice or lost, and the adaptive idle bound's demand (raised at the misses,
/// lowered by the tick) never makes a count inconsistent.
#[test]
fn decay_tick_vs_get() {
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    // Two preemptions: since the tick asks for the other thread's magazine (the
    // handshake, modelled at the full bound by `trim_steals_a_magazine_vs_its_owner`),
    // three ran past 14 minutes alone; two take ~45 s, one 2 s.
    bounded(2, || {
        let counts = Arc::new(Counts::default());
        let now = Arc::new(AtomicU64::new(0));
        let clock = now.clone();
        let pool = Pool::builder(counted_objects(&counts), |o: &mut Obj| o.value = 0)
            .decay(Duration::from_secs(1))
            .clock(move || Duration::from_secs(clock.load(SeqCst)))
            .build();
        pool.prefill(2); // two idle objects in the main thread's depot
        now.store(2, SeqCst); // two periods later: the next tick drops them

        // Two threads (a third makes the model run for hours): both magazines are empty,
        // so both `get`s take the slow path, where the tick is due.
        let user = {
            let pool = pool.clone();
            thread::spawn(move || drop(take_reset(&pool, 1)))
        };
        drop(take_reset(&pool, 2));
        user.join().unwrap();

        let stats = pool.stats();
        // One tick reaches the two prefilled objects and, with the magazine handshake, the
        // object the other thread returned to its magazine meanwhile (`local/steal.rs`).
        assert!(stats.decayed <= 3, "a tick ran twice: {stats:?}");
        assert_eq!(
            stats.created - stats.decayed - stats.dropped_over_cap,
            stats.live,
            "{stats:?}"
        );
        assert_eq!(
            counts.dropped.load(SeqCst) as u64,
            stats.decayed,
            "{stats:?}"
        );
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A thread exits (its thread-local destructor runs the pool's exit hook: its magazine
/// moves to its depot and its `Local` is given up) while another thread, new to the pool,
/// takes an object: it claims the exited thread's `Local` or makes its own, and steals the
/// flushed object or builds one. Loom's `UnsafeCell` tracking reports it if the claimant's
/// use of the magazine is not ordered after the exiting thread's last use.
///
/// Two preemptions: three ran 123 s on the 2-core VM, two run 11 s and still fail
/// (checked 2026-11-26: the nested-operation assertion) with the claim's CAS Relaxed
/// instead of Acquire.
#[test]
fn thread_exit_vs_claim() {
    bounded(2, || {
        let (pool, counts) = counting_pool();
        let leaver = {
            let pool = pool.clone();
            // Kept in this thread's magazine until it exits.
            thread::spawn(move || drop(take_reset(&pool, 3)))
        };
        let newcomer = {
            let pool = pool.clone();
            thread::spawn(move || drop(take_reset(&pool, 4)))
        };
        leaver.join().unwrap();
        newcomer.join().unwrap();

        let stats = pool.stats();
        assert!(stats.created == 1 || stats.created == 2, "{stats:?}");
        assert_eq!(stats.hits + stats.misses, 2, "{stats:?}");
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A thread that holds its own `Local` steals from the depot of a thread that is exiting:
/// its refill frees idle permits and parks them at the depot it took from, for that depot's
/// owner to take back at its next spill. A depot whose thread exited gets no spill, so a
/// permit parked there after the exit would be lost to every put until a trim (a burst of
/// `max_idle` gets and drops after four threads exited kept 37-56 of 64): the exit gives up
/// its `Local` under the depot's lock, and a refill parks only at a depot whose owner it
/// sees alive under that lock. The close's debug assertion (`Local::close`) finds any
/// permit parked at an exited thread's depot: fails when the refill ignores the exit, or
/// when the exit gives up its `Local` after unlocking.
#[test]
fn steal_from_a_depot_vs_its_thread_exit() {
    bounded(2, || {
        let (pool, counts) = counting_pool();
        // This thread's own `Local`, with one object in its magazine.
        drop(take_reset(&pool, 1));
        let leaver = {
            let pool = pool.clone();
            // Two objects in its magazine (of two), moved to its depot by its exit hook.
            thread::spawn(move || drop([take_reset(&pool, 2), take_reset(&pool, 3)]))
        };
        // Loom's `join` returns before the leaver's exit hook runs, so what follows races
        // with it: the first get from this thread's magazine, the second stolen from the
        // leaver's depot (flushed there or not yet) or made.
        leaver.join().unwrap();
        drop([take_reset(&pool, 4), take_reset(&pool, 5)]);
        let stats = pool.stats();
        assert_eq!(stats.hits + stats.misses, 5, "{stats:?}");
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// Two threads new to the pool race to claim the `Local` an exited thread left: exactly one
/// may own it. A claim that checked and then set the ownership flag in two steps would let
/// both use one magazine, which loom's `UnsafeCell` tracking reports.
///
/// Four threads: at 3 preemptions this model alone ran for over ten minutes on 2 cores, so
/// it runs with at most 2 (22 s), which still catches a two-step claim.
#[test]
fn two_newcomers_race_to_claim() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(2, |b| b.min(2)));
    builder.check(|| {
        let (pool, counts) = counting_pool();
        {
            let pool = pool.clone();
            thread::spawn(move || drop(pool.get())).join().unwrap();
        }
        let newcomers: Vec<_> = (0..2)
            .map(|v| {
                let pool = pool.clone();
                thread::spawn(move || drop(take_reset(&pool, v + 1)))
            })
            .collect();
        for t in newcomers {
            t.join().unwrap();
        }
        let stats = pool.stats();
        assert_eq!(stats.hits + stats.misses, 3, "{stats:?}");
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// The last pool handle is dropped on one thread while another thread, which used the pool
/// and dropped its own handle, exits: its exit hook moves its magazine to its depot beside
/// the close that drains every magazine and depot. Every object is dropped exactly once,
/// and the two never touch one magazine at once.
#[test]
fn last_handle_vs_thread_exit() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let user = {
            let pool = pool.clone();
            thread::spawn(move || {
                let held = [pool.get(), pool.get()];
                drop(held); // in this thread's magazine...
                drop(pool); // ...while the main thread may already be closing the pool
            })
        };
        drop(pool);
        user.join().unwrap();
        counts.assert_all_dropped();
    });
}

/// Two threads get and return one object each from a pool that allows one to exist: one of
/// them may have to wait at the bound until the other, on its own thread, gives its object
/// back (with `max_idle` 0, drops it instead, freeing the slot). The waiter must be woken
/// in every interleaving (loom reports a deadlock otherwise), and two objects must never
/// exist at once.
fn max_live_model(max_idle: usize) {
    loom::model(move || {
        let counts = Arc::new(Counts::default());
        let pool = one_object_pool(&counts, max_idle);
        let pool = Arc::new(pool);
        let other = {
            let pool = pool.clone();
            thread::spawn(move || {
                let mut mine = pool.get();
                assert_eq!(mine.value, 0, "handed out without a reset");
                mine.value = 1;
            })
        };
        let mut mine = pool.get();
        assert_eq!(mine.value, 0, "handed out without a reset");
        mine.value = 2;
        drop(mine);
        other.join().unwrap();
        assert!(pool.stats().live <= 1);
        drop(pool);
        counts.assert_all_dropped();
    });
}

#[test]
fn max_live_waiter_is_woken_by_a_return_on_another_thread() {
    max_live_model(8);
}

#[test]
fn max_live_waiter_is_woken_by_a_drop_on_another_thread() {
    max_live_model(0);
}

/// A pool of `Obj` that allows one object to exist, checking in its factory that no second
/// one does.
fn one_object_pool(counts: &Arc<Counts>, max_idle: usize) -> Pool<Obj> {
    let c = counts.clone();
    Pool::builder(
        move || {
            // Objects that exist once this one is built: a dropped object is counted before
            // its live slot is given back.
            let now = c.made.fetch_add(1, SeqCst) + 1 - c.dropped.load(SeqCst);
            assert!(now <= 1, "{now} objects exist under max_live(1)");
            Obj {
                value: 0,
                counts: c.clone(),
            }
        },
        |o: &mut Obj| o.value = 0,
    )
    .max_idle(max_idle)
    .max_live(1)
    .build()
}

/// A `get_timeout` at the bound races the return of the only object on another thread. Loom
/// has no clock: there the deadline passes after one wait (`sync::Deadline`), so the timed
/// getter looks, waits once, looks again and gives up. Either it gets the object or it
/// gives up leaving no permit taken: the object is then idle, and a `try_get` finds it.
#[test]
fn timed_get_vs_return() {
    loom::model(|| {
        let counts = Arc::new(Counts::default());
        let pool = Arc::new(one_object_pool(&counts, 8));
        let mut held = pool.get_owned();
        held.value = 1;
        let returner = thread::spawn(move || drop(held));
        let got = pool.get_timeout(std::time::Duration::from_millis(10));
        if let Some(obj) = &got {
            assert_eq!(obj.value, 0, "handed out without a reset");
        }
        let gave_up = got.is_none();
        drop(got);
        returner.join().unwrap();
        assert!(pool.stats().live <= 1);
        if gave_up {
            assert!(pool.try_get().is_some(), "a timed getter kept a permit");
        }
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A timed getter and a blocking one wait at the bound while a third thread returns the
/// only object: whatever the timed one does (takes it, or gives up), the blocking one must
/// be woken in every interleaving (loom reports a deadlock otherwise: its backstop wait
/// waits for a notification only under loom).
#[test]
fn timed_get_vs_blocking_get_vs_return() {
    bounded(2, || {
        let counts = Arc::new(Counts::default());
        let pool = Arc::new(one_object_pool(&counts, 8));
        let held = pool.get_owned();
        let returner = thread::spawn(move || drop(held));
        let blocking = {
            let pool = pool.clone();
            thread::spawn(move || drop(pool.get()))
        };
        drop(pool.get_timeout(std::time::Duration::from_millis(10)));
        returner.join().unwrap();
        blocking.join().unwrap();
        assert!(pool.stats().live <= 1);
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A pool of `Obj` (reset to 0, counted) whose threads' magazines start slow for `ops`
/// slow-path operations (`PoolBuilder::slow_start_ops`, loom builds only; 0 elsewhere in
/// these models, so that they check the magazine's paths).
fn slow_start_pool(ops: u32, max_idle: usize) -> (Pool<Obj>, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let pool = Pool::builder(counted_objects(&counts), |o: &mut Obj| o.value = 0)
        .max_idle(max_idle)
        .slow_start_ops(ops)
        .build();
    (pool, counts)
}

/// A thread that gets an object from `pool` and drops it once per value in `values`
/// (`take_reset` sets each to its value).
fn get_and_drop_on_a_thread(
    pool: &Pool<Obj>,
    values: std::ops::RangeInclusive<usize>,
) -> thread::JoinHandle<()> {
    let pool = pool.clone();
    thread::spawn(move || {
        for v in values {
            drop(take_reset(&pool, v));
        }
    })
}

/// A thread in its slow start gets and puts twice: each put goes to its own depot with a
/// budget slot unparked there or reserved (`Local::donate_reserving`), each get takes one
/// object from a depot and parks or gives back its slot, so its magazine stays empty
/// (`put_slow` asserts it). Meanwhile another thread, slow too, gets an object (stolen
/// from that depot, parking its slot there, or taken from a victim list, or built) and
/// puts it in its own depot, and a trim drops the victim it finds and demotes the rest.
/// Every object made is idle or dropped once the threads are done (no magazine holds one,
/// so the depots' counts are exact), the idle bound holds, loom's cell tracking sees no
/// object with two owners, and the close finds every budget slot in use (its debug
/// assertion): a slot lost, or counted twice, shows there.
///
/// Run at `max_idle` 8, where a get parks its slot in the depot it took from (the budget
/// is far from its ceiling) and the next put there unparks it, and at `max_idle` 1, where
/// slots go straight back to the budget and a put past the bound drops its object.
fn slow_start_vs_steal_and_trim(max_idle: usize) {
    // One preemption, as for `trim_vs_steal`: a trim asks for every other thread's
    // magazine (the handshake, modelled at the full bound by
    // `trim_steals_a_magazine_vs_its_owner`); two ran past 10 minutes, one runs in ~10 s.
    bounded(1, move || {
        // More than either thread's operations: both stay in their slow start.
        let (pool, counts) = slow_start_pool(4, max_idle);
        pool.prefill(1); // one idle object in the main thread's depot...
        pool.trim(); // ... now a victim, for the racing trim to drop or a get to take

        let slow = get_and_drop_on_a_thread(&pool, 1..=2);
        let thief = get_and_drop_on_a_thread(&pool, 3..=3);
        pool.trim();
        slow.join().unwrap();
        thief.join().unwrap();

        let stats = pool.stats();
        assert_eq!(stats.hits + stats.misses, 3, "{stats:?}");
        assert_eq!(stats.created, counts.made.load(SeqCst) as u64, "{stats:?}");
        assert!(
            stats.idle <= max_idle as u64,
            "over the idle bound: {stats:?}"
        );
        let dropped = counts.dropped.load(SeqCst) as u64;
        assert_eq!(dropped, stats.trimmed + stats.dropped_over_cap, "{stats:?}");
        assert_eq!(
            stats.created,
            stats.idle + dropped,
            "objects lost: {stats:?}"
        );
        drop(pool);
        counts.assert_all_dropped();
    });
}

#[test]
fn slow_start_vs_steal_and_trim_parking() {
    slow_start_vs_steal_and_trim(8);
}

#[test]
fn slow_start_vs_steal_and_trim_at_the_bound() {
    slow_start_vs_steal_and_trim(1);
}

/// A thread past its slow start (two operations: its first put went to its depot, its
/// second get took that object back, and its second put went to its magazine) exits with
/// an object in its magazine: its exit hook moves the object to its depot and restarts the slow start
/// (`Local::abandon`). A thread new to the pool claims that `Local` (or makes its own, if
/// it comes first) and so starts slow: its get takes one object, its put goes to the
/// depot, with its magazine empty (`put_slow` asserts it). A trim meanwhile takes the
/// leaver's magazine or flushed depot (the handshake, `local/steal.rs`), demotes, and
/// drops nothing (no victim yet). Loom's cell tracking reports the claimant touching the
/// magazine before the leaver's last use; the close's debug assertion reports a budget
/// slot lost or counted twice by the flush or the restarted puts; every object made is
/// dropped once.
#[test]
fn slow_restart_after_exit_vs_claim_and_trim() {
    // One preemption, as for `slow_start_vs_steal_and_trim`.
    bounded(1, || {
        let (pool, counts) = slow_start_pool(2, 8);
        let leaver = get_and_drop_on_a_thread(&pool, 1..=2);
        let newcomer = get_and_drop_on_a_thread(&pool, 3..=3);
        pool.trim();
        leaver.join().unwrap();
        newcomer.join().unwrap();

        let stats = pool.stats();
        assert_eq!(stats.hits + stats.misses, 3, "{stats:?}");
        assert_eq!(stats.trimmed, 0, "one trim dropped an object: {stats:?}");
        assert_eq!(stats.dropped_over_cap, 0, "{stats:?}");
        drop(pool);
        counts.assert_all_dropped();
    });
}
