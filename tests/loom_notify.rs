//! Loom models of change notification (`src/container/subscribe.rs`): a publication racing
//! a subscriber that goes to sleep, the first subscriber's install racing an update, the
//! container's drop racing a sleeping subscriber, and the hand-over of the container's last
//! version racing the subscriber's reads. A lost wake-up leaves the subscriber
//! asleep with every other thread finished, which loom reports as a deadlock (the facade's
//! condition variable is loom's).
//!
//! Run in both builds (as CI does):
//!
//! ```text
//! RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_notify
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_notify
//! ```
#![cfg(loom)]

use std::sync::Arc;

use loom::thread;
use poolswap::{Closed, Container};

#[path = "support/loom_objects.rs"]
mod objects;
use objects::*;

/// Publishes version `v` of `c` on a new model thread.
fn publish_on_a_thread(c: &Arc<Container<Obj>>, v: usize) -> thread::JoinHandle<()> {
    let c = Arc::clone(c);
    thread::spawn(move || publish(&c, v))
}

/// A subscriber that raced the publication of version 2 sees it: at its first acquire,
/// or else at the wait that follows, which must return.
fn sees_version_2(sub: &mut poolswap::Subscriber<'_, Container<Obj>>) {
    if sub.acquire().unwrap().value == 1 {
        assert_eq!(sub.wait_changed(), Ok(()));
        assert_eq!(sub.acquire().unwrap().value, 2);
    }
}

/// A subscriber that saw version 1 waits while a writer publishes 2: whichever of the
/// writer's count and the subscriber's registration comes first, the wait returns and the
/// subscriber then reads 2.
#[test]
fn a_publication_racing_a_subscriber_going_to_sleep_wakes_it() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let mut sub = c.subscribe_owned();
        let writer = publish_on_a_thread(&c, 2);
        assert_eq!(sub.wait_changed(), Ok(()));
        assert_eq!(sub.acquire().unwrap().value, 2);
        writer.join().unwrap();
    });
}

/// Two subscribers (one a clone, on its own thread) sleep while a writer publishes: the
/// publisher wakes every waiter, not one.
#[test]
fn a_publication_wakes_every_sleeping_subscriber() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let mut sub = c.subscribe_owned();
        let mut other = sub.clone();
        let waiter = thread::spawn(move || {
            assert_eq!(other.wait_changed(), Ok(()));
            assert_eq!(other.acquire().unwrap().value, 2);
        });
        let writer = publish_on_a_thread(&c, 2);
        assert_eq!(sub.wait_changed(), Ok(()));
        assert_eq!(sub.acquire().unwrap().value, 2);
        writer.join().unwrap();
        waiter.join().unwrap();
    });
}

/// The container's first subscriber installs its signal while a writer publishes: the
/// writer may load no signal and count nothing, so the subscriber must then read the new
/// version; if it read the old one, the writer counted the new one and the wait returns.
#[test]
fn the_first_subscribe_racing_an_update_misses_nothing() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let writer = publish_on_a_thread(&c, 2);
        let mut sub = c.subscribe_owned();
        sees_version_2(&mut sub);
        writer.join().unwrap();
    });
}

/// A second subscriber, which finds the signal installed, races an update the same way:
/// the writer's load of the signal may precede the install the subscriber read.
#[test]
fn a_second_subscribe_racing_the_install_and_an_update_misses_nothing() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let first = {
            let c = c.clone();
            thread::spawn(move || drop(c.subscribe_owned()))
        };
        let writer = publish_on_a_thread(&c, 2);
        let mut sub = c.subscribe_owned();
        sees_version_2(&mut sub);
        first.join().unwrap();
        writer.join().unwrap();
    });
}

/// The container's last handle goes on another thread while the subscriber sleeps (or is
/// about to): the wait returns `Closed` instead of hanging.
#[test]
fn the_container_dropped_wakes_a_sleeping_subscriber_with_closed() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let mut sub = c.subscribe_owned();
        let dropper = thread::spawn(move || drop(c));
        assert_eq!(sub.wait_changed(), Err(Closed));
        // The wait saw the close: the last version is handed over.
        assert_eq!(sub.acquire().unwrap().value, 1);
        dropper.join().unwrap();
        // The signal kept it retired past the drop's reclamation: one more returns it.
        drop(sub);
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// The container's `Arc` goes on a writer's thread right after its last publication, and
/// the container with it, while the subscriber reads and waits. However the reads fall
/// against the drop (before it; in it, where the `Weak` no longer upgrades and the close
/// has not come; after it), the subscriber reads version 2 before a wait returns `Closed`,
/// and the version, which the signal keeps, is dropped once the subscriber and the pool
/// are gone.
///
/// The writer takes the container out of its `Arc` (`Arc::try_unwrap`, retried while a
/// subscriber's `acquire` holds an upgraded handle) and drops it itself: the `Arc` is
/// std's, whose own synchronization loom does not see, so a container dropped by the
/// reader's upgraded handle (the last one, in the real drop) would show loom a close that
/// does not happen after the writer's publication.
#[test]
fn the_container_dropped_after_a_publication_hands_its_last_version_over() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        drop(pool);
        let mut sub = c.subscribe_owned();
        let writer = thread::spawn(move || {
            publish(&c, 2);
            let mut c = c;
            let c = loop {
                match Arc::try_unwrap(c) {
                    Ok(c) => break c,
                    Err(shared) => c = shared,
                }
                thread::yield_now();
            };
            drop(c);
        });
        let mut last = 0;
        loop {
            if let Ok(guard) = sub.acquire() {
                last = guard.value;
            }
            if sub.wait_changed().is_err() {
                break;
            }
        }
        assert_eq!(last, 2);
        writer.join().unwrap();
        drop(sub);
        counts.assert_all_dropped();
    });
}

/// A timed wait racing a publication: it returns the change or a timeout (under loom the
/// deadline passes after one wait), never hangs, and a timeout leaves the change to the
/// next look.
#[test]
fn a_timed_wait_racing_a_publication_returns_and_loses_nothing() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let mut sub = c.subscribe_owned();
        let writer = publish_on_a_thread(&c, 2);
        let changed = sub
            .wait_changed_timeout(std::time::Duration::from_micros(1))
            .unwrap();
        writer.join().unwrap();
        assert_eq!(sub.has_changed(), Ok(!changed));
        assert_eq!(sub.acquire().unwrap().value, 2);
    });
}
