"""``BrowserView``: watch a run, or every env of a vector env, from a browser, without changing it.

The page (the tiled camera rig with rgb / depth / label views, step and episode counters, steps per second, a chart
of episode returns) is served by a separate process (:class:`pixelrig.display.web.WebServer`, aiohttp). ``step()``
only counts and, at most ``fps`` times a second and only while a browser watches, copies the raw images into
shared memory: colouring, tiling, encoding and sending happen in the server process. A slow, frozen or vanished
browser never slows or stops training. Trajectories are bitwise those of the env without the view.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.display.mosaic import camera_names
from pixelrig.display.web import MODALITIES, FrameLayout, WebServer, check_fps, layout_for
from pixelrig.wrappers.binding import BoundRig
from pixelrig.wrappers.frame_source import CameraChoice, observed_cameras


def _shown_cameras(space: gym.Space) -> list[str]:
    """Cameras of a PixelObs Dict space that have an image for people (rgb, depth or label)."""
    if not isinstance(space, spaces.Dict):
        return []
    keys = [k for k in space.spaces if "/" in k]
    return [c for c in camera_names(dict.fromkeys(keys)) if any(f"{c}/{m}" in space.spaces for m in MODALITIES)]


def _obs_layout(space: spaces.Dict, cams: list[str], num_envs: int) -> FrameLayout:
    ranges = observed_cameras(space)
    entries = []
    for cam in cams:
        mods = {m: (space.spaces[f"{cam}/{m}"].shape, space.spaces[f"{cam}/{m}"].dtype) for m in MODALITIES
                if f"{cam}/{m}" in space.spaces}
        entries.append((cam, mods, ranges[cam] if "depth" in mods else None))
    return layout_for(entries, num_envs)


class PageFrames:
    """What a view publishes after each reset and step: the raw images of the cameras it shows.

    - ``camera=None``: every camera in the observations (a PixelObs Dict) with rgb, depth or label images;
      without such observations, the env's render camera (rgb), rendered for the page.
    - ``camera="<name>"``: that camera's images, from the observations when they have it, otherwise rendered
      from the env's default camera of that name.
    - ``camera=Camera(...)`` (or a camera dict): rendered by its own rig (its rgb, depth and label modalities).

    Args:
        env: the env (for a vector env, pass ``vector_space``: only cameras in the observations can be shown).
        camera: see above.
        who: the caller's name, for error messages.
        vector_space: a vector env's single observation space; with it, rendered cameras are refused.
        num_envs: envs on the page.

    Raises:
        ValueError: a camera name nothing has (the message lists those that exist), a camera without rgb, depth or
            label, or a rendered camera asked of a vector env (the message names the fix).
    """

    def __init__(self, env: gym.Env | None, camera: CameraChoice, who: str, *,
                 vector_space: gym.Space | None = None, num_envs: int = 1) -> None:
        space = vector_space if vector_space is not None else env.observation_space  # type: ignore[union-attr]
        shown = _shown_cameras(space)
        self._bound: BoundRig | None = None
        self.keys: list[str] = []
        if camera is None and shown:
            self.layout = _obs_layout(space, shown, num_envs)  # type: ignore[arg-type]
            return
        if isinstance(camera, str) and camera in shown:
            self.layout = _obs_layout(space, [camera], num_envs)  # type: ignore[arg-type]
            return
        if vector_space is not None:
            if isinstance(camera, str) or camera is None:
                what = f"unknown camera {camera!r}" if camera is not None else "no camera images in the observations"
                raise ValueError(f"{who}: {what}; cameras here: {shown}. A view of a vector env shows cameras from "
                                 "its observations: pass camera=None or one of those, and make the envs with pixels "
                                 "(make_vec(..., cams=[...]))")
            raise ValueError(f"{who}: a view of a vector env cannot render a camera of its own (its envs may live "
                             "in other processes): add the camera to the envs' rig (make_vec(..., cams=[...])) and "
                             "pass its name")
        cam = self._resolve(env, camera, shown, who)  # type: ignore[arg-type]
        self._bound = BoundRig(env, [cam], who=who)  # type: ignore[arg-type]
        self.keys = [f"{cam.name}/{m}" for m in cam.modalities]
        mods = {m: ((cam.height, cam.width, 3 if m == "rgb" else 1), np.uint8 if m == "rgb" else
                    (np.float32 if m == "depth" else np.int32)) for m in cam.modalities}
        self.layout = layout_for([(cam.name, mods, (cam.near, cam.far) if "depth" in mods else None)], num_envs)

    @staticmethod
    def _resolve(env: gym.Env, camera: CameraChoice, shown: list[str], who: str) -> Camera:
        if camera is None:
            return env.unwrapped.render_view()
        if isinstance(camera, str):
            defaults = {c.name: c for c in map(Camera.from_dict, getattr(env.unwrapped, "default_cameras", list)())}
            if camera not in defaults:
                known = sorted(set(shown) | set(defaults))
                raise ValueError(f"{who}: unknown camera {camera!r}; cameras here: {known}")
            cam = defaults[camera]
        else:
            cam = Camera.from_dict(camera)
        mods = tuple(m for m in cam.modalities if m in MODALITIES)
        if not mods:
            raise ValueError(f"{who}: camera {cam.name!r} has no rgb, depth or label images to show (modalities "
                             f"{cam.modalities}): add one of them")
        return dataclasses.replace(cam, modalities=mods)

    @property
    def rendered(self) -> bool:
        """Whether frames are rendered for the page (not taken from the observations)."""
        return self._bound is not None

    def frames(self, obs: Any) -> Mapping[str, np.ndarray]:
        """The images to publish for the observation that just passed through."""
        if self._bound is None:
            return obs
        return self._bound.render()

    def close(self) -> None:
        """Close a rig this object rendered with."""
        if self._bound is not None:
            self._bound.close()
            self._bound = None


def _title(env: Any) -> str:
    spec = getattr(env, "spec", None)
    if spec is not None and getattr(spec, "id", None):
        return spec.id
    return type(env.unwrapped).__name__ if hasattr(env, "unwrapped") else type(env).__name__


class BrowserView(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Serve a live, read-only page of the run (see the module docstring); open :attr:`url` in a browser.

    ``BrowserView(vector_env, ...)`` returns a :class:`VectorBrowserView` (one page tiling every env).

    Args:
        env: a pixelrig env, usually under PixelObs (or any env whose ``unwrapped.client`` is a pybullet client).
        port: TCP port; 0 (the default) picks a free one.
        host: where to listen: loopback by default (from another machine: an SSH tunnel,
            ``ssh -L 8000:127.0.0.1:8000 node``). Any other host puts a random token in :attr:`url` that every
            request must carry (401 without it, 403 with a wrong one).
        camera: None shows the tiled rig of the observations (a PixelObs Dict), else the env's render camera; a
            camera name shows that camera; a ``Camera`` (or camera dict) is rendered for the page alone.
        fps: the most page updates (and frames taken from the run) a second.
        title: the page's title (default: the env id).

    Raises:
        ValueError: fps <= 0, a bad port or host, or an unknown camera (the message names the fix).
        PortInUseError: the port is taken (an OSError; the message names the fix: port=0 or another port).
        gymnasium.error.DependencyNotInstalled: aiohttp is missing (``pip install 'pixelrig[viewer]'``).

    Attributes:
        url: the page's address (with the token when there is one).
        closed: True once the server is gone (closed, or its process died); stepping goes on undisturbed.
    """

    def __new__(cls, env: gym.Env | gym.vector.VectorEnv, port: int = 0, host: str = "127.0.0.1",
                camera: CameraChoice = None, fps: float = 15.0, *,
                title: str | None = None) -> BrowserView | VectorBrowserView:
        # __init__'s parameters, so that inspect.signature(BrowserView) shows them (it reads __new__ first)
        if isinstance(env, gym.vector.VectorEnv):
            return VectorBrowserView(env, port, host, camera, fps, title=title)
        return super().__new__(cls)

    def __init__(self, env: gym.Env, port: int = 0, host: str = "127.0.0.1", camera: CameraChoice = None,
                 fps: float = 15.0, *, title: str | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, port=port, host=host, camera=camera, fps=fps, title=title)
        gym.Wrapper.__init__(self, env)
        check_fps(fps, "BrowserView")
        self.page_frames = PageFrames(env, camera, "BrowserView")
        try:
            self.server = WebServer(self.page_frames.layout, port=port, host=host, fps=fps,
                                    title=title or _title(env), who="BrowserView")
        except BaseException:
            self.page_frames.close()
            raise
        self._return = 0.0

    @property
    def url(self) -> str:
        """The page's address (with ``?token=...`` when listening beyond loopback)."""
        return self.server.url

    @property
    def port(self) -> int:
        """The port listened on."""
        return self.server.port

    @property
    def token(self) -> str | None:
        """The token requests must carry (None on loopback)."""
        return self.server.token

    @property
    def closed(self) -> bool:
        """True once the page is gone (closed, or the server process died)."""
        return self.server.closed

    @property
    def page_closed(self) -> bool:
        """True once the page is gone (the same as :attr:`closed` here; a vector view's ``closed`` is the vector
        env's)."""
        return self.server.closed

    @property
    def close_reason(self) -> str | None:
        """Why the page went away, or None while it is served."""
        return self.server.close_reason

    @property
    def viewers(self) -> int:
        """Browsers watching now."""
        return self.server.viewers

    def _publish(self, obs: Any) -> None:
        if self.server.wants_frame():
            self.server.publish(self.page_frames.frames(obs), force=True)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._return = 0.0
        self._publish(obs)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        result = self.env.step(action)
        obs, reward, terminated, truncated, _ = result
        self._return += float(reward)
        self.server.add_steps(1)
        if terminated or truncated:
            self.server.add_episode(self._return)
            self._return = 0.0
        self._publish(obs)
        return result

    def snapshot_state(self) -> dict[str, Any]:
        """A view holds no simulation state (its counters are the page's, not the run's)."""
        return {}

    def restore_snapshot_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore."""

    def close(self) -> None:
        """Stop serving (frees the port), then close the env. Idempotent."""
        if hasattr(self, "server"):
            self.server.close()
        if hasattr(self, "page_frames"):
            self.page_frames.close()
        super().close()


class VectorBrowserView(gym.vector.VectorWrapper):
    """One page tiling every env of a vector env (what ``BrowserView(vector_env)`` returns).

    The images come from the batched observations, which reach this process from every kind of vector env:
    ``make_vec``'s "sync" and in-process "batched" envs hold them here, and its "async" and multi-worker "batched"
    workers write them into shared memory that this process reads. So nothing runs in the workers, and the view
    costs them nothing; cameras must be in the envs' rig (``make_vec(..., cams=[...])``).

    Args:
        env: a vector env whose single observation space is a PixelObs Dict.
        port, host, fps, title: as :class:`BrowserView`.
        camera: None (every camera of the observations) or a camera name among them.

    Raises:
        ValueError: as :class:`BrowserView`, and a camera that is not in the observations (the message names the
            fix).
    """

    def __init__(self, env: gym.vector.VectorEnv, port: int = 0, host: str = "127.0.0.1",
                 camera: CameraChoice = None, fps: float = 15.0, *, title: str | None = None) -> None:
        super().__init__(env)
        check_fps(fps, "BrowserView")
        self.page_frames = PageFrames(None, camera, "BrowserView", vector_space=env.single_observation_space,
                                      num_envs=env.num_envs)
        name = title or _title(env)
        self.server = WebServer(self.page_frames.layout, port=port, host=host, fps=fps,
                                title=f"{name} x {env.num_envs}", who="BrowserView")
        self._returns = np.zeros(env.num_envs, np.float64)

    url = BrowserView.url
    port = BrowserView.port
    token = BrowserView.token
    page_closed = BrowserView.page_closed
    close_reason = BrowserView.close_reason
    viewers = BrowserView.viewers
    # ``closed`` stays the vector env's own (VectorWrapper's): whether the envs are closed

    def _publish(self, obs: Any) -> None:
        if self.server.wants_frame():
            self.server.publish(obs, force=True)

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        mask = (options or {}).get("reset_mask")
        if mask is None:
            self._returns[:] = 0.0
        else:
            self._returns[np.asarray(mask, bool)] = 0.0
        self._publish(obs)
        return obs, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        result = self.env.step(actions)
        obs, rewards, terminations, truncations, _ = result
        self._returns += np.asarray(rewards, np.float64)
        self.server.add_steps(self.num_envs)
        for i in np.flatnonzero(np.logical_or(terminations, truncations)):
            self.server.add_episode(float(self._returns[i]))
            self._returns[i] = 0.0
        self._publish(obs)
        return result

    def close(self, **kwargs: Any) -> None:
        """Stop serving (frees the port), then close the vector env. Idempotent."""
        if hasattr(self, "server"):
            self.server.close()
        super().close(**kwargs)
