"""Exact save/restore of a whole environment (wrapper stack and base env) as portable, checksummed bytes.

``snap = snapshot(env)`` captures the base env's complete state (see ``BulletEnv.export_state``: physics as
pybullet's .bullet serialisation, motor commands, randomised parameters, declared Python task state,
``np_random``, counters) and the state of every wrapper (TimeLimit's elapsed steps, OrderEnforcing's reset
flag, ...). ``restore(env, snap)`` puts it back so that the same actions give bit-identical results.

Binary format (version 1), all integers little-endian -- never pickle, so loading bytes received from elsewhere
cannot execute code::

    offset  size  field
    0       8     magic b"PXRGSNAP"
    8       2     format version (uint16)
    10      4     metadata length M (uint32)
    14      M     metadata: UTF-8 JSON (identity of the env, wrapper states, the state tree, payload table)
    14+M    ...   payloads, each an 8-byte length (uint64) followed by its bytes, in the table's order
    end-32  32    SHA-256 of every byte before it

In the state tree, numpy arrays and byte strings live in payloads (``{"__array__": i, "dtype", "shape"}``,
``{"__bytes__": i}``; dtypes limited to booleans, integers and floats), tuples are ``{"__tuple__": [...]}``,
dicts ``{"__dict__": [[key, value], ...]}`` and non-finite floats ``{"__float__": "nan"}``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from pixelrig.envs.base import BulletEnv
from pixelrig.envs.robot_files import file_digest

MAGIC = b"PXRGSNAP"
FORMAT_VERSION = 1
_HEAD = struct.Struct("<8sHI")
_LEN = struct.Struct("<Q")
_DIGEST = 32
# the simulation, and level of detail changes visuals only


# ---- the state tree <-> JSON + payloads -------------------------------------------------------------------


def _encode(value: Any, payloads: list[bytes], where: str) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int) and not isinstance(value, np.integer):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, bytes):
        payloads.append(value)
        return {"__bytes__": len(payloads) - 1}
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"snapshot: {where} is a numpy array of dtype {arr.dtype}; use bool, int or float arrays")
        payloads.append(np.ascontiguousarray(arr).tobytes())
        return {"__array__": len(payloads) - 1, "dtype": arr.dtype.str, "shape": list(arr.shape),
                "scalar": isinstance(value, np.generic)}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, payloads, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(v, payloads, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        return {"__dict__": [[_encode(k, payloads, f"{where} key"), _encode(v, payloads, f"{where}[{k!r}]")]
                             for k, v in value.items()]}
    raise TypeError(f"snapshot: cannot store {where} of type {type(value).__name__}; task state must be numbers, "
                    "strings, bytes, lists, tuples, dicts or numpy arrays")


def _decode(node: Any, payloads: list[bytes]) -> Any:
    if isinstance(node, list):
        return [_decode(v, payloads) for v in node]
    if not isinstance(node, dict):
        return node
    if "__tuple__" in node:
        return tuple(_decode(v, payloads) for v in node["__tuple__"])
    if "__dict__" in node:
        return {_hashable(_decode(k, payloads)): _decode(v, payloads) for k, v in node["__dict__"]}
    if "__float__" in node:
        return float(node["__float__"])
    if "__bytes__" in node:
        return payloads[node["__bytes__"]]
    if "__array__" in node:
        dtype = np.dtype(node["dtype"])
        if dtype.kind not in "biuf":
            raise ValueError(f"snapshot holds an array of dtype {dtype}; only bool, int and float are allowed")
        shape = tuple(int(d) for d in node["shape"])
        arr = np.frombuffer(payloads[node["__array__"]], dtype=dtype).reshape(shape).copy()
        return arr[()] if node.get("scalar") else arr
    raise ValueError(f"snapshot metadata has an unknown node {sorted(node)}")


def _unpack(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """The metadata and payloads of snapshot bytes, checked (magic, version, checksum, payload table) but not
    decoded.

    Raises:
        ValueError: not a pixelrig snapshot, a newer format version, truncated, or corrupted (checksum).
    """
    if len(data) < _HEAD.size + _DIGEST:
        raise ValueError(f"not a pixelrig snapshot: {len(data)} bytes is shorter than any snapshot (truncated?)")
    magic, version, meta_len = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise ValueError(f"not a pixelrig snapshot: starts with {magic!r}, expected {MAGIC!r}")
    if version > FORMAT_VERSION:
        raise ValueError(f"snapshot format version {version} is newer than this pixelrig reads "
                         f"({FORMAT_VERSION}): upgrade pixelrig to restore it")
    if version < 1:
        raise ValueError(f"snapshot format version {version} is not a valid version")
    body, digest = data[:-_DIGEST], data[-_DIGEST:]
    if hashlib.sha256(body).digest() != digest:
        raise ValueError("snapshot is corrupted or truncated: its SHA-256 checksum does not match its contents")
    try:
        meta = json.loads(body[_HEAD.size:_HEAD.size + meta_len])
        offset = _HEAD.size + meta_len
        payloads = []
        for size in meta["payload_sizes"]:
            (n,) = _LEN.unpack_from(body, offset)
            if n != size or offset + _LEN.size + n > len(body):
                raise ValueError("payload table does not match the payloads")
            payloads.append(body[offset + _LEN.size:offset + _LEN.size + n])
            offset += _LEN.size + n
        if offset != len(body):
            raise ValueError(f"{len(body) - offset} stray bytes after the payloads")
    except (KeyError, TypeError, IndexError, struct.error, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"snapshot is malformed: {type(exc).__name__}: {exc}") from None
    return meta, payloads


def physics_of(data: bytes | bytearray | memoryview) -> tuple[dict[str, Any], bytes]:
    """The identity and the pybullet state (.bullet bytes) of snapshot bytes, checked like
    :meth:`Snapshot.from_bytes` but without decoding the rest of the env state: what a reader that only sets poses
    needs (replay, once per frame).

    Raises:
        ValueError: not a pixelrig snapshot, a newer format version, truncated, corrupted, or holding no physics.
    """
    meta, payloads = _unpack(bytes(data))
    try:
        for key, value in meta["state"]["__dict__"]:
            if key == "physics":
                return meta["identity"], payloads[value["__bytes__"]]
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        raise ValueError(f"snapshot is malformed: {type(exc).__name__}: {exc}") from None
    raise ValueError("snapshot is malformed: its env state holds no physics")


def _hashable(key: Any) -> Any:
    return tuple(_hashable(k) for k in key) if isinstance(key, list | tuple) else key


def describe(value: Any) -> Any:
    """A JSON-friendly description of a constructor argument, for identity checks and dataset metadata (never turned
    back into objects here; pixelrig's dataclasses, e.g. ``Randomization`` and ``Lighting``, are described field by
    field so that a dataset can rebuild them)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list | tuple):
        return [describe(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): describe(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__dataclass__": f"{type(value).__module__}:{type(value).__qualname__}",
                **{f.name: describe(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if callable(value):
        return {"__callable__": f"{getattr(value, '__module__', '?')}:{getattr(value, '__qualname__', repr(value))}"}
    return {"__repr__": repr(value)}


# ---- what an env is ---------------------------------------------------------------------------------------


def wrapper_stack(env: gym.Env) -> list[gym.Env]:
    """The wrappers from the outside in (the base env not included)."""
    out = []
    while isinstance(env, gym.Wrapper):
        out.append(env)
        env = env.env
    return out


def _portable(path: Path) -> str:
    """A model file's name that is the same on every machine: pybullet_data-relative, else the file name."""
    import pybullet_data

    try:
        return "pybullet_data/" + path.resolve().relative_to(Path(pybullet_data.getDataPath()).resolve()).as_posix()
    except ValueError:
        return path.name


MOVED_ENV_CLASSES: dict[str, str] = {
    "pixelrig.envs.panda:PandaPushEnv":
        "pixelrig.tasks.push:PandaPushEnv",
    "pixelrig.envs.panda:PandaReachEnv":
        "pixelrig.tasks.reach:PandaReachEnv",
    "pixelrig.envs.manipulation:PandaLiftEnv":
        "pixelrig.tasks.lift:PandaLiftEnv",
    "pixelrig.envs.manipulation:PandaPickPlaceEnv":
        "pixelrig.tasks.pick_place:PandaPickPlaceEnv",
    "pixelrig.envs.manipulation:PandaStackEnv":
        "pixelrig.tasks.stack:PandaStackEnv",
    "pixelrig.envs.peg:PandaPegInsertEnv":
        "pixelrig.tasks.peg_insert:PandaPegInsertEnv",
    "pixelrig.envs.objects:PandaPickObjectEnv":
        "pixelrig.tasks.pick_object:PandaPickObjectEnv",
    "pixelrig.envs.cartpole:CartPoleEnv":
        "pixelrig.tasks.cartpole:CartPoleEnv",
    "pixelrig.envs.locomotion:HalfCheetahEnv":
        "pixelrig.tasks.half_cheetah:HalfCheetahEnv",
    "pixelrig.envs.locomotion:HopperEnv":
        "pixelrig.tasks.hopper:HopperEnv",
    "pixelrig.envs.locomotion:Walker2dEnv":
        "pixelrig.tasks.walker2d:Walker2dEnv",
    "pixelrig.envs.locomotion:AntEnv":
        "pixelrig.tasks.ant:AntEnv",
}
"""Env classes that moved to another module (the tasks into :mod:`pixelrig.tasks`): a snapshot taken before the
move names the old place, and restores onto the class at the new one (datasets keep replaying)."""


def _qualname(obj: Any) -> str:
    return f"{type(obj).__module__}:{type(obj).__qualname__}"


def identity(env: gym.Env) -> dict[str, Any]:
    """What a snapshot of ``env`` belongs to: env id, entry point, construction kwargs (without the render-only
    ones), model files' SHA-256, and the wrapper classes."""
    base = env.unwrapped
    if not isinstance(base, BulletEnv):
        raise TypeError(f"snapshot needs a pixelrig BulletEnv underneath; got {type(base).__name__}")
    spec = base.spec
    kwargs = dict(spec.kwargs) if spec is not None else dict(getattr(base, "init_kwargs", {}))
    kwargs = {k: v for k, v in kwargs.items() if k not in BulletEnv.RENDER_OPTIONS}
    hashes = {_portable(path): file_digest(path) for path in base.model_paths()}
    return {
        "id": spec.id if spec is not None else None,
        "entry_point": _qualname(base),
        "kwargs": describe(kwargs),
        "model_sha256": hashes,
        "wrappers": [_qualname(w) for w in wrapper_stack(env)],
    }


# ---- wrapper states -----------------------------------------------------------------------------------------

# Gymnasium's TimeLimit, OrderEnforcing and PassiveEnvChecker keep their state in attributes with no public
# setter (TimeLimit has no public getter either): these three adapters are the only code here that touches them.
# They hold from gymnasium 1.0.0 to 1.4.0 (CI runs the suite at both ends of pyproject's range);
# tests/test_snapshots_gymnasium_internals.py names what moved if a release changes them.

def _time_limit_state(wrapper: Any) -> dict[str, Any]:
    return {"elapsed_steps": wrapper._elapsed_steps}


def _set_time_limit_state(wrapper: Any, state: Mapping[str, Any]) -> None:
    wrapper._elapsed_steps = state["elapsed_steps"]


def _set_order_state(wrapper: Any, state: Mapping[str, Any]) -> None:
    wrapper._has_reset = state["has_reset"]


PASSIVE_CHECKER_FLAGS = ("checked_reset", "checked_step", "checked_render", "checked_data_reuse")
"""PassiveEnvChecker's once-only check flags (``checked_data_reuse`` is new: 1.4 has it, 1.0 to 1.2 do not)."""


def _finish_checks(wrapper: Any, state: Mapping[str, Any]) -> None:
    """PassiveEnvChecker's flags are debugging state, not simulation state: a restored env counts as checked."""
    for flag in PASSIVE_CHECKER_FLAGS:
        if hasattr(wrapper, flag):
            setattr(wrapper, flag, True)
    if hasattr(wrapper, "_previous_data"):  # the data-reuse check's memory (1.4 has it, 1.0 to 1.2 do not)
        wrapper._previous_data = None


_WRAPPERS: dict[str, tuple[Any, Any]] = {
    "gymnasium.wrappers.common:TimeLimit": (_time_limit_state, _set_time_limit_state),
    "gymnasium.wrappers.common:OrderEnforcing": (lambda w: {"has_reset": w.has_reset}, _set_order_state),
    "gymnasium.wrappers.common:PassiveEnvChecker": (lambda w: {}, _finish_checks),
}
"""Gymnasium wrappers whose state snapshots know: qualified name -> (get state, set state)."""


def _adapter(wrapper: gym.Env) -> tuple[Any, Any]:
    if hasattr(wrapper, "snapshot_state") and hasattr(wrapper, "restore_snapshot_state"):
        return (lambda w: dict(w.snapshot_state())), (lambda w, s: w.restore_snapshot_state(s))
    adapter = _WRAPPERS.get(_qualname(wrapper))
    if adapter is None:
        raise TypeError(
            f"snapshot does not know the state of wrapper {_qualname(wrapper)}: give it snapshot_state() -> dict "
            "and restore_snapshot_state(dict) methods (return {} if it holds no simulation state)"
        )
    return adapter


def wrapper_state(wrapper: gym.Env) -> dict[str, Any]:
    return _adapter(wrapper)[0](wrapper)


def _set_wrapper_state(wrapper: gym.Env, state: Mapping[str, Any]) -> None:
    _adapter(wrapper)[1](wrapper, state)


# ---- Snapshot ------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class Snapshot:
    """A whole environment's state. Make one with :func:`snapshot`, apply it with :func:`restore`.

    ``to_bytes()`` / ``Snapshot.from_bytes(b)`` use the versioned, checksummed format of this module's docstring;
    pickling goes through the same bytes.
    """

    identity: dict[str, Any]
    env_state: dict[str, Any]
    wrapper_states: list[dict[str, Any]]
    _bytes: list[bytes] = dataclasses.field(default_factory=list, repr=False)

    @property
    def env_id(self) -> str | None:
        """The gymnasium id the snapshot was taken from (None for envs not made by ``gym.make``)."""
        return self.identity["id"]

    def to_bytes(self) -> bytes:
        """The snapshot in the binary format (cached after the first call)."""
        if not self._bytes:
            payloads: list[bytes] = []
            meta = {
                "format": FORMAT_VERSION,
                "identity": self.identity,
                "state": _encode(self.env_state, payloads, "env state"),
                "wrappers": [_encode(w, payloads, "wrapper state") for w in self.wrapper_states],
            }
            meta["payload_sizes"] = [len(b) for b in payloads]
            meta_bytes = json.dumps(meta, separators=(",", ":"), allow_nan=False).encode()
            parts = [_HEAD.pack(MAGIC, FORMAT_VERSION, len(meta_bytes)), meta_bytes]
            for blob in payloads:
                parts += [_LEN.pack(len(blob)), blob]
            body = b"".join(parts)
            self._bytes.append(body + hashlib.sha256(body).digest())
        return self._bytes[0]

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> Snapshot:
        """Parse bytes made by :meth:`to_bytes`.

        Raises:
            ValueError: not a pixelrig snapshot, a newer format version, truncated, or corrupted (checksum).
        """
        data = bytes(data)
        meta, payloads = _unpack(data)
        try:
            snap = cls(meta["identity"], _decode(meta["state"], payloads),
                       [_decode(w, payloads) for w in meta["wrappers"]])
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"snapshot is malformed: {type(exc).__name__}: {exc}") from None
        snap._bytes.append(data)
        return snap

    def __len__(self) -> int:
        """Size in bytes of the encoded snapshot."""
        return len(self.to_bytes())

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        return (Snapshot.from_bytes, (self.to_bytes(),))

    def __repr__(self) -> str:
        return f"Snapshot(env_id={self.env_id!r}, entry_point={self.identity['entry_point']!r})"


def snapshot(env: gym.Env) -> Snapshot:
    """Capture the whole state of ``env`` (every wrapper and the pixelrig env underneath).

    Raises:
        TypeError: the base env is not a pixelrig ``BulletEnv``, or a wrapper's state is unknown (the message says
            how to declare it).
    """
    ident = identity(env)
    wrappers = [wrapper_state(w) for w in wrapper_stack(env)]
    return Snapshot(ident, env.unwrapped.export_state(), wrappers)


def _mismatch(snap: Snapshot, env: gym.Env) -> str | None:
    mine, theirs = identity(env), dict(snap.identity)
    theirs["entry_point"] = MOVED_ENV_CLASSES.get(theirs["entry_point"], theirs["entry_point"])
    for key, what in (("id", "env id"), ("entry_point", "env class"), ("kwargs", "constructor arguments"),
                      ("wrappers", "wrapper stack")):
        if mine[key] != theirs[key]:
            return f"its {what}: {theirs[key]!r}; this env's: {mine[key]!r}"
    if mine["model_sha256"] != theirs["model_sha256"]:
        changed = sorted(k for k in set(mine["model_sha256"]) | set(theirs["model_sha256"])
                         if mine["model_sha256"].get(k) != theirs["model_sha256"].get(k))
        return f"model files differ: {changed}"
    return None


def restore(env: gym.Env, snap: Snapshot, rebuild: bool | None = None) -> None:
    """Put ``env`` (the same id, kwargs and wrapper stack as the snapshot's env; another process is fine) into the
    snapshot's state. The same actions then give bit-identical observations, rewards and infos.

    Args:
        env: the env to restore into.
        snap: the snapshot.
        rebuild: rebuild the world from nothing before restoring. None (default): only when restoring into the
            current world would not be exact (see ``BulletEnv.can_restore_in_place``); True always (slower).

    Raises:
        ValueError: the snapshot belongs to a different env (id, kwargs, model files or wrappers differ) or its
            state does not fit this env; the env is left exactly as it was.
    """
    if not isinstance(snap, Snapshot):
        raise ValueError(f"restore needs a pixelrig Snapshot (Snapshot.from_bytes(b) for bytes): got {type(snap)}")
    why = _mismatch(snap, env)
    if why:
        raise ValueError(f"snapshot belongs to a different environment: {why}")
    base = env.unwrapped
    wrappers = wrapper_stack(env)
    base.check_state(snap.env_state)
    if len(snap.wrapper_states) != len(wrappers):
        raise ValueError("snapshot wrapper states do not match the wrapper stack")
    backup = snapshot(env)
    try:
        base.import_state(snap.env_state, rebuild=rebuild)
        for wrapper, state in zip(wrappers, snap.wrapper_states, strict=True):
            _set_wrapper_state(wrapper, state)
    except Exception as exc:
        base.import_state(backup.env_state, rebuild=True)
        for wrapper, state in zip(wrappers, backup.wrapper_states, strict=True):
            _set_wrapper_state(wrapper, state)
        raise ValueError(f"snapshot could not be restored ({type(exc).__name__}: {exc}); the env is unchanged") \
            from exc
