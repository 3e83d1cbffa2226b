// Rustdoc's `compile_fail` doctests are the way to test that something does *not* compile,
// and rustdoc runs the doctests of private items too. These pin the public types' auto-trait
// bounds and the `#[must_use]` results, which users rely on but need not read, so they live
// in this private module rather than in the crate docs (as in arc-swap's
// `src/compile_fail_tests.rs`).
//
// Each `compile_fail` is followed by a twin that compiles and differs from it only in what
// the pin is about, so a pin cannot pass by failing for some other reason (a typo, a renamed
// method, or a stray warning: the crate's doctests deny warnings). The Send/Sync pins carry
// the error code they expect (E0277, "the trait bound is not satisfied"); rustdoc checks
// error codes on nightly only, so to check the reason on stable turn a `compile_fail` into
// a plain block and read the error.
//
// The `unsafe impl Send/Sync` they pin are in `container.rs` and `pool.rs`, each with its
// reason; the bounds are `Arc<T>`'s for everything that can hand out `&T` on one thread and
// drop the last reference on another (`T: Send + Sync`), and `T: Send` for what only moves
// a `T` between threads.

//! # `#[must_use]`
//!
//! A guard dropped at once reads nothing:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! let pool = poolswap::Pool::new(|| 0u8, |n| *n = 0);
//! let c = poolswap::Container::from_value(&pool, 1);
//! c.acquire();
//! ```
//! ```
//! #![deny(unused_must_use)]
//! let pool = poolswap::Pool::new(|| 0u8, |n| *n = 0);
//! let c = poolswap::Container::from_value(&pool, 1);
//! let _guard = c.acquire();
//! ```
//!
//! An object taken from a pool and dropped at once goes straight back:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! let pool = poolswap::Pool::new(|| 0u8, |n| *n = 0);
//! pool.get();
//! ```
//! ```
//! #![deny(unused_must_use)]
//! let pool = poolswap::Pool::new(|| 0u8, |n| *n = 0);
//! let _object = pool.get();
//! ```
//!
//! `take` empties the container and returns the version it held:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! let pool = poolswap::Pool::new(|| 0u8, |n| *n = 0);
//! let c = poolswap::OptionContainer::from_value(&pool, 1);
//! c.take();
//! ```
//! ```
//! #![deny(unused_must_use)]
//! let pool = poolswap::Pool::new(|| 0u8, |n| *n = 0);
//! let c = poolswap::OptionContainer::from_value(&pool, 1);
//! let _old = c.take();
//! ```
//!
//! # `Subscriber`: `Send` and `Sync` as its container's
//!
//! A subscriber holds a `Weak` of the container's `Arc` or a reference to the container,
//! and hands out guards (its signal may hold one on the last version), so it crosses
//! threads only when the container does (auto traits, no manual impl):
//!
//! ```compile_fail,E0277
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Subscriber<'static, poolswap::Container<std::cell::Cell<u8>>>>();
//! ```
//! ```
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Subscriber<'static, poolswap::Container<std::sync::atomic::AtomicU8>>>();
//! ```
//!
//! # `Subscriber`: `subscribe` borrows the container, `subscribe_owned` does not
//!
//! ```compile_fail,E0597
//! use poolswap::{Container, Pool};
//!
//! let pool = Pool::new(|| 0u8, |n| *n = 0);
//! let mut sub = {
//!     let c = Container::from_value(&pool, 1);
//!     c.subscribe()
//! };
//! let _ = sub.acquire();
//! ```
//! ```
//! use std::sync::Arc;
//! use poolswap::{Container, Pool};
//!
//! let pool = Pool::new(|| 0u8, |n| *n = 0);
//! let mut sub = {
//!     let c = Arc::new(Container::from_value(&pool, 1));
//!     c.subscribe_owned()
//! };
//! assert_eq!(*sub.acquire().unwrap(), 1); // the last version, handed over at the drop
//! ```
//!
//! # `oplog::ReadHandle`: reads, and cannot publish
//!
//! Only the writer publishes. A read handle has no `update` (nor any other writer's method
//! of a container), gives no access to the container, and does not deref to it; neither
//! does the subscriber it hands out, and the writer no longer hands out its container. The
//! version each pin tries to publish is a genuine one, from the op log's pool:
//!
//! ```compile_fail,E0599
//! use poolswap::oplog::{OpLog, VecOp};
//!
//! let w: OpLog<Vec<u8>, VecOp<u8>> = OpLog::new(Vec::new());
//! let next = w.pool().get();
//! w.read_handle().update(next);
//! ```
//! ```compile_fail,E0599
//! use poolswap::oplog::{OpLog, VecOp};
//!
//! let w: OpLog<Vec<u8>, VecOp<u8>> = OpLog::new(Vec::new());
//! let next = w.pool().get();
//! w.read_handle().container().update(next);
//! ```
//! ```compile_fail,E0614
//! use poolswap::oplog::{OpLog, VecOp};
//!
//! let w: OpLog<Vec<u8>, VecOp<u8>> = OpLog::new(Vec::new());
//! let next = w.pool().get();
//! (*w.read_handle()).update(next);
//! ```
//! ```compile_fail,E0599
//! use poolswap::oplog::{OpLog, VecOp};
//!
//! let w: OpLog<Vec<u8>, VecOp<u8>> = OpLog::new(Vec::new());
//! let next = w.pool().get();
//! w.read_handle().subscribe().update(next);
//! ```
//! ```compile_fail,E0599
//! use poolswap::oplog::{OpLog, VecOp};
//!
//! let w: OpLog<Vec<u8>, VecOp<u8>> = OpLog::new(Vec::new());
//! let next = w.pool().get();
//! w.container().update(next);
//! ```
//!
//! The twin: the same handle and version, read and let go.
//!
//! ```
//! use poolswap::oplog::{OpLog, VecOp};
//!
//! let w: OpLog<Vec<u8>, VecOp<u8>> = OpLog::new(Vec::new());
//! let next = w.pool().get();
//! drop(next);
//! let _guard = w.read_handle().acquire();
//! let _sub = w.read_handle().subscribe();
//! ```
//!
//! # `oplog::ReadHandle`: `Send` and `Sync` need `T: Send + Sync`, as its container
//!
//! A handle shares the container (an `Arc`) and hands out guards on any thread (auto
//! traits, no manual impl):
//!
//! ```compile_fail,E0277
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::oplog::ReadHandle<std::cell::Cell<u8>>>();
//! ```
//! ```
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::oplog::ReadHandle<std::sync::atomic::AtomicU8>>();
//! ```
//! ```compile_fail,E0277
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::oplog::ReadHandle<std::sync::MutexGuard<'static, u8>>>();
//! ```
//! ```
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::oplog::ReadHandle<std::sync::Mutex<u8>>>();
//! ```
//!
//! # `Guard` and `MappedGuard`: `Send` and `Sync` need `T: Send + Sync`, as `Arc<T>`
//!
//! ```compile_fail,E0277
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Guard<std::rc::Rc<u8>>>();
//! ```
//! ```
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Guard<std::sync::Arc<u8>>>();
//! ```
//!
//! `Cell<u8>` is `Send` but not `Sync`: a guard on it cannot be sent, since guards on the
//! same version on other threads read the same cell.
//!
//! ```compile_fail,E0277
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Guard<std::cell::Cell<u8>>>();
//! ```
//! ```
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Guard<std::sync::atomic::AtomicU8>>();
//! ```
//!
//! A mapped guard also hands out `&U`:
//!
//! ```compile_fail,E0277
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::MappedGuard<Vec<u8>, std::cell::Cell<u8>>>();
//! ```
//! ```
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::MappedGuard<Vec<u8>, std::sync::atomic::AtomicU8>>();
//! ```
//!
//! # `Container` and `OptionContainer`: shared and sent only if `T: Send + Sync`
//!
//! Readers on any thread get `&T`:
//!
//! ```compile_fail,E0277
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::Container<std::cell::Cell<u8>>>();
//! ```
//! ```
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::Container<std::sync::atomic::AtomicU8>>();
//! ```
//!
//! and the last guard, on any thread, hands the `T` back to the pool (`MutexGuard` is `Sync`
//! but not `Send`):
//!
//! ```compile_fail,E0277
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::Container<std::sync::MutexGuard<'static, u8>>>();
//! ```
//! ```
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::Container<std::sync::Mutex<u8>>>();
//! ```
//!
//! A container owns a reference on a version that guards on other threads may read:
//!
//! ```compile_fail,E0277
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Container<std::cell::Cell<u8>>>();
//! ```
//! ```
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Container<std::sync::atomic::AtomicU8>>();
//! ```
//!
//! `OptionContainer` has the same bounds:
//!
//! ```compile_fail,E0277
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::OptionContainer<std::cell::Cell<u8>>>();
//! ```
//! ```
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::OptionContainer<std::sync::atomic::AtomicU8>>();
//! ```
//!
//! # `Pool`: moves its objects between threads, so it needs `T: Send` (and only that)
//!
//! ```compile_fail,E0277
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Pool<std::rc::Rc<u8>>>();
//! ```
//! ```
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Pool<std::cell::Cell<u8>>>();
//! ```
//!
//! A pool's factory and reset run on any thread that uses the pool, so they must be
//! `Send + Sync` (opool 0.2.0 and lockfree-object-pool 0.1.6 shipped with bounds that missed
//! a part of this):
//!
//! ```compile_fail,E0277
//! let local = std::rc::Rc::new(0u8);
//! let pool = poolswap::Pool::new(move || Vec::<u8>::with_capacity(*local as usize), |_| true);
//! drop(pool.get());
//! ```
//! ```
//! let shared = std::sync::Arc::new(0u8);
//! let pool = poolswap::Pool::new(move || Vec::<u8>::with_capacity(*shared as usize), |_| true);
//! drop(pool.get());
//! ```
//!
//! # `Pooled` and `OwnedPooled`: `Send` if `T: Send`, `Sync` if `T: Send + Sync`
//!
//! Each carries its `T` to the thread that drops it:
//!
//! ```compile_fail,E0277
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Pooled<'static, std::rc::Rc<u8>>>();
//! ```
//! ```
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::Pooled<'static, std::cell::Cell<u8>>>();
//! ```
//! ```compile_fail,E0277
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::OwnedPooled<std::rc::Rc<u8>>>();
//! ```
//! ```
//! fn is_send<T: Send>() {}
//! is_send::<poolswap::OwnedPooled<std::cell::Cell<u8>>>();
//! ```
//!
//! and gives `&T` to whoever can share it:
//!
//! ```compile_fail,E0277
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::Pooled<'static, std::cell::Cell<u8>>>();
//! ```
//! ```
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::Pooled<'static, std::sync::atomic::AtomicU8>>();
//! ```
//! ```compile_fail,E0277
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::OwnedPooled<std::cell::Cell<u8>>>();
//! ```
//! ```
//! fn is_sync<T: Sync>() {}
//! is_sync::<poolswap::OwnedPooled<std::sync::atomic::AtomicU8>>();
//! ```
//!
//! # Unwind safety: a container and a guard are `UnwindSafe` if `T: RefUnwindSafe`
//!
//! A shared container crosses `catch_unwind` as `Arc<T>` does (a reader's panic cannot
//! leave it half-updated), unless `T` has interior mutability that a panic could leave
//! inconsistent:
//!
//! ```compile_fail,E0277
//! fn is_unwind_safe<T: std::panic::UnwindSafe>() {}
//! is_unwind_safe::<std::sync::Arc<poolswap::Container<std::cell::Cell<u8>>>>();
//! ```
//! ```
//! fn is_unwind_safe<T: std::panic::UnwindSafe>() {}
//! is_unwind_safe::<std::sync::Arc<poolswap::Container<u8>>>();
//! is_unwind_safe::<std::sync::Arc<poolswap::OptionContainer<u8>>>();
//! is_unwind_safe::<poolswap::Guard<u8>>();
//! ```
