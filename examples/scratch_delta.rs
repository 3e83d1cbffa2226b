use std::collections::HashMap;
trait View {
    fn view(&self) -> &HashMap<String, Vec<String>>;
}
impl View for HashMap<String, Vec<String>> {
    fn view(&self) -> &Self {
        self
    }
}
impl View for Recycled<HashMap<String, Vec<String>>> {
    fn view(&self) -> &HashMap<String, Vec<String>> {
        self
    }
}
use poolswap::log::{LogWriter, MapOp};
use poolswap::Recycled;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

fn val(i: u64) -> Vec<String> {
    (0..3)
        .map(|j| format!("value-{i:08}-{j}-padding-to-30b"))
        .collect()
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(100_000);
    let k: u64 = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(10);
    let recycled = std::env::args().nth(3).is_some();
    let map: HashMap<String, Vec<String>> =
        (0..n).map(|i| (format!("key-{i:07}"), val(i))).collect();
    if recycled {
        go(LogWriter::new(Recycled::new(map)), n, k)
    } else {
        go(LogWriter::new(map), n, k)
    }
}

fn go<
    T: poolswap::log::Absorb<MapOp<String, Vec<String>>> + Default + Send + Sync + 'static + View,
>(
    mut w: LogWriter<T, MapOp<String, Vec<String>>>,
    n: u64,
    k: u64,
) {
    let stop = Arc::new(AtomicBool::new(false));
    let table = Arc::clone(w.container());
    let s2 = stop.clone();
    let reader = std::thread::spawn(move || {
        let mut x = 1u64;
        let mut hits = 0u64;
        while !s2.load(Ordering::Relaxed) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = format!("key-{:07}", x % n);
            let g = table.acquire();
            let m = (**g).view();
            if m.get(&key).is_some() {
                hits += 1;
            }
        }
        hits
    });
    let mut lat = Vec::new();
    let mut churn = n;
    for round in 0..3000u64 {
        let mut ops = Vec::new();
        for j in 0..k {
            if j % 2 == 0 || k == 1 {
                let key = (round * 31 + j * 7919) % n;
                ops.push(MapOp::Insert(format!("key-{key:07}"), val(round)));
            } else {
                ops.push(MapOp::Remove(format!("key-{:07}", churn - 1)));
                ops.push(MapOp::Insert(format!("key-{churn:07}"), val(churn)));
                churn += 1;
            }
        }
        let t = Instant::now();
        w.extend(ops);
        w.publish();
        lat.push(t.elapsed().as_nanos() as u64);
    }
    stop.store(true, Ordering::Relaxed);
    let hits = reader.join().unwrap();
    lat.drain(..500);
    lat.sort();
    let p = |q: f64| lat[((lat.len() as f64 - 1.0) * q) as usize] as f64 / 1000.0;
    println!(
        "n={n} k={k} p50={:.1}us p99={:.1}us max={:.1}us stats={:?} hits={hits}",
        p(0.5),
        p(0.99),
        p(1.0),
        w.stats()
    );
}
