"""Behaviour cloning from pixels: PandaLift (or another task with an expert) learned from a front and a wrist camera
plus proprioception.

    .venv/bin/python examples/bc_pixels.py                 # the full run: docs/bc_pixels.json and .png
    .venv/bin/python examples/bc_pixels.py --task pixelrig/SO101Lift-v0 --out docs/bc_pixels_so101.json
    .venv/bin/python examples/bc_pixels.py --quick         # the CI learning test's cut-down: out/bc_pixels_quick.*
    .venv/bin/python examples/bc_pixels.py --save out/bc_pixels.pt   # also keep the policy, for pixelrig eval:
    BC_PIXELS_MODEL=out/bc_pixels.pt PYTHONPATH=examples pixelrig eval pixelrig/PandaLift-v0 \
        --policy bc_pixels:eval_policy --cams out/bc_pixels.rig.json --episodes 100 --factors all --out out/eval_bc

1. Collect: the task's scripted expert (PandaLift's ``LiftExpert``) solves ``--episodes`` seeded episodes (seeds
   ``--seed`` + i), recorded as a robomimic dataset (lossless) with 64x64 RGB from the task's front and wrist cameras.
2. Train: a small CNN per camera (spatial-softmax keypoints) and an MLP on the robot's own state (the Panda's
   ``ee_pos``, ``ee_quat``, ``ee_linvel``, ``gripper_opening``; the SO-101's ``joint_pos`` (jaw included), ``ee_pos``,
   ``ee_quat``, ``ee_linvel``: :data:`PROPRIO_TERMS`; proprioception only, never the cube's pose, which the pixels
   must supply) predict the expert's next 4 actions (a chunk), with random-shift augmentation, MSE loss. Acting,
   the action is the mean of what the last 4 chunks predicted for the step (temporal ensembling).
3. Evaluate: ``--eval-episodes`` seeded episodes (seeds 1000, 1001, ...: none seen in training) under PixelObs with
   the dataset's own cameras and renderer; success is ``info["is_success"]``. Uniformly random actions run on the
   same seeds for comparison.

Writes a JSON (``--out``: the loss per epoch, the success rates, the dataset's size, times, the arguments) and a
figure (``--figure``: the loss curve and the success bars; matplotlib, the ``pixelrig[bench]`` extra). Torch is
this example's own dependency (pixelrig never imports it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import pixelrig
from pixelrig import Camera, PixelObs
from pixelrig.datasets import open_dataset
from pixelrig.datasets.collect import collect

TASK = "pixelrig/PandaLift-v0"
"""The task learned by default (``--task``: any task whose robot :data:`PROPRIO_TERMS` names and that has an expert)."""
CAMERAS = ("front", "wrist")
"""The task's default cameras the policy sees (the wrist camera shows the grasp up close)."""
IMAGE_SIZE = 64
"""Pixels a side of every camera."""
PROPRIO_TERMS = {
    "Panda": ("ee_pos", "ee_quat", "ee_linvel", "gripper_opening"),
    "SO101": ("joint_pos", "ee_pos", "ee_quat", "ee_linvel"),
}
"""The state terms the policy reads, per robot (the first word of the task's name): the robot's own, never the
cube's. The SO-101's ``joint_pos`` holds its jaw's opening."""
EVAL_SEED = 1000
"""The first evaluation seed; training episodes must use seeds below it."""


@dataclasses.dataclass(frozen=True)
class Config:
    """One run's settings (the CLI's, and the cut-down ``--quick`` run's).

    Attributes:
        task: the env id learned (its expert collects the demonstrations).
        episodes: demonstrations collected (episode i has seed ``seed + i``).
        epochs: passes over the demonstrations.
        eval_episodes: evaluation episodes (seeds ``EVAL_SEED`` + i).
        seed: the collection's first seed and the training seed.
        workers: collection processes.
        batch_size: frames per gradient step.
        lr: AdamW's learning rate (cosine-annealed to 0 over the run).
        chunk: actions predicted per frame (the next ``chunk`` actions; 1 = plain behaviour cloning).
        shift: random-shift augmentation, pixels each way (0: none).
        jitter: colour jitter after the shift (kornia's ``ColorJitter`` with LeRobot's default ranges:
            :data:`JITTER`), drawn per image.
        steps: gradient steps in all (None: ``epochs`` passes over the demonstrations); fixes the training
            compute whatever the dataset's size (the augmentation study's arms all take the same steps).
        renderer: the renderer that draws the demonstrations (and the evaluation: the dataset's); None:
            ``PIXELRIG_RENDERER``, else auto.
        threads: torch's CPU threads. One by default: on 2 shared cores, 2 threads were faster when the cores were
            free (40 against 55 ms a step) and up to 15x slower when another process took one (OpenMP's threads
            wait for each other); one thread's step held at 50-70 ms.
    """

    task: str = TASK
    episodes: int = 200
    epochs: int = 30
    eval_episodes: int = 50
    seed: int = 0
    workers: int = 1
    batch_size: int = 64
    lr: float = 1e-3
    chunk: int = 4
    shift: int = 2
    jitter: bool = False
    steps: int | None = None
    renderer: str | None = None
    threads: int = 1


QUICK = Config(episodes=100, epochs=25, eval_episodes=30)
"""The CI learning test's cut-down run."""


# ---- data -----------------------------------------------------------------------------------------------------


def proprio_terms(task: str) -> tuple[str, ...]:
    """The :data:`PROPRIO_TERMS` of ``task``'s robot (``pixelrig/SO101Lift-v0``: the SO-101's).

    Raises:
        ValueError: a task of no robot :data:`PROPRIO_TERMS` names (the message lists them).
    """
    name = task.split("/")[-1]
    for robot, terms in PROPRIO_TERMS.items():
        if name.startswith(robot):
            return terms
    raise ValueError(f"task {task!r} is not one of a robot whose proprioception this example knows "
                     f"({', '.join(PROPRIO_TERMS)}): add its terms to PROPRIO_TERMS")


def policy_cameras(size: int = IMAGE_SIZE, names: Sequence[str] = CAMERAS, task: str = TASK) -> list[Camera]:
    """``task``'s default cameras ``names``, resized to ``size`` pixels a side, RGB only."""
    env = gym.make(task)
    try:
        defaults = {cam.name: cam for cam in env.unwrapped.default_cameras()}
    finally:
        env.close()
    return [dataclasses.replace(defaults[name], width=size, height=size, modalities=("rgb",)) for name in names]


@dataclasses.dataclass
class Demos:
    """Demonstrations as arrays, frame by frame, episodes one after another.

    Attributes:
        images: camera -> (N, H, W, 3) uint8 RGB.
        proprio: (N, P) float32, the ``terms`` of each frame's state.
        actions: (N, A) float32, the action taken in each frame.
        episode: (N,) int64, each frame's episode.
        env_id: the env the dataset recorded.
        env_kwargs: its ``gym.make`` arguments (as recorded).
        cameras: the cameras that took the images (as recorded).
        renderer: the renderer that drew them.
        terms: the state terms ``proprio`` holds.
    """

    images: dict[str, np.ndarray]
    proprio: np.ndarray
    actions: np.ndarray
    episode: np.ndarray
    env_id: str
    env_kwargs: dict[str, Any]
    cameras: list[Camera]
    renderer: str
    terms: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.actions)

    @property
    def num_episodes(self) -> int:
        """Episodes held."""
        return int(self.episode.max()) + 1 if len(self.episode) else 0


def proprio_index(layout: dict[str, slice], terms: Sequence[str] = PROPRIO_TERMS["Panda"]) -> np.ndarray:
    """The state indices of ``terms``, in order.

    Raises:
        KeyError: a term the layout lacks (the message lists the layout's terms).
    """
    missing = [t for t in terms if t not in layout]
    if missing:
        raise KeyError(f"state terms {missing} are not in the observation layout {list(layout)}")
    return np.concatenate([np.arange(layout[t].start, layout[t].stop) for t in terms])


def load_demos(path: str | Path, terms: Sequence[str] | None = None) -> Demos:
    """Read the successful episodes of a pixelrig dataset (robomimic or LeRobot) into arrays.

    An episode counts as successful when its stored ``success`` says so (``collect`` stores it); in a dataset
    without it (``DatasetRecorder``'s), when it ended terminated (the Panda tasks end on success only).

    Raises:
        ValueError: the dataset has no state or no successful episode.
    """
    reader = open_dataset(path)
    try:
        info = reader.info
        terms = tuple(terms or proprio_terms(info.env_id))
        if info.state_shape is None:
            raise ValueError(f"{path}: the dataset has no 'state', so no proprioception to train on")
        env = gym.make(info.env_id, **info.env_kwargs)
        try:
            index = proprio_index(env.unwrapped.observation_layout, terms)
        finally:
            env.close()
        images: dict[str, list[np.ndarray]] = {cam: [] for cam in info.rgb}
        proprio, actions, episode = [], [], []
        for e in range(reader.num_episodes):
            success = reader.episode_attrs(e).get("success", reader.episode_end(e) == "terminated")
            if not success:
                continue
            frames = list(reader.frames(e))
            for cam in info.rgb:
                images[cam].append(np.stack(list(reader.rgb(e, cam))))
            proprio.append(np.stack([f.state[index] for f in frames]))
            actions.append(np.stack([f.action for f in frames]))
            episode.append(np.full(len(frames), len(episode)))
        if not episode:
            raise ValueError(f"{path}: no episode ended in success")
        return Demos(images={cam: np.concatenate(v) for cam, v in images.items()},
                     proprio=np.concatenate(proprio).astype(np.float32),
                     actions=np.concatenate(actions).astype(np.float32), episode=np.concatenate(episode),
                     env_id=info.env_id, env_kwargs=dict(info.env_kwargs),
                     cameras=[Camera.from_dict(c) for c in info.cams], renderer=info.renderer, terms=terms)
    finally:
        reader.close()


def action_chunks(actions: np.ndarray, episode: np.ndarray, chunk: int) -> np.ndarray:
    """(N, chunk, A): each frame's action and the next ``chunk - 1`` of its episode, the last one repeated past
    the episode's end."""
    last = np.searchsorted(episode, episode, side="right") - 1  # each frame's episode's last frame
    index = np.minimum(np.arange(len(actions))[:, None] + np.arange(chunk)[None, :], last[:, None])
    return actions[index]


# ---- the policy -----------------------------------------------------------------------------------------------


class SpatialSoftmax(nn.Module):
    """Each channel's expected image position under a softmax over its pixels: (B, C, H, W) -> (B, 2C) in
    [-1, 1] (x then y per channel)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        weights = F.softmax(x.reshape(b, c, h * w), dim=-1).reshape(b, c, h, w)
        ys = torch.linspace(-1.0, 1.0, h, device=x.device)
        xs = torch.linspace(-1.0, 1.0, w, device=x.device)
        return torch.cat([(weights.sum(2) * xs).sum(-1), (weights.sum(3) * ys).sum(-1)], dim=1)


def conv_encoder(keypoints: int = 32) -> nn.Sequential:
    """An image (B, 3, H, W) float in [0, 1] -> (B, 2 * keypoints) image positions (two stride-2 convolutions
    first: a quarter of the resolution is where the keypoints are found, cheaply)."""
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, keypoints, 1),
        SpatialSoftmax(),
    )


class BCPolicy(nn.Module):
    """A conv encoder per camera and an MLP on proprioception, their features joined by an MLP that outputs the
    next ``chunk`` actions in [-1, 1] (tanh).

    Args:
        cameras: the camera names, in the order the images come.
        proprio_dim: the proprioception's size.
        action_dim: the action's size.
        chunk: actions predicted per frame.
        proprio_mean: per-dimension mean of proprioception (normalisation, stored with the weights).
        proprio_std: per-dimension standard deviation.
    """

    def __init__(self, cameras: Sequence[str], proprio_dim: int, action_dim: int, chunk: int = 1,
                 proprio_mean: np.ndarray | None = None, proprio_std: np.ndarray | None = None) -> None:
        super().__init__()
        self.cameras = tuple(cameras)
        self.action_dim, self.chunk = action_dim, chunk
        self.encoders = nn.ModuleDict({cam: conv_encoder() for cam in self.cameras})
        mean = np.zeros(proprio_dim) if proprio_mean is None else proprio_mean
        std = np.ones(proprio_dim) if proprio_std is None else proprio_std
        self.register_buffer("proprio_mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("proprio_std", torch.as_tensor(np.maximum(std, 1e-6), dtype=torch.float32))
        self.proprio = nn.Sequential(nn.Linear(proprio_dim, 64), nn.ReLU())
        features = 64 * len(self.cameras) + 64
        self.head = nn.Sequential(nn.Linear(features, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                                  nn.Linear(256, chunk * action_dim))

    def forward(self, images: dict[str, torch.Tensor], proprio: torch.Tensor) -> torch.Tensor:
        """(B, chunk, action_dim) actions in [-1, 1] from uint8 images (B, 3, H, W) and raw proprioception."""
        parts = [self.encoders[cam](images[cam].float() / 255.0) for cam in self.cameras]
        parts.append(self.proprio((proprio - self.proprio_mean) / self.proprio_std))
        out = torch.tanh(self.head(torch.cat(parts, dim=1)))
        return out.reshape(-1, self.chunk, self.action_dim)


def random_shift(images: torch.Tensor, pad: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Each image of (B, C, H, W) shifted by a random whole number of pixels in [-pad, pad] each way, the border
    repeated (DrQ's augmentation)."""
    if pad == 0:
        return images.contiguous(memory_format=torch.channels_last)
    _, _, h, w = images.shape
    padded = F.pad(images.float(), (pad, pad, pad, pad), mode="replicate").to(images.dtype)
    shifts = torch.randint(0, 2 * pad + 1, (len(images), 2), generator=generator).tolist()
    shifted = [image[:, dy:dy + h, dx:dx + w] for image, (dy, dx) in zip(padded, shifts, strict=True)]
    return torch.stack(shifted).contiguous(memory_format=torch.channels_last)


JITTER = {"brightness": (0.8, 1.2), "contrast": (0.8, 1.2), "saturation": (0.5, 1.5), "hue": (-0.05, 0.05)}
"""Colour jitter's ranges: LeRobot's default image transforms' (``--dataset.image_transforms.enable=true``), as
kornia's ``ColorJitter`` takes them (hue in [-0.5, 0.5] of a turn)."""


def color_jitter() -> Callable[[torch.Tensor], torch.Tensor]:
    """Colour jitter as a function of (B, 3, H, W) uint8 images -> uint8 images: brightness, contrast, saturation
    and hue drawn per image from :data:`JITTER` (kornia, applied in a random order as torchvision does; torch's
    global generator: ``torch.manual_seed`` makes it repeat).

    Raises:
        DependencyNotInstalled: kornia is missing (the ``pixelrig[study]`` extra).
    """
    try:
        from kornia.augmentation import ColorJitter
    except ImportError as exc:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(f"colour jitter needs kornia ({exc}): pip install 'pixelrig[study]'") from None
    jitter = ColorJitter(**JITTER, p=1.0)

    def apply(images: torch.Tensor) -> torch.Tensor:
        out = jitter(images.float() / 255.0)
        return (out * 255.0).round().clamp(0, 255).to(torch.uint8).contiguous(memory_format=torch.channels_last)

    return apply


def train_bc(demos: Demos, config: Config, log: Callable[[str], None] = print) -> tuple[BCPolicy, list[float]]:
    """Train a :class:`BCPolicy` on ``demos``; returns it (in eval mode) and the mean loss of every epoch (with
    ``config.steps``: of every pass's worth of steps, the last one maybe shorter)."""
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    cams = list(demos.images)
    images = {cam: torch.from_numpy(demos.images[cam]).permute(0, 3, 1, 2).contiguous() for cam in cams}
    proprio = torch.from_numpy(demos.proprio)
    targets = torch.from_numpy(action_chunks(demos.actions, demos.episode, config.chunk))
    policy = BCPolicy(cams, demos.proprio.shape[1], demos.actions.shape[1], config.chunk,
                      demos.proprio.mean(0), demos.proprio.std(0)).to(memory_format=torch.channels_last)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=config.lr, weight_decay=1e-4)
    steps_per_epoch = max(1, len(demos) // config.batch_size)
    total_steps = config.steps if config.steps is not None else config.epochs * steps_per_epoch
    epochs = -(-total_steps // steps_per_epoch)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total_steps)
    jitter = color_jitter() if config.jitter else None
    losses = []
    policy.train()
    for epoch in range(epochs):
        start, total = time.monotonic(), 0.0
        order = torch.randperm(len(demos), generator=generator)
        steps = min(steps_per_epoch, total_steps - epoch * steps_per_epoch)
        for step in range(steps):
            batch = order[step * config.batch_size:(step + 1) * config.batch_size]
            views = {cam: random_shift(images[cam][batch], config.shift, generator) for cam in cams}
            if jitter is not None:
                views = {cam: jitter(view) for cam, view in views.items()}
            loss = F.mse_loss(policy(views, proprio[batch]), targets[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item()
        losses.append(total / steps)
        log(f"epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f} ({time.monotonic() - start:.1f} s)")
    return policy.eval(), losses


# ---- acting and evaluating ------------------------------------------------------------------------------------


class BCAgent:
    """The trained policy as an agent: ``reset()`` per episode, call with a PixelObs observation, get an action.

    Every step the policy predicts the next ``chunk`` actions; the action taken is the mean of the predictions for
    this step (one from each of the last ``chunk`` frames: ACT's temporal ensembling, equal weights). Measured on
    seeds 1000-1049 with three trained policies: 98%, 96% and 84% success with equal weights; 90%, 88%, 58% with the
    newest prediction weighted ``e^0.5`` per step; 28%, 18%, 50% acting on the newest prediction alone.

    Args:
        policy: the trained policy.
        index: the state indices of its proprioception (:func:`proprio_index`).
    """

    def __init__(self, policy: BCPolicy, index: np.ndarray) -> None:
        self.policy, self.index = policy, index
        self.queue: list[np.ndarray] = []

    def reset(self, seed: int | None = None) -> None:
        """Start an episode."""
        self.queue = []

    @torch.no_grad()
    def __call__(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        images = {cam: torch.from_numpy(np.ascontiguousarray(obs[f"{cam}/rgb"])).permute(2, 0, 1)[None]
                  for cam in self.policy.cameras}
        proprio = torch.from_numpy(np.asarray(obs["state"], np.float32)[self.index])[None]
        chunk = self.policy(images, proprio)[0].numpy()
        self.queue = [c[1:] for c in self.queue if len(c) > 1] + [chunk]  # each: its predictions from this step on
        action = np.mean([c[0] for c in self.queue], axis=0)
        return np.clip(action, -1.0, 1.0).astype(np.float32)


class RandomAgent:
    """Uniformly random actions, drawn from a generator seeded with each episode's seed."""

    def __init__(self, action_space: gym.spaces.Box) -> None:
        self.space = action_space
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None = None) -> None:
        """Start an episode (``seed`` seeds the actions)."""
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: Any) -> np.ndarray:
        return self.rng.uniform(self.space.low, self.space.high).astype(np.float32)


def save_policy(policy: BCPolicy, demos: Demos, path: Path) -> None:
    """Write the policy's weights and shape to ``path`` and its cameras as a rig file beside it (``.rig.json``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": policy.state_dict(), "cameras": list(policy.cameras), "terms": list(demos.terms),
                "proprio_dim": int(demos.proprio.shape[1]), "action_dim": policy.action_dim, "chunk": policy.chunk},
               path)
    path.with_suffix(".rig.json").write_text(json.dumps({"cameras": [c.to_dict() for c in demos.cameras]}, indent=1))


def load_policy(path: str | Path, env: gym.Env) -> BCAgent:
    """The policy :func:`save_policy` wrote at ``path``, acting in ``env`` (one torch thread)."""
    torch.set_num_threads(1)
    saved = torch.load(path, weights_only=True)
    policy = BCPolicy(saved["cameras"], saved["proprio_dim"], saved["action_dim"], saved["chunk"])
    policy.load_state_dict(saved["state_dict"])
    terms = saved.get("terms") or PROPRIO_TERMS["Panda"]  # policies saved before --task read the Panda's
    return BCAgent(policy.eval(), proprio_index(env.unwrapped.observation_layout, terms))


def eval_policy(env: gym.Env) -> BCAgent:
    """The policy saved by ``--save`` (``BC_PIXELS_MODEL``, default out/bc_pixels.pt) acting in ``env``: what
    ``pixelrig eval --policy bc_pixels:eval_policy`` builds (with ``examples`` on PYTHONPATH, and the cameras of the
    ``.rig.json`` saved beside it)."""
    import os

    return load_policy(os.environ.get("BC_PIXELS_MODEL", "out/bc_pixels.pt"), env)


def make_eval_env(demos: Demos, pixels: bool = True) -> gym.Env:
    """The env the demonstrations were recorded in (its id, kwargs and renderer), under PixelObs with their cameras
    (``pixels=False``: without, for agents that do not look; PixelObs never changes the simulation)."""
    env = gym.make(demos.env_id, **{**demos.env_kwargs, "renderer": demos.renderer})
    return PixelObs(env, cams=demos.cameras) if pixels else env


def evaluate(agent: Any, seeds: Sequence[int], env: gym.Env) -> list[dict[str, Any]]:
    """One episode per seed (``env.reset(seed=s)``, ``agent.reset(s)``); an episode succeeds when any step's
    ``info["is_success"]`` is true.

    Returns:
        ``{"seed", "success", "steps"}`` per episode.
    """
    results = []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        agent.reset(seed)
        success, steps, done = bool(info.get("is_success", False)), 0, False
        while not done:
            obs, _, terminated, truncated, info = env.step(agent(obs))
            success, steps, done = success or bool(info["is_success"]), steps + 1, terminated or truncated
        results.append({"seed": int(seed), "success": success, "steps": steps})
    return results


def success_rate(results: Sequence[dict[str, Any]]) -> float:
    """The fraction of episodes that succeeded."""
    return float(np.mean([r["success"] for r in results])) if results else 0.0


# ---- the run --------------------------------------------------------------------------------------------------


def run(config: Config, data_dir: Path, log: Callable[[str], None] = print,
        save: Path | None = None) -> dict[str, Any]:
    """Collect, train, evaluate; returns the figures the JSON holds (``save``: also write the policy there).

    Raises:
        ValueError: training seeds would reach the evaluation seeds.
    """
    if config.seed + config.episodes > EVAL_SEED:
        raise ValueError(f"training seeds {config.seed}..{config.seed + config.episodes - 1} reach the evaluation "
                         f"seeds ({EVAL_SEED}...): use fewer episodes or a lower --seed")
    times: dict[str, float] = {}
    start = time.monotonic()
    data_dir.mkdir(parents=True, exist_ok=True)
    report = collect(config.task, data_dir / "demos.hdf5", episodes=config.episodes, workers=config.workers,
                     format="robomimic", cams=policy_cameras(task=config.task), keep="success", seed=config.seed,
                     overwrite=True, renderer=config.renderer, progress=False)
    times["collect_s"] = time.monotonic() - start
    log(report.summary())
    if config.seed + report.episodes_tried > EVAL_SEED:  # the expert failed often: collect tried more seeds
        raise ValueError(f"collecting tried seeds up to {config.seed + report.episodes_tried - 1}, into the "
                         f"evaluation seeds ({EVAL_SEED}...): use fewer episodes or a lower --seed")
    mark = time.monotonic()
    demos = load_demos(report.path)
    times["load_s"] = time.monotonic() - mark
    mark = time.monotonic()
    policy, losses = train_bc(demos, config, log)
    times["train_s"] = time.monotonic() - mark
    if save is not None:
        save_policy(policy, demos, save)
    seeds = list(range(EVAL_SEED, EVAL_SEED + config.eval_episodes))
    env = make_eval_env(demos)
    try:
        mark = time.monotonic()
        trained = evaluate(BCAgent(policy, proprio_index(env.unwrapped.observation_layout, demos.terms)), seeds, env)
        times["eval_s"] = time.monotonic() - mark
    finally:
        env.close()
    env = make_eval_env(demos, pixels=False)
    try:
        mark = time.monotonic()
        random = evaluate(RandomAgent(env.action_space), seeds, env)
        times["eval_random_s"] = time.monotonic() - mark
    finally:
        env.close()
    times["total_s"] = time.monotonic() - start
    log(f"success {success_rate(trained):.0%} vs random {success_rate(random):.0%} on seeds "
        f"{seeds[0]}-{seeds[-1]}; {times['total_s'] / 60:.1f} min")
    return {
        "task": config.task, "config": dataclasses.asdict(config),
        "cameras": [c.to_dict() for c in demos.cameras], "renderer": demos.renderer,
        "proprio_terms": list(demos.terms),
        "dataset": {"episodes": demos.num_episodes, "frames": len(demos), "seeds_tried": report.episodes_tried,
                    "expert_success_rate": report.success_rate},
        "loss": losses, "eval_seeds": seeds,
        "success_rate": success_rate(trained), "random_success_rate": success_rate(random),
        "eval": trained, "eval_random": random, "times": times,
    }


def plot(result: dict[str, Any], path: Path) -> None:
    """The loss curve and the success bars, side by side, as a PNG."""
    from gymnasium.error import DependencyNotInstalled

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError as exc:
        raise DependencyNotInstalled(f"the figure needs matplotlib ({exc}): pip install 'pixelrig[bench]'") from None
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 3.8), dpi=100, gridspec_kw={"width_ratios": [2, 1]})
    try:
        losses, data, minutes = result["loss"], result["dataset"], result["times"]["total_s"] / 60
        left.plot(range(1, len(losses) + 1), losses, marker="o", markersize=3)
        left.set_yscale("log")
        left.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        left.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        left.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        left.set(xlabel="epoch", ylabel="training loss (MSE, log scale)",
                 title=f"BC on {result['task'].split('/')[-1].removesuffix('-v0')}: {data['episodes']} demos "
                       f"({data['frames']} frames), {minutes:.0f} min")
        left.grid(True, color="0.85")
        rates = [result["success_rate"], result["random_success_rate"]]
        bars = right.bar(["BC policy", "random actions"], [100 * r for r in rates], color=["tab:blue", "tab:gray"])
        right.bar_label(bars, labels=[f"{100 * r:.0f}%" for r in rates])
        right.set(ylim=(0, 105), ylabel="success (%)", title=f"{len(result['eval_seeds'])} unseen seeds")
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path)
    finally:
        plt.close(fig)


def parse_args(argv: Sequence[str] | None = None) -> tuple[Config, argparse.Namespace]:
    """The run's Config (``--quick`` starts from :data:`QUICK`) and the other arguments."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the CI learning test's cut-down run")
    parser.add_argument("--task", help=f"the env id learned (default {TASK}; its robot's terms: {list(PROPRIO_TERMS)})")
    parser.add_argument("--episodes", type=int, help="demonstrations to collect")
    parser.add_argument("--epochs", type=int, help="training epochs")
    parser.add_argument("--eval-episodes", type=int, help="evaluation episodes (seeds 1000, 1001, ...)")
    parser.add_argument("--workers", type=int, help="collection processes")
    parser.add_argument("--seed", type=int, help="the first collection seed, and the training seed")
    parser.add_argument("--threads", type=int, help="torch's CPU threads (default 1)")
    parser.add_argument("--renderer", help="tiny, egl, gl or auto (default: PIXELRIG_RENDERER, else auto)")
    parser.add_argument("--out", type=Path, help="the JSON written (default docs/bc_pixels.json; with --quick "
                        "out/bc_pixels_quick.json)")
    parser.add_argument("--figure", type=Path, help="the figure written (default: --out's path, .png)")
    parser.add_argument("--save", type=Path, help="also write the trained policy here (and its rig beside it, "
                        ".rig.json), for pixelrig eval --policy bc_pixels:eval_policy")
    parser.add_argument("--data", type=Path, help="where the dataset goes (default: a temporary folder)")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = Path("out/bc_pixels_quick.json" if args.quick else "docs/bc_pixels.json")
    if args.figure is None:
        args.figure = args.out.with_suffix(".png")
    config = QUICK if args.quick else Config()
    given = {k: getattr(args, k) for k in ("task", "episodes", "epochs", "eval_episodes", "workers", "seed",
                                             "renderer", "threads")}
    return dataclasses.replace(config, **{k: v for k, v in given.items() if v is not None}), args


def main(argv: Sequence[str] | None = None) -> None:
    config, args = parse_args(argv)
    data_dir = args.data or Path(tempfile.mkdtemp(prefix="bc_pixels_"))
    try:
        result = run(config, data_dir, save=args.save)
    finally:
        if args.data is None:
            shutil.rmtree(data_dir, ignore_errors=True)
    result["command"] = " ".join(["examples/bc_pixels.py", *(sys.argv[1:] if argv is None else argv)])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    plot(result, args.figure)
    print(f"-> {args.out}, {args.figure}")


if __name__ == "__main__":
    pixelrig.register_envs()
    main()
