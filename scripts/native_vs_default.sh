#!/usr/bin/env bash
# A build for the default x86-64 target (what a crate that depends on wobble gets) against a
# native build (`-C target-cpu=native`) of the same source on this machine: interleaved rounds
# of `wobble step` on the n = 32 cloth, `colored`, 1 thread, at 1 substep x 8 iterations and at
# 8 substeps x 1 iteration; prints the median ns per projection of each build and their ratio.
#
#   scripts/native_vs_default.sh            # 9 rounds
#   ROUNDS=15 STEPS=5000 scripts/native_vs_default.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-9}
steps=${STEPS:-3000}

cargo build --release -q
RUSTFLAGS="-C target-cpu=native" cargo build --release -q --target-dir target/native
default=target/release/wobble
native=target/native/release/wobble

ns_per_projection() {
    "$1" step --scene cloth --n 32 --solver colored --threads 1 --steps "$steps" --json "${@:2}" |
        grep -o '"ns_per_projection":[0-9.eE+-]*' | cut -d: -f2
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "kernel chosen: $("$default" step --scene cloth --n 8 --solver colored --steps 1 --warmup 0 --json | grep -o '"kernel":"[a-z0-9]*"')"
for config in "--substeps 1 --iterations 8" "--substeps 8 --iterations 1"; do
    : >/tmp/wobble_default.$$
    : >/tmp/wobble_native.$$
    for _ in $(seq "$rounds"); do
        # shellcheck disable=SC2086
        ns_per_projection "$default" $config >>/tmp/wobble_default.$$
        # shellcheck disable=SC2086
        ns_per_projection "$native" $config >>/tmp/wobble_native.$$
    done
    d=$(median </tmp/wobble_default.$$)
    n=$(median </tmp/wobble_native.$$)
    echo "$config: default target $d ns, native $n ns, default / native $(awk -v d="$d" -v n="$n" 'BEGIN { printf "%.3f", d / n }') ($rounds rounds)"
    rm -f /tmp/wobble_default.$$ /tmp/wobble_native.$$
done
