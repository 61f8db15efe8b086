//! The `wobble` command as the root package's binary, so that `cargo run --release -- ...` works
//! from the repository root; identical to the harness's `wobble` binary.

fn main() -> std::process::ExitCode {
    harness::cli_main()
}
