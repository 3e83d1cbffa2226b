//! Concurrency stress tests: Go's `TestStress_NoUseAfterFree`, made harder, plus the
//! factory-call bound of the hot-swap pattern and concurrent writers.
//!
//! Everything is bounded by iteration counts, never by time, and nothing sleeps: threads
//! wait for each other only on the container's own state (a version changing) or on
//! counters the other threads bump.
//!
//! A retired version goes back to its pool only at a reclamation, never at a guard's drop:
//! the final accounting calls `poolswap::reclaim` first, and the tests take [`serial`].

#[path = "support/serial.rs"]
mod serial;

use serial::serial;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Barrier};
use std::thread;

use poolswap::{Container, Guard, Pool, Pooled};

#[path = "support/tracked.rs"]
mod tracked;

use tracked::scaled;

const DATA_LEN: usize = 32;

/// A version: who wrote it, its contents, and marks that reset changes.
struct Payload {
    writer: u64,
    seq: u64,
    /// `DATA_LEN` copies of `stamp(writer, seq)` while published; emptied by reset.
    data: Vec<u64>,
    /// Set by reset: a reader holding a guard must never see it set.
    recycled: AtomicBool,
    /// Bumped by reset: must not change while a guard is held.
    generation: AtomicU64,
    drops: Arc<AtomicUsize>,
}

impl Drop for Payload {
    fn drop(&mut self) {
        self.drops.fetch_add(1, SeqCst);
    }
}

fn stamp(writer: u64, seq: u64) -> u64 {
    (writer << 32) | seq
}

/// What a reader saw when it acquired a version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Snapshot {
    writer: u64,
    seq: u64,
    generation: u64,
}

/// Checks a version a guard holds is intact and returns what it holds.
fn check(p: &Payload) -> Snapshot {
    assert!(
        !p.recycled.load(SeqCst),
        "use after free: a held version was recycled"
    );
    assert_eq!(p.data.len(), DATA_LEN, "a held version was reset");
    let want = stamp(p.writer, p.seq);
    assert!(
        p.data.iter().all(|&d| d == want),
        "a held version's contents changed"
    );
    Snapshot {
        writer: p.writer,
        seq: p.seq,
        generation: p.generation.load(SeqCst),
    }
}

/// Checks a held version is still the one first seen.
fn recheck(g: &Guard<Payload>, seen: Snapshot) {
    assert_eq!(check(g), seen, "a held version changed under its guard");
}

/// How many payloads one pool made and dropped.
#[derive(Default)]
struct Counts {
    created: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
}

impl Counts {
    fn created(&self) -> usize {
        self.created.load(SeqCst)
    }

    fn dropped(&self) -> usize {
        self.drops.load(SeqCst)
    }

    /// Every payload made was dropped: call once the container and the pool are gone.
    fn assert_all_dropped(&self) {
        assert_eq!(self.dropped(), self.created(), "created == dropped");
    }
}

/// A container on a fresh pool of payloads whose first version is `(writer, seq)`, with the
/// pool's handle and counts.
fn payload_container(writer: u64, seq: u64) -> (Pool<Payload>, Container<Payload>, Counts) {
    let counts = Counts::default();
    let drops = Arc::clone(&counts.drops);
    let created = Arc::clone(&counts.created);
    let pool = Pool::new(
        move || {
            created.fetch_add(1, SeqCst);
            Payload {
                writer: u64::MAX,
                seq: 0,
                data: Vec::with_capacity(DATA_LEN),
                recycled: AtomicBool::new(false),
                generation: AtomicU64::new(0),
                drops: Arc::clone(&drops),
            }
        },
        |p| {
            p.recycled.store(true, SeqCst);
            p.generation.fetch_add(1, SeqCst);
            p.data.clear();
            true
        },
    );
    let c = Container::new(&pool, stamped(pool.get(), writer, seq));
    (pool, c, counts)
}

/// Fills a fresh object from the pool as `(writer, seq)`.
fn fill(c: &Container<Payload>, writer: u64, seq: u64) -> Pooled<'_, Payload> {
    stamped(c.get_new(), writer, seq)
}

/// Fills `next`, just handed out by the pool, as `(writer, seq)`.
fn stamped(mut next: Pooled<'_, Payload>, writer: u64, seq: u64) -> Pooled<'_, Payload> {
    assert!(
        next.data.is_empty(),
        "get_new handed out an object that was not reset"
    );
    next.writer = writer;
    next.seq = seq;
    next.data
        .extend(std::iter::repeat(stamp(writer, seq)).take(DATA_LEN));
    next.recycled.store(false, SeqCst);
    next
}

/// Decrements a counter when dropped, even by a panic, so no thread waits forever.
struct CountDown<'a>(&'a AtomicUsize);
impl Drop for CountDown<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// Go's `TestStress_NoUseAfterFree`, harder: several writers and readers; readers hold
/// guards (and clones) across updates, re-check them many times, and send some (clones,
/// and guards holding the reader's hazard slots) to a checker thread that holds them
/// longer and drops them there. No reader may ever see a held version reset.
#[test]
fn stress_no_use_after_free() {
    let _serial = serial();
    let writers = scaled(3, 2);
    let readers = scaled(4, 1);
    let updates_per_writer = scaled(40_000, 25);
    let reads_per_reader = scaled(60_000, 30);
    let hold = 4; // guards a reader keeps at once
    let hold_across_every = scaled(200, 10); // then wait until the version changes

    let (pool, c, counts) = payload_container(99, 0);

    let start = Barrier::new(writers + readers);
    let writers_alive = AtomicUsize::new(writers);
    let readers_alive = AtomicUsize::new(readers);
    let held_across_updates = AtomicUsize::new(0);
    let (to_checker, checker_rx) = mpsc::channel::<(Guard<Payload>, Snapshot)>();

    let last_seqs: Vec<u64> = thread::scope(|s| {
        // The checker: holds guards sent by readers, re-checking them on every arrival.
        s.spawn(move || {
            let mut kept: VecDeque<(Guard<Payload>, Snapshot)> = VecDeque::new();
            for (g, seen) in checker_rx {
                recheck(&g, seen);
                kept.push_back((g, seen));
                if kept.len() > 8 {
                    kept.pop_front();
                }
                for (g, seen) in &kept {
                    recheck(g, *seen);
                }
            }
            for (g, seen) in &kept {
                recheck(g, *seen);
            }
        });

        for r in 0..readers {
            let (c, start, to_checker) = (&c, &start, to_checker.clone());
            let (writers_alive, readers_alive) = (&writers_alive, &readers_alive);
            let held_across_updates = &held_across_updates;
            s.spawn(move || {
                let _alive = CountDown(readers_alive);
                start.wait();
                let mut held: VecDeque<(Guard<Payload>, Snapshot)> = VecDeque::new();
                let mut last_seen: HashMap<u64, u64> = HashMap::new();
                for i in 0..reads_per_reader {
                    let g = c.acquire();
                    let seen = check(&g);
                    // Coherence: one writer's versions appear in the order it wrote them.
                    let prev = last_seen.entry(seen.writer).or_insert(seen.seq);
                    assert!(*prev <= seen.seq, "saw writer {} go back", seen.writer);
                    *prev = seen.seq;

                    if i % 3 == r % 3 {
                        let clone = Guard::clone(&g);
                        assert!(Guard::ptr_eq(&clone, &g));
                        held.push_back((clone, seen));
                    }
                    if i % 17 == 0 {
                        to_checker.send((Guard::clone(&g), seen)).unwrap();
                    }
                    if i % 29 == 0 {
                        // A guard that holds one of this thread's hazard slots (while any
                        // is free), moved to the checker, which drops it there.
                        let moved = c.acquire();
                        let seen_moved = check(&moved);
                        to_checker.send((moved, seen_moved)).unwrap();
                    }
                    if i % hold_across_every == 0 {
                        // Hold `g` until the container moves on (or the writers are gone).
                        while writers_alive.load(SeqCst) > 0 {
                            let cur = c.acquire();
                            if !Guard::ptr_eq(&cur, &g) {
                                held_across_updates.fetch_add(1, SeqCst);
                                break;
                            }
                            drop(cur);
                            thread::yield_now();
                        }
                    }
                    recheck(&g, seen);
                    held.push_back((g, seen));
                    while held.len() > hold {
                        held.pop_front();
                    }
                    for (g, seen) in &held {
                        recheck(g, *seen);
                    }
                }
            });
        }
        drop(to_checker);

        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let (c, start, writers_alive) = (&c, &start, &writers_alive);
                let readers_alive = &readers_alive;
                s.spawn(move || {
                    let _alive = CountDown(writers_alive);
                    start.wait();
                    let mut seq = 0u64;
                    // Writer 0 keeps going until the readers are done, so every reader's
                    // hold-until-changed wait ends by a real update.
                    while (seq as usize) < updates_per_writer
                        || (w == 0 && readers_alive.load(SeqCst) > 0)
                    {
                        seq += 1;
                        c.update(fill(c, w as u64, seq));
                    }
                    seq
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    // Every reader's hold-until-changed wait ended by an update (writer 0 outlived them).
    let holds = readers * reads_per_reader.div_ceil(hold_across_every);
    assert_eq!(held_across_updates.load(SeqCst), holds);

    // Last writer wins: the current version is some writer's last update.
    let cur = c.acquire();
    let seen = check(&cur);
    assert_eq!(seen.seq, last_seqs[seen.writer as usize]);
    drop(cur);

    // Every object is accounted for: the current one, the idle ones, the dropped ones,
    // once the retired ones are back.
    poolswap::reclaim();
    let stats = pool.stats();
    let made = counts.created() as u64;
    assert_eq!(stats.created, made);
    assert_eq!(
        stats.idle + 1 + stats.dropped_over_cap + stats.discarded,
        made,
        "{stats:?}"
    );
    assert_eq!(
        counts.dropped() as u64,
        stats.dropped_over_cap + stats.discarded
    );
    drop(c);
    drop(pool);
    counts.assert_all_dropped();
}

/// The hot-swap pattern: one writer, readers on other threads dropping the last guards on
/// old versions (stores, which return nothing). The writer's reclamations (a `get_new`
/// that finds nothing idle reclaims first) bring them back: a handful of factory calls.
#[test]
fn few_factory_calls_with_readers_releasing_on_other_threads() {
    let _serial = serial();
    let updates = scaled(10_000, 40);
    let readers = scaled(2, 1);
    let (pool, c, counts) = payload_container(0, 0);
    let writer_done = AtomicBool::new(false);
    let reads = AtomicUsize::new(0);
    let start = Barrier::new(readers + 1);

    thread::scope(|s| {
        for _ in 0..readers {
            let (c, writer_done, reads, start) = (&c, &writer_done, &reads, &start);
            s.spawn(move || {
                start.wait();
                let mut n = 0usize;
                // At least a few reads each, then until the writer is done.
                while n < 10 || !writer_done.load(SeqCst) {
                    let g = c.acquire();
                    let seen = check(&g);
                    if n % 4 == 0 {
                        let g2 = Guard::clone(&g);
                        drop(g); // the clone may be the last reference: dropped here
                        recheck(&g2, seen);
                    }
                    n += 1;
                }
                reads.fetch_add(n, SeqCst);
            });
        }
        start.wait();
        for seq in 1..=updates as u64 {
            c.update(fill(&c, 0, seq));
        }
        writer_done.store(true, SeqCst);
    });

    let stats = pool.stats();
    let made = counts.created();
    assert!(
        made <= 8,
        "{made} objects made for {updates} updates: {stats:?}"
    );
    assert_eq!(stats.created, made as u64);
    assert_eq!(stats.misses, made as u64);
    assert_eq!(
        stats.hits + stats.misses,
        updates as u64 + 1,
        "every get_new is a hit or a miss"
    );
    assert_eq!(c.acquire().seq, updates as u64);
    assert!(reads.load(SeqCst) >= 10 * readers);
    drop((c, pool));
    counts.assert_all_dropped();
}

/// Several writers update concurrently with `swap`: every published version (the first one
/// included) is displaced exactly once, except the one left current, which is some writer's
/// last.
#[test]
fn concurrent_writers_last_writer_wins() {
    let _serial = serial();
    let writers = scaled(4, 2);
    let updates = scaled(2_000, 20);
    const FIRST: (u64, u64) = (99, 0);
    let (pool, c, counts) = payload_container(FIRST.0, FIRST.1);
    let start = Barrier::new(writers);

    let displaced: Vec<Vec<(u64, u64)>> = thread::scope(|s| {
        let handles: Vec<_> = (0..writers as u64)
            .map(|w| {
                let (c, start) = (&c, &start);
                s.spawn(move || {
                    start.wait();
                    let mut displaced = Vec::with_capacity(updates);
                    for seq in 1..=updates as u64 {
                        let old = c.swap(fill(c, w, seq));
                        let seen = check(&old);
                        // Ours, and the retired list's, which no reclamation (maybe on
                        // another writer's thread, just now) takes while we hold one;
                        // no reader's.
                        assert_eq!(poolswap::internals::ref_count(&old), 2);
                        displaced.push((seen.writer, seen.seq));
                    }
                    displaced
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let cur = c.acquire();
    let last = check(&cur);
    assert_eq!(
        last.seq, updates as u64,
        "the current version is a writer's last update"
    );

    let mut all: Vec<(u64, u64)> = displaced.into_iter().flatten().collect();
    all.push((last.writer, last.seq));
    all.sort_unstable();
    let mut expected: Vec<(u64, u64)> = (0..writers as u64)
        .flat_map(|w| (1..=updates as u64).map(move |seq| (w, seq)))
        .collect();
    expected.push(FIRST);
    expected.sort_unstable();
    assert_eq!(
        all.len(),
        expected.len(),
        "one version lost or displaced twice"
    );
    assert_eq!(all, expected, "every version displaced exactly once");
    drop(cur);

    // Every version but the current one back in the pool (or dropped over the bound).
    poolswap::reclaim();
    let stats = pool.stats();
    let made = counts.created() as u64;
    assert_eq!(stats.idle + 1 + stats.dropped_over_cap, made, "{stats:?}");
    drop((c, pool));
    counts.assert_all_dropped();
}
