"""Picklable callables for vector-env tests (spawned workers import them by name)."""

from __future__ import annotations

import os
import sys


def fails_after_a_few_steps(env) -> float:
    if env.elapsed_steps >= 3:
        raise ArithmeticError("reward blew up at step 3 (on purpose)")
    return 0.0


def dies_after_a_few_steps(env) -> float:
    if env.elapsed_steps >= 3:
        os._exit(7)
    return 0.0


def kuka_unless_in_a_worker(parent_pid: int, client: int) -> int:
    """A RobotEnv builder: the kuka arm in the process ``parent_pid`` (where make_vec checks its configuration);
    anywhere else (a worker process) it says so on stderr and exits with code 3, as a crashing native library
    would."""
    if os.getpid() != parent_pid:
        sys.stderr.write("kuka_unless_in_a_worker: this worker goes down on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    import pybullet as p

    return p.loadURDF("kuka_iiwa/model.urdf", useFixedBase=True, physicsClientId=client)
