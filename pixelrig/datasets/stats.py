"""LeRobot's ``meta/stats.json``: per-feature statistics, streamed as episodes are written and combined over
episodes as LeRobot does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
"""The quantiles LeRobot's stats carry (q01, q10, q50, q90, q99)."""


def _quantile_key(q: float) -> str:
    return f"q{int(round(q * 100)):02d}"


def vector_stats(values: np.ndarray) -> dict[str, np.ndarray]:
    """LeRobot's per-feature statistics of (N, ...) values over the first axis: min, max, mean, std, count and
    the :data:`QUANTILES` (exact, inverted CDF)."""
    v = np.asarray(values, dtype=np.float64)
    out = {"min": v.min(axis=0), "max": v.max(axis=0), "mean": v.mean(axis=0), "std": v.std(axis=0),
           "count": np.array([v.shape[0]], dtype=np.int64)}
    for q in QUANTILES:
        out[_quantile_key(q)] = np.quantile(v, q, axis=0, method="inverted_cdf")
    return out


class HistogramStats:
    """Exact statistics of integer images, per channel, from running histograms (memory: one histogram).

    Args:
        channels: channels per pixel.
        levels: number of integer levels (256 for uint8, 65536 for uint16).
        scale: stats are reported as value × scale (1/255 for LeRobot's images).
    """

    def __init__(self, channels: int, levels: int, scale: float = 1.0) -> None:
        self.hist = np.zeros((channels, levels), dtype=np.int64)
        self.frames = 0
        self.scale = scale

    def add(self, image: np.ndarray) -> None:
        """Count one (H, W, C) image."""
        flat = np.asarray(image).reshape(-1, self.hist.shape[0])
        levels = self.hist.shape[1]
        for c in range(self.hist.shape[0]):
            self.hist[c] += np.bincount(flat[:, c], minlength=levels)
        self.frames += 1

    def stats(self) -> dict[str, np.ndarray]:
        """min, max, mean, std, quantiles with shape (C, 1, 1) and count (frames) with shape (1,)."""
        levels = np.arange(self.hist.shape[1], dtype=np.float64)
        total = self.hist.sum(axis=1)
        nonzero = [np.flatnonzero(h) for h in self.hist]
        mean = (self.hist * levels).sum(axis=1) / total
        var = (self.hist * (levels[None, :] - mean[:, None]) ** 2).sum(axis=1) / total
        cdf = np.cumsum(self.hist, axis=1)
        out = {"min": np.array([n[0] for n in nonzero], dtype=np.float64),
               "max": np.array([n[-1] for n in nonzero], dtype=np.float64),
               "mean": mean, "std": np.sqrt(var)}
        for q in QUANTILES:
            out[_quantile_key(q)] = np.array([np.searchsorted(cdf[c], q * total[c]) for c in range(len(total))],
                                             dtype=np.float64)
        shaped = {k: (v * self.scale).reshape(-1, 1, 1) for k, v in out.items()}
        shaped["count"] = np.array([self.frames], dtype=np.int64)
        return shaped


def aggregate_stats(parts: Sequence[Mapping[str, Mapping[str, np.ndarray]]]) -> dict[str, dict[str, np.ndarray]]:
    """Combine per-episode stats as LeRobot does: exact min, max, mean and std; quantiles as count-weighted means
    of the episodes' quantiles."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for key in parts[0]:
        stats = [p[key] for p in parts if key in p]
        counts = np.array([float(s["count"][0]) for s in stats])
        total = counts.sum()
        w = counts.reshape((-1,) + (1,) * np.asarray(stats[0]["mean"]).ndim)
        means = np.stack([s["mean"] for s in stats])
        mean = (means * w).sum(axis=0) / total
        var = ((np.stack([s["std"] for s in stats]) ** 2 + (means - mean) ** 2) * w).sum(axis=0) / total
        agg = {"min": np.stack([s["min"] for s in stats]).min(axis=0),
               "max": np.stack([s["max"] for s in stats]).max(axis=0),
               "mean": mean, "std": np.sqrt(var), "count": np.array([int(total)], dtype=np.int64)}
        for q in QUANTILES:
            k = _quantile_key(q)
            agg[k] = (np.stack([s[k] for s in stats]) * w).sum(axis=0) / total
        out[key] = agg
    return out


def stats_to_json(stats: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, dict[str, Any]]:
    """Stats as nested lists (JSON); NaN never appears (empty features are skipped by the caller)."""
    out: dict[str, dict[str, Any]] = {}
    for key, s in stats.items():
        out[key] = {}
        for name, value in s.items():
            arr = np.asarray(value)
            if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
                raise ValueError(f"stats of {key!r}: {name} is not finite")
            out[key][name] = arr.tolist()
    return out


def stats_from_json(data: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, np.ndarray]]:
    """Inverse of :func:`stats_to_json`."""
    return {k: {n: np.asarray(v) for n, v in s.items()} for k, s in data.items()}
