"""How alike two renderings of the same states are: label pixels equal, depth median |diff| and RGB mean |diff|
(used for level of detail against "full" and for one renderer against another)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from pixelrig.wrappers.pixel_obs import PixelObs


def agreement(reference: Sequence[Mapping[str, np.ndarray]], other: Sequence[Mapping[str, np.ndarray]]
              ) -> dict[str, float]:
    """Compare two sequences of rig observations (same keys, same states).

    Returns:
        ``label``: fraction of label pixels equal (mean over frames and cameras); ``depth``: median |diff| in
        metres over every depth pixel; ``depth_p99``: the 99th percentile of |diff| in metres over the pixels
        both label as the same body (every pixel where a camera has no labels): a part of the scene drawn in the
        wrong place shows there, however small against the whole image; ``rgb``: mean |diff| in levels (0..255),
        averaged over frames and cameras.
    """
    label, depth, same_body, rgb = [], [], [], []
    for a, b in zip(reference, other, strict=True):
        for key in a:
            if key.endswith("/label"):
                label.append(np.mean(a[key] == b[key]))
            elif key.endswith("/depth"):
                diff = np.abs(a[key].astype(np.float64) - b[key])
                depth.append(diff.ravel())
                labels = key.removesuffix("/depth") + "/label"
                same_body.append(diff[(a[labels] == b[labels]) & (a[labels] >= 0)] if labels in a else diff.ravel())
            elif key.endswith("/rgb"):
                rgb.append(np.abs(a[key].astype(int) - b[key]).mean())
    return {"label": float(np.mean(label)), "depth": float(np.median(np.concatenate(depth))),
            "depth_p99": float(np.percentile(np.concatenate(same_body), 99)), "rgb": float(np.mean(rgb))}


def rig_frames(env_id: str, steps: int = 15, seed: int = 1, **kwargs: Any) -> list[dict[str, np.ndarray]]:
    """The env's default rig at reset and after ``steps`` seeded random actions (pixels only)."""
    env = PixelObs(gym.make(env_id, **kwargs), pixels_only=True)
    try:
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        return [obs] + [env.step(env.action_space.sample())[0] for _ in range(steps)]
    finally:
        env.close()


def detail_fidelity(env_id: str, detail: str, steps: int = 15) -> dict[str, float]:
    """``detail`` against "full" over the env's default cameras, at reset and after ``steps`` random steps."""
    return agreement(rig_frames(env_id, steps, visual_detail="full"), rig_frames(env_id, steps, visual_detail=detail))


RENDERER_ENVS = ("pixelrig/CartPole-v0", "pixelrig/PandaReach-v0", "pixelrig/PandaPush-v0", "pixelrig/HalfCheetah-v0",
                 "pixelrig/Hopper-v0", "pixelrig/Walker2d-v0", "pixelrig/Ant-v0")


def renderer_fidelity(renderer: str = "gl", env_ids: Sequence[str] = RENDERER_ENVS, steps: int = 10
                      ) -> list[dict[str, Any]]:
    """``renderer`` against TinyRenderer (the reference) on each env's default rig, at reset and over ``steps``
    seeded random steps (the same states: physics does not depend on the renderer)."""
    return [{"env": env_id, "renderer": renderer,
             **agreement(rig_frames(env_id, steps, renderer="tiny"), rig_frames(env_id, steps, renderer=renderer))}
            for env_id in env_ids]


def format_fidelity(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of :func:`renderer_fidelity`'s rows."""
    lines = ["| env | label pixels equal | depth median \\|diff\\| | RGB mean \\|diff\\| |", "|---|---|---|---|"]
    lines += [f"| {r['env']} | {100 * r['label']:.2f}% | {1000 * r['depth']:.4f} mm | {r['rgb']:.2f} levels |"
              for r in rows]
    return "\n".join(lines)


SHADOW_LEVELS = 3
"""A pixel is *shadowed* when its RGB (largest channel difference) is more than this many levels darker than the same
renderer's image of the same state under the same light without shadows: a shadow takes 20% of the direct term, 5 to
20 levels on the bundled scenes' surfaces, while rounding moves no pixel by more than 1."""


def shadowed(unshadowed: np.ndarray, shadowed_rgb: np.ndarray) -> np.ndarray:
    """(H, W) bool: the pixels more than :data:`SHADOW_LEVELS` darker with shadows than without."""
    return (unshadowed.astype(np.int16) - shadowed_rgb).max(axis=-1) > SHADOW_LEVELS


def looks_fidelity(env_id: str, looks: Mapping[str, Any], steps: int = 3, seed: int = 0, **kwargs: Any
                   ) -> list[dict[str, Any]]:
    """gl against TinyRenderer under each of ``looks`` ({name: Lighting}) on the env's default rig: the same states
    (reset and ``steps`` seeded random steps, both renderers drawing one client), :func:`agreement`'s figures, and for
    lights that cast shadows the shadowed pixels' agreement: of the pixels either renderer shadows
    (:func:`shadowed`), the fraction both shadow (intersection over union; 1.0 where neither shadows any).
    ``kwargs`` go to ``gym.make`` (e.g. ``randomize=Randomization(textures=...)``)."""
    from dataclasses import replace

    from pixelrig.cameras.rig import CameraRig
    from pixelrig.render.gl import GlBackend

    env = gym.make(env_id, renderer="tiny", **kwargs)
    try:
        env.reset(seed=seed)
        env.action_space.seed(seed)
        base = env.unwrapped
        gl = GlBackend(base.client)
        try:
            rigs = []
            for backend in (base.render_backend, gl):
                rig = CameraRig(base.default_cameras())
                rig.bind(backend, names=base.body_names)
                rigs.append((rig, backend))
            frames: dict[str, tuple[list, list]] = {name: ([], []) for name in looks}
            counts = {name: [0, 0] for name in looks}  # shadowed by both, by either
            for _ in range(steps + 1):
                for name, light in looks.items():
                    drawn, masks = [], []
                    for rig, backend in rigs:
                        if light.shadows:
                            backend.set_lighting(replace(light, shadows=False))
                            plain = rig.render()
                        backend.set_lighting(light)
                        drawn.append(rig.render())
                        if light.shadows:
                            masks.append([shadowed(plain[f"{c.name}/rgb"], drawn[-1][f"{c.name}/rgb"])
                                          for c in rig.cameras])
                    for side, images in zip(frames[name], drawn, strict=True):
                        side.append(images)
                    for a, b in zip(*masks, strict=True) if masks else ():
                        counts[name][0] += int((a & b).sum())
                        counts[name][1] += int((a | b).sum())
                env.step(env.action_space.sample())
        finally:
            gl.close()
    finally:
        env.close()
    return [{"env": env_id, "look": name, **agreement(*frames[name]),
             "shadowed_px": counts[name][1],
             "shadow_agreement": counts[name][0] / counts[name][1] if counts[name][1] else 1.0}
            for name in looks]


def format_looks_fidelity(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of :func:`looks_fidelity`'s rows."""
    lines = ["| env | look | label pixels equal | depth median \\|diff\\| | RGB mean \\|diff\\| | shadowed pixels "
             "agreeing |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['env']} | {r['look']} | {100 * r['label']:.2f}% | {1000 * r['depth']:.4f} mm | "
              f"{r['rgb']:.2f} levels | "
              + (f"{100 * r['shadow_agreement']:.1f}% of {r['shadowed_px']}" if r["shadowed_px"] else "-") + " |"
              for r in rows]
    return "\n".join(lines)
