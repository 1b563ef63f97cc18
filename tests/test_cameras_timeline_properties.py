"""Property tests of the sensor timeline (pixelrig.cameras.sensors) aimed at what mutmut found no test pinning
(issue 33): a timeline used before any ``start_episode``, the error a missing due image raises, noise on a camera
that draws only some of the noise's modalities, and every way ``set_state`` refuses a snapshot (the messages are
part of the contract, matched in full).

The reference is docs/sensors.md and the class's docstring: step 0 is the reset, a camera (period k, latency d)
shows the picture taken at step ``k * floor(max(t - d, 0) / k)``, noisy depth is clipped to ``[near, far)``, and a
snapshot of a camera that holds pictures (period > 1 or latency > 0) must carry them unless it was taken at a reset.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pixelrig import Camera
from pixelrig.cameras.noise import SensorNoise
from pixelrig.cameras.sensors import SensorTimeline

from .camera_refs import UnboundRig

FEW = settings(max_examples=10, deadline=None, derandomize=True, database=None)


def camera(name: str, period: int = 1, latency: int = 0, noise: SensorNoise | None = None,
           modalities: tuple[str, ...] = ("rgb", "depth")) -> Camera:
    return Camera(name, eye=(1.0, 0.0, 1.0), target=(0.0, 0.0, 0.0), width=6, height=4, near=0.1, far=5.0,
                  period=period, latency=latency, noise=noise, modalities=modalities)


def pictures(cams, tag: int) -> dict[str, np.ndarray]:
    """Exact images whose values name the picture (rgb = tag + 20 + camera, depth 0.5 + tag / 1000 m)."""
    out = {}
    for i, cam in enumerate(cams):
        if "rgb" in cam.modalities:
            out[f"{cam.name}/rgb"] = np.full((cam.height, cam.width, 3), tag % 200 + 20 + i, np.uint8)
        if "depth" in cam.modalities:
            out[f"{cam.name}/depth"] = np.full((cam.height, cam.width, 1), 0.5 + tag / 1000.0, np.float32)
    return out


def exactly(message: str) -> str:
    """A pattern matching ``message`` and nothing more (a message with text added before or after is another)."""
    return f"^{re.escape(message)}$"


def timeline_of(*cams: Camera) -> SensorTimeline:
    return SensorTimeline(UnboundRig(list(cams)))


# ---- a timeline never started is at a reset ------------------------------------------------------------------------


@FEW
@given(st.integers(1, 4), st.integers(0, 3))
def test_a_fresh_timeline_is_at_a_reset(period: int, latency: int) -> None:
    """Before any picture the clock reads 0 and the next observation is a reset's (``due()`` None: every camera;
    the reset's picture fills the latency), without ``start_episode``; after it the state is plain data with
    ``resetting`` False (not merely falsy) and the clock goes on from 0."""
    cams = [camera("a", period, latency), camera("b", 2, 1)]
    timeline = timeline_of(*cams)
    assert timeline.step == 0
    state = timeline.state()
    assert state["step"] == 0 and type(state["step"]) is int and state["resetting"] is True
    assert timeline.due() is None
    for t in range(8):
        shown = timeline.observe(pictures(cams, t))
        assert timeline.step == t
        for cam in cams:
            source = cam.period * (max(t - cam.latency, 0) // cam.period)
            np.testing.assert_array_equal(shown[f"{cam.name}/rgb"], pictures(cams, source)[f"{cam.name}/rgb"])
        assert timeline.state()["resetting"] is False
        assert timeline.due() == [i for i, cam in enumerate(cams) if (t + 1) % cam.period == 0]


def test_a_due_camera_without_its_images_is_an_error_naming_them() -> None:
    """A camera due at step t whose images were not drawn: a RuntimeError naming the camera, the step and the
    missing keys (a camera not due may be left out)."""
    cams = [camera("a", 2), camera("b", 1, 1)]
    timeline = timeline_of(*cams)
    timeline.observe(pictures(cams, 0))
    timeline.observe({k: v for k, v in pictures(cams, 1).items() if k.startswith("b/")})  # "a" is not due
    drawn = pictures(cams, 2)
    del drawn["a/depth"]
    with pytest.raises(RuntimeError, match=exactly(
            "SensorTimeline: camera 'a' takes a picture at step 2 but its images ['a/depth'] were not drawn "
            "(draw the cameras due() names)")):
        timeline.observe(drawn)


# ---- noise on the modalities a camera draws ------------------------------------------------------------------------


def test_noise_applies_to_the_modalities_a_camera_draws_and_clips_depth_at_near() -> None:
    """A noise model with RGB and depth terms on a depth-only camera and on an RGB-only camera: each gets the noise
    of what it draws (depth: ``z + N(0, a)`` then clipped to ``[near, far)``, here exact depths at ``near`` so about
    half the draws fall below it; RGB: ``value + N(0, sigma)``), drawn in rig order from the timeline's generator."""
    noise = SensorNoise(rgb_sigma=4.0, depth_sigma=(0.05, 0.0))
    cams = [camera("d", noise=noise, modalities=("depth",)), camera("c", noise=noise, modalities=("rgb",))]
    timeline = timeline_of(*cams)
    timeline.seed(7)
    rng = copy.deepcopy(timeline.rng)
    exact = pictures(cams, 0)
    exact["d/depth"][:] = np.float32(0.1)  # the camera's near plane
    shown = timeline.observe(exact)
    assert sorted(shown) == ["c/rgb", "d/depth"]
    z = 0.1 + 0.05 * rng.standard_normal((4, 6))
    assert (z < 0.1).sum() >= 6  # the clip matters
    np.testing.assert_allclose(shown["d/depth"][..., 0], np.clip(z, 0.1, 5.0).astype(np.float32), rtol=1e-6, atol=0)
    rgb = np.clip(np.rint(exact["c/rgb"] + 4.0 * rng.standard_normal((4, 6, 3))), 0, 255)
    np.testing.assert_array_equal(shown["c/rgb"], rgb)


# ---- snapshots -----------------------------------------------------------------------------------------------------


def test_a_snapshot_taken_at_a_reset_restores_a_reset() -> None:
    """A state taken after ``start_episode`` (or before any picture) restores as a reset: the twin's ``due()`` is
    None and its next observation fills the latency, even with no held pictures in the snapshot."""
    cams = [camera("a", 2, 1), camera("b", 1, 2)]
    fresh, twin = timeline_of(*cams), timeline_of(*cams)
    twin.set_state(copy.deepcopy(fresh.state()))
    assert twin.state()["resetting"] is True and twin.due() is None
    for t in range(3):
        fresh.observe(pictures(cams, t))
    fresh.start_episode()
    twin = timeline_of(*cams)
    twin.set_state(copy.deepcopy(fresh.state()))
    assert twin.state()["resetting"] is True and twin.due() is None
    shown = twin.observe(pictures(cams, 50))
    for t in range(1, 4):
        shown = twin.observe(pictures(cams, 50 + t))
        for cam in cams:
            source = cam.period * (max(t - cam.latency, 0) // cam.period)
            np.testing.assert_array_equal(shown[f"{cam.name}/rgb"], pictures(cams, 50 + source)[f"{cam.name}/rgb"])


NOT_A_TIMELINE = "is not a sensor timeline's (step, resetting, noise, history)"


@pytest.mark.parametrize(("state", "shown"), [({"step": 1, "history": {}}, "['history', 'step']"),
                                              ({"step": "x", "resetting": False, "noise": {}, "history": {}},
                                               "['history', 'noise', 'resetting', 'step']"),
                                              ("abc", "'abc'"), (None, "None"), ([3, 1], "[3, 1]")])
def test_a_state_that_is_not_a_timelines_is_refused_naming_what_it_holds(state, shown: str) -> None:
    """A mapping without the four fields (or with a step that is no integer) is named by its sorted keys; anything
    else by its repr."""
    with pytest.raises(ValueError, match=exactly(f"PixelObs: snapshot state {shown} {NOT_A_TIMELINE}")):
        timeline_of(camera("a", 2)).set_state(state)


@pytest.mark.parametrize("noise", [{"bit_generator": "MT19937", "state": {}}, 5, None, {"state": {}}])
def test_a_noise_state_that_is_not_pcg64_is_refused(noise) -> None:
    with pytest.raises(ValueError, match=exactly(
            "PixelObs: the snapshot's noise generator state is not a PCG64 state")):
        timeline_of(camera("a", 2)).set_state({"step": 0, "resetting": True, "noise": noise, "history": {}})


def held_state(cams, history: dict, resetting: bool = False) -> dict:
    """A timeline state of ``cams`` (period 1, latency 0 pictures) with ``history`` in place of the held pictures."""
    state = timeline_of(*cams).state()
    state.update(step=3, resetting=resetting, history=history)
    return state


def test_pictures_a_camera_cannot_show_are_refused_naming_it_and_the_rigs_cameras() -> None:
    """Held pictures of an unknown camera, of a camera that holds none (no period, latency or noise), the wrong
    number of them for the latency (the right keys), or with other keys (the right number): each a ValueError naming
    the camera and the rig's cameras."""
    cams = [camera("a", 2, 1), camera("plain"), camera("b", 1, 2)]
    one = pictures(cams, 0)
    a = {k: v for k, v in one.items() if k.startswith("a/")}
    plain = {k: v for k, v in one.items() if k.startswith("plain/")}
    b = {k: v for k, v in one.items() if k.startswith("b/")}
    good = {"a": [a, a], "b": [b, b, b]}
    timeline_of(*cams).set_state(held_state(cams, good))  # the right pictures restore
    for name, history in [("zz", {**good, "zz": [a, a]}), ("plain", {**good, "plain": [plain]}),
                          ("a", {**good, "a": [a, a, a]}), ("b", {**good, "b": [b, b]}),
                          ("a", {**good, "a": [a, {"a/rgb": a["a/rgb"]}]})]:
        with pytest.raises(ValueError, match=exactly(
                f"PixelObs: the snapshot holds pictures of camera {name!r} that this rig's cameras "
                "['a', 'plain', 'b'] cannot show (another rig, period or latency)")):
            timeline_of(*cams).set_state(held_state(cams, history))


@pytest.mark.parametrize(("period", "latency"), [(2, 0), (1, 1), (3, 2)])
def test_a_snapshot_without_a_holding_cameras_pictures_is_refused_unless_at_a_reset(period, latency) -> None:
    """A camera that holds pictures (period > 1 or latency > 0, here period 2 alone or latency 1 alone) must have
    them in a snapshot taken between resets: a ValueError naming the cameras without them, in rig order; a camera
    that holds none (no period or latency, with or without noise) needs none; at a reset none are needed."""
    cams = [camera("plain"), camera("h", period, latency), camera("noisy", noise=SensorNoise(rgb_sigma=1.0)),
            camera("g", 2, 1)]
    with pytest.raises(ValueError, match=exactly(
            "PixelObs: the snapshot holds no pictures of cameras ['h', 'g'] (taken with another rig)")):
        timeline_of(*cams).set_state(held_state(cams, {}))
    g = {k: v for k, v in pictures(cams, 0).items() if k.startswith("g/")}
    with pytest.raises(ValueError, match=exactly(
            "PixelObs: the snapshot holds no pictures of cameras ['h'] (taken with another rig)")):
        timeline_of(*cams).set_state(held_state(cams, {"g": [g, g]}))
    twin = timeline_of(*cams)
    twin.set_state(held_state(cams, {}, resetting=True))
    assert twin.due() is None
