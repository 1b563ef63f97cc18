"""``python -m pixelrig``: the command line (see :mod:`pixelrig.tools.cli`)."""

from pixelrig.tools.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
