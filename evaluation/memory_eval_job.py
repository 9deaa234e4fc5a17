"""One house of ``worldmind memory-eval`` as an executor task (evaluation/executor.py).

The task runs :func:`run_memory_eval` into a private temporary folder and hands back the result
and the bytes of every file it wrote; the driver writes them into the house's output folder
atomically, so a Ray worker on another node never writes into the driver's folder and a run
killed mid-house leaves that house's earlier files whole.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.report import atomic_write_bytes

_ENCODERS: dict[tuple[Any, ...], Any] = {}  # per process: encoders by spec (a CLIP model loads once)


@dataclass(frozen=True)
class MemoryEvalJob:
    house_file: str
    index: int
    config: Any  # MemoryEvalConfig
    voxel_size: float
    encoders: tuple[str, str | None, str | None]  # (text encoder, clip model, clip weights)
    data_dir: str | None = None
    save_memory: bool = False


def encoders_for(spec: tuple[str, str | None, str | None]) -> Any:
    """make_encoders(*spec), built once per process (the driver seeds it with the ones it checked)."""
    from perception.encoders import make_encoders

    if spec not in _ENCODERS:
        _ENCODERS[spec] = make_encoders(*spec)
    return _ENCODERS[spec]


def run_memory_eval_job(job: MemoryEvalJob, progress: Any = None) -> dict[str, Any]:
    from evaluation.memory_eval import run_memory_eval
    from memory.spatial.memory import MemoryConfig

    with tempfile.TemporaryDirectory(prefix="worldmind-memeval-") as tmp:
        result = run_memory_eval(job.house_file, job.index, tmp, config=job.config,
                                 memory_config=MemoryConfig(voxel_size=job.voxel_size),
                                 encoders=encoders_for(job.encoders), data_dir=job.data_dir,
                                 save_memory=job.save_memory, progress=progress)
        files = {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir()) if p.is_file()}
    return {"result": result, "files": files}


def write_outputs(out_dir: Path, files: dict[str, bytes]) -> None:
    """memory_eval.json last, so its presence means the house's files are complete."""
    for name in sorted(files, key=lambda n: n == "memory_eval.json"):
        atomic_write_bytes(out_dir / name, files[name])
