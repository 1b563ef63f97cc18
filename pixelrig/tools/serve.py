"""``pixelrig serve``: a robot file or an env id, run and shown on a web page (``pixelrig view``, in a browser)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from pixelrig.cameras.rigfile import load_rig
from pixelrig.tools.view import hold_action, make_env
from pixelrig.wrappers.browser_view import BrowserView
from pixelrig.wrappers.pixel_obs import PixelObs


def tunnel_hint(port: int) -> str:
    """How to open a loopback page from another machine."""
    return (f"from another machine: ssh -L {port}:127.0.0.1:{port} <this host>, then open "
            f"http://localhost:{port}/")


def run_server(source: str, cams: str | Path | None = None, steps: int | None = None, port: int = 8000,
               host: str = "127.0.0.1", fps: float = 15.0, policy: str = "hold", renderer: str | None = None,
               seed: int = 0, realtime: bool = True, announce: Callable[[str], None] | None = None) -> int:
    """Run ``source`` under a :class:`BrowserView` until interrupted (Ctrl-C) or for ``steps`` steps.

    Args:
        source: a registered env id, or a robot file (URDF/SDF/MJCF, also looked up in pybullet_data).
        cams: a JSON or TOML rig file; default: the env's own camera rig.
        steps: stop after this many steps (default: run until Ctrl-C).
        port, host, fps: the page's (see :class:`BrowserView`).
        policy: "hold" (hold the pose / zero torque) or "random".
        renderer: any renderer (default: the env's choice).
        seed: the first reset's seed.
        realtime: step at the env's own pace (``dt`` per step), as ``pixelrig view`` does; False: as fast as it goes.
        announce: called with the lines to show the user once the page is up (default: print them to stdout).

    Returns:
        The number of steps run.
    """
    say = announce or (lambda line: print(line, flush=True))
    env = make_env(source, renderer)
    try:
        env = PixelObs(env, cams=load_rig(cams) if cams is not None else None)
        env = BrowserView(env, port=port, host=host, fps=fps, title=f"pixelrig serve: {source}")
    except BaseException:
        env.close()
        raise
    n = 0
    try:
        say(f"serving {source} at {env.url}")
        if env.token is None:
            say(tunnel_hint(env.port))
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        dt = float(getattr(env.unwrapped, "dt", 0.0))
        while steps is None or n < steps:
            start = time.monotonic()
            result = env.step(hold_action(env, policy))
            n += 1
            if result[2] or result[3]:
                env.reset()
            if realtime:
                time.sleep(max(0.0, dt - (time.monotonic() - start)))
    except KeyboardInterrupt:
        print("", file=sys.stderr)
    finally:
        env.close()
    return n
