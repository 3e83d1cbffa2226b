//! `Pool`'s own API on one thread: the idle bound, a factory or reset that panics or says
//! no, `hits`, `adopt`, `clear` and `prefill`.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::SeqCst;

use poolswap::{Container, OptionContainer};

use crate::tracked::{panic_message, tracked_pool, Log, Tracked, DEFAULT_MAX_IDLE};
use crate::{logged_container, logged_pool, publish, serial};

/// The default idle bound, and a burst of returns over it: the excess is dropped.
#[test]
fn default_idle_bound_drops_the_excess() {
    let _serial = serial();
    let (log, pool) = logged_pool();
    assert_eq!(pool.stats().max_idle, DEFAULT_MAX_IDLE as u64);
    let n = DEFAULT_MAX_IDLE + 5;
    let held: Vec<_> = (0..n).map(|_| pool.get()).collect();
    assert_eq!(log.made(), n as u64);
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
    let _serial = serial();
    for bound in [0usize, 1, 3] {
        let log = Log::with_history();
        let pool = tracked_pool(&log, bound, 0);
        let c = OptionContainer::empty(&pool);
        // Ten distinct versions, each kept by a guard.
        let guards: Vec<_> = (0..10)
            .map(|v| {
                publish(&c, v);
                c.acquire().unwrap()
            })
            .collect();
        drop(c.take());
        assert_eq!(log.made(), 10);
        assert_eq!(log.dropped(), 0);
        drop(guards);
        assert_eq!(pool.stats().idle, 0, "a guard's drop returned a version");
        assert_eq!(log.dropped(), 0, "a guard's drop dropped a version");
        assert_eq!(poolswap::reclaim(), 10, "bound {bound}");
        let stats = pool.stats();
        assert_eq!(stats.idle, bound as u64, "bound {bound}");
        assert_eq!(stats.dropped_over_cap, 10 - bound as u64, "bound {bound}");
        assert_eq!(log.dropped(), 10 - bound as u64, "bound {bound}");
        drop((c, pool));
        log.assert_all_dropped_once();
    }
}

/// A panicking factory reaches the caller of `get`; the pool stays usable.
#[test]
fn factory_panic_reaches_caller_and_pool_stays_usable() {
    let _serial = serial();
    let (log, pool, c) = logged_container();
    publish(&c, 1);

    log.panic_in_factory.store(true, SeqCst);
    let err = panic::catch_unwind(AssertUnwindSafe(|| c.get_new())).unwrap_err();
    assert_eq!(panic_message(&*err), "factory failed on purpose");
    let err = panic::catch_unwind(AssertUnwindSafe(|| pool.get())).unwrap_err();
    assert_eq!(panic_message(&*err), "factory failed on purpose");
    assert_eq!(c.acquire().unwrap().value, 1, "container unaffected");

    log.panic_in_factory.store(false, SeqCst);
    publish(&c, 2);
    publish(&c, 3);
    assert_eq!(c.acquire().unwrap().value, 3);
    assert_eq!(pool.stats().created, log.made());
    drop((c, pool));
    log.assert_all_dropped_once();
}

/// A panicking reset reaches the caller; the object being reset is dropped (once), and pool
/// and container stay usable.
#[test]
fn reset_panic_reaches_caller_and_drops_the_object() {
    let _serial = serial();
    let (log, pool, c) = logged_container();
    let old = publish(&c, 1);
    publish(&c, 2);
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(pool.stats().idle, 1);

    log.panic_in_reset.store(true, SeqCst);
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

    log.panic_in_reset.store(false, SeqCst);
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
    let _serial = serial();
    let (log, pool) = logged_pool();
    pool.prefill(3);
    assert_eq!(pool.stats().idle, 3);
    log.reject.store(true, SeqCst);
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

    log.reject.store(false, SeqCst);
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
    let _serial = serial();
    let (log, pool) = logged_pool();
    let a = pool.get();
    assert_eq!((pool.stats().hits, pool.stats().misses), (0, 1));
    drop(a);
    let b = pool.get();
    assert_eq!((pool.stats().hits, pool.stats().misses), (1, 1));
    drop(b);

    log.reject.store(true, SeqCst);
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

#[test]
fn adopt_takes_an_object_in_and_reuses_it() {
    let _serial = serial();
    let (log, pool) = logged_pool();
    let mut outside = Tracked::foreign(&log, 1000);
    outside.value = 5;
    let adopted = pool.adopt(outside);
    let stats = pool.stats();
    assert_eq!(
        (stats.created, stats.misses),
        (1, 0),
        "adopt counts as created"
    );
    let c = Container::new(&pool, adopted);
    assert_eq!(c.acquire().id, 1000);
    publish(&c, 6); // the factory makes id 0; the adopted object is retired
    assert_eq!(poolswap::reclaim(), 1); // and goes idle
    assert_eq!(pool.stats().idle, 1);
    let again = c.get_new();
    assert_eq!(
        again.id, 1000,
        "the adopted object is reused like any other"
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
    let _serial = serial();
    let (log, pool) = logged_pool();
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

    let log = Log::with_history();
    let pool = tracked_pool(&log, DEFAULT_MAX_IDLE, 2);
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
    let _serial = serial();
    let log = Log::with_history();
    let pool = tracked_pool(&log, 4, 0);
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
