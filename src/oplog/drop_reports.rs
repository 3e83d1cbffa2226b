//! How the writer learns which versions the pool dropped.
//!
//! The writer keeps, for each version it may get back from the pool, the number of the last
//! batch it holds (`OpLog::versions`), and the op log keeps what the stalest of them lacks.
//! The pool may drop an idle version without the writer's knowledge (`trim`, a decay tick,
//! the idle bound of [`OpLogBuilder::max_idle`](super::OpLogBuilder::max_idle)). Left
//! listed, such a version would hold operations in the op log until it reached
//! [`max_ops`](super::OpLogBuilder::max_ops), and the spare's catch-up would look for it in
//! vain.
//!
//! So each version the writer makes holds an `Arc` of its writer's [`DropReports`], and
//! its drop (on whatever thread the pool drops it) writes its number there; the writer's
//! next publish forgets one entry with that number. Two versions may hold the same batch
//! (the extra versions made at build time, all at 0; a spare caught up to where another
//! is): the entries form a multiset, and forgetting one per report forgets the right count.
//! A version the writer no longer lists (out of the op log's reach) matches no entry.

use std::panic::RefUnwindSafe;

use super::OpLog;
use crate::sync::{AtomicBool, Mutex, Ordering};

/// Where a writer's versions report their drop: their numbers, behind a lock, and a flag
/// the writer reads without it. Shared by the writer and every version it made.
pub(crate) struct DropReports {
    /// Numbers of versions dropped since the writer last looked.
    dropped: Mutex<Vec<u64>>,
    /// Whether `dropped` holds any: written only under its lock, read by the writer
    /// without it.
    any: AtomicBool,
}

/// A panic cannot leave the lock's `Vec` half-written: under it run only `push` (which
/// aborts, not panics, when out of memory), `drain`, and the writer's `forget` (a search
/// and a removal in a `VecDeque`, which do not panic); a drain cut short by a panic still
/// empties the `Vec` when dropped.
impl RefUnwindSafe for DropReports {}

impl DropReports {
    pub(crate) fn new() -> DropReports {
        DropReports {
            // Room for a trim's worth of versions: a drop pushes without allocating.
            dropped: Mutex::new(Vec::with_capacity(4)),
            any: AtomicBool::new(false),
        }
    }

    /// Records that a version holding batch `seq` was dropped: a version's `Drop`. One
    /// uncontended lock and one store.
    pub(crate) fn report(&self, seq: u64) {
        let mut dropped = self.dropped.lock();
        dropped.push(seq);
        // Relaxed: the flag is a hint; the numbers pass through the lock, and the flag is
        // only written under it, so its last store always says whether `dropped` holds any.
        self.any.store(true, Ordering::Relaxed);
    }

    /// Calls `forget` with each number reported since the last call: one relaxed load if
    /// none was, else a lock. The writer's.
    fn take_each(&self, mut forget: impl FnMut(u64)) {
        // Relaxed: a hint. A stale `false` (a drop on another thread the writer has not
        // synchronized with yet) leaves the number for the next publish; once the drop
        // happens before this load (a join, a lock), coherence makes it read `true` or a
        // later store, and the later stores are made under the lock with `dropped` to
        // match. (A `swap` outside the lock would do too, but loom 0.7 lets a store slip
        // between the read and the write of a relaxed read-modify-write:
        // tokio-rs/loom#254.)
        if !self.any.load(Ordering::Relaxed) {
            return;
        }
        let mut dropped = self.dropped.lock();
        self.any.store(false, Ordering::Relaxed);
        for seq in dropped.drain(..) {
            forget(seq);
        }
    }
}

impl std::fmt::Debug for DropReports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DropReports")
            .field("dropped", &*self.dropped.lock())
            .finish()
    }
}

impl<T, O> OpLog<T, O> {
    /// Forgets the entries of the versions the pool dropped since the last publish (module
    /// docs).
    pub(super) fn forget_dropped_versions(&mut self) {
        let versions = &mut self.versions;
        self.drop_reports.take_each(|seq| {
            if let Ok(at) = versions.binary_search(&seq) {
                versions.remove(at);
            }
        });
    }
}
