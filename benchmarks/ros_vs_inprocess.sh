#!/bin/bash
# Three dev episodes in-process and through ROS 2 (all nodes as processes, loopback-only network
# namespace): skills as ExecuteSkill action goals, camera/base poses from TF (/tf, /tf_static) at
# each image stamp, sim time on /clock. Prints GC and step counts of each; they must be equal.
# PYTHON: the interpreter of the project venv (default .venv/bin/python).
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
mkdir -p runs
for ep in dev-005-1 dev-008-0 dev-013-0; do
  $PY -m worldmind.cli run --planner deterministic --episode evaluation/data/episodes_dev/$ep.json --out runs/inproc-$ep > runs/inproc-$ep.log 2>&1
  unshare -n sh -c "ip link set lo up; ip link set lo multicast on; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST exec $PY -m worldmind.cli ros up sim --episode evaluation/data/episodes_dev/$ep.json --agent deterministic --out runs/ros-$ep" > runs/ros-$ep.log 2>&1
  $PY - "$ep" <<'PY'
import json, sys
ep = sys.argv[1]
a = json.load(open(f"runs/inproc-{ep}/report.json")); b = json.load(open(f"runs/ros-{ep}/report.json"))
log = open(f"runs/ros-{ep}.log").read()
same = a["gc"] == b["gc"] and a["steps_total"] == b["steps_total"] and a["num_actions"] == b["num_actions"]
print(ep, "in-process GC", a["gc"], "steps", a["steps_total"], "actions", a["num_actions"],
      "| ROS GC", b["gc"], "steps", b["steps_total"], "actions", b["num_actions"], "| equal" if same else "| DIFFERENT",
      "| TF failures in log:", log.count("TF lookup failed"))
PY
done
