"""Where a camera is: resolving mount link names in a pybullet scene, link poses, view matrices and OpenCV
extrinsics."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pybullet as p

from pixelrig.cameras.spec import Camera, Pose


def body_name(client: int, body: int) -> str:
    """The body's name as the model file gives it (URDF robot name, MJCF/SDF model name)."""
    return p.getBodyInfo(body, physicsClientId=client)[1].decode("utf-8", errors="replace")


def scene_links(client: int, names: Mapping[int, str] | None = None) -> list[tuple[int, int, str, str]]:
    """Every link of every body: ``(body id, link index, body name, link name)``; the base link is index -1.

    Args:
        client: pybullet client id.
        names: optional body names to use instead of the model files' own (e.g. an env's ``body_names``).
    """
    out = []
    for i in range(p.getNumBodies(physicsClientId=client)):
        body = p.getBodyUniqueId(i, physicsClientId=client)
        bname = (names or {}).get(body) or body_name(client, body)
        base = p.getBodyInfo(body, physicsClientId=client)[0].decode("utf-8", errors="replace")
        out.append((body, -1, bname, base))
        for j in range(p.getNumJoints(body, physicsClientId=client)):
            link = p.getJointInfo(body, j, physicsClientId=client)[12].decode("utf-8", errors="replace")
            out.append((body, j, bname, link))
    return out


@dataclass(frozen=True)
class Mount:
    """A resolved mount: the body and link a camera rides on, and how to get the link frame from pybullet.

    ``inertial_inv`` is the inverse of the base's local inertial frame: pybullet reports a base's pose at its
    centre of mass, while a mount refers to the link frame of the model file.
    """

    body: int
    link: int
    inertial_inv: Pose | None = None


def resolve_mount(camera: Camera, client: int, names: Mapping[int, str] | None = None) -> Mount:
    """Find the link named by ``camera.mount`` (``"link"`` or ``"body/link"``) in the scene.

    Raises:
        ValueError: no such link (the message lists the links that exist), or a bare link name that several
            bodies share (the message lists the ``body/link`` spellings to choose from).
    """
    want_body, _, want_link = camera.mount.rpartition("/")
    links = scene_links(client, names)
    hits = [(b, li, bn, ln) for b, li, bn, ln in links if ln == want_link and (not want_body or bn == want_body)]
    if not hits:
        listing = ", ".join(f"{bn}/{ln}" for _, _, bn, ln in links) or "(the scene is empty)"
        raise ValueError(f"Camera {camera.name!r}: unknown mount link {camera.mount!r}; links in the scene: {listing}")
    if len(hits) > 1:
        choices = ", ".join(f"'{bn}/{ln}'" for _, _, bn, ln in hits)
        raise ValueError(
            f"Camera {camera.name!r}: mount {camera.mount!r} names a link of several bodies; write one of {choices}"
        )
    body, link, _, _ = hits[0]
    if link >= 0:
        return Mount(body, link)
    info = p.getDynamicsInfo(body, -1, physicsClientId=client)
    return Mount(body, -1, tuple(p.invertTransform(info[3], info[4])))  # type: ignore[arg-type]


def link_pose(client: int, mount: Mount) -> Pose:
    """World pose of a mount's link frame, from the current joint positions (forward kinematics)."""
    if mount.link >= 0:
        state = p.getLinkState(mount.body, mount.link, computeForwardKinematics=True, physicsClientId=client)
        return state[4], state[5]
    com_pos, com_orn = p.getBasePositionAndOrientation(mount.body, physicsClientId=client)
    return p.multiplyTransforms(com_pos, com_orn, *mount.inertial_inv)  # type: ignore[misc]


def mounted_view(link: Pose, offset: Pose) -> tuple[float, ...]:
    """View matrix of a camera at ``offset`` in a link frame: looks along +z, image up is -y (OpenCV frame)."""
    pos, orn = p.multiplyTransforms(link[0], link[1], offset[0], offset[1])
    r = p.getMatrixFromQuaternion(orn)  # row-major 3x3; column k is the frame's axis k in world coordinates
    forward = (r[2], r[5], r[8])
    up = (-r[1], -r[4], -r[7])
    target = (pos[0] + forward[0], pos[1] + forward[1], pos[2] + forward[2])
    return tuple(p.computeViewMatrix(pos, target, up))


def fixed_view(camera: Camera) -> tuple[float, ...]:
    """View matrix of a world-fixed camera."""
    return tuple(p.computeViewMatrix(camera.eye, camera.target, camera.up))


def jitter_view(view: tuple[float, ...], jitter: Pose) -> tuple[float, ...]:
    """Move a camera by ``jitter`` (a pose in the camera's own OpenGL frame: x right, y up, looking along -z)."""
    m = np.array(view, dtype=np.float64).reshape(4, 4).T  # column-major -> row-major world->camera
    r = np.array(p.getMatrixFromQuaternion(jitter[1]), dtype=np.float64).reshape(3, 3)
    inv = np.eye(4)
    inv[:3, :3] = r.T
    inv[:3, 3] = -r.T @ np.asarray(jitter[0], dtype=np.float64)
    return tuple((inv @ m).T.ravel().tolist())


_GL_TO_CV = np.diag([1.0, -1.0, -1.0, 1.0])


def view_to_extrinsics(view: tuple[float, ...]) -> np.ndarray:
    """World -> camera transform in OpenCV axes (+x right, +y down, +z forward) from a pybullet view matrix.

    Args:
        view: 16 floats, column-major OpenGL view matrix (world -> camera with +y up, looking along -z).

    Returns:
        (4, 4) float64 rigid transform ``[[R, t], [0, 1]]``: a world point ``p`` is at ``R @ p + t`` in the camera.
    """
    m = np.array(view, dtype=np.float64).reshape(4, 4).T  # column-major -> row-major
    return _GL_TO_CV @ m
