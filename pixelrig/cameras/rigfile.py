"""Camera rig files: JSON or TOML lists of camera specs (the fields of ``Camera``).

JSON: ``{"cameras": [{"name": "front", "eye": [1, 0, 1], "target": [0, 0, 0]}, ...]}`` (or a bare list).
TOML: one ``[[cameras]]`` table per camera.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterable
from pathlib import Path

from pixelrig.cameras.rig import CameraLike, as_cameras
from pixelrig.cameras.spec import Camera


def load_rig(path: str | Path) -> tuple[Camera, ...]:
    """Read a rig file.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not .json/.toml, unparsable, no cameras, or an invalid camera (the message names the file
            and the camera).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"rig file {str(path)!r} not found")
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            data = json.loads(path.read_text())
        elif suffix == ".toml":
            data = tomllib.loads(path.read_text())
        else:
            raise ValueError(f"rig file {path}: extension {suffix!r}; use .json or .toml")
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"rig file {path} is not valid {suffix[1:].upper()}: {exc}") from None
    cams = data.get("cameras") if isinstance(data, dict) else data
    if not isinstance(cams, list) or not cams:
        raise ValueError(f"rig file {path}: expected a non-empty list of cameras under 'cameras'")
    try:
        return as_cameras(cams)
    except ValueError as exc:
        raise ValueError(f"rig file {path}: {exc}") from None


def rig_cameras(cams: Iterable[CameraLike] | str | os.PathLike[str]) -> tuple[Camera, ...]:
    """The cameras of a rig given either way: a rig file's path (:func:`load_rig`), or Cameras and camera dicts.

    Raises:
        FileNotFoundError: no such rig file.
        ValueError: as :func:`load_rig`, or an invalid camera, a duplicate name, an empty rig.
    """
    if isinstance(cams, str | os.PathLike):
        return load_rig(cams)
    return as_cameras(cams)
