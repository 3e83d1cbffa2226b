//! Typed reuse of owned buffers: Go's [protopool] in Rust, with std's own collections.
//!
//! A pool reset that calls `clear()` keeps a collection's own buffer but drops everything
//! inside it: rebuilding a `HashMap<String, Vec<String>>` of 1,000 keys × 3 values costs
//! 5,000 allocations per update (every `String` and every `Vec`), even though the map's
//! table is reused. This module keeps those nested buffers too.
//!
//! - An [`Arena`] holds *free lists*, one per type: spare `String`s, spare
//!   `Vec<String>`s, spare `HashMap`s, spare values of your own types, each cleared but
//!   with its capacity.
//! - [`Recycle`] is the trait a type implements to be cleared *into* an arena: it empties
//!   itself and moves what it owns (the elements of a collection, the content of an
//!   `Option`) into the arena's free lists instead of dropping them. It is implemented for
//!   `String`, `Vec`, `VecDeque`, `HashMap`, `HashSet`, `Option`, `Box`, tuples, arrays and
//!   the scalars; [`impl_recycle!`](crate::impl_recycle) writes it for a struct.
//! - [`Arena::take`] hands a spare value back out, cleared, with its capacity;
//!   [`Arena::recycle`] puts one value in.
//! - [`Recycled<T>`] is a value plus its own arena, made to be a pooled
//!   [`Container`](crate::Container) version: its [`clear`](Recycled::clear) (the pool's
//!   reset) moves the value's nested buffers into the arena, and the writer's refill takes
//!   them out again.
//!
//! [protopool]: https://github.com/jussi-kalliokoski/protopool
//!
//! # Example
//!
//! A routing table rebuilt from text on every update allocates nothing once the arena holds
//! enough buffers of enough capacity:
//!
//! ```
//! use std::collections::HashMap;
//! use poolswap::{Container, Pool, Recycled};
//!
//! type Routes = Recycled<HashMap<String, Vec<String>>>;
//!
//! /// Parses `key=backend,backend,...` lines, taking every buffer from the arena.
//! fn refill(routes: &mut Routes, text: &str) {
//!     let (map, arena) = Recycled::parts_mut(routes);
//!     for line in text.lines() {
//!         let (key, backends) = line.split_once('=').unwrap();
//!         let mut list: Vec<String> = arena.take(); // cleared, with its capacity
//!         list.extend(backends.split(',').map(|b| arena.string_from(b)));
//!         map.insert(arena.string_from(key), list);
//!     }
//! }
//!
//! let pool = Pool::new(Routes::default, |r| { r.clear(); true });
//! let routes = Container::from_value(&pool, Routes::default());
//! for version in 0..10 {
//!     let mut next = routes.get_new(); // cleared into its arena by the pool's reset
//!     refill(&mut next, &format!("/api=a{version},b,c\n/web=d,e,f"));
//!     routes.update(next);
//! }
//! let table = routes.acquire();
//! assert_eq!(table["/api"], ["a9", "b", "c"]);
//!
//! // The next version comes cleared: its 2 keys, 2 lists and 6 backends wait in its arena.
//! let next = routes.get_new();
//! assert!(next.is_empty());
//! let spare = Recycled::arena(&*next);
//! assert_eq!((spare.spare_len::<String>(), spare.spare_len::<Vec<String>>()), (8, 2));
//! ```
//!
//! # Ownership instead of discipline
//!
//! protopool's `Value.Reset` rewinds its stores: every object handed out before the reset
//! is handed out again after it, and code that still holds an old pointer reads or writes
//! someone else's data. Here a value goes back to an arena only by being *moved* into it
//! ([`Arena::recycle`], or a [`Recycle::recycle_into`] that moves a collection's elements
//! out), so nothing handed out before can be used afterwards: the compiler rejects it.
//! [`Recycled::clear`] takes `&mut self`, so no reader holds a reference into the value
//! while it is cleared; in a [`Container`](crate::Container), a version is reset only after
//! its last guard is dropped. The module holds no `unsafe` code (`#![forbid(unsafe_code)]`).
//!
//! A value recycled cannot be used again:
//!
//! ```compile_fail
//! let mut arena = poolswap::Arena::new();
//! let name = String::from("route");
//! arena.recycle(name);
//! assert_eq!(name, "route"); // error: `name` was moved into the arena
//! ```
//!
//! Nor can a reference into a value outlive its clear:
//!
//! ```compile_fail
//! let mut routes = poolswap::Recycled::new(vec![String::from("a")]);
//! let first = &routes[0];
//! routes.clear(); // error: `routes` is borrowed by `first`
//! assert_eq!(first, "a");
//! ```
//!
//! What compiles is taking it again, cleared:
//!
//! ```
//! let mut routes = poolswap::Recycled::new(vec![String::from("a")]);
//! assert_eq!(routes[0], "a");
//! routes.clear();
//! let (list, arena) = poolswap::Recycled::parts_mut(&mut routes);
//! let again: String = arena.take(); // the buffer that held "a", now empty
//! assert!(again.is_empty() && again.capacity() >= 1);
//! list.push(again);
//! ```
//!
//! # What allocates
//!
//! - [`Arena::take`]: never. It pops a spare value, or returns `T::default()` (which
//!   allocates nothing for std's collections) when the free list is empty or the spare
//!   value is retired.
//! - [`Arena::recycle`] and [`Recycle::recycle_into`]: only while a free list grows (the
//!   first value of a type allocates its list; a list longer than ever before may grow its
//!   `Vec`). At steady state, never.
//! - Filling a taken buffer allocates only if it needs more capacity than the buffer has:
//!   buffers wander between uses (a `String` that held a short key may be handed out for a
//!   long value), so each grows until it fits the longest use it meets, then stops.
//! - Retirement (below) frees a buffer now and then, and the value that replaces it
//!   allocates when it is filled: in the long run, about *(spare buffers used per cycle) /
//!   (mean reuse budget)* retirements per cycle, each costing one allocation or a few. For
//!   a 1,000 × 3 `HashMap<String, Vec<String>>` (5,000 buffers) and the default budget
//!   that is ~0.9 retirements per update; `tests/arena.rs` measures about 1.1 allocations
//!   per retirement. No slot retires before it has served 5,000 reuses.
//!   [`Arena::never_retire`] turns it off.
//!
//! No lock and no atomic operation anywhere: an arena is used through `&mut`.
//!
//! # Retirement: the memory safeguard
//!
//! Reuse ratchets memory up: a buffer keeps the capacity of the largest thing it ever
//! held. protopool's README warns of this and retires each pooled value after a random
//! 5,000 to 6,000 uses, so that values retire at different times. Here every slot of a
//! free list carries a *reuse budget*, drawn uniformly from [`DEFAULT_REUSES`] (or the
//! range given to [`Arena::retire_after`]) by a per-arena splitmix64 generator (Steele,
//! Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014). Each
//! [`take`](Arena::take) from a slot spends one reuse; a take from a slot with no budget
//! left drops the buffer there (frees it), draws a new budget, and returns a fresh
//! `T::default()`. Budgets belong to slots, not to buffers, because std's types carry no
//! counter: a buffer's expected life is one budget, but one buffer may outlive it when it
//! wanders between slots.
//!
//! Spare buffers no take reached during a whole cycle (between two calls of
//! [`Arena::retire_idle`], which [`Recycled::clear`] calls) spend one reuse too, so a burst
//! that filled the free lists once drains away in about one budget of cycles.
//!
//! For a hard bound, [`Arena::max_retained_bytes`] drops on the spot any value that would
//! keep more than that many bytes, and [`Arena::trim`] frees every spare buffer now.
//!
//! # Against bumpalo and protopool
//!
//! A bump arena (bumpalo) allocates fast and frees everything at once on `reset`, but its
//! collections are its own types, borrowing the arena: they cannot outlive it or be
//! published as a container version that readers hold while the next one is built. This
//! module keeps std's types and hands buffers from one build to the next.
//!
//! protopool's own benchmark (in Go, on the author's Intel i9-9980HK) built one large
//! nested message in 21,112 allocations per op without its pool and 6 with it; the
//! `arena` bench (`cargo bench --bench arena`) ports it, and the README has the figures
//! measured here.
//!
//! # Send and Sync
//!
//! [`Recycle`] requires `Send + Sync + 'static`: the free lists are kept by [`TypeId`],
//! and an arena travels with its [`Recycled`] value between the writer's thread and the
//! pool, while readers share the value. So [`Arena`] is `Send + Sync`, its `&self` methods
//! only read counts, and [`Recycled<T>`] is `Send` and `Sync` exactly when `T` is:
//!
//! ```
//! fn is_send_sync<T: Send + Sync>() {}
//! is_send_sync::<poolswap::arena::Arena>();
//! is_send_sync::<poolswap::Recycled<Vec<String>>>();
//! ```
//! ```compile_fail
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::Recycled<std::cell::Cell<u8>>>();
//! ```
//! A type that may not cross threads cannot implement [`Recycle`], so it never enters a
//! free list:
//!
//! ```compile_fail
//! struct Local(std::rc::Rc<u8>);
//! impl poolswap::Recycle for Local {
//!     fn recycle_into(&mut self, _: &mut poolswap::Arena) {}
//!     fn retained_bytes(&self) -> usize { usize::from(*self.0) }
//! }
//! poolswap::Arena::new().recycle(Local(std::rc::Rc::new(1)));
//! ```
//! ```
//! struct Shared(std::sync::Arc<u8>);
//! impl poolswap::Recycle for Shared {
//!     fn recycle_into(&mut self, _: &mut poolswap::Arena) {}
//!     fn retained_bytes(&self) -> usize { usize::from(*self.0) }
//! }
//! poolswap::Arena::new().recycle(Shared(std::sync::Arc::new(1)));
//! ```
#![forbid(unsafe_code)]

use std::any::{Any, TypeId};
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::mem;
use std::ops::{Deref, DerefMut, RangeInclusive};

/// The default reuse budget of a free-list slot, in takes: protopool's README staggers
/// retirement over 5,000 to 6,000 uses. See [`Arena::retire_after`].
pub const DEFAULT_REUSES: RangeInclusive<u32> = 5_000..=6_000;

/// A type whose values can be cleared into an [`Arena`], giving their nested buffers to the
/// arena's free lists instead of dropping them.
///
/// [`recycle_into`](Recycle::recycle_into) must leave `*self` equal in value to a fresh,
/// empty one (what `Default` would make) while it *keeps its own buffers* in place (a
/// `String` keeps its capacity) and *moves* the values it owns that an empty value cannot
/// keep (a `Vec`'s elements, an `Option`'s content) into the arena with
/// [`Arena::recycle`]. [`retained_bytes`](Recycle::retained_bytes) says how much heap
/// memory a cleared value still holds: a value that holds none is not worth a free-list
/// slot and is dropped.
///
/// Implemented for `String`, `Vec<T>`, `VecDeque<T>`, `HashMap<K, V, S>`, `HashSet<T, S>`,
/// `Option<T>`, `Box<T>`, tuples of up to six, arrays, `&'static str` and the scalars
/// (which recycling resets to zero). For a struct, [`impl_recycle!`](crate::impl_recycle)
/// recycles each field in place.
///
/// The supertraits come from the free lists: they are found by [`TypeId`] (`'static`), and
/// an arena crosses threads with the value it serves and is shared by its readers
/// (`Send + Sync`).
///
/// # Examples
///
/// A type with an enum and a list, implemented by hand:
///
/// ```
/// use poolswap::arena::{Arena, Recycle};
///
/// #[derive(Default)]
/// enum Kind { #[default] Plain, Tagged(String) }
///
/// #[derive(Default)]
/// struct Entry { kind: Kind, tags: Vec<String> }
///
/// impl Recycle for Entry {
///     fn recycle_into(&mut self, arena: &mut Arena) {
///         if let Kind::Tagged(label) = std::mem::take(&mut self.kind) {
///             arena.recycle(label); // the label's buffer goes to the String free list
///         }
///         self.tags.recycle_into(arena); // the tags go too; `tags` keeps its own capacity
///     }
///     fn retained_bytes(&self) -> usize {
///         self.tags.retained_bytes()
///     }
/// }
///
/// let mut arena = Arena::new();
/// let mut e = Entry { kind: Kind::Tagged("x".repeat(100)), tags: vec!["a".into(), "b".into()] };
/// e.recycle_into(&mut arena);
/// assert!(e.tags.is_empty() && e.tags.capacity() >= 2);
/// assert_eq!(arena.spare_len::<String>(), 3);
/// ```
pub trait Recycle: Send + Sync + 'static {
    /// True when a value of this type owns no heap memory, directly or nested (scalars,
    /// `&'static str`, tuples of those): collections of such values are simply cleared,
    /// not recycled element by element. Leave it `false` for anything that owns memory.
    const PLAIN: bool = false;

    /// Empties `self` in place, keeping its own buffers, and moves the values it owns into
    /// `arena`'s free lists (see the trait's contract).
    ///
    /// Allocates only while a free list grows; see [`Arena::recycle`].
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::arena::{Arena, Recycle};
    ///
    /// let mut arena = Arena::new();
    /// let mut names = vec![String::from("ada"), String::from("grace")];
    /// names.recycle_into(&mut arena);
    /// assert!(names.is_empty()); // the Vec keeps its capacity...
    /// assert_eq!(arena.spare_len::<String>(), 2); // ...and the Strings are spare
    /// ```
    fn recycle_into(&mut self, arena: &mut Arena);

    /// Bytes of heap memory a cleared value of this type still holds (its own buffers and
    /// those of values it keeps in place), approximately; 0 (the default) means nothing
    /// worth keeping, and [`Arena::recycle`] drops such a value.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::arena::Recycle;
    ///
    /// assert_eq!(String::with_capacity(64).retained_bytes(), 64);
    /// assert_eq!(Vec::<u32>::with_capacity(8).retained_bytes(), 32);
    /// assert_eq!(7u64.retained_bytes(), 0);
    /// ```
    fn retained_bytes(&self) -> usize {
        0
    }
}

/// Free lists of spare values, one per type, with staggered retirement; see the
/// [module docs](self).
///
/// # Examples
///
/// ```
/// use poolswap::arena::Arena;
///
/// let mut arena = Arena::new();
/// let mut s = String::with_capacity(256);
/// s.push_str("hello");
/// arena.recycle(s); // moved in: no one can use it any more
///
/// let s: String = arena.take(); // the same buffer, cleared
/// assert!(s.is_empty());
/// assert!(s.capacity() >= 256);
/// let t: String = arena.take(); // the free list is empty: a fresh String
/// assert_eq!(t.capacity(), 0);
/// ```
///
/// # Costs
///
/// A take or a recycle looks its type up among the arena's free lists (a linear scan of
/// the types seen so far, comparing [`TypeId`]s) and pushes or pops one value; see the
/// [module docs](self#what-allocates) for what allocates. No lock, no atomic operation.
///
/// # Send and Sync
///
/// `Send + Sync`: every value it keeps is (see [`Recycle`]), and `&self` only reads counts.
pub struct Arena {
    /// One entry per type ever recycled here (until [`trim`](Arena::trim)), in first-use
    /// order.
    lists: Vec<Entry>,
    /// Draws reuse budgets.
    retire: Retire,
    /// Values that would keep more bytes than this are dropped instead of kept.
    max_retained_bytes: usize,
    /// Cumulative counters.
    reused: u64,
    fresh: u64,
    retired: u64,
    over_cap: u64,
}

/// Counters of one [`Arena`]; see [`Arena::stats`].
///
/// `spare` and `spare_bytes` are readings of the moment; the rest count since the arena
/// was made.
///
/// # Examples
///
/// ```
/// use poolswap::arena::Arena;
///
/// let mut arena = Arena::new();
/// arena.recycle(String::with_capacity(10));
/// let _: String = arena.take();
/// let _: String = arena.take();
/// let stats = arena.stats();
/// assert_eq!((stats.reused, stats.fresh, stats.spare), (1, 1, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArenaStats {
    /// Spare values in all free lists now.
    pub spare: usize,
    /// Bytes those spare values hold, as their [`Recycle::retained_bytes`] say.
    pub spare_bytes: usize,
    /// Takes served with a spare value.
    pub reused: u64,
    /// Takes that returned `T::default()` because the free list was empty.
    pub fresh: u64,
    /// Spare values dropped because their slot's reuse budget ran out (a take from that
    /// slot then returns `T::default()`, counted here, not in `fresh`).
    pub retired: u64,
    /// Values dropped instead of kept because they held more than
    /// [`max_retained_bytes`](Arena::max_retained_bytes).
    pub over_cap: u64,
}

impl Arena {
    /// Makes an empty arena with reuse budgets drawn from [`DEFAULT_REUSES`] and no cap on
    /// retained bytes.
    ///
    /// Allocates nothing; seeds its generator from std's `RandomState`, so arenas made one
    /// after another draw different budgets.
    ///
    /// # Examples
    ///
    /// ```
    /// let arena = poolswap::arena::Arena::new();
    /// assert_eq!(arena.stats().spare, 0);
    /// ```
    pub fn new() -> Arena {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(0x0061_7265_6e61); // "arena": any input will do; the keys are random
        Arena {
            lists: Vec::new(),
            retire: Retire::new(h.finish(), Some(DEFAULT_REUSES)),
            max_retained_bytes: usize::MAX,
            reused: 0,
            fresh: 0,
            retired: 0,
            over_cap: 0,
        }
    }

    /// Sets the range reuse budgets are drawn from (both ends included), for the slots
    /// whose budget is drawn from now on; see [retirement](self#retirement-the-memory-safeguard).
    ///
    /// # Panics
    ///
    /// If the range is empty (`start > end`).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::arena::Arena;
    ///
    /// let mut arena = Arena::new().retire_after(2..=2);
    /// arena.recycle(String::with_capacity(32));
    /// for _ in 0..2 {
    ///     let s: String = arena.take(); // reused twice...
    ///     assert_eq!(s.capacity(), 32);
    ///     arena.recycle(s);
    /// }
    /// let s: String = arena.take(); // ...then retired: freed, and a fresh one instead
    /// assert_eq!(s.capacity(), 0);
    /// assert_eq!(arena.stats().retired, 1);
    /// ```
    pub fn retire_after(mut self, reuses: RangeInclusive<u32>) -> Arena {
        assert!(
            reuses.start() <= reuses.end(),
            "Arena::retire_after: empty range {reuses:?}"
        );
        self.retire.reuses = Some(reuses);
        self
    }

    /// Turns retirement off: spare buffers are reused until [`trim`](Arena::trim), the
    /// [`max_retained_bytes`](Arena::max_retained_bytes) cap or the arena's drop frees them.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::arena::Arena;
    ///
    /// let mut arena = Arena::new().never_retire();
    /// arena.recycle(String::with_capacity(8));
    /// for _ in 0..10_000 {
    ///     let s: String = arena.take();
    ///     arena.recycle(s);
    /// }
    /// assert_eq!(arena.stats().retired, 0);
    /// ```
    pub fn never_retire(mut self) -> Arena {
        self.retire.reuses = None;
        self
    }

    /// Caps what one spare value may keep: a value whose
    /// [`retained_bytes`](Recycle::retained_bytes) exceed `bytes` is dropped when it is
    /// recycled instead of going to a free list.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::arena::Arena;
    ///
    /// let mut arena = Arena::new().max_retained_bytes(1024);
    /// arena.recycle(String::with_capacity(1 << 20)); // one giant build: freed at once
    /// arena.recycle(String::with_capacity(64));
    /// assert_eq!(arena.stats().over_cap, 1);
    /// assert_eq!(arena.spare_len::<String>(), 1);
    /// ```
    pub fn max_retained_bytes(mut self, bytes: usize) -> Arena {
        self.max_retained_bytes = bytes;
        self
    }

    /// Hands out a spare `T`, cleared, with its capacity; or `T::default()` when the free
    /// list of `T` is empty or the spare value's reuse budget ran out (it is dropped then).
    ///
    /// Allocates nothing (`T::default()` allocates nothing for std's collections).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::arena::Arena;
    ///
    /// let mut arena = Arena::new();
    /// let mut m = HashMap::with_capacity(100);
    /// m.insert(1u32, String::from("one"));
    /// arena.recycle(m); // the map goes to its free list, its String to another
    ///
    /// let m: HashMap<u32, String> = arena.take();
    /// assert!(m.is_empty() && m.capacity() >= 100);
    /// let s: String = arena.take();
    /// assert!(s.is_empty() && s.capacity() >= 3);
    /// ```
    pub fn take<T: Recycle + Default>(&mut self) -> T {
        let Some(list) = find::<T>(&mut self.lists) else {
            self.fresh += 1;
            return T::default();
        };
        match list.take(&mut self.retire) {
            Taken::Spare(value) => {
                self.reused += 1;
                value
            }
            Taken::Empty => {
                self.fresh += 1;
                T::default()
            }
            Taken::Retired => {
                self.retired += 1;
                T::default()
            }
        }
    }

    /// [`take`](Arena::take), preferring among the last few spare values one whose
    /// [`retained_bytes`](Recycle::retained_bytes) are at least `bytes`, so that filling
    /// it does not grow (reallocate) it. Otherwise the same as `take`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::arena::Arena::new();
    /// arena.recycle(String::with_capacity(64));
    /// arena.recycle(String::with_capacity(8));
    /// let s: String = arena.take_fitting(20);
    /// assert_eq!(s.capacity(), 64); // not the 8-byte one on top
    /// ```
    pub fn take_fitting<T: Recycle + Default>(&mut self, bytes: usize) -> T {
        if let Some(list) = find::<T>(&mut self.lists) {
            list.fit_top(bytes);
        }
        self.take()
    }

    /// Takes a spare `String` and copies `s` into it: [`take_fitting`](Arena::take_fitting)
    /// with `s.len()`, so a buffer that has room is preferred among the last few recycled.
    ///
    /// Allocates only if the `String` handed out has less capacity than `s.len()` (none of
    /// the last few spare ones has room), or if there is none and `s` is not empty. Then it
    /// reserves the next power of two at or above `s.len()` bytes, a size class as
    /// allocators use: the buffer then fits every later string of about that length, so a
    /// buffer grows once, not each time the order of a refill hands it a slightly longer
    /// string than before. That costs at most twice the bytes of `s`. Costs a look at up
    /// to 8 spare capacities besides the copy.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::arena::Arena::new();
    /// arena.recycle(String::with_capacity(16));
    /// let s = arena.string_from("hello");
    /// assert_eq!(s, "hello");
    /// assert_eq!(s.capacity(), 16);
    /// // Nothing spare: a new buffer, rounded up to a size class.
    /// let t = arena.string_from("backend-7-a");
    /// assert!(t.capacity() >= 16);
    /// ```
    pub fn string_from(&mut self, s: &str) -> String {
        let mut out: String = self.take_fitting(s.len());
        if out.capacity() < s.len() {
            // `out` is empty: this makes its capacity at least the size class.
            out.reserve_exact(s.len().checked_next_power_of_two().unwrap_or(s.len()));
        }
        out.push_str(s);
        out
    }

    /// Clears `value` into this arena and keeps it in the free list of `T`: its nested
    /// values go to their own free lists (by [`Recycle::recycle_into`]), and the value
    /// itself is kept if it still holds memory (its [`retained_bytes`](Recycle::retained_bytes)
    /// are not 0) and no more than [`max_retained_bytes`](Arena::max_retained_bytes);
    /// otherwise it is dropped.
    ///
    /// Taking the value by move is what makes reuse safe: nothing can use it after this.
    /// Allocates only while a free list grows: the first value of a type allocates that
    /// type's list, and a list longer than ever before may grow.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::arena::Arena::new();
    /// let words = vec![String::from("a"), String::from("b")];
    /// arena.recycle(words);
    /// assert_eq!(arena.spare_len::<Vec<String>>(), 1);
    /// assert_eq!(arena.spare_len::<String>(), 2);
    /// ```
    pub fn recycle<T: Recycle>(&mut self, mut value: T) {
        if T::PLAIN {
            return;
        }
        value.recycle_into(self);
        let bytes = value.retained_bytes();
        if bytes == 0 {
            return;
        }
        if bytes > self.max_retained_bytes {
            self.over_cap += 1;
            return;
        }
        let id = TypeId::of::<T>();
        let i = match self.lists.iter().position(|e| e.id == id) {
            Some(i) => i,
            None => {
                let list = Box::new(FreeList::<T>::default());
                self.lists.push(Entry { id, list });
                self.lists.len() - 1
            }
        };
        // Always `Some`: the entry for `TypeId::of::<T>()` holds a `FreeList<T>`.
        if let Some(list) = self.lists[i]
            .list
            .as_any_mut()
            .downcast_mut::<FreeList<T>>()
        {
            list.put(value, bytes, &mut self.retire);
        }
    }

    /// Ends a cycle: every spare value that no [`take`](Arena::take) reached since the last
    /// call spends one reuse from its slot's budget, and those out of budget are dropped.
    /// [`Recycled::clear`] calls it once per reset; call it once per build when you use an
    /// arena by hand.
    ///
    /// Costs one step per idle spare value; allocates nothing. Does nothing but reset the
    /// marks under [`never_retire`](Arena::never_retire).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::arena::Arena;
    ///
    /// let mut arena = Arena::new().retire_after(3..=3);
    /// arena.recycle(String::with_capacity(8)); // a burst left one buffer nobody takes
    /// for _ in 0..4 {
    ///     arena.retire_idle(); // the cycle in which it came plus three idle ones...
    /// }
    /// assert_eq!(arena.spare_len::<String>(), 1);
    /// arena.retire_idle(); // ...and its budget is spent: freed
    /// assert_eq!(arena.spare_len::<String>(), 0);
    /// ```
    pub fn retire_idle(&mut self) {
        for e in &mut self.lists {
            self.retired += e.list.retire_idle(&mut self.retire);
        }
    }

    /// Drops every spare value now, freeing their memory; the arena stays usable and its
    /// counters are kept.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::arena::Arena::new();
    /// arena.recycle(String::with_capacity(8));
    /// arena.trim();
    /// assert_eq!(arena.stats().spare, 0);
    /// ```
    pub fn trim(&mut self) {
        self.lists = Vec::new();
    }

    /// How many spare values of type `T` the arena holds.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::arena::Arena::new();
    /// arena.recycle(vec![0u8; 4]);
    /// assert_eq!(arena.spare_len::<Vec<u8>>(), 1);
    /// assert_eq!(arena.spare_len::<String>(), 0);
    /// ```
    pub fn spare_len<T: Recycle>(&self) -> usize {
        let id = TypeId::of::<T>();
        self.lists
            .iter()
            .find(|e| e.id == id)
            .map_or(0, |e| e.list.len())
    }

    /// Reads the arena's counters: a walk over its free lists (one per type), no allocation.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::arena::Arena::new();
    /// arena.recycle(String::with_capacity(100));
    /// assert_eq!(arena.stats().spare_bytes, 100);
    /// ```
    pub fn stats(&self) -> ArenaStats {
        let mut stats = ArenaStats {
            reused: self.reused,
            fresh: self.fresh,
            retired: self.retired,
            over_cap: self.over_cap,
            ..ArenaStats::default()
        };
        for e in &self.lists {
            stats.spare += e.list.len();
            stats.spare_bytes += e.list.bytes();
        }
        stats
    }
}

impl Default for Arena {
    /// Same as [`Arena::new`].
    fn default() -> Arena {
        Arena::new()
    }
}

impl fmt::Debug for Arena {
    /// Prints the spare count per type and the settings; never the generator's state.
    ///
    /// ```
    /// let mut arena = poolswap::arena::Arena::new();
    /// arena.recycle(String::with_capacity(4));
    /// assert!(format!("{arena:?}").contains("alloc::string::String\": 1"));
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Lists<'a>(&'a [Entry]);
        impl fmt::Debug for Lists<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_map()
                    .entries(self.0.iter().map(|e| (e.list.type_name(), e.list.len())))
                    .finish()
            }
        }
        f.debug_struct("Arena")
            .field("spare", &Lists(&self.lists))
            .field("reuses", &self.retire.reuses)
            .field("max_retained_bytes", &self.max_retained_bytes)
            .finish_non_exhaustive()
    }
}

/// One free list, behind its type.
struct Entry {
    id: TypeId,
    list: Box<dyn Spare>,
}

/// Finds the free list of `T`, if `T` was ever recycled into `lists`.
fn find<T: Recycle>(lists: &mut [Entry]) -> Option<&mut FreeList<T>> {
    let id = TypeId::of::<T>();
    lists
        .iter_mut()
        .find(|e| e.id == id)
        .and_then(|e| e.list.as_any_mut().downcast_mut::<FreeList<T>>())
}

/// What a free list does without knowing its type.
trait Spare: Send + Sync {
    /// For the downcast to `FreeList<T>` (trait upcasting needs Rust 1.86).
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn type_name(&self) -> &'static str;
    fn len(&self) -> usize;
    fn bytes(&self) -> usize;
    /// [`Arena::retire_idle`] for this list; returns how many values it dropped.
    fn retire_idle(&mut self, retire: &mut Retire) -> u64;
}

/// The spare values of one type: a stack, with a reuse budget per slot.
///
/// Invariants: `budgets.len() >= spare.len()` (a slot keeps its budget while empty);
/// `bytes` is the sum of the spare values' `retained_bytes`; `low` is the fewest values the
/// stack held since the last `retire_idle` (slots below it were not taken from).
struct FreeList<T> {
    spare: Vec<T>,
    budgets: Vec<u32>,
    bytes: usize,
    low: usize,
}

impl<T> Default for FreeList<T> {
    fn default() -> Self {
        FreeList {
            spare: Vec::new(),
            budgets: Vec::new(),
            bytes: 0,
            low: 0,
        }
    }
}

/// What [`FreeList::take`] found.
enum Taken<T> {
    Spare(T),
    Empty,
    Retired,
}

/// How many spare values, from the top, [`Arena::take_fitting`] looks at.
const FIT_WINDOW: usize = 8;

impl<T: Recycle> FreeList<T> {
    /// Moves the topmost of the last [`FIT_WINDOW`] spare values that retains at least
    /// `bytes` to the top (the slots' budgets stay where they are).
    fn fit_top(&mut self, bytes: usize) {
        let len = self.spare.len();
        let window = len.saturating_sub(FIT_WINDOW)..len;
        if let Some(i) = window
            .rev()
            .find(|&i| self.spare[i].retained_bytes() >= bytes)
        {
            self.spare.swap(i, len - 1);
        }
    }

    fn take(&mut self, retire: &mut Retire) -> Taken<T> {
        let Some(value) = self.spare.pop() else {
            return Taken::Empty;
        };
        let slot = self.spare.len();
        self.low = self.low.min(slot);
        self.bytes -= value.retained_bytes();
        if retire.reuses.is_some() {
            let budget = &mut self.budgets[slot];
            if *budget == 0 {
                *budget = retire.draw();
                drop(value);
                return Taken::Retired;
            }
            *budget -= 1;
        }
        Taken::Spare(value)
    }

    fn put(&mut self, value: T, bytes: usize, retire: &mut Retire) {
        let slot = self.spare.len();
        self.spare.push(value);
        if self.budgets.len() == slot {
            self.budgets.push(retire.draw());
        }
        self.bytes += bytes;
    }
}

impl<T: Recycle> Spare for FreeList<T> {
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn type_name(&self) -> &'static str {
        std::any::type_name::<T>()
    }
    fn len(&self) -> usize {
        self.spare.len()
    }
    fn bytes(&self) -> usize {
        self.bytes
    }
    fn retire_idle(&mut self, retire: &mut Retire) -> u64 {
        let mut dropped = 0;
        if retire.reuses.is_some() {
            // Downwards: `swap_remove(i)` brings the top value (one that was taken from,
            // or put this cycle) into slot `i`, and slot `i` is not visited again.
            for i in (0..self.low.min(self.spare.len())).rev() {
                let budget = &mut self.budgets[i];
                if *budget == 0 {
                    *budget = retire.draw();
                    let value = self.spare.swap_remove(i);
                    self.bytes -= value.retained_bytes();
                    dropped += 1;
                } else {
                    *budget -= 1;
                }
            }
        }
        self.low = self.spare.len();
        dropped
    }
}

/// The retirement settings and the generator that draws budgets.
struct Retire {
    /// splitmix64's state.
    state: u64,
    /// Budgets are drawn uniformly from this range; `None`: never retire.
    reuses: Option<RangeInclusive<u32>>,
}

impl Retire {
    fn new(seed: u64, reuses: Option<RangeInclusive<u32>>) -> Retire {
        Retire {
            state: seed,
            reuses,
        }
    }

    /// One step of splitmix64 (Steele, Lea and Flood 2014; the constants of Vigna's
    /// public-domain reference version).
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A budget drawn uniformly from `reuses` (the modulo's bias is below 2^-32);
    /// `u32::MAX` when retirement is off.
    fn draw(&mut self) -> u32 {
        let Some(r) = self.reuses.clone() else {
            return u32::MAX;
        };
        let span = u64::from(*r.end() - *r.start()) + 1;
        *r.start() + (self.next() % span) as u32
    }
}

/// A value plus its own [`Arena`]: a pooled [`Container`](crate::Container) version whose
/// reset keeps the nested buffers.
///
/// [`clear`](Recycled::clear) moves the value's nested buffers into the arena (and ends the
/// arena's cycle, see [`Arena::retire_idle`]); the refill takes them back through
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
///     assert_eq!(Recycled::arena(&v).stats().reused, 3 * round); // key, list, backend
/// }
/// ```
///
/// Retirement applies to the spare values in the arena, not to the value itself (a map's
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
/// `clear` costs [`Recycle::recycle_into`] on the value plus [`Arena::retire_idle`]; at
/// steady state it allocates nothing. `Deref` is free.
///
/// # Send and Sync
///
/// `Send` and `Sync` exactly when `T` is: the arena is both.
#[derive(Default)]
pub struct Recycled<T> {
    value: T,
    arena: Arena,
}

impl<T> Recycled<T> {
    /// Wraps `value` with a new, empty [`Arena`] (see [`Arena::new`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = poolswap::Recycled::new(vec![1u8, 2]);
    /// assert_eq!(*r, [1, 2]);
    /// ```
    pub fn new(value: T) -> Recycled<T> {
        Recycled::with_arena(value, Arena::new())
    }

    /// Wraps `value` with `arena`, configured as you like.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{arena::Arena, Recycled};
    ///
    /// let r = Recycled::with_arena(Vec::<String>::new(), Arena::new().never_retire());
    /// assert!(r.is_empty());
    /// ```
    pub fn with_arena(value: T, arena: Arena) -> Recycled<T> {
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
    pub fn parts_mut(this: &mut Recycled<T>) -> (&mut T, &mut Arena) {
        (&mut this.value, &mut this.arena)
    }

    /// The arena, to read its [`stats`](Arena::stats).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Recycled;
    ///
    /// let mut r = Recycled::new(vec![String::from("x")]);
    /// r.clear();
    /// assert_eq!(Recycled::arena(&r).spare_len::<String>(), 1);
    /// ```
    pub fn arena(this: &Recycled<T>) -> &Arena {
        &this.arena
    }

    /// The arena, mutable: to [`trim`](Arena::trim) it or take from it.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::Recycled;
    ///
    /// let mut r = Recycled::new(vec![String::from("x")]);
    /// r.clear();
    /// Recycled::arena_mut(&mut r).trim();
    /// assert_eq!(Recycled::arena(&r).stats().spare, 0);
    /// ```
    pub fn arena_mut(this: &mut Recycled<T>) -> &mut Arena {
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
    /// and what it owns goes to the arena's free lists for the next refill. Then ends the
    /// arena's cycle ([`Arena::retire_idle`]), so spare buffers the last refill did not need
    /// age toward retirement.
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
    /// let arena = Recycled::arena(&r);
    /// assert_eq!((arena.spare_len::<String>(), arena.spare_len::<Vec<String>>()), (2, 1));
    /// ```
    pub fn clear(&mut self) {
        self.arena.retire_idle();
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
    /// assert!(format!("{r:?}").starts_with("Recycled { value: 1, arena: Arena {"));
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recycled")
            .field("value", &self.value)
            .field("arena", &self.arena)
            .finish()
    }
}

/// Implements [`Recycle`] for a struct by recycling each listed
/// field in place; its retained bytes are the fields' sum.
///
/// List every field: one left out keeps its value when the struct is recycled, and a
/// struct taken from an arena would not come back cleared.
///
/// # Examples
///
/// ```
/// use poolswap::arena::Arena;
///
/// #[derive(Default)]
/// struct Peer { id: String, restarts: u32, tags: Vec<String> }
/// poolswap::impl_recycle!(Peer { id, restarts, tags });
///
/// let mut arena = Arena::new();
/// let peers = vec![Peer { id: "p1".into(), restarts: 3, tags: vec!["a".into()] }];
/// arena.recycle(peers); // the Vec, the Peer (with its `id` and `tags` buffers), the tag
///
/// let p: Peer = arena.take();
/// assert!(p.id.is_empty() && p.id.capacity() >= 2);
/// assert_eq!(p.restarts, 0);
/// assert!(p.tags.is_empty() && p.tags.capacity() >= 1);
/// assert_eq!(arena.spare_len::<String>(), 1); // the tag
/// ```
#[macro_export]
macro_rules! impl_recycle {
    ($ty:ty { $($field:ident),* $(,)? }) => {
        impl $crate::arena::Recycle for $ty {
            fn recycle_into(&mut self, arena: &mut $crate::arena::Arena) {
                $( $crate::arena::Recycle::recycle_into(&mut self.$field, arena); )*
                let _ = arena;
            }
            fn retained_bytes(&self) -> usize {
                0 $( + $crate::arena::Recycle::retained_bytes(&self.$field) )*
            }
        }
    };
}

// ---------------------------------------------------------------------------------------
// Implementations for std's types.

macro_rules! plain {
    ($($t:ty),*) => {$(
        /// Plain data: recycling resets it to its default (zero, `false`, `""`).
        impl Recycle for $t {
            const PLAIN: bool = true;
            #[inline]
            fn recycle_into(&mut self, _: &mut Arena) {
                *self = <$t>::default();
            }
        }

        /// Plain data: copied.
        impl RecycleCopy for $t {
            #[inline]
            fn copy_from_in(&mut self, src: &Self, _: &mut Arena) {
                *self = *src;
            }
        }
    )*};
}

plain!(
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

/// Clears in place, keeping its capacity; it owns nothing else.
impl Recycle for String {
    #[inline]
    fn recycle_into(&mut self, _: &mut Arena) {
        self.clear();
    }
    fn retained_bytes(&self) -> usize {
        self.capacity()
    }
}

/// Keeps its buffer; its elements are [recycled](Arena::recycle) one by one (or simply
/// cleared when they are [plain](Recycle::PLAIN)).
impl<T: Recycle> Recycle for Vec<T> {
    #[inline]
    fn recycle_into(&mut self, arena: &mut Arena) {
        if T::PLAIN {
            self.clear();
        } else {
            for v in self.drain(..) {
                arena.recycle(v);
            }
        }
    }
    fn retained_bytes(&self) -> usize {
        self.capacity() * mem::size_of::<T>()
    }
}

/// Like `Vec<T>`.
impl<T: Recycle> Recycle for VecDeque<T> {
    fn recycle_into(&mut self, arena: &mut Arena) {
        if T::PLAIN {
            self.clear();
        } else {
            for v in self.drain(..) {
                arena.recycle(v);
            }
        }
    }
    fn retained_bytes(&self) -> usize {
        self.capacity() * mem::size_of::<T>()
    }
}

/// Keeps its table; keys and values are [recycled](Arena::recycle). Retained bytes are
/// approximate: capacity × (size of a key-value pair + 1 control byte).
impl<K, V, S> Recycle for HashMap<K, V, S>
where
    K: Recycle + Eq + Hash,
    V: Recycle,
    S: BuildHasher + Send + Sync + 'static,
{
    fn recycle_into(&mut self, arena: &mut Arena) {
        if K::PLAIN && V::PLAIN {
            self.clear();
        } else {
            for (k, v) in self.drain() {
                arena.recycle(k);
                arena.recycle(v);
            }
        }
    }
    fn retained_bytes(&self) -> usize {
        self.capacity() * (mem::size_of::<(K, V)>() + 1)
    }
}

/// Keeps its table; its elements are [recycled](Arena::recycle). Retained bytes as for
/// `HashMap`.
impl<T, S> Recycle for HashSet<T, S>
where
    T: Recycle + Eq + Hash,
    S: BuildHasher + Send + Sync + 'static,
{
    fn recycle_into(&mut self, arena: &mut Arena) {
        if T::PLAIN {
            self.clear();
        } else {
            for v in self.drain() {
                arena.recycle(v);
            }
        }
    }
    fn retained_bytes(&self) -> usize {
        self.capacity() * (mem::size_of::<T>() + 1)
    }
}

/// Becomes `None`; the content is [recycled](Arena::recycle) into its own free list.
impl<T: Recycle> Recycle for Option<T> {
    const PLAIN: bool = T::PLAIN;
    fn recycle_into(&mut self, arena: &mut Arena) {
        if let Some(v) = self.take() {
            arena.recycle(v);
        }
    }
}

/// Keeps its allocation; the boxed value is recycled in place.
impl<T: Recycle> Recycle for Box<T> {
    fn recycle_into(&mut self, arena: &mut Arena) {
        (**self).recycle_into(arena);
    }
    fn retained_bytes(&self) -> usize {
        mem::size_of::<T>() + (**self).retained_bytes()
    }
}

/// Each element recycled in place.
impl<T: Recycle, const N: usize> Recycle for [T; N] {
    const PLAIN: bool = T::PLAIN;
    fn recycle_into(&mut self, arena: &mut Arena) {
        for v in self {
            v.recycle_into(arena);
        }
    }
    fn retained_bytes(&self) -> usize {
        self.iter().map(T::retained_bytes).sum()
    }
}

macro_rules! tuple {
    ($($name:ident . $i:tt),+) => {
        /// Each element recycled in place.
        impl<$($name: Recycle),+> Recycle for ($($name,)+) {
            const PLAIN: bool = $($name::PLAIN)&&+;
            fn recycle_into(&mut self, arena: &mut Arena) {
                $( self.$i.recycle_into(arena); )+
            }
            fn retained_bytes(&self) -> usize {
                0 $( + self.$i.retained_bytes() )+
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

// ---------------------------------------------------------------------------------------
// Recycling copies.

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

/// Copies into its own buffer, which grows only if `src` is longer than its capacity.
impl RecycleCopy for String {
    fn copy_from_in(&mut self, src: &Self, _: &mut Arena) {
        self.clear();
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
        this.value.copy_from_in(src, &mut this.arena);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_stay_in_range_and_vary() {
        let mut r = Retire::new(42, Some(10..=12));
        let draws: Vec<u32> = (0..1000).map(|_| r.draw()).collect();
        assert!(draws.iter().all(|d| (10..=12).contains(d)));
        for v in 10..=12 {
            assert!(draws.contains(&v), "{v} never drawn");
        }
        let mut one = Retire::new(7, Some(5..=5));
        assert_eq!(one.draw(), 5);
        let mut full = Retire::new(7, Some(0..=u32::MAX));
        let _ = full.draw(); // no overflow in the span
    }

    #[test]
    fn bytes_and_low_mark_are_kept_exact() {
        let mut arena = Arena::new().retire_after(1..=1);
        arena.recycle(String::with_capacity(10));
        arena.recycle(String::with_capacity(20));
        assert_eq!(arena.stats().spare_bytes, 30);
        let s: String = arena.take(); // slot 1: budget 1 -> 0
        assert_eq!(s.capacity(), 20);
        assert_eq!(arena.stats().spare_bytes, 10);
        // The first cycle of a list ages nothing: its values were put in it.
        arena.retire_idle();
        // Slot 0 idle for a whole cycle: budget 1 -> 0; the next idle cycle retires it.
        arena.retire_idle();
        assert_eq!(arena.spare_len::<String>(), 1);
        assert_eq!(arena.stats().spare_bytes, 10);
        arena.retire_idle();
        assert_eq!(arena.spare_len::<String>(), 0);
        assert_eq!(arena.stats().spare_bytes, 0);
        assert_eq!(arena.stats().retired, 1);
    }

    #[test]
    fn zero_sized_and_plain_values_are_not_kept() {
        let mut arena = Arena::new();
        arena.recycle(5u32);
        arena.recycle(Some(3u8));
        arena.recycle(Vec::<u8>::new());
        arena.recycle(((), 1u8));
        assert_eq!(arena.stats().spare, 0);
        assert!(arena.lists.is_empty());
    }
}
