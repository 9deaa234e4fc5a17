"""What an ``eval longact`` result depends on, stored in its report so a rerun reuses only its own.

A rerun into an existing ``--out`` resumes: an episode that has a report is not run again. Before
issue 32 only the planner label, the instruction kind and the sensor profile were compared, so a
rerun with an edited episode file (another checklist, another house), another simulator or move
step, or another LLM config reused the old report and exited 0 with a result that was not the
run's own. Each report now carries ``extra["resume_key"]``; a rerun whose key differs is refused
naming the fields that differ. A report written before the key existed is reused only when the
checklist it scored is the episode's (cli_common.existing_result).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping

RESUME_KEY = "resume_key"


def episode_digest(episode: Any) -> str:
    """SHA-256 of the episode as parsed (canonical JSON), so reformatting a file changes nothing
    but any change to its content (checklist, house, start, budget, instructions) does."""
    text = json.dumps(episode.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=repr)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _file_digest(path: Any) -> str | None:
    if not path:
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def resume_key(options: Mapping[str, Any], episode: Any) -> dict[str, Any]:
    """The fields a stored result must match to be reused for ``episode`` under ``options``
    (longact_job.job_options: the simulator and agent options of the command line). The planner
    (its label, ablations included) and the instruction kind are compared on the report's own
    fields (cli_common.existing_result); rendering is not compared, only the privileged oracle
    may skip it and it scores the same either way."""
    return {
        "episode_sha256": episode_digest(episode),
        "sensors": options.get("sensors") or "ideal",
        "sim": options.get("sim") or "embedded",
        "move_step": options.get("move_step"),
        "llm_config_sha256": _file_digest(options.get("llm_config")),
        "pose_correction": options.get("pose_correction") or "auto",
        "object_memory": options.get("object_memory") or "tracker",
        # an episode stopped by a time limit is that limit's result, not a whole run's
        "time_limit_s": options.get("time_limit"),
    }


def key_mismatch(stored: Any, wanted: Mapping[str, Any]) -> list[str]:
    """``field: stored X, this run Y`` for each field that differs (empty: the result is reusable).
    A stored key without some field (an older writer) is not held against the run."""
    if not isinstance(stored, dict):
        return []
    return [f"{k}: stored {stored[k]!r}, this run {v!r}" for k, v in wanted.items() if k in stored and stored[k] != v]
