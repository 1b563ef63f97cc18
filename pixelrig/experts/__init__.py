"""Scripted experts for the Panda tasks (for demonstrations, datasets and tests): one class per task, each a
policy over the task's state observation acting through its action space only.

    expert = EXPERTS["pixelrig/PandaLift-v0"](env)   # or LiftExpert(env)
    obs, info = env.reset(seed=0)
    expert.reset()
    obs, *_ = env.step(expert(obs))                   # the state vector, or PixelObs' dict holding it

Importing this package is light: the names below load their modules on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pixelrig.system.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Expert": "pixelrig.experts.base",
    "LiftExpert": "pixelrig.experts.pick",
    "PegInsertExpert": "pixelrig.experts.peg",
    "PickObjectExpert": "pixelrig.experts.pick",
    "PickPlaceExpert": "pixelrig.experts.pick",
    "PushExpert": "pixelrig.experts.push",
    "StackExpert": "pixelrig.experts.pick",
}

EXPERTS: dict[str, str] = {
    "pixelrig/PandaPush-v0": "PushExpert",
    "pixelrig/PandaLift-v0": "LiftExpert",
    "pixelrig/PandaPickPlace-v0": "PickPlaceExpert",
    "pixelrig/PandaStack-v0": "StackExpert",
    "pixelrig/PandaPegInsert-v0": "PegInsertExpert",
    "pixelrig/PandaPickObject-v0": "PickObjectExpert",
}
"""Each task id with an expert, and the expert's class name in this package."""

if TYPE_CHECKING:
    from pixelrig.experts.base import Expert
    from pixelrig.experts.peg import PegInsertExpert
    from pixelrig.experts.pick import LiftExpert, PickObjectExpert, PickPlaceExpert, StackExpert
    from pixelrig.experts.push import PushExpert


__getattr__, __dir__ = lazy_exports("pixelrig.experts", _EXPORTS, globals())

__all__ = ["EXPERTS", "Expert", "LiftExpert", "PegInsertExpert", "PickObjectExpert", "PickPlaceExpert",
           "PushExpert", "StackExpert"]
