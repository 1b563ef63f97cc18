"""Robot model files: finding them (also in pybullet_data), loading URDF / SDF / MJCF with clear errors, and
reading what pybullet's loaders leave out (MJCF actuators)."""

from __future__ import annotations

import hashlib
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pybullet as p
import pybullet_data

from pixelrig.system.output import capture_native_output

MODEL_SUFFIXES = {".urdf": "urdf", ".sdf": "sdf", ".xml": "mjcf", ".mjcf": "mjcf"}


def resolve_model_path(source: str | os.PathLike[str]) -> Path:
    """Find a robot file: as given (relative to the working directory), else inside pybullet_data.

    Raises:
        FileNotFoundError: the file is in neither place; the message lists both paths tried.
        ValueError: the path is a directory, or its extension is not .urdf, .sdf, .xml (MJCF) or .mjcf.
    """
    given = Path(source).expanduser()
    candidates = [given.resolve()]
    if not given.is_absolute():
        candidates.append(Path(pybullet_data.getDataPath()) / given)
    for path in candidates:
        if path.is_dir():
            raise ValueError(f"robot file {str(source)!r} is a directory ({path}); pass a .urdf, .sdf or MJCF .xml "
                             "file inside it")
        if path.is_file():
            if path.suffix.lower() not in MODEL_SUFFIXES:
                raise ValueError(f"robot file {str(source)!r} has extension {path.suffix!r}; pixelrig loads "
                                 ".urdf, .sdf and MJCF .xml/.mjcf files")
            return path
    looked = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"robot file {str(source)!r} not found; looked in: {looked}")


def model_kind(path: Path) -> str:
    """'urdf', 'sdf' or 'mjcf' from the file extension."""
    return MODEL_SUFFIXES[path.suffix.lower()]


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes (identifies the model a snapshot belongs to)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_model(path: Path, client: int, *, fixed_base: bool | None, self_collision: bool,
               base_position: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> list[int]:
    """Load every body of a model file into ``client``; returns their ids in file order.

    URDF: ``fixed_base`` None means fixed (robot arms); inertia is taken from the file. SDF and MJCF: pybullet
    has no fixed-base option, so a fixed base is made by giving the base zero mass; None keeps the file's own.

    Raises:
        ValueError: pybullet cannot parse the file (the message carries pybullet's parser error), or
            ``self_collision`` was asked of an SDF file (pybullet's SDF loader has no such option).
    """
    kind = model_kind(path)
    if kind == "sdf" and self_collision:
        raise ValueError(f"{path.name}: self_collision=True is not supported for SDF files by pybullet's loader; "
                         "convert the model to URDF or leave self_collision=False")
    flags = p.URDF_USE_SELF_COLLISION | p.URDF_USE_SELF_COLLISION_EXCLUDE_PARENT if self_collision else 0
    try:
        # pybullet reports parse errors as text on stdout/stderr: keep it for the message, off the terminal
        with capture_native_output(1, drop=None) as out, capture_native_output(2, drop=None) as err:
            if kind == "urdf":
                bodies = [p.loadURDF(str(path), list(base_position), useFixedBase=fixed_base is not False,
                                     flags=flags | p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)]
            elif kind == "sdf":
                bodies = list(p.loadSDF(str(path), physicsClientId=client))
            else:
                bodies = list(p.loadMJCF(str(path), flags=flags, physicsClientId=client))
    except p.error as exc:
        errors = " ".join(line.strip() for line in (out[0] + err[0]).splitlines() if "rror" in line)
        raise ValueError(f"pybullet could not parse {path} as {kind.upper()}: {exc} {errors}".strip()) from None
    if not bodies:
        raise ValueError(f"{path} holds no bodies pybullet could load as {kind.upper()}")
    if fixed_base and kind != "urdf":
        p.changeDynamics(bodies[0], -1, mass=0.0, physicsClientId=client)
    return bodies


@dataclass(frozen=True)
class MjcfMotor:
    """An MJCF ``<motor>``: the joint it drives and its torque limit (gear × largest |ctrl|)."""

    joint: str
    effort: float


def mjcf_motors(path: Path) -> list[MjcfMotor]:
    """The motors of an MJCF file's ``<actuator>`` section (pybullet's loader ignores actuators)."""
    root = ET.parse(path).getroot()
    defaults = root.find("default/motor")
    motors = []
    for motor in root.iterfind("actuator/motor"):
        attrs = dict(defaults.attrib) if defaults is not None else {}
        attrs.update(motor.attrib)
        if "joint" not in attrs:
            continue
        gear = float(attrs.get("gear", "1").split()[0])
        limited = attrs.get("ctrllimited", "true" if "ctrlrange" in attrs else "false") == "true"
        ctrl = max(abs(float(v)) for v in attrs["ctrlrange"].split()) if limited and "ctrlrange" in attrs else 1.0
        motors.append(MjcfMotor(attrs["joint"], abs(gear) * ctrl))
    return motors
