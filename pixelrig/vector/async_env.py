"""``PixelVectorEnv``: Gymnasium's AsyncVectorEnv (one process per env, shared memory) that reports a failing
worker's traceback and a dead worker's exit code."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import gymnasium as gym
from gymnasium.vector.async_vector_env import AsyncState

from pixelrig.vector.failures import dead_workers, worker_error

# ---- Gymnasium internals -------------------------------------------------------------------------------------
# AsyncVectorEnv has no public hook for a worker's exception or death. The three functions below (and the
# override of its private ``_raise_if_errors``) are the only code that touches its private parts: ``error_queue``,
# ``parent_pipes`` and ``_state``. They hold from gymnasium 1.0.0 to 1.4.0 (CI runs the suite at both ends of
# pyproject's range); tests/test_snapshots_gymnasium_internals.py names what moved if a release changes them.

def _take_worker_error(venv: gym.vector.AsyncVectorEnv) -> tuple[int, type, BaseException, str]:
    """The next failed worker's ``(index, exception type, exception, traceback text)``; closes its pipe as
    Gymnasium does."""
    index, exctype, value, trace = venv.error_queue.get()
    venv.parent_pipes[index].close()
    venv.parent_pipes[index] = None
    return index, exctype, value, trace


def _mark_idle(venv: gym.vector.AsyncVectorEnv) -> None:
    """Tell the vector env that no call is pending (so that ``close()`` does not wait for one)."""
    venv._state = AsyncState.DEFAULT


class PixelVectorEnv(gym.vector.AsyncVectorEnv):
    """AsyncVectorEnv that raises a failing worker's exception with its traceback in the message (Gymnasium only
    logs it), and reports a worker that died with its exit code instead of a broken pipe."""

    def _raise_if_errors(self, successes: Iterable[bool]) -> None:  # overrides Gymnasium's (see above)
        failed = sum(1 for ok in successes if not ok)
        reports = [_take_worker_error(self) for _ in range(failed)]
        if not reports:
            return
        _mark_idle(self)
        index, exctype, value, trace = reports[-1]
        raise worker_error(index, exctype, value, trace)

    def _dead_workers(self, wait: float = 2.0) -> str:
        return dead_workers(self.processes, wait)

    def _guard(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(super(), method)(*args, **kwargs)
        except (EOFError, BrokenPipeError, ConnectionResetError) as exc:
            _mark_idle(self)  # nothing to wait for any more: close() must not wait either
            raise RuntimeError(f"a make_vec worker process died during {method}: {self._dead_workers()}; its "
                               "stderr (above) says why") from exc

    def reset_wait(self, *args: Any, **kwargs: Any) -> Any:
        return self._guard("reset_wait", *args, **kwargs)

    def step_wait(self, *args: Any, **kwargs: Any) -> Any:
        return self._guard("step_wait", *args, **kwargs)

    def call_wait(self, *args: Any, **kwargs: Any) -> Any:
        return self._guard("call_wait", *args, **kwargs)
