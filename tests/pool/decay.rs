//! The pool looks after itself: the adaptive idle bound keeps a producer/consumer pipeline's
//! working set, `trim` brings the bound back down, and `spawn_trimmer` shrinks a pool nobody
//! touches. Decay on a clock advanced by hand is tested in `src/pool/tests.rs` (the clock is
//! crate-private).

use std::sync::mpsc::sync_channel;
use std::thread;
use std::time::{Duration, Instant};

use poolswap::Pool;

use crate::serial;
use crate::tracked::{scaled, tracked_builder, Log, Tracked, DEFAULT_MAX_IDLE, MAGAZINE_SIZE};

/// Gets `n` objects on a new thread and drops them there, then joins it: its exit moves its
/// magazine to its depot, so every object is where decay (or `trim`) reaches it.
fn burst_on_another_thread(p: &Pool<Tracked>, n: usize) {
    thread::scope(|s| {
        s.spawn(|| drop((0..n).map(|_| p.get()).collect::<Vec<_>>()))
            .join()
            .unwrap();
    });
}

/// A pipeline: a producer thread gets objects in batches and sends each batch
/// through a channel bounded at `depth` batches to a consumer thread that drops them. More
/// objects are out at once than `DEFAULT_MAX_IDLE`; the adaptive bound keeps them, so after
/// the first batches the producer gets every object from the pool: no object is dropped
/// over the bound, and the factory runs at most as often as the working set is large,
/// however long the run. (Not a rate over the second half alone: that depends on how far the
/// first half's scheduling grew the working set.)
#[test]
fn a_pipeline_larger_than_the_default_bound_stops_building() {
    let _serial = serial();
    let (batch, depth, batches) = if cfg!(miri) {
        (16, 2, 40)
    } else {
        (64, 4, 2_000)
    };
    let log = Log::new();
    let p = tracked_builder(&log).build();
    // Joined explicitly: `join` waits for the thread's exit hook, which moves its magazine
    // to its depot, where the end of `thread::scope` does not; a count taken during that
    // move can miss objects (Miri's scheduler found it: 56 idle of 62 made, none out).
    let run = |batches: usize| {
        thread::scope(|s| {
            let (tx, rx) = sync_channel::<Vec<_>>(depth);
            let consumer = s.spawn(move || rx.into_iter().for_each(drop));
            let producer = s.spawn(|| {
                for _ in 0..batches {
                    tx.send((0..batch).map(|_| p.get()).collect()).unwrap();
                }
                drop(tx);
            });
            producer.join().unwrap();
            consumer.join().unwrap();
        });
    };
    run(batches / 2);
    run(batches / 2);
    let s = p.stats();
    // Out at once at most: the batches in the channel, the one being filled, the one being
    // dropped, and one the consumer received while the producer fills the next.
    let working_set = ((depth + 3) * batch) as u64;
    if !cfg!(miri) {
        assert!(working_set > DEFAULT_MAX_IDLE as u64, "the test's premise");
    }
    assert_eq!(s.dropped_over_cap, 0, "{s:?}");
    // Besides the working set, objects idle in the consumer's magazine, which the producer
    // cannot take (at most a magazine per thread, of both threads).
    let most = working_set + 2 * MAGAZINE_SIZE as u64;
    assert!(
        s.created <= most,
        "{} made, at most {most}: {s:?}",
        s.created
    );
    assert_eq!(
        s.idle + s.dropped_over_cap + s.discarded,
        s.created,
        "{s:?}"
    );
}

/// A pool nobody touches shrinks with `spawn_trimmer`; the trimmer exits once the pool's
/// last handle is gone (the join returns).
#[test]
#[cfg_attr(miri, ignore = "real time: the trimmer sleeps between trims")]
fn a_trimmer_shrinks_a_pool_nobody_touches_and_exits_with_it() {
    let _serial = serial();
    let log = Log::new();
    let p = tracked_builder(&log).build();
    burst_on_another_thread(&p, 100);
    let trimmer = p.spawn_trimmer(Duration::from_millis(1)).unwrap();
    assert_eq!(trimmer.thread().name(), Some("poolswap-trim"));
    // A liveness check, not a timing one: two trims drop the burst; a minute is a hang.
    let deadline = Instant::now() + Duration::from_secs(60);
    while p.stats().idle > 0 {
        assert!(Instant::now() < deadline, "never trimmed: {:?}", p.stats());
        thread::yield_now();
    }
    assert_eq!(p.stats().trimmed, 100);
    drop(p);
    trimmer.join().unwrap();
    assert_eq!(log.dropped(), log.made());
}

/// Without decay, `trim` lowers the adaptive bound: a burst raises it (the burst is kept
/// whole), two trims drop the burst and bring the bound back to its floor, and a set
/// `max_idle` never moves.
#[test]
fn trim_brings_the_adaptive_bound_back_down() {
    let _serial = serial();
    let n = scaled(1_000, 300);
    let log = Log::new();
    let p = tracked_builder(&log).build();
    burst_on_another_thread(&p, n);
    assert!(p.stats().max_idle >= n as u64, "{:?}", p.stats());
    assert_eq!(p.stats().idle, n as u64);
    p.trim();
    p.trim();
    assert_eq!((p.stats().idle, p.stats().trimmed), (0, n as u64));
    assert_eq!(p.stats().max_idle, DEFAULT_MAX_IDLE as u64);

    let fixed = tracked_builder(&log).max_idle(10).build();
    burst_on_another_thread(&fixed, n);
    assert_eq!((fixed.stats().max_idle, fixed.stats().idle), (10, 10));
}
