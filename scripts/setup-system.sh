#!/usr/bin/env bash
# Installs the Debian packages pixelrig's tests and demo need, where they are missing:
#   EGL on Mesa (libegl1 libegl-mesa0 libgl1-mesa-dri) for the 'egl' backend on machines without a GPU driver,
#   xvfb, xauth, x11-utils (xwininfo) and xdotool for the window tests (a real X server, real key presses),
#   the shared libraries opencv-python's highgui window needs, and Debian's Chromium for the BrowserView tests.
# Safe to run repeatedly; does nothing when everything is present or on systems without apt (it says so).
set -euo pipefail
pkgs=(libegl1 libegl-mesa0 libgl1-mesa-dri libgles2 libglib2.0-0 xvfb xauth x11-utils xdotool chromium)
if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-system: no apt here; install the equivalents of: ${pkgs[*]}" >&2
  exit 0
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "setup-system: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
