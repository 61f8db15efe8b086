#!/usr/bin/env bash
# Static analysis of a vector kernel's inner loops with llvm-mca: for each loop of one kernel
# entry point (default: the AVX2 bend kernel, `sparse::colored::simd::avx2::project_bend_range`), its
# instruction count, stack references (spills and reloads), divisions, and the cycles per
# iteration llvm-mca predicts on a few CPU models. A loop whose predicted cycles sit well above
# its "Block RThroughput" (the port-bound figure) is bound by its dependency chain; the
# critical sequence is printed with `--detail`. In the bend kernel the dihedral loops are those
# with five divisions (the full blocks' loop, then the partial block's), the isometric ones have
# one.
#
# Usage: bash scripts/kernel_mca.sh [--detail] [SYMBOL_PART] [CPU ...]
#   SYMBOL_PART  a part of the mangled name (default: 4avx218project_bend_range)
#   CPU          llvm-mca -mcpu models (default: skylake icelake-server znver3)
# Needs llvm-mca on PATH (Debian/Ubuntu: the llvm package). Builds sparse's assembly into
# target-mca/ (its own target directory, so the normal build is not touched).
set -euo pipefail
detail=0
if [[ "${1:-}" == "--detail" ]]; then detail=1; shift; fi
symbol="${1:-4avx218project_bend_range}"
shift || true
cpus=("$@")
[[ ${#cpus[@]} -gt 0 ]] || cpus=(skylake icelake-server znver3)
command -v llvm-mca >/dev/null || { echo "kernel_mca.sh: llvm-mca not found on PATH" >&2; exit 1; }
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="$root/target-mca"
cargo rustc --quiet --release -p sparse --lib -- --emit asm -C debuginfo=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
asm=$(grep -l "^_ZN6sparse7colored4simd.*${symbol}" "$CARGO_TARGET_DIR"/release/deps/sparse-*.s | head -1 || true)
[[ -n "$asm" ]] || { echo "kernel_mca.sh: no function matching $symbol" >&2; exit 1; }
python3 - "$asm" "$symbol" "$work" <<'PY'
import re, sys
asm, symbol, work = sys.argv[1:]
lines = open(asm).read().split('\n')
start = next(i for i, l in enumerate(lines) if re.match(r'^_ZN6sparse7colored4simd.*' + symbol + r'.*:$', l))
end = next(i for i in range(start, len(lines)) if lines[i].startswith('.Lfunc_end'))
body = lines[start:end]
labels = {l[:-1]: i for i, l in enumerate(body) if re.match(r'^\.LBB\d+_\d+:$', l)}
loops = []
for i, l in enumerate(body):
    m = re.match(r'\s+j\w+\s+(\.LBB\d+_\d+)', l)
    if m and m.group(1) in labels and labels[m.group(1)] < i:
        ins = [x for x in body[labels[m.group(1)] + 1:i + 1]
               if x.strip() and not x.strip().startswith(('.', '#'))]
        loops.append((m.group(1), ins))
for k, (label, ins) in enumerate(loops):
    open(f'{work}/loop{k}.s', 'w').write('\n'.join(ins) + '\n')
    open(f'{work}/loop{k}.info', 'w').write('%s %d %d %d\n' % (
        label, len(ins), sum('rsp' in x for x in ins), sum(x.strip().startswith('vdiv') for x in ins)))
PY
printf '%-10s %6s %6s %5s' loop instr stack div
for c in "${cpus[@]}"; do printf ' %16s' "$c"; done
echo
for info in "$work"/loop*.info; do
  s="${info%.info}.s"
  read -r label n stack div < "$info"
  printf '%-10s %6s %6s %5s' "$label" "$n" "$stack" "$div"
  for c in "${cpus[@]}"; do
    out=$(llvm-mca -mcpu="$c" -iterations=100 "$s" 2>/dev/null)
    cyc=$(awk '/Total Cycles/{printf "%.0f", $3/100}' <<<"$out")
    rt=$(awk '/Block RThroughput/{printf "%.0f", $3}' <<<"$out")
    printf ' %16s' "$cyc (port $rt)"
  done
  echo
  if [[ $detail == 1 ]]; then
    llvm-mca -mcpu="${cpus[0]}" -iterations=10 -bottleneck-analysis "$s" 2>/dev/null \
      | awk '/Critical sequence/,0' | head -80
  fi
done
echo "cycles per loop iteration as llvm-mca predicts them (port: its port-bound Block RThroughput)"
