//! The public API as users write it: constructors that take the pool by reference,
//! `OwnedPooled` across `thread::spawn`, `OptionContainer`, the guards' standard traits,
//! auto traits, `Debug`, and `Cache`.
//!
//! Every test that looks at a pool's counters takes [`serial`] first (see there).

#[path = "support/serial.rs"]
mod serial;

use serial::serial;
use std::borrow::{Borrow, BorrowMut};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::panic::{self, RefUnwindSafe, UnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;

use poolswap::{Cache, Container, Guard, MappedGuard, OptionContainer, OwnedPooled, Pool, Pooled};

/// The substring of the panic message of a container given another pool's object.
const FOREIGN: &str = "a container was given an object from another pool";

/// A pool of byte vectors whose reset clears them and counts its calls.
fn counting_pool() -> (Pool<Vec<u8>>, Arc<AtomicUsize>) {
    let resets = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&resets);
    let pool = Pool::new(Vec::new, move |v: &mut Vec<u8>| {
        // Relaxed: read on the same thread, or after a join.
        counter.fetch_add(1, Ordering::Relaxed);
        v.clear();
        true
    });
    (pool, resets)
}

fn bytes_pool() -> Pool<Vec<u8>> {
    Pool::new(Vec::new, |v: &mut Vec<u8>| {
        v.clear();
        true
    })
}

fn strings_pool() -> Pool<String> {
    Pool::new(String::new, |s: &mut String| {
        s.clear();
        true
    })
}

fn idle<T>(pool: &Pool<T>) -> u64 {
    pool.stats().idle
}

// ---------------------------------------------------------------------------------------
// 1. Constructors.

#[test]
fn the_issue_snippet_compiles_and_publishes_the_object() {
    let _serial = serial();
    let pool = bytes_pool();
    let init = pool.get();
    let c = Container::new(&pool, init);
    assert!(c.acquire().is_empty());
    assert_eq!(pool.stats().created, 1);

    let mut next = c.get_new();
    next.extend_from_slice(b"filled");
    c.update(next);
    assert_eq!(*c.acquire(), b"filled");
}

#[test]
fn a_container_is_built_from_a_plain_value_in_one_call() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Container::from_value(&pool, vec![1, 2, 3]);
    assert_eq!(*c.acquire(), [1, 2, 3]);
    let o = OptionContainer::from_value(&pool, vec![4]);
    assert_eq!(o.acquire().as_deref(), Some(&vec![4]));
    // Both versions were taken into the pool: the first update retires each, and the
    // next reclamation returns each there.
    c.update(pool.adopt(vec![]));
    o.update(pool.adopt(vec![]));
    assert_eq!(poolswap::reclaim(), 2);
    assert_eq!(idle(&pool), 2);
}

#[test]
fn constructors_take_owned_objects_and_keep_their_own_pool_handle() {
    let _serial = serial();
    let pool = bytes_pool();
    let mut init = pool.get_owned();
    init.push(1);
    let c = Container::new(&pool, init);
    let o = OptionContainer::new(&pool, Pooled::into_owned(pool.adopt(vec![2])));
    drop(pool);
    // The containers hold the pool: objects still come from it and go back to it.
    let mut next = c.get_new();
    next.push(3);
    c.update(next);
    assert_eq!(*c.acquire(), [3]);
    assert_eq!(*o.acquire().expect("not empty"), [2]);
    assert!(poolswap::internals::pool_ptr_eq(c.pool(), o.pool()));
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(idle(c.pool()), 1);
}

// ---------------------------------------------------------------------------------------
// 2. OwnedPooled.

#[test]
fn owned_object_filled_on_a_spawned_thread_is_published_on_this_one() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Container::from_value(&pool, vec![0]);
    let mut next = pool.get_owned();
    let filler = thread::spawn(move || {
        next.extend_from_slice(b"from another thread");
        next
    });
    let next = filler.join().expect("filler");
    c.update(next);
    assert_eq!(*c.acquire(), b"from another thread");

    // The same through `Pooled::into_owned` and the container's pool's `get_owned`.
    let mut a = Pooled::into_owned(pool.get());
    let mut b = c.pool().get_owned();
    let filler = thread::spawn(move || {
        a.push(1);
        b.push(2);
        (a, b)
    });
    let (a, b) = filler.join().expect("filler");
    let old = c.swap(a);
    assert_eq!(*old, b"from another thread");
    c.update(b);
    assert_eq!(*c.acquire(), [2]);
}

/// A struct that keeps a pooled buffer in a field, with no lifetime parameter.
struct Connection {
    id: u8,
    buffer: OwnedPooled<Vec<u8>>,
}

#[test]
fn owned_object_lives_in_a_struct_field_without_a_lifetime() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Container::from_value(&pool, vec![]);
    let conn = Connection {
        id: 7,
        buffer: pool.get_owned(),
    };
    // The struct is 'static: it can go to a spawned thread and come back.
    let conn = thread::spawn(move || {
        let mut conn = conn;
        let id = conn.id;
        conn.buffer.extend_from_slice(&[id, id]);
        conn
    })
    .join()
    .expect("worker");
    c.update(conn.buffer);
    assert_eq!(*c.acquire(), [7, 7]);
}

#[test]
fn owned_object_dropped_on_another_thread_returns_to_the_pool() {
    let _serial = serial();
    let (pool, resets) = counting_pool();
    let mut owned = pool.get_owned();
    owned.extend_from_slice(b"dirty");
    let buffer = owned.as_ptr();
    assert_eq!(idle(&pool), 0);
    thread::spawn(move || drop(owned)).join().expect("dropper");
    assert_eq!(idle(&pool), 1);

    let again = pool.get();
    assert_eq!(again.as_ptr(), buffer, "not the same object");
    assert!(again.is_empty(), "not reset");
    assert_eq!(resets.load(Ordering::Relaxed), 1);
    assert_eq!(pool.stats().created, 1);
}

#[test]
fn owned_object_outlives_every_other_pool_handle() {
    let _serial = serial();
    let mut owned = {
        let pool = bytes_pool();
        pool.get_owned()
    };
    owned.extend_from_slice(b"still here");
    assert_eq!(*owned, b"still here");
    drop(owned);
}

#[test]
fn failed_compare_and_swap_gives_the_owned_object_back_intact() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Container::from_value(&pool, vec![1]);
    let seen = c.acquire();
    c.update(pool.adopt(vec![2])); // another writer got there first

    let mut next = pool.get_owned();
    next.extend_from_slice(&[7, 8, 9]);
    let buffer = next.as_ptr();
    let next = c
        .compare_and_swap(&seen, next)
        .expect_err("the version changed since `seen`");
    assert_eq!(*next, [7, 8, 9]);
    assert_eq!(next.as_ptr(), buffer, "not the same object");
    assert_eq!(*c.acquire(), [2], "a failed compare-and-swap published");

    drop(seen);
    let seen = c.acquire();
    assert!(c.compare_and_swap(&seen, next).is_ok());
    assert_eq!(*c.acquire(), [7, 8, 9]);
}

#[test]
fn refused_objects_return_to_the_pool_when_dropped() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Container::from_value(&pool, vec![1]);
    let seen = c.acquire();
    c.update(pool.adopt(vec![2]));
    drop(seen); // a store: version [1] stays retired until the reclamation
    assert_eq!(poolswap::reclaim(), 1); // version [1] back in the pool
    let base = idle(&pool);

    let seen = c.acquire();
    c.update(pool.adopt(vec![3])); // `seen` is stale now
    let refused_owned = c
        .compare_and_swap(&seen, Pooled::into_owned(pool.adopt(vec![4])))
        .expect_err("stale");
    let refused = c
        .compare_and_swap(&seen, pool.adopt(vec![5]))
        .expect_err("stale");
    drop(seen);
    assert_eq!(idle(&pool), base, "a guard's drop recycled version [2]");
    assert_eq!(poolswap::reclaim(), 1); // version [2] back in the pool
    assert_eq!(idle(&pool), base + 1);
    drop(refused_owned);
    drop(refused);
    assert_eq!(idle(&pool), base + 3);
    assert_eq!(*c.acquire(), [3]);
}

#[test]
#[should_panic(expected = "a container was given an object from another pool")]
fn update_with_an_owned_object_from_another_pool_panics() {
    let _serial = serial();
    let pool = bytes_pool();
    let other = bytes_pool();
    let c = Container::from_value(&pool, vec![]);
    c.update(other.get_owned());
}

#[test]
#[should_panic(expected = "a container was given an object from another pool")]
fn update_with_a_pooled_object_from_another_pool_panics() {
    let _serial = serial();
    let pool = bytes_pool();
    let other = bytes_pool();
    let c = Container::from_value(&pool, vec![]);
    c.update(other.get());
}

#[test]
#[should_panic(expected = "a container was given an object from another pool")]
fn option_container_update_with_an_owned_object_from_another_pool_panics() {
    let _serial = serial();
    let pool = bytes_pool();
    let other = bytes_pool();
    let c = OptionContainer::empty(&pool);
    c.update(other.get_owned());
}

#[test]
#[should_panic(expected = "a container was given an object from another pool")]
fn option_container_update_with_a_pooled_object_from_another_pool_panics() {
    let _serial = serial();
    let pool = bytes_pool();
    let other = bytes_pool();
    let c = OptionContainer::empty(&pool);
    c.update(other.get());
}

#[test]
#[should_panic(expected = "a container was given an object from another pool")]
fn new_with_an_owned_object_from_another_pool_panics() {
    let _serial = serial();
    let pool = bytes_pool();
    let other = bytes_pool();
    let _c = Container::new(&pool, other.get_owned());
}

#[test]
#[should_panic(expected = "a container was given an object from another pool")]
fn compare_and_swap_with_an_owned_object_from_another_pool_panics() {
    let _serial = serial();
    let pool = bytes_pool();
    let other = bytes_pool();
    let c = Container::from_value(&pool, vec![]);
    let seen = c.acquire(); // current: the swap would succeed if it were allowed
    let _ = c.compare_and_swap(&seen, other.get_owned());
}

#[test]
#[should_panic(expected = "a container was given an object from another pool")]
fn option_container_compare_and_swap_from_another_pool_panics() {
    let _serial = serial();
    let pool = bytes_pool();
    let other = bytes_pool();
    let c = OptionContainer::empty(&pool);
    let _ = c.compare_and_swap(None, other.get());
}

#[test]
fn a_refused_foreign_object_leaves_the_container_as_it_was() {
    let _serial = serial();
    let pool = bytes_pool();
    let other = bytes_pool();
    let c = Container::from_value(&pool, vec![1]);
    let foreign = Pooled::into_owned(other.adopt(vec![9]));
    let c_ref = &c;
    // No `AssertUnwindSafe`: `&Container` and `OwnedPooled` are unwind-safe.
    let caught = panic::catch_unwind(move || c_ref.update(foreign));
    let message = caught.expect_err("published a foreign object");
    let message = message
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| message.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    assert!(message.contains(FOREIGN), "{message}");
    assert_eq!(*c.acquire(), [1]);
    // The foreign object went back to its own pool, not to the container's.
    assert_eq!(idle(&other), 1);
    assert_eq!(idle(&pool), 0);
}

// ---------------------------------------------------------------------------------------
// 3. OptionContainer.

#[test]
fn empty_option_container_reads_none() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = OptionContainer::empty(&pool);
    assert!(c.is_empty());
    assert!(c.acquire().is_none());
    assert_eq!(c.with_acquire(|v| v.map(Vec::len)), None);
    assert!(c.take().is_none());
    let mut called = false;
    assert_eq!(c.rcu(|_, _| called = true), None);
    assert!(!called, "rcu called f on an empty container");
    assert!(c.swap(pool.adopt(vec![1])).is_none());
    assert!(!c.is_empty());
    assert_eq!(c.with_acquire(|v| v.map(Vec::len)), Some(1));
}

#[test]
fn take_returns_the_old_version_and_empties() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = OptionContainer::from_value(&pool, vec![1]);
    let reader = c.acquire().expect("not empty");
    let taken = c.take().expect("not empty");
    assert_eq!(*taken, [1]);
    assert!(Guard::ptr_eq(&taken, &reader));
    assert!(c.is_empty());
    assert!(c.acquire().is_none());
    assert!(c.take().is_none());
    drop(reader);
    assert_eq!(poolswap::reclaim(), 0, "recycled while `taken` reads it");
    assert_eq!(idle(&pool), 0, "recycled while `taken` reads it");
    drop(taken);
    assert_eq!(idle(&pool), 0, "a guard's drop recycled the taken version");
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(idle(&pool), 1);
}

#[test]
fn compare_and_swap_from_none_succeeds_only_while_empty() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = OptionContainer::empty(&pool);
    assert!(c.compare_and_swap(None, pool.adopt(vec![1])).is_ok());
    assert_eq!(*c.acquire().expect("published"), [1]);

    let refused = c
        .compare_and_swap(None, Pooled::into_owned(pool.adopt(vec![2])))
        .expect_err("not empty any more");
    assert_eq!(*refused, [2]);
    assert_eq!(*c.acquire().expect("not empty"), [1]);

    let old = c.take().expect("not empty");
    // Expecting the old version fails now that the container is empty.
    let refused = c
        .compare_and_swap(Some(&old), refused)
        .expect_err("the container is empty");
    assert!(c.is_empty());
    assert!(c.compare_and_swap(None, refused).is_ok());
    assert_eq!(*c.acquire().expect("published"), [2]);

    let seen = c.acquire();
    assert!(c
        .compare_and_swap(seen.as_ref(), pool.adopt(vec![3]))
        .is_ok());
    assert_eq!(*c.acquire().expect("published"), [3]);
}

#[test]
fn option_container_from_container_keeps_the_version() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Container::from_value(&pool, vec![1, 2]);
    let before = c.acquire();
    let o = OptionContainer::from(c);
    let after = o.acquire().expect("not empty");
    assert!(Guard::ptr_eq(&before, &after));
    drop((before, after));
    assert_eq!(*o.take().expect("not empty"), [1, 2]);
    assert!(o.acquire().is_none());
    // The taken version goes back to the pool: the converted container still owns it.
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(idle(&pool), 1);
}

#[test]
fn option_container_into_inner_returns_the_last_version() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = OptionContainer::from_value(&pool, vec![1]);
    c.update(pool.adopt(vec![2]));
    let last = c.into_inner().expect("not empty");
    assert_eq!(*last, [2]);
    // The container's drop reclaimed: version [1] is back.
    assert_eq!(idle(&pool), 1); // version [1]
    drop(last);
    assert_eq!(idle(&pool), 1, "a guard's drop recycled version [2]");
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(idle(&pool), 2);

    let empty = OptionContainer::<Vec<u8>>::empty(&pool);
    assert!(empty.into_inner().is_none());
}

// ---------------------------------------------------------------------------------------
// 4. Container: swap and into_inner.

#[test]
fn swap_returns_the_old_version_which_stays_out_of_the_pool_while_held() {
    let _serial = serial();
    let (pool, resets) = counting_pool();
    let c = Container::from_value(&pool, vec![1]);
    let old = c.swap(pool.adopt(vec![2]));
    assert_eq!(*old, [1]);
    assert_eq!(*c.acquire(), [2]);
    assert!(!Guard::ptr_eq(&old, &c.acquire()));

    // More updates, with objects from the pool: never the held one.
    for i in 3..6 {
        let mut next = c.get_new();
        assert!(next.is_empty());
        next.push(i);
        c.update(next);
        assert_eq!(*old, [1], "a held version was recycled");
    }
    poolswap::reclaim();
    assert_eq!(*old, [1], "a held version was recycled");
    let idle_before = idle(&pool);
    drop(old);
    assert_eq!(
        idle(&pool),
        idle_before,
        "a guard's drop recycled version [1]"
    );
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(idle(&pool), idle_before + 1);
    let resets_before = resets.load(Ordering::Relaxed);
    let taken: Vec<_> = (0..idle_before + 1).map(|_| pool.get()).collect();
    assert!(taken.iter().all(|v| v.is_empty()));
    assert_eq!(
        resets.load(Ordering::Relaxed),
        resets_before + taken.len(),
        "every idle object is reset on its way out"
    );
}

#[test]
fn into_inner_returns_the_last_version_which_then_returns_to_the_pool() {
    let _serial = serial();
    let (pool, resets) = counting_pool();
    let c = Container::from_value(&pool, vec![1]);
    c.update(pool.adopt(vec![2, 3]));
    assert_eq!(idle(&pool), 0, "the update recycled version [1] at once");
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(idle(&pool), 1);

    let last = c.into_inner();
    assert_eq!(*last, [2, 3]);
    let buffer = last.as_ptr();
    assert_eq!(
        idle(&pool),
        1,
        "the last version was recycled while a guard reads it"
    );
    drop(last);
    assert_eq!(idle(&pool), 1, "a guard's drop recycled the last version");
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(idle(&pool), 2);

    // Take both idle objects: one of them is the last version, reset.
    let resets_before = resets.load(Ordering::Relaxed);
    let a = pool.get();
    let b = pool.get();
    assert_eq!(resets.load(Ordering::Relaxed), resets_before + 2);
    assert!(a.as_ptr() == buffer || b.as_ptr() == buffer);
    assert!(a.is_empty() && b.is_empty());
    assert_eq!(pool.stats().created, 2);
}

#[test]
fn into_inner_guard_outlives_the_pool() {
    let _serial = serial();
    let last = {
        let pool = bytes_pool();
        Container::from_value(&pool, vec![4, 5]).into_inner()
    };
    assert_eq!(*last, [4, 5]);
    let on_another_thread = thread::spawn(move || last.iter().sum::<u8>());
    assert_eq!(on_another_thread.join().expect("reader"), 9);
}

// ---------------------------------------------------------------------------------------
// 5. Guard traits.

#[test]
fn guard_display_formats_as_the_value_does() {
    let _serial = serial();
    let pool = strings_pool();
    let c = Container::from_value(&pool, String::from("v1"));
    let g = c.acquire();
    assert_eq!(format!("{g}"), "v1");
    // The formatter's flags reach the value's `Display`.
    assert_eq!(format!("[{g:>6}]"), format!("[{:>6}]", *g));
    assert_eq!(format!("[{g:-<4.1}]"), "[v---]");
    assert_eq!(g.to_string(), "v1");
}

#[test]
fn guards_compare_and_hash_by_value() {
    let _serial = serial();
    let pool = strings_pool();
    let a = Container::from_value(&pool, String::from("same"));
    let b = Container::from_value(&pool, String::from("same"));
    let z = Container::from_value(&pool, String::from("zzz"));
    let (ga, gb, gz) = (a.acquire(), b.acquire(), z.acquire());

    assert!(ga == gb, "equal values");
    assert!(!Guard::ptr_eq(&ga, &gb), "different versions");
    assert!(Guard::ptr_eq(&ga, &a.acquire()));
    assert!(ga != gz);
    assert!(ga < gz && gz > gb);
    assert_eq!(ga.cmp(&gz), std::cmp::Ordering::Less);
    assert_eq!(ga.partial_cmp(&gb), Some(std::cmp::Ordering::Equal));

    let hash = |h: &dyn Fn(&mut DefaultHasher)| {
        let mut hasher = DefaultHasher::new();
        h(&mut hasher);
        hasher.finish()
    };
    assert_eq!(hash(&|h| ga.hash(h)), hash(&|h| gb.hash(h)));
    assert_eq!(hash(&|h| ga.hash(h)), hash(&|h| "same".to_owned().hash(h)));

    let mut sorted = [z.acquire(), a.acquire(), b.acquire()];
    sorted.sort();
    let values: Vec<&str> = sorted.iter().map(|g| g.as_str()).collect();
    assert_eq!(values, ["same", "same", "zzz"]);
}

#[test]
fn a_set_of_guards_is_looked_up_by_value() {
    let _serial = serial();
    let pool = strings_pool();
    let a = Container::from_value(&pool, String::from("v1"));
    let b = Container::from_value(&pool, String::from("v1"));
    let c = Container::from_value(&pool, String::from("v2"));

    // The lint sees the guard's hazard slot (an atomic) through its fields; `Hash` and
    // `Eq` read only the version, which nothing mutates while a guard exists.
    #[allow(clippy::mutable_key_type)]
    let mut seen: HashSet<Guard<String>> = HashSet::new();
    assert!(seen.insert(a.acquire()));
    assert!(!seen.insert(b.acquire()), "an equal value is already there");
    assert!(seen.insert(c.acquire()));
    assert_eq!(seen.len(), 2);
    assert!(seen.contains(&String::from("v1")));
    assert!(seen.contains(&String::from("v2")));
    assert!(!seen.contains(&String::from("v3")));
    let found = seen.get(&String::from("v1")).expect("present");
    assert!(
        Guard::ptr_eq(found, &a.acquire()),
        "the first inserted stays"
    );

    // Borrow and AsRef give the version itself.
    let g = c.acquire();
    let borrowed: &String = g.borrow();
    let as_ref: &String = g.as_ref();
    assert!(std::ptr::eq(borrowed, &*g) && std::ptr::eq(as_ref, &*g));
}

/// A version whose reset overwrites it: a recycled object reads [`RECYCLED`].
#[derive(Debug)]
struct Config {
    name: String,
    generation: u64,
}

const RECYCLED: &str = "recycled";

fn config_pool() -> Pool<Config> {
    Pool::new(
        || Config {
            name: String::new(),
            generation: 0,
        },
        |c: &mut Config| {
            c.name.clear();
            c.name.push_str(RECYCLED);
            c.generation = u64::MAX;
            true
        },
    )
}

#[test]
fn mapped_guard_keeps_its_version_through_updates_and_recycling() {
    let _serial = serial();
    let pool = config_pool();
    let c = Container::from_value(
        &pool,
        Config {
            name: String::from("v0"),
            generation: 0,
        },
    );
    let name: MappedGuard<Config, str> = Guard::map(c.acquire(), |c| c.name.as_str());
    let generation = Guard::map(c.acquire(), |c| &c.generation);
    assert_eq!((&*name, *generation), ("v0", 0));

    for n in 1..=5 {
        let mut next = c.get_new();
        next.name.clear();
        write!(next.name, "v{n}").expect("write to a String");
        next.generation = n;
        c.update(next);
    }
    // Every idle object goes out through the reset, and more are made.
    let taken: Vec<_> = (0..6).map(|_| pool.get()).collect();
    assert!(
        taken.iter().any(|t| t.name == RECYCLED),
        "no object was recycled: the test proves nothing"
    );
    assert_eq!(&*name, "v0");
    assert_eq!(*generation, 0);
    assert_eq!(format!("{name}"), "v0");
    assert_eq!(c.acquire().generation, 5);
    drop(taken);

    // A mapped guard can go to another thread, and be dropped there.
    let base = idle(&pool);
    let read = thread::spawn(move || name.to_owned())
        .join()
        .expect("reader");
    assert_eq!(read, "v0");
    assert_eq!(idle(&pool), base, "`generation` still holds the version");
    assert_eq!(*generation, 0);
    drop(generation);
    assert_eq!(
        idle(&pool),
        base,
        "a mapped guard's drop recycled the version"
    );
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(idle(&pool), base + 1);
}

fn assert_send<T: Send>() {}
fn assert_sync<T: Sync>() {}
fn assert_send_sync<T: Send + Sync>() {}
fn assert_static<T: 'static>() {}
fn assert_unwind_safe<T: UnwindSafe>() {}
fn assert_ref_unwind_safe<T: RefUnwindSafe>() {}

#[test]
fn mapped_guards_are_send_and_sync_when_their_parts_are() {
    assert_send::<MappedGuard<Config, str>>();
    assert_sync::<MappedGuard<Config, str>>();
    assert_send::<MappedGuard<Vec<u8>, [u8]>>();
    assert_send::<MappedGuard<Vec<u8>, u8>>();
    assert_unwind_safe::<MappedGuard<Vec<u8>, [u8]>>();
}

// ---------------------------------------------------------------------------------------
// 6. Auto traits.

#[test]
fn public_types_have_the_auto_traits_users_need() {
    assert_send_sync::<Container<Vec<u8>>>();
    assert_send_sync::<OptionContainer<Vec<u8>>>();
    assert_send_sync::<Guard<Vec<u8>>>();
    assert_send_sync::<OwnedPooled<Vec<u8>>>();
    assert_send_sync::<Pool<Vec<u8>>>();
    assert_send_sync::<poolswap::Reclaimer>();
    assert_send_sync::<Cache<Vec<u8>, Arc<Container<Vec<u8>>>>>();
    assert_send_sync::<poolswap::oplog::ReadHandle<Vec<u8>>>();
    assert_static::<poolswap::oplog::ReadHandle<Vec<u8>>>();
    assert_static::<OwnedPooled<Vec<u8>>>();
    assert_static::<Guard<Vec<u8>>>();
    assert_unwind_safe::<Container<Vec<u8>>>();
    assert_ref_unwind_safe::<Container<Vec<u8>>>();
    assert_unwind_safe::<OptionContainer<Vec<u8>>>();
    assert_ref_unwind_safe::<OptionContainer<Vec<u8>>>();
    assert_unwind_safe::<Guard<Vec<u8>>>();
    assert_ref_unwind_safe::<Guard<Vec<u8>>>();
    assert_unwind_safe::<OwnedPooled<Vec<u8>>>();
    // A shared container crosses `catch_unwind` as an `Arc<Container<T>>` does.
    assert_unwind_safe::<Arc<Container<Vec<u8>>>>();
    assert_unwind_safe::<Arc<OptionContainer<Vec<u8>>>>();
    assert_unwind_safe::<&Container<Vec<u8>>>();
}

#[test]
fn catch_unwind_needs_no_assert_unwind_safe() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Container::from_value(&pool, vec![1, 2]);
    let len = panic::catch_unwind(|| c.acquire().len());
    assert_eq!(len.ok(), Some(2));
    let g = c.acquire();
    let sum = panic::catch_unwind(move || g.iter().sum::<u8>());
    assert_eq!(sum.ok(), Some(3));
}

#[test]
fn a_guard_held_by_a_panicking_closure_is_released() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Container::from_value(&pool, vec![1, 2]);
    let caught = panic::catch_unwind(|| {
        let g = c.acquire();
        if g.len() == 2 {
            // No panic hook, so no noise in the test output.
            panic::resume_unwind(Box::new("deliberate"));
        }
    });
    assert!(caught.is_err());
    assert_eq!(*c.acquire(), [1, 2]);
    c.update(pool.adopt(vec![3]));
    assert_eq!(
        poolswap::reclaim(),
        1,
        "the unwound guard still holds the old version"
    );
    assert_eq!(idle(&pool), 1);
}

// ---------------------------------------------------------------------------------------
// 7. Debug.

#[test]
fn debug_shows_the_current_value() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Container::from_value(&pool, vec![1, 2]);
    let shown = format!("{c:?}");
    assert!(shown.contains("[1, 2]"), "{shown}");
    c.update(pool.adopt(vec![3]));
    let shown = format!("{c:?}");
    assert!(
        shown.contains("[3]") && !shown.contains("[1, 2]"),
        "{shown}"
    );
    let g = c.acquire();
    assert!(format!("{g:?}").contains("[3]"));

    let o = OptionContainer::empty(&pool);
    let shown = format!("{o:?}");
    assert!(shown.contains("None"), "{shown}");
    o.update(pool.adopt(vec![4, 5]));
    let shown = format!("{o:?}");
    assert!(shown.contains("Some([4, 5])"), "{shown}");

    // A cache shows the version it holds, not an address.
    let mut cache = Cache::new(&c);
    let _ = cache.load();
    c.update(pool.adopt(vec![6]));
    let shown = format!("{cache:?}");
    assert!(
        shown.contains("cached: [3]") && !shown.contains("0x"),
        "{shown}"
    );
}

#[test]
fn pooled_objects_forward_the_standard_traits() {
    fn fill(s: &mut impl AsMut<String>, text: &str) {
        s.as_mut().push_str(text);
    }
    fn shout<B: BorrowMut<String>>(b: &mut B) {
        b.borrow_mut().push('!');
    }
    fn len<B: Borrow<String>>(b: &B) -> usize {
        b.borrow().len()
    }

    let _serial = serial();
    let pool = strings_pool();
    let mut pooled = pool.get();
    let mut owned = pool.get_owned();
    fill(&mut pooled, "p");
    fill(&mut owned, "ow");
    shout(&mut pooled);
    shout(&mut owned);
    assert_eq!((len(&pooled), len(&owned)), (2, 3));
    let as_ref: &String = owned.as_ref();
    assert_eq!(as_ref, "ow!");
    // Display forwards the formatter's flags.
    assert_eq!(format!("{pooled:>4}|{owned:.2}"), "  p!|ow");
    assert!(format!("{pooled:?}").contains("\"p!\""));
    assert!(format!("{owned:?}").contains("\"ow!\""));
}

// ---------------------------------------------------------------------------------------
// 8. Cache.

#[test]
fn cache_over_an_arc_sees_updates_made_on_another_thread() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Arc::new(Container::from_value(&pool, vec![0]));
    let mut cache = Cache::new(Arc::clone(&c));
    assert_eq!(*cache.load(), [0]);

    let (published, seen_published) = mpsc::channel::<u8>();
    let (checked, seen_checked) = mpsc::channel::<()>();
    let writer = thread::spawn({
        let c = Arc::clone(&c);
        move || {
            for n in 1..=3 {
                let mut next = c.get_new();
                next.push(n);
                c.update(next);
                published.send(n).expect("reader gone");
                seen_checked.recv().expect("reader gone");
            }
        }
    });
    for n in seen_published.iter() {
        assert_eq!(*cache.load(), [n]);
        assert_eq!(*cache.load(), [n]); // unchanged: the cached version
        checked.send(()).expect("writer gone");
    }
    writer.join().expect("writer");
    assert_eq!(*cache.load(), [3]);
}

#[test]
fn cache_over_a_reference_holds_its_version_until_the_next_load() {
    let _serial = serial();
    let pool = bytes_pool();
    let c = Container::from_value(&pool, vec![1]);
    let mut cache = Cache::new(&c);
    assert_eq!(*cache.load(), [1]);
    c.update(pool.adopt(vec![2]));
    assert_eq!(
        poolswap::reclaim(),
        0,
        "the cached version was recycled under the cache"
    );
    assert_eq!(idle(&pool), 0);
    assert_eq!(*cache.load(), [2]);
    assert_eq!(
        poolswap::reclaim(),
        1,
        "the reload did not let go of the old version"
    );
    assert_eq!(idle(&pool), 1);
}

#[test]
fn reclaim_returns_unprotected_versions_and_keeps_held_ones() {
    let _serial = serial();
    let (pool, resets) = counting_pool();
    let c = Container::from_value(&pool, vec![1]);
    let held = c.acquire();
    c.update(pool.adopt(vec![2]));
    assert_eq!(
        poolswap::reclaim(),
        0,
        "reclaim took a version a guard holds"
    );
    assert_eq!(idle(&pool), 0, "reclaim recycled a version a guard holds");
    assert_eq!(*held, [1]);
    drop(held);
    // A guard's drop is a store: version 1 waits for the next reclamation.
    assert_eq!(idle(&pool), 0, "a guard's drop recycled version 1");
    assert_eq!(poolswap::reclaim(), 1);
    assert_eq!(idle(&pool), 1, "the unprotected version 1 is not back");
    assert_eq!(poolswap::reclaim(), 0, "version 1 reclaimed twice");
    assert_eq!(
        resets.load(Ordering::Relaxed),
        0,
        "reset before it was taken"
    );
}
