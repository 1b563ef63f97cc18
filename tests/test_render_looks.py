"""Looks in the renderers: each Lighting parameter changes the image the way TinyRenderer's model says, on tiny and
gl; shadows fall where the light puts them; gl matches tiny under every look on every bundled env; textures set at
run time show on both; egl draws the light's direction and refuses the rest; bad values change nothing."""

from __future__ import annotations

import math
import re

import numpy as np
import pybullet as p
import pytest
from scipy.ndimage import distance_transform_edt

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig.render import textures
from pixelrig.render.backends import CameraRequest
from pixelrig.render.lighting import Lighting
from pixelrig.render.procedural import FAMILIES, procedural_image
from pixelrig.render.registry import backend_class
from pixelrig.tools.bench.fidelity import RENDERER_ENVS, looks_fidelity

from .conftest import egl_or_skip, gl_or_skip

LOOKS = {
    "default": Lighting(),
    "bright": Lighting(ambient=0.85, diffuse=0.5, specular=0.15),
    "dim tinted": Lighting(ambient=0.3, color=(1.0, 0.55, 0.3)),
    "low sun": Lighting(direction=(0.8, -0.5, 0.35)),
    "shadows": Lighting(shadows=True),
    "low sun shadows": Lighting(direction=(0.6, -0.4, 0.7), shadows=True),
}
"""Looks gl is held to tiny under (every field away from its default in at least one)."""

# The bounds for gl against tiny under any look: labels and depth as without looks (tests/test_render_gl.py),
# RGB mean <= 8 levels, and shadowed pixels (pixelrig.tools.bench.fidelity.shadowed: more than 3 levels darker than the
# same renderer's image without shadows) agreeing >= 90% (of the pixels either renderer shadows, both shadow).
# Measured worst: RGB 1.04 levels (CartPole, textured), shadowed pixels 99.7%.
MIN_LABEL_AGREEMENT = 0.99
MAX_DEPTH_MEDIAN_M = 0.001
MAX_RGB_MEAN = 8.0
MIN_SHADOW_AGREEMENT = 0.90

TABLE_TOP = 0.1
CUBE = (0.0, 0.0, TABLE_TOP + 0.15)  # a 0.2 m cube standing 0.05 m above the table
CUBE_HALF = 0.1


@pytest.fixture(autouse=True)
def _release_gl():
    """Free the GL context after each test: pybullet's EGL plugin (other tests' egl envs) cannot start beside it."""
    yield
    from pixelrig.render.gl import release

    release()


@pytest.fixture(params=["tiny", "gl"])
def scene(request: pytest.FixtureRequest):
    """A white table (a wide box) and a white cube above it, near the origin (TinyRenderer's shadow camera looks
    there), drawn by the parametrised backend; yields (backend, request, client)."""
    if request.param == "gl":
        gl_or_skip()
    client = p.connect(p.DIRECT)
    table = p.createVisualShape(p.GEOM_BOX, halfExtents=[0.6, 0.6, 0.05], physicsClientId=client)
    p.createMultiBody(0, -1, table, [0, 0, TABLE_TOP - 0.05], physicsClientId=client)
    cube = p.createVisualShape(p.GEOM_BOX, halfExtents=[CUBE_HALF] * 3, physicsClientId=client)
    p.createMultiBody(0, -1, cube, list(CUBE), physicsClientId=client)
    view = p.computeViewMatrix([0.0, -0.9, 1.6], [0.0, 0.0, TABLE_TOP], [0, 0, 1])
    proj = p.computeProjectionMatrixFOV(60, 1.0, 0.05, 5.0)
    backend = backend_class(request.param)(client)
    try:
        yield backend, CameraRequest(128, 128, tuple(view), tuple(proj)), client
    finally:
        backend.close()
        p.disconnect(client)


def _draw(backend, request: CameraRequest, lighting: Lighting):
    backend.set_lighting(lighting)
    (frame,) = backend.render([request])
    return frame.rgba[..., :3].astype(np.int16), frame.seg


def _pixels(request: CameraRequest, points: np.ndarray) -> np.ndarray:
    """(N, 2) (row, col) of world points in the request's image (TinyRenderer's sampling: pixel (col, row) sees
    the image position (col, row + 1) of OpenGL's window, rows from the top)."""
    view = np.asarray(request.view).reshape(4, 4).T
    proj = np.asarray(request.projection).reshape(4, 4).T
    clip = (proj @ view @ np.c_[points, np.ones(len(points))].T).T
    ndc = clip[:, :2] / clip[:, 3:]
    col = (ndc[:, 0] + 1) / 2 * request.width
    row = (1 - ndc[:, 1]) / 2 * request.height - 1
    return np.c_[np.round(row), np.round(col)].astype(int)


def test_more_ambient_and_diffuse_brighten_and_specular_adds(scene) -> None:
    backend, request, _ = scene
    base, seg = _draw(backend, request, Lighting())
    drawn = seg >= 0
    for lighting in (Lighting(ambient=0.9), Lighting(diffuse=0.6), Lighting(specular=0.4)):
        brighter, _ = _draw(backend, request, lighting)
        assert (brighter[drawn] >= base[drawn]).all(), lighting
        assert brighter[drawn].mean() > base[drawn].mean() + 1.0, lighting
    darker, _ = _draw(backend, request, Lighting(ambient=0.2, diffuse=0.1))
    assert darker[drawn].mean() < base[drawn].mean() - 40
    assert (darker[~drawn] == 255).all()  # the background is not lit


def test_the_light_color_tints_only_the_direct_term(scene) -> None:
    backend, request, _ = scene
    base, seg = _draw(backend, request, Lighting())
    tinted, _ = _draw(backend, request, Lighting(color=(1.0, 0.3, 0.3)))
    drawn = seg >= 0
    np.testing.assert_array_equal(tinted[drawn][:, 0], base[drawn][:, 0])  # red light at full strength
    direct = drawn & (base[..., 1] > math.floor(0.6 * 255))  # lit by more than the ambient term
    assert direct.mean() > 0.2
    assert (tinted[direct][:, 1:] < base[direct][:, 1:]).all()  # green and blue lose most of the direct term
    np.testing.assert_array_equal(tinted[drawn & ~direct], base[drawn & ~direct])  # faces turned away keep theirs
    ambient_only, _ = _draw(backend, request, Lighting(color=(0.0, 0.0, 0.0)))
    np.testing.assert_array_equal(ambient_only[drawn], np.floor(0.6 * 255) * np.ones_like(ambient_only[drawn]))


def test_the_lit_face_turns_with_the_light(scene) -> None:
    backend, request, client = scene
    top = _pixels(request, np.array([[0.0, 0.0, CUBE[2] + CUBE_HALF]]))[0]
    front = _pixels(request, np.array([[0.0, -CUBE_HALF, CUBE[2]]]))[0]  # the face towards the camera (-y)
    above, _ = _draw(backend, request, Lighting(direction=(0.0, 0.05, 1.0)))
    ahead, _ = _draw(backend, request, Lighting(direction=(0.0, -1.0, 0.05)))
    assert above[tuple(top)].mean() > ahead[tuple(top)].mean() + 40
    assert ahead[tuple(front)].mean() > above[tuple(front)].mean() + 40


@pytest.mark.parametrize("direction", [(-0.5, 0.3, 1.0), (0.7, 0.2, 0.9), (0.2, 0.6, 1.0)])
def test_the_cube_casts_its_shadow_where_the_light_says(scene, direction) -> None:
    """The cube's shadow on the table is the cube's top square pushed along -direction onto the table: inside it
    (shrunk by 4 cm for the shadow map's 2 cm texels) pixels darken by the shadow's share of the direct term; away
    from it (grown by 6 cm) nothing changes."""
    backend, request, _ = scene
    lit = Lighting(direction=direction)
    plain, seg = _draw(backend, request, lit)
    shaded, _ = _draw(backend, request, Lighting(direction=direction, shadows=True))
    d = np.asarray(direction) / np.linalg.norm(direction)
    drop = CUBE[2] - CUBE_HALF - TABLE_TOP  # from the cube's bottom; its top adds its height
    xs, ys = np.meshgrid(np.linspace(-0.6, 0.6, 121), np.linspace(-0.6, 0.6, 121))
    floor = np.c_[xs.ravel(), ys.ravel(), np.full(xs.size, TABLE_TOP)]
    # a table point is shadowed when its ray towards the light passes through the cube (slab test)
    t_lo, t_hi = np.zeros(len(floor)), np.full(len(floor), np.inf)
    for axis in range(3):
        lo, hi = CUBE[axis] - CUBE_HALF, CUBE[axis] + CUBE_HALF
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = (lo - floor[:, axis]) / d[axis], (hi - floor[:, axis]) / d[axis]
        t_lo, t_hi = np.maximum(t_lo, np.minimum(a, b)), np.minimum(t_hi, np.maximum(a, b))
    inside = (t_lo <= t_hi).reshape(xs.shape)
    assert drop > 0 and inside.sum() > 50
    step = 1.2 / 120  # metres between grid points
    depth_in = distance_transform_edt(inside).ravel() * step  # how far inside the shadow
    depth_out = distance_transform_edt(~inside).ravel() * step  # how far outside it
    rows, cols = _pixels(request, floor).T
    ok = (rows >= 0) & (rows < request.height) & (cols >= 0) & (cols < request.width)
    table = seg[rows.clip(0, request.height - 1), cols.clip(0, request.width - 1)] == 0
    core = ok & table & (depth_in > 0.04)
    away = ok & table & (depth_out > 0.06)
    assert core.sum() > 20 and away.sum() > 200
    rows, cols = rows.clip(0, request.height - 1), cols.clip(0, request.width - 1)
    darkening = (plain - shaded)[rows, cols].max(axis=-1)
    expected = 0.2 * 0.35 * max(d[2], 0) * 255  # the shadow's share of the table's diffuse term
    assert np.median(darkening[core]) >= expected - 3, (np.median(darkening[core]), expected)
    assert (darkening[core] > 3).mean() >= 0.9
    assert (darkening[away] <= 1).mean() >= 0.98  # the rest of the table (TinyRenderer's stripes aside)


@pytest.mark.parametrize("env_id", RENDERER_ENVS)
def test_gl_matches_tiny_under_every_look(env_id: str) -> None:
    gl_or_skip()
    from pixelrig.envs.randomization import Randomization

    rows = looks_fidelity(env_id, LOOKS, steps=2)
    rows += looks_fidelity(env_id, {"textured": Lighting(shadows=True)}, steps=2,
                           randomize=Randomization(textures={"*": "procedural"}, distractors=3))
    for r in rows:
        where = f"{env_id} under {r['look']!r}"
        assert r["label"] >= MIN_LABEL_AGREEMENT, f"{where}: labels agree on {r['label']:.4f}"
        assert r["depth"] <= MAX_DEPTH_MEDIAN_M, f"{where}: depth median |diff| {r['depth'] * 1000:.3f} mm"
        assert r["rgb"] <= MAX_RGB_MEAN, f"{where}: RGB mean |diff| {r['rgb']:.2f} levels"
        assert r["shadow_agreement"] >= MIN_SHADOW_AGREEMENT, f"{where}: shadowed pixels agree on " \
                                                              f"{r['shadow_agreement']:.3f}"
        if "shadows" in r["look"] or r["look"] == "textured":
            assert r["shadowed_px"] > 500, f"{where}: only {r['shadowed_px']} pixels shadowed"


def test_tiny_takes_every_light_parameter_at_every_call(scene) -> None:
    """pybullet keeps the last light parameters per client: a backend passing fewer would draw a later default
    camera with an earlier look's shadows."""
    backend, request, _ = scene
    first, _ = _draw(backend, request, Lighting())
    _draw(backend, request, Lighting(direction=(0.3, 0.2, 1.0), color=(1, 0, 0), ambient=0.2, shadows=True))
    again, _ = _draw(backend, request, Lighting())
    np.testing.assert_array_equal(first, again)


def test_textures_set_at_run_time_show_on_tiny_and_gl() -> None:
    gl_or_skip()
    from pixelrig.render.gl import GlBackend

    client = p.connect(p.DIRECT)
    try:
        vis = p.createVisualShape(p.GEOM_BOX, halfExtents=[0.3, 0.3, 0.3], physicsClientId=client)
        box = p.createMultiBody(0, -1, vis, [0, 0, 0], physicsClientId=client)
        view = p.computeViewMatrix([0.9, -1.1, 1.0], [0, 0, 0], [0, 0, 1])
        request = CameraRequest(96, 96, tuple(view), tuple(p.computeProjectionMatrixFOV(50, 1, 0.1, 5)))
        tiny, gl = backend_class("tiny")(client), GlBackend(client)
        plain = tiny.render([request])[0].rgba
        image = procedural_image("checkers", 7, (16, 24))
        textures.set_texture(client, box, -1, textures.texture_image(image))
        a, b = tiny.render([request])[0].rgba, gl.render([request])[0].rgba
        assert np.abs(a.astype(int) - plain).mean() > 10  # the checkers show
        assert np.abs(a.astype(int) - b).mean() < 1.0  # and gl draws them where tiny does
        assert textures.worn(client)[1][(box, -1)].digest == textures.texture_image(image).digest
        gl.close()
        tiny.close()
    finally:
        p.disconnect(client)
        textures.forget_client(client)


def test_procedural_images_are_seeded_and_distinct() -> None:
    for family in FAMILIES:
        a, b = procedural_image(family, 3, (20, 30)), procedural_image(family, 3, (20, 30))
        assert a.shape == (20, 30, 3) and a.dtype == np.uint8
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, procedural_image(family, 4, (20, 30)))
        assert a.std() > 5, family
    with pytest.raises(ValueError, match=re.escape("procedural family 'wood' is not one of")):
        procedural_image("wood", 0)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"ambient": -0.1}, "Lighting: ambient=-0.1 must be a finite number >= 0 (TinyRenderer's default: 0.6)"),
    ({"diffuse": math.inf}, "Lighting: diffuse=inf must be a finite number >= 0"),
    ({"direction": (0, 0, 0)}, "Lighting: direction=(0, 0, 0) is zero: give the direction towards the light"),
    ({"color": (1, -1, 1)}, "Lighting: color=(1, -1, 1) must be 3 numbers >= 0.0"),
    ({"direction": (0, 0, 1), "shadows": True}, "Lighting: shadows need a light that is not vertical"),
    ({"shadows": 1}, "Lighting: shadows=1 must be True or False"),
])
def test_bad_lighting_names_the_value_and_the_fix(kwargs, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Lighting(**kwargs)


def test_a_refused_lighting_changes_nothing(scene) -> None:
    backend, request, _ = scene
    with pytest.raises(ValueError, match=re.escape("set_lighting needs a pixelrig.Lighting")):
        backend.set_lighting({"ambient": 0.9})
    assert backend.lighting == Lighting()


def test_egl_draws_the_direction_and_refuses_the_rest_at_construction() -> None:
    egl_or_skip()
    import gymnasium as gym

    for lighting in (Lighting(shadows=True), Lighting(color=(1, 0, 0)), Lighting(ambient=0.9)):
        with pytest.raises(ValueError, match=re.escape("renderer 'egl' (pybullet's EGL plugin) draws the light's "
                                                       "direction only, not its")) as err:
            gym.make("pixelrig/CartPole-v0", renderer="egl", lighting=lighting)
        assert "renderer='tiny' or renderer='gl'" in str(err.value)
    from pixelrig.envs.randomization import Randomization

    with pytest.raises(ValueError, match=re.escape("Randomization(light_...=, shadows=) needs renderer='tiny'")):
        gym.make("pixelrig/CartPole-v0", renderer="egl", randomize=Randomization(shadows=0.5))
    with pytest.raises(ValueError, match=re.escape("renderer 'egl' (pybullet's EGL plugin) does not draw textures set "
                                                   "at run time: Randomization(textures=...) needs renderer='tiny' or "
                                                   "renderer='gl'")):
        gym.make("pixelrig/CartPole-v0", renderer="egl", randomize=Randomization(textures={"ground": "noise"}))
    env = gym.make("pixelrig/CartPole-v0", renderer="egl")
    try:
        env.reset(seed=0)
        from pixelrig.cameras.rig import CameraRig

        rig = CameraRig(env.unwrapped.default_cameras())
        rig.bind(env.unwrapped.render_backend)
        default = rig.render()["front/rgb"]
        env.unwrapped.set_lighting(Lighting(direction=(1.0, -1.0, 0.2)))
        turned = rig.render()["front/rgb"]
        assert np.abs(default.astype(int) - turned).mean() > 2  # the direction is drawn
        with pytest.raises(ValueError, match="draws the light's direction only"):
            env.unwrapped.set_lighting(Lighting(shadows=True))
        with pytest.raises(ValueError, match=re.escape("set_texture needs renderer='tiny' or renderer='gl'")):
            env.unwrapped.set_texture("ground", np.zeros((4, 4, 3), np.uint8))
        assert env.unwrapped.current_lighting == Lighting(direction=(1.0, -1.0, 0.2))  # the refusal changed nothing
    finally:
        env.close()
