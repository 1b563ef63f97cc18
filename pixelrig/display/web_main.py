"""Child-process body of a pixelrig web view (aiohttp), started by :class:`pixelrig.display.web.WebServer` through
:mod:`pixelrig.system.process` (``python -m``).

Protocol: the config is a dict (the listening socket's inherited file descriptor, the shared memory block's name,
the frame layout, the token, fps, title, JPEG quality). It answers ready once it serves (an error otherwise), then
serves until its connection ends (``stop()``, or the parent's death) and exits, which closes every connection and
frees the port. The token travels in the config, never in argv (other users of the machine can read a process's
argv).

Everything here only reads what the parent publishes: the shared block's header (counters; the frame sequence
lock), its ring of episode returns and its frame slots. The one word it writes back is the number of viewers,
which the parent reads to skip publishing frames nobody would see. Routes: ``/`` (the page), ``/ws`` (the
WebSocket stream) and ``/frame.jpg`` (the newest frame, for scripts); everything else is 404, and no route takes
anything that reaches the simulation.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import math
import os
import socket
import threading
import time
import types
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from typing import Any

from pixelrig.system.process import attach_shared, ready, serve

DUTY = 0.3  # the most of one core spent colouring, tiling and encoding frames (the rest of the time: dropped)
MAX_RETURNS = 100_000  # episode returns kept for the chart
MAX_RETURNS_PER_MESSAGE = 10_000
HEARTBEAT_S = 10.0  # a browser that stops answering pings is dropped
LEASE_S = 2.0  # a /frame.jpg request counts as a viewer this long
MAX_VIEWERS = 64  # more WebSocket viewers at once are refused (503): each costs the server a little
SEND_BUFFER = 128 * 1024  # kernel send buffer per viewer: a slow browser waits for the newest frame, not a backlog


class Client:
    """One WebSocket viewer: which view it shows and what it was last sent."""

    def __init__(self, view: str) -> None:
        self.view = view
        self.sent_frame = 0
        self.sent_steps = -1
        self.sent_episodes = -1
        self.returns_sent = 0


class Hub:
    """The newest frame and counters, read from shared memory, composed and encoded once per frame for every view
    somebody watches; viewers wait on it for changes."""

    def __init__(self, web: types.ModuleType, layout: Any, buf: Any, fps: float, quality: int) -> None:
        import numpy as np

        self.web, self.layout, self.fps, self.quality = web, layout, fps, quality
        self.header, self.ring, self.shared = layout.arrays(buf)
        self.local = {k: np.empty_like(v) for k, v in self.shared.items()}
        self.seen_seq = 0
        self.frame_id = 0  # frames read here
        self.frame_step = 0
        self.jpegs: dict[str, tuple[int, bytes]] = {}
        self.steps = self.episodes = 0
        self.returns: list[float] = []
        self.returns_offset = 0  # index of returns[0] among every episode
        self.rate = 0.0
        self._rate_sample = (time.monotonic(), 0)
        self.clients: set[Client] = set()
        self.lease_until = 0.0
        self.cooldown_until = 0.0
        self._waiter: asyncio.Future | None = None
        self._notified = (-1, -1, -1)

    # ---- reading the parent's block -----------------------------------------------------------------------------

    def _read_counters(self, now: float) -> None:
        web = self.web
        self.steps = int(self.header[web.STEPS])
        episodes = int(self.header[web.EPISODES])
        first = max(self.episodes, episodes - web.RING)
        if first > self.episodes:  # more episodes ended between two reads than the ring holds: restart the chart
            self.returns, self.returns_offset = [], first
        for n in range(first, episodes):
            self.returns.append(float(self.ring[n % web.RING]))
        self.episodes = episodes
        if len(self.returns) > MAX_RETURNS:
            drop = len(self.returns) - MAX_RETURNS
            del self.returns[:drop]
            self.returns_offset += drop
        t0, s0 = self._rate_sample
        if now - t0 >= 1.0:
            self.rate = (self.steps - s0) / (now - t0)
            self._rate_sample = (now, self.steps)

    def _read_frame(self) -> bool:
        """Copy the newest complete frame out of shared memory (the sequence lock: retry later when torn)."""
        import numpy as np

        web = self.web
        seq = int(self.header[web.SEQ])
        if seq == self.seen_seq or seq % 2:
            return False
        for key, src in self.shared.items():
            np.copyto(self.local[key], src)
        step = int(self.header[web.FRAME_STEP])
        if int(self.header[web.SEQ]) != seq:
            return False  # the parent wrote meanwhile: take the next one
        self.seen_seq, self.frame_step = seq, step
        self.frame_id += 1
        return True

    def jpeg_for(self, view: str) -> bytes | None:
        """The current frame in ``view``, composed and encoded once per frame and view."""
        if self.frame_id == 0:
            return None
        cached = self.jpegs.get(view)
        if cached is None or cached[0] != self.frame_id:
            image = self.web.compose(self.local, self.layout, view)
            cached = (self.frame_id, self.web.encode_jpeg(image, self.quality))
            self.jpegs[view] = cached
        return cached[1]

    def poll(self) -> None:
        """Read counters, publish the viewer count, take a new frame when somebody watches and the CPU budget
        allows, and wake the viewers when anything changed."""
        now = time.monotonic()
        self._read_counters(now)
        viewers = len(self.clients) + (1 if now < self.lease_until else 0)
        self.header[self.web.VIEWERS] = viewers
        if viewers and now >= self.cooldown_until and self._read_frame():
            start = time.perf_counter()
            for view in {c.view for c in self.clients}:
                self.jpeg_for(view)
            cost = time.perf_counter() - start
            self.cooldown_until = now + cost * (1.0 / DUTY - 1.0)
        state = (self.steps, self.episodes, self.frame_id)
        if state != self._notified:
            self._notified = state
            self.notify()

    # ---- waking viewers -----------------------------------------------------------------------------------------

    def notify(self) -> None:
        """Wake every viewer waiting in :meth:`changed`."""
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        self._waiter = None

    async def changed(self) -> None:
        """Return at the next :meth:`notify`."""
        if self._waiter is None:
            self._waiter = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._waiter)  # a viewer leaving must not cancel the others' wait

    def stats_for(self, client: Client) -> dict[str, Any]:
        """The counters, and the episode returns this viewer has not been sent yet."""
        start = max(client.returns_sent, self.returns_offset, self.episodes - MAX_RETURNS_PER_MESSAGE)
        new = self.returns[start - self.returns_offset:]
        client.returns_sent = self.episodes
        return {"type": "stats", "steps": self.steps, "episodes": self.episodes, "frame_step": self.frame_step,
                "frame": self.frame_id, "steps_per_s": round(self.rate, 2), "viewers": len(self.clients),
                "returns_from": start, "returns": [r if math.isfinite(r) else None for r in new]}


def make_app(config: dict[str, Any], hub: Hub, page: types.ModuleType) -> Any:
    """The aiohttp application: the page, the stream, the newest frame, behind the token or loopback guard."""
    from aiohttp import WSMsgType, web

    token: str | None = config["token"]
    views = list(hub.layout.views)
    hello = json.dumps({"type": "hello", "title": config["title"], "views": views, "view": views[0],
                        "fps": hub.fps, "num_envs": hub.layout.num_envs, "cameras": hub.layout.cameras})
    common = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
              "X-Frame-Options": "DENY"}

    def refuse(status: int, text: str) -> web.Response:
        return web.Response(status=status, text=text + "\n", headers=common)

    @web.middleware
    async def guard(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                    ) -> web.StreamResponse:
        if token is not None:
            given = request.query.get("token")
            if given is None:
                return refuse(401, "401: this page needs its token: open the URL the view printed (...?token=...)")
            if not hmac.compare_digest(given.encode(), token.encode()):
                return refuse(403, "403: wrong token: open the URL the view printed (...?token=...)")
        elif (request.url.host or "").strip("[]").lower() not in hub.web.LOOPBACK_NAMES:
            # a loopback page reached under another name: DNS rebinding, or a proxy exposing it
            return refuse(403, "403: this page serves loopback names only: open http://127.0.0.1:PORT/ (through an "
                               "SSH tunnel from elsewhere)")
        origin = request.headers.get("Origin")
        if origin is not None and request.path == "/ws" and origin.split("://", 1)[-1].lower() != request.host.lower():
            return refuse(403, "403: a page of another site may not read this stream")
        response = await handler(request)
        if not response.prepared:
            response.headers.update(common)
        return response

    async def index(request: web.Request) -> web.Response:
        return web.Response(body=page.INDEX_HTML.encode(), content_type="text/html", charset="utf-8",
                            headers={"Content-Security-Policy": page.CSP})

    async def frame_jpg(request: web.Request) -> web.Response:
        view = request.query.get("view", views[0])
        if view not in views:
            return refuse(404, f"404: no view {view!r} here; views: {views}")
        asked = hub.frame_id
        hub.lease_until = time.monotonic() + LEASE_S
        deadline = time.monotonic() + max(0.25, 3.0 / hub.fps)  # a frame published after the request, if it comes
        while hub.frame_id == asked and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        data = hub.jpeg_for(view)
        if data is None:
            return refuse(503, "503: no frame yet (the env has not been reset or stepped)")
        return web.Response(body=data, content_type="image/jpeg", headers={"X-Pixelrig-Step": str(hub.frame_step)})

    async def write_loop(ws: web.WebSocketResponse, client: Client) -> None:
        """Send this browser each new frame with the counters (frames come at most fps a second: the parent
        publishes no faster), or the counters alone when no frame came for two periods (rendering paused, say).
        A browser that is slow to take a frame holds up only this loop: it gets the newest frame when it is ready."""
        period = 1.0 / hub.fps
        last = -math.inf
        try:
            while not ws.closed:
                fresh = hub.frame_id != client.sent_frame
                if fresh:
                    earliest = last + period / 2  # caps bursts; the publisher's pace sets the rate
                elif (hub.steps, hub.episodes) != (client.sent_steps, client.sent_episodes):
                    earliest = last + 2 * period
                else:
                    await hub.changed()  # nothing new for this browser
                    continue
                wait = earliest - time.monotonic()
                if wait > 0:
                    try:
                        await asyncio.wait_for(hub.changed(), timeout=wait)  # a frame may come before then
                    except TimeoutError:
                        pass
                    continue
                last = time.monotonic()
                client.sent_steps, client.sent_episodes = hub.steps, hub.episodes
                await ws.send_str(json.dumps(hub.stats_for(client)))
                if fresh:
                    client.sent_frame = hub.frame_id
                    data = hub.jpeg_for(client.view)
                    if data is not None:
                        await ws.send_bytes(data)  # waits while this browser is slow: only it misses frames
        except (ConnectionError, RuntimeError):
            pass  # the browser went away mid-send
        finally:
            if not ws.closed:
                await ws.close()

    async def stream(request: web.Request) -> web.StreamResponse:
        if len(hub.clients) >= MAX_VIEWERS:
            return refuse(503, f"503: {MAX_VIEWERS} viewers already watch this page")
        ws = web.WebSocketResponse(heartbeat=HEARTBEAT_S, compress=False, max_msg_size=4096, timeout=1.0)
        await ws.prepare(request)
        sock = request.transport.get_extra_info("socket") if request.transport is not None else None
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        client = Client(views[0])
        await ws.send_str(hello)
        hub.clients.add(client)
        request.app["sockets"].add(ws)
        writer = asyncio.create_task(write_loop(ws, client))
        try:
            async for msg in ws:  # the page only ever says which view it shows
                if msg.type == WSMsgType.TEXT:
                    try:
                        view = json.loads(msg.data).get("view")
                    except (ValueError, AttributeError):
                        continue
                    if view in views and view != client.view:
                        client.view, client.sent_frame = view, -1
                        hub.notify()
        finally:
            writer.cancel()
            hub.clients.discard(client)
            request.app["sockets"].discard(ws)
        return ws

    async def close_sockets(app: web.Application) -> None:
        await asyncio.gather(*(ws.close(code=1001, message=b"server closed") for ws in list(app["sockets"])),
                             return_exceptions=True)

    app = web.Application(middlewares=[guard], client_max_size=4096)
    app["sockets"] = set()
    app.on_shutdown.append(close_sockets)
    app.router.add_get("/", index)
    app.router.add_get("/ws", stream)
    app.router.add_get("/frame.jpg", frame_jpg)
    return app


async def serve_page(conn: Connection, config: dict[str, Any], hub: Hub, page: types.ModuleType,
                     stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set, then close every connection and the listening socket."""
    from aiohttp import web

    runner = web.AppRunner(make_app(config, hub, page), handle_signals=False, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    sock = socket.socket(fileno=config["fd"])
    site = web.SockSite(runner, sock)
    await site.start()
    ready(conn)
    period = max(0.002, min(0.01, 0.25 / hub.fps))
    try:
        while not stop.is_set():
            hub.poll()
            try:
                await asyncio.wait_for(stop.wait(), timeout=period)
            except TimeoutError:
                pass
    finally:
        await asyncio.wait_for(runner.cleanup(), timeout=5.0)
        sock.close()


def main(conn: Connection, config: dict[str, Any]) -> int:
    """Serve the page until the connection ends."""
    try:
        os.nice(10)  # on a busy machine the page loses frames, not the training steps
    except OSError:
        pass
    import aiohttp  # noqa: F401  (missing: the parent raises DependencyNotInstalled naming the fix)

    from pixelrig.display import web
    from pixelrig.display import web_page as page

    layout = web.FrameLayout.from_json(config["layout"])
    shm = attach_shared(config["shm"])  # the parent owns and frees it
    hub = Hub(web, layout, shm.buf, float(config["fps"]), int(config["jpeg_quality"]))

    async def run() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        def read_commands() -> None:
            try:
                while True:
                    conn.recv()  # nothing is said after ready: this waits for the end
            except (EOFError, OSError):
                pass  # stop(), or the parent is gone
            loop.call_soon_threadsafe(stop.set)

        threading.Thread(target=read_commands, daemon=True).start()
        await serve_page(conn, config, hub, page, stop)

    asyncio.run(run())
    hub.header = hub.ring = None
    hub.shared = hub.local = {}
    try:
        shm.close()
    except BufferError:
        pass
    return 0


if __name__ == "__main__":
    serve(main)
