"""Looks (pixelrig.envs.looks) where mutmut found no test pinning them (issue 33): textures on one link
(``"body/link"``), set_lighting and set_texture at run time (what they record, what they replace, their refusals in
full), the default workspace and distractor area on their own terms (another env's world beside them, a body just
past the ground's 20 m, an empty world), images read again when their file changes, and distractors made again from
a snapshot (with their physics, into the world they were drawn in, or refused naming the mismatch).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import pixelrig  # noqa: F401 (registers the ids)
from pixelrig import Lighting, Randomization, restore, snapshot
from pixelrig.envs import looks
from pixelrig.render.procedural import FAMILIES, procedural_image

from .conftest import runnable


def make(env_id: str = "pixelrig/PandaPush-v0", **kwargs):
    kwargs.setdefault("renderer", "tiny")
    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    return env


def worn(env) -> dict[tuple[int, int], list]:
    return {(int(e[0]), int(e[1])): e[2:] for e in env.unwrapped.randomization_values.get("textures", [])}


# ---- one link: "body/link" ---------------------------------------------------------------------------------------


def test_a_texture_on_one_link_of_a_body_and_on_its_base() -> None:
    other = make("pixelrig/CartPole-v0")  # another world first: the links are looked up in the env's own
    env = make(randomize=Randomization(textures={"panda/panda_link3": "procedural", "cube/baseLink": "checkers",
                                                 "panda/panda_link0": "noise"}))
    try:
        assert env.unwrapped.client != other.unwrapped.client
        panda, cube = env.unwrapped.body_id("panda"), env.unwrapped.body_id("cube")
        assert set(worn(env)) == {(panda, 2), (cube, -1), (panda, -1)}  # link3 is joint 2; a base link is -1
        assert worn(env)[(cube, -1)][:2] == ["procedural", "checkers"]
        assert looks.link_index(env.unwrapped.client, panda, "panda_hand") == 8
        assert looks.link_index(env.unwrapped.client, panda, "panda_link0") == -1
        assert looks.link_index(env.unwrapped.client, panda, "panda") is None  # the body's name is not a link's
    finally:
        env.close()
        other.close()


def test_a_link_that_is_not_there_is_refused_naming_it() -> None:
    message = ("PandaPushEnv: Randomization(textures=...) names link 'panda_link9' of 'panda', which has none of "
               "that name")
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        make(randomize=Randomization(textures={"panda/panda_link9": "procedural"}))
    env = make()
    try:
        with pytest.raises(ValueError, match="^" + re.escape("PandaPushEnv: set_texture names link 'hand' of 'panda', "
                                                             "which has none of that name") + "$"):
            env.unwrapped.set_texture("panda/hand", np.zeros((2, 2, 3), np.uint8))
    finally:
        env.close()


# ---- set_lighting, set_texture -----------------------------------------------------------------------------------


def test_set_lighting_draws_with_it_records_it_and_lasts_until_the_reset() -> None:
    base = Lighting(direction=(0.2, 0.3, 0.9), ambient=0.5)
    env = make(lighting=base, randomize=Randomization(distractors=1))
    try:
        u = env.unwrapped
        before = dict(u.randomization_values)
        light = Lighting(direction=(-0.4, 0.1, 0.7), ambient=0.3, diffuse=0.6, shadows=True)
        u.set_lighting(light)
        assert u.render_backend.lighting == light and u.current_lighting == light
        assert u.randomization_values == {**before, "lighting": light.to_dict()}
        with pytest.raises(ValueError, match=re.escape("set_lighting needs a pixelrig.Lighting")):
            u.set_lighting({"ambient": 0.9})
        assert u.current_lighting == light
        env.reset(seed=1)
        assert u.current_lighting == base and u.render_backend.lighting == base and "lighting" not in \
            u.randomization_values
    finally:
        env.close()


def test_set_texture_replaces_what_the_link_wore_and_keeps_the_others(tmp_path: Path) -> None:
    env = make()
    try:
        u = env.unwrapped
        table, cube = u.body_id("table"), u.body_id("cube")
        first, second = procedural_image("noise", 1, (8, 8)), procedural_image("stripes", 2, (8, 8))
        u.set_texture("table", first)
        u.set_texture("cube", second)
        u.set_texture("table", second)
        entries = u.randomization_values["textures"]
        assert [(e[0], e[1]) for e in entries] == [(cube, -1), (table, -1)]  # the table's first one is gone
        assert all(e[2] == "image" for e in entries)
        np.testing.assert_array_equal(entries[1][3], second)
        path = tmp_path / "t.png"
        Image.fromarray(first).save(path)
        u.set_texture("cube", path)
        assert worn(env)[(cube, -1)] == ["file", str(path.resolve())]
        assert len(u.randomization_values["textures"]) == 2
    finally:
        env.close()


@pytest.mark.parametrize(("body", "image", "message"), [
    ("table*", np.zeros((2, 2, 3), np.uint8), "set_texture: body='table*' must be a body name or 'body/link' (no "
                                              "wildcards)"),
    ("t?ble", np.zeros((2, 2, 3), np.uint8), "set_texture: body='t?ble' must be a body name or 'body/link' (no "
                                             "wildcards)"),
    ("[t]able", np.zeros((2, 2, 3), np.uint8), "set_texture: body='[t]able' must be a body name or 'body/link' (no "
                                               "wildcards)"),
    (3, np.zeros((2, 2, 3), np.uint8), "set_texture: body=3 must be a body name or 'body/link' (no wildcards)"),
    ("XX", np.zeros((2, 2, 3), np.uint8), "PandaPushEnv: set_texture names body 'XX', which this env does not have; "
                                          "bodies: ['ground', 'table', 'panda', 'cube', 'target']"),
    ("table", np.zeros((2, 2, 3)), "set_texture('table'): an image must be a uint8 array of shape (H, W), (H, W, 3) "
                                   "or (H, W, 4): got float64 (2, 2, 3)"),
])
def test_set_texture_refusals_in_full_change_nothing(body, image, message) -> None:
    env = make()
    try:
        values = env.unwrapped.randomization_values
        with pytest.raises(ValueError, match="^" + re.escape(message)):
            env.unwrapped.set_texture(body, image)
        assert env.unwrapped.randomization_values is values
    finally:
        env.close()


def test_set_texture_on_a_renderer_without_run_time_textures_names_itself() -> None:
    env = make(renderer=runnable("egl"))
    try:
        with pytest.raises(ValueError, match=re.escape("does not draw textures set at run time: set_texture needs "
                                                       "renderer=")):
            env.unwrapped.set_texture("table", np.zeros((2, 2, 3), np.uint8))
    finally:
        env.close()


# ---- the workspace and the distractor area -----------------------------------------------------------------------


def bounds(client: int, skip_wider_than: float = 20.0) -> tuple[np.ndarray, np.ndarray]:
    low, high = np.full(3, np.inf), np.full(3, -np.inf)
    for i in range(p.getNumBodies(physicsClientId=client)):
        body = p.getBodyUniqueId(i, physicsClientId=client)
        for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
            lo, hi = (np.asarray(v) for v in p.getAABB(body, link, physicsClientId=client))
            if np.all(hi - lo < skip_wider_than):
                low, high = np.minimum(low, lo), np.maximum(high, hi)
    return low, high


@pytest.mark.parametrize("other_id", ["pixelrig/CartPole-v0", "pixelrig/PandaPush-v0"])
def test_the_default_workspace_and_area_are_the_envs_own_world_beside_another(other_id: str) -> None:
    """Another env's world (another pybullet client, made first, with fewer or more bodies and joints) never enters
    this one's boxes; every link counts, a base too (a box of a base alone added far off); the area is the workspace
    grown by 1 m in x and y, on z = 0."""
    other = make(other_id)
    env = make("pixelrig/CartPole-v0")
    try:
        u = env.unwrapped
        assert u.client != other.unwrapped.client
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.1, 0.1, 0.1], physicsClientId=u.client)
        p.createMultiBody(0, shape, -1, [6.0, -3.0, 1.0], physicsClientId=u.client)
        low, high = bounds(u.client)
        assert high[0] > 6.0 and low[1] < -3.0
        box_low, box_high = u.workspace_box()
        np.testing.assert_allclose(box_low, low - 0.25, rtol=0, atol=1e-12)
        np.testing.assert_allclose(box_high, high + 0.25, rtol=0, atol=1e-12)
        area_low, area_high = u.distractor_area()
        assert area_low == (box_low[0] - 1.0, box_low[1] - 1.0, 0.0)
        assert area_high == (box_high[0] + 1.0, box_high[1] + 1.0, 0.0)
    finally:
        env.close()
        other.close()


def test_a_body_just_past_20_m_is_ground_and_one_under_is_kept_free() -> None:
    env = make("pixelrig/CartPole-v0")
    try:
        c = env.unwrapped.client
        before = env.unwrapped.workspace_box()
        wide = p.createCollisionShape(p.GEOM_BOX, halfExtents=[10.25, 10.25, 0.01], physicsClientId=c)
        p.createMultiBody(0, wide, -1, [0, 0, -0.5], physicsClientId=c)  # 20.5 m: the ground's kind
        assert env.unwrapped.workspace_box() == before
        under = p.createCollisionShape(p.GEOM_BOX, halfExtents=[9.7, 0.1, 0.1], physicsClientId=c)
        p.createMultiBody(0, under, -1, [0, 0, 3.0], physicsClientId=c)  # 19.4 m: a body to keep free
        low, high = env.unwrapped.workspace_box()
        assert low[0] < -9.9 and high[0] > 9.9 and high[2] > 3.3
    finally:
        env.close()


def test_a_world_of_ground_alone_gives_a_half_metre_box_at_the_origin() -> None:
    env = make("pixelrig/CartPole-v0")
    try:
        c = env.unwrapped.client
        ground = p.getBodyUniqueId(0, physicsClientId=c)
        for body in [p.getBodyUniqueId(i, physicsClientId=c) for i in range(p.getNumBodies(physicsClientId=c))]:
            lo, hi = (np.asarray(v) for v in p.getAABB(body, -1, physicsClientId=c))
            if body != ground or np.all(hi - lo < 20.0):
                p.removeBody(body, physicsClientId=c)
        assert env.unwrapped.workspace_box() == ((-0.25, -0.25, -0.25), (0.25, 0.25, 0.25))
        assert env.unwrapped.distractor_area() == ((-1.25, -1.25, 0.0), (1.25, 1.25, 0.0))
    finally:
        env.close()


# ---- images read again, distractors made again -------------------------------------------------------------------


def test_an_image_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "a.png"
    first, second = procedural_image("noise", 1, (6, 6)), procedural_image("marble", 2, (6, 6))
    Image.fromarray(first).save(path)
    np.testing.assert_array_equal(looks.read_image(path).pixels, first)
    Image.fromarray(second).save(path)
    stamp = os.stat(path).st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(stamp, stamp))
    np.testing.assert_array_equal(looks.read_image(str(path)).pixels, second)


def test_an_unreadable_image_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "broken.png"
    path.write_bytes(b"not a png")
    with pytest.raises(ValueError, match="^" + re.escape(f"cannot read the image {str(path)!r}: cannot identify image "
                                                         "file")):
        looks.read_image(path)
    with pytest.raises(ValueError, match="^" + re.escape(f"cannot read the image {str(tmp_path / 'gone.png')!r}: "
                                                         "[Errno 2] No such file or directory")):
        looks.read_image(tmp_path / "gone.png")


def test_distractors_with_physics_are_made_again_with_it_by_a_restore() -> None:
    spec = Randomization(distractors=2, distractor_physics=True)
    env, fresh = make(randomize=spec), make(randomize=spec)
    try:
        fresh.reset(seed=1)
        restore(fresh, snapshot(env), rebuild=True)
        u = fresh.unwrapped
        ids = sorted(looks.distractor_ids(u.randomization_values))
        assert ids == sorted(b for b, n in u.body_names.items() if n.startswith("distractor_"))
        for body in ids:  # colliding: a mass, not fixed, and no collision filter
            assert p.getDynamicsInfo(body, -1, physicsClientId=u.client)[0] > 0.0
        for _ in range(10):
            fresh.step(np.zeros(3))
        resting = {q[1] for q in p.getContactPoints(physicsClientId=u.client)} | \
                  {q[2] for q in p.getContactPoints(physicsClientId=u.client)}
        assert set(ids) <= resting
    finally:
        env.close()
        fresh.close()


def test_a_distractor_that_loads_as_another_body_is_refused_naming_both_ids() -> None:
    env = make(randomize=Randomization(distractors=1))
    try:
        entry = list(env.unwrapped.randomization_values["distractors"][0])
        recorded = entry[0]
        entry[0] = recorded + 40
        with pytest.raises(ValueError, match="^" + re.escape(
                f"distractor {entry[2]!r} was body {recorded + 40} when drawn but loads as body {recorded + 1}: the "
                "world differs from the one it was drawn in") + "$"):
            looks.remake_distractors(env.unwrapped, [entry])
    finally:
        env.close()


def test_distractor_ids_are_the_first_field_of_each_distractor_entry() -> None:
    assert looks.distractor_ids({}) == set()
    assert looks.distractor_ids({"distractors": [[7, -1, "a.urdf"], [9, -1, "b.urdf"]], "textures": [[3, -1]]}) == \
        {7, 9}
    env = make(randomize=Randomization(distractors=3))
    try:
        u = env.unwrapped
        assert looks.distractor_ids(u.randomization_values) == \
            {b for b, n in u.body_names.items() if n.startswith("distractor_")}
    finally:
        env.close()


def test_a_snapshot_without_textures_restores_its_light() -> None:
    light = Randomization(light_ambient=(0.3, 0.9))
    env, fresh = make(randomize=light), make(randomize=light)
    try:
        env.reset(seed=5)
        assert "textures" not in env.unwrapped.randomization_values
        restore(fresh, snapshot(env))
        assert fresh.unwrapped.render_backend.lighting == env.unwrapped.current_lighting != Lighting()
    finally:
        env.close()
        fresh.close()


# ---- textures drawn: the stream of each body, a folder's files, the first key's source ---------------------------


def texture_stream(seed: int, name: str, key: str) -> np.random.Generator:
    """A textured body's stream as documented: the looks seed, the texture kind (1), the CRC-32 of "name/key"."""
    import zlib

    return np.random.default_rng([seed, 1, zlib.crc32(f"{name}/{key}".encode())])


def test_procedural_textures_are_drawn_from_each_bodys_own_stream() -> None:
    spec = Randomization(textures={"table": "procedural:stripes,marble,noise", "cu*": "gradient"})
    env = make(randomize=spec)
    try:
        u = env.unwrapped
        table, cube = u.body_id("table"), u.body_id("cube")
        seeds = set()
        for seed in range(40):
            entries = looks.draw_textures(spec, seed, u)
            rng = texture_stream(seed, "table", "table")
            family = ("stripes", "marble", "noise")[int(rng.integers(3))]
            assert entries[0] == [table, -1, "procedural", family, int(rng.integers(2**31))]
            rng = texture_stream(seed, "cube", "cu*")
            assert entries[1] == [cube, -1, "procedural", "gradient", int(rng.integers(2**31))]
            seeds.add(entries[0][4])
        assert max(seeds) < 2**31 and max(seeds) > 2**30  # 31-bit image seeds
    finally:
        env.close()


def test_textures_from_a_folder_draw_one_of_its_files_per_body(tmp_path: Path) -> None:
    for i in range(5):
        Image.fromarray(procedural_image("checkers", i, (4, 4))).save(tmp_path / f"{i}.png")
    spec = Randomization(textures={"table": tmp_path, "cube": "marble"})
    env = make(randomize=spec)
    try:
        u = env.unwrapped
        files = sorted(str(f) for f in tmp_path.resolve().glob("*.png"))
        picked = set()
        for seed in range(12):
            entry = looks.draw_textures(spec, seed, u)[0]
            index = int(texture_stream(seed, "table", "table").integers(5))
            assert entry == [u.body_id("table"), -1, "file", files[index]]
            picked.add(index)
        assert len(picked) >= 4
        env.reset(seed=3)
        assert worn(env)[(u.body_id("table"), -1)][0] == "file"
    finally:
        env.close()


def test_a_texture_folder_gone_before_a_reset_is_refused_naming_the_fix(tmp_path: Path) -> None:
    folder = tmp_path / "images"
    folder.mkdir()
    Image.fromarray(procedural_image("noise", 0, (4, 4))).save(folder / "a.png")
    env = make(randomize=Randomization(textures={"table": folder}))
    try:
        (folder / "a.png").unlink()
        folder.rmdir()
        with pytest.raises(ValueError, match="^" + re.escape(f"textures={str(folder.resolve())!r} is not a folder: "
                                                             "put images there") + "$"):
            env.reset(seed=1)
    finally:
        env.close()


def test_a_glob_that_matches_no_body_textures_nothing_and_is_no_error() -> None:
    spec = Randomization(textures={"robot*": "noise", "t?ble": "marble", "[c]ube": "checkers"})
    env = make(randomize=spec)
    try:
        u = env.unwrapped
        assert looks.texture_targets(u, "robot*") == []
        assert {(e[0], e[3]) for e in u.randomization_values["textures"]} == {(u.body_id("table"), "marble"),
                                                                              (u.body_id("cube"), "checkers")}
    finally:
        env.close()


def test_a_body_named_by_several_keys_takes_the_first_keys_source() -> None:
    spec = Randomization(textures={"table": "checkers", "tab*": "marble", "*": "stripes"})
    env = make(randomize=spec)
    try:
        u = env.unwrapped
        entries = looks.draw_textures(spec, 0, u)
        by_link = {(e[0], e[1]): e[3] for e in entries}
        assert len(by_link) == len(entries)  # each link once
        assert by_link[(u.body_id("table"), -1)] == "checkers"
        assert by_link[(u.body_id("cube"), -1)] == "stripes"
    finally:
        env.close()


# ---- pure functions: sources, the seed, the light ----------------------------------------------------------------

FEW = settings(max_examples=25, deadline=None)


def test_texture_families_of_each_kind_of_source() -> None:
    assert looks.texture_families("procedural") == FAMILIES
    for family in FAMILIES:
        assert looks.texture_families(family) == (family,)
    assert looks.texture_families("procedural:marble, noise") == ("marble", "noise")
    assert looks.texture_families("procedural:stripes") == ("stripes",)
    for other in ("procedural:", "procedural:noise,wood", "procedural:noise,", "Procedural", "wood", "/a/folder",
                  "procedural,noise", "xprocedural:noise"):
        assert looks.texture_families(other) is None, other


def test_folder_files_lists_images_at_any_depth_sorted_whatever_the_suffixs_case(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "deep").mkdir()
    for name in ("z.png", "b/a.JPG", "b/deep/c.Bmp", "note.txt", "b/x.jpeg"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "dir.png").mkdir()  # a folder named like an image is not a file
    files = looks.folder_files("what", tmp_path, looks.IMAGE_SUFFIXES, "fix it")
    root = tmp_path.resolve()
    assert files == tuple(sorted(str(root / n) for n in ("z.png", "b/a.JPG", "b/deep/c.Bmp", "b/x.jpeg")))
    assert looks.folder_files("what", str(tmp_path), (".txt",), "fix") == (str(root / "note.txt"),)


def test_folder_files_refusals_name_what_and_the_fix(tmp_path: Path) -> None:
    missing = tmp_path / "no"
    with pytest.raises(ValueError, match="^" + re.escape(f"what={str(missing)!r} is not a folder: fix it") + "$"):
        looks.folder_files("what", tmp_path / "no", (".png",), "fix it")
    (tmp_path / "a.txt").write_bytes(b"")
    with pytest.raises(ValueError, match="^" + re.escape(f"what={str(tmp_path)!r} holds no .png/.jpg files: fix it")
                       + "$"):
        looks.folder_files("what", tmp_path, (".png", ".jpg"), "fix it")


def test_folder_files_expands_the_users_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "a.png").write_bytes(b"")
    expected = (str(tmp_path.resolve() / "imgs" / "a.png"),)
    assert looks.folder_files("what", "~/imgs", looks.IMAGE_SUFFIXES, "fix") == expected


def test_check_texture_sources_keeps_families_and_makes_folders_absolute(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.png").write_bytes(b"")
    monkeypatch.chdir(tmp_path.parent)
    out = looks.check_texture_sources({"table": "procedural:noise,marble", "cube": tmp_path.name,
                                       "ground": tmp_path, "t*": "checkers"})
    assert dict(out) == {"table": "procedural:noise,marble", "cube": str(tmp_path.resolve()),
                         "ground": str(tmp_path.resolve()), "t*": "checkers"}
    with pytest.raises(TypeError):
        out["x"] = "noise"  # read-only
    assert looks.check_texture_sources(None) is None
    assert looks.check_texture_sources({}) is None


@pytest.mark.parametrize(("value", "message"), [
    (["table"], "Randomization: textures=['table'] must be a dict {body name: source}, e.g. textures={'table': "
                "'procedural', 'ground': '/path/to/images'}"),
    ({3: "noise"}, "Randomization: textures key 3 must be a body name, 'body/link' or a glob"),
    ({" ": "noise"}, "Randomization: textures key ' ' must be a body name, 'body/link' or a glob"),
    ({"table": 3}, "Randomization: textures['table']=3 must be 'procedural', one of ('noise', 'checkers', 'stripes', "
                   "'gradient', 'marble'), 'procedural:a,b' or a folder of images"),
    ({"table": "/no/such/folder"}, "Randomization: textures['table']='/no/such/folder' is not a folder: give a folder "
                                   "of images (.png, .jpg, .jpeg, .bmp), 'procedural' or one of ('noise', 'checkers', "
                                   "'stripes', 'gradient', 'marble')"),
])
def test_check_texture_sources_refusals_in_full(value, message) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        looks.check_texture_sources(value)


def test_check_distractors_takes_0_to_64_objects_and_a_folder_of_models(tmp_path: Path) -> None:
    for count in (0, 1, 64, np.int64(3)):
        assert looks.check_distractors(count, None) is None
    message = "Randomization: distractors={!r} must be a whole number of objects in 0..64"
    for count in (-1, 65, True, 2.0, "3"):
        with pytest.raises(ValueError, match="^" + re.escape(message.format(count)) + "$"):
            looks.check_distractors(count, None)
    with pytest.raises(ValueError, match="^" + re.escape(f"Randomization: distractor_source={str(tmp_path)!r} holds "
                                                         "no .urdf/.obj files: give a folder of .urdf or .obj files, "
                                                         "or None for pybullet_data's random_urdfs") + "$"):
        looks.check_distractors(2, tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.obj").write_text("v 0 0 0\n")
    assert looks.check_distractors(2, tmp_path / "models") == str((tmp_path / "models").resolve())


def test_the_looks_seed_is_the_sha256_of_the_generators_state_halved_to_63_bits() -> None:
    for seed in range(20):
        rng = np.random.default_rng(seed)
        rng.random(seed)
        state = json.dumps(rng.bit_generator.state, sort_keys=True, default=str)
        expected = int.from_bytes(hashlib.sha256(state.encode()).digest()[:8], "little") >> 1
        assert looks.looks_seed(rng) == expected < 2**63
    mt = np.random.Generator(np.random.MT19937(5))  # a state holding an array: written out with str
    state = json.dumps(mt.bit_generator.state, sort_keys=True, default=str)
    assert looks.looks_seed(mt) == int.from_bytes(hashlib.sha256(state.encode()).digest()[:8], "little") >> 1


@FEW
@given(azimuth=st.floats(-179.0, 179.0), elevation=st.floats(-89.0, 89.0), length=st.floats(0.1, 10.0))
def test_azimuth_and_elevation_of_a_direction(azimuth: float, elevation: float, length: float) -> None:
    a, e = math.radians(azimuth), math.radians(elevation)
    direction = (length * math.cos(e) * math.cos(a), length * math.cos(e) * math.sin(a), length * math.sin(e))
    got = looks.azimuth_elevation(direction)
    assert got[0] == pytest.approx(azimuth, abs=1e-9) and got[1] == pytest.approx(elevation, abs=1e-9)
    assert looks.azimuth_elevation((0.0, 2.0, 0.0)) == (90.0, 0.0)
    assert looks.azimuth_elevation((-1.0, 0.0, 1.0)) == (180.0, 45.0)


SPANS = dict(light_azimuth=(10.0, 350.0), light_elevation=(20.0, 70.0), light_color=((0.5, 0.6, 0.7), (1.1, 1.3, 1.5)),
             light_ambient=(0.1, 0.9), light_diffuse=(0.2, 0.8), light_specular=(0.05, 0.45), shadows=0.35)


@FEW
@given(seed=st.integers(0, 2**63 - 1), fields=st.sets(st.sampled_from(sorted(SPANS)), min_size=1))
def test_each_light_field_is_its_own_uniform_of_the_light_stream(seed: int, fields: set) -> None:
    """Nine uniforms of the light's stream (the looks seed, kind 0): azimuth, elevation, three colour channels,
    ambient, diffuse, specular, shadows; a field not randomised keeps the base light's value."""
    base = Lighting(direction=(0.3, -0.4, 0.8), color=(0.9, 1.0, 0.8), ambient=0.6, diffuse=0.35, specular=0.05)
    spec = Randomization(**{k: SPANS[k] for k in fields})
    u = np.random.default_rng([seed, 0]).random(9)
    got = looks.draw_lighting(spec, base, seed)

    def pick(name: str, value: float, x: float) -> float:
        return SPANS[name][0] + (SPANS[name][1] - SPANS[name][0]) * x if name in fields else value

    azimuth, elevation = looks.azimuth_elevation(base.direction)
    if fields & {"light_azimuth", "light_elevation"}:
        a = math.radians(pick("light_azimuth", azimuth, u[0]))
        e = math.radians(pick("light_elevation", elevation, u[1]))
        expected = (math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e))
        assert got.direction == pytest.approx(expected, abs=1e-12)
    else:
        assert got.direction == base.direction
    lo, hi = SPANS["light_color"]
    color = tuple(lo[i] + (hi[i] - lo[i]) * u[2 + i] for i in range(3)) if "light_color" in fields else base.color
    assert got.color == pytest.approx(color, abs=1e-12)
    assert got.ambient == pytest.approx(pick("light_ambient", base.ambient, u[5]), abs=1e-12)
    assert got.diffuse == pytest.approx(pick("light_diffuse", base.diffuse, u[6]), abs=1e-12)
    assert got.specular == pytest.approx(pick("light_specular", base.specular, u[7]), abs=1e-12)
    assert got.shadows is (bool(u[8] < 0.35) if "shadows" in fields else base.shadows)


# ---- distractors: their sources, loading, bounds, placement, draws -----------------------------------------------


@pytest.fixture
def world():
    """A bare pybullet world that is not the only one (an empty one made first): a call that forgets its client
    reads the other."""
    spare = p.connect(p.DIRECT)
    client = p.connect(p.DIRECT)
    try:
        yield client
    finally:
        p.disconnect(client)
        p.disconnect(spare)


def test_distractor_sources_are_the_urdfs_of_a_folder_else_its_objs(tmp_path: Path) -> None:
    import pybullet_data

    default = looks.distractor_sources(None)
    assert len(default) == 1000 and all(f.endswith(".urdf") for f in default)
    assert default[0] == os.path.join(pybullet_data.getDataPath(), "random_urdfs", "000", "000.urdf")
    objs, both = tmp_path / "objs", tmp_path / "both"
    objs.mkdir()
    both.mkdir()
    for name in ("a.obj", "b.OBJ"):
        (objs / name).write_text("v 0 0 0\n")
    for name in ("m.obj", "m.URDF", "n.urdf"):
        (both / name).write_text("")
    assert looks.distractor_sources(str(objs)) == (str(objs.resolve() / "a.obj"), str(objs.resolve() / "b.OBJ"))
    assert looks.distractor_sources(str(both)) == (str(both.resolve() / "m.URDF"), str(both.resolve() / "n.urdf"))
    with pytest.raises(ValueError, match="^" + re.escape(f"distractor_source={str(tmp_path / 'none')!r} is not a "
                                                         "folder: give a folder of .urdf or .obj files") + "$"):
        looks.distractor_sources(str(tmp_path / "none"))


def cube_obj(path: Path, half: tuple[float, float, float]) -> Path:
    corners = [(sx * half[0], sy * half[1], sz * half[2]) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    faces = [(1, 2, 4, 3), (5, 7, 8, 6), (1, 5, 6, 2), (3, 4, 8, 7), (1, 3, 7, 5), (2, 6, 8, 4)]
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners) +
                    "".join(f"f {a} {b} {c}\nf {a} {c} {d}\n" for a, b, c, d in faces))
    return path


def test_an_obj_distractor_is_a_visual_alone_or_with_physics_a_convex_body_of_its_mass(world, tmp_path: Path) -> None:
    path = str(cube_obj(tmp_path / "box.obj", (0.1, 0.05, 0.02)))
    quat = p.getQuaternionFromEuler((0.0, 0.0, 0.3))
    seen = looks.make_distractor(world, path, (1.0, 2.0, 0.5), quat, physics=False)
    assert p.getDynamicsInfo(seen, -1, physicsClientId=world)[0] == 0.0
    assert p.getCollisionShapeData(seen, -1, physicsClientId=world) == ()
    assert len(p.getVisualShapeData(seen, physicsClientId=world)) == 1
    position, orientation = p.getBasePositionAndOrientation(seen, physicsClientId=world)
    assert position == pytest.approx((1.0, 2.0, 0.5)) and orientation == pytest.approx(quat)
    felt = looks.make_distractor(world, path, (0.0, 0.0, 0.5), quat, physics=True)
    assert p.getDynamicsInfo(felt, -1, physicsClientId=world)[0] == looks.DISTRACTOR_MASS == 0.1
    assert len(p.getCollisionShapeData(felt, -1, physicsClientId=world)) == 1
    lo, hi = looks._bounds(world, seen, path, quat)  # no collision shape: its vertices, turned
    rotation = np.asarray(p.getMatrixFromQuaternion(quat)).reshape(3, 3)
    points = looks._obj_vertices(path) @ rotation.T
    np.testing.assert_allclose(lo, points.min(axis=0), atol=1e-12)
    np.testing.assert_allclose(hi, points.max(axis=0), atol=1e-12)
    assert hi[2] == pytest.approx(0.02) and lo[2] == pytest.approx(-0.02)
    lo, hi = looks._bounds(world, felt, path, quat)  # a collision shape: pybullet's bounds where it stands
    np.testing.assert_allclose(lo, p.getAABB(felt, physicsClientId=world)[0])
    np.testing.assert_allclose(hi, p.getAABB(felt, physicsClientId=world)[1])


def test_a_visual_distractor_is_never_touched_and_a_physical_one_is(world) -> None:
    import pybullet_data

    urdf = os.path.join(pybullet_data.getDataPath(), "random_urdfs", "000", "000.urdf")
    p.setGravity(0, 0, -9.8, physicsClientId=world)
    box = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.5, 0.5, 0.05], physicsClientId=world)
    p.createMultiBody(0, box, -1, [0, 0, 0], physicsClientId=world)
    seen = looks.make_distractor(world, urdf, (0.0, -0.2, 0.05), (0, 0, 0, 1), physics=False)
    felt = looks.make_distractor(world, urdf, (0.0, 0.2, 0.1), (0, 0, 0, 1), physics=True)
    for _ in range(60):
        p.stepSimulation(physicsClientId=world)
    touching = {q[1] for q in p.getContactPoints(physicsClientId=world)} | \
               {q[2] for q in p.getContactPoints(physicsClientId=world)}
    assert felt in touching and seen not in touching
    assert p.getBasePositionAndOrientation(seen, physicsClientId=world)[0] == pytest.approx((0.0, -0.2, 0.05))


def test_link_index_of_a_base_a_joints_link_and_of_no_link(world) -> None:
    import pybullet_data

    body = p.loadURDF(os.path.join(pybullet_data.getDataPath(), "r2d2.urdf"), physicsClientId=world)
    base = p.getBodyInfo(body, physicsClientId=world)[0].decode()
    assert looks.link_index(world, body, base) == -1
    for j in (0, 3, p.getNumJoints(body, physicsClientId=world) - 1):
        name = p.getJointInfo(body, j, physicsClientId=world)[12].decode()
        assert looks.link_index(world, body, name) == j
    assert looks.link_index(world, body, "no such link") is None


def test_distractors_come_from_the_folder_given(tmp_path: Path) -> None:
    for name in ("a", "b"):
        cube_obj(tmp_path / f"{name}.obj", (0.05, 0.04, 0.03))
    spec = Randomization(distractors=3, distractor_source=tmp_path)
    env = make(randomize=spec)
    try:
        paths = {entry[2] for entry in env.unwrapped.randomization_values["distractors"]}
        assert paths <= {str(tmp_path.resolve() / "a.obj"), str(tmp_path.resolve() / "b.obj")}
    finally:
        env.close()


TWO_LINKS = """<robot name="two"><link name="base"><visual><geometry><box size="0.1 0.1 0.1"/></geometry></visual>
<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision><inertial><mass value="1"/>
<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
<link name="arm"><visual><geometry><box size="0.1 0.1 0.1"/></geometry></visual>
<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision><inertial><mass value="1"/>
<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j" type="fixed"><parent link="base"/><child link="arm"/><origin xyz="0.4 0.2 0.3"/></joint></robot>"""
"""A URDF of two links, the second 0.4 m, 0.2 m and 0.3 m off the base."""


def test_the_bounds_of_a_urdf_distractor_take_every_link(world, tmp_path: Path) -> None:
    path = tmp_path / "two.urdf"
    path.write_text(TWO_LINKS)
    quat = p.getQuaternionFromEuler((0.0, 0.0, 0.5))
    body = looks.make_distractor(world, str(path), (0.0, 0.0, 0.0), quat, physics=False)
    lo, hi = looks._bounds(world, body, str(path), quat)
    boxes = [p.getAABB(body, link, physicsClientId=world) for link in (-1, 0)]
    np.testing.assert_allclose(lo, np.minimum(boxes[0][0], boxes[1][0]), atol=1e-12)
    np.testing.assert_allclose(hi, np.maximum(boxes[0][1], boxes[1][1]), atol=1e-12)
    assert hi[2] > 0.34  # the arm's top


def test_nothing_touches_any_link_of_a_visual_distractor(world, tmp_path: Path) -> None:
    """Boxes dropped on the base and on the second link of a visual-only two-link URDF fall through both; an OBJ made
    visual-only in a world that already has collision shapes gets none of them."""
    path = tmp_path / "two.urdf"
    path.write_text(TWO_LINKS)
    p.setGravity(0, 0, -9.8, physicsClientId=world)
    seen = looks.make_distractor(world, str(path), (0.0, 0.0, 0.0), (0, 0, 0, 1), physics=False)
    drop = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.02] * 3, physicsClientId=world)
    boxes = [p.createMultiBody(0.1, drop, -1, [x, y, z + 0.1], physicsClientId=world)
             for x, y, z in ((0.0, 0.0, 0.05), (0.4, 0.2, 0.35))]
    for _ in range(120):
        p.stepSimulation(physicsClientId=world)
        touching = {q[1] for q in p.getContactPoints(physicsClientId=world)} | \
                   {q[2] for q in p.getContactPoints(physicsClientId=world)}
        assert seen not in touching
    for box, start in zip(boxes, (0.15, 0.45), strict=True):
        assert p.getBasePositionAndOrientation(box, physicsClientId=world)[0][2] < start - 0.3  # fell through
    for _ in range(3):  # collision shapes 0, 1, 2... are there to be taken by mistake
        p.createCollisionShape(p.GEOM_SPHERE, radius=0.05, physicsClientId=world)
    obj = looks.make_distractor(world, str(cube_obj(tmp_path / "c.obj", (0.1, 0.1, 0.1))), (2.0, 0.0, 0.0),
                                (0, 0, 0, 1), physics=False)
    assert p.getCollisionShapeData(obj, -1, physicsClientId=world) == ()


def test_a_distractor_stands_where_its_placement_puts_its_footprint(tmp_path: Path) -> None:
    """One OBJ distractor whose vertices are far off its origin: its recorded position puts the centre of its turned
    footprint on the placement drawn from its stream (after its own draws), its bottom 1 mm above the floor."""
    folder = tmp_path / "objs"
    folder.mkdir()
    path = folder / "off.obj"
    path.write_text("".join(f"v {0.5 + sx * 0.05} {0.3 + sy * 0.04} {0.2 + sz * 0.03}\n"
                            for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)) + "f 1 2 4\nf 5 6 8\n")
    other = make("pixelrig/CartPole-v0")  # another world first: the distractor is placed in the env's own
    env = make(randomize=Randomization(distractors=1, distractor_source=folder))  # the Panda's fixed boxes
    try:
        u = env.unwrapped
        entry = u.randomization_values["distractors"][0]
        rng = np.random.default_rng([u.randomization_values["looks_seed"], 2, 0])
        rng.integers(1)
        yaw = float(rng.uniform(-math.pi, math.pi))
        rng.uniform(0.05, 1.0, 3)
        rng.random(), rng.integers(len(FAMILIES)), rng.integers(2**31)
        rotation = np.asarray(p.getMatrixFromQuaternion(p.getQuaternionFromEuler((0.0, 0.0, yaw)))).reshape(3, 3)
        points = looks._obj_vertices(str(path.resolve())) @ rotation.T
        lo, hi = points.min(axis=0), points.max(axis=0)
        half = (hi - lo) / 2 + 0.005
        area_low, area_high = (np.asarray(v) for v in u.distractor_area())
        work = looks._Box(*(np.asarray(v) for v in u.workspace_box()))
        while True:
            xy = rng.uniform(area_low[:2] + half[:2], np.maximum(area_low[:2] + half[:2], area_high[:2] - half[:2]))
            if not work.overlaps_xy(xy, half):
                break
        centre = (lo + hi) / 2
        expected = [xy[0] - centre[0], xy[1] - centre[1], area_low[2] - lo[2] + 1e-3]
        assert entry[3:6] == pytest.approx(expected, abs=1e-9)
        position = p.getBasePositionAndOrientation(entry[0], physicsClientId=u.client)[0]
        assert list(position) == pytest.approx(expected, abs=1e-9)
    finally:
        env.close()
        other.close()


def test_a_crowded_area_is_refused_naming_the_env() -> None:
    with pytest.raises(ValueError, match="^" + re.escape("PandaPushEnv: no room for a distractor in the distractor "
                                                         "area ")):
        make(randomize=Randomization(distractors=64))


def test_boxes_overlap_in_x_and_y_only_strictly() -> None:
    box = looks._Box(np.array([0.0, 0.0, 5.0]), np.array([1.0, 2.0, 6.0]))
    half = np.array([0.5, 0.5, 0.0])
    assert box.overlaps_xy(np.array([0.5, 1.0, -9.0]), half)  # z plays no part
    assert box.overlaps_xy(np.array([1.4, 2.4]), half) and box.overlaps_xy(np.array([-0.4, -0.4]), half)
    for centre in ([1.5, 1.0], [-0.5, 1.0], [0.5, 2.5], [0.5, -0.5], [1.6, 1.0], [0.5, 2.6]):  # touching or apart
        assert not box.overlaps_xy(np.array(centre), half), centre


def test_a_placement_stays_in_its_area_out_of_the_boxes_else_says_there_is_no_room() -> None:
    area = looks._Box(np.array([-2.0, -1.0, 0.0]), np.array([2.0, 1.0, 0.0]))
    keep_out = [looks._Box(np.array([-1.0, -1.0, 0.0]), np.array([1.0, 1.0, 0.0]))]
    half = np.array([0.2, 0.3, 0.1])
    rng = np.random.default_rng(0)
    xs = []
    for _ in range(200):
        xy = looks._placement(rng, area, keep_out, half, "Env")
        assert -1.8 <= xy[0] <= 1.8 and -0.7 <= xy[1] <= 0.7 and abs(xy[0]) >= 1.2
        xs.append(xy[0])
    assert min(xs) < -1.7 and max(xs) > 1.7  # the whole area, both sides
    tight = looks._Box(np.array([0.0, 0.0, 0.0]), np.array([0.3, 0.3, 0.0]))  # smaller than the footprint
    np.testing.assert_array_equal(looks._placement(rng, tight, [], half, "Env"), [0.2, 0.3])
    with pytest.raises(ValueError, match="^" + re.escape(
            "Env: no room for a distractor in the distractor area [-2.0, -1.0, 0.0]...[2.0, 1.0, 0.0] outside the "
            "workspace: fewer distractors, or override the env's distractor_area() / workspace_box()") + "$"):
        looks._placement(rng, area, [area], half, "Env")


def test_distractors_are_drawn_from_their_own_streams_as_recorded() -> None:
    """Each distractor i from the stream (looks seed, kind 2, i): its file, yaw, colour, whether it is textured, the
    family and image seed; standing 1 mm above the area's floor, centred on its placement; textured ones wear the
    family on every visual link."""
    spec = Randomization(distractors=6)
    env = make(randomize=spec)
    try:
        u = env.unwrapped
        files = looks.distractor_sources(None)
        entries = u.randomization_values["distractors"]
        seed = u.randomization_values["looks_seed"]
        textured = []
        floor = u.distractor_area()[0][2]
        for i, entry in enumerate(entries):
            rng = np.random.default_rng([seed, 2, i])
            path = files[int(rng.integers(len(files)))]
            yaw = float(rng.uniform(-math.pi, math.pi))
            rgb = [float(v) for v in rng.uniform(0.05, 1.0, 3)]
            wears = bool(rng.random() < 0.5)
            family, tex_seed = FAMILIES[int(rng.integers(len(FAMILIES)))], int(rng.integers(2**31))
            body = entry[0]
            assert entry[1:3] == [-1, path] and entry[10:] == [*rgb, 0]
            assert entry[6:10] == pytest.approx(list(p.getQuaternionFromEuler((0.0, 0.0, yaw))), abs=1e-12)
            position, _ = p.getBasePositionAndOrientation(body, physicsClientId=u.client)
            assert list(position) == pytest.approx(entry[3:6], abs=1e-9)
            lo = p.getAABB(body, physicsClientId=u.client)[0]
            assert lo[2] == pytest.approx(floor + 1e-3, abs=2e-4)
            for link in looks.visual_links(u.client, body):
                rgba = [s[7] for s in p.getVisualShapeData(body, physicsClientId=u.client) if s[1] == link][0]
                assert rgba[3] == 1.0
                if not wears:
                    assert list(rgba[:3]) == pytest.approx(rgb, abs=1e-6)
            if wears:
                textured += [[body, link, "procedural", family, tex_seed] for link in looks.visual_links(u.client,
                                                                                                         body)]
        assert textured and [t for t in u.randomization_values["textures"] if t[0] in looks.distractor_ids(
            u.randomization_values)] == textured
    finally:
        env.close()


def test_distractors_are_not_textured_on_a_renderer_without_textures_and_draw_the_same() -> None:
    spec = Randomization(distractors=6)
    tiny, egl = make(randomize=spec), make(randomize=spec, renderer=runnable("egl"))
    try:
        assert tiny.unwrapped.randomization_values["distractors"] == egl.unwrapped.randomization_values["distractors"]
        assert "textures" in tiny.unwrapped.randomization_values
        assert "textures" not in egl.unwrapped.randomization_values
    finally:
        tiny.close()
        egl.close()


def test_texture_entries_are_made_again_from_what_they_record(tmp_path: Path) -> None:
    image = procedural_image("stripes", 4, (5, 7))
    assert looks.texture_of([1, -1, "procedural", "marble", 9]).pixels.tobytes() == \
        procedural_image("marble", 9, (64, 64)).tobytes() and looks.TEXTURE_SIZE == 64
    Image.fromarray(image).save(tmp_path / "s.png")
    np.testing.assert_array_equal(looks.texture_of([1, -1, "file", str(tmp_path / "s.png")]).pixels, image)
    np.testing.assert_array_equal(looks.texture_of([1, -1, "image", image.tolist()]).pixels, image)


def test_visual_links_are_each_link_with_a_visual_once_in_order() -> None:
    other = make("pixelrig/CartPole-v0")  # another world first: the links are read from the env's own
    env = make()
    try:
        u = env.unwrapped
        assert looks.visual_links(u.client, u.body_id("panda")) == [-1, 0, 1, 2, 3, 4, 5, 6, 8, 9, 10]
        assert looks.visual_links(u.client, u.body_id("cube")) == [-1]
    finally:
        env.close()
        other.close()


def test_wear_textures_puts_each_entry_on_its_body_and_link() -> None:
    from pixelrig.render import textures

    env = make()
    try:
        u = env.unwrapped
        panda = u.body_id("panda")
        entries = [[panda, 3, "procedural", "noise", 3], [u.body_id("cube"), -1, "procedural", "marble", 4]]
        looks.wear_textures(u.client, entries)
        worn = textures.worn(u.client)[1]
        for entry in entries:
            assert worn[(entry[0], entry[1])].digest == looks.texture_of(entry).digest
    finally:
        env.close()


def test_looks_drawn_only_for_what_is_randomised() -> None:
    env = make(randomize=Randomization(mass_scale=(0.9, 1.1)))
    try:
        assert not {"looks_seed", "lighting", "textures", "distractors"} & set(env.unwrapped.randomization_values)
        assert looks.draw_looks(Randomization(), 5, env.unwrapped) == {"looks_seed": 5}
        only_light = looks.draw_looks(Randomization(shadows=0.5), 5, env.unwrapped)
        assert set(only_light) == {"looks_seed", "lighting"}
    finally:
        env.close()
