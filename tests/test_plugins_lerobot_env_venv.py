"""LeRobot's env plugin in LeRobot itself: ``--env.type=pixelrig`` in the plugin venv (``make lerobot``,
``scripts/lerobot-env-venv.sh``; ``LEROBOT_ENV_VENV``), CI's stage ``make test-lerobot-env``.

- the config's features equal a collected dataset's as LeRobot reads them, and the env's first observation, through
  LeRobot's own processing, equals the dataset's first frame (depth and state exactly, images within the video
  codec's error);
- ``lerobot-eval`` of a freshly initialised ACT, 2 episodes on 2 envs;
- the command lines of docs/lerobot.md and the README run as written (``pixelrig collect``, ``lerobot-train`` with
  one evaluation in the env, ``lerobot-eval`` of its checkpoint), with fewer episodes and steps appended.

Skipped with the reason when the venv is not built; failed instead when PIXELRIG_REQUIRE_LEROBOT_ENV=1 (CI).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("LEROBOT_ENV_VENV", REPO / ".venv-lerobot-env"))
DOCS = [REPO / "README.md", REPO / "docs" / "lerobot.md"]
TIMEOUT_S = 1200
"""Per command: a few ACT steps and two short evaluations take a minute on an idle 2-core machine, much more on a
busy one."""

pytestmark = [pytest.mark.slow, pytest.mark.lerobot_env, pytest.mark.timeout(3 * TIMEOUT_S)]

SMALL_ACT = ["--policy.dim_model=64", "--policy.dim_feedforward=128", "--policy.n_encoder_layers=1",
             "--policy.chunk_size=10", "--policy.n_action_steps=10"]
"""A small ACT for CI (LeRobot's default is 512 wide with chunks of 100: seconds per step on 2 cores)."""
SHORTER = {
    "pixelrig": ["--episodes", "2", "--workers", "1"],
    "lerobot-train": ["--steps=2", "--env_eval_freq=2", "--save_freq=2", "--batch_size=2", "--num_workers=0",
                      "--eval.n_episodes=2", "--eval.batch_size=2", "--env.episode_length=20", "--wandb.enable=false",
                      *SMALL_ACT],
    "lerobot-eval": ["--eval.n_episodes=2", "--eval.batch_size=2", "--env.episode_length=20"],
}
"""Appended to the docs' command lines (a later flag wins, in argparse and in LeRobot's draccus)."""


def plugin_venv_or_skip() -> Path:
    """The plugin venv's bin folder; skips (fails with PIXELRIG_REQUIRE_LEROBOT_ENV=1) when it is not built (its
    stamp, written last by scripts/lerobot-env-venv.sh, is missing)."""
    bin_dir, stamp = VENV / "bin", VENV / ".pixelrig-stamp"
    if not ((bin_dir / "lerobot-eval").is_file() and stamp.is_file()):
        if os.environ.get("PIXELRIG_REQUIRE_LEROBOT_ENV") == "1":
            pytest.fail(f"PIXELRIG_REQUIRE_LEROBOT_ENV=1 but {VENV} is not built: run make lerobot "
                        "(scripts/lerobot-env-venv.sh)")
        pytest.skip(f"the LeRobot env venv is not built ({stamp} missing): run make lerobot")
    return bin_dir


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """A command of the plugin venv (its bin first on PATH), offline, in ``cwd``; asserts that it succeeded."""
    bin_dir = plugin_venv_or_skip()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(cwd / "hf"), "PYTHONPATH": "", "TQDM_DISABLE": "1"}
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, f"{shlex.join(argv)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return proc


def doc_commands() -> list[str]:
    """The ``pixelrig collect``, ``lerobot-train`` and ``lerobot-eval`` lines of the docs' ```sh blocks, each once,
    in order."""
    lines: list[str] = []
    for path in DOCS:
        for block in re.findall(r"```sh\n(.*?)```", path.read_text(), re.DOTALL):
            lines += [line for line in block.splitlines()
                      if line.startswith(("pixelrig collect", "lerobot-train", "lerobot-eval"))]
    return list(dict.fromkeys(lines))


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One PandaLift episode from ``pixelrig collect`` (TinyRenderer, the task's own rig: depth included)."""
    folder = tmp_path_factory.mktemp("lerobot_env")
    run(["pixelrig", "collect", "PandaLift-v0", "--episodes", "1", "--out", "lift", "--renderer", "tiny",
         "--quiet"], folder)
    return folder / "lift"


def test_features_and_first_observation_are_the_datasets(collected: Path) -> None:
    out = collected.parent / "features.json"
    run([str(VENV / "bin" / "python"), str(REPO / "tests" / "lerobot_env_checks.py"), str(collected), str(out)],
        collected.parent)
    got = json.loads(out.read_text())
    assert "pixelrig" in got["types"]
    assert got["env_features"] == got["dataset_features"]
    assert set(got["env_features"]) == {
        "observation.images.front", "observation.images.side", "observation.images.wrist", "observation.depth.front",
        "observation.depth.side", "observation.depth.wrist", "observation.state", "action"}
    assert got["env_features"]["observation.images.front"] == ["VISUAL", [3, 84, 84]]
    assert got["env_features"]["observation.depth.wrist"] == ["STATE", [84, 84, 1]]
    assert got["task"] == [got["dataset_task"]] == ["pixelrig/PandaLift-v0"]
    assert got["reset_info_is_success"] == [False]
    assert got["env_only"] == []
    values = got["values"]
    for key, v in values.items():
        assert isinstance(v, dict) and v["env_shape"] == v["dataset_shape"], (key, v)
        if key.startswith(("observation.depth.", "observation.state")):
            assert v["max_abs"] == 0.0, (key, v)  # parquet is lossless; depth in the dataset's millimetres
        else:  # images in [0, 1] through H.264 yuv420p (tests/test_datasets_lerobot_reader.py's bound)
            assert v["mean_abs"] < 6.0 / 255, (key, v)
    assert got["errors"]["task"].startswith("ValueError: --env.task='PandaLoft-v0' is not a pixelrig task")
    assert "the dataset has cameras ['front', 'side', 'wrist'] (observation.images.front video [84, 84, 3]" in \
        got["errors"]["dataset"]
    assert "the env has cameras ['front', 'side', 'wrist'] (observation.images.front video [48, 48, 3]" in \
        got["errors"]["dataset"]


def test_lerobot_eval_of_a_fresh_act_on_two_envs(tmp_path: Path) -> None:
    run(["lerobot-eval", "--policy.type=act", "--policy.pretrained_backbone_weights=null", "--policy.device=cpu",
         *SMALL_ACT, "--env.type=pixelrig", "--env.task=PandaLift-v0", "--env.episode_length=20",
         "--eval.n_episodes=2", "--eval.batch_size=2", "--output_dir=eval"], tmp_path)
    overall = json.loads((tmp_path / "eval" / "eval_info.json").read_text())["overall"]
    assert overall["n_episodes"] == 2 and 0.0 <= overall["pc_success"] <= 100.0


def test_the_docs_commands_run_as_written(tmp_path: Path) -> None:
    """Collect, train with one evaluation in the env, evaluate the checkpoint: the docs' lines, shortened."""
    commands = doc_commands()
    assert [c.split()[0] for c in commands] == ["pixelrig", "lerobot-train", "lerobot-eval"], commands
    for line in commands:
        argv = shlex.split(line)
        proc = run(argv + SHORTER[argv[0]], tmp_path)
        if argv[0] == "lerobot-train":
            assert "Eval policy at step 2" in proc.stdout + proc.stderr
    evals = sorted(tmp_path.glob("out/*/eval_info.json"))
    assert len(evals) == 1 and json.loads(evals[0].read_text())["overall"]["n_episodes"] == 2
