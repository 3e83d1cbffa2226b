//! Go's `TestProp_SequentialLogic` (`poolswap_test.go`) as a proptest state machine:
//! random sequences of operations run against a real `OptionContainer`/`Pool` and against a
//! simple model of reference counts, idle objects and dropped objects. After every operation
//! the two must agree: each held guard's count, the current version, the pool's counters,
//! and exactly which objects were reset and dropped (so a version is reset or dropped
//! exactly when the model says it is free, never earlier and never later).
//!
//! A version that leaves the container (`update`, `swap`, `take`) goes onto the retired
//! list, and back to the pool only at a reclamation once no guard holds it, never at a
//! guard's drop: the model keeps the retired list too, and reclaims where the crate does:
//! when an update leaves `RECLAIM_THRESHOLD` versions retired, once the list holds twice
//! the versions that the last reclamation found held; when a `get` finds nothing idle (then
//! it looks again) and a version was retired since the last reclamation or one is free, or
//! on a list longer than `SHORT_LIST` at twice the held ones; and at [`Op::Reclaim`] (`poolswap::reclaim`, whose return
//! value the model predicts). The runs take [`serial`]: the retired list is the process's.
//!
//! The idle bound is modelled as documented on `PoolBuilder::max_idle`: it is never exceeded,
//! but the calling thread's spare budget slots (at most [`SPARE_SLOTS`]) may make the pool
//! drop a returning object, or stop `prefill`, while slightly fewer than `max_idle` objects
//! are idle. Within that window the model follows what the pool did (read from the drop log
//! and the idle count); outside it, the model decides.

#[path = "support/proptest_config.rs"]
mod proptest_config;
#[path = "support/serial.rs"]
mod serial;

use serial::serial;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use poolswap::{Guard, OptionContainer, Pool, Pooled};

/// Retired versions at which an update reclaims, as `Container::update`'s docs state it.
const RECLAIM_THRESHOLD: usize = 8;
/// The longest retired list on which a `get` that finds nothing idle reclaims whenever that
/// could return a version, as `poolswap::reclaim`'s docs state it.
const SHORT_LIST: usize = 64;
use proptest::prelude::*;

#[path = "support/tracked.rs"]
mod tracked;

use tracked::{tracked_pool, Log, Tracked, SPARE_SLOTS};

/// Picks an element of a list, if it has any.
#[derive(Clone, Copy, Debug)]
struct Pick(usize);

impl Pick {
    fn of(self, len: usize) -> Option<usize> {
        (len > 0).then(|| self.0 % len)
    }

    /// Removes the picked element of `real` and the id at the same index of `model`, the
    /// list that mirrors it.
    fn take<T>(self, real: &mut Vec<T>, model: &mut Vec<usize>) -> Option<(T, usize)> {
        let i = self.of(real.len())?;
        Some((real.remove(i), model.remove(i)))
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// `get_new`, fill, `update`.
    Update(u64),
    /// `get_new`, fill, `swap`, keeping the old version's guard.
    Swap(u64),
    Acquire,
    CloneGuard(Pick),
    DropGuard(Pick),
    /// `pool.get()`, held.
    GetPooled,
    DropPooled(Pick),
    /// `update` with a held `Pooled`.
    PublishPooled(Pick, u64),
    GetAndDropPooled,
    /// `pool.adopt` of an object made outside the pool, held.
    Adopt,
    /// `take`, keeping the old version's guard.
    Take,
    Clear,
    Prefill(usize),
    /// Makes reset return `false` (discard) or `true` from now on.
    SetReject(bool),
    /// `poolswap::reclaim()`.
    Reclaim,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u64>().prop_map(Op::Update),
        1 => any::<u64>().prop_map(Op::Swap),
        4 => Just(Op::Acquire),
        2 => any::<usize>().prop_map(Pick).prop_map(Op::CloneGuard),
        4 => any::<usize>().prop_map(Pick).prop_map(Op::DropGuard),
        1 => Just(Op::GetPooled),
        1 => any::<usize>().prop_map(Pick).prop_map(Op::DropPooled),
        1 => (any::<usize>().prop_map(Pick), any::<u64>()).prop_map(|(i, v)| Op::PublishPooled(i, v)),
        2 => Just(Op::GetAndDropPooled),
        1 => Just(Op::Adopt),
        1 => Just(Op::Take),
        1 => Just(Op::Clear),
        1 => (0usize..6).prop_map(Op::Prefill),
        1 => prop::bool::weighted(0.3).prop_map(Op::SetReject),
        2 => Just(Op::Reclaim),
    ]
}

/// The real thing. `pooled` borrows `pool`, which the caller creates before and drops after.
struct Real<'p> {
    log: Arc<Log>,
    pool: &'p Pool<Tracked>,
    c: OptionContainer<Tracked>,
    guards: Vec<Guard<Tracked>>,
    pooled: Vec<Pooled<'p, Tracked>>,
}

/// The model: what every object's state should be.
#[derive(Debug, Default)]
struct Model {
    max_idle: usize,
    current: Option<usize>,
    /// Checked-out objects and versions with a holder (the container, a guard, a `Pooled`):
    /// id -> how many holders.
    refs: BTreeMap<usize, usize>,
    /// Expected value of each checked-out object.
    values: BTreeMap<usize, u64>,
    idle: BTreeSet<usize>,
    dropped: BTreeSet<usize>,
    /// Version ids of `Real::guards`, index for index.
    guards: Vec<usize>,
    /// Trackedect ids of `Real::pooled`, index for index.
    pooled: Vec<usize>,
    created: u64,
    misses: u64,
    discarded: u64,
    over_cap: u64,
    trimmed: u64,
    reject: bool,
    /// How many entries of the real reset log the model has accounted for.
    resets_seen: usize,
    /// Versions that left the container and were not reclaimed yet, oldest first: held
    /// (in `refs`) or free (not in `refs`: waiting for the next reclamation).
    retired: Vec<usize>,
    /// How many of `retired` the last reclamation found held (they are its first ones):
    /// an update reclaims only once `retired` holds twice as many.
    held: usize,
    /// Versions retired since a reclamation last took the whole list.
    since_whole: usize,
    /// Versions returned by reclamations, by where the reclamation ran: a `get` that found
    /// nothing idle, an update at the threshold, `Op::Reclaim`. For the script's coverage.
    reclaimed_by_get: usize,
    reclaimed_at_threshold: usize,
    reclaimed_by_call: usize,
}

/// What a `get`'s reclamation takes: the whole retired list, or the versions retired since
/// the last reclamation (`retired[held..]`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    Whole,
    New,
}

/// Where a reclamation runs.
#[derive(Clone, Copy)]
enum Reclaimer {
    Get,
    Threshold,
    Call,
}

impl Model {
    /// Drops one holder (the real one was just dropped). At zero, a plain object goes back
    /// to the pool at once ([`Model::give_back`]); a retired version stays on the retired
    /// list, free, until the next reclamation: a guard's drop returns nothing.
    fn release(&mut self, id: usize, log: &Log) {
        if self.drop_holder(id) && !self.retired.contains(&id) {
            self.give_back(id, log, &[]);
        }
    }

    /// Drops one holder of `id`; whether that was the last.
    fn drop_holder(&mut self, id: usize) -> bool {
        let n = self
            .refs
            .get_mut(&id)
            .expect("released object is checked out");
        *n -= 1;
        if *n > 0 {
            return false;
        }
        self.refs.remove(&id);
        self.values.remove(&id);
        true
    }

    /// An object nobody holds returns to the pool: it goes idle, or is dropped over the
    /// bound. It must be dropped once `max_idle` are idle, must be kept while fewer than
    /// `max_idle - SPARE_SLOTS` are, and in between may be either: the model then reads
    /// which from the logs (dropped, and not among `reset_since`, the resets of the `get`
    /// that is reclaiming, if any: those were kept, then reset and discarded).
    fn give_back(&mut self, id: usize, log: &Log, reset_since: &[usize]) {
        let keep = if self.idle.len() >= self.max_idle {
            false
        } else if self.idle.len() + SPARE_SLOTS < self.max_idle {
            true
        } else {
            !log.was_dropped(id) || reset_since.contains(&id)
        };
        if keep {
            self.idle.insert(id);
        } else {
            self.dropped.insert(id);
            self.over_cap += 1;
        }
    }

    /// The version `old` leaves the container and goes onto the retired list. After an
    /// update, the container's reference was its holder; after a swap or take, that holder
    /// is now the guard returned (`moved_to_guard`). An update (of any kind) that leaves
    /// `RECLAIM_THRESHOLD` versions retired, and twice those the last reclamation found
    /// held, reclaims.
    fn retire(&mut self, old: usize, moved_to_guard: bool, log: &Log) {
        if !moved_to_guard {
            self.drop_holder(old);
        }
        self.retired.push(old);
        self.since_whole += 1;
        if self.retired.len() >= RECLAIM_THRESHOLD.max(2 * self.held) {
            self.reclaim(log, &[], Reclaimer::Threshold);
        }
    }

    /// A reclamation: every retired version nobody holds goes back to the pool, oldest
    /// first; held ones stay retired. Returns how many went back.
    fn reclaim(&mut self, log: &Log, reset_since: &[usize], by: Reclaimer) -> usize {
        self.reclaim_scope(log, reset_since, by, Scope::Whole)
    }

    /// [`reclaim`](Self::reclaim) of the whole list or of the versions retired since the
    /// last reclamation; those it leaves held go after the ones left before.
    fn reclaim_scope(
        &mut self,
        log: &Log,
        reset_since: &[usize],
        by: Reclaimer,
        scope: Scope,
    ) -> usize {
        let from = match scope {
            Scope::Whole => {
                self.since_whole = 0;
                0
            }
            Scope::New => self.held,
        };
        let refs = &self.refs;
        let (held, free): (Vec<usize>, Vec<usize>) = self.retired[from..]
            .iter()
            .partition(|id| refs.contains_key(id));
        self.retired.truncate(from);
        self.retired.extend(held);
        self.held = self.retired.len();
        for &id in &free {
            self.give_back(id, log, reset_since);
        }
        *match by {
            Reclaimer::Get => &mut self.reclaimed_by_get,
            Reclaimer::Threshold => &mut self.reclaimed_at_threshold,
            Reclaimer::Call => &mut self.reclaimed_by_call,
        } += free.len();
        free.len()
    }

    /// What a `get` that found nothing idle reclaims, if anything: the whole list at twice
    /// the versions the last reclamation left held, or on a list of at most `SHORT_LIST`
    /// once `SHORT_LIST` were retired since one took it whole; else, on such a list, the
    /// versions retired since the last reclamation, if any, or the whole list if one of
    /// them is not in a hazard slot (`slot_held`: the crate looks at the slots, so a
    /// version only a counted guard holds, a `swap`'s or a `take`'s, looks free).
    fn getter_scope(&self, slot_held: &BTreeSet<usize>) -> Option<Scope> {
        let len = self.retired.len();
        if len == 0 {
            None
        } else if len >= 2 * self.held || (len <= SHORT_LIST && self.since_whole >= SHORT_LIST) {
            Some(Scope::Whole)
        } else if len > SHORT_LIST {
            None
        } else if len > self.held {
            Some(Scope::New)
        } else if self.retired.iter().any(|id| !slot_held.contains(id)) {
            Some(Scope::Whole)
        } else {
            None
        }
    }

    /// Retired versions that nobody holds: waiting for a reclamation.
    fn free_retired(&self) -> usize {
        self.retired
            .iter()
            .filter(|id| !self.refs.contains_key(id))
            .count()
    }

    /// Checks a `get` that returned `got` against the model, given the resets it ran. The
    /// get takes an idle object (resetting it; in reject mode, every idle object is reset
    /// and discarded instead); finding none, it reclaims if the getter's rule says so (see
    /// the module docs), and looks again if that returned anything; else the factory runs.
    fn get(
        &mut self,
        got: &Tracked,
        log: &Log,
        slot_held: &BTreeSet<usize>,
    ) -> Result<(), TestCaseError> {
        let resets = log.resets();
        let new_resets = resets[self.resets_seen..].to_vec();
        self.resets_seen = resets.len();
        let mut discarded = Vec::new();
        let handed_out = loop {
            if self.reject {
                discarded.extend(self.idle.iter().copied());
                self.discarded += self.idle.len() as u64;
                self.dropped.append(&mut self.idle);
            } else if !self.idle.is_empty() {
                prop_assert!(self.idle.remove(&got.id), "handed out a non-idle object");
                break true;
            }
            // The getter's passes (`src/reclaim/retired.rs`, `getter_pass`), until one
            // returns a version: after a pass over the new versions that found them all
            // held, up to twice more.
            let mut returned = 0;
            let mut new_only = 0;
            while let Some(scope) = self.getter_scope(slot_held) {
                let n = self.reclaim_scope(log, &new_resets, Reclaimer::Get, scope);
                returned += n;
                if n != 0 || scope == Scope::Whole || new_only == 2 {
                    break;
                }
                new_only += 1;
            }
            if returned == 0 {
                break false;
            }
        };
        if handed_out {
            prop_assert_eq!(
                &new_resets[..],
                &[got.id][..],
                "reset ran once, on the one handed out"
            );
            prop_assert!(got.recycled);
        } else {
            let mut reset = new_resets;
            reset.sort_unstable();
            discarded.sort_unstable();
            prop_assert_eq!(
                reset,
                discarded,
                "each idle object reset once, then discarded"
            );
            prop_assert_eq!(got.id as u64, self.created, "a new object from the factory");
            prop_assert!(!got.recycled);
            self.created += 1;
            self.misses += 1;
        }
        prop_assert_eq!(got.value, 0, "handed out without reset");
        self.refs.insert(got.id, 1);
        self.values.insert(got.id, 0);
        Ok(())
    }

    /// Makes `id` the current version; the old one loses the container's reference.
    fn publish(&mut self, id: usize) -> Option<usize> {
        self.current.replace(id)
    }
}

/// The versions that a guard with a hazard slot holds (not a counted one).
fn slot_held(real: &Real<'_>) -> BTreeSet<usize> {
    real.guards
        .iter()
        .filter(|g| !poolswap::internals::is_counted(g))
        .map(|g| g.id)
        .collect()
}

/// Keeps a new guard (from `acquire` or a clone): one more reference on its version.
fn hold(real: &mut Real, m: &mut Model, g: Guard<Tracked>) {
    *m.refs.get_mut(&g.id).unwrap() += 1;
    m.guards.push(g.id);
    real.guards.push(g);
}

/// Keeps the guard that `swap` or `take` returned, after checking it holds the version the
/// model had current, which is retired now. The container's holding moved to the guard:
/// the number of holders is unchanged.
fn keep_displaced(
    real: &mut Real,
    m: &mut Model,
    old: Option<Guard<Tracked>>,
    expected: Option<usize>,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(old.as_ref().map(|g| g.id), expected);
    if let Some(g) = old {
        m.guards.push(g.id);
        real.guards.push(g);
    }
    if let Some(old) = expected {
        m.retire(old, true, &real.log);
    }
    Ok(())
}

fn apply(op: &Op, real: &mut Real, m: &mut Model) -> Result<(), TestCaseError> {
    match *op {
        Op::Update(v) => {
            let mut p = real.c.get_new();
            m.get(&p, &real.log, &slot_held(real))?;
            p.value = v;
            p.recycled = false;
            m.values.insert(p.id, v);
            let id = p.id;
            real.c.update(p);
            if let Some(old) = m.publish(id) {
                m.retire(old, false, &real.log);
            }
        }
        Op::Swap(v) => {
            let mut p = real.c.get_new();
            m.get(&p, &real.log, &slot_held(real))?;
            p.value = v;
            m.values.insert(p.id, v);
            let id = p.id;
            let old = real.c.swap(p);
            let expected = m.publish(id);
            keep_displaced(real, m, old, expected)?;
        }
        Op::Acquire => {
            let g = real.c.acquire();
            prop_assert_eq!(g.as_ref().map(|g| g.id), m.current);
            if let Some(g) = g {
                hold(real, m, g);
            }
        }
        Op::CloneGuard(i) => {
            if let Some(i) = i.of(real.guards.len()) {
                let g = Guard::clone(&real.guards[i]);
                prop_assert!(Guard::ptr_eq(&g, &real.guards[i]));
                hold(real, m, g);
            }
        }
        Op::DropGuard(i) => {
            if let Some((g, id)) = i.take(&mut real.guards, &mut m.guards) {
                drop(g);
                m.release(id, &real.log);
            }
        }
        Op::GetPooled => {
            let p = real.pool.get();
            m.get(&p, &real.log, &slot_held(real))?;
            m.pooled.push(p.id);
            real.pooled.push(p);
        }
        Op::DropPooled(i) => {
            if let Some((p, id)) = i.take(&mut real.pooled, &mut m.pooled) {
                drop(p);
                m.release(id, &real.log);
            }
        }
        Op::PublishPooled(i, v) => {
            if let Some((mut p, id)) = i.take(&mut real.pooled, &mut m.pooled) {
                p.value = v;
                m.values.insert(id, v);
                real.c.update(p);
                if let Some(old) = m.publish(id) {
                    m.retire(old, false, &real.log);
                }
            }
        }
        Op::GetAndDropPooled => {
            let p = real.pool.get();
            m.get(&p, &real.log, &slot_held(real))?;
            let id = p.id;
            drop(p);
            m.release(id, &real.log);
        }
        Op::Adopt => {
            let p = real.pool.adopt(Tracked::new(&real.log));
            prop_assert_eq!(p.id as u64, m.created);
            m.created += 1;
            m.refs.insert(p.id, 1);
            m.values.insert(p.id, 0);
            m.pooled.push(p.id);
            real.pooled.push(p);
        }
        Op::Take => {
            let old = real.c.take();
            let expected = m.current.take();
            keep_displaced(real, m, old, expected)?;
        }
        Op::Clear => {
            real.pool.clear();
            m.trimmed += m.idle.len() as u64;
            m.dropped.append(&mut m.idle);
        }
        Op::Prefill(n) => {
            real.pool.prefill(n);
            // The factory builds objects straight into the idle list: no reset, no miss.
            // It stops at `n` idle, or earlier if the budget runs out, which the calling
            // thread's spare slots can make happen while `max_idle - SPARE_SLOTS` or more
            // are idle (see `SPARE_SLOTS`).
            let target = n.min(m.max_idle);
            let idle_now = real.pool.stats().idle as usize;
            let reached = idle_now.max(m.idle.len());
            prop_assert!(
                reached == target.max(m.idle.len())
                    || (reached < target && reached + SPARE_SLOTS >= m.max_idle),
                "prefill({}) left {} idle (had {}, max_idle {})",
                n,
                idle_now,
                m.idle.len(),
                m.max_idle
            );
            while m.idle.len() < reached {
                m.idle.insert(m.created as usize);
                m.created += 1;
            }
        }
        Op::SetReject(reject) => {
            real.log.reject.store(reject, SeqCst);
            m.reject = reject;
        }
        Op::Reclaim => {
            let reclaimed = poolswap::reclaim();
            let expected = m.reclaim(&real.log, &[], Reclaimer::Call);
            prop_assert_eq!(reclaimed, expected, "versions reclaimed");
        }
    }
    Ok(())
}

/// A failure, with what the run saw: the operation, the model before and after it, and the
/// real pool's counters and logs, so that a failure under load says what happened without
/// a rerun.
fn saw(
    e: TestCaseError,
    at: usize,
    op: &Op,
    before: &str,
    real: &Real<'_>,
    m: &Model,
) -> TestCaseError {
    let log = &real.log;
    TestCaseError::fail(format!(
        "{e}\n at operation {at}, {op:?}\n model before: {before}\n model after: {m:?}\n \
         real: {:?}, current {:?}, guards {:?}\n resets {:?}\n drops {:?}",
        real.pool.stats(),
        real.c.acquire().map(|g| g.id),
        real.guards.iter().map(|g| g.id).collect::<Vec<_>>(),
        log.resets(),
        log.drops(),
    ))
}

/// Everything observable about the real thing agrees with the model.
fn check(real: &Real, m: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(real.guards.len(), m.guards.len());
    for (g, &id) in real.guards.iter().zip(&m.guards) {
        prop_assert_eq!(g.id, id);
        // The model counts holders; the real count only counted ones: the container's
        // reference, or the retired list's (a version a guard holds is current, or retired
        // and not reclaimed), and counted guards. Slot guards are the rest.
        let retired = m.retired.contains(&id);
        prop_assert!(
            m.current == Some(id) || retired,
            "a guard on version {}, neither current nor retired",
            id
        );
        prop_assert!(m.current != Some(id) || !retired);
        let on_id = || real.guards.iter().filter(|h| h.id == id);
        let counted = on_id()
            .filter(|h| poolswap::internals::is_counted(h))
            .count();
        let slotted = on_id().count() - counted;
        prop_assert_eq!(
            poolswap::internals::ref_count(g),
            1 + counted,
            "count of version {}",
            id
        );
        prop_assert_eq!(
            m.refs[&id],
            usize::from(m.current == Some(id)) + counted + slotted
        );
        prop_assert_eq!(g.value, m.values[&id], "value of version {}", id);
    }
    prop_assert_eq!(real.pooled.len(), m.pooled.len());
    for (p, &id) in real.pooled.iter().zip(&m.pooled) {
        prop_assert_eq!(p.id, id);
        prop_assert_eq!(m.refs[&id], 1);
        prop_assert_eq!(p.value, m.values[&id]);
    }
    prop_assert_eq!(real.c.is_empty(), m.current.is_none());
    prop_assert_eq!(real.c.with_acquire(|o| o.map(|o| o.id)), m.current);
    if let Some(id) = m.current {
        // The container's reference plus one per guard on it.
        let guards = m.guards.iter().filter(|&&g| g == id).count();
        prop_assert_eq!(m.refs[&id], 1 + guards);
    }

    let stats = real.pool.stats();
    prop_assert_eq!(stats.idle, m.idle.len() as u64);
    prop_assert_eq!(stats.created, m.created);
    prop_assert_eq!(stats.misses, m.misses);
    prop_assert_eq!(stats.discarded, m.discarded);
    prop_assert_eq!(stats.dropped_over_cap, m.over_cap);
    prop_assert_eq!(stats.trimmed, m.trimmed);

    let mut drops = real.log.drops();
    drops.sort_unstable();
    let expected: Vec<usize> = m.dropped.iter().copied().collect();
    prop_assert_eq!(
        drops,
        expected,
        "dropped exactly the objects the model freed"
    );
    let resets = real.log.resets().len();
    prop_assert_eq!(resets, m.resets_seen, "reset ran outside a get");
    prop_assert_eq!(
        m.created as usize,
        m.refs.len() + m.idle.len() + m.dropped.len() + m.free_retired(),
        "every object accounted for"
    );
    Ok(())
}

fn run(max_idle: usize, ops: &[Op], drop_pool_first: bool) -> Result<Model, TestCaseError> {
    let _serial = serial();
    let log = Log::with_history();
    // Created before and dropped after `real`, whose `pooled` objects borrow it.
    let pool = tracked_pool(&log, max_idle, 0);
    let mut m = Model {
        max_idle,
        ..Model::default()
    };
    // Dropping every handle, in either order, drops every object exactly once. `Pooled`s
    // borrow `pool`, so they go before it; guards may outlive everything.
    let outliving_guards = {
        let mut real = Real {
            log: Arc::clone(&log),
            c: OptionContainer::empty(&pool),
            pool: &pool,
            guards: Vec::new(),
            pooled: Vec::new(),
        };
        check(&real, &m)?;
        for (at, op) in ops.iter().enumerate() {
            let before = format!("{m:?}");
            apply(op, &mut real, &mut m)
                .and_then(|()| check(&real, &m))
                .map_err(|e| saw(e, at, op, &before, &real, &m))?;
        }
        let Real {
            c, guards, pooled, ..
        } = real;
        if drop_pool_first {
            // The container's drop reclaims: every version but those the guards hold.
            drop(c);
            drop(pooled);
            Some(guards)
        } else {
            // The guards' drops return nothing; the container's drop reclaims them all.
            drop(guards);
            drop(pooled);
            drop(c);
            None
        }
    };
    drop(pool);
    if let Some(guards) = outliving_guards {
        for g in &guards {
            prop_assert_eq!(
                g.value,
                m.values[&g.id],
                "a guard outliving pool and container"
            );
        }
        let held: BTreeSet<usize> = guards.iter().map(|g| g.id).collect();
        drop(guards);
        for &id in &held {
            prop_assert!(
                !log.was_dropped_here(id),
                "a guard's drop dropped version {}",
                id
            );
        }
        // The last reclamation, on this thread, or the orphans' thread's passes over the
        // closed pool's list: the versions go back to their pool, which is closed, and so
        // are dropped.
        prop_assert!(poolswap::reclaim() <= held.len(), "versions reclaimed");
        log.wait_all_dropped_once();
    }
    let mut drops = log.drops();
    drops.sort_unstable();
    let all: Vec<usize> = (0..m.created as usize).collect();
    prop_assert_eq!(drops, all, "every object dropped exactly once");
    Ok(m)
}

proptest! {
    #![proptest_config(proptest_config::config())]

    #[test]
    fn refcounts_match_model(
        max_idle in prop_oneof![Just(0usize), 1usize..4, 5usize..=12, Just(1000)],
        ops in prop::collection::vec(op(), 0..if cfg!(miri) { 24 } else { 64 }),
        drop_pool_first in any::<bool>(),
    ) {
        run(max_idle, &ops, drop_pool_first)?;
    }
}

/// A fixed sequence mirroring Go's model test, so the interesting paths run even if
/// proptest's random cases miss them: each place a version comes back (a `get` that finds
/// nothing idle, an update at the threshold, `poolswap::reclaim`, the container's drop),
/// and a reject-mode `get` that discards versions it has just reclaimed.
#[test]
fn scripted_sequence_matches_model() {
    use Op::*;
    let i = Pick;
    let mut ops = vec![
        Acquire, // empty: None
        Update(1),
        Acquire,
        Acquire,
        CloneGuard(i(0)),
        Update(2),
        Update(3), // version 1 retired and held; version 2 retired and free
        DropGuard(i(0)),
        DropGuard(i(0)),
        DropGuard(i(0)), // version 1 is free here, but stays retired: nothing idle
        Update(4),       // its get finds nothing idle, reclaims 1 and 2, and reuses one
        GetPooled,
        PublishPooled(i(0), 5),
        Swap(6),
        Take,
        DropGuard(i(0)), // the swapped-out version, free now
        Reclaim,         // back in the pool
        Acquire,
        SetReject(true),
        Update(7), // every idle object discarded
        Update(8),
        Update(9), // reclaims version 7, then discards it too
        SetReject(false),
        Prefill(3),
        Clear,
        Adopt,
        GetAndDropPooled,
        DropGuard(i(1)),
        DropGuard(i(0)),
        Prefill(RECLAIM_THRESHOLD),
    ];
    // Updates served from the idle objects, which reclaim nothing until the retired list
    // reaches the threshold.
    ops.extend((10..10 + RECLAIM_THRESHOLD as u64 + 1).map(Update));
    ops.push(Reclaim);
    // Under Miri (an interpreter: each run takes seconds) the bounds that change which path
    // a get takes: none idle, a few, and unbounded.
    let bounds: &[usize] = if cfg!(miri) {
        &[0, 2, 1000]
    } else {
        &[0, 1, 2, 6, 1000]
    };
    for &max_idle in bounds {
        for drop_pool_first in [false, true] {
            let m = run(max_idle, &ops, drop_pool_first).unwrap();
            if max_idle == 1000 {
                assert!(m.reclaimed_by_get > 0, "no get reclaimed");
                assert!(
                    m.reclaimed_at_threshold > 0,
                    "no update reached the threshold"
                );
                assert!(m.reclaimed_by_call > 0, "no call reclaimed");
            }
        }
    }
}
