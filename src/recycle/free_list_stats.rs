//! [`FreeListStats`]: what an arena holds now, and what it reused, renewed and released.

#[cfg(doc)]
use super::{FreeLists, Recycle};

/// Counters of one [`FreeLists`]; see [`FreeLists::stats`].
///
/// `spare` and `spare_bytes` are readings of the moment; the rest count since the arena
/// was made. Bytes are [`Recycle::retained_bytes`]: capacities, as the types report them,
/// not the allocator's own overhead.
///
/// # Examples
///
/// ```
/// use poolswap::recycle::FreeLists;
///
/// let mut arena = FreeLists::new();
/// arena.recycle(String::with_capacity(10));
/// let _: String = arena.take();
/// let _: String = arena.take();
/// let stats = arena.stats();
/// assert_eq!((stats.reused, stats.fresh, stats.spare), (1, 1, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FreeListStats {
    /// Spare values in all free lists now.
    pub spare: usize,
    /// Bytes those spare values hold, as their [`Recycle::retained_bytes`] say.
    pub spare_bytes: usize,
    /// Takes served with a spare value.
    pub reused: u64,
    /// Takes that returned `T::default()` because the free list was empty.
    pub fresh: u64,
    /// Spare values renewed: their slot's reuse budget was spent and they held more than
    /// their last use needed, so they were dropped (a take from that slot then returns
    /// `T::default()`, counted here, not in `fresh`); see
    /// [renewal](crate::recycle#renewal-and-release-the-memory-safeguards).
    pub renewed: u64,
    /// Bytes freed by those renewals.
    pub renewed_bytes: usize,
    /// Spare values released because no take reached them for
    /// [`release_idle_after`](FreeLists::release_idle_after) cycles.
    pub released_idle: u64,
    /// Bytes freed by those releases.
    pub released_idle_bytes: usize,
    /// Values dropped instead of kept because they held more than
    /// [`max_retained_bytes`](FreeLists::max_retained_bytes).
    pub over_cap: u64,
    /// Bytes freed by those drops.
    pub over_cap_bytes: usize,
    /// Values dropped to stay within [`max_spare_bytes`](FreeLists::max_spare_bytes): spare
    /// values from earlier cycles evicted to make room, or a value recycled when no such
    /// room could be made.
    pub over_limit: u64,
    /// Bytes freed by those drops.
    pub over_limit_bytes: usize,
    /// The same count as [`renewed`](FreeListStats::renewed), under its old name.
    #[deprecated(since = "0.1.0", note = "renamed to `renewed`")]
    pub retired: u64,
}
