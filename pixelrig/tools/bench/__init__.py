"""Benchmarks against raw pybullet measured in the same run: ``pixelrig bench`` and the scripts in
``benchmarks/`` (each section is one module here; :mod:`~pixelrig.tools.bench.main` runs them all)."""
