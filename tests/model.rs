//! Go's `TestProp_SequentialLogic` (`poolswap_test.go`) as a proptest state machine:
//! random sequences of operations run against a real `OptionContainer`/`Pool` and against a
//! simple model of reference counts, idle objects and dropped objects. After every operation
//! the two must agree: each held guard's count, the current version, the pool's counters,
//! and exactly which objects were reset and dropped (so a version is reset or dropped
//! exactly when the model says it is free, never earlier and never later).
//!
//! The idle bound is modelled as documented on `PoolBuilder::max_idle`: it is never exceeded,
//! but the calling thread's spare budget slots (at most [`SPARE_SLOTS`]) may make the pool
//! drop a returning object, or stop `prefill`, while slightly fewer than `max_idle` objects
//! are idle. Within that window the model follows what the pool did (read from the drop log
//! and the idle count); outside it, the model decides.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use poolswap::{Guard, OptionContainer, Pool, Pooled};
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
    /// Checked-out objects: id -> expected reference count.
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
}

impl Model {
    /// Drops one reference (the real one was just dropped); at zero the object goes idle,
    /// or is dropped over the bound: it must be dropped once `max_idle` are idle, must be
    /// kept while fewer than `max_idle - SPARE_SLOTS` are, and in between may be either
    /// (the model then reads which from the drop log).
    fn release(&mut self, id: usize, log: &Log) -> Result<(), TestCaseError> {
        let n = self
            .refs
            .get_mut(&id)
            .expect("released object is checked out");
        *n -= 1;
        if *n == 0 {
            self.refs.remove(&id);
            self.values.remove(&id);
            let really_dropped = log.was_dropped(id);
            let keep = if self.idle.len() >= self.max_idle {
                false
            } else if self.idle.len() + SPARE_SLOTS < self.max_idle {
                true
            } else {
                !really_dropped
            };
            if keep {
                self.idle.insert(id);
            } else {
                self.dropped.insert(id);
                self.over_cap += 1;
            }
        }
        Ok(())
    }

    /// Checks a `get` that returned `got` against the model, given the resets it ran.
    fn get(&mut self, got: &Tracked, log: &Log) -> Result<(), TestCaseError> {
        let resets = log.resets();
        let new_resets = &resets[self.resets_seen..];
        self.resets_seen = resets.len();
        if self.reject {
            // Every idle object is reset, rejected and dropped; then the factory runs.
            let mut reset: Vec<usize> = new_resets.to_vec();
            reset.sort_unstable();
            let idle: Vec<usize> = self.idle.iter().copied().collect();
            prop_assert_eq!(reset, idle, "each idle object reset once, then discarded");
            self.discarded += self.idle.len() as u64;
            self.dropped.append(&mut self.idle);
        }
        if self.idle.is_empty() {
            prop_assert!(self.reject || new_resets.is_empty());
            prop_assert_eq!(got.id as u64, self.created, "a new object from the factory");
            prop_assert!(!got.recycled);
            self.created += 1;
            self.misses += 1;
        } else {
            prop_assert_eq!(
                new_resets,
                &[got.id][..],
                "reset ran once, on the one handed out"
            );
            prop_assert!(self.idle.remove(&got.id), "handed out a non-idle object");
            prop_assert!(got.recycled);
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

/// Keeps a new guard (from `acquire` or a clone): one more reference on its version.
fn hold(real: &mut Real, m: &mut Model, g: Guard<Tracked>) {
    *m.refs.get_mut(&g.id).unwrap() += 1;
    m.guards.push(g.id);
    real.guards.push(g);
}

/// Keeps the guard that `swap` or `take` returned, after checking it holds the version the
/// model had current. The container's reference moved to the guard: the count is unchanged.
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
    Ok(())
}

fn apply(op: &Op, real: &mut Real, m: &mut Model) -> Result<(), TestCaseError> {
    match *op {
        Op::Update(v) => {
            let mut p = real.c.get_new();
            m.get(&p, &real.log)?;
            p.value = v;
            p.recycled = false;
            m.values.insert(p.id, v);
            let id = p.id;
            real.c.update(p);
            if let Some(old) = m.publish(id) {
                m.release(old, &real.log)?;
            }
        }
        Op::Swap(v) => {
            let mut p = real.c.get_new();
            m.get(&p, &real.log)?;
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
                m.release(id, &real.log)?;
            }
        }
        Op::GetPooled => {
            let p = real.pool.get();
            m.get(&p, &real.log)?;
            m.pooled.push(p.id);
            real.pooled.push(p);
        }
        Op::DropPooled(i) => {
            if let Some((p, id)) = i.take(&mut real.pooled, &mut m.pooled) {
                drop(p);
                m.release(id, &real.log)?;
            }
        }
        Op::PublishPooled(i, v) => {
            if let Some((mut p, id)) = i.take(&mut real.pooled, &mut m.pooled) {
                p.value = v;
                m.values.insert(id, v);
                real.c.update(p);
                if let Some(old) = m.publish(id) {
                    m.release(old, &real.log)?;
                }
            }
        }
        Op::GetAndDropPooled => {
            let p = real.pool.get();
            m.get(&p, &real.log)?;
            let id = p.id;
            drop(p);
            m.release(id, &real.log)?;
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
    }
    Ok(())
}

/// Everything observable about the real thing agrees with the model.
fn check(real: &Real, m: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(real.guards.len(), m.guards.len());
    for (g, &id) in real.guards.iter().zip(&m.guards) {
        prop_assert_eq!(g.id, id);
        // The model counts holders; the real count only counted ones: the container's
        // reference (the retired list's while a slot guard still reads a retired version)
        // and counted guards. Slot guards are the rest.
        let on_id = || real.guards.iter().filter(|h| h.id == id);
        let counted = on_id().filter(|h| Guard::is_counted(h)).count();
        let slotted = on_id().count() - counted;
        let kept = usize::from(m.current == Some(id) || slotted > 0);
        prop_assert_eq!(
            Guard::ref_count(g),
            kept + counted,
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
        prop_assert_eq!(Pooled::ref_count(p), 1);
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
        m.refs.len() + m.idle.len() + m.dropped.len(),
        "every object accounted for"
    );
    Ok(())
}

fn run(max_idle: usize, ops: &[Op], drop_pool_first: bool) -> Result<(), TestCaseError> {
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
        for op in ops {
            apply(op, &mut real, &mut m)?;
            check(&real, &m)?;
        }
        let Real {
            c, guards, pooled, ..
        } = real;
        if drop_pool_first {
            drop(c);
            drop(pooled);
            Some(guards)
        } else {
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
        drop(guards);
    }
    let mut drops = log.drops();
    drops.sort_unstable();
    let all: Vec<usize> = (0..m.created as usize).collect();
    prop_assert_eq!(drops, all, "every object dropped exactly once");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

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
/// proptest's random cases miss them.
#[test]
fn scripted_sequence_matches_model() {
    use Op::*;
    let i = Pick;
    let ops = vec![
        Acquire, // empty: None
        Update(1),
        Acquire,
        Acquire,
        CloneGuard(i(0)),
        Update(2),
        Update(3),
        DropGuard(i(0)),
        DropGuard(i(0)),
        DropGuard(i(0)), // version 1 goes idle here, not before
        Update(4),       // reuses version 1
        GetPooled,
        PublishPooled(i(0), 5),
        Swap(6),
        Take,
        Acquire,
        SetReject(true),
        Update(7), // every idle object discarded
        SetReject(false),
        Prefill(3),
        Clear,
        Adopt,
        GetAndDropPooled,
        DropGuard(i(1)),
        DropGuard(i(0)),
    ];
    for max_idle in [0, 1, 2, 6, 1000] {
        for drop_pool_first in [false, true] {
            run(max_idle, &ops, drop_pool_first).unwrap();
        }
    }
}
