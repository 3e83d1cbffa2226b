//! When a spare value is renewed (dropped, and a fresh one handed out in its place): the
//! reuse budgets of free-list slots, and the generator that draws them.

use std::ops::RangeInclusive;

/// The default reuse budget of a free-list slot, in takes: protopool's README staggers the
/// replacement of pooled values over 5,000 to 6,000 uses. See
/// [`Arena::renew_after`](super::Arena::renew_after).
pub const DEFAULT_REUSES: RangeInclusive<u32> = 5_000..=6_000;

/// The renewal settings and the generator that draws budgets.
pub(super) struct Renewal {
    /// splitmix64's state.
    state: u64,
    /// Budgets are drawn uniformly from this range; `None`: never renew.
    pub(super) reuses: Option<RangeInclusive<u32>>,
}

impl Renewal {
    pub(super) fn new(seed: u64, reuses: Option<RangeInclusive<u32>>) -> Renewal {
        Renewal {
            state: seed,
            reuses,
        }
    }

    /// One step of splitmix64 (Steele, Lea and Flood 2014; the constants of Vigna's
    /// public-domain reference version).
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
}
