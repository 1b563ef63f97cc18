"""``make_vec``: many pixel envs in parallel, one process each (gymnasium's AsyncVectorEnv with shared memory).

pybullet's EGL plugin allows one client per process, so EGL envs only run in parallel in separate processes;
each worker renders on its own GPU where several are visible (see :mod:`pixelrig.render.egl_devices`).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from gymnasium.vector.async_vector_env import AsyncState

from pixelrig.cameras.rig import CameraLike, as_cameras
from pixelrig.render.choice import resolve_renderer

MODES = ("async", "sync", "batched")


# ---- Gymnasium internals -------------------------------------------------------------------------------------
# AsyncVectorEnv has no public hook for a worker's exception or death. The three functions below (and the
# override of its private ``_raise_if_errors``) are the only code that touches its private parts: ``error_queue``,
# ``parent_pipes`` and ``_state``. They hold from gymnasium 1.0.0 to 1.4.0 (CI runs the suite at both ends of
# pyproject's range); tests/test_gymnasium_internals.py names what moved if a release changes them.

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


def worker_error(index: int, exctype: type, value: object, trace: str) -> BaseException:
    """The exception a worker's failure raises in the main process: its own type where that type takes a message,
    with the worker's traceback in the message."""
    message = f"make_vec worker {index} failed: {exctype.__name__}: {value}\n--- worker traceback ---\n{trace}"
    try:
        return exctype(message)
    except Exception:  # an exception type that takes other arguments
        return RuntimeError(message)


def dead_workers(processes: Sequence[Any], wait: float = 2.0) -> str:
    """Which worker processes have exited, with their exit codes (waiting up to ``wait`` s for one to be reaped)."""
    deadline = time.monotonic() + wait  # a worker whose pipe closed is still being reaped
    while time.monotonic() < deadline and all(proc.exitcode is None for proc in processes):
        time.sleep(0.05)
    dead = [f"worker {i} (exit code {proc.exitcode})" for i, proc in enumerate(processes) if proc.exitcode is not None]
    return ", ".join(dead) or "no worker has exited yet"


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


@dataclass(frozen=True)
class EnvFactory:
    """A picklable recipe for one worker's env (works with the 'spawn' start method).

    Attributes:
        env_id: registered id.
        env_kwargs: its ``gym.make`` kwargs.
        cams: the PixelObs cameras (None: the env's default rig).
        pixels_only: drop the "state" key.
        pixels: wrap in PixelObs at all.
        renderer: the backend, already resolved ('tiny', 'egl' or 'gl').
        worker: the index of the process the env runs in (its GPU is ``worker % n_visible`` with EGL or gl and
            several GPUs).
        gpu: an explicit CUDA device for every worker instead.
    """

    env_id: str
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    cams: tuple | None = None
    pixels_only: bool = False
    pixels: bool = True
    renderer: str = "tiny"
    worker: int = 0
    gpu: int | None = None

    def __call__(self) -> gym.Env:
        import pixelrig  # noqa: F401 (registers the ids in a spawned worker)
        from pixelrig.render.egl_devices import select_gpu
        from pixelrig.wrappers.pixel_obs import PixelObs

        if self.renderer in ("egl", "gl"):  # both read EGL_VISIBLE_DEVICES when their EGL display opens
            if self.gpu is not None:
                select_gpu(self.gpu)
            elif _cuda_egl_devices():
                select_gpu(rank=self.worker)
        env = gym.make(self.env_id, renderer=self.renderer, **dict(self.env_kwargs))
        if self.pixels:
            env = PixelObs(env, cams=self.cams, pixels_only=self.pixels_only)
        return env


@functools.cache
def _cuda_egl_devices() -> bool:
    """Whether any EGL device of this machine is a CUDA GPU (listed in a subprocess once per process)."""
    from pixelrig.render.egl_devices import list_egl_devices

    return any(d.cuda is not None for d in list_egl_devices())


def _processes(vectorization_mode: str, num_envs: int, num_workers: int) -> list[int]:
    """The index of the process each env runs in: its own ("async"), this one ("sync"), its worker ("batched")."""
    if vectorization_mode == "async":
        return list(range(num_envs))
    if vectorization_mode == "sync":
        return [0] * num_envs
    from pixelrig.batched import worker_slices

    return [w for w, indices in enumerate(worker_slices(num_envs, num_workers)) for _ in indices]


def make_vec(
    env_id: str,
    num_envs: int,
    cams: Iterable[CameraLike] | None = None,
    renderer: str | None = None,
    vectorization_mode: str = "async",
    *,
    pixels_only: bool = False,
    pixels: bool = True,
    gpu: int | None = None,
    num_workers: int = 1,
    env_kwargs: Mapping[str, Any] | None = None,
    context: str = "spawn",
) -> gym.vector.VectorEnv:
    """A vector of ``num_envs`` copies of ``env_id`` under PixelObs.

    Args:
        env_id: a registered id (pixelrig's or any whose env exposes a pybullet client).
        num_envs: number of envs.
        cams: PixelObs cameras (None: each env's default rig).
        renderer: 'auto' | 'tiny' | 'egl' | 'gl' | None, resolved once here ("batched": None means
            ``PIXELRIG_RENDERER`` if set, else 'gl'; 'tiny' draws the rigs one after another; 'egl' needs one env
            per worker).
        vectorization_mode: "async" (one process per env, observations in shared memory), "sync" (all in this
            process; not with EGL and more than one env) or "batched" (``num_workers`` processes, this one when 1,
            each stepping its envs one by one and drawing their rigs a few envs per gl pass; see
            :class:`pixelrig.batched.BatchedVectorEnv`).
        pixels_only: drop the "state" key. pixels: False gives the envs without PixelObs.
        num_workers: "batched" only: processes to spread the envs over (1 = this process, <= num_envs).
        gpu: with egl or gl, every worker renders on this CUDA device; None spreads worker processes over the
            visible GPUs (gl: one EGL context per process, on the device its first gl env asks for).
        env_kwargs: ``gym.make`` kwargs of every env.
        context: multiprocessing start method for "async" and "batched" workers ("spawn" by default: safe with
            pybullet and EGL).

    Seeding follows Gymnasium: ``reset(seed=s)`` seeds env i with ``s + i``. Autoreset is Gymnasium 1.x's
    default (the step after an episode ends returns the reset observation). A worker that raises is reported
    with its traceback.

    Raises:
        ValueError: bad num_envs, num_workers or mode, or EGL asked for several envs in one process.
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs={num_envs!r} must be an integer >= 1")
    if vectorization_mode not in MODES:
        raise ValueError(f"vectorization_mode must be one of {MODES}: got {vectorization_mode!r}")
    if vectorization_mode == "batched":
        from pixelrig.batched import batched_renderer, check_workers

        check_workers(num_envs, num_workers)
        kind = batched_renderer(renderer, num_envs, num_workers)
    elif num_workers != 1:
        raise ValueError(f"num_workers={num_workers!r} applies to vectorization_mode='batched' only: drop it, or "
                         "pass vectorization_mode='batched'")
    else:
        kind = resolve_renderer(renderer)
    if kind == "egl" and vectorization_mode == "sync" and num_envs > 1:
        raise ValueError(
            f"make_vec(vectorization_mode='sync', renderer='egl', num_envs={num_envs}): pybullet's EGL plugin "
            "allows one client per process; use vectorization_mode='async' (one process per env) or renderer='tiny'"
        )
    cameras = as_cameras(cams) if cams is not None else None
    factories = [EnvFactory(env_id, dict(env_kwargs or {}), cameras, pixels_only, pixels, kind, process, gpu)
                 for process in _processes(vectorization_mode, num_envs, num_workers)]
    if vectorization_mode == "sync":
        return gym.vector.SyncVectorEnv(factories)
    if vectorization_mode == "batched":
        from pixelrig.batched import BatchedVectorEnv

        # workers' shared memory is sized from one env built here (TinyRenderer: same spaces, no GL context here)
        return BatchedVectorEnv(factories, num_workers, context=context,
                                spaces_fn=dataclasses.replace(factories[0], renderer="tiny"))
    # build one env here first (TinyRenderer: its spaces do not depend on the backend), so that a bad id, kwarg
    # or camera raises in this process with its own traceback instead of killing every worker
    dataclasses.replace(factories[0], renderer="tiny")().close()
    return PixelVectorEnv(factories, shared_memory=True, context=context)
