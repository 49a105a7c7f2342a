"""Runs per second of the d3p example once compiled (issue 40's target: >= 3,000 on one core).

Run on one core with ``taskset -c 0 .venv-d3p/bin/python
examples/d3p_dpvi/benchmarks/runs_per_second.py [--chunk 4096] [--runs 65536]``: prints
the first call's time (the compile), then runs per second (wall and per CPU-second:
on a shared machine the second is the one that does not depend on the load) of
``correct().run`` over ``--runs`` runs (whole chunks), three times, and the load average.
"""

import argparse
import os
import time

import d3p_dpvi
import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunk", type=int, default=4096)
    ap.add_argument("--runs", type=int, default=65_536)
    args = ap.parse_args()
    alg = d3p_dpvi.correct()
    alg.chunk = args.chunk
    print(f"load average at start {os.getloadavg()}, cpus {sorted(os.sched_getaffinity(0))}")
    t = time.perf_counter()
    alg.run(alg.data, np.random.default_rng(0), 2)
    print(f"first call (compile, chunk {args.chunk}): {time.perf_counter() - t:.1f} s")
    for rep in range(3):
        t, c = time.perf_counter(), time.process_time()
        alg.run(alg.data, np.random.default_rng(rep + 1), args.runs)
        dt, dc = time.perf_counter() - t, time.process_time() - c
        print(f"{args.runs} runs in {dt:.2f} s wall, {dc:.2f} CPU-s: {args.runs / dt:,.0f} "
              f"runs/s, {args.runs / dc:,.0f} runs per CPU-s")
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
