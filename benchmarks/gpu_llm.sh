#!/usr/bin/env bash
# The LLM roles' model on a GPU: llama.cpp's own server built with CUDA, the local model served with
# several slots, and the decomposer benchmark run through the project's real LLM client against it.
# Never needed by the tests; the figures it prints are quoted in README "A local model".
#
#   bash benchmarks/gpu_llm.sh build SRC BUILD        # llama.cpp source -> BUILD/bin/llama-server (CUDA)
#   bash benchmarks/gpu_llm.sh run BUILD MODEL OUT [SLOTS] [BUDGET_S]
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

run() {
  local build="$1" model="$2" out="$3" slots="${4:-8}" budget="${5:-0}" port=8080 ok=0
  mkdir -p "$out"
  (nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true) > "$out/gpu.txt"
  cd "$ROOT"
  "${WM[@]}" llm serve --llama-server "$build/bin/llama-server" --model "$model" --port "$port" \
    --gpu-layers 99 --parallel "$slots" --ctx 4096 --threads 4 > "$out/server.log" 2>&1 &
  SERVER_PID=$!  # global: the EXIT trap runs after this function has returned
  trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true' EXIT
  for _ in $(seq 1 120); do  # loading a 0.5B model takes seconds; a build without CUDA, longer
    if "${WM[@]}" llm check --base "http://127.0.0.1:$port/v1" >/dev/null 2>&1; then ok=1; break; fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 1
  done
  if [ "$ok" != 1 ]; then echo "the server did not come up; see $out/server.log"; tail -20 "$out/server.log"; return 1; fi
  WORLDMIND_LLM_LOCAL_BASE="http://127.0.0.1:$port/v1" "$PY" benchmarks/bench_llm_decomposer.py \
    --planner llm:local --workers "$slots" --time-budget "$budget" ${FREEFORM:+--freeform "$FREEFORM"} \
    --out "$out/decomposer.jsonl" --summary "$out/decomposer-summary.json"
}

case "${1:-}" in
  build) shift; build "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
