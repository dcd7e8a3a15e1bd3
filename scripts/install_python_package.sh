#!/usr/bin/env bash
# install_python_package.sh VENV [REQUIREMENTS]: installs the ddpsim Python package
# (pyproject.toml at the checkout's root) into VENV, editable, so that python/ddpsim/ edits take
# effect at once. With REQUIREMENTS (scripts/requirements-python.txt), first the pinned
# dependencies from it; without, the package alone (--no-deps: its standard-library modules,
# e.g. for a CUDA venv that only runs ddpsim-compare). Quick when nothing changed: stamps in VENV
# hold the requirements and the pyproject.toml (its console scripts) it was installed from, and
# the package must import from this checkout.
set -euo pipefail
venv="$1"
requirements="${2:-}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$venv/bin/python"
stamp="$venv/.ddpsim-python-requirements"
project_stamp="$venv/.ddpsim-pyproject"
[ -x "$python" ] || { echo "install_python_package.sh: expected a venv at $venv, got no $python" >&2; exit 2; }
installed_from() {
  "$python" -c 'import ddpsim, os; print(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(ddpsim.__file__)))))' 2>/dev/null
}
if [ -n "$requirements" ] && ! cmp -s "$requirements" "$stamp"; then
  echo "setup: installing $(grep -v '^#' "$requirements" | sed -n 's/==.*//p' | head -3 | tr '\n' ' ')and their pinned dependencies into $(basename "$venv")"
  "$python" -m pip install -q --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$stamp"
fi
if [ "$(installed_from)" = "$root" ] && cmp -s "$root/pyproject.toml" "$project_stamp"; then
  echo "setup: $(basename "$venv") has the ddpsim package (editable, from $root)"
  exit 0
fi
echo "setup: installing the ddpsim package into $(basename "$venv") (editable)"
# --no-build-isolation: the venv's setuptools builds it (torch depends on setuptools), so the
# install needs no download.
"$python" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e "$root"
cp "$root/pyproject.toml" "$project_stamp"
