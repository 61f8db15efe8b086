//! `wobble claims --verify DIR` recomputes every verdict from DIR's CSVs alone: it agrees with
//! the CLAIMS.md the same run wrote, and it fails, naming the claim, when CLAIMS.md or a CSV is
//! changed so that the two no longer match.

mod common;

use std::path::Path;

/// Runs the cheap claims C7, C16 and C20 in quick mode into `dir`.
fn run_some(dir: &Path) {
    let out = dir.to_str().expect("a UTF-8 temporary directory");
    common::ok(&["claims", "--quick", "--only", "C7,C16,C20", "--out", out]);
}

fn verify(dir: &Path) -> std::process::Output {
    common::wobble(&["claims", "--verify", dir.to_str().unwrap()])
}

#[test]
fn verify_agrees_with_the_run_that_wrote_the_directory_and_catches_a_change() {
    let dir = tempfile::tempdir().unwrap();
    run_some(dir.path());
    let o = verify(dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("C16 agrees"), "{said}");

    // A verdict line changed by hand: caught, and the claim named.
    let md_path = dir.path().join("CLAIMS.md");
    let md = std::fs::read_to_string(&md_path).unwrap();
    let line = md
        .lines()
        .skip_while(|l| *l != "## C16")
        .find(|l| l.starts_with("- **Verdict:** "))
        .expect("C16's verdict line")
        .to_string();
    let edited = md.replace(&line, "- **Verdict:** refuted");
    std::fs::write(&md_path, edited).unwrap();
    let o = verify(dir.path());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("C16") && err.contains("refuted"), "{err}");
    std::fs::write(&md_path, &md).unwrap();
    assert!(verify(dir.path()).status.success());

    // A figure changed in a CSV: explicit Euler as stable as semi-implicit refutes C7's
    // "an order of magnitude", which CLAIMS.md does not say.
    let csv_path = dir.path().join("claims").join("c7.csv");
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let mut lines: Vec<String> = csv.lines().map(String::from).collect();
    let semi: Vec<String> = lines
        .iter()
        .find(|l| l.contains(",semi-implicit,"))
        .expect("a semi-implicit row")
        .split(',')
        .map(String::from)
        .collect();
    for l in lines.iter_mut().filter(|l| l.contains(",explicit,")) {
        let mut cells: Vec<String> = l.split(',').map(String::from).collect();
        *cells.last_mut().unwrap() = semi.last().unwrap().clone();
        *l = cells.join(",");
    }
    std::fs::write(&csv_path, lines.join("\n") + "\n").unwrap();
    let o = verify(dir.path());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("C7"), "{err}");
}

#[test]
fn verify_of_a_directory_without_claims_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = common::refused(&["claims", "--verify", dir.path().to_str().unwrap()]);
    assert!(
        err.contains("CLAIMS.md") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn a_malformed_csv_is_named_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    run_some(dir.path());
    std::fs::write(
        dir.path().join("claims").join("c16.csv"),
        "sweep,iterations\niterations,x\n",
    )
    .unwrap();
    let o = verify(dir.path());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("C16") && err.contains("c16.csv") && !err.contains("panicked"),
        "{err}"
    );
}
