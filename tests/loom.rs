//! Loom models of the swap/reclaim protocol: readers, hazard slots and counted guards
//! against updates and reclamation passes, `Cache`, `rcu`, the pool's close and the
//! background reclaimer. The pool's own free lists, a thread's exit and the waits at the
//! live bound are in `tests/loom_pool.rs`.
//!
//! Run in both builds (as CI does):
//!
//! ```text
//! RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom
//! ```
//!
//! The crate's debug assertions load atomics, which are loom operations of their own, so
//! each build explores interleavings the other does not: a model's assertions must hold in
//! every execution, whichever pass, getter or thread returns a version.
//!
//! Under `cfg(loom)` every atomic, lock, `UnsafeCell` and thread-local in the crate is loom's
//! (see `src/sync.rs`), so loom explores every interleaving of these small programs (up to
//! the preemption bound), its `UnsafeCell` tracking reports a read of an object that races
//! with its reset or refill (the use-after-return the Go README's notes describe), and the
//! crate's `debug_assert!`s run in every interleaving of the debug build. Objects hold an
//! integer: writers store a version number, the pool's reset stores 0, so a reader that saw
//! 0 saw an object that was being reset for reuse.
//!
//! Loom runs each model thread's thread-local destructors (where the pool's exit hook runs)
//! after the thread's closure, but its `JoinHandle::join` returns before them, unlike std's.
//! So a model that checks that every object is accounted for drops the pool and counts
//! drops: the close drains every magazine, whether or not its thread's exit hook has run.
#![cfg(loom)]

// The models' own bookkeeping (counters, the handles shared between model threads) uses
// std's atomics and `Arc` (see `support/loom_objects.rs`).
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use loom::thread;
use poolswap::{Cache, Container, Guard, Pool};

#[path = "support/loom_objects.rs"]
mod objects;
use objects::*;

/// Hazard slots per thread under loom (2 blocks of 2), so that models reach the counted
/// fallback.
const HAZARD_SLOTS: usize = 4;

/// A reader acquires while a writer publishes twice, so the first version can be returned
/// and handed out again (its node reused) while the reader is between its load and its
/// check: the ABA case of the lock-free acquire.
#[test]
fn acquire_vs_update_vs_release() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        drop(pool); // the container keeps its own handle

        let writer = {
            let c = c.clone();
            thread::spawn(move || {
                publish(&c, 2);
                publish(&c, 3);
            })
        };
        let reader = {
            let c = c.clone();
            thread::spawn(move || {
                let v = c.acquire().value;
                assert!((1..=3).contains(&v), "reader saw {v}: a reused object");
            })
        };
        writer.join().unwrap();
        reader.join().unwrap();
        // After both threads, the last update is current.
        assert_eq!(c.acquire().value, 3);
    });
}

/// The reader holds its guard across the writer's updates: the version it holds must not
/// be reset or reused until the guard drops.
#[test]
fn guard_held_across_updates() {
    loom::model(|| {
        let (pool, _) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        drop(pool); // the container keeps its own handle

        let reader = {
            let c = c.clone();
            thread::spawn(move || {
                let g = c.acquire();
                let first = g.value;
                thread::yield_now();
                // Same version, unchanged, whatever the writer did meanwhile.
                assert_eq!(g.value, first);
                let again = Guard::clone(&g);
                drop(g);
                assert_eq!(again.value, first);
            })
        };
        publish(&c, 2);
        publish(&c, 3);
        reader.join().unwrap();
        assert_eq!(c.acquire().value, 3);
    });
}

/// The last two guards on a retired version are dropped at once, on two threads; a
/// reclamation then returns it exactly once, and it is reset exactly once when handed out
/// again.
#[test]
fn last_two_guards_released_at_once() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = first_version(&pool, 1);
        let a = c.acquire();
        let b = Guard::clone(&a);
        publish(&c, 2); // the container lets go of version 1
        assert_eq!(poolswap::internals::ref_count(&a), 2);

        // Guard drops register no thread with the pool: no exit hook runs after the joins.
        let t1 = thread::spawn(move || drop(a));
        let t2 = thread::spawn(move || drop(b));
        t1.join().unwrap();
        t2.join().unwrap();
        assert_eq!(pool.stats().idle, 0, "a guard's drop returned its version");
        assert_eq!(poolswap::reclaim(), 1);

        // Version 1 is idle exactly once (in the main thread's depot, where it was
        // published): one more object would mean a double put.
        assert_eq!(pool.stats().idle, 1);
        let before = counts.resets.load(SeqCst);
        let reused = take_reset(&pool, 5);
        assert_eq!(counts.resets.load(SeqCst), before + 1);
        assert_eq!(pool.stats().idle, 0);
        assert_eq!(pool.stats().created, 2);
        drop(reused);
        drop((c, pool));
        counts.assert_all_dropped();
    });
}

/// Two writers publish at once while a reader reads: last writer wins, nothing is lost.
#[test]
fn concurrent_writers() {
    // Three threads that each take the retired list's lock: at most two preemptions.
    bounded(2, || {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        drop(pool); // the container keeps its own handle

        let w1 = {
            let c = c.clone();
            thread::spawn(move || publish(&c, 2))
        };
        let w2 = {
            let c = c.clone();
            thread::spawn(move || publish(&c, 3))
        };
        {
            let g = c.acquire();
            assert!((1..=3).contains(&g.value));
        }
        w1.join().unwrap();
        w2.join().unwrap();

        let v = c.acquire().value;
        assert!(v == 2 || v == 3);
        drop(c);
        counts.assert_all_dropped();
    });
}

/// A guard outlives every handle on another thread and drops the last reference on its
/// version while the pool closes: the version is dropped (refused by its closed depot, or
/// drained by the close), never kept.
#[test]
fn last_guard_vs_close() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = first_version(&pool, 1);
        drop(pool); // the container keeps its own handle
        let g = c.acquire();
        publish(&c, 2); // version 1 now lives only through `g`
        let reader = thread::spawn(move || drop(g));
        drop(c);
        reader.join().unwrap();
        counts.assert_all_dropped();
    });
}

/// A pass in flight on another thread (`poolswap::reclaim`) holds a guarded version off its
/// pool's retired list while the pool's last handle goes, and the writer's own passes
/// (its getter's, its container's drop) return all they take meanwhile, leaving the list's
/// length hint at zero. The close must hand the list over to the orphans' thread all the
/// same (here the model runs that thread's pass itself), so that the version goes once its
/// guard does, with no other call. A close that trusted the hint handed nothing over, and
/// the version stayed retired for ever.
#[test]
fn a_close_during_a_pass_holding_a_guarded_version_adopts_the_list() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = first_version(&pool, 1);
        let g = c.acquire();
        publish(&c, 2); // version 1 retired, held by `g`
        let global = thread::spawn(poolswap::reclaim);
        publish(&c, 3); // retires version 2, which the getter's pass may return
        drop(c);
        drop(pool); // the pool's last handle: its close
        global.join().unwrap();
        drop(g);
        poolswap::loom_orphans_pass();
        counts.assert_all_dropped_unaided();
    });
}

// Hazard slots (src/hazard.rs). Under loom both barriers are `fence(SeqCst)` and a thread
// has two slots. A guard drop is one store; readers never reclaim: a retired version goes
// back at a writer-side reclamation (an update past the threshold, a pool getter that
// finds nothing idle, a container's drop, `poolswap::reclaim`). Each model ends by dropping
// every handle and checking that every object was dropped: a retired version left on the
// retired list keeps its pool and its objects alive, and fails the check.

/// A global pass (`poolswap::reclaim` on another thread) takes a pool's retired list while
/// the pool's writer retires to it and runs its own pass over it (its next `get` finds
/// nothing idle): a version the global pass keeps (a guard holds it) goes back on the
/// pool's list, ahead of what was retired meanwhile, and comes back once its guard is
/// gone; a held version is never returned; nothing is lost or returned twice.
#[test]
fn global_pass_vs_the_owners_retire_and_pass() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let g = c.acquire();
        publish(&c, 2); // version 1 retired to the pool's list, held by `g`
        let global = thread::spawn(poolswap::reclaim);
        // Retires version 2; the `get` first finds nothing idle and passes over the list
        // (or waits for the global pass that holds it).
        publish(&c, 3);
        assert_eq!(g.value, 1, "a held version was reused");
        let returned = global.join().unwrap();
        assert!(
            returned <= 1,
            "the global pass returned {returned} versions"
        );
        drop(g);
        poolswap::reclaim();
        let stats = pool.stats();
        assert_eq!(
            stats.live - stats.idle,
            1,
            "an old version is out: {stats:?}"
        );
        drop(c);
        drop(pool);
        counts.assert_all_dropped_unaided();
    });
}

/// Two writers, each with its own pool (so its own retired list), on two threads: one
/// runs a global pass while the other passes over its own list. Each list's versions come
/// back to their own pool, and every object is accounted for.
#[test]
fn two_pools_local_pass_vs_global_pass() {
    loom::model(|| {
        let (pool_a, counts_a) = counting_pool();
        let (pool_b, counts_b) = counting_pool();
        let a = first_version(&pool_a, 1);
        let other = thread::spawn(move || {
            let b = first_version(&pool_b, 1);
            publish(&b, 2);
            poolswap::reclaim();
            let stats = pool_b.stats();
            assert_eq!(stats.live - stats.idle, 1, "pool b: {stats:?}");
        });
        publish(&a, 2);
        publish(&a, 3); // a pass over pool a's list, racing with the global pass
        other.join().unwrap();
        poolswap::reclaim();
        let stats = pool_a.stats();
        assert_eq!(stats.live - stats.idle, 1, "pool a: {stats:?}");
        drop(a);
        drop(pool_a);
        counts_a.assert_all_dropped_unaided();
        counts_b.assert_all_dropped();
    });
}

/// A reader's slot store races with the writer's scan of the slots, and the reader's guard
/// drop with the next scan: the reader never sees a reused object, and every retired
/// version is collected.
#[test]
fn slot_store_and_drop_vs_scan() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let reader = {
            let c = c.clone();
            thread::spawn(move || {
                let g = c.acquire();
                assert!(!poolswap::internals::is_counted(&g));
                let v = g.value;
                assert!((1..=3).contains(&v), "reader saw {v}: a reused object");
                drop(g);
            })
        };
        publish(&c, 2);
        publish(&c, 3);
        // The last collections race with the reader's drop too.
        drop(c);
        drop(pool);
        reader.join().unwrap();
        counts.assert_all_dropped();
    });
}

/// Spawns a thread that checks that `g` still reads `value` and drops it there.
fn drop_on_another_thread(g: Guard<Obj>, value: usize) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        assert_eq!(g.value, value, "a held version changed");
        drop(g);
    })
}

/// A guard on a version outlives its retirement and is dropped on another thread while the
/// writer reclaims: the version stays unchanged while held, the drop returns nothing (no
/// reset runs before the reclamation that follows it), and version 1 comes back exactly
/// once: at the racing `reclaim`, at the pass of the getter that follows it, or at the
/// `reclaim` after the drop.
#[test]
fn guard_drop_vs_reclaim() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let g = c.acquire();
        // Version 1's object: the getter below gets it back if a pass returned it.
        let v1: *const Obj = &*g;
        publish(&c, 2); // version 1 retired, below the threshold: not reclaimed yet
        let resets = counts.resets.load(SeqCst);
        let dropper = drop_on_another_thread(g, 1);
        // Races with the drop: may or may not return version 1.
        let early = poolswap::reclaim();
        // No reset ran, on the dropper's thread or anywhere: the pool resets on `get`.
        assert_eq!(counts.resets.load(SeqCst), resets, "a version was reset");
        // Finds nothing idle unless that reclamation returned version 1, and then passes
        // over the list itself, which returns version 1 if the guard is gone by then. Either
        // way version 1's object is reset and refilled here, which must come after the
        // guard's read (the slot's `Release` clear).
        let next = take_reset(&pool, 3);
        let by_getter = usize::from(std::ptr::eq(&*next, v1) && early == 0);
        dropper.join().unwrap();
        drop(next);
        let late = poolswap::reclaim();
        let returned = early + by_getter + late;
        assert_eq!(returned, 1, "version 1 returned {returned} times");
        let stats = c.pool().stats();
        assert_eq!(
            stats.live - stats.idle,
            1,
            "an old version is still out of the pool: {stats:?}"
        );
        drop(c);
        drop(pool);
        counts.assert_all_dropped_unaided();
    });
}

/// A guard on a retired version is dropped on another thread; the writer's next update
/// gets its object from the pool, which finds nothing idle and reclaims first: it must get
/// version 1 back rather than build a third object (the writer never builds or waits while
/// an unprotected retired version exists). The version is never returned while read.
#[test]
fn writers_next_get_reclaims_a_released_version() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let g = c.acquire();
        let dropper = drop_on_another_thread(g, 1);
        publish(&c, 2);
        dropper.join().unwrap();
        publish(&c, 3);
        assert_eq!(
            counts.made.load(SeqCst),
            2,
            "the writer built an object while a released version was retired"
        );
        drop(c);
        drop(pool);
        counts.assert_all_dropped_unaided();
    });
}

/// A thread's block is taken over by a new thread while a guard from the old thread is
/// still held elsewhere: the new owner skips the busy slot, and both versions stay intact.
#[test]
fn block_reused_while_an_old_guard_lives() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let old = {
            let c = c.clone();
            thread::spawn(move || c.acquire())
        }
        .join()
        .unwrap();
        let newcomer = {
            let c = c.clone();
            thread::spawn(move || {
                let g = c.acquire();
                let v = g.value;
                assert!((1..=2).contains(&v), "newcomer saw {v}");
            })
        };
        publish(&c, 2);
        assert_eq!(old.value, 1, "the old thread's guard lost its version");
        newcomer.join().unwrap();
        drop(old);
        drop(c);
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A thread holds more guards than it has slots: the third takes a counted reference (the
/// fallback), racing with an update; all three read an intact version.
#[test]
fn fallback_when_slots_run_out() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let reader = {
            let c = c.clone();
            thread::spawn(move || {
                let guards: Vec<_> = (0..HAZARD_SLOTS + 1).map(|_| c.acquire()).collect();
                assert!(poolswap::internals::is_counted(guards.last().unwrap()));
                for g in &guards {
                    assert!((1..=2).contains(&g.value), "saw {}", g.value);
                }
            })
        };
        publish(&c, 2);
        reader.join().unwrap();
        drop(c);
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A cached reader loads while the writer publishes: it returns an intact version, never
/// an older one than it returned before, and the version it caches is collected once it
/// moves on.
#[test]
fn cache_vs_update() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let reader = {
            let c = c.clone();
            thread::spawn(move || {
                let mut cache = Cache::new(c);
                let first = cache.load().value;
                let second = cache.load().value;
                assert!((1..=2).contains(&first) && (first..=2).contains(&second));
            })
        };
        publish(&c, 2);
        reader.join().unwrap();
        drop(c);
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A counted guard (`swap`'s, on the version it retires) is dropped on another thread
/// while the writer reclaims: the reclaimer's claim (the count from the list's one to zero)
/// races with the guard's decrement. The version is never returned while the guard reads
/// it, the guard's drop never returns it, and a reclamation after the drop does.
#[test]
fn counted_guard_drop_vs_reclaim() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = first_version(&pool, 1);
        let old = c.swap(take_reset(&pool, 2));
        assert!(poolswap::internals::is_counted(&old));
        let dropper = drop_on_another_thread(old, 1);
        poolswap::reclaim();
        // Version 1's object, if that reclamation claimed it: reset and refilled here,
        // which must come after the guard's read (the claim's `Acquire`).
        let next = take_reset(&pool, 3);
        dropper.join().unwrap();
        drop(next);
        poolswap::reclaim();
        let stats = pool.stats();
        assert_eq!(stats.live - stats.idle, 1, "version 1 not back: {stats:?}");
        drop(c);
        drop(pool);
        counts.assert_all_dropped_unaided();
    });
}

/// A counted guard (a clone of a slot guard) is read and dropped on one thread while a
/// global pass on another claims its version (the count from the retired list's one to
/// zero) and returns it, and the writer's getter, on a third, finds it in its depot and
/// the pool resets and refills it. The object is a `Tracked`, so loom reports the guard's
/// read unless it happens-before the reset: the claim must read the guard's `Release`
/// decrement with `Acquire` (`RefCount::try_take_last`); with `Relaxed` this model fails
/// (a concurrent read and write in `Pool::hand_out`). Why three threads: under loom a
/// magazine operation issues a `fence(SeqCst)` (`barrier::signal`; a compiler fence
/// elsewhere), and loom's fences acquire every store that a thread in the fencing thread's
/// past has read, so a getter whose magazine operation follows the claim (the claim on its
/// own thread, or a join of the pass) would be ordered after the reader by that fence.
/// Here the getter's magazine operation may come before the claim, and its depot lock
/// after the return.
#[test]
fn counted_guard_read_vs_claim_and_reset() {
    loom::model(|| {
        let pool = tracked_pool();
        let c = Container::new(&pool, take_tracked(&pool, 1));
        let g = c.acquire();
        let counted = Guard::clone(&g);
        assert!(poolswap::internals::is_counted(&counted));
        drop(g);
        c.update(take_tracked(&pool, 2)); // version 1 retired, held by `counted` alone
        let reader = thread::spawn(move || {
            assert_eq!(counted.get(), 1, "a held version changed");
            drop(counted);
        });
        // Claims version 1 if the reader's drop came first.
        let pass = thread::spawn(poolswap::reclaim);
        // Version 1's object if that pass returned it by the depot's look (else the
        // getter's own pass may return it, or it builds an object).
        let next = take_tracked(&pool, 3);
        pass.join().unwrap();
        reader.join().unwrap();
        drop(next);
        poolswap::reclaim();
        let stats = pool.stats();
        assert_eq!(stats.live - stats.idle, 1, "version 1 not back: {stats:?}");
    });
}

/// A reader whose slots are all held reads through a counted reference while the writer
/// retires its version, reclaims it, and publishes the same node anew: the ABA case of the
/// counted fallback. Its re-load of `current` must not return the pointer from before the
/// reuse (with that load `Relaxed`, the reader could keep a reference to an object being
/// reset and refilled, and read 0).
#[test]
fn counted_reader_vs_reuse_and_republish() {
    bounded(2, || {
        let (pool, counts) = counting_pool();
        let other_pool = Pool::new(|| 0u8, |n| *n = 0);
        let c = Arc::new(first_version(&pool, 1));
        let reader = {
            let c = c.clone();
            let other = Container::from_value(&other_pool, 7);
            thread::spawn(move || {
                // Fill this thread's slots with guards on another container's version.
                let held: Vec<_> = (0..HAZARD_SLOTS).map(|_| other.acquire()).collect();
                let g = c.acquire();
                assert!(poolswap::internals::is_counted(&g));
                let v = g.value;
                assert!((1..=3).contains(&v), "reader saw {v}: a reused object");
                drop(held);
            })
        };
        publish(&c, 2);
        poolswap::reclaim(); // version 1's node back in the pool, unless the reader holds it
        publish(&c, 3); // takes it from the pool again, if it is there
        reader.join().unwrap();
        drop(c);
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A reader whose slots are all held loads version 1 for a counted reference while a writer
/// retires it and reclaims it, and the thread that published it (whose depot the pass
/// returns it to) takes it out again with a getter whose magazine look came before the
/// writer's pass. The reader's increment then reads the getter's `reset_to_one`, and that
/// store alone must carry the retirement to the reader's re-load: the getter's last fence
/// (under loom a magazine operation issues one, `barrier::signal`) came before it took the
/// node from its depot. With `reset_to_one`'s store `Relaxed`, the re-load may return the
/// old pointer, and the reader reads an object that the getter resets and refills (loom
/// reports the race).
#[test]
fn counted_reader_vs_a_getter_that_takes_its_version_back() {
    bounded(2, || {
        let (pool, counts) = counting_pool();
        let other_pool = Pool::new(|| 0u8, |n| *n = 0);
        let c = Arc::new(first_version(&pool, 1));
        let reader = {
            let c = c.clone();
            let other = Container::from_value(&other_pool, 7);
            thread::spawn(move || {
                // Fill this thread's slots with guards on another container's version.
                let held: Vec<_> = (0..HAZARD_SLOTS).map(|_| other.acquire()).collect();
                let g = c.acquire();
                assert!(poolswap::internals::is_counted(&g));
                let v = g.value;
                assert!((1..=2).contains(&v), "reader saw {v}: a reused object");
                drop(held);
            })
        };
        let writer = {
            let c = c.clone();
            thread::spawn(move || {
                publish(&c, 2);
                poolswap::reclaim(); // version 1 to this thread's depot, unless read
            })
        };
        // Version 1's object, if the writer's pass returned it before this looks.
        let next = take_reset(&pool, 3);
        writer.join().unwrap();
        reader.join().unwrap();
        drop(next);
        drop(c);
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A guard is dropped on another thread, and the slot's owner then reuses the slot for a
/// new read: a collector that sees the new value must also see that the other thread's
/// reads of the old version are over (the owner's look for a free slot is `Acquire`, so
/// its next store carries the other thread's release). ThreadSanitizer found this on the
/// stress test; with that load `Relaxed`, this model fails at three preemptions.
#[test]
fn slot_reused_after_a_foreign_drop() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let owner = {
            let c = c.clone();
            thread::spawn(move || {
                let g = c.acquire();
                // A Relaxed flag, not a join: the reader's drop gives the owner no
                // happens-before edge of its own.
                let dropped = Arc::new(loom::sync::atomic::AtomicBool::new(false));
                let flag = dropped.clone();
                let reader = thread::spawn(move || {
                    let v = g.value;
                    assert!((1..=3).contains(&v), "saw {v}");
                    drop(g);
                    flag.store(true, std::sync::atomic::Ordering::Relaxed);
                });
                while !dropped.load(std::sync::atomic::Ordering::Relaxed) {
                    thread::yield_now();
                }
                // The guard's slot is free again; this read takes it (or, if the owner
                // does not see it emptied yet, the other slot).
                let again = c.acquire();
                assert!((1..=3).contains(&again.value));
                reader
            })
        };
        publish(&c, 2);
        publish(&c, 3);
        // Joined only now, for the final count: in `Fence` mode the reader's drop has no
        // barrier, and without a happens-before edge loom lets every later collection read
        // its slot's old value forever (on a real machine the store becomes visible).
        owner.join().unwrap().join().unwrap();
        drop(c);
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A reader that already holds a guard (slot 0) acquires a second one, in slot 1 of its
/// block (loom's blocks have 2), while the writer retires that version and a pass scans:
/// the scan must load slot 1, so the block's high-water mark must be raised before the
/// reader's barrier. With the raise left out, or moved after the barrier, this model reads
/// a reused object (the reset races with the read).
#[test]
fn second_slot_vs_scan() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let held = Arc::new(first_version(&pool, 9));
        let c = Arc::new(first_version(&pool, 1));
        let reader = {
            let (held, c) = (held.clone(), c.clone());
            thread::spawn(move || {
                // The reader's first read: takes slot 0, which the scan always loads.
                let first = held.acquire();
                let second = c.acquire();
                assert!(
                    !poolswap::internals::is_counted(&second),
                    "no slot for the second guard"
                );
                let v = second.value;
                assert!((1..=3).contains(&v), "reader saw {v}: a reused object");
                drop(second);
                drop(first);
            })
        };
        publish(&c, 2);
        // A pass judges version 1 while the reader may hold it in slot 1.
        poolswap::reclaim();
        // Reset lazily: a returned version 1 is reset (and refilled) when handed out here.
        publish(&c, 3);
        reader.join().unwrap();
        drop(c);
        drop(held);
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// Two writers `rcu` at once: one of them retries on the other's version, and neither
/// update is lost; the refused object goes back to the pool.
#[test]
fn concurrent_rcus_lose_no_update() {
    bounded(2, || {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let other = {
            let c = c.clone();
            thread::spawn(move || {
                c.rcu(|current, next| next.value = current.value + 1);
            })
        };
        c.rcu(|current, next| next.value = current.value + 1);
        other.join().unwrap();
        assert_eq!(c.acquire().value, 3, "an update was lost");
        drop(c);
        drop(pool);
        counts.assert_all_dropped();
    });
}

/// A background reclaimer and a writer that retires a version: the update wakes the
/// reclaimer, or the reclaimer sees the retirement before it sleeps (the handshake's two
/// `SeqCst` fences, `src/reclaimer.rs`). Under loom the reclaimer's idle wait waits for a
/// notification only, so a lost wake-up leaves it asleep while the writer looks for the
/// version in the pool for ever, which loom reports. The version comes back reset-free
/// (never while read) and every object is dropped once.
#[test]
fn background_reclaimer_vs_retire() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = first_version(&pool, 1);
        let reclaimer = poolswap::Reclaimer::spawn().expect("spawn the reclaimer");
        publish(&c, 2);
        while pool.stats().idle == 0 {
            thread::yield_now();
        }
        reclaimer.join().expect("no drop panicked");
        drop(c);
        drop(pool);
        counts.assert_all_dropped();
    });
}

// The automatic passes' trigger (src/reclaim/retired.rs, "Retire"): an update at the
// threshold (8 retired versions) passes only once the list holds twice the versions that
// the last pass left held; a pool getter that finds nothing idle does too on a long list,
// and on a short one whenever a version was retired since or looks free. A version a pass left
// must still come back at the next pass due (or an explicit one) once its guard is gone,
// never while it is held.

/// A writer's pass left its one retired version held (the list holds no more than it left
/// held); the guard is then dropped on another thread, racing with nothing, and the writer
/// gets again after joining it. The get must return that version, not build a third
/// object: on a short list a getter passes as soon as a look at the slots shows a retired
/// version no guard holds (`due_for_getter`), and the dropper's `Release` clear happens
/// before the look. Before, it waited for the list to hold twice what was left held and
/// built.
#[test]
fn a_getter_returns_not_builds_a_version_whose_last_guard_went() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let g = c.acquire();
        publish(&c, 2); // nothing idle, nothing retired: a second object; version 1 retired
        assert_eq!(poolswap::reclaim(), 0, "version 1 returned while held");
        drop_on_another_thread(g, 1).join().unwrap();
        publish(&c, 3);
        assert_eq!(
            counts.made.load(SeqCst),
            2,
            "the writer built an object while a retired version no guard holds waited"
        );
        drop(c);
        drop(pool);
        counts.assert_all_dropped_unaided();
    });
}

/// A guard held across a getter's pass makes the pass leave its version (one left held);
/// the guard is then dropped on another thread while the writer retires one more version
/// and gets again: the list holds two, twice what was left, so that get passes, racing
/// with the drop. The held version comes back at that pass or the next due one, never
/// while read, and the writer never builds a fourth object.
#[test]
fn getter_pass_due_at_twice_what_the_last_left() {
    loom::model(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        let g = c.acquire();
        publish(&c, 2); // nothing idle, nothing retired: a second object; version 1 retired
        publish(&c, 3); // a pass leaves version 1 (held); a third object; version 2 retired
        let dropper = drop_on_another_thread(g, 1);
        // Two retired, one left held: the get passes, racing with the drop; it returns
        // version 2, and version 1 if the drop came first.
        publish(&c, 4);
        dropper.join().unwrap();
        // Version 1 idle, or left again with version 3 retired since: due either way.
        publish(&c, 5);
        assert_eq!(
            counts.made.load(SeqCst),
            3,
            "the writer built an object while a released version was due back"
        );
        poolswap::reclaim();
        let stats = pool.stats();
        assert_eq!(
            stats.live - stats.idle,
            1,
            "an old version is out: {stats:?}"
        );
        drop(c);
        drop(pool);
        counts.assert_all_dropped_unaided();
    });
}

/// The writer's threshold with a version left held: a pool with idle objects (so no get
/// passes) retires 8 versions while a guard holds the first; the update at the threshold
/// passes and leaves it. The guard is dropped on another thread while the writer retires
/// 7 more; the 8th on the list (the threshold, and more than twice the one left) passes
/// again, racing with the drop. Version 1 comes back at that pass or the explicit one
/// after, never while read; no get builds an object.
#[test]
fn writer_threshold_with_a_version_left_held() {
    // Versions retired to the pool's list at which an update passes (`RECLAIM_THRESHOLD`).
    const THRESHOLD: usize = 8;
    // Sixteen updates on one thread take more branches than loom's default allows.
    let mut model = loom::model::Builder::new();
    model.max_branches = 20_000;
    model.check(|| {
        let (pool, counts) = counting_pool();
        let c = Arc::new(first_version(&pool, 1));
        pool.prefill(THRESHOLD); // the pool's idle bound (`counting_pool`)
        let g = c.acquire();
        for v in 2..=THRESHOLD + 1 {
            publish(&c, v);
        }
        // The 8th retirement passed: versions 2 to 8 idle, version 1 left on the list.
        assert_eq!(
            pool.stats().idle,
            THRESHOLD as u64 - 1,
            "{:?}",
            pool.stats()
        );
        let mut v = THRESHOLD + 2;
        for _ in 0..THRESHOLD - 2 {
            publish(&c, v);
            v += 1;
        }
        let dropper = drop_on_another_thread(g, 1);
        publish(&c, v); // the list's 8th: a pass, racing with the drop
        dropper.join().unwrap();
        assert_eq!(
            counts.made.load(SeqCst),
            THRESHOLD + 1,
            "a get built an object"
        );
        poolswap::reclaim();
        let stats = pool.stats();
        assert_eq!(
            stats.live - stats.idle,
            1,
            "an old version is out: {stats:?}"
        );
        drop(c);
        drop(pool);
        counts.assert_all_dropped_unaided();
    });
}

/// A version that holds a guard on an older one (a history's link), counting its drops.
struct Link {
    older: Option<Guard<Link>>,
    counts: Arc<Counts>,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.counts.dropped.fetch_add(1, SeqCst);
    }
}

/// A reclamation passes again while its pass dropped a version and kept another: the
/// dropped one may have held the last guard on it. Version 2 holds a guard on version 1; a
/// reader holds one on version 2 and drops it on another thread while this thread
/// reclaims (the pool keeps nothing idle: every return is a drop). One reclamation after
/// the drop returns both, whichever way the drop and the first reclamation interleave:
/// with a single pass per reclamation, the drop before the first pass's barrier left
/// version 1 for a third one.
#[test]
fn a_reclamation_passes_again_after_dropping_a_version_that_held_a_guard() {
    loom::model(|| {
        let counts = Arc::new(Counts::default());
        let pool = {
            let counts = Arc::clone(&counts);
            Pool::builder(
                move || {
                    counts.made.fetch_add(1, SeqCst);
                    Link {
                        older: None,
                        counts: Arc::clone(&counts),
                    }
                },
                |l: &mut Link| {
                    l.older = None;
                    true
                },
            )
            .max_idle(0)
            .build()
        };
        let c = Container::new(&pool, pool.get());
        let mut next = c.get_new();
        next.older = Some(c.acquire());
        c.update(next); // version 2, holding a guard on version 1 (retired)
        let g = c.acquire();
        c.update(pool.get()); // version 2 retired, held by `g`
        let reader = thread::spawn(move || drop(g));
        poolswap::reclaim();
        reader.join().unwrap();
        poolswap::reclaim();
        assert_eq!(
            counts.dropped.load(SeqCst),
            2,
            "versions 1 and 2 not both dropped one reclamation after the last guard"
        );
        drop(c);
        drop(pool);
        counts.assert_all_dropped_unaided();
    });
}
