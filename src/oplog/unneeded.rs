//! Dropping the operations no version needs any longer, a bounded number per publish.
//!
//! An operation leaves the log once every version holds it. Usually that is a batch or two
//! per publish. But when the version that held the log back goes (a reader held it past
//! [`max_ops`](super::OpLogBuilder::max_ops) and the log truncated past it, or the
//! pool dropped it), the log may hold tens of thousands of operations that no version
//! lacks any more, and dropping them all at the next publish frees every key and value
//! they own: at the default bound, 65,536 operations of a `HashMap<String, Vec<String>>`
//! took 5 ms of one publish (`examples/publish_loop.rs 80000 2 1`). So a publish that
//! finds more than [`DROP_AT_ONCE`] such operations at the log's front splits them off as
//! they are (`Segments::split_front`: whole segments move, and the few in the segment where
//! they end are moved one by one), and each publish drops a bounded number of them
//! afterwards, once its batch is visible, the emptied segments going back to the log for
//! reuse (a few) or freed one at a time (32 KiB each). Before the log was in segments, the
//! last of those drops freed the whole log's 4 MiB buffer on one publish: 0.5-13 ms
//! (`log/segments.rs`).

use super::{OpLog, Segments};

/// The most operations no version needs that a publish drops with the log's front; past
/// it, they are set apart and dropped over the following publishes (module docs).
pub(super) const DROP_AT_ONCE: usize = 1024;

/// Sets apart the first `n` operations of `log`, which no version needs, if they are more
/// than [`DROP_AT_ONCE`], and moves `base` past them.
pub(super) fn set_apart<O>(
    log: &mut Segments<(u64, O)>,
    base: &mut u64,
    unneeded: &mut Vec<Segments<(u64, O)>>,
    n: usize,
) {
    if n <= DROP_AT_ONCE {
        return;
    }
    let ops = log.split_front(n);
    if let Some(&(last, _)) = ops.back() {
        *base = (*base).max(last);
    }
    unneeded.push(ops);
}

impl<T, O> OpLog<T, O> {
    /// Drops up to `budget` of the operations set apart, their emptied segments kept for
    /// the log's reuse (up to a few).
    pub(super) fn drop_unneeded(&mut self, mut budget: usize) {
        let OpLog { log, unneeded, .. } = self;
        while budget > 0 {
            let Some(ops) = unneeded.last_mut() else {
                return;
            };
            budget -= log.drop_front_of(ops, budget);
            if ops.is_empty() {
                unneeded.pop();
            }
        }
    }

    /// How many operations wait to be dropped.
    pub(super) fn unneeded_len(&self) -> usize {
        self.unneeded.iter().map(Segments::len).sum()
    }
}
