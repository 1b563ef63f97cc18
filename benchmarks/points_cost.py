"""What the ``"points"`` modality costs: PandaPush's default rig (3 cameras, 84²) rendering rgb+depth+label, against
the same rig with points added, per renderer, measured in the same run.

Both rigs render the same scene on the same client, alternately, one ``render()`` each in turn (so that a machine's
changing load affects both alike). Each repeat times ``--frames`` such pairs; the figure per rig is the median over
all repeats of the per-render time, and the overhead is the ratio of the medians. The decode-only column times
``CameraRig.decode`` on frames already drawn: what points add on the CPU, free of the renderer's noise. Usage::

    .venv/bin/python benchmarks/points_cost.py [--renderers tiny,gl] [--size 84] [--frames 20] [--repeats 15]
                                               [--modalities points] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from datetime import date

import gymnasium as gym

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig.cameras.rig import CameraRig
from pixelrig.cameras.spec import Camera
from pixelrig.tools.bench.common import machine

ENV_ID = "pixelrig/PandaPush-v0"
BASE = ("rgb", "depth", "label")


def rig(env: gym.Env, size: int, modalities: tuple[str, ...]) -> CameraRig:
    """The env's default cameras at ``size``² returning ``modalities``, bound to its backend."""
    u = env.unwrapped
    cams = [dataclasses.replace(Camera.from_dict(c), width=size, height=size, modalities=modalities)
            for c in u.default_cameras()]
    out = CameraRig(cams)
    out.bind(u.render_backend, names=u.body_names)
    return out


def measure(renderer: str, size: int, extra: tuple[str, ...], frames: int, repeats: int) -> dict:
    """Median ms per rig render without and with ``extra`` modalities, on ``renderer``."""
    env = gym.make(ENV_ID, renderer=renderer)
    try:
        env.reset(seed=0)
        env.action_space.seed(0)
        for _ in range(10):  # a scene mid-episode, not the start pose
            env.step(env.action_space.sample())
        base, more = rig(env, size, BASE), rig(env, size, (*BASE, *extra))
        base.render()
        more.render()  # warm-up: gl compiles its normal program on first use
        times: dict[str, list[float]] = {"base": [], "more": []}
        for _ in range(repeats * frames):
            for key, target in (("base", base), ("more", more)):
                start = time.perf_counter()
                target.render()
                times[key].append(time.perf_counter() - start)
        decode = {}
        for key, target in (("base", base), ("more", more)):
            drawn = target.backend.render_many(target.requests())
            spent = []
            for _ in range(repeats * frames):
                start = time.perf_counter()
                target.decode(drawn)
                spent.append(time.perf_counter() - start)
            decode[key] = statistics.median(spent)
        b, m = statistics.median(times["base"]), statistics.median(times["more"])
        return {"renderer": renderer, "size": size, "cameras": len(base.cameras), "base": "+".join(BASE),
                "added": "+".join(extra), "renders": repeats * frames, "base_ms": 1000 * b, "with_added_ms": 1000 * m,
                "base_ms_quartiles": [1000 * q for q in statistics.quantiles(times["base"], n=4)],
                "with_added_ms_quartiles": [1000 * q for q in statistics.quantiles(times["more"], n=4)],
                "overhead": m / b - 1.0, "decode_base_ms": 1000 * decode["base"],
                "decode_with_added_ms": 1000 * decode["more"],
                "decode_added_ms": 1000 * (decode["more"] - decode["base"])}
    finally:
        env.close()


def main() -> None:
    """Measure, print a table, write JSON when asked."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--renderers", default="tiny,gl")
    parser.add_argument("--size", type=int, default=84)
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--modalities", default="points", help="comma-separated modalities to add")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    extra = tuple(m for m in args.modalities.split(",") if m)
    rows = [measure(r, args.size, extra, args.frames, args.repeats) for r in args.renderers.split(",") if r]
    print(f"{ENV_ID}, default rig at {args.size}², median of {args.repeats * args.frames} renders each, "
          f"alternating; {machine()}")
    print("| renderer | rgb+depth+label ms/rig [quartiles] | +" + "+".join(extra) + " ms/rig [quartiles] | overhead | "
          "decode added ms/rig |")
    print("|---|---|---|---|---|")
    for r in rows:
        qb, qm = r["base_ms_quartiles"], r["with_added_ms_quartiles"]
        print(f"| {r['renderer']} | {r['base_ms']:.2f} [{qb[0]:.2f}..{qb[2]:.2f}] | {r['with_added_ms']:.2f} "
              f"[{qm[0]:.2f}..{qm[2]:.2f}] | {100 * r['overhead']:+.1f}% | {r['decode_added_ms']:.3f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": date.today().isoformat(), "machine": machine(), "env": ENV_ID, "rows": rows}, f,
                      indent=2)


if __name__ == "__main__":
    main()
