"""``Background``: what PixelObs shows where its cameras see nothing (label -1) or the bodies named in
``background_bodies``: an image, a folder of images, a video (one frame per env step, looping, as the Distracting
Control Suite plays them) or a procedural family, drawn per episode from a generator of its own (never the env's).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pixelrig.cameras.spec import Camera
from pixelrig.envs.looks import IMAGE_SUFFIXES, folder_files, read_image, texture_families
from pixelrig.render.procedural import FAMILIES, procedural_image
from pixelrig.render.textures import texture_image

BACKGROUND_SALT = 0xBAC6
"""Keeps the background's stream apart from the env's own (gymnasium seeds it with the same seed), the sensor
noise's and the point sampler's."""

VIDEO_SUFFIXES = (".mp4", ".avi", ".mov", ".mkv", ".webm", ".gif")
"""Files read as videos (through imageio)."""

MAX_VIDEO_FRAMES = 3000
"""Frames of a video kept (its first ones): a longer video is cut there."""


def _resized(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """``image`` stretched to (height, width): area averaging when it shrinks, bilinear when it grows."""
    if image.shape[:2] == (height, width):
        return image
    import cv2

    shrink = image.shape[0] > height and image.shape[1] > width
    return cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)


def read_video(path: str | os.PathLike[str]) -> np.ndarray:
    """Every frame of a video (its first :data:`MAX_VIDEO_FRAMES`), (N, H, W, 3) uint8, through imageio.

    Raises:
        ValueError: imageio cannot read it (the message names the file and the fix).
    """
    import imageio.v3 as iio

    frames = []
    try:
        for frame in iio.imiter(path):
            frames.append(texture_image(np.asarray(frame, dtype=np.uint8), f"video {path}").pixels)
            if len(frames) >= MAX_VIDEO_FRAMES:
                break
    except Exception as exc:  # imageio's plugins raise many kinds (OSError, RuntimeError, their own)
        raise ValueError(f"PixelObs: cannot read the video {str(path)!r} ({type(exc).__name__}: {exc}): give a video "
                         "imageio reads (mp4 needs imageio-ffmpeg), an image, a folder of images or 'procedural'") \
            from None
    if not frames:
        raise ValueError(f"PixelObs: the video {str(path)!r} has no frames: give another video, an image, a folder "
                         "of images or 'procedural'")
    return np.stack(frames)


class Background:
    """A background source, the episode's draw from it, and its clock.

    Args:
        source: an (H, W, 3) uint8 image; the path of an image file, of a folder of images (one drawn per
            episode) or of a video (a start frame drawn per episode, then one frame per step, looping);
            ``"procedural"``, a family's name or ``"procedural:a,b"`` (one image drawn per episode).
        cams: the rig's cameras (images are stretched to each camera's size).
        bodies: body names or globs whose pixels are background too (e.g. ``("ground",)``).

    Raises:
        ValueError: an unknown source, a missing file, an empty folder, an unreadable image or video.
    """

    def __init__(self, source: Any, cams: Sequence[Camera], bodies: Sequence[str] = ()) -> None:
        if isinstance(bodies, str) or not all(isinstance(b, str) and b for b in bodies):
            raise ValueError(f"PixelObs: background_bodies={bodies!r} must be a tuple of body names (globs allowed), "
                             "e.g. ('ground',)")
        self.bodies = tuple(bodies)
        self.sizes = [(cam.height, cam.width) for cam in cams]
        self.families: tuple[str, ...] = ()
        self.images: list[np.ndarray] = []  # a fixed image, or a folder's
        self.files: tuple[str, ...] = ()
        self.video: np.ndarray | None = None
        self.describe = self._load(source)
        """What the source is, as constructor arguments record it (a path, a family, or "image")."""
        self.rng = np.random.Generator(np.random.PCG64())
        self.choice: list[Any] = []
        self.step = 0
        self.shown = False  # whether the episode's clock has shown a picture (the next one is a step later)
        self._made: dict[tuple, np.ndarray] = {}  # (choice, frame, height, width) -> image, for the episode

    def _load(self, source: Any) -> Any:
        if isinstance(source, np.ndarray):
            self.images = [texture_image(source, "PixelObs(background=...)").pixels]
            return "image"
        if isinstance(source, str) and texture_families(source) is not None:
            self.families = texture_families(source)  # type: ignore[assignment]
            return source
        if not isinstance(source, str | os.PathLike):
            raise ValueError(f"PixelObs: background={source!r} must be an image array, the path of an image, a folder "
                             f"of images or a video, or 'procedural' / one of {FAMILIES}")
        path = Path(source).expanduser()
        if path.is_dir():
            self.files = folder_files("PixelObs: background", path, IMAGE_SUFFIXES,
                                      "put images there, or give an image, a video or 'procedural'")
        elif path.suffix.lower() in VIDEO_SUFFIXES:
            if not path.is_file():
                raise ValueError(f"PixelObs: background video {str(source)!r} does not exist")
            self.video = read_video(path)
        elif path.suffix.lower() in IMAGE_SUFFIXES:
            self.images = [read_image(path).pixels]
        else:
            raise ValueError(f"PixelObs: background={str(source)!r} is neither a folder, an image "
                             f"({', '.join(IMAGE_SUFFIXES)}), a video ({', '.join(VIDEO_SUFFIXES)}) nor "
                             f"'procedural' / one of {FAMILIES}")
        return str(path.resolve())

    # ---- the episode and the clock ----------------------------------------------------------------------------

    def seed(self, seed: int) -> None:
        """Re-seed the generator from an episode's seed (a stream apart from the env's)."""
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(BACKGROUND_SALT,))))

    def start_episode(self) -> None:
        """Draw the episode's background: an image of the folder, a start frame of the video or a procedural
        image; the clock goes back to 0."""
        rng = self.rng
        if self.files:
            self.choice = [int(rng.integers(len(self.files)))]
        elif self.video is not None:
            self.choice = [int(rng.integers(len(self.video)))]
        elif self.families:
            self.choice = [self.families[int(rng.integers(len(self.families)))], int(rng.integers(2**31))]
        else:
            self.choice = [0]
        self.step = 0
        self.shown = False

    def next_picture(self) -> None:
        """A picture is about to be taken for an observation: the reset's shows step 0, each later one a step more
        (a video shows its next frame)."""
        if self.shown:
            self.step += 1
        self.shown = True

    def image(self, camera: int) -> np.ndarray:
        """Camera ``camera``'s background now, (H, W, 3) uint8 (read-only; made once per episode, frame and size)."""
        height, width = self.sizes[camera]
        if not self.choice:
            self.start_episode()
        frame = (self.choice[0] + self.step) % len(self.video) if self.video is not None else 0
        key = (tuple(self.choice), frame, height, width)
        made = self._made.get(key)
        if made is None:
            if self.video is not None:
                made = _resized(self.video[frame], height, width)
            elif self.families:
                made = procedural_image(self.choice[0], self.choice[1], (height, width))
            else:
                made = _resized(read_image(self.files[self.choice[0]]).pixels if self.files else self.images[0],
                                height, width)
            if len(self._made) >= 4 * len(self.sizes):
                self._made.clear()
            made.setflags(write=False)
            self._made[key] = made
        return made

    def body_ids(self, label_names: Mapping[int, str], first: bool) -> frozenset[int]:
        """The ids of the bodies :attr:`bodies` names, in a scene whose bodies are ``label_names``.

        Raises:
            ValueError: at the rig's ``first`` binding, a name without wildcards that names no body (the message
                lists them).
        """
        ids = set()
        for pattern in self.bodies:
            hits = {body for body, name in label_names.items() if fnmatch.fnmatchcase(name, pattern)}
            if not hits and first and not any(ch in pattern for ch in "*?["):
                raise ValueError(f"PixelObs: background_bodies names {pattern!r}, which is no body here; bodies: "
                                 f"{sorted(label_names.values())}")
            ids |= hits
        return frozenset(ids)

    # ---- snapshots ------------------------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The generator's state, the episode's draw and the clock (plain data)."""
        return {"rng": self.rng.bit_generator.state, "choice": list(self.choice), "step": self.step,
                "shown": self.shown}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Put back what :meth:`state` returned.

        Raises:
            ValueError: not a background's state.
        """
        try:
            rng_state, choice, step, shown = (dict(state["rng"]), list(state["choice"]), int(state["step"]),
                                              bool(state["shown"]))
        except (KeyError, TypeError, ValueError):
            raise ValueError("PixelObs: the snapshot's background state is not a background's (rng, choice, step)") \
                from None
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = rng_state
        self.rng, self.choice, self.step, self.shown = rng, choice, step, shown
