//! Retired versions that outlive every handle of their pool: a short-lived thread passes
//! over their lists until they are gone.
//!
//! A retired version goes back to its pool at a pass on a writer's side (`retired.rs`).
//! Once its pool's last handle is gone (every container of the pool dropped, whose drops
//! ran passes of their own), no writer is left to run one: a version a guard still held
//! then would wait for the next pass anywhere in the process, which in a process that went
//! quiet never comes, and its `T` (a file, a socket, a lease) would outlive everything
//! else. So the pool's close hands its list to this module if the list still holds
//! versions ([`adopt`]), and a thread, `poolswap-orphans`, started then if none runs,
//! passes over the adopted lists until each is empty, then exits. Nothing is added to the
//! read path: a guard's drop stays one store, and the thread finds it at its next pass.
//!
//! The thread sleeps [`FIRST_WAIT`] before its first pass and after any pass that
//! returned a version, doubling the wait after each pass that returned none, up to
//! [`LONGEST_WAIT`]: a version is dropped at most about `LONGEST_WAIT` after its last
//! guard (plus the pass), and a guard held for an hour costs about 30 passes a second over
//! one list (each a heavy barrier and a scan of the hazard slots). Each pass repeats while
//! it dropped a version and left another held (`retired::Pass::again`): a chain of
//! versions that hold guards on older ones goes in one wake-up.
//!
//! A closed pool's list gets no new versions (no container of the pool is left). It is
//! released when its last version goes (with the pool's shared state), and may then be
//! taken by a new pool: the thread drops a list once it is empty or was released since
//! it was adopted ([`List::releases`]).
//!
//! Not under loom, whose models run no threads of their own, nor under Miri, which reports
//! a thread still running when the program ends: versions of closed pools there wait for
//! the next [`reclaim`](crate::reclaim()), as they would without this module.

use std::time::Duration;

use super::retired::List;

/// The wait before the thread's first pass, and after a pass that returned a version.
#[cfg_attr(any(loom, miri), allow(dead_code))] // the thread is left out there
const FIRST_WAIT: Duration = Duration::from_millis(1);

/// The longest wait between two passes.
#[cfg_attr(any(loom, miri), allow(dead_code))] // the thread is left out there
const LONGEST_WAIT: Duration = Duration::from_millis(32);

/// Hands the list of a pool whose last handle just went to the orphans' thread, if it
/// holds versions, starting the thread if none runs. A lock (process-wide), and a thread
/// spawn when none runs; nothing if the list is empty. If the thread cannot be spawned,
/// the versions wait for the next reclamation, as before.
pub(crate) fn adopt(list: &'static List) {
    if !list.has_pending() {
        return;
    }
    #[cfg(not(any(loom, miri)))]
    imp::adopt(list);
}

#[cfg(not(any(loom, miri)))]
mod imp {
    use std::panic::{self, AssertUnwindSafe};
    use std::ptr;
    use std::thread;

    use super::{List, FIRST_WAIT, LONGEST_WAIT};
    use crate::sync::Mutex;

    /// The adopted lists, each with its releases count when adopted, and whether the
    /// thread runs. The thread holds the lock only to read or change these, never across
    /// a pass: a pass may drop a pool's last handle (a `T` holding one), whose close comes
    /// back here.
    struct Orphans {
        lists: Vec<(&'static List, usize)>,
        running: bool,
    }

    /// The process's orphans.
    fn orphans() -> &'static Mutex<Orphans> {
        // std's: this module is compiled out under loom (see the module docs).
        #[allow(clippy::disallowed_types)]
        static ORPHANS: std::sync::OnceLock<Mutex<Orphans>> = std::sync::OnceLock::new();
        ORPHANS.get_or_init(|| {
            Mutex::new(Orphans {
                lists: Vec::new(),
                running: false,
            })
        })
    }

    pub(super) fn adopt(list: &'static List) {
        let mut orphans = orphans().lock();
        let releases = list.releases();
        if !orphans.lists.iter().any(|&(l, _)| ptr::eq(l, list)) {
            orphans.lists.push((list, releases));
        }
        if !orphans.running {
            let spawned = thread::Builder::new()
                .name("poolswap-orphans".into())
                .spawn(run);
            // Under the lock: the thread's first look at the lists waits for it, so it
            // finds this one.
            orphans.running = spawned.is_ok();
            if !orphans.running {
                orphans.lists.clear();
            }
        }
    }

    /// The thread: passes over the adopted lists, then drops those emptied or released,
    /// until none is left.
    fn run() {
        let mut wait = FIRST_WAIT;
        let mut lists = Vec::new();
        loop {
            thread::sleep(wait);
            lists.clear();
            lists.extend(orphans().lock().lists.iter().map(|&(l, _)| l));
            let mut returned = 0;
            for list in &lists {
                // A panicking `T::drop`: the pass returned every other version (and the
                // panic hook reported it); the thread goes on.
                returned +=
                    panic::catch_unwind(AssertUnwindSafe(|| list.reclaim_settled())).unwrap_or(1);
            }
            let mut orphans = orphans().lock();
            orphans
                .lists
                .retain(|&(l, releases)| l.has_pending() && l.releases() == releases);
            if orphans.lists.is_empty() {
                orphans.running = false;
                return;
            }
            wait = if returned > 0 {
                FIRST_WAIT
            } else {
                (wait * 2).min(LONGEST_WAIT)
            };
        }
    }
}
