"""Confidence intervals for success rates as pure functions: Wilson's score interval for one proportion and
Newcombe's score interval for the difference of two paired proportions."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pixelrig.errors import whole_number

Z95 = 1.959963984540054
"""The standard normal's 97.5th percentile: a two-sided 95% interval."""


@dataclass(frozen=True)
class PairedCounts:
    """A paired 2x2 table of successes: the same seeds under the control and under a factor.

    Attributes:
        both: seeds that succeeded under both.
        control_only: seeds that succeeded under the control only (flipped to failure by the factor).
        factor_only: seeds that succeeded under the factor only (flipped to success).
        neither: seeds that failed under both.
    """

    both: int
    control_only: int
    factor_only: int
    neither: int

    @property
    def n(self) -> int:
        """Pairs in the table."""
        return self.both + self.control_only + self.factor_only + self.neither

    @property
    def difference(self) -> float:
        """The factor's success rate less the control's (0.0 for an empty table)."""
        return (self.factor_only - self.control_only) / self.n if self.n else 0.0


def _check(successes: int, n: int) -> None:
    for name, value in (("successes", successes), ("n", n)):
        whole_number(name, value, 0)
    if successes > n:
        raise ValueError(f"successes={successes} must be at most n={n}")


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion (Wilson 1927), without continuity correction.

    Args:
        successes: successes seen.
        n: trials.
        z: the normal quantile (1.96 for 95%).

    Returns:
        ``(low, high)`` within [0, 1]; ``(0.0, 1.0)`` when ``n`` is 0 (nothing is known).

    Raises:
        ValueError: negative or non-integer counts, or more successes than trials.
    """
    _check(successes, n)
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    # exact at the ends (rounding leaves 1e-17 there otherwise): no success has low 0, all successes high 1
    return (0.0 if successes == 0 else low), (1.0 if successes == n else high)


def paired_difference_interval(counts: PairedCounts, z: float = Z95) -> tuple[float, float]:
    """Newcombe's score interval for the difference of paired proportions (Newcombe 1998, Statistics in Medicine
    17:2635-2650, method 10): the factor's rate less the control's.

    With ``p1`` the control's rate, ``p2`` the factor's, ``(l1, u1)`` and ``(l2, u2)`` their Wilson intervals and
    ``phi`` the correlation of the paired outcomes, the interval for ``p2 - p1`` is ``[D - delta, D + epsilon]`` with
    ``delta = sqrt((p2 - l2)^2 - 2 phi (p2 - l2)(u1 - p1) + (u1 - p1)^2)`` and ``epsilon = sqrt((u2 - p2)^2 - 2 phi
    (u2 - p2)(p1 - l1) + (p1 - l1)^2)``. ``phi`` is Newcombe's: ``(AD - BC) / sqrt(efgh)`` over the table's
    cells and margins, with ``AD - BC`` replaced by ``max(AD - BC - n/2, 0)`` when positive, and 0 when a margin is
    empty.

    Args:
        counts: the paired table.
        z: the normal quantile (1.96 for 95%).

    Returns:
        ``(low, high)`` within [-1, 1]; ``(-1.0, 1.0)`` for an empty table.

    Raises:
        ValueError: a negative or non-integer count.
    """
    a, b, c, d = counts.both, counts.control_only, counts.factor_only, counts.neither
    for name, value in (("both", a), ("control_only", b), ("factor_only", c), ("neither", d)):
        whole_number(f"PairedCounts.{name}", value, 0)
    n = counts.n
    if n == 0:
        return -1.0, 1.0
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_interval(a + b, n, z)
    l2, u2 = wilson_interval(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0
    if margins > 0:
        cross = a * d - b * c
        phi = (max(cross - n / 2, 0.0) if cross > 0 else cross) / math.sqrt(margins)
    diff = p2 - p1
    delta = math.sqrt(max((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0.0))
    epsilon = math.sqrt(max((u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2, 0.0))
    return max(-1.0, diff - delta), min(1.0, diff + epsilon)


def paired_counts(control: list[bool], factor: list[bool]) -> PairedCounts:
    """The paired table of two success lists over the same seeds, in the same order.

    Raises:
        ValueError: lists of different lengths.
    """
    if len(control) != len(factor):
        raise ValueError(f"paired outcomes need one per seed in both: got {len(control)} and {len(factor)}")
    pairs = list(zip(map(bool, control), map(bool, factor), strict=True))
    return PairedCounts(both=pairs.count((True, True)), control_only=pairs.count((True, False)),
                        factor_only=pairs.count((False, True)), neither=pairs.count((False, False)))
