#!/usr/bin/env bash
# `wobble step` built for the default x86-64 target against the same source built with
# `-C target-cpu=native`, run in turns (the order alternating each round) so that drift on a
# shared machine hits both alike. Prints each build's median ns per projection, the ratio, and
# the kernel each build ran.
#
#   benches/default_vs_native.sh                         # cloth n = 32, colored, 8 iterations
#   ROUNDS=9 ARGS="--scene cloth --n 32 --solver colored --substeps 8 --iterations 1" \
#     benches/default_vs_native.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-7}
args=${ARGS:-"--scene cloth --n 32 --solver colored --iterations 8"}
cargo build --release -q -p harness
RUSTFLAGS="-C target-cpu=native" cargo build --release -q -p harness --target-dir target/native
builds=(default:target/release/wobble native:target/native/release/wobble)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2 | tr -d '"'; }
for ((r = 0; r < rounds; r++)); do
    order=("${builds[@]}")
    ((r % 2)) && order=("${builds[1]}" "${builds[0]}")
    for b in "${order[@]}"; do
        name=${b%%:*}
        # shellcheck disable=SC2086
        out=$("${b#*:}" step $args --threads 1 --steps 200 --json)
        echo "$out" | field ns_per_projection >>"$tmp/$name"
        echo "$out" | field kernel >"$tmp/$name.kernel"
    done
done
median() { sort -g "$1" | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
d=$(median "$tmp/default")
n=$(median "$tmp/native")
echo "wobble step $args --threads 1 --steps 200, $rounds rounds in turns"
echo "default target: median $d ns/projection (kernel $(cat "$tmp/default.kernel"))"
echo "native:         median $n ns/projection (kernel $(cat "$tmp/native.kernel"))"
awk -v d="$d" -v n="$n" 'BEGIN {printf "default / native = %.3f\n", d / n}'
