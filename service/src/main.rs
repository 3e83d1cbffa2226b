//! poolswap in an HTTP service: a routing table of key → values, loaded from a file,
//! served over HTTP/1.1 on 127.0.0.1 and reloaded while it serves, behind one of four
//! backends chosen at start-up (see [`backend`]).
//!
//! * `GET /route/{key}`: the key's values, one per line (404 for an unknown key; the key
//!   may be percent-encoded).
//! * `GET /stats`: the reloads' figures as one JSON object (also printed on exit).
//!
//! The table is re-read and re-parsed, into owned data, when its file changes (watched
//! with `notify`: a rename over it, a write closed, a removal) and, with `--reload-ms N`,
//! every N ms. A reload of a bad file (missing, not UTF-8, cut mid-line, no entries) keeps
//! the last good table and logs one line to stderr. Ctrl-C (SIGINT) stops the server: it
//! stops accepting, lets requests in flight finish (for at most a second), prints its
//! stats and exits 0.
//!
//! The reloader runs on a thread of its own; its allocations are counted by a counting
//! global allocator (`alloc.rs`), so "bytes per reload" is what the reload allocated,
//! whatever the requests allocate meanwhile.

mod alloc;
mod backend;
mod table;

use std::convert::Infallible;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use backend::{Kind, Tables, Writer};
use table::{Floors, LoadError};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

/// The table served when no path is given: the word list bundled with the repository.
const DEFAULT_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/data/american-english"
);

/// Reloads counted as warm-up in the bytes-per-reload figure (the first reloads of the
/// op log's versions copy whole tables; a backend's first versions are built).
const WARMUP_RELOADS: u64 = 5;

/// The most requests a `--timeline` run records (16 bytes each, allocated at start-up).
const TIMELINE_CAPACITY: usize = 1 << 20;

const USAGE: &str = "\
usage: poolswap-service [PATH] [--backend poolswap|oplog|arcswap|rwlock] [--port N]
                        [--reload-ms N] [--alternate PATH2] [--workers N]
                        [--timeline FILE]

  PATH            the table: on each line a key and its values, `#` starts a comment
                  (default: the bundled word list, examples/data/american-english)
  --backend B     what holds the table (default poolswap)
  --port N        port on 127.0.0.1 (default 8080; 0: any free port)
  --reload-ms N   also reload every N ms (default 0: only when the file changes)
  --alternate P2  the timed reloads read PATH and P2 in turn: a table that changes at
                  every reload (the load run's; PATH stays the one watched)
  --workers N     the runtime's worker threads (default: one per core)
  --timeline FILE on exit, write each request's start and handling time and each
                  reload's start and duration to FILE (CSV)

The server prints `listening on ADDR` on stdout once it accepts connections.";

/// Command-line settings.
#[derive(Debug)]
struct Args {
    path: String,
    backend: Kind,
    port: u16,
    reload_ms: u64,
    alternate: Option<String>,
    workers: Option<usize>,
    timeline: Option<String>,
}

impl Args {
    /// Parses the command line; `Ok(None)`: `--help`.
    fn parse(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
        let mut args = Args {
            path: DEFAULT_PATH.to_owned(),
            backend: Kind::Poolswap,
            port: 8080,
            reload_ms: 0,
            alternate: None,
            workers: None,
            timeline: None,
        };
        let mut path_seen = false;
        while let Some(arg) = it.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut value = |name: &str| {
                inline
                    .clone()
                    .or_else(|| it.next())
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            let number = |name: &str, v: String| {
                v.parse::<u64>()
                    .map_err(|_| format!("{name}: `{v}` is not a non-negative integer"))
            };
            match flag.as_str() {
                "-h" | "--help" => return Ok(None),
                "--backend" => {
                    let v = value("--backend")?;
                    args.backend =
                        Kind::parse(&v).ok_or_else(|| format!("unknown backend `{v}`"))?;
                }
                "--port" => {
                    let v = value("--port")?;
                    args.port =
                        u16::try_from(number("--port", v)?).map_err(|_| "--port: too large")?;
                }
                "--reload-ms" => args.reload_ms = number("--reload-ms", value("--reload-ms")?)?,
                "--workers" => {
                    let n = number("--workers", value("--workers")?)?;
                    if n == 0 {
                        return Err("--workers must be at least 1".to_owned());
                    }
                    args.workers = Some(usize::try_from(n).map_err(|_| "--workers: too large")?);
                }
                "--timeline" => args.timeline = Some(value("--timeline")?),
                "--alternate" => args.alternate = Some(value("--alternate")?),
                f if f.starts_with('-') && f != "-" => {
                    return Err(format!("unknown option `{arg}`"))
                }
                _ if path_seen => return Err(format!("unexpected argument `{arg}`")),
                _ => {
                    args.path = arg;
                    path_seen = true;
                }
            }
        }
        Ok(Some(args))
    }
}

/// The reloads' figures, written by the reloader, read by `/stats`.
#[derive(Debug, Default)]
struct ReloadStats {
    reloads: u64,
    failed: u64,
    /// Reloads after [`WARMUP_RELOADS`] that succeeded, and what they allocated in all.
    steady: u64,
    steady_bytes: u64,
    steady_allocs: u64,
    /// Steady-state reloads that allocated anything.
    steady_allocating: u64,
    /// What the warm-up reloads allocated.
    warmup_bytes: u64,
    /// Each successful reload's time (read, parse, publish), in ns.
    reload_ns: Vec<u64>,
    /// The op log backend: each publish's time, in ns, and the operations it published.
    publish_ns: Vec<u64>,
    catch_up_ns: Vec<u64>,
    ops: u64,
}

/// Requests and reloads on a timeline (`--timeline`): (start since the server started,
/// duration), both in ns.
#[derive(Debug)]
struct Timeline {
    requests: Mutex<Vec<(u64, u64)>>,
    reloads: Mutex<Vec<(u64, u64)>>,
}

/// What the request handlers share.
#[derive(Debug)]
struct State {
    backend: Kind,
    tables: Arc<Tables>,
    stats: Mutex<ReloadStats>,
    started: Instant,
    timeline: Option<Timeline>,
}

/// A message to the reloader.
#[derive(Debug)]
enum Msg {
    /// The file changed.
    Changed,
    /// Stop the reloader.
    Stop,
}

fn main() {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(args) {
        eprintln!("poolswap-service: error: {e}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<(), String> {
    let mut floors = Floors::default();
    let (tables, writer) = backend::build(args.backend, &args.path, &mut floors)
        .map_err(|e| format!("cannot load {}: {e}", args.path))?;
    let timeline = args.timeline.as_ref().map(|_| Timeline {
        requests: Mutex::new(Vec::with_capacity(TIMELINE_CAPACITY)),
        reloads: Mutex::new(Vec::with_capacity(TIMELINE_CAPACITY / 64)),
    });
    let state = Arc::new(State {
        backend: args.backend,
        tables,
        stats: Mutex::new(ReloadStats::default()),
        started: Instant::now(),
        timeline,
    });

    let (tx, rx) = mpsc::channel();
    let _watcher = watch(&args.path, tx.clone())?;
    let interval = (args.reload_ms > 0).then(|| Duration::from_millis(args.reload_ms));
    let reloader = {
        let state = Arc::clone(&state);
        let paths = [
            args.path.clone(),
            args.alternate.clone().unwrap_or_else(|| args.path.clone()),
        ];
        thread::Builder::new()
            .name("reloader".to_owned())
            .spawn(move || reloader(&state, writer, floors, &paths, interval, &rx))
            .map_err(|e| format!("cannot start the reloader: {e}"))?
    };

    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.workers {
        rt.worker_threads(n);
    }
    let rt = rt
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let served = rt.block_on(serve(Arc::clone(&state), args.port));
    drop(rt);

    let _ = tx.send(Msg::Stop);
    reloader
        .join()
        .map_err(|_| "the reloader panicked".to_owned())?;
    served?;
    println!("{}", stats_json(&state));
    if let (Some(path), Some(t)) = (&args.timeline, &state.timeline) {
        write_timeline(path, t).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}

/// Watches `path`'s directory (a file replaced by a rename is a new file) and sends
/// [`Msg::Changed`] for each event on `path`: a rename onto it, a write closed, a removal.
/// Not on a create or a write still going on: the close follows them.
fn watch(path: &str, tx: Sender<Msg>) -> Result<notify::RecommendedWatcher, String> {
    use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
    use notify::Watcher as _;
    let file = Path::new(path);
    let name = file
        .file_name()
        .ok_or_else(|| format!("{path}: not a file"))?
        .to_owned();
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => ".".into(),
    };
    let mut watcher = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
        let Ok(ev) = ev else { return };
        let relevant = matches!(
            ev.kind,
            EventKind::Modify(ModifyKind::Name(_))
                | EventKind::Remove(_)
                | EventKind::Access(AccessKind::Close(AccessMode::Write))
        );
        if relevant && ev.paths.iter().any(|p| p.file_name() == Some(&*name)) {
            let _ = tx.send(Msg::Changed);
        }
    })
    .map_err(|e| format!("cannot watch {path}: {e}"))?;
    watcher
        .watch(&dir, notify::RecursiveMode::NonRecursive)
        .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
    Ok(watcher)
}

/// The reloader: a reload of `paths[0]` for each change of the file and, with
/// `interval`, every `interval` (of `paths[0]` and `paths[1]` in turn), until
/// [`Msg::Stop`]. Logs a failure once while the file stays bad the same way, and the
/// first success after failures.
fn reloader(
    state: &State,
    mut writer: Writer,
    mut floors: Floors,
    paths: &[String; 2],
    interval: Option<Duration>,
    rx: &Receiver<Msg>,
) {
    let mut next = interval.map(|d| Instant::now() + d);
    let mut failing: Option<LoadError> = None;
    let mut ticks = 0usize;
    loop {
        let msg = match next {
            Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => Some(Msg::Stop),
            },
            None => Some(rx.recv().unwrap_or(Msg::Stop)),
        };
        let path = match msg {
            Some(Msg::Stop) => return,
            Some(Msg::Changed) => {
                while let Ok(Msg::Changed) = rx.try_recv() {} // coalesce
                &paths[0]
            }
            None => {
                let d = interval.unwrap_or_default();
                let now = Instant::now();
                // Behind schedule: the next one an interval from now, no catching up.
                next = next.map(|at| if at + d > now { at + d } else { now + d });
                ticks += 1;
                &paths[ticks % 2]
            }
        };
        let (allocs0, bytes0) = alloc::thread_allocated();
        let t0 = Instant::now();
        let result = writer.reload(&state.tables, path, &mut floors);
        let took = t0.elapsed();
        let (allocs1, bytes1) = alloc::thread_allocated();
        if let Some(t) = &state.timeline {
            let mut reloads = t.reloads.lock().unwrap_or_else(|e| e.into_inner());
            if reloads.len() < reloads.capacity() {
                reloads.push((nanos(t0 - state.started), nanos(took)));
            }
        }
        let mut s = state.stats.lock().unwrap_or_else(|e| e.into_inner());
        s.reloads += 1;
        match result {
            Ok(r) => {
                s.reload_ns.push(nanos(took));
                if state.backend == Kind::OpLog {
                    s.publish_ns.push(nanos(r.publish));
                    s.catch_up_ns.push(nanos(r.catch_up));
                    s.ops += r.ops as u64;
                }
                let (allocs, bytes) = (allocs1 - allocs0, bytes1 - bytes0);
                if s.reload_ns.len() as u64 <= WARMUP_RELOADS {
                    s.warmup_bytes += bytes;
                } else {
                    s.steady += 1;
                    s.steady_bytes += bytes;
                    s.steady_allocs += allocs;
                    s.steady_allocating += u64::from(bytes > 0);
                }
                drop(s);
                if failing.take().is_some() {
                    eprintln!(
                        "poolswap-service: reloaded {path} again: {} keys",
                        state.tables.len()
                    );
                }
            }
            Err(e) => {
                s.failed += 1;
                drop(s);
                if failing.as_ref() != Some(&e) {
                    eprintln!(
                        "poolswap-service: reload failed, keeping the last good table ({} keys): {path}: {e}",
                        state.tables.len()
                    );
                    failing = Some(e);
                }
            }
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Accepts connections on `127.0.0.1:port` until Ctrl-C, then waits (at most a second)
/// for the connections to finish their requests in flight.
async fn serve(state: Arc<State>, port: u16) -> Result<(), String> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listening on {addr}");
    let _ = std::io::stdout().flush();
    let graceful = GracefulShutdown::new();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        eprintln!("poolswap-service: accept: {e}");
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let state = Arc::clone(&state);
                let conn = http1::Builder::new().serve_connection(
                    TokioIo::new(stream),
                    service_fn(move |req| {
                        let state = Arc::clone(&state);
                        async move { Ok::<_, Infallible>(handle(&state, &req)) }
                    }),
                );
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            _ = &mut ctrl_c => break,
        }
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(1)) => {}
    }
    Ok(())
}

/// Answers one request.
fn handle(state: &State, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    if req.method() != Method::GET {
        return respond(StatusCode::METHOD_NOT_ALLOWED, "GET only\n".into());
    }
    if path == "/stats" {
        return respond(StatusCode::OK, stats_json(state) + "\n");
    }
    let Some(key) = path.strip_prefix("/route/") else {
        return respond(StatusCode::NOT_FOUND, "not found\n".into());
    };
    let t0 = Instant::now();
    let key = percent_decode(key);
    let response = state.tables.lookup(&key, |values| match values {
        Some(values) => {
            let mut body = String::with_capacity(values.iter().map(|v| v.len() + 1).sum());
            for v in values {
                body.push_str(v);
                body.push('\n');
            }
            respond(StatusCode::OK, body)
        }
        None => respond(StatusCode::NOT_FOUND, "unknown key\n".into()),
    });
    if let Some(t) = &state.timeline {
        let took = nanos(t0.elapsed());
        let mut requests = t.requests.lock().unwrap_or_else(|e| e.into_inner());
        if requests.len() < requests.capacity() {
            requests.push((nanos(t0 - state.started), took));
        }
    }
    response
}

fn respond(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r
}

/// `s` with its `%XX` escapes decoded (an invalid escape or UTF-8 is kept as it is).
fn percent_decode(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('%') {
        return s.into();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_or(s.into(), Into::into)
}

/// The `p`-th quantile (0.0..=1.0) of `v` (sorted here), in ms; 0 if empty.
fn quantile_ms(v: &mut [u64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    v[((v.len() - 1) as f64 * p).round() as usize] as f64 / 1e6
}

/// A line of `/proc/self/status` (`VmHWM`, `VmRSS`), in kB; 0 where there is none.
fn proc_status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// The reloads' figures and the process's memory as one JSON object.
fn stats_json(state: &State) -> String {
    let s = state.stats.lock().unwrap_or_else(|e| e.into_inner());
    let (mut reload, mut publish, mut catch_up) = (
        s.reload_ns.clone(),
        s.publish_ns.clone(),
        s.catch_up_ns.clone(),
    );
    let per = |x: u64| {
        if s.steady == 0 {
            0.0
        } else {
            x as f64 / s.steady as f64
        }
    };
    let ok = reload.len() as u64;
    let mut j = String::new();
    let _ = write!(
        j,
        "{{\"backend\":\"{}\",\"keys\":{},\"reloads\":{},\"failed\":{},\"steady_reloads\":{},\
         \"bytes_per_reload\":{:.1},\"allocs_per_reload\":{:.2},\"allocating_reloads\":{},\
         \"warmup_bytes\":{},\"reload_ms_p50\":{:.3},\"reload_ms_p99\":{:.3},\"reload_ms_max\":{:.3},\
         \"publish_ms_p50\":{:.3},\"publish_ms_max\":{:.3},\"catch_up_ms_p50\":{:.3},\
         \"ops_per_reload\":{:.1},\"vm_hwm_kb\":{},\"vm_rss_kb\":{}}}",
        state.backend.name(),
        state.tables.len(),
        s.reloads,
        s.failed,
        s.steady,
        per(s.steady_bytes),
        per(s.steady_allocs),
        s.steady_allocating,
        s.warmup_bytes,
        quantile_ms(&mut reload, 0.5),
        quantile_ms(&mut reload, 0.99),
        quantile_ms(&mut reload, 1.0),
        quantile_ms(&mut publish, 0.5),
        quantile_ms(&mut publish, 1.0),
        quantile_ms(&mut catch_up, 0.5),
        if ok == 0 { 0.0 } else { s.ops as f64 / ok as f64 },
        proc_status_kb("VmHWM"),
        proc_status_kb("VmRSS"),
    );
    j
}

/// Writes the timeline as CSV: `kind,start_us,duration_us`, kind `request` or `reload`.
fn write_timeline(path: &str, t: &Timeline) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "kind,start_us,duration_us")?;
    for (kind, v) in [("reload", &t.reloads), ("request", &t.requests)] {
        for &(start, took) in v.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            writeln!(
                out,
                "{kind},{:.3},{:.3}",
                start as f64 / 1e3,
                took as f64 / 1e3
            )?;
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args() {
        let parse = |s: &str| Args::parse(s.split_whitespace().map(str::to_owned));
        let a = parse("t.txt --backend=oplog --port 0 --reload-ms 100")
            .unwrap()
            .unwrap();
        assert_eq!(
            (a.path.as_str(), a.backend, a.port, a.reload_ms),
            ("t.txt", Kind::OpLog, 0, 100)
        );
        assert!(parse("--backend nope").is_err());
        assert!(parse("--workers 0").is_err());
        assert!(parse("a b").is_err());
        assert!(parse("--help").unwrap().is_none());
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("plain"), "plain");
        assert_eq!(percent_decode("caf%C3%A9"), "café");
        assert_eq!(percent_decode("Aaron%27s"), "Aaron's");
        assert_eq!(percent_decode("bad%zz"), "bad%zz");
    }
}
