//! Values shared by every version and reused once none holds them: [`SharedMap`] and its
//! [`ArcPool`].
//!
//! An op log keeps three or more versions of a map. With owned values each version holds
//! its own copy of every value; behind `Arc`s the versions share one (an application
//! clones the `Arc`: one atomic increment, never the value), but then every overwrite
//! allocates a new `Arc` and frees the one it replaced. A [`SharedMap`] reuses them: the
//! last version to apply an overwrite or a removal ([`Absorb::absorb_owned`]) hands the
//! displaced `Arc` to the map's [`ArcPool`], a bounded FIFO shared by every version, and
//! the writer makes its next value from the oldest `Arc` there that nothing else holds any
//! more (`Arc::get_mut` says so), written in place with `clone_from`.
//!
//! No `unsafe` and no protocol of ours: uniqueness is std's `Arc::get_mut`.

// std's `Arc`, not the loom facade's, throughout: the values' `Arc`s are the user's
// (`SharedMap` hands them to readers and takes them in operations), and nothing here
// synchronises through them but std's own counts (`Arc::get_mut`), so loom would have no
// protocol of ours to check in them. The `ArcPool`'s lock is the facade's.
#![allow(clippy::disallowed_types)]

use std::collections::hash_map::{Entry, RandomState};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::ops::Deref;
use std::panic::RefUnwindSafe;
use std::sync::Arc;

use super::{Absorb, MapOp};
use crate::sync::Mutex;

/// `Arc`s an [`ArcPool`] keeps at most by default (see [`SharedMap::from`]): values come
/// back at their operation's last application, usually the spare's catch-up a few batches
/// later, and the next batches take them, so the pool holds what the last few batches
/// displaced. Past the bound, displaced values are freed and new ones allocated.
pub(crate) const DEFAULT_ARC_POOL_CAPACITY: usize = 1 << 12;

/// How many `Arc`s at the front of the pool a getter tests for uniqueness before it gives
/// up and allocates: those still held (by a version a reader holds, or a reader's clone) go
/// to the back.
const LOOK: usize = 4;

/// A `HashMap` whose values every version shares, each behind an `Arc`, for an
/// [`OpLog`](super::OpLog) under [`MapOp<K, Arc<V>>`](MapOp). The `Arc`s an overwrite or
/// removal displaces go back to an [`ArcPool`] for the writer's next values.
///
/// With owned values, each of an op log's versions holds its own copy of every value;
/// here they share one, and an application clones the `Arc` instead of the value. The last
/// version to apply an overwrite or removal ([`Absorb::absorb_owned`]) hands the displaced
/// `Arc` to the map's [`arc_pool`](SharedMap::arc_pool), and the writer makes its next
/// value with [`ArcPool::share`] or [`ArcPool::share_clone`], which reuse the oldest `Arc`
/// there that nothing else holds any more (no version, no reader's clone, no weak
/// reference: `Arc::get_mut` says so). A value a reader can still see is never written,
/// because its `Arc` is not unique.
///
/// Readers see a `HashMap<K, Arc<V>, S>` (`Deref`): `guard.get(key)` gives `&Arc<V>`,
/// which derefs to `&V`. Keys are the map's own; share them too with `K = Arc<str>` (an
/// application then clones a key's `Arc`, not its bytes).
///
/// # What it costs
///
/// - **Memory**: one copy of each value, and per version a table of `(K, Arc<V>)`
///   entries: `size_of::<(K, Arc<V>)>() + 1` bytes per entry (a bucket and a control
///   byte; 25 with `Arc<str>` keys) plus the table's spare room (hashbrown keeps it at most
///   7/8 full), and with owned keys such as `String` each version's copy of the key's
///   bytes.
/// - **An application** of an overwrite: the lookup, one atomic increment (the new value's
///   `Arc`) and one decrement (the old one's), where owned values copy the value into the
///   old one's buffers. The last application also takes the `ArcPool`'s lock
///   (uncontended: only the writer's thread takes it) to push the old `Arc`.
/// - **Making a value** ([`ArcPool::share_clone`]): the `ArcPool`'s lock, up to four tests
///   of an `Arc`'s counts (two loads each), one `Arc::get_mut` (a compare-and-swap) on the
///   one taken, and `clone_from` into the reused value: no allocation when its buffers are
///   large enough; one `Arc` allocation (plus the value's) when no `Arc` is free.
/// - **A full copy** ([`Absorb::sync_from`]): `clone_from` of the table, an atomic
///   increment per entry.
/// - **When values come back**: at an operation's last application, which waits for the
///   stalest version the op log serves: the spare (a few batches later), or a version a
///   reader holds, for as long as it holds it. Meanwhile each value is a new `Arc` (an
///   allocation); once that version catches up, the values it held back return in order.
///   An `ArcPool` whose capacity is under a few batches of values lets some go instead
///   (counted in [`ArcPoolStats::overflowed`]).
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
/// let values = w.read_handle().acquire().arc_pool().clone();
/// for i in 2..100 {
///     // After the first few, each value is an `Arc` an earlier overwrite displaced,
///     // rewritten in place: no allocation.
///     let v = values.share_clone(&format!("10.0.0.{}", i % 10));
///     w.append(MapOp::Insert(Arc::from("/a"), v));
///     w.publish();
/// }
/// assert_eq!(*w.read_handle().acquire()["/a"], "10.0.0.9");
/// assert!(values.stats().reused > 90);
/// ```
pub struct SharedMap<K, V, S = RandomState> {
    map: HashMap<K, Arc<V>, S>,
    arc_pool: Arc<ArcPool<V>>,
}

impl<K, V, S> SharedMap<K, V, S> {
    /// An empty map with the given hasher, whose [`ArcPool`] keeps at most 4,096 `Arc`s.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::hash::{BuildHasherDefault, DefaultHasher};
    /// use std::sync::Arc;
    /// use poolswap::oplog::{MapOp, OpLog, SharedMap};
    ///
    /// type Fixed = BuildHasherDefault<DefaultHasher>; // the same hashes in every process
    /// let mut w = OpLog::new(SharedMap::<String, u64, Fixed>::with_hasher(Fixed::default()));
    /// w.append(MapOp::Insert("hits".to_string(), Arc::new(1)));
    /// w.publish();
    /// assert_eq!(*w.read_handle().acquire()["hits"], 1);
    /// ```
    pub fn with_hasher(hasher: S) -> Self {
        SharedMap::with_arc_pool_capacity(HashMap::with_hasher(hasher), DEFAULT_ARC_POOL_CAPACITY)
    }

    /// `map`, whose values are already shared, with an [`ArcPool`] that keeps at most
    /// `capacity` `Arc`s (0: none, every displaced value is freed). Batches that displace
    /// more than about a third of it at a time overflow it: displaced values are then
    /// freed and new ones allocated.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::sync::Arc;
    /// use poolswap::oplog::{Absorb, MapOp, SharedMap};
    ///
    /// let values = HashMap::from([("a", Arc::new(1)), ("b", Arc::new(2))]);
    /// let mut map = SharedMap::with_arc_pool_capacity(values, 1);
    /// // The last application of a `Clear` (what an op log does) displaces both `Arc`s:
    /// map.absorb_owned(MapOp::Clear);
    /// let stats = map.arc_pool().stats();
    /// assert_eq!((stats.held, stats.overflowed), (1, 1)); // one kept, one let go
    /// ```
    pub fn with_arc_pool_capacity(map: HashMap<K, Arc<V>, S>, capacity: usize) -> Self {
        SharedMap {
            map,
            arc_pool: Arc::new(ArcPool::new(capacity)),
        }
    }

    /// The [`ArcPool`] every version of this map shares (a full copy adopts its source's):
    /// where the writer makes the values of its operations.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::sync::Arc;
    /// use poolswap::oplog::{MapOp, OpLog, SharedMap};
    ///
    /// let mut w = OpLog::new(SharedMap::from(HashMap::from([(1, 10)])));
    /// let values = Arc::clone(w.read_handle().acquire().arc_pool());
    /// w.append(MapOp::Insert(1, values.share(11)));
    /// w.publish();
    /// let now = w.read_handle().acquire(); // another version than the first...
    /// assert_eq!(*now[&1], 11);
    /// assert!(Arc::ptr_eq(now.arc_pool(), &values)); // ...with the same pool
    /// ```
    pub fn arc_pool(&self) -> &Arc<ArcPool<V>> {
        &self.arc_pool
    }
}

impl<K, V, S: Default> Default for SharedMap<K, V, S> {
    fn default() -> Self {
        SharedMap::with_hasher(S::default())
    }
}

/// Wraps each value in an `Arc` (one allocation per entry); the [`ArcPool`] keeps at most
/// 4,096 `Arc`s ([`SharedMap::with_arc_pool_capacity`] sets another bound).
impl<K, V, S> From<HashMap<K, V, S>> for SharedMap<K, V, S>
where
    K: Eq + Hash,
    S: BuildHasher + Default,
{
    fn from(map: HashMap<K, V, S>) -> Self {
        let mut shared = HashMap::with_capacity_and_hasher(map.len(), S::default());
        shared.extend(map.into_iter().map(|(k, v)| (k, Arc::new(v))));
        SharedMap::with_arc_pool_capacity(shared, DEFAULT_ARC_POOL_CAPACITY)
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
            .field("arc_pool", &self.arc_pool)
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
                    self.arc_pool.keep(old);
                }
                Entry::Vacant(e) => {
                    e.insert(v);
                }
            },
            MapOp::Remove(k) => {
                if let Some(old) = self.map.remove(&k) {
                    self.arc_pool.keep(old);
                }
            }
            MapOp::Clear => {
                for (_, old) in self.map.drain() {
                    self.arc_pool.keep(old);
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
        if !Arc::ptr_eq(&self.arc_pool, &src.arc_pool) {
            self.arc_pool = Arc::clone(&src.arc_pool);
        }
    }
}

/// Where a [`SharedMap`]'s displaced values wait to be written again: a bounded FIFO of
/// `Arc`s, behind a lock that only the writer's thread takes (the last application of an
/// operation pushes; [`share`](ArcPool::share) and [`share_clone`](ArcPool::share_clone)
/// pop): see [`SharedMap`].
///
/// `Send` and `Sync` when `V` is; `RefUnwindSafe` when `V` is.
pub struct ArcPool<V> {
    state: Mutex<ArcQueue<V>>,
    capacity: usize,
}

/// A panic cannot leave the lock's queue half-written: under it run only `VecDeque`
/// pushes and pops (which abort, not panic, when out of memory), counter increments, and
/// `Arc` count loads; the values themselves are written or dropped after the lock.
impl<V: RefUnwindSafe> RefUnwindSafe for ArcPool<V> {}

/// An [`ArcPool`]'s `Arc`s, oldest first, and its counts.
struct ArcQueue<V> {
    values: VecDeque<Arc<V>>,
    stats: ArcPoolStats,
}

/// What an [`ArcPool`] did; see [`ArcPool::stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArcPoolStats {
    /// Values made in a reused `Arc` (no `Arc` allocated).
    pub reused: u64,
    /// Values made in a new `Arc`: the pool held none that nothing else held.
    pub fresh: u64,
    /// Displaced `Arc`s the pool let go of because it was full (freed when their last
    /// holder lets go).
    pub overflowed: u64,
    /// `Arc`s in the pool now.
    pub held: usize,
}

impl<V> ArcPool<V> {
    fn new(capacity: usize) -> Self {
        ArcPool {
            state: Mutex::new(ArcQueue {
                values: VecDeque::new(),
                stats: ArcPoolStats::default(),
            }),
            capacity,
        }
    }

    /// `value` in a shared `Arc`: a reused one if the pool holds one that nothing else
    /// holds (its old value is dropped here, and `value`'s buffers move in), else a new
    /// one (an allocation). For values that come owned; [`share_clone`](Self::share_clone)
    /// keeps the reused value's buffers instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::oplog::{Absorb, MapOp, SharedMap};
    ///
    /// let mut map: SharedMap<&str, Vec<u8>> = SharedMap::default();
    /// let values = Arc::clone(map.arc_pool());
    /// map.absorb_owned(MapOp::Insert("k", values.share(vec![1, 2, 3]))); // a new `Arc`
    /// map.absorb_owned(MapOp::Remove("k")); // its last application: to the pool
    ///
    /// let v = values.share(vec![4, 5]); // the removed value's `Arc`, `vec![4, 5]` moved in
    /// assert_eq!(*v, [4, 5]);
    /// let stats = values.stats();
    /// assert_eq!((stats.fresh, stats.reused, stats.held), (1, 1, 0));
    /// ```
    pub fn share(&self, value: V) -> Arc<V> {
        if let Some(mut reused) = self.take_unique() {
            if let Some(value_in) = Arc::get_mut(&mut reused) {
                *value_in = value;
                return reused;
            }
        }
        Arc::new(value)
    }

    /// A copy of `value` in a shared `Arc`: a reused one written in place with
    /// `clone_from` (no allocation when its buffers are large enough: a `String` or
    /// `Vec<String>` of no greater length) if the pool holds one that nothing else holds,
    /// else `Arc::new(value.clone())`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::oplog::{Absorb, MapOp, SharedMap};
    ///
    /// let mut map: SharedMap<u32, String> = SharedMap::default();
    /// let values = Arc::clone(map.arc_pool());
    /// let long = String::from("a value of some length");
    /// map.absorb_owned(MapOp::Insert(1, values.share_clone(&long)));
    /// // An overwrite's last application hands the old `Arc` to the pool.
    /// map.absorb_owned(MapOp::Insert(1, values.share_clone(&"short".to_string())));
    ///
    /// let v = values.share_clone(&"tiny".to_string()); // written into the old `String`
    /// assert_eq!(*v, "tiny");
    /// assert!(v.capacity() >= long.len());
    /// assert_eq!(values.stats().reused, 1);
    /// ```
    pub fn share_clone(&self, value: &V) -> Arc<V>
    where
        V: Clone,
    {
        if let Some(mut reused) = self.take_unique() {
            if let Some(value_in) = Arc::get_mut(&mut reused) {
                value_in.clone_from(value);
                return reused;
            }
        }
        Arc::new(value.clone())
    }

    /// What the pool did so far, and how many `Arc`s it holds. Takes the pool's lock.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use poolswap::oplog::{Absorb, MapOp, SharedMap};
    ///
    /// let mut map: SharedMap<&str, String> = SharedMap::default();
    /// let values = Arc::clone(map.arc_pool());
    /// map.absorb_owned(MapOp::Insert("a", values.share("1".to_string())));
    /// map.absorb_owned(MapOp::Insert("b", values.share("2".to_string())));
    /// map.absorb_owned(MapOp::Clear);
    /// let stats = values.stats();
    /// assert_eq!((stats.fresh, stats.reused), (2, 0)); // the pool was empty at each share
    /// assert_eq!(stats.held, 2); // the cleared values wait for the next ones
    /// ```
    pub fn stats(&self) -> ArcPoolStats {
        let queue = self.state.lock();
        ArcPoolStats {
            held: queue.values.len(),
            ..queue.stats
        }
    }

    /// The oldest `Arc` in the pool that nothing else holds, among the first [`LOOK`];
    /// those still held go to the back. Counts the take as reused, or as fresh if none.
    ///
    /// The test is two loads of the counts, not `Arc::get_mut` (a compare-and-swap on the
    /// weak count), which the caller makes once to write the value. The counts cannot rise
    /// while only the pool holds the `Arc` (nothing else can clone it or make a `Weak`), so
    /// "1 strong, 0 weak" stays true; a stale, higher count only sends it to the back.
    fn take_unique(&self) -> Option<Arc<V>> {
        let mut queue = self.state.lock();
        for _ in 0..LOOK.min(queue.values.len()) {
            let front = queue.values.pop_front()?;
            if Arc::strong_count(&front) == 1 && Arc::weak_count(&front) == 0 {
                queue.stats.reused += 1;
                return Some(front);
            }
            queue.values.push_back(front);
        }
        queue.stats.fresh += 1;
        None
    }

    /// Keeps `old` for a later value, or lets it go if the pool is full (dropped after the
    /// lock: the last reference runs `V`'s drop).
    fn keep(&self, old: Arc<V>) {
        let overflow = {
            let mut queue = self.state.lock();
            if queue.values.len() < self.capacity {
                queue.values.push_back(old);
                None
            } else {
                queue.stats.overflowed += 1;
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
