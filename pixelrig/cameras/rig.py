"""``CameraRig``: a set of cameras bound to one scene, rendered with one ``getCameraImage`` call per camera (one pass
for all of them on the gl renderer; two for a stereo camera), decoded into images, world points, normals, link and
class ids, through each camera's lens (intrinsics, distortion) and active stereo."""

from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from pixelrig.cameras.lens import LensPlan, pinhole_rays
from pixelrig.cameras.mounts import (
    Mount,
    fixed_view,
    jitter_view,
    link_pose,
    mounted_view,
    resolve_mount,
    scene_links,
    view_to_extrinsics,
)
from pixelrig.cameras.spec import Camera, Pose
from pixelrig.cameras.stereo import DOT_PITCH_PX, disparities, dot_pattern, infrared, sgbm_depth
from pixelrig.render.backends import CameraRequest, Frame, RenderBackend
from pixelrig.render.convert import (
    below_far,
    camera_centre,
    link_to_class,
    normalised_world_rays,
    normals_from_points,
    rays_to_points,
    rgba_to_rgb,
    segmentation_to_label,
    segmentation_to_link,
    world_rays,
    zbuffer_to_depth,
    zbuffer_to_metres,
)
from pixelrig.render.registry import BACKENDS

IDENTITY_QUAT = (0.0, 0.0, 0.0, 1.0)
CameraLike = Camera | Mapping[str, Any]
INT32_MAX = int(np.iinfo(np.int32).max)


def check_classes(classes: Mapping[str, int] | None) -> dict[str, int]:
    """Validate a ``classes`` map (glob pattern -> class id) and return it as a plain dict.

    Raises:
        ValueError: not a mapping, a pattern that is not a non-empty string, or an id that is not an integer in
            ``[0, 2**31 - 1]`` (-1 is the background's).
    """
    if classes is None:
        return {}
    if not isinstance(classes, Mapping):
        raise ValueError(f"classes must be a dict of glob pattern -> class id, e.g. {{'panda*': 1, 'cube': 2}}: "
                         f"got {classes!r}")
    out: dict[str, int] = {}
    for pattern, cid in classes.items():
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValueError(f"classes: pattern {pattern!r} must be a non-empty string (a body name or "
                             "'body/link', globs allowed)")
        if isinstance(cid, bool) or not isinstance(cid, int | np.integer) or not 0 <= int(cid) <= INT32_MAX:
            raise ValueError(f"classes[{pattern!r}]={cid!r} must be an integer in [0, {INT32_MAX}] (0 means "
                             "unclassified; -1 is reserved for the background)")
        out[pattern] = int(cid)
    return out


def match_classes(classes: Mapping[str, int], links: list[tuple[int, int, str, str]]) -> tuple[list[int], list[str]]:
    """Class id of each link, and the patterns that matched nothing.

    A pattern with a ``/`` is matched against ``"body/link"`` names, one without against body names (``fnmatch``
    globs, case-sensitive). Link patterns win over body patterns; among patterns of one kind, the first listed wins.
    Links no pattern matches are class 0.

    Args:
        classes: glob pattern -> class id (as :func:`check_classes` returns).
        links: the scene's links as :func:`pixelrig.cameras.mounts.scene_links` returns them.

    Returns:
        ``(class id per link, in the order of links; patterns that matched no link)``.
    """
    link_level = [(pat, cid) for pat, cid in classes.items() if "/" in pat]
    body_level = [(pat, cid) for pat, cid in classes.items() if "/" not in pat]
    matched: set[str] = set()
    out = []
    for _, _, bname, lname in links:
        hits = [(pat, cid) for pat, cid in link_level if fnmatch.fnmatchcase(f"{bname}/{lname}", pat)]
        hits += [(pat, cid) for pat, cid in body_level if fnmatch.fnmatchcase(bname, pat)]
        matched.update(pat for pat, _ in hits)
        out.append(hits[0][1] if hits else 0)
    return out, [pat for pat in classes if pat not in matched]


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


class NanBox(spaces.Box):
    """A Box whose :meth:`contains` also accepts NaN: the space of a depth image whose invalid pixels read NaN
    (``SensorNoise(invalid=nan)``), which no plain gymnasium Box contains (NaN compares false with any bound).
    Everything else is Box's; batched (vector envs) it stays a NanBox."""

    def contains(self, x: Any) -> bool:
        if isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.shape == self.shape:
            x = np.where(np.isnan(x), self.low, x).astype(x.dtype)
        return super().contains(x)

    def __repr__(self) -> str:
        return "Nan" + super().__repr__()


@batch_space.register(NanBox)
def _batch_nan_box(space: NanBox, n: int = 1) -> NanBox:
    box = batch_space.dispatch(spaces.Box)(space, n)
    return NanBox(box.low, box.high, dtype=box.dtype, seed=box.np_random)


def depth_space(cam: Camera, hw: tuple[int, int], stereo: bool = False) -> spaces.Box:
    """The space of a camera's depth (or ``depth_stereo``) image: metres in [near, far], from 0 where pixels may
    read invalid as 0 (a noise model with a range or dropouts; stereo holes), a :class:`NanBox` where they read
    NaN."""
    invalid = cam.noise.invalid if cam.noise is not None else 0.0
    may_invalidate = stereo or (cam.noise is not None and cam.noise.can_invalidate)
    low = np.float32(0.0) if may_invalidate and invalid == 0.0 else np.float32(cam.near)
    kind = NanBox if may_invalidate and invalid != 0.0 else spaces.Box
    return kind(low, np.float32(cam.far), (*hw, 1), np.float32)


def camera_spaces(cams: Iterable[Camera], camera_params: bool = False) -> dict[str, spaces.Box]:
    """Observation spaces of a rig, from the specs alone.

    rgb (H,W,3) uint8; depth (H,W,1) float32 metres in [near, far] (from 0 for a noise model whose pixels may
    read invalid as 0; a :class:`NanBox` when they read NaN); depth_stereo likewise, holes invalid; label (H,W,1)
    int32 body ids (-1 = background); points (H,W,4) float32 world xyz (unbounded) and w in {0, 1}; normal (H,W,3)
    float32 in [-1, 1]; link and class (H,W,1) int32 (-1 = background). With ``camera_params``:
    ``"<camera>/intrinsics"`` (3,3) float32 (the principal point within the range every renderer may give) and
    ``"<camera>/extrinsics"`` (4,4) float32 (rotation entries in [-1, 1], translation unbounded, last row 0 0 0 1).
    """
    out: dict[str, spaces.Box] = {}
    for cam in cams:
        hw = (cam.height, cam.width)
        for mod in cam.modalities:
            if mod == "rgb":
                space = spaces.Box(0, 255, (*hw, 3), np.uint8)
            elif mod in ("depth", "depth_stereo"):
                space = depth_space(cam, hw, stereo=mod == "depth_stereo")
            elif mod == "points":
                low = np.full((*hw, 4), -np.inf, np.float32)
                high = np.full((*hw, 4), np.inf, np.float32)
                low[..., 3], high[..., 3] = 0.0, 1.0
                space = spaces.Box(low, high, dtype=np.float32)
            elif mod == "normal":
                space = spaces.Box(-1.0, 1.0, (*hw, 3), np.float32)
            else:
                space = spaces.Box(-1, INT32_MAX, (*hw, 1), np.int32)
            out[f"{cam.name}/{mod}"] = space
        if camera_params:
            ks = np.stack([cam.opencv_intrinsics(r) for r in BACKENDS]).astype(np.float32)
            out[f"{cam.name}/intrinsics"] = spaces.Box(ks.min(axis=0), ks.max(axis=0), dtype=np.float32)
            low = np.array([[-1, -1, -1, -np.inf]] * 3 + [[0, 0, 0, 1]], np.float32)
            high = np.array([[1, 1, 1, np.inf]] * 3 + [[0, 0, 0, 1]], np.float32)
            out[f"{cam.name}/extrinsics"] = spaces.Box(low, high, dtype=np.float32)
    return out


class CameraRig:
    """Cameras rendered together into a flat ``{"<camera>/<modality>": array}`` dict.

    The rig is bound to a scene with :meth:`bind` (mount links are looked up by name once per scene), then each
    :meth:`render` computes view matrices (mounted cameras follow their link) and calls ``getCameraImage`` once
    per camera, asking for the segmentation pass only for cameras that return label, link or class images.

    Outputs beyond rgb/depth/label:

    - ``points``: world x, y, z of each pixel's surface point and w = 1 (0 and w = 0 at background), unprojected
      from the depth buffer with the renderer's own pixel sampling (see :meth:`Camera.opencv_intrinsics`) and the
      camera pose the frame was drawn with, in float64.
    - ``normal``: world unit normals; the gl renderer draws them from the geometry (each drawn triangle's own
      normal, so a sphere's are those of its 32-segment hull, as its points are); on tiny and egl they are
      estimated from the points (see :func:`pixelrig.render.convert.normals_from_points` for edges).
    - ``link``: one id per (body, link) of the scene: links are numbered densely in body-id order, each body's
      base first, then its links by joint index (so body ``b``'s link ``k`` is ``first[b] + k + 1``).
      :attr:`link_names` maps ids to ``"body/link"``. -1 is background.
    - ``class``: the ``classes`` map's id of each pixel's link (0 unclassified, -1 background).

    Through each camera's lens (:meth:`Camera.lens`): a camera with ``intrinsics`` is drawn with an off-axis
    frustum that gives it exactly that K on every renderer; a camera with ``distortion`` is drawn as a wider pinhole
    image and remapped (:class:`~pixelrig.cameras.lens.Remap`: RGB bilinear, labels, links and drawn normals
    nearest, depth along the optical axis of the point each distorted pixel sees, points on each pixel's distorted
    ray). ``depth_stereo`` draws a second, right view and matches the pair (:mod:`pixelrig.cameras.stereo`).
    Noise, period and latency are not the rig's: :class:`~pixelrig.PixelObs` applies them to what the rig draws.

    Args:
        cams: Cameras or camera dicts (``Camera.from_dict`` format); names must be unique.
        classes: glob pattern -> class id for the ``class`` modality (see :func:`match_classes`).
        camera_params: add ``"<camera>/intrinsics"`` (OpenCV K) and ``"<camera>/extrinsics"`` (world -> camera,
            OpenCV axes) to every render, float32.

    Raises:
        ValueError: duplicate camera names, an empty rig, or a bad ``classes`` map.
    """

    def __init__(self, cams: Iterable[CameraLike], classes: Mapping[str, int] | None = None,
                 camera_params: bool = False) -> None:
        self.cameras: tuple[Camera, ...] = as_cameras(cams)
        self.classes: dict[str, int] = check_classes(classes)
        self.camera_params = bool(camera_params)
        self._lenses: list[LensPlan] = []
        self._drawn: list[int] = list(range(len(self.cameras)))
        self._fixed_views = [fixed_view(cam) if cam.mount is None else None for cam in self.cameras]
        self._mounts: list[Mount | None] = [None] * len(self.cameras)
        self._jitters: list[Pose | None] = [None] * len(self.cameras)
        self._backend: RenderBackend | None = None
        self._intrinsics: list[np.ndarray] = []
        self._views: list[tuple[float, ...]] | None = None
        self._rays: list[tuple[tuple[float, ...], np.ndarray] | None] = [None] * len(self.cameras)
        self._first_link = np.zeros(0, np.int64)
        self._link_class = np.zeros(0, np.int32)
        self._bound_before = False
        self.label_names: dict[int, str] = {}
        """Body id -> body name for the bound scene (label images carry these ids; -1 is background)."""
        self.link_names: dict[int, str] = {}
        """Link id -> ``"body/link"`` for the bound scene (link images carry these ids; -1 is background)."""
        self.link_classes: dict[int, int] = {}
        """Link id -> class id under ``classes`` for the bound scene (0 = unclassified)."""
        self.backdrop: Callable[[int], np.ndarray | None] | None = None
        """Camera index -> an (H, W, 3) uint8 image the camera's RGB shows where it sees the background (label -1) or
        a body of :attr:`backdrop_bodies`, or None (PixelObs's ``background=``); depth and labels are untouched. Its
        cameras' requests ask for the segmentation pass."""
        self.backdrop_bodies: frozenset[int] = frozenset()
        """Body ids that :attr:`backdrop` also covers."""

    @property
    def observation_spaces(self) -> dict[str, spaces.Box]:
        """The rig's spaces, keyed like :meth:`render`'s output."""
        return camera_spaces(self.cameras, self.camera_params)

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
        """Bind to the scene of ``backend.client``: resolve mount links, the label, link and class maps.

        Call again whenever the scene is rebuilt (body or link ids may change).

        Args:
            backend: render backend of the scene's client.
            names: body id -> name to use for labels and ``"body/link"`` mounts; defaults to the model files'.
            jitter: camera name -> pose offset in the camera's frame (domain randomisation), or None.

        Raises:
            ValueError: a mount link does not exist (the message lists those that do) or is ambiguous; or, at the
                rig's first bind, a ``classes`` pattern matches nothing in the scene (later binds, after the world
                was rebuilt, warn instead: a body may come and go between episodes).
        """
        client = backend.client
        mounts = [resolve_mount(cam, client, names) if cam.mount else None for cam in self.cameras]
        links = scene_links(client, names)
        labels = {body: bname for body, link, bname, _ in links if link == -1}
        link_names = {i: f"{bname}/{lname}" for i, (_, _, bname, lname) in enumerate(links)}
        first = np.full(max(labels, default=-1) + 1, -1, np.int64)
        for i, (body, link, _, _) in enumerate(links):
            if link == -1:
                first[body] = i
        class_ids, unmatched = match_classes(self.classes, links)
        if unmatched:
            bodies = ", ".join(sorted(set(labels.values()))) or "(the scene is empty)"
            message = (f"classes patterns {unmatched} match no body or 'body/link' in the scene (bodies: {bodies}; "
                       "a pattern with '/' is matched against 'body/link' names, one without against body names; "
                       "link_names lists every 'body/link')")
            if not self._bound_before:
                raise ValueError(message)
            warnings.warn(message, stacklevel=2)
        self._lenses = [cam.lens(backend.name) for cam in self.cameras]
        self._intrinsics = [lens.k for lens in self._lenses]
        self._jitters = [jitter(cam.name) if jitter is not None else None for cam in self.cameras]
        self._mounts, self.label_names, self._backend = mounts, labels, backend
        self.link_names = link_names
        self.link_classes = dict(enumerate(class_ids))
        self._first_link = first
        self._link_class = np.asarray(class_ids, np.int32)
        self._views = None
        self._drawn = list(range(len(self.cameras)))
        self._rays = [None] * len(self.cameras)
        self._bound_before = True

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

    def intrinsics(self) -> list[np.ndarray]:
        """Every camera's OpenCV K on the bound renderer, float64 (3, 3) (see :meth:`Camera.opencv_intrinsics`)."""
        if self._backend is None:
            raise RuntimeError("CameraRig.bind(backend) must be called before rendering")
        return [cam.opencv_intrinsics(self._backend.name) for cam in self.cameras]

    def extrinsics(self) -> list[np.ndarray]:
        """Every camera's world -> camera transform now, OpenCV axes, float64 (4, 4)."""
        return [view_to_extrinsics(view) for view in self.views()]

    def rays(self, i: int) -> np.ndarray:
        """(2, H, W) float64 normalised image coordinates (``x / z``, ``y / z``, OpenCV axes) of the ray each pixel
        of camera ``i``'s images sees on the bound renderer (distortion undone)."""
        if not self._lenses:
            raise RuntimeError("CameraRig.bind(backend) must be called before rendering")
        return self._lenses[i].rays

    def requests(self, cams: Iterable[int] | None = None) -> list[CameraRequest]:
        """What to draw now: a :class:`~pixelrig.render.backends.CameraRequest` per camera, in rig order (the
        segmentation pass only for cameras that return label, link or class images, and for normal cameras on
        backends that do not draw normals; normals asked for where the camera returns them), followed by its right
        view for a ``depth_stereo`` camera. A distorted camera's request is its wider pinhole image. :meth:`render`
        draws them; a batched vector env draws many rigs' requests at once (:func:`pixelrig.render.backends.submit`)
        and hands each rig its frames back through :meth:`decode`. The views, and which cameras were asked for, are
        remembered for :meth:`decode` (points and extrinsics are those of the pose drawn).

        Args:
            cams: indices of the cameras to draw (in rig order); None draws every camera.
        """
        if self._backend is None:
            raise RuntimeError("CameraRig.bind(backend) must be called before rendering")
        drawn = list(range(len(self.cameras))) if cams is None else sorted(set(cams))
        views = self.views()
        self._views = views
        self._drawn = drawn
        # normals estimated from depth (backends that do not draw them) use the segmentation to keep each pixel's
        # tangents on its own body and link
        estimated = not self._backend.draws_normals
        out = []
        for i in drawn:
            cam, view, lens = self.cameras[i], views[i], self._lenses[i]
            width, height = lens.draw_size
            out.append(CameraRequest(width, height, tuple(view), tuple(lens.projection),
                                     cam.segmentation or ("normal" in cam.modalities and estimated)
                                     or (self.backdrop is not None and "rgb" in cam.modalities),
                                     "normal" in cam.modalities))
            if "depth_stereo" in cam.modalities:
                out.append(CameraRequest(width, height, right_view(view, cam.stereo_baseline),
                                         tuple(lens.projection), False, False))
        return out

    def decode(self, frames: list[Frame], views: list[tuple[float, ...]] | None = None) -> dict[str, np.ndarray]:
        """The images of the cameras the last :meth:`requests` asked for (every camera when it has not been called
        since :meth:`bind`), from the frames drawn for those requests.

        Args:
            frames: the drawn frames, one per request, in order.
            views: every camera's view matrix the frames were drawn with; defaults to those of the last
                :meth:`requests`. Points, normals, extrinsics and stereo use them.

        Raises:
            RuntimeError: points, normals or extrinsics are asked for, but no views were given and
                :meth:`requests` has not been called since the rig was bound.
            ValueError: not one frame per request.
        """
        out: dict[str, np.ndarray] = {}
        views = views if views is not None else self._views
        expected = sum(1 + ("depth_stereo" in self.cameras[i].modalities) for i in self._drawn)
        if len(frames) != expected:
            raise ValueError(f"CameraRig.decode got {len(frames)} frames for {expected} requests (cameras "
                             f"{[self.cameras[i].name for i in self._drawn]})")
        queue = iter(frames)
        for i in self._drawn:
            cam = self.cameras[i]
            frame = next(queue)
            right = next(queue) if "depth_stereo" in cam.modalities else None
            name = cam.name
            extrinsics = None
            if self.camera_params or "points" in cam.modalities or "normal" in cam.modalities:
                if views is None:
                    raise RuntimeError("CameraRig.decode needs the views the frames were drawn with: pass views= or "
                                       "call requests() first")
                extrinsics = view_to_extrinsics(views[i])
            if self._lenses[i].remap is None:
                self._decode_pinhole(i, cam, frame, views, extrinsics, out)
            else:
                self._decode_distorted(i, cam, frame, views, extrinsics, out)
            if right is not None:
                out[f"{name}/depth_stereo"] = self._stereo(i, cam, frame, right)
            if self.camera_params:
                out[f"{name}/intrinsics"] = self._intrinsics[i].astype(np.float32)
                e = extrinsics.astype(np.float32)  # type: ignore[union-attr]
                np.clip(e[:3, :3], -1.0, 1.0, out=e[:3, :3])  # a rotation's entries; float rounding may pass 1
                out[f"{name}/extrinsics"] = e
        return {key: out[key] for i in self._drawn for key in self.keys_of(i) if key in out}

    def keys_of(self, i: int) -> list[str]:
        """The keys of camera ``i``'s images in :meth:`decode`'s output, in order (its modalities, then its
        intrinsics and extrinsics with ``camera_params``)."""
        cam = self.cameras[i]
        extra = [f"{cam.name}/intrinsics", f"{cam.name}/extrinsics"] if self.camera_params else []
        return [*cam.keys, *extra]

    def _decode_pinhole(self, i: int, cam: Camera, frame: Frame, views: list[tuple[float, ...]] | None,
                        extrinsics: np.ndarray | None, out: dict[str, np.ndarray]) -> None:
        """Camera ``i``'s images from a frame drawn at the camera's own size (no distortion)."""
        name = cam.name
        link = None
        points = None
        for mod in cam.modalities:
            if mod == "depth_stereo":
                continue
            if mod == "rgb":
                out[f"{name}/rgb"] = self._behind(i, rgba_to_rgb(frame.rgba), frame.seg)
            elif mod == "depth":
                out[f"{name}/depth"] = zbuffer_to_depth(frame.zbuffer, cam.near, cam.far)
            elif mod == "label":
                out[f"{name}/label"] = segmentation_to_label(frame.seg)
            elif mod == "points" or (mod == "normal" and frame.normal is None):
                if points is None:
                    metres = zbuffer_to_metres(frame.zbuffer, cam.near, cam.far)
                    centre = camera_centre(extrinsics)  # type: ignore[arg-type]
                    points = rays_to_points(metres, self._world_rays(i, views[i], extrinsics),  # type: ignore[index]
                                            centre, frame.zbuffer < 1.0)
                if mod == "points":
                    out[f"{name}/points"] = points
                else:  # estimated from depth on renderers without a normal pass
                    out[f"{name}/normal"] = normals_from_points(points, metres, centre, frame.seg)
            elif mod == "normal":  # drawn from the geometry by the backend
                out[f"{name}/normal"] = np.clip(frame.normal, -1.0, 1.0)
            else:  # link, class
                if link is None:
                    link = segmentation_to_link(frame.seg, self._first_link)
                out[f"{name}/{mod}"] = link if mod == "link" else link_to_class(link, self._link_class)

    def _decode_distorted(self, i: int, cam: Camera, frame: Frame, views: list[tuple[float, ...]] | None,
                          extrinsics: np.ndarray | None, out: dict[str, np.ndarray]) -> None:
        """Camera ``i``'s images from its wider pinhole frame, through the lens's remap."""
        name = cam.name
        remap = self._lenses[i].remap
        assert remap is not None  # noqa: S101 - the caller checked
        metres = hit = seg = link = points = centre = None
        for mod in cam.modalities:
            if mod == "depth_stereo":
                continue
            if mod == "rgb":
                rgb = remap.rgb(rgba_to_rgb(frame.rgba))
                out[f"{name}/rgb"] = rgb if self.backdrop is None else self._behind(i, rgb, remap.pick(frame.seg))
                continue
            if mod in ("depth", "points") or (mod == "normal" and frame.normal is None):
                if metres is None:
                    metres, hit, smooth = remap.depth(zbuffer_to_metres(frame.zbuffer, cam.near, cam.far),
                                                      frame.zbuffer < 1.0, frame.seg)
            if mod in ("label", "link", "class") or (mod == "normal" and frame.normal is None):
                if seg is None:
                    seg = remap.pick(frame.seg)
            if mod == "depth":
                depth = np.clip(metres, cam.near, below_far(cam.far)).astype(np.float32)  # type: ignore[arg-type]
                depth[~hit] = cam.far  # type: ignore[index]
                out[f"{name}/depth"] = depth[..., None]
            elif mod == "label":
                out[f"{name}/label"] = segmentation_to_label(seg)  # type: ignore[arg-type]
            elif mod == "points" or (mod == "normal" and frame.normal is None):
                if points is None:
                    centre = camera_centre(extrinsics)  # type: ignore[arg-type]
                    own, nearest = self._world_rays(i, views[i], extrinsics)  # type: ignore[index,misc]
                    rays = np.where(smooth[None], own, nearest)  # type: ignore[index]
                    points = rays_to_points(metres, rays, centre, hit)  # type: ignore[arg-type]
                if mod == "points":
                    out[f"{name}/points"] = points
                else:
                    out[f"{name}/normal"] = normals_from_points(points, metres, centre, seg)  # type: ignore[arg-type]
            elif mod == "normal":
                out[f"{name}/normal"] = np.clip(remap.pick(frame.normal), -1.0, 1.0)
            else:  # link, class
                if link is None:
                    link = segmentation_to_link(seg, self._first_link)  # type: ignore[arg-type]
                out[f"{name}/{mod}"] = link if mod == "link" else link_to_class(link, self._link_class)

    def _behind(self, i: int, rgb: np.ndarray, seg: np.ndarray | None) -> np.ndarray:
        """Camera ``i``'s RGB with :attr:`backdrop`'s image where its segmentation ``seg`` shows the background or a
        backdrop body (``rgb`` itself without a backdrop)."""
        image = self.backdrop(i) if self.backdrop is not None and seg is not None else None
        if image is None:
            return rgb
        label = segmentation_to_label(seg)[..., 0]
        mask = label == -1
        if self.backdrop_bodies:
            mask |= np.isin(label, np.fromiter(self.backdrop_bodies, np.int64))
        rgb[mask] = image[mask]
        return rgb

    def _stereo(self, i: int, cam: Camera, left: Frame, right: Frame) -> np.ndarray:
        """Camera ``i``'s ``depth_stereo`` image from its left (own) and right frames: the projector's dots added to
        both views' grey images, matched with SGBM in the drawn (pinhole) grid, then remapped like depth for a
        distorted camera. Holes read the noise model's ``invalid`` (0 without one)."""
        lens = self._lenses[i]
        k = lens.k if lens.remap is None else lens.remap.source_k
        fx = float(k[0, 0])
        width, height = lens.draw_size
        grid = lens.rays if lens.remap is None else pinhole_rays(k, width, height)
        baseline = cam.stereo_baseline
        pitch = DOT_PITCH_PX / fx
        images = []
        for frame, offset in ((left, 0.5 * baseline), (right, -0.5 * baseline)):
            metres = zbuffer_to_metres(frame.zbuffer, cam.near, cam.far)
            hit = frame.zbuffer < 1.0
            images.append(infrared(frame.rgba, dot_pattern(grid, metres, hit, offset, pitch)))
        z, valid = sgbm_depth(images[0], images[1], fx, baseline,
                              disparities(fx, baseline, cam.stereo_min_depth, width), cam.near, cam.far)
        if lens.remap is not None:
            z, valid, _ = lens.remap.depth(z, valid)
        out = np.clip(z, cam.near, below_far(cam.far)).astype(np.float32)
        out[~valid] = cam.noise.invalid if cam.noise is not None else 0.0
        return out[..., None]

    def _world_rays(self, i: int, view: tuple[float, ...], extrinsics: np.ndarray) -> Any:
        """Camera ``i``'s world rays for ``view``, kept while the view does not change (world-fixed cameras); for a
        distorted camera, its pixels' own rays and their nearest source pixels' (see
        :meth:`~pixelrig.cameras.lens.Remap.depth`)."""
        cached = self._rays[i]
        if cached is not None and cached[0] == view:
            return cached[1]
        cam = self.cameras[i]
        if self._lenses[i].remap is None:
            rays = world_rays(self._intrinsics[i], extrinsics, cam.width, cam.height)
        else:
            remap = self._lenses[i].remap
            rays = (normalised_world_rays(self._lenses[i].rays, extrinsics),
                    normalised_world_rays(remap.nearest_rays, extrinsics))  # type: ignore[union-attr]
        self._rays[i] = (tuple(view), rays)
        return rays

    def render(self, cams: Iterable[int] | None = None) -> dict[str, np.ndarray]:
        """Render every camera (or those at the indices ``cams``) once: ``{"<camera>/<modality>": array}`` with
        fresh (unshared) arrays. One ``getCameraImage`` call per camera on pybullet's renderers (two for a stereo
        camera); one pass for all of them on gl."""
        requests = self.requests(cams)  # raises a clear error when the rig is not bound yet
        return self.decode(self._backend.render(requests))  # type: ignore[union-attr]


def right_view(view: tuple[float, ...], baseline: float) -> tuple[float, ...]:
    """The view matrix of a camera ``baseline`` metres along the +x (image right) of the camera of ``view``, same
    orientation (a rectified stereo pair's right imager)."""
    m = np.array(view, dtype=np.float64).reshape(4, 4).T  # column-major -> row-major world->camera (GL axes)
    m[0, 3] -= baseline  # GL eye x is image right: the right camera sees every point baseline further left
    return tuple(m.T.ravel().tolist())

