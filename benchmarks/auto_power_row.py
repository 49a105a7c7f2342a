"""One row of audit_tightness.py's power table with many seeds: auto against the split.

Run: ``.venv/bin/python benchmarks/auto_power_row.py [--claim 1] [--shrink 1.5] [--n 10000]
[--seeds 1001]``.

The mechanism of :func:`audit_tightness.power_row`: the Gaussian mechanism on the 1-D sum
query whose noise is calibrated to 1 / shrink of the sensitivity while it claims the
noise multiplier of epsilon = ``claim`` (delta 1e-5), so its true epsilon is above the
claim; :func:`dpclaims.audits.core.audit` at alpha = 0.05 with seeds 0..R-1 and the
threshold designs "split" and "auto" (the same outputs per seed: the designs differ only
in how they use them). Printed: the refutations of each design with their 95 %
Clopper-Pearson intervals; the paired table (seeds refuted by one design and not the
other) with the exact McNemar test (two-sided binomial test on the discordant seeds);
Fisher's exact test of the two proportions (as if unpaired); the median certificate of
each design with its standard deviation and 90 % and 99 % quantiles over the seeds, and
the median paired difference auto - split.
"""

from __future__ import annotations

import argparse
import os
import time

import dp_accounting
import numpy as np
from audit_tightness import ALPHA, DELTA, sum_query
from scipy.stats import binomtest, fisher_exact

from dpclaims.analysis.intervals import clopper_pearson
from dpclaims.audits.core import audit
from dpclaims.audits.mechanism import GaussianMechanism, replace_one


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--claim", type=float, default=1.0)
    p.add_argument("--shrink", type=float, default=1.5)
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--seeds", type=int, default=1001)
    args = p.parse_args()
    claim_sigma = dp_accounting.get_sigma_gaussian(args.claim, DELTA)
    mech = GaussianMechanism(sum_query, 1.0, claim_sigma, DELTA,
                             calibrated_to=1 / args.shrink)
    true_eps = dp_accounting.get_epsilon_gaussian(claim_sigma / args.shrink, DELTA)
    pair = replace_one(np.zeros(10), 0, 1.0)
    print(f"claim eps {args.claim:g}, true eps {true_eps:.3f}, n = {args.n}, seeds "
          f"0..{args.seeds - 1}, alpha {ALPHA}; load {os.getloadavg()[0]:.2f}")
    certs = {}
    for design in ("split", "auto"):
        t0 = time.perf_counter()
        certs[design] = np.array([audit(mech, pair, args.n, alpha=ALPHA, seed=s,
                                        threshold=design).epsilon_lower_bound
                                  for s in range(args.seeds)])
        k = int(np.sum(certs[design] > args.claim))
        lo, hi = clopper_pearson(k, args.seeds, 0.05)
        q90, q99 = np.quantile(certs[design], [0.9, 0.99])
        print(f"{design:6} refuted {k:>5}/{args.seeds} = {k / args.seeds:.4f} [{lo:.4f}, "
              f"{hi:.4f}], median certificate {np.median(certs[design]):.4f}, sd "
              f"{np.std(certs[design]):.4f}, 90 % / 99 % quantiles {q90:.4f} / {q99:.4f} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    rs, ra = certs["split"] > args.claim, certs["auto"] > args.claim
    only_split, only_auto = int(np.sum(rs & ~ra)), int(np.sum(ra & ~rs))
    both = int(np.sum(rs & ra))
    disc = only_split + only_auto
    mcnemar = binomtest(only_auto, disc, 0.5).pvalue if disc else 1.0
    fisher = fisher_exact([[int(ra.sum()), args.seeds - int(ra.sum())],
                           [int(rs.sum()), args.seeds - int(rs.sum())]]).pvalue
    print(f"paired: both {both}, split only {only_split}, auto only {only_auto}; exact "
          f"McNemar p = {mcnemar:.3f}; Fisher (unpaired) p = {fisher:.3f}; median paired "
          f"difference auto - split {np.median(certs['auto'] - certs['split']):+.4f}, auto "
          f"higher in {int(np.sum(certs['auto'] > certs['split']))}")


if __name__ == "__main__":
    main()
