#!/usr/bin/env python3
"""bench/python/bench.py: the Python package's speed against the C library's,
in one run (one core; times are this thread's CPU time, as
bench/sim/search_bench reports them, wall time beside).

 1. Python-side plan evaluations per second: ulysim.plan() calls (each the
    whole `ulysim plan`: every strategy's search, the JSON written and read
    back), and the layouts those calls priced per second.
 2. A 10^6-layout search: ulysim.search() over the grid search_bench sweeps
    (llama3-8b on dgx-h100, GPUs 8..1024 x sequence 8K..1M, every strategy,
    both placements), repeated until 10^6 layouts are priced, every layout
    returned in arrays; against search_bench's "sweep by search" line (the
    same searches in C, keeping only each search's best). The ratio is
    Python's time per layout over C's: target at most 2.

Usage: bench/python/bench.py [path/to/search_bench]  (default
build/bench/sim/search_bench; run with the venv's python, where ulysim is
installed: build/python-venv/bin/python bench/python/bench.py)"""
import os
import re
import subprocess
import sys
import time

import ulysim

TARGET = 1_000_000
GRID = dict(gpus="8..1024", seq="8K..1M", model="llama3-8b", cluster="dgx-h100")


def clock():
    return time.thread_time(), time.perf_counter()


def plans_per_s(seconds=2.0):
    n, layouts = 0, 0
    t0, w0 = clock()
    while time.thread_time() - t0 < seconds:
        p = ulysim.plan(gpus=64, seq="1M")
        layouts += sum(r["layouts_evaluated"] for r in p.rows)
        n += 1
    t, w = time.thread_time() - t0, time.perf_counter() - w0
    return n, layouts, t, w


def python_search():
    """(layouts, cpu s, wall s, passes), the best (least CPU) of 3 rounds of >= 10^6 layouts."""
    best = None
    for _ in range(3):
        layouts = passes = 0
        t0, w0 = clock()
        while layouts < TARGET:
            r = ulysim.search(**GRID)
            layouts += len(r)
            passes += 1
        got = (layouts, time.thread_time() - t0, time.perf_counter() - w0, passes)
        best = got if best is None or got[1] < best[1] else best
    return best


def c_search(exe):
    out = subprocess.run([exe, "3"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"sweep by search.*?(\d+) layouts priced: ([0-9.]+) s", out)
    if not m:
        sys.exit("bench: no 'sweep by search' line in %s's output:\n%s" % (exe, out))
    return int(m.group(1)), float(m.group(2))


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "bench", "sim", "search_bench")
    print("# ulysim %s (Python %s), one core" % (ulysim.__version__, sys.version.split()[0]))
    n, layouts, t, w = plans_per_s()
    print("ulysim.plan(gpus=64, seq=1M): %.0f plans/s (%.2f ms each; %.2f ms wall), %.0f layouts priced/s"
          % (n / t, 1e3 * t / n, 1e3 * w / n, layouts / t))
    pl, pt, pw, passes = python_search()
    cl, ct = c_search(exe)
    py_us, c_us = 1e6 * pt / pl, 1e6 * ct / cl
    print("ulysim.search, %d layouts (%d grid passes, every layout in arrays): %.3f s (%.3f s wall), %.3f us a layout"
          % (pl, passes, pt, pw, py_us))
    print("C search_bench, %d layouts (best of each search only): %.3f s, %.3f us a layout" % (cl, ct, c_us))
    ratio = py_us / c_us
    print("10^6 layouts: Python %.3f s, C %.3f s: ratio %.2f  [target <= 2: %s]"
          % (py_us, c_us, ratio, "met" if ratio <= 2 else "not met"))


if __name__ == "__main__":
    main()
