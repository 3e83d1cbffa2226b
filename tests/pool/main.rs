//! The pool at full strength: every bound (`max_idle`, `min_idle`), `trim`'s two-generation
//! decay, `prefill`, the statistics, cross-thread handoff, thread exit, and `Debug`, checked
//! against the documented design (per-thread caches of at most 16 objects that count toward
//! `max_idle`, used once a thread is past its slow start; a thread's spare idle permits, at
//! most 4, may make the pool drop an object while slightly fewer than `max_idle` are idle;
//! see `PoolBuilder::max_idle`).
//!
//! Threads whose exit must have flushed their cache are joined explicitly: the end of a
//! `thread::scope` does not wait for a thread's thread-local destructors, `join` does.
//!
//! A container's retired version goes back to its pool only at a reclamation (an update
//! at 8 retired versions (`Container::update`), a pool getter that finds nothing idle, a container's
//! drop, or `poolswap::reclaim`), never at a guard's drop; every test takes [`serial`]
//! first.

#[path = "../support/tracked.rs"]
mod tracked;

mod decay;
mod idle_bound;
mod max_live;
mod reset;
mod stats;
mod threads;
mod trim;
mod wait;

#[path = "../support/serial.rs"]
mod serial;

use serial::serial;
use std::thread;

use poolswap::Pool;
use tracked::{signal, Log, Tracked};

/// Every object ever made is accounted for: checked out, idle, or dropped (and dropped for
/// one of the four counted reasons). Exact only while no other thread uses the pool.
fn assert_accounted(p: &Pool<Tracked>, log: &Log, out: u64) {
    let s = p.stats();
    assert_eq!(s.created, log.made(), "{s:?}");
    assert_eq!(
        s.dropped_over_cap + s.discarded + s.trimmed + s.decayed,
        log.dropped(),
        "every drop counted once: {s:?}"
    );
    assert_eq!(s.idle + out + log.dropped(), s.created, "{s:?}");
}

/// Takes the calling thread past its slow start on `p`, so that its magazine caches what
/// it puts back from now on: `MAGAZINE_SIZE` gets and drops, as many slow-path operations
/// as the slow start lasts (`2 × MAGAZINE_SIZE`), with one object.
fn past_slow_start<T: Send + 'static>(p: &Pool<T>) {
    for _ in 0..tracked::MAGAZINE_SIZE {
        drop(p.get());
    }
}

/// Runs `work(i)` on each of `threads` new threads, then `meanwhile` on this thread while
/// they are all still alive, each holding what its `work` returned and whatever it caches.
/// Then lets them finish and joins them, which waits for their exits and so for the flush
/// of their caches, and returns what `meanwhile` returned. A panic on either side cannot
/// hang it (see [`signal`]).
fn with_parked_threads<T, R>(
    threads: usize,
    work: impl Fn(usize) -> T + Sync,
    meanwhile: impl FnOnce() -> R,
) -> R {
    let work = &work;
    thread::scope(|s| {
        let (ready_tx, ready) = signal();
        let mut release = Vec::new();
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (release_tx, released) = signal();
                release.push(release_tx);
                let ready_tx = ready_tx.clone();
                s.spawn(move || {
                    let kept = work(i);
                    drop(ready_tx);
                    released.wait();
                    drop(kept);
                })
            })
            .collect();
        drop(ready_tx);
        ready.wait(); // every `work` is done
        let r = meanwhile();
        drop(release);
        for h in handles {
            h.join().unwrap();
        }
        r
    })
}
