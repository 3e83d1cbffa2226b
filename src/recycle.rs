//! Free lists of spare buffers, one list per type: a pool reset that keeps the buffers
//! *inside* a version, not only the version's own. Go's [protopool], with std's collections.
//!
//! A reset that calls `clear()` keeps a collection's own buffer and drops what it holds:
//! refilling a `HashMap<String, Vec<String>>` allocates every `String` and every `Vec`
//! again, one allocation each. Here the nested buffers wait, cleared and with their
//! capacity, in free lists, and the refill takes them back.
//!
//! - [`FreeLists`] holds the free lists: spare `String`s, spare `Vec<String>`s, spare
//!   values of your own types. [`take`](FreeLists::take) hands one out (or
//!   `T::default()`), [`recycle`](FreeLists::recycle) puts one in.
//! - [`Recycle`] is how a type is cleared into free lists: it empties itself in place and
//!   moves what it owns (a `Vec`'s elements, an `Option`'s content) into them. Implemented
//!   for std's collections, `Option`, `Box`, tuples, arrays and the scalars;
//!   [`impl_recycle!`](crate::impl_recycle) writes it for a struct.
//! - [`RecycleCopy`] makes a value equal to another from spare buffers (for
//!   [`Container::rcu`](crate::Container::rcu)).
//! - [`Recycled<T>`] is a value plus its own free lists, made to be a pooled
//!   [`Container`](crate::Container) version: its [`clear`](Recycled::clear) is the pool's
//!   reset, and the writer's refill takes the buffers back through
//!   [`Recycled::parts_mut`].
//!
//! [protopool]: https://github.com/jussi-kalliokoski/protopool
//!
//! # Example
//!
//! ```
//! use std::collections::HashMap;
//! use poolswap::{Container, Pool, Recycled};
//!
//! type Routes = Recycled<HashMap<String, Vec<String>>>;
//!
//! /// Parses `key=backend,backend,...` lines, every buffer taken from the free lists.
//! fn refill(routes: &mut Routes, text: &str) {
//!     let (map, lists) = Recycled::parts_mut(routes);
//!     for line in text.lines() {
//!         let (key, backends) = line.split_once('=').unwrap();
//!         let mut list: Vec<String> = lists.take(); // cleared, with its capacity
//!         list.extend(backends.split(',').map(|b| lists.string_from(b)));
//!         map.insert(lists.string_from(key), list);
//!     }
//! }
//!
//! let pool = Pool::new(Routes::default, |r| { r.clear(); true });
//! let routes = Container::from_value(&pool, Routes::default());
//! for version in 0..10 {
//!     let mut next = routes.get_new(); // cleared into its free lists by the pool's reset
//!     refill(&mut next, &format!("/api=a{version},b,c\n/web=d,e,f"));
//!     routes.update(next);
//! }
//! assert_eq!(routes.acquire()["/api"], ["a9", "b", "c"]);
//!
//! // The next version comes cleared: its 2 keys, 2 lists and 6 backends wait in its lists.
//! let next = routes.get_new();
//! assert!(next.is_empty());
//! let spare = Recycled::free_lists(&*next);
//! assert_eq!((spare.spare_len::<String>(), spare.spare_len::<Vec<String>>()), (8, 2));
//! ```
//!
//! # Ownership instead of discipline
//!
//! protopool's `Value.Reset` rewinds its stores, so a pointer kept from before the reset
//! reads someone else's data. Here a value enters a free list only by being *moved* in
//! ([`FreeLists::recycle`], or a [`Recycle::recycle_into`] that moves a collection's
//! elements out), and [`Recycled::clear`] takes `&mut self`: nothing handed out before a
//! clear can be used after it, and the compiler checks it. In a container, a version is
//! reset only after its last guard is dropped. The module has no `unsafe` code.
//!
//! ```compile_fail
//! let mut lists = poolswap::recycle::FreeLists::new();
//! let name = String::from("route");
//! lists.recycle(name);
//! assert_eq!(name, "route"); // error: `name` was moved into the free lists
//! ```
//! ```compile_fail
//! let mut routes = poolswap::Recycled::new(vec![String::from("a")]);
//! let first = &routes[0];
//! routes.clear(); // error: `routes` is borrowed by `first`
//! assert_eq!(first, "a");
//! ```
//! ```
//! let mut routes = poolswap::Recycled::new(vec![String::from("a")]);
//! routes.clear();
//! let (list, lists) = poolswap::Recycled::parts_mut(&mut routes);
//! let again: String = lists.take(); // the buffer that held "a", now empty
//! assert!(again.is_empty() && again.capacity() >= 1);
//! list.push(again);
//! ```
//!
//! # Costs
//!
//! No lock and no atomic operation: free lists are used through `&mut`. A take or a
//! recycle finds its type's list by a linear scan of the types seen so far (one
//! [`TypeId`] comparison each), then pops or pushes one value: O(types) + O(1).
//! [`take`](FreeLists::take) never allocates; [`recycle`](FreeLists::recycle) allocates
//! only while a list grows (a type's first value, a list longer than ever before).
//! Filling a taken buffer allocates only if it needs more capacity than the buffer has, so
//! each buffer grows until it fits the longest use it meets and then stops: at steady
//! state a refill allocates nothing.
//!
//! # Bounding memory
//!
//! Reuse ratchets memory up: a buffer keeps the capacity of the largest thing it held, a
//! list as many buffers as the largest build gave back. protopool replaces each pooled
//! value after a random 5,000 to 6,000 uses; here three rules free what the builds no
//! longer need, each counted in [`FreeListStats`]:
//!
//! - **Idle values are released.** A *cycle* is one [`Recycled::clear`] to the next (one
//!   build of that version). A spare value that no take reached for 100 whole cycles
//!   ([`release_idle_after`](FreeLists::release_idle_after)) is dropped at the end of a
//!   cycle: a burst's leftovers go once the builds stop using them.
//! - **Oversized values are renewed.** Each position of a free list's stack has a *reuse
//!   budget*, drawn uniformly from 5,000 to 6,000 takes
//!   ([`renew_after`](FreeLists::renew_after)) by a splitmix64 generator (Steele, Lea and
//!   Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014), so that
//!   positions come due at different times. A take spends one reuse, or up to 64 from a
//!   value that holds far more than its last use needed ([`Recycle::used_bytes`]). Once
//!   the budget is spent, the next *oversized* value taken from that position (more than
//!   4 × its last use + 256 bytes) is *renewed*: dropped, and `T::default()` handed out
//!   instead. A buffer that fits its uses is never renewed.
//! - **Caps.** [`max_retained_bytes`](FreeLists::max_retained_bytes) drops any value that
//!   would keep more than that; [`max_spare_bytes`](FreeLists::max_spare_bytes) bounds all
//!   spare values together; [`trim`](FreeLists::trim) frees every spare value now.
//!
//! A bump allocator (bumpalo) frees everything at once, but its collections borrow it and
//! cannot outlive it as a published version; this module keeps std's types.
//!
//! # Send and Sync
//!
//! [`Recycle`] requires `Send + Sync + 'static` (the lists are found by [`TypeId`], and
//! they travel with their [`Recycled`] value between the writer's thread and the pool while
//! readers share the value). So [`FreeLists`] is `Send + Sync`, and [`Recycled<T>`] is
//! `Send` and `Sync` exactly when `T` is:
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
//! A type that may not cross threads cannot implement [`Recycle`]:
//!
//! ```compile_fail
//! use poolswap::recycle::{FreeLists, Recycle};
//! struct Local(std::rc::Rc<u8>);
//! impl Recycle for Local {
//!     fn recycle_into(&mut self, _: &mut FreeLists) {}
//!     fn retained_bytes(&self) -> usize { usize::from(*self.0) }
//! }
//! FreeLists::new().recycle(Local(std::rc::Rc::new(1)));
//! ```
//! ```
//! use poolswap::recycle::{FreeLists, Recycle};
//! struct Shared(std::sync::Arc<u8>);
//! impl Recycle for Shared {
//!     fn recycle_into(&mut self, _: &mut FreeLists) {}
//!     fn retained_bytes(&self) -> usize { usize::from(*self.0) }
//! }
//! FreeLists::new().recycle(Shared(std::sync::Arc::new(1)));
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
pub(crate) mod recycled;
mod renewal;
mod seen;
mod std_impls;

pub use self::copy::RecycleCopy;
pub(crate) use self::copy::{copy_map, Scratch};
use self::free_list::{find, find_or_add, Dropped, Entry, Taken};
pub use self::free_list_stats::FreeListStats;
pub(crate) use self::recycled::Recycled;
use self::renewal::{Renewal, DEFAULT_REUSES};
pub use self::std_impls::Recycle;

/// Free lists of spare values, one list per type, each value cleared and with its
/// capacity; see the [module docs](self).
///
/// # Examples
///
/// ```
/// use poolswap::recycle::FreeLists;
///
/// let mut lists = FreeLists::new();
/// let mut s = String::with_capacity(256);
/// s.push_str("hello");
/// lists.recycle(s); // moved in: no one can use it any more
///
/// let s: String = lists.take(); // the same buffer, cleared
/// assert!(s.is_empty() && s.capacity() >= 256);
/// let t: String = lists.take(); // the list is empty: a fresh String
/// assert_eq!(t.capacity(), 0);
/// ```
///
/// # Costs
///
/// A take or a recycle finds its type's list by a linear scan of the types seen so far
/// (one [`TypeId`] comparison each) and pops or pushes one value. No lock, no atomic
/// operation; what allocates is on each method.
///
/// # Send and Sync
///
/// `Send + Sync`: every value it keeps is (see [`Recycle`]), and `&self` only reads counts.
pub struct FreeLists {
    /// One entry per type recycled here since the last [`trim`](FreeLists::trim), in
    /// first-use order.
    lists: Vec<Entry>,
    /// The renewal and release settings, the cycle count, and the generator that draws
    /// reuse budgets.
    renewal: Renewal,
    /// A value that would keep more bytes than this is dropped instead of kept.
    max_retained_bytes: usize,
    /// The spare values together keep at most this many bytes.
    max_spare_bytes: usize,
    /// The sum of the lists' bytes, kept beside them so that a recycle checks
    /// `max_spare_bytes` without a walk.
    spare_bytes: usize,
    /// Counters since the free lists were made (see [`FreeListStats`]).
    reused: u64,
    fresh: u64,
    renewed: Dropped,
    released_idle: Dropped,
    over_cap: Dropped,
    over_limit: Dropped,
}

impl FreeLists {
    /// Makes empty free lists: reuse budgets of 5,000 to 6,000 takes, idle values released
    /// after 100 cycles, no cap on bytes.
    ///
    /// Allocates nothing; seeds its generator from std's `RandomState`, so free lists made
    /// one after another draw different budgets.
    ///
    /// # Examples
    ///
    /// ```
    /// let lists = poolswap::recycle::FreeLists::new();
    /// assert_eq!(lists.stats().spare, 0);
    /// ```
    pub fn new() -> FreeLists {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(0x0061_7265_6e61); // any input will do: the hasher's keys are random
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

    /// Sets the range reuse budgets are drawn from (both ends included) for the budgets
    /// drawn from now on, or turns renewal off (`None`); the default is `5_000..=6_000`.
    /// See [bounding memory](self#bounding-memory).
    ///
    /// A take spends one reuse, or `retained / (16 × used + 1,024)` (at most 64) from a
    /// value that wastes more; once a budget is spent, the next oversized value taken from
    /// its position (more than 4 × its last use + 256 bytes) is renewed. Smaller budgets
    /// free oversized buffers sooner, at one allocation per renewal when the fresh value is
    /// filled. With `None`, oversized buffers stay until idle release, the caps,
    /// [`trim`](FreeLists::trim) or the drop of the free lists.
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
    /// let mut lists = FreeLists::new().renew_after(Some(126..=126));
    /// let mut s = String::with_capacity(64 << 10);
    /// s.push('x'); // a use of 1 byte
    /// lists.recycle(s);
    /// for _ in 0..2 {
    ///     let mut s: String = lists.take(); // 65536 / (16 × 1 + 1024): spends 63...
    ///     assert_eq!(s.capacity(), 64 << 10);
    ///     s.push('y');
    ///     lists.recycle(s);
    /// }
    /// let s: String = lists.take(); // ...then renewed: freed, and a fresh one instead
    /// assert_eq!(s.capacity(), 0);
    /// assert_eq!(lists.stats().renewed, 1);
    ///
    /// // A buffer that fits its use is kept when its budget is spent.
    /// let mut lists = FreeLists::new().renew_after(Some(2..=2));
    /// lists.recycle(String::with_capacity(4096));
    /// for _ in 0..10 {
    ///     let mut s: String = lists.take();
    ///     assert_eq!(s.capacity(), 4096);
    ///     s.push_str(&"x".repeat(4000));
    ///     lists.recycle(s);
    /// }
    /// assert_eq!(lists.stats().renewed, 0);
    ///
    /// // Renewal off: an empty 1 KiB buffer, oversized for its use of 0 bytes, is kept.
    /// let mut lists = FreeLists::new().renew_after(None);
    /// lists.recycle(String::with_capacity(1024));
    /// for _ in 0..10_000 {
    ///     let s: String = lists.take();
    ///     lists.recycle(s);
    /// }
    /// assert_eq!(lists.stats().renewed, 0);
    /// ```
    #[track_caller]
    pub fn renew_after(mut self, reuses: Option<RangeInclusive<u32>>) -> FreeLists {
        if let Some(r) = &reuses {
            assert!(
                r.start() <= r.end(),
                "FreeLists::renew_after: empty range {r:?}"
            );
        }
        self.renewal.reuses = reuses;
        self
    }

    /// Releases (drops) a spare value that no [`take`](FreeLists::take) reached for
    /// `cycles` whole cycles, or never (`None`); the default is 100. A cycle runs from one
    /// [`Recycled::clear`] to the next (one build); free lists used outside a `Recycled`
    /// count no cycles and release nothing for being idle. See
    /// [bounding memory](self#bounding-memory).
    ///
    /// Fewer cycles free a burst's leftovers sooner, and make a build that needs them again
    /// after that many cycles allocate them again. Ending a cycle looks at each spare value
    /// once either way.
    ///
    /// # Panics
    ///
    /// If `cycles` is `Some(0)` (a value put in a cycle would be dropped at its end, unused).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{recycle::FreeLists, Recycled};
    ///
    /// let lists = FreeLists::new().release_idle_after(Some(2));
    /// let mut r = Recycled::with_free_lists(vec![String::with_capacity(64)], lists);
    /// r.clear(); // the buffer goes to the free lists: a build that does not take it...
    /// r.clear(); // ...ends the cycle in which it came...
    /// r.clear(); // ...then one whole idle cycle...
    /// assert_eq!(Recycled::free_lists(&r).spare_len::<String>(), 1);
    /// r.clear(); // ...and two: released
    /// assert_eq!(Recycled::free_lists(&r).spare_len::<String>(), 0);
    /// assert_eq!(Recycled::free_lists(&r).stats().released_idle, 1);
    /// ```
    #[track_caller]
    pub fn release_idle_after(mut self, cycles: Option<u32>) -> FreeLists {
        assert!(cycles != Some(0), "FreeLists::release_idle_after: 0 cycles");
        self.renewal.idle_cycles = cycles;
        self
    }

    /// Bounds the bytes of all spare values together (their
    /// [`retained_bytes`](Recycle::retained_bytes), `spare_bytes` in
    /// [`stats`](FreeLists::stats)); the default is no bound. A
    /// [`recycle`](FreeLists::recycle) that would go over first evicts spare values recycled
    /// in earlier cycles, the longest unused first, and drops the value it was given if
    /// that does not make room. Values recycled in the cycle under way are never evicted
    /// for another, so a build that fits the bound reuses all its buffers.
    ///
    /// A build whose own buffers hold more than `bytes` allocates the excess on every
    /// build; evicting costs one step per value evicted.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::FreeLists;
    ///
    /// let mut lists = FreeLists::new().max_spare_bytes(1 << 20);
    /// for _ in 0..100 {
    ///     lists.recycle(String::with_capacity(64 << 10)); // a burst of 6.4 MiB
    /// }
    /// let stats = lists.stats();
    /// assert!(stats.spare_bytes <= 1 << 20);
    /// assert_eq!((stats.spare, stats.over_limit), (16, 84));
    /// ```
    pub fn max_spare_bytes(mut self, bytes: usize) -> FreeLists {
        self.max_spare_bytes = bytes;
        self
    }

    /// Caps what one spare value may keep; the default is no cap. A value whose
    /// [`retained_bytes`](Recycle::retained_bytes) exceed `bytes` is dropped when it is
    /// recycled instead of kept, so a build that needs a value that large allocates it
    /// every time.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::recycle::FreeLists;
    ///
    /// let mut lists = FreeLists::new().max_retained_bytes(1024);
    /// lists.recycle(String::with_capacity(1 << 20)); // one giant build: freed at once
    /// lists.recycle(String::with_capacity(64));
    /// assert_eq!(lists.stats().over_cap, 1);
    /// assert_eq!(lists.spare_len::<String>(), 1);
    /// ```
    pub fn max_retained_bytes(mut self, bytes: usize) -> FreeLists {
        self.max_retained_bytes = bytes;
        self
    }

    /// Hands out a spare `T`, cleared, with its capacity; or `T::default()` when the list
    /// of `T` is empty or the spare value on top is renewed (dropped).
    ///
    /// O(types seen) to find the list, then O(1). Allocates nothing (`T::default()`
    /// allocates nothing for std's collections); a renewal frees one value.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::recycle::FreeLists;
    ///
    /// let mut lists = FreeLists::new();
    /// let mut m = HashMap::with_capacity(100);
    /// m.insert(1u32, String::from("one"));
    /// lists.recycle(m); // the map goes to its list, its String to another
    ///
    /// let m: HashMap<u32, String> = lists.take();
    /// assert!(m.is_empty() && m.capacity() >= 100);
    /// let s: String = lists.take();
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

    /// [`take`](FreeLists::take), preferring among the top 8 spare values one whose
    /// [`retained_bytes`](Recycle::retained_bytes) are at least `bytes`, so that filling
    /// it does not grow it: the topmost that retains at most half as many again (plus 8),
    /// else the one that retains the fewest, so that a short value does not take the
    /// buffer a longer one taken next needs. Costs up to 8 `retained_bytes` calls more.
    pub(crate) fn take_fitting<T: Recycle + Default>(&mut self, bytes: usize) -> T {
        if let Some(list) = find::<T>(&mut self.lists) {
            list.fit_top(bytes);
        }
        self.take()
    }

    /// Takes a spare `String` and copies `s` into it, preferring among the top 8 spare
    /// strings the one that fits `s` closest without growing.
    ///
    /// Allocates only if none of those has room for `s` (or there is none and `s` is not
    /// empty); it then reserves the next power of two at or above `s.len()`, a size class
    /// as allocators use, so that the buffer fits later strings of about that length
    /// without growing again (at most twice the bytes of `s`). Costs O(types seen), a look
    /// at up to 8 spare capacities, and the copy.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut lists = poolswap::recycle::FreeLists::new();
    /// lists.recycle(String::with_capacity(64));
    /// lists.recycle(String::with_capacity(8));
    /// let s = lists.string_from("hello, world");
    /// assert_eq!((s.as_str(), s.capacity()), ("hello, world", 64)); // not the 8-byte one
    /// // Nothing with room: a new buffer, rounded up to a size class.
    /// let t = lists.string_from("backend-7-a");
    /// assert_eq!(t.capacity(), 16);
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

    /// Clears `value` into these free lists and keeps it in the list of `T`: its nested
    /// values go to their own lists (by [`Recycle::recycle_into`]), and the value itself is
    /// kept if it still holds memory (its [`retained_bytes`](Recycle::retained_bytes) are
    /// not 0), no more than [`max_retained_bytes`](FreeLists::max_retained_bytes), and room
    /// is left or made under [`max_spare_bytes`](FreeLists::max_spare_bytes); otherwise it
    /// is dropped. Its [`used_bytes`](Recycle::used_bytes), read before it is cleared, are
    /// kept with it for renewal.
    ///
    /// Taking the value by move is what makes reuse safe: nothing can use it after this.
    /// Costs `recycle_into`, O(types seen) to find the list, and a push; allocates only
    /// while a list grows (the first value of a type, a list longer than ever before).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut lists = poolswap::recycle::FreeLists::new();
    /// lists.recycle(vec![String::from("a"), String::from("b")]);
    /// assert_eq!(lists.spare_len::<Vec<String>>(), 1);
    /// assert_eq!(lists.spare_len::<String>(), 2);
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

    /// Bytes that may still be added under `max_spare_bytes` (0 if the spare values
    /// already exceed it).
    fn spare_room(&self) -> usize {
        self.max_spare_bytes.saturating_sub(self.spare_bytes)
    }

    /// Evicts spare values of earlier cycles until `bytes` more fit under
    /// `max_spare_bytes`; returns whether they do. One step per value evicted, plus one
    /// per list looked at.
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

    /// Ends a cycle ([`Recycled::clear`] calls it once per reset): every spare value that
    /// no take reached for the `release_idle_after` cycles is released (dropped), then the
    /// cycle count moves on. One step per spare value; allocates nothing.
    pub(crate) fn end_cycle(&mut self) {
        for e in &mut self.lists {
            let released = e.list.release_idle(&self.renewal);
            self.spare_bytes -= released.bytes;
            self.released_idle.values += released.values;
            self.released_idle.bytes += released.bytes;
        }
        self.renewal.cycle = self.renewal.cycle.wrapping_add(1);
    }

    /// Drops every spare value now, freeing their memory; the settings and the counters
    /// are kept. O(spare values); allocates nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut lists = poolswap::recycle::FreeLists::new();
    /// lists.recycle(String::with_capacity(8));
    /// lists.trim();
    /// assert_eq!(lists.stats().spare, 0);
    /// ```
    pub fn trim(&mut self) {
        self.lists = Vec::new();
        self.spare_bytes = 0;
    }

    /// How many spare values of type `T` the free lists hold. O(types seen).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut lists = poolswap::recycle::FreeLists::new();
    /// lists.recycle(vec![0u8; 4]);
    /// assert_eq!(lists.spare_len::<Vec<u8>>(), 1);
    /// assert_eq!(lists.spare_len::<String>(), 0);
    /// ```
    pub fn spare_len<T: Recycle>(&self) -> usize {
        let id = TypeId::of::<T>();
        self.lists
            .iter()
            .find(|e| e.id == id)
            .map_or(0, |e| e.list.len())
    }

    /// Reads the counters. O(types seen); allocates nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut lists = poolswap::recycle::FreeLists::new();
    /// lists.recycle(String::with_capacity(100));
    /// assert_eq!(lists.stats().spare_bytes, 100);
    /// ```
    pub fn stats(&self) -> FreeListStats {
        let mut stats = FreeListStats {
            spare_bytes: self.spare_bytes,
            reused: self.reused,
            fresh: self.fresh,
            renewed: self.renewed.values,
            released_idle: self.released_idle.values,
            over_cap: self.over_cap.values,
            over_limit: self.over_limit.values,
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
    /// let mut lists = poolswap::recycle::FreeLists::new();
    /// lists.recycle(String::with_capacity(4));
    /// assert!(format!("{lists:?}").contains("alloc::string::String\": 1"));
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
        let mut lists = FreeLists::new();
        lists.recycle(5u32);
        lists.recycle(Some(3u8));
        lists.recycle(Vec::<u8>::new());
        lists.recycle(((), 1u8));
        assert_eq!(lists.stats().spare, 0);
        assert!(lists.lists.is_empty());
    }

    /// The defaults the setters' docs state.
    #[test]
    fn defaults_are_the_documented_ones() {
        let lists = FreeLists::new();
        assert_eq!(lists.renewal.reuses, Some(5_000..=6_000));
        assert_eq!(lists.renewal.idle_cycles, Some(100));
        assert_eq!(
            (lists.max_retained_bytes, lists.max_spare_bytes),
            (usize::MAX, usize::MAX)
        );
    }

    /// `None` turns renewal and idle release off; a value idle for the default 100 whole
    /// cycles is released at the end of the next (`end_cycle` is what `Recycled::clear`
    /// calls).
    #[test]
    fn none_turns_renewal_and_release_off() {
        let mut lists = FreeLists::new().renew_after(None).release_idle_after(None);
        assert_eq!(
            (&lists.renewal.reuses, lists.renewal.idle_cycles),
            (&None, None)
        );
        lists.recycle(String::with_capacity(64));
        for _ in 0..1_000 {
            lists.end_cycle();
        }
        assert_eq!(lists.spare_len::<String>(), 1);

        let mut lists = FreeLists::new();
        lists.recycle(String::with_capacity(8));
        for _ in 0..100 {
            lists.end_cycle(); // the cycle in which it came, then 99 idle ones...
        }
        assert_eq!(lists.spare_len::<String>(), 1);
        lists.end_cycle(); // ...until it was idle 100 whole cycles
        assert_eq!(lists.spare_len::<String>(), 0);
    }

    #[test]
    #[should_panic(expected = "empty range")]
    fn an_empty_budget_range_panics() {
        #[allow(clippy::reversed_empty_ranges)]
        let _ = FreeLists::new().renew_after(Some(2..=1));
    }

    #[test]
    #[should_panic(expected = "0 cycles")]
    fn zero_idle_cycles_panic() {
        let _ = FreeLists::new().release_idle_after(Some(0));
    }

    /// A short string takes the spare that fits it best among the top few, not the
    /// topmost that fits.
    #[test]
    fn take_fitting_prefers_the_closest_fit() {
        let mut lists = FreeLists::new();
        lists.recycle(String::with_capacity(64));
        lists.recycle(String::with_capacity(20));
        let s: String = lists.take_fitting(16); // within half as much again: at once
        assert_eq!(s.capacity(), 20);
        lists.recycle(String::with_capacity(8));
        let s: String = lists.take_fitting(30); // the 8-byte one on top is too short
        assert_eq!(s.capacity(), 64);
    }
}
