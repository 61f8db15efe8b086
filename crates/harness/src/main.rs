//! The `wobble` binary: see the `harness` library.

fn main() -> std::process::ExitCode {
    harness::cli_main()
}
