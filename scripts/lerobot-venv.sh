#!/usr/bin/env bash
# Builds .venv-lerobot: the real dataset readers, in a venv of its own, for tests/test_datasets_lerobot_reader.py (LeRobot's
# LeRobotDataset) and tests/test_datasets_robomimic.py (robomimic's SequenceDataset).
#
# lerobot >= 0.5 needs Python >= 3.12 (pybullet has no wheels there), so this venv holds the standalone
# `lerobot-dataset` package (module `ledataset`), which carries the same v3.0 reader for Python 3.11, with:
#   - torch 2.13.0 + torchvision 0.28.0 in PyPI's default builds. pip runs with --isolated so that the machine's
#     pip configuration (a local CPU torch wheel, a torch cap) is skipped: torchvision's compiled ops do not
#     match that CPU wheel ("operator torchvision::nms does not exist"). The default builds carry CUDA
#     libraries: several GB, which is why this is not the main venv;
#   - torchcodec 0.17.0 (LeRobot's video_backend="torchcodec"; torchvision 0.28 has no VideoReader, which the
#     "pyav" backend calls), which loads Debian's ffmpeg shared libraries (installed here with apt);
#   - robomimic 0.3.0 and h5py (robomimic's SequenceDataset; it adds about 15 s and 0.2 GB to the venv).
# Safe to run repeatedly: a venv whose stamp matches this script is left alone. Prints the time taken and size.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${LEROBOT_VENV:-.venv-lerobot}  # tests read LEROBOT_VENV too
PYTHON=${PYTHON:-python3.11}
STAMP="$VENV/.pixelrig-stamp"
want=$(sha256sum "$0" | cut -c1-16)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "lerobot-venv: $VENV is up to date" >&2
  exit 0
fi
start=$(date +%s)

# Debian's ffmpeg libraries (libavcodec, libavformat, ...) for torchcodec; the ffmpeg package pulls them all.
if ! ldconfig -p | grep -q 'libavcodec\.so\.'; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "lerobot-venv: installing Debian's ffmpeg libraries" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends ffmpeg >/dev/null
  else
    echo "lerobot-venv: no apt here; install ffmpeg's shared libraries (libavcodec, libavformat, ...) 4 to 8" >&2
  fi
fi

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip --isolated --disable-pip-version-check)
"${pip[@]}" install -q --upgrade pip
"${pip[@]}" install -q torch==2.13.0 torchvision==0.28.0 torchcodec==0.17.0 lerobot-dataset==0.4.4 \
  robomimic==0.3.0 h5py pyarrow numpy
"$VENV/bin/python" -c "import ledataset.datasets.lerobot_dataset, robomimic.utils.dataset, torchcodec.decoders, torchvision"
echo "$want" >"$STAMP"
end=$(date +%s)
echo "lerobot-venv: built $VENV in $((end - start)) s, $(du -sh "$VENV" | cut -f1)" >&2
