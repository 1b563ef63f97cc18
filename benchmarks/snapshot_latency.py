"""Snapshot/restore latency and size vs pybullet's saveBullet + restoreState(fileName), measured in one run.

    .venv/bin/python benchmarks/snapshot_latency.py [--envs pixelrig/HalfCheetah-v0,pixelrig/PandaPush-v0]
"""

import sys

from pixelrig.tools.bench.snapshot import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
