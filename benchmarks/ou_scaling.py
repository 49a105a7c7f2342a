"""DPVIm's OU noise variance against sigma: SGD's grows like sigma^2, Adam's does not.

Run: ``.venv/bin/python benchmarks/ou_scaling.py [--seeds 0 1 2 3] [--runs 120] [--steps 1500]``.

The check ``dpvim_experiments.check_ou_scaling`` (DPVIm Sec. 4: the OU model of the
iterates, whose noise variance is affine in sigma^2 for SGD) reports the log-log slope
of the OU noise variance against sigma at the top sigmas, with bootstrap intervals (an
estimate: its verdict is inconclusive by construction). This study runs it at the
size the test suite used until 2026-11-28 (120 runs of 1,500 steps, about 20 CPU-s a
seed) and prints each seed's slopes; the expected ranges are SGD in (1.7, 2.6) and Adam
below 1.4 (measured on seeds 0-3 in 2026: SGD 1.77-2.03, Adam 0.19-0.84; at 60 runs
SGD's slope left (1.7, 2.6) on 1 of 11 seeds, 1.47). The exit code is 1 when a seed
falls outside them. The suite keeps the verdict's logic at the smoke size
(tests/test_dpvim_report.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

from dpclaims.papers.dpvim import checks_experiments as dpvim_experiments
from dpclaims.papers.dpvim import experiments as dpvim_runs
from dpclaims.papers.dpvim.catalogue import BUDGETS


def slopes(seed: int, runs: int, steps: int) -> tuple[float, float]:
    """(SGD's, Adam's) log-log slope of the OU noise variance at the top sigmas."""
    budget = dataclasses.replace(BUDGETS["smoke"], ou_runs=runs, ou_steps=steps)
    got = {x.reading.split()[0]: x for x in
           dpvim_experiments.check_ou_scaling(dpvim_runs.run_scaling(budget, seed), seed)}
    return tuple(got[k].evidence["blocks"]["m"]["log_log_slope_top"] for k in ("SGD", "Adam"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--runs", type=int, default=120)
    parser.add_argument("--steps", type=int, default=1500)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.runs} runs of {args.steps} steps")
    print("seed  SGD slope  Adam slope  in range  CPU-s")
    bad = 0
    for seed in args.seeds:
        t0 = time.process_time()
        sgd, adam = slopes(seed, args.runs, args.steps)
        ok = 1.7 < sgd < 2.6 and adam < 1.4
        bad += not ok
        print(f"{seed:4d}  {sgd:9.3f}  {adam:10.3f}  {'yes' if ok else 'NO':>8}  "
              f"{time.process_time() - t0:5.1f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
