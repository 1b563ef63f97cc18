"""Rendering against physics: per manipulation task with its default rig (three 84² cameras, rgb+depth+label), the
time a step spends rendering over the time it spends in physics on tiny, gl and gl batched (16 envs), measured in
one run, and 16 batched envs' steps/s against a single gl env's.

    .venv/bin/python benchmarks/render_cost.py [--tasks pixelrig/PandaPush-v0,...] [--steps 20] [--repeats 5]
        [--envs 16] [--quick] [--out docs/render_cost.json]

Prints a table (medians over the repeats) and, with --out, writes JSON (docs/render_cost.json is what
docs/benchmark.md's "Rendering against physics" table shows).
"""

import sys

from pixelrig.tools.bench.render_cost import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
