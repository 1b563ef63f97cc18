"""Vector scaling: make_vec with 1 vs 2 async workers (pixels included), env steps/s and the ratio, in one run.

    .venv/bin/python benchmarks/vector_scaling.py [--envs pixelrig/PandaPush-v0,pixelrig/CartPole-v0]
"""

import sys

from pixelrig.tools.bench.vector import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
