#!/usr/bin/env bash
# Builds the whole non-CUDA tree with AddressSanitizer and UBSan in
# build-asan/ and runs every test there. Leaks inside Open MPI, hwloc and
# PMIx (the runtime's own, at exit) are suppressed by scripts/lsan.supp; leaks
# of ours still fail. Safe to rerun. The tests keep their sizes; their
# timeouts are 5 times the optimised build's (ULY_TEST_TIMEOUT_SCALE, set by
# tests/CMakeLists.txt for ULY_SANITIZE), so a loaded 2-core machine passes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DULY_SANITIZE=ON -DULY_CUDA=OFF >/dev/null
cmake --build build-asan -j "$jobs"
# Full unwinding on malloc and no dlclose of Open MPI's plugins, so a leak
# inside the MPI runtime shows its library in the stack and the suppressions
# match it (with fast unwinding or unloaded plugins the frames are unknown).
export OMPI_MCA_mca_base_component_disable_dlclose=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:fast_unwind_on_malloc=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
ctest --test-dir build-asan --output-on-failure -j "$jobs"
