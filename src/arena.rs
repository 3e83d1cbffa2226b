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
//!   value is due for renewal.
//! - [`Arena::recycle`] and [`Recycle::recycle_into`]: only while a free list grows (the
//!   first value of a type allocates its list; a list longer than ever before may grow its
//!   `Vec`). At steady state, never.
//! - Filling a taken buffer allocates only if it needs more capacity than the buffer has:
//!   buffers wander between uses (a `String` that held a short key may be handed out for a
//!   long value), so each grows until it fits the longest use it meets, then stops.
//! - Renewal (below) frees a buffer now and then, and the fresh value that replaces it
//!   allocates when it is filled: in the long run, about *(spare buffers used per cycle) /
//!   (mean reuse budget)* renewals per cycle, each costing one allocation or a few. For a
//!   1,000 × 3 `HashMap<String, Vec<String>>` (5,000 buffers) and the default budget that
//!   is ~0.9 renewals per update; `tests/arena.rs` measures about 1.1 allocations per
//!   renewal. No slot renews its buffer before it has served 5,000 reuses.
//!   [`Arena::never_renew`] turns it off.
//!
//! No lock and no atomic operation anywhere: an arena is used through `&mut`.
//!
//! # Renewal: the memory safeguard
//!
//! Reuse ratchets memory up: a buffer keeps the capacity of the largest thing it ever
//! held. protopool's README warns of this and replaces each pooled value with a new one
//! after a random 5,000 to 6,000 uses, so that values are replaced at different times.
//! Here every slot of a free list carries a *reuse budget*, drawn uniformly from
//! [`DEFAULT_REUSES`] (or the range given to [`Arena::renew_after`]) by a per-arena
//! splitmix64 generator (Steele,
//! Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014). Each
//! [`take`](Arena::take) from a slot spends one reuse; a take from a slot with no budget
//! left *renews* it: drops the buffer there (frees it), draws a new budget, and returns a
//! fresh `T::default()`. Budgets belong to slots, not to buffers, because std's types carry no
//! counter: a buffer's expected life is one budget, but one buffer may outlive it when it
//! wanders between slots.
//!
//! Spare buffers no take reached during a whole cycle (between two calls of
//! [`Arena::renew_idle`], which [`Recycled::clear`] calls) spend one reuse too, so a burst
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

use std::any::TypeId;
use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::ops::RangeInclusive;

mod copy;
mod free_list;
mod recycle;
mod recycled;
mod renewal;

pub use self::copy::RecycleCopy;
use self::free_list::{find, find_or_add, Entry, Taken};
pub use self::recycle::Recycle;
pub use self::recycled::Recycled;
use self::renewal::Renewal;
pub use self::renewal::DEFAULT_REUSES;

/// Free lists of spare values, one per type, with staggered renewal; see the
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
    renewal: Renewal,
    /// Values that would keep more bytes than this are dropped instead of kept.
    max_retained_bytes: usize,
    /// Cumulative counters.
    reused: u64,
    fresh: u64,
    renewed: u64,
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
    /// Spare values renewed: dropped because their slot's reuse budget ran out (a take
    /// from that slot then returns `T::default()`, counted here, not in `fresh`).
    pub renewed: u64,
    /// Values dropped instead of kept because they held more than
    /// [`max_retained_bytes`](Arena::max_retained_bytes).
    pub over_cap: u64,
    /// The same count as [`renewed`](ArenaStats::renewed), under its old name.
    #[deprecated(since = "0.1.0", note = "renamed to `renewed`")]
    pub retired: u64,
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
            renewal: Renewal::new(h.finish(), Some(DEFAULT_REUSES)),
            max_retained_bytes: usize::MAX,
            reused: 0,
            fresh: 0,
            renewed: 0,
            over_cap: 0,
        }
    }

    /// Sets the range reuse budgets are drawn from (both ends included), for the slots
    /// whose budget is drawn from now on; see [renewal](self#renewal-the-memory-safeguard).
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
    /// let mut arena = Arena::new().renew_after(2..=2);
    /// arena.recycle(String::with_capacity(32));
    /// for _ in 0..2 {
    ///     let s: String = arena.take(); // reused twice...
    ///     assert_eq!(s.capacity(), 32);
    ///     arena.recycle(s);
    /// }
    /// let s: String = arena.take(); // ...then renewed: freed, and a fresh one instead
    /// assert_eq!(s.capacity(), 0);
    /// assert_eq!(arena.stats().renewed, 1);
    /// ```
    pub fn renew_after(mut self, reuses: RangeInclusive<u32>) -> Arena {
        assert!(
            reuses.start() <= reuses.end(),
            "Arena::renew_after: empty range {reuses:?}"
        );
        self.renewal.reuses = Some(reuses);
        self
    }

    /// Turns renewal off: spare buffers are reused until [`trim`](Arena::trim), the
    /// [`max_retained_bytes`](Arena::max_retained_bytes) cap or the arena's drop frees them.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::arena::Arena;
    ///
    /// let mut arena = Arena::new().never_renew();
    /// arena.recycle(String::with_capacity(8));
    /// for _ in 0..10_000 {
    ///     let s: String = arena.take();
    ///     arena.recycle(s);
    /// }
    /// assert_eq!(arena.stats().renewed, 0);
    /// ```
    pub fn never_renew(mut self) -> Arena {
        self.renewal.reuses = None;
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
        match list.take(&mut self.renewal) {
            Taken::Spare(value) => {
                self.reused += 1;
                value
            }
            Taken::Empty => {
                self.fresh += 1;
                T::default()
            }
            Taken::Renewed => {
                self.renewed += 1;
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
        // Always `Some`: see `find_or_add`.
        if let Some(list) = find_or_add::<T>(&mut self.lists) {
            list.put(value, bytes, &mut self.renewal);
        }
    }

    /// Ends a cycle: every spare value that no [`take`](Arena::take) reached since the last
    /// call spends one reuse from its slot's budget, and those out of budget are dropped.
    /// [`Recycled::clear`] calls it once per reset; call it once per build when you use an
    /// arena by hand.
    ///
    /// Costs one step per idle spare value; allocates nothing. Does nothing but reset the
    /// marks under [`never_renew`](Arena::never_renew).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::arena::Arena;
    ///
    /// let mut arena = Arena::new().renew_after(3..=3);
    /// arena.recycle(String::with_capacity(8)); // a burst left one buffer nobody takes
    /// for _ in 0..4 {
    ///     arena.renew_idle(); // the cycle in which it came plus three idle ones...
    /// }
    /// assert_eq!(arena.spare_len::<String>(), 1);
    /// arena.renew_idle(); // ...and its budget is spent: freed
    /// assert_eq!(arena.spare_len::<String>(), 0);
    /// ```
    pub fn renew_idle(&mut self) {
        for e in &mut self.lists {
            self.renewed += e.list.renew_idle(&mut self.renewal);
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
        // The deprecated `retired` is filled in for those who still read it.
        #[allow(deprecated)]
        let mut stats = ArenaStats {
            reused: self.reused,
            fresh: self.fresh,
            renewed: self.renewed,
            retired: self.renewed,
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

/// The renewal settings' former names, which said "retire": in this crate that word is the
/// hazard list's, for a swapped-out version waiting until no reader protects it.
impl Arena {
    /// Former name of [`Arena::renew_after`], which it calls.
    #[deprecated(since = "0.1.0", note = "renamed to `Arena::renew_after`")]
    pub fn retire_after(self, reuses: RangeInclusive<u32>) -> Arena {
        self.renew_after(reuses)
    }

    /// Former name of [`Arena::never_renew`], which it calls.
    #[deprecated(since = "0.1.0", note = "renamed to `Arena::never_renew`")]
    pub fn never_retire(self) -> Arena {
        self.never_renew()
    }

    /// Former name of [`Arena::renew_idle`], which it calls.
    #[deprecated(since = "0.1.0", note = "renamed to `Arena::renew_idle`")]
    pub fn retire_idle(&mut self) {
        self.renew_idle();
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
            .field("reuses", &self.renewal.reuses)
            .field("max_retained_bytes", &self.max_retained_bytes)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    #[allow(deprecated)]
    fn former_names_forward_to_the_renewal_settings() {
        let mut arena = Arena::new().retire_after(1..=1);
        assert_eq!(arena.renewal.reuses, Some(1..=1));
        arena.recycle(String::with_capacity(8));
        for _ in 0..3 {
            arena.retire_idle(); // one cycle to come in, one to spend the budget, one to drop
        }
        let stats = arena.stats();
        assert_eq!((stats.renewed, stats.retired, stats.spare), (1, 1, 0));
        assert_eq!(Arena::new().never_retire().renewal.reuses, None);
    }
}
