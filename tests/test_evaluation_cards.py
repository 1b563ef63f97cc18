"""The report cards the manual shows are their runs' reports: docs/evaluation.md's tables are what
``report_markdown`` writes from the kept reports (docs/eval_*.json), and the expert's card holds what the page says
of it: every episode under every factor has the control's success, return and length, seed for seed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pixelrig.evaluation.report import report_markdown

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_expert_card_is_its_report() -> None:
    report = json.loads((DOCS / "eval_expert.json").read_text())
    page = (DOCS / "evaluation.md").read_text()
    assert report_markdown(report) in page
    assert report["env_id"] == "pixelrig/PandaLift-v0" and report["episodes"] == 100 and len(report["factors"]) == 14
    rows = {}
    for r in report["per_episode"]:
        rows.setdefault(r["factor"], {})[r["seed"]] = (r["success"], r["sum_reward"], r["length"])
    control = rows.pop("control")
    assert len(control) == 100 and all(v[0] for v in control.values())
    assert set(rows) == set(report["factors"]) - {"control"} and all(v == control for v in rows.values())
    seconds = sum(report["seconds_by_factor"].values())
    text = re.sub(r"\s+", " ", page)
    assert f"({seconds:.0f} s of episodes" in text
    rates = [f["episodes_per_min"] for f in report["per_factor"].values()]
    assert f"{min(rates):.0f}-{max(rates):.0f} episodes/min by factor" in text


def test_the_bc_card_is_its_report() -> None:
    report = json.loads((DOCS / "eval_bc.json").read_text())
    page = (DOCS / "evaluation.md").read_text()
    assert report_markdown(report) in page
    assert report["policy"] == "bc_pixels:eval_policy" and report["episodes"] == 100 and len(report["factors"]) == 14
    text = re.sub(r"\s+", " ", page)
    t = report["training"]
    assert (f"in {t['minutes']} min ({t['epochs']} epochs; {t['held_out_success_pc']}% on its own 50 held-out seeds)"
            in text)
    assert f"1,400 episodes in {sum(report['seconds_by_factor'].values()):.0f} s of episodes, " \
           f"{report['wall_seconds'] / 60:.1f} min in all" in text
    vs = {k: f["vs_control"] for k, f in report["per_factor"].items() if f.get("vs_control")}
    falls = [k for k, v in vs.items() if v["significant"] and v["pc_change"] < 0]
    stays = [k for k, v in vs.items() if not v["significant"]]
    assert len(falls) + len(stays) == 13
    names = lambda ks: ", ".join(f"`{k}`" for k in ks[:-1]) + f" and `{ks[-1]}`"  # noqa: E731
    assert f"paired interval excluding 0, under {names(falls)};" in text
    assert f"within the interval under {names(stays)}." in text


def test_the_readme_shows_both_cards_headlines() -> None:
    readme = re.sub(r"\s+", " ", (DOCS.parent / "README.md").read_text())
    for name in ("expert", "bc"):
        report = json.loads((DOCS / f"eval_{name}.json").read_text())
        f = report["per_factor"]
        drops = [k for k, v in f.items() if v.get("vs_control") and v["vs_control"]["significant"]]
        row = (f"| `{report['policy']}` | {f['control']['pc_success']:.0f}% | {f['test_hard']['pc_success']:.0f}% | "
               f"{', '.join(drops) or 'none'} |")
        assert row in readme, row
