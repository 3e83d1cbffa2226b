//! The free lists: the spare values of one type on a stack, each slot with its reuse
//! budget, behind a type-erased entry per type.

use std::any::{Any, TypeId};

use super::renewal::Renewal;
use super::Recycle;

/// One free list, behind its type.
pub(super) struct Entry {
    pub(super) id: TypeId,
    pub(super) list: Box<dyn Spare>,
}

/// Finds the free list of `T`, if `T` was ever recycled into `lists`.
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

/// What a free list does without knowing its type.
pub(super) trait Spare: Send + Sync {
    /// For the downcast to `FreeList<T>` (trait upcasting needs Rust 1.86).
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn type_name(&self) -> &'static str;
    fn len(&self) -> usize;
    fn bytes(&self) -> usize;
    /// [`Arena::renew_idle`](super::Arena::renew_idle) for this list; returns how many
    /// values it dropped.
    fn renew_idle(&mut self, renewal: &mut Renewal) -> u64;
}

/// The spare values of one type: a stack, with a reuse budget per slot.
///
/// Invariants: `budgets.len() >= spare.len()` (a slot keeps its budget while empty);
/// `bytes` is the sum of the spare values' `retained_bytes`; `low` is the fewest values the
/// stack held since the last `renew_idle` (slots below it were not taken from).
pub(super) struct FreeList<T> {
    spare: Vec<T>,
    budgets: Vec<u32>,
    bytes: usize,
    low: usize,
}

impl<T> Default for FreeList<T> {
    fn default() -> Self {
        FreeList {
            spare: Vec::new(),
            budgets: Vec::new(),
            bytes: 0,
            low: 0,
        }
    }
}

/// What [`FreeList::take`] found.
pub(super) enum Taken<T> {
    Spare(T),
    Empty,
    Renewed,
}

/// How many spare values, from the top, [`Arena::take_fitting`](super::Arena::take_fitting) looks at.
const FIT_WINDOW: usize = 8;

impl<T: Recycle> FreeList<T> {
    /// Moves the topmost of the last [`FIT_WINDOW`] spare values that retains at least
    /// `bytes` to the top (the slots' budgets stay where they are).
    pub(super) fn fit_top(&mut self, bytes: usize) {
        let len = self.spare.len();
        let window = len.saturating_sub(FIT_WINDOW)..len;
        if let Some(i) = window
            .rev()
            .find(|&i| self.spare[i].retained_bytes() >= bytes)
        {
            self.spare.swap(i, len - 1);
        }
    }

    pub(super) fn take(&mut self, renewal: &mut Renewal) -> Taken<T> {
        let Some(value) = self.spare.pop() else {
            return Taken::Empty;
        };
        let slot = self.spare.len();
        self.low = self.low.min(slot);
        self.bytes -= value.retained_bytes();
        if renewal.reuses.is_some() {
            let budget = &mut self.budgets[slot];
            if *budget == 0 {
                *budget = renewal.draw();
                drop(value);
                return Taken::Renewed;
            }
            *budget -= 1;
        }
        Taken::Spare(value)
    }

    pub(super) fn put(&mut self, value: T, bytes: usize, renewal: &mut Renewal) {
        let slot = self.spare.len();
        self.spare.push(value);
        if self.budgets.len() == slot {
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
    fn renew_idle(&mut self, renewal: &mut Renewal) -> u64 {
        let mut dropped = 0;
        if renewal.reuses.is_some() {
            // Downwards: `swap_remove(i)` brings the top value (one that was taken from,
            // or put this cycle) into slot `i`, and slot `i` is not visited again.
            for i in (0..self.low.min(self.spare.len())).rev() {
                let budget = &mut self.budgets[i];
                if *budget == 0 {
                    *budget = renewal.draw();
                    let value = self.spare.swap_remove(i);
                    self.bytes -= value.retained_bytes();
                    dropped += 1;
                } else {
                    *budget -= 1;
                }
            }
        }
        self.low = self.spare.len();
        dropped
    }
}

#[cfg(test)]
mod tests {
    use crate::arena::Arena;

    #[test]
    fn bytes_and_low_mark_are_kept_exact() {
        let mut arena = Arena::new().renew_after(1..=1);
        arena.recycle(String::with_capacity(10));
        arena.recycle(String::with_capacity(20));
        assert_eq!(arena.stats().spare_bytes, 30);
        let s: String = arena.take(); // slot 1: budget 1 -> 0
        assert_eq!(s.capacity(), 20);
        assert_eq!(arena.stats().spare_bytes, 10);
        // The first cycle of a list ages nothing: its values were put in it.
        arena.renew_idle();
        // Slot 0 idle for a whole cycle: budget 1 -> 0; the next idle cycle renews it.
        arena.renew_idle();
        assert_eq!(arena.spare_len::<String>(), 1);
        assert_eq!(arena.stats().spare_bytes, 10);
        arena.renew_idle();
        assert_eq!(arena.spare_len::<String>(), 0);
        assert_eq!(arena.stats().spare_bytes, 0);
        assert_eq!(arena.stats().renewed, 1);
    }
}
