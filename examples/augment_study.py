"""Does re-rendering demonstrations under new looks make policies robust? A controlled study in four arms.

    .venv/bin/python examples/augment_study.py            # the full study (hours): docs/augment_study.json and .png
    .venv/bin/python examples/augment_study.py --quick    # the pipeline end to end in minutes: out/augment_study_quick
    .venv/bin/python examples/augment_study.py --parts collect,augment   # some parts only (each resumes)

The same expert demonstrations of each task (:data:`TASKS`; seeds 0, 1, ...; 64x64 front and wrist RGB, as
examples/bc_pixels.py learns from), then the BC policy of examples/bc_pixels.py (same model, same number of gradient
steps in every arm) trained in four arms (:data:`ARMS`):

- ``a`` no augmentation;
- ``b`` image augmentation: random shifts (+-4 px) and colour jitter (kornia, LeRobot's default ranges);
- ``c`` the demonstrations and 4 copies (:attr:`Study.copies`) re-rendered under ``train`` looks (``pixelrig
  augment``: the same states and actions, byte for byte, drawn again with new light, textures, distractors and
  backgrounds);
- ``d`` both.

Three training seeds per arm; each policy is evaluated with ``pixelrig eval`` on unseen seeds (from
:data:`EVAL_SEED`): ``control`` and ``test_hard`` with 100 episodes, every other factor with 30. The hypothesis, on
``test_hard`` with the training seeds pooled, per task:

1. (c)'s success - (a)'s >= half of (a)'s drop from control to test_hard;
2. (c)'s success - (b)'s >= 10 points, their Wilson intervals apart.

The work is in parts that each resume (a killed run goes on where it stopped): ``collect``, ``augment``, ``train``
(one policy per task, arm and seed), ``eval`` (one ``pixelrig eval`` folder each), ``report`` (the JSON, the figure and
the verdict). Each part's wall time is recorded in ``<out>/times.json`` and the JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bc_pixels as bc  # noqa: E402 (the example beside this one)

import pixelrig  # noqa: E402
from pixelrig.datasets import augment  # noqa: E402
from pixelrig.datasets.collect import collect  # noqa: E402
from pixelrig.evaluation.factors import CONTROL, FACTORS  # noqa: E402
from pixelrig.evaluation.run import evaluate  # noqa: E402
from pixelrig.evaluation.stats import wilson_interval  # noqa: E402

HARD = "test_hard"
EVAL_SEED = 1000
"""The first evaluation seed (the demonstrations' seeds stay below it)."""


@dataclasses.dataclass(frozen=True)
class Arm:
    """One way of training: which data, which image augmentation."""

    name: str
    description: str
    rerendered: bool
    shift: int
    jitter: bool


ARMS = (
    Arm("a", "no augmentation", rerendered=False, shift=0, jitter=False),
    Arm("b", "image augmentation: shifts +-4 px, colour jitter", rerendered=False, shift=4, jitter=True),
    Arm("c", "re-rendered copies under train looks", rerendered=True, shift=0, jitter=False),
    Arm("d", "re-rendered and image augmentation", rerendered=True, shift=4, jitter=True),
)
"""The four arms, in the issue's order."""


@dataclasses.dataclass(frozen=True)
class Study:
    """The study's size.

    Attributes:
        tasks: env ids.
        demos: expert demonstrations per task.
        copies: re-rendered copies of each demonstration (arms c, d).
        looks: the looks preset the copies are drawn from.
        epochs: training compute, as passes over the *source* demonstrations: every arm takes this many passes'
            worth of gradient steps (arms c and d see each frame fewer times, in more looks).
        seeds: training seeds per arm.
        episodes: evaluation episodes for ``control`` and ``test_hard``.
        factor_episodes: evaluation episodes for every other factor.
        factors: the other factors (None: all).
        renderer: the demonstrations' and the evaluation's renderer (None: auto).
        workers: processes for collecting and re-rendering, and envs evaluating at once (pixelrig eval's rows are the
            same for any worker count).
    """

    tasks: tuple[str, ...] = ("pixelrig/PandaLift-v0", "pixelrig/PandaPickPlace-v0")
    demos: int = 200
    copies: int = 4
    looks: str = "train"
    epochs: int = 30
    seeds: int = 3
    episodes: int = 100
    factor_episodes: int = 30
    factors: tuple[str, ...] | None = None
    renderer: str | None = None
    workers: int = 2


FULL = Study()
QUICK = Study(tasks=("pixelrig/PandaLift-v0",), demos=3, copies=1, epochs=1, seeds=1, episodes=2, factor_episodes=1,
              factors=("light",), renderer="tiny", workers=1)
"""CI's cut-down: the machinery end to end (not the result)."""
PARTS = ("collect", "augment", "train", "eval", "report")


def short(task: str) -> str:
    """``pixelrig/PandaLift-v0`` -> ``PandaLift``."""
    return task.split("/")[-1].removesuffix("-v0")


class SavedPolicy:
    """A policy saved by :func:`bc_pixels.save_policy`, as ``pixelrig eval`` builds it for each env (its repr names
    the file, which is what a resumed evaluation checks)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"SavedPolicy({str(self.path)!r})"

    def __call__(self, env: Any) -> bc.BCAgent:
        return bc.load_policy(self.path, env)


class Times:
    """Each part's wall time, kept in ``<out>/times.json`` across resumed runs (seconds, summed)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, float] = json.loads(path.read_text()) if path.exists() else {}

    def add(self, key: str, seconds: float) -> None:
        self.data[key] = self.data.get(key, 0.0) + seconds
        self.path.write_text(json.dumps(self.data, indent=1))


def run_collect(study: Study, out: Path, times: Times, log: Callable[[str], None]) -> None:
    for task in study.tasks:
        mark = time.monotonic()
        report = collect(task, out / "data" / short(task) / "demos.hdf5", episodes=study.demos, format="robomimic",
                         cams=bc.policy_cameras(task=task), keep="success", seed=0, resume=True,
                         workers=study.workers, renderer=study.renderer or "auto", progress=False)
        if report.episodes_tried > EVAL_SEED:
            raise ValueError(f"{task}: collecting tried seeds up to {report.episodes_tried - 1}, into the evaluation "
                             f"seeds ({EVAL_SEED}...)")
        times.add(f"collect/{short(task)}", time.monotonic() - mark)
        log(report.summary())


def run_augment(study: Study, out: Path, times: Times, log: Callable[[str], None]) -> None:
    for task in study.tasks:
        folder = out / "data" / short(task)
        dst = folder / "augmented.hdf5"
        if dst.exists():
            continue
        mark = time.monotonic()
        result = augment(folder / "demos.hdf5", dst, looks=study.looks, copies=study.copies, seed=0,
                         workers=study.workers, progress=False)
        times.add(f"augment/{short(task)}", time.monotonic() - mark)
        log(f"{task}: {result}")


def steps_for(study: Study, demos: bc.Demos) -> int:
    """The gradient steps of every arm: ``study.epochs`` passes over the source demonstrations."""
    return study.epochs * max(1, len(demos) // bc.Config.batch_size)


def run_train(study: Study, out: Path, times: Times, log: Callable[[str], None]) -> None:
    for task in study.tasks:
        folder = out / "data" / short(task)
        steps = None
        for arm in ARMS:
            models = out / "models" / short(task)
            todo = [s for s in range(study.seeds) if not (models / f"{arm.name}-s{s}.pt").exists()]
            if not todo:
                continue
            mark = time.monotonic()
            demos = bc.load_demos(folder / ("augmented.hdf5" if arm.rerendered else "demos.hdf5"))
            if steps is None:
                steps = steps_for(study, demos if not arm.rerendered else bc.load_demos(folder / "demos.hdf5"))
            times.add(f"load/{short(task)}", time.monotonic() - mark)
            for seed in todo:
                mark = time.monotonic()
                config = dataclasses.replace(bc.Config(), task=task, seed=seed, shift=arm.shift, jitter=arm.jitter,
                                             steps=steps)
                policy, losses = bc.train_bc(demos, config, log=lambda line: None)
                path = out / "models" / short(task) / f"{arm.name}-s{seed}.pt"
                bc.save_policy(policy, demos, path)
                seconds = time.monotonic() - mark
                path.with_suffix(".json").write_text(json.dumps(
                    {"loss": losses, "steps": steps, "frames": len(demos), "seconds": seconds,
                     "config": dataclasses.asdict(config)}, indent=1))
                times.add(f"train/{short(task)}", seconds)
                log(f"{task} arm {arm.name} seed {seed}: {steps} steps on {len(demos)} frames, loss "
                    f"{losses[-1]:.4f}, {seconds / 60:.1f} min")


def factor_list(study: Study) -> list[str]:
    """The other factors the study evaluates (not control, not test_hard)."""
    names = study.factors if study.factors is not None else tuple(FACTORS)
    return [f for f in names if f not in (CONTROL, HARD)]


def run_eval(study: Study, out: Path, times: Times, log: Callable[[str], None]) -> None:
    for task in study.tasks:
        for arm in ARMS:
            for seed in range(study.seeds):
                eval_one(study, out, task, arm, seed, times, log)


def eval_one(study: Study, out: Path, task: str, arm: Arm, seed: int, times: Times,
             log: Callable[[str], None]) -> None:
    """``pixelrig eval`` of one policy (task, arm, training seed) into its folder, resuming what is there."""
    model = out / "models" / short(task) / f"{arm.name}-s{seed}.pt"
    folder = out / "evals" / short(task) / f"{arm.name}-s{seed}"
    mark = time.monotonic()
    # every factor with the fewer episodes, then control and test_hard extended to the more
    for factors, episodes in ((factor_list(study) + [HARD], study.factor_episodes), ([HARD], study.episodes)):
        report = evaluate(task, SavedPolicy(model), episodes=episodes, factors=factors, seed=EVAL_SEED,
                          cams=model.with_suffix(".rig.json"), renderer=study.renderer, workers=study.workers,
                          out=folder, resume=(folder / "run.json").exists(), progress=False)
    times.add(f"eval/{short(task)}", time.monotonic() - mark)
    if report.episodes_run:
        log(f"{task} arm {arm.name} seed {seed}: control {report.per_factor[CONTROL]['pc_success']:.0f}%, "
            f"{HARD} {report.per_factor[HARD]['pc_success']:.0f}%")


def _rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines() if line.strip()]


def rate(successes: int, n: int) -> dict[str, Any]:
    """A success rate with its Wilson interval, in percent."""
    low, high = wilson_interval(successes, n)
    return {"successes": successes, "n": n, "pc": 100.0 * successes / n if n else 0.0,
            "ci95": [100.0 * low, 100.0 * high]}


def pooled(study: Study, out: Path, task: str, arm: Arm, factor: str, episodes: int) -> dict[str, Any]:
    """``arm``'s success under ``factor`` over its training seeds' first ``episodes`` episodes each."""
    wins = n = 0
    for seed in range(study.seeds):
        rows = [r for r in _rows(out / "evals" / short(task) / f"{arm.name}-s{seed}")
                if r["factor"] == factor and r["episode_ix"] < episodes]
        wins, n = wins + sum(r["success"] for r in rows), n + len(rows)
    return rate(wins, n)


def verdict(table: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """The two tests of the hypothesis on one task's table (arm -> factor -> rate)."""
    a, b, c = table["a"], table["b"], table["c"]
    drop = a[CONTROL]["pc"] - a[HARD]["pc"]
    gain = c[HARD]["pc"] - a[HARD]["pc"]
    over_b = c[HARD]["pc"] - b[HARD]["pc"]
    apart = c[HARD]["ci95"][0] > b[HARD]["ci95"][1]
    first, second = gain >= drop / 2, over_b >= 10.0 and apart
    return {
        "a_drop_control_to_test_hard": drop, "c_minus_a_on_test_hard": gain, "half_of_a_drop": drop / 2,
        "c_recovers_half_of_a_drop": first,
        "c_minus_b_on_test_hard": over_b, "c_interval": c[HARD]["ci95"], "b_interval": b[HARD]["ci95"],
        "intervals_apart": apart, "c_beats_b_by_10_points": second,
        "supported": first and second,
    }


def run_report(study: Study, out: Path, times: Times, log: Callable[[str], None], json_path: Path,
               figure: Path) -> dict[str, Any]:
    factors = [CONTROL, HARD, *factor_list(study)]
    results: dict[str, Any] = {}
    for task in study.tasks:
        table = {arm.name: {f: pooled(study, out, task, arm, f, study.episodes if f in (CONTROL, HARD)
                                      else study.factor_episodes) for f in factors} for arm in ARMS}
        results[task] = {"table": table, "verdict": verdict(table)}
        v = results[task]["verdict"]
        log(f"{task}: a drops {v['a_drop_control_to_test_hard']:.1f} points control->test_hard; c - a on test_hard "
            f"{v['c_minus_a_on_test_hard']:+.1f} (needs >= {v['half_of_a_drop']:.1f}); c - b "
            f"{v['c_minus_b_on_test_hard']:+.1f} (needs >= 10, intervals apart: {v['intervals_apart']}): "
            f"{'supported' if v['supported'] else 'not supported'}")
    data = study_json(dataclasses.asdict(study), [dataclasses.asdict(a) for a in ARMS], factors, EVAL_SEED, results,
                      times.data, "examples/augment_study.py")
    write_results(data, json_path, figure, log)
    return data


def study_json(settings: dict[str, Any], arms: list[dict[str, Any]], factors: list[str], eval_seed: int,
               results: dict[str, Any], times: dict[str, float], command: str) -> dict[str, Any]:
    """The study's JSON: what it ran and found, with the overall verdict and hours derived from them."""
    return {"study": settings, "arms": arms, "factors": factors, "eval_seed": eval_seed, "results": results,
            "supported": all(r["verdict"]["supported"] for r in results.values()),
            "times_s": times, "hours": sum(times.values()) / 3600, "command": command}


def write_results(data: dict[str, Any], json_path: Path, figure: Path, log: Callable[[str], None]) -> None:
    """Write the JSON and the figure; log the table docs/augment_study.md carries (tested against the JSON)."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(data, indent=1))
    log(markdown_table(data))
    plot(data, figure)


def merge(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One study's JSON from the JSONs of runs that each did some of its tasks (``--tasks``, then ``--merge``).

    The runs must share everything but their tasks (the same arms, factors, evaluation seed and study settings), and
    name each task once: the merged JSON is what one run of all of them would have written, with each run's part
    times (keyed by task) together."""
    if not parts:
        raise ValueError("merge needs at least one study JSON")
    first = parts[0]
    same = ("arms", "factors", "eval_seed", "command")
    settings = {k: v for k, v in first["study"].items() if k != "tasks"}
    results: dict[str, Any] = {}
    times: dict[str, float] = {}
    for i, part in enumerate(parts):
        theirs = {k: v for k, v in part["study"].items() if k != "tasks"}
        differ = [k for k in same if part[k] != first[k]]
        differ += [f"study.{k}" for k in settings if theirs.get(k) != settings[k]]
        if differ:
            raise ValueError(f"study JSON {i} differs from the first in {differ}: merge runs of one study only")
        again = sorted(set(part["results"]) & set(results))
        if again:
            raise ValueError(f"study JSON {i} has tasks {again} again: each task must come from one run")
        results.update(part["results"])
        for key, seconds in part["times_s"].items():
            times[key] = times.get(key, 0.0) + seconds
    return study_json({**first["study"], "tasks": list(results)}, first["arms"], first["factors"], first["eval_seed"],
                      results, times, first["command"])


def markdown_table(data: dict[str, Any]) -> str:
    """The README's and docs/augment_study.md's table: per task, one row per arm, success per factor (% [95%
    Wilson interval]), then each task's verdict in a line."""
    factors = data["factors"]
    lines = []
    for task, result in data["results"].items():
        lines += [f"**{short(task)}**", "", "| arm | " + " | ".join(factors) + " |",
                  "|---|" + "---|" * len(factors)]
        for arm in ARMS:
            cells = [result["table"][arm.name][f] for f in factors]
            lines.append(f"| ({arm.name}) {arm.description} | " + " | ".join(
                f"{c['pc']:.0f}% [{c['ci95'][0]:.0f}, {c['ci95'][1]:.0f}]" for c in cells) + " |")
        v = result["verdict"]
        lines += ["", findings(result["table"], factors)]
        lines += ["", f"Verdict: (a) drops {v['a_drop_control_to_test_hard']:.1f} points from control to test_hard; "
                      f"(c) − (a) on test_hard is {v['c_minus_a_on_test_hard']:+.1f} "
                      f"(needs ≥ {v['half_of_a_drop']:.1f}); "
                      f"(c) − (b) is {v['c_minus_b_on_test_hard']:+.1f} (needs ≥ 10, intervals apart: "
                      f"{'yes' if v['intervals_apart'] else 'no'}): "
                      f"{'supported' if v['supported'] else 'not supported'}.", ""]
    return "\n".join(lines).rstrip() + "\n"


def times_table(data: dict[str, Any]) -> str:
    """docs/augment_study.md's table of each part's wall time per task, in minutes (from the JSON's ``times_s``)."""
    parts = ("collect", "augment", "load", "train", "eval")
    tasks = [short(t) for t in data["results"]]
    lines = ["| part | " + " | ".join(tasks) + " |", "|---|" + "---|" * len(tasks)]
    for part in parts:
        lines.append(f"| {part} | " + " | ".join(f"{data['times_s'].get(f'{part}/{t}', 0.0) / 60:.1f} min"
                                                  for t in tasks) + " |")
    return "\n".join(lines) + "\n"


def findings(table: dict[str, dict[str, dict[str, Any]]], factors: Sequence[str]) -> str:
    """What one task's table shows, read off its intervals: the factors on which re-rendering (c) is above and below
    no augmentation (a), their 95% intervals apart, and the same for image augmentation (b) against (a)."""
    def apart(arm: str, other: str, above: bool) -> list[str]:
        mine, theirs = (lambda f: table[arm][f]["ci95"]), (lambda f: table[other][f]["ci95"])
        return [f for f in factors if (mine(f)[0] > theirs(f)[1] if above else mine(f)[1] < theirs(f)[0])]

    def names(found: list[str]) -> str:
        return ", ".join(found) if found else "none"

    return (f"Intervals apart: (c) above (a) on {names(apart('c', 'a', True))}; (c) below (a) on "
            f"{names(apart('c', 'a', False))}; (b) above (a) on {names(apart('b', 'a', True))}; (b) below (a) on "
            f"{names(apart('b', 'a', False))}.")


def plot(data: dict[str, Any], path: Path) -> None:
    """Success per factor and arm, one panel per task, with 95% Wilson intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(data["results"])
    factors = data["factors"]
    fig, axes = plt.subplots(len(tasks), 1, figsize=(max(8.0, 0.8 * len(factors) * 1.6), 3.4 * len(tasks)),
                             dpi=100, squeeze=False)
    width = 0.8 / len(ARMS)
    try:
        for ax, task in zip(axes[:, 0], tasks, strict=True):
            table = data["results"][task]["table"]
            x = np.arange(len(factors))
            for i, arm in enumerate(ARMS):
                pcs = [table[arm.name][f]["pc"] for f in factors]
                lows = [pcs[j] - table[arm.name][f]["ci95"][0] for j, f in enumerate(factors)]
                highs = [table[arm.name][f]["ci95"][1] - pcs[j] for j, f in enumerate(factors)]
                ax.bar(x + (i - 1.5) * width, pcs, width, yerr=[lows, highs], capsize=2,
                       label=f"({arm.name}) {arm.description}")
            ax.set_xticks(x, factors, rotation=30, ha="right")
            ax.set(ylim=(0, 105), ylabel="success (%)", title=short(task))
            ax.grid(True, axis="y", color="0.85")
        # above the panels, where no bar is (inside, it hid the test_hard bars)
        fig.legend(*axes[0, 0].get_legend_handles_labels(), fontsize=8, ncols=2, loc="upper center")
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path)
    finally:
        plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the pipeline end to end in minutes (CI)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated parts to run (default all: {PARTS})")
    parser.add_argument("--out", type=Path, help="the work folder (default out/augment_study[_quick])")
    parser.add_argument("--json", type=Path, help="the results (default docs/augment_study.json; --quick: in --out)")
    parser.add_argument("--tasks", help="comma-separated short names (PandaLift,...): only these of the study's tasks")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="JSON",
                        help="join these runs' JSONs (each of some tasks) into --json and its figure; runs nothing")
    args = parser.parse_args(argv)
    if args.merge:
        missing = [str(p) for p in args.merge if not p.is_file()]
        if missing:
            parser.error(f"--merge: no such file {missing}")
        try:
            data = merge([json.loads(p.read_text()) for p in args.merge])
        except ValueError as err:
            parser.error(f"--merge: {err}")
        except KeyError as err:
            parser.error(f"--merge: a file has no {err}: pass the JSONs examples/augment_study.py wrote")
        json_path = args.json or Path("docs/augment_study.json")
        write_results(data, json_path, json_path.with_suffix(".png"), lambda line: print(line, end=""))
        return 0
    study = QUICK if args.quick else FULL
    if args.tasks:
        chosen = [t.strip() for t in args.tasks.split(",") if t.strip()]
        unknown = [t for t in chosen if t not in map(short, study.tasks)]
        if unknown:
            parser.error(f"--tasks {unknown}: the study's tasks are {[short(t) for t in study.tasks]}")
        study = dataclasses.replace(study, tasks=tuple(t for t in study.tasks if short(t) in chosen))
    out = args.out or Path("out/augment_study_quick" if args.quick else "out/augment_study")
    json_path = args.json or (out / "augment_study.json" if args.quick else Path("docs/augment_study.json"))
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        parser.error(f"--parts {unknown}: the parts are {list(PARTS)}")
    out.mkdir(parents=True, exist_ok=True)
    times = Times(out / "times.json")

    def log(line: str) -> None:
        print(line, flush=True)

    steps = {"collect": run_collect, "augment": run_augment, "train": run_train, "eval": run_eval}
    for part in parts:
        start = time.monotonic()
        if part == "report":
            run_report(study, out, times, log, json_path, json_path.with_suffix(".png"))
        else:
            steps[part](study, out, times, log)
        log(f"== {part}: {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    pixelrig.register_envs()
    sys.exit(main())
