#!/usr/bin/env bash
# Installs what ddpsim needs and is missing. Idempotent and quiet when all is present:
#  1. the Debian packages in scripts/deps.txt (`apt-get update` only when one must be installed);
#  2. the project's Python venv (.venv) with the pinned PyTorch in scripts/requirements-torch.txt:
#     its LibTorch (headers, libtorch_cpu, CMake config) builds runtime/, its torch runs the
#     Python DDP peer and the profiler (Kineto) traces;
#  3. the ddpsim Python package (pyproject.toml: import ddpsim, ddpsim-plot, ddpsim-compare), into
#     that venv, editable, after its dependencies and pytest pinned in
#     scripts/requirements-python.txt (from PyPI, as torch).
# Needs root (or sudo) for step 1.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
mapfile -t wanted < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/deps.txt")
missing=()
for pkg in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#wanted[@]} Debian packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

bash "$here/make_venv.sh" "$root/.venv" "$here/requirements-torch.txt"
bash "$here/install_python_package.sh" "$root/.venv" "$here/requirements-python.txt"
