"""Re-rendering one recorded episode with a new rig: each frame's stored snapshot restored into an env under a
PixelObs (no physics is stepped) and the rig drawn; what :func:`~pixelrig.datasets.replay` runs, in its own process
or in worker processes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from pixelrig.cameras.spec import Camera
from pixelrig.datasets.bullet_file import PoseRestorer
from pixelrig.datasets.formats import DatasetReader
from pixelrig.datasets.frames import Observation, StoredFrame, depth_to_mm
from pixelrig.snapshots import Snapshot, physics_of, restore
from pixelrig.wrappers.pixel_obs import PixelObs


@dataclasses.dataclass(frozen=True)
class EpisodeEnd:
    """The end of an episode's items: the state after the last action, how the episode ended, and the observation
    of that state (None when the writer does not store next observations). ``final`` is None for an episode with
    no frames (nothing is written for it)."""

    final: bytes | None
    end: str
    last: Observation | None


Item = tuple[StoredFrame, Observation] | EpisodeEnd
"""What :func:`episode_items` yields: each frame as stored with its new observation, then an :class:`EpisodeEnd`."""


class SnapshotDrawer:
    """Restores snapshots into an env under a PixelObs and renders the rig.

    The first frame of each episode is a full :func:`~pixelrig.restore` (it checks that the snapshot belongs to
    this env, and applies the episode's randomised colours, task state and camera jitter), into the world as it is
    when the images allow it (``can_show_in_place``: the same parameters are randomised; PandaPush restores in 5 ms
    so, against 44 ms with the world rebuilt), else into a rebuilt world. Later frames of the episode only set the
    bodies' poses and velocities as pybullet's restore does, not its contact caches, which only a physics step would
    read (:class:`~pixelrig.datasets.bullet_file.PoseRestorer`, proven against the full restore at each episode's first
    frame), from the snapshot's physics alone (:func:`~pixelrig.snapshots.physics_of`): an image depends on nothing
    else, and the world, its rig binding and the renderer's uploaded scene stay as they are (a full
    ``import_state`` would mark the scene changed and make the gl renderer upload it again every frame).

    Args:
        make_pixel: returns the env to restore into, wrapped in ``PixelObs(..., cams, pixels_only=True)``.
        cameras: the rig (their "rgb" and "depth" images are kept).
    """

    def __init__(self, make_pixel: Callable[[], PixelObs], cameras: tuple[Camera, ...]) -> None:
        self.fars = {c.name: c.far for c in cameras}
        self.rgb = tuple(c.name for c in cameras if "rgb" in c.modalities)
        self.depth = tuple(c.name for c in cameras if "depth" in c.modalities)
        self.pixel = make_pixel()
        self.inner = self.pixel.env
        self.poses = PoseRestorer(self.pixel.unwrapped.client)
        self.identity: dict[str, Any] | None = None

    @property
    def backend(self) -> str:
        """The name of the backend that draws (a key of :data:`pixelrig.render.registry.BACKENDS`)."""
        return self.pixel.render_backend.name

    def close(self) -> None:
        """Close the env."""
        self.pixel.close()

    def restore(self, data: bytes, first: bool, where: str) -> None:
        """Put the world into the snapshot ``data``'s state (as far as images go; fully at an episode's start).

        Raises:
            ValueError: the snapshot is corrupted or belongs to another env (the message starts with ``where``).
        """
        if not first and self.identity is not None:
            try:
                identity, physics = physics_of(data)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
            if identity == self.identity:
                self.poses.restore(physics)
                return
        try:
            snap = Snapshot.from_bytes(data)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        physics = snap.env_state["physics"]
        try:
            in_place = self.inner.unwrapped.can_show_in_place(snap.env_state)
        except (KeyError, TypeError, AttributeError):
            in_place = False  # not this env's state: restore() below says why
        try:  # the world is rebuilt only when the images need it
            restore(self.inner, snap, rebuild=not in_place)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}. replay rebuilds the env from the dataset's env id and kwargs; "
                             "if yours was made differently, pass make_env= (a function returning it, without "
                             "PixelObs)") from exc
        self.identity = snap.identity
        self.poses.check(physics)

    def restore_fully(self, data: bytes) -> None:
        """Everything a snapshot holds, Python task state included (for ``observe()``), into the world as it is."""
        self.inner.unwrapped.import_state(Snapshot.from_bytes(data).env_state, rebuild=False)

    def observe(self, data: bytes, first: bool, state: np.ndarray | None, where: str) -> Observation:
        """Restore the snapshot ``data`` and render what a dataset keeps of the rig's images."""
        self.restore(data, first, where)
        images = self.pixel.render_rig()
        return Observation(rgb={c: images[f"{c}/rgb"] for c in self.rgb},
                           depth={c: depth_to_mm(images[f"{c}/depth"], self.fars[c]) for c in self.depth},
                           state=state)


def episode_items(reader: DatasetReader, drawer: SnapshotDrawer, episode: int, needs_next_obs: bool,
                  state_shape: tuple[int, ...] | None) -> Iterator[Item]:
    """The frames of ``episode`` re-rendered, in order, then its :class:`EpisodeEnd`.

    Args:
        reader: the recorded dataset.
        drawer: restores and renders.
        episode: which episode.
        needs_next_obs: also render the state after the last action (the writer stores next observations).
        state_shape: the env's own observation's shape (None: the dataset stores no state).
    """
    empty = True
    for t, stored in enumerate(reader.frames(episode)):
        yield stored, drawer.observe(stored.snapshot, t == 0, stored.state, f"episode {episode} frame {t}")
        empty = False
    if empty:
        yield EpisodeEnd(None, "", None)
        return
    final = reader.final_snapshot(episode)
    last = None
    if needs_next_obs:
        state = reader.final_state(episode)
        if state is None and state_shape is not None:
            drawer.restore_fully(final)
            state = np.asarray(drawer.pixel.unwrapped.observe(), dtype=np.float32).reshape(state_shape)
        last = drawer.observe(final, False, state, f"episode {episode} final state")
    yield EpisodeEnd(final, reader.episode_end(episode), last)
