//! Reclamation off the reader's path (issue 19): a guard's drop is a store (or, for a
//! counted guard, a decrement) and never recycles; retired versions go back to their pools
//! only at a reclamation, on a writer's side. Each test here pins one consequence: no reader
//! thread ever runs a reset or a `T::drop`; a forgotten guard does not cost a later thread
//! its hazard slots; a panicking `T::drop` during a reclamation does not keep the rest of
//! the batch from going back; and a `get` waiting at `max_live` is not left asleep by a
//! guard drop that wakes nobody.
//!
//! Every test takes [`serial`]: the retired list and the hazard blocks are the process's.

#[path = "support/tracked.rs"]
mod tracked;

#[path = "support/serial.rs"]
mod serial;

use serial::serial;
use std::mem;
use std::panic::catch_unwind;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Barrier, Mutex, MutexGuard, PoisonError};
use std::thread::{self, ThreadId};
use std::time::Duration;

use poolswap::{Container, Guard, Pool, Reclaimer};

/// Hazard slots per thread, as `Container::acquire`'s docs state it.
const HAZARD_SLOTS: usize = 128;
use tracked::{panic_message, scaled, tracked_builder, Log};

/// Locks `m`, whatever a panicking holder left (the data are plain logs).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

// ---------------------------------------------------------------------------------------
// 1. No reader thread ever runs a reset or a drop.

/// The threads that ran each reset and each drop of one pool's objects.
#[derive(Default)]
struct Threads {
    resets: Mutex<Vec<ThreadId>>,
    drops: Mutex<Vec<ThreadId>>,
}

const WORDS: usize = 8;

/// A version that records where it was reset and dropped. `data` holds `WORDS` copies of
/// `seq` while published; reset empties it.
struct Noted {
    seq: u64,
    data: Vec<u64>,
    threads: Arc<Threads>,
}

impl Drop for Noted {
    fn drop(&mut self) {
        lock(&self.threads.drops).push(thread::current().id());
    }
}

/// Reads a guarded version, checking that it is whole (never reset under a guard).
fn read(v: &Noted) -> u64 {
    assert_eq!(v.data.len(), WORDS, "a held version was reset");
    assert!(v.data.iter().all(|&d| d == v.seq), "a held version changed");
    v.seq
}

/// Decrements a counter when dropped, even by a panic, so that no thread waits for ever.
struct CountDown<'a>(&'a AtomicUsize);

impl Drop for CountDown<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// Readers acquire and drop guards (hazard-slot guards, clones, guards past their
/// `HAZARD_SLOTS`, and guards held until the version they read is retired, so that theirs
/// is the last drop) while a writer updates. A small idle bound makes the reclamations drop
/// objects as well as keep them. Every reset and every drop runs on the writer's thread or
/// on this one (which drops the container and the pool), never on a reader's.
#[test]
fn no_reader_thread_runs_a_reset_or_a_drop() {
    let _serial = serial();
    let readers = scaled(3, 2);
    // Under Miri 40 reads per reader took 105 s (every fourth takes 129 guards); 16 still
    // take each kind of guard 4 times and hold 2 versions until they are retired.
    let reads = scaled(20_000, 16);
    let updates = scaled(20_000, 40);
    let hold_every = scaled(64, 8);

    let threads = Arc::new(Threads::default());
    let made = Arc::new(AtomicUsize::new(0));
    let pool = {
        let (noted, made) = (Arc::clone(&threads), Arc::clone(&made));
        let reset = Arc::clone(&threads);
        Pool::builder(
            move || {
                made.fetch_add(1, SeqCst);
                Noted {
                    seq: 0,
                    data: Vec::with_capacity(WORDS),
                    threads: Arc::clone(&noted),
                }
            },
            move |v: &mut Noted| {
                lock(&reset.resets).push(thread::current().id());
                v.data.clear();
            },
        )
        .max_idle(1)
        .build()
    };
    let mut first = pool.get();
    first.data.resize(WORDS, 0);
    let c = Container::new(&pool, first);

    let start = Barrier::new(readers + 1);
    let readers_alive = AtomicUsize::new(readers);
    let writer_alive = AtomicUsize::new(1);
    let last_drops = AtomicUsize::new(0);
    let (writer, reader_ids) = thread::scope(|s| {
        let reader_handles: Vec<_> = (0..readers)
            .map(|r| {
                let (c, start, last_drops) = (&c, &start, &last_drops);
                let (readers_alive, writer_alive) = (&readers_alive, &writer_alive);
                s.spawn(move || {
                    let _alive = CountDown(readers_alive);
                    start.wait();
                    let mut last = 0;
                    for i in 0..reads {
                        let g = c.acquire();
                        let seq = read(&g);
                        assert!(seq >= last, "saw version {seq} after {last}");
                        last = seq;
                        let g = match (i + r) % 4 {
                            0 => {
                                // A counted clone: dropped, or kept instead of `g`.
                                let clone = Guard::clone(&g);
                                assert!(poolswap::internals::is_counted(&clone));
                                if i % 8 == 0 {
                                    drop(g);
                                    clone
                                } else {
                                    drop(clone);
                                    g
                                }
                            }
                            1 => {
                                // Past the slots: counted guards.
                                let many: Vec<_> =
                                    (0..=HAZARD_SLOTS).map(|_| c.acquire()).collect();
                                assert!(many.iter().any(poolswap::internals::is_counted));
                                many.iter().for_each(|g| {
                                    read(g);
                                });
                                g
                            }
                            _ => g,
                        };
                        if i % hold_every == 0 {
                            // Hold the version until it is retired: then this drop is
                            // often the last of its guards (the one that used to recycle
                            // it). The writer keeps updating while any reader is alive (if
                            // it is gone, its panic fails the test).
                            while writer_alive.load(SeqCst) > 0 {
                                let cur = c.acquire();
                                if !Guard::ptr_eq(&cur, &g) {
                                    break;
                                }
                                drop(cur);
                                thread::yield_now();
                            }
                            read(&g);
                            drop(g);
                            last_drops.fetch_add(1, SeqCst);
                        }
                    }
                    thread::current().id()
                })
            })
            .collect();

        let writer = s.spawn(|| {
            let _alive = CountDown(&writer_alive);
            start.wait();
            let mut seq = 0;
            while seq < updates as u64 || readers_alive.load(SeqCst) > 0 {
                seq += 1;
                let mut next = c.get_new();
                assert!(next.data.is_empty(), "handed out without reset");
                next.seq = seq;
                next.data.resize(WORDS, seq);
                c.update(next);
            }
            thread::current().id()
        });
        let reader_ids: Vec<ThreadId> = reader_handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        (writer.join().unwrap(), reader_ids)
    });

    let resets_in_run = lock(&threads.resets).clone();
    let drops_in_run = lock(&threads.drops).clone();
    drop(c); // a reclamation, on this thread
    drop(pool);
    let here = thread::current().id();
    let resets = lock(&threads.resets).clone();
    let drops = lock(&threads.drops).clone();
    for t in resets.iter().chain(&drops) {
        assert!(
            !reader_ids.contains(t),
            "a reader thread ran a reset or a drop"
        );
        assert!(
            *t == writer || *t == here,
            "an unknown thread ran a reset or a drop"
        );
    }
    assert_eq!(
        last_drops.load(SeqCst),
        readers * reads.div_ceil(hold_every)
    );
    // The test proves something only if the writer reset and dropped objects meanwhile.
    assert!(resets_in_run.contains(&writer), "the writer reset nothing");
    assert!(drops_in_run.contains(&writer), "the writer dropped nothing");
    // Every object dropped once, by the end.
    assert_eq!(drops.len(), made.load(SeqCst), "objects made and dropped");
}

// ---------------------------------------------------------------------------------------
// 2. A forgotten guard does not poison a reused hazard block.

/// A thread that exits with its hazard slots full (guards `mem::forget`-ten, here all of
/// them on one thread and one on another) gives back a block a new thread must not take:
/// it would have fewer slots, perhaps none, for ever. New threads, alive together so that
/// they take every free block, each get all `HAZARD_SLOTS` slot guards.
#[test]
#[cfg_attr(
    miri,
    ignore = "leaks a container and its version on purpose, which Miri reports"
)]
fn a_forgotten_guard_does_not_poison_a_reused_hazard_block() {
    let _serial = serial();
    const NEW_THREADS: usize = 20;
    let pool = Pool::new(|| 0u64, |n: &mut u64| *n = 0);
    // Never dropped: the forgotten guards' slots point at its version for ever.
    let pinned: &'static Container<u64> = Box::leak(Box::new(Container::from_value(&pool, 1)));
    // Two threads, alive together so that each has a block of its own, exit with guards
    // forgotten: all their slots, or one. `join` waits for their exits, and so for their
    // blocks to go back.
    let both_in = Arc::new(Barrier::new(2));
    let dirty: Vec<_> = [HAZARD_SLOTS, 1]
        .into_iter()
        .map(|forgotten| {
            let both_in = Arc::clone(&both_in);
            thread::spawn(move || {
                let guards: Vec<_> = (0..forgotten).map(|_| pinned.acquire()).collect();
                let counted = guards
                    .iter()
                    .filter(|g| poolswap::internals::is_counted(g))
                    .count();
                guards.into_iter().for_each(mem::forget);
                both_in.wait();
                assert_eq!(counted, 0, "the thread's slots were not free");
            })
        })
        .collect();
    for t in dirty {
        t.join().unwrap();
    }

    let c = Container::from_value(&pool, 2);
    let all_in = Barrier::new(NEW_THREADS);
    thread::scope(|s| {
        let handles: Vec<_> = (0..NEW_THREADS)
            .map(|_| {
                let (c, all_in) = (&c, &all_in);
                s.spawn(move || {
                    let guards: Vec<_> = (0..HAZARD_SLOTS).map(|_| c.acquire()).collect();
                    let counted = guards
                        .iter()
                        .filter(|g| poolswap::internals::is_counted(g))
                        .count();
                    // Every thread holds its block until all have taken one; then checks.
                    all_in.wait();
                    assert_eq!(
                        counted, 0,
                        "a new thread took a block with forgotten guards in it"
                    );
                    assert!(guards.iter().all(|g| **g == 2));
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
}

// ---------------------------------------------------------------------------------------
// 3. A panicking `T::drop` does not stop a reclamation's batch.

/// A version whose drop logs its id, and panics if armed.
struct Bomb {
    id: usize,
    armed: bool,
    dropped: Arc<Mutex<Vec<usize>>>,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        lock(&self.dropped).push(self.id);
        if self.armed {
            panic!("drop {} failed on purpose", self.id);
        }
    }
}

/// With `max_idle(0)`, a reclamation drops every version it returns. One of them panics in
/// its drop: the panic reaches the caller of `reclaim`, after every other version of the
/// batch was dropped; none is left on the retired list, and a version a guard holds stays
/// retired, untouched, until its own reclamation.
#[test]
fn a_panicking_drop_in_a_reclamation_drops_the_rest_of_the_batch() {
    let _serial = serial();
    let dropped = Arc::new(Mutex::new(Vec::new()));
    let made = Arc::new(AtomicUsize::new(0));
    let pool = {
        let (dropped, made) = (Arc::clone(&dropped), Arc::clone(&made));
        Pool::builder(
            move || Bomb {
                id: made.fetch_add(1, SeqCst),
                armed: false,
                dropped: Arc::clone(&dropped),
            },
            |_: &mut Bomb| true,
        )
        .max_idle(0)
        .build()
    };
    let c = Container::new(&pool, pool.get()); // version 0
                                               // Versions 1 to 6, taken before any is retired, so that no get reclaims meanwhile.
    let mut next: Vec<_> = (0..6).map(|_| pool.get()).collect();
    next[2].armed = true; // version 3
    let mut held = None;
    for (i, v) in next.into_iter().enumerate() {
        if i == 4 {
            held = Some(c.acquire()); // version 4, kept retired by this guard
        }
        c.update(v);
    }
    // Versions 0 to 5 retired (fewer than the threshold), 6 current.
    let held = held.expect("a guard on version 4");
    assert_eq!(held.id, 4);
    assert!(lock(&dropped).is_empty(), "dropped before a reclamation");

    let err = catch_unwind(poolswap::reclaim).expect_err("the drop's panic was lost");
    assert_eq!(panic_message(&*err), "drop 3 failed on purpose");
    let mut ids = lock(&dropped).clone();
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2, 3, 5], "the batch stopped at the panic");
    assert_eq!(poolswap::reclaim(), 0, "a claimed version was left retired");

    // The held version is whole, and goes at the next reclamation after its guard.
    assert!(!held.armed);
    drop(held);
    assert_eq!(poolswap::reclaim(), 1);
    drop(c);
    drop(pool);
    let mut ids = lock(&dropped).clone();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [0, 1, 2, 3, 4, 5, 6],
        "each version dropped exactly once"
    );
    assert_eq!(made.load(SeqCst), 7);
}

// ---------------------------------------------------------------------------------------
// 4. A waiting get at `max_live` never hangs on a retired version.

/// What the writer tells the reader.
enum Cmd {
    Acquire,
    Drop,
}

/// With `max_live(2)`, a reader holds the current version while the writer replaces it
/// with the only other object: both exist, and the old one is retired under the reader's
/// guard. The reader then drops the guard (a store, which wakes nobody) and the writer's
/// next `get_new` must return that version: by reclaiming before it sleeps (the drop came
/// first: even rounds wait for it) or at a poll while it sleeps (the drop may come after
/// the `get_new` began: odd rounds do not wait, and the reader sometimes dawdles first).
/// A hang fails the test after a minute instead of hanging it.
#[test]
fn a_waiting_get_at_max_live_returns_once_a_retired_version_is_unprotected() {
    let _serial = serial();
    // A soak: `POOLSWAP_SOAK_ROUNDS=1000000 cargo test --release --test reclaim waiting_get`
    // (and again with `POOLSWAP_BARRIER=fence`).
    let rounds = std::env::var("POOLSWAP_SOAK_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(scaled(2_000, 20));
    let log = Log::new();
    let pool = tracked_builder(&log).max_live(2).build();
    let c = Arc::new(Container::new(&pool, pool.get()));
    drop(pool);

    let (to_reader, commands) = mpsc::channel::<Cmd>();
    let (to_writer, acks) = mpsc::channel::<usize>();
    let reader = thread::spawn({
        let c = Arc::clone(&c);
        move || {
            let mut held = None;
            for (round, cmd) in commands.into_iter().enumerate() {
                match cmd {
                    Cmd::Acquire => {
                        let g = c.acquire();
                        let id = g.id;
                        held = Some(g);
                        to_writer.send(id).unwrap();
                    }
                    Cmd::Drop => {
                        // Now and then let the writer's `get_new` start first.
                        for _ in 0..(round % 7) * 200 {
                            std::hint::spin_loop();
                        }
                        drop(held.take().expect("a guard to drop"));
                        to_writer.send(usize::MAX).unwrap();
                    }
                }
            }
        }
    });
    let done = Arc::new(AtomicBool::new(false));
    let (finished, writer_done) = mpsc::channel::<()>();
    let writer = thread::spawn({
        let (c, done) = (Arc::clone(&c), Arc::clone(&done));
        move || {
            for round in 0..rounds {
                to_reader.send(Cmd::Acquire).unwrap();
                let old = acks.recv().unwrap();
                let mut next = c.get_new(); // the other object: idle, or reclaimed now
                assert_ne!(next.id, old, "handed out a version a guard holds");
                next.value = round as u64;
                c.update(next); // `old` is retired, under the reader's guard
                to_reader.send(Cmd::Drop).unwrap();
                if round % 2 == 0 {
                    assert_eq!(acks.recv().unwrap(), usize::MAX);
                }
                let again = c.get_new(); // at the bound: only `old` can come back
                assert_eq!(again.id, old, "not the retired version");
                drop(again);
                if round % 2 == 1 {
                    assert_eq!(acks.recv().unwrap(), usize::MAX);
                }
            }
            done.store(true, SeqCst);
            drop(finished);
        }
    });
    // A minute, or 2 ms a round for a soak: far above what a round takes (a poll is 0.5 ms).
    let limit = Duration::from_secs(60).max(Duration::from_millis(2) * rounds as u32);
    if let Err(RecvTimeoutError::Timeout) = writer_done.recv_timeout(limit) {
        panic!("{rounds} rounds of get_new at max_live took over {limit:?}: one hung");
    }
    writer.join().unwrap();
    reader.join().unwrap();
    assert!(done.load(SeqCst));
    assert_eq!(log.made(), 2, "the bound let a third object be made");
    assert!(log.peak_alive() <= 2);
}

// ---------------------------------------------------------------------------------------
// 5. A background reclaimer takes resets and drops off the writer's thread.

/// The thread name the background reclaimer of these tests gets.
/// The reclaimer thread's name, as `Reclaimer`'s docs state it.
const RECLAIMER: &str = "poolswap-reclaimer";

/// Whether the calling thread is the background reclaimer.
fn on_reclaimer() -> bool {
    thread::current().name() == Some(RECLAIMER)
}

/// With a [`Reclaimer`] running and a pool that keeps no idle object, every retired
/// version is dropped on the reclaimer's thread: never on the writer's (which waits, by
/// counting drops, for the reclaimer to take the previous version before it updates, so
/// that its own getter never finds one retired) nor on the reader's. A version a guard holds
/// when it is retired goes at a later pass (the reclaimer's poll): the writer would wait
/// for ever if the reclaimer missed one.
#[test]
fn a_background_reclaimer_drops_retired_versions_on_its_own_thread() {
    let _serial = serial();
    let updates = scaled(300, 20);
    let elsewhere = Arc::new(AtomicUsize::new(0));
    let drops = Arc::new(AtomicUsize::new(0));
    let pool = Pool::builder(Counted::default, |_: &mut Counted| {})
        .max_idle(0)
        .build();
    let first = Counted {
        seq: 1,
        drops: Arc::clone(&drops),
        elsewhere: Arc::clone(&elsewhere),
    };
    let c = Arc::new(Container::from_value(&pool, first));
    let reclaimer = Reclaimer::spawn().expect("spawn the reclaimer");
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (c, done) = (Arc::clone(&c), Arc::clone(&done));
        thread::spawn(move || {
            let mut last = 0;
            while !done.load(SeqCst) {
                let g = c.acquire();
                assert!(g.seq >= last, "a reader went back in time");
                last = g.seq;
            }
        })
    };
    for i in 2..updates as u64 + 2 {
        // The version retired by the previous update, dropped by the reclaimer.
        while drops.load(SeqCst) < (i - 2) as usize {
            thread::yield_now();
        }
        let mut next = c.get_new();
        *next = Counted {
            seq: i,
            drops: Arc::clone(&drops),
            elsewhere: Arc::clone(&elsewhere),
        };
        c.update(next);
    }
    done.store(true, SeqCst);
    reader.join().expect("the reader failed");
    reclaimer.join().expect("no drop panicked");
    assert_eq!(elsewhere.load(SeqCst), 0, "a drop ran off the reclaimer");
    assert_eq!(
        drops.load(SeqCst),
        updates,
        "every retired version was dropped"
    );
}

/// A version that counts its drops, and those that ran off the reclaimer's thread. The
/// factory's blank (no counters) is overwritten before it is published, uncounted.
#[derive(Default)]
struct Counted {
    seq: u64,
    drops: Arc<AtomicUsize>,
    elsewhere: Arc<AtomicUsize>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        if self.seq == 0 {
            return; // a factory's blank, replaced by the writer
        }
        self.drops.fetch_add(1, SeqCst);
        if !on_reclaimer() {
            self.elsewhere.fetch_add(1, SeqCst);
        }
    }
}

/// One reclaimer at a time; another may start once the first is gone.
#[test]
fn only_one_background_reclaimer_runs_at_a_time() {
    let _serial = serial();
    let first = Reclaimer::spawn().expect("spawn the first reclaimer");
    let err = Reclaimer::spawn().expect_err("a second reclaimer started");
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    drop(first);
    let again = Reclaimer::spawn().expect("a reclaimer after the first stopped");
    again.join().expect("nothing to reclaim, nothing panicked");
}

/// A version whose drop panics when it holds 3.
struct Bomb3(u32);

impl Drop for Bomb3 {
    fn drop(&mut self) {
        if self.0 == 3 {
            panic!("drop 3 failed on purpose");
        }
    }
}

/// A panicking drop on the reclaimer does not stop it: every other version still comes
/// back, and `join` hands the panic to the caller.
#[test]
fn a_panicking_drop_on_the_reclaimer_reaches_join() {
    let _serial = serial();
    // A drop that panics: the pool keeps no idle object, so the reclaimer drops them.
    let pool = Pool::builder(|| Bomb3(0), |_: &mut Bomb3| {})
        .max_idle(0)
        .build();
    let c = Container::from_value(&pool, Bomb3(1));
    // Versions 2 to 6, made before any is retired, so that no get reclaims on this thread.
    let next: Vec<_> = (2..=6)
        .map(|i| {
            let mut v = pool.get();
            v.0 = i;
            v
        })
        .collect();
    let reclaimer = Reclaimer::spawn().expect("spawn");
    for v in next {
        c.update(v);
    }
    let err = reclaimer.join().expect_err("the drop's panic was lost");
    assert_eq!(panic_message(&*err), "drop 3 failed on purpose");
    // Versions 1 to 5 were retired and dropped, 3 with a panic; the rest of its pass too.
    assert_eq!(poolswap::reclaim(), 0, "a version was left retired");
    assert_eq!(pool.stats().dropped_over_cap, 5);
}

/// A reclamation returns the versions it frees oldest first, whatever it keeps, so the
/// freshest is on top of the pool and the next `get` takes it (an op log's writer then
/// replays the fewest batches). A version kept retired *after* the freed ones in the list
/// once reversed them: a pass moved each kept node forward by swapping it with a freed one.
#[test]
fn a_reclamation_returns_the_freshest_version_on_top_whatever_it_keeps() {
    let _serial = serial();
    // The reset keeps the value, so a get shows which version it took.
    let pool = Pool::new(|| 0u64, |_: &mut u64| true);
    let c = Container::from_value(&pool, 1);
    // `adopt` does not reclaim, as `get_new` would: versions 1 and 2 stay retired, free.
    c.update(pool.adopt(2));
    c.update(pool.adopt(3));
    // Version 3 retired last, held: a pass keeps it.
    let held = c.swap(pool.adopt(4));
    assert_eq!(poolswap::reclaim(), 2, "versions 1 and 2, free");
    assert_eq!(*pool.get(), 2, "the freshest free version comes first");
    assert_eq!(*held, 3);
}

// ---------------------------------------------------------------------------------------
// 6. Versions that outlive their pool, and versions that hold guards on older ones.

/// A version that may hold a guard on an older one (a history, a diff base), and counts its
/// drops and the thread names they ran on.
struct Link {
    older: Option<Guard<Link>>,
    drops: Arc<Mutex<Vec<Option<String>>>>,
}

impl Drop for Link {
    fn drop(&mut self) {
        let name = thread::current().name().map(str::to_owned);
        lock(&self.drops).push(name);
    }
}

/// A pool of [`Link`]s whose drops go to `drops`, keeping at most `max_idle` idle.
fn link_pool(drops: &Arc<Mutex<Vec<Option<String>>>>, max_idle: usize) -> Pool<Link> {
    let drops = Arc::clone(drops);
    Pool::builder(
        move || Link {
            older: None,
            drops: Arc::clone(&drops),
        },
        |l: &mut Link| {
            l.older = None;
            true
        },
    )
    .max_idle(max_idle)
    .build()
}

/// Publishes `n` versions on `c`, each holding a guard on the one before it.
fn publish_chain(c: &Container<Link>, n: usize) {
    for _ in 0..n {
        let mut next = c.get_new();
        next.older = Some(c.acquire());
        c.update(next);
    }
}

/// One reclamation returns a whole chain of versions that hold guards on one another: a
/// pass that drops a version (the pool keeps none idle here) lets go of its guard on the
/// next older one, so the reclamation passes again while it dropped a version and kept
/// another. It took one `reclaim` per link (9 calls) before.
#[test]
fn one_reclamation_drops_a_chain_of_versions_holding_guards_on_one_another() {
    let _serial = serial();
    let drops = Arc::default();
    let pool = link_pool(&drops, 0);
    let c = Container::new(&pool, pool.get());
    publish_chain(&c, 8);
    poolswap::reclaim(); // every retired version is held by the next one: none goes
    assert!(lock(&drops).is_empty(), "a held version was dropped");
    // The ninth version, the chain's head, leaves the container: nothing holds it now.
    c.update(pool.get());
    assert_eq!(
        poolswap::reclaim(),
        9,
        "the chain did not go in one reclamation"
    );
    assert_eq!(lock(&drops).len(), 9);
    assert_eq!(poolswap::reclaim(), 0);
}

/// How long [`wait_for_drops`] waits before it fails the test: a bound on a hang, not a
/// speed goal (the orphans' thread passes at least every 32 ms; BENCHMARKS.md has the
/// latency).
const DROP_DEADLINE: Duration = Duration::from_secs(20);

/// Waits until `drops` holds `n` entries, polling: the drops run on a background thread
/// that nothing here can join. Panics past [`DROP_DEADLINE`].
fn wait_for_drops(drops: &Mutex<Vec<Option<String>>>, n: usize) {
    let start = std::time::Instant::now();
    while lock(drops).len() < n {
        assert!(
            start.elapsed() < DROP_DEADLINE,
            "{} of {n} versions dropped after {DROP_DEADLINE:?}",
            lock(drops).len()
        );
        thread::sleep(Duration::from_millis(1));
    }
}

/// A version whose last guard goes after its container and pool went is dropped with no
/// call of the user's, in a process that makes none: the pool's close hands its retired
/// list to the orphans' thread, which passes over it until it is empty, chains included.
/// Before, such versions waited for the next reclamation anywhere in the process, which a
/// quiet process never runs (6 versions, none dropped 2 s after the last guard).
#[test]
#[cfg_attr(
    miri,
    ignore = "no orphans' thread under Miri, which reports a thread alive at exit"
)]
fn a_quiet_process_drops_versions_held_past_their_pools_last_handle() {
    let _serial = serial();
    let drops = Arc::default();
    let pool = link_pool(&drops, 16);
    let c = Arc::new(Container::new(&pool, pool.get()));
    // Two readers on other threads hold a guard each (the first on a version that four
    // more retire, the second on the current one) past the container's and the pool's
    // drops; the versions hold guards on one another too.
    let (held_tx, held) = mpsc::channel();
    let (go_tx, go) = mpsc::channel::<()>();
    let go = Arc::new(Mutex::new(go));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (held_tx, go, mine) = (held_tx.clone(), Arc::clone(&go), Arc::clone(&c));
            let reader = thread::spawn(move || {
                let guard = mine.acquire();
                drop(mine);
                held_tx.send(()).unwrap();
                let _ = lock(&go).recv();
                drop(guard);
            });
            held.recv().unwrap();
            publish_chain(&c, 4);
            reader
        })
        .collect();

    let made = pool.stats().created as usize;
    drop(Arc::into_inner(c).expect("the readers dropped their handles"));
    drop(pool);
    let before = lock(&drops).len();
    assert!(
        before < made,
        "every version went with its pool: nothing to test"
    );
    drop(go_tx); // the readers drop their guards and exit
    for r in readers {
        r.join().unwrap();
    }
    wait_for_drops(&drops, made);
    let late = lock(&drops)[before..].to_vec();
    assert!(
        late.iter()
            .all(|name| name.as_deref() == Some("poolswap-orphans")),
        "dropped elsewhere than on the orphans' thread: {late:?}"
    );
}

/// A writer whose own guards held its last two retired versions drops them, then asks for
/// two new versions: both are the returned ones, none is built. Before, the getter passed
/// over the list only once it held twice the versions the last pass had left held (two
/// here), so both gets called the factory while the two free versions waited.
#[test]
fn a_getter_returns_versions_whose_last_guards_went_before_it_builds() {
    let _serial = serial();
    let pool = Pool::new(|| 0u64, |n: &mut u64| *n = 0);
    let c = Container::from_value(&pool, 1);
    let first = c.acquire();
    c.update(c.get_new()); // version 1 retired, held by `first`
    let second = c.acquire();
    c.update(c.get_new()); // version 2 retired, held by `second`

    // A pass finds both held, and leaves them so: the list holds 2, and 2 were left held.
    assert_eq!(poolswap::reclaim(), 0, "the retired versions are both held");
    let made = pool.stats().created;
    drop((first, second));
    let a = c.get_new();
    let b = c.get_new();
    assert_eq!(
        pool.stats().created,
        made,
        "a get built an object while a retired version no guard holds waited: {:?}",
        pool.stats()
    );
    drop((a, b));
}
