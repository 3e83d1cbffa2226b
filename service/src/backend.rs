//! The four backends: the table readers share ([`Tables`]) and the reloader's side of it
//! ([`Writer`]). Apart from the table's type, every backend runs the same code.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use poolswap::oplog::{OpLog, ReadHandle};
use poolswap::{Container, Pool, Recycled};

use crate::table::{self, Floors, LoadError, Map, Op, Version};

/// Which backend holds the table, chosen at start-up with `--backend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `Container<Recycled<Table>>`: `get_new` → refill the recycled version → `update`.
    Poolswap,
    /// `poolswap::oplog::OpLog`: each reload publishes only the entries that changed.
    OpLog,
    /// `ArcSwap<HashMap<..>>`: a new map per reload.
    ArcSwap,
    /// `RwLock<Arc<HashMap<..>>>`: a new map per reload.
    RwLock,
}

impl Kind {
    /// The backend named `s` (`poolswap`, `oplog`, `arcswap` or `rwlock`).
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "poolswap" => Kind::Poolswap,
            "oplog" => Kind::OpLog,
            "arcswap" | "arc-swap" => Kind::ArcSwap,
            "rwlock" => Kind::RwLock,
            _ => return None,
        })
    }

    /// The name `--backend` takes.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Poolswap => "poolswap",
            Kind::OpLog => "oplog",
            Kind::ArcSwap => "arcswap",
            Kind::RwLock => "rwlock",
        }
    }
}

/// What the op log backend's readers see.
pub type Index = Recycled<Map>;

/// The op log backend's shared table, as readers reach it: a handle that cannot publish.
pub type OpLogReader = ReadHandle<Index>;

/// Readers' access to the op log's table.
fn oplog_reader(log: &OpLog<Index, Op>) -> OpLogReader {
    log.read_handle()
}

/// The table, as the request handlers share it.
// One per process, behind an `Arc`: the `Container`'s size costs nothing, and a box would
// add a pointer chase to every request of that backend alone.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Tables {
    Poolswap(Container<Version>),
    OpLog(OpLogReader),
    ArcSwap(ArcSwap<Map>),
    RwLock(RwLock<Arc<Map>>),
}

impl Tables {
    /// Calls `f` with the values of `key` in the current table (`None`: no such key),
    /// while the table is held. The only code that differs between backends is how the
    /// table is held: a guard, an `Arc`.
    pub fn lookup<R>(&self, key: &str, f: impl FnOnce(Option<&[String]>) -> R) -> R {
        match self {
            Tables::Poolswap(c) => {
                let t = c.acquire();
                f(t.map.get(key).map(Vec::as_slice))
            }
            Tables::OpLog(c) => {
                let t = c.acquire();
                f(t.get(key).map(Vec::as_slice))
            }
            Tables::ArcSwap(a) => {
                let t = a.load();
                f(t.get(key).map(Vec::as_slice))
            }
            Tables::RwLock(l) => {
                let t = Arc::clone(&l.read().unwrap_or_else(|e| e.into_inner()));
                f(t.get(key).map(Vec::as_slice))
            }
        }
    }

    /// The number of keys in the current table.
    pub fn len(&self) -> usize {
        match self {
            Tables::Poolswap(c) => c.acquire().map.len(),
            Tables::OpLog(c) => c.acquire().len(),
            Tables::ArcSwap(a) => a.load().len(),
            Tables::RwLock(l) => l.read().unwrap_or_else(|e| e.into_inner()).len(),
        }
    }
}

/// Spare versions the `poolswap` backend fills before serving: the current one, one per
/// request in flight that may still hold an old one, and the one being built circulate;
/// with these none is first built, and no buffer first allocated, while serving.
const POOLSWAP_SPARES: usize = 4;

/// The reloader's side of the op log backend: the writer and its two scratch parses (the
/// last good one and the next), alternating.
#[derive(Debug)]
pub struct OpLogWriter {
    log: OpLog<Index, Op>,
    prev: Version,
    next: Version,
}

/// The reloader's side of a backend.
#[derive(Debug)]
pub enum Writer {
    Poolswap,
    OpLog(Box<OpLogWriter>),
    Fresh,
}

/// What one reload did, for the stats.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reloaded {
    /// Operations published (the op log backend; 0 for the others).
    pub ops: usize,
    /// Time in the op log's publish (the op log backend).
    pub publish: Duration,
    /// Time in the op log's catch-up after the publish (the op log backend).
    pub catch_up: Duration,
}

/// Builds the backend `kind` from the file at `path`: the readers' table and the
/// reloader's side. Fails if the file cannot be loaded.
pub fn build(
    kind: Kind,
    path: &str,
    floors: &mut Floors,
) -> Result<(Arc<Tables>, Writer), LoadError> {
    Ok(match kind {
        Kind::Poolswap => {
            let pool = Pool::new(table::new_version, |v: &mut Version| {
                v.clear();
                true
            });
            let mut first = pool.get();
            // Twice: the first parse finds the floors, the second gives every buffer its floor.
            table::load_recycled(path, &mut first, floors)?;
            first.clear();
            table::load_recycled(path, &mut first, floors)?;
            let container = Container::new(&pool, first);
            prewarm(&container, path, floors);
            (Arc::new(Tables::Poolswap(container)), Writer::Poolswap)
        }
        Kind::OpLog => {
            let mut prev = table::new_version();
            let mut next = table::new_version();
            for v in [&mut prev, &mut next] {
                table::load_recycled(path, v, floors)?;
                v.clear();
                table::load_recycled(path, v, floors)?;
            }
            let log = OpLog::new(Recycled::new(prev.map.clone()));
            let tables = Arc::new(Tables::OpLog(oplog_reader(&log)));
            (
                tables,
                Writer::OpLog(Box::new(OpLogWriter { log, prev, next })),
            )
        }
        Kind::ArcSwap => {
            let map = table::load_fresh(path)?;
            (
                Arc::new(Tables::ArcSwap(ArcSwap::from_pointee(map))),
                Writer::Fresh,
            )
        }
        Kind::RwLock => {
            let map = table::load_fresh(path)?;
            (
                Arc::new(Tables::RwLock(RwLock::new(Arc::new(map)))),
                Writer::Fresh,
            )
        }
    })
}

/// Fills [`POOLSWAP_SPARES`] versions from `container`'s pool at once, twice each, and
/// gives them back: they wait in the calling thread's (the reloader's) magazine.
fn prewarm(container: &Container<Version>, path: &str, floors: &mut Floors) {
    let spare: Vec<_> = (0..POOLSWAP_SPARES)
        .map(|_| {
            let mut v = container.get_new();
            let _ = table::load_recycled(path, &mut v, floors);
            v.clear();
            let _ = table::load_recycled(path, &mut v, floors);
            v
        })
        .collect();
    drop(spare);
}

impl Writer {
    /// Re-reads and re-parses the file at `path` into `tables`. On an error nothing is
    /// published: readers keep the last good table.
    pub fn reload(
        &mut self,
        tables: &Tables,
        path: &str,
        floors: &mut Floors,
    ) -> Result<Reloaded, LoadError> {
        match (self, tables) {
            (Writer::Poolswap, Tables::Poolswap(c)) => {
                let mut next = c.get_new();
                table::load_recycled(path, &mut next, floors)?;
                c.update(next);
                Ok(Reloaded::default())
            }
            (Writer::OpLog(w), Tables::OpLog(_)) => {
                let OpLogWriter { log, prev, next } = &mut **w;
                next.clear();
                table::load_recycled(path, next, floors)?;
                let ops = table::diff(prev, next, |op| log.append(op));
                std::mem::swap(prev, next);
                let t0 = Instant::now();
                if ops > 0 {
                    log.publish();
                }
                let publish = t0.elapsed();
                let t1 = Instant::now();
                log.catch_up();
                Ok(Reloaded {
                    ops,
                    publish,
                    catch_up: t1.elapsed(),
                })
            }
            (Writer::Fresh, Tables::ArcSwap(a)) => {
                a.store(Arc::new(table::load_fresh(path)?));
                Ok(Reloaded::default())
            }
            (Writer::Fresh, Tables::RwLock(l)) => {
                let new = Arc::new(table::load_fresh(path)?);
                // The old map is dropped after the lock is released, not under it.
                let old =
                    std::mem::replace(&mut *l.write().unwrap_or_else(|e| e.into_inner()), new);
                drop(old);
                Ok(Reloaded::default())
            }
            _ => unreachable!("a writer always goes with its own backend's table"),
        }
    }
}
