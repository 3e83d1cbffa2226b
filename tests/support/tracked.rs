//! A pooled object that reports what happens to it, and the small helpers the test binaries
//! share.
//!
//! Include it with `#[path = "support/tracked.rs"] mod tracked;` (from `tests/NAME/main.rs`:
//! `#[path = "../support/tracked.rs"]`). A pool's [`Log`] counts the [`Tracked`] objects
//! its factory made and the ones dropped; a log made with [`Log::with_history`] also keeps
//! which ids were reset (and on which thread) and dropped, in order. The plain [`Log::new`]
//! keeps the counts only: a few atomics per operation and no lock, cheap enough for loops
//! of 100,000 gets.
#![allow(dead_code)]

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread::{self, ThreadId};

use poolswap::{Pool, PoolBuilder};

/// The most spare idle permits one thread may hold beyond the objects in its magazine: 4,
/// as `PoolBuilder::max_idle` documents.
pub const SPARE_SLOTS: usize = 4;

/// The most objects one thread's magazine holds: 16, as `PoolBuilder::max_idle` documents.
pub const MAGAZINE_SIZE: usize = 16;

/// The floor of the adaptive idle bound: 256, as `PoolBuilder::max_idle` documents (a
/// fresh pool's `stats().max_idle`).
pub const DEFAULT_MAX_IDLE: usize = 256;

/// Scales an iteration count down under Miri.
pub const fn scaled(normal: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// What happened to the objects of one pool, and the knobs that make its user code fail.
#[derive(Default)]
pub struct Log {
    /// Factory calls so far, and so the next object's id.
    made: AtomicUsize,
    dropped: AtomicU64,
    /// `Tracked` objects of this log that exist now, and the most that ever existed at once.
    alive: AtomicUsize,
    peak: AtomicUsize,
    /// `Some` for a log made by [`Log::with_history`].
    history: Option<Mutex<History>>,
    /// The factory panics with "factory failed on purpose" while set.
    pub panic_in_factory: AtomicBool,
    /// Reset panics with "reset failed on purpose" while set (before it logs or resets).
    pub panic_in_reset: AtomicBool,
    /// Reset returns `false` (the pool discards the object) while set.
    pub reject: AtomicBool,
    /// [`Tracked`]'s destructor panics with "drop failed on purpose" while set, unless the
    /// thread is already panicking; the drop is counted first.
    pub panic_on_drop: AtomicBool,
}

/// Which ids were reset and dropped, in order, each with the thread it ran on.
#[derive(Default)]
struct History {
    resets: Vec<(usize, ThreadId)>,
    drops: Vec<(usize, ThreadId)>,
}

impl Log {
    /// A log that counts.
    pub fn new() -> Arc<Log> {
        Arc::new(Log::default())
    }

    /// A log that counts and also records which ids were reset and dropped, and where:
    /// one lock per reset and per drop.
    pub fn with_history() -> Arc<Log> {
        Arc::new(Log {
            history: Some(Mutex::default()),
            ..Log::default()
        })
    }

    /// Factory calls so far.
    pub fn made(&self) -> u64 {
        self.made.load(SeqCst) as u64
    }

    /// Objects dropped so far, made by the factory or not.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(SeqCst)
    }

    /// The most objects of this log (made by the factory or [`Tracked::foreign`]) that
    /// existed at once so far: exact, counted as each is built and dropped.
    pub fn peak_alive(&self) -> usize {
        self.peak.load(SeqCst)
    }

    /// Objects of this log that exist now.
    pub fn alive(&self) -> usize {
        self.alive.load(SeqCst)
    }

    /// Ids reset, in order.
    pub fn resets(&self) -> Vec<usize> {
        self.history().resets.iter().map(|&(id, _)| id).collect()
    }

    /// The threads the resets ran on, in order.
    pub fn reset_threads(&self) -> Vec<ThreadId> {
        self.history().resets.iter().map(|&(_, t)| t).collect()
    }

    /// Ids dropped, in order.
    pub fn drops(&self) -> Vec<usize> {
        self.history().drops.iter().map(|&(id, _)| id).collect()
    }

    /// Whether an object with this id was dropped.
    pub fn was_dropped(&self, id: usize) -> bool {
        self.history().drops.iter().any(|&(d, _)| d == id)
    }

    /// Whether an object with this id was dropped on the calling thread.
    pub fn was_dropped_here(&self, id: usize) -> bool {
        let here = thread::current().id();
        self.history().drops.contains(&(id, here))
    }

    /// Waits until every object the factory made was dropped, polling (a background thread
    /// may still be dropping some: the orphans' thread, which passes over the retired list
    /// of a pool whose last handle went while guards held versions), then checks that each
    /// was dropped exactly once. Panics if that takes over 20 s: a bound on a hang.
    pub fn wait_all_dropped_once(&self) {
        let start = std::time::Instant::now();
        while self.history().drops.len() < self.made.load(SeqCst) {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(20),
                "{} of {} objects dropped after 20 s",
                self.history().drops.len(),
                self.made.load(SeqCst)
            );
            thread::sleep(std::time::Duration::from_millis(1));
        }
        self.assert_all_dropped_once();
    }

    /// Every object the factory made was dropped exactly once, and nothing else was.
    pub fn assert_all_dropped_once(&self) {
        let mut drops = self.drops();
        drops.sort_unstable();
        let expected: Vec<usize> = (0..self.made.load(SeqCst)).collect();
        assert_eq!(drops, expected, "each object dropped exactly once");
    }

    fn history(&self) -> MutexGuard<'_, History> {
        self.history
            .as_ref()
            .expect("a Log::new log keeps no history: use Log::with_history")
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

/// A pooled object: its id, a value the tests write, and whether reset ran on it since it
/// was last filled.
pub struct Tracked {
    pub id: usize,
    pub value: u64,
    /// Set by reset; cleared by whoever fills the object.
    pub recycled: bool,
    pub log: Arc<Log>,
}

impl Tracked {
    /// The factory: a new object with the next id, counted as made (or the factory's panic,
    /// while `panic_in_factory` is set).
    pub fn new(log: &Arc<Log>) -> Tracked {
        if log.panic_in_factory.load(SeqCst) {
            panic!("factory failed on purpose");
        }
        Tracked::foreign(log, log.made.fetch_add(1, SeqCst))
    }

    /// An object made outside the factory (for `Pool::adopt`), with the given id: not
    /// counted as made, but its drop is logged.
    pub fn foreign(log: &Arc<Log>, id: usize) -> Tracked {
        let alive = log.alive.fetch_add(1, SeqCst) + 1;
        log.peak.fetch_max(alive, SeqCst);
        Tracked {
            id,
            value: 0,
            recycled: false,
            log: Arc::clone(log),
        }
    }

    /// The pool's reset: logs it, clears the object, and says whether to keep it.
    fn reset(&mut self) -> bool {
        let log = &self.log;
        if log.panic_in_reset.load(SeqCst) {
            panic!("reset failed on purpose");
        }
        if log.history.is_some() {
            log.history().resets.push((self.id, thread::current().id()));
        }
        self.value = 0;
        self.recycled = true;
        !log.reject.load(SeqCst)
    }
}

impl fmt::Debug for Tracked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracked")
            .field("id", &self.id)
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let log = &self.log;
        log.dropped.fetch_add(1, SeqCst);
        log.alive.fetch_sub(1, SeqCst);
        if log.history.is_some() {
            log.history().drops.push((self.id, thread::current().id()));
        }
        if log.panic_on_drop.load(SeqCst) && !thread::panicking() {
            panic!("drop failed on purpose");
        }
    }
}

/// A builder for a pool of [`Tracked`] objects logged in `log`, with the default bounds.
pub fn tracked_builder(log: &Arc<Log>) -> PoolBuilder<Tracked> {
    let log = Arc::clone(log);
    Pool::builder(move || Tracked::new(&log), Tracked::reset)
}

/// A pool of [`Tracked`] objects logged in `log`.
pub fn tracked_pool(log: &Arc<Log>, max_idle: usize, min_idle: usize) -> Pool<Tracked> {
    tracked_builder(log)
        .max_idle(max_idle)
        .min_idle(min_idle)
        .build()
}

/// A one-shot signal between threads that cannot hang a failing test: if the thread that
/// should signal panics, its `Sender` is dropped on the way out and `wait` returns anyway
/// (the panic then fails the test when the thread is joined). Clone the `Sender` to wait
/// for several threads: `wait` returns once every clone is gone.
pub fn signal() -> (mpsc::Sender<()>, Waiter) {
    let (tx, rx) = mpsc::channel();
    (tx, Waiter(rx))
}

pub struct Waiter(mpsc::Receiver<()>);

impl Waiter {
    /// Waits for a signal, or for the signalling side to be gone.
    pub fn wait(&self) {
        let _ = self.0.recv();
    }
}

/// The message of a panic caught with `catch_unwind`.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("<non-string panic>")
    }
}
