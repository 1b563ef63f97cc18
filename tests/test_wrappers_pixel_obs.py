"""PixelObs: spaces from specs, observation contents, render purity, determinism, backend choice, errors."""

from __future__ import annotations

import dataclasses
import re

import gymnasium as gym
import numpy as np
import pybullet as p
import pybullet_data
import pytest

import pixelrig
from pixelrig import Camera, PixelObs
from pixelrig.experts.push import PushExpert
from pixelrig.render import active_egl_client

from .conftest import assert_trees_equal, egl_or_skip, gl_or_skip, physics_state


def small_default_cams(env: gym.Env, size: int = 32) -> list[Camera]:
    """The env's default rig at a smaller size (purity does not depend on the image size)."""
    return [dataclasses.replace(Camera.from_dict(c), width=size, height=size)
            for c in env.unwrapped.default_cameras()]


def test_keys_shapes_dtypes_and_space() -> None:
    env = PixelObs(gym.make("pixelrig/PandaPush-v0"))
    try:
        obs, _ = env.reset(seed=1)
        env.action_space.seed(1)
        first = obs
        expected = {f"{c}/{m}" for c in ("front", "side", "wrist") for m in ("rgb", "depth", "label")} | {"state"}
        assert set(obs) == expected == set(env.observation_space.spaces)
        assert obs["front/rgb"].shape == (84, 84, 3) and obs["front/rgb"].dtype == np.uint8
        assert obs["wrist/depth"].shape == (84, 84, 1) and obs["wrist/depth"].dtype == np.float32
        assert obs["side/label"].shape == (84, 84, 1) and obs["side/label"].dtype == np.int32
        assert env.observation_space.contains(obs)
        obs, *_ = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs)
        names = env.get_wrapper_attr("label_names")
        assert sorted(names.values()) == ["cube", "ground", "panda", "table", "target"]
        # every body in the front view is one the label map names
        assert set(np.unique(obs["front/label"]).tolist()) <= set(names) | {-1}
        cube = next(i for i, n in names.items() if n == "cube")
        assert (first["front/label"] == cube).any(), "the cube is in the front camera's view"
    finally:
        env.close()


def test_space_is_built_without_reset_or_render() -> None:
    base = gym.make("pixelrig/CartPole-v0")
    calls = []
    base.unwrapped.render_backend.render = lambda *a, **k: calls.append(1)  # would break if called
    env = PixelObs(base, cams=[Camera("c", width=10, height=7, eye=(0, -3, 1), target=(0, 0, 0))],
                   pixels_only=True)
    assert env.observation_space["c/rgb"].shape == (7, 10, 3)
    assert calls == []
    env.close()


def test_pixels_only_and_state_passthrough() -> None:
    plain = gym.make("pixelrig/CartPole-v0")
    wrapped = PixelObs(gym.make("pixelrig/CartPole-v0"))
    only = PixelObs(gym.make("pixelrig/CartPole-v0"), pixels_only=True)
    try:
        s, _ = plain.reset(seed=3)
        o, _ = wrapped.reset(seed=3)
        q, _ = only.reset(seed=3)
        np.testing.assert_array_equal(o["state"], s)
        assert "state" not in q and set(q) == {"front/rgb", "front/depth", "front/label"}
        np.testing.assert_array_equal(o["front/rgb"], q["front/rgb"])
    finally:
        for e in (plain, wrapped, only):
            e.close()


@pytest.mark.parametrize("renderer", ["tiny", "gl"])
@pytest.mark.parametrize("env_id", ["pixelrig/CartPole-v0", "pixelrig/PandaPush-v0"])
def test_rendering_does_not_change_the_simulation(env_id: str, renderer: str) -> None:
    """200 steps with and without PixelObs (and render() calls): physics, obs, rewards, infos bitwise equal."""
    if renderer == "gl":
        gl_or_skip()
    plain = gym.make(env_id, renderer="tiny")
    seen = gym.make(env_id, render_mode="rgb_array", renderer=renderer)
    seen = PixelObs(seen, cams=small_default_cams(seen))
    policy_a, policy_b = PushExpert(), PushExpert()
    rng = np.random.default_rng(0)
    try:
        a, _ = plain.reset(seed=7)
        b, _ = seen.reset(seed=7)
        assert_trees_equal(a, b["state"])
        for t in range(200):
            if env_id.endswith("PandaPush-v0"):
                act_a, act_b = policy_a(a), policy_b(b["state"])
                assert_trees_equal(act_a, act_b)
            else:
                act_a = act_b = rng.uniform(-1, 1, size=1).astype(np.float32)
            ra = plain.step(act_a)
            rb = seen.step(act_b)
            if t % 50 == 0:
                seen.render()
            a = ra[0]
            b = rb[0]
            assert_trees_equal(ra[0], rb[0]["state"], f"step {t} obs")
            assert_trees_equal(ra[1:], rb[1:], f"step {t} reward/terminated/truncated/info")
            assert_trees_equal(physics_state(plain.unwrapped.client), physics_state(seen.unwrapped.client),
                               f"step {t} physics")
            if ra[2] or ra[3]:
                a, _ = plain.reset(seed=t)
                b, _ = seen.reset(seed=t)
                policy_a.reset()
                policy_b.reset()
    finally:
        plain.close()
        seen.close()


def test_egl_rendering_does_not_change_the_simulation() -> None:
    egl_or_skip()
    plain = gym.make("pixelrig/PandaPush-v0", renderer="tiny")
    seen = gym.make("pixelrig/PandaPush-v0", renderer="egl")
    seen = PixelObs(seen, cams=small_default_cams(seen))
    policy_a, policy_b = PushExpert(), PushExpert()
    try:
        a, _ = plain.reset(seed=2)
        b, _ = seen.reset(seed=2)
        for t in range(60):
            ra, rb = plain.step(policy_a(a)), seen.step(policy_b(b["state"]))
            a, b = ra[0], rb[0]
            assert_trees_equal(ra[0], rb[0]["state"], f"step {t}")
            assert_trees_equal(physics_state(plain.unwrapped.client), physics_state(seen.unwrapped.client))
        assert b["front/rgb"].std() > 5
    finally:
        plain.close()
        seen.close()


def test_same_seed_same_actions_same_pixels() -> None:
    envs = [PixelObs(gym.make("pixelrig/PandaPush-v0")) for _ in range(2)]
    envs = [PixelObs(e.env, cams=small_default_cams(e.env, 48)) for e in envs]
    try:
        obs = [e.reset(seed=11)[0] for e in envs]
        assert_trees_equal(obs[0], obs[1])
        actions = np.random.default_rng(1).uniform(-1, 1, size=(15, 3)).astype(np.float32)
        for a in actions:
            outs = [e.step(a) for e in envs]
            assert_trees_equal(outs[0], outs[1])
        # a second reset with the same seed reproduces the first episode's start exactly
        again = envs[0].reset(seed=11)[0]
        assert_trees_equal(again, obs[0])
    finally:
        for e in envs:
            e.close()


def test_wrapped_env_without_client_is_rejected_with_the_fix() -> None:
    with pytest.raises(TypeError, match=re.escape("does not expose a pybullet client: pixelrig needs "
                                                  "env.unwrapped.client")):
        PixelObs(gym.make("CartPole-v1"), cams=[Camera("c", eye=(1, 1, 1), target=(0, 0, 0))])


class ForeignEnv(gym.Env):
    """An env written without pixelrig: it only exposes its pybullet client."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (3,), np.float64)
    action_space = gym.spaces.Box(-1, 1, (1,), np.float32)

    def __init__(self) -> None:
        self.client = p.connect(p.DIRECT)
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=self.client)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        p.resetSimulation(physicsClientId=self.client)
        p.setGravity(0, 0, -9.81, physicsClientId=self.client)
        p.loadURDF("plane.urdf", physicsClientId=self.client)
        self.ball = p.loadURDF("sphere2.urdf", [0, 0, 2], physicsClientId=self.client)
        return self._obs(), {}

    def _obs(self):
        return np.array(p.getBasePositionAndOrientation(self.ball, physicsClientId=self.client)[0])

    def step(self, action):
        p.stepSimulation(physicsClientId=self.client)
        return self._obs(), 0.0, False, False, {}

    def close(self):
        p.disconnect(self.client)


def test_foreign_env_gets_tiny_and_refuses_egl() -> None:
    cam = Camera("c", width=33, height=33, eye=(0, -5, 2), target=(0, 0, 2), modalities=("rgb", "label"))
    env = PixelObs(ForeignEnv(), cams=[cam])
    try:
        obs, _ = env.reset(seed=0)
        assert obs["c/label"][16, 16, 0] == 1  # the ball (body 1) is in the middle
        assert env.label_names == {0: "plane", 1: "urdf_robot"}  # the model files' own names
        assert env.render_backend.name == "tiny"
    finally:
        env.close()
    with pytest.raises(ValueError, match=re.escape("resolved to 'egl', which must start before the scene's first "
                                                   "body, but ForeignEnv built its scene itself: use a renderer that "
                                                   "can join a built scene (tiny, gl)")):
        PixelObs(ForeignEnv(), cams=[cam], renderer="egl")


def test_foreign_env_draws_on_gl_like_tiny() -> None:
    """gl joins a scene already built (unlike pybullet's EGL plugin): a foreign env renders on it as on tiny."""
    gl_or_skip()
    cam = Camera("c", width=33, height=33, eye=(0, -5, 2), target=(0, 0, 2), modalities=("rgb", "depth", "label"))
    frames = {}
    for renderer in ("tiny", "gl"):
        env = PixelObs(ForeignEnv(), cams=[cam], renderer=renderer)
        try:
            frames[renderer], _ = env.reset(seed=0)
            assert env.render_backend.name == renderer
        finally:
            env.close()
    assert (frames["gl"]["c/label"] == frames["tiny"]["c/label"]).mean() >= 0.99
    assert np.median(np.abs(frames["gl"]["c/depth"] - frames["tiny"]["c/depth"])) <= 0.001


def test_renderer_switch_before_reset_and_refusal_after() -> None:
    egl_or_skip()
    env = gym.make("pixelrig/CartPole-v0", renderer="tiny")
    wrapped = PixelObs(env, renderer="egl")
    try:
        assert env.unwrapped.render_backend.name == "egl"
        obs, _ = wrapped.reset(seed=0)
        assert obs["front/rgb"].std() > 5
        with pytest.raises(RuntimeError, match=re.escape("cannot switch CartPoleEnv from renderer 'egl' to 'tiny' "
                                                         "after reset(): pass renderer='tiny' when creating")):
            PixelObs(env, renderer="tiny")
    finally:
        wrapped.close()
    assert active_egl_client() is None


def test_second_egl_client_in_one_process_is_refused() -> None:
    egl_or_skip()
    first = gym.make("pixelrig/CartPole-v0", renderer="egl")
    try:
        with pytest.raises(RuntimeError, match=re.escape("an EGL renderer is already active in this process")):
            gym.make("pixelrig/CartPole-v0", renderer="egl")
        assert first.unwrapped.render_backend.name == "egl"
        first.reset(seed=0)  # the first env is unharmed
    finally:
        first.close()
    second = gym.make("pixelrig/CartPole-v0", renderer="egl")  # allowed once the first is closed
    second.close()


def test_unknown_mount_fails_at_construction_and_env_survives() -> None:
    env = gym.make("pixelrig/PandaPush-v0")
    with pytest.raises(ValueError, match=re.escape("unknown mount link 'panda_wrist'; links in the scene: "
                                                   "ground/planeLink, table/baseLink, panda/panda_link0")):
        PixelObs(env, cams=[Camera("w", mount="panda_wrist")])
    obs, _ = env.reset(seed=0)  # untouched
    assert obs.shape == (22,)
    env.close()


def test_use_after_close_is_a_runtime_error() -> None:
    env = gym.make("pixelrig/CartPole-v0")
    env.close()
    with pytest.raises(RuntimeError, match="CartPoleEnv is closed"):
        _ = env.unwrapped.client


def test_pixelrig_exports() -> None:
    assert pixelrig.PixelObs is PixelObs and pixelrig.Camera is Camera
