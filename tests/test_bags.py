"""Recording runs as bags and replaying them: exactness, the replay pipeline, bad input, the CLI.

One short oracle episode (small images, 100 steps: one pickup and one put) is recorded once per
module; the other tests write small bags of their own from its observations."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sim_bridge.replay.backend import ReplayEnvironment, ReplayEnvConfig, ReplayStepError
from sim_bridge.replay.bag import BagReadError, BagReader, BagWriter, EventItem, FrameItem
from evaluation.replay import build_memory, replay_bag
from household.types import Action
from worldmind.cli_bags import EventRecordingAgent, RecordingEnvironment

W, H, STEPS = 64, 48, 100


class EventfulAgent:
    """The oracle plus a few plan/critic/belief events, as a planner with drain_events() emits."""

    def __init__(self, agent: Any) -> None:
        self.agent, self.name, self._events, self.n = agent, agent.name, [], 0

    def reset(self, episode: Any, observation: Any) -> None:
        self.agent.reset(episode, observation)
        self._events.append(("plan", {"goals": [{"id": "g1", "text": "tidy"}], "edges": []}))

    def act(self, observation: Any) -> Action:
        self.n += 1
        if self.n % 10 == 0:
            self._events.append(("critic", {"verdict": "pass", "diagnosis": f"step {self.n} ok"}))
        if self.n == 2:
            self._events.append(("belief", {"events": [{"id": "u1", "t": 0.1, "actor": "alice", "kind": "utterance",
                                                        "action": "say", "observers": ["robot", "alice"],
                                                        "text": "the keys are on the table"}]}))
        return self.agent.act(observation)

    def drain_events(self) -> list[tuple[str, dict]]:
        out, self._events = self._events, []
        return out


class Keep:
    """Keeps every observation the live run produced (to compare with the replay)."""

    def __init__(self, env: Any) -> None:
        self.env, self.observations = env, []

    def reset(self, episode: Any) -> Any:
        obs = self.env.reset(episode)
        self.observations.append(obs)
        return obs

    def step(self, action: Action) -> Any:
        result = self.env.step(action)
        self.observations.append(result.observation)
        return result

    def ground_truth(self) -> Any:
        return self.env.ground_truth()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict[str, Any]:
    from evaluation.episodes import load_episode
    from evaluation.runner import run_episode
    from sim_bridge.embedded.env import EmbeddedConfig, EmbeddedEnvironment
    from evaluation.dev_set import default_episode_file
    from planner.factory import make_agent

    root = tmp_path_factory.mktemp("bags")
    episode = load_episode(default_episode_file())
    env = EmbeddedEnvironment(EmbeddedConfig(width=W, height=H, render=True))
    keep = Keep(env)
    path = root / "run.mcap"
    with BagWriter(path) as writer:
        agent = EventRecordingAgent(EventfulAgent(make_agent("oracle", env)), writer)
        result, _ = run_episode(RecordingEnvironment(keep, writer), agent, episode, max_steps=STEPS)
    return {"path": path, "live": keep.observations, "result": result, "root": root, "env": env}


def frames_of(path: Path) -> list[FrameItem]:
    return [i for i in BagReader(path) if isinstance(i, FrameItem)]


def assert_same_obs(a: Any, b: Any) -> None:
    assert a.step == b.step and a.intrinsics == b.intrinsics and a.agent == b.agent and a.feedback == b.feedback
    assert np.array_equal(a.world_from_camera, b.world_from_camera)
    assert a.rgb.tobytes() == b.rgb.tobytes() and a.depth.tobytes() == b.depth.tobytes()
    assert np.array_equal(a.instance_ids, b.instance_ids) and a.id_to_label == b.id_to_label


def memory_summary(memory: Any) -> list[tuple]:
    return [(r.object_id, r.label, tuple(np.round(r.center, 12)), len(memory.object_voxels(r.object_id)))
            for r in memory.objects()]


def test_bag_holds_the_run_exactly(recorded):
    frames = frames_of(recorded["path"])
    live = recorded["live"]
    assert len(frames) == len(live) == STEPS + 1
    for item, obs in zip(frames, live):
        assert_same_obs(item.observation, obs)
    stamps = [f.stamp_ns for f in frames]
    assert stamps == sorted(stamps) and stamps[1] - stamps[0] == 100_000_000  # 10 Hz
    picks = [f for f in frames if f.observation.feedback.action == "PickupObject" and f.observation.feedback.success]
    assert picks and picks[0].action_object_id == picks[0].observation.agent.held_object_id


def test_replayed_memory_equals_live_memory(recorded):
    live = build_memory(recorded["live"])
    replayed = build_memory(f.observation for f in frames_of(recorded["path"]))
    assert len(live) > 3
    assert memory_summary(replayed) == memory_summary(live)


def test_replay_bag_scores_and_writes_reports(recorded, tmp_path):
    result = replay_bag(recorded["path"], tmp_path / "out")
    saved = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert saved["frames"] == result["frames"] == STEPS + 1 and saved["error"] is None
    assert abs(saved["bag_duration_s"] - (STEPS + 1) * 0.1) < 1e-6 and saved["x_real_time"] > 0
    assert saved["memory_objects"] == len(build_memory(recorded["live"]))
    mem = saved["memory"]
    assert mem is not None and mem["precision"] > 0.5 and mem["recall_visible"] > 0.5
    assert saved["events"]["goal_dag"] == 1 and saved["events"]["critic_directive"] == STEPS // 10
    assert saved["events"]["ground_truth"] >= 2  # first frame + the pickup at least
    assert saved["belief_events"] >= 3  # the utterance + pickup + put
    qa = saved["belief_qa"]
    # where things are is known from the bag; a state the bag never showed (is the phone on?)
    # may be unknown, never a confident wrong answer
    assert qa["questions"] >= 1 and all(r["correct"] or r["status"] == "unknown" for r in qa["items"])
    assert all(r["correct"] for r in qa["items"] if r["question"].startswith("where"))
    tqa = saved["trajectory_qa"]
    assert tqa["questions"] > 0 and tqa["scored"] is False
    assert any("PickupObject" in q["question"] or "picked up" in q["question"] for q in tqa["items"])
    assert "# Replay of" in (tmp_path / "out" / "replay.md").read_text()
    again = replay_bag(recorded["path"], tmp_path / "again")
    for key in ("frames", "memory", "belief_qa", "trajectory_qa", "events"):
        assert again[key] == result[key]  # deterministic


def test_trajectory_qa_can_be_scored_with_an_answerer(recorded, tmp_path):
    result = replay_bag(recorded["path"], tmp_path, answerer=lambda q: None)
    assert result["trajectory_qa"]["scored"] and result["trajectory_qa"]["accuracy"]["overall"] == 0.0


def test_writer_names_an_unknown_topic_key_and_writes_nothing(tmp_path):
    from sim_bridge.ros.topics import topic_names

    with pytest.raises(KeyError, match="names: unknown topic key.*'colour'"):
        BagWriter(tmp_path / "run.mcap", names={**topic_names(), "colour": "/camera/colour"})
    with pytest.raises(KeyError, match="exclude: unknown topic key.*'colour'"):
        BagWriter(tmp_path / "run.mcap", exclude=("colour",))
    assert not (tmp_path / "run.mcap").exists()


def test_sqlite3_and_folder_storage(recorded, tmp_path):
    live = recorded["live"][:3]
    for name in ("run.db3", "run_dir"):
        with BagWriter(tmp_path / name, storage="sqlite3") as w:
            for obs in live:
                w.write_observation(obs)
        got = frames_of(tmp_path / name)
        assert len(got) == 3
        assert_same_obs(got[2].observation, live[2])
    assert (tmp_path / "run_dir" / "metadata.yaml").exists()
    with pytest.raises(FileExistsError):
        BagWriter(tmp_path / "run.db3")


def test_truncated_sqlite3_bag_keeps_the_frames_before_the_cut(recorded, tmp_path):
    """Before: a .db3 cut at 90% recovered 0 frames (SQLite refuses a file shorter than its header
    says). Now the frames before the cut come back exactly as recorded (a blob that ran into the
    lost part is not handed back zero-filled), the damage is named, and no temporary copy stays."""
    import tempfile

    live = recorded["live"][:40]
    whole = tmp_path / "run.db3"
    with BagWriter(whole, storage="sqlite3") as w:
        for obs in live:
            w.write_observation(obs)
    data = whole.read_bytes()
    before = set(Path(tempfile.gettempdir()).glob(".salvage-*.db3"))
    for frac in (0.9, 0.5):
        cut = tmp_path / f"cut{int(frac * 100)}.db3"
        cut.write_bytes(data[: int(len(data) * frac)])
        reader, got = BagReader(cut), []
        with pytest.raises(BagReadError, match=cut.name):
            for item in reader:
                if isinstance(item, FrameItem):
                    got.append(item)
        assert len(got) >= int(len(live) * frac * 0.6), (frac, len(got))
        for item in got:
            assert_same_obs(item.observation, live[item.observation.step - live[0].step])
        assert any("index unreadable" in p for p in reader.stats.problems)
    assert set(Path(tempfile.gettempdir()).glob(".salvage-*.db3")) == before


def test_replay_environment_plays_back_and_refuses_to_step(recorded):
    env = ReplayEnvironment(ReplayEnvConfig(bag=str(recorded["path"])))
    first = env.reset()
    assert_same_obs(first, recorded["live"][0])
    assert env.ground_truth().house_id
    with pytest.raises(ReplayStepError, match="cannot perform MoveAhead"):
        env.step(Action("MoveAhead"))
    assert sum(1 for _ in env.observations()) == STEPS + 1


# ---- bad input ---------------------------------------------------------------------------------

def top_level_records(data: bytes) -> list[tuple[int, int]]:
    """(offset, opcode) of an MCAP file's top-level records."""
    out, pos = [], 8
    while pos + 9 <= len(data):
        op, length = data[pos], struct.unpack("<Q", data[pos + 1:pos + 9])[0]
        out.append((pos, op))
        pos += 9 + length
    return out


def test_truncated_bag_names_the_file_and_keeps_what_was_read(recorded, tmp_path):
    data = recorded["path"].read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: int(len(data) * 0.6)])
    with pytest.raises(BagReadError, match="cut.mcap.*truncated") as info:
        replay_bag(cut, tmp_path / "out")
    assert info.value.path == str(cut)
    partial = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert partial["error"] and "cut.mcap" in partial["error"]
    assert 10 < partial["frames"] < STEPS + 1 and partial["memory_objects"] > 0
    assert (tmp_path / "out" / "replay.md").read_text().count("Stopped early") == 1


def test_corrupt_bag_names_the_file_and_keeps_what_was_read(recorded, tmp_path):
    data = bytearray(recorded["path"].read_bytes())
    chunks = [off for off, op in top_level_records(bytes(data)) if op == 0x06]
    assert len(chunks) >= 3
    data[chunks[2]:chunks[2] + 64] = b"\xff" * 64  # the third chunk's header (and checksum) is garbage
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(bytes(data))
    with pytest.raises(BagReadError, match="bad.mcap"):
        replay_bag(bad, tmp_path / "out")
    partial = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert partial["error"] and 0 < partial["frames"] < STEPS + 1


def test_recorded_chunks_carry_their_crc(recorded):
    """rosbags alone writes CRC 0 ("none") into every chunk; ours carries the CRC-32 of its data."""
    import struct
    from binascii import crc32

    from sim_bridge.replay.mcap_crc import CHUNK_CRC_OFFSET

    data = recorded["path"].read_bytes()
    chunks = [off for off, op in top_level_records(data) if op == 0x06]
    assert chunks
    for off in chunks:
        size, = struct.unpack_from("<Q", data, off + CHUNK_CRC_OFFSET - 8)
        crc, = struct.unpack_from("<I", data, off + CHUNK_CRC_OFFSET)
        name_len, = struct.unpack_from("<I", data, off + CHUNK_CRC_OFFSET + 4)
        compression = data[off + CHUNK_CRC_OFFSET + 8: off + CHUNK_CRC_OFFSET + 8 + name_len]
        assert compression == b""  # stored: the payload is the chunk's data itself
        start = off + CHUNK_CRC_OFFSET + 8 + name_len + 8
        assert crc != 0 and crc == crc32(data[start:start + size])


@pytest.mark.parametrize("index", [True, False], ids=["indexed", "salvage"])
def test_a_flipped_byte_inside_image_data_is_named_not_replayed_as_healthy(recorded, tmp_path, index):
    """Before chunk CRCs this replayed with exit 0 and no problem while precision fell to 0.5."""
    data = bytearray(recorded["path"].read_bytes())
    chunks = [off for off, op in top_level_records(bytes(data)) if op == 0x06]
    spot = chunks[1] + 4096  # inside the second chunk's message data (images dominate it)
    data[spot] ^= 0x5A
    if not index:
        data = data[:-2000]  # no summary: the sequential salvage reader must check the CRC too
    bad = tmp_path / "flipped.mcap"
    bad.write_bytes(bytes(data))
    with pytest.raises(BagReadError, match="flipped.mcap") as info:
        replay_bag(bad, tmp_path / "out")
    assert "checksum" in str(info.value).lower()
    partial = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert partial["error"] and partial["frames"] < STEPS + 1


def test_cli_replay_never_replaces_earlier_results(recorded, tmp_path, capsys):
    from worldmind.cli import main

    out = tmp_path / "r"
    assert main(["replay", str(recorded["path"]), "--out", str(out)]) == 0
    good = (out / "replay.json").read_bytes()
    empty = tmp_path / "empty.mcap"
    empty.write_bytes(b"")
    capsys.readouterr()
    assert main(["replay", str(empty), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "replay.json exists already" in err and "Traceback" not in err
    assert (out / "replay.json").read_bytes() == good


def test_bag_missing_a_topic_is_named_and_the_rest_processed(recorded, tmp_path):
    path = tmp_path / "nocolor.mcap"
    with BagWriter(path, exclude=("color",)) as w:
        for obs in recorded["live"][:5]:
            w.write_observation(obs)
    reader = BagReader(path)
    frames = [i for i in reader if isinstance(i, FrameItem)]
    assert len(frames) == 5 and frames[0].observation.rgb is None
    assert np.array_equal(frames[4].observation.instance_ids, recorded["live"][4].instance_ids)
    assert reader.stats.missing_topics == ["/worldmind/camera/color/image_raw"]
    assert any("lacks topic /worldmind/camera/color/image_raw" in p for p in reader.stats.problems)
    assert len(build_memory(f.observation for f in frames)) > 0


def test_unknown_message_type_is_named_and_skipped(recorded, tmp_path):
    from rosbags.typesys import Stores, get_typestore
    from rosbags.typesys.msg import get_types_from_msg

    custom = get_typestore(Stores.ROS2_JAZZY)
    custom.register(get_types_from_msg("int32 x", "my_pkg/msg/Custom"))
    path = tmp_path / "custom.mcap"
    with BagWriter(path) as w:
        for i, obs in enumerate(recorded["live"][:3]):
            stamp = w.write_observation(obs)
            w.write_message("/my/custom", "my_pkg/msg/Custom", custom.types["my_pkg/msg/Custom"](x=i), stamp + 1,
                            typestore=custom)
    reader = BagReader(path)
    assert sum(isinstance(i, FrameItem) for i in reader) == 3
    assert reader.stats.skipped_types == {"/my/custom": "my_pkg/msg/Custom"}
    assert any("/my/custom: unknown message type my_pkg/msg/Custom" in p for p in reader.stats.problems)


def test_out_of_order_stamps_are_counted_and_handled_deterministically(recorded, tmp_path):
    path = tmp_path / "ooo.mcap"
    live = recorded["live"][:6]
    with BagWriter(path) as w:
        for _i, obs in enumerate(live[:5]):
            w.write_observation(obs)
        # frame 5 arrives last but carries frame 2's stamp (a driver clock jump)
        w.write_observation(live[5], stamp_ns=w.stamp_of_frame(2), log_time_ns=w.stamp_of_frame(5))

    def read() -> tuple[list[int], Any]:
        reader = BagReader(path)
        return [f.observation.step for f in reader if isinstance(f, FrameItem)], reader.stats

    steps, stats = read()
    assert steps == [0, 1, 2, 3, 4]
    assert stats.out_of_order >= 6  # each sensor topic of that frame
    assert any("stamps going backwards" in p for p in stats.problems)
    assert read()[0] == steps and read()[1].out_of_order == stats.out_of_order


def test_malformed_json_on_a_string_topic_is_named_skipped_and_counted(recorded, tmp_path):
    path = tmp_path / "json.mcap"
    with BagWriter(path) as w:
        for _i, obs in enumerate(recorded["live"][:3]):
            stamp = w.write_observation(obs)
            w.write_event("critic", {"verdict": "pass"})
        w.write_text("/worldmind/critic", "{not json", stamp + 5000)
        w.write_text("/worldmind/plan", json.dumps({"schema": "worldmind/goal_dag", "version": 7, "goals": []}),
                     stamp + 6000)
    reader = BagReader(path)
    items = list(reader)
    assert sum(isinstance(i, FrameItem) for i in items) == 3
    assert [i.kind for i in items if isinstance(i, EventItem)] == ["critic_directive"] * 3
    assert reader.stats.malformed == {"/worldmind/critic": 1, "/worldmind/plan": 1}
    assert any(p.startswith("topic /worldmind/critic: malformed JSON") for p in reader.stats.problems)
    assert any("/worldmind/plan: field 'version'" in p for p in reader.stats.problems)


def test_missing_bag_and_unreadable_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.mcap"):
        BagReader(tmp_path / "nope.mcap")
    junk = tmp_path / "junk.mcap"
    junk.write_bytes(b"this is not a bag")
    with pytest.raises(BagReadError, match="junk.mcap"):
        list(BagReader(junk))


# ---- CLI ---------------------------------------------------------------------------------------

def test_cli_record_and_replay(tmp_path, capsys):
    from worldmind.cli import main

    bag = tmp_path / "cli.mcap"
    assert main(["record", "--out", str(bag), "--max-steps", "8", "--width", "32", "--height", "24"]) == 0
    out = capsys.readouterr().out
    assert "Recorded 9 frame(s)" in out and bag.is_file()
    assert main(["record", "--out", str(bag), "--max-steps", "2"]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(["replay", str(bag), "--out", str(tmp_path / "r"), "--rate-report"]) == 0
    out = capsys.readouterr().out
    assert "Replayed 9 frame(s)" in out and "x real time" in out and "ms per frame" in out
    assert json.loads((tmp_path / "r" / "replay.json").read_text())["frames"] == 9
    assert main(["replay", str(tmp_path / "missing.mcap"), "--out", str(tmp_path / "m")]) == 2
    assert "missing.mcap does not exist" in capsys.readouterr().err
    no_index = tmp_path / "noindex.mcap"  # only the summary at the end is lost: every message is recovered
    no_index.write_bytes(bag.read_bytes()[:-2000])
    assert main(["replay", str(no_index), "--out", str(tmp_path / "n")]) == 0
    out = capsys.readouterr().out
    assert "Replayed 9 frame(s)" in out and "index unreadable" in out
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(bag.read_bytes()[: bag.stat().st_size // 2])
    assert main(["replay", str(cut), "--out", str(tmp_path / "c")]) == 1
    err = capsys.readouterr().err
    assert "cut.mcap" in err and (tmp_path / "c" / "replay.json").exists()
    assert main(["record", "--out", str(tmp_path / "x.mcap"), "--planner", "llm"]) == 2


@pytest.mark.parametrize("planner", ["oracle", "deterministic", "llm:mock/model"])
def test_cli_record_accepts_the_planners_run_accepts(tmp_path, capsys, planner):
    """record checks --planner like run (worldmind.cli.check_planner): every planner run takes
    gets past the planner check (stopped here by the next check, so nothing runs or is called)."""
    from worldmind.cli import main

    out = tmp_path / "x.mcap"
    assert main(["record", "--out", str(out), "--planner", planner, "--max-steps", "0"]) == 2
    err = capsys.readouterr().err
    assert "--max-steps" in err and "planner" not in err and not out.exists()


@pytest.mark.parametrize("planner, words", [("holomind", ["holomind", "oracle", "deterministic", "llm:<model>"]),
                                            ("llm:", ["llm:", "model"])])
def test_cli_record_rejects_unknown_planners_with_one_line(tmp_path, capsys, planner, words):
    from worldmind.cli import main

    assert main(["record", "--out", str(tmp_path / "x.mcap"), "--planner", planner]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("worldmind: error: ")
    assert all(w in err for w in words), err



def test_cli_record_gives_the_agent_its_instruction_kind_and_llm_config(tmp_path, capsys, monkeypatch):
    import worldmind.cli_bags as cli_bags
    from worldmind.cli import CliError, main

    seen = {}

    def fake_make_agent(name, env, **kwargs):
        seen.update(kwargs, name=name)
        raise CliError("stop here")  # nothing runs

    monkeypatch.setattr(cli_bags, "make_agent", fake_make_agent)
    config = tmp_path / "llm.yaml"
    assert main(["record", "--out", str(tmp_path / "x.mcap"), "--planner", "llm:mock/model", "--instruction", "concise",
                 "--llm-config", str(config), "--width", "32", "--height", "24"]) == 2
    assert "stop here" in capsys.readouterr().err
    assert seen == {"name": "llm:mock/model", "instruction_kind": "concise", "llm_config": str(config)}
    assert main(["record", "--out", str(tmp_path / "y.mcap"), "--planner", "deterministic",
                 "--llm-config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "--llm-config" in err and "deterministic" in err and len(err.strip().splitlines()) == 1

def test_cli_record_deterministic_writes_its_plan_to_the_bag(tmp_path, capsys):
    from worldmind.cli import main

    bag = tmp_path / "det.mcap"
    assert main(["record", "--out", str(bag), "--planner", "deterministic", "--max-steps", "3",
                 "--width", "32", "--height", "24"]) == 0
    err = capsys.readouterr().err
    assert "not recorded" not in err, err
    kinds = [i.kind for i in BagReader(bag) if isinstance(i, EventItem)]
    assert "goal_dag" in kinds, kinds


def test_bag_recorded_with_the_old_sensor_names_still_reads(recorded, tmp_path):
    """Sensor topics moved from a driver's names (/camera/..., /odom) to worldmind/...; older bags read."""
    from sim_bridge.ros.topics import LEGACY_NAMES, topic_names

    path = tmp_path / "legacy.mcap"
    with BagWriter(path, names={**topic_names(), **LEGACY_NAMES}) as w:
        for obs in recorded["live"][:3]:
            w.write_observation(obs)
    reader = BagReader(path)
    frames = [i for i in reader if isinstance(i, FrameItem)]
    assert len(frames) == 3 and not reader.stats.missing_topics
    assert np.array_equal(frames[2].observation.instance_ids, recorded["live"][2].instance_ids)
