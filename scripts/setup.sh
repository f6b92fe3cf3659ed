#!/usr/bin/env bash
# Installs what is missing (Debian 12), then configures and builds ulysim in
# ./build. Safe to rerun; the second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"
