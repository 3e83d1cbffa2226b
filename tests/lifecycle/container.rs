//! `Container`, `OptionContainer` and `Guard`: an empty container, `with_acquire`, `swap`,
//! `take`, objects from another pool, and guard reference counts.

use std::panic::{self, AssertUnwindSafe};

use poolswap::{Container, Guard};

/// Hazard slots per thread, as `Container::acquire`'s docs state it.
const HAZARD_SLOTS: usize = 128;

use crate::tracked::{tracked_pool, Log, DEFAULT_MAX_IDLE};
use crate::{logged_container, logged_pool, publish, serial};

#[test]
fn empty_container_acquires_none() {
    let _serial = serial();
    let (log, _, c) = logged_container();
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
    assert_eq!(log.made(), 0, "nothing built for an empty container");
}

#[test]
fn with_acquire_sees_current_and_holds_it_during_the_call() {
    let _serial = serial();
    let (log, _, c) = logged_container();
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
    assert_eq!(c.pool().stats().idle, 0, "a guard's drop recycled");
    assert_eq!(
        poolswap::reclaim(),
        1,
        "the guard was dropped after the call"
    );
    assert_eq!(c.pool().stats().idle, 1);
    assert!(!log.was_dropped(id));
}

#[test]
fn swap_returns_the_old_version() {
    let _serial = serial();
    let (_log, pool, c) = logged_container();
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
        poolswap::internals::ref_count(&old),
        2,
        "the guard's own reference, and the container's, which went to the retired list"
    );
    assert_eq!(c.acquire().unwrap().value, 2);
    assert_eq!(pool.stats().idle, 0);
    assert_eq!(poolswap::reclaim(), 0, "reclaimed under the swap's guard");
    drop(old);
    assert_eq!(pool.stats().idle, 0, "a guard's drop recycled");
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(pool.stats().idle, 1);
}

#[test]
fn take_empties_the_container() {
    let _serial = serial();
    let (_log, pool, c) = logged_container();
    let id = publish(&c, 9);
    let g = c.acquire().unwrap();
    let taken = c.take().expect("a version");
    assert!(c.is_empty());
    assert!(c.acquire().is_none());
    assert!(Guard::ptr_eq(&g, &taken));
    assert_eq!((taken.id, taken.value), (id, 9));
    assert_eq!(
        poolswap::internals::ref_count(&g),
        2,
        "`taken`'s and the retired list's; `g` holds a slot"
    );
    drop(taken);
    assert_eq!(poolswap::reclaim(), 0, "reclaimed under a guard");
    drop(g);
    assert_eq!(pool.stats().idle, 0, "a guard's drop recycled");
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(pool.stats().idle, 1);
    // Usable again after take.
    publish(&c, 10);
    assert_eq!(c.acquire().unwrap().value, 10);
}

#[test]
#[should_panic(expected = "given an object from another pool")]
fn update_with_object_from_another_pool_panics() {
    let _serial = serial();
    let (log, _, c) = logged_container();
    let other = tracked_pool(&log, DEFAULT_MAX_IDLE, 0);
    c.update(other.get());
}

#[test]
#[should_panic(expected = "given an object from another pool")]
fn new_with_object_from_another_pool_panics() {
    let _serial = serial();
    let (log, pool) = logged_pool();
    let other = tracked_pool(&log, DEFAULT_MAX_IDLE, 0);
    let _c = Container::new(&pool, other.get());
}

/// A rejected foreign object is returned to its own pool, and the container is unchanged.
#[test]
fn rejected_foreign_object_goes_home() {
    let _serial = serial();
    let (_log, pool, c) = logged_container();
    publish(&c, 1);
    let other_log = Log::with_history();
    let other = tracked_pool(&other_log, DEFAULT_MAX_IDLE, 0);
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
    assert!(poolswap::internals::pool_ptr_eq(&same, c.pool()));
    assert!(!poolswap::internals::pool_ptr_eq(&other, c.pool()));
    let mut p = same.get();
    p.value = 2;
    c.update(p);
    assert_eq!(c.acquire().unwrap().value, 2);
}

#[test]
fn guard_ref_count_counts_container_and_counted_guards() {
    let _serial = serial();
    let (_, _, c) = logged_container();
    publish(&c, 1);
    // A thread's first HAZARD_SLOTS guards hold slots, not counts; later ones are counted.
    let mut guards = Vec::new();
    for n in 1..=HAZARD_SLOTS + 3 {
        guards.push(c.acquire().unwrap());
        let counted = n.saturating_sub(HAZARD_SLOTS);
        assert_eq!(
            guards
                .iter()
                .filter(|g| poolswap::internals::is_counted(g))
                .count(),
            counted
        );
        assert_eq!(poolswap::internals::ref_count(&guards[0]), 1 + counted);
    }
    let clone = Guard::clone(&guards[0]);
    assert!(
        poolswap::internals::is_counted(&clone),
        "a clone is counted"
    );
    assert!(Guard::ptr_eq(&clone, &guards[0]));
    assert_eq!(poolswap::internals::ref_count(&clone), 1 + 3 + 1);
    assert_eq!(clone.value, 1);
    drop(clone);
    guards.truncate(HAZARD_SLOTS);
    assert_eq!(
        poolswap::internals::ref_count(&guards[0]),
        1,
        "only the container's"
    );
    // A slot freed by a dropped guard is taken again.
    guards.pop();
    let g = c.acquire().unwrap();
    assert!(!poolswap::internals::is_counted(&g));
    guards.clear();
    publish(&c, 2);
    assert_eq!(
        poolswap::internals::ref_count(&g),
        1,
        "the retired list's reference, kept while the slot guard reads the old version"
    );
    assert_eq!(g.value, 1);
}
