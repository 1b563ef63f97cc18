"""Shared fixtures: backends to parametrise over (EGL skips with a reason where absent, unless CI requires it)."""

from __future__ import annotations

import os

import numpy as np
import pybullet as p
import pytest
from hypothesis import Phase, settings

from pixelrig.render import probe_egl, probe_gl

settings.register_profile("mutation", derandomize=True, database=None, print_blob=False,
                          phases=(Phase.explicit, Phase.reuse, Phase.generate))
"""Hypothesis under mutation testing (tests/mutation.py): the same examples every run and no shrinking (a killed
mutant's failing example is not minimised, which only costs time there)."""
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])

BACKENDS = ("tiny", "egl", "gl")


def egl_or_skip() -> None:
    """Skip the calling test when EGL does not work here (fail instead when PIXELRIG_REQUIRE_EGL=1)."""
    probe = probe_egl()
    if not probe.ok:
        if os.environ.get("PIXELRIG_REQUIRE_EGL") == "1":
            pytest.fail(f"PIXELRIG_REQUIRE_EGL=1 but EGL is unavailable: {probe.detail}")
        pytest.skip(f"EGL unavailable here: {probe.detail}")


def gl_or_skip() -> None:
    """Skip the calling test when pixelrig's gl renderer gets no context here (fail instead when
    PIXELRIG_REQUIRE_EGL=1: CI has Mesa's EGL, on which both run)."""
    probe = probe_gl()
    if not probe.ok:
        if os.environ.get("PIXELRIG_REQUIRE_EGL") == "1":
            pytest.fail(f"PIXELRIG_REQUIRE_EGL=1 but the gl renderer is unavailable: {probe.detail}")
        pytest.skip(f"gl renderer unavailable here: {probe.detail}")


@pytest.fixture
def gl_required() -> None:
    """For ``pytest.mark.usefixtures("gl_required")``: skips where gl gets no context, fails under
    PIXELRIG_REQUIRE_EGL=1 (a ``skipif`` mark would skip there too, and CI would stay green without gl)."""
    gl_or_skip()


def runnable(renderer: str) -> str:
    """``renderer`` after skipping (failing under PIXELRIG_REQUIRE_EGL=1) when it cannot run here."""
    if renderer == "egl":
        egl_or_skip()
    if renderer == "gl":
        gl_or_skip()
    return renderer


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    """'tiny', 'egl' and 'gl' (egl and gl skipped with a reason where their probe fails)."""
    return runnable(request.param)


@pytest.fixture(params=("tiny", "gl", "egl"))
def renderer(request: pytest.FixtureRequest) -> str:
    """'tiny', 'gl' and 'egl', in that order (gl and egl skipped with a reason where they cannot run; CI fails
    instead)."""
    return runnable(request.param)


@pytest.fixture(autouse=True, scope="module")
def release_gl_after_each_file(request: pytest.FixtureRequest):
    """Free the gl context when a test file is done, whichever of its tests made one: pybullet's EGL plugin (a later
    file's egl env) cannot start beside it, and a file that forgot ``release_gl`` failed every EGL test after it."""
    yield
    import gc
    import sys

    from pixelrig.render.gl import GlBackend, release

    gc.collect()  # envs nobody holds are closed by their finalizers
    leaked = [b for b in gc.get_objects() if isinstance(b, GlBackend) and not b.closed]
    for backend in leaked:  # held by a failed test's traceback, or never closed: the context would stay
        backend.close()
    if leaked:
        print(f"\n{request.module.__name__}: {len(leaked)} gl backend(s) left open, closed", file=sys.stderr)
    release()


@pytest.fixture
def release_gl():
    """Free the gl context after the test: pybullet's EGL plugin (another test's egl env) cannot start beside it.
    For ``pytestmark = pytest.mark.usefixtures("release_gl")``."""
    yield
    from pixelrig.render.gl import release

    release()


def bang_bang_action(space, rng: np.random.Generator) -> np.ndarray:
    """An action at the bounds of a Box ``space``: each component its low or its high, at random."""
    return np.where(rng.random(space.shape) < 0.5, space.low, space.high).astype(space.dtype)


def physics_state(client: int) -> list:
    """Every body's base pose and velocity and every joint's position, velocity and reaction forces:
    the simulation's observable state, for bitwise comparisons."""
    state = []
    for i in range(p.getNumBodies(physicsClientId=client)):
        b = p.getBodyUniqueId(i, physicsClientId=client)
        state.append(p.getBasePositionAndOrientation(b, physicsClientId=client))
        state.append(p.getBaseVelocity(b, physicsClientId=client))
        n = p.getNumJoints(b, physicsClientId=client)
        if n:
            state.append(p.getJointStates(b, list(range(n)), physicsClientId=client))
    return state


def assert_trees_equal(a, b, path: str = "") -> None:
    """Bitwise equality of nested dicts/tuples/lists/arrays/floats (NaN-safe, dtype-strict for arrays)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{path}: keys differ"
        for k in a:
            assert_trees_equal(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_trees_equal(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, f"{path}: array kind"
        if a.dtype == object:  # e.g. Gymnasium's per-env final_obs / final_info: compare what they hold
            for index in np.ndindex(a.shape):
                assert_trees_equal(a[index], b[index], f"{path}{list(index)}")
        else:
            assert a.tobytes() == b.tobytes(), f"{path}: arrays differ"
    elif isinstance(a, float):
        assert np.float64(a).tobytes() == np.float64(b).tobytes(), f"{path}: {a!r} != {b!r}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def child_pids() -> list[int]:
    """This process's child processes (from /proc: every thread's children), zombies included."""
    out = []
    for task in os.scandir(f"/proc/{os.getpid()}/task"):
        try:
            with open(os.path.join(task.path, "children")) as f:
                out += [int(pid) for pid in f.read().split()]
        except FileNotFoundError:
            pass  # the thread ended meanwhile
    return out


def new_children(before: set[int]) -> dict[int, list[str]]:
    """This process's children not in ``before`` with their command lines, but Python's resource tracker (which the
    first shared memory block starts, once)."""
    children = {}
    for pid in set(child_pids()) - before:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode().split("\0")
        except FileNotFoundError:
            continue  # gone meanwhile
        if "multiprocessing.resource_tracker" not in " ".join(argv):
            children[pid] = argv
    return children


@pytest.fixture(scope="session")
def xvfb() -> str:
    """A real X server (Xvfb) for the session; yields its DISPLAY. Skips where Xvfb is missing, except in CI
    (where `make test` installs it), which fails instead."""
    import shutil
    import subprocess

    if shutil.which("Xvfb") is None:
        if os.environ.get("CI"):
            pytest.fail("Xvfb is not installed (scripts/setup-system.sh installs it)")
        pytest.skip("Xvfb is not installed: run scripts/setup-system.sh")
    read, write = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as f:
        number = f.readline().strip()
    if not number:
        proc.kill()
        pytest.fail("Xvfb did not start")
    display = f":{number}"
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = display
    yield display
    if old is None:
        os.environ.pop("DISPLAY", None)
    else:
        os.environ["DISPLAY"] = old
    proc.terminate()
    proc.wait(timeout=10)


def assert_restores_exactly(env, fresh, snap, run, fresh_seed: int = 0) -> None:
    """``run(env)`` (the same actions, returning what they gave) equals itself, bit for bit, after restoring ``snap``
    into ``env`` in place, into ``env`` rebuilt, and from its bytes into ``fresh`` reset with ``fresh_seed``."""
    from pixelrig import Snapshot, restore

    restore(env, snap)
    first = run(env)
    restore(env, snap)
    assert_trees_equal(run(env), first)
    restore(env, snap, rebuild=True)
    assert_trees_equal(run(env), first)
    fresh.reset(seed=fresh_seed)
    restore(fresh, Snapshot.from_bytes(snap.to_bytes()))
    assert_trees_equal(run(fresh), first)


@pytest.fixture(scope="module")
def robomimic_run(tmp_path_factory: pytest.TempPathFactory):
    """A robomimic dataset of two PandaPush episodes (``tests.dataset_runs.record``): one to its TimeLimit, one cut
    by close() after 3 steps; ``(path, live episodes)``."""
    from tests.dataset_runs import record

    path = tmp_path_factory.mktemp("rm") / "push.hdf5"
    return path, record(path, "robomimic", [0, 1], cut_last=3)


@pytest.fixture(scope="module")
def lerobot_run(tmp_path_factory: pytest.TempPathFactory):
    """The same two episodes as a LeRobot dataset; ``(path, live episodes)``."""
    from tests.dataset_runs import record

    path = tmp_path_factory.mktemp("lr") / "push"
    return path, record(path, "lerobot", [0, 1], cut_last=3)
