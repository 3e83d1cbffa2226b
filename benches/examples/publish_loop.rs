//! The cost of a publish: an [`OpLog`] over a 100,000-entry `HashMap<String,
//! Vec<String>>`, batches of `k` operations (default 1), on one thread, with no reader.
//! Prints the time per batch's appends + publish (p50, p99); under callgrind, restricted
//! to the two calls, the instruction count per publish is the difference between two
//! runs' totals divided by the difference in publishes (building the map cancels out):
//!
//! ```text
//! cargo build --release -p poolswap-benches --example publish_loop
//! POOLSWAP_BARRIER=fence target/release/examples/publish_loop 20000 [k] [hold]
//! POOLSWAP_BARRIER=fence valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     --toggle-collect='publish_loop::append' --toggle-collect='publish_loop::publish' \
//!     target/release/examples/publish_loop 0 [k]    # then 2000 [k]
//! ```
//!
//! With `hold` = 1, a guard on the current version is held through the measured publishes
//! (a reader that stalls): the op log keeps everything for it, up to its default bound of
//! 65,536 operations, while the idle spare is caught up past its lag. With `hold` = 2, the
//! guard is dropped halfway: past 65,536 operations its version comes back out of the op
//! log's reach (`publish_loop 80000 2 2`).
//!
//! Options after the positional arguments: `--versions N` (default 3) and `--reserve` (the
//! initial map reserves room for `2 × N` entries, so that no version's table doubles
//! during the run: without it, each version's hashbrown table doubles once in a long run,
//! on one publish each), e.g.
//! `publish_loop 60000 10 0 --reserve` or `publish_loop 20000 10 0 --versions 4 --reader`.
//! `--reader` adds a thread that looks up random keys for the whole run, as
//! `benches/oplog.rs`'s reader does (`publish_loop 20000 1 0 --reader`); `--readers N`
//! adds `N` of them (more than the cores: `publish_loop 20000 10 0 --readers 3`).
//! `--from-empty` builds the writer from an empty map and inserts the entries through the
//! op log (batches of 1,000) before the warm-up, as a service that starts empty does: the
//! versions the constructor copies are then empty, and so is the copy time the publish's
//! wait for readers is bounded by (`publish_loop 20000 10 0 --readers 3 --from-empty`).
//! `--catch-up` calls [`OpLog::catch_up`] after each publish, outside the timed part: a
//! writer with idle time between publishes (`publish_loop 20000 10 0 --reader --catch-up`).
//!
//! Besides p50 and p99, it prints what the slowest 1% of publishes applied (operations
//! replayed on the version they wrote, from [`OpLogStats::applied`]) against the median
//! publish: a catch-up of the spare shows there as hundreds of operations.
//!
//! [`OpLogStats::applied`]: poolswap::oplog::OpLogStats::applied
//!
//! A batch is `benches/oplog.rs`'s: with `k / 4` = *p*, *k − 2p* overwrites of stable keys
//! (the lower half of the key space) and *p* pairs of a remove of the oldest churning key
//! and an insert of a new one, so the size stays put; `k` = 1 is one overwrite. The
//! operations are made before the loop, so the count holds what the op log does with them
//! (each publish reclaims the version the last one retired and writes it again: two
//! applications; the idle third version is caught up in chunks past its lag, a third),
//! not their allocation.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Instant;

use poolswap::oplog::{MapOp, OpLog};

type Map = HashMap<String, Vec<String>>;
type Op = MapOp<String, Vec<String>>;

/// Entries in the map.
const N: usize = 100_000;
/// Publishes before the measured ones, so that every version exists and lags as it will.
const WARM_UP: usize = 100;

/// Out of line, for callgrind's `--toggle-collect`.
#[inline(never)]
fn append(w: &mut OpLog<Map, Op>, op: Op) {
    w.append(op);
}

/// Out of line, for callgrind's `--toggle-collect`.
#[inline(never)]
fn publish(w: &mut OpLog<Map, Op>) -> u64 {
    w.publish()
}

/// Three strings of about 30 bytes, as in `benches/oplog.rs`.
fn value(i: usize, version: usize) -> Vec<String> {
    (0..3)
        .map(|j| format!("backend-{j}-{version:08}-{i:010}"))
        .collect()
}

/// What the command line asks for.
struct Args {
    rounds: usize,
    k: usize,
    hold: usize,
    versions: usize,
    reserve: bool,
    readers: usize,
    from_empty: bool,
    catch_up: bool,
}

impl Args {
    /// Positional `publishes k hold`, then the options (module docs). Panics with what was
    /// wrong: this is a measuring tool, run by hand.
    fn parse() -> Self {
        let number = |what: &str, arg: &str| -> usize {
            arg.parse()
                .unwrap_or_else(|_| panic!("{what}: a number, not {arg:?}"))
        };
        let mut args = Args {
            rounds: 20_000,
            k: 1,
            hold: 0,
            versions: 3,
            reserve: false,
            readers: 0,
            from_empty: false,
            catch_up: false,
        };
        let mut positional = 0;
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            let mut value = |what: &str| {
                let v = it.next().unwrap_or_else(|| panic!("{what} takes a number"));
                number(what, &v)
            };
            match arg.as_str() {
                "--versions" => args.versions = value("--versions"),
                "--reserve" => args.reserve = true,
                "--reader" => args.readers = args.readers.max(1),
                "--readers" => args.readers = value("--readers"),
                "--from-empty" => args.from_empty = true,
                "--catch-up" => args.catch_up = true,
                _ if arg.starts_with("--") => panic!("unknown option {arg:?}"),
                _ => {
                    let slot = match positional {
                        0 => &mut args.rounds,
                        1 => &mut args.k,
                        2 => &mut args.hold,
                        _ => panic!("at most three numbers (publishes, k, hold), then options"),
                    };
                    *slot = number(["publishes", "k", "hold"][positional], &arg);
                    positional += 1;
                }
            }
        }
        args.k = args.k.max(1);
        args
    }
}

fn main() {
    let Args {
        rounds,
        k,
        hold,
        versions,
        reserve,
        readers,
        from_empty,
        catch_up,
    } = Args::parse();
    let mut init = Map::with_capacity(if reserve { 2 * N } else { N });
    let entries = (0..N).map(|i| (format!("key-{i:07}"), value(i, 0)));
    if !from_empty {
        init.extend(entries.clone());
    }
    let mut w = OpLog::builder(init).versions(versions).build();
    if from_empty {
        let entries: Vec<_> = entries.collect();
        for chunk in entries.chunks(1_000) {
            w.extend(
                chunk
                    .iter()
                    .map(|(k, v)| MapOp::Insert(k.clone(), v.clone())),
            );
            w.publish();
        }
    }
    // The batches, in order; popped from the end.
    let (mut lo, mut hi) = (N / 2, N);
    let mut batches: Vec<Vec<Op>> = (0..WARM_UP + rounds)
        .map(|r| {
            let pairs = k / 4;
            let mut ops: Vec<Op> = (0..k - 2 * pairs)
                .map(|j| {
                    let i = (r * k + j) * 7919 % (N / 2);
                    MapOp::Insert(format!("key-{i:07}"), value(i, r + 1))
                })
                .collect();
            for _ in 0..pairs {
                ops.push(MapOp::Remove(format!("key-{lo:07}")));
                ops.push(MapOp::Insert(format!("key-{hi:07}"), value(hi, r + 1)));
                lo += 1;
                hi += 1;
            }
            ops
        })
        .collect();
    batches.reverse();
    for _ in 0..WARM_UP {
        for op in batches.pop().expect("made above") {
            append(&mut w, op);
        }
        publish(&mut w);
    }
    // With a third argument of 1, a guard on the current version is held through the
    // measured publishes (a reader that stalls): the op log keeps what it lacks. With 2, it is
    // dropped halfway through.
    let mut held = (hold > 0).then(|| w.read_handle().acquire());
    let stop = AtomicBool::new(false);
    let container = w.read_handle();
    // Only for the readers: without one, the run allocates what it did before `--reader`.
    let keys: Vec<String> = if readers > 0 {
        (0..N).map(|i| format!("key-{i:07}")).collect()
    } else {
        Vec::new()
    };
    let before = w.stats();
    // Per publish: its time in ns and the operations it applied.
    let mut runs: Vec<(u128, u64)> = Vec::with_capacity(rounds);
    thread::scope(|s| {
        for reader in 0..readers as u64 {
            let (stop, container, keys) = (&stop, &container, &keys);
            s.spawn(move || {
                let mut x = 0x9e37_79b9_7f4a_7c15_u64 + reader;
                let mut found = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    // xorshift64: a random key without a shared generator.
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let key = &keys[(x % N as u64) as usize];
                    found += u64::from(container.acquire().contains_key(key));
                }
                std::hint::black_box(found);
            });
        }
        for round in 0..rounds {
            if hold == 2 && round == rounds / 2 {
                held = None;
            }
            let batch = batches.pop().expect("made above");
            let applied = w.stats().applied;
            let start = Instant::now();
            for op in batch {
                append(&mut w, op);
            }
            publish(&mut w);
            runs.push((start.elapsed().as_nanos(), w.stats().applied - applied));
            // Untimed: the idle time a writer has between publishes.
            if catch_up {
                w.catch_up();
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    runs.sort_unstable();
    let ns: Vec<u128> = runs.iter().map(|r| r.0).collect();
    if let (Some(p50), Some(p99)) = (ns.get(rounds / 2), ns.get(rounds * 99 / 100)) {
        let max = ns.last().copied().unwrap_or(0);
        println!(
            "{rounds} publishes of {k} ops into {N} entries: p50 {p50} ns, p99 {p99} ns, max {max} ns"
        );
        let slowest = &runs[rounds * 99 / 100..];
        let mut applied: Vec<u64> = slowest.iter().map(|r| r.1).collect();
        applied.sort_unstable();
        let many = |runs: &[(u128, u64)]| runs.iter().filter(|r| r.1 > 3 * k as u64).count();
        println!(
            "slowest 1% ({} publishes): operations applied, median {}, max {}, {} of them more \
             than 3k; of all publishes, {} applied more than 3k; the median publish applied {}",
            slowest.len(),
            applied[applied.len() / 2],
            applied.last().copied().unwrap_or(0),
            many(slowest),
            many(&runs),
            runs[rounds / 2].1
        );
    }
    drop(held);
    let stats = w.stats();
    println!(
        "versions {versions}, reserved: {reserve}, readers: {readers}, from empty: \
         {from_empty}, catch_up between publishes: {catch_up}"
    );
    let pool = w.pool().stats();
    println!(
        "applied per op {:.2} (measured publishes {:.2}), full copies {} (measured publishes \
         {}), set aside {}, stale takes {}, operations truncated {}, versions made {}, live {}",
        stats.applied as f64 / stats.appended.max(1) as f64,
        (stats.applied - before.applied) as f64 / (stats.appended - before.appended).max(1) as f64,
        stats.full_syncs,
        stats.full_syncs - before.full_syncs,
        poolswap::internals::oplog_counters(&stats).set_aside,
        poolswap::internals::oplog_counters(&stats).stale_takes,
        stats.truncated,
        pool.created,
        pool.live
    );
}
