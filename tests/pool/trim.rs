//! `clear` and `trim`: the `min_idle` floor, `trim`'s two-generation decay (an object idle
//! through two trims with no use is freed), what `trim` does not reach, and a destructor that
//! panics inside either.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{mpsc, Barrier};
use std::thread;

use poolswap::Container;

use crate::tracked::{scaled, tracked_builder, tracked_pool, Log};
use crate::{assert_accounted, past_slow_start, serial, with_parked_threads};

// ---------------------------------------------------------------------------------------
// min_idle
// ---------------------------------------------------------------------------------------

/// `clear` and `trim` never go below `min_idle` when at least that many are idle, and drop
/// nothing when fewer are; `min_idle` is capped at `max_idle`.
#[test]
fn clear_and_trim_keep_min_idle() {
    let _serial = serial();
    for min_idle in [0usize, 1, 10] {
        // clear
        let log = Log::new();
        let p = tracked_pool(&log, 100, min_idle);
        drop((0..50).map(|_| p.get()).collect::<Vec<_>>());
        p.clear();
        let s = p.stats();
        assert_eq!(s.idle, min_idle as u64, "{s:?}");
        assert_eq!(s.trimmed, 50 - min_idle as u64);
        assert_eq!(log.dropped(), s.trimmed);
        p.clear();
        assert_eq!(
            p.stats().idle,
            min_idle as u64,
            "a second clear keeps them too"
        );
        for _ in 0..4 {
            p.trim();
            assert_eq!(p.stats().idle, min_idle as u64, "trim keeps them too");
        }
        assert_accounted(&p, &log, 0);

        // trim
        let log = Log::new();
        let p = tracked_pool(&log, 100, min_idle);
        drop((0..50).map(|_| p.get()).collect::<Vec<_>>());
        for _ in 0..4 {
            p.trim();
            assert!(p.stats().idle >= min_idle as u64);
        }
        let s = p.stats();
        assert_eq!((s.idle, s.trimmed), (min_idle as u64, 50 - min_idle as u64));
        assert_accounted(&p, &log, 0);
    }

    // Fewer idle than min_idle: nothing is dropped.
    let log = Log::new();
    let p = tracked_pool(&log, 100, 10);
    drop((0..5).map(|_| p.get()).collect::<Vec<_>>());
    p.clear();
    p.trim();
    p.trim();
    let s = p.stats();
    assert_eq!((s.idle, s.trimmed, log.dropped()), (5, 0, 0));

    // A min_idle above max_idle keeps what max_idle allows.
    let p = tracked_builder(&log).max_idle(3).min_idle(50).build();
    drop((0..5).map(|_| p.get()).collect::<Vec<_>>());
    p.clear();
    let s = p.stats();
    assert_eq!((s.max_idle, s.idle), (3, 3), "{s:?}");
}

/// `clear` reaches the depots of other threads (here, flushed there by their exit) and
/// still stops at `min_idle` in all.
#[test]
fn clear_keeps_min_idle_across_threads() {
    let _serial = serial();
    let log = Log::new();
    let p = tracked_pool(&log, 200, 7);
    let all_out = Barrier::new(3); // 60 out at once: no thread reuses another's objects
    thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let (p, all_out) = (&p, &all_out);
                s.spawn(move || {
                    let held: Vec<_> = (0..20).map(|_| p.get()).collect();
                    all_out.wait();
                    drop(held);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
    drop((0..5).map(|_| p.get()).collect::<Vec<_>>()); // some in this thread's cache too
    assert_eq!(p.stats().idle, 60);
    p.clear();
    let s = p.stats();
    assert_eq!((s.idle, s.trimmed), (7, 53), "{s:?}");
    assert_accounted(&p, &log, 0);
}

// ---------------------------------------------------------------------------------------
// trim: two-generation decay
// ---------------------------------------------------------------------------------------

/// A burst of 100,000 objects, then two trims with no traffic: the first only marks, the
/// second frees all but `min_idle`, and `trimmed` counts them.
#[test]
fn two_trims_free_a_burst() {
    let _serial = serial();
    let n = scaled(100_000, 200);
    for min_idle in [0usize, 10] {
        let log = Log::new();
        let p = tracked_pool(&log, 100_000, min_idle);
        drop((0..n).map(|_| p.get()).collect::<Vec<_>>());
        let s = p.stats();
        assert_eq!(
            (s.idle, s.created, s.dropped_over_cap),
            (n as u64, n as u64, 0)
        );

        p.trim();
        let s = p.stats();
        assert_eq!((s.idle, s.trimmed), (n as u64, 0), "one trim only marks");
        assert_eq!(log.dropped(), 0);

        p.trim();
        let s = p.stats();
        assert!(s.idle <= min_idle as u64, "{s:?}");
        assert_eq!(s.idle, min_idle as u64, "min_idle kept");
        assert_eq!(s.trimmed, (n - min_idle) as u64);
        assert_eq!(log.dropped(), s.trimmed, "really dropped");

        p.trim();
        p.trim();
        assert_eq!(p.stats().idle, min_idle as u64);
        assert_accounted(&p, &log, 0);
        // What min_idle kept still serves gets.
        let held: Vec<_> = (0..min_idle).map(|_| p.get()).collect();
        assert_eq!(p.stats().created, n as u64);
        drop(held);
    }
}

/// An object put back between two trims survives the second (one trim only marks it), and
/// is freed by the next two with no traffic.
#[test]
fn object_put_back_between_trims_survives_the_next_trim() {
    let _serial = serial();
    let log = Log::new();
    let p = tracked_pool(&log, 100, 0);
    drop((0..10).map(|_| p.get()).collect::<Vec<_>>());
    p.trim(); // marks all ten
    let used = p.get();
    let used_id = used.id;
    drop(used); // put back: fresh again
    p.trim();
    let s = p.stats();
    assert_eq!(
        (s.idle, s.trimmed),
        (1, 9),
        "the untouched victims went: {s:?}"
    );
    assert_eq!(s.created, 10);
    let again = p.get();
    // The survivor is among what is left: take everything idle and look for it.
    let mut rest = vec![again];
    while p.stats().idle > 0 {
        rest.push(p.get());
    }
    assert!(
        rest.iter().any(|o| o.id == used_id),
        "the object put back between the trims was freed"
    );
    assert_eq!(p.stats().created, 10, "no factory call");
    drop(rest);
    p.trim();
    p.trim();
    assert_eq!(p.stats().idle, 0);
    assert_accounted(&p, &log, 0);
}

/// The documented rule exactly: the second trim frees every object that was idle at the
/// first and was not handed out since — including victims that a `get`'s batch refill
/// moved into the caller's cache without handing them out.
#[test]
fn second_trim_frees_every_untouched_victim() {
    let _serial = serial();
    let log = Log::new();
    let p = tracked_pool(&log, 100, 0);
    drop((0..10).map(|_| p.get()).collect::<Vec<_>>());
    p.trim();
    let used = p.get();
    let used_id = used.id;
    drop(used);
    p.trim();
    let s = p.stats();
    assert_eq!((s.idle, s.trimmed), (1, 9), "{s:?}");
    assert_eq!(p.get().id, used_id);
}

/// A steady user that gets and drops its working set between trims keeps it: trim causes no
/// factory calls and drops nothing — on the trimming thread and on another thread.
#[test]
fn steady_user_keeps_its_working_set_across_trims() {
    let _serial = serial();
    let rounds = scaled(300, 6);
    for k in [1usize, 4, 5, 8, 9, 20, 64] {
        let log = Log::new();
        let p = tracked_pool(&log, 64, 0);
        for round in 0..rounds {
            let held: Vec<_> = (0..k).map(|_| p.get()).collect();
            drop(held);
            p.trim();
            let s = p.stats();
            assert_eq!(s.created, k as u64, "k {k}, round {round}: {s:?}");
            assert_eq!((s.trimmed, s.dropped_over_cap), (0, 0), "k {k}: {s:?}");
        }
        let s = p.stats();
        assert_eq!(s.hits, (k * (rounds - 1)) as u64);
        assert_eq!(s.misses, k as u64);
    }

    // The user on one thread, a timer-like trimmer on another.
    let rounds = scaled(200, 5);
    for k in [3usize, 8, 30] {
        let log = Log::new();
        let p = tracked_pool(&log, 64, 0);
        let (used_tx, used) = mpsc::channel::<()>();
        let (trimmed_tx, trimmed) = mpsc::channel::<()>();
        thread::scope(|s| {
            let p = &p;
            let user = s.spawn(move || {
                for _ in 0..rounds {
                    drop((0..k).map(|_| p.get()).collect::<Vec<_>>());
                    used_tx.send(()).unwrap();
                    if trimmed.recv().is_err() {
                        return; // the trimmer failed
                    }
                }
            });
            for round in 0..rounds {
                used.recv().expect("the user thread failed");
                p.trim();
                let s = p.stats();
                assert_eq!(s.created, k as u64, "k {k}, round {round}: {s:?}");
                assert_eq!(s.trimmed, 0, "k {k}, round {round}: {s:?}");
                trimmed_tx.send(()).unwrap();
            }
            user.join().unwrap();
        });
    }
}

/// `trim` reaches the magazines of other live threads that are not in the middle of an
/// operation in `Membarrier` mode (`local.rs`, "Reaching an idle thread's magazine"): two
/// trims drop them. In `Fence` mode it does not (documented): their objects count as idle,
/// and decay once the thread's exit flushes them to its depot. The thread is past its slow
/// start, in which it would have put them in its depot.
#[test]
fn trim_reaches_other_live_threads_caches_in_membarrier_mode() {
    let _serial = serial();
    let log = Log::new();
    let p = tracked_pool(&log, 64, 0);
    let cached = |_| {
        past_slow_start(&p);
        drop((0..3).map(|_| p.get()).collect::<Vec<_>>());
    };
    let reached = poolswap::internals::membarrier();
    with_parked_threads(1, cached, || {
        assert_eq!(p.stats().idle, 3, "caches of live threads count as idle");
        p.trim();
        p.trim();
        let expected = if reached { (0, 3) } else { (3, 0) };
        assert_eq!((p.stats().idle, p.stats().trimmed), expected);
    });
    let left = if reached { 0 } else { 3 };
    assert_eq!(p.stats().idle, left, "flushed on exit");
    p.trim();
    p.trim();
    assert_eq!((p.stats().idle, p.stats().trimmed), (0, 3));
    assert_accounted(&p, &log, 0);
}

// ---------------------------------------------------------------------------------------
// A destructor that panics
// ---------------------------------------------------------------------------------------

/// An object whose destructor panics inside `clear` or `trim`: the panic reaches the
/// caller, the pool stays consistent and usable, and every object is dropped exactly once
/// in the end — for plain objects and for former container versions.
#[test]
fn panicking_drop_in_trim_or_clear_leaves_the_pool_usable() {
    let _serial = serial();
    for versions in [false, true] {
        for use_trim in [false, true] {
            let log = Log::new();
            let p = tracked_pool(&log, 64, 0);
            if versions {
                let c = Container::new(&p, p.get());
                let guards: Vec<_> = (0..6)
                    .map(|i| {
                        if i > 0 {
                            c.update(c.get_new());
                        }
                        c.acquire()
                    })
                    .collect();
                drop(c);
                drop(guards); // six versions, retired: a guard's drop returns nothing
                assert_eq!(p.stats().idle, 0);
                assert_eq!(poolswap::reclaim(), 6); // all idle now
            } else {
                drop((0..6).map(|_| p.get()).collect::<Vec<_>>());
            }
            let made = log.made();
            assert_eq!(p.stats().idle, made);
            if use_trim {
                p.trim();
            }
            log.panic_on_drop.store(true, SeqCst);
            let err = panic::catch_unwind(AssertUnwindSafe(|| {
                if use_trim {
                    p.trim()
                } else {
                    p.clear()
                }
            }))
            .unwrap_err();
            assert_eq!(err.downcast_ref::<&str>(), Some(&"drop failed on purpose"));
            log.panic_on_drop.store(false, SeqCst);
            let s = p.stats();
            assert_eq!((s.trimmed, log.dropped()), (1, 1), "{s:?}");
            assert_eq!(s.idle, made - 1, "{s:?}");

            // Usable: gets, puts, containers, clear.
            let held: Vec<_> = (0..10).map(|_| p.get()).collect();
            assert_eq!(p.stats().created, made + 5);
            drop(held);
            let c = Container::new(&p, p.get());
            c.update(c.get_new());
            drop(c);
            p.clear();
            assert_eq!(p.stats().idle, 0);
            assert_accounted(&p, &log, 0);
            drop(p);
            assert_eq!(log.dropped(), log.made(), "each dropped once");
        }
    }
}
