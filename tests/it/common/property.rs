//! The property tests' runner (proptest). Strategies generate the structures under test
//! (schemas, tools, mutations), so that a failure shrinks to a small counterexample.
//!
//! Every run checks the same cases: a fixed number of them, from a fixed seed, as the
//! seeded loops this replaced did. A failure therefore reproduces by running the test
//! again, and its message holds the shrunk input. There is no failure persistence (no
//! `proptest-regressions/`): with a fixed seed a saved case would replay nothing the run
//! does not already reach, and a failing run would write into tests/. To explore beyond
//! the fixed cases, `PROPTEST_RNG_SEED=N` picks another seed and `PROPTEST_CASES=N`
//! another count (CONTRIBUTING.md); a counterexample found so is kept as an example test.

use std::fmt::Debug;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngSeed, TestCaseResult, TestRunner};

/// The seed when `PROPTEST_RNG_SEED` is not set.
const SEED: u64 = 0x5eed_c0de;

/// The fewest shrinking steps when `PROPTEST_MAX_SHRINK_ITERS` is not set (proptest's
/// own limit is four per case: 32 for the eight slow cases of `hostile.rs`, too few to
/// shrink a pair of a few dozen strings).
const SHRINK_ITERS: u32 = 2048;

/// `test` on `cases` values of `strategy`; panics with the shrunk failing input.
pub fn check<S>(cases: u32, strategy: S, test: impl Fn(S::Value) -> TestCaseResult)
where
    S: Strategy,
    S::Value: Debug,
{
    // `Config::default()` holds what the PROPTEST_* variables set.
    let env = Config::default();
    let cases = match std::env::var_os("PROPTEST_CASES") {
        Some(_) => env.cases,
        None => cases,
    };
    let config = Config {
        cases,
        rng_seed: match env.rng_seed {
            RngSeed::Random => RngSeed::Fixed(SEED),
            fixed => fixed,
        },
        max_shrink_iters: match env.max_shrink_iters {
            u32::MAX => SHRINK_ITERS.max(cases.saturating_mul(4)),
            set => set,
        },
        failure_persistence: None,
        ..env
    };
    let seed = config.rng_seed;
    let mut runner = TestRunner::new(config);
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{e}\n(seed {seed}, {cases} cases; PROPTEST_RNG_SEED={seed} runs them again)");
    }
}
