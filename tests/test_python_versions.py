"""Python 3.11 to 3.13: pixelrig refuses, at import and naming the fix, a pybullet built without numpy (what pip
builds on 3.12+ by default), and the supported versions are declared where pip and the Makefile read them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p
import pytest

from pixelrig.render._pybullet_check import (
    PYBULLET_VERSION,
    camera_image_problem,
    check_pybullet_numpy,
    reinstall_commands,
)

ROOT = Path(__file__).resolve().parents[1]
SUPPORTED = ((3, 11), (3, 12), (3, 13))


def as_built_without_numpy(image: tuple) -> tuple:
    """A getCameraImage result as pybullet built without numpy returns it (pybullet.c's #else branch): width, height,
    then rgba, depth and seg as flat tuples of Python ints / floats in row-major pixel order."""
    width, height, rgba, depth, seg = image
    return (width, height, tuple(int(v) for v in np.asarray(rgba).ravel()),
            tuple(float(v) for v in np.asarray(depth).ravel()), tuple(int(v) for v in np.asarray(seg).ravel()))


class NoNumpyPybullet:
    """The real pybullet, answering as a build without numpy does: isNumpyEnabled() is 0 (absent with
    numpy_flag=None) and getCameraImage returns flat tuples (arrays with flat=False). Counts connections, to tell the
    cheap path from the render."""

    def __init__(self, numpy_flag: bool | None = False, flat: bool = True) -> None:
        self.numpy_flag = numpy_flag
        self.flat = flat
        self.connects = 0
        if numpy_flag is not None:
            self.isNumpyEnabled = lambda: int(numpy_flag)

    def __getattr__(self, name: str) -> Any:
        if name == "isNumpyEnabled":  # numpy_flag=None: a pybullet too old to have it
            raise AttributeError(name)
        return getattr(p, name)

    def connect(self, *args: Any, **kwargs: Any) -> int:
        self.connects += 1
        return p.connect(*args, **kwargs)

    def getCameraImage(self, *args: Any, **kwargs: Any) -> tuple:  # noqa: N802  (pybullet's name)
        image = p.getCameraImage(*args, **kwargs)
        return as_built_without_numpy(image) if self.flat else image


def one_pixel_image() -> tuple:
    client = p.connect(p.DIRECT)
    try:
        return p.getCameraImage(1, 1, renderer=p.ER_TINY_RENDERER, physicsClientId=client)
    finally:
        p.disconnect(physicsClientId=client)


def test_this_pybullet_returns_arrays() -> None:
    assert p.isNumpyEnabled() == 1
    assert camera_image_problem(one_pixel_image()) is None


def test_flat_tuples_are_described() -> None:
    problem = camera_image_problem(as_built_without_numpy(one_pixel_image()))
    assert problem == "getCameraImage returned rgba as a flat tuple of 4 values, not a uint8 array of shape (1, 1, 4)"


def test_wrong_dtype_is_described() -> None:
    w, h, rgba, depth, seg = one_pixel_image()
    problem = camera_image_problem((w, h, rgba, depth.astype(np.float64), seg))
    assert problem == "getCameraImage returned depth as a float64 array of shape (1, 1), not float32 (1, 1)"


def test_a_numpy_build_is_checked_without_rendering() -> None:
    """The check runs at every import: with the numpy flag set it must not connect (a DIRECT render costs ~30 ms)."""
    fake = NoNumpyPybullet(numpy_flag=True, flat=False)
    check_pybullet_numpy(fake)
    assert fake.connects == 0


def test_a_build_without_numpy_raises_naming_the_fix() -> None:
    fake = NoNumpyPybullet(numpy_flag=False)
    with pytest.raises(ImportError, match=re.escape(reinstall_commands()[1])) as caught:
        check_pybullet_numpy(fake)
    message = str(caught.value)
    assert fake.connects == 1
    assert "pixelrig needs pybullet built with numpy" in message
    assert "getCameraImage returned rgba as a flat tuple of 4 values" in message
    assert reinstall_commands()[0] in message
    assert f"--no-build-isolation --no-cache-dir --no-binary pybullet pybullet=={PYBULLET_VERSION}" in message


def test_without_the_flag_the_render_decides() -> None:
    """An older pybullet has no isNumpyEnabled(): what getCameraImage returns decides."""
    check_pybullet_numpy(NoNumpyPybullet(numpy_flag=None, flat=False))
    with pytest.raises(ImportError, match=re.escape("flat tuple of 4 values")):
        check_pybullet_numpy(NoNumpyPybullet(numpy_flag=None, flat=True))


def test_what_renders_fails_to_import_with_a_pybullet_built_without_numpy() -> None:
    """A fresh interpreter whose pybullet answers as the no-numpy build: `import pixelrig` loads no pybullet, and the
    first import of what renders (PixelObs) raises the message."""
    code = textwrap.dedent("""
        import sys, types
        import numpy as np
        import pybullet as real
        fake = types.ModuleType("pybullet")
        fake.__dict__.update({k: v for k, v in real.__dict__.items() if not k.startswith("__")})
        fake.__file__ = real.__file__
        fake.isNumpyEnabled = lambda: 0
        def getCameraImage(*args, **kwargs):
            w, h, rgba, depth, seg = real.getCameraImage(*args, **kwargs)
            return (w, h, tuple(int(v) for v in rgba.ravel()), tuple(float(v) for v in depth.ravel()),
                    tuple(int(v) for v in seg.ravel()))
        fake.getCameraImage = getCameraImage
        sys.modules["pybullet"] = fake
        import pixelrig
        print("imported")
        from pixelrig import PixelObs
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and out.stdout.splitlines() == ["imported"]
    assert "ImportError: pixelrig needs pybullet built with numpy" in out.stderr
    assert reinstall_commands()[1] in out.stderr


def test_requires_python_admits_exactly_the_supported_versions() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11,<3.14"
    assert {f"Programming Language :: Python :: {a}.{b}" for a, b in SUPPORTED} <= set(project["classifiers"])
    assert sys.version_info[:2] in SUPPORTED


def test_pybullet_wheel_script_leaves_a_good_install_alone(tmp_path: Path) -> None:
    """scripts/pybullet-wheel.sh (the Makefile's step on 3.12+) returns at once when the venv's pybullet already
    has numpy: it runs the venv's Python once, to ask, and never pip (no download, no build, no reinstall)."""
    calls = tmp_path / "calls"
    shim = tmp_path / "python"  # the venv's interpreter, logging each way it is run
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{calls}"\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    out = subprocess.run(["bash", str(ROOT / "scripts" / "pybullet-wheel.sh"), str(shim)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert calls.read_text().splitlines() == ["-"], calls.read_text()  # the numpy check (a script on stdin) alone
    assert out.stdout == "" and out.stderr == ""


def test_the_docs_give_the_commands_the_import_error_gives() -> None:
    """The manual's 'Python versions' page (docs/python-versions.md, linked from the README's install section) prints
    the same rebuild commands as the ImportError, and names the versions pyproject admits."""
    section = (ROOT / "docs" / "python-versions.md").read_text()
    assert section.startswith("# Python versions\n")
    assert "](docs/python-versions.md)" in (ROOT / "README.md").read_text()
    for command in reinstall_commands("python"):
        assert command in section
    assert "3.11, 3.12 and 3.13" in section
    assert "NEWEST_PYTHON := python3.13" in (ROOT / "Makefile").read_text()
    assert "make test-newest" in (ROOT / ".ci" / "run").read_text()


def test_no_triton_beside_mesa() -> None:
    """make's venvs hold no triton (3.11's CPU torch has none; on 3.12+ the Makefile removes it): its LLVM segfaults a
    process that loaded Mesa's llvmpipe first, as the README says."""
    import importlib.util

    assert importlib.util.find_spec("triton") is None


def test_ci_runs_the_newest_python_on_the_highest_gymnasium_with_all_but_the_end_to_end_files() -> None:
    """docs/python-versions.md: CI's test-newest runs the suite on 3.13 with the highest Gymnasium of the range but
    for the Makefile's END_TO_END files (each one a file make test runs), and test-gym-range the lowest."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")

    def dry(target: str) -> str:
        # -B: every recipe, as on a machine where no venv is built yet
        out = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, timeout=60,
                             env={k: v for k, v in os.environ.items() if not k.startswith("MAKE")})
        assert out.returncode == 0, out.stderr
        return out.stdout

    bounds = re.search(r'"gymnasium>=([\d.]+),<([\d.]+)"', (ROOT / "pyproject.toml").read_text())
    assert bounds is not None
    newest = dry("test-newest")
    run = [line for line in newest.splitlines() if " -m pytest " in line]
    assert len(run) == 1 and ".venv-gym-1.4.0-py3.13/bin/python -m pytest" in run[0], newest
    assert "gymnasium==1.4.0" in newest and bounds.group(2) == "1.5"
    ignored = re.findall(r"--ignore=(\S+)", run[0])
    assert ignored and all((ROOT / path).is_file() for path in ignored), ignored
    assert run[0].split(" -m pytest ", 1)[1].split()[:4] == ["-q", "-p", "no:cacheprovider", "-n"]
    lowest = dry("test-gym-range")
    assert "gymnasium==1.0.0" in lowest and bounds.group(1) == "1.0" and "gymnasium==1.4.0" not in lowest
    page = (ROOT / "docs" / "python-versions.md").read_text()
    assert "all of it but the\nend-to-end files" in page and "`END_TO_END`" in page
