//! Values shared by every version and recycled once none holds them: [`SharedMap`] and its
//! [`ArcPool`].
//!
//! A change log keeps three or more versions of a map (module docs, "What it costs"). With
//! owned values each version holds its own copy of every value, so a map of large values
//! takes three times their bytes, where left-right's two copies take two and flashmap's,
//! which alias each value between its copies, one. Wrapping each value in an `Arc` lets the
//! versions share it (an application clones the `Arc`: one atomic increment, never the
//! value), but then every overwrite allocates a new `Arc` and frees the one it replaced.
//!
//! A [`SharedMap`] keeps the `Arc`s and recycles them. The last version to apply an
//! overwrite or a removal ([`Absorb::absorb_owned`]) hands the displaced `Arc` to the
//! map's [`ArcPool`], a bounded FIFO shared by every version. The writer makes the value
//! of its next overwrite with [`ArcPool::share_clone`] (or [`ArcPool::share`]): the
//! oldest `Arc` in the bin that nothing else holds any more (`Arc::get_mut` says so: no
//! version, no reader's clone, no weak reference) is written in place with `clone_from`,
//! keeping its buffers, and returned. So steady overwrites allocate nothing, as with owned
//! values, while the versions hold one copy of each value between them.
//!
//! No `unsafe` and no protocol of ours: uniqueness is std's `Arc::get_mut`. A version that
//! a reader holds for long keeps its `Arc`s alive; they stay in the bin (tried again later,
//! after the ones behind them) or, past its capacity, leave it and are freed when their
//! last holder lets go.

// std's `Arc`, not the loom facade's, throughout: the values' `Arc`s are the user's
// (`SharedMap` hands them to readers and takes them in operations), and nothing here
// synchronises through them but std's own counts (`Arc::get_mut`), so loom would have no
// protocol of ours to check in them. The recycler's lock is the facade's.
#![allow(clippy::disallowed_types)]

use std::collections::hash_map::{Entry, RandomState};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::ops::Deref;
use std::sync::Arc;

use super::{Absorb, MapOp};
use crate::sync::Mutex;

/// Values a [`ArcPool`] keeps at most by default ([`SharedMap::with_bin_capacity`] sets
/// another bound): 4,096. Values come back at their operation's last application, which
/// is usually the spare's catch-up (within three batches, or the spare lag), and the next
/// batches take them, so the bin holds what the last few batches displaced. Past the
/// bound, displaced values are freed and new ones allocated: batches that displace more
/// than about a third of it at a time may overflow it (`benches/delta.rs`'s batches of
/// 1,000 operations displace 750 values each, and allocated nothing with a bound of
/// 1,024). Otherwise the bin grows past a few batches only while its values stay shared
/// (a reader's clone of an `Arc`, or a version a reader held past the log's reach), and
/// those would be alive anyway.
pub const DEFAULT_BIN_CAPACITY: usize = 1 << 12;

/// How many `Arc`s at the front of the bin a getter tests for uniqueness before it gives up
/// and allocates: those still held (by a version a reader holds, or a reader's clone) go to
/// the back.
const LOOK: usize = 4;

/// A `HashMap` whose values every version shares, each behind an `Arc`, for a
/// [`OpLog`](super::OpLog) under [`MapOp<K, Arc<V>>`](MapOp). The `Arc`s an
/// overwrite or removal displaces go back to a [`ArcPool`] for the writer's next values.
///
/// With owned values, each of a change log's three or more versions holds its own copy of
/// every value (left-right's two copies hold two; flashmap aliases each value between its
/// copies). Behind `Arc`s the versions share one, and an application clones the `Arc`
/// instead of the value; but each overwrite would then allocate a new `Arc` and free the
/// one it replaced. Here the last version to apply an overwrite or removal
/// ([`Absorb::absorb_owned`]) hands the displaced `Arc` to the map's recycler, and the
/// writer makes its next value with [`ArcPool::share`] or [`ArcPool::share_clone`],
/// which reuse the oldest `Arc` in the bin that nothing else holds any more (no version,
/// no reader's clone, no weak reference: `Arc::get_mut` says so). No `unsafe`: a value a
/// reader can still see is never written, because its `Arc` is not unique.
///
/// Readers see a `HashMap<K, Arc<V>, S>` (`Deref`): `guard.get(key)` gives `&Arc<V>`,
/// which derefs to `&V`. Keys are the map's own; share them too with `K = Arc<str>` (an
/// application then clones a key's `Arc`, not its bytes).
///
/// # What it costs
///
/// - **Memory**: one copy of each value, and per version a table of `(K, Arc<V>)` entries:
///   with `Arc<str>` keys, a 24-byte bucket and a control byte per entry and version,
///   plus the table's spare room (hashbrown keeps it at most 7/8 full), against a whole
///   copy of every key and value per version with owned values. With `String` keys each
///   version also holds its keys (24 bytes and the key's bytes per entry):
///   `benches/delta.rs` measured 406 bytes per entry for three versions at 100,000
///   entries, against 765 with owned values.
/// - **An application** of an overwrite: the lookup, one atomic increment (the new value's
///   `Arc`) and one decrement (the old one's), where owned values copy the value into the
///   old one's buffers. The last application also locks the recycler (uncontended: only
///   the writer's thread takes it) to push the old `Arc`.
/// - **Making a value** ([`ArcPool::share_clone`]): the recycler's lock, up to four
///   tests of an `Arc`'s counts (two loads each), one `Arc::get_mut` (a
///   compare-and-swap) on the one taken, and `clone_from` into the recycled
///   value: no allocation when its buffers are large enough; one `Arc` allocation (plus the
///   value's) when no recycled `Arc` is free.
/// - **A full copy** ([`Absorb::sync_from`]): `clone_from` of the table, an atomic increment
///   per entry.
/// - **When values come back**: at an operation's last application, which waits for the
///   stalest version the log serves: the spare (a chunk behind, so a few batches later),
///   or a version a reader holds, for as long as it holds it. Meanwhile the bin has nothing
///   to hand out and each value is a new `Arc` (an allocation); the log keeps the
///   operations, and with them their values, as it does for owned values. Once that
///   version catches up, the values it held back return to the bin in order. A bin whose
///   capacity is under a few batches of values lets some go instead (counted in
///   [`ArcPoolStats::overflowed`]).
///
/// `Send` and `Sync` when `K`, `V` and `S` are.
///
/// # Examples
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Arc;
/// use poolswap::oplog::{OpLog, MapOp, SharedMap};
///
/// let routes: HashMap<Arc<str>, String> = HashMap::from([(Arc::from("/a"), "10.0.0.1".to_string())]);
/// let mut w = OpLog::builder(SharedMap::from(routes)).versions(3).build();
/// let values = w.container().acquire().recycler().clone();
/// for i in 2..100 {
///     // After the first few, each value is an `Arc` an earlier overwrite displaced,
///     // rewritten in place: no allocation.
///     let v = values.share_clone(&format!("10.0.0.{}", i % 10));
///     w.append(MapOp::Insert(Arc::from("/a"), v));
///     w.publish();
/// }
/// assert_eq!(*w.container().acquire()["/a"], "10.0.0.9");
/// assert!(values.stats().reused > 90);
/// ```
pub struct SharedMap<K, V, S = RandomState> {
    map: HashMap<K, Arc<V>, S>,
    recycler: Arc<ArcPool<V>>,
}

impl<K, V, S> SharedMap<K, V, S> {
    /// An empty map with the given hasher and a recycler of at most
    /// [`DEFAULT_BIN_CAPACITY`] values.
    pub fn with_hasher(hasher: S) -> Self {
        SharedMap {
            map: HashMap::with_hasher(hasher),
            recycler: Arc::new(ArcPool::new(DEFAULT_BIN_CAPACITY)),
        }
    }

    /// `map`, whose values are already shared, with a recycler that keeps at most
    /// `capacity` values (0: none, every displaced value is freed).
    pub fn with_bin_capacity(map: HashMap<K, Arc<V>, S>, capacity: usize) -> Self {
        SharedMap {
            map,
            recycler: Arc::new(ArcPool::new(capacity)),
        }
    }

    /// The recycler every version of this map shares (a full copy adopts its source's):
    /// where the writer makes the values of its operations.
    pub fn recycler(&self) -> &Arc<ArcPool<V>> {
        &self.recycler
    }

    /// The map itself (also reachable through `Deref`).
    pub fn as_map(&self) -> &HashMap<K, Arc<V>, S> {
        &self.map
    }
}

impl<K, V, S: Default> Default for SharedMap<K, V, S> {
    fn default() -> Self {
        SharedMap::with_hasher(S::default())
    }
}

/// Wraps each value in an `Arc` (one allocation per entry).
impl<K, V, S> From<HashMap<K, V, S>> for SharedMap<K, V, S>
where
    K: Eq + Hash,
    S: BuildHasher + Default,
{
    fn from(map: HashMap<K, V, S>) -> Self {
        let mut shared = HashMap::with_capacity_and_hasher(map.len(), S::default());
        shared.extend(map.into_iter().map(|(k, v)| (k, Arc::new(v))));
        SharedMap::with_bin_capacity(shared, DEFAULT_BIN_CAPACITY)
    }
}

impl<K, V, S> Deref for SharedMap<K, V, S> {
    type Target = HashMap<K, Arc<V>, S>;

    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl<K: fmt::Debug, V: fmt::Debug, S> fmt::Debug for SharedMap<K, V, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedMap")
            .field("map", &self.map)
            .field("recycler", &self.recycler)
            .finish()
    }
}

/// As for a `HashMap` ([`MapOp`]), but the last application of an overwrite or a removal
/// hands the displaced `Arc` to the [`ArcPool`] instead of dropping it.
impl<K, V, S> Absorb<MapOp<K, Arc<V>>> for SharedMap<K, V, S>
where
    K: Eq + Hash + Clone,
    S: BuildHasher + Clone,
{
    fn absorb(&mut self, op: &MapOp<K, Arc<V>>) {
        self.map.absorb(op);
    }

    fn absorb_owned(&mut self, op: MapOp<K, Arc<V>>) {
        match op {
            MapOp::Insert(k, v) => match self.map.entry(k) {
                Entry::Occupied(mut e) => {
                    let old = std::mem::replace(e.get_mut(), v);
                    self.recycler.recycle(old);
                }
                Entry::Vacant(e) => {
                    e.insert(v);
                }
            },
            MapOp::Remove(k) => {
                if let Some(old) = self.map.remove(&k) {
                    self.recycler.recycle(old);
                }
            }
            MapOp::Clear => {
                for (_, old) in self.map.drain() {
                    self.recycler.recycle(old);
                }
            }
        }
    }

    fn absorb_all<'a, I>(&mut self, ops: I)
    where
        I: IntoIterator<Item = &'a MapOp<K, Arc<V>>>,
        MapOp<K, Arc<V>>: 'a,
    {
        self.map.absorb_all(ops);
    }

    fn sync_from(&mut self, src: &Self) {
        self.map.clone_from(&src.map);
        if !Arc::ptr_eq(&self.recycler, &src.recycler) {
            self.recycler = Arc::clone(&src.recycler);
        }
    }
}

/// Where a [`SharedMap`]'s displaced values wait to be written again: a FIFO of `Arc`s,
/// bounded, behind a lock that only the writer's thread takes (the last application of an
/// operation pushes; [`share`](ArcPool::share) and [`share_clone`](ArcPool::share_clone)
/// pop): see [`SharedMap`].
///
/// `Send` and `Sync` when `V` is.
pub struct ArcPool<V> {
    state: Mutex<Bin<V>>,
    capacity: usize,
}

struct Bin<V> {
    values: VecDeque<Arc<V>>,
    stats: ArcPoolStats,
}

/// What a [`ArcPool`] did; see [`ArcPool::stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArcPoolStats {
    /// Values made from a recycled `Arc` (no `Arc` allocated).
    pub reused: u64,
    /// Values made in a new `Arc`: the bin held none that nothing else held.
    pub fresh: u64,
    /// Displaced `Arc`s the bin let go of because it was full (freed when their last holder
    /// lets go).
    pub overflowed: u64,
    /// `Arc`s in the bin now.
    pub held: usize,
}

impl<V> ArcPool<V> {
    fn new(capacity: usize) -> Self {
        ArcPool {
            state: Mutex::new(Bin {
                values: VecDeque::new(),
                stats: ArcPoolStats::default(),
            }),
            capacity,
        }
    }

    /// `value` in a shared `Arc`: a recycled one if the bin holds one that nothing else
    /// holds (its old value is dropped here, and `value`'s buffers move in), else a new
    /// one (an allocation). For values that come owned; [`share_clone`](Self::share_clone)
    /// keeps the recycled value's buffers instead.
    pub fn share(&self, value: V) -> Arc<V> {
        if let Some(mut recycled) = self.take_unique() {
            if let Some(slot) = Arc::get_mut(&mut recycled) {
                *slot = value;
                return recycled;
            }
        }
        Arc::new(value)
    }

    /// A copy of `value` in a shared `Arc`: a recycled one written in place with
    /// `clone_from` (no allocation when its buffers are large enough: a `String` or
    /// `Vec<String>` of no greater length) if the bin holds one that nothing else holds,
    /// else `Arc::new(value.clone())`.
    pub fn share_clone(&self, value: &V) -> Arc<V>
    where
        V: Clone,
    {
        if let Some(mut recycled) = self.take_unique() {
            if let Some(slot) = Arc::get_mut(&mut recycled) {
                slot.clone_from(value);
                return recycled;
            }
        }
        Arc::new(value.clone())
    }

    /// What the recycler did so far, and how many `Arc`s it holds.
    pub fn stats(&self) -> ArcPoolStats {
        let bin = self.state.lock();
        ArcPoolStats {
            held: bin.values.len(),
            ..bin.stats
        }
    }

    /// The oldest `Arc` in the bin that nothing else holds, among the first [`LOOK`];
    /// those still held go to the back. Counts the take as reused, or as fresh if none.
    ///
    /// The test is two loads of the counts, not `Arc::get_mut` (a compare-and-swap on the
    /// weak count), which the caller makes once to write the value. The counts cannot rise
    /// while only the bin holds the `Arc` (nothing else can clone it or make a `Weak`), so
    /// "1 strong, 0 weak" stays true; a stale, higher count only sends it to the back.
    fn take_unique(&self) -> Option<Arc<V>> {
        let mut bin = self.state.lock();
        for _ in 0..LOOK.min(bin.values.len()) {
            let front = bin.values.pop_front()?;
            if Arc::strong_count(&front) == 1 && Arc::weak_count(&front) == 0 {
                bin.stats.reused += 1;
                return Some(front);
            }
            bin.values.push_back(front);
        }
        bin.stats.fresh += 1;
        None
    }

    /// Keeps `old` for a later value, or lets it go if the bin is full (dropped after the
    /// lock: the last reference runs `V`'s drop).
    fn recycle(&self, old: Arc<V>) {
        let overflow = {
            let mut bin = self.state.lock();
            if bin.values.len() < self.capacity {
                bin.values.push_back(old);
                None
            } else {
                bin.stats.overflowed += 1;
                Some(old)
            }
        };
        drop(overflow);
    }
}

impl<V> fmt::Debug for ArcPool<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArcPool")
            .field("capacity", &self.capacity)
            .field("stats", &self.stats())
            .finish()
    }
}
