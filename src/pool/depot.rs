//! A depot: idle nodes behind a lock, in Go's two generations, that any thread may take
//! from or give to (the depot layer of Bonwick's magazine allocator; one per thread's
//! `Local`). Also [`NodePtr`], the owned pointer every free list moves.
//!
//! The depot never looks inside a node: it is generic over the node type `N`. It imports
//! nothing of the pool's.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use crate::sync::{AtomicUsize, Mutex, MutexGuard, Ordering};

/// The only handle on an idle node while it sits in a magazine or depot or moves between
/// them: sending it sends the node, and the object inside.
pub(crate) struct NodePtr<N>(pub(crate) NonNull<N>);

// SAFETY: a `NodePtr` is the unique owner of its node (see the type's docs), so sending it
// sends an `N`: `N: Send` is exactly what that needs.
unsafe impl<N: Send> Send for NodePtr<N> {}

/// Go's two generations of idle objects (`sync.Pool`'s `local` and `victim`): `trim` drops
/// the victims and demotes the primaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Generation {
    /// Put here since the last `trim` or decay tick.
    Primary,
    /// Idle since the tick before: the next one drops them.
    Victim,
}

/// A depot: two lists and the idle permits parked with them behind a lock, and their
/// counts readable without it.
pub(crate) struct Depot<N> {
    lists: Mutex<Lists<N>>,
    /// Mirror of `lists`' total length, stored when a [`DepotGuard`] unlocks. Read without
    /// the lock as a hint.
    len: AtomicUsize,
    /// Mirror of `Lists::parked`, stored when a [`DepotGuard`] unlocks; a hint, as `len`.
    parked: AtomicUsize,
}

/// The depot's contents.
pub(crate) struct Lists<N> {
    pub(crate) primary: Vec<NodePtr<N>>,
    pub(crate) victim: Vec<NodePtr<N>>,
    /// Set, under the lock, when the pool's last handle is dropped: from then on the depot
    /// takes nothing in (see `Local::donate`).
    pub(crate) closed: bool,
    /// Idle-idle permits parked here with no node: left by a thread that refilled its
    /// magazine from this depot, for whoever puts nodes in next (the owner's spill, a
    /// donation), so that permits go back the way nodes came without touching the shared
    /// budget (see `budget.rs`). At most `local::PARKED_MAX`.
    pub(crate) parked: usize,
}

/// A locked depot; updates the depot's length mirror when it unlocks.
pub(crate) struct DepotGuard<'a, N> {
    lists: MutexGuard<'a, Lists<N>>,
    len: &'a AtomicUsize,
    /// The length when locked: the mirror is stored only if it changed.
    locked_len: usize,
    parked: &'a AtomicUsize,
    /// `Lists::parked` when locked, as `locked_len`.
    locked_parked: usize,
}

impl<N> Depot<N> {
    /// A depot with room for `room` nodes in each list before it allocates.
    pub(crate) fn new(room: usize) -> Depot<N> {
        Depot {
            lists: Mutex::new(Lists {
                primary: Vec::with_capacity(room),
                victim: Vec::with_capacity(room),
                closed: false,
                parked: 0,
            }),
            len: AtomicUsize::new(0),
            parked: AtomicUsize::new(0),
        }
    }

    /// Locks the depot (uncontended: one atomic read-modify-write to take the lock, one to
    /// release it). The guard stores the mirrors on unlock if they changed.
    pub(crate) fn lock(&self) -> DepotGuard<'_, N> {
        let lists = self.lists.lock();
        let locked_len = lists.len();
        let locked_parked = lists.parked;
        DepotGuard {
            lists,
            len: &self.len,
            locked_len,
            parked: &self.parked,
            locked_parked,
        }
    }

    /// The parked permits at the last unlock: a hint, possibly stale.
    pub(crate) fn parked_hint(&self) -> usize {
        // Relaxed: a hint, as `len_hint`.
        self.parked.load(Ordering::Relaxed)
    }

    /// The length at the last unlock: a hint, possibly stale.
    pub(crate) fn len_hint(&self) -> usize {
        // Relaxed: a hint; whoever acts on it takes the lock first, or accepts a miss.
        self.len.load(Ordering::Relaxed)
    }
}

impl<N> Lists<N> {
    /// Nodes in both lists.
    pub(crate) fn len(&self) -> usize {
        self.primary.len() + self.victim.len()
    }

    /// Parks `n` idle permits here, keeping at most `max` parked; returns those that did
    /// not fit, for the caller to give back to the budget.
    pub(crate) fn park(&mut self, n: usize, max: usize) -> usize {
        let kept = n.min(max.saturating_sub(self.parked));
        self.parked += kept;
        n - kept
    }

    /// Takes up to `most` parked permits; returns how many.
    pub(crate) fn unpark(&mut self, most: usize) -> usize {
        let n = most.min(self.parked);
        self.parked -= n;
        n
    }

    /// The list of `generation`.
    pub(crate) fn list(&mut self, generation: Generation) -> &mut Vec<NodePtr<N>> {
        match generation {
            Generation::Primary => &mut self.primary,
            Generation::Victim => &mut self.victim,
        }
    }
}

impl<N> Drop for DepotGuard<'_, N> {
    fn drop(&mut self) {
        let len = self.lists.len();
        if len != self.locked_len {
            // Relaxed: a mirror for hints and statistics, written under the lock (this runs
            // before the `lists` field, the lock guard, is dropped).
            self.len.store(len, Ordering::Relaxed);
        }
        if self.lists.parked != self.locked_parked {
            // Relaxed: as above.
            self.parked.store(self.lists.parked, Ordering::Relaxed);
        }
    }
}

impl<N> Deref for DepotGuard<'_, N> {
    type Target = Lists<N>;
    fn deref(&self) -> &Lists<N> {
        &self.lists
    }
}

impl<N> DerefMut for DepotGuard<'_, N> {
    fn deref_mut(&mut self) -> &mut Lists<N> {
        &mut self.lists
    }
}
