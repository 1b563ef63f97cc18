"""BrowserView: real HTTP and WebSockets on loopback, a real headless Chromium (Debian's /usr/bin/chromium driven by
Playwright), and the proof that serving a page changes nothing in the simulation.

The Chromium tests skip with the reason when Chromium or Playwright is missing, except with
PIXELRIG_REQUIRE_BROWSER=1 (CI), where they fail instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import http.client
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import gymnasium as gym
import numpy as np
import pytest

from pixelrig import BrowserView, Camera, PixelObs, make_vec, restore, snapshot
from pixelrig.display.mosaic import tile_rig
from pixelrig.display.web import FrameLayout, Slot, compose, grid_columns
from pixelrig.errors import PortInUseError
from pixelrig.wrappers.browser_view import VectorBrowserView

from .colorings import mosaic_panes, view_panes
from .conftest import assert_trees_equal, physics_state

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REQUIRE_BROWSER = os.environ.get("PIXELRIG_REQUIRE_BROWSER") == "1"

if importlib.util.find_spec("aiohttp") is None:  # the `viewer` extra (the `test` extra includes it)
    if REQUIRE_BROWSER:
        raise RuntimeError("PIXELRIG_REQUIRE_BROWSER=1 but aiohttp is missing: pip install 'pixelrig[viewer]'")
    pytest.skip("aiohttp is missing: pip install 'pixelrig[viewer]'", allow_module_level=True)

import aiohttp  # noqa: E402

# ---- helpers ---------------------------------------------------------------------------------------------------------

def small_rig(env: gym.Env, size: int = 32) -> list[Camera]:
    """The env's default cameras at ``size`` x ``size`` pixels."""
    return [dataclasses.replace(Camera.from_dict(c), width=size, height=size) for c in env.unwrapped.default_cameras()]


def panda(size: int | None = None) -> gym.Env:
    """PandaPush under PixelObs: the default rig (84 x 84), or every camera at ``size``."""
    env = gym.make("pixelrig/PandaPush-v0")
    return PixelObs(env, cams=small_rig(env, size) if size else None)


def expected(view: BrowserView, obs: dict, mode: str = "rgb") -> np.ndarray:
    """The picture the page should show for ``obs`` (composed as the server does)."""
    layout = view.page_frames.layout
    return compose({s.key: np.asarray(obs[s.key])[None] for s in layout.slots}, layout, mode)


def decode(jpeg: bytes) -> np.ndarray:
    """RGB pixels of a JPEG or PNG."""
    img = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert img is not None, "not an image"
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def assert_looks_like(shot: np.ndarray, want: np.ndarray, what: str) -> None:
    """The same picture up to JPEG loss: same shape, mean difference under 6 grey levels, structure correlated,
    and not blank."""
    assert shot.shape == want.shape, f"{what}: shape {shot.shape} != {want.shape}"
    diff = np.abs(shot.astype(np.float64) - want).mean()
    corr = np.corrcoef(shot.astype(np.float64).ravel(), want.astype(np.float64).ravel())[0, 1]
    assert diff < 6.0 and corr > 0.97, f"{what}: mean difference {diff:.2f}, correlation {corr:.3f}"
    assert want.std() > 20, f"{what}: the expected picture is blank"


def ws_url(url: str) -> str:
    """The page's WebSocket address for its URL (keeping the token)."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(("ws", parts.netloc, "/ws", parts.query, ""))


def get(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    """Status, headers and body of one request (errors included), with a raw path (no client normalisation)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        conn.request(method, path, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def step_until(env: gym.Env, cond: Callable[[], bool], timeout: float = 20.0, seed: int = 0) -> bool:
    """Step ``env`` with random actions (resetting at episode ends) until ``cond()`` or the timeout."""
    env.action_space.seed(seed)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if np.any(terminated) or np.any(truncated):
            if not isinstance(env.unwrapped, gym.vector.VectorEnv) and not hasattr(env, "num_envs"):
                env.reset()
    return cond()


class Viewers:
    """``n`` WebSocket viewers on their own asyncio loop in a background thread: what a browser receives, counted.

    Attributes:
        frames: JPEG frames received, per viewer.
        last: each viewer's newest frame (bytes).
        stats: each viewer's newest counters message.
        hello: each viewer's hello message.
        returns: the episode returns each viewer was sent, in order.
    """

    def __init__(self, url: str, n: int = 1, view: str | None = None) -> None:
        self.url, self.n, self.view = ws_url(url), n, view
        self.frames = [0] * n
        self.last: list[bytes | None] = [None] * n
        self.stats: list[dict | None] = [None] * n
        self.hello: list[dict | None] = [None] * n
        self.returns: list[list[float]] = [[] for _ in range(n)]
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _one(self, i: int, session: aiohttp.ClientSession) -> None:
        async with session.ws_connect(self.url) as ws:
            if self.view:
                await ws.send_str(json.dumps({"view": self.view}))
            while not self._stop.is_set():
                try:
                    msg = await ws.receive(timeout=0.2)
                except TimeoutError:
                    continue
                if msg.type == aiohttp.WSMsgType.BINARY:
                    self.frames[i] += 1
                    self.last[i] = msg.data
                elif msg.type == aiohttp.WSMsgType.TEXT:
                    data = json.loads(msg.data)
                    if data["type"] == "hello":
                        self.hello[i] = data
                    else:
                        self.stats[i] = data
                        del self.returns[i][data["returns_from"]:]
                        self.returns[i].extend(data["returns"])
                else:
                    return

    async def _main(self) -> None:
        async with aiohttp.ClientSession() as session:
            results = await asyncio.gather(*(self._one(i, session) for i in range(self.n)), return_exceptions=True)
        self.errors = [r for r in results if isinstance(r, BaseException)]

    def __enter__(self) -> Viewers:
        self._thread.start()
        deadline = time.monotonic() + 15
        while any(h is None for h in self.hello) and time.monotonic() < deadline and self._thread.is_alive():
            time.sleep(0.02)
        assert all(h is not None for h in self.hello), f"viewers did not connect: {self.errors}"
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


@contextlib.contextmanager
def viewing(env: gym.Env, **kwargs) -> Iterator[BrowserView]:
    """A BrowserView, closed at the end."""
    view = BrowserView(env, **kwargs)
    try:
        yield view
    finally:
        view.close()


# ---- validation: clear errors before anything starts -----------------------------------------------------------------

@pytest.mark.parametrize("fps", [0, -1.0, float("nan"), float("inf"), "15", True, None])
def test_bad_fps_names_the_fix(fps) -> None:
    with pytest.raises(ValueError, match=re.escape(f"BrowserView: fps={fps!r} must be a number > 0 (the most page "
                                                   "updates a second, e.g. fps=15)")):
        BrowserView(gym.make("pixelrig/CartPole-v0"), fps=fps)


@pytest.mark.parametrize("host", ["not a host", "", 127001, "no-such-host.invalid"])
def test_bad_host_names_the_fix(host) -> None:
    with pytest.raises(ValueError, match=re.escape(f"BrowserView: host={host!r}")) as info:
        BrowserView(gym.make("pixelrig/CartPole-v0"), host=host)
    assert "use host='127.0.0.1' (the default: reach it from elsewhere through an SSH tunnel)" in str(info.value)


def test_foreign_address_is_a_bad_host() -> None:
    with pytest.raises(ValueError, match=re.escape("BrowserView: host='192.0.2.1' is not an address of this machine")):
        BrowserView(gym.make("pixelrig/CartPole-v0"), host="192.0.2.1")  # TEST-NET-1: never local


@pytest.mark.parametrize("port", [-1, 65536, True, "8000", 1.5])
def test_bad_port_names_the_fix(port) -> None:
    with pytest.raises(ValueError, match=re.escape(f"BrowserView: port={port!r} must be an integer in 0..65535 "
                                                   "(port=0 picks a free port)")):
        BrowserView(gym.make("pixelrig/CartPole-v0"), port=port)


def test_unknown_camera_lists_the_cameras() -> None:
    with pytest.raises(ValueError, match=re.escape("BrowserView: unknown camera 'top'; cameras here: ['front', "
                                                   "'side', 'wrist']")):
        BrowserView(panda(32), camera="top")


def test_vector_view_refuses_a_camera_of_its_own() -> None:
    venv = make_vec("pixelrig/CartPole-v0", 2, vectorization_mode="sync", renderer="tiny")
    try:
        with pytest.raises(ValueError, match=re.escape("a view of a vector env cannot render a camera of its own")):
            BrowserView(venv, camera=Camera("extra", width=16, height=16, eye=(0, -2, 1), target=(0, 0, 0)))
        with pytest.raises(ValueError, match=re.escape("BrowserView: unknown camera 'top'; cameras here: ['front']")):
            BrowserView(venv, camera="top")
    finally:
        venv.close()


def test_missing_aiohttp_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "aiohttp" else real(name, *a))
    with pytest.raises(gym.error.DependencyNotInstalled, match=re.escape("pip install 'pixelrig[viewer]'")):
        BrowserView(gym.make("pixelrig/CartPole-v0"))


def test_import_pixelrig_does_not_import_the_server_library(tmp_path: Path) -> None:
    """Only the server process imports aiohttp; the serve tool imports on its own."""
    code = ("import sys, pixelrig, pixelrig.tools.serve; "
            "print([m for m in ('aiohttp', 'playwright') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


# ---- pictures --------------------------------------------------------------------------------------------------------

def test_compose_views() -> None:
    rng = np.random.default_rng(0)
    layout = FrameLayout(2, (Slot("a", "rgb", (40, 50, 3), "|u1"), Slot("a", "depth", (40, 50, 1), "<f4"),
                             Slot("b", "rgb", (30, 30, 3), "|u1")), {"a": (0.1, 5.0)})
    frames = {"a/rgb": rng.integers(0, 255, (2, 40, 50, 3), np.uint8),
              "a/depth": rng.uniform(0.1, 6.0, (2, 40, 50, 1)).astype(np.float32),
              "b/rgb": rng.integers(0, 255, (2, 30, 30, 3), np.uint8)}
    assert layout.views == ("rgb", "depth", "all")
    one = FrameLayout(1, layout.slots, layout.depth_ranges)
    first = {k: v[:1] for k, v in frames.items()}
    all_view = compose(first, one, "all")
    assert np.array_equal(all_view, tile_rig({k: v[0] for k, v in first.items()}, depth_ranges={"a": (0.1, 5.0)}))
    rgb = compose(first, one, "rgb")
    assert rgb.shape == (40, 80, 3)  # cameras side by side, shorter ones padded
    assert np.array_equal(rgb[20:40, 10:50], frames["a/rgb"][0, 20:40, 10:50]) and (rgb[30:, 50:] == 0).all()
    depth = compose(first, one, "depth")
    assert (depth[20:30, 60:80] == 48).all(), "a camera without depth is drawn grey"
    # The pictures against the tests' own colourings (tests/colorings.py) of the raw frames, pane by pane:
    # measured 0.0 on every pane; a depth pane showing the rgb image instead is 93 grey levels off.
    raw, far = {k: v[0] for k, v in frames.items()}, {"a": 5.0}
    for name, errors in (("depth", view_panes(depth, raw, far, "depth")), ("all", mosaic_panes(all_view, raw, far))):
        assert max(errors.values()) < 1.0, f"the {name} view, pane by pane: {errors}"
    grid = compose(frames, layout, "rgb")
    assert grid.shape == (2 * 40 + 2, 80, 3)  # wide blocks stack (the grid closest to 16:9), 2 px apart
    second = compose({k: v[1:] for k, v in frames.items()}, one, "rgb")
    assert np.array_equal(grid[42:62], second[:20]), "env 1's block, above its 'env 1' caption"
    assert grid_columns(16, 100, 100) == 6 and grid_columns(1, 10, 10) == 1  # 6 x 3 is 2:1, 5 x 4 is 1.25:1
    with pytest.raises(ValueError, match=re.escape("view='x' must be one of ('rgb', 'depth', 'label', 'all')")):
        compose(first, one, "x")


# ---- HTTP and WebSockets ---------------------------------------------------------------------------------------------

def test_page_frames_and_routes_over_real_http() -> None:
    with viewing(panda(32), fps=100) as view:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", view.url) and view.token is None
        obs, _ = view.reset(seed=0)
        status, headers, body = get(view.url)
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert "default-src 'none'" in headers["Content-Security-Policy"] and b"<canvas id=\"frame\"" in body
        assert b"http://" not in body and b"https://" not in body, "the page loads nothing from elsewhere"
        status, headers, body = get(view.url + "frame.jpg")
        assert status == 200 and headers["Content-Type"] == "image/jpeg"
        assert_looks_like(decode(body), expected(view, obs), "/frame.jpg after reset")
        status, _, body = get(view.url + "frame.jpg?view=all")
        assert status == 200 and decode(body).shape == expected(view, obs, "all").shape
        for path in ("nope", "index.html", "../../../../etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "/etc/passwd",
                     "static/..%2f..%2fetc%2fpasswd", "ws/../../etc/passwd", "frame.jpg/../../x"):
            status, _, body = get(view.url + path)
            assert status == 404 and b"root:" not in body, path
        assert get(view.url, method="POST")[0] == 405, "read-only: nothing takes a POST"
        assert get(view.url + "frame.jpg?view=nope")[0] == 404
        # a loopback page asked for under another name (DNS rebinding) is refused; localhost is fine (SSH tunnel)
        assert get(view.url, headers={"Host": "evil.example:80"})[0] == 403
        assert get(view.url, headers={"Host": f"localhost:{view.port}"})[0] == 200
        # a page of another site may not open the stream
        status, _, _ = get(view.url + "ws", headers={"Origin": "http://evil.example", "Connection": "Upgrade",
                                                     "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                                                     "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
        assert status == 403


def test_websocket_stream_follows_the_run() -> None:
    with viewing(panda(32), fps=100) as view:
        obs, _ = view.reset(seed=0)
        history = {0: obs}
        with Viewers(view.url) as viewers:
            assert viewers.hello[0]["views"] == ["rgb", "depth", "label", "all"]
            assert viewers.hello[0]["cameras"] == ["front", "side", "wrist"]
            view.action_space.seed(1)
            for n in range(1, 40):
                obs, *_ = view.step(view.action_space.sample())
                history[n] = obs
                time.sleep(0.01)
            deadline = time.monotonic() + 10
            while (viewers.stats[0] or {}).get("steps") != 39 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.3)
            stats = viewers.stats[0]
            assert stats["steps"] == 39 and stats["episodes"] == 0
            assert viewers.frames[0] >= 5, "frames keep arriving"
            step = stats["frame_step"]
            assert_looks_like(decode(viewers.last[0]), expected(view, history[step]), f"frame of step {step}")
            assert view.viewers == 1
        deadline = time.monotonic() + 5
        while view.viewers and time.monotonic() < deadline:
            time.sleep(0.05)
        assert view.viewers == 0, "a viewer that left is no longer counted"


def test_a_browser_that_stops_reading_only_misses_frames_itself() -> None:
    """One viewer stops reading: once its socket buffers are full the server's send to it waits, and it misses the
    frames in between; the other viewer keeps getting frames, and stepping never waits. The frames are large (3
    cameras at 256 px, about 34 KB each) so that what the kernel buffers for the stalled socket (0.27 MB here, 0.53 MB
    on CI's machine) stays a small part of what is published (about 5 MB)."""
    with viewing(panda(256), fps=200) as view:
        view.reset(seed=0)
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", view.port))
        stalled.sendall(f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{view.port}\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n".encode())
        assert stalled.recv(4096).startswith(b"HTTP/1.1 101"), "handshake"
        try:  # from here on the stalled viewer does not read
            with Viewers(view.url) as viewers:
                published, worst, sizes = view.server.frames_published, 0.0, []
                for _ in range(150):
                    start = time.perf_counter()
                    view.step(view.action_space.sample())
                    worst = max(worst, time.perf_counter() - start)
                    if viewers.last[0] is not None:
                        sizes.append(len(viewers.last[0]))
                    time.sleep(0.01)
                assert viewers.frames[0] >= 20, "the reading viewer kept getting frames"
                assert view.viewers == 2
                sent = (view.server.frames_published - published) * min(sizes)
            assert worst < 1.0, f"a step waited {worst:.2f} s"
            stalled.settimeout(0.5)
            got = 0
            with contextlib.suppress(TimeoutError):
                while chunk := stalled.recv(1 << 16):  # what was waiting for it: a bounded backlog, not every frame
                    got += len(chunk)
            assert got < sent / 3, f"the stalled viewer got {got} bytes of the {sent} published"
        finally:
            stalled.close()


def test_no_frames_are_taken_while_nobody_watches() -> None:
    with viewing(panda(32), fps=1000) as view:
        view.reset(seed=0)
        for _ in range(30):
            view.step(view.action_space.sample())
            time.sleep(0.002)
        assert view.server.frames_published == 1, "only the first frame (so that a page opened later has one)"


def test_episode_returns_reach_the_page() -> None:
    env = gym.make("pixelrig/CartPole-v0")
    with viewing(PixelObs(env, cams=small_rig(env, 16)), fps=200) as view:
        view.reset(seed=0)
        returns, total = [], 0.0
        with Viewers(view.url) as viewers:
            view.action_space.seed(0)
            while len(returns) < 3:
                _, reward, terminated, truncated, _ = view.step(view.action_space.sample())
                total += float(reward)
                if terminated or truncated:
                    returns.append(total)
                    total = 0.0
                    view.reset()
            deadline = time.monotonic() + 10
            while len(viewers.returns[0]) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert viewers.stats[0]["episodes"] == 3
        assert viewers.returns[0] == returns


def test_token_is_enforced_beyond_loopback() -> None:
    with viewing(gym.make("pixelrig/CartPole-v0"), host="0.0.0.0") as view:
        assert view.token and len(view.token) >= 32
        assert view.url.endswith(f":{view.port}/?token={view.token}")
        view.reset(seed=0)
        local = f"http://127.0.0.1:{view.port}/"
        for path in ("", "frame.jpg", "ws", "nope"):
            status, _, body = get(local + path)
            assert status == 401 and b"needs its token" in body, path
            assert get(local + path + "?token=wrong" + view.token[5:])[0] == 403, path
        status, _, body = get(local + f"?token={view.token}")
        assert status == 200 and b"<canvas" in body
        assert get(local + f"frame.jpg?token={view.token}")[0] == 200
        assert get(local + f"nope?token={view.token}")[0] == 404

        async def handshake(url: str) -> int:
            async with aiohttp.ClientSession() as session:
                try:
                    async with session.ws_connect(url) as ws:
                        await ws.receive(timeout=5)
                        return 101
                except aiohttp.WSServerHandshakeError as exc:
                    return exc.status

        assert asyncio.run(handshake(f"ws://127.0.0.1:{view.port}/ws")) == 401
        assert asyncio.run(handshake(f"ws://127.0.0.1:{view.port}/ws?token={view.token}")) == 101


def test_port_in_use_names_the_fix() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        fix = (f"BrowserView: port {port} on 127.0.0.1 is in use (by another program, or another view that is still "
               "open): pass port=0 to pick a free port, or choose another port")
        with pytest.raises(PortInUseError, match=re.escape(fix)) as info:
            BrowserView(gym.make("pixelrig/CartPole-v0"), port=port)
        assert isinstance(info.value, OSError) and info.value.errno == errno.EADDRINUSE
    with viewing(gym.make("pixelrig/CartPole-v0")) as first, pytest.raises(PortInUseError):
        BrowserView(gym.make("pixelrig/CartPole-v0"), port=first.port)


def test_close_frees_the_port() -> None:
    view = BrowserView(gym.make("pixelrig/CartPole-v0"))
    port = view.port
    view.reset(seed=0)
    assert get(view.url)[0] == 200
    view.close()
    view.close()  # idempotent
    assert view.closed and view.close_reason == "closed by the program"
    with pytest.raises(OSError):
        get(f"http://127.0.0.1:{port}/")  # nobody listens any more
    with viewing(gym.make("pixelrig/CartPole-v0"), port=port) as again:  # bound again, with viewers connected
        again.reset(seed=0)
        with Viewers(again.url, n=2):
            again.step(again.action_space.sample())
    with socket.socket() as sock:  # and by anyone (a server sets SO_REUSEADDR: the closed connections wait there)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))


def test_server_death_is_reported_and_stepping_goes_on() -> None:
    with viewing(gym.make("pixelrig/CartPole-v0")) as view:
        view.reset(seed=0)
        view.server._helper.proc.kill()
        view.server._helper.proc.wait()
        assert view.closed and view.close_reason.startswith("the web server process died (exit code -9")
        for _ in range(5):
            view.step(view.action_space.sample())


def test_snapshot_through_a_view() -> None:
    with viewing(panda(16)) as view:
        view.reset(seed=0)
        view.action_space.seed(0)
        for _ in range(5):
            view.step(view.action_space.sample())
        snap = snapshot(view)
        action = view.action_space.sample()
        first = view.step(action)
        restore(view, snap)
        assert_trees_equal(view.step(action)[0], first[0])


# ---- nothing changes -------------------------------------------------------------------------------------------------

def trajectory(env: gym.Env, steps: int) -> list:
    """Per step: observation, reward, flags, info and the full physics state (random actions, seeded)."""
    rng = np.random.default_rng(0)
    out = []
    obs, info = env.reset(seed=3)
    out.append((obs, info))
    for t in range(steps):
        obs, reward, terminated, truncated, info = env.step(rng.uniform(-1, 1, env.action_space.shape)
                                                            .astype(np.float32))
        out.append((obs, reward, terminated, truncated, info, physics_state(env.unwrapped.client)))
        if terminated or truncated:
            obs, info = env.reset(seed=t)
            out.append((obs, info))
    return out


def test_trajectories_are_bitwise_the_same_with_the_view_on() -> None:
    """110 PandaPush steps (an episode end and a reset included), every frame published to a connected viewer:
    observations, rewards, flags, infos and physics are bitwise those of the same env without the view."""
    reference = trajectory(panda(24), 110)
    with viewing(panda(24), fps=10_000) as view:
        view.reset(seed=3)
        with Viewers(view.url) as viewers:
            got = trajectory(view, 110)
            assert viewers.frames[0] > 0
        assert view.server.frames_published >= 100, "frames were taken (nearly) every step"
    assert len(got) == len(reference) > 110
    assert_trees_equal(got, reference)


# ---- vector envs -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["sync", "batched", "async"])
def test_one_page_tiles_every_env_of_a_vector_env(mode: str) -> None:
    cams = [Camera("front", width=24, height=24, eye=(0.0, -2.6, 0.45), target=(0.0, 0.0, 0.35),
                   modalities=("rgb", "depth", "label"))]
    n = 2 if mode == "async" else 3
    venv = make_vec("pixelrig/CartPole-v0", n, cams=cams, vectorization_mode=mode, renderer="tiny")
    view = BrowserView(venv, fps=200)
    try:
        assert isinstance(view, VectorBrowserView) and view.num_envs == n
        obs, _ = view.reset(seed=0)
        with Viewers(view.url, view="all") as viewers:
            assert viewers.hello[0]["num_envs"] == n
            history, done = {0: obs}, 0
            for step in range(1, 30):
                obs, _, terminated, truncated, _ = view.step(view.action_space.sample())
                history[step * n] = obs
                done += int(np.sum(terminated | truncated))
                time.sleep(0.01)
            deadline = time.monotonic() + 10
            while (viewers.stats[0] or {}).get("steps") != 29 * n and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.3)
            stats = viewers.stats[0]
            assert stats["steps"] == 29 * n and stats["episodes"] == done
            layout = view.page_frames.layout
            want = compose({s.key: history[stats["frame_step"]][s.key] for s in layout.slots}, layout, "all")
            assert_looks_like(decode(viewers.last[0]), want, f"{mode}: every env tiled")
    finally:
        view.close()


# ---- the command line ------------------------------------------------------------------------------------------------

def test_pixelrig_serve(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    from pixelrig.tools.cli import main

    assert main(["serve", "pixelrig/CartPole-v0", "--steps", "25", "--port", "0", "--fast"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"serving pixelrig/CartPole-v0 at http://127\.0\.0\.1:\d+/\n", out), out
    assert "ssh -L" in out and out.strip().endswith("served pixelrig/CartPole-v0 for 25 steps")
    rig = tmp_path / "rig.toml"
    rig.write_text('[[cameras]]\nname = "front"\neye = [1.6, 0.0, 1.0]\ntarget = [0.0, 0.0, 0.5]\nwidth = 32\n'
                   'height = 24\nmodalities = ["rgb", "depth"]\n')
    assert main(["serve", "kuka_iiwa/model.urdf", "--cams", str(rig), "--steps", "5", "--port", "0", "--fast",
                 "--policy", "random"]) == 0
    assert capsys.readouterr().out.strip().endswith("served kuka_iiwa/model.urdf for 5 steps")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "pixelrig/CartPole-v0", "--steps", "1", "--port", str(port)]) == 2
    assert "pass --port 0 to pick a free port" in capsys.readouterr().err


# ---- a real browser --------------------------------------------------------------------------------------------------

def _browser_missing() -> str | None:
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (Debian's chromium package: scripts/setup-system.sh installs it)"
    if importlib.util.find_spec("playwright") is None:
        return "playwright is missing (pip install playwright; it drives /usr/bin/chromium, no browser download)"
    return None


def need_browser() -> None:
    """Skip the calling test without Chromium or Playwright (fail instead when PIXELRIG_REQUIRE_BROWSER=1)."""
    why = _browser_missing()
    if why:
        if REQUIRE_BROWSER:
            pytest.fail(f"PIXELRIG_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)


@pytest.fixture(scope="module")
def chromium() -> Iterator:
    """A headless Chromium (Debian's), driven by Playwright."""
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


def attr(page, name: str, selector: str = "#frame") -> str:
    """An attribute of the page's element (read without evaluating script: the page's CSP forbids eval)."""
    return page.locator(selector).get_attribute(name) or ""


def canvas_pixels(page) -> np.ndarray:
    """The frame canvas as the screen shows it, brought back to the frame's own size (it is drawn scaled by an
    integer with nearest-neighbour, so an area average undoes it exactly)."""
    shot = decode(page.locator("#frame").screenshot())
    scale = float(attr(page, "data-scale"))
    h, w = round(shot.shape[0] / scale), round(shot.shape[1] / scale)
    return cv2.resize(shot, (w, h), interpolation=cv2.INTER_AREA)


def test_chromium_shows_the_rig_and_follows_the_run(chromium) -> None:
    """The page in a real browser shows the rig's picture (compared with the frame composed here, and its depth,
    label and tiled views pane by pane with the tests' own colourings of the raw frames), changes as the env steps,
    switches to the depth and label views, and draws the episode returns."""
    pixels = panda()
    far = {cam.name: cam.far for cam in pixels.rig.cameras}
    with viewing(pixels, fps=30) as view:
        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        try:
            obs, _ = view.reset(seed=0)
            history = {0: obs}
            page.goto(view.url)
            steps, ends = [0], [0]

            def step() -> None:
                """One step, and a reset where the episode ended (PandaPush's limit is 100 steps; a slow browser
                can keep run_until stepping past it): ``history`` holds the frame published at each step count."""
                obs, _, terminated, truncated, _ = view.step(view.action_space.sample())
                steps[0] += 1
                history[steps[0]] = obs
                if terminated or truncated:
                    ends[0] += 1
                    published = view.server.frames_published
                    obs, _ = view.reset()
                    if view.server.frames_published > published:  # the reset's frame replaced the step's
                        history[steps[0]] = obs

            def page_shows(read: Callable[[], str], want: str, timeout: float = 5.0) -> str:
                """What ``read`` gives once it gives ``want``, or when ``timeout`` is up (the page redraws its
                counters and chart a few times a second)."""
                deadline = time.monotonic() + timeout
                while (got := read()) != want and time.monotonic() < deadline:
                    time.sleep(0.05)
                return got

            def run_until(cond: Callable[[], bool], timeout: float = 20.0) -> None:
                deadline = time.monotonic() + timeout
                while not cond() and time.monotonic() < deadline:
                    step()
                assert cond(), "the page did not get there"

            def settle() -> int:
                """Stop stepping; wait for the page to draw the last frame published; its step."""
                deadline = time.monotonic() + 5
                last = view.server.frame_step
                while int(attr(page, "data-step") or -1) != last and time.monotonic() < deadline:
                    time.sleep(0.05)
                return int(attr(page, "data-step"))

            view.action_space.seed(0)
            run_until(lambda: int(attr(page, "data-frames") or 0) >= 3)
            first_step = settle()
            first = canvas_pixels(page)
            assert_looks_like(first, expected(view, history[first_step]), "the page's frame")
            assert page.locator("#title").inner_text() == "pixelrig/PandaPush-v0"
            assert page.locator("#status").inner_text() == "live"

            run_until(lambda: steps[0] >= first_step + 15 and int(attr(page, "data-step")) > first_step + 10)
            second_step = settle()
            second = canvas_pixels(page)
            assert_looks_like(second, expected(view, history[second_step]), "the page's frame, later")
            assert np.abs(second.astype(int) - first).mean() > 1.0, "the picture changed as the env stepped"
            assert page_shows(lambda: page.locator("#step").inner_text(), f"{steps[0]:,}") == f"{steps[0]:,}"

            for mode, button in (("depth", "Depth"), ("label", "Labels"), ("all", "All")):
                page.get_by_role("button", name=button).click()
                shown = int(attr(page, "data-frames"))
                run_until(lambda m=mode, s=shown: attr(page, "data-view") == m and int(attr(page, "data-frames")) > s)
                at = settle()
                shot = canvas_pixels(page)
                assert_looks_like(shot, expected(view, history[at], mode), f"the {mode} view")
                # Against the tests' own colourings of the raw frames (tests/colorings.py), pane by pane. JPEG
                # (quality 90, chroma at half resolution) loses most at the sharp colour edges of the label panes:
                # over three runs, mean differences 1.7-4.5 (depth panes), 2.0-7.5 (label panes), 2.5-3.1 (rgb
                # panes, "all" view); a depth pane showing the rgb image instead is 51-91 off.
                errors = view_panes(shot, history[at], far, mode)
                assert max(errors.values()) < 15.0, f"the {mode} view, pane by pane: {errors}"

            points = lambda: attr(page, "data-points", "#returns")  # noqa: E731
            episodes = lambda: page.locator("#episodes").inner_text()  # noqa: E731
            assert page_shows(points, str(ends[0])) == str(ends[0]), "a point per finished episode (none yet, mostly)"
            target = ends[0] + 1
            run_until(lambda: ends[0] == target, timeout=30)  # PandaPush's time limit: an episode ends
            assert page_shows(points, str(target)) == str(target), "the finished episode's return is charted"
            assert page_shows(episodes, str(target)) == str(target)
        finally:
            page.close()


def test_chromium_opens_a_tokened_page(chromium) -> None:
    """Beyond loopback the page passes its token on to the stream: the URL the view prints works as it is."""
    with viewing(panda(24), host="0.0.0.0", fps=30) as view:
        page = chromium.new_page()
        try:
            view.reset(seed=0)
            page.goto(f"http://127.0.0.1:{view.port}/?token={view.token}")
            assert step_until(view, lambda: int(attr(page, "data-frames") or 0) >= 2, timeout=20)
            bare = page.goto(f"http://127.0.0.1:{view.port}/")
            assert bare is not None and bare.status == 401
        finally:
            page.close()


def test_ten_browsers_keep_getting_frames_while_stepping_goes_on(chromium) -> None:
    """Ten pages at once: stepping goes on, and every page keeps drawing new frames (the speed with ten viewers is
    benchmarks/browser_view.py's to measure)."""
    with viewing(panda(32), fps=15) as view:
        context = chromium.new_context(viewport={"width": 800, "height": 500})
        try:
            view.reset(seed=0)
            pages = [context.new_page() for _ in range(10)]
            for page in pages:
                page.goto(view.url)
            assert step_until(view, lambda: view.viewers == 10, timeout=20)
            counts = [int(attr(p, "data-frames")) for p in pages]
            steps = view.server.steps
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                for _ in range(20):  # a burst of steps between looks at the pages (each look is slow)
                    view.step(view.action_space.sample())
                if all(int(attr(p, "data-frames")) >= c + 5 for p, c in zip(pages, counts, strict=True)):
                    break
            new = [int(attr(p, "data-frames")) - c for p, c in zip(pages, counts, strict=True)]
            assert min(new) >= 5, f"new frames per page: {new}"
            assert view.server.steps >= steps + 20, "stepping went on"
        finally:
            context.close()
        deadline = time.monotonic() + 5
        while view.viewers and time.monotonic() < deadline:
            time.sleep(0.05)
        assert view.viewers == 0


def test_the_run_survives_a_browser_killed_mid_stream() -> None:
    """Chromium's own headless mode on the page, killed (SIGKILL) while frames stream: stepping goes on, the viewer
    is dropped, and a new viewer gets frames."""
    need_browser()
    with viewing(panda(32), fps=30) as view, tempfile.TemporaryDirectory() as profile:
        view.reset(seed=0)
        proc = subprocess.Popen([CHROMIUM, "--headless", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", view.url],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            assert step_until(view, lambda: view.viewers == 1, timeout=30), "the browser never connected"
            published = view.server.frames_published
            assert step_until(view, lambda: view.server.frames_published >= published + 5, timeout=10)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # the browser and its helper processes, mid-stream
            proc.wait(timeout=10)
        assert step_until(view, lambda: view.viewers == 0, timeout=20), "the dead browser is still counted"
        for _ in range(10):
            view.step(view.action_space.sample())
        with Viewers(view.url) as viewers:
            assert step_until(view, lambda: viewers.frames[0] >= 3, timeout=10)
        status, _, body = get(view.url)
        assert status == 200 and b"<canvas" in body
