"""``evaluate`` and ``pixelrig eval``: the scripted expert unchanged by visual factors, the same rows for any worker
count and vectorization mode, resuming after a real kill, bad policies stopping the run with the factor, seed and
step named, bad inputs refused with the fix, and the CLI's cut-down run with its report."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import PixelObs, PolicyError, evaluate
from pixelrig.evaluation.runner import read_rows
from pixelrig.tools.cli import main

TASK = "pixelrig/PandaLift-v0"
REPO = Path(__file__).resolve().parent.parent


def small_rig() -> list[dict[str, Any]]:
    """The task's front and wrist cameras at 32x32, RGB and depth: cheap, and every factor has something to change."""
    env = PixelObs(gym.make(TASK, renderer="tiny"))
    try:
        cams = {c.name: c for c in env.rig.cameras}
    finally:
        env.close()
    return [dataclasses.replace(cams[n], width=32, height=32, modalities=("rgb", "depth")).to_dict()
            for n in ("front", "wrist")]


@pytest.fixture(scope="module")
def rig() -> list[dict[str, Any]]:
    return small_rig()


def rows_without(report: Any, *keys: str) -> list[tuple]:
    return [tuple(v for k, v in row.items() if k not in keys) for row in report.per_episode]


def test_the_expert_shows_exactly_no_change_under_visual_factors(rig: list[dict[str, Any]]) -> None:
    """The expert reads the state: with pixels-only factors, success, return and length are the control's, seed for
    seed, while the images (digests) differ."""
    report = evaluate(TASK, "expert", episodes=3, factors="camera_15deg,test_hard", cams=rig, renderer="tiny",
                      progress=False)
    by_factor: dict[str, list[dict]] = {}
    for row in report.per_episode:
        by_factor.setdefault(row["factor"], []).append(row)
    control = [(r["seed"], r["success"], r["sum_reward"], r["length"]) for r in by_factor["control"]]
    assert [r["success"] for r in by_factor["control"]] == [True] * 3
    for factor in ("camera_15deg", "test_hard"):
        rows = by_factor[factor]
        assert [(r["seed"], r["success"], r["sum_reward"], r["length"]) for r in rows] == control
        assert all(r["digest"] != c["digest"] for r, c in zip(rows, by_factor["control"], strict=True))
        vs = report.per_factor[factor]["vs_control"]
        assert vs["pc_change"] == 0.0 and not vs["significant"]
        assert vs["seeds_to_failure"] == [] and vs["seeds_to_success"] == []


@pytest.mark.parametrize(("workers", "mode"), [(2, "sync"), (2, "batched"), (3, "batched")])
def test_rows_are_the_same_for_any_worker_count_and_mode(rig: list[dict[str, Any]], workers: int, mode: str) -> None:
    """Random actions (seeded per episode) for 10 steps on 3 episodes of 2 factors: every row, digests included, is
    one worker's, with envs in this process, batched, or batched over 2 processes."""
    kwargs = {"episodes": 3, "factors": "light,camera_5deg", "cams": rig, "renderer": "tiny", "progress": False,
              "env_kwargs": {"max_episode_steps": 10}}
    one = evaluate(TASK, "random", workers=1, **kwargs).per_episode
    many = evaluate(TASK, "random", workers=workers, vectorization_mode=mode,
                    num_workers=2 if workers == 3 else 1, **kwargs).per_episode
    assert many == one
    assert len({r["digest"] for r in one}) == len(one)  # every first frame differs: the digests see the factors


@pytest.mark.slow
def test_rows_are_the_same_in_worker_processes_on_gl(rig: list[dict[str, Any]]) -> None:
    kwargs = {"episodes": 3, "factors": "shadows", "cams": rig, "renderer": "gl", "progress": False,
              "env_kwargs": {"max_episode_steps": 10}}
    one = evaluate(TASK, "random", workers=1, **kwargs).per_episode
    assert evaluate(TASK, "random", workers=2, vectorization_mode="process", **kwargs).per_episode == one


class Failing:
    """A policy that misbehaves at one seed and step (``how``: raise, shape, nan)."""

    def __init__(self, env: gym.Env, how: str, seed: int = 1, step: int = 3) -> None:
        self.space, self.how, self.at = env.action_space, how, (seed, step)
        self.seed, self.step = 0, 0

    def reset(self, seed: int | None = None) -> None:
        self.seed, self.step = seed, 0

    def __call__(self, obs: Any) -> np.ndarray:
        action = np.zeros(self.space.shape, np.float32)
        if (self.seed, self.step) == self.at:
            if self.how == "raise":
                raise RuntimeError("the network is broken")
            action = np.zeros(2, np.float32) if self.how == "shape" else np.full(self.space.shape, np.nan)
        self.step += 1
        return action


@pytest.mark.parametrize(("how", "match"), [("raise", "raised RuntimeError: the network is broken"),
                                            ("shape", r"shape \(2,\)"), ("nan", "non-finite")])
def test_a_bad_policy_stops_the_run_naming_factor_seed_and_step(tmp_path: Path, rig: list[dict[str, Any]],
                                                                 how: str, match: str) -> None:
    with pytest.raises(PolicyError, match=match) as info:
        evaluate(TASK, lambda env: Failing(env, how), episodes=3, factors="light", cams=rig, renderer="tiny",
                 out=tmp_path, progress=False, env_kwargs={"max_episode_steps": 6})
    assert "factor 'control', seed 1, step 3" in str(info.value)
    assert [(r.factor, r.seed) for r in read_rows(tmp_path / "episodes.jsonl")] == [("control", 0)]  # kept


def test_bad_inputs_are_refused_with_the_fix(tmp_path: Path, rig: list[dict[str, Any]]) -> None:
    with pytest.raises(ValueError, match=r"unknown factor 'fog': choose from \['control'"):
        evaluate(TASK, "random", episodes=1, factors="fog")
    with pytest.raises(ValueError, match=r"unknown env id 'pixelrig/Nope-v0'.*pixelrig/PandaLift-v0"):
        evaluate("pixelrig/Nope-v0", "random", episodes=1)
    for bad in (0, -3, 1.5):
        with pytest.raises(ValueError, match=f"episodes={bad!r} must be a whole number >= 1"):
            evaluate(TASK, "random", episodes=bad)
    with pytest.raises(ValueError, match="workers=0"):
        evaluate(TASK, "random", episodes=1, workers=0)
    with pytest.raises(FileNotFoundError):
        evaluate(TASK, "random", episodes=1, cams=tmp_path / "missing.toml")
    (tmp_path / "bad.toml").write_text("[[camera]]\nname = 3\n")
    with pytest.raises(ValueError):
        evaluate(TASK, "random", episodes=1, cams=tmp_path / "bad.toml")
    with pytest.raises(ValueError, match="vectorization_mode='threads'"):
        evaluate(TASK, "random", episodes=1, vectorization_mode="threads")
    with pytest.raises(ValueError, match="not a policy spec"):
        evaluate(TASK, "greedy", episodes=1)
    with pytest.raises(ValueError, match="no such SB3 model"):
        evaluate(TASK, str(tmp_path / "model.zip"), episodes=1)
    with pytest.raises(ValueError, match="has no attribute 'nothing'"):
        evaluate(TASK, "os:nothing", episodes=1)
    with pytest.raises(ValueError, match="has no scripted expert"):
        evaluate("pixelrig/CartPole-v0", "expert", episodes=1)
    evaluate(TASK, "random", episodes=1, factors=[], cams=rig, renderer="tiny", out=tmp_path / "e", progress=False,
             env_kwargs={"max_episode_steps": 2})
    with pytest.raises(FileExistsError, match="resume=True"):
        evaluate(TASK, "random", episodes=1, cams=rig, renderer="tiny", out=tmp_path / "e", progress=False)
    with pytest.raises(ValueError, match="cannot resume"):
        evaluate(TASK, "random", episodes=1, seed=5, cams=rig, renderer="tiny", out=tmp_path / "e", resume=True)


def test_cli_runs_a_cut_down_evaluation_and_writes_the_report(tmp_path: Path, rig: list[dict[str, Any]],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """CI's cut-down: 2 episodes of the expert on two factors through the real command line."""
    (tmp_path / "rig.json").write_text(json.dumps(rig))
    out = tmp_path / "card"
    code = main(["eval", TASK, "--policy", "expert", "--episodes", "2", "--factors", "rgb_noise,latency_1",
                 "--renderer", "tiny", "--cams", str(tmp_path / "rig.json"), "--out", str(out), "--quiet",
                 "--videos", "1"])
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert report["factors"] == ["control", "rgb_noise", "latency_1"]
    for name, f in report["per_factor"].items():
        assert f["n_episodes"] == 2 and f["n_success"] == 2 and f["pc_success"] == 100.0
        assert {"pc_success_ci95", "avg_sum_reward", "avg_length", "parameters", "episodes_per_min"} <= set(f)
        assert (name == "control") == ("vs_control" not in f)
    assert report["per_factor"]["latency_1"]["parameters"] == {"latency": 1}
    assert report["aggregated"]["pc_success"] == 100.0 and len(report["per_episode"]) == 6
    assert "| rgb_noise | 100.0 [34.2, 100.0] | +0.0 [" in (out / "report.md").read_text()
    assert (out / "report.png").stat().st_size > 1000
    assert sorted(p.name for p in (out / "videos").iterdir()) == [
        "control_seed0.mp4", "latency_1_seed0.mp4", "rgb_noise_seed0.mp4"]
    assert "control: 100.0%" in capsys.readouterr().out
    assert main(["eval", TASK, "--policy", "expert", "--episodes", "2", "--factors", "fog", "--out",
                 str(tmp_path / "x")]) == 2
    assert "unknown factor 'fog'" in capsys.readouterr().err


def test_resume_after_a_kill_goes_on_without_redoing_episodes(tmp_path: Path, rig: list[dict[str, Any]]) -> None:
    """A real ``pixelrig eval`` process killed (SIGKILL) once some but not all episodes are on disk; ``--resume``
    keeps those rows as they are, runs only the rest, and ends with the rows of an uninterrupted run."""
    (tmp_path / "rig.json").write_text(json.dumps(rig))
    out = tmp_path / "run"
    episodes, steps = 12, 12
    command = ["eval", TASK, "--policy", "random", "--episodes", str(episodes), "--factors", "light",
               "--renderer", "tiny", "--cams", str(tmp_path / "rig.json"), "--out", str(out), "--quiet",
               "--max-episode-steps", str(steps)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "pixelrig", *command], env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log = out / "episodes.jsonl"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if log.is_file() and len(log.read_text().splitlines()) >= 3:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    before = read_rows(log)
    assert proc.returncode == -signal.SIGKILL
    assert 3 <= len(before) < 2 * episodes, f"killed after {len(before)} of {2 * episodes} episodes"
    kwargs = {"episodes": episodes, "factors": "light", "cams": rig, "renderer": "tiny", "progress": False,
              "env_kwargs": {"max_episode_steps": steps}}
    resumed = evaluate(TASK, "random", out=out, resume=True, **kwargs)
    after = read_rows(log)
    assert after[:len(before)] == before  # the finished episodes stay, as they were
    assert resumed.episodes_run == 2 * episodes - len(before)  # nothing redone
    assert resumed.per_episode == evaluate(TASK, "random", **kwargs).per_episode
