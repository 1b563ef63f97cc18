"""``SensorTimeline``: what a rig's cameras show at each step as sensors: a picture every ``period`` steps (the last
one repeated in between), shown ``latency`` steps late, with its noise drawn when it is taken. PixelObs holds one
and carries its state in snapshots.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np

from pixelrig.cameras.noise import noisy_depth, noisy_rgb
from pixelrig.cameras.rig import CameraRig

NOISE_SALT = 0x5E45
"""Keeps the noise stream apart from the env's own, which gymnasium seeds with the same seed (and from
PointCloudObs's sampler)."""

Picture = dict[str, np.ndarray]


class SensorTimeline:
    """The timing and noise of a rig's cameras.

    Step 0 is the reset: every camera takes a picture, and a camera with latency ``d`` shows it for steps 0..d.
    At step ``t`` a camera with period ``k`` takes a picture when ``t % k == 0`` and otherwise keeps its last one;
    it shows the picture it held at step ``max(t - d, 0)``. Noise is drawn when a picture is taken (a repeated
    picture repeats its noise), cameras in rig order, RGB before depth, from :attr:`rng` alone: a generator of the
    timeline's own, re-seeded by :meth:`seed`, never the env's.

    Args:
        rig: the cameras (bound before the first picture: noise on grazing surfaces needs each pixel's ray).
    """

    def __init__(self, rig: CameraRig) -> None:
        self.rig = rig
        self.cameras = rig.cameras
        self.active = any(cam.timed for cam in self.cameras)
        """Whether any camera has a period, a latency or noise (else the timeline passes pictures through)."""
        self.rng = np.random.Generator(np.random.PCG64())
        """The noise generator (fresh entropy until :meth:`seed`)."""
        self._t = 0
        self._resetting = True
        self._history: dict[int, deque[Picture]] = {}

    # ---- the clock ---------------------------------------------------------------------------------------------

    def seed(self, seed: int) -> None:
        """Re-seed the noise generator from an episode's seed (a stream apart from the env's)."""
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(NOISE_SALT,))))

    def start_episode(self) -> None:
        """The next pictures are a reset's: every camera takes one and fills its latency with it."""
        self._resetting = True

    @property
    def step(self) -> int:
        """Steps since the last reset's picture (0 at the reset)."""
        return self._t

    def due(self) -> list[int] | None:
        """Indices of the cameras that take a picture for the next observation (None: all of them)."""
        if self._resetting or not self.active:
            return None
        t = self._t + 1
        return [i for i, cam in enumerate(self.cameras) if t % cam.period == 0]

    def observe(self, pictures: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The next observation's images from the pictures just drawn (exact, at least the :meth:`due` cameras';
        others there are ignored), advancing the clock.

        Raises:
            RuntimeError: a due camera's images are missing.
        """
        due = self.due()
        due_set = set(range(len(self.cameras))) if due is None else set(due)
        resetting = self._resetting
        self._t = 0 if resetting else self._t + 1
        self._resetting = False
        out: dict[str, np.ndarray] = {}
        for i, cam in enumerate(self.cameras):
            keys = self.rig.keys_of(i)
            if i in due_set:
                missing = [k for k in keys if k not in pictures]
                if missing:
                    raise RuntimeError(f"SensorTimeline: camera {cam.name!r} takes a picture at step {self._t} but "
                                       f"its images {missing} were not drawn (draw the cameras due() names)")
            if not cam.timed:
                out.update((k, pictures[k]) for k in keys)
                continue
            if i in due_set:
                picture = self._sense(i, {k: pictures[k] for k in keys})
            else:
                picture = self._history[i][-1]
            if cam.period == 1 and cam.latency == 0:  # noise alone: nothing to hold
                out.update(picture)
                continue
            if resetting:
                self._history[i] = deque([picture] * (cam.latency + 1), maxlen=cam.latency + 1)
            else:
                self._history[i].append(picture)
            out.update((k, v.copy()) for k, v in self._history[i][0].items())  # held pictures stay unshared
        return out

    def _sense(self, i: int, picture: Picture) -> Picture:
        cam = self.cameras[i]
        noise = cam.noise
        if noise is None:
            return picture
        name = cam.name
        out = dict(picture)
        if noise.rgb and f"{name}/rgb" in out:
            out[f"{name}/rgb"] = noisy_rgb(out[f"{name}/rgb"], noise, self.rng)
        if noise.depth and f"{name}/depth" in out:
            out[f"{name}/depth"] = noisy_depth(out[f"{name}/depth"], noise, self.rng, near=cam.near, far=cam.far,
                                               rays=self.rig.rays(i))
        return out

    # ---- snapshots ---------------------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The clock, the noise generator's state and every held picture (plain data for a snapshot)."""
        return {"step": self._t, "resetting": self._resetting, "noise": self.rng.bit_generator.state,
                "history": {self.cameras[i].name: [dict(p) for p in h] for i, h in self._history.items()}}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Put back what :meth:`state` returned.

        Raises:
            ValueError: the state is not a timeline's, or holds pictures of other cameras (the message names them).
        """
        try:
            noise = state["noise"]
            step, resetting, history = int(state["step"]), bool(state["resetting"]), state["history"]
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"PixelObs: snapshot state {sorted(state) if isinstance(state, Mapping) else state!r} is "
                             "not a sensor timeline's (step, resetting, noise, history)") from None
        if not isinstance(noise, Mapping) or noise.get("bit_generator") != "PCG64":
            raise ValueError("PixelObs: the snapshot's noise generator state is not a PCG64 state")
        by_name = {cam.name: i for i, cam in enumerate(self.cameras)}
        restored: dict[int, deque[Picture]] = {}
        for name, pictures in dict(history).items():
            i = by_name.get(name)
            cam = self.cameras[i] if i is not None else None
            keys = sorted(self.rig.keys_of(i)) if i is not None else []
            if cam is None or not cam.timed or len(pictures) != cam.latency + 1 or any(sorted(p) != keys
                                                                                        for p in pictures):
                raise ValueError(f"PixelObs: the snapshot holds pictures of camera {name!r} that this rig's cameras "
                                 f"{list(by_name)} cannot show (another rig, period or latency)")
            restored[i] = deque([dict(p) for p in pictures], maxlen=cam.latency + 1)
        held = [cam.name for i, cam in enumerate(self.cameras) if (cam.period > 1 or cam.latency > 0)
                and i not in restored]
        if held and not resetting:
            raise ValueError(f"PixelObs: the snapshot holds no pictures of cameras {held} (taken with another rig)")
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = dict(noise)
        self.rng, self._t, self._resetting, self._history = rng, step, resetting, restored
