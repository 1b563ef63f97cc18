"""``PixelObs``: add RGB, metric depth, label, world-point, normal, link and class images and camera matrices from a
camera rig to any pybullet env's observation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pixelrig.cameras.rig import CameraLike, as_cameras
from pixelrig.cameras.sensors import SensorTimeline
from pixelrig.cameras.spec import Camera
from pixelrig.envs.base import bullet_client_of
from pixelrig.envs.goals import GOAL_KEYS
from pixelrig.render.backends import CameraRequest, RenderBackend
from pixelrig.wrappers.background import Background
from pixelrig.wrappers.binding import BoundRig


class PixelObs(gym.ObservationWrapper[dict[str, np.ndarray], Any, Any], gym.utils.RecordConstructorArgs):
    """Observations from a rig of cameras, as a flat gymnasium ``Dict``.

    Keys are ``"<camera>/<modality>"`` (rgb (H,W,3) uint8; depth (H,W,1) float32 metres along the optical axis,
    background = far; label (H,W,1) int32 body ids, -1 = background; points (H,W,4) float32 world xyz and w = 1
    at hits, all 0 at background; normal (H,W,3) float32 world unit normals, 0 at background; link (H,W,1) int32
    link ids, see ``link_names``; class (H,W,1) int32 ids from ``classes``, 0 unclassified, -1 background) plus
    ``"state"`` (the wrapped env's own observation) unless ``pixels_only``. Over a goal env (``goal_obs=True``, a
    ``Dict`` of ``observation``, ``achieved_goal`` and ``desired_goal``) the keys stay flat: ``"state"`` is its
    ``observation`` and ``"achieved_goal"`` / ``"desired_goal"`` are added as they are, with ``pixels_only`` too
    (so SB3's ``HerReplayBuffer`` and ``MultiInputPolicy`` take the pixels with the goals). See
    :class:`~pixelrig.cameras.CameraRig` for how points, normals and link ids are made. The space is built from
    the camera specs alone; rendering never changes the simulation.

    Cameras are sensors (:class:`~pixelrig.cameras.sensors.SensorTimeline`): one with ``period=k`` takes a picture
    at each reset and every k-th step and repeats it in between (only the cameras due are drawn), one with
    ``latency=d`` shows the picture of d steps ago (the reset's until then), and one with ``noise=`` shows noisy
    RGB and depth, drawn when the picture is taken from a generator of this wrapper's own: re-seeded by
    ``reset(seed=...)`` (from that seed, a stream apart from the env's), never the env's ``np_random``. The clock,
    the held pictures and the generator's state are part of :func:`pixelrig.snapshot`.

    Args:
        env: an env whose ``unwrapped`` exposes ``client`` (a pybullet client id), e.g. any pixelrig env.
        cams: Cameras or camera dicts. None uses ``env.unwrapped.default_cameras()``.
        pixels_only: drop the ``"state"`` key.
        renderer: None keeps the env's own backend; any renderer's name asks a pixelrig env to switch
            (allowed before its first reset); an env that does not own a backend gets a TinyRenderer backend
            ('egl' needs the plugin loaded before the env's first body, which only the env can do).
        classes: glob pattern -> class id (an integer >= 0) for cameras returning ``"class"``, e.g.
            ``{"panda*": 1, "cube": 2}``. A pattern with ``/`` matches ``"body/link"`` names, one without matches
            body names; link patterns win over body patterns, and the first listed wins among patterns of a kind.
            A pattern that matches nothing in the scene is an error here (a typo would otherwise give an all-0
            class image); after a later world rebuild it is a warning.
        camera_params: add ``"<camera>/intrinsics"`` (3,3) float32, the OpenCV K of the env's renderer (pixel
            centres at integer coordinates), and ``"<camera>/extrinsics"`` (4,4) float32, world -> camera in OpenCV
            axes (+x right, +y down, +z forward) at the pose the step's images were drawn from.
        background: what the RGB images show where the cameras see nothing (label -1) and on
            ``background_bodies``: an (H, W, 3) uint8 image; the path of an image, of a folder of images (one per
            episode) or of a video (a start frame per episode, then a frame per env step, looping); or
            ``"procedural"``, a family's name or ``"procedural:a,b"`` (one image per episode). Stretched to each
            camera. Drawn from this wrapper's own generator (re-seeded by ``reset(seed=...)`` like the noise), never
            the env's; depth and labels are unchanged. None: the env's looks preset's background, or none; False:
            none.
        background_bodies: body names (globs allowed) whose pixels show the background too, e.g. ``("ground",)``.

    Raises:
        ValueError: a camera returns ``"class"`` but ``classes`` is empty, or ``classes`` is given but no camera
            returns ``"class"``; a bad ``classes`` map; and the rig's own errors (unknown mount link, ...).

    Attributes:
        rig: the :class:`~pixelrig.cameras.CameraRig`.
        label_names: body id -> body name for the label images (also ``env.get_wrapper_attr("label_names")``).
        link_names: link id -> ``"body/link"`` for the link images (also ``env.get_wrapper_attr("link_names")``).
    """

    def __init__(
        self,
        env: gym.Env,
        cams: Iterable[CameraLike] | None = None,
        pixels_only: bool = False,
        renderer: str | None = None,
        classes: Mapping[str, int] | None = None,
        camera_params: bool = False,
        background: Any = None,
        background_bodies: Sequence[str] = (),
    ) -> None:
        super().__init__(env)
        bullet_client_of(env)  # fail early, with the fix, on envs without a pybullet client
        base = env.unwrapped
        if cams is None:
            if not hasattr(base, "default_cameras"):
                raise ValueError(f"{type(base).__name__} has no default_cameras(): pass cams=[Camera(...), ...]")
            cams = base.default_cameras()
        cams = as_cameras(cams)
        _check_class_cameras(cams, classes)
        self.bound = BoundRig(env, cams, renderer, classes=classes, camera_params=camera_params)
        self.rig = self.bound.rig
        self.sensors = SensorTimeline(self.rig)
        """The cameras' period, latency and noise (and the noise generator)."""
        preset = getattr(base, "looks", None)
        source = background if background is not None else getattr(preset, "background", None)
        source = None if source is False else source
        if background_bodies and source is None:
            raise ValueError(f"PixelObs: background_bodies={background_bodies!r} needs background=...: give an image, "
                             "a folder, a video or 'procedural'")
        self.background = None if source is None else Background(source, self.rig.cameras, background_bodies)
        """The background (None without one): its source, the episode's draw and its clock."""
        if self.background is not None:
            self.rig.backdrop = self.background.image
            self.rig.backdrop_bodies = self.background.body_ids(self.rig.label_names, first=True)
        gym.utils.RecordConstructorArgs.__init__(
            self, cams=list(self.rig.cameras), pixels_only=pixels_only, renderer=renderer,
            classes=dict(self.rig.classes) or None, camera_params=camera_params, background=background,
            background_bodies=tuple(background_bodies),
        )
        obs_spaces: dict[str, spaces.Space] = dict(self.rig.observation_spaces)
        state_space = env.observation_space
        self.goals = isinstance(state_space, spaces.Dict) and set(GOAL_KEYS) <= set(state_space.spaces)
        """Whether the wrapped env is a goal env, whose goals become keys of their own."""
        if self.goals:
            obs_spaces.update({key: state_space[key] for key in GOAL_KEYS[1:]})
            state_space = state_space["observation"]
        if not pixels_only:
            obs_spaces["state"] = state_space
        self.observation_space = spaces.Dict(obs_spaces)
        self.pixels_only = pixels_only

    @property
    def label_names(self) -> dict[int, str]:
        """Body id -> name for the label images of the current scene."""
        return dict(self.rig.label_names)

    @property
    def link_names(self) -> dict[int, str]:
        """Link id -> ``"body/link"`` for the link images of the current scene (-1 is background)."""
        return dict(self.rig.link_names)

    @property
    def render_backend(self) -> RenderBackend:
        """The backend the rig renders with."""
        return self.bound.backend

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.reset_unrendered(seed=seed, options=options)
        return self.observation(obs), info

    def observation(self, observation: Any) -> dict[str, np.ndarray]:
        self._next_background()
        return self.observation_from(self.bound.render(self.sensors.due()), observation)

    def _next_background(self) -> None:
        """Before an observation's picture: the background's clock moves on, its bodies are those of the scene bound
        now."""
        if self.background is not None:
            self.bound.bind()
            self.background.next_picture()
            self.rig.backdrop_bodies = self.background.body_ids(self.rig.label_names, first=False)

    # Rendering deferred: a batched vector env steps the wrapped envs, draws every rig's requests in one pass, and
    # builds each observation with observation_from; reset() and step() are these pieces in order.

    def reset_unrendered(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the wrapped env and re-bind the rig, without rendering.

        Returns:
            The wrapped env's own observation and info (``reset()`` is this, then :meth:`observation`).
        """
        if seed is not None:
            self.sensors.seed(seed)
            if self.background is not None:
                self.background.seed(seed)
        self.sensors.start_episode()
        obs, info = self.env.reset(seed=seed, options=options)
        self.bound.bind(resetting=True)
        if self.background is not None:
            self.background.start_episode()
        return obs, info

    def rig_requests(self) -> list[CameraRequest]:
        """What the next observation draws now (re-binding first if the scene was rebuilt): the requests of the
        cameras due (:meth:`~pixelrig.cameras.sensors.SensorTimeline.due`), as
        :meth:`~pixelrig.cameras.CameraRig.requests`; ``rig.decode(frames)`` turns the drawn frames back into
        images and :meth:`observation_from` into the observation."""
        self.bound.bind()
        self._next_background()
        return self.rig.requests(self.sensors.due())

    def observation_from(self, frames: dict[str, np.ndarray], observation: Any) -> dict[str, np.ndarray]:
        """This wrapper's observation from the rig's images just drawn (at least the cameras due, as
        ``rig.decode`` after :meth:`rig_requests` gives them) and the wrapped env's own observation; advances the
        cameras' clock."""
        if self.sensors.active:
            frames = self.sensors.observe(frames)
        if self.goals:
            frames.update({key: observation[key] for key in GOAL_KEYS[1:]})
            observation = observation["observation"]
        if not self.pixels_only:
            frames["state"] = observation
        return {key: frames[key] for key in self.observation_space.spaces}

    def render_rig(self) -> dict[str, np.ndarray]:
        """Render every camera of the rig now, outside ``step()`` (for windows, recorders and debugging): exact
        images through each camera's lens and stereo, without its noise, period or latency (which belong to the
        observations; nothing here touches their clock or generator)."""
        return self.bound.render()

    def set_background(self, seed: int | None, step: int) -> None:
        """Show the background of the episode seeded ``seed`` (None: the current episode's) at env step ``step``
        (replay re-renders recorded steps with it). Nothing without a background."""
        if self.background is None:
            return
        if seed is not None:
            self.background.seed(seed)
            self.background.start_episode()
        self.background.step, self.background.shown = int(step), True
        self.bound.bind()
        self.rig.backdrop_bodies = self.background.body_ids(self.rig.label_names, first=False)

    def snapshot_state(self) -> dict[str, Any]:
        """The cameras' clock, held pictures and noise generator (:meth:`SensorTimeline.state
        <pixelrig.cameras.sensors.SensorTimeline.state>`) when a camera has a period, a latency or noise, and the
        background's generator, draw and clock (under ``"background"``) when there is one; else nothing (the rig
        re-binds when the scene is rebuilt)."""
        state = self.sensors.state() if self.sensors.active else {}
        if self.background is not None:
            state["background"] = self.background.state()
        return state

    def restore_snapshot_state(self, state: dict[str, Any]) -> None:
        """Put the cameras' clock, held pictures and noise generator back (an empty state: the next observation
        is a reset's).

        Raises:
            ValueError: the state holds pictures of other cameras.
        """
        state = dict(state)
        if self.background is not None:
            if "background" not in state:
                raise ValueError("PixelObs: the snapshot holds no background state (taken without background=)")
            self.background.set_state(state.pop("background"))
        if state:
            self.sensors.set_state(state)
        else:
            self.sensors.start_episode()

    def close(self) -> None:
        self.bound.close()
        super().close()


def _check_class_cameras(cams: Iterable[Camera], classes: Mapping[str, int] | None) -> None:
    """A "class" camera needs ``classes``, and ``classes`` needs a "class" camera (either alone is a mistake)."""
    wanting = [c.name for c in cams if "class" in c.modalities]
    if wanting and not classes:
        raise ValueError(f"cameras {wanting} return 'class' images but PixelObs got no classes: pass classes="
                         "{'glob': id, ...}, e.g. classes={'panda*': 1, 'cube': 2}")
    if classes and not wanting:
        raise ValueError(f"PixelObs got classes={dict(classes)!r} but no camera returns 'class': add 'class' to a "
                         "camera's modalities, or drop classes=")
