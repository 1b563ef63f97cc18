"""Autoreset on envs whose step and reset infos differ: PandaReach, whose info holds ``is_success`` and the
gripper's ``distance`` to the target, episodes ending both ways (a greedy reach succeeds and terminates, a dawdling
one is truncated by the TimeLimit). In every vectorization mode and every autoreset mode, step for step against
Gymnasium's own SyncVectorEnv: an ended episode's ``final_info`` is its last step's info (``is_success`` True for a
reach that succeeded), never the new episode's reset info (``is_success`` False, another distance).

CartPole, which test_vector_autoreset.py steps, cannot tell these apart: its step and reset infos are both ``{}``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import Camera
from pixelrig.vector import EnvFactory, make_vec
from pixelrig.vector.autoreset import DISABLED, MODES, SAME_STEP, AutoresetMode

from .conftest import assert_trees_equal

pytestmark = pytest.mark.skipif(AutoresetMode is None, reason="gymnasium 1.0 has next-step autoreset only")

TASK = "pixelrig/PandaReach-v0"
CAM = Camera("c", width=12, height=12, eye=(1.2, 0.0, 1.1), target=(0.5, 0.0, 0.62), far=3.0,
             modalities=("rgb", "depth"))
N = 3
STEPS = 15
KW = {"max_episode_steps": 5}
GAIN = np.array([20.0, 0.2, 20.0])
"""Per env: a greedy reach (succeeds in 3-5 steps and terminates) and a dawdling one (truncated at 5 steps)."""


def policy(obs: dict, k: int) -> np.ndarray:
    """Toward the target (state[6:9] - gripper state[0:3]) at each env's gain, with a little seeded noise."""
    state = obs["state"]
    noise = np.random.default_rng(k).uniform(-0.2, 0.2, (N, 3))
    return np.clip((state[:, 6:9] - state[:, 0:3]) * GAIN[:, None] + noise, -1, 1).astype(np.float32)


def reference(mode: str) -> gym.vector.SyncVectorEnv:
    factories = [EnvFactory(TASK, KW, (CAM,), renderer="tiny") for _ in range(N)]
    return gym.vector.SyncVectorEnv(factories, autoreset_mode=AutoresetMode(mode))


def run(venv: gym.vector.VectorEnv, mode: str) -> list:
    obs, info = venv.reset(seed=3)
    out = [(obs, info)]
    for k in range(STEPS):
        obs, reward, terminated, truncated, info = venv.step(policy(obs, k))
        out.append((obs, reward, terminated, truncated, info))
        done = terminated | truncated
        if mode == DISABLED and done.any():
            obs, info = venv.reset(options={"reset_mask": done})
            out.append((obs, info))
    return out


def ended_infos(steps: list) -> list[tuple[bool, bool, dict, dict]]:
    """Every (terminated, truncated, final_info, reset info) of same-step steps whose episode ended."""
    found = []
    for step in steps[1:]:
        _, _, terminated, truncated, info = step
        for i in np.flatnonzero(info.get("_final_info", np.zeros(N, bool))):
            final, reset = ({k: d[k][i] for k in ("is_success", "distance")} for d in (info["final_info"], info))
            found.append((bool(terminated[i]), bool(truncated[i]), final, reset))
    return found


@pytest.fixture(scope="module")
def references() -> dict[str, list]:
    """Gymnasium's SyncVectorEnv's run in each autoreset mode (computed once)."""
    out = {}
    for mode in MODES:
        ref = reference(mode)
        try:
            out[mode] = run(ref, mode)
        finally:
            ref.close()
    return out


def test_the_inputs_tell_the_ended_episodes_info_from_the_new_ones(references: dict[str, list]) -> None:
    """The run ends episodes both ways, and each ended one's info differs from its successor's reset info."""
    ended = ended_infos(references[SAME_STEP])
    assert any(term and final["is_success"] for term, _, final, _ in ended), "a reach must succeed"
    assert any(trunc and not term for term, trunc, _, _ in ended), "a reach must be truncated"
    for term, _, final, reset in ended:
        assert final["is_success"] == term and not reset["is_success"]
        assert final["distance"] != reset["distance"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("vectorization", ["sync", "async", "batched-1", "batched-2"])
def test_every_mode_gives_gymnasiums_infos_on_a_panda_task(vectorization: str, mode: str,
                                                           references: dict[str, list]) -> None:
    kind, _, workers = vectorization.partition("-")
    venv = make_vec(TASK, N, cams=[CAM], renderer="tiny", vectorization_mode=kind, env_kwargs=KW,
                    autoreset_mode=mode, **({"num_workers": int(workers)} if workers else {}))
    try:
        ours = run(venv, mode)
    finally:
        venv.close()
    theirs = references[mode]
    if mode == SAME_STEP:
        for term, _, final, reset in ended_infos(ours):
            assert final["is_success"] == term, "final_info must be the ended episode's last info"
            assert not reset["is_success"]
    assert_trees_equal(ours, theirs)
