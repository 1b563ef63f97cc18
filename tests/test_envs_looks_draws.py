"""Looks drawn with inputs that tell right from wrong: shadow probabilities that are not 1/2 (p and 1 - p draw
different frequencies), the presets' documented ranges and counts read from the documentation, the streams the
documentation promises independent (the light, each textured body keyed by its name, each distractor), and where
distractors stand: outside the workspace, inside their area, on its floor and apart from each other, on a Panda
task and on an env with the default areas."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pixelrig  # noqa: F401 (registers the ids)
from pixelrig import Lighting, Randomization
from pixelrig.envs.looks import azimuth_elevation, draw_lighting
from pixelrig.envs.presets import looks_preset

from .documented import doc_match

SEEDS = range(2000)


def shadow_share(spec: Randomization) -> float:
    return float(np.mean([draw_lighting(spec, Lighting(), seed).shadows for seed in SEEDS]))


def binomial_band(prob: float, n: int = len(SEEDS)) -> tuple[float, float]:
    """A 5-sigma band around ``prob`` for a share of ``n`` draws (never fails by chance in practice)."""
    half = 5 * math.sqrt(prob * (1 - prob) / n) + 1e-12
    return prob - half, prob + half


@pytest.mark.parametrize("prob", [0.0, 0.15, 0.8, 1.0])
def test_shadows_are_cast_with_the_given_probability(prob: float) -> None:
    lo, hi = binomial_band(prob)
    assert lo <= shadow_share(Randomization(shadows=prob)) <= hi
    assert shadow_share(Randomization(shadows=True)) == 1.0


def test_presets_draw_the_documented_shadow_share_and_elevations() -> None:
    """"shadows (one in two; four in five)" and "the light's elevation range (train 40-80°, test-hard 15-38°)"."""
    words = {"one in two": 0.5, "four in five": 0.8}
    m = doc_match(r"shadows \((one in two|four in five); (one in two|four in five)\), distractors \((\d+); (\d+)\)")
    e = doc_match(r"elevation range \(train (\d+)-(\d+)°, test-hard (\d+)-(\d+)°\)")
    documented = {"train": (words[m[1]], (float(e[1]), float(e[2]))),
                  "test-hard": (words[m[2]], (float(e[3]), float(e[4])))}
    for name, (share, (low, high)) in documented.items():
        spec = looks_preset(name).randomization
        lo, hi = binomial_band(share)
        assert lo <= shadow_share(spec) <= hi, name
        elevations = [azimuth_elevation(draw_lighting(spec, Lighting(), s).direction)[1] for s in range(500)]
        assert low - 1e-9 <= min(elevations) and max(elevations) <= high + 1e-9, name
        assert min(elevations) < low + 0.05 * (high - low) and max(elevations) > high - 0.05 * (high - low), name


@pytest.mark.parametrize("preset", ["train", "test-hard"])
def test_presets_load_the_documented_number_of_distractors(preset: str) -> None:
    m = doc_match(r"distractors \((\d+); (\d+)\)")
    count = {"train": int(m[1]), "test-hard": int(m[2])}[preset]
    env = gym.make("pixelrig/PandaPush-v0", looks=preset)
    try:
        for seed in (0, 1):
            env.reset(seed=seed)
            names = sorted(n for n in env.unwrapped.body_names.values() if n.startswith("distractor_"))
            assert names == [f"distractor_{i}" for i in range(count)]
            assert len(env.unwrapped.randomization_values["distractors"]) == count
    finally:
        env.close()


# ---- the streams -----------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**62), ambient=st.tuples(st.floats(0.0, 0.5), st.floats(0.5, 1.0)),
       shadows=st.floats(0.05, 0.95))
def test_one_light_field_never_changes_another_fields_draw(seed: int, ambient: tuple, shadows: float) -> None:
    """"nine numbers are drawn whatever is randomised": the azimuth drawn alone equals the azimuth drawn beside an
    ambient range and shadows, and so on."""
    alone = draw_lighting(Randomization(light_azimuth=(0.0, 360.0), light_elevation=(20.0, 70.0)), Lighting(), seed)
    both = draw_lighting(Randomization(light_azimuth=(0.0, 360.0), light_elevation=(20.0, 70.0), light_ambient=ambient,
                                       shadows=shadows), Lighting(), seed)
    assert alone.direction == both.direction and alone.color == both.color
    amb = draw_lighting(Randomization(light_ambient=ambient), Lighting(), seed)
    assert amb.ambient == both.ambient and amb.direction == Lighting().direction
    sh = draw_lighting(Randomization(shadows=shadows), Lighting(), seed)
    assert sh.shadows == both.shadows


def looks_of(randomize: Randomization, seed: int, env_id: str = "pixelrig/PandaPush-v0") -> dict:
    env = gym.make(env_id, randomize=randomize)
    try:
        env.reset(seed=seed)
        names = env.unwrapped.body_names
        values = dict(env.unwrapped.randomization_values)
        values["textures_by_name"] = {(names.get(int(t[0])), int(t[1])): t[2:] for t in values.get("textures", [])}
        return values
    finally:
        env.close()


def test_streams_are_independent_per_kind_body_and_distractor() -> None:
    """The light is the same with or without textures and distractors; the table's texture the same whether the
    ground is textured too; distractors 0 and 1 the same (file, pose, colour) whether 2 or 4 are drawn."""
    light = {"light_azimuth": (0.0, 360.0), "light_elevation": (30.0, 80.0), "shadows": 0.3}
    for seed in (0, 7):
        bare = looks_of(Randomization(**light), seed)
        table = looks_of(Randomization(**light, textures={"table": "procedural"}, distractors=2), seed)
        both = looks_of(Randomization(**light, textures={"ground": "procedural", "table": "procedural"},
                                      distractors=4), seed)
        assert bare["lighting"] == table["lighting"] == both["lighting"]
        table_links = {k: v for k, v in table["textures_by_name"].items() if k[0] == "table"}
        assert table_links and all(both["textures_by_name"][k] == v for k, v in table_links.items())
        assert any(k[0] == "ground" for k in both["textures_by_name"])
        first_two = [d[2:] for d in both["distractors"][:2]]
        assert [d[2:] for d in table["distractors"]] == first_two


# ---- where distractors stand ---------------------------------------------------------------------------------------


def footprints(env) -> list[tuple[np.ndarray, np.ndarray, str]]:
    u = env.unwrapped
    out = []
    for body, name in u.body_names.items():
        if name.startswith("distractor_"):
            lo, hi = (np.asarray(v) for v in p.getAABB(body, physicsClientId=u.client))
            for link in range(p.getNumJoints(body, physicsClientId=u.client)):
                a, b = (np.asarray(v) for v in p.getAABB(body, link, physicsClientId=u.client))
                lo, hi = np.minimum(lo, a), np.maximum(hi, b)
            out.append((lo, hi, name))
    return out


@pytest.mark.parametrize("env_id, count", [("pixelrig/PandaLift-v0", 12), ("pixelrig/CartPole-v0", 10)])
def test_distractors_stand_apart_outside_the_workspace_on_the_floor_of_their_area(env_id: str, count: int) -> None:
    """Documented: "standing on the floor of the env's distractor_area() outside its workspace_box()" (the default
    area: the bodies' bounds grown by 0.25 m kept free, on the ground within 1 m of it), apart from each other."""
    m = doc_match(r"the bounds of their bodies grown by ([\d.]+) m kept free, on the ground within (\d+) m of it")
    within = float(m[2])  # the margin grown (m[1]) is checked by the next test
    env = gym.make(env_id, randomize=Randomization(distractors=count))
    plain = gym.make(env_id)  # the world without distractors: the boxes are the freshly built world's
    try:
        centres = []
        for seed in range(3):
            env.reset(seed=seed)
            plain.reset(seed=seed)
            (wx0, wy0, _), (wx1, wy1, _) = (np.asarray(v) for v in plain.unwrapped.workspace_box())
            (ax0, ay0, floor), (ax1, ay1, _) = (np.asarray(v) for v in plain.unwrapped.distractor_area())
            if env_id == "pixelrig/CartPole-v0":  # the default areas, as documented
                assert floor == 0.0 and ax1 - wx1 == pytest.approx(within) and wx0 - ax0 == pytest.approx(within)
                assert ay1 - wy1 == pytest.approx(within) and wy0 - ay0 == pytest.approx(within)
            feet = footprints(env)
            assert len(feet) == count
            for lo, hi, name in feet:
                outside = hi[0] <= wx0 + 1e-9 or lo[0] >= wx1 - 1e-9 or hi[1] <= wy0 + 1e-9 or lo[1] >= wy1 - 1e-9
                assert outside, (seed, name)
                assert ax0 - 0.01 <= lo[0] and hi[0] <= ax1 + 0.01 and ay0 - 0.01 <= lo[1] and hi[1] <= ay1 + 0.01
                assert abs(lo[2] - floor) < 0.01, (seed, name, lo[2], floor)
                centres.append((lo + hi)[:2] / 2)
            for i, (lo_a, hi_a, a) in enumerate(feet):  # apart: no two footprints overlap
                for lo_b, hi_b, b in feet[i + 1:]:
                    apart = (hi_a[0] <= lo_b[0] + 2e-3 or hi_b[0] <= lo_a[0] + 2e-3 or
                             hi_a[1] <= lo_b[1] + 2e-3 or hi_b[1] <= lo_a[1] + 2e-3)
                    assert apart, (seed, a, b)
        c = np.array(centres)  # spread over the area, on both sides of the workspace
        assert (c[:, 1] < wy0).any() and (c[:, 1] > wy1).any() or (c[:, 0] < wx0).any() and (c[:, 0] > wx1).any()
    finally:
        env.close()
        plain.close()


def test_the_default_workspace_is_the_bodies_bounds_grown_by_the_documented_margin() -> None:
    grow = float(doc_match(r"the bounds of their bodies grown by ([\d.]+) m kept free")[1])
    env = gym.make("pixelrig/CartPole-v0")
    try:
        env.reset(seed=0)
        u = env.unwrapped
        low, high = np.full(3, np.inf), np.full(3, -np.inf)
        for i in range(p.getNumBodies(physicsClientId=u.client)):
            body = p.getBodyUniqueId(i, physicsClientId=u.client)
            for link in range(-1, p.getNumJoints(body, physicsClientId=u.client)):
                lo, hi = (np.asarray(v) for v in p.getAABB(body, link, physicsClientId=u.client))
                if np.all(hi - lo < 20.0):  # the ground plane is not a body to keep free
                    low, high = np.minimum(low, lo), np.maximum(high, hi)
        box_low, box_high = (np.asarray(v) for v in u.workspace_box())
        np.testing.assert_allclose(box_low, low - grow)
        np.testing.assert_allclose(box_high, high + grow)
    finally:
        env.close()
