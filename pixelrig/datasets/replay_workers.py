"""Worker processes for :func:`~pixelrig.datasets.replay` and :func:`~pixelrig.datasets.augment`: each re-renders
every ``n``-th episode asked for and streams the frames back to the replaying process, which writes them in order.

Workers are helper processes (:mod:`pixelrig.system.process`; their body is
:mod:`pixelrig.datasets.replay_worker_main`): fresh interpreters that never import the caller's ``__main__`` again
(a script's recording code would run a second time without an ``if __name__ == "__main__":`` guard) nor inherit its
pybullet and GL state. A reader thread per worker buffers its frames (up to a memory budget), so a worker renders
its next episode while the episode before it, another worker's, is being written.
"""

from __future__ import annotations

import pickle
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pixelrig.datasets.rebuild import MakeEnv
from pixelrig.datasets.rerender import EpisodeEnd, Item
from pixelrig.errors import HelperFailed, ReplayWorkerError
from pixelrig.system.process import Helper, stop_all

BATCH = 8
"""Frames per message from a worker."""
BUFFER_BYTES = 256 << 20
"""Memory a worker's frames may take while they wait to be written (its reader thread stops reading beyond it, and
the worker then waits)."""
_MODULE = "pixelrig.datasets.replay_worker_main"


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


class _Worker:
    """One worker process and the thread that buffers what it sends."""

    def __init__(self, index: int, job: dict[str, Any]) -> None:
        self.index = index
        # stderr shown as it comes (and its end kept for errors); stdout dropped: the EGL plugin talks there
        self.helper = Helper.start(_MODULE, job, what=f"replay worker {index}", timeout=None, wait=False,
                                   stderr="tee")
        self.inbox: queue.Queue[Any] | None = None

    def wait_ready(self, buffered: int) -> str:
        """Wait for the worker to start, then buffer what it sends; returns its backend's name."""
        try:
            backend = self.helper.wait_ready()
        except HelperFailed as exc:
            if exc.error is not None:  # raised while starting: raised here as it is
                raise exc.error from ReplayWorkerError(f"in replay worker {self.index} (pid {self.helper.pid}), "
                                                       f"while starting:\n{exc.trace}")
            raise ReplayWorkerError(f"replay worker {self.index} (pid {self.helper.pid}) could not start: "
                                    f"{exc.summary}") from None
        self.inbox = queue.Queue(maxsize=buffered)
        threading.Thread(target=self._read, name=f"pixelrig-replay-reader-{self.index}", daemon=True).start()
        return backend

    def _read(self) -> None:
        inbox = self.inbox
        assert inbox is not None
        while True:
            try:
                msg = self.helper.conn.recv()
            except (EOFError, OSError):
                inbox.put(("eof",))
                return
            inbox.put(msg)
            if msg[0] == "error":
                return

    def get(self, doing: str) -> Any:
        """The next message (an error is raised here, in the replaying process)."""
        assert self.inbox is not None
        msg = self.inbox.get()
        if msg[0] == "eof":
            error = self.helper.died(doing)
            raise ReplayWorkerError(f"replay worker {self.index} (pid {self.helper.pid}) died with exit code "
                                    f"{error.exit_code} while {doing} ({error.stderr})")
        if msg[0] == "error":
            raise msg[1] from ReplayWorkerError(f"in replay worker {self.index} (pid {self.helper.pid}), while "
                                                f"{doing}:\n{msg[2]}")
        return msg

    def drain(self) -> None:
        """Empty the inbox (unblocks the reader thread if it waits on a full one)."""
        while self.inbox is not None:
            try:
                self.inbox.get_nowait()
            except queue.Empty:
                break


class Workers:
    """``count`` worker processes re-rendering episodes of a dataset; worker ``k`` takes renderings ``k``,
    ``k + count``, ... in order (the replaying process writes them).

    Args:
        count: worker processes.
        src: the recorded dataset.
        renderings: what to render, in order: ``(episode, looks seed)`` pairs (the seed is unused without looks).
        cams: the new rig, as camera dicts.
        renderer: the backend to draw with (None: the recorded one).
        make_env: as :func:`~pixelrig.datasets.replay`'s (it must load in another process).
        needs_next_obs: render the state after each episode's last action too.
        frame_bytes: about what one frame takes in memory (sizes the buffers).
        looks: the new looks (:class:`~pixelrig.datasets.rerender.ReplayLooks`), or None.

    Raises:
        ReplayWorkerError: a worker died while starting; the error a worker raised while starting is raised as it is.
    """

    def __init__(self, count: int, src: Path, renderings: list[tuple[int, int]], cams: list[dict[str, Any]],
                 renderer: str | None, make_env: MakeEnv | None, needs_next_obs: bool, frame_bytes: int,
                 looks: Any = None) -> None:
        buffered = max(2, BUFFER_BYTES // max(1, BATCH * frame_bytes))
        self.workers: list[_Worker] = []
        self.count = count
        try:
            for k in range(count):
                job = {"src": str(src), "cameras": cams, "renderer": renderer,
                       "make_env": None if make_env is None else pickle.dumps(make_env),
                       "renderings": [(j, *renderings[j]) for j in range(k, len(renderings), count)],
                       "needs_next_obs": needs_next_obs,
                       "looks": None if looks is None else pickle.dumps(looks)}
                self.workers.append(_Worker(k, job))
            self.backend = [w.wait_ready(buffered) for w in self.workers][0]
        except BaseException:
            self.close(success=False)
            raise
        self.renderings = renderings

    def items(self, j: int) -> Iterator[Item]:
        """Rendering ``j``'s items, as :func:`~pixelrig.datasets.rerender.episode_items` yields them."""
        worker = self.workers[j % self.count]
        while True:
            _, got, items = worker.get(f"rendering episode {self.renderings[j][0]}")
            if got != j:
                raise ReplayWorkerError(f"replay worker {worker.index} sent rendering {got} where {j} was due")
            yield from items
            if isinstance(items[-1], EpisodeEnd):
                return

    def close(self, success: bool) -> None:
        """Stop the workers: let them finish (``success``), or kill them."""
        if not success:
            for worker in self.workers:
                if worker.helper.alive:
                    worker.helper.kill()
        stop_all([w.helper for w in self.workers], timeout=30.0 if success else 5.0)
        for worker in self.workers:
            worker.drain()
