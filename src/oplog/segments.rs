//! The op log's storage: a deque in fixed-size segments, so that it grows and shrinks a
//! segment at a time.
//!
//! While a reader holds a guard, the op log may grow to
//! [`max_ops`](super::OpLogBuilder::max_ops) operations and then shrink back. In one
//! `VecDeque`, that growth would copy the whole buffer at each doubling, and the shrink
//! would free it, each on one publish. Here each segment holds [`segment_len`] operations
//! (about [`SEGMENT_BYTES`]): growth allocates one segment at a time, and emptied segments
//! are kept for reuse, up to [`FREE_SEGMENTS`], so that an op log that grows and shrinks by
//! a few segments, as the spare's catch-up makes it (`oplog/spare.rs`), allocates nothing.
//!
//! Every segment but the first and the last is full: elements are pushed at the back and
//! popped at the front (and, for a failed batch, at the back), so the `i`th element is
//! found in O(1).

use std::collections::VecDeque;
use std::fmt;
use std::ops::{Index, Range};

/// About how many bytes of elements one segment holds.
pub(super) const SEGMENT_BYTES: usize = 32 * 1024;

/// Emptied segments kept for reuse, at most (256 KiB at [`SEGMENT_BYTES`]); more are freed,
/// one segment (a small free) at a time.
pub(super) const FREE_SEGMENTS: usize = 8;

/// Elements per segment for elements of type `T`: [`SEGMENT_BYTES`] worth, at least 16, at
/// most 4,096 (zero-sized elements included).
pub(super) const fn segment_len<T>() -> usize {
    let size = std::mem::size_of::<T>();
    let len = match SEGMENT_BYTES.checked_div(size) {
        Some(len) => len,
        None => usize::MAX,
    };
    if len < 16 {
        16
    } else if len > 4096 {
        4096
    } else {
        len
    }
}

/// A deque of `T` in segments of [`segment_len`] elements (module docs).
pub(super) struct Segments<T> {
    /// Non-empty segments, oldest first; all full but the first and the last.
    segs: VecDeque<VecDeque<T>>,
    len: usize,
    /// Empty segments with room for [`segment_len`] elements, for the next ones needed.
    free: Vec<VecDeque<T>>,
}

impl<T> Default for Segments<T> {
    fn default() -> Self {
        Segments {
            segs: VecDeque::new(),
            len: 0,
            free: Vec::new(),
        }
    }
}

impl<T> Segments<T> {
    const SEG: usize = segment_len::<T>();

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn front(&self) -> Option<&T> {
        self.segs.front().and_then(VecDeque::front)
    }

    pub(super) fn back(&self) -> Option<&T> {
        self.segs.back().and_then(VecDeque::back)
    }

    pub(super) fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        let (seg, at) = self.locate(i);
        self.segs.get(seg).and_then(|s| s.get(at))
    }

    /// The segment and the position in it of element `i` (`i < len`).
    fn locate(&self, i: usize) -> (usize, usize) {
        let first = self.segs.front().map_or(0, VecDeque::len);
        if i < first {
            (0, i)
        } else {
            let past = i - first;
            (1 + past / Self::SEG, past % Self::SEG)
        }
    }

    pub(super) fn push_back(&mut self, value: T) {
        if self.segs.back().map_or(true, |s| s.len() == Self::SEG) {
            let seg = self
                .free
                .pop()
                .unwrap_or_else(|| VecDeque::with_capacity(Self::SEG));
            self.segs.push_back(seg);
        }
        self.segs
            .back_mut()
            .expect("a segment with room was just ensured")
            .push_back(value);
        self.len += 1;
    }

    pub(super) fn pop_front(&mut self) -> Option<T> {
        // Segments are never empty: one that is holds an element.
        let seg = self.segs.front_mut()?;
        let value = seg.pop_front()?;
        if seg.is_empty() {
            let seg = self.segs.pop_front().expect("seen above");
            self.keep_for_reuse(seg);
        }
        self.len -= 1;
        Some(value)
    }

    pub(super) fn pop_back(&mut self) -> Option<T> {
        // Segments are never empty: one that is holds an element.
        let seg = self.segs.back_mut()?;
        let value = seg.pop_back()?;
        if seg.is_empty() {
            let seg = self.segs.pop_back().expect("seen above");
            self.keep_for_reuse(seg);
        }
        self.len -= 1;
        Some(value)
    }

    /// Keeps an emptied segment for reuse if there is room, else frees it.
    fn keep_for_reuse(&mut self, seg: VecDeque<T>) {
        if self.free.len() < FREE_SEGMENTS && seg.capacity() >= Self::SEG {
            self.free.push(seg);
        }
    }

    /// The elements at positions `range`, in order.
    ///
    /// # Panics
    ///
    /// If the range ends past the end or starts after it ends.
    pub(super) fn range(&self, range: Range<usize>) -> impl Iterator<Item = &T> {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "range {range:?} out of an op log of {}",
            self.len
        );
        let (seg, at) = if range.start < self.len {
            self.locate(range.start)
        } else {
            (self.segs.len(), 0)
        };
        let first = self.segs.get(seg).map(|s| s.range(at..));
        first
            .into_iter()
            .flatten()
            .chain(self.segs.range((seg + 1).min(self.segs.len())..).flatten())
            .take(range.end - range.start)
    }

    pub(super) fn iter(&self) -> impl DoubleEndedIterator<Item = &T> {
        self.segs.iter().flatten()
    }

    /// Moves the first `n` elements (at most all) out into a deque of their own: whole
    /// segments move, and the up to [`segment_len`] − 1 elements of the segment where they
    /// end are moved one by one into a segment of the new deque.
    pub(super) fn split_front(&mut self, n: usize) -> Segments<T> {
        let n = n.min(self.len);
        let mut out = Segments::default();
        while self.segs.front().is_some_and(|s| out.len + s.len() <= n) {
            let seg = self.segs.pop_front().expect("seen above");
            self.len -= seg.len();
            out.len += seg.len();
            out.segs.push_back(seg);
        }
        if out.len < n {
            // A segment for the rest, from the free ones if any.
            out.free.extend(self.free.pop());
        }
        while out.len < n {
            let value = self.pop_front().expect("n is at most the length");
            out.push_back(value);
        }
        out
    }

    /// Drops up to `budget` elements from the front of `other`, keeping its emptied
    /// segments for this deque's reuse. How many it dropped.
    pub(super) fn drop_front_of(&mut self, other: &mut Segments<T>, budget: usize) -> usize {
        let mut dropped = 0;
        while dropped < budget {
            let Some(seg) = other.segs.front_mut() else {
                break;
            };
            let n = (budget - dropped).min(seg.len());
            seg.drain(..n);
            dropped += n;
            other.len -= n;
            if seg.is_empty() {
                let seg = other.segs.pop_front().expect("seen above");
                self.keep_for_reuse(seg);
            }
        }
        dropped
    }
}

impl<T> fmt::Debug for Segments<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Segments")
            .field("len", &self.len)
            .field("segments", &self.segs.len())
            .field("free", &self.free.len())
            .finish()
    }
}

impl<T> Index<usize> for Segments<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(value) => value,
            None => panic!("index {i} out of an op log of {}", self.len),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::collections::VecDeque;

    use proptest::prelude::*;

    use super::{segment_len, Segments, FREE_SEGMENTS};

    /// What the model does to both deques.
    #[derive(Clone, Debug)]
    enum Step {
        Push(u16),
        PopFront,
        PopBack,
        Split(usize),
    }

    /// Pushes 6 times in 11, pops at the front 3, at the back 1, splits 1 (`prop_oneof!`
    /// builds on std's `Arc`, which this crate's lints keep to `crate::sync`).
    fn step() -> impl Strategy<Value = Step> {
        (0u8..11, any::<u16>(), 0usize..200).prop_map(|(kind, v, n)| match kind {
            0..=5 => Step::Push(v),
            6..=8 => Step::PopFront,
            9 => Step::PopBack,
            _ => Step::Split(n),
        })
    }

    /// Element type with 16 elements a segment (the least), so that short runs cross
    /// many segment boundaries.
    type Big = (u16, [u8; 2046]);

    fn big(v: u16) -> Big {
        (v, [0; 2046])
    }

    proptest! {
        #![proptest_config(crate::oplog::proptest_config())]

        /// `Segments` holds what a `VecDeque` given the same pushes and pops holds, at
        /// every step: length, ends, every element by index, every range; a split moves
        /// exactly the first `n` out, and dropping them from the split part leaves it
        /// empty.
        #[test]
        fn segments_behave_as_a_deque(
            steps in proptest::collection::vec(step(), 0..if cfg!(miri) { 40 } else { 300 }),
        ) {
            prop_assert_eq!(segment_len::<Big>(), 16);
            let mut seg: Segments<Big> = Segments::default();
            let mut model: VecDeque<u16> = VecDeque::new();
            for step in steps {
                match step {
                    Step::Push(v) => {
                        seg.push_back(big(v));
                        model.push_back(v);
                    }
                    Step::PopFront => {
                        prop_assert_eq!(seg.pop_front().map(|b| b.0), model.pop_front());
                    }
                    Step::PopBack => {
                        prop_assert_eq!(seg.pop_back().map(|b| b.0), model.pop_back());
                    }
                    Step::Split(n) => {
                        let mut out = seg.split_front(n);
                        let moved: Vec<u16> = model.drain(..n.min(model.len())).collect();
                        prop_assert_eq!(out.iter().map(|b| b.0).collect::<Vec<_>>(), moved);
                        let len = out.len();
                        prop_assert_eq!(seg.drop_front_of(&mut out, len + 1), len);
                        prop_assert!(out.is_empty() && out.iter().next().is_none());
                    }
                }
                prop_assert_eq!(seg.len(), model.len());
                prop_assert!(seg.free.len() <= FREE_SEGMENTS);
                prop_assert_eq!(seg.front().map(|b| b.0), model.front().copied());
                prop_assert_eq!(seg.back().map(|b| b.0), model.back().copied());
                for (i, v) in model.iter().enumerate() {
                    prop_assert_eq!(seg[i].0, *v);
                }
                prop_assert!(seg.get(model.len()).is_none());
                let len = model.len();
                for (a, b) in [(0, len), (len / 3, len), (len / 3, 2 * len / 3), (len, len)] {
                    let got: Vec<u16> = seg.range(a..b).map(|b| b.0).collect();
                    let want: Vec<u16> = model.range(a..b).copied().collect();
                    prop_assert_eq!(got, want, "range {}..{}", a, b);
                }
                let back: Vec<u16> = seg.iter().rev().map(|b| b.0).collect();
                prop_assert_eq!(back, model.iter().rev().copied().collect::<Vec<_>>());
            }
        }
    }

    /// An op log that grows and shrinks by a few segments reuses them: after the first
    /// round, pushing and popping allocates no segment; past [`FREE_SEGMENTS`] emptied
    /// ones, the rest are freed.
    #[test]
    fn emptied_segments_are_reused() {
        let per = segment_len::<Big>();
        let mut seg = Segments::default();
        for round in 0..4 {
            for i in 0..4 * per {
                seg.push_back(big(i as u16));
            }
            while seg.pop_front().is_some() {}
            // All four segments came back.
            assert_eq!(seg.free.len(), 4, "round {round}");
        }
        // The next four segments' worth takes them all.
        for i in 0..4 * per {
            seg.push_back(big(i as u16));
        }
        assert!(seg.free.is_empty());
        // Past the bound, emptied segments are freed.
        for i in 0..(FREE_SEGMENTS + 4) * per {
            seg.push_back(big(i as u16));
        }
        while seg.pop_front().is_some() {}
        assert_eq!(seg.free.len(), FREE_SEGMENTS);
    }
}
