//! Pooling gzip compressors: the benchmark that made Go's `sync.Pool` famous, in Rust.
//!
//! Go's `BenchmarkWriteGzipWithPool` keeps `*gzip.Writer`s in a `sync.Pool` and compresses a
//! message with one taken from the pool; `BenchmarkWriteGzipWithoutPool` calls
//! `gzip.NewWriter` per message. A compressor is worth pooling because its state is large:
//! hash chains and a window of several hundred KiB, which a new writer allocates (and
//! zeroes) and a reset one only clears.
//!
//! # Which flate2 type stands in for `gzip.Writer`
//!
//! `flate2::write::GzEncoder` has no reset: a new stream needs a new encoder, so it is the
//! honest "without pool" side. Go's `(*gzip.Writer).Reset(w)` keeps the compressor's memory,
//! clears its state and starts a new gzip member. The closest flate2 equivalent is
//! `flate2::write::DeflateEncoder::reset`, which resets its `flate2::Compress` in place
//! (miniz_oxide clears its tables without reallocating) and swaps the output writer. A gzip
//! member is a 10-byte header, a raw deflate stream and a CRC-32 + length trailer, so
//! [`GzipWriter`] wraps a `DeflateEncoder` and a `flate2::Crc` and writes the header and
//! trailer itself, byte for byte as `GzEncoder::new(_, Compression::default())` does (no
//! name, no mtime, OS 255). `ZlibEncoder::reset` would be as cheap but writes the zlib
//! format, not gzip; a bare `Compress` would need the buffering done by hand.
//!
//! The pooled writer owns its output buffer too, and the pool's reset clears both. The fresh
//! side writes into a caller-owned buffer reused across messages, so the output buffer costs
//! neither side anything in steady state and the comparison is compressor against
//! compressor (Go's benchmark writes to `ioutil.Discard` for the same reason).
//!
//! Before timing, the example checks that both sides produce byte-identical gzip output for
//! every message and that a few of them decompress (with `flate2::read::GzDecoder`) to the
//! original. Then it prints nanoseconds, allocations and bytes allocated per message, and the
//! pool's statistics.
//!
//! Run it with
//!
//! ```text
//! cargo run --release --example compressor_pool [-- --iters N]
//! ```

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
#[path = "support/iters.rs"]
mod iters;

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::{self, Read, Write};
use std::process::ExitCode;
use std::time::Instant;

use counting_alloc::Snapshot;
use flate2::read::GzDecoder;
use flate2::write::{DeflateEncoder, GzEncoder};
use flate2::{Compression, Crc};
use poolswap::Pool;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// Messages compressed per variant when `--iters` is not given.
const DEFAULT_ITERS: usize = 10_000;

/// Distinct messages, cycled through.
const MESSAGES: usize = 256;

/// Writers whose output buffer grew beyond this are dropped by the pool's reset.
const MAX_OUTPUT: usize = 64 * 1024;

/// The header `GzEncoder::new(w, Compression::default())` writes: magic, CM = deflate, no
/// flags, mtime 0, XFL 0 (the default level is neither fastest nor best), OS 255 (unknown).
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];

/// A gzip writer that can be reset like Go's `gzip.Writer`, keeping its compressor's memory.
struct GzipWriter {
    /// Raw deflate into the output buffer, which holds the header and, once
    /// [`compress`](GzipWriter::compress) is done, the whole member.
    deflate: DeflateEncoder<Vec<u8>>,
    crc: Crc,
    /// Whether the writer holds a finished member and must be reset before the next.
    finished: bool,
}

impl GzipWriter {
    fn new(level: Compression) -> GzipWriter {
        GzipWriter {
            deflate: DeflateEncoder::new(GZIP_HEADER.to_vec(), level),
            crc: Crc::new(),
            finished: false,
        }
    }

    /// Go's `Reset`: forgets the last member, keeps the memory. Returns `false` (drop me)
    /// if the output buffer grew too large to be worth keeping, or the reset failed.
    fn reset(&mut self) -> bool {
        let out = std::mem::take(self.deflate.get_mut());
        // Finishes any half-written stream into the placeholder, resets the compressor in
        // place and puts the buffer back.
        if self.deflate.reset(out).is_err() {
            return false;
        }
        let out = self.deflate.get_mut();
        out.clear();
        out.extend_from_slice(&GZIP_HEADER);
        self.crc.reset();
        self.finished = false;
        out.capacity() <= MAX_OUTPUT
    }

    /// Compresses `msg` as one gzip member and returns it; valid until the next reset.
    fn compress(&mut self, msg: &[u8]) -> io::Result<&[u8]> {
        if self.finished {
            return Err(io::Error::other("GzipWriter used twice without a reset"));
        }
        self.finished = true;
        self.crc.update(msg);
        self.deflate.write_all(msg)?;
        self.deflate.try_finish()?;
        let (sum, len) = (self.crc.sum(), self.crc.amount());
        let out = self.deflate.get_mut();
        out.extend_from_slice(&sum.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        Ok(self.deflate.get_ref())
    }
}

/// Without a pool: a new `GzEncoder` per message, writing into `out`.
fn compress_fresh(msg: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
    out.clear();
    let mut enc = GzEncoder::new(out, Compression::default());
    enc.write_all(msg)?;
    enc.finish()?;
    Ok(())
}

/// With a pool: a reset writer from `pool`, back in the pool when this returns.
fn compress_pooled(pool: &Pool<GzipWriter>, msg: &[u8]) -> io::Result<usize> {
    let mut gz = pool.get();
    Ok(gz.compress(msg)?.len())
}

/// `MESSAGES` JSON-like log records of 1 to 4 KiB, the same on every run (xorshift64).
fn make_messages() -> Vec<String> {
    const LEVELS: &[&str] = &["debug", "info", "warn", "error"];
    const PATHS: &[&str] = &[
        "/api/v1/users",
        "/api/v1/orders",
        "/healthz",
        "/api/v2/search",
    ];
    const AGENTS: &[&str] = &[
        "curl/8.5.0",
        "Mozilla/5.0 (X11; Linux x86_64)",
        "Go-http-client/1.1",
    ];
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    (0..MESSAGES)
        .map(|i| {
            let target = 1024 + next(3 * 1024);
            let mut m = format!("{{\"batch\":{i},\"events\":[");
            let mut first = true;
            while m.len() < target - 200 {
                if !first {
                    m.push(',');
                }
                first = false;
                // Writing to a String cannot fail.
                let _ = write!(
                    m,
                    "{{\"ts\":{},\"level\":\"{}\",\"path\":\"{}\",\"status\":{},\
                     \"latency_us\":{},\"user_id\":{},\"agent\":\"{}\"}}",
                    1_700_000_000_000u64 + (next(1_000_000) as u64),
                    LEVELS[next(LEVELS.len())],
                    PATHS[next(PATHS.len())],
                    [200, 200, 200, 204, 404, 500][next(6)],
                    next(250_000),
                    next(100_000),
                    AGENTS[next(AGENTS.len())],
                );
            }
            m.push_str("]}");
            m
        })
        .collect()
}

/// Checks that both sides agree byte for byte, and that some outputs decompress to their
/// message.
fn verify(pool: &Pool<GzipWriter>, messages: &[String]) -> Result<(), String> {
    let mut fresh = Vec::new();
    let mut pooled = Vec::new();
    for (i, msg) in messages.iter().enumerate() {
        compress_fresh(msg.as_bytes(), &mut fresh).map_err(|e| format!("fresh #{i}: {e}"))?;
        {
            let mut gz = pool.get();
            let out = gz
                .compress(msg.as_bytes())
                .map_err(|e| format!("pooled #{i}: {e}"))?;
            pooled.clear();
            pooled.extend_from_slice(out);
        }
        if fresh != pooled {
            return Err(format!("message #{i}: pooled and fresh gzip output differ"));
        }
        if i % 37 == 0 {
            let mut text = String::new();
            GzDecoder::new(&pooled[..])
                .read_to_string(&mut text)
                .map_err(|e| format!("decompressing #{i}: {e}"))?;
            if text != *msg {
                return Err(format!("message #{i} does not survive the round trip"));
            }
        }
    }
    Ok(())
}

/// Runs `op` on every message once untimed (warm-up), then `iters` times under the clock
/// and the allocation counter, and prints the cost per message.
fn measure(
    name: &str,
    iters: usize,
    messages: &[String],
    mut op: impl FnMut(&[u8]) -> io::Result<usize>,
) -> io::Result<()> {
    let mut total = 0usize;
    for msg in messages {
        total = total.wrapping_add(op(msg.as_bytes())?);
    }
    let before = Snapshot::now();
    let start = Instant::now();
    for i in 0..iters {
        total = total.wrapping_add(op(black_box(messages[i % messages.len()].as_bytes()))?);
    }
    let elapsed = start.elapsed();
    let alloc = Snapshot::since(before);
    black_box(total);
    let n = iters as f64;
    println!(
        "{name:<32} {:>9.0} ns/op {:>6.2} allocs/op {:>9.0} B/op",
        elapsed.as_nanos() as f64 / n,
        alloc.allocs as f64 / n,
        alloc.bytes as f64 / n,
    );
    Ok(())
}

fn run(iters: usize) -> Result<(), String> {
    let messages = make_messages();
    let pool = Pool::new(
        || GzipWriter::new(Compression::default()),
        GzipWriter::reset,
    );

    verify(&pool, &messages)?;
    let in_bytes: usize = messages.iter().map(String::len).sum();
    let mut out = Vec::new();
    let mut out_bytes = 0;
    for msg in &messages {
        compress_fresh(msg.as_bytes(), &mut out).map_err(|e| e.to_string())?;
        out_bytes += out.len();
    }
    println!(
        "{MESSAGES} JSON-like messages, {} B on average, gzip to {} B; outputs identical, \
         round trips ok; {iters} messages each",
        in_bytes / MESSAGES,
        out_bytes / MESSAGES,
    );

    let mut out = Vec::new();
    measure("fresh GzEncoder per message", iters, &messages, |msg| {
        compress_fresh(msg, &mut out)?;
        Ok(out.len())
    })
    .map_err(|e| format!("fresh: {e}"))?;
    measure("pooled GzipWriter, reset", iters, &messages, |msg| {
        compress_pooled(&pool, msg)
    })
    .map_err(|e| format!("pooled: {e}"))?;

    let st = pool.stats();
    println!("pool stats: {st:?}");
    Ok(())
}

fn main() -> ExitCode {
    let iters = match iters::iters("compressor_pool", DEFAULT_ITERS) {
        Ok(iters) => iters,
        Err(code) => return code,
    };
    match run(iters) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("compressor_pool: {e}");
            ExitCode::FAILURE
        }
    }
}
