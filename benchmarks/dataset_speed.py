"""Dataset recording and replay against live stepping with the same rig, and the datasets' sizes (see
``pixelrig.tools.bench.datasets``).

    .venv/bin/python benchmarks/dataset_speed.py [--renderers tiny,gl] [--episodes 8] [--steps 50] [--repeats 3]
                                                 [--json out/dataset_speed.json]
"""

import sys

from pixelrig.tools.bench.datasets import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
