"""Vector envs with pixels (one process per env, shared memory), worker failures, scripts without a __main__ guard,
and the CUDA -> EGL mapping."""

from __future__ import annotations

import functools
import os
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import pixelrig
from pixelrig import Camera
from pixelrig.render.egl_devices import EglDevice, egl_index_for, select_gpu, visible_cuda_devices
from pixelrig.vector.factory import EnvFactory
from pixelrig.vector.make import make_vec
from pixelrig.vector.process import ProcessVectorEnv
from pixelrig.vector.shared import SharedLayout

from .conftest import assert_trees_equal, child_pids, egl_or_skip, new_children
from .test_readme import ROOT
from .vector_helpers import dies_after_a_few_steps, fails_after_a_few_steps, kuka_unless_in_a_worker

CAM = Camera("c", width=32, height=32, eye=(0.0, -2.6, 0.45), target=(0.0, 0.0, 0.35), near=0.05, far=10.0,
             modalities=("rgb", "depth", "label"))


def test_async_pixels_in_shared_memory_match_single_envs() -> None:
    venv = make_vec("pixelrig/CartPole-v0", 2, cams=[CAM])
    singles = [pixelrig.PixelObs(gym.make("pixelrig/CartPole-v0"), cams=[CAM]) for _ in range(2)]
    try:
        assert isinstance(venv, ProcessVectorEnv) and len(venv.workers) == 2 and venv.shared_memory is not None
        obs, _ = venv.reset(seed=10)
        assert obs["c/rgb"].shape == (2, 32, 32, 3) and obs["c/depth"].dtype == np.float32
        shared = SharedLayout(venv.single_observation_space, 2).views(venv.shared_memory.buf)
        assert_trees_equal(obs, shared, "what the workers wrote into shared memory")  # a copy of it (copy=True)
        assert not np.shares_memory(obs["c/rgb"], shared["c/rgb"])
        for i, env in enumerate(singles):  # Gymnasium seeding: env i gets seed + i
            single, _ = env.reset(seed=10 + i)
            for key in single:
                np.testing.assert_array_equal(obs[key][i], single[key])
        actions = np.random.default_rng(0).uniform(-1, 1, (40, 2, 1)).astype(np.float32)
        prev_done = np.zeros(2, bool)
        for a in actions:
            obs, reward, terminated, truncated, _ = venv.step(a)
            for i, env in enumerate(singles):
                if prev_done[i]:  # Gymnasium 1.x autoreset: this step returned the reset obs
                    single, _ = env.reset()
                    s_reward, s_term = 0.0, False
                else:
                    single, s_reward, s_term, _, _ = env.step(a[i])
                np.testing.assert_array_equal(obs["c/label"][i], single["c/label"])
                assert reward[i] == s_reward and terminated[i] == s_term
            prev_done = terminated | truncated
    finally:
        venv.close()
        for env in singles:
            env.close()


def test_shared_layout_holds_every_space_kind_and_names_the_others() -> None:
    """The layout comes from the space alone: two layouts of one space over one block read what the other wrote, for
    Box, Discrete, MultiBinary and MultiDiscrete inside Dict and Tuple, each array aligned; other spaces are refused
    with the fix."""
    from multiprocessing import shared_memory

    from pixelrig.vector.shared import ALIGN, put

    space = gym.spaces.Dict({
        "img": gym.spaces.Box(0, 255, (5, 3, 3), np.uint8), "k": gym.spaces.Discrete(4),
        "t": gym.spaces.Tuple((gym.spaces.MultiBinary([2, 3]), gym.spaces.MultiDiscrete([3, 5]),
                               gym.spaces.Box(-1.0, 1.0, (), np.float64))),
    })
    space.seed(0)
    n = 3
    layout = SharedLayout(space, n)
    shm = shared_memory.SharedMemory(create=True, size=layout.nbytes)
    try:
        writer, reader = layout.views(shm.buf), SharedLayout(space, n).views(shm.buf)
        samples = [space.sample() for _ in range(n)]
        for i, sample in enumerate(samples):
            put(writer, i, sample)
        expected = gym.vector.utils.concatenate(space, samples, gym.vector.utils.create_empty_array(space, n))
        assert_trees_equal(reader, expected, "read back")
        leaves = [reader["img"], reader["k"], *reader["t"]]
        assert all(leaf.ctypes.data % ALIGN == 0 for leaf in leaves)
        assert gym.vector.utils.batch_space(space, n).contains(reader)
        del writer, reader, leaves
    finally:
        shm.close()
        shm.unlink()
    with pytest.raises(ValueError, match=re.escape("cannot be passed through shared memory from worker processes: "
                                                   "only Box, Discrete, MultiBinary and MultiDiscrete")) as err:
        SharedLayout(gym.spaces.Dict({"ok": gym.spaces.Discrete(2), "text": gym.spaces.Text(5)}), 2)
    assert "Text(" in str(err.value) and "vectorization_mode='sync'" in str(err.value)


def test_factories_pickle() -> None:
    factory = EnvFactory("pixelrig/CartPole-v0", cams=(CAM,), worker=3)
    assert pickle.loads(pickle.dumps(factory)) == factory


def test_sync_mode_and_seeds() -> None:
    a = make_vec("pixelrig/CartPole-v0", 2, cams=[CAM], vectorization_mode="sync")
    b = make_vec("pixelrig/CartPole-v0", 2, cams=[CAM], vectorization_mode="sync")
    try:
        assert_trees_equal(a.reset(seed=5)[0], b.reset(seed=5)[0])
        assert not np.array_equal(a.reset(seed=5)[0]["state"][0], a.reset(seed=5)[0]["state"][1])
    finally:
        a.close()
        b.close()


WORKERS = {"async": {}, "batched-2": {"vectorization_mode": "batched", "num_workers": 2}}
"""The two ways envs run in worker processes: one env each, and batched (one each here, over 2 workers)."""


@pytest.mark.parametrize("mode", WORKERS)
def test_worker_exception_is_raised_with_its_traceback(mode: str) -> None:
    venv = make_vec("pixelrig/Robot-v0", 2, pixels=False, **WORKERS[mode],
                    env_kwargs={"source": "kuka_iiwa/model.urdf", "reward_fn": fails_after_a_few_steps})
    try:
        venv.reset(seed=0)
        with pytest.raises(ArithmeticError) as err:
            for _ in range(10):
                venv.step(np.zeros((2, 7), np.float32))
        message = str(err.value)
        assert message.startswith("make_vec worker 0 failed: ") and "reward blew up at step 3 (on purpose)" in message
        assert "--- worker traceback ---" in message and "fails_after_a_few_steps" in message
        with pytest.raises(RuntimeError, match=re.escape("cannot go on after an earlier failure")):
            venv.step(np.zeros((2, 7), np.float32))
    finally:
        venv.close()


@pytest.mark.parametrize("mode", WORKERS)
def test_dead_worker_is_reported_not_a_hang(mode: str) -> None:
    venv = make_vec("pixelrig/Robot-v0", 2, pixels=False, **WORKERS[mode],
                    env_kwargs={"source": "kuka_iiwa/model.urdf", "reward_fn": dies_after_a_few_steps})
    try:
        venv.reset(seed=0)
        with pytest.raises(RuntimeError, match=r"a make_vec worker process died during step: worker \d "
                                               r"\(exit code 7\)"):
            for _ in range(10):
                venv.step(np.zeros((2, 7), np.float32))
    finally:
        venv.close()


def test_worker_dying_at_start_is_reported_with_its_exit_code_and_stderr() -> None:
    """The env's builder exits (code 3) in the worker processes only, after writing a line to stderr: make_vec
    raises at once, naming the worker, its exit code and the end of its stderr, and leaves no process behind."""
    builder = functools.partial(kuka_unless_in_a_worker, os.getpid())
    before = set(child_pids())
    with pytest.raises(RuntimeError) as err:
        make_vec("pixelrig/Robot-v0", 2, pixels=False, env_kwargs={"source": builder})
    message = str(err.value)
    assert re.match(r"a make_vec worker process died during start: worker [01] \(exit code 3\), its stderr: ",
                    message), message
    assert "kuka_unless_in_a_worker: this worker goes down on purpose" in message
    assert not new_children(before)


VECTOR_BLOCK = (ROOT / "docs" / "vector.md").read_text().split("```python\n", 1)[1].split("```")[0]


def test_the_vector_page_block_runs_as_a_plain_script(tmp_path: Path, gl_required: None) -> None:
    """The first block of the manual's vector-env page (docs/vector.md), saved as a script without an
    ``if __name__ == "__main__":`` guard and run with ``python script.py``, works: worker processes do not import the
    script again."""
    assert "__main__" not in VECTOR_BLOCK and "make_vec" in VECTOR_BLOCK
    script = tmp_path / "train.py"
    script.write_text(VECTOR_BLOCK + textwrap.dedent("""
        print("shapes", obs["front/rgb"].shape, flush=True)
    """))
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "shapes (8, 84, 84, 3)", out.stdout
    assert "bootstrapping" not in out.stderr and "Traceback" not in out.stderr, out.stderr[-3000:]


def test_bad_configuration_raises_here_with_its_own_error() -> None:
    with pytest.raises(FileNotFoundError, match=re.escape("robot file 'nope.urdf' not found")):
        make_vec("pixelrig/Robot-v0", 2, env_kwargs={"source": "nope.urdf"})
    with pytest.raises(ValueError, match=re.escape("num_envs=0 must be an integer >= 1")):
        make_vec("pixelrig/CartPole-v0", 0)
    with pytest.raises(ValueError, match=re.escape("vectorization_mode must be one of ('async', 'sync', 'batched')")):
        make_vec("pixelrig/CartPole-v0", 2, vectorization_mode="threads")


def test_egl_in_one_process_is_refused_and_async_egl_works() -> None:
    egl_or_skip()
    with pytest.raises(ValueError, match=re.escape("pybullet's EGL plugin allows one client per process; use "
                                                   "vectorization_mode='async'")):
        make_vec("pixelrig/CartPole-v0", 2, renderer="egl", vectorization_mode="sync")
    venv = make_vec("pixelrig/CartPole-v0", 2, cams=[CAM], renderer="egl")
    try:
        obs, _ = venv.reset(seed=0)
        for i in range(2):  # each worker is its own EGL client and sees its own cart and pole (body 1)
            assert obs["c/rgb"][i].std() > 5 and (obs["c/label"][i] == 1).sum() > 20
    finally:
        venv.close()


# ---- CUDA -> EGL mapping, on fake device lists -------------------------------------------------------------

# a 4-GPU node whose EGL list is not in CUDA order, plus Mesa's software device at the end
NODE = [EglDevice(0, cuda=2), EglDevice(1, cuda=0), EglDevice(2, cuda=3), EglDevice(3, cuda=1),
        EglDevice(4, software=True)]


@pytest.mark.parametrize("cuda_visible,gpu,rank,expected", [
    (None, 0, None, 1),            # cuda:0 is EGL device 1
    (None, 3, None, 2),
    ("2,3", 0, None, 0),           # the process sees physical GPUs 2 and 3: its cuda:0 is physical 2 = EGL 0
    ("2,3", 1, None, 2),
    ("2,3", None, 0, 0),           # ranks spread over the visible GPUs
    ("2,3", None, 1, 2),
    ("2,3", None, 2, 0),
    ("1", None, 5, 3),
    (None, None, None, 1),         # no gpu, no rank: the first visible GPU
    ("3,-1,0", 1, None, None),     # CUDA stops at the first invalid entry: only GPU 3 is visible
])
def test_cuda_to_egl_mapping(cuda_visible, gpu, rank, expected) -> None:
    if expected is None:
        with pytest.raises(ValueError, match=re.escape("gpu=1 is not one of the 1 visible CUDA devices")):
            egl_index_for(NODE, gpu=gpu, rank=rank, cuda_visible=cuda_visible)
    else:
        assert egl_index_for(NODE, gpu=gpu, rank=rank, cuda_visible=cuda_visible) == expected


def test_mapping_errors_name_what_exists() -> None:
    with pytest.raises(ValueError, match=re.escape("no EGL device is CUDA device 7; EGL devices: EGL 0 = CUDA 2, "
                                                   "EGL 1 = CUDA 0, EGL 2 = CUDA 3, EGL 3 = CUDA 1, EGL 4 = software")):
        egl_index_for(NODE, gpu=0, cuda_visible="7")
    with pytest.raises(ValueError, match=re.escape("no CUDA device is visible to map to EGL")):
        egl_index_for([EglDevice(0, software=True)], gpu=0)
    with pytest.raises(ValueError, match=re.escape("names GPUs by UUID")):
        visible_cuda_devices(NODE, "GPU-1b2c3d4e-aaaa-bbbb-cccc-000000000000")


def test_select_gpu_on_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a request nothing changes; a request on a machine without CUDA devices is a clear error."""
    monkeypatch.delenv("PIXELRIG_GPU", raising=False)
    assert select_gpu() is None
    from pixelrig.render.egl_devices import list_egl_devices

    if any(d.cuda is not None for d in list_egl_devices()):
        pytest.skip("this machine has CUDA EGL devices: the real mapping is checked by benchmarks/gpu_check.py")
    with pytest.raises(ValueError, match=re.escape("no CUDA device is visible to map to EGL")):
        select_gpu(gpu=0)


@pytest.mark.skipif(__import__("pixelrig.vector.autoreset", fromlist=["x"]).AutoresetMode is not None,
                    reason="gymnasium 1.0's case: CI's gym-range stage runs it there")
def test_gymnasium_1_0_refuses_every_mode_but_next_step() -> None:
    """On gymnasium 1.0 (no AutoresetMode: next-step autoreset only) another mode is refused naming the upgrade, and
    next-step has no enum."""
    import re

    from pixelrig.vector.autoreset import NEXT_STEP, SAME_STEP, autoreset_enum, autoreset_name

    assert autoreset_name(NEXT_STEP) == NEXT_STEP and autoreset_enum(NEXT_STEP) is None
    with pytest.raises(ValueError, match="^" + re.escape(f"autoreset_mode={SAME_STEP!r} needs gymnasium >= 1.1 (this "
                                                         "gymnasium has next-step autoreset only): pip install "
                                                         "'gymnasium>=1.1'") + "$"):
        autoreset_name(SAME_STEP)
