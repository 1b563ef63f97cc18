"""The base of the locomotion ports (:mod:`pixelrig.tasks`: ``pixelrig/HalfCheetah-v0``, ``pixelrig/Hopper-v0``,
``pixelrig/Walker2d-v0``, ``pixelrig/Ant-v0``), MuJoCo-style MJCF files in pybullet_data with Gymnasium's reward
semantics.

Shared by all four:

- Physics: pybullet_envs' timing, time step 0.0165/4 s with 4 physics steps per ``step()`` (dt = 0.0165 s), on
  pybullet_data's plane.
- Action: ``Box(-1, 1, (n,))``, one entry per MJCF ``<motor>``; the torque is ``power × gear × action`` where
  ``gear`` is the motor's and ``power`` the per-robot scale pybullet_envs tuned for pybullet.
- Forward reward: ``forward_reward_weight × (x_t - x_{t-1}) / dt``, the torso's velocity along +x.
  ``x_{t-1}`` is Python-side task state (``last_x``), declared so that snapshots carry it.
- Control cost: ``ctrl_cost_weight × sum(action²)``.
- Start: the file's pose plus uniform noise of half-width ``reset_noise_scale`` on joint positions and
  velocities (Gymnasium's convention).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pybullet as p
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.envs.base import BulletEnv, CameraSpec
from pixelrig.envs.robot_files import mjcf_motors, resolve_model_path
from pixelrig.envs.terms import Observed, Term

TIME_STEP = 0.0165 / 4
FRAME_SKIP = 4


class LocomotionEnv(Observed, BulletEnv):
    """Base of the locomotion tasks (see the module docstring for what they share)."""

    metadata = {**BulletEnv.metadata, "render_fps": 61}
    task_state = ("last_x",)

    mjcf: ClassVar[str]
    power: ClassVar[float]
    planar: ClassVar[bool] = True
    forward_reward_weight: ClassVar[float] = 1.0
    ctrl_cost_weight: ClassVar[float] = 0.1
    healthy_reward: ClassVar[float] = 0.0
    reset_noise_scale: ClassVar[float] = 0.1
    track_height: ClassVar[float] = 1.0
    """Height of the tracking camera above the torso's link frame (these files put that frame at different
    heights: at the torso for the cheetah and the ant, at the ground for hopper and walker)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "mjcf" in cls.__dict__:
            cls.model_files = ("plane.urdf", cls.mjcf)

    def __init__(self, **common: Any) -> None:
        """``common``: BulletEnv's options (render_mode, renderer, gpu, randomize, ...)."""
        self._motors_spec = mjcf_motors(resolve_model_path(self.mjcf))
        super().__init__(time_step=TIME_STEP, frame_skip=FRAME_SKIP, **common)
        n = len(self.motor_joints)
        self.action_space = spaces.Box(-1.0, 1.0, (n,), np.float32)
        self.describe_observation()
        self.observe()  # its forward kinematics leave the link frames as the snapshots' physics bytes have them
        self.last_x = 0.0

    def build_world(self) -> None:
        c = self.client
        self.load_body("ground", p.loadURDF("plane.urdf", physicsClientId=c))
        (robot,) = p.loadMJCF(self.mjcf, physicsClientId=c)
        self.robot = self.load_body(type(self).__name__.removesuffix("Env").lower(), robot)
        by_name = {}
        for j in range(p.getNumJoints(robot, physicsClientId=c)):
            info = p.getJointInfo(robot, j, physicsClientId=c)
            by_name[info[1].decode()] = j
            if info[12].decode() == "torso":
                self.torso_link = j
        self.motor_joints = [by_name[m.joint] for m in self._motors_spec]
        self.torques = np.array([self.power * m.effort for m in self._motors_spec])
        self.root_joints = [0, 1, 2] if self.planar else []  # x slide, z slide, pitch hinge
        self.movable = [j for j in by_name.values()
                        if p.getJointInfo(robot, j, physicsClientId=c)[2] != p.JOINT_FIXED]
        self.motor_command(robot, self.movable, p.VELOCITY_CONTROL, forces=[0.0] * len(self.movable))

    # ---- state vectors ---------------------------------------------------------------------------------

    def torso_position(self) -> np.ndarray:
        """World position of the torso's centre of mass (its link frame is at the world origin in these files)."""
        if self.planar:
            return np.array(p.getLinkState(self.robot, self.torso_link, computeForwardKinematics=True,
                                           physicsClientId=self.client)[0])
        return np.array(p.getBasePositionAndOrientation(self.robot, physicsClientId=self.client)[0])

    def qpos_qvel(self) -> tuple[np.ndarray, np.ndarray]:
        """MuJoCo-style generalised positions and velocities.

        Planar robots: qpos = [x, z, pitch, joints...] (x, z of the torso in the world), qvel = [vx, vz,
        pitch rate, joint rates...]. Ant: qpos = [x, y, z, quaternion xyzw, joints...], qvel = [linear (3),
        angular (3), joint rates...].
        """
        c = self.client
        q, qd = self.joint_states(self.robot, self.motor_joints)
        if self.planar:
            root_q, root_qd = self.joint_states(self.robot, self.root_joints)
            x, _, z = self.torso_position()
            return np.concatenate([[x, z, root_q[2]], q]), np.concatenate([root_qd, qd])
        pos, orn = p.getBasePositionAndOrientation(self.robot, physicsClientId=c)
        lin, ang = p.getBaseVelocity(self.robot, physicsClientId=c)
        return np.concatenate([pos, orn, q]), np.concatenate([lin, ang, qd])

    def term_specs(self) -> list[Term]:
        """Gymnasium's observation, which leaves out the x (and y) position: planar robots ``torso_z``,
        ``torso_pitch``, ``joint_pos``, ``torso_vel`` (vx, vz, pitch rate), ``joint_vel``; the ant ``torso_z``,
        ``torso_quat``, ``joint_pos``, ``torso_linvel``, ``torso_angvel``, ``joint_vel``."""
        n = len(self.motor_joints)
        if self.planar:
            return [Term("torso_z", 1), Term("torso_pitch", 1), Term("joint_pos", n), Term("torso_vel", 3),
                    Term("joint_vel", n)]
        return [Term("torso_z", 1), Term("torso_quat", 4), Term("joint_pos", n), Term("torso_linvel", 3),
                Term("torso_angvel", 3), Term("joint_vel", n)]

    def term_values(self) -> dict[str, Any]:
        qpos, qvel = self.qpos_qvel()
        qvel = self.clip_velocities(qvel)
        if self.planar:
            return {"torso_z": qpos[1:2], "torso_pitch": qpos[2:3], "joint_pos": qpos[3:], "torso_vel": qvel[:3],
                    "joint_vel": qvel[3:]}
        return {"torso_z": qpos[2:3], "torso_quat": qpos[3:7], "joint_pos": qpos[7:], "torso_linvel": qvel[:3],
                "torso_angvel": qvel[3:6], "joint_vel": qvel[6:]}

    def clip_velocities(self, qvel: np.ndarray) -> np.ndarray:
        return qvel

    # ---- episode ---------------------------------------------------------------------------------------

    def reset_task(self, options: dict[str, Any]) -> None:
        c, rng, s = self.client, self.np_random, self.reset_noise_scale
        joints = self.root_joints[1:] + self.motor_joints if self.planar else self.motor_joints
        for j in joints:
            lo, hi = p.getJointInfo(self.robot, j, physicsClientId=c)[8:10]
            q0 = float(np.clip(0.0, lo, hi)) if hi > lo else 0.0
            p.resetJointState(self.robot, j, q0 + rng.uniform(-s, s), rng.uniform(-s, s), physicsClientId=c)
        if self.planar:
            p.resetJointState(self.robot, 0, 0.0, rng.uniform(-s, s), physicsClientId=c)
        self.last_x = float(self.torso_position()[0])

    def apply_action(self, action: np.ndarray) -> None:
        self.motor_command(self.robot, self.motor_joints, p.TORQUE_CONTROL, forces=self.torques * action)

    def evaluate(self, action: np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        x = float(self.torso_position()[0])
        x_velocity = (x - self.last_x) / self.dt
        self.last_x = x
        forward = self.forward_reward_weight * x_velocity
        ctrl = self.ctrl_cost_weight * float(np.sum(np.square(action)))
        healthy = self.is_healthy()
        reward = forward - ctrl + (self.healthy_reward if healthy else 0.0) - self.extra_costs()
        info = {"x_position": x, "x_velocity": x_velocity, "reward_forward": forward, "reward_ctrl": -ctrl}
        return reward, self.terminates and not healthy, info

    terminates: ClassVar[bool] = False

    def is_healthy(self) -> bool:
        return True

    def extra_costs(self) -> float:
        return 0.0

    def reset_info(self) -> dict[str, Any]:
        return {"x_position": self.last_x}

    # ---- cameras -------------------------------------------------------------------------------------

    def render_camera(self) -> CameraSpec:
        x, y, z = self.torso_position()
        return {"eye": (x + 1.0, y - 3.2, 1.2), "target": (x, y, 0.5), "fov": 50.0, "near": 0.05, "far": 30.0}

    def default_cameras(self) -> list[Camera]:
        rgbdl = ("rgb", "depth", "label")
        return [
            Camera("side", eye=(1.0, -3.2, 1.2), target=(0.0, 0.0, 0.5), fov=55.0, width=84, height=84, near=0.05,
                   far=30.0, modalities=rgbdl),
            # follows the torso's position (not its rotation): 3 m to its side, 1 m up, looking along +y and
            # 10 degrees down (a rotation of -100 degrees about x)
            Camera("track", mount="torso", follow="position",
                   offset=((0.0, -3.0, self.track_height), (-0.7660444, 0.0, 0.0, 0.6427876)), fov=45.0, width=64,
                   height=64, near=0.05, far=30.0, modalities=rgbdl),
        ]
