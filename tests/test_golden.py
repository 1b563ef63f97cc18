"""Golden images per backend (tolerances in golden/manifest.json), failure artefacts, and --update."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from pixelrig import golden

from .conftest import egl_or_skip


@pytest.mark.parametrize("scene", list(golden.SCENES))
def test_golden_scene(scene: str, backend_name: str) -> None:
    failures = golden.check_scene(scene, backend_name)
    assert not failures, "\n".join(failures)


def test_every_manifest_tolerance_is_justified() -> None:
    manifest = golden.load_manifest()
    for backend, mods in manifest["tolerances"].items():
        assert set(mods) == {"rgb", "depth", "label"}, backend
        for mod, tol in mods.items():
            assert len(tol["why"]) > 40, f"{backend}/{mod} needs a real justification"


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


def test_egl_goldens_exist_for_every_scene() -> None:
    egl_or_skip()
    for scene in golden.SCENES:
        assert list((golden.GOLDEN_DIR / "egl").glob(f"{scene}_*.png")), scene
