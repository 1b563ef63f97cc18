"""Looks: what an env's cameras see besides its bodies' shapes and poses -- the light, textures on bodies and
distractor objects. They are set on the env (``lighting=``, :meth:`BulletEnv.set_lighting
<pixelrig.envs.BulletEnv.set_lighting>`, :meth:`~pixelrig.envs.BulletEnv.set_texture`), drawn per episode from
:class:`~pixelrig.envs.randomization.Randomization`'s look fields, or taken from a named preset (``looks="train"``).

Looks never change the simulation. Their draws come from a seed made from the env's random generator's state at the
episode's start, read without advancing it (:func:`looks_seed`): the env's ``np_random``, its physics and its
observations of the state are bitwise those of the same env without looks. Each kind of look draws from its own
stream of that seed (the light; each textured body, keyed by its name; each distractor, by its index), so adding one
never changes another's draws. What was drawn is plain data in ``randomization_values`` (``"looks_seed"``,
``"lighting"``, ``"textures"``, ``"distractors"``), which snapshots carry and :func:`apply_looks` puts back.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import types
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pybullet as p
import pybullet_data

from pixelrig.render import textures
from pixelrig.render.lighting import Lighting
from pixelrig.render.procedural import FAMILIES, procedural_image
from pixelrig.render.registry import check_textures

if TYPE_CHECKING:
    from pixelrig.envs.base import BulletEnv
    from pixelrig.envs.randomization import Randomization

TEXTURE_SIZE = 64
"""Side of a procedural texture, pixels."""

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")
"""Image files a texture or background folder is read for."""

DISTRACTOR_SUFFIXES = (".urdf", ".obj")
"""Model files a distractor folder is read for."""

DEFAULT_DISTRACTORS = "random_urdfs"
"""pybullet_data's folder of 1,000 small random objects (one URDF each): the distractors unless told otherwise."""

DISTRACTOR_MASS = 0.1
"""Mass (kg) of a colliding distractor made from an OBJ file (a URDF keeps its own)."""

LIGHT_FIELDS = ("light_azimuth", "light_elevation", "light_color", "light_ambient", "light_diffuse", "light_specular",
                "shadows")
"""Randomization's light fields."""

LOOK_FIELDS = (*LIGHT_FIELDS, "textures", "distractors")
"""Randomization's look fields (``distractor_source`` and ``distractor_physics`` only qualify ``distractors``)."""

_STREAM_LIGHT, _STREAM_TEXTURE, _STREAM_DISTRACTOR = 0, 1, 2


# ---- checking what Randomization is given -------------------------------------------------------------------


def texture_families(source: str) -> tuple[str, ...] | None:
    """The procedural families a texture source draws from, or None for a folder of images.

    ``"procedural"`` is every family; a family's name, that one; ``"procedural:a,b"``, those.
    """
    if source == "procedural":
        return FAMILIES
    if source in FAMILIES:
        return (source,)
    if source.startswith("procedural:"):
        names = tuple(n.strip() for n in source.removeprefix("procedural:").split(","))
        return names if names and all(n in FAMILIES for n in names) else None
    return None


@functools.lru_cache(maxsize=64)
def _listing(folder: str, suffixes: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(str(f) for f in Path(folder).rglob("*") if f.suffix.lower() in suffixes and f.is_file()))


def folder_files(what: str, folder: str | os.PathLike[str], suffixes: tuple[str, ...], fix: str) -> tuple[str, ...]:
    """The files with ``suffixes`` under ``folder`` (any depth), sorted, listed once per process.

    Raises:
        ValueError: the folder does not exist or holds none; the message names ``what`` and ``fix``.
    """
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise ValueError(f"{what}={str(folder)!r} is not a folder: {fix}")
    files = _listing(str(path.resolve()), suffixes)
    if not files:
        raise ValueError(f"{what}={str(folder)!r} holds no {'/'.join(suffixes)} files: {fix}")
    return files


def check_texture_sources(value: Any) -> Mapping[str, str] | None:
    """Check ``Randomization(textures=...)``: ``{body, "body/link" or glob: source}`` with each source
    ``"procedural"``, a family name, ``"procedural:a,b"`` or a folder of images. Returns a read-only mapping
    (folders made absolute), or None for nothing.

    Raises:
        ValueError: not a mapping, a bad key, an unknown source, or a folder with no images.
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"Randomization: textures={value!r} must be a dict {{body name: source}}, e.g. "
                         "textures={'table': 'procedural', 'ground': '/path/to/images'}")
    out: dict[str, str] = {}
    for key, source in value.items():
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"Randomization: textures key {key!r} must be a body name, 'body/link' or a glob")
        if isinstance(source, os.PathLike) or (isinstance(source, str) and texture_families(source) is None):
            folder_files(f"Randomization: textures[{key!r}]", source, IMAGE_SUFFIXES,  # type: ignore[arg-type]
                         f"give a folder of images ({', '.join(IMAGE_SUFFIXES)}), 'procedural' or one of {FAMILIES}")
            out[key] = str(Path(source).expanduser().resolve())  # type: ignore[arg-type]
        elif isinstance(source, str):
            out[key] = source
        else:
            raise ValueError(f"Randomization: textures[{key!r}]={source!r} must be 'procedural', one of {FAMILIES}, "
                             "'procedural:a,b' or a folder of images")
    return types.MappingProxyType(out) if out else None


def check_distractors(count: Any, source: Any) -> str | None:
    """Check ``Randomization(distractors=, distractor_source=)``; returns the source folder, absolute (None: the
    default, pybullet_data's random_urdfs).

    Raises:
        ValueError: a count that is not a whole number in 0..64, or a source folder with no URDF/OBJ files.
    """
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or not 0 <= count <= 64:
        raise ValueError(f"Randomization: distractors={count!r} must be a whole number of objects in 0..64")
    if source is None:
        return None
    folder_files("Randomization: distractor_source", source, DISTRACTOR_SUFFIXES,
                 "give a folder of .urdf or .obj files, or None for pybullet_data's random_urdfs")
    return str(Path(source).expanduser().resolve())


# ---- the seed and the light ---------------------------------------------------------------------------------


def looks_seed(rng: np.random.Generator) -> int:
    """A seed for an episode's looks made from ``rng``'s state, without advancing it (SHA-256 of the state)."""
    state = json.dumps(rng.bit_generator.state, sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(state.encode()).digest()[:8], "little") >> 1


def azimuth_elevation(direction: tuple[float, float, float]) -> tuple[float, float]:
    """(azimuth, elevation) in degrees of a direction (azimuth from +x towards +y; elevation above the xy plane)."""
    x, y, z = direction
    return math.degrees(math.atan2(y, x)), math.degrees(math.atan2(z, math.hypot(x, y)))


def draw_lighting(spec: Randomization, base: Lighting, seed: int) -> Lighting:
    """The episode's light: ``base`` with each randomised field drawn uniformly in its range (nine numbers are drawn
    whatever is randomised, so one field's range never changes another's draw)."""
    u = np.random.default_rng([seed, _STREAM_LIGHT]).random(9)

    def pick(value: float, span: tuple[float, float] | None, x: float) -> float:
        return value if span is None else span[0] + (span[1] - span[0]) * x

    azimuth, elevation = azimuth_elevation(base.direction)
    azimuth = pick(azimuth, spec.light_azimuth, u[0])
    elevation = pick(elevation, spec.light_elevation, u[1])
    a, e = math.radians(azimuth), math.radians(elevation)
    direction = (math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)) \
        if spec.light_azimuth or spec.light_elevation else base.direction
    color = base.color
    if spec.light_color is not None:
        lo, hi = spec.light_color
        color = tuple(lo[i] + (hi[i] - lo[i]) * u[2 + i] for i in range(3))  # type: ignore[assignment]
    return Lighting(direction=direction, color=color,
                    ambient=pick(base.ambient, spec.light_ambient, u[5]),
                    diffuse=pick(base.diffuse, spec.light_diffuse, u[6]),
                    specular=pick(base.specular, spec.light_specular, u[7]),
                    shadows=base.shadows if spec.shadows is None else bool(u[8] < spec.shadows))


# ---- textures -----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _read_image(path: str, mtime_ns: int) -> textures.TextureImage:
    from PIL import Image

    with Image.open(path) as img:
        return textures.texture_image(np.asarray(img.convert("RGB")), f"image {path}")


def read_image(path: str | os.PathLike[str]) -> textures.TextureImage:
    """An image file as a texture (RGB), cached per path and modification time.

    Raises:
        ValueError: the file cannot be read as an image (the message names it).
    """
    try:
        return _read_image(str(path), os.stat(path).st_mtime_ns)
    except (OSError, SyntaxError) as exc:  # PIL raises SyntaxError for some corrupt files
        raise ValueError(f"cannot read the image {str(path)!r}: {exc}") from None


def texture_of(entry: list[Any]) -> textures.TextureImage:
    """The image of a ``randomization_values["textures"]`` entry ``[body, link, kind, ...]``: ``"procedural",
    family, seed`` (made again), ``"file", path`` (read again) or ``"image", array`` (set directly)."""
    kind = entry[2]
    if kind == "procedural":
        return textures.texture_image(procedural_image(entry[3], int(entry[4]), (TEXTURE_SIZE, TEXTURE_SIZE)))
    if kind == "file":
        return read_image(entry[3])
    return textures.texture_image(np.asarray(entry[3], dtype=np.uint8))


def link_index(client: int, body: int, name: str) -> int | None:
    """The index of ``body``'s link called ``name`` (-1 for its base link), or None."""
    if p.getBodyInfo(body, physicsClientId=client)[0].decode(errors="replace") == name:
        return -1
    for j in range(p.getNumJoints(body, physicsClientId=client)):
        if p.getJointInfo(body, j, physicsClientId=client)[12].decode(errors="replace") == name:
            return j
    return None


def visual_links(client: int, body: int) -> list[int]:
    """The links of ``body`` that have a visual shape, in order (-1 = base)."""
    return sorted({int(s[1]) for s in p.getVisualShapeData(body, physicsClientId=client)})


def texture_targets(env: BulletEnv, key: str, who: str = "Randomization(textures=...)"
                    ) -> list[tuple[str, int, list[int]]]:
    """What a textures key names: ``[(name, body id, links)]`` -- a body (every link with a visual), a
    ``"body/link"`` (that link) or a glob over body names (``who`` names the caller in messages).

    Raises:
        ValueError: a key without wildcards that names no body or link (the message lists them).
    """
    import fnmatch

    named = env.body_ids()
    body_key, _, link_key = key.partition("/")
    hits = [name for name in named if fnmatch.fnmatchcase(name, body_key)]
    wild = any(ch in body_key for ch in "*?[")
    if not hits and not wild:
        raise ValueError(f"{type(env).__name__}: {who} names body {body_key!r}, which this env does not have; "
                         f"bodies: {list(named)} (globs such as 'table*' may match none)")
    out = []
    for name in hits:
        body = named[name]
        if link_key:
            link = link_index(env.client, body, link_key)
            if link is None:
                raise ValueError(f"{type(env).__name__}: {who} names link {link_key!r} of {name!r}, which has "
                                 "none of that name")
            out.append((name, body, [link]))
        else:
            out.append((name, body, visual_links(env.client, body)))
    return out


def check_looks(env: BulletEnv) -> None:
    """Check, when the env is made, that every textures key without wildcards names one of its bodies (or links).

    Raises:
        ValueError: the message lists the bodies there are.
    """
    for key in (env.randomize.textures or {}) if env.randomize is not None else {}:
        texture_targets(env, key)


def draw_textures(spec: Randomization, seed: int, env: BulletEnv) -> list[list[Any]]:
    """Each textured link's entry ``[body, link, kind, ...]``: per body (and link) a draw from its own stream keyed
    by its name; a body named by several keys takes the first key's source."""
    done: set[tuple[int, int]] = set()
    out: list[list[Any]] = []
    for key, source in (spec.textures or {}).items():
        for name, body, links in texture_targets(env, key):
            rng = np.random.default_rng([seed, _STREAM_TEXTURE, zlib.crc32(f"{name}/{key}".encode())])
            families = texture_families(source)
            if families is None:
                files = folder_files("textures", source, IMAGE_SUFFIXES, "put images there")
                drawn: list[Any] = ["file", files[int(rng.integers(len(files)))]]
            else:
                drawn = ["procedural", families[int(rng.integers(len(families)))], int(rng.integers(2**31))]
            for link in links:
                if (body, link) not in done:
                    done.add((body, link))
                    out.append([body, link, *drawn])
    return out


def wear_textures(client: int, entries: list[list[Any]]) -> None:
    """Put each entry's texture on its link (a later entry for the same link wins)."""
    for entry in entries:
        textures.set_texture(client, int(entry[0]), int(entry[1]), texture_of(entry))


# ---- distractors --------------------------------------------------------------------------------------------


def distractor_sources(source: str | None) -> tuple[str, ...]:
    """The model files distractors are drawn from (``source`` None: pybullet_data's random_urdfs): the folder's
    URDFs, or its OBJs when it has no URDF."""
    folder = source if source is not None else os.path.join(pybullet_data.getDataPath(), DEFAULT_DISTRACTORS)
    files = folder_files("distractor_source", folder, DISTRACTOR_SUFFIXES, "give a folder of .urdf or .obj files")
    urdfs = tuple(f for f in files if f.lower().endswith(".urdf"))
    return urdfs or files  # a folder of URDFs holds their meshes too: those are not objects of their own


def make_distractor(client: int, path: str, position: Any, orientation: Any, physics: bool) -> int:
    """Load a distractor: a URDF (fixed and with its collisions filtered out unless ``physics``) or an OBJ (a visual
    shape, plus a convex collision shape and :data:`DISTRACTOR_MASS` with ``physics``).

    Raises:
        ValueError: pybullet could not load it.
    """
    if path.lower().endswith(".urdf"):
        body = p.loadURDF(path, list(position), list(orientation), useFixedBase=not physics, physicsClientId=client)
    else:
        vis = p.createVisualShape(p.GEOM_MESH, fileName=path, physicsClientId=client)
        col = p.createCollisionShape(p.GEOM_MESH, fileName=path, physicsClientId=client) if physics else -1
        body = p.createMultiBody(DISTRACTOR_MASS if physics else 0.0, col, vis, list(position), list(orientation),
                                 physicsClientId=client) if vis >= 0 else -1
    if body < 0:
        raise ValueError(f"distractor {path!r} could not be loaded by pybullet")
    for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
        if physics:
            p.changeDynamics(body, link, activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING, physicsClientId=client)
        else:  # no collision with anything: the simulation is bitwise the same without it
            p.setCollisionFilterGroupMask(body, link, 0, 0, physicsClientId=client)
    return body


@functools.lru_cache(maxsize=256)
def _obj_vertices(path: str) -> np.ndarray:
    rows = [line.split()[1:4] for line in Path(path).read_text(errors="replace").splitlines() if line.startswith("v ")]
    return np.asarray(rows, dtype=np.float64).reshape(-1, 3)


def _bounds(client: int, body: int, path: str, quat: Any) -> tuple[np.ndarray, np.ndarray]:
    """World bounds of a distractor just loaded at the origin: its links' collision bounds, or for an OBJ without
    collision shape its vertices' turned by ``quat``."""
    if path.lower().endswith(".obj") and p.getDynamicsInfo(body, -1, physicsClientId=client)[0] == 0.0:
        rotation = np.asarray(p.getMatrixFromQuaternion(quat), dtype=np.float64).reshape(3, 3)
        points = _obj_vertices(path) @ rotation.T
        return points.min(axis=0), points.max(axis=0)
    lo, hi = (np.asarray(v) for v in p.getAABB(body, physicsClientId=client))
    for link in range(p.getNumJoints(body, physicsClientId=client)):
        link_lo, link_hi = (np.asarray(v) for v in p.getAABB(body, link, physicsClientId=client))
        lo, hi = np.minimum(lo, link_lo), np.maximum(hi, link_hi)
    return lo, hi


@dataclass(frozen=True)
class _Box:
    low: np.ndarray
    high: np.ndarray

    def overlaps_xy(self, centre: np.ndarray, half: np.ndarray) -> bool:
        """Whether the x-y rectangle ``centre`` +- ``half`` overlaps this box's x-y extent."""
        return bool(np.all(centre[:2] + half[:2] > self.low[:2]) and np.all(centre[:2] - half[:2] < self.high[:2]))


def _placement(rng: np.random.Generator, area: _Box, keep_out: list[_Box], half: np.ndarray, where: str
               ) -> np.ndarray:
    """An x-y position in ``area`` where a footprint of half-size ``half`` misses every box of ``keep_out`` (up to
    1000 tries)."""
    lo, hi = area.low[:2] + half[:2], area.high[:2] - half[:2]
    for _ in range(1000):
        xy = rng.uniform(lo, np.maximum(lo, hi))
        if not any(box.overlaps_xy(xy, half) for box in keep_out):
            return xy
    raise ValueError(f"{where}: no room for a distractor in the distractor area {area.low.tolist()}..."
                     f"{area.high.tolist()} outside the workspace: fewer distractors, or override the env's "
                     "distractor_area() / workspace_box()")


def draw_distractors(spec: Randomization, seed: int, env: BulletEnv) -> tuple[list[list[Any]], list[list[Any]]]:
    """Load ``spec.distractors`` objects at random poses in the env's :meth:`distractor_area` (standing on its floor,
    turned about z) outside its :meth:`workspace_box` and apart from each other, each with a random colour or, one
    time in two, a procedural texture. Returns their entries ``[body, -1, path, x, y, z, qx, qy, qz, qw, r, g, b,
    physics]`` and the texture entries of the textured ones."""
    files = distractor_sources(spec.distractor_source)
    client = env.client
    area_low, area_high = (np.asarray(v, dtype=np.float64) for v in env.distractor_area())
    work_low, work_high = (np.asarray(v, dtype=np.float64) for v in env.workspace_box())
    keep_out = [_Box(work_low, work_high)]
    entries, worn = [], []
    for i in range(spec.distractors):
        rng = np.random.default_rng([seed, _STREAM_DISTRACTOR, i])
        path = files[int(rng.integers(len(files)))]
        yaw = float(rng.uniform(-math.pi, math.pi))
        rgb = [float(v) for v in rng.uniform(0.05, 1.0, 3)]
        textured, family, tex_seed = bool(rng.random() < 0.5), FAMILIES[int(rng.integers(len(FAMILIES)))], \
            int(rng.integers(2**31))
        textured &= env.render_backend.draws_textures  # else its colour (the draws stay the same)
        quat = p.getQuaternionFromEuler((0.0, 0.0, yaw))
        body = make_distractor(client, path, (0.0, 0.0, 0.0), quat, spec.distractor_physics)
        lo, hi = _bounds(client, body, path, quat)
        half = (hi - lo) / 2 + 0.005  # 5 mm apart at least
        xy = _placement(rng, _Box(area_low, area_high), keep_out, half, type(env).__name__)
        centre = (lo + hi) / 2
        position = [float(xy[0] - centre[0]), float(xy[1] - centre[1]), float(area_low[2] - lo[2] + 1e-3)]
        p.resetBasePositionAndOrientation(body, position, quat, physicsClientId=client)
        keep_out.append(_Box(np.r_[xy - half[:2], 0.0], np.r_[xy + half[:2], 0.0]))
        entries.append([body, -1, path, *position, *map(float, quat), *rgb, int(spec.distractor_physics)])
        if textured:
            worn += [[body, link, "procedural", family, tex_seed] for link in visual_links(client, body)]
    return entries, worn


def color_distractors(client: int, entries: list[list[Any]]) -> None:
    """Give each distractor its drawn colour (every link with a visual, opaque)."""
    for entry in entries:
        for link in visual_links(client, int(entry[0])):
            p.changeVisualShape(int(entry[0]), link, rgbaColor=[*entry[10:13], 1.0], physicsClientId=client)


def name_distractors(env: BulletEnv, entries: list[list[Any]]) -> None:
    """Name the distractors ``distractor_0``, ``distractor_1``, ... (their label names; ``classes={"distractor_*":
    id}`` gives them a class)."""
    for i, entry in enumerate(entries):
        env.body_names[int(entry[0])] = f"distractor_{i}"


def remake_distractors(env: BulletEnv, entries: list[list[Any]]) -> None:
    """Load recorded distractors again, into a world rebuilt without them (their ids must come out as recorded).

    Raises:
        ValueError: a distractor came out with another body id (the world is not the one they were drawn in).
    """
    for entry in entries:
        body = make_distractor(env.client, entry[2], entry[3:6], entry[6:10], bool(entry[13]))
        if body != int(entry[0]):
            raise ValueError(f"distractor {entry[2]!r} was body {entry[0]} when drawn but loads as body {body}: the "
                             "world differs from the one it was drawn in")
    color_distractors(env.client, entries)
    name_distractors(env, entries)


def draw_looks(spec: Randomization, seed: int, env: BulletEnv) -> dict[str, Any]:
    """Draw and apply an episode's looks (light, distractors, textures) into the env's freshly built world; returns
    what was drawn (``randomization_values``' look keys)."""
    values: dict[str, Any] = {"looks_seed": seed}
    if any(getattr(spec, name) is not None for name in LIGHT_FIELDS):
        values["lighting"] = draw_lighting(spec, env.lighting, seed).to_dict()
    worn: list[list[Any]] = []
    if spec.distractors:
        values["distractors"], worn = draw_distractors(spec, seed, env)
        color_distractors(env.client, values["distractors"])
        name_distractors(env, values["distractors"])
    if spec.textures:
        worn = draw_textures(spec, seed, env) + worn
    if worn:
        values["textures"] = worn
        wear_textures(env.client, worn)
    return values


def distractor_ids(values: Mapping[str, Any]) -> set[int]:
    """The body ids of the distractors in ``randomization_values``."""
    return {int(entry[0]) for entry in values.get("distractors", [])}


# ---- the env's side ------------------------------------------------------------------------------------------


class EnvLooks:
    """The looks of :class:`~pixelrig.envs.BulletEnv` (a mixin): its own light, the episode's drawn looks and the
    ones set at run time, the workspace distractors keep out of and the area they stand in.

    ``lighting`` (the constructor's) is configuration; the episode's light, textures and distractors are
    ``randomization_values`` (drawn at reset, or set with :meth:`set_lighting` and :meth:`set_texture` until the next
    reset), so snapshots carry them.
    """

    lighting: Lighting
    randomization_values: dict[str, Any]

    @property
    def current_lighting(self) -> Lighting:
        """The light the env draws with now: this episode's drawn or set light, else the env's ``lighting``."""
        values = self.randomization_values.get("lighting")
        return self.lighting if values is None else Lighting.from_dict(values)

    def set_lighting(self: BulletEnv, lighting: Lighting) -> None:  # type: ignore[misc]
        """Draw with ``lighting`` from now until the next reset (recorded in ``randomization_values``, so snapshots
        carry it).

        Raises:
            ValueError: not a Lighting, or one the env's renderer cannot draw (the message names those that can).
                Nothing is changed.
        """
        self.render_backend.set_lighting(lighting)
        self.randomization_values = {**self.randomization_values, "lighting": lighting.to_dict()}

    def set_texture(self: BulletEnv, body: str, image: Any) -> None:  # type: ignore[misc]
        """Put an image on a body now (every link of it with a visual) or on one link (``"body/link"``), its
        colour made white so that the image shows as it is, until the next reset (use ``Randomization(textures=)``
        for every episode). Visual only: the simulation is unchanged. Recorded in ``randomization_values``, so
        snapshots carry it.

        Args:
            body: a body name, or ``"body/link"``.
            image: (H, W, 3) or (H, W, 4) uint8 array, or the path of an image file.

        Raises:
            ValueError: an unknown body or link (the message lists the bodies), or a bad image. Nothing is changed.
        """
        if not isinstance(body, str) or any(ch in body for ch in "*?["):
            raise ValueError(f"set_texture: body={body!r} must be a body name or 'body/link' (no wildcards)")
        check_textures(self.render_backend.name, "set_texture")
        if isinstance(image, str | os.PathLike):
            texture, kind = read_image(image), ["file", str(Path(image).resolve())]
        else:
            texture = textures.texture_image(image, f"set_texture({body!r})")
            kind = ["image", np.array(texture.pixels)]
        entries = [[b, link, *kind] for _, b, links in texture_targets(self, body, "set_texture") for link in links]
        for entry in entries:
            textures.set_texture(self.client, int(entry[0]), int(entry[1]), texture)
        now = {(int(e[0]), int(e[1])) for e in entries}
        kept = [e for e in self.randomization_values.get("textures", []) if (int(e[0]), int(e[1])) not in now]
        self.randomization_values = {**self.randomization_values, "textures": kept + entries}

    def workspace_box(self: BulletEnv) -> tuple[tuple[float, ...], tuple[float, ...]]:  # type: ignore[misc]
        """``(low, high)`` world box of the task's workspace, which distractors keep out of (their footprints never
        overlap its x-y extent). Default: the bounds of every body but the ground (any body wider than 20 m) in the
        freshly built world, grown by 0.25 m a side; tasks override it."""
        c = self.client
        low, high = np.full(3, np.inf), np.full(3, -np.inf)
        for i in range(p.getNumBodies(physicsClientId=c)):
            body = p.getBodyUniqueId(i, physicsClientId=c)
            for link in range(-1, p.getNumJoints(body, physicsClientId=c)):
                lo, hi = (np.asarray(v) for v in p.getAABB(body, link, physicsClientId=c))
                if np.all(hi - lo < 20.0):
                    low, high = np.minimum(low, lo), np.maximum(high, hi)
        if not np.all(np.isfinite(low)):
            low = high = np.zeros(3)
        return tuple((low - 0.25).tolist()), tuple((high + 0.25).tolist())

    def distractor_area(self: BulletEnv) -> tuple[tuple[float, ...], tuple[float, ...]]:  # type: ignore[misc]
        """``(low, high)`` world box distractors are placed in: their footprints inside its x-y extent, standing on
        its floor (``low[2]``). Default: :meth:`workspace_box` grown by 1 m in x and y, on the ground (z = 0);
        tasks override it."""
        low, high = self.workspace_box()
        return (low[0] - 1.0, low[1] - 1.0, 0.0), (high[0] + 1.0, high[1] + 1.0, 0.0)

    def episode_looks(self: BulletEnv, values: dict[str, Any], seed: int | None) -> dict[str, Any]:  # type: ignore[misc]
        """``values`` with this episode's looks drawn (from ``seed``; None: no looks randomised) and applied, and the
        renderer given the episode's light."""
        if seed is not None and self.randomize is not None:
            values = {**values, **draw_looks(self.randomize, seed, self)}
        self.randomization_values = values
        self.render_backend.set_lighting(self.current_lighting)
        return values

    def put_looks(self: BulletEnv, values: Mapping[str, Any], rebuilt: bool) -> None:  # type: ignore[misc]
        """Put recorded looks back (a restore): the distractors into a world ``rebuilt`` without them (one restored
        in place still has them), the textures, and the light."""
        if rebuilt and values.get("distractors"):
            remake_distractors(self, values["distractors"])
        wear_textures(self.client, values.get("textures", []))
        light = values.get("lighting")
        self.render_backend.set_lighting(self.lighting if light is None else Lighting.from_dict(light))
