"""Child-process body of a collect worker, started by :class:`pixelrig.datasets.collect_workers.WorkerEpisodes`
through :mod:`pixelrig.system.process` (``python -m``).

Protocol: the config is ``{"job": CollectJob, "attempts": (first, stop, step)}``. The worker makes the task's env,
rig, recorder and expert, answers ready with the recording's ``DatasetInfo``, then runs attempts ``first``,
``first + step``, ... below ``stop`` and sends each as ``("episode", Episode)`` when it ends. Its connection closing
(the collecting process is done, failed, or died) stops it before its next step. An error while running is sent as
``("error", exception, traceback text)``; an error while starting is the helper's error answer.
"""

from __future__ import annotations

from multiprocessing.connection import Connection
from typing import Any

from pixelrig.system.process import ready, report_error, serve


def main(conn: Connection, config: dict[str, Any]) -> int:
    """A worker's life: make the recording env, answer ready, run its attempts, send them."""
    from pixelrig.datasets.collect_workers import ExpertRecorder

    def listened_to() -> None:
        if conn.poll():  # readable, though the collecting process sends nothing more: it closed the connection
            raise EOFError("the collecting process closed the connection")

    first, stop, step = config["attempts"]
    recorder = ExpertRecorder(config["job"])
    try:
        ready(conn, recorder.info)
        try:
            for attempt in range(first, stop, step):
                conn.send(("episode", recorder.episode(attempt, between_steps=listened_to)))
        except (EOFError, BrokenPipeError, ConnectionResetError):
            return 0  # the collecting process is done, or stopped listening: nothing to tell
        except Exception as exc:  # noqa: BLE001 - everything goes back to the collecting process
            report_error(conn, exc)
        return 0
    finally:
        recorder.close()


if __name__ == "__main__":
    serve(main)
