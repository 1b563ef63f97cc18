"""Level of detail for what cameras see: load a model with simplified visual meshes, or with its collision
geometry drawn, while its physics (collision shapes, masses, inertias) stays exactly the file's.

``visual_detail``:

- ``"full"``: the file as it is.
- ``"simplified"``: every visual mesh above ``budget`` triangles is replaced by a decimated copy (see
  :mod:`pixelrig.envs.meshcache`) that keeps its materials, colours and texture.
- ``"collision"``: each link with collision geometry shows that geometry instead of its visuals, coloured with
  the mean colour of the visuals it replaces.

URDF and SDF files are rewritten into a copy (in the cache) whose mesh paths are absolute; collision elements
are copied unchanged, so pybullet builds the same collision shapes. MJCF files are loaded as they are: pybullet
makes every MJCF geom both a collision shape and a visual, so its visuals cannot change without changing its
physics.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pybullet_data

from pixelrig.envs import meshcache

VISUAL_DETAILS = ("full", "simplified", "collision")
DEFAULT_BUDGET = 100
"""Default triangle budget per visual mesh for "simplified"."""


def check_detail(detail: str, budget: int) -> None:
    """Validate ``visual_detail`` and ``visual_budget`` (ValueError naming the choices)."""
    if detail not in VISUAL_DETAILS:
        raise ValueError(f"visual_detail must be one of {VISUAL_DETAILS}: got {detail!r}")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 16:
        raise ValueError(f"visual_budget={budget!r} must be an integer >= 16 (triangles per visual mesh)")


def _resolve(reference: str, base: Path) -> Path | None:
    """A mesh reference as pybullet would find it: relative to the model file (``package://`` and ``model://``
    prefixes stripped, also searched in the folders above it), or in pybullet_data."""
    ref = reference
    for prefix in ("package://", "model://", "file://"):
        if ref.startswith(prefix):
            ref = ref[len(prefix):]
    candidate = Path(ref)
    if candidate.is_absolute():
        if candidate.is_file():
            return candidate
        ref = ref.lstrip("/")  # pybullet also reads "/meshes/x.stl" relative to the model file
    for folder in (base, *base.parents[:3], Path(pybullet_data.getDataPath())):
        if (folder / ref).is_file():
            return (folder / ref).resolve()
    return None


def _mesh_refs(root: ET.Element, kind: str) -> list[tuple[ET.Element, str, bool]]:
    """(element, attribute or '' for text, is_visual) of every mesh reference in a URDF or SDF tree."""
    refs = []
    for tag in ("visual", "collision"):
        for element in root.iter(tag):
            for mesh in element.iter("mesh"):
                if kind == "urdf" and "filename" in mesh.attrib:
                    refs.append((mesh, "filename", tag == "visual"))
                elif kind == "sdf":
                    uri = mesh.find("uri")
                    if uri is not None and uri.text:
                        refs.append((uri, "", tag == "visual"))
    return refs


def _get(element: ET.Element, attr: str) -> str:
    return element.get(attr, "") if attr else (element.text or "").strip()


def _set(element: ET.Element, attr: str, value: str) -> None:
    if attr:
        element.set(attr, value)
    else:
        element.text = value


_prepared: dict[tuple, Path] = {}


def prepare_model(path: Path, detail: str, budget: int = DEFAULT_BUDGET) -> Path:
    """The file to load for ``path`` at ``detail``: the file itself, or a rewritten copy in the cache.

    Simplified meshes missing from the cache are computed here, with a progress bar. The answer is remembered
    for the process (per file version), since worlds are rebuilt at every reset.
    """
    kind = {".urdf": "urdf", ".sdf": "sdf"}.get(path.suffix.lower())
    if detail == "full" or kind is None:
        return path
    stat = path.stat()
    memo = (str(path), detail, budget, stat.st_mtime_ns, stat.st_size, str(meshcache.cache_root()))
    if memo in _prepared and _entry_intact(_prepared[memo]):
        return _prepared[memo]
    _prepared[memo] = _prepare(path, kind, detail, budget)
    return _prepared[memo]


def _prepare(path: Path, kind: str, detail: str, budget: int) -> Path:
    text = path.read_bytes()
    root = ET.fromstring(text)
    refs = _mesh_refs(root, kind)
    resolved = {id(el): _resolve(_get(el, attr), path.parent) for el, attr, _ in refs}
    # The copy points at files outside the cache (collision meshes, textures, meshes under budget), so the key
    # holds where they are as well as what they hold: two installs of the same files get entries of their own.
    key = hashlib.sha256(text + f"{detail}:{budget}:{meshcache.ALGORITHM}:{path.resolve()}".encode())
    for el, _, _ in refs:
        if resolved[id(el)] is not None:
            key.update(f"{resolved[id(el)]}:{meshcache.mesh_key(resolved[id(el)], budget)}".encode())
    target = meshcache.cache_root() / "models" / key.hexdigest()[:32] / path.name
    if _entry_intact(target):
        return target
    visual_meshes = sorted({resolved[id(el)] for el, _, vis in refs if vis and resolved[id(el)] is not None})
    simplified: dict[Path, Path | None] = {}
    if detail == "simplified":
        simplified = {m: meshcache.cached_simplified(m, budget) for m in visual_meshes}
        todo = [m for m, hit in simplified.items() if hit is None]
        if todo:
            from tqdm import tqdm

            label = f"simplifying {len(todo)} meshes of {path.name} (cached for next time)"
            for mesh in tqdm(todo, desc=label, unit="mesh"):
                simplified[mesh] = meshcache.simplify_to_cache(mesh, budget)
    for el, attr, visual in refs:
        mesh = resolved[id(el)]
        if mesh is not None:
            _set(el, attr, str(simplified.get(mesh) or mesh if visual else mesh))
    if detail == "collision":
        _draw_collision(root, kind)
    _make_paths_absolute(root, path.parent)
    target.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(_refs_file(target), json.dumps(sorted(_referenced_files(root, kind))).encode())
    _atomic_write(target, ET.tostring(root, encoding="utf-8", xml_declaration=True))  # last: marks it complete
    return target


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _refs_file(target: Path) -> Path:
    return target.with_name(target.name + ".refs.json")


def _referenced_files(root: ET.Element, kind: str) -> set[str]:
    """Every file a rewritten model names (meshes, simplified meshes, textures): all absolute by now."""
    files = {_get(el, attr) for el, attr, _ in _mesh_refs(root, kind)}
    files |= {t.get("filename", "") for t in root.iter("texture")}
    return {f for f in files if f and os.path.isabs(f)}


def _entry_intact(target: Path) -> bool:
    """Whether a cached model copy exists and every file it names is still there (an install it points into
    may have been deleted since); a broken entry is rebuilt, never loaded."""
    try:
        refs = json.loads(_refs_file(target).read_bytes())
    except (OSError, ValueError):
        return False
    return target.is_file() and isinstance(refs, list) and all(os.path.isfile(f) for f in refs)


def _make_paths_absolute(root: ET.Element, base: Path) -> None:
    """URDF material textures must still be found from the copy's folder."""
    for texture in root.iter("texture"):
        ref = texture.get("filename")
        if ref:
            found = _resolve(ref, base)
            if found is not None:
                texture.set("filename", str(found))


def _visual_color(visual: ET.Element, kind: str, materials: dict[str, tuple[float, ...]]) -> tuple[float, ...]:
    """The colour a visual shows: its material colour times its mesh's mean colour."""
    rgba = (1.0, 1.0, 1.0, 1.0)
    if kind == "urdf":
        material = visual.find("material")
        if material is not None:
            color = material.find("color")
            if color is not None and color.get("rgba"):
                rgba = tuple(float(v) for v in color.get("rgba", "").split())
            elif material.get("name") in materials:
                rgba = materials[material.get("name", "")]
    else:
        diffuse = visual.find("material/diffuse")
        if diffuse is not None and diffuse.text:
            rgba = tuple(float(v) for v in diffuse.text.split())
    mesh = visual.find("geometry/mesh")
    if mesh is not None:
        ref = mesh.get("filename") if kind == "urdf" else (mesh.findtext("uri") or "")
        if ref and Path(ref).is_file():
            tone = meshcache.mean_color(Path(ref))
            rgba = tuple(a * b for a, b in zip(rgba, tone, strict=False))
    return tuple(list(rgba) + [1.0] * (4 - len(rgba)))[:4]


def _draw_collision(root: ET.Element, kind: str) -> None:
    """Replace each link's visuals by copies of its collision geometry, coloured like the visuals were."""
    materials = {}
    for material in root.findall("material"):
        color = material.find("color")
        if material.get("name") and color is not None and color.get("rgba"):
            materials[material.get("name", "")] = tuple(float(v) for v in color.get("rgba", "").split())
    for link in root.iter("link"):
        collisions = link.findall("collision")
        visuals = link.findall("visual")
        if not collisions:
            continue  # a link without collision geometry keeps its visuals
        colors = [_visual_color(v, kind, materials) for v in visuals]
        rgba = tuple(sum(c[i] for c in colors) / len(colors) for i in range(4)) if colors else (0.8,) * 3 + (1,)
        for visual in visuals:
            link.remove(visual)
        for i, collision in enumerate(collisions):
            visual = ET.SubElement(link, "visual")
            if kind == "sdf":
                visual.set("name", f"pixelrig_collision_visual_{i}")
            for child in ("origin", "pose", "geometry"):
                element = collision.find(child)
                if element is not None:
                    visual.append(copy.deepcopy(element))
            text = " ".join(f"{c:.4g}" for c in rgba)
            if kind == "urdf":
                material = ET.SubElement(visual, "material", name=f"pixelrig_lod_{link.get('name')}_{i}")
                ET.SubElement(material, "color", rgba=text)
            else:
                material = ET.SubElement(visual, "material")
                ET.SubElement(material, "ambient").text = text
                ET.SubElement(material, "diffuse").text = text
