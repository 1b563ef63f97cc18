"""The README's picture of the browser view (docs/browser_view.png): PandaPush's rig served by BrowserView, as a
headless Chromium (Debian's /usr/bin/chromium, driven by Playwright) shows it.

    .venv/bin/python examples/browser_view_picture.py [--out docs/browser_view.png] [--view all] [--episodes 12]

Needs the ``viewer`` extra (aiohttp), Playwright (``pip install playwright``; no browser download) and Chromium.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig import BrowserView, PixelObs

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
BUTTONS = {"rgb": "RGB", "depth": "Depth", "label": "Labels", "all": "All"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="docs/browser_view.png")
    parser.add_argument("--view", choices=tuple(BUTTONS), default="all")
    parser.add_argument("--episodes", type=int, default=12, help="episodes run first, for the returns chart")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    view = BrowserView(PixelObs(gym.make("pixelrig/PandaPush-v0")), fps=15)
    try:
        view.reset(seed=0)
        view.action_space.seed(0)
        done = 0
        while done < args.episodes:  # random pushes: the chart gets some history
            _, _, terminated, truncated, _ = view.step(view.action_space.sample())
            if terminated or truncated:
                done += 1
                view.reset()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(view.url)
            page.get_by_role("button", name=BUTTONS[args.view]).click()
            deadline = time.monotonic() + 30
            for _ in range(35):  # into the next episode: the arm reaches over the table
                view.step(view.action_space.sample())
            while time.monotonic() < deadline:  # a few more steps, at the env's pace, until the page is live
                view.step(view.action_space.sample())
                time.sleep(view.unwrapped.dt)
                if int(page.locator("#frame").get_attribute("data-frames") or 0) >= 15:
                    break
            time.sleep(1.0)  # the frame rate settles
            page.screenshot(path=args.out)
            browser.close()
    finally:
        view.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
