//! The objects a pool hands out: [`Pooled`] and [`OwnedPooled`], exclusive guards that give
//! their object back when dropped, and [`Publishable`], what a container takes of either.

use std::borrow::{Borrow, BorrowMut};
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::ptr::{self, NonNull};

use super::depot::{Generation, NodePtr};
use super::node::Node;
use super::shared::{Discard, PoolNode, Shared};
use super::Pool;

/// An exclusive guard on one pooled object: Go's `pool.Get()` result, with its `Release`
/// done by `Drop`.
///
/// Dereferences to `T` mutably. Dropping it returns the object to its pool, on the dropping
/// thread (to be reset when next handed out); [`Container::update`](crate::Container::update)
/// publishes it as a container's new version instead. It borrows the [`Pool`] it came from,
/// like the guards of other Rust pools: that is what lets `get` and drop run without any
/// atomic read-modify-write. (A container's [`Guard`](crate::Guard)s do not borrow.)
///
/// # Send and Sync
///
/// `Send` when `T: Send` and `Sync` when `T: Send + Sync`, like `&mut T` (the pool needs
/// `T: Send` to take the object back on any thread).
///
/// # Examples
///
/// ```
/// use poolswap::Pool;
///
/// let pool = Pool::new(String::new, String::clear);
/// let mut s = pool.get();
/// s.push_str("pooled");
/// std::thread::scope(|scope| {
///     scope.spawn(move || assert_eq!(&*s, "pooled")); // dropped on the other thread
/// });
/// assert_eq!(pool.stats().idle, 1);
/// ```
#[must_use = "dropping it at once returns the object to the pool unused"]
pub struct Pooled<'a, T> {
    node: NonNull<PoolNode<T>>,
    pool: &'a Pool<T>,
}

// SAFETY: a `Pooled` owns its object as a `Box` does; moving it moves a `T` (and, on drop,
// hands the `T` to the pool, which `T: Send` also covers; `&Pool<T>` is `Send` for
// `T: Send`).
unsafe impl<T: Send> Send for Pooled<'_, T> {}
// SAFETY: `&Pooled<T>` gives only `&T` and `&Pool<T>` (which is `Sync` for `T: Send`).
unsafe impl<T: Sync + Send> Sync for Pooled<'_, T> {}

impl<'a, T> Pooled<'a, T> {
    /// Marks an owned node checked out, and wraps it.
    #[inline]
    pub(super) fn check_out(node: NodePtr<PoolNode<T>>, pool: &'a Pool<T>) -> Self {
        // SAFETY: the caller owns the node (it came off a free list or was just made).
        let n = unsafe { node.0.as_ref() };
        // A node never published has no stale reader and a count of 1 since it was made
        // (a drop does not touch it: `last_reference`), so only a published one is reset.
        // Not writing the count keeps its line where it is: the flag read here sits on the
        // line after it, which every drop reads too, so on a handoff (one thread gets,
        // another drops) both CPUs keep the pair shared and nothing moves back.
        // SAFETY: owned, per the caller.
        if unsafe { n.ever_published() } {
            // Release: a stale reader that reads this 1 sees the retirement of the node's
            // previous version (see `RefCount::reset_to_one`).
            n.refs().reset_to_one();
        }
        Pooled { node: node.0, pool }
    }

    /// Turns this guard into one that owns a handle on the pool, for a `'static` guard:
    /// costs a handle clone (two atomic increments).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{OwnedPooled, Pool, Pooled};
    ///
    /// let pool = Pool::new(Vec::<u8>::new, Vec::clear);
    /// let owned: OwnedPooled<Vec<u8>> = Pooled::into_owned(pool.get());
    /// std::thread::spawn(move || drop(owned)).join().unwrap();
    /// assert_eq!(pool.stats().idle, 1);
    /// ```
    pub fn into_owned(this: Pooled<'a, T>) -> OwnedPooled<T> {
        let pool = this.pool.clone();
        let this = ManuallyDrop::new(this);
        OwnedPooled {
            node: this.node,
            pool,
        }
    }
}

impl<T> Pooled<'_, T> {
    /// Returns the object as a drop does, but to the calling thread's depot rather than
    /// its magazine: other threads can take it from there (`Pool::get_idle_anywhere`, a
    /// steal), and `Pool::get_returned` on this thread hands it out first. Drops it if the
    /// idle bound is reached. Costs the depot's lock, and one atomic read-modify-write on
    /// the idle budget unless a permit is parked there.
    // layout: one caller (`Writer::put_back`)
    pub(super) fn put_in_depot(this: Self) {
        Pooled::put_in_list(this, Generation::Primary);
    }

    /// [`put_in_depot`](Pooled::put_in_depot), but to the depot's victim list: a getter
    /// takes it only when every primary list it looks at is empty, and the next `trim` or
    /// decay tick drops it. For an object worth keeping for a `get` that finds nothing
    /// else, but not worth handing out first. Costs as `put_in_depot`.
    // layout: one caller (`Writer::set_aside`)
    pub(super) fn put_in_depot_as_victim(this: Self) {
        Pooled::put_in_list(this, Generation::Victim);
    }

    /// Drops the object instead of returning it to its pool, as [`Pool::trim`] drops an
    /// idle one (counted in [`PoolStats::trimmed`](crate::PoolStats::trimmed)); if a
    /// reader of its last publication still holds a brief reference, that reader returns
    /// it to the pool instead. For the op log's versions made beyond the ones it keeps.
    /// Costs the object's drop, and one atomic decrement if it was ever published.
    // layout: one caller (`Writer::discard`)
    pub(super) fn discard(this: Self) {
        let this = std::mem::ManuallyDrop::new(this);
        // SAFETY: the guard owns the node's checked-out reference, and gives it up here:
        // `ManuallyDrop` keeps its drop from giving it back a second time.
        if unsafe { last_reference(this.node) } {
            this.pool.shared.discard(NodePtr(this.node), Discard::Trim);
        }
    }

    /// Gives up the guard's reference and, if it was the last, puts the node in the
    /// calling thread's depot list of `generation`.
    fn put_in_list(this: Self, generation: Generation) {
        let this = std::mem::ManuallyDrop::new(this);
        // SAFETY: the guard owns the node's checked-out reference, and gives it up here:
        // `ManuallyDrop` keeps its drop from giving it back a second time.
        if unsafe { last_reference(this.node) } {
            Shared::put_in_depot(&this.pool.shared, NodePtr(this.node), generation);
        }
    }
}

impl<T> Drop for Pooled<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the guard owns the node, checked out of `self.pool`.
        unsafe { give_back(self.node, self.pool) }
    }
}

impl<T> Pooled<'_, T> {
    /// The address of the guard's node: what a container's retired list names the object
    /// by once it was published and retired (`List::holds`). Only compared, never
    /// dereferenced.
    // layout: one caller (`Writer::retired_name`)
    pub(super) fn node_addr(this: &Self) -> usize {
        this.node.as_ptr() as usize
    }
}

/// The node a guard holds, for the unit tests' look at its count.
#[cfg(all(test, not(loom)))]
pub(super) fn pooled_node<T>(pooled: &Pooled<'_, T>) -> NonNull<PoolNode<T>> {
    pooled.node
}

/// Returns a checked-out node to `pool`: the drop of [`Pooled`] and [`OwnedPooled`].
///
/// # Safety
///
/// The caller owns the node's checked-out reference, and the node belongs to `pool`.
#[inline]
unsafe fn give_back<T>(node: NonNull<PoolNode<T>>, pool: &Pool<T>) {
    // SAFETY: per the caller.
    if unsafe { last_reference(node) } {
        Shared::put(&pool.shared, NodePtr(node));
    }
}

/// Lets go of a checked-out reference to `node`; whether it was the last, so that the
/// caller returns the node to its pool.
///
/// # Safety
///
/// The caller owns the node's checked-out reference.
#[inline]
unsafe fn last_reference<T>(node: NonNull<PoolNode<T>>) -> bool {
    // SAFETY: the caller owns the node.
    let published = unsafe { node.as_ref().ever_published() };
    // A node that was never a container version has no stale readers: no atomic needed.
    // One that was may have one holding a brief reference; the last of them returns it.
    // SAFETY: the caller owns a reference.
    !published || unsafe { node.as_ref() }.refs().decrement()
}

/// An exclusive guard on one pooled object that owns a handle on its pool instead of
/// borrowing it: made by [`Pool::get_owned`] or [`Pooled::into_owned`], in the style of
/// tokio's `acquire_owned`.
///
/// Everything a [`Pooled`] does, and `'static` when `T` is: it can go into
/// `thread::spawn`, `tokio::spawn` or a struct field. [`Container::update`](crate::Container::update)
/// and the other publishing methods take either kind.
///
/// Costs over a [`Pooled`]: a handle clone when made (two atomic increments: the handle
/// count and the `Arc`) and its drop when dropped or published (two decrements).
///
/// # Send and Sync
///
/// `Send` when `T: Send` and `Sync` when `T: Send + Sync`, as [`Pooled`].
///
/// # Examples
///
/// ```
/// use poolswap::Pool;
///
/// let pool = Pool::new(String::new, String::clear);
/// let mut s = pool.get_owned();
/// let filler = std::thread::spawn(move || {
///     s.push_str("filled elsewhere");
///     s
/// });
/// let s = filler.join().unwrap();
/// assert_eq!(&*s, "filled elsewhere");
/// drop(s); // back to the pool
/// assert_eq!(pool.stats().idle, 1);
/// ```
#[must_use = "dropping it at once returns the object to the pool unused"]
pub struct OwnedPooled<T> {
    node: NonNull<PoolNode<T>>,
    pool: Pool<T>,
}

// SAFETY: as for `Pooled`: the guard owns its object as a `Box` does, and `Pool<T>` is
// `Send` for `T: Send`.
unsafe impl<T: Send> Send for OwnedPooled<T> {}
// SAFETY: `&OwnedPooled<T>` gives only `&T` and `&Pool<T>`.
unsafe impl<T: Sync + Send> Sync for OwnedPooled<T> {}

impl<T> Drop for OwnedPooled<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the guard owns the node, checked out of `self.pool`.
        unsafe { give_back(self.node, &self.pool) }
    }
}

/// `Deref`, `DerefMut`, `Debug`, `Display`, `AsRef`, `AsMut`, `Borrow` and `BorrowMut` for
/// the two pooled guards, which own their node's object exclusively.
macro_rules! exclusive_guard_traits {
    ($name:literal, [$($lt:lifetime)?], $ty:ty) => {
        impl<$($lt,)? T> Deref for $ty {
            type Target = T;
            #[inline]
            fn deref(&self) -> &T {
                // SAFETY: this guard owns the node, so its object is initialised and only
                // this guard reaches it, for as long as `&self` lives.
                unsafe { Node::object(self.node) }
            }
        }

        impl<$($lt,)? T> DerefMut for $ty {
            #[inline]
            fn deref_mut(&mut self) -> &mut T {
                // SAFETY: as above, and `&mut self` makes the access unique.
                unsafe { Node::object_mut(self.node) }
            }
        }

        impl<$($lt,)? T: fmt::Debug> fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_tuple($name).field(&**self).finish()
            }
        }

        impl<$($lt,)? T: fmt::Display> fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&**self, f)
            }
        }

        impl<$($lt,)? T> AsRef<T> for $ty {
            fn as_ref(&self) -> &T {
                self
            }
        }

        impl<$($lt,)? T> AsMut<T> for $ty {
            fn as_mut(&mut self) -> &mut T {
                self
            }
        }

        impl<$($lt,)? T> Borrow<T> for $ty {
            fn borrow(&self) -> &T {
                self
            }
        }

        impl<$($lt,)? T> BorrowMut<T> for $ty {
            fn borrow_mut(&mut self) -> &mut T {
                self
            }
        }

        // Unwinding can leave `T` half-updated only through `&mut T`, which a caught
        // panic's closure cannot hold across the boundary without `AssertUnwindSafe`, as
        // for `Box<T>`; the pool's own state is kept consistent on unwind.
        impl<$($lt,)? T: UnwindSafe> UnwindSafe for $ty {}
        impl<$($lt,)? T: RefUnwindSafe> RefUnwindSafe for $ty {}

        impl<$($lt,)? T> sealed::PublishableSealed<T> for $ty {
            type Handle = exclusive_guard_traits!(@handle [$($lt)?]);

            fn pool_of(&self) -> &Pool<T> {
                &self.pool
            }

            fn into_raw(self) -> (NonNull<()>, Self::Handle) {
                let this = ManuallyDrop::new(self);
                // SAFETY: `this` is never dropped, so the handle is read out once.
                (this.node.cast(), unsafe { ptr::read(&this.pool) })
            }

            unsafe fn from_raw(node: NonNull<()>, pool: Self::Handle) -> Self {
                Self { node: node.cast(), pool }
            }
        }

        impl<$($lt,)? T> Publishable<T> for $ty {}
    };
    (@handle [$lt:lifetime]) => { &$lt Pool<T> };
    (@handle []) => { Pool<T> };
}

exclusive_guard_traits!("Pooled", ['a], Pooled<'a, T>);
exclusive_guard_traits!("OwnedPooled", [], OwnedPooled<T>);

/// An object checked out of a pool and ready to become a container's version: a
/// [`Pooled`] or an [`OwnedPooled`]. [`Container::update`](crate::Container::update),
/// `swap`, `compare_and_swap` and the constructors take either.
///
/// A plain `T` is not publishable: a container's versions live in pool nodes. Get one
/// from the pool (`container.get_new()`, or `pool.get()`) and fill it, or take a value
/// built elsewhere in with `container.pool().adopt(value)` (one allocation, its node).
///
/// Sealed: only this crate implements it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an object checked out of a pool",
    label = "a container publishes pooled objects, not plain values",
    note = "get one from the pool and fill it: `let mut next = container.get_new();`",
    note = "or take a value built elsewhere in: `container.update(container.pool().adopt(value))`"
)]
pub trait Publishable<T>: sealed::PublishableSealed<T> {}

mod sealed {
    use super::{NonNull, Pool};

    /// What a container needs of a checked-out object; not nameable outside the crate, so
    /// that [`Publishable`](super::Publishable) is sealed.
    pub trait PublishableSealed<T>: Sized {
        /// What the guard keeps its pool by (a reference or a handle).
        type Handle;
        /// The pool the object came from.
        fn pool_of(&self) -> &Pool<T>;
        /// Gives up the guard without dropping it: its node (a `PoolNode<T>`, erased: the
        /// type is private) and its pool handle.
        fn into_raw(self) -> (NonNull<()>, Self::Handle);
        /// Rebuilds the guard from what `into_raw` returned.
        ///
        /// # Safety
        ///
        /// `node` and `pool` came from `into_raw` of this type, and the node is checked out
        /// (owned by the caller, unpublished).
        unsafe fn from_raw(node: NonNull<()>, pool: Self::Handle) -> Self;
    }
}
