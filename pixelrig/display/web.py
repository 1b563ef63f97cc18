"""A read-only web page of live camera frames, served by a separate process fed through shared memory.

:class:`WebServer` is to a browser what :class:`pixelrig.display.window.DisplayWindow` is to a screen. The caller
(the stepping thread) only copies raw images (rgb, depth, labels) into shared memory under a sequence lock and
bumps a few counters; the server process (``web_main.py``, aiohttp) colours, tiles and JPEG-encodes them, and
streams them over WebSockets to every browser that watches. The caller never waits for the server or a browser:

- a frame is published at most ``fps`` times a second, and only while somebody watches (the server writes its
  viewer count into the shared header); a frame the server has not read yet is simply overwritten;
- every browser gets the newest frame when it is ready for one (frames in between are dropped for it alone);
- the server process runs at a lower CPU priority and caps its own work per frame, so that on a busy machine the
  page loses frames, not the training steps.

The page can only look: no endpoint changes anything in the caller. Binding is done here, in the caller's process
(a port in use or a bad host raises at construction, here), and the listening socket is handed to the server
process, which alone holds it afterwards: :meth:`WebServer.close` (or the server's death) frees the port.
"""

from __future__ import annotations

import dataclasses
import errno
import importlib.util
import ipaddress
import math
import secrets
import socket
import time
from collections.abc import Mapping, Sequence
from multiprocessing import shared_memory
from typing import Any

import cv2
import numpy as np

from pixelrig.display.colors import colorize_depth, colorize_labels
from pixelrig.display.mosaic import PLACEHOLDER, caption, tile_rig
from pixelrig.errors import HelperFailed, PortInUseError
from pixelrig.system.process import Helper, free_shared

_MODULE = "pixelrig.display.web_main"

MODALITIES = ("rgb", "depth", "label")
"""The modalities a page shows (others, like points or normals, are not pictures for people)."""

VIEWS = ("rgb", "depth", "label", "all")
"""What the page can switch between: one modality of every camera, or rgb | depth | label rows (HumanWindow's
picture)."""

# shared header: uint64 words
SEQ, FRAME_STEP, STEPS, EPISODES, VIEWERS, PUBLISHED, HEADER_WORDS = 0, 1, 2, 3, 4, 5, 16
RING = 4096
"""Episode returns kept in shared memory (a ring); the server copies new ones out several times a second."""
_ALIGN = 64

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_HOST_FIX = ("use host='127.0.0.1' (the default: reach it from elsewhere through an SSH tunnel), '0.0.0.0' for every "
             "interface (the URL then carries a token), or an address of this machine")


def _dependency_error(who: str) -> Exception:
    from gymnasium.error import DependencyNotInstalled

    return DependencyNotInstalled(f"{who} needs aiohttp to serve its page: pip install 'pixelrig[viewer]' (or pip "
                                  "install aiohttp)")


# ---- validation -----------------------------------------------------------------------------------------------

def check_fps(fps: Any, who: str) -> float:
    """``fps`` as a float.

    Raises:
        ValueError: not a finite number > 0 (the message names the fix).
    """
    if isinstance(fps, bool) or not isinstance(fps, int | float) or not math.isfinite(fps) or fps <= 0:
        raise ValueError(f"{who}: fps={fps!r} must be a number > 0 (the most page updates a second, e.g. fps=15)")
    return float(fps)


def check_port(port: Any, who: str) -> int:
    """``port`` as an int.

    Raises:
        ValueError: not an integer in 0..65535 (0 picks a free port).
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"{who}: port={port!r} must be an integer in 0..65535 (port=0 picks a free port)")
    return port


def resolve_host(host: Any, who: str) -> tuple[socket.AddressFamily, tuple, bool]:
    """Where to listen: ``(address family, socket address without the port, loopback?)``.

    Raises:
        ValueError: not a non-empty string, or a name that does not resolve (the message names the fix).
    """
    if not isinstance(host, str) or not host.strip() or any(c.isspace() for c in host):
        raise ValueError(f"{who}: host={host!r} is not a host name or address; {_HOST_FIX}")
    try:
        infos = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise ValueError(f"{who}: host={host!r} does not resolve ({exc}); {_HOST_FIX}") from None
    family, _, _, _, sockaddr = infos[0]
    loopback = all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)
    return family, sockaddr[:1] + sockaddr[2:], loopback


def _bind(host: str, port: int, who: str) -> tuple[socket.socket, bool]:
    family, address, loopback = resolve_host(host, who)
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # what servers do: TIME_WAIT does not block
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if address[0] == "::" else 1)
        sock.bind((address[0], port, *address[1:]))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(
                errno.EADDRINUSE,
                f"{who}: port {port} on {host} is in use (by another program, or another view that is still open): "
                "pass port=0 to pick a free port, or choose another port") from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise ValueError(f"{who}: host={host!r} is not an address of this machine ({exc.strerror}); "
                             f"{_HOST_FIX}") from None
        if exc.errno == errno.EACCES:
            raise PermissionError(errno.EACCES, f"{who}: port {port} needs privileges here: pass port=0 or a port "
                                                ">= 1024") from None
        raise
    return sock, loopback


# ---- what the frames are --------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Slot:
    """One camera image of every env: ``"<camera>/<modality>"``, per-env shape (H, W, C) and numpy dtype string."""

    camera: str
    modality: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def key(self) -> str:
        """``"<camera>/<modality>"``, as in a PixelObs Dict."""
        return f"{self.camera}/{self.modality}"


@dataclasses.dataclass(frozen=True)
class FrameLayout:
    """What a page shows: ``num_envs`` envs, each with the same camera images (slots).

    Attributes:
        num_envs: envs tiled on the page (1 for a single env, ``num_envs`` of a vector env).
        slots: the images, cameras in the order they are shown (only the modalities in :data:`MODALITIES`).
        depth_ranges: camera -> (near, far): depth at or beyond far is drawn black.

    Raises:
        ValueError: no slots, a modality outside :data:`MODALITIES`, a repeated slot, or a bad shape.
    """

    num_envs: int
    slots: tuple[Slot, ...]
    depth_ranges: Mapping[str, tuple[float, float]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.num_envs, bool) or not isinstance(self.num_envs, int) or self.num_envs < 1:
            raise ValueError(f"FrameLayout: num_envs={self.num_envs!r} must be an integer >= 1")
        if not self.slots:
            raise ValueError("FrameLayout: no images to show (no rgb, depth or label camera)")
        keys = [s.key for s in self.slots]
        if len(set(keys)) != len(keys):
            raise ValueError(f"FrameLayout: repeated images {sorted(k for k in keys if keys.count(k) > 1)}")
        for slot in self.slots:
            if slot.modality not in MODALITIES:
                raise ValueError(f"FrameLayout: {slot.key!r}: modality must be one of {MODALITIES}")
            if len(slot.shape) != 3 or min(slot.shape) < 1:
                raise ValueError(f"FrameLayout: {slot.key!r}: shape {slot.shape} must be (H, W, C) with sizes >= 1")

    @property
    def cameras(self) -> list[str]:
        """Camera names in the order shown."""
        return list(dict.fromkeys(s.camera for s in self.slots))

    @property
    def views(self) -> tuple[str, ...]:
        """The views the page offers: each modality some camera has, and "all" when there is more than rgb."""
        mods = {s.modality for s in self.slots}
        views = tuple(m for m in MODALITIES if m in mods)
        return views + ("all",) if mods - {"rgb"} else views

    def offsets(self) -> dict[str, int]:
        """Byte offset of each slot's (num_envs, H, W, C) array in the shared block (after header and ring)."""
        out, at = {}, HEADER_WORDS * 8 + RING * 8
        for slot in self.slots:
            at = -(-at // _ALIGN) * _ALIGN
            out[slot.key] = at
            at += self.num_envs * int(np.prod(slot.shape)) * np.dtype(slot.dtype).itemsize
        return out

    @property
    def nbytes(self) -> int:
        """Size of the shared block."""
        last = self.slots[-1]
        return self.offsets()[last.key] + self.num_envs * int(np.prod(last.shape)) * np.dtype(last.dtype).itemsize

    def arrays(self, buf: Any) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Views into a shared block: the header (uint64 words), the returns ring (float64) and every slot's
        (num_envs, H, W, C) array."""
        header = np.ndarray((HEADER_WORDS,), np.uint64, buf, 0)
        ring = np.ndarray((RING,), np.float64, buf, HEADER_WORDS * 8)
        slots = {s.key: np.ndarray((self.num_envs, *s.shape), np.dtype(s.dtype), buf, off)
                 for s, off in zip(self.slots, self.offsets().values(), strict=True)}
        return header, ring, slots

    def to_json(self) -> dict[str, Any]:
        """A JSON-friendly description (what the server process is told)."""
        return {"num_envs": self.num_envs,
                "slots": [[s.camera, s.modality, list(s.shape), s.dtype] for s in self.slots],
                "depth_ranges": {k: list(v) for k, v in self.depth_ranges.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FrameLayout:
        """The inverse of :meth:`to_json`."""
        slots = tuple(Slot(c, m, tuple(int(x) for x in shape), str(dt)) for c, m, shape, dt in data["slots"])
        ranges = {str(k): (float(v[0]), float(v[1])) for k, v in data.get("depth_ranges", {}).items()}
        return cls(int(data["num_envs"]), slots, ranges)


# ---- pictures for people --------------------------------------------------------------------------------------

def _modality_tile(frames: Mapping[str, np.ndarray], layout: FrameLayout, camera: str, modality: str,
                   env: int) -> np.ndarray:
    img = frames.get(f"{camera}/{modality}")
    if img is None:
        shape = next(s.shape for s in layout.slots if s.camera == camera)
        return np.full((shape[0], shape[1], 3), PLACEHOLDER, np.uint8)
    img = img[env]
    if modality == "rgb":
        return np.ascontiguousarray(img[..., :3], dtype=np.uint8)
    if modality == "depth":
        near_far = layout.depth_ranges.get(camera)
        return colorize_depth(img, background=near_far[1]) if near_far and near_far[1] > 0 else colorize_depth(img)
    return colorize_labels(img)


def _env_block(frames: Mapping[str, np.ndarray], layout: FrameLayout, view: str, env: int) -> np.ndarray:
    cams = layout.cameras
    if view == "all":
        one = {k: v[env] for k, v in frames.items()}
        return tile_rig(one, depth_ranges=layout.depth_ranges, cams=cams)
    tiles = []
    for cam in cams:
        tile = _modality_tile(frames, layout, cam, view, env)
        if len(cams) > 1:
            tile = np.ascontiguousarray(tile)
            caption(tile, cam)
        tiles.append(tile)
    height = max(t.shape[0] for t in tiles)
    return np.concatenate([np.pad(t, ((0, height - t.shape[0]), (0, 0), (0, 0))) for t in tiles], axis=1)


def grid_columns(n: int, block_w: int, block_h: int, aspect: float = 16 / 9) -> int:
    """Columns of a grid of ``n`` blocks whose overall shape is closest to ``aspect`` (width / height)."""
    best, best_cost = 1, math.inf
    for cols in range(1, n + 1):
        rows = -(-n // cols)
        cost = abs(math.log((cols * block_w) / (rows * block_h) / aspect))
        if cost < best_cost - 1e-9:
            best, best_cost = cols, cost
    return best


def compose(frames: Mapping[str, np.ndarray], layout: FrameLayout, view: str = "rgb") -> np.ndarray:
    """The picture the page shows: every env's cameras, tiled.

    Args:
        frames: ``"<camera>/<modality>"`` -> (num_envs, H, W, C) arrays (missing images are drawn grey).
        layout: what the frames are.
        view: one of :data:`VIEWS`: a modality of every camera side by side (names drawn on), or "all": per camera
            a row rgb | depth | labels (HumanWindow's picture). Several envs are laid out in a grid (about 16:9),
            each with its index in the bottom-left corner.

    Returns:
        (H, W, 3) uint8 RGB image.

    Raises:
        ValueError: an unknown view.
    """
    if view not in VIEWS:
        raise ValueError(f"view={view!r} must be one of {VIEWS}")
    blocks = [_env_block(frames, layout, view, i) for i in range(layout.num_envs)]
    if len(blocks) == 1:
        return blocks[0]
    gap = 2
    bh, bw = max(b.shape[0] for b in blocks), max(b.shape[1] for b in blocks)
    cols = grid_columns(len(blocks), bw + gap, bh + gap)
    rows = -(-len(blocks) // cols)
    out = np.full((rows * (bh + gap) - gap, cols * (bw + gap) - gap, 3), 24, np.uint8)
    for i, block in enumerate(blocks):
        r, c = divmod(i, cols)
        y, x = r * (bh + gap), c * (bw + gap)
        out[y:y + block.shape[0], x:x + block.shape[1]] = block
        label = np.ascontiguousarray(out[y + bh - min(bh, 24):y + bh, x:x + min(bw, 80)])
        _env_caption(label, f"env {i}")
        out[y + bh - label.shape[0]:y + bh, x:x + label.shape[1]] = label
    return out


def _env_caption(img: np.ndarray, text: str) -> None:
    """Draw ``text`` bottom-left, white on a dark box (in place)."""
    h = img.shape[0]
    scale = 0.35
    (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    cv2.rectangle(img, (0, h - th - base - 4), (tw + 4, h), (0, 0, 0), thickness=-1)
    cv2.putText(img, text, (2, h - base - 1), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), 1, cv2.LINE_AA)


def encode_jpeg(rgb: np.ndarray, quality: int = 90) -> bytes:
    """JPEG bytes of an (H, W, 3) uint8 RGB image."""
    ok, data = cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("encode_jpeg: OpenCV could not encode the frame")
    return data.tobytes()


# ---- the server, seen from the stepping process ---------------------------------------------------------------

def _url_host(host: str, loopback: bool) -> str:
    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    elif loopback and host == "localhost":
        host = "127.0.0.1"
    return f"[{host}]" if ":" in host else host


class WebServer:
    """A page of live frames in a browser, served by its own process (see the module docstring).

    Args:
        layout: the images each published frame holds.
        port: TCP port; 0 picks a free one (read it back from :attr:`port` or :attr:`url`).
        host: where to listen. Loopback (the default) needs no token; any other host gets a random token that
            every request must carry (``?token=...``, already in :attr:`url`): 401 without it, 403 with a wrong one.
        fps: the most page updates a second (and frames published a second).
        title: the page's title.
        who: the caller's name, for error messages.
        jpeg_quality: 1..100.
        startup_timeout: seconds to wait for the server process.

    Raises:
        ValueError: bad fps, port or host (the message names the fix).
        PortInUseError: the port is taken (the message names the fix: port=0 or another port).
        gymnasium.error.DependencyNotInstalled: aiohttp is missing (``pip install 'pixelrig[viewer]'``).
        RuntimeError: the server process did not start (the message holds the end of its stderr).
    """

    def __init__(self, layout: FrameLayout, *, port: int = 0, host: str = "127.0.0.1", fps: float = 15.0,
                 title: str = "pixelrig", who: str = "WebServer", jpeg_quality: int = 90,
                 startup_timeout: float = 30.0) -> None:
        self.fps = check_fps(fps, who)
        port = check_port(port, who)
        if isinstance(jpeg_quality, bool) or not isinstance(jpeg_quality, int) or not 1 <= jpeg_quality <= 100:
            raise ValueError(f"{who}: jpeg_quality={jpeg_quality!r} must be an integer in 1..100")
        resolve_host(host, who)
        if importlib.util.find_spec("aiohttp") is None:
            raise _dependency_error(who)
        self.layout, self.host, self.title = layout, host, title
        self._header: np.ndarray | None = None
        self._ring: np.ndarray | None = None
        self._slots: dict[str, np.ndarray] = {}
        sock, loopback = _bind(host, port, who)
        self.port: int = sock.getsockname()[1]
        """The port listened on."""
        self.token: str | None = None if loopback else secrets.token_urlsafe(24)
        """The token every request must carry (None on loopback)."""
        query = f"?token={self.token}" if self.token else ""
        self.url: str = f"http://{_url_host(host, loopback)}:{self.port}/{query}"
        """The page's address (with the token when there is one)."""
        try:
            shm = shared_memory.SharedMemory(create=True, size=layout.nbytes)
            try:
                self._header, self._ring, self._slots = layout.arrays(shm.buf)
                self._header[:] = 0
            except BaseException:
                self._release_views()
                free_shared(shm)
                raise
            # the token travels in the config (over the helper's socket), never in argv; the listening socket is
            # inherited, and the server process holds the only copy once this one closes its own
            config = {"fd": sock.fileno(), "shm": shm.name, "layout": layout.to_json(), "token": self.token,
                      "loopback": loopback, "fps": self.fps, "title": title, "jpeg_quality": jpeg_quality}
            self._helper = Helper.start(_MODULE, config, what="the web server process", timeout=startup_timeout,
                                        pass_fds=(sock.fileno(),), shared=[shm])
        except HelperFailed as exc:
            self._release_views()
            if isinstance(exc.error, ImportError) and "aiohttp" in f"{exc.error.name} {exc.error}":
                raise _dependency_error(who) from None
            raise RuntimeError(f"{who}: the web server process did not start: {exc.summary}") from None
        except BaseException:
            self._release_views()
            raise
        finally:
            sock.close()
        self._next_publish = -math.inf
        self.frames_published = 0
        """Frames copied to the server (after the fps limit and the no-viewer rule)."""

    # ---- state ------------------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the server is gone: :meth:`close`, or its process died. Publishing then does nothing."""
        return self._header is None or not self._helper.alive

    @property
    def close_reason(self) -> str | None:
        """Why the server went away (None while it serves)."""
        if self._header is None:
            return "closed by the program"
        code = self._helper.poll()
        if code is None:
            return None
        return f"the web server process died (exit code {code}; {self._helper.stderr_tail()})"

    @property
    def steps(self) -> int:
        """Env steps counted so far (:meth:`add_steps`)."""
        return 0 if self._header is None else int(self._header[STEPS])

    @property
    def frame_step(self) -> int:
        """The step count at the newest published frame (what the page shows as that frame's step)."""
        return 0 if self._header is None else int(self._header[FRAME_STEP])

    @property
    def viewers(self) -> int:
        """Browsers (WebSocket connections) watching now, as the server last wrote it."""
        return 0 if self._header is None else int(self._header[VIEWERS])

    # ---- from the stepping thread: never waits ------------------------------------------------------------------

    def add_steps(self, n: int = 1) -> None:
        """Count ``n`` env steps."""
        if self._header is not None:
            self._header[STEPS] += np.uint64(n)

    def add_episode(self, episode_return: float) -> None:
        """Record a finished episode's return (the page's chart)."""
        if self._header is None:
            return
        n = int(self._header[EPISODES])
        self._ring[n % RING] = float(episode_return)  # type: ignore[index]
        self._header[EPISODES] = n + 1  # after the value: the server reads values below the count only

    def wants_frame(self) -> bool:
        """Whether :meth:`publish` would take a frame now: the fps limit allows, the server is up, and somebody
        watches (or no frame was published yet). Check it before rendering a frame that would only be dropped."""
        if self._header is None or time.monotonic() < self._next_publish:
            return False
        if self._header[VIEWERS] == 0 and self.frames_published:
            return False
        return self._helper.alive

    def publish(self, frames: Mapping[str, np.ndarray], *, force: bool = False) -> bool:
        """Copy one frame into shared memory without waiting (overwriting one the server has not read).

        Args:
            frames: ``"<camera>/<modality>"`` -> array of shape (num_envs, H, W, C), or (H, W, C) with one env;
                keys outside the layout are ignored, missing ones keep their last image.
            force: skip the :meth:`wants_frame` check.

        Returns:
            False when the frame was dropped (see :meth:`wants_frame`).

        Raises:
            ValueError: an image whose shape does not match the layout.
        """
        if not (force and not self.closed) and not self.wants_frame():
            return False
        header = self._header
        header[SEQ] += np.uint64(1)  # type: ignore[index]  # odd: writing
        try:
            for key, dst in self._slots.items():
                src = frames.get(key)
                if src is None:
                    continue
                src = np.asarray(src)
                if src.shape != dst.shape:
                    if src.shape == dst.shape[1:] and dst.shape[0] == 1:
                        src = src[None]
                    else:
                        raise ValueError(f"publish: {key!r} has shape {src.shape}; the layout says "
                                         f"{dst.shape} (or {dst.shape[1:]} for one env)")
                np.copyto(dst, src, casting="unsafe")
            header[FRAME_STEP] = header[STEPS]  # type: ignore[index]
        finally:
            header[SEQ] += np.uint64(1)  # type: ignore[index]  # even: complete
        header[PUBLISHED] += np.uint64(1)  # type: ignore[index]
        now, period = time.monotonic(), 1.0 / self.fps
        self._next_publish = max(self._next_publish + period, now - period / 2)  # fps on average, without drift
        self.frames_published += 1
        return True

    # ---- end ----------------------------------------------------------------------------------------------------

    def _release_views(self) -> None:
        self._header = self._ring = None
        self._slots = {}

    def close(self) -> None:
        """Stop the server process (it closes every connection) and free the port and the shared memory.
        Idempotent."""
        self._release_views()
        if hasattr(self, "_helper"):
            self._helper.stop(5.0)

    def __enter__(self) -> WebServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def layout_for(cams: Sequence[tuple[str, Mapping[str, tuple[tuple[int, ...], Any]], tuple[float, float] | None]],
               num_envs: int = 1) -> FrameLayout:
    """A :class:`FrameLayout` from ``[(camera, {modality: (shape, dtype)}, (near, far)), ...]`` (modalities outside
    :data:`MODALITIES` dropped, cameras left without any dropped)."""
    slots, ranges = [], {}
    for name, mods, near_far in cams:
        for mod in MODALITIES:
            if mod in mods:
                shape, dtype = mods[mod]
                slots.append(Slot(name, mod, tuple(int(x) for x in shape), np.dtype(dtype).str))
        if near_far is not None:
            ranges[name] = (float(near_far[0]), float(near_far[1]))
    return FrameLayout(num_envs, tuple(slots), ranges)
