//! The publish's bounded wait for the version the last publish retired.
//!
//! With readers that let go of their guards between publishes, two versions alternate and
//! each operation is applied twice (as in left-right). A writer that publishes back to back
//! finds the version the last publish retired still read by the readers that acquired it
//! just before that swap: a lookup takes them a few hundred nanoseconds. Taking another
//! version then means replaying on it what it missed (a third application of each
//! operation, or a full copy for a version new from the factory). So a publish first waits
//! for that version, up to [`OpLogBuilder::max_wait`](super::OpLogBuilder::max_wait):
//! it spins briefly, looks at the hazard slots, and once no slot seems to hold the version
//! runs a reclamation pass over the pool's retired list, which returns it unless a guard
//! still holds it; and so on until the version left the list or the time is up. Past the
//! bound (a reader holds a guard for long, or a reader thread was descheduled while it
//! read) the publish takes another version as it would without the wait, and the next
//! publishes skip the wait ([`Backoff`]). The wait never blocks on a reader: it is bounded
//! by time, and each step is a look or a pass, which never waits either.
//!
//! left-right's and flashmap's writers wait the same way, but without a bound: for every
//! reader of the copy they write next.

use std::time::Duration;
#[cfg(not(loom))]
use std::time::Instant;

use super::OpLogStats;
use crate::reclaim::List;

/// Spins between two looks at the hazard slots while a publish waits: about the time a
/// lookup holds a guard.
const SPINS: u32 = 64;

/// Under loom, how many looks a wait makes at most, whatever the clock says: two, so that
/// a model takes both the wait that succeeds and the one that times out.
#[cfg(loom)]
const LOOM_LOOKS: u32 = 2;

/// Waits until the node at address `retired` (the version the last publish retired) is
/// off `list`, for at most `max`: spins, looks at the hazard slots without a barrier, and
/// once no slot seems to hold the version, runs a reclamation pass over `list`, which
/// returns it if no guard holds it. Counts the outcome in `stats` when it waited:
/// [`OpLogStats::waited`] or [`OpLogStats::wait_timeouts`]. Costs a relaxed load to begin
/// with, and while anything is retired the list's lock and a scan of the list; per look, a
/// scan of the hazard slots (loads); per pass, a barrier and another scan. Only the load
/// when nothing is retired; nothing when `max` is zero. Never yields: a thread that gives up its core while readers keep the cores busy
/// may wait a whole time slice (milliseconds) for it back.
pub(super) fn for_retired(
    list: &'static List,
    retired: usize,
    max: Duration,
    backoff: &mut Backoff,
    stats: &mut OpLogStats,
) {
    // `has_pending` first: a relaxed load, where `holds` takes the list's lock, and an
    // empty list (the version came back already) is the common case.
    if max.is_zero()
        || retired == 0
        || backoff.skip()
        || !list.has_pending()
        || !list.holds(retired)
    {
        return;
    }
    #[cfg(not(loom))]
    let start = Instant::now();
    #[cfg(loom)]
    let mut looks = 0u32;
    let mut spins = SPINS;
    loop {
        #[cfg(not(loom))]
        for _ in 0..spins {
            crate::sync::spin_hint();
        }
        // Under loom, one yield stands for the spin (a spin hint is a yield there).
        #[cfg(loom)]
        {
            let _ = spins;
            crate::sync::yield_now();
            looks += 1;
        }
        if List::looks_unprotected(retired) {
            list.reclaim();
            if !list.holds(retired) {
                stats.waited += 1;
                backoff.succeeded();
                return;
            }
            // A counted guard holds it (no slot shows one), or a slot was stored just
            // before the pass's barrier: fewer passes from now on.
            spins = spins.saturating_mul(2);
        }
        #[cfg(loom)]
        let out_of_time = looks >= LOOM_LOOKS;
        #[cfg(not(loom))]
        let out_of_time = start.elapsed() >= max;
        if out_of_time {
            stats.wait_timeouts += 1;
            backoff.timed_out();
            return;
        }
    }
}

/// After a wait that timed out, the publishes that skip the wait: 1, then twice as many
/// after each further timeout, up to [`MAX_SKIP`]; none after a wait that succeeded. A
/// reader that holds its guards for long would otherwise cost every publish the whole
/// wait; it costs one publish in [`MAX_SKIP`] at most.
#[derive(Debug, Default)]
pub(super) struct Backoff {
    /// Publishes still to skip.
    left: u32,
    /// Publishes to skip after the next timeout.
    next: u32,
}

/// The most publishes skipped between two waits.
const MAX_SKIP: u32 = 64;

impl Backoff {
    /// Whether this publish skips the wait (and counts it).
    fn skip(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        true
    }

    fn succeeded(&mut self) {
        self.next = 0;
    }

    fn timed_out(&mut self) {
        self.next = (self.next * 2).clamp(1, MAX_SKIP);
        self.left = self.next;
    }
}
