"""What the task-space controller costs per step on PandaPush's arm, beside pybullet's calculateInverseKinematics as
``PandaEnv`` calls it (``control="pybullet_ik"``, the default), measured in the same run.

On one PandaPush env (``control="ee_delta_pos"``), at ``--poses`` arm poses reached by random actions, the three
costs are timed alternately, ``--calls`` calls each per round, ``--repeats`` rounds per pose (so that a machine's
changing load affects all alike); each figure is the median over every round of the time per call:

- solve: ``TaskSpaceController.joint_targets``: pybullet's ``calculateJacobian`` and the damped-least-squares solve;
- controller: what one step of ``ee_delta_pos`` runs, ``TaskSpaceController.command``: ``measure`` (joint states
  and the gripper's pose), ``next_target`` and ``joint_targets``;
- pybullet IK: what one step of ``pybullet_ik`` runs: ``ee_state()`` and ``PandaEnv.pybullet_ik``
  (``calculateInverseKinematics``, 50 iterations, joint limits and rest poses).

Then a whole ``env.step()`` of each control, on two envs stepped alternately. Usage::

    .venv/bin/python benchmarks/controller_cost.py [--poses 10] [--repeats 20] [--calls 50] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from datetime import date

import gymnasium as gym
import numpy as np

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig.envs.panda import NEUTRAL
from pixelrig.tools.bench.common import machine

ENV_ID = "pixelrig/PandaPush-v0"


def per_call(fn: Callable[[], object], calls: int) -> float:
    """Seconds per call of ``fn`` over ``calls`` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def measure(poses: int, repeats: int, calls: int) -> dict:
    """Median µs per call of the solve, the controller step and pybullet's IK step, and per env step of each."""
    env = gym.make(ENV_ID, control="ee_delta_pos")
    legacy = gym.make(ENV_ID)
    try:
        base = env.unwrapped
        ctl, c, rest = base.controller.solver, base.client, np.array(NEUTRAL)
        action = np.array([0.3, -0.2, 0.1])
        now = ctl.measure(c)

        def solve() -> object:
            return ctl.joint_targets(c, base.ee_target, now, rest)

        def controller() -> object:
            return ctl.command(c, base.ee_target, action, rest)

        def pybullet_ik() -> object:
            ee, _ = base.ee_state()
            target = np.clip(ee + action * base.max_step, base.workspace_low, base.workspace_high)
            return legacy.unwrapped.controller.solve(target)

        costs: dict[str, list[float]] = {"solve": [], "controller": [], "pybullet_ik": []}
        env.reset(seed=0)
        env.action_space.seed(0)
        for _ in range(poses):
            for _ in range(5):  # another pose, mid-motion
                env.step(env.action_space.sample())
            now = ctl.measure(c)
            for _ in range(repeats):
                for name, fn in (("solve", solve), ("controller", controller), ("pybullet_ik", pybullet_ik)):
                    costs[name].append(per_call(fn, calls))
        steps: dict[str, list[float]] = {"ee_delta_pos": [], "pybullet_ik": []}
        for e in (env, legacy):
            e.reset(seed=1)
            e.action_space.seed(1)
        for _ in range(poses * repeats):
            for name, e in (("ee_delta_pos", env), ("pybullet_ik", legacy)):
                a = e.action_space.sample()
                start = time.perf_counter()
                _, _, terminated, truncated, _ = e.step(a)
                steps[name].append(time.perf_counter() - start)
                if terminated or truncated:
                    e.reset()
        out = {f"{k}_us": 1e6 * statistics.median(v) for k, v in costs.items()}
        out.update({f"{k}_us_quartiles": [1e6 * q for q in statistics.quantiles(v, n=4)] for k, v in costs.items()})
        out.update({f"step_{k}_ms": 1e3 * statistics.median(v) for k, v in steps.items()})
        out["controller_vs_pybullet_ik"] = out["controller_us"] / out["pybullet_ik_us"]
        out["solve_vs_pybullet_ik"] = out["solve_us"] / out["pybullet_ik_us"]
        return out
    finally:
        env.close()
        legacy.close()


def main() -> None:
    """Measure, print a table, write JSON when asked."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--poses", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    r = measure(args.poses, args.repeats, args.calls)
    print(f"{ENV_ID}'s arm (7 joints), {args.poses} poses x {args.repeats} rounds x {args.calls} calls, medians; "
          f"{machine()}")
    print("| per step | µs [quartiles] | vs pybullet IK |")
    print("|---|---|---|")
    for key, label in (("solve", "Jacobian + damped least squares (`joint_targets`)"),
                       ("controller", "controller step: measure + next_target + joint_targets"),
                       ("pybullet_ik", "pybullet IK step: ee_state + calculateInverseKinematics (PandaEnv)")):
        q = r[f"{key}_us_quartiles"]
        print(f"| {label} | {r[f'{key}_us']:.1f} [{q[0]:.1f}..{q[2]:.1f}] | "
              f"{r[f'{key}_us'] / r['pybullet_ik_us']:.2f}x |")
    print(f"whole env.step(): ee_delta_pos {r['step_ee_delta_pos_ms']:.3f} ms, pybullet_ik "
          f"{r['step_pybullet_ik_ms']:.3f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": date.today().isoformat(), "machine": machine(), "env": ENV_ID, **vars(args), **r}, f,
                      indent=2)


if __name__ == "__main__":
    main()
