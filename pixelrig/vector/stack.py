"""``FrameStack``: a vector env's last few observations of each env merged along their last axis (an image's
channels), so a policy sees motion in one array per key, as one batch per step.

Per env, the frames are those of Gymnasium's ``FrameStackObservation(env, k, padding_type="reset")`` (oldest
first; an episode's first observation repeated until k have been seen), with the frame axis merged into the last
one: an ``(H, W, C)`` image becomes ``(H, W, k*C)``, a ``(n,)`` vector ``(k*n,)``. Unlike a wrapper inside each
env, it leaves the envs of a batched vector env as they are (PixelObs outermost, every rig drawn in one pass), and
it stacks the whole batch at once.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space

from pixelrig.vector.autoreset import NEXT_STEP, SAME_STEP, autoreset_name


def stacked_space(space: gym.Space, num_frames: int) -> gym.Space:
    """``space`` with ``num_frames`` frames merged along the last axis of every Box (a Dict key by key).

    Raises:
        ValueError: a space that is not a Box or a Dict of Boxes, or a Box with no axis.
    """
    if isinstance(space, gym.spaces.Dict):
        return gym.spaces.Dict({key: stacked_space(sub, num_frames) for key, sub in space.spaces.items()})
    if not isinstance(space, gym.spaces.Box) or not space.shape:
        raise ValueError(f"FrameStack stacks Box observations (or a Dict of them) along their last axis: got {space}")
    return gym.spaces.Box(np.concatenate([space.low] * num_frames, axis=-1),
                          np.concatenate([space.high] * num_frames, axis=-1), dtype=space.dtype)


class FrameStack(gym.vector.VectorWrapper):
    """Each env's last ``num_frames`` observations, merged along the last axis of every key, one batch per step.

    Every call returns new arrays (the frames are concatenated into them; nothing returned earlier is changed
    later), so a learner may keep views of one step's observations while the next steps run.

    Args:
        env: a vector env with next-step or disabled autoreset (Gymnasium's default; what RLlib uses). Its Box
            observations (or Dict of Boxes) are stacked.
        num_frames: frames per observation (>= 1).

    Raises:
        ValueError: ``num_frames < 1``, a space that is not Boxes, or same-step autoreset (whose ``final_obs``
            this wrapper does not stack).
    """

    def __init__(self, env: gym.vector.VectorEnv, num_frames: int) -> None:
        # checked before wrapping env: a refused FrameStack, once collected, must not close the env it refused
        if isinstance(num_frames, bool) or not isinstance(num_frames, int) or num_frames < 1:
            raise ValueError(f"num_frames={num_frames!r} must be an integer >= 1 (1: no stacking)")
        mode = autoreset_name(env.metadata.get("autoreset_mode", NEXT_STEP))
        if mode == SAME_STEP:
            raise ValueError("FrameStack needs next-step or disabled autoreset (same-step's final_obs would go "
                             "unstacked): build the vector env with autoreset_mode='NextStep'")
        single = stacked_space(env.single_observation_space, num_frames)
        super().__init__(env)
        self.num_frames = num_frames
        self.single_observation_space = single
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)
        self._mode = mode
        self._stacks: Any = None
        self._restart = np.zeros(env.num_envs, np.bool_)

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the envs (``options["reset_mask"]``: only those): a reset env's stack is its observation
        ``num_frames`` times."""
        mask = (options or {}).get("reset_mask")  # read first: Gymnasium's vector envs pop it from options
        obs, infos = self.env.reset(seed=seed, options=options)
        if mask is None or self._stacks is None:
            self._stacks = self._map(lambda old, frame: self._restarted(frame), obs)
            self._restart[:] = False
        else:  # the other envs did not step: their stacks stay as they were
            self._stacks = self._map(lambda old, frame: self._restarted(frame, old, mask), obs)
            self._restart[mask] = False
        return self._stacks, infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step the envs; an env that autoreset in this step (next-step: its episode ended at the previous one)
        starts a new stack from its reset observation."""
        if self._stacks is None:
            raise gym.error.ResetNeeded("FrameStack: call reset() before step()")
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        self._stacks = self._push(obs, self._restart)
        self._restart = (terminated | truncated) if self._mode == NEXT_STEP else np.zeros(self.num_envs, np.bool_)
        return self._stacks, rewards, terminated, truncated, infos

    def _map(self, fn: Any, obs: Any) -> Any:
        """``fn(old stack, new frame)`` key by key (or on the one Box)."""
        if isinstance(obs, dict):
            old = self._stacks or {}
            return {key: fn(old.get(key), np.asarray(value)) for key, value in obs.items()}
        return fn(self._stacks, np.asarray(obs))

    def _restarted(self, frame: np.ndarray, old: np.ndarray | None = None,
                   mask: np.ndarray | None = None) -> np.ndarray:
        """``frame`` repeated ``num_frames`` times: for every env, or (``old`` and ``mask`` given) for the masked
        envs, the others' stacks copied from ``old``."""
        if mask is None:
            return np.concatenate([frame] * self.num_frames, axis=-1)
        new = np.array(old)
        new[mask] = np.concatenate([frame[mask]] * self.num_frames, axis=-1)
        return new

    def _push(self, obs: Any, restart: np.ndarray) -> Any:
        """New stacks: the old ones shifted by one frame with ``obs`` last; ``restart`` envs: ``obs`` repeated."""

        def push(old: np.ndarray, frame: np.ndarray) -> np.ndarray:
            new = np.concatenate([old[..., frame.shape[-1]:], frame], axis=-1)
            if restart.any():
                new[restart] = np.concatenate([frame[restart]] * self.num_frames, axis=-1)
            return new

        return self._map(push, obs)
