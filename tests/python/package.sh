#!/usr/bin/env bash
# package.sh build|test ROOT VENV BUILD_DIR ULYSIM: the Python package's tests
# (tests/python/CMakeLists.txt).
#   build: a venv at VENV (once), the test dependencies from PyPI into it
#          (once: python/pyproject.toml's [test] extra, and scikit-build-core),
#          then `pip install ROOT/python`, built in BUILD_DIR (incremental);
#   test:  pytest ROOT/python/tests with ULYSIM_CLI=ULYSIM, the executable
#          the answers are compared with.
# Exit 77 (CTest: skipped) with a message when pip cannot reach PyPI, or when
# python3 has no venv module (Debian: python3-venv, scripts/install-deps.sh).
set -uo pipefail
mode=$1 root=$2 venv=$3 build=$4 cli=$5
py=$venv/bin/python
deps=(scikit-build-core pytest pandas matplotlib numpy nbclient nbformat ipykernel)
skip() { echo "SKIPPED: $*"; exit 77; }
pypi_reachable() {
    "$py" - <<'PY'
import sys, urllib.request
from pip._internal.configuration import Configuration
index = "https://pypi.org/simple/"
try:
    c = Configuration(isolated=False); c.load()
    index = dict(c.items()).get("global.index-url", index)
except Exception:
    pass
try:
    urllib.request.urlopen(index.rstrip("/") + "/pip/", timeout=15)
except Exception as e:
    print("pip's index %s: %s" % (index, e)); sys.exit(1)
PY
}
if [ "$mode" = build ]; then
    if [ ! -x "$py" ]; then
        python3 -m venv "$venv" >"$venv.log" 2>&1 ||
            { cat "$venv.log"; rm -rf "$venv"; skip "python3 -m venv failed (Debian: apt-get install python3-venv python3-dev, as scripts/install-deps.sh does)"; }
    fi
    if [ ! -f "$venv/deps.stamp" ]; then
        if ! "$py" -m pip install -q "${deps[@]}"; then
            pypi_reachable || skip "pip cannot reach PyPI: the Python package's tests need ${deps[*]} from it"
            echo "pip install ${deps[*]} failed"; exit 1
        fi
        touch "$venv/deps.stamp"
    fi
    # the package, built without isolation (scikit-build-core is in the venv)
    # into a build directory kept between runs
    exec "$py" -m pip install -q --no-build-isolation --no-deps --force-reinstall \
        --config-settings=build-dir="$build" "$root/python"
fi
[ -f "$venv/deps.stamp" ] || skip "no venv with the package (python.package_build was skipped)"
export ULYSIM_CLI=$cli
export MPLBACKEND=Agg
cd "$venv" # not the source tree: the package imported is the installed one
exec "$py" -m pytest -q -p no:cacheprovider "$root/python/tests"
