"""Command line: ``pixelrig demo | view | bench | renderer`` (also ``python -m pixelrig ...``)."""

from __future__ import annotations

import argparse
import json
import sys


def _demo(args: argparse.Namespace) -> int:
    from pixelrig.tools.demo import run_demo

    result = run_demo(args.out, env_id=args.env, steps=args.steps, seed=args.seed, renderer=args.renderer,
                      video=args.video)
    print(f"wrote {result.sheet} and {result.video} ({result.frames} frames, {result.episodes} episodes, "
          f"{result.successes} successes)")
    return 0


def _view(args: argparse.Namespace) -> int:
    from pixelrig.render.window import DisplayUnavailable
    from pixelrig.tools.view import run_viewer

    try:
        n = run_viewer(args.source, cams=args.cams, steps=args.steps, fps=args.fps, scale=args.scale,
                       policy=args.policy, renderer=args.renderer, seed=args.seed)
    except DisplayUnavailable as exc:
        print(f"pixelrig view: {exc}", file=sys.stderr)
        return 2
    print(f"viewed {args.source} for {n} steps")
    return 0


def _bench(rest: list[str]) -> int:
    from pixelrig.tools.bench.main import main as bench_main

    return bench_main(rest)


def _renderer(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from pixelrig.render import choose_auto, probe_egl, probe_gl

    kind, why = choose_auto()
    print(json.dumps({"auto": kind, "why": why, "gl_probe": asdict(probe_gl()), "egl_probe": asdict(probe_egl())},
                     indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:  # the benchmark has its own options (pixelrig bench --help)
        return _bench(argv[1:])
    parser = argparse.ArgumentParser(prog="pixelrig", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run a task under a 3-camera rig; write a contact sheet and an mp4")
    demo.add_argument("--out", default="out", help="output folder (default: out)")
    demo.add_argument("--env", default="pixelrig/PandaPush-v0", help="environment id")
    demo.add_argument("--steps", type=int, default=150, help="env steps (default: 150)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--renderer", choices=("auto", "tiny", "egl", "gl"), default=None)
    demo.add_argument("--video", default=None, help="mp4/gif path of the tiled rig (default: OUT/demo.mp4)")
    demo.set_defaults(func=_demo)

    view = sub.add_parser("view", help="open a window on a URDF/SDF/MJCF file or an env id (orbiting camera)")
    view.add_argument("source", help="robot file (also looked up in pybullet_data) or registered env id")
    view.add_argument("--cams", default=None, help="JSON or TOML rig file: show these cameras tiled instead")
    view.add_argument("--steps", type=int, default=None, help="stop after this many steps (default: until closed)")
    view.add_argument("--fps", type=float, default=30.0)
    view.add_argument("--scale", type=int, default=2)
    view.add_argument("--policy", choices=("hold", "random"), default="hold",
                      help="hold: zero torque / hold the pose (default); random: random actions")
    view.add_argument("--renderer", choices=("auto", "tiny", "egl", "gl"), default=None)
    view.add_argument("--seed", type=int, default=0)
    view.set_defaults(func=_view)

    sub.add_parser("bench", help="benchmarks against raw pybullet, in one run (pixelrig bench --help)")

    renderer = sub.add_parser("renderer", help="print which backend 'auto' picks here and the EGL probe")
    renderer.set_defaults(func=_renderer)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
