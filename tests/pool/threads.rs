//! Objects crossing threads: a getter and a dropper on different threads, a thread's cache
//! when it exits, a thread that drops the pool's last handle, and the idle budget after
//! threads exit.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc;
use std::thread;

use poolswap::OptionContainer;

use crate::tracked::DEFAULT_MAX_IDLE;

use crate::tracked::{scaled, signal, tracked_pool, Log};
use crate::{assert_accounted, serial, with_parked_threads};

/// One thread gets, another drops (objects sent through a channel): stealing from the
/// dropper's depot keeps factory calls to a small constant.
#[test]
fn cross_thread_handoff_makes_few_objects() {
    let _serial = serial();
    let ops = scaled(100_000, 200);
    let log = Log::new();
    let p = tracked_pool(&log, DEFAULT_MAX_IDLE, 0);
    thread::scope(|s| {
        // A bounded channel: the getter cannot run arbitrarily far ahead of the dropper.
        let (tx, rx) = mpsc::sync_channel(16);
        let dropper = s.spawn(move || {
            let mut n = 0usize;
            for o in rx {
                drop(o);
                n += 1;
            }
            n
        });
        let getter = s.spawn(|| {
            for _ in 0..ops {
                tx.send(p.get()).unwrap();
            }
            drop(tx);
        });
        getter.join().unwrap();
        assert_eq!(dropper.join().unwrap(), ops);
    });
    let s = p.stats();
    assert_eq!(s.hits + s.misses, ops as u64);
    assert!(
        s.created <= 64,
        "{} objects made for {ops} handoffs: {s:?}",
        s.created
    );
    assert_accounted(&p, &log, 0);
}

/// Objects a thread cached are not lost when it exits: they count as idle while it lives,
/// its exit flushes them, and another thread's gets are hits on them.
#[test]
fn objects_cached_by_an_exiting_thread_are_not_lost() {
    let _serial = serial();
    let log = Log::new();
    let p = tracked_pool(&log, 64, 0);
    let cached = |_| {
        let held: Vec<_> = (0..5).map(|_| p.get()).collect();
        drop(held); // into this thread's cache
    };
    with_parked_threads(1, cached, || {
        assert_eq!(p.stats().idle, 5, "in the live thread's cache");
    });
    let s = p.stats();
    assert_eq!((s.idle, s.created), (5, 5), "flushed on exit: {s:?}");
    let held: Vec<_> = (0..5).map(|_| p.get()).collect();
    let s = p.stats();
    assert_eq!((s.hits, s.misses, s.created, s.idle), (5, 5, 5, 0), "{s:?}");
    let mut ids: Vec<usize> = held.iter().map(|o| o.id).collect();
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2, 3, 4]);
    drop(held); // into this thread's cache, out of other threads' reach (documented)

    // Many short-lived threads in a row: the first finds nothing it can take and makes its
    // own; from then on each finds what the previous one left at its exit.
    let short_lived = || {
        thread::scope(|s| {
            s.spawn(|| drop((0..5).map(|_| p.get()).collect::<Vec<_>>()))
                .join()
                .unwrap();
        });
    };
    short_lived();
    let first = p.stats();
    assert!(first.created <= 10, "{first:?}");
    for _ in 0..scaled(20, 3) {
        short_lived();
    }
    let s = p.stats();
    assert_eq!((s.idle, s.created), (first.created, first.created), "{s:?}");
    assert_accounted(&p, &log, 0);
}

/// A `'static` thread with its own handle outlives every other handle: the pool is freed
/// when it drops the last one, and its exit afterwards is harmless.
#[test]
fn thread_dropping_the_last_handle_exits_cleanly() {
    let _serial = serial();
    let log = Log::new();
    let p = tracked_pool(&log, 64, 0);
    let mine = p.clone();
    let (used_tx, used) = signal();
    let (dropped_tx, dropped) = signal();
    let t = thread::spawn(move || {
        drop((0..10).map(|_| mine.get()).collect::<Vec<_>>());
        drop(used_tx);
        dropped.wait();
        drop(mine); // the last handle: frees the idle objects, this thread's cache too
    });
    used.wait();
    drop(p);
    drop(dropped_tx);
    t.join().unwrap();
    assert_eq!((log.made(), log.dropped()), (10, 10));
}

/// What threads that used a pool and exited leave behind must not shrink its idle bound:
/// four threads share a container (`get_new`, `update`, `acquire`) and exit, then a burst
/// of `max_idle` gets and drops on this thread keeps `max_idle` idle and drops nothing
/// over the cap. This thread's first gets steal from the exited threads' depots; a steal
/// parks its freed idle permits at the depot it took from, and a depot whose thread exited
/// gets no spill to take them back, so before a refill gave them back instead, the burst
/// kept 37-56 of 64 (the rest of the budget parked where no put could reach it).
/// `faults` makes the factory and the reset panic now and then while the threads run
/// (each operation under `catch_unwind`): the permits around user code come back too.
fn exited_threads_strand_no_idle_budget(faults: bool) {
    const MAX_IDLE: usize = 64;
    let _serial = serial();
    for round in 0..scaled(8, 1) {
        let log = Log::new();
        let p = tracked_pool(&log, MAX_IDLE, 0);
        let c = OptionContainer::empty(&p);
        thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|t| {
                    let (c, log) = (&c, &log);
                    s.spawn(move || {
                        for i in 0..scaled(2_000, 40) {
                            if faults {
                                log.panic_in_factory.store(i % 11 == t, SeqCst);
                                log.panic_in_reset.store(i % 13 == t, SeqCst);
                            }
                            let _ = catch_unwind(AssertUnwindSafe(|| {
                                let mut next = c.get_new();
                                next.value = i as u64;
                                c.update(next);
                                assert!(c.acquire().is_some());
                            }));
                        }
                    })
                })
                .collect();
            // Joined explicitly: `join` waits for the exit hooks.
            for w in workers {
                w.join().unwrap();
            }
        });
        log.panic_in_factory.store(false, SeqCst);
        log.panic_in_reset.store(false, SeqCst);
        poolswap::reclaim();
        let before = p.stats();
        drop((0..MAX_IDLE).map(|_| p.get()).collect::<Vec<_>>());
        let s = p.stats();
        assert_eq!(
            (s.idle, s.dropped_over_cap),
            (MAX_IDLE as u64, 0),
            "round {round}: the burst after the exits lost idle budget: {before:?} -> {s:?}"
        );
        drop(c);
        assert_accounted(&p, &log, 0);
    }
}

#[test]
fn exited_threads_strand_no_idle_budget_without_faults() {
    exited_threads_strand_no_idle_budget(false);
}

#[test]
fn exited_threads_strand_no_idle_budget_with_panicking_factories_and_resets() {
    exited_threads_strand_no_idle_budget(true);
}
