"""``pixelrig/PandaPickObject-v0``: the Franka Panda lifts one of pybullet_data's ``random_urdfs`` objects, chosen by
the seed; and the subset of those objects it can grasp, with the measurements that choose it.

How the subset is chosen. pybullet_data's 1,000 ``random_urdfs`` are 0.8-21 cm across at their widest (median
12 cm) and the Panda's fingers open 8 cm: as they are, 19 are narrower than that, mostly thin sticks, and one passes
the size test below (a 6.2 × 3.1 × 3.2 cm stick). The task loads them
at half size (:data:`OBJECT_SCALE`), each as one convex hull of its mesh (:func:`convex_object_file`: the files'
compound shapes would break exact snapshots), and keeps those that then

1. fit the open hand at any yaw and give the fingers something to squeeze: 3-6.5 cm across in every horizontal
   direction (:data:`WIDTH_RANGE`) and 3-7 cm tall (:data:`HEIGHT_RANGE`), measured on the vertices of the file's
   mesh as the file orients it (:func:`object_extents`; the gripper closes across the table, 8 cm open), and
2. stand still as the file orients them: dropped 5 mm onto a plane, after 1 s they lean less than 5° and move
   slower than 2 mm/s and 0.02 rad/s (:func:`stands_still`), so that an episode never starts with the object
   tipping over.

355 objects pass the first test and 41 the second: :data:`OBJECTS` (tests/test_envs_tasks_manipulation.py derives
the list again). At half size they are 4.5-6.5 cm across at their widest, 3.2-4.7 cm at their narrowest and
4.5-6.2 cm tall, 0.1 kg each.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p
import pybullet_data

from pixelrig.envs.manipulation import FULL_TURN, PandaManipulationEnv, closeness
from pixelrig.envs.panda import TABLE_TOP
from pixelrig.envs.terms import Term
from pixelrig.system import cache
from pixelrig.tasks.lift import PandaLiftEnv

REGISTRATION = {"id": "pixelrig/PandaPickObject-v0", "entry_point": "PandaPickObjectEnv", "max_episode_steps": 100}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


OBJECT_SCALE = 0.5
"""The ``globalScaling`` the objects are loaded with (half their files' size)."""

WIDTH_RANGE = (0.03, 0.065)
"""The object's extent in every horizontal direction, at :data:`OBJECT_SCALE` (m)."""

HEIGHT_RANGE = (0.03, 0.07)
"""The object's height as its file orients it, at :data:`OBJECT_SCALE` (m)."""

OBJECTS: tuple[str, ...] = (
    "004", "028", "041", "053", "067", "077", "095", "198", "236", "246", "283", "300", "323", "341", "343",
    "347", "403", "418", "428", "440", "444", "455", "503", "543", "614", "628", "629", "632", "740", "745",
    "774", "795", "818", "847", "856", "858", "882", "905", "918", "953", "984",
)
"""The random_urdfs objects PandaPickObject chooses from (folder names; see the module docstring)."""

DROP_HEIGHT = TABLE_TOP + 0.041
"""Where the object's centre of mass starts (m): above the table by more than any object's reach below it (3.8 cm),
so that every object starts clear of the table, drops at most 2.4 cm and settles."""

SETTLE_STEPS = (48, 720)
"""Physics steps the dropped object settles for before the episode's first observation: at least 48 (0.2 s: it has
landed), then until it is still (slower than 0.01 m/s and 0.1 rad/s), at most 720 (3 s; measured over seeds
0-99: 48-445 steps, 132 on average; some shapes rock for a while after landing)."""


def object_file(name: str) -> Path:
    """The URDF of the random_urdfs object ``name`` (a folder name, "000" to "999")."""
    return Path(pybullet_data.getDataPath()) / "random_urdfs" / name / f"{name}.urdf"


def _vertices(name: str) -> np.ndarray:
    """The finite vertices of the object's mesh, as its file gives them (unscaled): (n, 3) float64."""
    rows = [line.split()[1:4] for line in object_file(name).with_suffix(".obj").read_text().splitlines()
            if line.startswith("v ")]
    vertices = np.array(rows, dtype=np.float64).reshape(-1, 3)
    return vertices[np.all(np.isfinite(vertices), axis=1)]


@functools.cache
def convex_object_file(name: str) -> Path:
    """A copy of the object's URDF whose collision shape is one convex hull of its mesh (visual, inertia and contact
    parameters as the file has them), written once to pixelrig's cache folder.

    The files' meshes are several convex pieces, which pybullet makes a compound shape, and the contact caches of a
    compound's pieces are not in pybullet's saved state: a snapshot of an object touching anything would not
    restore bit for bit (measured: 0.6 µm apart after 60 steps, 5 mm once gripped). One convex hull restores
    exactly; the objects are blobs, so the hull is close to the pieces.
    """
    from scipy.spatial import ConvexHull

    urdf, mesh = object_file(name), object_file(name).with_suffix(".obj")
    text = urdf.read_text()
    key = hashlib.sha256(urdf.read_bytes() + mesh.read_bytes() + b"convex hull 2").hexdigest()[:16]
    folder = cache.cache_root() / "objects" / f"{name}-{key}"
    target = folder / f"{name}.urdf"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    vertices = _vertices(name)
    hull = ConvexHull(vertices)
    number = {int(v): i + 1 for i, v in enumerate(hull.vertices)}
    lines = ["o hull", *(f"v {x:.17g} {y:.17g} {z:.17g}" for x, y, z in vertices[hull.vertices]),
             *("f " + " ".join(str(number[int(v)]) for v in face) for face in hull.simplices)]
    _write(folder / f"{name}_hull.obj", "\n".join(lines) + "\n")
    collision = text.index("<collision>")
    text = (text[:collision].replace(f'filename="{mesh.name}"', f'filename="{mesh}"')
            + text[collision:].replace(f'filename="{mesh.name}"', f'filename="{folder / (name + "_hull.obj")}"'))
    _write(target, text)  # last: its presence marks the folder complete
    return target


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (another process may be writing the same file)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


@functools.cache
def object_extents(name: str, scale: float = OBJECT_SCALE) -> tuple[float, float, float, float]:
    """An object's size at ``scale``, from its mesh's vertices as its file orients it (m).

    Returns:
        ``(widest, narrowest, height, below)``: the largest and the smallest extent across all horizontal
        directions (every 2°), the vertical extent, and how far the mesh reaches below the object's origin (its
        centre of mass). NaN everywhere for a mesh without vertices.
    """
    urdf = object_file(name).read_text()
    size = float(re.findall(r'scale="([^"]+)"', urdf)[-1].split()[0]) * scale
    vertices = _vertices(name) * size
    if len(vertices) == 0:
        return (math.nan,) * 4
    angles = np.radians(np.arange(0.0, 180.0, 2.0))
    widths = np.ptp(vertices[:, :2] @ np.stack([np.cos(angles), np.sin(angles)]), axis=0)
    return (float(widths.max()), float(widths.min()), float(np.ptp(vertices[:, 2])), float(-vertices[:, 2].min()))


def fits_the_hand(name: str) -> bool:
    """Test 1 of the module docstring: the size at :data:`OBJECT_SCALE` within :data:`WIDTH_RANGE` and
    :data:`HEIGHT_RANGE`."""
    widest, narrowest, height, _ = object_extents(name)
    return (WIDTH_RANGE[0] <= narrowest and widest <= WIDTH_RANGE[1]
            and HEIGHT_RANGE[0] <= height <= HEIGHT_RANGE[1])


def stands_still(name: str, client: int) -> bool:
    """Test 2 of the module docstring, in ``client`` (a connected pybullet client holding a plane at z = 0 and
    gravity; the object is removed again)."""
    below = object_extents(name)[3]
    body = p.loadURDF(str(convex_object_file(name)), [0.0, 0.0, below + 0.005], globalScaling=OBJECT_SCALE,
                      physicsClientId=client)
    try:
        for _ in range(240):
            p.stepSimulation(physicsClientId=client)
        orn = p.getBasePositionAndOrientation(body, physicsClientId=client)[1]
        lin, ang = p.getBaseVelocity(body, physicsClientId=client)
    finally:
        p.removeBody(body, physicsClientId=client)
    lean = math.degrees(math.acos(min(1.0, abs(p.getMatrixFromQuaternion(orn)[8]))))
    return lean < 5.0 and float(np.linalg.norm(lin)) < 0.002 and float(np.linalg.norm(ang)) < 0.02


class PandaPickObjectEnv(PandaManipulationEnv):
    """Lift one of pybullet_data's random_urdfs objects 10 cm (``pixelrig/PandaPickObject-v0``).

    - World: PandaEnv's and one object (``object``), one of the 41 :data:`OBJECTS` at half size (0.1 kg), chosen by
      the seed at every reset (``object_name`` says which; the world is rebuilt with it, and snapshots rebuild it).
    - Start: the object's centre of mass at x ∈ [0.42, 0.58], y ∈ [-0.12, 0.12], :data:`DROP_HEIGHT` high, any
      yaw; it drops onto the table and settles until still (:data:`SETTLE_STEPS`) before the first observation.
    - Observation (float32, 35): the gripper and the object (``object_*``) as :class:`PandaManipulationEnv` lays
      them out, then ``object_aabb`` (6): the object's bounding box in the world's axes, lowest corner then highest
      (pybullet's ``getAABB``, which pads it by about 1 mm).
    - Success: the object's centre of mass at least :attr:`lift_height` (0.10 m) above where it had settled; the
      episode then terminates. Registered with a 100-step time limit.
    - Dense stages: PandaLift's, the reach measured to the middle of the bounding box.
    - Control: ``ee_delta_pos`` with the gripper (4 actions).
    """

    objects = ("object",)
    task_state = ("object_index", "rest_height")
    world_state = ("object_index",)
    lift_height = PandaLiftEnv.lift_height
    start_positions = {"object": ((0.42, -0.12, DROP_HEIGHT), (0.58, 0.12, DROP_HEIGHT))}
    start_yaws = {"object": FULL_TURN}
    stage_weights = PandaLiftEnv.stage_weights
    rig_target = PandaLiftEnv.rig_target
    model_files = ("plane.urdf", "table/table.urdf", "franka_panda/panda.urdf",
                   *(f"random_urdfs/{name}/{name}.urdf" for name in OBJECTS))

    def __init__(self, **options: Any) -> None:
        self.object_index = 0
        """Which of :data:`OBJECTS` this episode's world holds."""
        self.rest_height = DROP_HEIGHT
        """The height of the object's centre of mass once it settled at the episode's start (m)."""
        super().__init__(**options)

    @property
    def object_name(self) -> str:
        """The random_urdfs folder name of this episode's object."""
        return OBJECTS[self.object_index]

    def choose_world(self) -> None:
        self.object_index = int(self.np_random.integers(len(OBJECTS)))

    def build_task_objects(self) -> None:
        path = self.model_file(convex_object_file(self.object_name))
        body = p.loadURDF(path, [0.5, 0.0, DROP_HEIGHT], globalScaling=OBJECT_SCALE, physicsClientId=self.client)
        self.load_body("object", body)

    def start_episode(self) -> None:
        least, most = SETTLE_STEPS
        for step in range(most):
            if step >= least and self.still("object"):
                break
            p.stepSimulation(physicsClientId=self.client)
        self.rest_height = float(self.position("object")[2])
        super().start_episode()

    def goal_terms(self) -> list[Term]:
        return [Term("object_aabb", 6)]

    def goal_values(self) -> dict[str, np.ndarray]:
        low, high = p.getAABB(self.body_id("object"), physicsClientId=self.client)
        return {"object_aabb": np.array([*low, *high])}

    def lifted(self) -> float:
        """How far the object's centre of mass is above where it settled (m)."""
        return float(self.position("object")[2] - self.rest_height)

    def is_success(self) -> bool:
        return self.lifted() >= self.lift_height

    def stages(self) -> dict[str, float]:
        low, high = p.getAABB(self.body_id("object"), physicsClientId=self.client)
        middle = (np.array(low) + np.array(high)) / 2.0
        grasp = float(self.grasped("object"))
        return {"reach": closeness(float(np.linalg.norm(middle - self.grasp_centre()))), "grasp": grasp,
                "lift": grasp * float(np.clip(self.lifted() / self.lift_height, 0.0, 1.0))}
