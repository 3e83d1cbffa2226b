//! Forgetting the versions the pool dropped.
//!
//! The writer keeps, for each version it may get back from the pool, the number of the
//! last batch it holds (`OpLog::versions`), and the log keeps what the stalest of them
//! lacks. The pool may drop an idle version without the writer's knowledge: `trim`, a decay
//! tick, the idle bound ([`OpLogBuilder::max_idle`](super::OpLogBuilder::max_idle)). Its entry
//! then stayed until the log reached its bound and truncated past it: the log grew to
//! [`max_ops`](super::OpLogBuilder::max_ops) for a version that no longer existed,
//! counted what it dropped as lacked (`OpLogStats::truncated`), and the spare's catch-up
//! looked for it in vain.
//!
//! So each version the writer makes carries a handle on its writer's graveyard, and its
//! drop (on whatever thread the pool drops it) writes its number there; the writer's next
//! publish forgets one entry with that number. Two versions may hold the same batch (the
//! extra versions made at build time, all at 0; a spare caught up to where another is):
//! the entries form a multiset, and forgetting one of equal numbers forgets the right
//! count. A version the writer no longer tracks (out of the log's reach: numbered below
//! `base`, whose entries are gone) matches no entry.

use super::OpLog;
use crate::sync::{AtomicBool, Mutex, Ordering};

/// Where a writer's versions report their drop: their numbers, behind a lock, and a flag
/// the writer reads without it. Shared by the writer and every version it made (each holds
/// an `Arc`).
pub(crate) struct Graveyard {
    /// Numbers of versions dropped since the writer last looked.
    dead: Mutex<Vec<u64>>,
    /// Whether `dead` holds any: written only under its lock, read by the writer without
    /// it.
    any: AtomicBool,
}

impl Graveyard {
    pub(crate) fn new() -> Graveyard {
        Graveyard {
            // Room for a trim's worth of versions: a drop pushes without allocating.
            dead: Mutex::new(Vec::with_capacity(4)),
            any: AtomicBool::new(false),
        }
    }

    /// Records that a version holding batch `seq` was dropped: a version's `Drop`. One
    /// uncontended lock and one store.
    pub(crate) fn bury(&self, seq: u64) {
        let mut dead = self.dead.lock();
        dead.push(seq);
        // Relaxed: the flag is a hint; the numbers pass through the lock, and the flag is
        // only written under it, so its last store always says whether `dead` holds any.
        self.any.store(true, Ordering::Relaxed);
    }

    /// Takes the numbers recorded since the last call, calling `forget` with each: nothing
    /// but a relaxed load if none was. The writer's.
    fn exhume(&self, mut forget: impl FnMut(u64)) {
        // Relaxed: a hint. A stale `false` (a drop on another thread the writer has not
        // synchronized with yet) leaves the number for the next publish; once the drop
        // happens before this load (a join, a lock), coherence makes it read `true` or a
        // later store, and the later stores are made under the lock with `dead` to match.
        // (A `swap` outside the lock would do too, but loom 0.7 lets a store slip between
        // the read and the write of a relaxed read-modify-write: tokio-rs/loom#254.)
        if !self.any.load(Ordering::Relaxed) {
            return;
        }
        let mut dead = self.dead.lock();
        self.any.store(false, Ordering::Relaxed);
        for seq in dead.drain(..) {
            forget(seq);
        }
    }
}

impl std::fmt::Debug for Graveyard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graveyard")
            .field("dead", &*self.dead.lock())
            .finish()
    }
}

impl<T, O> OpLog<T, O> {
    /// Forgets the entries of the versions the pool dropped since the last publish (module
    /// docs).
    pub(super) fn forget_dropped_versions(&mut self) {
        let versions = &mut self.versions;
        self.graveyard.exhume(|seq| {
            if let Ok(at) = versions.binary_search(&seq) {
                versions.remove(at);
            }
        });
    }
}
