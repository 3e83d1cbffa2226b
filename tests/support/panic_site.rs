//! Where a panic points: runs a closure under `catch_unwind` with a panic hook that records
//! the location and message of the calling thread's panic, for the tests of
//! `#[track_caller]` (a misuse must point at the caller's line, not into the library).
//!
//! The hook is the process's, so a test that sets it takes the binary's test lock first
//! (`serial.rs`); panics of other threads go to the hook that was there before.

use std::panic::{self, AssertUnwindSafe, Location};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

/// Where a caught panic pointed, and what it said.
#[derive(Debug, Clone)]
pub struct Site {
    pub file: String,
    pub line: u32,
    pub message: String,
}

/// Runs `f`, which must panic, and returns where and with what message, as the panic hook
/// saw it. Panics if `f` returns.
#[track_caller]
pub fn panic_site<R>(f: impl FnOnce() -> R) -> Site {
    let seen: Arc<Mutex<Option<Site>>> = Arc::new(Mutex::new(None));
    let me = thread::current().id();
    let previous = Arc::new(panic::take_hook());
    {
        let seen = Arc::clone(&seen);
        let previous = Arc::clone(&previous);
        panic::set_hook(Box::new(move |info| {
            if thread::current().id() != me {
                return previous(info);
            }
            let location = info.location().unwrap_or(Location::caller());
            let message = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or_default();
            *seen.lock().unwrap_or_else(PoisonError::into_inner) = Some(Site {
                file: location.file().to_owned(),
                line: location.line(),
                message: message.to_owned(),
            });
        }));
    }
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    // Puts the previous hook back: ours holds the only other handle on it.
    drop(panic::take_hook());
    match Arc::try_unwrap(previous) {
        Ok(previous) => panic::set_hook(previous),
        Err(_) => unreachable!("the hook that held it was just dropped"),
    }
    assert!(result.is_err(), "no panic");
    let site = seen.lock().unwrap_or_else(PoisonError::into_inner).take();
    site.expect("the hook saw the panic")
}
