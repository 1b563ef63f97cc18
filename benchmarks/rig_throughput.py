"""Rig throughput vs raw pybullet getCameraImage, measured in the same run.

    .venv/bin/python benchmarks/rig_throughput.py [--scenes pandapush,cartpole] [--size 84] [--json out.json]

Same as `pixelrig bench`; see pixelrig/tools/bench/rig.py for what each column measures.
"""

import sys

from pixelrig.tools.bench.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
