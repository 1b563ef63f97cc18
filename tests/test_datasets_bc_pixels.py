"""Behaviour cloning from a recorded dataset (examples/bc_pixels.py): the pieces are honest (the dataset->array loader
gives back the recorded frames, the policy's actions are the action space's, evaluation counts
``info["is_success"]``), and (slow, CI's learning stage) the cut-down run learns PandaLift from pixels."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import DatasetRecorder, PixelObs
from pixelrig.experts import LiftExpert

pytest.importorskip("torch")
pytest.importorskip("h5py")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import bc_pixels as bc  # noqa: E402 (the example, from its folder)
import torch  # noqa: E402


def record(path: Path, seeds: list[int], cut: int) -> list[list[tuple[dict, np.ndarray]]]:
    """Record LiftExpert episodes (24x24 front and wrist RGB) at ``path``: one to its end per seed, then one cut
    short after ``cut`` steps (seed ``seeds[-1] + 1``); returns each episode's (observation, action) pairs as the
    env gave them and the expert chose them."""
    env = DatasetRecorder(PixelObs(gym.make(bc.TASK, renderer="tiny"), cams=bc.policy_cameras(24)), path,
                          format="robomimic", overwrite=True)
    expert = LiftExpert(env)
    episodes = []
    try:
        for seed, limit in [*((s, None) for s in seeds), (seeds[-1] + 1, cut)]:
            obs, _ = env.reset(seed=seed)
            expert.reset()
            steps, done = [], False
            while not done and len(steps) != limit:
                action = expert(obs)
                steps.append(({k: np.array(v) for k, v in obs.items()}, action))
                obs, _, terminated, truncated, info = env.step(action)
                done = terminated or truncated
            assert limit is not None or info["is_success"]
            episodes.append(steps)
    finally:
        env.close()  # the last episode is written cut short
    return episodes


def test_the_loader_gives_back_the_recorded_frames_and_only_successful_episodes(tmp_path: Path) -> None:
    """Images, proprioception (the gripper's terms only: no cube pose) and actions equal what the env gave and the
    expert did, frame by frame, episodes in order; the episode cut short (not a success) is left out."""
    path = tmp_path / "lift.hdf5"
    episodes = record(path, [3, 4], cut=5)
    demos = bc.load_demos(path)
    env = gym.make(bc.TASK)
    layout = env.unwrapped.observation_layout
    env.close()
    kept = [step for steps in episodes[:2] for step in steps]
    assert len(demos) == len(kept) and demos.num_episodes == 2
    assert list(demos.episode) == [0] * len(episodes[0]) + [1] * len(episodes[1])
    assert demos.proprio.shape == (len(kept), 11) and demos.renderer == "tiny"
    assert [c.name for c in demos.cameras] == ["front", "wrist"]
    for i, (obs, action) in enumerate(kept):
        for cam in ("front", "wrist"):
            np.testing.assert_array_equal(demos.images[cam][i], obs[f"{cam}/rgb"])
        state = obs["state"]
        expected = np.concatenate([state[layout[t]] for t in ("ee_pos", "ee_quat", "ee_linvel", "gripper_opening")])
        np.testing.assert_array_equal(demos.proprio[i], expected)
        np.testing.assert_array_equal(demos.actions[i], action)


def test_proprioception_is_read_by_name() -> None:
    layout = {"ee_pos": slice(0, 3), "cube_pos": slice(3, 6), "gripper_opening": slice(6, 7)}
    assert list(bc.proprio_index(layout, ("ee_pos", "gripper_opening"))) == [0, 1, 2, 6]
    with pytest.raises(KeyError, match="'ee_quat'.*not in the observation layout"):
        bc.proprio_index(layout, ("ee_pos", "ee_quat"))


def test_each_robot_reads_its_own_proprioception_and_unknown_tasks_are_named() -> None:
    """The Panda's gripper terms for Panda tasks, the SO-101's joints (jaw included) and gripper pose for SO-101
    tasks, with or without the ``pixelrig/`` prefix; both name terms their tasks' layouts have, never a cube's."""
    assert bc.proprio_terms("pixelrig/PandaPickPlace-v0") == ("ee_pos", "ee_quat", "ee_linvel", "gripper_opening")
    assert bc.proprio_terms("SO101Lift-v0") == ("joint_pos", "ee_pos", "ee_quat", "ee_linvel")
    for task, size in (("pixelrig/PandaLift-v0", 11), ("pixelrig/SO101Lift-v0", 16)):
        env = gym.make(task)
        try:
            index = bc.proprio_index(env.unwrapped.observation_layout, bc.proprio_terms(task))
        finally:
            env.close()
        assert len(index) == size
    with pytest.raises(ValueError, match="'pixelrig/CartPole-v1'.*Panda, SO101.*PROPRIO_TERMS"):
        bc.proprio_terms("pixelrig/CartPole-v1")


def test_a_saved_policy_acts_with_the_terms_it_was_trained_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """``--save`` keeps the proprioception's terms with the weights: the policy ``pixelrig eval`` loads reads the
    SO-101's 16 numbers in an SO-101 env, and gives the same actions as the policy that was saved."""
    torch.manual_seed(0)
    terms = bc.proprio_terms("pixelrig/SO101Lift-v0")
    policy = bc.BCPolicy(["front", "wrist"], 16, 6, chunk=2).eval()
    demos = bc.Demos(images={}, proprio=np.zeros((1, 16), np.float32), actions=np.zeros((1, 6), np.float32),
                     episode=np.zeros(1, np.int64), env_id="pixelrig/SO101Lift-v0", env_kwargs={},
                     cameras=bc.policy_cameras(24, task="pixelrig/SO101Lift-v0"), renderer="tiny", terms=terms)
    bc.save_policy(policy, demos, tmp_path / "p.pt")
    monkeypatch.setenv("BC_PIXELS_MODEL", str(tmp_path / "p.pt"))
    env = PixelObs(gym.make("pixelrig/SO101Lift-v0", renderer="tiny"), cams=demos.cameras)
    try:
        loaded = bc.eval_policy(env)
        obs, _ = env.reset(seed=3)
        layout = env.unwrapped.observation_layout
        assert list(loaded.index) == list(bc.proprio_index(layout, terms))
        np.testing.assert_array_equal(loaded(obs), bc.BCAgent(policy, loaded.index)(obs))
    finally:
        env.close()


def test_action_chunks_stay_inside_their_episode() -> None:
    actions = np.arange(5, dtype=np.float32)[:, None]
    chunks = bc.action_chunks(actions, np.array([0, 0, 0, 1, 1]), 3)
    assert chunks[..., 0].tolist() == [[0, 1, 2], [1, 2, 2], [2, 2, 2], [3, 4, 4], [4, 4, 4]]


def test_random_shift_moves_each_image_as_a_whole() -> None:
    images = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).reshape(2, 3, 8, 8)
    out = bc.random_shift(images, 2, torch.Generator().manual_seed(1))
    padded = torch.nn.functional.pad(images, (2, 2, 2, 2), mode="replicate")
    assert out.shape == images.shape
    for image, window in zip(out, padded, strict=True):
        assert any(torch.equal(image, window[:, dy:dy + 8, dx:dx + 8]) for dy in range(5) for dx in range(5))
    assert torch.equal(bc.random_shift(images, 0), images)


def test_colour_jitter_draws_per_image_inside_its_ranges_and_repeats_with_the_seed() -> None:
    """kornia's jitter with LeRobot's ranges: uint8 in and out, each image its own draw (two equal inputs come out
    different), a grey image's brightness scaled within [0.8, 1.2] (hue and saturation leave grey grey), the same
    images again after the same ``torch.manual_seed``."""
    jitter = bc.color_jitter()
    images = torch.full((64, 3, 8, 8), 100, dtype=torch.uint8)
    torch.manual_seed(3)
    out = jitter(images)
    assert out.dtype == torch.uint8 and out.shape == images.shape
    means = out.float().mean(dim=(1, 2, 3))
    assert len(set(means.tolist())) > 32  # per image, not one draw for the batch
    assert 79 <= float(means.min()) and float(means.max()) <= 121 and float(means.max() - means.min()) > 20
    torch.manual_seed(3)
    assert torch.equal(jitter(images), out)


def test_a_fixed_number_of_steps_trains_as_long_whatever_the_dataset_size() -> None:
    """``steps`` sets the gradient steps (the study's equal compute): 5 steps of 4 frames over 8 frames are two
    passes and a half, logged as three, the last one step long; without it, ``epochs`` passes."""
    rng = np.random.default_rng(0)
    demos = bc.Demos(images={"front": rng.integers(0, 255, (8, 16, 16, 3), dtype=np.uint8)},
                     proprio=rng.normal(size=(8, 3)).astype(np.float32),
                     actions=rng.uniform(-1, 1, (8, 2)).astype(np.float32), episode=np.repeat([0, 1], 4),
                     env_id=bc.TASK, env_kwargs={}, cameras=[], renderer="tiny", terms=("ee_pos",))
    config = dataclasses.replace(bc.QUICK, batch_size=4, chunk=2, epochs=7, steps=5, jitter=True)
    logged: list[str] = []
    _, losses = bc.train_bc(demos, config, logged.append)
    assert len(losses) == 3 and logged[-1].startswith("epoch 3/3")
    _, losses = bc.train_bc(demos, dataclasses.replace(config, steps=None), logged.append)
    assert len(losses) == 7


def test_the_policy_acts_inside_the_action_space() -> None:
    """Whatever the inputs, the actions are (B, chunk, 4) in [-1, 1]; the agent gives one float32 action in the
    env's space per observation, the newest chunk's first action at an episode's start."""
    torch.manual_seed(0)
    policy = bc.BCPolicy(["front", "wrist"], 11, 4, chunk=3, proprio_mean=np.zeros(11), proprio_std=np.ones(11))
    with torch.no_grad():
        for p in policy.head.parameters():
            p.mul_(100.0)  # saturate: the bounds must still hold
        images = {cam: torch.randint(0, 256, (5, 3, 24, 24), dtype=torch.uint8) for cam in policy.cameras}
        out = policy(images, torch.randn(5, 11) * 10)
    assert out.shape == (5, 3, 4) and float(out.abs().max()) <= 1.0
    env = gym.make(bc.TASK)
    space = env.action_space
    env.close()
    obs = {"front/rgb": np.zeros((24, 24, 3), np.uint8), "wrist/rgb": np.full((24, 24, 3), 200, np.uint8),
           "state": np.linspace(-1, 1, 29, dtype=np.float32)}
    agent = bc.BCAgent(policy.eval(), np.arange(11))
    agent.reset(0)
    first = agent(obs)
    assert first.shape == (4,) and first.dtype == np.float32 and space.contains(first)
    with torch.no_grad():
        chunk = policy({k: torch.from_numpy(obs[f"{k}/rgb"]).permute(2, 0, 1)[None] for k in policy.cameras},
                       torch.from_numpy(obs["state"][:11])[None])[0].numpy()
    np.testing.assert_allclose(first, chunk[0], atol=1e-6)
    second = agent(obs)  # the mean of the first chunk's second action and the new chunk's first
    np.testing.assert_allclose(second, (chunk[1] + chunk[0]) / 2, atol=1e-6)
    for _ in range(5):  # no more than chunk predictions are averaged: the same observation, the same chunk
        last = agent(obs)
    np.testing.assert_allclose(last, chunk[:3].mean(0), atol=1e-6)


class ScriptedInfo(gym.Wrapper):
    """Reports ``is_success`` (and ends episodes) on the steps given per seed, whatever the env says."""

    def __init__(self, env: gym.Env, success_at: dict[int, int], end_at: dict[int, int]) -> None:
        super().__init__(env)
        self.success_at, self.end_at = success_at, end_at
        self.seed, self.t = -1, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        self.seed, self.t = seed, 0
        obs, info = self.env.reset(seed=seed, options=options)
        return obs, {**info, "is_success": False}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.t += 1
        info = {**info, "is_success": self.success_at.get(self.seed) == self.t}
        return obs, 0.0, self.end_at.get(self.seed) == self.t, truncated, info


def test_evaluation_counts_success_from_info() -> None:
    """An episode succeeds when a step's ``info["is_success"]`` does, even if it then goes on; ending (terminated)
    without it is no success; the agent is reset with each episode's seed."""
    env = ScriptedInfo(gym.make(bc.TASK, max_episode_steps=4), success_at={11: 2}, end_at={12: 3})
    seen: list[int | None] = []

    class Still:
        def reset(self, seed: int | None = None) -> None:
            seen.append(seed)

        def __call__(self, obs: Any) -> np.ndarray:
            return np.zeros(4, np.float32)

    try:
        results = bc.evaluate(Still(), [10, 11, 12], env)
    finally:
        env.close()
    assert results == [{"seed": 10, "success": False, "steps": 4}, {"seed": 11, "success": True, "steps": 4},
                       {"seed": 12, "success": False, "steps": 3}]
    assert seen == [10, 11, 12] and bc.success_rate(results) == pytest.approx(1 / 3)


def test_random_actions_are_seeded_per_episode() -> None:
    env = gym.make(bc.TASK)
    agent = bc.RandomAgent(env.action_space)
    env.close()
    agent.reset(5)
    a = [agent(None) for _ in range(3)]
    agent.reset(5)
    assert np.array_equal(a, [agent(None) for _ in range(3)]) and env.action_space.contains(a[0])


def test_training_seeds_may_not_reach_the_evaluation_seeds(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="reach the evaluation seeds"):
        bc.run(dataclasses.replace(bc.QUICK, seed=990, episodes=20), tmp_path)


def test_the_command_line_picks_the_run_and_where_it_goes() -> None:
    config, args = bc.parse_args([])
    assert config == bc.Config()
    assert (args.out, args.figure) == (Path("docs/bc_pixels.json"), Path("docs/bc_pixels.png"))
    config, args = bc.parse_args(["--quick", "--epochs", "3", "--seed", "2", "--renderer", "tiny"])
    assert config == dataclasses.replace(bc.QUICK, epochs=3, seed=2, renderer="tiny")
    assert config.task == bc.TASK == "pixelrig/PandaLift-v0"
    config, _ = bc.parse_args(["--task", "pixelrig/SO101Lift-v0"])
    assert config == dataclasses.replace(bc.Config(), task="pixelrig/SO101Lift-v0")
    assert args.out == Path("out/bc_pixels_quick.json") and args.figure == Path("out/bc_pixels_quick.png")


QUICK_THRESHOLD = 0.50
"""The success rate the cut-down run must reach on seeds 1000-1029 (random actions: 0 there)."""


@pytest.mark.slow
@pytest.mark.learning
@pytest.mark.ci_learning
@pytest.mark.timeout(600)
def test_bc_learns_to_lift_the_cube_from_pixels(tmp_path: Path) -> None:
    """examples/bc_pixels.py --quick: 100 LiftExpert demonstrations, BC on 64x64 front and wrist RGB plus the
    gripper's proprioception (25 epochs), then 30 unseen seeded episodes under PixelObs. The policy must lift the cube
    in at least QUICK_THRESHOLD (50%) of them, and beat random actions on the same seeds (0%) by as much. Measured
    on 2 shared cores (gl): seeds 0, 1, 2 (this test) 87%, 93%, 80% in 1.8-2.0 min each; seeds 3, 4 100%, 93%;
    seed 0 on tiny (PIXELRIG_RENDERER=tiny) 77% in 2.5 min.
    With 60 demonstrations (30 epochs) five seeds gave 50-100%: too close to a bound for CI.
    PIXELRIG_LEARNING_SEED picks the seed (collection and training; default 0)."""
    seed = int(os.environ.get("PIXELRIG_LEARNING_SEED", "0"))
    start = time.monotonic()
    result = bc.run(dataclasses.replace(bc.QUICK, seed=seed), tmp_path)
    minutes = (time.monotonic() - start) / 60
    summary = (f"seed {seed}: success {result['success_rate']:.0%}, random {result['random_success_rate']:.0%} over "
               f"{len(result['eval_seeds'])} episodes; loss {result['loss'][0]:.4f} -> {result['loss'][-1]:.4f}; "
               f"{result['dataset']['frames']} frames, {result['renderer']}; {minutes:.1f} min")
    print(summary)
    assert result["success_rate"] >= QUICK_THRESHOLD, summary
    assert result["success_rate"] >= result["random_success_rate"] + QUICK_THRESHOLD, summary


@pytest.mark.parametrize(("json_name", "run"), [("bc_pixels.json", "full (`examples/bc_pixels.py`)"),
                                                 ("bc_pixels_so101.json", "SO-101 (`--task pixelrig/SO101Lift-v0`)")])
def test_the_documented_results_are_the_runs(json_name: str, run: str) -> None:
    """docs/training.md's rows for the full runs are their JSONs' (examples/bc_pixels.py's output), each run a full one
    (200 demonstrations, 50 unseen seeds from 1000) of the task it names, with the SO-101's own state terms; the SO-101
    run met issue 38's 80%."""
    docs = Path(__file__).resolve().parents[1] / "docs"
    result = json.loads((docs / json_name).read_text())
    seeds = result["eval_seeds"]
    row = (f"| {run} | {result['dataset']['episodes']} ({result['dataset']['frames']:,}) | "
           f"{result['success_rate'] * 100:.0f}% of {len(seeds)} (seeds {seeds[0]}-{seeds[-1]}) | "
           f"{result['random_success_rate'] * 100:.0f}% | {result['times']['total_s'] / 60:.1f} min |")
    assert row in (docs / "training.md").read_text(), row
    assert seeds == list(range(bc.EVAL_SEED, bc.EVAL_SEED + 50)) and result["config"]["episodes"] == 200
    assert result["task"] == result["config"].get("task", bc.TASK)  # runs before --task were PandaLift's
    assert tuple(result["proprio_terms"]) == bc.proprio_terms(result["task"])
    if "SO101" in result["task"]:
        assert result["success_rate"] >= 0.8
        readme = " ".join((docs.parent / "README.md").read_text().split())
        assert (f"{result['dataset']['episodes']} expert demonstrations) lifts the cube in "
                f"{result['success_rate'] * 100:.0f}% of {len(seeds)} unseen episodes") in readme
