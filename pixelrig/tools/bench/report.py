"""The benchmark's figures in the docs, rendered from ``docs/bench.json`` (``pixelrig bench`` writes it): the full
tables in ``docs/benchmark.md`` and the headline in ``README.md``, so that every figure they show comes from the JSON
a run committed; ``tests/test_readme.py`` checks they agree."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from pixelrig.tools.bench.batched import format_batched
from pixelrig.tools.bench.common import cell
from pixelrig.tools.bench.datasets import format_datasets
from pixelrig.tools.bench.fidelity import format_fidelity
from pixelrig.tools.bench.lod import format_lod
from pixelrig.tools.bench.render_cost import format_render_cost
from pixelrig.tools.bench.rig import format_table
from pixelrig.tools.bench.rllib import format_rllib

START = "<!-- bench:start (generated from docs/bench.json by python -m pixelrig.tools.bench.report) -->"
END = "<!-- bench:end -->"
HEADLINE_START = ("<!-- bench-headline:start (generated from docs/bench.json by python -m pixelrig.tools.bench.report) "
                  "-->")
HEADLINE_END = "<!-- bench-headline:end -->"
RENDER_COST_HEADING = ("**Rendering against physics** (every manipulation task's default rig, three 84² cameras, "
                       "rgb+depth+label: rendering time over physics time per env step on tiny, gl and gl batched, "
                       "in wall time, median [min..max] over the repeats, and in CPU time, llvmpipe's threads "
                       "included; `benchmarks/render_cost.py`):")
PAGE = Path("docs/benchmark.md")
"""Where :func:`render`'s block lives (relative to the repository); its image paths are relative to this page."""
README = Path("README.md")
"""Where :func:`render_headline`'s block lives."""


def _matrix(rows: list[dict[str, Any]]) -> str:
    sizes = sorted({r["size"] for r in rows})
    groups: dict[tuple, dict[int, dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["renderer"], r["cameras"], "+".join(r["modalities"])), {})[r["size"]] = r
    head = "| backend | cams | modalities | " + " | ".join(f"{s}²" for s in sizes) + " | rig/raw |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for (renderer, cams, mods), by_size in groups.items():
        fps = [f"{by_size[s]['median_fps']['rig']:.1f}" if s in by_size else "" for s in sizes]
        ratios = ", ".join(f"{by_size[s]['ratio_rig_vs_raw']:.2f}" for s in sizes if s in by_size)
        lines.append(f"| {renderer} | {cams} | {mods} | " + " | ".join(fps) + f" | {ratios} |")
    return "\n".join(lines)


def _addrender(rows: list[dict[str, Any]]) -> str:
    lines = ["| env | PixelObs steps/s | AddRenderObservation steps/s | ratio |", "|---|---|---|---|"]
    for r in rows:
        m, sp = r["median_steps_per_s"], r["spread"]
        lines.append(f"| {r['env']} | {cell(m['PixelObs'], sp['PixelObs'])} | "
                     f"{cell(m['AddRenderObservation'], sp['AddRenderObservation'])} | {r['ratio']:.3f} |")
    return "\n".join(lines)


def _snapshot(rows: list[dict[str, Any]]) -> str:
    lines = ["| env | pybullet saveBullet + restoreState | pixelrig snapshot | pixelrig restore | restore, world "
             "rebuilt | snapshot size (.bullet) |", "|---|---|---|---|---|---|"]
    for r in rows:
        m = r["median_ms"]
        size = f"{r['snapshot_bytes'] / 1000:.1f} KB" + (f" ({r['bullet_file_bytes'] / 1000:.1f} KB)"
                                                          if "bullet_file_bytes" in r else "")
        lines.append(f"| {r['env']} | {m['pybullet saveBullet (disk)']:.2f} + "
                     f"{m['pybullet restoreState(fileName)']:.2f} ms | {m['pixelrig snapshot']:.2f} ms | "
                     f"{m['pixelrig restore']:.2f} ms | {m['pixelrig restore, world rebuilt']:.1f} ms | {size} |")
    return "\n".join(lines)


def render(report: dict[str, Any]) -> str:
    """The benchmark page's generated part (tables and their one-line headings) for a ``pixelrig bench``
    report; sections the report lacks are left out. Image paths are relative to ``docs/`` (:data:`PAGE`)."""
    parts = [f"Measured on **{report['date']}**: {report['machine']}, pixelrig {report.get('pixelrig', '?')}."]
    if "headline" in report:
        parts.append("**Rig vs raw pybullet** (3 cameras, 84², rgb+depth+label; frames/s count every camera once; on "
                     "gl rows *raw* and *naive* are pybullet's TinyRenderer, so rig/raw is gl's speed-up over raw "
                     "pybullet):\n\n" + format_table(report["headline"]))
    if "matrix" in report:
        parts.append("**The matrix** (PandaPush-v0): rig frames/s per backend, camera count, modalities and size, and "
                     "rig/raw per size:\n\n" + _matrix(report["matrix"])
                     + "\n\n![rig frames/s vs resolution](bench_fps.png)")
    if "renderers" in report:
        parts.append("**gl against TinyRenderer** on every bundled env's default rig, at reset and over random "
                     "steps:\n\n" + format_fidelity(report["renderers"]))
    if "batched" in report:
        parts.append("**Batched gl vector env** (PandaPush-v0, 3 cameras at 84², rgb+depth+label; env steps/s of N "
                     "envs: bare physics stepped one by one (the ceiling), N PixelObs envs on TinyRenderer stepped "
                     "one by one, and `make_vec(N, vectorization_mode=\"batched\", renderer=\"gl\")`):\n\n"
                     + format_batched(report["batched"]))
    if "render" in report:
        parts.append(RENDER_COST_HEADING + "\n\n" + format_render_cost(report["render"]))
    if "lod" in report:
        parts.append("**Level of detail** (PandaPush-v0's rig; speed per renderer and size, then fidelity against "
                     "\"full\"):\n\n" + format_lod(report["lod"]))
    if "addrender" in report:
        parts.append("**PixelObs vs Gymnasium's `AddRenderObservation`** (same 320×240 render camera, TinyRenderer, "
                     "env steps/s):\n\n" + _addrender(report["addrender"]))
    if "snapshot" in report:
        parts.append("**Snapshot and restore** (after 200 random steps):\n\n" + _snapshot(report["snapshot"]))
    if "vector" in report:
        r = report["vector"][0]
        parts.append(f"**Vector scaling** (`make_vec`, async, {r['env']} with its 3-camera rig): 1 worker "
                     f"{r['median']['1']:.1f} steps/s, 2 workers {r['median']['2']:.1f} steps/s: "
                     f"**{r['scaling']:.2f}×** on 2 cores.")
    if "datasets" in report:
        r = report["datasets"][0]
        parts.append(f"**Datasets** (`benchmarks/dataset_speed.py`: PandaPush-v0's rig, the scripted pusher, "
                     f"{r['episodes']} episodes, {r['frames']} frames; frames/s end to end, env and ffmpeg start-up "
                     "included, best of "
                     f"{r['repeats']}; replay re-renders with the same rig, so a live run of the same actions is "
                     "what it replaces):\n\n" + format_datasets(report["datasets"]))
    if "rllib" in report:
        r = report["rllib"]
        parts.append(f"**RLlib env runners** (`benchmarks/rllib_scaling.py`, measured {r.get('date', '?')}: "
                     f"{r['env']} from a {r['size']}² tracking camera, {r['renderer']}; each runner steps a batched "
                     "vector env and samples with "
                     "`SingleAgentEnvRunner.sample`, episodes returned to the driver, against the same envs stepped "
                     "in a plain loop):\n\n" + format_rllib(r))
    if "soak" in report:
        r = report["soak"]
        parts.append(f"**Soak**: {r['frames']:,} PixelObs frames (CartPole, default rig, resets included). Peak RSS "
                     f"{r['peak_rss_bytes'] / 2**20:.0f} MiB; growth after the warm-up "
                     f"{r['growth_bytes_after_warmup'] / 1024:.0f} KiB "
                     f"({r['growth_bytes_per_frame_after_warmup']:.1f} bytes/frame).")
    return "\n\n".join(parts)


def render_headline(report: dict[str, Any]) -> str:
    """The README's headline of a ``pixelrig bench`` report: the date and machine, the rig against raw pybullet
    per scene and renderer, batched gl against TinyRenderer, and rendering against physics (the sections the report
    has)."""
    parts = [f"Measured on **{report['date']}**: {report['machine']}, pixelrig {report.get('pixelrig', '?')}."]
    if "headline" in report:
        rows = report["headline"]
        shape = sorted({(r["cameras"], r["size"], "+".join(r["modalities"])) for r in rows})
        what = "; ".join(f"{n} cameras at {size}², {mods}" for n, size, mods in shape)
        lines = [f"Rig frames/s ({what}; medians) against raw pybullet drawing the same cameras (on gl rows, raw is "
                 "pybullet's TinyRenderer, so rig/raw is gl's speed-up over it):", "",
                 "| scene | renderer | raw pybullet fps | rig fps | rig/raw |", "|---|---|---|---|---|"]
        for r in rows:
            m = r["median_fps"]
            lines.append(f"| {r['scene']} | {r['renderer']} | {m['raw']:.1f} | {m['rig']:.1f} | "
                         f"{r['ratio_rig_vs_raw']:.2f}× |")
        parts.append("\n".join(lines))
    if "batched" in report:
        b = report["batched"]
        rows = b["rows"]
        row = next((r for r in rows if r["n"] == 16), rows[-1])
        parts.append(f"Batched gl (`make_vec(..., vectorization_mode=\"batched\", renderer=\"gl\")`, {b['env']}, "
                     f"{row['n']} envs): {row['batched']['median']:.1f} env steps/s, "
                     f"{row['batched_over_tiny']:.2f}× the same envs on TinyRenderer stepped one by one.")
    if "render" in report:
        r = report["render"]
        ratios = {mode: [row["modes"][mode]["ratio"] for row in r["rows"]] for mode in ("tiny", "gl", "batched")}
        spans = ", ".join(f"{name} {min(v):.2f}-{max(v):.2f}×" for name, v in
                          (("tiny", ratios["tiny"]), ("gl", ratios["gl"]), (f"gl batched ({r['num_envs']} envs)",
                                                                           ratios["batched"])))
        speedup = [row["batched_over_single"] for row in r["rows"]]
        parts.append(f"Rendering over physics per env step on the {len(r['rows'])} manipulation tasks' default rigs: "
                     f"{spans}; {r['num_envs']} batched gl envs {min(speedup):.2f}-{max(speedup):.2f}× a single gl "
                     "env's steps/s.")
    return "\n\n".join(parts)


def replace_block(path: Path, start: str, end: str, text: str) -> None:
    """Replace the generated block between the markers ``start`` and ``end`` in the file at ``path`` with ``text``."""
    content = path.read_text()
    block = f"{start}\n{text}\n{end}"
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    if not pattern.search(content):
        raise ValueError(f"{path} has no generated benchmark block ({start} ... {end}) to replace")
    path.write_text(pattern.sub(lambda _: block, content))


def write_docs(root: Path, report: dict[str, Any]) -> None:
    """Rewrite the benchmark page's tables (:data:`PAGE`) and the README's headline (:data:`README`) under the
    repository folder ``root``."""
    replace_block(root / PAGE, START, END, render(report))
    replace_block(root / README, HEADLINE_START, HEADLINE_END, render_headline(report))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pixelrig.tools.bench.report", description=__doc__)
    parser.add_argument("--json", default="docs/bench.json")
    parser.add_argument("--root", default=".", help="the repository folder (README.md and docs/benchmark.md)")
    args = parser.parse_args(argv)
    write_docs(Path(args.root), json.loads(Path(args.json).read_text()))
    print(f"{PAGE} and {README}'s headline: benchmark blocks rewritten from {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
