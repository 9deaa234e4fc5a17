#!/bin/bash
# Dev episodes in-process and through ROS 2 (all nodes as processes, loopback-only network
# namespace): skills as ExecuteSkill action goals, camera/base poses from TF (/tf, /tf_static) at
# each image stamp, sim time on /clock. Prints GC and step counts of each; they must be equal.
# PYTHON: the interpreter of the project venv (default .venv/bin/python).
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
mkdir -p runs
# Three v1 episodes, and a v2 one whose goals need pours (wine into a mug, water onto a plant:
# FillObjectWithLiquid with its fillLiquid, the ExecuteSkill `pour` skill). EPISODES overrides.
EPISODES=${EPISODES:-"episodes_dev/dev-005-1 episodes_dev/dev-008-0 episodes_dev/dev-013-0 episodes_dev_v2/dev-054-0"}
for path in $EPISODES; do
  ep=$(basename "$path")
  $PY -m worldmind.cli run --planner deterministic --episode evaluation/data/$path.json --out runs/inproc-$ep > runs/inproc-$ep.log 2>&1
  unshare -n sh -c "ip link set lo up; ip link set lo multicast on; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST exec $PY -m worldmind.cli ros up sim --episode evaluation/data/$path.json --agent deterministic --out runs/ros-$ep" > runs/ros-$ep.log 2>&1
  $PY - "$ep" <<'PY'
import json, sys
ep = sys.argv[1]
a = json.load(open(f"runs/inproc-{ep}/report.json")); b = json.load(open(f"runs/ros-{ep}/report.json"))
log = open(f"runs/ros-{ep}.log").read()
same = a["gc"] == b["gc"] and a["steps_total"] == b["steps_total"] and a["num_actions"] == b["num_actions"]
fills = [(i["satisfied"], j["satisfied"]) for i, j in zip(a["checklist"], b["checklist"])
         if i["predicate"] == "isFilledWithLiquid"]
print(ep, "fill items met in-process/ROS", fills, "| in-process GC", a["gc"], "steps", a["steps_total"], "actions", a["num_actions"],
      "| ROS GC", b["gc"], "steps", b["steps_total"], "actions", b["num_actions"], "| equal" if same else "| DIFFERENT",
      "| TF failures in log:", log.count("TF lookup failed"))
PY
done
