//! The state and lock-free protocol both container flavours share.
//!
//! The container holds one counted reference on its current version and a pointer to it in
//! `current`. Readers normally hold no counted reference at all: a [`Guard`] is a *hazard
//! slot* of the reading thread that names the version (see `hazard.rs`), and the version
//! goes back to its pool once no slot names it and no counted reference is left. Go's
//! original takes a read lock around "load the pointer, increment its count"; here neither
//! is needed on the fast path.
//!
//! # Reader (`acquire`)
//!
//! With a free slot in the thread's block (the fast path; no atomic read-modify-write, no
//! lock, no write to a line another reader reads):
//!
//! 1. Load `current` (`Acquire`: makes the version's contents visible).
//! 2. Store the pointer in the slot and issue the light barrier (`barrier.rs`).
//! 3. Re-load `current` (`Acquire`). The same pointer: return a guard on it. Another: empty
//!    the slot and start over with the new pointer.
//!
//! Without one (all [`SLOTS`](crate::hazard::SLOTS) held by this thread's guards, or the
//! thread is exiting), a *counted* guard, as before hazard slots:
//!
//! 1. Load `current` (`Acquire`: makes the node's memory visible).
//! 2. Increment the node's count *unless it is zero*
//!    ([`RefCount::try_increment`](crate::refcount::RefCount::try_increment), `Acquire`).
//!    A zero count means idle: nothing is written, start over.
//! 3. Re-load `current` (`Acquire`). The same pointer: return a counted guard. Another:
//!    drop the reference (if it was the last, recycle the node, as any last holder does)
//!    and start over.
//!
//! Neither reader reads the object before its step 3 succeeds. Nodes are type-stable (see
//! `pool/node.rs`): a node's memory lives while its pool has a handle, and the container
//! holds one, so steps 1-3 may touch a node that was recycled meanwhile.
//!
//! # Writer (`update`, `swap`, `take`)
//!
//! 1. Mark the filled [`Pooled`]'s node published, with its keepalive (the pool) and its
//!    home depot (the writer's).
//! 2. `swap` it into `current` (`AcqRel`): its reference becomes the container's.
//! 3. Hand the container's reference on the old version to the retired list
//!    (`hazard::retire`). A reclamation, on a writer's side (`hazard.rs`, "Writer"), claims
//!    it once no slot protects it and no counted guard holds it, and returns the node to
//!    its home depot. The writer never waits: a version still held stays on the list; a
//!    guard's drop never reclaims.
//!
//! # A recycled node (the ABA case)
//!
//! Between steps 1 and 3 of a reader, the node may be retired, recycled and handed out
//! again, even published anew.
//!
//! - Hazard slot: a node is recycled only after a heavy barrier that follows its
//!   retirement; a reader whose light barrier precedes it is seen in its slot, and one whose
//!   light barrier follows re-loads a newer `current` (`hazard.rs`, "Why a recycled node is
//!   never read"). If step 3 sees the same address, it is the version published anew, and
//!   its `Acquire` makes the new contents visible.
//! - Counted: if step 2 read a count from before the node was recycled, the reader's
//!   reference keeps the node from being recycled at all. If it read a count written after,
//!   it read (or followed, in the release sequence) the `Release` store of
//!   [`RefCount::reset_to_one`](crate::refcount::RefCount::reset_to_one) made by whoever
//!   took the node from the pool. That taker's view includes the swap that retired the
//!   node's old version (the swap happened before the last decrement, which happened before
//!   the free-list push, which happened before the pop). So step 3 cannot read the pointer
//!   from before that swap: it sees another pointer (and lets go), or the same pointer from
//!   a later store that published the node anew, whose contents its `Acquire` makes
//!   visible.
//!
//! # Orderings
//!
//! - `current`: loads `Acquire`, swap `AcqRel` (publishes the new version, acquires the
//!   old one's contents for the guard `swap` returns).
//! - Slots and barriers: see `hazard.rs`.
//! - The count: `Arc`'s orderings, plus `try_increment` `Acquire` and `reset_to_one`
//!   `Release` for the ABA case (see `refcount.rs`).
//!
//! The loom models in `tests/loom.rs` check this protocol against updates, releases and
//! reclamations, with both barriers as `fence(SeqCst)`.
//!
//! [`Pooled`]: crate::Pooled

use std::ptr;

use crossbeam_utils::CachePadded;

use super::guard::Guard;
use crate::hazard::{self, Slot};
use crate::pool::version::{PoolNode, Version};
use crate::pool::{Pool, Publishable};
use crate::sync::{self, AtomicPtr, Ordering};

/// The state and protocol both container flavours share: `current` (null while empty) and
/// the pool. [`Container`](crate::Container) keeps `current` non-null from construction
/// on; an [`OptionContainer`](crate::OptionContainer) may be empty.
pub(super) struct Raw<T> {
    /// The current version, or null while empty. Holds one reference on it.
    current: CachePadded<AtomicPtr<PoolNode<T>>>,
    /// Every version published here comes from this pool, whose node memory outlives
    /// `&self`: the reader protocol depends on it (see the module docs).
    pool: Pool<T>,
}

impl<T> Raw<T> {
    /// An empty container on its own handle of `pool`.
    pub(super) fn empty(pool: &Pool<T>) -> Raw<T> {
        // Before any reader of this container can exist: see `barrier.rs`.
        crate::barrier::init();
        Raw {
            current: CachePadded::new(AtomicPtr::new(ptr::null_mut())),
            pool: pool.clone(),
        }
    }

    /// A container holding `init`.
    pub(super) fn new<P: Publishable<T>>(pool: &Pool<T>, init: P) -> Raw<T> {
        let raw = Raw::empty(pool);
        raw.update(init);
        raw
    }

    /// The pool every version comes from.
    #[inline]
    pub(super) fn pool(&self) -> &Pool<T> {
        &self.pool
    }

    /// A guard on the current version, or `None` while empty.
    #[inline]
    pub(super) fn acquire(&self) -> Option<Guard<T>> {
        match hazard::free_slot() {
            Some(slot) => self.acquire_protected(slot),
            None => self.acquire_counted(),
        }
    }

    /// The reader's fast path (module docs, "Reader"): protects the current version with
    /// `slot`, a free slot of this thread's block.
    #[inline]
    fn acquire_protected(&self, slot: &'static Slot) -> Option<Guard<T>> {
        // Acquire: makes the version's contents visible (pairs with the Release half of
        // `swap`).
        let mut node = self.current.load(Ordering::Acquire);
        loop {
            let protect = Version::from_ptr(node)?;
            slot.protect(protect.erase());
            // Acquire: as above; after the light barrier, see `hazard.rs`.
            let again = self.current.load(Ordering::Acquire);
            if again == node {
                // The re-loaded pointer, not `protect`: the same address, but its
                // provenance is the store that published the version now current.
                return Version::from_ptr(again).map(|version| Guard::protected(version, slot));
            }
            hazard::clear(slot);
            node = again;
        }
    }

    /// The reader's fallback: a counted reference (module docs, "Reader").
    #[cold]
    #[inline(never)]
    fn acquire_counted(&self) -> Option<Guard<T>> {
        loop {
            // Acquire: makes the node's memory and, if it is still current, the version's
            // contents visible (pairs with the Release half of `swap`).
            let node = self.current.load(Ordering::Acquire);
            let version = Version::from_ptr(node)?;
            // SAFETY: every node ever stored in `current` belongs to `self.pool`, whose
            // node memory lives as long as the pool, which `&self` keeps alive.
            if unsafe { version.try_acquire() } {
                // Acquire: see the module docs: this load cannot return a value older than
                // the swap that retired the node we now hold, if it was retired.
                if self.current.load(Ordering::Acquire) == version.as_ptr() {
                    return Some(Guard::counted(version));
                }
                // SAFETY: `try_acquire` gave this thread a reference; hand it back. The
                // node may now be held by a `Pooled` (no `home`), so name its pool: ours.
                unsafe { version.release_to(&self.pool) };
            }
            sync::spin_hint();
        }
    }

    /// Publishes `new` and retires the old version.
    pub(super) fn update<P: Publishable<T>>(&self, new: P) {
        // The guard's pool handle (a reference, or an owned handle dropped here) is not
        // needed: the node's keepalive and the container's handle hold the pool.
        let (version, _handle) = self.publish(new);
        if let Some(old) = self.replace(version.as_ptr()) {
            self.retire(old);
        }
    }

    /// [`update`](Raw::update), returning a counted guard on the old version.
    pub(super) fn swap<P: Publishable<T>>(&self, new: P) -> Option<Guard<T>> {
        let (version, _handle) = self.publish(new);
        let old = self.replace(version.as_ptr())?;
        Some(self.retire_with_guard(old))
    }

    /// Marks `new` published in this container, and returns its version and the pool
    /// handle the guard held (for [`compare_and_swap`](Raw::compare_and_swap) to rebuild
    /// it); panics if it came from another pool.
    fn publish<P: Publishable<T>>(&self, new: P) -> (Version<T>, P::Handle) {
        assert!(
            Pool::ptr_eq(new.pool_of(), &self.pool),
            "poolswap: a container was given an object from another pool to publish; \
             use this container's `get_new()` or `pool().adopt(value)`"
        );
        Version::publish(new, &self.pool)
    }

    /// Publishes `new` if the current version is still `expected` (`None`: empty); gives
    /// it back otherwise.
    pub(super) fn compare_and_swap<P: Publishable<T>>(
        &self,
        expected: Option<Version<T>>,
        new: P,
    ) -> Result<(), P> {
        let expected = expected.map_or(ptr::null_mut(), Version::as_ptr);
        let (version, handle) = self.publish(new);
        // AcqRel on success, as `replace`. Relaxed on failure: nothing is read through the
        // value seen, and `version` was never visible.
        match self.current.compare_exchange(
            expected,
            version.as_ptr(),
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(old) => {
                if let Some(old) = Version::from_ptr(old) {
                    self.retire(old);
                }
                Ok(())
            }
            // SAFETY: `version` and `handle` came from one `publish`, and the version was
            // never stored in `current`.
            Err(_) => Err(unsafe { version.unpublish(handle) }),
        }
    }

    /// Read-copy-update; `None` (and `f` not called) while empty.
    pub(super) fn rcu<R>(&self, mut f: impl FnMut(&T, &mut T) -> R) -> Option<R> {
        let mut current = self.acquire()?;
        loop {
            let mut next = self.pool.get();
            let result = f(&current, &mut next);
            match self.compare_and_swap(Some(Guard::version(&current)), next) {
                Ok(()) => return Some(result),
                // Dropping `next` returns it to the pool, where the next `get` finds it.
                Err(next) => drop(next),
            }
            current = self.acquire()?;
        }
    }

    /// Empties the container; a counted guard on the version it held.
    pub(super) fn take(&self) -> Option<Guard<T>> {
        let old = self.replace(ptr::null_mut())?;
        Some(self.retire_with_guard(old))
    }

    /// Stores `new` (null, or a published node carrying the container's reference) as the
    /// current version, and returns the old one, with the container's counted reference.
    fn replace(&self, new: *mut PoolNode<T>) -> Option<Version<T>> {
        // AcqRel. Release: readers that load `new` see it filled. Acquire: the old version's
        // contents, published by an earlier swap, are visible to the guard `swap` returns.
        Version::from_ptr(self.current.swap(new, Ordering::AcqRel))
    }

    /// Hands the container's reference on `old`, no longer current, to the retired list.
    fn retire(&self, old: Version<T>) {
        // Relaxed: a check, not a synchronization. The container's reference on `old`,
        // which this thread still owns, keeps it from being recycled, so it cannot have
        // been published anew since this thread swapped it out.
        debug_assert_ne!(
            self.current.load(Ordering::Relaxed),
            old.as_ptr(),
            "a version retired while current"
        );
        // SAFETY: the caller passes the container's counted reference on `old`, which it
        // just swapped out and which the retired list now keeps.
        unsafe { hazard::retire(old.retired()) }
    }

    /// [`retire`](Self::retire), keeping a counted guard on `old` for the caller.
    fn retire_with_guard(&self, old: Version<T>) -> Guard<T> {
        // SAFETY: the container's reference keeps the node live while we add one.
        unsafe { old.clone_ref() };
        let guard = Guard::counted(old);
        self.retire(old);
        guard
    }

    /// Whether `version` is the current version now (another thread may change that at any
    /// moment).
    #[inline]
    pub(super) fn is_current(&self, version: Version<T>) -> bool {
        // Relaxed: comparing with the caller's pointer reads nothing through it; the
        // caller's guard protects `version`, and a newer one is acquired properly.
        self.current.load(Ordering::Relaxed) == version.as_ptr()
    }

    pub(super) fn is_empty(&self) -> bool {
        // Relaxed: an instantaneous reading; nothing is dereferenced.
        self.current.load(Ordering::Relaxed).is_null()
    }
}

impl<T> Drop for Raw<T> {
    fn drop(&mut self) {
        drop(self.take());
        // A writer-side moment: the last version, and any other retired one no guard
        // holds, go back to their pools now rather than at some later reclamation
        // (dropping a container ends its pool's use, often the pool's too).
        hazard::reclaim();
    }
}
