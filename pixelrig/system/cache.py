"""pixelrig's cache folder: ``$PIXELRIG_CACHE_DIR``, else ``$XDG_CACHE_HOME/pixelrig``, else ``~/.cache/pixelrig``
(renderer probe answers, simplified meshes); a private temporary folder, with a warning, when it is not writable."""

from __future__ import annotations

import functools
import os
import tempfile
import warnings
from pathlib import Path

_fallback_dir: Path | None = None


def cache_root() -> Path:
    """The cache folder, created. Its writability is checked once per process for each configured folder."""
    configured = os.environ.get("PIXELRIG_CACHE_DIR") or (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pixelrig"
    )
    root = _checked_root(str(configured))
    root.mkdir(parents=True, exist_ok=True)  # cheap; recreates a folder deleted meanwhile
    return root


@functools.lru_cache(maxsize=8)
def _checked_root(configured: str) -> Path:
    global _fallback_dir
    root = Path(configured)
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        return root
    except OSError as exc:
        if _fallback_dir is None:
            _fallback_dir = Path(tempfile.mkdtemp(prefix="pixelrig-cache-"))
            warnings.warn(f"pixelrig: cache folder {root} is not writable ({exc}); using {_fallback_dir} for this "
                          "process (set PIXELRIG_CACHE_DIR to a writable folder)", stacklevel=4)
        return _fallback_dir
