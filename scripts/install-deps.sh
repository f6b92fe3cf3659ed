#!/usr/bin/env bash
# Installs the Debian 12 packages ulysim builds and tests with, only when one is missing.
# Safe to rerun: it does nothing (and touches no network) when everything is present.
set -euo pipefail
pkgs=(build-essential cmake pkg-config python3 python3-venv python3-dev
      libopenmpi-dev openmpi-bin libgsl-dev libopenblas-dev libcjson-dev gnuplot-nox)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -q
  $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
