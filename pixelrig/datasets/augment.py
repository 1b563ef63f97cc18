"""``augment``: more looks from the same demonstrations. A new dataset holds a recorded dataset's episodes as they are,
then ``copies`` re-renderings of each under looks drawn from a preset (light, textures, distractors, background),
with the recording's cameras and the recording's physics: only the images differ.

Built from replay's parts (:mod:`pixelrig.datasets.replay`): the copies are renderings of the source's episodes under
new looks (in this process or worker processes), written into one writer after the source's episodes, which the
format's writer copies as they are stored (``copy_episode``); the whole dataset is written beside its destination
and moved there when it is complete.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np

from pixelrig.cameras.spec import Camera
from pixelrig.datasets.formats import DatasetReader, check_dataset_path, open_dataset, writer_class
from pixelrig.datasets.rebuild import MakeEnv, recorded_env_args
from pixelrig.datasets.replay import ReplayResult, staged_writer, start_rendering, worker_count, write_rendered
from pixelrig.datasets.rerender import EpisodeEnd, ReplayLooks
from pixelrig.datasets.steps import EpisodeAttrs
from pixelrig.datasets.target import check_target, detect_format
from pixelrig.envs.presets import LooksPreset
from pixelrig.envs.randomization import Randomization
from pixelrig.errors import whole_number

AUGMENT_STREAM = 0x617567
"""Keeps the copies' looks seeds apart from other draws of the same seed (``b"aug"``)."""


@dataclasses.dataclass(frozen=True)
class AugmentResult(ReplayResult):
    """What :func:`augment` wrote: :class:`~pixelrig.datasets.ReplayResult`'s fields (``path``, ``episodes``: the
    source's and their copies, ``source_episodes * (copies + 1)``; ``frames``, ``seconds``, ``workers``), and:

    Attributes:
        source_episodes: episodes of the source dataset.
        copies: re-rendered copies of each source episode.
    """

    source_episodes: int = 0
    copies: int = 0


def copy_looks_seed(seed: int, copy: int) -> int:
    """The looks seed of copy ``copy`` (1, 2, ...) of ``augment(..., seed=seed)``: episode ``e`` of that copy has the
    looks episode ``e`` of ``replay(src, dst, cams, looks=PRESET, looks_seed=copy_looks_seed(seed, copy))`` has."""
    return int(np.random.default_rng([seed, AUGMENT_STREAM, copy]).integers(2**62))


def augment(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    looks: str | LooksPreset | Randomization = "train",
    copies: int = 1,
    seed: int = 0,
    make_env: MakeEnv | None = None,
    overwrite: bool = False,
    progress: bool = True,
    workers: int | None = None,
) -> AugmentResult:
    """Write a dataset holding ``src``'s episodes as they are, then ``copies`` re-renderings of each under new looks.

    The new dataset has ``src``'s format and cameras. Episodes ``0 .. N-1`` are ``src``'s, stored as they were
    (images, actions, states, rewards, flags, snapshots); episode ``N * k + e`` is copy ``k`` of episode ``e``
    (k = 1 .. copies): its frames' snapshots restored and drawn under looks drawn from ``looks`` (as
    ``replay(..., looks=...)`` draws them), with the source's actions, states, rewards, flags and snapshots, byte for
    byte. Copy ``k`` of episode ``e`` draws from ``(seed, k, e)``: the same call gives the same bytes, whatever
    ``workers`` is (same renderer, same machine), and the copies differ from each other.

    Each episode's attributes (``open_dataset(dst).episode_attrs(e)``) are the source episode's (collect's seed and
    success) plus ``source_episode`` (its index in ``src``), ``copy`` (0 for the source's own episodes, else k),
    ``looks_preset`` (the preset's name; "" for the source's episodes and for a Randomization), ``looks_seed`` (the
    copy's :func:`copy_looks_seed`; -1 for the source's) and ``looks`` (JSON of what was drawn for the episode: its
    own draw seed, the light, the textures, the distractors; ``"null"`` for the source's).
    The dataset is written beside ``dst`` under a hidden name and moved to ``dst`` when it is complete: if the
    augmentation fails or is interrupted, nothing is left at ``dst`` (an old dataset there stays as it was).

    Args:
        src: a dataset written by pixelrig (either format).
        dst: the new dataset (a folder for LeRobot, a ``*.hdf5`` file for robomimic).
        looks: a looks preset's name ("train", "test-hard"), a :class:`~pixelrig.envs.presets.LooksPreset`, or a
            :class:`~pixelrig.Randomization` whose look fields are drawn.
        copies: re-rendered copies of each episode (>= 1).
        seed: the looks' seed (>= 0).
        make_env: as :func:`~pixelrig.datasets.replay`'s, for envs ``gym.make`` cannot rebuild from the dataset.
        overwrite: replace a dataset of this format already at ``dst`` (when the new one is complete).
        progress: show a progress bar (tqdm) on stderr, counting episodes (the source's and the copies).
        workers: processes to use, this one included, as :func:`~pixelrig.datasets.replay`'s (None: chosen).

    Returns:
        What was written.

    Raises:
        FileNotFoundError: no dataset at ``src``.
        ValueError: bad ``looks`` (an unknown preset: the message lists them), ``copies``, ``seed`` or ``workers``;
            an env that cannot be rebuilt (the message names ``make_env=``).
        DatasetExistsError: something is at ``dst`` and ``overwrite`` is False.
        DatasetWriteError: ``dst`` cannot be written (nothing is left there).
        ReplayWorkerError: a worker process died.
    """
    start = time.perf_counter()
    dst = Path(dst)
    whole_number("copies", copies, 1)
    whole_number("seed", seed, 0)
    if looks is None:
        raise ValueError("looks=None draws no new looks, so every copy would be the source again: pass a looks "
                         "preset's name (e.g. 'train'), a LooksPreset or a Randomization of looks")
    new_looks = ReplayLooks.of(looks)
    assert new_looks is not None  # noqa: S101 - looks is not None
    preset = looks if isinstance(looks, str) else looks.name if isinstance(looks, LooksPreset) else ""
    reader = open_dataset(src)
    try:
        fmt = detect_format(src)
        check_target(check_dataset_path(dst, fmt), fmt, overwrite, resume=False)
        if make_env is None:
            recorded_env_args(reader.info, None)  # can the env be rebuilt? (raises naming make_env=)
        renderings = [(e, copy_looks_seed(seed, k)) for k in range(1, copies + 1) for e in range(reader.num_episodes)]
        lengths = [reader.episode_length(e) for e in range(reader.num_episodes)]
        count = worker_count(workers, make_env, len(renderings), sum(lengths) * copies)
        return _augment(reader, Path(src), dst, fmt, new_looks, preset, copies, renderings, make_env, overwrite,
                        progress, count, start)
    finally:
        reader.close()


def _augment(reader: DatasetReader, src: Path, dst: Path, fmt: str, looks: ReplayLooks, preset: str, copies: int,
             renderings: list[tuple[int, int]], make_env: MakeEnv | None, overwrite: bool, progress: bool, count: int,
             start: float) -> AugmentResult:
    from tqdm import tqdm

    from pixelrig.version import __version__

    n = reader.num_episodes
    cameras = tuple(Camera.from_dict(c) for c in reader.info.cams)
    needs_next_obs = bool(writer_class(fmt).needs_next_obs)
    source = start_rendering(reader, src, cameras, None, make_env, needs_next_obs, looks, renderings, count)
    success = False
    try:
        info = dataclasses.replace(reader.info, pixelrig_version=__version__)
        frames = 0
        with staged_writer(dst, fmt, info, overwrite, "augment") as writer, \
                tqdm(total=n + len(renderings), unit="episode", desc=f"augment {src.name}",
                     disable=not progress) as bar:
            for e in range(n):
                writer.copy_episode(reader, e, _attrs(reader.episode_attrs(e), e, 0, "", -1, None))
                frames += reader.episode_length(e)
                bar.update()
            for j, (e, looks_seed) in enumerate(renderings):
                copy = 1 + j // n

                def attrs(end: EpisodeEnd, e: int = e, copy: int = copy, looks_seed: int = looks_seed) -> EpisodeAttrs:
                    return _attrs(reader.episode_attrs(e), e, copy, preset, looks_seed, end.looks)

                frames += write_rendered(writer, reader, e, source.items(j), attrs, lambda: None)
                bar.update()
        success = True
        return AugmentResult(dst, n + len(renderings), frames, time.perf_counter() - start, count, source_episodes=n,
                             copies=copies)
    finally:
        source.close(success)


def _attrs(recorded: EpisodeAttrs, source_episode: int, copy: int, preset: str, looks_seed: int,
           drawn: dict | None) -> EpisodeAttrs:
    """An episode's attributes: the recorded ones, then where it came from and its looks."""
    return {**recorded, "source_episode": source_episode, "copy": copy, "looks_preset": preset,
            "looks_seed": looks_seed, "looks": json.dumps(drawn, sort_keys=True)}
