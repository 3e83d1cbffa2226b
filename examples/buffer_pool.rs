//! A string-joining buffer pool: the classic first use of Go's `sync.Pool`, in Rust.
//!
//! The Go original keeps `*bytes.Buffer`s in a `sync.Pool`; `JoinString(strs...)` takes a
//! buffer, writes the strings into it with a separator between them, copies the result out
//! with `buf.String()`, resets the buffer and puts it back. [`BufPool`] here does the same
//! with a `Pool<String>`: [`BufPool::join`] returns an owned `String` (one exact-size copy, as
//! `buf.String()` makes), and [`BufPool::join_with`] lends the joined text to a closure so it
//! can be used in place, with no copy at all.
//!
//! The pool's reset clears a buffer and keeps its capacity, but drops buffers that grew
//! beyond 64 KiB instead of keeping them: one huge join must not pin a huge buffer in the
//! pool forever. Go's `fmt` does the same with its printer buffers (golang/go#23199).
//!
//! The example joins the first 20 words of each of 1000 lines (built from a fixed word list
//! with a fixed seed, so every run sees the same input) and compares, per join:
//!
//! * `fresh String::new()`: a new `String` grown word by word, as Go's `&bytes.Buffer{}`;
//! * `fresh <[&str]>::join`: the standard library's join, which sizes its one allocation
//!   exactly: the honest baseline when the caller wants an owned `String`;
//! * `pooled, owned result`: [`BufPool::join`];
//! * `pooled, used in place`: [`BufPool::join_with`].
//!
//! It prints nanoseconds, allocations and bytes allocated per join (from a counting global
//! allocator), then the pool's statistics, including one oversized join whose buffer the
//! reset drops.
//!
//! Run it with
//!
//! ```text
//! cargo run --release --example buffer_pool [-- --iters N]
//! ```

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
#[path = "support/iters.rs"]
mod iters;

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use counting_alloc::Snapshot;
use poolswap::Pool;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// Buffers whose capacity grew beyond this are dropped by the reset, not reused.
const MAX_BUFFER: usize = 64 * 1024;

/// Joins per variant when `--iters` is not given (a second or two in all, in release).
const DEFAULT_ITERS: usize = 1_000_000;

/// Input lines, and how many leading words of each are joined.
const LINES: usize = 1000;
const WORDS_PER_JOIN: usize = 20;

/// The Go original's `BufPool`: a pool of buffers plus the separator to join with.
struct BufPool {
    pool: Pool<String>,
    separator: String,
}

impl BufPool {
    /// A pool of empty buffers; each is cleared when it is handed out again, and dropped
    /// instead if it grew beyond [`MAX_BUFFER`] bytes (golang/go#23199).
    fn new(separator: &str) -> BufPool {
        BufPool {
            pool: Pool::new(String::new, |buf: &mut String| {
                buf.clear();
                buf.capacity() <= MAX_BUFFER
            }),
            separator: separator.to_owned(),
        }
    }

    /// The Go original's `JoinString`: joins `strs` in a pooled buffer and returns a copy.
    fn join(&self, strs: &[&str]) -> String {
        self.join_with(strs, str::to_owned)
    }

    /// Joins `strs` in a pooled buffer and hands the result to `use_it`, without copying.
    /// The buffer goes back to the pool when this returns.
    fn join_with<R>(&self, strs: &[&str], use_it: impl FnOnce(&str) -> R) -> R {
        let mut buf = self.pool.get();
        if let Some((first, rest)) = strs.split_first() {
            buf.push_str(first);
            for s in rest {
                buf.push_str(&self.separator);
                buf.push_str(s);
            }
        }
        use_it(&buf)
    }
}

/// What a Go programmer writes without a pool: a new buffer per call.
fn join_fresh(strs: &[&str], separator: &str) -> String {
    let mut buf = String::new();
    if let Some((first, rest)) = strs.split_first() {
        buf.push_str(first);
        for s in rest {
            buf.push_str(separator);
            buf.push_str(s);
        }
    }
    buf
}

/// The words lines are made of.
const WORDS: &str = "the quick brown fox jumps over lazy dog request handler buffer allocation \
    garbage collector latency throughput connection timeout session cookie header response \
    status payload encoding compression database transaction replica shard cache eviction \
    goroutine scheduler processor victim pool object reuse memory internationalization \
    configuration observability a an of to in";

/// `LINES` lines of 20 to 40 words, the same on every run (xorshift64 with a fixed seed).
fn make_lines() -> Vec<Vec<&'static str>> {
    let words: Vec<&str> = WORDS.split_whitespace().collect();
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..LINES)
        .map(|_| {
            let len = 20 + (next() % 21) as usize;
            (0..len)
                .map(|_| words[(next() % words.len() as u64) as usize])
                .collect()
        })
        .collect()
}

/// Runs `op` on every input once untimed (warm-up), then `iters` times under the clock and
/// the allocation counter, and prints the cost per call.
fn measure(name: &str, iters: usize, inputs: &[&[&str]], mut op: impl FnMut(&[&str]) -> usize) {
    let mut total = 0usize;
    for input in inputs {
        total = total.wrapping_add(op(input));
    }
    let before = Snapshot::now();
    let start = Instant::now();
    for i in 0..iters {
        total = total.wrapping_add(op(black_box(inputs[i % inputs.len()])));
    }
    let elapsed = start.elapsed();
    let alloc = Snapshot::since(before);
    black_box(total);
    let n = iters as f64;
    println!(
        "{name:<24} {:>8.1} ns/op {:>7.2} allocs/op {:>8.1} B/op",
        elapsed.as_nanos() as f64 / n,
        alloc.allocs as f64 / n,
        alloc.bytes as f64 / n,
    );
}

fn main() -> ExitCode {
    let iters = match iters::iters("buffer_pool", DEFAULT_ITERS) {
        Ok(iters) => iters,
        Err(code) => return code,
    };

    let lines = make_lines();
    let inputs: Vec<&[&str]> = lines.iter().map(|l| &l[..WORDS_PER_JOIN]).collect();
    let bp = BufPool::new(" ");

    // Every variant must produce the same text.
    for input in &inputs {
        let expected = input.join(" ");
        let in_place = bp.join_with(input, |s| s == expected);
        if join_fresh(input, " ") != expected || bp.join(input) != expected || !in_place {
            eprintln!("buffer_pool: the variants disagree on {input:?}");
            return ExitCode::FAILURE;
        }
    }
    let avg = inputs.iter().map(|i| i.join(" ").len()).sum::<usize>() / inputs.len();
    println!(
        "joining {WORDS_PER_JOIN} words of {LINES} lines ({avg} B on average), {iters} joins each"
    );

    measure("fresh String::new()", iters, &inputs, |s| {
        join_fresh(s, " ").len()
    });
    measure("fresh <[&str]>::join", iters, &inputs, |s| {
        s.join(" ").len()
    });
    measure("pooled, owned result", iters, &inputs, |s| bp.join(s).len());
    measure("pooled, used in place", iters, &inputs, |s| {
        bp.join_with(s, str::len)
    });

    // One oversized join: its buffer goes back to the pool, and the reset drops it the next
    // time the pool hands a buffer out, instead of keeping 100+ KiB for 150-byte joins.
    let huge: Vec<&str> = lines.iter().flatten().copied().collect();
    let huge_len = bp.join_with(&huge, str::len);
    bp.join_with(inputs[0], str::len);
    let st = bp.pool.stats();
    println!("after one {huge_len}-byte join, pool stats: {st:?}");
    ExitCode::SUCCESS
}
