//! How long versions outlive their last guard in a process that makes no further call:
//! the latency of the `poolswap-orphans` thread (see `poolswap::reclaim`).
//!
//! ```text
//! cargo run --release --example quiet_drop -- --trials 50 --hold-ms 100
//! ```
//!
//! Each trial publishes a chain of 8 versions (each holds a guard on the one before it, as
//! a history does), keeps a guard on the newest, drops the container and the pool, waits
//! `--hold-ms` (the guard held on, as a long request would), then drops the guard and
//! spins until the versions are dropped, with no call of its own. It prints, over the
//! trials, the time from the guard's drop to the first version's drop (the one the guard
//! held) and to the last (the whole chain), as min / p50 / p99 / max in milliseconds.
//! Exits non-zero if a trial waits past 10 s: a hang, not a figure.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use poolswap::{Container, Guard, Pool};

/// The versions per chain.
const CHAIN: usize = 8;

/// A version holding a guard on the one before it; its drop is timed.
struct Link {
    older: Option<Guard<Link>>,
    drops: Arc<Drops>,
}

/// Drops so far, and the instants of the first and the last of a trial.
#[derive(Default)]
struct Drops {
    count: AtomicUsize,
    at: Mutex<Vec<Instant>>,
}

impl Drop for Link {
    fn drop(&mut self) {
        let now = Instant::now();
        self.drops.at.lock().unwrap().push(now);
        self.drops.count.fetch_add(1, SeqCst);
    }
}

/// One trial: (first drop, last drop) after the guard's drop.
fn trial(hold: Duration) -> Result<(Duration, Duration), String> {
    let drops = Arc::new(Drops::default());
    let pool = {
        let drops = Arc::clone(&drops);
        Pool::builder(
            move || Link {
                older: None,
                drops: Arc::clone(&drops),
            },
            |l: &mut Link| {
                l.older = None;
                true
            },
        )
        .build()
    };
    let c = Container::new(&pool, pool.get());
    for _ in 1..CHAIN {
        let mut next = c.get_new();
        next.older = Some(c.acquire());
        c.update(next);
    }
    let guard = c.acquire();
    let made = pool.stats().created as usize;
    drop(c);
    drop(pool); // the idle objects go now; the chain waits for `guard`
    std::thread::sleep(hold);
    let before = drops.count.load(SeqCst);
    if made - before != CHAIN {
        return Err(format!("{} versions held, not {CHAIN}", made - before));
    }
    drops.at.lock().unwrap().clear();
    let start = Instant::now();
    drop(guard);
    while drops.count.load(SeqCst) < made {
        if start.elapsed() > Duration::from_secs(10) {
            return Err(format!(
                "{} of {CHAIN} versions dropped after 10 s",
                drops.count.load(SeqCst) - before
            ));
        }
        std::hint::spin_loop();
        std::thread::yield_now();
    }
    let at = drops.at.lock().unwrap();
    let first = *at.iter().min().expect("dropped");
    let last = *at.iter().max().expect("dropped");
    Ok((first - start, last - start))
}

/// min / p50 / p99 / max of `xs`, in milliseconds.
fn summary(mut xs: Vec<Duration>) -> String {
    xs.sort_unstable();
    let at = |q: f64| xs[((xs.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
    format!(
        "{:.2} / {:.2} / {:.2} / {:.2} ms",
        at(0.0),
        at(0.5),
        at(0.99),
        at(1.0)
    )
}

fn main() {
    let mut trials = 50;
    let mut hold_ms = 100;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{arg} takes a number"))
        };
        match arg.as_str() {
            "--trials" => trials = value() as usize,
            "--hold-ms" => hold_ms = value(),
            other => panic!("unknown argument {other}: --trials N, --hold-ms M"),
        }
    }
    let hold = Duration::from_millis(hold_ms);
    let (mut firsts, mut lasts) = (Vec::new(), Vec::new());
    for _ in 0..trials.max(1) {
        match trial(hold) {
            Ok((first, last)) => {
                firsts.push(first);
                lasts.push(last);
            }
            Err(e) => {
                eprintln!("quiet_drop: {e}");
                std::process::exit(1);
            }
        }
    }
    println!(
        "{} trials, guard held {hold_ms} ms past the pool's last handle; from its drop (min / p50 / p99 / max):",
        firsts.len()
    );
    println!("  the version it held dropped:    {}", summary(firsts));
    println!("  the chain of {CHAIN} dropped:        {}", summary(lasts));
}
