//! The lockfile reader's pair reading against reading each file alone, and each
//! alone-reading against serde_json (`tests/common/differential.rs`, which
//! `tests/reader_differential.rs` runs over seeded mutations). The input is the other
//! file of a pair whose baseline is a canonical lockfile, and then the baseline of a
//! pair whose other file is that canonical lockfile, and both files of a pair.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/differential.rs"]
mod differential;

fuzz_target!(|data: &[u8]| {
    static BASELINE: OnceLock<Vec<u8>> = OnceLock::new();
    let canonical = BASELINE.get_or_init(|| differential::baseline().into_bytes());
    differential::check(canonical, data);
    differential::check(data, canonical);
    differential::check(data, data);
});
