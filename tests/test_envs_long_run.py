"""Long run: 200 envs created, used and closed in one process, per backend; memory and file descriptors come
back to their baseline. Marked slow; CI runs it separately after `make test` (`make test-long`)."""

from __future__ import annotations

import gc
import os

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import PixelObs


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def cycle(renderer: str) -> None:
    env = PixelObs(gym.make("pixelrig/CartPole-v0", renderer=renderer))
    env.reset(seed=0)
    env.step(np.zeros(1, np.float32))
    env.close()


@pytest.mark.slow
def test_200_envs_leave_no_memory_or_file_descriptors_behind(backend_name: str) -> None:
    for _ in range(10):  # warm-up: import-time caches, the EGL driver's first load
        cycle(backend_name)
    gc.collect()
    rss0, fds0 = rss_bytes(), open_fds()
    for _ in range(200):
        cycle(backend_name)
    gc.collect()
    growth = rss_bytes() - rss0
    assert open_fds() == fds0, "file descriptors leaked"
    # allowance: allocator fragmentation, not per-env leaks (20 MB / 200 envs = 100 KB each at most)
    assert growth < 20 * 2**20, f"RSS grew by {growth / 2**20:.1f} MB over 200 envs"
