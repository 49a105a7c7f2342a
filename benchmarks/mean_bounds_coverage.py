"""Soundness of the finite-sample mean intervals (dpclaims.analysis.mean_bounds).

    PYTHONPATH=src nice python benchmarks/mean_bounds_coverage.py [--reps 1000] [--seed 38]

For each distribution on a known range and each n in (30, 300, 3000): ``reps``
independent samples, the two-sided betting interval at alpha = 0.05 on each, and the
ratio interval of the distribution's mean over a Beta(5, 2) mean (each mean at
alpha / 2). Also the mean width of ``method="betting+bernstein"`` (the intersection
with the empirical-Bernstein interval, each at alpha / 2), to justify the default.
Prints the coverage with its two-sided 95% Clopper-Pearson interval (a
valid interval has coverage >= 0.95; a Clopper-Pearson upper end below 0.95 would show
it is not) and the mean width. Repetitions draw from children of one
``numpy.random.SeedSequence`` (one per table cell); each cell's samples are drawn in
one vectorised call of shape (reps, n), the intervals row by row (the nested grid
search is per sample).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpclaims.analysis.intervals import clopper_pearson
from dpclaims.analysis.mean_bounds import mean_interval, mean_ratio_interval

ALPHA = 0.05
NS = (30, 300, 3000)
DEN_MEAN = 5 / 7  # Beta(5, 2), the ratio's denominator


def _draw(name: str, rng: np.random.Generator, shape) -> tuple[np.ndarray, float]:
    """Samples in [0, 1] of shape ``shape`` and their true mean."""
    if name == "Beta(0.5,0.5)":
        return rng.beta(0.5, 0.5, shape), 0.5
    if name == "Beta(2,5)":
        return rng.beta(2, 5, shape), 2 / 7
    if name == "Bernoulli(0.05)":
        return (rng.random(shape) < 0.05).astype(float), 0.05
    if name == "Bernoulli(0.5)":
        return (rng.random(shape) < 0.5).astype(float), 0.5
    if name == "two-point {0,1}, p=0.9":
        return np.where(rng.random(shape) < 0.9, 1.0, 0.0), 0.9
    if name == "Uniform(0,1)":
        return rng.random(shape), 0.5
    raise ValueError(name)


DISTRIBUTIONS = ("Beta(0.5,0.5)", "Beta(2,5)", "Bernoulli(0.05)", "Bernoulli(0.5)",
                 "two-point {0,1}, p=0.9", "Uniform(0,1)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()
    reps = args.reps
    cells = [(d, n) for d in DISTRIBUTIONS for n in NS]
    seeds = np.random.SeedSequence(args.seed).spawn(len(cells))
    print(f"alpha = {ALPHA}, {reps} repetitions per cell, seed {args.seed}; coverage "
          f"[95% Clopper-Pearson]; ratio = mean / Beta(5,2) mean")
    head = (f"{'distribution':<24}{'n':>6}  {'betting coverage':<26}{'width':>9}  "
            f"{'ratio coverage':<26}{'width':>9}{'b+B width':>11}{'s':>7}")
    print(head)
    print("-" * len(head))
    start = time.perf_counter()
    for (name, n), seed in zip(cells, seeds, strict=True):
        t0 = time.perf_counter()
        num_seed, den_seed = seed.spawn(2)
        x, mean = _draw(name, np.random.default_rng(num_seed), (reps, n))
        den = np.random.default_rng(den_seed).beta(5, 2, (reps, n))
        truth = mean / DEN_MEAN
        hit = np.zeros(reps, bool)
        width = np.zeros(reps)
        r_hit = np.zeros(reps, bool)
        r_width = np.zeros(reps)
        both_width = np.zeros(reps)
        for i in range(reps):
            ci = mean_interval(x[i], 0.0, 1.0, ALPHA)
            hit[i] = ci.low <= mean <= ci.high
            width[i] = ci.high - ci.low
            both = mean_interval(x[i], 0.0, 1.0, ALPHA, method="betting+bernstein")
            both_width[i] = both.high - both.low
            r = mean_ratio_interval(x[i], den[i], numerator_range=(0, 1),
                                    denominator_range=(0, 1), alpha=ALPHA)
            r_hit[i] = r.low <= truth <= r.high
            r_width[i] = r.high - r.low
        cols = []
        for h, w in ((hit, width), (r_hit, r_width)):
            lo, hi = clopper_pearson(int(h.sum()), reps, 0.05)
            cols.append(f"{h.mean():.3f} [{lo:.3f}, {hi:.3f}]")
            cols.append(f"{np.mean(w):.4g}")
        print(f"{name:<24}{n:>6}  {cols[0]:<26}{cols[1]:>9}  {cols[2]:<26}{cols[3]:>9}"
              f"{np.mean(both_width):>11.4g}{time.perf_counter() - t0:>7.1f}", flush=True)
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
