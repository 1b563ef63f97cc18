"""``evaluate()``: a policy on a task under every factor, on the same seeds, into a report; resumable from the
episodes file it keeps in ``out``."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pixelrig.cameras.rig import CameraLike
from pixelrig.cameras.rigfile import rig_cameras
from pixelrig.errors import whole_number
from pixelrig.evaluation.factor_env import make_factored
from pixelrig.evaluation.factors import factor_names
from pixelrig.evaluation.policies import policy_builder
from pixelrig.evaluation.report import build_report, write_report
from pixelrig.evaluation.runner import EPISODES_FILE, VECTOR_MODES, EpisodeLog, RunSpec, pending_by_factor, run_factor
from pixelrig.render.choice import resolve_renderer

SETTINGS_FILE = "run.json"
"""The file in ``out`` holding what the run is (checked when resuming)."""
TIMES_FILE = "times.jsonl"
"""The file in ``out`` holding each factor's wall time, one line per call that ran its episodes."""
OUR_FILES = (EPISODES_FILE, SETTINGS_FILE, TIMES_FILE, "report.json", "report.md", "report.png", "frames", "videos")
"""What an evaluation writes into ``out`` (all ``overwrite=True`` removes; nothing else is touched)."""
RESUMED_SETTINGS = ("env_id", "policy", "seed", "cams", "env_kwargs", "renderer")
"""Settings a resumed run must share with the run it goes on with (episodes and factors may grow)."""


@dataclasses.dataclass(frozen=True)
class EvalReport:
    """What :func:`evaluate` found (``report.json``'s content as ``data``).

    Attributes:
        data: the report: settings, ``per_factor`` (each factor's figures and parameters), ``per_episode`` (one row
            per episode), ``aggregated`` (the control's figures, as lerobot-eval names them).
        path: the folder it was written to (None: nothing written).
        episodes_run: episodes this call ran (the rest were there already).
        seconds: this call's wall time.
    """

    data: dict[str, Any]
    path: Path | None
    episodes_run: int
    seconds: float

    @property
    def per_factor(self) -> dict[str, dict[str, Any]]:
        """Each factor's figures, ``control`` first."""
        return self.data["per_factor"]

    @property
    def per_episode(self) -> list[dict[str, Any]]:
        """One row per episode, by factor and episode number."""
        return self.data["per_episode"]

    def summary(self) -> str:
        """One line per factor: success rate, interval and change against the control."""
        lines = []
        for name, f in self.per_factor.items():
            vs = f.get("vs_control")
            change = "" if vs is None else (f", {vs['pc_change']:+.1f} points [{vs['pc_change_ci95'][0]:.1f}, "
                                            f"{vs['pc_change_ci95'][1]:.1f}]" + (" *" if vs["significant"] else ""))
            lines.append(f"{name}: {f['pc_success']:.1f}% [{f['pc_success_ci95'][0]:.1f}, "
                         f"{f['pc_success_ci95'][1]:.1f}]{change}")
        where = f" -> {self.path}" if self.path is not None else ""
        return "\n".join(lines) + f"\n{self.episodes_run} episodes run in {self.seconds:.1f} s{where}"


def _env_id(env_id: Any) -> str:
    import gymnasium as gym

    if not isinstance(env_id, str) or env_id not in gym.registry:
        known = sorted(e for e in gym.registry if e.startswith("pixelrig/"))
        raise ValueError(f"unknown env id {env_id!r}: choose a registered id, e.g. one of {known}")
    return env_id


def _prepare_out(out: Path, settings: dict[str, Any], resume: bool, overwrite: bool) -> None:
    """Check (or clear) the output folder before anything runs.

    Raises:
        FileExistsError: an evaluation is there and neither resume nor overwrite was given.
        ValueError: resuming a run made with other settings, or out is a file.
    """
    if out.exists() and not out.is_dir():
        raise ValueError(f"out={str(out)!r} is a file: give a folder")
    there = out / SETTINGS_FILE
    settings = json.loads(json.dumps(settings))  # as stored: tuples read back as lists
    if there.is_file() and overwrite:
        for name in OUR_FILES:
            target = out / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    elif there.is_file() and not resume:
        raise FileExistsError(f"an evaluation is in {str(out)!r} already: pass resume=True (--resume) to go on with "
                              "it, overwrite=True (--overwrite) to start again, or another out")
    elif there.is_file():
        stored = json.loads(there.read_text())
        differ = {k: stored.get(k) for k in RESUMED_SETTINGS if stored.get(k) != settings[k]}
        if differ:
            asked = {k: settings[k] for k in differ}
            raise ValueError(f"cannot resume {str(out)!r}: it was run with {differ}, and this run asks {asked}: pass "
                             "the same values, or overwrite=True to start again")
    out.mkdir(parents=True, exist_ok=True)
    there.write_text(json.dumps(settings, indent=1) + "\n")


def _times(out: Path | None, extra: Mapping[str, float]) -> dict[str, float]:
    """Each factor's wall time: this call's plus what earlier calls on ``out`` recorded."""
    total: dict[str, float] = {}
    if out is not None and (out / TIMES_FILE).is_file():
        for line in (out / TIMES_FILE).read_text().splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            total[entry["factor"]] = total.get(entry["factor"], 0.0) + float(entry["seconds"])
    if out is None:
        for name, s in extra.items():
            total[name] = total.get(name, 0.0) + s
    return total


def evaluate(
    env_id: str,
    policy: Any,
    *,
    episodes: int,
    factors: str | Iterable[str] | None = "all",
    seed: int = 0,
    workers: int = 1,
    cams: Iterable[CameraLike] | str | os.PathLike[str] | None = None,
    renderer: str | None = None,
    out: str | os.PathLike[str] | None = None,
    vectorization_mode: str | None = None,
    num_workers: int = 1,
    env_kwargs: Mapping[str, Any] | None = None,
    resume: bool = False,
    overwrite: bool = False,
    videos: int = 0,
    progress: bool = True,
) -> EvalReport:
    """Run ``policy`` on ``env_id`` for ``episodes`` episodes under the control and every factor, on the same seeds.

    Episode ``i`` of every factor is reset with seed ``seed + i``; the factors change what the cameras see only
    (looks, camera pose, sensor models), never the simulation, so a policy reading the state does exactly the same
    in each. Episodes are spread over ``workers`` envs and give the same rows (digests included) for any worker
    count and vectorization mode; each is appended to ``out/episodes.jsonl`` as it finishes.

    Args:
        env_id: a registered task (``"pixelrig/PandaLift-v0"``).
        policy: ``"random"``, ``"expert"`` (the task's scripted expert), ``"module:attr"`` (a callable taking the env
            and returning a policy: ``policy(obs) -> action``, optional ``reset()`` or ``reset(seed=)``), the path
            of an SB3 ``.zip``, or such a callable itself. One policy is built per env; each sees one env's
            observation (PixelObs's dict) and is reset before every episode.
        episodes: episodes per factor (>= 1).
        factors: "all", a comma-separated string or names of :data:`~pixelrig.evaluation.factors.FACTORS`;
            ``control`` is always run.
        seed: the first episode's seed.
        workers: envs running episodes at once.
        cams: the rig: a rig file (JSON/TOML) or Cameras / camera dicts (None: the task's own).
        renderer: the backend (None: ``PIXELRIG_RENDERER``, else auto), resolved once for every env.
        out: a folder for ``episodes.jsonl``, ``report.json``, ``report.md``, ``report.png`` (None: nothing written,
            nothing to resume).
        vectorization_mode: "sync" (every env in this process), "process" (one process per env; "async" too) or
            "batched" (``num_workers`` processes drawing their envs' rigs together); None: "sync" for one worker,
            else "process".
        num_workers: "batched" only: processes the envs are spread over.
        env_kwargs: more ``gym.make`` arguments of the task.
        resume: go on with the evaluation in ``out`` (made with the same env, policy, seed, rig, kwargs and
            renderer): its finished episodes are kept, the others run. More episodes or factors extend it.
        overwrite: replace the evaluation in ``out`` (only its own files are removed).
        videos: record the first this many episodes of each factor into ``out/videos`` (every camera's RGB).
        progress: show a progress bar (tqdm) on stderr.

    Returns:
        The report (also written to ``out``).

    Raises:
        ValueError: an unknown env id, factor, policy spec or vectorization mode; episodes, workers or seed out of
            range; a bad rig; resuming a run made otherwise (each names the value and the fix).
        FileNotFoundError: no such rig file.
        FileExistsError: an evaluation is in ``out`` and neither resume nor overwrite was given.
        PolicyError: the policy raised, or returned the wrong shape or a non-finite action (naming the factor, seed
            and step); the finished episodes stay in ``out``.
    """
    start = time.perf_counter()
    env_id = _env_id(env_id)
    whole_number("episodes", episodes, 1)
    whole_number("workers", workers, 1)
    whole_number("seed", seed, 0)
    whole_number("videos", videos, 0)
    names = factor_names(factors)
    mode = vectorization_mode or ("sync" if workers == 1 else "process")
    if mode not in VECTOR_MODES:
        raise ValueError(f"vectorization_mode={vectorization_mode!r}: choose one of {list(VECTOR_MODES)}")
    if env_kwargs is not None and not isinstance(env_kwargs, Mapping):
        raise ValueError(f"env_kwargs must be a dict of gym.make arguments: got {type(env_kwargs).__name__}")
    cameras = None if cams is None else tuple(c.to_dict() for c in rig_cameras(cams))
    build = policy_builder(policy, env_id)
    kind = resolve_renderer(renderer)
    spec = RunSpec(env_id, cameras, dict(env_kwargs or {}), kind, seed, workers, mode, num_workers)
    settings = {"env_id": env_id, "policy": policy if isinstance(policy, str) else getattr(
                    policy, "__qualname__", repr(policy)), "seed": seed, "cams": cameras,
                "env_kwargs": repr(dict(env_kwargs or {})), "renderer": kind}
    path = None if out is None else Path(out)
    if path is not None:
        _prepare_out(path, settings, resume, overwrite)
    log = EpisodeLog(None if path is None else path / EPISODES_FILE)
    frames: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    run = 0
    try:
        todo = list(pending_by_factor(names, episodes, log.done()))
        total = sum(len(p) for _, p in todo)
        count = min(workers, max((len(p) for _, p in todo), default=0))
        policies = _policies(build, spec, count) if total else []
        from tqdm import tqdm

        with tqdm(total=len(names) * episodes, initial=len(names) * episodes - total, unit="episode",
                  desc=f"eval {env_id.removeprefix('pixelrig/')}", disable=not progress) as bar:
            for factor, pending in todo:
                if not pending:
                    continue
                bar.set_postfix_str(factor)
                mark = time.perf_counter()

                def keep_frame(frame: np.ndarray, factor: str = factor) -> None:
                    frames[factor] = frame
                    if path is not None:
                        (path / "frames").mkdir(exist_ok=True)
                        np.save(path / "frames" / f"{factor}.npy", frame)

                run += run_factor(spec, factor, pending, policies, log, on_episode=lambda row: bar.update(1),
                                  videos=videos, video_dir=None if path is None else path / "videos",
                                  first_frame=keep_frame)
                seconds[factor] = time.perf_counter() - mark
                if path is not None:
                    with (path / TIMES_FILE).open("a") as f:
                        f.write(json.dumps({"factor": factor, "episodes": len(pending),
                                            "seconds": seconds[factor]}) + "\n")
    finally:
        log.close()
    if path is not None:
        for factor in names:
            saved = path / "frames" / f"{factor}.npy"
            if factor not in frames and saved.is_file():
                frames[factor] = np.load(saved)
    report = build_report(log.rows, names, episodes, settings, _times(path, seconds))
    if path is not None:
        write_report(path, report, frames)
    return EvalReport(report, path, run, time.perf_counter() - start)


def _policies(build: Callable[[Any], Any], spec: RunSpec, count: int) -> list[Any]:
    """``count`` policies built from one env like those they act in (the control's, drawn by TinyRenderer)."""
    env = make_factored(spec.env_id, "control", spec.cams, spec.env_kwargs, renderer="tiny")
    try:
        return [build(env) for _ in range(count)]
    finally:
        env.close()
