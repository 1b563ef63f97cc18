"""Worker processes for :func:`~pixelrig.datasets.replay`: each re-renders every ``n``-th episode and streams the
frames back to the replaying process, which writes them in episode order.

Workers are fresh interpreters (``python -c``) talking over a socket pair, not ``multiprocessing`` children: a
spawned child would import the caller's ``__main__`` again (running a script's recording code a second time when
it lacks an ``if __name__ == "__main__":`` guard), and a forked one would inherit the caller's pybullet and GL
state. A reader thread per worker buffers its frames (up to a memory budget), so a worker renders its next episode
while the episode before it, another worker's, is being written.
"""

from __future__ import annotations

import json
import os
import pickle
import queue
import socket
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pixelrig.datasets.rebuild import MakeEnv
from pixelrig.datasets.rerender import EpisodeEnd, Item
from pixelrig.errors import ReplayWorkerError

BATCH = 8
"""Frames per message from a worker."""
BUFFER_BYTES = 256 << 20
"""Memory a worker's frames may take while they wait to be written (its reader thread stops reading beyond it, and
the worker then waits)."""

_PATH_VAR = "PIXELRIG_REPLAY_SYS_PATH"
_ENTRY = (f"import json, os, sys; sys.path[:] = json.loads(os.environ.pop({_PATH_VAR!r})); "
          "from pixelrig.datasets.replay_workers import worker_main; worker_main(int(sys.argv[1]))")
"""A worker's program: the replaying process's ``sys.path`` (so that it imports the same pixelrig, and make_env's
module), then :func:`worker_main`."""


def loadable_elsewhere(fn: Any) -> str | None:
    """None if ``fn`` can be pickled here and loaded in a worker process (a module-level function, a
    ``functools.partial`` of one, ...), else why not."""
    try:
        data = pickle.dumps(fn)
    except Exception as exc:  # noqa: BLE001 - any pickling failure means the same thing here
        return f"it cannot be pickled ({type(exc).__name__}: {exc})"
    if b"__main__" in data:
        return "it is defined in the __main__ script, which a worker process does not run"
    return None


def _portable_error(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a RuntimeError with its type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any failure: send the text instead
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def worker_main(fd: int) -> None:
    """A worker's life: read the job from the socket ``fd``, re-render its episodes, send them back."""
    conn = Connection(fd)
    drawer = reader = None
    try:
        job = conn.recv()
        from pixelrig.cameras.spec import Camera
        from pixelrig.datasets.formats import open_dataset
        from pixelrig.datasets.rebuild import make_recorded_env
        from pixelrig.datasets.rerender import Renderer, episode_items
        from pixelrig.wrappers.pixel_obs import PixelObs

        make_env: MakeEnv | None = pickle.loads(job["make_env"]) if job["make_env"] is not None else None
        cameras = tuple(Camera.from_dict(c) for c in job["cameras"])
        reader = open_dataset(job["src"])
        info, renderer = reader.info, job["renderer"]

        def make_pixel() -> PixelObs:
            inner = make_env() if make_env is not None else make_recorded_env(info, renderer)
            return PixelObs(inner, cams=cameras, pixels_only=True, renderer=renderer if make_env is not None else None)

        drawer = Renderer(make_pixel, cameras)
        conn.send(("ready", drawer.backend))
        for e in job["episodes"]:
            batch: list[Item] = []
            for item in episode_items(reader, drawer, e, job["needs_next_obs"], info.state_shape):
                batch.append(item)
                if isinstance(item, EpisodeEnd) or len(batch) >= BATCH:
                    conn.send(("items", e, batch))
                    batch = []
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the replaying process
        try:
            conn.send(("error", _portable_error(exc), traceback.format_exc()))
        except OSError:
            pass  # the replaying process is gone: nobody to tell
    finally:
        if drawer is not None:
            drawer.close()
        if reader is not None:
            reader.close()
        conn.close()


class _Worker:
    """One worker process, its connection and the thread that buffers what it sends."""

    def __init__(self, index: int, job: dict[str, Any], buffered: int) -> None:
        self.index = index
        ours, theirs = socket.socketpair()
        env = {**os.environ, _PATH_VAR: json.dumps(sys.path)}
        try:
            self.proc = subprocess.Popen([sys.executable, "-c", _ENTRY, str(theirs.fileno())],
                                         pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, env=env)  # stdout: the EGL plugin talks
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        self.conn.send(job)
        self.inbox: queue.Queue[Any] = queue.Queue(maxsize=buffered)
        self.thread = threading.Thread(target=self._read, name=f"pixelrig-replay-reader-{index}", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while True:
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                self.inbox.put(("eof",))
                return
            self.inbox.put(msg)
            if msg[0] == "error":
                return

    def get(self, doing: str) -> Any:
        """The next message (an error is raised here, in the replaying process)."""
        msg = self.inbox.get()
        if msg[0] == "eof":
            code = self.proc.wait()
            raise ReplayWorkerError(f"replay worker {self.index} (pid {self.proc.pid}) died with exit code {code} "
                                    f"while {doing}")
        if msg[0] == "error":
            raise msg[1] from ReplayWorkerError(f"in replay worker {self.index} (pid {self.proc.pid}), while "
                                                f"{doing}:\n{msg[2]}")
        return msg

    def stop(self, wait_s: float) -> None:
        try:
            self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.conn.close()
        while True:  # unblock the reader thread if it waits on a full inbox
            try:
                self.inbox.get_nowait()
            except queue.Empty:
                break


class Workers:
    """``count`` worker processes re-rendering the episodes of a dataset; worker ``k`` takes episodes ``k``,
    ``k + count``, ... in order (the replaying process writes them).

    Args:
        count: worker processes.
        src: the recorded dataset.
        episodes: how many episodes it has.
        cameras: the new rig, as camera dicts.
        renderer: the backend to draw with (None: the recorded one).
        make_env: as :func:`~pixelrig.datasets.replay`'s (it must load in another process).
        needs_next_obs: render the state after each episode's last action too.
        frame_bytes: about what one frame takes in memory (sizes the buffers).

    Raises:
        ReplayWorkerError: a worker died while starting; the error a worker raised while starting is raised as it is.
    """

    def __init__(self, count: int, src: Path, episodes: int, cameras: list[dict[str, Any]], renderer: str | None,
                 make_env: MakeEnv | None, needs_next_obs: bool, frame_bytes: int) -> None:
        buffered = max(2, BUFFER_BYTES // max(1, BATCH * frame_bytes))
        self.workers: list[_Worker] = []
        self.count = count
        try:
            for k in range(count):
                job = {"src": str(src), "cameras": cameras, "renderer": renderer,
                       "make_env": None if make_env is None else pickle.dumps(make_env),
                       "episodes": list(range(k, episodes, count)), "needs_next_obs": needs_next_obs}
                self.workers.append(_Worker(k, job, buffered))
            self.backend = [w.get("starting")[1] for w in self.workers][0]
        except BaseException:
            self.close(success=False)
            raise

    def episode(self, e: int) -> Iterator[Item]:
        """Episode ``e``'s items, as :func:`~pixelrig.datasets.rerender.episode_items` yields them."""
        worker = self.workers[e % self.count]
        while True:
            _, got, items = worker.get(f"rendering episode {e}")
            if got != e:
                raise ReplayWorkerError(f"replay worker {worker.index} sent episode {got} where {e} was due")
            yield from items
            if isinstance(items[-1], EpisodeEnd):
                return

    def close(self, success: bool) -> None:
        """Stop the workers: let them finish (``success``), or kill them."""
        for worker in self.workers:
            if not success and worker.proc.poll() is None:
                worker.proc.kill()
        for worker in self.workers:
            worker.stop(wait_s=30.0 if success else 5.0)
