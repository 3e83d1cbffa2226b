//! The pooled node: one object, its reference count and its bookkeeping, in memory that
//! stays valid (type-stable) while stale readers may still reach it.
//!
//! A node is made once, when the factory builds its object (or [`Pool::adopt`] takes one
//! in), and moves between owners by pointer: a return moves the node, never the object, so
//! a steady state allocates nothing.
//!
//! # Type-stable memory
//!
//! Once a node has been a container's version, a reader may touch its count through a
//! stale pointer (see `container/raw.rs`). While the pool has a handle (so a container may
//! exist), such a node's memory is never freed: when its object is discarded, the empty
//! node is kept to house the factory's next object (the technique Linux calls
//! `SLAB_TYPESAFE_BY_RCU`). Nodes never published are freed outright, and so is every node
//! once the pool's last handle is gone, since no reader can exist without one.
//!
//! [`Pool::adopt`]: crate::Pool::adopt

use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use super::depot::NodePtr;
use super::local::Local;
use crate::refcount::RefCount;
use crate::sync::UnsafeCell;

/// One pooled object with its reference count.
///
/// `K` is what keeps the pool alive while the node is a container version (the pool's
/// shared state); the node never looks inside it.
///
/// # Lifecycle
///
/// | state | where the node is | `refs` | `ever_published` | `home` | `keepalive` | object |
/// |---|---|---|---|---|---|---|
/// | idle, never published | a magazine or depot | 1 | false | null | `None` | present |
/// | idle, once published | a magazine or depot | 0 | true | last publisher | `None` | present |
/// | checked out | a `Pooled` | 1, plus stale readers briefly if published | either | – | `None` | present |
/// | current version | `Container::current` | 1 + guards | true | publisher | `Some` | present |
/// | retired version | held by guards only | guards >= 1 | true | publisher | `Some` | present |
/// | empty | the pool's empty list | 0 | true | – | `None` | dropped |
///
/// Every field but `refs` is written only by the node's exclusive owner: whoever took it
/// off a free list, or dropped its count to zero.
pub(crate) struct Node<T, K> {
    /// The count and the `ever_published` flag, on a padded pair of cache lines of their
    /// own (see [`Head`]).
    head: Head,
    /// The `Local` of the thread that last published the node (null if none): the depot a
    /// retired version goes back to.
    home: UnsafeCell<*const Local<Node<T, K>>>,
    /// Written by the publisher before its Release swap; taken by whoever drops the last
    /// reference, after the count's Acquire load.
    keepalive: UnsafeCell<Option<K>>,
    /// Initialised unless the node is empty.
    object: UnsafeCell<MaybeUninit<T>>,
}

/// The head of a node: its count on the first cache line, its `ever_published` flag on the
/// next, 128 bytes in all (a pair of lines, which x86-64's adjacent-line prefetcher fetches
/// together, as `crossbeam_utils::CachePadded` pads for; its own layout, so that a stale
/// reader's pointer reaches the count without borrowing the head).
///
/// The count is written on every check-out of a node once published; the flag is read on
/// every check-out and every drop of a `Pooled`, and written only when the node is first
/// published. Apart, a guard dropped on another thread than the one that got it reads a
/// line that stays cached on both CPUs: for a node never published, the drop moves no line
/// of the node to the dropping thread (no check-out writes its count, which stays 1 from
/// its making). Beside the count, or beside the object (where the reset writes), the flag
/// would move one line per handoff (`pool-pipeline-spin` in `benches/pool.rs` exercises
/// that path).
#[repr(C, align(128))]
struct Head {
    /// See the table on [`Node`]. Readers holding a stale pointer may try to increment it;
    /// it never goes up from 0.
    refs: RefCount,
    /// Set before the node is first published in a container, never cleared while the pool
    /// has a handle: from then on readers may touch `refs` through stale pointers. Its
    /// alignment puts it on the line after the count's.
    ever_published: NextLine<UnsafeCell<bool>>,
}

/// A value aligned to a 64-byte cache line: in [`Head`], the start of its second line.
#[repr(align(64))]
struct NextLine<T>(T);

// SAFETY: a node owns its `T` (so `T: Send` is needed to move it) and a `K`, which is an
// `Arc` of `Sync` pool state for every `T: Send`; its raw `home` pointer leads to a `Local`,
// which is `Sync` for `T: Send`. Shared access goes through `refs` (atomic) only, except
// `&T` reads, which `Guard`'s own bounds cover.
unsafe impl<T: Send, K: Send> Send for Node<T, K> {}

impl<T, K> Node<T, K> {
    /// A new node holding `object` (one allocation).
    pub(super) fn alloc(object: T) -> NodePtr<Self> {
        let node = Box::new(Node {
            head: Head {
                refs: RefCount::one(),
                ever_published: NextLine(UnsafeCell::new(false)),
            },
            home: UnsafeCell::new(ptr::null()),
            keepalive: UnsafeCell::new(None),
            object: UnsafeCell::new(MaybeUninit::new(object)),
        });
        NodePtr(NonNull::from(Box::leak(node)))
    }

    /// The count of a node reached through a pointer that may be stale.
    ///
    /// # Safety
    ///
    /// `node` points to a node whose memory is valid for `'a` (type-stable: its pool has a
    /// handle for `'a`).
    pub(super) unsafe fn refs_at<'a>(node: *const Self) -> &'a RefCount {
        // SAFETY: per the caller; only the count is borrowed, never the flag or the object.
        unsafe { &*ptr::addr_of!((*node).head.refs) }
    }

    /// The count.
    #[inline(always)]
    pub(super) fn refs(&self) -> &RefCount {
        &self.head.refs
    }

    /// Whether the node was ever a container version.
    ///
    /// # Safety
    ///
    /// The caller owns the node exclusively (a `Pooled`, a free list, or a zero count).
    pub(super) unsafe fn ever_published(&self) -> bool {
        // SAFETY: owner-written and owner-read, per the caller.
        self.head.ever_published.0.with(|p| unsafe { *p })
    }

    /// Marks the node published by the thread whose `Local` is `home`, holding `keepalive`.
    ///
    /// # Safety
    ///
    /// The caller owns the node exclusively and publishes it afterwards with a Release
    /// store; `keepalive` is `None` now (the node is checked out).
    pub(super) unsafe fn publish(&self, home: *const Local<Self>, keepalive: K) {
        // SAFETY: per the caller (stale readers touch only `refs`).
        unsafe {
            self.head.ever_published.0.with_mut(|p| *p = true);
            self.home.with_mut(|h| *h = home);
            self.keepalive.with_mut(|k| {
                debug_assert!((*k).is_none(), "a checked-out node held its pool");
                *k = Some(keepalive);
            });
        }
    }

    /// The `Local` of the thread that last published the node (null if none).
    ///
    /// # Safety
    ///
    /// As for [`ever_published`](Self::ever_published).
    pub(super) unsafe fn home(&self) -> *const Local<Self> {
        // SAFETY: owner-read, per the caller.
        self.home.with(|h| unsafe { *h })
    }

    /// Takes the keepalive of a version whose last reference is gone.
    ///
    /// # Safety
    ///
    /// The caller dropped the count to zero (so owns the node, and sees the publisher's
    /// write).
    pub(super) unsafe fn take_keepalive(&self) -> Option<K> {
        // SAFETY: per the caller.
        self.keepalive.with_mut(|k| unsafe { (*k).take() })
    }

    /// The object, shared.
    ///
    /// # Safety
    ///
    /// The caller holds a reference on the node for `'a` (so the object is initialised),
    /// and nobody mutates the object meanwhile (`Pooled` is exclusive; container versions
    /// are only read).
    pub(super) unsafe fn object<'a>(node: NonNull<Self>) -> &'a T {
        // SAFETY: per the caller.
        unsafe { node.as_ref() }
            .object
            .with(|o| unsafe { (*o).assume_init_ref() })
    }

    /// The object, exclusive.
    ///
    /// # Safety
    ///
    /// The caller owns the node exclusively for `'a` and its object is initialised; no
    /// other reference to the object exists meanwhile.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn object_mut<'a>(node: NonNull<Self>) -> &'a mut T {
        // SAFETY: per the caller.
        unsafe { node.as_ref() }
            .object
            .with_mut(|o| unsafe { (*o).assume_init_mut() })
    }

    /// Puts an object into an empty node.
    ///
    /// # Safety
    ///
    /// The caller owns the node exclusively and it is empty.
    pub(super) unsafe fn fill(&self, object: T) {
        // SAFETY: per the caller.
        self.object.with_mut(|o| unsafe { (*o).write(object) });
    }

    /// Drops the object, leaving the node empty.
    ///
    /// # Safety
    ///
    /// The caller owns the node exclusively and its object is initialised; afterwards it is
    /// not, even if the object's destructor panics.
    pub(super) unsafe fn drop_object(&self) {
        // SAFETY: per the caller.
        self.object.with_mut(|o| unsafe { (*o).assume_init_drop() });
    }

    /// Drops the node's object and frees the node, even if the destructor panics.
    ///
    /// # Safety
    ///
    /// The caller owns `node` exclusively, its object is initialised, and no stale reader
    /// can reach it (it was never published, or its pool has no handle left).
    pub(super) unsafe fn free(node: NodePtr<Self>) {
        // SAFETY: made by `Box::leak` in `alloc`; owned per the caller. If the destructor
        // below unwinds, the box still frees the memory (`MaybeUninit` drops nothing).
        let node = unsafe { Box::from_raw(node.0.as_ptr()) };
        // SAFETY: initialised per the caller; dropped once.
        unsafe { node.drop_object() };
    }

    /// Frees an empty node.
    ///
    /// # Safety
    ///
    /// As for [`free`](Self::free), but the node is empty.
    pub(super) unsafe fn free_empty(node: NodePtr<Self>) {
        // SAFETY: per the caller; `MaybeUninit` drops nothing.
        drop(unsafe { Box::from_raw(node.0.as_ptr()) });
    }
}

/// Frees every node of `nodes` (objects included), as [`Node::free`]. If one object's
/// destructor panics, the rest are still dropped and the panic goes on afterwards, as a
/// `Vec`'s drop does (a second panic aborts).
///
/// # Safety
///
/// As for [`Node::free`], for each node.
pub(super) unsafe fn free_all<T, K>(nodes: Vec<NodePtr<Node<T, K>>>) {
    /// Frees what is left of the iterator, on the way out of a panic too.
    struct Rest<T, K>(std::vec::IntoIter<NodePtr<Node<T, K>>>);
    impl<T, K> Drop for Rest<T, K> {
        fn drop(&mut self) {
            for node in &mut self.0 {
                // SAFETY: per `free_all`'s caller.
                unsafe { Node::free(node) };
            }
        }
    }
    let mut rest = Rest(nodes.into_iter());
    for node in &mut rest.0 {
        // SAFETY: per the caller.
        unsafe { Node::free(node) };
    }
}

#[cfg(all(test, not(loom), target_arch = "x86_64"))]
mod tests {
    use std::mem::size_of;

    type Node<T> = super::Node<T, crate::sync::Arc<()>>;

    /// The node size the crate docs and README state: a 128-byte head (the padded count and
    /// the `ever_published` flag), 16 bytes of bookkeeping (`home`, `keepalive`), the
    /// object, rounded up to 128.
    #[test]
    fn node_size_is_what_the_docs_say() {
        let stated = |object: usize| (128 + 16 + object).div_ceil(128) * 128;
        assert_eq!(size_of::<Node<u64>>(), stated(8));
        assert_eq!(size_of::<Node<[u8; 100]>>(), stated(100));
        assert_eq!(size_of::<Node<[u8; 112]>>(), stated(112));
        assert_eq!(
            size_of::<Node<std::collections::HashMap<u64, u64>>>(),
            256,
            "the docs say 256 for a HashMap"
        );
    }

    /// The count, the `ever_published` flag and the object each sit on a cache line of
    /// their own: a guard dropped on another thread reads only the flag's line, which
    /// nobody writes while the node stays unpublished (see `Head`).
    #[test]
    fn the_count_the_flag_and_the_object_are_on_separate_lines() {
        let node = Node::<u64>::alloc(7);
        // SAFETY: just made, owned here.
        let n = unsafe { node.0.as_ref() };
        let base = node.0.as_ptr() as usize;
        let count = std::ptr::from_ref(n.refs()) as usize - base;
        let flag = n.head.ever_published.0.with(|p| p as usize) - base;
        let object = n.object.with(|p| p as usize) - base;
        let line = |offset: usize| offset / 64;
        assert_eq!(line(count), 0, "the count leads the node");
        assert_eq!(line(flag), 1, "the flag is on the count's pair, next line");
        assert!(line(object) >= 2, "the object shares a line of the head");
        // SAFETY: owned, initialised, never published.
        unsafe { super::Node::free(node) };
    }
}
