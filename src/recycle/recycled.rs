//! [`Recycled<T>`]: a value plus its own free lists, made to be a pooled container version;
//! and the `Default` pool and container of them (the pool and the container know nothing
//! of `Recycled`).

use std::fmt;
use std::ops::{Deref, DerefMut};

use super::{FreeLists, Recycle};
use crate::{Container, ContainerAny, NonEmpty, Pool};

/// A value plus its own [`FreeLists`]: a pooled [`Container`] version whose
/// reset keeps the nested buffers.
///
/// [`clear`](Recycled::clear) moves the value's nested buffers into its free lists and ends
/// their cycle (see [`FreeLists::release_idle_after`]); the refill takes the buffers back
/// through [`Recycled::parts_mut`]. Readers see the value through `Deref`.
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
///     let mut v = pool.get(); // cleared by the reset, its buffers in its free lists
///     let (map, lists) = Recycled::parts_mut(&mut v);
///     let mut list: Vec<String> = lists.take();
///     list.push(lists.string_from("backend"));
///     map.insert(lists.string_from("route"), list);
///     assert_eq!(Recycled::free_lists(&v).stats().reused, 3 * round); // key, list, backend
/// }
/// ```
///
/// Renewal applies to the spare values in the free lists, not to the value itself (a map's
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
/// `clear` costs [`Recycle::recycle_into`] on the value plus one step per spare value (the
/// idle check); at steady state it allocates nothing. `Deref` is free.
///
/// # Send and Sync
///
/// `Send` and `Sync` exactly when `T` is: [`FreeLists`] is both.
#[derive(Default)]
pub struct Recycled<T> {
    /// What readers see.
    value: T,
    /// The spare buffers the next refill takes.
    lists: FreeLists,
}

impl<T> Recycled<T> {
    /// Wraps `value` with new, empty free lists (see [`FreeLists::new`]). Allocates nothing.
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

    /// Wraps `value` with `lists`, configured as you like.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{recycle::FreeLists, Recycled};
    ///
    /// let lists = FreeLists::new().renew_after(None).max_spare_bytes(1 << 20);
    /// let r = Recycled::with_free_lists(Vec::<String>::new(), lists);
    /// assert!(r.is_empty());
    /// ```
    pub fn with_free_lists(value: T, lists: FreeLists) -> Recycled<T> {
        Recycled { value, lists }
    }

    /// The value and its free lists, both mutable at once: fill the value with buffers
    /// taken from the lists. Also the way to [`trim`](FreeLists::trim) the lists.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Recycled;
    ///
    /// let mut r = Recycled::new(Vec::<String>::new());
    /// let (list, lists) = Recycled::parts_mut(&mut r);
    /// list.push(lists.string_from("x"));
    /// assert_eq!(r[0], "x");
    /// r.clear();
    /// Recycled::parts_mut(&mut r).1.trim(); // free the spare "x" buffer now
    /// assert_eq!(Recycled::free_lists(&r).stats().spare, 0);
    /// ```
    pub fn parts_mut(this: &mut Recycled<T>) -> (&mut T, &mut FreeLists) {
        (&mut this.value, &mut this.lists)
    }

    /// The free lists, to read their [`stats`](FreeLists::stats).
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
        &this.lists
    }
}

impl<T: Recycle> Recycled<T> {
    /// Clears the value into its free lists: the value keeps its own buffers (a map its
    /// table), and what it owns goes to the lists for the next refill. First it ends a
    /// cycle: spare values that no refill took for
    /// [`release_idle_after`](FreeLists::release_idle_after) cycles are released.
    ///
    /// Costs [`Recycle::recycle_into`] plus one step per spare value; allocates only while
    /// a list grows (see [`FreeLists::recycle`]): at steady state, never.
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
    /// let lists = Recycled::free_lists(&r);
    /// assert_eq!((lists.spare_len::<String>(), lists.spare_len::<Vec<String>>()), (2, 1));
    /// ```
    pub fn clear(&mut self) {
        self.lists.end_cycle();
        self.value.recycle_into(&mut self.lists);
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
    /// Prints the value and the spare counts of its free lists.
    ///
    /// ```
    /// let r = poolswap::Recycled::new(1u8);
    /// assert!(format!("{r:?}").starts_with("Recycled { value: 1, free_lists: FreeLists {"));
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recycled")
            .field("value", &self.value)
            .field("free_lists", &self.lists)
            .finish()
    }
}

/// A pool of `Recycled<T>` whose reset is [`Recycled::clear`] (the contents go to each
/// object's free lists), with the default bounds: what a pool of `Recycled` values almost
/// always is. Other types have no `Default` pool: only their user knows how to reset them.
///
/// # Examples
///
/// ```
/// use std::collections::HashMap;
/// use poolswap::{Pool, Recycled};
///
/// let pool: Pool<Recycled<HashMap<String, String>>> = Pool::default();
/// let mut map = pool.get();
/// map.insert("k".into(), "v".into());
/// drop(map);
/// assert!(pool.get().is_empty()); // reset on the way out
/// ```
impl<T: Recycle + Default> Default for Pool<Recycled<T>> {
    fn default() -> Self {
        Pool::new(Recycled::default, Recycled::clear)
    }
}

/// A container holding an empty `Recycled<T>`, on a [default pool](Pool::default).
///
/// # Examples
///
/// ```
/// use poolswap::{Container, Recycled};
///
/// let c: Container<Recycled<Vec<String>>> = Container::default();
/// let mut next = c.get_new();
/// next.push("a".into());
/// c.update(next);
/// assert_eq!(c.acquire().len(), 1);
/// ```
// Written on `ContainerAny`, not the `Container` alias: rustdoc's JSON output (and so
// scripts/public-api.sh) drops an impl written on an alias.
impl<T: Recycle + Default> Default for ContainerAny<Recycled<T>, NonEmpty> {
    fn default() -> Self {
        Container::from_value(&Pool::default(), Recycled::default())
    }
}
