"""Command line: ``pixelrig demo | bench | golden | renderer`` (also ``python -m pixelrig ...``)."""

from __future__ import annotations

import argparse
import json
import sys


def _demo(args: argparse.Namespace) -> int:
    from pixelrig.demo import run_demo

    result = run_demo(args.out, env_id=args.env, steps=args.steps, seed=args.seed, renderer=args.renderer)
    print(f"wrote {result.sheet} and {result.video} ({result.frames} frames, {result.episodes} episodes, "
          f"{result.successes} successes)")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from pixelrig.bench import main as bench_main

    return bench_main(args.rest)


def _golden(args: argparse.Namespace) -> int:
    from pixelrig.golden import check_all, update_all

    if args.update:
        for line in update_all(args.backend):
            print(line)
        return 0
    failures = check_all(args.backend)
    for line in failures:
        print(line)
    print("golden images: " + ("all match" if not failures else f"{len(failures)} mismatches"))
    return 1 if failures else 0


def _renderer(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from pixelrig.render import probe_egl, resolve_renderer

    print(json.dumps({"auto": resolve_renderer("auto"), "egl_probe": asdict(probe_egl())}, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pixelrig", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run a task under a 3-camera rig; write a contact sheet and an mp4")
    demo.add_argument("--out", default="out", help="output folder (default: out)")
    demo.add_argument("--env", default="pixelrig/PandaPush-v0", help="environment id")
    demo.add_argument("--steps", type=int, default=150, help="env steps (default: 150)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--renderer", choices=("auto", "tiny", "egl"), default=None)
    demo.set_defaults(func=_demo)

    bench = sub.add_parser("bench", help="throughput benchmark against raw pybullet (see benchmarks/)")
    bench.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for the benchmark (try --help)")
    bench.set_defaults(func=_bench)

    golden = sub.add_parser("golden", help="check golden images, or regenerate them with --update")
    golden.add_argument("--update", action="store_true", help="regenerate the golden images, print what changed")
    golden.add_argument("--backend", choices=("tiny", "egl", "all"), default="all")
    golden.set_defaults(func=_golden)

    renderer = sub.add_parser("renderer", help="print which backend 'auto' picks here and the EGL probe")
    renderer.set_defaults(func=_renderer)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
