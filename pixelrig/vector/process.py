"""``ProcessVectorEnv``: one env per worker process (what ``make_vec(..., vectorization_mode="async")`` returns), a
:class:`~pixelrig.vector.batched.BatchedVectorEnv` with one env in each of its workers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pixelrig.vector.autoreset import NEXT_STEP
from pixelrig.vector.batched import BatchedVectorEnv, EnvFn


class ProcessVectorEnv(BatchedVectorEnv):
    """One env per worker process, observations in shared memory (what ``make_vec(...,
    vectorization_mode="async")`` returns): a :class:`BatchedVectorEnv` with ``num_workers = len(env_fns)``.

    Args:
        env_fns: callables that build the envs (they must pickle with cloudpickle).
        copy: return copies of the observations (else the shared arrays, overwritten by the next call).
        spaces_fn: builds one env in this process to read the spaces from (default ``env_fns[0]``).
        autoreset_mode: as :class:`BatchedVectorEnv`'s.
    """

    in_process_alone = False  # one env still gets its own process (EGL allows one client per process)

    def __init__(self, env_fns: Sequence[EnvFn], *, copy: bool = True, spaces_fn: EnvFn | None = None,
                 autoreset_mode: Any = NEXT_STEP) -> None:
        env_fns = list(env_fns)
        if not env_fns:
            raise ValueError("ProcessVectorEnv needs at least one env_fn")
        super().__init__(env_fns, num_workers=len(env_fns), copy=copy, spaces_fn=spaces_fn,
                         autoreset_mode=autoreset_mode)
