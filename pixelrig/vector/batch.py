"""``EnvBatch``: the envs of one process, stepped one by one with next-step autoreset, their PixelObs rigs drawn a
part at a time (each part's gl rigs in one pass, submitted while the next part steps)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from pixelrig.render.backends import PendingFrames, submit
from pixelrig.vector.autoreset import DISABLED, NEXT_STEP, SAME_STEP, autoreset_name
from pixelrig.wrappers.pixel_obs import PixelObs

EnvFn = Callable[[], gym.Env]
MIN_CHUNK_ENVS = 4


def chunk_size(num_envs: int) -> int:
    """Envs stepped between two gl submissions of a process (its envs in about four parts, at least 4 envs each):
    each part's rigs rasterise beside the next part's physics, and the last part's beside the decoding of the
    first ones.
    """
    return max(MIN_CHUNK_ENVS, -(-num_envs // 4))


def _reset_unrendered(env: gym.Env, seed: int | None, options: dict[str, Any] | None) -> tuple[Any, dict]:
    if isinstance(env, PixelObs):
        return env.reset_unrendered(seed=seed, options=options)
    return env.reset(seed=seed, options=options)


def stack_names(env: gym.Env) -> tuple[str, ...]:
    """``module.Class`` of every layer of ``env``'s wrapper stack, outermost first."""
    names = []
    while True:
        names.append(f"{type(env).__module__}.{type(env).__qualname__}")
        if not isinstance(env, gym.Wrapper):
            return tuple(names)
        env = env.env


class _Part:
    """Some envs' rigs submitted in one go (:func:`pixelrig.render.backends.submit`): the envs, in order, and their
    frames, pending until collected."""

    def __init__(self, envs: list[int], pending: PendingFrames | None) -> None:
        self.envs = envs
        self.pending = pending

    def discard(self) -> None:
        if self.pending is not None:
            self.pending.discard()


class EnvBatch:
    """The envs of one process, stepped one by one with one of Gymnasium's autoreset modes, their PixelObs rigs
    drawn in parts of ``chunk_envs`` envs (:func:`chunk_size`): each part's rigs submitted together
    (:func:`pixelrig.render.backends.submit`: one pass without waiting on a backend that batches, such as gl, while
    the next envs step; read back at the end; other backends rig by rig). An env whose outermost wrapper is not
    PixelObs renders (or not) on its own.

    Args:
        env_fns: callables that build the envs.
        autoreset_mode: a name of :data:`pixelrig.vector.autoreset.MODES` (Gymnasium's ``AutoresetMode`` values).
    """

    def __init__(self, env_fns: Sequence[EnvFn], autoreset_mode: str = NEXT_STEP) -> None:
        self.autoreset_mode = autoreset_name(autoreset_mode)
        self.envs: list[gym.Env] = []
        try:
            for fn in env_fns:
                self.envs.append(fn())
        except BaseException:
            self.close()
            raise
        self.autoreset = np.zeros(len(self.envs), np.bool_)
        self.chunk_envs = chunk_size(len(self.envs))

    def reset(self, seeds: Sequence[int | None], options: dict[str, Any] | None,
              mask: Sequence[bool] | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
        """Reset the envs where ``mask`` is true (all without one).

        Returns:
            Observations (None for envs not reset) and infos (empty for those).
        """
        inner: list[Any] = [None] * len(self.envs)
        infos: list[dict[str, Any]] = [{} for _ in self.envs]
        for i, (env, seed) in enumerate(zip(self.envs, seeds, strict=True)):
            if mask is None or mask[i]:
                inner[i], infos[i] = _reset_unrendered(env, seed, options)
                self.autoreset[i] = False
        return self.observe(inner), infos

    def step(self, actions: Sequence[Any]) -> tuple[list[Any], list[float], list[bool], list[bool], list[dict],
                                                    list[tuple[Any, dict] | None]]:
        """Step every env, autoresetting as the mode says (next-step: an env whose episode ended at the previous
        step is reset instead, reward 0, not done; same-step: an env whose episode ends now is reset at once and its
        last observation, drawn before the reset, and info come back as its final; disabled: no reset).

        Every ``chunk_envs`` envs, their rigs are drawn and sent to the GL while the next envs step: llvmpipe
        rasterises in its own threads beside the physics. The images do not depend on it beyond the tile each camera
        gets in the framebuffer, which only ``len(envs)`` and ``chunk_envs`` decide.

        Returns:
            Per env: observation, reward, terminated, truncated, info, and (same-step only) the ended episode's
            ``(final observation, final info)`` or None.

        Raises:
            RuntimeError: autoreset disabled and an env's episode ended without a reset since (nothing is stepped).
        """
        if self.autoreset_mode == DISABLED and self.autoreset.any():
            ended = np.flatnonzero(self.autoreset).tolist()
            raise RuntimeError(f"autoreset is disabled and the episodes of envs {ended} ended: reset them first with "
                               "reset(options={'reset_mask': mask}) (nothing was stepped)")
        n = len(self.envs)
        inner: list[Any] = [None] * n
        rewards, terminated, truncated = [0.0] * n, [False] * n, [False] * n
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        finals: list[tuple[Any, dict] | None] = [None] * n
        parts: list[_Part] = []
        first = 0
        try:
            for i, (env, action) in enumerate(zip(self.envs, actions, strict=True)):
                if self.autoreset[i] and self.autoreset_mode == NEXT_STEP:
                    inner[i], infos[i] = _reset_unrendered(env, None, None)
                else:
                    below = env.env if isinstance(env, PixelObs) else env  # PixelObs's pixels come in observe()
                    inner[i], rewards[i], terminated[i], truncated[i], infos[i] = below.step(action)
                    if self.autoreset_mode == SAME_STEP and (terminated[i] or truncated[i]):
                        finals[i] = (self._drawn_alone(i, inner[i]), infos[i])  # before the reset changes the scene
                        inner[i], infos[i] = _reset_unrendered(env, None, None)
                self.autoreset[i] = bool(terminated[i] or truncated[i]) and self.autoreset_mode != SAME_STEP
                if i + 1 - first == self.chunk_envs or i + 1 == n:
                    parts.append(self._submit(range(first, i + 1), inner))
                    first = i + 1
            return self._collect(parts, inner), rewards, terminated, truncated, infos, finals
        finally:
            for part in parts:
                part.discard()

    def _drawn_alone(self, i: int, inner: Any) -> Any:
        """Env ``i``'s observation from its wrapped env's own, its rig drawn now."""
        only: list[Any] = [None] * len(self.envs)
        only[i] = inner
        return self.observe(only)[i]

    def observe(self, inner: list[Any]) -> list[Any]:
        """The envs' observations from their wrapped envs' own (``inner``; None stays None), every gl rig drawn in
        one pass."""
        part = self._submit(range(len(self.envs)), inner)
        try:
            return self._collect([part], inner)
        finally:
            part.discard()

    def _submit(self, indices: range, inner: list[Any]) -> _Part:
        """Draw the rigs of the PixelObs envs at ``indices`` whose observation is not None: the rigs of backends that
        batch in one pass sent without waiting, the others now."""
        envs = [i for i in indices if inner[i] is not None and isinstance(self.envs[i], PixelObs)]
        jobs = [(self.envs[i].render_backend, self.envs[i].rig_requests()) for i in envs]
        return _Part(envs, submit(jobs) if jobs else None)

    def _collect(self, parts: list[_Part], inner: list[Any]) -> list[Any]:
        """``inner`` with the observation of every env the parts drew (waiting for each part in turn)."""
        out = list(inner)
        for part in parts:
            if part.pending is None:
                continue
            for i, frames in zip(part.envs, part.pending.collect(), strict=True):
                env = self.envs[i]
                out[i] = env.observation_from(env.rig.decode(frames), inner[i])  # type: ignore[attr-defined]
        return out

    def wrapper_names(self) -> list[tuple[str, ...]]:
        """Each env's wrapper stack (:func:`stack_names`)."""
        return [stack_names(env) for env in self.envs]

    def call(self, name: str, args: tuple, kwargs: dict[str, Any]) -> list[Any]:
        """``env.get_wrapper_attr(name)`` of every env, called with the arguments when callable."""
        results = []
        for env in self.envs:
            attr = env.get_wrapper_attr(name)
            results.append(attr(*args, **kwargs) if callable(attr) else attr)
        return results

    def set_attr(self, name: str, values: Sequence[Any]) -> None:
        """``env.set_wrapper_attr(name, value)`` for every env and its value."""
        for env, value in zip(self.envs, values, strict=True):
            env.set_wrapper_attr(name, value)

    def close(self) -> None:
        """Close every env (their gl scenes go with their render backends). Idempotent."""
        envs, self.envs = self.envs, []
        for env in envs:
            env.close()
