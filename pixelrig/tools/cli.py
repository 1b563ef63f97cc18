"""Command line: ``pixelrig demo | view | serve | bench | renderer | replay | augment | collect | eval`` (also
``python -m pixelrig ...``)."""

from __future__ import annotations

import argparse
import json
import sys


def add_renderer(parser: argparse.ArgumentParser, default: str = "PIXELRIG_RENDERER, else auto") -> None:
    """The ``--renderer`` option, its choices and their help from the render registry."""
    from pixelrig.render.registry import RENDERER_CHOICES, choices_help

    parser.add_argument("--renderer", choices=RENDERER_CHOICES, default=None,
                        help=f"{choices_help()} (default: {default})")


def add_rendering(parser: argparse.ArgumentParser, dst: str) -> None:
    """The options of a command that re-renders a dataset into ``dst``: ``--overwrite``, ``--quiet``, ``--workers``."""
    parser.add_argument("--overwrite", action="store_true", help=f"replace a dataset already at {dst}")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--workers", type=int, default=None,
                        help="processes to use: this one writes, the others restore and render (default: one "
                             "per CPU core, fewer for short datasets; 1: everything in this process)")


def _demo(args: argparse.Namespace) -> int:
    from pixelrig.tools.demo import run_demo

    result = run_demo(args.out, env_id=args.env, steps=args.steps, seed=args.seed, renderer=args.renderer,
                      video=args.video)
    print(f"wrote {result.sheet} and {result.video} ({result.frames} frames, {result.episodes} episodes, "
          f"{result.successes} successes)")
    return 0


def _view(args: argparse.Namespace) -> int:
    from pixelrig.errors import DisplayUnavailable
    from pixelrig.tools.view import run_viewer

    try:
        n = run_viewer(args.source, cams=args.cams, steps=args.steps, fps=args.fps, scale=args.scale,
                       policy=args.policy, renderer=args.renderer, seed=args.seed)
    except DisplayUnavailable as exc:
        print(f"pixelrig view: {exc}", file=sys.stderr)
        return 2
    print(f"viewed {args.source} for {n} steps")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from gymnasium.error import DependencyNotInstalled

    from pixelrig.errors import PortInUseError
    from pixelrig.tools.serve import run_server

    try:
        n = run_server(args.source, cams=args.cams, steps=args.steps, port=args.port, host=args.host, fps=args.fps,
                       policy=args.policy, renderer=args.renderer, seed=args.seed, realtime=not args.fast)
    except PortInUseError:
        print(f"pixelrig serve: port {args.port} on {args.host} is in use (by another program, or another view that "
              "is still open): pass --port 0 to pick a free port, or another --port", file=sys.stderr)
        return 2
    except (DependencyNotInstalled, ValueError) as exc:
        print(f"pixelrig serve: {exc}", file=sys.stderr)
        return 2
    print(f"served {args.source} for {n} steps")
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


def _replay(args: argparse.Namespace) -> int:
    from pixelrig.datasets import DatasetExistsError, DatasetWriteError, ReplayWorkerError, replay

    try:
        result = replay(args.src, args.dst, args.cams, format=args.format, renderer=args.renderer,
                        overwrite=args.overwrite, progress=not args.quiet, workers=args.workers)
    except DatasetExistsError as exc:
        print(f"pixelrig replay: {exc} (on the command line: --overwrite)", file=sys.stderr)
        return 2
    except (FileNotFoundError, ValueError, DatasetWriteError, ReplayWorkerError) as exc:
        print(f"pixelrig replay: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {result.path}: {result.episodes} episodes, {result.frames} frames in {result.seconds:.1f} s "
          f"({result.frames / max(result.seconds, 1e-9):.1f} frames/s, {result.workers} "
          f"process{'es' if result.workers > 1 else ''})")
    return 0


def _augment(args: argparse.Namespace) -> int:
    from pixelrig.datasets import DatasetExistsError, DatasetWriteError, ReplayWorkerError, augment

    try:
        result = augment(args.dataset, args.out, looks=args.looks, copies=args.copies, seed=args.seed,
                         overwrite=args.overwrite, progress=not args.quiet, workers=args.workers)
    except DatasetExistsError as exc:
        print(f"pixelrig augment: {exc} (on the command line: --overwrite)", file=sys.stderr)
        return 2
    except (FileNotFoundError, FileExistsError, ValueError, DatasetWriteError, ReplayWorkerError) as exc:
        print(f"pixelrig augment: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {result.path}: {result.episodes} episodes ({result.source_episodes} recorded, then "
          f"{result.copies} cop{'ies' if result.copies > 1 else 'y'} of each under looks {args.looks!r}), "
          f"{result.frames} frames in {result.seconds:.1f} s ({result.workers} "
          f"process{'es' if result.workers > 1 else ''})")
    return 0


def _collect(args: argparse.Namespace) -> int:
    from pixelrig.datasets import DatasetExistsError, DatasetWriteError
    from pixelrig.datasets.collect import collect

    try:
        report = collect(args.task, args.out, episodes=args.episodes, workers=args.workers, format=args.format,
                         cams=args.cams, keep=args.keep, seed=args.seed, resume=args.resume, overwrite=args.overwrite,
                         renderer=args.renderer, progress=not args.quiet)
    except DatasetExistsError as exc:
        print(f"pixelrig collect: {exc} (on the command line: --resume goes on with the collection there, "
              "--overwrite replaces it)", file=sys.stderr)
        return 2
    except (FileNotFoundError, FileExistsError, ValueError, RuntimeError, DatasetWriteError) as exc:
        print(f"pixelrig collect: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        from pixelrig.tools.resumable import interrupted

        return interrupted("collect", args.out)
    print(report.summary())
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
    add_renderer(demo)
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
    add_renderer(view)
    view.add_argument("--seed", type=int, default=0)
    view.set_defaults(func=_view)

    serve = sub.add_parser("serve", help="run a URDF/SDF/MJCF file or an env id and show its camera rig on a web page")
    serve.add_argument("source", help="robot file (also looked up in pybullet_data) or registered env id")
    serve.add_argument("--cams", default=None, help="JSON or TOML rig file (default: the env's own camera rig)")
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default: 8000; 0 picks a free one)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="where to listen (default: 127.0.0.1, reached from elsewhere through an SSH tunnel; any "
                            "other host puts a token in the URL)")
    serve.add_argument("--steps", type=int, default=None, help="stop after this many steps (default: until Ctrl-C)")
    serve.add_argument("--fps", type=float, default=15.0, help="the most page updates a second (default: 15)")
    serve.add_argument("--policy", choices=("hold", "random"), default="hold",
                       help="hold: zero torque / hold the pose (default); random: random actions")
    serve.add_argument("--fast", action="store_true", help="step as fast as possible instead of in real time")
    add_renderer(serve)
    serve.add_argument("--seed", type=int, default=0)
    serve.set_defaults(func=_serve)

    sub.add_parser("bench", help="benchmarks against raw pybullet, in one run (pixelrig bench --help)")

    replay = sub.add_parser("replay", help="re-render a recorded dataset (LeRobot or robomimic) with another rig")
    replay.add_argument("src", help="dataset written by pixelrig's DatasetRecorder (folder or .hdf5)")
    replay.add_argument("dst", help="the new dataset (a folder for LeRobot, a .hdf5 file for robomimic)")
    replay.add_argument("--cams", required=True, help="JSON or TOML rig file: the cameras to render")
    replay.add_argument("--format", choices=("lerobot", "robomimic"), default=None,
                        help="format of DST (default: that of SRC)")
    add_renderer(replay, "the one the dataset was recorded with")
    add_rendering(replay, "DST")
    replay.set_defaults(func=_replay)

    from pixelrig.envs.presets import LOOKS_PRESETS

    augment = sub.add_parser("augment", help="a dataset's episodes, then re-rendered copies of each under new looks")
    augment.add_argument("dataset", help="dataset written by pixelrig (a LeRobot folder or a robomimic .hdf5)")
    augment.add_argument("--looks", default="train",
                         help=f"the looks preset the copies' looks are drawn from: {', '.join(LOOKS_PRESETS)} "
                              "(default: train)")
    augment.add_argument("--copies", type=int, default=1, help="re-rendered copies of each episode (default: 1)")
    augment.add_argument("--out", required=True, help="the new dataset, in DATASET's format (a folder, or a .hdf5)")
    augment.add_argument("--seed", type=int, default=0, help="the looks' seed (default: 0)")
    add_rendering(augment, "--out")
    augment.set_defaults(func=_augment)

    collect = sub.add_parser("collect", help="run a task's scripted expert into a LeRobot or robomimic dataset")
    collect.add_argument("task", help="a task with an expert: pixelrig/PandaLift-v0 or PandaLift (pixelrig.experts."
                                      "EXPERTS lists them)")
    collect.add_argument("--episodes", type=int, required=True, help="episodes wanted in the dataset")
    collect.add_argument("--out", required=True, help="the dataset: a folder (lerobot) or a .hdf5 file (robomimic)")
    collect.add_argument("--workers", type=int, default=1,
                         help="processes running the expert (default: 1, this one; W > 1: W workers, this one "
                              "writes)")
    collect.add_argument("--format", choices=("lerobot", "robomimic"), default="lerobot",
                         help="dataset format (default: lerobot)")
    collect.add_argument("--cams", default=None, help="JSON or TOML rig file (default: the task's own rig)")
    collect.add_argument("--keep", choices=("success", "all"), default="success",
                         help="success (default): keep successful episodes until --episodes are kept (at most 3 "
                              "seeds per episode); all: keep every episode, its success stored with it")
    collect.add_argument("--seed", type=int, default=0, help="episode i is reset with seed S + i (default: 0)")
    collect.add_argument("--resume", action="store_true",
                         help="go on with the collection at --out (after Ctrl-C or a killed run)")
    collect.add_argument("--overwrite", action="store_true", help="replace a dataset already at --out")
    add_renderer(collect)
    collect.add_argument("--quiet", action="store_true", help="no progress bar")
    collect.set_defaults(func=_collect)

    from pixelrig.tools.evaluate import add_parser as add_eval

    add_eval(sub)

    renderer = sub.add_parser("renderer", help="print which backend 'auto' picks here and the EGL probe")
    renderer.set_defaults(func=_renderer)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
