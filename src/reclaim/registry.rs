//! The per-thread registry: for each owner a thread has used (a pool, the hazard-slot
//! domain), the thread's state for it, and what to run when the thread exits.
//!
//! It knows nothing of pools, slots or objects: an entry is an owner id (from [`next_id`]),
//! a type-erased pointer to the thread's state, and a [`Hook`]. Every owner takes its id
//! from [`next_id`], so ids never collide.
//!
//! # Lookups
//!
//! [`find_fast`] reads a two-entry memo of the last owners looked up (`RECENT`): a
//! `const`-initialised thread-local without a destructor, so reading it is a plain load,
//! unlike the registry itself, whose destructor makes every access check its state. An owner
//! goes into entry `id % 2`, so two owners made one after the other never evict each other;
//! both memo entries sit at fixed addresses, so their loads run beside the load of the id (an
//! id-indexed table would put two dependent loads on the hit path). On a miss, [`find`]
//! scans the registry's entries and remembers the result.
//!
//! # Dead owners
//!
//! An entry's hook holds its owner's shared state alive, so an entry must not outlive its
//! owner for long. Each hook says whether its owner is gone ([`Hook::owner_is_gone`]);
//! [`insert`] removes such entries once the registry has doubled since its last sweep. A
//! thread so keeps at most about twice as many entries as it has live owners (plus a few),
//! a sweep costs O(1) per insert amortised, and the lookup's scan does not grow with the
//! number of owners that died.
//!
//! # Thread exit
//!
//! The registry's destructor first empties the memo (the thread must not find its state
//! through it any more), then runs each entry's [`Hook::thread_exit`] and drops the entry.
//! Loom runs thread-local destructors at the end of each model thread too, so the models
//! check this path as it runs on real threads.

use std::cell::{Cell, RefCell};
use std::ptr::NonNull;

/// What the registry runs for one entry.
pub(crate) trait Hook {
    /// Whether the entry's owner is gone for good, so that the entry may be dropped.
    fn owner_is_gone(&self) -> bool;
    /// Runs on the registering thread as it exits (or, if the thread-locals are already
    /// being destroyed when it registers, right away).
    fn thread_exit(&self);
}

/// A number that names one owner for the life of the process (never reused, unlike an
/// address).
pub(crate) fn next_id() -> u64 {
    // A plain std atomic even under loom: it is a name, never part of a synchronization
    // argument, hence Relaxed.
    #[allow(clippy::disallowed_types)]
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// One row of a thread's registry.
struct Entry {
    id: u64,
    state: NonNull<()>,
    hook: Box<dyn Hook>,
}

/// A thread's registry: `RefCell`, so a hook that runs user code cannot re-enter it.
struct Registry {
    entries: RefCell<Vec<Entry>>,
    /// `insert` sweeps dead entries when the registry reaches this length.
    sweep_at: Cell<usize>,
}

/// Fewest entries before a sweep.
const FIRST_SWEEP: usize = 8;

impl Drop for Registry {
    fn drop(&mut self) {
        #[cfg(not(loom))]
        RECENT.with(|recent| recent.iter().for_each(|entry| entry.set(EMPTY_ENTRY)));
        for entry in std::mem::take(self.entries.get_mut()) {
            entry.hook.thread_exit();
        }
    }
}

#[cfg(not(loom))]
std::thread_local! {
    static REGISTRY: Registry = const {
        Registry { entries: RefCell::new(Vec::new()), sweep_at: Cell::new(FIRST_SWEEP) }
    };
}

#[cfg(loom)]
loom::thread_local! {
    static REGISTRY: Registry =
        Registry { entries: RefCell::new(Vec::new()), sweep_at: Cell::new(FIRST_SWEEP) };
}

#[cfg(not(loom))]
std::thread_local! {
    /// The (owner id, state) pairs this thread looked up last; see the module docs.
    static RECENT: [Cell<(u64, NonNull<()>)>; 2] =
        const { [const { Cell::new(EMPTY_ENTRY) }; 2] };
}

/// An empty `RECENT` entry: `u64::MAX` is never an id.
#[cfg(not(loom))]
const EMPTY_ENTRY: (u64, NonNull<()>) = (u64::MAX, NonNull::dangling());

/// Puts `(id, state)` in the memo, in entry `id % 2`.
#[cfg(not(loom))]
fn remember(id: u64, state: NonNull<()>) {
    RECENT.with(|recent| recent[(id % 2) as usize].set((id, state)));
}

/// Empties the memo entry of owner `id`, if it holds that owner.
#[cfg(not(loom))]
fn forget(id: u64) {
    RECENT.with(|recent| {
        let entry = &recent[(id % 2) as usize];
        if entry.get().0 == id {
            entry.set(EMPTY_ENTRY);
        }
    });
}

/// The calling thread's state for owner `id`, type-erased; `None` if it has none yet or
/// its thread-locals are being destroyed.
#[inline]
pub(crate) fn find(id: u64) -> Option<NonNull<()>> {
    find_fast(id).or_else(|| find_slow(id))
}

/// [`find`] if owner `id` is one of the last two the calling thread looked up: two
/// thread-local loads and compares. `None` means "ask [`find`]", not "no state".
#[inline]
pub(crate) fn find_fast(id: u64) -> Option<NonNull<()>> {
    #[cfg(not(loom))]
    {
        RECENT.with(|recent| {
            let (a, at_a) = recent[0].get();
            if a == id {
                return Some(at_a);
            }
            let (b, at_b) = recent[1].get();
            (b == id).then_some(at_b)
        })
    }
    // Under loom, the registry itself: models then run the same hit paths as real threads.
    #[cfg(loom)]
    REGISTRY.with(|r| lookup(r, id))
}

/// [`find`] past the memo: a scan of the registry's entries (O(entries)), then the memo
/// remembers the result.
#[cold]
fn find_slow(id: u64) -> Option<NonNull<()>> {
    let found = REGISTRY.try_with(|r| lookup(r, id)).ok().flatten()?;
    #[cfg(not(loom))]
    remember(id, found);
    Some(found)
}

/// The entry of owner `id` in `registry`; `None` also while the registry is borrowed (a
/// hook running).
fn lookup(registry: &Registry, id: u64) -> Option<NonNull<()>> {
    let entries = registry.entries.try_borrow().ok()?;
    entries.iter().find(|e| e.id == id).map(|e| e.state)
}

/// Records the calling thread's state for owner `id`. Returns `false`, having dropped the
/// hook without running it, if the thread's thread-locals are being destroyed: the caller
/// must then not keep the state. Costs a push (an allocation when the registry grows) and,
/// when the registry has doubled since its last sweep, a sweep (O(entries), amortised O(1)).
pub(crate) fn insert(id: u64, state: NonNull<()>, hook: Box<dyn Hook>) -> bool {
    let entry = Entry { id, state, hook };
    let mut gone = Vec::new();
    // Dead entries and a refused entry leave the registry's borrow before they are dropped:
    // dropping a hook may drop its owner's state, and with it user code that may use a pool.
    let refused = REGISTRY.try_with(|r| {
        let Ok(mut entries) = r.entries.try_borrow_mut() else {
            return Some(entry);
        };
        if entries.len() >= r.sweep_at.get() {
            let mut at = 0;
            while at < entries.len() {
                if entries[at].hook.owner_is_gone() {
                    gone.push(entries.swap_remove(at));
                } else {
                    at += 1;
                }
            }
            r.sweep_at.set((2 * entries.len()).max(FIRST_SWEEP));
        }
        entries.push(entry);
        None
    });
    #[cfg(not(loom))]
    for dead in &gone {
        forget(dead.id);
    }
    drop(gone);
    // `Err`: the thread-local is destroyed, and `try_with` dropped the closure, entry and all.
    let inserted = matches!(refused, Ok(None));
    drop(refused);
    #[cfg(not(loom))]
    if inserted {
        remember(id, state);
    }
    inserted
}

/// How many entries the calling thread's registry holds, for tests.
#[cfg(all(test, not(loom)))]
pub(crate) fn len() -> usize {
    REGISTRY.with(|r| r.entries.borrow().len())
}
