"""HoloMind (deterministic planner) on dev episodes with person-written free-form instructions
instead of the episodes' own template ones: mean GC and SR of both, same episodes, same agent.

    .venv/bin/python benchmarks/bench_freeform_episodes.py [--part tune|heldout] [--every K] [--out runs/freeform-eps]
        [--workers N]

Writes two episode folders under --out (template/ and freeform/: copies of the dev episodes, the
latter with "detailed" replaced by the free-form entry's text), runs ``worldmind eval longact
--planner deterministic`` on each (resumable), and prints both mean GCs and their difference.
The free-form split is benchmarks/freeform_split.py's. A subset (``--every``) is labelled as such.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.freeform_split import DEFAULT_FREEFORM, load_freeform  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--freeform", default=str(DEFAULT_FREEFORM))
    ap.add_argument("--part", default="tune", choices=("tune", "heldout"))
    ap.add_argument("--every", type=int, default=1, help="every K-th entry of the part (sorted by episode id)")
    ap.add_argument("--out", default=str(ROOT / "runs/freeform-eps"))
    ap.add_argument("--workers", type=int, default=1, help="passed to worldmind eval longact")
    args = ap.parse_args()
    entries = sorted((e for e in load_freeform(args.freeform) if e["style"] == "episode" and e["split"] == args.part),
                     key=lambda e: e["episode_id"])[::args.every]
    out = Path(args.out) / args.part
    dev = ROOT / "evaluation/data/episodes_dev"
    for kind in ("template", "freeform"):
        folder = out / "episodes" / kind
        folder.mkdir(parents=True, exist_ok=True)
        for e in entries:
            ep = json.loads((dev / e["episode_file"]).read_text())
            if kind == "freeform":
                ep["instructions"]["detailed"] = e["detailed"]
            (folder / e["episode_file"]).write_text(json.dumps(ep))
    gcs, srs = {}, {}
    for kind in ("template", "freeform"):
        run_dir = out / f"run-{kind}"
        subprocess.run([sys.executable, "-m", "worldmind.cli", "eval", "longact", "--episodes",
                        str(out / "episodes" / kind), "--planner", "deterministic", "--out", str(run_dir),
                        "--workers", str(args.workers)],
                       check=True, cwd=ROOT)
        summary = json.loads((run_dir / "summary.json").read_text())
        gcs[kind] = summary["means"]["gc"]
        srs[kind] = summary["means"]["sr"]
    print(f"{len(entries)} dev episodes ({args.part} part, every {args.every}): "
          f"template GC {gcs['template']:.3f} (SR {srs['template']:.3f})  free-form GC {gcs['freeform']:.3f} "
          f"(SR {srs['freeform']:.3f})  difference {gcs['freeform'] - gcs['template']:+.3f}")


if __name__ == "__main__":
    main()
