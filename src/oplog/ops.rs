//! Ready-made operations for std's collections and for [`Recycled`] hash maps.
//!
//! Each overwrite goes through `clone_from` on the value already there, so a version the
//! pool hands out again reuses its own buffers: a `String` or a `Vec<String>` overwritten
//! by one of no greater length allocates nothing. For std's collections the last version to
//! apply an operation takes its data by value instead; a [`Recycled`] map copies it as the
//! others do, into buffers from its free lists, so that its free lists do not grow with
//! every publish.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasher, Hash};

use super::Absorb;
use crate::recycle::{copy_map, FreeLists, RecycleCopy, Recycled, Scratch};

/// An operation on a map: for `HashMap`, `BTreeMap` and `Recycled<HashMap>` under a
/// [`OpLog`](super::OpLog).
///
/// # Examples
///
/// ```
/// use std::collections::HashMap;
/// use poolswap::oplog::{OpLog, MapOp};
///
/// let mut w = OpLog::new(HashMap::new());
/// w.extend([MapOp::Insert("a", 1), MapOp::Insert("b", 2), MapOp::Remove("a")]);
/// w.publish();
/// assert_eq!(*w.read_handle().acquire(), HashMap::from([("b", 2)]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapOp<K, V> {
    /// Inserts the entry, or overwrites the value of an existing key (in place, with
    /// `clone_from`).
    Insert(K, V),
    /// Removes the key's entry, if any.
    Remove(K),
    /// Removes every entry (keeping the map's capacity).
    Clear,
}

/// An operation on a set: for `HashSet` and `BTreeSet` under a
/// [`OpLog`](super::OpLog).
///
/// # Examples
///
/// ```
/// use std::collections::BTreeSet;
/// use poolswap::oplog::{OpLog, SetOp};
///
/// let mut w = OpLog::new(BTreeSet::new());
/// w.extend([SetOp::Insert(3), SetOp::Insert(1), SetOp::Remove(3)]);
/// w.publish();
/// assert!(w.read_handle().acquire().iter().eq([&1]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetOp<T> {
    /// Adds the value.
    Insert(T),
    /// Removes the value, if present.
    Remove(T),
    /// Removes every value (keeping the set's capacity).
    Clear,
}

/// An operation on a `Vec` under an [`OpLog`](super::OpLog).
///
/// Operations that name an index past the end do nothing (every version applies them
/// alike), rather than panic while publishing.
///
/// # Examples
///
/// ```
/// use poolswap::oplog::{OpLog, VecOp};
///
/// let mut w = OpLog::new(vec![10, 20, 30]);
/// w.extend([VecOp::Set(0, 11), VecOp::Pop, VecOp::Push(40), VecOp::Set(9, 0)]);
/// w.publish();
/// assert_eq!(*w.read_handle().acquire(), vec![11, 20, 40]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VecOp<T> {
    /// Appends the value.
    Push(T),
    /// Removes the last value, if any.
    Pop,
    /// Overwrites the value at the index (in place, with `clone_from`); nothing past the
    /// end.
    Set(usize, T),
    /// Shortens the vector to this length (nothing if it is not longer).
    Truncate(usize),
    /// Removes every value (keeping the capacity).
    Clear,
}

/// Inserts, or overwrites in place with `clone_from`; `clone_from` of a `HashMap` keeps
/// the table (hashbrown reuses it when the bucket counts agree) for full copies.
impl<K, V, S> Absorb<MapOp<K, V>> for HashMap<K, V, S>
where
    K: Eq + Hash + Clone,
    V: Clone,
    S: BuildHasher + Clone,
{
    fn absorb(&mut self, op: &MapOp<K, V>) {
        match op {
            MapOp::Insert(k, v) => match self.get_mut(k) {
                Some(old) => old.clone_from(v),
                None => {
                    self.insert(k.clone(), v.clone());
                }
            },
            MapOp::Remove(k) => {
                self.remove(k);
            }
            MapOp::Clear => self.clear(),
        }
    }

    fn absorb_owned(&mut self, op: MapOp<K, V>) {
        match op {
            // One lookup: the key is ours to give (an overwrite drops it).
            MapOp::Insert(k, v) => match self.entry(k) {
                Entry::Occupied(mut e) => *e.get_mut() = v,
                Entry::Vacant(e) => {
                    e.insert(v);
                }
            },
            MapOp::Remove(k) => {
                self.remove(&k);
            }
            MapOp::Clear => self.clear(),
        }
    }

    fn absorb_all<'a, I>(&mut self, ops: I)
    where
        I: IntoIterator<Item = &'a MapOp<K, V>>,
        MapOp<K, V>: 'a,
    {
        // Made at the first remove: a replay without one pays nothing for it.
        let mut removed: Option<Removed<K, V>> = None;
        for op in ops {
            match op {
                MapOp::Insert(k, v) => match removed.as_mut().and_then(Removed::take) {
                    // A removed entry to reuse: its key, rewritten, makes the one lookup.
                    Some((mut old_k, mut old_v)) => {
                        old_k.clone_from(k);
                        match self.entry(old_k) {
                            // The map keeps its own key; the removed entry is dropped here,
                            // as a plain `absorb` would have dropped it at the remove.
                            Entry::Occupied(mut e) => e.get_mut().clone_from(v),
                            Entry::Vacant(e) => {
                                old_v.clone_from(v);
                                e.insert(old_v);
                            }
                        }
                    }
                    None => match self.get_mut(k) {
                        Some(old) => old.clone_from(v),
                        None => {
                            self.insert(k.clone(), v.clone());
                        }
                    },
                },
                MapOp::Remove(k) => {
                    if let Some(entry) = self.remove_entry(k) {
                        removed.get_or_insert_with(Removed::new).keep(entry);
                    }
                }
                MapOp::Clear => self.clear(),
            }
        }
    }

    fn sync_from(&mut self, src: &Self) {
        self.clone_from(src);
    }
}

/// How many removed entries [`Removed`] keeps for later inserts: a replay that removes more
/// before it inserts frees the rest, as a plain `absorb` would.
const REUSED: usize = 8;

/// Entries a replay removed, kept (up to [`REUSED`], on the stack) so that a later insert
/// of a new key reuses their buffers: `clone_from` into a removed key and value of the
/// same shape allocates nothing, where `clone` allocates each buffer anew and the removal
/// freed the old ones. What is left unused is dropped with it.
struct Removed<K, V> {
    entries: [Option<(K, V)>; REUSED],
    len: usize,
}

impl<K: Clone, V: Clone> Removed<K, V> {
    fn new() -> Self {
        Removed {
            entries: [const { None }; REUSED],
            len: 0,
        }
    }

    /// Keeps a removed entry if there is room; else it is dropped here.
    fn keep(&mut self, entry: (K, V)) {
        if let Some(slot) = self.entries.get_mut(self.len) {
            *slot = Some(entry);
            self.len += 1;
        }
    }

    /// The entry kept last, if any.
    fn take(&mut self) -> Option<(K, V)> {
        let at = self.len.checked_sub(1)?;
        self.len = at;
        self.entries[at].take()
    }
}

/// As for `HashMap`.
impl<K, V> Absorb<MapOp<K, V>> for BTreeMap<K, V>
where
    K: Ord + Clone,
    V: Clone,
{
    fn absorb(&mut self, op: &MapOp<K, V>) {
        match op {
            MapOp::Insert(k, v) => match self.get_mut(k) {
                Some(old) => old.clone_from(v),
                None => {
                    self.insert(k.clone(), v.clone());
                }
            },
            MapOp::Remove(k) => {
                self.remove(k);
            }
            MapOp::Clear => self.clear(),
        }
    }

    fn absorb_owned(&mut self, op: MapOp<K, V>) {
        match op {
            MapOp::Insert(k, v) => match self.get_mut(&k) {
                Some(old) => *old = v,
                None => {
                    self.insert(k, v);
                }
            },
            MapOp::Remove(k) => {
                self.remove(&k);
            }
            MapOp::Clear => self.clear(),
        }
    }

    fn sync_from(&mut self, src: &Self) {
        self.clone_from(src);
    }
}

/// `Absorb<SetOp<T>>` for a set type with `contains`, `insert`, `remove` and `clear`: the
/// impl header (generics, bounds) is the argument; the body is the same for every set.
macro_rules! absorb_set_ops {
    ($(#[$doc:meta])* [$($header:tt)*]) => {
        $(#[$doc])*
        $($header)* {
            fn absorb(&mut self, op: &SetOp<T>) {
                match op {
                    SetOp::Insert(v) => {
                        if !self.contains(v) {
                            self.insert(v.clone());
                        }
                    }
                    SetOp::Remove(v) => {
                        self.remove(v);
                    }
                    SetOp::Clear => self.clear(),
                }
            }

            fn absorb_owned(&mut self, op: SetOp<T>) {
                match op {
                    SetOp::Insert(v) => {
                        self.insert(v);
                    }
                    op => self.absorb(&op),
                }
            }

            fn sync_from(&mut self, src: &Self) {
                self.clone_from(src);
            }
        }
    };
}

absorb_set_ops!(
    /// Inserting a value already present keeps the old one, as `HashSet::insert` does.
    [impl<T, S> Absorb<SetOp<T>> for HashSet<T, S>
    where
        T: Eq + Hash + Clone,
        S: BuildHasher + Clone,]
);

absorb_set_ops!(
    /// As for `HashSet`.
    [impl<T: Ord + Clone> Absorb<SetOp<T>> for BTreeSet<T>]
);

/// `Set` overwrites in place with `clone_from`; `sync_from` is `Vec::clone_from`, which
/// keeps the buffer and clones into the elements already there.
impl<T: Clone> Absorb<VecOp<T>> for Vec<T> {
    fn absorb(&mut self, op: &VecOp<T>) {
        match op {
            VecOp::Push(v) => self.push(v.clone()),
            VecOp::Pop => {
                self.pop();
            }
            VecOp::Set(at, v) => {
                if let Some(old) = self.get_mut(*at) {
                    old.clone_from(v);
                }
            }
            VecOp::Truncate(len) => self.truncate(*len),
            VecOp::Clear => self.clear(),
        }
    }

    fn absorb_owned(&mut self, op: VecOp<T>) {
        match op {
            VecOp::Push(v) => self.push(v),
            VecOp::Set(at, v) => {
                if let Some(old) = self.get_mut(at) {
                    *old = v;
                }
            }
            op => self.absorb(&op),
        }
    }

    fn sync_from(&mut self, src: &Self) {
        self.clone_from(src);
    }
}

/// A recycling copy of `src` made from the spare values in `free_lists`: one big enough, if
/// one of the last few recycled is ([`FreeLists::take_fitting`]).
fn copied<T: RecycleCopy + Default>(src: &T, free_lists: &mut FreeLists) -> T {
    let mut out: T = free_lists.take_fitting(src.copy_bytes());
    out.copy_from_in(src, free_lists);
    out
}

/// With the value's free lists: a new entry's key and value are recycling copies taken from
/// them, an overwrite copies into the old value's buffers, and a removed entry's key and
/// value go back to them. Inserts balanced by removals therefore allocate nothing once the
/// free lists hold enough buffers. The last version to apply an operation copies it too
/// (the operation's own buffers are then freed), so that the free lists stay the size of
/// the churn. `sync_from` is [`Recycled::copy_from`] (freeing its address table
/// afterwards).
impl<K, V, S> Absorb<MapOp<K, V>> for Recycled<HashMap<K, V, S>>
where
    K: RecycleCopy + Default + Eq + Hash,
    V: RecycleCopy + Default,
    S: BuildHasher + Send + Sync + 'static,
{
    fn absorb(&mut self, op: &MapOp<K, V>) {
        let (map, free_lists) = Recycled::parts_mut(self);
        match op {
            MapOp::Insert(k, v) => match map.get_mut(k) {
                Some(old) => old.copy_from_in(v, free_lists),
                None => {
                    let k = copied(k, free_lists);
                    let v = copied(v, free_lists);
                    map.insert(k, v);
                }
            },
            MapOp::Remove(k) => {
                if let Some((k, v)) = map.remove_entry(k) {
                    free_lists.recycle(k);
                    free_lists.recycle(v);
                }
            }
            MapOp::Clear => self.clear(),
        }
    }

    // No `absorb_owned`: the default copies into the version's own buffers and those of
    // the free lists (as `absorb`), then drops the operation's. Moving the operation's
    // buffers in instead would put the replaced ones in the free lists on every publish,
    // and the free lists would only grow.

    /// [`Recycled::copy_from`], except that the table of addresses it uses to find the
    /// keys `src` added is freed afterwards rather than kept in the free lists: full copies
    /// are rare here, and the version would keep 8-16 bytes per entry for the next one.
    fn sync_from(&mut self, src: &Self) {
        let (map, free_lists) = Recycled::parts_mut(self);
        copy_map(map, src, free_lists, Scratch::Free);
    }
}
