"""CPU seconds per test of the test suite: a pytest plugin and its summary.

Run the suite as ``make test`` does, with the plugin::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=benchmarks \\
      PYTEST_CPU_OUT=/tmp/cpu .venv/bin/python -m pytest -q -n auto --dist loadfile \\
      --no-loadscope-reorder -p pytest_cpu
    .venv/bin/python benchmarks/pytest_cpu.py /tmp/cpu [--top 30]

Each test's CPU seconds are ``getrusage`` (user + system) of its worker process and of
the children it waited for, before and after the test's whole protocol (set-up, call,
tear-down), so a module or session fixture is charged to the first test that uses it,
and processes a test starts but does not wait for (a Dask cluster's workers) are not
counted. Every worker appends one JSON line per test to ``$PYTEST_CPU_OUT/<pid>.jsonl``.
CPU seconds grow with the machine's load (shared cores and caches): compare runs made
at the same load, and state it (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import time
from pathlib import Path

import pytest


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    out = os.environ.get("PYTEST_CPU_OUT")
    c0, w0 = _cpu(), time.perf_counter()
    yield
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"{os.getpid()}.jsonl"), "a") as fh:
            fh.write(json.dumps({"id": item.nodeid, "cpu": _cpu() - c0,
                                 "wall": time.perf_counter() - w0}) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    rows = [json.loads(line) for f in sorted(args.folder.glob("*.jsonl"))
            for line in f.read_text().splitlines()]
    by_file = collections.Counter()
    for r in rows:
        by_file[r["id"].split("::")[0]] += r["cpu"]
    print(f"{len(rows)} tests, {sum(r['cpu'] for r in rows):.0f} CPU-s, "
          f"{sum(r['wall'] for r in rows):.0f} s of worker wall time")
    print("\nCPU-s  file")
    for f, c in by_file.most_common(args.top):
        print(f"{c:6.1f}  {f}")
    print("\nCPU-s  wall-s  test")
    for r in sorted(rows, key=lambda r: -r["cpu"])[:args.top]:
        print(f"{r['cpu']:6.1f}  {r['wall']:6.1f}  {r['id']}")


if __name__ == "__main__":
    main()
