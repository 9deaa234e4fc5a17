"""Recording runs as ROS 2 bags and replaying them (docs/ARCHITECTURE.md: the ``replay`` backend). Playing a bag
through perception, memory and belief and scoring it is evaluation's job: ``evaluation.replay``.

- ``bag``: ``BagWriter`` (record Observations + ground truth + plans/critic/belief events),
  ``BagReader`` (-> ``FrameItem`` / ``EventItem`` in stamp order), ``BagReadError``.
- ``backend``: ``ReplayEnvironment`` (the Environment protocol over a bag; ``step`` raises).
- ``salvage``: sequential reading of truncated or corrupt MCAP/sqlite3 files.
"""

from sim_bridge.replay.bag import BagReadError, BagReader, BagWriter, EventItem, FrameItem

__all__ = ["BagReadError", "BagReader", "BagWriter", "EventItem", "FrameItem"]
