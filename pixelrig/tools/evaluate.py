"""``pixelrig eval``: a policy on a task under the visual factors and a matched control, into a report."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``eval`` and its options to the CLI's subcommands."""
    parser = sub.add_parser("eval", help="evaluate a policy under visual factors with a matched control; write "
                                         "report.json, report.md and report.png")
    parser.add_argument("env_id", help="a registered task, e.g. pixelrig/PandaLift-v0")
    parser.add_argument("--policy", required=True,
                        help="random, expert (the task's scripted expert), module:attr (a callable taking the env and "
                             "returning a policy) or the path of an SB3 .zip")
    parser.add_argument("--episodes", type=int, required=True, help="episodes per factor (seeds S to S+N-1)")
    parser.add_argument("--factors", default="all",
                        help="all (default) or a comma-separated list of factors; control always runs")
    parser.add_argument("--seed", type=int, default=0, help="episode i is reset with seed S + i (default: 0)")
    parser.add_argument("--workers", type=int, default=1, help="envs running episodes at once (default: 1)")
    parser.add_argument("--vectorization-mode", choices=("sync", "process", "batched"), default=None,
                        help="how the envs run, as make_vec names it (default: sync for one worker, else process)")
    parser.add_argument("--num-workers", type=int, default=1,
                        help="batched only: processes the envs are spread over (default: 1)")
    parser.add_argument("--max-episode-steps", type=int, default=None,
                        help="end episodes after this many steps (default: the task's own limit)")
    parser.add_argument("--cams", default=None, help="JSON or TOML rig file (default: the task's own rig)")
    from pixelrig.render.registry import RENDERER_CHOICES, choices_help

    parser.add_argument("--renderer", choices=RENDERER_CHOICES, default=None,
                        help=f"{choices_help()} (default: PIXELRIG_RENDERER, else auto)")
    parser.add_argument("--out", required=True, help="the report's folder")
    parser.add_argument("--resume", action="store_true", help="go on with the evaluation in --out (after a kill)")
    parser.add_argument("--overwrite", action="store_true", help="replace the evaluation in --out")
    parser.add_argument("--videos", type=int, default=0, help="record the first K episodes of each factor (mp4)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``pixelrig eval``; print the summary. Returns the exit code."""
    from pixelrig.errors import PolicyError
    from pixelrig.evaluation.run import evaluate

    try:
        report = evaluate(args.env_id, args.policy, episodes=args.episodes, factors=args.factors, seed=args.seed,
                          workers=args.workers, cams=args.cams, renderer=args.renderer, out=args.out,
                          vectorization_mode=args.vectorization_mode, num_workers=args.num_workers,
                          resume=args.resume, overwrite=args.overwrite,
                          env_kwargs=None if args.max_episode_steps is None else {
                              "max_episode_steps": args.max_episode_steps}, videos=args.videos, progress=not args.quiet)
    except (ValueError, FileNotFoundError, FileExistsError, PolicyError) as exc:
        extra = " (on the command line: --resume goes on with it, --overwrite starts again)" \
            if isinstance(exc, FileExistsError) else ""
        print(f"pixelrig eval: {exc}{extra}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        from pixelrig.tools.resumable import interrupted

        return interrupted("eval", args.out)
    print(report.summary())
    return 0
