"""LeRobot's ACT on pixelrig demonstrations, with LeRobot's own tools: ``pixelrig collect`` writes PandaLift expert
episodes, ``lerobot-train --policy.type=act --env.type=pixelrig`` trains on them (CPU), ``lerobot-eval`` scores the
policy on unseen seeds in the same env. Run it with the plugin venv's Python (``make lerobot``):

    .venv-lerobot-env/bin/python benchmarks/lerobot_act.py           # the full run (~1 h): docs/lerobot_act.json
    .venv-lerobot-env/bin/python benchmarks/lerobot_act.py --quick   # minutes: out/lerobot_act_quick/

The settings (:data:`FULL`), chosen for 2 CPU cores and a 45-minute training budget:

- the rig: the task's front and wrist cameras at 64x64, RGB only (what examples/bc_pixels.py learns from), written
  to ``<out>/rig.json`` and given to collect (``--cams``) and to the env (``--env.rig``): the policy meets the
  dataset's cameras;
- ACT smaller than LeRobot's default (512 wide, 4 encoder layers, chunks of 100: 3.0 s of CPU per step of 16 on
  one thread here): 256 wide, 2 encoder layers and 1 decoder layer, chunks of 20 actions of which 10 are executed
  (0.63 s of CPU per step of 16 on one thread), the VAE on, the ResNet-18 backbone trained from scratch (no ImageNet
  weights offline), learning rate 1e-4 for all of it (constant, LeRobot's ACT preset); up to 5000 steps of 16
  (about 11 passes over 200 episodes' ~7000 frames), one data-loading worker beside the training process, a
  checkpoint every 500 steps: training stops at 45 minutes of wall time and the last checkpoint is evaluated (the
  JSON says at which step);
- training seeds 0, 1, ... (collect's attempts); evaluation seeds from 100000 (never trained on).

Writes a JSON (settings, the three commands, times, LeRobot's ``eval_info.json`` aggregate, success over the
evaluation episodes) and prints a summary.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TASK = "PandaLift-v0"
EVAL_SEED = 100_000
"""lerobot-eval's first seed (episode i: seed + i); collect's attempts use seeds from 0, far below."""
BUDGET_S = 45 * 60
"""The training budget the settings are chosen for (lerobot-train's wall time on this machine's 2 cores)."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """One run's settings."""

    episodes: int
    steps: int
    batch_size: int
    eval_episodes: int
    eval_batch_size: int
    image_size: int = 64
    chunk_size: int = 20
    n_action_steps: int = 10
    dim_model: int = 256
    dim_feedforward: int = 1024
    n_encoder_layers: int = 2
    n_decoder_layers: int = 1
    lr: float = 1e-4
    collect_workers: int = 2
    data_workers: int = 1
    eval_during_training: int = 0
    """lerobot-train's ``--env_eval_freq`` (0: no evaluation while it trains)."""
    episode_length: int | None = None
    """The evaluation episodes' TimeLimit (None: the task's, 100 steps)."""
    save_freq: int | None = None
    """Steps between checkpoints (None: only the last)."""
    budget_s: float | None = None
    """lerobot-train is stopped after this many seconds and the last checkpoint evaluated (None: it runs all its
    steps)."""


FULL = Settings(episodes=200, steps=5000, batch_size=16, eval_episodes=50, eval_batch_size=10, save_freq=500,
                budget_s=BUDGET_S)
QUICK = Settings(episodes=4, steps=10, batch_size=4, eval_episodes=2, eval_batch_size=2, dim_model=64,
                 dim_feedforward=128, n_encoder_layers=1, collect_workers=1, data_workers=0,
                 eval_during_training=10, episode_length=30)


def rig(size: int) -> dict:
    """The task's front and wrist cameras at ``size`` x ``size``, RGB only."""
    from pixelrig.evaluation.factor_env import default_cameras

    cams = [dataclasses.replace(c, width=size, height=size, modalities=("rgb",))
            for c in default_cameras(f"pixelrig/{TASK}") if c.name in ("front", "wrist")]
    return {"cameras": [c.to_dict() for c in cams]}


def commands(s: Settings, out: Path, bin_dir: Path) -> dict[str, list[str]]:
    """The three command lines, as a user types them (paths relative to ``out``'s parent)."""
    env = ["--env.type=pixelrig", f"--env.task={TASK}", f"--env.rig={out / 'rig.json'}"]
    if s.episode_length is not None:
        env.append(f"--env.episode_length={s.episode_length}")
    act = [f"--policy.chunk_size={s.chunk_size}", f"--policy.n_action_steps={s.n_action_steps}",
           f"--policy.dim_model={s.dim_model}", f"--policy.dim_feedforward={s.dim_feedforward}",
           f"--policy.n_encoder_layers={s.n_encoder_layers}", f"--policy.n_decoder_layers={s.n_decoder_layers}",
           f"--policy.optimizer_lr={s.lr}", f"--policy.optimizer_lr_backbone={s.lr}"]
    return {
        "collect": [str(bin_dir / "pixelrig"), "collect", TASK, "--episodes", str(s.episodes), "--workers",
                    str(s.collect_workers), "--out", str(out / "data"), "--cams", str(out / "rig.json"), "--quiet"],
        "train": [str(bin_dir / "lerobot-train"), "--policy.type=act", "--dataset.repo_id=pixelrig/lift",
                  f"--dataset.root={out / 'data'}", *env, "--policy.pretrained_backbone_weights=null",
                  "--policy.push_to_hub=false", "--policy.device=cpu", *act, f"--steps={s.steps}",
                  f"--batch_size={s.batch_size}", f"--num_workers={s.data_workers}",
                  f"--env_eval_freq={s.eval_during_training}", f"--save_freq={s.save_freq or s.steps}",
                  f"--eval.n_episodes={s.eval_episodes}", f"--eval.batch_size={s.eval_batch_size}",
                  "--log_freq=100", "--wandb.enable=false", f"--output_dir={out / 'train'}"],
        "eval": [str(bin_dir / "lerobot-eval"),
                 f"--policy.path={out / 'train' / 'checkpoints' / 'last' / 'pretrained_model'}", *env,
                 "--policy.device=cpu", f"--eval.n_episodes={s.eval_episodes}",
                 f"--eval.batch_size={s.eval_batch_size}", f"--seed={EVAL_SEED}", f"--output_dir={out / 'eval'}"],
    }


def run(name: str, argv: list[str], log: Path, budget_s: float | None = None) -> tuple[float, bool]:
    """Run one command, its output into ``log``; returns its wall time and whether it was stopped at ``budget_s``
    (SIGTERM to its process group). Raises with the log's end on failure."""
    print(f"== {name}: {' '.join(argv)}", flush=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HOME": str(log.parent / "hf"), "TQDM_DISABLE": "1"}
    start = time.perf_counter()
    stopped = False
    with log.open("w") as f:
        proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            proc.wait(timeout=budget_s)
        except subprocess.TimeoutExpired:
            stopped = True
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    seconds = time.perf_counter() - start
    if proc.returncode != 0 and not stopped:
        raise SystemExit(f"{name} failed (exit {proc.returncode}); the end of {log}:\n{log.read_text()[-4000:]}")
    print(f"   {seconds:.0f} s" + (" (stopped at the budget)" if stopped else ""), flush=True)
    return seconds, stopped


def last_checkpoint(train: Path) -> int:
    """The step of the last checkpoint lerobot-train saved in full (``checkpoints/last`` links to it once written)."""
    last = train / "checkpoints" / "last"
    if not last.exists():
        raise SystemExit(f"lerobot-train saved no checkpoint under {train}: raise the budget or save more often")
    return int(last.resolve().name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few episodes and steps: end to end in minutes")
    parser.add_argument("--out", type=Path, default=None, help="work folder (default out/lerobot_act[_quick])")
    parser.add_argument("--json", type=Path, default=None,
                        help="results (default docs/lerobot_act.json; --quick: <out>/lerobot_act.json)")
    parser.add_argument("--steps", type=int, default=None, help="override the training steps")
    parser.add_argument("--save-freq", type=int, default=None, help="override the steps between checkpoints")
    parser.add_argument("--budget-min", type=float, default=None,
                        help="override the training budget in minutes (then the last checkpoint is evaluated)")
    args = parser.parse_args(argv)
    s = QUICK if args.quick else FULL
    for field, value in (("steps", args.steps), ("save_freq", args.save_freq),
                         ("budget_s", None if args.budget_min is None else args.budget_min * 60)):
        if value is not None:
            s = dataclasses.replace(s, **{field: value})
    out = (args.out or REPO / "out" / ("lerobot_act_quick" if args.quick else "lerobot_act")).resolve()
    result_path = args.json or (out / "lerobot_act.json" if args.quick else REPO / "docs" / "lerobot_act.json")
    bin_dir = Path(sys.executable).parent
    for tool in ("lerobot-train", "lerobot-eval", "pixelrig"):
        if not (bin_dir / tool).is_file():
            raise SystemExit(f"{bin_dir / tool} is missing: run this with the plugin venv's python "
                             "(make lerobot; .venv-lerobot-env/bin/python benchmarks/lerobot_act.py)")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "rig.json").write_text(json.dumps(rig(s.image_size), indent=2))
    cmds = commands(s, out, bin_dir)
    times: dict[str, float] = {}
    times["collect"], _ = run("collect", cmds["collect"], out / "collect.log")
    times["train"], stopped = run("train", cmds["train"], out / "train.log", s.budget_s)
    trained = last_checkpoint(out / "train")
    times["eval"], _ = run("eval", cmds["eval"], out / "eval.log")
    aggregated = json.loads((out / "eval" / "eval_info.json").read_text())["overall"]
    successes = round(aggregated["pc_success"] * aggregated["n_episodes"] / 100)
    with (out / "data" / "meta" / "info.json").open() as f:
        frames = json.load(f)["total_frames"]
    result = {
        "task": f"pixelrig/{TASK}", "quick": args.quick, "settings": dataclasses.asdict(s),
        "eval_seeds": [EVAL_SEED, EVAL_SEED + s.eval_episodes - 1], "frames": frames,
        "seconds": {k: round(v, 1) for k, v in times.items()}, "steps_trained": trained,
        "stopped_at_budget": stopped, "train_within_budget": stopped or times["train"] <= BUDGET_S,
        "success": f"{successes}/{aggregated['n_episodes']}", "pc_success": aggregated["pc_success"],
        "eval_overall": {k: v for k, v in aggregated.items() if k not in ("video_paths", "predicted_video_paths")},
        "commands": {k: " ".join(Path(a).name if i == 0 else a.replace(f"{REPO}/", "")
                                 for i, a in enumerate(v)) for k, v in cmds.items()},
        "cpu_count": len(os.sched_getaffinity(0)),
    }
    result_path.parent.mkdir(parents=True, exist_ok=True)
    result_path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"ACT on {TASK}: {result['success']} unseen episodes succeeded ({aggregated['pc_success']:.0f}%); "
          f"collect {times['collect']:.0f} s ({s.episodes} episodes, {frames} frames), train {times['train']:.0f} s "
          f"({trained} steps of {s.batch_size}{', stopped at the budget' if stopped else ''}), eval "
          f"{times['eval']:.0f} s; wrote {result_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
