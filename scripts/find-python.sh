#!/usr/bin/env bash
# Prints the full path of a working interpreter for $1 (python3.12, python3.13, a path, ...): $1 itself when it
# runs, else pyenv's newest installed 3.X.Y for a name like python3.X (pyenv's shim refuses to run a version that
# is installed but not selected with `pyenv global`/`pyenv local`, which is how machines here are set up).
set -euo pipefail
want=${1:?usage: scripts/find-python.sh python3.X}
if "$want" -c 'import sys' >/dev/null 2>&1; then
  "$want" -c 'import sys; print(sys.executable)'
  exit 0
fi
ver=${want##*/}
ver=${ver#python}
root=${PYENV_ROOT:-$HOME/.pyenv}
if [[ $ver =~ ^3\.[0-9]+$ ]] && [ -d "$root/versions" ]; then
  for d in $(find "$root/versions" -mindepth 1 -maxdepth 1 -name "$ver.*" -printf '%f\n' | grep -E "^$ver\.[0-9]+$" |
             sort -V -r); do
    exe="$root/versions/$d/bin/python$ver"
    if [ -x "$exe" ] && "$exe" -c 'import sys' >/dev/null 2>&1; then
      echo "$exe"
      exit 0
    fi
  done
fi
echo "find-python: '$want' does not run here and no pyenv version $ver.* was found: install Python $ver" \
  "(e.g. pyenv install $ver) or pass PYTHON=/path/to/python$ver" >&2
exit 1
