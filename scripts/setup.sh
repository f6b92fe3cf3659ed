#!/usr/bin/env bash
# Installs what is missing (Debian 12), then configures and builds ulysim in
# ./build. Safe to rerun; the second run only rebuilds what changed.
# The model library is built profile-guided (model/CMakeLists.txt, ULY_PGO):
# first instrumented in ./build-pgo, which scripts/pgo-train.sh runs (again
# only when that build changed), then optimised with its counts in ./build.
# If any of that fails, or with ULY_NO_PGO=1, ./build is built without.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
counts=$PWD/build-pgo/model/CMakeFiles/libulysim.dir
log=build-pgo/setup.log
pgo_train() {
    mkdir -p build-pgo || return 1
    { cmake -S . -B build-pgo -DCMAKE_BUILD_TYPE=RelWithDebInfo -DULY_PGO=generate -DULY_CUDA=OFF &&
        cmake --build build-pgo -j "$jobs" --target ulysim; } >"$log" 2>&1 || return 1
    # trained since that build changed, and the counts are still there
    [ build-pgo/trained.stamp -nt build-pgo/sim/ulysim ] && compgen -G "$counts/*.gcda" >/dev/null && return 0
    rm -f "$counts"/*.gcda build-pgo/trained.stamp
    bash scripts/pgo-train.sh build-pgo/sim/ulysim >>"$log" 2>&1 || {
        echo "scripts/pgo-train.sh build-pgo/sim/ulysim: exit $?" >>"$log"
        return 1
    }
    if ! compgen -G "$counts/*.gcda" >/dev/null; then
        echo "the training run wrote no counts to $counts" >>"$log" # a compiler without profiles
        return 1
    fi
    touch build-pgo/trained.stamp
}
pgo=
if [ "${ULY_NO_PGO:-0}" = 1 ]; then
    :
elif pgo_train; then
    pgo=$counts
else
    echo "setup: the profile-guided build failed ($log says why); building ./build without it" >&2
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DULY_PGO="$pgo" >/dev/null
cmake --build build -j "$jobs"
