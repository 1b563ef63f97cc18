"""Textures put on bodies at run time: pybullet's ``loadTexture`` and ``changeVisualShape(textureUniqueId=)`` for
the renderers pybullet draws (TinyRenderer, the EGL plugin), and a record per client of which link wears which image
for the gl renderer (pybullet's visual shape data never reports a texture set at run time).

pybullet loads a texture from a file only: each image is written to a temporary PNG, loaded and the file removed at
once. One texture id per image and client, reused, until the client's world is reset (``resetSimulation`` empties
TinyRenderer's texture list while the old ids stay accepted, drawing nothing or another texture: callers that reset
the world call :func:`forget_world`).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np
import pybullet as p

MAX_TEXTURE_SIDE = 4096
"""The largest texture side accepted (pixels)."""


@dataclass(frozen=True, eq=False)
class TextureImage:
    """An RGB texture image, read-only, with its content digest.

    Attributes:
        pixels: (H, W, 3) uint8, row 0 the image's top row (as image files store it).
        digest: SHA-256 of the shape and pixels (the same image gets the same texture id).
    """

    pixels: np.ndarray
    digest: str


def texture_image(image: np.ndarray, what: str = "texture") -> TextureImage:
    """Check an image and make it a :class:`TextureImage` (an alpha channel is dropped).

    Args:
        image: (H, W, 3) or (H, W, 4) uint8, or (H, W) uint8 grey.
        what: how messages name it.

    Raises:
        ValueError: not uint8 (H, W), (H, W, 3) or (H, W, 4), or a side outside 1..4096.
    """
    a = np.asarray(image)
    if a.dtype != np.uint8 or a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] not in (3, 4)):
        raise ValueError(f"{what}: an image must be a uint8 array of shape (H, W), (H, W, 3) or (H, W, 4): got "
                         f"{a.dtype} {a.shape} (np.asarray(PIL.Image.open(path).convert('RGB')) reads a file)")
    if not (1 <= a.shape[0] <= MAX_TEXTURE_SIDE and 1 <= a.shape[1] <= MAX_TEXTURE_SIDE):
        raise ValueError(f"{what}: image sides {a.shape[:2]} must be within 1..{MAX_TEXTURE_SIDE} pixels")
    rgb = np.repeat(a[..., None], 3, axis=2) if a.ndim == 2 else a[..., :3]
    rgb = np.ascontiguousarray(rgb)
    rgb.setflags(write=False)
    digest = hashlib.sha256(repr(rgb.shape).encode() + rgb.tobytes()).hexdigest()
    return TextureImage(rgb, digest)


@dataclass
class _ClientTextures:
    ids: dict[str, int] = field(default_factory=dict)  # digest -> pybullet texture id in this world
    worn: dict[tuple[int, int], TextureImage] = field(default_factory=dict)  # (body, link) -> image
    version: int = 0


_clients: dict[int, _ClientTextures] = {}


def _state(client: int) -> _ClientTextures:
    return _clients.setdefault(client, _ClientTextures())


def _load(client: int, image: TextureImage) -> int:
    """pybullet's texture id of ``image`` in ``client``'s world (loaded through a temporary PNG the first time)."""
    state = _state(client)
    tex = state.ids.get(image.digest)
    if tex is not None:
        return tex
    from PIL import Image

    fd, path = tempfile.mkstemp(prefix="pixelrig-texture-", suffix=".png")
    os.close(fd)
    try:
        Image.fromarray(image.pixels).save(path)
        tex = p.loadTexture(path, physicsClientId=client)
    finally:
        os.unlink(path)
    if tex < 0:
        raise RuntimeError(f"pybullet could not load a {image.pixels.shape[1]}x{image.pixels.shape[0]} texture "
                           f"(loadTexture returned {tex})")
    state.ids[image.digest] = tex
    return tex


def set_texture(client: int, body: int, link: int, image: TextureImage) -> None:
    """Put ``image`` on every visual shape of ``body``'s ``link`` (-1: the base), with their colour made white
    (alpha kept) so that the image shows as it is; recorded for the gl renderer."""
    tex = _load(client, image)
    alpha = {int(s[1]): float(s[7][3]) for s in p.getVisualShapeData(body, physicsClientId=client)}
    p.changeVisualShape(body, link, textureUniqueId=tex, rgbaColor=[1.0, 1.0, 1.0, alpha.get(link, 1.0)],
                        physicsClientId=client)
    state = _state(client)
    state.worn[(body, link)] = image
    state.version += 1


def worn(client: int) -> tuple[int, dict[tuple[int, int], TextureImage]]:
    """``(version, {(body, link): image})``: the textures set on ``client``'s links since its world was last reset;
    the version changes whenever they do."""
    state = _clients.get(client)
    return (0, {}) if state is None else (state.version, state.worn)


def forget_world(client: int) -> None:
    """``client``'s world was reset (``resetSimulation``): its texture ids and worn textures are gone."""
    state = _clients.get(client)
    if state is not None and (state.ids or state.worn):
        state.ids.clear()
        state.worn.clear()
        state.version += 1


def forget_client(client: int) -> None:
    """``client`` is disconnected: drop what is recorded of it."""
    _clients.pop(client, None)
