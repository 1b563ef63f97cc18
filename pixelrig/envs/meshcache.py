"""Simplified visual meshes, computed once and cached on disk.

A mesh (OBJ, STL or DAE) is decimated to a triangle budget with fast-simplification (quadric edge collapse) and
written as an OBJ that keeps its texture coordinates, material colour and texture. Results live under the
user's cache directory (``$PIXELRIG_CACHE_DIR``, else ``$XDG_CACHE_HOME/pixelrig``, else ``~/.cache/pixelrig``),
keyed by the SHA-256 of the source mesh (and its material files) and the budget. Each cached OBJ is stored with
its own checksum: a corrupt entry is recomputed, and an unwritable cache falls back to a private temporary
folder -- never to a crash.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pixelrig.system import cache

ALGORITHM = "fqms-3"  # bump when the simplification changes, so old cache entries are not reused
MIN_PART_TRIANGLES = 24  # a small material part (a logo, a ring) keeps at least this many triangles


def cache_root() -> Path:
    """The cache folder (see :func:`pixelrig.system.cache.cache_root`), with its ``meshes`` folder created."""
    root = cache.cache_root()
    (root / "meshes").mkdir(parents=True, exist_ok=True)
    return root


def _material_files(path: Path) -> list[Path]:
    """An OBJ's .mtl files and the textures they name (they change how the mesh looks)."""
    if path.suffix.lower() != ".obj":
        return []
    out = []
    for match in re.finditer(rb"^mtllib\s+(.+?)\s*$", path.read_bytes(), re.M):
        mtl = path.parent / match.group(1).decode(errors="replace")
        if mtl.is_file():
            out.append(mtl)
            for tex in re.finditer(rb"^\s*map_Kd\s+(.+?)\s*$", mtl.read_bytes(), re.M):
                texture = mtl.parent / tex.group(1).decode(errors="replace")
                if texture.is_file():
                    out.append(texture)
    return out


def mesh_key(path: Path, budget: int) -> str:
    """Cache key: the mesh's and its material files' contents, the budget and the algorithm version."""
    stat = path.stat()
    return _mesh_key(str(path), stat.st_mtime_ns, stat.st_size, budget)


@functools.lru_cache(maxsize=1024)
def _mesh_key(path: str, mtime_ns: int, size: int, budget: int) -> str:
    """:func:`mesh_key`, remembered per file version: a model's meshes are several MB to hash."""
    h = hashlib.sha256(f"{ALGORITHM}:{budget}:".encode())
    for f in [Path(path), *_material_files(Path(path))]:
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:32]


@dataclass(frozen=True)
class Part:
    """Triangles sharing one material: positions, optional texture coordinates (per vertex), faces."""

    material: str | None
    vertices: np.ndarray  # (n, 3) float64
    uv: np.ndarray | None  # (n, 2) float64
    faces: np.ndarray  # (m, 3) int64


@dataclass(frozen=True)
class LoadedMesh:
    """A mesh as material parts, with the material library (.mtl) lines they refer to."""

    parts: list[Part]
    mtl_lines: list[str]  # a rewritten material library, texture paths made absolute

    @property
    def triangles(self) -> int:
        return sum(len(part.faces) for part in self.parts)


def _read_obj(path: Path) -> LoadedMesh:
    """Read an OBJ into parts by ``usemtl`` (polygons fanned into triangles, texture coordinates kept)."""
    positions: list[list[float]] = []
    texcoords: list[list[float]] = []
    groups: dict[str | None, list[list[tuple[int, int]]]] = {}
    current: str | None = None
    mtl_lines: list[str] = []
    for raw in path.read_text(errors="replace").splitlines():
        words = raw.split()
        if not words:
            continue
        tag = words[0]
        if tag == "v":
            positions.append([float(w) for w in words[1:4]])
        elif tag == "vt":
            texcoords.append([float(w) for w in words[1:3]])
        elif tag == "usemtl":
            current = " ".join(words[1:])
        elif tag == "mtllib":
            mtl_lines += _rewrite_mtl(path.parent / " ".join(words[1:]))
        elif tag == "f":
            corners = []
            for w in words[1:]:
                idx = w.split("/")
                v = int(idx[0])
                t = int(idx[1]) if len(idx) > 1 and idx[1] else 0
                corners.append((v - 1 if v > 0 else len(positions) + v,
                                (t - 1 if t > 0 else len(texcoords) + t) if t else -1))
            for k in range(1, len(corners) - 1):
                groups.setdefault(current, []).append([corners[0], corners[k], corners[k + 1]])
    pos = np.asarray(positions, np.float64)
    tex = np.asarray(texcoords, np.float64) if texcoords else None
    parts = []
    for material, tris in groups.items():
        corners = np.asarray(tris, np.int64).reshape(-1, 2)
        unique, inverse = np.unique(corners, axis=0, return_inverse=True)
        has_uv = tex is not None and bool(np.all(unique[:, 1] >= 0))
        parts.append(Part(material, pos[unique[:, 0]], tex[unique[:, 1]] if has_uv else None,
                          inverse.reshape(-1, 3)))
    return LoadedMesh(parts, mtl_lines)


def _rewrite_mtl(mtl: Path) -> list[str]:
    """A material library's lines, its textures copied into the cache under content-hash names (pybullet looks
    textures up relative to the mesh's folder only)."""
    if not mtl.is_file():
        return []
    out = []
    for line in mtl.read_text(errors="replace").splitlines():
        words = line.split()
        texture = mtl.parent / words[-1] if len(words) > 1 and words[0].startswith("map_") else None
        if texture is not None and texture.is_file():
            out.append(f"{words[0]} {_cache_texture(texture)}")
        else:
            out.append(line)
    return out


def _cache_texture(texture: Path) -> str:
    """Copy a texture next to the cached meshes (once); returns its file name there."""
    data = texture.read_bytes()
    name = hashlib.sha256(data).hexdigest()[:24] + texture.suffix.lower()
    target = cache_root() / "meshes" / name
    if not (target.is_file() and target.stat().st_size == len(data)):
        tmp = target.with_name(f".{name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    return name


def load_mesh(path: Path) -> LoadedMesh:
    """Load a mesh file: OBJ with its materials and texture coordinates; STL and DAE (through trimesh) as one
    part whose colour is the file's material colour."""
    if path.suffix.lower() == ".obj":
        return _read_obj(path)
    import trimesh

    loaded = trimesh.load(str(path), force="mesh", process=False)
    rgba = (0.8, 0.8, 0.8, 1.0)
    material = getattr(loaded.visual, "material", None)
    if material is not None and getattr(material, "diffuse", None) is not None:
        rgba = tuple(float(c) / 255.0 for c in np.asarray(material.diffuse).reshape(-1)[:4])
    elif hasattr(loaded.visual, "face_colors") and getattr(loaded.visual, "kind", None) is not None:
        rgba = tuple(float(c) / 255.0 for c in np.asarray(loaded.visual.face_colors, np.float64).mean(0)[:4])
    mtl = ["newmtl part0", "Ka 1 1 1", "Kd {:.6g} {:.6g} {:.6g}".format(*rgba[:3]), f"d {rgba[3]:.6g}"]
    part = Part("part0", np.asarray(loaded.vertices, np.float64), None, np.asarray(loaded.faces, np.int64))
    return LoadedMesh([part], mtl)


def _decimate_part(part: Part, budget: int) -> Part:
    """Decimate one material part. Vertices are welded by position first (texture seams split them, and a
    decimation that sees every seam as a border tears the surface open); each kept vertex then takes the texture
    coordinate of one of the vertices collapsed into it."""
    import fast_simplification

    if len(part.faces) <= budget:
        return part
    welded, first, inverse = np.unique(part.vertices, axis=0, return_index=True, return_inverse=True)
    faces = inverse.reshape(-1)[part.faces].astype(np.int32)
    faces = faces[(faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & (faces[:, 0] != faces[:, 2])]
    _, _, collapses = fast_simplification.simplify(welded, faces, target_count=budget, return_collapses=True)
    points, new_faces, mapping = fast_simplification.replay_simplification(welded, faces, collapses)
    uv = None
    if part.uv is not None:
        welded_uv = part.uv[first]
        uv = np.zeros((len(points), 2))
        valid = mapping >= 0
        uv[mapping[valid]] = welded_uv[valid]
    return Part(part.material, np.asarray(points, np.float64), uv, np.asarray(new_faces, np.int64))


def decimate(mesh: LoadedMesh, budget: int) -> LoadedMesh:
    """Quadric edge-collapse decimation (fast-simplification) to about ``budget`` triangles in all, shared among
    the material parts in proportion to their size; materials and texture coordinates are kept."""
    total = mesh.triangles
    if total <= budget:
        return mesh
    parts = [_decimate_part(part, max(MIN_PART_TRIANGLES, round(budget * len(part.faces) / total)))
             for part in mesh.parts]
    return LoadedMesh([part for part in parts if len(part.faces)], mesh.mtl_lines)


def write_obj(mesh: LoadedMesh, path: Path) -> None:
    """Write an OBJ with its material library next to it, atomically."""
    lines = [f"# pixelrig simplified mesh ({mesh.triangles} triangles)", f"mtllib {path.stem}.mtl"]
    v_off = t_off = 0
    for part in mesh.parts:
        if part.material is not None:
            lines.append(f"usemtl {part.material}")
        lines += [f"v {x:.7g} {y:.7g} {z:.7g}" for x, y, z in part.vertices]
        if part.uv is not None:
            lines += [f"vt {u:.7g} {v:.7g}" for u, v in part.uv]
            lines += [f"f {a + v_off}/{a + t_off} {b + v_off}/{b + t_off} {c + v_off}/{c + t_off}"
                      for a, b, c in part.faces + 1]
            t_off += len(part.uv)
        else:
            lines += [f"f {a + v_off} {b + v_off} {c + v_off}" for a, b, c in part.faces + 1]
        v_off += len(part.vertices)
    _atomic_write(path.with_suffix(".mtl"), "\n".join(mesh.mtl_lines) + "\n")
    _atomic_write(path, "\n".join(lines) + "\n")


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def cached_simplified(path: Path, budget: int) -> Path | None:
    """The cached simplified OBJ of ``path`` for ``budget``, or None when it is missing or corrupt."""
    entry = cache_root() / "meshes" / mesh_key(path, budget)
    obj, meta = entry.with_suffix(".obj"), entry.with_suffix(".json")
    try:
        manifest = json.loads(meta.read_text())
        if hashlib.sha256(obj.read_bytes()).hexdigest() == manifest["obj_sha256"]:
            return obj
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def simplify_to_cache(path: Path, budget: int) -> Path:
    """Decimate ``path`` to ``budget`` triangles and store it in the cache (recomputing a corrupt entry)."""
    hit = cached_simplified(path, budget)
    if hit is not None:
        return hit
    entry = cache_root() / "meshes" / mesh_key(path, budget)
    obj = entry.with_suffix(".obj")
    simplified = decimate(load_mesh(path), budget)
    write_obj(simplified, obj)
    manifest = {"source": str(path), "budget": budget, "triangles": simplified.triangles,
                "obj_sha256": hashlib.sha256(obj.read_bytes()).hexdigest(), "algorithm": ALGORITHM}
    _atomic_write(entry.with_suffix(".json"), json.dumps(manifest))
    return obj


def mean_color(path: Path, fallback: tuple[float, ...] = (0.8, 0.8, 0.8, 1.0)) -> tuple[float, ...]:
    """Area-weighted mean RGBA a mesh shows (its texture sampled at the faces, times its material colour),
    cached like the meshes. Used to colour collision geometry drawn in its place."""
    entry = cache_root() / "meshes" / (mesh_key(path, 0) + "-colour.json")
    try:
        return tuple(json.loads(entry.read_text())["rgba"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        import trimesh

        loaded = trimesh.load(str(path), force="mesh", process=False)
        colors = np.asarray(loaded.visual.to_color().vertex_colors, dtype=np.float64)[:, :4] / 255.0
        area = np.asarray(loaded.area_faces, dtype=np.float64)
        face_colors = colors[np.asarray(loaded.faces)].mean(axis=1)
        rgba = tuple(float(c) for c in (face_colors * area[:, None]).sum(0) / max(area.sum(), 1e-12))
    except Exception:  # a mesh trimesh cannot colour: the caller's colour stands
        return fallback
    try:
        _atomic_write(entry, json.dumps({"rgba": rgba}))
    except OSError:
        pass
    return rgba
