"""Child-process body of a vector-env worker (``make_vec``'s "async" and "batched" modes with worker processes),
started by :class:`pixelrig.vector.batched.BatchedVectorEnv` through :mod:`pixelrig.system.process` (``python -m``).

Protocol: the config holds the worker's index, the global indices of its envs (``start``, ``stop``), the vector
env's size, the shared block's name, the first env's spaces and its env factories (cloudpickled). It builds its envs
(an :class:`~pixelrig.vector.batched.EnvBatch`), checks their spaces and answers ready. Then it answers each command
``(name, data)`` -- "reset", "step", "call", "set_attr" -- with ``(result, True)``, or ``((exception type, message,
traceback), False)`` when it raised; observations go into the shared block at the envs' global indices, not into
the answer. It closes its envs and exits when its connection ends (the vector env's close, or its death).
"""

from __future__ import annotations

import traceback
from multiprocessing.connection import Connection
from typing import Any

from pixelrig.system.process import attach_shared, ready, serve


def _answer(conn: Connection, result: Any) -> None:
    try:
        conn.send((result, True))
    except (BrokenPipeError, ConnectionResetError):
        raise
    except Exception as exc:  # noqa: BLE001 - a result that does not pickle is the caller's error, with its why
        conn.send(((type(exc), f"the result could not be sent back: {exc}", traceback.format_exc()), False))


def _failure(conn: Connection, exc: Exception) -> None:
    try:
        conn.send(((type(exc), str(exc), traceback.format_exc()), False))
    except (BrokenPipeError, ConnectionResetError):
        raise
    except Exception:  # noqa: BLE001 - an exception type that does not pickle: its name travels in the text
        conn.send(((RuntimeError, f"{type(exc).__name__}: {exc}", traceback.format_exc()), False))


def main(conn: Connection, config: dict[str, Any]) -> int:
    """Build the envs, answer ready, then serve commands until the connection ends."""
    import cloudpickle

    from pixelrig.vector.batched import EnvBatch
    from pixelrig.vector.shared import SharedLayout, put

    worker, indices = config["worker"], range(config["start"], config["stop"])
    batch = EnvBatch(cloudpickle.loads(config["env_fns"]), config["autoreset_mode"])
    shm = None
    try:
        obs_space, action_space = config["spaces"]
        first = batch.envs[0]
        if first.observation_space != obs_space or first.action_space != action_space:
            raise ValueError(f"make_vec worker {worker}'s envs have other spaces than the first env's: every env of "
                             "a vector env needs the same observation and action spaces")
        shm = attach_shared(config["shm"])  # the vector env owns and frees it
        shared = SharedLayout(obs_space, config["num_envs"]).views(shm.buf)

        def write(observations: list[Any]) -> None:
            for index, obs in zip(indices, observations, strict=True):
                if obs is not None:
                    put(shared, index, obs)

        ready(conn)
        while True:
            try:
                command, data = conn.recv()
            except (EOFError, OSError):
                return 0  # the vector env closed (or died)
            try:
                if command == "reset":
                    observations, infos = batch.reset(*data)
                    write(observations)
                    _answer(conn, infos)
                elif command == "step":
                    observations, *rest = batch.step(data)
                    write(observations)
                    _answer(conn, rest)
                elif command == "call":
                    _answer(conn, batch.call(*data))
                elif command == "set_attr":
                    _answer(conn, batch.set_attr(*data))
                elif command == "wrapper_names":
                    _answer(conn, batch.wrapper_names())
                else:
                    raise RuntimeError(f"unknown command {command!r}")
            except (BrokenPipeError, ConnectionResetError):
                return 0  # the vector env went away mid-answer
            except Exception as exc:  # noqa: BLE001 - raised in the vector env, with this traceback
                try:
                    _failure(conn, exc)
                except (BrokenPipeError, ConnectionResetError):
                    return 0
    finally:
        shared = None
        batch.close()
        if shm is not None:
            shm.close()


if __name__ == "__main__":
    serve(main)
