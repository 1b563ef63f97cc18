"""`pixelrig view` on Xvfb, and camera rig files (JSON / TOML) with their errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pixelrig.cameras.rigfile import load_rig

from .colorings import PLACEHOLDER, label_colors, off_depth_ramp
from .test_display_window import screenshot_of, window_geometry

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


def rig_window(display: str, rig: Path, shape: tuple[int, int, int]) -> np.ndarray:
    """What `pixelrig view kuka_iiwa/model.urdf --cams <rig>` shows, taken from the X server once the window has
    ``shape`` (it can first map at a small default size: CI once caught it at 98 x 69 px); the window is then
    closed with its q key (its step budget is far beyond the test, so only the key ends it), and the command must
    exit cleanly."""
    env = dict(os.environ, DISPLAY=display)
    title = "pixelrig view: kuka_iiwa/model.urdf"
    proc = subprocess.Popen([sys.executable, "-m", "pixelrig", "view", "kuka_iiwa/model.urdf", "--cams", str(rig),
                             "--steps", "1000000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while window_geometry(title) is None and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        shot = screenshot_of(display, title, shape=shape)
        wid = subprocess.run(["xdotool", "search", "--name", title], check=True, capture_output=True,
                             text=True).stdout.split()[0]
        subprocess.run(["xdotool", "windowfocus", "--sync", wid, "key", "--window", wid, "q"], check=True,
                       capture_output=True)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert re.fullmatch(r"viewed kuka_iiwa/model\.urdf for \d+ steps", out.strip()), out
    return shot


def test_view_an_env_id_with_a_rig_file(xvfb: str, tmp_path: Path) -> None:
    rig = tmp_path / "rig.toml"
    rig.write_text(RIG_TOML)
    out = view("pixelrig/Robot-v0", "--cams", str(rig), "--steps", "5", display=xvfb)
    assert out.returncode != 0 and "source" in out.stderr  # Robot-v0 needs source=: use the file form
    out = view("kuka_iiwa/model.urdf", "--cams", str(rig), "--steps", "5", "--policy", "random", display=xvfb)
    assert out.returncode == 0, out.stderr
    # The window shows the rig file's cameras, tiled and scaled 2x: front (64 x 48: rgb | depth | label) above hand
    # (32 x 32, rgb only); the env's own rig (one 84 x 84 camera) would make it 504 x 168.
    shape = (2 * (48 + 32), 2 * 3 * 64, 3)
    shot = rig_window(xvfb, rig, shape)
    assert shot.shape == shape, f"window of {shot.shape[1]} x {shot.shape[0]} px"
    mosaic = shot[::2, ::2]
    assert np.array_equal(shot, np.repeat(np.repeat(mosaic, 2, axis=0), 2, axis=1)), "2x pixels"
    front_depth, front_label, hand = mosaic[:48, 64:128], mosaic[:48, 128:192], mosaic[48:]
    # The depth pane is a depth colouring: every pixel on the ramp or black (measured: at most 0.6 levels off the
    # finely sampled ramp; the rgb pane is 122 off on average) and more than one colour (69 here).
    assert off_depth_ramp(front_depth).max() <= 3 and len(np.unique(front_depth.reshape(-1, 3), axis=0)) > 10
    # The label pane: each pixel black or a body's colour (the scene has a handful of bodies), two at least.
    palette = label_colors(np.arange(-1, 16)[None])[0]
    assert (np.abs(front_label[:, :, None].astype(int) - palette).max(axis=-1).min(axis=-1) <= 1).all()
    assert len(np.unique(front_label.reshape(-1, 3), axis=0)) >= 2
    assert (hand[:, 32:96] == PLACEHOLDER).all(), "hand has no depth or labels: grey tiles"
    assert (hand[:, 96:] == 0).all() and hand[:, :32].std() > 5, "hand's rgb, padded with black to the front row"
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


def test_bench_rllib_section_is_skipped_with_the_install_hint_without_ray(tmp_path: Path) -> None:
    """Where Ray is not installed (here: hidden from the import system), the rllib section says what to install
    and the report goes on without it."""
    code = ("import sys; sys.modules['ray'] = None; from pixelrig.tools.bench.main import main; "
            f"sys.exit(main(['--sections', 'rllib', '--json', {str(tmp_path / 'b.json')!r}]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "## rllib: skipped, Ray RLlib not installed (pip install 'ray[rllib]' torch)" in out.stdout, out.stdout
    assert "rllib" not in json.loads((tmp_path / "b.json").read_text())
