//! The lockfile reader's pair reading against reading each file alone, and each
//! alone-reading against serde_json (`tests/it/common/differential.rs`, which
//! `tests/it/reader_differential.rs` runs over generated mutations). A canonical lockfile is
//! the fixed other side: the input is the other file of a pair whose baseline is the
//! canonical one (so that its elements can be placed beside the baseline's), or the
//! baseline of a pair whose other file is the canonical one, or both files of a pair.
//! Which one is the input's length modulo 3: one check per run, and a mutation that
//! changes the length moves the input to another.
//! The placement it aims at is src/lockfile/place.rs (the one pass's element texts, and
//! the other file of a pair placed beside the baseline's and proved).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/it/common/differential.rs"]
mod differential;

fuzz_target!(|data: &[u8]| {
    static BASELINE: OnceLock<Vec<u8>> = OnceLock::new();
    let canonical = BASELINE.get_or_init(|| differential::baseline().into_bytes());
    match data.len() % 3 {
        0 => differential::check(canonical, data),
        1 => differential::check(data, canonical),
        _ => differential::check(data, data),
    }
});
