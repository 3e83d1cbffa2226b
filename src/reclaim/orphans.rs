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
//! taken by a new pool. So each adopted list is kept with the count of releases it had at
//! its pool's close ([`List::releases`]), and the thread passes over it only while the
//! count is unchanged, tested under the list's lock with the take
//! ([`List::reclaim_orphaned`]): it never returns a version of the new pool, whose own
//! writers reclaim. It drops the list once nothing of it waits ([`List::holds_any`]: none
//! on the list, none in a pass in flight, which may put one back) or the count changed. A
//! new pool's close that adopts a list still kept for an earlier one sets the count to its
//! own, so that the thread does not drop it.
//!
//! Not under loom, whose models run no threads of their own, nor under Miri, which reports
//! a thread still running when the program ends: versions of closed pools there wait for
//! the next [`reclaim`](crate::reclaim()), as they would without this module. Under loom,
//! the adopted lists are kept all the same, and a model runs the thread's pass itself
//! (`pass_adopted`, loom builds only).

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
    // Exact, not the `pending` hint: a pass in flight on another thread (a `reclaim`, a
    // background reclaimer) may hold a guarded version off the list, to put it back after
    // this close, with nobody left to pass over the list.
    if !list.holds_any() {
        return;
    }
    #[cfg(not(any(loom, miri)))]
    imp::adopt(list);
    #[cfg(loom)]
    ADOPTED.lock().push((list, list.releases()));
}

// Under loom, the adopted lists of the model execution, for `pass_adopted`.
#[cfg(loom)]
loom::lazy_static! {
    static ref ADOPTED: crate::sync::Mutex<Vec<(&'static List, usize)>> =
        crate::sync::Mutex::new(Vec::new());
}

/// Under loom, what the orphans' thread does at a wake-up, run by the model: a pass over
/// each adopted list that still belongs to the pool it was adopted for. Returns how many
/// versions went back.
#[cfg(loom)]
pub(crate) fn pass_adopted() -> usize {
    let lists = ADOPTED.lock().clone();
    lists
        .iter()
        .map(|&(list, releases)| list.reclaim_orphaned(releases))
        .sum()
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
        // The closing pool still owns the list: nothing changes the count meanwhile.
        let releases = list.releases();
        // Still here for an earlier pool that gave the list back since (the thread has not
        // dropped it yet): it is this pool's now.
        match orphans.lists.iter_mut().find(|(l, _)| ptr::eq(*l, list)) {
            Some(adopted) => adopted.1 = releases,
            None => orphans.lists.push((list, releases)),
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
            lists.extend_from_slice(&orphans().lock().lists);
            let mut returned = 0;
            for &(list, releases) in &lists {
                // A panicking `T::drop`: the pass returned every other version (and the
                // panic hook reported it); the thread goes on.
                let pass = || list.reclaim_orphaned(releases);
                returned += panic::catch_unwind(AssertUnwindSafe(pass)).unwrap_or(1);
            }
            let mut orphans = orphans().lock();
            // A list that a new pool's close adopted again since the copy above has that
            // pool's count here: it stays, for the next pass.
            orphans
                .lists
                .retain(|&(l, releases)| l.releases() == releases && l.holds_any());
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
