"""Camera specs: construction, canonical form, serialisation and every bad-input message."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from pixelrig import Camera
from pixelrig.cameras import CameraRig, camera_spaces


def test_world_camera_defaults_and_canonical_modalities() -> None:
    cam = Camera("front", eye=[1, 0, 1], target=(0, 0, 0), modalities=["label", "rgb"])
    assert cam.modalities == ("rgb", "label")
    assert cam.eye == (1.0, 0.0, 1.0) and isinstance(cam.eye, tuple)
    assert cam.keys == ("front/rgb", "front/label")
    hash(cam)  # frozen and hashable


def test_mounted_camera_normalises_offset() -> None:
    cam = Camera("wrist", mount="panda_hand", offset=((0, 0, 0.05), (0, 0, 0, 2)))
    assert cam.offset == ((0.0, 0.0, 0.05), (0.0, 0.0, 0.0, 1.0))


def test_dict_round_trip() -> None:
    cams = [
        Camera("a", width=32, height=24, eye=(1, 2, 3), target=(0, 0, 0), modalities=("depth",)),
        Camera("b", mount="body/link", offset=((0.1, 0, 0), (0, 0, 0.7071068, 0.7071068)), fov=90),
    ]
    for cam in cams:
        assert Camera.from_dict(cam.to_dict()) == cam


def test_intrinsics_match_fov() -> None:
    cam = Camera("c", width=100, height=50, fov=90.0, eye=(0, 0, 1), target=(0, 0, 0), up=(0, 1, 0))
    assert cam.intrinsics is None and cam.vertical_fov == 90.0  # a field-of-view camera has no intrinsics field
    k = cam.opencv_intrinsics("egl")
    assert k[1, 1] == pytest.approx(25.0) and k[0, 0] == pytest.approx(25.0)
    assert (k[0, 2], k[1, 2]) == (49.5, 24.5)  # EGL samples pixel centres: the principal point is the image centre


def test_spaces_from_specs_alone() -> None:
    cam = Camera("c", width=20, height=10, eye=(0, 0, 1), target=(0, 0, 0), up=(0, 1, 0), near=0.1, far=4.0,
                 modalities=("rgb", "depth", "label"))
    sp = camera_spaces([cam])
    assert sp["c/rgb"].shape == (10, 20, 3) and sp["c/rgb"].dtype == np.uint8
    assert sp["c/depth"].shape == (10, 20, 1) and sp["c/depth"].dtype == np.float32
    assert float(sp["c/depth"].low.min()) == pytest.approx(0.1) and float(sp["c/depth"].high.max()) == 4.0
    assert sp["c/label"].shape == (10, 20, 1) and sp["c/label"].dtype == np.int32


W = {"eye": (1, 1, 1), "target": (0, 0, 0)}

BAD = [
    (dict(name="", **W), "Camera name must be a non-empty string without '/': got ''"),
    (dict(name="a/b", **W), "Camera name must be a non-empty string without '/': got 'a/b'"),
    (dict(name="c", width=0, **W), "Camera 'c': width=0 must be an integer in [1, 4096]"),
    (dict(name="c", height=100000, **W), "Camera 'c': height=100000 must be an integer in [1, 4096]"),
    (dict(name="c", width=84.0, **W), "Camera 'c': width=84.0 must be an integer in [1, 4096]"),
    (dict(name="c", width=True, **W), "Camera 'c': width=True must be an integer in [1, 4096]"),
    (dict(name="c", fov=180, **W), "Camera 'c': fov=180.0 must be in (0, 180) degrees"),
    (dict(name="c", fov=math.nan, **W), "Camera 'c': fov=nan must be a finite number"),
    (dict(name="c", near=0.0, **W), "Camera 'c': near=0.0 must be > 0"),
    (dict(name="wrist", near=0.5, far=0.1, **W), "Camera 'wrist': near=0.5 must be < far=0.1"),
    (dict(name="c", far=math.inf, **W), "Camera 'c': far=inf must be a finite number"),
    (dict(name="c", eye=(0, 0, math.nan), target=(0, 0, 0)), "Camera 'c': eye[2]=nan must be a finite number"),
    (dict(name="c", eye=(0, 0), target=(0, 0, 0)), "Camera 'c': eye=(0, 0) must be a sequence of 3 finite numbers"),
    (dict(name="c", eye=(1, 1, 1), target=(1, 1, 1)), "must differ"),
    (dict(name="c", eye=(0, 0, 1), target=(0, 0, 0)), "must be non-zero and not parallel to target - eye"),
    (dict(name="c", mount="hand", **W), "Camera 'c': eye/target and mount are exclusive"),
    (dict(name="c"), "Camera 'c': needs eye and target (world-fixed) or mount (on a link)"),
    (dict(name="c", eye=(1, 1, 1)), "Camera 'c': needs eye and target"),
    (dict(name="c", mount="a/b/c"), "Camera 'c': mount must be 'link' or 'body/link': got 'a/b/c'"),
    (dict(name="c", mount="hand", offset=((0, 0, 0), (0, 0, 0, 0))), "offset quaternion (0, 0, 0, 0) has zero length"),
    (dict(name="c", mount="hand", offset=(0, 0, 0)), "offset=(0, 0, 0) must be ((x, y, z), (qx, qy, qz, qw))"),
    (dict(name="c", offset=((1, 0, 0), (0, 0, 0, 1)), **W), "applies to mounted cameras only"),
    (dict(name="c", modalities=(), **W), "modalities must be a non-empty sequence"),
    (dict(name="c", modalities="rgb", **W), "modalities must be a non-empty sequence"),
    (dict(name="c", modalities=("rgb", "normals"), **W), "Camera 'c': unknown modalities ['normals']"),
    (dict(name="c", modalities=("rgb", "rgb"), **W), "Camera 'c': modalities ('rgb', 'rgb') repeat a name"),
]


@pytest.mark.parametrize("kwargs,message", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_camera_specs_name_field_and_fix(kwargs: dict, message: str) -> None:
    kwargs = dict(kwargs)
    name = kwargs.pop("name")
    with pytest.raises(ValueError, match=re.escape(message)):
        Camera(name, **kwargs)


def test_fields_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Camera("c", 84, 84)  # type: ignore[misc]


def test_from_dict_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match=re.escape("camera spec 'c': unknown keys ['fovy']")):
        Camera.from_dict({"name": "c", "fovy": 60, "eye": (1, 1, 1), "target": (0, 0, 0)})


def test_rig_rejects_duplicate_names_and_lists_them() -> None:
    a = Camera("front", **W)
    with pytest.raises(ValueError, match=re.escape("duplicate camera names ['front']")):
        CameraRig([a, a, Camera("side", **W)])


def test_rig_rejects_empty_and_single_camera() -> None:
    with pytest.raises(ValueError, match="at least one Camera"):
        CameraRig([])
    with pytest.raises(ValueError, match=re.escape("cams must be a list of Camera")):
        CameraRig(Camera("a", **W))  # type: ignore[arg-type]
