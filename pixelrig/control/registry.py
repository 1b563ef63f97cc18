"""Every control family by name: the one place a new controller is registered."""

from __future__ import annotations

from dataclasses import dataclass

from pixelrig.control.base import Controller
from pixelrig.control.follower import FollowerControl
from pixelrig.control.ik import PybulletIK
from pixelrig.control.joint import JointController
from pixelrig.control.task_space import TaskSpaceConfig, TaskSpaceControl

CONTROLLERS: dict[str, type[Controller]] = {
    "torque": JointController,
    "position": JointController,
    "velocity": JointController,
    "pybullet_ik": PybulletIK,
    "ee_delta_pos": TaskSpaceControl,
    "ee_delta_pose": TaskSpaceControl,
    "ee_pose": TaskSpaceControl,
    "ee_delta_pitch_roll": TaskSpaceControl,
    "so101_follower": FollowerControl,
}
"""``control=`` name -> the controller class implementing it."""


@dataclass(frozen=True)
class JointConfig:
    """The configuration of joint control (``control=`` of RobotEnv takes it).

    Attributes:
        control: "torque", "position" or "velocity".
        position_gain, velocity_gain: PD gains (one number or one per actuated joint; RobotEnv's defaults 0.1
            and 1.0).
    """

    control: str
    position_gain: float | tuple[float, ...] | None = None
    velocity_gain: float | tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.control not in JointController.families:
            raise ValueError(f"joint control must be one of {JointController.families}: got {self.control!r}; "
                             "task-space control takes TaskSpaceConfig")


ControlConfig = JointConfig | TaskSpaceConfig
"""What ``control=`` takes besides a family's name."""


def control_config(control: object, families: tuple[str, ...]) -> ControlConfig | None:
    """``control=`` as a configuration: a family's name gets its defaults; a config passes through.

    Args:
        control: a name in ``families`` or a :class:`JointConfig` / :class:`TaskSpaceConfig`.
        families: the names the env takes (its order is the message's).

    Returns:
        The configuration, or None for a family without one (``pybullet_ik``).

    Raises:
        ValueError: an unknown name or a config of a family the env does not take.
    """
    name = control.control if isinstance(control, JointConfig | TaskSpaceConfig) else control
    if not isinstance(name, str) or name not in families:
        raise ValueError(f"control must be one of {families}: got {control!r}")
    if isinstance(control, JointConfig | TaskSpaceConfig):
        return control
    if name in TaskSpaceControl.families:
        return TaskSpaceConfig(name)
    if name in JointController.families:
        return JointConfig(name)
    return None
