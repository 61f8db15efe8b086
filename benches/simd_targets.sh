#!/usr/bin/env bash
# The simd issue's targets, measured with `wobble step` in turns (run on a quiet machine):
# cloth n = 32 at 1x8 and 8x1 for colored (auto kernel), its scalar twin and gs; the flag with
# and without bending; colored over n = 16..1024; and, when the optional builds exist, a
# `target-cpu=native` build and an `enhanced-determinism` build (state hash on every kernel
# and thread count). Build those first with
#   RUSTFLAGS="-C target-cpu=native" cargo build --release -p harness --target-dir target/native
#   cargo build --release -p harness --target-dir target/det \
#       --features sparse/enhanced-determinism,solver-core/enhanced-determinism
# Prints one line per run: ns/projection, ms/step, kernel, state hash.
set -uo pipefail
cd "$(dirname "$0")/.."
W=${W:-./target/release/wobble}
DET=./target/det/release/wobble
NAT=./target/native/release/wobble
ns() { python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.2f" % d["ns_per_projection"], "%.4f" % d["ms_per_step_median"], d.get("kernel"), d.get("state_hash"))'; }
echo "# $(date -u) load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## cloth n=32, 1 thread, 5 rounds interleaved: ns/projection ms/step kernel hash"
for r in 1 2 3 4 5; do
  for cfg in "colored 1x8|--solver colored --iterations 8" \
             "colored-scalar 1x8|--solver colored --kernel scalar --iterations 8" \
             "gs 1x8|--solver gs --iterations 8" \
             "colored 8x1|--solver colored --substeps 8 --iterations 1"; do
    name=${cfg%%|*}; args=${cfg#*|}
    echo "r$r $name: $($W step --scene cloth --n 32 $args --steps 300 --json | ns)"
  done
  if [ -x $DET ]; then
    echo "r$r colored 1x8 enhanced-determinism: $($DET step --scene cloth --n 32 --solver colored --iterations 8 --steps 300 --json | ns)"
  fi
  if [ -x $NAT ]; then
    echo "r$r colored 1x8 native: $($NAT step --scene cloth --n 32 --solver colored --iterations 8 --steps 300 --json | ns)"
  fi
done
echo "## flag n=32 colored 1x8, with and without bending, 5 rounds interleaved"
for r in 1 2 3 4 5; do
  echo "r$r bending: $($W step --scene flag --n 32 --solver colored --steps 200 --json | ns)"
  echo "r$r no-bending: $($W step --scene flag --n 32 --solver colored --no-bending --steps 200 --json | ns)"
done
echo "## colored auto over n, cloth 1x8, 1 thread (2 rounds)"
for r in 1 2; do
  for n in 16 32 64 128 256 512 1024; do
    steps=200; [ $n -ge 512 ] && steps=10; [ $n -ge 1024 ] && steps=4
    warm=20; [ $n -ge 512 ] && warm=2
    echo "r$r n=$n: $($W step --scene cloth --n $n --solver colored --steps $steps --warmup $warm --json | ns)"
  done
done
if [ -x $DET ]; then
  echo "## enhanced-determinism state hash after 500 steps, every kernel, 1 and 2 threads (cloth n=32)"
  for k in scalar portable avx2; do for t in 1 2; do
    echo "kernel=$k threads=$t: $($DET step --scene cloth --n 32 --solver colored --kernel $k --threads $t --warmup 0 --steps 500 --json | ns)"
  done; done
fi
echo "# done $(date -u)"
