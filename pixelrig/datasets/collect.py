"""``collect``: demonstrations at scale. Run a task's scripted expert (:data:`pixelrig.experts.EXPERTS`) for many seeds,
in one process or several, into one LeRobot folder or robomimic HDF5 file (the files ``DatasetRecorder`` writes, so
the readers and ``pixelrig replay`` take it as they are); resumable after Ctrl-C or a killed process.

How the work is shared, and why. Attempt ``i`` is the episode reset with seed ``seed + i``. With ``workers=1``
everything runs in this process. With ``workers=W``, W worker processes (helpers of :mod:`pixelrig.system.process`,
their body :mod:`pixelrig.datasets.collect_worker_main`) each run the expert under a ``DatasetRecorder`` whose writer
holds the episode in memory, and send each finished episode whole (the recorder's frames: images, state, action,
reward, flags, snapshot) to this process: worker ``k`` runs attempts ``k``, ``k + W``, ... For a LeRobot dataset a
worker also encodes each kept episode's videos (:func:`~pixelrig.datasets.lerobot.encode_videos`: the bytes the
writer would make of the same frames) and sends the files with it. This process, the only writer, takes the attempts
in order, keeps or drops each (``keep``) and writes the kept ones with the format's own writer, placing the videos
as they came. Chosen over workers writing parts to a staging folder that this process then merges because:

- the dataset is what the recorder writes (the same frames into the same writer), and it does not depend on W: an
  episode depends on its seed alone, and episodes are written in attempt order;
- nothing is merged: no LeRobot index columns, statistics and episode rows to renumber, no videos to copy across
  (or, worse, to decode and encode again), no second copy of the data on disk;
- resuming needs nothing new: the writers commit an episode whole when it ends, and a process killed at any moment
  leaves the episodes before it intact (``resume=True`` removes what an unfinished one left). Each episode stores its
  seed and success (``episode_attrs(e)``), so a resumed collection starts after the last episode's seed and gives the
  dataset an uninterrupted one gives (attempts after the last kept one are run again: they fail again, seeded);
- memory stays bounded: a worker holds one episode, this process the one it writes; a worker that is ahead blocks on
  sending (the connection's buffer), so at most one finished episode waits per worker.

The cost: one process writes (parquet, statistics, HDF5 compression; LeRobot's videos arrive encoded) while W
simulate, render and encode; where writing is the slower part, more workers do not help
(``benchmarks/collect_speed.py`` measures it). Every episode has its own video files in the LeRobot layout, so
joining is placing a file: no stream is copied or cut, and each episode's bytes do not depend on where it was encoded.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pixelrig.cameras.rig import CameraLike
from pixelrig.cameras.rigfile import rig_cameras
from pixelrig.datasets.collect_workers import CollectJob, Episode, ExpertRecorder, WorkerEpisodes
from pixelrig.datasets.formats import EpisodeWriter, check_dataset_path, open_dataset, open_writer
from pixelrig.datasets.replay_workers import loadable_elsewhere
from pixelrig.datasets.target import check_target
from pixelrig.errors import whole_number
from pixelrig.render.choice import requested_renderer

KEEP = ("success", "all")
"""``keep`` values: only the episodes that succeeded, or every episode (its success stored with it)."""

ATTEMPTS_PER_EPISODE = 3
"""With ``keep="success"``, collect gives up after this many attempts per episode wanted (seeds ``seed`` to
``seed + 3 * episodes - 1``), keeping what it has: an expert that fails more often than not needs fixing first."""


@dataclasses.dataclass(frozen=True)
class CollectReport:
    """What :func:`collect` did. Counts cover the whole dataset (a resumed collection's earlier episodes included);
    times cover this call.

    Attributes:
        episodes_kept: episodes in the dataset.
        episodes_tried: attempts they came from (seeds ``seed`` to ``seed + episodes_tried - 1``).
        successes: attempts that succeeded.
        success_rate: ``successes / episodes_tried`` (0.0 when nothing was tried).
        seconds: wall time of this call.
        episodes_per_second: attempts run by this call per second of it.
        path: the dataset.
        episodes_run: attempts run by this call.
        workers: processes that ran the expert (1: this one; 0: none, the dataset was complete).
    """

    episodes_kept: int
    episodes_tried: int
    successes: int
    success_rate: float
    seconds: float
    episodes_per_second: float
    path: Path
    episodes_run: int = 0
    workers: int = 1

    def summary(self) -> str:
        """One line for people: kept, tried, success rate, throughput."""
        resumed = self.episodes_tried - self.episodes_run
        return (f"wrote {self.path}: {self.episodes_kept} episodes kept of {self.episodes_tried} tried (success rate "
                f"{self.success_rate:.1%}); {self.episodes_run} run in {self.seconds:.1f} s "
                f"({self.episodes_per_second:.2f} episodes/s, {self.workers} "
                f"process{'' if self.workers == 1 else 'es'})" + (f"; {resumed} were there already" if resumed else ""))


@dataclasses.dataclass
class _Tally:
    kept: int = 0
    tried: int = 0
    successes: int = 0


def expert_task(task: str) -> tuple[str, str]:
    """The env id and expert class name of a task: an id with an expert (``"pixelrig/PandaLift-v0"``) or its short
    name (``"PandaLift"``, ``"PandaLift-v0"``).

    Raises:
        ValueError: an unknown task, or one without a scripted expert (the message lists those with one).
    """
    import gymnasium as gym

    from pixelrig.experts import EXPERTS

    for env_id in (task, f"pixelrig/{task}", f"pixelrig/{task}-v0"):
        if env_id in EXPERTS:
            return env_id, EXPERTS[env_id].__name__
    short = sorted(e.removeprefix("pixelrig/").removesuffix("-v0") for e in EXPERTS)
    registered = next((e for e in (task, f"pixelrig/{task}", f"pixelrig/{task}-v0") if e in gym.registry), None)
    if registered is not None:
        raise ValueError(f"task {registered!r} has no scripted expert to collect with: choose one of {sorted(EXPERTS)} "
                         f"(or their short names {short}), or record your own policy with DatasetRecorder")
    raise ValueError(f"unknown task {task!r}: choose one of {sorted(EXPERTS)} (or their short names {short})")


def _env_kwargs(env_kwargs: Mapping[str, Any] | None, workers: int) -> dict[str, Any]:
    if env_kwargs is not None and not isinstance(env_kwargs, Mapping):
        raise ValueError(f"env_kwargs must be a dict of gym.make arguments: got {type(env_kwargs).__name__}")
    kwargs = dict(env_kwargs or {})
    if "renderer" in kwargs:
        raise ValueError(f"env_kwargs holds renderer={kwargs['renderer']!r}: pass it as collect(renderer=...)")
    if workers > 1:
        why = loadable_elsewhere(kwargs)
        if why is not None:
            raise ValueError(f"workers={workers} sends env_kwargs to worker processes, but {why}: use values "
                             "defined at the top level of an importable module, or workers=1")
        if os.name != "posix":  # pragma: no cover - helpers pass a socket to their children
            raise ValueError(f"workers={workers} needs a POSIX system (Linux, macOS): pass workers=1")
    return kwargs


def _so_far(path: Path, settings: dict[str, Any]) -> _Tally:
    """What the collection at ``path`` holds already (to resume it), checked against this one's settings.

    Raises:
        ValueError: the dataset was not made by collect, or with other settings.
    """
    reader = open_dataset(path)
    try:
        stored = reader.info.collected
        attrs = [reader.episode_attrs(e) for e in range(reader.num_episodes)]
    finally:
        reader.close()
    if stored is None:
        raise ValueError(f"cannot resume {str(path)!r}: it was not made by collect (resume a DatasetRecorder's "
                         "dataset with DatasetRecorder(..., resume=True)); pick another path")
    differ = {key: stored.get(key) for key, value in settings.items() if stored.get(key) != value}
    if differ:
        asked = {key: settings[key] for key in differ}
        raise ValueError(f"cannot resume {str(path)!r}: it was collected with {differ}, and this run asks {asked}: "
                         "pass the same values, or overwrite=True to start again")
    tally = _Tally(kept=len(attrs), successes=sum(bool(a.get("success")) for a in attrs))
    if attrs:  # the attempts up to the last kept one's seed all ran (with keep="all", each of them is kept)
        tally.tried = int(attrs[-1]["seed"]) - settings["seed"] + 1
    return tally


def _write(writer: EpisodeWriter, episode: Episode) -> None:
    if episode.videos is not None:  # encoded where the episode ran: the LeRobot writer places them
        writer.write_episode(episode.frames, episode.final_snapshot, episode.end,  # type: ignore[attr-defined]
                             episode.attrs(), episode.videos)
        return
    for frame in episode.frames:
        writer.add_frame(frame)
    writer.end_episode(episode.final_snapshot, episode.end, episode.attrs())


def collect(
    task: str,
    out: str | os.PathLike[str],
    *,
    episodes: int,
    workers: int = 1,
    format: str = "lerobot",
    cams: Iterable[CameraLike] | str | os.PathLike[str] | None = None,
    keep: str = "success",
    seed: int = 0,
    resume: bool = False,
    overwrite: bool = False,
    renderer: str | None = None,
    progress: bool = True,
    env_kwargs: Mapping[str, Any] | None = None,
) -> CollectReport:
    """Run ``task``'s scripted expert until ``episodes`` episodes are in the dataset ``out``.

    Attempt ``i`` resets the env with seed ``seed + i``; attempts are written in order, so the dataset is the same
    whatever ``workers`` is (same renderer, same machine). Each episode stores its seed and success
    (``open_dataset(out).episode_attrs(e)``: LeRobot's ``meta/episodes`` columns ``pixelrig/seed`` and
    ``pixelrig/success``, robomimic's ``data/demo_k`` attributes ``pixelrig_seed`` and ``pixelrig_success``), and the
    metadata how the episodes were made (``DatasetInfo.collected``). Everything is checked before anything is
    started or touched.

    Args:
        task: an env id with an expert in :data:`pixelrig.experts.EXPERTS` (``"pixelrig/PandaLift-v0"``), or its
            short name (``"PandaLift"``).
        out: the dataset: a folder for LeRobot, a ``*.hdf5`` file for robomimic.
        episodes: episodes wanted in the dataset.
        workers: processes running the expert. 1: this one, which also writes. ``W`` > 1: W worker processes, and
            this one writes.
        format: "lerobot" or "robomimic".
        cams: the rig: a rig file (JSON/TOML, as ``pixelrig view --cams``) or Cameras / camera dicts; their "rgb" and
            "depth" images are stored. None: the task's default rig.
        keep: "success" keeps the episodes that succeeded (``info["is_success"]`` at the end), trying seeds until
            ``episodes`` are kept, at most :data:`ATTEMPTS_PER_EPISODE` × ``episodes``; "all" keeps every episode.
        seed: the first attempt's seed.
        resume: go on with the collection at ``out`` (made by collect with the same task, seed, keep, env and rig):
            its episodes stay, attempts continue after its last one. Nothing there: start it.
        overwrite: replace a dataset of this format at ``out`` (anything else there is never deleted).
        renderer: the backend to draw with (any of :data:`~pixelrig.render.registry.RENDERER_CHOICES`); None:
            ``PIXELRIG_RENDERER``, else auto.
        progress: show a progress bar (tqdm) on stderr.
        env_kwargs: more ``gym.make`` arguments for the task (``max_episode_steps``, ``randomize``, ...).

    Returns:
        The counts (the whole dataset's) and this call's throughput; :meth:`CollectReport.summary` words them.

    Raises:
        ValueError: an unknown task or one without an expert, episodes or workers < 1, a bad keep, seed, format,
            renderer, rig or env_kwargs, resuming a dataset made otherwise (each names the value and the fix).
        FileNotFoundError: no such rig file.
        DatasetExistsError: something is at ``out`` and neither ``resume`` nor ``overwrite`` was given.
        FileExistsError: ``overwrite`` but what is at ``out`` is not a dataset of this format (it is left alone).
        DatasetWriteError: the dataset cannot be written; the episodes written before are intact (resume goes on).
        RuntimeError: the expert failed too often (``keep="success"``: the successes so far are kept), or a worker
            died (the episodes written before are intact); an error raised in a worker is raised as it is.
    """
    start = time.perf_counter()
    env_id, expert = expert_task(task)
    whole_number("episodes", episodes, 1)
    whole_number("workers", workers, 1)
    if keep not in KEEP:
        raise ValueError(f"keep must be one of {KEEP}: got {keep!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed={seed!r} must be a whole number >= 0 (episode i is reset with seed + i)")
    path = check_dataset_path(out, format)
    cameras = None if cams is None else tuple(c.to_dict() for c in rig_cameras(cams))
    requested_renderer(renderer)  # PIXELRIG_RENDERER too, when it is the one asked for
    kwargs = _env_kwargs(env_kwargs, workers)
    settings = {"task": env_id, "expert": expert, "seed": seed, "keep": keep}
    tally = _so_far(path, settings) if check_target(path, format, overwrite, resume) == "resume" else _Tally()
    stop = episodes * (ATTEMPTS_PER_EPISODE if keep == "success" else 1)
    job = CollectJob(env_id, kwargs, cameras, renderer, seed, encode_videos=format == "lerobot", keep=keep)
    count = max(1, min(workers, stop - tally.tried))
    run = 0
    if tally.kept < episodes and tally.tried < stop:
        run = _collect(job, path, format, episodes, keep, overwrite, resume, progress, count, stop, settings, tally)
    seconds = time.perf_counter() - start
    report = CollectReport(tally.kept, tally.tried, tally.successes, tally.successes / max(tally.tried, 1), seconds,
                           run / seconds, path, run, count if run else 0)
    if tally.kept < episodes:
        raise RuntimeError(f"the {expert} succeeded in {tally.successes} of {tally.tried} attempts (seeds {seed} to "
                           f"{seed + tally.tried - 1}), short of the {episodes} episodes wanted: collect tries at most "
                           f"{ATTEMPTS_PER_EPISODE} seeds per episode. The {tally.kept} successful episodes are in "
                           f"{str(path)!r}. Check the env's kwargs (or the expert), or pass keep='all' to keep "
                           "failures too")
    return report


def _collect(job: CollectJob, path: Path, fmt: str, episodes: int, keep: str, overwrite: bool, resume: bool,
             progress: bool, count: int, stop: int, settings: dict[str, Any], tally: _Tally) -> int:
    """Run attempts from ``tally.tried`` on until ``episodes`` are kept or ``stop`` attempts were made, writing the
    kept ones; ``tally`` counts along. Returns the attempts run."""
    from tqdm import tqdm

    source: ExpertRecorder | WorkerEpisodes = ExpertRecorder(job) if count == 1 else \
        WorkerEpisodes(job, count, tally.tried, stop)
    run = 0
    try:
        robot = source.info.robot if fmt == "lerobot" else None  # a real robot's features are LeRobot's
        info = dataclasses.replace(source.info, collected=settings, robot=robot)
        writer = open_writer(path, fmt, info, overwrite=overwrite, resume=resume)
        try:
            with tqdm(total=episodes, initial=tally.kept, unit="episode", desc=f"collect {path.name}",
                      disable=not progress) as bar:
                for attempt in range(tally.tried, stop):
                    if tally.kept >= episodes:
                        break
                    episode = source.episode(attempt)
                    run += 1
                    tally.tried += 1
                    tally.successes += episode.success
                    kept = keep == "all" or episode.success
                    if kept:
                        _write(writer, episode)
                        tally.kept += 1
                    bar.set_postfix_str(f"{tally.successes}/{tally.tried} succeeded", refresh=not kept)
                    bar.update(int(kept))
        except BaseException:
            writer.abort_episode()
            raise
        finally:
            writer.close()
    finally:
        source.close()
    return run
