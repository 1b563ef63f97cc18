"""Child-process body of a pixelrig display window (OpenCV highgui), started by
:class:`pixelrig.display.window.DisplayWindow` through :mod:`pixelrig.system.process` (``python -m``).

Protocol: the config is ``{"title", "scale", "fps"}``. It answers ready once a window could open (an error
otherwise), then receives ``("buffer", <shared memory name>, <height>, <width>)`` messages, each attaching a frame
buffer; the connection's end (``stop()``, or the parent's death) closes the window. A frame buffer starts with a
uint64 sequence number guarding the frame that follows (a seqlock: odd while the parent writes), so the parent
never waits for this process.

Exit codes tell the parent why the window went away: 0 asked to quit (or the parent went away), 10 the user
pressed q or Esc, 11 the user closed the window.
"""

import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from pixelrig.system.process import attach_shared, ready, serve

QUIT, KEY, CLOSED = 0, 10, 11
FLAGS = None  # set once cv2 is imported


def open_window(cv2, title, image):
    cv2.namedWindow(title, FLAGS)
    cv2.imshow(title, image)
    cv2.waitKey(1)


def painted(cv2, title, image):
    """Whether the screen shows the window's image: Qt under X sometimes maps a window it never paints (seen
    under Xvfb: 1 window in 10 stayed black whatever was shown later). None when the screen cannot be read."""
    try:
        import numpy as np
        from PIL import ImageGrab

        x, y, w, h = cv2.getWindowImageRect(title)
        shot = np.asarray(ImageGrab.grab(bbox=(x, y, x + w, y + h)))
    except Exception:
        return None
    return not (shot.size and shot.max() == 0 and image.max() > 0)


def main(conn: Connection, config: dict[str, Any]) -> int:
    """Open the window, answer ready, show frames until the connection ends or the user closes it."""
    global FLAGS
    title, scale, fps = str(config["title"]), max(1, int(config["scale"])), float(config["fps"])
    import cv2
    import numpy as np

    FLAGS = cv2.WINDOW_AUTOSIZE | cv2.WINDOW_GUI_NORMAL
    # prove a window can open now (the parent raises a clear error otherwise), then close it: the real window opens
    # at the first frame's size
    probe = f"{title} (opening)"
    open_window(cv2, probe, np.zeros((8, 8, 3), np.uint8))
    cv2.destroyWindow(probe)
    cv2.waitKey(1)
    ready(conn)

    state = {"buffer": None, "shape": None, "quit": False}
    lock = threading.Lock()

    def read_commands() -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break  # stop(), or the parent is gone
            if isinstance(message, tuple) and len(message) == 4 and message[0] == "buffer":
                shm = attach_shared(message[1])
                with lock:
                    state["buffer"], state["shape"] = shm, (int(message[2]), int(message[3]), 3)
        state["quit"] = True

    threading.Thread(target=read_commands, daemon=True).start()
    shown, image, opened_at, checks = -1, None, None, 0
    delay = max(1, int(1000.0 / fps))
    while not state["quit"]:
        with lock:
            shm, shape = state["buffer"], state["shape"]
        if shm is not None:
            seq = np.ndarray((1,), np.uint64, shm.buf, 0)
            first = int(seq[0])
            if first % 2 == 0 and first != shown:
                frame = np.ndarray(shape, np.uint8, shm.buf, 8).copy()
                if int(seq[0]) == first:  # not rewritten while copying
                    shown = first
                    if scale > 1:
                        frame = cv2.resize(frame, (shape[1] * scale, shape[0] * scale),
                                           interpolation=cv2.INTER_NEAREST)
                    image = cv2.cvtColor(frame, cv2.COLOR_RGB2BGR)
                    if opened_at is None:
                        open_window(cv2, title, image)
                        opened_at = time.monotonic()
                    else:
                        cv2.imshow(title, image)
        key = cv2.waitKey(delay) & 0xFF
        if key in (ord("q"), 27):
            return KEY
        if opened_at is not None:
            if cv2.getWindowProperty(title, cv2.WND_PROP_VISIBLE) < 1:
                return CLOSED
            if checks < 5 and time.monotonic() - opened_at > 0.5:
                checks += 1
                if painted(cv2, title, image) is False:  # reopen a window that X shows unpainted
                    cv2.destroyWindow(title)
                    cv2.waitKey(1)
                    open_window(cv2, title, image)
                    opened_at = time.monotonic()
                else:
                    checks = 5
    cv2.destroyAllWindows()
    return QUIT


if __name__ == "__main__":
    serve(main)
