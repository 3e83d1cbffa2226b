//! The service's smoke test, for CI: for each backend, the server started on an ephemeral
//! port over a small table, a few hundred requests from a plain HTTP/1.1 client, one
//! reload on a file change (with timed reloads going on too), the file made bad in each of
//! the three ways (not UTF-8, cut mid-line, missing) while requests go on, then Ctrl-C.
//! Asserts that no request failed, that every answer is the last good table's, that each
//! bad file logs one line, and that the server exits 0. No timing is asserted: every wait
//! is for an event (an answer, a log line), with a generous deadline only against a hang.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

/// How long any one wait may last before the test calls it a hang.
const DEADLINE: Duration = Duration::from_secs(60);

/// Keys in the test's table.
const KEYS: usize = 300;

/// A server under test: killed if the test fails before it stops it.
struct Server {
    child: Child,
    addr: String,
    stderr: Receiver<String>,
    /// The rest of stdout (the stats printed on exit), read by a thread.
    stdout: Option<thread::JoinHandle<String>>,
}

impl Server {
    fn start(backend: &str, table: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_poolswap-service"))
            .arg(table)
            .args([
                "--backend",
                backend,
                "--port",
                "0",
                "--reload-ms",
                "20",
                "--workers",
                "2",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("read the server's first line");
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[server] {line}");
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdout = thread::spawn(move || {
            let mut rest = String::new();
            let _ = stdout.read_to_string(&mut rest);
            rest
        });
        Server {
            child,
            addr,
            stderr: rx,
            stdout: Some(stdout),
        }
    }

    /// The next stderr line that `pred` accepts; panics after [`DEADLINE`]. Returns the
    /// lines skipped on the way, too.
    fn expect_line(&self, what: &str, pred: impl Fn(&str) -> bool) -> (String, Vec<String>) {
        let until = Instant::now() + DEADLINE;
        let mut skipped = Vec::new();
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) if pred(&line) => return (line, skipped),
                Ok(line) => skipped.push(line),
                Err(e) => panic!("no stderr line {what} ({e:?}); skipped {skipped:?}"),
            }
        }
    }

    /// Ctrl-C: the server must exit 0 and print its stats.
    fn stop(mut self) -> String {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: kill(2) takes plain integers and touches no memory of this process; `pid`
        // is our own child, not yet waited for, so the id still names it.
        let sent = unsafe { libc::kill(pid, libc::SIGINT) };
        assert_eq!(sent, 0, "kill: {}", std::io::Error::last_os_error());
        let exit = self.child.wait().expect("wait for the server");
        assert!(exit.success(), "the server exited with {exit} on SIGINT");
        self.stdout.take().unwrap().join().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if thread::panicking() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A keep-alive HTTP/1.1 client on one connection. Any failure (I/O, a malformed
/// answer) panics: a failed request fails the test.
struct Client {
    reader: BufReader<TcpStream>,
    requests: usize,
}

impl Client {
    fn connect(addr: &str) -> Client {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(DEADLINE)).unwrap();
        Client {
            reader: BufReader::new(stream),
            requests: 0,
        }
    }

    /// `GET path`: the status and the body.
    fn get(&mut self, path: &str) -> (u16, String) {
        let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        self.reader
            .get_mut()
            .write_all(req.as_bytes())
            .expect("send a request");
        let mut status_line = String::new();
        self.reader
            .read_line(&mut status_line)
            .expect("read the status line");
        let status: u16 = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {status_line:?} for {path}"));
        let mut length = None;
        loop {
            let mut header = String::new();
            self.reader.read_line(&mut header).expect("read a header");
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let mut body = vec![0; length.expect("a Content-Length")];
        self.reader.read_exact(&mut body).expect("read the body");
        self.requests += 1;
        (status, String::from_utf8(body).expect("a UTF-8 body"))
    }

    /// Asserts that `key` answers `values` (`None`: 404).
    fn check(&mut self, key: &str, values: Option<&str>) {
        let (status, body) = self.get(&format!("/route/{key}"));
        match values {
            Some(v) => assert_eq!((status, body.as_str()), (200, v), "/route/{key}"),
            None => assert_eq!(status, 404, "/route/{key}: {body}"),
        }
    }

    /// Requests the table's keys in turn until `cond` holds for an answer; panics after
    /// [`DEADLINE`].
    fn until(&mut self, what: &str, mut cond: impl FnMut(&mut Client) -> bool) {
        let until = Instant::now() + DEADLINE;
        while !cond(self) {
            assert!(Instant::now() < until, "never saw {what}");
        }
    }
}

/// The test's table, version `gen`: `k{i}` → `v{i} w{gen}` for every key, plus
/// `added{gen}` → `yes` from version 1 on.
fn table(gen: usize) -> String {
    let mut s = String::from("# the smoke test's table\n");
    for i in 0..KEYS {
        s += &format!("k{i} v{i} w{gen}\n");
    }
    if gen > 0 {
        s += &format!("added{gen} yes\n");
    }
    s
}

/// Replaces `path` with `bytes` at once (written beside it, renamed over it).
fn replace(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn temp_dir(backend: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "poolswap-service-smoke-{}-{backend}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Asserts that version `gen` of the table answers: `rounds` requests over its keys.
fn check_table(c: &mut Client, gen: usize, rounds: usize) {
    for r in 0..rounds {
        let i = (r * 7919) % KEYS;
        c.check(&format!("k{i}"), Some(&format!("v{i}\nw{gen}\n")));
    }
    c.check("no-such-key", None);
    c.check(&format!("added{gen}"), (gen > 0).then_some("yes\n"));
}

fn smoke(backend: &str) {
    let dir = temp_dir(backend);
    let path = dir.join("table.txt");
    replace(&path, table(0).as_bytes());
    let server = Server::start(backend, &path);
    let mut c = Client::connect(&server.addr);
    check_table(&mut c, 0, 100);

    // One reload on a file change.
    replace(&path, table(1).as_bytes());
    c.until("version 1", |c| c.get("/route/added1").0 == 200);
    check_table(&mut c, 1, 100);

    // The file made bad three ways; each time the last good table keeps answering, one line
    // is logged, and a good file is taken again.
    type MakeBad<'a> = (&'a str, &'a dyn Fn(&Path));
    let bad: [MakeBad<'_>; 3] = [
        ("not UTF-8", &|p| replace(p, b"k1 caf\xe9\n")),
        ("truncated mid-line", &|p| replace(p, b"k1 v1\nk2 v")),
        ("No such file", &|p| std::fs::remove_file(p).unwrap()),
    ];
    let mut good = 1;
    for (n, (reason, make_bad)) in bad.into_iter().enumerate() {
        make_bad(&path);
        let (line, _) = server.expect_line("for the bad file", |l| l.contains("reload failed"));
        assert!(line.contains(reason), "{line:?} should say {reason:?}");
        assert!(line.contains("keeping the last good table"), "{line:?}");
        check_table(&mut c, good, 50);
        // A good file again (version 2 + n): no other failure line on the way.
        let gen = 2 + n;
        replace(&path, table(gen).as_bytes());
        let (_, skipped) = server.expect_line("for the good file", |l| l.contains("again"));
        assert!(
            skipped.is_empty(),
            "more than one line for a bad file: {skipped:?}"
        );
        c.until("the good file", |c| {
            c.get(&format!("/route/added{gen}")).0 == 200
        });
        check_table(&mut c, gen, 20);
        good = gen;
    }

    let (status, stats) = c.get("/stats");
    assert_eq!(status, 200);
    assert!(
        stats.contains(&format!("\"backend\":\"{backend}\"")),
        "{stats}"
    );
    assert!(c.requests > 300, "{} requests", c.requests);
    drop(c);
    let out = server.stop();
    assert!(out.contains("\"reloads\":"), "no stats on exit: {out:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn poolswap() {
    smoke("poolswap");
}

#[test]
fn oplog() {
    smoke("oplog");
}

#[test]
fn arcswap() {
    smoke("arcswap");
}

#[test]
fn rwlock() {
    smoke("rwlock");
}
