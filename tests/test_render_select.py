"""Backend choice: renderer=/PIXELRIG_RENDERER validation, the EGL probe, and a real unavailable renderer."""

from __future__ import annotations

import re
import subprocess
import sys

import gymnasium as gym
import pytest

from pixelrig.render import RendererUnavailable, probe_egl, resolve_renderer
from pixelrig.render import choice as choice_mod

from .conftest import egl_or_skip


def test_bad_env_var_value_names_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIXELRIG_RENDERER", "x")
    with pytest.raises(ValueError, match=re.escape(
            "PIXELRIG_RENDERER environment variable must be one of ('auto', 'tiny', 'egl', 'gl'): got 'x'")):
        resolve_renderer()


def test_bad_argument_names_choices() -> None:
    message = "renderer must be one of ('auto', 'tiny', 'egl', 'gl'): got 'opengl'"
    with pytest.raises(ValueError, match=re.escape(message)):
        resolve_renderer("opengl")
    with pytest.raises(ValueError, match=re.escape("got 'opengl'")):
        gym.make("pixelrig/CartPole-v0", renderer="opengl")


def test_env_var_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIXELRIG_RENDERER", "tiny")
    assert resolve_renderer() == "tiny"
    env = gym.make("pixelrig/CartPole-v0")
    assert env.unwrapped.render_backend.name == "tiny"
    env.close()


def test_auto_prefers_egl_only_on_hardware() -> None:
    probe = probe_egl()
    assert resolve_renderer("auto") == ("egl" if probe.ok and probe.hardware else "tiny")


def test_probe_finds_mesa_or_gpu_and_reports_it() -> None:
    egl_or_skip()
    probe = probe_egl()
    assert probe.ok and probe.renderer, probe
    if "llvmpipe" in probe.renderer:
        assert not probe.hardware


def test_unavailable_egl_raises_with_what_was_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real failure: point libglvnd at a vendor file that does not exist, so the plugin's EGL fails (and it
    calls exit() in the probe process, which must not take this process with it)."""
    monkeypatch.setattr(choice_mod, "_cache", {})
    monkeypatch.delenv("_PIXELRIG_EGL_PROBE", raising=False)
    monkeypatch.setenv("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent/egl_vendor.json")
    with pytest.raises(RendererUnavailable) as err:
        resolve_renderer("egl")
    msg = str(err.value)
    assert msg.startswith("renderer 'egl' is unavailable: tried pybullet's EGL plugin (")
    assert "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl_vendor.json" in msg
    assert "use renderer='tiny' (PIXELRIG_RENDERER=tiny)" in msg
    assert resolve_renderer("auto") == "tiny"  # auto falls back quietly
    with pytest.raises(RendererUnavailable, match="renderer 'egl' is unavailable"):
        gym.make("pixelrig/CartPole-v0", renderer="egl")


def test_probe_answer_is_inherited_by_child_processes() -> None:
    probe_egl()
    code = ("import pixelrig.render.choice as s, subprocess; calls=[]; s._run_probe=lambda *a: calls.append(1); "
            "s.probe_egl(); print(len(calls))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


def test_egl_keeps_stdout_clean() -> None:
    """The EGL plugin prints GL info and 'ven = ...' to stdout: a program's parsed stdout must stay clean."""
    egl_or_skip()
    code = ("import gymnasium as gym, pixelrig; e = pixelrig.PixelObs(gym.make('pixelrig/PandaPush-v0', "
            "renderer='egl')); e.reset(seed=0); e.step(e.action_space.sample()); e.reset(seed=1); e.close(); "
            "print('only this')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "only this\n"
