#!/usr/bin/env bash
# Installs pybullet 3.2.7, built with numpy, into the venv whose interpreter is $1 (the Makefile calls it for
# Python >= 3.12, for which pybullet ships no wheels).
#
# pip builds pybullet from its source distribution there, and in pip's default isolated build environment numpy is
# absent: getCameraImage then returns flat tuples (pixelrig refuses that build at import). So this builds the wheel
# with numpy installed and --no-build-isolation, without pip's wheel cache (which may hold a tuple build), checks
# pybullet.isNumpyEnabled(), and caches the wheel so that it is built once per machine:
#   $PIXELRIG_WHEEL_CACHE, else $PIXELRIG_CACHE_DIR/wheels, else $XDG_CACHE_HOME/pixelrig/wheels,
#   else ~/.cache/pixelrig/wheels.
# The build takes 6 to 17 minutes on 2 cores (by load); its log is kept beside the wheel. Safe to run repeatedly
# and from several makes at once (a lock serialises builds). On Python <= 3.11 it installs PyPI's wheel.
set -euo pipefail
py=${1:?usage: scripts/pybullet-wheel.sh VENV/bin/python}
ver=3.2.7
pip=("$py" -m pip --disable-pip-version-check)

numpy_ok() {  # the installed pybullet is $ver and was built with numpy
  "$py" - <<EOF 2>/dev/null
import importlib.metadata, sys
import pybullet
sys.exit(0 if importlib.metadata.version("pybullet") == "$ver" and pybullet.isNumpyEnabled() else 1)
EOF
}

if numpy_ok; then
  exit 0
fi
if "$py" -c 'import sys; sys.exit(sys.version_info >= (3, 12))'; then
  "${pip[@]}" install -q "pybullet==$ver"
  exit 0
fi
# The build needs them, and a pybullet built with numpy does not import without numpy.
"${pip[@]}" install -q 'numpy>=1.26,<3' setuptools wheel

cache=${PIXELRIG_WHEEL_CACHE:-${PIXELRIG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pixelrig}/wheels}
mkdir -p "$cache"
# The wheel's own name: pybullet-3.2.7-cp313-cp313-linux_x86_64.whl (the ABI tag carries "t" on free-threaded builds).
name=$("$py" -c "
import sys, sysconfig
tag = 'cp%d%d' % sys.version_info[:2]
abi = tag + ('t' if sysconfig.get_config_var('Py_GIL_DISABLED') else '')
print('pybullet-$ver-%s-%s-%s.whl' % (tag, abi, sysconfig.get_platform().replace('-', '_').replace('.', '_')))")
wheel="$cache/$name"

install_cached() {
  "${pip[@]}" install -q --no-deps --force-reinstall "$wheel"
  numpy_ok
}

if [ -f "$wheel" ]; then
  if install_cached; then
    echo "pybullet-wheel: installed the cached $wheel" >&2
    exit 0
  fi
  echo "pybullet-wheel: the cached $wheel does not import with numpy enabled here: rebuilding it" >&2
fi

exec 9>"$cache/.lock"
flock 9  # another make may be building the same wheel: wait for it, then use its wheel
if [ -f "$wheel" ] && install_cached; then
  echo "pybullet-wheel: installed $wheel (built meanwhile by another process)" >&2
  exit 0
fi
rm -f "$wheel"
log="$cache/${name%.whl}.log"
echo "pybullet-wheel: building pybullet $ver from source for $("$py" -V) with numpy (6-17 min on 2 cores, once" \
  "per machine); log: $log" >&2
start=$(date +%s)
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! "${pip[@]}" wheel -v --no-deps --no-build-isolation --no-cache-dir --no-binary pybullet -w "$tmp" \
    "pybullet==$ver" >"$log" 2>&1; then
  tail -30 "$log" >&2
  echo "pybullet-wheel: the build failed; the full log is $log" >&2
  exit 1
fi
grep -q "numpy is enabled" "$log" || { echo "pybullet-wheel: the build did not see numpy (see $log)" >&2; exit 1; }
built=("$tmp"/pybullet-"$ver"-*.whl)
mv "${built[0]}" "$wheel"  # a rename within one file system: another process sees the whole wheel or none
install_cached || { echo "pybullet-wheel: $wheel installed but pybullet.isNumpyEnabled() is false" >&2; exit 1; }
echo "pybullet-wheel: built and installed $wheel in $(($(date +%s) - start)) s" >&2
