//! The reset function's two shapes: returning `()` keeps every object, returning `bool`
//! keeps or discards it (see `poolswap::ResetOutcome`).

use std::sync::atomic::Ordering::SeqCst;

use poolswap::Pool;

use crate::serial;
use crate::tracked::{tracked_pool, Log};

#[test]
fn a_unit_reset_such_as_vec_clear_compiles_and_keeps_every_object() {
    let _serial = serial();
    let pool: Pool<Vec<u8>> = Pool::new(Vec::new, Vec::clear);
    let mut v = pool.get();
    v.extend_from_slice(b"abc");
    let capacity = v.capacity();
    drop(v);
    for _ in 0..10 {
        let v = pool.get();
        assert!(v.is_empty(), "reset ran");
        assert_eq!(v.capacity(), capacity, "the same Vec came back");
    }
    let s = pool.stats();
    assert_eq!((s.created, s.hits, s.discarded), (1, 10, 0), "{s:?}");
}

#[test]
fn a_unit_reset_closure_works_with_the_builder_too() {
    let _serial = serial();
    let pool = Pool::builder(|| 7u32, |n: &mut u32| *n = 0)
        .max_idle(2)
        .build();
    *pool.get() = 5;
    assert_eq!(*pool.get(), 0);
    assert_eq!(pool.stats().discarded, 0);
}

#[test]
fn a_bool_reset_returning_false_discards_the_object() {
    let _serial = serial();
    let log = Log::new();
    let pool = tracked_pool(&log, 16, 0);
    drop(pool.get());
    log.reject.store(true, SeqCst);
    let fresh = pool.get(); // the idle object is reset, rejected, dropped; the factory runs
    assert_eq!(fresh.id, 1);
    let s = pool.stats();
    assert_eq!(
        (s.created, s.discarded, s.hits, s.misses),
        (2, 1, 0, 2),
        "{s:?}"
    );
    assert_eq!(log.dropped(), 1);
    log.reject.store(false, SeqCst);
    drop(fresh);
    assert_eq!(pool.get().id, 1, "a kept object is handed out again");
}
