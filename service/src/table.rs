//! The routing table's file format, its two parsers (into recycled buffers, and into fresh
//! ones) and the checks that turn a bad file into an error instead of a table.
//!
//! The format is `hot_reload`'s (examples/hot_reload.rs): on each line the first
//! whitespace-separated token is a key and the others its values; `#` starts a comment;
//! blank lines are skipped; a key on several lines gets the values of all of them, in file
//! order. The recycling parser is that example's too, with its capacity floors (see
//! "Buffer sizes" there): at steady state a reload into a recycled version allocates
//! nothing.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{self, Read as _};
use std::str::SplitWhitespace;

use poolswap::recycle::FreeLists;
use poolswap::Recycled;

/// Key → values: what every backend serves.
pub type Map = HashMap<String, Vec<String>>;

/// The most capacity, in bytes, a string taken from the free lists is given up front.
const MAX_TOKEN_FLOOR: usize = 256;

/// The most capacity, in values, a value list taken from the free lists is given up front.
const MAX_VALUES_FLOOR: usize = 16;

/// A spare buffer that would keep more than this many bytes is freed instead.
const MAX_SPARE_BYTES: usize = 64 << 10;

/// One version of the table in recycled buffers: the map and the text it was parsed from.
#[derive(Default, Debug)]
pub struct Table {
    /// Key → values.
    pub map: Map,
    /// The file's text, read straight into this buffer (kept with its capacity).
    pub text: String,
}
poolswap::impl_recycle!(Table { map, text });

/// The pooled value of the `poolswap` backend (and the op log's scratch parses).
pub type Version = Recycled<Table>;

/// A new, empty version whose free lists never renew buffers (the floors fix their sizes)
/// and keep none over [`MAX_SPARE_BYTES`].
pub fn new_version() -> Version {
    let lists = FreeLists::new()
        .renew_after(None)
        .max_retained_bytes(MAX_SPARE_BYTES);
    Recycled::with_free_lists(Table::default(), lists)
}

/// Capacity floors for the buffers a recycling parse takes from the free lists:
/// high-water marks, kept by the reloader across reloads.
#[derive(Clone, Copy, Debug, Default)]
pub struct Floors {
    token: usize,
    values: usize,
}

/// Why a reload kept the last good table.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be opened or read (missing, unreadable).
    Io(io::Error),
    /// The file is not UTF-8.
    NotUtf8,
    /// The file does not end with a newline: it was cut mid-line (or is being written).
    Truncated,
    /// Every line is blank or a comment.
    NoEntries,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(e) => write!(f, "{e}"),
            LoadError::NotUtf8 => f.write_str("not UTF-8"),
            LoadError::Truncated => f.write_str("truncated mid-line (no final newline)"),
            LoadError::NoEntries => f.write_str("no entries"),
        }
    }
}

impl PartialEq for LoadError {
    /// Errors of the same kind are equal (an I/O error by its kind): the reloader logs a
    /// failure once, not again while the file stays bad the same way.
    fn eq(&self, other: &LoadError) -> bool {
        match (self, other) {
            (LoadError::Io(a), LoadError::Io(b)) => a.kind() == b.kind(),
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }
}

/// Reads the file at `path` into `text` (cleared first) and checks it: UTF-8, ending with a
/// newline (or empty). Opens the file by its path each time, so a file replaced by a rename
/// is seen; reads into `text`'s capacity, allocating nothing once it is large enough.
pub fn read_text(path: &str, text: &mut String) -> Result<(), LoadError> {
    text.clear();
    let mut file = File::open(path).map_err(LoadError::Io)?;
    match file.read_to_string(text) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::InvalidData => return Err(LoadError::NotUtf8),
        Err(e) => return Err(LoadError::Io(e)),
    }
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(LoadError::Truncated);
    }
    Ok(())
}

/// The entries of `text`, in file order: each line's key and its values' tokens.
pub fn entries(text: &str) -> impl Iterator<Item = (&str, SplitWhitespace<'_>)> {
    text.lines().filter_map(line_entry)
}

/// The key and value tokens of one line, or `None` for a blank or comment line.
fn line_entry(line: &str) -> Option<(&str, SplitWhitespace<'_>)> {
    let mut tokens = line.split('#').next().unwrap_or("").split_whitespace();
    let key = tokens.next()?;
    Some((key, tokens))
}

/// The file at `path` parsed into fresh buffers: a new map per reload, as a user of
/// `ArcSwap<HashMap<..>>` or `RwLock<Arc<HashMap<..>>>` writes it.
pub fn load_fresh(path: &str) -> Result<Map, LoadError> {
    let mut text = String::new();
    read_text(path, &mut text)?;
    let mut map = Map::new();
    for (key, tokens) in entries(&text) {
        map.entry(key.to_owned())
            .or_default()
            .extend(tokens.map(str::to_owned));
    }
    if map.is_empty() {
        return Err(LoadError::NoEntries);
    }
    Ok(map)
}

/// Reads and parses the file at `path` into `version` (cleared, as the pool hands it out),
/// taking every buffer from its free lists. Allocates nothing at steady state (the same
/// version's second parse of a file no longer than before).
pub fn load_recycled(
    path: &str,
    version: &mut Version,
    floors: &mut Floors,
) -> Result<(), LoadError> {
    let (table, lists) = Recycled::parts_mut(version);
    read_text(path, &mut table.text)?;
    let Table { map, text } = table;
    for (key, tokens) in entries(text) {
        if let Some(list) = map.get_mut(key) {
            push_values(list, tokens, lists, floors);
            continue;
        }
        let mut list = Vec::new();
        push_values(&mut list, tokens, lists, floors);
        map.insert(owned(lists, key, &mut floors.token), list);
    }
    if lists.stats().spare > 0 {
        lists.trim(); // the file shrank: free what this parse did not need
    }
    if map.is_empty() {
        return Err(LoadError::NoEntries);
    }
    Ok(())
}

/// Copies `token` into a string taken from `lists`, with at least the capacity of the
/// longest token seen so far (`floor`, which it raises).
fn owned(lists: &mut FreeLists, token: &str, floor: &mut usize) -> String {
    *floor = (*floor).max(token.len().min(MAX_TOKEN_FLOOR));
    let mut s: String = lists.take();
    s.reserve_exact((*floor).max(token.len()));
    s.push_str(token);
    s
}

/// Appends `tokens` to `list`, taking the list's buffer from `lists` for its first value.
fn push_values<'t>(
    list: &mut Vec<String>,
    tokens: impl Iterator<Item = &'t str>,
    lists: &mut FreeLists,
    floors: &mut Floors,
) {
    for token in tokens {
        if list.capacity() == 0 {
            *list = lists.take();
            list.reserve_exact(floors.values);
        }
        list.push(owned(lists, token, &mut floors.token));
    }
    floors.values = floors.values.max(list.len().min(MAX_VALUES_FLOOR));
}

/// A change to the op log backend's map.
pub type Op = poolswap::oplog::MapOp<String, Vec<String>>;

/// Calls `op` with operations that turn `old` into `new` (two parses), and returns how
/// many: an insert (which overwrites) per entry that changed or appeared, a removal per
/// key that went.
///
/// When the texts have as many lines, only the keys on the lines that differ can have
/// changed: one pass over the texts and two lookups per key on a changed line. Otherwise
/// every key of both maps is looked up.
pub fn diff(old: &Table, new: &Table, mut op: impl FnMut(Op)) -> usize {
    if old.text == new.text {
        return 0;
    }
    let mut n = 0;
    let mut emit = |key: &str| match (old.map.get(key), new.map.get(key)) {
        (before, Some(now)) if before != Some(now) => {
            op(Op::Insert(key.to_owned(), now.clone()));
            n += 1;
        }
        (Some(_), None) => {
            op(Op::Remove(key.to_owned()));
            n += 1;
        }
        _ => {}
    };
    if old.text.lines().count() == new.text.lines().count() {
        for (a, b) in old.text.lines().zip(new.text.lines()) {
            if a == b {
                continue;
            }
            let (ka, kb) = (line_entry(a).map(|e| e.0), line_entry(b).map(|e| e.0));
            if let Some(k) = ka {
                emit(k);
            }
            if let Some(k) = kb.filter(|&k| Some(k) != ka) {
                emit(k);
            }
        }
    } else {
        for key in new
            .map
            .keys()
            .chain(old.map.keys().filter(|k| !new.map.contains_key(*k)))
        {
            emit(key);
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file(name: &str, bytes: &[u8]) -> String {
        let dir =
            std::env::temp_dir().join(format!("poolswap-service-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    }

    #[test]
    fn parses_keys_values_and_comments() {
        let p = temp_file("ok", b"a 1 2 # c\n\n# only a comment\nb\na 3\n");
        let map = load_fresh(&p).unwrap();
        assert_eq!(map["a"], ["1", "2", "3"]);
        assert!(map["b"].is_empty());
        assert_eq!(map.len(), 2);
        let mut v = new_version();
        load_recycled(&p, &mut v, &mut Floors::default()).unwrap();
        assert_eq!(v.map, map);
    }

    #[test]
    fn bad_files_are_errors() {
        let missing = temp_file("gone", b"a\n");
        std::fs::remove_file(&missing).unwrap();
        let truncated = temp_file("truncated", b"a 1\nb 2");
        let not_utf8 = temp_file("latin1", b"caf\xe9 1\n");
        let empty = temp_file("empty", b"# nothing\n");
        let is_io = |e| matches!(e, LoadError::Io(ref e) if e.kind() == io::ErrorKind::NotFound);
        assert!(is_io(load_fresh(&missing).unwrap_err()));
        assert_eq!(load_fresh(&truncated).unwrap_err(), LoadError::Truncated);
        assert_eq!(load_fresh(&not_utf8).unwrap_err(), LoadError::NotUtf8);
        assert_eq!(load_fresh(&empty).unwrap_err(), LoadError::NoEntries);
        let mut v = new_version();
        let f = &mut Floors::default();
        assert!(is_io(load_recycled(&missing, &mut v, f).unwrap_err()));
        v.clear();
        assert_eq!(
            load_recycled(&truncated, &mut v, f).unwrap_err(),
            LoadError::Truncated
        );
        v.clear();
        assert_eq!(
            load_recycled(&not_utf8, &mut v, f).unwrap_err(),
            LoadError::NotUtf8
        );
    }

    fn parsed(text: &str) -> Table {
        Table {
            map: {
                let mut m = Map::new();
                for (k, t) in entries(text) {
                    m.entry(k.to_owned())
                        .or_default()
                        .extend(t.map(str::to_owned));
                }
                m
            },
            text: text.to_owned(),
        }
    }

    fn applied(old: &Table, new: &Table) -> (Map, usize) {
        let mut map = old.map.clone();
        let n = diff(old, new, |op| match op {
            Op::Insert(k, v) => {
                map.insert(k, v);
            }
            Op::Remove(k) => {
                map.remove(&k);
            }
            Op::Clear => map.clear(),
        });
        (map, n)
    }

    #[test]
    fn diff_turns_old_into_new() {
        let old = parsed("a 1\nb 2\nc 3\nd 4\n");
        // In place: one value changed, one line commented out, one key renamed.
        let new = parsed("a 1\nb 9\n# c 3\ne 4\n");
        let (map, n) = applied(&old, &new);
        assert_eq!(map, new.map);
        assert_eq!(n, 4); // b, c, d, e
                          // Lines added: the whole-map comparison.
        let longer = parsed("a 1\nb 2\nc 3\nd 4\nf 5\n");
        let (map, n) = applied(&old, &longer);
        assert_eq!((map, n), (longer.map.clone(), 1));
        assert_eq!(applied(&old, &old).1, 0);
    }
}
