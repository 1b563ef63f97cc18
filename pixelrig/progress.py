"""A dependency-free progress bar for the command line (writes to stderr, quiet when not a terminal in CI)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")


class Progress:
    """``for x in Progress(range(n), "rendering"):`` draws ``rendering  42/100 [=====>    ] 12.3 it/s``.

    Redraws at most every 0.1 s on a terminal; elsewhere prints a line at every 10 %.
    """

    def __init__(self, iterable: Iterable[T], label: str, total: int | None = None, stream: TextIO | None = None):
        self.iterable = iterable
        self.label = label
        self.total = total if total is not None else (len(iterable) if hasattr(iterable, "__len__") else None)
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last = 0.0
        self._last_decile = -1

    def __iter__(self) -> Iterator[T]:
        start = time.perf_counter()
        n = 0
        for n, item in enumerate(self.iterable, 1):
            yield item
            self._draw(n, time.perf_counter() - start, final=False)
        self._draw(n, time.perf_counter() - start, final=True)

    def _draw(self, n: int, elapsed: float, final: bool) -> None:
        rate = n / elapsed if elapsed > 0 else 0.0
        if self.total:
            frac = min(1.0, n / self.total)
            bar = "=" * int(frac * 30)
            bar = (bar + ">").ljust(30)[:30] if frac < 1 else bar
            text = f"{self.label} {n:>6}/{self.total} [{bar}] {rate:6.1f} it/s"
        else:
            text = f"{self.label} {n:>6} {rate:6.1f} it/s"
        if self.tty:
            now = time.perf_counter()
            if final or now - self._last > 0.1:
                self.stream.write("\r" + text + ("\n" if final else ""))
                self.stream.flush()
                self._last = now
        else:
            decile = int(10 * n / self.total) if self.total else -1
            if final or (self.total and decile > self._last_decile):
                self._last_decile = decile
                self.stream.write(text + "\n")
                self.stream.flush()
