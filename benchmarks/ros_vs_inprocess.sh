#!/bin/bash
# Three dev episodes in-process and through ROS 2 topics (all nodes as processes, loopback-only
# network namespace); prints the GC of each. Figures in README/issue #6 come from this script.
cd "$(dirname "$0")/.."
for ep in dev-005-1 dev-008-0 dev-013-0; do
  .venv/bin/worldmind run --planner deterministic --episode evaluation/data/episodes_dev/$ep.json --out runs/inproc-$ep > runs/inproc-$ep.log 2>&1
  unshare -n sh -c "ip link set lo up; ip link set lo multicast on; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST exec .venv/bin/worldmind ros up sim --episode evaluation/data/episodes_dev/$ep.json --agent deterministic --out runs/ros-$ep" > runs/ros-$ep.log 2>&1
  python3 - "$ep" <<'PY'
import json, sys
ep = sys.argv[1]
a = json.load(open(f"runs/inproc-{ep}/report.json")); b = json.load(open(f"runs/ros-{ep}/report.json"))
print(ep, "in-process GC", a["gc"], "steps", a["steps_total"], "| ROS GC", b["gc"], "steps", b["steps_total"])
PY
done
