"""``pixelrig bench``'s render section (``benchmarks/render_cost.py``): rendering against physics per manipulation task
and renderer, and docs/benchmark.md's table held to docs/render_cost.json."""

from __future__ import annotations

import json
from pathlib import Path

from pixelrig.tools.bench.render_cost import MODES, format_render_cost, manipulation_tasks, measure
from pixelrig.tools.bench.report import render, render_headline

DOCS = Path(__file__).resolve().parent.parent / "docs"
START = "<!-- render-cost:start (generated from docs/render_cost.json by benchmarks/render_cost.py) -->"
END = "<!-- render-cost:end -->"


def test_the_section_measures_each_renderer_against_its_own_physics() -> None:
    """A small run: every mode has positive physics and rendering times from the same steps, the ratios are theirs,
    and the table names the task and the goals."""
    result = measure(["pixelrig/PandaReach-v0"], steps=2, repeats=1, num_envs=2)
    (row,) = result["rows"]
    assert row["env"] == "pixelrig/PandaReach-v0" and len(row["cameras"]) == 3
    for mode in MODES:
        m = row["modes"][mode]
        assert m["physics_ms"] > 0 and m["physics_cpu_ms"] > 0 and m["steps_per_s"] > 0
        assert m["ratio"] == m["render_ms"] / m["physics_ms"]  # one repeat: the median is the sample
    assert set(result["targets"]) == {"batched_ratio", "batched_over_single"}
    table = format_render_cost(result)
    assert "| PandaReach-v0 | " in table and "Goals (wall time)" in table
    report = {"date": "2026-12-02", "machine": "here", "render": result}  # in a ``pixelrig bench`` report
    assert table in render(report) and "Rendering over physics per env step on the 1 manipulation tasks" \
        in render_headline(report)


def test_the_manipulation_tasks_are_the_panda_ids() -> None:
    assert len(manipulation_tasks()) == 7
    assert {"pixelrig/PandaReach-v0", "pixelrig/PandaPickObject-v0"} <= set(manipulation_tasks())


def test_the_documented_render_costs_are_the_benchmarks() -> None:
    """docs/benchmark.md's "Rendering against physics" table is docs/render_cost.json's, every manipulation task in
    it, with the date of the run."""
    report = json.loads((DOCS / "render_cost.json").read_text())
    page = (DOCS / "benchmark.md").read_text()
    assert page.count(START) == 1 and page.count(END) == 1
    block = page[page.index(START) + len(START):page.index(END)].strip()
    assert block == format_render_cost(report), "docs/benchmark.md's render-cost table is stale: rewrite it from " \
                                                "docs/render_cost.json (format_render_cost)"
    assert [r["env"] for r in report["rows"]] == manipulation_tasks()
    assert report["num_envs"] == 16 and report["date"] in page
