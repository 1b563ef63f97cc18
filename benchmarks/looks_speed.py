"""What looks cost to draw: PandaPush's default rig (front, side, wrist at 84², rgb+depth+label) and one 128² camera,
drawn under today's look beside a non-default light, textures on the table, ground and cube, both, and shadows, per
renderer, in the same run.

Each look gets an env of its own (same seed, same state: looks never move a body) and the rigs are drawn in turn, one
draw each in a shuffled order, so that a machine's changing load affects them alike. The figure is the median over
``--repeats`` of the mean draw time over ``--draws`` draws; the factor is against today's look in the same run. The
issue's bounds: light and textures <= 1.2x on gl, shadows <= 1.6x. Usage::

    .venv/bin/python benchmarks/looks_speed.py [--renderers tiny,gl] [--draws 40] [--repeats 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import time
from datetime import date

import gymnasium as gym

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig import Camera, Lighting, Randomization
from pixelrig.cameras.rig import CameraRig
from pixelrig.tools.bench.common import machine

ENV_ID = "pixelrig/PandaPush-v0"
LIGHT = Lighting(direction=(0.6, -0.5, 0.8), color=(1.0, 0.85, 0.7), ambient=0.5, diffuse=0.45, specular=0.1)
TEXTURES = Randomization(textures={"table": "procedural", "ground": "procedural", "cube": "procedural"})
LOOKS: dict[str, dict] = {
    "today's look": {},
    "light": {"lighting": LIGHT},
    "textures": {"randomize": TEXTURES},
    "light + textures": {"lighting": LIGHT, "randomize": TEXTURES},
    "shadows": {"lighting": dataclasses.replace(LIGHT, shadows=True)},
    "light + textures + shadows": {"lighting": dataclasses.replace(LIGHT, shadows=True), "randomize": TEXTURES},
}
"""Each look's env kwargs."""


def rigs(env: gym.Env) -> dict[str, CameraRig]:
    """The default 3-camera rig at 84² and a 128² front camera, bound to the env's backend."""
    base = env.unwrapped
    three = [dataclasses.replace(Camera.from_dict(c), width=84, height=84, modalities=("rgb", "depth", "label"))
             for c in base.default_cameras()]
    out = {"3 cameras 84²": CameraRig(three), "1 camera 128²": CameraRig([dataclasses.replace(three[0], width=128,
                                                                                               height=128)])}
    for rig in out.values():
        rig.bind(base.render_backend, names=base.body_names)
    return out


def measure(renderer: str, draws: int, repeats: int) -> list[dict]:
    """Per rig and look: the median ms per draw and its factor against today's look."""
    envs = {name: gym.make(ENV_ID, renderer=renderer, **kwargs) for name, kwargs in LOOKS.items()}
    try:
        bound = {}
        for name, env in envs.items():
            env.reset(seed=0)
            bound[name] = rigs(env)
        rows = []
        rng = random.Random(0)
        for rig_name in bound["today's look"]:
            means: dict[str, list[float]] = {name: [] for name in envs}
            for name in envs:
                bound[name][rig_name].render()  # warm: shaders, texture upload
            order = list(envs)
            for _ in range(repeats):
                spent = dict.fromkeys(envs, 0.0)
                for _ in range(draws):
                    rng.shuffle(order)  # no look always draws first (or right after another)
                    for name in order:
                        start = time.perf_counter()
                        bound[name][rig_name].render()
                        spent[name] += time.perf_counter() - start
                for name in envs:
                    means[name].append(spent[name] / draws)
            today = statistics.median(means["today's look"])
            rows += [{"renderer": renderer, "rig": rig_name, "look": name, "ms": 1000 * statistics.median(m),
                      "factor": statistics.median(m) / today} for name, m in means.items()]
        return rows
    finally:
        for env in envs.values():
            env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--renderers", default="tiny,gl")
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args()
    rows = [row for r in args.renderers.split(",") for row in measure(r, args.draws, args.repeats)]
    print(f"{ENV_ID}, {date.today()}, {machine()}")
    print("| renderer | rig | look | ms per draw | against today's look |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['renderer']} | {r['rig']} | {r['look']} | {r['ms']:.2f} | {r['factor']:.2f}x |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": str(date.today()), "machine": machine(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
