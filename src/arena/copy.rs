//! [`RecycleCopy`]: making a value equal to another from an arena's spare values, and
//! [`Recycled::copy_from`], the recycling copy for `rcu`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::mem;

use super::recycle::with_plain_types;
use super::{Arena, Recycle, Recycled};

/// A recycling copy: makes a value equal to another, taking the nested values it needs
/// (strings, inner vectors, map entries) from an arena's free lists instead of allocating.
///
/// What [`Container::rcu`](crate::Container::rcu) wants: the writer's recycled object
/// becomes a copy of the current version, then changes a little. With a `Recycled<T>`,
/// [`Recycled::copy_from`] does it; changing one key of a 100k-entry
/// `HashMap<String, Vec<String>>` then allocates only for what changed, once the arena
/// holds the previous version's buffers.
///
/// Implemented for the types [`Recycle`] is implemented for, except arrays; for a struct,
/// call `copy_from_in` field by field.
///
/// # Examples
///
/// ```
/// use poolswap::arena::{Arena, RecycleCopy};
///
/// let mut arena = Arena::new();
/// arena.recycle(String::with_capacity(32));
/// let src = vec![String::from("a recycled buffer")];
/// let mut dst: Vec<String> = Vec::new();
/// dst.copy_from_in(&src, &mut arena);
/// assert_eq!(dst, src);
/// assert_eq!(dst[0].capacity(), 32); // the spare String, not a new one
/// ```
pub trait RecycleCopy: Recycle {
    /// Makes `self` equal to `src`. What `self` held first is recycled into `arena`; the
    /// values it needs come from `arena` (or are made, when its free lists are empty).
    fn copy_from_in(&mut self, src: &Self, arena: &mut Arena);

    /// Bytes a cleared value needs to retain to become a copy of `self` without growing
    /// its own buffer (a `String`: its length); 0 (the default) if that does not apply.
    fn copy_bytes(&self) -> usize {
        0
    }
}

macro_rules! plain_copy {
    ($($t:ty),*) => {$(
        /// Plain data: copied.
        impl RecycleCopy for $t {
            #[inline]
            fn copy_from_in(&mut self, src: &Self, _: &mut Arena) {
                *self = *src;
            }
        }
    )*};
}

with_plain_types!(plain_copy);

/// A new value equal to `src`, built from `arena`'s spare values: one big enough for it,
/// if one of the last few recycled is (so that buffers of mixed sizes do not keep growing
/// each other: [`Arena::take_fitting`]).
fn copied<T: RecycleCopy + Default>(src: &T, arena: &mut Arena) -> T {
    let mut out: T = if T::PLAIN {
        T::default()
    } else {
        arena.take_fitting(src.copy_bytes())
    };
    out.copy_from_in(src, arena);
    out
}

/// Copies into its own buffer, which grows only if `src` is longer than its capacity, and
/// then to the next power of two at or above `src.len()` (at most twice its bytes).
impl RecycleCopy for String {
    fn copy_from_in(&mut self, src: &Self, _: &mut Arena) {
        self.clear();
        if self.capacity() < src.len() {
            // It must grow: to the size class, as `Arena::string_from` does, so that it
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
    fn copy_from_in(&mut self, src: &Self, arena: &mut Arena) {
        if self.len() > src.len() {
            for v in self.drain(src.len()..) {
                arena.recycle(v);
            }
        }
        for (dst, v) in self.iter_mut().zip(src) {
            dst.copy_from_in(v, arena);
        }
        let have = self.len();
        self.reserve(src.len() - have);
        for v in &src[have..] {
            self.push(copied(v, arena));
        }
    }
    fn copy_bytes(&self) -> usize {
        self.len() * mem::size_of::<T>()
    }
}

/// Like `Vec<T>`.
impl<T: RecycleCopy + Default> RecycleCopy for VecDeque<T> {
    fn copy_from_in(&mut self, src: &Self, arena: &mut Arena) {
        self.recycle_into(arena);
        self.reserve(src.len());
        for v in src {
            self.push_back(copied(v, arena));
        }
    }
}

/// Keeps its table. An entry whose key `src` also has keeps its key and has its value
/// copied into in place (so, when `self` holds an older version of `src`, unchanged
/// entries reuse their own buffers exactly); entries `src` lacks are dropped; the others
/// are inserted as recycling copies.
impl<K, V, S> RecycleCopy for HashMap<K, V, S>
where
    K: RecycleCopy + Default + Eq + Hash,
    V: RecycleCopy + Default,
    S: BuildHasher + Send + Sync + 'static,
{
    fn copy_from_in(&mut self, src: &Self, arena: &mut Arena) {
        for (k, v) in src {
            match self.get_mut(k) {
                Some(dst) => dst.copy_from_in(v, arena),
                None => {
                    let k = copied(k, arena);
                    let v = copied(v, arena);
                    self.insert(k, v);
                }
            }
        }
        // Every key of `src` is in `self` now; if the lengths agree, no other key is.
        if self.len() != src.len() {
            // Dropped, not recycled: `retain` cannot hand the entries out (std's
            // `extract_if` needs Rust 1.88); freeing allocates nothing.
            self.retain(|k, _| src.contains_key(k));
        }
    }
}

/// Keeps its table; elements are recycling copies.
impl<T, S> RecycleCopy for HashSet<T, S>
where
    T: RecycleCopy + Default + Eq + Hash,
    S: BuildHasher + Send + Sync + 'static,
{
    fn copy_from_in(&mut self, src: &Self, arena: &mut Arena) {
        self.recycle_into(arena);
        self.reserve(src.len());
        for v in src {
            self.insert(copied(v, arena));
        }
    }
}

/// The content is a recycling copy (in place when both are `Some`).
impl<T: RecycleCopy + Default> RecycleCopy for Option<T> {
    fn copy_from_in(&mut self, src: &Self, arena: &mut Arena) {
        match (self.as_mut(), src) {
            (Some(dst), Some(src)) => dst.copy_from_in(src, arena),
            (None, Some(src)) => *self = Some(copied(src, arena)),
            (_, None) => self.recycle_into(arena),
        }
    }
}

/// Copies in place, keeping its allocation.
impl<T: RecycleCopy> RecycleCopy for Box<T> {
    fn copy_from_in(&mut self, src: &Self, arena: &mut Arena) {
        (**self).copy_from_in(src, arena);
    }
}

macro_rules! tuple_copy {
    ($($name:ident . $i:tt),+) => {
        /// Each element a recycling copy, in place.
        impl<$($name: RecycleCopy),+> RecycleCopy for ($($name,)+) {
            fn copy_from_in(&mut self, src: &Self, arena: &mut Arena) {
                $( self.$i.copy_from_in(&src.$i, arena); )+
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
    /// from its arena. The recycling copy for [`Container::rcu`](crate::Container::rcu).
    ///
    /// Allocates only for what its own contents and its arena cannot supply. It reuses
    /// most when the value still holds an older version of `src`, i.e. when the pool's
    /// reset keeps the contents (`|_| true`) instead of clearing them: a map then copies
    /// each unchanged entry into its own key's buffers, and an `rcu` that changes one key
    /// of a 100k-entry map allocates only for that key. After a clearing reset it takes
    /// every buffer from the arena, which fits them less exactly (a string that lands in a
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
        let (value, arena) = Recycled::parts_mut(this);
        value.copy_from_in(src, arena);
    }
}
