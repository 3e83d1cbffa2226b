//! [`FreeListStats`]: what free lists hold now, and what they reused, renewed and released.

#[cfg(doc)]
use super::{FreeLists, Recycle};

/// Counters of one [`FreeLists`]; see [`FreeLists::stats`].
///
/// `spare` and `spare_bytes` are readings of the moment; the rest count since the free
/// lists were made. Bytes are [`Recycle::retained_bytes`]: capacities, as the types report them,
/// not the allocator's own overhead.
///
/// # Examples
///
/// ```
/// use poolswap::recycle::FreeLists;
///
/// let mut lists = FreeLists::new();
/// lists.recycle(String::with_capacity(10));
/// let _: String = lists.take();
/// let _: String = lists.take();
/// let stats = lists.stats();
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
    /// Takes that returned `T::default()` because the list of `T` was empty.
    pub fresh: u64,
    /// Spare values renewed: the reuse budget of their position was spent and they held
    /// far more than their last use needed, so a take dropped them and returned
    /// `T::default()` (counted here, not in `fresh`); see
    /// [bounding memory](crate::recycle#bounding-memory).
    pub renewed: u64,
    /// Spare values released because no take reached them for
    /// [`release_idle_after`](FreeLists::release_idle_after) cycles.
    pub released_idle: u64,
    /// Values dropped instead of kept because they held more than
    /// [`max_retained_bytes`](FreeLists::max_retained_bytes).
    pub over_cap: u64,
    /// Values dropped to stay within [`max_spare_bytes`](FreeLists::max_spare_bytes): spare
    /// values from earlier cycles evicted to make room, or a value recycled when no such
    /// room could be made.
    pub over_limit: u64,
}
