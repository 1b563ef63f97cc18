"""``BulletEnv``: the base of pixelrig's environments. It owns a pybullet client, its render backend, seeding,
episode (re)building and action checking; subclasses describe a world and a task.

The small protocol the wrappers need from any environment is :class:`HasBulletClient`: ``env.unwrapped.client`` (a
pybullet client id). A ``BulletEnv`` also offers its render backend, body names, a scene version (bumped each
time the world is rebuilt) and default cameras.

Episodes are exact: ``reset()`` starts every episode from the world as it was just built, so no contact cache,
motor command or randomised parameter from a previous episode leaks into the next. When the episode's world holds
the same bodies as the last one it puts the kept just-built world back (:class:`~pixelrig.envs.state.BuiltWorld`,
about 1 ms) instead of rebuilding it from nothing (50-100 ms); both give the same episodes bit for bit
(``tests/test_envs_fast_reset.py``).
"""

from __future__ import annotations

import os
import weakref
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np
import pybullet as p
import pybullet_data
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.display.window import DisplayWindow
from pixelrig.envs import bodies
from pixelrig.envs.lod import DEFAULT_BUDGET, check_detail, prepare_model
from pixelrig.envs.looks import EnvLooks, check_looks, looks_seed
from pixelrig.envs.presets import looks_preset, with_looks
from pixelrig.envs.randomization import Randomization, apply_body_poses, camera_jitter, check_body_names, draw_and_apply
from pixelrig.envs.state import BuiltWorld, EnvState
from pixelrig.render import textures
from pixelrig.render.backends import CameraRequest, RenderBackend
from pixelrig.render.choice import requested_renderer, resolve_renderer
from pixelrig.render.convert import rgba_to_rgb
from pixelrig.render.egl_devices import select_gpu
from pixelrig.render.lighting import DEFAULT_LIGHTING, Lighting
from pixelrig.render.registry import backend_class, check_lighting, check_textures, may_use_egl_device
from pixelrig.system.output import capture_native_stdout

CameraSpec = dict[str, Any]
"""A camera as a plain dict of ``pixelrig.Camera``'s fields (envs describe cameras without importing them)."""


@runtime_checkable
class HasBulletClient(Protocol):
    """What pixelrig's wrappers need from ``env.unwrapped``: the pybullet client id of its simulation."""

    @property
    def client(self) -> int: ...


def _shutdown(client: int, backend: RenderBackend | None) -> None:
    """Close a backend and disconnect its client (runs on close(), garbage collection or interpreter exit)."""
    if backend is not None:
        backend.close()
    if p.isConnected(physicsClientId=client):
        with capture_native_stdout():  # the EGL plugin says goodbye on stdout
            p.disconnect(physicsClientId=client)
    textures.forget_client(client)


class BulletEnv(EnvState, EnvLooks, gym.Env[np.ndarray, np.ndarray]):
    """Base class of pixelrig environments (a gymnasium ``Env`` over one pybullet DIRECT client).

    Subclasses implement :meth:`build_world` (load bodies into ``self.client``), :meth:`reset_task`,
    :meth:`apply_action`, :meth:`observe` and :meth:`evaluate`, and set ``observation_space`` and
    ``action_space`` in their ``__init__`` after calling ``super().__init__``.

    **State is declared, so snapshots cannot forget it.** Once constructed, an env accepts attribute assignments
    only for the names in its ``task_state`` (per-episode Python state: targets, previous positions, ...),
    during :meth:`build_world` (the world, derived from configuration), and for the base's own bookkeeping.
    Anything else raises ``AttributeError`` naming the fix. Motor commands go through :meth:`motor_command`,
    which remembers them (pybullet cannot report them). :func:`pixelrig.snapshot` captures exactly this (see
    :class:`pixelrig.envs.state.EnvState`).

    Args:
        render_mode: None, "rgb_array" (``render()`` returns frames from :meth:`render_camera`) or "human"
            (those frames are shown in a window, a separate process, after every reset and step; see
            :class:`pixelrig.HumanWindow` for a window on any camera).
        renderer: any renderer (:data:`pixelrig.render.registry.RENDERER_CHOICES`), or None for
            ``PIXELRIG_RENDERER`` (default "auto"). The env owns its backend because EGL must be loaded before the
            first body.
        time_step: physics time step in seconds.
        frame_skip: physics steps per ``step()``; the control period is ``time_step * frame_skip``.
        gravity: gravity vector in m/s².
        randomize: domain randomisation drawn from ``np_random`` at every reset (see :class:`Randomization`);
            the drawn values are kept in ``randomization_values``.
        visual_detail: what cameras see of URDF/SDF models loaded through :meth:`model_file`: "full",
            "simplified" (visual meshes decimated to ``visual_budget`` triangles each) or "collision" (collision
            geometry drawn). Physics is the same for all three (see :mod:`pixelrig.envs.lod`).
        visual_budget: triangles per visual mesh for "simplified".
        lighting: the light every episode is drawn with (:class:`pixelrig.Lighting`; default TinyRenderer's own, as
            pixelrig always drew). A renderer that cannot draw it is refused here (egl draws the direction only).
        looks: a looks preset's name ("train", "test-hard": :mod:`pixelrig.envs.presets`): its light, textures
            and distractors are randomised every episode (over ``randomize``'s own fields), and PixelObs takes its
            background.
        render_width, render_height: the size (px) of ``render()``'s frames and the human window's (320x240).
        gpu: with the egl or gl backend, render on this CUDA device (an index into ``CUDA_VISIBLE_DEVICES``);
            pixelrig finds the matching EGL device and sets ``EGL_VISIBLE_DEVICES`` before the plugin loads or the
            gl context is made (gl: one context per process, on the device of the first gl env). None: as
            ``PIXELRIG_GPU`` / ``EGL_VISIBLE_DEVICES`` say, or EGL's default.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "rgb_array"], "render_fps": 30}

    _BASE_STATE: ClassVar[frozenset[str]] = frozenset({
        "_np_random", "_np_random_seed", "spec", "_episode_started", "elapsed_steps", "scene_version",
        "body_names", "randomization_values", "_motors", "_client", "_backend", "_finalizer", "_building",
        "_sealed", "_window", "_built", "fast_reset",
    })

    RENDER_OPTIONS: ClassVar[tuple[str, ...]] = ("render_mode", "renderer", "visual_detail", "visual_budget", "gpu",
                                                 "lighting", "looks", "render_width", "render_height")
    """The constructor options that change only what is drawn, never the simulation: snapshots of envs that differ
    only in these restore into each other (the one list of them; a test checks each is a parameter here)."""

    def __init__(
        self,
        *,
        render_mode: str | None = None,
        renderer: str | None = None,
        time_step: float = 1.0 / 240.0,
        frame_skip: int = 1,
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
        randomize: Randomization | None = None,
        visual_detail: str = "full",
        visual_budget: int = DEFAULT_BUDGET,
        gpu: int | None = None,
        lighting: Lighting | None = None,
        looks: str | None = None,
        render_width: int = 320,
        render_height: int = 240,
    ) -> None:
        check_detail(visual_detail, visual_budget)
        for what, size in (("render_width", render_width), ("render_height", render_height)):
            if isinstance(size, bool) or not isinstance(size, int | np.integer) or not 1 <= size <= 16384:
                raise ValueError(f"{what}={size!r} must be a whole number of pixels in [1, 16384]")
        self.render_width, self.render_height = int(render_width), int(render_height)
        """The size (px) of ``render()``'s frames and of the human window's."""
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None: got {render_mode!r}"
            )
        if not (isinstance(time_step, int | float) and np.isfinite(time_step) and time_step > 0):
            raise ValueError(f"time_step={time_step!r} must be a positive number of seconds")
        if isinstance(frame_skip, bool) or not isinstance(frame_skip, int) or frame_skip < 1:
            raise ValueError(f"frame_skip={frame_skip!r} must be an integer >= 1")
        g = np.asarray(gravity, dtype=np.float64)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity={gravity!r} must be 3 finite numbers (m/s²)")
        self.render_mode = render_mode
        self.visual_detail, self.visual_budget = visual_detail, visual_budget
        self.time_step = float(time_step)
        self.frame_skip = frame_skip
        self.gravity = tuple(float(x) for x in g)
        if randomize is not None and not isinstance(randomize, Randomization):
            raise ValueError(f"randomize must be a pixelrig.envs.Randomization or None: got {randomize!r}")
        if lighting is not None and not isinstance(lighting, Lighting):
            raise ValueError(f"lighting must be a pixelrig.Lighting or None: got {lighting!r}")
        self.looks = None if looks is None else looks_preset(looks)
        """The looks preset (:class:`~pixelrig.envs.presets.LooksPreset`), or None."""
        if randomize is not None and randomize.randomizes_nothing:
            randomize = None  # it would draw nothing, yet consume np_random: the same starts as None instead
        self.randomize = randomize if self.looks is None else with_looks(randomize, self.looks)
        self.lighting = lighting or DEFAULT_LIGHTING
        """The light every episode is drawn with, unless randomised or set (``current_lighting`` is this episode's)."""
        self.randomization_values: dict[str, Any] = {}
        """This episode's drawn randomisation (masses, friction, restitution, colours, camera seed)."""
        self.body_names: dict[int, str] = {}
        """Body id -> name of the bodies this env built (used for label names and ``body/link`` mounts)."""
        self.scene_version = 0
        """Incremented every time the world is rebuilt; rigs re-resolve mount links when it changes."""
        self._client = -1
        self._backend: RenderBackend | None = None
        self._finalizer: weakref.finalize | None = None
        self._episode_started = False
        self.elapsed_steps = 0
        """Steps since the last reset."""
        self._motors: dict[tuple[int, int], tuple[int, dict[str, float]]] = {}
        self._building = False
        self._built: BuiltWorld | None = None
        self.fast_reset = True
        """Whether ``reset()`` may restore the just-built world instead of rebuilding it (see :meth:`reset`); set it
        to False to rebuild at every reset (both give the same episodes bit for bit)."""
        self._window: DisplayWindow | None = None
        if render_mode == "human":
            self._window = DisplayWindow(f"pixelrig: {type(self).__name__}", fps=self.metadata["render_fps"],
                                         scale=2)
        try:
            if gpu is not None and may_use_egl_device(requested_renderer(renderer)):
                select_gpu(gpu)  # EGL_VISIBLE_DEVICES, before the probe and the plugin read it
            self._connect(resolve_renderer(renderer))
            self._rebuild()
            if self.randomize is not None:
                check_body_names(self.randomize, self.body_ids(), type(self).__name__)
                check_looks(self)
                if self.randomize.varies_looks:  # the world before the first reset wears looks too (seed 0)
                    self.episode_looks({}, 0)
        except BaseException:
            self._close_client()  # nothing half-built is left behind
            if self._window is not None:
                self._window.close()
            raise

    # ---- the client, its backend and the world ---------------------------------------------------------

    @property
    def client(self) -> int:
        """The pybullet client id of this env's simulation."""
        if self._client < 0:
            raise RuntimeError(f"{type(self).__name__} is closed: create a new environment")
        return self._client

    @property
    def render_backend(self) -> RenderBackend:
        """The env's render backend (any of :data:`pixelrig.render.registry.BACKENDS`); chosen at construction."""
        if self._backend is None:
            raise RuntimeError(f"{type(self).__name__} is closed: create a new environment")
        return self._backend

    @property
    def dt(self) -> float:
        """Seconds of simulated time per ``step()``."""
        return self.time_step * self.frame_skip

    def _connect(self, kind: str) -> None:
        check_lighting(kind, self.lighting.changed(), f"lighting={self.lighting!r}")
        if self.randomize is not None:
            check_lighting(kind, self.randomize.light_fields, "Randomization(light_...=, shadows=)")
            if self.randomize.textures:
                check_textures(kind, "Randomization(textures=...)")
        client = p.connect(p.DIRECT)
        try:
            backend = backend_class(kind)(client)  # EGL must come before any body
            backend.set_lighting(self.lighting)
        except BaseException:
            p.disconnect(physicsClientId=client)
            raise
        self._client, self._backend = client, backend
        self._finalizer = weakref.finalize(self, _shutdown, client, backend)

    def use_renderer(self, renderer: str | None) -> RenderBackend:
        """Make the env render with ``renderer`` (any renderer; None keeps the current one).

        Switching backends reconnects the simulation and rebuilds the world, so it is only allowed before the
        first ``reset()``; afterwards pass ``renderer=`` to the env's constructor (or ``gym.make``) instead.
        """
        current = self.render_backend
        if renderer is None:
            return current
        kind = resolve_renderer(renderer)
        if kind == current.name:
            return current
        if self._episode_started:
            raise RuntimeError(
                f"cannot switch {type(self).__name__} from renderer {current.name!r} to {kind!r} after reset(): "
                f"pass renderer={kind!r} when creating the env (e.g. gym.make(id, renderer={kind!r}))"
            )
        self._close_client()
        self._connect(kind)
        self._rebuild()
        return self.render_backend

    def _rebuild(self) -> None:
        """Clear the simulation and build the world from nothing (exact episode starts)."""
        c = self.client
        self._motors = {}
        self._building = True
        self._built = None
        try:
            self._build_from_nothing(c)
        finally:
            self._building = False
        self.scene_version += 1
        self._built = BuiltWorld.save(self)

    def _reuse_world(self) -> bool:
        """Put the world back as :meth:`_rebuild` leaves it, without rebuilding, when that is exact; returns whether
        it did (see :class:`BuiltWorld`)."""
        built = self._built
        if not self.fast_reset or built is None or not built.fits(self):
            return False
        built.restore(self)
        self.randomization_values = {}
        self.scene_version += 1
        return True

    def _build_from_nothing(self, c: int) -> None:
        p.resetSimulation(physicsClientId=c)
        textures.forget_world(c)
        p.setPhysicsEngineParameter(deterministicOverlappingPairs=1, physicsClientId=c)
        p.setTimeStep(self.time_step, physicsClientId=c)
        p.setGravity(*self.gravity, physicsClientId=c)
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
        self.body_names = {}
        self.build_world()
        for i in range(p.getNumBodies(physicsClientId=c)):
            body = p.getBodyUniqueId(i, physicsClientId=c)
            p.changeDynamics(body, -1, activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING, physicsClientId=c)

    def model_file(self, name: str | os.PathLike[str]) -> str:
        """The file to load for a model (pybullet_data-relative or absolute) at this env's ``visual_detail``."""
        path = Path(name)
        if not path.is_absolute():
            path = Path(pybullet_data.getDataPath()) / path
        return str(prepare_model(path, self.visual_detail, self.visual_budget))

    def load_body(self, name: str, body: int) -> int:
        """Record ``body`` under ``name`` (for labels and mounts); returns the body id. Use in build_world."""
        if body < 0:
            raise ValueError(f"{type(self).__name__}: loading {name!r} failed (pybullet returned {body})")
        self.body_names[body] = name
        return body

    def motor_command(self, body: int, joints: Sequence[int], mode: int, **arrays: Sequence[float]) -> None:
        """``setJointMotorControlArray`` that remembers the command: motor modes and targets are env state that
        pybullet neither reports nor saves. Keyword arrays as pybullet names them: ``targetPositions``,
        ``targetVelocities``, ``forces``, ``positionGains``, ``velocityGains``.

        Position, velocity and PD commands persist until replaced, so they are remembered. A TORQUE_CONTROL
        command is not: pybullet adds it to the joint torque of the next physics step only, and
        ``step()`` always takes that step, so between steps there is no pending torque to remember.
        """
        joints = [int(j) for j in joints]
        lists = {k: [float(x) for x in v] for k, v in arrays.items()}
        p.setJointMotorControlArray(body, joints, mode, physicsClientId=self.client, **lists)
        if mode == p.TORQUE_CONTROL:
            return
        for i, j in enumerate(joints):
            self._motors[(int(body), j)] = (int(mode), {k: v[i] for k, v in lists.items()})

    # ---- gymnasium API ---------------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode; with ``seed``, bit for bit the episode a fresh env's ``reset(seed=seed)`` starts,
        whatever ran before (observations, rewards, infos, the physics of every step after, snapshots).

        The world is rebuilt from nothing (``resetSimulation`` and every file loaded again) only when the episode's
        world differs from the one built last: a different :attr:`world_state` (PandaPickObject's object),
        distractors or textures (drawn per episode, or set with :meth:`set_texture`), or bodies or constraints
        added or removed since. Otherwise (the default for every bundled task without distractors or textures)
        the just-built world kept at the last rebuild is put back (:class:`~pixelrig.envs.state.BuiltWorld`):
        contact caches emptied, poses and velocities, motors, dynamics and colours as built. Set
        ``env.unwrapped.fast_reset = False`` to rebuild at every reset.
        """
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"{type(self).__name__}.reset: options must be a dict or None: got {options!r}")
        options = self.check_reset_options(dict(options or {}))  # before anything changes: a bad reset is a no-op
        super().reset(seed=seed)
        looks = looks_seed(self.np_random) if self.randomize is not None and self.randomize.varies_looks else None
        self.choose_world()
        if not self._reuse_world():
            self._rebuild()
        values: dict[str, Any] = {}
        if self.randomize is not None and not self.randomize.looks_only:
            values = draw_and_apply(self.randomize, self.np_random, self.client, self.randomized_bodies(),
                                    self.body_ids())
        self.episode_looks(values, looks)
        self.reset_task(options)
        if self.randomize is not None:
            apply_body_poses(self.randomization_values, self.client)  # again: they win over the task's placement
        self.start_episode()
        self._episode_started = True
        self.elapsed_steps = 0
        obs, info = self.observe(), self.reset_info()
        self._show()
        return obs, info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self._episode_started:
            raise gym.error.ResetNeeded(f"{type(self).__name__}: call reset() before step()")
        action = self.check_action(action)
        self.apply_action(action)
        for _ in range(self.frame_skip):
            p.stepSimulation(physicsClientId=self.client)
        self.elapsed_steps += 1
        obs = self.observe()
        reward, terminated, info = self.evaluate(action)
        self._show()
        return obs, float(reward), bool(terminated), False, info

    def check_action(self, action: Any) -> Any:
        """Validate an action against ``action_space`` and clip a Box action to its bounds.

        Raises:
            ValueError: wrong shape, non-numeric, NaN or inf, or not in a discrete space. Nothing is changed.
        """
        space = self.action_space
        name = type(self).__name__
        if isinstance(space, spaces.Discrete):
            if isinstance(action, bool) or not np.isscalar(action) or not space.contains(action):
                raise ValueError(f"{name}: action {action!r} is not in {space}")
            return int(action)
        if not isinstance(space, spaces.Box):
            return action
        try:
            a = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: action {action!r} is not numeric; expected shape {space.shape}") from None
        if a.shape != space.shape:
            raise ValueError(f"{name}: action has shape {a.shape}, expected {space.shape} (action_space={space})")
        bad = ~np.isfinite(a)
        if bad.any():
            raise ValueError(
                f"{name}: action contains NaN or inf at indices {np.flatnonzero(bad).tolist()}: {a.tolist()}; "
                "pass finite values (out-of-range finite values are clipped to the action space)"
            )
        return np.clip(a, space.low, space.high)

    def render(self) -> np.ndarray | None:
        """An (H, W, 3) uint8 frame from :meth:`render_camera` when ``render_mode == "rgb_array"``; with "human"
        the frame goes to the window and None is returned."""
        if self.render_mode == "human":
            self._show()
            return None
        if self.render_mode != "rgb_array":
            return None
        return self._camera_frame()

    def _show(self) -> None:
        if self._window is not None and self._window.wants_frame():
            self._window.show(self._camera_frame())

    def _camera_frame(self) -> np.ndarray:
        cam = self.render_camera()
        width, height = self.render_width, self.render_height
        view = p.computeViewMatrix(cam["eye"], cam["target"], cam.get("up", (0.0, 0.0, 1.0)))
        proj = p.computeProjectionMatrixFOV(
            cam.get("fov", 60.0), width / height, cam.get("near", 0.01), cam.get("far", 10.0)
        )
        (frame,) = self.render_backend.render([CameraRequest(width, height, tuple(view), tuple(proj), False)])
        return rgba_to_rgb(frame.rgba)

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
        self._close_client()
        super().close()

    def _close_client(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # idempotent: closes the backend and disconnects once
        self._client, self._backend, self._finalizer = -1, None, None

    # ---- what subclasses describe ---------------------------------------------------------------------

    @abstractmethod
    def build_world(self) -> None:
        """Load every body of the world into ``self.client`` (use :meth:`load_body` to name them)."""

    def check_reset_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """Validate ``reset(options=...)`` before the reset changes anything; returns what :meth:`reset_task`
        gets. Raise ``ValueError`` naming the bad option and the fix: the env is then left exactly as it was.
        Default: options are passed through (pixelrig's task envs take none and ignore unknown keys, as
        Gymnasium's own envs do)."""
        return options

    @abstractmethod
    def reset_task(self, options: dict[str, Any]) -> None:
        """Set the episode's initial state (joint states, object poses, targets) from ``self.np_random``."""

    def choose_world(self) -> None:
        """Called by ``reset()`` once ``np_random`` is seeded, before the world is rebuilt: draw the episode's choices
        of what the world holds, which :meth:`build_world` reads (declare them in ``world_state``, so that snapshots
        rebuild the same world). Default: nothing."""

    def start_episode(self) -> None:
        """Called by ``reset()`` once the episode's world is final (after :meth:`reset_task` and the randomised body
        poses), before the first observation: latch what depends on where everything ended up (a controller's
        end-effector target). Default: nothing."""

    @abstractmethod
    def apply_action(self, action: Any) -> None:
        """Send a validated action to the simulation (motor commands); called before the physics steps."""

    @abstractmethod
    def observe(self) -> np.ndarray:
        """The env's own (state) observation."""

    def evaluate(self, action: Any) -> tuple[float, bool, dict[str, Any]]:
        """``(reward, terminated, info)`` after a step. Default: no task (0.0, never terminates)."""
        return 0.0, False, {}

    def reset_info(self) -> dict[str, Any]:
        """The info dict returned by ``reset()``."""
        return {}

    def default_cameras(self) -> list[Camera]:
        """The env's suggested camera rig; ``PixelObs(env)`` uses it when given no cams."""
        view = {"width": 320, "height": 240, **self.render_camera()}
        return [Camera.from_dict(dict(view, name="main", modalities=("rgb", "depth", "label")))]

    def render_camera(self) -> CameraSpec:
        """The world-fixed camera behind ``render()``: its view (keys: eye, target, up, fov, near, far; the size of
        ``render()``'s frames is ``render_width`` x ``render_height``). The default :meth:`default_cameras` draws
        this view at 320x240 (or at a ``width`` and ``height`` given here)."""
        return {"eye": (2.0, -2.0, 1.5), "target": (0.0, 0.0, 0.3), "fov": 60.0}

    def render_view(self, name: str = "view") -> Camera:
        """:meth:`render_camera` as an RGB :class:`Camera` of ``render()``'s size (``render_width`` x
        ``render_height``): what the video recorder, the viewers and the windows draw when given no camera."""
        return Camera.from_dict({**self.render_camera(), "width": self.render_width, "height": self.render_height,
                                 "name": name, "modalities": ("rgb",)})

    def randomized_bodies(self) -> list[int]:
        """Bodies whose physical parameters and colours :class:`Randomization` changes (default: all)."""
        c = self.client
        return [p.getBodyUniqueId(i, physicsClientId=c) for i in range(p.getNumBodies(physicsClientId=c))]

    def camera_jitter(self, camera: str) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
        """This episode's pose offset for the camera named ``camera`` (its own frame), or None without jitter.

        Rigs (PixelObs) apply it on every reset; it depends only on the episode's drawn camera seed and the name.
        """
        seed = self.randomization_values.get("camera_seed")
        if self.randomize is None or seed is None:
            return None
        return camera_jitter(self.randomize, seed, camera)

    # ---- bodies by name ---------------------------------------------------------------------------------

    def body_ids(self) -> dict[str, int]:
        """{name: body id}, the inverse of :attr:`body_names` (a repeated name keeps its first body)."""
        return bodies.names_to_ids(self.body_names)

    def body_id(self, name: str) -> int:
        """The id of the body called ``name``; ``ValueError`` listing the bodies if none (or several) is."""
        return bodies.find_body(self.body_names, name, type(self).__name__)

    def body_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(position (3,), quaternion xyzw (4,))`` float64 of the body ``name``'s base, world frame, as pybullet's
        ``getBasePositionAndOrientation`` reports it (the base's centre of mass and inertial frame orientation).
        An unknown name is a ``ValueError`` listing the bodies."""
        pos, orn = p.getBasePositionAndOrientation(self.body_id(name), physicsClientId=self.client)
        return np.array(pos, dtype=np.float64), np.array(orn, dtype=np.float64)

    def set_body_pose(self, name: str, position: Sequence[float],
                      orientation: Sequence[float] | None = None) -> None:
        """Move the body ``name`` now: its base to ``position`` (m, world frame, the point :meth:`body_pose`
        reports) and, if given, ``orientation`` (quaternion xyzw, normalised; None keeps the current one).
        Velocities are kept. The change is in the physics state, so snapshots carry it; ``reset()`` rebuilds the
        world, so a pose set before it is gone (use :class:`Randomization` ``body_position`` for episode starts).

        Raises:
            ValueError: unknown body name (the message lists the bodies), or a position / orientation that is not
                3 / 4 finite numbers, or a zero quaternion. Nothing is changed.
        """
        body = self.body_id(name)
        pos = bodies.finite_vector(f"set_body_pose({name!r}): position", position, 3)
        orn = (p.getBasePositionAndOrientation(body, physicsClientId=self.client)[1] if orientation is None
               else bodies.unit_quaternion(f"set_body_pose({name!r}): orientation", orientation))
        bodies.reset_pose(self.client, body, pos, orn)

    def set_body_velocity(self, name: str, linear: Sequence[float], angular: Sequence[float]) -> None:
        """Set the body ``name``'s base velocity now: ``linear`` (m/s, of its centre of mass) and ``angular``
        (rad/s), world frame. Joint velocities are kept. Snapshots carry it.

        Raises:
            ValueError: unknown body name, a static body (fixed base or zero base mass), or values that are not
                3 finite numbers each. Nothing is changed.
        """
        body = self.body_id(name)
        lin = bodies.finite_vector(f"set_body_velocity({name!r}): linear", linear, 3)
        ang = bodies.finite_vector(f"set_body_velocity({name!r}): angular", angular, 3)
        bodies.check_can_move(p.getDynamicsInfo(body, -1, physicsClientId=self.client)[0], name, type(self).__name__)
        p.resetBaseVelocity(body, lin.tolist(), ang.tolist(), physicsClientId=self.client)

    # ---- helpers for subclasses -------------------------------------------------------------------------

    def joint_states(self, body: int, joints: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities (float64 arrays) of ``joints`` of ``body``."""
        states = p.getJointStates(body, list(joints), physicsClientId=self.client)
        return (
            np.array([s[0] for s in states], dtype=np.float64),
            np.array([s[1] for s in states], dtype=np.float64),
        )


def bullet_client_of(env: gym.Env) -> int:
    """The pybullet client id behind ``env`` (any wrapper stack whose ``unwrapped`` is a :class:`HasBulletClient`).

    Raises:
        TypeError: the env does not expose a pybullet client.
    """
    base = env.unwrapped
    if not isinstance(base, HasBulletClient):
        raise TypeError(
            f"{type(base).__name__} does not expose a pybullet client: pixelrig needs env.unwrapped.client "
            "(an int pybullet client id). Subclass pixelrig.envs.BulletEnv or add a `client` property."
        )
    return base.client


def names_of(env: gym.Env) -> Mapping[int, str] | None:
    """The env's body names if it declares them (``BulletEnv.body_names``), else None."""
    return getattr(env.unwrapped, "body_names", None)
