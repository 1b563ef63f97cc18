"""Line charts for the benchmark and training plots, drawn with matplotlib (the ``pixelrig[bench]`` extra)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from gymnasium.error import DependencyNotInstalled


def line_chart(series: Mapping[str, tuple[Sequence[float], Sequence[float]]], path: str | Path, *, title: str,
               x_label: str, y_label: str, log_y: bool = False, size: tuple[float, float] = (7.6, 4.4)) -> None:
    """Draw named (x, y) series as lines (markers where a series has few points) with a legend; write a PNG.

    Raises:
        DependencyNotInstalled: matplotlib is missing (``pip install 'pixelrig[bench]'``).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise DependencyNotInstalled(
            f"pixelrig's plots need matplotlib ({exc}): pip install 'pixelrig[bench]'"
        ) from None
    fig, ax = plt.subplots(figsize=size, dpi=100)
    try:
        colors = plt.get_cmap("tab10" if len(series) <= 10 else "tab20").colors  # one colour per series
        for i, (name, (xs, ys)) in enumerate(series.items()):
            ax.plot(xs, ys, label=name, linewidth=1.8, marker="o" if len(xs) <= 12 else None, markersize=4,
                    color=colors[i % len(colors)])
        if log_y:
            ax.set_yscale("log")
        xs_all = sorted({x for xs, _ in series.values() for x in xs})
        if len(xs_all) <= 8:
            ax.set_xticks(xs_all, [f"{x:g}" for x in xs_all])
        ax.set_title(title, fontsize=11)
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.grid(True, which="major", color="0.85")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
        fig.tight_layout()
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path)
    finally:
        plt.close(fig)
