"""Bodies by name: the lookup and the checked values behind ``BulletEnv.body_pose``, ``set_body_pose`` and
``set_body_velocity`` (every check runs before anything changes)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pybullet as p


def names_to_ids(body_names: Mapping[int, str]) -> dict[str, int]:
    """{name: id} from {id: name} (a name given to several bodies keeps the first)."""
    out: dict[str, int] = {}
    for body, name in body_names.items():
        out.setdefault(name, body)
    return out


def find_body(body_names: Mapping[int, str], name: Any, owner: str) -> int:
    """The id of the body called ``name`` in ``body_names`` ({id: name}).

    Raises:
        ValueError: no body has that name, or several do; the message lists the bodies there are.
    """
    ids = [b for b, n in body_names.items() if n == name]
    if len(ids) == 1:
        return ids[0]
    listing = ", ".join(f"{n!r}" for n in body_names.values())
    if not ids:
        raise ValueError(f"{owner}: there is no body named {name!r}; bodies: {listing}")
    raise ValueError(f"{owner}: {len(ids)} bodies are named {name!r} (ids {ids}); names must be unique to be "
                     f"used: give them distinct names with load_body(name, id) in build_world; bodies: {listing}")


def finite_vector(what: str, value: Any, size: int) -> np.ndarray:
    """``value`` as a float64 vector of ``size`` finite numbers.

    Raises:
        ValueError: not numeric, another shape, NaN or inf; the message names ``what``.
    """
    try:
        v = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what}={value!r} is not numeric; pass {size} numbers") from None
    if v.shape != (size,):
        raise ValueError(f"{what}={value!r} has shape {v.shape}; pass {size} numbers")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{what}={v.tolist()} contains NaN or inf; pass {size} finite numbers")
    return v


def unit_quaternion(what: str, value: Any) -> np.ndarray:
    """``value`` (a quaternion ``(x, y, z, w)`` of any non-zero length) normalised to unit length.

    Raises:
        ValueError: not 4 finite numbers, or (nearly) zero length.
    """
    q = finite_vector(what, value, 4)
    n = float(np.linalg.norm(q))
    if not n > 1e-9:
        raise ValueError(f"{what}={q.tolist()} has zero length; pass a unit quaternion (x, y, z, w), e.g. "
                         "(0, 0, 0, 1) for no rotation")
    return q / n


def check_can_move(mass: float, name: str, owner: str) -> None:
    """Refuse a velocity for a static body (pybullet makes a body's base static when its mass is 0: fixed bases,
    planes).

    Raises:
        ValueError: the body is static.
    """
    if not (math.isfinite(mass) and mass > 0):
        raise ValueError(f"{owner}.set_body_velocity: body {name!r} is static (fixed base or zero base mass), so "
                         "it has no velocity to set; move it with set_body_pose instead")


def reset_pose(client: int, body: int, position: Any, orientation: Any) -> None:
    """``resetBasePositionAndOrientation`` that keeps the base's velocity (pybullet's reset zeroes it)."""
    lin, ang = p.getBaseVelocity(body, physicsClientId=client)
    p.resetBasePositionAndOrientation(body, [float(v) for v in position], [float(v) for v in orientation],
                                      physicsClientId=client)
    p.resetBaseVelocity(body, lin, ang, physicsClientId=client)
