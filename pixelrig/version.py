"""pixelrig's version (``pixelrig.__version__``; pyproject.toml reads it from here)."""

__version__ = "0.1.0"
