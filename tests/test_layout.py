"""The package's shape: the top level is the public API, tools live in ``pixelrig.tools`` and nothing else imports
them, ``import pixelrig`` stays light, and a normal (non-editable) install works from another directory."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pixelrig

PACKAGE = Path(pixelrig.__file__).resolve().parent
REPO = PACKAGE.parent


def test_top_level_holds_the_public_api_only() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "__main__.py", "batched.py", "snapshot.py", "vector.py"], modules
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    public = {"cameras", "datasets", "envs", "integrations", "render", "tools", "wrappers"}
    assert {"cameras", "envs", "render", "tools", "wrappers"} <= set(folders) <= public, folders


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return names


def test_nothing_outside_tools_imports_tools() -> None:
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if "tools" not in p.relative_to(PACKAGE).parts[:1] and p.name != "__main__.py"
                 and any(m.startswith("pixelrig.tools") for m in imports_of(p))]
    assert not offenders, offenders


def test_dependencies_point_one_way() -> None:
    """render knows nothing of the others; cameras use render; envs use render (and camera specs)."""
    allowed = {"render": {"render"}, "cameras": {"render", "cameras"}, "envs": {"render", "cameras", "envs"}}
    for layer, ok in allowed.items():
        for path in (PACKAGE / layer).rglob("*.py"):
            used = {m.split(".")[1] for m in imports_of(path) if m.startswith("pixelrig.") and m.count(".") >= 1}
            assert used <= ok, f"{path.relative_to(PACKAGE)} imports {sorted(used - ok)}"


def run_python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_import_pixelrig_stays_light(tmp_path: Path) -> None:
    heavy = ["matplotlib", "torch", "ray", "stable_baselines3", "trimesh", "moderngl", "tqdm", "h5py", "pyarrow",
             "aiohttp", "playwright"]
    out = run_python(f"import sys, pixelrig; print([m for m in {heavy!r} if m in sys.modules])", tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


@pytest.mark.parametrize("module", ["pixelrig.tools.bench.rig", "pixelrig.tools.bench.lod",
                                    "pixelrig.tools.bench.snapshot", "pixelrig.tools.bench.vector",
                                    "pixelrig.tools.bench.main", "pixelrig.tools.bench.batched",
                                    "pixelrig.tools.bench.datasets", "pixelrig.tools.demo",
                                    "pixelrig.tools.view", "pixelrig.tools.serve", "pixelrig.tools.cli"])
def test_each_tool_module_imports_on_its_own(module: str, tmp_path: Path) -> None:
    """No import cycles between the benchmark sections: each imports first in a fresh interpreter."""
    out = run_python(f"import {module}", tmp_path)
    assert out.returncode == 0, out.stderr


def test_non_editable_install_runs_from_another_directory(tmp_path: Path) -> None:
    """A normal install (a wheel's files, not the repository) runs the CLI from elsewhere, and holds no path
    back into the repository (the goldens are the test suite's, not the package's)."""
    source, target = tmp_path / "source", tmp_path / "site"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):  # a copy: setuptools writes build/ into the tree it builds
        shutil.copy(REPO / name, source / name)
    shutil.copytree(PACKAGE, source / "pixelrig", ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                            "--target", str(target), str(source)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    installed = target / "pixelrig"
    assert (installed / "tools" / "bench" / "main.py").is_file()
    assert not list(installed.rglob("golden*")), "goldens do not ship in the package"
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    code = ("import pixelrig, sys; assert pixelrig.__file__.startswith(sys.argv[1]), pixelrig.__file__; "
            "from pixelrig.tools.cli import main; sys.exit(main(['renderer']))")
    out = subprocess.run([sys.executable, "-c", code, str(installed)], cwd=cwd, capture_output=True, text=True,
                         timeout=180, env={**os.environ, "PYTHONPATH": str(target)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert '"auto":' in out.stdout
    bench_help = subprocess.run([sys.executable, "-m", "pixelrig", "bench", "--help"], cwd=cwd, capture_output=True,
                                text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(target)})
    assert bench_help.returncode == 0 and "--sections" in bench_help.stdout, bench_help.stderr[-2000:]


def test_public_names_are_where_the_readme_says() -> None:
    from pixelrig.envs import BulletEnv, HasBulletClient
    from pixelrig.render.window import DisplayUnavailable

    assert pixelrig.DisplayUnavailable is DisplayUnavailable
    assert isinstance(pixelrig.make_vec, type(test_public_names_are_where_the_readme_says))
    assert issubclass(BulletEnv, pixelrig.BulletEnv) and HasBulletClient is not None


def test_render_options_are_one_list_of_constructor_parameters() -> None:
    """BulletEnv.RENDER_OPTIONS is the one list of render-only kwargs (snapshots ignore them); each must be a real
    parameter of the constructor, so a renamed option cannot silently fall out of it."""
    import inspect

    from pixelrig.envs import BulletEnv

    params = inspect.signature(BulletEnv.__init__).parameters
    assert set(BulletEnv.RENDER_OPTIONS) <= set(params), sorted(set(BulletEnv.RENDER_OPTIONS) - set(params))


def test_frame_source_does_not_shadow_robot_source(tmp_path: Path) -> None:
    """``get_wrapper_attr("source")`` finds RobotEnv's model path, not a window's or recorder's frame source."""
    import gymnasium as gym

    env = pixelrig.VideoRecorder(pixelrig.PixelObs(gym.make("pixelrig/Robot-v0", source="r2d2.urdf")), tmp_path)
    try:
        assert env.get_wrapper_attr("source") == "r2d2.urdf"
    finally:
        env.close()


def test_default_cameras_are_cameras() -> None:
    import gymnasium as gym

    for env_id in ("pixelrig/CartPole-v0", "pixelrig/PandaPush-v0", "pixelrig/Ant-v0"):
        env = gym.make(env_id)
        try:
            assert all(isinstance(c, pixelrig.Camera) for c in env.unwrapped.default_cameras())
        finally:
            env.close()
