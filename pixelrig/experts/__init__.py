"""Scripted experts for the Panda tasks (for demonstrations, datasets and tests): one class per task, each a
policy over the task's state observation acting through its action space only. Each names its task (its ``task``
attribute, an env id); :data:`EXPERTS` ({env id: expert class}) is derived from them, so adding an expert is
writing its class in a module of this package.

    env = gym.make("pixelrig/PandaLift-v0")
    expert = EXPERTS["pixelrig/PandaLift-v0"](env)   # or LiftExpert(env)
    obs, info = env.reset(seed=0)
    expert.reset()
    obs, *_ = env.step(expert(obs))                   # the state vector, or PixelObs' dict holding it

Importing this package is light: the names below (and ``EXPERTS``) load their modules on first use.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Any

from pixelrig.system.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Expert": "pixelrig.experts.base",
    "LiftExpert": "pixelrig.experts.pick",
    "PegInsertExpert": "pixelrig.experts.peg",
    "PickObjectExpert": "pixelrig.experts.pick",
    "PickPlaceExpert": "pixelrig.experts.pick",
    "PushExpert": "pixelrig.experts.push",
    "SO101LiftExpert": "pixelrig.experts.so101",
    "SO101PickPlaceExpert": "pixelrig.experts.so101",
    "SO101ReachExpert": "pixelrig.experts.so101",
    "SO101StackExpert": "pixelrig.experts.so101",
    "StackExpert": "pixelrig.experts.pick",
}



def find_experts() -> dict[str, type]:
    """``{env id: expert class}`` of every class in this package's modules that names its task (a ``task``
    attribute of its own).

    Raises:
        ValueError: two experts name the same task.
    """
    found: dict[str, type] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            task = value.__dict__.get("task") if isinstance(value, type) and value.__module__ == module.__name__ \
                else None
            if task:
                if task in found:
                    raise ValueError(f"{found[task].__name__} and {value.__name__} both name the task {task!r}")
                found[task] = value
    return found

if TYPE_CHECKING:
    EXPERTS: dict[str, type]
    """Each task id with an expert, and the expert's class: ``EXPERTS[env_id](env)`` makes one."""

    from pixelrig.experts.base import Expert
    from pixelrig.experts.peg import PegInsertExpert
    from pixelrig.experts.pick import LiftExpert, PickObjectExpert, PickPlaceExpert, StackExpert
    from pixelrig.experts.push import PushExpert
    from pixelrig.experts.so101 import SO101LiftExpert, SO101PickPlaceExpert, SO101ReachExpert, SO101StackExpert


_lazy_getattr, __dir__ = lazy_exports("pixelrig.experts", _EXPORTS, globals())


def __getattr__(name: str) -> Any:
    if name == "EXPERTS":  # derived once, on first use
        globals()["EXPERTS"] = found = find_experts()
        return found
    return _lazy_getattr(name)

__all__ = ["EXPERTS", "Expert", "LiftExpert", "PegInsertExpert", "PickObjectExpert", "PickPlaceExpert",
           "PushExpert", "SO101LiftExpert", "SO101PickPlaceExpert", "SO101ReachExpert", "SO101StackExpert",
           "StackExpert"]
