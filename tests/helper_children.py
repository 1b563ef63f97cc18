"""Helper-process bodies for tests/test_system_process.py, run by the launcher as ``python -P -m
tests.helper_children`` (the config's "mode" says which)."""

from __future__ import annotations

import os
import sys
import time
from multiprocessing.connection import Connection
from typing import Any

from pixelrig.system.process import FD_VAR, attach_shared, ready, serve


def main(conn: Connection, config: dict[str, Any]) -> int:
    mode = config["mode"]
    if mode == "echo":  # answers who it is, then echoes until its connection ends
        ready(conn, {"pid": os.getpid(), "pythonpath": os.environ.get("PYTHONPATH"), "fd_var": FD_VAR in os.environ,
                     "argv": sys.argv, "module": __name__, "config": config})
        while True:
            try:
                conn.send(("echo", conn.recv()))
            except EOFError:
                return 0
    if mode == "error":  # raises before answering
        raise LookupError("no such thing (on purpose)")
    if mode == "die":  # dies before answering, as a crashing native library would
        sys.stderr.write("helper_children: going down on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if mode == "hang":  # never answers
        time.sleep(600)
    if mode == "deaf":  # answers, then ignores the end of its connection
        ready(conn)
        time.sleep(600)
    if mode == "shout":  # answers, writes to stderr, waits for the end
        ready(conn)
        for i in range(3):
            sys.stderr.write(f"helper_children: line {i}\n")
        sys.stderr.flush()
        try:
            conn.recv()
        except EOFError:
            return 5
    if mode == "shared":  # writes into its parent's block, answers, waits for the end
        shm = attach_shared(config["shm"])
        shm.buf[:5] = b"hello"
        shm.close()
        ready(conn)
        try:
            conn.recv()
        except EOFError:
            return 0
    raise ValueError(f"unknown mode {mode!r}")


if __name__ == "__main__":
    serve(main)
