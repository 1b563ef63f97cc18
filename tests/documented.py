"""What the documentation states, read from it: README.md and the manual's docs/*.md as one text, so that a test
pins a documented constant to the words a user reads rather than to the class's own table (a changed constant,
or a changed sentence, fails the test either way)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@cache
def doc_text() -> str:
    """README.md followed by every docs/*.md, in name order, joined by blank lines."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return "\n\n".join(f.read_text(encoding="utf-8") for f in files)


def doc_match(pattern: str, flags: int = 0) -> re.Match[str]:
    """The first match of ``pattern`` in the documentation (whitespace in the text normalised to single spaces, so
    a sentence wrapped over lines matches), or an AssertionError that quotes the pattern."""
    text = re.sub(r"\s+", " ", doc_text())
    match = re.search(pattern, text, flags)
    assert match, f"the documentation no longer states {pattern!r}: update the test with the text"
    return match


def table_rows(first_cell: str) -> list[list[str]]:
    """The cells of every markdown table row (indented or not) whose first cell matches ``first_cell`` (a regex,
    anchored)."""
    rows = []
    for line in doc_text().splitlines():
        line = line.strip()
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells and re.fullmatch(first_cell, cells[0]):
                rows.append(cells)
    return rows


def number(text: str) -> float:
    """The one number in ``text`` (``"10 cm"`` -> 10.0); an AssertionError if there are none or several."""
    found = re.findall(r"-?\d+(?:\.\d+)?", text)
    assert len(found) == 1, f"expected one number in {text!r}, found {found}"
    return float(found[0])
