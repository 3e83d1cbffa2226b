//! `get_timeout` (also through `Container::pool`) at the live bound: `None` at the
//! deadline and not much after it, `Some` when an object comes back before it, a plain `get`
//! below the bound or without one.
//!
//! Threads synchronize through channels, never sleeps: a deadline is what the tests
//! measure, not how they order threads. A returner cannot know that the getter already
//! sleeps, so either order must give `Some`; the loom model `timed_get_vs_return`
//! (tests/loom_pool.rs) checks both in every interleaving.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use poolswap::{Container, OptionContainer, Pooled};

use crate::serial;
use crate::tracked::{scaled, signal, tracked_builder, Log};

/// Far longer than any wait below: a getter that gets `None` after it failed.
const NEVER: Duration = Duration::from_secs(60);

/// How far past its deadline a timed getter may return on a busy shared machine: the
/// scheduler's delay, not the crate's (which is one look and one reclamation, microseconds).
const SLACK: Duration = Duration::from_millis(500);

#[test]
fn get_timeout_returns_none_at_the_deadline_when_the_pool_stays_full() {
    let _serial = serial();
    let log = Log::new();
    let pool = tracked_builder(&log).max_live(1).build();
    let held = pool.get();
    for timeout in [
        Duration::ZERO,
        Duration::from_millis(1),
        Duration::from_millis(30),
    ] {
        let start = Instant::now();
        assert!(
            pool.get_timeout(timeout).is_none(),
            "the only object is out"
        );
        let took = start.elapsed();
        assert!(
            took >= timeout,
            "gave up after {took:?}, before {timeout:?}"
        );
        assert!(
            took <= timeout + SLACK,
            "gave up after {took:?} for {timeout:?}"
        );
    }
    assert!(pool.get_timeout(Duration::from_millis(1)).is_none());
    // The waits left nothing behind: no permit taken, the object still the only one.
    let s = pool.stats();
    assert_eq!((s.live, s.created), (1, 1), "{s:?}");
    drop(held);
    let again = pool.get_timeout(Duration::ZERO).expect("back, so no wait");
    assert_eq!(again.id, 0);
}

#[test]
fn get_timeout_returns_an_object_given_back_on_another_thread_before_the_deadline() {
    let _serial = serial();
    let log = Log::new();
    let pool = tracked_builder(&log).max_live(1).build();
    for _ in 0..scaled(50, 3) {
        let held = pool.get();
        let (got_tx, got) = mpsc::channel();
        thread::scope(|s| {
            let (started_tx, started) = signal();
            let pool = &pool;
            s.spawn(move || {
                drop(started_tx);
                // Waits for `held`, unless it is already back.
                let obj = pool.get_timeout(NEVER).map(|o| o.id);
                got_tx.send(obj).unwrap();
            });
            started.wait();
            s.spawn(move || drop(held)); // returned on a third thread
        });
        assert_eq!(got.recv().unwrap(), Some(0), "the one object was handed on");
    }
    assert_eq!(log.made(), 1);
}

#[test]
fn get_timeout_is_get_below_the_bound_and_without_one() {
    let _serial = serial();
    let log = Log::new();
    let unbounded = tracked_builder(&log).build();
    let held: Vec<_> = (0..20)
        .map(|_| unbounded.get_timeout(Duration::ZERO).expect("no bound"))
        .collect();
    assert_eq!(unbounded.stats().live, 20);
    drop(held);
    let bounded = tracked_builder(&log).max_live(2).build();
    let a = bounded.get_timeout(Duration::ZERO).expect("room for two");
    let b = bounded
        .get_timeout(Duration::MAX)
        .map(Pooled::into_owned)
        .expect("room for two");
    assert!(bounded.get_timeout(Duration::ZERO).is_none());
    drop((a, b));
}

#[test]
fn a_timed_writer_gets_the_old_version_once_its_last_reader_lets_go() {
    let _serial = serial();
    let log = Log::new();
    let pool = tracked_builder(&log).max_live(2).build();
    let container = Container::new(&pool, pool.get()); // version 0
    let reader = container.acquire();
    container.update(container.get_new()); // version 0 retired, still read
    assert!(
        container
            .pool()
            .get_timeout(Duration::from_millis(2))
            .is_none(),
        "both objects are in use"
    );
    let (got_tx, got) = mpsc::channel();
    thread::scope(|s| {
        let (started_tx, started) = signal();
        let c = &container;
        s.spawn(move || {
            drop(started_tx);
            // At the bound: waits for the reader. The reader's drop is a store that wakes
            // nobody: the getter's reclamation (before it sleeps, or at a poll) finds it.
            got_tx
                .send(c.pool().get_timeout(NEVER).map(|o| o.id))
                .unwrap();
        });
        started.wait();
        drop(reader);
    });
    assert_eq!(got.recv().unwrap(), Some(0), "the old version was reused");
    assert_eq!(log.made(), 2);

    let option = OptionContainer::from(container);
    assert!(option.pool().get_timeout(Duration::ZERO).is_some());
}

/// Timed getters giving up all the while beside blocking ones: every blocking `get`
/// completes and the bound holds. (A wake-up lost on a timed getter would show here only as
/// a delay, the blocking getter's 20 ms backstop poll: the loom model
/// `timed_get_vs_blocking_get_vs_return` checks that none is lost.)
#[test]
fn timed_getters_giving_up_beside_blocking_ones_keep_the_bound() {
    let _serial = serial();
    const MAX: usize = 2;
    let log = Log::new();
    let pool = tracked_builder(&log).max_live(MAX).build();
    let rounds = scaled(2000, 30);
    let (done_tx, done) = signal();
    thread::scope(|s| {
        for _ in 0..2 {
            let pool = &pool;
            let done_tx = done_tx.clone();
            s.spawn(move || {
                for _ in 0..rounds {
                    let obj = pool.get();
                    assert!(pool.stats().live <= MAX as u64);
                    drop(obj);
                }
                drop(done_tx);
            });
        }
        drop(done_tx);
        let pool = &pool;
        let timed = s.spawn(move || {
            let (mut got, mut gave_up) = (0u64, 0u64);
            let stop = thread::spawn(move || done.wait());
            while !stop.is_finished() {
                match pool.get_timeout(Duration::from_micros(50)) {
                    Some(obj) => {
                        got += 1;
                        drop(obj);
                    }
                    None => gave_up += 1,
                }
            }
            (got, gave_up)
        });
        let (got, gave_up) = timed.join().unwrap();
        assert!(got + gave_up > 0);
    });
    assert!(log.peak_alive() <= MAX, "{} existed", log.peak_alive());
}
