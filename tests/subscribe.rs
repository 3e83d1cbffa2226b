//! Change notification (`Container::subscribe`, `Subscriber`): the seen version, blocking
//! waits on threads, the container's close, and (feature `async`) `changed()` polled by
//! hand and dropped at every poll point. No sleep synchronizes anything here: threads meet
//! on barriers, channels and the waits under test.

use std::sync::{mpsc, Arc, Barrier};
use std::thread;
use std::time::Duration;

use poolswap::{Closed, Container, OptionContainer, Pool, Subscriber};

#[path = "support/tracked.rs"]
mod tracked;

fn container(v: u64) -> (Pool<u64>, Arc<Container<u64>>) {
    let pool = Pool::new(|| 0u64, |n: &mut u64| *n = 0);
    let c = Arc::new(Container::from_value(&pool, v));
    (pool, c)
}

fn publish(c: &Container<u64>, v: u64) {
    let mut next = c.get_new();
    *next = v;
    c.update(next);
}

#[test]
fn a_new_subscriber_has_seen_the_current_version() {
    let (_pool, c) = container(1);
    let mut sub = c.subscribe_owned();
    assert_eq!(sub.has_changed(), Ok(false));
    assert_eq!(sub.wait_changed_timeout(Duration::ZERO), Ok(false));
    assert_eq!(*sub.acquire().unwrap(), 1);
}

#[test]
fn every_kind_of_publication_is_a_change() {
    let (pool, c) = container(1);
    let mut sub = c.subscribe_owned();
    let publications: [&dyn Fn(); 4] = [
        &|| publish(&c, 2),
        &|| drop(c.swap(pool.adopt(3))),
        &|| {
            let current = c.acquire();
            assert!(c.compare_and_swap(&current, pool.adopt(4)).is_ok());
        },
        &|| c.rcu(|cur, next| *next = cur + 1),
    ];
    for (i, publication) in publications.iter().enumerate() {
        publication();
        assert_eq!(sub.has_changed(), Ok(true), "publication {i}");
        assert_eq!(sub.wait_changed(), Ok(()), "publication {i}");
        assert_eq!(sub.has_changed(), Ok(false), "publication {i}");
    }
    // A failed compare-and-swap publishes nothing.
    let stale = c.acquire();
    publish(&c, 9);
    sub.mark_seen();
    assert!(c.compare_and_swap(&stale, pool.adopt(10)).is_err());
    assert_eq!(sub.has_changed(), Ok(false));
}

/// The ABA case: a version recycled and published anew at the same address is a change.
#[test]
fn a_recycled_object_republished_at_the_same_address_is_a_change() {
    let pool = Pool::builder(|| 0u64, |n: &mut u64| *n = 0).build();
    let c = Arc::new(Container::from_value(&pool, 1));
    let mut sub = c.subscribe_owned();
    let first = {
        let g = sub.acquire().unwrap();
        std::ptr::from_ref::<u64>(&g) as usize
    };
    // Publish until the first object comes back and is current again.
    let mut again = false;
    for v in 2..1_000 {
        publish(&c, v);
        poolswap::reclaim();
        let g = sub.acquire().unwrap();
        if std::ptr::from_ref::<u64>(&g) as usize == first {
            drop(g);
            again = true;
            publish(&c, 5_000);
            break;
        }
    }
    assert!(again, "the first object never came back");
    // The version at `first`'s address was marked seen; the next one is a change even if
    // it reuses an address seen before.
    assert_eq!(sub.has_changed(), Ok(true));
    assert_eq!(*sub.acquire().unwrap(), 5_000);
    assert_eq!(sub.has_changed(), Ok(false));
}

#[test]
fn several_publications_between_two_waits_make_one_change() {
    let (_pool, c) = container(1);
    let mut sub = c.subscribe_owned();
    for v in 2..10 {
        publish(&c, v);
    }
    assert_eq!(sub.wait_changed(), Ok(()));
    assert_eq!(*sub.acquire().unwrap(), 9);
    assert_eq!(sub.wait_changed_timeout(Duration::ZERO), Ok(false));
}

#[test]
fn a_clone_starts_from_the_same_seen_version() {
    let (_pool, c) = container(1);
    let mut sub = c.subscribe_owned();
    publish(&c, 2);
    let other = sub.clone();
    sub.mark_seen();
    assert_eq!(sub.has_changed(), Ok(false));
    assert_eq!(other.has_changed(), Ok(true));
    assert!(format!("{other:?}").contains("has_changed: true"));
}

/// A writer publishes after the subscriber has started waiting (or is about to: the
/// barrier only makes the race likely), many times over.
#[test]
fn a_blocking_wait_returns_for_a_publication_on_another_thread() {
    let rounds = if cfg!(miri) { 5 } else { 500 };
    let (_pool, c) = container(0);
    let mut sub = c.subscribe_owned();
    let start = Arc::new(Barrier::new(2));
    let (done, seen) = mpsc::channel();
    let writer = {
        let (c, start) = (Arc::clone(&c), Arc::clone(&start));
        thread::spawn(move || {
            for v in 1..=rounds {
                start.wait();
                publish(&c, v);
                // The subscriber's report that it saw `v` before the next round.
                assert_eq!(seen.recv().unwrap(), v);
            }
        })
    };
    for v in 1..=rounds {
        start.wait();
        assert_eq!(sub.wait_changed(), Ok(()));
        let got = *sub.acquire().unwrap();
        assert_eq!(got, v);
        done.send(got).unwrap();
    }
    writer.join().unwrap();
}

#[test]
fn every_sleeping_subscriber_is_woken() {
    let (_pool, c) = container(0);
    let waiters = 4;
    let registered = Arc::new(Barrier::new(waiters + 1));
    let handles: Vec<_> = (0..waiters)
        .map(|_| {
            let mut sub = c.subscribe_owned();
            let registered = Arc::clone(&registered);
            thread::spawn(move || {
                registered.wait();
                assert_eq!(sub.wait_changed(), Ok(()));
                *sub.acquire().unwrap()
            })
        })
        .collect();
    registered.wait();
    publish(&c, 7);
    for h in handles {
        assert_eq!(h.join().unwrap(), 7);
    }
}

#[test]
fn a_timed_wait_returns_the_change_or_times_out() {
    let (_pool, c) = container(0);
    let mut sub = c.subscribe_owned();
    assert_eq!(
        sub.wait_changed_timeout(Duration::from_millis(5)),
        Ok(false)
    );
    let writer = {
        let c = Arc::clone(&c);
        thread::spawn(move || publish(&c, 1))
    };
    // A day: returns when the writer publishes.
    assert_eq!(
        sub.wait_changed_timeout(Duration::from_secs(86_400)),
        Ok(true)
    );
    writer.join().unwrap();
    // A timeout past the clock's range waits without a deadline.
    publish(&c, 2);
    assert_eq!(sub.wait_changed_timeout(Duration::MAX), Ok(true));
}

#[test]
fn dropping_the_container_wakes_a_sleeping_subscriber_with_closed() {
    let (_pool, c) = container(1);
    let mut sub = c.subscribe_owned();
    let (ready, go) = mpsc::channel::<()>();
    let waiter = thread::spawn(move || {
        ready.send(()).unwrap();
        sub.wait_changed()
    });
    go.recv().unwrap();
    drop(c);
    assert_eq!(waiter.join().unwrap(), Err(Closed));
}

/// The case: versions 1 to 100 published, then the container dropped. The last
/// version is one more change, readable afterwards; then every wait returns `Closed`.
#[test]
fn the_last_version_stays_readable_after_the_container_goes() {
    let (_pool, c) = container(0);
    let mut sub = c.subscribe_owned();
    for v in 1..=100 {
        publish(&c, v);
    }
    drop(c);
    assert_eq!(sub.has_changed(), Ok(true), "100 is unseen");
    assert!(format!("{sub:?}").contains("closed: true"));
    assert_eq!(sub.wait_changed(), Ok(()));
    assert_eq!(*sub.acquire().unwrap(), 100);
    assert_eq!(*sub.acquire().unwrap(), 100, "and again");
    assert_eq!(sub.has_changed(), Err(Closed));
    assert_eq!(sub.wait_changed(), Err(Closed));
    assert_eq!(
        sub.wait_changed_timeout(Duration::from_secs(1)),
        Err(Closed)
    );
    assert_eq!(*sub.acquire().unwrap(), 100, "still readable");
    let e: Box<dyn std::error::Error> = Box::new(Closed);
    assert_eq!(e.to_string(), "the container was dropped");
}

/// Each kind of wait returns the unseen last version once, then `Closed`; a subscriber
/// that read it, or a clone of one that did, gets `Closed` at once.
#[test]
fn a_wait_returns_the_unseen_last_version_once_then_closed() {
    let (_pool, c) = container(1);
    let mut read_it = c.subscribe_owned();
    let mut timed = c.subscribe_owned();
    publish(&c, 2);
    assert_eq!(*read_it.acquire().unwrap(), 2);
    let mut clone = read_it.clone();
    drop(c);
    assert_eq!(read_it.has_changed(), Err(Closed));
    assert_eq!(read_it.wait_changed(), Err(Closed));
    assert_eq!(clone.wait_changed_timeout(Duration::ZERO), Err(Closed));
    assert_eq!(timed.wait_changed_timeout(Duration::ZERO), Ok(true));
    assert_eq!(timed.wait_changed_timeout(Duration::ZERO), Err(Closed));
    assert_eq!(*timed.acquire().unwrap(), 2);
}

/// The case with a watcher on its own thread, which reads while the container
/// goes: it sees 100 in every run, however its reads fall against the drop (in it, the
/// `Weak` no longer upgrades and the close has not come yet).
#[test]
fn a_watcher_thread_always_sees_the_last_version() {
    for _ in 0..tracked::scaled(200, 3) {
        let (_pool, c) = container(0);
        let mut sub = c.subscribe_owned();
        let watcher = thread::spawn(move || {
            let mut last = 0;
            while sub.wait_changed().is_ok() {
                if let Ok(v) = sub.acquire() {
                    assert!(*v >= last, "went back: {} after {last}", *v);
                    last = *v;
                }
            }
            last
        });
        let last = tracked::scaled(100, 10) as u64;
        for v in 1..=last {
            publish(&c, v);
        }
        drop(c);
        assert_eq!(watcher.join().unwrap(), last);
    }
}

/// A container moved out of its `Arc` is unreachable to an owned subscriber, which has not
/// got its last version yet: `acquire` fails, and the waits then wait for the container's
/// end, whose last version they return (not the publications they cannot read).
#[test]
fn a_container_moved_out_of_its_arc_hands_over_its_last_version_at_its_drop() {
    let (pool, c) = container(1);
    let mut sub = c.subscribe_owned();
    let c = Arc::try_unwrap(c).ok().unwrap();
    assert_eq!(sub.acquire().err(), Some(Closed));
    publish(&c, 2);
    assert_eq!(sub.has_changed(), Ok(false), "only the close is news now");
    assert_eq!(sub.wait_changed_timeout(Duration::ZERO), Ok(false));
    publish(&c, 3);
    let (ready, go) = mpsc::channel::<()>();
    let waiter = thread::spawn(move || {
        ready.send(()).unwrap();
        let woken = sub.wait_changed();
        (woken, *sub.acquire().unwrap(), sub.wait_changed())
    });
    go.recv().unwrap();
    drop(c);
    assert_eq!(waiter.join().unwrap(), (Ok(()), 3, Err(Closed)));
    drop(pool);
}

/// The subscribers keep the last version, and only it: with the container and the pool
/// gone, every other object is dropped; the last goes once the last subscriber does.
#[test]
fn the_subscribers_keep_the_last_version_alone_until_the_last_of_them_goes() {
    let log = tracked::Log::with_history();
    let pool = tracked::tracked_pool(&log, 8, 0);
    let c = Arc::new(Container::new(&pool, pool.get()));
    let mut sub = c.subscribe_owned();
    let other = c.subscribe();
    for v in 1..=100 {
        let mut next = c.get_new();
        next.value = v;
        c.update(next);
    }
    drop(other);
    let mut clone = sub.clone();
    drop(c);
    drop(pool);
    eventually(
        || log.alive() == 1,
        "every object but the last version dropped",
    );
    assert_eq!(sub.acquire().unwrap().value, 100);
    drop(sub);
    poolswap::reclaim();
    assert_eq!(log.alive(), 1, "a subscriber is left");
    assert_eq!(clone.acquire().unwrap().value, 100);
    drop(clone);
    poolswap::reclaim();
    log.wait_all_dropped_once();
}

/// With its pool alive, the last version goes back to it (not dropped) after the last
/// subscriber.
#[test]
fn the_last_version_goes_back_to_a_live_pool_after_the_last_subscriber() {
    let (pool, c) = container(1);
    let sub = c.subscribe_owned();
    drop(c);
    poolswap::reclaim();
    assert_eq!(
        pool.stats().idle,
        0,
        "the subscriber keeps the last version"
    );
    drop(sub);
    poolswap::reclaim();
    assert_eq!(
        pool.stats().idle,
        1,
        "the last version went back to the pool"
    );
}

/// Polls `done`, running reclamations, for at most 20 s (a bound on a hang, not a wait
/// for a thread: the reclamation that makes `done` true may be running on another test's
/// thread).
fn eventually(mut done: impl FnMut() -> bool, what: &str) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "not after 20 s: {what}"
        );
        poolswap::reclaim();
        thread::yield_now();
    }
}

/// A container in a `static`: `subscribe` borrows it for `'static`, so the subscriber may
/// go to any thread.
#[test]
fn a_static_container_can_be_subscribed_to() {
    use std::sync::LazyLock;

    static ROUTES: LazyLock<Container<u64>> =
        LazyLock::new(|| Container::from_value(&Pool::new(|| 0, |n: &mut u64| *n = 0), 1));

    let mut sub: Subscriber<'static, Container<u64>> = ROUTES.subscribe();
    let watcher = thread::spawn(move || {
        while *sub.acquire().unwrap() != 2 {
            sub.wait_changed().unwrap();
        }
    });
    publish(&ROUTES, 2);
    watcher.join().unwrap();
}

/// A container shared by reference in `thread::scope`: subscribers borrow it, on any of
/// the scope's threads.
#[test]
fn a_container_shared_by_reference_can_be_subscribed_to() {
    let pool = Pool::new(|| 0u64, |n: &mut u64| *n = 0);
    let c = Container::from_value(&pool, 1);
    let o = OptionContainer::empty(&pool);
    let start = Barrier::new(3);
    thread::scope(|s| {
        for _ in 0..2 {
            let mut sub = c.subscribe();
            let mut option_sub = o.subscribe();
            let start = &start;
            s.spawn(move || {
                start.wait();
                while *sub.acquire().unwrap() != 2 {
                    sub.wait_changed().unwrap();
                }
                while option_sub.acquire().unwrap().as_deref() != Some(&3) {
                    option_sub.wait_changed().unwrap();
                }
            });
        }
        start.wait();
        publish(&c, 2);
        o.update(pool.adopt(3));
    });
}

/// `into_inner` and a change of flavour end the container as its subscribers know it: they
/// keep its last version, as at its drop.
#[test]
fn into_inner_and_a_flavour_change_close_the_subscribers() {
    let (_pool, c) = container(1);
    let mut sub = c.subscribe_owned();
    publish(&c, 2);
    let c = Arc::try_unwrap(c).ok().unwrap();
    assert_eq!(*c.into_inner(), 2);
    assert_eq!(sub.wait_changed(), Ok(()), "2 was not seen");
    assert_eq!(
        *sub.acquire().unwrap(),
        2,
        "the last version stays readable"
    );
    assert_eq!(sub.wait_changed(), Err(Closed));

    let (_pool, c) = container(1);
    let mut sub = c.subscribe_owned();
    let c = OptionContainer::from(Arc::try_unwrap(c).ok().unwrap());
    assert_eq!(sub.wait_changed(), Err(Closed));
    assert_eq!(*sub.acquire().unwrap(), 1);
    assert!(!c.is_empty());
}

#[test]
fn a_subscriber_does_not_keep_the_container_alive() {
    let pool = Pool::new(|| 0u64, |n: &mut u64| *n = 0);
    let c = Arc::new(Container::from_value(&pool, 1));
    let sub = c.subscribe_owned();
    let weak = Arc::downgrade(&c);
    drop(c);
    assert!(weak.upgrade().is_none());
    drop(sub);
    poolswap::reclaim();
    assert_eq!(
        pool.stats().idle,
        1,
        "the last version went back to the pool"
    );
}

#[test]
fn an_option_container_subscriber_sees_takes_and_updates() {
    let pool = Pool::new(|| 0u64, |n: &mut u64| *n = 0);
    let c = Arc::new(OptionContainer::empty(&pool));
    let mut sub: Subscriber<OptionContainer<u64>> = c.subscribe_owned();
    assert!(sub.acquire().unwrap().is_none());
    c.update(pool.adopt(1));
    assert_eq!(sub.wait_changed(), Ok(()));
    assert_eq!(sub.acquire().unwrap().as_deref(), Some(&1));
    drop(c.take());
    assert_eq!(sub.wait_changed(), Ok(()));
    assert!(sub.acquire().unwrap().is_none());
    drop(c);
    assert_eq!(sub.wait_changed(), Err(Closed));
    assert!(sub.acquire().unwrap().is_none(), "closed empty");
}

/// An op log's reader subscribes through its `ReadHandle`: the subscriber works as on any
/// container.
#[test]
fn an_op_log_reader_can_subscribe() {
    use poolswap::oplog::{MapOp, OpLog};
    use std::collections::HashMap;

    let mut log: OpLog<HashMap<u32, u32>, MapOp<u32, u32>> = OpLog::new(HashMap::new());
    let mut sub = log.read_handle().subscribe();
    log.append(MapOp::Insert(1, 10));
    log.publish();
    assert_eq!(sub.wait_changed(), Ok(()));
    assert_eq!(sub.acquire().unwrap().get(&1), Some(&10));
}

#[test]
fn subscribers_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Subscriber<'static, Container<u64>>>();
    send_sync::<Subscriber<'_, OptionContainer<String>>>();
    send_sync::<Closed>();
}

#[cfg(feature = "async")]
mod changed {
    use super::*;
    use std::future::Future;
    use std::pin::pin;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::task::{Context, Poll, Wake, Waker};

    /// A waker that counts its wake-ups.
    #[derive(Default)]
    struct Counting(AtomicUsize);

    impl Wake for Counting {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    fn counting() -> (Arc<Counting>, Waker) {
        let counter = Arc::new(Counting::default());
        (counter.clone(), Waker::from(counter))
    }

    fn poll<F: Future>(f: std::pin::Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(waker))
    }

    #[test]
    fn changed_is_ready_at_once_for_a_version_published_before() {
        let (_pool, c) = container(1);
        let mut sub = c.subscribe_owned();
        publish(&c, 2);
        let (_, waker) = counting();
        assert_eq!(poll(pin!(sub.changed()), &waker), Poll::Ready(Ok(())));
        assert_eq!(*sub.acquire().unwrap(), 2);
    }

    #[test]
    fn a_pending_changed_is_woken_by_a_publication() {
        let (_pool, c) = container(1);
        let mut sub = c.subscribe_owned();
        let (count, waker) = counting();
        {
            let mut fut = pin!(sub.changed());
            assert!(poll(fut.as_mut(), &waker).is_pending());
            assert!(poll(fut.as_mut(), &waker).is_pending(), "a spurious poll");
            assert_eq!(count.0.load(SeqCst), 0);
            publish(&c, 2);
            assert!(count.0.load(SeqCst) >= 1, "not woken");
            assert_eq!(poll(fut.as_mut(), &waker), Poll::Ready(Ok(())));
        }
        assert_eq!(sub.has_changed(), Ok(false), "marked seen");
    }

    /// Where a `changed()` future can be dropped: before its first poll, pending
    /// (registered), pending again after a spurious poll, and woken but not polled again;
    /// and whether the publication comes before the drop or after. In every case the
    /// future marks nothing seen, the next wait sees the publication, and a second
    /// subscriber's pending future is woken as well.
    #[test]
    fn a_changed_future_dropped_at_every_poll_point_loses_nothing() {
        for polls in 0..3 {
            for publish_before_drop in [false, true] {
                let (_pool, c) = container(1);
                let mut sub = c.subscribe_owned();
                let mut other = c.subscribe_owned();
                let (other_count, other_waker) = counting();
                let (count, waker) = counting();
                let mut other_fut = Box::pin(other.changed());
                assert!(poll(other_fut.as_mut(), &other_waker).is_pending());
                {
                    let mut fut = Box::pin(sub.changed());
                    for _ in 0..polls {
                        assert!(poll(fut.as_mut(), &waker).is_pending());
                    }
                    if publish_before_drop {
                        publish(&c, 2);
                        if polls > 0 {
                            assert!(count.0.load(SeqCst) >= 1, "case {polls}: not woken");
                        }
                    }
                    drop(fut);
                }
                if !publish_before_drop {
                    publish(&c, 2);
                }
                let case =
                    format!("{polls} polls, publication before the drop: {publish_before_drop}");
                assert!(other_count.0.load(SeqCst) >= 1, "{case}: other not woken");
                assert_eq!(
                    poll(other_fut.as_mut(), &other_waker),
                    Poll::Ready(Ok(())),
                    "{case}"
                );
                drop(other_fut);
                assert_eq!(sub.has_changed(), Ok(true), "{case}: lost");
                let (_, waker) = counting();
                assert_eq!(
                    poll(pin!(sub.changed()), &waker),
                    Poll::Ready(Ok(())),
                    "{case}"
                );
                assert_eq!(*sub.acquire().unwrap(), 2, "{case}");
            }
        }
    }

    /// A task that starts and drops a wait over and over between two publications (a
    /// `select!` with a timeout in a loop) clears its registration each time, and the wait
    /// it keeps is still woken.
    #[test]
    fn waits_dropped_over_and_over_leave_the_last_one_woken() {
        let (_pool, c) = container(1);
        let mut sub = c.subscribe_owned();
        let (count, waker) = counting();
        for _ in 0..if cfg!(miri) { 20 } else { 1_000 } {
            let mut fut = Box::pin(sub.changed());
            assert!(poll(fut.as_mut(), &waker).is_pending());
        }
        assert_eq!(count.0.load(SeqCst), 0);
        let mut fut = Box::pin(sub.changed());
        assert!(poll(fut.as_mut(), &waker).is_pending());
        publish(&c, 2);
        assert_eq!(
            count.0.load(SeqCst),
            1,
            "woken once: the dropped waits were cleared"
        );
        assert_eq!(poll(fut.as_mut(), &waker), Poll::Ready(Ok(())));
    }

    #[test]
    fn a_pending_changed_is_woken_with_closed_when_the_container_goes() {
        let (_pool, c) = container(1);
        let mut sub = c.subscribe_owned();
        let (count, waker) = counting();
        let mut fut = pin!(sub.changed());
        assert!(poll(fut.as_mut(), &waker).is_pending());
        drop(c);
        assert!(count.0.load(SeqCst) >= 1);
        assert_eq!(poll(fut.as_mut(), &waker), Poll::Ready(Err(Closed)));
    }

    /// `changed` returns the unseen last version once, then `Closed`, as the blocking
    /// waits do.
    #[test]
    fn changed_returns_the_unseen_last_version_once_then_closed() {
        let (_pool, c) = container(1);
        let mut sub = c.subscribe_owned();
        let (_count, waker) = counting();
        for v in 2..=100 {
            publish(&c, v);
        }
        drop(c);
        assert_eq!(poll(pin!(sub.changed()), &waker), Poll::Ready(Ok(())));
        assert_eq!(*sub.acquire().unwrap(), 100);
        assert_eq!(poll(pin!(sub.changed()), &waker), Poll::Ready(Err(Closed)));
        assert_eq!(*sub.acquire().unwrap(), 100);
    }

    /// A pending `changed` whose owned subscriber failed to reach its container (moved out
    /// of its `Arc`) waits for the container's end, not for publications it cannot read,
    /// and is woken by it with the last version.
    #[test]
    fn a_pending_changed_of_an_unreachable_container_returns_its_last_version() {
        let (_pool, c) = container(1);
        let mut sub = c.subscribe_owned();
        let c = Arc::try_unwrap(c).ok().unwrap();
        assert_eq!(sub.acquire().err(), Some(Closed));
        let (count, waker) = counting();
        {
            let mut fut = pin!(sub.changed());
            assert!(poll(fut.as_mut(), &waker).is_pending());
            publish(&c, 2);
            assert!(poll(fut.as_mut(), &waker).is_pending());
            let woken = count.0.load(SeqCst);
            drop(c);
            assert!(count.0.load(SeqCst) > woken, "the close wakes it");
            assert_eq!(poll(fut.as_mut(), &waker), Poll::Ready(Ok(())));
        }
        assert_eq!(*sub.acquire().unwrap(), 2);
        assert_eq!(poll(pin!(sub.changed()), &waker), Poll::Ready(Err(Closed)));
    }

    /// Tasks under a second executor, futures-lite's `block_on` (it parks the calling
    /// thread), one per thread: a publication from a plain thread wakes each.
    #[test]
    fn changed_under_block_on_sees_every_round() {
        let (_pool, c) = container(0);
        let rounds = if cfg!(miri) { 20 } else { 200 };
        let tasks = 4;
        let start = Arc::new(Barrier::new(tasks + 1));
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                let mut sub = c.subscribe_owned();
                let start = Arc::clone(&start);
                thread::spawn(move || {
                    start.wait();
                    futures_lite::future::block_on(async {
                        let mut last = 0;
                        while last < rounds {
                            sub.changed().await.unwrap();
                            // `>=`: an acquire that raced with an update may be told of
                            // the version it already read (a spurious change).
                            let v = *sub.acquire().unwrap();
                            assert!(v >= last, "went back: {v} after {last}");
                            last = v;
                        }
                    });
                })
            })
            .collect();
        start.wait();
        for v in 1..=rounds {
            publish(&c, v);
        }
        for h in handles {
            h.join().unwrap();
        }
    }
}
