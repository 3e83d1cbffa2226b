//! Building a [`OpLog`]: [`OpLogBuilder`]'s options (the log's bound, the pool's idle
//! bound, versions made up front) and the writer's constructors.

use std::collections::VecDeque;
use std::fmt;

// std's `Arc`, as in `log.rs`: the readers' handle is public.
#[allow(clippy::disallowed_types)]
use std::sync::Arc;

use super::graveyard::Graveyard;
use super::{
    Absorb, OpLog, OpLogStats, Segments, Versioned, DEFAULT_MAX_OPS, DEFAULT_SPARE_LAG, UNSYNCED,
};
use crate::{Container, Pool};

/// Configures a [`OpLog`]; see [`OpLog::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct OpLogBuilder<T> {
    init: T,
    max_ops: usize,
    spare_lag: usize,
    max_idle: Option<usize>,
    versions: usize,
}

impl<T> OpLogBuilder<T>
where
    T: Default + Send + Sync + 'static,
{
    /// The most operations the log keeps for versions that lack them (default
    /// [`DEFAULT_MAX_OPS`]). Past it, the oldest are dropped, and a version that still
    /// lacked them is copied whole ([`Absorb::sync_from`]) when it next comes back: a
    /// bound on the log's memory, at the price of a full copy after a reader held a
    /// version across that many operations. The log always keeps the current batch, so a
    /// batch larger than the bound is kept whole.
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

    /// The most operations an idle spare version may lack before publishes catch it up
    /// (default [`DEFAULT_SPARE_LAG`], and at most half of
    /// [`max_ops`](OpLogBuilder::max_ops)): a cap on the chunk the catch-up keeps it
    /// within, three batches per spare.
    ///
    /// A spare is a version no reader holds that waits in the pool for a publish that
    /// finds the version the last publish retired still held (a reader mid-lookup). Such a
    /// publish takes the spare and replays what it lacks, plus the batch. Once the spare
    /// lacks more than three batches (per spare; or this lag, if less), a publish replays
    /// the oldest three on it: on about a third of the publishes. The log keeps about that
    /// much for it. The cap matters for large batches (over 341 operations with one spare
    /// and the default): lower bounds the worst publish and the log's memory closer; the
    /// catch-up's total work (each operation applied once more) does not change. Until
    /// 2026-11-27 small batches (200 of them within this lag) were caught up 200 batches
    /// at a time, on one publish in 200, which left the spare up to this far behind: see
    /// `chunk` in `src/log/spare.rs` for why that went.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{OpLog, MapOp};
    ///
    /// let mut w = OpLog::builder(HashMap::new()).versions(3).spare_lag(256).build();
    /// for i in 0..1_000 {
    ///     w.append(MapOp::Insert(i % 10, i));
    ///     w.publish();
    /// }
    /// // The log keeps about a chunk of the catch-up: three batches, and the current one.
    /// assert!(w.stats().log_len <= 4);
    /// ```
    pub fn spare_lag(mut self, ops: usize) -> Self {
        self.spare_lag = ops;
        self
    }

    /// The most idle versions the container's pool keeps (default: the pool's adaptive
    /// bound); see [`PoolBuilder::max_idle`](crate::PoolBuilder::max_idle). A version dropped for it
    /// is simply not recycled.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{OpLog, MapOp};
    ///
    /// let w = OpLog::<_, MapOp<u32, u32>>::builder(HashMap::new()).max_idle(4).build();
    /// assert_eq!(w.container().pool().stats().max_idle, 4);
    /// ```
    pub fn max_idle(mut self, n: usize) -> Self {
        self.max_idle = Some(n);
        self
    }

    /// How many versions to make at build time, the initial one included (default 1):
    /// each extra one is a full copy of `init` ([`Absorb::sync_from`]), made here rather
    /// than on a publish. Without them, the first publishes that find no idle version make
    /// one from the pool's factory and copy the current version into it, on the publishing
    /// thread: an O(n) publish for each version the workload needs beyond the first, the
    /// last of which may come late (when a reader first holds a guard at the wrong moment).
    /// A writer with readers that each hold one guard at a time circulates three (the
    /// current version, one a reader still holds, the one being written); readers that
    /// hold guards across publishes need more.
    ///
    /// A reader that holds a guard for long (past [`max_ops`](OpLogBuilder::max_ops)
    /// operations) takes its version out of circulation, and the log's reach. With three
    /// versions, the first publish afterwards that finds the other two held copies the
    /// whole table; with four, none does. `benches/delta.rs`'s long-hold row (100,000
    /// entries, a guard held through 10,000 publishes of 10 operations, initial maps with
    /// room for twice their entries, `DELTA_RESERVE=1`; 2026-11-26, 2-core VM): three
    /// versions, one full copy (79 ms); four, none, p99 0.75x the row without the hold,
    /// max 0.8 ms; each operation is then applied once more (3.1 against 2.5 times).
    ///
    /// Costs `n - 1` full copies and their memory at once (they would be made later
    /// anyway, if the workload needs them). The log keeps what these versions lack until
    /// the writer takes them, within [`max_ops`](OpLogBuilder::max_ops).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{OpLog, MapOp};
    ///
    /// let mut w = OpLog::builder(HashMap::from([(1, "one")])).versions(3).build();
    /// assert_eq!(w.container().pool().stats().idle, 2);
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

    /// Makes the writer; its container holds `init` as batch 0.
    ///
    /// # Panics
    ///
    /// If [`Absorb::sync_from`] panics while it makes the extra
    /// [`versions`](OpLogBuilder::versions).
    #[allow(clippy::disallowed_types)] // std's `Arc`: see the import.
    pub fn build<O>(self) -> OpLog<T, O>
    where
        T: Absorb<O>,
    {
        let graveyard = Arc::new(Graveyard::new());
        let buried = Arc::clone(&graveyard);
        let mut pool = Pool::builder(
            move || Versioned {
                value: T::default(),
                seq: UNSYNCED,
                graveyard: Arc::clone(&buried),
            },
            // The reset keeps the contents: the writer brings a recycled version up to
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
                graveyard: Arc::clone(&graveyard),
            },
        );
        // The extra versions, copies of batch 0, taken out together (so that each is a new
        // object) and then given back idle.
        let mut versions = VecDeque::new();
        {
            let current = container.acquire();
            let extra: Vec<_> = (1..self.versions)
                .map(|_| {
                    let mut v = pool.get();
                    v.value.sync_from(&current.value);
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
            max_ops: self.max_ops,
            spare_lag: self.spare_lag.min(self.max_ops / 2),
            passes_seen: 0,
            spare_missed: None,
            unneeded: Vec::new(),
            graveyard,
            stats: OpLogStats::default(),
        }
    }
}

impl<T, O> OpLog<T, O>
where
    T: Absorb<O> + Default + Send + Sync + 'static,
{
    /// A writer whose container holds `init` as its first version (batch 0).
    ///
    /// The container's pool makes further versions with `T::default()` and brings each up
    /// to date with a full copy ([`Absorb::sync_from`]) the first time; after that, versions
    /// come back from the pool and replay only what they missed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{OpLog, MapOp};
    ///
    /// let w: OpLog<HashMap<String, u32>, MapOp<String, u32>> = OpLog::new(HashMap::new());
    /// assert!(w.container().acquire().is_empty());
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
    /// assert_eq!(*w.container().acquire(), vec![7]);
    /// ```
    pub fn builder(init: T) -> OpLogBuilder<T> {
        OpLogBuilder {
            init,
            max_ops: DEFAULT_MAX_OPS,
            spare_lag: DEFAULT_SPARE_LAG,
            max_idle: None,
            versions: 1,
        }
    }
}

impl<T> fmt::Debug for OpLogBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpLogBuilder")
            .field("max_ops", &self.max_ops)
            .field("spare_lag", &self.spare_lag)
            .field("max_idle", &self.max_idle)
            .field("versions", &self.versions)
            .finish_non_exhaustive()
    }
}
