"""Whole-run audits of DPVI: certified epsilon against the accounted epsilon, and speed.

Run: ``.venv/bin/python benchmarks/whole_run_audit.py [--quick] [--workers 2]``.

Algorithm: :class:`dpclaims.algorithms.dpvi.whole_run.DPVIRun`, aligned variant,
T = 300 steps, Poisson rate q = 0.5, sigma = 10, C = 1, N = 20 background records
(d = 2, x_1 = 0), SGD with lr 0.05, add-remove, delta = 1e-5. The accounted epsilon is
dp_accounting's PLD epsilon of ``SelfComposedDpEvent(PoissonSampledDpEvent(0.5,
GaussianDpEvent(10)), 300)`` (the claim). Canary: the gradient canary (a record whose
clipped gradient is C e_1 at every step), D against D + canary.

Section 1, tightness: the whole-run audit (:func:`~dpclaims.audits.whole_run.
audit_whole_run`, 95 % Clopper-Pearson certificate, 20 % of the runs train the threshold
and the score) under the final-iterate threat model (the final xi, Fisher's linear
discriminant) and the full-trace threat model (every released noisy sum; the sum over
steps of its projection on e_1) at 10^4 and 10^5 runs per dataset (10^3 and 10^4 with
``--quick``), seed 0. Also the GDP estimate (an estimate: never refutes).

Section 2, speed: runs per second of ``DPVIRun.run`` vectorised over 10^4 runs (one
call) against a Python loop over 200 runs (``loop_runs``: ``run(data, rng, 1)`` per
run), measured in the same process, full-trace threat model, and their ratio.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpclaims.algorithms.dpvi.whole_run import DPVIRun
from dpclaims.audits.whole_run import audit_whole_run, canary_pair, loop_runs

SETTINGS = dict(n_records=20, steps=300, clip=1.0, noise_multiplier=10.0, sampling_rate=0.5,
                variant="aligned", lr=0.05, delta=1e-5)


def tightness(trial_counts, workers: int) -> list[list]:
    rows = []
    for tm in ("final-iterate", "full-trace"):
        alg = DPVIRun(**SETTINGS, threat_model=tm)
        for n in trial_counts:
            w = audit_whole_run(alg, n, seed=0, workers=workers)
            r = w.result
            rows.append([tm, w.statistic, n, r.epsilon_lower_bound,
                         r.epsilon_gdp_estimate, alg.claim.epsilon,
                         r.epsilon_lower_bound / alg.claim.epsilon, w.seconds])
            print(f"  done: {tm} {n} runs in {w.seconds:.1f} s", flush=True)
    return rows


def speed(n_vec: int, n_loop: int) -> tuple[float, float]:
    alg = DPVIRun(**SETTINGS, threat_model="full-trace")
    data = canary_pair(alg).d1
    t0 = time.perf_counter()
    alg.run(data, np.random.default_rng(0), n_vec)
    vec = n_vec / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    loop_runs(alg, data, range(n_loop))
    loop = n_loop / (time.perf_counter() - t0)
    return vec, loop


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10^3 and 10^4 runs; shorter loops")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    counts = (1_000, 10_000) if args.quick else (10_000, 100_000)
    print(f"DPVI whole-run audit: {SETTINGS}, gradient canary, add-remove")
    rows = tightness(counts, args.workers)
    print()
    print("| threat model | statistic | runs per dataset | certified eps >= | GDP estimate "
          "| accounted eps | certified / accounted | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for tm, stat, n, lb, gdp, acc, ratio, sec in rows:
        gdp_s = "-" if gdp is None else f"{gdp:.3f}"
        print(f"| {tm} | {stat} | {n:,} | {lb:.3f} | {gdp_s} | {acc:.3f} | {ratio:.2f} "
              f"| {sec:.1f} |")
    n_vec, n_loop = (2_000, 50) if args.quick else (10_000, 200)
    vec, loop = speed(n_vec, n_loop)
    print()
    print("| runs (T = 300 steps) | vectorised runs/s | Python loop runs/s | ratio |")
    print("|---|---|---|---|")
    print(f"| {n_vec:,} vectorised, {n_loop} looped | {vec:,.0f} | {loop:,.1f} | "
          f"{vec / loop:,.0f} |")


if __name__ == "__main__":
    main()
