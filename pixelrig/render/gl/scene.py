"""What the gl renderer draws for one pybullet client: visual shapes read from pybullet, and their world poses.

The scene is read from ``getVisualShapeData`` (geometry, local frames, colours). Every render re-reads that data
(~25 µs for PandaPush) and compares it with what was built: a changed colour (``changeVisualShape``) updates the
colours only; any other change (``resetSimulation`` and a different world, bodies added or removed) rebuilds the
scene. ``GlBackend.invalidate()`` forces a rebuild. Poses are read at every render: the URDF link frame of each link
(``getLinkStates`` with forward kinematics, world link frame) and, for the base, the centre-of-mass pose times the
inverse of its local inertial frame.

MJCF ``fromto`` capsules and cylinders are reported by pybullet with an identity frame and no axis; their end
points are read from the MJCF file that ``saveWorld`` names for the body.
"""

from __future__ import annotations

import os
import re
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from pixelrig.render.gl.meshes import MeshData, box, mesh_file, sphere, tube

IDENTITY_FRAME = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """(N, 4) xyzw quaternions -> (N, 3, 3) rotation matrices (float64)."""
    x, y, z, w = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    n = x * x + y * y + z * z + w * w
    s = np.where(n > 0, 2.0 / np.where(n > 0, n, 1.0), 0.0)
    return np.stack([
        1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
        s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w),
        s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y),
    ], axis=1).reshape(-1, 3, 3)


def pose_matrices(pos: np.ndarray, quat: np.ndarray) -> np.ndarray:
    """(N, 3) positions and (N, 4) quaternions -> (N, 4, 4) rigid transforms."""
    out = np.zeros((len(pos), 4, 4))
    out[:, :3, :3] = quat_to_matrix(quat)
    out[:, :3, 3] = pos
    out[:, 3, 3] = 1.0
    return out


@dataclass
class Instance:
    """One visual shape to draw."""

    geometry: Any  # key into the renderer's geometry registry
    mesh: MeshData
    body: int
    link: int
    local: np.ndarray  # (4, 4) visual frame in the URDF link frame
    rgba: tuple[float, float, float, float]
    shape: int  # index in the client's visual shape data (colours are re-read from there)


@dataclass
class Scene:
    """The drawable content of one client, with what is needed to pose it each frame."""

    signature: tuple = ()
    colors: tuple = ()
    instances: list[Instance] = field(default_factory=list)
    bodies: list[int] = field(default_factory=list)
    links: dict[int, list[int]] = field(default_factory=dict)  # body -> non-base links that carry visuals
    base_inertial_inv: dict[int, np.ndarray] = field(default_factory=dict)
    frame_index: dict[tuple[int, int], int] = field(default_factory=dict)  # (body, link) -> row in frames
    base_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # rows of the bases, body order
    base_inv: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4)))  # their inertial inverses
    instance_frame: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    local: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4)))


def read_visuals(client: int) -> tuple[list[int], list[tuple]]:
    """Body ids and every body's visual shape data, in body order."""
    bodies = [p.getBodyUniqueId(i, physicsClientId=client) for i in range(p.getNumBodies(physicsClientId=client))]
    shapes: list[tuple] = []
    for body in bodies:
        shapes.extend(p.getVisualShapeData(body, physicsClientId=client))
    return bodies, shapes


def signature_of(shapes: list[tuple]) -> tuple[tuple, tuple]:
    """(geometry signature, colours) of visual shape data: a geometry change means a rebuild."""
    return tuple(s[:7] for s in shapes), tuple(s[7] for s in shapes)


# ---- MJCF fromto ---------------------------------------------------------------------------------------------

_MJCF_LINE = re.compile(r'loadMJCF\("([^"]+)"')


def _saved_mjcf_files(client: int) -> list[str]:
    """The MJCF files pybullet says this world was loaded from (through ``saveWorld``)."""
    folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
    fd, name = tempfile.mkstemp(suffix=".py", prefix="pixelrig-world-", dir=folder)
    os.close(fd)
    try:
        p.saveWorld(name, physicsClientId=client)
        text = Path(name).read_text(errors="replace")
    finally:
        os.unlink(name)
    return list(dict.fromkeys(_MJCF_LINE.findall(text)))


def _resolve(path: str) -> Path | None:
    import pybullet_data

    for base in (Path.cwd(), Path(pybullet_data.getDataPath())):
        candidate = Path(path) if os.path.isabs(path) else base / path
        if candidate.is_file():
            return candidate
    return None


def _mjcf_tubes(path: Path) -> tuple[str, dict[str, list[tuple[str, tuple | None]]]]:
    """(model name, body name -> [(geom type, fromto points or None)] for its capsule/cylinder geoms in order)."""
    root = ET.parse(path).getroot()
    default_type = "sphere"
    for geom in root.iter("default"):
        g = geom.find("geom")
        if g is not None and g.get("type"):
            default_type = g.get("type") or default_type
            break
    out: dict[str, list[tuple[str, tuple | None]]] = {}
    for body in root.iter("body"):
        tubes = []
        for geom in body.findall("geom"):
            kind = geom.get("type", default_type)
            if kind in ("capsule", "cylinder"):
                fromto = geom.get("fromto")
                pts = tuple(float(x) for x in fromto.split()) if fromto else None
                tubes.append((kind, (pts[:3], pts[3:]) if pts and len(pts) == 6 else None))
        if body.get("name"):
            out[body.get("name", "")] = tubes
    return root.get("model", ""), out


def fromto_lookup(client: int, bodies: list[int]) -> dict[tuple[int, int], list[tuple | None]]:
    """(body, link) -> per capsule/cylinder visual shape of that link, its MJCF fromto end points or None."""
    models = []
    for file in _saved_mjcf_files(client):
        path = _resolve(file)
        if path is not None:
            try:
                models.append(_mjcf_tubes(path))
            except (ET.ParseError, OSError, ValueError):
                continue
    out: dict[tuple[int, int], list[tuple | None]] = {}
    if not models:
        return out
    for body in bodies:
        base_name, body_name = (s.decode(errors="replace") for s in p.getBodyInfo(body, physicsClientId=client))
        names = {-1: base_name}
        for j in range(p.getNumJoints(body, physicsClientId=client)):
            names[j] = p.getJointInfo(body, j, physicsClientId=client)[12].decode(errors="replace")
        for model, tubes in models:
            if model and model != body_name:
                continue
            for link, name in names.items():
                if name in tubes:
                    out[(body, link)] = [pts for _, pts in tubes[name]]
            break
    return out


# ---- building --------------------------------------------------------------------------------------------------

def _frame_matrix(pos: tuple, orn: tuple) -> np.ndarray:
    return pose_matrices(np.asarray([pos], dtype=np.float64), np.asarray([orn], dtype=np.float64))[0]


def build_scene(client: int, bodies: list[int], shapes: list[tuple]) -> Scene:
    """Resolve every visual shape to geometry and a local frame (see the module docstring)."""
    scene = Scene()
    scene.signature, scene.colors = signature_of(shapes)
    scene.bodies = bodies
    needs_fromto = any(s[2] in (p.GEOM_CAPSULE, p.GEOM_CYLINDER) and (tuple(s[5]), tuple(s[6])) == IDENTITY_FRAME
                       for s in shapes)
    fromto = fromto_lookup(client, bodies) if needs_fromto else {}
    tube_count: dict[tuple[int, int], int] = {}
    for index, s in enumerate(shapes):
        body, link, kind, dims, filename, pos, orn, rgba = s[:8]
        local = _frame_matrix(pos, orn)
        if kind == p.GEOM_MESH:
            path = filename.decode(errors="replace") if isinstance(filename, bytes) else str(filename)
            if not os.path.isfile(path):
                continue  # TinyRenderer draws nothing for a mesh it cannot read
            scale = (float(dims[0]), float(dims[1]), float(dims[2]))
            key: Any = ("mesh", path, scale)
            mesh = mesh_file(path, scale)
        elif kind == p.GEOM_BOX:
            half = (float(dims[0]) / 2, float(dims[1]) / 2, float(dims[2]) / 2)
            key, mesh = ("box", half), box(half)
        elif kind == p.GEOM_SPHERE:
            key, mesh = ("sphere", float(dims[0])), sphere(float(dims[0]))
        elif kind in (p.GEOM_CAPSULE, p.GEOM_CYLINDER):
            name = "capsule" if kind == p.GEOM_CAPSULE else "cylinder"
            length, radius = float(dims[0]), float(dims[1])
            nth = tube_count.get((body, link), 0)
            tube_count[(body, link)] = nth + 1
            points = fromto.get((body, link), [])
            ends = points[nth] if nth < len(points) else None
            if ends is not None and abs(float(np.linalg.norm(np.subtract(ends[1], ends[0]))) - length) < 1e-4 \
                    and (tuple(pos), tuple(orn)) == IDENTITY_FRAME:
                key = (name, length, radius, ends[0], ends[1])
                mesh = tube(name, length, radius, ends[0], ends[1])
            else:
                key, mesh = (name, length, radius), tube(name, length, radius)
        else:
            continue  # planes and heightfields: TinyRenderer does not draw them either
        scene.instances.append(Instance(key, mesh, body, link, local, tuple(rgba), index))  # type: ignore[arg-type]
    for body in bodies:
        links = sorted({i.link for i in scene.instances if i.body == body and i.link >= 0})
        scene.links[body] = links
        dyn = p.getDynamicsInfo(body, -1, physicsClientId=client)
        scene.base_inertial_inv[body] = np.linalg.inv(_frame_matrix(dyn[3], dyn[4]))
    row = 0
    for body in bodies:
        for link in [-1, *scene.links[body]]:
            scene.frame_index[(body, link)] = row
            row += 1
    scene.instance_frame = np.array([scene.frame_index[(i.body, i.link)] for i in scene.instances], np.int64)
    scene.base_rows = np.array([scene.frame_index[(body, -1)] for body in bodies], np.int64)
    scene.base_inv = np.array([scene.base_inertial_inv[body] for body in bodies]).reshape(-1, 4, 4)
    scene.local = np.array([i.local for i in scene.instances]).reshape(-1, 4, 4)
    return scene


def link_poses(client: int, scene: Scene, pos: list[Any], orn: list[Any]) -> None:
    """Append to ``pos`` and ``orn`` the world pose of every frame the scene needs, rows as in
    ``scene.frame_index``: each base's centre of mass (:func:`compose_frames` turns it into the URDF frame), then
    its links' URDF link frames."""
    for body in scene.bodies:
        com_pos, com_orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
        pos.append(com_pos)
        orn.append(com_orn)
        links = scene.links[body]
        if links:
            for state in p.getLinkStates(body, links, computeForwardKinematics=1, physicsClientId=client):
                pos.append(state[4])
                orn.append(state[5])


def compose_frames(pos: list[Any], orn: list[Any], base_rows: np.ndarray, base_inv: np.ndarray) -> np.ndarray:
    """(F, 4, 4) world transforms from :func:`link_poses`' poses (of one scene or of several, rows concatenated):
    the rows ``base_rows`` are centre-of-mass poses, turned into URDF frames by their ``base_inv``."""
    frames = pose_matrices(np.asarray(pos, dtype=np.float64).reshape(-1, 3),
                           np.asarray(orn, dtype=np.float64).reshape(-1, 4))
    frames[base_rows] = frames[base_rows] @ base_inv
    return frames
