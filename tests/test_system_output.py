"""Capturing native output: the temporary file behind a capture outlives the exit hook that closes it."""

from __future__ import annotations

import os

from pixelrig.system import output


def test_a_capture_after_the_exit_hook_closed_its_file_still_captures() -> None:
    """At exit, an env closed by a finalizer that runs after pixelrig's exit hook (one torch registered first) still
    captures its native output: the hook closed the reused file, and the next capture makes a new one instead of
    seeking a closed file."""
    with output.capture_native_output(1) as before:
        os.write(1, b"first\n")
    output._close_capture_files()  # what the exit hook does
    with output.capture_native_output(1) as after:
        os.write(1, b"second\n")
    assert "".join(before).strip() == "first"
    assert "".join(after).strip() == "second"
