"""Vector envs: ``make_vec`` and what it builds (one env per worker process, all in one, or many per process with
their rigs drawn in batches)."""

from pixelrig.vector.batched import BatchedVectorEnv, ProcessVectorEnv
from pixelrig.vector.factory import EnvFactory
from pixelrig.vector.make import MODES, make_vec

__all__ = ["MODES", "BatchedVectorEnv", "EnvFactory", "ProcessVectorEnv", "make_vec"]
