//! Typed reuse of owned buffers: Go's [protopool] in Rust, with std's own collections.
//!
//! A pool reset that calls `clear()` keeps a collection's own buffer but drops everything
//! inside it: rebuilding a `HashMap<String, Vec<String>>` of 1,000 keys × 3 values costs
//! 5,000 allocations per update (every `String` and every `Vec`), even though the map's
//! table is reused. This module keeps those nested buffers too.
//!
//! - An [`FreeLists`] holds *free lists*, one per type: spare `String`s, spare
//!   `Vec<String>`s, spare `HashMap`s, spare values of your own types, each cleared but
//!   with its capacity.
//! - [`Recycle`] is the trait a type implements to be cleared *into* an arena: it empties
//!   itself and moves what it owns (the elements of a collection, the content of an
//!   `Option`) into the arena's free lists instead of dropping them. It is implemented for
//!   `String`, `Vec`, `VecDeque`, `HashMap`, `HashSet`, `Option`, `Box`, tuples, arrays and
//!   the scalars; [`impl_recycle!`](crate::impl_recycle) writes it for a struct.
//! - [`FreeLists::take`] hands a spare value back out, cleared, with its capacity;
//!   [`FreeLists::recycle`] puts one value in.
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
//! let spare = Recycled::free_lists(&*next);
//! assert_eq!((spare.spare_len::<String>(), spare.spare_len::<Vec<String>>()), (8, 2));
//! ```
//!
//! # Ownership instead of discipline
//!
//! protopool's `Value.Reset` rewinds its stores: every object handed out before the reset
//! is handed out again after it, and code that still holds an old pointer reads or writes
//! someone else's data. Here a value goes back to an arena only by being *moved* into it
//! ([`FreeLists::recycle`], or a [`Recycle::recycle_into`] that moves a collection's elements
//! out), so nothing handed out before can be used afterwards: the compiler rejects it.
//! [`Recycled::clear`] takes `&mut self`, so no reader holds a reference into the value
//! while it is cleared; in a [`Container`](crate::Container), a version is reset only after
//! its last guard is dropped. The module holds no `unsafe` code (`#![forbid(unsafe_code)]`).
//!
//! A value recycled cannot be used again:
//!
//! ```compile_fail
//! let mut arena = poolswap::FreeLists::new();
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
//! - [`FreeLists::take`]: never. It pops a spare value, or returns `T::default()` (which
//!   allocates nothing for std's collections) when the free list is empty or the spare
//!   value is due for renewal.
//! - [`FreeLists::recycle`] and [`Recycle::recycle_into`]: only while a free list grows (the
//!   first value of a type allocates its list; a list longer than ever before may grow its
//!   `Vec`). At steady state, never.
//! - Filling a taken buffer allocates only if it needs more capacity than the buffer has:
//!   buffers wander between uses (a `String` that held a short key may be handed out for a
//!   long value), so each grows until it fits the longest use it meets, then stops.
//! - Renewal and release (below) free buffers the builds no longer need; a build that
//!   needs one again allocates it. A buffer that fits its uses is never renewed, so a
//!   steady workload allocates nothing in the long run either: `tests/arena.rs` rebuilds a
//!   50-route table from text 24,000 times (each buffer reused 24,000 times, four budgets
//!   past the renewal onset) and allows at most 0.05 allocations per rebuild (it counts 0).
//!
//! No lock and no atomic operation anywhere: an arena is used through `&mut`.
//!
//! # Renewal and release: the memory safeguards
//!
//! Reuse ratchets memory up: a buffer keeps the capacity of the largest thing it ever
//! held, and a free list keeps as many buffers as the largest build ever gave back.
//! protopool's README warns of this and replaces each pooled value with a new one after a
//! random 5,000 to 6,000 uses. Here three mechanisms bound it, each counted in
//! [`FreeListStats`]:
//!
//! - **Idle values are released.** A *cycle* runs from one [`FreeLists::renew_idle`] to the
//!   next ([`Recycled::clear`] calls it once per reset, so a cycle is one build of that
//!   version). A spare value that no take reached for [`DEFAULT_IDLE_CYCLES`] (100) whole
//!   cycles is dropped when the cycle ends: after a burst, the spare values that smaller
//!   builds leave untouched are freed 100 cycles later, all of them. Each value carries the
//!   cycle it came in, so this does not depend on where it sits in its free list. The cost:
//!   a build that needs them again after that allocates them again.
//!   [`FreeLists::release_idle_after`] sets the number of cycles.
//! - **Oversized values are renewed.** Every slot of a free list carries a *reuse budget*,
//!   drawn uniformly from [`DEFAULT_REUSES`] (or the range given to [`FreeLists::renew_after`])
//!   by a per-arena splitmix64 generator (Steele, Lea and Flood, "Fast splittable
//!   pseudorandom number generators", OOPSLA 2014), so that slots come due at different
//!   times. A value is *oversized* when it holds more than 4 × the bytes its last use
//!   needed ([`Recycle::used_bytes`], read when it was recycled) + 256 bytes. A take from
//!   the slot spends one reuse, or `retained / (16 × used + 1,024)` reuses (at most 64)
//!   when that is more: only a value that wastes a lot spends its budget faster (one whose
//!   last use needed 0 bytes spends one: that is also what a type that does not report its
//!   use says). Once the budget is spent, the next oversized value taken
//!   from the slot is *renewed*: dropped (freed), a fresh `T::default()` handed out in its
//!   place and a new budget drawn; values that fit their use pass. A 64 KiB buffer grown by
//!   a giant build and then used for a few bytes is renewed after 80 to 100 takes of its
//!   slot; a buffer that fits its uses is kept, so renewal costs nothing at steady state.
//!   Budgets belong to slots, not to buffers (std's types carry no counter); a value
//!   released or evicted takes its slot's budget along, so the values above keep theirs.
//! - **Caps.** [`FreeLists::max_retained_bytes`] drops on the spot any value that would keep
//!   more than that many bytes; [`FreeLists::max_spare_bytes`] bounds the bytes of all spare
//!   values together; [`FreeLists::trim`] frees every spare buffer now.
//!
//! `tests/arena.rs` checks the bounds: after a build of 1,000 × 64 KiB strings, builds of 4
//! short ones keep at most 1.25 × their own bytes spare within 1,000 builds (the README has
//! the series by build count); a total limit holds after every recycle.
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
//! pool, while readers share the value. So [`FreeLists`] is `Send + Sync`, its `&self` methods
//! only read counts, and [`Recycled<T>`] is `Send` and `Sync` exactly when `T` is:
//!
//! ```
//! fn is_send_sync<T: Send + Sync>() {}
//! is_send_sync::<poolswap::recycle::FreeLists>();
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
//!     fn recycle_into(&mut self, _: &mut poolswap::FreeLists) {}
//!     fn retained_bytes(&self) -> usize { usize::from(*self.0) }
//! }
//! poolswap::FreeLists::new().recycle(Local(std::rc::Rc::new(1)));
//! ```
//! ```
//! struct Shared(std::sync::Arc<u8>);
//! impl poolswap::Recycle for Shared {
//!     fn recycle_into(&mut self, _: &mut poolswap::FreeLists) {}
//!     fn retained_bytes(&self) -> usize { usize::from(*self.0) }
//! }
//! poolswap::FreeLists::new().recycle(Shared(std::sync::Arc::new(1)));
//! ```
#![forbid(unsafe_code)]

use std::any::TypeId;
use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::ops::RangeInclusive;

mod copy;
mod free_list;
mod free_list_stats;
mod recycled;
mod renewal;
mod seen;
mod std_impls;

pub use self::copy::RecycleCopy;
pub(crate) use self::copy::{copy_map, Scratch};
use self::free_list::{find, find_or_add, Dropped, Entry, Taken};
pub use self::free_list_stats::FreeListStats;
pub use self::recycled::Recycled;
use self::renewal::Renewal;
pub use self::renewal::{DEFAULT_IDLE_CYCLES, DEFAULT_REUSES};
pub use self::std_impls::Recycle;

/// Free lists of spare values, one per type, with staggered renewal; see the
/// [module docs](self).
///
/// # Examples
///
/// ```
/// use poolswap::recycle::FreeLists;
///
/// let mut arena = FreeLists::new();
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
pub struct FreeLists {
    /// One entry per type ever recycled here (until [`trim`](FreeLists::trim)), in first-use
    /// order.
    lists: Vec<Entry>,
    /// Draws reuse budgets.
    renewal: Renewal,
    /// Values that would keep more bytes than this are dropped instead of kept.
    max_retained_bytes: usize,
    /// The spare values together keep at most this many bytes.
    max_spare_bytes: usize,
    /// The sum of the free lists' bytes, kept beside them so that a recycle checks
    /// `max_spare_bytes` without a walk.
    spare_bytes: usize,
    /// Cumulative counters (see [`FreeListStats`]).
    reused: u64,
    fresh: u64,
    renewed: Dropped,
    released_idle: Dropped,
    over_cap: Dropped,
    over_limit: Dropped,
}

impl FreeLists {
    /// Makes an empty arena with reuse budgets drawn from [`DEFAULT_REUSES`], idle values
    /// released after [`DEFAULT_IDLE_CYCLES`], and no cap on retained bytes.
    ///
    /// Allocates nothing; seeds its generator from std's `RandomState`, so arenas made one
    /// after another draw different budgets.
    ///
    /// # Examples
    ///
    /// ```
    /// let arena = poolswap::recycle::FreeLists::new();
    /// assert_eq!(arena.stats().spare, 0);
    /// ```
    pub fn new() -> FreeLists {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(0x0061_7265_6e61); // "arena": any input will do; the keys are random
        FreeLists {
            lists: Vec::new(),
            renewal: Renewal::new(h.finish(), Some(DEFAULT_REUSES)),
            max_retained_bytes: usize::MAX,
            max_spare_bytes: usize::MAX,
            spare_bytes: 0,
            reused: 0,
            fresh: 0,
            renewed: Dropped::default(),
            released_idle: Dropped::default(),
            over_cap: Dropped::default(),
            over_limit: Dropped::default(),
        }
    }

    /// Sets the range reuse budgets are drawn from (both ends included), for the slots
    /// whose budget is drawn from now on; see
    /// [renewal](self#renewal-and-release-the-memory-safeguards). A take spends one reuse,
    /// or `retained / (16 × used + 1,024)` (at most 64) from a value that wastes more; once
    /// the budget is spent, the next *oversized* value (more than 4 × its last use's bytes
    /// + 256) taken from the slot is renewed.
    ///
    /// Smaller budgets free oversized buffers sooner, at one allocation per renewal when
    /// the fresh value is filled; a buffer that fits its uses costs nothing either way.
    ///
    /// # Panics
    ///
    /// If the range is empty (`start > end`).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::FreeLists;
    ///
    /// let mut arena = FreeLists::new().renew_after(126..=126);
    /// let mut s = String::with_capacity(64 << 10);
    /// s.push('x'); // a use of 1 byte
    /// arena.recycle(s);
    /// for _ in 0..2 {
    ///     let mut s: String = arena.take(); // 65536 / (16 × 1 + 1024): spends 63...
    ///     assert_eq!(s.capacity(), 64 << 10);
    ///     s.push('y');
    ///     arena.recycle(s);
    /// }
    /// let s: String = arena.take(); // ...then renewed: freed, and a fresh one instead
    /// assert_eq!(s.capacity(), 0);
    /// assert_eq!((arena.stats().renewed, arena.stats().renewed_bytes), (1, 64 << 10));
    ///
    /// // A buffer that fits its use is kept when its budget is spent.
    /// let mut arena = FreeLists::new().renew_after(2..=2);
    /// arena.recycle(String::with_capacity(4096));
    /// for _ in 0..10 {
    ///     let mut s: String = arena.take();
    ///     assert_eq!(s.capacity(), 4096);
    ///     s.push_str(&"x".repeat(4000));
    ///     arena.recycle(s);
    /// }
    /// assert_eq!(arena.stats().renewed, 0);
    /// ```
    pub fn renew_after(mut self, reuses: RangeInclusive<u32>) -> FreeLists {
        assert!(
            reuses.start() <= reuses.end(),
            "FreeLists::renew_after: empty range {reuses:?}"
        );
        self.renewal.reuses = Some(reuses);
        self
    }

    /// Turns renewal off: oversized spare buffers are reused until their release when idle
    /// ([`release_idle_after`](FreeLists::release_idle_after)), [`trim`](FreeLists::trim), the caps
    /// or the arena's drop frees them.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::FreeLists;
    ///
    /// let mut arena = FreeLists::new().never_renew();
    /// arena.recycle(String::with_capacity(8));
    /// for _ in 0..10_000 {
    ///     let s: String = arena.take();
    ///     arena.recycle(s);
    /// }
    /// assert_eq!(arena.stats().renewed, 0);
    /// ```
    pub fn never_renew(mut self) -> FreeLists {
        self.renewal.reuses = None;
        self
    }

    /// Releases (drops) a spare value that no [`take`](FreeLists::take) reached for `cycles`
    /// whole cycles, a cycle being the time between two calls of
    /// [`renew_idle`](FreeLists::renew_idle) (one build, under [`Recycled::clear`]); the
    /// default is [`DEFAULT_IDLE_CYCLES`]. See
    /// [release](self#renewal-and-release-the-memory-safeguards).
    ///
    /// Costs: fewer cycles free a burst's leftovers sooner, and make a build that needs
    /// them again after that many cycles allocate them again (one allocation per value,
    /// or a few for one that grows while it is filled). `renew_idle` looks at each spare
    /// value once per cycle either way.
    ///
    /// # Panics
    ///
    /// If `cycles` is 0 (a value put in a cycle would be dropped at its end, unused).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::FreeLists;
    ///
    /// let mut arena = FreeLists::new().release_idle_after(2);
    /// arena.recycle(String::with_capacity(64)); // a build left one buffer nobody takes
    /// arena.renew_idle(); // the cycle in which it came...
    /// arena.renew_idle(); // ...one whole idle cycle...
    /// assert_eq!(arena.spare_len::<String>(), 1);
    /// arena.renew_idle(); // ...and two: released
    /// assert_eq!(arena.spare_len::<String>(), 0);
    /// assert_eq!(arena.stats().released_idle_bytes, 64);
    /// ```
    pub fn release_idle_after(mut self, cycles: u32) -> FreeLists {
        assert!(cycles > 0, "FreeLists::release_idle_after: 0 cycles");
        self.renewal.idle_cycles = Some(cycles);
        self
    }

    /// Never releases a spare value for being idle: a burst's leftovers stay until renewal,
    /// [`trim`](FreeLists::trim), the caps or the arena's drop frees them.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::FreeLists;
    ///
    /// let mut arena = FreeLists::new().never_release_idle();
    /// arena.recycle(String::with_capacity(64));
    /// for _ in 0..1_000 {
    ///     arena.renew_idle();
    /// }
    /// assert_eq!(arena.spare_len::<String>(), 1);
    /// ```
    pub fn never_release_idle(mut self) -> FreeLists {
        self.renewal.idle_cycles = None;
        self
    }

    /// Bounds the bytes of all spare values together (their
    /// [`retained_bytes`](Recycle::retained_bytes), `spare_bytes` in [`stats`](FreeLists::stats)):
    /// a [`recycle`](FreeLists::recycle) that would go over first evicts spare values recycled in
    /// earlier cycles, the longest unused first, and drops the value it was given if that
    /// does not make room. Values recycled in the cycle under way (the version just
    /// cleared) are never evicted for a later one, so a build that fits the limit reuses
    /// all its buffers.
    ///
    /// Costs: a build whose own buffers hold more than `bytes` allocates the excess on
    /// every build (one allocation per value dropped, as without an arena); evicting costs
    /// one step per value evicted. Without a limit (the default) the spare bytes are bounded
    /// only by idle release and renewal.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::FreeLists;
    ///
    /// let mut arena = FreeLists::new().max_spare_bytes(1 << 20);
    /// for _ in 0..100 {
    ///     arena.recycle(String::with_capacity(64 << 10)); // a burst of 6.4 MiB
    /// }
    /// let stats = arena.stats();
    /// assert!(stats.spare_bytes <= 1 << 20);
    /// assert_eq!((stats.spare, stats.over_limit), (16, 84));
    /// ```
    pub fn max_spare_bytes(mut self, bytes: usize) -> FreeLists {
        self.max_spare_bytes = bytes;
        self
    }

    /// Caps what one spare value may keep: a value whose
    /// [`retained_bytes`](Recycle::retained_bytes) exceed `bytes` is dropped when it is
    /// recycled instead of going to a free list ([`max_spare_bytes`](FreeLists::max_spare_bytes)
    /// bounds them all together).
    ///
    /// Costs: a build that needs a value that large allocates it every time.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::FreeLists;
    ///
    /// let mut arena = FreeLists::new().max_retained_bytes(1024);
    /// arena.recycle(String::with_capacity(1 << 20)); // one giant build: freed at once
    /// arena.recycle(String::with_capacity(64));
    /// assert_eq!(arena.stats().over_cap, 1);
    /// assert_eq!(arena.spare_len::<String>(), 1);
    /// ```
    pub fn max_retained_bytes(mut self, bytes: usize) -> FreeLists {
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
    /// use poolswap::recycle::FreeLists;
    ///
    /// let mut arena = FreeLists::new();
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
            Taken::Spare(value, bytes) => {
                self.spare_bytes -= bytes;
                self.reused += 1;
                value
            }
            Taken::Empty => {
                self.fresh += 1;
                T::default()
            }
            Taken::Renewed(bytes) => {
                self.spare_bytes -= bytes;
                self.renewed.add(bytes);
                T::default()
            }
        }
    }

    /// [`take`](FreeLists::take), preferring among the last 8 spare values one whose
    /// [`retained_bytes`](Recycle::retained_bytes) are at least `bytes`, so that filling
    /// it does not grow (reallocate) it: the topmost that retains at most half as many
    /// again (plus 8), else the one that retains the fewest, so that a short value does not
    /// take the buffer that a longer one taken next needs. Otherwise the same as `take`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::recycle::FreeLists::new();
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

    /// Takes a spare `String` and copies `s` into it: [`take_fitting`](FreeLists::take_fitting)
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
    /// let mut arena = poolswap::recycle::FreeLists::new();
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
    /// are not 0), no more than [`max_retained_bytes`](FreeLists::max_retained_bytes), and
    /// room is left or made under [`max_spare_bytes`](FreeLists::max_spare_bytes); otherwise
    /// it is dropped. Its [`used_bytes`](Recycle::used_bytes), read before it is cleared,
    /// are kept with it for renewal.
    ///
    /// Taking the value by move is what makes reuse safe: nothing can use it after this.
    /// Allocates only while a free list grows: the first value of a type allocates that
    /// type's list, and a list longer than ever before may grow.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::recycle::FreeLists::new();
    /// let words = vec![String::from("a"), String::from("b")];
    /// arena.recycle(words);
    /// assert_eq!(arena.spare_len::<Vec<String>>(), 1);
    /// assert_eq!(arena.spare_len::<String>(), 2);
    /// ```
    pub fn recycle<T: Recycle>(&mut self, mut value: T) {
        if T::PLAIN {
            return;
        }
        let used = value.used_bytes();
        value.recycle_into(self);
        let bytes = value.retained_bytes();
        if bytes == 0 {
            return;
        }
        if bytes > self.max_retained_bytes {
            self.over_cap.add(bytes);
            return;
        }
        if bytes > self.spare_room() && !self.make_room(bytes) {
            self.over_limit.add(bytes);
            return;
        }
        // Always `Some`: see `find_or_add`.
        if let Some(list) = find_or_add::<T>(&mut self.lists) {
            list.put(value, used, bytes, &mut self.renewal);
            self.spare_bytes += bytes;
        }
    }

    /// Bytes that may still be added under `max_spare_bytes` (0 if a limit set on an arena
    /// already fuller than it is exceeded).
    fn spare_room(&self) -> usize {
        self.max_spare_bytes.saturating_sub(self.spare_bytes)
    }

    /// Evicts spare values of earlier cycles until `bytes` more fit under
    /// `max_spare_bytes`; returns whether they do.
    #[cold]
    fn make_room(&mut self, bytes: usize) -> bool {
        if bytes > self.max_spare_bytes {
            return false;
        }
        for e in &mut self.lists {
            let need = (self.spare_bytes + bytes) - self.max_spare_bytes;
            let evicted = e.list.evict_idle(need, &self.renewal);
            self.spare_bytes -= evicted.bytes;
            self.over_limit.values += evicted.values;
            self.over_limit.bytes += evicted.bytes;
            if self.spare_bytes + bytes <= self.max_spare_bytes {
                return true;
            }
        }
        false
    }

    /// Ends a cycle: every spare value that no [`take`](FreeLists::take) reached for
    /// [`release_idle_after`](FreeLists::release_idle_after) whole cycles is released
    /// (dropped). [`Recycled::clear`] calls it once per reset; call it once per build when
    /// you use an arena by hand.
    ///
    /// Costs one step per spare value; allocates nothing. Under
    /// [`never_release_idle`](FreeLists::never_release_idle) it only counts the cycle.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::{FreeLists, DEFAULT_IDLE_CYCLES};
    ///
    /// let mut arena = FreeLists::new();
    /// arena.recycle(String::with_capacity(8)); // a burst left one buffer nobody takes
    /// for _ in 0..DEFAULT_IDLE_CYCLES {
    ///     arena.renew_idle(); // the cycle in which it came, then idle ones...
    /// }
    /// assert_eq!(arena.spare_len::<String>(), 1);
    /// arena.renew_idle(); // ...until it was idle DEFAULT_IDLE_CYCLES whole cycles
    /// assert_eq!(arena.spare_len::<String>(), 0);
    /// ```
    pub fn renew_idle(&mut self) {
        for e in &mut self.lists {
            let released = e.list.release_idle(&self.renewal);
            self.spare_bytes -= released.bytes;
            self.released_idle.values += released.values;
            self.released_idle.bytes += released.bytes;
        }
        self.renewal.cycle = self.renewal.cycle.wrapping_add(1);
    }

    /// Drops every spare value now, freeing their memory; the arena stays usable and its
    /// counters are kept.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::recycle::FreeLists::new();
    /// arena.recycle(String::with_capacity(8));
    /// arena.trim();
    /// assert_eq!(arena.stats().spare, 0);
    /// ```
    pub fn trim(&mut self) {
        self.lists = Vec::new();
        self.spare_bytes = 0;
    }

    /// How many spare values of type `T` the arena holds.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::recycle::FreeLists::new();
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
    /// The bytes released by renewal, by idle release and by the caps are in
    /// [`FreeListStats`] too.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut arena = poolswap::recycle::FreeLists::new();
    /// arena.recycle(String::with_capacity(100));
    /// assert_eq!(arena.stats().spare_bytes, 100);
    /// ```
    pub fn stats(&self) -> FreeListStats {
        // The deprecated `retired` is filled in for those who still read it.
        #[allow(deprecated)]
        let mut stats = FreeListStats {
            spare_bytes: self.spare_bytes,
            reused: self.reused,
            fresh: self.fresh,
            renewed: self.renewed.values,
            renewed_bytes: self.renewed.bytes,
            retired: self.renewed.values,
            released_idle: self.released_idle.values,
            released_idle_bytes: self.released_idle.bytes,
            over_cap: self.over_cap.values,
            over_cap_bytes: self.over_cap.bytes,
            over_limit: self.over_limit.values,
            over_limit_bytes: self.over_limit.bytes,
            ..FreeListStats::default()
        };
        for e in &self.lists {
            stats.spare += e.list.len();
        }
        debug_assert_eq!(
            self.spare_bytes,
            self.lists.iter().map(|e| e.list.bytes()).sum::<usize>()
        );
        stats
    }
}

/// The renewal settings' former names, which said "retire": in this crate that word is the
/// hazard list's, for a swapped-out version waiting until no reader protects it.
impl FreeLists {
    /// Former name of [`FreeLists::renew_after`], which it calls.
    #[deprecated(since = "0.1.0", note = "renamed to `FreeLists::renew_after`")]
    pub fn retire_after(self, reuses: RangeInclusive<u32>) -> FreeLists {
        self.renew_after(reuses)
    }

    /// Former name of [`FreeLists::never_renew`], which it calls.
    #[deprecated(since = "0.1.0", note = "renamed to `FreeLists::never_renew`")]
    pub fn never_retire(self) -> FreeLists {
        self.never_renew()
    }

    /// Former name of [`FreeLists::renew_idle`], which it calls.
    #[deprecated(since = "0.1.0", note = "renamed to `FreeLists::renew_idle`")]
    pub fn retire_idle(&mut self) {
        self.renew_idle();
    }
}

impl Default for FreeLists {
    /// Same as [`FreeLists::new`].
    fn default() -> FreeLists {
        FreeLists::new()
    }
}

impl fmt::Debug for FreeLists {
    /// Prints the spare count per type and the settings; never the generator's state.
    ///
    /// ```
    /// let mut arena = poolswap::recycle::FreeLists::new();
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
        f.debug_struct("FreeLists")
            .field("spare", &Lists(&self.lists))
            .field("spare_bytes", &self.spare_bytes)
            .field("reuses", &self.renewal.reuses)
            .field("idle_cycles", &self.renewal.idle_cycles)
            .field("max_retained_bytes", &self.max_retained_bytes)
            .field("max_spare_bytes", &self.max_spare_bytes)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_sized_and_plain_values_are_not_kept() {
        let mut arena = FreeLists::new();
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
        let mut arena = FreeLists::new().retire_after(1..=1);
        assert_eq!(arena.renewal.reuses, Some(1..=1));
        arena.recycle(String::with_capacity(1024)); // empty: oversized for its last use
        let s: String = arena.take(); // spends the budget
        arena.recycle(s);
        let _: String = arena.take(); // renewed
        let stats = arena.stats();
        assert_eq!((stats.renewed, stats.retired, stats.spare), (1, 1, 0));
        arena.retire_idle();
        assert_eq!(arena.renewal.cycle, 1);
        assert_eq!(FreeLists::new().never_retire().renewal.reuses, None);
    }
}
