//! The lifecycle of a pooled version, ported from Go's `TestLifecycle`, and the documented
//! behaviour of `Pool`, `Pooled`, `Container` and `Guard`, single-threaded where possible.
//!
//! Every object is an [`Obj`] that records, in a shared [`Log`], when the factory made it,
//! when reset ran on it (and on which thread), and when it was dropped, so the tests can
//! check *when* each of those happens, not only that the API returns something.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};

use poolswap::{Container, Guard, Pool, Pooled, DEFAULT_MAX_IDLE};

/// What happened to the objects of one pool.
#[derive(Default)]
struct Log {
    next_id: AtomicUsize,
    /// Ids reset, in order.
    resets: Mutex<Vec<usize>>,
    /// Threads reset ran on, in order.
    reset_threads: Mutex<Vec<ThreadId>>,
    /// Ids dropped, in order.
    drops: Mutex<Vec<usize>>,
    fail_factory: AtomicBool,
    fail_reset: AtomicBool,
    reject_reset: AtomicBool,
}

impl Log {
    fn new() -> Arc<Log> {
        Arc::new(Log::default())
    }
    fn created(&self) -> usize {
        self.next_id.load(SeqCst)
    }
    fn resets(&self) -> Vec<usize> {
        self.resets.lock().unwrap().clone()
    }
    fn drops(&self) -> Vec<usize> {
        self.drops.lock().unwrap().clone()
    }
    fn dropped(&self) -> usize {
        self.drops.lock().unwrap().len()
    }
    fn was_dropped(&self, id: usize) -> bool {
        self.drops.lock().unwrap().contains(&id)
    }
    /// Every object made was dropped exactly once.
    fn assert_all_dropped_once(&self) {
        let mut drops = self.drops();
        drops.sort_unstable();
        let expected: Vec<usize> = (0..self.created()).collect();
        assert_eq!(drops, expected, "each object dropped exactly once");
    }
}

struct Obj {
    id: usize,
    value: u64,
    recycled: bool,
    log: Arc<Log>,
}

impl std::fmt::Debug for Obj {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Obj")
            .field("id", &self.id)
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}

impl Drop for Obj {
    fn drop(&mut self) {
        self.log.drops.lock().unwrap().push(self.id);
    }
}

fn tracked_pool(log: &Arc<Log>, max_idle: usize) -> Pool<Obj> {
    let flog = Arc::clone(log);
    let rlog = Arc::clone(log);
    Pool::builder(
        move || {
            if flog.fail_factory.load(SeqCst) {
                panic!("factory failed on purpose");
            }
            Obj {
                id: flog.next_id.fetch_add(1, SeqCst),
                value: 0,
                recycled: false,
                log: Arc::clone(&flog),
            }
        },
        move |obj: &mut Obj| {
            if rlog.fail_reset.load(SeqCst) {
                panic!("reset failed on purpose");
            }
            rlog.resets.lock().unwrap().push(obj.id);
            rlog.reset_threads
                .lock()
                .unwrap()
                .push(thread::current().id());
            obj.value = 0;
            obj.recycled = true;
            !rlog.reject_reset.load(SeqCst)
        },
    )
    .max_idle(max_idle)
    .build()
}

/// Publishes a new version holding `value`; returns its id.
fn publish(c: &Container<Obj>, value: u64) -> usize {
    let mut next = c.get_new();
    next.value = value;
    next.recycled = false;
    let id = next.id;
    c.update(next);
    id
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("<non-string panic>")
    }
}

/// Go's `TestLifecycle`, extended: get -> count 1; the container holds it; acquire adds;
/// update releases the container's reference; the old version is recycled only after its
/// last guard goes, and reset runs when the pool hands it out again.
#[test]
fn lifecycle() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);

    let mut first = pool.get();
    assert_eq!(Pooled::ref_count(&first), 1);
    assert_eq!(log.created(), 1);
    first.value = 10;
    let first_id = first.id;

    let c = Container::new(pool.clone(), first);
    assert!(!c.is_empty());
    let g1 = c.acquire().expect("container holds a version");
    assert_eq!(Guard::ref_count(&g1), 2, "container + one guard");
    assert_eq!((g1.id, g1.value), (first_id, 10));
    let g2 = c.acquire().expect("container holds a version");
    assert_eq!(Guard::ref_count(&g1), 3, "container + two guards");
    assert!(Guard::ptr_eq(&g1, &g2));

    let mut second = c.get_new();
    assert_ne!(
        second.id, first_id,
        "the held version must not be handed out"
    );
    assert_eq!(log.created(), 2);
    assert_eq!(Pooled::ref_count(&second), 1);
    second.value = 20;
    let second_id = second.id;
    c.update(second);

    assert_eq!(
        Guard::ref_count(&g1),
        2,
        "update dropped the container's reference"
    );
    assert_eq!(
        (g1.id, g1.value),
        (first_id, 10),
        "a guard keeps its version"
    );
    let cur = c.acquire().unwrap();
    assert_eq!((cur.id, cur.value), (second_id, 20));
    assert_eq!(Guard::ref_count(&cur), 2);
    assert!(!Guard::ptr_eq(&g1, &cur));
    drop(cur);

    drop(g1);
    assert_eq!(Guard::ref_count(&g2), 1);
    assert_eq!(pool.stats().idle, 0, "still held by g2");
    drop(g2);
    assert_eq!(pool.stats().idle, 1, "last guard returned it to the pool");
    assert!(log.resets().is_empty(), "reset runs in get, not on release");
    assert_eq!(log.dropped(), 0);

    let third = c.get_new();
    assert_eq!(third.id, first_id, "the only idle object is recycled");
    assert_eq!(
        log.resets(),
        vec![first_id],
        "reset ran once, on the recycled object"
    );
    assert!(third.recycled);
    assert_eq!(third.value, 0);
    assert_eq!(log.created(), 2, "no new object was made");
    assert_eq!(pool.stats().idle, 0);

    drop(third);
    drop(c);
    drop(pool);
    log.assert_all_dropped_once();
}

/// A guard held across many updates keeps its version out of the pool: its reset never runs
/// while held; after the last guard goes it is reset exactly once when next handed out.
#[test]
fn guard_held_across_updates_is_never_reset() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool.clone());
    let held_id = publish(&c, 1);
    let held = c.acquire().unwrap();
    let extra = Guard::clone(&held);

    for v in 2..40u64 {
        publish(&c, v);
        assert_eq!((held.id, held.value, held.recycled), (held_id, 1, false));
        assert!(
            !log.resets().contains(&held_id),
            "reset ran on a held version"
        );
        assert!(!log.was_dropped(held_id));
        assert_eq!(c.acquire().unwrap().value, v);
    }
    assert_eq!(Guard::ref_count(&held), 2, "two guards, no container");
    // The held object is out; the others alternate: current, and the one being filled.
    assert_eq!(log.created(), 3, "one held + two alternating versions");
    let resets_while_held = log.resets().len();
    assert_eq!(
        resets_while_held,
        38 - 2,
        "every update after the first two recycled"
    );

    drop(held);
    assert!(!log.resets().contains(&held_id));
    drop(extra);
    assert_eq!(
        pool.stats().idle,
        2,
        "the held version and the previous one are idle"
    );
    assert!(!log.resets().contains(&held_id), "not reset on release");

    // Take both idle objects: the held version is reset exactly once among them.
    let a = c.get_new();
    let b = c.get_new();
    let resets = log.resets();
    let new_resets = &resets[resets_while_held..];
    assert_eq!(new_resets.len(), 2);
    assert_eq!(new_resets.iter().filter(|&&id| id == held_id).count(), 1);
    assert!(a.id == held_id || b.id == held_id);
    assert_eq!(log.created(), 3);
    drop((a, b)); // they borrow the pool, so they go first
    drop((c, pool));
    log.assert_all_dropped_once();
}

/// Reset runs on the thread that calls `get`, never on the thread that drops the last guard.
#[test]
fn reset_runs_on_the_getting_thread() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool.clone());
    let old_id = publish(&c, 1);
    let guard = c.acquire().unwrap();
    publish(&c, 2);
    // The last reference on the old version is dropped on another thread.
    let reader = thread::spawn(move || {
        assert_eq!(guard.value, 1);
        drop(guard);
        thread::current().id()
    })
    .join()
    .unwrap();
    assert!(
        log.resets().is_empty(),
        "dropping the last guard must not reset"
    );
    assert_eq!(pool.stats().idle, 1);

    let next = c.get_new();
    assert_eq!(next.id, old_id);
    assert_eq!(log.resets(), vec![old_id]);
    let threads = log.reset_threads.lock().unwrap().clone();
    assert_eq!(threads, vec![thread::current().id()]);
    assert_ne!(threads[0], reader);
}

/// The default idle bound, and a burst of returns over it: the excess is dropped.
#[test]
fn default_idle_bound_drops_the_excess() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    assert_eq!(pool.max_idle(), DEFAULT_MAX_IDLE);
    let n = DEFAULT_MAX_IDLE + 5;
    let held: Vec<_> = (0..n).map(|_| pool.get()).collect();
    assert_eq!(log.created(), n);
    drop(held);
    let stats = pool.stats();
    assert_eq!(stats.idle, DEFAULT_MAX_IDLE as u64);
    assert_eq!(stats.dropped_over_cap, 5);
    assert_eq!(log.dropped(), 5, "over-cap objects were really dropped");
    drop(pool);
    log.assert_all_dropped_once();
}

/// `max_idle` from the builder, with versions returned by guards and a container.
#[test]
fn builder_max_idle_bounds_returned_versions() {
    for bound in [0usize, 1, 3] {
        let log = Log::new();
        let pool = tracked_pool(&log, bound);
        let c = Container::empty(pool.clone());
        // Ten distinct versions, each kept by a guard.
        let guards: Vec<_> = (0..10)
            .map(|v| {
                publish(&c, v);
                c.acquire().unwrap()
            })
            .collect();
        drop(c.take());
        assert_eq!(log.created(), 10);
        assert_eq!(log.dropped(), 0);
        drop(guards);
        let stats = pool.stats();
        assert_eq!(stats.idle, bound as u64, "bound {bound}");
        assert_eq!(stats.dropped_over_cap, 10 - bound as u64, "bound {bound}");
        assert_eq!(log.dropped(), 10 - bound, "bound {bound}");
        drop((c, pool));
        log.assert_all_dropped_once();
    }
}

/// A panicking factory reaches the caller of `get`; the pool stays usable.
#[test]
fn factory_panic_reaches_caller_and_pool_stays_usable() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool.clone());
    publish(&c, 1);

    log.fail_factory.store(true, SeqCst);
    let err = panic::catch_unwind(AssertUnwindSafe(|| c.get_new())).unwrap_err();
    assert_eq!(panic_message(&*err), "factory failed on purpose");
    let err = panic::catch_unwind(AssertUnwindSafe(|| pool.get())).unwrap_err();
    assert_eq!(panic_message(&*err), "factory failed on purpose");
    assert_eq!(c.acquire().unwrap().value, 1, "container unaffected");

    log.fail_factory.store(false, SeqCst);
    publish(&c, 2);
    publish(&c, 3);
    assert_eq!(c.acquire().unwrap().value, 3);
    assert_eq!(pool.stats().created, log.created() as u64);
    drop((c, pool));
    log.assert_all_dropped_once();
}

/// A panicking reset reaches the caller; the object being reset is dropped (once), and pool
/// and container stay usable.
#[test]
fn reset_panic_reaches_caller_and_drops_the_object() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool.clone());
    let old = publish(&c, 1);
    publish(&c, 2);
    assert_eq!(pool.stats().idle, 1);

    log.fail_reset.store(true, SeqCst);
    let err = panic::catch_unwind(AssertUnwindSafe(|| c.get_new())).unwrap_err();
    assert_eq!(panic_message(&*err), "reset failed on purpose");
    assert_eq!(
        log.drops(),
        vec![old],
        "the object whose reset panicked was dropped"
    );
    let stats = pool.stats();
    assert_eq!(stats.idle, 0);
    assert_eq!(stats.discarded, 1);
    assert_eq!(c.acquire().unwrap().value, 2, "container unaffected");

    log.fail_reset.store(false, SeqCst);
    let id = publish(&c, 3);
    assert_ne!(id, old);
    publish(&c, 4);
    assert_eq!(c.acquire().unwrap().value, 4);
    drop((c, pool));
    log.assert_all_dropped_once();
}

/// A reset returning `false` drops the object; `get` goes on to the next idle one or the
/// factory. Checks `discarded`, `misses` and `created`.
#[test]
fn rejected_reset_discards_and_falls_back_to_factory() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    pool.prefill(3);
    assert_eq!(pool.stats().idle, 3);
    log.reject_reset.store(true, SeqCst);
    let fresh = pool.get();
    assert_eq!(
        fresh.id, 3,
        "all three idle objects rejected; the factory made a fourth"
    );
    assert!(!fresh.recycled);
    let mut resets = log.resets();
    resets.sort_unstable();
    assert_eq!(resets, vec![0, 1, 2]);
    let mut drops = log.drops();
    drops.sort_unstable();
    assert_eq!(drops, vec![0, 1, 2]);
    let stats = pool.stats();
    assert_eq!(
        (stats.idle, stats.discarded, stats.misses, stats.created),
        (0, 3, 1, 4)
    );

    log.reject_reset.store(false, SeqCst);
    drop(fresh);
    let again = pool.get();
    assert_eq!(again.id, 3);
    assert_eq!(pool.stats().misses, 1);
    drop(again);
    drop(pool);
    log.assert_all_dropped_once();
}

/// `hits` counts `get` calls served with an idle object (its docs); a get whose idle
/// objects were all rejected by reset was served by the factory instead.
#[test]
fn hits_count_gets_served_from_the_pool() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let a = pool.get();
    assert_eq!((pool.stats().hits, pool.stats().misses), (0, 1));
    drop(a);
    let b = pool.get();
    assert_eq!((pool.stats().hits, pool.stats().misses), (1, 1));
    drop(b);

    log.reject_reset.store(true, SeqCst);
    let c = pool.get(); // the idle object is rejected: served by the factory
    let stats = pool.stats();
    assert_eq!((stats.misses, stats.discarded), (2, 1));
    assert_eq!(
        stats.hits + stats.misses,
        3,
        "three gets, each either a hit or a miss: {stats:?}"
    );
    drop(c);
}

/// Dropping the last handles (container, pool) frees every idle object.
#[test]
fn dropping_last_handles_frees_idle_objects() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool.clone());
    let guards: Vec<_> = (0..6)
        .map(|v| {
            publish(&c, v);
            c.acquire().unwrap()
        })
        .collect();
    drop(guards);
    assert_eq!(pool.stats().idle, 5);
    assert_eq!(log.dropped(), 0);
    drop(pool);
    assert_eq!(log.dropped(), 0, "the container still holds the pool");
    drop(c);
    assert_eq!(log.created(), 6);
    log.assert_all_dropped_once();
}

/// Guards outlive their container and pool, read correctly, and free the object when the
/// last is dropped — on another thread, too.
#[test]
fn guards_outlive_container_and_pool() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool.clone());
    publish(&c, 7);
    let id = publish(&c, 8);
    let g = c.acquire().unwrap();
    let g2 = Guard::clone(&g);
    drop(c);
    drop(pool);
    assert!(!log.was_dropped(id));
    assert_eq!((g.id, g.value, g.recycled), (id, 8, false));
    assert_eq!(Guard::ref_count(&g), 2, "two guards; the container is gone");
    drop(g);
    assert!(!log.was_dropped(id));
    thread::spawn(move || {
        assert_eq!(g2.value, 8);
        drop(g2);
    })
    .join()
    .unwrap();
    log.assert_all_dropped_once();
}

/// A `Pooled` borrows the handle it came from, not the pool's other handles: dropping the
/// others (here the first handle) leaves it usable, and dropping it and then its handle
/// frees everything.
///
/// A `Pooled` outliving *its own* handle no longer compiles, by design (`Pooled<'a, T>`
/// borrows the `Pool`); the old `pooled_outlives_pool` case was, in essence:
///
/// ```compile_fail,E0505
/// let pool = poolswap::Pool::new(|| 0u8, |_| true);
/// let p = pool.get();
/// drop(pool); // error[E0505]: cannot move out of `pool` because it is borrowed
/// drop(p);
/// ```
///
/// (Integration tests run no doctests; this block is a note, not a check.)
#[test]
fn pooled_outlives_other_pool_handles() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    pool.prefill(2);
    let handle = pool.clone();
    let mut p = handle.get();
    p.value = 5;
    drop(pool);
    assert_eq!(log.dropped(), 0);
    assert_eq!(p.value, 5);
    drop(p);
    assert_eq!(log.dropped(), 0, "back in the pool, which `handle` keeps");
    assert_eq!(handle.stats().idle, 2);
    drop(handle);
    log.assert_all_dropped_once();
}

#[test]
fn empty_container_acquires_none() {
    let log = Log::new();
    let c = Container::empty(tracked_pool(&log, DEFAULT_MAX_IDLE));
    assert!(c.is_empty());
    assert!(c.acquire().is_none());
    let mut called = false;
    let r = c.with_acquire(|v| {
        called = true;
        v.map(|o| o.value)
    });
    assert!(called);
    assert_eq!(r, None);
    assert!(c.take().is_none());
    assert_eq!(log.created(), 0, "nothing built for an empty container");
}

#[test]
fn with_acquire_sees_current_and_holds_it_during_the_call() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool);
    let id = publish(&c, 42);
    let seen = c.with_acquire(|v| {
        let v = v.expect("not empty");
        // While `f` runs, a guard holds the version: replace it and check it survives.
        publish(&c, 43);
        assert!(!log.was_dropped(id));
        assert!(!log.resets().contains(&id));
        (v.id, v.value)
    });
    assert_eq!(seen, (id, 42));
    assert_eq!(c.with_acquire(|v| v.map(|o| o.value)), Some(43));
    assert_eq!(
        c.pool().stats().idle,
        1,
        "the guard was dropped after the call"
    );
}

#[test]
fn swap_returns_the_old_version() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool.clone());
    let mut first = c.get_new();
    first.value = 1;
    assert!(
        c.swap(first).is_none(),
        "nothing to return from an empty container"
    );
    let mut second = c.get_new();
    second.value = 2;
    let old = c.swap(second).expect("the first version");
    assert_eq!(old.value, 1);
    assert_eq!(
        Guard::ref_count(&old),
        1,
        "the container's reference moved to the guard"
    );
    assert_eq!(c.acquire().unwrap().value, 2);
    assert_eq!(pool.stats().idle, 0);
    drop(old);
    assert_eq!(pool.stats().idle, 1);
}

#[test]
fn take_empties_the_container() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool.clone());
    let id = publish(&c, 9);
    let g = c.acquire().unwrap();
    let taken = c.take().expect("a version");
    assert!(c.is_empty());
    assert!(c.acquire().is_none());
    assert!(Guard::ptr_eq(&g, &taken));
    assert_eq!((taken.id, taken.value), (id, 9));
    assert_eq!(Guard::ref_count(&g), 2, "two guards, no container");
    drop(taken);
    drop(g);
    assert_eq!(pool.stats().idle, 1);
    // Usable again after take.
    publish(&c, 10);
    assert_eq!(c.acquire().unwrap().value, 10);
}

#[test]
#[should_panic(expected = "given an object from another pool")]
fn update_with_object_from_another_pool_panics() {
    let log = Log::new();
    let c = Container::empty(tracked_pool(&log, DEFAULT_MAX_IDLE));
    let other = tracked_pool(&log, DEFAULT_MAX_IDLE);
    c.update(other.get());
}

#[test]
#[should_panic(expected = "given an object from another pool")]
fn new_with_object_from_another_pool_panics() {
    let log = Log::new();
    let other = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let _c = Container::new(tracked_pool(&log, DEFAULT_MAX_IDLE), other.get());
}

/// A rejected foreign object is returned to its own pool, and the container is unchanged.
#[test]
fn rejected_foreign_object_goes_home() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool.clone());
    publish(&c, 1);
    let other_log = Log::new();
    let other = tracked_pool(&other_log, DEFAULT_MAX_IDLE);
    let foreign = other.get();
    assert!(panic::catch_unwind(AssertUnwindSafe(|| c.update(foreign))).is_err());
    assert_eq!(c.acquire().unwrap().value, 1);
    assert_eq!(
        other.stats().idle,
        1,
        "the foreign object went back to its pool"
    );
    assert_eq!(other_log.dropped(), 0);
    // A clone of the container's pool is the same pool: accepted.
    let same = pool.clone();
    assert!(Pool::ptr_eq(&same, c.pool()));
    assert!(!Pool::ptr_eq(&other, c.pool()));
    let mut p = same.get();
    p.value = 2;
    c.update(p);
    assert_eq!(c.acquire().unwrap().value, 2);
}

#[test]
fn guard_ref_count_counts_container_and_guards() {
    let log = Log::new();
    let c = Container::empty(tracked_pool(&log, DEFAULT_MAX_IDLE));
    publish(&c, 1);
    let mut guards = Vec::new();
    for n in 1..=5 {
        guards.push(c.acquire().unwrap());
        assert_eq!(Guard::ref_count(&guards[0]), 1 + n);
    }
    let clone = Guard::clone(&guards[2]);
    assert!(Guard::ptr_eq(&clone, &guards[0]));
    assert_eq!(Guard::ref_count(&clone), 7);
    assert_eq!(clone.value, 1);
    drop(clone);
    assert_eq!(Guard::ref_count(&guards[0]), 6);
    while let Some(g) = guards.pop() {
        assert_eq!(Guard::ref_count(&g), 2 + guards.len());
    }
    let g = c.acquire().unwrap();
    assert_eq!(Guard::ref_count(&g), 2);
    publish(&c, 2);
    assert_eq!(Guard::ref_count(&g), 1, "no longer current");
}

#[test]
fn pooled_is_send_across_threads() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let c = Container::empty(pool.clone());
    let p = c.get_new();
    let id = p.id;
    // A `Pooled` borrows its pool, so it crosses to a scoped thread.
    let p = thread::scope(|s| {
        s.spawn(move || {
            let mut p = p;
            p.value = 77;
            p
        })
        .join()
        .unwrap()
    });
    c.update(p);
    let g = c.acquire().unwrap();
    assert_eq!((g.id, g.value), (id, 77));

    // Dropped on another thread: it sits in that thread's cache until the thread exits,
    // which flushes it to a depot. The explicit `join` waits for the thread's exit (its
    // thread-local destructors included); the end of a scope does not.
    let q = pool.get();
    let qid = q.id;
    thread::scope(|s| s.spawn(move || drop(q)).join().unwrap());
    assert_eq!(pool.stats().idle, 1);
    assert_eq!(pool.get().id, qid);
}

#[test]
fn adopt_takes_an_object_in_and_recycles_it() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    let outside = Obj {
        id: 1000,
        value: 5,
        recycled: false,
        log: Arc::clone(&log),
    };
    let adopted = pool.adopt(outside);
    assert_eq!(Pooled::ref_count(&adopted), 1);
    let stats = pool.stats();
    assert_eq!(
        (stats.created, stats.misses),
        (1, 0),
        "adopt counts as created"
    );
    let c = Container::new(pool.clone(), adopted);
    assert_eq!(c.acquire().unwrap().id, 1000);
    publish(&c, 6); // the factory makes id 0; the adopted object goes idle
    assert_eq!(pool.stats().idle, 1);
    let again = c.get_new();
    assert_eq!(
        again.id, 1000,
        "the adopted object is recycled like any other"
    );
    assert_eq!(log.resets(), vec![1000]);
    assert!(again.recycled);
    drop(again);
    drop((c, pool));
    let mut drops = log.drops();
    drops.sort_unstable();
    assert_eq!(drops, vec![0, 1000]);
}

#[test]
fn clear_drops_idle_objects_down_to_min_idle() {
    let log = Log::new();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE);
    pool.prefill(5);
    assert_eq!(pool.stats().idle, 5);
    let out = pool.get(); // checked out: not affected by clear
    pool.clear();
    let stats = pool.stats();
    assert_eq!((stats.idle, stats.trimmed), (0, 4));
    assert_eq!(log.dropped(), 4);
    assert!(!log.was_dropped(out.id));
    drop(out);
    assert_eq!(
        pool.stats().idle,
        1,
        "checked-out objects come back as usual"
    );

    let log = Log::new();
    let rlog = Arc::clone(&log);
    let flog = Arc::clone(&log);
    let pool = Pool::builder(
        move || Obj {
            id: flog.next_id.fetch_add(1, SeqCst),
            value: 0,
            recycled: false,
            log: Arc::clone(&flog),
        },
        move |o: &mut Obj| {
            rlog.resets.lock().unwrap().push(o.id);
            true
        },
    )
    .min_idle(2)
    .build();
    pool.prefill(6);
    pool.clear();
    let stats = pool.stats();
    assert_eq!((stats.idle, stats.trimmed), (2, 4));
    assert_eq!(log.dropped(), 4);
    drop(pool);
    log.assert_all_dropped_once();
}

#[test]
fn prefill_builds_up_to_n_within_the_bound() {
    let log = Log::new();
    let pool = tracked_pool(&log, 4);
    pool.prefill(3);
    let stats = pool.stats();
    assert_eq!((stats.idle, stats.created, stats.misses), (3, 3, 0));
    pool.prefill(3);
    assert_eq!(pool.stats().created, 3, "already 3 idle: nothing built");
    pool.prefill(100);
    let stats = pool.stats();
    assert_eq!((stats.idle, stats.created), (4, 4), "capped at max_idle");
    assert_eq!(stats.dropped_over_cap, 0);
    // The first gets are served from the prefilled objects.
    let held: Vec<_> = (0..4).map(|_| pool.get()).collect();
    let stats = pool.stats();
    assert_eq!(
        (stats.hits, stats.misses, stats.created, stats.idle),
        (4, 0, 4, 0)
    );
    assert_eq!(log.resets().len(), 4);
    drop(held);
    drop(pool);
    log.assert_all_dropped_once();
}
