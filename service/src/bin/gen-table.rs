//! Writes a routing table for the service to stdout: `N` entries (default 100,000), each
//! a key `route-NNNNNN` and one to four backend addresses, deterministic (a fixed-seed
//! xorshift). With `--changed K`, the same table with the values of K keys, spread evenly
//! over it, changed in place: the op log backend's reload then publishes K operations.
//!
//! ```text
//! cargo run --release -p poolswap-service --bin gen-table -- [N] [--changed K] > table.txt
//! ```

use std::io::{self, BufWriter, Write as _};

/// A tiny xorshift64* generator: the same table on every run and machine.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn main() -> io::Result<()> {
    let mut n = 100_000usize;
    let mut changed = 0usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let number = |v: Option<String>| -> usize {
            v.and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                eprintln!("usage: gen-table [N] [--changed K]");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--changed" => changed = number(args.next()),
            _ => n = number(Some(a)),
        }
    }
    let step = n.checked_div(changed).map_or(usize::MAX, |s| s.max(1));
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut out = BufWriter::new(io::stdout().lock());
    writeln!(
        out,
        "# poolswap-service routing table: {n} keys, {changed} changed"
    )?;
    for i in 0..n {
        let r = rng.next();
        let values = 1 + (r % 4) as usize;
        write!(out, "route-{i:06}")?;
        // The changed lines keep their key and value count, with other addresses.
        let bump = u64::from(i % step == 0 && i / step < changed);
        for v in 0..values {
            let a = (r >> (8 * v)) as u8;
            let port = 8000 + (r >> (16 + 8 * v)) as u16 % 1000;
            write!(
                out,
                " 10.{}.{}.{a}:{port}",
                (i >> 8) as u8,
                bump as u8 + 2 * v as u8
            )?;
        }
        writeln!(out)?;
    }
    out.flush()
}
