"""The README's code runs as written (a newcomer pastes it)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    blocks = re.findall(r"^( *)```python\n(.*?)^ *```", README.read_text(), flags=re.S | re.M)
    return [textwrap.dedent(body) for _, body in blocks]


def test_every_python_block_runs(xvfb: str) -> None:
    """Every ```python block, in order, in one namespace (on a real X server: one block opens a window)."""
    blocks = python_blocks()
    assert len(blocks) >= 2, "README lost its code"
    namespace: dict = {}  # one session, as if pasted one after the other
    for i, block in enumerate(blocks):
        exec(compile(block, f"README.md python block {i}", "exec"), namespace)  # noqa: S102 (our own README)
        if i == 0:
            obs = namespace["obs"]
            assert obs["front/rgb"].shape == (84, 84, 3)
            assert obs["front/depth"].shape == (84, 84, 1)
            assert obs["wrist/rgb"].shape == (64, 64, 3)
    namespace["env"].close()


def test_benchmark_block_is_rendered_from_the_committed_json() -> None:
    """Every figure in the README's benchmark block comes from docs/bench.json (a run's output)."""
    import json

    from pixelrig.tools.bench.report import END, START, render

    text = README.read_text()
    block = text[text.index(START) + len(START):text.index(END)].strip()
    report = json.loads((README.parent / "docs" / "bench.json").read_text())
    assert block == render(report).strip(), "README's benchmark block is stale: python -m pixelrig.tools.bench.report"
