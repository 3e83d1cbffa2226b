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
pub use recycle::Recycled;

/// Not part of the API: what the crate's own tests, benchmarks and examples need to know
/// about the process, with no stability promise.
#[doc(hidden)]
pub mod __private {
    /// Whether this process chose the membarrier mode (reads take no fence, reclamation
    /// passes issue `membarrier(2)`); `false` before the first container is made.
    pub fn membarrier() -> bool {
        crate::reclaim::barrier::membarrier()
    }

    /// Whether `guard` holds a counted reference (`true`) or a hazard slot (`false`).
    pub fn is_counted<T>(guard: &crate::Guard<T>) -> bool {
        crate::Guard::is_counted(guard)
    }
}

pub use pool::{OwnedPooled, Pool, PoolBuilder, PoolStats, Pooled, Publishable, ResetOutcome};
