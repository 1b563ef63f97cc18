"""Choosing a render backend: ``renderer=`` / ``PIXELRIG_RENDERER``, probes of what works here, and their cache.

``auto`` picks the fastest renderer that works on the machine: pixelrig's own ``gl`` wherever it gets an OpenGL
4.3 EGL context (measured on this project's 2-core CPU machines: 3-5x TinyRenderer for one env's 3-camera rig
and 5-6x batched, see the README's benchmark), else pybullet's EGL plugin on a hardware GPU, else TinyRenderer.
Both GL probes run in a child process (pybullet's EGL plugin calls ``exit()`` on failure, and a GL driver may
crash its process); their answers are cached per process, inherited by child processes, and kept on disk per
driver installation, so that a new process does not probe again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import warnings
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from pixelrig.errors import HelperFailed, RendererUnavailable
from pixelrig.render.backends import RenderBackend
from pixelrig.render.egl import egl_plugin_path, parse_gl_info
from pixelrig.render.egl_plugin_owner import active_egl_client
from pixelrig.render.registry import RENDERER_CHOICES, backend_class, entry
from pixelrig.system.cache import cache_root
from pixelrig.system.process import Helper

ENV_VAR = "PIXELRIG_RENDERER"
_INHERITED_VAR = "_PIXELRIG_PROBES"  # the probes' answers, inherited by child processes (vector env workers)
_SCRIPTS = {"egl": "pixelrig.render.probe_main", "gl": "pixelrig.render.probe_main"}  # each probe's child module
_SOFTWARE_GL = re.compile(r"llvmpipe|softpipe|swrast|software", re.IGNORECASE)
_KEY_VARS = ("EGL_VISIBLE_DEVICES", "__EGL_VENDOR_LIBRARY_FILENAMES", "__EGL_VENDOR_LIBRARY_DIRS", "EGL_PLATFORM",
             "CUDA_VISIBLE_DEVICES", "MESA_LOADER_DRIVER_OVERRIDE", "LIBGL_ALWAYS_SOFTWARE")
_VENDOR_DIRS = ("/usr/share/glvnd/egl_vendor.d", "/etc/glvnd/egl_vendor.d")
_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")


@dataclass(frozen=True)
class RendererProbe:
    """What a probe of a GL renderer found.

    Attributes:
        kind: "egl" (pybullet's EGL plugin) or "gl" (pixelrig's own renderer on a moderngl EGL context).
        ok: the renderer started and drew a correct test frame.
        hardware: the GL renderer is a real GPU (not Mesa llvmpipe/softpipe).
        vendor: GL_VENDOR string.
        renderer: GL_RENDERER string.
        version: GL_VERSION string.
        detail: why it failed, with the tail of the probe's output; empty when ok.
        key: the cache key: the variables the probe ran under and a fingerprint of the drivers.
    """

    kind: str
    ok: bool
    hardware: bool
    vendor: str = ""
    renderer: str = ""
    version: str = ""
    detail: str = ""
    key: str = ""


_cache: dict[str, RendererProbe] = {}


def _environment() -> str:
    """The environment variables that change what a GL probe finds, as one string."""
    return ";".join(f"{v}={os.environ[v]}" for v in _KEY_VARS if v in os.environ)


def _probe_key(kind: str) -> str:
    """The cache key of a probe: its kind, :func:`_environment` and a fingerprint of the installed EGL drivers."""
    return f"{kind};{_environment()};{_driver_fingerprint()}"


def _driver_fingerprint() -> str:
    """A hash of what decides whether GL works here: this Python, pybullet's and moderngl's versions, the EGL
    vendor files and the driver libraries they name (their size and modification time)."""
    parts = [sys.executable]
    for package in ("pybullet", "moderngl", "glcontext"):
        try:
            parts.append(f"{package}={version(package)}")
        except PackageNotFoundError:
            parts.append(f"{package}=none")
    dirs = [*_VENDOR_DIRS, *os.environ.get("__EGL_VENDOR_LIBRARY_DIRS", "").split(":")]
    for folder in filter(None, dirs):
        for path in sorted(Path(folder).glob("*.json")):
            try:
                text = path.read_text()
                library = json.loads(text).get("ICD", {}).get("library_path", "")
            except (OSError, ValueError, AttributeError):
                continue
            parts.append(text)
            for lib_dir in _LIB_DIRS:
                lib = Path(library) if os.path.isabs(library) else Path(lib_dir) / library
                if lib.exists():
                    st = lib.stat()
                    parts.append(f"{lib}:{st.st_size}:{st.st_mtime_ns}")
                    break
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _disk_cache() -> Path:
    return cache_root() / "renderer-probes.json"


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _from_dict(data: object, key: str) -> RendererProbe | None:
    try:
        probe = RendererProbe(**data)  # type: ignore[arg-type]
    except TypeError:
        return None
    return probe if probe.key == key else None


def probe(kind: str, *, refresh: bool = False, timeout: float = 120.0) -> RendererProbe:
    """Find out, in a child process, whether renderer ``kind`` ("egl" or "gl") works here.

    The answer is cached for this process, exported to child processes in an environment variable, and, when it
    worked, kept on disk under the cache folder keyed by the driver fingerprint (a failure is probed again by the
    next process: it may have been a passing one).

    Args:
        kind: "egl" or "gl".
        refresh: ignore every cached answer and probe again.
        timeout: seconds before the probe is declared hung.
    """
    if kind not in _SCRIPTS:
        raise ValueError(f"probe kind must be one of {tuple(_SCRIPTS)}: got {kind!r}")
    key = _probe_key(kind)
    if not refresh:
        found = _cache.get(key)
        if found is None:
            inherited = os.environ.get(_INHERITED_VAR, "")
            found = _from_dict(json.loads(inherited).get(key) if inherited.startswith("{") else None, key) \
                or _from_dict(_read_json(_disk_cache()).get(key), key)
        if found is not None:
            _remember(found)
            return found
    result = _run_probe(kind, key, timeout)
    _remember(result)
    if result.ok:
        try:
            stored = _read_json(_disk_cache())
            stored[key] = asdict(result)
            tmp = _disk_cache().with_name(f".probes.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(stored, indent=1))
            os.replace(tmp, _disk_cache())
        except OSError:
            pass  # an unwritable cache only costs the next process a probe
    return result


def _remember(result: RendererProbe) -> None:
    _cache[result.key] = result
    inherited = os.environ.get(_INHERITED_VAR, "")
    known = json.loads(inherited) if inherited.startswith("{") else {}
    known[result.key] = asdict(result)
    os.environ[_INHERITED_VAR] = json.dumps(known)


def draws_here(kind: str) -> bool:
    """Whether the backend ``kind`` (a key of :data:`~pixelrig.render.registry.BACKENDS`) can draw here: probed in a
    child process (:func:`probe`) where it needs one, always for one that needs none (TinyRenderer).

    Raises:
        ValueError: not a backend's name.
    """
    entry(kind)
    return kind not in _SCRIPTS or probe(kind).ok


def probe_egl(*, refresh: bool = False, timeout: float = 120.0) -> RendererProbe:
    """Whether pybullet's EGL plugin works here (see :func:`probe`)."""
    return probe("egl", refresh=refresh, timeout=timeout)


def probe_gl(*, refresh: bool = False, timeout: float = 120.0) -> RendererProbe:
    """Whether pixelrig's gl renderer gets an OpenGL 4.3 EGL context here (see :func:`probe`)."""
    return probe("gl", refresh=refresh, timeout=timeout)


def _run_probe(kind: str, key: str, timeout: float) -> RendererProbe:
    if kind == "egl" and egl_plugin_path() is None:
        return RendererProbe(kind, False, False, detail="this pybullet build has no eglRenderer plugin module",
                             key=key)
    try:
        helper = Helper.start(_SCRIPTS[kind], {"probe": kind}, what=f"the {kind} probe process", timeout=timeout)
    except HelperFailed as exc:  # the EGL plugin's exit(), a crashed driver, a hang: why is in the message
        return RendererProbe(kind, False, False, detail=exc.summary, key=key)
    helper.stop(5.0)
    result = dict(helper.payload)
    output = str(result.pop("output", ""))
    info = parse_gl_info(output) if kind == "egl" else result
    ok, name = bool(result.get("ok")), info.get("renderer", "")
    printed = " | ".join(line for line in output.strip().splitlines()[-6:] if line.strip())
    said = f"its output: {printed}" if printed else helper.stderr_tail()
    return RendererProbe(
        kind, ok, hardware=ok and bool(name) and not _SOFTWARE_GL.search(name), vendor=info.get("vendor", ""),
        renderer=name, version=info.get("version", ""),
        detail="" if ok else f"{result.get('error', 'unknown failure')}; {said}", key=key,
    )


def requested_renderer(renderer: str | None = None) -> str:
    """The renderer asked for: the argument, else ``PIXELRIG_RENDERER``, else 'auto'. Validated."""
    if renderer is None:
        value = os.environ.get(ENV_VAR, "").strip() or "auto"
        source = f"{ENV_VAR} environment variable"
    else:
        value = renderer
        source = "renderer"
    if value not in RENDERER_CHOICES:
        raise ValueError(f"{source} must be one of {RENDERER_CHOICES}: got {value!r}")
    return value


def choose_auto() -> tuple[str, str]:
    """What ``renderer="auto"`` resolves to here, and why (one sentence)."""
    gl = probe_gl()
    if gl.ok:
        return "gl", (f"pixelrig's gl renderer works here ({gl.renderer}); it is the fastest renderer measured "
                      "(3-5x TinyRenderer for one env's rig on a CPU, more batched)")
    egl = probe_egl()
    if egl.ok and egl.hardware:
        if active_egl_client() is not None:
            return "tiny", ("gl is unavailable and this process already has an EGL client (one per process): "
                            "TinyRenderer")
        return "egl", f"gl is unavailable ({gl.detail}); pybullet's EGL plugin runs on a GPU here ({egl.renderer})"
    why = "no hardware EGL device" if egl.ok else f"EGL: {egl.detail}"
    return "tiny", f"gl is unavailable ({gl.detail}) and {why}: TinyRenderer, which always works"


def resolve_renderer(renderer: str | None = None) -> str:
    """Resolve a renderer request to the backend that will run: 'tiny', 'egl' or 'gl'.

    Args:
        renderer: any of :data:`~pixelrig.render.registry.RENDERER_CHOICES`, or None for ``PIXELRIG_RENDERER``
            (default 'auto').

    Raises:
        ValueError: the request is not one of :data:`~pixelrig.render.registry.RENDERER_CHOICES`.
        RendererUnavailable: 'egl' or 'gl' was requested and its probe failed; the message says what was tried.
    """
    value = requested_renderer(renderer)
    if value == "tiny":
        return "tiny"
    if value in ("gl", "egl"):
        found = probe(value)
        if not found.ok:
            tried = ("a moderngl OpenGL 4.3 EGL context" if value == "gl"
                     else f"pybullet's EGL plugin ({egl_plugin_path()})")
            raise RendererUnavailable(
                f"renderer {value!r} is unavailable: tried {tried} in a probe subprocess (environment: "
                f"{_environment() or 'no EGL variables set'}): {found.detail}. Install an EGL driver (Debian: libegl1 "
                f"libegl-mesa0 libgl1-mesa-dri, or the NVIDIA driver), or use renderer='tiny' ({ENV_VAR}=tiny)."
            )
        return value
    kind, why = choose_auto()
    if kind == "tiny" and "EGL client" in why:
        warnings.warn(f"renderer='auto': {why}. Run EGL environments in separate processes.", stacklevel=2)
    return kind


def make_backend(renderer: str | None, client: int) -> RenderBackend:
    """Resolve ``renderer`` and create that backend for ``client`` (call right after ``connect``)."""
    return backend_class(resolve_renderer(renderer))(client)
