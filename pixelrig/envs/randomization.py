"""Domain randomisation drawn from the env's ``np_random`` at every reset: masses, friction, restitution, link
colours, initial joint state and camera pose jitter. The drawn values are plain data, kept as env state."""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pybullet as p


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
    """

    mass_scale: tuple[float, float] | None = None
    lateral_friction: tuple[float, float] | None = None
    restitution: tuple[float, float] | None = None
    link_colors: bool = False
    joint_noise: float = 0.0
    camera_position: float = 0.0
    camera_rotation: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mass_scale", _range("mass_scale", self.mass_scale, low=1e-6))
        object.__setattr__(self, "lateral_friction", _range("lateral_friction", self.lateral_friction))
        object.__setattr__(self, "restitution", _range("restitution", self.restitution))
        for name in ("joint_noise", "camera_position", "camera_rotation"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"Randomization: {name}={value!r} must be a finite number >= 0")

    @property
    def jitters_cameras(self) -> bool:
        return self.camera_position > 0 or self.camera_rotation > 0


RANDOM_STREAMS = ("mass", "lateral_friction", "restitution", "rgba", "camera")
"""Each kind of draw has its own random stream, so that how many draws one kind makes (colours: one per link
that has a visual, which depends on the level of detail) never shifts another (masses: physics)."""


def draw_and_apply(spec: Randomization, rng: np.random.Generator, client: int,
                   bodies: list[int]) -> dict[str, Any]:
    """Draw this episode's physical parameters and camera seed, apply them to ``bodies``; returns the drawn
    values (JSON-friendly) so that :func:`apply_values` can reproduce the same world later.

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
    apply_values(values, client)
    return values


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
