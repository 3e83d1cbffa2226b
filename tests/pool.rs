//! The pool at full strength (issue 4): every bound (`max_idle`, `min_idle`), `trim`'s
//! two-generation decay, `prefill`, the statistics, cross-thread handoff, thread exit, and
//! `Debug`, checked against the documented design (per-thread caches of at most 16 objects
//! that count toward `max_idle`; a thread's spare budget slots, at most 4, may make the pool
//! drop an object while slightly fewer than `max_idle` are idle; see `PoolBuilder::max_idle`).
//!
//! Threads whose exit must have flushed their cache are joined explicitly: the end of a
//! `thread::scope` does not wait for a thread's thread-local destructors, `join` does.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Barrier};
use std::thread;

use poolswap::{Container, Pool, PoolStats, DEFAULT_MAX_IDLE};

/// The most budget slots one thread may hold beyond the objects it caches
/// (`PoolBuilder::max_idle` docs).
const SPARE_SLOTS: u64 = 4;

/// Scales an iteration count down under Miri.
const fn scaled(normal: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// What happened to one pool's objects.
#[derive(Default)]
struct Counts {
    /// Factory calls (the next object's id).
    made: AtomicUsize,
    dropped: AtomicUsize,
    /// Reset returns `false` while set.
    reject: AtomicBool,
    /// `Obj::drop` panics while set.
    panic_on_drop: AtomicBool,
}

impl Counts {
    fn new() -> Arc<Counts> {
        Arc::new(Counts::default())
    }
    fn made(&self) -> u64 {
        self.made.load(SeqCst) as u64
    }
    fn dropped(&self) -> u64 {
        self.dropped.load(SeqCst) as u64
    }
}

struct Obj {
    id: usize,
    counts: Arc<Counts>,
}

impl fmt::Debug for Obj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Obj").field("id", &self.id).finish()
    }
}

impl Drop for Obj {
    fn drop(&mut self) {
        self.counts.dropped.fetch_add(1, SeqCst);
        if self.counts.panic_on_drop.load(SeqCst) && !thread::panicking() {
            panic!("drop failed on purpose");
        }
    }
}

fn builder(counts: &Arc<Counts>) -> poolswap::PoolBuilder<Obj> {
    let (f, r) = (Arc::clone(counts), Arc::clone(counts));
    Pool::builder(
        move || Obj {
            id: f.made.fetch_add(1, SeqCst),
            counts: Arc::clone(&f),
        },
        move |_: &mut Obj| !r.reject.load(SeqCst),
    )
}

fn pool(counts: &Arc<Counts>, max_idle: usize, min_idle: usize) -> Pool<Obj> {
    builder(counts)
        .max_idle(max_idle)
        .min_idle(min_idle)
        .build()
}

/// A one-shot signal between threads that cannot hang a failing test: if the thread that
/// should signal panics, its `Sender` is dropped on the way out and `wait` returns anyway
/// (the panic then fails the test when the thread is joined).
fn signal() -> (mpsc::Sender<()>, Waiter) {
    let (tx, rx) = mpsc::channel();
    (tx, Waiter(rx))
}

struct Waiter(mpsc::Receiver<()>);

impl Waiter {
    /// Waits for a signal, or for the signalling side to be gone.
    fn wait(&self) {
        let _ = self.0.recv();
    }
}

/// Every object ever made is accounted for: checked out, idle, or dropped (and dropped for
/// one of the three counted reasons). Exact only while no other thread uses the pool.
fn assert_accounted(p: &Pool<Obj>, counts: &Counts, out: u64) {
    let s = p.stats();
    assert_eq!(s.created, counts.made(), "{s:?}");
    assert_eq!(
        s.dropped_over_cap + s.discarded + s.trimmed,
        counts.dropped(),
        "every drop counted once: {s:?}"
    );
    assert_eq!(s.idle + out + counts.dropped(), s.created, "{s:?}");
}

// ---------------------------------------------------------------------------------------
// max_idle
// ---------------------------------------------------------------------------------------

/// A burst returned on one thread into a fresh pool: exactly `min(n, max_idle)` stay idle
/// (the `PoolBuilder` example: the thread's slots are reserved as it needs them), the rest
/// are really dropped and counted, and `idle <= max_idle` after every single return.
#[test]
fn max_idle_bounds_a_burst_returned_on_one_thread() {
    for max_idle in [0usize, 1, 4, 5, 16, 64, 100] {
        for n in [1usize, 3, 10, 100, scaled(1000, 150)] {
            let counts = Counts::new();
            let p = pool(&counts, max_idle, 0);
            let mut held: Vec<_> = (0..n).map(|_| p.get()).collect();
            assert_eq!(counts.made(), n as u64);
            let mut returned = 0u64;
            while let Some(o) = held.pop() {
                drop(o);
                returned += 1;
                let s = p.stats();
                assert!(s.idle <= max_idle as u64, "max_idle {max_idle}: {s:?}");
                assert_eq!(s.idle + s.dropped_over_cap, returned, "{s:?}");
                assert_eq!(counts.dropped(), s.dropped_over_cap, "really dropped");
            }
            let s = p.stats();
            let kept = n.min(max_idle) as u64;
            assert_eq!(s.idle, kept, "max_idle {max_idle}, n {n}");
            assert_eq!(s.dropped_over_cap, n as u64 - kept);
            assert_eq!(counts.dropped(), n as u64 - kept);
            assert_accounted(&p, &counts, 0);
            drop(held);
            drop(p);
            assert_eq!(
                counts.dropped(),
                counts.made(),
                "the pool frees its idle objects"
            );
        }
    }
}

/// Bursts returned on three threads at once: `idle <= max_idle` once they are back, caches
/// of live threads included, and after the threads exit; at most 4 spare slots per thread
/// may be unused; nothing is lost or dropped twice. (Readings taken *during* the returns:
/// `idle_reading_under_traffic_never_exceeds_max_idle`.)
#[test]
fn max_idle_bounds_bursts_spread_across_three_threads() {
    const THREADS: usize = 3;
    for max_idle in [0usize, 1, 7, 16, 64, 300] {
        let n = scaled(100, 12);
        let counts = Counts::new();
        let p = pool(&counts, max_idle, 0);
        let max = max_idle as u64;
        // The threads hold all their objects at once before any is returned.
        let all_out = Barrier::new(THREADS);
        let (back_tx, back) = mpsc::channel::<()>();
        let mut release = Vec::new();
        thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|_| {
                    let (release_tx, released) = signal();
                    release.push(release_tx);
                    let (p, all_out) = (&p, &all_out);
                    let back_tx = back_tx.clone();
                    s.spawn(move || {
                        let held: Vec<_> = (0..n).map(|_| p.get()).collect();
                        all_out.wait();
                        drop(held);
                        drop(back_tx);
                        released.wait(); // the main thread reads the caches of live threads
                    })
                })
                .collect();
            drop(back_tx);
            // All senders gone: every object is back, and the threads are alive, holding
            // what they cache.
            let _ = back.recv();
            let s = p.stats();
            let total = (THREADS * n) as u64;
            assert!(s.idle <= max, "{s:?}");
            assert_eq!(s.idle + s.dropped_over_cap, total, "{s:?}");
            assert!(
                s.idle + SPARE_SLOTS * THREADS as u64 >= total.min(max),
                "more than 4 unused slots per thread: {s:?}"
            );
            assert_eq!(counts.dropped(), s.dropped_over_cap);
            release.clear();
            for h in handles {
                h.join().unwrap(); // waits for the exit flush too
            }
            let after = p.stats();
            assert_eq!(
                after.idle, s.idle,
                "thread exit moves caches, loses nothing"
            );
            assert_eq!(after.dropped_over_cap, s.dropped_over_cap);
        });
        assert_accounted(&p, &counts, 0);
        drop(p);
        assert_eq!(counts.dropped(), counts.made());
    }
}

/// A thread keeps at most `SPARE_SLOTS` budget slots it is not using: here the main thread
/// caches one object (and holds its spare slots) while another thread returns a burst into
/// a pool bounded at 12; the burst keeps all but the main thread's spare slots.
#[test]
fn a_thread_keeps_at_most_four_spare_slots() {
    const MAX: u64 = 12;
    let counts = Counts::new();
    let p = pool(&counts, MAX as usize, 0);
    drop(p.get()); // cached on this thread, with its spare slots
    thread::scope(|s| {
        let burst = s.spawn(|| drop((0..20).map(|_| p.get()).collect::<Vec<_>>()));
        burst.join().unwrap(); // its exit moves its cache to its depot
    });
    let s = p.stats();
    assert!(s.idle <= MAX, "{s:?}");
    assert!(
        s.idle + SPARE_SLOTS >= MAX,
        "more than {SPARE_SLOTS} slots unused on the main thread: {s:?}"
    );
    assert_eq!(s.idle + s.dropped_over_cap, 21, "{s:?}");
    assert_accounted(&p, &counts, 0);
}

/// A reading of `idle` taken while another thread returns objects at the bound never says
/// more than `max_idle` (which the pool never exceeds). The per-thread counters are read
/// one after another, so their sum can count a moving object twice; `stats` caps it by the
/// idle budget in use (`PoolStats` docs). Without the cap this test fails.
#[test]
fn idle_reading_under_traffic_never_exceeds_max_idle() {
    let counts = Counts::new();
    let p = pool(&counts, 16, 0);
    let done = AtomicBool::new(false);
    let mut max_seen = 0;
    thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..scaled(50_000, 20) {
                drop((0..20).map(|_| p.get()).collect::<Vec<_>>());
            }
            done.store(true, SeqCst);
        });
        while !done.load(SeqCst) {
            max_seen = max_seen.max(p.stats().idle);
        }
    });
    assert!(max_seen <= 16, "read {max_seen} idle with max_idle 16");
}

/// Objects checked out on one thread and returned on three others.
#[test]
fn max_idle_bounds_objects_returned_on_other_threads() {
    for max_idle in [0usize, 2, 10, 64] {
        let n = scaled(60, 9);
        let counts = Counts::new();
        let p = pool(&counts, max_idle, 0);
        let mut batches: Vec<Vec<_>> = (0..3).map(|_| (0..n).map(|_| p.get()).collect()).collect();
        thread::scope(|s| {
            let handles: Vec<_> = batches
                .drain(..)
                .map(|batch| {
                    s.spawn(move || {
                        drop(batch);
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        });
        let s = p.stats();
        assert!(s.idle <= max_idle as u64, "{s:?}");
        assert_eq!(s.idle + s.dropped_over_cap, 3 * n as u64, "{s:?}");
        assert_accounted(&p, &counts, 0);
    }
}

/// `max_idle(0)`: nothing is ever kept — no returned object, no container version, no
/// prefilled object — and every get runs the factory.
#[test]
fn max_idle_zero_keeps_nothing() {
    let counts = Counts::new();
    let p = pool(&counts, 0, 0);
    for i in 1..=20u64 {
        drop(p.get());
        let s = p.stats();
        assert_eq!((s.idle, s.created, s.misses, s.hits), (0, i, i, 0));
        assert_eq!((s.dropped_over_cap, counts.dropped()), (i, i));
    }
    p.prefill(10);
    assert_eq!((p.stats().idle, p.stats().created), (0, 20));

    let c = Container::empty(p.clone());
    for _ in 0..10 {
        c.update(c.get_new());
    }
    drop(c.take());
    let s = p.stats();
    assert_eq!((s.idle, s.created, s.hits), (0, 30, 0));
    assert_eq!((s.dropped_over_cap, counts.dropped()), (30, 30));
    drop(c);
    // Returned on another thread (a cache of its own): dropped there too.
    let o = p.get();
    thread::scope(|s| s.spawn(move || drop(o)).join().unwrap());
    assert_eq!((p.stats().idle, counts.dropped()), (0, 31));
}

/// A pool built without a bound uses `DEFAULT_MAX_IDLE`, and no `min_idle`.
#[test]
fn default_bounds() {
    let p = Pool::new(|| 0u8, |_| true);
    assert_eq!((p.max_idle(), p.min_idle()), (DEFAULT_MAX_IDLE, 0));
    let counts = Counts::new();
    let p = builder(&counts).build();
    assert_eq!((p.max_idle(), p.min_idle()), (DEFAULT_MAX_IDLE, 0));
}

/// With a small `max_idle`, a container updated on one thread recycles its two versions
/// (Go's behaviour, and "a steady state allocates nothing"): the version being replaced is
/// the only idle object, so it must not be dropped for want of budget.
#[test]
fn small_max_idle_container_recycles_versions() {
    for max_idle in 1..=8usize {
        let counts = Counts::new();
        let p = pool(&counts, max_idle, 0);
        let c = Container::empty(p.clone());
        for _ in 0..100 {
            c.update(c.get_new());
        }
        let s = p.stats();
        assert!(
            s.created <= 2,
            "max_idle {max_idle}: {} objects made for 100 updates: {s:?}",
            s.created
        );
    }
}

/// Threads that each returned one object and went quiet must not use up the bound with
/// spare slots: a quarter of `max_idle` objects idle leaves room for a container's versions,
/// so the writer recycles them ("a steady state allocates nothing") instead of calling the
/// factory on every update. (The design allows each thread "slightly" fewer than its share;
/// here each quiet thread holds 3 spare slots per cached object.)
#[test]
#[ignore = "documented limitation: each thread that used the pool may hold up to 4 unused \
            budget slots (PoolBuilder::max_idle docs); 64 quiet threads hold the default budget"]
fn spare_slots_of_quiet_threads_do_not_make_a_writer_churn() {
    const QUIET: usize = DEFAULT_MAX_IDLE / 4;
    let counts = Counts::new();
    let p = pool(&counts, DEFAULT_MAX_IDLE, 0);
    let (cached_tx, cached) = mpsc::channel::<()>();
    let mut release = Vec::new();
    thread::scope(|s| {
        for _ in 0..QUIET {
            let (release_tx, released) = signal();
            release.push(release_tx);
            let (p, cached_tx) = (&p, cached_tx.clone());
            s.spawn(move || {
                drop(p.get()); // one object in this thread's cache
                drop(cached_tx);
                released.wait();
            });
        }
        drop(cached_tx);
        let _ = cached.recv();
        assert_eq!(p.stats().idle, QUIET as u64);
        let c = Container::empty(p.clone());
        for _ in 0..100 {
            c.update(c.get_new());
        }
        let s = p.stats();
        release.clear();
        assert!(
            s.created <= QUIET as u64 + 2,
            "{} objects made: {QUIET} cached by quiet threads + 100 updates: {s:?}",
            s.created
        );
    });
}

// ---------------------------------------------------------------------------------------
// min_idle
// ---------------------------------------------------------------------------------------

/// `clear` and `trim` never go below `min_idle` when at least that many are idle, and drop
/// nothing when fewer are; `min_idle` is capped at `max_idle`.
#[test]
fn clear_and_trim_keep_min_idle() {
    for min_idle in [0usize, 1, 10] {
        // clear
        let counts = Counts::new();
        let p = pool(&counts, 100, min_idle);
        drop((0..50).map(|_| p.get()).collect::<Vec<_>>());
        p.clear();
        let s = p.stats();
        assert_eq!(s.idle, min_idle as u64, "{s:?}");
        assert_eq!(s.trimmed, 50 - min_idle as u64);
        assert_eq!(counts.dropped(), s.trimmed);
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
        assert_accounted(&p, &counts, 0);

        // trim
        let counts = Counts::new();
        let p = pool(&counts, 100, min_idle);
        drop((0..50).map(|_| p.get()).collect::<Vec<_>>());
        for _ in 0..4 {
            p.trim();
            assert!(p.stats().idle >= min_idle as u64);
        }
        let s = p.stats();
        assert_eq!((s.idle, s.trimmed), (min_idle as u64, 50 - min_idle as u64));
        assert_accounted(&p, &counts, 0);
    }

    // Fewer idle than min_idle: nothing is dropped.
    let counts = Counts::new();
    let p = pool(&counts, 100, 10);
    drop((0..5).map(|_| p.get()).collect::<Vec<_>>());
    p.clear();
    p.trim();
    p.trim();
    let s = p.stats();
    assert_eq!((s.idle, s.trimmed, counts.dropped()), (5, 0, 0));

    // min_idle is capped at max_idle.
    let p = builder(&counts).max_idle(3).min_idle(50).build();
    assert_eq!((p.max_idle(), p.min_idle()), (3, 3));
}

/// `clear` reaches the depots of other threads (here, flushed there by their exit) and
/// still stops at `min_idle` in all.
#[test]
fn clear_keeps_min_idle_across_threads() {
    let counts = Counts::new();
    let p = pool(&counts, 200, 7);
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
    assert_accounted(&p, &counts, 0);
}

// ---------------------------------------------------------------------------------------
// trim: two-generation decay
// ---------------------------------------------------------------------------------------

/// A burst of 100,000 objects, then two trims with no traffic: the first only marks, the
/// second frees all but `min_idle`, and `trimmed` counts them.
#[test]
fn two_trims_free_a_burst() {
    let n = scaled(100_000, 200);
    for min_idle in [0usize, 10] {
        let counts = Counts::new();
        let p = pool(&counts, 100_000, min_idle);
        drop((0..n).map(|_| p.get()).collect::<Vec<_>>());
        let s = p.stats();
        assert_eq!(
            (s.idle, s.created, s.dropped_over_cap),
            (n as u64, n as u64, 0)
        );

        p.trim();
        let s = p.stats();
        assert_eq!((s.idle, s.trimmed), (n as u64, 0), "one trim only marks");
        assert_eq!(counts.dropped(), 0);

        p.trim();
        let s = p.stats();
        assert!(s.idle <= min_idle as u64, "{s:?}");
        assert_eq!(s.idle, min_idle as u64, "min_idle kept");
        assert_eq!(s.trimmed, (n - min_idle) as u64);
        assert_eq!(counts.dropped(), s.trimmed, "really dropped");

        p.trim();
        p.trim();
        assert_eq!(p.stats().idle, min_idle as u64);
        assert_accounted(&p, &counts, 0);
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
    let counts = Counts::new();
    let p = pool(&counts, 100, 0);
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
    assert_accounted(&p, &counts, 0);
}

/// The documented rule exactly: the second trim frees every object that was idle at the
/// first and was not handed out since — including victims that a `get`'s batch refill
/// moved into the caller's cache without handing them out.
#[test]
fn second_trim_frees_every_untouched_victim() {
    let counts = Counts::new();
    let p = pool(&counts, 100, 0);
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
    let rounds = scaled(300, 6);
    for k in [1usize, 4, 5, 8, 9, 20, 64] {
        let counts = Counts::new();
        let p = pool(&counts, 64, 0);
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
        let counts = Counts::new();
        let p = pool(&counts, 64, 0);
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

/// `trim` does not reach the caches of other live threads (documented); their objects
/// count as idle, and decay once the thread's exit flushes them to its depot.
#[test]
fn trim_leaves_other_live_threads_caches_until_they_exit() {
    let counts = Counts::new();
    let p = pool(&counts, 64, 0);
    let (cached_tx, cached) = signal();
    let (trimmed_tx, trimmed) = signal();
    thread::scope(|s| {
        let pr = &p;
        let t = s.spawn(move || {
            drop((0..3).map(|_| pr.get()).collect::<Vec<_>>());
            drop(cached_tx);
            trimmed.wait();
        });
        cached.wait();
        assert_eq!(p.stats().idle, 3, "caches of live threads count as idle");
        p.trim();
        p.trim();
        assert_eq!((p.stats().idle, p.stats().trimmed), (3, 0));
        drop(trimmed_tx);
        t.join().unwrap();
    });
    assert_eq!(p.stats().idle, 3, "flushed on exit");
    p.trim();
    p.trim();
    assert_eq!((p.stats().idle, p.stats().trimmed), (0, 3));
    assert_accounted(&p, &counts, 0);
}

// ---------------------------------------------------------------------------------------
// prefill
// ---------------------------------------------------------------------------------------

/// `prefill(n)` leaves `n` idle (at most `max_idle`), builds no more than it must, and the
/// next `n` gets, on this thread or another, are hits without factory calls.
#[test]
fn prefill_fills_to_n_and_serves_hits_on_any_thread() {
    let counts = Counts::new();
    let p = pool(&counts, 64, 0);
    p.prefill(20);
    let s = p.stats();
    assert_eq!((s.idle, s.created, s.misses, s.hits), (20, 20, 0, 0));
    p.prefill(5);
    assert_eq!(p.stats().created, 20, "already 20 idle: nothing built");
    thread::scope(|s| {
        s.spawn(|| {
            let held: Vec<_> = (0..20).map(|_| p.get()).collect();
            let s = p.stats();
            assert_eq!((s.hits, s.misses, s.created, s.idle), (20, 0, 20, 0));
            drop(held);
        })
        .join()
        .unwrap();
    });
    // The other thread cached its objects and exited: its share is flushed.
    assert_eq!(p.stats().idle, 20);
    p.prefill(1000);
    let s = p.stats();
    assert_eq!((s.idle, s.created), (64, 64), "bounded by max_idle");
    assert_eq!(s.dropped_over_cap, 0);
    let held: Vec<_> = (0..64).map(|_| p.get()).collect();
    let s = p.stats();
    assert_eq!((s.hits, s.misses, s.created, s.idle), (84, 0, 64, 0));
    drop(held);
    assert_accounted(&p, &counts, 0);

    // max_idle 0: nothing built.
    let p = pool(&counts, 0, 0);
    p.prefill(10);
    assert_eq!((p.stats().idle, p.stats().created), (0, 0));
}

/// `prefill(n)` counts the objects in the caller's own cache and reaches `n` (within
/// `max_idle`) whatever spare slots that cache holds.
#[test]
fn prefill_reaches_n_with_objects_in_the_callers_cache() {
    for max_idle in [4usize, 8] {
        let counts = Counts::new();
        let p = pool(&counts, max_idle, 0);
        drop(p.get()); // one object in this thread's cache, and 3 spare budget slots
        p.prefill(max_idle);
        assert_eq!(p.stats().idle, max_idle as u64, "max_idle {max_idle}");
    }
}

// ---------------------------------------------------------------------------------------
// stats
// ---------------------------------------------------------------------------------------

/// One thread alternating between pools (which share its per-thread lookup cache of the
/// last two pools used): every pool hands out only its own objects, and after the first
/// get of each, every get is a hit on that pool.
#[test]
fn a_thread_alternating_between_pools_gets_each_pools_own_objects() {
    let pools: Vec<Pool<Vec<u8>>> = (1..=3)
        .map(|tag| Pool::new(move || vec![tag], |_: &mut Vec<u8>| true))
        .collect();
    let rounds = scaled(100, 5);
    for _ in 0..rounds {
        // Two pools in turn, then all three (the third evicts one from the cache).
        for which in [0, 1, 0, 1, 2, 0, 1, 2] {
            let v = pools[which].get();
            assert_eq!(
                v[..],
                [which as u8 + 1],
                "pool {which} handed out another's object"
            );
        }
    }
    for (which, p) in pools.iter().enumerate() {
        let s = p.stats();
        let gets = rounds as u64 * if which == 2 { 2 } else { 3 };
        assert_eq!(
            (s.created, s.misses, s.hits),
            (1, 1, gets - 1),
            "pool {which}: {s:?}"
        );
    }
}

/// Every counter exact on one thread: hits + misses == gets, created == misses + adopted.
#[test]
fn stats_are_exact_on_one_thread() {
    let counts = Counts::new();
    let p = pool(&counts, 64, 0);
    let zero = p.stats();
    assert_eq!(zero, PoolStats::default());
    let tuple = |s: PoolStats| {
        (
            s.created,
            s.idle,
            s.hits,
            s.misses,
            s.discarded,
            s.dropped_over_cap,
            s.trimmed,
        )
    };

    let held: Vec<_> = (0..3).map(|_| p.get()).collect();
    assert_eq!(tuple(p.stats()), (3, 0, 0, 3, 0, 0, 0));
    drop(held);
    assert_eq!(tuple(p.stats()), (3, 3, 0, 3, 0, 0, 0));
    let mut held: Vec<_> = (0..3).map(|_| p.get()).collect();
    assert_eq!(tuple(p.stats()), (3, 0, 3, 3, 0, 0, 0));
    held.push(p.adopt(Obj {
        id: 1000,
        counts: Arc::clone(&counts),
    }));
    assert_eq!(
        tuple(p.stats()),
        (4, 0, 3, 3, 0, 0, 0),
        "adopt: created, not a miss"
    );
    drop(held);
    assert_eq!(tuple(p.stats()), (4, 4, 3, 3, 0, 0, 0));

    // Reset says no to all four idle objects: discarded, and the get is a miss.
    counts.reject.store(true, SeqCst);
    let o = p.get();
    assert_eq!(tuple(p.stats()), (5, 0, 3, 4, 4, 0, 0));
    counts.reject.store(false, SeqCst);
    drop(o);
    let s = p.stats();
    assert_eq!(s.hits + s.misses, 7, "seven gets");
    assert_eq!(s.created, s.misses + 1, "one adopted");

    p.clear();
    assert_eq!(tuple(p.stats()), (5, 0, 3, 4, 4, 0, 1));
    assert_eq!(
        counts.dropped(),
        5,
        "four made and the adopted one (id 1000)"
    );

    // Over the cap.
    let counts = Counts::new();
    let p = pool(&counts, 2, 0);
    drop((0..5).map(|_| p.get()).collect::<Vec<_>>());
    assert_eq!(tuple(p.stats()), (5, 2, 0, 5, 0, 3, 0));
    assert_accounted(&p, &counts, 0);
}

/// Counters summed across threads: three threads each do `k` get + drop; hits + misses is
/// exactly 3k, read while they run and after they exit.
#[test]
fn stats_sum_across_threads() {
    let k = scaled(2_000, 30);
    let counts = Counts::new();
    let p = pool(&counts, 64, 0);
    let done = AtomicUsize::new(0);
    thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|t| {
                let (p, done) = (&p, &done);
                s.spawn(move || {
                    let mut held = Vec::new();
                    for i in 0..k {
                        held.push(p.get());
                        // Vary the working set: 1 to 12 objects out at once.
                        if held.len() > (i + t) % 12 {
                            held.clear();
                        }
                    }
                    drop(held);
                    done.fetch_add(1, SeqCst);
                })
            })
            .collect();
        // Readings under traffic never overshoot what has been done.
        while done.load(SeqCst) < 3 {
            let s = p.stats();
            assert!(s.hits + s.misses <= 3 * k as u64, "{s:?}");
            assert!(s.idle <= 64, "{s:?}");
            thread::yield_now();
        }
        for h in handles {
            h.join().unwrap();
        }
    });
    let s = p.stats();
    assert_eq!(s.hits + s.misses, 3 * k as u64, "{s:?}");
    assert_eq!(s.created, s.misses);
    assert!(s.created <= 3 * 12, "{s:?}");
    assert_accounted(&p, &counts, 0);
}

// ---------------------------------------------------------------------------------------
// Cross-thread handoff and thread exit
// ---------------------------------------------------------------------------------------

/// One thread gets, another drops (objects sent through a channel): stealing from the
/// dropper's depot keeps factory calls to a small constant.
#[test]
fn cross_thread_handoff_makes_few_objects() {
    let ops = scaled(100_000, 200);
    let counts = Counts::new();
    let p = pool(&counts, DEFAULT_MAX_IDLE, 0);
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
    assert_accounted(&p, &counts, 0);
}

/// Objects a thread cached are not lost when it exits: they count as idle while it lives,
/// its exit flushes them, and another thread's gets are hits on them.
#[test]
fn objects_cached_by_an_exiting_thread_are_not_lost() {
    let counts = Counts::new();
    let p = pool(&counts, 64, 0);
    let (cached_tx, cached) = signal();
    let (read_tx, read) = signal();
    thread::scope(|s| {
        let pr = &p;
        let t = s.spawn(move || {
            let held: Vec<_> = (0..5).map(|_| pr.get()).collect();
            drop(held); // into this thread's cache
            drop(cached_tx);
            read.wait();
        });
        cached.wait();
        assert_eq!(p.stats().idle, 5, "in the live thread's cache");
        drop(read_tx);
        t.join().unwrap();
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
    assert_accounted(&p, &counts, 0);
}

/// A `'static` thread with its own handle outlives every other handle: the pool is freed
/// when it drops the last one, and its exit afterwards is harmless.
#[test]
fn thread_dropping_the_last_handle_exits_cleanly() {
    let counts = Counts::new();
    let p = pool(&counts, 64, 0);
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
    assert_eq!((counts.made(), counts.dropped()), (10, 10));
}

// ---------------------------------------------------------------------------------------
// Debug, and panics in destructors
// ---------------------------------------------------------------------------------------

/// `Debug` for `Pool`, `Pooled`, `PoolStats` and `PoolBuilder` says something, and does not
/// block while another thread holds objects (and sits in the middle of using the pool).
#[test]
fn debug_output_is_non_empty_and_does_not_block() {
    let counts = Counts::new();
    let b = builder(&counts).max_idle(10).min_idle(2);
    let text = format!("{b:?}");
    assert!(
        text.contains("PoolBuilder") && text.contains("10"),
        "{text}"
    );
    let p = b.build();
    let (holding_tx, holding) = signal();
    let (printed_tx, printed) = signal();
    thread::scope(|s| {
        let pr = &p;
        let t = s.spawn(move || {
            let held: Vec<_> = (0..3).map(|_| pr.get()).collect();
            drop(pr.get()); // one in its cache too
            drop(holding_tx);
            printed.wait();
            drop(held);
        });
        holding.wait();
        let mine = p.get();
        for text in [
            format!("{p:?}"),
            format!("{p:#?}"),
            format!("{mine:?}"),
            format!("{:?}", p.stats()),
            format!("{:?}", Container::new(p.clone(), p.get())),
        ] {
            assert!(text.len() > 5, "{text}");
        }
        assert!(format!("{p:?}").starts_with("Pool"));
        assert!(format!("{mine:?}").contains("Obj"));
        assert!(format!("{:?}", p.stats()).contains("idle"));
        drop(mine);
        drop(printed_tx);
        t.join().unwrap();
    });
}

/// An object whose destructor panics inside `clear` or `trim`: the panic reaches the
/// caller, the pool stays consistent and usable, and every object is dropped exactly once
/// in the end — for plain objects and for former container versions.
#[test]
fn panicking_drop_in_trim_or_clear_leaves_the_pool_usable() {
    for versions in [false, true] {
        for use_trim in [false, true] {
            let counts = Counts::new();
            let p = pool(&counts, 64, 0);
            if versions {
                let c = Container::empty(p.clone());
                let guards: Vec<_> = (0..6)
                    .map(|_| {
                        c.update(c.get_new());
                        c.acquire().unwrap()
                    })
                    .collect();
                drop(c);
                drop(guards); // six versions, all idle now
            } else {
                drop((0..6).map(|_| p.get()).collect::<Vec<_>>());
            }
            let made = counts.made();
            assert_eq!(p.stats().idle, made);
            if use_trim {
                p.trim();
            }
            counts.panic_on_drop.store(true, SeqCst);
            let err = panic::catch_unwind(AssertUnwindSafe(|| {
                if use_trim {
                    p.trim()
                } else {
                    p.clear()
                }
            }))
            .unwrap_err();
            assert_eq!(err.downcast_ref::<&str>(), Some(&"drop failed on purpose"));
            counts.panic_on_drop.store(false, SeqCst);
            let s = p.stats();
            assert_eq!((s.trimmed, counts.dropped()), (1, 1), "{s:?}");
            assert_eq!(s.idle, made - 1, "{s:?}");

            // Usable: gets, puts, containers, clear.
            let held: Vec<_> = (0..10).map(|_| p.get()).collect();
            assert_eq!(p.stats().created, made + 5);
            drop(held);
            let c = Container::empty(p.clone());
            c.update(c.get_new());
            c.update(c.get_new());
            drop(c);
            p.clear();
            assert_eq!(p.stats().idle, 0);
            assert_accounted(&p, &counts, 0);
            drop(p);
            assert_eq!(counts.dropped(), counts.made(), "each dropped once");
        }
    }
}
