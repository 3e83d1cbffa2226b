//! Hazard slots: how a reader protects a version without writing a shared cache line, and
//! how retired versions wait, off every reader's path, until no reader can still be
//! reading them.
//!
//! # Slots
//!
//! Each thread that reads gets a [`Block`] of 8 slots, on its own cache lines, from a
//! process-wide domain; a thread that holds more guards at once takes more blocks, one at a
//! time, up to [`SLOTS`] slots (its *spill* chain; the slot it last took there is where it
//! looks first, so holding many guards costs a look at the first block and one more load,
//! not a counted reference). Blocks are never freed: when a thread exits, its block goes back
//! to the domain and a new thread may take it over. A slot holds the address of the node it
//! protects, or null. Only the block's owner thread fills an empty slot; whoever drops the
//! guard (any thread) empties it. Nobody else writes a slot: a reclaimer never pays,
//! converts or clears a reader's protection, so a stale address in a slot only delays
//! recycling (the address-reuse bugs of debt schemes, arc-swap #156 and #210, cannot
//! happen here). A block that an exited thread gave back with a slot still full (a guard
//! that outlived its thread, or one that was `mem::forget`-ten) is handed to a new thread
//! only when no clean block is free: a new block is made instead.
//!
//! # Reader (`Container::acquire`)
//!
//! 1. Load `current` (`Acquire`).
//! 2. Store it in a free slot of the thread's block (`Release`), then [`light`].
//! 3. Re-load `current` (`Acquire`). The same pointer: the slot protects it; return a guard
//!    on the pointer just re-loaded. Another: [`clear`] the slot and start over.
//!
//! A slot may hold a node's address with its low bit set (a *fenced* version,
//! `container/raw.rs`): it protects the same node, and the scan ignores that bit.
//!
//! # Guard drop ([`clear`])
//!
//! One `Release` store of null in the slot: no barrier, no lock, no system call, and no
//! user code. A dropped guard never touches its node again: once the slot is null, the
//! node may be recycled and, if its pool has closed, freed. Readers never reclaim: the
//! version a guard kept from being recycled goes back at the next reclamation, which runs
//! on a writer's thread (below).
//!
//! # Writer ([`retire`])
//!
//! After swapping a version out of its container, the writer hands the container's counted
//! reference on it to the domain's *retired list*. The list's reference keeps the version
//! from being recycled by anyone but a reclaimer: a counted guard's drop only takes the
//! count down to the list's one. The writer reclaims when the list holds
//! [`RECLAIM_THRESHOLD`] versions; before that, the versions wait for the next reclamation,
//! which a pool getter that finds no idle object runs first ([`reclaim_pending`]: a writer
//! whose next `get_new` would otherwise build an object gets the retired versions back
//! instead). So an update usually makes no heavy barrier at all, and a reclamation serves
//! every version retired since the last one (folly's hazptr and haphazard reclaim in
//! amortised passes the same way).
//!
//! # Reclaimer ([`reclaim`])
//!
//! Under the domain lock, take the retired list; then, unlocked: [`heavy`] (a fence if
//! every node taken was published fenced, below), one pass over
//! every slot of every block (a list of blocks it walks without the lock) that copies the
//! non-null addresses into a sorted snapshot, and for each node taken, a binary search of
//! the snapshot. A node no slot holds whose count the reclaimer can take from one (the
//! list's reference) to zero (`Retired::claim`, a compare-and-swap: no counted guard holds
//! it) is the reclaimer's; the others go back on the list (the lock again). Then each node
//! it claimed goes back to its pool (`Retired::recycle`: the pool's return path, which may
//! drop the object). The lock is never held across the barrier or user code, so
//! retirements and other reclamations go on meanwhile, each judging the nodes it took. So a pass costs one heavy barrier, one load per slot and `O(log slots)` per
//! retired node, whatever the number of threads and held versions; and a panic in one
//! node's return (a `T::drop` that panics) does not stop the others: the pass finishes its
//! batch, then resumes the panic on the thread that ran it.
//!
//! # Why a recycled node is never read
//!
//! Barriers are totally ordered (heavy against light as `fence(SeqCst)` against
//! `fence(SeqCst)`). Take a reader that returns a guard on node `p` and a reclaimer that
//! decides `p` is unprotected. The swap that retired `p` precedes the reclaimer's heavy
//! barrier (it precedes the push onto the retired list, which the reclaimer's lock acquires).
//! If the reader's light barrier comes before that heavy barrier, the reclaimer's look at
//! the slot sees the reader's store (or a later one by the same slot, after the reader's
//! `Release` clear: then the reads are done). If it comes after, the reader's re-load sees
//! the swap or something later, so not `p`, unless `p` was recycled and published anew
//! since, which the reclaimer's decision has not yet allowed. A pass judges only the nodes
//! retired before its heavy barrier: the ones it took off the list before issuing it. A
//! block made after the barrier is missed by the scan, and need not be seen: a reader
//! that protects with it re-loads `current` after the barrier, so not a node retired
//! before it.
//!
//! A node published *fenced* (`container/raw.rs`, "Fenced versions") was protected only by
//! readers that issued `fence(SeqCst)` as their light barrier. For a pass whose nodes are
//! all fenced, a `fence(SeqCst)` of the reclaimer's own takes the heavy barrier's place in
//! the argument above (two fences are totally ordered too); a pass with one plain node
//! issues the heavy barrier for the whole batch.
//!
//! # Orderings
//!
//! - Slot stores `Release`, the reclaimer's slot loads `Acquire`: a guard's reads of the
//!   object happen-before whoever sees its slot empty (or refilled) and recycles the node.
//!   The owner's look for a free slot is `Acquire` too: a slot emptied by a guard dropped
//!   on another thread and then refilled by its owner carries that thread's release on.
//! - The claim's compare-and-swap is `Acquire` on success: it reads the tail of the
//!   release sequence of every counted guard's `Release` decrement.
//! - The retired list and the block list are under one lock; the `pending` hint beside it
//!   is `Relaxed` and only decides whether a getter takes the lock.
//!
//! Sources: Maged Michael, "Hazard Pointers: Safe Memory Reclamation for Lock-Free Objects"
//! (IEEE TPDS 2004) for slots scanned before reclamation and the sorted snapshot of a scan;
//! folly's `hazptr` (folly/synchronization/Hazptr.h) for amortised reclamation and
//! asymmetric barriers with Linux `membarrier(2)`; arc-swap's per-thread debt nodes (never
//! freed, reused after thread exit) for the block lifecycle.

use std::cell::Cell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use crate::barrier::{full, heavy, light};
use crate::reclaimer::{Wake, BACKSTOP};
use crate::registry;
use crate::sync::{AtomicPtr, AtomicUsize, Mutex, MutexGuard, Ordering};

/// Slots per block.
#[cfg(not(loom))]
const BLOCK_SLOTS: usize = 8;
/// Under loom, two.
#[cfg(loom)]
const BLOCK_SLOTS: usize = 2;

/// Blocks a thread may take besides its first, one at a time, when it holds more guards
/// at once than its blocks have slots.
#[cfg(not(loom))]
const SPILL_BLOCKS: usize = 15;
/// Under loom, one: models reach the counted fallback with five guards.
#[cfg(loom)]
const SPILL_BLOCKS: usize = 1;

/// Slots per thread. A thread holding more guards at once takes the counted fallback.
pub(crate) const SLOTS: usize = BLOCK_SLOTS * (1 + SPILL_BLOCKS);

/// Retired versions at which [`retire`] reclaims by itself. Below it, retired versions wait
/// for a pool getter that finds nothing idle ([`reclaim_pending`]), for the next version
/// that reaches the threshold, or for [`reclaim`]. A bound on the versions an update-only
/// writer (one that never gets objects from the pool) leaves waiting.
pub(crate) const RECLAIM_THRESHOLD: usize = 8;

/// The most yields a pool getter that found nothing idle waits for other threads'
/// reclamation passes to end ([`reclaim_pending`]): a pass is a heavy barrier, a scan and
/// the returns, microseconds, unless it runs a long `T::drop`.
#[cfg(not(loom))]
const PASS_WAIT: u32 = 256;
/// Under loom, one: enough for a model to take both branches.
#[cfg(loom)]
const PASS_WAIT: u32 = 1;

/// One hazard slot: the node it protects, or null.
pub(crate) struct Slot {
    node: AtomicPtr<()>,
}

/// A thread's slots, on cache lines of their own.
#[repr(align(128))]
pub(crate) struct Block {
    slots: [Slot; BLOCK_SLOTS],
    /// The owner's next block (its *spill* chain), or null: read and written by the owner
    /// thread only, and emptied when the owner gives its blocks back.
    spill: AtomicPtr<Block>,
    /// The block made before this one (null for the first): the domain's blocks form a
    /// list that a reclaimer walks without the lock. Set before the block is published
    /// (`Domain::blocks`), never changed after.
    next: AtomicPtr<Block>,
}

impl Block {
    fn new(next: *mut Block) -> Block {
        Block {
            slots: std::array::from_fn(|_| Slot {
                node: AtomicPtr::new(ptr::null_mut()),
            }),
            spill: AtomicPtr::new(ptr::null_mut()),
            next: AtomicPtr::new(next),
        }
    }

    /// Whether no slot of the block protects anything: a block fit for a new thread.
    fn is_clean(&self) -> bool {
        // Acquire: as in `free_slot` (a slot emptied on another thread).
        self.slots
            .iter()
            .all(|slot| slot.node.load(Ordering::Acquire).is_null())
    }
}

/// A retired node and what a reclaimer does with it.
#[derive(Clone, Copy)]
pub(crate) struct Retired {
    node: NonNull<()>,
    /// Whether every reader that protected the node with a slot issued a full fence
    /// (`fence(SeqCst)`) between its slot store and its re-load: the node was published
    /// *fenced* (see `container/raw.rs`, "Fenced versions"). A pass whose nodes are all
    /// fenced needs only a fence of its own, not the heavy barrier.
    fenced: bool,
    /// Takes the node's count from one (the retired list's reference) to zero; `false`,
    /// changing nothing, if a counted guard still holds it.
    claim: unsafe fn(NonNull<()>) -> bool,
    /// Returns a claimed node (count zero, owned by the caller) to its pool.
    recycle: unsafe fn(NonNull<()>),
}

impl Retired {
    /// A retired node with the two functions a reclaimer calls on it.
    ///
    /// # Safety
    ///
    /// `claim(node)` must take the node's count from one to zero and report whether it
    /// did, and `recycle(node)` must give a node so claimed back to its pool; both may be
    /// called on any thread while the node is on the retired list.
    /// `fenced` must be `true` only if every slot protection of `node` since it became
    /// current was followed by a full fence before its re-load (see the field).
    pub(crate) unsafe fn new(
        node: NonNull<()>,
        fenced: bool,
        claim: unsafe fn(NonNull<()>) -> bool,
        recycle: unsafe fn(NonNull<()>),
    ) -> Retired {
        Retired {
            node,
            fenced,
            claim,
            recycle,
        }
    }
}

struct State {
    /// Every block ever made; `owned[i]` says whether a live thread owns `blocks[i]`.
    /// Boxed: slots must not move when the vector grows (guards point into them).
    #[allow(clippy::vec_box)]
    blocks: Vec<Box<Block>>,
    owned: Vec<bool>,
    /// Retired nodes, oldest first.
    retired: Vec<Retired>,
    /// Buffers a reclamation takes out of the lock and gives back, kept for their
    /// capacity: the retired nodes it judges, the protected addresses (sorted), the nodes
    /// it claimed. A reclamation that finds one taken by another makes its own.
    judged: Vec<Retired>,
    protected: Vec<*mut ()>,
    claimed: Vec<Retired>,
}

// SAFETY: `Retired` holds node pointers whose counted references may be dropped on any
// thread: nodes are `Send` (see `pool/node.rs`), and `Container` requires `T: Send + Sync`
// before any node is retired. `protected` holds addresses only, never dereferenced.
unsafe impl Send for State {}

/// The process-wide set of blocks and retired nodes.
struct Domain {
    /// The domain's name in the per-thread registry, where each thread's block is recorded.
    id: u64,
    state: Mutex<State>,
    /// The newest block; older ones follow through [`Block::next`]. Written under the lock
    /// (`Release`, after the block is whole), read by reclaimers without it (`Acquire`).
    blocks: AtomicPtr<Block>,
    /// How many blocks exist: a reclamation sizes its snapshot for all their slots before
    /// the scan, so that it allocates only after a thread's first read (or a thread's
    /// spill) made a block, never because more slots happen to be full.
    block_count: AtomicUsize,
    /// `state.retired.len()` as of the last change, read without the lock to decide
    /// whether a reclamation could return anything.
    pending: AtomicUsize,
    /// The background reclaimer's handshake (`reclaimer.rs`).
    wake: Wake,
    /// Reclamation passes in flight: each holds the retired nodes it took off the list
    /// until it has returned them. A pool getter that finds nothing idle waits for them
    /// ([`reclaim_pending`]) rather than build an object while its own version is in one.
    passes: AtomicUsize,
    /// Reclamation passes ended so far: a getter that looked at its pool before a pass
    /// ended looks again ([`reclaim_pending`]).
    passes_ended: AtomicUsize,
}

impl Domain {
    fn new() -> Domain {
        Domain {
            id: registry::next_id(),
            state: Mutex::new(State {
                blocks: Vec::new(),
                owned: Vec::new(),
                // Room for the versions retired between reclamations and for a burst that
                // guards hold, made once: the lists grow (allocate) only past their
                // largest size so far.
                retired: Vec::with_capacity(4 * RECLAIM_THRESHOLD),
                judged: Vec::with_capacity(4 * RECLAIM_THRESHOLD),
                protected: Vec::new(),
                claimed: Vec::with_capacity(4 * RECLAIM_THRESHOLD),
            }),
            blocks: AtomicPtr::new(ptr::null_mut()),
            block_count: AtomicUsize::new(0),
            pending: AtomicUsize::new(0),
            wake: Wake::new(),
            passes: AtomicUsize::new(0),
            passes_ended: AtomicUsize::new(0),
        }
    }
}

#[cfg(not(loom))]
fn domain() -> &'static Domain {
    // The std half of a pair: under loom, `loom::lazy_static!` below.
    #[allow(clippy::disallowed_types)]
    static DOMAIN: std::sync::OnceLock<Domain> = std::sync::OnceLock::new();
    DOMAIN.get_or_init(Domain::new)
}

// Under loom, one domain per model execution, leaked so that the main thread's exit hook,
// which loom runs after it drops its lazy statics, can still give its block back.
#[cfg(loom)]
loom::lazy_static! {
    static ref DOMAIN: &'static Domain = Box::leak(Box::new(Domain::new()));
}

#[cfg(loom)]
fn domain() -> &'static Domain {
    &DOMAIN
}

/// A block address no block has (the lowest 128-aligned address, never allocated): the
/// thread has exited. No integer-to-pointer cast, so Miri's strict provenance accepts it.
fn exited() -> *const Block {
    NonNull::<Block>::dangling().as_ptr()
}

#[cfg(not(loom))]
std::thread_local! {
    /// This thread's block: null until its first read, [`exited`] once its registry ran.
    static BLOCK: Cell<*const Block> = const { Cell::new(ptr::null()) };
    /// The slot this thread last took in a spill block, or null: where a thread that
    /// holds many guards looks first (guards are mostly dropped last-in, first-out).
    static SPILL_HINT: Cell<*const Slot> = const { Cell::new(ptr::null()) };
}

#[cfg(loom)]
loom::thread_local! {
    static BLOCK: Cell<*const Block> = Cell::new(ptr::null());
    static SPILL_HINT: Cell<*const Slot> = Cell::new(ptr::null());
}

/// The calling thread's block: null before its first read, [`exited`] after its exit hook
/// (or once its thread-locals are gone).
#[inline]
fn this_block() -> *const Block {
    // `try_with` fails only under loom, whose thread-locals all have destructors.
    BLOCK.try_with(Cell::get).unwrap_or_else(|_| exited())
}

/// A free slot of the calling thread's block, or `None` if all are held (or the thread is
/// exiting): the caller then takes a counted reference instead.
#[inline]
pub(crate) fn free_slot() -> Option<&'static Slot> {
    let block = this_block();
    let block = if block.is_null() || ptr::eq(block, exited()) {
        claim_block()?
    } else {
        // SAFETY: a block is never freed (loom: not before the model ends) and this thread
        // owns it until its registry entry's hook runs, which sets `BLOCK` to [`exited`].
        unsafe { &*block }
    };
    // Acquire: the null may come from a guard dropped on another thread; reading it with
    // Acquire puts that thread's reads of the old version before this thread's next store
    // to the slot, so a reclaimer that reads that store (Acquire) sees those reads over.
    // With Relaxed here, a reclaimer that sees only the new value would not (ThreadSanitizer
    // found it; loom's `slot_reused_after_a_foreign_drop` models it). Only this thread
    // fills a slot, so a null stays null until it does.
    let free = block
        .slots
        .iter()
        .find(|slot| slot.node.load(Ordering::Acquire).is_null());
    match free {
        Some(slot) => Some(slot),
        None => spill_slot(block),
    }
}

/// A free slot past the calling thread's first block, whose slots are all held: the slot it
/// last took there if that is free again, else the first free one along its spill chain,
/// taking one more block if the chain has none and may grow; `None` when every slot of
/// [`SPILL_BLOCKS`] more blocks is held.
#[cold]
#[inline(never)]
fn spill_slot(first: &'static Block) -> Option<&'static Slot> {
    let hint = SPILL_HINT.try_with(Cell::get).unwrap_or(ptr::null());
    // SAFETY: a hint is a slot of a block of this thread's chain (set below), and blocks
    // are never freed (loom: not before the model ends).
    if let Some(slot) = unsafe { hint.as_ref() } {
        // Acquire: as in `free_slot`.
        if slot.node.load(Ordering::Acquire).is_null() {
            return Some(slot);
        }
    }
    let mut block = first;
    for _ in 0..SPILL_BLOCKS {
        // Relaxed: only this thread reads or writes its chain.
        let next = block.spill.load(Ordering::Relaxed);
        // SAFETY: a block in this thread's chain: never freed, and this thread's until its
        // exit hook gives the chain back.
        block = match unsafe { next.as_ref() } {
            Some(next) => next,
            None => {
                let new = claim_from_domain();
                // Relaxed: as above.
                block
                    .spill
                    .store(ptr::from_ref(new).cast_mut(), Ordering::Relaxed);
                new
            }
        };
        // Acquire: as in `free_slot`.
        if let Some(slot) = block
            .slots
            .iter()
            .find(|slot| slot.node.load(Ordering::Acquire).is_null())
        {
            let _ = SPILL_HINT.try_with(|h| h.set(slot));
            return Some(slot);
        }
    }
    None
}

/// Gives the calling thread a block on its first read: a clean one that an exited thread
/// gave back, or a new one (the thread's only allocation for reading).
#[cold]
#[inline(never)]
fn claim_block() -> Option<&'static Block> {
    if ptr::eq(this_block(), exited()) {
        return None;
    }
    let block = claim_from_domain();
    let _ = BLOCK.try_with(|b| b.set(block));
    let state = NonNull::from(block).cast::<()>();
    let hook = BlockHook {
        block,
        domain: domain(),
    };
    if registry::insert(domain().id, state, Box::new(hook)) {
        Some(block)
    } else {
        // Thread-locals are being destroyed: nothing would give the block back.
        release_block(block, domain());
        None
    }
}

/// A block for the calling thread: a clean one that an exited thread gave back, or a new
/// one (an allocation of 128 bytes).
fn claim_from_domain() -> &'static Block {
    let mut state = domain().state.lock();
    let state = &mut *state;
    // A block given back with a slot still full (a guard that outlived its thread, or a
    // forgotten one) would leave the new owner fewer slots, perhaps none, for as long as
    // that guard lives: take only a clean one, else make one.
    let clean = (0..state.blocks.len()).find(|&i| !state.owned[i] && state.blocks[i].is_clean());
    let at = match clean {
        Some(at) => at,
        None => {
            // Relaxed: the head is only written under the lock we hold.
            let newest = domain().blocks.load(Ordering::Relaxed);
            state.blocks.push(Box::new(Block::new(newest)));
            state.owned.push(false);
            let at = state.blocks.len() - 1;
            let block: *const Block = &*state.blocks[at];
            // Release: a reclaimer that loads the head sees the block whole, and every
            // block before it (each was published the same way, under this lock).
            domain().blocks.store(block.cast_mut(), Ordering::Release);
            // Relaxed: a size hint for reclaimers' snapshots.
            domain()
                .block_count
                .store(state.blocks.len(), Ordering::Relaxed);
            // Room in the snapshot for the new block's slots, now: the allocation is the
            // reading thread's first read's (or spill's), not a later reclamation's. (If
            // a reclamation has the snapshot out, this sizes the empty one it left, which
            // it keeps: the larger is kept.)
            let slots = state.blocks.len() * BLOCK_SLOTS;
            state
                .protected
                .reserve(slots.saturating_sub(state.protected.len()));
            at
        }
    };
    state.owned[at] = true;
    let block: *const Block = &*state.blocks[at];
    // SAFETY: boxes in `blocks` are never dropped or moved (the domain lives for the
    // process; under loom, for the model execution, which every guard dies in).
    unsafe { &*block }
}

/// The registry hook that gives a thread's block back when it exits.
struct BlockHook {
    block: &'static Block,
    domain: &'static Domain,
}

impl registry::Hook for BlockHook {
    fn owner_is_gone(&self) -> bool {
        false
    }
    fn thread_exit(&self) {
        release_block(self.block, self.domain);
    }
}

/// Gives a thread's block, and its spill chain, back to the domain, for new threads to
/// take over.
fn release_block(block: &'static Block, domain: &'static Domain) {
    // `BLOCK` has no destructor (loom: is destroyed after the registry), so this works
    // while thread-locals are being destroyed; later reads on this thread take the counted
    // fallback.
    let _ = BLOCK.try_with(|b| b.set(exited()));
    let _ = SPILL_HINT.try_with(|h| h.set(ptr::null()));
    let mut state = domain.state.lock();
    let state = &mut *state;
    let mut next: *const Block = block;
    // SAFETY: blocks are never freed; the chain is this exiting thread's.
    while let Some(block) = unsafe { next.as_ref() } {
        if let Some(at) = state.blocks.iter().position(|b| ptr::eq(&**b, block)) {
            debug_assert!(state.owned[at], "a block released twice");
            state.owned[at] = false;
        }
        // Relaxed: the owner's own field (this thread, or its exit hook on it).
        next = block.spill.swap(ptr::null_mut(), Ordering::Relaxed);
    }
}

impl Slot {
    /// Step 2 of the reader: protect `node`, then issue the light barrier, or a full fence
    /// if the version is `fenced` (see [`Retired`]'s field). The caller then re-loads and
    /// checks.
    #[inline]
    pub(crate) fn protect(&self, node: NonNull<()>, fenced: bool) {
        // Relaxed: a check. Only this thread fills a slot, and it found this one empty (or
        // emptied it itself), so nothing but null can be read here.
        debug_assert!(
            self.node.load(Ordering::Relaxed).is_null(),
            "a hazard slot protected twice"
        );
        // Release: see the module docs (a reclaimer that reads this value synchronizes
        // with everything this thread did before, including clearing the slot's last use).
        self.node.store(node.as_ptr(), Ordering::Release);
        if fenced {
            full();
        } else {
            light();
        }
    }

    /// Whether the slot protects `node` now; for the read path's assertions.
    #[inline]
    pub(crate) fn protects(&self, node: NonNull<()>) -> bool {
        // Relaxed: a check by the thread that filled the slot (or was handed its guard).
        untag(self.node.load(Ordering::Relaxed)).0 == node.as_ptr()
    }
}

/// The low bit of a node address as `current` and the slots may hold it: the version was
/// published *fenced* (`container/raw.rs`, "Fenced versions"). Nodes are aligned to at
/// least 2 bytes (they hold atomics), so the bit names no other node.
pub(crate) const FENCED: usize = 1;

/// `tagged` without the [`FENCED`] bit, and whether it had it. A slot may hold a node's
/// tagged address: it protects the same node.
#[inline(always)]
pub(crate) fn untag<T>(tagged: *mut T) -> (*mut T, bool) {
    let tag = tagged as usize & FENCED;
    // `wrapping_sub` keeps the pointer's provenance (strict provenance, MSRV 1.80).
    (tagged.cast::<u8>().wrapping_sub(tag).cast(), tag != 0)
}

/// Drops the protection in `slot`, from any thread: one `Release` store.
#[inline]
pub(crate) fn clear(slot: &Slot) {
    // Relaxed: a check. The slot was filled by the guard that clears it (on this thread, or
    // on one that handed the guard over with a happens-before edge), and nobody else
    // empties it.
    debug_assert!(
        !slot.node.load(Ordering::Relaxed).is_null(),
        "a hazard slot cleared twice"
    );
    // Release: this guard's reads of the object happen-before a reclaimer that sees null.
    slot.node.store(ptr::null_mut(), Ordering::Release);
}

/// Hands a node just swapped out of its container, with the container's counted reference
/// on it, to the retired list; reclaims if the list reached [`RECLAIM_THRESHOLD`], or,
/// while a background reclaimer runs, wakes that one instead (reclaiming only at
/// [`BACKSTOP`]).
///
/// # Safety
///
/// The node of `retired` is no longer any container's current version, and the caller
/// hands over one counted reference on it, which the list keeps until a reclaimer claims
/// the node.
pub(crate) unsafe fn retire(retired: Retired) {
    let mut state = domain().state.lock();
    state.retired.push(retired);
    let len = state.retired.len();
    // Relaxed: a hint (see `Domain::pending`); the list itself is under the lock.
    domain().pending.store(len, Ordering::Relaxed);
    let background = domain().wake.running();
    if len
        >= if background {
            BACKSTOP
        } else {
            RECLAIM_THRESHOLD
        }
    {
        collect(state);
    } else if background {
        drop(state);
        domain().wake.after_retire();
    }
}

/// The background reclaimer's handshake.
pub(crate) fn wake() -> &'static Wake {
    &domain().wake
}

/// How many nodes are retired, as of a recent moment (see `Domain::pending`).
pub(crate) fn pending() -> usize {
    // Relaxed: a hint; the reclaimer orders it with a fence where it matters.
    domain().pending.load(Ordering::Relaxed)
}

/// Recycles every retired node that no slot protects and no counted guard holds (see the
/// module docs); returns how many. Never waits for a reader: held nodes stay on the list.
pub(crate) fn reclaim() -> usize {
    collect(domain().state.lock())
}

/// How many reclamation passes have ended: read by a pool getter before it looks at its
/// pool, and given to [`reclaim_pending`] after the look found nothing.
pub(crate) fn passes_ended() -> usize {
    // Acquire: pairs with the Release at a pass's end (see `collect`).
    domain().passes_ended.load(Ordering::Acquire)
}

/// [`reclaim`] if any node is retired: for a pool getter that found nothing idle, before
/// it builds an object or waits. `looked` is [`passes_ended`] as read before the getter
/// looked at its pool. Returns how many nodes went back to their pools, plus 1 if another
/// thread's pass ended since `looked` (it may have returned the getter's own version):
/// a non-zero return sends the getter to look again.
///
/// First waits, for at most [`PASS_WAIT`] yields, for the passes in flight on other
/// threads (a background reclaimer's, another writer's): one may hold the getter's own
/// retired version, which it returns when it ends. Bounded, because a pass may be this
/// thread's own (a `T::drop` run by it that gets from a pool) or run a long `T::drop`.
pub(crate) fn reclaim_pending(looked: usize) -> usize {
    let mut waits = 0;
    let mut returned = 0;
    let mut own = 0;
    loop {
        // Acquire: pairs with the Release at a pass's end (see `collect`); the returns
        // themselves are ordered by the pools' own synchronization.
        while waits < PASS_WAIT && domain().passes.load(Ordering::Acquire) != 0 {
            waits += 1;
            crate::sync::yield_now();
        }
        if !has_pending() {
            break;
        }
        let n = match pass(domain().state.lock()) {
            Some(n) => {
                own += 1;
                n
            }
            None => 0,
        };
        returned += n;
        // A pass that another thread began since the wait above may have taken the list
        // (this one found it empty): wait for that one too.
        if n != 0 || waits >= PASS_WAIT || domain().passes.load(Ordering::Acquire) == 0 {
            break;
        }
    }
    // Passes of this thread's own (above) ended too: what they returned is in `returned`.
    let others = passes_ended().wrapping_sub(looked) > own;
    returned + usize::from(others)
}

/// Whether any node was retired and not yet reclaimed, as of a recent moment.
#[inline]
pub(crate) fn has_pending() -> bool {
    // A hint: a stale zero at worst skips a reclamation that a later getter, the next
    // threshold or `reclaim` runs; a stale non-zero costs a lock.
    pending() != 0
}

/// A reclamation pass; `state` is the domain lock, held only to take the retired list and
/// to give back what stays on it: the heavy barrier, the scan and the claims run unlocked,
/// so retirements and other reclamations go on meanwhile.
fn collect(state: MutexGuard<'_, State>) -> usize {
    pass(state).unwrap_or(0)
}

/// [`collect`], or `None` if nothing was retired (no pass ran).
fn pass(mut state: MutexGuard<'_, State>) -> Option<usize> {
    if state.retired.is_empty() {
        return None;
    }
    // Every node taken here was retired before the heavy barrier below: this pass judges
    // those only (module docs, "Why a recycled node is never read"). Nodes retired after
    // the take wait on the list for the next pass.
    // Relaxed: taken under the lock with the nodes; only `reclaim_pending` reads it, to
    // wait for the end (the Release below).
    domain().passes.fetch_add(1, Ordering::Relaxed);
    let mut judged = std::mem::take(&mut state.judged);
    std::mem::swap(&mut judged, &mut state.retired);
    let mut protected = std::mem::take(&mut state.protected);
    let mut batch = std::mem::take(&mut state.claimed);
    drop(state);

    // A fenced node's readers fenced after their slot stores: a fence pairs with theirs as
    // two `fence(SeqCst)`s do (fence mode's argument, node by node). One node that is not
    // fenced needs the heavy barrier, which serves the whole batch.
    if judged.iter().all(|r| r.fenced) {
        full();
    } else {
        heavy();
    }
    protected.clear();
    // Relaxed: a size hint (see the field); a block made meanwhile may grow the snapshot.
    protected.reserve(domain().block_count.load(Ordering::Relaxed) * BLOCK_SLOTS);
    // Acquire: see the field (every block published before the heavy barrier).
    let mut block = domain().blocks.load(Ordering::Acquire);
    // SAFETY: blocks are never freed (loom: not before the model ends), and each was whole
    // when published (above).
    while let Some(b) = unsafe { block.as_ref() } {
        for slot in &b.slots {
            // Acquire: see the module docs.
            let node = slot.node.load(Ordering::Acquire);
            if !node.is_null() {
                protected.push(untag(node).0);
            }
        }
        // Relaxed: set before the block was published, and the head's Acquire above
        // made it visible.
        block = b.next.load(Ordering::Relaxed);
    }
    protected.sort_unstable();
    judged.retain(|r| {
        if protected.binary_search(&r.node.as_ptr()).is_ok() {
            return true;
        }
        // SAFETY: the list owns a counted reference on `r.node` (see `retire`), so the
        // node is live; `claim` is the function `Retired::new` was given for it.
        if unsafe { (r.claim)(r.node) } {
            batch.push(*r);
            false
        } else {
            true
        }
    });

    {
        let mut state = domain().state.lock();
        let state = &mut *state;
        // What stays, back on the list ahead of what was retired meanwhile (oldest first).
        judged.append(&mut state.retired);
        std::mem::swap(&mut judged, &mut state.retired);
        // Relaxed: a hint, as in `retire`.
        domain()
            .pending
            .store(state.retired.len(), Ordering::Relaxed);
        keep_larger(&mut state.judged, judged);
        keep_larger(&mut state.protected, protected);
    }

    // The pool's return path may drop an object (`T::drop`), which may read or update a
    // container itself: no lock is held. Oldest first, so the freshest version is the one
    // on top of its depot. Every node of the batch goes back even if one return panics;
    // the first panic is resumed after.
    let released = batch.len();
    let mut panicked = None;
    for r in batch.drain(..) {
        // SAFETY: `claim` succeeded: this thread owns the node (count zero) and no slot
        // protects it, so no reader can still read it.
        let recycle = || unsafe { (r.recycle)(r.node) };
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(recycle)) {
            panicked.get_or_insert(payload);
        }
    }
    keep_larger(&mut domain().state.lock().claimed, batch);
    // Release: the pass's returns happen before a getter that sees either count change
    // looks at its pool again.
    domain().passes_ended.fetch_add(1, Ordering::Release);
    domain().passes.fetch_sub(1, Ordering::Release);
    if let Some(payload) = panicked {
        panic::resume_unwind(payload);
    }
    Some(released)
}

/// Puts `buffer` (emptied) back in `slot` unless `slot` holds a larger one.
fn keep_larger<T>(slot: &mut Vec<T>, mut buffer: Vec<T>) {
    if buffer.capacity() > slot.capacity() {
        buffer.clear();
        *slot = buffer;
    }
}

impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: an instantaneous reading for debugging.
        f.debug_struct("Slot")
            .field("node", &self.node.load(Ordering::Relaxed))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::SLOTS;
    use crate::{Container, Guard, Pool};

    /// A thread holding one guard on each of `SLOTS + 1` containers: every guard but the
    /// last reads through a slot (its spill chain grows), the last through a count; a slot
    /// given back is found again (the spill hint), on the first block and past it.
    #[test]
    fn guards_past_the_first_block_take_spill_slots() {
        let pool = Pool::new(|| 0u32, |n| *n = 0);
        let containers: Vec<_> = (0..=SLOTS as u32)
            .map(|v| Container::from_value(&pool, v))
            .collect();
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut guards: Vec<_> = containers.iter().map(Container::acquire).collect();
                let counted: Vec<bool> = guards.iter().map(Guard::is_counted).collect();
                assert_eq!(counted.iter().filter(|&&c| c).count(), 1, "{counted:?}");
                assert!(counted[SLOTS], "the guard past every slot is not counted");
                for (v, g) in guards.iter().enumerate() {
                    assert_eq!(**g, v as u32);
                }
                // Last in, first out: the spill slot just freed is taken again.
                drop(guards.pop());
                drop(guards.pop());
                let again = containers[SLOTS - 1].acquire();
                assert!(!Guard::is_counted(&again));
                // A slot of the first block, freed: found there.
                drop(guards.swap_remove(0));
                let first = containers[0].acquire();
                assert!(!Guard::is_counted(&first));
            });
        });
    }
}
