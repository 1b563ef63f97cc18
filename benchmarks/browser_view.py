"""Steps per second with a BrowserView and 0, 1 and 10 viewers, against the same env without the view, in one run.

    .venv/bin/python benchmarks/browser_view.py [--env pixelrig/PandaPush-v0] [--chunk 60] [--pairs 30]
                                                [--viewers 0,1,10] [--kind websocket|chromium] [--json out.json]

One env (under PixelObs, its default rig) is measured in pairs of chunks: ``chunk`` steps without the view (the wrapped
env stepped directly) and the same ``chunk`` steps through the view, in alternating order. Every chunk starts from
the same snapshot with the same seeded actions, so both halves of a pair do exactly the same simulation work, a
fraction of a second apart: a shared machine's drifting load falls on both. For each number of viewers (connected
for the whole series), the ratio is the median over the pairs of (steps/s with the view) / (steps/s without), by the
wall clock and by this process's CPU time. Viewers run in another process: ``websocket`` viewers are aiohttp clients
that take every frame the server sends (what a remote browser costs this machine: the server's side only);
``chromium`` viewers are windows of one headless Chromium (/usr/bin/chromium, opened through the DevTools protocol)
on this machine, whose decoding and drawing compete with the run for the same cores. CPU use of the server and the
viewers is read from /proc. Last, the view's own cost in the stepping process is measured directly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


# ---- the viewer process ----------------------------------------------------------------------------------------------

async def _websocket_viewers(url: str, n: int) -> list[int]:
    import aiohttp

    parts = urllib.parse.urlsplit(url)
    ws_url = urllib.parse.urlunsplit(("ws", parts.netloc, "/ws", parts.query, ""))
    counts = [0] * n
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(sys.stdin.fileno(), stop.set)  # a line (or end of input) on stdin: stop

    async def one(i: int, session: aiohttp.ClientSession) -> None:
        async with session.ws_connect(ws_url) as ws:
            while not stop.is_set():
                try:
                    msg = await ws.receive(timeout=0.2)
                except TimeoutError:
                    continue
                if msg.type == aiohttp.WSMsgType.BINARY:
                    counts[i] += 1
                elif msg.type != aiohttp.WSMsgType.TEXT:
                    return

    start: list[int] = []

    async def announce() -> None:
        deadline = time.monotonic() + 30
        while min(counts) == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        start.extend(counts)
        print("ready", flush=True)

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(announce(), *(one(i, session) for i in range(n)))
    return [b - a for a, b in zip(start, counts, strict=True)]


async def _chromium_viewers(url: str, n: int) -> list[int]:
    """``n`` tabs of one headless Chromium on the page, opened and read through the DevTools protocol directly (a
    test driver such as Playwright subscribes to every WebSocket frame and would add its own cost to the browser's)."""
    import itertools
    import re
    import signal
    import tempfile

    import aiohttp

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    with tempfile.TemporaryDirectory() as profile:
        proc = await asyncio.create_subprocess_exec(
            CHROMIUM, "--headless", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0",
            "about:blank", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, start_new_session=True)
        try:
            endpoint = None
            while endpoint is None:
                line = (await asyncio.wait_for(proc.stderr.readline(), timeout=60)).decode()  # type: ignore[union-attr]
                if not line:
                    raise RuntimeError("chromium exited before it listened")
                if match := re.search(r"DevTools listening on (ws://\S+)", line):
                    endpoint = match.group(1)
            async with aiohttp.ClientSession() as session, session.ws_connect(endpoint, max_msg_size=0) as cdp:
                ids = itertools.count(1)

                async def call(method: str, params: dict | None = None, session_id: str | None = None) -> dict:
                    i = next(ids)
                    message = {"id": i, "method": method, "params": params or {}}
                    if session_id:
                        message["sessionId"] = session_id
                    await cdp.send_json(message)
                    while True:  # events of attached pages may come first
                        reply = await cdp.receive_json(timeout=60)
                        if reply.get("id") == i:
                            if "error" in reply:
                                raise RuntimeError(f"{method}: {reply['error']}")
                            return reply["result"]

                targets = [(await call("Target.createTarget", {"url": url, "newWindow": True}))["targetId"]
                           for _ in range(n)]  # a window each: a background tab would be throttled
                sessions = [(await call("Target.attachToTarget", {"targetId": t, "flatten": True}))["sessionId"]
                            for t in targets]

                async def frames() -> list[int]:
                    out = []
                    for sid in sessions:
                        result = await call("Runtime.evaluate", {"expression": "Number(document.getElementById("
                                                                 "'frame')?.dataset.frames || 0)",
                                                                 "returnByValue": True}, sid)
                        out.append(int(result["result"].get("value") or 0))
                    return out

                deadline = time.monotonic() + 60
                while min(await frames()) == 0 and time.monotonic() < deadline:
                    await asyncio.sleep(0.2)
                start = await frames()
                loop.add_reader(sys.stdin.fileno(), stop.set)
                print("ready", flush=True)
                await stop.wait()
                end = await frames()
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # the browser and its helper processes
            await proc.wait()
    return [b - a for a, b in zip(start, end, strict=True)]


def viewer_process(kind: str, url: str, n: int) -> int:
    """Body of the viewer process: connect, say ``ready`` once every viewer has a frame, count frames from then until
    stdin says stop, print the counts as JSON."""
    viewers = _websocket_viewers if kind == "websocket" else _chromium_viewers
    counts = asyncio.run(viewers(url, n))
    print(json.dumps({"frames": counts}), flush=True)
    return 0


class Viewers:
    """``n`` viewers of ``kind`` in a child process (none for n = 0)."""

    def __init__(self, kind: str, url: str, n: int) -> None:
        self.n, self.proc, self.result = n, None, {}
        if n:
            self.proc = subprocess.Popen([sys.executable, __file__, "--viewer-process", kind, url, str(n)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def __enter__(self) -> Viewers:
        if self.proc is not None:
            line = self.proc.stdout.readline().strip()  # type: ignore[union-attr]
            if line != "ready":
                self.proc.kill()
                raise RuntimeError(f"the viewer process did not start: {line!r}")
            self.started = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is None:
            return
        self.proc.stdin.write("stop\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        out, _ = self.proc.communicate(timeout=60)
        self.result = json.loads(out.strip().splitlines()[-1])


# ---- the run -----------------------------------------------------------------------------------------------------

def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds so far of a process and every process below it (Linux /proc; 0 elsewhere): a
    viewer process's Chromium runs in its grandchildren."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            parents[int(entry.name)] = int(fields[1])
    tree, grew = {pid}, True
    while grew:
        below = {p for p, parent in parents.items() if parent in tree} - tree
        tree |= below
        grew = bool(below)
    total = 0
    for p in tree:
        fields = _stat(p)
        if fields is not None:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def run_chunk(env, steps: int, seed: int = 0) -> tuple[float, float]:
    """Steps per second of ``env`` over ``steps`` seeded random actions, by the wall clock and per CPU second of this
    process."""
    env.action_space.seed(seed)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        env.step(env.action_space.sample())
    return steps / (time.perf_counter() - wall), steps / max(time.process_time() - cpu, 1e-9)


def view_overhead(space, obs, fps: float, steps: int = 20000, frames: int = 500,
                  rounds: int = 5) -> tuple[float, float]:
    """The view's own CPU cost in the stepping process: microseconds of bookkeeping per step (over an env that returns
    one fixed observation at once, so that what is left of a step is the wrapper's), and microseconds per frame
    copied to the server (at most ``fps`` a second, only while somebody watches). Viewers add nothing here: they are
    the server process's."""
    import gymnasium as gym

    from pixelrig import BrowserView

    class ReplayEnv(gym.Env):
        """One observation, returned by every reset and step."""

        def __init__(self) -> None:
            self.observation_space, self.action_space = space, gym.spaces.Discrete(1)

        def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
            super().reset(seed=seed)
            return obs, {}

        def step(self, action: int) -> tuple:
            return obs, 0.0, False, False, {}

    plain, view = ReplayEnv(), BrowserView(ReplayEnv(), fps=fps)
    bookkeeping, copies = [], []
    try:
        view.reset(seed=0)
        for _ in range(rounds):
            start = time.process_time()
            for _ in range(steps):
                plain.step(0)
            mid = time.process_time()
            for _ in range(steps):
                view.step(0)  # nobody watches: no frame is taken
            end = time.process_time()
            bookkeeping.append(((end - mid) - (mid - start)) / steps * 1e6)
            start = time.process_time()
            for _ in range(frames):
                view.server.publish(obs, force=True)
            copies.append((time.process_time() - start) / frames * 1e6)
    finally:
        view.close()
    return statistics.median(bookkeeping), statistics.median(copies)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--viewer-process"]:
        return viewer_process(argv[1], argv[2], int(argv[3]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="pixelrig/PandaPush-v0")
    parser.add_argument("--chunk", type=int, default=60, help="steps per chunk (default: 60; within one episode)")
    parser.add_argument("--pairs", type=int, default=30, help="pairs of chunks per viewer count (default: 30)")
    parser.add_argument("--viewers", default="0,1,10", help="viewer counts (default: 0,1,10)")
    parser.add_argument("--kind", choices=("websocket", "chromium"), default="websocket")
    parser.add_argument("--fps", type=float, default=15.0)
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)

    import gymnasium as gym

    import pixelrig  # noqa: F401  (registers the env ids)
    from pixelrig import BrowserView, PixelObs, restore, snapshot

    counts = [int(x) for x in args.viewers.split(",")]
    env = PixelObs(gym.make(args.env))
    view = BrowserView(env, fps=args.fps)
    space, (first_obs, _) = env.observation_space, env.reset(seed=0)
    start_state = snapshot(env)
    server_pid = view.server._proc.pid
    results: dict[str, dict] = {}
    try:
        for n in counts:
            name = f"{n} viewer{'s' if n != 1 else ''}"
            plain, viewed, plain_cpu, viewed_cpu, view_time = [], [], [], [], 0.0
            with Viewers(args.kind, view.url, n) as viewers:
                pid = viewers.proc.pid if viewers.proc is not None else None
                cpu0, vcpu0, t0 = cpu_seconds(server_pid), cpu_seconds(pid) if pid else 0.0, time.perf_counter()
                for k in range(args.pairs):
                    for which in (("plain", "view") if k % 2 == 0 else ("view", "plain")):
                        restore(env, start_state)
                        wall, cpu = run_chunk(env if which == "plain" else view, args.chunk)
                        (plain if which == "plain" else viewed).append(wall)
                        (plain_cpu if which == "plain" else viewed_cpu).append(cpu)
                        if which == "view":
                            view_time += args.chunk / wall
                elapsed = time.perf_counter() - t0
                server = (cpu_seconds(server_pid) - cpu0) / elapsed
                viewer = (cpu_seconds(pid) - vcpu0) / elapsed if pid else 0.0
            frames = statistics.mean(viewers.result["frames"]) / view_time if viewers.result else None
            results[name] = {
                "steps_per_s_without": statistics.median(plain), "steps_per_s_with": statistics.median(viewed),
                "ratio": statistics.median(v / p for v, p in zip(viewed, plain, strict=True)),
                "cpu_ratio": statistics.median(v / p for v, p in zip(viewed_cpu, plain_cpu, strict=True)),
                "frames_per_s_per_viewer": frames, "server_cpu": server, "viewers_cpu": viewer,
                "all_with": viewed, "all_without": plain}
            r = results[name]
            print(f"{name}: {r['steps_per_s_with']:.1f} vs {r['steps_per_s_without']:.1f} steps/s, ratio "
                  f"{r['ratio']:.3f}", file=sys.stderr, flush=True)
    finally:
        view.close()

    print(f"\n{args.env} under PixelObs (its default rig), BrowserView fps={args.fps:g}; {args.kind} viewers in "
          f"another process; {args.pairs} pairs of {args.chunk}-step chunks per row; {os.cpu_count()} CPUs")
    print(f"{'':<12}{'steps/s without':>16}{'with':>8}{'ratio':>8}{'CPU-time ratio':>16}{'frames/s per viewer':>21}"
          f"{'server CPU':>12}{'viewers CPU':>13}")
    for name, r in results.items():
        frames = f"{r['frames_per_s_per_viewer']:.1f}" if r["frames_per_s_per_viewer"] is not None else "-"
        viewers_cpu = f"{100 * r['viewers_cpu']:.0f}%" if r["frames_per_s_per_viewer"] is not None else "-"
        print(f"{name:<12}{r['steps_per_s_without']:>16.1f}{r['steps_per_s_with']:>8.1f}{r['ratio']:>8.3f}"
              f"{r['cpu_ratio']:>16.3f}{frames:>21}{100 * r['server_cpu']:>11.0f}%{viewers_cpu:>13}")
    per_step, per_frame = view_overhead(space, first_obs, args.fps)
    rate = statistics.median(r["steps_per_s_without"] for r in results.values())
    share = (rate * per_step + args.fps * per_frame) / 1e6
    print(f"\nthe view's own CPU cost in the stepping process: {per_step:.2f} us of bookkeeping per step, "
          f"{per_frame:.0f} us per frame copied to the server ({args.fps:g} frames/s while watched): "
          f"{100 * share:.2f}% of a core at {rate:.0f} steps/s")
    if args.json:
        Path(args.json).write_text(json.dumps({"env": args.env, "kind": args.kind, "fps": args.fps,
                                               "view_us_per_step": per_step, "view_us_per_frame": per_frame,
                                               "view_share_of_a_core": share,
                                               "pairs": args.pairs, "chunk": args.chunk,
                                               "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
