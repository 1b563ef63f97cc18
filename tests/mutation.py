"""Mutation testing with a real tool: mutmut over the third round's modules, each with the tests of its room.

mutmut (3.x) makes every mutant its operators give (numbers, comparisons, boolean and arithmetic operators, strings,
arguments, return values...) of each module of a group, maps each function to the tests that run it, and runs those
tests against each mutant in a forked worker. This driver runs one mutmut session per group in a temporary copy of
the tree (mutmut writes its ``mutants/`` folder beside the sources), with Hypothesis's ``mutation`` profile (no
shrinking, derandomised: a mutant is killed or not, the same each run), then reads mutmut's results and writes
``docs/mutation.json`` and the table of ``docs/mutation.md``: per module the mutants, the killed (timeouts count as
killed: the mutant hangs what it broke), the survivors, those no selected test reaches, the ones judged equivalent
(:data:`EQUIVALENT`, each with its reason) and the kill rate over the non-equivalent ones.

    python -m tests.mutation                 # every group (make mutation; hours on 2 cores)
    python -m tests.mutation lens noise      # some groups
    python -m tests.mutation --list          # the groups, their modules and tests
    python -m tests.mutation lens --keep /tmp/mm   # keep mutmut's tree: `cd /tmp/mm/lens && mutmut show NAME`

A group's result replaces its modules' rows in docs/mutation.json; the others are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.mutants import ROOT, copy_tree, tracked_files

RESULTS = ROOT / "docs" / "mutation.json"
PAGE = ROOT / "docs" / "mutation.md"
TABLE_START, TABLE_END = "<!-- mutation-table:start -->", "<!-- mutation-table:end -->"


@dataclass(frozen=True)
class Group:
    """Modules mutated together and the tests run against their mutants."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]


GROUPS: dict[str, Group] = {
    "lens": Group(("pixelrig/cameras/lens.py",),
                  ("tests/test_cameras_sensors_properties.py", "tests/test_cameras_sensors.py")),
    "noise": Group(("pixelrig/cameras/noise.py",),
                   ("tests/test_cameras_sensors_properties.py", "tests/test_cameras_sensors.py",
                    "tests/test_wrappers_sensors.py")),
    "stereo": Group(("pixelrig/cameras/stereo.py",),
                    ("tests/test_cameras_sensors_properties.py", "tests/test_cameras_sensors.py")),
    "timeline": Group(("pixelrig/cameras/sensors.py",),
                      ("tests/test_cameras_sensors_properties.py", "tests/test_wrappers_sensors.py")),
    "controller": Group(("pixelrig/control/task_space.py",),
                        ("tests/test_control_step_properties.py", "tests/test_envs_control.py")),
    "gripper": Group(("pixelrig/control/gripper.py",),
                     ("tests/test_control_step_properties.py", "tests/test_envs_control.py")),
    "looks": Group(("pixelrig/envs/looks.py", "pixelrig/envs/presets.py"),
                   ("tests/test_envs_looks_draws.py", "tests/test_envs_looks.py")),
    "autoreset": Group(("pixelrig/vector/autoreset.py",),
                       ("tests/test_vector_autoreset.py",)),
    "sb3": Group(("pixelrig/integrations/sb3.py",), ("tests/test_integrations_sb3.py",)),
}
"""Every group by name."""

EQUIVALENT: dict[str, str] = {
}
"""Mutants (mutmut's names) that change no behaviour, each with the reason; they leave the kill rate's denominator."""

KILLED = {1, 3, 36, 24, -24, 152, 255}  # mutmut's exit codes: failed tests, pytest's internal error, timeouts
SURVIVED = {0}
NO_TESTS = {5, 33}


def config(group: Group) -> str:
    """The ``[tool.mutmut]`` table for ``group``."""
    lines = ["", "[tool.mutmut]", 'source_paths = ["pixelrig"]',
             f"only_mutate = {json.dumps(list(group.modules))}",
             f"pytest_add_cli_args_test_selection = {json.dumps(list(group.tests))}",
             'pytest_add_cli_args = ["-p", "no:cacheprovider", "-o", "addopts=-m \'not slow\'"]',
             'also_copy = ["README.md", "docs/", "golden/", "examples/", "benchmarks/", "scripts/", "Makefile"]',
             'process_isolation = "forkserver"',  # a fork of a process that made a GL context hangs in it
             'forkserver_warmup = "collect"', ""]
    return "\n".join(lines)


def results(tree: Path, group: Group) -> dict[str, dict[str, int | None]]:
    """{module: {mutant name: exit code}} read from mutmut's ``.meta`` files."""
    out = {}
    for module in group.modules:
        meta = tree / "mutants" / (module + ".meta")
        data = json.loads(meta.read_text()) if meta.exists() else {"exit_code_by_key": {}}
        out[module] = data["exit_code_by_key"]
    return out


def summarise(codes: dict[str, int | None], seconds: float) -> dict:
    """One module's row: counts by outcome and the kill rate over the non-equivalent mutants."""
    equivalent = sorted(n for n in codes if n in EQUIVALENT)
    live = {n: c for n, c in codes.items() if n not in EQUIVALENT}
    killed = sorted(n for n, c in live.items() if c in KILLED)
    survived = sorted(n for n, c in live.items() if c in SURVIVED)
    no_tests = sorted(n for n, c in live.items() if c in NO_TESTS)
    other = sorted(n for n, c in live.items() if c not in KILLED | SURVIVED | NO_TESTS)
    counted = len(killed) + len(survived) + len(no_tests)
    return {"mutants": len(codes), "killed": len(killed), "survived": len(survived), "no_tests": len(no_tests),
            "not_run": len(other), "equivalent": len(equivalent),
            "kill_rate": round(100.0 * len(killed) / counted, 1) if counted else None,
            "seconds": round(seconds), "survivors": survived + no_tests, "not_run_names": other}


def run_group(name: str, group: Group, children: int, keep: Path | None) -> dict[str, dict]:
    """Run mutmut over one group in a copy of the tree; its modules' rows."""
    work = Path(tempfile.mkdtemp(prefix=f"pixelrig-mutation-{name}-")) if keep is None else keep / name
    if work.exists():
        shutil.rmtree(work)
    tree = work
    copy_tree(tree, tracked_files())
    with open(tree / "pyproject.toml", "a") as f:
        f.write(config(group))
    mutmut = Path(sys.executable).with_name("mutmut")
    env = {**os.environ, "HYPOTHESIS_PROFILE": "mutation", "PYTHONPATH": ""}
    start = time.monotonic()
    proc = subprocess.run([str(mutmut), "run", "--max-children", str(children)], cwd=tree, env=env,
                          capture_output=True, text=True)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        tail = re.sub(r"[^\n]*\r", "", proc.stdout + proc.stderr)[-3000:]
        raise RuntimeError(f"mutmut failed on group {name!r} (exit status {proc.returncode}):\n{tail}")
    codes = results(tree, group)
    total = sum(len(c) for c in codes.values()) or 1
    rows = {m: {"group": name, **summarise(c, seconds * len(c) / total)} for m, c in codes.items()}
    if keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def table(rows: dict[str, dict]) -> str:
    """The markdown table of docs/mutation.md."""
    head = ("| module | group | mutants | killed | survived | no test reaches | equivalent | kill rate | time |\n"
            "|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for module, r in sorted(rows.items()):
        rate = "-" if r["kill_rate"] is None else f"{r['kill_rate']:.1f}%"
        lines.append(f"| `{module}` | {r['group']} | {r['mutants']} | {r['killed']} | {r['survived']} | "
                     f"{r['no_tests']} | {r['equivalent']} | {rate} | {r['seconds'] // 60} min {r['seconds'] % 60} s |")
    return "\n".join(lines)


def write(rows: dict[str, dict]) -> None:
    RESULTS.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
    text = PAGE.read_text()
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    PAGE.write_text(text[:start] + "\n" + table(rows) + "\n" + text[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("groups", nargs="*", help="group names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the groups")
    parser.add_argument("--children", type=int, default=2, help="mutmut's parallel workers (default 2)")
    parser.add_argument("--keep", type=Path, help="keep mutmut's trees under this folder (one per group)")
    args = parser.parse_args(argv)
    unknown = [g for g in args.groups if g not in GROUPS]
    if unknown:
        parser.error(f"unknown groups {unknown}; groups: {list(GROUPS)}")
    if args.list:
        for name, g in GROUPS.items():
            print(f"{name}: {', '.join(g.modules)}\n    tests: {', '.join(g.tests)}")
        return 0
    rows = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for name in args.groups or list(GROUPS):
        group = GROUPS[name]
        print(f"== {name}: {', '.join(group.modules)}", flush=True)
        new = run_group(name, group, args.children, args.keep)
        for module, r in new.items():
            rows[module] = r
            print(f"   {module}: {r['killed']}/{r['mutants']} killed, {r['survived']} survived, "
                  f"{r['no_tests']} without tests, {r['equivalent']} equivalent: {r['kill_rate']}% "
                  f"({r['seconds']} s)", flush=True)
            for s in r["survivors"]:
                print(f"     survived: {s}")
        write(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
