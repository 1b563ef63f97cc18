"""Batched scaling: gl make_vec(vectorization_mode="batched") env steps/s at 1, 4, 16, 64 envs against TinyRenderer
PixelObs envs and the physics-only ceiling, in one run.

    .venv/bin/python benchmarks/batched_scaling.py [--counts 1,4,16,64] [--steps 20] [--repeats 3]
"""

import sys

from pixelrig.tools.bench.batched import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
