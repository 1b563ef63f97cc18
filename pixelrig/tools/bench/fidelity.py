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
