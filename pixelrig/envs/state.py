"""The state side of :class:`pixelrig.envs.BulletEnv`: declared, sealed per-episode state, its exact export and
import (what :func:`pixelrig.snapshots` captures), and pybullet's .bullet serialisation as bytes."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pybullet as p
import pybullet_data

from pixelrig.envs.looks import distractor_ids
from pixelrig.envs.randomization import apply_values


class EnvState:
    """Mixin of :class:`pixelrig.envs.BulletEnv` holding everything about its state.

    **State is declared, so snapshots cannot forget it.** Once constructed, an env accepts attribute assignments
    only for the names in its ``task_state``, during ``build_world`` and for the base's own bookkeeping
    (``_BASE_STATE``); anything else raises ``AttributeError`` naming the fix. :meth:`export_state` and
    :meth:`import_state` move exactly that state (plus physics, motors, randomisation, RNG and counters).
    """

    task_state: ClassVar[tuple[str, ...]] = ()
    """Names of the attributes holding per-episode Python state (merged over the class hierarchy)."""

    world_state: ClassVar[tuple[str, ...]] = ()
    """Names in ``task_state`` that ``build_world`` reads: per-episode choices of what the world holds (which object
    PandaPickObject loads). :meth:`import_state` sets them before anything else and rebuilds the world when they
    differ from the env's; a state whose world differs is never restored or shown in place."""

    model_files: ClassVar[tuple[str, ...]] = ()
    """Model files (pybullet_data-relative or absolute) the world is built from; snapshots record their hashes."""

    _BASE_STATE: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _sealing_init(cls.__dict__["__init__"])  # type: ignore[method-assign]

    @classmethod
    def declared_state(cls) -> frozenset[str]:
        """Every name in ``task_state`` along the class hierarchy."""
        names: set[str] = set()
        for klass in cls.__mro__:
            names.update(klass.__dict__.get("task_state", ()))
        return frozenset(names)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if d.get("_sealed") and not d.get("_building") and name not in self._BASE_STATE \
                and name not in self.declared_state():
            raise AttributeError(
                f"{type(self).__name__}.{name} cannot be assigned after construction: per-episode state must be "
                f"declared in {type(self).__name__}.task_state (so that snapshots capture it); configuration is "
                "set in __init__ and the world in build_world()"
            )
        object.__setattr__(self, name, value)

    def model_paths(self) -> list[Path]:
        """Absolute paths of :attr:`model_files`."""
        data = Path(pybullet_data.getDataPath())
        return [Path(f) if os.path.isabs(f) else data / f for f in self.model_files]

    def export_state(self) -> dict[str, Any]:
        """The env's complete state as plain data (numbers, strings, lists, dicts, numpy arrays, bytes):
        physics (pybullet's .bullet serialisation), motor commands, randomised parameters, declared task state,
        ``np_random`` and counters. :meth:`import_state` puts it back exactly."""
        rng = self._np_random
        return {
            "physics": save_bullet(self.client),
            "structure": self._structure(),
            "contacts": self._contact_pairs(),
            "motors": [[b, j, mode, args] for (b, j), (mode, args) in sorted(self._motors.items())],
            "randomization": self.randomization_values,
            "task": {name: getattr(self, name) for name in sorted(self.declared_state())},
            "np_random": None if rng is None else {"bit_generator": rng.bit_generator.state},
            "np_random_seed": self._np_random_seed,
            "episode_started": self._episode_started,
            "elapsed_steps": self.elapsed_steps,
        }

    def check_state(self, state: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` if ``state`` cannot be imported into this env (nothing is changed)."""
        expected = {"physics", "structure", "contacts", "motors", "randomization", "task", "np_random",
                    "np_random_seed", "episode_started", "elapsed_steps"}
        if not isinstance(state, Mapping) or set(state) != expected:
            raise ValueError(f"snapshot state for {type(self).__name__} must have keys {sorted(expected)}")
        task = state["task"]
        if not isinstance(task, Mapping) or set(task) != set(self.declared_state()):
            raise ValueError(f"snapshot task state has {sorted(task) if isinstance(task, Mapping) else task!r}, "
                             f"{type(self).__name__} declares {sorted(self.declared_state())}")
        if state["np_random"] is not None:
            rng_from_state(state["np_random"]["bit_generator"])
        if self.same_world(state) and state["structure"] != self._structure():
            raise ValueError(f"snapshot world has bodies and joints {state['structure']}, this env's world has "
                             f"{self._structure()}")

    def same_world(self, state: Mapping[str, Any]) -> bool:
        """Whether ``state``'s :attr:`world_state` values are this env's (always, for an env that declares none)."""
        return all(_equal(getattr(self, name), state["task"][name]) for name in self.world_state)

    def _structure(self) -> list[list[int]]:
        """[body id, joint count] of every body but the episode's distractors (a restore makes those again): what a
        .bullet file must match."""
        c = self.client
        bodies = [p.getBodyUniqueId(i, physicsClientId=c) for i in range(p.getNumBodies(physicsClientId=c))]
        drawn = distractor_ids(self.randomization_values)
        return [[b, p.getNumJoints(b, physicsClientId=c)] for b in bodies if b not in drawn]

    def _contact_pairs(self) -> list[list[int]]:
        """Sorted [body A, link A, body B, link B] of every pair touching now."""
        points = p.getContactPoints(physicsClientId=self.client)
        return [list(pair) for pair in sorted({(q[1], q[3], q[2], q[4]) for q in points})]

    def can_restore_in_place(self, state: Mapping[str, Any]) -> bool:
        """Whether ``state`` can be restored without rebuilding the world, bit-exactly.

        pybullet's restore overwrites the contact manifolds saved in the state but leaves any other pair's
        manifold, whose warm-start then changes the next steps (measured: restoring a Panda state into a world
        where the gripper touched the cube diverged). In place is therefore allowed only when every pair touching
        now also touched in the snapshot, the same motors have been commanded, and the same parameters are
        randomised; otherwise :meth:`import_state` rebuilds the world first.
        """
        now = {tuple(pair) for pair in self._contact_pairs()}
        then = {tuple(pair) for pair in state["contacts"]}
        motors = {(int(b), int(j)) for b, j, *_ in state["motors"]}
        return (now <= then and set(self._motors) == motors and self.same_world(state)
                and _randomized_keys(self.randomization_values) == _randomized_keys(state["randomization"]))

    def can_show_in_place(self, state: Mapping[str, Any]) -> bool:
        """Whether ``state`` restored without rebuilding the world gives the images a rebuilt world would, though
        not necessarily the same future physics (:meth:`can_restore_in_place` decides that): the same parameters
        are randomised, so restoring sets every randomised value (colours, camera jitter) again, and every pose is
        set in full either way. Contact caches and motors, which only the next physics step reads, may differ.
        """
        return (self.same_world(state)
                and _randomized_keys(self.randomization_values) == _randomized_keys(state["randomization"]))

    def import_state(self, state: Mapping[str, Any], rebuild: bool | None = None) -> None:
        """Restore a state from :meth:`export_state` (of an env built with the same configuration):
        randomised parameters, physics, motors and Python state.

        Args:
            state: from :meth:`export_state`.
            rebuild: rebuild the world from nothing first. None: only when :meth:`can_restore_in_place` says
                restoring into the current world would not be exact. A state whose :attr:`world_state` differs
                from the env's is always restored into a world rebuilt for it.
        """
        self.check_state(state)
        same_world = self.same_world(state)
        for name in self.world_state:
            setattr(self, name, state["task"][name])
        rebuilt = bool(rebuild or not same_world or (rebuild is None and not self.can_restore_in_place(state)))
        if rebuilt:
            self._rebuild()
        else:
            self.scene_version += 1  # rigs re-bind (camera jitter may differ)
        c = self.client
        apply_values(state["randomization"], c)
        self.put_looks(state["randomization"], rebuilt)  # type: ignore[attr-defined]  (BulletEnv's)
        restore_bullet(c, state["physics"])
        for body, joint, mode, args in state["motors"]:
            self.motor_command(body, [joint], mode, **{k: [v] for k, v in args.items()})
        for name, value in state["task"].items():
            setattr(self, name, value)
        self.randomization_values = state["randomization"]
        self._np_random = None if state["np_random"] is None else rng_from_state(state["np_random"]["bit_generator"])
        self._np_random_seed = state["np_random_seed"]
        self._episode_started = bool(state["episode_started"])
        self.elapsed_steps = int(state["elapsed_steps"])


def _equal(a: Any, b: Any) -> bool:
    """Equality of two task-state values (numbers, strings, arrays)."""
    return bool(np.array_equal(a, b)) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else a == b


def _randomized_keys(values: Mapping[str, Any]) -> dict[str, Any]:
    """Which (body, link) entries a set of randomised values touches, per kind (not the values)."""
    keys: dict[str, Any] = {k: sorted((int(e[0]), int(e[1])) for e in v) for k, v in values.items()
                            if isinstance(v, list)}
    keys["camera_seed"] = values.get("camera_seed") is not None
    keys["distractors"] = values.get("distractors", [])  # in place only among the same distractors
    return keys


def _sealing_init(init: Any) -> Any:
    """Wrap an env class's ``__init__`` so that the env is sealed (see BulletEnv) when the outermost one returns."""

    @functools.wraps(init)
    def sealed_init(self: EnvState, *args: Any, **kwargs: Any) -> None:
        depth = self.__dict__.get("_init_depth", 0)
        object.__setattr__(self, "_init_depth", depth + 1)
        if depth == 0:
            object.__setattr__(self, "init_kwargs", {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs})
        try:
            init(self, *args, **kwargs)
        finally:
            object.__setattr__(self, "_init_depth", depth)
        if depth == 0:
            object.__setattr__(self, "_sealed", True)

    return sealed_init


_RNG_CLASSES = {"PCG64": np.random.PCG64, "PCG64DXSM": np.random.PCG64DXSM, "MT19937": np.random.MT19937,
                "Philox": np.random.Philox, "SFC64": np.random.SFC64}


def rng_from_state(state: Mapping[str, Any]) -> np.random.Generator:
    """A numpy Generator from a ``bit_generator.state`` dict (known bit generators only; nothing is executed).

    Raises:
        ValueError: an unknown bit generator or a malformed state.
    """
    name = state.get("bit_generator") if isinstance(state, Mapping) else None
    if name not in _RNG_CLASSES:
        raise ValueError(f"unknown random bit generator {name!r}; known: {sorted(_RNG_CLASSES)}")
    bit = _RNG_CLASSES[name]()
    try:
        bit.state = dict(state)
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"malformed {name} random state: {exc}") from None
    return np.random.Generator(bit)


def _scratch_dir() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


def save_bullet(client: int) -> bytes:
    """pybullet's .bullet serialisation of the whole simulation, as bytes (via a file in memory-backed /dev/shm)."""
    fd, path = tempfile.mkstemp(suffix=".bullet", dir=_scratch_dir())
    os.close(fd)
    try:
        p.saveBullet(path, physicsClientId=client)
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)


STATE_CACHE_BUDGET = 64 << 20
"""Bytes of state files a client's pybullet file cache may hold before :func:`restore_bullet` empties it.

pybullet keeps every file it reads in a per-client cache, by name, until the client disconnects (measured: a Panda
world's RSS grew 62 MB over 1,000 restores), and serves the cached contents again for a name it has seen. Emptying
the cache (file caching turned off and on) also drops the model files cached there, so the next world rebuild
parses them again once (a Panda world: 177 ms instead of 59)."""

_state_names = itertools.count()
_cached_state_bytes: dict[int, int] = {}


def restore_bullet(client: int, data: bytes) -> None:
    """Restore a .bullet serialisation (bytes from :func:`save_bullet`) into ``client``.

    The file pybullet reads gets a name never used before in this process (a name it has read before would give
    the old contents back), and pybullet's file cache is emptied once the state files it holds pass
    :data:`STATE_CACHE_BUDGET`, so that restoring any number of times needs bounded memory.

    Raises:
        ValueError: pybullet refused the data (wrong world or truncated).
    """
    path = os.path.join(_scratch_dir(), f"pixelrig-state-{os.getpid()}-{next(_state_names)}.bullet")
    try:
        with open(path, "xb") as f:
            f.write(data)
        try:
            p.restoreState(fileName=path, physicsClientId=client)
        except p.error as exc:
            raise ValueError(f"pybullet could not restore the physics state: {exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    held = _cached_state_bytes.get(client, 0) + len(data)
    if held > STATE_CACHE_BUDGET:
        p.setPhysicsEngineParameter(enableFileCaching=0, physicsClientId=client)
        p.setPhysicsEngineParameter(enableFileCaching=1, physicsClientId=client)
        held = 0
    _cached_state_bytes[client] = held


def cached_state_bytes(client: int) -> int:
    """Bytes of state files :func:`restore_bullet` has had ``client``'s file cache take in since it last emptied
    it."""
    return _cached_state_bytes.get(client, 0)


_DYNAMICS_KINDS = ("mass", "lateral_friction", "restitution")
"""The kinds of ``randomization_values`` entries that change a link's dynamics (:func:`apply_values`)."""


def default_motor(time_step: float) -> tuple[int, dict[str, float]]:
    """The motor command that puts a joint motor back as pybullet makes it when it loads a body: velocity control,
    target 0, velocity gain 1, position target and gain 0, no velocity clamp and an impulse limit of exactly 1
    (``createJointMotors``), which pybullet stores as ``force * time_step``."""
    force = 1.0 / time_step
    while force * time_step > 1.0:
        force = np.nextafter(force, 0.0)
    while force * time_step < 1.0:
        force = np.nextafter(force, np.inf)
    return int(p.VELOCITY_CONTROL), {"targetVelocities": 0.0, "velocityGains": 1.0, "forces": float(force)}


class BuiltWorld:
    """A world as :meth:`BulletEnv._rebuild <pixelrig.envs.BulletEnv>` left it, kept to start the next episode
    from without rebuilding, bit for bit as a rebuilt world would.

    What is kept: pybullet's in-memory state (``saveState``: poses, velocities), the motor commands given while
    building, the bodies and constraints there were, the values of ``world_state`` the world was built for, and
    the dynamics and colours randomisation may change. :meth:`fits` says whether the env's world is still that
    one (no body or constraint added or removed, the same ``world_state``, no distractors or textures, which
    change what the world holds or wears); :meth:`restore` puts everything back that an episode changes and
    pybullet's restore does not.
    """

    def __init__(self, env: Any) -> None:
        c = env.client
        self.state_id = p.saveState(physicsClientId=c)
        self.motors = dict(env._motors)
        self.world = tuple(getattr(env, name) for name in env.world_state)
        self.bodies = [p.getBodyUniqueId(i, physicsClientId=c) for i in range(p.getNumBodies(physicsClientId=c))]
        self.constraints = p.getNumConstraints(physicsClientId=c)
        self.links = {b: p.getNumJoints(b, physicsClientId=c) for b in self.bodies}
        self.time_step = float(env.time_step)
        self._dynamics: dict[tuple[int, int], tuple[Any, ...]] = {}
        self._colors: dict[tuple[int, int], list[float]] = {}
        spec = env.randomize
        if spec is not None and (spec.mass_scale or spec.lateral_friction or spec.restitution):
            for b, n in self.links.items():
                for link in range(-1, n):
                    info = p.getDynamicsInfo(b, link, physicsClientId=c)
                    self._dynamics[(b, link)] = (info[0], info[2], info[1], info[5])
        if spec is not None and spec.link_colors:
            for b in self.bodies:
                for shape in p.getVisualShapeData(b, physicsClientId=c):
                    self._colors.setdefault((int(shape[0]), int(shape[1])), list(shape[7]))

    @classmethod
    def save(cls, env: Any) -> BuiltWorld:
        """Keep ``env``'s world as it was just built."""
        return cls(env)

    def fits(self, env: Any) -> bool:
        """Whether ``env``'s world can be put back to this one exactly: the same bodies and constraints, built for
        the same ``world_state``, without distractors or textures (this episode's or the last's)."""
        c = env.client
        spec = env.randomize
        values = env.randomization_values
        if spec is not None and (spec.distractors or spec.textures):
            return False
        if values.get("distractors") or values.get("textures"):
            return False
        if not all(_equal(a, getattr(env, name)) for a, name in zip(self.world, env.world_state, strict=True)):
            return False
        if p.getNumConstraints(physicsClientId=c) != self.constraints:
            return False
        n = p.getNumBodies(physicsClientId=c)
        return n == len(self.bodies) and all(p.getBodyUniqueId(i, physicsClientId=c) == b
                                              for i, b in enumerate(self.bodies))

    def restore(self, env: Any) -> None:
        """Put ``env``'s world back as it was just built: contacts, poses and velocities, the engine's time step,
        gravity and deterministic pairs, motors, and the dynamics and colours randomisation changed."""
        c = env.client
        clear_contacts(c, self.bodies, self.links)
        p.restoreState(stateId=self.state_id, physicsClientId=c)
        p.setPhysicsEngineParameter(deterministicOverlappingPairs=1, physicsClientId=c)  # as built: restore keeps
        p.setTimeStep(env.time_step, physicsClientId=c)  # none of these, which a user may have changed
        p.setGravity(*env.gravity, physicsClientId=c)
        for key in sorted(set(env._motors) | set(self.motors)):
            command = self.motors.get(key)
            if env._motors.get(key) == command:
                continue
            mode, args = command if command is not None else default_motor(self.time_step)
            p.setJointMotorControlArray(key[0], [key[1]], mode, physicsClientId=c,
                                        **{k: [v] for k, v in args.items()})
        env._motors = dict(self.motors)
        values = env.randomization_values
        for kind in _DYNAMICS_KINDS:
            for body, link, *_ in values.get(kind, []):
                mass, inertia, mu, e = self._dynamics[(int(body), int(link))]
                if kind == "mass":
                    p.changeDynamics(body, link, mass=mass, localInertiaDiagonal=inertia, physicsClientId=c)
                elif kind == "lateral_friction":
                    p.changeDynamics(body, link, lateralFriction=mu, physicsClientId=c)
                else:
                    p.changeDynamics(body, link, restitution=e, physicsClientId=c)
        for body, link, *_ in values.get("rgba", []):
            p.changeVisualShape(body, link, rgbaColor=self._colors[(int(body), int(link))], physicsClientId=c)


CLEAR_SPACING = 1000.0
"""Metres between the bodies while :func:`clear_contacts` empties the contact manifolds."""


def clear_contacts(client: int, bodies: list[int], links: Mapping[int, int]) -> None:
    """Empty every contact manifold the last episode left: each body is moved far from every other and up, so that
    one collision detection pass drops every contact point (each pair's points are farther than the breaking
    threshold) and frees every compound's child manifolds."""
    for i, body in enumerate(bodies):
        far = CLEAR_SPACING * (i + 1)
        p.resetBasePositionAndOrientation(body, (far, 0.0, far), (0.0, 0.0, 0.0, 1.0), physicsClientId=client)
    p.performCollisionDetection(physicsClientId=client)
