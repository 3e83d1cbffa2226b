//! [`RecycleCopy`]: making a value equal to another from spare values of free lists, and
//! [`Recycled::copy_from`], the recycling copy for `rcu`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::mem;

use super::seen::Seen;
use super::std_impls::with_plain_types;
use super::{FreeLists, Recycle, Recycled};

/// A recycling copy: makes a value equal to another, taking the nested values it needs
/// (strings, inner vectors, map entries) from free lists instead of allocating.
///
/// What [`Container::rcu`](crate::Container::rcu) wants: the writer's recycled object
/// becomes a copy of the current version, then changes a little. With a `Recycled<T>`,
/// [`Recycled::copy_from`] does it; changing one key of a 100k-entry
/// `HashMap<String, Vec<String>>` then allocates only for what changed, once the free
/// lists hold the previous version's buffers.
///
/// Implemented for the types [`Recycle`] is implemented for, except arrays; for a struct,
/// call `copy_from_in` field by field.
///
/// # Examples
///
/// ```
/// use poolswap::recycle::{FreeLists, RecycleCopy};
///
/// let mut lists = FreeLists::new();
/// lists.recycle(String::with_capacity(32));
/// let src = vec![String::from("a recycled buffer")];
/// let mut dst: Vec<String> = Vec::new();
/// dst.copy_from_in(&src, &mut lists);
/// assert_eq!(dst, src);
/// assert_eq!(dst[0].capacity(), 32); // the spare String, not a new one
/// ```
pub trait RecycleCopy: Recycle {
    /// Makes `self` equal to `src`. What `self` held first is recycled into `lists`; the
    /// values it needs come from `lists` (or are made, when the lists are empty).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::{FreeLists, RecycleCopy};
    ///
    /// let mut lists = FreeLists::new();
    /// let mut dst = vec![String::from("first"), String::from("second")];
    /// dst.copy_from_in(&vec![String::from("1")], &mut lists);
    /// assert_eq!(dst, ["1"]); // copied into "first"'s buffer
    /// assert_eq!(lists.spare_len::<String>(), 1); // "second", kept for a later copy
    /// ```
    fn copy_from_in(&mut self, src: &Self, lists: &mut FreeLists);

    /// Bytes a cleared value needs to retain to become a copy of `self` without growing
    /// its own buffer (a `String`: its length); 0 (the default) if that does not apply.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::RecycleCopy;
    ///
    /// assert_eq!(String::from("four").copy_bytes(), 4);
    /// assert_eq!(vec![0u64; 3].copy_bytes(), 24); // 3 elements of 8 bytes
    /// assert_eq!(7u32.copy_bytes(), 0); // plain data: no buffer
    /// ```
    fn copy_bytes(&self) -> usize {
        0
    }
}

macro_rules! plain_copy {
    ($($t:ty),*) => {$(
        /// Plain data: copied.
        impl RecycleCopy for $t {
            #[inline]
            fn copy_from_in(&mut self, src: &Self, _: &mut FreeLists) {
                *self = *src;
            }
        }
    )*};
}

with_plain_types!(plain_copy);

/// A new value equal to `src`, built from the spare values of `lists`: one big enough for it,
/// if one of the last few recycled is (so that buffers of mixed sizes do not keep growing
/// each other: [`FreeLists::take_fitting`]).
fn copied<T: RecycleCopy + Default>(src: &T, lists: &mut FreeLists) -> T {
    let mut out: T = if T::PLAIN {
        T::default()
    } else {
        lists.take_fitting(src.copy_bytes())
    };
    out.copy_from_in(src, lists);
    out
}

/// Copies into its own buffer, which grows only if `src` is longer than its capacity, and
/// then to the next power of two at or above `src.len()` (at most twice its bytes).
impl RecycleCopy for String {
    fn copy_from_in(&mut self, src: &Self, _: &mut FreeLists) {
        self.clear();
        if self.capacity() < src.len() {
            // It must grow: to the size class, as `FreeLists::string_from` does, so that it
            // fits the next strings of about this length without growing again.
            self.reserve_exact(src.len().checked_next_power_of_two().unwrap_or(src.len()));
        }
        self.push_str(src);
    }
    fn copy_bytes(&self) -> usize {
        self.len()
    }
}

/// Keeps its buffer; the elements it already has are copied into in place, the rest are
/// recycling copies, and its surplus elements are recycled.
impl<T: RecycleCopy + Default> RecycleCopy for Vec<T> {
    fn copy_from_in(&mut self, src: &Self, lists: &mut FreeLists) {
        if self.len() > src.len() {
            for v in self.drain(src.len()..) {
                lists.recycle(v);
            }
        }
        for (dst, v) in self.iter_mut().zip(src) {
            dst.copy_from_in(v, lists);
        }
        let have = self.len();
        self.reserve(src.len() - have);
        for v in &src[have..] {
            self.push(copied(v, lists));
        }
    }
    fn copy_bytes(&self) -> usize {
        self.len() * mem::size_of::<T>()
    }
}

/// Like `Vec<T>`.
impl<T: RecycleCopy + Default> RecycleCopy for VecDeque<T> {
    fn copy_from_in(&mut self, src: &Self, lists: &mut FreeLists) {
        self.recycle_into(lists);
        self.reserve(src.len());
        for v in src {
            self.push_back(copied(v, lists));
        }
    }
}

/// Keeps its table. An entry whose key `src` also has keeps its key and has its value
/// copied into in place (so, when `self` holds an older version of `src`, unchanged
/// entries reuse their own buffers exactly); entries `src` lacks are removed and recycled
/// into the free lists, key and value; the others are inserted as recycling copies.
///
/// One pass over `self`, looking each key up in `src` (one hash and probe per entry), which
/// also notes the address of every `src` key it matched. Only when `src` has keys `self`
/// lacked does a second pass walk `src`, and it looks nothing up: an entry is new when its
/// key's address was not noted (one probe into a table of addresses, 8 to 16 bytes per
/// entry of `src`, kept in the free lists), and the walk stops at the last new one. Removed
/// keys are first copied aside (into spare buffers), one lookup each to take their entries
/// out. At steady state it allocates nothing, key sets changing or not, once the free lists
/// hold the buffers the new entries need (those of the removed ones).
impl<K, V, S> RecycleCopy for HashMap<K, V, S>
where
    K: RecycleCopy + Default + Eq + Hash,
    V: RecycleCopy + Default,
    S: BuildHasher + Send + Sync + 'static,
{
    fn copy_from_in(&mut self, src: &Self, lists: &mut FreeLists) {
        copy_map(self, src, lists, Scratch::Keep);
    }
}

/// What a map copy does with its address table afterwards.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scratch {
    /// Back to the free lists, for the next copy: copies that recur (`rcu`) allocate nothing.
    Keep,
    /// Freed: for a rare copy (the op log's full re-sync), whose version would otherwise
    /// keep 8-16 bytes per entry in its free lists that only the next such copy uses.
    Free,
}

/// `HashMap`'s [`RecycleCopy`], with the choice of what becomes of the address table.
pub(crate) fn copy_map<K, V, S>(
    dst: &mut HashMap<K, V, S>,
    src: &HashMap<K, V, S>,
    lists: &mut FreeLists,
    scratch: Scratch,
) where
    K: RecycleCopy + Default + Eq + Hash,
    V: RecycleCopy + Default,
    S: BuildHasher,
{
    if dst.is_empty() {
        dst.reserve(src.len());
        for (k, v) in src {
            let k = copied(k, lists);
            let v = copied(v, lists);
            dst.insert(k, v);
        }
        return;
    }
    // `src` is borrowed shared for the whole copy, so its keys stay where they are and
    // distinct keys have distinct addresses: the address names the entry.
    let mut seen = Seen::with_capacity_in(src.len(), lists);
    let mut matched = 0;
    // Copies of the keys `src` lacks: the entries cannot leave `dst` during the walk.
    let mut stale: Option<Vec<K>> = None;
    for (k, v) in dst.iter_mut() {
        match src.get_key_value(k) {
            Some((src_k, src_v)) => {
                v.copy_from_in(src_v, lists);
                seen.insert(Seen::addr(src_k));
                matched += 1;
            }
            None => {
                let k = copied(k, lists);
                stale.get_or_insert_with(|| lists.take()).push(k);
            }
        }
    }
    if let Some(mut stale) = stale {
        for k in stale.drain(..) {
            if let Some((old_k, old_v)) = dst.remove_entry(&k) {
                lists.recycle(old_k);
                lists.recycle(old_v);
            }
            lists.recycle(k);
        }
        lists.recycle(stale);
    }
    // Every key of `dst` is in `src` now; `src` has `src.len() - matched` more.
    let mut missing = src.len() - matched;
    if missing > 0 {
        dst.reserve(missing);
        for (k, v) in src {
            if !seen.contains(Seen::addr(k)) {
                let k = copied(k, lists);
                let v = copied(v, lists);
                dst.insert(k, v);
                missing -= 1;
                if missing == 0 {
                    break;
                }
            }
        }
    }
    match scratch {
        Scratch::Keep => seen.give_back(lists),
        Scratch::Free => drop(seen),
    }
}

/// Keeps its table; elements are recycling copies.
impl<T, S> RecycleCopy for HashSet<T, S>
where
    T: RecycleCopy + Default + Eq + Hash,
    S: BuildHasher + Send + Sync + 'static,
{
    fn copy_from_in(&mut self, src: &Self, lists: &mut FreeLists) {
        self.recycle_into(lists);
        self.reserve(src.len());
        for v in src {
            self.insert(copied(v, lists));
        }
    }
}

/// The content is a recycling copy (in place when both are `Some`).
impl<T: RecycleCopy + Default> RecycleCopy for Option<T> {
    fn copy_from_in(&mut self, src: &Self, lists: &mut FreeLists) {
        match (self.as_mut(), src) {
            (Some(dst), Some(src)) => dst.copy_from_in(src, lists),
            (None, Some(src)) => *self = Some(copied(src, lists)),
            (_, None) => self.recycle_into(lists),
        }
    }
}

/// Copies in place, keeping its allocation.
impl<T: RecycleCopy> RecycleCopy for Box<T> {
    fn copy_from_in(&mut self, src: &Self, lists: &mut FreeLists) {
        (**self).copy_from_in(src, lists);
    }
}

macro_rules! tuple_copy {
    ($($name:ident . $i:tt),+) => {
        /// Each element a recycling copy, in place.
        impl<$($name: RecycleCopy),+> RecycleCopy for ($($name,)+) {
            fn copy_from_in(&mut self, src: &Self, lists: &mut FreeLists) {
                $( self.$i.copy_from_in(&src.$i, lists); )+
            }
        }
    };
}

tuple_copy!(A.0);
tuple_copy!(A.0, B.1);
tuple_copy!(A.0, B.1, C.2);
tuple_copy!(A.0, B.1, C.2, D.3);

impl<T: RecycleCopy> Recycled<T> {
    /// Makes the value a copy of `src` with [`RecycleCopy`], taking the buffers it needs
    /// from its free lists. The recycling copy for [`Container::rcu`](crate::Container::rcu).
    ///
    /// Allocates only for what its own contents and its free lists cannot supply. It reuses
    /// most when the value still holds an older version of `src`, i.e. when the pool's
    /// reset keeps the contents (`|_| true`) instead of clearing them: a map then copies
    /// each unchanged entry into its own key's buffers, and an `rcu` that changes one key
    /// of a 100k-entry map allocates only for that key. After a clearing reset it takes
    /// every buffer from the free lists, which fits them less exactly (a string that lands in a
    /// shorter buffer grows it, so the first rounds allocate a little).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::{Container, Pool, Recycled};
    ///
    /// type Routes = Recycled<HashMap<String, Vec<String>>>;
    /// let pool = Pool::new(Routes::default, |r| { r.clear(); true });
    /// let mut first = pool.get();
    /// first.insert("/a".into(), vec!["10.0.0.1".into()]);
    /// let c = Container::new(&pool, first);
    ///
    /// c.rcu(|current, next| {
    ///     Recycled::copy_from(next, current);
    ///     next.insert("/b".into(), vec!["10.0.0.2".into()]);
    /// });
    /// assert_eq!(c.acquire().len(), 2);
    /// ```
    pub fn copy_from(this: &mut Recycled<T>, src: &T) {
        let (value, lists) = Recycled::parts_mut(this);
        value.copy_from_in(src, lists);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Map = HashMap<String, Vec<String>>;

    fn entry(i: u64, round: u64) -> (String, Vec<String>) {
        (
            format!("key-{i:04}"),
            vec![format!("a-{i}-{}", round % 3), format!("b-{i}")],
        )
    }

    /// The keys of `keys` whose bit is set, each with a value of `round`.
    fn map_of(keys: u64, round: u64) -> Map {
        (0..64)
            .filter(|i| keys >> i & 1 == 1)
            .map(|i| entry(i, round))
            .collect()
    }

    #[test]
    fn copies_across_any_change_of_key_set() {
        let mut lists = FreeLists::new();
        let mut dst = Map::new();
        // splitmix64-ish steps: random key sets (some empty, some full), so that rounds
        // remove only, insert only, do both, or neither.
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        // Under Miri, 8 rounds: every case of `round % 8` once (400 run natively).
        let rounds = if cfg!(miri) { 8 } else { 400 };
        for round in 0..rounds {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut keys = (x ^ (x >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            match round % 8 {
                0 => keys = 0,
                1 => keys = u64::MAX,
                2 => keys &= dst.len() as u64 | 0xff, // mostly a subset of a small map
                _ => {}
            }
            let src = map_of(keys, round);
            dst.copy_from_in(&src, &mut lists);
            assert_eq!(dst, src, "round {round}");
        }
    }

    #[test]
    fn the_address_table_is_kept_or_freed_as_asked() {
        let mut lists = FreeLists::new();
        let mut dst = map_of(0b0111, 0);
        copy_map(&mut dst, &map_of(0b1110, 1), &mut lists, Scratch::Free);
        assert_eq!(dst, map_of(0b1110, 1));
        assert_eq!(lists.spare_len::<Vec<usize>>(), 0);
        copy_map(&mut dst, &map_of(0b0111, 2), &mut lists, Scratch::Keep);
        assert_eq!(dst, map_of(0b0111, 2));
        assert_eq!(lists.spare_len::<Vec<usize>>(), 1);
    }

    #[test]
    fn a_changed_key_set_reuses_the_removed_entries() {
        let mut lists = FreeLists::new();
        let mut dst = Map::new();
        let mut fresh_after_warm_up = 0;
        // Each round the source loses its 2 lowest keys and gains 2 new ones above. Under
        // Miri, 7 rounds: still 4 past the warm-up.
        let rounds = if cfg!(miri) { 7 } else { 20 };
        for round in 0..rounds {
            let keys = 0x00ff_ffff_u64 << (round * 2);
            let src = map_of(keys, round);
            dst.copy_from_in(&src, &mut lists);
            assert_eq!(dst, src, "round {round}");
            if round == 2 {
                fresh_after_warm_up = lists.stats().fresh;
            }
        }
        assert_eq!(
            lists.stats().fresh,
            fresh_after_warm_up,
            "new entries took buffers the free lists did not have: {:?}",
            lists.stats()
        );
    }
}
