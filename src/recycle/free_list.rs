//! One free list: the spare values of one type on a stack, a reuse budget per position of
//! the stack, each value with the cycle it came in and the bytes its last use needed;
//! behind a type-erased entry per type.

use std::any::{Any, TypeId};

use super::renewal::Renewal;
use super::Recycle;

/// One free list, behind its type: what [`FreeLists`](super::FreeLists) scans for a type.
pub(super) struct Entry {
    pub(super) id: TypeId,
    pub(super) list: Box<dyn Spare>,
}

/// Finds the free list of `T`, if `T` was recycled into `lists`: a linear scan, one
/// [`TypeId`] comparison per type, then a downcast (one more comparison).
pub(super) fn find<T: Recycle>(lists: &mut [Entry]) -> Option<&mut FreeList<T>> {
    let id = TypeId::of::<T>();
    lists
        .iter_mut()
        .find(|e| e.id == id)
        .and_then(|e| e.list.as_any_mut().downcast_mut::<FreeList<T>>())
}

/// Finds the free list of `T` in `lists`, adding an empty one first if `T` was never
/// recycled into them. Always `Some`: the entry for `TypeId::of::<T>()` holds a
/// `FreeList<T>` (an `Option` rather than a panic nobody can reach).
pub(super) fn find_or_add<T: Recycle>(lists: &mut Vec<Entry>) -> Option<&mut FreeList<T>> {
    let id = TypeId::of::<T>();
    let i = match lists.iter().position(|e| e.id == id) {
        Some(i) => i,
        None => {
            let list = Box::new(FreeList::<T>::default());
            lists.push(Entry { id, list });
            lists.len() - 1
        }
    };
    lists[i].list.as_any_mut().downcast_mut::<FreeList<T>>()
}

/// Values and bytes dropped, for one counter of [`FreeListStats`](super::FreeListStats).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Dropped {
    pub(super) values: u64,
    pub(super) bytes: usize,
}

impl Dropped {
    /// Counts one value of `bytes` dropped.
    pub(super) fn add(&mut self, bytes: usize) {
        self.values += 1;
        self.bytes += bytes;
    }
}

/// What a free list does without knowing its type (behind [`Entry`]).
pub(super) trait Spare: Send + Sync {
    /// For the downcast to `FreeList<T>` (trait upcasting needs Rust 1.86).
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn type_name(&self) -> &'static str;
    fn len(&self) -> usize;
    fn bytes(&self) -> usize;
    /// [`FreeLists::end_cycle`](super::FreeLists::end_cycle) for this list, at the end of
    /// cycle `renewal.cycle`: drops the values no take reached for `renewal.idle_cycles`
    /// cycles. One step per value.
    fn release_idle(&mut self, renewal: &Renewal) -> Dropped;
    /// Drops values put before the current cycle, from the bottom of the stack (the
    /// longest unused first), until `need` bytes are freed or none is left.
    fn evict_idle(&mut self, need: usize, renewal: &Renewal) -> Dropped;
}

/// A spare value and what the list knows about it.
struct Kept<T> {
    value: T,
    /// The cycle ([`Renewal::cycle`]) in which it was put: a take removes it, so this is
    /// also the last cycle it was used in.
    stamp: u32,
    /// [`Recycle::used_bytes`] just before it was cleared: what its last use needed
    /// (saturated at `u32::MAX`).
    used: u32,
}

/// The spare values of one type: a stack, with a reuse budget per position.
///
/// Invariants: `budgets.len() >= spare.len()` (a position keeps its budget while empty,
/// and a value released or evicted takes its position's budget with it, so that the values
/// above keep theirs); `bytes` is the sum of the spare values' `retained_bytes`. A budget
/// at 0 stays at 0 until an oversized value is taken from its position. The stamps grow
/// from the bottom to the top but for the few swaps of [`fit_top`](FreeList::fit_top), so
/// the values at the bottom are the ones unused longest.
pub(super) struct FreeList<T> {
    /// The spare values, top last.
    spare: Vec<Kept<T>>,
    /// The reuse budget of each position, in reuses left.
    budgets: Vec<u32>,
    /// The sum of the spare values' `retained_bytes`.
    bytes: usize,
}

impl<T> Default for FreeList<T> {
    fn default() -> Self {
        FreeList {
            spare: Vec::new(),
            budgets: Vec::new(),
            bytes: 0,
        }
    }
}

/// What [`FreeList::take`] found; the `usize` are the value's retained bytes, which the
/// list no longer counts.
pub(super) enum Taken<T> {
    /// A spare value, off the list.
    Spare(T, usize),
    /// The list was empty.
    Empty,
    /// Its position's budget was spent and it held more than its last use needed: dropped.
    Renewed(usize),
}

/// How many spare values, from the top, [`FreeLists::take_fitting`](super::FreeLists::take_fitting)
/// looks at.
const FIT_WINDOW: usize = 8;

impl<T: Recycle> FreeList<T> {
    /// Moves to the top a good fit among the last [`FIT_WINDOW`] spare values: the topmost
    /// that retains at least `bytes` and at most half as many again (plus 8), or else the one
    /// that retains the fewest bytes at least `bytes`, so that a short value does not take
    /// the buffer a longer one taken next would need (a map's key taking its value's
    /// string). The budgets stay at their positions. Up to [`FIT_WINDOW`] `retained_bytes`
    /// calls and one swap.
    pub(super) fn fit_top(&mut self, bytes: usize) {
        let len = self.spare.len();
        let good = bytes.saturating_add(bytes / 2).saturating_add(8);
        let mut best: Option<(usize, usize)> = None;
        for i in (len.saturating_sub(FIT_WINDOW)..len).rev() {
            let retained = self.spare[i].value.retained_bytes();
            if retained < bytes {
                continue;
            }
            if retained <= good {
                best = Some((retained, i));
                break;
            }
            if best.map_or(true, |(fewest, _)| retained < fewest) {
                best = Some((retained, i));
            }
        }
        if let Some((_, i)) = best {
            self.spare.swap(i, len - 1);
        }
    }

    /// Pops the top value, spending from its position's budget; renews it instead when
    /// the budget is spent and it is oversized (and draws the position a new budget).
    pub(super) fn take(&mut self, renewal: &mut Renewal) -> Taken<T> {
        let Some(kept) = self.spare.pop() else {
            return Taken::Empty;
        };
        let bytes = kept.value.retained_bytes();
        self.bytes -= bytes;
        if renewal.reuses.is_some() {
            let budget = &mut self.budgets[self.spare.len()];
            if *budget > 0 {
                *budget = budget.saturating_sub(Renewal::spend(bytes, kept.used));
            } else if renewal.oversized(bytes, kept.used) {
                // A spent budget waits for the next oversized value taken from its
                // position (one that fits its use passes): one renewal per budget at most.
                *budget = renewal.draw();
                drop(kept);
                return Taken::Renewed(bytes);
            }
        }
        Taken::Spare(kept.value, bytes)
    }

    /// Pushes `value` (`used` bytes in its last use, `bytes` retained), stamped with the
    /// cycle under way; a position reached for the first time draws its budget.
    pub(super) fn put(&mut self, value: T, used: usize, bytes: usize, renewal: &mut Renewal) {
        let top = self.spare.len();
        self.spare.push(Kept {
            value,
            stamp: renewal.cycle,
            used: u32::try_from(used).unwrap_or(u32::MAX),
        });
        if self.budgets.len() == top {
            self.budgets.push(renewal.draw());
        }
        self.bytes += bytes;
    }
}

impl<T: Recycle> Spare for FreeList<T> {
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn type_name(&self) -> &'static str {
        std::any::type_name::<T>()
    }
    fn len(&self) -> usize {
        self.spare.len()
    }
    fn bytes(&self) -> usize {
        self.bytes
    }
    fn release_idle(&mut self, renewal: &Renewal) -> Dropped {
        let mut dropped = Dropped::default();
        if renewal.idle_cycles.is_none() {
            return dropped;
        }
        // One pass that moves the values kept down over those released, in order, each
        // with its position's budget: a budget stays with the value it was being spent by
        // (values put this cycle are never idle long enough: `idle_cycles >= 1`).
        let len = self.spare.len();
        let mut kept = 0;
        for i in 0..len {
            if renewal.idle_for(self.spare[i].stamp) {
                dropped.add(self.spare[i].value.retained_bytes());
            } else {
                self.spare.swap(kept, i);
                self.budgets.swap(kept, i);
                kept += 1;
            }
        }
        if kept < len {
            self.spare.truncate(kept);
            self.budgets.drain(kept..len);
            self.bytes -= dropped.bytes;
        }
        dropped
    }
    fn evict_idle(&mut self, need: usize, renewal: &Renewal) -> Dropped {
        let mut dropped = Dropped::default();
        let n = self
            .spare
            .iter()
            .take_while(|k| {
                let evict = dropped.bytes < need && k.stamp != renewal.cycle;
                if evict {
                    dropped.add(k.value.retained_bytes());
                }
                evict
            })
            .count();
        self.spare.drain(..n);
        self.budgets.drain(..n); // the budgets move down with their values
        self.bytes -= dropped.bytes;
        dropped
    }
}

#[cfg(test)]
mod tests {
    use crate::recycle::FreeLists;

    #[test]
    fn bytes_and_stamps_are_kept_exact() {
        let mut lists = FreeLists::new().release_idle_after(Some(2));
        lists.recycle(String::with_capacity(10));
        lists.recycle(String::with_capacity(20));
        assert_eq!(lists.stats().spare_bytes, 30);
        let s: String = lists.take();
        assert_eq!(s.capacity(), 20);
        assert_eq!(lists.stats().spare_bytes, 10);
        // The cycle in which it came, then one whole idle cycle: kept.
        lists.end_cycle();
        lists.end_cycle();
        lists.recycle(s); // a new stamp: used in this cycle
        assert_eq!(lists.spare_len::<String>(), 2);
        lists.end_cycle(); // the 10-byte one has been idle two whole cycles
        let stats = lists.stats();
        assert_eq!((stats.spare, stats.spare_bytes), (1, 20));
        assert_eq!(stats.released_idle, 1);
        lists.end_cycle();
        lists.end_cycle();
        assert_eq!(lists.stats().spare_bytes, 0);
    }

    /// A released value's budget must not pass to the value that moves down into its
    /// position; the moved value keeps the budget it was spending.
    #[test]
    fn budgets_move_down_with_their_values() {
        // 4 KiB used for 1 byte: 4096 / (16 + 1024) spends 3 reuses a take.
        let used = |mut s: String| {
            s.push('x');
            s
        };
        let mut lists = FreeLists::new()
            .renew_after(Some(6..=6))
            .release_idle_after(Some(1));
        lists.recycle(used(String::with_capacity(4096))); // position 0: will go idle
        lists.recycle(used(String::with_capacity(4096))); // position 1: in use
        let s: String = lists.take(); // position 1: 6 -> 3
        lists.recycle(used(s));
        lists.end_cycle();
        let s: String = lists.take(); // position 1: 3 -> 0
        lists.recycle(used(s));
        lists.end_cycle(); // position 0's value released; position 1's moves down with its 0
        assert_eq!(
            (lists.stats().released_idle, lists.spare_len::<String>()),
            (1, 1)
        );
        let s: String = lists.take(); // its spent budget renews it
        assert_eq!(s.capacity(), 0);
        assert_eq!(lists.stats().renewed, 1);

        // Eviction under `max_spare_bytes` moves budgets down the same way.
        let mut lists = FreeLists::new()
            .renew_after(Some(6..=6))
            .max_spare_bytes(8192);
        lists.recycle(used(String::with_capacity(4096))); // position 0: evicted below
        lists.recycle(used(String::with_capacity(4096))); // position 1
        let s: String = lists.take(); // position 1: 6 -> 3
        lists.recycle(used(s));
        lists.end_cycle();
        let s: String = lists.take(); // position 1: 3 -> 0
        lists.recycle(used(s)); // a new stamp: position 0's value is the older one
        lists.end_cycle();
        lists.recycle(used(String::with_capacity(4096))); // evicts position 0's; 1's moves down
        assert_eq!(lists.stats().over_limit, 1);
        let _: String = lists.take(); // the newest, on top, in position 1 now
        let s: String = lists.take(); // position 0, with the spent budget: renewed
        assert_eq!(s.capacity(), 0);
        assert_eq!(lists.stats().renewed, 1);
    }
}
