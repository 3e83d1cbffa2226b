//! The live bound (`PoolBuilder::max_live`): how many objects exist at once, idle and in
//! use together. Checked through each `Tracked` object's own count of how many exist (an
//! exact high-water mark: counted as the factory builds one and as one is dropped), and
//! through `PoolStats::live`.
//!
//! Threads that must wait for one another synchronize through channels, never sleeps. A
//! test that wants a `get` to wait cannot know, from outside, that it does wait rather than
//! find the object already back: both orders must work, and the loom model
//! `max_live_waiter_is_woken_by_a_return_on_another_thread` (tests/loom_pool.rs) checks the
//! waiting one in every interleaving.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc;
use std::thread;

use poolswap::{Container, Pool};

use crate::serial;
use crate::tracked::{panic_message, scaled, signal, tracked_builder, Log, Tracked};

fn bounded(log: &std::sync::Arc<Log>, max_live: usize) -> Pool<Tracked> {
    tracked_builder(log).max_live(max_live).build()
}

#[test]
fn the_bound_is_never_exceeded_while_threads_hand_objects_to_each_other() {
    let _serial = serial();
    const MAX: usize = 3;
    let log = Log::new();
    let pool = bounded(&log, MAX);
    let rounds = scaled(2000, 40);
    thread::scope(|s| {
        // Two producers hand each object to a consumer thread, which drops it: objects come
        // back on a thread that never gets one.
        let (tx, rx) = mpsc::channel();
        for _ in 0..2 {
            let tx = tx.clone();
            let pool = &pool;
            s.spawn(move || {
                for i in 0..rounds {
                    let mut obj = pool.get();
                    obj.value = i as u64;
                    tx.send(obj).unwrap();
                }
            });
        }
        drop(tx);
        s.spawn(move || {
            for obj in rx {
                drop(obj);
            }
        });
        // Two more threads get and drop on their own, one at a time.
        for _ in 0..2 {
            let pool = &pool;
            s.spawn(move || {
                for _ in 0..rounds {
                    let obj = pool.get();
                    assert!(pool.stats().live <= MAX as u64);
                    drop(obj);
                }
            });
        }
    });
    assert!(
        log.peak_alive() <= MAX,
        "{} existed at once",
        log.peak_alive()
    );
    let s = pool.stats();
    assert!(s.live <= MAX as u64, "{s:?}");
    assert_eq!(s.live, log.alive() as u64, "{s:?}");
    assert_eq!(s.hits + s.misses, 4 * rounds as u64, "{s:?}");
}

#[test]
fn try_get_returns_none_at_the_bound_and_some_after_a_return() {
    let _serial = serial();
    let log = Log::new();
    let pool = bounded(&log, 2);
    let a = pool.try_get().expect("room for two");
    let b = pool.try_get().expect("room for two");
    assert!(pool.try_get().is_none());
    assert_eq!(pool.stats().live, 2);
    // Returned on another thread: still found by this one.
    thread::scope(|s| {
        s.spawn(move || drop(b));
    });
    let again = pool.try_get().expect("b came back");
    assert_eq!(again.id, 1);
    assert!(again.recycled, "reset ran on it");
    assert!(pool.try_get().is_none());
    drop((a, again));
    assert_eq!(log.made(), 2);
    assert_eq!(log.peak_alive(), 2);
}

#[test]
fn try_get_without_a_bound_always_returns_an_object() {
    let _serial = serial();
    let log = Log::new();
    let pool = tracked_builder(&log).build();
    let held: Vec<_> = (0..50).map(|_| pool.try_get().unwrap()).collect();
    assert_eq!(pool.stats().live, 50);
    drop(held);
}

#[test]
fn a_waiting_get_is_woken_by_a_drop_on_another_thread() {
    let _serial = serial();
    let log = Log::new();
    let pool = bounded(&log, 1);
    for _ in 0..scaled(50, 3) {
        let held = pool.get();
        let (got_tx, got) = mpsc::channel();
        thread::scope(|s| {
            let (started_tx, started) = signal();
            let pool = &pool;
            s.spawn(move || {
                drop(started_tx);
                let obj = pool.get(); // waits for `held`, unless it is already back
                got_tx.send(obj.id).unwrap();
            });
            started.wait();
            thread::scope(|inner| {
                inner.spawn(move || drop(held)); // returned on a third thread
            });
        });
        assert_eq!(got.recv().unwrap(), 0, "the one object was handed on");
    }
    assert_eq!(log.made(), 1);
}

#[test]
fn a_writer_at_the_bound_waits_for_the_last_reader_of_an_old_version() {
    let _serial = serial();
    let log = Log::new();
    let pool = bounded(&log, 2);
    let container = Container::new(&pool, pool.get()); // version 0
    let (acquired_tx, acquired) = signal();
    let (release_tx, release) = signal();
    let (got_tx, got) = mpsc::channel();
    thread::scope(|s| {
        let c = &container;
        let reader = s.spawn(move || {
            let guard = c.acquire();
            drop(acquired_tx);
            release.wait();
            // The last reader of version 0: a store, which wakes nobody. The waiting
            // `get_new` reclaims it (before it sleeps, or at a poll while it sleeps).
            drop(guard);
        });
        acquired.wait();
        let mut next = container.get_new(); // the second object the bound allows
        next.value = 1;
        container.update(next); // version 0 is retired, but the reader still holds it
        let writer = s.spawn(move || {
            let next = c.get_new(); // at the bound: waits for the reader
            got_tx.send(next.id).unwrap();
        });
        drop(release_tx);
        reader.join().unwrap();
        writer.join().unwrap();
    });
    assert_eq!(
        got.recv().unwrap(),
        0,
        "the reader's old version was reused"
    );
    assert_eq!(log.made(), 2);
    assert!(log.peak_alive() <= 2);
}

#[test]
fn a_discarded_object_frees_its_live_permit_for_a_new_one() {
    let _serial = serial();
    let log = Log::new();
    let pool = bounded(&log, 1);
    drop(pool.get());
    log.reject.store(true, SeqCst);
    let fresh = pool
        .try_get()
        .expect("the discard freed the only live permit");
    assert_eq!(fresh.id, 1);
    let s = pool.stats();
    assert_eq!((s.discarded, s.live, s.created), (1, 1, 2), "{s:?}");
    assert_eq!(log.peak_alive(), 1);
}

#[test]
fn trim_clear_and_max_idle_free_live_permits() {
    let _serial = serial();
    let log = Log::new();
    let pool = tracked_builder(&log).max_live(4).max_idle(2).build();
    let held: Vec<_> = (0..4).map(|_| pool.get()).collect();
    assert!(pool.try_get().is_none());
    drop(held); // two stay idle, two are dropped over the idle bound
    let s = pool.stats();
    assert_eq!((s.idle, s.dropped_over_cap, s.live), (2, 2, 2), "{s:?}");
    pool.clear();
    assert_eq!(pool.stats().live, 0);
    pool.prefill(2);
    pool.trim();
    pool.trim();
    let s = pool.stats();
    assert_eq!((s.idle, s.trimmed, s.live), (0, 4, 0), "{s:?}");
    let held: Vec<_> = (0..4).map(|_| pool.try_get().unwrap()).collect();
    assert!(pool.try_get().is_none());
    drop(held);
    assert_eq!(log.peak_alive(), 4);
}

#[test]
fn prefill_stops_at_the_bound() {
    let _serial = serial();
    let log = Log::new();
    let pool = tracked_builder(&log).max_live(3).max_idle(10).build();
    let out = pool.get();
    pool.prefill(10);
    let s = pool.stats();
    assert_eq!((s.idle, s.live, s.created), (2, 3, 3), "{s:?}");
    assert!(pool.try_get().is_some());
    drop(out);
}

#[test]
fn a_panicking_factory_gives_its_live_permit_back() {
    let _serial = serial();
    let log = Log::new();
    let pool = bounded(&log, 1);
    log.panic_in_factory.store(true, SeqCst);
    let err = catch_unwind(AssertUnwindSafe(|| drop(pool.get()))).unwrap_err();
    assert_eq!(panic_message(&*err), "factory failed on purpose");
    assert_eq!(pool.stats().live, 0);
    log.panic_in_factory.store(false, SeqCst);
    assert!(pool.try_get().is_some(), "the live permit is free again");
}

#[test]
#[should_panic(expected = "max_live(0)")]
fn max_live_zero_panics() {
    let _serial = serial();
    let log = Log::new();
    let _ = tracked_builder(&log).max_live(0);
}
