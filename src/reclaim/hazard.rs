//! Hazard slots: how a reader protects a version without writing a cache line that
//! another reader reads, and the scan a reclamation pass makes of them.
//!
//! # Slots and blocks
//!
//! Each thread that reads takes a [`Block`] of 8 slots (128 bytes, one allocation, on its
//! first read) from the process-wide [`Domain`]; a thread that holds more guards at once
//! takes more blocks, one at a time, up to `HAZARD_SLOTS` (128) slots (its *spill* chain).
//! A slot holds the address of the node it protects, or null. Only the block's owner fills
//! an empty slot ([`free_slot`], [`Slot::protect`]); whoever drops the guard, on any
//! thread, empties it ([`clear`]). Nobody else writes a slot: a pass never converts or
//! clears a reader's protection, so a stale address only delays a return. Blocks are never
//! freed: an exiting thread gives its blocks back (its registry hook) and a new thread
//! takes one over; a block given back with a slot still full (a guard that outlived its
//! thread) goes to a new thread only if no clean block is free.
//!
//! Each block has a *high-water mark*: how many of its leading slots were ever taken (at
//! least 1). The owner raises it before it takes a slot at or past it (once per slot index
//! in the block's life), and a scan loads only the slots under it: a thread that holds one
//! guard at a time costs a scan two loads. The mark's store precedes the slot's store, and
//! both precede the reader's light barrier, so a scan that must see the slot (the reader's
//! barrier came before the pass's heavy one) also sees the raised mark; a mark raised after
//! the barrier could hide a protecting slot (loom's `second_slot_vs_scan`).
//!
//! A slot may hold a node's address with its low bit set ([`FENCED`]: a version published
//! *fenced*); the scan ignores that bit.
//!
//! # Orderings
//!
//! - Slot stores `Release`, a scan's slot loads `Acquire`: a guard's reads of its version
//!   happen before a pass that sees the slot empty (or refilled) returns the version. The
//!   owner's look for a free slot is `Acquire` too, so that a slot emptied on another
//!   thread and refilled carries that thread's release on.
//! - The mark is `Relaxed` both ways: it carries no data, and the barriers order it as
//!   they order the slot stores.
//! - The blocks are published under the domain lock with a `Release` store of the
//!   directory or of its length, which a scan loads `Acquire`. A block is entered before
//!   its owner's first slot store, so a scan after the heavy barrier reaches every block
//!   whose reader's barrier came before it (a directory made later holds every block of
//!   the ones before it).

use std::cell::Cell;
use std::fmt;
use std::ptr::{self, NonNull};

use super::barrier::{full, light};
use super::registry;
use crate::sync::{AtomicPtr, AtomicUsize, Mutex, Ordering};

/// Slots per block.
#[cfg(not(loom))]
pub(super) const BLOCK_SLOTS: usize = 8;
/// Under loom, two.
#[cfg(loom)]
pub(super) const BLOCK_SLOTS: usize = 2;

/// Blocks a thread may take besides its first, one at a time, when it holds more guards
/// at once than its blocks have slots.
#[cfg(not(loom))]
pub(super) const SPILL_BLOCKS: usize = 15;
/// Under loom, one: models reach the counted fallback with five guards.
#[cfg(loom)]
pub(super) const SPILL_BLOCKS: usize = 1;

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
    /// | a pass | loads it (`Relaxed`) | after its heavy barrier, before the slot loads |
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
    /// needs (module docs, "Slots and blocks").
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
    fn mark(&self) -> usize {
        // Relaxed: the pass's heavy barrier orders it against the readers' barriers, which
        // follow each raise (module docs).
        self.mark.load(Ordering::Relaxed)
    }

    /// Slot 0, which every mark covers.
    #[inline(always)]
    fn first(&self) -> &Slot {
        &self.slots[0]
    }

    /// Whether no slot of the block protects anything: a block fit for a new thread.
    fn is_clean(&self) -> bool {
        // Acquire: as in `free_slot` (a slot emptied on another thread).
        // loom-mutants: no model covers it: a block changes hands at its thread's exit, and
        // a model would need that exit, a guard of the block dropped on another thread and
        // a new thread's first read racing a pass.
        self.slots
            .iter()
            .all(|slot| slot.node.load(Ordering::Acquire).is_null())
    }
}

/// The addresses of the domain's blocks, in the order they were made, as a scan reads
/// them: an array, so that a scan's loads of the blocks do not wait for one another (as
/// they would along a linked list). Filled under the domain lock; when full, replaced by
/// one twice as large, and kept (a scan may still read it), so all of them together take
/// at most 32 bytes per block past the first directory's 128.
struct Directory {
    /// Entries filled: `blocks[..len]`. Stored under the lock (`Release`, after the
    /// entry), loaded by scans without it (`Acquire`).
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

/// The domain's blocks and directories, under its lock.
struct State {
    /// Every block ever made; `owned[i]` says whether a live thread owns `blocks[i]`.
    /// Boxed: slots must not move when the vector grows (guards point into them).
    #[allow(clippy::vec_box)]
    blocks: Vec<Box<Block>>,
    owned: Vec<bool>,
    /// Every directory ever made, the current one last; `blocks[i]` is entry `i` of the
    /// current one. Boxed: a scan may still read a replaced one.
    #[allow(clippy::vec_box)]
    directories: Vec<Box<Directory>>,
}

/// The process-wide set of hazard slots: every block ever made.
struct Domain {
    /// The domain's name in the per-thread registry, where each thread's block is recorded.
    id: u64,
    state: Mutex<State>,
    /// The current [`Directory`] of the blocks, or null before the first block. Written
    /// under the lock (`Release`, after the directory is filled), read by scans without it
    /// (`Acquire`).
    directory: AtomicPtr<Directory>,
    /// How many blocks exist: a pass sizes its snapshot for all their slots before the
    /// scan.
    block_count: AtomicUsize,
}

impl Domain {
    fn new() -> Domain {
        Domain {
            id: registry::next_id(),
            state: Mutex::new(State {
                blocks: Vec::new(),
                owned: Vec::new(),
                directories: Vec::new(),
            }),
            directory: AtomicPtr::new(ptr::null_mut()),
            block_count: AtomicUsize::new(0),
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
    // to the slot, so a pass that reads that store (Acquire) sees those reads over.
    // With Relaxed here, a pass that sees only the new value would not (ThreadSanitizer
    // found it; loom's `slot_reused_after_a_foreign_drop` models it). Only this thread
    // fills a slot, so a null stays null until it does.
    // loom-mutants: not caught in the build without debug assertions, which this script
    // runs: there `slot_reused_after_a_foreign_drop` passes with this load `Relaxed`. The
    // debug build's assertions load the slot too, loom operations that change which
    // interleavings it explores; the script does not check that build.
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
        // loom-mutants: not caught, as `free_slot`'s load (in the build without debug
        // assertions), and no model drops a guard of a spilled slot on another thread
        // before its owner takes the slot again.
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
        // loom-mutants: not caught, as the hint's load above.
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
            // Relaxed: a size hint for the passes' snapshots.
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
        // Release: a scan that loads the directory sees it filled with every block made
        // before (each entered the same way, under this lock).
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
    // Release: a scan that loads this length (Acquire) sees the entry filled and the
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

/// How many blocks exist, as of a recent moment: a size hint for a pass's snapshot.
#[inline]
pub(super) fn block_count() -> usize {
    // Relaxed: a hint (see the field); a block made meanwhile may grow the snapshot.
    domain().block_count.load(Ordering::Relaxed)
}

/// Calls `protected` with the address (untagged) that each full slot holds now, one load
/// per slot, for a pass after its heavy barrier: every block published before the barrier
/// is walked, and of each block the slots under its high-water mark (module docs). A block
/// whose mark is 1 costs two loads, any other its mark's load, its 8 slots' loads and one
/// branch if all are null. A plain loop rather than an iterator chain: `flat_map` over the
/// blocks compiles to more instructions per slot.
#[inline(always)]
pub(super) fn scan(mut protected: impl FnMut(*mut ())) {
    // Acquire: see `Domain::directory` (every block published before the heavy barrier;
    // a directory made later holds every block of the ones before it).
    let directory = domain().directory.load(Ordering::Acquire);
    // SAFETY: directories are never freed (loom: not before the model ends), and each was
    // whole when published.
    let Some(directory) = (unsafe { directory.as_ref() }) else {
        return;
    };
    for b in directory.blocks() {
        // Acquire, each: a null read here is a guard's `Release` clear (its reads of the
        // node happen before this pass returns it) or a slot not filled before the
        // barrier. The slots past a mark of 1 protect no node of this pass's batch (module
        // docs). A block whose mark is past 1 is loaded whole and in line: its 8 loads,
        // their OR, one branch.
        if b.mark() > 1 {
            let nodes: [*mut (); BLOCK_SLOTS] =
                std::array::from_fn(|i| b.slots[i].node.load(Ordering::Acquire));
            if nodes.iter().fold(0, |any, &node| any | node as usize) == 0 {
                continue;
            }
            for node in nodes {
                if !node.is_null() {
                    protected(untag(node).0);
                }
            }
            continue;
        }
        let node = b.first().node.load(Ordering::Acquire);
        if !node.is_null() {
            protected(untag(node).0);
        }
    }
}

impl Slot {
    /// Protects `node`: one `Release` store, then the light barrier, or a `fence(SeqCst)`
    /// if the version is `fenced` (`Retired`'s field). The caller then re-loads the
    /// container's current version and keeps the protection only if it is still `node`.
    #[inline]
    pub(crate) fn protect(&self, node: NonNull<()>, fenced: bool) {
        // Relaxed: a check. Only this thread fills a slot, and it found this one empty (or
        // emptied it itself), so nothing but null can be read here.
        debug_assert!(
            self.node.load(Ordering::Relaxed).is_null(),
            "a hazard slot protected twice"
        );
        // Release: a pass that reads this value synchronizes with everything this thread
        // did before, including the slot's last clear.
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

/// The low bit of a node address as a container's `current` and the slots may hold it: the
/// version was published *fenced* (`container/raw.rs`, "Fenced versions"). Nodes are
/// aligned to at least 2 bytes (they hold atomics), so the bit names no other node.
pub(crate) const FENCED: usize = 1;

/// `tagged` without the [`FENCED`] bit, and whether it had it. A slot may hold a node's
/// tagged address: it protects the same node.
#[inline(always)]
pub(crate) fn untag<T>(tagged: *mut T) -> (*mut T, bool) {
    let tag = tagged as usize & FENCED;
    // `wrapping_sub` keeps the pointer's provenance (strict provenance, MSRV 1.80).
    (tagged.cast::<u8>().wrapping_sub(tag).cast(), tag != 0)
}

/// Drops the protection in `slot`, from any thread: one `Release` store, no barrier, no
/// lock. Once the slot is null, the node it held may be returned to its pool at any time.
#[inline]
pub(crate) fn clear(slot: &Slot) {
    // Relaxed: a check. The slot was filled by the guard that clears it (on this thread, or
    // on one that handed the guard over with a happens-before edge), and nobody else
    // empties it.
    debug_assert!(
        !slot.node.load(Ordering::Relaxed).is_null(),
        "a hazard slot cleared twice"
    );
    // Release: this guard's reads of the object happen-before a pass that sees null.
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

#[cfg(test)]
#[cfg(not(loom))]
mod tests {
    use super::super::HAZARD_SLOTS as SLOTS;
    use super::{this_block, Block};
    use crate::{Container, Guard, Pool};

    /// The mark shares slot 0's cache line: a scan of a block whose owner only ever took
    /// slot 0 reads one line.
    #[test]
    fn the_mark_is_on_the_first_slots_line() {
        assert_eq!(std::mem::offset_of!(Block, mark), 0);
        assert_eq!(std::mem::offset_of!(Block, slots), 8);
        assert_eq!(std::mem::align_of::<Block>(), 128);
    }

    /// Guards in slots 1 and 2 of a thread's block raise its mark to at least 3, where it stays
    /// after they are dropped; while they live, passes keep their versions (a scan that stopped at
    /// slot 0 would return them, and the updates below would refill them).
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
                assert_eq!(seen, [1, 2, 3], "a held version was returned");
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
