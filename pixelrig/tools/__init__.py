"""What the ``pixelrig`` command runs (demo, view, bench, renderer): tools built on the library, never imported
by it."""
