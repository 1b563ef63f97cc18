"""The bundled tasks, one module each: Panda reach, push, lift, pick_place, stack, peg_insert and pick_object;
the SO-101's so101_reach, so101_lift, so101_pick_place and so101_stack; cartpole; the locomotion ports
half_cheetah, hopper, walker2d and ant.

Each module declares what it registers at its top, as a literal:

    REGISTRATION = {"id": "pixelrig/PandaLift-v0", "entry_point": "PandaLiftEnv", "max_episode_steps": 100}

:data:`ENV_SPECS` is read from those declarations without importing the modules (they load pybullet), so that
``import pixelrig`` registers every id and stays light; gymnasium imports a task's module on ``gym.make``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pixelrig.envs.registration import FRAMEWORK_SPECS, register


def declared(path: Path) -> dict | None:
    """The ``REGISTRATION`` literal at the top level of a module's source, or None when it declares none. The source
    is parsed from its bytes, as Python reads a module (UTF-8 unless it declares otherwise), whatever the locale."""
    for node in ast.parse(path.read_bytes(), str(path)).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["REGISTRATION"]:
            return ast.literal_eval(node.value)
    return None


def task_specs() -> dict[str, dict]:
    """``{env id: gym.register arguments}`` of every task module in this package, by module name."""
    specs = {}
    for path in sorted(Path(__file__).parent.glob("*.py")):
        entry = declared(path) if path.stem != "__init__" else None
        if entry is not None:
            specs[entry["id"]] = {"entry_point": f"{__name__}.{path.stem}:{entry['entry_point']}",
                                  "max_episode_steps": entry["max_episode_steps"]}
    return specs


TASK_SPECS: dict[str, dict] = task_specs()
"""Every task's id with its ``gym.register`` arguments."""

ENV_SPECS: dict[str, dict] = {**TASK_SPECS, **FRAMEWORK_SPECS}
"""Every registered id of pixelrig (the tasks' and the framework's ``pixelrig/Robot-v0``)."""


def register_envs() -> None:
    """Register every pixelrig id (idempotent; ``import pixelrig`` runs it)."""
    register(ENV_SPECS)


__all__ = ["ENV_SPECS", "TASK_SPECS", "declared", "register_envs", "task_specs"]
