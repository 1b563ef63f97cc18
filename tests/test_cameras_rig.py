"""Analytic rig tests on both backends: metric depth, labels, mounts, one call per camera, errors."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from pixelrig import Camera, CameraRig
from pixelrig.envs.scenes import PrimitivesEnv

from .worlds import BuiltByFunctionEnv, arm_world, box_at, plane

DOWN = {"eye": (0.0, 0.0, 3.0), "target": (0.0, 0.0, 0.0), "up": (0.0, 1.0, 0.0)}
ALL = ("rgb", "depth", "label")


def bound_rig(env, cams) -> CameraRig:
    rig = CameraRig(cams)
    rig.bind(env.render_backend, env.body_names)
    return rig


# The README's depth-precision figures, per backend and (near, far), in millimetres: a camera 3 m above a plane
# must read 3.000 m within these in every pixel.
# TinyRenderer returns a float32 z-buffer. At d = 3 m, z is just below 1, where one float32 step is 2**-24, and
# metres per unit of z are dd/dz = d**2 (far - near) / (far * near): 89 m at near=0.1/far=10, 900 m at
# near=0.01/far=100. Rounding z to the nearest float32 alone then costs up to 0.0027 mm (measured 0.0021 mm) and
# 0.027 mm (measured 0.041 mm: TinyRenderer's z is 1.5 steps off there); the bounds are 1.1 and 2.2 float32 steps.
# EGL's errors (Mesa llvmpipe, 24-bit depth buffer) are a constant offset of 0.55 mm and 1.14 mm, measured.
DEPTH_BOUND_MM = {
    ("tiny", 0.1, 10.0): 0.003,
    ("tiny", 0.01, 100.0): 0.06,
    ("egl", 0.1, 10.0): 0.6,
    ("egl", 0.01, 100.0): 1.2,
    # gl draws a float32 linear depth (0.00024 mm steps at 3 m) and hands it over as pybullet's float32 z-buffer
    # (converted in float64), so the z-buffer's rounding dominates as on tiny: measured 0.0031 mm and 0.013 mm;
    # bounds of 1.5 and 1.1 float32 z steps.
    ("gl", 0.1, 10.0): 0.004,
    ("gl", 0.01, 100.0): 0.03,
}


@pytest.mark.parametrize("near,far", [(0.1, 10.0), (0.01, 100.0)])
def test_camera_3m_above_plane_reads_3m(backend_name: str, near: float, far: float) -> None:
    """Depth is along the optical axis, so a plane facing the camera reads 3.000 m in every pixel, within the
    README's figure for this backend and near/far."""
    env = BuiltByFunctionEnv(plane, renderer=backend_name)
    try:
        cam = Camera("down", width=48, height=32, near=near, far=far, modalities=ALL, **DOWN)
        frames = bound_rig(env, [cam]).render()
        depth = frames["down/depth"]
        assert depth.shape == (32, 48, 1) and depth.dtype == np.float32
        err_mm = float(np.abs(depth.astype(np.float64) - 3.0).max()) * 1000.0
        bound = DEPTH_BOUND_MM[backend_name, near, far]
        assert err_mm <= bound, f"{backend_name} near={near} far={far}: max depth error {err_mm:.4f} mm > {bound} mm"
        assert (frames["down/label"] == 0).all()  # the ground is body 0 everywhere
        assert frames["down/rgb"].std() > 5  # the checker texture, not a blank frame
    finally:
        env.close()


def test_box_centre_pixel_carries_box_id_and_top_depth(backend_name: str) -> None:
    env = PrimitivesEnv(renderer=backend_name)
    try:
        cam = Camera("down", width=65, height=65, near=0.1, far=10.0, modalities=ALL, **DOWN)
        frames = bound_rig(env, [cam]).render()
        box = next(b for b, n in env.body_names.items() if n == "box")
        assert frames["down/label"][32, 32, 0] == box
        assert abs(float(frames["down/depth"][32, 32, 0]) - 2.6) < 0.01  # box top at z = 0.4
        ids = set(np.unique(frames["down/label"]).tolist())
        assert ids == {0, 1, 2, 3}  # ground, box, sphere, cylinder all in view
        r, g, b = frames["down/rgb"][32, 32].astype(int)
        assert r > g + 40 and r > b + 40  # the box is red
    finally:
        env.close()


def test_sky_is_background_label_and_far(backend_name: str) -> None:
    env = PrimitivesEnv(renderer=backend_name)
    try:
        cam = Camera("up", width=16, height=16, near=0.1, far=7.0, eye=(0, 0, 5), target=(0, 0, 9), up=(0, 1, 0),
                     modalities=ALL)
        frames = bound_rig(env, [cam]).render()
        assert (frames["up/label"] == -1).all()
        assert (frames["up/depth"] == np.float32(7.0)).all()
    finally:
        env.close()


def test_label_names_map_ids_to_names() -> None:
    env = PrimitivesEnv(renderer="tiny")
    try:
        rig = bound_rig(env, [Camera("c", modalities=("label",), **DOWN)])
        assert rig.label_names == {0: "ground", 1: "box", 2: "sphere", 3: "cylinder"}
    finally:
        env.close()


def test_camera_on_base_link_uses_link_frame_not_centre_of_mass(tmp_path: Path, backend_name: str) -> None:
    env = arm_world(tmp_path, backend_name)
    try:
        cam = Camera("base_cam", mount="base", width=16, height=16, near=0.05, far=10.0, modalities=("depth",))
        depth = bound_rig(env, [cam]).render()["base_cam/depth"]
        # the link frame is at z = 2 (the centre of mass, 0.5 m along the flipped z, would read 1.5 m)
        assert abs(float(depth[8, 8, 0]) - 2.0) < 0.01
    finally:
        env.close()


def test_mounted_camera_follows_its_link_and_only_its_link(tmp_path: Path, backend_name: str) -> None:
    env = arm_world(tmp_path, backend_name)
    try:
        cam = Camera("arm_cam", mount="arm/arm", offset=((0.4, 0, 0), (0, 0, 0, 1)), width=33, height=33,
                     near=0.05, far=10.0, modalities=("rgb", "depth"))
        rig = bound_rig(env, [cam])
        first = rig.render()
        again = rig.render()
        for key in first:
            np.testing.assert_array_equal(first[key], again[key], err_msg=f"{key} changed with nothing moving")
        assert abs(float(first["arm_cam/depth"][16, 16, 0]) - 2.0) < 0.01
        p.resetJointState(env.arm, 0, 0.3, physicsClientId=env.client)
        moved = rig.render()
        assert not np.array_equal(first["arm_cam/rgb"], moved["arm_cam/rgb"])
        # tilted by 0.3 rad about x: the optical axis meets the ground at 2 / cos(0.3) m
        assert abs(float(moved["arm_cam/depth"][16, 16, 0]) - 2.0 / math.cos(0.3)) < 0.02
    finally:
        env.close()


def test_one_call_per_camera_and_segmentation_only_for_labels() -> None:
    env = PrimitivesEnv(renderer="tiny")
    try:
        cams = [
            Camera("a", modalities=("rgb",), **DOWN),
            Camera("b", modalities=("rgb", "depth"), **DOWN),
            Camera("c", modalities=("label",), **DOWN),
        ]
        rig = bound_rig(env, cams)
        calls: list[list[bool]] = []
        real = env.render_backend.render

        def counting(requests):
            calls.append([r.segmentation for r in requests])
            return real(requests)

        env.render_backend.render = counting  # instrumentation: the real renderer still runs
        frames = rig.render()
        assert calls == [[False, False, True]]  # one call for the rig, a segmentation pass for "c" alone
        assert sorted(frames) == ["a/rgb", "b/depth", "b/rgb", "c/label"]
    finally:
        env.close()


def test_unknown_mount_lists_existing_links(tmp_path: Path) -> None:
    env = arm_world(tmp_path, "tiny")
    try:
        msg = "Camera 'w': unknown mount link 'hand'; links in the scene: ground/planeLink, arm/base, arm/arm"
        with pytest.raises(ValueError, match=re.escape(msg)):
            bound_rig(env, [Camera("w", mount="hand")])
    finally:
        env.close()


def test_ambiguous_mount_asks_for_body_slash_link() -> None:
    def build(env: BuiltByFunctionEnv) -> None:
        box_at(env, "left", (-1, 0, 0.2))
        box_at(env, "right", (1, 0, 0.2))

    env = BuiltByFunctionEnv(build, renderer="tiny")
    try:
        link = p.getBodyInfo(0, physicsClientId=env.client)[0].decode()
        with pytest.raises(ValueError, match=re.escape(f"write one of 'left/{link}', 'right/{link}'")):
            bound_rig(env, [Camera("w", mount=link)])
        bound_rig(env, [Camera("w", mount=f"right/{link}")])  # the qualified name resolves
    finally:
        env.close()


def test_render_before_bind_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match=re.escape("CameraRig.bind(backend) must be called before rendering")):
        CameraRig([Camera("a", **DOWN)]).render()
