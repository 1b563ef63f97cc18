"""The scripted experts: each succeeds on at least 90% of seeds 0-99 of its task (slow; a fast run holds most of
seeds 0-9), acts through the public action space only, is deterministic, reads PixelObs' dict, refuses a control mode
it cannot act in, and PushExpert is still importable where it was."""

from __future__ import annotations

import re
import time

import gymnasium as gym
import numpy as np
import pytest

import pixelrig  # noqa: F401 (registers the ids)
from pixelrig import Camera, PixelObs
from pixelrig.experts import EXPERTS, LiftExpert, PegInsertExpert, PushExpert

TASK_IDS = [i for i in EXPERTS if i != "pixelrig/PandaPush-v0"]


def make_expert(env: gym.Env):
    return EXPERTS[env.spec.id](env)


def run_episodes(env_id: str, seeds: range) -> tuple[list[int], list[int]]:
    """The seeds the expert succeeds on and each episode's length; every action is checked against the space."""
    env = gym.make(env_id)
    try:
        successes, lengths = [], []
        for seed in seeds:
            obs, _ = env.reset(seed=seed)
            expert = make_expert(env)
            done, steps = False, 0
            while not done:
                action = expert(obs)
                assert env.action_space.contains(action), (env_id, seed, action)
                obs, _, terminated, truncated, info = env.step(action)
                done, steps = terminated or truncated, steps + 1
            if info["is_success"]:
                successes.append(seed)
            lengths.append(steps)
        return successes, lengths
    finally:
        env.close()


@pytest.mark.parametrize("env_id", TASK_IDS)
def test_experts_succeed_on_most_of_ten_seeds(env_id: str) -> None:
    successes, _ = run_episodes(env_id, range(10))
    assert len(successes) >= 8, f"{env_id}: the expert succeeded on seeds {successes} of 0-9"


@pytest.mark.slow
@pytest.mark.parametrize("env_id", TASK_IDS)
def test_experts_succeed_on_90_percent_of_seeds_0_to_99(env_id: str) -> None:
    start = time.monotonic()
    successes, lengths = run_episodes(env_id, range(100))
    print(f"{env_id}: {len(successes)}/100, {np.mean(lengths):.1f} steps on average (at most {max(lengths)}), "
          f"{time.monotonic() - start:.0f} s")
    assert len(successes) >= 90, f"{env_id}: {len(successes)}/100; failed on {sorted(set(range(100)) - set(successes))}"


@pytest.mark.parametrize("env_id", ["pixelrig/PandaStack-v0", "pixelrig/PandaPegInsert-v0"])
def test_experts_are_deterministic_and_read_pixel_obs(env_id: str) -> None:
    """The same seed gives the same actions, from the bare env's observations and from PixelObs' dicts."""
    cams = [Camera("c", width=16, height=16, eye=(1.2, 0.0, 1.2), target=(0.5, 0.0, 0.63), modalities=("rgb",))]
    runs = []
    for env in (gym.make(env_id), PixelObs(gym.make(env_id), cams=cams)):
        try:
            obs, _ = env.reset(seed=4)
            expert = make_expert(env)
            actions = []
            for _ in range(40):
                actions.append(expert(obs))
                obs, *_ = env.step(actions[-1])
            expert.reset()
            assert expert.phase == expert.phases[0] and not expert.memory
            runs.append(np.array(actions))
        finally:
            env.close()
    np.testing.assert_array_equal(runs[0], runs[1])


def test_experts_refuse_a_control_they_cannot_act_in() -> None:
    env = gym.make("pixelrig/PandaLift-v0", control="ee_pose")
    peg = gym.make("pixelrig/PandaPegInsert-v0", control="ee_delta_pos")
    try:
        with pytest.raises(ValueError, match=re.escape("LiftExpert acts in control ('ee_delta_pos', 'ee_delta_pose'): "
                                                       "make the env with control='ee_delta_pos' or 'ee_delta_pose' "
                                                       "(got control='ee_pose')")):
            LiftExpert(env)
        with pytest.raises(ValueError, match="^" + re.escape("PegInsertExpert turns the peg to the hole: make the env "
                                                             "with control='ee_delta_pose' (PandaPegInsert's default)")
                           + "$"):  # the whole message, as the user reads it
            PegInsertExpert(peg)
    finally:
        env.close()
        peg.close()


def test_lift_expert_acts_in_pose_control_too() -> None:
    """With ee_delta_pose the expert's actions have 7 values (no rotation) and still lift the cube."""
    env = gym.make("pixelrig/PandaLift-v0", control="ee_delta_pose")
    try:
        obs, _ = env.reset(seed=0)
        expert = LiftExpert(env)
        for _ in range(60):
            action = expert(obs)
            assert action.shape == (7,) and not action[3:6].any()
            obs, _, terminated, _, info = env.step(action)
            if terminated:
                break
        assert info["is_success"]
    finally:
        env.close()


def test_an_observation_without_its_state_is_refused() -> None:
    env = gym.make("pixelrig/PandaLift-v0")
    try:
        expert = LiftExpert(env)
        with pytest.raises(ValueError, match=re.escape("the expert reads the env's state observation: wrap the env "
                                                       "in PixelObs without pixels_only=True")):
            expert({"front/rgb": np.zeros((2, 2, 3), np.uint8)})
    finally:
        env.close()


def test_push_expert_is_still_importable_where_it_was() -> None:
    from pixelrig.experts.push import PushExpert as Old

    assert Old is PushExpert and EXPERTS["pixelrig/PandaPush-v0"] is PushExpert
    successes, _ = run_episodes("pixelrig/PandaPush-v0", range(3))
    assert len(successes) >= 2
