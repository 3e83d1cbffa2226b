//! A configuration reload that rebuilds a derived index on each change, with tokio: one
//! `Container` holds the configuration (routes, as parsed from a file), a task subscribed to
//! it rebuilds a lookup index into a second `Container` at each change, and request tasks
//! read the index. Both containers recycle their versions through their pools.
//!
//! ```sh
//! cargo run --features async --example config_watch -- 200   # reloads (default 100)
//! ```
//!
//! The index task logs each reload it sees and checks that each index it builds is whole
//! (every backend of the configuration it was built from, and nothing else); reloads that
//! come faster than it rebuilds are coalesced into one rebuild. At the end the index must
//! have been built from the last configuration, and the containers' drops end the tasks
//! (their waits return `Closed`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use poolswap::{Container, Pool};

/// The configuration: `prefix=backend` routes, and the reload that produced it.
#[derive(Debug, Default)]
struct Config {
    reload: u64,
    routes: Vec<(String, String)>,
}

/// The derived index: the prefixes each backend serves, and the configuration it came from.
#[derive(Debug, Default)]
struct Index {
    reload: u64,
    by_backend: HashMap<String, Vec<String>>,
}

/// The text a reload reads: 50 routes over a number of backends that changes per reload.
fn config_text(reload: u64) -> String {
    let backends = 3 + reload % 5;
    (0..50)
        .map(|i| format!("/api/{i}=backend-{}-{}\n", reload, i % backends))
        .collect()
}

/// Parses `text` into `config`, reusing its strings' buffers where it can.
fn parse(config: &mut Config, reload: u64, text: &str) {
    config.reload = reload;
    config.routes.clear();
    for line in text.lines() {
        let (prefix, backend) = line.split_once('=').expect("prefix=backend");
        config.routes.push((prefix.to_owned(), backend.to_owned()));
    }
}

/// Rebuilds `index` from `config`: the derived data the service reads.
fn rebuild(index: &mut Index, config: &Config) {
    index.reload = config.reload;
    for (prefix, backend) in &config.routes {
        index
            .by_backend
            .entry(backend.clone())
            .or_default()
            .push(prefix.clone());
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let reloads: u64 = std::env::args()
        .nth(1)
        .map_or(100, |a| a.parse().expect("a reload count"));

    let config_pool = Pool::new(Config::default, |c: &mut Config| c.routes.clear());
    let mut first = config_pool.get();
    parse(&mut first, 0, &config_text(0));
    let config = Arc::new(Container::new(&config_pool, first));

    let index_pool = Pool::new(Index::default, |i: &mut Index| i.by_backend.clear());
    let mut first = index_pool.get();
    rebuild(&mut first, &config.acquire());
    let index = Arc::new(Container::new(&index_pool, first));

    // The index task: one rebuild per change it sees, however many reloads came meanwhile.
    let rebuilds = Arc::new(AtomicU64::new(0));
    let mut changes = config.subscribe_owned();
    let indexer = {
        let (index, rebuilds) = (Arc::clone(&index), Arc::clone(&rebuilds));
        tokio::spawn(async move {
            loop {
                // `changed()` is cancel-safe, so any runtime's timeout composes with it: a
                // reload that comes after the timeout is seen by the next wait.
                match tokio::time::timeout(Duration::from_secs(1), changes.changed()).await {
                    Err(_elapsed) => println!("indexer: no reload for a second"),
                    Ok(Err(_closed)) => break, // the configuration's container is gone
                    Ok(Ok(())) => {
                        // An error only while the container's drop is under way: the next
                        // wait returns its last version.
                        let Ok(current) = changes.acquire() else {
                            continue;
                        };
                        let mut next = index.get_new();
                        rebuild(&mut next, &current);
                        let built: usize = next.by_backend.values().map(Vec::len).sum();
                        assert_eq!(built, current.routes.len(), "an index missed a route");
                        if current.reload % 25 == 0 {
                            println!("indexer: reload {} seen, index rebuilt", current.reload);
                        }
                        drop(current);
                        index.update(next);
                        rebuilds.fetch_add(1, Relaxed);
                    }
                }
            }
        })
    };

    // Request tasks: look a backend up in the current index.
    let requests: Vec<_> = (0..4)
        .map(|_| {
            let index = Arc::clone(&index);
            tokio::spawn(async move {
                let mut lookups = 0u64;
                for _ in 0..2_000 {
                    let idx = index.acquire();
                    let backend = format!("backend-{}-0", idx.reload);
                    assert!(idx.by_backend.contains_key(&backend), "a torn index");
                    lookups += 1;
                    drop(idx);
                    tokio::task::yield_now().await;
                }
                lookups
            })
        })
        .collect();

    // The reloader: re-reads the configuration into a recycled version and publishes it.
    for reload in 1..=reloads {
        let text = config_text(reload);
        let mut next = config.get_new();
        parse(&mut next, reload, &text);
        config.update(next);
        tokio::time::sleep(Duration::from_micros(200)).await;
    }

    // The index catches up with the last reload.
    let mut index_changes = index.subscribe();
    while index.acquire().reload != reloads {
        index_changes.changed().await.expect("the index is alive");
    }
    let mut lookups = 0;
    for r in requests {
        lookups += r.await.unwrap();
    }
    drop(config); // the indexer's wait returns `Closed`
    indexer.await.unwrap();
    println!(
        "{reloads} reloads, {} index rebuilds, {lookups} lookups; configs built: {}, \
         indexes built: {}",
        rebuilds.load(Relaxed),
        config_pool.stats().created,
        index_pool.stats().created,
    );
}
