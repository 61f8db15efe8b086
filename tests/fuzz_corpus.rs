//! The fuzz target's seed corpus and every crash it found, as regression tests: each file of
//! `fuzz/corpus/obj_body/` and `fuzz/regressions/` goes through `mesh::fuzz::fuzz_entry`, the same
//! function the fuzz target calls, and must not break an invariant.

use scenes::fuzz::{fuzz_entry, FuzzOutcome};
use std::path::Path;

fn files(dir: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

#[test]
fn every_corpus_and_regression_file_keeps_the_invariants() {
    let (mut stepped, mut refused) = (Vec::new(), Vec::new());
    for path in files("fuzz/corpus/obj_body")
        .into_iter()
        .chain(files("fuzz/regressions"))
    {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match fuzz_entry(&bytes) {
            Ok(FuzzOutcome::Stepped { .. }) => stepped.push(name),
            Ok(FuzzOutcome::Refused(_)) => refused.push(name),
            Err(broken) => panic!("{}: invariant broken: {broken}", path.display()),
        }
    }
    // The seeds cover both fates; these are the ones written by hand for that.
    for seed in [
        "quad.obj",
        "needs_repair.obj",
        "non_manifold.obj",
        "grid_crlf.obj",
        "tetra.obj",
    ] {
        assert!(
            stepped.iter().any(|s| s == seed),
            "{seed} must build and step: {stepped:?}"
        );
    }
    for seed in ["bad_nan.obj", "bad_index.obj", "binary.bin", "empty.obj"] {
        assert!(
            refused.iter().any(|s| s == seed),
            "{seed} must be refused: {refused:?}"
        );
    }
}

/// Figures for a fuzz run's corpus: `FUZZ_CORPUS_DIR=fuzz/corpus/obj_body_run cargo test
/// --release --test fuzz_corpus -- --ignored --nocapture` counts how many inputs were refused,
/// stepped, or diverged (and fails on a broken invariant like the test above).
#[test]
#[ignore = "reads the corpus of a local fuzz run; see README, Bad input"]
fn fuzz_run_corpus_outcomes() {
    let dir = std::env::var("FUZZ_CORPUS_DIR").expect("set FUZZ_CORPUS_DIR");
    let (mut refused, mut stepped, mut diverged) = (0, 0, 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        match fuzz_entry(&bytes) {
            Ok(FuzzOutcome::Refused(_)) => refused += 1,
            Ok(FuzzOutcome::Stepped { diverged: true, .. }) => diverged += 1,
            Ok(FuzzOutcome::Stepped { .. }) => stepped += 1,
            Err(broken) => panic!("invariant broken: {broken}"),
        }
    }
    println!(
        "{dir}: {refused} refused, {stepped} stepped 10 steps, {diverged} diverged (rolled back)"
    );
}
