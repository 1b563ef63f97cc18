"""Level of detail: physics and labels untouched at every visual_detail, fidelity against "full" within stated
tolerances, the on-disk mesh cache (misses, hits, corruption, unwritable), and other model formats."""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pybullet_data
import pytest

import pixelrig
from pixelrig import PixelObs, RobotEnv, restore, snapshot
from pixelrig.envs import lod, meshcache
from pixelrig.experts.push import PushExpert
from pixelrig.system import cache as cache_folder
from pixelrig.tools.bench.fidelity import detail_fidelity

from .conftest import assert_trees_equal, physics_state

DETAILS = ("full", "simplified", "collision")
PANDA_VISUAL = Path(pybullet_data.getDataPath()) / "franka_panda/meshes/visual/link6.obj"


def push_run(detail: str, steps: int = 200) -> tuple[list, bytes, dict]:
    env = PixelObs(gym.make("pixelrig/PandaPush-v0", visual_detail=detail),
                   cams=[{"name": "c", "eye": (1.0, 0.0, 1.2), "target": (0.5, 0, 0.6), "width": 24, "height": 24,
                          "modalities": ("label",)}])
    try:
        obs, _ = env.reset(seed=0)
        expert, out = PushExpert(), []
        for t in range(steps):
            result = env.step(expert(obs["state"]))
            out.append((result[0]["state"], *result[1:], physics_state(env.unwrapped.client)))
            obs = result[0]
            if result[2] or result[3]:
                obs, _ = env.reset(seed=t)
                expert.reset()
        return out, snapshot(env).env_state["physics"], env.label_names
    finally:
        env.close()


def test_physics_observations_rewards_and_snapshot_identical_at_every_detail() -> None:
    """200 steps of the scripted pusher (contacts with the cube): state, rewards, infos, physics and the
    snapshot's physics bytes are the same for every visual_detail; label ids name the same bodies."""
    reference, physics, names = push_run("full")
    for detail in DETAILS[1:]:
        run, run_physics, run_names = push_run(detail)
        assert_trees_equal(reference, run, detail)
        assert physics == run_physics
        assert names == run_names


@pytest.mark.parametrize("env_id", ["pixelrig/PandaPush-v0", "pixelrig/PandaReach-v0"])
@pytest.mark.parametrize("detail,rgb_tolerance", [("simplified", 6.0), ("collision", 25.0)])
def test_fidelity_against_full(env_id: str, detail: str, rgb_tolerance: float) -> None:
    """Targets from the issue: >= 97% of label pixels equal and depth median within 5 mm. RGB: measured 2.3
    levels for "simplified" (texture kept; decimation moves silhouettes by about a pixel), allowed 6; about 17
    for "collision" (one mean colour per link: the Panda's dark joints and the table's texture are gone),
    allowed 25."""
    f = detail_fidelity(env_id, detail)
    assert f["label"] >= 0.97, f
    assert f["depth"] <= 0.005, f
    assert f["rgb"] <= rgb_tolerance, f


def test_default_detail_of_panda_tasks_is_simplified() -> None:
    env = gym.make("pixelrig/PandaPush-v0")
    assert env.unwrapped.visual_detail == "simplified" and env.unwrapped.visual_budget == lod.DEFAULT_BUDGET
    env.close()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("PIXELRIG_CACHE_DIR", str(root))
    monkeypatch.setattr(lod, "_prepared", {})
    return root


def test_cache_miss_shows_progress_then_hits(cache: Path, capfd: pytest.CaptureFixture) -> None:
    env = gym.make("pixelrig/PandaReach-v0")
    err = capfd.readouterr().err
    assert "simplifying 10 meshes of panda.urdf (cached for next time)" in err
    entries = sorted(p.name for p in (cache / "meshes").glob("*.obj"))
    assert len(entries) == 11  # the panda's 10 visual meshes and the table's
    env.close()
    lod._prepared.clear()
    env = gym.make("pixelrig/PandaReach-v0")
    assert "simplifying" not in capfd.readouterr().err  # everything came from the cache
    env.close()


def test_simplified_mesh_keeps_materials_and_texture(cache: Path) -> None:
    out = meshcache.simplify_to_cache(PANDA_VISUAL, 100)
    original, simplified = meshcache.load_mesh(PANDA_VISUAL), meshcache.load_mesh(out)
    assert original.triangles == 21620 and simplified.triangles < 1000
    assert [p.material for p in simplified.parts] == [p.material for p in original.parts]
    texture = next(line.split()[-1] for line in simplified.mtl_lines if line.strip().startswith("map_Kd"))
    assert (out.parent / texture).is_file()  # pybullet looks textures up next to the mesh


def test_corrupt_cache_entry_is_recomputed(cache: Path) -> None:
    first = meshcache.simplify_to_cache(PANDA_VISUAL, 100)
    good = first.read_bytes()
    first.write_bytes(b"v 0 0 0\nf 1 1 1\n")  # damaged on disk
    assert meshcache.cached_simplified(PANDA_VISUAL, 100) is None
    again = meshcache.simplify_to_cache(PANDA_VISUAL, 100)
    assert again == first and again.read_bytes() == good


def test_unwritable_cache_falls_back_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("PIXELRIG_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(cache_folder, "_fallback_dir", None)
    monkeypatch.setattr(lod, "_prepared", {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("pixelrig/PandaReach-v0")
    env.reset(seed=0)
    env.close()
    assert any("is not writable" in str(w.message) and "PIXELRIG_CACHE_DIR" in str(w.message) for w in caught)


@pytest.mark.parametrize("source", ["kuka_iiwa/model.urdf", "kuka_iiwa/kuka_with_gripper2.sdf"])
def test_robot_files_at_every_detail(source: str, cache: Path) -> None:
    """URDF and SDF robots a user brings: same physics at every detail, and every detail renders the robot."""
    kwargs = {"effort_limits": 50.0} if source.endswith(".sdf") else {}
    runs, shares = {}, {}
    for detail in DETAILS:
        env = PixelObs(gym.make("pixelrig/Robot-v0", source=source, visual_detail=detail, **kwargs))
        try:
            obs, _ = env.reset(seed=0)
            shares[detail] = float(np.mean(obs["main/label"] == env.unwrapped.robot))
            acts = np.random.default_rng(0).uniform(-1, 1, (30, *env.action_space.shape)).astype(np.float32)
            runs[detail] = [env.step(a)[0]["state"] for a in acts]
        finally:
            env.close()
    for detail in DETAILS[1:]:
        assert_trees_equal(runs["full"], runs[detail], detail)
        assert abs(shares[detail] - shares["full"]) < 0.03, shares


def test_mjcf_is_drawn_as_it_is() -> None:
    """pybullet makes every MJCF geom both collision and visual: the file is loaded unchanged."""
    path = Path(pybullet_data.getDataPath()) / "mjcf/ant.xml"
    assert lod.prepare_model(path, "simplified") == path


def test_bad_visual_detail() -> None:
    with pytest.raises(ValueError, match=re.escape(
            "visual_detail must be one of ('full', 'simplified', 'collision'): got 'low'")):
        gym.make("pixelrig/PandaPush-v0", visual_detail="low")
    with pytest.raises(ValueError, match=re.escape("visual_budget=3 must be an integer >= 16")):
        gym.make("pixelrig/Robot-v0", source="kuka_iiwa/model.urdf", visual_budget=3)


RANDOM = pixelrig.Randomization(mass_scale=(0.7, 1.3), lateral_friction=(0.6, 1.1), link_colors=True)


def randomized_push(detail: str, seed: int, steps: int = 60) -> tuple[dict, list]:
    env = gym.make("pixelrig/PandaPush-v0", visual_detail=detail, randomize=RANDOM)
    try:
        obs, _ = env.reset(seed=seed)
        expert, out = PushExpert(), []
        for _ in range(steps):
            result = env.step(expert(obs))
            out.append((*result, physics_state(env.unwrapped.client)))
            obs = result[0]
        values = env.unwrapped.randomization_values
        physical = {k: v for k, v in values.items() if k != "rgba"}
        return physical, out, values["rgba"]
    finally:
        env.close()


@pytest.mark.parametrize("seed", [0, 4])
def test_randomised_physics_is_the_same_at_every_detail(seed: int) -> None:
    """Colours are drawn from a stream of their own, so the number of visual shapes a detail has never shifts
    the masses and frictions drawn (seed 4 drew other masses at "collision" before): the drawn physics and the
    trajectory are bitwise those of "full"; the colours drawn for a link are the same too."""
    reference, run_full, colors_full = randomized_push("full", seed)
    for detail in DETAILS[1:]:
        physical, run, colors = randomized_push(detail, seed)
        assert_trees_equal(reference, physical, detail)
        assert_trees_equal(run_full, run, detail)
        full_by_link = {(b, link): rgb[:3] for b, link, *rgb in colors_full}
        assert all(full_by_link.get((b, link), rgb[:3]) == rgb[:3] for b, link, *rgb in colors), detail


@pytest.mark.parametrize("source_detail,target_detail", [("full", "collision"), ("collision", "simplified"),
                                                          ("simplified", "full")])
def test_randomised_snapshot_restores_into_another_detail(source_detail: str, target_detail: str) -> None:
    """A snapshot taken at one detail (with randomised masses and colours) restores into an env at another, and
    the two go on bitwise alike in physics, state, rewards and infos."""
    envs = [gym.make("pixelrig/PandaPush-v0", visual_detail=d, randomize=RANDOM)
            for d in (source_detail, target_detail)]
    try:
        source, target = envs
        obs, _ = source.reset(seed=7)
        target.reset(seed=123)
        expert = PushExpert()
        for _ in range(40):
            obs = source.step(expert(obs))[0]
        restore(target, snapshot(source))
        acts = [expert(obs)] + [np.array([0.3, -0.2, -0.1], np.float32)] * 30
        runs = [[(*e.step(a), physics_state(e.unwrapped.client)) for a in acts] for e in envs]
        assert_trees_equal(runs[0], runs[1])
    finally:
        for e in envs:
            e.close()


def test_cached_model_never_points_into_a_deleted_install(cache: Path, tmp_path: Path) -> None:
    """Two installs of the same robot files: deleting the first (a removed virtualenv holding pybullet_data)
    must not break loading the second at "collision"/"simplified" detail from the shared cache."""
    data = Path(pybullet_data.getDataPath())
    first, second = tmp_path / "install-a", tmp_path / "install-b"
    for install in (first, second):
        shutil.copytree(data / "kuka_iiwa", install / "kuka_iiwa")
    for detail in ("collision", "simplified"):
        env = RobotEnv(first / "kuka_iiwa/model.urdf", visual_detail=detail)
        env.close()
    shutil.rmtree(first)
    lod._prepared.clear()
    for detail in ("collision", "simplified"):
        env = RobotEnv(second / "kuka_iiwa/model.urdf", visual_detail=detail)
        try:
            obs, _ = env.reset(seed=0)
            assert obs.shape == (14,)
        finally:
            env.close()


def test_broken_cache_entry_is_rebuilt_not_fatal(cache: Path, tmp_path: Path) -> None:
    """An entry whose files went missing (here: a simplified mesh deleted from the cache) is rebuilt."""
    env = RobotEnv("kuka_iiwa/model.urdf", visual_detail="simplified")
    env.close()
    for mesh in (cache / "meshes").glob("*.obj"):
        mesh.unlink()
    lod._prepared.clear()
    env = RobotEnv("kuka_iiwa/model.urdf", visual_detail="simplified")
    try:
        env.reset(seed=0)
        assert list((cache / "meshes").glob("*.obj"))
    finally:
        env.close()
