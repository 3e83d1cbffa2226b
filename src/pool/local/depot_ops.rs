//! What any thread does to a `Local`'s depot alone, under its lock: donations (with their
//! idle permit or without), single takes, aging for `trim`, and the length hint. None of
//! it touches the owner's magazine, so none of it needs the handshake (`steal.rs`).

use super::{Generation, IdleBudget, Local, NodePtr};

impl<N> Local<N> {
    /// Pushes a node, which brings its own idle permit, into this `Local`'s depot: a
    /// donation from any thread. Hands the node back if the pool is closed.
    pub(crate) fn donate(&self, node: NodePtr<N>) -> Result<(), NodePtr<N>> {
        let mut depot = self.depot.lock();
        if depot.closed {
            return Err(node);
        }
        depot.primary.push(node);
        Ok(())
    }

    /// Pushes a node into this `Local`'s depot, a donation from any thread, with a budget
    /// permit: one parked there if any, else one reserved from `budget`. Hands the node back
    /// with `Err(true)` if the pool is closed, `Err(false)` if the idle bound is reached.
    pub(crate) fn donate_reserving(
        &self,
        node: NodePtr<N>,
        budget: &IdleBudget,
    ) -> Result<(), (NodePtr<N>, bool)> {
        self.donate_reserving_to(node, budget, Generation::Primary)
    }

    /// [`donate_reserving`](Self::donate_reserving) to the list of `generation`: to the
    /// victim list, the node is the last a getter takes from this depot and the first the
    /// next `trim` or decay tick drops.
    pub(crate) fn donate_reserving_to(
        &self,
        node: NodePtr<N>,
        budget: &IdleBudget,
        generation: Generation,
    ) -> Result<(), (NodePtr<N>, bool)> {
        let mut depot = self.depot.lock();
        if depot.closed {
            return Err((node, true));
        }
        if depot.unpark(1) == 0 && budget.reserve(1) == 0 {
            return Err((node, false));
        }
        depot.list(generation).push(node);
        Ok(())
    }

    /// Gives the permits parked in this `Local`'s depot back to `budget`: `trim` and decay.
    pub(crate) fn unpark_all(&self, budget: &IdleBudget) {
        if self.depot.parked_hint() > 0 {
            budget.unreserve(self.depot.lock().unpark(usize::MAX));
        }
    }

    /// Pops the newest node of `generation` from this `Local`'s depot: how a pool with a
    /// live bound takes idle objects, one at a time, from any thread's depot (its
    /// magazines stay empty). The node brings its idle permit along.
    pub(crate) fn take_one(&self, generation: Generation) -> Option<NodePtr<N>> {
        self.depot.lock().list(generation).pop()
    }

    /// Pops one node of the victim generation, for `trim`.
    pub(crate) fn pop_victim(&self) -> Option<NodePtr<N>> {
        self.depot.lock().victim.pop()
    }

    /// Pops one node of either generation, victims first, for `clear`.
    pub(crate) fn pop_any(&self) -> Option<NodePtr<N>> {
        let mut depot = self.depot.lock();
        depot.victim.pop().or_else(|| depot.primary.pop())
    }

    /// Demotes the primary list to victim (which `trim` has emptied first, down to what
    /// `min_idle` keeps). Swaps the lists so that no allocation happens.
    pub(crate) fn age(&self) {
        let mut depot = self.depot.lock();
        let depot = &mut *depot;
        if depot.victim.is_empty() {
            std::mem::swap(&mut depot.primary, &mut depot.victim);
        } else {
            let kept = std::mem::take(&mut depot.victim);
            std::mem::swap(&mut depot.primary, &mut depot.victim);
            depot.primary = kept;
        }
    }

    /// How many objects this `Local`'s depot holds, as a relaxed hint (see `Depot`).
    pub(crate) fn depot_len_hint(&self) -> usize {
        self.depot.len_hint()
    }
}
