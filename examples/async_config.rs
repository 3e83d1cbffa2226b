//! A configuration shared with tokio tasks: readers hold guards across `.await`, while a
//! reloader re-reads the file on a blocking thread into a recycled object it owns
//! ([`OwnedPooled`]) and publishes it.
//!
//! ```sh
//! cargo run --example async_config -- --reloads 200
//! ```
//!
//! Every task checks that the version it holds does not change under it while it awaits
//! (a guard keeps its version out of the pool), and that every version it sees is whole
//! (its fields were parsed from one file). At the end it prints how many reads and reloads
//! ran and how many `Config` objects the pool built: a handful, whatever the reload count.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use poolswap::{Container, OwnedPooled, Pool};

/// The configuration. `clear` keeps the capacity of its strings and list, so a reload
/// that parses into a recycled `Config` allocates only when a field grows.
#[derive(Debug, Default)]
struct Config {
    version: u64,
    timeout_ms: u64,
    upstream: String,
    tags: Vec<String>,
}

impl Config {
    fn clear(&mut self) {
        self.version = 0;
        self.timeout_ms = 0;
        self.upstream.clear();
        // Keeps the tag strings' buffers for `parse` to reuse.
        for tag in &mut self.tags {
            tag.clear();
        }
    }

    /// Parses `key=value` lines into `self`, reusing its buffers.
    fn parse(&mut self, text: &str) -> Result<(), String> {
        let mut tags = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| format!("not key=value: {line:?}"))?;
            match key.trim() {
                "version" => self.version = value.trim().parse().map_err(|e| format!("{e}"))?,
                "timeout_ms" => {
                    self.timeout_ms = value.trim().parse().map_err(|e| format!("{e}"))?;
                }
                "upstream" => self.upstream.push_str(value.trim()),
                "tag" => {
                    match self.tags.get_mut(tags) {
                        Some(tag) => tag.push_str(value.trim()),
                        None => self.tags.push(value.trim().to_owned()),
                    }
                    tags += 1;
                }
                other => return Err(format!("unknown key {other:?}")),
            }
        }
        self.tags.truncate(tags);
        Ok(())
    }

    /// Whether every field was written from one file: each names the same version.
    fn is_whole(&self) -> bool {
        let v = self.version;
        self.timeout_ms == 100 + v % 900
            && self.upstream == format!("http://backend-{v}.internal")
            && self.tags.len() == 3
            && self
                .tags
                .iter()
                .enumerate()
                .all(|(i, t)| *t == format!("v{v}-tag{i}"))
    }
}

fn render(version: u64) -> String {
    let mut text = format!(
        "version={version}\ntimeout_ms={}\nupstream=http://backend-{version}.internal\n",
        100 + version % 900
    );
    for i in 0..3 {
        text.push_str(&format!("tag=v{version}-tag{i}\n"));
    }
    text
}

/// Reads and parses `path` into `next` on the calling (blocking) thread.
fn load(path: &Path, mut next: OwnedPooled<Config>) -> Result<OwnedPooled<Config>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    next.parse(&text)?;
    Ok(next)
}

fn reloads_from_args() -> u64 {
    let mut args = std::env::args().skip(1);
    let mut reloads = 100;
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--reloads", Some(n)) => match n.parse() {
                Ok(n) => reloads = n,
                Err(_) => exit_usage(&format!("--reloads takes a number, not {n:?}")),
            },
            _ => exit_usage(&format!("unknown argument {arg:?}")),
        }
    }
    reloads
}

fn exit_usage(why: &str) -> ! {
    eprintln!("async_config: {why}\nusage: async_config [--reloads N]");
    std::process::exit(2);
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> Result<(), String> {
    let reloads = reloads_from_args();
    let path: PathBuf =
        std::env::temp_dir().join(format!("poolswap-async-config-{}.txt", std::process::id()));
    std::fs::write(&path, render(0)).map_err(|e| format!("{}: {e}", path.display()))?;

    let pool = Pool::new(Config::default, Config::clear);
    let first = load(&path, pool.get_owned())?;
    let config = Arc::new(Container::new(&pool, first));

    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let mut readers = Vec::new();
    for _ in 0..16 {
        let (config, done, reads) = (Arc::clone(&config), Arc::clone(&done), Arc::clone(&reads));
        readers.push(tokio::spawn(async move {
            while !done.load(Relaxed) {
                let current = config.acquire(); // a Guard: Send, held across the await
                let (version, upstream_len) = (current.version, current.upstream.len());
                assert!(current.is_whole(), "a torn version: {current:?}");
                tokio::time::sleep(Duration::from_micros(200)).await;
                // Whatever reloads ran meanwhile, the guard's version was neither reset
                // nor refilled.
                assert_eq!(
                    (current.version, current.upstream.len()),
                    (version, upstream_len)
                );
                assert!(current.is_whole(), "a version changed under its guard");
                reads.fetch_add(1, Relaxed);
            }
        }));
    }

    for version in 1..=reloads {
        tokio::fs::write(&path, render(version))
            .await
            .map_err(|e| format!("{}: {e}", path.display()))?;
        // The object to fill: owned, so it can move to a blocking thread.
        let next = config.pool().get_owned();
        let path = path.clone();
        let next = tokio::task::spawn_blocking(move || load(&path, next))
            .await
            .map_err(|e| format!("the reload task failed: {e}"))??;
        config.update(next);
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    done.store(true, Relaxed);
    for reader in readers {
        reader.await.map_err(|e| format!("a reader failed: {e}"))?;
    }
    let _ = std::fs::remove_file(&path);

    let last = config.acquire();
    assert_eq!(last.version, reloads);
    let stats = pool.stats();
    println!(
        "{reloads} reloads, {} reads by 16 tasks across awaits; {} Config objects built; last: {}",
        reads.load(Relaxed),
        stats.created,
        last.upstream
    );
    Ok(())
}
