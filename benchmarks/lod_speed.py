"""Level-of-detail speed: PandaPush 3-camera rig fps at each visual_detail and the ratio to "full", in one run.

    .venv/bin/python benchmarks/lod_speed.py [--sizes 84,128] [--renderers tiny,egl]
"""

import sys

from pixelrig.tools.bench.lod import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
