"""Stable-Baselines3 glue: SB3's ``VecEnv`` over one of pixelrig's vector envs, so SB3 trains on many envs per
process (the batched gl env: every env's cameras in one pass) without a process per env.

SB3 resets an env in the step that ends its episode and hands the episode's last observation back in
``info["terminal_observation"]``: Gymnasium's same-step autoreset, which every pixelrig vector env gives
(``make_vec(..., autoreset_mode="SameStep")``). Importing this module imports stable-baselines3 (the ``test``
extra, or ``pip install stable-baselines3``); the library never imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as exc:  # pragma: no cover (the test extra installs it)
    raise gym.error.DependencyNotInstalled(
        f"pixelrig.integrations.sb3 needs stable-baselines3 ({exc}): pip install stable-baselines3 (install "
        "torch first; on a CPU machine its CPU wheel)") from None

from pixelrig.vector.autoreset import SAME_STEP
from pixelrig.vector.batched import BatchedVectorEnv, call_env, stack_names
from pixelrig.vector.make import make_vec


def env_infos(infos: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """Gymnasium's batched infos (a dict of arrays, each with its ``"_key"`` mask) as one dict per env."""
    out: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for key, value in infos.items():
        if key.startswith("_"):
            continue
        mask = infos.get(f"_{key}", np.ones(num_envs, bool))
        for i in np.flatnonzero(mask):
            out[i][key] = env_infos(value, num_envs)[i] if isinstance(value, dict) else value[i]
    return out


def wrapper_names(venv: gym.vector.VectorEnv) -> list[tuple[str, ...]]:
    """Each env's wrapper stack (``module.Class`` names, outermost first) of a pixelrig or Gymnasium sync vector
    env."""
    if hasattr(venv, "wrapper_names"):
        return venv.wrapper_names()
    return [stack_names(env) for env in venv.envs]  # type: ignore[attr-defined]


class PixelVecEnv(VecEnv):
    """SB3's ``VecEnv`` over a pixelrig vector env in same-step autoreset mode (see :func:`make_sb3_vec`).

    ``step_wait`` gives SB3's ``(obs, rewards, dones, infos)``: per-env info dicts, and for an env whose episode
    ended its last observation as ``"terminal_observation"`` and ``"TimeLimit.truncated"`` (truncated, not
    terminated); the reset's info goes to ``reset_infos`` as SB3's own vector envs keep it.

    Args:
        venv: a Gymnasium vector env whose ``metadata["autoreset_mode"]`` is same-step (any of make_vec's modes).

    Raises:
        ValueError: the vector env autoresets otherwise.
    """

    def __init__(self, venv: gym.vector.VectorEnv) -> None:
        mode = getattr(venv.metadata.get("autoreset_mode"), "value", venv.metadata.get("autoreset_mode"))
        if mode != SAME_STEP:
            raise ValueError(f"PixelVecEnv needs a vector env with same-step autoreset (SB3 resets an env in the step "
                             f"that ends it): got autoreset_mode={mode!r}; build it with make_vec(..., "
                             "autoreset_mode='SameStep') or use make_sb3_vec")
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self.render_mode = venv.render_mode
        self._actions: Any = None

    def reset(self) -> Any:
        """Reset every env (with the seeds and options set by ``seed()`` / ``set_options()``, then forgotten)."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        options = self._options[0] if self._options and all(o == self._options[0] for o in self._options) else None
        if self._options and options is None:
            raise ValueError("PixelVecEnv.set_options: pass one options dict for every env (the vector env resets "
                             "them together)")
        obs, infos = self.venv.reset(seed=seeds, options=options or None)
        self.reset_infos = env_infos(infos, self.num_envs)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, terminated, truncated, infos = self.venv.step(self._actions)
        dones = terminated | truncated
        per_env = env_infos(infos, self.num_envs)
        out: list[dict[str, Any]] = []
        for i, info in enumerate(per_env):
            if dones[i]:
                step_info = dict(info.get("final_info", {}))
                step_info["terminal_observation"] = info["final_obs"]
                self.reset_infos[i] = {k: v for k, v in info.items() if k not in ("final_obs", "final_info")}
                info = step_info
            info["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            out.append(info)
        return obs, rewards.astype(np.float32), dones, out

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        values = self.venv.get_attr(attr_name)
        return [values[i] for i in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        current = list(self.venv.get_attr(attr_name))
        for i in self._get_indices(indices):
            current[i] = value
        self.venv.set_attr(attr_name, current)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``method_name`` called on the envs ``indices`` only (all by default): the others are not touched."""
        return call_envs(self.venv, list(self._get_indices(indices)), method_name, method_args, method_kwargs)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """Whether each env's wrapper stack holds ``wrapper_class`` (SB3 asks it of its ``Monitor``)."""
        name = f"{wrapper_class.__module__}.{wrapper_class.__qualname__}"
        stacks = wrapper_names(self.venv)
        return [name in stacks[i] for i in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return list(self.venv.render() or [None] * self.num_envs)


def call_envs(venv: gym.vector.VectorEnv, indices: Sequence[int], name: str, args: tuple,
              kwargs: dict[str, Any]) -> list[Any]:
    """``get_wrapper_attr(name)`` of the envs ``indices`` of ``venv`` (pixelrig's batched and process vector envs, or
    Gymnasium's SyncVectorEnv), called with the arguments when callable; no other env is touched.

    Raises:
        TypeError: another kind of vector env, asked for some of its envs only.
    """
    if list(indices) == list(range(venv.num_envs)):
        return list(venv.call(name, *args, **kwargs))
    if isinstance(venv, BatchedVectorEnv):
        return list(venv.call_at(indices, name, *args, **kwargs))
    if isinstance(venv, gym.vector.SyncVectorEnv):
        if name in ("reset", "step", "close"):
            raise ValueError(f"env_method({name!r}): use the vector env's own {name}() instead")
        return [call_env(venv.envs[i], name, args, kwargs) for i in indices]
    raise TypeError(f"env_method on some envs of a {type(venv).__name__}: it can call every env only; use "
                    "make_vec's 'batched', 'process' or 'sync' vectorization_mode")


def make_sb3_vec(env_id: str, num_envs: int, **make_vec_kwargs: Any) -> PixelVecEnv:
    """SB3's VecEnv over ``make_vec(env_id, num_envs, ...)`` with same-step autoreset; by default the batched
    vector env (many envs in this process, their rigs drawn together: ``vectorization_mode="batched"``).

    Args:
        env_id: a registered id.
        num_envs: number of envs.
        make_vec_kwargs: :func:`pixelrig.make_vec`'s other arguments (cams, renderer, num_workers, env_kwargs, ...).
    """
    make_vec_kwargs.setdefault("vectorization_mode", "batched")
    return PixelVecEnv(make_vec(env_id, num_envs, autoreset_mode=SAME_STEP, **make_vec_kwargs))
