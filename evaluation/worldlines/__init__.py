"""WorldLines-style traces, samples, baselines, metrics and harness (see harness.py)."""
