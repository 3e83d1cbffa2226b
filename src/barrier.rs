//! Asymmetric memory barriers: a *light* one for readers and a *heavy* one for whoever
//! decides that a retired version may be recycled.
//!
//! The hazard-slot protocol (`hazard.rs`) needs, on both sides, "my store, then a full
//! barrier, then my load" (the store-buffering pattern). Readers run it on every `acquire`,
//! reclaimers once per reclamation pass. An asymmetric barrier moves the whole cost to the rare side:
//!
//! | mode | [`light`] (reader) | [`heavy`] (writer, collector) |
//! |---|---|---|
//! | `Membarrier` (Linux, registered and fast) | compiler fence: no instruction | `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`: an IPI to every CPU running a thread of this process, ~0.3-12 µs |
//! | `Fence` (elsewhere, loom, Miri, or chosen) | `fence(SeqCst)` (one locked instruction on x86-64) | `fence(SeqCst)` |
//!
//! In `Membarrier` mode a container may publish a version *fenced* (when updates come
//! close together): its readers then take `fence(SeqCst)` for it, and a reclamation of
//! fenced versions only needs the same fence instead of `membarrier` (`container/raw.rs`,
//! "Fenced versions").
//!
//! A guard drop takes no barrier in either mode: it is one `Release` store, and readers
//! never reclaim (`hazard.rs`, "Guard drop").
//!
//! `membarrier` guarantees that every thread running at the time executes a full barrier
//! before the call returns, so a light barrier (which keeps the compiler from reordering)
//! is ordered against it as two `fence(SeqCst)`s are. Two light barriers are **not** ordered
//! with each other: every path that decides to recycle uses [`heavy`].
//!
//! Sources: Linux `kernel/sched/membarrier.c` and `membarrier(2)`; folly's
//! `AsymmetricThreadFence` (`folly/synchronization/AsymmetricThreadFence.h`); liburcu's
//! `memb` flavour; the `membarrier` crate and seize's `src/raw/membarrier.rs`, which pair a
//! compiler fence with `membarrier` the same way.
//!
//! # Choosing the mode
//!
//! Once per process, in [`init`], which `Container`'s constructors call, so the choice is
//! made before any reader of any container exists and every reader and writer sees the same
//! mode (they reach a container through whatever published it, which happens after
//! `init`). It is never changed afterwards. `Membarrier` is chosen when `MEMBARRIER_CMD_QUERY`
//! lists the private expedited commands, registration succeeds, one timed barrier takes
//! under [`SLOW_BARRIER`] (some sandboxes, gVisor's systrap among them, turn it into a
//! system-wide grace period of milliseconds), and the environment variable
//! `POOLSWAP_BARRIER` is not `fence`.

#[cfg(all(target_os = "linux", not(any(loom, miri))))]
use std::sync::atomic::compiler_fence;
#[cfg(not(loom))]
use std::sync::atomic::fence;
use std::sync::atomic::Ordering;

#[cfg(loom)]
use loom::sync::atomic::fence;

/// Which memory barriers the read path uses in this process; see [`barrier_mode`].
///
/// [`barrier_mode`]: crate::barrier_mode
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierMode {
    /// `fence(SeqCst)` for readers and writers: one locked instruction per `acquire` on
    /// x86-64; a guard drop takes none. Used where `membarrier` is missing or slow, under
    /// Miri, and when `POOLSWAP_BARRIER=fence` is set.
    Fence,
    /// A compiler fence for readers (no instruction) and
    /// `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` for writers (Linux).
    Membarrier,
}

const UNSET: u8 = 0;
const FENCE: u8 = 1;
const MEMBARRIER: u8 = 2;

/// The chosen mode; written once by [`init`]. A std atomic even under loom: it is set
/// before any model thread runs and is not part of the protocol being checked.
#[allow(clippy::disallowed_types)] // std's on purpose, as said above.
static MODE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(UNSET);

/// A heavy barrier slower than this (one timed call at start-up) makes [`init`] choose
/// `Fence`: readers then pay a fence each, but writers do not pay milliseconds per update.
#[cfg(all(target_os = "linux", not(any(loom, miri))))]
const SLOW_BARRIER: std::time::Duration = std::time::Duration::from_micros(200);

/// Chooses the mode, once per process. Cheap after the first call (one atomic load).
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

/// The mode [`init`] chose (`Fence` if it has not run).
pub(crate) fn mode() -> BarrierMode {
    // Relaxed: see `init`.
    match MODE.load(Ordering::Relaxed) {
        MEMBARRIER => BarrierMode::Membarrier,
        _ => BarrierMode::Fence,
    }
}

/// `fence(SeqCst)` (loom's under loom), whatever the mode: for a handshake between two
/// threads that each store a flag and then load the other's (a Dekker pair), where both
/// sides run rarely (the background reclaimer's sleep and the update that wakes it).
#[inline]
pub(crate) fn full() {
    fence(Ordering::SeqCst);
}

/// The reader's side: orders the caller's earlier stores before its later loads, as far as
/// any thread's [`heavy`] barrier can tell.
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
/// against a [`heavy`] barrier, **in `Membarrier` mode only**. A compiler fence in every
/// mode (no instruction, no load of the mode), `fence(SeqCst)` under loom. In `Fence` mode
/// it orders nothing against another thread, so the other side must not rely on it there:
/// see [`interrupts`].
#[inline(always)]
pub(crate) fn signal() {
    #[cfg(not(loom))]
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    #[cfg(loom)]
    fence(Ordering::SeqCst);
}

/// Whether [`heavy`] is ordered against [`signal`]: `Membarrier` mode (and loom, where both
/// are `fence(SeqCst)`).
pub(crate) fn interrupts() -> bool {
    cfg!(loom) || mode() == BarrierMode::Membarrier
}

/// The deciding side: a full barrier on the calling thread and, in `Membarrier` mode, on
/// every thread of the process that is running.
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
    /// fences from now on.
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

    pub(super) fn private_expedited() {
        if call(CMD_PRIVATE_EXPEDITED) != 0 {
            // Registered and tested in `available`: the kernel cannot refuse it now. If it
            // did, readers' compiler fences would order nothing: stop rather than risk
            // recycling a version that a reader still reads.
            eprintln!("poolswap: membarrier(PRIVATE_EXPEDITED) failed after registration");
            std::process::abort();
        }
    }
}

#[cfg(not(all(target_os = "linux", not(any(loom, miri)))))]
mod membarrier {
    pub(super) fn available() -> bool {
        false
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_chosen_once_and_kept() {
        init();
        let first = mode();
        init();
        assert_eq!(mode(), first);
        // Both barriers run in either mode.
        light();
        heavy();
        if cfg!(miri) {
            assert_eq!(first, BarrierMode::Fence, "Miri cannot run membarrier");
        }
    }
}
