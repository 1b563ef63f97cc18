"""Checks at import that pybullet was built with numpy, so that ``getCameraImage`` returns arrays, not flat tuples.

pybullet ships wheels for CPython <= 3.11 only; on newer Pythons pip builds it from source, and in pip's default
isolated build environment numpy is absent, so the build silently falls back to returning every pixel as a Python
number in flat tuples (slow, and a different type). Importing this module runs :func:`check_pybullet_numpy`: a few
microseconds when pybullet reports a numpy build, one 1×1 render in a DIRECT client otherwise.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

PYBULLET_VERSION = "3.2.7"
"""The pybullet release pixelrig pins (pyproject.toml)."""


def reinstall_commands(python: str | None = None) -> list[str]:
    """The shell commands that rebuild pybullet with numpy present, for the interpreter ``python``.

    Args:
        python: the interpreter to fix; default the running one (``sys.executable``).

    Returns:
        Two commands: install numpy and the build tools, then rebuild pybullet from source without build
        isolation (so the build sees numpy) and without pip's wheel cache (which may hold the tuple build).
    """
    import shlex  # only on the failure path: the check runs at every import

    py = shlex.quote(python or sys.executable)
    return [
        f"{py} -m pip install 'numpy>=1.26,<3' setuptools wheel",
        f"{py} -m pip install --force-reinstall --no-deps --no-build-isolation --no-cache-dir "
        f"--no-binary pybullet pybullet=={PYBULLET_VERSION}",
    ]


def camera_image_problem(image: Sequence[Any]) -> str | None:
    """What is wrong, for pixelrig, with one ``getCameraImage`` result; ``None`` when nothing is.

    Pure: looks only at the value given.

    Args:
        image: ``(width, height, rgba, depth, seg)`` as ``pybullet.getCameraImage`` returned it.

    Returns:
        ``None`` when rgba, depth and seg are numpy arrays of shapes (h, w, 4), (h, w), (h, w) and dtypes uint8,
        float32, int32 (what a pybullet built with numpy returns); otherwise one sentence saying what came back.
    """
    width, height, rgba, depth, seg = image
    expected = (("rgba", rgba, (height, width, 4), np.uint8), ("depth", depth, (height, width), np.float32),
                ("seg", seg, (height, width), np.int32))
    for name, value, shape, dtype in expected:
        if not isinstance(value, np.ndarray):
            size = f" of {len(value)} values" if isinstance(value, Sequence) else ""
            return (f"getCameraImage returned {name} as a flat {type(value).__name__}{size}, not a "
                    f"{np.dtype(dtype).name} array of shape {shape}")
        if value.shape != shape or value.dtype != dtype:
            return (f"getCameraImage returned {name} as a {value.dtype.name} array of shape {value.shape}, not "
                    f"{np.dtype(dtype).name} {shape}")
    return None


def numpy_build_error(problem: str, pybullet_file: str | None = None, python: str | None = None) -> ImportError:
    """The error raised when pybullet was built without numpy: what came back, why, and the commands that fix it.

    Args:
        problem: :func:`camera_image_problem`'s sentence.
        pybullet_file: where the offending pybullet module lives (named in the message when given).
        python: the interpreter to fix (default the running one).
    """
    where = f" ({pybullet_file})" if pybullet_file else ""
    commands = "\n".join(f"    {c}" for c in reinstall_commands(python))
    return ImportError(
        f"pixelrig needs pybullet built with numpy, and this pybullet{where} was built without it: {problem}. "
        f"pybullet has no wheels for Python > 3.11, so pip builds it from source, and in pip's isolated build "
        f"environment numpy is absent. Rebuild it with numpy present:\n{commands}\n"
        f"(in a pixelrig checkout, `make test PYTHON=python3.X` does this and caches the wheel once per machine)."
    )


def check_pybullet_numpy(pybullet: ModuleType | Any | None = None) -> None:
    """Raise :func:`numpy_build_error` unless ``pybullet.getCameraImage`` returns numpy arrays.

    When pybullet says it was built with numpy (``isNumpyEnabled()``, a compile-time flag: a few microseconds)
    nothing else is done. Otherwise one 1×1 TinyRenderer image is rendered in a DIRECT client of its own and
    :func:`camera_image_problem` judges what came back.

    Args:
        pybullet: the pybullet module (default: ``import pybullet``); tests pass a stand-in.

    Raises:
        ImportError: getCameraImage does not return numpy arrays; the message names the fix.
    """
    if pybullet is None:
        import pybullet
    is_numpy_enabled = getattr(pybullet, "isNumpyEnabled", None)
    if is_numpy_enabled is not None and is_numpy_enabled():
        return
    client = pybullet.connect(pybullet.DIRECT)
    try:
        image = pybullet.getCameraImage(1, 1, renderer=pybullet.ER_TINY_RENDERER, physicsClientId=client)
    finally:
        pybullet.disconnect(physicsClientId=client)
    problem = camera_image_problem(image)
    if problem is not None:
        raise numpy_build_error(problem, getattr(pybullet, "__file__", None))


check_pybullet_numpy()
