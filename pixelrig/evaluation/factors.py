"""The factors of an evaluation: each a named change of what the cameras see (looks, camera pose, sensor model),
never of the simulation, applied to the same seeds as the unchanged ``control``."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pixelrig.cameras.noise import SensorNoise
from pixelrig.cameras.presets import PRESETS, SUBPIXEL
from pixelrig.cameras.spec import Camera
from pixelrig.envs.randomization import Randomization

CONTROL = "control"
"""The factor that changes nothing: always run, the reference every other factor is compared with."""

LIGHT = Randomization(light_azimuth=(0.0, 360.0), light_elevation=(15.0, 80.0),
                      light_color=((0.6, 0.6, 0.6), (1.4, 1.4, 1.4)), light_ambient=(0.25, 0.9),
                      light_diffuse=(0.1, 0.7), light_specular=(0.0, 0.3))
"""The ``light`` factor: the light's direction, colour and strength drawn per episode (both looks presets' ranges)."""

RGB_NOISE = SensorNoise(rgb_sigma=6.0, rgb_shot=0.05)
"""The ``rgb_noise`` factor's noise: read noise of 6 levels and shot noise (variance 0.05 x level)."""


@dataclass(frozen=True)
class Factor:
    """One named change of what the policy sees; everything unset is left as it is.

    Attributes:
        name: the factor's name (``--factors`` value).
        description: what it changes, in words (the report's).
        randomize: looks to draw per episode (a :class:`Randomization` of look fields only: they never draw from
            the env's generator, so the physics is bitwise the control's).
        looks: a looks preset's name (``gym.make(id, looks=...)``), with its background.
        background: ``PixelObs(background=...)``.
        background_bodies: ``PixelObs(background_bodies=...)``.
        camera_rotation_deg: largest rotation of every camera about a random axis through it, degrees, drawn per
            episode from the episode's seed (never from the env's generator).
        camera_position: half-width (m) of a uniform offset of every camera in its own frame, drawn likewise.
        depth_noise: a sensor preset's depth noise (``"d435"``) on every camera that sees depth, its RMS error
            computed for that camera's own focal length.
        rgb_noise: noise on every camera's RGB.
        latency: steps every camera's images arrive late.
        period: every camera takes a new image every this many steps.
    """

    name: str
    description: str
    randomize: Randomization | None = None
    looks: str | None = None
    background: str | None = None
    background_bodies: tuple[str, ...] = ()
    camera_rotation_deg: float = 0.0
    camera_position: float = 0.0
    depth_noise: str | None = None
    rgb_noise: SensorNoise | None = None
    latency: int = 0
    period: int = 1

    def __post_init__(self) -> None:
        if self.randomize is not None and not self.randomize.looks_only:
            raise ValueError(f"factor {self.name!r}: randomize={self.randomize!r} randomises more than looks, which "
                             "would change the simulation: give light_*, shadows, textures or distractors only")
        if self.depth_noise is not None and self.depth_noise not in PRESETS:
            raise ValueError(f"factor {self.name!r}: depth_noise={self.depth_noise!r} is not a sensor preset; "
                             f"presets: {sorted(PRESETS)}")

    @property
    def jitters_cameras(self) -> bool:
        """Whether the factor moves the cameras each episode."""
        return self.camera_rotation_deg > 0 or self.camera_position > 0

    @property
    def camera_randomization(self) -> Randomization:
        """The camera jitter as a :class:`Randomization` (its fields in radians and metres)."""
        return Randomization(camera_position=self.camera_position,
                             camera_rotation=math.radians(self.camera_rotation_deg))

    def env_kwargs(self) -> dict[str, Any]:
        """The ``gym.make`` arguments the factor adds."""
        kwargs: dict[str, Any] = {}
        if self.randomize is not None:
            kwargs["randomize"] = self.randomize
        if self.looks is not None:
            kwargs["looks"] = self.looks
        return kwargs

    def cameras(self, cams: Sequence[Camera]) -> list[Camera]:
        """``cams`` as the factor changes them (its sensor models)."""
        out = []
        for cam in cams:
            changes: dict[str, Any] = {}
            noise = cam.noise
            if self.rgb_noise is not None:
                noise = self.rgb_noise if noise is None else dataclasses.replace(
                    noise, rgb_sigma=self.rgb_noise.rgb_sigma, rgb_shot=self.rgb_noise.rgb_shot)
            if self.depth_noise is not None and any(m.startswith("depth") for m in cam.modalities):
                depth = preset_depth_noise(self.depth_noise, cam)
                noise = depth if noise is None else dataclasses.replace(
                    noise, depth_sigma=depth.depth_sigma, depth_step=depth.depth_step, depth_range=depth.depth_range)
            if noise is not cam.noise:
                changes["noise"] = noise
            if self.latency:
                changes["latency"] = self.latency
            if self.period != 1:
                changes["period"] = self.period
            out.append(dataclasses.replace(cam, **changes) if changes else cam)
        return out

    def parameters(self) -> dict[str, Any]:
        """What the factor sets, JSON-friendly (unset fields left out), as the report records it."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in ("name", "description"):
                continue
            value = getattr(self, f.name)
            if value == f.default:
                continue
            if isinstance(value, Randomization | SensorNoise):
                value = {g.name: _plain(getattr(value, g.name)) for g in dataclasses.fields(value)
                         if getattr(value, g.name) != g.default}
            out[f.name] = _plain(value)
        return out


def _plain(value: Any) -> Any:
    """A JSON-friendly copy (tuples as lists, mappings as dicts)."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def focal_length(cam: Camera) -> float:
    """A camera's focal length in pixels: ``fx`` of its intrinsics, else from its vertical field of view."""
    if cam.intrinsics is not None:
        return float(cam.intrinsics[0])
    return 0.5 * cam.height / math.tan(math.radians(float(cam.fov or 60.0)) / 2.0)


def preset_depth_noise(sensor: str, cam: Camera) -> SensorNoise:
    """A sensor preset's depth noise for ``cam``: Intel's RMS model ``z^2 * subpixel / (f * baseline)`` with this
    camera's focal length ``f``, depth in 1 mm steps, the preset's depth range (as ``Camera.preset`` sets it)."""
    spec = PRESETS[sensor]
    return SensorNoise(depth_sigma=(0.0, SUBPIXEL / (focal_length(cam) * spec.baseline)), depth_step=0.001,
                       depth_range=spec.depth_range)


FACTORS: dict[str, Factor] = {f.name: f for f in (
    Factor(CONTROL, "nothing changed"),
    Factor("light", "the light's direction, colour and strength drawn per episode", randomize=LIGHT),
    Factor("shadows", "the light casts shadows", randomize=Randomization(shadows=1.0)),
    Factor("table_texture", "a procedural texture on the table, drawn per episode",
           randomize=Randomization(textures={"table*": "procedural"})),
    Factor("background", "a procedural background where the cameras see nothing and on the ground",
           background="procedural", background_bodies=("ground",)),
    Factor("distractors_1", "one distractor object (seen, never felt)", randomize=Randomization(distractors=1)),
    Factor("distractors_3", "three distractor objects (seen, never felt)", randomize=Randomization(distractors=3)),
    Factor("camera_5deg", "every camera turned by up to 5 degrees about a random axis", camera_rotation_deg=5.0),
    Factor("camera_15deg", "every camera turned by up to 15 degrees about a random axis", camera_rotation_deg=15.0),
    Factor("depth_noise", "the RealSense D435's depth noise model on every depth camera", depth_noise="d435"),
    Factor("rgb_noise", "read and shot noise on every RGB image", rgb_noise=RGB_NOISE),
    Factor("latency_1", "every camera's images one step late", latency=1),
    Factor("period_2", "every camera takes a new image every second step", period=2),
    Factor("test_hard", "the test-hard looks preset: light, shadows, textures, 5 distractors, background",
           looks="test-hard"),
)}
"""Every factor by name, ``control`` first."""


def factor_names(factors: str | Iterable[str] | None) -> list[str]:
    """The factors to run, ``control`` first: ``"all"`` (every one), a comma-separated string or names.

    Raises:
        ValueError: an unknown name (the message lists the known ones), or a name given twice.
    """
    if factors is None:
        return [CONTROL]
    if isinstance(factors, str):
        if factors.strip() == "all":
            return list(FACTORS)
        factors = [name.strip() for name in factors.split(",") if name.strip()]
    names = list(factors)
    for name in names:
        if not isinstance(name, str) or name not in FACTORS:
            raise ValueError(f"unknown factor {name!r}: choose from {list(FACTORS)} (or 'all')")
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"factors {twice} are given more than once: name each once")
    return [CONTROL, *(name for name in names if name != CONTROL)]
