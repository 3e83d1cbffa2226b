//! [`Seen`]: an exact set of addresses, for a map copy that must know which of the source's
//! entries it has matched without looking each one up again.

use std::mem;

use super::FreeLists;

/// Addresses of values that live in one place for as long as the set is used (the keys of
/// a map borrowed shared): an open-addressing table of `usize`s, 0 for an empty cell (a
/// reference is never null), indexed by Fibonacci hashing (the address times 2^64/φ, top
/// bits), probed linearly.
///
/// Its table is a `Vec<usize>` taken from free lists and given back by
/// [`give_back`](Seen::give_back), so at steady state it allocates nothing. It holds at
/// least 1.5 cells per address it will hold, rounded up to a power of two: 8 to 16 bytes
/// per address (2 MiB for 100,000), kept in a free list between uses.
pub(super) struct Seen {
    /// The cells: an address, or 0 when empty; a power of two long.
    cells: Vec<usize>,
    /// `usize::BITS - log2(cells.len())`: the shift that keeps the top bits of the product.
    shift: u32,
}

/// 2^64 / φ, odd (Knuth's multiplicative hashing; truncated on 32-bit targets, still odd).
const FIBONACCI: u64 = 0x9E37_79B9_7F4A_7C15;

impl Seen {
    /// An empty set with room for `n` addresses, its table from `lists`.
    pub(super) fn with_capacity_in(n: usize, lists: &mut FreeLists) -> Seen {
        let len = (n + n / 2 + 1).next_power_of_two().max(2);
        let mut cells: Vec<usize> = lists.take();
        cells.clear();
        cells.resize(len, 0);
        Seen {
            cells,
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
    /// a bug of the caller: the probe would never find an empty cell once it is full.
    #[inline]
    pub(super) fn insert(&mut self, addr: usize) {
        let mask = self.cells.len() - 1;
        let mut i = self.home(addr);
        loop {
            let cell = &mut self.cells[i];
            if *cell == 0 {
                *cell = addr;
                return;
            }
            if *cell == addr {
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether `addr` was added.
    #[inline]
    pub(super) fn contains(&self, addr: usize) -> bool {
        let mask = self.cells.len() - 1;
        let mut i = self.home(addr);
        loop {
            match self.cells[i] {
                0 => return false,
                s if s == addr => return true,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Returns the table to `lists`.
    pub(super) fn give_back(mut self, lists: &mut FreeLists) {
        lists.recycle(mem::take(&mut self.cells));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_exactly_what_was_added() {
        let mut lists = FreeLists::new();
        let values: Vec<u64> = (0..1000).collect();
        let mut seen = Seen::with_capacity_in(500, &mut lists);
        for v in values.iter().step_by(2) {
            seen.insert(Seen::addr(v));
        }
        for (i, v) in values.iter().enumerate() {
            assert_eq!(seen.contains(Seen::addr(v)), i % 2 == 0, "value {i}");
        }
        seen.give_back(&mut lists);
        assert_eq!(lists.spare_len::<Vec<usize>>(), 1);
        // Taken again: the same table, emptied.
        let seen = Seen::with_capacity_in(500, &mut lists);
        assert!(!seen.contains(Seen::addr(&values[0])));
        assert_eq!(lists.stats().reused, 1);
    }
}
