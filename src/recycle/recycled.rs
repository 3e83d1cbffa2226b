//! [`Recycled<T>`]: a value plus its own arena, made to be a pooled container version.

use std::fmt;
use std::ops::{Deref, DerefMut};

use super::{FreeLists, Recycle};

/// A value plus its own [`FreeLists`]: a pooled [`Container`](crate::Container) version whose
/// reset keeps the nested buffers.
///
/// [`clear`](Recycled::clear) moves the value's nested buffers into the arena (and ends the
/// arena's cycle, see [`FreeLists::renew_idle`]); the refill takes them back through
/// [`Recycled::parts_mut`]. Readers see the value through `Deref`.
///
/// `clear` is a method, on purpose: it shadows the value's own `clear` (a `HashMap`'s
/// would drop the nested buffers), so a pool reset `|r| { r.clear(); true }` recycles.
/// The other helpers are associated functions (`Recycled::parts_mut(&mut r)`), so they
/// shadow nothing of `T`'s.
///
/// # Examples
///
/// ```
/// use std::collections::HashMap;
/// use poolswap::{Pool, Recycled};
///
/// let pool = Pool::new(Recycled::<HashMap<String, Vec<String>>>::default, |r| {
///     r.clear();
///     true
/// });
/// for round in 0..3 {
///     let mut v = pool.get(); // cleared by the reset, its buffers in its arena
///     let (map, arena) = Recycled::parts_mut(&mut v);
///     let mut list: Vec<String> = arena.take();
///     list.push(arena.string_from("backend"));
///     map.insert(arena.string_from("route"), list);
///     assert_eq!(Recycled::free_lists(&v).stats().reused, 3 * round); // key, list, backend
/// }
/// ```
///
/// Renewal applies to the spare values in the arena, not to the value itself (a map's
/// table): the pool decides about that one, through its reset's return value.
///
/// ```
/// use std::collections::HashMap;
/// use poolswap::{Pool, Recycled};
///
/// let pool = Pool::new(Recycled::<HashMap<u32, String>>::default, |r| {
///     r.clear();
///     r.capacity() < 1 << 16 // drop a version whose table grew too large
/// });
/// # drop(pool.get());
/// ```
///
/// # Costs
///
/// `clear` costs [`Recycle::recycle_into`] on the value plus [`FreeLists::renew_idle`]; at
/// steady state it allocates nothing. `Deref` is free.
///
/// # Send and Sync
///
/// `Send` and `Sync` exactly when `T` is: the arena is both.
#[derive(Default)]
pub struct Recycled<T> {
    value: T,
    arena: FreeLists,
}

impl<T> Recycled<T> {
    /// Wraps `value` with a new, empty [`FreeLists`] (see [`FreeLists::new`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = poolswap::Recycled::new(vec![1u8, 2]);
    /// assert_eq!(*r, [1, 2]);
    /// ```
    pub fn new(value: T) -> Recycled<T> {
        Recycled::with_free_lists(value, FreeLists::new())
    }

    /// Wraps `value` with `arena`, configured as you like.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{recycle::FreeLists, Recycled};
    ///
    /// let r = Recycled::with_free_lists(Vec::<String>::new(), FreeLists::new().never_renew());
    /// assert!(r.is_empty());
    /// ```
    pub fn with_free_lists(value: T, arena: FreeLists) -> Recycled<T> {
        Recycled { value, arena }
    }

    /// The value and its arena, both mutable at once: fill the value with buffers taken
    /// from the arena.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Recycled;
    ///
    /// let mut r = Recycled::new(Vec::<String>::new());
    /// let (list, arena) = Recycled::parts_mut(&mut r);
    /// list.push(arena.string_from("x"));
    /// assert_eq!(r[0], "x");
    /// ```
    pub fn parts_mut(this: &mut Recycled<T>) -> (&mut T, &mut FreeLists) {
        (&mut this.value, &mut this.arena)
    }

    /// The arena, to read its [`stats`](FreeLists::stats).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Recycled;
    ///
    /// let mut r = Recycled::new(vec![String::from("x")]);
    /// r.clear();
    /// assert_eq!(Recycled::free_lists(&r).spare_len::<String>(), 1);
    /// ```
    pub fn free_lists(this: &Recycled<T>) -> &FreeLists {
        &this.arena
    }

    /// The arena, mutable: to [`trim`](FreeLists::trim) it or take from it.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Recycled;
    ///
    /// let mut r = Recycled::new(vec![String::from("x")]);
    /// r.clear();
    /// Recycled::free_lists_mut(&mut r).trim();
    /// assert_eq!(Recycled::free_lists(&r).stats().spare, 0);
    /// ```
    pub fn free_lists_mut(this: &mut Recycled<T>) -> &mut FreeLists {
        &mut this.arena
    }

    /// Unwraps the value; the arena and its spare buffers are dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = poolswap::Recycled::new(String::from("x"));
    /// assert_eq!(poolswap::Recycled::into_inner(r), "x");
    /// ```
    pub fn into_inner(this: Recycled<T>) -> T {
        this.value
    }
}

impl<T: Recycle> Recycled<T> {
    /// Clears the value into its arena: the value keeps its own buffers (a map its table),
    /// and what it owns goes to the arena's free lists for the next refill. First it ends
    /// the arena's cycle ([`FreeLists::renew_idle`]): spare values that no refill took for
    /// [`release_idle_after`](FreeLists::release_idle_after) cycles are released.
    ///
    /// Allocates only while a free list grows: at steady state, never.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::Recycled;
    ///
    /// let mut r = Recycled::new(HashMap::from([(String::from("k"), vec![String::from("v")])]));
    /// r.clear();
    /// assert!(r.is_empty());
    /// let arena = Recycled::free_lists(&r);
    /// assert_eq!((arena.spare_len::<String>(), arena.spare_len::<Vec<String>>()), (2, 1));
    /// ```
    pub fn clear(&mut self) {
        self.arena.renew_idle();
        self.value.recycle_into(&mut self.arena);
    }
}

impl<T> Deref for Recycled<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Recycled<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> From<T> for Recycled<T> {
    /// Same as [`Recycled::new`].
    fn from(value: T) -> Recycled<T> {
        Recycled::new(value)
    }
}

impl<T: fmt::Debug> fmt::Debug for Recycled<T> {
    /// Prints the value and the arena's spare counts.
    ///
    /// ```
    /// let r = poolswap::Recycled::new(1u8);
    /// assert!(format!("{r:?}").starts_with("Recycled { value: 1, arena: FreeLists {"));
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recycled")
            .field("value", &self.value)
            .field("arena", &self.arena)
            .finish()
    }
}
