"""``pixelrig collect`` / ``collect()``: a task's expert run over seeds into one dataset, the same bytes whatever the
number of worker processes, the files DatasetRecorder writes, kept or dropped by success, resumed after a real kill
as if never interrupted, never replacing a dataset by accident, bad input named with nothing touched, loaded by
LeRobot's and robomimic's own readers, and replayed with another rig to the recorded states bit for bit.

PandaLift's expert succeeds on every seed; ``max_episode_steps=34`` makes seeds 1, 3 and 5 fail (the lift takes it
39, 35 and 38 steps), so that keeping and dropping are seen on the first seeds.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import Camera, DatasetRecorder, PixelObs
from pixelrig.cameras.rigfile import load_rig
from pixelrig.datasets import DatasetExistsError, lerobot, open_dataset
from pixelrig.datasets.collect import ATTEMPTS_PER_EPISODE, CollectReport, collect, expert_task
from pixelrig.datasets.collect_workers import run_expert
from pixelrig.experts import LiftExpert
from pixelrig.system.process import Helper
from pixelrig.tools.cli import main
from tests.dataset_runs import NEW_RIG, run_episodes, run_reader

pa = pytest.importorskip("pyarrow", reason='LeRobot datasets need pyarrow: pip install "pixelrig[datasets]"')
h5py = pytest.importorskip("h5py", reason='robomimic datasets need h5py: pip install "pixelrig[datasets]"')
import pyarrow.parquet as pq  # noqa: E402

TASK = "pixelrig/PandaLift-v0"
SHORT = {"max_episode_steps": 34}
"""Seeds 1, 3 and 5 fail under this limit (see the module docstring)."""
CAMS = [Camera("front", width=32, height=32, eye=(1.2, 0.0, 1.1), target=(0.5, 0.0, 0.62), far=3.0,
               modalities=("rgb", "depth"))]
SUFFIX = {"lerobot": "", "robomimic": ".hdf5"}


def run_collect(out: Path, **kw: object) -> CollectReport:
    """collect() of PandaLift with the small rig, tiny, quietly (``kw`` overrides)."""
    args = {"episodes": 3, "cams": CAMS, "renderer": "tiny", "progress": False, "env_kwargs": SHORT, **kw}
    return collect(TASK, out, **args)  # type: ignore[arg-type]


def files_of(path: Path) -> dict[str, bytes]:
    """Every file of a dataset (a folder's, by relative path; or the one file) and its bytes."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def assert_same_bytes(a: Path, b: Path) -> None:
    """The two datasets hold the same files, byte for byte (nothing may differ: no timestamps are stored)."""
    fa, fb = files_of(a), files_of(b)
    assert sorted(fa) == sorted(fb)
    different = [name for name in fa if fa[name] != fb[name]]
    assert not different, f"files that differ: {different}"


def attrs_of(path: Path) -> list[dict]:
    reader = open_dataset(path)
    try:
        return [reader.episode_attrs(e) for e in range(reader.num_episodes)]
    finally:
        reader.close()


def write_rig(path: Path, cams: list[Camera]) -> Path:
    """A JSON rig file of ``cams`` (as ``--cams`` takes it)."""
    path.write_text(json.dumps({"cameras": [c.to_dict() for c in cams]}))
    return path


def never(what: str) -> Callable[..., None]:
    """A stand-in for a callable this run must not reach: calling it fails the test, naming ``what``."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(what)

    return refuse


@pytest.fixture(scope="module")
def rig_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_rig(tmp_path_factory.mktemp("rig") / "rig.json", CAMS)


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, CollectReport]]:
    """Both formats, in this process (no helper is started), keeping successes: seeds 0, 2 and 4 of attempts 0-4."""
    root = tmp_path_factory.mktemp("collected")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Helper, "start", never("workers=1 started a helper process: it runs in the collecting process"))
        return {fmt: (root / f"lift{SUFFIX[fmt]}", run_collect(root / f"lift{SUFFIX[fmt]}", format=fmt))
                for fmt in SUFFIX}


# ---- what is kept, and where it comes from ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(SUFFIX))
def test_keeps_the_successful_seeds_in_order_and_reports_them(fmt: str,
                                                              collected: dict[str, tuple[Path, CollectReport]]) -> None:
    path, report = collected[fmt]
    assert (report.episodes_kept, report.episodes_tried, report.successes, report.episodes_run) == (3, 5, 3, 5)
    assert report.success_rate == pytest.approx(0.6) and report.path == path and report.workers == 1
    assert report.episodes_per_second == pytest.approx(5 / report.seconds)
    assert "3 episodes kept of 5 tried (success rate 60.0%)" in report.summary()
    assert attrs_of(path) == [{"seed": s, "success": True} for s in (0, 2, 4)]
    reader = open_dataset(path)
    assert reader.info.collected == {"task": TASK, "expert": "LiftExpert", "seed": 0, "keep": "success"}
    assert [reader.episode_end(e) for e in range(3)] == ["terminated"] * 3
    reader.close()


def test_the_summary_words_the_counts_the_processes_and_what_was_there() -> None:
    resumed = CollectReport(episodes_kept=5, episodes_tried=7, successes=5, success_rate=5 / 7, seconds=2.0,
                            episodes_per_second=1.5, path=Path("ds"), episodes_run=3, workers=2)
    assert resumed.summary() == ("wrote ds: 5 episodes kept of 7 tried (success rate 71.4%); 3 run in 2.0 s "
                                 "(1.50 episodes/s, 2 processes); 4 were there already")
    fresh = dataclasses.replace(resumed, episodes_run=7, workers=1)
    assert fresh.summary() == ("wrote ds: 5 episodes kept of 7 tried (success rate 71.4%); 7 run in 2.0 s "
                               "(1.50 episodes/s, 1 process)")


def test_the_files_are_the_ones_dataset_recorder_writes(collected: dict[str, tuple[Path, CollectReport]],
                                                        tmp_path: Path) -> None:
    """A DatasetRecorder run of the expert on seeds 0, 2 and 4 writes the same data, snapshots, videos and stats;
    collect adds each episode's seed and success to its row, and ``collected`` to the description."""
    path, _ = collected["lerobot"]
    env = DatasetRecorder(PixelObs(gym.make(TASK, renderer="tiny", **SHORT), cams=CAMS), tmp_path / "rec")
    expert = LiftExpert(env)
    for seed in (0, 2, 4):
        run_expert(env, expert, seed)
    env.close()
    ours, theirs = files_of(path), files_of(tmp_path / "rec")
    assert sorted(ours) == sorted(theirs)
    for name in ours:
        if name.startswith("meta/episodes/"):
            table = pq.read_table(path / name)
            assert table.column("pixelrig/success").to_pylist() == [True]
            assert table.drop_columns(["pixelrig/seed", "pixelrig/success"]).equals(pq.read_table(tmp_path / "rec" /
                                                                                                   name)), name
        elif name == "meta/info.json":
            mine, recorded = json.loads(ours[name]), json.loads(theirs[name])
            assert mine["pixelrig"].pop("collected") is not None and recorded["pixelrig"].pop("collected") is None
            assert mine == recorded
        else:
            assert ours[name] == theirs[name], name


@pytest.mark.parametrize("fmt", list(SUFFIX))
def test_keep_all_keeps_failures_with_their_flag(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"all{SUFFIX[fmt]}"
    capsys.readouterr()
    report = run_collect(path, format=fmt, keep="all")
    assert capsys.readouterr().err == ""  # progress=False: no bar
    assert (report.episodes_kept, report.episodes_tried, report.successes) == (3, 3, 2)
    assert attrs_of(path) == [{"seed": 0, "success": True}, {"seed": 1, "success": False},
                              {"seed": 2, "success": True}]
    reader = open_dataset(path)
    assert reader.episode_end(1) == "truncated" and reader.episode_length(1) == 34
    reader.close()
    if fmt == "robomimic":
        with h5py.File(path, "r") as f:
            assert [bool(f[f"data/demo_{k}"].attrs["pixelrig_success"]) for k in range(3)] == [True, False, True]
    else:
        assert pq.read_table(path / "meta/episodes/chunk-000/file-001.parquet").column("pixelrig/success").to_pylist() \
            == [False]


def test_an_expert_that_fails_too_often_is_named_and_keeps_what_it_has(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Every attempt fails (3 steps allowed): collect gives up after its budget, naming the dataset; the progress bar
    was redrawn at each failed attempt, however quick (a dropped attempt does not move the count, so only a forced
    redraw shows it)."""
    path = tmp_path / "hopeless.hdf5"
    capsys.readouterr()
    with pytest.raises(RuntimeError, match=re.escape(f"the LiftExpert succeeded in 0 of {2 * ATTEMPTS_PER_EPISODE} "
                                                     "attempts (seeds 0 to 5), short of the 2 episodes wanted")
                       + ".*" + re.escape(f"The 0 successful episodes are in {str(path)!r}. Check the env's kwargs "
                                          "(or the expert), or pass keep='all' to keep failures too")):
        run_collect(path, format="robomimic", episodes=2, env_kwargs={"max_episode_steps": 3}, progress=True)
    assert open_dataset(path).num_episodes == 0
    bar = capsys.readouterr().err
    assert all(f"0/{tried} succeeded]" in bar for tried in range(1, 2 * ATTEMPTS_PER_EPISODE + 1)), bar


def test_the_progress_bar_is_on_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    collect(TASK, tmp_path / "bar.hdf5", episodes=1, cams=CAMS, renderer="tiny", env_kwargs=SHORT)
    bar = capsys.readouterr().err
    assert bar.startswith("\rcollect bar.hdf5:   0%") and "| 1/1 [" in bar and "1/1 succeeded]" in bar, bar


def test_only_kept_episodes_are_encoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where an episode runs, its videos are encoded only if it is kept: from seed 1, keep="success" drops seed 1
    and keeps seed 2 (one encoding); keep="all" keeps and encodes both."""
    encoded: list[int] = []
    real = lerobot.encode_videos

    def counting(frames: list, info: object) -> dict[str, bytes]:
        encoded.append(len(frames))
        return real(frames, info)  # type: ignore[arg-type]

    monkeypatch.setattr(lerobot, "encode_videos", counting)
    report = run_collect(tmp_path / "success", seed=1, episodes=1)
    assert (report.episodes_tried, len(encoded)) == (2, 1)
    assert attrs_of(tmp_path / "success") == [{"seed": 2, "success": True}]
    encoded.clear()
    run_collect(tmp_path / "all", seed=1, episodes=2, keep="all")
    assert len(encoded) == 2 and attrs_of(tmp_path / "all") == [{"seed": 1, "success": False},
                                                                  {"seed": 2, "success": True}]


def test_an_so101_collection_records_the_real_robot_in_lerobot_only(tmp_path: Path) -> None:
    """A LeRobot dataset of an SO-101 task takes the real robot's description (its features are LeRobot's
    so101_follower's); a robomimic one has no such features and stores none."""
    env = gym.make("pixelrig/SO101Lift-v0", renderer="tiny")
    robot = env.unwrapped.lerobot_robot()  # type: ignore[attr-defined]
    env.close()
    for fmt, expected in (("lerobot", robot), ("robomimic", None)):
        path = tmp_path / f"so101{SUFFIX[fmt]}"
        collect("pixelrig/SO101Lift-v0", path, episodes=1, format=fmt, cams=CAMS, renderer="tiny", progress=False,
                env_kwargs={"max_episode_steps": 5}, keep="all")
        reader = open_dataset(path)
        assert reader.info.robot == expected, fmt
        assert reader.num_episodes == 1
        reader.close()


# ---- workers ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(SUFFIX))
def test_two_workers_write_the_same_bytes_as_one_process(fmt: str, collected: dict[str, tuple[Path, CollectReport]],
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker 0 runs attempts 0, 2, 4 and worker 1 attempts 1, 3 (both failures): every file is the same, byte for
    byte, as the one-process run's; the workers are helpers started by the launcher, and they encode the videos
    (this process starts no encoder)."""
    started: list[str] = []
    real = Helper.start.__func__  # type: ignore[attr-defined]

    def recording(cls: type[Helper], module: str, config: object, **kwargs: object) -> Helper:
        started.append(module)
        return real(cls, module, config, **kwargs)

    def no_encoding_here(*args: object, **kwargs: object) -> None:
        raise AssertionError("the writing process started a video encoder: the workers encode")

    monkeypatch.setattr(Helper, "start", classmethod(recording))
    monkeypatch.setattr(lerobot, "VideoStream", no_encoding_here)  # this process only places the workers' videos
    path = tmp_path / f"two{SUFFIX[fmt]}"
    report = run_collect(path, format=fmt, workers=2)
    assert started == ["pixelrig.datasets.collect_worker_main"] * 2
    assert (report.episodes_kept, report.episodes_tried, report.workers) == (3, 5, 2)
    assert_same_bytes(collected[fmt][0], path)


def test_videos_for_other_cameras_are_refused_naming_both(collected: dict[str, tuple[Path, CollectReport]],
                                                          tmp_path: Path) -> None:
    reader = open_dataset(collected["lerobot"][0])
    info = reader.info
    reader.close()
    writer = lerobot.LeRobotWriter(tmp_path / "ds", info)
    with pytest.raises(ValueError, match=re.escape("videos for cameras ['side']: this dataset's RGB cameras are "
                                                   "['front']")):
        writer.write_episode([], b"", "terminated", videos={"side": b""})
    assert writer.num_episodes == 0 and not (tmp_path / "ds" / ".partial").exists()
    writer.close()


def test_no_more_processes_than_attempts_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """keep="all" makes exactly one attempt per episode wanted: one episode with workers=2 runs in this process,
    and so does one more episode resumed; the report's time is this call's. cams=None: the task's default rig."""

    monkeypatch.setattr(Helper, "start", never("a helper process was started for a single attempt"))
    path = tmp_path / "one.hdf5"
    began = time.perf_counter()
    report = run_collect(path, format="robomimic", episodes=1, keep="all", workers=2, cams=None)
    took = time.perf_counter() - began
    assert (report.episodes_tried, report.successes, report.success_rate, report.workers) == (1, 1, 1.0, 1)
    assert 0 < report.seconds <= took
    reader = open_dataset(path)
    assert reader.info.rgb == ("front", "side", "wrist")  # PandaLift's default rig
    reader.close()
    report = run_collect(path, format="robomimic", episodes=2, keep="all", workers=2, cams=None, resume=True)
    assert (report.episodes_tried, report.episodes_run, report.success_rate, report.workers) == (2, 1, 0.5, 1)


def test_workers_1_takes_env_kwargs_a_worker_process_could_not_load(tmp_path: Path) -> None:
    """A value of a class defined in a function cannot be pickled: refused with workers=2 (the message says what
    to use instead), used as it is with workers=1 (it never leaves this process)."""

    class Down(tuple):  # noqa: SLOT001 - a tuple that only this function's scope can name
        pass

    kwargs = {**SHORT, "gravity": Down((0.0, 0.0, -9.81))}
    with pytest.raises(ValueError, match=r"^workers=2 sends env_kwargs to worker processes, but it cannot be pickled "
                                         r"\(.+\): use values defined at the top level of an importable module, "
                                         r"or workers=1$"):
        run_collect(tmp_path / "two.hdf5", format="robomimic", episodes=1, workers=2, env_kwargs=kwargs)
    assert not (tmp_path / "two.hdf5").exists()
    report = run_collect(tmp_path / "one.hdf5", format="robomimic", episodes=1, env_kwargs=kwargs)
    assert report.episodes_kept == 1


def test_an_error_in_a_worker_is_raised_here(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="no_such_kwarg"):
        run_collect(tmp_path / "x", workers=2, env_kwargs={"no_such_kwarg": 1})
    assert not (tmp_path / "x").exists()


# ---- the command line, resuming, refusing ------------------------------------------------------------------


def test_cli_collects_refuses_an_existing_path_and_resumes(rig_file: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lift"
    args = ["collect", "PandaLift", "--episodes", "2", "--out", str(out), "--cams", str(rig_file), "--renderer",
            "tiny", "--quiet"]
    assert main(args) == 0
    said = capsys.readouterr().out
    assert f"wrote {out}: 2 episodes kept of 2 tried (success rate 100.0%)" in said and "episodes/s" in said
    before = files_of(out)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "a lerobot dataset already exists at" in err and "--resume" in err and "--overwrite" in err
    assert files_of(out) == before
    assert main([*args[:3], "3", *args[4:], "--resume"]) == 0
    said = capsys.readouterr().out
    assert "3 episodes kept of 3 tried" in said and "1 run in" in said and "2 were there already" in said
    assert [a["seed"] for a in attrs_of(out)] == [0, 1, 2]
    assert main([*args, "--overwrite", "--seed", "7"]) == 0
    capsys.readouterr()
    assert attrs_of(out) == [{"seed": 7, "success": True}, {"seed": 8, "success": True}]


def workers_of(pid: int) -> list[int]:
    """The collect worker processes of process ``pid`` (from /proc)."""
    found = []
    for task in os.scandir(f"/proc/{pid}/task"):
        with open(os.path.join(task.path, "children")) as f:
            for child in f.read().split():
                with open(f"/proc/{child}/cmdline", "rb") as cmd:
                    if b"pixelrig.datasets.collect_worker_main" in cmd.read():
                        found.append(int(child))
    return sorted(found)


PAUSED_COLLECT = """\
import os, signal, sys
from pixelrig.datasets import collect
from pixelrig.tools.cli import main

# Ctrl-C's handler, as an interactive run has it: a suite started in the background of a non-interactive shell
# (`make test &`, as a CI runner may start it) passes SIGINT down ignored, and SIGINT then never arrived (a hang)
signal.signal(signal.SIGINT, signal.default_int_handler)
paused, go = sys.argv[1:3]
write = collect._write


def write_then_pause(writer, episode):
    \"\"\"Write the episode; after the first, say so (the file ``paused``) and block until the FIFO ``go`` opens.\"\"\"
    write(writer, episode)
    if not os.path.exists(paused):
        open(paused, "w").close()
        with open(go) as fifo:
            fifo.read()


collect._write = write_then_pause
raise SystemExit(main(["collect", *sys.argv[3:]]))
"""
"""``pixelrig collect`` (the CLI's own main, in a process of its own), paused at a known point: once the first
episode is committed it creates a file and blocks until the test opens a FIFO. A signal sent then provably lands
mid-run, one episode of the wanted ones written."""


def start_and_kill(args: list[str], sig: int, target: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``pixelrig collect ARGS`` (paused after its first episode, see :data:`PAUSED_COLLECT`) and, once it has
    paused, send ``sig`` to it (``target="collect"``) or to its second worker (``"worker"``, then let it go on)."""
    paused, go = cwd / "paused", cwd / "go.fifo"
    os.mkfifo(go)
    with open(cwd / "stdout", "w+b") as out, open(cwd / "stderr", "w+b") as err:
        child = subprocess.Popen([sys.executable, "-c", PAUSED_COLLECT, str(paused), str(go), *args], stdout=out,
                                 stderr=err, cwd=cwd)
        try:
            deadline = time.monotonic() + 300
            while not paused.exists():  # waiting for an event, not for a guess of how long it takes
                assert child.poll() is None, f"collect ended before pausing: {err_text(err)}"
                assert time.monotonic() < deadline, f"collect did not pause in 300 s: {err_text(err)}"
                time.sleep(0.05)
            if target == "collect":
                os.kill(child.pid, sig)
            else:
                os.kill(workers_of(child.pid)[1], sig)
                with open(go, "w"):  # let the collecting process go on, to find its worker dead
                    pass
            child.wait(timeout=120)  # a hang fails (the wait seen was SIGINT ignored, not load: see above)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(child.args, child.returncode, out.read(), err.read())


def err_text(err) -> str:
    err.seek(0)
    return err.read().decode(errors="replace")[-2000:]


KILLS = [("lerobot", signal.SIGKILL, "collect"), ("robomimic", signal.SIGINT, "collect"),
         ("robomimic", signal.SIGKILL, "worker")]


@pytest.mark.parametrize(("fmt", "sig", "target"), KILLS, ids=[f"{f}-{s.name}-{t}" for f, s, t in KILLS])
def test_a_killed_collection_resumes_to_the_uninterrupted_dataset(fmt: str, sig: signal.Signals, target: str,
                                                                  rig_file: Path, tmp_path: Path) -> None:
    """A real kill mid-run (two workers) of the collecting process, or of a worker: the episodes finished are
    intact; resuming (in one process) gives the bytes an uninterrupted run gives."""
    path = tmp_path / f"killed{SUFFIX[fmt]}"
    args = ["PandaLift", "--episodes", "6", "--workers", "2", "--format", fmt, "--out", str(path), "--cams",
            str(rig_file), "--renderer", "tiny"]
    done = start_and_kill(args, sig, target, tmp_path)
    if target == "worker":
        assert done.returncode == 2, done.stderr[-3000:]
        assert re.search(rb"collect worker 1 died while running attempt \d+ \(exit code -9", done.stderr)
        assert b"run collect again with resume=True (--resume) to go on" in done.stderr
    elif sig == signal.SIGKILL:
        assert done.returncode == -signal.SIGKILL
    else:
        assert done.returncode == 130, done.stderr[-3000:]
        assert b"run the same command with --resume to go on" in done.stderr
    time.sleep(0.5)  # orphaned workers notice their closed connection at their next step
    reader = open_dataset(path)
    kept = reader.num_episodes
    reader.close()
    assert kept == 1 if target == "collect" else 1 <= kept < 6  # a worker killed: the other's next one may be in
    report = collect(TASK, path, episodes=6, format=fmt, cams=CAMS, renderer="tiny", resume=True, progress=False)
    assert (report.episodes_kept, report.episodes_tried, report.episodes_run) == (6, 6, 6 - kept)
    whole = tmp_path / f"whole{SUFFIX[fmt]}"
    collect(TASK, whole, episodes=6, format=fmt, cams=CAMS, renderer="tiny", progress=False)
    assert_same_bytes(whole, path)


def test_existing_datasets_are_refused_untouched_or_replaced(collected: dict[str, tuple[Path, CollectReport]],
                                                             tmp_path: Path) -> None:
    path, _ = collected["robomimic"]
    before = files_of(path)
    with pytest.raises(DatasetExistsError, match=re.escape(f"a robomimic dataset already exists at {str(path)!r}: "
                                                            "pass overwrite=True to replace it, resume=True")):
        run_collect(path, format="robomimic")
    with pytest.raises(ValueError, match=re.escape(f"cannot resume {str(path)!r}: it was collected with "
                                                   "{'seed': 0, 'keep': 'success'}, and this run asks "
                                                   "{'seed': 1, 'keep': 'all'}: pass the same values, or "
                                                   "overwrite=True to start again")):
        run_collect(path, format="robomimic", resume=True, seed=1, keep="all")
    with pytest.raises(ValueError, match="overwrite=True and resume=True contradict"):
        run_collect(path, format="robomimic", resume=True, overwrite=True)
    assert files_of(path) == before
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="is not a lerobot dataset, so it is not deleted"):
        run_collect(notes, overwrite=True)
    assert (notes / "keep.txt").read_text() == "mine"
    recorded = tmp_path / "recorded.hdf5"
    DatasetRecorder(PixelObs(gym.make(TASK, renderer="tiny", **SHORT), cams=CAMS), recorded,
                    format="robomimic").close()
    with pytest.raises(ValueError, match=re.escape(
            f"cannot resume {str(recorded)!r}: it was not made by collect (resume a DatasetRecorder's dataset with "
            "DatasetRecorder(..., resume=True)); pick another path")):
        run_collect(recorded, format="robomimic", resume=True)


def test_resuming_goes_on_after_the_last_kept_seed(collected: dict[str, tuple[Path, CollectReport]],
                                                  tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A finished collection resumes to nothing to do; asked for one more episode, it tries seeds 5 (fails) and 6
    (its progress bar counting kept episodes from the 3 there), and equals a collection of four at once, which
    overwrite=True replaces."""
    path, _ = collected["robomimic"]
    before = files_of(path)
    capsys.readouterr()
    report = run_collect(path, format="robomimic", resume=True)
    assert capsys.readouterr().err == ""  # progress=False: no bar
    assert (report.episodes_kept, report.episodes_tried, report.successes, report.episodes_run, report.workers) == \
        (3, 5, 3, 0, 0)
    assert files_of(path) == before
    more = tmp_path / "more.hdf5"
    more.write_bytes(before[""])
    capsys.readouterr()
    report = run_collect(more, format="robomimic", episodes=4, resume=True, progress=True)
    bar = capsys.readouterr().err
    assert (report.episodes_kept, report.episodes_tried, report.successes, report.episodes_run) == (4, 7, 4, 2)
    assert [a["seed"] for a in attrs_of(more)] == [0, 2, 4, 6]
    assert bar.startswith("\rcollect more.hdf5:  75%") and " 3/4 [" in bar and "| 4/4 [" in bar, bar
    assert "?episode/s]" in bar and re.search(r"(s/episode|episode/s), 4/7 succeeded\]", bar), bar  # rate's unit
    # a failed attempt redraws the bar with the successes so far; a kept one is drawn once, by its count's update
    assert re.search(r"3/4 \[[^\]]*, 3/6 succeeded\]", bar), bar
    assert not re.search(r"3/4 \[[^\]]*, 4/7 succeeded\]", bar), bar
    run_collect(tmp_path / "four.hdf5", format="robomimic", episodes=4)
    assert_same_bytes(tmp_path / "four.hdf5", more)
    run_collect(tmp_path / "four.hdf5", format="robomimic", episodes=1, keep="all", overwrite=True)
    assert attrs_of(tmp_path / "four.hdf5") == [{"seed": 0, "success": True}]


def test_resuming_with_nothing_to_run_makes_no_env(collected: dict[str, tuple[Path, CollectReport]], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Resumed with every episode there, or with the attempt budget spent (the last kept seed is the budget's last,
    as for an expert that succeeded on seeds 0, 2 and 11 alone), collect reports or raises at once: it makes no
    env and starts no process."""
    import shutil

    import pixelrig.datasets.collect as collecting

    nothing_to_run = never("an env or a process was started for a collection with nothing left to run")
    monkeypatch.setattr(collecting, "ExpertRecorder", nothing_to_run)
    monkeypatch.setattr(Helper, "start", nothing_to_run)
    path = tmp_path / "done.hdf5"
    shutil.copy(collected["robomimic"][0], path)
    report = run_collect(path, format="robomimic", resume=True)
    assert (report.episodes_kept, report.episodes_tried, report.episodes_run, report.workers) == (3, 5, 0, 0)
    with h5py.File(path, "r+") as f:
        f["data/demo_2"].attrs["pixelrig_seed"] = 11
    with pytest.raises(RuntimeError, match=re.escape("the LiftExpert succeeded in 3 of 12 attempts (seeds 0 to 11), "
                                                     "short of the 4 episodes wanted")):
        run_collect(path, format="robomimic", episodes=4, resume=True)


RESUMED = {"all": ([0, 1], [0, 1, 2, 3], [True, False, True, False]),
           "success": ([0, 2], [0, 2, 4, 6], [True] * 4)}
"""Per keep mode: the seeds of the first 2 episodes, of all 4, and the successes of all 4 (seeds 1, 3, 5 fail)."""


@pytest.mark.parametrize("keep", list(RESUMED))
def test_resuming_either_keep_mode_gives_the_uninterrupted_dataset(keep: str, tmp_path: Path) -> None:
    """Two episodes, resumed to four, are the four-episode collection byte for byte, each seed stored once: with
    keep="all" every attempt is kept (failures too), so the resumed run starts at the seed after the last one."""
    first, seeds, successes = RESUMED[keep]
    path, whole = tmp_path / "resumed.hdf5", tmp_path / "whole.hdf5"
    run_collect(path, format="robomimic", keep=keep, episodes=2)
    assert [a["seed"] for a in attrs_of(path)] == first
    report = run_collect(path, format="robomimic", keep=keep, episodes=4, resume=True)
    assert (report.episodes_kept, report.episodes_tried, report.episodes_run) == \
        (4, seeds[-1] + 1, seeds[-1] - first[-1])
    assert attrs_of(path) == [{"seed": s, "success": ok} for s, ok in zip(seeds, successes, strict=True)]
    run_collect(whole, format="robomimic", keep=keep, episodes=4)
    assert_same_bytes(whole, path)


def test_resuming_a_collection_that_started_past_seed_0_goes_on_after_its_last_seed(tmp_path: Path) -> None:
    """Started at seed 2 (succeeds), resumed to two episodes: seed 3 fails and 4 succeeds; three attempts in all."""
    path = tmp_path / "from2.hdf5"
    run_collect(path, format="robomimic", seed=2, episodes=1)
    report = run_collect(path, format="robomimic", seed=2, episodes=2, resume=True)
    assert (report.episodes_kept, report.episodes_tried, report.episodes_run) == (2, 3, 2)
    assert attrs_of(path) == [{"seed": 2, "success": True}, {"seed": 4, "success": True}]


# ---- bad input ------------------------------------------------------------------------------------------------


def bad_rig(tmp_path: Path) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text("[[cameras]]\nname = 'front'\nnear = 2.0\nfar = 1.0\n")
    return path


BAD = [
    ({"task": "PandaFly"}, ValueError, "unknown task 'PandaFly': choose one of ['pixelrig/PandaLift-v0', "),
    ({"task": "pixelrig/PandaReach-v0"}, ValueError,
     "task 'pixelrig/PandaReach-v0' has no scripted expert to collect with: choose one of"),
    ({"episodes": 0}, ValueError, "episodes=0 must be a whole number >= 1"),
    ({"workers": 0}, ValueError, "workers=0 must be a whole number >= 1"),
    ({"keep": "best"}, ValueError, "keep must be one of ('success', 'all'): got 'best'"),
    ({"seed": -1}, ValueError, "seed=-1 must be a whole number >= 0"),
    ({"seed": True}, ValueError, "seed=True must be a whole number >= 0"),
    ({"seed": 1.0}, ValueError, "seed=1.0 must be a whole number >= 0"),
    ({"format": "zarr"}, ValueError, "format must be one of ('lerobot', 'robomimic'): got 'zarr'"),
    ({"format": "robomimic"}, ValueError, "a robomimic dataset is one HDF5 file: name it *.hdf5"),
    ({"renderer": "vulkan"}, ValueError, "renderer must be one of ('auto', "),
    ({"cams": "missing.toml"}, FileNotFoundError, "rig file 'missing.toml' not found"),
    ({"cams": "bad"}, ValueError, "rig file "),
    ({"env_kwargs": {"renderer": "gl"}}, ValueError, "env_kwargs holds renderer='gl': pass it as collect(renderer="),
    ({"env_kwargs": [("max_episode_steps", 3)]}, ValueError,
     "env_kwargs must be a dict of gym.make arguments: got list"),
    ({"workers": 2, "env_kwargs": {"f": lambda: 0}}, ValueError, "workers=2 sends env_kwargs to worker processes"),
]


@pytest.mark.parametrize(("change", "error", "message"), BAD, ids=[m.split(":")[0][:40] for _, _, m in BAD])
def test_bad_input_is_named_and_touches_nothing(change: dict, error: type[Exception], message: str,
                                                tmp_path: Path) -> None:
    kw = {"task": TASK, "episodes": 2, "cams": CAMS, "renderer": "tiny", "progress": False, **change}
    if kw["cams"] == "bad":
        kw["cams"] = bad_rig(tmp_path)
    task = kw.pop("task")
    with pytest.raises(error, match=re.escape(message)):
        collect(task, tmp_path / "out", **kw)
    assert sorted(p.name for p in tmp_path.iterdir()) == (["bad.toml"] if change.get("cams") == "bad" else [])


def test_bad_input_on_the_command_line_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    assert main(["collect", "PandaReach", "--episodes", "2", "--out", out]) == 2
    assert "task 'pixelrig/PandaReach-v0' has no scripted expert" in capsys.readouterr().err
    assert main(["collect", "PandaLift", "--episodes", "0", "--out", out]) == 2
    assert "episodes=0 must be a whole number >= 1" in capsys.readouterr().err
    assert main(["collect", "PandaLift", "--episodes", "1", "--workers", "0", "--out", out]) == 2
    assert "workers=0 must be a whole number >= 1" in capsys.readouterr().err
    assert main(["collect", "PandaLift", "--episodes", "1", "--out", out, "--cams", str(bad_rig(tmp_path))]) == 2
    assert "rig file" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_short_names_and_ids_name_the_same_task() -> None:
    assert expert_task("PandaLift") == expert_task("PandaLift-v0") == expert_task(TASK) == (TASK, "LiftExpert")
    assert expert_task("PandaPegInsert") == ("pixelrig/PandaPegInsert-v0", "PegInsertExpert")


@pytest.mark.parametrize("task", ["PandaFly", "PandaReach", "pixelrig/PandaReach-v0"])
def test_the_short_names_a_refusal_lists_each_name_a_task_with_an_expert(task: str) -> None:
    from pixelrig.experts import EXPERTS

    with pytest.raises(ValueError, match=r"\(or their short names \[") as err:
        expert_task(task)
    listed = ast.literal_eval(re.search(r"\(or their short names (\[.*?\])\)", str(err.value)).group(1))
    assert all("/" not in name and not name.endswith("-v0") for name in listed), listed
    assert [expert_task(name)[0] for name in listed] == sorted(EXPERTS)


def test_the_renderer_is_the_one_passed_else_pixelrig_renderer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As everywhere in pixelrig: collect(renderer=...) wins over PIXELRIG_RENDERER, which is read (and checked
    before anything starts) when no renderer is passed."""
    monkeypatch.setenv("PIXELRIG_RENDERER", "vulkan")
    args = {"episodes": 1, "cams": CAMS, "progress": False, "env_kwargs": SHORT, "format": "robomimic"}
    with pytest.raises(ValueError, match=re.escape("PIXELRIG_RENDERER environment variable must be one of")):
        collect(TASK, tmp_path / "env.hdf5", **args)  # type: ignore[arg-type]
    assert not (tmp_path / "env.hdf5").exists()
    collect(TASK, tmp_path / "tiny.hdf5", renderer="tiny", **args)  # type: ignore[arg-type]
    monkeypatch.setenv("PIXELRIG_RENDERER", "tiny")
    collect(TASK, tmp_path / "from_env.hdf5", **args)  # type: ignore[arg-type]
    for name in ("tiny.hdf5", "from_env.hdf5"):
        reader = open_dataset(tmp_path / name)
        assert reader.info.renderer == "tiny"
        reader.close()


# ---- the readers, and replay -------------------------------------------------------------------------------


def test_lerobot_and_robomimic_readers_load_it(collected: dict[str, tuple[Path, CollectReport]],
                                               tmp_path: Path) -> None:
    """LeRobot's LeRobotDataset and robomimic's SequenceDataset (the readers' venv) load every frame as stored."""
    lerobot, _ = collected["lerobot"]
    robomimic, _ = collected["robomimic"]
    stored = open_dataset(robomimic)
    lengths = [stored.episode_length(e) for e in range(3)]
    actions = np.concatenate([stored.demo(e)["actions"][()] for e in range(3)])
    states = np.concatenate([stored.demo(e)["obs/state"][()] for e in range(3)])
    stored.close()
    got, meta = run_reader("lerobot", lerobot, tmp_path / "lerobot.npz")
    assert meta["num_episodes"] == 3 and meta["len"] == sum(lengths)
    assert [e["length"] for e in meta["episodes"]] == lengths
    np.testing.assert_array_equal(got["action"], actions)
    np.testing.assert_array_equal(got["observation.state"], states)
    assert got["observation.images.front"].shape == (sum(lengths), 32, 32, 3)
    got, meta = run_reader("robomimic", robomimic, tmp_path / "robomimic.npz")
    assert meta["demos"] == ["demo_0", "demo_1", "demo_2"] and meta["len"] == sum(lengths)
    np.testing.assert_array_equal(got["actions"], actions)
    np.testing.assert_array_equal(got["obs/state"], states)


@pytest.mark.parametrize("fmt", list(SUFFIX))
def test_replay_with_another_rig_reproduces_the_recorded_states(fmt: str,
                                                                collected: dict[str, tuple[Path, CollectReport]],
                                                                tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``pixelrig replay`` of a collected dataset: the snapshots, states, actions, rewards and episode attributes
    are the recorded ones, and the new rig's images are a live run's of the recorded actions from the stored seeds,
    bit for bit."""
    src, _ = collected[fmt]
    rig = write_rig(tmp_path / "top.json", NEW_RIG)
    dst = tmp_path / "top.hdf5"
    assert main(["replay", str(src), str(dst), "--cams", str(rig), "--format", "robomimic", "--quiet",
                 "--workers", "1"]) == 0
    capsys.readouterr()
    old, new = open_dataset(src), open_dataset(dst)
    try:
        assert new.num_episodes == 3 and [new.episode_attrs(e) for e in range(3)] == attrs_of(src)
        actions = []
        for e in range(3):
            recorded, replayed = list(old.frames(e)), list(new.frames(e))
            assert [f.snapshot for f in replayed] == [f.snapshot for f in recorded]
            assert new.final_snapshot(e) == old.final_snapshot(e)
            for a, b in zip(recorded, replayed, strict=True):
                assert a.state.tobytes() == b.state.tobytes() and a.action.tobytes() == b.action.tobytes()
                assert a.reward == b.reward
            actions.append([f.action for f in recorded])
        live = run_episodes(PixelObs(gym.make(TASK, renderer="tiny", **SHORT), cams=load_rig(rig)),
                            [a["seed"] for a in attrs_of(src)], actions=actions)
        for e, seen in enumerate(live):
            np.testing.assert_array_equal(new.rgb(e, "top"), np.stack([o["top/rgb"] for o in seen[:-1]]))
            np.testing.assert_array_equal(new.demo(e)["obs/state"][()], np.stack([o["state"] for o in seen[:-1]]))
    finally:
        old.close()
        new.close()



def test_the_documented_collect_speeds_are_the_benchmarks() -> None:
    """docs/benchmark.md's collect table is docs/collect_speed.json's (written by benchmarks/collect_speed.py)."""
    docs = Path(__file__).resolve().parent.parent / "docs"
    result = json.loads((docs / "collect_speed.json").read_text())
    page = (docs / "benchmark.md").read_text()
    table = page[page.index("<!-- collect-table:start"):page.index("<!-- collect-table:end -->")]

    def cell(x: dict) -> str:
        return f"{x['episodes_per_second']:.2f} ({min(x['runs']):.2f}-{max(x['runs']):.2f})"

    for r in result["rows"]:
        now, before = ({x["workers"]: x for x in r[k]} for k in ("now", "before"))
        row = (f"| {r['renderer']} | {r['stepping_only_episodes_per_second']:.2f} | {cell(now[1])} | {cell(now[2])} | "
               f"{cell(before[1])} | {cell(before[2])} |")
        assert row in table, row
        assert all(x["success_rate"] == 1.0 for x in r["now"] + r["before"])  # "Every episode succeeded"
    assert table.count("\n| ") == 1 + len(result["rows"])  # the header and one row per renderer
