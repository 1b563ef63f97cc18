"""Choosing a render backend: ``renderer=`` / ``PIXELRIG_RENDERER``, a subprocess EGL probe, and its cache.

``auto`` picks EGL only where a hardware (not llvmpipe/softpipe) EGL device works, and TinyRenderer otherwise:
on CPU-only machines TinyRenderer is several times faster at RL image sizes than EGL on Mesa.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from pixelrig.render.backends import (
    RENDERER_CHOICES,
    RenderBackend,
    RendererUnavailable,
    active_egl_client,
    backend_class,
    egl_plugin_path,
    parse_gl_info,
)

ENV_VAR = "PIXELRIG_RENDERER"
_CACHE_VAR = "_PIXELRIG_EGL_PROBE"  # the probe's answer, inherited by child processes (vector env workers)
_PROBE_SCRIPT = Path(__file__).with_name("_egl_probe_main.py")
_SOFTWARE_GL = re.compile(r"llvmpipe|softpipe|swrast|software", re.IGNORECASE)


@dataclass(frozen=True)
class EglProbe:
    """What the EGL probe found.

    Attributes:
        ok: the plugin loaded and drew a correct test frame.
        hardware: the GL renderer is a real GPU (not Mesa llvmpipe/softpipe).
        vendor: GL_VENDOR string reported by the plugin.
        renderer: GL_RENDERER string reported by the plugin.
        version: GL_VERSION string.
        detail: why it failed, with the tail of the probe's output; empty when ok.
        key: the EGL-related environment variables the probe ran under (the cache key).
    """

    ok: bool
    hardware: bool
    vendor: str = ""
    renderer: str = ""
    version: str = ""
    detail: str = ""
    key: str = ""


_cache: dict[str, EglProbe] = {}
_KEY_VARS = ("EGL_VISIBLE_DEVICES", "__EGL_VENDOR_LIBRARY_FILENAMES", "__EGL_VENDOR_LIBRARY_DIRS", "EGL_PLATFORM")


def _probe_key() -> str:
    """The environment variables that change what EGL finds, as one string (the cache key)."""
    return ";".join(f"{v}={os.environ[v]}" for v in _KEY_VARS if v in os.environ)


def probe_egl(*, refresh: bool = False, timeout: float = 120.0) -> EglProbe:
    """Find out, in a child process, whether pybullet's EGL plugin works here. Cached per process.

    The plugin calls ``exit()`` when EGL is missing, so it is never tried in this process first. The answer is
    also exported in an environment variable so that worker processes started later inherit it without
    probing again.

    Args:
        refresh: ignore the cached answer and probe again.
        timeout: seconds before the probe is declared hung.
    """
    key = _probe_key()
    if not refresh:
        if key in _cache:
            return _cache[key]
        inherited = os.environ.get(_CACHE_VAR)
        if inherited:
            try:
                probe = EglProbe(**json.loads(inherited))
            except (TypeError, ValueError):
                probe = None
            if probe is not None and probe.key == key:
                _cache[key] = probe
                return probe
    probe = _run_probe(key, timeout)
    _cache[key] = probe
    os.environ[_CACHE_VAR] = json.dumps(asdict(probe))
    return probe


def _run_probe(key: str, timeout: float) -> EglProbe:
    if egl_plugin_path() is None:
        return EglProbe(False, False, detail="this pybullet build has no eglRenderer plugin module", key=key)
    try:
        proc = subprocess.run(
            [sys.executable, "-P", str(_PROBE_SCRIPT)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=os.environ.copy(),
        )
    except subprocess.TimeoutExpired:
        return EglProbe(False, False, detail=f"the probe process hung for {timeout:.0f} s", key=key)
    out = proc.stdout + proc.stderr
    gl = parse_gl_info(proc.stdout)
    result: dict = {}
    for line in proc.stdout.splitlines():
        if line.startswith("PIXELRIG_PROBE "):
            result = json.loads(line[len("PIXELRIG_PROBE ") :])
    tail = " | ".join(line for line in out.strip().splitlines()[-6:] if line.strip())
    if not result:
        detail = (f"the EGL plugin ended the probe process with exit code {proc.returncode}; "
                  f"its output: {tail.rstrip('.')}")
        return EglProbe(False, False, detail=detail, key=key)
    ok = bool(result.get("ok"))
    renderer = gl.get("renderer", "")
    return EglProbe(
        ok=ok,
        hardware=ok and bool(renderer) and not _SOFTWARE_GL.search(renderer),
        vendor=gl.get("vendor", ""),
        renderer=renderer,
        version=gl.get("version", ""),
        detail="" if ok else f"{result.get('error', 'unknown failure')}; output: {tail}",
        key=key,
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


def resolve_renderer(renderer: str | None = None) -> str:
    """Resolve a renderer request to the backend that will run: 'tiny' or 'egl'.

    Args:
        renderer: 'auto', 'tiny', 'egl', or None for ``PIXELRIG_RENDERER`` (default 'auto').

    Raises:
        ValueError: the request is not one of ('auto', 'tiny', 'egl').
        RendererUnavailable: 'egl' was requested and the probe failed; the message says what was tried.
    """
    value = requested_renderer(renderer)
    if value == "tiny":
        return "tiny"
    if value == "gl":
        gl = probe_gl()
        if not gl.get("ok"):
            raise RendererUnavailable(
                f"renderer 'gl' is unavailable: {gl.get('error', 'unknown failure')}. "
                f"Use renderer='tiny' (or {ENV_VAR}=tiny)."
            )
        return "gl"
    if value == "egl":
        probe = probe_egl()
        if not probe.ok:
            raise RendererUnavailable(
                f"renderer 'egl' is unavailable: tried pybullet's EGL plugin ({egl_plugin_path()}) in a probe "
                f"subprocess (environment: {probe.key or 'no EGL variables set'}): {probe.detail}. Install an EGL "
                "driver (Debian: libegl1 libegl-mesa0 libgl1-mesa-dri, or the NVIDIA driver), or use "
                f"renderer='tiny' ({ENV_VAR}=tiny)."
            )
        return "egl"
    probe = probe_egl()
    if probe.ok and probe.hardware:
        if active_egl_client() is not None:
            warnings.warn(
                "renderer='auto': this process already has an EGL client (one per process), so this environment "
                "uses 'tiny'. Run EGL environments in separate processes to give each the GPU.",
                stacklevel=2,
            )
            return "tiny"
        return "egl"
    return "tiny"


_GL_PROBE_SCRIPT = Path(__file__).with_name("_gl_probe_main.py")
_GL_CACHE_VAR = "_PIXELRIG_GL_PROBE"  # the gl probe's answer, inherited by child processes
_gl_cache: dict[str, dict] = {}


def probe_gl(*, refresh: bool = False, timeout: float = 60.0) -> dict:
    """Find out, in a child process, whether the gl renderer can get an OpenGL 4.3 EGL context. Cached per process.

    Returns:
        ``{"ok": bool, "vendor", "renderer", "version"}`` or ``{"ok": False, "error": why}``.
    """
    key = _probe_key()
    if not refresh:
        if key in _gl_cache:
            return _gl_cache[key]
        inherited = os.environ.get(_GL_CACHE_VAR)
        if inherited:
            try:
                cached = json.loads(inherited)
            except ValueError:
                cached = None
            if isinstance(cached, dict) and cached.get("key") == key:
                _gl_cache[key] = cached
                return cached
    try:
        proc = subprocess.run([sys.executable, "-P", str(_GL_PROBE_SCRIPT)], capture_output=True, text=True,
                              timeout=timeout, env=os.environ.copy())
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("PIXELRIG_GL_PROBE ")]
        if lines:
            result = json.loads(lines[-1][len("PIXELRIG_GL_PROBE "):])
        else:
            tail = " | ".join(ln for ln in (proc.stdout + proc.stderr).strip().splitlines()[-6:] if ln.strip())
            result = {"ok": False, "error": f"the probe process died with exit code {proc.returncode} ({tail})"}
    except subprocess.TimeoutExpired:
        result = {"ok": False, "error": f"the probe process hung for {timeout:.0f} s"}
    result["key"] = key
    _gl_cache[key] = result
    os.environ[_GL_CACHE_VAR] = json.dumps(result)
    return result


def make_backend(renderer: str | None, client: int) -> RenderBackend:
    """Resolve ``renderer`` and create that backend for ``client`` (call right after ``connect``)."""
    return backend_class(resolve_renderer(renderer))(client)
