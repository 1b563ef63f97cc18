"""Domain randomisation drawn from the env's ``np_random`` at every reset: masses, friction, restitution, link
colours, initial joint state, camera pose jitter and the positions and yaws of named bodies; and looks (the light,
textures, distractors: :mod:`pixelrig.envs.looks`), drawn from a seed of their own that never advances
``np_random``. The drawn values are plain data, kept as env state."""

from __future__ import annotations

import math
import types
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pybullet as p

from pixelrig.control.rotations import quat_to_rpy, rpy_to_quat
from pixelrig.envs.bodies import reset_pose
from pixelrig.envs.looks import LOOK_FIELDS, check_distractors, check_texture_sources

BodyRange = tuple[tuple[float, float, float], tuple[float, float, float]]
"""``((x, y, z) low, (x, y, z) high)`` of a body's position."""


def _range(name: str, value: tuple[float, float] | None, low: float = 0.0) -> tuple[float, float] | None:
    if value is None:
        return None
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"Randomization: {name}={value!r} must be a (low, high) pair or None") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi or lo < low:
        raise ValueError(f"Randomization: {name}={value!r} needs finite {low} <= low <= high")
    return lo, hi


_EXAMPLES = {"body_position": "{'cube': ((0.4, -0.1, 0.65), (0.6, 0.1, 0.65))}", "body_yaw": "{'cube': (-3.14, 3.14)}"}


def _per_body(name: str, value: Any, size: int) -> Mapping[str, Any] | None:
    """Check ``{body name: (low, high)}`` (each side ``size`` numbers, or one number when ``size`` is 1); returns
    a read-only mapping of float tuples, or None when there is nothing to randomise."""
    form = "((x, y, z) low, (x, y, z) high) in metres" if size == 3 else "(low, high) in radians"
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"Randomization: {name}={value!r} must be a dict {{body name: {form}}}, e.g. "
                         f"{name}={_EXAMPLES[name]}")
    out: dict[str, Any] = {}
    shape = (size,) if size > 1 else ()
    for body, pair in value.items():
        if not isinstance(body, str) or not body:
            raise ValueError(f"Randomization: {name} key {body!r} must be a body name (a non-empty str)")
        try:
            lo, hi = (np.asarray(side, dtype=np.float64) for side in pair)
        except (TypeError, ValueError):
            raise ValueError(f"Randomization: {name}[{body!r}]={pair!r} must be {form}") from None
        if lo.shape != shape or hi.shape != shape:
            raise ValueError(f"Randomization: {name}[{body!r}]={pair!r} must be {form}")
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo <= hi)):
            raise ValueError(f"Randomization: {name}[{body!r}]={pair!r} needs finite low <= high"
                             + (" in every coordinate" if size > 1 else ""))
        out[body] = (tuple(map(float, lo)), tuple(map(float, hi))) if size > 1 else (float(lo), float(hi))
    return types.MappingProxyType(out) if out else None


def _hashable(value: Any) -> Any:
    """A hashable stand-in for a field value (mappings become sorted item tuples)."""
    return tuple(sorted(value.items())) if isinstance(value, Mapping) else value


@dataclass(frozen=True)
class Randomization:
    """What to randomise at each reset (all off by default). Ranges are sampled uniformly per link.

    Args:
        mass_scale: (low, high) factor on every dynamic link's mass from the file (static bodies stay static).
        lateral_friction: (low, high) lateral friction coefficient of every link.
        restitution: (low, high) restitution of every link.
        link_colors: give every link a random RGB colour (alpha and textures kept).
        joint_noise: half-width of uniform noise added to the initial joint positions (rad or m) and
            velocities of the robot (RobotEnv) -- the "reset noise" of MuJoCo-style envs.
        camera_position: half-width (m) of a uniform offset of every camera, in its own frame.
        camera_rotation: largest rotation (rad) of every camera about a random axis through it.
        body_position: ``{body name: ((x, y, z) low, (x, y, z) high)}``: the body's base position (the point
            ``BulletEnv.body_pose`` reports, the base's centre of mass), uniform in that box, metres, world frame.
        body_yaw: ``{body name: (low, high)}``: the body's yaw (radians, about the world z axis), uniform in that
            range. It replaces the yaw and keeps the roll and pitch (``R = Rz(yaw) Ry(pitch) Rx(roll)``).
        light_azimuth: (low, high) degrees of the light's azimuth (from +x towards +y).
        light_elevation: (low, high) degrees of the light's elevation, within (0, 90).
        light_color: ((r, g, b) low, (r, g, b) high) of the light's colour, each >= 0 (1 = full white).
        light_ambient: (low, high) ambient coefficient (>= 0); likewise ``light_diffuse``, ``light_specular``.
        shadows: the probability (0..1) that an episode's light casts shadows (True: always).
        textures: ``{body, "body/link" or glob: source}``: per episode, a texture on every link of each body (or on
            the link) from ``source``: ``"procedural"`` (any of :data:`pixelrig.render.procedural.FAMILIES`), a
            family's name, ``"procedural:a,b"`` or a folder of images (drawn uniformly). A name without wildcards
            must be a body's; a glob may match none.
        distractors: how many objects to add each episode, outside the env's ``workspace_box()`` in its
            ``distractor_area()`` (pybullet_data's random_urdfs, or ``distractor_source``), with random colours or
            textures, labelled ``distractor_0``, ``distractor_1``, ...
        distractor_source: a folder of .urdf / .obj files (None: pybullet_data's random_urdfs).
        distractor_physics: distractors collide (and URDF ones move). Off by default: they are seen, never felt,
            and the simulation is bitwise that of the env without them.

    Body positions and yaws are applied once the world is built and again after the task's ``reset_task``: the
    task sees them while it sets up the episode, and they win over where the task itself puts the body (with
    ``body_position={"cube": ...}``, PandaPush's cube starts where the randomisation puts it, not where the task
    drew it; the task's other draws, such as its target, are unchanged). A moved body keeps its velocity. Each
    body is drawn from its own stream keyed by its name, so adding a body never changes another body's draws.
    The names are checked when the env is created (an unknown name is an error listing the bodies there are).

    The look fields (``light_*``, ``shadows``, ``textures``, ``distractors``; :mod:`pixelrig.envs.looks`) keep the
    env's own when None or 0. They draw from a seed of their own that never advances ``np_random``: a
    Randomization of looks alone draws nothing from it.
    """

    mass_scale: tuple[float, float] | None = None
    lateral_friction: tuple[float, float] | None = None
    restitution: tuple[float, float] | None = None
    link_colors: bool = False
    joint_noise: float = 0.0
    camera_position: float = 0.0
    camera_rotation: float = 0.0
    body_position: Mapping[str, BodyRange] | None = None
    body_yaw: Mapping[str, tuple[float, float]] | None = None
    light_azimuth: tuple[float, float] | None = None
    light_elevation: tuple[float, float] | None = None
    light_color: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None
    light_ambient: tuple[float, float] | None = None
    light_diffuse: tuple[float, float] | None = None
    light_specular: tuple[float, float] | None = None
    shadows: float | None = None
    textures: Mapping[str, str] | None = None
    distractors: int = 0
    distractor_source: str | None = None
    distractor_physics: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "mass_scale", _range("mass_scale", self.mass_scale, low=1e-6))
        object.__setattr__(self, "lateral_friction", _range("lateral_friction", self.lateral_friction))
        object.__setattr__(self, "restitution", _range("restitution", self.restitution))
        for name in ("joint_noise", "camera_position", "camera_rotation"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"Randomization: {name}={value!r} must be a finite number >= 0")
        object.__setattr__(self, "body_position", _per_body("body_position", self.body_position, 3))
        object.__setattr__(self, "body_yaw", _per_body("body_yaw", self.body_yaw, 1))
        object.__setattr__(self, "light_azimuth", _range("light_azimuth", self.light_azimuth, low=-math.inf))
        elevation = _range("light_elevation", self.light_elevation, low=-math.inf)
        if elevation is not None and not 0.0 < elevation[0] <= elevation[1] < 90.0:
            raise ValueError(f"Randomization: light_elevation={self.light_elevation!r} must lie within (0, 90) "
                             "degrees: a light above the horizon and not vertical (shadows need a tilt)")
        object.__setattr__(self, "light_elevation", elevation)
        if self.light_color is not None:
            try:
                lo, hi = (np.asarray(side, dtype=np.float64) for side in self.light_color)
            except (TypeError, ValueError):
                lo = hi = np.zeros(0)
            if lo.shape != (3,) or hi.shape != (3,) or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))
                                                             and np.all(0 <= lo) and np.all(lo <= hi)):
                raise ValueError(f"Randomization: light_color={self.light_color!r} must be ((r, g, b) low, (r, g, b) "
                                 "high) with 0 <= low <= high in every channel, e.g. ((0.8, 0.8, 0.8), (1.2, 1.2, 1))")
            object.__setattr__(self, "light_color", (tuple(map(float, lo)), tuple(map(float, hi))))
        for name in ("light_ambient", "light_diffuse", "light_specular"):
            object.__setattr__(self, name, _range(name, getattr(self, name)))
        if self.shadows is not None:
            shadows = float(self.shadows) if isinstance(self.shadows, bool | int | float) else math.nan
            if not 0.0 <= shadows <= 1.0:
                raise ValueError(f"Randomization: shadows={self.shadows!r} must be the probability (0..1) that an "
                                 "episode casts shadows, True (always) or None (the env's own)")
            object.__setattr__(self, "shadows", shadows)
        object.__setattr__(self, "textures", check_texture_sources(self.textures))
        object.__setattr__(self, "distractor_source", check_distractors(self.distractors, self.distractor_source))
        object.__setattr__(self, "distractors", int(self.distractors))
        if not isinstance(self.distractor_physics, bool):
            raise ValueError(f"Randomization: distractor_physics={self.distractor_physics!r} must be True or False")

    def __hash__(self) -> int:
        return hash(tuple(_hashable(getattr(self, f.name)) for f in fields(self)))

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickle and deep-copy through plain dicts (the read-only mappings themselves do not pickle)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return _randomization, ({k: dict(v) if isinstance(v, Mapping) else v for k, v in values.items()},)

    @property
    def body_names(self) -> list[str]:
        """Names of the bodies whose position or yaw is randomised, sorted."""
        return sorted({*(self.body_position or {}), *(self.body_yaw or {})})

    @property
    def jitters_cameras(self) -> bool:
        return self.camera_position > 0 or self.camera_rotation > 0

    @property
    def varies_looks(self) -> bool:
        """Whether any look is randomised (the light, textures or distractors)."""
        return any(getattr(self, name) not in (None, 0) for name in LOOK_FIELDS)

    @property
    def randomizes_nothing(self) -> bool:
        """Whether every field is off: such a Randomization draws nothing, so an env given it draws the same starts
        as one given ``randomize=None`` for the same seed."""
        return all(getattr(self, f.name) == getattr(_NOTHING, f.name) for f in fields(self)
                   if f.name not in ("distractor_source", "distractor_physics"))

    @property
    def looks_only(self) -> bool:
        """Whether looks are all it randomises: the env then draws nothing from ``np_random`` for it."""
        world = [f.name for f in fields(self) if f.name not in LOOK_FIELDS
                 and f.name not in ("distractor_source", "distractor_physics")]
        return self.varies_looks and all(getattr(self, name) == getattr(_NOTHING, name) for name in world)

    @property
    def light_fields(self) -> tuple[str, ...]:
        """The :class:`~pixelrig.render.lighting.Lighting` fields it randomises (what the renderer must draw)."""
        pairs = (("light_azimuth", "direction"), ("light_elevation", "direction"), ("light_color", "color"),
                 ("light_ambient", "ambient"), ("light_diffuse", "diffuse"), ("light_specular", "specular"),
                 ("shadows", "shadows"))
        return tuple(dict.fromkeys(field for name, field in pairs if getattr(self, name) is not None))


def _randomization(values: dict[str, Any]) -> Randomization:
    """A :class:`Randomization` from its fields (unpickling)."""
    return Randomization(**values)


_NOTHING = Randomization()


RANDOM_STREAMS = ("mass", "lateral_friction", "restitution", "rgba", "camera", "body_position", "body_yaw")
"""Each kind of draw has its own random stream, so that how many draws one kind makes (colours: one per link
that has a visual, which depends on the level of detail) never shifts another (masses: physics). New kinds are
appended at the end, so that the existing kinds' draws stay the same."""


def check_body_names(spec: Randomization, bodies: Mapping[str, int], owner: str) -> None:
    """Check that every body ``spec`` randomises by name is one of ``bodies`` ({name: id}).

    Raises:
        ValueError: an unknown name; the message lists the bodies there are.
    """
    for kind in ("body_position", "body_yaw"):
        unknown = sorted(set(getattr(spec, kind) or {}) - set(bodies))
        if unknown:
            raise ValueError(f"{owner}: Randomization({kind}=...) names bodies {unknown} that this env does not "
                             f"have; bodies: {list(bodies)}")


def draw_and_apply(spec: Randomization, rng: np.random.Generator, client: int,
                   bodies: list[int], named: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Draw this episode's physical parameters, camera seed and body poses, apply them to ``bodies`` (the body
    poses to the ``named`` bodies, {name: id}); returns the drawn values (JSON-friendly) so that
    :func:`apply_values` can reproduce the same world later. Body poses are recorded as
    ``values["body_position"] = [[body id, -1, x, y, z], ...]`` and ``values["body_yaw"] = [[body id, -1, yaw],
    ...]`` (keys present only when randomised).

    ``rng`` gives exactly one number per call, whatever is randomised: a seed from which each kind of draw
    (:data:`RANDOM_STREAMS`) gets its own generator. Colours are drawn per link (every link, ``-1`` = base, in
    order) and applied to the links that have visuals, so the physics and the colours drawn are the same at
    every ``visual_detail``.
    """
    episode_seed = int(rng.integers(2**63))
    stream = {kind: np.random.default_rng([episode_seed, i]) for i, kind in enumerate(RANDOM_STREAMS)}
    values: dict[str, Any] = {"mass": [], "lateral_friction": [], "restitution": [], "rgba": []}
    for body in bodies:
        alphas = {}
        if spec.link_colors:
            for shape in p.getVisualShapeData(body, physicsClientId=client):
                alphas.setdefault(int(shape[1]), float(shape[7][3]))
        for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
            if spec.mass_scale is not None:
                mass = p.getDynamicsInfo(body, link, physicsClientId=client)[0]
                if mass > 0:
                    values["mass"].append([body, link, mass * float(stream["mass"].uniform(*spec.mass_scale))])
            if spec.lateral_friction is not None:
                mu = float(stream["lateral_friction"].uniform(*spec.lateral_friction))
                values["lateral_friction"].append([body, link, mu])
            if spec.restitution is not None:
                values["restitution"].append([body, link, float(stream["restitution"].uniform(*spec.restitution))])
            if spec.link_colors:
                rgb = stream["rgba"].uniform(0.05, 1.0, size=3)  # drawn for every link: same colours at any detail
                if link in alphas:
                    values["rgba"].append([body, link, *map(float, rgb), alphas[link]])
    values["camera_seed"] = int(stream["camera"].integers(2**31)) if spec.jitters_cameras else None
    if spec.body_names:
        named = dict(named or {})
        check_body_names(spec, named, "draw_and_apply")
        for kind in ("body_position", "body_yaw"):
            index = RANDOM_STREAMS.index(kind)
            ranges = getattr(spec, kind) or {}
            if ranges:
                values[kind] = [[named[name], -1, *_draw_body(episode_seed, index, name, lo, hi)]
                                for name, (lo, hi) in sorted(ranges.items())]
    apply_values(values, client)
    return values


def _draw_body(episode_seed: int, stream: int, name: str, low: Any, high: Any) -> list[float]:
    """One body's draw from its own generator (episode seed, stream index, crc32 of the body's name)."""
    rng = np.random.default_rng([episode_seed, stream, zlib.crc32(name.encode())])
    return [float(v) for v in np.atleast_1d(rng.uniform(low, high))]


def apply_body_poses(values: Mapping[str, Any], client: int) -> None:
    """Apply drawn body positions, then yaws (keeping each body's roll, pitch and velocity)."""
    for body, _, *xyz in values.get("body_position", []):
        _, orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
        reset_pose(client, body, xyz, orn)
    for body, _, yaw in values.get("body_yaw", []):
        pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
        roll, pitch, _ = quat_to_rpy(orn)
        reset_pose(client, body, pos, rpy_to_quat((roll, pitch, yaw)).tolist())



def apply_values(values: dict[str, Any], client: int) -> None:
    """Apply drawn values (from :func:`draw_and_apply`) to a freshly built world."""
    for body, link, mass in values.get("mass", []):
        p.changeDynamics(body, link, mass=mass, physicsClientId=client)
    for body, link, mu in values.get("lateral_friction", []):
        p.changeDynamics(body, link, lateralFriction=mu, physicsClientId=client)
    for body, link, e in values.get("restitution", []):
        p.changeDynamics(body, link, restitution=e, physicsClientId=client)
    for body, link, *rgba in values.get("rgba", []):
        p.changeVisualShape(body, link, rgbaColor=rgba, physicsClientId=client)
    apply_body_poses(values, client)


def camera_jitter(spec: Randomization, seed: int, camera: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The pose offset ``(xyz, quaternion xyzw)`` of ``camera`` in its own frame for an episode's camera seed.

    Deterministic in (seed, camera name), so any rig can ask for any camera without extra env state.
    """
    rng = np.random.default_rng([seed, zlib.crc32(camera.encode())])
    xyz = rng.uniform(-spec.camera_position, spec.camera_position, size=3)
    axis = rng.normal(size=3)
    axis /= max(np.linalg.norm(axis), 1e-12)
    angle = rng.uniform(-spec.camera_rotation, spec.camera_rotation)
    quat = (*(axis * math.sin(angle / 2)), math.cos(angle / 2))
    return tuple(float(v) for v in xyz), tuple(float(v) for v in quat)
