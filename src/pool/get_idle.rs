//! Getters that hand out idle objects only, for [`Writer`](super::Writer)'s takes: unlike [`Pool::get`] they never
//! run the factory or a reclamation pass, and return `None` instead. Each says where it
//! looks. With a live bound they return `None` at once: that pool's getters take live
//! permits, which these do not.
//!
//! Depots are where a reclamation on a thread returns the versions it finds unprotected
//! (to the depot of the thread that published each) and where `Pooled::put_in_depot` puts
//! an object; a thread's magazine holds what its own `Pooled`s gave back.

use super::depot::Generation;
use super::{Pool, Pooled};

impl<T> Pool<T> {
    /// The object put last into the calling thread's depot, reset, if any: the newest of
    /// the versions that reclamations returned to this thread (it published them) and of
    /// the objects it put there with `Pooled::put_in_depot`. [`get`](Pool::get) would first
    /// hand out whatever its magazine holds instead. `None` if the depot is empty, the
    /// thread has not used the pool yet, or the pool has a live bound. Costs a thread-local
    /// lookup, the depot's lock, one atomic read-modify-write on the idle budget, and the
    /// reset.
    // layout: one caller (`Writer::take_returned`; and `get_idle_here` here)
    pub(super) fn get_returned(&self) -> Option<Pooled<'_, T>> {
        let shared = &*self.shared;
        if shared.max_live.is_some() {
            return None;
        }
        let local = shared.local_fast()?;
        let node = shared.take_from_depot(local, Generation::Primary)?;
        self.hand_out(node, Some(local))
    }

    /// An idle object from the calling thread's own share only, reset: its magazine's
    /// newest, else [`get_returned`](Pool::get_returned)'s. Never takes from other threads.
    /// `None` when this thread holds nothing idle, or as for `get_returned`. Costs a
    /// thread-local lookup and the magazine's plain loads and stores, or else
    /// `get_returned`'s; plus the reset.
    fn get_idle_here(&self) -> Option<Pooled<'_, T>> {
        let shared = &*self.shared;
        if shared.max_live.is_some() {
            return None;
        }
        let local = shared.local_fast()?;
        // SAFETY: `local_fast` returns the calling thread's own `Local`, of this pool.
        match unsafe { local.pop(&shared.budget) } {
            Some(node) => self.hand_out(node, Some(local)),
            None => self.get_returned(),
        }
    }

    /// An idle object, reset, from anywhere a thread can take one without the trim's
    /// handshake: the calling thread's share (magazine, then depot), else the newest object
    /// in the primary list of the first other thread's depot whose length hint shows one.
    /// Never reaches another thread's magazine. `None` if all of those are empty (or seem
    /// so), or the pool has a live bound. Costs as [`get_returned`](Pool::get_returned),
    /// then a relaxed load per other thread's share and a lock of one with something idle.
    // layout: one caller (`Writer::take_idle`)
    pub(super) fn get_idle_anywhere(&self) -> Option<Pooled<'_, T>> {
        if let Some(found) = self.get_idle_here() {
            return Some(found);
        }
        let shared = &*self.shared;
        if shared.max_live.is_some() {
            return None;
        }
        let own = shared.local_fast();
        shared
            .locals
            .iter()
            .filter(|local| !own.is_some_and(|own| std::ptr::eq(*local, own)))
            .filter(|local| local.depot_len_hint() > 0)
            .find_map(|local| shared.take_from_depot(local, Generation::Primary))
            .and_then(|node| self.hand_out(node, own))
    }

    /// How many objects the calling thread's depot holds, as a relaxed hint (possibly
    /// stale): where [`get_returned`](Pool::get_returned) looks. 0 if the thread has not
    /// used the pool yet. A thread-local lookup and a relaxed load.
    // layout: one caller (`Writer::returned_hint`)
    pub(super) fn returned_hint(&self) -> usize {
        self.shared
            .local_fast()
            .map_or(0, |local| local.depot_len_hint())
    }
}
