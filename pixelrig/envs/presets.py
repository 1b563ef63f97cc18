"""Named looks presets: a ready generalisation split of lighting, textures, distractors and backgrounds.

``gym.make(id, looks="train")`` randomises an env's looks as the preset says (its Randomization's look fields, over any
``randomize=`` given); ``PixelObs`` takes the preset's background when given none; ``replay(..., looks="test-hard")``
re-renders a dataset under them. "train" and "test-hard" share no procedural texture family, no background family and no
part of the light's elevation range, and "test-hard" adds more distractors from a harder range of looks: a policy
trained under "train" is tested on looks it never saw.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pixelrig.envs.randomization import Randomization


@dataclass(frozen=True)
class LooksPreset:
    """A named set of looks.

    Attributes:
        name: its name (``looks=`` value).
        randomization: the look fields to randomise (its other fields are unset).
        background: what ``PixelObs(background=...)`` fills the background with (None: nothing).
    """

    name: str
    randomization: Randomization
    background: str | None = None


LOOKS_PRESETS: dict[str, LooksPreset] = {p.name: p for p in (
    LooksPreset("train", Randomization(
        light_azimuth=(0.0, 360.0), light_elevation=(40.0, 80.0), light_color=((0.85, 0.85, 0.85), (1.15, 1.15, 1.15)),
        light_ambient=(0.45, 0.75), light_diffuse=(0.25, 0.45), light_specular=(0.0, 0.1), shadows=0.5,
        textures={"ground": "procedural:noise,checkers,gradient", "table*": "procedural:noise,checkers,gradient"},
        distractors=2), background="procedural:noise,gradient"),
    LooksPreset("test-hard", Randomization(
        light_azimuth=(0.0, 360.0), light_elevation=(15.0, 38.0), light_color=((0.6, 0.6, 0.6), (1.4, 1.4, 1.4)),
        light_ambient=(0.25, 0.9), light_diffuse=(0.1, 0.7), light_specular=(0.05, 0.3), shadows=0.8,
        textures={"*": "procedural:stripes,marble"}, distractors=5), background="procedural:stripes,marble,checkers"),
)}
"""Every preset by name."""


def looks_preset(name: str) -> LooksPreset:
    """The preset called ``name``.

    Raises:
        ValueError: no such preset (the message lists them).
    """
    try:
        return LOOKS_PRESETS[name]
    except (KeyError, TypeError):
        raise ValueError(f"looks={name!r} is not a looks preset; presets: {list(LOOKS_PRESETS)}") from None


def with_looks(randomize: Randomization | None, preset: LooksPreset) -> Randomization:
    """``randomize`` (or nothing) with the preset's look fields put over its own."""
    looks = {f.name: getattr(preset.randomization, f.name) for f in dataclasses.fields(Randomization)
             if getattr(preset.randomization, f.name) != getattr(Randomization(), f.name)}
    return dataclasses.replace(randomize or Randomization(), **looks)
