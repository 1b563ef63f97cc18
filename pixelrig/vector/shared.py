"""Vector-env observations in one shared memory block: where each env's observation lives in it, computed from the
observation space alone (so the vector env and each worker process compute the same layout), and numpy views of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

ALIGN = 64
"""Every array starts at a multiple of this many bytes."""
SPACES = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiBinary, gym.spaces.MultiDiscrete)
"""The spaces whose values live in shared memory (also inside Dict and Tuple spaces)."""


@dataclass(frozen=True)
class Leaf:
    """One array of the block: the (num_envs, *shape) values of one leaf space."""

    shape: tuple[int, ...]
    dtype: np.dtype
    offset: int

    @property
    def nbytes(self) -> int:
        """Its size in bytes (all envs)."""
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


class SharedLayout:
    """Where ``num_envs`` observations of ``space`` live in one block: each leaf space (Box, Discrete, MultiBinary,
    MultiDiscrete, in Dict and Tuple order) one (num_envs, *shape) array, aligned to :data:`ALIGN` bytes.

    Args:
        space: one env's observation space.
        num_envs: envs in the vector env.

    Raises:
        ValueError: a space that cannot live in shared memory (the message names it and the fix).
    """

    def __init__(self, space: gym.Space, num_envs: int) -> None:
        self.space, self.num_envs = space, num_envs
        self._end = 0
        self.tree = self._plan(space)
        self.nbytes: int = max(1, self._end)
        """The block's size (at least one byte)."""

    def _plan(self, space: gym.Space) -> Any:
        if isinstance(space, gym.spaces.Dict):
            return {key: self._plan(sub) for key, sub in space.spaces.items()}
        if isinstance(space, gym.spaces.Tuple):
            return tuple(self._plan(sub) for sub in space.spaces)
        if not isinstance(space, SPACES):
            raise ValueError(
                f"the observation space {space!r} cannot be passed through shared memory from worker processes: "
                "only Box, Discrete, MultiBinary and MultiDiscrete spaces can (inside Dict and Tuple spaces too). "
                "Use vectorization_mode='sync' (or 'batched' with num_workers=1), or give the env such a space "
                "(e.g. with a gymnasium ObservationWrapper)")
        start = -(-self._end // ALIGN) * ALIGN
        leaf = Leaf((self.num_envs, *space.shape), np.dtype(space.dtype), start)
        self._end = start + leaf.nbytes
        return leaf

    def views(self, buf: Any) -> Any:
        """The batched observations as numpy views of ``buf``: dicts and tuples as the space nests them, each leaf a
        (num_envs, *shape) array (the structure Gymnasium's vector envs return)."""

        def view(node: Any) -> Any:
            if isinstance(node, dict):
                return {key: view(sub) for key, sub in node.items()}
            if isinstance(node, tuple):
                return tuple(view(sub) for sub in node)
            return np.ndarray(node.shape, node.dtype, buf, node.offset)

        return view(self.tree)


def put(batch: Any, index: int, item: Any) -> None:
    """Write one env's observation into slot ``index`` of batched arrays (dicts and tuples of arrays)."""
    if isinstance(batch, dict):
        for key, value in batch.items():
            put(value, index, item[key])
    elif isinstance(batch, tuple):
        for value, part in zip(batch, item, strict=True):
            put(value, index, part)
    else:
        batch[index] = item
