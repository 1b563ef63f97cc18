"""Helper processes fed through shared memory (the window, the web page's server): starting handshake, stderr
tail, and stopping them with their shared blocks freed."""

from __future__ import annotations

import select
import subprocess
from multiprocessing import shared_memory
from typing import IO


def free_shared(shm: shared_memory.SharedMemory) -> None:
    """Close and unlink a shared block; a block already gone, or still viewed by numpy at exit, is no error."""
    try:
        shm.close()
    except BufferError:  # a numpy view still points into it (interpreter exit); the OS frees it with us
        pass
    try:
        shm.unlink()
    except FileNotFoundError:
        pass


def stop_child(proc: subprocess.Popen, buffers: list[shared_memory.SharedMemory], timeout: float) -> None:
    """Ask a helper process to quit ("quit" on its stdin), wait ``timeout`` seconds, kill it if it hangs; close its
    pipes and free (and forget) its shared blocks."""
    if proc.poll() is None:
        try:
            proc.stdin.write("quit\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError, ValueError):
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass
    for shm in buffers:
        free_shared(shm)
    buffers.clear()


def stderr_tail(log: IO[bytes], lines: int = 3) -> str:
    """The last non-empty lines a helper wrote to its stderr file, for error messages."""
    if log.closed:
        return "its stderr: closed"
    log.seek(0)
    text = [ln for ln in log.read().decode(errors="replace").splitlines() if ln.strip()]
    return "its stderr: " + (" | ".join(text[-lines:]) if text else "empty")


def wait_ready(proc: subprocess.Popen, log: IO[bytes], timeout: float, what: str) -> str:
    """Wait for a helper's "ready" line: returns "ready", or why it never came (naming ``what`` the helper is)."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        return f"{what} gave no sign of life in {timeout:.0f} s ({stderr_tail(log)})"
    line = proc.stdout.readline().strip()  # type: ignore[union-attr]
    if line == "ready":
        return line
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        code = None
    return f"{line or f'{what} exited'} (exit code {code}; {stderr_tail(log)})"
