"""``make_vec``: many pixel envs in parallel: one worker process each ("async"), all in this one ("sync"), or many
per process with their rigs drawn a part at a time ("batched").

pybullet's EGL plugin allows one client per process, so EGL envs only run in parallel in separate processes;
each worker renders on its own GPU where several are visible (see :mod:`pixelrig.render.egl_devices`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import gymnasium as gym

from pixelrig.cameras.rig import CameraLike, as_cameras
from pixelrig.render.choice import resolve_renderer
from pixelrig.render.registry import entry
from pixelrig.vector.autoreset import NEXT_STEP, autoreset_enum, autoreset_name
from pixelrig.vector.factory import EnvFactory

MODES = ("async", "sync", "batched")


def _processes(vectorization_mode: str, num_envs: int, num_workers: int) -> list[int]:
    """The index of the process each env runs in: its own ("async"), this one ("sync"), its worker ("batched")."""
    if vectorization_mode == "async":
        return list(range(num_envs))
    if vectorization_mode == "sync":
        return [0] * num_envs
    from pixelrig.vector.batched import worker_slices

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
    autoreset_mode: Any = NEXT_STEP,
) -> gym.vector.VectorEnv:
    """A vector of ``num_envs`` copies of ``env_id`` under PixelObs.

    Args:
        env_id: a registered id (pixelrig's or any whose env exposes a pybullet client).
        num_envs: number of envs.
        cams: PixelObs cameras (None: each env's default rig).
        renderer: any renderer or None, resolved once here ("batched": None means ``PIXELRIG_RENDERER`` if set, else
            'gl'; a backend that does not batch draws the rigs one after another; one allowing one client per
            process, egl, needs one env per worker).
        vectorization_mode: "async" (one worker process per env, observations in shared memory; see
            :class:`pixelrig.vector.process.ProcessVectorEnv`), "sync" (all in this process, Gymnasium's
            SyncVectorEnv; not with EGL and more than one env) or "batched" (``num_workers`` processes, this one when
            1, each stepping its envs one by one and drawing their rigs a few envs per gl pass; see
            :class:`pixelrig.vector.batched.BatchedVectorEnv`).
        pixels_only: drop the "state" key. pixels: False gives the envs without PixelObs.
        num_workers: "batched" only: processes to spread the envs over (1 = this process, <= num_envs).
        gpu: with a backend drawing on an EGL device (egl, gl), every worker renders on this CUDA device; None
            spreads worker processes over the visible GPUs (gl: one EGL context per process, on the device its first
            gl env asks for).
        env_kwargs: ``gym.make`` kwargs of every env.
        autoreset_mode: Gymnasium's ``AutoresetMode`` (or its value: "NextStep", the default, "SameStep",
            "Disabled"; see :mod:`pixelrig.vector.autoreset`), the same in every mode: results, ``final_obs`` and
            ``final_info`` step for step as Gymnasium's own SyncVectorEnv gives them. gymnasium 1.0 has next-step
            only.

    Seeding follows Gymnasium: ``reset(seed=s)`` seeds env i with ``s + i``. Worker processes are pixelrig helper
    processes (:mod:`pixelrig.system.process`): fresh interpreters that do not import the caller's ``__main__``, so
    a script needs no ``if __name__ == "__main__":`` guard. A worker that raises is reported with its traceback; one
    that dies, with its exit code and the end of its stderr.

    Raises:
        ValueError: bad num_envs, num_workers, mode or autoreset_mode, EGL asked for several envs in one process, or
            (with worker processes) an observation space that cannot live in shared memory.
        RuntimeError: a worker process died while starting (its exit code and the end of its stderr in the message);
            an error a worker's envs raised while starting is raised as its own type, with the worker's traceback.
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs={num_envs!r} must be an integer >= 1")
    if vectorization_mode not in MODES:
        raise ValueError(f"vectorization_mode must be one of {MODES}: got {vectorization_mode!r}")
    mode = autoreset_name(autoreset_mode)
    if vectorization_mode == "batched":
        from pixelrig.vector.batched import batched_renderer, check_workers

        check_workers(num_envs, num_workers)
        kind = batched_renderer(renderer, num_envs, num_workers)
    elif num_workers != 1:
        raise ValueError(f"num_workers={num_workers!r} applies to vectorization_mode='batched' only: drop it, or "
                         "pass vectorization_mode='batched'")
    else:
        kind = resolve_renderer(renderer)
    if entry(kind).one_client_per_process and vectorization_mode == "sync" and num_envs > 1:
        raise ValueError(
            f"make_vec(vectorization_mode='sync', renderer={kind!r}, num_envs={num_envs}): {entry(kind).label} "
            "allows one client per process; use vectorization_mode='async' (one process per env) or renderer='tiny'"
        )
    cameras = as_cameras(cams) if cams is not None else None
    factories = [EnvFactory(env_id, dict(env_kwargs or {}), cameras, pixels_only, pixels, kind, process, gpu)
                 for process in _processes(vectorization_mode, num_envs, num_workers)]
    if vectorization_mode == "sync":
        if mode == NEXT_STEP:  # gymnasium 1.0's SyncVectorEnv takes no autoreset_mode
            return gym.vector.SyncVectorEnv(factories)
        return gym.vector.SyncVectorEnv(factories, autoreset_mode=autoreset_enum(mode))
    from pixelrig.vector.batched import BatchedVectorEnv
    from pixelrig.vector.process import ProcessVectorEnv

    # one env is built here first (TinyRenderer: its spaces do not depend on the backend, and no GL context here):
    # a bad id, kwarg or camera raises in this process with its own traceback before any worker starts, and the
    # workers' shared memory is sized from its observation space
    spaces_fn = dataclasses.replace(factories[0], renderer="tiny")
    if vectorization_mode == "batched":
        return BatchedVectorEnv(factories, num_workers, spaces_fn=spaces_fn, autoreset_mode=mode)
    return ProcessVectorEnv(factories, spaces_fn=spaces_fn, autoreset_mode=mode)
