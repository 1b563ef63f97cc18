"""Picklable callables for vector-env tests (spawned workers import them by name)."""

from __future__ import annotations

import os


def fails_after_a_few_steps(env) -> float:
    if env.elapsed_steps >= 3:
        raise ArithmeticError("reward blew up at step 3 (on purpose)")
    return 0.0


def dies_after_a_few_steps(env) -> float:
    if env.elapsed_steps >= 3:
        os._exit(7)
    return 0.0
