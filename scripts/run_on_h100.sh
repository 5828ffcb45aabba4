#!/usr/bin/env bash
# Build and run verilayout's emitted kernels on an H100 / H200 (sm_90a): exact reference checks
# on small shapes, then TFLOP/s and % of cuBLASLt on a compute-bound shape (default 8192^3).
#
# Two steps, so that the GPU machine needs nothing but the repository and a CUDA toolkit:
#   1. on the CPU (python with verilayout installed):
#        scripts/run_on_h100.sh --emit [DIR]     # DIR defaults to build/h100
#      writes one directory per kernel (kernel.cu, main.cu, manifest.json, ...): the GEMMs for
#      f16, bf16, e4m3 and tf32 at three tile shapes each, and the 15 one-tile `emit wgmma`
#      demos of issue 6. Carry DIR to the GPU machine.
#   2. on the GPU machine (nvcc >= 12.0 and libcublasLt; no python, numpy or z3):
#        scripts/run_on_h100.sh [DIR...]         # DIR: an emitted kernel, or a folder of them
#      builds each with nvcc, runs it and prints one line per kernel.
#      `emit wgmma` directories (kernel.cu + run.sh, no main.cu) are run as their own harness.
#   The shape sweep (issue 24): --emit-sweep [DIR] on the CPU, --sweep [DIR] on the GPU (below).
#
# Environment: NVCC (default nvcc), SHAPE ("M N K", default "8192 8192 8192"), ITERS (timed
#              launches, default 20), PYTHON (step 1 only; default the
#              repository's .venv/bin/python, else python3).
# Exit status: 0 every kernel built and every reference check was exact, 1 otherwise,
#              2 a missing tool or GPU.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
default_dir="$root/build/h100"

# ----- the shape sweep of issue 24: the configuration `emit gemm --problem` chooses, per shape -----
#   on the CPU:  scripts/run_on_h100.sh --emit-sweep [DIR]   (DIR defaults to build/h100-sweep)
#   on the GPU:  scripts/run_on_h100.sh --sweep [DIR]
# prints TFLOP/s and % of cuBLASLt per shape, then the geometric mean of the % per dtype and overall.
SWEEP_SHAPES="8192,8192,8192 4096,4096,4096 2048,2048,2048 16,4096,4096 128,8192,8192 8192,1024,8192 4096,14336,4096 8191,8193,4104"
if [ "${1:-}" = "--emit-sweep" ]; then
  out=${2:-$root/build/h100-sweep}
  if [ -z "${PYTHON:-}" ]; then
    PYTHON=python3; [ -x "$root/.venv/bin/python" ] && PYTHON="$root/.venv/bin/python"
  fi
  mkdir -p "$out" || exit 2
  for dtype in bf16 e4m3; do
    for p in $SWEEP_SHAPES; do
      k=${p##*,}
      if [ "$dtype" = e4m3 ] && [ $((k % 16)) -ne 0 ]; then
        echo "skipped $dtype $p: K bytes not a multiple of 16 (TMA row stride)"; continue
      fi
      d="$out/sweep_${dtype}_${p//,/x}"
      (cd "$root" && PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m verilayout.cli \
        emit gemm --arch sm_90a --dtype "$dtype" --problem "$p" --explain -o "$d" >"$d.explain.txt" 2>&1) \
        || { echo "error: emit failed for $d: $(tail -1 "$d.explain.txt")" >&2; exit 2; }
      mv "$d.explain.txt" "$d/explain.txt"
      echo "${p//,/ }" >"$d/shape"
      echo "emitted $d: $(head -1 "$d/explain.txt")"
    done
  done
  echo "then carry $out to the GPU machine and run: scripts/run_on_h100.sh --sweep $out"
  exit 0
fi

if [ "${1:-}" = "--emit" ]; then
  out=${2:-$default_dir}
  if [ -z "${PYTHON:-}" ]; then
    PYTHON=python3; [ -x "$root/.venv/bin/python" ] && PYTHON="$root/.venv/bin/python"
  fi
  mkdir -p "$out" || exit 2
  vl() { (cd "$root" && PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m verilayout.cli "$@" >/dev/null); }
  # emit wgmma demos (one tile per CTA; the acceptance set of issue 6): shape dtype acc A B K
  while read -r shape dtype acc a b k; do
    [ -z "$shape" ] && continue
    d="$out/wgmma_${shape}_${dtype}_${acc}_${a//:/}_${b//:/}_k${k}"
    vl emit wgmma --instr "$shape" --dtype "$dtype" --acc "$acc" --a "$a" --b "$b" --k "$k" -o "$d" \
      || { echo "error: emit failed for $d" >&2; exit 2; }
    echo "emitted $d"
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
  # emit gemm (issue 15): dtype tile stages, the set tests/test_emit_gemm.py compiles
  while read -r dtype tile stages; do
    [ -z "$dtype" ] && continue
    d="$out/gemm_${dtype}_${tile}_s${stages}"
    vl emit gemm --arch sm_90a --dtype "$dtype" --tile "$tile" --stages "$stages" -o "$d" \
      || { echo "error: emit failed for $d" >&2; exit 2; }
    echo "emitted $d"
  done <<'EOF2'
f16 128x256x64 4
f16 128x128x64 6
f16 64x128x32 5
bf16 128x256x64 4
bf16 128x128x64 6
bf16 64x128x32 5
e4m3 128x256x128 4
e4m3 128x128x128 6
e4m3 64x128x64 5
tf32 128x256x32 4
tf32 128x128x32 6
tf32 64x128x16 5
EOF2
  echo "now carry $out to the GPU machine and run: scripts/run_on_h100.sh $out"
  exit 0
fi

NVCC=${NVCC:-nvcc}
sweep=0
if [ "${1:-}" = "--sweep" ]; then
  sweep=1; shift
  [ $# -eq 0 ] && set -- "$root/build/h100-sweep"
fi
SHAPE=${SHAPE:-8192 8192 8192}
ITERS=${ITERS:-20}
FLAGS="-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a"

if ! command -v "$NVCC" >/dev/null 2>&1; then
  echo "error: $NVCC not found (CUDA 12.0 or newer is needed for sm_90a)" >&2; exit 2
fi
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "error: nvidia-smi not found: no NVIDIA GPU on this machine" >&2; exit 2
fi
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
if [ -n "$cap" ] && [ "$cap" != "9.0" ]; then
  echo "error: the first GPU has compute capability $cap; these kernels need 9.0 (H100/H200)" >&2
  exit 2
fi

# the kernel directories: each argument is one, or a folder holding several
dirs=()
args=("$@")
[ ${#args[@]} -eq 0 ] && args=("$default_dir")
for a in "${args[@]}"; do
  if [ -f "$a/kernel.cu" ]; then dirs+=("$a"); continue; fi
  found=0
  for k in "$a"/*/kernel.cu; do
    [ -f "$k" ] && { dirs+=("$(dirname "$k")"); found=1; }
  done
  if [ $found -eq 0 ]; then
    echo "error: $a holds no kernel.cu (emit on the CPU first: scripts/run_on_h100.sh --emit $a)" >&2
    exit 2
  fi
done

# build $1/main.cu (an emitted GEMM), run it with the other arguments and read its log: sets rc,
# checks (exact / FAIL), ours, theirs (TFLOP/s), pct (% of cuBLASLt) and note; returns 1 when the
# build fails (see $1/build.log)
run_gemm() {
  local d=$1; shift
  # shellcheck disable=SC2086
  "$NVCC" $FLAGS -o "$d/gemm" "$d/main.cu" -ldl >"$d/build.log" 2>&1 || return 1
  "$d/gemm" "$@" >"$d/run.log" 2>&1
  rc=$?
  checks=FAIL; grep -q '^PASS reference checks' "$d/run.log" && checks=exact
  ours=$(sed -n 's/^verilayout .*, \([0-9.]*\) TFLOP\/s$/\1/p' "$d/run.log" | head -1)
  theirs=$(sed -n 's/^cuBLASLt .*, \([0-9.]*\) TFLOP\/s$/\1/p' "$d/run.log" | head -1)
  pct=$(sed -n 's/^verilayout \/ cuBLAS: \([0-9.]*\) %.*/\1/p' "$d/run.log" | head -1)
  note=$(grep -E '^cuBLAS: not compared|differing from cuBLAS|^launch failed|error' "$d/run.log" \
         | sed 's/.*(outputs/outputs/; s/)$//' | head -1)
  return 0
}

if [ $sweep -eq 1 ]; then
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $("$NVCC" --version | tail -1)"
  printf '%-40s %-7s %-16s %-10s %-10s %-8s %s\n' "kernel (auto-chosen)" "checks" "shape" "TFLOP/s" "cuBLAS" "% cuBLAS" "note"
  status=0
  pctf=$(mktemp)
  for d in "${dirs[@]}"; do
    name=$(basename "$d"); tag=$(sed -n 's/.*"tag": "\([^"]*\)".*/\1/p' "$d/manifest.json" | head -1)
    read -r M N K <"$d/shape" || { echo "error: $d/shape missing (emit with --emit-sweep)" >&2; exit 2; }
    if ! run_gemm "$d" "$M" "$N" "$K" "$ITERS"; then
      printf '%-40s %-7s %s\n' "$tag" "BUILD" "see $d/build.log"; status=1; continue
    fi
    [ $rc -eq 0 ] && [ "$checks" = exact ] || status=1
    printf '%-40s %-7s %-16s %-10s %-10s %-8s %s\n' "$tag" "$checks" "${M}x${N}x${K}" "${ours:-?}" \
      "${theirs:--}" "${pct:--}" "$note"
    [ -n "$pct" ] && echo "${name#sweep_} $pct" >>"$pctf"
  done
  if [ -s "$pctf" ]; then
    awk '{ split($1, a, "_"); n[a[1]]++; s[a[1]] += log($2); N++; S += log($2);
           if ($2 < 90) low[a[1]] = low[a[1]] " " $1 }
         END { for (d in n) printf "geometric mean %-5s %6.1f %% of cuBLASLt over %d shapes%s\n", d, exp(s[d] / n[d]), n[d], (low[d] ? "; below 90%:" low[d] : "");
               if (N) printf "geometric mean all   %6.1f %% of cuBLASLt over %d shapes\n", exp(S / N), N }' \
      "$pctf"
  fi
  rm -f "$pctf"
  exit $status
fi

echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $("$NVCC" --version | tail -1)"
echo "shape for timing: $SHAPE, $ITERS launches"
printf '%-42s %-7s %-10s %-10s %-10s %s\n' "kernel" "checks" "TFLOP/s" "cuBLAS" "% cuBLAS" "note"
status=0
for d in "${dirs[@]}"; do
  name=$(basename "$d")
  if [ -f "$d/main.cu" ]; then                      # emit gemm
    # shellcheck disable=SC2086
    if ! run_gemm "$d" $SHAPE "$ITERS"; then
      printf '%-42s %-7s %s\n' "$name" "BUILD" "see $d/build.log"; status=1; continue
    fi
    [ $rc -eq 0 ] && [ "$checks" = exact ] || status=1
    [ $rc -gt 1 ] && note="exit $rc: see $d/run.log"
    printf '%-42s %-7s %-10s %-10s %-10s %s\n' "$name" "$checks" "${ours:-?}" "${theirs:--}" \
      "${pct:--}" "$note"
  else                                              # emit wgmma (one tile per CTA, own harness)
    if ! "$NVCC" $FLAGS -o "$d/kernel" "$d/kernel.cu" >"$d/build.log" 2>&1; then
      printf '%-42s %-7s %s\n' "$name" "BUILD" "see $d/build.log"; status=1; continue
    fi
    "$d/kernel" 1056 "$ITERS" >"$d/run.log" 2>&1
    rc=$?
    checks=FAIL; [ $rc -eq 0 ] && grep -q '^PASS' "$d/run.log" && checks=exact
    [ "$checks" = exact ] || status=1
    tput=$(grep -Eo '^[0-9.]+ T(FL)?OP/s' "$d/run.log" | head -1)
    printf '%-42s %-7s %-10s %-10s %-10s %s\n' "$name" "$checks" "${tput%% *}" "-" "-" "emit wgmma demo"
  fi
done
exit $status
