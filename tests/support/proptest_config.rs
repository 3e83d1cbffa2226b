//! The proptest configuration every property test here uses: no failure file (Miri's
//! isolation has no working directory to write one in), and a few cases under Miri, where
//! each case is interpreted.

use proptest::test_runner::Config;

/// 256 cases (4 under Miri), no failure persistence.
pub fn config() -> Config {
    Config {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        ..Config::default()
    }
}
