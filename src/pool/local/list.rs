//! A pool's `Local`s: the list every thread's share hangs on (synchronization rule 4 of
//! `local.rs`), how a thread claims one, and the pool's close of them all.

use std::ptr;

use super::super::budget::IdleBudget;
use super::super::depot::NodePtr;
use super::Local;
use crate::sync::{AtomicPtr, Mutex, Ordering};

/// A pool's `Local`s: a prepend-only list, shortened only when the pool is dropped.
pub(crate) struct LocalList<N> {
    pub(super) head: AtomicPtr<Local<N>>,
    /// Held by a trimmer taking magazines ([`steal_magazines`](Self::steal_magazines)), so
    /// that a request it acts on was made before its own heavy barrier (rule 5).
    pub(super) stealing: Mutex<()>,
}

impl<N> LocalList<N> {
    /// An empty list (no allocation).
    pub(crate) fn new() -> LocalList<N> {
        LocalList {
            head: AtomicPtr::new(ptr::null_mut()),
            stealing: Mutex::new(()),
        }
    }

    /// Iterates over the `Local`s, newest first.
    pub(crate) fn iter(&self) -> Iter<'_, N> {
        Iter {
            // Acquire: pairs with the Release push in `claim`, so the `Local` (its `next`
            // included) is fully built when we read it.
            next: self.head.load(Ordering::Acquire),
            _list: std::marker::PhantomData,
        }
    }

    /// The first `Local`, if any.
    pub(crate) fn first(&self) -> Option<&Local<N>> {
        self.iter().next()
    }

    /// A `Local` for the calling thread: one that no live thread owns (left by an exited
    /// thread, whose exit restarted its slow start), else a new one (one allocation) pushed
    /// at the front, whose magazine starts slow for `slow_start` slow-path operations.
    pub(crate) fn claim(&self, max_idle: usize, slow_start: u32) -> &Local<N> {
        if let Some(local) = self.iter().find(|l| l.try_claim()) {
            return local;
        }
        let local = Box::leak(Box::new(Local::new(max_idle, slow_start)));
        // Relaxed: only a guess; the CAS below checks it.
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            local.next = head;
            // Release: publishes the `Local` to `iter`'s Acquire. Relaxed on failure: we
            // only re-link to the new head; nothing is read through it.
            match self
                .head
                .compare_exchange_weak(head, local, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return local,
                Err(now) => head = now,
            }
        }
    }

    /// Drains every `Local` into `out` (see [`Local::close`]).
    ///
    /// # Safety
    ///
    /// As for [`Local::close`].
    pub(crate) unsafe fn close(&self, budget: &IdleBudget, out: &mut Vec<NodePtr<N>>) {
        // SAFETY: per the caller.
        let permits = self.iter().map(|local| unsafe { local.close(out) }).sum();
        budget.unreserve(permits);
        // Every permit in use was held by a magazine or a depot (with a node, spare, or
        // parked), and each `Local` gave back all of its own, under its lock, which also
        // bars every later reservation (a donation to a closed depot takes no permit): a permit
        // lost or counted twice by any path shows here, in every test and loom model.
        debug_assert_eq!(budget.in_use(), 0, "idle budget out of balance at close");
    }
}

impl<N> Drop for LocalList<N> {
    fn drop(&mut self) {
        // Relaxed: `&mut self` means every push happened-before this.
        let mut next = self.head.load(Ordering::Relaxed);
        while !next.is_null() {
            // SAFETY: made by `Box::leak` in `claim`, freed only here, once: `&mut self`
            // means no thread can reach the list any more.
            let local = unsafe { Box::from_raw(next) };
            next = local.next.cast_mut();
        }
    }
}

/// Iterates over a pool's `Local`s.
pub(crate) struct Iter<'a, N> {
    next: *const Local<N>,
    _list: std::marker::PhantomData<&'a LocalList<N>>,
}

impl<'a, N> Iterator for Iter<'a, N> {
    type Item = &'a Local<N>;
    fn next(&mut self) -> Option<&'a Local<N>> {
        // SAFETY: `Local`s are freed only when the list is dropped; the iterator borrows it.
        let local = unsafe { self.next.as_ref()? };
        self.next = local.next;
        Some(local)
    }
}
