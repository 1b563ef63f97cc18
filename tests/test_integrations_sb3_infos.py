"""SB3's VecEnv over pixelrig's vector envs on a task whose step and reset infos differ (PandaReach: ``is_success``
and ``distance``), episodes ending both ways: terminated by success and truncated by the TimeLimit. Step for step
against SB3's own DummyVecEnv of the same envs: an ended episode's info is its last step's (``is_success`` True after
a successful reach, ``TimeLimit.truncated`` after a timeout, the last observation as ``terminal_observation``) and the
new episode's reset info goes to ``reset_infos``, never the other way round.

CartPole, which test_integrations_sb3.py steps, cannot tell them apart: its step and reset infos are both ``{}``.
"""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pixelrig import Camera, make_vec
from pixelrig.vector.factory import EnvFactory

from .conftest import assert_trees_equal

pytest.importorskip("stable_baselines3")

TASK = "pixelrig/PandaReach-v0"
CAM = Camera("c", width=12, height=12, eye=(1.2, 0.0, 1.1), target=(0.5, 0.0, 0.62), far=3.0,
             modalities=("rgb", "depth"))
N = 3
KW = {"max_episode_steps": 5}
GAIN = np.array([20.0, 0.2, 20.0])
"""Per env: a greedy reach (succeeds in 3-5 steps and terminates) and a dawdling one (truncated at 5 steps)."""


def run(venv, steps: int = 15) -> list:
    """seed(), reset() and a reach toward the target at each env's gain (seeded noise): everything SB3 sees, with
    ``reset_infos`` after every step."""
    venv.seed(4)
    obs = venv.reset()
    out = [({k: np.array(v) for k, v in obs.items()}, [dict(i) for i in venv.reset_infos])]
    for k in range(steps):
        state = obs["state"]
        noise = np.random.default_rng(k).uniform(-0.2, 0.2, (N, 3))
        actions = np.clip((state[:, 6:9] - state[:, 0:3]) * GAIN[:, None] + noise, -1, 1).astype(np.float32)
        obs, rewards, dones, infos = venv.step(actions)
        out.append(({k: np.array(v) for k, v in obs.items()}, np.array(rewards), np.array(dones), infos,
                    [dict(i) for i in venv.reset_infos]))
    return out


@pytest.fixture(scope="module")
def dummy() -> list:
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([EnvFactory(TASK, KW, (CAM,), renderer="tiny", worker=i) for i in range(N)])
    try:
        return run(venv)
    finally:
        venv.close()


def test_the_inputs_end_episodes_both_ways_with_infos_unlike_the_reset_ones(dummy: list) -> None:
    ended = [(info, reset) for step in dummy[1:] for info, reset, done in zip(step[3], step[4], step[2], strict=True)
             if done]
    assert any(info["is_success"] and not info["TimeLimit.truncated"] for info, _ in ended), "a reach must succeed"
    assert any(info["TimeLimit.truncated"] and not info["is_success"] for info, _ in ended), "one must time out"
    for info, reset in ended:
        assert not reset["is_success"] and reset["distance"] != info["distance"]


@pytest.mark.parametrize("mode", ["batched-1", "batched-2", "async", "sync"])
def test_equals_dummy_vec_env_on_a_panda_task(mode: str, dummy: list) -> None:
    from pixelrig.integrations.sb3 import make_sb3_vec

    kind, _, workers = mode.partition("-")
    ours = make_sb3_vec(TASK, N, cams=[CAM], renderer="tiny", env_kwargs=KW, vectorization_mode=kind,
                        **({"num_workers": int(workers)} if workers else {}))
    try:
        mine = run(ours)
    finally:
        ours.close()
    for step in mine[1:]:
        for info, reset, done in zip(step[3], step[4], step[2], strict=True):
            if done:
                assert info["is_success"] != info["TimeLimit.truncated"], "the ended episode's info, not the reset's"
                assert not reset["is_success"]
    assert_trees_equal(mine, dummy)


def test_indices_attributes_and_options_reach_the_right_envs() -> None:
    """SB3's ``indices=`` pick envs in get_attr, set_attr, env_method and env_is_wrapped (mutmut found them untested:
    every call before asked all envs), and per-env reset options that differ are refused, not half-applied."""
    from pixelrig.integrations.sb3 import make_sb3_vec

    ours = make_sb3_vec("pixelrig/CartPole-v0", 3, cams=[CAM], renderer="tiny", env_kwargs={"max_episode_steps": 6})
    try:
        ours.set_attr("_max_episode_steps", 2, indices=[1])
        assert ours.get_attr("_max_episode_steps") == [6, 2, 6]
        assert ours.get_attr("_max_episode_steps", indices=[1, 2]) == [2, 6]
        assert ours.env_method("get_wrapper_attr", "_max_episode_steps", indices=[1]) == [2]
        assert ours.env_is_wrapped(gym.wrappers.TimeLimit, indices=[0, 2]) == [True, True]
        ours.set_options([{"a": 1}, {}, {}])
        with pytest.raises(ValueError, match=re.escape("PixelVecEnv.set_options: pass one options dict for every env "
                                                       "(the vector env resets them together)")):
            ours.reset()
    finally:
        ours.close()


@pytest.mark.parametrize(("mode", "workers"), [("sync", 1), ("batched", 1), ("batched", 2), ("async", 1)])
def test_env_method_with_indices_calls_those_envs_only(mode: str, workers: int) -> None:
    """``env_method(..., indices=)`` runs the method in the envs named, in their order, and in no other (before, every
    env ran it and the answers were filtered: a method with side effects changed them all); with two batched workers
    the envs asked for sit in both. Out-of-range indices are named."""
    from pixelrig.integrations.sb3 import make_sb3_vec

    extra = {"num_workers": workers} if mode == "batched" else {}
    ours = make_sb3_vec("pixelrig/CartPole-v0", 3, cams=[CAM], renderer="tiny", vectorization_mode=mode,
                        env_kwargs={"max_episode_steps": 6}, **extra)
    try:
        assert ours.env_method("set_wrapper_attr", "_max_episode_steps", 9, indices=[2, 0]) == [True, True]
        assert ours.get_attr("_max_episode_steps") == [9, 6, 9]
        ours.env_method("set_wrapper_attr", "_max_episode_steps", 4, indices=1)
        assert ours.env_method("get_wrapper_attr", "_max_episode_steps", indices=[1, 2, 0]) == [4, 9, 9]
        if mode != "sync":
            with pytest.raises(IndexError, match=re.escape("env indices [3] are out of range for num_envs=3")):
                ours.venv.call_at([0, 3], "get_wrapper_attr", "_max_episode_steps")
    finally:
        ours.close()


# ---- env_infos: Gymnasium's batched infos back into one dict per env ------------------------------------------------

LEAVES = {"int": st.integers(-(2**62), 2**62), "float": st.floats(allow_nan=False, allow_infinity=False),
          "bool": st.booleans(), "str": st.text(max_size=3)}
"""The kinds of an info's values and how to draw one (Gymnasium batches ints, floats and bools into typed arrays,
other objects into object arrays)."""
SCHEMAS = st.recursive(st.sampled_from(sorted(LEAVES)),
                       lambda inner: st.dictionaries(st.sampled_from("abc"), inner, max_size=3), max_leaves=6)


@st.composite
def per_env_infos(draw: st.DrawFn) -> list[dict]:
    """Each env's info: some keys of one drawn schema (a key's kind the same in every env, as Gymnasium's batching
    needs), nested dicts included; an env may have none."""
    n = draw(st.integers(1, 4))
    schema = draw(st.dictionaries(st.sampled_from(["is_success", "distance", "t", "final_info"]), SCHEMAS,
                                  max_size=4))

    def info(kinds: dict) -> dict:
        return {key: info(kind) if isinstance(kind, dict) else draw(LEAVES[kind])
                for key, kind in kinds.items() if draw(st.booleans())}

    return [info(schema) for _ in range(n)]


def unmasked_where_all(infos: dict) -> dict:
    """``infos`` without the ``"_key"`` mask of every key all envs have (a vector env may leave those out)."""
    out = {}
    for key, value in infos.items():
        if key.startswith("_") and infos[key].all():
            continue
        out[key] = unmasked_where_all(value) if isinstance(value, dict) else value
    return out


@settings(max_examples=120, deadline=None)
@given(per_env_infos())
def test_env_infos_gives_back_each_envs_info(infos: list[dict]) -> None:
    """Batched by Gymnasium's own VectorEnv._add_info (each key an array and a ``"_key"`` mask, nested dicts
    recursively), env_infos gives every env exactly its info back; a key without a mask belongs to every env."""
    from pixelrig.integrations.sb3 import env_infos

    n = len(infos)
    vector = gym.vector.VectorEnv()
    vector.num_envs = n
    batched: dict = {}
    for i, info in enumerate(infos):
        batched = vector._add_info(batched, info, i)
    assert env_infos(batched, n) == infos
    assert env_infos(unmasked_where_all(batched), n) == infos


def test_over_gymnasiums_sync_vector_env_wrappers_methods_and_images() -> None:
    """Over Gymnasium's SyncVectorEnv (which has no wrapper_names of its own) env_is_wrapped reads each env's
    wrapper stack; env_method hands the method its arguments and keyword arguments; get_images gives each env's
    render() (one None per env from a vector env that renders nothing)."""
    from pixelrig.integrations.sb3 import PixelVecEnv, make_sb3_vec
    from pixelrig.wrappers.pixel_obs import PixelObs

    kwargs = {"max_episode_steps": 6, "render_mode": "rgb_array"}
    ours = make_sb3_vec("pixelrig/CartPole-v0", 2, cams=[CAM], renderer="tiny", env_kwargs=kwargs,
                        vectorization_mode="sync")
    try:
        assert isinstance(ours.venv, gym.vector.SyncVectorEnv) and ours.render_mode == "rgb_array"
        assert ours.env_is_wrapped(gym.wrappers.TimeLimit) == [True, True]
        assert ours.env_is_wrapped(PixelObs, indices=[1]) == [True]
        assert ours.env_is_wrapped(gym.wrappers.FrameStackObservation) == [False, False]
        assert ours.env_method("set_wrapper_attr", "_max_episode_steps", 3) == [True, True]
        assert ours.get_attr("_max_episode_steps") == [3, 3]
        ours.env_method("set_wrapper_attr", "_max_episode_steps", value=4)
        assert ours.get_attr("_max_episode_steps") == [4, 4]
        ours.seed(2)
        ours.reset()
        images = ours.get_images()
        assert len(images) == 2 and images[0].shape == (240, 320, 3) and images[0].std() > 0
        for image, env in zip(images, ours.venv.envs, strict=True):
            np.testing.assert_array_equal(image, env.render())
    finally:
        ours.close()

    class RendersNothing(gym.vector.VectorWrapper):
        def render(self) -> None:
            return None

    venv = make_vec("pixelrig/CartPole-v0", 2, cams=[CAM], renderer="tiny", vectorization_mode="sync",
                    autoreset_mode="SameStep")
    try:
        assert PixelVecEnv(RendersNothing(venv)).get_images() == [None, None]
        venv.metadata = {**venv.metadata, "autoreset_mode": "SameStep"}  # the mode's value, not the enum
        assert PixelVecEnv(venv).num_envs == 2
        venv.metadata = {**venv.metadata, "autoreset_mode": "NextStep"}
        with pytest.raises(ValueError, match=re.escape(
                "PixelVecEnv needs a vector env with same-step autoreset (SB3 resets an env in the step that ends it): "
                "got autoreset_mode='NextStep'; build it with make_vec(..., autoreset_mode='SameStep') or use "
                "make_sb3_vec")):
            PixelVecEnv(venv)
    finally:
        venv.close()


@pytest.mark.parametrize("n", [1, 2])
def test_reset_options_reach_every_env_for_one_reset(n: int) -> None:
    """set_options() with one options dict (SB3 copies it per env) reaches every env's reset, a lone env's too, and
    is forgotten after it, as SB3's own vector envs do."""
    from pixelrig.integrations.sb3 import make_sb3_vec

    qpos = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    ours = make_sb3_vec("pixelrig/Robot-v0", n, pixels=False, renderer="tiny",
                        env_kwargs={"source": "kuka_iiwa/model.urdf"})
    try:
        ours.set_options({"qpos": qpos})
        np.testing.assert_allclose(ours.reset()[:, :7], [qpos] * n, atol=1e-6)
        np.testing.assert_array_equal(ours.reset()[:, :7], np.zeros((n, 7)))  # the default start: no noise
    finally:
        ours.close()
