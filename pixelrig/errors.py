"""Every public exception pixelrig raises of its own, in one place (importable as ``pixelrig.<Name>``).

Nothing here imports anything: a module of any layer (and the display's child processes) may import it.
"""

from __future__ import annotations


class RendererUnavailable(RuntimeError):
    """The requested render backend cannot run here. The message lists what was tried and the fix."""


class DisplayUnavailable(RuntimeError):
    """No window can be opened here. The message names the fix."""


class PortInUseError(OSError):
    """The port asked for is taken. The message names the fix (port=0, or another port)."""


class DatasetExistsError(FileExistsError):
    """A dataset (or another file) is already at the path and neither ``overwrite`` nor ``resume`` was given."""


class DatasetWriteError(OSError):
    """Writing the dataset failed (disk full, no permission, read-only file system, ...). Episodes finished
    before the failure are intact; the message says what failed and how to go on."""


class ReplayWorkerError(RuntimeError):
    """A replay worker process died, or could not start (the message says which, and what it was doing)."""


class PolicyError(RuntimeError):
    """A policy under evaluation raised, or returned an action of the wrong shape or a non-finite one. The message
    names the factor, the seed and the step; the episodes finished before are kept (resume goes on)."""


__all__ = ["DatasetExistsError", "DatasetWriteError", "DisplayUnavailable", "PolicyError", "PortInUseError",
           "RendererUnavailable", "ReplayWorkerError"]
