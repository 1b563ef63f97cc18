"""RLlib scaling: env steps/s sampled by RLlib's env runners (1 and 2 runners x 1 and 8 batched envs each) against
plain make_vec(..., vectorization_mode="batched") stepping, in one run, and the cluster projection.

    .venv/bin/python benchmarks/rllib_scaling.py [--runners 1,2] [--envs 1,8] [--steps 400] [--repeats 3]
"""

import sys

from pixelrig.tools.bench.rllib import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
