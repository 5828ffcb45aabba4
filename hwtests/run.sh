#!/usr/bin/env bash
# Rerun verilayout's hardware probes on a GPU machine: needs this repository and nvcc (CUDA >= 12.5),
# an sm_90 GPU (H100/H200). Writes OUT/<gpu>-<date>-wgprobe.jsonl.gz, OUT/<gpu>-<date>-tma.jsonl.gz and
# OUT/<gpu>-<date>-machine.txt (nvidia-smi, nvcc version, date). Compare with the models:
#   python -m hwtests.compare OUT/<gpu>-<date>         (needs verilayout's Python environment)
# A case that loses the CUDA context (probe exit 3) or hangs (PROBE_TIMEOUT, default 60 s) is recorded as
# an error line and the probe restarts at the next case.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-${OUT:-$HERE/results}}
mkdir -p "$OUT"
BUILD=$(mktemp -d)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
prefix="$OUT/${GPU_TAG:-${gpu:-gpu}}-$(date -u +%Y-%m-%d)"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv 2>/dev/null || echo "(no nvidia-smi)"
  nvcc --version | tail -2
} > "$prefix-machine.txt"
cat "$prefix-machine.txt"

for p in wgmma_probe tma_probe; do
  nvcc -arch=sm_90a -std=c++17 -O2 -o "$BUILD/$p" "$HERE/$p.cu" || { echo "build of $p.cu failed"; exit 2; }
done

# run PROBE CASES OUTFILE: every case, restarting after a case that ends the process
run() {
  local probe=$1 cases=$2 out=$3 n next rc done_n
  n=$(grep -v '^#' "$cases" | grep -c .)
  : > "$out"
  next=0
  while [ "$next" -lt "$n" ]; do
    timeout "${PROBE_TIMEOUT:-60}" "$BUILD/$probe" "$cases" "$next" >> "$out"; rc=$?
    done_n=$(grep -c '"index":' "$out")
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then      # the next case hung: record it and go on
      name=$(grep -v '^#' "$cases" | grep . | sed -n "$((done_n + 1))p" | cut -d' ' -f1)
      echo "{\"index\":$done_n,\"name\":\"$name\",\"error\":\"timeout (rc $rc)\"}" >> "$out"
      done_n=$((done_n + 1))
    elif [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
      echo "$probe stopped with rc $rc after $done_n cases"; return 1
    fi
    next=$done_n
  done
  echo "$probe: $done_n cases -> $out.gz"
  gzip -f "$out"
}

run wgmma_probe "$HERE/cases/wgmma_cases.txt" "$prefix-wgprobe.jsonl"
run tma_probe "$HERE/cases/tma_cases.txt" "$prefix-tma.jsonl"
rm -rf "$BUILD"
