//! The `wobble` binary end to end, on tiny sizes in temporary directories: CSV layouts, a
//! killed sweep, bad arguments, the small subcommands, and `report --quick`.

mod common;

use common::{ok, refused};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCALE_HEADER: &str = "scene,n,vertices,constraints,solver,threads,iterations,substeps,ordering,ms_per_step_median,ms_per_step_p10,ms_per_step_p90,ns_per_projection,stretch_mean_avg,peak_rss_mb,backend";
const CONVERGE_HEADER: &str = "scene,n,solver,iteration,residual,elapsed_us";

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every data line of the CSV at `csv` has as many fields as the header; the listed columns
/// parse as numbers.
fn check_rows(csv: &Path, header: &str, numeric: &[usize]) -> usize {
    let text = read(csv);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(header));
    let width = header.split(',').count();
    let mut rows = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), width, "incomplete row: {line}");
        for &c in numeric {
            assert!(
                f[c].parse::<f64>().is_ok(),
                "column {c} of {line} is not a number"
            );
        }
        rows += 1;
    }
    assert!(text.is_empty() || text.ends_with('\n'), "last row is cut");
    rows
}

/// Runs the sweep `args` with `--out dir`, then [`check_rows`] on the CSV it wrote as `csv`.
fn sweep_rows(dir: &Path, args: &[&str], csv: &str, header: &str, numeric: &[usize]) -> usize {
    ok(&[args, &["--out", dir.to_str().unwrap()]].concat());
    check_rows(&dir.join(csv), header, numeric)
}

#[test]
fn csv_layouts_are_exact_and_rows_complete() {
    let dir = tempfile::tempdir().unwrap();
    let rows = sweep_rows(
        dir.path(),
        &[
            "converge",
            "--n",
            "4",
            "--iters",
            "5",
            "--solvers",
            "gs",
            "--reps",
            "1",
            "--stretch-iters",
            "1,2",
            "--stretch-steps",
            "5",
        ],
        "converge.csv",
        CONVERGE_HEADER,
        &[1, 3, 4, 5],
    );
    assert_eq!(rows, 6, "iterations 0..=5 of gs");
    let rows = sweep_rows(
        dir.path(),
        &[
            "scale",
            "--sizes",
            "4,6",
            "--solvers",
            "gs,jacobi",
            "--threads",
            "1",
            "--steps",
            "5",
            "--min-steps",
            "2",
            "--warmup",
            "1",
            "--target-s",
            "0.01",
        ],
        "scale.csv",
        SCALE_HEADER,
        &[1, 2, 3, 5, 6, 7, 9, 10, 11, 12, 13, 14],
    );
    assert!(rows >= 2, "gs at both sizes");
    // Every point is accounted for: measured, or refused with a reason.
    let runs = read(&dir.path().join("scale_runs.csv"));
    assert_eq!(runs.lines().count(), 1 + 4);
    for line in runs.lines().skip(1) {
        let status = line.rsplit(',').next().unwrap();
        assert!(
            status == "ok" || status.starts_with("unsupported here"),
            "{line}"
        );
    }
    for f in [
        "scale.svg",
        "scale.png",
        "converge_iterations.svg",
        "converge_iterations.png",
    ] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
}

#[test]
fn killing_scale_halfway_leaves_only_complete_rows() {
    let dir = tempfile::tempdir().unwrap();
    let sizes: Vec<String> = (4..80).map(|n| n.to_string()).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_wobble"))
        .args([
            "scale",
            "--solvers",
            "gs",
            "--threads",
            "1",
            "--target-s",
            "0.2",
            "--min-steps",
            "20",
        ])
        .args(["--sizes", &sizes.join(",")])
        .args(["--out", dir.path().to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let csv = dir.path().join("scale.csv");
    let start = Instant::now();
    loop {
        let lines = std::fs::read_to_string(&csv)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if lines >= 4 || start.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "the sweep finished before it was killed; make it longer"
    );
    let rows = check_rows(&csv, SCALE_HEADER, &[1, 2, 3, 9, 12, 14]);
    assert!(rows >= 3 && rows < sizes.len(), "{rows} rows");
}

#[test]
fn bad_arguments_exit_non_zero_with_a_message_and_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    // `advise` with a negative budget, a cloth too small to build, or a missing mesh file.
    let advise_on = |body: &[&'static str], budget_ms: &'static str| {
        let tail = [
            "--budget-ms",
            budget_ms,
            "--max-stretch",
            "0.01",
            "--out",
            out,
        ];
        [&["advise"][..], body, &tail].concat()
    };
    let advise = [
        advise_on(&["--scene", "cloth", "--n", "8"], "-1"),
        advise_on(&["--scene", "cloth", "--n", "1"], "1"),
        advise_on(&["--mesh", "/no/such/file.obj"], "1"),
    ];
    let cases: &[&[&str]] = &[
        &["step", "--solver", "nosuch"],
        &["step", "--n", "1"],
        &["step", "--n", "8", "--repeat", "0"],
        &["converge", "--n", "1", "--out", out],
        &["scale", "--solvers", "gs,nosuch", "--out", out],
        &["scale", "--sizes", "16,1", "--out", out],
        &["cache", "--orderings", "natural,zigzag", "--out", out],
        &["substeps", "--totals", "8,0", "--out", out],
        &advise[0],
        &advise[1],
        &advise[2],
        &["render", "--scene", "cloth", "--n", "1", "--out", out],
        &["render", "--scene", "nosuch", "--out", out],
        &["claims", "--only", "C99", "--out", out],
        &["report", "--solvers", "nosuch", "--out", out],
        &["threads", "--solver", "gs", "--n", "8"],
        &["threads", "--threads", "1,0", "--n", "8"],
        &["threads", "--turn", "0", "--n", "8"],
        &["threads", "--scene", "cloth", "--n", "1"],
    ];
    for args in cases {
        let err = refused(args);
        assert!(!err.trim().is_empty(), "{args:?} said nothing");
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    }
}

#[test]
fn advise_render_substeps_and_cache_run_on_tiny_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    // gs on a 6 x 6 cloth within 100 ms, at a stretch target and iterations x substeps.
    let advise = |max_stretch: &str, iterations: &str, substeps: &str| {
        let o = ok(&[
            "advise",
            "--scene",
            "cloth",
            "--n",
            "6",
            "--budget-ms",
            "100",
            "--max-stretch",
            max_stretch,
            "--solvers",
            "gs",
            "--iterations",
            iterations,
            "--substeps",
            substeps,
            "--steps",
            "5",
            "--out",
            out,
        ]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let text = advise("0.5", "1,4", "1,2");
    assert!(text.contains("Recommended: gs"), "{text}");
    assert!(advise("1e-9", "1", "1").contains("No combination meets"));

    let gif = dir.path().join("c.gif");
    ok(&[
        "render",
        "--scene",
        "cloth",
        "--n",
        "4",
        "--frames",
        "3",
        "--width",
        "64",
        "--height",
        "48",
        "--stills",
        "2",
        "--out",
        gif.to_str().unwrap(),
    ]);
    assert!(std::fs::read(&gif).unwrap().starts_with(b"GIF8"));
    let png = std::fs::read(dir.path().join("c_frame002.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));

    ok(&[
        "substeps", "--n", "4", "--totals", "4", "--steps", "5", "--out", out,
    ]);
    let s = read(&dir.path().join("substeps.csv"));
    assert_eq!(s.lines().count(), 1 + 3, "splits 1x4, 2x2, 4x1");

    sweep_rows(
        dir.path(),
        &[
            "cache",
            "--sizes",
            "4",
            "--large",
            "",
            "--orderings",
            "natural,morton",
            "--target-s",
            "0.01",
            "--steps",
            "3",
            "--min-steps",
            "2",
            "--no-cachegrind",
        ],
        "cache.csv",
        SCALE_HEADER,
        &[1, 2, 9],
    );
    assert!(read(&dir.path().join("cache_misses.csv")).contains("not measured"));
}

#[test]
fn report_quick_writes_report_and_claims_with_every_verdict() {
    let dir = tempfile::tempdir().unwrap();
    ok(&["report", "--quick", "--out", dir.path().to_str().unwrap()]);
    let report = read(&dir.path().join("REPORT.md"));
    let claims = read(&dir.path().join("CLAIMS.md"));
    assert!(report.contains("## Machine"));
    // The pictures include a world: the stack, three bodies (its GIF is linked, so the link
    // check below asks that it was written).
    assert!(report.contains("## Pictures: stack"), "{report}");
    assert!(report.contains("(stack.gif)"), "{report}");
    let count = harness::commands::claims::CLAIMS.len();
    assert!(
        report.contains("## Summary of findings") && report.contains(&format!("- **C{count}** "))
    );
    assert!(claims.contains("- git commit: ") && claims.contains("- load at the start: "));
    let csv = read(&dir.path().join("claims.csv"));
    assert!(csv.starts_with(
        "id,source,verdict,verdict_at_stated_tolerance,over_the_sweep,figure,tolerance"
    ));
    assert_eq!(csv.lines().count(), count + 1, "{csv}");
    for id in 1..=count {
        let head = format!("\n## C{id}\n");
        let at = claims
            .find(&head)
            .unwrap_or_else(|| panic!("C{id} missing"));
        let rest = &claims[at + head.len()..];
        let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
        let verdict = section
            .lines()
            .find_map(|l| l.strip_prefix("- **Verdict:** "))
            .unwrap_or_else(|| panic!("C{id} has no verdict"));
        assert!(
            [
                "confirmed",
                "refuted",
                "partly",
                "inconclusive",
                "untestable-here",
                // A verdict that flips inside its tolerance's sweep says where.
                "depends on the tolerance: "
            ]
            .iter()
            .any(|v| verdict.starts_with(v)),
            "C{id}: {verdict}"
        );
    }
    // Every local link in REPORT.md and CLAIMS.md points at a file the run wrote.
    for text in [&report, &claims] {
        for part in text.split("](").skip(1) {
            let target = &part[..part.find(')').unwrap()];
            assert!(dir.path().join(target).is_file(), "dangling link {target}");
        }
    }
}

#[test]
fn step_runs_the_mass_spring_model_and_mesh_repair_or_strict_refusal() {
    let out = ok(&[
        "step",
        "--model",
        "mass-spring",
        "--integrator",
        "rk4",
        "--n",
        "8",
        "--steps",
        "20",
        "--warmup",
        "0",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["solver"], "mass-spring/rk4");
    assert_eq!(json["finite"], true);
    // Explicit Euler with springs this stiff diverges: a clear error and a non-zero exit.
    let err = refused(&[
        "step",
        "--model",
        "mass-spring",
        "--integrator",
        "explicit",
        "--stiffness",
        "100",
        "--n",
        "8",
    ]);
    assert!(
        err.contains("diverged") && !err.contains("panicked"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let obj = dir.path().join("dup.obj");
    std::fs::write(
        &obj,
        "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 1 0 1\nv 0 0 1\nf 1 2 3\nf 1 4 5\n",
    )
    .unwrap();
    let obj = obj.to_str().unwrap();
    let out = ok(&[
        "step", "--scene", "mesh", "--mesh", obj, "--steps", "2", "--warmup", "0", "--json",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 duplicate vertex welded"));
    let err = refused(&["step", "--scene", "mesh", "--mesh", obj, "--strict"]);
    assert!(err.contains("dup.obj:4:"), "{err}");
}

#[test]
#[cfg_attr(
    not(feature = "parallel"),
    ignore = "needs the `parallel` feature (threads)"
)]
fn threads_times_every_count_in_turns_and_checks_the_bits() {
    let o = ok(&[
        "threads",
        "--n",
        "24",
        "--threads",
        "1,2,3",
        "--warmup",
        "2",
        "--steps",
        "6",
        "--turn",
        "2",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["same_bits"], true, "{v}");
    assert_eq!(v["steps"], 6, "{v}");
    let counts = v["counts"].as_array().unwrap();
    assert_eq!(
        counts
            .iter()
            .map(|c| c["threads"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(counts[0]["speedup"], 1.0);
    for c in counts {
        for key in ["ms_per_step_median", "speedup", "speedup_paired"] {
            let x = c[key].as_f64().unwrap();
            assert!(x.is_finite() && x > 0.0, "{key} = {x} in {c}");
        }
        let (p10, p90) = (c["ms_per_step_p10"].as_f64(), c["ms_per_step_p90"].as_f64());
        assert!(p10 <= p90, "{c}");
    }
}

#[test]
fn step_repeat_reports_the_median_run_and_lists_every_run() {
    let args = [
        "step", "--n", "8", "--solver", "colored", "--steps", "3", "--warmup", "0", "--repeat",
        "3", "--json",
    ];
    let out = String::from_utf8(ok(&args).stdout).unwrap();
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut runs: Vec<f64> = r["runs_ns_per_projection"]
        .as_array()
        .unwrap_or_else(|| panic!("no runs in {out}"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(runs.len(), 3, "{out}");
    runs.sort_by(f64::total_cmp);
    assert_eq!(r["ns_per_projection"].as_f64(), Some(runs[1]), "{out}");
    // One run reports no list.
    let single = String::from_utf8(ok(&args[..args.len() - 3]).stdout).unwrap();
    assert!(!single.contains("runs_ns_per_projection"), "{single}");
}

#[test]
fn step_names_its_kernel_and_refuses_one_the_cpu_lacks() {
    for kernel in sparse::Kernel::ALL {
        let args = [
            "step",
            "--n",
            "8",
            "--solver",
            "colored",
            "--steps",
            "2",
            "--warmup",
            "0",
            "--kernel",
            kernel.name(),
            "--json",
        ];
        match kernel.resolve() {
            Ok(used) => {
                let out = String::from_utf8(ok(&args).stdout).unwrap();
                assert!(out.contains(&format!("\"kernel\":\"{used}\"")), "{out}");
            }
            Err(_) => {
                eprintln!(
                    "kernel {kernel}: this CPU lacks {}; checking the refusal",
                    kernel.needs()
                );
                let err = refused(&args);
                assert!(!err.contains("panicked"), "{err}");
                let has = sparse::colored::simd::cpu_features().join(" ");
                assert!(err.contains(kernel.needs()) && err.contains(&has), "{err}");
            }
        }
    }
}

#[test]
fn step_takes_each_scenes_own_default_size_and_suggests_a_mistyped_solver() {
    // Without --n, each scene takes its own size: the jelly's subdivision level 3 and the
    // cube's 4 cells per side, where the cloth's 32 would be refused.
    for (scene, n) in [("jelly", 3), ("cube", 4), ("rope", 32)] {
        let json =
            common::step_json(&["--scene", scene, "--steps", "1", "--warmup", "0", "--json"]);
        assert_eq!(json["n"], n, "{scene}: {json}");
    }
    // Enumerated values are clap's: a typo is refused with the nearest name.
    let err = refused(&["step", "--solver", "colourd"]);
    assert!(err.contains("'colored'"), "{err}");
    let err = refused(&["scale", "--solvers", "gs,jacobbi"]);
    assert!(err.contains("'jacobi'"), "{err}");
}

#[test]
fn the_character_steps_with_its_figures_and_renders_its_proxy() {
    // Past the first teleport (4 s at 60 Hz), at 4 substeps as docs/SCENES.md steps it.
    let out = ok(&[
        "step",
        "--scene",
        "character",
        "--steps",
        "300",
        "--warmup",
        "0",
        "--substeps",
        "4",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["n"], 16, "the scene's default size");
    assert_eq!(json["finite"], true);
    for figure in [
        "skin_max_distance_violations",
        "skin_backstop_violations",
        "proxy_penetrations",
    ] {
        assert_eq!(json[figure], 0, "{figure}: {json}");
    }
    let err = refused(&["step", "--scene", "character", "--backend", "gpu"]);
    assert!(err.contains("CPU"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    ok(&[
        "render",
        "--scene",
        "character",
        "--frames",
        "8",
        "--out",
        out_dir,
    ]);
    assert!(dir.path().join("character.gif").exists());
}
