"""Running an evaluation's episodes: each factor's episodes spread over the envs of one vector env (``make_vec``'s
sync, process or batched mode), one policy per env, every finished episode appended to a JSONL file at once.

Episode ``i`` of every factor is reset with seed ``seed + i``. An env takes the next episode as soon as its last one
ends (autoreset disabled: it is reset with that episode's seed), so which env runs an episode depends on the worker
count and timing, but what the episode gives does not: a seeded reset is exact, the policy is reset before each
episode (``reset(seed=...)`` when it takes a seed) and sees that env's observation alone. An env with no episode
left runs a throwaway episode until the others finish (its results are dropped).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from pixelrig.errors import PolicyError
from pixelrig.evaluation.factor_env import FACTORED_ID
from pixelrig.evaluation.policies import reset_policy
from pixelrig.vector.make import make_vec

EPISODES_FILE = "episodes.jsonl"
"""The file in ``out`` holding one JSON row per finished episode, in the order they finished."""

VECTOR_MODES = {"sync": "sync", "process": "async", "async": "async", "batched": "batched"}
"""``vectorization_mode`` values and ``make_vec``'s name for each ("process" is its "async")."""


@dataclasses.dataclass(frozen=True)
class EpisodeRow:
    """One finished episode.

    Attributes:
        factor: the factor it ran under.
        episode_ix: its number (seed ``seed + episode_ix``).
        seed: its reset seed.
        success: whether any step's ``info["is_success"]`` was true (as lerobot-eval counts it).
        sum_reward: the sum of its rewards.
        max_reward: the largest reward.
        length: steps taken.
        digest: sha256 (hex, first 16 characters) of the first observation's images: every key but ``"state"``, in
            name order, with its dtype and shape.
    """

    factor: str
    episode_ix: int
    seed: int
    success: bool
    sum_reward: float
    max_reward: float
    length: int
    digest: str

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-friendly data."""
        return dataclasses.asdict(self)


def image_digest(obs: Mapping[str, Any]) -> str:
    """A digest of an observation's images (every key but ``"state"``: each camera's every modality)."""
    h = hashlib.sha256()
    for key in sorted(obs):
        if key == "state":
            continue
        value = np.ascontiguousarray(obs[key])
        h.update(f"{key}|{value.dtype.str}|{value.shape}|".encode())
        h.update(value.tobytes())
    return h.hexdigest()[:16]


def read_rows(path: Path) -> list[EpisodeRow]:
    """The rows of an episodes file (a last line cut short by a killed run is skipped)."""
    rows = []
    if not path.is_file():
        return rows
    for line in path.read_text().splitlines():
        try:
            rows.append(EpisodeRow(**json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            continue
    return rows


class EpisodeLog:
    """The episodes file of an evaluation folder, appended to (and flushed) as each episode finishes; None: in
    memory only."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.rows: list[EpisodeRow] = read_rows(path) if path is not None else []
        self._file = None
        if path is not None:
            if path.is_file() and path.read_bytes()[-1:] not in (b"", b"\n"):
                with path.open("a") as f:  # end a line cut short by a killed run
                    f.write("\n")
            self._file = path.open("a")

    def done(self) -> set[tuple[str, int]]:
        """(factor, episode_ix) of every finished episode."""
        return {(r.factor, r.episode_ix) for r in self.rows}

    def add(self, row: EpisodeRow) -> None:
        """Keep a finished episode (on disk at once)."""
        self.rows.append(row)
        if self._file is not None:
            self._file.write(json.dumps(row.to_dict()) + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """What every factor's episodes share.

    Attributes:
        env_id: the task.
        cams: the rig as camera dicts (None: the task's own).
        env_kwargs: more ``gym.make`` arguments.
        renderer: the backend (resolved).
        seed: episode ``i`` is reset with ``seed + i``.
        workers: envs running episodes at once.
        vectorization_mode: "sync", "process" or "batched".
        num_workers: "batched": processes the envs are spread over.
    """

    env_id: str
    cams: tuple[dict[str, Any], ...] | None
    env_kwargs: dict[str, Any]
    renderer: str
    seed: int
    workers: int
    vectorization_mode: str
    num_workers: int = 1


@dataclasses.dataclass
class _Slot:
    """What one env of the vector env is running."""

    episode_ix: int | None  # None: a throwaway episode
    seed: int
    obs: Any = None
    step: int = 0
    sum_reward: float = 0.0
    max_reward: float = -math.inf
    success: bool = False
    digest: str = ""
    frames: list[np.ndarray] | None = None


def _split(obs: Any, i: int) -> Any:
    return {k: v[i] for k, v in obs.items()} if isinstance(obs, Mapping) else obs[i]


def _flag(info: Mapping[str, Any], key: str, i: int) -> bool:
    if key not in info:
        return False
    mask = info.get(f"_{key}")
    return bool(info[key][i]) and (mask is None or bool(mask[i]))


def rgb_frame(obs: Mapping[str, Any]) -> np.ndarray | None:
    """Every camera's RGB image of an observation side by side (None without any)."""
    images = [np.asarray(obs[k]) for k in sorted(obs) if k.endswith("/rgb")]
    if not images:
        return None
    height = max(im.shape[0] for im in images)
    return np.concatenate([np.pad(im, ((0, height - im.shape[0]), (0, 0), (0, 0))) for im in images], axis=1)


def check_action(action: Any, space: gym.spaces.Space, factor: str, seed: int, step: int) -> np.ndarray:
    """The policy's action as an array of the action space's shape and dtype.

    Raises:
        PolicyError: the wrong shape, not numbers, or NaN / infinite values (naming the factor, seed and step).
    """
    where = f"factor {factor!r}, seed {seed}, step {step}"
    try:
        array = np.asarray(action, dtype=np.float64)
    except (TypeError, ValueError):
        raise PolicyError(f"the policy returned {type(action).__name__} {action!r:.80}, not numbers, at {where}: "
                          "return an array of the action space's shape") from None
    shape = getattr(space, "shape", None)
    if shape is not None and array.shape != tuple(shape):
        raise PolicyError(f"the policy returned an action of shape {array.shape} at {where}; the action space "
                          f"{space} takes shape {tuple(shape)}")
    if not np.all(np.isfinite(array)):
        raise PolicyError(f"the policy returned a non-finite action {array.tolist()} at {where}")
    return array.astype(space.dtype) if getattr(space, "dtype", None) is not None else array


def run_factor(spec: RunSpec, factor: str, pending: list[int], policies: list[Any], log: EpisodeLog,
               on_episode: Callable[[EpisodeRow], None] = lambda row: None, videos: int = 0,
               video_dir: Path | None = None, first_frame: Callable[[np.ndarray], None] | None = None) -> int:
    """Run ``factor``'s episodes ``pending`` (their numbers), each into ``log`` as it ends.

    Args:
        spec: what the factors share.
        factor: the factor's name.
        pending: episode numbers to run, in order.
        policies: one policy per env (at least ``min(spec.workers, len(pending))``).
        log: where finished episodes go.
        on_episode: called with each finished episode (the progress bar).
        videos: episodes below this number are recorded into ``video_dir`` (every camera's RGB side by side).
        video_dir: where the videos go.
        first_frame: called with episode 0's first RGB frame.

    Returns:
        Episodes run.

    Raises:
        PolicyError: the policy raised, or returned an action of the wrong shape or a non-finite one (naming the
            factor, seed and step); the episodes finished before are in ``log``.
    """
    if not pending:
        return 0
    count = min(spec.workers, len(pending))
    kwargs = {"env_id": spec.env_id, "factor": factor, "cams": spec.cams, "env_kwargs": spec.env_kwargs}
    mode = VECTOR_MODES[spec.vectorization_mode]
    envs = make_vec(FACTORED_ID, count, renderer=spec.renderer, vectorization_mode=mode, pixels=False,
                    env_kwargs=kwargs, autoreset_mode="Disabled",
                    num_workers=min(spec.num_workers, count) if mode == "batched" else 1)
    queue = deque(pending)
    space = envs.single_action_space
    rest = np.asarray((space.low + space.high) / 2, dtype=space.dtype) if isinstance(space, gym.spaces.Box) \
        else space.sample()
    run = 0
    try:
        slots = [_Slot(queue.popleft(), 0) for _ in range(count)]
        obs, _ = envs.reset(seed=[_start(slot, spec, videos) for slot in slots])
        _started(slots, range(count), obs, policies, first_frame)
        while any(slot.episode_ix is not None for slot in slots):
            actions = []
            for i, slot in enumerate(slots):
                if slot.episode_ix is None:
                    actions.append(rest)
                    continue
                try:
                    action = policies[i](slot.obs)
                except Exception as exc:
                    raise PolicyError(f"the policy raised {type(exc).__name__}: {exc} at factor {factor!r}, seed "
                                      f"{slot.seed}, step {slot.step}") from exc
                actions.append(check_action(action, space, factor, slot.seed, slot.step))
            obs, rewards, terminated, truncated, infos = envs.step(np.stack(actions))
            ended = []
            for i, slot in enumerate(slots):
                slot.obs = _split(obs, i)
                slot.step += 1
                slot.sum_reward += float(rewards[i])
                slot.max_reward = max(slot.max_reward, float(rewards[i]))
                slot.success = slot.success or _flag(infos, "is_success", i)
                if slot.frames is not None:
                    slot.frames.append(rgb_frame(slot.obs))
                if terminated[i] or truncated[i]:
                    ended.append(i)
            if not ended:
                continue
            for i in ended:
                slot = slots[i]
                if slot.episode_ix is not None:
                    row = EpisodeRow(factor, slot.episode_ix, slot.seed, slot.success, slot.sum_reward,
                                     slot.max_reward, slot.step, slot.digest)
                    log.add(row)
                    run += 1
                    on_episode(row)
                    if slot.frames and video_dir is not None:
                        _write_video(video_dir / f"{factor}_seed{slot.seed}.mp4", slot.frames)
                slots[i] = _Slot(queue.popleft(), 0) if queue else _Slot(None, slot.seed)
            if not any(slot.episode_ix is not None for slot in slots):
                break
            mask = np.zeros(count, dtype=np.bool_)
            mask[ended] = True
            seeds = [_start(slots[i], spec, videos) if mask[i] else None for i in range(count)]
            obs, _ = envs.reset(seed=seeds, options={"reset_mask": mask})
            _started(slots, ended, obs, policies, first_frame)
    finally:
        envs.close()
    return run


def _start(slot: _Slot, spec: RunSpec, videos: int) -> int:
    """The seed a slot's episode resets with (a throwaway episode keeps the slot's last seed)."""
    if slot.episode_ix is not None:
        slot.seed = spec.seed + slot.episode_ix
        slot.frames = [] if slot.episode_ix < videos else None
    return slot.seed


def _started(slots: list[_Slot], indices: Any, obs: Any, policies: list[Any],
             first_frame: Callable[[np.ndarray], None] | None) -> None:
    for i in indices:
        slot = slots[i]
        slot.obs = _split(obs, i)
        if slot.episode_ix is None:
            continue
        slot.digest = image_digest(slot.obs) if isinstance(slot.obs, Mapping) else ""
        reset_policy(policies[i], slot.seed)
        frame = rgb_frame(slot.obs) if isinstance(slot.obs, Mapping) else None
        if slot.frames is not None and frame is not None:
            slot.frames.append(frame)
        if slot.episode_ix == 0 and first_frame is not None and frame is not None:
            first_frame(frame)


def _write_video(path: Path, frames: list[np.ndarray]) -> None:
    from pixelrig.display.video import VideoStream

    path.parent.mkdir(parents=True, exist_ok=True)
    stream = VideoStream(path, fps=30)
    try:
        for frame in frames:
            stream.write(frame)
    finally:
        stream.close()


def pending_by_factor(factors: list[str], episodes: int, done: set[tuple[str, int]]) -> Iterator[tuple[str, list[int]]]:
    """Each factor and its episode numbers not in ``done``."""
    for factor in factors:
        yield factor, [i for i in range(episodes) if (factor, i) not in done]

