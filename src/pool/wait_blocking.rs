//! How a getter at the live bound waits: how long ([`Wait`]) and how often it looks again
//! ([`RECLAIM_POLL`], [`IDLE_POLL`]). The waiting loop itself is
//! `Shared::take_or_acquire_live_permit` (`shared.rs`); the awaitable getter is in
//! `wait_async.rs`.
//!
//! # Synchronization
//!
//! A timed getter waits as a blocking one does (`shared.rs`, "The live bound"): it searches
//! under `waiters`, waits on `returned` with a timeout, and looks again at each wake-up. It
//! gives up only **after a look**, never between a wake-up and the look that follows it, so
//! no notification is lost on it: parking_lot's `wait_for` reports a timeout only for a
//! waiter that was not notified (the notification and the timeout race under the queue's
//! lock, and one wins), so either it was woken and looks, or it timed out and the
//! notification went to another waiter. The loom model `timed_get_vs_return`
//! (`tests/loom_pool.rs`) checks that order; loom has no clock, so there a deadline passes
//! after one wait (`sync::Deadline`).
//!
//! The deadline bounds the sleep, not the work: the last look (a lock per depot), a
//! reclamation if versions are retired, and the reset of the object found may run past it.
//!
//! # A wait that cannot end
//!
//! A blocking `get` that would wait while its thread is the only thread of the process
//! ([`alone`]) waits for ever: an object comes back, or a live permit is freed, only by
//! what some thread does, and this one is blocked. So before such a getter sleeps (the
//! first time, then every [`ALONE_EVERY`]th), it asks; if it is alone, it reclaims and
//! looks once more, and if that reclamation returned nothing and the look found nothing, it
//! gives up with [`NoObject::Alone`], which `get` turns into a panic that names the getters
//! that do not wait.
//!
//! Why that is sound (no panic while some thread could still give an object back):
//!
//! - Only a thread can start a thread: while the getter is alone, none appears but by
//!   what the getter itself runs.
//! - After the question, the getter reclaims and looks again. A version whose last guard a
//!   thread now gone dropped comes back at that reclamation (a guard's drop wakes nobody);
//!   an object such a thread gave back, or a live permit it freed, shows in that look.
//! - That reclamation returned nothing, so it ran no user code (an object's destructor,
//!   which could start a thread), and the look runs none: from the question to the end of
//!   the look, nothing changes but what the getter does, and the look's finding nothing is
//!   final. (If the reclamation returned something, the look most likely takes it; if not,
//!   the getter asks again before it sleeps.)
//! - The kernel counts a process's threads under a lock that each exiting thread takes
//!   after its last store, and the question reads the count under it: what the threads
//!   that are gone did is visible to the getter, as after a join.
//!
//! What it does not see: objects held by a thread that is blocked too, or that never lets
//! go of them (another thread's guards, `Pooled`s sent to a thread that will not drop
//! them), and waits on platforms other than Linux, under Miri and loom. A `get_timeout`
//! is left to its deadline, and `get_async` is never told: another task of the same thread
//! may give an object back while it waits.
//!
//! Why not look at what the calling thread holds, say every live object named by one of
//! its hazard slots, or checked out by it: guards and `Pooled`s are `Send`. A thread that
//! acquired a guard (its slot names the version) may have sent it to a worker that drops it
//! later, which empties the slot; a `Pooled` got here may be dropped elsewhere. So what a
//! thread acquired says nothing sure of what it still holds, and a panic on it could come
//! while another thread was about to give an object back. (Counting them per thread would
//! cost the read path and the hit path besides.)

use std::time::Duration;

use crate::sync::Deadline;

/// How long a getter at the live bound may wait.
#[derive(Clone, Copy, Debug)]
pub(super) enum Wait {
    /// Not at all (`try_get`).
    No,
    /// Until an object can be had (`get`).
    Forever,
    /// Until the deadline (`get_timeout`).
    Until(Deadline),
}

impl Wait {
    /// A wait of at most `timeout` from now (without end if that cannot be represented).
    pub(super) fn within(timeout: Duration) -> Wait {
        Deadline::after(timeout).map_or(Wait::Forever, Wait::Until)
    }

    /// Whether this wait has no end (`get`): only such a wait is given up when nothing can
    /// end it (module docs, "A wait that cannot end").
    pub(super) fn is_forever(self) -> bool {
        matches!(self, Wait::Forever)
    }

    /// How long a getter that has waited `waits` times may sleep now; `None`: give up.
    pub(super) fn left(self, waits: u32) -> Option<Duration> {
        match self {
            Wait::No => None,
            Wait::Forever => Some(Duration::MAX),
            Wait::Until(deadline) => deadline.left(waits),
        }
    }
}

/// How often a getter waiting at the live bound reclaims and looks again while versions are
/// retired: a guard's drop wakes nobody, so a retired version comes back only at a
/// reclamation.
pub(super) const RECLAIM_POLL: Duration = Duration::from_micros(500);

/// How often a getter waiting at the live bound looks again when no version is retired: a
/// backstop for a version retired after its last look.
pub(super) const IDLE_POLL: Duration = Duration::from_millis(20);

/// Why a getter at the live bound got no object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NoObject {
    /// Its wait ([`Wait::No`] or [`Wait::Until`]) is over.
    Deadline,
    /// A wait without end ([`Wait::Forever`]) that nothing could end: the calling thread is
    /// the process's only thread (module docs, "A wait that cannot end").
    Alone,
}

/// Whether [`alone`] can ever say `true` here: where it cannot, a getter does not ask (and
/// loom's models of the wait stay as they were).
pub(super) const CAN_TELL: bool = cfg!(all(target_os = "linux", not(miri), not(loom)));

/// A getter that waits without end asks whether it is [`alone`] before its first sleep and
/// then before every this-many-th: reading the thread count costs a system call or three,
/// and waits come every [`RECLAIM_POLL`] while versions are retired.
pub(super) const ALONE_EVERY: u32 = 32;

/// Whether the calling thread is the only thread of the process now: nothing it does not do
/// itself can change while it waits. Reads the thread count of `/proc/self/stat` (an open, a
/// read and a close; no allocation); `false` if it cannot be read.
#[cfg(all(target_os = "linux", not(miri), not(loom)))]
pub(super) fn alone() -> bool {
    use std::io::Read;

    // `pid (comm) state ppid ...`: the count is the 20th field, the 18th after the name,
    // whose closing parenthesis is the last of the line (the name is at most 15 bytes;
    // the fields up to the count take fewer than 300 bytes in all).
    let mut buf = [0u8; 512];
    let Ok(mut file) = std::fs::File::open("/proc/self/stat") else {
        return false;
    };
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    let line = &buf[..len];
    let Some(close) = line.iter().rposition(|&b| b == b')') else {
        return false;
    };
    let threads = line[close + 1..]
        .split(|&b| b == b' ')
        .filter(|field| !field.is_empty())
        .nth(17);
    threads == Some(b"1")
}

/// Elsewhere, under Miri (no `/proc`) and under loom (whose model threads are not the
/// process's): never known, so never given up.
#[cfg(not(all(target_os = "linux", not(miri), not(loom))))]
pub(super) fn alone() -> bool {
    false
}
