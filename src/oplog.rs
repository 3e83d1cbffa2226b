//! Publishing operations instead of whole versions: the op log.
//!
//! A [`Container`] replaces a whole version per update: for a table that changes a few
//! entries at a time, a full copy (or a rebuild) per update. An [`OpLog`] is the single
//! writer of a container that publishes *operations* instead. It keeps the batches of
//! operations it published; to publish a new batch, it takes a version from the
//! container's pool, replays on it the batches that version lacks, applies the new batch,
//! and swaps it in. A publish then costs the operations applied, not the table.
//!
//! Readers hold a [`ReadHandle`] from the writer ([`OpLog::read_handle`]): it
//! [`acquire`](ReadHandle::acquire)s and [`subscribe`](ReadHandle::subscribe)s as a
//! [`Container`] does, and cannot publish. A [`Guard`](crate::Guard) on a version derefs
//! (through [`Versioned<T>`]) to `T`, [`Guard::map`](crate::Guard::map) works as for any
//! container, and a reader sees every operation of a batch or none.
//!
//! # Example
//!
//! ```
//! use std::collections::HashMap;
//! use poolswap::oplog::{OpLog, MapOp};
//!
//! let mut routes = OpLog::new(HashMap::from([("/a", "10.0.0.1")]));
//! let table = routes.read_handle(); // what readers share: clone it for each
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
//! Every version carries the number of the last batch it holds ([`Versioned::seq`]). The
//! writer keeps, in order, each operation that some version it may get back still lacks,
//! tagged with its batch's number. To publish batch `n`, it:
//!
//! 1. takes a version from the pool: the one the last publish retired, if its readers
//!    have let go (it runs a reclamation pass for it first when that is cheap enough:
//!    see "What it costs"; readers that acquired it just before the last swap are waited
//!    for, at most [`max_wait`](OpLogBuilder::max_wait), 100 µs by default), else another
//!    idle one. The pool hands out only versions no reader holds, so the writer never
//!    writes a version a reader can see. If readers hold every version the op log can
//!    bring up to date, it waits for one, at most as long as a full copy takes, and then
//!    makes one (see "Full copies" below);
//! 2. brings it up to batch `n - 1`: replays the operations it lacks, or, if the op log no
//!    longer holds them all or the version is new from the pool's factory, first copies
//!    the current version whole ([`Absorb::sync_from`]);
//! 3. applies batch `n`, keeps it, and publishes the version with [`Container::update`]:
//!    readers see the whole batch at the swap.
//!
//! The last version to apply an operation applies it *by value*
//! ([`Absorb::absorb_owned`]: it takes the operation's data instead of a clone), and the op
//! log drops it; the others apply it by reference ([`Absorb::absorb`]).
//!
//! The constructor makes three versions ([`OpLogBuilder::versions`]). With readers that
//! let go between publishes, two of them alternate. A reader that holds a guard across a
//! publish makes the writer take the third, the *spare*, which otherwise waits idle while
//! the op log keeps what it lacks. Once a spare lacks more than three batches (per spare,
//! and at most 1,024 operations or half of [`max_ops`](OpLogBuilder::max_ops)), a publish
//! replays the oldest three on it, so that it never falls out of the op log's reach. Past
//! [`max_ops`](OpLogBuilder::max_ops) operations, the oldest are dropped, and a version
//! that lacked them (a reader held it that long) gets a full copy if a publish must take
//! it.
//!
//! This is left-right's operation log (Jon Gjengset's `left-right` crate, its `Absorb`
//! trait), generalised from two copies to the pool's versions, and without its wait: where
//! left-right's writer waits until every reader has left the copy it writes next, this one
//! writes a copy that no reader holds, because the pool only returns versions after their
//! last reader.
//!
//! # What it costs
//!
//! Per publish of a batch of *k* operations on a version that lacks *lag* batches:
//!
//! - **Applications**: *(lag + 1) × k*. With readers that let go between publishes, lag is
//!   1, and each operation is applied twice on the publish path (as in left-right).
//!   Readers that hold guards across publishes add a third application of each operation,
//!   on the spare, three batches at a time on about a third of the publishes.
//!   [`OpLog::catch_up`] moves that work off the publish path; [`OpLogStats::applied`]
//!   counts it all.
//! - **Waiting**: while readers still hold the version the last publish retired, up to
//!   [`max_wait`](OpLogBuilder::max_wait) of spinning, a scan of the hazard slots per look
//!   and a reclamation pass once no slot shows the version; after a wait that timed out,
//!   the next publishes skip it (1, then 2, 4, ... up to 64). While readers hold every
//!   version within the op log's reach (more reader threads than versions, some
//!   descheduled in the middle of a read), up to the time the last full copy took,
//!   yielding, with a pass per look: the rent-or-buy rule, which never costs
//!   more than twice the better of waiting and copying.
//! - **Synchronisation**: one [`Container::update`] (a swap, and a push on the retired
//!   list under its lock), one take from the pool, and at most one reclamation pass
//!   besides the wait's
//!   ([`reclaim`](crate::reclaim()): a barrier and a scan of the hazard slots). The pass runs
//!   when the version the last publish retired waits on the retired list and no pass
//!   ended since, and either the pass needs only a fence or the op log holds at least 32
//!   operations (worth a `membarrier`); otherwise the pool's getter runs one only when
//!   nothing is idle. Deciding costs a relaxed and an acquire load, and the list's lock
//!   when something is retired.
//! - **Allocations**: none of the op log's own once it reached its size: it stores
//!   operations in segments of 32 KiB and keeps up to 8 emptied ones for reuse. Applying
//!   an operation allocates what the operation does: the ready-made ones ([`MapOp`],
//!   [`SetOp`], [`VecOp`]) overwrite values in place with `clone_from`, a map's replay
//!   reuses a removed entry's buffers for a later insert ([`Absorb::absorb_all`]), a
//!   [`Recycled`](crate::Recycled) map takes buffers from its free lists, and a
//!   [`SharedMap`] reuses its `Arc`s.
//! - **Full copies** (O(n), on the publishing thread; [`OpLogStats::full_syncs`]): none
//!   while an idle version is within the op log's reach, nor while one comes back within
//!   a full copy's time. One when readers hold every version within reach longer than
//!   that (the pool's factory then makes a version), or when the only one idle is a
//!   version a reader held past [`max_ops`](OpLogBuilder::max_ops) operations. An idle
//!   spare never needs one. With a zero `max_wait`, a publish copies at once instead of
//!   waiting.
//! - **Memory**: a whole `T` per version (three, made by the constructor; one more while
//!   readers hold every version longer than a full copy takes, dropped once it is idle
//!   again rather than kept up to date), and the op log: up to
//!   [`max_ops`](OpLogBuilder::max_ops) operations while a reader holds a version, about
//!   three batches per spare otherwise. [`SharedMap`] has the versions share one copy of
//!   each value. Idle versions stay in the pool until its `trim`
//!   ([`Pool::spawn_trimmer`](crate::Pool::spawn_trimmer) runs it off the publish path);
//!   the operations only a dropped version lacked are then dropped a bounded number per
//!   publish.
//! - **Growth**: a version grows as `T` does, once per version. Every version copies the
//!   initial value's capacity (`clone_from`), so a map under churn that starts with room
//!   for twice its entries (`reserve`) is rehashed in place, rarely, instead of grown on a
//!   publish.

use std::collections::VecDeque;
use std::fmt;
use std::ops::Deref;
use std::time::Duration;

// The readers' handle shares the container through std's `Arc`, not the facade's: it only
// shares it, and the container's own atomics are the facade's (loom's under loom).
#[allow(clippy::disallowed_types)]
use std::sync::Arc;

use crate::Container;

use segments::Segments;

mod drop_reports;
mod dropping;
mod op_log_builder;
mod ops;
mod publish;
mod read_handle;
mod segments;
mod shared_map;
mod spare;
mod stats;
mod wait;

pub use self::op_log_builder::OpLogBuilder;
pub use self::ops::{MapOp, SetOp, VecOp};
pub use self::read_handle::ReadHandle;
pub use self::shared_map::{ArcPool, ArcPoolStats, SharedMap};
pub use self::stats::OpLogStats;

/// The property tests' configuration: no failure file (Miri's isolation has no working
/// directory to write one in), 256 cases, 4 under Miri, where each case is interpreted.
#[cfg(all(test, not(loom)))]
fn proptest_config() -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}

/// An operation type `O` that a `T` can apply to itself: how an [`OpLog`] changes its
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
/// assert_eq!(hits.read_handle().acquire().0, 5);
/// hits.append(HitsOp::Reset);
/// hits.publish();
/// assert_eq!(hits.read_handle().acquire().0, 0);
/// ```
pub trait Absorb<O> {
    /// Applies `op` to this version, which is not the last one to apply it.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{Absorb, VecOp};
    ///
    /// let mut version = vec![String::from("an old value")];
    /// let op = VecOp::Set(0, String::from("new"));
    /// version.absorb(&op); // `clone_from` into the element's own buffer
    /// assert_eq!(version, ["new"]);
    /// assert!(version[0].capacity() >= "an old value".len());
    /// assert_eq!(op, VecOp::Set(0, String::from("new"))); // kept for the other versions
    /// ```
    fn absorb(&mut self, op: &O);

    /// Applies `op` for the last time: it may move `op`'s data into `self` instead of
    /// cloning it. Defaults to [`absorb`](Absorb::absorb).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{Absorb, VecOp};
    ///
    /// let mut version = vec![String::from("old")];
    /// let value = String::from("moved, not cloned");
    /// let buffer = value.as_ptr();
    /// version.absorb_owned(VecOp::Set(0, value));
    /// assert_eq!(version[0].as_ptr(), buffer); // the operation's own buffer
    /// ```
    fn absorb_owned(&mut self, op: O) {
        self.absorb(&op);
    }

    /// Applies `ops` in order, none of them for the last time: the same as
    /// [`absorb`](Absorb::absorb) on each, which is what it defaults to. A type may
    /// override it to share work across the operations of a replay: `HashMap` under
    /// [`MapOp`] reuses the key and value an operation removed for a later insert of a new
    /// key (`clone_from` into their buffers, up to 8 removed entries kept on the stack)
    /// instead of freeing them and allocating the insert's clones.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{Absorb, MapOp};
    ///
    /// let batch = [
    ///     MapOp::Remove("/old".to_string()),
    ///     MapOp::Insert("/new".to_string(), "10.0.0.2".to_string()),
    /// ];
    /// let mut version = HashMap::from([("/old".to_string(), "10.0.0.1".to_string())]);
    /// let buffer = version["/old"].as_ptr();
    /// version.absorb_all(&batch);
    /// assert_eq!(version, HashMap::from([("/new".to_string(), "10.0.0.2".to_string())]));
    /// assert_eq!(version["/new"].as_ptr(), buffer); // the removed value's, written again
    /// ```
    fn absorb_all<'a, I>(&mut self, ops: I)
    where
        I: IntoIterator<Item = &'a O>,
        O: 'a,
    {
        for op in ops {
            self.absorb(op);
        }
    }

    /// Makes `self` equal to `src`: the full copy for a version the op log cannot bring up
    /// to date (for std's collections, `clone_from`, which keeps `self`'s buffers where it
    /// can).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{Absorb, VecOp};
    ///
    /// let current = vec![1, 2, 3];
    /// let mut stale: Vec<i32> = Vec::with_capacity(64);
    /// let buffer = stale.as_ptr();
    /// Absorb::<VecOp<i32>>::sync_from(&mut stale, &current);
    /// assert_eq!(stale, current);
    /// assert_eq!(stale.as_ptr(), buffer); // its own buffer, kept
    /// ```
    fn sync_from(&mut self, src: &Self);
}

/// Sequence number of a version the writer never synchronised (new from the factory).
const UNSYNCED: u64 = u64::MAX;

/// A version of an [`OpLog`]'s container: a `T` and the number of the last batch it
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
/// let now = flags.read_handle().acquire();
/// assert!(now.contains("dark-mode")); // `HashSet::contains`, through `Versioned`'s `Deref`
/// assert_eq!(Versioned::seq(&now), n);
/// ```
pub struct Versioned<T> {
    value: T,
    /// The last batch applied to `value`; [`UNSYNCED`] for a version new from the factory.
    seq: u64,
    /// Where the drop reports `seq`, so that the writer stops keeping operations for this
    /// version (`oplog/drop_reports.rs`).
    #[allow(clippy::disallowed_types)] // std's `Arc`, as the container's: see the import.
    drop_reports: Arc<drop_reports::DropReports>,
}

impl<T> Drop for Versioned<T> {
    fn drop(&mut self) {
        if self.seq != UNSYNCED {
            self.drop_reports.report(self.seq);
        }
    }
}

impl<T> Versioned<T> {
    /// The number of the last batch this version holds: 0 for the writer's initial value,
    /// then what [`OpLog::publish`] returned when it published the version.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{MapOp, OpLog, Versioned};
    ///
    /// let mut w = OpLog::new(HashMap::new());
    /// assert_eq!(Versioned::seq(&w.read_handle().acquire()), 0); // the initial value
    /// w.append(MapOp::Insert("a", 1));
    /// let first = w.publish();
    /// w.append(MapOp::Insert("b", 2));
    /// let second = w.publish();
    /// assert!(second > first);
    /// assert_eq!(Versioned::seq(&w.read_handle().acquire()), second);
    /// ```
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

/// The single writer of a container whose updates are operations: appends operations and
/// publishes them in batches. See the [module docs](self).
///
/// One writer per container; it is `Send`, so it can move to another thread, and several
/// threads that write share it behind a lock (`Mutex<OpLog<T, O>>`), as with
/// left-right's `WriteHandle`. Readers hold a [`ReadHandle`] each
/// ([`read_handle`](OpLog::read_handle)), which cannot publish. It is
/// `UnwindSafe` and `RefUnwindSafe` when `T` and `O` are: a publish that panics leaves it
/// usable ([`publish`](OpLog::publish), "Panics").
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use std::thread;
/// use poolswap::oplog::{OpLog, MapOp};
///
/// let mut prices = OpLog::new(BTreeMap::from([("apple", 3)]));
/// let reader = {
///     let prices = prices.read_handle();
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
    /// The op log itself: published operations some listed version may lack, oldest first,
    /// each with its batch's number. Batches `base + 1 ..= head` are here whole. After
    /// them, numbered `head + 1`: the batch being built (the last `pending` operations),
    /// or, after a publish that panicked and until the next append, the batch it dropped.
    log: Segments<(u64, O)>,
    /// Operations appended since the last publish: the op log's last `pending`.
    pending: usize,
    /// The number of the current version's batch.
    head: u64,
    /// Versions numbered `base` or later can be brought up to date from `log`.
    base: u64,
    /// Sequence numbers of the versions the writer published that are not current, and of
    /// the extra versions made at build time (`0` each), ascending, one entry per version.
    /// `log` keeps what the smallest lacks.
    versions: VecDeque<u64>,
    /// How many versions within reach the writer keeps, the current one included: those
    /// built ([`OpLogBuilder::versions`]), at least two. One made beyond them (readers held
    /// every version) is dropped once idle rather than caught up (`oplog/spare.rs`).
    keep: usize,
    max_ops: usize,
    /// The most operations an idle version within reach lacks before a publish catches it
    /// up (`oplog/spare.rs`): [`DEFAULT_SPARE_LAG`], at most half of `max_ops`.
    spare_lag: usize,
    /// The pool's retired list's count of ended passes, read after the last publish
    /// retired its version: unchanged at the next publish, no pass took that version off
    /// the list since (see `publish`'s first step).
    passes_seen: usize,
    /// What the spare's catch-up saw when it last found a reader holding the stalest
    /// version (`oplog/spare.rs`), to skip the search until something changed.
    spare_missed: Option<spare::SpareMissed>,
    /// Operations no version needs, split off the front of `log` to be dropped a bounded
    /// number per publish (`oplog/dropping.rs`).
    dropping: Vec<Segments<(u64, O)>>,
    /// Where the versions report their drop (`oplog/drop_reports.rs`).
    #[allow(clippy::disallowed_types)] // std's `Arc`, as the container's: see the import.
    drop_reports: Arc<drop_reports::DropReports>,
    /// The longest a publish waits for the version the last publish retired
    /// (`oplog/wait.rs`).
    max_wait: Duration,
    /// Node addresses (only compared) of the version the last publish published and of
    /// the one it retired; 0 for none yet.
    published: usize,
    retired: usize,
    /// Publishes that skip the wait after waits that timed out.
    wait_backoff: wait::Backoff,
    /// How long the last full copy took (at build time, or in a publish): the longest a
    /// publish waits for readers to let go of a version within reach rather than copy one
    /// (`oplog/wait.rs`). Zero if there was none.
    copy_time: Duration,
    stats: OpLogStats,
}

/// The fewest operations in the op log (pending batch included) for which `publish`
/// reclaims ahead of the pool's getter even when the pass needs the heavy barrier
/// (`membarrier`): without the pass the getter would hand out an idle version, which
/// lacks what the op log holds, so the pass saves about that many applications, and a
/// `membarrier` costs about as much as a few dozen applications on a large table.
const HEAVY_PASS_OPS: usize = 32;

/// Whether a version numbered `seq` lacks more than an op log whose oldest batch follows
/// `base` holds (or is new from the factory, or was left half-written by a panic): only a
/// full copy brings it up to date.
fn out_of_reach(seq: u64, base: u64) -> bool {
    seq == UNSYNCED || seq < base
}

/// Versions an op log's constructor makes, the current one included
/// ([`OpLogBuilder::versions`]): the current one, the one the last publish retired (which
/// readers may still hold), and a spare for the publish that finds that one held.
pub(crate) const DEFAULT_VERSIONS: usize = 3;

/// How long a publish waits by default for the version the last publish retired: see
/// [`OpLogBuilder::max_wait`].
pub(crate) const DEFAULT_MAX_WAIT: Duration = Duration::from_micros(100);

/// How many operations the op log keeps by default: see [`OpLogBuilder::max_ops`].
pub(crate) const DEFAULT_MAX_OPS: usize = 1 << 16;

/// How many operations an idle spare version may lack before publishes catch it up, at
/// most (and at most half of [`OpLogBuilder::max_ops`]): `oplog/spare.rs`.
pub(crate) const DEFAULT_SPARE_LAG: usize = 1 << 10;

impl<T, O> OpLog<T, O>
where
    T: Absorb<O> + Send + Sync + 'static,
{
    /// A handle for a reader: it acquires the versions this writer publishes, and cannot
    /// publish. An `Arc` clone (one atomic increment); clone the handle for more readers.
    /// `Send` and `Sync` (`T: Send + Sync` here).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{OpLog, VecOp};
    ///
    /// let mut w = OpLog::new(vec![1]);
    /// let readers = w.read_handle();
    /// w.append(VecOp::Push(2));
    /// w.publish();
    /// assert_eq!(readers.acquire().len(), 2);
    /// ```
    #[must_use]
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    pub fn read_handle(&self) -> ReadHandle<T> {
        ReadHandle::new(Arc::clone(&self.container))
    }

    /// The pool the versions come from and go back to: for its
    /// [`stats`](crate::Pool::stats) and [`trim`](crate::Pool::trim) (or a
    /// [`spawn_trimmer`](crate::Pool::spawn_trimmer)). No atomic operation; a reader
    /// cannot reach it.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{OpLog, VecOp};
    ///
    /// let w: OpLog<Vec<u8>, VecOp<u8>> = OpLog::builder(Vec::new()).versions(3).build();
    /// assert_eq!(w.pool().stats().created, 3); // made at build time
    /// ```
    #[must_use]
    pub fn pool(&self) -> &crate::Pool<Versioned<T>> {
        self.container.pool()
    }

    /// The container itself, for the loom models (`tests/loom_oplog.rs`), which put a
    /// [`Cache`](crate::Cache) on it; not in users' builds, where the container is
    /// reached only through a [`ReadHandle`], which cannot publish.
    #[cfg(loom)]
    #[doc(hidden)]
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    pub fn loom_container(&self) -> &Arc<Container<Versioned<T>>> {
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
    /// assert!(w.read_handle().acquire().is_empty());
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
    /// assert_eq!(*w.read_handle().acquire(), vec!['a', 'b']);
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
    /// Costs *(lag + 1) × k* operation applications, one [`Container::update`], a
    /// reclamation pass or a few, and a full copy when no version the pool hands out is
    /// within the op log's reach (module docs, "What it costs"). Waits for readers of the
    /// version the last publish retired at most [`OpLogBuilder::max_wait`].
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
    /// let now = w.read_handle().acquire();
    /// assert_eq!((now["k"], Versioned::seq(&now)), (2, 2));
    /// ```
    pub fn publish(&mut self) -> u64 {
        if self.pending == 0 {
            return self.head;
        }
        self.forget_dropped_versions();
        // Zeroed for the call: if an operation panics, the batch is dropped (by the next
        // append) rather than left to panic again at the next publish.
        let batch = std::mem::take(&mut self.pending);
        // Take a version, catch it up, apply the batch, swap it in (`publish.rs`).
        let seq = self.publish_batch(batch);
        // Some version may lag more than the spare lag: perhaps an idle one.
        self.catch_up_spare(batch);
        // About twice what the catch-up replays: the operations set apart go faster than
        // the op log grows.
        if !self.dropping.is_empty() {
            self.drop_some(4 * batch + 256);
        }
        seq
    }

    /// What the writer did so far, and how many operations it holds now.
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
    /// assert_eq!(stats.full_syncs, 0); // the versions were copied at build time
    /// assert!(stats.applied >= 2 * stats.appended); // by two versions at least
    /// ```
    #[must_use]
    pub fn stats(&self) -> OpLogStats {
        OpLogStats {
            ops_held: self.ops_held(),
            versions: self.versions.len(),
            dropping: self.dropping_len(),
            ..self.stats
        }
    }
}

/// Runs `f` and returns how long it took; zero under loom, whose models count looks, not
/// time (`oplog/wait.rs`).
fn timed(f: impl FnOnce()) -> Duration {
    #[cfg(not(loom))]
    {
        let start = std::time::Instant::now();
        f();
        start.elapsed()
    }
    #[cfg(loom)]
    {
        f();
        Duration::ZERO
    }
}

/// Where the operations numbered past `from` begin in `log` (numbered in order). Tries the
/// front (a version that lacks them all), then gallops back from the end (steps of 1, 2,
/// 4, ...) and searches the last stretch: the version the last publish retired lacks a
/// batch or two, while `log` may hold up to `max_ops` operations for a version a reader
/// holds. O(log d) for a version that lacks the last d operations, where a binary search
/// of the whole log is O(log len) and misses the cache at each step.
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
    /// Drops what a publish that panicked left at the op log's end (operations numbered
    /// past `head` that are not pending).
    fn drop_failed_batch(&mut self) {
        let head = self.head;
        while self.log.back().is_some_and(|&(n, _)| n > head) {
            self.log.pop_back();
        }
    }

    /// Operations in the op log that some version may lack: neither pending nor left by a
    /// publish that panicked.
    fn ops_held(&self) -> usize {
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
            .field("ops_held", &self.ops_held())
            .field("versions", &self.versions.len())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use proptest::prelude::*;

    use super::{lack_start, Segments};

    proptest! {
        #![proptest_config(super::proptest_config())]

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
