//! The reclamation layer: how a version swapped out of its container waits until no reader
//! can still read it, and goes back to its pool then. It knows nothing of pools or
//! containers: a pool hands it type-erased nodes with the two functions that claim and
//! return them ([`Retired`]).
//!
//! - To *protect* a version is to announce, in a hazard slot of the reading thread, that
//!   the thread reads it: the reader stores the version's address in the slot, issues a
//!   light barrier, and re-loads the container's current version; if that is still the
//!   same, the slot protects it. A guard holds the slot until it is dropped (one store).
//! - To *retire* a version is to take it out of its container (an atomic swap) and push it,
//!   with the container's counted reference on it, on its pool's retired list.
//! - To *reclaim* is to take retired versions off their lists, issue one heavy barrier,
//!   scan every thread's slots, and return to its pool each version no slot protects and
//!   no counted guard holds; the others go back on their list for the next pass.
//!
//! Readers never reclaim. A pass runs on a writer's side: when a pool getter finds nothing
//! idle, when an update leaves [`RECLAIM_THRESHOLD`] versions on its pool's list, when a
//! container is dropped, at [`reclaim`], or on a background [`Reclaimer`]. The update's
//! waits until the list holds twice what the last pass left held (`retired`): O(1)
//! amortised work per retirement; so does the getter's on a list of more than 64 versions,
//! and on a shorter one it passes whenever a pass could return one. Versions still held when their pool's last handle goes
//! are left to a short-lived thread (`orphans`), and the explicit passes repeat while they
//! drop versions that may have held the last guard on a kept one.
//!
//! | file | what |
//! |---|---|
//! | `barrier` | the light and heavy barriers: `membarrier(2)` or `fence(SeqCst)` |
//! | `registry` | per-thread state of each owner (a pool, the slots), and its exit hooks |
//! | `hazard` | hazard slots: per-thread blocks, protect, clear, the scan |
//! | `retired` | retired lists (one per pool), reclamation passes |
//! | `wake` | the handshake that wakes a sleeping background reclaimer |
//! | `orphans` | the thread that reclaims versions whose pool's last handle is gone |
//! | `reclaimer` | [`Reclaimer`], the background thread |
//!
//! # Why a returned version is never read
//!
//! Barriers are totally ordered (heavy against light as `fence(SeqCst)` against
//! `fence(SeqCst)`). Take a reader that returns a guard on node `p` and a pass that finds
//! `p` unprotected. The swap that retired `p` precedes the pass's heavy barrier (it
//! precedes the push on the retired list, which the list's lock orders before the pass's
//! take). If the reader's light barrier comes before the heavy one, the pass's load of the
//! slot sees the reader's store (or a later one: then the guard is dropped and its reads,
//! ordered by the `Release` clear, are done). If it comes after, the reader's re-load sees
//! the swap or something later, so not `p`, unless `p` was returned and published anew,
//! which the pass has not yet allowed. A pass judges only the nodes it took off the lists
//! before its heavy barrier. A block made after the barrier is missed by the scan and need
//! not be seen: its reader re-loads after the barrier. The slots a scan skips (past a
//! block's high-water mark, `hazard`) were never filled before the barrier.
//!
//! A version published *fenced* (`container/raw.rs`, "Fenced versions") was protected only
//! by readers whose light barrier was a `fence(SeqCst)`; a pass whose nodes are all fenced
//! replaces the heavy barrier by a fence of its own (two fences are totally ordered too).
//! So does a pass that keeps, unjudged, every node of its batch that is not fenced (it
//! does so when a look at the slots before its barrier shows each of them protected, as a
//! version a descheduled reader holds is): the nodes it may return are all fenced, and the
//! argument holds for each of them alone.
//!
//! # Sources
//!
//! Maged Michael, "Hazard Pointers: Safe Memory Reclamation for Lock-Free Objects" (IEEE
//! TPDS 2004): slots scanned before reclamation, a sorted snapshot per scan. folly's
//! `hazptr` (`folly/synchronization/Hazptr.h`) and the haphazard crate: amortised passes and
//! the asymmetric barrier with Linux `membarrier(2)`. arc-swap's per-thread debt nodes
//! (never freed, reused after their thread exits): the blocks' lifecycle.

// The fences' facade: `std`'s `fence` and `compiler_fence`, loom's `fence` under loom.
#[allow(clippy::disallowed_methods)]
pub(crate) mod barrier;
mod hazard;
mod orphans;
mod reclaimer;
pub(crate) mod registry;
mod retired;
mod wake;

pub(crate) use self::hazard::{clear, free_slot, untag, Slot, FENCED};
pub(crate) use self::orphans::adopt as adopt_orphans;
pub use self::reclaimer::Reclaimer;
// The async getters' reclaiming thread (`pool/wait_async.rs`) asks whether any version waits.
#[cfg(all(feature = "async", not(loom)))]
pub(crate) use self::retired::has_pending;
pub(crate) use self::retired::{claim_list, release_list, retire, List, Retired};

/// Slots per thread: a thread's first 128 guards held at once protect their versions with
/// hazard slots, further ones take a counted reference (4 under loom, so that models reach
/// the counted fallback).
pub(crate) const HAZARD_SLOTS: usize = hazard::BLOCK_SLOTS * (1 + hazard::SPILL_BLOCKS);

/// Retired versions on one pool's list at which an update reclaims that list itself.
pub(crate) const RECLAIM_THRESHOLD: usize = 8;

// The docs of `Container::acquire`, `Container::update` and `reclaim` state these numbers
// (and `tests/loom.rs` the loom one).
const _: () = assert!(HAZARD_SLOTS == if cfg!(loom) { 4 } else { 128 } && RECLAIM_THRESHOLD == 8);

/// Returns to their pools now, on the calling thread, the retired versions of every pool
/// that no guard holds; returns how many. Never waits for a guard: a version still held
/// stays retired.
///
/// Dropping a guard never returns a version: it is one store (or, for a counted guard, one
/// atomic decrement) and never runs a pool's return path or a `T::drop`. Retired versions
/// go back at a *reclamation*, on a writer's side: when an update leaves 8 versions on its
/// pool's retired list (once the list holds twice the versions that guards held at its
/// last pass), when a pool getter finds nothing idle and a version was retired since the
/// last pass or a look at the hazard slots shows a retired version that no guard holds (on
/// a list of more than 64 versions, at twice the held ones, as the update's), when a
/// container is
/// dropped, on a background [`Reclaimer`], on the thread that serves awaiting getters
/// (`async` feature) while one waits, and here. Call this to choose the thread that runs the
/// return paths (and the `T::drop` of versions the pool does not keep), or to have the
/// versions back before counting them. A version that another thread's pass took off its
/// list at the same moment comes back when that pass ends, maybe after this call returns.
///
/// When a pass drops a version (its pool is closed or full) and leaves another held, it
/// passes again: the dropped object may have held the last guard on it. So a chain of `n`
/// versions that hold guards on older ones goes in one call of `n` passes.
///
/// Versions that guards still hold when their pool's last handle goes (every container of
/// the pool dropped) need no call: the pool's close starts a thread, `poolswap-orphans`,
/// that passes over that pool's retired list, waiting 1 ms after a pass that freed a
/// version and up to 32 ms after one that freed none, and exits once the list is empty.
/// Their `T::drop` runs on that thread, at most about 32 ms after the last guard's drop.
/// (Not under Miri, which reports a thread alive at the program's end.)
///
/// Costs: one load per retired list (one per pool) when nothing is retired, and two locks
/// (process-wide, for the pass's buffers). Otherwise also two locks per list holding
/// retired versions, at most one heavy barrier (`membarrier(2)` on Linux: an interrupt to
/// every CPU running the process; at least a `fence(SeqCst)`), at most two loads of each
/// used hazard slot of every thread that ever read, and, for `v` versions taken and `h`
/// protected addresses, O(`v` · `h`) comparisons for `v` ≤ 8, O((`v` + `h`) log `h`) above
/// (a sort and a binary search per version). No allocation at steady state.
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
    retired::reclaim()
}

/// Loom builds only: what the orphans' thread (which loom's models cannot run) does at a
/// wake-up, run by the model itself: a pass over each list that a pool's close handed over
/// and that still belongs to that pool. Returns how many versions went back.
#[cfg(loom)]
#[doc(hidden)]
pub fn loom_orphans_pass() -> usize {
    orphans::pass_adopted()
}
