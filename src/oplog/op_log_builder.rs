//! Building an [`OpLog`]: [`OpLogBuilder`]'s options (the op log's bound, the pool's idle
//! bound, versions made up front) and the writer's constructors.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

// std's `Arc`, as in `oplog.rs`: the container that the readers' handles share.
#[allow(clippy::disallowed_types)]
use std::sync::Arc;

use super::drop_reports::DropReports;
use super::{
    Absorb, OpLog, OpLogStats, Segments, Versioned, DEFAULT_MAX_OPS, DEFAULT_MAX_WAIT,
    DEFAULT_SPARE_LAG, DEFAULT_VERSIONS, UNSYNCED,
};
use crate::{Container, Pool};

/// Configures an [`OpLog`]; see [`OpLog::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct OpLogBuilder<T> {
    init: T,
    max_ops: usize,
    max_idle: Option<usize>,
    versions: usize,
    max_wait: Duration,
}

impl<T> OpLogBuilder<T>
where
    T: Default + Send + Sync + 'static,
{
    /// The most operations the op log keeps for versions that lack them (default 65,536).
    /// Past it, the oldest are dropped, and a version that still lacked them is copied
    /// whole ([`Absorb::sync_from`]) when it next comes back: a bound on the op log's
    /// memory, at the price of a full copy after a reader held a version across that many
    /// operations. The current batch is always kept whole, even when larger than the bound.
    ///
    /// Half of it (at most 1,024 operations) also bounds how far an idle spare version may
    /// fall behind before publishes catch it up (module docs, "How it works").
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{OpLog, MapOp};
    ///
    /// let mut w = OpLog::builder(HashMap::new()).max_ops(1_000).build();
    /// w.append(MapOp::Insert(1, "one"));
    /// w.publish();
    /// # let _: &OpLog<_, MapOp<i32, &str>> = &w;
    /// ```
    pub fn max_ops(mut self, ops: usize) -> Self {
        self.max_ops = ops;
        self
    }

    /// The most idle versions the container's pool keeps (default: the pool's adaptive idle bound); see
    /// [`PoolBuilder::max_idle`](crate::PoolBuilder::max_idle). A version dropped for it
    /// is simply not reused.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{OpLog, MapOp};
    ///
    /// let w = OpLog::<_, MapOp<u32, u32>>::builder(HashMap::new()).max_idle(4).build();
    /// assert_eq!(w.pool().stats().max_idle, 4);
    /// ```
    pub fn max_idle(mut self, n: usize) -> Self {
        self.max_idle = Some(n);
        self
    }

    /// How many versions to make at build time, the initial one included (default 3):
    /// each extra one is a full copy of `init` ([`Absorb::sync_from`]), made here rather
    /// than on a publish. A writer with readers that each hold one guard at a time
    /// circulates three: the current version, the one the last publish retired (readers
    /// that acquired it just before the swap may still hold it), and a spare for the
    /// publish that finds that one held past [`max_wait`](OpLogBuilder::max_wait).
    ///
    /// A publish never makes a version while the op log can bring an idle one up to date.
    /// When readers hold every version within reach, it waits for one to come back as long
    /// as the slowest of these copies took (at least `max_wait`), and only then makes a new
    /// one from the pool's factory and copies the current version into it, on the
    /// publishing thread (O(n); [`OpLogStats::full_syncs`]). The writer keeps `n` versions
    /// (at least two): one made so is dropped once it is idle again (counted in the pool's
    /// [`PoolStats::trimmed`](crate::PoolStats::trimmed)), rather than kept up to date at
    /// the cost of one more application of every operation. So with fewer versions built,
    /// busy readers cost waits, and with more, memory.
    ///
    /// A reader that holds a guard for long (past [`max_ops`](OpLogBuilder::max_ops)
    /// operations) takes its version out of circulation, and out of the op log's reach: the
    /// other two alternate, and the first publish that then finds both held waits, then
    /// copies. With four versions, none does, at the price of each operation being applied
    /// about once more.
    ///
    /// Costs `n - 1` full copies and their memory here. The op log keeps what these
    /// versions lack until the writer takes them, within [`max_ops`](OpLogBuilder::max_ops),
    /// and the spare is caught up on about a third of the publishes (module docs, "How it
    /// works"): each operation is applied three times with three versions or more, twice
    /// with two.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{OpLog, MapOp};
    ///
    /// let mut w = OpLog::builder(HashMap::from([(1, "one")])).versions(3).build();
    /// assert_eq!(w.pool().stats().idle, 2);
    /// for i in 2..100 {
    ///     w.append(MapOp::Insert(i, "more"));
    ///     w.publish();
    /// }
    /// assert_eq!(w.stats().full_syncs, 0); // no publish copied the whole map
    /// ```
    pub fn versions(mut self, n: usize) -> Self {
        self.versions = n;
        self
    }

    /// The longest a publish waits for the version the previous publish retired (default
    /// 100 µs; zero: never waits). Readers that acquired that version just before the swap
    /// let go of it within a lookup's time; while one holds it, the publish spins, looks at
    /// the hazard slots, and runs a reclamation pass (a barrier and a scan of the hazard
    /// slots) once no slot shows the version, until the version is back or `wait` has
    /// passed. Then it writes that version, which lacks one batch: each operation is
    /// applied twice, as in left-right. Past `wait` it takes another idle version within
    /// the op log's reach (the spare, which lacks more). [`OpLogStats::waited`] and
    /// [`OpLogStats::wait_timeouts`] count the waits.
    ///
    /// After a wait that timed out, the next publish skips the wait, then the next two
    /// after another, doubling up to 64: a reader that holds its guards for long costs one
    /// publish in 64 the whole wait.
    ///
    /// If readers hold every version within reach, the publish waits longer, for any of
    /// them, yielding between looks: up to the time the last full copy took (at least
    /// `wait`), then it copies one whole (see [`versions`](OpLogBuilder::versions)). A
    /// publish thus waits at most `wait` while a version within reach is idle, and at most
    /// about a full copy's time before it pays for one; unlike left-right's and flashmap's
    /// writers, which wait for readers without a bound. With `wait` zero, it never waits
    /// and copies at once. The copies timed are those the constructor makes, of `init`,
    /// and those publishes make: a writer whose `init` is empty and grows through its
    /// operations waits only `wait` before its first copy, which then sets the time.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::time::Duration;
    /// use poolswap::oplog::{OpLog, MapOp};
    ///
    /// let mut w = OpLog::builder(HashMap::new()).max_wait(Duration::ZERO).build();
    /// w.append(MapOp::Insert(1, "one"));
    /// w.publish();
    /// assert_eq!(w.stats().waited + w.stats().wait_timeouts, 0); // never waits
    /// ```
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.max_wait = wait;
        self
    }

    /// Makes the writer; its container holds `init` as batch 0.
    ///
    /// # Panics
    ///
    /// If [`Absorb::sync_from`] panics while it makes the extra
    /// [`versions`](OpLogBuilder::versions).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use poolswap::oplog::{MapOp, OpLog, Versioned};
    ///
    /// let mut w = OpLog::builder(BTreeMap::from([("a", 1)])).versions(2).build();
    /// let table = w.read_handle(); // what readers share
    /// assert_eq!(Versioned::seq(&table.acquire()), 0); // `init` is batch 0
    /// assert_eq!(table.acquire()["a"], 1);
    /// assert_eq!(w.pool().stats().idle, 1); // the second version, a copy of `init`
    ///
    /// w.append(MapOp::Insert("b", 2));
    /// w.publish();
    /// assert_eq!(table.acquire()["b"], 2);
    /// ```
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    pub fn build<O>(self) -> OpLog<T, O>
    where
        T: Absorb<O>,
    {
        let drop_reports = Arc::new(DropReports::new());
        let reports = Arc::clone(&drop_reports);
        let mut pool = Pool::builder(
            move || Versioned {
                value: T::default(),
                seq: UNSYNCED,
                drop_reports: Arc::clone(&reports),
            },
            // The reset keeps the contents: the writer brings a reused version up to
            // date from what it held.
            |_: &mut Versioned<T>| {},
        );
        if let Some(n) = self.max_idle {
            pool = pool.max_idle(n);
        }
        let pool = pool.build();
        let container = Container::from_value(
            &pool,
            Versioned {
                value: self.init,
                seq: 0,
                drop_reports: Arc::clone(&drop_reports),
            },
        );
        // The extra versions, copies of batch 0, taken out together (so that each is a new
        // object) and then given back idle. The slowest copy's time is the longest a publish
        // waits for readers rather than copy (`oplog/wait.rs`).
        let mut versions = VecDeque::new();
        let mut copy_time = Duration::ZERO;
        {
            let current = container.acquire();
            let extra: Vec<_> = (1..self.versions)
                .map(|_| {
                    let mut v = pool.get();
                    copy_time = copy_time.max(super::timed(|| v.value.sync_from(&current.value)));
                    v.seq = 0;
                    v
                })
                .collect();
            versions.extend(extra.iter().map(|_| 0));
        }
        OpLog {
            container: Arc::new(container),
            log: Segments::default(),
            pending: 0,
            head: 0,
            base: 0,
            versions,
            keep: self.versions.max(2),
            max_ops: self.max_ops,
            spare_lag: DEFAULT_SPARE_LAG.min(self.max_ops / 2),
            passes_seen: 0,
            spare_missed: None,
            dropping: Vec::new(),
            drop_reports,
            max_wait: self.max_wait,
            published: 0,
            retired: 0,
            wait_backoff: Default::default(),
            copy_time,
            stats: OpLogStats::default(),
        }
    }
}

impl<T, O> OpLog<T, O>
where
    T: Absorb<O> + Default + Send + Sync + 'static,
{
    /// A writer whose container holds `init` as its first version (batch 0), with two more
    /// versions copied from it ([`Absorb::sync_from`]) here: the defaults of
    /// [`OpLog::builder`]. After that, versions come back from the pool and replay only
    /// what they missed.
    ///
    /// Costs two full copies of `init` and their memory (three `T`s in all).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{OpLog, MapOp};
    ///
    /// let w: OpLog<HashMap<String, u32>, MapOp<String, u32>> = OpLog::new(HashMap::new());
    /// assert!(w.read_handle().acquire().is_empty());
    /// ```
    pub fn new(init: T) -> OpLog<T, O> {
        OpLog::builder(init).build()
    }

    /// Starts configuring a writer whose container holds `init`; see [`OpLogBuilder`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::oplog::{OpLog, VecOp};
    ///
    /// let mut w = OpLog::builder(Vec::new()).max_ops(10_000).build();
    /// w.append(VecOp::Push(7));
    /// w.publish();
    /// assert_eq!(*w.read_handle().acquire(), vec![7]);
    /// ```
    pub fn builder(init: T) -> OpLogBuilder<T> {
        OpLogBuilder {
            init,
            max_ops: DEFAULT_MAX_OPS,
            max_idle: None,
            versions: DEFAULT_VERSIONS,
            max_wait: DEFAULT_MAX_WAIT,
        }
    }
}

impl<T> fmt::Debug for OpLogBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpLogBuilder")
            .field("max_ops", &self.max_ops)
            .field("max_idle", &self.max_idle)
            .field("versions", &self.versions)
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}
