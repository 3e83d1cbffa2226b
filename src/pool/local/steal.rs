//! How a trim takes the magazines of other live threads: the trimmer's side of the
//! handshake (the owner's is `mark_busy` and `answer_request` in `local.rs`).
//!
//! A thread that used a pool once and went quiet would keep its magazine (up to
//! [`MAGAZINE_SIZE`] objects, and its spare idle permits) out of `trim`'s and decay's reach
//! for as long as it lives. So a trim asks for the magazines of other threads and takes
//! those whose owner is not in the middle of an operation, moving them to the owner's
//! depot, where the trim's aging reaches them. This is an asymmetric Dekker handshake, the
//! read path's (`barrier.rs`), put on the owner's hit path at the price of a store, a
//! compiler fence, a load and a branch per operation (the busy mark is a value of the
//! length's word, whose store the hit path makes anyway):
//!
//! | owner (`mark_busy`, every get and put) | trimmer (`LocalList::steal_magazines`) |
//! |---|---|
//! | store `len = BUSY` (the length stays in a register); `barrier::signal` (a compiler fence) | `request`: `NO_REQUEST` -> `REQUESTED` |
//! | load `request`; if set, the hit path gives up and the slow path answers: lock the depot, clear it, read `STOLEN` as "empty" | `barrier::heavy` (`membarrier`), once for every magazine asked |
//! | the operation on the magazine | lock the depot; if still `REQUESTED` and `len` (Acquire) is not `BUSY`: move the magazine to the depot, `request = STOLEN` (`len` is the owner's to write) |
//! | store the new `len` (Release): clears `BUSY` | unlock |
//!
//! Either the owner's busy mark precedes the trimmer's barrier, and the trimmer sees it (or
//! the later Release that cleared it, after which the owner's next load sees the request);
//! or the owner's request load follows the barrier and sees the request, and the owner
//! waits on the depot's lock for the steal and reads the magazine as the trimmer left it.
//! `STOLEN` tells the owner (and a flush under the lock) to read length 0: the trimmer never
//! writes `len`, which keeps it a single-writer word. Trimmers take one list-wide lock
//! (`stealing`), so a request a trimmer acts on was made before its own barrier.
//!
//! The owner's side is a compiler fence, which only `membarrier` orders against: in
//! `Fence` mode (no `membarrier`, Miri, `POOLSWAP_BARRIER=fence`) trimmers ask for nothing
//! and other live threads' magazines stay out of reach. With `membarrier`, objects stay
//! hidden only in the magazines of threads caught in the middle of an operation: at most
//! one magazine per running thread.
//!
//! Two other designs fall short: credits for what magazines may hold in total, taken on
//! their slow paths, would need the same handshake to get back from idle threads (and
//! without it active threads would lose their magazines to idle ones); asking the owner to
//! flush on its next operation never reaches a thread that stays idle.
//!
//! # Synchronization
//!
//! Rule 5 of `local.rs`.
//!
//! [`MAGAZINE_SIZE`]: super::MAGAZINE_SIZE

use super::{spill, IdleBudget, Local, LocalList, BUSY, NO_REQUEST, REQUESTED, STOLEN};
use crate::reclaim::barrier;
use crate::sync::Ordering;

impl<N> Local<N> {
    /// A trimmer's first step: asks for the magazine if it seems to hold a node. Returns
    /// whether a request stands now, for which the trimmer must issue a heavy barrier
    /// before [`steal_magazine`](Self::steal_magazine).
    fn request_magazine(&self) -> bool {
        // Relaxed: a hint; a magazine it misses is asked for at the next trim. (`BUSY`
        // counts as holding something.)
        if self.owner.len.load(Ordering::Relaxed) == 0 {
            return false;
        }
        // Relaxed: the heavy barrier that follows orders it before the owner's next load.
        // A compare-exchange, so that a `STOLEN` the owner has not read yet stays.
        match self.owner.request.compare_exchange(
            NO_REQUEST,
            REQUESTED,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => true,
            Err(now) => now == REQUESTED,
        }
    }

    /// A trimmer's last step, after its heavy barrier: if the request stands and the owner
    /// is not in the middle of an operation, moves the magazine to the depot and gives
    /// back its spare idle permits; the owner reads it as empty on its next operation.
    /// Takes the depot's lock once, if a request stands.
    ///
    /// # Safety
    ///
    /// The caller holds the list's `stealing` lock and asked with `request_magazine`
    /// before its last heavy barrier; `budget` is the pool's.
    unsafe fn steal_magazine(&self, budget: &IdleBudget) {
        // Relaxed: a hint, checked again under the lock.
        if self.owner.request.load(Ordering::Relaxed) != REQUESTED {
            return;
        }
        let mut depot = self.depot.lock();
        // Relaxed: the owner clears it only under this lock.
        if depot.closed || self.owner.request.load(Ordering::Relaxed) != REQUESTED {
            return;
        }
        // Acquire: pairs with the Release that cleared the owner's busy mark, so the
        // magazine as the owner left it is visible here.
        let len = self.owner.len.load(Ordering::Acquire);
        if len == BUSY {
            return; // the owner answers the request on its next operation
        }
        self.owner.magazine.with_mut(|m| {
            // SAFETY: rule 5: the owner is not marked busy after our heavy barrier, so
            // until it answers the request, which waits for this lock, it does not touch
            // the magazine; other trimmers wait for `stealing`. No user code runs.
            let m = unsafe { &mut *m };
            spill(&mut depot, &m.nodes[..len]);
            budget.unreserve(std::mem::take(&mut m.spare));
        });
        // The length stays as the owner left it: only the owner writes it (rule 1), and it
        // reads `STOLEN` as length 0 when it answers, under the lock.
        // Relaxed: under the lock, where the owner reads it.
        self.owner.request.store(STOLEN, Ordering::Relaxed);
    }
}

impl<N> LocalList<N> {
    /// Moves the magazines of threads that are not in the middle of an operation to their
    /// depots, where `trim` and decay reach them. In `Membarrier` mode only (see
    /// `barrier::interrupts`); a no-op otherwise. Costs a lock, a load of each `Local`'s
    /// length and, if some magazine holds a node, a compare-exchange per such magazine, one
    /// heavy barrier (`membarrier`) and a depot lock per magazine asked.
    pub(crate) fn steal_magazines(&self, budget: &IdleBudget) {
        if !barrier::interrupts() {
            return;
        }
        let _stealing = self.stealing.lock();
        let mut asked = false;
        for local in self.iter() {
            asked |= local.request_magazine();
        }
        if !asked {
            return;
        }
        barrier::heavy();
        for local in self.iter() {
            // SAFETY: we hold `stealing` and asked before the heavy barrier just issued.
            unsafe { local.steal_magazine(budget) };
        }
    }
}
