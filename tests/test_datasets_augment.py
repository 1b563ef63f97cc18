"""augment(): a dataset's episodes as recorded, then re-rendered copies of each under looks drawn from a preset, in the
source's format and with its cameras. The copies carry the source's actions, states, rewards, flags and snapshots
byte for byte and other images; each episode's attributes say where it came from and what looks it got; the same
call gives the same bytes; bad input is refused naming the value and leaving nothing; ``pixelrig augment`` runs it.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from pixelrig import Randomization
from pixelrig.datasets import AugmentResult, DatasetExistsError, augment, open_dataset, replay
from pixelrig.datasets.augment import copy_looks_seed
from pixelrig.datasets.rerender import ReplayLooks
from pixelrig.envs.presets import LOOKS_PRESETS, looks_preset
from pixelrig.tools.cli import main
from tests.dataset_runs import run_reader
from tests.test_datasets_collect import CAMS, assert_same_bytes, run_collect
from tests.test_datasets_so101_features import lerobot_venv_or_skip

h5py = pytest.importorskip("h5py", reason='robomimic datasets need h5py: pip install "pixelrig[datasets]"')
pa = pytest.importorskip("pyarrow", reason='LeRobot datasets need pyarrow: pip install "pixelrig[datasets]"')
import pyarrow.parquet as pq  # noqa: E402

FORMATS = ("lerobot", "robomimic")
NAME = {"lerobot": "lift", "robomimic": "lift.hdf5"}
STEPS = 8
"""The source episodes' TimeLimit: two episodes of 8 frames (both fail to lift in time: success False is kept)."""
COPIES = 2
PHYSICS_COLUMNS = ("action", "observation.state", "next.reward", "next.terminated", "next.truncated", "next.done",
                   "frame_index", "timestamp", "task_index")
"""A LeRobot data file's columns that a copy takes from its source (episode_index and index number it anew)."""
PHYSICS_SETS = ("actions", "rewards", "dones", "terminated", "truncated", "states", "states_nbytes", "final_state",
                "obs/state", "next_obs/state")
"""A robomimic demo's arrays that a copy takes from its source."""

Augmented = dict[str, tuple[Path, AugmentResult]]
"""The ``augmented`` fixture: format -> (the augmented dataset, what augment returned)."""


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two collected PandaLift episodes (seeds 0 and 1, keep="all": their seed and success are attributes) in each
    format, with a 32x32 rgb + depth camera."""
    folder = tmp_path_factory.mktemp("augment")
    for fmt in FORMATS:
        run_collect(folder / NAME[fmt], format=fmt, episodes=2, keep="all", env_kwargs={"max_episode_steps": STEPS})
    return {fmt: folder / NAME[fmt] for fmt in FORMATS}


@pytest.fixture(scope="module")
def augmented(sources: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Augmented:
    """Each source with two copies under "train" (seed 0), in this process; ``(path, AugmentResult)``."""
    folder = tmp_path_factory.mktemp("augmented")
    out = {}
    for fmt, src in sources.items():
        dst = folder / NAME[fmt]
        out[fmt] = (dst, augment(src, dst, copies=COPIES, workers=1, progress=False))
    return out


def rgb(reader, e: int) -> np.ndarray:
    """Episode ``e``'s front camera images as stored (LeRobot's decoded from its video)."""
    return np.stack(list(reader.rgb(e, "front")))


def lerobot_table(path: Path, folder: str, e: int) -> pa.Table:
    return pq.read_table(path / folder / "chunk-000" / f"file-{e:03d}.parquet")


def column_bytes(table: pa.Table, key: str) -> bytes:
    """The values of a data file's column, as stored (a vector column's values flattened)."""
    column = table.column(key).combine_chunks()
    if pa.types.is_fixed_size_list(column.type):
        column = column.flatten()
    return column.to_numpy(zero_copy_only=False).tobytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_source_comes_first_as_stored_then_copies_with_its_physics_byte_for_byte(
        fmt: str, sources: dict[str, Path], augmented: Augmented) -> None:
    src, (dst, result) = sources[fmt], augmented[fmt]
    source, new = open_dataset(src), open_dataset(dst)
    try:
        n = source.num_episodes
        assert n == 2 and new.num_episodes == n * (1 + COPIES)
        assert (result.path, result.episodes, result.source_episodes, result.copies, result.workers) == \
            (dst, 6, 2, COPIES, 1)
        assert result.frames == 3 * 2 * STEPS
        assert new.info.cams == source.info.cams and (new.info.rgb, new.info.depth) == (("front",), ("front",))
        assert new.info.env_id == source.info.env_id and new.info.collected == source.info.collected
        for j in range(new.num_episodes):
            e = j % n
            ours, theirs = list(new.frames(j)), list(source.frames(e))
            assert len(ours) == len(theirs) == STEPS
            for a, b in zip(ours, theirs, strict=True):
                assert a.action.tobytes() == b.action.tobytes() and a.state.tobytes() == b.state.tobytes()
                assert (a.reward, a.terminated, a.truncated, a.snapshot) == (b.reward, b.terminated, b.truncated,
                                                                            b.snapshot)
            assert new.final_snapshot(j) == source.final_snapshot(e) and new.episode_end(j) == source.episode_end(e)

        # the stored bytes: the source's episodes whole, the copies' physics
        if fmt == "robomimic":
            with h5py.File(src, "r") as a, h5py.File(dst, "r") as b:
                assert b["data"].attrs["total"] == 3 * a["data"].attrs["total"]
                for j in range(new.num_episodes):
                    ours, theirs = b[f"data/demo_{j}"], a[f"data/demo_{j % n}"]
                    names = [f"{g}/{k}" for g in ("obs", "next_obs") for k in theirs[g]] + \
                        [k for k in theirs if k not in ("obs", "next_obs")]
                    for key in names if j < n else PHYSICS_SETS:
                        assert ours[key][()].tobytes() == theirs[key][()].tobytes(), (j, key)
        else:
            for j in range(new.num_episodes):
                e = j % n
                ours, theirs = lerobot_table(dst, "data", j), lerobot_table(src, "data", e)
                for key in PHYSICS_COLUMNS:
                    assert column_bytes(ours, key) == column_bytes(theirs, key), (j, key)
                assert ours.column("episode_index").to_pylist() == [j] * STEPS
                assert lerobot_table(dst, "snapshots", j).column("snapshot").to_pylist() == \
                    lerobot_table(src, "snapshots", e).column("snapshot").to_pylist()
            for e in range(n):  # the source's files as they were, the episode rows but for the attributes
                for name in (f"data/chunk-000/file-{e:03d}.parquet", f"snapshots/chunk-000/file-{e:03d}.parquet",
                             f"videos/observation.images.front/chunk-000/file-{e:03d}.mp4"):
                    assert (dst / name).read_bytes() == (src / name).read_bytes(), name
                ours, theirs = lerobot_table(dst, "meta/episodes", e).to_pydict(), \
                    lerobot_table(src, "meta/episodes", e).to_pydict()
                assert {k: v for k, v in ours.items() if k in theirs} == theirs
            info = json.loads((dst / "meta" / "info.json").read_text())
            assert (info["total_episodes"], info["total_frames"]) == (6, 48)

        # the copies' images differ from the source's and from each other's
        images = [rgb(new, j).astype(int) for j in range(new.num_episodes)]
        for e in range(n):
            np.testing.assert_array_equal(images[e], rgb(source, e))
            looks = [images[e + n * k] for k in range(1 + COPIES)]
            for a in range(len(looks)):
                for b in range(a):
                    assert np.abs(looks[a] - looks[b]).mean() > 5, (e, a, b)
    finally:
        source.close()
        new.close()


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_episode_says_where_it_came_from_and_what_looks_it_got(
        fmt: str, sources: dict[str, Path], augmented: Augmented) -> None:
    source, new = open_dataset(sources[fmt]), open_dataset(augmented[fmt][0])
    try:
        recorded = [source.episode_attrs(e) for e in range(2)]
        assert recorded == [{"seed": 0, "success": False}, {"seed": 1, "success": False}]
        attrs = [new.episode_attrs(j) for j in range(new.num_episodes)]
    finally:
        source.close()
        new.close()
    for e in range(2):
        assert attrs[e] == {**recorded[e], "source_episode": e, "copy": 0, "looks_preset": "", "looks_seed": -1,
                            "looks": "null"}
    train = ReplayLooks.of("train")
    for j in range(2, 6):
        e, k = j % 2, j // 2
        drawn = json.loads(attrs[j].pop("looks"))
        assert attrs[j] == {**recorded[e], "source_episode": e, "copy": k, "looks_preset": "train",
                            "looks_seed": copy_looks_seed(0, k)}
        # what the episode's looks were drawn from and what was drawn: the light, the textures, the distractors
        assert drawn["looks_seed"] == ReplayLooks(train.randomization, train.background, copy_looks_seed(0, k)
                                                  ).episode_seed(e)
        assert sorted(drawn) == ["distractors", "lighting", "looks_seed", "textures"]
        assert len(drawn["distractors"]) == looks_preset("train").randomization.distractors
        assert {"direction", "ambient"} <= set(drawn["lighting"])
    assert copy_looks_seed(0, 1) != copy_looks_seed(0, 2) != copy_looks_seed(1, 1)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_same_call_gives_the_same_bytes(fmt: str, sources: dict[str, Path],
                                            augmented: Augmented, tmp_path: Path) -> None:
    again = tmp_path / NAME[fmt]
    augment(sources[fmt], again, copies=COPIES, workers=1, progress=False)
    assert_same_bytes(augmented[fmt][0], again)


def test_workers_another_seed_and_replay_of_a_copys_seed(sources: dict[str, Path],
                                                         augmented: Augmented,
                                                         tmp_path: Path) -> None:
    """A worker process renders the copies as this process does; another seed draws other looks; replay with a
    copy's ``looks_seed`` redraws that copy."""
    src, (dst, _) = sources["robomimic"], augmented["robomimic"]
    two = augment(src, tmp_path / "two.hdf5", copies=COPIES, workers=2, progress=False)
    assert two.workers == 2
    assert_same_bytes(dst, tmp_path / "two.hdf5")

    augment(src, tmp_path / "seed1.hdf5", copies=1, seed=1, workers=1, progress=False)
    replay(src, tmp_path / "copy2.hdf5", cams=CAMS, looks="train", looks_seed=copy_looks_seed(0, 2), workers=1,
           progress=False)
    with h5py.File(dst, "r") as a, h5py.File(tmp_path / "seed1.hdf5", "r") as b, \
            h5py.File(tmp_path / "copy2.hdf5", "r") as c:
        for e in range(2):
            copy1 = a[f"data/demo_{2 + e}/obs/front_rgb"][()].astype(int)
            assert np.abs(copy1 - b[f"data/demo_{2 + e}/obs/front_rgb"][()]).mean() > 5
            for key in ("obs/front_rgb", "obs/front_depth", "next_obs/front_rgb"):
                assert a[f"data/demo_{4 + e}/{key}"][()].tobytes() == c[f"data/demo_{e}/{key}"][()].tobytes()


def test_looks_take_any_preset_a_preset_or_a_randomization(sources: dict[str, Path], tmp_path: Path) -> None:
    src = sources["robomimic"]
    hard = augment(src, tmp_path / "hard.hdf5", looks=LOOKS_PRESETS["test-hard"], workers=1, progress=False)
    light = augment(src, tmp_path / "light.hdf5", looks=Randomization(light_azimuth=(0.0, 90.0),
                                                                       light_elevation=(20.0, 30.0)),
                    workers=1, progress=False)
    for result, preset, keys in ((hard, "test-hard", ["distractors", "lighting", "looks_seed", "textures"]),
                                 (light, "", ["lighting", "looks_seed"])):
        reader = open_dataset(result.path)
        try:
            attrs = reader.episode_attrs(3)
        finally:
            reader.close()
        assert (attrs["looks_preset"], attrs["copy"], attrs["source_episode"]) == (preset, 1, 1)
        assert sorted(json.loads(attrs["looks"])) == keys


@pytest.mark.parametrize(("change", "error", "words"), [
    ({"src": "missing"}, FileNotFoundError, "no dataset at '.*missing'"),
    ({"copies": 0}, ValueError, r"copies=0 must be a whole number >= 1"),
    ({"copies": 1.5}, ValueError, r"copies=1.5 must be a whole number >= 1"),
    ({"seed": -1}, ValueError, r"seed=-1 must be a whole number >= 0"),
    ({"looks": "sunny"}, ValueError, r"looks='sunny' is not a looks preset; presets: \['train', 'test-hard'\]"),
    ({"looks": None}, ValueError, r"looks=None draws no new looks.*pass a looks preset's name"),
    ({"dst": "taken.hdf5"}, DatasetExistsError, r"already exists at '.*taken.hdf5': pass overwrite=True"),
    ({"dst": "lift.h"}, ValueError, r"a robomimic dataset is one HDF5 file: name it \*.hdf5"),
    ({"workers": 0}, ValueError, r"workers=0 must be a whole number >= 1"),
])
def test_bad_input_is_named_and_leaves_nothing(change: dict, error: type, words: str, sources: dict[str, Path],
                                               tmp_path: Path) -> None:
    (tmp_path / "taken.hdf5").write_bytes(b"mine")
    kw = {"src": sources["robomimic"], "dst": "new.hdf5", "progress": False, **change}
    kw.update({key: tmp_path / kw[key] for key in ("src", "dst") if isinstance(kw[key], str)})
    with pytest.raises(error, match=words):
        augment(**kw)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken.hdf5"]
    assert (tmp_path / "taken.hdf5").read_bytes() == b"mine"


def test_overwrite_replaces_a_dataset_and_a_failure_leaves_the_old_one(sources: dict[str, Path], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    dst = tmp_path / "lift.hdf5"
    dst.write_bytes(sources["robomimic"].read_bytes())
    before = dst.read_bytes()

    def failing(*args: object, **kw: object) -> int:
        raise RuntimeError("the renderer broke")

    module = importlib.import_module("pixelrig.datasets.augment")  # the module; the package attribute is the function
    monkeypatch.setattr(module, "write_rendered", failing)
    with pytest.raises(RuntimeError, match="the renderer broke"):
        augment(sources["robomimic"], dst, overwrite=True, workers=1, progress=False)
    assert dst.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["lift.hdf5"]
    monkeypatch.undo()
    augment(sources["robomimic"], dst, overwrite=True, workers=1, progress=False)
    reader = open_dataset(dst)
    assert reader.num_episodes == 4
    reader.close()


def test_cli_augment_counts_episodes_and_refuses_what_exists(sources: dict[str, Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "aug"
    assert main(["augment", str(sources["lerobot"]), "--copies", "2", "--out", str(out), "--workers", "1"]) == 0
    said = capsys.readouterr()
    assert said.out.startswith(f"wrote {out}: 6 episodes (2 recorded, then 2 copies of each under looks 'train'), "
                               "48 frames in "), said.out
    bar = said.err
    assert bar.startswith("\raugment lift:   0%") and "| 6/6 [" in bar and "?episode/s]" in bar, bar
    reader = open_dataset(out)
    assert reader.num_episodes == 6
    reader.close()
    assert main(["augment", str(sources["lerobot"]), "--out", str(out), "--quiet"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["augment", str(sources["lerobot"]), "--out", str(out), "--looks", "sunny", "--quiet",
                 "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pixelrig augment: looks='sunny' is not a looks preset; presets: ['train', 'test-hard']")
    assert main(["augment", str(sources["lerobot"]), "--out", str(out), "--copies", "0", "--quiet",
                 "--overwrite"]) == 2
    assert "copies=0 must be a whole number >= 1" in capsys.readouterr().err
    assert main(["augment", str(sources["lerobot"]), "--out", str(out), "--quiet", "--overwrite", "--looks",
                 "test-hard", "--workers", "1"]) == 0
    assert "1 copy of each under looks 'test-hard'" in capsys.readouterr().out


@pytest.mark.parametrize("fmt", FORMATS)
def test_lerobot_and_robomimic_readers_load_an_augmented_dataset(
        fmt: str, sources: dict[str, Path], augmented: Augmented, tmp_path: Path) -> None:
    """LeRobot's ``LeRobotDataset`` and robomimic's ``SequenceDataset`` (the readers' venv, scripts/lerobot-venv.sh;
    skipped with the reason when it is not built) read every episode: the source's and the copies' actions."""
    got, meta = run_reader(fmt, augmented[fmt][0], tmp_path / "read.npz")
    reader = open_dataset(sources[fmt])
    try:
        actions = np.concatenate([np.stack([f.action for f in reader.frames(e)]) for e in range(2)])
    finally:
        reader.close()
    np.testing.assert_array_equal(got["action" if fmt == "lerobot" else "actions"], np.tile(actions, (3, 1)))
    assert meta["len"] == 48
    if fmt == "lerobot":
        assert meta["num_episodes"] == 6 and [e["length"] for e in meta["episodes"]] == [STEPS] * 6
        np.testing.assert_array_equal(got["episode_index"], np.repeat(np.arange(6), STEPS))
    else:
        assert meta["n_demos"] == 6


LEROBOT_06_READ = """
import json, sys
from lerobot.datasets.lerobot_dataset import LeRobotDataset

ds = LeRobotDataset("pixelrig/augmented", root=sys.argv[1])
items = [ds[i] for i in range(len(ds))]
json.dump({"episodes": ds.num_episodes, "episode_index": [int(item["episode_index"]) for item in items],
           "action": [item["action"].tolist() for item in items],
           "image": list(items[0]["observation.images.front"].shape),
           "copy": [int(c) for c in ds.meta.episodes["pixelrig/copy"]]}, open(sys.argv[2], "w"))
"""


@pytest.mark.slow
@pytest.mark.lerobot_env
def test_lerobot_06_loads_an_augmented_dataset(sources: dict[str, Path], augmented: Augmented,
                                               tmp_path: Path) -> None:
    """LeRobot 0.6's own ``LeRobotDataset`` (the LeRobot venv, ``make lerobot``; skipped with the reason when it is not
    built; CI's ``make test-lerobot-env``, 25 s here) reads every episode of an augmented dataset, with its attributes
    as ``meta/episodes`` columns."""
    python = lerobot_venv_or_skip()
    out = tmp_path / "read.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"),
           "PYTHONPATH": ""}
    proc = subprocess.run([str(python), "-c", LEROBOT_06_READ, str(augmented["lerobot"][0]), str(out)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(out.read_text())
    reader = open_dataset(sources["lerobot"])
    try:
        actions = np.concatenate([np.stack([f.action for f in reader.frames(e)]) for e in range(2)])
    finally:
        reader.close()
    assert got["episodes"] == 6 and got["episode_index"] == np.repeat(np.arange(6), STEPS).tolist()
    np.testing.assert_array_equal(np.array(got["action"], np.float32), np.tile(actions, (3, 1)))
    assert got["image"] == [3, 32, 32] and got["copy"] == [0, 0, 1, 1, 2, 2]

