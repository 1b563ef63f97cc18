"""The real GPU check for a machine with NVIDIA GPUs (run it where one is lent; CI has none).

    .venv/bin/python benchmarks/gpu_check.py

Prints the EGL devices with their CUDA ordinals, and for every CUDA device: the EGL index pixelrig maps it to,
and what a worker pinned to it (gpu=i, in its own process) renders -- the GL renderer string, a check that the
frame is right, and rig frames/s at 84x84 and 256x256 (3 cameras, rgb+depth+label).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

WORKER = r"""
import json, os, sys, time
import gymnasium as gym
import pixelrig
from pixelrig.tools.bench.common import rig_cameras
gpu = int(sys.argv[1])
env = gym.make("pixelrig/PandaPush-v0", renderer="egl", gpu=gpu)
out = {"gpu": gpu, "EGL_VISIBLE_DEVICES": os.environ.get("EGL_VISIBLE_DEVICES"),
       "gl": env.unwrapped.render_backend.gl_info}
for size in (84, 256):
    w = pixelrig.PixelObs(env, cams=rig_cameras(env, size, 3, ("rgb", "depth", "label")), pixels_only=True)
    obs, _ = w.reset(seed=0)
    out[f"frame_ok_{size}"] = bool(obs["front0/rgb"].std() > 5 and (obs["front0/label"] >= 0).any())
    start = time.perf_counter()
    for _ in range(50):
        w.rig.render()
    out[f"rig_fps_{size}"] = round(50 / (time.perf_counter() - start), 1)
print("RESULT " + json.dumps(out))
"""


def main() -> int:
    from pixelrig.render.egl_devices import describe, egl_index_for, list_egl_devices

    devices = list_egl_devices()
    print("EGL devices:", json.dumps(describe(devices), indent=1))
    cuda = sorted(d.cuda for d in devices if d.cuda is not None)
    if not cuda:
        print("no CUDA EGL device here: nothing more to check")
        return 1
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    for gpu in range(len(cuda) if visible is None else len(visible.split(","))):
        print(f"cuda:{gpu} -> EGL index {egl_index_for(devices, gpu=gpu, cuda_visible=visible)}")
        proc = subprocess.run([sys.executable, "-c", WORKER, str(gpu)], capture_output=True, text=True, timeout=600)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        print(lines[-1][7:] if lines else f"worker failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
