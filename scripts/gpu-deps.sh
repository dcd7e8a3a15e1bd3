#!/usr/bin/env bash
# The headers a lent GPU machine lacks (it reaches no package registry), unpacked from Debian's
# packages into .devdeps/root, for `run`'s carry (.devdeps is ignored by git) and
# DDPSIM_DEPS_PREFIX=$PWD/.devdeps/root there (docs/pytorch-2.md). Run here, with apt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rm -rf .devdeps
mkdir -p .devdeps/debs
(cd .devdeps/debs && apt-get download libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libtomlplusplus3 \
  libgloo-dev zlib1g-dev)
for deb in .devdeps/debs/*.deb; do dpkg -x "$deb" .devdeps/root; done
# The machine's own zlib is linked; only its header is wanted.
rm -rf .devdeps/debs .devdeps/root/usr/lib/x86_64-linux-gnu/libz.so
du -sh .devdeps/root
