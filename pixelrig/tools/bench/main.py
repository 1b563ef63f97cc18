"""``pixelrig bench``: every benchmark section in one run, printed as docs/benchmark.md's tables and written to
``docs/bench.json`` (the file those tables and the README's headline come from) with the matrix plot beside it.

Each section runs in a fresh process of its own (``--sections`` with one section runs it in this one): a section
measures what a user's process would see, not what the sections before it left behind (pybullet clients, an EGL
plugin, GL scenes and caches).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from datetime import date
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pixelrig.render.choice import draws_here
from pixelrig.render.registry import BACKENDS
from pixelrig.tools.bench.batched import format_batched
from pixelrig.tools.bench.batched import measure as batched_measure
from pixelrig.tools.bench.common import cell, machine
from pixelrig.tools.bench.fidelity import format_fidelity, renderer_fidelity
from pixelrig.tools.bench.lod import format_lod, lod_report
from pixelrig.tools.bench.rig import (
    SCENES,
    add_render_comparison,
    format_matrix,
    format_table,
    measure,
    plot_matrix,
    rig_matrix,
    soak,
)

SECTIONS = ("headline", "matrix", "renderers", "batched", "render", "lod", "addrender", "snapshot", "vector",
            "datasets", "rllib", "soak")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pixelrig bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma list of " + ",".join(SECTIONS))
    parser.add_argument("--scenes", default="pandapush,cartpole", help="headline scenes: " + ",".join(SCENES))
    parser.add_argument("--renderers", default=",".join(BACKENDS),
                        help="comma list (default: every backend); those that cannot draw here are skipped")
    parser.add_argument("--size", type=int, default=84, help="headline image size")
    parser.add_argument("--cams", type=int, default=3, help="headline camera count")
    parser.add_argument("--frames", type=int, default=20, help="rig frames per timing sample")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="fewer frames, repeats and matrix sizes")
    parser.add_argument("--json", default="docs/bench.json", help="write the results here (the docs' source)")
    parser.add_argument("--plot", default="docs/bench_fps.png", help="write the matrix plot here")
    args = parser.parse_args(argv)
    sections = args.sections.split(",")
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {SECTIONS}")
    if len(sections) > 1:
        return _sections_apart(args, sections)
    if args.quick:
        args.frames, args.repeats = 5, 2
    renderers = [r for r in args.renderers.split(",") if draws_here(r)]
    report: dict[str, Any] = {"date": date.today().isoformat(), "machine": machine(),
                              "pybullet": version("pybullet"), "pixelrig": version("pixelrig")}
    print(f"pixelrig bench, {report['date']}, {report['machine']}")
    if "headline" in sections:
        report["headline"] = [measure(scene, r, args.size, args.cams, frames=args.frames, repeats=args.repeats)
                              for scene in args.scenes.split(",") for r in renderers]
        print("\n## rig vs raw pybullet, and PixelObs steps\n" + format_table(report["headline"]))
    if "matrix" in sections:
        sizes = [64, 128] if args.quick else [64, 84, 128, 256]
        report["matrix"] = rig_matrix(renderers, sizes, [1, 3], max(3, args.frames // 2), args.repeats)
        print("\n## rig matrix (PandaPush-v0)\n" + format_matrix(report["matrix"]))
        plot_matrix(report["matrix"], args.plot)
        print(f"(plot: {args.plot})")
    if "renderers" in sections and "gl" in renderers:
        report["renderers"] = renderer_fidelity("gl", steps=3 if args.quick else 10)
        print("\n## gl against TinyRenderer (default rigs, reset + random steps)\n"
              + format_fidelity(report["renderers"]))
    if "batched" in sections and "gl" in renderers:
        report["batched"] = batched_measure(counts=(1, 4) if args.quick else (1, 4, 16, 64),
                                            steps=max(5, args.frames), repeats=args.repeats)
        print("\n## batched gl vector env vs TinyRenderer and the physics-only ceiling (PandaPush-v0)\n"
              + format_batched(report["batched"]))
    if "render" in sections and {"tiny", "gl"} <= set(renderers):
        from pixelrig.tools.bench.render_cost import format_render_cost
        from pixelrig.tools.bench.render_cost import measure as render_cost_measure

        quick = args.quick  # every manipulation task with 16 batched envs; quick: two tasks with 4
        report["render"] = render_cost_measure(["pixelrig/PandaReach-v0", "pixelrig/PandaPush-v0"] if quick else None,
                                               steps=5 if quick else max(5, args.frames),
                                               repeats=1 if quick else min(3, args.repeats),
                                               num_envs=4 if quick else 16)
        print("\n## rendering against physics (manipulation tasks, default rigs; tiny, gl, gl batched)\n"
              + format_render_cost(report["render"]))
    if "lod" in sections:
        report["lod"] = lod_report(renderers, [84] if args.quick else [84, 128], frames=max(5, args.frames // 2),
                                   repeats=args.repeats)
        print("\n## level of detail (PandaPush-v0, 3 cameras, rgb+depth+label)\n" + format_lod(report["lod"]))
    if "addrender" in sections:
        report["addrender"] = add_render_comparison(["pixelrig/CartPole-v0", "pixelrig/PandaPush-v0"],
                                                    steps=max(10, args.frames), repeats=args.repeats)
        print("\n## env steps/s: PixelObs vs Gymnasium AddRenderObservation (same 320x240 render camera)")
        print("| env | PixelObs | AddRenderObservation | ratio |\n|---|---|---|---|")
        for r in report["addrender"]:
            m, sp = r["median_steps_per_s"], r["spread"]
            print(f"| {r['env']} | {cell(m['PixelObs'], sp['PixelObs'])} | "
                  f"{cell(m['AddRenderObservation'], sp['AddRenderObservation'])} | {r['ratio']:.3f} |")
    if "snapshot" in sections:
        from pixelrig.tools.bench.snapshot import measure as snapshot_measure

        report["snapshot"] = [snapshot_measure(e, repeats=10 if args.quick else 50)
                              for e in ("pixelrig/HalfCheetah-v0", "pixelrig/PandaPush-v0")]
        print("\n## snapshot + restore (ms, median) and size\n| env | pybullet save+restore | pixelrig snapshot"
              " | pixelrig restore | snapshot bytes |\n|---|---|---|---|---|")
        for r in report["snapshot"]:
            m = r["median_ms"]
            print(f"| {r['env']} | {r['pybullet_round_trip_ms']:.2f} | {m['pixelrig snapshot']:.2f} | "
                  f"{m['pixelrig restore']:.2f} | {r['snapshot_bytes']} |")
    if "vector" in sections:
        from pixelrig.tools.bench.vector import measure as vector_measure

        report["vector"] = [vector_measure("pixelrig/PandaPush-v0", 20 if args.quick else 60, args.repeats)]
        r = report["vector"][0]
        print(f"\n## vector scaling (PandaPush-v0, async)\n1 worker {r['median'][1]:.1f} steps/s, 2 workers "
              f"{r['median'][2]:.1f} steps/s: {r['scaling']:.2f}x")
    if "datasets" in sections:
        missing = [m for m in ("pyarrow", "h5py") if importlib.util.find_spec(m) is None]
        if missing:
            print(f"\n## datasets: skipped, {' and '.join(missing)} not installed (pip install 'pixelrig[datasets]')")
        else:
            from pixelrig.tools.bench.datasets import format_datasets
            from pixelrig.tools.bench.datasets import measure as datasets_measure

            quick = args.quick
            report["datasets"] = datasets_measure([r for r in renderers if r in ("tiny", "gl")],
                                                  episodes=2 if quick else 8, steps=20 if quick else 50,
                                                  repeats=1 if quick else min(3, args.repeats))
            print("\n## datasets: recording and replay against live stepping (PandaPush-v0, frames/s)\n"
                  + format_datasets(report["datasets"]))
    if "rllib" in sections:
        from pixelrig.tools.bench.rllib import INSTALL_HINT, rllib_missing

        if rllib_missing():
            print(f"\n## rllib: skipped, {rllib_missing()} not installed ({INSTALL_HINT})")
        else:
            from pixelrig.tools.bench.rllib import format_rllib
            from pixelrig.tools.bench.rllib import measure as rllib_measure

            report["rllib"] = rllib_measure(steps=160 if args.quick else 400, repeats=min(2 if args.quick else 3,
                                                                                        args.repeats))
            print("\n## RLlib env runners on batched envs vs plain make_vec stepping (CartPole-v0, 48² RGB, env "
                  "steps/s)\n" + format_rllib(report["rllib"]))
    if "soak" in sections:
        report["soak"] = soak(2_000 if args.quick else 20_000, warmup=500 if args.quick else 2_000,
                              every=100 if args.quick else 1_000)
        r = report["soak"]
        print(f"\n## soak: {r['frames']} frames, peak RSS {r['peak_rss_bytes'] / 2**20:.1f} MiB, growth after "
              f"warm-up {r['growth_bytes_after_warmup'] / 1024:.0f} KiB "
              f"({r['growth_bytes_per_frame_after_warmup']:.1f} bytes/frame)")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2, default=str))
        print(f"(results: {args.json})")
    return 0


def _sections_apart(args: argparse.Namespace, sections: list[str]) -> int:
    """Run each section in a fresh ``python -m pixelrig.tools.bench.main`` with the same options, its output shown
    as it comes, and merge their reports into one (written to ``args.json``)."""
    report: dict[str, Any] = {}
    common = ["--scenes", args.scenes, "--renderers", args.renderers, "--size", str(args.size), "--cams",
              str(args.cams), "--frames", str(args.frames), "--repeats", str(args.repeats), "--plot", args.plot]
    common += ["--quick"] if args.quick else []
    with tempfile.TemporaryDirectory(prefix="pixelrig-bench-") as scratch:
        for section in sections:
            part = os.path.join(scratch, f"{section}.json")
            done = subprocess.run([sys.executable, "-m", "pixelrig.tools.bench.main", "--sections", section,
                                   "--json", part, *common], check=False)
            if done.returncode != 0:
                print(f"pixelrig bench: section {section!r} failed (exit status {done.returncode}); the report is "
                      "not written", file=sys.stderr)
                return done.returncode
            child = json.loads(Path(part).read_text())
            if not report:  # date, machine and versions from the first
                report = {k: v for k, v in child.items() if k not in SECTIONS}
            if section in child:
                report[section] = child[section]
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2, default=str))
        print(f"(results: {args.json})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
