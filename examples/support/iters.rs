//! The command line the pool examples share: `[--iters N]`.

use std::process::ExitCode;

/// Reads `--iters N` (default `default`, at least 1) from the command line. On `-h`,
/// `--help` or a bad argument, prints the usage of `prog` (and what was wrong) and returns
/// the code the example should exit with.
pub fn iters(prog: &str, default: usize) -> Result<usize, ExitCode> {
    parse(default).map_err(|msg| {
        if !msg.is_empty() {
            eprintln!("{prog}: {msg}");
        }
        eprintln!("usage: {prog} [--iters N]   (default {default})");
        if msg.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    })
}

/// The parse itself; an empty error means "help was asked for".
fn parse(default: usize) -> Result<usize, String> {
    let mut iters = default;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--iters" => {
                let v = args.next().ok_or("--iters needs a value")?;
                iters = v.parse().map_err(|e| format!("--iters {v}: {e}"))?;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if iters == 0 {
        return Err("--iters must be at least 1".into());
    }
    Ok(iters)
}
