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
//! Each block has a *high-water mark*: how many of its leading slots were ever taken (at
//! least 1). A thread takes the first free slot, so one that holds a guard at a time only
//! ever takes slot 0 and never writes the mark; taking a slot at or past the mark raises it
//! first (a `Relaxed` store, once per slot index in the block's life). The mark only grows,
//! also when the block goes to a new thread, and a pass loads only the slots under it.
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
//! reference on it to its pool's *retired list* ([`List`]: one per pool, so writers of
//! independent containers share no lock and no written cache line). The list's reference
//! keeps the version from being recycled by anyone but a reclaimer: a counted guard's drop
//! only takes the count down to the list's one. The writer reclaims the list when it holds
//! [`RECLAIM_THRESHOLD`] versions; before that, the versions wait for the next
//! reclamation, which a getter of the pool that finds no idle object runs first
//! ([`List::reclaim_pending`]: a writer whose next `get_new` would otherwise build an
//! object gets the retired versions back instead). So an update usually makes no heavy
//! barrier at all, and a reclamation serves every version retired since the last one
//! (folly's hazptr and haphazard reclaim in amortised passes the same way).
//!
//! # Reclaimer (passes)
//!
//! A *pass* takes retired nodes off one list (a getter's pass, a writer's at the
//! threshold, a waiting getter's) or off every list ([`reclaim`]: a container's drop, the
//! background `Reclaimer`, the async getters' thread), each list under its own lock,
//! counting itself in flight on each list it took from (`List::passes`). Then, unlocked:
//! [`heavy`](crate::barrier::heavy) (a fence if every node taken was published fenced, below), one pass over
//! every block (through the domain's directory of blocks, an array it reads without a
//! lock), loading its mark and then, if the mark is 1, slot 0 only (a block whose owner
//! never held two guards at once costs two loads and one branch, not 8 loads), else all 8
//! slots (their OR, and one branch if all are null), and for each node
//! taken, a test against the protected addresses: for a batch of at most 8 nodes a
//! comparison with each full slot's address, for a larger one a binary search of a sorted
//! snapshot of them. A node no slot holds whose count the reclaimer can take from one (the
//! list's reference) to zero (`Retired::claim`, a compare-and-swap: no counted guard holds
//! it) is the reclaimer's; the others go back on the list they came from (its lock again),
//! ahead of what was retired meanwhile. Then each node it claimed goes back to its pool
//! (`Retired::recycle`: the pool's return path, which may drop the object), and the pass
//! ends on each list (`List::passes_ended`). No lock is held across the barrier or user
//! code, so retirements and other passes go on meanwhile, each judging the nodes it took.
//! So a pass costs one heavy barrier, two loads per block whose mark is 1 and nine per other
//! block, and
//! at most 8 comparisons per full slot or `O(log slots)` per retired node, whatever the
//! number of threads and held versions; and a panic in one node's return (a `T::drop` that panics) does not stop the
//! others: the pass finishes its batch, then resumes the panic on the thread that ran it.
//!
//! A getter of a pool that found nothing idle first waits (a bounded number of yields)
//! for the passes in flight on its pool's list, which may hold its own retired version,
//! and looks again if one ended since it looked: only passes over its own pool's list
//! count, so a writer of another pool never waits for it.
//!
//! Lists are made by the domain and never freed: a pool takes one when it is built (a
//! lock, perhaps an allocation) and gives it back when its shared state goes, which no
//! retired version outlives (each holds its pool); a later pool takes it over. A global
//! pass walks them through a list of lists.
//!
//! # Why a recycled node is never read
//!
//! Barriers are totally ordered (heavy against light as `fence(SeqCst)` against
//! `fence(SeqCst)`). Take a reader that returns a guard on node `p` and a reclaimer that
//! decides `p` is unprotected. The swap that retired `p` precedes the reclaimer's heavy
//! barrier (it precedes the push onto the retired list, which the list's lock, taken by
//! the pass, orders before the take).
//! If the reader's light barrier comes before that heavy barrier, the reclaimer's look at
//! the slot sees the reader's store (or a later one by the same slot, after the reader's
//! `Release` clear: then the reads are done). If it comes after, the reader's re-load sees
//! the swap or something later, so not `p`, unless `p` was recycled and published anew
//! since, which the reclaimer's decision has not yet allowed. A pass judges only the nodes
//! retired before its heavy barrier: the ones it took off the list before issuing it. The
//! reader's block was entered in the directory (under the domain lock) before its slot
//! store, so the pass's loads of the directory and its length, after the barrier, reach
//! it (a directory made later holds every block of the ones before it). A
//! block made after the barrier is missed by the scan, and need not be seen: a reader
//! that protects with it re-loads `current` after the barrier, so not a node retired
//! before it.
//!
//! The scan skips the slots at or past a block's mark, which it loads (`Relaxed`) after
//! its heavy barrier. The owner raises the mark before it takes such a slot, so the mark's
//! store precedes the slot's store, and both precede the reader's light barrier: its
//! `fence(SeqCst)` (fence mode), or, in membarrier mode, the compiler fence that keeps both
//! stores before any point of the reader at which the heavy barrier may interrupt it with
//! the re-load after it. So in the first case above (light before heavy), everything the
//! argument needs the scan to see, the slot's store, comes with the mark's: the scan loads
//! the mark after the barrier, reads a mark past the slot (the mark only grows), and loads
//! the slot. In the second case the scan need not see either. The order of the two stores
//! between themselves does not matter; that both precede the light barrier does (a mark
//! raised after it, or not at all, lets a pass miss a protecting slot: loom's
//! `second_slot_vs_scan`). So a slot the scan skips protects no node of its batch: a fill
//! whose barrier came before the heavy one came with a raise the scan sees, and a later
//! fill is the second case. A block handed to a new thread keeps its mark, and the new
//! owner reads it through the domain lock, so the mark still covers every slot ever filled.
//!
//! A node published *fenced* (`container/raw.rs`, "Fenced versions") was protected only by
//! readers that issued `fence(SeqCst)` as their light barrier. For a pass whose nodes are
//! all fenced, a `fence(SeqCst)` of the reclaimer's own takes the heavy barrier's place in
//! the argument above (two fences are totally ordered too); a pass with one plain node
//! issues the heavy barrier for the whole batch.
//!
//! # Orderings
//!
//! - The high-water mark is `Relaxed` both ways: it carries no data, and the barriers
//!   order it as they order the slot stores (above).
//! - Slot stores `Release`, the reclaimer's slot loads `Acquire`: a guard's reads of the
//!   object happen-before whoever sees its slot empty (or refilled) and recycles the node.
//!   The owner's look for a free slot is `Acquire` too: a slot emptied by a guard dropped
//!   on another thread and then refilled by its owner carries that thread's release on.
//! - The claim's compare-and-swap is `Acquire` on success: it reads the tail of the
//!   release sequence of every counted guard's `Release` decrement.
//! - Each retired list is under its own lock; the `pending` hint beside it is `Relaxed`
//!   and only decides whether a getter or a global pass takes the lock. The lists are
//!   published with a `Release` store of their list's head, the blocks with a `Release`
//!   store of the directory or of its length; a pass reads them `Acquire`.
//! - A pass's end on a list (`passes_ended`, then `passes`) is `Release`, read `Acquire`
//!   by a getter of the pool: the pass's returns happen before the getter's next look.
//!
//! Sources: Maged Michael, "Hazard Pointers: Safe Memory Reclamation for Lock-Free Objects"
//! (IEEE TPDS 2004) for slots scanned before reclamation and the sorted snapshot of a scan;
//! folly's `hazptr` (folly/synchronization/Hazptr.h) for amortised reclamation and
//! asymmetric barriers with Linux `membarrier(2)`; arc-swap's per-thread debt nodes (never
//! freed, reused after thread exit) for the block lifecycle.

use std::cell::Cell;
use std::fmt;
use std::ptr::{self, NonNull};

mod retired;

use self::retired::Buffers;
pub(crate) use self::retired::{
    claim_list, has_pending, reclaim, release_list, retire, retirements, wake, List, Retired,
    RECLAIM_THRESHOLD,
};
use crate::barrier::{full, light};
use crate::reclaimer::Wake;
use crate::registry;
use crate::sync::{AtomicPtr, AtomicUsize, Mutex, Ordering};

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

/// One hazard slot: the node it protects, or null.
pub(crate) struct Slot {
    node: AtomicPtr<()>,
}

/// A thread's slots, on cache lines of their own.
///
/// `repr(C)`: the high-water mark comes first, on the line of the first 7 slots, so that a
/// scan of a block whose owner only ever took its first slot reads one line.
#[repr(C, align(128))]
pub(crate) struct Block {
    /// The block's *high-water mark*: how many of its leading slots may have been filled,
    /// at least 1. Every slot at or past it has been null since the block was made, so a
    /// scan of a block whose mark is 1 loads slot 0 only (a thread that holds one guard at
    /// a time only ever takes slot 0: its block costs the scan the mark and one slot); a
    /// block with a higher mark is loaded whole, as without the mark.
    ///
    /// | who | what | when |
    /// |---|---|---|
    /// | the owner thread | raises it to `i + 1` (`Relaxed` load, then `Relaxed` store) | before it hands out slot `i >= mark` ([`Block::take`]), so before that slot's store and the barrier after it |
    /// | a reclaimer | loads it (`Relaxed`) | after its heavy barrier, before the slot loads |
    /// | nobody | lowers it | never: it stays when the block goes to another thread |
    ///
    /// Only the owner writes it, and a new owner takes the block under the domain lock
    /// that the old one gave it back under, so the owner's load reads the last store.
    mark: AtomicUsize,
    slots: [Slot; BLOCK_SLOTS],
    /// The owner's next block (its *spill* chain), or null: read and written by the owner
    /// thread only, and emptied when the owner gives its blocks back.
    spill: AtomicPtr<Block>,
}

impl Block {
    fn new() -> Block {
        Block {
            // Slot 0 is always scanned: the reader's common path (one guard at a time)
            // never touches the mark.
            mark: AtomicUsize::new(1),
            slots: std::array::from_fn(|_| Slot {
                node: AtomicPtr::new(ptr::null_mut()),
            }),
            spill: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Slot `at` of the block, for its owner thread to fill: first raises the high-water
    /// mark past it if it is not yet (a load and a branch; a store, the first time only).
    /// The caller stores into the slot after this returns, then issues its barrier: the
    /// mark's store precedes that barrier as the slot's store does, which is all the scan
    /// needs (module docs, "Why a recycled node is never read").
    #[inline]
    fn take(&self, at: usize) -> &Slot {
        // Relaxed: only the owner writes the mark (see the field), so this reads its own
        // last store, or the previous owner's, which the domain lock ordered before.
        if at >= self.mark.load(Ordering::Relaxed) {
            self.raise(at);
        }
        &self.slots[at]
    }

    /// Raises the mark to cover slot `at`: once per slot index per block, ever.
    #[cold]
    #[inline(never)]
    fn raise(&self, at: usize) {
        // Relaxed: the mark carries no data (the slot's own `Release` store does); it needs
        // only to be visible to a pass that must see the slot's store, and the reader's
        // barrier, which follows both stores, gives it exactly that (module docs).
        self.mark.store(at + 1, Ordering::Relaxed);
    }

    /// The high-water mark as a pass reads it, after its heavy barrier (module docs): if
    /// it is 1, the scan loads slot 0 only ([`first`](Self::first)).
    #[inline(always)]
    pub(super) fn mark(&self) -> usize {
        // Relaxed: the pass's heavy barrier orders it against the readers' barriers, which
        // follow each raise (module docs).
        self.mark.load(Ordering::Relaxed)
    }

    /// Slot 0, which every mark covers.
    #[inline(always)]
    pub(super) fn first(&self) -> &Slot {
        &self.slots[0]
    }

    /// Whether no slot of the block protects anything: a block fit for a new thread.
    fn is_clean(&self) -> bool {
        // Acquire: as in `free_slot` (a slot emptied on another thread).
        self.slots
            .iter()
            .all(|slot| slot.node.load(Ordering::Acquire).is_null())
    }
}

/// The addresses of the domain's blocks, in the order they were made, as a reclaimer reads
/// them: an array, so that a scan's loads of the blocks do not wait for one another (a
/// linked list of blocks made each load wait for the one before; 64 registered threads
/// made that chain 65 loads long). Filled under the domain lock; when full, replaced by
/// one twice as large, and kept (a scan may still read it), so all of them together take
/// at most 32 bytes per block past the first directory's 128.
struct Directory {
    /// Entries filled: `blocks[..len]`. Stored under the lock (`Release`, after the
    /// entry), loaded by reclaimers without it (`Acquire`).
    len: AtomicUsize,
    blocks: Box<[AtomicPtr<Block>]>,
}

/// The first directory's entries.
#[cfg(not(loom))]
const DIRECTORY_CAPACITY: usize = 16;
/// Under loom, one: the second block of a model replaces the directory.
#[cfg(loom)]
const DIRECTORY_CAPACITY: usize = 1;

impl Directory {
    fn with_capacity(capacity: usize) -> Directory {
        Directory {
            len: AtomicUsize::new(0),
            blocks: (0..capacity)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
        }
    }

    /// The blocks published when `len` was loaded, oldest first; each whole.
    #[inline(always)]
    fn blocks(&self) -> impl Iterator<Item = &'static Block> + '_ {
        // Acquire: pairs with the Release in `publish_block`: every entry below the
        // length read is filled, with a whole block.
        let len = self.len.load(Ordering::Acquire);
        self.blocks[..len].iter().map(|entry| {
            // Relaxed: filled before `len` was stored (Release), which the Acquire above
            // read.
            let block = entry.load(Ordering::Relaxed);
            debug_assert!(
                !block.is_null(),
                "a directory entry below its length is empty"
            );
            // SAFETY: a filled entry is a block of `State::blocks`, never freed (loom: not
            // before the model ends).
            unsafe { &*block }
        })
    }
}

struct State {
    /// Every block ever made; `owned[i]` says whether a live thread owns `blocks[i]`.
    /// Boxed: slots must not move when the vector grows (guards point into them).
    #[allow(clippy::vec_box)]
    blocks: Vec<Box<Block>>,
    owned: Vec<bool>,
    /// Every directory ever made, the current one last; `blocks[i]` is entry `i` of the
    /// current one. Boxed: a reclaimer may read a replaced one.
    #[allow(clippy::vec_box)]
    directories: Vec<Box<Directory>>,
    /// Every retired list ever made (`List::owned` says whether a pool owns it). Boxed:
    /// pools and retired nodes point at their list.
    #[allow(clippy::vec_box)]
    lists: Vec<Box<List>>,
    /// A global pass's buffers ([`reclaim`]), as [`Buffers`] are a list's, and the lists
    /// it took nodes from.
    buffers: Buffers,
    taken: Vec<&'static List>,
}

// SAFETY: `Buffers` holds retired entries between passes only emptied (see its impl);
// `taken` holds references to lists, which are `Sync`.
unsafe impl Send for State {}

/// The process-wide set of blocks and retired lists.
struct Domain {
    /// The domain's name in the per-thread registry, where each thread's block is recorded.
    id: u64,
    state: Mutex<State>,
    /// The current [`Directory`] of the blocks, or null before the first block. Written
    /// under the lock (`Release`, after the directory is filled), read by reclaimers
    /// without it (`Acquire`).
    directory: AtomicPtr<Directory>,
    /// How many blocks exist: a reclamation sizes its snapshot for all their slots before
    /// the scan.
    block_count: AtomicUsize,
    /// The newest retired list; older ones follow through [`List::next`]. Written under
    /// the lock (`Release`, after the list is whole), read by global passes without it
    /// (`Acquire`).
    lists: AtomicPtr<List>,
    /// The background reclaimer's handshake (`reclaimer.rs`).
    wake: Wake,
}

impl Domain {
    fn new() -> Domain {
        Domain {
            id: registry::next_id(),
            state: Mutex::new(State {
                blocks: Vec::new(),
                owned: Vec::new(),
                directories: Vec::new(),
                lists: Vec::new(),
                buffers: Buffers::new(),
                taken: Vec::new(),
            }),
            directory: AtomicPtr::new(ptr::null_mut()),
            block_count: AtomicUsize::new(0),
            lists: AtomicPtr::new(ptr::null_mut()),
            wake: Wake::new(),
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
        .position(|slot| slot.node.load(Ordering::Acquire).is_null());
    match free {
        // Slot 0 is under every mark: the common path does not touch it.
        Some(0) => Some(&block.slots[0]),
        Some(at) => Some(block.take(at)),
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
        if let Some(at) = block
            .slots
            .iter()
            .position(|slot| slot.node.load(Ordering::Acquire).is_null())
        {
            // The mark covers a slot taken once; the hint above is one of those.
            let slot = block.take(at);
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
/// one (an allocation of 128 bytes, and of a directory twice as large when it is full).
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
            state.blocks.push(Box::new(Block::new()));
            state.owned.push(false);
            publish_block(state);
            // Relaxed: a size hint for reclaimers' snapshots.
            domain()
                .block_count
                .store(state.blocks.len(), Ordering::Relaxed);
            state.blocks.len() - 1
        }
    };
    state.owned[at] = true;
    let block: *const Block = &*state.blocks[at];
    // SAFETY: boxes in `blocks` are never dropped or moved (the domain lives for the
    // process; under loom, for the model execution, which every guard dies in).
    unsafe { &*block }
}

/// Enters the block just pushed on `state.blocks` in the directory, first replacing a
/// full directory with one twice as large (an allocation).
fn publish_block(state: &mut State) {
    let at = state.blocks.len() - 1;
    let full = state
        .directories
        .last()
        .map_or(true, |d| d.blocks.len() == at);
    if full {
        let directory = Directory::with_capacity((2 * at).max(DIRECTORY_CAPACITY));
        for (entry, block) in directory.blocks.iter().zip(&state.blocks[..at]) {
            // Relaxed: published below with the directory (Release).
            entry.store(ptr::from_ref::<Block>(block).cast_mut(), Ordering::Relaxed);
        }
        // Relaxed: as the entries.
        directory.len.store(at, Ordering::Relaxed);
        state.directories.push(Box::new(directory));
        let directory: *const Directory = &**state.directories.last().expect("just pushed");
        // Release: a reclaimer that loads the directory sees it filled with every block
        // made before (each entered the same way, under this lock).
        domain()
            .directory
            .store(directory.cast_mut(), Ordering::Release);
    }
    let directory = state.directories.last().expect("made above if none");
    // Relaxed: published by the length's store below (Release).
    directory.blocks[at].store(
        ptr::from_ref::<Block>(&state.blocks[at]).cast_mut(),
        Ordering::Relaxed,
    );
    // Release: a reclaimer that loads this length (Acquire) sees the entry filled and the
    // block whole.
    directory.len.store(at + 1, Ordering::Release);
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
    use super::{this_block, Block, SLOTS};
    use crate::{Container, Guard, Pool};

    /// The mark shares slot 0's cache line: a scan of a block whose owner only ever took
    /// slot 0 reads one line.
    #[test]
    fn the_mark_is_on_the_first_slots_line() {
        assert_eq!(std::mem::offset_of!(Block, mark), 0);
        assert_eq!(std::mem::offset_of!(Block, slots), 8);
        assert_eq!(std::mem::align_of::<Block>(), 128);
    }

    /// Guards in slots 1 and 2 of a thread's block raise its mark to at least 3, where it
    /// stays after they are dropped; while they live, passes keep their versions (a scan that stopped
    /// at slot 0 would recycle them, and the updates below would refill them).
    #[test]
    fn slots_past_the_first_raise_the_mark_and_are_scanned() {
        let pool = Pool::new(|| 0u32, |n| *n = 0);
        let c = Container::from_value(&pool, 1u32);
        let publish = |v: u32| {
            let mut next = c.get_new();
            *next = v;
            c.update(next);
        };
        std::thread::scope(|s| {
            s.spawn(|| {
                let mark = || {
                    // SAFETY: this thread's block, taken by its first read below and kept
                    // until the thread exits; blocks are never freed.
                    unsafe { &*this_block() }.mark()
                };
                let mut guards = vec![c.acquire()];
                // A block that another test's thread gave back keeps its mark.
                let before = mark();
                for v in 2..=3 {
                    publish(v);
                    guards.push(c.acquire());
                }
                assert_eq!(mark(), before.max(3));
                for v in 4..40 {
                    publish(v);
                    crate::reclaim();
                }
                let seen: Vec<u32> = guards.iter().map(|g| **g).collect();
                assert_eq!(seen, [1, 2, 3], "a held version was recycled");
                assert!(guards.iter().all(|g| !Guard::is_counted(g)));
                drop(guards);
                assert_eq!(mark(), before.max(3), "the mark went down");
            });
        });
    }

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
