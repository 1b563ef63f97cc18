"""What the dataset tests share: the recorded env and rigs, live episodes to compare a dataset with and recording them
(conftest's ``robomimic_run`` and ``lerobot_run`` record with these), reading a dataset with the real readers, and a
full disk."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import Camera, PixelObs
from pixelrig.datasets import (
    DatasetRecorder,
    open_dataset,
)
from pixelrig.experts.push import PushExpert

h5py = pytest.importorskip("h5py", reason='robomimic datasets need h5py: pip install "pixelrig[datasets]"')
pa = pytest.importorskip("pyarrow", reason='LeRobot datasets need pyarrow: pip install "pixelrig[datasets]"')

REPO = Path(__file__).resolve().parent.parent
READER_VENV = Path(os.environ.get("LEROBOT_VENV", REPO / ".venv-lerobot"))  # as scripts/lerobot-venv.sh takes it
ENV_ID = "pixelrig/PandaPush-v0"
STEPS = 6  # TimeLimit of the recorded episodes: short, so the suite stays quick

RIG = [
    Camera("front", width=40, height=32, fov=55.0, near=0.05, far=4.0, eye=(0.95, 0.0, 1.25), target=(0.5, 0.0, 0.63),
           modalities=("rgb", "depth", "label")),
    Camera("wrist", width=24, height=24, mount="panda_hand", offset=((0.07, 0.0, 0.03), (0.0, 0.0, 0.0, 1.0)),
           far=2.0, modalities=("rgb",)),
]
NEW_RIG = [
    Camera("top", width=32, height=24, eye=(0.5, 0.0, 1.6), target=(0.5, 0.0, 0.6), up=(1.0, 0.0, 0.0), far=3.0,
           modalities=("rgb", "depth")),
]


def make_env(renderer: str = "tiny", cams: list[Camera] = RIG, steps: int = STEPS) -> gym.Env:
    return PixelObs(gym.make(ENV_ID, renderer=renderer, max_episode_steps=steps), cams=cams)


class Episode(list[dict]):
    """One live episode: the observations the actions were taken in plus the final one (a list, as before), and
    what each ``env.step`` was given and returned, for comparing a dataset with the run that produced it.

    Attributes:
        actions: the actions taken, as passed to ``env.step``.
        rewards: the rewards ``env.step`` returned.
        terminated: its ``terminated`` flags.
        truncated: its ``truncated`` flags.
        cut: whether the episode was stopped before it ended (``cut_last``, or the given actions ran out): a
            recorder then stores its last frame as truncated.
    """

    def __init__(self, observations: list[dict]) -> None:
        super().__init__(observations)
        self.actions: list[np.ndarray] = []
        self.rewards: list[float] = []
        self.terminated: list[bool] = []
        self.truncated: list[bool] = []
        self.cut = False

    def stored_truncated(self) -> list[bool]:
        """The ``truncated`` flags a recorder stores: the live ones, and the last one set when the episode was
        cut."""
        return self.truncated[:-1] + [self.truncated[-1] or self.cut]


def run_episodes(env: gym.Env, seeds: list[int], cut_last: int | None = None,
                 actions: list[list[np.ndarray]] | None = None) -> list[Episode]:
    """Step episodes with the scripted pusher (or given actions); the last episode is cut after ``cut_last``
    steps when given. Returns, per episode, the observations the actions were taken in plus the final one, with
    the actions, rewards and flags of each step (:class:`Episode`)."""
    episodes = []
    for i, seed in enumerate(seeds):
        obs, _ = env.reset(seed=seed)
        policy, seen, done, t = PushExpert(), Episode([obs]), False, 0
        while not done:
            if cut_last is not None and i == len(seeds) - 1 and t == cut_last:
                seen.cut = True
                break
            action = actions[i][t] if actions is not None else policy(obs["state"])
            seen.actions.append(np.array(action, copy=True))
            obs, reward, terminated, truncated, _ = env.step(action)
            seen.append(obs)
            seen.rewards.append(float(reward))
            seen.terminated.append(bool(terminated))
            seen.truncated.append(bool(truncated))
            done, t = terminated or truncated, t + 1
            if actions is not None and t == len(actions[i]) and not done:
                seen.cut = True
                break
        episodes.append(seen)
    return episodes


def record_env(env: gym.Env, path: Path, fmt: str, seeds: list[int], cut_last: int | None = None,
               actions: list[list[np.ndarray]] | None = None, **kw) -> list[Episode]:
    """Record :func:`run_episodes` of ``env`` into a dataset at ``path`` (``kw`` go to DatasetRecorder), closed
    at the end."""
    recorder = DatasetRecorder(env, path, format=fmt, **{"task": "push the cube", **kw})
    try:
        return run_episodes(recorder, seeds, cut_last, actions)
    finally:
        recorder.close()


def record(path: Path, fmt: str, seeds: list[int], renderer: str = "tiny", cams: list[Camera] = RIG,
           cut_last: int | None = None, actions: list[list[np.ndarray]] | None = None, **kw) -> list[Episode]:
    return record_env(make_env(renderer, cams), path, fmt, seeds, cut_last, actions, **kw)


def assert_frames_are_the_live_steps(path: Path, episodes: list[Episode], reward_dtype: type[np.floating]) -> None:
    """``open_dataset(path).frames(e)`` read back each live step: its action, its reward (the live float cast to
    the format's ``reward_dtype``) and flags (the last one truncated where the episode was cut)."""
    reader = open_dataset(path)
    try:
        assert reader.num_episodes == len(episodes)
        for e, seen in enumerate(episodes):
            frames = list(reader.frames(e))
            assert [f.reward for f in frames] == [float(reward_dtype(r)) for r in seen.rewards]
            assert [f.action.tolist() for f in frames] == [np.asarray(a, np.float32).tolist() for a in seen.actions]
            assert [f.terminated for f in frames] == seen.terminated
            assert [f.truncated for f in frames] == seen.stored_truncated()
    finally:
        reader.close()


def reader_venv_or_skip() -> Path:
    """The readers' venv's python; skips (fails with PIXELRIG_REQUIRE_LEROBOT=1) when the venv is not built (its
    build stamp, written last by scripts/lerobot-venv.sh, is missing)."""
    python, stamp = READER_VENV / "bin" / "python", READER_VENV / ".pixelrig-stamp"
    if not (python.is_file() and stamp.is_file()):
        if os.environ.get("PIXELRIG_REQUIRE_LEROBOT") == "1":
            pytest.fail(f"PIXELRIG_REQUIRE_LEROBOT=1 but {READER_VENV} is not built: run scripts/lerobot-venv.sh")
        pytest.skip(f"the real readers' venv is not built ({stamp} missing): run scripts/lerobot-venv.sh")
    return python


def run_reader(kind: str, dataset: Path, out: Path) -> tuple[dict, dict]:
    """Load ``dataset`` with the real reader in the readers' venv; returns (arrays, meta)."""
    python = reader_venv_or_skip()
    env = {**os.environ, "HF_HOME": str(out.parent / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PYTHONPATH": ""}
    proc = subprocess.run([str(python), str(REPO / "tests" / "dataset_readers.py"), kind, str(dataset), str(out)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=out.parent)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with np.load(out) as z:
        arrays = {k: z[k] for k in z.files if k != "__meta__"}
        meta = json.loads(str(z["__meta__"]))
    return arrays, meta


def fail_second_lerobot_episode_with_enospc(monkeypatch: pytest.MonkeyPatch) -> None:
    """The LeRobot writer's second episode fails to open with ENOSPC, as pyarrow reports a full disk (where no tmpfs
    can be mounted)."""
    import pixelrig.datasets.lerobot as lerobot

    calls = {"n": 0}
    real = lerobot._Episode.__init__

    def failing_init(self: lerobot._Episode, writer: lerobot.LeRobotWriter) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(errno.ENOSPC, "[Errno 28] Error writing bytes to file. Detail: No space left on device")
        real(self, writer)

    monkeypatch.setattr(lerobot._Episode, "__init__", failing_init)




@contextlib.contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path | None]:
    """A tmpfs mounted at ``where`` (root only); yields None where mounting is not permitted."""
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        yield None
        return
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
