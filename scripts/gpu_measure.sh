#!/usr/bin/env bash
# The GPU measurement of issue 18, for a machine with a GPU: the standard cloth at n = 32, 128,
# 512 and 1024 with colored, jacobi and chebyshev at 8 iterations, on the GPU and with the CPU
# solvers of the same build on that machine's CPU (1 thread and every core), written by
# `wobble gpu` to results/gpu/ (gpu_scale.csv, gpu_scale_runs.csv, gpu_summary.csv with the
# adapter named on every row, GPU.md with the crossover size and the 1024 x 1024 goal, a plot),
# then `wobble converge --backend gpu` on the 128 x 128 cloth to results/gpu/converge/.
#
# Needs: a Vulkan driver for the GPU (on NVIDIA the driver's Vulkan ICD, nvidia_icd.json; check
# with `vulkaninfo --summary`), and either a `wobble` built on this commit (WOBBLE=path, or
# target/release/wobble; `cargo build --release -p harness` builds it, default features include
# `gpu`) or cargo with the crates reachable to build it. A machine without network access
# needs the binary brought along: strip its debug info first (`strip -o wobble
# target/release/wobble`; the release profile keeps line tables, 70 MB with them). A software adapter (lavapipe) is
# refused: its timings say nothing of a GPU (ALLOW_SOFTWARE=1 runs anyway, to try the script).
# Time on an H200 machine with 16 cores: the sweep is capped at BUDGET_S seconds (default 360)
# plus the last point; each point's timed steps aim at half a second.
#
#   scripts/gpu_measure.sh [OUT_DIR]      (default results/gpu)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-results/gpu}"
wobble="${WOBBLE:-target/release/wobble}"
if [ ! -x "$wobble" ]; then
  command -v cargo >/dev/null || { echo "no $wobble and no cargo to build it"; exit 1; }
  cargo build --release -p harness
fi
cores="$(nproc)"
threads="1"
[ "$cores" -gt 1 ] && threads="1,$cores"
extra=()
[ "${ALLOW_SOFTWARE:-0}" = 1 ] && extra+=(--allow-software)
started=$(date +%s)
"$wobble" gpu \
  --sizes 32,128,512,1024 \
  --solvers colored,jacobi,chebyshev \
  --iters 8 \
  --threads "$threads" \
  --steps 100 --min-steps 5 --warmup 20 --target-s 0.5 \
  --timeout-s 120 --budget-s "${BUDGET_S:-360}" \
  --out "$out" "${extra[@]}"
# The Jacobi-against-Gauss-Seidel question where it is asked: the residual inside one step of
# the GPU solvers on the 128 x 128 cloth, per iteration and against wall time.
"$wobble" converge --backend gpu --scene cloth --n 128 --solvers colored,jacobi,chebyshev \
  --iters 50 --reps 5 --out "$out/converge" ||
  echo "gpu_measure: wobble converge --backend gpu failed (the sweep's results stand)"
echo "gpu_measure: $(( $(date +%s) - started )) s; results in $out"
[ -f "$out/gpu_summary.csv" ] || { echo "no GPU timings were taken (see $out/GPU.md or the message above)"; exit 1; }
cat "$out/gpu_summary.csv"
