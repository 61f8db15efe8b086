//! Bytes as an OBJ file, through strict and repaired loading, body building and 10 steps of the
//! reference Gauss-Seidel: `scenes::fuzz::fuzz_entry`, the path the regression tests
//! (`tests/fuzz_corpus.rs`) run on every corpus file. A broken invariant is a crash.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = scenes::fuzz::fuzz_entry(data) {
        panic!("invariant broken: {broken}");
    }
});
