//! The tasks awaiting [`Subscriber::changed`](super::Subscriber::changed) (feature `async`):
//! a list of wakers that a publication takes whole and wakes outside the lock.
//!
//! A publication wakes *every* waiting task, so the list is built for that: the publisher
//! swaps the whole vector out under the lock (one lock, whatever the number of waiters),
//! bumps the list's *epoch*, and wakes the tasks after the unlock; a woken task takes no
//! lock at all (its future sees the change in the signal's state, and its registration
//! belongs to an epoch that is over). Only a future dropped while still registered in the
//! current epoch locks to clear its slot (cancel safety), which a free list reuses.
//! event-listener, which the pool's getters use, is built for waking one at a time: it
//! wakes under its lock, and each woken listener locks again to leave the list.
//!
//! # Synchronization
//!
//! Everything in [`List`] is under the mutex. `epoch` mirrors `List::epoch` for a dropped
//! future's check: a value other than the one it registered in means its waker was taken
//! (the publisher stores it under the lock as it takes the vector), so the future's slot is
//! not its own any more and it leaves without locking. A value equal to it proves nothing
//! (the take may be under way): the future then locks and compares again. How a
//! registration meets a publication without a lost wake-up: `subscribe.rs`.

use std::mem;
use std::task::Waker;

use crate::sync::{AtomicU64, Mutex, Ordering};

/// A registration: the epoch it was made in and its slot in that epoch's vector.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    epoch: u64,
    index: usize,
}

/// The waiting tasks of one container's subscribers.
#[derive(Debug)]
pub(super) struct Wakers {
    list: Mutex<List>,
    /// `List::epoch`, for the lock-free check of a dropped future (module docs).
    epoch: AtomicU64,
}

#[derive(Debug, Default)]
struct List {
    /// Taken publications: a registration of an earlier epoch is void.
    epoch: u64,
    /// The registered wakers of this epoch; `None`: a slot a dropped future cleared.
    wakers: Vec<Option<Waker>>,
    /// Cleared slots of `wakers`, for the next registrations.
    free: Vec<usize>,
    /// An empty vector with the capacity of a vector taken before, to swap in: at steady
    /// state, a publication allocates nothing.
    spare: Vec<Option<Waker>>,
}

impl Wakers {
    pub(super) fn new() -> Wakers {
        Wakers {
            list: Mutex::new(List::default()),
            epoch: AtomicU64::new(0),
        }
    }

    /// Registers `waker` (a clone of it), or updates the registration `slot` if it is of
    /// this epoch. One lock; allocates only when the vector grows past its capacity.
    pub(super) fn register(&self, slot: &mut Option<Slot>, waker: &Waker) {
        let mut list = self.list.lock();
        if let Some(Slot { epoch, index }) = *slot {
            if epoch == list.epoch {
                match &mut list.wakers[index] {
                    Some(kept) if kept.will_wake(waker) => {}
                    kept => *kept = Some(waker.clone()),
                }
                return;
            }
        }
        let index = match list.free.pop() {
            Some(index) => {
                list.wakers[index] = Some(waker.clone());
                index
            }
            None => {
                list.wakers.push(Some(waker.clone()));
                list.wakers.len() - 1
            }
        };
        *slot = Some(Slot {
            epoch: list.epoch,
            index,
        });
    }

    /// Clears the registration `slot` of a future that goes away, if its epoch is current:
    /// one load otherwise (module docs).
    pub(super) fn unregister(&self, slot: Slot) {
        // Acquire: pairs with the Release store of `wake_all`: a newer epoch means the
        // publisher took this slot's vector (nothing of it is ours to touch).
        if self.epoch.load(Ordering::Acquire) != slot.epoch {
            return;
        }
        let mut list = self.list.lock();
        if list.epoch == slot.epoch {
            let waker = list.wakers[slot.index].take();
            list.free.push(slot.index);
            drop(list);
            // Dropped outside the lock: a waker's drop may run arbitrary code.
            drop(waker);
        }
    }

    /// Wakes every registered task: takes the vector under the lock, wakes outside it.
    pub(super) fn wake_all(&self) {
        let mut taken = {
            let mut list = self.list.lock();
            if list.wakers.is_empty() {
                return;
            }
            list.epoch += 1;
            // Release: see `unregister`. Under the lock, with the take.
            self.epoch.store(list.epoch, Ordering::Release);
            list.free.clear();
            let spare = mem::take(&mut list.spare);
            mem::replace(&mut list.wakers, spare)
        };
        for waker in taken.drain(..).flatten() {
            waker.wake();
        }
        // Its capacity back, for the next take.
        let mut list = self.list.lock();
        if list.spare.capacity() < taken.capacity() {
            list.spare = taken;
        }
    }
}
