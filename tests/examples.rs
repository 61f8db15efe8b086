//! Every example runs to completion and prints what it reports, so CI runs the examples.
//!
//! `cargo test` builds the examples beside the test binaries (`target/<profile>/examples/`);
//! an example missing there (a filtered build) is built with the same profile first.

use std::path::PathBuf;
use std::process::Command;

/// The example binary `name`, built with this test's profile if it is not there yet.
fn example(name: &str) -> PathBuf {
    // This test runs from target/<profile>/deps/; examples live in target/<profile>/examples/.
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "--example", name]);
        if profile_dir.file_name().is_some_and(|p| p == "release") {
            build.arg("--release");
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "cargo build --example {name} failed");
    }
    path
}

/// Runs example `name`, checks it exits with status 0 and prints, for each of `expected`, a
/// line containing it.
fn runs_and_prints(name: &str, expected: &[&str]) {
    let out = Command::new(example(name))
        .output()
        .unwrap_or_else(|e| panic!("cannot run example {name}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "example {name} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    for e in expected {
        assert!(
            stdout.lines().any(|l| l.contains(e)),
            "example {name} printed no line with '{e}':\n{stdout}"
        );
    }
}

#[test]
fn flag_runs() {
    runs_and_prints(
        "flag",
        &[
            "solver 'colored'",
            "free edge moved",
            "all of unit length: true",
        ],
    );
}

#[test]
fn drag_cloth_runs() {
    runs_and_prints(
        "drag_cloth",
        &["hit triangle", "from its target", "from where it hung"],
    );
}

#[test]
fn jelly_deformer_runs() {
    runs_and_prints("jelly_deformer", &["max displacement", "it springs back"]);
}

#[test]
fn embedded_mesh_runs() {
    runs_and_prints(
        "embedded_mesh",
        &[
            "render mesh: 2562 vertices",
            "simulation body: 42 particles",
            "2562 of 2562 normals point outward",
        ],
    );
}

#[test]
fn many_bodies_runs() {
    runs_and_prints(
        "many_bodies",
        &["8 of 8 balls held by their hammocks", "same bits true"],
    );
}

#[test]
fn custom_solver_runs() {
    runs_and_prints("custom_solver", &["mean stretch damped-jacobi"]);
}

#[cfg(feature = "rapier")]
#[test]
fn jelly_knocks_box_runs() {
    runs_and_prints(
        "jelly_knocks_box",
        &["box height before", "box fell off the ledge: yes"],
    );
}

#[test]
fn cape_runs() {
    runs_and_prints(
        "cape",
        &[
            "top row off its skin: 0 m",
            "farthest vertex from its skin",
            "vertices inside the body proxy: 0",
        ],
    );
}

#[test]
fn step_instructions_runs_and_refuses_a_bad_scene() {
    let exe = example("step_instructions");
    for scene in ["cloth64-gs", "crowd"] {
        let out = Command::new(&exe)
            .args([scene, "1"])
            .output()
            .expect("the example runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{scene}: {out:?}");
        assert!(stdout.contains(&format!("{scene}: 1 steps")), "{stdout}");
    }
    let out = Command::new(&exe)
        .args(["nowhere", "1"])
        .output()
        .expect("the example runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no scene"),
        "{stderr}"
    );
}
