"""Draw docs/tasks.png, the manual's picture of the Panda manipulation tasks: each task's default front and wrist
cameras (at 192x192) mid-task, driven there by its scripted expert: PandaLift lifting, PandaPickPlace carrying the cube
to its target, PandaStack lowering cube A onto B, PandaPegInsert pushing the peg into the hole, PandaPickObject
lifting its object. ``--robot so101`` draws docs/so101_tasks.png, the README's picture of the SO-101 tasks (their
front and wrist cameras at 256x192, 4:3 as their default 640x480): SO101Reach on its way to the point, SO101Lift
lifting, SO101PickPlace carrying the cube to its target, SO101Stack putting cube A down on B.

    .venv/bin/python examples/tasks_picture.py [--robot panda|so101] [--out docs/tasks.png] [--renderer tiny]

Needs matplotlib (the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import dataclasses

import gymnasium as gym
import numpy as np

import pixelrig  # noqa: F401  (registers the ids)
from pixelrig import PixelObs
from pixelrig.experts import EXPERTS

MOMENTS = {  # task: (seed, the expert's phase, steps into it)
    "pixelrig/PandaLift-v0": (3, "lift", 3),
    "pixelrig/PandaPickPlace-v0": (1, "carry", 3),
    "pixelrig/PandaStack-v0": (2, "lower", 2),
    "pixelrig/PandaPegInsert-v0": (4, "insert", 4),
    "pixelrig/PandaPickObject-v0": (5, "lift", 3),
}
"""When each Panda task is pictured."""

SO101_MOMENTS = {
    "pixelrig/SO101Reach-v0": (3, "start", 2),
    "pixelrig/SO101Lift-v0": (3, "lift", 3),
    "pixelrig/SO101PickPlace-v0": (1, "carry", 4),
    "pixelrig/SO101Stack-v0": (2, "place", 2),
}
"""When each SO-101 task is pictured."""

ROBOTS = {"panda": (MOMENTS, (192, 192), "docs/tasks.png", "The Panda manipulation tasks"),
          "so101": (SO101_MOMENTS, (256, 192), "docs/so101_tasks.png", "The SO-101 tasks")}
"""Each robot's moments, picture size (width, height), file and title."""


def mid_task(env_id: str, renderer: str, moments: dict = MOMENTS, size: tuple[int, int] = (192, 192)) \
        -> dict[str, np.ndarray]:
    """The front and wrist images of ``env_id`` (``size``: width, height) at its ``moments`` entry."""
    seed, phase, steps = moments[env_id]
    base = gym.make(env_id, renderer=renderer)
    cams = [dataclasses.replace(c, width=size[0], height=size[1], modalities=("rgb",))
            for c in base.unwrapped.default_cameras() if c.name in ("front", "wrist")]
    env = PixelObs(base, cams=cams)
    try:
        obs, _ = env.reset(seed=seed)
        expert = EXPERTS[env_id](env)
        for _ in range(env.spec.max_episode_steps):
            obs, *_ = env.step(expert(obs))
            if expert.phase == phase and expert.steps_in_phase >= steps:
                return {c.name: obs[f"{c.name}/rgb"] for c in cams}
        raise RuntimeError(f"{env_id}: the expert never reached {phase!r} + {steps} steps")
    finally:
        env.close()


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robot", choices=sorted(ROBOTS), default="panda")
    parser.add_argument("--out", default=None, help="default: docs/tasks.png, or docs/so101_tasks.png for so101")
    parser.add_argument("--renderer", default="tiny")
    args = parser.parse_args()
    moments, size, out, title = ROBOTS[args.robot]
    args.out = args.out or out
    width = 3.0 * size[0] / size[1]
    fig, axes = plt.subplots(2, len(moments), figsize=(width * len(moments), 6.3))
    for column, env_id in enumerate(moments):
        images = mid_task(env_id, args.renderer, moments, size)
        for row, camera in enumerate(("front", "wrist")):
            ax = axes[row, column]
            ax.imshow(images[camera])
            ax.set_title(f"{env_id.split('/')[1]}: {camera}" if row == 0 else camera, fontsize=10)
            ax.axis("off")
    fig.suptitle(f"{title} mid-task, each driven by its scripted expert ({args.renderer})", fontsize=11)
    fig.tight_layout()
    fig.savefig(args.out, dpi=72)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
