//! The publish's bounded waits.
//!
//! **For the version the last publish retired.** With readers that let go of their guards
//! between publishes, two versions alternate and each operation is applied twice (as in
//! left-right). A writer that publishes back to back finds the version the last publish
//! retired still read by the readers that acquired it just before that swap: a lookup
//! takes them a few hundred nanoseconds. Taking another version then means replaying on it
//! what it missed (a third application of each operation). So a publish first waits for
//! that version, up to [`OpLogBuilder::max_wait`](super::OpLogBuilder::max_wait)
//! ([`for_retired`]): it spins briefly, looks at the hazard slots, and once no slot seems
//! to hold the version runs a reclamation pass over the pool's retired list, which returns
//! it unless a guard still holds it; and so on until the version left the list or the
//! time is up. Past the bound (a reader holds a guard for long, or a reader thread was
//! descheduled while it read) the publish takes another version, and the next publishes
//! skip this wait ([`Backoff`]).
//!
//! **For any version within reach, rather than a full copy.** When no version the op log
//! can bring up to date is idle (readers hold them all: more reader threads than the
//! versions built, some descheduled mid-read), the alternative is a version made by the
//! pool's factory or one that fell out of the op log's reach: a full copy, O(n). A publish
//! then waits for one to come back ([`for_within_reach`]), but only as long as a full copy
//! would take (the last one's time, timed at build time and at each full copy), and
//! copies after that: the rent-or-buy rule (ski rental) of spin-then-block locks, which
//! costs at most twice what the better of the two choices would have (Karlin, Manasse,
//! McGeoch and Owicki, "Competitive randomized algorithms for nonuniform problems",
//! Algorithmica 11(1), 1994). It yields between looks: the readers it waits for need a
//! core to let go.
//!
//! Neither wait blocks on a reader: each is bounded by time, and each step is a look or a
//! pass, which never waits either. left-right's and flashmap's writers wait the same way,
//! but without a bound: for every reader of the copy they write next.

use std::time::Duration;
#[cfg(not(loom))]
use std::time::Instant;

use super::{out_of_reach, spare, OpLogStats, Versioned};
use crate::pool::Writer;
use crate::Pooled;

/// Spins between two looks at the hazard slots while a publish waits: about the time a
/// lookup holds a guard.
const SPINS: u32 = 64;

/// Under loom, how many looks a wait makes at most, whatever the clock says: two, so that
/// a model takes both the wait that succeeds and the one that times out.
#[cfg(loom)]
const LOOM_LOOKS: u32 = 2;

/// Waits until the version named `retired` ([`Writer::retired_name`]: the version the last
/// publish retired) is off the pool's retired list, for at most `max`: spins, looks at the
/// hazard slots without a barrier, and once no slot seems to hold the version, runs a
/// reclamation pass over the list ([`Writer::reclaim`]), which
/// returns it if no guard holds it. Counts the outcome in `stats` when it waited:
/// [`OpLogStats::waited`] or [`OpLogStats::wait_timeouts`]. Costs a relaxed load to begin
/// with, and while anything is retired the list's lock and a scan of the list; per look, a
/// scan of the hazard slots (loads); per pass, a barrier and another scan. Only the load
/// when nothing is retired; nothing when `max` is zero. Never yields: a thread that gives
/// up its core while readers keep the cores busy may wait a whole time slice (milliseconds)
/// for it back, where this wait is for readers in the middle of a lookup.
pub(super) fn for_retired<T>(
    writer: Writer<'_, Versioned<T>>,
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
        || !writer.retired_pending()
        || !writer.still_retired(retired)
    {
        return;
    }
    let deadline = Deadline::after(max);
    let mut spins = SPINS;
    loop {
        spin(spins);
        if writer.looks_unprotected(retired) {
            writer.reclaim();
            if !writer.still_retired(retired) {
                stats.waited += 1;
                backoff.succeeded();
                return;
            }
            // A counted guard holds it (no slot shows one), or a slot was stored just
            // before the pass's barrier: fewer passes from now on.
            spins = spins.saturating_mul(2);
        }
        if deadline.passed() {
            stats.wait_timeouts += 1;
            backoff.timed_out();
            return;
        }
    }
}

/// Waits for an idle version within the op log's reach (numbered `base` or later), for at
/// most `max`: yields, runs a reclamation pass if anything is retired, and
/// looks for one as [`spare::take_within_reach`] does (putting back those out of reach as
/// victims); until one is found or the time is up. Counts the outcome in `stats`, as
/// [`for_retired`] does. For a publish that found every version within reach held, so
/// that the alternative is a full copy: `max` is then about what a full copy takes (see
/// the module docs). Costs per look a yield, a pass (a barrier and a scan of the hazard
/// slots) if something is retired, and the takes; nothing when `max` is zero.
pub(super) fn for_within_reach<'p, T>(
    writer: Writer<'p, Versioned<T>>,
    base: u64,
    max: Duration,
    stats: &mut OpLogStats,
) -> Option<Pooled<'p, Versioned<T>>> {
    if max.is_zero() {
        return None;
    }
    let deadline = Deadline::after(max);
    loop {
        // The readers that hold the versions need a core to let go of them: with more
        // busy threads than cores, a spin would hold one of theirs.
        crate::sync::yield_now();
        if writer.retired_pending() {
            writer.reclaim();
        }
        if let Some(version) = spare::take_within_reach(writer, base, stats) {
            debug_assert!(!out_of_reach(version.seq, base));
            stats.waited += 1;
            return Some(version);
        }
        if deadline.passed() {
            stats.wait_timeouts += 1;
            return None;
        }
    }
}

/// Spins `spins` times; under loom, one yield stands for the spin (a spin hint is a yield
/// there).
fn spin(spins: u32) {
    #[cfg(not(loom))]
    for _ in 0..spins {
        crate::sync::spin_hint();
    }
    #[cfg(loom)]
    {
        let _ = spins;
        crate::sync::yield_now();
    }
}

/// When a wait ends: `max` after it began; under loom, after `LOOM_LOOKS` looks, whatever
/// the clock says.
struct Deadline {
    #[cfg(not(loom))]
    end: Option<Instant>,
    #[cfg(loom)]
    looks: std::cell::Cell<u32>,
}

impl Deadline {
    fn after(max: Duration) -> Deadline {
        Deadline {
            // `None`: too far to represent, never reached.
            #[cfg(not(loom))]
            end: Instant::now().checked_add(max),
            #[cfg(loom)]
            looks: {
                let _ = max;
                std::cell::Cell::new(0)
            },
        }
    }

    /// Whether the wait is over: the time is up (under loom, the looks are made).
    fn passed(&self) -> bool {
        #[cfg(not(loom))]
        return self.end.is_some_and(|end| Instant::now() >= end);
        #[cfg(loom)]
        {
            self.looks.set(self.looks.get() + 1);
            self.looks.get() >= LOOM_LOOKS
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
