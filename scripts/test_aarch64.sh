#!/usr/bin/env bash
# The portable (NEON) path on aarch64: builds solver-core and sparse for
# aarch64-unknown-linux-gnu and runs their tests under QEMU user mode. The x86-64 kernels are
# not compiled there, so every kernel test runs the scalar twin against `portable` (NEON).
#
# Needs the rust-std of that target (`rustup target add aarch64-unknown-linux-gnu`), a cross
# linker and QEMU (Debian: `apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross
# qemu-user`). Extra arguments go to `cargo test` (e.g. `--features enhanced-determinism`).
#
# `DETERMINISM=1` also runs the root package's tests/determinism.rs with
# `enhanced-determinism`, whose pinned state hashes were measured on x86-64: it checks that
# NEON gives the bits AVX2 and AVX-512 give (it builds the harness too: minutes more).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
cargo test --release --target aarch64-unknown-linux-gnu -p solver-core -p sparse "$@"
if [ "${DETERMINISM:-0}" = 1 ]; then
    cargo test --release --target aarch64-unknown-linux-gnu --features enhanced-determinism \
        --test determinism
fi
