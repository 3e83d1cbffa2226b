//! Read-copy-update: `Container::rcu` and `Container::compare_and_swap` lose no update
//! between concurrent writers, give a refused object back, and, with `Recycled` and its
//! recycling copy, change one key of a large owned map without allocating for the rest.
//!
//! Allocations are counted by a counting global allocator over every thread, so the tests
//! of this binary take turns (`SERIAL`): another test's threads would allocate into the
//! count.

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::thread;

use counting_alloc::{serial, Snapshot};
use poolswap::{Container, OptionContainer, Pool, Recycled};

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// `n` under the native test run, `small` under Miri.
fn scaled(n: usize, small: usize) -> usize {
    if cfg!(miri) {
        small
    } else {
        n
    }
}

#[test]
fn concurrent_rcus_lose_no_update() {
    let _serial = serial();
    let writers = 3;
    let per_writer = scaled(2_000, 20);
    let pool = Pool::new(
        || 0u64,
        |n| {
            *n = 0;
            true
        },
    );
    let c = Container::new(&pool, pool.adopt(0));
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        // A reader: versions only go up.
        s.spawn(|| {
            let mut last = 0;
            while !stop.load(SeqCst) {
                let v = *c.acquire();
                assert!(v >= last, "saw {v} after {last}");
                last = v;
            }
        });
        let handles: Vec<_> = (0..writers)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..per_writer {
                        c.rcu(|current, next| {
                            assert_eq!(*next, 0, "rcu handed out an object that was not reset");
                            *next = current + 1;
                        });
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        stop.store(true, SeqCst);
    });
    assert_eq!(*c.acquire(), (writers * per_writer) as u64);
}

#[test]
fn compare_and_swap_gives_the_object_back_on_conflict() {
    let _serial = serial();
    let pool = Pool::new(String::new, |s| {
        s.clear();
        true
    });
    let c = Container::new(&pool, pool.adopt("v1".to_string()));
    let seen = c.acquire();
    c.update(pool.adopt("v2".to_string()));

    let mut mine = pool.get(); // not `c.get_new()`, which would borrow `c`, moved below
    mine.push_str("from v1");
    let back = c
        .compare_and_swap(&seen, mine)
        .expect_err("the current version is v2, not v1");
    assert_eq!(&*back, "from v1", "refused object comes back as it was");
    assert_eq!(&*c.acquire(), "v2");

    let seen = c.acquire();
    let mut next = c.get_new();
    next.push_str("v3");
    c.compare_and_swap(&seen, next).unwrap();
    assert_eq!(&*c.acquire(), "v3");
    drop(seen);

    // The same container, seen as one that may be empty: it is not.
    let c = OptionContainer::from(c);
    let back = c
        .compare_and_swap(None, back)
        .expect_err("not empty either");
    assert_eq!(&*back, "from v1", "refused object comes back as it was");
    assert_eq!(c.acquire().as_deref().map(String::as_str), Some("v3"));

    let empty = OptionContainer::empty(&pool);
    assert_eq!(empty.rcu(|_, _| unreachable!("nothing to copy")), None);
    let first = pool.adopt("first".to_string());
    empty.compare_and_swap(None, first).unwrap();
    assert_eq!(&*empty.acquire().unwrap(), "first");
    assert!(
        empty.compare_and_swap(None, back).is_err(),
        "not empty any more"
    );
}

type Routes = Recycled<HashMap<String, Vec<String>>>;

#[test]
fn rcu_of_one_key_in_a_large_owned_map_allocates_nothing_else() {
    let _serial = serial();
    let entries = scaled(100_000, 50);
    // The reset keeps the contents: `copy_from` then updates an older version in place.
    let pool = Pool::new(Routes::default, |_| true);
    let mut first = pool.get();
    for i in 0..entries {
        first.insert(
            format!("/route/{i:06}"),
            vec![format!("10.0.{}.{}:80", i / 256 % 256, i % 256)],
        );
    }
    let c = Container::new(&pool, first);

    let change = |v: usize| {
        c.rcu(|current, next| {
            Recycled::copy_from(next, current);
            let backends = next.get_mut("/route/000007").expect("present");
            backends[0].clear();
            backends[0].push_str(&format!("10.9.9.{}:80", v % 10));
        });
    };
    // Warm-up: the first copy builds the second object.
    for v in 0..4 {
        change(v);
    }
    let rounds = scaled(6, 3);
    let before = Snapshot::now();
    for v in 4..4 + rounds {
        change(v);
    }
    let allocated = Snapshot::since(before);

    let current = c.acquire();
    assert_eq!(current.len(), entries);
    assert_eq!(
        current["/route/000007"][0],
        format!("10.9.9.{}:80", (3 + rounds) % 10)
    );
    assert_eq!(current["/route/000008"][0], "10.0.0.8:80");
    // The `format!` of the new value is the only allocation of each round.
    assert!(
        allocated.allocs <= rounds as u64,
        "{rounds} rcus of one key in {entries} entries allocated {allocated:?}"
    );
}
