//! The getters a change log's writer (`log.rs`, `log/spare.rs`) uses besides `get`: they
//! hand out only idle objects, from the places the writer's versions come back to, and
//! never run a reclamation pass or the factory.

use super::depot::Generation;
use super::{Pool, Pooled};

impl<T> Pool<T> {
    /// The version a reclamation returned to this thread's depot last, if any: the
    /// freshest of those the thread published, where [`get`](Pool::get) would first hand
    /// out whatever its magazine holds (an idle object put back by a dropped `Pooled`,
    /// however old). For the change log's writer (`log.rs`), which replays less on a
    /// fresher version. `None` (and the caller gets as usual) if the depot is empty, the
    /// thread has no share looked up yet, or the pool has a live bound (whose getters take
    /// permits). Costs the depot's lock (uncontended: one atomic read-modify-write to take,
    /// one to release) and the reset.
    pub(crate) fn get_returned(&self) -> Option<Pooled<'_, T>> {
        let shared = &*self.shared;
        if shared.max_live.is_some() {
            return None;
        }
        let local = shared.local_fast()?;
        let node = shared.take_from_depot(local, Generation::Primary)?;
        self.hand_out(node, Some(local))
    }

    /// An idle object from the calling thread's own share only: its magazine, else (as
    /// [`get_returned`](Pool::get_returned)) its depot. Never steals from other threads,
    /// never runs a reclamation pass or the factory: `None` when this thread holds nothing
    /// idle, or as for `get_returned`. Costs a thread-local lookup and the magazine's plain
    /// loads and stores, or else `get_returned`'s depot lock; plus the reset.
    pub(crate) fn get_idle_here(&self) -> Option<Pooled<'_, T>> {
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

    /// An idle object from anywhere a thread can take one without a handshake: the calling
    /// thread's share ([`get_idle_here`](Pool::get_idle_here)), else the newest object of
    /// another thread's depot whose length hint shows one. Never runs a reclamation pass or
    /// the factory, never reaches another thread's magazine. For the spare's catch-up
    /// (`log/spare.rs`), whose versions are where the writer left them: on another thread
    /// if the writer moved (a writer inside an async task). Costs `get_idle_here`, then a
    /// relaxed load per other thread's share and a lock on one with something idle.
    pub(crate) fn get_idle_anywhere(&self) -> Option<Pooled<'_, T>> {
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

    /// How many objects the calling thread's depot holds, as a relaxed hint: where a
    /// reclamation on this thread returns the versions it finds unprotected, and where the
    /// change log's writer puts its spares. 0 if the thread has no share looked up. For
    /// the spare's catch-up (`log/spare.rs`), to notice a version coming back. One
    /// thread-local lookup and one relaxed load.
    pub(crate) fn returned_hint(&self) -> usize {
        self.shared
            .local_fast()
            .map_or(0, |local| local.depot_len_hint())
    }
}
