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

pub mod recycle;
// The fences' facade: `std`'s `fence` and `compiler_fence`, loom's `fence` under loom.
#[allow(clippy::disallowed_methods)]
mod barrier;
mod compile_fail_tests;
mod container;
mod hazard;
pub mod oplog;
mod pool;
mod reclaimer;
mod refcount;
mod registry;
#[cfg(feature = "serde")]
mod serialize;
// The loom facade, the one module that may name the concurrency primitives (clippy.toml).
#[allow(clippy::disallowed_types, clippy::disallowed_methods)]
mod sync;

pub use barrier::BarrierMode;
pub use container::{Cache, Container, Guard, MappedGuard, OptionContainer};
pub use reclaimer::{Reclaimer, ReclaimerBuilder};
pub use recycle::Recycled;

/// Hazard slots per thread: how many guards one thread can hold at once before further
/// [`Container::acquire`]s fall back to counted references ([`Guard::is_counted`]).
pub const HAZARD_SLOTS: usize = hazard::SLOTS;

/// Which memory barriers the read path uses in this process.
///
/// Chosen once, when the process makes its first container, and kept: `Membarrier` on
/// Linux when `membarrier(2)`'s private expedited command is available, can be registered,
/// and one call takes under 200 µs; `Fence` otherwise, under Miri, or when the environment
/// variable `POOLSWAP_BARRIER` is `fence` at that moment. Before the first container it
/// returns `Fence`.
///
/// # Examples
///
/// ```
/// use poolswap::{BarrierMode, Container, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let _c = Container::from_value(&pool, 1);
/// match poolswap::barrier_mode() {
///     BarrierMode::Membarrier => println!("reads take no fence; updates issue membarrier"),
///     BarrierMode::Fence => println!("reads and updates each take a SeqCst fence"),
/// }
/// ```
pub fn barrier_mode() -> BarrierMode {
    barrier::mode()
}

/// Recycles now every retired version that no guard holds any more, in every container
/// of the process, on the calling thread; never waits for a guard (a version still held
/// stays retired). Returns how many versions went back to their pools.
///
/// Guards never recycle: dropping one is a store (or, for a counted guard, a decrement),
/// never the pool's return path, a `reset` or a `T::drop`. Retired versions go back at a
/// *reclamation*, which runs on a writer's side: when an update leaves
/// [`RECLAIM_THRESHOLD`] versions retired, when a pool getter (`get`, `get_new`,
/// `try_get`, a waiting `get` or `get_timeout` at `max_live`, and each wake-up of a
/// `get_async` with the `async` feature) finds nothing idle, when a container is dropped,
/// every 0.5 ms on the `poolswap-reclaim` thread while a `get_async` waits and versions are
/// retired, and here. A version's return path (and its `T::drop`, if its pool drops it)
/// runs on the thread that reclaims. Call this to choose that thread (or start a
/// [`Reclaimer`], a background thread that does it as versions retire, for versions whose
/// drop takes long), or to have the versions back in their pools
/// before counting them or before a process goes idle. (A pool getter's reclamation, and
/// an update's at the threshold, pass over that pool's list alone.) A version that another
/// thread's reclamation took off its list at the same moment comes back when that one finishes,
/// not before this call returns; and a version whose object holds a guard on an older
/// one frees that one only at the next reclamation.
///
/// Walks every pool's retired list (one per pool ever built in the process, reused by later
/// pools): a load per list when nothing is retired, plus two locks (process-wide, for the
/// pass's buffers). Otherwise also a lock per list holding retired versions (twice), one
/// heavy barrier (`membarrier` or a fence, see [`barrier_mode`]; a fence if every retired
/// version was published fenced: see [`Container::update`]), one load of each hazard slot
/// of every thread that has ever read ([`HAZARD_SLOTS`] per thread), and, for more than 8
/// retired versions, a sort of the protected addresses and a binary search per version
/// (for 8 or fewer, a comparison with each protected address). Allocates nothing at
/// steady state.
///
/// # Panics
///
/// If a version's return path panics (its pool dropped it and `T::drop` panicked), the
/// panic reaches the caller after every other version of the pass went back.
///
/// # Examples
///
/// ```
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let c = Container::from_value(&pool, 1);
/// let old = c.acquire();
/// c.update(c.pool().get());
/// assert_eq!(poolswap::reclaim(), 0); // `old` still holds version 1
/// drop(old); // a store: version 1 stays retired
/// assert_eq!(poolswap::reclaim(), 1);
/// assert_eq!(pool.stats().idle, 1); // version 1, back in the pool
/// ```
pub fn reclaim() -> usize {
    hazard::reclaim()
}

/// Retired versions on one pool's list at which an update reclaims that list by itself:
/// see [`reclaim`]. The bound holds per pool: a process with `n` pools leaves at most
/// `n` times as many retired, held versions aside.
pub const RECLAIM_THRESHOLD: usize = hazard::RECLAIM_THRESHOLD;

pub use pool::{OwnedPooled, Pool, PoolBuilder, PoolStats, Pooled, Publishable, ResetOutcome};
