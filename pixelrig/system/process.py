"""Starting every helper process the same way (the window, the web-page server, the renderer probes, the EGL device
listing, dataset replay and collect workers, vector-env workers), with one ready/stop handshake.

A helper is ``python -P -m <module>``: a fresh interpreter (never a fork of this one's pybullet and GL state, and,
unlike ``multiprocessing``'s spawn, it never imports the caller's ``__main__`` again, so a script needs no
``if __name__ == "__main__":`` guard). ``PYTHONPATH`` is set to this process's ``sys.path``, so that the user's
modules and an uninstalled pixelrig import there as they do here (the child restores the user's own ``PYTHONPATH``
for whatever it starts in turn). The two talk over a socket pair, each end a
:class:`multiprocessing.connection.Connection` (pickled messages); the child's end is inherited and named by the
``PIXELRIG_HELPER_FD`` environment variable.

The handshake:

1. the parent sends ``config`` (anything that pickles; secrets travel here, never in argv);
2. the child answers once: ``("ready", payload)``, or ``("error", traceback text, the exception)`` when it could not
   start; a child that dies, errs or gives no answer in time is a :class:`HelperFailed` naming the helper, its exit
   code and the end of its stderr;
3. then each helper speaks its own messages on the same connection;
4. to stop, the parent closes its end: the child sees end-of-input (as when the parent dies) and exits;
   :meth:`Helper.stop` waits for it, kills it if it hangs, and frees the shared memory blocks the helper was given.

The child's side is :func:`serve` (with :func:`ready`): ``serve(main)`` at the bottom of the child module.
"""

from __future__ import annotations

import collections
import contextlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from multiprocessing import resource_tracker, shared_memory
from multiprocessing.connection import Connection
from typing import IO, Any, NoReturn

from pixelrig.errors import HelperFailed

FD_VAR = "PIXELRIG_HELPER_FD"
"""The environment variable naming the child's end of the connection (a file descriptor number)."""
_PATH_VAR = "PIXELRIG_HELPER_PYTHONPATH"  # the caller's own PYTHONPATH, restored in the child (absent: it was unset)
_POLL_S = 0.2  # how often a wait checks that the child is still alive
_TAIL_LINES = 40  # stderr lines a "tee" helper keeps for error messages

STDERR_MODES = ("capture", "tee")
STDOUT_MODES = ("null", "inherit")


def free_shared(shm: shared_memory.SharedMemory) -> None:
    """Close and unlink a shared block; a block already gone, or still viewed by numpy at exit, is no error."""
    with contextlib.suppress(BufferError):  # a numpy view still points into it (interpreter exit): the OS frees it
        shm.close()
    with contextlib.suppress(FileNotFoundError):
        shm.unlink()


def attach_shared(name: str) -> shared_memory.SharedMemory:
    """Attach, in a helper, a shared block its parent created and owns (and frees): this process's resource tracker
    must not unlink it at exit."""
    if sys.version_info >= (3, 13):
        return shared_memory.SharedMemory(name=name, track=False)
    shm = shared_memory.SharedMemory(name=name)
    resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]  # the parent owns it
    return shm


def _python_path() -> str:
    """This process's ``sys.path`` as a ``PYTHONPATH`` value: existing entries, "" (the current folder) made
    absolute."""
    entries = []
    for entry in sys.path:
        path = os.path.abspath(entry or os.getcwd())
        if os.path.exists(path) and path not in entries:
            entries.append(path)
    return os.pathsep.join(entries)


class _State:
    """What stopping a helper needs (kept apart from :class:`Helper` so that its finalizer holds no reference to
    it)."""

    def __init__(self, proc: subprocess.Popen, conn: Connection, log: IO[bytes] | None,
                 tail: collections.deque[bytes] | None, thread: threading.Thread | None,
                 shared: list[shared_memory.SharedMemory]) -> None:
        self.proc, self.conn, self.log, self.tail, self.thread, self.shared = proc, conn, log, tail, thread, shared
        self.final_tail: list[str] | None = None  # the stderr lines, kept once the helper is stopped

    def stderr_lines(self) -> list[str]:
        if self.final_tail is not None:
            return self.final_tail
        if self.tail is not None:
            if self.proc.poll() is not None and self.thread is not None:
                self.thread.join(1.0)  # the last lines of a dead helper are still on their way
            data = b"".join(list(self.tail))
        elif self.log is not None and not self.log.closed:  # read without moving the offset the child writes at
            fd = self.log.fileno()
            data = os.pread(fd, os.fstat(fd).st_size, 0)
        else:
            data = b""
        return [ln for ln in data.decode(errors="replace").splitlines() if ln.strip()]

    def close_connection(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()

    def finish(self, deadline: float) -> None:
        """Wait for the process until ``deadline`` (kill it then), keep its stderr's end, free what it held."""
        self.close_connection()
        try:
            self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.final_tail is None:
            self.final_tail = self.stderr_lines()
        if self.thread is not None:
            self.thread.join(1.0)
        if self.log is not None:
            self.log.close()
        for shm in self.shared:
            free_shared(shm)
        self.shared.clear()


def _stop_states(states: Sequence[_State], timeout: float) -> None:
    for state in states:  # every child is asked first, so that they stop side by side
        state.close_connection()
    deadline = time.monotonic() + timeout
    for state in states:
        state.finish(deadline)


def _copy_lines(pipe: IO[bytes], tail: collections.deque[bytes]) -> None:
    """A "tee" helper's stderr: shown here as it comes, its end kept for error messages."""
    for line in iter(pipe.readline, b""):
        tail.append(line)
        if sys.stderr is not None:
            try:
                sys.stderr.write(line.decode(errors="replace"))
                sys.stderr.flush()
            except (OSError, ValueError):
                pass  # our own stderr is gone (closed at exit): the tail still has the line
    pipe.close()


class Helper:
    """A helper process and its connection (see the module docstring). Made by :meth:`start`.

    Attributes:
        what: the helper, as messages name it.
        module: the child's module.
        proc: the process.
        conn: this end of the connection.
        payload: what the child answered with ``ready`` (None until then).
        shared: the shared memory blocks freed when the helper stops.
    """

    def __init__(self, what: str, module: str, proc: subprocess.Popen, conn: Connection, state: _State,
                 timeout: float | None) -> None:
        self.what, self.module, self.proc, self.conn = what, module, proc, conn
        self._state, self._timeout = state, timeout
        self.shared = state.shared
        self.payload: Any = None
        self._answered = False
        self._finalizer = weakref.finalize(self, _stop_states, [state], 5.0)

    @classmethod
    def start(cls, module: str, config: Any, *, what: str, timeout: float | None = 30.0, wait: bool = True,
              stderr: str = "capture", stdout: str = "null", env: Mapping[str, str | None] | None = None,
              pass_fds: Iterable[int] = (), shared: Iterable[shared_memory.SharedMemory] = ()) -> Helper:
        """Start ``python -P -m module``, send it ``config`` and (with ``wait``) wait for its ready answer.

        Args:
            module: the child's module; it ends with ``serve(main)``.
            config: the first message the child receives (anything that pickles).
            what: the helper's name in messages ("the window process").
            timeout: seconds to wait for the answer (None: as long as the child lives).
            wait: wait for the answer here; with False, call :meth:`wait_ready` later (to start several at once).
            stderr: "capture" (kept in a temporary file: its end goes into error messages) or "tee" (also shown on
                this process's stderr as it comes, for output users should see).
            stdout: "null" (discarded) or "inherit" (this process's stdout).
            env: environment variables to set in the child (a None value removes one).
            pass_fds: more file descriptors the child inherits (same numbers; name them in ``config``).
            shared: shared memory blocks the helper uses: freed when it stops.

        Raises:
            HelperFailed: (with ``wait``) the child erred, died or gave no answer in ``timeout`` seconds; it is
                stopped and its shared blocks freed.
            ValueError: an unknown ``stderr`` or ``stdout`` mode.
        """
        if stderr not in STDERR_MODES or stdout not in STDOUT_MODES:
            raise ValueError(f"Helper.start(stderr={stderr!r}, stdout={stdout!r}): stderr must be one of "
                             f"{STDERR_MODES} and stdout one of {STDOUT_MODES}")
        blocks = list(shared)
        ours, theirs = socket.socketpair()
        child_env = dict(os.environ)
        for key, value in (env or {}).items():
            if value is None:
                child_env.pop(key, None)
            else:
                child_env[key] = value
        child_env.pop(_PATH_VAR, None)
        if "PYTHONPATH" in child_env:
            child_env[_PATH_VAR] = child_env["PYTHONPATH"]
        child_env["PYTHONPATH"] = _python_path()
        child_env[FD_VAR] = str(theirs.fileno())
        log = tempfile.TemporaryFile() if stderr == "capture" else None
        try:
            proc = subprocess.Popen(
                [sys.executable, "-P", "-m", module], env=child_env, pass_fds=(theirs.fileno(), *pass_fds),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL if stdout == "null" else None,
                stderr=log if log is not None else subprocess.PIPE)
        except BaseException:
            ours.close()
            if log is not None:
                log.close()
            for shm in blocks:
                free_shared(shm)
            raise
        finally:
            theirs.close()  # the child holds the only copy: its death closes the connection
        tail = thread = None
        if log is None:
            tail = collections.deque(maxlen=_TAIL_LINES)
            thread = threading.Thread(target=_copy_lines, args=(proc.stderr, tail), daemon=True,
                                      name=f"pixelrig-helper-stderr-{proc.pid}")
            thread.start()
        conn = Connection(ours.detach())
        helper = cls(what, module, proc, conn, _State(proc, conn, log, tail, thread, blocks), timeout)
        try:
            conn.send(config)
        except OSError:
            pass  # it died at once: wait_ready says why
        if wait:
            helper.wait_ready()
        return helper

    # ---- the handshake --------------------------------------------------------------------------------------

    def wait_ready(self, timeout: float | None = None) -> Any:
        """Wait for the child's ready answer and return its payload (at once when it came already).

        Args:
            timeout: seconds (None: the ``timeout`` given to :meth:`start`).

        Raises:
            HelperFailed: the child erred, died or gave no answer in time (it is stopped, its blocks freed).
        """
        if self._answered:
            return self.payload
        timeout = self._timeout if timeout is None else timeout
        try:
            message = self._receive(timeout, "starting")
        except HelperFailed:
            self.stop(2.0)
            raise
        if isinstance(message, tuple) and len(message) == 2 and message[0] == "ready":
            self.payload, self._answered = message[1], True
            return self.payload
        if isinstance(message, tuple) and len(message) == 3 and message[0] == "error":
            _, trace, error = message
            code = self.stop(5.0)
            last = trace.strip().splitlines()[-1] if trace.strip() else "no reason given"
            raise HelperFailed(f"{self.what} could not start: {last} (exit code {code}; {self.stderr_tail()})\n"
                               f"--- its traceback ---\n{trace}", what=self.what, exit_code=code,
                               stderr=self.stderr_tail(), error=error, trace=trace)
        self.stop(2.0)
        raise HelperFailed(f"{self.what} answered {message!r} instead of ready: {self.module} must be a helper "
                           "module ending with serve(main) (pixelrig.system.process)", what=self.what,
                           exit_code=self.proc.returncode, stderr=self.stderr_tail())

    def _receive(self, timeout: float | None, doing: str) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
            try:
                if self.conn.poll(left) or self.proc.poll() is not None and self.conn.poll(0):
                    return self.conn.recv()
            except (EOFError, OSError):
                raise self.died(doing) from None
            if self.proc.poll() is not None:
                raise self.died(doing)
            if deadline is not None and time.monotonic() >= deadline:
                self.kill()
                raise HelperFailed(f"{self.what} gave no answer in {timeout:g} s while {doing}; it was killed "
                                   f"({self.stderr_tail()})", what=self.what, exit_code=self.proc.poll(),
                                   stderr=self.stderr_tail())

    # ---- talking to it ---------------------------------------------------------------------------------------

    def send(self, message: Any, doing: str = "working") -> None:
        """Send the child a message.

        Raises:
            HelperFailed: the child is gone (its exit code and stderr in the message).
        """
        try:
            self.conn.send(message)
        except (OSError, ValueError):
            raise self.died(doing, wait=0.0) from None

    def recv(self, doing: str = "working", timeout: float | None = None) -> Any:
        """The child's next message (waiting at most ``timeout`` seconds, None: as long as it lives).

        Raises:
            HelperFailed: the child died (or gave no answer in time, and was killed).
        """
        return self._receive(timeout, doing)

    def died(self, doing: str, wait: float = 5.0) -> HelperFailed:
        """The error saying that the child went away while ``doing`` something (waiting up to ``wait`` seconds for
        its exit code)."""
        try:
            code: int | None = self.proc.wait(timeout=wait) if wait > 0 else self.proc.poll()
        except subprocess.TimeoutExpired:
            code = None
        said = f"exit code {code}" if code is not None else "it closed its connection but still runs"
        return HelperFailed(f"{self.what} died while {doing} ({said}; {self.stderr_tail()})", what=self.what,
                            exit_code=code, stderr=self.stderr_tail())

    # ---- its state -------------------------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self.proc.pid

    def poll(self) -> int | None:
        """The child's exit code (negative: the signal that killed it), None while it runs."""
        return self.proc.poll()

    @property
    def alive(self) -> bool:
        """Whether the child runs."""
        return self.proc.poll() is None

    def stderr_tail(self, lines: int = 3) -> str:
        """The last non-empty lines the child wrote to its stderr, for error messages ("its stderr: a | b")."""
        text = self._state.stderr_lines()
        return "its stderr: " + (" | ".join(text[-lines:]) if text else "empty")

    # ---- ending it -------------------------------------------------------------------------------------------

    def kill(self) -> None:
        """Kill the child at once (SIGKILL); :meth:`stop` still frees what it held."""
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.proc.wait()

    def stop(self, timeout: float = 5.0) -> int | None:
        """Ask the child to stop (its connection closes), wait ``timeout`` seconds, kill it if it hangs; free its
        shared blocks. Idempotent. Returns its exit code."""
        if self._finalizer.detach() is not None:
            _stop_states([self._state], timeout)
        return self.proc.returncode


def stop_all(helpers: Iterable[Helper], timeout: float = 5.0) -> None:
    """Stop several helpers side by side: each is asked at once, and all get ``timeout`` seconds together."""
    states = [h._state for h in helpers if h._finalizer.detach() is not None]
    _stop_states(states, timeout)


# ---- the child's side ---------------------------------------------------------------------------------------

_answered = False


def ready(conn: Connection, payload: Any = None) -> None:
    """Tell the parent that this helper has started (once), with ``payload`` for :attr:`Helper.payload`."""
    global _answered
    if _answered:
        raise RuntimeError("ready() was called twice: a helper answers its parent once")
    conn.send(("ready", payload))
    _answered = True


def portable_error(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling (to be raised as it is in the parent), else a RuntimeError with its type and
    message."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any failure: send the text instead
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def report_error(conn: Connection, exc: BaseException) -> None:
    """Tell the parent, after :func:`ready`, of the error that ended this helper's work: ``("error", the exception
    (:func:`portable_error`), its traceback text)``, for the parent to raise; nothing when the parent is gone."""
    with contextlib.suppress(OSError):
        conn.send(("error", portable_error(exc), traceback.format_exc()))


def serve(main: Callable[[Connection, Any], int | None]) -> NoReturn:
    """Run a helper's body: receive the config, call ``main(conn, config)``, which answers with :func:`ready`, and
    exit with its return value (None: 0). An exception before the answer goes to the parent as its ``("error",
    ...)`` answer; after it, it is printed on stderr (exit code 1). Ctrl-C is the parent's to handle: a helper
    ignores SIGINT and stops when its connection closes."""
    fd = os.environ.pop(FD_VAR, None)
    if fd is None:
        sys.exit(f"{sys.argv[0]}: this is a pixelrig helper process, started by pixelrig itself "
                 "(pixelrig.system.process.Helper.start), not by hand")
    saved = os.environ.pop(_PATH_VAR, None)
    if saved is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = saved
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(int(fd))
    try:
        config = conn.recv()
    except (EOFError, OSError):
        sys.exit(0)  # the parent went away before it said anything
    code: Any = 1
    try:
        code = main(conn, config) or 0
        if not _answered:
            with contextlib.suppress(OSError):
                conn.send(("error", "RuntimeError: the helper ended without answering ready", None))
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:  # noqa: BLE001 - a helper's failure goes to its parent, or to stderr
        trace = traceback.format_exc()
        if _answered:
            sys.stderr.write(trace)
        else:
            with contextlib.suppress(OSError):
                conn.send(("error", trace, portable_error(exc)))
        code = 1
    finally:
        with contextlib.suppress(OSError):
            conn.close()
    sys.exit(code)
