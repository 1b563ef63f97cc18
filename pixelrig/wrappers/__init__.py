"""Wrappers: ``PixelObs`` (camera-rig observations)."""

from pixelrig.wrappers.pixel_obs import PixelObs

__all__ = ["PixelObs"]
