"""A stand-in AI2-THOR player: THOR's FIFO wire protocol in front of the embedded simulator.

``ai2thor.Controller(local_executable_path=command(), x_display=":0")`` spawns this module the way
it spawns a Unity build, and the REAL Controller then talks to it through the real FIFO server.
That makes the thor backend testable (and runnable) without a Unity build or a GPU: the test
checks exactly what the bridge sends, and the answers come from a real simulator.

Protocol (ai2thor 5.0 ``fifo_server``): frames are ``struct "!BI"`` (field type, length) + body; a
message ends with field 255. The Controller writes JSON actions (field 2) into
``$AI2THOR_FIFO_CLIENT_PIPE_PATH``; the player answers on ``$AI2THOR_FIFO_SERVER_PIPE_PATH`` with
msgpack metadata (field 1) whose ``sequenceId`` echoes the action's, then RGB (4), float32
depth in metres (5) and RGBA instance colours (9), all bottom row first. Instance colours are
named in the metadata's ``colors`` list, as THOR does.

What is simulated is what the embedded simulator implements (ProcTHOR houses via ``CreateHouse``,
the ALFRED actions, ``TeleportFull``, ``Done`` and ``Pass``); anything else is answered as THOR answers an
unknown action (``errorCode: InvalidAction``). ``forceAction`` and other tuning flags are ignored.

Run ``python -m sim_bridge.thor.fake_player --help`` for the options; ``--log`` writes every
received action as one JSON line, ``--stall`` makes a player that never answers (for timeouts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import struct
import sys
import time
from typing import IO, Any, cast

import msgpack
import numpy as np

from sim_bridge.embedded.collision import CollisionMap
from sim_bridge.embedded.env import AgentPose, EmbeddedConfig, EmbeddedEnvironment
from household.house_data import HouseError
from household.interactions import BY_ACTION, INTERACTIONS
from household.types import Action, Observation

HEADER = struct.Struct("!BI")
METADATA, ACTION, RGB_IMAGE, DEPTH_IMAGE, IDS_IMAGE, END_OF_MESSAGE = 1, 2, 4, 5, 9, 255
# THOR 5.0 action -> argument the embedded simulator reads (magnitudes travel in Action.args).
SIM_ACTIONS = {
    "MoveAhead": "moveMagnitude", "MoveBack": "moveMagnitude", "MoveLeft": "moveMagnitude",
    "MoveRight": "moveMagnitude", "RotateLeft": "degrees", "RotateRight": "degrees",
    "LookUp": "degrees", "LookDown": "degrees", "Crouch": None, "Stand": None,
    **{i.action: None for i in INTERACTIONS},  # every interaction of household.interactions
}


def command(log_path: str | None = None, stall: str | None = None) -> str:
    """The ``local_executable_path`` string that starts this player with the current Python."""
    parts = [sys.executable, "-m", "sim_bridge.thor.fake_player"]
    if log_path:
        parts += ["--log", str(log_path)]
    if stall:
        parts += ["--stall", stall]
    return shlex.join(parts)


def object_color(object_id: str, taken: set[tuple[int, int, int]]) -> tuple[int, int, int]:
    """A colour derived from the id (like THOR, not from any index the bridge could guess),
    never black (background) and unique within the scene."""
    salt = 0
    while True:
        digest = hashlib.sha1(f"{object_id}#{salt}".encode()).digest()
        color = (digest[0], digest[1], digest[2] | 1)
        if color not in taken:
            taken.add(color)
            return color
        salt += 1


class Player:
    """Answers one action message at a time; holds the simulator state between messages."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.init: dict[str, Any] = {}
        self.env: EmbeddedEnvironment | None = None
        self.obs: Observation | None = None
        self.colors: dict[str, tuple[int, int, int]] = {}

    # ---- actions ----------------------------------------------------------------------------
    def handle(self, msg: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[int, bytes]]]:
        name = str(msg.get("action"))
        ok, error, code, ret = True, "", "", None
        try:
            if name == "ChangeResolution":
                if self.env is not None:
                    raise ValueError("the stand-in cannot change resolution after CreateHouse")
                self.width, self.height = int(msg["x"]), int(msg["y"])
            elif name == "Reset":
                if msg.get("sceneName") != "Procedural":
                    raise ValueError(f"the stand-in only builds ProcTHOR houses, not scene {msg.get('sceneName')!r}")
                self.env = self.obs = None
            elif name == "Initialize":
                self.init = {k: v for k, v in msg.items() if k not in ("action", "sequenceId")}
                ret = {"cameraNearPlane": 0.1, "cameraFarPlane": 20.0}
            elif name == "CreateHouse":
                self._create_house(msg["house"])
            elif name == "TeleportFull":
                self._teleport(msg)
            elif name in SIM_ACTIONS:
                ok, error = self._sim_step(name, msg)
            elif name not in ("Done", "Pass"):  # THOR's no-ops
                ok, error, code = False, f"Invalid action: {name}", "InvalidAction"
        except (HouseError, ValueError, KeyError, TypeError) as exc:
            ok, error = False, f"{name}: {exc}"
        return self.answer(msg, name, ok, error, code, ret)

    def hello(self) -> tuple[dict[str, Any], list[tuple[int, bytes]]]:
        """The unsolicited first event a player sends once the Controller listens."""
        return self.answer({"sequenceId": 0}, "", True, "", "", None)

    def _create_house(self, house: dict[str, Any]) -> None:
        i = self.init
        cfg = EmbeddedConfig(width=self.width, height=self.height, fov_deg=float(i.get("fieldOfView", 90.0)),
                             move_step=float(i.get("gridSize", 0.25)),
                             rotate_step=float(i.get("rotateStepDegrees", 90.0)),
                             reach=float(i.get("visibilityDistance", 1.5)))
        env = EmbeddedEnvironment(cfg)
        self.obs = env.reset(house)  # HouseError (e.g. an unknown assetId) -> a failed CreateHouse
        self.env = env
        self.colors = {}

    def _teleport(self, msg: dict[str, Any]) -> None:
        """THOR's TeleportFull fails on a blocked spot instead of searching a free one. It uses
        the simulator's privileged pose and collision map: this is test support code."""
        env = self._need_env("TeleportFull")
        pos, rot = msg["position"], msg["rotation"]
        if not cast(CollisionMap, env.collision).is_free(float(pos["x"]), float(pos["z"])):  # a reset env has one
            raise ValueError(f"position ({pos['x']}, {pos['z']}) is not a free floor position")
        env.pose = AgentPose(float(pos["x"]), float(pos["z"]), float(rot["y"]) % 360.0, float(msg["horizon"]),
                             bool(msg.get("standing", True)))
        self.obs = env.step(Action("RotateRight", args={"degrees": 0.0})).observation  # re-render in place

    def _sim_step(self, name: str, msg: dict[str, Any]) -> tuple[bool, str]:
        env = self._need_env(name)
        arg = SIM_ACTIONS[name]
        args: dict[str, Any] = {arg: float(msg[arg])} if arg and arg in msg else {}
        if name in BY_ACTION:  # what an interaction carries, e.g. FillObjectWithLiquid's fillLiquid
            args.update({k: msg[k] for k in BY_ACTION[name].passes if k in msg})
        result = env.step(Action(name, msg.get("objectId"), args))
        self.obs = result.observation
        return result.success, result.error

    def _need_env(self, name: str) -> EmbeddedEnvironment:
        if self.env is None:
            raise ValueError(f"{name} before CreateHouse")
        return self.env

    # ---- answers ----------------------------------------------------------------------------
    def answer(self, msg: dict[str, Any], name: str, ok: bool, error: str, code: str,
                ret: Any) -> tuple[dict[str, Any], list[tuple[int, bytes]]]:
        meta: dict[str, Any] = self.env.metadata() if self.env is not None else {
            "objects": [], "inventoryObjects": [], "fov": float(self.init.get("fieldOfView", 90.0)),
            "agent": {"name": "agent", "position": {"x": 0.0, "y": 0.9, "z": 0.0},
                      "rotation": {"x": 0.0, "y": 0.0, "z": 0.0}, "cameraHorizon": 0.0, "isStanding": True},
            "cameraPosition": {"x": 0.0, "y": 1.5, "z": 0.0}, "sceneName": "Procedural"}
        taken = set(self.colors.values())
        for obj in meta["objects"]:  # slicing creates objects, and THOR colours them too
            if obj["objectId"] not in self.colors:
                self.colors[obj["objectId"]] = object_color(obj["objectId"], taken)
        meta.update({
            "lastAction": name, "lastActionSuccess": ok, "errorMessage": error, "errorCode": code,
            "actionReturn": ret, "screenWidth": self.width, "screenHeight": self.height, "agentId": 0,
            "depthFormat": "Meters", "thirdPartyCameras": [], "collided": False, "collidedObjects": [],
            "isSceneAtRest": True, "heldObjectPose": None, "arm": None,
            "colors": [{"name": oid, "color": list(c)} for oid, c in self.colors.items()],
        })
        top = {"sequenceId": msg.get("sequenceId", 0), "agents": [meta], "activeAgentId": 0, "thirdPartyCameras": []}
        return top, self._images()

    def _images(self) -> list[tuple[int, bytes]]:
        """Frames for the current view, bottom row first as Unity reads them back."""
        if self.obs is None:  # no scene yet: a black frame, as an empty Unity scene renders
            return [(RGB_IMAGE, bytes(self.height * self.width * 3))]
        # The scene's environment renders (EmbeddedConfig.render is left on), so every
        # observation carries its frames.
        out = [(RGB_IMAGE, np.ascontiguousarray(cast(np.ndarray, self.obs.rgb)[::-1]).tobytes())]
        if self.init.get("renderDepthImage"):
            out.append((DEPTH_IMAGE, np.ascontiguousarray(cast(np.ndarray, self.obs.depth)[::-1],
                                                          dtype=np.float32).tobytes()))
        if self.init.get("renderInstanceSegmentation"):
            rgba = np.zeros(cast(np.ndarray, self.obs.instance_ids).shape + (4,), dtype=np.uint8)
            rgba[..., 3] = 255
            for k, label in self.obs.id_to_label.items():
                rgba[self.obs.instance_ids == k, :3] = self.colors[label.object_id]
            out.append((IDS_IMAGE, np.ascontiguousarray(rgba[::-1]).tobytes()))
        return out


# ---- wire ------------------------------------------------------------------------------------
def read_message(pipe: IO[bytes]) -> dict[str, Any] | None:
    """One action message, or None when the Controller closed its end."""
    action = None
    while True:
        header = pipe.read(HEADER.size)
        if len(header) < HEADER.size:
            return None
        field, length = HEADER.unpack(header)
        if field == END_OF_MESSAGE:
            return action
        body = pipe.read(length)
        if field != ACTION:
            raise ValueError(f"unexpected field type {field} from the Controller")
        action = json.loads(body)


def write_message(pipe: IO[bytes], metadata: dict[str, Any], images: list[tuple[int, bytes]]) -> None:
    body = msgpack.packb(metadata, use_bin_type=True)
    parts = [HEADER.pack(METADATA, len(body)), body]
    for field, data in images:
        parts += [HEADER.pack(field, len(data)), data]
    parts.append(HEADER.pack(END_OF_MESSAGE, 0))
    pipe.write(b"".join(parts))
    pipe.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fake_player", description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", help="append every received action as a JSON line to this file")
    parser.add_argument("--stall", choices=("open", "hello"),
                        help="never answer: 'open' never opens the pipes, 'hello' opens them and stays silent")
    parser.add_argument("-screen-width", dest="width", type=int, default=300)  # as the Controller passes them
    parser.add_argument("-screen-height", dest="height", type=int, default=300)
    args, _unity_flags = parser.parse_known_args(argv)
    if os.environ.get("AI2THOR_SERVER_TYPE", "FIFO") != "FIFO":
        print("fake_player speaks only the FIFO server protocol", file=sys.stderr)
        return 2
    server_path = os.environ["AI2THOR_FIFO_SERVER_PIPE_PATH"]
    client_path = os.environ["AI2THOR_FIFO_CLIENT_PIPE_PATH"]
    if args.stall == "open":
        time.sleep(3600)
        return 1
    player = Player(args.width, args.height)
    log = open(args.log, "a", encoding="utf-8") if args.log else None
    with open(server_path, "wb") as to_python:
        if args.stall == "hello":
            time.sleep(3600)
            return 1
        write_message(to_python, *player.hello())
        with open(client_path, "rb") as from_python:
            while (msg := read_message(from_python)) is not None:
                if log:
                    log.write(json.dumps(msg) + "\n")
                    log.flush()
                write_message(to_python, *player.handle(msg))
    return 0


if __name__ == "__main__":
    sys.exit(main())
