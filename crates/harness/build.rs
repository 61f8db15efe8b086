//! Records how this binary was built, for REPORT.md's machine section: the rustc version, the
//! profile, the rustflags and the target features enabled at compile time.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc)
        .arg("-V")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| format!("unknown ({rustc} -V failed)"));
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .unwrap_or_default()
        .split('\x1f')
        .filter(|f| !f.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let target = std::env::var("TARGET").unwrap_or_default();
    let profile = std::env::var("PROFILE").unwrap_or_default();
    println!("cargo:rustc-env=WOBBLE_RUSTC_VERSION={version}");
    println!("cargo:rustc-env=WOBBLE_RUSTFLAGS={flags}");
    println!("cargo:rustc-env=WOBBLE_TARGET_FEATURES={features}");
    println!("cargo:rustc-env=WOBBLE_TARGET={target}");
    println!("cargo:rustc-env=WOBBLE_PROFILE={profile}");
}
