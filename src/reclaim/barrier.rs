//! Asymmetric memory barriers: a *light* one for readers, on every `acquire`, and a *heavy*
//! one for a reclamation pass, once per pass.
//!
//! The hazard-slot protocol needs, on both sides, "my store, then a full barrier, then my
//! load" (the store-buffering pattern). An asymmetric barrier moves the whole cost to the
//! rare side. The process uses one of two modes:
//!
//! | mode | [`light`] (reader) | [`heavy`] (reclamation pass) |
//! |---|---|---|
//! | membarrier (Linux, registered and fast) | compiler fence: no instruction | `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`: a system call that interrupts every CPU running a thread of the process |
//! | fence (elsewhere, loom, Miri, or chosen) | `fence(SeqCst)` (one locked instruction on x86-64) | `fence(SeqCst)` |
//!
//! `membarrier` makes every thread of the process that is running execute a full barrier
//! before the call returns, so a light barrier (which keeps the compiler from reordering)
//! is ordered against it as two `fence(SeqCst)`s are. Two light barriers are **not**
//! ordered with each other: every path that decides to return a version uses [`heavy`]. A
//! guard's drop takes no barrier in either mode.
//!
//! # Choosing the mode
//!
//! Once per process, in [`init`], which a container's constructor calls, so the choice is
//! made before any reader of any container exists and every thread sees the same mode. It
//! never changes afterwards. Membarrier is chosen when `MEMBARRIER_CMD_QUERY` lists the
//! private expedited commands, registration succeeds, one timed barrier takes under
//! [`SLOW_BARRIER`] (some sandboxes turn it into a system-wide grace period), and the
//! environment variable `POOLSWAP_BARRIER` is not `fence`. That variable is for the
//! crate's own tests and benchmarks, which run the fence mode on machines where membarrier
//! works; it is not part of the public API.
//!
//! Sources: Linux `membarrier(2)` and `kernel/sched/membarrier.c`; folly's
//! `AsymmetricThreadFence` (`folly/synchronization/AsymmetricThreadFence.h`) and the
//! haphazard crate, which pair a compiler fence with `membarrier` the same way; liburcu's
//! `memb` flavour.

#[cfg(all(target_os = "linux", not(any(loom, miri))))]
use std::sync::atomic::compiler_fence;
#[cfg(not(loom))]
use std::sync::atomic::fence;
use std::sync::atomic::Ordering;

#[cfg(loom)]
use loom::sync::atomic::fence;

/// [`MODE`] before [`init`] ran.
const UNSET: u8 = 0;
/// [`MODE`]: the fence mode.
const FENCE: u8 = 1;
/// [`MODE`]: the membarrier mode.
const MEMBARRIER: u8 = 2;

/// The chosen mode; written once by [`init`]. A std atomic even under loom: it is set
/// before any model thread runs and is not part of the protocol being checked.
#[allow(clippy::disallowed_types)] // std's on purpose, as said above.
static MODE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(UNSET);

/// A heavy barrier slower than this (200 µs, one timed call at start-up) makes [`init`]
/// choose the fence mode: readers then pay a fence each, but passes do not pay a grace
/// period each.
#[cfg(all(target_os = "linux", not(any(loom, miri))))]
const SLOW_BARRIER: std::time::Duration = std::time::Duration::from_micros(200);

/// Chooses the mode, once per process. After the first call, one `Relaxed` load; the first
/// makes up to three system calls (Linux).
pub(crate) fn init() {
    // Relaxed: a hint only; `Once` below orders the real decision.
    if MODE.load(Ordering::Relaxed) != UNSET {
        return;
    }
    #[allow(clippy::disallowed_types)] // std's even under loom, as `MODE` is.
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mode = if membarrier::available() {
            MEMBARRIER
        } else {
            FENCE
        };
        // Relaxed: `call_once` orders this store before every later `init` returns, and
        // containers are made after `init` returns.
        MODE.store(mode, Ordering::Relaxed);
    });
}

/// Whether [`init`] chose the membarrier mode (`false` before it runs): readers' light
/// barriers are then compiler fences, and [`heavy`] is `membarrier(2)`. One load.
pub(crate) fn membarrier() -> bool {
    // Relaxed: see `init`.
    MODE.load(Ordering::Relaxed) == MEMBARRIER
}

/// `fence(SeqCst)` (loom's under loom), whatever the mode: for a handshake between two
/// threads that each store a flag and then load the other's (a Dekker pair), where both
/// sides run rarely (the background reclaimer's sleep and the update that wakes it), and for
/// the readers and passes of fenced versions.
#[inline]
pub(crate) fn full() {
    fence(Ordering::SeqCst);
}

/// The reader's side: orders the caller's earlier stores before its later loads, as far as
/// any thread's [`heavy`] barrier can tell. A load of the mode and a compiler fence
/// (membarrier mode) or a `fence(SeqCst)`.
#[inline(always)]
pub(crate) fn light() {
    #[cfg(all(target_os = "linux", not(any(loom, miri))))]
    {
        // Relaxed: see `init`.
        if MODE.load(Ordering::Relaxed) == MEMBARRIER {
            compiler_fence(Ordering::SeqCst);
            return;
        }
    }
    fence(Ordering::SeqCst);
}

/// The owner's side of the pool's magazine handshake (`pool/local.rs`, "Reaching an idle
/// thread's magazine"): orders the owner's busy mark before its load of the request flag
/// against a [`heavy`] barrier, **in the membarrier mode only**. A compiler fence in every
/// mode (no instruction, no load of the mode), `fence(SeqCst)` under loom. In the fence
/// mode it orders nothing against another thread, so the other side must not rely on it
/// there: see [`interrupts`].
#[inline(always)]
pub(crate) fn signal() {
    #[cfg(not(loom))]
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    #[cfg(loom)]
    fence(Ordering::SeqCst);
}

/// Whether [`heavy`] is ordered against [`signal`]: the membarrier mode (and loom, where
/// both are `fence(SeqCst)`).
pub(crate) fn interrupts() -> bool {
    cfg!(loom) || membarrier()
}

/// The deciding side: a full barrier on the calling thread and, in the membarrier mode, on
/// every thread of the process that is running (one system call). Never fails: a kernel
/// that refused the call after registering the process aborts it (see `private_expedited`).
pub(crate) fn heavy() {
    #[cfg(all(target_os = "linux", not(any(loom, miri))))]
    {
        // Relaxed: see `init`.
        if MODE.load(Ordering::Relaxed) == MEMBARRIER {
            membarrier::private_expedited();
            return;
        }
    }
    fence(Ordering::SeqCst);
}

#[cfg(all(target_os = "linux", not(any(loom, miri))))]
mod membarrier {
    use std::time::Instant;

    // From `linux/membarrier.h`.
    const CMD_QUERY: libc::c_int = 0;
    const CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

    fn call(cmd: libc::c_int) -> libc::c_long {
        // SAFETY: membarrier takes three integers and touches no memory of ours.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_uint,
                0 as libc::c_int,
            )
        }
    }

    /// Queries, registers and times one barrier; `true` if readers may use compiler
    /// fences from now on. `false` if `POOLSWAP_BARRIER=fence` is set.
    pub(super) fn available() -> bool {
        if std::env::var_os("POOLSWAP_BARRIER").is_some_and(|v| v == "fence") {
            return false;
        }
        let both = CMD_PRIVATE_EXPEDITED | CMD_REGISTER_PRIVATE_EXPEDITED;
        let supported = call(CMD_QUERY);
        if supported < 0 || supported & both as libc::c_long != both as libc::c_long {
            return false;
        }
        if call(CMD_REGISTER_PRIVATE_EXPEDITED) != 0 {
            return false;
        }
        let start = Instant::now();
        let ok = call(CMD_PRIVATE_EXPEDITED) == 0;
        ok && start.elapsed() < super::SLOW_BARRIER
    }

    /// `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`; aborts the process if it fails.
    pub(super) fn private_expedited() {
        if call(CMD_PRIVATE_EXPEDITED) != 0 {
            // Registered and tested in `available`: the kernel cannot refuse it now. If it
            // did, readers' compiler fences would order nothing: stop rather than risk
            // returning a version that a reader still reads to its pool.
            eprintln!("poolswap: membarrier(PRIVATE_EXPEDITED) failed after registration");
            std::process::abort();
        }
    }
}

#[cfg(not(all(target_os = "linux", not(any(loom, miri)))))]
mod membarrier {
    /// No `membarrier(2)` here: the fence mode.
    pub(super) fn available() -> bool {
        false
    }
}

#[cfg(test)]
#[cfg(not(loom))]
mod tests {
    use super::{heavy, init, light, membarrier};

    #[test]
    fn the_mode_is_chosen_once_and_kept() {
        init();
        let first = membarrier();
        init();
        assert_eq!(membarrier(), first);
        // Both barriers run in either mode.
        light();
        heavy();
        if cfg!(miri) {
            assert!(!first, "Miri cannot run membarrier");
        }
    }
}
