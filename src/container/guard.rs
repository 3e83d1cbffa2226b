//! The read guards: [`Guard`], on a whole version, and [`MappedGuard`], on a part of one.

use std::borrow::Borrow;
use std::cmp::Ordering as CmpOrdering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::Deref;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::ptr::NonNull;

use crate::pool::version::Version;
use crate::reclaim::{self, Slot};

/// A read handle on one version of a [`Container`]'s object.
///
/// Dereferences to `&T`. The version it reads is never reset, reused or dropped while the
/// guard exists, whatever updates happen meanwhile. A guard does not borrow its container:
/// it may outlive the container and the pool, be held across `.await`, or be sent to
/// another thread and dropped there.
///
/// A guard from [`Container::acquire`] normally holds a *hazard slot* of the thread that
/// acquired it: making and dropping it writes only that thread's slot, never a cache line
/// another reader reads. Once a thread holds 128 guards, further ones hold a *counted*
/// reference on the version's shared count instead, as do clones and the guards
/// [`Container::swap`] and [`OptionContainer::take`] return; both kinds behave the same.
/// Dropping a slot guard is one `Release` store to its slot (no barrier, no lock, no system
/// call); dropping a counted guard, one atomic decrement (`Release`). Neither ever returns
/// the version: dropping the last guard on a version that is no longer current runs no
/// `reset` and no `T::drop`; the version goes back to its pool at the next reclamation, on
/// a writer's side (see [`reclaim`](crate::reclaim())), or, if its pool's last handle is
/// gone, on a background thread within about 32 ms.
///
/// A guard held for long keeps its version out of the pool, and a slot guard keeps one of
/// its thread's slots busy, wherever it travels.
///
/// # Send and Sync
///
/// `Send + Sync` when `T: Send + Sync`, like `Arc<T>`. `UnwindSafe` and `RefUnwindSafe`
/// when `T: RefUnwindSafe`: a guard only reads.
///
/// # Examples
///
/// ```
/// use poolswap::{Container, Guard, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let c = Container::from_value(&pool, 1);
/// let a = c.acquire();
/// let b = Guard::clone(&a);
/// assert!(Guard::ptr_eq(&a, &b));
/// drop(c);
/// assert_eq!((*a, *b), (1, 1)); // still readable
/// let t = std::thread::spawn(move || *b); // and movable to another thread
/// assert_eq!(t.join().unwrap(), 1);
/// ```
///
/// [`Container`]: crate::Container
/// [`Container::swap`]: crate::Container::swap
/// [`OptionContainer::take`]: crate::OptionContainer::take
/// [`Container::acquire`]: crate::Container::acquire
#[must_use = "a guard that is dropped at once reads nothing"]
pub struct Guard<T> {
    /// The version this guard reads.
    version: Version<T>,
    /// The hazard slot that protects `node`, or `None` if the guard owns a counted
    /// reference on it instead.
    slot: Option<&'static Slot>,
    _shares: PhantomData<T>,
}

// SAFETY: guards on one version on several threads read one `T` at once (`T: Sync`) and the
// last one dropped hands the `T` to the pool (`T: Send`): `Arc<T>`'s bounds.
unsafe impl<T: Send + Sync> Send for Guard<T> {}
// SAFETY: `&Guard` gives `&T` and `Guard::clone`, so the same bounds as `Send`.
unsafe impl<T: Send + Sync> Sync for Guard<T> {}

impl<T> Guard<T> {
    /// Wraps a counted reference on `version` that the caller owns and hands over.
    pub(super) fn counted(version: Version<T>) -> Guard<T> {
        Guard {
            version,
            slot: None,
            _shares: PhantomData,
        }
    }

    /// Wraps the protection of `version` by `slot`, which the caller hands over.
    pub(super) fn protected(version: Version<T>, slot: &'static Slot) -> Guard<T> {
        debug_assert!(
            slot.protects(version.erase()),
            "a guard's slot does not hold its version"
        );
        Guard {
            version,
            slot: Some(slot),
            _shares: PhantomData,
        }
    }

    /// The version's count of counted references (see the type's docs): for the crate's
    /// tests (`internals::ref_count`). One `Relaxed` load.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    #[must_use]
    pub(crate) fn ref_count(this: &Guard<T>) -> usize {
        // SAFETY: this guard keeps the node live.
        unsafe { this.version.ref_count() }
    }

    /// Whether this guard owns a counted reference on its version (`true`) or protects it
    /// with a hazard slot of the thread that acquired it (`false`). For the crate's tests
    /// (`internals::is_counted`).
    #[cfg_attr(not(any(test, feature = "internals")), allow(dead_code))]
    #[must_use]
    pub(crate) fn is_counted(this: &Guard<T>) -> bool {
        this.slot.is_none()
    }

    /// Whether two guards read the same version (the same object, not equal values).
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Guard, Pool};
    ///
    /// let pool = Pool::new(|| 0u8, |n| *n = 0);
    /// let c = Container::from_value(&pool, 1);
    /// let a = c.acquire();
    /// assert!(Guard::ptr_eq(&a, &c.acquire()));
    /// c.update(pool.adopt(1)); // an equal value, another version
    /// assert!(!Guard::ptr_eq(&a, &c.acquire()));
    /// ```
    #[must_use]
    pub fn ptr_eq(a: &Guard<T>, b: &Guard<T>) -> bool {
        a.version == b.version
    }

    /// The version this guard reads, for the container's compare-and-swap and its cache.
    /// An associated function, as the public helpers: `Guard` dereferences to `T`.
    pub(super) fn version(this: &Guard<T>) -> Version<T> {
        this.version
    }
}

impl<T> Deref for Guard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard owns a reference on the node for as long as `&self` lives.
        unsafe { self.version.object() }
    }
}

impl<T> Clone for Guard<T> {
    /// A counted guard on the same version: one atomic increment of its count.
    fn clone(&self) -> Self {
        // SAFETY: this guard keeps the node live while we add one. Its count is at least
        // one even if this guard holds only a slot: the container holds a reference while
        // the version is current, and the retired list holds it while any slot protects
        // it (`reclaim/hazard.rs`).
        unsafe { self.version.clone_ref() };
        Guard::counted(self.version)
    }
}

impl<T> Drop for Guard<T> {
    #[inline]
    fn drop(&mut self) {
        match self.slot {
            Some(slot) => {
                debug_assert!(
                    slot.protects(self.version.erase()),
                    "a guard's slot changed under it"
                );
                reclaim::clear(slot);
            }
            // SAFETY: this guard owns one counted reference, consumed here; the node is a
            // container version, so it holds its pool in its keepalive.
            None => unsafe { self.version.release() },
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Guard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Guard").field(&**self).finish()
    }
}

/// Formats the version, as `Arc`'s `Display` does.
///
/// ```
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(String::new, String::clear);
/// let c = Container::from_value(&pool, String::from("v1"));
/// assert_eq!(format!("{}", c.acquire()), "v1");
/// ```
impl<T: fmt::Display> fmt::Display for Guard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

/// ```
/// use poolswap::{Container, Pool};
///
/// fn len(s: impl AsRef<String>) -> usize { s.as_ref().len() }
/// let pool = Pool::new(String::new, String::clear);
/// let c = Container::from_value(&pool, String::from("v1"));
/// assert_eq!(len(c.acquire()), 2);
/// ```
impl<T> AsRef<T> for Guard<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

/// Lets a guard stand for its version in a `HashSet<T>` lookup, as `Arc` does (comparison
/// and `Hash` below are by value, so they agree).
///
/// ```
/// use std::borrow::Borrow;
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(String::new, String::clear);
/// let c = Container::from_value(&pool, String::from("v1"));
/// let g = c.acquire();
/// let s: &String = g.borrow();
/// assert_eq!(s, "v1");
/// ```
impl<T> Borrow<T> for Guard<T> {
    fn borrow(&self) -> &T {
        self
    }
}

/// By value, as `Arc`: two guards are equal if their versions are, even if they are
/// different versions ([`Guard::ptr_eq`] compares identity).
///
/// ```
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let a = Container::from_value(&pool, 1);
/// let b = Container::from_value(&pool, 1);
/// assert!(a.acquire() == b.acquire());
/// assert!(a.acquire() < Container::from_value(&pool, 2).acquire());
/// ```
impl<T: PartialEq> PartialEq for Guard<T> {
    fn eq(&self, other: &Guard<T>) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Guard<T> {}

impl<T: PartialOrd> PartialOrd for Guard<T> {
    fn partial_cmp(&self, other: &Guard<T>) -> Option<CmpOrdering> {
        (**self).partial_cmp(&**other)
    }
}

impl<T: Ord> Ord for Guard<T> {
    fn cmp(&self, other: &Guard<T>) -> CmpOrdering {
        (**self).cmp(&**other)
    }
}

/// By value, consistent with `Eq` and `Borrow<T>`. (Clippy's `mutable_key_type` lint
/// flags a `HashSet<Guard<T>>`, because a guard holds a reference to its atomic hazard
/// slot; hashing and equality read only the value, so the lint does not apply.)
///
/// ```
/// use std::collections::HashSet;
/// use poolswap::{Container, Pool};
///
/// let pool = Pool::new(String::new, String::clear);
/// let c = Container::from_value(&pool, String::from("v1"));
/// let seen: HashSet<_> = [c.acquire()].into_iter().collect();
/// assert!(seen.contains(&String::from("v1")));
/// ```
impl<T: Hash> Hash for Guard<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

// A guard only reads its version: a panic while one is held leaves nothing half-written
// (as `Arc<T>`, it is unwind-safe when `&T` is).
impl<T: RefUnwindSafe> UnwindSafe for Guard<T> {}
impl<T: RefUnwindSafe> RefUnwindSafe for Guard<T> {}

impl<T> Guard<T> {
    /// A guard on a part of the version (a field, an entry), keeping the whole version
    /// alive; like `parking_lot`'s mapped guards and left-right's `ReadGuard::map`. Costs
    /// nothing: it moves this guard into the new one.
    ///
    /// # Examples
    ///
    /// ```
    /// use poolswap::{Container, Guard, Pool};
    ///
    /// struct Config { name: String, port: u16 }
    /// let pool = Pool::new(
    ///     || Config { name: String::new(), port: 0 },
    ///     |c| c.name.clear(),
    /// );
    /// let c = Container::from_value(&pool, Config { name: "api".into(), port: 80 });
    /// let name = Guard::map(c.acquire(), |c| c.name.as_str());
    /// let port = Guard::map(c.acquire(), |c| &c.port);
    /// assert_eq!((&*name, *port), ("api", 80));
    /// ```
    pub fn map<U: ?Sized, F>(this: Guard<T>, f: F) -> MappedGuard<T, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let part = NonNull::from(f(&this));
        MappedGuard { guard: this, part }
    }
}

/// A guard on a part of a version, made by [`Guard::map`]. Dereferences to `&U`; keeps the
/// whole version from being returned to its pool, like the [`Guard`] it was made from.
///
/// # Send and Sync
///
/// `Send + Sync` when `T: Send + Sync` and `U: Sync` (it is a `Guard<T>` and a `&U`).
pub struct MappedGuard<T, U: ?Sized> {
    /// Held for its drop only: it keeps the version, which `part` points into.
    #[allow(dead_code)]
    guard: Guard<T>,
    /// Borrowed from `guard`'s version (or `'static`), valid while `guard` lives: the
    /// version is never moved or reused while a guard on it exists.
    part: NonNull<U>,
}

// SAFETY: a `Guard<T>` (sendable for `T: Send + Sync`) and a `&U` (sendable for `U: Sync`).
unsafe impl<T: Send + Sync, U: ?Sized + Sync> Send for MappedGuard<T, U> {}
// SAFETY: `&MappedGuard` gives only `&U` and `&Guard<T>`.
unsafe impl<T: Send + Sync, U: ?Sized + Sync> Sync for MappedGuard<T, U> {}

impl<T: RefUnwindSafe, U: ?Sized + RefUnwindSafe> UnwindSafe for MappedGuard<T, U> {}
impl<T: RefUnwindSafe, U: ?Sized + RefUnwindSafe> RefUnwindSafe for MappedGuard<T, U> {}

impl<T, U: ?Sized> Deref for MappedGuard<T, U> {
    type Target = U;
    fn deref(&self) -> &U {
        // SAFETY: `part` came from a `&U` borrowed from the guard's version (or with a
        // longer life), and the guard keeps that version in place and out of the pool.
        unsafe { self.part.as_ref() }
    }
}

impl<T, U: ?Sized + fmt::Debug> fmt::Debug for MappedGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("MappedGuard").field(&&**self).finish()
    }
}

impl<T, U: ?Sized + fmt::Display> fmt::Display for MappedGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
