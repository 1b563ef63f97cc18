"""How a vector env reports its worker processes' failures: an exception with the worker's traceback, and which
workers died with which exit codes and what their stderr said last."""

from __future__ import annotations

import time
from collections.abc import Sequence

from pixelrig.system.process import Helper


def worker_error(index: int, exctype: type, value: object, trace: str) -> BaseException:
    """The exception a worker's failure raises in the main process: its own type where that type takes a message,
    with the worker's traceback in the message."""
    message = f"make_vec worker {index} failed: {exctype.__name__}: {value}\n--- worker traceback ---\n{trace}"
    try:
        return exctype(message)
    except Exception:  # an exception type that takes other arguments
        return RuntimeError(message)


def dead_workers(workers: Sequence[Helper], wait: float = 2.0) -> str:
    """Which worker processes have exited, with their exit codes and the end of their stderr (waiting up to ``wait``
    s for one to be reaped)."""
    deadline = time.monotonic() + wait  # a worker whose connection closed is still being reaped
    while time.monotonic() < deadline and all(w.poll() is None for w in workers):
        time.sleep(0.05)
    dead = [f"worker {i} (exit code {w.poll()}), {w.stderr_tail()}" for i, w in enumerate(workers)
            if w.poll() is not None]
    return "; ".join(dead) or "no worker has exited yet"
