"""PixelObs's cameras as sensors: noise against its model, invalid readings, seeding apart from the env, period and
latency step for step against a reference drawn every step, only the cameras due drawn, snapshots mid-delay, and
nothing else changing with any of it on."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import pixelrig
from pixelrig import Camera, PixelObs
from pixelrig.cameras.noise import SensorNoise, edge_pixels, incidence_degrees
from pixelrig.envs.scenes import PrimitivesEnv

from .conftest import assert_trees_equal, physics_state
from .worlds import BuiltByFunctionEnv, plane

CART = "pixelrig/CartPole-v0"
DOWN = {"target": (0.0, 0.0, 0.0), "up": (0.0, 1.0, 0.0), "width": 128, "height": 128, "near": 0.05, "far": 5.0}
SIGMA = (0.001, 0.005)  # sigma = 1 mm + 5 mm/m^2 z^2: 2.25 mm at 0.5 m, 6 mm at 1 m, 21 mm at 2 m


def down_camera(name: str, height: float, **fields) -> Camera:
    return Camera(name, eye=(0.0, 0.0, height), modalities=("depth",), **DOWN, **fields)


def cart_camera(name: str, **fields) -> Camera:
    """A camera 1 m in front of CartPole's cart, 32x24: under :func:`actions` its image changes at every step."""
    return Camera(name, eye=(0.0, -1.0, 0.5), target=(0.0, 0.0, 0.4), fov=60.0, width=32, height=24, near=0.05,
                  far=10.0, modalities=("rgb", "depth"), **fields)


def actions(n: int) -> list[np.ndarray]:
    """Full force, switching direction every five steps."""
    return [np.array([1.0 if (t // 5) % 2 == 0 else -1.0], np.float32) for t in range(n)]


# ---- noise ---------------------------------------------------------------------------------------------------------


def test_depth_noise_over_a_flat_plane_matches_its_model() -> None:
    """A plane 0.5, 1 and 2 m under three cameras (128x128 pixels each): the noisy depth's error has mean ~0 and a
    standard deviation within 10% of ``a + b z**2``. Measured (seed 0): 2.246, 5.974, 21.07 mm against 2.25, 6,
    21 mm (ratios 0.998, 0.996, 1.003); means 0.05, 0.09, -0.01 mm."""
    heights = (0.5, 1.0, 2.0)
    cams = [down_camera(f"h{i}", h, noise=SensorNoise(depth_sigma=SIGMA)) for i, h in enumerate(heights)]
    env = PixelObs(BuiltByFunctionEnv(plane, renderer="tiny"), cams=cams, pixels_only=True)
    try:
        obs, _ = env.reset(seed=0)
        exact = env.render_rig()
        for i, h in enumerate(heights):
            np.testing.assert_allclose(exact[f"h{i}/depth"], h, atol=1e-5)
            err = obs[f"h{i}/depth"].astype(np.float64) - exact[f"h{i}/depth"]
            model = SIGMA[0] + SIGMA[1] * h * h
            assert abs(err.std() / model - 1.0) <= 0.10, f"{h} m: std {err.std() * 1000:.3f} mm, model {model * 1000}"
            assert abs(err.mean()) <= 0.05 * model
    finally:
        env.close()


@pytest.mark.parametrize("invalid", [0.0, "nan"])
def test_readings_outside_the_range_read_invalid(invalid) -> None:
    """``depth_range=(0.8, 1.5)``: the plane at 0.5 and 2 m reads invalid everywhere, at 1 m nowhere; the sky (far is
    out of range) reads invalid; the observation space holds invalid readings (from 0, or a NanBox)."""
    noise = SensorNoise(depth_range=(0.8, 1.5), invalid=invalid)
    cams = [down_camera(f"h{i}", h, noise=noise) for i, h in enumerate((0.5, 1.0, 2.0))]
    cams.append(Camera("sky", eye=(0.0, 0.0, 1.0), target=(0.0, 1.0, 1.0), width=32, height=24, near=0.05, far=5.0,
                       modalities=("depth", "label"), noise=noise))
    env = PixelObs(BuiltByFunctionEnv(plane, renderer="tiny"), cams=cams, pixels_only=True)
    try:
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        bad = np.isnan if invalid == "nan" else (lambda x: x == 0.0)
        assert bad(obs["h0/depth"]).all() and bad(obs["h2/depth"]).all()
        assert not bad(obs["h1/depth"]).any()
        sky = obs["sky/label"][..., 0] == -1
        assert 0.2 < sky.mean() < 0.8 and bad(obs["sky/depth"][..., 0][sky]).all()
        exact = env.render_rig()["sky/depth"][..., 0]
        assert not bad(obs["sky/depth"][..., 0][(exact >= 0.85) & (exact <= 1.45)]).any()
        assert bad(obs["sky/depth"][..., 0][~sky & (exact > 1.5)]).all()
    finally:
        env.close()


def test_quantisation_rgb_noise_and_jpeg() -> None:
    """Depth lands on multiples of ``depth_step``; RGB read noise has its standard deviation, shot noise's variance
    grows with the level, JPEG changes the image but keeps it close."""
    cams = [down_camera("q", 1.0, noise=SensorNoise(depth_sigma=(0.003, 0.0), depth_step=0.004)),
            Camera("g", eye=(0.0, 0.0, 1.0), modalities=("rgb",), noise=SensorNoise(rgb_sigma=4.0), **DOWN),
            Camera("s", eye=(0.0, 0.0, 1.0), modalities=("rgb",), noise=SensorNoise(rgb_shot=0.5), **DOWN),
            Camera("j", eye=(0.0, 0.0, 1.0), modalities=("rgb",), noise=SensorNoise(jpeg_quality=30), **DOWN)]
    env = PixelObs(PrimitivesEnv(renderer="tiny"), cams=cams, pixels_only=True)
    try:
        obs, _ = env.reset(seed=0)
        exact = env.render_rig()
        shots = [obs["s/rgb"]] + [env.step(np.zeros(1, np.float32))[0]["s/rgb"] for _ in range(7)]  # a still scene
        steps = obs["q/depth"].astype(np.float64) / 0.004
        assert np.abs(steps - np.rint(steps)).max() < 1e-3 and len(np.unique(obs["q/depth"])) > 2
        level = exact["g/rgb"].astype(np.float64)
        inside = (level > 25) & (level < 230)  # away from clipping at 0 and 255
        err = obs["g/rgb"].astype(np.float64) - level
        assert abs(err[inside].std() / 4.0 - 1.0) <= 0.10
        shot = np.stack(shots).astype(np.float64) - exact["s/rgb"]
        for lo, hi in ((40, 90), (150, 230)):
            sel = (level >= lo) & (level < hi)
            variance = shot[:, sel].var()
            assert abs(variance / (0.5 * level[sel].mean()) - 1.0) <= 0.10, (lo, hi, variance)
        jpeg = obs["j/rgb"].astype(np.float64) - exact["j/rgb"]
        assert 0.0 < np.abs(jpeg).mean() < 6.0
    finally:
        env.close()


def test_dropouts_at_depth_edges_and_grazing_angles() -> None:
    """Half the edge pixels read invalid with ``edge_dropout=0.5``, half the grazing ones with
    ``grazing_dropout=0.5``; no other pixel does."""
    oblique = {"eye": (1.6, -1.6, 1.3), "target": (0.0, 0.0, 0.2), "fov": 50.0, "width": 160, "height": 120,
               "near": 0.1, "far": 10.0, "modalities": ("depth",)}
    low = {**oblique, "eye": (2.5, -2.5, 0.35), "target": (0.0, 0.0, 0.1)}
    cams = [Camera("e", noise=SensorNoise(edge_dropout=0.5, edge_threshold=0.05), **oblique),
            Camera("g", noise=SensorNoise(grazing_dropout=0.5, grazing_angle=80.0), **low)]
    env = PixelObs(PrimitivesEnv(renderer="tiny"), cams=cams, pixels_only=True)
    try:
        obs, _ = env.reset(seed=0)
        exact = env.render_rig()
        z = exact["e/depth"][..., 0]
        edge = edge_pixels(z, z < 10.0, 0.05)
        dropped = obs["e/depth"][..., 0] == 0.0
        assert edge.sum() > 300
        assert abs(dropped[edge].mean() - 0.5) <= 0.08 and not dropped[~edge].any()
        zg = exact["g/depth"][..., 0]
        grazing = (zg < 10.0) & (incidence_degrees(zg, env.rig.rays(1)) > 80.0)
        dropped = obs["g/depth"][..., 0] == 0.0
        assert grazing.sum() > 300
        assert abs(dropped[grazing].mean() - 0.5) <= 0.08 and not dropped[~grazing].any()
    finally:
        env.close()


def test_same_seed_same_noise_and_the_env_never_sees_it() -> None:
    """Two envs reset with one seed show the same noisy images step for step; another seed, other noise; a reset
    without a seed goes on with the stream. Physics, the env's RNG and the state observation are bitwise those of
    an env without cameras, and a plain camera's images are those of a rig without the noisy one."""
    noise = SensorNoise(rgb_sigma=3.0, depth_sigma=(0.002, 0.01), edge_dropout=0.3)
    plain = cart_camera("plain")
    noisy = [plain, cart_camera("n", noise=noise, period=2, latency=1)]
    a = PixelObs(gym.make(CART, renderer="tiny"), cams=noisy)
    b = PixelObs(gym.make(CART, renderer="tiny"), cams=noisy)
    c = PixelObs(gym.make(CART, renderer="tiny"), cams=[plain])
    bare = gym.make(CART, renderer="tiny")
    try:
        oa, _ = a.reset(seed=7)
        ob, _ = b.reset(seed=7)
        oc, _ = c.reset(seed=7)
        bare_obs, _ = bare.reset(seed=7)
        other = PixelObs(gym.make(CART, renderer="tiny"), cams=noisy)
        assert not np.array_equal(other.reset(seed=8)[0]["n/rgb"], oa["n/rgb"])
        other.close()
        for t, action in enumerate(actions(30)):
            assert_trees_equal(oa, ob, f"step {t}")
            assert_trees_equal(oa["plain/rgb"], oc["plain/rgb"]) and assert_trees_equal(oa["state"], bare_obs)
            assert_trees_equal(physics_state(a.unwrapped.client), physics_state(bare.unwrapped.client))
            ra, rb, rc, rbare = a.step(action), b.step(action), c.step(action), bare.step(action)
            oa, ob, oc, bare_obs = ra[0], rb[0], rc[0], rbare[0]
            assert_trees_equal(ra[1:], rbare[1:], f"step {t}")
            if ra[2] or ra[3] or t == 12:
                oa, ob, oc = a.reset()[0], b.reset()[0], c.reset()[0]  # no seed: the noise stream goes on
                bare_obs = bare.reset()[0]
        assert a.unwrapped.np_random.bit_generator.state == bare.unwrapped.np_random.bit_generator.state
        assert not np.array_equal(oa["n/depth"], c.render_rig()["plain/depth"])  # noise was on
    finally:
        for env in (a, b, c, bare):
            env.close()


# ---- period and latency --------------------------------------------------------------------------------------------


SENSORS = [cart_camera("p3", period=3), cart_camera("l2", latency=2), cart_camera("p2l3", period=2, latency=3),
           cart_camera("plain")]


def test_period_and_latency_match_a_reference_drawn_every_step() -> None:
    """Camera (period k, latency d) at step t shows what a camera drawn every step showed at step
    ``k * floor(max(t - d, 0) / k)`` (steps counted from each reset), bit for bit, through two resets."""
    timed = PixelObs(gym.make(CART, renderer="tiny"), cams=SENSORS)
    every = PixelObs(gym.make(CART, renderer="tiny"), cams=[dataclasses.replace(c, period=1, latency=0)
                                                            for c in SENSORS])
    try:
        for episode, length in enumerate((11, 8)):
            shown = [timed.reset(seed=episode)[0]]
            drawn = [every.reset(seed=episode)[0]]
            for action in actions(length):
                shown.append(timed.step(action)[0])
                drawn.append(every.step(action)[0])
            for t, obs in enumerate(shown):
                for cam in SENSORS:
                    source = cam.period * (max(t - cam.latency, 0) // cam.period)
                    for mod in ("rgb", "depth"):
                        key = f"{cam.name}/{mod}"
                        assert_trees_equal(obs[key], drawn[source][key], f"episode {episode} step {t} {key}")
            changed = sum(not np.array_equal(drawn[t]["plain/rgb"], drawn[t - 1]["plain/rgb"])
                          for t in range(1, len(drawn)))
            assert changed >= len(drawn) - 2  # the cart moves in the image at (almost) every step
    finally:
        timed.close()
        every.close()


def test_only_the_cameras_due_are_drawn() -> None:
    """Period 3: the camera is drawn at the reset and every third step, never in between (the render cost falls
    with the period; benchmarks/sensor_period.py measures it)."""
    env = PixelObs(gym.make(CART, renderer="tiny"), cams=[cart_camera("p3", period=3), cart_camera("plain")])
    try:
        env.reset(seed=0)
        backend = env.render_backend
        drawn: list[int] = []
        real = backend.render

        def counting(requests):
            drawn.append(len(requests))
            return real(requests)

        backend.render = counting  # instrumentation: the real renderer still runs
        for action in actions(9):
            env.step(action)
        assert drawn == [1, 1, 2, 1, 1, 2, 1, 1, 2]
    finally:
        env.close()


def test_a_snapshot_mid_delay_restores_the_pictures_and_the_noise_stream() -> None:
    """Snapshot in the middle of a period and a latency, with noise: a fresh env restored from the snapshot's bytes
    shows what the original shows for the same actions, bit for bit (held pictures, the clock and the noise
    generator are in the snapshot)."""
    cams = [cart_camera("n", period=3, latency=2, noise=SensorNoise(rgb_sigma=5.0, depth_sigma=(0.002, 0.01))),
            cart_camera("q", noise=SensorNoise(rgb_shot=0.3))]

    def make() -> PixelObs:
        return PixelObs(gym.make(CART, renderer="tiny"), cams=cams)

    env, twin = make(), make()
    try:
        env.reset(seed=3)
        for action in actions(4):
            env.step(action)
        data = pixelrig.snapshot(env).to_bytes()
        later = [env.step(action)[0] for action in actions(8)]
        pixelrig.restore(twin, pixelrig.Snapshot.from_bytes(data))
        again = [twin.step(action)[0] for action in actions(8)]
        for t, (x, y) in enumerate(zip(later, again, strict=True)):
            assert_trees_equal(x, y, f"step {t} after the snapshot")
        pixelrig.restore(env, pixelrig.Snapshot.from_bytes(data))  # and into the env it came from
        assert_trees_equal(env.step(actions(1)[0])[0], later[0])
    finally:
        env.close()
        twin.close()


def test_sensor_features_leave_the_simulation_and_other_cameras_alone() -> None:
    """Distortion, stereo, noise, period and latency on one camera: a plain camera beside it, the state, rewards,
    physics and the env's RNG are bitwise those of a rig with the plain camera alone."""
    extra = Camera("x", eye=(0.0, -1.6, 0.45), target=(0.0, 0.0, 0.35), fov=60.0, width=64, height=48, near=0.05,
                   far=10.0, distortion=(-0.1, 0.01, 0.0, 0.0, 0.0), period=2, latency=1,
                   noise=SensorNoise(rgb_sigma=2.0, depth_sigma=(0.001, 0.01), depth_range=(0.1, 3.0)),
                   modalities=("rgb", "depth", "depth_stereo", "label", "points"))
    with_extra = PixelObs(gym.make(CART, renderer="tiny"), cams=[cart_camera("plain"), extra])
    alone = PixelObs(gym.make(CART, renderer="tiny"), cams=[cart_camera("plain")])
    try:
        a, b = with_extra.reset(seed=2)[0], alone.reset(seed=2)[0]
        for t, action in enumerate(actions(20)):
            for key in b:
                assert_trees_equal(a[key], b[key], f"step {t} {key}")
            assert_trees_equal(physics_state(with_extra.unwrapped.client), physics_state(alone.unwrapped.client))
            ra, rb = with_extra.step(action), alone.step(action)
            a, b = ra[0], rb[0]
            assert_trees_equal(ra[1:], rb[1:])
            assert with_extra.observation_space.contains(a)
        assert with_extra.unwrapped.np_random.bit_generator.state == alone.unwrapped.np_random.bit_generator.state
    finally:
        with_extra.close()
        alone.close()
