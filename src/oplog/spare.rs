//! Keeping the spare version within the op log's reach.
//!
//! With a reader that lets go of its guards between publishes, `publish` reclaims the
//! version the previous publish retired and writes that one again: two versions alternate
//! and each operation is applied twice on the publish path. A third version (made at build
//! time, [`OpLogBuilder::versions`](super::OpLogBuilder::versions), or left idle when a
//! reader held a guard across a publish) waits in the pool for the next publish that finds
//! the alternating pair held. It lacks every batch since it was last written, so the op log
//! keeps those for it. Left alone, the op log would grow to
//! [`max_ops`](super::OpLogBuilder::max_ops) and drop them, and the next reader that held a
//! guard at the wrong moment would make a publish copy the whole table.
//!
//! So once the stalest idle version lacks more than a chunk (`lag_for`: three batches per
//! spare, or the *spare lag* if less: [`DEFAULT_SPARE_LAG`](super::DEFAULT_SPARE_LAG), at
//! most half of `max_ops`), a publish takes it out of the pool and replays the oldest
//! whole batches on it, a chunk at a time (`chunk`), applying each operation by value
//! ([`Absorb::absorb_owned`]) where no other version lacks it, and dropping it from the op
//! log. The spare then never falls out of the op log's reach, the op log holds about a
//! chunk for it, and a publish that must take the spare (a reader holds the version the
//! last publish retired) replays about that many operations, not the whole op log. Each
//! operation is thus applied a third time, later and in chunks, on about a third of the
//! publishes.
//!
//! While a reader holds the stalest version, the next stalest idle one is caught up
//! instead (by reference: the held one still needs the operations): with readers that
//! hold guards for long, a fourth version stays as close as the third would.
//!
//! A version beyond those the writer keeps ([`OpLogBuilder::versions`](super::OpLogBuilder::versions),
//! at least two), made by a publish that found readers holding every version, is not caught
//! up: the catch-up drops it the first time it finds it idle and stalest. Kept, it would
//! cost one more application of every operation for as long as the writer runs (a fourth
//! version kept within reach), to spare a copy that the rent-or-buy wait (`oplog/wait.rs`)
//! makes rare once a copy's time is known.
//!
//! # Why the third application cannot be saved
//!
//! A reader may begin a long hold at any moment, on the version the last publish retired,
//! and the writer cannot see it coming. The next publish must then write a third version,
//! and bring it up to date in a bounded time: a replay of at most *b* operations, or a
//! full copy (O(n)), or a wait for the reader (unbounded). Without the copy and the
//! wait, some version besides the two that alternate must lack at most *b* operations at
//! every moment, so it applies every operation but the last *b*: three applications per
//! operation in all, whoever applies them (this thread, a later `catch_up`, a helper).
//! Re-copying it instead costs O(n) per *b* operations, more than an application per
//! operation once n exceeds *b*. left-right and flashmap apply each operation twice
//! because their writer waits for the reader. Two versions
//! ([`OpLogBuilder::versions`](super::OpLogBuilder::versions)) make the same trade here:
//! twice, and a wait (then a copy) when a reader holds a guard past `max_wait`.

use std::collections::VecDeque;

use super::{out_of_reach, Absorb, OpLog, OpLogStats, Segments, Versioned, UNSYNCED};
use crate::pool::Writer;
use crate::Pooled;

impl<T, O> OpLog<T, O>
where
    T: Absorb<O> + Send + Sync + 'static,
{
    /// Replays on the stalest idle version within the op log's reach the oldest whole
    /// batches it lacks, at least a chunk ([`chunk`]) if it lacks that many, if it lacks
    /// more than the spare lag for this batch ([`lag_for`]; see the module docs). Nothing
    /// if the op log is no longer than that (a test of its length). Looks among
    /// [`SPARES_LOOKED_PAST`] idle versions at most (stopping at the stalest of all), in
    /// this thread's share of the pool first, then in other threads' depots, and puts them
    /// all in this thread's depot, the others in their order above it. Does nothing if none
    /// of them lags that much (readers hold those that do), and then skips the search for a
    /// while ([`SpareMissed`]).
    pub(super) fn catch_up_spare(&mut self, batch: usize) {
        let OpLog {
            container,
            log,
            head,
            base,
            versions,
            keep,
            max_ops,
            spare_lag,
            spare_missed,
            stats,
            ..
        } = self;
        // Besides the spare, the version the last publish retired (on the retired list).
        if versions.len() < 2 {
            return;
        }
        // Versions that may need catching up: those tracked but the one the last publish
        // retired.
        let spares = versions.len() - 1;
        // The op log holds what the stalest version lacks: no version lags more than that.
        let lag = lag_for(batch, *spare_lag, spares);
        if log.len() <= lag {
            return;
        }
        let Some(&stalest) = versions.front() else {
            return;
        };
        // Readers held every version lagging more than the spare lag when the last search
        // looked. So look again only when another version is the stalest (the held one
        // fell out of the op log's reach), when this thread's depot holds more than then (a
        // reclamation here returned versions: perhaps that one), or once the idle ones may
        // lag that much again (or one came back elsewhere). Without this, each publish took
        // every idle version out of the pool and put it back (a take and a depot lock
        // each) for nothing.
        let writer = container.pool().writer();
        let returned = writer.returned_len_hint();
        let retry = (*spare_lag / 2).clamp(1, (*max_ops / SPARE_RETRY_DIVISOR).max(1));
        if let Some(missed) = *spare_missed {
            if missed.stalest == stalest
                && returned <= missed.returned
                && stats.appended < missed.appended + retry as u64
            {
                return;
            }
        }
        // Idle versions only: no pass, no factory (a miss skips this publish's catch-up).
        // They are in this thread's share (the pool returns the versions this writer
        // published to its depot, and the catch-up puts its spares there), unless the
        // writer moved from another thread, whose depot then holds them; never in another
        // thread's magazine, which only a handshake reaches. Several spares wait when
        // readers held guards across several publishes; the one caught up last is usually
        // on top, and the stalest below it, so the search looks past the top: with the top
        // alone, the stalest was never reached and fell out of the op log's reach (a late
        // full copy).
        // None is staler than `stalest`: the search ends there.
        let (mut passed, taken) = take_idle(writer, Some(stalest));
        // The stalest of them within the op log's reach, if it lags more than the spare
        // lag: the version the last publish retired, also among them, lags a batch or two.
        let spare_at = passed[..taken]
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (i, v.seq)))
            .filter(|&(_, seq)| !out_of_reach(seq, *base))
            .min_by_key(|&(_, seq)| seq)
            .filter(|&(_, seq)| log.len() - super::lack_start(log, seq) > lag)
            .map(|(i, _)| i);
        let missed = spare_at.is_none();
        if let Some(mut spare) = spare_at.and_then(|i| passed[i].take()) {
            let listed = forget(versions, spare.seq);
            // The others within reach: those listed, and the current version.
            if listed && versions.len() + 1 >= *keep {
                // One more than the writer keeps (made while readers held every version):
                // dropped rather than caught up. Unsynced, its drop reports nothing; it was
                // forgotten above.
                spare.seq = UNSYNCED;
                writer.discard(spare);
            } else {
                if listed {
                    let limit = chunk(batch, spares);
                    catch_up(&mut spare, log, *head, base, versions, stats, limit);
                }
                // Back to the pool first: the versions passed over go back on top of it,
                // the one seen first last, as they were. To this thread's depot, not its
                // magazine: should the writer move to another thread, it finds them there.
                writer.put_back(spare);
            }
        }
        for version in passed.iter_mut().rev().filter_map(Option::take) {
            put_back(writer, version, *base, stats);
        }
        // What the depot holds with the versions passed over back in it.
        *spare_missed = missed.then(|| SpareMissed {
            stalest,
            appended: stats.appended,
            returned: writer.returned_len_hint(),
        });
    }
}

impl<T, O> OpLog<T, O>
where
    T: Absorb<O> + Send + Sync + 'static,
{
    /// Brings the idle versions up to the last published batch now, so that later
    /// publishes need not: for a writer with time between publishes (a reloader between
    /// reloads, a consumer between bursts). Returns the operations it applied.
    ///
    /// Runs a reclamation pass over the container's retired versions (so that the one the
    /// last publish retired comes back once its readers let go), then takes the idle
    /// versions from the pool (8 at most) and replays on each, stalest first, every
    /// operation it lacks: by value where no other version lacks it
    /// ([`Absorb::absorb_owned`]; it then leaves the op log), by reference otherwise.
    /// Versions that readers hold are left as they are; they catch up when they come back.
    /// The publish after it then usually applies only its own batch: *k* operations
    /// instead of *2k*, or *5k* on the third of the publishes that also catch up the spare
    /// (module docs, "What it costs"). The total work is the same; this moves it off the
    /// publish.
    ///
    /// Costs one reclamation pass (a barrier, `membarrier` or a fence, and a scan of the
    /// hazard slots) if something is retired, then, unless every version the op log serves
    /// is up to date already (a second call: a relaxed load and a compare), one take and
    /// one depot lock per idle version, and the operations each lacks (the pending batch is
    /// not published and not applied). Never waits for a reader and never copies a version
    /// whole: one the op log can no longer bring up to date is put back below the others,
    /// as a publish does.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use poolswap::oplog::{OpLog, MapOp};
    ///
    /// let mut w = OpLog::builder(HashMap::new()).versions(3).build();
    /// for i in 0..4 {
    ///     w.append(MapOp::Insert(i, i));
    ///     w.publish();
    /// }
    /// // Idle time: the two idle versions replay what they lack.
    /// assert!(w.catch_up() > 0);
    /// let before = w.stats().applied;
    /// w.append(MapOp::Insert(9, 9));
    /// w.publish();
    /// assert_eq!(w.stats().applied - before, 1); // only its own batch
    /// ```
    pub fn catch_up(&mut self) -> usize {
        let applied_before = self.stats.applied;
        self.forget_dropped_versions();
        'replay: {
            let OpLog {
                container,
                log,
                head,
                base,
                versions,
                spare_missed,
                stats,
                ..
            } = self;
            let writer = container.pool().writer();
            if writer.retired_pending() {
                writer.reclaim_unless_heavy(true);
            }
            // Every version the op log keeps operations for is up to date (a second call,
            // or none retired since): nothing to take out of the pool.
            if versions.front().map_or(true, |&v| v >= *head) {
                break 'replay;
            }
            let (mut idle, taken) = take_idle(writer, None);
            let idle = &mut idle[..taken];
            // Stalest first: its catch-up applies by value what no other version lacks.
            idle.sort_unstable_by_key(|v| v.as_ref().map_or(u64::MAX, |v| v.seq));
            for version in idle.iter_mut().flatten() {
                if !out_of_reach(version.seq, *base)
                    && version.seq < *head
                    && forget(versions, version.seq)
                {
                    catch_up(version, log, *head, base, versions, stats, usize::MAX);
                }
            }
            // Back to this thread's depot, stalest first, so that the freshest is on top
            // (the next publish takes it); any the op log can no longer serve below the
            // others, as victims.
            for version in idle.iter_mut().filter_map(Option::take) {
                put_back(writer, version, *base, stats);
            }
            // What the spare's catch-up saw last is stale now.
            *spare_missed = None;
        }
        if !self.dropping.is_empty() {
            self.drop_some(usize::MAX);
        }
        (self.stats.applied - applied_before) as usize
    }
}

/// Removes one entry numbered `seq` from `versions` (ascending): the version is the
/// writer's now. Whether there was one.
pub(super) fn forget(versions: &mut VecDeque<u64>, seq: u64) -> bool {
    // The stalest is the usual one (in half the publishes of a run without readers).
    if versions.front() == Some(&seq) {
        versions.pop_front();
        true
    } else if let Ok(at) = versions.binary_search(&seq) {
        versions.remove(at);
        true
    } else {
        false
    }
}

/// Up to [`SPARES_LOOKED_PAST`] idle versions taken out of the pool
/// ([`Writer::take_idle`]: no pass, no factory), in the order the pool hands them out,
/// and how many; the search stops after one numbered `stop_at`, if given. The caller puts
/// them back ([`put_back`]).
fn take_idle<T>(
    writer: Writer<'_, Versioned<T>>,
    stop_at: Option<u64>,
) -> (
    [Option<Pooled<'_, Versioned<T>>>; SPARES_LOOKED_PAST],
    usize,
) {
    let mut idle: [Option<Pooled<'_, Versioned<T>>>; SPARES_LOOKED_PAST] = Default::default();
    let mut taken = 0;
    for slot in &mut idle {
        let Some(version) = writer.take_idle() else {
            break;
        };
        let last = Some(version.seq) == stop_at;
        *slot = Some(version);
        taken += 1;
        if last {
            break;
        }
    }
    (idle, taken)
}

/// Puts `version` back in this thread's depot; one out of the op log's reach (numbered
/// before `base`) goes below the others, as a victim (counted in `stats.set_aside`): kept
/// for a publish that finds nothing else idle (`take_within_reach`), not taken first.
fn put_back<'p, T>(
    writer: Writer<'p, Versioned<T>>,
    version: Pooled<'p, Versioned<T>>,
    base: u64,
    stats: &mut OpLogStats,
) {
    if out_of_reach(version.seq, base) {
        writer.set_aside(version);
        stats.set_aside += 1;
    } else {
        writer.put_back(version);
    }
}

/// An idle version within the op log's reach (numbered `base` or later), looked for among
/// [`SPARES_LOOKED_PAST`] idle versions at most, as the spare's catch-up looks: for a
/// publish that took one out of its reach. Those out of reach go back as victims (counted
/// in `stats.set_aside`), the others within reach passed over on top of this thread's
/// depot.
pub(super) fn take_within_reach<'a, T>(
    writer: Writer<'a, Versioned<T>>,
    base: u64,
    stats: &mut OpLogStats,
) -> Option<Pooled<'a, Versioned<T>>> {
    for _ in 0..SPARES_LOOKED_PAST {
        let version = writer.take_idle()?;
        if !out_of_reach(version.seq, base) {
            return Some(version);
        }
        writer.set_aside(version);
        stats.set_aside += 1;
    }
    None
}

/// Idle versions `catch_up_spare` takes out of the pool, at most, looking for the stalest:
/// about one per reader that held a guard across publishes at once is idle, and each one
/// passed over costs a take and a depot lock to put it back.
const SPARES_LOOKED_PAST: usize = 8;

/// After a search that found no idle version lagging more than the spare lag, the spare's
/// catch-up looks again once half the spare lag more operations were appended, but at
/// least once per this fraction of the op log's bound, if nothing else sent it to look
/// (`SpareMissed`): with the defaults, every 512 operations. The most a version that comes
/// back to another thread's depot may wait to be found, and about how much further past
/// the spare lag an idle version may fall while a reader holds the stalest.
pub(super) const SPARE_RETRY_DIVISOR: usize = 16;

/// What the spare's catch-up saw when its last search found no idle version lagging more
/// than the spare lag (readers held those that do). It looks again when another version is
/// the stalest, when the calling thread's depot holds more than `returned` (a reclamation
/// returned versions there, the held one perhaps), or when enough operations were appended
/// since (see [`SPARE_RETRY_DIVISOR`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct SpareMissed {
    /// The stalest version's number.
    stalest: u64,
    /// Operations appended so far (`OpLogStats::appended`).
    appended: u64,
    /// The calling thread's depot's length hint, the versions passed over included.
    returned: usize,
}

/// How many operations one catch-up replays at least, after a publish of `batch`, with
/// `spares` versions to keep caught up: three batches per spare. The spares fall `spares`
/// batches behind per publish, so the catch-ups land on about a third of the publishes, in
/// the smallest chunks that do, and the median publish pays none. Larger chunks would land
/// on fewer publishes but make each of those slower and leave the spare further behind
/// (what a publish that must take it replays); smaller ones would land on most publishes.
fn chunk(batch: usize, spares: usize) -> usize {
    spares.max(1).saturating_mul(batch.saturating_mul(3))
}

/// How many operations the stalest spare may lack after a publish of `batch`, with
/// `spares` versions to keep caught up, before the catch-up runs: one [`chunk`], or the
/// spare lag if less. The catch-ups land on a third of the publishes whatever the lag (the
/// chunk sets that), so the lag bounds only what the op log keeps and what a publish
/// replays when it must take the spare (a reader still holds the version the last publish
/// retired): at most a chunk and a batch.
fn lag_for(batch: usize, spare_lag: usize, spares: usize) -> usize {
    spare_lag.min(chunk(batch, spares))
}

/// Replays on `spare` (already taken off `versions`) the oldest whole batches it lacks, at
/// least `limit` operations if it lacks that many, then lists it again at its new number.
/// By value those no other version lacks (when it is the stalest), by reference the
/// others.
fn catch_up<T, O>(
    spare: &mut Versioned<T>,
    log: &mut Segments<(u64, O)>,
    head: u64,
    base: &mut u64,
    versions: &mut VecDeque<u64>,
    stats: &mut OpLogStats,
    limit: usize,
) where
    T: Absorb<O>,
{
    let had = spare.seq;
    // Until it is whole again, as in `publish`: an operation that panics sends it back
    // marked for a full copy.
    spare.seq = UNSYNCED;
    let others = versions.front().copied().unwrap_or(head);
    let mut applied = 0;
    let mut upto = had;
    // Whole batches only, none past the current one: whether the operation numbered
    // `n` is past what this catch-up replays.
    let past = |n: u64, upto: u64, applied: usize| n > head || (n > upto && applied >= limit);
    // Where what the spare lacks begins: the front if it is the stalest, else past the
    // operations a staler version (a reader holds it) still needs, found by a search, not
    // a walk (those may be up to `max_ops` operations).
    let at = super::lack_start(log, had);
    // First, if the spare is the stalest, from the front the operations no other version
    // lacks: their last application, by value. Operations before `at` stay in the op log
    // (another version lacks them).
    if at == 0 {
        while let Some(&(n, _)) = log.front() {
            if past(n, upto, applied) || n > others {
                break;
            }
            let (n, op) = log.pop_front().expect("front was just seen");
            spare.value.absorb_owned(op);
            *base = (*base).max(n);
            upto = n;
            applied += 1;
        }
    }
    // Then those another version lacks, by reference, in one replay (a map reuses what
    // one operation removes for a later insert: `Absorb::absorb_all`). All of them are
    // numbered past `had`: the op log is in order, everything before `at` is numbered at
    // most `had`, and the loop above popped only from the front.
    let mut end = at;
    while let Some(&(n, _)) = log.get(end) {
        if past(n, upto, applied) {
            break;
        }
        upto = n;
        applied += 1;
        end += 1;
    }
    spare.value.absorb_all(log.range(at..end).map(|(_, op)| op));
    stats.applied += applied as u64;
    spare.seq = upto;
    let at = versions.partition_point(|&v| v <= upto);
    versions.insert(at, upto);
}
