"""The household core: the bottom layer, which imports nothing else of WorldMind.

What every other layer shares: the Environment seam's observation/action/world types
(``types``), frames (``frames``), the household model (object types and affordances from the
ProcTHOR asset database in ``assets``, the house format and data files in ``house_data``, the
agent's free-space grid in ``free_grid``), the checklist/goal vocabulary (``checklist``), the error
type for bad input (``errors``) and safe file writes (``atomic_io``). The robot-side stack
(perception, memory, planner), the simulator bridges, evaluation, the CLI and the ROS package all
build on it; see README.md, "Layers".
"""
