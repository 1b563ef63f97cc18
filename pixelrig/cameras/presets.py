"""Real sensors as camera presets (``Camera.preset("d435", name=..., ...)``): intrinsics at the resolutions the
sensor offers, its depth range, stereo baseline and depth noise, from its public datasheet.

Nominal values, not a calibration: every unit's intrinsics differ a little (read yours from the device). The
intrinsics are square pixels from the datasheet's horizontal depth field of view at the chosen resolution, the
principal point at the image centre (``((W - 1) / 2, (H - 1) / 2)``, pixel centres at integers).

The depth noise follows Intel's RMS error model for its D4xx stereo cameras: ``RMS = z**2 * subpixel / (f *
baseline)`` with the subpixel accuracy 0.08 of a well-textured scene (Intel, "Tuning depth cameras for best
performance", white paper, section "RMS error"), i.e. ``SensorNoise(depth_sigma=(0, subpixel / (f * baseline)))``;
depth is quantised to the 1 mm depth unit the cameras stream by default. RGB noise, edge and grazing dropouts have
no datasheet figure and stay off (set ``noise=`` to add them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pixelrig.cameras.noise import SensorNoise

SUBPIXEL = 0.08
"""Intel's typical subpixel (disparity) RMS accuracy of a D4xx camera on a textured scene."""


@dataclass(frozen=True)
class Preset:
    """One sensor.

    Attributes:
        label: what it is, with its datasheet.
        hfov: horizontal depth field of view in degrees (datasheet).
        baseline: metres between the stereo imagers (datasheet).
        depth_range: ``(min, max)`` metres of valid depth (datasheet).
        resolutions: ``(width, height)`` depth resolutions the sensor streams; the first is the default.
        near: near plane of the camera (below the minimum depth).
        far: far plane of the camera (beyond the maximum depth).
    """

    label: str
    hfov: float
    baseline: float
    depth_range: tuple[float, float]
    resolutions: tuple[tuple[int, int], ...]
    near: float
    far: float


D4XX_RESOLUTIONS = ((848, 480), (1280, 720), (640, 480), (640, 360), (480, 270), (424, 240))

PRESETS: dict[str, Preset] = {
    # Intel RealSense D400 Series Product Family Datasheet (Intel document 337029): D435 depth field of view
    # 87 x 58 degrees, baseline 50 mm, minimum depth ~0.28 m at 1280x720 (ideal range 0.3 m to 3 m; depth up to
    # ~10 m), depth resolutions up to 1280x720 (848x480 recommended for depth quality).
    "d435": Preset("Intel RealSense D435 (depth: 87x58 deg, 50 mm baseline; D400 series datasheet, doc 337029)",
                   hfov=87.0, baseline=0.050, depth_range=(0.28, 10.0), resolutions=D4XX_RESOLUTIONS, near=0.05,
                   far=12.0),
    # Intel RealSense D405 datasheet (in the D400 series datasheet, Intel document 337029): depth field of view
    # 87 x 58 degrees, baseline 18 mm, ideal range 7 cm to 50 cm (sub-millimetre accuracy at 7 cm), depth
    # resolutions up to 1280x720.
    "d405": Preset("Intel RealSense D405 (depth: 87x58 deg, 18 mm baseline, 7 to 50 cm; D400 series datasheet, "
                   "doc 337029)", hfov=87.0, baseline=0.018, depth_range=(0.07, 0.5),
                   resolutions=((1280, 720), (848, 480), (640, 480), (640, 360), (480, 270), (424, 240)), near=0.01,
                   far=2.0),
}
"""Every preset by name."""


def preset_fields(sensor: str, resolution: tuple[int, int] | None = None) -> dict[str, Any]:
    """The Camera fields of a preset at a resolution (the sensor's default when None).

    Raises:
        ValueError: an unknown preset (the message lists them) or a resolution the sensor does not offer (the
            message lists those it does).
    """
    try:
        spec = PRESETS[sensor]
    except (KeyError, TypeError):
        raise ValueError(f"unknown camera preset {sensor!r}; presets: {sorted(PRESETS)}") from None
    size = spec.resolutions[0] if resolution is None else tuple(resolution)
    if size not in spec.resolutions:
        raise ValueError(f"camera preset {sensor!r}: resolution {resolution!r} is not one the sensor streams; "
                         f"choose from {list(spec.resolutions)}")
    width, height = size
    f = 0.5 * width / math.tan(math.radians(spec.hfov) / 2.0)
    noise = SensorNoise(depth_sigma=(0.0, SUBPIXEL / (f * spec.baseline)), depth_step=0.001,
                        depth_range=spec.depth_range)
    return {"width": width, "height": height, "intrinsics": (f, f, (width - 1) / 2.0, (height - 1) / 2.0),
            "near": spec.near, "far": spec.far, "stereo_baseline": spec.baseline, "noise": noise,
            "modalities": ("rgb", "depth")}
