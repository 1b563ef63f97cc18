"""RLlib past one machine, for real: a Ray cluster of two nodes started as a real one is (``ray start --head`` and
``ray start --address``, each with its own CPUs, custom resource, temp dir and ports), PPO's env runners placed on
both, training going on after a runner on the worker node is killed (SIGKILL) in the middle of an iteration, the
learner's weights reaching that node bit for bit, and a pixelrig snapshot made on the worker node restored on the
head with the same next observations.

Slow (about a minute and a half on 2 cores): its own CI stage,
``pytest -m slow tests/test_integrations_rllib_cluster.py``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytestmark = [pytest.mark.slow, pytest.mark.ray_cluster, pytest.mark.timeout(600)]

RAY = str(Path(sys.executable).with_name("ray"))
CAM = {"name": "front", "width": 32, "height": 32, "eye": (0.0, -2.6, 0.45), "target": (0.0, 0.0, 0.35),
       "modalities": ("rgb",)}
NODE_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"}
"""For the processes the test starts: no token auth (a ~/.ray/auth_token left by an earlier local run would turn it
on for the head and refuse the worker node), no usage report, no 30 s drain on SIGTERM."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_ports() -> list[str]:
    """Ports of a node's own servers, free now: two nodes on one machine must not share them (a real cluster's
    nodes are on machines of their own)."""
    return [f"--node-manager-port={free_port()}", f"--object-manager-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}", f"--dashboard-agent-grpc-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}", f"--metrics-export-port={free_port()}",
            "--min-worker-port=0", "--max-worker-port=0"]


def session_processes(leaders: list[int]) -> list[int]:
    """Processes still in the sessions of ``leaders`` (every process a ``ray start`` started: GCS, raylet, workers)."""
    left = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) in leaders:
                    left.append(int(entry))
            except OSError:
                continue  # gone meanwhile
    return left


@contextmanager
def two_node_cluster() -> Iterator[tuple[str, str]]:
    """A head (1 CPU, resource ``head_node``) and a worker node (1 CPU, resource ``worker_node``), each a ``ray start
    --block`` in a session of its own; this process connected as the driver. Yields the two node ids (head,
    worker). Stops both and kills what is left of their sessions, by pid."""
    import ray

    scratch = tempfile.mkdtemp(prefix="pxr-", dir="/tmp")  # short: Ray's socket paths live under it
    env = {**os.environ, **NODE_ENV}
    common = ["--block", "--disable-usage-stats", "--node-ip-address=127.0.0.1", f"--object-store-memory={80 * 2**20}"]
    port = free_port()
    nodes: list[subprocess.Popen] = []
    old_auth = os.environ.get("RAY_AUTH_MODE")
    try:
        nodes.append(subprocess.Popen(
            [RAY, "start", "--head", f"--port={port}", "--num-cpus=1", '--resources={"head_node": 1}',
             "--include-dashboard=false", f"--temp-dir={scratch}/head", *node_ports(), *common],
            env=env, start_new_session=True, stdout=open(f"{scratch}/head.log", "w"), stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                assert nodes[0].poll() is None and time.monotonic() < deadline, Path(f"{scratch}/head.log").read_text()
                time.sleep(0.3)
        nodes.append(subprocess.Popen(
            [RAY, "start", f"--address=127.0.0.1:{port}", "--num-cpus=1", '--resources={"worker_node": 1}',
             f"--temp-dir={scratch}/worker", *node_ports(), *common],
            env=env, start_new_session=True, stdout=open(f"{scratch}/worker.log", "w"), stderr=subprocess.STDOUT))
        os.environ["RAY_AUTH_MODE"] = "disabled"
        ray.init(address=f"127.0.0.1:{port}", log_to_driver=False, configure_logging=False)
        while True:
            alive = {tuple(sorted(k for k in n["Resources"] if k.endswith("_node"))): n["NodeID"]
                     for n in ray.nodes() if n["Alive"]}
            if len(alive) == 2:
                break
            assert nodes[1].poll() is None and time.monotonic() < deadline, Path(f"{scratch}/worker.log").read_text()
            time.sleep(0.3)
        yield alive[("head_node",)], alive[("worker_node",)]
    finally:
        ray.shutdown()
        if old_auth is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = old_auth
        for node in reversed(nodes):  # the worker node first, then the head
            node.send_signal(signal.SIGTERM)
            try:
                node.wait(30)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait(10)
        leaders = [n.pid for n in nodes]
        grace = time.monotonic() + 10  # a raylet's workers exit on their own when it is gone
        while session_processes(leaders) and time.monotonic() < grace:
            time.sleep(0.2)
        left = {}
        for pid in session_processes(leaders):
            try:
                left[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()[:60]
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass  # gone meanwhile
        shutil.rmtree(scratch, ignore_errors=True)
        if left:
            print(f"killed what the nodes left behind 10 s after they stopped: {left}")


def where(algo) -> dict[int, tuple[str, int]]:
    """Each remote env runner's node id and process id, by worker index."""
    import ray

    answers = algo.env_runner_group.foreach_env_runner(
        lambda r: (r.worker_index, ray.get_runtime_context().get_node_id(), os.getpid()), local_env_runner=False)
    return {index: (node, pid) for index, node, pid in answers}


def test_ppo_on_two_nodes_goes_on_after_a_runner_is_killed_and_ships_bit_exact_state() -> None:
    import ray

    from pixelrig.integrations.rllib import ppo_config

    start = time.monotonic()
    with two_node_cluster() as (head, worker):
        # one CPU per node, one per runner: Ray must put a runner on each node
        config = (ppo_config({"cams": [CAM]}, env_runners=2, envs_per_runner=4, rollout=128, minibatch=256,
                             epochs=1)
                  .fault_tolerance(restart_failed_env_runners=True, delay_between_env_runner_restarts_s=1.0,
                                   env_runner_health_probe_timeout_s=20.0))
        algo = config.build_algo()
        try:
            placed = where(algo)
            assert {node for node, _ in placed.values()} == {head, worker}, placed
            algo.train()

            # kill the worker node's runner while the next iteration samples
            victim = next(pid for node, pid in placed.values() if node == worker)
            killed_at: list[float] = []

            def kill() -> None:
                time.sleep(0.5)
                killed_at.append(time.monotonic())
                os.kill(victim, signal.SIGKILL)

            killer = threading.Thread(target=kill)
            began = time.monotonic()
            killer.start()
            result = algo.train()
            ended = time.monotonic()
            killer.join()
            assert began < killed_at[0] < ended, "the runner was not killed during the iteration"
            with pytest.raises(ProcessLookupError):
                os.kill(victim, 0)
            assert result["env_runners"]["num_env_steps_sampled"] > 0
            print(f"runners on {sorted((i, n[:8], pid) for i, (n, pid) in placed.items())} (head {head[:8]}, worker "
                  f"{worker[:8]}); killed {victim} {killed_at[0] - began:.1f} s into a {ended - began:.1f} s iteration "
                  f"that still sampled {result['env_runners']['num_env_steps_sampled']} steps")
            for _ in range(3):  # RLlib restarts the runner (Ray restarts its actor) and the run goes on
                result = algo.train()
            restarted = where(algo)
            assert len(restarted) == 2 and {node for node, _ in restarted.values()} == {head, worker}, restarted
            assert victim not in {pid for _, pid in restarted.values()}
            assert algo._counters["total_num_restored_workers"] >= 1  # noqa: SLF001 (RLlib's own count)
            assert result["training_iteration"] == 5
            now = sorted((i, n[:8], pid) for i, (n, pid) in restarted.items())
            print(f"after 3 more iterations: runners on {now}, {algo._counters['total_num_restored_workers']} "  # noqa: SLF001
                  "restored")

            # the learner's weights (in this driver, on the head) reached the worker node's runner bit for bit
            learner = {k: v.detach().cpu().numpy() for k, v in algo.get_module().state_dict().items()}
            remote = algo.env_runner_group.foreach_env_runner(
                lambda r: (ray.get_runtime_context().get_node_id(),
                           {k: v.detach().cpu().numpy() for k, v in r.module.state_dict().items()}),
                local_env_runner=False)
            weights = next(w for node, w in remote if node == worker)
            assert weights.keys() <= learner.keys() and any("cnns" in k for k in weights)
            for key, value in weights.items():
                assert value.tobytes() == learner[key].tobytes(), key
        finally:
            algo.stop()

        # a snapshot made on the worker node restores on the head: the next steps' observations are equal
        snapshot_steps = ray.remote(num_cpus=0)(_snapshot_steps)
        made = ray.get(snapshot_steps.options(resources={"worker_node": 0.01}).remote(None))
        restored = ray.get(snapshot_steps.options(resources={"head_node": 0.01}).remote(made[1]))
        assert made[0] == worker and restored[0] == head
        assert restored[2] == made[2] and len(made[2]) == 5
    print(f"two-node test: {time.monotonic() - start:.0f} s")


def _snapshot_steps(blob: bytes | None) -> tuple[str, bytes, list[dict[str, bytes]]]:
    """Runs on a node: without ``blob``, play 15 seeded steps of PandaPush-v0 under PixelObs and snapshot it;
    with ``blob``, restore it into a fresh env. Then 5 more steps: (node id, snapshot bytes, their observations as
    bytes)."""
    import gymnasium as gym
    import ray

    import pixelrig

    env = pixelrig.PixelObs(gym.make("pixelrig/PandaPush-v0"), cams=[
        {"name": "front", "eye": (1.0, 0.0, 1.2), "target": (0.5, 0.0, 0.6), "width": 32, "height": 32,
         "modalities": ("rgb", "depth", "label")}])
    try:
        rng = np.random.default_rng(7)
        if blob is None:
            env.reset(seed=7)
            for _ in range(15):
                env.step(rng.uniform(-1, 1, 3).astype(np.float32))
            blob = pixelrig.snapshot(env).to_bytes()
        else:
            pixelrig.restore(env, pixelrig.Snapshot.from_bytes(blob))
        steps = []
        for action in np.random.default_rng(8).uniform(-1, 1, (5, 3)).astype(np.float32):
            obs, reward, *_ = env.step(action)
            steps.append({**{k: v.tobytes() for k, v in obs.items()}, "reward": np.float64(reward).tobytes()})
        return ray.get_runtime_context().get_node_id(), blob, steps
    finally:
        env.close()
