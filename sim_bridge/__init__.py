"""Environment protocol and its backends (embedded, thor, habitat); ``make_environment`` picks one."""

from sim_bridge.factory import make_environment

__all__ = ["make_environment"]
