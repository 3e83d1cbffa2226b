//! When a version is reset, returned to its pool and dropped: Go's lifecycle test, guards that hold a
//! version across updates, the thread reset runs on, and handles, guards and `Pooled`s that
//! outlive one another or cross threads.

use std::sync::Arc;
use std::thread;

use poolswap::{Container, Guard};

use crate::{logged_container, logged_pool, publish, serial};

/// Go's `TestLifecycle`, extended: get -> count 1; the container holds it; acquire adds;
/// update hands the container's reference to the retired list; the old version returns to
/// the pool only at a reclamation after its last guard goes (the guard's drop itself returns
/// nothing), and reset runs when the pool hands it out again.
#[test]
fn lifecycle() {
    let _serial = serial();
    let (log, pool) = logged_pool();

    let mut first = pool.get();
    assert_eq!(log.made(), 1);
    first.value = 10;
    let first_id = first.id;

    let c = Container::new(&pool, first);
    let g1 = c.acquire();
    assert_eq!(
        poolswap::internals::ref_count(&g1),
        1,
        "the container's; g1 holds a hazard slot"
    );
    assert_eq!((g1.id, g1.value), (first_id, 10));
    let g2 = c.acquire();
    assert_eq!(
        poolswap::internals::ref_count(&g1),
        1,
        "g2 holds a slot too"
    );
    assert!(Guard::ptr_eq(&g1, &g2));

    let mut second = c.get_new();
    assert_ne!(
        second.id, first_id,
        "the held version must not be handed out"
    );
    assert_eq!(log.made(), 2);
    second.value = 20;
    let second_id = second.id;
    c.update(second);

    assert_eq!(
        poolswap::internals::ref_count(&g1),
        1,
        "the container's reference went to the retired list, which keeps it for g1 and g2"
    );
    assert_eq!(
        (g1.id, g1.value),
        (first_id, 10),
        "a guard keeps its version"
    );
    let cur = c.acquire();
    assert_eq!((cur.id, cur.value), (second_id, 20));
    assert_eq!(poolswap::internals::ref_count(&cur), 1);
    assert!(!Guard::ptr_eq(&g1, &cur));
    drop(cur);

    drop(g1);
    assert_eq!(
        poolswap::internals::ref_count(&g2),
        1,
        "still on the retired list"
    );
    assert_eq!(pool.stats().idle, 0, "still held by g2");
    assert_eq!(poolswap::reclaim(), 0, "reclaimed while g2 reads it");
    drop(g2);
    assert_eq!(pool.stats().idle, 0, "a guard's drop returned a version");
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(
        pool.stats().idle,
        1,
        "the reclamation returned it to the pool"
    );
    assert!(log.resets().is_empty(), "reset runs in get, not on release");
    assert_eq!(log.dropped(), 0);

    let third = c.get_new();
    assert_eq!(third.id, first_id, "the only idle object is reused");
    assert_eq!(
        log.resets(),
        vec![first_id],
        "reset ran once, on the reused object"
    );
    assert!(third.recycled);
    assert_eq!(third.value, 0);
    assert_eq!(log.made(), 2, "no new object was made");
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
    let _serial = serial();
    let (log, pool, c) = logged_container();
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
    assert_eq!(
        poolswap::internals::ref_count(&held),
        2,
        "`extra`'s and the retired list's; `held` holds a slot"
    );
    // The held object is out; the others alternate: current, and the one being filled.
    assert_eq!(log.made(), 3, "one held + two alternating versions");
    let resets_while_held = log.resets().len();
    assert_eq!(
        resets_while_held,
        38 - 2,
        "every update after the first two reused a version"
    );

    drop(held);
    assert!(!log.resets().contains(&held_id));
    drop(extra);
    assert_eq!(pool.stats().idle, 0, "a guard's drop returned a version");
    assert_eq!(poolswap::reclaim(), 2);
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
    assert_eq!(log.made(), 3);
    drop((a, b)); // they borrow the pool, so they go first
    drop((c, pool));
    log.assert_all_dropped_once();
}

/// Reset runs on the thread that calls `get`, never on the thread that drops the last guard,
/// and neither does the return to the pool: that waits for a reclamation.
#[test]
fn reset_runs_on_the_getting_thread() {
    let _serial = serial();
    let (log, pool, c) = logged_container();
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
    assert_eq!(pool.stats().idle, 0, "the reader's drop returned a version");
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(pool.stats().idle, 1);

    let next = c.get_new();
    assert_eq!(next.id, old_id);
    assert_eq!(log.resets(), vec![old_id]);
    let threads = log.reset_threads();
    assert_eq!(threads, vec![thread::current().id()]);
    assert_ne!(threads[0], reader);
}

/// Dropping the last handles (container, pool) frees every idle object.
#[test]
fn dropping_last_handles_frees_idle_objects() {
    let _serial = serial();
    let (log, pool, c) = logged_container();
    let guards: Vec<_> = (0..6)
        .map(|v| {
            publish(&c, v);
            c.acquire().unwrap()
        })
        .collect();
    drop(guards);
    assert_eq!(pool.stats().idle, 0, "a guard's drop returned a version");
    assert_eq!(poolswap::reclaim(), 5);
    assert_eq!(pool.stats().idle, 5);
    assert_eq!(log.dropped(), 0);
    drop(pool);
    assert_eq!(log.dropped(), 0, "the container still holds the pool");
    drop(c);
    assert_eq!(log.made(), 6);
    log.assert_all_dropped_once();
}

/// Guards outlive their container and pool, read correctly, and the object is freed once
/// the last is dropped — on another thread, too — never by a guard's drop: at the next
/// reclamation, or by the orphans' thread, which passes over the retired list of a pool
/// whose last handle went while guards held versions (whichever comes first).
#[test]
fn guards_outlive_container_and_pool() {
    let _serial = serial();
    let (log, pool, c) = logged_container();
    publish(&c, 7);
    let id = publish(&c, 8);
    let g = c.acquire().unwrap();
    let g2 = Guard::clone(&g);
    drop(c);
    drop(pool);
    assert!(!log.was_dropped(id));
    assert_eq!((g.id, g.value, g.recycled), (id, 8, false));
    assert_eq!(
        poolswap::internals::ref_count(&g),
        2,
        "`g2`'s and the retired list's; `g` holds a slot; the container is gone"
    );
    drop(g);
    assert!(
        !log.was_dropped_here(id),
        "a guard's drop dropped the version"
    );
    let on_reader = Arc::clone(&log);
    thread::spawn(move || {
        assert_eq!(g2.value, 8);
        drop(g2);
        assert!(
            !on_reader.was_dropped_here(id),
            "a guard's drop dropped the version"
        );
    })
    .join()
    .unwrap();
    poolswap::reclaim();
    log.wait_all_dropped_once();
}

/// A `Pooled` borrows the handle it came from, not the pool's other handles: dropping the
/// others (here the first handle) leaves it usable, and dropping it and then its handle
/// frees everything.
///
/// A `Pooled` outliving *its own* handle does not compile, by design (`Pooled<'a, T>`
/// borrows the `Pool`):
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
    let _serial = serial();
    let (log, pool) = logged_pool();
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
fn pooled_is_send_across_threads() {
    let _serial = serial();
    let (_log, pool, c) = logged_container();
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
