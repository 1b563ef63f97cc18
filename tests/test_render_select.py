"""Backend choice: renderer=/PIXELRIG_RENDERER validation, the EGL probe, and a real unavailable renderer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import gymnasium as gym
import pytest

from pixelrig.render import RendererUnavailable, choose_auto, probe_egl, probe_gl, resolve_renderer
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


def test_auto_picks_gl_then_hardware_egl_then_tiny() -> None:
    """The rule the README states, from the benchmark: gl wherever it works, else EGL on a GPU, else tiny."""
    gl, egl = probe_gl(), probe_egl()
    expected = "gl" if gl.ok else "egl" if egl.ok and egl.hardware else "tiny"
    assert resolve_renderer("auto") == expected
    kind, why = choose_auto()
    assert kind == expected and why


def test_probe_answers_are_kept_on_disk_per_driver_installation(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new process (nothing inherited) reads a working probe's answer from the cache folder instead of
    starting a probe process; another driver fingerprint (here: another EGL variable) probes again."""
    monkeypatch.setenv("PIXELRIG_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("_PIXELRIG_PROBES", raising=False)
    code = ("import json, pixelrig.render.choice as s; calls = []; real = s._run_probe; "
            "s._run_probe = lambda *a: calls.append(a[0]) or real(*a); s.probe_gl(); s.probe_egl(); "
            "print(json.dumps(calls))")
    env = {k: v for k, v in os.environ.items() if k != "_PIXELRIG_PROBES"}

    def probes_run(**extra: str) -> list:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**env, **extra}).stdout
        return json.loads(out.strip().splitlines()[-1])

    first = probes_run()
    assert sorted(first) == ["egl", "gl"] or not (probe_gl().ok and probe_egl().ok)
    if probe_gl().ok and probe_egl().ok:
        assert probes_run() == []  # both answers came from the disk cache
        assert sorted(probes_run(EGL_PLATFORM="surfaceless")) == ["egl", "gl"]


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
    monkeypatch.delenv("_PIXELRIG_PROBES", raising=False)
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
            "renderer='egl', render_mode='rgb_array')); e.reset(seed=0); e.step(e.action_space.sample()); "
            "e.reset(seed=1); [e.step(e.action_space.sample()) for _ in range(20)]; e.render(); e.reset(seed=2); "
            "e.render(); e.step(e.action_space.sample()); e.close(); print('only this')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "only this\n"
