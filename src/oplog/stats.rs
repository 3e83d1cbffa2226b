//! What a writer did: [`OpLogStats`].

/// What an [`OpLog`](super::OpLog) did; see
/// [`OpLog::stats`](super::OpLog::stats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpLogStats {
    /// Batches published.
    pub publishes: u64,
    /// Operations appended.
    pub appended: u64,
    /// Operation applications over all versions: about `appended × versions`.
    pub applied: u64,
    /// Versions copied whole from the current version (new from the pool's factory, or
    /// back after the op log dropped operations they lacked).
    pub full_syncs: u64,
    /// Operations dropped from the op log while a version still lacked them, because it
    /// reached [`OpLogBuilder::max_ops`](super::OpLogBuilder::max_ops).
    pub truncated: u64,
    /// Versions a publish (or the spare's catch-up) took from the pool that lacked more
    /// than the op log holds and put back as the pool's victims, because another idle
    /// version was within reach: each one a full copy not made on a publish. A trim drops
    /// them; a publish that finds no other version idle copies one whole.
    pub(crate) set_aside: u64,
    /// Publishes that wrote a version lacking more than the previous batch, within the op
    /// log's reach: the version the previous publish retired was not back in the pool (a
    /// reader still held it, or the publish skipped the reclamation pass that would have
    /// returned it), so an older idle version, usually the spare, replayed what it missed.
    /// With readers that let go between publishes this stays a small share of
    /// `publishes`; it is why the spare is kept within reach (module docs, "How it
    /// works"). Full copies are counted in `full_syncs` instead.
    pub(crate) stale_takes: u64,
    /// Waits that got a version back in time: for the version the last publish retired,
    /// within [`OpLogBuilder::max_wait`](super::OpLogBuilder::max_wait), or, when readers
    /// held every version within the op log's reach, for any of them, within a full
    /// copy's time.
    pub waited: u64,
    /// Waits that timed out: the publish took another version (a reader held the one the
    /// last publish retired longer than `max_wait`), or copied one whole (readers held
    /// every version within reach longer than a full copy takes; counted in
    /// [`full_syncs`](OpLogStats::full_syncs) too).
    pub wait_timeouts: u64,
    /// Published operations the op log holds now for versions that lack them (not the
    /// pending batch, nor those that left it and wait to be dropped).
    pub ops_held: usize,
    /// Versions the op log keeps operations for now, besides the current one (those the
    /// writer handed to the container and may get back from the pool).
    pub versions: usize,
    /// Operations that left the op log in one go (the version that held them back went)
    /// and wait to be dropped, a bounded number per publish, so that no publish frees them
    /// all.
    pub(crate) dropping: usize,
}
