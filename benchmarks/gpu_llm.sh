#!/usr/bin/env bash
# The LLM roles' model on a GPU: llama.cpp's own server built with CUDA, the local model served with
# several slots, and the decomposer benchmark run through the project's real LLM client against it.
# Never needed by the tests; the figures it prints are quoted in README "A local model".
#
#   bash benchmarks/gpu_llm.sh build SRC BUILD        # llama.cpp source -> BUILD/bin/llama-server (CUDA)
#   bash benchmarks/gpu_llm.sh run BUILD MODEL OUT [SLOTS] [BUDGET_S]
#   bash benchmarks/gpu_llm.sh episodes BUILD MODEL OUT [BUDGET_S] [EVERY]   # whole episodes (issue 33)
#
# SRC: llama.cpp's source, e.g. vendor/llama.cpp of llama-cpp-python's source distribution (the
# version the extra `local-llm` pins: pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36).
# Needs cmake, nvcc and cuBLAS; CUDA_ARCH picks the GPU architecture (default: native).
# MODEL: the GGUF file (`make local-llm` assembles models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf).
# FREEFORM: the free-form instruction set, where it is not ../shared/data/instructions beside the checkout.
# OUT gets decomposer.jsonl (a line per text), decomposer-summary.json, server.log and gpu.txt.
# run starts the server on 127.0.0.1 only, waits for it (bounded), runs the benchmark with SLOTS
# texts at once (default 8), stops starting texts after BUDGET_S seconds (default: none), and stops
# the server whatever happens.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
WM=("$PY" -c "import sys; from worldmind.cli import main; sys.exit(main())")

find_cublas_include() {  # the CUDA toolkit's include folder, else a pip-installed cuBLAS's
  local d
  for d in "${CUDA_HOME:-/usr/local/cuda}/include" /usr/local/cuda*/include /usr/local/cuda*/targets/*/include; do
    [ -f "$d/cublas_v2.h" ] && { echo ""; return; }  # found where CMake looks: nothing to add
  done
  d=$(find / -xdev -name cublas_v2.h -path '*nvidia*' 2>/dev/null | head -1)
  [ -n "$d" ] && dirname "$d"
}

build() {
  local src="$1" out="$2" inc lib extra=()
  inc=$(find_cublas_include || true)
  if [ -n "$inc" ]; then  # cuBLAS from a Python wheel: point CMake at its headers and libraries
    lib="$(dirname "$inc")/lib"
    extra=(-DCMAKE_CUDA_FLAGS="-I$inc" -DCMAKE_CXX_FLAGS="-I$inc"
           -DCUDA_cublas_LIBRARY="$(ls "$lib"/libcublas.so* | head -1)"
           -DCUDA_cublasLt_LIBRARY="$(ls "$lib"/libcublasLt.so* | head -1)")
    export LIBRARY_PATH="$lib:${LIBRARY_PATH:-}" LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
    echo "cuBLAS from $inc"
  fi
  cmake -S "$src" -B "$out" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-native}" \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF \
    -DCMAKE_BUILD_TYPE=Release "${extra[@]}"
  cmake --build "$out" --target llama-server -j "$(nproc)"
  ls -la "$out/bin/llama-server"
}

PORT=8080

serve() {  # BUILD MODEL OUT SLOTS CTX: the server in the background, stopped on exit; waits for it
  local build="$1" model="$2" out="$3" slots="$4" ctx="${5:-4096}" ok=0
  mkdir -p "$out"
  (nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true) > "$out/gpu.txt"
  cd "$ROOT"
  "${WM[@]}" llm serve --llama-server "$build/bin/llama-server" --model "$model" --port "$PORT" \
    --gpu-layers 99 --parallel "$slots" --ctx "$ctx" --threads "${SERVER_THREADS:-4}" > "$out/server.log" 2>&1 &
  SERVER_PID=$!  # global: the EXIT trap runs after this function has returned
  trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true' EXIT
  for _ in $(seq 1 120); do  # loading a 0.5B model takes seconds; a build without CUDA, longer
    if "${WM[@]}" llm check --base "http://127.0.0.1:$PORT/v1" >/dev/null 2>&1; then ok=1; break; fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 1
  done
  if [ "$ok" != 1 ]; then echo "the server did not come up; see $out/server.log"; tail -20 "$out/server.log"; return 1; fi
  export WORLDMIND_LLM_LOCAL_BASE="http://127.0.0.1:$PORT/v1"
}

decomposer() {  # OUT SLOTS BUDGET_S [KILL_S]: the decomposer benchmark against the running server;
  # it starts no text after BUDGET_S, and with KILL_S it is stopped after that many seconds
  ${4:+timeout "$4"} "$PY" benchmarks/bench_llm_decomposer.py \
    --planner llm:local --workers "$2" --time-budget "$3" ${FREEFORM:+--freeform "$FREEFORM"} \
    --out "$1/decomposer.jsonl" --summary "$1/decomposer-summary.json"
}

run() {
  local build="$1" model="$2" out="$3" slots="${4:-8}" budget="${5:-0}"
  serve "$build" "$model" "$out" "$slots" 4096 || return 1
  decomposer "$out" "$slots" "$budget"
}

one_episode() {  # PLANNER KIND EPISODE OUT BUDGET_S: one `eval longact` process; the episode ends and is
  # scored 60 s before BUDGET_S (--time-limit: its report says "time limit"), killed at BUDGET_S
  local tag="${1#llm:}"; tag="${tag%%/*}"
  timeout "$5" "$PY" -c "import sys; from worldmind.cli import main; sys.exit(main())" eval longact \
    --time-limit "$(( $5 > 120 ? $5 - 60 : $5 / 2 ))" \
    --episodes "$3" --planner "$1" --instruction "$2" --out "$4/$tag-$2/$(basename "$3" .json)" \
    > "$4/$tag-$2-$(basename "$3" .json).log" 2>&1 || true
}

episodes() {
  # Every EVERY-th v2 dev episode (the demo episode is the first), detailed and concise, each as its
  # own `eval longact` process against one server (no Ray on that machine): LLM_JOBS LLM-planner
  # episodes at a time (default 8), the deterministic planner beside them on DET_JOBS cores (default
  # 2), all niced below the server, and the decomposer benchmark on 4 slots. Why so few at once:
  # on a 16-core H100 machine, 38 episodes at once with 42 slots starved the server's CPU side
  # (JSON-schema grammar sampling runs on its threads): about 10 tokens/s a slot, and no episode
  # finished in 160 s. Each episode is scored as it stands 60 s before BUDGET_S (`--time-limit`; its
  # report says so) and killed at BUDGET_S. OUT/<local|deterministic>-<kind>/<episode>/report.json.
  local build="$1" model="$2" out="$3" budget="${4:-420}" every="${5:-10}"
  local llm_jobs="${LLM_JOBS:-8}" det_jobs="${DET_JOBS:-2}" eps kind ep pids=()
  cd "$ROOT"
  eps=$("$PY" -c "import glob,sys; print(' '.join(sorted(glob.glob('evaluation/data/episodes_dev_v2/*.json'))[::int(sys.argv[1])]))" "$every")
  SERVER_THREADS="${SERVER_THREADS:-8}" serve "$build" "$model" "$out" "$(( llm_jobs + 4 ))" 6144 || return 1
  export -f one_episode; export PY
  for planner_jobs in "llm:local $llm_jobs 5" "deterministic $det_jobs 15"; do
    set -- $planner_jobs
    for kind in detailed concise; do for ep in $eps; do echo "$kind $ep"; done; done \
      | nice -n "$3" timeout "$budget" xargs -P "$2" -L 1 bash -c 'one_episode '"$1"' "$0" "$1" "'"$out"'" "'"$budget"'"' &
    pids+=($!)
  done
  decomposer "$out" 4 "$(( budget - 60 ))" "$budget" > "$out/decomposer.log" 2>&1 &
  pids+=($!)
  wait "${pids[@]}" || true  # not the server's: it runs until the EXIT trap
  "$PY" benchmarks/llm_episode_figures.py "$out" --json "$out/figures.json" || true
}

case "${1:-}" in
  build) shift; build "$@" ;;
  run) shift; run "$@" ;;
  episodes) shift; episodes "$@" ;;
  *) sed -n '2,17p' "$0"; exit 2 ;;
esac
