"""The AI2-THOR backend: ``ai2thor.Controller`` (5.0) behind the Environment seam.

Kept import-free on purpose: ``python -m sim_bridge.thor.fake_player`` and the factory must not
pay for (or require) ai2thor when they do not use it.
"""
