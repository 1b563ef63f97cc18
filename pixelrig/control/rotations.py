"""Conversions between the rotation forms pixelrig observes and commands (quaternion xyzw, roll/pitch/yaw, rotation
matrix, 6D, axis-angle), and the quaternion product, as pure float64 functions with pybullet's conventions.

Conventions (those of ``pybullet.getQuaternionFromEuler`` / ``getMatrixFromQuaternion``):

- A quaternion is ``(x, y, z, w)``; ``q`` and ``-q`` are the same rotation.
- ``R`` maps vectors from the rotated (body) frame to the world: ``v_world = R @ v_body``; its columns are the
  body's x, y and z axes in world coordinates.
- Roll/pitch/yaw are extrinsic x-y-z angles: ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``, with roll and yaw in
  [-pi, pi] and pitch in [-pi/2, pi/2].
- An axis-angle (rotation) vector ``v`` is the rotation by ``|v|`` radians about ``v / |v|`` (right hand);
  ``(0, 0, 0)`` is no rotation.
- The product ``quat_multiply(a, b)`` is the rotation ``b`` followed by ``a``: ``R(a * b) = R(a) @ R(b)``.
- The 6D form (Zhou et al., "On the continuity of rotation representations in neural networks", 2019) is the
  first two columns of ``R``: ``(R00, R10, R20, R01, R11, R21)``, the body's x axis then its y axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def quat_to_matrix(quat: Sequence[float] | np.ndarray) -> np.ndarray:
    """The rotation matrix of a quaternion.

    Args:
        quat: ``(x, y, z, w)``, any non-zero length (it is normalised first).

    Returns:
        (3, 3) float64 rotation matrix, body to world.

    Raises:
        ValueError: a zero-length or non-finite quaternion.
    """
    q = np.asarray(quat, dtype=np.float64)
    n = float(np.linalg.norm(q))
    if q.shape != (4,) or not math.isfinite(n) or n < 1e-12:
        raise ValueError(f"quaternion {q.tolist()} must be 4 finite numbers (x, y, z, w) of non-zero length")
    x, y, z, w = q / n
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def matrix_to_quat(matrix: np.ndarray) -> np.ndarray:
    """The unit quaternion ``(x, y, z, w)`` of a rotation matrix, with ``w >= 0`` (Shepperd's method: stable for
    every rotation).

    Args:
        matrix: (3, 3) rotation matrix.

    Returns:
        (4,) float64 unit quaternion.
    """
    m = np.asarray(matrix, dtype=np.float64)
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = 2.0 * math.sqrt(1.0 + trace)
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, s / 4]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(max(1.0 + m[0, 0] - m[1, 1] - m[2, 2], 0.0))
        q = [s / 4, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(max(1.0 + m[1, 1] - m[0, 0] - m[2, 2], 0.0))
        q = [(m[0, 1] + m[1, 0]) / s, s / 4, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = 2.0 * math.sqrt(max(1.0 + m[2, 2] - m[0, 0] - m[1, 1], 0.0))
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, s / 4, (m[1, 0] - m[0, 1]) / s]
    out = np.array(q)
    out /= np.linalg.norm(out)
    return -out if out[3] < 0 else out


def matrix_to_rpy(matrix: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw (radians) of a rotation matrix, ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``.

    At gimbal lock (pitch = ±pi/2) roll is set to 0 and the whole rotation about z goes into yaw.

    Returns:
        (3,) float64: roll and yaw in [-pi, pi], pitch in [-pi/2, pi/2].
    """
    m = np.asarray(matrix, dtype=np.float64)
    cos_pitch = math.hypot(m[2, 1], m[2, 2])
    pitch = math.atan2(-m[2, 0], cos_pitch)
    if cos_pitch > 1e-9:
        roll = math.atan2(m[2, 1], m[2, 2])
        yaw = math.atan2(m[1, 0], m[0, 0])
    else:  # cos(pitch) = 0: only roll - yaw (or roll + yaw) is defined
        roll = 0.0
        yaw = math.atan2(-m[0, 1], m[1, 1])
    return np.array([roll, pitch, yaw])


def rpy_to_matrix(rpy: Sequence[float] | np.ndarray) -> np.ndarray:
    """The rotation matrix ``Rz(yaw) @ Ry(pitch) @ Rx(roll)`` of roll, pitch, yaw (radians); (3, 3) float64."""
    roll, pitch, yaw = (float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw),
                              math.sin(yaw))
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def quat_to_rpy(quat: Sequence[float] | np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw of a quaternion ``(x, y, z, w)`` (see :func:`matrix_to_rpy`)."""
    return matrix_to_rpy(quat_to_matrix(quat))


def rpy_to_quat(rpy: Sequence[float] | np.ndarray) -> np.ndarray:
    """The unit quaternion ``(x, y, z, w)`` of roll, pitch, yaw, as ``pybullet.getQuaternionFromEuler`` gives it."""
    half = np.asarray(rpy, dtype=np.float64) / 2.0
    cr, cp, cy = np.cos(half)
    sr, sp, sy = np.sin(half)
    return np.array([
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    ])


def matrix_to_rot6d(matrix: np.ndarray) -> np.ndarray:
    """The 6D form of a rotation matrix: its first two columns, ``(R00, R10, R20, R01, R11, R21)``."""
    m = np.asarray(matrix, dtype=np.float64)
    return np.concatenate([m[:, 0], m[:, 1]])


def rot6d_to_matrix(rot6d: Sequence[float] | np.ndarray) -> np.ndarray:
    """The rotation matrix of a 6D form (Gram-Schmidt on the two columns; the third is their cross product).

    Raises:
        ValueError: the two columns are (nearly) parallel or zero.
    """
    v = np.asarray(rot6d, dtype=np.float64)
    a, b = v[:3], v[3:6]
    if np.linalg.norm(a) < 1e-12:
        raise ValueError(f"6D rotation {v.tolist()}: the first column has zero length")
    x = a / np.linalg.norm(a)
    b = b - x * float(x @ b)
    if np.linalg.norm(b) < 1e-12:
        raise ValueError(f"6D rotation {v.tolist()}: the two columns are parallel")
    y = b / np.linalg.norm(b)
    return np.stack([x, y, np.cross(x, y)], axis=1)


def quat_multiply(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> np.ndarray:
    """The Hamilton product ``a * b`` of two quaternions ``(x, y, z, w)``: ``R(a * b) = R(a) @ R(b)`` (``b`` first,
    then ``a``). Unit in, unit out (up to rounding); (4,) float64."""
    ax, ay, az, aw = _floats(a)
    bx, by, bz, bw = _floats(b)
    return np.array([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ])


def quat_conjugate(quat: Sequence[float] | np.ndarray) -> np.ndarray:
    """The conjugate ``(-x, -y, -z, w)``: the inverse rotation of a unit quaternion; (4,) float64."""
    x, y, z, w = _floats(quat)
    return np.array([-x, -y, -z, w])


def rotvec_to_quat(rotvec: Sequence[float] | np.ndarray) -> np.ndarray:
    """The unit quaternion ``(x, y, z, w)`` of an axis-angle vector (radians); ``(0, 0, 0)`` gives ``(0, 0, 0, 1)``.

    Exact near zero: ``sin(a/2)/a`` is taken from its series below 1e-4 rad, so tiny rotations keep their axis.
    """
    x, y, z = _floats(rotvec)
    angle = math.sqrt(x * x + y * y + z * z)
    half = 0.5 - angle * angle / 48.0 if angle < 1e-4 else math.sin(angle / 2.0) / angle
    return np.array([x * half, y * half, z * half, math.cos(angle / 2.0)])


def quat_to_rotvec(quat: Sequence[float] | np.ndarray) -> np.ndarray:
    """The axis-angle vector (radians, angle in [0, pi]) of a unit quaternion ``(x, y, z, w)``: the shorter of the
    two ways round (``q`` and ``-q`` give the same vector); (3,) float64.

    Raises:
        ValueError: a zero-length or non-finite quaternion.
    """
    x, y, z, w = _floats(quat)
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    if not math.isfinite(norm) or norm < 1e-12:
        raise ValueError(f"quaternion {[x, y, z, w]} must be 4 finite numbers (x, y, z, w) of non-zero length")
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    sin_half = math.sqrt(x * x + y * y + z * z)
    angle = 2.0 * math.atan2(sin_half, w)
    scale = angle / sin_half if sin_half > 0.0 else 0.0
    return np.array([x * scale, y * scale, z * scale])


def _floats(values: Sequence[float] | np.ndarray) -> list[float]:
    """``values`` as a list of Python floats (the fast way to take a small vector apart)."""
    return np.asarray(values, dtype=np.float64).tolist()
