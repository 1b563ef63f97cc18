"""Looks on envs: lighting= on every env, Randomization's light, textures and distractors drawn per episode on
streams of their own that never touch the simulation, recorded and restored by snapshots, the same pixels for the
same seed in another process, presets, and errors that name the fix and change nothing."""

from __future__ import annotations

import hashlib
import pickle
import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest
from PIL import Image

import pixelrig
from pixelrig import Lighting, PixelObs, Randomization, restore, snapshot
from pixelrig.envs.looks import looks_seed
from pixelrig.envs.presets import LOOKS_PRESETS
from pixelrig.render.procedural import procedural_image
from pixelrig.tasks import ENV_SPECS

from .conftest import physics_state

LOOKS = Randomization(light_azimuth=(0.0, 360.0), light_elevation=(30.0, 80.0), light_color=((0.7,) * 3, (1.2,) * 3),
                      light_ambient=(0.4, 0.8), light_diffuse=(0.2, 0.5), light_specular=(0.0, 0.2), shadows=0.5,
                      textures={"table": "procedural", "ground": "procedural", "cube": "procedural"}, distractors=4)
"""Every look randomised at once, on PandaPush."""


def _run(randomize: Randomization | None, episodes: int = 2, steps: int = 15) -> list:
    """States, rewards and the physics of the bodies the env built (distractors aside) over seeded episodes, and the
    env's RNG after them (bitwise comparable)."""
    env = gym.make("pixelrig/PandaPush-v0", renderer="tiny", randomize=randomize)
    try:
        out = []
        for episode in range(episodes):
            obs, _ = env.reset(seed=10 + episode)
            env.action_space.seed(episode)
            out.append(obs)
            for _ in range(steps):
                obs, reward, *_ = env.step(env.action_space.sample())
                out += [obs, np.float64(reward)]
            u = env.unwrapped
            built = [b for b, n in u.body_names.items() if not n.startswith("distractor_")]
            out.append([(p.getBasePositionAndOrientation(b, physicsClientId=u.client),
                         p.getBaseVelocity(b, physicsClientId=u.client)) for b in built])
        out.append(env.unwrapped.np_random.random(4))
        return out
    finally:
        env.close()


def _same(a, b) -> bool:
    return pickle.dumps(a) == pickle.dumps(b)


def test_looks_never_change_the_simulation() -> None:
    """Light, textures and distractors on or off: the states, rewards and the env's RNG are bitwise the same, and so
    is every body the env built (the distractors are seen, never felt)."""
    plain = _run(None)
    assert _same(plain, _run(LOOKS))
    physics = Randomization(mass_scale=(0.8, 1.2), lateral_friction=(0.6, 1.0))
    with_physics = _run(physics)
    both = _run(Randomization(**{**_fields(physics), **_fields(LOOKS)}))
    assert _same(with_physics, both)  # the physics draws are the same with looks drawn beside them
    assert not _same(plain, with_physics)


def _fields(r: Randomization) -> dict:
    defaults = Randomization()
    return {k: getattr(r, k) for k in r.__dataclass_fields__ if getattr(r, k) != getattr(defaults, k)}


def test_looks_are_drawn_per_episode_recorded_and_seeded() -> None:
    env = PixelObs(gym.make("pixelrig/PandaPush-v0", randomize=LOOKS), pixels_only=True)
    try:
        images, values = [], []
        for seed in (1, 2, 1):
            obs, _ = env.reset(seed=seed)
            images.append(obs["front/rgb"])
            values.append(env.unwrapped.randomization_values)
        assert set(values[0]) == {"looks_seed", "lighting", "textures", "distractors"}
        assert len(values[0]["distractors"]) == 4
        assert Lighting.from_dict(values[0]["lighting"]) == env.unwrapped.current_lighting
        assert env.unwrapped.render_backend.lighting == env.unwrapped.current_lighting
        np.testing.assert_array_equal(images[0], images[2])  # same seed, same pixels
        assert _same(values[0], values[2])
        assert np.abs(images[0].astype(int) - images[1]).mean() > 5  # another seed, other looks
        assert values[0]["looks_seed"] != values[1]["looks_seed"]
    finally:
        env.close()


def test_the_looks_seed_reads_the_generator_without_advancing_it() -> None:
    rng = np.random.default_rng(5)
    before = rng.bit_generator.state
    assert looks_seed(rng) == looks_seed(rng)
    assert rng.bit_generator.state == before
    assert looks_seed(rng) != looks_seed(np.random.default_rng(6))


CHILD = """
import hashlib, sys, pickle, gymnasium as gym, pixelrig
from pixelrig import PixelObs
randomize, renderer = pickle.loads(sys.stdin.buffer.read())
env = PixelObs(gym.make("pixelrig/PandaPush-v0", renderer=renderer, randomize=randomize), pixels_only=True)
obs, _ = env.reset(seed=7)
obs = env.step(env.action_space.sample() * 0)[0]
sys.stdout.write(hashlib.sha256(b"".join(obs[k].tobytes() for k in sorted(obs))).hexdigest())
"""


@pytest.mark.parametrize("renderer", ["tiny", "gl"])
def test_the_same_seed_gives_the_same_pixels_in_another_process(renderer: str) -> None:
    if renderer == "gl":
        from .conftest import gl_or_skip

        gl_or_skip()
    payload = pickle.dumps((LOOKS, renderer))
    digests = {subprocess.run([sys.executable, "-c", CHILD], input=payload, capture_output=True, check=True)
               .stdout.decode() for _ in range(2)}
    assert len(digests) == 1 and len(next(iter(digests))) == 64


@pytest.mark.parametrize("env_id", [e for e in ENV_SPECS if e not in ("pixelrig/Robot-v0",)] + ["pixelrig/Robot-v0"])
def test_every_env_takes_lighting_and_draws_with_it(env_id: str) -> None:
    kwargs = {"source": "kuka_iiwa/model.urdf"} if env_id == "pixelrig/Robot-v0" else {}
    light = Lighting(direction=(0.3, -0.5, 0.8), ambient=0.4, shadows=True)
    env = gym.make(env_id, renderer="tiny", lighting=light, **kwargs)
    try:
        env.reset(seed=0)
        assert env.unwrapped.current_lighting == light and env.unwrapped.render_backend.lighting == light
    finally:
        env.close()


def test_set_texture_is_visual_only_recorded_and_gone_at_reset(tmp_path: Path) -> None:
    image = procedural_image("checkers", 1, (32, 32))
    path = tmp_path / "marble.png"
    Image.fromarray(procedural_image("marble", 2, (40, 40))).save(path)
    env = PixelObs(gym.make("pixelrig/PandaPush-v0", renderer="tiny"), pixels_only=True)
    reference = gym.make("pixelrig/PandaPush-v0", renderer="tiny")
    try:
        plain = env.reset(seed=3)[0]["front/rgb"]
        reference.reset(seed=3)
        env.unwrapped.set_texture("table", image)
        env.unwrapped.set_texture("cube", str(path))
        textured = env.render_rig()["front/rgb"]
        assert np.abs(textured.astype(int) - plain).mean() > 10
        kinds = [entry[2] for entry in env.unwrapped.randomization_values["textures"]]
        assert kinds == ["image", "file"]
        for _ in range(10):
            action = np.array([0.4, 0.1, -0.3])
            env.step(action)
            reference.step(action)
        assert _same(physics_state(env.unwrapped.client), physics_state(reference.unwrapped.client))
        snap = snapshot(env)
        env.reset(seed=3)
        np.testing.assert_array_equal(env.render_rig()["front/rgb"], plain)  # gone with the episode
        restore(env, snap)
        restored = env.render_rig()["front/rgb"]
        env.unwrapped.set_texture("table", image)  # and the snapshot brought it back
        assert np.abs(restored.astype(int) - plain).mean() > 10
    finally:
        env.close()
        reference.close()


def test_distractors_stand_outside_the_workspace_with_labels_of_their_own() -> None:
    env = PixelObs(gym.make("pixelrig/PandaPush-v0", renderer="tiny", randomize=Randomization(distractors=8)),
                   cams=[pixelrig.Camera("top", width=96, height=96, eye=(0.65, 0.0, 2.2), target=(0.65, 0.0, 0.6),
                                         up=(1.0, 0.0, 0.0), modalities=("rgb", "label", "class"))],
                   classes={"distractor_*": 7, "cube": 1}, pixels_only=True)
    try:
        obs, _ = env.reset(seed=0)
        u = env.unwrapped
        names = env.get_wrapper_attr("label_names")
        ids = [b for b, n in names.items() if n.startswith("distractor_")]
        assert sorted(names[b] for b in ids) == [f"distractor_{i}" for i in range(8)]
        (wx0, wy0, _), (wx1, wy1, _) = u.workspace_box()
        (ax0, ay0, floor), (ax1, ay1, _) = u.distractor_area()
        for body in ids:
            (x0, y0, z0), (x1, y1, _) = p.getAABB(body, physicsClientId=u.client)
            assert x1 <= wx0 + 1e-9 or x0 >= wx1 - 1e-9 or y1 <= wy0 + 1e-9 or y0 >= wy1 - 1e-9, names[body]
            assert ax0 - 0.01 <= x0 and x1 <= ax1 + 0.01 and ay0 - 0.01 <= y0 and y1 <= ay1 + 0.01
            assert abs(z0 - floor) < 0.01  # standing on the table
        seen = set(np.unique(obs["top/label"])) & set(ids)
        assert len(seen) >= 6  # the top camera sees (nearly) all of them
        assert (obs["top/class"][np.isin(obs["top/label"], ids)] == 7).all()
        for _ in range(20):
            env.step(env.action_space.sample())
        touching = {q[1] for q in p.getContactPoints(physicsClientId=u.client)} | \
                   {q[2] for q in p.getContactPoints(physicsClientId=u.client)}
        assert not touching & set(ids)  # visual only: nothing ever touches them
    finally:
        env.close()


def test_distractors_with_physics_collide() -> None:
    env = gym.make("pixelrig/PandaPush-v0", renderer="tiny",
                   randomize=Randomization(distractors=3, distractor_physics=True))
    try:
        env.reset(seed=0)
        u = env.unwrapped
        ids = [b for b, n in u.body_names.items() if n.startswith("distractor_")]
        for _ in range(10):
            env.step(np.zeros(3))
        resting = {q[1] for q in p.getContactPoints(physicsClientId=u.client) if q[2] == u.body_id("table")}
        resting |= {q[2] for q in p.getContactPoints(physicsClientId=u.client) if q[1] == u.body_id("table")}
        assert set(ids) <= resting  # they stand on the table
    finally:
        env.close()


def test_a_snapshot_with_distractors_restores_into_a_fresh_env() -> None:
    def make():
        return PixelObs(gym.make("pixelrig/PandaPush-v0", renderer="tiny", randomize=LOOKS), pixels_only=True)

    env, fresh = make(), make()
    try:
        env.reset(seed=4)
        for _ in range(5):
            env.step(env.action_space.sample())
        snap = pixelrig.Snapshot.from_bytes(snapshot(env).to_bytes())
        images = env.render_rig()
        after = env.step(np.full(3, 0.5))[0]
        restore(fresh, snap)
        for key, image in fresh.render_rig().items():
            np.testing.assert_array_equal(image, images[key], err_msg=key)
        again = fresh.step(np.full(3, 0.5))[0]
        for key in after:
            np.testing.assert_array_equal(after[key], again[key], err_msg=key)
    finally:
        env.close()
        fresh.close()


def test_presets_randomise_looks_and_split_them() -> None:
    train, hard = LOOKS_PRESETS["train"], LOOKS_PRESETS["test-hard"]
    assert not set(train.randomization.textures.values()) & set(hard.randomization.textures.values())
    assert train.randomization.light_elevation[0] > hard.randomization.light_elevation[1]
    for name in ("train", "test-hard"):
        env = PixelObs(gym.make("pixelrig/PandaPush-v0", looks=name), pixels_only=True)
        try:
            obs, _ = env.reset(seed=0)
            assert env.background is not None and env.unwrapped.randomize.varies_looks
            assert len(env.unwrapped.randomization_values["distractors"]) == \
                LOOKS_PRESETS[name].randomization.distractors
        finally:
            env.close()
    with pytest.raises(ValueError, match=re.escape("looks='winter' is not a looks preset; presets: ['train', "
                                                   "'test-hard']")):
        gym.make("pixelrig/CartPole-v0", looks="winter")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"light_ambient": (-0.2, 0.5)}, "Randomization: light_ambient=(-0.2, 0.5) needs finite 0.0 <= low <= high"),
    ({"light_elevation": (10.0, 90.0)}, "Randomization: light_elevation=(10.0, 90.0) must lie within (0, 90)"),
    ({"light_color": ((1, 1, 1), (0.5, 0.5, 0.5))}, "Randomization: light_color=((1, 1, 1), (0.5, 0.5, 0.5)) must "
                                                    "be ((r, g, b) low, (r, g, b) high) with 0 <= low <= high"),
    ({"shadows": 1.5}, "Randomization: shadows=1.5 must be the probability (0..1)"),
    ({"textures": {"table": "wood"}}, "Randomization: textures['table']='wood' is not a folder: give a folder of "
                                      "images"),
    ({"distractors": -1}, "Randomization: distractors=-1 must be a whole number of objects in 0..64"),
])
def test_bad_look_ranges_name_the_value_and_the_fix(kwargs, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Randomization(**kwargs)


def test_an_empty_texture_folder_or_an_unknown_body_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape("holds no .png/.jpg/.jpeg/.bmp files: give a folder of images")):
        Randomization(textures={"table": tmp_path})
    (tmp_path / "a.png").write_bytes(b"")
    with pytest.raises(ValueError, match=re.escape("Randomization(textures=...) names body 'tabel', which this env "
                                                   "does not have; bodies: ['ground', 'table', 'panda', 'cube', "
                                                   "'target']")):
        gym.make("pixelrig/PandaPush-v0", randomize=Randomization(textures={"tabel": "procedural"}))


def test_a_refused_texture_changes_nothing() -> None:
    env = PixelObs(gym.make("pixelrig/PandaPush-v0", renderer="tiny"), pixels_only=True)
    try:
        before = env.reset(seed=0)[0]["front/rgb"]
        values = env.unwrapped.randomization_values
        with pytest.raises(ValueError, match=re.escape("an image must be a uint8 array of shape (H, W), (H, W, 3) or "
                                                       "(H, W, 4): got float64 (4, 4, 3)")):
            env.unwrapped.set_texture("table", np.zeros((4, 4, 3)))
        with pytest.raises(ValueError, match=re.escape("set_texture names body 'tabel', which this env does not have")):
            env.unwrapped.set_texture("tabel", np.zeros((4, 4, 3), np.uint8))
        assert env.unwrapped.randomization_values is values
        np.testing.assert_array_equal(env.render_rig()["front/rgb"], before)
    finally:
        env.close()


def test_drawn_looks_hash_the_same_on_every_run() -> None:
    """The looks seed comes from the generator's state alone: the draws are a pure function of the reset's seed."""
    env = gym.make("pixelrig/PandaPush-v0", renderer="tiny", randomize=LOOKS)
    try:
        env.reset(seed=11)
        digest = hashlib.sha256(pickle.dumps(env.unwrapped.randomization_values["lighting"])).hexdigest()
        env.reset(seed=12)
        env.reset(seed=11)
        assert hashlib.sha256(pickle.dumps(env.unwrapped.randomization_values["lighting"])).hexdigest() == digest
    finally:
        env.close()
