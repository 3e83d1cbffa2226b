//! # Free lists (`poolswap::recycle`): protopool's benchmark, one large nested message built per op
//!
//! A port of the benchmark of Go's protopool (`value_test.go`): a message of nested structs
//! (context, server, client, location, company, 1,000 targets of 15 peers each, 15
//! placements), lists of strings and numbers, maps (`String` → struct, `i32` → `i32`),
//! random strings and enums. Each op builds the whole message from a generator reseeded
//! with the same seed (as Go's `src.Seed(1)`), so every op builds the same message; then it
//! is dropped or reset. Fields are owned `String`s, as a decoded protobuf message has; in
//! the Go original they are substrings of one shared buffer, which Go does not allocate.
//! The Go structs' runs of numeric fields are arrays of the same size here.
//!
//! Criterion function names (group `message`):
//!
//! - `fresh`: `Message::default()`, filled, dropped: every string, list, map and boxed
//!   value allocated anew.
//! - `pool-clear`: a poolswap `Pool<Message>` whose reset clears every collection in place
//!   (`clear()`), as one would without this crate's free lists: the top-level buffers are reused,
//!   nested ones (the 1,000 targets' strings and peer lists) are dropped and allocated
//!   again.
//! - `recycled`: one `Recycled<Message>`, reset with `Recycled::clear` and refilled from its
//!   free lists (`poolswap::recycle`).
//! - `pool-recycled`: the same through `Pool::new(Recycled::default, |r| { r.clear(); true })`,
//!   as a container's writer would use it.
//! - `bumpalo`: the same message built in a `bumpalo::Bump` (`&str` strings,
//!   `bumpalo::collections::Vec`, hashbrown maps allocating in the bump, with std's
//!   `RandomState` as every other variant), dropped, then `Bump::reset`.
//!
//! Besides time, allocations and bytes per op (counting global allocator, warm-up included)
//! are printed and written to `target/bench-alloc/recycle.tsv`; then 20 more ops are counted
//! alone and printed as the steady state. Go's figures, from
//! protopool's README (its author's Intel i9-9980HK): 21,112 allocations and 4.19 ms per op
//! without the pool, 6 and 3.58 ms with it.
//!
//! ```text
//! cargo bench -p poolswap-benches --bench recycle
//! # smoke run
//! cargo bench -p poolswap-benches --bench recycle -- --test
//! # the `recycled` long run instead
//! RECYCLE_SERIES=12000 cargo bench -p poolswap-benches --bench recycle
//! ```

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hint::black_box;

use bumpalo::Bump;
use criterion::{criterion_group, criterion_main, Criterion};
use poolswap::recycle::{FreeLists, Recycle};
use poolswap::{Pool, Recycled};

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
mod support;

use counting_alloc::Snapshot;
use support::Tally;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// Children per list or map (Go's `nChildren`).
const CHILDREN: usize = 15;
/// Targets in a request (Go's `nTargets`).
const TARGETS: usize = 1_000;

// ---------------------------------------------------------------------------------------
// The random source: xorshift64 over a 1,024-character buffer of hex-like characters.

/// The generator of one build, reseeded per op.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        support::xorshift(&mut self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn i64(&mut self) -> i64 {
        (self.next() >> 1) as i64
    }
    fn i32(&mut self) -> i32 {
        (self.next() >> 33) as i32
    }
    fn u32(&mut self) -> u32 {
        self.next() as u32
    }
    fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn bool(&mut self) -> bool {
        self.next() & 1 == 0
    }
    /// A random substring of [`chars`], 1 to 1,023 bytes (about 256 on average).
    fn str(&mut self) -> &'static str {
        let all = chars();
        let start = self.below(all.len() - 2);
        let rest = &all[start..];
        &rest[..1 + self.below(rest.len() - 1)]
    }
    fn fill<const N: usize, T>(&mut self, mut f: impl FnMut(&mut Rng) -> T) -> [T; N] {
        std::array::from_fn(|_| f(self))
    }
}

/// 1,024 random characters among `0-9` and `k-p`, made once.
fn chars() -> &'static str {
    static CHARS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CHARS.get_or_init(|| {
        let mut rng = Rng(support::seed(0, 0));
        (0..1024)
            .map(|_| match rng.below(16) as u8 {
                v @ 0..=9 => char::from(b'0' + v),
                v => char::from(b'a' + v),
            })
            .collect()
    })
}

/// The seed of every op.
const SEED: u64 = 0x5EED_0000_0000_0001;

// ---------------------------------------------------------------------------------------
// Enums, shared by every variant.

macro_rules! enums {
    ($($name:ident { $first:ident $(, $rest:ident)* })*) => {$(
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        enum $name { #[default] $first $(, $rest)* }
        impl $name {
            const ALL: &'static [$name] = &[$name::$first $(, $name::$rest)*];
            fn random(rng: &mut Rng) -> $name {
                Self::ALL[rng.below(Self::ALL.len())]
            }
        }
        impl Recycle for $name {
            const PLAIN: bool = true;
            fn recycle_into(&mut self, _: &mut FreeLists) {
                *self = $name::default();
            }
        }
        impl PlainClear for $name {
            fn plain_clear(&mut self) {
                *self = $name::default();
            }
        }
    )*};
}

enums! {
    RequestType { Invalid, Broken, Corrupted, Salty }
    RequestReason { Unreasonable, Outrageous, Unknown, Reaper }
    ResponseType { Bad, Ugly, Good }
    TokenScope { RedDot, Holo, Iron }
}

// ---------------------------------------------------------------------------------------
// The message with std's types: `fresh`, `pool-clear`, `recycled`, `pool-recycled`.

#[derive(Default)]
struct Message {
    timestamp: i64,
    correlation_id: String,
    request: Option<Request>,
}

#[derive(Default)]
struct Request {
    context: Option<Context>,
    targets: Vec<Target>,
    placements: Vec<Placement>,
    default_placement: Option<Placement>,
}

#[derive(Default)]
struct Context {
    server: Option<Server>,
    client: Option<Client>,
    location: Option<Location>,
    company: Option<Company>,
    tokens: Vec<u32>,
    os: String,
    transaction_id: String,
    machine_id: String,
    /// Original and completion timestamps; target, destination, intermediation groups.
    numbers: [i64; 5],
    order_number: u32,
    flags: [bool; 2],
    request_type: RequestType,
    request_reason: RequestReason,
    response_type: ResponseType,
}

#[derive(Default)]
struct Server {
    id: String,
    flags: [bool; 4],
    /// Restart, reboot, replica, healthy replica and connection counts, each 3 ways.
    counts: [i32; 15],
    creation_timestamp: i64,
    cluster_ids: Vec<String>,
    cluster_counters: Option<ClusterCounters>,
    replica_counters: HashMap<String, ReplicaCounters>,
    token_scope: TokenScope,
    tokens: Vec<String>,
    replica_ids: Vec<String>,
    healthy_replica_ids: Vec<String>,
    replica_latest_restart_timestamps: Vec<i64>,
    unhealthy_replica_ids: Vec<String>,
    original_id: String,
}

#[derive(Default)]
struct ClusterCounters {
    counts: [i32; 5],
    seeds_by_branch: HashMap<i32, i32>,
    branches_by_tree: HashMap<i32, i32>,
}

#[derive(Default)]
struct ReplicaCounters {
    counts: [i32; 6],
}

#[derive(Default)]
struct Client {
    /// SDK version, id, connection type, type, resolution, GPU, CPU, software version,
    /// accept-language, language.
    strings: [String; 10],
    /// GPU count, DPI, CPU count.
    numbers: [i64; 3],
    peers: Vec<String>,
    mass: u64,
}

#[derive(Default)]
struct Location {
    country: String,
    city: String,
    city_id: i64,
    sub_country: String,
    sub_country_id: i64,
    timezone: String,
}

#[derive(Default)]
struct Company {
    customer_id: i64,
    is_large: bool,
    billing_id: String,
    project_id: i64,
    is_active: bool,
}

#[derive(Default)]
struct Target {
    id: i64,
    patch_id: String,
    peers: Vec<Peer>,
    counts: [i32; 12],
    creation_timestamp: i64,
}

#[derive(Default)]
struct Peer {
    id: String,
    /// Restart, reboot, replica and connection counts, 3 ways each; then their averages
    /// and medians.
    counts: [i32; 12],
    averages: [i32; 12],
    medians: [i32; 12],
    flags: [bool; 3],
}

#[derive(Default)]
struct Placement {
    id: String,
    toleration: f64,
    toleration_delta: f64,
}

/// Implements both resets for a struct: the free lists' `Recycle` and the plain `clear()`.
macro_rules! resets {
    ($($ty:ident { $($field:ident),* })*) => {$(
        poolswap::impl_recycle!($ty { $($field),* });
        impl PlainClear for $ty {
            fn plain_clear(&mut self) {
                $( PlainClear::plain_clear(&mut self.$field); )*
            }
        }
    )*};
}

resets! {
    Message { timestamp, correlation_id, request }
    Request { context, targets, placements, default_placement }
    Context { server, client, location, company, tokens, os, transaction_id, machine_id,
              numbers, order_number, flags, request_type, request_reason, response_type }
    Server { id, flags, counts, creation_timestamp, cluster_ids, cluster_counters,
             replica_counters, token_scope, tokens, replica_ids, healthy_replica_ids,
             replica_latest_restart_timestamps, unhealthy_replica_ids, original_id }
    ClusterCounters { counts, seeds_by_branch, branches_by_tree }
    ReplicaCounters { counts }
    Client { strings, numbers, peers, mass }
    Location { country, city, city_id, sub_country, sub_country_id, timezone }
    Company { customer_id, is_large, billing_id, project_id, is_active }
    Target { id, patch_id, peers, counts, creation_timestamp }
    Peer { id, counts, averages, medians, flags }
    Placement { id, toleration, toleration_delta }
}

/// The reset of `pool-clear`: every collection cleared in place (keeping its own buffer,
/// dropping its elements), every sub-message cleared in place, scalars zeroed.
trait PlainClear {
    fn plain_clear(&mut self);
}

impl PlainClear for String {
    fn plain_clear(&mut self) {
        self.clear();
    }
}
impl<T> PlainClear for Vec<T> {
    fn plain_clear(&mut self) {
        self.clear();
    }
}
impl<K, V> PlainClear for HashMap<K, V> {
    fn plain_clear(&mut self) {
        self.clear();
    }
}
impl<T: PlainClear> PlainClear for Option<T> {
    fn plain_clear(&mut self) {
        if let Some(v) = self {
            v.plain_clear();
        }
    }
}
impl<T: PlainClear, const N: usize> PlainClear for [T; N] {
    fn plain_clear(&mut self) {
        self.iter_mut().for_each(T::plain_clear);
    }
}
macro_rules! plain_scalars {
    ($($t:ty),*) => {$(
        impl PlainClear for $t {
            fn plain_clear(&mut self) {
                *self = <$t>::default();
            }
        }
    )*};
}
plain_scalars!(bool, i32, i64, u32, u64, f64);

/// Where the std variants get a nested value: `T::default()` or a spare one from free lists.
trait Source {
    fn take<T: Recycle + Default>(&mut self) -> T;
}

/// `fresh` and `pool-clear`: every nested value is new.
struct Fresh;

impl Source for Fresh {
    fn take<T: Recycle + Default>(&mut self) -> T {
        T::default()
    }
}

impl Source for FreeLists {
    fn take<T: Recycle + Default>(&mut self) -> T {
        FreeLists::take(self)
    }
}

/// Appends a random string to `dst`.
fn put_str(rng: &mut Rng, dst: &mut String) {
    dst.push_str(rng.str());
}

/// Pushes `n` random strings, each in a `String` from `src`.
fn put_strs<S: Source>(src: &mut S, rng: &mut Rng, list: &mut Vec<String>, n: usize) {
    for _ in 0..n {
        let mut s: String = src.take();
        put_str(rng, &mut s);
        list.push(s);
    }
}

/// Fills `m` (cleared, as `Default` or a reset leaves it), taking nested values from `src`.
fn build<S: Source>(src: &mut S, rng: &mut Rng, m: &mut Message) {
    m.timestamp = rng.i64();
    put_str(rng, &mut m.correlation_id);
    let req = m.request.get_or_insert_with(|| src.take());
    let context = req.context.get_or_insert_with(|| src.take());
    build_context(src, rng, context);
    for _ in 0..TARGETS {
        let mut t: Target = src.take();
        build_target(src, rng, &mut t);
        req.targets.push(t);
    }
    for _ in 0..CHILDREN {
        let mut p: Placement = src.take();
        build_placement(rng, &mut p);
        req.placements.push(p);
    }
    build_placement(rng, req.default_placement.get_or_insert_with(|| src.take()));
}

fn build_context<S: Source>(src: &mut S, rng: &mut Rng, c: &mut Context) {
    let server = c.server.get_or_insert_with(|| src.take());
    build_server(src, rng, server);
    let client = c.client.get_or_insert_with(|| src.take());
    for s in &mut client.strings {
        put_str(rng, s);
    }
    client.numbers = rng.fill(Rng::i64);
    put_strs(src, rng, &mut client.peers, CHILDREN);
    client.mass = rng.next();
    let loc = c.location.get_or_insert_with(|| src.take());
    put_str(rng, &mut loc.country);
    put_str(rng, &mut loc.city);
    loc.city_id = rng.i64();
    put_str(rng, &mut loc.sub_country);
    loc.sub_country_id = rng.i64();
    put_str(rng, &mut loc.timezone);
    let co = c.company.get_or_insert_with(|| src.take());
    co.customer_id = rng.i64();
    co.is_large = rng.bool();
    put_str(rng, &mut co.billing_id);
    co.project_id = rng.i64();
    co.is_active = rng.bool();
    for _ in 0..CHILDREN {
        c.tokens.push(rng.u32());
    }
    put_str(rng, &mut c.os);
    put_str(rng, &mut c.transaction_id);
    put_str(rng, &mut c.machine_id);
    c.numbers = rng.fill(Rng::i64);
    c.order_number = rng.u32();
    c.flags = rng.fill(Rng::bool);
    c.request_type = RequestType::random(rng);
    c.request_reason = RequestReason::random(rng);
    c.response_type = ResponseType::random(rng);
}

fn build_server<S: Source>(src: &mut S, rng: &mut Rng, s: &mut Server) {
    put_str(rng, &mut s.id);
    s.flags = rng.fill(Rng::bool);
    s.counts = rng.fill(Rng::i32);
    s.creation_timestamp = rng.i64();
    put_strs(src, rng, &mut s.cluster_ids, CHILDREN);
    let cc = s.cluster_counters.get_or_insert_with(|| src.take());
    cc.counts = rng.fill(Rng::i32);
    for _ in 0..CHILDREN {
        cc.seeds_by_branch.insert(rng.i32(), rng.i32());
    }
    for _ in 0..CHILDREN {
        cc.branches_by_tree.insert(rng.i32(), rng.i32());
    }
    for _ in 0..CHILDREN {
        let mut k: String = src.take();
        put_str(rng, &mut k);
        let mut v: ReplicaCounters = src.take();
        v.counts = rng.fill(Rng::i32);
        s.replica_counters.insert(k, v);
    }
    s.token_scope = TokenScope::random(rng);
    put_strs(src, rng, &mut s.tokens, CHILDREN);
    put_strs(src, rng, &mut s.replica_ids, CHILDREN);
    put_strs(src, rng, &mut s.healthy_replica_ids, CHILDREN);
    for _ in 0..CHILDREN {
        s.replica_latest_restart_timestamps.push(rng.i64());
    }
    put_strs(src, rng, &mut s.unhealthy_replica_ids, CHILDREN);
    put_str(rng, &mut s.original_id);
}

fn build_target<S: Source>(src: &mut S, rng: &mut Rng, t: &mut Target) {
    t.id = rng.i64();
    put_str(rng, &mut t.patch_id);
    for _ in 0..CHILDREN {
        let mut p: Peer = src.take();
        put_str(rng, &mut p.id);
        p.counts = rng.fill(Rng::i32);
        p.averages = rng.fill(Rng::i32);
        p.medians = rng.fill(Rng::i32);
        p.flags = rng.fill(Rng::bool);
        t.peers.push(p);
    }
    t.counts = rng.fill(Rng::i32);
    t.creation_timestamp = rng.i64();
}

fn build_placement(rng: &mut Rng, p: &mut Placement) {
    put_str(rng, &mut p.id);
    p.toleration = rng.f64();
    p.toleration_delta = rng.f64();
}

// ---------------------------------------------------------------------------------------
// The same message in a bump arena: `bumpalo`.

mod bump {
    #![allow(dead_code)] // built and dropped, never read, as in the Go benchmark

    use super::*;
    use bumpalo::collections::Vec as BVec;

    type BMap<'b, K, V> = hashbrown::HashMap<K, V, RandomState, &'b Bump>;

    pub(super) struct Message<'b> {
        timestamp: i64,
        correlation_id: &'b str,
        request: Option<Request<'b>>,
    }
    struct Request<'b> {
        context: Option<Context<'b>>,
        targets: BVec<'b, Target<'b>>,
        placements: BVec<'b, Placement<'b>>,
        default_placement: Option<Placement<'b>>,
    }
    struct Context<'b> {
        server: Option<Server<'b>>,
        client: Option<Client<'b>>,
        location: Option<Location<'b>>,
        company: Option<Company<'b>>,
        tokens: BVec<'b, u32>,
        os: &'b str,
        transaction_id: &'b str,
        machine_id: &'b str,
        numbers: [i64; 5],
        order_number: u32,
        flags: [bool; 2],
        request_type: RequestType,
        request_reason: RequestReason,
        response_type: ResponseType,
    }
    struct Server<'b> {
        id: &'b str,
        flags: [bool; 4],
        counts: [i32; 15],
        creation_timestamp: i64,
        cluster_ids: BVec<'b, &'b str>,
        cluster_counters: Option<ClusterCounters<'b>>,
        replica_counters: BMap<'b, &'b str, ReplicaCounters>,
        token_scope: TokenScope,
        tokens: BVec<'b, &'b str>,
        replica_ids: BVec<'b, &'b str>,
        healthy_replica_ids: BVec<'b, &'b str>,
        replica_latest_restart_timestamps: BVec<'b, i64>,
        unhealthy_replica_ids: BVec<'b, &'b str>,
        original_id: &'b str,
    }
    struct ClusterCounters<'b> {
        counts: [i32; 5],
        seeds_by_branch: BMap<'b, i32, i32>,
        branches_by_tree: BMap<'b, i32, i32>,
    }
    struct ReplicaCounters {
        counts: [i32; 6],
    }
    struct Client<'b> {
        strings: [&'b str; 10],
        numbers: [i64; 3],
        peers: BVec<'b, &'b str>,
        mass: u64,
    }
    struct Location<'b> {
        country: &'b str,
        city: &'b str,
        city_id: i64,
        sub_country: &'b str,
        sub_country_id: i64,
        timezone: &'b str,
    }
    struct Company<'b> {
        customer_id: i64,
        is_large: bool,
        billing_id: &'b str,
        project_id: i64,
        is_active: bool,
    }
    struct Target<'b> {
        id: i64,
        patch_id: &'b str,
        peers: BVec<'b, Peer<'b>>,
        counts: [i32; 12],
        creation_timestamp: i64,
    }
    struct Peer<'b> {
        id: &'b str,
        counts: [i32; 12],
        averages: [i32; 12],
        medians: [i32; 12],
        flags: [bool; 3],
    }
    struct Placement<'b> {
        id: &'b str,
        toleration: f64,
        toleration_delta: f64,
    }

    /// A random string copied into the bump.
    fn s<'b>(b: &'b Bump, rng: &mut Rng) -> &'b str {
        b.alloc_str(rng.str())
    }

    fn strs<'b>(b: &'b Bump, rng: &mut Rng) -> BVec<'b, &'b str> {
        let mut v = BVec::new_in(b);
        for _ in 0..CHILDREN {
            v.push(s(b, rng));
        }
        v
    }

    fn map<'b, K: Eq + std::hash::Hash, V>(b: &'b Bump) -> BMap<'b, K, V> {
        BMap::with_hasher_in(RandomState::new(), b)
    }

    /// Builds the message in the same order as [`super::build`].
    pub(super) fn build<'b>(b: &'b Bump, rng: &mut Rng) -> Message<'b> {
        let timestamp = rng.i64();
        let correlation_id = s(b, rng);
        let context = Some(context(b, rng));
        let mut targets = BVec::new_in(b);
        for _ in 0..TARGETS {
            targets.push(target(b, rng));
        }
        let mut placements = BVec::new_in(b);
        for _ in 0..CHILDREN {
            placements.push(placement(b, rng));
        }
        let default_placement = Some(placement(b, rng));
        Message {
            timestamp,
            correlation_id,
            request: Some(Request {
                context,
                targets,
                placements,
                default_placement,
            }),
        }
    }

    fn context<'b>(b: &'b Bump, rng: &mut Rng) -> Context<'b> {
        let server = Some(server(b, rng));
        let client = Some(Client {
            strings: rng.fill(|r| s(b, r)),
            numbers: rng.fill(Rng::i64),
            peers: strs(b, rng),
            mass: rng.next(),
        });
        let location = Some(Location {
            country: s(b, rng),
            city: s(b, rng),
            city_id: rng.i64(),
            sub_country: s(b, rng),
            sub_country_id: rng.i64(),
            timezone: s(b, rng),
        });
        let company = Some(Company {
            customer_id: rng.i64(),
            is_large: rng.bool(),
            billing_id: s(b, rng),
            project_id: rng.i64(),
            is_active: rng.bool(),
        });
        let mut tokens = BVec::new_in(b);
        for _ in 0..CHILDREN {
            tokens.push(rng.u32());
        }
        Context {
            server,
            client,
            location,
            company,
            tokens,
            os: s(b, rng),
            transaction_id: s(b, rng),
            machine_id: s(b, rng),
            numbers: rng.fill(Rng::i64),
            order_number: rng.u32(),
            flags: rng.fill(Rng::bool),
            request_type: RequestType::random(rng),
            request_reason: RequestReason::random(rng),
            response_type: ResponseType::random(rng),
        }
    }

    fn server<'b>(b: &'b Bump, rng: &mut Rng) -> Server<'b> {
        let id = s(b, rng);
        let flags = rng.fill(Rng::bool);
        let counts = rng.fill(Rng::i32);
        let creation_timestamp = rng.i64();
        let cluster_ids = strs(b, rng);
        let mut cc = ClusterCounters {
            counts: rng.fill(Rng::i32),
            seeds_by_branch: map(b),
            branches_by_tree: map(b),
        };
        for _ in 0..CHILDREN {
            cc.seeds_by_branch.insert(rng.i32(), rng.i32());
        }
        for _ in 0..CHILDREN {
            cc.branches_by_tree.insert(rng.i32(), rng.i32());
        }
        let mut replica_counters = map(b);
        for _ in 0..CHILDREN {
            let k = s(b, rng);
            let v = ReplicaCounters {
                counts: rng.fill(Rng::i32),
            };
            replica_counters.insert(k, v);
        }
        let token_scope = TokenScope::random(rng);
        let tokens = strs(b, rng);
        let replica_ids = strs(b, rng);
        let healthy_replica_ids = strs(b, rng);
        let mut replica_latest_restart_timestamps = BVec::new_in(b);
        for _ in 0..CHILDREN {
            replica_latest_restart_timestamps.push(rng.i64());
        }
        let unhealthy_replica_ids = strs(b, rng);
        Server {
            id,
            flags,
            counts,
            creation_timestamp,
            cluster_ids,
            cluster_counters: Some(cc),
            replica_counters,
            token_scope,
            tokens,
            replica_ids,
            healthy_replica_ids,
            replica_latest_restart_timestamps,
            unhealthy_replica_ids,
            original_id: s(b, rng),
        }
    }

    fn target<'b>(b: &'b Bump, rng: &mut Rng) -> Target<'b> {
        let id = rng.i64();
        let patch_id = s(b, rng);
        let mut peers = BVec::new_in(b);
        for _ in 0..CHILDREN {
            peers.push(Peer {
                id: s(b, rng),
                counts: rng.fill(Rng::i32),
                averages: rng.fill(Rng::i32),
                medians: rng.fill(Rng::i32),
                flags: rng.fill(Rng::bool),
            });
        }
        Target {
            id,
            patch_id,
            peers,
            counts: rng.fill(Rng::i32),
            creation_timestamp: rng.i64(),
        }
    }

    fn placement<'b>(b: &'b Bump, rng: &mut Rng) -> Placement<'b> {
        Placement {
            id: s(b, rng),
            toleration: rng.f64(),
            toleration_delta: rng.f64(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The benchmarks.

/// Runs one benchmark of the `message` group and records its allocations.
fn run(c: &mut Criterion, name: &str, mut op: impl FnMut()) {
    let mut tally = Tally::default();
    c.benchmark_group("message").bench_function(name, |b| {
        b.iter_custom(|ops| support::serial(ops, &mut tally, &mut op))
    });
    support::record("recycle", "message", name, "", &tally, None);
    if tally.ops > 0 && !support::test_mode() {
        // The tally above includes warm-up (the first builds fill the free lists); this is the
        // steady state alone.
        const OPS: u64 = 20;
        let before = Snapshot::now();
        for _ in 0..OPS {
            op();
        }
        let a = Snapshot::since(before);
        eprintln!(
            "message/{name}: steady state {:.3} allocs/op, {:.1} B/op ({OPS} ops after the run)",
            a.allocs as f64 / OPS as f64,
            a.bytes as f64 / OPS as f64,
        );
    }
}

/// Checks once that a variant builds the whole message.
fn check(m: &Message) {
    let req = m.request.as_ref().expect("a request");
    assert_eq!(req.targets.len(), TARGETS);
    assert!(req.targets.iter().all(|t| t.peers.len() == CHILDREN));
    let server = req
        .context
        .as_ref()
        .and_then(|c| c.server.as_ref())
        .expect("a server");
    assert_eq!(server.replica_counters.len(), CHILDREN);
}

/// `RECYCLE_SERIES=<ops>` (criterion does not run then): `<ops>` ops of the `recycled` variant,
/// past the renewal onset (5,000 to 6,000 builds), printing allocations per op every 1,000.
fn recycled_series(ops: u64) {
    const STEP: u64 = 1_000;
    let mut r = Recycled::new(Message::default());
    eprintln!("ops\tallocs/op\tspare\tspare bytes\trenewed");
    let mut done = 0;
    while done < ops {
        let before = Snapshot::now();
        for _ in 0..STEP {
            r.clear();
            let (m, lists) = Recycled::parts_mut(&mut r);
            build(lists, &mut Rng(SEED), m);
            black_box(&*r);
        }
        done += STEP;
        let a = Snapshot::since(before);
        let stats = Recycled::free_lists(&r).stats();
        eprintln!(
            "{done}\t{:.3}\t{}\t{}\t{}",
            a.allocs as f64 / STEP as f64,
            stats.spare,
            stats.spare_bytes,
            stats.renewed
        );
    }
    check(&r);
}

fn message(c: &mut Criterion) {
    if let Ok(ops) = std::env::var("RECYCLE_SERIES") {
        recycled_series(ops.parse().expect("RECYCLE_SERIES=<ops>"));
        return;
    }
    run(c, "fresh", || {
        let mut m = Message::default();
        build(&mut Fresh, &mut Rng(SEED), &mut m);
        black_box(&m);
    });

    let pool = Pool::new(Message::default, |m| {
        m.plain_clear();
        true
    });
    run(c, "pool-clear", || {
        let mut m = pool.get();
        build(&mut Fresh, &mut Rng(SEED), &mut m);
        black_box(&*m);
    });

    let mut r = Recycled::new(Message::default());
    run(c, "recycled", || {
        r.clear();
        let (m, lists) = Recycled::parts_mut(&mut r);
        build(lists, &mut Rng(SEED), m);
        black_box(&*r);
    });
    check(&r);
    eprintln!(
        "recycled: the free lists after the run: {:?}",
        Recycled::free_lists(&r).stats()
    );

    let pool = Pool::new(Recycled::<Message>::default, |r| {
        r.clear();
        true
    });
    run(c, "pool-recycled", || {
        let mut r = pool.get();
        let (m, lists) = Recycled::parts_mut(&mut r);
        build(lists, &mut Rng(SEED), m);
        black_box(&**r);
    });

    let mut b = Bump::new();
    run(c, "bumpalo", || {
        {
            let m = bump::build(&b, &mut Rng(SEED));
            black_box(&m);
        }
        b.reset();
    });
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = message
}
criterion_main!(benches);
