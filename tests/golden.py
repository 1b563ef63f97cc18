"""Golden images, a test-suite concern: render fixed scenes per backend, compare with the files in ``golden/``,
regenerate them (``make golden``, i.e. ``python -m tests.golden --update``; the repository holds the goldens).

Files: ``golden/<backend>/<scene>_<camera>_<modality>.png`` -- rgb as RGB PNG, depth as 16-bit PNG in
millimetres, labels as an indexed (palette) PNG whose index is body id + 1 (0 = background), exact and viewable.
Tolerances, each with its justification, live in ``golden/manifest.json``. A mismatch writes
expected/actual/diff PNGs under ``build/golden-failures/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from PIL import Image

from pixelrig.display.colors import colorize_depth, label_palette
from pixelrig.render.choice import probe_egl, probe_gl

REPO = Path(__file__).resolve().parents[1]
GOLDEN_DIR = REPO / "golden"
FAILURE_DIR = REPO / "build" / "golden-failures"


def _primitives(renderer: str) -> gym.Env:
    from pixelrig.envs.scenes import PrimitivesEnv

    return PrimitivesEnv(renderer=renderer)


def _registered(env_id: str, **kwargs: Any) -> Callable[[str], gym.Env]:
    def make(renderer: str) -> gym.Env:
        return gym.make(env_id, renderer=renderer, **kwargs)

    return make


def _looks(renderer: str) -> gym.Env:
    """PandaPush lit from the front left in a warm light, casting shadows, its table, ground and cube textured (seeded
    procedural textures); pybullet's EGL plugin draws the light's direction only and no texture set at run time, so
    its golden has that light alone."""
    from pixelrig.envs.randomization import Randomization
    from pixelrig.render.lighting import Lighting

    light = Lighting(direction=(0.6, -0.5, 0.8))
    if renderer != "egl":
        light = Lighting(direction=(0.6, -0.5, 0.8), color=(1.0, 0.85, 0.7), ambient=0.5, diffuse=0.45, specular=0.1,
                         shadows=True)
    textures = Randomization(textures={"table": "procedural:marble", "ground": "procedural:checkers",
                                       "cube": "procedural:stripes"})
    return gym.make("pixelrig/PandaPush-v0", renderer=renderer, lighting=light,
                    randomize=None if renderer == "egl" else textures)


SCENES: dict[str, Callable[[str], gym.Env]] = {
    "primitives": _primitives,
    "cartpole": _registered("pixelrig/CartPole-v0"),
    "ant": _registered("pixelrig/Ant-v0"),  # the locomotion tasks' default camera, turned for the Ant
    "pandapush": _registered("pixelrig/PandaPush-v0"),  # at the default visual_detail ("simplified")
    "pandapush_full": _registered("pixelrig/PandaPush-v0", visual_detail="full"),
    "pandalift": _registered("pixelrig/PandaLift-v0"),
    "pandapickplace": _registered("pixelrig/PandaPickPlace-v0"),
    "pandastack": _registered("pixelrig/PandaStack-v0"),
    "pandapeginsert": _registered("pixelrig/PandaPegInsert-v0"),
    "pandapickobject": _registered("pixelrig/PandaPickObject-v0"),
    "pandapush_looks": _looks,  # lit, shadowed, textured
    "so101reach": _registered("pixelrig/SO101Reach-v0"),
    "so101lift": _registered("pixelrig/SO101Lift-v0"),
    "so101pickplace": _registered("pixelrig/SO101PickPlace-v0"),
    "so101stack": _registered("pixelrig/SO101Stack-v0"),
}
"""Golden scenes: each is an env rendered with its default cameras right after ``reset(seed=0)`` (or with the rig
file :data:`SCENE_RIGS` names)."""

SO101_TRAIN_RIG = REPO / "examples" / "rigs" / "so101_train.toml"
"""The SO-101 tasks' default rig at 128x96 (their default is 640x480, as LeRobot records the real arm)."""

SCENE_RIGS: dict[str, Path] = {"so101reach": SO101_TRAIN_RIG, "so101lift": SO101_TRAIN_RIG,
                               "so101pickplace": SO101_TRAIN_RIG, "so101stack": SO101_TRAIN_RIG}
"""Scenes drawn with a rig file's cameras instead of their env's default rig."""


def available_backends() -> list[str]:
    """Backends that can render here: always 'tiny', 'egl' and 'gl' when their probe succeeds."""
    return ["tiny"] + [kind for kind, probe in (("egl", probe_egl), ("gl", probe_gl)) if probe().ok]


def scene_cams(scene: str) -> tuple | None:
    """The cameras a scene is drawn with: its rig file's (:data:`SCENE_RIGS`), or None for its env's default rig."""
    from pixelrig.cameras.rigfile import load_rig

    return load_rig(SCENE_RIGS[scene]) if scene in SCENE_RIGS else None


def render_scene(scene: str, backend: str) -> tuple[dict[str, np.ndarray], dict[str, tuple[float, float]]]:
    """Render a golden scene: ``({"<camera>/<modality>": array}, {camera: (near, far)})``. Closes its env."""
    from pixelrig.wrappers.pixel_obs import PixelObs

    env = PixelObs(SCENES[scene](backend), cams=scene_cams(scene), pixels_only=True)
    try:
        obs, _ = env.reset(seed=0)
        return obs, {cam.name: (cam.near, cam.far) for cam in env.rig.cameras}
    finally:
        env.close()


def golden_file(backend: str, scene: str, key: str, root: Path = GOLDEN_DIR) -> Path:
    """Path of a golden image: ``<root>/<backend>/<scene>_<camera>_<modality>.png``."""
    camera, modality = key.split("/")
    return root / backend / f"{scene}_{camera}_{modality}.png"


def encode(modality: str, array: np.ndarray) -> Image.Image:
    """The PNG form of an observation array (see module docstring)."""
    if modality == "rgb":
        return Image.fromarray(np.asarray(array, np.uint8))
    if modality == "depth":
        mm = np.clip(np.rint(np.asarray(array, np.float64)[..., 0] * 1000.0), 0, 65535).astype(np.uint16)
        return Image.fromarray(mm)
    label = np.asarray(array)[..., 0].astype(np.int64) + 1
    if label.max() > 255:
        raise ValueError("indexed label PNGs hold body ids up to 254")
    img = Image.frombytes("P", (label.shape[1], label.shape[0]), label.astype(np.uint8).tobytes())
    palette = np.zeros((256, 3), np.uint8)
    palette[1:] = label_palette(255)
    img.putpalette(palette.ravel().tolist())
    return img


def decode(modality: str, img: Image.Image) -> np.ndarray:
    """Inverse of :func:`encode`: rgb uint8 (H,W,3); depth float64 metres (H,W,1); label int32 (H,W,1)."""
    a = np.asarray(img)
    if modality == "rgb":
        return a[..., :3].astype(np.uint8)
    if modality == "depth":
        return (a.astype(np.float64) / 1000.0)[..., None]
    return (a.astype(np.int32) - 1)[..., None]


def load_manifest(root: Path = GOLDEN_DIR) -> dict[str, Any]:
    """The tolerance manifest."""
    return json.loads((root / "manifest.json").read_text())


@dataclass(frozen=True)
class Comparison:
    """How an actual image differs from its golden one."""

    ok: bool
    fraction: float  # of pixels beyond the pixel threshold
    mean_abs: float  # mean absolute difference (rgb levels, depth mm, label: fraction differing)
    diff: np.ndarray  # (H, W) per-pixel difference magnitude

    def describe(self) -> str:
        return f"{self.fraction:.4%} of pixels beyond threshold, mean abs diff {self.mean_abs:.3f}"


def compare(modality: str, expected: np.ndarray, actual: np.ndarray, tol: dict[str, float]) -> Comparison:
    """Compare two images of one modality (as :func:`decode` returns them) under a manifest tolerance."""
    if expected.shape != actual.shape:
        return Comparison(False, 1.0, float("inf"), np.zeros(expected.shape[:2]))
    if modality == "rgb":
        diff = np.abs(expected.astype(np.int16) - actual.astype(np.int16)).max(axis=-1).astype(np.float64)
    elif modality == "depth":
        diff = np.abs(expected[..., 0] - actual[..., 0]) * 1000.0  # mm
    else:
        diff = (expected[..., 0] != actual[..., 0]).astype(np.float64)
    fraction = float(np.mean(diff > tol["pixel_threshold"]))
    mean_abs = float(np.mean(diff))
    ok = fraction <= tol["max_fraction"] and mean_abs <= tol["max_mean_abs"]
    return Comparison(ok, fraction, mean_abs, diff)


def _normalise(modality: str, array: np.ndarray) -> np.ndarray:
    """An observation as it reads back from its PNG (depth rounded to mm)."""
    return decode(modality, encode(modality, array))


def _write_failure(backend: str, scene: str, key: str, expected: np.ndarray, actual: np.ndarray,
                   cmp: Comparison, far: float) -> Path:
    modality = key.split("/")[1]
    out = FAILURE_DIR / backend
    out.mkdir(parents=True, exist_ok=True)
    stem = golden_file(backend, scene, key, out).stem
    for tag, img in (("expected", expected), ("actual", actual)):
        if modality == "depth":
            Image.fromarray(colorize_depth(img, background=far)).save(out / f"{stem}_{tag}.png")
        else:
            encode(modality, img).save(out / f"{stem}_{tag}.png")
    scale = 255.0 / max(float(cmp.diff.max()), 1e-9)
    Image.fromarray(np.clip(cmp.diff * scale, 0, 255).astype(np.uint8)).save(out / f"{stem}_diff.png")
    return out / f"{stem}_diff.png"


def scene_files(scene: str, backend: str, root: Path = GOLDEN_DIR) -> list[Path]:
    """The golden files of one scene for one backend (not those of the scenes whose names extend it, as
    ``pandapush_full`` extends ``pandapush``)."""
    longer = [other for other in SCENES if other.startswith(f"{scene}_")]
    return [path for path in sorted((root / backend).glob(f"{scene}_*.png"))
            if not any(path.name.startswith(f"{other}_") for other in longer)]


def check_scene(scene: str, backend: str, root: Path = GOLDEN_DIR) -> list[str]:
    """Render one scene and compare every image with its golden file; returns one line per mismatch, and one per
    golden file of the scene the render no longer draws (a camera or modality gone)."""
    tolerances = load_manifest(root)["tolerances"][backend]
    frames, ranges = render_scene(scene, backend)
    drawn = {golden_file(backend, scene, key, root) for key in frames}
    failures = [f"{path}: not drawn any more (a camera or a modality of the scene is gone; `make golden` if meant)"
                for path in sorted(set(scene_files(scene, backend, root)) - drawn)]
    for key, actual in frames.items():
        modality = key.split("/")[1]
        path = golden_file(backend, scene, key, root)
        if not path.exists():
            failures.append(f"{path}: missing (run `make golden`)")
            continue
        expected = decode(modality, Image.open(path))
        cmp = compare(modality, expected, _normalise(modality, actual), tolerances[modality])
        if not cmp.ok:
            diff = _write_failure(backend, scene, key, expected, _normalise(modality, actual), cmp,
                                  ranges[key.split("/")[0]][1])
            failures.append(f"{path}: {cmp.describe()} (tolerance {tolerances[modality]}); "
                            f"expected/actual/diff written next to {diff}")
    return failures


def _backends(backend: str) -> list[str]:
    return available_backends() if backend == "all" else [backend]


def check_all(backend: str = "all") -> list[str]:
    """Check every scene for ``backend`` ('tiny', 'egl' or 'all' available); returns mismatch lines."""
    return [line for b in _backends(backend) for scene in SCENES for line in check_scene(scene, b)]


def update_all(backend: str = "all", root: Path = GOLDEN_DIR, scenes: Iterable[str] | None = None) -> list[str]:
    """Regenerate the golden images; returns a line per file saying whether it is new, changed or the same."""
    lines = []
    for b in _backends(backend):
        tolerances = load_manifest(root)["tolerances"][b]
        for scene in scenes or SCENES:
            frames, _ = render_scene(scene, b)
            for key, actual in frames.items():
                modality = key.split("/")[1]
                path = golden_file(b, scene, key, root)
                new = _normalise(modality, actual)
                if path.exists():
                    cmp = compare(modality, decode(modality, Image.open(path)), new, tolerances[modality])
                    status = "unchanged" if cmp.mean_abs == 0 else f"changed: {cmp.describe()}"
                else:
                    status = "new"
                path.parent.mkdir(parents=True, exist_ok=True)
                encode(modality, actual).save(path)
                lines.append(f"{path.relative_to(root)}: {status}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.golden [--update] [--backend tiny|egl|all]`` from the repository (``make golden``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__)
    parser.add_argument("--update", action="store_true", help="regenerate the golden images, print what changed")
    parser.add_argument("--backend", choices=("tiny", "egl", "gl", "all"), default="all")
    args = parser.parse_args(argv)
    if args.update:
        for line in update_all(args.backend):
            print(line)
        return 0
    failures = check_all(args.backend)
    print("\n".join(failures + ["golden images: " + ("all match" if not failures else f"{len(failures)} mismatches")]))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
