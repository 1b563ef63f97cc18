"""``--env.type=pixelrig``: the ``EnvConfig`` LeRobot's ``lerobot-train`` and ``lerobot-eval`` find when this
distribution is installed (LeRobot imports every distribution whose name starts with ``lerobot_env_``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from lerobot.configs import FeatureType, PolicyFeature
from lerobot.envs.configs import EnvConfig
from lerobot.processor import ObservationProcessorStep, PolicyProcessorPipeline

from lerobot_env_pixelrig.spec import TaskSpec, depth_as_recorded, depth_env_key, env_keys, task_spec
from lerobot_env_pixelrig.vector import cpu_workers, make_lerobot_vec

TYPE = "pixelrig"


@dataclass
class DepthAsRecorded(ObservationProcessorStep):
    """The env processor: each camera's depth, which the env gives in metres as ``<cam>_depth`` (LeRobot passes it
    on as ``observation.<cam>_depth``), under the dataset's name ``observation.depth.<cam>`` in the dataset's units
    (millimetres, 0 = no surface), as LeRobot's reader gives a policy trained on a collected dataset."""

    fars: dict[str, float] = field(default_factory=dict)

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        out = dict(observation)
        for cam, far in self.fars.items():
            key = f"observation.{depth_env_key(cam)}"
            if key in out:
                depth = out.pop(key)
                recorded = depth_as_recorded(depth.detach().cpu().numpy(), far)
                out[f"observation.depth.{cam}"] = torch.from_numpy(np.ascontiguousarray(recorded)).to(depth.device)
        return out

    def transform_features(self, features: dict) -> dict:
        return features


@EnvConfig.register_subclass(TYPE)
@dataclass
class PixelrigEnv(EnvConfig):
    """A pixelrig task in LeRobot: ``--env.type=pixelrig --env.task=PandaLift-v0``.

    Its features are what ``pixelrig collect`` writes for the same task and rig, so a policy trained on a collected
    dataset meets the same keys, shapes and units here (``lerobot_env_pixelrig.spec`` gives the layout).

    Attributes:
        task: any pixelrig id, with or without ``pixelrig/`` (``PandaLift-v0``, ``pixelrig/PandaLift-v0``).
        rig: a rig file (JSON/TOML) as given to ``pixelrig collect --cams``; None: the task's own rig.
        looks: a looks preset (``train``, ``test-hard``) or None.
        image_size: every camera's width and height in pixels; None: the rig's.
        renderer: auto, tiny, egl or gl (several envs: pixelrig's batched vector env, one gl pass for all).
        fps: frames per second; None: the env's own (what collect records).
        episode_length: the TimeLimit; None: the task's.
        render_size: the size of LeRobot's evaluation videos (``render()``).
        dataset: a collected dataset to check the env against (cameras, shapes, state, action); errors name both.
        num_workers: processes to spread ``--eval.batch_size`` envs over; None: 1, or one per CPU with
            ``--eval.use_async_envs=true``.
    """

    task: str | None = "PandaLift-v0"
    fps: int | None = None
    rig: str | None = None
    looks: str | None = None
    image_size: int | None = None
    renderer: str = "auto"
    episode_length: int | None = None
    render_size: int | None = 128
    dataset: str | None = None
    num_workers: int | None = None
    features: dict[str, PolicyFeature] = field(default_factory=dict)
    features_map: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from lerobot_env_pixelrig.spec import check_dataset

        self._spec: TaskSpec | None = None
        spec = self.task_spec()
        if self.dataset is not None:
            check_dataset(spec, self.dataset)
        self.task = spec.env_id.removeprefix("pixelrig/")
        self.fps = spec.fps
        self.features, self.features_map = {}, {}
        for key in env_keys(spec):
            self.features[key.env_key] = PolicyFeature(type=FeatureType[key.kind], shape=key.shape)
            self.features_map[key.env_key] = key.policy_key

    def task_spec(self) -> TaskSpec:
        """The env these options make (:func:`lerobot_env_pixelrig.spec.task_spec`), resolved once."""
        if getattr(self, "_spec", None) is None:
            self._spec = task_spec(self.task, rig=self.rig, looks=self.looks, image_size=self.image_size,
                                   renderer=self.renderer, fps=self.fps,
                                   episode_length=self.episode_length,
                                   render_size=self.render_size)
        return self._spec

    @property
    def package_name(self) -> str:
        return "pixelrig"

    @property
    def gym_id(self) -> str:
        return f"pixelrig/{self.task}"

    @property
    def gym_kwargs(self) -> dict:
        return dict(self.task_spec().env_kwargs)

    def create_envs(self, n_envs: int, use_async_envs: bool = False) -> dict[str, dict[int, gym.vector.VectorEnv]]:
        """``{"pixelrig": {0: vector env}}``: ``n_envs`` envs through pixelrig's ``make_vec``."""
        workers = self.num_workers if self.num_workers is not None else (cpu_workers(n_envs) if use_async_envs
                                                                         else None)
        return {self.type: {0: make_lerobot_vec(self.task_spec(), n_envs, workers)}}

    def get_env_processors(self) -> tuple[PolicyProcessorPipeline, PolicyProcessorPipeline]:
        fars = self.task_spec().fars
        steps = [DepthAsRecorded(fars=fars)] if fars else []
        return PolicyProcessorPipeline(steps=steps), PolicyProcessorPipeline(steps=[])
