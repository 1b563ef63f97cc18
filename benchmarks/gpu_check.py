"""The real GPU check for a machine with NVIDIA GPUs (run it where one is lent; CI has none).

    .venv/bin/python benchmarks/gpu_check.py

Prints the EGL devices with their CUDA ordinals, and for every CUDA device: the EGL index pixelrig maps it to,
and what a worker pinned to it (gpu=i, in its own process) renders with each renderer -- pybullet's EGL plugin,
pixelrig's gl and TinyRenderer as the reference -- the GL renderer string, a check that the frame is right, and
rig frames/s at 84x84 and 256x256 (3 cameras, rgb+depth+label), all in one run. Then batched scaling on the
default device: env steps/s of 1, 4, 16 and 64 PandaPush envs drawn in one gl pass, against TinyRenderer and the
physics-only ceiling (pixelrig.tools.bench.batched). ``--json PATH`` writes everything.
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
gpu, renderer = int(sys.argv[1]), sys.argv[2]
env = gym.make("pixelrig/PandaPush-v0", renderer=renderer, gpu=gpu)
backend = env.unwrapped.render_backend
if renderer == "gl":
    from pixelrig.render.gl import gl_info
    info = gl_info()
else:
    info = getattr(backend, "gl_info", {})
out = {"gpu": gpu, "renderer": renderer, "EGL_VISIBLE_DEVICES": os.environ.get("EGL_VISIBLE_DEVICES"), "gl": info}
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


def main(argv: list[str] | None = None) -> int:
    import argparse

    from pixelrig.render.egl_devices import describe, egl_index_for, list_egl_devices

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", default=None, help="write every result here")
    parser.add_argument("--counts", default="1,4,16,64", help="batched env counts")
    args = parser.parse_args(argv)
    devices = list_egl_devices()
    print("EGL devices:", json.dumps(describe(devices), indent=1))
    report: dict = {"devices": describe(devices), "workers": []}
    cuda = sorted(d.cuda for d in devices if d.cuda is not None)
    if not cuda:
        print("no CUDA EGL device here: nothing more to check")
        return 1
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    for gpu in range(len(cuda) if visible is None else len(visible.split(","))):
        print(f"cuda:{gpu} -> EGL index {egl_index_for(devices, gpu=gpu, cuda_visible=visible)}")
        for renderer in ("egl", "gl", "tiny"):  # one process each: pybullet's EGL plugin and gl cannot share one
            proc = subprocess.run([sys.executable, "-c", WORKER, str(gpu), renderer], capture_output=True, text=True,
                                  timeout=600)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            result = json.loads(lines[-1][7:]) if lines else {"gpu": gpu, "renderer": renderer,
                                                                "error": proc.stderr[-2000:]}
            report["workers"].append(result)
            print(json.dumps(result))
    from pixelrig.tools.bench.batched import format_batched, measure

    report["batched"] = measure(counts=[int(n) for n in args.counts.split(",")], steps=20, repeats=3)
    print(format_batched(report["batched"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
