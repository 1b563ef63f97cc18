"""The package's shape, as docs/ARCHITECTURE.md draws it: one folder per job, imports pointing one way with no
circle (lazy imports included), no private name imported from another module, ``display`` and ``system`` free of
pybullet, ``import pixelrig`` light, tests arranged like the package, and a normal install working from another
directory."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pixelrig

PACKAGE = Path(pixelrig.__file__).resolve().parent
REPO = PACKAGE.parent

LAYERS: dict[str, int] = {
    "version": 0, "errors": -1, "system": 0, "display": 1, "render": 1, "cameras": 2, "experts": 2, "control": 2,
    "envs": 3,
    "tasks": 4, "snapshots": 4, "wrappers": 5, "vector": 6, "datasets": 6, "integrations": 7,
    "evaluation": 7, "tools": 8, "__main__": 9,
}
"""Each top-level room's rank: a module may import its own room and rooms of lower rank only (``errors``, below every
other room, imports nothing and every room may import it, ``system`` included; ``vector`` and ``datasets`` are peers
and import neither each other, nor do ``integrations`` and ``evaluation``; ``display`` and ``render`` likewise,
``cameras``, ``experts`` and ``control``, and ``tasks`` and ``snapshots``)."""

OUTSIDE = {"plugins": "plugins/"}
"""Rooms of the repository outside the package, tested in ``tests/test_<room>_*.py`` too: ``plugins/`` holds other
distributions built on pixelrig (LeRobot's env plugin), which pixelrig never imports."""

LIGHT = ("version", "errors", "system", "display")
"""Rooms that import nothing of pixelrig's above them: the display's child processes load these alone."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def type_checking_lines(tree: ast.Module) -> set[int]:
    """Line numbers inside ``if TYPE_CHECKING:`` blocks (imports for type hints only; never run)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def pixelrig_imports(name: str, path: Path) -> list[tuple[str, str | None, int]]:
    """Every pixelrig import a module runs, at the top or inside a function: (module imported, name taken from it
    or None, line)."""
    tree = ast.parse(path.read_text())
    skip = type_checking_lines(tree)
    out = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] == "pixelrig":
                for alias in node.names:
                    full = f"{module}.{alias.name}"
                    out.append((full, None, node.lineno) if full in MODULES else (module, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "pixelrig"]
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the pixelrig modules it imports (a package import counts as its ``__init__``)."""
    return {name: {m for m, _, _ in pixelrig_imports(name, path) if m in MODULES and m != name}
            for name, path in MODULES.items()}


def room(module: str) -> str:
    """The top-level room of a module ("" for the root package)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_top_level_holds_the_public_api_and_one_folder_per_job() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "__main__.py", "errors.py", "snapshots.py", "version.py"], modules
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert set(folders) == set(LAYERS) - {"version", "errors", "snapshots", "__main__"}, folders


def test_architecture_doc_lists_exactly_the_package_rooms() -> None:
    """docs/ARCHITECTURE.md's folder list is the package's: a room added or removed fails here until the page says
    so."""
    doc = (REPO / "docs" / "ARCHITECTURE.md").read_text()
    listed = set(re.findall(r"^`pixelrig/([a-z_]+)(?:/|\.py)`", doc, re.MULTILINE))
    rooms = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if p.name != "__pycache__" and (p.is_dir() or p.suffix == ".py") and p.name not in ("__init__.py",)}
    assert listed == rooms, f"in the doc only: {sorted(listed - rooms)}; in the package only: {sorted(rooms - listed)}"


def test_plugins_are_distributions_of_their_own() -> None:
    """Each folder of ``plugins/`` is a distribution (its own pyproject.toml) whose package has its name, and
    docs/ARCHITECTURE.md lists it; nothing in pixelrig imports a plugin."""
    doc = (REPO / "docs" / "ARCHITECTURE.md").read_text()
    plugins = sorted(p for p in (REPO / "plugins").iterdir() if p.is_dir())
    assert plugins, "plugins/ is empty"
    for folder in plugins:
        assert (folder / "pyproject.toml").is_file() and (folder / folder.name / "__init__.py").is_file(), folder
        assert f"`plugins/{folder.name}/`" in doc, f"docs/ARCHITECTURE.md does not list plugins/{folder.name}/"
    assert not foreign_imports({p.name for p in plugins})


def foreign_imports(tops: set[str]) -> list[str]:
    """``module:line`` of every import in the package, lazy ones included, of a top-level package in ``tops``."""
    wrong = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            wrong += [f"{name}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in tops]
    return wrong


def test_pixelrig_never_imports_lerobot() -> None:
    """LeRobot is the plugin's dependency, never the library's (the readers' and the plugin's venvs hold it)."""
    assert not foreign_imports({"lerobot", "ledataset"})


def test_imports_point_one_way() -> None:
    """A module imports its own room and lower rooms only, lazy imports included; nothing imports the root package
    (its names are a facade loaded on first use)."""
    wrong = []
    for name, path in MODULES.items():
        if name == "pixelrig":
            continue
        for module, _, line in pixelrig_imports(name, path):
            target = module.split(".")
            if len(target) == 1 and room(name) != "__main__":
                wrong.append(f"{name}:{line} imports the root package (import from the module that defines it)")
            elif len(target) > 1 and target[1] != room(name) and LAYERS[target[1]] >= LAYERS[room(name)]:
                wrong.append(f"{name}:{line} imports {module} (rank {LAYERS[target[1]]} >= {LAYERS[room(name)]})")
    assert not wrong, "\n".join(wrong)


def test_no_import_circles() -> None:
    """No two modules import each other, however indirectly (Tarjan's strongly connected components)."""
    graph = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert not circles, circles


def test_no_private_name_crosses_a_module() -> None:
    crossing = [f"{name}:{line} imports {taken} from {module}" for name, path in MODULES.items()
                for module, taken, line in pixelrig_imports(name, path)
                if taken and taken.startswith("_") and not taken.startswith("__")]
    assert not crossing, "\n".join(crossing)


def run_python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_light_rooms_load_no_pybullet(tmp_path: Path) -> None:
    """Every module of display, system and errors imports (with the root package) without pybullet, gymnasium's envs
    or the renderers: what the window and web-page processes load."""
    light = [name for name in MODULES if room(name) in LIGHT]
    out = run_python(f"import sys; import {', '.join(light)}; "
                     "print([m for m in ('pybullet', 'moderngl', 'pixelrig.render', 'pixelrig.envs.base') "
                     "if m in sys.modules])", tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_import_pixelrig_stays_light(tmp_path: Path) -> None:
    heavy = ["pybullet", "matplotlib", "torch", "ray", "stable_baselines3", "trimesh", "moderngl", "tqdm", "h5py",
             "pyarrow", "aiohttp", "playwright", "cv2"]
    out = run_python(f"import sys, pixelrig; print([m for m in {heavy!r} if m in sys.modules])", tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_every_public_name_loads_from_the_root(tmp_path: Path) -> None:
    """Each name of ``pixelrig.__all__`` loads on first use, is the object its module defines, and ``import
    pixelrig`` registers the ids without loading them."""
    out = run_python("import importlib, sys, gymnasium as gym, pixelrig\n"
                     "assert 'pixelrig/PandaPush-v0' in gym.registry\n"
                     "for name in pixelrig.__all__:\n"
                     "    value = getattr(pixelrig, name)\n"
                     "    if name != '__version__':\n"
                     "        assert value is getattr(importlib.import_module(pixelrig._EXPORTS[name]), name), name\n"
                     "print(len(pixelrig.__all__))", tmp_path)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip().splitlines()[-1]) == len(pixelrig.__all__)


def test_tests_are_arranged_like_the_package() -> None:
    """Each test file's name starts with the room it tests (test_<room>_...), so a reader finds a module's tests at
    once; files that test the whole (README, layout, CLI tools) say so."""
    whole = {"test_readme.py", "test_layout.py", "test_mutants.py", "test_python_versions.py"}
    rooms = set(LAYERS) - {"__main__", "version"} | set(OUTSIDE)
    wrong = [p.name for p in (REPO / "tests").glob("test_*.py")
             if p.name not in whole and p.stem.removeprefix("test_").split("_")[0] not in rooms]
    assert not wrong, f"name these test_<room>_...: {wrong} (rooms: {sorted(rooms)})"


@pytest.mark.parametrize("module", ["pixelrig.tools.bench.rig", "pixelrig.tools.bench.lod",
                                    "pixelrig.tools.bench.snapshot", "pixelrig.tools.bench.vector",
                                    "pixelrig.tools.bench.main", "pixelrig.tools.bench.batched",
                                    "pixelrig.tools.bench.datasets", "pixelrig.tools.bench.rllib",
                                    "pixelrig.tools.bench.render_cost",
                                    "pixelrig.tools.demo",
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
    from pixelrig.errors import DisplayUnavailable

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


def test_make_test_runs_the_suite_in_two_processes() -> None:
    """docs/testing.md: ``make test`` runs pytest in two processes (pytest-xdist), ``TEST_JOBS`` sets how many and 0
    runs it in one; test-newest runs the same recipe."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")

    def commands(*args: str) -> list[str]:
        out = subprocess.run(["make", "-n", *args], cwd=REPO, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return [line for line in out.stdout.splitlines() if " -m pytest " in line]

    assert [c.split(" -m pytest ", 1)[1].strip() for c in commands("test")] == ["-n 2"]
    assert [c.split(" -m pytest ", 1)[1].strip() for c in commands("test", "TEST_JOBS=0", "PYTEST_ARGS=-k x")] == [
        "-n 0 -k x"]
    assert "pytest-xdist" in (REPO / "pyproject.toml").read_text()
    assert "in two processes (pytest-xdist" in (REPO / "docs" / "testing.md").read_text()


def test_ci_prints_each_stages_time_and_stops_itself_at_its_deadline(tmp_path: Path) -> None:
    """.ci/run, run over a Makefile whose stages are quick but one that hangs: each stage's time is printed in the
    closing table, and the hanging stage is stopped at CI_DEADLINE_MIN (here 0: at once) with exit code 124 and the
    stages after it never started, rather than CI being killed without a word."""
    if shutil.which("make") is None or shutil.which("timeout") is None:
        pytest.skip("make or timeout is not installed")
    (tmp_path / ".ci").mkdir()
    shutil.copy(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "lerobot-venv.sh").write_text("echo readers venv\n")
    (tmp_path / "Makefile").write_text("lint:\n\t@echo lint done\ntest:\n\tsleep 30\n%:\n\t@echo $@ done\n")
    out = subprocess.run(["bash", ".ci/run"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "CI_DEADLINE_MIN": "0"})
    assert out.returncode == 124, out.stdout + out.stderr
    assert "lint done" in out.stdout and "readers venv" in out.stdout and "test-long done" not in out.stdout
    assert "== 'make test' ran past the run's deadline (0 min); processes still here:" in out.stdout, out.stdout
    table = out.stdout.split("== stage times", 1)[1].splitlines()[1:4]
    assert [re.sub(r"\s+", " ", line).strip().split(" (load after: ")[1].split(") ")[1] for line in table] == [
        "make lint", "bash scripts/lerobot-venv.sh", "make test"], table
    assert re.fullmatch(r"\s*0 min 0[0-9] s .*", table[0]) and re.fullmatch(r"\s*0 min 0[1-9] s .*", table[2]), table
    # LeRobot's plugin venv is built in the background beside test-newest: its failure is the run's, after test-newest
    (tmp_path / "Makefile").write_text("lerobot:\n\t@echo plugin venv failed; exit 3\n%:\n\t@echo $@ done\n")
    out = subprocess.run(["bash", ".ci/run"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stdout + out.stderr  # make's status for a target that failed
    assert "test-newest done" in out.stdout and "plugin venv failed" in out.stdout
    assert "test-lerobot-env done" not in out.stdout
    assert out.stdout.split("== stage times", 1)[1].splitlines()[-2].endswith("_ build/ci/lerobot-env-venv.log")
