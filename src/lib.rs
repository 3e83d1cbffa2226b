#![doc = include_str!("../README.md")]
#![warn(
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    unreachable_pub
)]
// The library names its concurrency primitives only through `sync` (the loom facade); the
// lists are in clippy.toml. Cargo.toml turns these off for the other targets, whose tests,
// benches and examples use `std`'s on purpose.
#![warn(clippy::disallowed_types, clippy::disallowed_methods)]
#![doc(test(attr(deny(warnings))))]
// docs.rs builds with `--cfg docsrs`: feature-gated items say which feature they need.
#![cfg_attr(docsrs, feature(doc_cfg))]
// `loom` is the model checker's build, never a user's: the docs do not mark items by it.
#![cfg_attr(docsrs, doc(auto_cfg(hide(loom))))]

mod compile_fail_tests;
mod container;
pub mod oplog;
mod pool;
mod reclaim;
pub mod recycle;
mod refcount;
#[cfg(feature = "serde")]
mod serialize;
// The loom facade, the one module that may name the concurrency primitives (clippy.toml).
#[allow(clippy::disallowed_types, clippy::disallowed_methods)]
mod sync;

pub use container::{
    Cache, Closed, Container, ContainerAny, Flavour, Guard, MappedGuard, MaybeEmpty, NonEmpty,
    OptionContainer, Subscriber, Watched,
};
#[cfg(loom)]
pub use reclaim::loom_orphans_pass;
pub use reclaim::{reclaim, Reclaimer};
pub use recycle::recycled::Recycled;

/// Not part of the API: what the crate's own tests ask of its internals. Compiled only
/// with the feature `internals`, which the crate's dev-dependency on itself turns on for its
/// tests, loom models and examples; no stability promise.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    /// Whether this process chose the membarrier mode (reads take no fence, reclamation
    /// passes issue `membarrier(2)`); `false` before the first container is made.
    pub fn membarrier() -> bool {
        crate::reclaim::barrier::membarrier()
    }

    /// Whether `guard` holds a counted reference (`true`) or a hazard slot (`false`).
    pub fn is_counted<T>(guard: &crate::Guard<T>) -> bool {
        crate::Guard::is_counted(guard)
    }

    /// The version's count of counted references: one while it is some container's current
    /// version (or, once retired, while the retired list keeps it), plus one per counted
    /// guard; guards that hold a hazard slot are not counted (Go's `DebugPeekRef`). One
    /// `Relaxed` load; other threads may change it at any moment.
    pub fn ref_count<T>(guard: &crate::Guard<T>) -> usize {
        crate::Guard::ref_count(guard)
    }

    /// An op log's counters that are not [`OpLogStats`](crate::oplog::OpLogStats)' public
    /// fields, read from its stats.
    #[derive(Debug, Clone, Copy)]
    pub struct OpLogCounters {
        /// Versions a publish or catch-up set aside as the pool's victims.
        pub set_aside: u64,
        /// Publishes that wrote a version lacking more than the previous batch.
        pub stale_takes: u64,
        /// Operations that left the op log and wait to be dropped.
        pub dropping: usize,
    }

    /// Whether two handles are on the same pool: a pointer comparison.
    pub fn pool_ptr_eq<T>(a: &crate::Pool<T>, b: &crate::Pool<T>) -> bool {
        crate::Pool::ptr_eq(a, b)
    }

    /// The counters of `stats` that only the crate's tests read.
    pub fn oplog_counters(stats: &crate::oplog::OpLogStats) -> OpLogCounters {
        OpLogCounters {
            set_aside: stats.set_aside,
            stale_takes: stats.stale_takes,
            dropping: stats.dropping,
        }
    }
}

pub use pool::{OwnedPooled, Pool, PoolBuilder, PoolStats, Pooled, Publishable, ResetOutcome};
