//! The per-version reference count.
//!
//! Go's `poolswap.Ref` is an `atomic.Int64` padded to 64 bytes and embedded first in the
//! user's struct. Here the count lives in the pool's node beside the object, first in a
//! 128-byte pair of lines (x86-64's adjacent-line prefetcher fetches lines in pairs), so
//! the count's line is never shared with the object's first bytes nor with another
//! version's count; the node keeps its `ever_published` flag on the pair's second line
//! (see `Head` in `pool/node.rs`). Go's `RefNoPadding` has no counterpart: a node is one
//! allocation per pooled object, made once, so the padding costs at most 128 bytes per
//! object.
//!
//! # Synchronization
//!
//! The count follows std's `Arc`: an increment made while the caller already holds a
//! reference is `Relaxed`; the decrement is `Release`, and the one that reaches zero is
//! followed by an `Acquire` load of the count (std uses a fence; see `decrement`), so every
//! use of the object through any reference happens-before the object goes back to its pool.
//!
//! One addition: [`RefCount::try_increment`] takes a reference *without* holding one, on a node
//! read from a container that may have gone back to the pool and out again meanwhile. It never
//! resurrects a count that reached zero, and it is `Acquire` so that, when it reads the `Release`
//! store of [`RefCount::reset_to_one`] made by whoever took the node out of the pool, everything
//! that taker saw before (the container's newer pointer included) is visible to the caller's
//! validating re-load. See `container/raw.rs` for the protocol that relies on it.

use crate::sync::{AtomicUsize, Ordering};

/// Counts above this abort the process, as std's `Arc` does: beyond it, a leak of guards
/// (`mem::forget` in a loop) could wrap the count around to zero and free a live object.
const MAX_REFCOUNT: usize = isize::MAX as usize;

/// A reference count; the node pads it onto cache lines of its own.
pub(crate) struct RefCount {
    /// Live references on the node; its values in each state of the node are in the
    /// lifecycle table on `Node` (`pool/node.rs`). Once a node has been published, 0 means
    /// nobody holds it (idle, or on its way back to the pool): a stale reader must not take it.
    count: AtomicUsize,
}

impl RefCount {
    /// A count of zero: an idle node once published (the unit tests start from it).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn new() -> Self {
        RefCount {
            count: AtomicUsize::new(0),
        }
    }

    /// A count of one: a node just made, checked out by whoever made it. A node that is
    /// never published keeps this count for life (`Pooled::check_out` writes the count only
    /// of a node that has been published).
    pub(crate) fn one() -> Self {
        RefCount {
            count: AtomicUsize::new(1),
        }
    }

    /// The current count; for tests and debugging (Go's `DebugPeekRef`).
    pub(crate) fn load(&self) -> usize {
        // Relaxed: an instantaneous reading, used for no synchronization.
        self.count.load(Ordering::Relaxed)
    }

    /// Sets the count of a node taken out of the pool to one.
    ///
    /// The caller owns the node exclusively (it came off a free list at count 0), but a
    /// reader holding a stale pointer may still attempt [`try_increment`](Self::try_increment)
    /// on it; that attempt reads this store.
    #[inline]
    pub(crate) fn reset_to_one(&self) {
        // Release: a stale reader's `try_increment` that reads this 1 (Acquire) synchronizes
        // with it, so the container swap that retired this node's previous version, which
        // happened-before the node reached the free list we took it from, is visible to that
        // reader's validating load. Without it, the reader could validate against a stale
        // pointer value and keep a reference to an object that is being refilled. Nothing
        // else carries that swap to the reader: the free list's lock (or magazine) ordered
        // it before this store on the taker's side only, and the taker's next publication
        // comes later and is read by the reader's re-load, if at all, not by its increment.
        // The loom model `counted_reader_vs_a_getter_that_takes_its_version_back` fails with
        // this store `Relaxed`.
        self.count.store(1, Ordering::Release);
    }

    /// Adds a reference on behalf of a caller that already holds one: one `fetch_add`;
    /// aborts the process past [`MAX_REFCOUNT`].
    pub(crate) fn increment(&self) {
        // Relaxed: the caller's reference keeps the node alive, and a new reference carries
        // no data of its own (std's `Arc::clone` argument).
        let old = self.count.fetch_add(1, Ordering::Relaxed);
        if old > MAX_REFCOUNT {
            std::process::abort();
        }
    }

    /// Adds a reference unless the count is zero; returns whether it did. A load and a
    /// compare-and-swap loop (one iteration unless the count changes meanwhile); aborts
    /// the process past [`MAX_REFCOUNT`].
    ///
    /// Used on a node reached through a pointer that may be stale.
    pub(crate) fn try_increment(&self) -> bool {
        // Relaxed first read: only a guess for the CAS below, which re-checks.
        let mut current = self.count.load(Ordering::Relaxed);
        loop {
            if current == 0 {
                return false;
            }
            if current > MAX_REFCOUNT {
                std::process::abort();
            }
            // Acquire on success: see the module docs and `reset_to_one`. Relaxed on failure:
            // the value read is only the next guess.
            match self.count.compare_exchange_weak(
                current,
                current + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => current = actual,
            }
        }
    }

    /// Takes the count from one to zero if it is one (one compare-and-swap): a reclamation
    /// pass's claim on a retired node, whose one reference is the retired list's. Returns
    /// whether it did; if so, the caller owns the node exclusively and everything done
    /// through other references is visible. A count above one (counted guards) is left as
    /// it is.
    #[must_use]
    pub(crate) fn try_take_last(&self) -> bool {
        // Acquire on success: reads the tail of the release sequence of every holder's
        // Release decrement (`decrement`), so their reads of the object happen-before the
        // reclaimer's reuse. Relaxed on failure: nothing is read through the value seen.
        self.count
            .compare_exchange(1, 0, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Drops one reference (one `fetch_sub`, and a load after the last); returns `true` if
    /// it was the last, in which case the caller now owns the node exclusively and
    /// everything done through other references is visible.
    #[must_use]
    pub(crate) fn decrement(&self) -> bool {
        // Release: this holder's reads of the object happen-before whoever returns it to
        // the pool.
        if self.count.fetch_sub(1, Ordering::Release) != 1 {
            return false;
        }
        // Acquire: pairs with every other holder's Release decrement. std's `Arc::drop` uses
        // `fence(Acquire)` here, except under ThreadSanitizer, which does not model fences
        // and reports false races after one; an Acquire load of the count is equivalent (it
        // reads the zero this thread just stored, the tail of the release sequence of every
        // decrement) and TSan understands it. On x86 it is a plain load; the last decrement
        // happens once per version, not once per read.
        // loom-mutants: loom cannot reach a last decrement that this load alone orders.
        // Guards share a retired version's count with its retired list, whose reference
        // goes last, by a claim (`try_take_last`, itself Acquire). A plain decrement is the
        // last only for a stale reader letting go of a node checked out again (its owner
        // dropped first), and there it is needed: the owner's writes must happen-before the
        // next reset. A model of that preempts three threads three times (the reader twice
        // inside `acquire`, the owner once), more states than a CI run explores. And loom's
        // `fence(SeqCst)` acquires every store that a thread in the fencing thread's past
        // has read, so a magazine operation on the taking side (a fence under loom,
        // `barrier::signal`) orders the owner's use before the reuse anyway.
        let now = self.count.load(Ordering::Acquire);
        debug_assert_eq!(now, 0, "a count resurrected after reaching zero");
        true
    }
}

impl std::fmt::Debug for RefCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RefCount").field(&self.load()).finish()
    }
}

#[cfg(test)]
#[cfg(not(loom))]
mod tests {
    use super::RefCount;

    #[test]
    fn try_increment_never_resurrects_zero() {
        let count = RefCount::new();
        assert!(!count.try_increment(), "a zero count came back to life");
        assert_eq!(count.load(), 0);
        count.reset_to_one();
        assert!(count.try_increment());
        assert_eq!(count.load(), 2);
    }

    #[test]
    fn only_the_last_decrement_reports_last() {
        let count = RefCount::new();
        count.reset_to_one();
        count.increment();
        count.increment();
        assert!(!count.decrement());
        assert!(!count.decrement());
        assert!(count.decrement(), "the last reference was not reported");
        assert_eq!(count.load(), 0);
        assert!(!count.try_increment());
    }

    #[test]
    fn only_a_count_of_one_is_taken() {
        let count = RefCount::new();
        assert!(!count.try_take_last(), "an idle count was taken");
        count.reset_to_one();
        count.increment();
        assert!(
            !count.try_take_last(),
            "a count with a second holder was taken"
        );
        assert_eq!(count.load(), 2);
        assert!(!count.decrement());
        assert!(count.try_take_last());
        assert_eq!(count.load(), 0);
    }
}
