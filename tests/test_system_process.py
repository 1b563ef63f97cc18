"""The helper-process launcher (pixelrig.system.process): the ready/stop handshake, children that err, die or hang
before answering, a parent that dies, and that every helper pixelrig starts goes through it."""

from __future__ import annotations

import ast
import os
import re
import signal
import subprocess
import sys
import time
from multiprocessing import shared_memory
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import pixelrig
from pixelrig.errors import HelperFailed
from pixelrig.system.process import FD_VAR, Helper

from .conftest import child_pids, new_children

CHILD = "tests.helper_children"
PACKAGE = Path(pixelrig.__file__).resolve().parent
REPO = PACKAGE.parent


def start(mode: str, **kwargs: Any) -> Helper:
    return Helper.start(CHILD, {"mode": mode}, what="the test helper", **kwargs)


# ---- the handshake ---------------------------------------------------------------------------------------------

def test_ready_talk_and_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child is ``python -P -m module``, gets the config first, answers ready once, talks on the connection,
    and exits 0 when stop() closes it; it sees this process's PYTHONPATH, not the one that found its modules."""
    monkeypatch.setenv("PYTHONPATH", "/nonexistent/user/path")
    helper = start("echo", timeout=60)
    try:
        info = helper.payload
        assert info["pid"] == helper.pid and info["module"] == "__main__" and info["argv"][0].endswith(
            "helper_children.py")
        assert info["config"] == {"mode": "echo"}
        assert info["pythonpath"] == "/nonexistent/user/path" and not info["fd_var"]
        with open(f"/proc/{helper.pid}/cmdline", "rb") as f:
            assert f.read().split(b"\0")[1:4] == [b"-P", b"-m", CHILD.encode()]
        helper.send({"n": 1})
        assert helper.recv() == ("echo", {"n": 1})
        assert helper.wait_ready() is info  # answered once: later calls return the same payload
    finally:
        code = helper.stop(10.0)
    assert code == 0 and not helper.alive and helper.pid not in child_pids()
    assert helper.stop() == 0  # idempotent


def test_a_child_that_errs_before_ready_raises_its_error_here() -> None:
    with pytest.raises(HelperFailed) as err:
        start("error", timeout=60)
    exc = err.value
    assert isinstance(exc.error, LookupError) and str(exc.error) == "no such thing (on purpose)"
    assert "helper_children.py" in exc.trace and 'raise LookupError("no such thing (on purpose)")' in exc.trace
    assert exc.summary.startswith("the test helper could not start: LookupError: no such thing (on purpose) (exit "
                                  "code 1; its stderr: ")
    assert exc.exit_code == 1 and "--- its traceback ---" in str(exc)


def test_a_child_that_dies_before_ready_names_its_exit_code_and_stderr() -> None:
    before = set(child_pids())
    with pytest.raises(HelperFailed, match=re.escape("the test helper died while starting (exit code 3; its stderr: "
                                                     "helper_children: going down on purpose)")) as err:
        start("die", timeout=60)
    assert err.value.exit_code == 3 and err.value.error is None
    assert not new_children(before)


def test_a_child_that_hangs_is_killed_after_the_timeout() -> None:
    before = set(child_pids())
    started = time.monotonic()
    with pytest.raises(HelperFailed, match=re.escape("the test helper gave no answer in 2 s while starting; it was "
                                                     "killed (its stderr: empty)")) as err:
        start("hang", timeout=2.0)
    assert time.monotonic() - started < 20
    assert err.value.exit_code == -signal.SIGKILL
    assert not new_children(before)


def test_several_start_side_by_side_and_stop_kills_a_child_that_does_not_stop() -> None:
    helpers = [start("deaf", wait=False, timeout=60) for _ in range(2)]
    for helper in helpers:
        assert helper.wait_ready() is None
    started = time.monotonic()
    assert [h.stop(0.5) for h in helpers] == [-signal.SIGKILL] * 2
    assert time.monotonic() - started < 10


def test_a_child_exits_when_its_parent_dies(tmp_path: Path) -> None:
    """A parent killed with SIGKILL cannot stop its helper: the helper sees its connection end and exits."""
    code = ("import time; from pixelrig.system.process import Helper; "
            f"h = Helper.start({CHILD!r}, {{'mode': 'echo'}}, what='a helper'); print(h.pid, flush=True); "
            "time.sleep(600)")
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        assert _running(pid)
        parent.kill()
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(pid), f"helper {pid} outlived its parent"
    finally:
        parent.kill()
        parent.wait()


def _running(pid: int) -> bool:
    """Whether a process runs (a zombie waiting for whoever adopted it has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_tee_shows_stderr_as_it_comes_and_keeps_its_end(capfd: pytest.CaptureFixture[str]) -> None:
    helper = start("shout", timeout=60, stderr="tee")
    deadline = time.monotonic() + 10
    while "line 2" not in helper.stderr_tail() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert helper.stderr_tail(2) == "its stderr: helper_children: line 1 | helper_children: line 2"
    assert helper.stop(10.0) == 5
    assert "helper_children: line 0\n" in capfd.readouterr().err
    assert helper.stderr_tail(1) == "its stderr: helper_children: line 2"  # kept after the stop


def test_shared_blocks_are_freed_when_the_helper_stops() -> None:
    shm = shared_memory.SharedMemory(create=True, size=16)
    name = shm.name.lstrip("/")
    helper = Helper.start(CHILD, {"mode": "shared", "shm": shm.name}, what="the test helper", timeout=60,
                          shared=[shm])
    assert bytes(shm.buf[:5]) == b"hello" and name in os.listdir("/dev/shm")
    assert helper.stop(10.0) == 0
    assert name not in os.listdir("/dev/shm")


def test_bad_modes_and_a_helper_run_by_hand_are_named() -> None:
    with pytest.raises(ValueError, match=re.escape("stderr must be one of ('capture', 'tee')")):
        Helper.start(CHILD, {}, what="x", stderr="inherit")
    env = {k: v for k, v in os.environ.items() if k != FD_VAR}
    out = subprocess.run([sys.executable, "-m", "pixelrig.render.probe_main"], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 1 and "this is a pixelrig helper process, started by pixelrig itself" in out.stderr


# ---- every helper pixelrig starts goes through the launcher ------------------------------------------------

STARTERS = {
    "os": {"fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp", "exec*", "spawn*"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "multiprocessing": {"Process", "Pool", "get_context", "set_start_method"},
    "pty": {"spawn", "fork"},
    "concurrent.futures": {"ProcessPoolExecutor"},
    "subprocess": {"*"},
}
"""What starts a process, by module (``*`` at the end of a name: any name starting so)."""
ALIASES = {"mp": "multiprocessing", "ctx": "multiprocessing", "context": "multiprocessing"}

OTHER_STARTERS = {
    "pixelrig/system/process.py": "the launcher itself",
    "pixelrig/tools/bench/main.py": "`pixelrig bench` runs each section as the command itself (python -m "
                                    "pixelrig.tools.bench.main --sections S) in a fresh interpreter, its output the "
                                    "user's: a program, not a helper",
}
"""The modules that may start processes another way, and why (ffmpeg, started by imageio-ffmpeg, is imageio's)."""


def starts_process(module: str, name: str) -> bool:
    names = STARTERS.get(ALIASES.get(module, module), set())
    return any(name == n or n.endswith("*") and name.startswith(n[:-1]) for n in names)


def process_starts(path: Path) -> list[str]:
    """Where a module starts processes, or imports what does: ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name in ("subprocess", "pty")]
        elif isinstance(node, ast.ImportFrom) and node.module:
            module = node.module.split(".")[0] if node.module.startswith("multiprocessing") else node.module
            found += [f"{node.lineno}: from {node.module} import {a.name}" for a in node.names
                      if starts_process(module, a.name)]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if starts_process(node.value.id, node.attr):
                found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_processes_start_only_through_the_launcher() -> None:
    """No module but the launcher starts a process (subprocess, multiprocessing, os.fork/exec/spawn/system, asyncio
    subprocesses, process pools), except the ones named in OTHER_STARTERS with their reason."""
    starts = {str(p.relative_to(REPO)): process_starts(p) for p in sorted(PACKAGE.rglob("*.py"))}
    wrong = {path: lines for path, lines in starts.items() if lines and path not in OTHER_STARTERS}
    assert not wrong, f"start helper processes with pixelrig.system.process.Helper: {wrong}"
    assert all(starts[path] for path in OTHER_STARTERS), "an allowed starter no longer starts anything: drop it"


def test_every_helper_kind_starts_through_the_launcher(xvfb: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The window, the web server, both renderer probes, the EGL device listing, replay workers and vector-env
    workers are each started by Helper.start, and while the long-lived ones run every child process of this one
    is ``python -P -m pixelrig.<module>`` (the web server's token in neither its command line nor its
    environment)."""
    from pixelrig import Camera, DatasetRecorder, PixelObs
    from pixelrig.datasets import replay
    from pixelrig.display.web import FrameLayout, Slot, WebServer
    from pixelrig.display.window import DisplayWindow
    from pixelrig.render.choice import probe_egl, probe_gl
    from pixelrig.render.egl_devices import list_egl_devices
    from pixelrig.vector.make import make_vec

    started: list[tuple[str, Any]] = []
    real = Helper.start.__func__  # type: ignore[attr-defined]

    def recording(cls: type[Helper], module: str, config: Any, **kwargs: Any) -> Helper:
        started.append((module, config.get("probe") if isinstance(config, dict) else None))
        return real(cls, module, config, **kwargs)

    monkeypatch.setattr(Helper, "start", classmethod(recording))
    before = set(child_pids())
    window = DisplayWindow("pixelrig test: launcher")
    server = WebServer(FrameLayout(1, (Slot("c", "rgb", (8, 8, 3), "|u1"),)), host="0.0.0.0")  # with a token
    venv = make_vec("pixelrig/CartPole-v0", 1, renderer="tiny")
    try:
        children = new_children(before)
        assert len(children) == 3, children
        for pid, argv in children.items():
            assert argv[1:3] == ["-P", "-m"] and argv[3].startswith("pixelrig."), argv
            with open(f"/proc/{pid}/environ", "rb") as f:  # the token travels in the config alone
                assert server.token and server.token not in " ".join(argv) + f.read().decode(errors="replace")
    finally:
        venv.close()
        server.close()
        window.close()
    probe_gl(refresh=True)
    probe_egl(refresh=True)
    list_egl_devices()
    cam = Camera("c", width=16, height=16, eye=(0.0, -2.6, 0.45), target=(0.0, 0.0, 0.35), modalities=("rgb",))
    env = DatasetRecorder(PixelObs(gym.make("pixelrig/CartPole-v0", renderer="tiny", max_episode_steps=2),
                                   cams=[cam]), tmp_path / "run.hdf5", format="robomimic")
    for seed in range(2):
        env.reset(seed=seed)
        for _ in range(2):
            env.step(np.zeros(1, np.float32))
    env.close()
    replay(tmp_path / "run.hdf5", tmp_path / "again.hdf5", [cam], progress=False, workers=3)
    kinds = {"pixelrig.display.window_main", "pixelrig.display.web_main", "pixelrig.vector.worker_main",
             "pixelrig.datasets.replay_worker_main"}
    assert {module for module, _ in started} == kinds | {"pixelrig.render.probe_main"}, started
    assert {probe for module, probe in started if module == "pixelrig.render.probe_main"} == {"gl", "egl", "devices"}
    assert sum(module == "pixelrig.datasets.replay_worker_main" for module, _ in started) == 2
    assert not new_children(before)

