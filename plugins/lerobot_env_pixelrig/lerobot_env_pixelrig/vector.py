"""The vector env LeRobot evaluates in: pixelrig's own ``make_vec`` (every env's rig drawn in one gl pass where the
renderer batches) under a wrapper that gives LeRobot's observation layout (:mod:`lerobot_env_pixelrig.spec`), the
task description, ``info["is_success"]`` on reset and step, and the frame rate. No LeRobot import."""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space

from lerobot_env_pixelrig.spec import TaskSpec, lerobot_observation, observation_space
from pixelrig.render.choice import resolve_renderer
from pixelrig.render.registry import entry
from pixelrig.vector.make import make_vec

SAME_STEP = "SameStep"
"""LeRobot's own envs autoreset on the same step (its rollout reads ``final_info`` then)."""


def vector_mode(renderer: str, num_envs: int, num_workers: int | None) -> tuple[str, int, str]:
    """How ``num_envs`` envs run: ``(vectorization_mode, num_workers, renderer)``.

    "batched" (``num_workers`` processes, this one when 1; one gl pass per process draws all its envs' rigs) unless
    the renderer allows one client per process (pybullet's EGL plugin), which takes one process per env ("async").
    ``num_workers`` None: 1 (this process; LeRobot's ``--eval.use_async_envs=true`` asks for ``min(num_envs, CPUs)``).
    """
    kind = resolve_renderer(renderer)
    if entry(kind).one_client_per_process and num_envs > 1:
        return "async", 1, kind
    workers = 1 if num_workers is None else max(1, min(num_workers, num_envs))
    return "batched", workers, kind


class LeRobotVectorEnv(gym.vector.VectorWrapper):
    """A pixelrig vector env (PixelObs observations) as LeRobot's rollout reads it.

    - observations: :func:`~lerobot_env_pixelrig.spec.lerobot_observation` of each batch (``final_obs`` in ``info``
      stays PixelObs' own: LeRobot does not read it);
    - ``info["is_success"]`` on reset (False: nothing is done yet) and on every step (the env's own);
    - ``call``/``get_attr("task_description")`` and ``("task")``: the collected dataset's task string, one per env;
      ``call("_max_episode_steps")``: the episode length;
    - ``metadata["render_fps"]``: the config's fps (LeRobot writes its evaluation videos at it).
    """

    def __init__(self, env: gym.vector.VectorEnv, spec: TaskSpec) -> None:
        super().__init__(env)
        self.spec_ = spec
        self.single_observation_space = observation_space(spec, env.single_observation_space)
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)
        self.metadata = {**env.metadata, "render_fps": spec.fps}

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        if "is_success" not in info:
            info = {**info, "is_success": np.zeros(self.num_envs, dtype=bool),
                    "_is_success": np.ones(self.num_envs, dtype=bool)}
        return info

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        return lerobot_observation(obs, self.spec_), self._info(info)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict]:
        obs, reward, terminated, truncated, info = self.env.step(actions)
        return lerobot_observation(obs, self.spec_), reward, terminated, truncated, self._info(info)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        if name in ("task_description", "task"):
            return (self.spec_.task_description,) * self.num_envs
        if name == "_max_episode_steps" and self.spec_.max_episode_steps is not None:
            return (self.spec_.max_episode_steps,) * self.num_envs
        return self.env.call(name, *args, **kwargs)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.call(name)

    def render(self) -> tuple[Any, ...] | None:
        return self.env.call("render")


def make_lerobot_vec(spec: TaskSpec, num_envs: int, num_workers: int | None = None) -> LeRobotVectorEnv:
    """``num_envs`` envs of ``spec`` through pixelrig's ``make_vec`` (:func:`vector_mode`), in LeRobot's layout,
    autoresetting on the same step as LeRobot's own envs."""
    mode, workers, kind = vector_mode(spec.renderer, num_envs, num_workers)
    vec = make_vec(spec.env_id, num_envs, cams=spec.cams, renderer=kind, vectorization_mode=mode,
                   num_workers=workers, env_kwargs=spec.env_kwargs, autoreset_mode=SAME_STEP)
    return LeRobotVectorEnv(vec, spec)


def cpu_workers(num_envs: int) -> int:
    """Worker processes for ``--eval.use_async_envs=true``: one per CPU this process may use, at most one per env."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(num_envs, cpus))
