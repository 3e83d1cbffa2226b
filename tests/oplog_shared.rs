//! `poolswap::oplog::SharedMap`: values shared by every version, reused once none holds
//! them. Steady overwrites and remove + insert pairs allocate nothing on the writer's
//! thread, and a value a reader can still see is never written again.
//!
//! Allocations are counted per thread (`thread_allocs`), so the tests here do not count
//! each other's.

#[path = "support/churn.rs"]
mod churn;
#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use std::collections::HashMap;
use std::sync::Arc;

use churn::{value, STABLE};
use poolswap::oplog::{MapOp, OpLog, SharedMap, Versioned};

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

type Map = SharedMap<Arc<str>, Vec<String>>;
type Op = MapOp<Arc<str>, Arc<Vec<String>>>;

fn key(i: usize) -> Arc<str> {
    Arc::from(churn::key(i))
}

/// What batch `r` does, made before anything is counted (keys as `Arc<str>`, values as
/// owned `Vec<String>`s to copy into shared ones).
struct Batch {
    puts: Vec<(Arc<str>, Vec<String>)>,
    removes: Vec<Arc<str>>,
}

fn batch(r: usize) -> Batch {
    let (puts, churn) = churn::batch(r);
    let mut puts: Vec<_> = puts.into_iter().map(|i| (key(i), value(i, r))).collect();
    let mut removes = Vec::new();
    for (gone, new) in churn {
        removes.push(key(gone));
        puts.push((key(new), value(new, r)));
    }
    Batch { puts, removes }
}

/// Appends the batch: its values made with the `ArcPool` (`share_clone`).
fn append(w: &mut OpLog<Map, Op>, values: &poolswap::oplog::ArcPool<Vec<String>>, b: &Batch) {
    for k in &b.removes {
        w.append(MapOp::Remove(Arc::clone(k)));
    }
    for (k, v) in &b.puts {
        w.append(MapOp::Insert(Arc::clone(k), values.share_clone(v)));
    }
}

#[test]
fn steady_publishes_reuse_displaced_values_and_allocate_nothing() {
    let (warm_up, timed) = if cfg!(miri) { (40, 10) } else { (600, 2_000) };
    let init: HashMap<Arc<str>, Vec<String>> =
        (0..2 * STABLE).map(|i| (key(i), value(i, 0))).collect();
    let mut w = OpLog::builder(Map::from(init))
        .versions(3)
        .max_ops(160)
        .build();
    let values = Arc::clone(w.read_handle().acquire().arc_pool());
    let batches: Vec<Batch> = (0..warm_up + timed).map(batch).collect();
    for b in &batches[..warm_up] {
        append(&mut w, &values, b);
        w.publish();
    }
    let before = counting_alloc::thread_allocs();
    let stats_before = values.stats();
    for b in &batches[warm_up..] {
        // A reader on this thread that lets go before each publish.
        drop(w.read_handle().acquire());
        append(&mut w, &values, b);
        w.publish();
    }
    let allocs = counting_alloc::thread_allocs() - before;
    let stats = values.stats();
    assert_eq!(
        allocs,
        0,
        "{allocs} allocations in {timed} publishes: {stats:?}, {:?}",
        w.stats()
    );
    // Every value of the timed batches (8 each) was a reused `Arc`.
    assert_eq!(
        stats.reused - stats_before.reused,
        8 * timed as u64,
        "{stats:?}"
    );
    assert_eq!(stats.fresh, stats_before.fresh, "{stats:?}");
    assert_eq!(w.stats().full_syncs, 0);
    let now = w.read_handle().acquire();
    churn::check_after(
        warm_up + timed,
        now.len(),
        |i| now.contains_key(&key(i)),
        |i| Vec::clone(&now[&key(i)]),
    );
}

/// A reader holds a guard while the same key is overwritten on every publish: the value
/// it sees stays as it was (the `ArcPool` does not hand out its `Arc`, which the held version
/// still holds), and once the reader lets go and the version catches up, that `Arc` is
/// written again.
#[test]
fn a_value_a_reader_can_see_is_not_reused_until_it_lets_go() {
    let init = HashMap::from([(key(0), value(0, 0)), (key(1), value(1, 0))]);
    let mut w: OpLog<Map, Op> = OpLog::builder(Map::from(init)).versions(3).build();
    let values = Arc::clone(w.read_handle().acquire().arc_pool());
    let overwrite = |w: &mut OpLog<Map, Op>, tag: usize| {
        w.append(MapOp::Insert(key(0), values.share_clone(&value(0, tag))));
        w.publish();
    };
    overwrite(&mut w, 1);
    let held = w.read_handle().acquire();
    assert_eq!(Versioned::seq(&held), 1);
    let seen = Arc::as_ptr(&held[&key(0)]);
    for tag in 2..40 {
        overwrite(&mut w, tag);
        assert_eq!(held[&key(0)], Arc::new(value(0, 1)), "after publish {tag}");
    }
    drop(held);
    // The version the reader held still holds that `Arc` until it replays the overwrite
    // that displaced it; that replay is the overwrite's last application, which hands the
    // `Arc` to the bin, first of all since it is the oldest.
    w.catch_up();
    // ... followed by the 37 values displaced after it: while the version lagged, every
    // overwrite's last application waited for it, so the publishes made fresh values.
    assert!(values.stats().held >= 38, "{:?}", values.stats());
    let again = values.share_clone(&value(0, 40));
    assert_eq!(Arc::as_ptr(&again), seen, "{:?}", values.stats());
    w.append(MapOp::Insert(key(0), again));
    w.publish();
    assert_eq!(
        **w.read_handle().acquire().get(&key(0)).expect("key 0"),
        value(0, 40)
    );
}

/// Readers on other threads look values up while the writer overwrites them with reused
/// `Arc`s: every value a reader sees is whole (its three strings carry one tag), and no
/// later than the version it read promises. A reused value rewritten while a reader
/// could still see it would show mixed tags here, and a data race to ThreadSanitizer
/// and Miri.
#[test]
fn readers_on_other_threads_never_see_a_value_being_rewritten() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread;

    let (keys, publishes) = if cfg!(miri) { (4, 30) } else { (64, 3_000) };
    let init: HashMap<Arc<str>, Vec<String>> = (0..keys).map(|i| (key(i), value(i, 0))).collect();
    let mut w: OpLog<Map, Op> = OpLog::builder(Map::from(init)).versions(3).build();
    let values = Arc::clone(w.read_handle().acquire().arc_pool());
    let done = AtomicBool::new(false);
    thread::scope(|s| {
        for t in 0..2 {
            let container = w.read_handle();
            let done = &done;
            s.spawn(move || {
                let mut i = t;
                while !done.load(Ordering::Acquire) {
                    let version = container.acquire();
                    let seq = Versioned::seq(&version) as usize;
                    let v = &version[&key(i % keys)];
                    // "backend-{j}-{tag:08}-{i:010}": the tag is bytes 10..18 of each.
                    let tag = &v[0][10..18];
                    assert!(v.iter().all(|s| &s[10..18] == tag), "a torn value: {v:?}");
                    // Batch `n` writes tag `n`: a version holds no tag past its number.
                    assert!(
                        tag.parse::<usize>().expect("a tag") <= seq,
                        "{v:?} in {seq}"
                    );
                    drop(version);
                    i += 1;
                }
            });
        }
        for n in 1..=publishes {
            let i = n % keys;
            w.append(MapOp::Insert(key(i), values.share_clone(&value(i, n))));
            w.publish();
        }
        done.store(true, Ordering::Release);
    });
    assert!(values.stats().reused > 0, "{:?}", values.stats());
}
