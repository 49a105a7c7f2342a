"""A design the audit does not use, measured: order-statistic thresholds on all trials.

    python benchmarks/order_statistic_thresholds.py [--reps R] [--n N ...]

Issue 23 asked for certificates at 0.96 of the statistical limit at 10^4 trials;
the audit's 80 % held-out split caps them at 0.94 (``benchmarks/audit_tightness.py``,
its "oracle" column). A design that spends no trials on training: for a 1-D output
whose score needs no fitting, put the threshold at an order statistic of D0's own
outputs, t = X0_(n-k) (k of D0's n outputs above it), at a rank k fixed in advance.
The false-positive rate of "guess D1 when x > t" is then exactly Beta(k+1, n-k)
distributed for continuous outputs (Wilks 1941; David & Nagaraja, *Order
Statistics*, 3rd ed., Sec. 7.2), whose upper quantile is the Clopper-Pearson bound
of k errors in n; D1's outputs are independent of t, so their count below t is
binomial and gets its Clopper-Pearson bound as usual. Every one of the 2n outputs
stands behind the certificate. The rank k has to be fixed before the outputs are
seen; here it is "claim-guided": the k that maximises the expected certificate if
the mechanism were the Gaussian mechanism at exactly its claim (GDP mu = 1/sigma
with sigma = ``dp_accounting.get_sigma_gaussian(eps, delta)``), on expected counts.
Without training the direction ("D1 high" or "D1 low") is unknown, so both are
certified at alpha/2 each (Bonferroni); ``rank, direction known`` shows the single
candidate at alpha for comparison (not a valid design without that knowledge).

Ground truth and limit as in ``benchmarks/audit_tightness.py``: N(0, sigma^2)
against N(1, sigma^2) with sigma calibrated to (eps, 1e-5), alpha = 0.05, the limit
the best Clopper-Pearson bound at n trials with the optimal threshold known in
advance. ``split (audit)`` is :func:`dpclaims.audits.core.audit` with its default
split design on the same mechanism (seeds 0..R-1). Printed: the median over R
seeds of each certificate over the limit.

Then the price of fixing the rank from the claim: power against mechanisms that add
less noise than their claim needs (sigma = the claim's sigma / ``shrink``, so the
true epsilon is above the claim), at 10^4 trials: the fraction of R seeds in which
each design refutes the claim (certificate above it) and the median certificates.
The rank is chosen for the claim, not for the stronger mechanism, so it sits far
from that mechanism's best threshold; the split design chooses its threshold from
the mechanism's own outputs.

What the audit kept from this: :class:`dpclaims.audits.core.RankThreshold`
(``threshold="rank"``) puts the threshold at an order statistic too, but lets a 10 %
training split choose its rank among ranks anchored at 1, 1.5, 2, 3 and 4 times the
claim, and certifies on the other 90 % in the score's own direction; it is measured
against the split in ``benchmarks/audit_tightness.py``, tightness and power.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import dp_accounting
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from audit_tightness import ALPHA, DELTA, EPSILONS, statistical_limit, sum_query  # noqa: E402

from dpclaims.audits.core import (  # noqa: E402
    audit,
    claim_anchored_ranks,
    epsilon_lower_bound,
)
from dpclaims.audits.mechanism import GaussianMechanism, replace_one  # noqa: E402


def claim_guided_rank(eps: float, n: int, alpha: float) -> int:
    """The rank k (D0 outputs above the threshold) that maximises the certificate on
    expected counts for the Gaussian mechanism at exactly (eps, DELTA): the audit's own
    :func:`~dpclaims.audits.core.claim_anchored_ranks` at the claim alone."""
    return int(claim_anchored_ranks(eps, DELTA, n, alpha, (1.0,))[0])


def order_statistic_certificates(x0: np.ndarray, x1: np.ndarray, k: int,
                                 alpha: float) -> np.ndarray:
    """Certificates (R,) of "guess D1 when x > X0_(n-k)" on outputs x0, x1 (R, n)."""
    n = x0.shape[1]
    t = np.partition(x0, n - k - 1, axis=1)[:, n - k - 1]   # k of D0's outputs above t
    fn = np.count_nonzero(x1 <= t[:, None], axis=1)
    return epsilon_lower_bound(np.full(len(t), k), n, fn, n, DELTA, alpha)


def cell(eps: float, n: int, reps: int) -> dict:
    sigma = dp_accounting.get_sigma_gaussian(eps, DELTA)
    limit = statistical_limit(sigma, n)
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((reps, n)) * sigma
    x1 = rng.standard_normal((reps, n)) * sigma + 1.0
    k_known, k_both = claim_guided_rank(eps, n, ALPHA), claim_guided_rank(eps, n, ALPHA / 2)
    known = order_statistic_certificates(x0, x1, k_known, ALPHA)
    high = order_statistic_certificates(x0, x1, k_both, ALPHA / 2)
    low = order_statistic_certificates(-x0, -x1, k_both, ALPHA / 2)  # "D1 low": 0 here
    both = np.maximum(high, low)
    mech = GaussianMechanism(sum_query, 1.0, sigma, DELTA, name=f"gaussian(eps={eps:g})")
    pair = replace_one(np.zeros(10), 0, 1.0)
    split = [audit(mech, pair, n, alpha=ALPHA, seed=s).epsilon_lower_bound for s in range(reps)]
    return {"eps": eps, "n": n, "R": reps, "k": k_both,
            "split (audit)": np.median(split) / limit,
            "rank, both directions": np.median(both) / limit,
            "rank, direction known": np.median(known) / limit}


POWER_CASES = ((1.0, 2.0), (1.0, 1.5), (0.5, 2.0), (2.0, 1.5))  # (claimed eps, shrink)


def power_row(claim_eps: float, shrink: float, n: int, reps: int) -> dict:
    """Refutation rates of both designs for a mechanism with sigma = claim's / shrink."""
    sigma = dp_accounting.get_sigma_gaussian(claim_eps, DELTA) / shrink
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((reps, n)) * sigma
    x1 = rng.standard_normal((reps, n)) * sigma + 1.0
    k = claim_guided_rank(claim_eps, n, ALPHA / 2)
    rank = np.maximum(order_statistic_certificates(x0, x1, k, ALPHA / 2),
                      order_statistic_certificates(-x0, -x1, k, ALPHA / 2))
    mech = GaussianMechanism(sum_query, 1.0, sigma, DELTA)
    pair = replace_one(np.zeros(10), 0, 1.0)
    split = np.array([audit(mech, pair, n, alpha=ALPHA, seed=s).epsilon_lower_bound
                      for s in range(reps)])
    return {"claimed eps": claim_eps, "true eps": dp_accounting.get_epsilon_gaussian(
                sigma, DELTA), "n": n, "R": reps,
            "refuted: split": np.mean(split > claim_eps),
            "refuted: rank": np.mean(rank > claim_eps),
            "median: split": np.median(split), "median: rank": np.median(rank)}


def print_rows(rows, int_cols: int) -> None:
    cols = list(rows[0])
    print("  ".join(f"{c:>22}" if i >= int_cols else f"{c:>11}" for i, c in enumerate(cols)))
    for r in rows:
        print("  ".join(f"{r[c]:>22.3f}" if i >= int_cols else f"{r[c]:>11g}"
                        for i, c in enumerate(cols)))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=41, help="seeds per cell (default 41)")
    parser.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--power-reps", type=int, default=101,
                        help="seeds per row of the power table at 10^4 trials (default 101)")
    args = parser.parse_args(argv)
    if args.reps < 1 or args.power_reps < 1 or min(args.n) < 100:
        parser.error("--reps and --power-reps must be >= 1 and every --n >= 100")
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    rows = [cell(eps, n, args.reps) for n in args.n for eps in EPSILONS]
    power = [power_row(e, s, 10_000, args.power_reps) for e, s in POWER_CASES]
    print(f"alpha {ALPHA}, delta {DELTA}; load average {load0:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after, {time.perf_counter() - t0:.0f} s\n")
    print("median certificate / statistical limit (k: the claim-guided rank at alpha/2)")
    print_rows(rows, 4)
    print("\npower against mechanisms with less noise than their claim needs")
    print_rows(power, 4)


if __name__ == "__main__":
    main()
