"""``pixelrig/CartPole-v0``: balance a pole on a cart (pybullet_data's cartpole.urdf), continuous force."""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.envs.base import BulletEnv, CameraSpec
from pixelrig.envs.terms import Observed, Term

REGISTRATION = {"id": "pixelrig/CartPole-v0", "entry_point": "CartPoleEnv", "max_episode_steps": 500}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class CartPoleEnv(Observed, BulletEnv):
    """Keep the pole upright by pushing the cart along its rail.

    - Model: ``cartpole.urdf`` at the origin (cart 1 kg on a prismatic rail, 1 m pole of 0.1 kg on a free hinge),
      a ground plane 1.1 m below the rail for the cameras. Joint damping and the URDF's default velocity motors are
      off. The pole is drawn orange (RGBA 0.95, 0.55, 0.1, 1), the cart and rail as the URDF colours them.
    - Time: time step 0.01 s, 2 physics steps per ``step()`` (dt = 0.02 s, as Gymnasium's CartPole).
    - Action: ``Box(-1, 1, (1,))``, the force on the cart in units of ``force_mag`` (10 N).
    - Observation: ``[x, theta, x_dot, theta_dot]`` (positions first), float32; ``observation_layout`` names
      them. Bounds: ±4.8 m and ±0.4 rad, twice the termination limits (as Gymnasium's CartPole), unbounded rates.
    - Reward: +1 per step while balanced. Terminates when ``|theta| > 0.2`` rad or ``|x| > 2.4`` m.
      Registered with a 500-step time limit (truncation).
    - Start: all four state variables uniform in [-0.05, 0.05] ("swing-free": the pole starts upright).
    """

    metadata = {**BulletEnv.metadata, "render_fps": 50}

    theta_limit = 0.2
    x_limit = 2.4
    model_files = ("plane.urdf", "cartpole.urdf")

    def __init__(self, force_mag: float = 10.0, **common: Any) -> None:
        """``force_mag``: newtons per unit of action. ``common``: BulletEnv's options (render_mode, renderer,
        gpu, randomize, ...)."""
        super().__init__(time_step=0.01, frame_skip=2, **common)
        self.force_mag = float(force_mag)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.describe_observation()

    def build_world(self) -> None:
        c = self.client
        self.load_body("ground", p.loadURDF("plane.urdf", [0, 0, -1.1], physicsClientId=c))
        self.cartpole = self.load_body("cartpole", p.loadURDF("cartpole.urdf", physicsClientId=c))
        p.changeVisualShape(self.cartpole, 1, rgbaColor=(0.95, 0.55, 0.1, 1.0), physicsClientId=c)
        # damping belongs to the whole multibody in pybullet (any link index sets it for all): one call turns it off
        p.changeDynamics(self.cartpole, -1, linearDamping=0, angularDamping=0, physicsClientId=c)
        self.motor_command(self.cartpole, (0, 1), p.VELOCITY_CONTROL, forces=(0.0, 0.0))

    def reset_task(self, options: dict[str, Any]) -> None:
        x, theta, x_dot, theta_dot = self.np_random.uniform(-0.05, 0.05, size=4)
        p.resetJointState(self.cartpole, 0, x, x_dot, physicsClientId=self.client)
        p.resetJointState(self.cartpole, 1, theta, theta_dot, physicsClientId=self.client)

    def apply_action(self, action: np.ndarray) -> None:
        self.motor_command(self.cartpole, (0,), p.TORQUE_CONTROL, forces=(float(action[0]) * self.force_mag,))

    def term_specs(self) -> list[Term]:
        x, theta = 2 * self.x_limit, 2 * self.theta_limit
        return [Term("x", 1, -x, x), Term("theta", 1, -theta, theta), Term("x_dot", 1), Term("theta_dot", 1)]

    def term_values(self) -> dict[str, Any]:
        q, qd = self.joint_states(self.cartpole, (0, 1))
        return {"x": q[:1], "theta": q[1:], "x_dot": qd[:1], "theta_dot": qd[1:]}

    def evaluate(self, action: np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        q, _ = self.joint_states(self.cartpole, (0, 1))
        terminated = bool(abs(q[1]) > self.theta_limit or abs(q[0]) > self.x_limit)
        return 1.0, terminated, {}

    def render_camera(self) -> CameraSpec:
        return {"eye": (0.0, -4.0, 0.6), "target": (0.0, 0.0, 0.3), "fov": 50.0}

    def default_cameras(self) -> list[Camera]:
        return [Camera.from_dict(c) for c in [
            {"name": "front", "eye": (0.0, -2.6, 0.45), "target": (0.0, 0.0, 0.35), "fov": 55.0, "width": 84,
             "height": 84, "near": 0.05, "far": 10.0, "modalities": ("rgb", "depth", "label")},
        ]]
