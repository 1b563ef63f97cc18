"""Every public exception pixelrig raises of its own, in one place (importable as ``pixelrig.<Name>``), and the one
check of a whole-number argument that every room's bad-input messages share.

Nothing here imports anything: a module of any layer (and the display's child processes) may import it.
"""

from __future__ import annotations

from typing import Any


def whole_number(name: str, value: Any, least: int) -> int:
    """``value`` if it is an int (not a bool) of at least ``least``.

    Raises:
        ValueError: naming ``name``, the value and the bound ("episodes=0 must be a whole number >= 1").
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name}={value!r} must be a whole number >= {least}")
    return value


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


class HelperFailed(RuntimeError):
    """A helper process that could not start, died, or gave no answer in time.

    Attributes:
        summary: the message's first line (without the child's traceback).
        what: the helper, as messages name it (e.g. "the window process").
        exit_code: its exit code (negative: killed by that signal), None while it runs.
        stderr: the end of its stderr, as :meth:`pixelrig.system.process.Helper.stderr_tail` words it.
        error: the exception it raised while starting (None when it died or hung), as it was raised there.
        trace: its traceback text ("" when it died or hung).
    """

    def __init__(self, message: str, *, what: str, exit_code: int | None = None, stderr: str = "",
                 error: BaseException | None = None, trace: str = "") -> None:
        super().__init__(message)
        self.summary = message.splitlines()[0] if message else ""
        self.what, self.exit_code, self.stderr, self.error, self.trace = what, exit_code, stderr, error, trace


class PolicyError(RuntimeError):
    """A policy under evaluation raised, or returned an action of the wrong shape or a non-finite one. The message
    names the factor, the seed and the step; the episodes finished before are kept (resume goes on)."""


__all__ = ["DatasetExistsError", "DatasetWriteError", "DisplayUnavailable", "HelperFailed", "PolicyError",
           "PortInUseError", "RendererUnavailable", "ReplayWorkerError"]
