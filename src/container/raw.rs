//! The state and lock-free protocol both container flavours share.
//!
//! The container holds one counted reference on its current version and a pointer to it in
//! `current`. Go's original takes a read lock around "load the pointer, increment its
//! count"; here a reader normally takes neither: a [`Guard`] is a *hazard slot* of the
//! reading thread that names the version (`reclaim/hazard.rs`), and the version goes back
//! to its pool once no slot names it and no counted reference is left.
//!
//! # Reader (`acquire`)
//!
//! With a free slot (the fast path; no atomic read-modify-write, no lock, no write to a
//! line another reader reads):
//!
//! 1. Load `current` (`Relaxed`: the value is only stored and compared).
//! 2. Store the pointer in the slot and issue the light barrier (`reclaim/barrier.rs`).
//! 3. Re-load `current` (`Acquire`: makes the version's contents visible). The same
//!    pointer: return a guard on it, made from this value. Another: empty the slot and
//!    start over with the new pointer.
//!
//! Without one (every slot of the thread held, or the thread is exiting), a *counted*
//! guard:
//!
//! 1. Load `current` (`Acquire`).
//! 2. Increment the node's count *unless it is zero*
//!    ([`RefCount::try_increment`](crate::refcount::RefCount::try_increment), `Acquire`).
//!    A zero count means idle: nothing is written, start over.
//! 3. Re-load `current` (`Acquire`). The same pointer: return a counted guard. Another:
//!    drop the reference and start over.
//!
//! Neither reads the object before its step 3 succeeds. Nodes are type-stable
//! (`pool/node.rs`): a node's memory lives while its pool has a handle, and the container
//! holds one, so steps 1-3 may touch a node that was returned and reused meanwhile.
//!
//! # Writer (`update`, `swap`, `take`)
//!
//! 1. Mark the filled [`Pooled`]'s node published, with its keepalive (the pool) and its
//!    home depot (the writer's).
//! 2. `swap` it into `current` (`AcqRel`): its reference becomes the container's.
//! 3. Retire the old version: hand the container's reference on it to its pool's retired
//!    list (`reclaim::retire`). A reclamation pass returns it once no slot protects it and
//!    no counted guard holds it. The writer never waits; a guard's drop never reclaims.
//!
//! # A reused node (the ABA case)
//!
//! Between steps 1 and 3 of a reader, the node may be retired, returned, handed out again
//! and even published anew.
//!
//! - Hazard slot: a node is returned only after a heavy barrier (for a fenced version, a
//!   fence) that follows its retirement; a reader whose light barrier precedes it is seen
//!   in its slot, one whose light barrier follows re-loads a newer `current` (`reclaim.rs`,
//!   "Why a returned version is never read"). If step 3 sees the same address, it is the
//!   version published anew, and its `Acquire` makes the new contents visible.
//! - Counted: if step 2 read a count from before the node was returned, the reader's
//!   reference keeps it from being returned at all. If it read a count written after, it
//!   read (or followed, in the release sequence) the `Release` store of
//!   [`RefCount::reset_to_one`](crate::refcount::RefCount::reset_to_one) made by whoever
//!   took the node from the pool, whose view includes the swap that retired the node's old
//!   version. So step 3 sees another pointer (and lets go), or the same pointer from a
//!   later store that published the node anew, whose contents its `Acquire` makes visible.
//!
//! # Fenced versions
//!
//! With the light barrier a compiler fence (membarrier mode), returning a version takes the
//! heavy barrier: an interrupt to every CPU running the process, readers included. A writer
//! that publishes every few microseconds would pay it every other update. So a version may
//! be published *fenced*: `current` then holds its address with the low bit set
//! ([`FENCED`]), and a reader that loads a tagged value issues a `fence(SeqCst)` instead of
//! relying on the light barrier. A pass whose nodes are all fenced pairs with those fences
//! with a fence of its own and skips the heavy barrier.
//!
//! - Which: a version published less than [`FENCED_WITHIN_NS`] after the previous one (a
//!   clock read per update). A version that follows a quiet spell is plain.
//! - Until when: a reader thread's [`UNFENCE_AFTER`]th fenced acquisition (of any
//!   container) stores the value it acquired back plain (one compare-and-swap). A tag is
//!   set only by the store that publishes a version, and once dropped never comes back,
//!   so a version retired tagged was tagged from its publication on, and every reader that
//!   protected it fenced.
//! - A reader stores the value it loaded in its slot, tag included (the scan ignores the
//!   bit), issues the light barrier and re-loads; only then, if the value is tagged, the
//!   fence and a second re-load, which is the one that counts. A value loaded tagged and
//!   re-loaded plain starts over (one fence more, never one too few).
//! - In fence mode both barriers are fences anyway. Under loom and Miri every other version
//!   is fenced, so that both kinds run in every model and test.
//!
//! Cost on the plain read path: one test of the loaded value's low bit, after the check.
//!
//! # Orderings
//!
//! - `current`: loads `Acquire` (but the slot path's first, `Relaxed`: see "Reader"), swap
//!   `AcqRel` (publishes the new version, acquires the old one's contents for the guard
//!   `swap` returns). A reader's untagging
//!   compare-and-swap is `Relaxed`: it continues the release sequence of the swap that
//!   published the version.
//! - Slots and barriers: `reclaim/hazard.rs`.
//! - The subscribers' signal: loaded `Acquire` after each store to `current`, which a
//!   subscriber's read-modify-write of `current` orders against its install
//!   (`subscribe.rs`).
//! - The count: `Arc`'s orderings, plus `try_increment` `Acquire` and `reset_to_one`
//!   `Release` for the ABA case (`refcount.rs`).
//!
//! The loom models in `tests/loom.rs` check this protocol against updates, guard drops and
//! reclamation passes, with both barriers as `fence(SeqCst)`.
//!
//! [`Pooled`]: crate::Pooled

use std::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

// A hint, never part of the protocol: std's atomic even under loom (see `Raw::last_update`).
#[allow(clippy::disallowed_types)]
use std::sync::atomic::AtomicU64 as HintU64;

use super::guard::Guard;
use super::subscribe::{count, Signal};
use crate::pool::version::{PoolNode, Version};
use crate::pool::{Pool, Publishable};
use crate::reclaim::{self, untag, Slot, FENCED};
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
    /// When the last version was published here ([`clock_ns`]; 0: never), for the choice
    /// of publishing the next one fenced. A hint, read and written with `Relaxed` by
    /// concurrent updaters: a lost race only changes that choice, never its soundness.
    /// Off `current`'s cache line, which readers load. std's atomic even under loom: loom
    /// need not see a hint, and models stay as small as without it.
    #[allow(clippy::disallowed_types)]
    last_update: HintU64,
    /// The subscribers' signal (`subscribe.rs`), an `Arc::into_raw` pointer holding the
    /// container's count on it; null until the first subscriber. A publisher loads it after
    /// its store to `current`, and counts its version there if it is not null.
    signal: AtomicPtr<Signal<T>>,
}

/// A version published less than this long (ns; 50 µs) after the previous one is published
/// fenced: its readers pay a `fence(SeqCst)` per `acquire` so that returning it costs a
/// fence instead of a heavy barrier (an interrupt to every CPU running the process).
/// Readers make it plain again after [`UNFENCE_AFTER`] fenced acquisitions. (Loom and Miri
/// tag every other version instead: see [`Raw::tag_new`].)
#[cfg(not(any(loom, miri)))]
const FENCED_WITHIN_NS: u64 = 50_000;

/// After this many fenced acquisitions, a thread stores the fenced value it acquired last
/// back plain: if the writer has stopped updating often, readers should stop paying for a
/// cheap reclamation that is not coming. The count is large enough that a thread reading
/// without pause takes several times [`FENCED_WITHIN_NS`] to reach it; in a stream of
/// frequent updates it costs one heavy barrier per that many fenced reads per thread. (64
/// under Miri, which runs far slower.)
#[cfg(not(loom))]
const UNFENCE_AFTER: u32 = if cfg!(miri) { 64 } else { 16_384 };

/// `node` tagged fenced.
#[inline]
fn tag<T>(node: *mut PoolNode<T>) -> *mut PoolNode<T> {
    node.cast::<u8>().wrapping_add(FENCED).cast()
}

/// Nanoseconds since the first call, plus one (never 0).
#[cfg(not(any(loom, miri)))]
fn clock_ns() -> u64 {
    // An epoch for a hint (see `Raw::last_update`), not a synchronization: loom need not
    // see it.
    #[allow(clippy::disallowed_types)]
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let nanos = EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos();
    u64::try_from(nanos).unwrap_or(u64::MAX - 1) + 1
}

impl<T> Raw<T> {
    /// An empty container on its own handle of `pool`.
    #[allow(clippy::disallowed_types)] // `last_update`: see the field.
    pub(super) fn empty(pool: &Pool<T>) -> Raw<T> {
        // Before any reader of this container can exist: see `reclaim/barrier.rs`.
        crate::reclaim::barrier::init();
        Raw {
            current: CachePadded::new(AtomicPtr::new(ptr::null_mut())),
            pool: pool.clone(),
            last_update: HintU64::new(0),
            signal: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// A container holding `init`.
    #[track_caller]
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
        match reclaim::free_slot() {
            Some(slot) => self.acquire_protected(slot),
            None => self.acquire_counted(),
        }
    }

    /// The reader's fast path (module docs, "Reader"): protects the current version with
    /// `slot`, a free slot of this thread's block. The slot takes the value loaded, tag
    /// included; a fenced value then goes to [`acquire_fenced`](Self::acquire_fenced)
    /// for its fence: here, one test of the loaded value more than before versions could
    /// be fenced, after the check.
    #[inline]
    fn acquire_protected(&self, slot: &'static Slot) -> Option<Guard<T>> {
        // Relaxed: this value is only stored in the slot and compared with the re-load
        // below; nothing is read through it. The guard is made from the re-loaded value,
        // whose `Acquire` makes the version's contents visible (an `Acquire` here would
        // order nothing that the re-load does not).
        let mut node = self.current.load(Ordering::Relaxed);
        loop {
            slot.protect(NonNull::new(node)?.cast(), false);
            // Acquire: as above; after the light barrier, see `reclaim/hazard.rs`.
            let again = self.current.load(Ordering::Acquire);
            if again == node {
                if node as usize & FENCED != 0 {
                    return self.acquire_fenced(slot, again);
                }
                // The re-loaded pointer, not `node`: the same address, but its
                // provenance is the store that published the version now current.
                // SAFETY: `again` equals `node`, which is not null (checked above); no
                // second null test on the fast path.
                let version = Version::from_non_null(unsafe { NonNull::new_unchecked(again) });
                return Some(Guard::protected(version, slot));
            }
            reclaim::clear(slot);
            node = again;
        }
    }

    /// The rest of [`acquire_protected`](Self::acquire_protected) for a fenced value
    /// `raw`, which `slot` holds: the full fence between the slot store and a re-load
    /// that counts (module docs, "Fenced versions"); then, if `current` moved, the
    /// protocol again, with a fence for each fenced value.
    #[cold]
    #[inline(never)]
    fn acquire_fenced(&self, slot: &'static Slot, raw: *mut PoolNode<T>) -> Option<Guard<T>> {
        crate::reclaim::barrier::full();
        let mut raw = raw;
        loop {
            // Acquire: as in `acquire_protected`; after the fence.
            // loom-mutants: loom cannot model the membarrier mode, where this is needed.
            // There the light barrier is a compiler fence and a pass over fenced versions
            // skips the heavy barrier, so the slot protects a fenced version only from the
            // fence above on: between `acquire_protected`'s re-load and this one the node
            // may be retired, returned and published anew, fenced, at the same address, and
            // this load's `Acquire` is what makes the new contents visible (a fence before a
            // load does not acquire what it reads). Under loom the light barrier is a
            // `fence(SeqCst)` too, the slot protects the node from before that re-load, and
            // this load reads the store that re-load already acquired.
            let again = self.current.load(Ordering::Acquire);
            // The same value, tag included. A value loaded fenced and re-loaded plain
            // starts over, protected plain: correct, if one fence more.
            if again == raw {
                let (node, fenced) = untag(again);
                // Loom models no unfencing (`count_fenced_read` is not compiled there).
                #[cfg(not(loom))]
                if fenced {
                    self.count_fenced_read(again);
                }
                #[cfg(loom)]
                let _ = fenced;
                // The re-loaded pointer, as in `acquire_protected`.
                return Version::from_ptr(node).map(|version| Guard::protected(version, slot));
            }
            reclaim::clear(slot);
            raw = again;
            slot.protect(NonNull::new(raw)?.cast(), untag(raw).1);
        }
    }

    /// The reader's fallback: a counted reference (module docs, "Reader").
    #[cold]
    #[inline(never)]
    fn acquire_counted(&self) -> Option<Guard<T>> {
        loop {
            // Acquire: makes the node's memory and, if it is still current, the version's
            // contents visible (pairs with the Release half of `swap`).
            let version = Version::from_ptr(untag(self.current.load(Ordering::Acquire)).0)?;
            // SAFETY: every node ever stored in `current` belongs to `self.pool`, whose
            // node memory lives as long as the pool, which `&self` keeps alive.
            if unsafe { version.try_acquire() } {
                // Acquire: see the module docs: this load cannot return a value older than
                // the swap that retired the node we now hold, if it was retired.
                if untag(self.current.load(Ordering::Acquire)).0 == version.as_ptr() {
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
    #[track_caller]
    pub(super) fn update<P: Publishable<T>>(&self, new: P) {
        // The guard's pool handle (a reference, or an owned handle dropped here) is not
        // needed: the node's keepalive and the container's handle hold the pool.
        let (version, _handle) = self.publish(new);
        if let Some((old, fenced)) = self.replace(self.tag_new(version)) {
            self.retire(old, fenced);
        }
    }

    /// [`update`](Raw::update), returning a counted guard on the old version.
    #[track_caller]
    pub(super) fn swap<P: Publishable<T>>(&self, new: P) -> Option<Guard<T>> {
        let (version, _handle) = self.publish(new);
        let old = self.replace(self.tag_new(version))?;
        Some(self.retire_with_guard(old))
    }

    /// Marks `new` published in this container, and returns its version and the pool
    /// handle the guard held (for [`compare_and_swap`](Raw::compare_and_swap) to rebuild
    /// it); panics if it came from another pool, at the line that called the public
    /// method (`#[track_caller]` here and on every method between).
    #[track_caller]
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
    #[track_caller]
    pub(super) fn compare_and_swap<P: Publishable<T>>(
        &self,
        expected: Option<Version<T>>,
        new: P,
    ) -> Result<(), P> {
        let expected = expected.map_or(ptr::null_mut(), Version::as_ptr);
        let (version, handle) = self.publish(new);
        let new = self.tag_new(version);
        // `expected` as `current` holds it, tag included: first untagged, then as seen. A
        // tag only ever goes (a version is published fenced or not, and made plain at
        // most once), and the caller's guard keeps `expected` from being republished, so
        // this retries at most twice.
        let mut seen = expected;
        loop {
            // AcqRel on success, as `replace` (whose subscriber duty it shares). Relaxed on failure: nothing is read through
            // the value seen, and `version` was never visible.
            // loom-mutants: `Release` is not caught: under loom the retired version goes back
            // to its pool only after a pass's `fence(SeqCst)` on a thread that has this one in
            // its past (the retired list's lock), and loom's fence acquires every store that
            // such a thread has read, this one's read of the old version's publication
            // included. A C11 fence acquires only what its own thread read (and membarrier is
            // no C11 fence): the `Acquire` half orders the old version's writes before its
            // reset when the pass runs on another thread.
            match self
                .current
                .compare_exchange(seen, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(old) => {
                    self.notify_subscribers();
                    let (old, fenced) = untag(old);
                    if let Some(old) = Version::from_ptr(old) {
                        self.retire(old, fenced);
                    }
                    return Ok(());
                }
                Err(now) if now != seen && untag(now).0 == expected => seen = now,
                // SAFETY: `version` and `handle` came from one `publish`, and the version
                // was never stored in `current`.
                Err(_) => return Err(unsafe { version.unpublish(handle) }),
            }
        }
    }

    /// Read-copy-update; `None` (and `f` not called) while empty. Its `get` may panic at
    /// a wait that cannot end (`Pool::get`): at the caller's line.
    #[track_caller]
    pub(super) fn rcu<R>(&self, mut f: impl FnMut(&T, &mut T) -> R) -> Option<R> {
        let mut current = self.acquire()?;
        loop {
            let mut next = self.pool.writer().get();
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

    /// `version`'s value for `current`: tagged fenced if the previous version was
    /// published less than [`FENCED_WITHIN_NS`] ago (under loom and Miri, every other
    /// version, so that both kinds are checked).
    fn tag_new(&self, version: Version<T>) -> *mut PoolNode<T> {
        // Relaxed load and store, not a read-modify-write: a hint (see the field), which
        // concurrent updaters may race on.
        let last = self.last_update.load(Ordering::Relaxed);
        #[cfg(any(loom, miri))]
        let (now, fenced) = (last + 1, last % 2 == 1);
        #[cfg(not(any(loom, miri)))]
        let (now, fenced) = {
            let now = clock_ns();
            (now, last != 0 && now.wrapping_sub(last) < FENCED_WITHIN_NS)
        };
        self.last_update.store(now, Ordering::Relaxed);
        if fenced {
            tag(version.as_ptr())
        } else {
            version.as_ptr()
        }
    }

    /// Counts a fenced acquisition of `raw` (a tagged value of `current`) by this thread;
    /// every [`UNFENCE_AFTER`]th makes the version acquired plain (module docs, "Fenced
    /// versions").
    #[cfg(not(loom))]
    #[cold]
    fn count_fenced_read(&self, raw: *mut PoolNode<T>) {
        thread_local! {
            /// Fenced acquisitions by this thread since its last untagging.
            static FENCED_READS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
        }
        // `try_with`: an acquire from a thread-local destructor may run after this one's.
        let _ = FENCED_READS.try_with(|reads| {
            let n = reads.get() + 1;
            if n < UNFENCE_AFTER {
                reads.set(n);
                return;
            }
            reads.set(0);
            // Relaxed: the new value only drops the tag; readers that load it synchronize
            // with the swap that published the version, whose release sequence this
            // read-modify-write continues. Fails harmlessly if `current` changed.
            let _ = self.current.compare_exchange(
                raw,
                untag(raw).0,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        });
    }

    /// Stores `new` (null, or a published node carrying the container's reference, maybe
    /// tagged) as the current version, and returns the old one, with the container's
    /// counted reference, and whether it was fenced.
    fn replace(&self, new: *mut PoolNode<T>) -> Option<(Version<T>, bool)> {
        // AcqRel. Release: readers that load `new` see it filled. Acquire: the old version's
        // contents, published by an earlier swap, are visible to the guard `swap` returns;
        // and a subscriber's install, if this reads its touch of `current` (`subscribe.rs`).
        let (old, fenced) = untag(self.current.swap(new, Ordering::AcqRel));
        // After the swap: see `subscribe.rs`, "The signal's installation".
        self.notify_subscribers();
        Version::from_ptr(old).map(|old| (old, fenced))
    }

    /// Hands the container's reference on `old`, no longer current, to the retired list;
    /// `fenced`: the value `current` held for it was tagged.
    fn retire(&self, old: Version<T>, fenced: bool) {
        // Relaxed: a check, not a synchronization. The container's reference on `old`,
        // which this thread still owns, keeps it from being returned, so it cannot have
        // been published anew since this thread swapped it out.
        debug_assert_ne!(
            untag(self.current.load(Ordering::Relaxed)).0,
            old.as_ptr(),
            "a version retired while current"
        );
        // SAFETY: the caller passes the container's counted reference on `old`, which it
        // just swapped out and which the retired list now keeps. If the value swapped out
        // was tagged, it was tagged from its publication on (a tag is set only by the
        // store that publishes, and once dropped never comes back), so every protection
        // that succeeded loaded the tagged value and re-loaded it after a full fence
        // (`acquire_fenced`): `fenced` is as `retired` requires.
        unsafe { self.pool.writer().retire(old, fenced) }
    }

    /// [`retire`](Self::retire), keeping a counted guard on `old` for the caller.
    fn retire_with_guard(&self, (old, fenced): (Version<T>, bool)) -> Guard<T> {
        // SAFETY: the container's reference keeps the node live while we add one.
        unsafe { old.clone_ref() };
        let guard = Guard::counted(old);
        self.retire(old, fenced);
        guard
    }

    /// Whether `version` is the current version now (another thread may change that at any
    /// moment).
    #[inline]
    pub(super) fn is_current(&self, version: Version<T>) -> bool {
        // Relaxed: comparing with the caller's pointer reads nothing through it; the
        // caller's guard protects `version`, and a newer one is acquired properly.
        let now = self.current.load(Ordering::Relaxed);
        // The plain comparison alone inline: `Cache::load`'s whole cost when nothing
        // changed; a fenced value is compared out of line.
        now == version.as_ptr() || Self::is_tagged(now, version)
    }

    /// Whether `now`, a value of `current` that is not `version`'s plain address, is its
    /// tagged one.
    #[cold]
    #[inline(never)]
    fn is_tagged(now: *mut PoolNode<T>, version: Version<T>) -> bool {
        untag(now) == (version.as_ptr(), true)
    }

    pub(super) fn is_empty(&self) -> bool {
        // Relaxed: an instantaneous reading; nothing is dereferenced.
        self.current.load(Ordering::Relaxed).is_null()
    }
}

/// The subscribers' side of the container (`subscribe.rs` tells the protocol).
impl<T> Raw<T> {
    /// The container's signal, installed now if it has none, and the subscriber's first
    /// token: every publication that this returns without counting is one that the caller's
    /// later acquires see (module docs, "The signal's installation").
    pub(super) fn subscribe(&self) -> (sync::Arc<Signal<T>>, u64) {
        // Acquire: pairs with the installing compare-and-swap: the signal's memory.
        let mut signal = self.signal.load(Ordering::Acquire);
        if signal.is_null() {
            let new = sync::Arc::into_raw(sync::Arc::new(Signal::new())).cast_mut();
            // Release on success: publishes the signal's memory. Nothing to acquire there: a
            // success reads the null `signal` starts with, which no release stored. Acquire
            // on failure: reads the winner's signal memory.
            match self.signal.compare_exchange(
                ptr::null_mut(),
                new,
                Ordering::Release,
                Ordering::Acquire,
            ) {
                Ok(_) => signal = new,
                Err(installed) => {
                    // SAFETY: `new` came from `into_raw` just above and was never shared.
                    drop(unsafe { sync::Arc::from_raw(new) });
                    signal = installed;
                }
            }
        }
        self.touch_current();
        // SAFETY: `signal` came from `into_raw`, and the container's count on it lives until
        // the container's drop, which `&self` excludes.
        let signal = unsafe {
            sync::Arc::increment_strong_count(signal);
            sync::Arc::from_raw(signal)
        };
        let token = count(signal.load());
        (signal, token)
    }

    /// A read-modify-write of `current` that stores the value it read (module docs, "The
    /// signal's installation"). A reader comparing addresses sees no change.
    fn touch_current(&self) {
        // Relaxed: the value only seeds the compare-and-swap.
        let mut now = self.current.load(Ordering::Relaxed);
        // Release on success: a publisher whose swap reads this value sees the signal. No
        // Acquire: nothing is read through the value, and coherence alone makes this
        // thread's later loads return it or a later one (each of those acquires what it
        // reads); a reader that reads the value stored here still synchronizes with the
        // swap that published it (a read-modify-write continues its release sequence).
        // Relaxed on failure: the loop tries again with the value seen.
        while let Err(seen) =
            self.current
                .compare_exchange_weak(now, now, Ordering::Release, Ordering::Relaxed)
        {
            now = seen;
        }
    }

    /// Counts a publication just stored in `current`, if the container has a signal: one
    /// load when nobody ever subscribed.
    #[inline]
    pub(super) fn notify_subscribers(&self) {
        // Acquire: pairs with the installing compare-and-swap: the signal's memory. This
        // load follows the store to `current`: see the module docs for why that suffices.
        let signal = self.signal.load(Ordering::Acquire);
        if !signal.is_null() {
            // SAFETY: a non-null `signal` came from `into_raw` and the container's count on
            // it lives until the container's drop, which `&self` excludes.
            unsafe { &*signal }.published();
        }
    }

    /// Closes the signal, if any, handing it a counted guard on the current version (the
    /// subscribers' last version: `subscribe.rs`, "The final version"), and gives up the
    /// container's count on it: at the container's drop, before `into_inner` takes the
    /// version, or when it becomes another flavour (whose subscribers are of this one).
    pub(super) fn close_subscribers(&mut self) {
        // Relaxed: `&mut self`: no other thread reaches this container now.
        let signal = self.signal.swap(ptr::null_mut(), Ordering::Relaxed);
        if signal.is_null() {
            return;
        }
        // SAFETY: `signal` came from `into_raw`, and the swap above took the container's
        // count out of `self.signal`: it is given back once, here.
        let signal = unsafe { sync::Arc::from_raw(signal) };
        // Relaxed: `&mut self`, as above: what gave this thread sole access (the last `Arc`'s
        // drop, a move) ordered every store to `current` before this load. The close's
        // Release then carries the version's contents to the subscribers that read it.
        let last = Version::from_ptr(untag(self.current.load(Ordering::Relaxed)).0).map(|last| {
            // SAFETY: the container's reference keeps the current version live while we
            // add one, which the guard then owns.
            unsafe { last.clone_ref() };
            Guard::counted(last)
        });
        signal.close(last);
    }
}

impl<T> Drop for Raw<T> {
    fn drop(&mut self) {
        // Before the take: subscribers get the last version, not a change to an empty
        // container.
        self.close_subscribers();
        drop(self.take());
        // A writer-side moment: the last version, and any other retired one no guard
        // holds, go back to their pools now rather than at some later reclamation
        // (dropping a container ends its pool's use, often the pool's too).
        crate::reclaim();
    }
}

#[cfg(test)]
#[cfg(not(loom))]
mod tests {
    use super::*;

    /// Whether `raw`'s current version is tagged fenced now.
    fn fenced<T>(raw: &Raw<T>) -> bool {
        // Relaxed: a single-threaded test.
        untag(raw.current.load(Ordering::Relaxed)).1
    }

    /// A container whose current version was published fenced, and its pool (under Miri,
    /// every other version is fenced).
    ///
    /// Each try dates the previous publication to just now before it updates, so that the
    /// update falls within `FENCED_WITHIN_NS` of it however slow an update is here (TSan
    /// and a loaded CI machine made 1,000 plain back-to-back updates all come later than
    /// that); only a preemption between that store and the update's clock read can make a
    /// try miss.
    fn fenced_container() -> (Pool<u64>, Raw<u64>) {
        let pool = Pool::new(|| 0, |_: &mut u64| true);
        let raw = Raw::new(&pool, pool.get());
        assert!(
            !fenced(&raw),
            "the first version follows no other: it is plain"
        );
        for v in 1..1_000 {
            let mut next = pool.get();
            *next = v;
            #[cfg(not(miri))]
            raw.last_update.store(clock_ns(), Ordering::Relaxed);
            raw.update(next);
            if fenced(&raw) {
                return (pool, raw);
            }
        }
        panic!("1,000 updates, each dated just after the previous, none published fenced");
    }

    #[test]
    fn readers_make_a_fenced_version_plain_after_a_number_of_fenced_acquisitions() {
        let (_pool, raw) = fenced_container();
        let value = *raw.acquire().expect("not empty");
        assert!(value > 0);
        // The first acquisition above counts: `UNFENCE_AFTER - 2` more leave the tag...
        for _ in 0..UNFENCE_AFTER - 2 {
            assert_eq!(*raw.acquire().expect("not empty"), value);
        }
        assert!(fenced(&raw), "made plain too early");
        // ...and the next one drops it; the version stays current, its value unchanged.
        assert_eq!(*raw.acquire().expect("not empty"), value);
        assert!(
            !fenced(&raw),
            "still fenced after {UNFENCE_AFTER} acquisitions"
        );
        assert_eq!(*raw.acquire().expect("not empty"), value);
    }

    #[test]
    fn a_thread_reading_two_fenced_containers_in_turn_makes_both_plain() {
        let (_a_pool, a) = fenced_container();
        let (_b_pool, b) = fenced_container();
        for _ in 0..UNFENCE_AFTER / 2 {
            drop(a.acquire());
            drop(b.acquire());
        }
        // The `UNFENCE_AFTER`th fenced acquisition was of `b`.
        assert!(
            fenced(&a) && !fenced(&b),
            "the last one acquired is made plain"
        );
        // Reads of `a` alone count now: `UNFENCE_AFTER` more of them drop its tag too.
        for _ in 0..UNFENCE_AFTER {
            drop(b.acquire());
            drop(a.acquire());
        }
        assert!(!fenced(&a) && !fenced(&b), "a fenced version left behind");
    }

    #[test]
    fn compare_and_swap_matches_a_fenced_current_version() {
        let (pool, raw) = fenced_container();
        let guard = raw.acquire().expect("not empty");
        let mut next = pool.get();
        *next = 7;
        let expected = Some(Guard::version(&guard));
        assert!(raw.compare_and_swap(expected, next).is_ok());
        assert_eq!(*raw.acquire().expect("not empty"), 7);
        // And a stale expectation still fails, tag or not.
        let mut next = pool.get();
        *next = 8;
        assert!(raw.compare_and_swap(expected, next).is_err());
        assert_eq!(*raw.acquire().expect("not empty"), 7);
    }

    #[test]
    fn a_guard_on_a_fenced_version_is_current_until_the_next_update() {
        let (pool, raw) = fenced_container();
        let guard = raw.acquire().expect("not empty");
        assert!(raw.is_current(Guard::version(&guard)));
        raw.update(pool.get());
        assert!(!raw.is_current(Guard::version(&guard)));
    }
}
