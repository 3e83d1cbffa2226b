//! The awaitable gets at the live bound (feature `async`): under tokio and under futures-lite's
//! `block_on`, for a pool and for a container whose writer awaits a reader's old version;
//! cancellation (a dropped future frees its place and passes on a wake-up it received); the
//! futures' auto-traits.
//!
//! Run with `cargo test --features async --test wait_async`.
//!
//! Tasks and threads synchronize through channels and the futures themselves, never sleeps.
//! The cancellation tests poll the futures by hand, with wakers that count their wakes, so
//! that which future was woken, and when, is exact.
#![cfg(feature = "async")]

#[path = "support/tracked.rs"]
mod tracked;

#[path = "support/serial.rs"]
mod serial;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use futures_lite::future;
use poolswap::{Container, Pool};
use serial::serial;
use tracked::{scaled, tracked_builder, Log, Tracked};

/// Far longer than any wait here: a test that reaches it has failed (a lost wake-up).
const NEVER: Duration = Duration::from_secs(30);

fn bounded(log: &Arc<Log>, max_live: usize) -> Pool<Tracked> {
    tracked_builder(log).max_live(max_live).build()
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Counter(AtomicUsize);

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

impl Counter {
    fn wakes(&self) -> usize {
        self.0.load(SeqCst)
    }
}

/// A future polled by hand with its own counting waker.
struct Manual<F> {
    future: Pin<Box<F>>,
    waker: Arc<Counter>,
}

impl<F: Future> Manual<F> {
    fn new(future: F) -> Self {
        Manual {
            future: Box::pin(future),
            waker: Arc::default(),
        }
    }

    fn poll(&mut self) -> Poll<F::Output> {
        let waker = Waker::from(self.waker.clone());
        self.future.as_mut().poll(&mut Context::from_waker(&waker))
    }
}

#[test]
fn the_futures_are_send_and_sync() {
    fn send_sync<F: Future + Send + Sync>(_: &F) {}
    let pool = Pool::builder(Vec::<u8>::new, Vec::clear)
        .max_live(1)
        .build();
    let c = Container::from_value(&pool, Vec::new());
    let option = poolswap::OptionContainer::empty(&pool);
    send_sync(&pool.get_async());
    send_sync(&c.pool().get_async());
    send_sync(&option.pool().get_async());
}

#[test]
fn without_a_bound_or_below_it_the_future_is_ready_at_once() {
    let _serial = serial();
    let log = Log::new();
    let unbounded = tracked_builder(&log).build();
    let mut f = Manual::new(unbounded.get_async());
    assert!(f.poll().is_ready());
    let pool = bounded(&log, 1);
    let mut f = Manual::new(pool.get_async());
    let Poll::Ready(first) = f.poll() else {
        panic!("below the bound");
    };
    assert_eq!(f.waker.wakes(), 0);
    drop(first);
}

#[test]
fn tokio_a_waiting_task_gets_the_object_another_task_returns() {
    let _serial = serial();
    let log = Log::new();
    let pool = Arc::new(bounded(&log, 1));
    let rt = tokio_runtime();
    rt.block_on(async {
        for _ in 0..scaled(200, 5) {
            let held = pool.get_owned();
            let waiter = tokio::spawn({
                let pool = pool.clone();
                async move { pool.get_async().await.id }
            });
            tokio::spawn(async move { drop(held) });
            let id = tokio::time::timeout(NEVER, waiter).await.expect("woken");
            assert_eq!(id.unwrap(), 0, "the one object was handed on");
        }
    });
    assert_eq!(log.made(), 1);
    assert_eq!(log.peak_alive(), 1);
}

/// A second executor, futures-lite's `block_on` (it parks the calling thread: no runtime,
/// no timer, no reactor): two threads each run two tasks side by side (`zip`), so that a
/// waiting task is woken by a return on its own thread as well as by one on the other.
#[test]
fn block_on_waiting_tasks_share_the_objects_and_the_bound_holds() {
    let _serial = serial();
    const MAX: usize = 2;
    let log = Log::new();
    let pool = bounded(&log, MAX);
    let rounds = scaled(500, 10);
    let task = || async {
        for _ in 0..rounds {
            let obj = pool.get_async().await;
            assert!(pool.stats().live <= MAX as u64);
            future::yield_now().await; // held across a suspension
            drop(obj);
        }
    };
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| future::block_on(future::zip(task(), task())));
        }
    });
    assert!(log.peak_alive() <= MAX, "{} existed", log.peak_alive());
    assert_eq!(pool.stats().hits + pool.stats().misses, 4 * rounds as u64);
}

/// The writer awaits at the bound while a reader task holds the old version; the reader's
/// drop is a store that wakes nobody: the `poolswap-reclaim` thread brings the version
/// back, and that return wakes the writer. Without the thread, the writer would wait
/// forever (nothing else reclaims here), and the timeout would fail the test.
#[test]
fn tokio_a_writer_awaiting_a_readers_old_version_is_woken_by_the_reclaimer() {
    let _serial = serial();
    let log = Log::new();
    let pool = bounded(&log, 2);
    let container = Arc::new(Container::new(&pool, pool.get())); // version 0
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let guard = container.acquire();
        container.update(container.get_new()); // version 0 retired, still read
        let (release_tx, release) = tokio::sync::oneshot::channel::<()>();
        let reader = tokio::spawn(async move {
            let _ = release.await;
            drop(guard); // a store: wakes nobody
        });
        let writer = {
            let c = container.clone();
            tokio::spawn(async move { c.pool().get_async().await.id })
        };
        tokio::task::yield_now().await; // lets the writer register (either order works)
        release_tx.send(()).unwrap();
        reader.await.unwrap();
        let id = tokio::time::timeout(NEVER, writer).await.expect("woken");
        assert_eq!(id.unwrap(), 0, "the reader's old version was reused");
    });
    assert_eq!(log.made(), 2);
}

/// Cancellation racing a wake-up: two futures wait; a return notifies the first; the first
/// is dropped before it takes the notification: the second must be woken and get the
/// object, and the dropped one must hold nothing.
#[test]
fn a_dropped_future_passes_its_wake_up_to_the_next_waiter() {
    let _serial = serial();
    let log = Log::new();
    let pool = bounded(&log, 1);
    let held = pool.get();
    let mut first = Manual::new(pool.get_async());
    let mut second = Manual::new(pool.get_async());
    assert!(first.poll().is_pending());
    assert!(second.poll().is_pending());
    drop(held); // one object back: one notification, to the first waiter
    assert_eq!((first.waker.wakes(), second.waker.wakes()), (1, 0));
    drop(first); // cancelled with the wake-up untaken
    assert_eq!(second.waker.wakes(), 1, "the wake-up was passed on");
    let Poll::Ready(obj) = second.poll() else {
        panic!("the object is there for the second waiter");
    };
    assert_eq!(obj.id, 0);
    assert_eq!(log.made(), 1);
}

/// A future dropped while it waits (not woken) leaves no trace: no permit, no place in the
/// list (a later return wakes the remaining waiter, not the dropped one), and a waiter
/// that starts afterwards is served.
#[test]
fn a_dropped_waiting_future_frees_its_place() {
    let _serial = serial();
    let log = Log::new();
    let pool = bounded(&log, 1);
    let held = pool.get();
    for _ in 0..3 {
        let mut gone = Manual::new(pool.get_async());
        assert!(gone.poll().is_pending());
        drop(gone);
    }
    assert_eq!(pool.stats().live, 1, "a dropped future took no permit");
    let mut next = Manual::new(pool.get_async());
    assert!(next.poll().is_pending());
    drop(held);
    assert_eq!(next.waker.wakes(), 1, "the return woke the live waiter");
    assert!(next.poll().is_ready());
}

/// Two returns wake two waiters (each notification stands for one object), and a woken
/// waiter that finds nothing (a third getter took the object first) waits again and is
/// woken by the next return.
#[test]
fn each_return_wakes_one_more_waiter() {
    let _serial = serial();
    let log = Log::new();
    let pool = bounded(&log, 2);
    let (a, b) = (pool.get(), pool.get());
    let mut first = Manual::new(pool.get_async());
    let mut second = Manual::new(pool.get_async());
    assert!(first.poll().is_pending());
    assert!(second.poll().is_pending());
    drop(a);
    drop(b);
    assert_eq!((first.waker.wakes(), second.waker.wakes()), (1, 1));
    let (Poll::Ready(x), Poll::Ready(y)) = (first.poll(), second.poll()) else {
        panic!("both objects were back");
    };
    // A woken waiter that loses the object to a getter that never waited.
    let mut late = Manual::new(pool.get_async());
    assert!(late.poll().is_pending());
    drop(x);
    let thief = pool.try_get().expect("x is back");
    assert!(late.poll().is_pending(), "nothing left: waits again");
    drop(y);
    assert_eq!(late.waker.wakes(), 2);
    assert!(late.poll().is_ready());
    drop(thief);
}

/// Many tasks await while others are cancelled by a timeout at random moments (racing the
/// returns' wake-ups); every task that is not cancelled completes, and the bound holds.
#[test]
fn tokio_cancelled_waiters_lose_no_wake_up_under_load() {
    let _serial = serial();
    const MAX: usize = 2;
    let log = Log::new();
    let pool = Arc::new(bounded(&log, MAX));
    let rounds = scaled(300, 5);
    let rt = tokio_runtime();
    let cancelled = rt.block_on(async {
        let mut steady = Vec::new();
        for _ in 0..3 {
            let pool = pool.clone();
            steady.push(tokio::spawn(async move {
                for _ in 0..rounds {
                    let obj = pool.get_async().await;
                    tokio::task::yield_now().await;
                    drop(obj);
                }
            }));
        }
        let canceller = {
            let pool = pool.clone();
            tokio::spawn(async move {
                let mut cancelled = 0;
                for _ in 0..rounds {
                    let got = tokio::time::timeout(Duration::from_micros(50), pool.get_async());
                    match got.await {
                        Ok(obj) => drop(obj),
                        Err(_) => cancelled += 1,
                    }
                }
                cancelled
            })
        };
        for task in steady {
            tokio::time::timeout(NEVER, task)
                .await
                .expect("a steady waiter was never woken")
                .unwrap();
        }
        canceller.await.unwrap()
    });
    assert!(log.peak_alive() <= MAX, "{} existed", log.peak_alive());
    assert_eq!(pool.stats().live, log.alive() as u64);
    let _ = cancelled; // how many timed out depends on the machine
}

/// Writer tasks update a container at its pool's bound while reader tasks hold guards
/// across suspensions and drop them (stores that wake nobody): every writer's
/// `get_async` completes (the reclaiming thread and the wake-ups' reclamations bring
/// the old versions back), readers always see a whole version, and the bound holds.
#[test]
fn tokio_writers_and_readers_of_a_bounded_container_make_progress() {
    let _serial = serial();
    const MAX: usize = 3;
    let log = Log::new();
    let pool = bounded(&log, MAX);
    let container = Arc::new(Container::new(&pool, pool.get()));
    let updates = scaled(300, 5);
    let rt = tokio_runtime();
    rt.block_on(async {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let (c, stop) = (container.clone(), stop.clone());
                tokio::spawn(async move {
                    while !stop.load(SeqCst) {
                        let guard = c.acquire();
                        let seen = guard.value;
                        tokio::task::yield_now().await; // held across a suspension
                        assert_eq!(guard.value, seen, "a version changed under its reader");
                        drop(guard);
                    }
                })
            })
            .collect();
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let c = container.clone();
                tokio::spawn(async move {
                    for i in 0..updates {
                        let mut next = c.pool().get_async().await;
                        next.value = (w * updates + i + 1) as u64;
                        c.update(next);
                    }
                })
            })
            .collect();
        for writer in writers {
            tokio::time::timeout(NEVER, writer)
                .await
                .expect("a writer was never woken")
                .unwrap();
        }
        stop.store(true, SeqCst);
        for reader in readers {
            reader.await.unwrap();
        }
    });
    assert!(log.peak_alive() <= MAX, "{} existed", log.peak_alive());
}

/// A tokio multi-thread runtime with 2 workers and timers, as the tokio tests use.
fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap()
}
