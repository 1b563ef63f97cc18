"""Goal observations for HER (``goal_obs=True``) on PandaReach, Push, Lift, PickPlace and Stack: the Dict, the goal's
own reward computed from the two goals alone (``compute_reward`` over a batch equals each step's reward, bitwise),
success as the goal distance test, the flat state unchanged, snapshots, PixelObs over a goal env, bad input, and
SB3's ``HerReplayBuffer`` with its default settings."""

from __future__ import annotations

import dataclasses
import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pixelrig
from pixelrig import Camera, PixelObs, snapshot
from pixelrig.envs.goals import goal_distance, goal_reward
from pixelrig.envs.terms import GOAL_TASKS
from pixelrig.experts import EXPERTS
from pixelrig.tasks import ENV_SPECS

from .conftest import assert_restores_exactly, assert_trees_equal

SIZES = {"pixelrig/PandaReach-v0": 3, "pixelrig/PandaPush-v0": 2, "pixelrig/PandaLift-v0": 1,
         "pixelrig/PandaPickPlace-v0": 3, "pixelrig/PandaStack-v0": 6}
"""Each goal task's goal size."""

THRESHOLDS = {"pixelrig/PandaReach-v0": 0.05, "pixelrig/PandaPush-v0": 0.05, "pixelrig/PandaLift-v0": 0.01,
              "pixelrig/PandaPickPlace-v0": 0.03, "pixelrig/PandaStack-v0": 0.02}
"""Each goal task's distance threshold (m), as documented."""


def bits(x) -> bytes:
    """The float64 bytes of a reward or rewards: equal bytes are bitwise-equal values."""
    return np.asarray(x, dtype=np.float64).tobytes()


def entry_class(env_id: str) -> type:
    module, name = ENV_SPECS[env_id]["entry_point"].split(":")
    return getattr(__import__(module, fromlist=[name]), name)


def test_goal_tasks_are_the_tasks_with_goals() -> None:
    """GOAL_TASKS (which the refusal names) lists exactly the registered tasks whose class declares goals."""
    with_goals = [i for i in pixelrig.tasks.TASK_SPECS if entry_class(i).goal_size]
    assert sorted(with_goals) == sorted(GOAL_TASKS) == sorted(SIZES)
    for env_id, size in SIZES.items():
        assert (entry_class(env_id).goal_size, entry_class(env_id).distance_threshold) == (size, THRESHOLDS[env_id])


# ---- the reward from the goals alone --------------------------------------------------------------------------

@st.composite
def goal_batches(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, float]:
    """A batch of (achieved, desired) float32 goal pairs, some equal and some just around the threshold."""
    size = draw(st.sampled_from(sorted(set(SIZES.values()))))
    batch = draw(st.integers(1, 16))
    floats = st.floats(-2.0, 2.0, width=32)
    achieved = draw(hnp.arrays(np.float32, (batch, size), elements=floats))
    desired = draw(hnp.arrays(np.float32, (batch, size), elements=floats))
    threshold = draw(st.sampled_from(sorted(set(THRESHOLDS.values()))))
    for row in range(batch):  # some pairs equal, some at about the threshold's distance
        kind = draw(st.sampled_from(["free", "equal", "near"]))
        if kind == "equal":
            desired[row] = achieved[row]
        elif kind == "near":
            step = draw(st.floats(0.5, 1.5)) * threshold / np.sqrt(size)
            desired[row] = (achieved[row] + np.float32(step)).astype(np.float32)
    return achieved, desired, threshold


@settings(max_examples=150, deadline=None)
@given(goal_batches(), st.sampled_from(["sparse", "dense"]))
def test_goal_reward_of_a_batch_is_each_pair_s_reward_bitwise(case, reward_type: str) -> None:
    achieved, desired, threshold = case
    batch = goal_reward(achieved, desired, threshold, reward_type)
    assert batch.shape == (len(achieved),) and batch.dtype == np.float64
    singles = [goal_reward(a, d, threshold, reward_type) for a, d in zip(achieved, desired, strict=True)]
    assert all(np.ndim(s) == 0 for s in singles)
    assert bits(batch) == bits(singles)
    distance = goal_distance(achieved, desired)
    np.testing.assert_allclose(distance, np.linalg.norm(achieved.astype(np.float64) - desired, axis=-1),
                               rtol=1e-12, atol=1e-15)
    if reward_type == "sparse":
        assert bits(batch) == bits(np.where(distance < threshold, 0.0, -1.0))  # never -0.0
    else:
        assert bits(batch) == bits(0.0 - distance)
        assert np.all(batch[np.all(achieved == desired, axis=-1)] == 0.0)


@pytest.fixture(scope="module")
def goal_envs():
    """{(env id, reward type): a goal env}, made on first use, closed at the end."""
    made: dict[tuple[str, str], gym.Env] = {}

    def get(env_id: str, reward_type: str = "sparse") -> gym.Env:
        if (env_id, reward_type) not in made:
            made[env_id, reward_type] = gym.make(env_id, goal_obs=True, reward_type=reward_type)
        return made[env_id, reward_type]

    yield get
    for env in made.values():
        env.close()


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(SIZES)), st.sampled_from(["sparse", "dense"]), st.data())
def test_compute_reward_is_vectorised_and_terminated_is_the_sparse_success(goal_envs, env_id: str, reward_type: str,
                                                                           data: st.DataObject) -> None:
    """Every goal env's compute_reward: (B, k) -> (B,), (k,) -> a scalar, each row bitwise its own;
    compute_terminated is reward 0 with the sparse reward; compute_truncated is never."""
    env = goal_envs(env_id, reward_type).unwrapped
    size = SIZES[env_id]
    batch = data.draw(st.integers(1, 8))
    achieved = data.draw(hnp.arrays(np.float32, (batch, size), elements=st.floats(0.0, 1.0, width=32)))
    near = data.draw(hnp.arrays(np.float32, (batch, size), elements=st.floats(-0.03125, 0.03125, width=32)))
    desired = (achieved + near).astype(np.float32)
    infos = np.array([{} for _ in range(batch)])
    rewards = env.compute_reward(achieved, desired, infos)
    assert rewards.shape == (batch,)
    assert bits(rewards) == bits([env.compute_reward(a, d, {}) for a, d in zip(achieved, desired, strict=True)])
    assert bits(rewards) == bits(goal_reward(achieved, desired, THRESHOLDS[env_id], reward_type))
    reached = env.compute_terminated(achieved, desired, infos)
    assert reached.shape == (batch,) and reached.dtype == bool
    assert [env.compute_terminated(a, d, {}) for a, d in zip(achieved, desired, strict=True)] == reached.tolist()
    if reward_type == "sparse":
        assert (rewards == 0.0).tolist() == reached.tolist()
    assert not env.compute_truncated(achieved, desired, infos).any()
    assert env.compute_truncated(achieved[0], desired[0], {}) is False


# ---- the steps ------------------------------------------------------------------------------------------------

def reach_policy(obs: dict) -> np.ndarray:
    """PandaReach has no expert: move the gripper centre straight at the target (Δxyz in units of 0.05 m)."""
    return np.clip((obs["desired_goal"] - obs["achieved_goal"]) / 0.05, -1.0, 1.0).astype(np.float32)


def stepped(env_id: str, reward_type: str, seed: int, random_steps: int, expert: bool, **kwargs):
    """Reset with ``seed``, take ``random_steps`` random actions then (``expert``) the task's expert until the episode
    ends; returns every (obs, reward, terminated, truncated, info) and the actions, ending with the env."""
    env = gym.make(env_id, goal_obs=True, reward_type=reward_type, **kwargs)
    obs, info = env.reset(seed=seed)
    policy = (EXPERTS[env_id](env) if env_id in EXPERTS else reach_policy) if expert else None
    env.action_space.seed(seed)
    out, actions = [(obs, None, False, False, info)], []
    while len(actions) < random_steps + (env.spec.max_episode_steps if expert else 0):
        action = env.action_space.sample() if len(actions) < random_steps else policy(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        out.append((obs, reward, terminated, truncated, info))
        actions.append(action)
        if terminated or truncated:
            break
    return out, actions, env


@pytest.mark.parametrize("env_id", sorted(SIZES))
def test_steps_reward_is_compute_reward_of_their_goals_and_the_state_is_unchanged(env_id: str) -> None:
    """Random steps, then the expert to success: each step's reward is compute_reward of the step's own goals,
    bitwise, one at a time and as one batch; success is reward 0, and it terminates the episode; the observation
    is in the space and its "observation" is, bit for bit, what the env without goal_obs observes."""
    out, actions, env = stepped(env_id, "sparse", seed=0, random_steps=8, expert=True)
    plain = gym.make(env_id)
    try:
        base = env.unwrapped
        first, info = out[0][0], out[0][4]
        assert env.observation_space.contains(first) and info["is_success"] is False
        reference = [plain.reset(seed=0)] + [plain.step(a) for a in actions]
        for (obs, reward, terminated, _, info), ref in zip(out, reference, strict=True):
            assert env.observation_space.contains(obs)
            assert set(obs) == {"observation", "achieved_goal", "desired_goal"}
            assert obs["observation"].tobytes() == ref[0].tobytes()
            if reward is None:
                continue
            assert bits(reward) == bits(base.compute_reward(obs["achieved_goal"], obs["desired_goal"], info))
            assert info["is_success"] is terminated is (reward == 0.0)
            if env_id != "pixelrig/PandaStack-v0":  # the task's own success, where the goal test is it
                assert info["is_success"] == ref[4]["is_success"]
        assert out[-1][4]["is_success"], f"{env_id}: the expert did not reach the goal in {len(actions)} steps"
        achieved = np.stack([o[0]["achieved_goal"] for o in out[1:]])
        desired = np.stack([o[0]["desired_goal"] for o in out[1:]])
        infos = np.array([o[4] for o in out[1:]])
        assert bits(base.compute_reward(achieved, desired, infos)) == bits([o[1] for o in out[1:]])
    finally:
        env.close()
        plain.close()


@pytest.mark.parametrize("env_id", sorted(SIZES))
def test_dense_reward_is_minus_the_goal_distance(env_id: str) -> None:
    out, _, env = stepped(env_id, "dense", seed=1, random_steps=12, expert=False)
    try:
        for obs, reward, _, _, info in out[1:]:
            distance = goal_distance(obs["achieved_goal"], obs["desired_goal"])
            assert bits(reward) == bits(0.0 - distance)
            assert bits(reward) == bits(env.unwrapped.compute_reward(obs["achieved_goal"], obs["desired_goal"], info))
            assert info["is_success"] == bool(distance < THRESHOLDS[env_id])
    finally:
        env.close()


def test_goals_are_what_each_task_documents() -> None:
    """Reach: the gripper centre vs the target; Push: the cube's x, y vs the target's; Lift: the cube's height above
    rest, capped at 0.11 m, vs 0.11 m; PickPlace: the cube vs the target; Stack: (A, B) vs (A's place on B, B)."""
    f32 = np.float32
    for env_id in SIZES:
        env = gym.make(env_id, goal_obs=True)
        try:
            obs, _ = env.reset(seed=3)
            base, layout = env.unwrapped, env.unwrapped.observation_layout
            state = obs["observation"]
            if env_id.endswith("Reach-v0"):
                want = state[layout["ee_pos"]], state[layout["target_pos"]]
            elif env_id.endswith("Push-v0"):
                want = state[layout["cube_pos"]][:2], state[layout["target_pos"]][:2]
            elif env_id.endswith("Lift-v0"):
                want = f32([base.position("cube")[2] - (0.625 + 0.025)]), f32([0.11])
            elif env_id.endswith("PickPlace-v0"):
                want = state[layout["cube_pos"]], state[layout["target_pos"]]
            else:
                a, b = state[layout["cube_a_pos"]], state[layout["cube_b_pos"]]
                want = np.concatenate([a, b]), np.concatenate([state[layout["target_pos"]], b])
            np.testing.assert_array_equal(obs["achieved_goal"], want[0])
            np.testing.assert_array_equal(obs["desired_goal"], want[1])
        finally:
            env.close()


def test_lift_goal_success_is_the_task_s_success() -> None:
    """The capped height: lifted 0.10 m or more is the goal reached, less is not; higher than 0.11 m is still
    reached (a plain distance to a point would fail there)."""
    env = gym.make("pixelrig/PandaLift-v0", goal_obs=True)
    try:
        env.reset(seed=0)
        base = env.unwrapped
        for height, reached in ((0.0, False), (0.0995, False), (0.1001, True), (0.105, True), (0.2, True)):
            base.set_body_pose("cube", (*base.position("cube")[:2], 0.65 + height))
            assert base.goal_success() is reached is base.is_success(), height
            assert base.compute_reward(*base.goals(), {}) == (0.0 if reached else -1.0)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", sorted(SIZES))
def test_gymnasium_env_checker_passes(env_id: str) -> None:
    env = gym.make(env_id, goal_obs=True)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


# ---- snapshots, PixelObs, bad input, goal_obs=False -----------------------------------------------------------

@pytest.mark.parametrize("env_id", ["pixelrig/PandaReach-v0", "pixelrig/PandaStack-v0"])
def test_snapshots_restore_a_goal_env_bit_for_bit(env_id: str) -> None:
    env, fresh = gym.make(env_id, goal_obs=True), gym.make(env_id, goal_obs=True)
    try:
        env.reset(seed=4)
        env.action_space.seed(4)
        for _ in range(6):
            env.step(env.action_space.sample())
        snap = snapshot(env)
        actions = [env.action_space.sample() for _ in range(8)]
        assert_restores_exactly(env, fresh, snap, lambda e: [e.step(a) for a in actions])
    finally:
        env.close()
        fresh.close()


def test_pixel_obs_over_a_goal_env_keeps_the_goals_as_keys() -> None:
    """PixelObs: "state" is the goal env's "observation", the goals are keys of their own (pixels_only keeps them);
    every key is flat, so SB3's MultiInputPolicy and HerReplayBuffer take it."""
    env = gym.make("pixelrig/PandaPush-v0", goal_obs=True)
    cams = [dataclasses.replace(Camera.from_dict(c), width=16, height=16) for c in env.unwrapped.default_cameras()]
    wrapped, pixels = PixelObs(env, cams=cams[:1]), PixelObs(gym.make("pixelrig/PandaPush-v0", goal_obs=True),
                                                              cams=cams[:1], pixels_only=True)
    plain = gym.make("pixelrig/PandaPush-v0", goal_obs=True)
    try:
        assert set(wrapped.observation_space.spaces) == {"front/rgb", "front/depth", "front/label", "state",
                                                         "achieved_goal", "desired_goal"}
        assert set(pixels.observation_space.spaces) == {"front/rgb", "front/depth", "front/label",
                                                        "achieved_goal", "desired_goal"}
        obs, _ = wrapped.reset(seed=2)
        own, _ = plain.reset(seed=2)
        assert wrapped.observation_space.contains(obs)
        assert obs["state"].tobytes() == own["observation"].tobytes()
        assert obs["achieved_goal"].tobytes() == own["achieved_goal"].tobytes()
        obs, reward, *_, info = wrapped.step(wrapped.action_space.sample())
        assert reward == wrapped.get_wrapper_attr("compute_reward")(obs["achieved_goal"], obs["desired_goal"], info)
        obs, _ = pixels.reset(seed=2)
        assert pixels.observation_space.contains(obs)
    finally:
        wrapped.close()
        pixels.close()
        plain.close()


@pytest.mark.parametrize("env_id", ["pixelrig/PandaPegInsert-v0", "pixelrig/PandaPickObject-v0",
                                    "pixelrig/CartPole-v0"])
def test_goal_obs_on_a_task_without_goals_names_the_tasks_with_goals(env_id: str) -> None:
    name = entry_class(env_id).__name__
    with pytest.raises(ValueError, match=re.escape(f"{name} has no goal observation: goal_obs=True is for "
                                                   f"{', '.join(GOAL_TASKS)}")):
        gym.make(env_id, goal_obs=True)


def test_bad_goal_options_are_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("PandaReachEnv: reward_type='sparse' needs goal_obs=True")):
        gym.make("pixelrig/PandaReach-v0", reward_type="sparse")
    with pytest.raises(ValueError, match=re.escape("PandaPushEnv: reward_type='dense' needs goal_obs=True")):
        gym.make("pixelrig/PandaPush-v0", reward_type="dense")
    with pytest.raises(ValueError, match=re.escape("PandaLiftEnv: reward_type='shaped' is not a goal reward type")):
        gym.make("pixelrig/PandaLift-v0", goal_obs=True, reward_type="shaped")
    with pytest.raises(ValueError, match=re.escape("PandaPushEnv: goal_obs='yes' must be True or False")):
        gym.make("pixelrig/PandaPush-v0", goal_obs="yes")


@pytest.mark.parametrize("env_id", sorted(SIZES))
def test_without_goal_obs_nothing_changes(env_id: str) -> None:
    """goal_obs=False (the default) is today's env: a Box observation, the default dense reward."""
    env, off = gym.make(env_id), gym.make(env_id, goal_obs=False)
    try:
        assert isinstance(env.observation_space, spaces.Box) and env.observation_space == off.observation_space
        assert env.unwrapped.goal_obs is False and env.unwrapped.reward_type == "dense"
        assert_trees_equal(env.reset(seed=5), off.reset(seed=5))
    finally:
        env.close()
        off.close()


# ---- SB3 ------------------------------------------------------------------------------------------------------

def train_with_her(env_id: str, steps: int, **sac: object):
    """SAC with HerReplayBuffer at its default settings ("future", 4 sampled goals) on a goal env, learning from
    the end of the first episode (HER samples whole episodes only). torch on one thread: on a shared machine its
    thread pool makes 300 small steps 5x slower."""
    sb3 = pytest.importorskip("stable_baselines3")
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    env = gym.make(env_id, goal_obs=True)
    try:
        model = sb3.SAC("MultiInputPolicy", env, replay_buffer_class=sb3.HerReplayBuffer,
                        learning_starts=env.spec.max_episode_steps + 10, seed=0, device="cpu", **sac)
        model.learn(steps)
    except BaseException:
        env.close()
        raise
    finally:
        torch.set_num_threads(threads)
    return model, env


def check_relabelled_rewards(model, env: gym.Env) -> None:
    """The rewards the buffer gives, the steps' own and HER's relabelled ones, are compute_reward of each sample's
    next achieved goal and its desired goal (HER sets a relabelled goal in both observations and rewards it with
    compute_reward; a step's own reward came from step(), whose goals the next observation holds)."""
    buffer = model.replay_buffer
    assert (buffer.n_sampled_goal, buffer.goal_selection_strategy.name) == (4, "FUTURE")
    sample = buffer.sample(256)
    achieved = sample.next_observations["achieved_goal"].numpy()
    desired = sample.next_observations["desired_goal"].numpy()
    rewards = sample.rewards.numpy().reshape(-1)
    assert not np.all(rewards == rewards[0]), "a sample of one reward proves little"
    want = env.unwrapped.compute_reward(achieved, desired, np.array([{}] * len(rewards))).astype(np.float32)
    assert rewards.tobytes() == want.tobytes()


def test_sb3_sac_with_her_trains_on_panda_reach() -> None:
    model, env = train_with_her("pixelrig/PandaReach-v0", 300, batch_size=64, policy_kwargs={"net_arch": [64, 64]})
    try:
        assert model.num_timesteps == 300
        check_relabelled_rewards(model, env)
        sample = model.replay_buffer.sample(256)  # Reach's target stays put: every sample's goal is in both
        np.testing.assert_array_equal(sample.observations["desired_goal"].numpy(),
                                      sample.next_observations["desired_goal"].numpy())
    finally:
        env.close()


@pytest.mark.slow
def test_sb3_sac_with_her_trains_on_panda_stack() -> None:
    """Stack's goal covers both cubes: HER relabels the pair of positions (its desired goal moves with B, so a step's
    own reward is the next observation's goals')."""
    model, env = train_with_her("pixelrig/PandaStack-v0", 1500)
    try:
        check_relabelled_rewards(model, env)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["pixelrig/PandaReach-v0", "pixelrig/PandaLift-v0", "pixelrig/PandaPegInsert-v0"])
def test_only_goal_envs_have_the_goal_methods(env_id: str) -> None:
    """SB3's and Gymnasium's checkers take an env with ``compute_reward`` for a goal env and then require a Dict
    observation: without goal_obs=True the goal methods are absent (hasattr is False), with a message naming it."""
    env = gym.make(env_id)
    try:
        for name in ("compute_reward", "compute_terminated", "compute_truncated"):
            assert not hasattr(env.unwrapped, name)
        with pytest.raises(AttributeError, match=re.escape("compute_reward is a goal env's: make the env with "
                                                           "goal_obs=True")):
            env.unwrapped.compute_reward  # noqa: B018
    finally:
        env.close()
