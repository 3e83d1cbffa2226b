//! Hazard slots: how a reader protects a version without writing a shared cache line, and
//! how retired versions wait until no reader can still be reading them.
//!
//! # Slots
//!
//! Each thread that reads gets a [`Block`] of [`SLOTS`] slots, on its own cache lines, from
//! a process-wide domain. Blocks are never freed: when a thread exits, its block goes back
//! to the domain and a new thread may take it over, skipping any slot still held by a guard
//! that outlived its thread. A slot holds the address of the node it protects, or null.
//! Only the block's owner thread fills an empty slot; whoever drops the guard (any thread)
//! empties it. Nobody else writes a slot's address: a writer never pays, converts or clears
//! a reader's protection, so a stale address in a slot only delays recycling (the
//! address-reuse bugs of debt schemes, arc-swap #156 and #210, cannot happen here).
//!
//! # Reader (`Container::acquire`)
//!
//! 1. Load `current` (`Acquire`).
//! 2. Store it in a free slot of the thread's block (`Release`), then [`light`].
//! 3. Re-load `current` (`Acquire`). The same pointer: the slot protects it; return a guard
//!    on the pointer just re-loaded. Another: [`clear`] the slot and start over.
//!
//! # Guard drop ([`clear`])
//!
//! Store null in the slot (`Release`), [`light_on_drop`], and look at the slot's `help`
//! flag: a collector sets it when this slot kept a retired version from being recycled. If
//! set, the dropper runs [`collect`] itself. A dropped guard never touches its node again:
//! once the slot is null, the node may be recycled and, if its pool has closed, freed.
//!
//! The barrier on this path buys liveness, not safety: a collector that misses the emptied
//! slot keeps the version. In `Membarrier` mode it is a compiler fence, ordered against the
//! collector's heavy barrier, so a collector and a dropper racing on one slot cannot both
//! miss each other (see "Collector"): the version is recycled at once. In `Fence` mode the
//! same compiler fence orders nothing against other threads (a `fence(SeqCst)` there
//! measured nearly half of a read: see [`light_on_drop`]). Both may then miss (the null still in
//! the dropper's store buffer when the collector looks again, the flag not yet visible when
//! the dropper looks), and the version waits on the retired list for the next collection
//! that sees the null (a store becomes visible to other threads in bounded time on real
//! machines; loom needs a join to promise it): the next update of any container, the next
//! clear of this slot (its flag stays set), or [`crate::reclaim`]. The loom models check
//! both modes' drops (`tests/loom.rs`).
//!
//! # Writer ([`retire`])
//!
//! After swapping a version out of its container, the writer hands the container's counted
//! reference on it to the domain's *retired list* and runs [`collect`].
//!
//! # Collector ([`collect`])
//!
//! Under the domain lock: [`heavy`], then for each retired node, look at every slot of every
//! block. A node no slot holds leaves the list, and its counted reference is dropped (if it
//! was the last, the node goes back to its pool, as any last reference does). For each slot
//! that holds a retired node, set its `help` flag; if any flag was newly set, [`heavy`] and
//! look again, until a pass sets no new flag. Then every slot that still protects a retired
//! node has its flag set *before* a heavy barrier, so in `Membarrier` mode its guard's
//! [`clear`] sees the flag (if its drop barrier comes after that heavy one) or the pass saw
//! the slot empty (if before); in `Fence` mode, see "Guard drop". New protections of a
//! retired node are only transient (a reader that loaded the pointer before the swap, whose
//! check then fails), at most one per thread, so the loop ends.
//!
//! # Why a recycled node is never read
//!
//! Barriers are totally ordered (heavy against light as `fence(SeqCst)` against
//! `fence(SeqCst)`). Take a reader that returns a guard on node `p` and a collector that
//! decides `p` is unprotected. The swap that retired `p` precedes the collector's heavy
//! barrier (it precedes the push onto the retired list, which the collector's lock acquires).
//! If the reader's light barrier comes before that heavy barrier, the collector's look at
//! the slot sees the reader's store (or a later one by the same slot, after the reader's
//! `Release` clear: then the reads are done). If it comes after, the reader's re-load sees
//! the swap or something later, so not `p`, unless `p` was recycled and published anew
//! since, which the collector's decision has not yet allowed.
//!
//! # Orderings
//!
//! - Slot stores `Release`, the collector's slot loads `Acquire`: a guard's reads of the
//!   object happen-before whoever sees its slot empty (or refilled) and recycles the node.
//!   The owner's look for a free slot is `Acquire` too: a slot emptied by a guard dropped
//!   on another thread and then refilled by its owner carries that thread's release on.
//! - `help`: `Relaxed` both ways; the barriers around it order it (the collector's store
//!   precedes its heavy barrier, the guard's load follows its drop barrier, if any).
//! - The retired list and the block list are under one lock; counted references use the
//!   refcount's orderings.
//!
//! Sources: Maged Michael, "Hazard Pointers: Safe Memory Reclamation for Lock-Free Objects"
//! (IEEE TPDS 2004) for slots scanned before reclamation; folly's `hazptr` and Linux
//! `membarrier(2)` for asymmetric barriers; arc-swap's per-thread debt nodes (never freed,
//! reused after thread exit) for the block lifecycle. `../shared/research/read-path.md`
//! argues the design.

use std::cell::Cell;
use std::fmt;
use std::ptr::{self, NonNull};

use crate::barrier::{heavy, light, light_on_drop};
use crate::pool::registry;
use crate::sync::{AtomicBool, AtomicPtr, Mutex, Ordering};

/// Slots per thread. A thread holding more guards at once takes the counted fallback.
#[cfg(not(loom))]
pub(crate) const SLOTS: usize = 8;
/// Under loom, two: models reach the fallback with three guards.
#[cfg(loom)]
pub(crate) const SLOTS: usize = 2;

/// One hazard slot: the node it protects (null if none), and the collector's request to
/// collect when it is emptied.
pub(crate) struct Slot {
    node: AtomicPtr<()>,
    help: AtomicBool,
}

/// A thread's slots, on cache lines of their own.
#[repr(align(128))]
pub(crate) struct Block {
    slots: [Slot; SLOTS],
}

impl Block {
    fn new() -> Block {
        Block {
            slots: std::array::from_fn(|_| Slot {
                node: AtomicPtr::new(ptr::null_mut()),
                help: AtomicBool::new(false),
            }),
        }
    }
}

/// A retired node and how to drop the counted reference the retired list holds on it.
#[derive(Clone, Copy)]
struct Retired {
    node: NonNull<()>,
    /// Drops one counted reference on `node` (and recycles it if that was the last).
    release: unsafe fn(NonNull<()>),
}

struct State {
    /// Every block ever made; `owned[i]` says whether a live thread owns `blocks[i]`.
    /// Boxed: slots must not move when the vector grows (guards point into them).
    #[allow(clippy::vec_box)]
    blocks: Vec<Box<Block>>,
    owned: Vec<bool>,
    retired: Vec<Retired>,
}

// SAFETY: `Retired` holds node pointers whose counted references may be dropped on any
// thread: nodes are `Send` (see `pool/node.rs`), and `Container` requires `T: Send + Sync`
// before any node is retired.
unsafe impl Send for State {}

/// The process-wide set of blocks and retired nodes.
struct Domain {
    state: Mutex<State>,
}

impl Domain {
    fn new() -> Domain {
        Domain {
            state: Mutex::new(State {
                blocks: Vec::new(),
                owned: Vec::new(),
                // Room for a burst of versions retired while guards hold them, made once:
                // the list grows (allocates) only past its largest size so far.
                retired: Vec::with_capacity(64),
            }),
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
}

#[cfg(loom)]
loom::thread_local! {
    static BLOCK: Cell<*const Block> = Cell::new(ptr::null());
}

/// The registry's name for this module's per-thread state (pools take ids from
/// `registry::next_id`, which never gets this high).
const REGISTRY_ID: u64 = u64::MAX - 1;

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
    // to the slot, so a collector that reads that store (Acquire) sees those reads over.
    // With Relaxed here, a collector that sees only the new value would not (ThreadSanitizer
    // found it; loom's `slot_reused_after_a_foreign_drop` models it). Only this thread
    // fills a slot, so a null stays null until it does.
    block
        .slots
        .iter()
        .find(|slot| slot.node.load(Ordering::Acquire).is_null())
}

/// Gives the calling thread a block on its first read: one that an exited thread gave
/// back, or a new one (the thread's only allocation for reading).
#[cold]
#[inline(never)]
fn claim_block() -> Option<&'static Block> {
    if ptr::eq(this_block(), exited()) {
        return None;
    }
    let block: &'static Block = {
        let mut state = domain().state.lock();
        let state = &mut *state;
        let at = match state.owned.iter().position(|owned| !owned) {
            Some(at) => at,
            None => {
                state.blocks.push(Box::new(Block::new()));
                state.owned.push(false);
                state.blocks.len() - 1
            }
        };
        state.owned[at] = true;
        let block: *const Block = &*state.blocks[at];
        // SAFETY: boxes in `blocks` are never dropped or moved (the domain lives for the
        // process; under loom, for the model execution, which every guard dies in).
        unsafe { &*block }
    };
    let _ = BLOCK.try_with(|b| b.set(block));
    let state = NonNull::from(block).cast::<()>();
    let hook = GiveBack {
        block,
        domain: domain(),
    };
    if registry::insert(REGISTRY_ID, state, Box::new(hook)) {
        Some(block)
    } else {
        // Thread-locals are being destroyed: nothing would give the block back.
        give_back(block, domain());
        None
    }
}

/// The registry hook that gives a thread's block back when it exits.
struct GiveBack {
    block: &'static Block,
    domain: &'static Domain,
}

impl registry::Hook for GiveBack {
    fn owner_is_gone(&self) -> bool {
        false
    }
    fn thread_exit(&self) {
        give_back(self.block, self.domain);
    }
}

fn give_back(block: &'static Block, domain: &'static Domain) {
    // `BLOCK` has no destructor (loom: is destroyed after the registry), so this works
    // while thread-locals are being destroyed; later reads on this thread take the counted
    // fallback.
    let _ = BLOCK.try_with(|b| b.set(exited()));
    let mut state = domain.state.lock();
    let state = &mut *state;
    if let Some(at) = state.blocks.iter().position(|b| ptr::eq(&**b, block)) {
        state.owned[at] = false;
    }
}

impl Slot {
    /// Step 2 of the reader: protect `node`. The caller then issues [`light`] and checks.
    #[inline]
    pub(crate) fn protect(&self, node: NonNull<()>) {
        // Release: see the module docs (a collector that reads this value synchronizes
        // with everything this thread did before, including clearing the slot's last use).
        self.node.store(node.as_ptr(), Ordering::Release);
        light();
    }
}

/// Drops the protection in `slot` (from any thread), and collects if a collector asked.
#[inline]
pub(crate) fn clear(slot: &Slot) {
    // Release: this guard's reads of the object happen-before a collector that sees null.
    slot.node.store(ptr::null_mut(), Ordering::Release);
    // Liveness only (module docs, "Guard drop"): no instruction in either mode.
    light_on_drop();
    // Relaxed: ordered by the barriers (module docs).
    if slot.help.load(Ordering::Relaxed) {
        help(slot);
    }
}

#[cold]
#[inline(never)]
fn help(slot: &Slot) {
    // Relaxed: a collector that sets it again after this runs its own later checks.
    slot.help.store(false, Ordering::Relaxed);
    collect();
}

/// Hands the caller's counted reference on `node`, just swapped out of its container, to
/// the retired list, then collects.
///
/// # Safety
///
/// The caller owns one counted reference on `node`, which is no longer any container's
/// current version, and `release(node)` drops exactly that reference (on any thread).
pub(crate) unsafe fn retire(node: NonNull<()>, release: unsafe fn(NonNull<()>)) {
    collect_after(Some(Retired { node, release }));
}

/// How many retired nodes a pass releases before it drops the lock to release them.
const BATCH: usize = 8;

/// Recycles every retired node that no slot protects (see the module docs). Never waits
/// for a reader: protected nodes stay on the list.
pub(crate) fn collect() {
    collect_after(None);
}

/// [`collect`], pushing `retired` onto the list first under the same lock (an update takes
/// the domain lock once, not twice).
fn collect_after(mut retired: Option<Retired>) {
    loop {
        let mut batch: [Option<Retired>; BATCH] = [None; BATCH];
        let mut taken = 0;
        let more = {
            let mut state = domain().state.lock();
            let state = &mut *state;
            if let Some(retired) = retired.take() {
                state.retired.push(retired);
            }
            if state.retired.is_empty() {
                return;
            }
            loop {
                heavy();
                let mut flagged = false;
                let mut at = 0;
                while at < state.retired.len() && taken < BATCH {
                    let node = state.retired[at].node;
                    let mut held = false;
                    for slot in state.blocks.iter().flat_map(|b| b.slots.iter()) {
                        // Acquire: see the module docs.
                        if slot.node.load(Ordering::Acquire) == node.as_ptr() {
                            held = true;
                            // Relaxed: ordered by the heavy barrier that follows.
                            if !slot.help.swap(true, Ordering::Relaxed) {
                                flagged = true;
                            }
                        }
                    }
                    if held {
                        at += 1;
                    } else {
                        batch[taken] = Some(state.retired.swap_remove(at));
                        taken += 1;
                    }
                }
                if !flagged || taken == BATCH {
                    break;
                }
            }
            taken == BATCH
        };
        // Outside the lock: the last reference runs the pool's return path and perhaps a
        // `T::drop`, which may read or update a container itself.
        for retired in batch.iter().flatten() {
            // SAFETY: the list owned this counted reference (see `retire`), and no slot
            // protects the node: every guard that read it has cleared its slot.
            unsafe { (retired.release)(retired.node) };
        }
        if !more {
            return;
        }
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
