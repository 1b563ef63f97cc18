"""The evaluation's statistics: Wilson's interval against published values, Newcombe's paired interval against an
independent computation (each Wilson limit found by bisection on the score equation, the correlation from the
table's cells), and Hypothesis properties of both."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pixelrig.evaluation.stats import PairedCounts, paired_counts, paired_difference_interval, wilson_interval

Z = 1.959963984540054


@pytest.mark.parametrize(("x", "n", "low", "high"), [
    (81, 263, 0.2553, 0.3662),   # Newcombe (1998a), Statistics in Medicine 17:857, Table I: 81/263
    (15, 148, 0.0624, 0.1605),   # ibid.: 15/148
    (0, 20, 0.0, 0.1611),        # ibid.: 0/20
    (1, 29, 0.0061, 0.1718),     # ibid.: 1/29
])
def test_wilson_matches_newcombes_published_values(x: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson_interval(x, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def score_limit(x: int, n: int, side: int) -> float:
    """A Wilson limit found by bisection: the pi on one side of x/n where |x/n - pi| = z sqrt(pi (1 - pi) / n)."""
    p = x / n
    lo, hi = (p, 1.0) if side > 0 else (0.0, p)
    if (side > 0 and x == n) or (side < 0 and x == 0):
        return p
    for _ in range(200):
        mid = (lo + hi) / 2
        inside = abs(p - mid) <= Z * math.sqrt(mid * (1 - mid) / n)
        if (side > 0) == inside:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def newcombe_by_hand(a: int, b: int, c: int, d: int) -> tuple[float, float]:
    """Method 10 of Newcombe (1998b) written out again from the paper's recipe, factor (a + c) less control
    (a + b)."""
    n = a + b + c + d
    p_ctrl, p_fac = (a + b) / n, (a + c) / n
    l_ctrl, u_ctrl = score_limit(a + b, n, -1), score_limit(a + b, n, +1)
    l_fac, u_fac = score_limit(a + c, n, -1), score_limit(a + c, n, +1)
    e, f, g, h = a + b, c + d, a + c, b + d
    if e * f * g * h == 0:
        phi = 0.0
    else:
        ad_bc = a * d - b * c
        phi = (max(ad_bc - n / 2, 0) if ad_bc > 0 else ad_bc) / math.sqrt(e * f * g * h)
    diff = p_fac - p_ctrl
    delta = math.sqrt((p_fac - l_fac) ** 2 - 2 * phi * (p_fac - l_fac) * (u_ctrl - p_ctrl) + (u_ctrl - p_ctrl) ** 2)
    eps = math.sqrt((u_fac - p_fac) ** 2 - 2 * phi * (u_fac - p_fac) * (p_ctrl - l_ctrl) + (p_ctrl - l_ctrl) ** 2)
    return diff - delta, diff + eps


@pytest.mark.parametrize("cells", [(36, 12, 2, 0), (5, 5, 0, 0), (20, 3, 1, 76), (0, 0, 0, 10), (10, 0, 0, 0),
                                   (1, 9, 0, 0), (40, 1, 8, 51), (12, 7, 7, 24)])
def test_paired_interval_matches_an_independent_computation(cells: tuple[int, int, int, int]) -> None:
    got = paired_difference_interval(PairedCounts(*cells))
    want = newcombe_by_hand(*cells)
    assert got == pytest.approx(want, abs=1e-9)


def test_paired_counts_and_difference() -> None:
    counts = paired_counts([True, True, False, False, True], [True, False, True, False, False])
    assert counts == PairedCounts(both=1, control_only=2, factor_only=1, neither=1)
    assert counts.difference == pytest.approx(-0.2)
    with pytest.raises(ValueError, match="one per seed"):
        paired_counts([True], [True, False])


def test_bad_counts_are_errors() -> None:
    with pytest.raises(ValueError, match="at most n"):
        wilson_interval(3, 2)
    with pytest.raises(ValueError, match="successes=-1"):
        wilson_interval(-1, 2)
    with pytest.raises(ValueError, match="control_only"):
        paired_difference_interval(PairedCounts(1, -1, 0, 0))
    assert wilson_interval(0, 0) == (0.0, 1.0) and paired_difference_interval(PairedCounts(0, 0, 0, 0)) == (-1.0, 1.0)


tables = st.tuples(*[st.integers(0, 60)] * 4).filter(lambda t: sum(t) > 0)


@settings(max_examples=300, deadline=None)
@given(tables)
def test_paired_interval_properties(cells: tuple[int, int, int, int]) -> None:
    counts = PairedCounts(*cells)
    low, high = paired_difference_interval(counts)
    assert -1.0 <= low <= counts.difference <= high <= 1.0
    a, b, c, d = cells  # swapping control and factor mirrors the interval
    s_low, s_high = paired_difference_interval(PairedCounts(a, c, b, d))
    assert s_low == pytest.approx(-high, abs=1e-12) and s_high == pytest.approx(-low, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(tables, st.integers(2, 5))
def test_paired_interval_narrows_with_n(cells: tuple[int, int, int, int], k: int) -> None:
    low, high = paired_difference_interval(PairedCounts(*cells))
    k_low, k_high = paired_difference_interval(PairedCounts(*(k * x for x in cells)))
    assert k_high - k_low <= high - low + 1e-12


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))).filter(lambda t: t[1] > 0),
       st.integers(2, 5))
def test_wilson_properties(xn: tuple[int, int], k: int) -> None:
    x, n = xn
    low, high = wilson_interval(x, n)
    assert 0.0 <= low <= x / n <= high <= 1.0
    m_low, m_high = wilson_interval(n - x, n)  # failures mirror successes
    assert m_low == pytest.approx(1 - high, abs=1e-12) and m_high == pytest.approx(1 - low, abs=1e-12)
    k_low, k_high = wilson_interval(k * x, k * n)
    assert k_high - k_low <= high - low + 1e-12
