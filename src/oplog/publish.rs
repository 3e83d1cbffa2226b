//! `OpLog::publish`'s steps: **take** a version from the pool, **catch** it **up** to the
//! last published batch, **apply** the new batch, **swap** it in. Each step is a method of
//! [`Publish`], which borrows the writer's state for one publish; the pool is reached only
//! through its [`Writer`] side.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use super::{
    dropping, lack_start, out_of_reach, spare, timed, wait, Absorb, OpLog, OpLogStats, Segments,
    Versioned, HEAVY_PASS_OPS, UNSYNCED,
};
use crate::pool::Writer;
use crate::{Container, Pooled};

impl<T, O> OpLog<T, O>
where
    T: Absorb<O> + Send + Sync + 'static,
{
    /// Publishes the pending batch, `batch` operations at the op log's end (`pending` is
    /// already zeroed), in [`Publish`]'s four steps; returns its number.
    pub(super) fn publish_batch(&mut self, batch: usize) -> u64 {
        let OpLog {
            container,
            log,
            head,
            base,
            versions,
            max_ops,
            passes_seen,
            dropping,
            max_wait,
            copy_time,
            published,
            retired,
            wait_backoff,
            stats,
            ..
        } = self;
        let container: &Container<Versioned<T>> = container;
        let mut publish = Publish {
            container,
            writer: container.pool().writer(),
            log,
            head,
            base,
            versions,
            max_ops: *max_ops,
            passes_seen,
            dropping,
            max_wait: *max_wait,
            copy_time,
            published,
            retired,
            wait_backoff,
            stats,
        };
        let (mut next, had) = publish.take();
        let from = publish.catch_up(&mut next, had);
        publish.apply(&mut next, from, batch);
        publish.swap(next)
    }
}

/// One publish: the writer's state it works on, borrowed from the [`OpLog`] apart from the
/// container (whose pool the version being written borrows). Fields as in `OpLog`.
struct Publish<'a, T, O> {
    container: &'a Container<Versioned<T>>,
    writer: Writer<'a, Versioned<T>>,
    log: &'a mut Segments<(u64, O)>,
    head: &'a mut u64,
    base: &'a mut u64,
    versions: &'a mut VecDeque<u64>,
    max_ops: usize,
    passes_seen: &'a mut usize,
    dropping: &'a mut Vec<Segments<(u64, O)>>,
    max_wait: Duration,
    copy_time: &'a mut Duration,
    published: &'a mut usize,
    retired: &'a mut usize,
    wait_backoff: &'a mut wait::Backoff,
    stats: &'a mut OpLogStats,
}

impl<'a, T, O> Publish<'a, T, O>
where
    T: Absorb<O> + Send + Sync + 'static,
{
    /// **Take**: the version to write, and the batch it held (its `seq`, now [`UNSYNCED`]
    /// until the swap). The freshest version back from the readers (the one the last
    /// publish retired, after a pass and a bounded wait for it), else whatever idle one the
    /// pool has within the op log's reach, else a bounded wait for one, else a new one.
    fn take(&mut self) -> (Pooled<'a, Versioned<T>>, u64) {
        let writer = self.writer;
        // The version the last publish retired (lag 1) is usually still on the retired
        // list, its reader long gone: reclaim it first, so that the pool hands it out
        // rather than an older idle one (module docs, "What it costs": when this pass
        // runs). Whatever a pass that ended since the last publish returned, it has
        // already.
        if writer.retired_pending() && writer.passes_ended() == *self.passes_seen {
            // Worth a heavy barrier when the op log is long: without the pass, the writer
            // would take the idle version, which lacks what the op log holds.
            writer.reclaim_unless_heavy(self.log.len() >= HEAVY_PASS_OPS);
        }
        // Readers that acquired it just before the last swap are about to let go of it.
        wait::for_retired(
            writer,
            *self.retired,
            self.max_wait,
            self.wait_backoff,
            self.stats,
        );
        // The freshest version back from the readers, else whatever idle one the pool has
        // (a pass first, if need be), never one from the factory: that would cost a full
        // copy.
        let mut next = writer.take_returned().or_else(|| writer.take_unless_new());
        if next
            .as_ref()
            .map_or(true, |v| out_of_reach(v.seq, *self.base))
        {
            self.take_within_reach(&mut next);
        }
        // Still none: the factory's, copied whole by the catch-up.
        let mut next = next.unwrap_or_else(|| writer.build());
        let had = next.seq;
        if !out_of_reach(had, *self.base) && had + 1 < *self.head {
            self.stats.stale_takes += 1;
        }
        // This version is the writer's now: the op log no longer keeps anything for it.
        spare::forget(self.versions, had);
        // Until it is whole again: should an operation panic, the version goes back to the
        // pool marked for a full copy, not with half a batch applied.
        next.seq = UNSYNCED;
        (next, had)
    }

    /// Part of [`take`](Self::take): `next` is `None`, or lacks more than the op log holds
    /// (a reader held it past `max_ops`, and a reclamation just returned it); replaces it
    /// with a version within reach if one can be had for less than a full copy, setting
    /// the one it replaces aside as the pool's victim.
    fn take_within_reach(&mut self, next: &mut Option<Pooled<'a, Versioned<T>>>) {
        let (writer, base) = (self.writer, *self.base);
        // For one out of reach, another idle version within reach is taken instead, and
        // this one kept as the pool's victim; if none is idle, a pass, with the heavy
        // barrier if need be (still far cheaper than a full copy), may return the version
        // the last publish retired. (For none, the getter looked everywhere and ran its
        // pass already.) Failing that, the publish waits for readers to let go of one, as
        // long as a full copy would take, then copies (`oplog/wait.rs`: rent or buy); with
        // a zero `max_wait`, at once.
        let found = next.is_some().then(|| {
            spare::take_within_reach(writer, base, self.stats).or_else(|| {
                writer.reclaim_unless_heavy(true)?;
                spare::take_within_reach(writer, base, self.stats)
            })
        });
        let within = found.flatten().or_else(|| {
            let rent = if self.max_wait.is_zero() {
                Duration::ZERO
            } else {
                (*self.copy_time).max(self.max_wait)
            };
            wait::for_within_reach(writer, base, rent, self.stats)
        });
        if let Some(within) = within {
            if let Some(out) = next.replace(within) {
                writer.set_aside(out);
                self.stats.set_aside += 1;
            }
        }
    }

    /// **Catch up**: brings `next`, which held batch `had`, up to where the operations no
    /// other version lacks end: a full copy of the current version first if the op log
    /// cannot serve it, then those operations, by value, as they leave the op log. Returns
    /// the batch `next` holds all of before the rest (`from`): what [`apply`](Self::apply)
    /// replays past.
    fn catch_up(&mut self, next: &mut Pooled<'a, Versioned<T>>, had: u64) -> u64 {
        let from = if out_of_reach(had, *self.base) {
            // A full copy of the current version (at `head`: only the writer publishes),
            // then whatever it lacks.
            let current = self.container.acquire();
            *self.copy_time = timed(|| next.value.sync_from(&current.value));
            self.stats.full_syncs += 1;
            current.seq
        } else {
            had
        };
        // Replay (from, head]. Operations of batches no other version lacks (numbered at
        // most `others`: every other version holds them) are applied for the last time, by
        // value, and leave the op log; those this version holds too (numbered at most
        // `from`) are dropped, or set apart to be dropped over later publishes if there are
        // many.
        let others = self.versions.front().copied().unwrap_or(*self.head);
        if self.log.len() > dropping::DROP_AT_ONCE {
            let n = lack_start(self.log, from.min(others));
            dropping::set_apart(self.log, self.base, self.dropping, n);
        }
        while let Some(&(n, _)) = self.log.front() {
            if n > others {
                break;
            }
            let (n, op) = self.log.pop_front().expect("front was just seen");
            if n > from {
                next.value.absorb_owned(op);
                self.stats.applied += 1;
            }
            *self.base = (*self.base).max(n);
        }
        from
    }

    /// **Apply**: replays on `next` by reference what is left that it lacks (numbered past
    /// `from`), the new batch of `batch` operations last; they stay in the op log.
    fn apply(&mut self, next: &mut Pooled<'a, Versioned<T>>, from: u64, batch: usize) {
        let log = &*self.log;
        // What is left is numbered above `others`, the new batch (`head + 1`) last. The
        // version lacks all of it unless it is fresher than another version (`from >
        // others`); then its lack usually begins a batch or two from the end.
        let start = lack_start(log, from);
        // The new batch among them: every other version lacks it, so it is applied by
        // reference and stays in the op log.
        next.value
            .absorb_all(log.range(start..log.len()).map(|(_, op)| op));
        self.stats.applied += (log.len() - start) as u64;
        self.stats.appended += batch as u64;
    }

    /// **Swap**: publishes `next` as the next batch's version, notes the version it retired
    /// (the next publish waits for it), and bounds the op log. Returns the batch's number.
    fn swap(self, mut next: Pooled<'a, Versioned<T>>) -> u64 {
        let Publish {
            container,
            writer,
            log,
            head,
            base,
            versions,
            max_ops,
            passes_seen,
            published,
            retired,
            stats,
            ..
        } = self;
        let seq = *head + 1;
        next.seq = seq;
        let addr = writer.retired_name(&next);
        container.update(next);
        *retired = std::mem::replace(published, addr);
        // After the update: a pass that ends from now on may have taken the version it
        // retired off the list.
        *passes_seen = writer.passes_ended();
        // The version just replaced (numbered `head`) may come back from the pool.
        versions.push_back(*head);
        *head = seq;
        stats.publishes += 1;
        // Bound the op log: drop the oldest batches (never the current one), and forget the
        // versions that lacked them; those get a full copy if they come back.
        while log.len() > max_ops {
            match log.front() {
                Some(&(n, _)) if n < seq => {
                    log.pop_front();
                    stats.truncated += 1;
                    *base = (*base).max(n);
                }
                _ => break,
            }
        }
        while versions.front().is_some_and(|&v| v < *base) {
            versions.pop_front();
        }
        seq
    }
}

impl<T, O> fmt::Debug for Publish<'_, T, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publish")
            .field("head", &*self.head)
            .field("base", &*self.base)
            .field("ops", &self.log.len())
            .finish_non_exhaustive()
    }
}
