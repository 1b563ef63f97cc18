"""Gymnasium's autoreset modes, by name: what a vector env does with an env whose episode ended (see
https://farama.org/Vector-Autoreset-Mode)."""

from __future__ import annotations

from typing import Any

try:  # gymnasium >= 1.1 names the modes; 1.0 has next-step autoreset only, unnamed
    from gymnasium.vector import AutoresetMode
except ImportError:  # pragma: no cover (gymnasium 1.0)
    AutoresetMode = None  # type: ignore[assignment,misc]

NEXT_STEP, SAME_STEP, DISABLED = "NextStep", "SameStep", "Disabled"  # Gymnasium's AutoresetMode values
MODES = (NEXT_STEP, SAME_STEP, DISABLED)
_ALIASES = {"next_step": NEXT_STEP, "same_step": SAME_STEP, "disabled": DISABLED}
"""- next_step: the step after an episode ends resets that env (its reset observation, reward 0, not done, the
  reset info);
- same_step: the step that ends an episode resets the env at once: it returns the reset observation with the step's
  reward and flags, and the ended episode's last observation and info as ``info["final_obs"]`` and
  ``info["final_info"]``;
- disabled: nothing resets by itself: reset ended envs with ``reset(options={"reset_mask": mask})`` before the next
  step."""


def autoreset_name(mode: Any) -> str:
    """The mode's name (one of :data:`MODES`), from a ``gymnasium.vector.AutoresetMode``, its value or a snake-case
    alias ("next_step", "same_step", "disabled").

    Raises:
        ValueError: not a mode, or a mode other than next-step on gymnasium 1.0 (which has only that one).
    """
    name = getattr(mode, "value", mode)
    name = _ALIASES.get(name, name) if isinstance(name, str) else name
    if name not in MODES:
        raise ValueError(f"autoreset_mode must be one of {MODES} (or gymnasium.vector.AutoresetMode): got {mode!r}")
    if AutoresetMode is None and name != NEXT_STEP:
        raise ValueError(f"autoreset_mode={name!r} needs gymnasium >= 1.1 (this gymnasium has next-step autoreset "
                         "only): pip install 'gymnasium>=1.1'")
    return name


def autoreset_enum(name: str) -> Any:
    """The ``gymnasium.vector.AutoresetMode`` of a name (None on gymnasium 1.0)."""
    return None if AutoresetMode is None else AutoresetMode(name)
