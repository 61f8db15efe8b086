//! `wobble cache` end to end on tiny cloths: no count in cache_misses.csv is negative, every
//! interval holds its median, and no file it writes names a path of this machine.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `wobble cache` with `args` into `out`, its timing cut to a few steps of 0.01 s.
fn tiny_cache(out: &Path, args: &[&str]) {
    let out = out.to_str().unwrap();
    let timing = [
        "--target-s",
        "0.01",
        "--steps",
        "6",
        "--min-steps",
        "3",
        "--out",
        out,
    ];
    common::ok(&[&["cache"], args, &timing].concat());
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// Paths of this machine that must not appear in any output: the output directory, the
/// checkout, the home directory, and the usual roots of such paths.
fn forbidden(out: &Path) -> Vec<String> {
    let mut v = vec![
        out.display().to_string(),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .and_then(Path::parent)
            .unwrap()
            .display()
            .to_string(),
        "/tmp/".to_string(),
        "/home/".to_string(),
        "/root/".to_string(),
        "/work/".to_string(),
    ];
    if let Some(h) = std::env::var_os("HOME") {
        let h = h.to_string_lossy().to_string();
        if h.len() > 1 {
            v.push(format!("{h}/"));
        }
    }
    v
}

fn check_no_machine_paths(out: &Path) {
    let bad = forbidden(out);
    let written = files(out);
    assert!(written.len() >= 8, "too few files: {written:?}");
    for f in written {
        let bytes = std::fs::read(&f).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for b in &bad {
            assert!(
                !text.contains(b.as_str()),
                "{} names the machine path {b}",
                f.display()
            );
        }
    }
}

/// Rows of a CSV as header-keyed maps.
fn rows(p: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(p).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            h.iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn has_valgrind() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn cachegrind_counts_are_never_negative_and_no_file_names_a_machine_path() {
    let dir = tempfile::tempdir().unwrap();
    tiny_cache(
        dir.path(),
        &[
            "--sizes",
            "4,5",
            "--large",
            "",
            "--orderings",
            "natural,morton",
            "--cachegrind-sizes",
            "4",
            "--cachegrind-orderings",
            "natural",
            "--cachegrind-steps",
            "1,4",
        ],
    );
    let misses = rows(&dir.path().join("cache_misses.csv"));
    assert!(!misses.is_empty());
    let cols = [
        "d_refs_per_projection",
        "d1_misses_per_projection",
        "d1_resolution",
        "lld_misses_per_projection",
        "lld_resolution",
    ];
    for r in &misses {
        if has_valgrind() {
            assert_eq!(r["status"], "ok", "{r:?}");
        }
        for c in cols {
            if !r[c].is_empty() {
                let v: f64 = r[c].parse().unwrap();
                assert!(v >= 0.0, "{c} = {v} in {r:?}");
            }
        }
    }
    if has_valgrind() {
        // All three default solvers ran under the simulation, at the simulated sizes stated.
        assert_eq!(misses.len(), 3);
        assert!(misses.iter().all(|r| !r["sim_ll"].is_empty()));
    }
    check_no_machine_paths(dir.path());
}

#[test]
fn every_point_has_an_interval_around_its_median_and_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    tiny_cache(
        dir.path(),
        &["--sizes", "4", "--large", "6", "--no-cachegrind"],
    );
    let pts = rows(&dir.path().join("cache_intervals.csv"));
    // 2 sizes x 3 solvers x 4 orderings.
    assert_eq!(pts.len(), 24);
    for p in &pts {
        let f = |c: &str| p[c].parse::<f64>().unwrap();
        assert!(
            f("ns_lo") <= f("ns_median") && f("ns_median") <= f("ns_hi"),
            "{p:?}"
        );
        assert!(
            f("ratio_lo") <= f("ratio") && f("ratio") <= f("ratio_hi"),
            "{p:?}"
        );
        assert!(
            ["baseline", "slower", "faster", "same"].contains(&p["verdict"].as_str()),
            "{p:?}"
        );
    }
    let md = std::fs::read_to_string(dir.path().join("cache.md")).unwrap();
    assert!(md.contains("orderings differ beyond the interval"));
    assert!(md.contains("Roofline"));
    check_no_machine_paths(dir.path());
}
