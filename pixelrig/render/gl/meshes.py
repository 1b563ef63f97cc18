"""Triangle geometry for the gl renderer, built the way pybullet's TinyRenderer builds it: mesh files and
tessellated primitives, cached per process.

Meshes (OBJ, STL, DAE) follow TinyRenderer's importers: OBJ polygons are fanned into triangles, faces without
normals get flat normals, missing texture coordinates read (0.5, 0.5), and the first ``map_Kd`` texture of the
file's materials is the diffuse texture (RGB, rows flipped so that v = 0 is the image's last row). Primitives
(sphere, cylinder, capsule) are the convex hull of a shape's support points in Bullet's 42 sample directions
(``btShapeHull``), with vertex normals pointing from the shape's local origin, as TinyRenderer draws them; a box's
faces take their texture coordinates from pybullet's textured unit cube.
Cylinders and capsules are 32-segment hulls with a 1 mm margin.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# btShapeHull's 42 sample directions (NUM_UNITSPHERE_POINTS, an icosphere), in Bullet's order.
UNIT_SPHERE_POINTS = np.array([
    (0.000000, -0.000000, -1.000000), (0.723608, -0.525725, -0.447219), (-0.276388, -0.850649, -0.447219),
    (-0.894426, -0.000000, -0.447216), (-0.276388, 0.850649, -0.447220), (0.723608, 0.525725, -0.447219),
    (0.276388, -0.850649, 0.447220), (-0.723608, -0.525725, 0.447219), (-0.723608, 0.525725, 0.447219),
    (0.276388, 0.850649, 0.447219), (0.894426, 0.000000, 0.447216), (-0.000000, 0.000000, 1.000000),
    (0.425323, -0.309011, -0.850654), (-0.162456, -0.499995, -0.850654), (0.262869, -0.809012, -0.525738),
    (0.425323, 0.309011, -0.850654), (0.850648, -0.000000, -0.525736), (-0.525730, -0.000000, -0.850652),
    (-0.688190, -0.499997, -0.525736), (-0.162456, 0.499995, -0.850654), (-0.688190, 0.499997, -0.525736),
    (0.262869, 0.809012, -0.525738), (0.951058, 0.309013, 0.000000), (0.951058, -0.309013, 0.000000),
    (0.587786, -0.809017, 0.000000), (0.000000, -1.000000, 0.000000), (-0.587786, -0.809017, 0.000000),
    (-0.951058, -0.309013, -0.000000), (-0.951058, 0.309013, -0.000000), (-0.587786, 0.809017, -0.000000),
    (-0.000000, 1.000000, -0.000000), (0.587786, 0.809017, -0.000000), (0.688190, -0.499997, 0.525736),
    (-0.262869, -0.809012, 0.525738), (-0.850648, 0.000000, 0.525736), (-0.262869, 0.809012, 0.525738),
    (0.688190, 0.499997, 0.525736), (0.525730, 0.000000, 0.850652), (0.162456, -0.499995, 0.850654),
    (-0.425323, -0.309011, 0.850654), (-0.425323, 0.309011, 0.850654), (0.162456, 0.499995, 0.850654),
], dtype=np.float64)

HULL_MARGIN = 0.001  # TinyRenderer sets a 1 mm margin on the cylinder/capsule hull shapes
SEGMENTS = 32


@dataclass(frozen=True)
class MeshData:
    """Indexed triangles in a shape's local frame (scale applied).

    Attributes:
        vertices: (N, 8) float32 rows ``x y z nx ny nz u v``; a zero normal means "flat": the fragment shader
            uses the triangle's own normal, so that corners of flat-shaded meshes can be shared (indexed).
        indices: (M,) uint32, three per triangle, counter-clockwise seen from outside.
        texture: (H, W, 3) uint8 RGB diffuse texture with rows flipped (row 0 = v 0), or None (white).
    """

    vertices: np.ndarray
    indices: np.ndarray
    texture: np.ndarray | None


def _indexed(corners: np.ndarray, normals: np.ndarray, uvs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Share identical (position, normal, uv) corners: (T*3, 8) float32 rows -> unique rows and indices."""
    rows = np.concatenate([corners, normals, uvs], axis=1).astype(np.float32)
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    return np.ascontiguousarray(unique), inverse.reshape(-1).astype(np.uint32)


def _hull(points: np.ndarray) -> MeshData:
    """Convex hull of support points, normals from the local origin, uvs from the normals (btShapeHull path)."""
    from scipy.spatial import ConvexHull

    pts = np.unique(np.round(points, 9), axis=0)
    hull = ConvexHull(pts)
    tris = hull.simplices.copy()
    # orient every triangle counter-clockwise seen from outside
    a, b, c = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    normal = np.cross(b - a, c - a)
    outward = np.einsum("ij,ij->i", normal, hull.equations[:, :3]) < 0
    tris[outward] = tris[outward][:, ::-1]
    length = np.linalg.norm(pts, axis=1, keepdims=True)
    nrm = np.where(length > 1e-12, pts / np.maximum(length, 1e-300), np.array([1.0, 0.0, 0.0]))
    u = np.arctan2(nrm[:, 0], nrm[:, 2]) / (2 * math.pi) + 0.5
    v = nrm[:, 1] * 0.5 + 0.5
    vertices = np.concatenate([pts, nrm, u[:, None], v[:, None]], axis=1).astype(np.float32)
    return MeshData(vertices, tris.reshape(-1).astype(np.uint32), None)


def _support_hull(points: np.ndarray, margin: float) -> MeshData:
    """btShapeHull of a btConvexHullShape: the farthest point along each sample direction, pushed out by margin."""
    dots = UNIT_SPHERE_POINTS @ points.T  # (42, N)
    best = points[np.argmax(dots, axis=1)]
    dirs = UNIT_SPHERE_POINTS / np.linalg.norm(UNIT_SPHERE_POINTS, axis=1, keepdims=True)
    return _hull(best + dirs * margin)


def plane_space(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bullet's ``btPlaneSpace1``: two unit vectors orthogonal to the unit vector ``n``."""
    if abs(n[2]) > math.sqrt(0.5):
        a = n[1] * n[1] + n[2] * n[2]
        k = 1.0 / math.sqrt(a)
        p = np.array([0.0, -n[2] * k, n[1] * k])
        q = np.array([a * k, -n[0] * p[2], n[0] * p[1]])
    else:
        a = n[0] * n[0] + n[1] * n[1]
        k = 1.0 / math.sqrt(a)
        p = np.array([-n[1] * k, n[0] * k, 0.0])
        q = np.array([-n[2] * p[1], n[2] * p[0], a * k])
    return p, q


CUBE_CORNERS_UV = np.array([
    # x, y, z (unit cube corners) and u, v: pybullet's cube_vertices_textured (OpenGLWindow/ShapeData.h), face by face
    (-1, -1, 1, 0.75, 0.25), (1, -1, 1, 1.0, 0.25), (1, 1, 1, 1.0, 0.0), (-1, 1, 1, 0.75, 0.0),
    (-1, -1, -1, 0.5, 0.25), (1, -1, -1, 0.25, 0.25), (1, 1, -1, 0.25, 0.0), (-1, 1, -1, 0.5, 0.0),
    (-1, -1, -1, 0.5, 0.0), (-1, 1, -1, 0.75, 0.0), (-1, 1, 1, 0.75, 0.25), (-1, -1, 1, 0.5, 0.25),
    (1, -1, -1, 0.25, 0.5), (1, 1, -1, 0.25, 0.25), (1, 1, 1, 0.0, 0.25), (1, -1, 1, 0.0, 0.5),
    (-1, -1, -1, 0.25, 0.5), (-1, -1, 1, 0.25, 0.25), (1, -1, 1, 0.5, 0.25), (1, -1, -1, 0.5, 0.5),
    (-1, 1, -1, 0.0, 0.0), (-1, 1, 1, 0.0, 0.25), (1, 1, 1, 0.25, 0.25), (1, 1, -1, 0.25, 0.0),
], dtype=np.float64)
CUBE_FACES = ((2, 1.0), (2, -1.0), (0, -1.0), (0, 1.0), (1, -1.0), (1, 1.0))
"""The axis and side of each face of :data:`CUBE_CORNERS_UV` (four rows each, in order)."""


@functools.lru_cache(maxsize=512)
def box(half_extents: tuple[float, float, float]) -> MeshData:
    """A box as TinyRenderer draws it: its corners, flat-shaded (each face lit with its own normal; a zero vertex
    normal tells the shader to use the face's), each face with the texture coordinates of pybullet's textured unit
    cube (a quarter of the texture per face). Normals from the centre instead shaded a wide, thin box (the Panda table
    at visual_detail="collision") with a false gradient: 9 levels off TinyRenderer; flat: 0. The triangles are the
    convex hull's, as the gl renderer always drew them (each corner repeated per face for its coordinates)."""
    h = np.asarray(half_extents, dtype=np.float64)
    best = np.where(UNIT_SPHERE_POINTS >= 0, h, -h)  # btBoxShape's support vertex
    hull = _hull(best)
    corners = hull.vertices[hull.indices, :3].astype(np.float64).reshape(-1, 3, 3)
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    axis = np.abs(normal).argmax(axis=1)
    face = np.array([CUBE_FACES.index((int(a), float(np.sign(n[a])))) for a, n in zip(axis, normal, strict=True)])
    signs = np.sign(corners).reshape(-1, 3)
    table = CUBE_CORNERS_UV.reshape(6, 4, 5)[np.repeat(face, 3)]  # each corner's face's four rows
    row = np.argmax(np.all(table[:, :, :3] == signs[:, None, :], axis=2), axis=1)
    vertices = np.zeros((len(signs), 8), np.float32)
    vertices[:, :3] = corners.reshape(-1, 3)
    vertices[:, 6:] = table[np.arange(len(signs)), row, 3:]
    return MeshData(vertices, np.arange(len(vertices), dtype=np.uint32), None)


@functools.lru_cache(maxsize=512)
def sphere(radius: float) -> MeshData:
    """A sphere as TinyRenderer tessellates it: the hull of the 42 sample directions at the radius."""
    dirs = UNIT_SPHERE_POINTS / np.linalg.norm(UNIT_SPHERE_POINTS, axis=1, keepdims=True)
    return _hull(dirs * radius)


@functools.lru_cache(maxsize=512)
def tube(kind: str, length: float, radius: float, p1: tuple[float, ...] | None = None,
         p2: tuple[float, ...] | None = None) -> MeshData:
    """A cylinder or capsule (``kind``) as TinyRenderer tessellates it.

    Without ``p1``/``p2`` it runs along z, centred at the origin; with them (MJCF ``fromto``) it runs from p1 to p2
    in the link frame and its normals point from the link origin, as TinyRenderer's are.
    """
    t = 2 * math.pi * np.arange(SEGMENTS) / SEGMENTS
    s, c = np.sin(t)[:, None], np.cos(t)[:, None]
    if p1 is None or p2 is None:
        a = np.array([0.0, 0.0, -length / 2])
        b = np.array([0.0, 0.0, length / 2])
        ring = np.concatenate([radius * s, radius * c, np.zeros_like(s)], axis=1)
        top = np.concatenate([ring + b, ring + a])
        axis = np.array([0.0, 0.0, 1.0])
    else:
        a, b = np.asarray(p1, dtype=np.float64), np.asarray(p2, dtype=np.float64)
        axis = (b - a) / np.linalg.norm(b - a)
        ax1, ax2 = plane_space(axis)
        ring = ax1 * radius * s + ax2 * radius * c
        top = np.concatenate([a + ring, b + ring])
    points = top
    if kind == "capsule":
        points = np.concatenate([top, [a - axis * radius, b + axis * radius]])
    return _support_hull(points, HULL_MARGIN)


# ---- mesh files ------------------------------------------------------------------------------------------------

def _read_texture(path: Path) -> np.ndarray | None:
    import cv2

    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        return None
    return np.ascontiguousarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB)[::-1])


def _obj_texture(path: Path, text: str) -> np.ndarray | None:
    """The first ``map_Kd`` texture named by the OBJ's material libraries (RGB, rows flipped), or None."""
    for match in re.finditer(r"^\s*mtllib\s+(.+?)\s*$", text, re.M):
        mtl = path.parent / match.group(1)
        if not mtl.is_file():
            continue
        for tex in re.finditer(r"^\s*map_Kd\s+(?:-\S+\s+\S+\s+)*(.+?)\s*$", mtl.read_text(errors="replace"), re.M):
            candidate = mtl.parent / tex.group(1)
            if candidate.is_file():
                image = _read_texture(candidate)
                if image is not None:
                    return image
    return None


def _face_normals(corners: np.ndarray) -> np.ndarray:
    a, b, c = corners[0::3], corners[1::3], corners[2::3]
    n = np.cross(b - a, c - a)
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where(length > 0, n / np.maximum(length, 1e-300), 0.0)
    return np.repeat(n, 3, axis=0)


def load_obj(path: Path) -> MeshData:
    """Read an OBJ the way pybullet's importer does (see the module docstring)."""
    text = path.read_text(errors="replace")
    v: list[list[float]] = []
    vt: list[list[float]] = []
    vn: list[list[float]] = []
    corners: list[tuple[int, int, int]] = []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        tag = parts[0]
        if tag == "v":
            v.append([float(x) for x in parts[1:4]])
        elif tag == "vt":
            vt.append([float(x) for x in parts[1:3]] + [0.0] * (2 - len(parts[1:3])))
        elif tag == "vn":
            vn.append([float(x) for x in parts[1:4]])
        elif tag == "f":
            refs = []
            for ref in parts[1:]:
                fields = ref.split("/")
                idx = [int(f) if f else 0 for f in fields] + [0] * (3 - len(fields))
                refs.append(tuple(i - 1 if i > 0 else (len(pool) + i if i < 0 else -1)
                                  for i, pool in zip(idx[:3], (v, vt, vn), strict=True)))
            for k in range(1, len(refs) - 1):  # fan, as tinyobjloader triangulates
                corners += [refs[0], refs[k], refs[k + 1]]
    if not corners:
        raise ValueError(f"mesh {path} has no faces: TinyRenderer would draw nothing either")
    refs_arr = np.asarray(corners, dtype=np.int64)
    pos = np.asarray(v, dtype=np.float64)[refs_arr[:, 0]]
    uv = np.full((len(refs_arr), 2), 0.5)
    if vt:
        ok = refs_arr[:, 1] >= 0
        uv[ok] = np.asarray(vt, dtype=np.float64)[refs_arr[ok, 1]]
    if vn:
        normals = _face_normals(pos)
        ok = refs_arr[:, 2] >= 0
        normals[ok] = np.asarray(vn, dtype=np.float64)[refs_arr[ok, 2]]
    else:
        normals = np.zeros_like(pos)  # flat: the shader takes the face normal, so corners can be shared
    vertices, indices = _indexed(pos, normals, uv)
    return MeshData(vertices, indices, _obj_texture(path, text))


def load_trimesh(path: Path) -> MeshData:
    """Read an STL or DAE through trimesh: STL with flat facet normals, DAE with its vertex normals; untextured."""
    import trimesh

    mesh = trimesh.load(str(path), force="mesh", process=False)
    faces = np.asarray(mesh.faces, dtype=np.int64).reshape(-1)
    pos = np.asarray(mesh.vertices, dtype=np.float64)[faces]
    if path.suffix.lower() == ".stl":
        normals = np.zeros_like(pos)  # flat facets: the shader takes the face normal
    else:
        normals = np.asarray(mesh.vertex_normals, dtype=np.float64)[faces]
    vertices, indices = _indexed(pos, normals, np.full((len(pos), 2), 0.5))
    return MeshData(vertices, indices, None)


@functools.lru_cache(maxsize=256)
def _load_file(path: str, mtime_ns: int, size: int) -> MeshData:
    p = Path(path)
    if p.suffix.lower() == ".obj":
        return load_obj(p)
    if p.suffix.lower() in (".stl", ".dae"):
        return load_trimesh(p)
    raise ValueError(f"mesh {path}: the gl renderer reads .obj, .stl and .dae files (TinyRenderer's formats)")


@functools.lru_cache(maxsize=1024)
def _scaled(path: str, mtime_ns: int, size: int, scale: tuple[float, float, float]) -> MeshData:
    base = _load_file(path, mtime_ns, size)
    if scale == (1.0, 1.0, 1.0):
        return base
    vertices = base.vertices.copy()
    vertices[:, :3] *= np.asarray(scale, dtype=np.float32)  # normals stay as read, as in TinyRenderer
    return MeshData(vertices, base.indices, base.texture)


def mesh_file(path: str, scale: tuple[float, float, float]) -> MeshData:
    """A mesh file with its scale applied, cached per (path, modification time, size, scale) in this process."""
    st = os.stat(path)
    return _scaled(path, st.st_mtime_ns, st.st_size, tuple(float(s) for s in scale))  # type: ignore[arg-type]
