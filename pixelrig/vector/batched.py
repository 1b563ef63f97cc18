"""``BatchedVectorEnv``: many pixel envs per process, stepped one by one, their camera rigs drawn by the gl renderer a
few envs' worth per pass while the next envs step (what ``make_vec(..., vectorization_mode="batched")`` returns), in
this process or spread over worker processes; ``EnvBatch``, the envs of one process, stepped one by one with
next-step autoreset, their PixelObs rigs drawn a part at a time (each part's gl rigs in one pass, submitted while the
next part steps). One env per worker process (``"async"``) is :mod:`pixelrig.vector.process`'s ``ProcessVectorEnv``."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from copy import deepcopy
from multiprocessing import shared_memory
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from pixelrig.errors import HelperFailed
from pixelrig.render.backends import PendingFrames, submit
from pixelrig.render.choice import ENV_VAR, requested_renderer, resolve_renderer
from pixelrig.render.registry import entry
from pixelrig.system.process import Helper, free_shared, stop_all
from pixelrig.vector.autoreset import DISABLED, NEXT_STEP, SAME_STEP, autoreset_enum, autoreset_name
from pixelrig.vector.failures import dead_workers, worker_error
from pixelrig.vector.shared import SharedLayout, put
from pixelrig.wrappers.pixel_obs import PixelObs

EnvFn = Callable[[], gym.Env]
DEFAULT_RENDERER = "gl"
CLOSE_TIMEOUT_S = 10.0
_MODULE = "pixelrig.vector.worker_main"
_MPI_PREFIXES = ("OMPI_", "PMI_")  # an MPI launcher's variables: a worker that kept them would join the MPI job
MIN_CHUNK_ENVS = 4


# ---- the envs of one process ---------------------------------------------------------------------------------

def chunk_size(num_envs: int) -> int:
    """Envs stepped between two gl submissions of a process (its envs in about four parts, at least 4 envs each):
    each part's rigs rasterise beside the next part's physics, and the last part's beside the decoding of the
    first ones.
    """
    return max(MIN_CHUNK_ENVS, -(-num_envs // 4))


def _reset_unrendered(env: gym.Env, seed: int | None, options: dict[str, Any] | None) -> tuple[Any, dict]:
    if isinstance(env, PixelObs):
        return env.reset_unrendered(seed=seed, options=options)
    return env.reset(seed=seed, options=options)


def stack_names(env: gym.Env) -> tuple[str, ...]:
    """``module.Class`` of every layer of ``env``'s wrapper stack, outermost first."""
    names = []
    while True:
        names.append(f"{type(env).__module__}.{type(env).__qualname__}")
        if not isinstance(env, gym.Wrapper):
            return tuple(names)
        env = env.env


class _Part:
    """Some envs' rigs submitted in one go (:func:`pixelrig.render.backends.submit`): the envs, in order, and their
    frames, pending until collected."""

    def __init__(self, envs: list[int], pending: PendingFrames | None) -> None:
        self.envs = envs
        self.pending = pending

    def discard(self) -> None:
        if self.pending is not None:
            self.pending.discard()


def call_env(env: gym.Env, name: str, args: tuple, kwargs: dict[str, Any]) -> Any:
    """``env.get_wrapper_attr(name)``, called with the arguments when it is callable (a vector env's ``call``)."""
    attr = env.get_wrapper_attr(name)
    return attr(*args, **kwargs) if callable(attr) else attr


class EnvBatch:
    """The envs of one process, stepped one by one with one of Gymnasium's autoreset modes, their PixelObs rigs
    drawn in parts of ``chunk_envs`` envs (:func:`chunk_size`): each part's rigs submitted together
    (:func:`pixelrig.render.backends.submit`: one pass without waiting on a backend that batches, such as gl, while
    the next envs step; read back at the end; other backends rig by rig). An env whose outermost wrapper is not
    PixelObs renders (or not) on its own.

    Args:
        env_fns: callables that build the envs.
        autoreset_mode: a name of :data:`pixelrig.vector.autoreset.MODES` (Gymnasium's ``AutoresetMode`` values).
    """

    def __init__(self, env_fns: Sequence[EnvFn], autoreset_mode: str = NEXT_STEP) -> None:
        self.autoreset_mode = autoreset_name(autoreset_mode)
        self.envs: list[gym.Env] = []
        try:
            for fn in env_fns:
                self.envs.append(fn())
        except BaseException:
            self.close()
            raise
        self.autoreset = np.zeros(len(self.envs), np.bool_)
        self.chunk_envs = chunk_size(len(self.envs))

    def reset(self, seeds: Sequence[int | None], options: dict[str, Any] | None,
              mask: Sequence[bool] | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
        """Reset the envs where ``mask`` is true (all without one).

        Returns:
            Observations (None for envs not reset) and infos (empty for those).
        """
        inner: list[Any] = [None] * len(self.envs)
        infos: list[dict[str, Any]] = [{} for _ in self.envs]
        for i, (env, seed) in enumerate(zip(self.envs, seeds, strict=True)):
            if mask is None or mask[i]:
                inner[i], infos[i] = _reset_unrendered(env, seed, options)
                self.autoreset[i] = False
        return self.observe(inner), infos

    def step(self, actions: Sequence[Any]) -> tuple[list[Any], list[float], list[bool], list[bool], list[dict],
                                                    list[tuple[Any, dict] | None]]:
        """Step every env, autoresetting as the mode says (next-step: an env whose episode ended at the previous
        step is reset instead, reward 0, not done; same-step: an env whose episode ends now is reset at once and its
        last observation, drawn before the reset, and info come back as its final; disabled: no reset).

        Every ``chunk_envs`` envs, their rigs are drawn and sent to the GL while the next envs step: llvmpipe
        rasterises in its own threads beside the physics. The images do not depend on it beyond the tile each camera
        gets in the framebuffer, which only ``len(envs)`` and ``chunk_envs`` decide.

        Returns:
            Per env: observation, reward, terminated, truncated, info, and (same-step only) the ended episode's
            ``(final observation, final info)`` or None.

        Raises:
            RuntimeError: autoreset disabled and an env's episode ended without a reset since (nothing is stepped).
        """
        if self.autoreset_mode == DISABLED and self.autoreset.any():
            ended = np.flatnonzero(self.autoreset).tolist()
            raise RuntimeError(f"autoreset is disabled and the episodes of envs {ended} ended: reset them first with "
                               "reset(options={'reset_mask': mask}) (nothing was stepped)")
        n = len(self.envs)
        inner: list[Any] = [None] * n
        rewards, terminated, truncated = [0.0] * n, [False] * n, [False] * n
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        finals: list[tuple[Any, dict] | None] = [None] * n
        parts: list[_Part] = []
        first = 0
        try:
            for i, (env, action) in enumerate(zip(self.envs, actions, strict=True)):
                if self.autoreset[i] and self.autoreset_mode == NEXT_STEP:
                    inner[i], infos[i] = _reset_unrendered(env, None, None)
                else:
                    below = env.env if isinstance(env, PixelObs) else env  # PixelObs's pixels come in observe()
                    inner[i], rewards[i], terminated[i], truncated[i], infos[i] = below.step(action)
                    if self.autoreset_mode == SAME_STEP and (terminated[i] or truncated[i]):
                        finals[i] = (self._drawn_alone(i, inner[i]), infos[i])  # before the reset changes the scene
                        inner[i], infos[i] = _reset_unrendered(env, None, None)
                self.autoreset[i] = bool(terminated[i] or truncated[i]) and self.autoreset_mode != SAME_STEP
                if i + 1 - first == self.chunk_envs or i + 1 == n:
                    parts.append(self._submit(range(first, i + 1), inner))
                    first = i + 1
            return self._collect(parts, inner), rewards, terminated, truncated, infos, finals
        finally:
            for part in parts:
                part.discard()

    def _drawn_alone(self, i: int, inner: Any) -> Any:
        """Env ``i``'s observation from its wrapped env's own, its rig drawn now."""
        only: list[Any] = [None] * len(self.envs)
        only[i] = inner
        return self.observe(only)[i]

    def observe(self, inner: list[Any]) -> list[Any]:
        """The envs' observations from their wrapped envs' own (``inner``; None stays None), every gl rig drawn in
        one pass."""
        part = self._submit(range(len(self.envs)), inner)
        try:
            return self._collect([part], inner)
        finally:
            part.discard()

    def _submit(self, indices: range, inner: list[Any]) -> _Part:
        """Draw the rigs of the PixelObs envs at ``indices`` whose observation is not None: the rigs of backends that
        batch in one pass sent without waiting, the others now."""
        envs = [i for i in indices if inner[i] is not None and isinstance(self.envs[i], PixelObs)]
        jobs = [(self.envs[i].render_backend, self.envs[i].rig_requests()) for i in envs]
        return _Part(envs, submit(jobs) if jobs else None)

    def _collect(self, parts: list[_Part], inner: list[Any]) -> list[Any]:
        """``inner`` with the observation of every env the parts drew (waiting for each part in turn)."""
        out = list(inner)
        for part in parts:
            if part.pending is None:
                continue
            for i, frames in zip(part.envs, part.pending.collect(), strict=True):
                env = self.envs[i]
                out[i] = env.observation_from(env.rig.decode(frames), inner[i])  # type: ignore[attr-defined]
        return out

    def wrapper_names(self) -> list[tuple[str, ...]]:
        """Each env's wrapper stack (:func:`stack_names`)."""
        return [stack_names(env) for env in self.envs]

    def call(self, name: str, args: tuple, kwargs: dict[str, Any], only: Sequence[int] | None = None) -> list[Any]:
        """``env.get_wrapper_attr(name)`` of every env (``only``: of these envs, in this order), called with the
        arguments when callable."""
        envs = self.envs if only is None else [self.envs[i] for i in only]
        return [call_env(env, name, args, kwargs) for env in envs]

    def set_attr(self, name: str, values: Sequence[Any]) -> None:
        """``env.set_wrapper_attr(name, value)`` for every env and its value."""
        for env, value in zip(self.envs, values, strict=True):
            env.set_wrapper_attr(name, value)

    def close(self) -> None:
        """Close every env (their gl scenes go with their render backends). Idempotent."""
        envs, self.envs = self.envs, []
        for env in envs:
            env.close()


# ---- checks make_vec runs before anything starts -------------------------------------------------------------

def check_workers(num_envs: int, num_workers: int) -> None:
    """Raise ``ValueError`` unless ``1 <= num_workers <= num_envs`` (integers)."""
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise ValueError(f"num_workers={num_workers!r} must be an integer >= 1 (1 holds every env in this process)")
    if num_workers > num_envs:
        raise ValueError(f"num_workers={num_workers} is more than num_envs={num_envs}: each worker needs at least "
                         f"one env; pass num_workers <= {num_envs}")


def batched_renderer(renderer: str | None, num_envs: int, num_workers: int) -> str:
    """The backend a batched vector env renders with: ``renderer`` resolved; None means ``PIXELRIG_RENDERER`` when
    set, else 'gl'.

    A backend that batches (gl) draws every env's rig of a process in one pass; others are allowed (rigs drawn one
    after another: tiny, for machines without OpenGL 4.3); one that allows one client per process (egl) only with
    one env per worker.

    Raises:
        ValueError: a one-client-per-process backend with more than one env per worker, or an unknown renderer.
        RendererUnavailable: the renderer asked for cannot run here.
    """
    if renderer is None:
        renderer = os.environ.get(ENV_VAR, "").strip() or DEFAULT_RENDERER

    def refusal(kind: str) -> ValueError:
        return ValueError(
            f"make_vec(vectorization_mode='batched', renderer={renderer!r} -> {kind!r}, num_envs={num_envs}, "
            f"num_workers={num_workers}): {entry(kind).label} allows one client per process; use renderer='gl' "
            "(every env's rig in one pass) or vectorization_mode='async'"
        )

    asked = requested_renderer(renderer)
    if asked != "auto" and entry(asked).one_client_per_process and num_envs > num_workers:
        raise refusal(asked)  # before probing it
    kind = resolve_renderer(renderer)
    if entry(kind).one_client_per_process and num_envs > num_workers:
        raise refusal(kind)  # 'auto' chose it
    return kind


def worker_slices(num_envs: int, num_workers: int) -> list[range]:
    """Consecutive env indices per worker, sizes differing by at most one (the first workers take the extra)."""
    size, extra = divmod(num_envs, num_workers)
    out, start = [], 0
    for w in range(num_workers):
        stop = start + size + (1 if w < extra else 0)
        out.append(range(start, stop))
        start = stop
    return out


# ---- the vector env -----------------------------------------------------------------------------------------

class BatchedVectorEnv(gym.vector.VectorEnv):
    """A Gymnasium VectorEnv holding many envs per process: each process steps its envs one by one and draws their
    camera rigs with the gl renderer, a part of its envs per pass (submitted while the next part steps), one
    readback per pass.

    With ``num_workers=1`` the envs live in this process. With more, they are spread over that many worker processes
    (consecutive envs per worker; helper processes of :mod:`pixelrig.system.process`, their body
    :mod:`pixelrig.vector.worker_main`), each batching its share, observations written into one shared memory block
    (:attr:`shared_memory`). Seeding (``reset(seed=s)``: env i gets ``s + i``), autoreset (any of Gymnasium's modes,
    next-step by default), spaces and infos are those of Gymnasium's ``SyncVectorEnv`` step for step,
    ``options={"reset_mask": mask}`` and same-step's ``final_obs``/``final_info`` included. A worker's
    exception is raised here with its type and the worker's traceback in the message; a worker that dies is reported
    with its exit code and the end of its stderr (which is also shown as it comes).

    Args:
        env_fns: callables that build the envs (picklable with cloudpickle when ``num_workers > 1``). Envs whose
            outermost wrapper is PixelObs get their pixels drawn in the batch.
        num_workers: processes to spread the envs over (1 = this process).
        copy: return copies of the observations (else the same arrays, overwritten by the next call).
        spaces_fn: builds one env in this process to read the spaces and metadata from before the workers start
            (their shared memory is sized from it); default ``env_fns[0]``. Only used with worker processes.
        autoreset_mode: a ``gymnasium.vector.AutoresetMode`` or its value ("NextStep", "SameStep", "Disabled"; see
            :mod:`pixelrig.vector.autoreset`).

    Raises:
        ValueError: no envs, ``num_workers`` outside ``1..len(env_fns)``, or (with workers) an observation space
            that cannot live in shared memory.
        RuntimeError: a worker process died while starting (its exit code and stderr in the message); an exception
            a worker raised while building its envs is raised as its own type.
    """

    in_process_alone: bool = True
    """Whether one worker means this process (a subclass may want a worker process even for one env)."""

    def __init__(self, env_fns: Sequence[EnvFn], num_workers: int = 1, *, copy: bool = True,
                 spaces_fn: EnvFn | None = None, autoreset_mode: Any = NEXT_STEP) -> None:
        env_fns = list(env_fns)
        if not env_fns:
            raise ValueError("BatchedVectorEnv needs at least one env_fn")
        self.autoreset_mode = autoreset_enum(autoreset_name(autoreset_mode))
        """The autoreset mode (a ``gymnasium.vector.AutoresetMode``; None on gymnasium 1.0: next-step)."""
        self._mode = autoreset_name(autoreset_mode)
        check_workers(len(env_fns), num_workers)
        self.num_envs = len(env_fns)
        self.num_workers = num_workers
        self.copy = copy
        self.slices = worker_slices(self.num_envs, num_workers)
        self.workers: list[Helper] = []
        """The worker processes (none with ``num_workers=1``)."""
        self.shared_memory: shared_memory.SharedMemory | None = None
        """The block the workers write the observations into (None with ``num_workers=1``)."""
        self._local: EnvBatch | None = None
        self._failed: str | None = None
        if num_workers == 1 and self.in_process_alone:
            self._local = EnvBatch(env_fns, self._mode)
            self._describe(self._local.envs[0])
            self._observations = create_empty_array(self.single_observation_space, n=self.num_envs, fn=np.zeros)
        else:
            probe = (spaces_fn or env_fns[0])()
            try:
                self._describe(probe)
            finally:
                probe.close()
            self._start_workers(env_fns)

    def _describe(self, env: gym.Env) -> None:
        self.single_observation_space = env.observation_space
        self.single_action_space = env.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = dict(env.metadata)
        if self.autoreset_mode is not None:
            self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = env.render_mode

    def _start_workers(self, env_fns: list[EnvFn]) -> None:
        layout = SharedLayout(self.single_observation_space, self.num_envs)
        self.shared_memory = shared_memory.SharedMemory(create=True, size=layout.nbytes)
        self._observations = layout.views(self.shared_memory.buf)
        no_mpi: dict[str, str | None] = {k: None for k in os.environ if k.startswith(_MPI_PREFIXES)}
        spaces = (self.single_observation_space, self.single_action_space)
        try:
            for w, indices in enumerate(self.slices):
                config = {"worker": w, "start": indices.start, "stop": indices.stop, "num_envs": self.num_envs,
                          "shm": self.shared_memory.name, "spaces": spaces, "autoreset_mode": self._mode,
                          "env_fns": cloudpickle.dumps([env_fns[i] for i in indices])}
                # stdout and stderr are the user's (an env's prints, a worker's traceback); stderr's end is also
                # kept for the message of a worker that dies
                self.workers.append(Helper.start(_MODULE, config, what=f"make_vec worker {w}", timeout=None,
                                                 wait=False, stderr="tee", stdout="inherit", env=no_mpi))
            for w, worker in enumerate(self.workers):
                try:
                    worker.wait_ready()
                except HelperFailed as exc:
                    self._failed = "a worker failed while starting"
                    if exc.error is not None:  # its envs raised: that error, with the worker's traceback
                        raise worker_error(w, type(exc.error), exc.error, exc.trace) from None
                    raise RuntimeError(f"a make_vec worker process died during start: worker {w} (exit code "
                                       f"{exc.exit_code}), {exc.stderr}") from None
        except BaseException:
            self.close()
            raise

    # ---- the VectorEnv API ------------------------------------------------------------------------------------

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the envs: ``seed`` None (random), an int (env i gets ``seed + i``) or one per env; ``options``
        go to every env, except ``"reset_mask"`` (a bool array, one per env) which resets only those envs.

        Returns:
            The batched observations and infos.
        """
        self._check_running()
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, int):
            seeds = [seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"reset(seed=[...]) got {len(seeds)} seeds for num_envs={self.num_envs}: pass one "
                                 "per env, an int, or None")
        mask = None
        if options is not None and "reset_mask" in options:
            options = dict(options)
            mask = options.pop("reset_mask")
            if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must be a bool numpy array of shape ({self.num_envs},): got "
                                 f"{mask!r}")
            if not mask.any():
                raise ValueError("options['reset_mask'] resets no env: set at least one entry to True")
        if self._local is not None:
            observations, env_infos = self._local.reset(seeds, options, mask)
            self._store(observations)
        else:
            messages = []
            for indices in self.slices:
                part = None if mask is None else mask[indices.start:indices.stop]
                messages.append(("reset", ([seeds[i] for i in indices], options, part)))
            env_infos = [info for part in self._ask_all(messages, "reset") for info in part]
        infos: dict[str, Any] = {}
        for i, info in enumerate(env_infos):
            infos = self._add_info(infos, info, i)
        return self._output(), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env, autoresetting as :attr:`autoreset_mode` says (next-step: an env whose episode ended at the
        previous step returns its reset observation, reward 0, not terminated or truncated, and its reset info;
        same-step: an env whose episode ends now returns its reset observation and the ended episode's last
        observation and info in ``info["final_obs"]`` / ``info["final_info"]``; disabled: reset ended envs first).

        Returns:
            Batched observations, rewards (float64), terminations and truncations (bool), infos.
        """
        self._check_running()
        per_env = list(iterate(self.action_space, actions))
        if len(per_env) != self.num_envs:
            raise ValueError(f"step() got {len(per_env)} actions for num_envs={self.num_envs}")
        if self._local is not None:
            observations, *rest = self._local.step(per_env)
            self._store(observations)
        else:
            parts = self._ask_all([("step", [per_env[i] for i in indices]) for indices in self.slices], "step")
            rest = [[x for part in parts for x in part[k]] for k in range(5)]
        rewards, terminated, truncated, env_infos, finals = rest
        infos: dict[str, Any] = {}
        for i, (info, final) in enumerate(zip(env_infos, finals, strict=True)):
            if final is not None:  # as Gymnasium's SyncVectorEnv adds them: the final first, then the reset info
                infos = self._add_info(infos, {"final_obs": final[0], "final_info": final[1]}, i)
            infos = self._add_info(infos, info, i)
        return (self._output(), np.array(rewards, dtype=np.float64), np.array(terminated, dtype=np.bool_),
                np.array(truncated, dtype=np.bool_), infos)

    def render(self) -> tuple[Any, ...] | None:
        """Every env's ``render()``."""
        return self.call("render")

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``get_wrapper_attr(name)`` of every env, called with the arguments when it is callable."""
        return self.call_at(range(self.num_envs), name, *args, **kwargs)

    def call_at(self, indices: Sequence[int], name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """:meth:`call` on the envs ``indices`` only, in that order (the others are not touched: SB3's
        ``env_method(..., indices=)``)."""
        self._check_running()
        if name in ("reset", "step", "close"):
            raise ValueError(f"call({name!r}): use the vector env's own {name}() instead")
        indices = [int(i) for i in indices]
        bad = [i for i in indices if not 0 <= i < self.num_envs]
        if bad:
            raise IndexError(f"env indices {bad} are out of range for num_envs={self.num_envs}")
        if self._local is not None:
            return tuple(self._local.call(name, args, kwargs, indices))
        local = [[i - part.start for i in indices if i in part] for part in self.slices]
        answers = self._ask_all([("call", (name, args, kwargs, only)) for only in local], "call", fatal=False)
        by_env = {part.start + j: value for part, only, values in zip(self.slices, local, answers, strict=True)
                  for j, value in zip(only, values, strict=True)}
        return tuple(by_env[i] for i in indices)

    def wrapper_names(self) -> list[tuple[str, ...]]:
        """Each env's wrapper stack, ``module.Class`` names outermost first."""
        self._check_running()
        if self._local is not None:
            return self._local.wrapper_names()
        return [x for part in self._ask_all([("wrapper_names", None)] * len(self.workers), "wrapper_names",
                                            fatal=False) for x in part]

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """An attribute of every env (``get_wrapper_attr``)."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set an attribute of every env: one value for all, or a list/tuple with one per env."""
        self._check_running()
        if not isinstance(values, list | tuple):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"set_attr({name!r}) got {len(values)} values for num_envs={self.num_envs}: pass one "
                             "value, or one per env")
        if self._local is not None:
            self._local.set_attr(name, values)
            return
        self._ask_all([("set_attr", (name, [values[i] for i in indices])) for indices in self.slices], "set_attr",
                      fatal=False)

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """Every env's ``np_random_seed`` (as Gymnasium's vector envs report it)."""
        return self.get_attr("np_random_seed")

    @property
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """Every env's ``np_random``."""
        return self.get_attr("np_random")

    def close_extras(self, **kwargs: Any) -> None:
        """Close every env: the workers close theirs and exit when their connection closes (one that does not stop
        in time is killed); free the shared memory."""
        if getattr(self, "_local", None) is not None:
            self._local.close()  # type: ignore[union-attr]
        stop_all(getattr(self, "workers", []), CLOSE_TIMEOUT_S)
        self._observations = None
        if getattr(self, "shared_memory", None) is not None:
            free_shared(self.shared_memory)  # type: ignore[arg-type]

    # ---- helpers ----------------------------------------------------------------------------------------------

    def _check_running(self) -> None:
        if self.closed:
            raise gym.error.ClosedEnvironmentError("this batched vector env is closed: make a new one with make_vec")
        if self._failed is not None:
            raise RuntimeError(f"this batched vector env cannot go on after an earlier failure ({self._failed}): "
                               "close it and make a new one")

    def _store(self, observations: list[Any]) -> None:
        """Put the local envs' new observations (None: unchanged) into the batch."""
        if all(obs is not None for obs in observations):
            self._observations = concatenate(self.single_observation_space, observations, self._observations)
            return
        for i, obs in enumerate(observations):
            if obs is not None:
                put(self._observations, i, obs)

    def _output(self) -> Any:
        return deepcopy(self._observations) if self.copy else self._observations

    def _ask_all(self, messages: list[Any], what: str, fatal: bool = True) -> list[Any]:
        """Send each worker its message, then read every answer, in worker order; a failure raises (after reading
        every answer), and when ``fatal`` (a reset or step that failed half-way) leaves the vector env unusable."""
        results, errors = [], []
        try:
            for worker, message in zip(self.workers, messages, strict=True):
                worker.send(message, what)
            for w, worker in enumerate(self.workers):
                result, ok = worker.recv(what)
                if ok:
                    results.append(result)
                else:
                    errors.append(worker_error(w, *result))
        except HelperFailed:
            self._failed = f"a worker process died during {what}"
            raise RuntimeError(f"a make_vec worker process died during {what}: {self._dead_workers()}") from None
        if errors:
            if fatal:
                self._failed = f"a worker failed during {what}"
            raise errors[0]
        return results

    def _dead_workers(self, wait: float = 2.0) -> str:
        return dead_workers(self.workers, wait)

