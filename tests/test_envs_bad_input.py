"""Bad input, property-based (hypothesis): camera specs, actions, snapshots and model files. Every input gives a
clear exception (or a documented clamp), never a crash of the process, a hang, or a half-changed env."""

from __future__ import annotations

import math
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pixelrig import Camera, PixelObs, RobotEnv, Snapshot, restore, snapshot

from .conftest import assert_trees_equal, physics_state

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6), st.none(),
                    st.text(max_size=3), st.booleans())


@FAST
@given(name=st.one_of(st.text(max_size=8), st.integers()), width=numbers, height=numbers, fov=numbers, near=numbers,
       far=numbers)
def test_camera_specs_are_valid_or_refused_by_name(name, width, height, fov, near, far) -> None:
    kwargs = {k: v for k, v in dict(width=width, height=height, fov=fov, near=near, far=far).items()
              if v is not None}
    try:
        cam = Camera(name, eye=(1, 1, 1), target=(0, 0, 0), **kwargs)
    except ValueError as exc:
        message = str(exc)
        assert message.startswith("Camera ") or message.startswith("Camera name must be")
        return
    # accepted: then it is fully valid
    assert isinstance(cam.width, int) and 1 <= cam.width <= 4096 and 1 <= cam.height <= 4096
    assert 0 < cam.fov < 180 and 0 < cam.near < cam.far and math.isfinite(cam.far)


@FAST
@given(eye=st.lists(numbers, min_size=0, max_size=4), target=st.lists(numbers, min_size=0, max_size=4),
       modalities=st.lists(st.sampled_from(["rgb", "depth", "label", "normals", ""]), max_size=4))
def test_camera_poses_and_modalities(eye, target, modalities) -> None:
    try:
        cam = Camera("c", eye=tuple(eye), target=tuple(target), modalities=tuple(modalities))
    except ValueError as exc:
        assert str(exc).startswith("Camera 'c': ")
        return
    assert len(cam.eye) == 3 and all(math.isfinite(v) for v in cam.eye + cam.target)
    assert cam.modalities and set(cam.modalities) <= {"rgb", "depth", "label"}


def test_huge_camera_is_refused_before_allocating() -> None:
    with pytest.raises(ValueError, match=re.escape("Camera 'big': width=100000 must be an integer in [1, 4096]")):
        Camera("big", width=100_000, height=100_000, eye=(1, 1, 1), target=(0, 0, 0))


@pytest.fixture(scope="module")
def kuka() -> gym.Env:
    env = gym.make("pixelrig/Robot-v0", source="kuka_iiwa/model.urdf")
    env.reset(seed=0)
    yield env
    env.close()


actions = st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=0, max_size=9).map(np.array),
    st.lists(st.floats(-1e6, 1e6), min_size=7, max_size=7).map(lambda v: np.array(v, np.float64)),
    st.lists(st.integers(-5, 5), min_size=7, max_size=7).map(lambda v: np.array(v, np.int64)),
    st.text(max_size=5), st.none(), st.integers(), st.lists(st.text(max_size=2), min_size=7, max_size=7),
)


@FAST
@given(action=actions)
def test_any_action_steps_or_is_refused_leaving_the_env_as_it_was(kuka, action) -> None:
    base = kuka.unwrapped
    before = physics_state(base.client)
    try:
        kuka.step(action)
    except ValueError as exc:
        assert str(exc).startswith("RobotEnv: action ")
        assert_trees_equal(before, physics_state(base.client))
        return
    # accepted: a finite action of the right shape, clipped to the space (the documented clamp)
    a = np.asarray(action, dtype=np.float64)
    assert a.shape == (7,) and np.all(np.isfinite(a))


@pytest.fixture(scope="module")
def cheetah_blob() -> bytes:
    env = gym.make("pixelrig/HalfCheetah-v0")
    env.reset(seed=0)
    blob = snapshot(env).to_bytes()
    env.close()
    return blob


@FAST
@given(data=st.data())
def test_mangled_snapshots_are_refused(cheetah_blob: bytes, data) -> None:
    how = data.draw(st.sampled_from(["truncate", "flip", "random", "insert"]))
    blob = bytearray(cheetah_blob)
    if how == "truncate":
        blob = blob[: data.draw(st.integers(0, len(blob) - 1))]
    elif how == "flip":
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] ^= 1 << data.draw(st.integers(0, 7))
    elif how == "random":
        blob = bytearray(data.draw(st.binary(max_size=2000)))
    else:
        i = data.draw(st.integers(0, len(blob)))
        blob[i:i] = data.draw(st.binary(min_size=1, max_size=8))
    with pytest.raises(ValueError, match=r"^(not a pixelrig snapshot|snapshot )"):
        Snapshot.from_bytes(bytes(blob))


def test_snapshot_of_another_env_leaves_the_target_as_it_was(cheetah_blob: bytes) -> None:
    env = PixelObs(gym.make("pixelrig/Walker2d-v0"), cams=[{"name": "c", "eye": (1, -3, 1), "target": (0, 0, 0.5),
                                                           "width": 16, "height": 16}])
    try:
        env.reset(seed=1)
        before = (physics_state(env.unwrapped.client), env.unwrapped.export_state()["task"])
        with pytest.raises(ValueError, match="snapshot belongs to a different environment"):
            restore(env, Snapshot.from_bytes(cheetah_blob))
        assert_trees_equal(before, (physics_state(env.unwrapped.client), env.unwrapped.export_state()["task"]))
    finally:
        env.close()


@FAST
@given(name=st.text(alphabet="abc_/.", min_size=1, max_size=12), suffix=st.sampled_from(
    ["", ".urdf", ".sdf", ".xml", ".stl", ".txt", ".URDF"]))
def test_missing_or_odd_model_paths(name: str, suffix: str, tmp_path_factory) -> None:
    path = str(tmp_path_factory.getbasetemp() / "models" / (name + suffix))
    with pytest.raises((FileNotFoundError, ValueError), match=r"^robot file "):
        RobotEnv(path)


@pytest.mark.parametrize("text,message", [
    ("", "pybullet could not parse"),
    ("<robot name='x'>", "pybullet could not parse"),
    ("<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
     "</joint></robot>", "pybullet could not parse"),
    ("<robot name='x'><link name='a'/></robot>", "has no movable (revolute or prismatic) joints to control"),
    ("\x00\x01binary", "pybullet could not parse"),
])
def test_malformed_urdf(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(message)):
        RobotEnv(path)


def test_directory_as_model(tmp_path: Path) -> None:
    folder = tmp_path / "robot.urdf"
    folder.mkdir()
    with pytest.raises(ValueError, match=re.escape(f"robot file {str(folder)!r} is a directory")):
        RobotEnv(folder)
