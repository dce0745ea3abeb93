#!/usr/bin/env bash
# Sets up rlrep on a Debian/Ubuntu machine; safe to run again (it only does what is missing).
#   1. headless OpenGL libraries for MuJoCo (EGL via Mesa, and OSMesa), installed with apt when root;
#   2. a virtualenv at .venv (override with RLREP_VENV) on Python 3.10 or 3.11;
#   3. rlrep, editable, with the tested dependency set in constraints.txt and the test extras;
#   4. DeepMind Acme's TF learner for the learner benchmark's comparison (--no-deps: see the file).
set -euo pipefail
cd "$(dirname "$0")/.."

GL_PACKAGES="libegl1 libgl1-mesa-dri libosmesa6"
missing=""
for package in $GL_PACKAGES; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing headless GL libraries:$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "setup: MuJoCo needs headless GL libraries that are missing:$missing" >&2
    echo "setup: run   sudo apt-get install -y$missing   and then this script again." >&2
    exit 1
  fi
fi

venv=${RLREP_VENV:-.venv}
if [ ! -x "$venv/bin/python" ]; then
  python=""
  for candidate in ${PYTHON:-} python3.11 python3.10 python3; do
    if "$candidate" -c 'import sys; sys.exit(not ((3, 10) <= sys.version_info[:2] <= (3, 11)))' 2>/dev/null; then
      python=$candidate; break
    fi
  done
  if [ -z "$python" ]; then
    echo "setup: rlrep needs Python 3.10 or 3.11 (TensorFlow 2.15 and dm-reverb 0.14 have no wheels for others)." >&2
    echo "setup: install one, or point PYTHON at it: PYTHON=/path/to/python3.11 bash scripts/setup.sh" >&2
    exit 1
  fi
  echo "setup: creating $venv with $("$python" --version)"
  "$python" -m venv "$venv"
fi

# Reinstall only when the dependency declarations changed since the last successful install.
stamp="$venv/.rlrep-installed"
wanted=$(cat pyproject.toml constraints.txt benchmarks/acme-requirements.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "setup: installing rlrep and its pinned dependencies into $venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q -c constraints.txt -e ".[test]"
  "$venv/bin/python" -m pip install -q --no-deps -r benchmarks/acme-requirements.txt
  echo "$wanted" > "$stamp"
fi
echo "setup: ready ($("$venv/bin/python" --version), venv $venv)"
