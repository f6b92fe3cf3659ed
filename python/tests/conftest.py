"""Shared fixtures: the ulysim executable the package's answers are compared
with (ULYSIM_CLI, set by tests/python/package.sh; else build/sim/ulysim of
this checkout) and a runner of it."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli_path():
    path = os.environ.get("ULYSIM_CLI") or str(ROOT / "build" / "sim" / "ulysim")
    if not os.access(path, os.X_OK):
        pytest.skip("no ulysim executable at %s (build it, or set ULYSIM_CLI)" % path)
    return path


@pytest.fixture(scope="session")
def cli(cli_path):
    """cli(*args) -> (exit status, stdout, stderr) of the ulysim executable."""

    def run(*args):
        p = subprocess.run([cli_path] + [str(a) for a in args], capture_output=True, text=True, timeout=600)
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    def run(*args):
        rc, out, err = cli(*args, "--format", "json")
        assert rc == 0, err
        return json.loads(out)

    return run
