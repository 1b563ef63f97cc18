"""The README's tour runs as written (a newcomer pastes it)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_tour_runs() -> None:
    blocks = python_blocks()
    assert blocks, "README has no python block"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md tour", "exec"), namespace)  # noqa: S102 (our own README)
    obs = namespace["obs"]
    assert obs["front/rgb"].shape == (84, 84, 3)
    assert obs["front/depth"].shape == (84, 84, 1)
    assert obs["wrist/rgb"].shape == (64, 64, 3)
    namespace["env"].close()
