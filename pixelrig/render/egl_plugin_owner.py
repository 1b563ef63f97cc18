"""Which pybullet client of this process holds pybullet's EGL plugin (at most one may: a second one would draw
another scene's geometry, and the gl renderer's context cannot start beside it)."""

from __future__ import annotations

import os
import threading

LOCK = threading.Lock()
"""Held while the plugin is claimed or given back."""

_owner: tuple[int, int] | None = None  # (pid, client) of the live EGL backend of this process


def active_egl_client() -> int | None:
    """The client id of this process's live EGL backend, or None."""
    owner = _owner
    return owner[1] if owner is not None and owner[0] == os.getpid() else None


def set_egl_client(client: int | None) -> None:
    """Record that ``client`` now holds the plugin (None: nobody). Call with :data:`LOCK` held."""
    global _owner
    _owner = None if client is None else (os.getpid(), client)
