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
    use std::fmt;

    use serde::ser::Impossible;
    use serde::{Serialize, Serializer};

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

    /// A serializer of `u32`s and options of them that says which calls it got, to tell
    /// `Some(1)` from `1` (which JSON writes alike); refuses everything else.
    struct Calls;

    /// The methods of [`Calls`] that refuse.
    macro_rules! refuse {
        ($($name:ident($($arg:ty),*) -> $ok:ty;)*) => {
            $(fn $name(self, $(_: $arg),*) -> Result<$ok, fmt::Error> {
                Err(fmt::Error)
            })*
        };
    }

    impl Serializer for Calls {
        type Ok = String;
        type Error = fmt::Error;
        type SerializeSeq = Impossible<String, fmt::Error>;
        type SerializeTuple = Impossible<String, fmt::Error>;
        type SerializeTupleStruct = Impossible<String, fmt::Error>;
        type SerializeTupleVariant = Impossible<String, fmt::Error>;
        type SerializeMap = Impossible<String, fmt::Error>;
        type SerializeStruct = Impossible<String, fmt::Error>;
        type SerializeStructVariant = Impossible<String, fmt::Error>;

        fn serialize_u32(self, v: u32) -> Result<String, fmt::Error> {
            Ok(v.to_string())
        }
        fn serialize_none(self) -> Result<String, fmt::Error> {
            Ok("none".into())
        }
        fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<String, fmt::Error> {
            Ok(format!("some({})", v.serialize(Calls)?))
        }
        fn serialize_newtype_struct<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: &T,
        ) -> Result<String, fmt::Error> {
            Err(fmt::Error)
        }
        fn serialize_newtype_variant<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<String, fmt::Error> {
            Err(fmt::Error)
        }
        refuse! {
            serialize_bool(bool) -> String;
            serialize_i8(i8) -> String;
            serialize_i16(i16) -> String;
            serialize_i32(i32) -> String;
            serialize_i64(i64) -> String;
            serialize_u8(u8) -> String;
            serialize_u16(u16) -> String;
            serialize_u64(u64) -> String;
            serialize_f32(f32) -> String;
            serialize_f64(f64) -> String;
            serialize_char(char) -> String;
            serialize_str(&str) -> String;
            serialize_bytes(&[u8]) -> String;
            serialize_unit() -> String;
            serialize_unit_struct(&'static str) -> String;
            serialize_unit_variant(&'static str, u32, &'static str) -> String;
            serialize_seq(Option<usize>) -> Self::SerializeSeq;
            serialize_tuple(usize) -> Self::SerializeTuple;
            serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
            serialize_tuple_variant(&'static str, u32, &'static str, usize)
                -> Self::SerializeTupleVariant;
            serialize_map(Option<usize>) -> Self::SerializeMap;
            serialize_struct(&'static str, usize) -> Self::SerializeStruct;
            serialize_struct_variant(&'static str, u32, &'static str, usize)
                -> Self::SerializeStructVariant;
        }
    }

    #[test]
    fn a_container_serializes_its_value_and_an_option_container_an_option() {
        let pool = Pool::new(|| 0u32, |n| *n = 0);
        let c = Container::from_value(&pool, 1);
        assert_eq!(c.serialize(Calls).unwrap(), "1");
        let o = OptionContainer::from_value(&pool, 2);
        assert_eq!(o.serialize(Calls).unwrap(), "some(2)");
        drop(o.take());
        assert_eq!(o.serialize(Calls).unwrap(), "none");
    }
}
