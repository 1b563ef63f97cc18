"""Golden images per backend (tolerances in golden/manifest.json), failure artefacts, and --update."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from . import golden


@pytest.mark.parametrize("scene", list(golden.SCENES))
def test_golden_scene(scene: str, backend_name: str) -> None:
    failures = golden.check_scene(scene, backend_name)
    assert not failures, "\n".join(failures)


def test_a_golden_image_the_scene_no_longer_draws_fails_it(tmp_path) -> None:
    """A scene that stops drawing a camera or a modality fails its check (an image never drawn is never compared),
    naming the golden file; the goldens of a scene whose name extends it (``pandapush_full``) are not its own."""
    import shutil

    (tmp_path / "tiny").mkdir()
    shutil.copy(golden.GOLDEN_DIR / "manifest.json", tmp_path)
    for path in golden.scene_files("cartpole", "tiny"):
        shutil.copy(path, tmp_path / "tiny")
    assert golden.check_scene("cartpole", "tiny", tmp_path) == []
    shutil.copy(golden.GOLDEN_DIR / "tiny" / "cartpole_front_rgb.png", tmp_path / "tiny" / "cartpole_top_rgb.png")
    failures = golden.check_scene("cartpole", "tiny", tmp_path)
    assert len(failures) == 1 and "cartpole_top_rgb.png: not drawn any more" in failures[0], failures
    own = {p.name for p in golden.scene_files("pandapush", "tiny")}
    assert len(own) == 9 and not any(n.startswith(("pandapush_full_", "pandapush_looks_")) for n in own), own


RENDER_GOLDEN = golden.GOLDEN_DIR / "render" / "cartpole_tiny_rgb.png"
"""``render()``'s frame of CartPole (render_mode="rgb_array", TinyRenderer) after ``reset(seed=0)``."""


def cartpole_render_frame() -> np.ndarray:
    import gymnasium as gym

    env = gym.make("pixelrig/CartPole-v0", render_mode="rgb_array", renderer="tiny")
    try:
        env.reset(seed=0)
        return env.render()
    finally:
        env.close()


def test_render_mode_rgb_array_draws_the_golden_frame() -> None:
    """``render()`` draws the task's own view (not the observation's cameras): a 320x240 frame from CartPole's render
    camera, as recorded, within the tiny backend's RGB tolerance (``python -m tests.test_render_golden`` records it
    again)."""
    frame = cartpole_render_frame()
    assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8
    tol = golden.load_manifest()["tolerances"]["tiny"]["rgb"]
    cmp = golden.compare("rgb", golden.decode("rgb", Image.open(RENDER_GOLDEN)), frame, tol)
    assert cmp.ok, cmp.describe()


@pytest.mark.parametrize("backend", ["tiny", "egl"])
def test_every_tolerance_rejects_a_one_pixel_shift(backend: str) -> None:
    """A tolerance absorbs rasterisation differences at edges, not a changed scene: every golden image, moved by
    one pixel (the camera turned by about 0.7 degrees) in any direction, must fail its modality's tolerance,
    while the image itself passes."""
    tolerances = golden.load_manifest()["tolerances"][backend]
    assert set(tolerances) == {"rgb", "depth", "label"}
    files = sorted((golden.GOLDEN_DIR / backend).glob("*.png"))
    assert files
    passed = []
    for path in files:
        modality = path.stem.rsplit("_", 1)[1]
        tol = tolerances[modality]
        assert tol["why"].strip(), f"{backend}/{modality}: a tolerance states its reason"
        expected = golden.decode(modality, Image.open(path))
        assert golden.compare(modality, expected, expected.copy(), tol).ok
        for axis in (0, 1):
            for shift in (-1, 1):
                cmp = golden.compare(modality, expected, np.roll(expected, shift, axis=axis), tol)
                if cmp.ok:
                    passed.append(f"{path.name} shifted {shift:+d} px along axis {axis}: {cmp.describe()}")
    assert not passed, f"{backend} tolerances let a one-pixel shift pass:\n" + "\n".join(passed)


def test_encodings_round_trip_exactly() -> None:
    label = np.array([[-1, 0], [3, 200]], np.int32)[..., None]
    np.testing.assert_array_equal(golden.decode("label", golden.encode("label", label)), label)
    depth = np.array([[0.0015, 2.5], [9.999, 65.0]], np.float32)[..., None]
    back = golden.decode("depth", golden.encode("depth", depth))
    assert np.abs(back - depth).max() <= 0.0005 + 1e-9


def test_mismatch_writes_expected_actual_diff(tmp_path: Path) -> None:
    root = tmp_path / "golden"
    shutil.copytree(golden.GOLDEN_DIR, root)
    victim = root / "tiny" / "primitives_top_rgb.png"
    img = np.asarray(Image.open(victim)).copy()
    img[10:30, 10:30] = 255 - img[10:30, 10:30]  # a visible change over 400 of 4096 pixels
    Image.fromarray(img).save(victim)
    failures = golden.check_scene("primitives", "tiny", root)
    assert len(failures) == 1 and "primitives_top_rgb.png" in failures[0], failures
    for tag in ("expected", "actual", "diff"):
        out = golden.FAILURE_DIR / "tiny" / f"primitives_top_rgb_{tag}.png"
        assert out.exists(), out
    diff = np.asarray(Image.open(golden.FAILURE_DIR / "tiny" / "primitives_top_rgb_diff.png"))
    assert diff[10:30, 10:30].mean() > 100 and diff[40:, 40:].max() == 0


def test_update_reports_new_then_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "golden"
    root.mkdir()
    shutil.copy(golden.GOLDEN_DIR / "manifest.json", root)
    first = golden.update_all("tiny", root, scenes=["primitives"])
    assert first and all(line.endswith(": new") for line in first)
    second = golden.update_all("tiny", root, scenes=["primitives"])
    assert all(line.endswith(": unchanged") for line in second)
    assert len(first) == 6  # 2 cameras x 3 modalities


@pytest.mark.parametrize("backend", ["tiny", "egl"])
def test_golden_files_are_exactly_what_the_scenes_render(backend: str) -> None:
    """Every golden file is one that test_golden_scene compares (none missing, none left over), and EGL's are
    EGL renders, not copies of TinyRenderer's (EGL's sky is (0.7, 0.7, 0.8), TinyRenderer's white)."""
    from pixelrig import PixelObs

    expected = set()
    for scene, make in golden.SCENES.items():
        env = PixelObs(make("tiny"), cams=golden.scene_cams(scene), pixels_only=True)  # keys from the specs alone
        try:
            expected |= {golden.golden_file(backend, scene, key).name for key in env.observation_space.spaces}
        finally:
            env.close()
    assert {p.name for p in (golden.GOLDEN_DIR / backend).glob("*.png")} == expected
    if backend == "egl":
        rgb = [p.name for p in (golden.GOLDEN_DIR / "egl").glob("*_rgb.png")]
        for name in rgb:
            egl = np.asarray(Image.open(golden.GOLDEN_DIR / "egl" / name))[..., :3].astype(int)
            tiny = np.asarray(Image.open(golden.GOLDEN_DIR / "tiny" / name))[..., :3].astype(int)
            assert np.abs(egl - tiny).max() > 24, f"egl/{name} is TinyRenderer's image"
        sky = np.asarray(Image.open(golden.GOLDEN_DIR / "egl" / "primitives_oblique_rgb.png"))[0, 0, :3]
        np.testing.assert_allclose(sky, (178, 178, 204), atol=2)  # the top-left corner shows the sky


if __name__ == "__main__":
    import pixelrig

    pixelrig.register_envs()
    golden.encode("rgb", cartpole_render_frame()).save(RENDER_GOLDEN)
