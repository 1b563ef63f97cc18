"""LeRobot's env plugin for pixelrig: ``lerobot-train`` and ``lerobot-eval`` take ``--env.type=pixelrig
--env.task=<any pixelrig id>`` once this distribution is installed (LeRobot >= 0.6 imports every installed
distribution whose name starts with ``lerobot_env_``).

Importing it registers the config (:class:`lerobot_env_pixelrig.config.PixelrigEnv`) when LeRobot is installed;
:mod:`lerobot_env_pixelrig.spec` and :mod:`lerobot_env_pixelrig.vector` (the env, its features and its observation
layout) need pixelrig alone. pixelrig itself never imports LeRobot.
"""

from __future__ import annotations

import importlib.util

__version__ = "0.1.0"

if importlib.util.find_spec("lerobot") is not None:
    from lerobot_env_pixelrig.config import PixelrigEnv

    __all__ = ["PixelrigEnv"]
