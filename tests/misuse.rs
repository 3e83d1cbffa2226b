//! Misuse answered at the caller's line: each public function that panics on misuse points
//! the panic at the line that called it (`#[track_caller]` down to the check), not into the
//! library. A panic hook records where each panic points (`support/panic_site.rs`); every
//! test takes [`serial`] first, since the hook is the process's.
//!
//! The deadlock a `get` at the live bound tells is in `tests/deadlock.rs`: it is told only
//! on a process's only thread, which a test of this harness never is.

#[path = "support/panic_site.rs"]
mod panic_site;
#[path = "support/serial.rs"]
mod serial;

use panic_site::{panic_site, Site};
use poolswap::recycle::FreeLists;
use poolswap::{Container, OptionContainer, Pool};
use serial::serial;

/// The substring of the panic message of a container given another pool's object.
const FOREIGN: &str = "a container was given an object from another pool";

fn bytes_pool() -> Pool<Vec<u8>> {
    Pool::new(Vec::new, Vec::clear)
}

/// Asserts that `site` is line `line` of this file and that its message holds `message`.
#[track_caller]
fn assert_at(site: &Site, line: u32, message: &str) {
    assert_eq!(
        (site.file.as_str(), site.line),
        (file!(), line),
        "the panic points elsewhere: {site:?}"
    );
    assert!(site.message.contains(message), "{site:?}");
}

#[test]
fn container_new_with_another_pools_object_panics_at_the_callers_line() {
    let _serial = serial();
    let (pool, other) = (bytes_pool(), bytes_pool());
    let site = panic_site(|| Container::new(&pool, other.get()));
    assert_at(&site, line!() - 1, FOREIGN);
    let site = panic_site(|| Container::new(&pool, other.get_owned()));
    assert_at(&site, line!() - 1, FOREIGN);
}

#[test]
fn container_publishing_another_pools_object_panics_at_the_callers_line() {
    let _serial = serial();
    let (pool, other) = (bytes_pool(), bytes_pool());
    let c = Container::from_value(&pool, vec![1]);
    let site = panic_site(|| c.update(other.get()));
    assert_at(&site, line!() - 1, FOREIGN);
    let site = panic_site(|| c.swap(other.get_owned()));
    assert_at(&site, line!() - 1, FOREIGN);
    let seen = c.acquire();
    let site = panic_site(|| c.compare_and_swap(&seen, other.get()));
    assert_at(&site, line!() - 1, FOREIGN);
    drop(seen);
    assert_eq!(*c.acquire(), [1], "a refused object changed nothing");
}

#[test]
fn option_container_new_with_another_pools_object_panics_at_the_callers_line() {
    let _serial = serial();
    let (pool, other) = (bytes_pool(), bytes_pool());
    let site = panic_site(|| OptionContainer::new(&pool, other.get()));
    assert_at(&site, line!() - 1, FOREIGN);
}

#[test]
fn option_container_publishing_another_pools_object_panics_at_the_callers_line() {
    let _serial = serial();
    let (pool, other) = (bytes_pool(), bytes_pool());
    let c = OptionContainer::empty(&pool);
    let site = panic_site(|| c.update(other.get()));
    assert_at(&site, line!() - 1, FOREIGN);
    let site = panic_site(|| c.swap(other.get_owned()));
    assert_at(&site, line!() - 1, FOREIGN);
    let site = panic_site(|| c.compare_and_swap(None, other.get()));
    assert_at(&site, line!() - 1, FOREIGN);
    // Not empty: the expected guard is current, so only the pool check refuses.
    c.update(pool.adopt(vec![2]));
    let seen = c.acquire();
    let site = panic_site(|| c.compare_and_swap(seen.as_ref(), other.get()));
    assert_at(&site, line!() - 1, FOREIGN);
}

#[test]
fn a_zero_live_bound_panics_at_the_callers_line() {
    let _serial = serial();
    let site = panic_site(|| Pool::builder(Vec::<u8>::new, Vec::clear).max_live(0));
    assert_at(&site, line!() - 1, "max_live(0)");
}

#[test]
fn free_lists_settings_out_of_range_panic_at_the_callers_line() {
    let _serial = serial();
    #[allow(clippy::reversed_empty_ranges)] // the misuse under test
    let site = panic_site(|| FreeLists::new().renew_after(Some(5..=1)));
    assert_at(&site, line!() - 1, "empty range");
    let site = panic_site(|| FreeLists::new().release_idle_after(Some(0)));
    assert_at(&site, line!() - 1, "0 cycles");
}

/// Below the bound, or with one object idle, nothing is told: the getters hand it out.
#[test]
fn a_get_at_the_bound_that_finds_an_object_does_not_panic() {
    let _serial = serial();
    let pool = Pool::builder(Vec::<u8>::new, Vec::clear)
        .max_live(2)
        .build();
    let c = Container::new(&pool, pool.get());
    let old = c.acquire();
    c.update(c.get_new());
    drop(old);
    // At the bound: the version `old` read is retired and no guard holds it any more, so
    // the getter's reclamation brings it back.
    let next = c.get_new();
    c.update(next);
    assert_eq!(pool.stats().live, 2);
}

/// A writer whose guard went to another thread is not told it deadlocked, though its own
/// hazard slot still names the version: the other thread drops the guard, and the writer's
/// `get_new` gets the version back (guards are `Send`, so what a thread acquired says
/// nothing sure of what it still holds). Either order of the drop and the wait must work.
#[test]
fn a_writer_whose_guard_went_to_another_thread_gets_the_version_back() {
    let _serial = serial();
    let pool = Pool::builder(Vec::<u8>::new, Vec::clear)
        .max_live(2)
        .build();
    let c = Container::new(&pool, pool.get());
    let (send, guards) = std::sync::mpsc::channel();
    let (go, went) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            let guard = guards.recv().expect("a guard");
            went.recv().expect("the signal");
            drop(guard);
        });
        send.send(c.acquire()).expect("the reader is there");
        c.update(c.get_new()); // at the bound: the old version and the current one
        go.send(()).expect("the reader is there");
        let next = c.get_new(); // waits, unless the guard is already gone
        c.update(next);
    });
    assert_eq!(pool.stats().live, 2);
}
