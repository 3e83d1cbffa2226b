//! The container's flavour: [`NonEmpty`] ([`Container`](crate::Container)) or
//! [`MaybeEmpty`] ([`OptionContainer`](crate::OptionContainer)), the type parameter `F` of
//! [`ContainerAny`](crate::ContainerAny), which has one implementation of every method for
//! both. A flavour decides only what a read returns: the value, or an `Option` of it
//! ([`Flavour::Wrap`]); the state and protocol (`raw.rs`) do not depend on it.

/// Whether a [`ContainerAny`](crate::ContainerAny) may be empty, and so what its reads
/// return: [`NonEmpty`] (the flavour of [`Container`](crate::Container)) or
/// [`MaybeEmpty`] (of [`OptionContainer`](crate::OptionContainer)). Sealed: no other type
/// implements it. Name the flavour only in code generic over both containers.
///
/// # Examples
///
/// ```
/// use poolswap::{Container, ContainerAny, Flavour, OptionContainer, Pool};
///
/// // Generic over both flavours: `rcu` returns `F::Wrap<()>`, `()` or `Option<()>`.
/// fn increment<F: Flavour>(c: &ContainerAny<u32, F>) {
///     c.rcu(|current, next| *next = current + 1);
/// }
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let (c, o) = (Container::from_value(&pool, 1), OptionContainer::from_value(&pool, 5));
/// increment(&c);
/// increment(&o);
/// assert_eq!((*c.acquire(), o.acquire().as_deref()), (2, Some(&6)));
/// ```
pub trait Flavour: sealed::Sealed {
    /// What a read of a container of this flavour returns when the container holds an
    /// `X`: `X` itself for [`NonEmpty`], `Option<X>` (`None` while empty) for
    /// [`MaybeEmpty`].
    type Wrap<X>;
}

/// The flavour of [`Container`](crate::Container): never empty, so reads return a
/// [`Guard`](crate::Guard), not an `Option`.
///
/// # Examples
///
/// ```
/// use poolswap::{Container, ContainerAny, NonEmpty, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let c: ContainerAny<u32, NonEmpty> = Container::from_value(&pool, 1);
/// assert_eq!(*c.acquire(), 1);
/// ```
#[derive(Debug)]
pub enum NonEmpty {}

/// The flavour of [`OptionContainer`](crate::OptionContainer): may be empty, so reads
/// return an `Option`.
///
/// # Examples
///
/// ```
/// use poolswap::{ContainerAny, MaybeEmpty, OptionContainer, Pool};
///
/// let pool = Pool::new(|| 0u32, |n| *n = 0);
/// let c: ContainerAny<u32, MaybeEmpty> = OptionContainer::empty(&pool);
/// assert!(c.acquire().is_none());
/// ```
#[derive(Debug)]
pub enum MaybeEmpty {}

impl Flavour for NonEmpty {
    type Wrap<X> = X;
}

impl Flavour for MaybeEmpty {
    type Wrap<X> = Option<X>;
}

/// Keeps [`Flavour`] to this crate's two flavours, and holds what the containers' code
/// needs of a flavour, out of the public API.
pub(super) mod sealed {
    use super::Flavour;

    /// Implemented by the flavours only; not nameable outside the crate.
    pub trait Sealed {
        /// The container's name in its `Debug` output.
        const NAME: &'static str;
        /// Whether reads return an `Option` (`Wrap<X>` is `Option<X>`): how `Debug` and
        /// `Serialize` show the current version.
        const MAY_BE_EMPTY: bool;

        /// What a container of this flavour returns for `value`, read from the protocol
        /// (`None`: the container is empty). `None` only if this flavour cannot return
        /// that: a [`NonEmpty`](super::NonEmpty) container found empty, which its
        /// invariant rules out.
        fn wrap<X>(value: Option<X>) -> Option<Self::Wrap<X>>
        where
            Self: Flavour;

        /// The value of `wrapped`, back in the protocol's terms.
        fn unwrap<X>(wrapped: Self::Wrap<X>) -> Option<X>
        where
            Self: Flavour;
    }
}

impl sealed::Sealed for NonEmpty {
    const NAME: &'static str = "Container";
    const MAY_BE_EMPTY: bool = false;

    #[inline]
    fn wrap<X>(value: Option<X>) -> Option<X> {
        value
    }

    #[inline]
    fn unwrap<X>(wrapped: X) -> Option<X> {
        Some(wrapped)
    }
}

impl sealed::Sealed for MaybeEmpty {
    const NAME: &'static str = "OptionContainer";
    const MAY_BE_EMPTY: bool = true;

    #[inline]
    fn wrap<X>(value: Option<X>) -> Option<Option<X>> {
        Some(value)
    }

    #[inline]
    fn unwrap<X>(wrapped: Option<X>) -> Option<X> {
        wrapped
    }
}
