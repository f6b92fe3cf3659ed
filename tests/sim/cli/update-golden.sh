#!/usr/bin/env bash
# Regenerates tests/sim/cli/golden/* from a built ulysim. Review the diff
# (git diff tests/sim/cli/golden) by hand before committing: the goldens pin
# the model's numbers as well as the output format.
# Usage: tests/sim/cli/update-golden.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${1:-$root/build}
u=$build/sim/ulysim
[ -x "$u" ] || { echo "no $u: build first" >&2; exit 2; }
export ULYSIM_PRESETS=$root/sim/presets
sed -n 's/^ *"\(.*\)"$/\1/p' "$here/golden.cmake" | while IFS='|' read -r file args; do
  read -r -a argv <<<"$args"
  "$u" "${argv[@]}" >"$here/golden/$file"
  echo "wrote golden/$file: ulysim ${argv[*]}"
done
