"""The gl renderer: fidelity to TinyRenderer on every bundled env, determinism, batching, scene changes, failure."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig.cameras.rig import CameraRig
from pixelrig.errors import RendererUnavailable
from pixelrig.render.backends import CameraRequest, submit
from pixelrig.render.gl import context as glc
from pixelrig.render.registry import RENDERER_CHOICES, backend_class
from pixelrig.tools.bench.fidelity import agreement

from .conftest import egl_or_skip

pytestmark = pytest.mark.usefixtures("release_gl")  # pybullet's EGL plugin cannot start beside gl

needs_gl = pytest.mark.usefixtures("gl_required")  # skips without gl; fails under PIXELRIG_REQUIRE_EGL=1

ENVS = [
    ("pixelrig/CartPole-v0", {}),
    ("pixelrig/PandaReach-v0", {}),
    ("pixelrig/PandaPush-v0", {}),
    ("pixelrig/HalfCheetah-v0", {}),
    ("pixelrig/Hopper-v0", {}),
    ("pixelrig/Walker2d-v0", {}),
    ("pixelrig/Ant-v0", {}),
    ("pixelrig/Robot-v0", {"source": "kuka_iiwa/model.urdf"}),
    # the collision detail draws boxes and meshes without normals (flat-shaded): a wide box shaded with normals
    # from its centre was 57 levels off TinyRenderer here
    ("pixelrig/PandaPush-v0", {"visual_detail": "collision"}),
    ("pixelrig/Robot-v0", {"source": "kuka_iiwa/model.urdf", "visual_detail": "collision"}),
]

# Targets from issue 13 (TinyRenderer is the reference): the two renderers rasterise the same triangles with
# different edge rules and float evaluation orders, so a few boundary pixels and rounding levels may differ.
MIN_LABEL_AGREEMENT = 0.99
MAX_DEPTH_MEDIAN_M = 0.001
MAX_RGB_MEAN = 6.0
# Where both renderers see the same body, 99% of pixels agree in depth within it: measured worst 1.07 mm (Hopper's
# track camera; 0.79 mm on the other locomotion side cameras, 0.18 mm on the kuka, 0.035 mm on the Panda tasks).
# A median over whole images misses a body drawn 3 cm off (the ground and table dominate them); this does not.
MAX_DEPTH_P99_M = 0.0015


def _pair(env_id: str, kwargs: dict):
    """A tiny env plus two rigs of its default cameras on the same client: one tiny, one gl."""
    from pixelrig.render.gl import GlBackend

    env = gym.make(env_id, renderer="tiny", **kwargs)
    env.reset(seed=0)
    env.action_space.seed(0)
    u = env.unwrapped
    gl = GlBackend(u.client)
    tiny_rig, gl_rig = CameraRig(u.default_cameras()), CameraRig(u.default_cameras())
    tiny_rig.bind(u.render_backend, names=u.body_names)
    gl_rig.bind(gl, names=u.body_names)
    return env, gl, tiny_rig, gl_rig


def _agreement(a: dict, b: dict, cams) -> list[tuple[str, float, float, float, float]]:
    """Per camera: labels equal, depth median |diff|, depth p99 |diff| where both see the same body, RGB mean."""
    out = []
    for cam in cams:
        mine = [{k: v for k, v in frame.items() if k.startswith(f"{cam.name}/")} for frame in (a, b)]
        f = agreement(mine[:1], mine[1:])
        out.append((cam.name, f["label"], f["depth"], f["depth_p99"], f["rgb"]))
    return out


@needs_gl
@pytest.mark.parametrize(("env_id", "kwargs"), ENVS, ids=[f"{e}{kw.get('visual_detail', '')}" for e, kw in ENVS])
def test_matches_tiny_renderer(env_id: str, kwargs: dict) -> None:
    env, gl, tiny_rig, gl_rig = _pair(env_id, kwargs)
    try:
        for step in range(11):  # the reset state, then 10 random steps
            for name, labels, depth, p99, rgb in _agreement(tiny_rig.render(), gl_rig.render(), tiny_rig.cameras):
                where = f"{env_id} camera {name!r} step {step}"
                assert labels >= MIN_LABEL_AGREEMENT, f"{where}: labels agree on {labels:.4f}"
                assert depth <= MAX_DEPTH_MEDIAN_M, f"{where}: depth median |diff| {depth * 1000:.3f} mm"
                assert p99 <= MAX_DEPTH_P99_M, f"{where}: depth p99 |diff| on the same body {p99 * 1000:.3f} mm"
                assert rgb <= MAX_RGB_MEAN, f"{where}: RGB mean |diff| {rgb:.2f} levels"
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset(seed=step)
    finally:
        gl.close()
        env.close()


@needs_gl
def test_gl_is_registered_and_envs_take_it() -> None:
    assert "gl" in RENDERER_CHOICES and backend_class("gl").name == "gl"
    env = gym.make("pixelrig/CartPole-v0", renderer="gl")
    try:
        env.reset(seed=0)
        assert env.unwrapped.render_backend.name == "gl"
    finally:
        env.close()


@needs_gl
def test_deterministic_across_calls_and_envs() -> None:
    images = []
    for _ in range(2):
        env = gym.make("pixelrig/PandaPush-v0", renderer="gl")
        env.reset(seed=3)
        env.action_space.seed(3)
        u = env.unwrapped
        rig = CameraRig(u.default_cameras())
        rig.bind(u.render_backend, names=u.body_names)
        for _ in range(3):
            env.step(env.action_space.sample())
        first, second = rig.render(), rig.render()
        for key in first:
            np.testing.assert_array_equal(first[key], second[key], err_msg=f"two renders differ in {key}")
        images.append(first)
        env.close()
    for key in images[0]:
        np.testing.assert_array_equal(images[0][key], images[1][key], err_msg=f"two envs differ in {key}")


@needs_gl
def test_batch_equals_single_renders() -> None:
    from pixelrig.render.gl import GlBackend

    envs, backends, rigs = [], [], []
    for seed, env_id in enumerate(["pixelrig/PandaPush-v0", "pixelrig/HalfCheetah-v0", "pixelrig/PandaPush-v0"]):
        env = gym.make(env_id, renderer="tiny")
        env.reset(seed=seed)
        backend = GlBackend(env.unwrapped.client)
        rig = CameraRig(env.unwrapped.default_cameras())
        rig.bind(backend)
        envs.append(env)
        backends.append(backend)
        rigs.append(rig)
    try:
        jobs, singles = [], []
        for rig, backend in zip(rigs, backends, strict=True):
            requests = rig.requests()
            jobs.append((backend, requests))
            singles += [backend.render([r])[0] for r in requests]
        batched = [frame for frames in submit(jobs).collect() for frame in frames]
        assert len(batched) == len(singles)
        # A tile's place in the shared framebuffer changes window coordinates, hence the last float bit of some
        # interpolated depths and texture coordinates (a checker texel may flip at its edge); the issue asks labels
        # >= 99.9% equal to a lone render.
        for one, many in zip(singles, batched, strict=True):
            assert (one.seg == many.seg).mean() >= 0.999
            assert np.abs(one.rgba.astype(int) - many.rgba).mean() <= 1.0
            np.testing.assert_allclose(one.zbuffer, many.zbuffer, rtol=0, atol=1e-6)
    finally:
        for backend, env in zip(backends, envs, strict=True):
            backend.close()
            env.close()


@needs_gl
def test_frame_format_matches_tiny() -> None:
    env, gl, _, _ = _pair("pixelrig/CartPole-v0", {})
    try:
        view = p.computeViewMatrix([0, -2.6, 0.45], [0, 0, 0.35], [0, 0, 1])
        proj = p.computeProjectionMatrixFOV(55, 1.5, 0.05, 10.0)
        (tiny,) = env.unwrapped.render_backend.render([CameraRequest(48, 32, view, proj)])
        (frame,) = gl.render([CameraRequest(48, 32, view, proj)])
        for a, b in ((tiny.rgba, frame.rgba), (tiny.zbuffer, frame.zbuffer), (tiny.seg, frame.seg)):
            assert a.shape == b.shape and a.dtype == b.dtype
        assert gl.render([CameraRequest(48, 32, view, proj, segmentation=False)])[0].seg is None
        assert tiny.normal is None and frame.normal is None  # asked for none
        assert (frame.zbuffer <= 1.0).all() and (frame.zbuffer[frame.seg == -1] == 1.0).all()
    finally:
        gl.close()
        env.close()


@needs_gl
def test_color_change_shows_up() -> None:
    env, gl, tiny_rig, gl_rig = _pair("pixelrig/CartPole-v0", {})
    try:
        before = gl_rig.render()["front/rgb"]
        cartpole = env.unwrapped.cartpole
        p.changeVisualShape(cartpole, 0, rgbaColor=(1.0, 0.0, 0.0, 1.0), physicsClientId=env.unwrapped.client)
        after, tiny = gl_rig.render(), tiny_rig.render()
        assert np.abs(after["front/rgb"].astype(int) - before).sum() > 0
        ((_, labels, _, _, rgb),) = _agreement(tiny, after, tiny_rig.cameras)
        assert labels >= MIN_LABEL_AGREEMENT and rgb <= MAX_RGB_MEAN
    finally:
        gl.close()
        env.close()


@needs_gl
def test_world_rebuild_is_followed() -> None:
    env, gl, tiny_rig, gl_rig = _pair("pixelrig/PandaPush-v0", {})
    try:
        for seed in (1, 2):
            env.reset(seed=seed)  # resetSimulation and every body loaded again
            for name, labels, depth, p99, rgb in _agreement(tiny_rig.render(), gl_rig.render(), tiny_rig.cameras):
                assert labels >= MIN_LABEL_AGREEMENT, f"after reset, camera {name}: labels {labels:.4f}"
                assert depth <= MAX_DEPTH_MEDIAN_M and p99 <= MAX_DEPTH_P99_M and rgb <= MAX_RGB_MEAN
        p.removeBody(env.unwrapped.cube, physicsClientId=env.unwrapped.client)
        gone = gl_rig.render()
        assert not (gone["front/label"] == env.unwrapped.cube).any()
        assert (tiny_rig.render()["front/label"] == gone["front/label"]).mean() >= MIN_LABEL_AGREEMENT
    finally:
        gl.close()
        env.close()


@needs_gl
def test_analytic_box_under_camera() -> None:
    from pixelrig.render.gl import GlBackend

    client = p.connect(p.DIRECT)
    try:
        vis = p.createVisualShape(p.GEOM_BOX, halfExtents=[0.5, 0.5, 0.5], physicsClientId=client)
        box = p.createMultiBody(0, -1, vis, [0, 0, 0], physicsClientId=client)
        view = p.computeViewMatrix([0, 0, 3], [0, 0, 0], [0, 1, 0])
        proj = p.computeProjectionMatrixFOV(60, 1, 0.1, 10)
        with GlBackend(client) as gl:
            (frame,) = gl.render([CameraRequest(16, 16, view, proj)])
        z = float(frame.zbuffer[8, 8])
        assert 10 * 0.1 / (10 - (10 - 0.1) * z) == pytest.approx(2.5, abs=1e-4)  # the top face, 0.5 m up
        assert int(frame.seg[8, 8]) == box
        assert frame.seg[0, 0] == -1 and tuple(frame.rgba[0, 0]) == (255, 255, 255, 255)
    finally:
        p.disconnect(client)


@needs_gl
def test_closed_backend_refuses() -> None:
    from pixelrig.render.gl import GlBackend

    client = p.connect(p.DIRECT)
    try:
        with GlBackend(client) as gl:
            pass
        view = p.computeViewMatrix([0, 0, 3], [0, 0, 0], [0, 1, 0])
        proj = p.computeProjectionMatrixFOV(60, 1, 0.1, 10)
        with pytest.raises(RuntimeError, match="closed"):
            gl.render([CameraRequest(8, 8, view, proj, segmentation=False)])
        gl.close()  # idempotent
    finally:
        p.disconnect(client)


def test_missing_context_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    moderngl = pytest.importorskip("moderngl")

    def fail(*args: object, **kwargs: object) -> None:
        raise Exception("eglInitialize failed")

    monkeypatch.setattr(glc, "_ctx", None)
    monkeypatch.setattr(moderngl, "create_context", fail)
    with pytest.raises(RendererUnavailable, match=re.escape("Use renderer='tiny' (or PIXELRIG_RENDERER=tiny).")):
        glc.get_context()


def test_failed_probe_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real failure: libglvnd pointed at a vendor file that does not exist, so no EGL context can be made in the
    probe process; resolving 'gl' says what was tried and names the fix, and 'auto' falls back without gl."""
    from pixelrig.render import choice

    monkeypatch.setattr(choice, "_cache", {})
    monkeypatch.delenv("_PIXELRIG_PROBES", raising=False)
    monkeypatch.setenv("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent/egl_vendor.json")
    with pytest.raises(RendererUnavailable) as err:
        choice.resolve_renderer("gl")
    message = str(err.value)
    assert message.startswith("renderer 'gl' is unavailable: tried a moderngl OpenGL 4.3 EGL context"), message
    assert "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl_vendor.json" in message
    assert "use renderer='tiny' (PIXELRIG_RENDERER=tiny)" in message
    assert choice.resolve_renderer("auto") == "tiny"


@needs_gl
def test_egl_plugin_refused_beside_gl() -> None:
    import gc

    from pixelrig.render.egl import EglBackend

    gc.collect()  # an earlier test's unreferenced gl env, collected later, would release the context made here
    glc.get_context()
    client = p.connect(p.DIRECT)
    try:
        with pytest.raises(RuntimeError, match=re.escape("Close every gl environment first")):
            EglBackend(client).close()  # closed if it wrongly starts: the next tests need the plugin free
    finally:
        p.disconnect(client)


@needs_gl
def test_egl_plugin_can_start_after_gl_is_closed() -> None:
    from pixelrig.render.gl import GlBackend

    egl_or_skip()  # pybullet's EGL plugin must start (fails, not skips, under PIXELRIG_REQUIRE_EGL=1)
    client = p.connect(p.DIRECT)
    try:
        with GlBackend(client):
            assert glc.context_created()
        assert not glc.context_created()  # the last GlBackend closed: context released
    finally:
        p.disconnect(client)


def _rig_requests(env_ids: list[str]):
    """A tiny env per id (seeded, a few random steps), a GlBackend on each and their default rigs' jobs (the backend
    and its rig's requests)."""
    from pixelrig.render.gl import GlBackend

    envs, backends, jobs = [], [], []
    for seed, env_id in enumerate(env_ids):
        env = gym.make(env_id, renderer="tiny")
        env.reset(seed=seed)
        env.action_space.seed(seed)
        for _ in range(3):
            env.step(env.action_space.sample())
        backend = GlBackend(env.unwrapped.client)
        rig = CameraRig(env.unwrapped.default_cameras())
        rig.bind(backend)
        jobs.append((backend, rig.requests()))
        envs.append(env)
        backends.append(backend)
    return envs, backends, jobs


def _drawn(jobs) -> list:
    """Every job's frames, drawn together, in one list."""
    return [frame for frames in submit(jobs).collect() for frame in frames]


def _close(envs, backends) -> None:
    for backend, env in zip(backends, envs, strict=True):
        backend.close()
        env.close()


@needs_gl
def test_view_culling_changes_no_pixel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each camera draws only the instances whose bounding sphere meets its view volume: bit for bit the image of
    drawing them all, on every bundled env's default rig, and it does skip shapes (the wrist camera's view)."""
    from pixelrig.render.gl import pipeline as glr

    env_ids = sorted({env_id for env_id, kwargs in ENVS if not kwargs})
    envs, backends, jobs = _rig_requests(env_ids)
    drawn: list[int] = []
    commands = glr._commands

    def counting(*args):
        cmd, spans = commands(*args)
        drawn.append(len(cmd))
        return cmd, spans

    try:
        monkeypatch.setattr(glr, "_commands", counting)
        culled = _drawn(jobs)
        everything = np.zeros((6, 4))
        everything[:, 3] = 1.0  # planes every point is inside of
        frusta = glr._frusta
        monkeypatch.setattr(glr, "_frusta", lambda reqs: (np.broadcast_to(everything, (len(reqs), 6, 4)),
                                                          frusta(reqs)[1]))
        full = _drawn(jobs)
        assert drawn[0] < drawn[1], f"nothing was culled ({drawn})"
        owners = [backend.client for backend, requests in jobs for _ in requests]
        for client, a, b in zip(owners, culled, full, strict=True):
            where = f"client {client}"
            np.testing.assert_array_equal(a.rgba, b.rgba, err_msg=where)
            np.testing.assert_array_equal(a.zbuffer, b.zbuffer, err_msg=where)
            np.testing.assert_array_equal(a.seg, b.seg, err_msg=where)
    finally:
        _close(envs, backends)


@needs_gl
def test_submitted_batches_are_read_as_they_were_drawn() -> None:
    """GlBackend.submit_batch returns before the GL finishes; the frames collected later are the state at submission
    (the physics may step meanwhile), equal bit for bit to frames drawn at once; several batches may be pending."""
    from pixelrig.render.gl import GlBackend
    from pixelrig.render.gl import pipeline as glr

    envs, backends, jobs = _rig_requests(["pixelrig/PandaPush-v0", "pixelrig/HalfCheetah-v0"])
    try:
        first, second = jobs[:1], jobs[1:]
        expected = _drawn(first) + _drawn(second)
        pending = [GlBackend.submit_batch(first), GlBackend.submit_batch(second)]
        for env in envs:  # every pose changes before the frames are read
            for _ in range(5):
                env.step(env.action_space.sample())
        frames = [f for part in pending for frames in part.collect() for f in frames]
        for a, b in zip(expected, frames, strict=True):
            for field in ("rgba", "zbuffer", "seg", "normal"):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
        with pytest.raises(RuntimeError, match="already collected"):
            pending[0].collect()
        slots = len(glr.shared_pipeline().slots)
        for _ in range(5):  # a discarded batch gives its GL objects back
            GlBackend.submit_batch(first).discard()
        assert len(glr.shared_pipeline().slots) == slots
        with pytest.raises(ValueError, match="at least one request"):
            GlBackend.submit_batch([])
    finally:
        _close(envs, backends)


@needs_gl
def test_gl_context_is_made_on_the_egl_device_asked_for(tmp_path: Path) -> None:
    """``EGL_VISIBLE_DEVICES`` (what ``gpu=`` sets from a CUDA device) picks the gl context's EGL device, as it picks
    pybullet's EGL plugin's: the machine's first device draws; a device that does not exist is a RendererUnavailable
    naming it and the fix, in the probe and in the process (in subprocesses: the variable is process-wide)."""
    import subprocess
    import sys

    from pixelrig.render.egl_devices import list_egl_devices

    code = textwrap.dedent("""
        import gymnasium as gym
        import pixelrig
        from pixelrig.errors import RendererUnavailable
        from pixelrig.render.gl import context, gl_info
        print("device", context.device_index())
        try:
            print("ctx", gl_info()["renderer"])
        except RendererUnavailable as exc:
            print("ctx-refused", exc)
        try:
            gym.make("pixelrig/CartPole-v0", renderer="gl").close()
            print("env made")
        except RendererUnavailable as exc:
            print("env-refused", exc)
    """)
    devices = list_egl_devices()
    assert devices, "EGL lists no device here, yet gl works"
    results = {}
    for index in (0, len(devices) + 3):
        env = {**os.environ, "EGL_VISIBLE_DEVICES": str(index), "PIXELRIG_CACHE_DIR": str(tmp_path / str(index))}
        env.pop("_PIXELRIG_PROBES", None)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
        results[index] = out.stdout
    good, bad = results[0], results[len(devices) + 3]
    assert "device 0" in good and "ctx " in good and "env made" in good, good
    missing = len(devices) + 3
    assert f"ctx-refused renderer 'gl' is unavailable: moderngl could not create a headless EGL context with OpenGL " \
           f"4.3 on EGL device {missing} (EGL_VISIBLE_DEVICES={missing})" in bad, bad
    assert "Use renderer='tiny'" in bad and "env-refused renderer 'gl' is unavailable" in bad, bad
    assert f"EGL_VISIBLE_DEVICES={missing}" in bad.split("env-refused", 1)[1], bad


def test_view_volumes_are_remembered_within_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each camera's view volume is remembered per pose and lens; moving cameras fill the memory, which starts again
    when full, keeping every answer right (a batch larger than what is left once failed with a KeyError)."""
    from pixelrig.render.gl import pipeline as glr

    monkeypatch.setattr(glr, "_FRUSTA", {})
    monkeypatch.setattr(glr, "_FRUSTA_MAX", 8)
    proj = p.computeProjectionMatrixFOV(60, 1.0, 0.05, 4.0)
    requests = [CameraRequest(16, 16, p.computeViewMatrix([0.1 * i, -2, 1], [0, 0, 0], [0, 0, 1]), proj)
                for i in range(20)]
    expected = glr._view_volumes(requests)
    largest = 0
    for batch in (requests[:5], requests[3:9], requests, requests[::-1], requests[:2]):
        largest = max(largest, len(batch))
        planes, eyes = glr._frusta(batch)
        order = [requests.index(r) for r in batch]
        np.testing.assert_array_equal(planes, expected[0][order])
        np.testing.assert_array_equal(eyes, expected[1][order])
        assert len(glr._FRUSTA) <= max(8, largest)
