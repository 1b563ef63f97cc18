"""Replay: bit-exact against a live run of the same actions with the new rig (tiny and gl, other robots, a randomised
env), the pose restore it uses, worker processes equal to one process, and failures that leave nothing behind."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import pixelrig
from pixelrig import Camera, PixelObs, Snapshot
from pixelrig.datasets import (
    DatasetWriteError,
    depth_to_mm,
    open_dataset,
    replay,
)
from pixelrig.experts.push import PushExpert
from tests.conftest import bang_bang_action, gl_or_skip
from tests.dataset_runs import (
    ENV_ID,
    NEW_RIG,
    RIG,
    STEPS,
    Episode,
    fail_second_lerobot_episode_with_enospc,
    make_env,
    record,
    record_env,
    run_episodes,
)

h5py = pytest.importorskip("h5py", reason='robomimic datasets need h5py: pip install "pixelrig[datasets]"')
pa = pytest.importorskip("pyarrow", reason='LeRobot datasets need pyarrow: pip install "pixelrig[datasets]"')
import pyarrow.parquet as pq  # noqa: E402

# ---- replay -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("renderer", ["tiny", "gl"])
def test_replay_equals_a_live_run_with_the_new_rig(renderer: str, tmp_path: Path) -> None:
    """Re-rendered images equal, bit for bit, those of a live run of the recorded actions with the new rig, in both
    formats (LeRobot's video compared frame for frame with a live LeRobot recording: same pixels in, same video)."""
    if renderer == "gl":
        gl_or_skip()
    src = tmp_path / "src.hdf5"
    recorded = record(src, "robomimic", [3, 4], renderer=renderer)
    reader = open_dataset(src)
    actions = [[f.action for f in reader.frames(e)] for e in range(reader.num_episodes)]
    reader.close()

    replayed_rm = replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False)
    replay(src, tmp_path / "new", NEW_RIG, format="lerobot", progress=False)
    assert (replayed_rm.episodes, replayed_rm.frames) == (2, sum(len(a) for a in actions))
    live = record(tmp_path / "live", "lerobot", [3, 4], renderer=renderer, cams=NEW_RIG, actions=actions)
    assert [len(ep) for ep in live] == [len(ep) for ep in recorded]

    new = open_dataset(tmp_path / "new.hdf5")
    assert new.info.replayed_from == str(src.resolve()) and new.info.renderer == renderer
    for e, seen in enumerate(live):
        np.testing.assert_array_equal(new.rgb(e, "top"), np.stack([o["top/rgb"] for o in seen[:-1]]))
        np.testing.assert_array_equal(new.rgb(e, "top", "next_obs"), np.stack([o["top/rgb"] for o in seen[1:]]))
        np.testing.assert_array_equal(new.depth(e, "top"),
                                      np.stack([depth_to_mm(o["top/depth"], 3.0) for o in seen[:-1]]))
    new.close()
    replayed, live_lr = open_dataset(tmp_path / "new"), open_dataset(tmp_path / "live")
    for e in range(2):
        np.testing.assert_array_equal(replayed.depth(e, "top"), live_lr.depth(e, "top"))
        np.testing.assert_array_equal(np.stack(list(replayed.rgb(e, "top"))), np.stack(list(live_lr.rgb(e, "top"))))
        assert [f.action.tolist() for f in replayed.frames(e)] == [a.tolist() for a in actions[e]]


def test_replay_of_a_randomised_env_is_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Randomised colours, camera jitter (of the new rig too) and body positions: the env is rebuilt from the
    recorded kwargs (a Randomization dataclass) and each episode's draw comes back with its first snapshot, restored
    into the world as the last episode left it (not rebuilt: the same parameters are randomised), so every
    randomised value must be set again."""
    from pixelrig import Randomization
    from pixelrig.envs.base import BulletEnv

    rebuilds: list[int] = []
    rebuild = BulletEnv._rebuild

    def counted(self: BulletEnv) -> None:
        rebuilds.append(self.client)
        rebuild(self)

    randomize = Randomization(link_colors=True, camera_position=0.01, camera_rotation=0.02,
                              body_position={"cube": ((0.40, -0.15, 0.65), (0.60, 0.15, 0.65))})

    def randomised(cams: list[Camera]) -> gym.Env:
        return PixelObs(gym.make(ENV_ID, renderer="tiny", max_episode_steps=4, randomize=randomize), cams=cams)

    record_env(randomised(RIG), tmp_path / "src.hdf5", "robomimic", [7, 8])
    reader = open_dataset(tmp_path / "src.hdf5")
    actions = [[f.action for f in reader.frames(e)] for e in range(2)]
    assert reader.info.env_kwargs["randomize"]["__dataclass__"] == "pixelrig.envs.randomization:Randomization"
    reader.close()
    monkeypatch.setattr(BulletEnv, "_rebuild", counted)
    replay(tmp_path / "src.hdf5", tmp_path / "new.hdf5", NEW_RIG, progress=False)
    monkeypatch.undo()
    assert len(rebuilds) == 2  # making the env, and the first episode (its world held no randomised values yet)
    live = run_episodes(randomised(NEW_RIG), [7, 8], actions=actions)
    new = open_dataset(tmp_path / "new.hdf5")
    for e, seen in enumerate(live):
        np.testing.assert_array_equal(new.rgb(e, "top"), np.stack([o["top/rgb"] for o in seen[:-1]]))
        np.testing.assert_array_equal(new.rgb(e, "top", "next_obs"), np.stack([o["top/rgb"] for o in seen[1:]]))
    new.close()


def test_cli_replay(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path,
                    capsys: pytest.CaptureFixture[str]) -> None:
    from pixelrig.tools.cli import main

    rig = tmp_path / "rig.toml"
    rig.write_text(textwrap.dedent("""
        [[cameras]]
        name = "top"
        width = 32
        height = 24
        eye = [0.5, 0.0, 1.6]
        target = [0.5, 0.0, 0.6]
        up = [1.0, 0.0, 0.0]
        far = 3.0
        modalities = ["rgb", "depth"]
    """))
    src, episodes = robomimic_run
    dst = tmp_path / "top.hdf5"
    assert main(["replay", str(src), str(dst), "--cams", str(rig), "--quiet"]) == 0
    assert "2 episodes" in capsys.readouterr().out
    reader = open_dataset(dst)
    assert reader.info.rgb == ("top",) and reader.episode_length(1) == 3
    reader.close()
    assert main(["replay", str(src), str(dst), "--cams", str(rig), "--quiet"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["replay", str(src), str(dst), "--cams", str(rig), "--quiet", "--overwrite", "--workers", "0"]) == 2
    assert "workers=0 must be a whole number >= 1" in capsys.readouterr().err
    assert main(["replay", str(src), str(dst), "--cams", str(rig), "--quiet", "--overwrite", "--workers", "1"]) == 0
    assert "1 process)" in capsys.readouterr().out


# ---- replay: fast restore, worker processes, failures ---------------------------------------------------------


def stepped_states(n: int) -> tuple[gym.Env, list[bytes]]:
    """A PandaPush env and the .bullet states of its first n steps (the pusher's actions: the gripper meets the
    cube, so contacts change along the way)."""
    from pixelrig.envs.state import save_bullet

    env = make_env(steps=n + 1)
    obs, _ = env.reset(seed=2)
    policy, states = PushExpert(), []
    for _ in range(n):
        obs, *_ = env.step(policy(obs["state"]))
        states.append(save_bullet(env.unwrapped.client))
    return env, states


def test_pose_restore_equals_pybullets_full_restore() -> None:
    """The cut-down .bullet restore sets every pose, velocity and link frame as pybullet's full restore does, and
    the images are equal; PoseRestorer proves it before using it, and anything that is not a .bullet file is
    restored whole."""
    from pixelrig.datasets.bullet_file import PoseRestorer, pose_chunks, pose_signature
    from pixelrig.envs.state import restore_bullet

    env, states = stepped_states(12)
    client = env.unwrapped.client
    restorer = PoseRestorer(client)
    restore_bullet(client, states[0])
    assert restorer.fast is None and restorer.check(states[0]) is True and restorer.fast is True
    for i, state in enumerate(states):
        cut = pose_chunks(state)
        assert cut is not None and len(cut) < len(state) / 2
        restore_bullet(client, state)
        full, image = pose_signature(client), env.render_rig()["front/rgb"]
        restore_bullet(client, states[(i + 5) % len(states)])  # somewhere else
        restorer.restore(state)
        assert pose_signature(client) == full
        np.testing.assert_array_equal(env.render_rig()["front/rgb"], image)
    assert pose_chunks(b"not a bullet file") is None and pose_chunks(states[0][:5000]) is None
    env.close()


def test_physics_of_reads_only_the_physics_and_checks_like_from_bytes() -> None:
    """What replay reads per frame: the snapshot's identity and .bullet state, with the same checks as a full
    parse (a flipped byte is a checksum error, foreign bytes are named)."""
    from pixelrig.snapshots import physics_of

    env = make_env()
    env.reset(seed=1)
    env.step(env.action_space.sample())
    data = pixelrig.snapshot(env).to_bytes()
    env.close()
    snap = Snapshot.from_bytes(data)
    assert physics_of(data) == (snap.identity, snap.env_state["physics"])
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        physics_of(bytes(flipped))
    with pytest.raises(ValueError, match="not a pixelrig snapshot"):
        physics_of(b"GIF89a" + bytes(100))


def test_images_allow_restoring_in_place_only_with_the_same_randomised_values() -> None:
    from pixelrig import Randomization

    env = gym.make(ENV_ID, renderer="tiny", randomize=Randomization(link_colors=True))
    env.reset(seed=2)
    state = pixelrig.snapshot(env).env_state
    base = env.unwrapped
    env.reset(seed=3)  # other colours, the same links randomised
    assert base.can_show_in_place(state)
    fewer = {**state, "randomization": {k: (v[1:] if isinstance(v, list) else v)
                                        for k, v in state["randomization"].items()}}
    assert fewer != state and not base.can_show_in_place(fewer)
    env.close()


def test_pybullet_caches_state_files_by_name() -> None:
    """Why restore_bullet names every state file afresh and empties pybullet's file cache now and then: pybullet
    keeps each file it reads, by name, until its client disconnects, and serves the old contents for a name it has
    seen even after the file changed."""
    import pybullet as pb

    from pixelrig.datasets.bullet_file import pose_signature

    env, states = stepped_states(4)
    client = env.unwrapped.client
    path = Path(tempfile.mkdtemp()) / "state.bullet"
    try:
        path.write_bytes(states[0])
        pb.restoreState(fileName=str(path), physicsClientId=client)
        first = pose_signature(client)
        path.write_bytes(states[3])
        pb.restoreState(fileName=str(path), physicsClientId=client)
        assert pose_signature(client) == first  # states[0] again, not states[3]
    finally:
        shutil.rmtree(path.parent)
        env.close()


def test_pose_restore_falls_back_when_it_would_not_be_exact() -> None:
    from pixelrig.datasets.bullet_file import PoseRestorer, pose_signature

    env, states = stepped_states(3)
    client = env.unwrapped.client
    restorer = PoseRestorer(client)
    restorer.restore(states[0])
    assert restorer.check(states[2]) is False  # the world is in states[0]'s state, not states[2]'s: they differ
    assert restorer.fast is False
    expected = pose_signature(client)  # the check restored states[2] in full after its failed comparison
    restorer.restore(states[1])
    restorer.restore(states[2])
    assert pose_signature(client) == expected
    env.close()


def datasets_equal(a: Path, b: Path) -> None:
    """Two replayed datasets hold the same bytes (robomimic: every array and attribute; LeRobot: every table, the
    metadata and the decoded videos)."""
    if a.suffix == ".hdf5":
        with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
            names: list[str] = []
            fa.visit(names.append)
            other: list[str] = []
            fb.visit(other.append)
            assert names == other
            for name in names:
                assert dict(fa[name].attrs) == dict(fb[name].attrs), name
                if isinstance(fa[name], h5py.Dataset):
                    assert fa[name][()].tobytes() == fb[name][()].tobytes(), name
        return
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files:
        if rel.suffix == ".parquet":
            assert pq.read_table(a / rel).equals(pq.read_table(b / rel)), rel
        elif rel.suffix == ".json":
            assert json.loads((a / rel).read_text()) == json.loads((b / rel).read_text()), rel
    ra, rb = open_dataset(a), open_dataset(b)
    for e in range(ra.num_episodes):
        for cam in ra.info.rgb:
            np.testing.assert_array_equal(np.stack(list(ra.rgb(e, cam))), np.stack(list(rb.rgb(e, cam))))


@pytest.mark.parametrize("renderer", ["tiny", "gl"])
def test_replay_in_worker_processes_equals_replay_in_this_one(renderer: str, tmp_path: Path) -> None:
    """Worker processes write the same bytes as replaying in this process, episodes in order (workers=3: worker 0
    renders episodes 0 and 2, worker 1 episode 1), in both formats; and they equal the recording where the rig is
    the recorded one."""
    if renderer == "gl":
        gl_or_skip()
    src = tmp_path / "src.hdf5"
    record(src, "robomimic", [0, 1, 2], renderer=renderer, cut_last=2)
    for fmt, suffix, counts in (("robomimic", ".hdf5", (2, 3)), ("lerobot", "", (3,))):
        one = replay(src, tmp_path / f"one{suffix}", NEW_RIG, format=fmt, progress=False, workers=1)
        assert one.workers == 1 and one.frames == 2 * STEPS + 2
        for n in counts:
            many = replay(src, tmp_path / f"many{suffix}", NEW_RIG, format=fmt, progress=False, workers=n,
                          overwrite=True)
            assert many.workers == n and many.frames == one.frames
            datasets_equal(tmp_path / f"one{suffix}", tmp_path / f"many{suffix}")
    again = replay(src, tmp_path / "again.hdf5", RIG, progress=False, workers=2)
    assert again.workers == 2
    reader = open_dataset(src)
    for copy in ("one", "one.hdf5", "again.hdf5"):  # snapshots copied (robomimic to robomimic: compressed as they are)
        replayed = open_dataset(tmp_path / copy)
        for e in range(3):
            assert [f.snapshot for f in replayed.frames(e)] == [f.snapshot for f in reader.frames(e)]
            assert replayed.final_snapshot(e) == reader.final_snapshot(e)
        replayed.close()
    recorded = open_dataset(tmp_path / "again.hdf5")
    for e in range(3):
        for group in ("obs", "next_obs"):
            for cam in ("front", "wrist"):
                np.testing.assert_array_equal(recorded.rgb(e, cam, group), reader.rgb(e, cam, group))
            np.testing.assert_array_equal(recorded.depth(e, "front", group), reader.depth(e, "front", group))
    reader.close()
    recorded.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.hdf5", "many", "many.hdf5", "one", "one.hdf5",
                                                          "src.hdf5"]


def test_copied_snapshots_must_be_the_episodes(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path) -> None:
    """A robomimic writer told to copy an episode's snapshots from another file checks that they are that
    episode's (same count and sizes) before it commits the episode."""
    from pixelrig.datasets.formats import open_writer
    from pixelrig.datasets.steps import Observation, Step

    src, _ = robomimic_run
    reader = open_dataset(src)
    obs = Observation(rgb={c: reader.rgb(0, c)[0] for c in reader.info.rgb},
                      depth={c: reader.depth(0, c)[0] for c in reader.info.depth},
                      state=reader.demo(0)["obs/state"][0])
    writer = open_writer(tmp_path / "x.hdf5", "robomimic", reader.info)
    writer.take_snapshots_from(src, "demo_1")  # 3 frames, and episode 0 has 6
    for f in reader.frames(0):
        writer.add_frame(Step(obs, f.action, f.reward, f.terminated, f.truncated, f.snapshot, obs))
    with pytest.raises(RuntimeError, match=re.escape("must come before the episode's first frame")):
        writer.take_snapshots_from(src, "demo_0")
    with pytest.raises(ValueError, match=re.escape(f"{src}:demo_1 does not hold the snapshots of the episode")):
        writer.end_episode(reader.final_snapshot(0), "truncated")
    writer.abort_episode()
    writer.close()
    reader.close()
    check = open_dataset(tmp_path / "x.hdf5")
    assert check.num_episodes == 0
    check.close()


def test_default_worker_count() -> None:
    """One process per usable core, with at most one worker per episode and per MIN_FRAMES_PER_WORKER frames; 1
    when make_env cannot go to another process."""
    import functools

    from pixelrig.datasets.replay import MIN_FRAMES_PER_WORKER, usable_cpus, worker_count

    cpus = usable_cpus()
    big = 100 * MIN_FRAMES_PER_WORKER
    assert worker_count(None, None, 1000, big) == min(cpus, 101)
    assert worker_count(None, None, 2, big) == min(cpus, 3)
    assert worker_count(None, None, 50, 2 * MIN_FRAMES_PER_WORKER - 1) == min(cpus, 2)
    assert worker_count(None, None, 50, MIN_FRAMES_PER_WORKER - 1) == 1
    assert worker_count(None, lambda: gym.make(ENV_ID), 50, big) == 1
    assert worker_count(None, functools.partial(gym.make, ENV_ID), 50, big) == min(cpus, 51)
    assert worker_count(5, None, 2, big) == 3  # never more workers than episodes
    assert worker_count(1, lambda: gym.make(ENV_ID), 50, big) == 1


@pytest.mark.parametrize("workers", [0, -1, 2.0, True, "2"])
def test_bad_workers_value_is_named(workers: object, robomimic_run: tuple[Path, list[Episode]],
                                    tmp_path: Path) -> None:
    src, _ = robomimic_run
    with pytest.raises(ValueError, match=re.escape(f"workers={workers!r} must be a whole number >= 1 (1: everything "
                                                   "in this process) or None")):
        replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False, workers=workers)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_workers_need_a_make_env_that_pickles(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path) -> None:
    src, _ = robomimic_run
    with pytest.raises(ValueError, match=re.escape("workers=2 runs make_env in worker processes, but it cannot be "
                                                   "pickled") + ".*" + re.escape("or pass workers=1")):
        replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False, workers=2,
               make_env=lambda: gym.make(ENV_ID, renderer="tiny", max_episode_steps=STEPS))
    assert list(tmp_path.iterdir()) == []


def corrupt_snapshot(path: Path, episode: int, frame: int) -> None:
    with h5py.File(path, "r+") as f:
        states = f[f"data/demo_{episode}/states"]
        row = states[frame]
        row[200] ^= 0xFF
        states[frame] = row


@pytest.mark.parametrize("workers", [1, 3])
def test_a_failing_replay_leaves_nothing_behind(workers: int, robomimic_run: tuple[Path, list[Episode]],
                                                tmp_path: Path) -> None:
    """A corrupted snapshot in episode 1 (rendered by worker 1 with workers=3) is raised in the caller with the
    episode and frame, after episode 0 was written: nothing is left at dst, and an old dataset there (overwrite=True)
    stays as it was."""
    src = tmp_path / "src.hdf5"
    shutil.copy(robomimic_run[0], src)
    corrupt_snapshot(src, 1, 2)
    with pytest.raises(ValueError, match=re.escape("episode 1 frame 2: snapshot is corrupted or truncated")):
        replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False, workers=workers)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.hdf5"]

    old = tmp_path / "old"
    replay(robomimic_run[0], old, NEW_RIG, format="lerobot", progress=False, workers=1)
    before = {p.relative_to(old): p.read_bytes() for p in old.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match=re.escape("episode 1 frame 2: snapshot is corrupted")):
        replay(src, old, NEW_RIG, format="lerobot", progress=False, workers=workers, overwrite=True)
    assert {p.relative_to(old): p.read_bytes() for p in old.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old", "src.hdf5"]


def test_an_interrupted_replay_leaves_nothing_behind(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the middle of episode 1 (episode 0 written): nothing at dst, the old dataset there unchanged."""
    import pixelrig.datasets.rerender as rerender

    src, _ = robomimic_run
    old = tmp_path / "old.hdf5"
    replay(src, old, NEW_RIG, progress=False, workers=1)
    before = old.read_bytes()
    calls, real = {"n": 0}, rerender.SnapshotDrawer.observe

    def interrupted(self: rerender.SnapshotDrawer, *args: object) -> object:
        calls["n"] += 1
        if calls["n"] == STEPS + 2:
            raise KeyboardInterrupt
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(rerender.SnapshotDrawer, "observe", interrupted)
    for dst in (tmp_path / "new.hdf5", old):
        calls["n"] = 0
        with pytest.raises(KeyboardInterrupt):
            replay(src, dst, NEW_RIG, progress=False, workers=1, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.hdf5"] and old.read_bytes() == before


def env_dying_on_third_pose_restore() -> gym.Env:
    """make_env for replay workers: the worker process exits (code 7) at its third per-frame pose restore."""
    import itertools

    from pixelrig.datasets import bullet_file as poses

    calls, real = itertools.count(), poses.PoseRestorer.restore

    def restore(self: poses.PoseRestorer, data: bytes) -> None:
        if next(calls) == 2:
            os._exit(7)
        real(self, data)

    poses.PoseRestorer.restore = restore  # type: ignore[method-assign]  # in the worker process only
    return gym.make(ENV_ID, renderer="tiny", max_episode_steps=STEPS)


def test_a_worker_that_dies_is_a_clear_error(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path) -> None:
    from pixelrig.datasets import ReplayWorkerError

    src, _ = robomimic_run
    with pytest.raises(ReplayWorkerError, match=r"replay worker 0 \(pid \d+\) died with exit code 7 while rendering "
                                                r"episode 0"):
        replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False, workers=2, make_env=env_dying_on_third_pose_restore)
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_during_replay_leaves_nothing(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fail_second_lerobot_episode_with_enospc(monkeypatch)
    src, _ = robomimic_run
    dst = tmp_path / "new"
    with pytest.raises(DatasetWriteError, match=re.escape(f"replay could not write {str(dst)!r} (No space left on "
                                                          "device), so nothing was left there: free space")):
        replay(src, dst, NEW_RIG, format="lerobot", progress=False, workers=1)
    assert list(tmp_path.iterdir()) == []


# ---- beyond PandaPush: other robot files, bang-bang actions -------------------------------------------------

SIDE = [Camera("side", width=40, height=32, eye=(0.0, 1.8, 1.0), target=(0.0, 0.0, 0.4), far=4.0,
               modalities=("rgb", "depth"))]


@pytest.mark.parametrize(("source", "control", "renderer"), [
    ("kuka_iiwa/model.urdf", "torque", "tiny"),
    ("r2d2.urdf", "velocity", "tiny"),
    ("mjcf/ant.xml", "torque", "gl"),
])
def test_replay_of_other_robots_at_full_effort_equals_a_live_run(source: str, control: str, renderer: str,
                                                                tmp_path: Path) -> None:
    """A robot file from pybullet_data, driven at the bounds of its action space through ``pixelrig/Robot-v0``,
    recorded with one camera and replayed with a new side camera: the images equal a live run of the
    same actions with that camera, rgb bit for bit (robomimic stores images without loss) and depth to the
    millimetre it is stored in, episode by episode."""
    if renderer == "gl":
        gl_or_skip()
    steps = 40

    def make(cams: list[Camera]) -> gym.Env:
        return PixelObs(gym.make("pixelrig/Robot-v0", source=source, control=control, renderer=renderer,
                                 max_episode_steps=steps), cams=cams)

    front = [Camera("front", width=32, height=24, eye=(1.6, 0.0, 1.2), target=(0.0, 0.0, 0.4), far=4.0,
                    modalities=("rgb", "depth"))]
    src, dst = tmp_path / "src.hdf5", tmp_path / "side.hdf5"
    recorded = make(front)
    rngs = [np.random.default_rng(seed) for seed in (0, 1)]
    actions = [[bang_bang_action(recorded.action_space, rng) for _ in range(steps)] for rng in rngs]
    record_env(recorded, src, "robomimic", [0, 1], actions=actions, task="full effort")
    replay(src, dst, SIDE, progress=False)

    live = make(SIDE)
    try:
        seen = run_episodes(live, [0, 1], actions=actions)
    finally:
        live.close()
    new = open_dataset(dst)
    try:
        assert new.num_episodes == 2 and [new.episode_length(e) for e in range(2)] == [steps, steps]
        for e, episode in enumerate(seen):
            rgb = np.stack([o["side/rgb"] for o in episode[:-1]])
            assert (rgb.max(axis=-1) > 0).mean() > 0.5, "the side camera should see the floor and the robot"
            assert len({frame.tobytes() for frame in rgb}) > steps // 4, "the robot should move in view"
            np.testing.assert_array_equal(new.rgb(e, "side"), rgb)
            np.testing.assert_array_equal(new.rgb(e, "side", "next_obs"),
                                          np.stack([o["side/rgb"] for o in episode[1:]]))
            np.testing.assert_array_equal(new.depth(e, "side"),
                                          np.stack([depth_to_mm(o["side/depth"], 4.0) for o in episode[:-1]]))
            assert [f.action.tolist() for f in new.frames(e)] == [a.tolist() for a in actions[e]]
        moved = [np.abs(episode[-1]["state"] - episode[0]["state"]).max() for episode in seen]
        assert min(moved) > 0.05, f"full effort should move the robot: state changed by {moved}"
    finally:
        new.close()


def test_a_wrapper_stack_replay_cannot_rebuild_is_named_with_the_fix(tmp_path: Path) -> None:
    """An env wrapped by hand (``TimeLimit`` over an unwrapped env) records a wrapper stack that ``gym.make(id)``
    does not rebuild: replay says so, naming both stacks and ``make_env=``, and leaves no destination behind;
    with ``make_env=`` building the same stack it replays."""
    def by_hand() -> gym.Env:
        return gym.wrappers.TimeLimit(gym.make(ENV_ID, renderer="tiny").unwrapped, max_episode_steps=STEPS)

    src = tmp_path / "src.hdf5"
    record_env(PixelObs(by_hand(), cams=RIG), src, "robomimic", [0])
    with pytest.raises(ValueError, match="make_env=") as caught:
        replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False)
    assert re.search(r"its wrapper stack: \[[^]]*TimeLimit'\]; this env's: \[[^]]*TimeLimit', [^]]*OrderEnforcing",
                     str(caught.value)), "both wrapper stacks should be named"
    assert not (tmp_path / "new.hdf5").exists()
    done = replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False, make_env=by_hand)
    assert (done.episodes, done.frames) == (1, STEPS)
