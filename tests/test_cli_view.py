"""`pixelrig view` on Xvfb, and camera rig files (JSON / TOML) with their errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pixelrig.cameras.rigfile import load_rig

RIG_TOML = """
[[cameras]]
name = "front"
eye = [1.6, 0.0, 1.0]
target = [0.0, 0.0, 0.5]
width = 64
height = 48
modalities = ["rgb", "depth", "label"]

[[cameras]]
name = "hand"
mount = "lbr_iiwa_link_7"
offset = [[0.0, 0.0, 0.05], [0.0, 0.0, 0.0, 1.0]]
width = 32
height = 32
"""


def view(*args: str, display: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    if display:
        env["DISPLAY"] = display
    return subprocess.run([sys.executable, "-m", "pixelrig", "view", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_view_a_urdf_with_the_orbit_camera(xvfb: str) -> None:
    out = view("kuka_iiwa/model.urdf", "--steps", "20", display=xvfb)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "viewed kuka_iiwa/model.urdf for 20 steps"
    assert "viewing kuka_iiwa/model.urdf" in out.stderr  # the progress bar


def test_view_an_env_id_with_a_rig_file(xvfb: str, tmp_path: Path) -> None:
    rig = tmp_path / "rig.toml"
    rig.write_text(RIG_TOML)
    out = view("pixelrig/Robot-v0", "--cams", str(rig), "--steps", "5", display=xvfb)
    assert out.returncode != 0 and "source" in out.stderr  # Robot-v0 needs source=: use the file form
    out = view("kuka_iiwa/model.urdf", "--cams", str(rig), "--steps", "5", "--policy", "random", display=xvfb)
    assert out.returncode == 0, out.stderr
    out = view("pixelrig/HalfCheetah-v0", "--steps", "5", display=xvfb)
    assert out.returncode == 0, out.stderr


def test_view_without_display_says_how_to_fix_it() -> None:
    out = view("kuka_iiwa/model.urdf", "--steps", "3", display=None)
    assert out.returncode == 2
    assert "pixelrig view: no display: DISPLAY is not set" in out.stderr and "xvfb-run -a" in out.stderr


def test_rig_files_json_and_toml(tmp_path: Path) -> None:
    toml = tmp_path / "rig.toml"
    toml.write_text(RIG_TOML)
    cams = load_rig(toml)
    assert [c.name for c in cams] == ["front", "hand"] and cams[1].mount == "lbr_iiwa_link_7"
    js = tmp_path / "rig.json"
    js.write_text(json.dumps({"cameras": [c.to_dict() for c in cams]}))
    assert load_rig(js) == cams


@pytest.mark.parametrize("name,text,error,message", [
    ("missing.json", None, FileNotFoundError, "rig file '{p}' not found"),
    ("rig.yaml", "cameras: []", ValueError, "rig file {p}: extension '.yaml'; use .json or .toml"),
    ("rig.json", "{not json", ValueError, "rig file {p} is not valid JSON"),
    ("rig.toml", "[[cameras]\nname=1", ValueError, "rig file {p} is not valid TOML"),
    ("rig.json", '{"cameras": []}', ValueError, "expected a non-empty list of cameras under 'cameras'"),
    ("rig.json", '[{"name": "a", "eye": [0, 0, 1], "target": [0, 0, 0], "fov": 200}]', ValueError,
     "rig file {p}: Camera 'a': fov=200.0 must be in (0, 180) degrees"),
    ("rig.json", '[{"name": "a", "eye": [0, 1, 1], "target": [0, 0, 0]}, {"name": "a", "mount": "x"}]',
     ValueError, "rig file {p}: duplicate camera names ['a']"),
])
def test_bad_rig_files(tmp_path: Path, name, text, error, message) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(error, match=re.escape(message.format(p=path))):
        load_rig(path)


def test_bench_cli_takes_its_own_options(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "pixelrig", "bench", "--sections", "snapshot", "--quick",
                          "--json", str(tmp_path / "b.json"), "--plot", str(tmp_path / "b.png")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "## snapshot + restore" in out.stdout and (tmp_path / "b.json").is_file()


def test_bench_runs_each_section_in_a_process_of_its_own(tmp_path: Path) -> None:
    """Each section starts from a fresh interpreter (its own header line), and the report merges them."""
    out = subprocess.run([sys.executable, "-m", "pixelrig", "bench", "--sections", "snapshot,addrender", "--quick",
                          "--json", str(tmp_path / "b.json"), "--plot", str(tmp_path / "b.png")],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("pixelrig bench, ") == 2, out.stdout
    report = json.loads((tmp_path / "b.json").read_text())
    assert {"date", "machine", "pybullet", "pixelrig", "snapshot", "addrender"} == set(report)
