"""The mutation smoke's own checks, cheap enough for every ``make test``: each mutant still applies to the code (an
edit that no longer matches is caught here, before CI's long stage) and names tests that exist."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.mutants import MUTANTS, ROOT, Edit, Mutant, apply


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_applies_and_names_real_tests(mutant: Mutant, tmp_path: Path) -> None:
    for rel in {e.path for e in mutant.edits}:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text((ROOT / rel).read_text())
    apply(mutant, tmp_path)  # raises when an edit matches no place or several
    for rel in {e.path for e in mutant.edits}:
        assert (tmp_path / rel).read_text() != (ROOT / rel).read_text()
        if rel.endswith(".py"):
            ast.parse((tmp_path / rel).read_text())  # a mutant that breaks the syntax kills nothing
    assert mutant.tests and (mutant.edits or mutant.env)
    for test in mutant.tests:
        path, _, name = test.partition("::")
        functions = {n.name for n in ast.walk(ast.parse((ROOT / path).read_text())) if isinstance(n, ast.FunctionDef)}
        assert name.split("[")[0] in functions, f"{mutant.name}: {test} does not exist"


def test_names_are_unique() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))


def test_an_edit_that_no_longer_applies_names_the_mutant(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("a = 1\na = 1\n")
    for old, count in (("a = 1", 2), ("b = 2", 0)):
        with pytest.raises(ValueError, match=f"mutant 'm': its edit of f.py matches {count} places"):
            apply(Mutant("m", "breaks f", ("tests/x.py::t",), edits=(Edit("f.py", old, "c = 3"),)), tmp_path)


def test_the_mutation_page_is_its_json_and_equivalents_are_named_mutants() -> None:
    """docs/mutation.md's table is what tests/mutation.py writes from docs/mutation.json, and every mutant judged
    equivalent belongs to a module of a group, with a reason; none of them was killed in the latest runs."""
    import json

    from tests.mutation import EQUIVALENT, GROUPS, PAGE, RESULTS, TABLE_END, TABLE_START, table

    rows = json.loads(RESULTS.read_text())
    text = PAGE.read_text()
    assert text[text.index(TABLE_START) + len(TABLE_START):text.index(TABLE_END)].strip() == table(rows).strip()
    modules = {m.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for g in GROUPS.values()
               for m in g.modules}
    for name, reason in EQUIVALENT.items():
        assert name.split(".x", 1)[0] in modules and len(reason) > 20, name
    stale = {m: r["stale_equivalent"] for m, r in rows.items() if r.get("stale_equivalent")}
    assert not stale, f"killed mutants listed in EQUIVALENT (remove them): {stale}"


def test_mutants_run_side_by_side_each_with_a_copy_of_what_pixelrig_caches(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/testing.md: the smoke runs its mutants side by side (``--jobs``, one per CPU by default, 0 refused) and
    each gets a copy of every folder and file pixelrig keeps in its cache (read from the code that writes them)."""
    import os
    import re

    from tests import mutants

    with pytest.raises(SystemExit):
        mutants.main(["--jobs", "0", "--list"])
    assert "--jobs 0: pass 1 or more" in capsys.readouterr().err
    source = (ROOT / "tests" / "mutants.py").read_text()
    assert "default=os.cpu_count() or 1" in source and os.cpu_count()
    written = set()
    for path in (ROOT / "pixelrig").rglob("*.py"):
        written |= set(re.findall(r'cache_root\(\) / "([\w.-]+)"', path.read_text()))
    assert written and written <= set(mutants.CACHED), written - set(mutants.CACHED)


def test_mutmut_runs_a_module_fixtures_mutants_against_every_test_that_reads_it(tmp_path: Path) -> None:
    """tests/mutation_scope.py, loaded by the driver's mutmut table: mutmut credits a function to the test that ran
    it, so a module-scoped fixture's calls went to the first test that asked for it alone. Here only the second test
    checks the fixture's value: its mutants are killed (without the plugin both survive, mapped to the first test)."""
    import json
    import os
    import re
    import shutil
    import subprocess
    import sys

    from tests.mutation import Group, config

    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "m.py").write_text("def double(x):\n    return x * 2\n")
    shutil.copy(ROOT / "tests" / "mutation_scope.py", tmp_path / "tests")
    (tmp_path / "tests" / "test_m.py").write_text(
        "import pytest\n\nfrom pkg.m import double\n\n\n@pytest.fixture(scope='module')\ndef value():\n"
        "    return double(3)\n\n\ndef test_a_runs(value):\n    assert value is not None\n\n\n"
        "def test_b_checks(value):\n    assert value == 6\n")
    table = config(Group(("pkg/m.py",), ("tests/test_m.py",))).replace('source_paths = ["pixelrig"]',
                                                                       'source_paths = ["pkg"]')
    assert '"-p", "tests.mutation_scope"' in table
    (tmp_path / "pyproject.toml").write_text(table)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "MUTANT"))}
    proc = subprocess.run([str(Path(sys.executable).with_name("mutmut")), "run", "--max-children", "1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, re.sub(r"[^\n]*\r", "", proc.stdout + proc.stderr)[-2000:]
    stats = json.loads((tmp_path / "mutants" / "mutmut-stats.json").read_text())
    assert sorted(stats["tests_by_mangled_function_name"]["pkg.m.x_double"]) == [
        "tests/test_m.py::test_a_runs", "tests/test_m.py::test_b_checks"]
    codes = json.loads((tmp_path / "mutants" / "pkg" / "m.py.meta").read_text())["exit_code_by_key"]
    assert codes and all(code == 1 for code in codes.values()), codes
