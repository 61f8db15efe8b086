//! Two consecutive `wobble claims --quick` runs of the timed claims must never give one claim
//! `confirmed` in one run and `refuted` in the other (C3 is left out here only because its
//! cachegrind runs take tens of seconds; its rule is the same interval rule, pinned in
//! claims_rules.rs).

mod common;

fn verdicts(dir: &std::path::Path) -> Vec<(String, String)> {
    let out = dir.to_str().expect("a UTF-8 temporary directory");
    common::ok(&["claims", "--quick", "--only", "C1,C4,C9,C11", "--out", out]);
    let csv = std::fs::read_to_string(dir.join("claims.csv")).expect("claims.csv written");
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    r.records()
        .map(|row| {
            let row = row.expect("a CSV row");
            // The verdict at the stated tolerance (column 2 is the word over the sweep, which
            // may be "depends-on-tolerance").
            (row[0].to_string(), row[3].to_string())
        })
        .collect()
}

#[test]
fn timed_verdicts_do_not_flip_between_consecutive_runs() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (va, vb) = (verdicts(a.path()), verdicts(b.path()));
    assert_eq!(va.len(), harness::commands::claims::CLAIMS.len());
    for ((id, x), (_, y)) in va.iter().zip(&vb) {
        assert!(
            !matches!(
                (x.as_str(), y.as_str()),
                ("confirmed", "refuted") | ("refuted", "confirmed")
            ),
            "{id}: {x} then {y}"
        );
    }
    // The timed claims ran and were decided by the rules (not left out).
    for id in ["C1", "C4", "C9", "C11"] {
        let v = &va.iter().find(|(i, _)| i == id).unwrap().1;
        assert!(
            ["confirmed", "refuted", "partly", "inconclusive"].contains(&v.as_str()),
            "{id}: {v}"
        );
    }
}
