"""Re-rendering one recorded episode with a new rig: each frame's stored snapshot restored into an env under a
PixelObs (no physics is stepped) and the rig drawn; what :func:`~pixelrig.datasets.replay` runs, in its own process
or in worker processes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pybullet as p

from pixelrig.cameras.spec import Camera
from pixelrig.datasets.bullet_file import PoseRestorer
from pixelrig.datasets.formats import DatasetReader
from pixelrig.datasets.steps import Observation, StoredStep, depth_to_mm
from pixelrig.envs.looks import distractor_ids, draw_looks, remake_distractors, visual_links, wear_textures
from pixelrig.envs.presets import LooksPreset, looks_preset
from pixelrig.envs.randomization import Randomization
from pixelrig.errors import whole_number
from pixelrig.render.lighting import Lighting
from pixelrig.snapshots import Snapshot, physics_of, restore
from pixelrig.wrappers.pixel_obs import PixelObs


@dataclasses.dataclass(frozen=True)
class ReplayLooks:
    """New looks for a replay: the look fields of ``randomization`` (light, textures, distractors) drawn per episode
    from ``seed`` and the episode's index, and PixelObs's ``background``.

    Attributes:
        randomization: its look fields are drawn (its other fields are ignored: the physics is the recording's).
        background: PixelObs's background source (None: none).
        seed: the looks' seed; episode ``e`` draws from ``(seed, e)``.
    """

    randomization: Randomization
    background: str | None = None
    seed: int = 0

    @classmethod
    def of(cls, looks: str | LooksPreset | Randomization | None, seed: int = 0) -> ReplayLooks | None:
        """``replay(looks=...)``'s value: a preset's name, a preset, a Randomization (looks only) or None.

        Raises:
            ValueError: an unknown preset, another type, or a seed that is not a whole number >= 0.
        """
        whole_number("looks_seed", seed, 0)
        if looks is None:
            return None
        if isinstance(looks, str):
            looks = looks_preset(looks)
        if isinstance(looks, LooksPreset):
            return cls(looks.randomization, looks.background, seed)
        if isinstance(looks, Randomization):
            return cls(looks, None, seed)
        raise ValueError(f"looks={looks!r} must be a looks preset's name (e.g. 'train'), a LooksPreset or a "
                         "pixelrig.Randomization of looks")

    def episode_seed(self, episode: int) -> int:
        """The seed episode ``episode``'s looks are drawn from."""
        return int(np.random.default_rng([self.seed, episode]).integers(2**62))


@dataclasses.dataclass(frozen=True)
class EpisodeEnd:
    """The end of an episode's items: the state after the last action, how the episode ended, and the observation
    of that state (None when the writer does not store next observations), and the looks drawn for it. ``final`` is
    None for an episode with no frames (nothing is written for it)."""

    final: bytes | None
    end: str
    last: Observation | None
    looks: dict[str, Any] | None = None
    """What the new looks drew for the episode (:func:`~pixelrig.envs.looks.draw_looks`' values: its ``looks_seed``,
    ``lighting``, ``distractors``, ``textures``; plain JSON values), None without new looks."""


Item = tuple[StoredStep, Observation] | EpisodeEnd
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

    Under new ``looks``, each episode's looks are drawn at its first frame, once the recorded state is restored:
    the light and textures are set (the recording's stay where the new looks set none), and new distractors replace
    the recording's (hidden: fully transparent). pybullet restores a state only into a world with the recorded
    bodies, so the added distractors are removed before each restore and made again after it. The physics restored is
    the recording's, bit for bit.

    Args:
        make_pixel: returns the env to restore into, wrapped in ``PixelObs(..., cams, pixels_only=True)`` (with the
            looks' background, if any).
        cams: the rig (their "rgb" and "depth" images are kept).
        looks: new looks, or None (the recorded ones).
    """

    def __init__(self, make_pixel: Callable[[], PixelObs], cams: tuple[Camera, ...],
                 looks: ReplayLooks | None = None) -> None:
        self.fars = {c.name: c.far for c in cams}
        self.rgb = tuple(c.name for c in cams if "rgb" in c.modalities)
        self.depth = tuple(c.name for c in cams if "depth" in c.modalities)
        self.pixel = make_pixel()
        self.inner = self.pixel.env
        self.poses = PoseRestorer(self.pixel.unwrapped.client)
        self.identity: dict[str, Any] | None = None
        self.looks = looks
        self.drawn: dict[str, Any] | None = None  # what the new looks drew at the last episode's first frame
        self._added: list[list[Any]] = []  # the distractors the new looks added, as drawn
        self._worn: list[list[Any]] = []  # their textures

    @property
    def backend(self) -> str:
        """The name of the backend that draws (a key of :data:`pixelrig.render.registry.BACKENDS`)."""
        return self.pixel.render_backend.name

    def close(self) -> None:
        """Close the env."""
        self.pixel.close()

    def reseed(self, seed: int) -> None:
        """Draw the next episodes' looks from ``seed`` (as ``ReplayLooks.seed``; nothing changes without new
        looks)."""
        if self.looks is not None:
            self.looks = dataclasses.replace(self.looks, seed=seed)

    def restore(self, data: bytes, first: bool, where: str, episode: int = 0) -> None:
        """Put the world into the snapshot ``data``'s state (as far as images go; fully at an episode's start),
        dressed in the new looks of ``episode`` if any.

        Raises:
            ValueError: the snapshot is corrupted or belongs to another env (the message starts with ``where``).
        """
        self._undress()
        self._restore(data, first, where)
        if self.looks is not None:
            self._dress(first, episode)

    def _undress(self) -> None:
        """Remove the distractors the new looks added (a state restores only into the recorded bodies)."""
        client = self.pixel.unwrapped.client
        for entry in reversed(self._added):
            p.removeBody(int(entry[0]), physicsClientId=client)

    def _dress(self, first: bool, episode: int) -> None:
        """Put the new looks on the world just restored: drawn at an episode's first frame, made again after."""
        env = self.pixel.unwrapped
        assert self.looks is not None  # noqa: S101 - the caller checked
        if not first:
            remake_distractors(env, self._added)
            wear_textures(env.client, self._worn)
            return
        if self.looks.randomization.distractors:  # new distractors replace the recording's, which are hidden
            for body in distractor_ids(env.randomization_values):
                for link in visual_links(env.client, body):
                    p.changeVisualShape(body, link, rgbaColor=[0.0, 0.0, 0.0, 0.0], physicsClientId=env.client)
        seed = self.looks.episode_seed(episode)
        values = draw_looks(self.looks.randomization, seed, env)
        self.drawn = values
        self._added = values.get("distractors", [])
        added = {int(entry[0]) for entry in self._added}
        self._worn = [entry for entry in values.get("textures", []) if int(entry[0]) in added]
        if "lighting" in values:
            env.render_backend.set_lighting(Lighting.from_dict(values["lighting"]))
        self.pixel.set_background(seed, 0)

    def _restore(self, data: bytes, first: bool, where: str) -> None:
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
        self._undress()
        self.inner.unwrapped.import_state(Snapshot.from_bytes(data).env_state, rebuild=False)
        if self.looks is not None:
            self._dress(False, 0)

    def observe(self, data: bytes, first: bool, state: np.ndarray | None, where: str, episode: int = 0,
                frame: int = 0) -> Observation:
        """Restore the snapshot ``data`` (frame ``frame`` of ``episode``) and render what a dataset keeps of the rig's
        images."""
        self.restore(data, first, where, episode)
        if self.looks is not None:
            self.pixel.set_background(None, frame)
        images = self.pixel.render_rig()
        return Observation(rgb={c: images[f"{c}/rgb"] for c in self.rgb},
                           depth={c: depth_to_mm(images[f"{c}/depth"], self.fars[c]) for c in self.depth},
                           state=state)


def episode_items(reader: DatasetReader, drawer: SnapshotDrawer, episode: int, needs_next_obs: bool,
                  state_shape: tuple[int, ...] | None, looks_seed: int | None = None) -> Iterator[Item]:
    """The frames of ``episode`` re-rendered, in order, then its :class:`EpisodeEnd`.

    Args:
        reader: the recorded dataset.
        drawer: restores and renders.
        episode: which episode.
        needs_next_obs: also render the state after the last action (the writer stores next observations).
        state_shape: the env's own observation's shape (None: the dataset stores no state).
        looks_seed: the new looks' seed for this episode (:meth:`SnapshotDrawer.reseed`); None: the drawer's.
    """
    if looks_seed is not None:
        drawer.reseed(looks_seed)
    drawer.drawn = None
    empty = True
    for t, stored in enumerate(reader.frames(episode)):
        yield stored, drawer.observe(stored.snapshot, t == 0, stored.state, f"episode {episode} frame {t}", episode, t)
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
        last = drawer.observe(final, False, state, f"episode {episode} final state", episode, t + 1)
    yield EpisodeEnd(final, reader.episode_end(episode), last, drawer.drawn)
