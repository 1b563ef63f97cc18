"""Goal observations for hindsight experience replay (``goal_obs=True``), as panda-gym and Gymnasium-Robotics have
them: a ``Dict`` of ``observation``, ``achieved_goal`` and ``desired_goal``, and a reward computed from the two goals
alone (:func:`goal_reward`), so that ``compute_reward`` over a batch of relabelled goals gives what ``step()`` gave.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from pixelrig.envs.terms import Observed

GOAL_REWARD_TYPES: tuple[str, ...] = ("sparse", "dense")
"""``reward_type=`` with ``goal_obs=True``: "sparse" (the default, as panda-gym's: -1 until the goal distance is below
the threshold, then 0) or "dense" (minus the goal distance)."""

GOAL_KEYS: tuple[str, ...] = ("observation", "achieved_goal", "desired_goal")
"""The keys of a goal observation."""


def goal_distance(achieved: Any, desired: Any) -> np.ndarray:
    """The Euclidean distance between goals along their last axis: (k,) -> () or (B, k) -> (B,), float64.

    Computed in float64 one component at a time (no reduction whose order could depend on the batch's shape), so
    a row of a batch gets bitwise the distance it gets alone.

    Raises:
        ValueError: the two do not have the same shape, or it is not (k,) or (B, k).
    """
    a = np.asarray(achieved, dtype=np.float64)
    d = np.asarray(desired, dtype=np.float64)
    if a.shape != d.shape or a.ndim not in (1, 2):
        raise ValueError(f"goals must both be (k,) or (B, k) arrays of one shape: got achieved {a.shape}, "
                         f"desired {d.shape}")
    diff = a - d
    total = np.zeros(diff.shape[:-1])
    for i in range(diff.shape[-1]):
        total = total + diff[..., i] * diff[..., i]
    return np.sqrt(total)


def goal_reached(achieved: Any, desired: Any, threshold: float) -> Any:
    """Whether each goal pair is within ``threshold`` (m): a bool for (k,) goals, a (B,) bool array for a batch."""
    reached = goal_distance(achieved, desired) < threshold
    return bool(reached) if reached.ndim == 0 else reached


def goal_reward(achieved: Any, desired: Any, threshold: float, reward_type: str) -> np.ndarray:
    """The goal reward: "sparse" -1.0 while :func:`goal_distance` >= ``threshold``, 0.0 below it; "dense" minus
    the distance. (k,) goals give a 0-d float64 value, (B, k) goals a (B,) array."""
    distance = goal_distance(achieved, desired)
    reward = np.where(distance < threshold, 0.0, -1.0) if reward_type == "sparse" else 0.0 - distance
    return reward[()] if reward.ndim == 0 else reward


def check_goal_reward_type(owner: str, reward_type: Any) -> str:
    """``reward_type`` of a goal env if it is one of :data:`GOAL_REWARD_TYPES`.

    Raises:
        ValueError: anything else, naming the choices.
    """
    if reward_type not in GOAL_REWARD_TYPES:
        raise ValueError(f"{owner}: reward_type={reward_type!r} is not a goal reward type: pass "
                         "reward_type='sparse' (-1 until the goal is reached, then 0; the default with goal_obs=True) "
                         "or reward_type='dense' (minus the goal distance)")
    return reward_type


def distance_reward_type(owner: str, goal_obs: Any, reward_type: Any) -> str:
    """The ``reward_type`` of a task whose own reward is minus a distance (PandaReach, PandaPush): with
    ``goal_obs=True`` "sparse" (the default) or "dense"; without, "dense" only (its reward is the distance's).

    Raises:
        ValueError: a reward type without ``goal_obs=True``, or an unknown one.
    """
    if goal_obs is True or goal_obs is np.True_:
        return check_goal_reward_type(owner, "sparse" if reward_type is None else reward_type)
    if reward_type is not None:
        raise ValueError(f"{owner}: reward_type={reward_type!r} needs goal_obs=True (the goal's sparse or dense "
                         "reward); without it the reward is minus the distance: leave reward_type out")
    return "dense"


class GoalObserved(Observed):
    """An :class:`~pixelrig.envs.terms.Observed` env whose task is a goal (``goal_obs=True``).

    A task sets :attr:`goal_size` and :attr:`distance_threshold` and implements :meth:`achieved_goal` and
    :meth:`desired_goal`; with ``goal_obs=True`` (see :class:`~pixelrig.envs.terms.Observed`):

    - the observation is ``Dict(observation=<the flat state, unchanged>, achieved_goal=Box(goal_size),
      desired_goal=Box(goal_size))``, float32;
    - the reward is :meth:`compute_reward` of the observation's two goals (as float32, the values the observation
      holds), for ``self.reward_type`` "sparse" or "dense" (:func:`goal_reward`);
    - success (``info["is_success"]``) and termination are :meth:`compute_terminated`: the goal distance below
      :attr:`distance_threshold`.

    ``compute_reward``, ``compute_terminated`` and ``compute_truncated`` are Gymnasium-Robotics' ``GoalEnv``'s,
    vectorised over a batch of goals: what SB3's ``HerReplayBuffer`` calls to relabel.
    """

    goal_size: ClassVar[int] = 0
    distance_threshold: ClassVar[float] = 0.0
    """Goal success: the goal distance below this (m)."""

    reward_type: str

    def achieved_goal(self) -> np.ndarray:
        """The goal the state achieves now: (:attr:`goal_size`,) float64."""
        raise NotImplementedError

    def desired_goal(self) -> np.ndarray:
        """The goal the episode wants now: (:attr:`goal_size`,) float64."""
        raise NotImplementedError

    def goals(self) -> tuple[np.ndarray, np.ndarray]:
        """``(achieved, desired)`` now, float32: what the observation holds and the reward is computed from."""
        return (np.asarray(self.achieved_goal(), np.float64).astype(np.float32),
                np.asarray(self.desired_goal(), np.float64).astype(np.float32))

    def describe_observation(self) -> None:
        super().describe_observation()
        if self.goal_obs:
            goal = spaces.Box(-np.inf, np.inf, (self.goal_size,), np.float32)
            self.observation_space = spaces.Dict({"observation": self.observation_space, "achieved_goal": goal,
                                                  "desired_goal": goal})

    def observe(self) -> Any:
        flat = super().observe()
        if not self.goal_obs:
            return flat
        achieved, desired = self.goals()
        return {"observation": flat, "achieved_goal": achieved, "desired_goal": desired}

    def require_goals(self, name: str) -> None:
        """Refuse a goal method on an env made without ``goal_obs=True`` with an AttributeError, so that ``hasattr``
        says False: SB3's and Gymnasium's checkers take an env with ``compute_reward`` for a goal env, whose
        observation must then be a ``Dict``."""
        if not self.goal_obs:
            raise AttributeError(f"{type(self).__name__}.{name} is a goal env's: make the env with goal_obs=True")

    @property
    def compute_reward(self) -> Callable[[Any, Any, Any], np.ndarray]:
        """``compute_reward(achieved_goal, desired_goal, info)``: the reward for reaching ``achieved_goal`` when
        ``desired_goal`` is wanted ((k,) -> a 0-d value, (B, k) -> (B,)): what ``step()`` returns for the same goals,
        bitwise. ``info`` is not read. Only with ``goal_obs=True``."""
        self.require_goals("compute_reward")
        return lambda achieved_goal, desired_goal, info: goal_reward(achieved_goal, desired_goal,
                                                                     self.distance_threshold, self.reward_type)

    @property
    def compute_terminated(self) -> Callable[[Any, Any, Any], Any]:
        """``compute_terminated(achieved_goal, desired_goal, info)``: whether the goal is reached (the episode ends
        then): the goal distance below :attr:`distance_threshold`; a bool for (k,) goals, a (B,) bool array for a
        batch. Only with ``goal_obs=True``."""
        self.require_goals("compute_terminated")
        return lambda achieved_goal, desired_goal, info: goal_reached(achieved_goal, desired_goal,
                                                                      self.distance_threshold)

    @property
    def compute_truncated(self) -> Callable[[Any, Any, Any], Any]:
        """``compute_truncated(achieved_goal, desired_goal, info)``: never from the goals (the registered time limit
        truncates): False, or a (B,) array of False. Only with ``goal_obs=True``."""
        self.require_goals("compute_truncated")
        return lambda achieved_goal, desired_goal, info: (
            False if not np.shape(achieved_goal)[:-1] else np.zeros(np.shape(achieved_goal)[:-1], dtype=bool))

    def goal_success(self) -> bool:
        """Whether the goal is reached now (:meth:`compute_terminated` of :meth:`goals`)."""
        return bool(goal_reached(*self.goals(), self.distance_threshold))

    def distance_evaluate(self, distance: float, success_distance: float) -> tuple[float, bool, dict[str, Any]]:
        """``(reward, terminated, info)`` of a task whose reward is minus ``distance`` (Reach's, Push's): a goal env's
        goal reward, else ``-distance``, success below ``success_distance``; ``info`` holds the distance."""
        if self.goal_obs:
            return self.goal_evaluate({"distance": distance})
        success = distance < success_distance
        return -distance, success, {"is_success": success, "distance": distance}

    def distance_reset_info(self, distance: float) -> dict[str, Any]:
        """The reset info of such a task: ``is_success`` (a goal env's goal success, else False) and the distance."""
        return {"is_success": self.goal_success() if self.goal_obs else False, "distance": distance}

    def goal_evaluate(self, info: dict[str, Any]) -> tuple[float, bool, dict[str, Any]]:
        """``(reward, terminated, info)`` of a goal env's step: the goals' own reward and success, ``info`` with
        ``is_success`` first."""
        achieved, desired = self.goals()
        success = bool(goal_reached(achieved, desired, self.distance_threshold))
        info = {"is_success": success, **info}
        return float(goal_reward(achieved, desired, self.distance_threshold, self.reward_type)), success, info

