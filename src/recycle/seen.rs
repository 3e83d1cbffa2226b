//! [`Seen`]: an exact set of addresses, for a map copy that must know which of the source's
//! entries it has matched without looking each one up again.

use std::mem;

use super::FreeLists;

/// Addresses of values that live in one place for as long as the set is used (the keys of
/// a map borrowed shared): an open-addressing table of `usize`s, 0 for an empty slot (a
/// reference is never null), indexed by Fibonacci hashing (the address times 2^64/φ, top
/// bits), probed linearly.
///
/// Its table is a `Vec<usize>` taken from the arena and given back by
/// [`give_back`](Seen::give_back), so at steady state it allocates nothing. It holds at
/// least 1.5 slots per address it will hold, rounded up to a power of two: 8 to 16 bytes
/// per address (2 MiB for 100,000), kept in the arena's free list between uses.
pub(super) struct Seen {
    slots: Vec<usize>,
    /// `usize::BITS - log2(slots.len())`: the shift that keeps the top bits of the product.
    shift: u32,
}

/// 2^64 / φ, odd (Knuth's multiplicative hashing; truncated on 32-bit targets, still odd).
const FIBONACCI: u64 = 0x9E37_79B9_7F4A_7C15;

impl Seen {
    /// An empty set with room for `n` addresses, its table from `arena`.
    pub(super) fn with_capacity_in(n: usize, arena: &mut FreeLists) -> Seen {
        let len = (n + n / 2 + 1).next_power_of_two().max(2);
        let mut slots: Vec<usize> = arena.take();
        slots.clear();
        slots.resize(len, 0);
        Seen {
            slots,
            shift: usize::BITS - len.trailing_zeros(),
        }
    }

    /// The address of `r`, as the set keys it.
    #[inline]
    pub(super) fn addr<T>(r: &T) -> usize {
        r as *const T as usize
    }

    #[inline]
    fn home(&self, addr: usize) -> usize {
        addr.wrapping_mul(FIBONACCI as usize) >> self.shift
    }

    /// Adds `addr` (not 0). Holding more addresses than the capacity it was made with is
    /// a bug of the caller: the probe would never find an empty slot once it is full.
    #[inline]
    pub(super) fn insert(&mut self, addr: usize) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(addr);
        loop {
            let slot = &mut self.slots[i];
            if *slot == 0 {
                *slot = addr;
                return;
            }
            if *slot == addr {
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether `addr` was added.
    #[inline]
    pub(super) fn contains(&self, addr: usize) -> bool {
        let mask = self.slots.len() - 1;
        let mut i = self.home(addr);
        loop {
            match self.slots[i] {
                0 => return false,
                s if s == addr => return true,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Returns the table to `arena`'s free list.
    pub(super) fn give_back(mut self, arena: &mut FreeLists) {
        arena.recycle(mem::take(&mut self.slots));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_exactly_what_was_added() {
        let mut arena = FreeLists::new();
        let values: Vec<u64> = (0..1000).collect();
        let mut seen = Seen::with_capacity_in(500, &mut arena);
        for v in values.iter().step_by(2) {
            seen.insert(Seen::addr(v));
        }
        for (i, v) in values.iter().enumerate() {
            assert_eq!(seen.contains(Seen::addr(v)), i % 2 == 0, "value {i}");
        }
        seen.give_back(&mut arena);
        assert_eq!(arena.spare_len::<Vec<usize>>(), 1);
        // Taken again: the same table, emptied.
        let seen = Seen::with_capacity_in(500, &mut arena);
        assert!(!seen.contains(Seen::addr(&values[0])));
        assert_eq!(arena.stats().reused, 1);
    }
}
