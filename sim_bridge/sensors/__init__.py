"""Sensor realism for simulated frames: named profiles (ideal, realistic, harsh) and the filter
that applies them (see profiles.py for the models and their numbers)."""

from sim_bridge.sensors.noise import SensorNoise
from sim_bridge.sensors.profiles import PROFILES, SensorProfile, sensor_profile

__all__ = ["PROFILES", "SensorNoise", "SensorProfile", "sensor_profile"]
