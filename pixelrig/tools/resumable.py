"""What the resumable commands (``pixelrig collect``, ``pixelrig eval``) say when they are interrupted."""

from __future__ import annotations

import sys


def interrupted(command: str, out: object) -> int:
    """Say that ``pixelrig COMMAND`` was interrupted and how to go on from ``out``; the exit status 130 (SIGINT)."""
    print(f"pixelrig {command}: interrupted; the episodes finished so far are in {out}: run the same command with "
          "--resume to go on", file=sys.stderr)
    return 130
