"""Pieces every benchmark section shares: the machine line, timing loops, table cells and the rig's cameras."""

from __future__ import annotations

import dataclasses
import os
import platform
import time
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import gymnasium as gym

from pixelrig.cameras.spec import Camera


def rig_cameras(env: gym.Env, size: int, n_cams: int, modalities: tuple[str, ...]) -> list[Camera]:
    """The env's default cameras (repeated if needed) at ``size``² with ``modalities``."""
    base = [Camera.from_dict(c) for c in env.unwrapped.default_cameras()]
    cams = [base[i % len(base)] for i in range(n_cams)]
    return [dataclasses.replace(c, name=f"{c.name}{i}", width=size, height=size, modalities=modalities)
            for i, c in enumerate(cams)]


def timed(fn: Callable[[], Any], frames: int) -> float:
    start = time.perf_counter()
    for _ in range(frames):
        fn()
    return frames / (time.perf_counter() - start)


def machine() -> str:
    """One line describing this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, pybullet {version('pybullet')}"


def cell(median: float, spread: list[float]) -> str:
    return f"{median:.1f} [{spread[0]:.1f}..{spread[1]:.1f}]"
