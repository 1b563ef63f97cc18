"""An evaluation's report from its episode rows: per factor the success rate with its Wilson interval, rewards and
lengths, the change against the control with Newcombe's paired interval and the seeds that flipped; written as
``report.json`` (lerobot-eval's field names where it has them), ``report.md`` and ``report.png``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pixelrig.evaluation.factors import CONTROL, FACTORS
from pixelrig.evaluation.runner import EpisodeRow
from pixelrig.evaluation.stats import paired_counts, paired_difference_interval, wilson_interval


def _pc(value: float) -> float:
    return round(100.0 * value, 2)


def factor_summary(rows: Sequence[EpisodeRow], control: Sequence[EpisodeRow] | None,
                   seconds: float | None = None) -> dict[str, Any]:
    """One factor's figures from its rows (sorted by episode), against the control's rows (None: it is the control).

    Returns:
        ``n_episodes``, ``n_success``, ``pc_success`` (percent), ``pc_success_ci95`` (Wilson), ``avg_sum_reward``,
        ``avg_max_reward``, ``avg_length``, and (not for the control) ``vs_control``: ``pc_change`` (percentage
        points), ``pc_change_ci95`` (Newcombe's paired interval), ``significant`` (the interval excludes 0),
        ``n_paired``, ``seeds_to_failure``, ``seeds_to_success``; ``eval_s`` and ``episodes_per_min`` when
        ``seconds`` is known.
    """
    n = len(rows)
    successes = sum(r.success for r in rows)
    low, high = wilson_interval(successes, n)
    out: dict[str, Any] = {
        "n_episodes": n, "n_success": successes, "pc_success": _pc(successes / n) if n else 0.0,
        "pc_success_ci95": [_pc(low), _pc(high)],
        "avg_sum_reward": float(np.mean([r.sum_reward for r in rows])) if n else 0.0,
        "avg_max_reward": float(np.mean([r.max_reward for r in rows])) if n else 0.0,
        "avg_length": float(np.mean([r.length for r in rows])) if n else 0.0,
    }
    if seconds is not None:
        out["eval_s"] = round(seconds, 2)
        out["episodes_per_min"] = round(60.0 * n / seconds, 1) if seconds > 0 else None
    if control is not None:
        by_seed = {r.seed: r for r in control}
        pairs = [(by_seed[r.seed], r) for r in rows if r.seed in by_seed]
        counts = paired_counts([c.success for c, _ in pairs], [f.success for _, f in pairs])
        lo, hi = paired_difference_interval(counts)
        out["vs_control"] = {
            "pc_change": _pc(counts.difference), "pc_change_ci95": [_pc(lo), _pc(hi)],
            "significant": bool(lo > 0 or hi < 0), "n_paired": counts.n,
            "seeds_to_failure": sorted(c.seed for c, f in pairs if c.success and not f.success),
            "seeds_to_success": sorted(c.seed for c, f in pairs if f.success and not c.success),
            "avg_sum_reward_change": float(np.mean([f.sum_reward - c.sum_reward for c, f in pairs])) if pairs else 0.0,
        }
    return out


def build_report(rows: Sequence[EpisodeRow], factors: Sequence[str], episodes: int, settings: Mapping[str, Any],
                 seconds: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The report of an evaluation: its settings, per factor its figures and parameters, per episode its row.

    Args:
        rows: the finished episodes (of any factors; those of ``factors`` with numbers below ``episodes`` count).
        factors: the factors, ``control`` first.
        episodes: episodes per factor.
        settings: what the run was (env id, policy, seed, ...), copied into the report.
        seconds: wall time each factor's episodes took (summed over resumed runs).
    """
    keep = [r for r in rows if r.factor in factors and r.episode_ix < episodes]
    ordered = sorted(keep, key=lambda r: (list(factors).index(r.factor), r.episode_ix))
    by_factor = {f: [r for r in ordered if r.factor == f] for f in factors}
    out: dict[str, Any] = {**settings, "episodes": episodes, "factors": list(factors), "per_factor": {}}
    for factor in factors:
        summary = factor_summary(by_factor[factor], None if factor == CONTROL else by_factor[CONTROL],
                                 (seconds or {}).get(factor))
        out["per_factor"][factor] = {"description": FACTORS[factor].description,
                                     "parameters": FACTORS[factor].parameters(), **summary}
    all_rows = [r for f in factors for r in by_factor[f]]
    out["aggregated"] = factor_summary(by_factor[CONTROL], None)  # lerobot-eval's aggregate: the unchanged env
    out["per_episode"] = [r.to_dict() for r in all_rows]
    return out


def _interval(values: Sequence[float]) -> str:
    return f"[{values[0]:.1f}, {values[1]:.1f}]"


def report_markdown(report: Mapping[str, Any]) -> str:
    """The report's table as markdown: one row per factor."""
    lines = [f"**{report['env_id']}**, policy `{report['policy']}`: {report['episodes']} episodes per factor "
             f"(seeds {report['seed']} to {report['seed'] + report['episodes'] - 1}, the same in every factor).", "",
             "| factor | success % [95% CI] | change vs control, points [95% CI] | flipped to failure / success | "
             "avg return | avg length | episodes/min |",
             "|---|---|---|---|---|---|---|"]
    for name, f in report["per_factor"].items():
        vs = f.get("vs_control")
        change = "—" if vs is None else (f"{vs['pc_change']:+.1f} {_interval(vs['pc_change_ci95'])}"
                                         + (" **\\***" if vs["significant"] else ""))
        flips = "—" if vs is None else f"{len(vs['seeds_to_failure'])} / {len(vs['seeds_to_success'])}"
        rate = f.get("episodes_per_min")
        lines.append(f"| {name} | {f['pc_success']:.1f} {_interval(f['pc_success_ci95'])} | {change} | {flips} | "
                     f"{f['avg_sum_reward']:.2f} | {f['avg_length']:.1f} | {'—' if rate is None else rate} |")
    lines += ["", "\\* the paired 95% interval (Newcombe) excludes 0. Success: any step's `info[\"is_success\"]`."]
    return "\n".join(lines) + "\n"


def report_picture(report: Mapping[str, Any], frames: Mapping[str, np.ndarray], path: Path) -> None:
    """``report.png``: each factor's first frame (episode 0, every camera's RGB side by side) above its success bar
    with the Wilson interval (pillow only)."""
    from PIL import Image, ImageDraw

    names = list(report["per_factor"])
    cols = min(len(names), 5)
    rows_n = -(-len(names) // cols)
    tile_w, tile_h = 240, 90
    bars_h = 220
    width = cols * (tile_w + 10) + 10
    height = rows_n * (tile_h + 26) + bars_h + 60
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for k, name in enumerate(names):
        x, y = 10 + (k % cols) * (tile_w + 10), 10 + (k // cols) * (tile_h + 26)
        frame = frames.get(name)
        if frame is not None:
            tile = Image.fromarray(np.asarray(frame, dtype=np.uint8))
            tile.thumbnail((tile_w, tile_h))
            image.paste(tile, (x, y + 14))
        draw.text((x, y), name, fill="black")
    top = rows_n * (tile_h + 26) + 30
    base = top + bars_h - 20
    scale = (bars_h - 40) / 100.0
    draw.text((10, top - 14), f"success % with Wilson 95% intervals, {report['episodes']} episodes per factor "
                              f"({report['env_id']}, policy {report['policy']})", fill="black")
    bar_w = (width - 20) / len(names)
    for k, name in enumerate(names):
        f = report["per_factor"][name]
        x0 = 10 + k * bar_w
        vs = f.get("vs_control")
        color = "#4c72b0" if vs is None else ("#c44e52" if vs["significant"] else "#8da0cb")
        draw.rectangle([x0 + 4, base - f["pc_success"] * scale, x0 + bar_w - 4, base], fill=color)
        lo, hi = f["pc_success_ci95"]
        cx = x0 + bar_w / 2
        draw.line([cx, base - lo * scale, cx, base - hi * scale], fill="black", width=2)
        for v in (lo, hi):
            draw.line([cx - 5, base - v * scale, cx + 5, base - v * scale], fill="black", width=2)
        draw.text((x0 + 2, base + 3), name[:10], fill="black")
        draw.text((x0 + 4, base - f["pc_success"] * scale - 12), f"{f['pc_success']:.0f}", fill="black")
    draw.line([10, base, width - 10, base], fill="black")
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


def write_report(out: Path, report: Mapping[str, Any], frames: Mapping[str, np.ndarray]) -> None:
    """Write ``report.json``, ``report.md`` and ``report.png`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / "report.md").write_text(report_markdown(report))
    report_picture(report, frames, out / "report.png")
