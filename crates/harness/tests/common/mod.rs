//! What the end-to-end tests share: running the `wobble` binary built for them.

// Each test file compiles this module on its own and uses only some of it.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `wobble` with `args` and returns what it did, failed or not.
pub fn wobble(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wobble"))
        .args(args)
        .output()
        .expect("run wobble")
}

/// Runs `wobble` with `args`, failing the test with its stderr unless it succeeds.
pub fn ok(args: &[&str]) -> Output {
    let o = wobble(args);
    assert!(
        o.status.success(),
        "wobble {args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Runs `wobble` with `args`, failing the test if it succeeds; returns what it said on stderr.
pub fn refused(args: &[&str]) -> String {
    let o = wobble(args);
    assert!(!o.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON report of `wobble step` with `args` (which must ask for `--json`).
pub fn step_json(args: &[&str]) -> serde_json::Value {
    let o = ok(&[&["step"], args].concat());
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}
