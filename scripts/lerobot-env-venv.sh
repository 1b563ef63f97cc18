#!/usr/bin/env bash
# Builds the LeRobot env venv ($LEROBOT_ENV_VENV, default .venv-lerobot-env; `make lerobot`): LeRobot 0.6.1 with its
# training and evaluation extras, pixelrig and the plugin plugins/lerobot_env_pixelrig (both installed editable from
# this checkout), so that `lerobot-train`/`lerobot-eval --env.type=pixelrig` run pixelrig tasks. Not the readers' venv
# (scripts/lerobot-venv.sh, $LEROBOT_VENV), which holds the Python 3.11 reader only.
#
# - Python 3.13 (LeRobot needs >= 3.12): pybullet has no wheels there, so scripts/pybullet-wheel.sh installs the
#   project's own build, cached per machine (the one `make test-newest` makes; 6-17 min once on a fresh machine).
# - torch 2.11.0 + torchvision 0.26.0 before LeRobot (it pins torch < 2.12, so not the 2.13 of the other venvs): the
#   CPU build from download.pytorch.org when that is reachable, else PyPI's default build (CUDA libraries, about
#   4 GB; it runs on the CPU). pip runs with --isolated: the machine's pip configuration (a local CPU torch wheel for
#   3.11, a torch cap) is skipped, as in scripts/lerobot-venv.sh.
# - opencv-python is held to LeRobot's opencv-python-headless (< 4.14): both install the module cv2, and two versions
#   of it in one folder break it.
# - triton is removed, as in the Makefile: its LLVM segfaults a process that loaded Mesa's (the gl renderer) first.
# Safe to run repeatedly and from several makes at once (a lock): a venv whose stamp matches this script and what the
# two pyprojects install is only pointed at this checkout again (a few seconds) if it was installed from another.
# Prints the time taken and the size.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${LEROBOT_ENV_VENV:-.venv-lerobot-env}  # tests read LEROBOT_ENV_VENV too
PYTHON=${PYTHON:-python3.13}
STAMP="$VENV/.pixelrig-stamp"
python=$(bash scripts/find-python.sh "$PYTHON")
# The stamp: this script and what the two pyprojects install (not their other tables: a test marker rebuilds nothing).
deps=$("$python" -c '
import json, tomllib
ps = [tomllib.load(open(f, "rb"))["project"] for f in ("pyproject.toml", "plugins/lerobot_env_pixelrig/pyproject.toml")]
print(json.dumps([[p.get("dependencies"), p.get("optional-dependencies", {}).get("datasets")] for p in ps]))')
want=$( (cat "$0"; echo "$deps") | sha256sum | cut -c1-16)
pip=("$VENV/bin/python" -m pip --isolated --disable-pip-version-check)
mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
flock 9  # another make may be building it: wait for it, then find its stamp

from_here() {  # pixelrig and the plugin import from this checkout
  "$VENV/bin/python" - "$PWD" <<'EOF' 2>/dev/null
import sys
from pathlib import Path
import lerobot_env_pixelrig, pixelrig
here = Path(sys.argv[1]).resolve()
sys.exit(0 if all(here in Path(m.__file__).resolve().parents for m in (pixelrig, lerobot_env_pixelrig)) else 1)
EOF
}

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  if ! from_here; then
    echo "lerobot-env-venv: pointing $VENV at this checkout ($PWD)" >&2
    "${pip[@]}" install -q --no-deps -e . -e plugins/lerobot_env_pixelrig
  fi
  echo "lerobot-env-venv: $VENV is up to date" >&2
  exit 0
fi
start=$(date +%s)

bash scripts/setup-system.sh  # EGL on Mesa: the gl renderer the batched vector envs draw with
# Debian's ffmpeg libraries (libavcodec, libavformat, ...) for torchcodec, LeRobot's video decoder.
if ! ldconfig -p | grep -q 'libavcodec\.so\.'; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "lerobot-env-venv: installing Debian's ffmpeg libraries" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends ffmpeg >/dev/null
  else
    echo "lerobot-env-venv: no apt here; install ffmpeg's shared libraries (libavcodec, libavformat, ...) 4 to 7" >&2
  fi
fi

rm -rf "$VENV"
"$python" -m venv "$VENV"
"${pip[@]}" install -q --upgrade pip
torch=(torch==2.11.0 torchvision==0.26.0)
if ! "${pip[@]}" install -q --retries 0 --timeout 15 --index-url https://download.pytorch.org/whl/cpu "${torch[@]}" \
    2>/dev/null; then
  echo "lerobot-env-venv: download.pytorch.org is out of reach: PyPI's default torch build (CUDA libraries, ~4 GB)" >&2
  "${pip[@]}" install -q "${torch[@]}"
fi
"${pip[@]}" install -q 'lerobot[training,evaluation]==0.6.1'
bash scripts/pybullet-wheel.sh "$VENV/bin/python"
"${pip[@]}" install -q -e '.[datasets]' -e plugins/lerobot_env_pixelrig 'opencv-python<4.14'
"${pip[@]}" uninstall -q -y triton 2>/dev/null || true
"$VENV/bin/python" - <<'EOF'
from lerobot.envs.configs import EnvConfig
from lerobot.utils.import_utils import register_third_party_plugins

register_third_party_plugins()
assert "pixelrig" in EnvConfig.get_known_choices(), sorted(EnvConfig.get_known_choices())
EOF
echo "$want" >"$STAMP"
end=$(date +%s)
echo "lerobot-env-venv: built $VENV in $((end - start)) s, $(du -sh "$VENV" | cut -f1)" >&2
