//! `serde::Serialize` for the handles (feature `serde`): each serializes as the value it
//! reads, as serde's own impls for `Arc<T>` and `&T` do; a container as its current
//! version. There is no `Deserialize`: a version comes from a pool, which a deserializer
//! does not have (deserialize a `T`, then [`Container::from_value`] or
//! [`Pool::adopt`](crate::Pool::adopt) it).
//!
//! Costs: a container's `serialize` is an [`acquire`](Container::acquire) for the
//! duration of the call; the guards' are free.
//!
//! ```
//! use poolswap::{Container, Pool};
//!
//! let pool = Pool::new(Vec::<u32>::new, Vec::clear);
//! let c = Container::from_value(&pool, vec![1, 2, 3]);
//! assert_eq!(serde_json::to_string(&c).unwrap(), "[1,2,3]");
//! assert_eq!(serde_json::to_string(&c.acquire()).unwrap(), "[1,2,3]");
//! ```

use serde::{Serialize, Serializer};

use crate::{ContainerAny, Flavour, Guard, MappedGuard, OwnedPooled, Pooled};

/// The version the guard reads, as serde's impl for `Arc<T>` serializes the `T`.
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<T: Serialize> Serialize for Guard<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

/// The part of the version the guard reads.
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<T, U: ?Sized + Serialize> Serialize for MappedGuard<T, U> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

/// The object, as filled so far.
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<T: Serialize> Serialize for Pooled<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

/// The object, as filled so far.
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<T: Serialize> Serialize for OwnedPooled<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

/// The current version, read under a guard for the duration of the call, as
/// [`acquire`](ContainerAny::acquire) returns it: for an
/// [`OptionContainer`](crate::OptionContainer), as `Option<T>` serializes (`None` while
/// empty).
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<T: Serialize, F: Flavour> Serialize for ContainerAny<T, F> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.with_acquire(|current| match F::unwrap(current) {
            // As this flavour's `acquire` returns it: the value, or an `Option` of it.
            Some(value) if !F::MAY_BE_EMPTY => value.serialize(serializer),
            current => current.serialize(serializer),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::{Container, Guard, OptionContainer, Pool};

    #[derive(serde::Serialize, Default)]
    struct Config {
        name: String,
        ports: Vec<u16>,
    }

    fn pool() -> Pool<Config> {
        Pool::new(Config::default, |c: &mut Config| {
            c.name.clear();
            c.ports.clear();
        })
    }

    #[test]
    fn handles_serialize_as_their_value() {
        let pool = pool();
        let mut next = pool.get();
        next.name.push_str("api");
        next.ports.extend([80, 443]);
        let want = r#"{"name":"api","ports":[80,443]}"#;
        assert_eq!(serde_json::to_string(&next).unwrap(), want);
        let owned = crate::Pooled::into_owned(next);
        assert_eq!(serde_json::to_string(&owned).unwrap(), want);
        let c = Container::new(&pool, owned);
        assert_eq!(serde_json::to_string(&c).unwrap(), want);
        let ports = Guard::map(c.acquire(), |c| &c.ports);
        assert_eq!(serde_json::to_string(&ports).unwrap(), "[80,443]");
    }

    #[test]
    fn a_container_serializes_its_current_version() {
        let pool = Pool::new(BTreeMap::<String, u32>::new, BTreeMap::clear);
        let c = OptionContainer::empty(&pool);
        assert_eq!(serde_json::to_string(&c).unwrap(), "null");
        let mut next = c.get_new();
        next.insert("a".into(), 1);
        c.update(next);
        assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"a":1}"#);
        let mut next = c.get_new();
        next.insert("b".into(), 2);
        c.update(next);
        assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"b":2}"#);
    }
}
