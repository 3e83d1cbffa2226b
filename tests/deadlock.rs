//! A `get` at the live bound that could never end panics, at the caller's line, with a
//! message that names `try_get` and `get_timeout` (`Pool::get`, "Deadlocks").
//!
//! The pool tells it only when the calling thread is the process's only thread, which a
//! libtest test never is (the harness keeps its main thread): so this is a plain `fn main`
//! (`harness = false`) that runs each case in a child process of its own, on the child's
//! main thread. The parent gives each child a deadline and kills it past that, so that a
//! `get` that waits for ever (the behaviour before the check) fails the test instead of
//! hanging it.
//!
//! Linux only (the pool reads the thread count from `/proc`), and not under Miri (no
//! processes).

use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use poolswap::{Container, OptionContainer, Pool};

#[path = "support/panic_site.rs"]
mod panic_site;

use panic_site::{panic_site, Site};

/// The environment variable that makes the process a child that runs one case.
const CASE: &str = "POOLSWAP_DEADLOCK_CASE";

/// How long a child may take: a case takes milliseconds; one that waits for ever is killed.
const DEADLINE: Duration = Duration::from_secs(60);

/// A pool of byte vectors with a live bound of `max_live`.
fn bounded(max_live: usize) -> Pool<Vec<u8>> {
    Pool::builder(Vec::new, Vec::clear)
        .max_live(max_live)
        .build()
}

/// Asserts that `site` is line `line` of this file and that its message names the getters
/// that do not wait.
#[track_caller]
fn assert_told(site: &Site, line: u32) {
    assert_eq!(
        (site.file.as_str(), site.line),
        (file!(), line),
        "the panic points elsewhere: {site:?}"
    );
    for name in ["max_live", "try_get", "get_timeout"] {
        assert!(site.message.contains(name), "no `{name}`: {site:?}");
    }
}

/// Every object the bound allows is a `Pooled` of this thread.
fn pooleds_held() {
    let pool = bounded(2);
    let (a, b) = (pool.get(), pool.get());
    let site = panic_site(|| pool.get());
    assert_told(&site, line!() - 1);
    let site = panic_site(|| pool.get_owned());
    assert_told(&site, line!() - 1);
    // What `get` refuses, the getters that do not wait say at once.
    assert!(pool.try_get().is_none());
    assert!(pool.get_timeout(Duration::from_millis(1)).is_none());
    drop((a, b));
    assert!(
        pool.try_get().is_some(),
        "the pool is usable after the panic"
    );
}

/// The writer holds a guard on the version it replaced, and the container the current one.
fn guard_on_the_old_version() {
    let pool = bounded(2);
    let c = Container::new(&pool, pool.get());
    let old = c.acquire();
    c.update(c.get_new());
    let site = panic_site(|| c.get_new());
    assert_told(&site, line!() - 1);
    drop(old);
    // The guard is gone: the next `get_new` reclaims the old version and hands it out.
    c.update(c.get_new());
    assert_eq!(pool.stats().live, 2);
}

/// As above, through an `OptionContainer`, with a counted guard (`swap`'s).
fn counted_guard_on_the_old_version() {
    let pool = bounded(2);
    let c = OptionContainer::new(&pool, pool.get());
    let old = c.swap(pool.get());
    let site = panic_site(|| c.get_new());
    assert_told(&site, line!() - 1);
    drop(old);
    c.update(c.get_new());
}

/// `rcu` holds a guard on the current version while it gets the next: with a bound of one,
/// the next can never be had.
fn rcu_at_a_bound_of_one() {
    let pool = bounded(1);
    let c = Container::new(&pool, pool.get());
    let site = panic_site(|| c.rcu(|_, next| next.push(1)));
    assert_told(&site, line!() - 1);
    drop(c); // its version goes back to the pool
    let o = OptionContainer::new(&pool, pool.get());
    let site = panic_site(|| o.rcu(|_, next| next.push(1)));
    assert_told(&site, line!() - 1);
}

/// A getter alone at the bound whose retired version no guard holds is not told anything:
/// its reclamation brings the version back.
fn a_free_retired_version_is_handed_out() {
    let pool = bounded(2);
    let c = Container::new(&pool, pool.get());
    c.update(c.get_new());
    let old = c.acquire();
    c.update(c.get_new()); // reclaims nothing: `old` holds the version it replaced
    drop(old);
    c.update(c.get_new());
    assert_eq!(pool.stats().live, 2);
}

/// The cases, each run in a child process of its own.
const CASES: &[(&str, fn())] = &[
    ("pooleds_held", pooleds_held),
    ("guard_on_the_old_version", guard_on_the_old_version),
    (
        "counted_guard_on_the_old_version",
        counted_guard_on_the_old_version,
    ),
    ("rcu_at_a_bound_of_one", rcu_at_a_bound_of_one),
    (
        "a_free_retired_version_is_handed_out",
        a_free_retired_version_is_handed_out,
    ),
];

/// Runs case `name` in a child process; `Err` with why if it failed or ran past the
/// deadline (then killed).
fn run_child(name: &str) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let child = Command::new(exe)
        .env(CASE, name)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let id = child.id();
    let (done, finished) = mpsc::channel();
    let waiter = thread::spawn(move || {
        let output = child.wait_with_output();
        let _ = done.send(());
        output
    });
    if finished.recv_timeout(DEADLINE).is_err() {
        // The child waits for ever: kill it by its id (`wait_with_output` holds `child`).
        let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
        let _ = waiter.join();
        return Err(format!("still running after {DEADLINE:?}: killed"));
    }
    let output = waiter
        .join()
        .map_err(|_| "the waiter panicked".to_owned())?
        .map_err(|e| e.to_string())?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

fn main() -> ExitCode {
    if cfg!(miri) || !cfg!(target_os = "linux") {
        println!("deadlock: skipped (Linux only, not under Miri)");
        return ExitCode::SUCCESS;
    }
    if let Ok(name) = std::env::var(CASE) {
        let Some((_, case)) = CASES.iter().find(|(n, _)| *n == name) else {
            eprintln!("no case {name}");
            return ExitCode::FAILURE;
        };
        case();
        return ExitCode::SUCCESS;
    }
    // `cargo test -- <filter>`: the cases whose name holds it (flags are ignored).
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut failed = 0;
    for (name, _) in CASES {
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        match run_child(name) {
            Ok(()) => println!("test {name} ... ok"),
            Err(why) => {
                println!("test {name} ... FAILED\n{why}");
                failed += 1;
            }
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
