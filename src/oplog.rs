//! Updates that cost the change, not the table: an operation log replayed on recycled
//! versions.
//!
//! A [`Container`] replaces a whole version per update. For a table that changes a few
//! entries at a time that means a full copy per update (or a full rebuild): changing one
//! key of a 100,000-entry map copies 100,000 entries. A [`OpLog`] instead keeps a log
//! of the *operations* it published. To publish a batch, it takes a recycled version from
//! the container's pool, replays on it the batches that version missed, applies the new
//! batch, and swaps it in. An update then costs the operations applied, not the table.
//!
//! Readers are unchanged: the writer's [`container`](OpLog::container) is an ordinary
//! [`Container<Versioned<T>>`](Container) and a [`Guard`](crate::Guard) on it derefs (through
//! [`Versioned<T>`]) to `T`: [`acquire`](Container::acquire), [`Cache`](crate::Cache) and
//! [`Guard::map`](crate::Guard::map) work as for any container, and a reader sees every
//! operation of a batch or none.
//!
//! # Example
//!
//! ```
//! use std::collections::HashMap;
//! use std::sync::Arc;
//! use poolswap::oplog::{OpLog, MapOp};
//!
//! let mut routes = OpLog::new(HashMap::from([("/a", "10.0.0.1")]));
//! let table = Arc::clone(routes.container()); // what readers share
//!
//! routes.append(MapOp::Insert("/b", "10.0.0.2"));
//! routes.append(MapOp::Remove("/a"));
//! assert_eq!(table.acquire().get("/a"), Some(&"10.0.0.1")); // not published yet
//! routes.publish(); // both operations, atomically
//!
//! let now = table.acquire();
//! assert_eq!(now.get("/a"), None);
//! assert_eq!(now["/b"], "10.0.0.2");
//! ```
//!
//! # How it works
//!
//! Every version carries the sequence number of the last batch it holds
//! ([`Versioned::seq`]). The writer keeps the batches that some version it may get back still
//! lacks, in order, each operation tagged with its batch's number. To publish batch `n`:
//!
//! 1. Take a version from the container's pool: first reclaim the version the last
//!    publish retired, if it is still on the pool's retired list and the pass is cheap
//!    enough (see "What it costs"), then take the one a reclamation returned last (the
//!    freshest: usually that one, lag 1), else whatever the pool has idle. A version is
//!    in the pool only once no reader holds it: the writer never waits for a reader, and
//!    never sees a version a reader can still see.
//! 2. Bring it up to batch `n - 1`: replay the logged operations it lacks, or, if the log
//!    no longer holds them all (it was truncated, see below) or the version is new from
//!    the pool's factory, make it a full copy of the current version
//!    ([`Absorb::sync_from`]) and replay from there. Full copies are counted in
//!    [`OpLogStats::full_syncs`].
//! 3. Apply batch `n`, log it, and publish the version with
//!    [`Container::update`]: the swap is the moment readers see the whole batch.
//!
//! An operation no other version lacks is applied for the last time *by value*
//! ([`Absorb::absorb_owned`]): the version takes the operation's data instead of a clone,
//! and the log forgets it. The others apply it by reference ([`Absorb::absorb`]).
//!
//! This is left-right's operation log (Jon Gjengset's `left-right` crate, its `Absorb`
//! trait), generalised from two copies to the pool's versions, and without its wait: where
//! left-right's writer waits until every reader has left the copy it writes next, this one
//! writes a copy that no reader holds, because the pool only returns versions after their
//! last reader.
//!
//! # What it costs
//!
//! - **Time per publish**: *(lag + 1) × k* operations applied, where *k* is the batch's
//!   size and *lag* the number of batches the recycled version missed, plus one
//!   [`Container::update`] (a swap and a push on the retired list) and usually one
//!   reclamation pass over the pool's retired list (a barrier and a scan of the hazard
//!   slots, ~100-300 ns: see [`reclaim`](crate::reclaim())).
//! - **Why a pass per publish**: the version the last publish retired is the freshest
//!   (lag 1), and by the next publish its readers have usually let go (a lookup takes
//!   ~100 ns, a publish microseconds). Reclaiming it first saves *k* applications (~100-500
//!   ns each on a 100,000-entry map) against the older idle version the pool would hand
//!   out otherwise. So `publish` runs the pass when the list holds a version and no other
//!   pass ended since the last publish (one would have returned it), and either the pass
//!   needs only `fence(SeqCst)` (every version on the list was published fenced, within
//!   50 µs of its predecessor, or the process runs in `Fence` mode: a few ns) or the log
//!   holds at least 32 operations (worth a `membarrier`, ~1-10 µs): the pending batch and
//!   what the older idle version lacks, which it would replay instead. Otherwise it leaves the
//!   pass to the pool's getter, which runs one only when nothing is idle. The test costs
//!   one relaxed and one acquire load, plus the list's lock when something is retired.
//! - **Applications per operation**: with readers that let go between publishes, two
//!   versions alternate and each operation is applied twice on the publish path
//!   (left-right: twice). A reader that holds a guard across a publish makes the writer
//!   take a third version, which replays what it missed. That third version, while idle,
//!   is the *spare*: the log keeps what it lacks, and once it lacks more than three
//!   batches (per spare; at most the spare lag, [`OpLogBuilder::spare_lag`]), publishes
//!   replay on it the oldest three, by value where no other version needs them (they then
//!   leave the log). So the spare never needs a full copy, at the price of a third,
//!   deferred application of each operation, in chunks on about a third of the publishes.
//!   And whenever a reader holds a guard across a publish (on a loaded machine, a reader
//!   descheduled mid-lookup), the spare is written and replays what it missed since it was
//!   last caught up: at most a chunk and a batch (`lag_for` in `log/spare.rs`). While a
//!   reader holds the stalest version for long, the next stalest idle version is caught
//!   up instead (by reference), so a fourth version
//!   ([`OpLogBuilder::versions`]) stays as close; with four versions, `benches/delta.rs`'s
//!   long-hold row (a guard held through 10,000 publishes of 10 operations) had a 99th
//!   percentile 0.73-0.82x its plain row's.
//!   So every version that is ever written again applies every operation: over a long run
//!   with such readers each operation is still applied about three times
//!   (`benches/delta.rs`, 2026-11-26: 2.99-3.00 per op, as before), the spare's share in
//!   bursts rather than at every publish; only a run whose readers never hold a guard
//!   across a publish stays at two. What the pass buys is the cheaper common publish (2k
//!   applications instead of 3k). `examples/change_log.rs` prints the figure for its run
//!   ([`OpLogStats::applied`]).
//! - **Fixed cost**: a publish also takes a version from the pool, updates the container
//!   and keeps the log. `examples/publish_loop.rs` under callgrind (a 100,000-entry
//!   `HashMap<String, Vec<String>>`, one overwrite per batch, three versions, no reader,
//!   `POOLSWAP_BARRIER=fence`; its docs give the command) counted 3,130 instructions per
//!   append + publish with the operation applied three times (2026-11-26, before the
//!   publish-time pass), and counts 2,441 with it applied twice and a pass per publish (a
//!   fence, a scan of the slots, the list's lock twice, and the depot's lock to take the
//!   returned version). Earlier breakdown (three applications): 1,850 for the
//!   applications (each hashes the key with SipHash; the last one frees the overwritten
//!   value), 540 for the pool's get, 225 for [`Container::update`] (half of it the clock
//!   read that picks fenced versions), ~415 for the log's bookkeeping. Timed, 20,000
//!   publishes, membarrier mode, interleaved: 1.49-1.55 µs p50 (two applications) against
//!   2.13 µs (three), p99 3.8-4.0 µs against 3.3-3.6 µs (the pass), 2-core VM at load
//!   average 3-5 (2026-11-26). Later the same day (branch h25, after
//!   [`Absorb::absorb_all`]) it counts 2,563 per publish at k = 1 and 11,734 at k = 10
//!   (`publish_loop 2000 10`, the bench's mix: six overwrites, two removes, two inserts;
//!   each operation applied twice): of the k = 10 figure, ~3,900 hash the 20 keys
//!   looked up (SipHash, ~196 each), ~2,900 copy values into the old ones' buffers
//!   (`clone_from` of three strings), ~480 remove entries, ~600 append, ~530 the pass and
//!   ~230 the update. Timed, the applications dominate: each is ~0.5 µs on this map, most
//!   of it cache misses (the control bytes, the bucket, the key's bytes for the compare,
//!   the value's buffer, then its strings), which no reordering of the batch overlapped
//!   (looking each key up a few operations ahead made publishes slower).
//! - **Idle time**: [`OpLog::catch_up`] between publishes replays what the idle
//!   versions lack off the publish path; the next publish then applies only its batch
//!   (`benches/delta.rs`'s `catch_up` row, `bench-results/delta-59f0029.md`: k = 10 at
//!   100,000 entries, p50 5.0 µs, against 11.1 back to back in that run).
//! - **Full copies**: a version new from the factory, or one that missed more than the log
//!   keeps ([`OpLogBuilder::max_ops`]), is copied whole from the current version: O(n),
//!   on the publishing thread. The first publishes make the versions the pool circulates
//!   (usually three or four), unless [`OpLogBuilder::versions`] made them at build time;
//!   after that, a publish copies a version whole only when readers hold every version
//!   within the log's reach: it then takes one that came back after the log was
//!   truncated past it (a reader held it for more than `max_ops` operations' worth of
//!   publishes), or the pool makes one. An idle spare is caught up before the log would
//!   drop what it lacks (above), so it never needs one.
//!   A version that came back out of the log's reach is not taken while another idle
//!   version is within it: the publish (or the catch-up) that finds it puts it back as
//!   the pool's victim ([`OpLogStats::set_aside`]), which the next `trim` drops, and a
//!   publish copies it whole only when readers hold every version within reach (rather
//!   than have the pool make a new one).
//! - **Memory**: each version is a full `T` (typically 3-4 of them; `benches/delta.rs`
//!   reports peak bytes beside left-right's two copies), plus the log: up to
//!   [`max_ops`](OpLogBuilder::max_ops) operations for versions readers hold, and
//!   about the spare lag for the idle spare (the batches it lacks), in segments of 32 KiB
//!   that it takes and gives back one at a time (up to 8 emptied ones kept for reuse: 256
//!   KiB), so that neither growing to the bound nor shrinking back costs one publish a
//!   large copy or free. To keep one copy of each entry's data whatever the number of
//!   versions, put keys and values behind `Arc`
//!   (`HashMap<Arc<str>, Arc<V>>`): each version then holds pointers, and applying an
//!   operation to a version clones two `Arc`s instead of the data (flashmap shares values
//!   between its two copies the same way). On `benches/delta.rs`'s 100,000 entries this
//!   halved the peak (row "shared data"), at the cost of one more pointer per lookup.
//!   Each overwrite then allocates its new `Arc`; [`SharedMap`] recycles them instead (the
//!   last application hands the displaced `Arc` to a bin, the writer's next value reuses
//!   one no version holds), so that steady overwrites allocate nothing there either.
//!   Idle versions stay in the pool until it drops them: a version set aside out of the
//!   log's reach, and spares no publish needed for a while, go at the pool's `trim`. To
//!   have them dropped off the publish path (a version's drop frees the whole table),
//!   start the pool's trimmer thread, `w.container().pool().spawn_trimmer(period)`
//!   ([`Pool::spawn_trimmer`](crate::Pool::spawn_trimmer)): an idle version goes within
//!   two periods, and the writer stops keeping the log for it at its next publish
//!   (each version's drop tells its writer). A later publish that needs one more version
//!   than is left makes it from the factory with a full copy. When the version that held
//!   the log back goes, the operations it kept are dropped a few hundred per publish
//!   ([`OpLogStats::dropping`] counts those waiting), not all by one publish.
//! - **Table growth**: a version is a whole `T`, and grows as `T` does. A `HashMap` under
//!   churn (removals, then inserts of new keys) fills with tombstones; once they use up its
//!   room, hashbrown doubles a table whose entries fill more than half of it: tens of ms
//!   on the publish that inserts the key, once per version (90 ms in
//!   `examples/publish_loop.rs` at round ~25,000 of k = 10, 100,000 entries). Every
//!   version copies the initial value's bucket count (`clone_from`), so an initial map
//!   with room for twice its entries (`reserve(len)`) leaves only in-place rehashes, far
//!   rarer: `publish_loop 60000 10 0 --reserve` against the same without `--reserve`, two
//!   runs each (2026-11-26 20:39 UTC): max 85-87 -> 0.20-0.21 ms, p50 11.3-11.4 ->
//!   11.9-12.3 µs.
//! - **Allocations**: the log reuses its segments (up to 8 emptied ones, 256 KiB) and
//!   the pending batch is part of it: publishing
//!   allocates only what the operations themselves allocate when applied. The ready-made
//!   operations ([`MapOp`], [`SetOp`], [`VecOp`]) overwrite a value in place with
//!   `clone_from` (so an overwrite that fits the old value's buffers allocates nothing),
//!   and on a [`Recycled`](crate::Recycled) map they take new keys and values from its
//!   arena and recycle removed ones into it, so that inserts balanced by removals allocate
//!   only when a recycled buffer is shorter than what it is given and grows (the
//!   `change_log` example prints allocations per operation applied). On a plain
//!   `HashMap`, every version but the last clones an inserted key and value, unless the
//!   same replay removed an entry before the insert: the insert then reuses that entry's
//!   buffers ([`Absorb::absorb_all`]), so batches that replace entries (removes, then
//!   inserts) allocate nothing once the versions exist (`tests/log_alloc.rs`;
//!   `benches/delta.rs` at k = 10: 0 allocations per publish, 20 before, 2026-11-26).
//!
//! # Publishing only through the writer
//!
//! The container is an ordinary one, so code that holds it could publish into it with
//! [`Container::update`]. A version it publishes can only be one the pool handed out,
//! whose contents match its sequence number, so readers would see an older table until the
//! writer's next publish, never a torn one. Don't: publish through the writer.

use std::collections::VecDeque;
use std::fmt;
use std::ops::Deref;

// The readers' handle is std's `Arc`, not the facade's: it is public (`container()`), and
// it only shares the container, whose own atomics are the facade's (loom's under loom).
#[allow(clippy::disallowed_types)]
use std::sync::Arc;

use crate::{Container, Pooled};

use segments::Segments;

mod builder;
mod graveyard;
mod ops;
mod segments;
mod shared_map;
mod spare;
mod stats;
mod unneeded;

/// The property tests' configuration, shared with the integration tests (whose `pub` is
/// for their crates).
#[cfg(all(test, not(loom)))]
#[path = "../tests/support/proptest_config.rs"]
#[allow(unreachable_pub)]
mod proptest_config;

pub use self::builder::OpLogBuilder;
pub use self::ops::{MapOp, SetOp, VecOp};
pub use self::shared_map::{ArcPool, ArcPoolStats, SharedMap, DEFAULT_BIN_CAPACITY};
pub use self::stats::OpLogStats;

/// An operation type `O` that a `T` can apply to itself: how a [`OpLog`] changes its
/// versions.
///
/// Every version applies each operation once: by reference ([`absorb`](Absorb::absorb))
/// while another version still needs the operation, by value
/// ([`absorb_owned`](Absorb::absorb_owned)) for the last one. Applying the same operations
/// in the same order to equal values must give equal values, and applying them by value or
/// by reference must give the same result: readers of different versions see one history.
///
/// Ready-made for `HashMap`, `BTreeMap`, `HashSet`, `BTreeSet`, `Vec` and
/// [`Recycled`](crate::Recycled) hash maps: see [`MapOp`], [`SetOp`], [`VecOp`].
///
/// # Examples
///
/// A counter with its own operations:
///
/// ```
/// use poolswap::oplog::{Absorb, OpLog};
///
/// #[derive(Default)]
/// struct Hits(u64);
/// enum HitsOp { Add(u64), Reset }
///
/// impl Absorb<HitsOp> for Hits {
///     fn absorb(&mut self, op: &HitsOp) {
///         match op {
///             HitsOp::Add(n) => self.0 += n,
///             HitsOp::Reset => self.0 = 0,
///         }
///     }
///     fn sync_from(&mut self, src: &Hits) {
///         self.0 = src.0;
///     }
/// }
///
/// let mut hits = OpLog::new(Hits(0));
/// hits.append(HitsOp::Add(2));
/// hits.append(HitsOp::Add(3));
/// hits.publish();
/// assert_eq!(hits.container().acquire().0, 5);
/// hits.append(HitsOp::Reset);
/// hits.publish();
/// assert_eq!(hits.container().acquire().0, 0);
/// ```
pub trait Absorb<O> {
    /// Applies `op` to this version, which is not the last one to apply it.
    fn absorb(&mut self, op: &O);

    /// Applies `op` for the last time: it may move `op`'s data into `self` instead of
    /// cloning it. Defaults to [`absorb`](Absorb::absorb).
    fn absorb_owned(&mut self, op: O) {
        self.absorb(&op);
    }

    /// Applies `ops` in order, none of them for the last time: the same as
    /// [`absorb`](Absorb::absorb) on each, which is what it defaults to. A type may
    /// override it to share work across the operations of a replay: `HashMap` under
    /// [`MapOp`] reuses the key and value an operation removed for a later insert of a new
    /// key (`clone_from` into their buffers, up to 8 removed entries kept on the stack)
    /// instead of freeing them and allocating the insert's clones.
    fn absorb_all<'a, I>(&mut self, ops: I)
    where
        I: IntoIterator<Item = &'a O>,
        O: 'a,
    {
        for op in ops {
            self.absorb(op);
        }
    }

    /// Makes `self` equal to `src`: the full copy for a version the log cannot bring up to
    /// date (for std's collections, `clone_from`, which keeps `self`'s buffers where it
    /// can).
    fn sync_from(&mut self, src: &Self);
}

/// Sequence number of a version the writer never synchronised (new from the factory).
const UNSYNCED: u64 = u64::MAX;

/// A version of a [`OpLog`]'s container: a `T` and the number of the last batch it
/// holds. Derefs to `T`; readers use it as they would use `T`.
///
/// Only the writer changes a `Versioned<T>`, and only while no reader can see it.
///
/// # Examples
///
/// ```
/// use std::collections::HashSet;
/// use poolswap::oplog::{Versioned, OpLog, SetOp};
///
/// let mut flags = OpLog::new(HashSet::new());
/// flags.append(SetOp::Insert("dark-mode"));
/// let n = flags.publish();
///
/// let now = flags.container().acquire();
/// assert!(now.contains("dark-mode")); // `HashSet::contains`, through `Versioned`'s `Deref`
/// assert_eq!(Versioned::seq(&now), n);
/// ```
pub struct Versioned<T> {
    value: T,
    /// The last batch applied to `value`; [`UNSYNCED`] for a version new from the factory.
    seq: u64,
    /// Where the drop reports `seq`, so that the writer stops keeping the log for this
    /// version (`log/graveyard.rs`).
    #[allow(clippy::disallowed_types)] // std's `Arc`, as the container's: see the import.
    graveyard: Arc<graveyard::Graveyard>,
}

impl<T> Drop for Versioned<T> {
    fn drop(&mut self) {
        if self.seq != UNSYNCED {
            self.graveyard.bury(self.seq);
        }
    }
}

impl<T> Versioned<T> {
    /// The number of the last batch this version holds: 0 for the writer's initial value,
    /// then what [`OpLog::publish`] returned when it published the version.
    #[must_use]
    pub fn seq(this: &Versioned<T>) -> u64 {
        this.seq
    }
}

impl<T> Deref for Versioned<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> AsRef<T> for Versioned<T> {
    fn as_ref(&self) -> &T {
        &self.value
    }
}

/// Compares the value (not the sequence number) with a plain `T`, so that a guard's value
/// can be checked against one: `assert_eq!(*guard, expected)`.
impl<T: PartialEq> PartialEq<T> for Versioned<T> {
    fn eq(&self, other: &T) -> bool {
        self.value == *other
    }
}

impl<T: fmt::Debug> fmt::Debug for Versioned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Versioned");
        if self.seq == UNSYNCED {
            d.field("seq", &"unsynced");
        } else {
            d.field("seq", &self.seq);
        }
        d.field("value", &self.value).finish()
    }
}

impl<T: fmt::Display> fmt::Display for Versioned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

/// The single writer of an operation-logged container: appends operations and publishes
/// them in batches. See the [module docs](self).
///
/// One writer per container; it is `Send`, so it can move to another thread, and several
/// threads that write share it behind a lock (`Mutex<OpLog<T, O>>`), as with
/// left-right's `WriteHandle`. Readers share [`container`](OpLog::container).
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use std::sync::Arc;
/// use std::thread;
/// use poolswap::oplog::{OpLog, MapOp};
///
/// let mut prices = OpLog::new(BTreeMap::from([("apple", 3)]));
/// let reader = {
///     let prices = Arc::clone(prices.container());
///     thread::spawn(move || {
///         let now = prices.acquire();
///         // Both changes or neither.
///         assert!(now.get("apple") == Some(&3) && !now.contains_key("pear")
///             || now.get("apple") == Some(&4) && now["pear"] == 5);
///     })
/// };
/// prices.extend([MapOp::Insert("apple", 4), MapOp::Insert("pear", 5)]);
/// prices.publish();
/// reader.join().unwrap();
/// ```
pub struct OpLog<T, O> {
    // std's `Arc`: see the import.
    #[allow(clippy::disallowed_types)]
    container: Arc<Container<Versioned<T>>>,
    /// Published operations some tracked version may lack, oldest first, each with its
    /// batch's number. Batches `base + 1 ..= head` are here whole. After them, numbered
    /// `head + 1`: the batch being built (the last `pending` operations), or, after a
    /// publish that panicked and until the next append, the batch it dropped.
    log: Segments<(u64, O)>,
    /// Operations appended since the last publish: the log's last `pending`.
    pending: usize,
    /// The number of the current version's batch.
    head: u64,
    /// Versions numbered `base` or later can be brought up to date from the log.
    base: u64,
    /// Sequence numbers of the versions the writer published that are not current, and of
    /// the extra versions made at build time (`0` each), ascending, one entry per version.
    /// The log keeps what the smallest lacks.
    versions: VecDeque<u64>,
    max_ops: usize,
    /// The most operations an idle version within the log's reach lacks before a publish
    /// catches it up (`log/spare.rs`): [`OpLogBuilder::spare_lag`], at most half of
    /// `max_ops`.
    spare_lag: usize,
    /// The pool's retired list's count of ended passes, read after the last publish
    /// retired its version: unchanged at the next publish, no pass took that version off
    /// the list since (see `publish`'s first step).
    passes_seen: usize,
    /// What the spare's catch-up saw when it last found a reader holding the stalest
    /// version (`log/spare.rs`), to skip the search until something changed.
    spare_missed: Option<spare::SpareMissed>,
    /// Operations no version needs, split off the log's front to be dropped a few per
    /// publish (`log/unneeded.rs`).
    unneeded: Vec<Segments<(u64, O)>>,
    /// Where the versions report their drop (`log/graveyard.rs`).
    #[allow(clippy::disallowed_types)] // std's `Arc`, as the container's: see the import.
    graveyard: Arc<graveyard::Graveyard>,
    stats: OpLogStats,
}

/// The smallest log (pending batch included) for which `publish` reclaims ahead of the
/// pool's getter even when the pass needs the heavy barrier (`membarrier`, ~1-10 µs): about
/// what applying that many operations once more costs on a large table (~100-500 ns each).
/// The log holds the batch and what the idle version the getter would take instead lacks.
const HEAVY_PASS_OPS: usize = 32;

/// Whether a version numbered `seq` lacks more than a log whose oldest batch follows
/// `base` holds (or is new from the factory, or was left half-written by a panic): only a
/// full copy brings it up to date.
fn out_of_reach(seq: u64, base: u64) -> bool {
    seq == UNSYNCED || seq < base
}

/// How many operations a log keeps by default: see [`OpLogBuilder::max_ops`].
pub const DEFAULT_MAX_OPS: usize = 1 << 16;

/// How many operations an idle spare version may lack by default before publishes catch it
/// up: see [`OpLogBuilder::spare_lag`].
pub const DEFAULT_SPARE_LAG: usize = 1 << 10;

impl<T, O> OpLog<T, O>
where
    T: Absorb<O> + Send + Sync + 'static,
{
    /// The container readers share: clone the `Arc` for each reader.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::oplog::{OpLog, VecOp};
    ///
    /// let mut w = OpLog::new(vec![1]);
    /// let readers = Arc::clone(w.container());
    /// w.append(VecOp::Push(2));
    /// w.publish();
    /// assert_eq!(readers.acquire().len(), 2);
    /// ```
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    pub fn container(&self) -> &Arc<Container<Versioned<T>>> {
        &self.container
    }

    /// Adds `op` to the batch the next [`publish`](OpLog::publish) applies. Readers
    /// see nothing of it before then. Allocates only when the batch is larger than any
    /// before.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{OpLog, VecOp};
    ///
    /// let mut w = OpLog::new(Vec::<u8>::new());
    /// w.append(VecOp::Push(1));
    /// assert_eq!(w.pending(), 1);
    /// assert!(w.container().acquire().is_empty());
    /// ```
    pub fn append(&mut self, op: O) {
        if self.pending == 0 {
            self.drop_failed_batch();
        }
        self.log.push_back((self.head + 1, op));
        self.pending += 1;
    }

    /// Adds every operation of `ops`, in order, to the next batch.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{OpLog, VecOp};
    ///
    /// let mut w = OpLog::new(Vec::new());
    /// w.extend([VecOp::Push('a'), VecOp::Push('b')]);
    /// w.publish();
    /// assert_eq!(*w.container().acquire(), vec!['a', 'b']);
    /// ```
    pub fn extend(&mut self, ops: impl IntoIterator<Item = O>) {
        if self.pending == 0 {
            self.drop_failed_batch();
        }
        let seq = self.head + 1;
        for op in ops {
            self.log.push_back((seq, op));
            self.pending += 1;
        }
    }

    /// Operations appended since the last publish.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{OpLog, VecOp};
    ///
    /// let mut w = OpLog::new(vec![0]);
    /// w.append(VecOp::Clear);
    /// assert_eq!(w.pending(), 1);
    /// w.publish();
    /// assert_eq!(w.pending(), 0);
    /// ```
    #[must_use]
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Publishes the pending operations as one batch: readers that acquire after this
    /// returns see all of them, readers before see none. Returns the batch's number (what
    /// [`Versioned::seq`] of the new version says); with nothing pending, publishes nothing
    /// and returns the current number.
    ///
    /// Costs *(lag + 1) × k* operation applications and one [`Container::update`], or a
    /// full copy when no recycled version is within the log's reach (module docs, "What it
    /// costs"). Never waits for a reader.
    ///
    /// # Panics
    ///
    /// If an operation's [`Absorb`] method panics, the panic propagates and nothing is
    /// published: readers keep the previous version, the pending batch is dropped, and the
    /// version being prepared goes back to the pool marked for a full copy. The writer
    /// stays usable.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{Versioned, OpLog, MapOp};
    ///
    /// let mut w = OpLog::new(HashMap::new());
    /// w.append(MapOp::Insert("k", 1));
    /// assert_eq!(w.publish(), 1);
    /// assert_eq!(w.publish(), 1); // nothing pending
    /// w.append(MapOp::Insert("k", 2));
    /// assert_eq!(w.publish(), 2);
    /// let now = w.container().acquire();
    /// assert_eq!((now["k"], Versioned::seq(&now)), (2, 2));
    /// ```
    pub fn publish(&mut self) -> u64 {
        if self.pending == 0 {
            return self.head;
        }
        self.forget_dropped_versions();
        let OpLog {
            container,
            log,
            pending,
            head,
            base,
            versions,
            max_ops,
            passes_seen,
            unneeded,
            stats,
            ..
        } = self;
        // Zeroed for the call: if an operation panics, the batch is dropped (by the next
        // append) rather than left to panic again at the next publish.
        let batch = std::mem::take(pending);
        // The version the last publish retired (lag 1) is usually still on the retired list,
        // its reader long gone: reclaim it first, so that the pool hands it out rather than
        // an older idle one (module docs, "What it costs": when this pass runs).
        let list = container.pool().retired_list();
        if list.has_pending() && list.passes_ended() == *passes_seen {
            // Worth a heavy barrier when the batch is large, or when the log is: without the
            // pass, the writer would take the idle version, which lacks what the log holds.
            list.reclaim_unless_heavy(log.len() >= HEAVY_PASS_OPS);
        }
        // The freshest version back from the readers, else whatever the pool has.
        let mut next = container
            .pool()
            .get_returned()
            .unwrap_or_else(|| container.get_new());
        // One that lacks more than the log holds (a reader held it past the log's bound, and
        // a reclamation just returned it) would cost a full copy here: another idle version
        // within reach is taken instead, and this one kept as a victim. If none is idle, a
        // pass with the heavy barrier if need be (a few µs against a copy's milliseconds)
        // may return the version the last publish retired.
        if out_of_reach(next.seq, *base) {
            let pool = container.pool();
            let within = spare::take_within_reach(pool, *base, stats).or_else(|| {
                list.reclaim_unless_heavy(true)?;
                spare::take_within_reach(pool, *base, stats)
            });
            if let Some(within) = within {
                Pooled::put_in_depot_as_victim(std::mem::replace(&mut next, within));
                stats.set_aside += 1;
            }
        }
        let had = next.seq;
        if !out_of_reach(had, *base) && had + 1 < *head {
            stats.stale_takes += 1;
        }
        // This version is the writer's now: the log no longer keeps anything for it.
        spare::forget(versions, had);
        // Until it is whole again: should an operation panic, the version goes back to the
        // pool marked for a full copy, not with half a batch applied.
        next.seq = UNSYNCED;
        let from = if out_of_reach(had, *base) {
            // A full copy of the current version, then whatever it lacks. The current
            // version is normally at `head`; it is older only if someone published into
            // the container around the writer (module docs).
            let current = container.acquire();
            next.value.sync_from(&current.value);
            stats.full_syncs += 1;
            current.seq
        } else {
            had
        };
        // Replay (from, head]. Operations of batches no other version lacks (numbered at
        // most `others`: every other version holds them) are applied for the last time, by
        // value, and leave the log; those this version holds too (numbered at most `from`)
        // are dropped, or set apart to be dropped a few per publish if there are many.
        let others = versions.front().copied().unwrap_or(*head);
        if log.len() > unneeded::DROP_AT_ONCE {
            let n = lack_start(log, from.min(others));
            unneeded::set_apart(log, base, unneeded, n);
        }
        while let Some(&(n, _)) = log.front() {
            if n > others {
                break;
            }
            let (n, op) = log.pop_front().expect("front was just seen");
            if n > from {
                next.value.absorb_owned(op);
                stats.applied += 1;
            }
            *base = (*base).max(n);
        }
        // What is left is numbered above `others`, the new batch (`head + 1`) last. The
        // version lacks all of it unless it is fresher than another version (`from >
        // others`); then its lack usually begins a batch or two from the end.
        let start = lack_start(log, from);
        // The new batch among them: every other version lacks it, so it is applied by
        // reference and stays logged.
        next.value
            .absorb_all(log.range(start..log.len()).map(|(_, op)| op));
        stats.applied += (log.len() - start) as u64;
        stats.appended += batch as u64;
        let seq = *head + 1;
        next.seq = seq;
        container.update(next);
        // After the update: a pass that ends from now on may have taken the version it
        // retired off the list.
        *passes_seen = list.passes_ended();
        // The version just replaced (numbered `head`) may come back from the pool.
        versions.push_back(*head);
        *head = seq;
        stats.publishes += 1;
        // Bound the log: drop the oldest batches (never the current one), and forget the
        // versions that lacked them; those get a full copy if they come back.
        while log.len() > *max_ops {
            match log.front() {
                Some(&(n, _)) if n < seq => {
                    log.pop_front();
                    stats.truncated += 1;
                    *base = (*base).max(n);
                }
                _ => break,
            }
        }
        while versions.front().is_some_and(|&v| v < *base) {
            versions.pop_front();
        }
        // Some version may lag more than the spare lag: perhaps an idle one.
        self.catch_up_spare(batch);
        // About twice what the catch-up replays: the operations set apart go faster than
        // the log grows.
        if !self.unneeded.is_empty() {
            self.drop_unneeded(4 * batch + 256);
        }
        seq
    }

    /// What the writer did so far, and the log's size now.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{OpLog, VecOp};
    ///
    /// let mut w = OpLog::new(Vec::new());
    /// for i in 0..10 {
    ///     w.append(VecOp::Push(i));
    ///     w.publish();
    /// }
    /// let stats = w.stats();
    /// assert_eq!((stats.publishes, stats.appended), (10, 10));
    /// assert!(stats.full_syncs >= 1); // the pool's first extra version
    /// ```
    #[must_use]
    pub fn stats(&self) -> OpLogStats {
        OpLogStats {
            log_len: self.logged(),
            versions: self.versions.len(),
            dropping: self.unneeded_len(),
            ..self.stats
        }
    }
}

/// Where the operations numbered past `from` begin in `log` (numbered in order). Tries the
/// front (a version that lacks the whole log), then gallops back from the end (steps of 1,
/// 2, 4, ...) and searches the last stretch: a version the last publish retired lacks a
/// batch or two, and the log behind them may hold tens of thousands of operations that an
/// idle spare lacks. Against a binary search of the whole log: ~140 instructions less per
/// publish at k = 1 (`publish_loop`, callgrind), and no cache miss per step in a long log.
fn lack_start<O>(log: &Segments<(u64, O)>, from: u64) -> usize {
    if log.front().map_or(true, |&(n, _)| n > from) {
        return 0;
    }
    // Everything before `lo` is numbered at most `from`, everything from `hi` on past it.
    let (mut lo, mut hi) = (1, log.len());
    let mut width = 1;
    while lo < hi {
        let probe = hi.saturating_sub(width).max(lo);
        if log[probe].0 <= from {
            lo = probe + 1;
            break;
        }
        hi = probe;
        width *= 2;
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if log[mid].0 <= from {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl<T, O> OpLog<T, O> {
    /// Drops what a publish that panicked left at the log's end (operations numbered past
    /// `head` that are not pending).
    fn drop_failed_batch(&mut self) {
        let head = self.head;
        while self.log.back().is_some_and(|&(n, _)| n > head) {
            self.log.pop_back();
        }
    }

    /// Operations in the log that some version may lack: neither pending nor dropped.
    fn logged(&self) -> usize {
        let head = self.head;
        self.log
            .iter()
            .rev()
            .skip_while(|&&(n, _)| n > head)
            .count()
    }
}

impl<T, O> fmt::Debug for OpLog<T, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpLog")
            .field("seq", &self.head)
            .field("pending", &self.pending)
            .field("log_len", &self.logged())
            .field("versions", &self.versions.len())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use proptest::prelude::*;

    use super::{lack_start, Segments};

    proptest! {
        #![proptest_config(super::proptest_config::config())]

        /// `lack_start` finds what a binary search of the whole log finds, in logs of
        /// batches numbered in order (several operations a batch, some batches empty),
        /// for every `from` from before the first to past the last, and whatever the
        /// log's split into segments (128 elements a segment here, the first one partly
        /// popped).
        #[test]
        fn lack_start_is_the_partition_point(
            sizes in proptest::collection::vec(0usize..5, 0..60),
            rotate in 0usize..64,
        ) {
            let mut log = Segments::default();
            for _ in 0..rotate {
                log.push_back((0, [0u8; 248]));
            }
            for _ in 0..rotate {
                log.pop_front();
            }
            for (batch, &size) in sizes.iter().enumerate() {
                for _ in 0..size {
                    log.push_back((batch as u64 + 1, [0u8; 248]));
                }
            }
            for from in 0..=sizes.len() as u64 + 1 {
                let expected = log.iter().take_while(|&&(n, _)| n <= from).count();
                prop_assert_eq!(lack_start(&log, from), expected, "from {}", from);
            }
        }
    }
}
