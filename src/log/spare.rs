//! Keeping the spare version within the log's reach.
//!
//! With a reader that lets go of its guards between publishes, `publish` reclaims the
//! version the previous publish retired and writes that one again: two versions alternate
//! and each operation is applied twice on the publish path. A third version (made at build
//! time, [`LogBuilder::versions`](super::LogBuilder::versions), or left idle when a reader
//! held a guard across a publish) waits in the pool for the next publish that finds the
//! alternating pair held. It lacks every batch since it was last written, so the log keeps
//! those for it. Left alone, the log would grow to [`max_log_ops`](super::LogBuilder::max_log_ops)
//! and drop them, and the next reader that held a guard at the wrong moment would make a
//! publish copy the whole table.
//!
//! So once the log holds more than half its bound, each publish takes the spare out of the
//! pool (when it is the stalest version and idle) and replays the oldest whole batches on
//! it, about twice the batch just published (plus 64 operations) at a time, applying each
//! operation by value ([`Absorb::absorb_owned`]) where no other version lacks it, and
//! dropping it from the log. The spare then never falls out of the log's reach, and the log
//! never holds more than about half its bound for it. Each operation is thus applied a
//! third time, later and in chunks, once the log passes half its bound: this bounds the
//! log's memory, not the work.

use super::{Absorb, LogWriter, UNSYNCED};

impl<T, O> LogWriter<T, O>
where
    T: Absorb<O> + Send + Sync + 'static,
{
    /// Replays on the stalest idle version the oldest whole batches it lacks, at least
    /// `2 × batch + 64` operations if it lacks that many (see the module docs). Does
    /// nothing if no version is idle in this thread's share of the pool, or if the one it
    /// hands out is not the stalest version the log keeps operations for (a reader holds
    /// the stalest: catching up another would shrink nothing) or is out of the log's reach.
    pub(super) fn catch_up_spare(&mut self, batch: usize) {
        let LogWriter {
            container,
            log,
            head,
            base,
            versions,
            stats,
            ..
        } = self;
        // Besides the spare, the version the last publish retired (on the retired list).
        if versions.len() < 2 {
            return;
        }
        // Only a version idle in this thread's share, where the pool puts back the versions
        // this writer published and the spare it caught up last: no walk over the other
        // threads' shares, no pass, no factory (a miss skips this publish's catch-up).
        let Some(mut spare) = container.pool().get_idle_here() else {
            return;
        };
        let had = spare.seq;
        if had == UNSYNCED || had < *base || versions.front() != Some(&had) {
            // Back to the pool as it was (dropping it gives it back).
            return;
        }
        versions.pop_front();
        // Until it is whole again, as in `publish`: an operation that panics sends it back
        // marked for a full copy.
        spare.seq = UNSYNCED;
        let others = versions.front().copied().unwrap_or(*head);
        let limit = 2 * batch + 64;
        let mut applied = 0;
        let mut upto = had;
        // Whole batches only, none past the current one: whether the operation numbered
        // `n` is past what this catch-up replays.
        let past = |n: u64, upto: u64, applied: usize| n > *head || (n > upto && applied >= limit);
        // First, from the front, the operations no other version lacks: their last
        // application, by value. Operations before `at` stay in the log (the spare holds
        // them, or another version lacks them).
        let mut at = 0;
        while let Some(&(n, _)) = log.get(at) {
            if past(n, upto, applied) {
                break;
            }
            if n <= had {
                at += 1;
                continue;
            }
            if at > 0 || n > others {
                break;
            }
            let (n, op) = log.pop_front().expect("front was just seen");
            spare.value.absorb_owned(op);
            *base = (*base).max(n);
            upto = n;
            applied += 1;
        }
        // Then those another version lacks, by reference, in one replay (a map reuses what
        // one operation removes for a later insert: `Absorb::absorb_all`). All of them are
        // numbered past `had`: the log is in order, and the loop above stopped at the first
        // such operation it did not apply.
        let mut end = at;
        while let Some(&(n, _)) = log.get(end) {
            if past(n, upto, applied) {
                break;
            }
            upto = n;
            applied += 1;
            end += 1;
        }
        spare.value.absorb_all(log.range(at..end).map(|(_, op)| op));
        stats.applied += applied as u64;
        spare.seq = upto;
        let at = versions.partition_point(|&v| v <= upto);
        versions.insert(at, upto);
        // `spare` goes back to the pool here, on top of its idle versions: the next
        // publish's reclamation puts the version just retired above it.
    }
}
