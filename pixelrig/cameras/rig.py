"""``CameraRig``: a set of cameras bound to one scene, rendered with one ``getCameraImage`` call per camera (one pass
for all of them on the gl renderer)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from pixelrig.cameras.mounts import (
    Mount,
    body_name,
    fixed_view,
    jitter_view,
    link_pose,
    mounted_view,
    resolve_mount,
)
from pixelrig.cameras.spec import Camera, Pose
from pixelrig.render.backends import RawFrame, RenderBackend
from pixelrig.render.convert import rgba_to_rgb, segmentation_to_label, zbuffer_to_depth

IDENTITY_QUAT = (0.0, 0.0, 0.0, 1.0)
CameraLike = Camera | Mapping[str, Any]


def as_cameras(cams: Iterable[CameraLike]) -> tuple[Camera, ...]:
    """Turn Cameras and camera dicts into a tuple of Cameras, rejecting duplicate names and empty rigs."""
    if isinstance(cams, Camera | Mapping | str):
        raise ValueError(f"cams must be a list of Camera (or camera dicts): got a single {type(cams).__name__}")
    cameras = tuple(Camera.from_dict(c) for c in cams)
    if not cameras:
        raise ValueError("a camera rig needs at least one Camera")
    names = [c.name for c in cameras]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate camera names {duplicates}: each camera in a rig needs its own name")
    return cameras


def camera_spaces(cameras: Iterable[Camera]) -> dict[str, spaces.Box]:
    """Observation spaces of a rig, from the specs alone: rgb (H,W,3) uint8, depth (H,W,1) float32 metres in
    [near, far], label (H,W,1) int32 body ids (-1 = background)."""
    out: dict[str, spaces.Box] = {}
    for cam in cameras:
        hw = (cam.height, cam.width)
        for mod in cam.modalities:
            if mod == "rgb":
                space = spaces.Box(0, 255, (*hw, 3), np.uint8)
            elif mod == "depth":
                space = spaces.Box(np.float32(cam.near), np.float32(cam.far), (*hw, 1), np.float32)
            else:
                space = spaces.Box(-1, np.iinfo(np.int32).max, (*hw, 1), np.int32)
            out[f"{cam.name}/{mod}"] = space
    return out


class CameraRig:
    """Cameras rendered together into a flat ``{"<camera>/<modality>": array}`` dict.

    The rig is bound to a scene with :meth:`bind` (mount links are looked up by name once per scene), then each
    :meth:`render` computes view matrices (mounted cameras follow their link) and calls ``getCameraImage`` once
    per camera, asking for the segmentation pass only for cameras that return labels.

    Args:
        cameras: Cameras or camera dicts (``Camera.from_dict`` format); names must be unique.
    """

    def __init__(self, cameras: Iterable[CameraLike]) -> None:
        self.cameras: tuple[Camera, ...] = as_cameras(cameras)
        self._projections = [cam.projection_matrix() for cam in self.cameras]
        self._fixed_views = [fixed_view(cam) if cam.mount is None else None for cam in self.cameras]
        self._mounts: list[Mount | None] = [None] * len(self.cameras)
        self._jitters: list[Pose | None] = [None] * len(self.cameras)
        self._backend: RenderBackend | None = None
        self.label_names: dict[int, str] = {}
        """Body id -> body name for the bound scene (label images carry these ids; -1 is background)."""

    @property
    def observation_spaces(self) -> dict[str, spaces.Box]:
        """The rig's spaces, keyed like :meth:`render`'s output."""
        return camera_spaces(self.cameras)

    @property
    def backend(self) -> RenderBackend | None:
        """The backend the rig renders with once bound."""
        return self._backend

    def bind(
        self,
        backend: RenderBackend,
        names: Mapping[int, str] | None = None,
        jitter: Callable[[str], Pose | None] | None = None,
    ) -> None:
        """Bind to the scene of ``backend.client``: resolve mount links and the label map.

        Call again whenever the scene is rebuilt (body or link ids may change).

        Args:
            backend: render backend of the scene's client.
            names: body id -> name to use for labels and ``"body/link"`` mounts; defaults to the model files'.
            jitter: camera name -> pose offset in the camera's frame (domain randomisation), or None.

        Raises:
            ValueError: a mount link does not exist (the message lists those that do) or is ambiguous.
        """
        import pybullet as p

        client = backend.client
        mounts = [resolve_mount(cam, client, names) if cam.mount else None for cam in self.cameras]
        labels = {}
        for i in range(p.getNumBodies(physicsClientId=client)):
            body = p.getBodyUniqueId(i, physicsClientId=client)
            labels[body] = (names or {}).get(body) or body_name(client, body)
        self._jitters = [jitter(cam.name) if jitter is not None else None for cam in self.cameras]
        self._mounts, self.label_names, self._backend = mounts, labels, backend

    def views(self) -> list[tuple[float, ...]]:
        """Current view matrices of every camera (mounted ones from their link's pose now)."""
        if self._backend is None:
            raise RuntimeError("CameraRig.bind(backend) must be called before rendering")
        client = self._backend.client
        views = []
        for cam, view, mount, jitter in zip(self.cameras, self._fixed_views, self._mounts, self._jitters,
                                            strict=True):
            if view is None:
                pos, orn = link_pose(client, mount)  # type: ignore[arg-type]
                view = mounted_view((pos, orn if cam.follow == "pose" else IDENTITY_QUAT), cam.offset)
            views.append(view if jitter is None else jitter_view(view, jitter))
        return views

    def requests(self) -> list[tuple[int, int, tuple[float, ...], tuple[float, ...], bool]]:
        """What to draw now: ``(width, height, view, projection, segmentation)`` per camera, in rig order (the
        segmentation pass only for cameras that return labels). :meth:`render` draws them; a batched vector env
        draws many rigs' requests in one pass and hands each rig its frames back through :meth:`decode`."""
        return [(cam.width, cam.height, view, proj, "label" in cam.modalities)
                for cam, view, proj in zip(self.cameras, self.views(), self._projections, strict=True)]

    def decode(self, frames: list[RawFrame]) -> dict[str, np.ndarray]:
        """The rig's observation from one raw frame per camera (as :meth:`requests` asked for them)."""
        out: dict[str, np.ndarray] = {}
        for cam, frame in zip(self.cameras, frames, strict=True):
            for mod in cam.modalities:
                if mod == "rgb":
                    out[f"{cam.name}/rgb"] = rgba_to_rgb(frame.rgba)
                elif mod == "depth":
                    out[f"{cam.name}/depth"] = zbuffer_to_depth(frame.zbuffer, cam.near, cam.far)
                else:
                    out[f"{cam.name}/label"] = segmentation_to_label(frame.seg)
        return out

    def render(self) -> dict[str, np.ndarray]:
        """Render every camera once: ``{"<camera>/<modality>": array}`` with fresh (unshared) arrays. One
        ``getCameraImage`` call per camera on pybullet's renderers; one pass for all of them on gl."""
        requests = self.requests()  # raises a clear error when the rig is not bound yet
        return self.decode(self._backend.render_many(requests))
