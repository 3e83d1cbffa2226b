//! # Small batches on a big map: `poolswap::oplog` against its peers (issue 18)
//!
//! A `HashMap<String, Vec<String>>` of `n` entries (keys `key-0000123`, each value three
//! strings of about 30 bytes) changes by batches of `k` operations that readers must see
//! all or none of. One writer publishes batches back to back while one reader thread looks
//! up random keys. Per system, `n` and `k` it reports the time of a publish (from applying
//! the batch to the return of the publish) as p50 / p99 / max, the allocations and bytes
//! per publish, the reader's time per acquire + lookup, and the peak of live bytes; a
//! "held guard" row per system (`n` = 100,000, `k` = 1) has the reader hold each guard for
//! 1 ms and counts the publishes that took over 500 µs. A "long hold" row (`n` = 100,000,
//! `k` = 10, 20,000 timed publishes) has the reader take one guard before the row and hold
//! it through half the timed publishes (200,000 operations in all: three times the op log's
//! default bound, so the held version falls out of the op log's reach and comes back after
//! it), then look keys up as usual; it compares p99 with the same system's plain `k` = 10
//! row. The systems whose writer waits for readers (left-right, flashmap) get no such row:
//! their publishes would wait for the whole hold.
//!
//! | system | shared as | a publish |
//! |---|---|---|
//! | floor | a plain `HashMap`, unshared (no reader) | the batch applied in place |
//! | `OpLog<HashMap>` | `poolswap::oplog` over `HashMap`, three versions made at build time | the batch and the missed batches replayed on a reused version (`MapOp`) |
//! | `OpLog<HashMap>, 4 versions` | the same with four versions (only at `n` = 100,000): one for a reader that holds a guard for long, besides the three | as above |
//! | `OpLog<HashMap<Arc<str>, Arc<[String]>>>` | the same over a map whose keys and values are `Arc`s: the versions share each entry's strings (the batch's data is moved into `Arc`s inside the timed publish) | as above; an operation applied to a version clones two `Arc`s |
//! | `OpLog<SharedMap> (shared values, reused)` | `poolswap::oplog::SharedMap<String, Vec<String>>`: the versions share each value's `Arc` (keys are each version's own), and a value an overwrite or removal displaced goes back to the map's `ArcPool` once no version holds it | as above; each value moves into a reused `Arc` (`ArcPool::share`), and an application clones an `Arc` |
//! | `OpLog<HashMap>, catch_up between publishes (untimed)` | `OpLog<HashMap>` whose writer calls `OpLog::catch_up` after each publish, outside the timed part (a writer with idle time between publishes; not back to back like the others) | the batch alone, on a version the catch-up brought up to date |
//! | `OpLog<HashMap> + Reclaimer` | `OpLog<HashMap>` with a `poolswap::Reclaimer` running | as above; reclamation passes run on the reclaimer's thread |
//! | `OpLog<Recycled<HashMap>>` | the same over `Recycled<HashMap>` | as above; new entries from, removed ones to, the version's free lists |
//! | poolswap rcu + `copy_from` | `Container<Recycled<HashMap>>` | `rcu`: copy the whole map into a reused version, apply the batch |
//! | left-right | `left_right` with an `Absorb` for the bench's `Op` | append the batch, `publish` (waits for readers of the copy it writes next) |
//! | flashmap | `flashmap` | a write guard (waits for readers of the other copy), the batch, publish |
//! | arc-swap + imbl | `ArcSwap<imbl::HashMap>` | `rcu`: clone the persistent map (O(1)), apply the batch (path copies) |
//! | arc-swap clone | `ArcSwap<HashMap>` | `rcu`: clone the whole map, apply the batch |
//!
//! The workload: half of a batch overwrites values of stable keys (the lower half of the
//! key space), the rest are remove + insert pairs of churning keys (the oldest churning key
//! goes, a new one comes), so the size stays `n`: `k` = 10 is 6 overwrites, 2 removes and
//! 2 inserts; `k` = 1 one overwrite. Every system gets the same batches (the same seed). A
//! batch's operations are built before the clock starts and handed over by value; systems
//! that apply an operation to more than one copy clone it inside the publish.
//!
//! Allocations come from the counting global allocator (`tests/support/counting_alloc.rs`),
//! process-wide over the timed publishes (the reader allocates nothing). Memory is its live
//! bytes: "after build" once the system holds the initial map, "peak" the highest during a
//! row's timed publishes, both less what was live before the system was built. "full syncs"
//! are the whole-map copies poolswap's op log made during the timed publishes
//! (`OpLogStats::full_syncs`; total so far in parentheses).
//!
//! Each row has a warm-up (not reported) and a number of timed publishes (2,000 for
//! `k` ≤ 10, 500 for 100, 100 for 1,000); a row stops early once its timed publishes took
//! [`BUDGET`] (at least [`MIN_TIMED`] of them), which only the systems that copy the whole
//! map reach. Those two (poolswap rcu + `copy_from`, arc-swap clone) run only for
//! `n` ≤ 100,000. After its rows, each system's readers must see the same map as the floor
//! after the same batches, or the bench fails.
//!
//! ```text
//! # n = 10,000 and 100,000 (a few minutes)
//! cargo bench -p poolswap-benches --bench oplog
//! # and n = 1,000,000 (slow, ~3 GB)
//! OPLOG_BIG=1 cargo bench -p poolswap-benches --bench oplog
//! # systems whose name contains one of these
//! OPLOG_ONLY=flashmap,left cargo bench -p poolswap-benches --bench oplog
//! # only this n
//! OPLOG_N=100000 cargo bench -p poolswap-benches --bench oplog
//! # only the rows of this k (and the long hold)
//! OPLOG_K=10 cargo bench -p poolswap-benches --bench oplog
//! # initial maps with room for 2n entries
//! OPLOG_RESERVE=1 cargo bench -p poolswap-benches --bench oplog
//! # 3 reader threads (more than the cores)
//! OPLOG_READERS=3 cargo bench -p poolswap-benches --bench oplog
//! # the `OpLog::new` row's writer never waits
//! OPLOG_WAIT_US=0 cargo bench -p poolswap-benches --bench oplog
//! # the `OpLog::new` row builds two versions
//! OPLOG_NEW_VERSIONS=2 cargo bench -p poolswap-benches --bench oplog
//! POOLSWAP_BARRIER=fence cargo bench -p poolswap-benches --bench oplog
//! # smoke run: n = 1,000, a few publishes
//! cargo bench -p poolswap-benches --bench oplog -- --test
//! ```
//!
//! The report goes to stdout and to `$CARGO_TARGET_DIR/bench-oplog/oplog.md` (`target/` by
//! default); a smoke run writes no file.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use poolswap::oplog::{Absorb as _, ArcPool, MapOp, OpLog, ReadHandle, SharedMap, Versioned};
use poolswap::{Container, Pool, Recycled};

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::Snapshot;

#[global_allocator]
static ALLOC: counting_alloc::CountingLive = counting_alloc::CountingLive;

/// The shared object.
type Map = HashMap<String, Vec<String>>;

/// Versions an `OpLog` makes at build time (`OpLogBuilder::versions`): the current one,
/// one the reader holds, the one being written. Their copies count in "build ms" and "live
/// MB after build", not in any publish.
const OPLOG_VERSIONS: usize = 3;

/// Batch sizes, each a row.
const KS: [usize; 4] = [1, 10, 100, 1_000];
/// `n` of the held-guard rows.
const HELD_N: u64 = 100_000;
/// How long the reader holds each guard in a held-guard row.
const HOLD: Duration = Duration::from_millis(1);
/// A held-guard row counts the publishes slower than this.
const SLOW: Duration = Duration::from_micros(500);
/// Batch size of the long-hold row, compared with the plain row of the same `k`.
const LONG_K: usize = 10;
/// Timed publishes of the long-hold row: 200,000 operations at [`LONG_K`], three times
/// the op log's default bound (65,536 operations: `OpLogBuilder::max_ops`), so that the op log drops
/// what the held version lacks during the held half.
const LONG_TIMED: usize = 20_000;

/// What the reader does with its guards during a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hold {
    /// Lets go of each guard after its lookup; 64 lookups per timed run.
    No,
    /// Holds each guard [`HOLD`] after its lookup; one lookup per timed run.
    Each,
    /// Takes one guard before the warm-up and holds it through the first half of the
    /// timed publishes ([`LONG_TIMED`] of [`LONG_K`] operations), then looks keys up as
    /// with `No`. Only for systems whose writer does not wait for readers.
    Long,
}
/// A row's timed publishes stop once they took this long in all...
const BUDGET: Duration = Duration::from_secs(3);
/// ... and there were at least this many.
const MIN_TIMED: usize = 20;
/// Lookups timed for "lookup ns, alone" (the writer idle, on the main thread).
const SOLO_LOOKUPS: usize = 200_000;

// ---------------------------------------------------------------------------------------
// The workload

/// One change of a batch.
#[derive(Clone, Debug)]
enum Op {
    /// Inserts the entry, or overwrites the value of an existing key.
    Put(String, Vec<String>),
    /// Removes the entry.
    Del(String),
}

impl Op {
    fn into_map_op(self) -> MapOp<String, Vec<String>> {
        match self {
            Op::Put(k, v) => MapOp::Insert(k, v),
            Op::Del(k) => MapOp::Remove(k),
        }
    }
}

/// Applies `op` by value: the floor, and the last copy of the two-copy systems.
fn apply_owned(map: &mut Map, op: Op) {
    match op {
        Op::Put(k, v) => match map.get_mut(&k) {
            Some(old) => *old = v,
            None => {
                map.insert(k, v);
            }
        },
        Op::Del(k) => {
            map.remove(&k);
        }
    }
}

/// Applies `op` by reference: an overwrite copies into the old value's buffers.
fn apply_ref(map: &mut Map, op: &Op) {
    match op {
        Op::Put(k, v) => match map.get_mut(k) {
            Some(old) => old.clone_from(v),
            None => {
                map.insert(k.clone(), v.clone());
            }
        },
        Op::Del(k) => {
            map.remove(k);
        }
    }
}

fn key(i: u64) -> String {
    format!("key-{i:07}")
}

/// Three strings of 32 bytes, different for every `seed`.
fn value(seed: u64) -> Vec<String> {
    (0..3)
        .map(|s| format!("v{seed:010}-{s}-padded-to-30-bytes"))
        .collect()
}

fn xorshift(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    x
}

/// The batches, the same for every system: keys `0 .. n/2` are stable (overwritten), keys
/// `lo .. hi` churn (removed oldest first, new ones inserted at `hi`).
struct Workload {
    n: u64,
    lo: u64,
    hi: u64,
    rng: u64,
    /// The size of every batch made so far, to replay them on the floor.
    schedule: Vec<usize>,
}

impl Workload {
    fn new(n: u64) -> Workload {
        Workload {
            n,
            lo: n / 2,
            hi: n,
            rng: 0x2545_f491_4f6c_dd1d,
            schedule: Vec::new(),
        }
    }

    /// The `n` entries every system starts from; with `reserve`, in a table with room for
    /// `2 × n` (`OPLOG_RESERVE`).
    fn initial(n: u64, reserve: bool) -> Map {
        let mut map = Map::with_capacity(if reserve { 2 * n as usize } else { 0 });
        map.extend((0..n).map(|i| (key(i), value(i))));
        map
    }

    /// The next batch of `k` operations.
    fn batch(&mut self, k: usize) -> Vec<Op> {
        self.schedule.push(k);
        let tag = self.n + self.schedule.len() as u64;
        let pairs = k / 4;
        let mut ops = Vec::with_capacity(k);
        for _ in 0..k - 2 * pairs {
            let i = xorshift(&mut self.rng) % (self.n / 2).max(1);
            ops.push(Op::Put(key(i), value(tag)));
        }
        for _ in 0..pairs {
            ops.push(Op::Del(key(self.lo)));
            ops.push(Op::Put(key(self.hi), value(self.hi)));
            self.lo += 1;
            self.hi += 1;
        }
        ops
    }
}

/// A key for a reader: a stable one or a churning one live now (`lo` as the writer last
/// published it), uniformly.
fn pick(rng: &mut u64, n: u64, lo: u64) -> u64 {
    let r = xorshift(rng) % n;
    if r < n / 2 {
        r
    } else {
        lo + (r - n / 2)
    }
}

// ---------------------------------------------------------------------------------------
// The systems

/// A map shared by one writer and its readers.
trait System {
    type Reader: Reader;
    /// Applies `batch` and publishes it: the timed part.
    fn publish(&mut self, batch: Vec<Op>);
    /// One lookup through the writer's own handle (for "lookup ns, alone").
    fn lookup(&self, key: &str) -> bool;
    /// A handle for the reader thread; `None` for the unshared floor.
    fn reader(&self) -> Option<Self::Reader>;
    /// The map a reader sees now.
    fn contents(&self) -> Map;
    /// Whether a publish waits for readers to leave a copy (left-right, flashmap): such a
    /// system gets no long-hold row, whose publishes would wait for the whole hold.
    fn waits_for_readers(&self) -> bool {
        false
    }
    /// Whole-map copies made so far, where the system counts them.
    fn full_syncs(&self) -> Option<u64> {
        None
    }
    /// Operation applications per operation appended, over the whole run, where the system
    /// counts them: the number of versions that applied each operation.
    fn applied_per_op(&self) -> Option<f64> {
        None
    }
    /// Share of the publishes, over the whole run, that wrote a version lacking more than
    /// the previous batch (`OpLogStats::stale_takes`), where the system counts them.
    fn stale_share(&self) -> Option<f64> {
        None
    }
    /// The op log's counters so far, where the system has one: applications, operations
    /// appended, waits that got the retired version back, waits that timed out.
    fn counters(&self) -> Option<[u64; 4]> {
        None
    }
    /// What the writer does between publishes, outside the timed part: nothing, but for
    /// the row of a writer with idle time (`OpLog::catch_up`).
    fn idle(&mut self) {}
}

/// A reader thread's handle.
trait Reader: Send {
    /// Acquires the current version, looks `key` up, and calls `hold` before it lets the
    /// version go (a reader working on its guard).
    fn lookup(&mut self, key: &str, hold: &dyn Fn()) -> bool;
}

/// Keeps the calling thread busy (not asleep) for `d`, as a reader working on a guard would.
fn busy(d: Duration) {
    if d.is_zero() {
        return;
    }
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// The floor: a plain map changed in place, which nobody else reads.
struct Floor(Map);

/// The floor's reader, which does not exist.
enum NoReader {}

impl Reader for NoReader {
    fn lookup(&mut self, _: &str, _: &dyn Fn()) -> bool {
        match *self {}
    }
}

impl System for Floor {
    type Reader = NoReader;
    fn publish(&mut self, batch: Vec<Op>) {
        for op in batch {
            apply_owned(&mut self.0, op);
        }
    }
    fn lookup(&self, key: &str) -> bool {
        black_box(self.0.get(key)).is_some()
    }
    fn reader(&self) -> Option<NoReader> {
        None
    }
    fn contents(&self) -> Map {
        self.0.clone()
    }
}

/// A version type of an `OpLog` that is (or wraps) the map.
trait AsMap: Send + Sync + 'static {
    fn as_map(&self) -> &Map;
}

impl AsMap for Map {
    fn as_map(&self) -> &Map {
        self
    }
}

impl AsMap for Recycled<Map> {
    fn as_map(&self) -> &Map {
        self
    }
}

/// Where a poolswap reader acquires: a shared container, or an op log's `ReadHandle`.
trait Acquire<T>: Send + 'static {
    fn acquire(&self) -> poolswap::Guard<T>;
}

impl<T: Send + Sync + 'static> Acquire<T> for Arc<Container<T>> {
    #[inline]
    fn acquire(&self) -> poolswap::Guard<T> {
        Container::acquire(self)
    }
}

impl<T: Send + Sync + 'static> Acquire<Versioned<T>> for ReadHandle<T> {
    #[inline]
    fn acquire(&self) -> poolswap::Guard<Versioned<T>> {
        ReadHandle::acquire(self)
    }
}

/// A reader thread's handle on a poolswap container (`C`: see [`Acquire`]): acquires the
/// current version and looks the key up with `find`.
struct PsReader<T: Send + Sync + 'static, C = Arc<Container<T>>> {
    container: C,
    find: fn(&T, &str) -> bool,
}

impl<T: Send + Sync + 'static, C: Acquire<T>> Reader for PsReader<T, C> {
    fn lookup(&mut self, key: &str, hold: &dyn Fn()) -> bool {
        let version = self.container.acquire();
        let found = black_box((self.find)(&version, key));
        hold();
        drop(version);
        found
    }
}

/// `poolswap::oplog` over `T`: the writer, and a background reclaimer while the system lives
/// if the row asks for one.
struct OpLogSys<T: AsMap>(
    OpLog<T, MapOp<String, Vec<String>>>,
    // Held for its lifetime only: the reclaimer runs until the system is dropped.
    #[allow(dead_code)] Option<poolswap::Reclaimer>,
    // The main thread's reader, made once: `lookup` is timed.
    ReadHandle<T>,
);

impl<T: AsMap + poolswap::oplog::Absorb<MapOp<String, Vec<String>>>> OpLogSys<T> {
    fn new(
        w: OpLog<T, MapOp<String, Vec<String>>>,
        reclaimer: Option<poolswap::Reclaimer>,
    ) -> Self {
        let r = w.read_handle();
        OpLogSys(w, reclaimer, r)
    }
}

impl<T> System for OpLogSys<T>
where
    T: AsMap + poolswap::oplog::Absorb<MapOp<String, Vec<String>>> + Default,
{
    type Reader = PsReader<Versioned<T>, ReadHandle<T>>;
    fn publish(&mut self, batch: Vec<Op>) {
        self.0.extend(batch.into_iter().map(Op::into_map_op));
        self.0.publish();
    }
    fn lookup(&self, key: &str) -> bool {
        black_box(self.2.acquire().as_map().get(key)).is_some()
    }
    fn reader(&self) -> Option<Self::Reader> {
        Some(PsReader {
            container: self.0.read_handle(),
            find: |v, key| v.as_map().get(key).is_some(),
        })
    }
    fn contents(&self) -> Map {
        self.2.acquire().as_map().clone()
    }
    fn full_syncs(&self) -> Option<u64> {
        Some(self.0.stats().full_syncs)
    }
    fn applied_per_op(&self) -> Option<f64> {
        let stats = self.0.stats();
        Some(stats.applied as f64 / stats.appended.max(1) as f64)
    }
    fn stale_share(&self) -> Option<f64> {
        let stats = self.0.stats();
        Some(
            poolswap::internals::oplog_counters(&stats).stale_takes as f64
                / stats.publishes.max(1) as f64,
        )
    }
    fn counters(&self) -> Option<[u64; 4]> {
        let s = self.0.stats();
        Some([s.applied, s.appended, s.waited, s.wait_timeouts])
    }
}

/// `OpLog<HashMap>` with `OpLog::catch_up` after each publish, outside the timed
/// part: a writer with idle time between publishes, which brings the idle versions up to
/// date there, so that a publish applies only its own batch.
struct OpLogIdle(OpLogSys<Map>);

impl System for OpLogIdle {
    type Reader = PsReader<Versioned<Map>, ReadHandle<Map>>;
    fn publish(&mut self, batch: Vec<Op>) {
        self.0.publish(batch);
    }
    fn lookup(&self, key: &str) -> bool {
        self.0.lookup(key)
    }
    fn reader(&self) -> Option<Self::Reader> {
        self.0.reader()
    }
    fn contents(&self) -> Map {
        self.0.contents()
    }
    fn full_syncs(&self) -> Option<u64> {
        self.0.full_syncs()
    }
    fn applied_per_op(&self) -> Option<f64> {
        self.0.applied_per_op()
    }
    fn stale_share(&self) -> Option<f64> {
        self.0.stale_share()
    }
    fn counters(&self) -> Option<[u64; 4]> {
        self.0.counters()
    }
    fn idle(&mut self) {
        (self.0).0.catch_up();
    }
}

/// The shared-data recipe for `poolswap::oplog`: keys and values behind `Arc`, so that the
/// versions point to one copy of each entry's strings (as flashmap's two copies share each
/// value): applying an operation to a version clones two `Arc`s (two atomic increments),
/// never a string. Readers look keys up by `&str` as before and get a `[String]`.
type ArcMap = HashMap<Arc<str>, Arc<[String]>>;

/// `poolswap::oplog` over [`ArcMap`]. The batch's data moves into its `Arc`s inside the
/// timed publish (one allocation for a removal's key, two for an insertion, which a user
/// who builds the operations with `Arc`s from the start pays outside it).
struct OpLogShared(
    OpLog<ArcMap, MapOp<Arc<str>, Arc<[String]>>>,
    // The main thread's reader, made once: `lookup` is timed.
    ReadHandle<ArcMap>,
);

impl OpLogShared {
    fn new(map: Map) -> OpLogShared {
        let shared: ArcMap = map
            .into_iter()
            .map(|(k, v)| (Arc::from(k), Arc::from(v)))
            .collect();
        let w = OpLog::builder(shared).versions(OPLOG_VERSIONS).build();
        let r = w.read_handle();
        OpLogShared(w, r)
    }
}

impl System for OpLogShared {
    type Reader = PsReader<Versioned<ArcMap>, ReadHandle<ArcMap>>;
    fn publish(&mut self, batch: Vec<Op>) {
        self.0.extend(batch.into_iter().map(|op| match op {
            Op::Put(k, v) => MapOp::Insert(Arc::from(k), Arc::from(v)),
            Op::Del(k) => MapOp::Remove(Arc::from(k)),
        }));
        self.0.publish();
    }
    fn lookup(&self, key: &str) -> bool {
        black_box(self.1.acquire().get(key)).is_some()
    }
    fn reader(&self) -> Option<Self::Reader> {
        Some(PsReader {
            container: self.0.read_handle(),
            find: |v, key| v.get(key).is_some(),
        })
    }
    fn contents(&self) -> Map {
        let version = self.1.acquire();
        version
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_vec()))
            .collect()
    }
    fn full_syncs(&self) -> Option<u64> {
        Some(self.0.stats().full_syncs)
    }
    fn applied_per_op(&self) -> Option<f64> {
        let stats = self.0.stats();
        Some(stats.applied as f64 / stats.appended.max(1) as f64)
    }
    fn stale_share(&self) -> Option<f64> {
        let stats = self.0.stats();
        Some(
            poolswap::internals::oplog_counters(&stats).stale_takes as f64
                / stats.publishes.max(1) as f64,
        )
    }
}

/// `poolswap::oplog::SharedMap`: values behind `Arc`s that every version shares (as in
/// [`OpLogShared`]), recycled: the last application of an overwrite or removal hands the
/// displaced `Arc` to the map's `ArcPool`, and the next value moves into one that no version
/// holds any more (`ArcPool::share`: the recycled value is dropped, the batch's moves in;
/// no allocation). Keys stay `String`s, one per version: an insert's key is copied into the
/// buffer of a key the same replay removed (`Absorb::absorb_all`), as for a plain map.
type RecycledShared = SharedMap<String, Vec<String>>;

struct OpLogSharedMap {
    w: OpLog<RecycledShared, MapOp<String, Arc<Vec<String>>>>,
    values: Arc<ArcPool<Vec<String>>>,
    // The main thread's reader, made once: `lookup` is timed.
    r: ReadHandle<RecycledShared>,
}

impl OpLogSharedMap {
    fn new(map: Map) -> OpLogSharedMap {
        let w = OpLog::builder(SharedMap::from(map))
            .versions(OPLOG_VERSIONS)
            .build();
        let r = w.read_handle();
        let values = Arc::clone(r.acquire().arc_pool());
        OpLogSharedMap { w, values, r }
    }
}

impl System for OpLogSharedMap {
    type Reader = PsReader<Versioned<RecycledShared>, ReadHandle<RecycledShared>>;
    fn publish(&mut self, batch: Vec<Op>) {
        for op in batch {
            self.w.append(match op {
                Op::Put(k, v) => MapOp::Insert(k, self.values.share(v)),
                Op::Del(k) => MapOp::Remove(k),
            });
        }
        self.w.publish();
    }
    fn lookup(&self, key: &str) -> bool {
        black_box(self.r.acquire().get(key)).is_some()
    }
    fn reader(&self) -> Option<Self::Reader> {
        Some(PsReader {
            container: self.w.read_handle(),
            find: |v, key| v.get(key).is_some(),
        })
    }
    fn contents(&self) -> Map {
        let version = self.r.acquire();
        version
            .iter()
            .map(|(k, v)| (k.to_string(), Vec::clone(v)))
            .collect()
    }
    fn full_syncs(&self) -> Option<u64> {
        Some(self.w.stats().full_syncs)
    }
    fn applied_per_op(&self) -> Option<f64> {
        let stats = self.w.stats();
        Some(stats.applied as f64 / stats.appended.max(1) as f64)
    }
    fn stale_share(&self) -> Option<f64> {
        let stats = self.w.stats();
        Some(
            poolswap::internals::oplog_counters(&stats).stale_takes as f64
                / stats.publishes.max(1) as f64,
        )
    }
}

/// poolswap without the op log: `rcu` copies the whole current version into a reused one
/// (the pool's reset keeps contents, so the copy overwrites an older version in place).
struct RcuCopy {
    container: Arc<Container<Recycled<Map>>>,
    /// The batch as `MapOp`s, kept for its buffer.
    ops: Vec<MapOp<String, Vec<String>>>,
}

impl RcuCopy {
    fn new(map: Map) -> RcuCopy {
        let pool = Pool::new(Recycled::<Map>::default, |_| true);
        let container = Container::new(&pool, pool.adopt(Recycled::new(map)));
        RcuCopy {
            container: Arc::new(container),
            ops: Vec::new(),
        }
    }
}

impl System for RcuCopy {
    type Reader = PsReader<Recycled<Map>>;
    fn publish(&mut self, batch: Vec<Op>) {
        self.ops.extend(batch.into_iter().map(Op::into_map_op));
        let ops = &self.ops;
        self.container.rcu(|current, next| {
            Recycled::copy_from(next, current);
            for op in ops {
                next.absorb(op);
            }
        });
        self.ops.clear();
    }
    fn lookup(&self, key: &str) -> bool {
        black_box(self.container.acquire().get(key)).is_some()
    }
    fn reader(&self) -> Option<Self::Reader> {
        Some(PsReader {
            container: Arc::clone(&self.container),
            find: |v, key| v.get(key).is_some(),
        })
    }
    fn contents(&self) -> Map {
        Map::clone(&self.container.acquire())
    }
}

/// left-right's two copies of the map.
#[derive(Clone)]
struct LrMap(Map);

impl left_right::Absorb<Op> for LrMap {
    fn absorb_first(&mut self, op: &mut Op, _: &Self) {
        apply_ref(&mut self.0, op);
    }
    fn absorb_second(&mut self, op: Op, _: &Self) {
        apply_owned(&mut self.0, op);
    }
    fn sync_with(&mut self, first: &Self) {
        self.0.clone_from(&first.0);
    }
}

struct LeftRight(left_right::WriteHandle<LrMap, Op>);

struct LrReader(left_right::ReadHandle<LrMap>);

impl Reader for LrReader {
    fn lookup(&mut self, key: &str, hold: &dyn Fn()) -> bool {
        let Some(map) = self.0.enter() else {
            return false;
        };
        let found = black_box(map.0.get(key)).is_some();
        hold();
        drop(map);
        found
    }
}

impl System for LeftRight {
    type Reader = LrReader;
    fn publish(&mut self, batch: Vec<Op>) {
        for op in batch {
            self.0.append(op);
        }
        self.0.publish();
    }
    fn lookup(&self, key: &str) -> bool {
        let map = self.0.enter().expect("the writer is alive");
        black_box(map.0.get(key)).is_some()
    }
    fn reader(&self) -> Option<LrReader> {
        Some(LrReader(left_right::ReadHandle::clone(&self.0)))
    }
    fn waits_for_readers(&self) -> bool {
        true
    }
    fn contents(&self) -> Map {
        self.0.enter().expect("the writer is alive").0.clone()
    }
}

struct Flash {
    write: flashmap::WriteHandle<String, Vec<String>>,
    read: flashmap::ReadHandle<String, Vec<String>>,
}

impl Flash {
    fn new(map: Map) -> Flash {
        let (mut write, read) = flashmap::with_capacity(map.capacity());
        let mut guard = write.guard();
        for (k, v) in map {
            guard.insert(k, v);
        }
        guard.publish();
        Flash { write, read }
    }
}

struct FlashReader(flashmap::ReadHandle<String, Vec<String>>);

impl Reader for FlashReader {
    fn lookup(&mut self, key: &str, hold: &dyn Fn()) -> bool {
        let map = self.0.guard();
        let found = black_box(map.get(key)).is_some();
        hold();
        drop(map);
        found
    }
}

impl System for Flash {
    type Reader = FlashReader;
    fn publish(&mut self, batch: Vec<Op>) {
        let mut guard = self.write.guard();
        for op in batch {
            match op {
                Op::Put(k, v) => drop(guard.insert(k, v)),
                Op::Del(k) => drop(guard.remove(k)),
            }
        }
        guard.publish();
    }
    fn lookup(&self, key: &str) -> bool {
        black_box(self.read.guard().get(key)).is_some()
    }
    fn reader(&self) -> Option<FlashReader> {
        Some(FlashReader(self.read.clone()))
    }
    fn waits_for_readers(&self) -> bool {
        true
    }
    fn contents(&self) -> Map {
        let map = self.read.guard();
        map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

type Imbl = imbl::HashMap<String, Vec<String>>;

/// `ArcSwap` of a persistent map.
struct SwapImbl(Arc<ArcSwap<Imbl>>);

struct SwapImblReader(Arc<ArcSwap<Imbl>>);

impl Reader for SwapImblReader {
    fn lookup(&mut self, key: &str, hold: &dyn Fn()) -> bool {
        let map = self.0.load();
        let found = black_box(map.get(key)).is_some();
        hold();
        drop(map);
        found
    }
}

impl System for SwapImbl {
    type Reader = SwapImblReader;
    fn publish(&mut self, batch: Vec<Op>) {
        self.0.rcu(|current| {
            let mut next = Imbl::clone(current);
            for op in &batch {
                match op {
                    Op::Put(k, v) => drop(next.insert(k.clone(), v.clone())),
                    Op::Del(k) => drop(next.remove(k)),
                }
            }
            next
        });
    }
    fn lookup(&self, key: &str) -> bool {
        black_box(self.0.load().get(key)).is_some()
    }
    fn reader(&self) -> Option<SwapImblReader> {
        Some(SwapImblReader(Arc::clone(&self.0)))
    }
    fn contents(&self) -> Map {
        let map = self.0.load();
        map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

/// `ArcSwap` of a plain map, copied whole per publish.
struct SwapClone(Arc<ArcSwap<Map>>);

struct SwapCloneReader(Arc<ArcSwap<Map>>);

impl Reader for SwapCloneReader {
    fn lookup(&mut self, key: &str, hold: &dyn Fn()) -> bool {
        let map = self.0.load();
        let found = black_box(map.get(key)).is_some();
        hold();
        drop(map);
        found
    }
}

impl System for SwapClone {
    type Reader = SwapCloneReader;
    fn publish(&mut self, batch: Vec<Op>) {
        self.0.rcu(|current| {
            let mut next = Map::clone(current);
            for op in &batch {
                apply_ref(&mut next, op);
            }
            next
        });
    }
    fn lookup(&self, key: &str) -> bool {
        black_box(self.0.load().get(key)).is_some()
    }
    fn reader(&self) -> Option<SwapCloneReader> {
        Some(SwapCloneReader(Arc::clone(&self.0)))
    }
    fn contents(&self) -> Map {
        Map::clone(&self.0.load())
    }
}

// ---------------------------------------------------------------------------------------
// Running

/// How many publishes a row makes.
#[derive(Clone, Copy)]
struct Plan {
    smoke: bool,
    /// `OPLOG_K`: only the rows of this batch size (the plain one, and the long-hold row
    /// if it is [`LONG_K`]).
    only_k: Option<usize>,
    /// `OPLOG_RESERVE`: every initial map has room for twice its entries.
    reserve: bool,
    /// `OPLOG_READERS`: reader threads of the rows whose readers let go of each guard
    /// (default 1; the held-guard rows keep one).
    readers: usize,
}

impl Plan {
    /// Warm-up and timed publishes for batches of `k` with the reader's `hold`.
    fn counts(self, k: usize, hold: Hold) -> (usize, usize) {
        if self.smoke {
            return (2, if hold == Hold::No { 5 } else { 4 });
        }
        match (hold, k) {
            (Hold::Each, _) => (20, 1_000),
            (Hold::Long, _) => (200, LONG_TIMED),
            (Hold::No, 0..=10) => (200, 2_000),
            (Hold::No, 11..=100) => (50, 500),
            _ => (10, 100),
        }
    }

    /// A row's timed publishes stop after this long (a smoke run makes every publish, so
    /// that every system gets the same batches).
    fn budget(self) -> Duration {
        if self.smoke {
            Duration::MAX
        } else {
            BUDGET
        }
    }
}

/// What the writer tells the reader thread, and the reader the writer; relaxed, as
/// nothing is published through them.
#[derive(Default)]
struct Flags {
    /// The row is over.
    stop: AtomicBool,
    /// The reader runs (with [`Hold::Long`]: holds its guard); the writer may start.
    started: AtomicBool,
    /// Half the long-hold row's timed publishes are done: the reader lets go.
    release: AtomicBool,
}

/// What the reader thread measured.
#[derive(Default)]
struct Reads {
    lookups: u64,
    hits: u64,
    nanos: u128,
}

/// The reader thread: looks up random keys until `stop`, 64 per timed run (one at a time
/// with [`Hold::Each`]). With [`Hold::Long`], first holds one guard until `release` (or
/// `stop`); that lookup is not timed. Allocates nothing after its first round.
fn read_loop<R: Reader>(mut reader: R, n: u64, lo: &AtomicU64, flags: &Flags, hold: Hold) -> Reads {
    let Flags {
        stop,
        started,
        release,
    } = flags;
    let mut rng = 0x9e37_79b9_7f4a_7c15;
    let mut reads = Reads::default();
    if hold == Hold::Long {
        let first = key(pick(&mut rng, n, lo.load(Relaxed)));
        // Busy while it holds the guard, as the other rows' reader is while it looks up.
        let held = reader.lookup(&first, &|| {
            started.store(true, Relaxed);
            while !release.load(Relaxed) && !stop.load(Relaxed) {
                std::hint::spin_loop();
            }
        });
        reads.hits += u64::from(held);
    }
    let each = if hold == Hold::Each {
        HOLD
    } else {
        Duration::ZERO
    };
    let per_run = if hold == Hold::Each { 1 } else { 64 };
    let mut keys: Vec<String> = (0..per_run).map(|_| String::with_capacity(32)).collect();
    loop {
        let lo_now = lo.load(Relaxed);
        for key in &mut keys {
            key.clear();
            write!(key, "key-{:07}", pick(&mut rng, n, lo_now)).expect("a String takes any write");
        }
        let start = Instant::now();
        for key in &keys {
            reads.hits += u64::from(reader.lookup(key, &|| busy(each)));
        }
        reads.nanos += start.elapsed().as_nanos();
        reads.lookups += per_run as u64;
        // Only for the writer to start once the reader runs; relaxed, as nothing is
        // published through it.
        started.store(true, Relaxed);
        if stop.load(Relaxed) {
            return reads;
        }
    }
}

/// One row's results.
struct Row {
    system: &'static str,
    n: u64,
    k: usize,
    hold: Hold,
    /// Publish times in ns, sorted.
    times: Vec<u64>,
    allocs: u64,
    bytes: u64,
    /// The reader's ns per acquire + lookup (none with a hold, or without a reader).
    lookup_ns: Option<f64>,
    /// Peak live bytes during the timed publishes, less those live before the build.
    peak: u64,
    /// Full syncs during the timed publishes, and in all so far.
    full_syncs: Option<(u64, u64)>,
    /// [`System::counters`] over the timed publishes.
    counters: Option<[u64; 4]>,
}

impl Row {
    fn pct(&self, q: f64) -> u64 {
        let rank = ((self.times.len() as f64 * q).ceil() as usize).max(1);
        self.times[rank - 1]
    }
    fn per_publish(&self, total: u64) -> f64 {
        total as f64 / self.times.len() as f64
    }
    /// p50, p99 and max, in µs, for a table.
    fn quantiles(&self) -> [String; 3] {
        [0.5, 0.99, 1.0].map(|q| us(self.pct(q)))
    }
    /// Publishes slower than [`SLOW`].
    fn slow(&self) -> usize {
        self.times
            .iter()
            .filter(|&&t| t > SLOW.as_nanos() as u64)
            .count()
    }
    /// The "full syncs" cell: during the row (in all so far), or a dash.
    fn syncs_cell(&self) -> String {
        self.full_syncs
            .map_or("–".into(), |(timed, all)| format!("{timed} ({all})"))
    }
}

/// One system at one `n`.
struct Built {
    system: &'static str,
    n: u64,
    build: Duration,
    live_after_build: u64,
    live_after_run: u64,
    solo_ns: f64,
    full_syncs: Option<u64>,
    applied_per_op: Option<f64>,
    /// [`System::stale_share`].
    stale_share: Option<f64>,
    batches: usize,
}

/// The report so far.
#[derive(Default)]
struct Report {
    rows: Vec<Row>,
    builds: Vec<Built>,
    /// Systems that got no long-hold row at this `n` because their writer waits for readers.
    waiting: Vec<(u64, &'static str)>,
}

/// What one row's timed publishes measured.
struct Measured {
    /// Publish times in ns, sorted.
    times: Vec<u64>,
    allocated: Snapshot,
    reads: Option<Reads>,
    /// Peak live bytes, less those live before the build.
    peak: u64,
    /// Full syncs during the timed publishes, and in all so far.
    full_syncs: Option<(u64, u64)>,
    /// [`System::counters`] over the timed publishes.
    counters: Option<[u64; 4]>,
}

/// Runs one row: warm-up, then the timed publishes, the reader thread running throughout.
fn run_row<S: System>(
    sys: &mut S,
    wl: &mut Workload,
    plan: Plan,
    k: usize,
    hold: Hold,
    base: u64,
) -> Measured {
    let (warmup, timed) = plan.counts(k, hold);
    let lo = AtomicU64::new(wl.lo);
    let flags = Flags::default();
    let n = wl.n;
    // The held-guard rows keep one reader: theirs is the reader that holds.
    let readers: Vec<_> = (0..if hold == Hold::No { plan.readers } else { 1 })
        .map_while(|_| sys.reader())
        .collect();
    thread::scope(|s| {
        let readers: Vec<_> = readers
            .into_iter()
            .map(|r| {
                let (lo, flags) = (&lo, &flags);
                s.spawn(move || read_loop(r, n, lo, flags, hold))
            })
            .collect();
        if !readers.is_empty() {
            while !flags.started.load(Relaxed) {
                thread::yield_now();
            }
        }
        let start = Instant::now();
        for i in 0..warmup {
            if i >= 3 && start.elapsed() > plan.budget() / 3 {
                break;
            }
            sys.publish(wl.batch(k));
            lo.store(wl.lo, Relaxed);
            sys.idle();
        }
        let syncs_before = sys.full_syncs();
        let counters_before = sys.counters();
        let mut times = Vec::with_capacity(timed);
        let mut allocated = Snapshot::default();
        counting_alloc::reset_peak_live();
        let mut spent = Duration::ZERO;
        for i in 0..timed {
            if i >= MIN_TIMED && spent > plan.budget() {
                break;
            }
            if i == timed / 2 {
                flags.release.store(true, Relaxed);
            }
            let batch = wl.batch(k);
            let before = Snapshot::now();
            let start = Instant::now();
            sys.publish(batch);
            let took = start.elapsed();
            let during = Snapshot::since(before);
            lo.store(wl.lo, Relaxed);
            spent += took;
            times.push(took.as_nanos() as u64);
            allocated.allocs += during.allocs;
            allocated.bytes += during.bytes;
            sys.idle();
        }
        let peak = counting_alloc::peak_live_bytes().saturating_sub(base);
        let syncs = sys
            .full_syncs()
            .map(|after| (after - syncs_before.unwrap_or(0), after));
        let counters = sys
            .counters()
            .zip(counters_before)
            .map(|(after, before)| [0, 1, 2, 3].map(|i| after[i] - before[i]));
        flags.stop.store(true, Relaxed);
        let reads = readers
            .into_iter()
            .map(|r| r.join().expect("a reader panicked"))
            .reduce(|a, b| Reads {
                hits: a.hits + b.hits,
                nanos: a.nanos + b.nanos,
                lookups: a.lookups + b.lookups,
            });
        if let Some(reads) = &reads {
            assert!(reads.hits > 0, "the readers found no key");
        }
        times.sort_unstable();
        Measured {
            times,
            allocated,
            reads,
            peak,
            full_syncs: syncs,
            counters,
        }
    })
}

/// Times [`SOLO_LOOKUPS`] lookups on the main thread, nothing else running.
fn solo_lookups<S: System>(sys: &S, n: u64, lo: u64, lookups: usize) -> f64 {
    let mut keys: Vec<String> = (0..64).map(|_| String::with_capacity(32)).collect();
    let mut rng = 0x9e37_79b9_7f4a_7c15;
    let mut nanos = 0;
    let mut hits = 0u64;
    for _ in 0..lookups.div_ceil(64) {
        for key in &mut keys {
            key.clear();
            write!(key, "key-{:07}", pick(&mut rng, n, lo)).expect("a String takes any write");
        }
        let start = Instant::now();
        for key in &keys {
            hits += u64::from(sys.lookup(key));
        }
        nanos += start.elapsed().as_nanos();
    }
    assert!(hits > 0, "no key found");
    nanos as f64 / (lookups.div_ceil(64) * 64) as f64
}

/// Builds a system on the initial map of `n` entries, runs its rows, and checks that its
/// readers see what the floor holds after the same batches.
fn bench<S: System>(
    report: &mut Report,
    plan: Plan,
    system: &'static str,
    n: u64,
    make: impl FnOnce(Map) -> S,
) {
    let base = counting_alloc::live_bytes();
    let start = Instant::now();
    let mut sys = make(Workload::initial(n, plan.reserve));
    let build = start.elapsed();
    let live_after_build = counting_alloc::live_bytes().saturating_sub(base);
    let mut wl = Workload::new(n);
    let solo_ns = solo_lookups(
        &sys,
        n,
        wl.lo,
        if plan.smoke { 1_000 } else { SOLO_LOOKUPS },
    );
    let mut rows = Vec::new();
    let held_rows = (n == HELD_N || plan.smoke) && sys.reader().is_some();
    let long_row = held_rows && !sys.waits_for_readers();
    if held_rows && !long_row {
        report.waiting.push((n, system));
    }
    for (k, hold) in KS
        .iter()
        .map(|&k| (k, Hold::No))
        .chain(held_rows.then_some((1, Hold::Each)))
        .chain(long_row.then_some((LONG_K, Hold::Long)))
        .filter(|&(k, hold)| plan.only_k.is_none_or(|o| o == k && hold != Hold::Each))
    {
        let Measured {
            times,
            allocated,
            reads,
            peak,
            full_syncs,
            counters,
        } = run_row(&mut sys, &mut wl, plan, k, hold, base);
        let lookup_ns = reads
            .filter(|_| hold == Hold::No)
            .map(|r| r.nanos as f64 / r.lookups as f64);
        let row = Row {
            system,
            n,
            k,
            hold,
            times,
            allocs: allocated.allocs,
            bytes: allocated.bytes,
            lookup_ns,
            peak,
            full_syncs,
            counters,
        };
        eprintln!(
            "oplog: {system}, n={n}, k={k}{}: {} publishes, p50 {} µs, p99 {} µs",
            match hold {
                Hold::No => "",
                Hold::Each => " (held guards)",
                Hold::Long => " (a guard held through half the row)",
            },
            row.times.len(),
            us(row.pct(0.5)),
            us(row.pct(0.99)),
        );
        rows.push(row);
    }
    let live_after_run = counting_alloc::live_bytes().saturating_sub(base);
    let full_syncs = sys.full_syncs();
    let applied_per_op = sys.applied_per_op();
    let stale_share = sys.stale_share();
    let seen = sys.contents();
    drop(sys);

    // The floor after the same batches.
    let mut floor = Floor(Workload::initial(n, plan.reserve));
    let mut replay = Workload::new(n);
    for &k in &wl.schedule {
        floor.publish(replay.batch(k));
    }
    assert!(
        seen == floor.0,
        "{system}, n = {n}: the readers' map differs from the floor's after the same {} batches",
        wl.schedule.len()
    );
    assert_eq!(seen.len() as u64, n, "{system}: the size should stay n");

    report.rows.extend(rows);
    report.builds.push(Built {
        system,
        n,
        build,
        live_after_build,
        live_after_run,
        solo_ns,
        full_syncs,
        applied_per_op,
        stale_share,
        batches: wl.schedule.len(),
    });
}

// ---------------------------------------------------------------------------------------
// Reporting

fn us(ns: u64) -> String {
    let us = ns as f64 / 1_000.0;
    if us < 100.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.0}")
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1e6)
}

fn count(x: f64) -> String {
    if x < 10.0 && x.fract() != 0.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.0}")
    }
}

/// The output of a command, trimmed, or `None`.
fn command(program: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn header(plan: Plan) -> String {
    let smoke = plan.smoke;
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = thread::available_parallelism().map_or(0, |n| n.get());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# oplog: small batches on a big map (`benches/oplog.rs`)\n"
    );
    let _ = writeln!(
        out,
        "- Date: {}",
        command("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_else(|| "?".into())
    );
    let _ = writeln!(
        out,
        "- Commit: {}",
        command("git", &["describe", "--always", "--dirty"]).unwrap_or_else(|| "?".into())
    );
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into());
    let _ = writeln!(
        out,
        "- Machine: {cpu}, {cores} CPUs; load average at the start {load} (other \
         processes share the CPUs: p99 and max include their time slices)"
    );
    let _ = writeln!(
        out,
        "- Toolchain: {}",
        command("rustc", &["-V"]).unwrap_or_else(|| "?".into())
    );
    let _ = writeln!(
        out,
        "- poolswap barrier mode: {} (`POOLSWAP_BARRIER={}`)",
        barrier_mode(),
        std::env::var("POOLSWAP_BARRIER").unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "- Initial maps: {}",
        if plan.reserve {
            "room for 2n entries (`OPLOG_RESERVE=1`): no table doubles during the run"
        } else {
            "as collected (`OPLOG_RESERVE` unset): under the churn, a poolswap version's \
             table doubles once in a long row (tens of ms; the long-hold row's max)"
        }
    );
    let _ = writeln!(
        out,
        "- Crates: left-right 0.11, flashmap 0.2, arc-swap 1.9, imbl 7{}",
        if smoke {
            "; SMOKE RUN (`--test`): n = 1,000, a few publishes, figures meaningless"
        } else {
            ""
        }
    );
    out
}

/// A Markdown table's head: `columns`, the first left-aligned, the others right-aligned.
fn table_head(out: &mut String, columns: &[&str]) {
    let _ = writeln!(out, "| {} |", columns.join(" | "));
    let _ = writeln!(out, "|---{}|", "|---:".repeat(columns.len() - 1));
}

fn render(report: &Report, plan: Plan) -> String {
    let mut out = header(plan);
    let mut ns: Vec<u64> = report.builds.iter().map(|b| b.n).collect();
    ns.dedup();
    for &n in &ns {
        let _ = writeln!(out, "\n## n = {n}\n");
        let _ = writeln!(
            out,
            "Publish: from applying the batch to the return of the publish, µs. Allocations \
             and bytes per publish over the timed publishes; lookup: the reader's ns per \
             acquire + lookup during the row; peak: live MB at most during the row, less \
             what was live before the system was built.\n"
        );
        table_head(
            &mut out,
            &[
                "system",
                "k",
                "publishes",
                "p50 µs",
                "p99 µs",
                "max µs",
                "allocs/publish",
                "bytes/publish",
                "lookup ns",
                "peak MB",
                "full syncs",
                "applied/op",
                "waits timed out",
            ],
        );
        for k in KS {
            for row in report
                .rows
                .iter()
                .filter(|r| r.n == n && r.k == k && r.hold == Hold::No)
            {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    row.system,
                    row.k,
                    row.times.len(),
                    us(row.pct(0.5)),
                    us(row.pct(0.99)),
                    us(row.pct(1.0)),
                    count(row.per_publish(row.allocs)),
                    count(row.per_publish(row.bytes)),
                    row.lookup_ns.map_or("–".into(), |ns| format!("{ns:.0}")),
                    mb(row.peak),
                    row.syncs_cell(),
                    row.counters.map_or("–".into(), |c| format!(
                        "{:.2}",
                        c[0] as f64 / c[1].max(1) as f64
                    )),
                    row.counters
                        .map_or("–".into(), |c| format!("{} of {}", c[3], c[2] + c[3])),
                );
            }
        }
        let held: Vec<&Row> = report
            .rows
            .iter()
            .filter(|r| r.n == n && r.hold == Hold::Each)
            .collect();
        if !held.is_empty() {
            let _ = writeln!(
                out,
                "\nHeld guard: k = 1 while the reader holds each guard {} ms; \"slow\": \
                 publishes over {} µs.\n",
                HOLD.as_millis(),
                SLOW.as_micros()
            );
            table_head(
                &mut out,
                &[
                    "system",
                    "publishes",
                    "p50 µs",
                    "p99 µs",
                    "max µs",
                    "slow",
                    "peak MB",
                    "full syncs",
                ],
            );
            for row in held {
                let [p50, p99, max] = row.quantiles();
                let _ = writeln!(
                    out,
                    "| {} | {} | {p50} | {p99} | {max} | {} of {} | {} | {} |",
                    row.system,
                    row.times.len(),
                    row.slow(),
                    row.times.len(),
                    mb(row.peak),
                    row.syncs_cell(),
                );
            }
        }
        render_long(&mut out, report, n);
        let _ = writeln!(
            out,
            "\nBuild and memory: live MB once built (bytes per entry), after all its rows; \
             lookup ns with the writer idle; batches published in all; applications per \
             operation (how many versions applied each); stale takes: the share of \
             publishes that wrote a version older than the one the previous publish retired \
             (a reader still held that one), `OpLogStats::stale_takes`.\n"
        );
        table_head(
            &mut out,
            &[
                "system",
                "build ms",
                "live MB after build",
                "live MB after the run",
                "lookup ns, alone",
                "batches",
                "full syncs",
                "applied per op",
                "stale takes %",
            ],
        );
        for b in report.builds.iter().filter(|b| b.n == n) {
            let _ = writeln!(
                out,
                "| {} | {:.0} | {} ({:.0} B) | {} | {:.0} | {} | {} | {} | {} |",
                b.system,
                b.build.as_secs_f64() * 1e3,
                mb(b.live_after_build),
                b.live_after_build as f64 / n as f64,
                mb(b.live_after_run),
                b.solo_ns,
                b.batches,
                b.full_syncs.map_or("–".into(), |s| s.to_string()),
                b.applied_per_op.map_or("–".into(), |a| format!("{a:.2}")),
                b.stale_share
                    .map_or("–".into(), |a| format!("{:.2}", 100.0 * a)),
            );
        }
    }
    out
}

/// The long-hold table for `n`: each system's long-hold row beside its plain row of the
/// same `k`, and the systems that could not run it.
fn render_long(out: &mut String, report: &Report, n: u64) {
    let long: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| r.n == n && r.hold == Hold::Long)
        .collect();
    if long.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nA guard held through half the row: k = {LONG_K}; the reader takes one guard \
         before the warm-up and holds it (busy) through the first half of the timed \
         publishes, then looks keys up as in the other rows. \"p99 vs plain\": this p99 over \
         the same system's k = {LONG_K} row; \"slow\": publishes over {} µs.\n",
        SLOW.as_micros()
    );
    table_head(
        out,
        &[
            "system",
            "publishes",
            "p50 µs",
            "p99 µs",
            "p99 vs plain",
            "max µs",
            "slow",
            "peak MB",
            "full syncs",
        ],
    );
    for row in long {
        let plain = report
            .rows
            .iter()
            .find(|r| r.n == n && r.k == row.k && r.hold == Hold::No && r.system == row.system);
        let [p50, p99, max] = row.quantiles();
        let vs_plain = plain.map_or("–".into(), |p| {
            format!("{:.2}x", row.pct(0.99) as f64 / p.pct(0.99) as f64)
        });
        let _ = writeln!(
            out,
            "| {} | {} | {p50} | {p99} | {vs_plain} | {max} | {} | {} | {} |",
            row.system,
            row.times.len(),
            row.slow(),
            mb(row.peak),
            row.syncs_cell(),
        );
    }
    let waiting: Vec<&str> = report
        .waiting
        .iter()
        .filter(|&&(m, _)| m == n)
        .map(|&(_, system)| system)
        .collect();
    if !waiting.is_empty() {
        let _ = writeln!(
            out,
            "\nNot run: {} (a publish waits until the reader lets go of the copy it \
             writes next, here for the whole hold).",
            waiting.join(", ")
        );
    }
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let big = std::env::var_os("OPLOG_BIG").is_some_and(|v| v != "0");
    let only = std::env::var("OPLOG_ONLY").ok();
    let only_k = std::env::var("OPLOG_K").ok().and_then(|v| v.parse().ok());
    let reserve = std::env::var_os("OPLOG_RESERVE").is_some_and(|v| v != "0");
    let readers = std::env::var("OPLOG_READERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let plan = Plan {
        smoke,
        only_k,
        reserve,
        readers,
    };
    // `OPLOG_WAIT_US`: the `OpLog::new` row's writer waits this long instead of the
    // default (`OpLogBuilder::max_wait`), to choose the default.
    let wait_us: Option<u64> = std::env::var("OPLOG_WAIT_US")
        .ok()
        .and_then(|v| v.parse().ok());
    // `OPLOG_NEW_VERSIONS`: the `OpLog::new` row builds this many versions instead of the
    // default (`OpLogBuilder::versions`).
    let new_versions: Option<usize> = std::env::var("OPLOG_NEW_VERSIONS")
        .ok()
        .and_then(|v| v.parse().ok());
    let one_n: Option<u64> = std::env::var("OPLOG_N").ok().and_then(|v| v.parse().ok());
    let ns: &[u64] = if smoke {
        &[1_000]
    } else if let Some(n) = one_n.as_ref() {
        std::slice::from_ref(n)
    } else if big {
        &[10_000, 100_000, 1_000_000]
    } else {
        &[10_000, 100_000]
    };
    let wanted = |name: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|o| name.contains(o)))
    };
    let started = Instant::now();
    let mut report = Report::default();
    for &n in ns {
        // Each system once per n, every one after the previous is dropped (memory).
        macro_rules! system {
            ($name:expr, $make:expr) => {
                if wanted($name) {
                    bench(&mut report, plan, $name, n, $make);
                }
            };
        }
        system!("floor (HashMap in place, unshared)", Floor);
        system!("poolswap OpLog<HashMap>", |m| OpLogSys::new(
            OpLog::builder(m).versions(OPLOG_VERSIONS).build(),
            None
        ));
        system!("poolswap OpLog<HashMap> (OpLog::new)", |m| OpLogSys::new(
            if wait_us.is_none() && new_versions.is_none() {
                OpLog::new(m)
            } else {
                let mut b = OpLog::builder(m);
                if let Some(us) = wait_us {
                    b = b.max_wait(Duration::from_micros(us));
                }
                if let Some(v) = new_versions {
                    b = b.versions(v);
                }
                b.build()
            },
            None
        ));
        if n == HELD_N || smoke {
            system!("poolswap OpLog<HashMap>, 4 versions", |m| OpLogSys::new(
                OpLog::builder(m).versions(OPLOG_VERSIONS + 1).build(),
                None
            ));
        }
        system!(
            "poolswap OpLog<HashMap>, catch_up between publishes (untimed)",
            |m| OpLogIdle(OpLogSys::new(
                OpLog::builder(m).versions(OPLOG_VERSIONS).build(),
                None
            ))
        );
        system!("poolswap OpLog<Recycled<HashMap>>", |m| OpLogSys::new(
            OpLog::builder(Recycled::new(m))
                .versions(OPLOG_VERSIONS)
                .build(),
            None
        ));
        system!(
            "poolswap OpLog<HashMap<Arc<str>, Arc<[String]>>> (shared data)",
            OpLogShared::new
        );
        system!(
            "poolswap OpLog<SharedMap> (shared values, reused)",
            OpLogSharedMap::new
        );
        system!("poolswap OpLog<HashMap> + Reclaimer", |m| OpLogSys::new(
            OpLog::builder(m).versions(OPLOG_VERSIONS).build(),
            Some(poolswap::Reclaimer::spawn().expect("spawn the reclaimer"))
        ));
        system!("left-right (Absorb)", |m| LeftRight(
            left_right::new_from_empty(LrMap(m)).0
        ));
        system!("flashmap", Flash::new);
        system!("arc-swap + imbl (rcu)", |m: Map| SwapImbl(Arc::new(
            ArcSwap::from_pointee(m.into_iter().collect())
        )));
        if n <= 100_000 {
            system!("poolswap today (rcu + copy_from)", RcuCopy::new);
            system!("arc-swap clone (rcu)", |m| SwapClone(Arc::new(
                ArcSwap::from_pointee(m)
            )));
        }
    }
    let mut text = render(&report, plan);
    let _ = writeln!(
        text,
        "\nTook {:.0} s; every system's readers saw the floor's map after the same batches.",
        started.elapsed().as_secs_f64()
    );
    print!("{text}");
    if !smoke {
        // The workspace's target/ by default: cargo runs a bench from its package's
        // directory, benches/.
        let dir = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(
                || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target")),
                PathBuf::from,
            )
            .join("bench-oplog");
        std::fs::create_dir_all(&dir).expect("create the report's directory");
        let path = dir.join("oplog.md");
        std::fs::write(&path, &text).expect("write the report");
        eprintln!("oplog: report written to {}", path.display());
    }
}

/// The barrier mode the process chose, for the printed figures (a crate-internal
/// diagnostic, not public API).
fn barrier_mode() -> &'static str {
    if poolswap::internals::membarrier() {
        "membarrier"
    } else {
        "fence"
    }
}
