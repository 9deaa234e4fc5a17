"""Spatial semantic memory: sparse voxels + object table + dual (spatial/semantic) index.

Import the pieces from their modules; the common entry points are re-exported here.
"""

from memory.spatial.memory import IntegrationReport, MemoryConfig, MemoryInputError, SpatialMemory
from memory.spatial.query import QueryHit, Region
from memory.spatial.store import MemoryFileError, load_memory, save_memory  # persistence (.npz)

__all__ = ["IntegrationReport", "MemoryConfig", "MemoryFileError", "MemoryInputError", "QueryHit", "Region",
           "SpatialMemory", "load_memory", "save_memory"]
