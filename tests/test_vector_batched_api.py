"""The batched vector env's API (pixelrig.vector.batched) on scripted envs, no physics nor pixels: quick enough to run
for every mutant. Worker processes against this process, result for result (seeds, partial resets, options, calls,
attributes, wrapper stacks), each refusal with its message, the pure helpers (worker_slices, chunk_size,
check_workers, batched_renderer) under Hypothesis, and what close frees."""

from __future__ import annotations

import functools
import gc
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pixelrig.vector.autoreset import NEXT_STEP, SAME_STEP, AutoresetMode
from pixelrig.vector.batched import (
    BatchedVectorEnv,
    EnvBatch,
    batched_renderer,
    check_workers,
    chunk_size,
    worker_slices,
)

from .conftest import assert_trees_equal, child_pids, new_children
from .test_vector_autoreset_properties import Scripted


class Probe(Scripted):
    """A scripted env that keeps the options of its last reset and has a method with arguments."""

    def __init__(self) -> None:
        super().__init__()
        self.last_options: dict[str, Any] | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.last_options = None if options is None else dict(options)
        return super().reset(seed=seed, options=options)

    def scaled(self, k: int, *, offset: int = 0) -> int:
        return k * self.t + offset

    def render(self) -> int:  # type: ignore[override]
        return self.t


class Touchy(Probe):
    """A Probe with an attribute that refuses to be set and a method that fails."""

    @property
    def frozen(self) -> int:
        return 0

    @frozen.setter
    def frozen(self, value: int) -> None:
        raise ArithmeticError(f"frozen cannot be set to {value}")

    def fails(self) -> None:
        raise ArithmeticError("fails (on purpose)")


class Loose(Probe):
    """A Probe whose step returns numpy scalars: a float32 reward and int8 flags (as an env that hands on its
    MultiBinary action might)."""

    def step(self, action: Any) -> tuple[np.ndarray, Any, Any, Any, dict[str, Any]]:
        obs, reward, _, _, info = super().step(action)
        return obs, np.float32(reward), np.int8(action[0]), np.int8(action[1]), info


def limited_probe() -> gym.Env:
    """A Probe under a wrapper (its stack two deep)."""
    return gym.wrappers.TimeLimit(Probe(), 100)


class Broken(gym.Env):
    """An env whose constructor fails (after the first env of a batch was built)."""

    def __init__(self) -> None:
        raise ArithmeticError("Broken env (on purpose)")


# ---- the pure helpers ------------------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.integers(1, 64).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))))
def test_worker_slices_are_consecutive_and_balanced_the_first_taking_the_extra(case: tuple[int, int]) -> None:
    num_envs, num_workers = case
    slices = worker_slices(num_envs, num_workers)
    assert len(slices) == num_workers
    assert [i for s in slices for i in s] == list(range(num_envs))
    sizes = [len(s) for s in slices]
    assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1
    assert sizes == sorted(sizes, reverse=True)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10_000))
def test_chunk_size_is_the_smallest_part_of_at_least_4_envs_that_makes_at_most_4_parts(n: int) -> None:
    chunk = chunk_size(n)
    assert chunk >= 4 and -(-n // chunk) <= 4
    assert chunk == 4 or -(-n // (chunk - 1)) > 4


def test_check_workers_refuses_what_is_not_1_to_num_envs() -> None:
    for good in (1, 2, 3):
        check_workers(3, good)
    for bad in (0, -1, 1.0, 2.5, True, "2", None):
        with pytest.raises(ValueError, match=re.escape(f"num_workers={bad!r} must be an integer >= 1 (1 holds every "
                                                       "env in this process)")):
            check_workers(3, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape("num_workers=4 is more than num_envs=3: each worker needs at least "
                                                   "one env; pass num_workers <= 3")):
        check_workers(3, 4)


def test_batched_renderer_refuses_egl_before_probing_it_and_allows_one_env_per_worker(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked for by name, a one-client-per-process backend with several envs per worker is refused before it is
    probed (resolving 'egl' loads its plugin, which can kill the process where EGL is broken); with one env per
    worker it is allowed; chosen by 'auto', the same rule holds after the choice. Here the choice is made to be egl,
    as on a GPU machine without OpenGL 4.3."""
    import pixelrig.vector.batched as batched

    resolved: list[str | None] = []

    def resolve(renderer: str | None) -> str:
        resolved.append(renderer)
        return "egl"

    monkeypatch.setattr(batched, "resolve_renderer", resolve)
    monkeypatch.delenv("PIXELRIG_RENDERER", raising=False)
    with pytest.raises(ValueError, match=re.escape("renderer='egl' -> 'egl', num_envs=3, num_workers=2): pybullet's "
                                                   "EGL plugin allows one client per process")):
        batched_renderer("egl", 3, 2)
    assert resolved == []  # refused before probing
    assert batched_renderer("egl", 2, 2) == "egl" and resolved == ["egl"]
    assert batched_renderer("auto", 2, 2) == "egl"
    with pytest.raises(ValueError, match=re.escape("renderer='auto' -> 'egl', num_envs=3, num_workers=2): pybullet's "
                                                   "EGL plugin allows one client per process")):
        batched_renderer("auto", 3, 2)
    assert resolved == ["egl", "auto", "auto"]


def test_batched_renderer_defaults_to_gl_reads_the_variable_and_refuses_egl_for_several_envs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIXELRIG_RENDERER", "tiny")
    assert batched_renderer(None, 4, 1) == "tiny"
    assert batched_renderer("tiny", 4, 2) == "tiny"
    monkeypatch.setenv("PIXELRIG_RENDERER", "  ")
    with pytest.raises(ValueError, match="'vulkan'"):
        batched_renderer("vulkan", 1, 1)
    message = ("make_vec(vectorization_mode='batched', renderer='egl' -> 'egl', num_envs=3, num_workers=2): pybullet's "
               "EGL plugin allows one client per process; use renderer='gl' (every env's rig in one "
               "pass) or vectorization_mode='async'")
    with pytest.raises(ValueError, match=re.escape(message)):
        batched_renderer("egl", 3, 2)
    monkeypatch.setenv("PIXELRIG_RENDERER", "egl")
    with pytest.raises(ValueError, match=re.escape("renderer='egl' -> 'egl', num_envs=2, num_workers=1")):
        batched_renderer(None, 2, 1)
    from pixelrig.render import probe_gl

    if probe_gl().ok:  # where gl runs: the default when nothing is asked
        monkeypatch.delenv("PIXELRIG_RENDERER")
        assert batched_renderer(None, 2, 1) == "gl"
        monkeypatch.setenv("PIXELRIG_RENDERER", " ")
        assert batched_renderer(None, 2, 1) == "gl"


# ---- worker processes against this process -------------------------------------------------------------------

def run(venv: BatchedVectorEnv) -> list:
    """Seeds (an int, a list with a None), partial resets with options, steps that end episodes, calls, attributes:
    everything the vector env returned."""
    n = venv.num_envs
    out: list = [venv.reset(seed=3), venv.get_attr("np_random_seed"), venv.np_random_seed]
    out.append(venv.reset(seed=[7, None, 9][:n]))
    out.append(venv.get_attr("last_options"))
    options = {"k": 1, "reset_mask": np.array([True, False, True][:n])}
    out.append(venv.reset(options=options))
    assert "reset_mask" in options, "reset changed the caller's options"
    out.append(venv.get_attr("last_options"))
    for flags in ([[0, 0]] * n, [[1, 0], [0, 0], [0, 1]][:n], [[0, 0]] * n, [[0, 1]] * n, [[0, 0]] * n):
        out.append(venv.step(np.array(flags, np.int8)))
        out.append(venv.call("scaled", 10, offset=2))
    venv.set_attr("t", 5)
    out.append(venv.get_attr("t"))
    venv.set_attr("t", list(range(n)))
    out.append(venv.get_attr("t"))
    out.append(venv.call("scaled", 10, offset=2))
    out.append(venv.call("render"))
    out.append(venv.render())
    out.append(venv.wrapper_names())
    out.append([g.bit_generator.state for g in venv.np_random])
    return out


@pytest.mark.parametrize("mode", [NEXT_STEP, SAME_STEP])
def test_two_workers_give_what_one_process_gives(mode: str) -> None:
    if AutoresetMode is None and mode == SAME_STEP:
        pytest.skip("gymnasium 1.0 has next-step autoreset only")
    one = BatchedVectorEnv([limited_probe] * 3, autoreset_mode=mode)
    two = BatchedVectorEnv([limited_probe] * 3, num_workers=2, autoreset_mode=mode)
    try:
        assert one._local is not None and not one.workers and one.shared_memory is None
        assert two._local is None and len(two.workers) == 2 and two.slices == [range(0, 2), range(2, 3)]
        assert two.single_observation_space == one.single_observation_space == Scripted.observation_space
        assert two.observation_space == one.observation_space == gym.vector.utils.batch_space(
            Scripted.observation_space, 3)
        assert two.action_space == one.action_space and two.metadata == one.metadata
        a, b = run(one), run(two)
        assert_trees_equal(a, b)
        assert a[1] == a[2] == (3, 4, 5) and a[4] == (None, None, None)
        assert a[6] == ({"k": 1}, None, {"k": 1})  # only the masked envs reset, with the options but not the mask
        assert a[8] == (12, 12, 12)  # each env's t (1 after a reset and a step) times 10, plus 2
        assert a[17] == (5, 5, 5) and a[18] == (0, 1, 2) and a[19] == (2, 12, 22)
        assert a[20] == a[21] == (0, 1, 2)
        assert a[22] == [("gymnasium.wrappers.common.TimeLimit", "tests.test_vector_batched_api.Probe")] * 3
    finally:
        one.close()
        two.close()


def test_copy_false_hands_out_the_same_arrays() -> None:
    """copy=False hands out the same arrays, overwritten by the next call; copy=True new ones each call."""
    shared = BatchedVectorEnv([Probe] * 2, copy=False)
    copied = BatchedVectorEnv([Probe] * 2)
    try:
        first, _ = shared.reset(seed=0)
        second, *_ = shared.step(np.zeros((2, 2), np.int8))
        assert second is first and first[:, 1].tolist() == [1.0, 1.0]
        first, _ = copied.reset(seed=0)
        second, *_ = copied.step(np.zeros((2, 2), np.int8))
        assert second is not first and first[:, 1].tolist() == [0.0, 0.0] and second[:, 1].tolist() == [1.0, 1.0]
    finally:
        shared.close()
        copied.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_bad_calls_are_refused_naming_the_fix_and_change_nothing(workers: int) -> None:
    venv = BatchedVectorEnv([Probe] * 2, num_workers=workers)
    try:
        venv.reset(seed=0)
        with pytest.raises(ValueError, match=re.escape("reset(seed=[...]) got 3 seeds for num_envs=2: pass one per "
                                                       "env, an int, or None")):
            venv.reset(seed=[1, 2, 3])
        for bad in ([True, False], np.array([1, 0]), np.array([True, False, True]), np.array([[True, False]])):
            with pytest.raises(ValueError, match=re.escape("options['reset_mask'] must be a bool numpy array of shape "
                                                           f"(2,): got {bad!r}")):
                venv.reset(options={"reset_mask": bad})
        with pytest.raises(ValueError, match=r"^options\['reset_mask'\] resets no env: set at least one entry to "
                                             r"True$"):
            venv.reset(options={"reset_mask": np.zeros(2, np.bool_)})
        with pytest.raises(ValueError, match=re.escape("step() got 3 actions for num_envs=2")):
            venv.step(np.zeros((3, 2), np.int8))
        for name in ("reset", "step", "close"):
            with pytest.raises(ValueError, match=re.escape(f"call({name!r}): use the vector env's own {name}() "
                                                           "instead")):
                venv.call(name)
        with pytest.raises(ValueError, match=re.escape("set_attr('t') got 3 values for num_envs=2: pass one value, or "
                                                       "one per env")):
            venv.set_attr("t", [1, 2, 3])
        assert venv.get_attr("t") == (0, 0) and venv.get_attr("episode") == (0, 0)
        venv.step(np.zeros((2, 2), np.int8))  # still usable: a refusal is no failure
    finally:
        venv.close()
    for call in (lambda: venv.reset(), lambda: venv.step(np.zeros((2, 2), np.int8)), lambda: venv.get_attr("t"),
                 lambda: venv.set_attr("t", 1), venv.wrapper_names):
        with pytest.raises(gym.error.ClosedEnvironmentError,
                           match=r"^this batched vector env is closed: make a new one with make_vec$"):
            call()


def test_construction_refuses_no_envs_and_closes_what_it_built() -> None:
    with pytest.raises(ValueError, match=r"^BatchedVectorEnv needs at least one env_fn$"):
        BatchedVectorEnv([])
    built: list[Probe] = []

    def probe() -> Probe:
        built.append(Probe())
        built[-1].close = lambda: setattr(built[-1], "closed_here", True)  # type: ignore[method-assign]
        return built[-1]

    with pytest.raises(ArithmeticError, match="Broken env"):
        EnvBatch([probe, Broken])
    assert len(built) == 1 and getattr(built[0], "closed_here", False)
    batch = EnvBatch([Probe] * 5)
    assert batch.chunk_envs == chunk_size(5) and batch.autoreset_mode == NEXT_STEP
    assert batch.autoreset.tolist() == [False] * 5 and batch.autoreset.dtype == np.bool_
    batch.close()
    assert batch.envs == []


def test_workers_take_their_spaces_from_spaces_fn_and_close_frees_them() -> None:
    spaces_built: list[int] = []

    def spaces_fn() -> Probe:
        spaces_built.append(os.getpid())
        return Probe()

    venv = BatchedVectorEnv([Probe] * 2, num_workers=2, spaces_fn=spaces_fn)
    block = venv.shared_memory.name  # type: ignore[union-attr]
    workers = list(venv.workers)
    try:
        assert spaces_built == [os.getpid()]
        assert all(w.alive for w in workers)
        venv.reset(seed=1)
    finally:
        venv.close()
    assert all(not w.alive for w in workers) and venv._observations is None
    with pytest.raises(FileNotFoundError):
        from multiprocessing import shared_memory

        shared_memory.SharedMemory(name=block)


@pytest.mark.parametrize("what", ["wrapper_names", "call", "set_attr"])
def test_a_worker_killed_between_calls_is_reported_by_the_next_one(what: str) -> None:
    """A worker process killed while idle: the next call names what it was doing and the worker's exit code, and
    the vector env refuses to go on."""
    import signal
    import time

    venv = BatchedVectorEnv([Probe] * 2, num_workers=2)
    try:
        victim = venv.workers[1]
        os.kill(victim.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while victim.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        calls = {"wrapper_names": venv.wrapper_names, "call": lambda: venv.get_attr("t"),
                 "set_attr": lambda: venv.set_attr("t", 1)}
        with pytest.raises(RuntimeError, match=re.escape(f"a make_vec worker process died during {what}: worker 1 "
                                                         f"(exit code {-signal.SIGKILL})")):
            calls[what]()
        with pytest.raises(RuntimeError, match=re.escape("cannot go on after an earlier failure (a worker process died "
                                                         f"during {what})")):
            venv.reset()
    finally:
        venv.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_call_at_calls_the_envs_named_in_their_order_and_no_other(workers: int) -> None:
    """SB3's ``env_method(..., indices=)`` rides on call_at: in this process and across workers alike, only the
    envs named are called, and their answers come back in the order named."""
    venv = BatchedVectorEnv([Probe] * 3, num_workers=workers)
    try:
        venv.reset(seed=0)
        venv.set_attr("t", [5, 6, 7])
        assert venv.call_at([2, 0], "scaled", 10, offset=1) == (71, 51)
        assert len(venv.call_at([1], "set_wrapper_attr", "t", 9)) == 1
        assert venv.get_attr("t") == (5, 9, 7)
        with pytest.raises(IndexError, match=re.escape("env indices [3, -1] are out of range for num_envs=3")):
            venv.call_at([0, 3, -1], "scaled", 1)
    finally:
        venv.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_call_or_set_attr_that_raises_leaves_the_vector_env_usable(workers: int) -> None:
    """What an env raises in call or set_attr is raised here, and only that call failed: unlike a failed step or
    reset, it leaves no env half-way, so the vector env goes on."""
    venv = BatchedVectorEnv([Touchy] * 2, num_workers=workers)
    try:
        venv.reset(seed=0)
        with pytest.raises(ArithmeticError, match=re.escape("frozen cannot be set to 1")):
            venv.set_attr("frozen", 1)
        with pytest.raises(ArithmeticError, match=re.escape("fails (on purpose)")):
            venv.call("fails")
        observations, *_ = venv.step(np.zeros((2, 2), np.int8))
        assert observations[:, 1].tolist() == [1.0, 1.0] and venv.get_attr("t") == (1, 1)
    finally:
        venv.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_rewards_and_flags_have_gymnasiums_dtypes_whatever_the_env_returns(workers: int) -> None:
    """Rewards come back float64 and terminations and truncations bool, as Gymnasium's vector envs give them, even
    from an env whose step returns a float32 reward and int8 flags."""
    venv = BatchedVectorEnv([Loose] * 3, num_workers=workers)
    try:
        venv.reset(seed=0)
        _, rewards, terminated, truncated, _ = venv.step(np.array([[1, 0], [0, 1], [0, 0]], np.int8))
        assert (rewards.dtype, terminated.dtype, truncated.dtype) == (np.float64, np.bool_, np.bool_)
        assert rewards.tolist() == [1.0, 1.0, 1.0]
        assert terminated.tolist() == [True, False, False] and truncated.tolist() == [False, True, False]
    finally:
        venv.close()


def test_put_writes_one_envs_slot_and_refuses_a_tuple_of_another_length() -> None:
    """shared.put: a nested observation goes into its env's slot only; a Tuple observation with a part missing (or
    one too many) raises (an env whose observation is not of its space), not passed over in silence."""
    from gymnasium.vector.utils import create_empty_array

    from pixelrig.vector.shared import put

    space = gym.spaces.Dict({"t": gym.spaces.Tuple((gym.spaces.Box(0.0, 1.0, (2,)), gym.spaces.Discrete(3)))})
    batch = create_empty_array(space, n=2, fn=np.zeros)
    put(batch, 1, {"t": (np.ones(2, np.float32), 2)})
    assert batch["t"][0].tolist() == [[0.0, 0.0], [1.0, 1.0]] and batch["t"][1].tolist() == [0, 2]
    for bad in ((np.ones(2, np.float32),), (np.ones(2, np.float32), 1, 1)):
        with pytest.raises(ValueError, match="zip"):
            put(batch, 0, {"t": bad})


# ---- what describes the batch, the workers' start and their end ------------------------------------------------

class Described(Probe):
    """A Probe with a render mode and metadata of its own."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 7}

    def __init__(self) -> None:
        super().__init__()
        self.render_mode = "rgb_array"


@pytest.mark.parametrize("workers", [1, 2])
def test_the_batchs_spaces_metadata_and_modes_are_its_envs_batched(workers: int) -> None:
    """Spaces batched num_envs deep, the envs' metadata with the autoreset mode added (as Gymnasium's vector envs
    add it), their render mode, and the worker count and autoreset mode asked for."""
    mode = SAME_STEP if AutoresetMode is not None else NEXT_STEP
    venv = BatchedVectorEnv([Described] * 3, num_workers=workers, autoreset_mode=mode)
    try:
        assert venv.single_observation_space == Described.observation_space
        assert venv.single_action_space == Described.action_space
        assert venv.observation_space == gym.vector.utils.batch_space(Described.observation_space, 3)
        assert venv.action_space == gym.vector.utils.batch_space(Described.action_space, 3)
        assert venv.action_space.shape == (3, 2) and venv.observation_space.shape == (3, 2)
        assert venv.render_mode == "rgb_array" and venv.num_workers == workers
        expected = dict(Described.metadata)
        if AutoresetMode is not None:
            assert venv.autoreset_mode is AutoresetMode.SAME_STEP
            expected["autoreset_mode"] = AutoresetMode.SAME_STEP
        else:
            assert venv.autoreset_mode is None
        assert venv.metadata == expected
    finally:
        venv.close()


class Environ(Probe):
    """A Probe that keeps the MPI launcher's variables and the tests' own it was built with."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = {k: v for k, v in os.environ.items() if k.startswith(("OMPI_", "PMI_", "PIXELRIG_TEST_"))}


def test_workers_start_without_an_mpi_launchers_variables_and_with_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under mpirun (RLlib or SB3 on a cluster), a worker that kept OMPI_* / PMI_* would try to join the MPI job:
    the workers start without them, and with every other variable. The envs of this process see this process's."""
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "3")
    monkeypatch.setenv("PMI_RANK", "3")
    monkeypatch.setenv("PIXELRIG_TEST_KEPT", "yes")
    venv = BatchedVectorEnv([Environ] * 2, num_workers=2)
    try:
        assert venv.get_attr("seen") == ({"PIXELRIG_TEST_KEPT": "yes"},) * 2
    finally:
        venv.close()
    venv = BatchedVectorEnv([Environ] * 2, num_workers=1)
    try:
        everything = {"OMPI_COMM_WORLD_RANK": "3", "PMI_RANK": "3", "PIXELRIG_TEST_KEPT": "yes"}
        assert venv.get_attr("seen") == (everything,) * 2
    finally:
        venv.close()


class Chatty(Probe):
    """A Probe that says where it was built on stdout and on stderr."""

    def __init__(self) -> None:
        super().__init__()
        print(f"chatty env in process {os.getpid()} (stdout)", flush=True)
        print(f"chatty env in process {os.getpid()} (stderr)", file=sys.stderr, flush=True)


def test_what_the_workers_envs_print_reaches_this_process_stdout_and_stderr(capfd: pytest.CaptureFixture) -> None:
    """An env's prints and warnings are the user's: a worker's stdout and stderr come out on this process's."""
    venv = BatchedVectorEnv([Chatty] * 2, num_workers=2)
    try:
        pids = [w.pid for w in venv.workers]
        out = err = ""
        deadline = time.monotonic() + 10  # stderr is copied by a thread of this process
        while time.monotonic() < deadline and not all(f"process {p} (stderr)" in err for p in pids):
            captured = capfd.readouterr()
            out, err = out + captured.out, err + captured.err
            time.sleep(0.05)
        captured = capfd.readouterr()
        out, err = out + captured.out, err + captured.err
    finally:
        venv.close()
    for pid in pids:
        assert f"chatty env in process {pid} (stdout)" in out, out
        assert f"chatty env in process {pid} (stderr)" in err, err


def test_an_env_that_raises_in_its_worker_is_raised_here_naming_the_worker() -> None:
    """The env a worker fails to build: its own exception type, the worker named, the worker's traceback; no
    process is left behind."""
    before = set(child_pids())
    with pytest.raises(ArithmeticError) as err:
        BatchedVectorEnv([Probe, Probe, Probe, Broken], num_workers=2)
    message = str(err.value)
    assert message.startswith("make_vec worker 1 failed: ArithmeticError: Broken env (on purpose)\n"
                              "--- worker traceback ---\n"), message
    assert 'raise ArithmeticError("Broken env (on purpose)")' in message, message
    assert not new_children(before)


def built_only_in_a_worker(parent: int) -> Probe:
    """A Probe that must not be built in process ``parent``."""
    if os.getpid() == parent:
        raise AssertionError("this env was built in the main process")
    return Probe()


def test_the_main_process_builds_only_the_first_env_for_the_spaces() -> None:
    """With workers, one env is built here for the spaces (without spaces_fn): the first, as documented."""
    venv = BatchedVectorEnv([Probe, functools.partial(built_only_in_a_worker, os.getpid())], num_workers=2)
    try:
        assert venv.reset(seed=0)[0].shape == (2, 2)
    finally:
        venv.close()


class FailsOnAsk(Probe):
    """A Probe whose reset raises when its options say so."""

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if options and options.get("fail"):
            raise ArithmeticError("reset failed (on purpose)")
        return super().reset(seed=seed, options=options)


def test_after_a_failed_reset_every_call_says_why_the_vector_env_cannot_go_on() -> None:
    """A reset that failed in a worker leaves envs half-way: the next call says so, word for word."""
    venv = BatchedVectorEnv([FailsOnAsk] * 2, num_workers=2)
    try:
        with pytest.raises(ArithmeticError, match=re.escape("make_vec worker 0 failed: ArithmeticError: reset failed")):
            venv.reset(options={"fail": True})
        refusal = ("this batched vector env cannot go on after an earlier failure (a worker failed during reset): "
                   "close it and make a new one")
        for call in (lambda: venv.step(np.zeros((2, 2), np.int8)), venv.reset, lambda: venv.get_attr("t")):
            with pytest.raises(RuntimeError) as err:
                call()
            assert str(err.value) == refusal
    finally:
        venv.close()


class Slow(Probe):
    """A Probe whose steps take ``STEP_S`` seconds and whose close takes as long, then writes a file."""

    STEP_S = 0.6

    def __init__(self, closed: str = "") -> None:
        super().__init__()
        self.closed_file = closed

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        time.sleep(self.STEP_S)
        return super().step(action)

    def close(self) -> None:
        time.sleep(self.STEP_S)
        if self.closed_file:
            Path(self.closed_file).write_text("closed")


def test_workers_are_waited_for_as_long_as_their_envs_take(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A step waits for its workers however long the envs take (a helper process's default wait would kill them),
    and close gives them CLOSE_TIMEOUT_S to close their envs (more than stop_all's default), here with both
    defaults made shorter than the envs' step and close."""
    from pixelrig.system import process

    monkeypatch.setitem(process.Helper.start.__func__.__kwdefaults__, "timeout", Slow.STEP_S / 3)
    monkeypatch.setattr(process.stop_all, "__defaults__", (Slow.STEP_S / 3,))
    files = [tmp_path / f"closed-{i}" for i in range(2)]
    venv = BatchedVectorEnv([functools.partial(Slow, str(f)) for f in files], num_workers=2)
    try:
        venv.reset(seed=0)
        observations, *_ = venv.step(np.zeros((2, 2), np.int8))
        assert observations[:, 1].tolist() == [1.0, 1.0]
    finally:
        venv.close()
    assert [f.read_text() for f in files] == ["closed", "closed"]


def test_close_closes_the_envs_of_this_process_and_a_refused_constructor_leaves_nothing_to_close(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """close() closes each env held in this process; a constructor that refused its arguments leaves an object
    whose clean-up (Gymnasium's __del__ calls close) raises nothing."""
    closed: list[int] = []

    def recorded() -> Probe:
        env = Probe()
        env.close = lambda: closed.append(id(env))  # type: ignore[method-assign]
        return env

    venv = BatchedVectorEnv([recorded] * 3, num_workers=1)
    venv.close()
    assert len(set(closed)) == 3
    unraisable: list[Any] = []
    gc.collect()  # what earlier tests left is not this test's to judge
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    for env_fns, workers in (([], 1), ([Probe], 2), ([Probe], 0)):
        try:
            BatchedVectorEnv(env_fns, num_workers=workers)
        except ValueError:
            pass
        else:
            raise AssertionError(f"BatchedVectorEnv({env_fns}, num_workers={workers}) did not refuse")
        gc.collect()
    assert [(u.exc_type, str(u.exc_value)) for u in unraisable] == []


def test_the_shared_block_is_its_aligned_leaves_end_to_end_and_a_refusal_says_the_fix() -> None:
    """SharedLayout packs the leaves from offset 0, each at the next ALIGN boundary, into a block that ends where
    the last leaf does (one byte for a space with no leaf); a space it cannot hold is refused word for word."""
    from pixelrig.vector.shared import ALIGN, SharedLayout

    space = gym.spaces.Tuple((gym.spaces.Box(0, 1, (2, 3), np.float32), gym.spaces.Discrete(5),
                              gym.spaces.MultiBinary(3)))
    layout = SharedLayout(space, 4)
    assert [leaf.offset for leaf in layout.tree] == [0, 2 * ALIGN, 3 * ALIGN]  # 96 bytes, then 32 (int64 x 4)
    assert layout.nbytes == 3 * ALIGN + 4 * 3  # MultiBinary: int8
    assert SharedLayout(gym.spaces.Dict({}), 4).nbytes == 1
    text = gym.spaces.Text(5)
    with pytest.raises(ValueError) as err:
        SharedLayout(gym.spaces.Dict({"text": text}), 2)
    assert str(err.value) == (
        f"the observation space {text!r} cannot be passed through shared memory from worker processes: only Box, "
        "Discrete, MultiBinary and MultiDiscrete spaces can (inside Dict and Tuple spaces too). Use "
        "vectorization_mode='sync' (or 'batched' with num_workers=1), or give the env such a space (e.g. with a "
        "gymnasium ObservationWrapper)")
