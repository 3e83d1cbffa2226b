//! [`Recycle`]: clearing a value into free lists, for std's types and, through
//! [`impl_recycle!`](crate::impl_recycle), for structs.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::mem;

use super::FreeLists;

/// A type whose values can be cleared into [`FreeLists`], giving their nested buffers to the
/// free lists instead of dropping them.
///
/// [`recycle_into`](Recycle::recycle_into) must leave `*self` equal in value to a fresh,
/// empty one (what `Default` would make) while it *keeps its own buffers* in place (a
/// `String` keeps its capacity) and *moves* the values it owns that an empty value cannot
/// keep (a `Vec`'s elements, an `Option`'s content) into the free lists with
/// [`FreeLists::recycle`]. [`retained_bytes`](Recycle::retained_bytes) says how much heap
/// memory a cleared value still holds: a value that holds none is not worth keeping and is
/// dropped.
///
/// Implemented for `String`, `Vec<T>`, `VecDeque<T>`, `HashMap<K, V, S>`, `HashSet<T, S>`,
/// `Option<T>`, `Box<T>`, tuples of up to six, arrays, `&'static str` and the scalars
/// (which recycling resets to zero). For a struct, [`impl_recycle!`](crate::impl_recycle)
/// recycles each field in place.
///
/// The supertraits come from the free lists: they are found by
/// [`TypeId`](std::any::TypeId) (`'static`), and they cross threads with the value they
/// serve, which its readers share (`Send + Sync`). Implementing it is safe: a wrong
/// implementation wastes or leaks buffers, never memory safety.
///
/// # Examples
///
/// A type with an enum and a list, implemented by hand:
///
/// ```
/// use poolswap::recycle::{FreeLists, Recycle};
///
/// #[derive(Default)]
/// enum Kind { #[default] Plain, Tagged(String) }
///
/// #[derive(Default)]
/// struct Entry { kind: Kind, tags: Vec<String> }
///
/// impl Recycle for Entry {
///     fn recycle_into(&mut self, lists: &mut FreeLists) {
///         if let Kind::Tagged(label) = std::mem::take(&mut self.kind) {
///             lists.recycle(label); // the label's buffer goes to the String free list
///         }
///         self.tags.recycle_into(lists); // the tags go too; `tags` keeps its own capacity
///     }
///     fn retained_bytes(&self) -> usize {
///         self.tags.retained_bytes()
///     }
/// }
///
/// let mut lists = FreeLists::new();
/// let mut e = Entry { kind: Kind::Tagged("x".repeat(100)), tags: vec!["a".into(), "b".into()] };
/// e.recycle_into(&mut lists);
/// assert!(e.tags.is_empty() && e.tags.capacity() >= 2);
/// assert_eq!(lists.spare_len::<String>(), 3);
/// ```
pub trait Recycle: Send + Sync + 'static {
    /// True when a value of this type owns no heap memory, directly or nested (scalars,
    /// `&'static str`, tuples of those): collections of such values are simply cleared,
    /// not recycled element by element. Leave it `false` for anything that owns memory.
    const PLAIN: bool = false;

    /// Empties `self` in place, keeping its own buffers, and moves the values it owns into
    /// `lists` (see the trait's contract).
    ///
    /// For std's collections: one [`FreeLists::recycle`] per element (none for plain
    /// elements, which are cleared); allocates only while a list grows.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::{FreeLists, Recycle};
    ///
    /// let mut lists = FreeLists::new();
    /// let mut names = vec![String::from("ada"), String::from("grace")];
    /// names.recycle_into(&mut lists);
    /// assert!(names.is_empty()); // the Vec keeps its capacity...
    /// assert_eq!(lists.spare_len::<String>(), 2); // ...and the Strings are spare
    /// ```
    fn recycle_into(&mut self, lists: &mut FreeLists);

    /// Bytes of heap memory a cleared value of this type still holds (its own buffers and
    /// those of values it keeps in place), approximately; 0 (the default) means nothing
    /// worth keeping, and [`FreeLists::recycle`] drops such a value.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::Recycle;
    ///
    /// assert_eq!(String::with_capacity(64).retained_bytes(), 64);
    /// assert_eq!(Vec::<u32>::with_capacity(8).retained_bytes(), 32);
    /// assert_eq!(7u64.retained_bytes(), 0);
    /// ```
    fn retained_bytes(&self) -> usize {
        0
    }

    /// Bytes of the value's own buffers that its content uses now (a `String`'s length, a
    /// `Vec`'s length × element size), counted the same way as
    /// [`retained_bytes`](Recycle::retained_bytes); [`FreeLists::recycle`] reads it just
    /// before it clears the value. Renewal compares the two: a spare value that holds more
    /// than 4 × what its last use needed + 256 bytes is *oversized* and is renewed once the
    /// reuse budget of its position is spent; one that holds more than 16 × its use + 1 KiB
    /// spends that budget faster, up to 64 reuses a take (see
    /// [bounding memory](crate::recycle#bounding-memory)).
    ///
    /// The default, 0, says nothing about the use: such a value counts as oversized when it
    /// retains more than 256 bytes, and is renewed once per budget. Override it to have
    /// buffers that fit their use kept.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::Recycle;
    ///
    /// let mut s = String::with_capacity(64);
    /// s.push_str("hello");
    /// assert_eq!((s.used_bytes(), s.retained_bytes()), (5, 64));
    /// assert_eq!(vec![1u32, 2].used_bytes(), 8);
    /// ```
    fn used_bytes(&self) -> usize {
        0
    }
}

/// Implements [`Recycle`] for a struct by recycling each listed
/// field in place; its retained and used bytes are the fields' sums.
///
/// List every field: one left out keeps its value when the struct is recycled, and a
/// struct taken from free lists would not come back cleared. The expansion names
/// `$crate::recycle::Recycle` and `$crate::recycle::FreeLists`, so the caller needs no
/// import.
///
/// # Examples
///
/// ```
/// use poolswap::recycle::FreeLists;
///
/// #[derive(Default)]
/// struct Peer { id: String, restarts: u32, tags: Vec<String> }
/// poolswap::impl_recycle!(Peer { id, restarts, tags });
///
/// let mut lists = FreeLists::new();
/// let peers = vec![Peer { id: "p1".into(), restarts: 3, tags: vec!["a".into()] }];
/// lists.recycle(peers); // the Vec, the Peer (with its `id` and `tags` buffers), the tag
///
/// let p: Peer = lists.take();
/// assert!(p.id.is_empty() && p.id.capacity() >= 2);
/// assert_eq!(p.restarts, 0);
/// assert!(p.tags.is_empty() && p.tags.capacity() >= 1);
/// assert_eq!(lists.spare_len::<String>(), 1); // the tag
/// ```
#[macro_export]
macro_rules! impl_recycle {
    ($ty:ty { $($field:ident),* $(,)? }) => {
        impl $crate::recycle::Recycle for $ty {
            fn recycle_into(&mut self, lists: &mut $crate::recycle::FreeLists) {
                $( $crate::recycle::Recycle::recycle_into(&mut self.$field, lists); )*
                let _ = lists;
            }
            fn retained_bytes(&self) -> usize {
                0 $( + $crate::recycle::Recycle::retained_bytes(&self.$field) )*
            }
            fn used_bytes(&self) -> usize {
                0 $( + $crate::recycle::Recycle::used_bytes(&self.$field) )*
            }
        }
    };
}

/// Calls the macro `$m` with the list of plain types: those whose values own no heap memory
/// ([`Recycle::PLAIN`]), for their `Recycle` impls here and their `RecycleCopy` impls in
/// `copy.rs`, from one list.
macro_rules! with_plain_types {
    ($m:ident) => {
        $m!(
            (),
            bool,
            char,
            u8,
            u16,
            u32,
            u64,
            u128,
            usize,
            i8,
            i16,
            i32,
            i64,
            i128,
            isize,
            f32,
            f64,
            &'static str
        );
    };
}
pub(super) use with_plain_types;

macro_rules! plain {
    ($($t:ty),*) => {$(
        /// Plain data: recycling resets it to its default (zero, `false`, `""`).
        impl Recycle for $t {
            const PLAIN: bool = true;
            #[inline]
            fn recycle_into(&mut self, _: &mut FreeLists) {
                *self = <$t>::default();
            }
        }
    )*};
}

with_plain_types!(plain);

/// Clears in place, keeping its capacity; it owns nothing else.
impl Recycle for String {
    #[inline]
    fn recycle_into(&mut self, _: &mut FreeLists) {
        self.clear();
    }
    fn retained_bytes(&self) -> usize {
        self.capacity()
    }
    fn used_bytes(&self) -> usize {
        self.len()
    }
}

/// Keeps its buffer; its elements are [recycled](FreeLists::recycle) one by one (or simply
/// cleared when they are [plain](Recycle::PLAIN)).
impl<T: Recycle> Recycle for Vec<T> {
    #[inline]
    fn recycle_into(&mut self, lists: &mut FreeLists) {
        if T::PLAIN {
            self.clear();
        } else {
            for v in self.drain(..) {
                lists.recycle(v);
            }
        }
    }
    fn retained_bytes(&self) -> usize {
        self.capacity() * mem::size_of::<T>()
    }
    fn used_bytes(&self) -> usize {
        self.len() * mem::size_of::<T>()
    }
}

/// Like `Vec<T>`.
impl<T: Recycle> Recycle for VecDeque<T> {
    fn recycle_into(&mut self, lists: &mut FreeLists) {
        if T::PLAIN {
            self.clear();
        } else {
            for v in self.drain(..) {
                lists.recycle(v);
            }
        }
    }
    fn retained_bytes(&self) -> usize {
        self.capacity() * mem::size_of::<T>()
    }
    fn used_bytes(&self) -> usize {
        self.len() * mem::size_of::<T>()
    }
}

/// Keeps its table; keys and values are [recycled](FreeLists::recycle). Retained bytes are
/// approximate: capacity × (size of a key-value pair + 1 control byte).
impl<K, V, S> Recycle for HashMap<K, V, S>
where
    K: Recycle + Eq + Hash,
    V: Recycle,
    S: BuildHasher + Send + Sync + 'static,
{
    fn recycle_into(&mut self, lists: &mut FreeLists) {
        if K::PLAIN && V::PLAIN {
            self.clear();
        } else {
            for (k, v) in self.drain() {
                lists.recycle(k);
                lists.recycle(v);
            }
        }
    }
    fn retained_bytes(&self) -> usize {
        self.capacity() * (mem::size_of::<(K, V)>() + 1)
    }
    fn used_bytes(&self) -> usize {
        self.len() * (mem::size_of::<(K, V)>() + 1)
    }
}

/// Keeps its table; its elements are [recycled](FreeLists::recycle). Retained bytes as for
/// `HashMap`.
impl<T, S> Recycle for HashSet<T, S>
where
    T: Recycle + Eq + Hash,
    S: BuildHasher + Send + Sync + 'static,
{
    fn recycle_into(&mut self, lists: &mut FreeLists) {
        if T::PLAIN {
            self.clear();
        } else {
            for v in self.drain() {
                lists.recycle(v);
            }
        }
    }
    fn retained_bytes(&self) -> usize {
        self.capacity() * (mem::size_of::<T>() + 1)
    }
    fn used_bytes(&self) -> usize {
        self.len() * (mem::size_of::<T>() + 1)
    }
}

/// Becomes `None`; the content is [recycled](FreeLists::recycle) into its own free list.
impl<T: Recycle> Recycle for Option<T> {
    const PLAIN: bool = T::PLAIN;
    fn recycle_into(&mut self, lists: &mut FreeLists) {
        if let Some(v) = self.take() {
            lists.recycle(v);
        }
    }
}

/// Keeps its allocation; the boxed value is recycled in place.
impl<T: Recycle> Recycle for Box<T> {
    fn recycle_into(&mut self, lists: &mut FreeLists) {
        (**self).recycle_into(lists);
    }
    fn retained_bytes(&self) -> usize {
        mem::size_of::<T>() + (**self).retained_bytes()
    }
    fn used_bytes(&self) -> usize {
        mem::size_of::<T>() + (**self).used_bytes()
    }
}

/// Each element recycled in place.
impl<T: Recycle, const N: usize> Recycle for [T; N] {
    const PLAIN: bool = T::PLAIN;
    fn recycle_into(&mut self, lists: &mut FreeLists) {
        for v in self {
            v.recycle_into(lists);
        }
    }
    fn retained_bytes(&self) -> usize {
        self.iter().map(T::retained_bytes).sum()
    }
    fn used_bytes(&self) -> usize {
        self.iter().map(T::used_bytes).sum()
    }
}

macro_rules! tuple {
    ($($name:ident . $i:tt),+) => {
        /// Each element recycled in place.
        impl<$($name: Recycle),+> Recycle for ($($name,)+) {
            const PLAIN: bool = $($name::PLAIN)&&+;
            fn recycle_into(&mut self, lists: &mut FreeLists) {
                $( self.$i.recycle_into(lists); )+
            }
            fn retained_bytes(&self) -> usize {
                0 $( + self.$i.retained_bytes() )+
            }
            fn used_bytes(&self) -> usize {
                0 $( + self.$i.used_bytes() )+
            }
        }
    };
}

tuple!(A.0);
tuple!(A.0, B.1);
tuple!(A.0, B.1, C.2);
tuple!(A.0, B.1, C.2, D.3);
tuple!(A.0, B.1, C.2, D.3, E.4);
tuple!(A.0, B.1, C.2, D.3, E.4, F.5);
