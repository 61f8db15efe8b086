//! A game that depends on the `wobble` library compiles none of the command-line tool's crates:
//! `cargo tree` of the root package's normal dependencies names no clap, plotters, image,
//! indicatif, csv or serde_json (they belong to the harness, a separate package).

use std::process::Command;

#[test]
fn the_library_depends_on_none_of_the_cli_crates() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            "wobble",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    let crates: Vec<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(crates.contains(&"solver-core") && crates.contains(&"sparse"));
    for cli in [
        "clap",
        "plotters",
        "image",
        "indicatif",
        "csv",
        "serde_json",
        "harness",
    ] {
        assert!(
            !crates.contains(&cli),
            "the wobble library pulls in {cli}:\n{tree}"
        );
    }
}
