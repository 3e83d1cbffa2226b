//! Hot-swap a heavy, read-mostly object — a cache, a routing table, a configuration —
//! without blocking readers and without allocating on update.
//!
//! A Rust port of the Go library [`keilerkonzept/poolswap`](https://github.com/keilerkonzept/poolswap):
//! a [`Container`] holds the current version of an object; readers [`acquire`] a [`Guard`]
//! on it without waiting for writers; a writer takes a recycled object from a [`Pool`] with
//! [`get_new`], fills it, and publishes it with [`update`]. The old version goes back to the
//! pool only after its last guard is dropped, so no reader ever sees a recycled object, and
//! at steady state an update allocates nothing.
//!
//! [`acquire`]: Container::acquire
//! [`get_new`]: Container::get_new
//! [`update`]: Container::update
//!
//! # Why
//!
//! - `RwLock<T>` updated in place allocates nothing, but readers wait for the whole refill.
//! - `RwLock<Arc<T>>` or [arc-swap](https://docs.rs/arc-swap) swap in a new `Arc<T>`: readers
//!   never wait, but every update allocates a new object (for a 100k-entry map, megabytes)
//!   and the old one is freed by whichever thread drops the last `Arc` — possibly a reader.
//! - poolswap swaps too, but the objects are recycled through a pool: the refill reuses the
//!   memory of a version nobody reads any more, and clearing it (the pool's reset) runs on
//!   the writer's thread, when the writer asks for it.
//!
//! # Example
//!
//! A routing table of owned strings. [`Recycled`] keeps the map's table *and* its `String`s
//! and `Vec`s (in its [`FreeLists`]) across updates, so once warm a refill allocates nothing.
//!
//! ```
//! use std::collections::HashMap;
//! use std::fmt::Write;
//! use std::thread;
//! use poolswap::{Container, Pool, Recycled};
//!
//! type Routes = Recycled<HashMap<String, Vec<String>>>;
//!
//! let pool = Pool::new(Routes::default, Routes::clear); // reset: keep the buffers
//! let routes = Container::from_value(&pool, Routes::default());
//!
//! thread::scope(|s| {
//!     s.spawn(|| {
//!         for version in 0..100 {
//!             let mut next = routes.get_new(); // recycled and cleared, or new
//!             let (map, arena) = Recycled::parts_mut(&mut next);
//!             let mut backend: String = arena.take(); // a spare String, or a new one
//!             write!(backend, "10.0.0.{}:80", version % 4).unwrap();
//!             let mut backends: Vec<String> = arena.take();
//!             backends.push(backend);
//!             map.insert(arena.string_from("/api"), backends);
//!             routes.update(next); // the old table returns to the pool after its last reader
//!         }
//!     });
//!     s.spawn(|| {
//!         for _ in 0..100 {
//!             let table = routes.acquire(); // a Guard: the version stays put while held
//!             if let Some(backends) = table.get("/api") {
//!                 assert!(backends[0].starts_with("10.0.0."));
//!             }
//!         }
//!     });
//! });
//! assert_eq!(routes.acquire()["/api"][0], "10.0.0.3:80");
//! // A handful of tables served 100 versions.
//! assert!(routes.pool().stats().created <= 8);
//! ```
//!
//! # Changing a few entries of a big table
//!
//! A whole-version update copies or rebuilds the whole table. When each update changes a
//! few entries, a [`oplog::OpLog`] publishes the *operations* instead: it replays them on
//! a recycled version (the batches that version missed, then the new one) and swaps it in,
//! so an update costs the change, not the table, readers see each batch whole, and the
//! writer never waits for a reader. Readers use the same [`Container`] and [`Guard`]:
//!
//! ```
//! use std::collections::HashMap;
//! use poolswap::oplog::{OpLog, MapOp};
//!
//! let table: HashMap<u32, String> = (0..100_000).map(|i| (i, i.to_string())).collect();
//! let mut writer = OpLog::new(table);
//! writer.extend([MapOp::Insert(7, "seven".to_string()), MapOp::Remove(8)]);
//! writer.publish(); // applies 2 operations, not 100,000 copies
//! let now = writer.container().acquire();
//! assert_eq!((now[&7].as_str(), now.get(&8)), ("seven", None));
//! // A writer with time between publishes (a reloader) brings the idle versions up to
//! // date there, so that the next publish applies only its own batch.
//! writer.catch_up();
//! ```
//!
//! The log keeps three or more versions, each a whole table. For large values,
//! [`oplog::SharedMap`] has the versions share each value behind an `Arc` and recycles the
//! ones overwrites displace, so the values are held once and steady overwrites still
//! allocate nothing.
//!
//! # Trade-offs and limits
//!
//! - A read writes only the reading thread's own hazard slot (a store, a light barrier and
//!   a re-load; see [`Container`]'s costs and [`barrier_mode`]): no atomic
//!   read-modify-write, no lock, no write to a cache line another reader reads. A thread
//!   holding more than [`HAZARD_SLOTS`] guards at once, and cloned guards, fall back to a
//!   counted reference on the version's shared count.
//! - An update takes its pool's lock on the pool's retired list (one per pool: writers of
//!   independent containers share no lock) and pushes the old version on it.
//!   Retired versions go back to their pools at a *reclamation* (one heavy barrier,
//!   `membarrier` on Linux, or only a fence when every version it judges was published
//!   *fenced*, as versions published less than 50 µs after the previous one are; and one
//!   pass over every reading thread's slots), which runs on
//!   a writer's side: when the pool has nothing idle for the writer's next `get_new`, when
//!   [`RECLAIM_THRESHOLD`] versions are retired, or at [`reclaim`]. A reader never
//!   reclaims: dropping a guard is one store, and never runs a `reset` or a `T::drop`. A
//!   version still held waits for the next reclamation; the writer never waits.
//! - Readers may see a version for as long as they hold its guard; a long-held guard keeps
//!   one object out of the pool (the next update then takes or builds another).
//! - Once an object has been a container's version, its node (`128 + 16 +
//!   size_of::<T>()` bytes, rounded up to a multiple of 128 on x86-64: 256 for a `HashMap`)
//!   stays with the pool while the pool has a handle, even after the object itself is
//!   dropped: a reader may still touch the node's count through a stale pointer, which is
//!   what makes lock-free reads safe. The last handle frees every idle node (see
//!   [`Pool`]'s lifetime).
//! - A thread's first wait on a contended depot lock makes `parking_lot` allocate its
//!   per-thread parking data (and, the first time in the process, its global table): a
//!   one-time cost per thread, not per update, that can fall late in a run.
//! - A pool keeps at most [`DEFAULT_MAX_IDLE`] idle objects unless told otherwise; for
//!   objects of megabytes, size the bound to the working set and call [`Pool::trim`] from a
//!   timer.
//! - A [`Pooled`] borrows its pool (no atomic operation to make or drop); an
//!   [`OwnedPooled`] ([`Pool::get_owned`]) holds a handle instead, for `spawn` and struct
//!   fields. A [`Guard`] borrows nothing.
//! - A [`Container`] always holds a version; an [`OptionContainer`] may be empty (Go's
//!   flavour), and its reads return an `Option`.
//! - A reset that calls `clear()` keeps a collection's own buffer but drops what is inside
//!   it: refilling a `HashMap<String, Vec<String>>` allocates every `String` and `Vec`
//!   again. Make the version a [`Recycled`] map (module [`arena`]): its reset keeps the
//!   nested buffers in per-type free lists, and the refill takes them back.
//!
//! # What allocates
//!
//! - Reading ([`Container::acquire`], dropping a [`Guard`], [`Cache::load`]): nothing,
//!   except a thread's first read, which registers its hazard slots (128 bytes, once per
//!   thread, reused after the thread exits).
//! - Updating ([`Container::get_new`], [`Container::update`], [`Container::rcu`]): nothing
//!   at steady state; the pool hands back a retired version. A pool miss calls the factory,
//!   and a thread's first use of a pool makes its per-thread state.
//! - What a version owns: a reset that calls `clear()` keeps a collection's table but drops
//!   its `String`s and `Vec`s, so the refill allocates them again (one allocation each).
//!   With [`Recycled`] they wait in its arena and the refill takes them back: 0 allocations
//!   per update, in the long run too. The arena frees what the builds stopped using (spare
//!   buffers idle for [`recycle::DEFAULT_IDLE_CYCLES`] builds, and buffers much larger than
//!   their use once their slot's budget of [`recycle::DEFAULT_REUSES`] is spent), and a
//!   build that needs them again allocates them again.
//! - A read-copy-update of a `Recycled` map with [`Recycled::copy_from`] and a reset that
//!   keeps the contents allocates only for what changed.
//!
//! The tests prove these with a counting allocator (`tests/alloc.rs`, `tests/arena.rs`,
//! `tests/rcu.rs`), and `examples/hot_reload.rs --check` for a file re-read and re-parsed on
//! every reload.
//!
//! # Performance
//!
//! `scripts/bench.sh` runs the criterion benchmarks against arc-swap, left-right,
//! `RwLock<Arc<T>>`, the pool crates and the Go original; the README has the tables, with
//! the machine, the toolchain and the date. In short: the Go README's heavy benchmark
//! allocates almost nothing per operation where pointer-swapping designs allocate a map per
//! write; a pool hit takes no lock and no atomic read-modify-write; a read takes no atomic
//! read-modify-write either (see the trade-offs above), and [`Cache::load`] one load.
//!
//! # Go's API in Rust
//!
//! | Go | Rust |
//! |---|---|
//! | `NewPool(factory, reset)` | [`Pool::new`] |
//! | `Pool.Get()` | [`Pool::get`] → [`Pooled`] (borrows the pool), [`Pool::get_owned`] → [`OwnedPooled`] |
//! | `Pool.Release(obj)` | drop the [`Pooled`] or [`Guard`] |
//! | `NewContainer(pool, obj)` | [`Container::new`]`(&pool, obj)`; [`Container::from_value`] for an object built elsewhere |
//! | (none) | [`Pool::trim`], [`Pool::clear`], [`Pool::prefill`], [`Pool::stats`] |
//! | `NewEmptyContainer(pool)` | [`OptionContainer::empty`] |
//! | `Container.Acquire()` / `Release` | [`Container::acquire`] → [`Guard`], dropped; or a per-thread [`Cache`] |
//! | `Container.GetNew()` | [`Container::get_new`], [`Container::get_new_owned`] |
//! | `Container.Update(obj)` | [`Container::update`], [`Container::swap`] |
//! | `Container.Update(nil)` | [`OptionContainer::take`] |
//! | (none) | [`Container::rcu`] (read-copy-update; loses no concurrent update), [`Container::compare_and_swap`] |
//! | `Container.WithAcquire(fn)` | [`Container::with_acquire`] |
//! | `Ref` / `RefNoPadding` | the count lives in the pool's node, always padded |
//! | `DebugPeekRef()` | [`Guard::ref_count`], [`Pooled::ref_count`] |
//!
//! # Sharing a container
//!
//! A [`Container`] is `Sync`, not `Clone` (as `ArcSwap`): share it by reference in
//! `thread::scope`, through an `Arc`, or in a `static`:
//!
//! ```
//! use std::sync::LazyLock;
//! use poolswap::{Container, Pool};
//!
//! static CONFIG: LazyLock<Container<String>> = LazyLock::new(|| {
//!     let pool = Pool::new(String::new, String::clear);
//!     Container::from_value(&pool, String::from("debug=false"))
//! });
//!
//! let handle = std::thread::spawn(|| CONFIG.acquire().len());
//! let mut next = CONFIG.get_new();
//! next.push_str("debug=true");
//! CONFIG.update(next);
//! let len = handle.join().unwrap(); // read before or after the update
//! assert!(len == "debug=false".len() || len == "debug=true".len());
//! ```
//!
//! With tokio, guards are `Send` and may be held across `.await`, and a reload task fills
//! an [`OwnedPooled`] off the runtime's threads: see `examples/async_config.rs`.
//!
//! # Send and Sync
//!
//! As with `Arc<T>`: a [`Container`], an [`OptionContainer`] and a [`Guard`] cross threads
//! and are shared between them only if `T: Send + Sync`; a [`Pool`] needs `T: Send`, and its
//! factory and reset must be `Send + Sync`; a [`Pooled`] and an [`OwnedPooled`] are `Send` if
//! `T: Send` and `Sync` if `T: Send + Sync`. The auto-trait bounds, and the `#[must_use]` on
//! guards and on the methods whose result is the point, are pinned by compile-fail tests.
#![warn(
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    unreachable_pub
)]
// The library names its concurrency primitives only through `sync` (the loom facade); the
// lists are in clippy.toml. Cargo.toml turns these off for the other targets, whose tests,
// benches and examples use `std`'s on purpose.
#![warn(clippy::disallowed_types, clippy::disallowed_methods)]
#![doc(test(attr(deny(warnings))))]
// docs.rs builds with `--cfg docsrs`: feature-gated items say which feature they need.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod compile_fail_tests;
mod container;
pub mod oplog;
mod pool;
mod reclaim;
pub mod recycle;
mod refcount;
#[cfg(feature = "serde")]
mod serialize;
// The loom facade, the one module that may name the concurrency primitives (clippy.toml).
#[allow(clippy::disallowed_types, clippy::disallowed_methods)]
mod sync;

pub use container::{Cache, Container, Guard, MappedGuard, OptionContainer};
pub use reclaim::{reclaim, Reclaimer};
pub use recycle::{FreeLists, Recycle, RecycleCopy, Recycled};

/// Not part of the API: what the crate's own tests, benchmarks and examples need to know
/// about the process, with no stability promise.
#[doc(hidden)]
pub mod __private {
    /// Whether this process chose the membarrier mode (reads take no fence, reclamation
    /// passes issue `membarrier(2)`); `false` before the first container is made.
    pub fn membarrier() -> bool {
        crate::reclaim::barrier::membarrier()
    }

    /// Whether `guard` holds a counted reference (`true`) or a hazard slot (`false`).
    pub fn is_counted<T>(guard: &crate::Guard<T>) -> bool {
        crate::Guard::is_counted(guard)
    }
}

pub use pool::{
    OwnedPooled, Pool, PoolBuilder, PoolStats, Pooled, Publishable, ResetOutcome, DEFAULT_MAX_IDLE,
    MAGAZINE_SIZE, SLOT_BATCH,
};
