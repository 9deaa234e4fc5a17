"""Sensor frame -> spatial-memory update latency through real rclpy topics.

What it measures: a publisher (this process) sends embedded-simulator frames (320x240 color,
depth, instance ids + label table, camera info, odometry; all stamped with the publish time) at
10 Hz on WorldMind's topics, and the frame's TF tree (map -> odom -> base_link -> camera_link ->
optical frame) on /tf and /tf_static at the same stamp; ``memory_node`` runs as its own process (exactly as
``worldmind ros up`` starts it), synchronises the frame, perceives it and integrates it into the
spatial memory, taking the camera and base poses from TF at the image stamp (its tf buffer and
PoseGate, the default ``pose_source: tf``), then publishes ``/worldmind/memory/updates`` carrying the frame's stamp. Latency =
arrival time of that update here - the frame's stamp (same clock: one machine). Also printed: the
memory's own integration time per frame (perception + integration, from the update) and frames
lost (published but never reported). Target: p95 <= 100 ms.

DDS stays off the network: unless already inside a private network namespace (WORLDMIND_NETNS=1)
the script re-executes itself under ``unshare -n`` (root needed, as for the ROS tests).

    .venv/bin/python benchmarks/bench_ros_latency.py [--frames 150] [--hz 10] [--warmup 10]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROS_PKG = REPO / "ros_ws" / "src" / "worldmind_ros"
for p in (str(ROS_PKG), str(REPO)):
    if p not in sys.path:
        sys.path.insert(0, p)


def reexec_isolated() -> int:
    env = dict(os.environ, WORLDMIND_NETNS="1", ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               FASTRTPS_DEFAULT_PROFILES_FILE=str(ROS_PKG / "config" / "fastdds_large_frames.xml"),
               PYTHONPATH=os.pathsep.join([str(ROS_PKG), str(REPO)] + ([os.environ["PYTHONPATH"]]
                                                                      if os.environ.get("PYTHONPATH") else [])))
    sh = 'ip link set lo up && ip link set lo multicast on && exec "$@"'
    try:
        return subprocess.call(["unshare", "-n", "sh", "-c", sh, "sh", sys.executable, *sys.argv], env=env)
    except FileNotFoundError:
        print("bench_ros_latency: unshare not found; run as root on Linux (DDS must not reach the host network)",
              file=sys.stderr)
        return 1


def frames(n: int, width: int, height: int) -> list:
    """A walk through the first dev episode's house: turn, walk, look around."""
    from evaluation.episodes import load_episode
    from sim_bridge.factory import make_environment
    from household.types import Action
    from evaluation.dev_set import default_episode_file

    env = make_environment("embedded", width=width, height=height)
    obs = env.reset(load_episode(default_episode_file()))
    cycle = ["RotateLeft", "MoveAhead", "MoveAhead", "RotateRight", "MoveAhead", "LookDown", "RotateLeft",
             "LookUp", "MoveAhead", "RotateRight", "RotateRight", "MoveAhead"]
    out = [obs]
    while len(out) < n:
        obs = env.step(Action(cycle[len(out) % len(cycle)])).observation
        out.append(obs)
    return out


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=150)
    ap.add_argument("--hz", type=float, default=10.0)
    ap.add_argument("--warmup", type=int, default=10, help="first frames not counted (discovery, caches)")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    args = ap.parse_args()
    if os.environ.get("WORLDMIND_NETNS") != "1":
        return reexec_isolated()

    import dataclasses

    import rclpy
    from rclpy.node import Node
    from std_msgs.msg import String

    from sim_bridge.ros.convert import MessageClasses, observation_to_messages
    from worldmind_ros.memory_server import UPDATES_TOPIC
    from worldmind_ros.runtime import message_class, qos, topic_qos
    from sim_bridge.ros.tf import base_matrix, robot_transforms
    from sim_bridge.ros.topics import topic_names
    from worldmind_ros.tf_io import TfPublisher

    t0 = time.perf_counter()
    obs_list = frames(args.frames + args.warmup, args.width, args.height)
    print(f"rendered {len(obs_list)} frames {args.width}x{args.height} in {time.perf_counter() - t0:.1f} s")
    memory = subprocess.Popen([sys.executable, "-m", "worldmind_ros.memory_node", "--ros-args", "-r", "__node:=memory"],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    rclpy.init()
    node = Node("bench_ros_latency")
    names = topic_names()
    keys = ("color", "depth", "camera_info", "instance_ids", "instance_labels", "odom", "camera_pose", "agent_status")
    pubs = {k: node.create_publisher(message_class(k), names[k], topic_qos(k)) for k in keys}
    tf_pub = TfPublisher(node)
    arrivals: dict[int, tuple[int, float]] = {}  # stamp -> (arrival ns, integrate ms)

    def on_update(msg: String) -> None:
        d = json.loads(msg.data)
        arrivals[int(d["stamp_ns"])] = (time.time_ns(), float(d["integrate_ms"]))

    node.create_subscription(String, UPDATES_TOPIC, on_update, qos("reliable"))
    classes = MessageClasses.from_modules()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (node.count_subscribers(names["color"]) == 0
                                           or node.count_publishers(UPDATES_TOPIC) == 0):
        rclpy.spin_once(node, timeout_sec=0.1)
    time.sleep(1.0)
    sent: list[int] = []
    period = 1.0 / args.hz
    start = time.monotonic()
    for i, obs in enumerate(obs_list):
        due = start + i * period
        while time.monotonic() < due:
            rclpy.spin_once(node, timeout_sec=max(0.0, min(0.005, due - time.monotonic())))
        stamp = time.time_ns()
        tf_pub.send(robot_transforms(base_matrix(obs.agent.position, obs.agent.yaw_deg), obs.world_from_camera, stamp))
        for key, msg in observation_to_messages(dataclasses.replace(obs, step=i), classes, stamp).items():
            if key in pubs:
                pubs[key].publish(msg)
        if i >= args.warmup:
            sent.append(stamp)
    end = time.monotonic() + 3.0
    while time.monotonic() < end and not all(s in arrivals for s in sent):
        rclpy.spin_once(node, timeout_sec=0.05)
    node.destroy_node()
    rclpy.shutdown()
    memory.send_signal(2)
    mem_log, _ = memory.communicate(timeout=20)

    lat = [(arrivals[s][0] - s) / 1e6 for s in sent if s in arrivals]
    integ = [arrivals[s][1] for s in sent if s in arrivals]
    lost = len(sent) - len(lat)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpu(s), python {platform.python_version()}, "
          f"rclpy (Fast DDS), memory_node in its own process, {args.hz:g} Hz, {args.width}x{args.height}, "
          f"poses from TF lookups at each image stamp")
    if not lat:
        print("no memory updates arrived; memory_node log:\n" + mem_log[-3000:])
        return 1
    print(f"frames: {len(sent)} measured (after {args.warmup} warm-up), {lost} lost")
    if "TF lookup failed" in mem_log:
        print(f"TF lookups that failed: {mem_log.count('TF lookup failed')} (memory_node log)")
    print(f"sensor frame -> memory update latency: p50 {pct(lat, 50):.1f} ms   p95 {pct(lat, 95):.1f} ms   "
          f"max {max(lat):.1f} ms   (target p95 <= 100 ms: {'met' if pct(lat, 95) <= 100 else 'NOT met'})")
    print(f"  of which perception + memory integration: p50 {pct(integ, 50):.1f} ms   p95 {pct(integ, 95):.1f} ms   "
          f"max {max(integ):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
