"""``bag_player`` node: a recorded bag (MCAP or sqlite3, read with ``sim_bridge.replay.BagReader``)
played onto WorldMind's topics, for the replay graph (perception, memory and belief unchanged).

Frames go out as the sim bridge sends them (one stamp per frame: the recorded one); recorded
belief updates, plans and critic directives go out on their topics. Pacing: ``rate`` > 0 follows
the recorded stamps scaled by ``rate``; ``rate`` = 0 (default) plays as fast as the memory keeps
up: the next frame goes out when ``/worldmind/memory/updates`` reports the previous one (or after
2 s), which is deterministic and never drops a frame on best-effort topics. The node exits with
status 0 at the end of the bag (ending the replay graph) and 1 if the bag cannot be read.
"""

from __future__ import annotations

import json
import threading
import time

from std_msgs.msg import String

from rclpy.parameter import Parameter

from sim_bridge.ros.convert import MessageClasses, observation_to_messages
from sim_bridge.ros.tf import base_matrix, robot_transforms
from worldmind_ros.memory_server import UPDATES_TOPIC
from worldmind_ros.runtime import WorldMindNode, main_for, qos
from worldmind_ros.tf_io import TfPublisher, clock_publisher, frame_names, publish_clock

EVENT_TOPICS = {"belief_update": "belief_updates", "goal_dag": "plan", "critic_directive": "critic"}


class BagPlayerNode(WorldMindNode):
    module = "bag_player_node"

    node_name = "bag_player"

    def configure(self) -> None:
        if not self.params["bag"]:
            raise ValueError("parameter bag: the bag to play is required")
        self.classes = MessageClasses.from_modules()
        keys = ("color", "depth", "camera_info", "instance_ids", "instance_labels", "odom", "camera_pose",
                "agent_status") + tuple(EVENT_TOPICS.values())
        self.pubs = {k: self.publisher(k) for k in keys}
        # Replay runs on the bag's time: /clock carries each frame's recorded stamp (nodes with
        # use_sim_time follow it), and TF is rebuilt from the recorded poses at that stamp.
        self.set_parameters([Parameter("use_sim_time", value=False)])
        self.frames = frame_names(dict(self.params))
        self.tf = TfPublisher(self)
        self.clock_pub = clock_publisher(self)
        self.acked = threading.Condition()
        self.last_ack = -1
        self.create_subscription(String, self.local_topic(UPDATES_TOPIC), self.guarded(UPDATES_TOPIC, self._on_update), qos("reliable"))
        self.closing = threading.Event()
        self.worker = threading.Thread(target=self._play, daemon=True)
        self.worker.start()

    def _on_update(self, msg: String) -> None:
        stamp = int(json.loads(msg.data)["stamp_ns"])
        with self.acked:
            self.last_ack = max(self.last_ack, stamp)
            self.acked.notify_all()

    def _play(self) -> None:
        from sim_bridge.replay.bag import BagReader, EventItem, FrameItem

        log = self.get_logger()
        time.sleep(float(self.params["start_delay_s"]))
        rate = float(self.params["rate"])
        frames = 0
        first: tuple[int, float] | None = None
        try:
            reader = BagReader(self.params["bag"])  # a metadata.yaml it cannot trust is refused here
            for item in reader:
                if self.closing.is_set():
                    return
                while not self.active:  # inactive (lifecycle): playback pauses where it is
                    if self.closing.wait(0.05):
                        return
                if rate > 0:
                    if first is None:
                        first = (item.stamp_ns, time.monotonic())
                    due = first[1] + (item.stamp_ns - first[0]) / 1e9 / rate
                    time.sleep(max(0.0, due - time.monotonic()))
                if isinstance(item, FrameItem):
                    obs = item.observation
                    publish_clock(self.clock_pub, item.stamp_ns)
                    self.tf.send(robot_transforms(base_matrix(obs.agent.position, obs.agent.yaw_deg),
                                                  obs.world_from_camera, item.stamp_ns, self.frames))
                    for key, msg in observation_to_messages(obs, self.classes, item.stamp_ns,
                                                            frames=self.frames).items():
                        if key in self.pubs:
                            self.pubs[key].publish(msg)
                    frames += 1
                    if rate == 0:
                        with self.acked:
                            self.acked.wait_for(lambda: self.last_ack >= item.stamp_ns or self.closing.is_set(),  # noqa: B023 (waited on here)
                                                timeout=2.0)
                elif isinstance(item, EventItem) and item.kind in EVENT_TOPICS:
                    key = EVENT_TOPICS[item.kind]
                    self.publish_json(self.pubs[key], key, item.data)
        except Exception as exc:  # noqa: BLE001 - a damaged bag ends the replay with a clear line
            log.error(f"bag {self.params['bag']}: {type(exc).__name__}: {exc}")
            self.exit_code = 1
        else:
            log.info(f"bag {self.params['bag']} played: {frames} frame(s); read stats "
                     f"{json.dumps(reader.stats.to_dict())[:300]}")
            for why in reader.stats.partial[:10]:  # cut off or disagreeing with what it states: never whole
                log.warning(f"bag {self.params['bag']} is partial: {why}")
        time.sleep(0.5)
        self.done = True

    def close(self) -> None:
        self.closing.set()
        with self.acked:
            self.acked.notify_all()
        self.worker.join(timeout=3.0)


main = main_for(BagPlayerNode)

if __name__ == "__main__":
    main()
