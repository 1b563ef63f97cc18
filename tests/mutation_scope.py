"""A pytest plugin for mutmut's stats run (``tests/mutation.py`` loads it with ``-p``): the functions a module- or
session-scoped fixture runs count for every test that uses the fixture.

mutmut maps each mutated function to the tests that ran it, and then runs only those against the function's mutants.
It credits a function to the test running when it was called, so a wider fixture's work (``collected`` in
test_datasets_collect.py runs a whole collection) went to the first test that asked for it alone: a mutant there
was never run against the other tests that read the fixture's result, and survived while one of them fails on it
(collect's ``_write`` handing on no final snapshot survived this way, and the snapshot test kills it).

Here, each wider fixture's setup records the functions it ran; before each test's teardown (where mutmut credits
what was run), the functions of the wider fixtures the test uses are added. Outside mutmut's stats run it does
nothing.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

_RAN: dict[tuple[str, str], set[str]] = {}
"""(fixture's module or "", fixture's name) -> the mutated functions its setups ran."""


def _stats() -> set[str] | None:
    """mutmut's set of functions run by the current test, while mutmut collects stats; None otherwise."""
    from mutmut.mutation.trampoline import get_mutant_under_test
    from mutmut.state import state

    if get_mutant_under_test() != "stats":
        return None
    return state()._stats


def _key(fixturedef: Any) -> tuple[str, str]:
    return (getattr(fixturedef, "baseid", ""), fixturedef.argname)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: pytest.FixtureRequest) -> Generator[None, Any, None]:
    stats = _stats()
    if stats is None or fixturedef.scope == "function":
        yield
        return
    before = set(stats)
    stats.clear()
    try:
        yield
    finally:
        _RAN.setdefault(_key(fixturedef), set()).update(stats)
        stats |= before


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: Any, nextitem: Any) -> Generator[None, Any, None]:
    stats = _stats()
    if stats is not None:
        for fixturedefs in item._fixtureinfo.name2fixturedefs.values():
            for fixturedef in fixturedefs:
                stats |= _RAN.get(_key(fixturedef), set())
    yield
