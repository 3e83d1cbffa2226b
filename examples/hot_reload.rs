//! A lookup service in miniature: readers hammer a table while a reloader re-reads and
//! re-parses its file.
//!
//! The example loads a text file (by default the SCOWL-based `wamerican` word list shipped
//! in `examples/data/`) into a pooled version of owned data: a
//! `HashMap<String, Vec<String>>` where, on each line, the first whitespace-separated token
//! is the key and the others are its values, and `#` starts a comment. So a services(5)-style
//! file (`http 80/tcp www # WorldWideWeb`) and a list of one word per line both load; a key
//! on several lines gets the values of all of them, in file order. Then, for `--secs`
//! seconds:
//!
//! * `--readers` reader threads look up random keys of the current version through
//!   [`Container::acquire`], never waiting for the writer, and check every answer against
//!   the text that version was parsed from;
//! * one reloader thread re-reads the file and re-parses it into a new version every
//!   `--reload-ms` milliseconds with [`Container::get_new`] + [`Container::update`]. Changes
//!   to the file show up in the next version.
//!
//! At the end it prints reads/s, reloads/s, p50 and p99 read latency, the bytes allocated per
//! reload (measured with a counting global allocator, warm-up reported separately from steady
//! state), how many versions the pool's factory built, and the number of keys in the last
//! version.
//!
//! What it shows: **steady-state reloads allocate 0 bytes**, though every version owns all
//! its strings. Each version is a [`Recycled`] table with its own [`FreeLists`]: the pool's reset
//! (`Recycled::clear`) moves the version's keys and value lists into the free lists, and the next
//! parse takes them back out, cleared, with their capacity; the map keeps its table, and the
//! version's text buffer keeps its capacity, so the file is read straight into it. Before the
//! clock starts, the first version and as many spare ones as can be out at once (one per
//! reader and the one being built) are each loaded twice, which allocates all their buffers
//! and their free lists; the report shows that apart, as "before the clock".
//!
//! # Reading the file without allocating
//!
//! Each reload opens the file by its path again (`File::open`) and reads it with
//! `read_to_string` into the version's kept `text` buffer. Opening by path is what makes a
//! replaced file show up: editors and configuration tools write a new file and rename it over
//! the old one, and a `File` kept open (then `seek`ed to 0 and read again) would go on reading
//! the old, unlinked file forever; it would see only changes written in place.
//!
//! `File::open` must turn the path into a NUL-terminated C string: std copies a path shorter
//! than 384 bytes into a stack buffer for that and allocates a `CString` only for a longer
//! one. That is an implementation detail of std, not a promise, which is why `--check`
//! measures it rather than trusting it: with a 406-byte path, every reload here allocated
//! 416 bytes and `--check` failed. A `CString` built once and opened with `libc::open` would
//! avoid it for any path, at the price of `unsafe` (`File::from_raw_fd`) in an example.
//! `read_to_string` asks the open file for its size and reserves only what the buffer lacks,
//! so at steady state it reads into capacity the buffer already has.
//!
//! Either way, a file rewritten in place while a reload reads it can be read half-written:
//! replace files atomically (write a temporary file, then rename it over the old one), the
//! case that only opening by path sees.
//!
//! # Buffer sizes
//!
//! Buffers wander: a `String` that held `cat` in one version may be handed `catastrophically`
//! by the next parse, and would grow, allocating, long after warm-up (without the floors
//! below, one 8-second run on the bundled list allocated in every one of its 202
//! steady-state reloads, 3,400 times per reload on average). So every string taken from the free lists is given at
//! least the capacity of the longest token seen so far (at most [`MAX_TOKEN_FLOOR`] bytes),
//! and every value list the length of the longest list (at most [`MAX_VALUES_FLOOR`]): after
//! its first parse of a file, a version never grows a buffer again while the file keeps its
//! longest token. The free lists' renewal (its default, which frees a buffer after a random
//! 5,000 to 6,000 reuses to undo ratcheted capacities) is turned off: the floors already fix
//! the sizes, and at one renewal per buffer per budget it would cost about 20 allocations per
//! reload in the long run for 104,334 buffers per version (104,334 / 5,500 renewals). Spare
//! buffers that a parse did not need (the file shrank) are freed at once, and a buffer
//! holding more than [`MAX_SPARE_BYTES`] is never kept.
//!
//! # Publishing only what changed (`--oplog`)
//!
//! A reload above builds a whole version, though a file usually changes a few lines at a
//! time. With `--oplog` the reloader still re-reads and re-parses the whole file, but into
//! two scratch tables of its own (the previous parse and the new one, alternating, without
//! allocating, as above), compares the two, and appends one
//! [`MapOp`](poolswap::oplog::MapOp) per changed entry (an insert, which overwrites, or a
//! removal) to a [`OpLog`](poolswap::oplog::OpLog), which publishes them as one batch:
//! readers see all of a reload's changes or none, and an unchanged file publishes nothing.
//! The comparison goes line by line while the file keeps its lines in place, looking up only
//! the keys on changed lines; otherwise it looks every key up in both parses. After the
//! publish, before its pause, the reloader calls
//! [`OpLog::catch_up`](poolswap::oplog::OpLog::catch_up): the idle versions replay
//! the batch then, and the next reload's publish applies only its own.
//!
//! To have something to publish, `--oplog` edits the file (`--edit-lines`, 64 keys per edit
//! by default with `--oplog`): the reloader reads a private copy in the temporary directory
//! and replaces it before each reload, outside the measurement. Half the edited keys have
//! their line commented out, the other half get a new first value, and the previous edit is
//! undone (`hot_reload/edit.rs`). Each reload then publishes one batch, numbered as the
//! edit, and readers check every answer against the edit that their version's number
//! ([`Versioned::seq`](poolswap::oplog::Versioned::seq)) names, plus two keys of that edit, which
//! must agree: one showing the edit and the other not would be a *torn batch*. So in
//! `--oplog` mode the readers know the file as the example edits it: edit it yourself during
//! a run and they report wrong answers (the default mode checks each version against its
//! own text). `--edit-lines` works in the default mode too, to compare the two modes on the
//! same edits.
//!
//! The report splits a steady-state reload into read and parse (0 allocations), diff (the
//! operations' own keys and values: an operation owns its data) and publish: its time as
//! p50/p99/max (the catch-up after it untimed), and what it allocated per operation (the
//! catch-up's included), which `--check` bounds at 1 per
//! operation applied to a version (see `MAX_PUBLISH_ALLOCS_PER_APPLY` in
//! `hot_reload/oplog.rs` for why it is not 0).
//!
//! Run it with
//!
//! ```text
//! cargo run --release --example hot_reload [-- [PATH] [--secs N] [--readers N] [--reload-ms N] [--oplog] [--edit-lines N] [--check]]
//! ```
//!
//! `--check` turns it into a smoke test: the exit status is non-zero if a steady-state reload
//! allocated anything (with `--oplog`: if a read and parse allocated anything, or the
//! publishes more than 1 allocation per operation applied, or the writer copied a whole version
//! after the warm-up), a reload failed, or a reader ever saw a wrong answer or a torn batch.

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
#[path = "hot_reload/edit.rs"]
mod edit;
#[path = "hot_reload/oplog.rs"]
mod oplog;

use std::collections::HashMap;
use std::fs::File;
use std::hint::black_box;
use std::io::{self, Read as _};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use counting_alloc::Snapshot;
use poolswap::recycle::FreeLists;
use poolswap::{Container, Pool, Recycled};

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// The data set loaded when no path is given.
const DEFAULT_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/data/american-english"
);

/// Reloads counted as warm-up, a margin for one-time costs of the first updates on the
/// reloader's thread. The versions are built and filled before the clock starts (see
/// [`prewarm`]), so none is first built, and no buffer first allocated, in the run.
const WARMUP_RELOADS: u64 = 3;
/// With `--check`, the run goes on past `--secs` until this many reloads after the warm-up
/// (at most [`CHECK_GRACE`] longer): on a slow or busy machine a reload of a big file can
/// take a good part of a second, and a check of nothing proves nothing.
const CHECK_STEADY_RELOADS: u64 = 3;
/// How much longer than `--secs` a `--check` run may go on for its steady reloads.
const CHECK_GRACE: Duration = Duration::from_secs(60);
/// Steady reloads so far, for the main thread's `--check` wait (the reloader's report
/// comes only at the end).
static STEADY_RELOADS: AtomicU64 = AtomicU64::new(0);

/// Latency samples each reader keeps (8 bytes each), allocated before the clock starts.
const SAMPLE_CAPACITY: usize = 1 << 17;

/// A reader times one read in this many at first; the stride doubles whenever its sample
/// buffer fills up, so the samples stay spread evenly over the whole run. A power of two.
const INITIAL_SAMPLE_STRIDE: u64 = 64;

/// The most capacity, in bytes, a string taken from the free lists is given up front (see
/// [Buffer sizes](self#buffer-sizes)); a longer token grows its buffer as it needs.
const MAX_TOKEN_FLOOR: usize = 256;

/// The most capacity, in values, a value list taken from the free lists is given up front.
const MAX_VALUES_FLOOR: usize = 16;

/// A spare buffer that would keep more than this many bytes is freed instead
/// ([`FreeLists::max_retained_bytes`]): one giant token does not stay in a version for good.
const MAX_SPARE_BYTES: usize = 64 << 10;

/// `--edit-lines` with `--oplog` when not given: keys changed per edit.
const DEFAULT_OPLOG_EDIT_LINES: usize = 64;

const USAGE: &str = "\
usage: hot_reload [PATH] [--secs N] [--readers N] [--reload-ms N] [--oplog] [--edit-lines N]
                  [--check]

  PATH            text file: on each line the first word is a key, the others its values,
                  `#` starts a comment (default: examples/data/american-english)
  --secs N        how long to run, in seconds (default 3; with --check, on until 3 reloads
                  after the warm-up, at most 60 s more)
  --readers N     reader threads (default 2)
  --reload-ms N   pause between the starts of two reloads, in ms (default 5; 0 = back to
                  back)
  --oplog         publish only the entries that changed since the last reload, through an
                  op log (poolswap::oplog), instead of a whole new version
  --edit-lines N  before each reload, edit N keys of a private copy of the file, which the
                  reloader reads instead (0 or at least 2; default 0, 64 with --oplog)
  --check         exit non-zero unless steady-state reloads allocated 0 bytes (with
                  --oplog: reads and parses 0 bytes, publishes at most 1 allocation per
                  operation applied), no reload failed and every read returned the right
                  value";

/// One version of the data, all of it owned.
#[derive(Default, Debug)]
struct Table {
    /// Key → values.
    map: HashMap<String, Vec<String>>,
    /// The file's text this version was parsed from, read straight into this buffer.
    text: String,
    /// The byte range in `text` of each distinct key where it first appears, in file order:
    /// readers pick random keys here and check the answers against the text.
    keys: Vec<(usize, usize)>,
}
poolswap::impl_recycle!(Table { map, text, keys });

/// The pooled value: a table plus the free lists its buffers go back to.
type Version = Recycled<Table>;

/// Capacity floors for the buffers a parse takes from the free lists (see
/// [Buffer sizes](self#buffer-sizes)): high-water marks, kept by the reloader across
/// reloads.
#[derive(Clone, Copy, Debug, Default)]
struct Floors {
    /// The longest token seen, capped at [`MAX_TOKEN_FLOOR`].
    token: usize,
    /// The longest value list built, capped at [`MAX_VALUES_FLOOR`].
    values: usize,
}

/// Command-line settings.
#[derive(Debug)]
struct Args {
    path: String,
    secs: u64,
    readers: usize,
    reload_ms: u64,
    oplog: bool,
    /// `--edit-lines`, if given.
    edit_lines: Option<usize>,
    check: bool,
}

impl Args {
    /// Parses `[PATH] [--secs N] [--readers N] [--reload-ms N] [--check]`; `Ok(None)` means
    /// `--help` was asked for.
    fn parse(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
        let mut args = Args {
            path: DEFAULT_PATH.to_owned(),
            secs: 3,
            readers: 2,
            reload_ms: 5,
            oplog: false,
            edit_lines: None,
            check: false,
        };
        let mut path_seen = false;
        while let Some(arg) = it.next() {
            // Accept both `--flag N` and `--flag=N`.
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut value = |name: &str| -> Result<u64, String> {
                let v = inline
                    .clone()
                    .or_else(|| it.next())
                    .ok_or_else(|| format!("{name} needs a value"))?;
                v.parse()
                    .map_err(|_| format!("{name}: `{v}` is not a non-negative integer"))
            };
            match flag.as_str() {
                "-h" | "--help" => return Ok(None),
                "--secs" => args.secs = value("--secs")?,
                "--readers" => {
                    args.readers = usize::try_from(value("--readers")?)
                        .map_err(|_| "--readers: too large".to_owned())?;
                }
                "--reload-ms" => args.reload_ms = value("--reload-ms")?,
                "--oplog" if inline.is_none() => args.oplog = true,
                "--edit-lines" => {
                    let n = value("--edit-lines")?;
                    args.edit_lines =
                        Some(usize::try_from(n).map_err(|_| "--edit-lines: too large".to_owned())?);
                }
                "--check" if inline.is_none() => args.check = true,
                f if f.starts_with('-') && f != "-" => {
                    return Err(format!("unknown option `{arg}`"))
                }
                _ if path_seen => return Err(format!("unexpected argument `{arg}`")),
                _ => {
                    args.path = arg;
                    path_seen = true;
                }
            }
        }
        if args.secs == 0 {
            return Err("--secs must be at least 1".to_owned());
        }
        if args.readers == 0 {
            return Err("--readers must be at least 1".to_owned());
        }
        if args.edit_lines == Some(1) {
            // One key per edit could edit the same key the same way twice in a row: a reload
            // that changes nothing, which `--oplog`'s readers rely on never happening.
            return Err("--edit-lines must be 0 or at least 2".to_owned());
        }
        Ok(Some(args))
    }

    /// Keys edited before each reload (see [`edit`]).
    fn edit_lines(&self) -> usize {
        let default = if self.oplog {
            DEFAULT_OPLOG_EDIT_LINES
        } else {
            0
        };
        self.edit_lines.unwrap_or(default)
    }
}

/// A tiny xorshift64* generator: random keys without a dependency and without allocating.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        // Any non-zero state works; mix the seed so neighbouring seeds diverge at once.
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (`n > 0`); the modulo bias is irrelevant here.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Latency samples of one reader, in a buffer allocated up front.
struct Sampler {
    samples: Vec<u64>,
    stride: u64,
}

impl Sampler {
    fn new() -> Self {
        Sampler {
            samples: Vec::with_capacity(SAMPLE_CAPACITY),
            stride: INITIAL_SAMPLE_STRIDE,
        }
    }

    /// Whether read number `n` should be timed (`stride` is a power of two).
    fn wants(&self, n: u64) -> bool {
        n & (self.stride - 1) == 0
    }

    /// Records one latency without ever growing the buffer: when it is full, keep every
    /// other sample and halve the sampling rate from now on.
    fn record(&mut self, ns: u64) {
        if self.samples.len() == self.samples.capacity() {
            let kept = self.samples.len() / 2;
            for i in 0..kept {
                self.samples[i] = self.samples[2 * i + 1];
            }
            self.samples.truncate(kept);
            self.stride *= 2;
        }
        self.samples.push(ns);
    }
}

/// What one reader did.
struct ReaderReport {
    reads: u64,
    wrong: u64,
    /// Reads that saw part of a batch (`--oplog` only).
    torn: u64,
    samples: Vec<u64>,
}

/// What the reloader did.
#[derive(Default)]
struct ReloadReport {
    reloads: u64,
    /// Reloads that failed (the file could not be read); the version stayed as it was.
    failed: u64,
    /// The last failure, if any.
    last_error: Option<io::Error>,
    build_time: Duration,
    warmup_bytes: u64,
    warmup_allocs: u64,
    steady_reloads: u64,
    steady_bytes: u64,
    steady_allocs: u64,
    /// Reloads after warm-up that allocated anything at all.
    steady_allocating: u64,
    /// Factory calls made before steady state began.
    versions_at_warmup_end: usize,
    /// What filling the spare versions before the clock allocated (see [`prewarm`]).
    prewarm: Snapshot,
    /// How many spare versions were filled.
    prewarmed: usize,
    /// Everything the whole process allocated from the end of warm-up until the reloader
    /// stopped (readers included).
    steady_process: Snapshot,
}

/// A new, empty version: its free lists never renew buffers and keep none over
/// [`MAX_SPARE_BYTES`] (see [Buffer sizes](self#buffer-sizes)).
fn new_version() -> Version {
    let lists = FreeLists::new()
        .renew_after(None)
        .max_retained_bytes(MAX_SPARE_BYTES);
    Recycled::with_free_lists(Table::default(), lists)
}

/// The versions' pool: the factory counts how often it runs; the reset clears a returned
/// version into its free lists.
fn pool(built: Arc<AtomicUsize>) -> Pool<Version> {
    Pool::new(
        move || {
            built.fetch_add(1, Relaxed);
            new_version()
        },
        |v: &mut Version| {
            v.clear();
            true
        },
    )
}

/// Copies `token` into a string taken from `lists`, with at least the capacity of the
/// longest token seen so far (`floor`, which it raises).
fn owned(lists: &mut FreeLists, token: &str, floor: &mut usize) -> String {
    *floor = (*floor).max(token.len().min(MAX_TOKEN_FLOOR));
    let mut s: String = lists.take();
    // `s` is empty: this makes its capacity at least the floor, or does nothing.
    s.reserve_exact((*floor).max(token.len()));
    s.push_str(token);
    s
}

/// Appends `tokens` to `list`, taking the list's buffer from `lists` for its first value
/// (a key without values keeps an empty `Vec`, which holds no memory).
fn push_values<'t>(
    list: &mut Vec<String>,
    tokens: impl Iterator<Item = &'t str>,
    lists: &mut FreeLists,
    floors: &mut Floors,
) {
    for token in tokens {
        if list.capacity() == 0 {
            *list = lists.take();
            list.reserve_exact(floors.values);
        }
        list.push(owned(lists, token, &mut floors.token));
    }
    floors.values = floors.values.max(list.len().min(MAX_VALUES_FLOOR));
}

/// The part of `line` before its comment, if any.
fn uncommented(line: &str) -> &str {
    line.split('#').next().unwrap_or("")
}

/// Parses `table.text` into `table.map` and `table.keys` (both empty), taking every buffer
/// from `lists`: on each line, the first whitespace-separated token is a key and the others
/// its values; `#` starts a comment; blank lines and comment lines are skipped; a key on
/// several lines gets all their values, in file order.
///
/// Allocates only while buffers are missing or smaller than the floors: at steady state
/// (the same version's second parse of an unchanged file), never.
fn parse(table: &mut Table, lists: &mut FreeLists, floors: &mut Floors) {
    let Table { map, text, keys } = table;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let start = line_start;
        line_start += line.len();
        let content = uncommented(line);
        let mut tokens = content.split_whitespace();
        let Some(key) = tokens.next() else {
            continue; // blank, or a comment
        };
        if let Some(list) = map.get_mut(key) {
            push_values(list, tokens, lists, floors);
            continue;
        }
        let key_start = start + (content.len() - content.trim_start().len());
        keys.push((key_start, key_start + key.len()));
        let mut list = Vec::new();
        push_values(&mut list, tokens, lists, floors);
        map.insert(owned(lists, key, &mut floors.token), list);
    }
}

/// Reads the file at `path` into `version` (cleared, as the pool hands it out) and parses
/// it. Then frees the spare buffers the parse did not need: the file shrank.
///
/// Allocates nothing at steady state (see [Reading the file](self#reading-the-file-without-allocating)).
fn load(path: &str, version: &mut Version, floors: &mut Floors) -> io::Result<()> {
    let (table, lists) = Recycled::parts_mut(version);
    File::open(path)?.read_to_string(&mut table.text)?;
    parse(table, lists, floors);
    if lists.stats().spare > 0 {
        lists.trim();
    }
    Ok(())
}

/// One reload: a recycled version from the pool, the file read and parsed into it,
/// published. The version it replaces returns to the pool after its last reader. On an
/// error nothing is published, and the version goes back to the pool.
fn reload(container: &Container<Version>, path: &str, floors: &mut Floors) -> io::Result<()> {
    let mut next = container.get_new();
    load(path, &mut next, floors)?;
    container.update(next);
    Ok(())
}

/// Looks up key number `i` of `table` (in file order). Returns where the key ends in the
/// text and its values, or `None` if there is no such key or it is missing from the map.
fn lookup(table: &Table, i: usize) -> Option<(usize, &[String])> {
    let &(start, end) = table.keys.get(i)?;
    let values = table.map.get(&table.text[start..end])?;
    Some((end, values))
}

/// Whether `values`, the answer for the key that ends at byte `key_end` of `text`, start
/// with the values written after the key on that line (the key's first line).
fn answer_matches(text: &str, key_end: usize, values: &[String]) -> bool {
    let line = text[key_end..].split('\n').next().unwrap_or("");
    let mut tokens = uncommented(line).split_whitespace();
    values.iter().zip(&mut tokens).all(|(v, t)| v == t) && tokens.next().is_none()
}

/// Makes the calling thread wait on a `parking_lot` lock once, before the clock starts.
///
/// `parking_lot` (the pool's depot locks) allocates its global parking table and each
/// thread's parking data the first time a thread has to wait for a lock. That is a
/// one-time cost of the lock library, not of a reload, but a rarely contended lock can
/// first be contended late in a run, where it would show up as a steady-state allocation.
fn warm_parking_lot() {
    let lock = parking_lot::Mutex::new(());
    let ready = parking_lot::Condvar::new();
    let mut guard = lock.lock();
    // A timed wait parks the thread, however short.
    let _ = ready.wait_for(&mut guard, Duration::from_micros(1));
}

/// Fills `n` versions taken from `container`'s pool at once, twice each, then gives them
/// back, so that no version is first built, and no buffer first allocated, once the clock
/// runs.
///
/// At most the current version, one per reader and the one being built are out at once:
/// with the current one, `n` = readers + 1 spare versions are enough. They are taken and
/// given back on the reloader's own thread, so they wait in its magazine, where its
/// `get_new` looks first (a version replaced later goes back to the depot of the thread
/// that published it, the reloader's too). Returns what it allocated.
fn prewarm(container: &Container<Version>, path: &str, n: usize, floors: &mut Floors) -> Snapshot {
    let before = Snapshot::now();
    let mut spare = Vec::with_capacity(n);
    for _ in 0..n {
        let mut v = container.get_new();
        // Twice, as the first version: the first clear allocates its free lists.
        // A failure shows up in the first reload; an empty version is fine as a spare.
        let _ = load(path, &mut v, floors);
        v.clear();
        let _ = load(path, &mut v, floors);
        spare.push(v);
    }
    drop(spare);
    Snapshot::since(before)
}

/// One reader: random lookups in the current version until `stop`, timing a sample of them
/// (from `acquire` through the lookup). Every answer is then checked against the text of
/// the version it came from, still held.
fn reader(
    container: &Container<Version>,
    seed: u64,
    start: &Barrier,
    stop: &AtomicBool,
) -> ReaderReport {
    let mut rng = XorShift::new(seed);
    let mut sampler = Sampler::new();
    let (mut reads, mut wrong) = (0u64, 0u64);
    warm_parking_lot();
    // A thread's first acquire claims its hazard block (allocations): before the clock. A
    // reader scheduled late on a busy machine otherwise made it after the warm-up reloads,
    // inside the steady-state measurement (272 B in 3 allocations, with --reload-ms 0).
    drop(container.acquire());
    start.wait();
    // Nothing in this loop allocates: the allocator's counters are process-wide, and the
    // reloader's per-reload measurement must only see what the reload itself does.
    while !stop.load(Relaxed) {
        let timed = sampler.wants(reads);
        let t0 = timed.then(Instant::now);
        let version = container.acquire();
        let table: &Table = &version;
        let answer = lookup(table, rng.below(table.keys.len().max(1)));
        if let Some(t0) = t0 {
            sampler.record(t0.elapsed().as_nanos() as u64);
        }
        let ok = match black_box(answer) {
            Some((key_end, values)) => answer_matches(&table.text, key_end, values),
            None => table.keys.is_empty(), // a version of an empty file has nothing to find
        };
        wrong += u64::from(!ok);
        reads += 1;
    }
    ReaderReport {
        reads,
        wrong,
        torn: 0,
        samples: sampler.samples,
    }
}

/// The reloader: re-read and re-parse the file at `path` every `interval` until `stop`;
/// before each reload, `editor` (with `--edit-lines`) changes the file, outside the
/// measurement.
#[allow(clippy::too_many_arguments)]
fn reloader(
    container: &Container<Version>,
    path: &str,
    mut floors: Floors,
    mut editor: Option<edit::Editor<'_>>,
    interval: Duration,
    versions_built: &AtomicUsize,
    start: &Barrier,
    stop: &AtomicBool,
) -> ReloadReport {
    let mut r = ReloadReport::default();
    let mut steady_start = None;
    warm_parking_lot();
    start.wait();
    let mut next = Instant::now();
    while !stop.load(Relaxed) {
        let written = editor.as_mut().map_or(Ok(()), |e| e.write(r.reloads + 1));
        let before = Snapshot::now();
        let t0 = Instant::now();

        let result = written.and_then(|()| reload(container, path, &mut floors));

        r.build_time += t0.elapsed();
        let d = Snapshot::since(before);
        // Out of the measured part: keeping the error allocates nothing, but dropping an
        // earlier one may free.
        if let Err(e) = result {
            r.failed += 1;
            r.last_error = Some(e);
        }
        r.reloads += 1;
        if r.reloads <= WARMUP_RELOADS {
            r.warmup_bytes += d.bytes;
            r.warmup_allocs += d.allocs;
            if r.reloads == WARMUP_RELOADS {
                r.versions_at_warmup_end = versions_built.load(Relaxed);
                steady_start = Some(Snapshot::now());
            }
        } else {
            r.steady_reloads += 1;
            STEADY_RELOADS.store(r.steady_reloads, Relaxed);
            r.steady_bytes += d.bytes;
            r.steady_allocs += d.allocs;
            r.steady_allocating += u64::from(d.bytes > 0);
        }

        next += interval;
        let now = Instant::now();
        if next > now {
            thread::sleep(next - now);
        } else {
            next = now; // Behind schedule: reload back to back, do not try to catch up.
        }
    }
    if let Some(s) = steady_start {
        r.steady_process = Snapshot::since(s);
    } else {
        r.versions_at_warmup_end = versions_built.load(Relaxed);
    }
    r
}

/// `p`-th percentile (0.0..=1.0) of sorted, non-empty `v`.
fn percentile(v: &[u64], p: f64) -> u64 {
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };

    let versions_built = Arc::new(AtomicUsize::new(0));
    let versions = pool(Arc::clone(&versions_built));
    let mut floors = Floors::default();
    // The first version, loaded twice: the first parse finds the floors (the longest token
    // and list), the second gives every buffer its floor, so this version never grows one
    // again (see "Buffer sizes" in the module docs).
    let before = Snapshot::now();
    let mut first = versions.get();
    let loaded = load(&args.path, &mut first, &mut floors).and_then(|()| {
        first.clear();
        load(&args.path, &mut first, &mut floors)
    });
    if let Err(e) = loaded {
        eprintln!("error: cannot read {}: {e}", args.path);
        if args.path == DEFAULT_PATH {
            // The word list is in the repository, not in the crates.io package.
            eprintln!(
                "the default word list ships with the source repository only (not the \
                 crates.io package); pass any text file, one key per line: \
                 `cargo run --release --example hot_reload -- /usr/share/dict/words`"
            );
        }
        return ExitCode::from(2);
    }
    let (first_keys, first_bytes) = (first.keys.len(), first.text.len());
    if first_keys == 0 {
        eprintln!(
            "error: {}: no keys (every line is blank or a comment)",
            args.path
        );
        return ExitCode::from(2);
    }
    let initial = Snapshot::since(before);

    // With `--oplog` or `--edit-lines`: the file as it is now, which the edits change and
    // `--oplog`'s readers check against; and the editor, whose copy the reloader reads.
    let edit_lines = args.edit_lines();
    let reference = if args.oplog || edit_lines > 0 {
        match edit::Reference::load(&args.path, edit_lines, &mut floors) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", args.path);
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    let editor = match reference.as_ref().filter(|r| r.per_edit() > 0) {
        Some(r) => match edit::Editor::new(r) {
            Ok(editor) => Some(editor),
            Err(e) => {
                eprintln!("error: cannot write the copy of {} to edit: {e}", args.path);
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let path = editor
        .as_ref()
        .map_or_else(|| args.path.clone(), |e| e.path().to_owned());
    if let Some(reference) = reference.as_ref().filter(|_| args.oplog) {
        let prev = std::mem::take(&mut *first);
        drop(first);
        return oplog::run(&args, reference, editor, &path, prev, floors);
    }
    let mut editor = editor;
    if let Some(editor) = editor.as_mut() {
        // The first version is edit 1, loaded twice as before: a version's first parse of an
        // edited file allocates (the value lists that edits give to keys without values), and
        // the spare versions, loaded from the copy by `prewarm`, are edited files too.
        let loaded = editor.write(1).and_then(|()| {
            first.clear();
            load(&path, &mut first, &mut floors)?;
            first.clear();
            load(&path, &mut first, &mut floors)
        });
        if let Err(e) = loaded {
            eprintln!("error: cannot edit a copy of {}: {e}", args.path);
            return ExitCode::from(2);
        }
    }
    let container = Container::new(&versions, first);

    let interval = Duration::from_millis(args.reload_ms);
    let start = Barrier::new(args.readers + 2);
    let stop = AtomicBool::new(false);
    let (readers, reloads, elapsed) = thread::scope(|s| {
        let readers: Vec<_> = (0..args.readers)
            .map(|i| {
                let (container, start, stop) = (&container, &start, &stop);
                s.spawn(move || reader(container, i as u64 + 1, start, stop))
            })
            .collect();
        let reloads = s.spawn(|| {
            // On the reloader's thread, before the clock: see `prewarm`.
            let mut floors = floors;
            let spares = args.readers + 1;
            let filled = prewarm(&container, &path, spares, &mut floors);
            let built = &versions_built;
            let mut r = reloader(
                &container, &path, floors, editor, interval, built, &start, &stop,
            );
            (r.prewarm, r.prewarmed) = (filled, spares);
            r
        });
        start.wait();
        let t0 = Instant::now();
        thread::sleep(Duration::from_secs(args.secs));
        if args.check {
            // Polls, as a program waiting on a slow machine, not a test's synchronisation:
            // the reloader counts; the clock stops when enough steady reloads are in.
            let deadline = Instant::now() + CHECK_GRACE;
            while STEADY_RELOADS.load(Relaxed) < CHECK_STEADY_RELOADS && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(20));
            }
        }
        stop.store(true, Relaxed);
        // Join the reloader first: it may be in the middle of a measured reload, and the
        // allocation counter is process-wide, so this thread must not allocate until it is done.
        let reloads = reloads.join().expect("reloader panicked");
        let readers: Vec<ReaderReport> = readers
            .into_iter()
            .map(|h| h.join().expect("reader panicked"))
            .collect();
        (readers, reloads, t0.elapsed())
    });

    let secs = elapsed.as_secs_f64();
    let reads: u64 = readers.iter().map(|r| r.reads).sum();
    let wrong: u64 = readers.iter().map(|r| r.wrong).sum();
    let mut samples: Vec<u64> = readers.into_iter().flat_map(|r| r.samples).collect();
    samples.sort_unstable();
    let versions = versions_built.load(Relaxed);
    let last_keys = container.acquire().keys.len();
    let r = &reloads;
    let per_reload = |total: u64, n: u64| if n == 0 { 0.0 } else { total as f64 / n as f64 };
    let steady_per_reload = per_reload(r.steady_bytes, r.steady_reloads);

    println!(
        "poolswap hot_reload: {} keys from {} ({} bytes), re-read and re-parsed on every reload",
        first_keys, args.path, first_bytes
    );
    if let Some(r) = reference.as_ref().filter(|r| r.per_edit() > 0) {
        println!(
            "the reloader reads a copy it edits before each reload: {} keys change per edit \
             (half removed, half given a new first value; the previous edit undone)",
            r.per_edit()
        );
    }
    println!(
        "{} reader thread(s), 1 reloader (at most one reload per {} ms), ran {:.2} s\n",
        args.readers, args.reload_ms, secs
    );
    println!(
        "  {:<26} {:>14}  {:>14.0} /s",
        "reads",
        reads,
        reads as f64 / secs
    );
    println!("  {:<26} {:>14}", "wrong answers", wrong);
    println!(
        "  {:<26} {:>14}  {:>14.1} /s",
        "reloads",
        r.reloads,
        r.reloads as f64 / secs
    );
    println!("  {:<26} {:>14}", "failed reloads", r.failed);
    println!(
        "  {:<26} {:>14.3} ms",
        "mean reload (read+parse+swap)",
        per_reload(r.build_time.as_nanos() as u64, r.reloads) / 1e6
    );
    if samples.is_empty() {
        println!("  {:<26} {:>14}", "read latency", "no samples");
    } else {
        println!(
            "  {:<26} {:>14} ns",
            "read latency p50",
            percentile(&samples, 0.50)
        );
        println!(
            "  {:<26} {:>14} ns",
            "read latency p99",
            percentile(&samples, 0.99)
        );
        println!("  {:<26} {:>14}", "latency samples", samples.len());
    }
    println!(
        "  {:<26} {:>14} B         ({} allocs: the first version and {} spare ones, each loaded twice)",
        "alloc, before the clock",
        initial.bytes + r.prewarm.bytes,
        initial.allocs + r.prewarm.allocs,
        r.prewarmed
    );
    let warmup_n = r.reloads.min(WARMUP_RELOADS);
    println!(
        "  {:<26} {:>14.0} B/reload  ({} allocs in {} reloads)",
        "alloc, warm-up reloads",
        per_reload(r.warmup_bytes, warmup_n),
        r.warmup_allocs,
        warmup_n
    );
    println!(
        "  {:<26} {:>14.0} B/reload  ({} allocs in {} reloads, {} allocating)",
        "alloc, steady reloads",
        steady_per_reload,
        r.steady_allocs,
        r.steady_reloads,
        r.steady_allocating
    );
    println!(
        "  {:<26} {:>14} B         ({} allocs, whole process after warm-up)",
        "alloc, steady, all threads", r.steady_process.bytes, r.steady_process.allocs
    );
    println!(
        "  {:<26} {:>14}  ({} before the clock and during warm-up, {} after)",
        "versions built by factory",
        versions,
        r.versions_at_warmup_end,
        versions - r.versions_at_warmup_end
    );
    if let Some(e) = &r.last_error {
        eprintln!("last failed reload: {e}");
    }

    let mut failed = false;
    if args.check {
        if r.steady_reloads < CHECK_STEADY_RELOADS {
            eprintln!(
                "check failed: {} reloads after the {WARMUP_RELOADS} warm-up ones in {secs:.0} s \
                 (the check needs {CHECK_STEADY_RELOADS})",
                r.steady_reloads
            );
            failed = true;
        }
        if r.steady_bytes > 0 {
            eprintln!("check failed: steady-state reloads allocated {steady_per_reload:.0} bytes per reload");
            failed = true;
        }
        if r.failed > 0 {
            eprintln!("check failed: {} reloads failed", r.failed);
            failed = true;
        }
        // Each reader holds at most one version, the container one, the reloader fills one:
        // the pool never needs more, and builds none after `prewarm`, however long readers
        // that are descheduled hold theirs, as long as the reloader's getter returns every
        // version whose last guard is gone before it builds.
        if versions > args.readers + 2 {
            eprintln!(
                "check failed: the pool built {versions} versions, more than readers + 2 = {}",
                args.readers + 2
            );
            failed = true;
        }
        if wrong > 0 {
            eprintln!("check failed: {wrong} reads returned a wrong value");
            failed = true;
        }
        if !failed {
            println!("\ncheck passed: steady-state reloads allocated 0 bytes, all reads correct");
        }
    }
    println!("keys in last version: {last_keys}");
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Args>, String> {
        Args::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_defaults_and_flags() {
        let a = parse(&[]).unwrap().unwrap();
        assert_eq!((a.secs, a.readers, a.reload_ms, a.check), (3, 2, 5, false));
        assert_eq!(a.path, DEFAULT_PATH);
        let a = parse(&[
            "f.txt",
            "--secs",
            "7",
            "--readers=4",
            "--reload-ms",
            "0",
            "--check",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (a.path.as_str(), a.secs, a.readers, a.reload_ms, a.check),
            ("f.txt", 7, 4, 0, true)
        );
        assert!(parse(&["--help"]).unwrap().is_none());
        // The modes: whole versions without edits unless asked; `--oplog` edits by default.
        assert!(!a.oplog && a.edit_lines() == 0);
        let a = parse(&["--oplog"]).unwrap().unwrap();
        assert!(a.oplog && a.edit_lines() == DEFAULT_OPLOG_EDIT_LINES);
        let a = parse(&["--oplog", "--edit-lines=0"]).unwrap().unwrap();
        assert_eq!(a.edit_lines(), 0);
        let a = parse(&["--edit-lines", "8"]).unwrap().unwrap();
        assert!(!a.oplog && a.edit_lines() == 8);
    }

    #[test]
    fn rejects_bad_arguments() {
        for bad in [
            &["--secs"][..],
            &["--secs", "x"],
            &["--secs", "0"],
            &["--readers", "0"],
            &["--reload-ms", "-1"],
            &["--bogus"],
            &["a", "b"],
            &["--check=1"],
            &["--oplog=1"],
            &["--edit-lines", "1"],
            &["--edit-lines"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn sampler_never_grows() {
        let mut s = Sampler::new();
        for i in 0..(3 * SAMPLE_CAPACITY as u64) {
            s.record(i);
        }
        assert_eq!(s.samples.capacity(), SAMPLE_CAPACITY);
        assert!(s.samples.len() <= SAMPLE_CAPACITY);
        assert!(s.stride > INITIAL_SAMPLE_STRIDE);
    }

    #[test]
    fn xorshift_stays_in_range() {
        let mut r = XorShift::new(1);
        assert!((0..10_000).all(|_| r.below(7) < 7));
    }

    /// Parses `text` into a fresh version with `floors`.
    fn parsed(text: &str, floors: &mut Floors) -> Version {
        let mut v = new_version();
        let (table, lists) = Recycled::parts_mut(&mut v);
        table.text.push_str(text);
        super::parse(table, lists, floors);
        v
    }

    /// The keys of `table` in file order, as text.
    fn keys_of(table: &Table) -> Vec<&str> {
        table.keys.iter().map(|&(a, b)| &table.text[a..b]).collect()
    }

    #[test]
    fn parser_handles_comments_multi_token_and_blank_lines() {
        let text = "# services(5) style\n\
                    \n\
                    http\t80/tcp  www   # WorldWideWeb HTTP\n\
                    \x20 ssh 22/tcp\n\
                    #ssh 99/tcp\n\
                    http 80/udp\n\
                    \x20  \t\n\
                    lonely\n\
                    word# no space before the comment\n\
                    crlf a b\r\n\
                    last-line-without-newline z";
        let v = parsed(text, &mut Floors::default());
        let m = &v.map;
        assert_eq!(m["http"], ["80/tcp", "www", "80/udp"]);
        assert_eq!(m["ssh"], ["22/tcp"]);
        assert!(m["lonely"].is_empty() && m["word"].is_empty());
        assert_eq!(m["crlf"], ["a", "b"]);
        assert_eq!(m["last-line-without-newline"], ["z"]);
        assert_eq!(m.len(), 6);
        assert_eq!(
            keys_of(&v),
            [
                "http",
                "ssh",
                "lonely",
                "word",
                "crlf",
                "last-line-without-newline"
            ]
        );
        // Readers' check: every key's answer starts with its first line's values.
        for i in 0..v.keys.len() {
            let (end, values) = lookup(&v, i).unwrap();
            assert!(answer_matches(&v.text, end, values), "key {i}");
        }
        assert!(lookup(&v, v.keys.len()).is_none());
        let (end, _) = lookup(&v, 0).unwrap();
        assert!(!answer_matches(&v.text, end, &["80/tcp".into()]));
        // Nothing to find in a file of comments.
        let empty = parsed("# nothing\n\n   # here\n", &mut Floors::default());
        assert!(empty.map.is_empty() && lookup(&empty, 0).is_none());
    }

    #[test]
    fn a_second_parse_reuses_every_buffer_and_grows_none() {
        let text = "a 1 2 3\nbb 22\nccc\nd 4 5 6 7 8\nlongest-token-here x\n";
        let mut floors = Floors::default();
        let mut v = parsed(text, &mut floors);
        assert_eq!(floors.token, "longest-token-here".len());
        assert_eq!(floors.values, 5);
        for _ in 0..3 {
            v.clear();
            let (table, lists) = Recycled::parts_mut(&mut v);
            table.text.push_str(text);
            let fresh = lists.stats().fresh;
            super::parse(table, lists, &mut floors);
            assert_eq!(lists.stats().fresh, fresh, "a buffer was not reused");
            assert_eq!(lists.stats().spare, 0);
        }
        // Every string and every non-empty list has the floors' capacity, so wherever
        // a later parse hands it, it fits without growing.
        for (k, list) in v.map.iter() {
            assert!(k.capacity() >= floors.token, "{k:?}");
            assert!(list.is_empty() || list.capacity() >= floors.values, "{k:?}");
            assert!(list.iter().all(|s| s.capacity() >= floors.token));
        }
    }

    /// A path in the temporary directory that no other test or run uses.
    fn temp_path(tag: &str) -> std::path::PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        std::env::temp_dir().join(format!(
            "poolswap-hot_reload-{}-{tag}-{nanos}",
            std::process::id()
        ))
    }

    #[test]
    fn a_change_to_the_file_shows_up_in_the_next_version() {
        let path = temp_path("change");
        let p = path.to_str().expect("a UTF-8 temporary path");
        let built = Arc::new(AtomicUsize::new(0));
        let versions = pool(Arc::clone(&built));
        // A first version of nothing, which the first reload replaces.
        let container = Container::new(&versions, versions.get());
        let mut floors = Floors::default();
        let current = |c: &Container<Version>| {
            let v = c.acquire();
            let mut m: Vec<(String, Vec<String>)> =
                v.map.iter().map(|(k, l)| (k.clone(), l.clone())).collect();
            m.sort();
            m
        };
        let entry =
            |k: &str, vs: &[&str]| (k.to_owned(), vs.iter().map(|s| s.to_string()).collect());

        std::fs::write(&path, "alpha 1 2\nbeta 3\n").unwrap();
        reload(&container, p, &mut floors).unwrap();
        let first = container.acquire(); // a reader holding the old version
        assert_eq!(
            current(&container),
            [entry("alpha", &["1", "2"]), entry("beta", &["3"])]
        );

        // Rewritten in place.
        std::fs::write(&path, "alpha 9\ngamma\n").unwrap();
        reload(&container, p, &mut floors).unwrap();
        assert_eq!(
            current(&container),
            [entry("alpha", &["9"]), entry("gamma", &[])]
        );
        assert_eq!(
            first.map["alpha"],
            ["1", "2"],
            "a held version does not change"
        );
        drop(first);

        // Replaced by a rename, as editors and configuration tools do.
        let next = temp_path("change-next");
        std::fs::write(&next, "delta 4 # new\n").unwrap();
        std::fs::rename(&next, &path).unwrap();
        reload(&container, p, &mut floors).unwrap();
        assert_eq!(current(&container), [entry("delta", &["4"])]);

        // A file that cannot be read leaves the current version as it was.
        std::fs::remove_file(&path).unwrap();
        assert!(reload(&container, p, &mut floors).is_err());
        assert_eq!(current(&container), [entry("delta", &["4"])]);
    }
}
