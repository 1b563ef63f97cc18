"""Small line charts drawn with OpenCV (pixelrig's plots, without a plotting dependency)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import cv2
import numpy as np

COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
           (227, 119, 194), (127, 127, 127)]


def line_chart(series: Mapping[str, tuple[Sequence[float], Sequence[float]]], path: str | Path, *, title: str,
               x_label: str, y_label: str, log_y: bool = False, size: tuple[int, int] = (760, 440)) -> None:
    """Draw named (x, y) series as lines with markers, axes with ticks, and a legend; write a PNG."""
    w, h = size
    left, right, top, bottom = 70, 190, 60, 50
    img = np.full((h, w, 3), 255, np.uint8)
    xs = [x for xv, _ in series.values() for x in xv]
    ys = [y for _, yv in series.values() for y in yv if y > 0 or not log_y]
    x0, x1 = min(xs), max(xs)
    tf = np.log10 if log_y else (lambda v: np.asarray(v, float))
    y0, y1 = float(tf(min(ys))), float(tf(max(ys)))
    if log_y:
        y0, y1 = np.floor(y0), np.ceil(y1)
    else:
        y0, y1 = 0.0, y1 * 1.1
    span_x, span_y = (x1 - x0) or 1.0, (y1 - y0) or 1.0

    def pt(x: float, y: float) -> tuple[int, int]:
        return (int(left + (w - left - right) * (x - x0) / span_x),
                int(h - bottom - (h - top - bottom) * (float(tf(y)) - y0) / span_y))

    font, black, grey = cv2.FONT_HERSHEY_SIMPLEX, (0, 0, 0), (200, 200, 200)
    cv2.rectangle(img, (left, top), (w - right, h - bottom), black, 1)
    ticks = [10 ** e for e in range(int(y0), int(y1) + 1)] if log_y else list(np.linspace(y0, y1, 6))
    for t in ticks:
        _, py = pt(x0, t)
        cv2.line(img, (left, py), (w - right, py), grey, 1)
        cv2.putText(img, f"{t:g}" if log_y else f"{t:.0f}", (8, py + 4), font, 0.4, black, 1, cv2.LINE_AA)
    x_ticks = sorted(set(xs)) if len(set(xs)) <= 8 else _nice_ticks(x0, x1)
    for x in x_ticks:
        px, _ = pt(x, ticks[0])
        cv2.putText(img, f"{x:g}", (px - 10, h - bottom + 18), font, 0.4, black, 1, cv2.LINE_AA)
    cv2.putText(img, title, (8, 22), font, 0.5, black, 1, cv2.LINE_AA)
    cv2.putText(img, x_label, (left + (w - left - right) // 2 - 40, h - 12), font, 0.45, black, 1, cv2.LINE_AA)
    cv2.putText(img, y_label, (8, top - 8), font, 0.45, black, 1, cv2.LINE_AA)
    for i, (name, (xv, yv)) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)][::-1]
        points = [pt(x, y) for x, y in zip(xv, yv, strict=True) if y > 0 or not log_y]
        for a, b in zip(points, points[1:], strict=False):
            cv2.line(img, a, b, colour, 2, cv2.LINE_AA)
        if len(points) <= 50:  # markers only where points are few enough to see
            for p in points:
                cv2.circle(img, p, 3, colour, -1, cv2.LINE_AA)
        ly = top + 12 + 18 * i
        cv2.line(img, (w - right + 10, ly), (w - right + 30, ly), colour, 2, cv2.LINE_AA)
        cv2.putText(img, name, (w - right + 35, ly + 4), font, 0.4, black, 1, cv2.LINE_AA)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), img[:, :, ::-1])


def _nice_ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """About ``count`` round tick values covering [lo, hi]."""
    raw = (hi - lo) / max(count - 1, 1) or 1.0
    magnitude = 10 ** np.floor(np.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [float(v) for v in np.arange(np.ceil(lo / step) * step, hi + step / 2, step)]
