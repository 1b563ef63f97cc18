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
