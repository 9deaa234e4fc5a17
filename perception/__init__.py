"""Perception: RGB-D + instance masks -> world-frame object observations (perceive.py), frames
and back-projection (backproject.py), embedding encoders (encoders.py)."""
