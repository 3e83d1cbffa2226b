//! Zero allocations per publish for an op log over `HashMap<String, Vec<String>>`.
//!
//! Overwrites that fit the old value's buffers go through `clone_from`; an insert of a new
//! key reuses the buffers of an entry the same replay removed before it
//! (`Absorb::absorb_all`); the last application moves the operation's data in. Batches of
//! overwrites and remove + insert pairs (the size stays put, as in `benches/oplog.rs`)
//! then allocate nothing once the op log and the versions exist: the operations are made
//! before the counter is read, and only the writer's thread is counted.
//!
//! The counting allocator is process-wide, so this file holds one test.

#[path = "support/churn.rs"]
mod churn;
#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use churn::{key, value, STABLE};

use std::collections::HashMap;

use poolswap::oplog::{MapOp, OpLog};

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

type Op = MapOp<String, Vec<String>>;

/// Batch `r` as operations.
fn batch(r: usize) -> Vec<Op> {
    let (puts, churn) = churn::batch(r);
    let mut ops: Vec<Op> = puts
        .into_iter()
        .map(|i| MapOp::Insert(key(i), value(i, r)))
        .collect();
    for (gone, new) in churn {
        ops.push(MapOp::Remove(key(gone)));
        ops.push(MapOp::Insert(key(new), value(new, r)));
    }
    ops
}

#[test]
fn steady_publishes_of_overwrites_and_replacements_allocate_nothing() {
    let (warm_up, timed) = if cfg!(miri) { (40, 10) } else { (600, 2_000) };
    let init: HashMap<String, Vec<String>> =
        (0..2 * STABLE).map(|i| (key(i), value(i, 0))).collect();
    // A small op log bound, so that the warm-up reaches the spare's catch-up and the op log's
    // largest length: from then on its buffer no longer grows.
    let mut w = OpLog::builder(init).versions(3).max_ops(160).build();
    let mut batches: Vec<Vec<Op>> = (0..warm_up + timed).map(batch).collect();
    batches.reverse();
    for _ in 0..warm_up {
        w.extend(batches.pop().expect("made above"));
        w.publish();
    }
    let before = counting_alloc::thread_allocs();
    for _ in 0..timed {
        let ops = batches.pop().expect("made above");
        // A reader on this thread that lets go before each publish, as in tests/oplog.rs.
        drop(w.read_handle().acquire());
        w.extend(ops);
        w.publish();
    }
    let allocs = counting_alloc::thread_allocs() - before;
    let stats = w.stats();
    assert_eq!(
        allocs, 0,
        "{allocs} allocations in {timed} publishes: {stats:?}"
    );
    assert_eq!(stats.full_syncs, 0, "{stats:?}");
    let now = w.read_handle().acquire();
    churn::check_after(
        warm_up + timed,
        now.len(),
        |i| now.contains_key(&key(i)),
        |i| now[&key(i)].clone(),
    );
}
