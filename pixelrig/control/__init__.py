"""Controllers: one class per control family (joint torque/position/velocity, pybullet's IK, task space) behind one
interface, the gripper, and the registry that names them."""
