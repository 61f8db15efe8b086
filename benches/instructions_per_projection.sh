#!/usr/bin/env bash
# Instructions per constraint projection of the library's step (`solver_core::step`, colored,
# one thread) on cloths of several sizes, counted by valgrind's callgrind rather than timed, so
# the figures repeat exactly on a shared, noisy machine. Only the instructions inside the step
# count (`--toggle-collect` on `run_step`): not the harness's timing and figures around it.
# Each size runs `wobble step` twice, with S and 2 S timed steps; the difference of the two
# totals over S steps is one step's count, with the solver's preparation in the first step
# cancelled out. Prints, per size and step
# shape (substeps x iterations), the instructions per projection and their ratio to the
# largest size's: set against the timed ratio (`cargo bench --bench step -- step/small`), it
# tells work outside the projections from the machine's pace on a small body.
#
#   benches/instructions_per_projection.sh
#   SIZES="16 23 32 128" KERNEL=portable benches/instructions_per_projection.sh
#
# valgrind runs no AVX-512, so KERNEL defaults to avx2 (what an AVX2-only core runs).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is required"; exit 1; }
sizes=${SIZES:-"16 23 128"}
kernel=${KERNEL:-avx2}
cargo build --release -q -p harness
bin=target/release/wobble
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Instructions inside the library's steps of one run of `wobble step ARGS`.
count() {
    valgrind --tool=callgrind --toggle-collect='solver_core::step::run_step' \
        --callgrind-out-file=/dev/null "$bin" step "$@" --json 2>&1 >/dev/null |
        grep -o "I *refs: *[0-9,]*" | tr -dc '0-9'
}
field() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2 | tr -d '"'; }
printf "%-8s %6s %9s %12s %14s %10s\n" shape n vertices constraints instr/proj "/largest"
for shape in 1x8 8x1; do
    substeps=${shape%x*}
    iterations=${shape#*x}
    for n in $sizes; do
        args=(--scene cloth --n "$n" --solver colored --threads 1 --kernel "$kernel"
            --substeps "$substeps" --iterations "$iterations")
        info=$("$bin" step "${args[@]}" --steps 1 --json)
        constraints=$(echo "$info" | field constraints)
        vertices=$(echo "$info" | field vertices)
        # About 2e8 instructions in the shorter run, whatever the size.
        steps=$((200000000 / (constraints * substeps * iterations * 40) + 10))
        one=$(count "${args[@]}" --steps "$steps")
        two=$(count "${args[@]}" --steps $((2 * steps)))
        per=$(echo "($two - $one) / ($steps * $constraints * $substeps * $iterations)" | bc -l)
        echo "$shape $n $vertices $constraints $per" >>"$tmp/rows"
    done
done
largest=$(echo "$sizes" | tr ' ' '\n' | sort -n | tail -1)
while read -r shape n vertices constraints per; do
    ref=$(awk -v s="$shape" -v n="$largest" '$1 == s && $2 == n { print $5 }' "$tmp/rows")
    printf "%-8s %6s %9s %12s %14.2f %10.3f\n" "$shape" "$n" "$vertices" "$constraints" "$per" \
        "$(echo "$per / $ref" | bc -l)"
done <"$tmp/rows"
echo "kernel: $kernel; instructions counted by valgrind $(valgrind --version | cut -d- -f2)"
