//! `--edit-lines`: changes to the file, made by the example itself, that readers can check.
//!
//! The reloader reads a private copy of the file (in the temporary directory), and before
//! each reload replaces it (written next to it, then renamed over it) with *edit* `e` of
//! the original: `--edit-lines` keys of the original, evenly spaced from a start that
//! depends on `e`, are changed, the others are as in the original. Of the edited keys, the
//! even-numbered ones have their line commented out (the key disappears) and the
//! odd-numbered ones get a mark, `@` and `e` in 8 digits, as their first value. Edit `e`
//! undoes edit `e - 1`, so from one edit to the next some keys disappear, some come back,
//! and some change their values, while the file keeps its size and its number of keys and
//! values (what keeps the reloader's buffers at their sizes).
//!
//! Only keys written on one line are edited: commenting that line out removes the key.

use std::fmt::Write as _;
use std::io;

use super::{answer_matches, load, new_version, Floors, Table, Version, XorShift};

/// Sentinel of [`Reference::position`]: the key is not editable.
const NOT_EDITABLE: u32 = u32::MAX;

/// The file as it was at the start, parsed, and the keys edits change.
pub(crate) struct Reference {
    original: Version,
    /// The keys (indices into the original's `keys`) written on one line only.
    editable: Vec<u32>,
    /// `position[key]`: the key's index in `editable`, or [`NOT_EDITABLE`].
    position: Vec<u32>,
    /// Keys per edit, at most `editable.len()`.
    per_edit: usize,
    /// `editable.len() / per_edit`: the distance between two keys of an edit.
    spacing: usize,
}

/// What an edit does to one of its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edit {
    /// The key's line is commented out.
    Removed,
    /// The key's first value is the edit's mark.
    Marked,
}

impl Reference {
    /// Loads the file at `path` as it is now, for edits of `per_edit` keys each (0: none;
    /// otherwise at least 2, so that consecutive edits always differ).
    pub(crate) fn load(path: &str, per_edit: usize, floors: &mut Floors) -> io::Result<Reference> {
        let mut original = new_version();
        load(path, &mut original, floors)?;
        Ok(Reference::new(original, per_edit))
    }

    /// The reference for `original`, a parsed version.
    pub(crate) fn new(original: Version, per_edit: usize) -> Reference {
        let table: &Table = &original;
        let mut lines_of = std::collections::HashMap::<&str, u32>::new();
        for line in table.text.lines() {
            if let Some(key) = super::uncommented(line).split_whitespace().next() {
                *lines_of.entry(key).or_default() += 1;
            }
        }
        let mut position = vec![NOT_EDITABLE; table.keys.len()];
        let mut editable = Vec::new();
        for (i, &(start, end)) in table.keys.iter().enumerate() {
            if lines_of[&table.text[start..end]] == 1 {
                position[i] = editable.len() as u32;
                editable.push(i as u32);
            }
        }
        // At least 2, or none (see `Args::parse`).
        let per_edit = Some(per_edit.min(editable.len()))
            .filter(|&n| n >= 2)
            .unwrap_or(0);
        let spacing = editable.len().checked_div(per_edit).unwrap_or(0);
        Reference {
            original,
            editable,
            position,
            per_edit,
            spacing,
        }
    }

    /// The original file, parsed.
    pub(crate) fn original(&self) -> &Table {
        &self.original
    }

    /// Keys each edit changes (0: no edits).
    pub(crate) fn per_edit(&self) -> usize {
        self.per_edit
    }

    /// Where edit `e`'s keys start in `editable`.
    fn base(&self, e: u64) -> usize {
        XorShift::new(e).below(self.editable.len())
    }

    /// Edit `e`'s key number `j` (`j < per_edit`): its index in the original's `keys`.
    pub(crate) fn edited(&self, e: u64, j: usize) -> usize {
        let at = (self.base(e) + j * self.spacing) % self.editable.len();
        self.editable[at] as usize
    }

    /// What edit `e` (0: the original) does to key `i`, if anything.
    pub(crate) fn edit_of(&self, i: usize, e: u64) -> Option<Edit> {
        let p = *self.position.get(i)? as usize;
        if e == 0 || self.per_edit == 0 || p == NOT_EDITABLE as usize {
            return None;
        }
        let n = self.editable.len();
        let d = (p + n - self.base(e)) % n;
        let j = d / self.spacing;
        (d % self.spacing == 0 && j < self.per_edit).then_some(if j % 2 == 0 {
            Edit::Removed
        } else {
            Edit::Marked
        })
    }

    /// Whether `answer` is what edit `e` of the file gives for key `i`.
    pub(crate) fn answer_ok(&self, i: usize, e: u64, answer: Option<&Vec<String>>) -> bool {
        let t = self.original();
        let (_, key_end) = t.keys[i];
        // A key on one line has exactly that line's values; a key on several lines has the
        // first line's values first (`answer_matches`), and is never edited.
        let single = self.position[i] != NOT_EDITABLE;
        let original = |values: &[String]| {
            answer_matches(&t.text, key_end, values)
                && (!single || values.len() == first_line_values(&t.text, key_end))
        };
        match (self.edit_of(i, e), answer) {
            (Some(Edit::Removed), answer) => answer.is_none(),
            (Some(Edit::Marked), Some(values)) => {
                values.first().is_some_and(|m| is_mark(m, e)) && original(&values[1..])
            }
            (None, Some(values)) => original(values),
            (_, None) => false,
        }
    }

    /// Writes edit `e` of the original into `out` (cleared first); `chosen` is scratch.
    fn write_edit(&self, e: u64, out: &mut String, chosen: &mut Vec<(u32, Edit)>) {
        let t = self.original();
        chosen.clear();
        for j in 0..self.per_edit {
            let i = self.edited(e, j);
            let edit = if j % 2 == 0 {
                Edit::Removed
            } else {
                Edit::Marked
            };
            chosen.push((i as u32, edit));
        }
        // Keys are numbered in file order.
        chosen.sort_unstable_by_key(|&(i, _)| i);
        out.clear();
        let mut copied = 0;
        for &(i, edit) in chosen.iter() {
            let (start, end) = t.keys[i as usize];
            match edit {
                Edit::Removed => {
                    let line_start = t.text[..start].rfind('\n').map_or(0, |at| at + 1);
                    out.push_str(&t.text[copied..line_start]);
                    out.push('#');
                    copied = line_start;
                }
                Edit::Marked => {
                    out.push_str(&t.text[copied..end]);
                    // Fixed width: the file keeps its size from one edit to the next.
                    let _ = write!(out, " @{e:08}");
                    copied = end;
                }
            }
        }
        out.push_str(&t.text[copied..]);
    }
}

/// How many values the line of the key that ends at byte `key_end` of `text` gives it.
fn first_line_values(text: &str, key_end: usize) -> usize {
    let line = text[key_end..].split('\n').next().unwrap_or("");
    super::uncommented(line).split_whitespace().count()
}

/// Whether `value` is edit `e`'s mark.
fn is_mark(value: &str, e: u64) -> bool {
    value.strip_prefix('@').and_then(|n| n.parse::<u64>().ok()) == Some(e)
}

/// Writes the edits into the private copy of the file that the reloader reads.
pub(crate) struct Editor<'r> {
    reference: &'r Reference,
    /// The copy, and the file written next to it and then renamed over it.
    path: String,
    next: String,
    /// Scratch: the text of the edit being written, and its keys.
    out: String,
    chosen: Vec<(u32, Edit)>,
}

impl<'r> Editor<'r> {
    /// Writes the original text (edit 0) to a new file in the temporary directory.
    pub(crate) fn new(reference: &'r Reference) -> io::Result<Editor<'r>> {
        let dir = std::env::temp_dir();
        let name = format!("poolswap-hot_reload-{}-edited", std::process::id());
        let path = dir.join(&name);
        let next = dir.join(name + ".next");
        let (Some(path), Some(next)) = (path.to_str(), next.to_str()) else {
            return Err(io::Error::other(
                "the temporary directory's path is not UTF-8",
            ));
        };
        let editor = Editor {
            reference,
            path: path.to_owned(),
            next: next.to_owned(),
            out: String::with_capacity(reference.original().text.len() * 2),
            chosen: Vec::with_capacity(reference.per_edit()),
        };
        std::fs::write(&editor.path, &reference.original().text)?;
        Ok(editor)
    }

    /// The file the reloader reads.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// Replaces the file with edit `e`: written next to it, then renamed over it, as
    /// editors do. Allocates nothing once its buffer has room for an edit.
    pub(crate) fn write(&mut self, e: u64) -> io::Result<()> {
        self.reference
            .write_edit(e, &mut self.out, &mut self.chosen);
        std::fs::write(&self.next, &self.out)?;
        std::fs::rename(&self.next, &self.path)
    }
}

impl Drop for Editor<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(&self.next);
    }
}

/// Parses `text` into a fresh version (for the tests).
#[cfg(test)]
pub(crate) fn parsed(text: &str) -> Version {
    let mut v = new_version();
    let (table, lists) = poolswap::Recycled::parts_mut(&mut v);
    table.text.push_str(text);
    super::parse(table, lists, &mut Floors::default());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small file: single-line keys, a key on two lines, comments and values.
    const TEXT: &str = "a 1\nb\nc 2 3 # c\nd\ne\nd 4\nf\ng\nh 5\n# comment\ni\nj\n";

    #[test]
    fn an_edit_changes_its_keys_only_and_readers_agree() {
        let reference = Reference::new(parsed(TEXT), 4);
        let t = reference.original();
        let d = t
            .keys
            .iter()
            .position(|&(s, e)| &t.text[s..e] == "d")
            .unwrap();
        assert_eq!(reference.position[d], NOT_EDITABLE, "d is on two lines");
        let (mut out, mut chosen) = (String::new(), Vec::new());
        for e in 1..50 {
            reference.write_edit(e, &mut out, &mut chosen);
            let edited = parsed(&out);
            let mut changed = 0;
            for i in 0..t.keys.len() {
                let (s, end) = t.keys[i];
                let answer = edited.map.get(&t.text[s..end]);
                assert!(
                    reference.answer_ok(i, e, answer),
                    "edit {e}, key {i}:\n{out}"
                );
                changed += usize::from(reference.edit_of(i, e).is_some());
            }
            assert_eq!(changed, 4, "edit {e}: {out}");
            // Two lines commented out (`#`), two marked (` @` and 8 digits).
            assert_eq!(out.len(), TEXT.len() + 2 + 2 * 10, "a fixed size");
            assert!((0..4).all(|j| reference.edit_of(reference.edited(e, j), e).is_some()));
        }
    }

    #[test]
    fn a_wrong_answer_is_caught() {
        let reference = Reference::new(parsed(TEXT), 2);
        let (mut out, mut chosen) = (String::new(), Vec::new());
        reference.write_edit(7, &mut out, &mut chosen);
        let edit7 = parsed(&out);
        let removed = reference.edited(7, 0);
        let marked = reference.edited(7, 1);
        let t = reference.original();
        let key = |i: usize| &t.text[t.keys[i].0..t.keys[i].1];
        // Edit 7's answers are wrong for edit 8 and for the original.
        assert!(reference.answer_ok(marked, 7, edit7.map.get(key(marked))));
        assert!(!reference.answer_ok(marked, 8, edit7.map.get(key(marked))));
        assert!(!reference.answer_ok(marked, 0, edit7.map.get(key(marked))));
        assert!(!reference.answer_ok(removed, 0, edit7.map.get(key(removed))));
        assert!(is_mark("@00000007", 7) && !is_mark("@8", 7) && !is_mark("7", 7));
    }
}
