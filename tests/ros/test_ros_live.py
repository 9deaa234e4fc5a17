"""Real rclpy, real DDS, separate node processes, each test inside a private network namespace
(``conftest.isolated``): (b) an episode through ROS topics reaches the in-process GC; (c)
malformed JSON and unknown object ids are logged naming the topic and the node lives on;
(d) shutdown on SIGINT/SIGTERM is clean (status, no traceback)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, in_netns, isolated  # noqa: F401
from worldmind.tether import tethered

EPISODE = REPO / "evaluation" / "data" / "episodes_dev" / "dev-001-1.json"
SCRIPTED_ACTIONS = 200  # the oracle's first 200 actions: GC 2/7 on this episode, a partial result


def _agents() -> list:
    return [pytest.param("scripted", id="scripted"), pytest.param("deterministic", id="deterministic")]


def _scripted_file(tmp: Path) -> Path:
    """The oracle's actions on the episode, recorded in-process (privileged, test set-up only)
    and cut short; the agent that replays them over ROS sees nothing but observations."""
    from evaluation import runner
    from evaluation.episodes import load_episode
    from sim_bridge.factory import make_environment
    from planner.factory import make_agent
    from worldmind_ros.scripted_agent import RecordingAgent, record_actions

    env = make_environment("embedded", render=False)
    rec = RecordingAgent(make_agent("oracle", env))
    runner.run_episode(env, rec, load_episode(EPISODE))
    return record_actions(tmp / "actions.json", rec.actions[:SCRIPTED_ACTIONS])


def _in_process(agent_spec: str, actions: Path | None) -> dict:
    from evaluation import runner
    from evaluation.episodes import load_episode
    from sim_bridge.factory import make_environment
    from planner.factory import make_agent
    from worldmind_ros.scripted_agent import ScriptedAgent

    env = make_environment("embedded")
    agent = ScriptedAgent.from_file(actions) if agent_spec == "scripted" else make_agent(agent_spec, env)
    result, _ = runner.run_episode(env, agent, load_episode(EPISODE))
    return result.to_dict()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("agent", _agents())
@isolated(timeout=560)
def test_episode_over_ros_reaches_in_process_gc(agent, tmp_path):
    actions = _scripted_file(tmp_path) if agent == "scripted" else None
    spec = f"scripted:{actions}" if agent == "scripted" else agent
    expected = _in_process(agent, actions)
    result_file = tmp_path / "ros_result.json"
    cmd = [sys.executable, "-m", "worldmind.cli", "ros", "up", "sim", "--episode", str(EPISODE), "--agent", spec,
           "--param", f"sim_bridge.result_file:={result_file}", "--out", str(tmp_path / "report"),
           "--max-runtime", "400"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=500)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log[-5000:]
    assert "Traceback" not in log, log[-5000:]
    got = json.loads(result_file.read_text())
    for key in ("gc", "sr", "num_actions", "failed_actions", "steps_nav", "steps_manip", "steps_total", "ir"):
        assert got[key] == pytest.approx(expected[key], abs=1e-9), (key, got[key], expected[key])
    if agent == "scripted":
        assert 0 < got["gc"] < 1 and got["num_actions"] == SCRIPTED_ACTIONS
    assert (tmp_path / "report" / "report.json").is_file()
    # The same launcher streamed every node's log with its prefix and shut them all down.
    for name in ("sim_bridge", "perception", "memory", "belief", "planner", "critic"):
        assert f"[worldmind ros] started {name}" in log
    assert "shutting down (sim_bridge finished)" in log


def _start(module: str, *params: str, name: str | None = None) -> subprocess.Popen:
    argv = [sys.executable, "-u", "-m", f"worldmind_ros.{module}", "--ros-args"]
    if name:
        argv += ["-r", f"__node:={name}"]
    for p in params:
        argv += ["-p", p]
    # tethered: a test process killed at its timeout takes its nodes with it
    return subprocess.Popen(tethered(argv), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))


def _kill_left(procs: list[subprocess.Popen]) -> None:
    """Whatever a failed assertion left running: killed, so no node outlives its test."""
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.communicate(timeout=20)


class Probe:
    """A tiny rclpy node in the test process (inside the namespace) to poke the nodes."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.node import Node
        from std_msgs.msg import String

        from worldmind_ros.runtime import qos

        self.rclpy = rclpy
        self.String = String
        rclpy.init()
        self.node = Node("probe")
        self.pubs: dict[str, object] = {}
        self.got: dict[str, list[str]] = {}
        self.qos = qos

    def pub(self, topic: str, text: str) -> None:
        if topic not in self.pubs:
            self.pubs[topic] = self.node.create_publisher(self.String, topic, self.qos("reliable"))
            self.spin(1.0)  # let discovery match
        self.pubs[topic].publish(self.String(data=text))

    def listen(self, topic: str) -> list[str]:
        box = self.got.setdefault(topic, [])
        self.node.create_subscription(self.String, topic, lambda m: box.append(m.data), self.qos("reliable"))
        return box

    def spin(self, seconds: float, until=lambda: False) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not until():
            self.rclpy.spin_once(self.node, timeout_sec=0.05)

    def close(self) -> None:
        self.node.destroy_node()
        self.rclpy.shutdown()


def _stop(proc: subprocess.Popen, sig: int = signal.SIGINT) -> tuple[int, str]:
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=20)
    return proc.returncode, out


@pytest.mark.timeout(300)
@isolated(timeout=280)
def test_malformed_json_and_unknown_object_id_keep_nodes_alive():
    from sim_bridge.ros import payloads

    memory = _start("memory_node")
    sim = _start("sim_bridge_node", "request_timeout_s:=60.0", "width:=160", "height:=120")
    probe = Probe()
    try:
        answers = probe.listen("/worldmind/memory/answer")
        results = probe.listen("/worldmind/skill/result")
        probe.spin(3.0)
        q = "/worldmind/memory/query"
        probe.pub(q, "{not json")
        probe.pub(q, json.dumps({"schema": "worldmind/memory_query", "version": 1, "text": "mug"}))  # no id
        probe.pub(q, payloads.encode("memory_query", {"id": "q1", "text": "999", "kind": "object"}))
        probe.pub(q, payloads.encode("memory_query", {"id": "q2", "text": "mug", "k": 3}))
        probe.spin(10.0, until=lambda: len(answers) >= 2)
        by_id = {json.loads(a)["id"]: json.loads(a) for a in answers}
        assert by_id["q1"]["status"] == "error" and "unknown object id" in by_id["q1"]["error"]
        assert by_id["q2"]["status"] == "ok"  # answered after the bad ones: alive and serving

        r = "/worldmind/skill/request"
        # Under load discovery can lag: an answer sent before the result topic matched is lost
        # (volatile QoS), so wait until the simulator's result publisher is seen.
        probe.spin(20.0, until=lambda: probe.node.count_publishers("/worldmind/skill/result") > 0)
        probe.pub(r, "[1, 2")
        probe.pub(r, payloads.encode("skill_request", {"id": "s1", "skill": "Fly", "args": {}}))
        probe.pub(r, payloads.encode("skill_request", {"id": "s2", "skill": "PickupObject",
                                                       "args": {"object_id": "NoSuchThing|1"}}))
        probe.spin(15.0, until=lambda: len(results) >= 2)
        res = {json.loads(x)["id"]: json.loads(x) for x in results}
        assert res["s1"]["success"] is False and "unknown skill 'Fly'" in res["s1"]["error"]
        assert res["s2"]["success"] is False  # executed, failed in the simulator, as in-process
        assert memory.poll() is None and sim.poll() is None
    finally:
        probe.close()
        code_m, out_m = _stop(memory)
        code_s, out_s = _stop(sim)
    assert "topic /worldmind/memory/query: malformed JSON" in out_m, out_m[-3000:]
    assert "topic /worldmind/memory/query: field 'id': missing" in out_m, out_m[-3000:]
    assert "topic /worldmind/memory/query: query q1: unknown object id '999'" in out_m, out_m[-3000:]
    assert "topic /worldmind/skill/request: malformed JSON" in out_s, out_s[-3000:]
    assert "topic /worldmind/skill/request: request s2: unknown object id 'NoSuchThing|1'" in out_s, out_s[-3000:]
    assert code_m == 0 and code_s == 0 and "Traceback" not in out_m + out_s


@pytest.mark.timeout(300)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@isolated(timeout=280)
def test_nodes_shut_down_cleanly_on_signals(sig, tmp_path):
    script = tmp_path / "stop.json"
    script.write_text('{"actions": []}')
    procs = {m: _start(m) for m in ("perception_node", "memory_node", "belief_node", "critic_node")}
    procs["planner_node"] = _start("planner_node", f"agent:=scripted:{script}")
    try:
        time.sleep(6.0)
        for m, p in procs.items():
            assert p.poll() is None, f"{m} died: {p.communicate()[0][-2000:]}"
        for m, p in procs.items():
            code, out = _stop(p, sig)
            assert code == 0, (m, out[-2000:])
            assert "Traceback" not in out and f"{signal.Signals(sig).name}: shutting down" in out, (m, out[-2000:])
    finally:
        _kill_left(list(procs.values()))


@pytest.mark.timeout(300)
@isolated(timeout=280)
def test_launcher_ctrl_c_stops_the_whole_graph_cleanly(tmp_path):
    cmd = [sys.executable, "-u", "-m", "worldmind.cli", "ros", "up", "sim", "--log-dir", str(tmp_path / "logs"),
           "--param", "sim_bridge.width:=160", "--param", "sim_bridge.height:=120",
           "--agent", f"scripted:{tmp_path / 'wait.json'}"]
    (tmp_path / "wait.json").write_text(json.dumps({"actions": [{"action": "RotateLeft"}] * 100000}))
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(12.0)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out[-4000:]  # interrupted, no node failed
    assert "Traceback" not in out, out[-4000:]
    for name in ("sim_bridge", "perception", "memory", "belief", "planner", "critic"):
        assert f"[{name}" in out and (tmp_path / "logs" / f"{name}.log").is_file()
        # the launcher stops its nodes with SIGTERM (see worldmind/cli_ros.py: Launcher.shutdown)
        assert "SIGTERM: shutting down" in (tmp_path / "logs" / f"{name}.log").read_text(), name
    assert "FAILED" not in out


@pytest.mark.timeout(200)
@isolated(timeout=180)
def test_ctrl_c_while_the_nodes_are_still_importing_prints_no_traceback(tmp_path):
    """Issue 16: a node interrupted while importing printed a KeyboardInterrupt traceback."""
    cmd = [sys.executable, "-u", "-m", "worldmind.cli", "ros", "up", "sim", "--param", "sim_bridge.width:=160",
           "--param", "sim_bridge.height:=120", "--agent", f"scripted:{tmp_path / 'wait.json'}"]
    (tmp_path / "wait.json").write_text(json.dumps({"actions": [{"action": "RotateLeft"}] * 1000}))
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in proc.stdout:  # Ctrl-C as soon as the last node is started: all are still importing
        seen.append(line)
        if "started critic" in line:
            break
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    out = "".join(seen) + out
    assert "started critic" in out and "Traceback" not in out, out[-3000:]
    assert "KeyboardInterrupt" not in out and "Fatal Python error" not in out, out[-3000:]
    assert proc.returncode == 130 and "FAILED" not in out, out[-3000:]


@pytest.mark.timeout(300)
@isolated(timeout=280)
def test_replay_graph_plays_a_recorded_bag_into_the_memory(tmp_path):
    bag = tmp_path / "short.mcap"
    r = subprocess.run([sys.executable, "-m", "worldmind.cli", "record", "--episode", str(EPISODE), "--max-steps", "30",
                        "--width", "160", "--height", "120", "--out", str(bag)],
                       cwd=REPO, capture_output=True, text=True, timeout=200)
    assert r.returncode == 0 and bag.exists(), r.stdout + r.stderr
    saved = tmp_path / "memory"
    r = subprocess.run([sys.executable, "-m", "worldmind.cli", "ros", "up", "replay", "--bag", str(bag),
                        "--param", f"memory.save_path:={saved}", "--max-runtime", "200"],
                       cwd=REPO, capture_output=True, text=True, timeout=250)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log[-4000:]
    assert "played: 31 frame(s)" in log and "shutting down (bag_player finished)" in log
    from memory.spatial.store import load_memory

    assert len(load_memory(saved)) > 0  # the replayed frames reached the spatial memory
