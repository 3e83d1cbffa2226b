//! Loom models of the op log (`poolswap::oplog`): a writer replays and publishes batches
//! on versions the pool hands out again while readers hold, read and drop guards on other
//! threads.
//!
//! Run in both builds (as CI does):
//!
//! ```text
//! RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_oplog
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_oplog
//! ```
//!
//! The crate's debug assertions load atomics, which are loom operations of their own, so
//! each build explores interleavings the other does not: a model's assertions must hold in
//! every execution, whichever pass, getter or thread returns a version.
//!
//! Every version is a `Vec<usize>` that batch `n` extends with `n`, so the version numbered
//! `s` must be exactly `[1, 2, ..., s]`: a reader that sees anything else saw a version
//! while the writer replayed onto it (loom's `UnsafeCell` tracking would also report the
//! race itself), or a replay that skipped or repeated a batch.
#![cfg(loom)]

// std's atomics count across loom's executions.
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use loom::thread;
use poolswap::oplog::{OpLog, VecOp, Versioned};
use poolswap::Cache;

type Writer = OpLog<Vec<usize>, VecOp<usize>>;

/// Runs a model with at most `bound` preemptions (or fewer, if `LOOM_MAX_PREEMPTIONS` says
/// so).
fn bounded(bound: usize, f: impl Fn() + Send + Sync + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(bound, |b| b.min(bound)));
    builder.check(f);
}

/// Checks that `version` holds exactly the batches up to its number.
fn check(version: &Versioned<Vec<usize>>) {
    let seq = Versioned::seq(version) as usize;
    assert!(
        version.iter().copied().eq(1..=seq),
        "version {seq} holds {:?}",
        **version
    );
}

/// Publishes batch `n`.
fn publish(w: &mut Writer, n: usize) {
    w.append(VecOp::Push(n));
    assert_eq!(w.publish(), n as u64);
}

/// A reader thread that acquires `w`'s container, checks the version, lets it go, and
/// does it again.
fn read_twice(w: &Writer) -> thread::JoinHandle<()> {
    let table = w.read_handle();
    thread::spawn(move || {
        let g = table.acquire();
        check(&g);
        drop(g);
        let g = table.acquire();
        check(&g);
    })
}

/// A reader acquires while the writer publishes three batches: the third takes back the
/// version the reader may still hold (if its guard is gone) and replays onto it.
#[test]
fn replay_vs_guard_on_the_version_being_reused() {
    bounded(3, || {
        let mut w: Writer = OpLog::new(Vec::new());
        publish(&mut w, 1);
        let reader = read_twice(&w);
        for n in 2..=3 {
            publish(&mut w, n);
        }
        reader.join().unwrap();
        check(&w.read_handle().acquire());
    });
}

/// A reader's `Cache` reloads across publishes and never sees a version being replayed.
#[test]
fn publish_vs_cache() {
    bounded(3, || {
        let mut w: Writer = OpLog::new(Vec::new());
        // The container itself: a `Cache` needs it, and a `ReadHandle` does not give it.
        let table = w.loom_container().clone();
        let reader = thread::spawn(move || {
            let mut cache = Cache::new(table);
            let first = cache.load().len();
            check_slice(cache.load());
            let second = cache.load().len();
            assert!(first <= second, "the cache went back in time");
        });
        publish(&mut w, 1);
        publish(&mut w, 2);
        reader.join().unwrap();
    });
}

/// `Cache::load` gives `&Versioned<..>`; its contents are checked like a guard's.
fn check_slice(v: &Versioned<Vec<usize>>) {
    check(v);
}

/// With an op log that keeps nothing past the current batch, a version held by a reader across
/// publishes comes back too old to replay and is copied whole: the reader's version stays
/// intact while the writer truncates the op log and copies.
#[test]
fn truncation_vs_a_held_version() {
    bounded(2, || {
        let mut w: Writer = OpLog::builder(Vec::new()).max_ops(0).build();
        publish(&mut w, 1);
        let table = w.read_handle();
        let reader = thread::spawn(move || {
            let g = table.acquire();
            check(&g);
            thread::yield_now();
            check(&g);
        });
        for n in 2..=3 {
            publish(&mut w, n);
        }
        reader.join().unwrap();
        let now = w.read_handle().acquire();
        check(&now);
        assert_eq!(Versioned::seq(&now), 3);
    });
}

/// Three versions and an op log of two operations: each publish first reclaims the version
/// the last one retired (a pass on the writer's thread, while the reader may still hold
/// it) and takes the freshest returned version from its depot, and once the op log is over
/// half its bound it catches the idle spare up. The reader must never see a version being
/// replayed, whichever of them the writer writes.
#[test]
fn publish_time_reclamation_and_spare_catch_up_vs_a_reader() {
    bounded(2, || {
        let mut w: Writer = OpLog::builder(Vec::new()).versions(3).max_ops(2).build();
        publish(&mut w, 1);
        let reader = read_twice(&w);
        for n in 2..=4 {
            publish(&mut w, n);
        }
        reader.join().unwrap();
        let now = w.read_handle().acquire();
        check(&now);
        assert_eq!(Versioned::seq(&now), 4);
    });
}

/// `catch_up` between publishes, while a reader acquires, checks and drops guards: its
/// pass may find the version the last publish retired still held (the reader is reading
/// it) or not, and it replays only on versions it took from the pool. The reader must never
/// see a version being replayed, and the publish after a catch-up publishes a whole
/// version whichever way the race went.
#[test]
fn catch_up_vs_a_reader() {
    bounded(2, || {
        let mut w: Writer = OpLog::builder(Vec::new()).versions(3).build();
        publish(&mut w, 1);
        let reader = read_twice(&w);
        publish(&mut w, 2);
        w.catch_up();
        publish(&mut w, 3);
        reader.join().unwrap();
        let now = w.read_handle().acquire();
        check(&now);
        assert_eq!(Versioned::seq(&now), 3);
    });
}

/// The pool drops an idle spare (two `trim`s on another thread) while the writer publishes
/// and may take that spare: the spare's drop reports its number to the writer, whose next
/// publish forgets it, so the writer ends up tracking exactly the versions still alive
/// besides the current one, whichever way the race went, and never one that is gone.
#[test]
fn a_dropped_spare_vs_publish() {
    bounded(2, || {
        let mut w: Writer = OpLog::builder(Vec::new()).versions(2).build();
        let pool = w.pool().clone();
        let trimmer = thread::spawn(move || {
            pool.trim();
            pool.trim();
        });
        publish(&mut w, 1);
        publish(&mut w, 2);
        trimmer.join().unwrap();
        publish(&mut w, 3);
        let now = w.read_handle().acquire();
        check(&now);
        let live = w.pool().stats().live;
        assert_eq!(w.stats().versions as u64, live - 1, "{:?}", w.stats());
    });
}

/// The publish's bounded wait (`OpLogBuilder::max_wait`) against a reader that leaves the
/// version the last publish retired: the reader holds version 1 while batch 2 retires it,
/// then lets go on its thread while batch 3's publish waits for it (under loom the wait
/// makes at most two looks, whatever the clock, and yields between them). Where the wait
/// gets it back, batch 3 is written on it; where it times out, batch 3 takes the spare
/// built with the op log; the pool never makes a version; no reader sees a version being
/// written; and some execution gets it back (fails without the wait's pass,
/// `oplog/wait.rs`).
#[test]
fn bounded_wait_vs_a_reader_that_leaves() {
    bounded(3, || {
        let mut w: Writer = OpLog::new(Vec::new());
        publish(&mut w, 1);
        let table = w.read_handle();
        let held = table.acquire(); // version 1
        publish(&mut w, 2); // retires version 1
        let reader = thread::spawn(move || {
            check(&held);
            drop(held);
        });
        publish(&mut w, 3); // waits for version 1
        reader.join().unwrap();
        check(&table.acquire());
        let stats = w.stats();
        // No wait at all if the reader let go before batch 3's publish began; no second
        // wait, the spare being idle.
        assert!(stats.waited + stats.wait_timeouts <= 1, "{stats:?}");
        assert_eq!(
            (w.pool().stats().created, stats.full_syncs),
            (3, 0),
            "a publish made a version: {stats:?}"
        );
        if stats.waited == 1 {
            GOT_IT_BACK.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    assert!(
        GOT_IT_BACK.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "in no execution did the wait get the version back"
    );
}

/// Executions of [`bounded_wait_vs_a_reader_that_leaves`] whose wait got the version back
/// (std's atomic: it counts across loom's executions).
static GOT_IT_BACK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The bounded wait against a reader that does not leave: it holds version 1 through
/// batch 3's publish, which waits, times out (it never blocks on the reader), and writes
/// the spare; the held one stays whole.
#[test]
fn bounded_wait_vs_a_reader_that_stays() {
    bounded(3, || {
        let mut w: Writer = OpLog::new(Vec::new());
        publish(&mut w, 1);
        let table = w.read_handle();
        let holder = thread::spawn(move || {
            let g = table.acquire();
            check(&g);
            g
        });
        let held = holder.join().unwrap();
        publish(&mut w, 2);
        publish(&mut w, 3);
        check(&held);
        check(&w.read_handle().acquire());
        let stats = w.stats();
        if Versioned::seq(&held) == 1 {
            // Batch 2 retired it: batch 3 waited for it and timed out.
            assert_eq!((stats.waited, stats.wait_timeouts), (0, 1), "{stats:?}");
        }
    });
}

/// With two versions, a reader holds the one the last publish retired while the next
/// publish runs: no version within the op log's reach is idle, so after the bounded wait
/// the publish waits again, for any version (rather than copy one whole: `oplog/wait.rs`),
/// and makes a new one from the factory only once that wait timed out too. The reader lets
/// go on its thread after some yields (each makes loom run another thread; a wait yields
/// once per look): two, so that the second wait gets the version back, or four, so that
/// both time out. In every execution: no reader sees a version being written, the pool
/// made a version exactly when both waits timed out, and then the publish copied it whole.
/// Some execution's second wait got the held version back (fails if the publish copies at
/// once), and some made a version.
#[test]
fn a_publish_that_finds_every_version_held_waits_before_it_copies() {
    static SECOND_WAIT_GOT_IT: AtomicUsize = AtomicUsize::new(0);
    static MADE_ONE: AtomicUsize = AtomicUsize::new(0);
    for yields in [2, 4] {
        bounded(3, move || {
            let mut w: Writer = OpLog::builder(Vec::new()).versions(2).build();
            publish(&mut w, 1);
            let table = w.read_handle();
            let held = table.acquire(); // version 1
            publish(&mut w, 2); // retires version 1; version 0 is written again
            let reader = thread::spawn(move || {
                check(&held);
                for _ in 0..yields {
                    thread::yield_now();
                }
                drop(held);
            });
            publish(&mut w, 3); // version 1 or a new one
            reader.join().unwrap();
            check(&table.acquire());
            let stats = w.stats();
            let made = w.pool().stats().created - 2;
            assert!(made <= 1 && stats.wait_timeouts <= 2, "{stats:?}");
            assert_eq!(made, stats.full_syncs, "{stats:?}");
            assert_eq!(
                made == 1,
                stats.wait_timeouts == 2,
                "a version made while a wait could still get one back, or none made: {stats:?}"
            );
            if stats.wait_timeouts == 1 && stats.waited == 1 {
                SECOND_WAIT_GOT_IT.fetch_add(1, Relaxed);
            }
            MADE_ONE.fetch_add(made as usize, Relaxed);
        });
    }
    assert!(
        SECOND_WAIT_GOT_IT.load(Relaxed) > 0,
        "in no execution did the wait for any version get the held one back"
    );
    assert!(
        MADE_ONE.load(Relaxed) > 0,
        "in no execution did both waits time out"
    );
}

/// A version made because readers held every version (two, and no wait: a copy at once) is
/// dropped once it is idle again (`oplog/spare.rs`) rather than returned to the pool, while
/// a reader acquires the current version: in every execution the reader sees a whole
/// version, and the writer ends with the two versions it keeps (the third dropped, counted
/// as trimmed), each holding exactly its batches. Fails if the made version is kept, or if
/// the reader could read a version being dropped or written.
#[test]
fn a_version_made_while_readers_held_every_version_is_dropped_once_idle() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(3, |b| b.min(3)));
    // Eight publishes make a long execution: past loom's default of 1,000 branches.
    builder.max_branches = 10_000;
    builder.check(|| {
        let mut w: Writer = OpLog::builder(Vec::new())
            .versions(2)
            .max_wait(Duration::ZERO)
            .build();
        publish(&mut w, 1);
        let held = w.read_handle().acquire(); // version 1
        publish(&mut w, 2); // the other version; the next publish finds both held
        let current = w.read_handle().acquire();
        publish(&mut w, 3); // a new version, copied whole
        assert_eq!(w.pool().stats().created, 3);
        drop((held, current));
        let table = w.read_handle();
        let reader = thread::spawn(move || check(&table.acquire()));
        publish(&mut w, 4);
        publish(&mut w, 5);
        reader.join().unwrap();
        // The first idle version past the two kept is dropped at a spare's catch-up: by
        // now, or a few publishes later if the reader held one across these.
        for n in 6..=8 {
            publish(&mut w, n);
        }
        check(&w.read_handle().acquire());
        let stats = w.pool().stats();
        assert_eq!(
            (stats.live, stats.trimmed),
            (2, 1),
            "{stats:?} {:?}",
            w.stats()
        );
    });
}
