//! The container's handle on a version: the one door through which a container touches the
//! pool's nodes.
//!
//! A container keeps its current version as a node pointer and never looks inside the
//! node: it publishes and unpublishes objects, takes, clones and drops counted references,
//! and reads the object through [`Version`], and it hands [`Version::retired`]'s entry to
//! the retired list, so that a version the reclaimer frees comes straight back here, to
//! the pool, rather than through the container. The node's layout and the pool's shared
//! state stay private to the pool.

use std::ptr::{self, NonNull};

use super::pooled::Publishable;
pub(crate) use super::shared::PoolNode;
use super::shared::{self, Shared};
use super::Pool;
use crate::reclaim::Retired;
use crate::sync::Arc;

/// A node that is, or was, a container's version.
///
/// A plain pointer: it owns nothing by itself (a [`Guard`](crate::Guard) owns a counted
/// reference or a hazard slot beside it), so every method that reaches the node is
/// `unsafe` and says what the caller must hold.
pub(crate) struct Version<T> {
    node: NonNull<PoolNode<T>>,
}

impl<T> Clone for Version<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Version<T> {}

impl<T> PartialEq for Version<T> {
    fn eq(&self, other: &Self) -> bool {
        self.node == other.node
    }
}

impl<T> Eq for Version<T> {}

impl<T> Version<T> {
    /// The version `ptr` (a value of a container's `current`) points to; `None` for null.
    #[inline]
    pub(crate) fn from_ptr(ptr: *mut PoolNode<T>) -> Option<Version<T>> {
        NonNull::new(ptr).map(|node| Version { node })
    }

    /// The version `node` points to.
    #[inline]
    pub(crate) fn from_non_null(node: NonNull<PoolNode<T>>) -> Version<T> {
        Version { node }
    }

    /// The node pointer, as a container's `current` stores it.
    #[inline]
    pub(crate) fn as_ptr(self) -> *mut PoolNode<T> {
        self.node.as_ptr()
    }

    /// The node's address, type-erased, as hazard slots and the retired list keep it.
    #[inline]
    pub(crate) fn erase(self) -> NonNull<()> {
        self.node.cast()
    }

    /// Marks `new` published by the calling thread, with its keepalive (a handle on
    /// `pool`'s shared state) and its home depot (the calling thread's), for a container to
    /// store; returns its version and the pool handle its guard held (for
    /// [`unpublish`](Self::unpublish) to rebuild the guard).
    ///
    /// `new` must come from `pool`; the container checks it.
    pub(crate) fn publish<P: Publishable<T>>(new: P, pool: &Pool<T>) -> (Version<T>, P::Handle) {
        let (node, handle) = new.into_raw();
        let node = node.cast::<PoolNode<T>>();
        let pool = Arc::clone(&pool.shared);
        // The publishing thread (the writer) is where the version goes back to, whose next
        // `get` looks in its own depot first.
        let home = Shared::local(&pool).map_or(ptr::null(), ptr::from_ref);
        // SAFETY: `into_raw` handed the checked-out node over, so the caller owns it
        // exclusively (stale readers touch only `refs`) and it holds no keepalive; the
        // caller's Release swap publishes it next.
        unsafe { node.as_ref().publish(home, pool) };
        (Version { node }, handle)
    }

    /// Undoes [`publish`](Self::publish) for a version that never became visible (a
    /// container's compare-and-swap failed): the node is checked out again, the pool handle
    /// it held is dropped, and the guard is rebuilt from `handle`.
    ///
    /// # Safety
    ///
    /// `self` and `handle` came from one call of `publish::<P>`, and the version was never
    /// stored where a reader could find it.
    pub(crate) unsafe fn unpublish<P: Publishable<T>>(self, handle: P::Handle) -> P {
        // SAFETY: per the caller, nobody else owns the node (stale readers touch only `refs`,
        // and leave it as they found it).
        drop(unsafe { self.node.as_ref().take_keepalive() });
        // SAFETY: the node and `handle` came from `into_raw` of a `P` (in `publish`), and
        // the node is checked out again.
        unsafe { P::from_raw(self.erase(), handle) }
    }

    /// Takes a counted reference on a version reached through a pointer that may be stale,
    /// unless its count is zero; returns whether it did
    /// ([`RefCount::try_increment`](crate::refcount::RefCount::try_increment)).
    ///
    /// # Safety
    ///
    /// The node's memory is valid for the call: it was read from the `current` of a
    /// container whose pool has a handle (nodes are type-stable, see `pool/node.rs`).
    #[inline]
    pub(crate) unsafe fn try_acquire(self) -> bool {
        // SAFETY: per the caller; only the count is borrowed, never the object.
        unsafe { PoolNode::refs_at(self.node.as_ptr()) }.try_increment()
    }

    /// Adds a counted reference on the version: one atomic increment.
    ///
    /// # Safety
    ///
    /// The caller keeps the version's count at least one for the call: it holds a counted
    /// reference, or protects the version with a hazard slot (then the container holds one
    /// while the version is current, and the retired list while any hazard slot protects it).
    #[inline]
    pub(crate) unsafe fn clone_ref(self) {
        // SAFETY: per the caller, the node is live.
        let refs = unsafe { self.node.as_ref().refs() };
        debug_assert!(refs.load() >= 1, "a reference cloned from a count of zero");
        refs.increment();
    }

    /// Drops one counted reference on a container version; if it was the last, the node
    /// goes back to the depot of the thread that published it.
    ///
    /// # Safety
    ///
    /// The caller owns one counted reference on the version, consumed here, and the node
    /// is a container version (it holds its pool in its keepalive).
    #[inline]
    pub(crate) unsafe fn release(self) {
        // SAFETY: per the caller.
        unsafe { shared::release(self.node, None) }
    }

    /// Drops one counted reference taken by [`try_acquire`](Self::try_acquire) on a version
    /// that turned out not to be current: the node may meanwhile be checked out (so hold
    /// no keepalive), and goes back to `pool` if this was its last reference.
    ///
    /// # Safety
    ///
    /// The caller owns one counted reference on the version, consumed here, and the node
    /// belongs to `pool`.
    pub(crate) unsafe fn release_to(self, pool: &Pool<T>) {
        // SAFETY: per the caller.
        unsafe { shared::release(self.node, Some(&pool.shared)) }
    }

    /// The object.
    ///
    /// # Safety
    ///
    /// The caller holds a counted reference on the version, or protects it with a hazard
    /// slot, for `'a`.
    #[inline]
    pub(crate) unsafe fn object<'a>(self) -> &'a T {
        // SAFETY: per the caller the node is live and its object initialised; a version is
        // only read, never mutated.
        unsafe { PoolNode::object(self.node) }
    }

    /// The version's count of counted references, a reading that other threads may change
    /// at any moment.
    ///
    /// # Safety
    ///
    /// As for [`object`](Self::object), for the call.
    pub(crate) unsafe fn ref_count(self) -> usize {
        // SAFETY: per the caller, the node is live.
        unsafe { self.node.as_ref() }.refs().load()
    }

    /// The retired-list entry for this version, which the caller retires with the
    /// container's counted reference on it.
    ///
    /// # Safety
    ///
    /// `fenced` only if every hazard-slot protection of this version while it was current was
    /// followed by a full fence before the reader's re-load (see `Retired::new`).
    pub(crate) unsafe fn retired(self, fenced: bool) -> Retired {
        // SAFETY: `claim_retired::<T>` takes a `PoolNode<T>`'s count from one to zero, and
        // `return_retired::<T>` gives a node so claimed back to its pool (a container
        // version holds its pool in its keepalive); both run on any thread. `fenced` is
        // the caller's promise.
        unsafe {
            Retired::new(
                self.erase(),
                fenced,
                Self::claim_retired,
                Self::return_retired,
            )
        }
    }

    /// The reclaimer's claim on a retired version: its count from one (the retired list's
    /// reference) to zero; `false` if counted guards still hold it.
    ///
    /// # Safety
    ///
    /// `node` is a live `PoolNode<T>` (the retired list's reference keeps it so).
    unsafe fn claim_retired(node: NonNull<()>) -> bool {
        // SAFETY: per the caller.
        unsafe { node.cast::<PoolNode<T>>().as_ref() }
            .refs()
            .try_take_last()
    }

    /// Gives a claimed retired version back to its pool; `true` if the pool dropped its
    /// object.
    ///
    /// # Safety
    ///
    /// `node` is a `PoolNode<T>` that [`claim_retired`](Self::claim_retired) claimed for
    /// the caller, which owns it.
    unsafe fn return_retired(node: NonNull<()>) -> bool {
        // SAFETY: per the caller; a retired version holds its pool in its keepalive.
        unsafe { shared::give_back_version(node.cast::<PoolNode<T>>(), None) }
    }
}
