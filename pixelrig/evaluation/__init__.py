"""Evaluation: a policy on a task under named visual factors and a matched control, with intervals, in a report.

Importing this package is light: the names below load their modules on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pixelrig.system.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "FACTORS": "pixelrig.evaluation.factors",
    "EvalReport": "pixelrig.evaluation.run",
    "Factor": "pixelrig.evaluation.factors",
    "evaluate": "pixelrig.evaluation.run",
    "paired_difference_interval": "pixelrig.evaluation.stats",
    "wilson_interval": "pixelrig.evaluation.stats",
}

if TYPE_CHECKING:
    from pixelrig.evaluation.factors import FACTORS, Factor
    from pixelrig.evaluation.run import EvalReport, evaluate
    from pixelrig.evaluation.stats import paired_difference_interval, wilson_interval


__getattr__, __dir__ = lazy_exports("pixelrig.evaluation", _EXPORTS, globals())

__all__ = ["FACTORS", "EvalReport", "Factor", "evaluate", "paired_difference_interval", "wilson_interval"]
