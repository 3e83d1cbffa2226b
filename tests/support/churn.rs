//! The workload of the zero-allocation tests of the op log (`tests/oplog_alloc.rs`,
//! `tests/oplog_shared.rs`), as in `benches/oplog.rs`: batches of six overwrites of stable
//! keys and two pairs of a remove of the oldest churning key and an insert of a new one,
//! so that the map's size stays put and every value fits the buffers of the one it
//! replaces.

/// Stable keys (overwritten) below this; churning keys (removed, inserted) from here up.
/// Fewer under Miri, where building the map's strings dominates.
pub const STABLE: usize = if cfg!(miri) { 50 } else { 1_000 };

/// Key `i`'s text.
pub fn key(i: usize) -> String {
    format!("key-{i:07}")
}

/// Three strings of equal length whatever `tag` is, so that an overwrite fits.
pub fn value(i: usize, tag: usize) -> Vec<String> {
    (0..3)
        .map(|j| format!("backend-{j}-{tag:08}-{i:010}"))
        .collect()
}

/// What batch `r` does, by key index: the six stable keys it overwrites, then the two
/// (removed, inserted) pairs of churning keys.
pub fn batch(r: usize) -> ([usize; 6], [(usize, usize); 2]) {
    let puts = std::array::from_fn(|j| (r * 6 + j) * 7 % STABLE);
    let churn = std::array::from_fn(|p| {
        let gone = STABLE + 2 * r + p;
        (gone, gone + STABLE)
    });
    (puts, churn)
}

/// Checks the map after batches `0..batches` (from a map of keys `0..2 * STABLE`, every
/// value at tag 0): `len`, whether it holds key `i`, and key `i`'s value.
pub fn check_after(
    batches: usize,
    len: usize,
    contains: impl Fn(usize) -> bool,
    value_of: impl Fn(usize) -> Vec<String>,
) {
    let last = batches - 1;
    // The first batch's churning keys are out, the last one's in, and a stable key holds
    // its last overwrite.
    assert_eq!(len, 2 * STABLE);
    assert!(!contains(STABLE));
    assert!(contains(2 * STABLE + 2 * last + 1));
    let i = batch(last).0[5];
    assert_eq!(value_of(i), value(i, last));
}
