//! Dropping the operations no version needs any longer, a bounded number per publish.
//!
//! An operation leaves the op log once every version holds it: usually a batch or two per
//! publish. But when the version that held the op log back goes (a reader held it past
//! [`max_ops`](super::OpLogBuilder::max_ops) and the op log dropped what it lacked, or the
//! pool dropped it), up to `max_ops` operations may be needed by no version at once, and
//! dropping them all would free every key and value they own on one publish. So a publish
//! that finds more than [`DROP_AT_ONCE`] of them at the op log's front splits them off
//! (`Segments::split_front`: whole segments move, the few in the segment where they end
//! are moved one by one), and each later publish drops a bounded number of them once its
//! batch is visible: the emptied segments go back to the op log for reuse (a few) or are
//! freed one at a time.

use super::{OpLog, Segments};

/// The most operations no version needs that a publish drops at once with the op log's
/// front; past it, they are set apart and dropped over the following publishes.
pub(super) const DROP_AT_ONCE: usize = 1024;

/// Sets apart the first `n` operations of `log`, which no version needs, if they are more
/// than [`DROP_AT_ONCE`], and moves `base` past them.
pub(super) fn set_apart<O>(
    log: &mut Segments<(u64, O)>,
    base: &mut u64,
    dropping: &mut Vec<Segments<(u64, O)>>,
    n: usize,
) {
    if n <= DROP_AT_ONCE {
        return;
    }
    let ops = log.split_front(n);
    if let Some(&(last, _)) = ops.back() {
        *base = (*base).max(last);
    }
    dropping.push(ops);
}

impl<T, O> OpLog<T, O> {
    /// Drops up to `budget` of the operations set apart, their emptied segments kept for
    /// the op log's reuse (up to a few).
    pub(super) fn drop_some(&mut self, mut budget: usize) {
        let OpLog { log, dropping, .. } = self;
        while budget > 0 {
            let Some(ops) = dropping.last_mut() else {
                return;
            };
            budget -= log.drop_front_of(ops, budget);
            if ops.is_empty() {
                dropping.pop();
            }
        }
    }

    /// How many operations wait to be dropped.
    pub(super) fn dropping_len(&self) -> usize {
        self.dropping.iter().map(Segments::len).sum()
    }
}
