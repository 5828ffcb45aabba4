#!/usr/bin/env bash
# Build and run verilayout's emitted wgmma kernels on an H100 (sm_90a), compare each with a
# CPU reference, and print max error and TFLOP/s. It cannot run in CI (no GPU there); every
# kernel it runs is first checked by the executable model (`verilayout simulate`).
#
# Usage:
#   scripts/run_on_h100.sh DIR [DIR...]      # directories written by `verilayout emit wgmma`
#   scripts/run_on_h100.sh                   # emit the acceptance set of issue 6 and run it all
# Environment: TILES (CTAs per launch, default 1056 = 8 per SM), ITERS (timed launches, 50),
#              NVCC (default nvcc), VERILAYOUT (default "python -m verilayout.cli").
# Exit status: 0 when every kernel prints PASS, 1 otherwise.
set -uo pipefail

NVCC=${NVCC:-nvcc}
VERILAYOUT=${VERILAYOUT:-python -m verilayout.cli}
TILES=${TILES:-1056}
ITERS=${ITERS:-50}

if ! command -v "$NVCC" >/dev/null 2>&1; then
  echo "error: $NVCC not found (CUDA 12.0 or newer is needed for sm_90a)" >&2; exit 2
fi
if command -v nvidia-smi >/dev/null 2>&1; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
  if [ -n "$cap" ] && [ "$cap" != "9.0" ]; then
    echo "error: the first GPU has compute capability $cap; wgmma kernels need 9.0 (H100/H200)" >&2
    exit 2
  fi
else
  echo "error: nvidia-smi not found: no NVIDIA GPU on this machine" >&2; exit 2
fi

dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  root=$(mktemp -d /tmp/verilayout-h100.XXXXXX)
  # shape dtype acc A B K  (the four m64n32k16 kernels of seed 003, dtype variants, N sweep)
  while read -r shape dtype acc a b k; do
    [ -z "$shape" ] && continue
    d="$root/${shape}_${dtype}_${acc}_${a//:/}_${b//:/}_k${k}"
    $VERILAYOUT emit wgmma --shape "$shape" --dtype "$dtype" --acc "$acc" --a "$a" --b "$b" \
      --k "$k" -o "$d" >/dev/null || { echo "error: emit failed for $d" >&2; exit 2; }
    dirs+=("$d")
  done <<'EOF'
m64n32k16 f16 f32 K:none K:none 16
m64n32k16 f16 f32 MN:64B N:none 16
m64n32k16 f16 f32 MN:128B K:32B 16
m64n32k16 f16 f32 reg N:64B 16
m64n32k16 bf16 f32 MN:128B K:32B 64
m64n32k16 f16 f16 reg N:64B 64
m64n32k8 tf32 f32 K:none K:none 64
m64n32k8 tf32 f32 reg K:64B 64
m64n32k32 s8 s32 K:64B K:32B 64
m64n32k32 u8 s32 reg K:none 64
m64n8k16 f16 f32 K:128B K:128B 64
m64n64k16 f16 f32 MN:128B N:128B 64
m64n128k16 bf16 f32 K:128B N:64B 64
m64n256k16 f16 f32 reg N:128B 64
m64n256k8 tf32 f32 K:128B K:128B 64
EOF
fi

status=0
printf '%-48s %-8s %-12s %s\n' "kernel" "result" "max error" "throughput"
for d in "${dirs[@]}"; do
  name=$(basename "$d")
  if ! $VERILAYOUT simulate "$d" >"$d/simulate.log" 2>&1; then
    printf '%-48s %-8s %s\n' "$name" "MODEL" "the executable model disagrees: see $d/simulate.log"
    status=1; continue
  fi
  if ! "$NVCC" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o "$d/kernel" \
       "$d/kernel.cu" >"$d/build.log" 2>&1; then
    printf '%-48s %-8s %s\n' "$name" "BUILD" "see $d/build.log"; status=1; continue
  fi
  "$d/kernel" "$TILES" "$ITERS" >"$d/run.log" 2>&1
  rc=$?
  err=$(sed -n 's/^max error \([^ ]*\).*/\1/p' "$d/run.log")
  tput=$(grep -E '^[0-9.]+ T(FL)?OP/s' "$d/run.log" | head -1)
  if [ $rc -eq 0 ] && grep -q '^PASS' "$d/run.log"; then res=PASS; else res=FAIL; status=1; fi
  printf '%-48s %-8s %-12s %s\n' "$name" "$res" "${err:-?}" "${tput:-see $d/run.log}"
done
exit $status
