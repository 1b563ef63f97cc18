"""Vector envs: ``make_vec`` and what it builds (one env per worker process, all in one, or many per process with
their rigs drawn in batches)."""

from pixelrig.vector.batched import BatchedVectorEnv
from pixelrig.vector.factory import EnvFactory
from pixelrig.vector.make import MODES, make_vec
from pixelrig.vector.process import ProcessVectorEnv

__all__ = ["MODES", "BatchedVectorEnv", "EnvFactory", "ProcessVectorEnv", "make_vec"]
