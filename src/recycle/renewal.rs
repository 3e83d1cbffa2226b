//! When a spare value is dropped: *renewed* (the reuse budget of its position in the list
//! is spent and it holds far more than its last use needed; a fresh value is handed out
//! instead) or *released* (no take reached it for a number of cycles); and the generator
//! that draws the budgets.

use std::ops::RangeInclusive;

/// The default reuse budgets, in takes: protopool's README replaces a pooled value after a
/// random 5,000 to 6,000 uses. Stated in the docs of
/// [`FreeLists::renew_after`](super::FreeLists::renew_after).
pub(crate) const DEFAULT_REUSES: RangeInclusive<u32> = 5_000..=6_000;

/// The default number of whole cycles (builds) a spare value may go untaken before it is
/// released. Stated in [`FreeLists::release_idle_after`](super::FreeLists::release_idle_after)'s
/// docs.
pub(crate) const DEFAULT_IDLE_CYCLES: u32 = 100;

/// The most reuses one take spends (see [`Renewal::spend`]): a 64 KiB buffer used for a
/// few bytes spends 60 to 63, so it is renewed after 80 to 100 takes under the default
/// budgets.
const MAX_SPEND: u32 = 64;
/// A take spends `retained / (SPEND_FACTOR × used + SPEND_SLACK)` reuses (at least 1): only
/// a value that holds more than 16 times its use and 1 KiB more spends its budget faster
/// than one a take, so mild waste (a buffer that holds 1 KiB strings one time and short
/// ones the next) is renewed no more often than once per budget.
const SPEND_FACTOR: usize = 16;
const SPEND_SLACK: usize = 1024;
/// A value is *oversized* when it holds more than this many times the bytes its last use
/// needed...
const OVERSIZED_FACTOR: usize = 4;
/// ...plus this many bytes (a buffer this small is not worth an allocation to shrink).
const OVERSIZED_SLACK: usize = 256;

/// The renewal and release settings, the cycle count, and the generator that draws
/// reuse budgets.
pub(super) struct Renewal {
    /// splitmix64's state.
    state: u64,
    /// Budgets are drawn uniformly from this range; `None`: never renew.
    pub(super) reuses: Option<RangeInclusive<u32>>,
    /// Spare values unused for this many whole cycles are released (at least 1); `None`:
    /// never.
    pub(super) idle_cycles: Option<u32>,
    /// The cycle under way: how many times [`FreeLists::end_cycle`](super::FreeLists::end_cycle)
    /// was called, wrapping (only differences of stamps are used, and a value is released
    /// long before 2^32 cycles).
    pub(super) cycle: u32,
}

impl Renewal {
    /// Settings with budgets drawn from `reuses`, idle values released after
    /// [`DEFAULT_IDLE_CYCLES`], at cycle 0; the generator seeded with `seed`.
    pub(super) fn new(seed: u64, reuses: Option<RangeInclusive<u32>>) -> Renewal {
        Renewal {
            state: seed,
            reuses,
            idle_cycles: Some(DEFAULT_IDLE_CYCLES),
            cycle: 0,
        }
    }

    /// Whether a value that holds `retained` bytes after its last use needed `used` is
    /// worth renewing: more than 4 × `used` + 256 bytes. `u32::MAX` (a use of 4 GiB or
    /// more, saturated) is never oversized.
    pub(super) fn oversized(&self, retained: usize, used: u32) -> bool {
        if used == u32::MAX {
            return false;
        }
        let needed = (used as usize).saturating_mul(OVERSIZED_FACTOR);
        retained > needed.saturating_add(OVERSIZED_SLACK)
    }

    /// Reuses a take of a value that holds `retained` bytes after its last use needed
    /// `used` spends from its position's budget: `retained / (16 × used + 1,024)`, at least 1
    /// and at most [`MAX_SPEND`]. The more a value wastes, the sooner it is renewed; one
    /// that fits its use, or wastes less than that, spends 1. So does one whose last use
    /// needed 0 bytes: an empty value, or one of a type that does not report its use (the
    /// default [`Recycle::used_bytes`](super::Recycle::used_bytes)), renewed once per budget.
    pub(super) fn spend(retained: usize, used: u32) -> u32 {
        if used == 0 || used == u32::MAX {
            return 1;
        }
        let needed = (used as usize)
            .saturating_mul(SPEND_FACTOR)
            .saturating_add(SPEND_SLACK);
        u32::try_from(retained / needed).map_or(MAX_SPEND, |r| r.clamp(1, MAX_SPEND))
    }

    /// Whether a value put in cycle `stamp` has been idle long enough to be released, at
    /// the end of the cycle under way.
    pub(super) fn idle_for(&self, stamp: u32) -> bool {
        self.idle_cycles
            .is_some_and(|limit| self.cycle.wrapping_sub(stamp) >= limit)
    }

    /// One step of splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
    /// generators", OOPSLA 2014; the constants of Vigna's public-domain reference version).
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A budget drawn uniformly from `reuses` (the modulo's bias is below 2^-32);
    /// `u32::MAX` when renewal is off.
    pub(super) fn draw(&mut self) -> u32 {
        let Some(r) = self.reuses.clone() else {
            return u32::MAX;
        };
        let span = u64::from(*r.end() - *r.start()) + 1;
        *r.start() + (self.next() % span) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_stay_in_range_and_vary() {
        let mut r = Renewal::new(42, Some(10..=12));
        let draws: Vec<u32> = (0..1000).map(|_| r.draw()).collect();
        assert!(draws.iter().all(|d| (10..=12).contains(d)));
        for v in 10..=12 {
            assert!(draws.contains(&v), "{v} never drawn");
        }
        let mut one = Renewal::new(7, Some(5..=5));
        assert_eq!(one.draw(), 5);
        let mut full = Renewal::new(7, Some(0..=u32::MAX));
        let _ = full.draw(); // no overflow in the span
    }

    #[test]
    fn oversized_and_idle_rules() {
        let r = Renewal::new(1, Some(DEFAULT_REUSES));
        assert!(!r.oversized(16, 7)); // a size class over a short key
        assert!(!r.oversized(256, 0)); // too small to be worth it
        assert!(!r.oversized(4 * 1000 + 256, 1000));
        assert!(r.oversized(4 * 1000 + 257, 1000));
        assert!(r.oversized(64 << 10, 4));
        assert!(!r.oversized(usize::MAX, u32::MAX)); // saturated: kept
        assert_eq!(Renewal::spend(16, 7), 1);
        assert_eq!(Renewal::spend(4096, 0), 1); // no use reported: once per budget
        assert_eq!(Renewal::spend(4096, 1), 3);
        assert_eq!(Renewal::spend(1024, 10), 1); // mild waste: once per budget
        assert_eq!(Renewal::spend(64 << 10, 4), 60);
        assert_eq!(Renewal::spend(64 << 10, 1), 63);
        assert_eq!(Renewal::spend(usize::MAX, 1), 64);
        assert_eq!(Renewal::spend(usize::MAX, u32::MAX), 1);
        let mut r = Renewal::new(1, None);
        r.cycle = 5;
        assert!(!r.idle_for(5) && !r.idle_for(0));
        r.idle_cycles = Some(5);
        assert!(r.idle_for(0) && !r.idle_for(1));
        r.cycle = 2; // wrapped: stamp u32::MAX - 2 was 5 cycles ago
        assert!(r.idle_for(u32::MAX - 2) && !r.idle_for(u32::MAX - 1));
    }
}
