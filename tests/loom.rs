//! Loom models of the swap/recycle protocol and the free list.
//!
//! Run with:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom
//! ```
//!
//! Under `cfg(loom)` every atomic, lock and `UnsafeCell` in the crate is loom's (see
//! `src/sync.rs`), so loom explores every interleaving of these small programs (up to the
//! preemption bound) and its `UnsafeCell` tracking reports a read of an object that races
//! with its reset or refill: exactly the use-after-recycle the Go README's notes describe.
//! The objects are plain integers: the writers store a version number, the pool's reset
//! stores 0, so a reader that saw 0 saw an object that was being recycled.
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;
use poolswap::{Container, Guard, Pool};

/// A pool of integers whose reset zeroes them and counts how often it ran.
fn counting_pool() -> (Pool<usize>, Arc<AtomicUsize>) {
    let resets = Arc::new(AtomicUsize::new(0));
    let counter = resets.clone();
    let pool = Pool::builder(
        || 0usize,
        move |v: &mut usize| {
            *v = 0;
            counter.fetch_add(1, SeqCst);
            true
        },
    )
    .max_idle(8)
    .build();
    (pool, resets)
}

/// A version published with the value `v`.
fn publish(c: &Container<usize>, v: usize) {
    let mut next = c.get_new();
    assert_eq!(*next, 0, "get_new handed out an object that was not reset");
    *next = v;
    c.update(next);
}

/// A reader acquires while a writer publishes twice, so the first version can be recycled
/// and handed out again (its node reused) while the reader is between its load and its
/// check: the ABA case of the lock-free acquire.
#[test]
fn acquire_vs_update_vs_release() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(Container::empty(pool));
        publish(&c, 1);

        let writer = {
            let c = c.clone();
            thread::spawn(move || {
                publish(&c, 2);
                publish(&c, 3);
            })
        };
        let reader = {
            let c = c.clone();
            thread::spawn(move || {
                let g = c.acquire().expect("never empty");
                let v = *g;
                assert!((1..=3).contains(&v), "reader saw {v}: a recycled object");
            })
        };
        writer.join().unwrap();
        reader.join().unwrap();
        // After both threads, the last update is current.
        assert_eq!(*c.acquire().unwrap(), 3);
    });
}

/// The reader holds its guard across the writer's updates: the version it holds must not
/// be reset or reused until the guard drops.
#[test]
fn guard_held_across_updates() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(Container::empty(pool));
        publish(&c, 1);

        let reader = {
            let c = c.clone();
            thread::spawn(move || {
                let g = c.acquire().expect("never empty");
                let first = *g;
                thread::yield_now();
                // Same version, unchanged, whatever the writer did meanwhile.
                assert_eq!(*g, first);
                let again = Guard::clone(&g);
                drop(g);
                assert_eq!(*again, first);
            })
        };
        publish(&c, 2);
        publish(&c, 3);
        reader.join().unwrap();
        assert_eq!(*c.acquire().unwrap(), 3);
    });
}

/// The last two guards on a retired version are dropped at once: exactly one of them
/// recycles it, and it is reset exactly once when handed out again.
#[test]
fn last_two_guards_released_at_once() {
    loom::model(|| {
        let (pool, resets) = counting_pool();
        let c = Container::empty(pool.clone());
        publish(&c, 1);
        let a = c.acquire().unwrap();
        let b = Guard::clone(&a);
        publish(&c, 2); // the container lets go of version 1
        assert_eq!(Guard::ref_count(&a), 2);

        let t1 = thread::spawn(move || drop(a));
        let t2 = thread::spawn(move || drop(b));
        t1.join().unwrap();
        t2.join().unwrap();

        // Version 1 is idle exactly once (in the main thread's depot, where it was
        // published): one more object would mean a double put.
        assert_eq!(pool.stats().idle, 1);
        let before = resets.load(SeqCst);
        let recycled = pool.get();
        assert_eq!(*recycled, 0);
        assert_eq!(resets.load(SeqCst), before + 1);
        assert_eq!(pool.stats().idle, 0);
        assert_eq!(pool.stats().created, 2);
    });
}

/// A thread fills its cache until it spills a batch to its depot while another thread,
/// with nothing of its own, steals from that depot: no object is handed out twice (loom's
/// cell tracking reports two owners writing one object), none is lost.
#[test]
fn steal_vs_spill() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let pool = Arc::new(pool);

        let putter = {
            let pool = pool.clone();
            thread::spawn(move || {
                // Three objects through a cache of two: the third put spills one.
                let mut held = [pool.get(), pool.get(), pool.get()];
                for (i, p) in held.iter_mut().enumerate() {
                    **p = i + 1;
                }
            })
        };
        let taker = {
            let pool = pool.clone();
            thread::spawn(move || {
                let mut mine = pool.get();
                assert_eq!(*mine, 0, "handed out without a reset");
                *mine = 9;
            })
        };
        putter.join().unwrap();
        taker.join().unwrap();

        let stats = pool.stats();
        // The taker stole one of the three or built a fourth; every object made is idle.
        assert!(stats.created == 3 || stats.created == 4, "{stats:?}");
        assert_eq!(stats.idle, stats.created, "{stats:?}");
        assert_eq!(stats.hits + stats.misses, 4, "{stats:?}");
    });
}

/// The last guard on a retired version is dropped on a reader thread, which donates the
/// object to the writer's depot, while a third thread steals from that depot: the object is
/// not handed out before the reader is done with it, and not twice.
#[test]
fn donate_vs_steal() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(Container::empty(pool.clone()));
        publish(&c, 1);
        let g = c.acquire().unwrap();
        publish(&c, 2); // version 1 now lives only through `g`

        let reader = thread::spawn(move || {
            assert_eq!(*g, 1);
            drop(g); // donates version 1 to the main thread's depot
        });
        let thief = {
            let pool = pool.clone();
            thread::spawn(move || {
                let mut mine = pool.get();
                assert_eq!(*mine, 0, "handed out without a reset");
                *mine = 7;
            })
        };
        reader.join().unwrap();
        thief.join().unwrap();

        let stats = pool.stats();
        // Version 2 is current; every other object made is idle.
        assert_eq!(stats.idle + 1, stats.created, "{stats:?}");
    });
}

/// The second `trim` frees the victims the first one marked while another thread, with
/// nothing of its own, steals from that same victim list: nothing is freed twice or handed
/// out after being freed, and every object made is either trimmed or still idle.
#[test]
fn trim_vs_steal() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let pool = Arc::new(pool);
        pool.prefill(2); // two idle objects in the main thread's depot
        pool.trim(); // ... now both victims

        let trimmer = {
            let pool = pool.clone();
            thread::spawn(move || pool.trim())
        };
        let user = {
            let pool = pool.clone();
            thread::spawn(move || {
                let mut mine = pool.get();
                assert_eq!(*mine, 0);
                *mine = 5;
            })
        };
        trimmer.join().unwrap();
        user.join().unwrap();

        let stats = pool.stats();
        assert_eq!(stats.trimmed + stats.idle, stats.created, "{stats:?}");
        assert!(stats.trimmed >= 1, "two trims freed nothing: {stats:?}");
    });
}

/// Two writers publish at once while a reader reads: last writer wins, nothing is lost.
#[test]
fn concurrent_writers() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(Container::empty(pool.clone()));
        publish(&c, 1);

        let w1 = {
            let c = c.clone();
            thread::spawn(move || publish(&c, 2))
        };
        let w2 = {
            let c = c.clone();
            thread::spawn(move || publish(&c, 3))
        };
        if let Some(g) = c.acquire() {
            assert!((1..=3).contains(&*g));
        }
        w1.join().unwrap();
        w2.join().unwrap();

        let v = *c.acquire().unwrap();
        assert!(v == 2 || v == 3);
        // One version current, the others idle: all accounted for.
        let stats = pool.stats();
        assert_eq!(stats.idle + 1, stats.created, "{stats:?}");
    });
}

/// A thread exits (its cache moves to its depot and its `Local` is given up for adoption)
/// while another thread, new to the pool, takes an object: it adopts the exited thread's
/// `Local` or makes its own, and steals the flushed object or builds one. Loom's
/// `UnsafeCell` tracking reports it if the adopter's use of the cache is not ordered after
/// the exiting thread's last use. Loom's `Arc` has no `Weak`, so the model runs the exit
/// hook's work through `Pool::loom_thread_exit` instead of a thread-local destructor.
#[test]
fn thread_exit_vs_adoption() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let leaver = {
            let pool = pool.clone();
            thread::spawn(move || {
                let mut mine = pool.get();
                *mine = 3;
                drop(mine); // cached on this thread
                pool.loom_thread_exit();
            })
        };
        let newcomer = {
            let pool = pool.clone();
            thread::spawn(move || {
                let mut mine = pool.get();
                assert_eq!(*mine, 0, "handed out without a reset");
                *mine = 4;
            })
        };
        leaver.join().unwrap();
        newcomer.join().unwrap();

        let stats = pool.stats();
        // Everything made is idle again: nothing lost in the flush, nothing handed out twice.
        assert!(stats.created == 1 || stats.created == 2, "{stats:?}");
        assert_eq!(stats.idle, stats.created, "{stats:?}");
        assert_eq!(stats.hits + stats.misses, 2, "{stats:?}");
    });
}
