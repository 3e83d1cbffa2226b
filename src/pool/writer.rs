//! [`Writer`]: the writer's side of a pool, one interface for every writer (module docs of
//! `pool.rs`, "The writer's side").

use std::fmt;

use super::version::Version;
use super::{Pool, Pooled};
use crate::reclaim::List;

/// What a writer of a container's versions may ask of their pool and of the pool's
/// reclamation: hand out a version (an idle one, one a pass returns, or a new one), put
/// one back or set it aside, retire the version it replaced, and look at and pass over
/// the versions retired since. [`Container`](crate::Container)'s writers (`get_new`,
/// `rcu`, `update`) and the op log's `publish` both go through it; nothing else outside
/// the pool reaches the getters and the retired list behind it.
///
/// A borrowed pool handle: making one costs nothing, and every method costs what the
/// pool's or the retired list's own method it names costs (each says which).
pub(crate) struct Writer<'p, T> {
    pool: &'p Pool<T>,
}

impl<T> Pool<T> {
    /// The writer's side of this pool ([`Writer`]).
    #[inline(always)]
    pub(crate) fn writer(&self) -> Writer<'_, T> {
        Writer { pool: self }
    }
}

impl<T> Clone for Writer<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Writer<'_, T> {}

impl<T> fmt::Debug for Writer<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never blocks: `Pool`'s `Debug` reads atomics only.
        f.debug_struct("Writer")
            .field("pool", self.pool)
            .finish_non_exhaustive()
    }
}

/// Taking a version: each says where it looks, and none waits for a reader.
impl<'p, T> Writer<'p, T> {
    /// What [`Pool::get`] hands out: an idle version, else one a reclamation pass returns,
    /// else a new one from the factory (at a live bound, it waits as `get` says). A
    /// container's `get_new` and `rcu`.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn get(self) -> Pooled<'p, T> {
        self.pool.get()
    }

    /// The version returned last to the calling thread's depot: usually the one a writer
    /// published last but one, which a pass just returned (`Pool::get_returned`). `None`
    /// if there is none, or the pool has a live bound.
    pub(crate) fn take_returned(self) -> Option<Pooled<'p, T>> {
        self.pool.get_returned()
    }

    /// [`get`](Self::get) without the factory: an idle version, or one a reclamation pass
    /// returned; `None` if neither (`Pool::get_unless_new`).
    pub(crate) fn take_unless_new(self) -> Option<Pooled<'p, T>> {
        self.pool.get_unless_new()
    }

    /// An idle version from the calling thread's share or another thread's depot; no
    /// pass, no factory (`Pool::get_idle_anywhere`).
    pub(crate) fn take_idle(self) -> Option<Pooled<'p, T>> {
        self.pool.get_idle_anywhere()
    }

    /// How many versions the calling thread's depot holds, a relaxed hint: where
    /// [`take_returned`](Self::take_returned) looks (`Pool::returned_hint`).
    pub(crate) fn returned_len_hint(self) -> usize {
        self.pool.returned_hint()
    }

    /// A new version from the factory, whatever is idle, for a pool without a live bound:
    /// the writer that found nothing to take builds one (`Pool::get_made`).
    pub(crate) fn build(self) -> Pooled<'p, T> {
        self.pool.get_made()
    }
}

/// Giving a version back without publishing it.
impl<'p, T> Writer<'p, T> {
    /// Puts `version` back in the calling thread's depot, on top: the next
    /// [`take_returned`](Self::take_returned) here hands it out first
    /// (`Pooled::put_in_depot`).
    pub(crate) fn put_back(self, version: Pooled<'p, T>) {
        Pooled::put_in_depot(version);
    }

    /// Sets `version` aside as a victim in the calling thread's depot: taken only when
    /// nothing else is idle, dropped by the next trim or decay tick
    /// (`Pooled::put_in_depot_as_victim`).
    pub(crate) fn set_aside(self, version: Pooled<'p, T>) {
        Pooled::put_in_depot_as_victim(version);
    }

    /// Drops `version` rather than keep it idle, counted as a trim (`Pooled::discard`).
    pub(crate) fn discard(self, version: Pooled<'p, T>) {
        Pooled::discard(version);
    }
}

/// Retiring a version, and the retired versions' reclamation.
impl<T> Writer<'_, T> {
    /// The pool's retired list: where its container versions wait for their readers.
    fn list(self) -> &'static List {
        self.pool.shared.retired
    }

    /// Hands `old`, just swapped out of its container with the container's counted
    /// reference on it, to the pool's retired list, where it waits until no reader holds
    /// it (`reclaim::retire`: a lock and a push, sometimes a pass).
    ///
    /// # Safety
    ///
    /// `old` is no longer any container's current version, and the caller hands over the
    /// container's counted reference on it. `fenced` only if every hazard-slot protection
    /// of `old` while it was current was followed by a full fence before the reader's
    /// re-load (`Version::retired`).
    pub(crate) unsafe fn retire(self, old: Version<T>, fenced: bool) {
        // SAFETY: per the caller; the list is this pool's, as `retire` requires of a
        // version of this pool.
        unsafe { crate::reclaim::retire(self.list(), old.retired(fenced)) }
    }

    /// The name under which the retired list knows `version` once it is published and
    /// retired: its node's address, only ever compared (`Pooled::node_addr`).
    pub(crate) fn retired_name(self, version: &Pooled<'_, T>) -> usize {
        Pooled::node_addr(version)
    }

    /// Whether anything was retired and not yet reclaimed, as of a recent moment: one
    /// relaxed load (`List::has_pending`).
    pub(crate) fn retired_pending(self) -> bool {
        self.list().has_pending()
    }

    /// Whether the version named `name` ([`retired_name`](Self::retired_name)) is retired
    /// now, not taken by a pass: the list's lock and a scan (`List::holds`).
    pub(crate) fn still_retired(self, name: usize) -> bool {
        self.list().holds(name)
    }

    /// Whether no hazard slot seems to protect the version named `name`: a scan without a
    /// barrier, a hint only (`List::looks_unprotected`).
    pub(crate) fn looks_unprotected(self, name: usize) -> bool {
        List::looks_unprotected(name)
    }

    /// A reclamation pass over the retired versions; how many went back to the pool
    /// (`List::reclaim`: a barrier and a scan of the hazard slots).
    pub(crate) fn reclaim(self) -> usize {
        self.list().reclaim()
    }

    /// [`reclaim`](Self::reclaim), unless the pass would need the heavy barrier and
    /// `heavy` is `false`; `None` when no pass ran (`List::reclaim_unless_heavy`).
    pub(crate) fn reclaim_unless_heavy(self, heavy: bool) -> Option<usize> {
        self.list().reclaim_unless_heavy(heavy)
    }

    /// How many passes over the retired versions have ended: a pass that ends after this
    /// read may have returned what was retired before it (`List::passes_ended`).
    pub(crate) fn passes_ended(self) -> usize {
        self.list().passes_ended()
    }
}
