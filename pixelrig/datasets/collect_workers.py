"""Where :func:`~pixelrig.datasets.collect.collect`'s episodes come from: a task's env under PixelObs and a
DatasetRecorder that holds each episode in memory, driven by the task's scripted expert (:class:`ExpertRecorder`), in
this process or in worker processes that send each finished episode, whole, to the process writing the dataset
(:class:`WorkerEpisodes`; their body is :mod:`pixelrig.datasets.collect_worker_main`).

Attempt ``i`` is the episode reset with seed ``first_seed + i``; what it holds depends on that seed alone (a reset
with a seed is exact, whatever the env ran before), so it is the same in whichever process runs it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

from pixelrig.cameras.spec import Camera
from pixelrig.datasets.info import DatasetInfo
from pixelrig.datasets.recorder import DatasetRecorder
from pixelrig.datasets.steps import EpisodeAttrs, Step
from pixelrig.errors import HelperFailed
from pixelrig.system.process import Helper, stop_all
from pixelrig.wrappers.pixel_obs import PixelObs

_MODULE = "pixelrig.datasets.collect_worker_main"


@dataclasses.dataclass(frozen=True)
class CollectJob:
    """What running a task's expert needs (sent to the worker processes).

    Attributes:
        env_id: the task's gymnasium id (its expert is ``pixelrig.experts.EXPERTS[env_id]``).
        env_kwargs: more ``gym.make`` arguments.
        cams: the rig as camera dicts (None: the task's default rig).
        renderer: the backend to draw with (None: ``PIXELRIG_RENDERER``, else auto).
        first_seed: attempt ``i`` resets with seed ``first_seed + i``.
        encode_videos: encode each kept episode's videos where it is run (a LeRobot dataset's:
            :func:`~pixelrig.datasets.lerobot.encode_videos`), so that the writing process only places the files.
        keep: which episodes are kept ("success" or "all"): only those are encoded.
    """

    env_id: str
    env_kwargs: dict[str, Any]
    cams: tuple[dict[str, Any], ...] | None
    renderer: str | None
    first_seed: int
    encode_videos: bool = False
    keep: str = "all"


@dataclasses.dataclass(frozen=True)
class Episode:
    """One finished attempt: the frames the recorder made and whether the task succeeded.

    Attributes:
        attempt: its number (seed ``first_seed + attempt``).
        seed: the seed it was reset with.
        frames: the recorder's frames (each ``next_obs`` is the next frame's ``obs``: pickled once).
        final_snapshot: the state after the last action.
        end: "terminated" or "truncated".
        success: ``info["is_success"]`` of the last step.
        videos: each RGB camera's encoded video of the frames (``CollectJob.encode_videos``), else None.
    """

    attempt: int
    seed: int
    frames: list[Step]
    final_snapshot: bytes
    end: str
    success: bool
    videos: dict[str, bytes] | None = None

    def attrs(self) -> EpisodeAttrs:
        """What the dataset stores with the episode: its seed and success."""
        return {"seed": self.seed, "success": self.success}


IN_MEMORY = "<memory>"
"""The path of an :class:`EpisodeBuffer` (and of the recorder that writes into it): it writes no file."""


class EpisodeBuffer:
    """An :class:`~pixelrig.datasets.formats.EpisodeWriter` that keeps the last finished episode in memory (for
    ``DatasetRecorder(..., writer=EpisodeBuffer)``), until :meth:`take` hands it over."""

    needs_next_obs = True

    def __init__(self, info: DatasetInfo) -> None:
        self.info = info
        self.path = Path(IN_MEMORY)
        self.num_episodes = 0
        self.frames: list[Step] = []
        self.finished: tuple[list[Step], bytes, str] | None = None

    def add_frame(self, frame: Step) -> None:
        """Append a frame to the episode in progress."""
        self.frames.append(frame)

    def end_episode(self, final_snapshot: bytes, end: str, attrs: EpisodeAttrs | None = None) -> int:
        """Hold the episode in progress as the finished one."""
        self.finished, self.frames = (self.frames, final_snapshot, end), []
        self.num_episodes += 1
        return self.num_episodes - 1

    def take(self) -> tuple[list[Step], bytes, str]:
        """The finished episode's frames, final snapshot and end (once).

        Raises:
            RuntimeError: no episode finished since the last call.
        """
        if self.finished is None:
            raise RuntimeError("no episode has finished since the last take()")
        finished, self.finished = self.finished, None
        return finished

    def abort_episode(self) -> None:
        """Drop the episode in progress."""
        self.frames = []

    def close(self) -> None:
        """Drop what is held."""
        self.frames, self.finished = [], None


def run_expert(env: gym.Env, expert: Any, seed: int, between_steps: Callable[[], None] | None = None) -> dict:
    """One episode of ``expert`` on ``env`` (a PixelObs stack, whose ``"state"`` the expert reads): reset with
    ``seed``, step until terminated or truncated.

    Args:
        env: the env (under PixelObs, its dict observation holding ``"state"``).
        expert: a :mod:`pixelrig.experts` expert for the env's task (reset here).
        seed: the reset's seed.
        between_steps: called before each step; what it raises ends the episode.

    Returns:
        The last step's info.
    """
    obs, info = env.reset(seed=seed)
    expert.reset()
    done = False
    while not done:
        if between_steps is not None:
            between_steps()
        obs, _, terminated, truncated, info = env.step(expert(obs["state"]))
        done = terminated or truncated
    return info


class ExpertRecorder:
    """A task's env under PixelObs and a recorder into an :class:`EpisodeBuffer`, and the task's expert.

    Args:
        job: the task, its kwargs, rig and renderer.

    Attributes:
        info: what the recorder records (the dataset's description, less ``collected``).

    Raises:
        ValueError, TypeError: the env or the rig cannot be made (as ``gym.make`` and PixelObs raise them).
    """

    def __init__(self, job: CollectJob) -> None:
        import pixelrig.experts as experts

        self.job = job
        env = gym.make(job.env_id, renderer=job.renderer, **job.env_kwargs)
        try:
            cams = None if job.cams is None else [Camera.from_dict(c) for c in job.cams]
            self.recorder = DatasetRecorder(PixelObs(env, cams=cams), IN_MEMORY, writer=EpisodeBuffer)
            self.expert = experts.EXPERTS[job.env_id](self.recorder)
        except BaseException:
            env.close()
            raise
        self.buffer: EpisodeBuffer = self.recorder.writer  # type: ignore[assignment]  # the EpisodeBuffer made
        self.info = self.recorder.info

    def episode(self, attempt: int, between_steps: Callable[[], None] | None = None) -> Episode:
        """Run attempt ``attempt`` (seed ``first_seed + attempt``) to its end.

        Args:
            attempt: the attempt's number.
            between_steps: called before each step; what it raises ends the attempt (a worker raises EOFError there
                once the collecting process has closed its connection).

        Raises:
            ValueError: the task does not report ``info["is_success"]``.
        """
        seed = self.job.first_seed + attempt
        info = run_expert(self.recorder, self.expert, seed, between_steps)
        if "is_success" not in info:
            raise ValueError(f"{self.job.env_id} does not report info['is_success'], which collect stores with each "
                             "episode (and keeps episodes by): collect runs the tasks of pixelrig.experts.EXPERTS")
        frames, final, end = self.buffer.take()
        success = bool(info["is_success"])
        videos = None
        if self.job.encode_videos and (success or self.job.keep == "all"):
            from pixelrig.datasets.lerobot import encode_videos

            videos = encode_videos(frames, self.info)
        return Episode(attempt, seed, frames, final, end, success, videos)

    def close(self) -> None:
        """Close the env."""
        self.recorder.close()


class WorkerEpisodes:
    """``count`` worker processes running attempts ``first``, ``first + 1``, ... below ``stop``: worker ``k`` runs
    ``first + k``, ``first + k + count``, ... in order and sends each episode when it ends; :meth:`episode` takes
    them in attempt order. A worker that is ahead waits on sending (at most one episode waits per worker).

    Raises:
        RuntimeError: a worker could not start, or the workers record different things (a renderer chosen by
            "auto" that differs); the error a worker raised while starting is raised as it is.
    """

    def __init__(self, job: CollectJob, count: int, first: int, stop: int) -> None:
        self.first, self.count = first, count
        self.helpers: list[Helper] = []
        try:
            for k in range(count):
                # stderr shown as it comes (and its end kept for errors); stdout dropped: the EGL plugin talks there
                self.helpers.append(Helper.start(_MODULE, {"job": job, "attempts": (first + k, stop, count)},
                                                 what=f"collect worker {k}", timeout=None, wait=False, stderr="tee"))
            infos = [self._started(k) for k in range(count)]
            for k, info in enumerate(infos[1:], 1):
                differ = [f.name for f in dataclasses.fields(info)
                          if getattr(info, f.name) != getattr(infos[0], f.name)]
                if differ:
                    raise RuntimeError(f"collect workers 0 and {k} record different {differ} (renderer "
                                       f"{infos[0].renderer!r} and {info.renderer!r}): pass renderer= explicitly")
        except BaseException:
            self.close()
            raise
        self.info: DatasetInfo = infos[0]

    def _started(self, k: int) -> DatasetInfo:
        helper = self.helpers[k]
        try:
            return helper.wait_ready()
        except HelperFailed as exc:
            if exc.error is not None:  # raised while starting: raised here as it is
                raise exc.error from RuntimeError(f"in collect worker {k} (pid {helper.pid}), while starting:\n"
                                                  f"{exc.trace}")
            raise RuntimeError(f"collect worker {k} (pid {helper.pid}) could not start: {exc.summary}") from None

    def episode(self, attempt: int) -> Episode:
        """Attempt ``attempt``, from the worker running it (an error it raised is raised here).

        Raises:
            RuntimeError: the worker died (the episodes written before are in the dataset: resume goes on).
        """
        k = (attempt - self.first) % self.count
        helper = self.helpers[k]
        doing = f"running attempt {attempt}"
        try:
            message = helper.recv(doing)
        except HelperFailed as exc:
            raise RuntimeError(f"{exc}: the episodes written before it are in the dataset; run collect again with "
                               "resume=True (--resume) to go on") from None
        if message[0] == "error":
            raise message[1] from RuntimeError(f"in collect worker {k} (pid {helper.pid}), while {doing}:\n"
                                               f"{message[2]}")
        episode: Episode = message[1]
        if episode.attempt != attempt:
            raise RuntimeError(f"collect worker {k} sent attempt {episode.attempt} where {attempt} was due")
        return episode

    def close(self) -> None:
        """Stop the workers (each stops at its next step once its connection closes; killed if it hangs)."""
        stop_all(self.helpers, timeout=10.0)
