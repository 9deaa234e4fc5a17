"""Recording runs as ROS 2 bags and replaying them (docs/ARCHITECTURE.md: the ``replay`` backend). Playing a bag
through perception, memory and belief and scoring it is evaluation's job: ``evaluation.replay``.

- ``bag``: ``BagWriter`` (record Observations + ground truth + plans/critic/belief events),
  ``BagReader`` (-> ``FrameItem`` / ``EventItem`` in stamp order), ``BagReadError``.
- ``backend``: ``ReplayEnvironment`` (the Environment protocol over a bag; ``step`` raises).
- ``salvage``: sequential reading of truncated or corrupt MCAP/sqlite3 files.
- ``bag_integrity``: what a rosbag2 bag states (metadata.yaml, a .db3's metadata table, an MCAP
  summary) checked against what was read: the reasons a bag is partial, or a refused metadata file.
- ``bag_open``: opening storage (rosbags' index, else file by file, salvaging what it cannot open).
"""

from sim_bridge.replay.bag import BagReadError, BagReader, BagWriter, EventItem, FrameItem

__all__ = ["BagReadError", "BagReader", "BagWriter", "EventItem", "FrameItem"]
