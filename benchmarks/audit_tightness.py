"""Tightness of the audit certificate on the Gaussian mechanism, against the statistical limit.

Run: ``.venv/bin/python benchmarks/audit_tightness.py [--quick] [--workers K] [--no-power]
[--no-rr] [--reps-small R] [--only-small]``.

Ground truth: the Gaussian mechanism on the 1-D sum query with L2 sensitivity 1,
noise multiplier sigma = ``dp_accounting.get_sigma_gaussian(eps, delta)``, so that
its true epsilon at delta = 1e-5 is exactly ``eps``; the pair is ``zeros(10)`` and
the same data with record 0 replaced by 1.0 (the query moves by the full
sensitivity). For each eps in {0.5, 1, 2, 4} and n in {1e4, 1e5, 1e6} trials per
dataset, :func:`dpclaims.audits.core.audit` (alpha = 0.05) is run R times with
seeds 0..R-1 with each of the threshold designs ``"split"``, ``"rank"`` and ``"auto"``
(R = ``--reps-small`` at 1e4, default 1001, as the median at 1e4 moves by about +-0.1
of the limit from one set of 15 seeds to another; R = 15 at 1e5, R = 7 at 1e6;
``--quick``: R = 2 and n <= 1e5; ``--only-small``: n = 1e4 only).

The baseline is the **statistical limit** of the same run,
:func:`dpclaims.audits.core.optimal_cp_limit`: the best one-threshold
Clopper-Pearson bound at significance alpha that n trials per dataset could give
with the known output distributions N(0, sigma^2) and N(1, sigma^2), their
expected error counts and the best threshold on a fine grid (200 001 points over
[-10 sigma, 1 + 10 sigma]). No certificate at n trials can be expected to exceed it.

Columns
-------
eps            true epsilon of the mechanism (= its claim).
n              trials (outputs) per dataset.
R              repetitions (seeds 0..R-1).
limit/eps      the statistical limit as a fraction of the true epsilon: what n
               trials can certify at best.
cert/eps       median certificate (``epsilon_lower_bound``) / true epsilon.
cert/limit     median certificate / limit: the engine's efficiency.
min c/limit    smallest certificate / limit over the R seeds.
gdp/eps        median GDP estimate (``epsilon_gdp_estimate``) / true epsilon (an
               estimate; may exceed 1).
cred/eps       median Bayesian credible lower bound / true epsilon (an estimate).
oracle/limit   the ceiling of any split design holding out as many trials as the
               audit: the median certificate with the best threshold known in advance
               on binomial held-out counts (:func:`oracle_split_ceiling`) / limit.
vs jax_priv    median over seeds of our certificate / jax_privacy's best
               Clopper-Pearson certificate on the same outputs
               (:func:`jax_privacy_best`; nan when jax_privacy is not installed).
rank/limit     the same audits with ``threshold="rank"`` (:class:`RankThreshold`: a
               10 % training split chooses a rank among ranks anchored at the claim;
               the threshold is that order statistic of D0's held-out 90 %): median
               certificate / limit.
rank min       smallest rank certificate / limit over the R seeds.
rank vs jax    median over seeds of the rank certificate / jax_privacy's best.
auto/limit     the same audits with ``threshold="auto"`` (:class:`AutoThreshold`: 5 %
               training, at least 400 trials; a rank the training AUROC points to):
               median certificate / limit.
auto med lo/hi a distribution-free 95 % interval for the median of auto/limit over
               seeds (order statistics; :func:`median_interval`): at 10^4 the spread
               over seeds is wide (10-90 % quantiles about 0.5 and 1.4 of the limit at
               eps 0.5), so R = 15 seeds place the median only within about +-0.1
               and R = 1001 within about +-0.025.
auto min       smallest auto certificate / limit over the R seeds.
auto vs jax    median over seeds of the auto certificate / jax_privacy's best on the
               auto audit's own outputs.
target         "yes" when median cert/limit >= 0.9, the target.

Then (unless ``--no-power``) the power of the three designs against mechanisms that add
less noise than their claim needs (sigma = the claim's sigma / shrink, so the true
epsilon is above the claim): over R seeds at 10^4 (R = 101) and 10^5 (R = 41) trials
per dataset, the fraction of audits that refute the claim and the median
certificates over the limit of the true mechanism. On correct claims (the table
above) no design may refute more often than alpha. Then (unless ``--no-rr``) the
three designs on randomised response that is exactly (1, 1e-3)-DP at 20,000 trials
(seeds 0-20): median certificate / claim and the audits that certified 0.

The limit uses all n trials per dataset, while the certificate rests on the
held-out 80 % (the split strategy spends 20 % on fitting the score and choosing
the threshold), so cert/limit includes the price of the training split: at
equal held-out size the engine would be closer still to the limit.

The seeds are shared across cells: seed s draws the same standard normals at every
eps (scaled by sigma), and the first blocks at n = 1e4 are prefixes of those at
n = 1e5. The cells are therefore not independent; a lucky or unlucky seed moves
a whole column in the same direction (e.g. cert/limit slightly above 1 at small
R is sampling luck of the held-out counts, not a bound beating the limit).
"""

from __future__ import annotations

import argparse
import os
import time

import dp_accounting
import numpy as np
from scipy.stats import binom, norm

from dpclaims.audits.core import audit, epsilon_lower_bound, optimal_cp_limit
from dpclaims.audits.mechanism import GaussianMechanism, replace_one

DELTA = 1e-5
ALPHA = 0.05
EPSILONS = (0.5, 1.0, 2.0, 4.0)
TARGET = 0.9
ISSUE_23_TARGET = 0.96


def sum_query(data) -> np.ndarray:
    """The 1-D sum query (module level, so the mechanism pickles for any start method)."""
    return np.atleast_1d(np.sum(data))


def statistical_limit(sigma: float, n: int) -> float:
    """Best Clopper-Pearson bound at n trials for N(0, sigma^2) vs N(1, sigma^2)."""
    grid = np.linspace(-10 * sigma, 1 + 10 * sigma, 200_001)
    return optimal_cp_limit(lambda t: norm.sf(t / sigma), lambda t: norm.cdf((t - 1) / sigma),
                            grid, n, DELTA, ALPHA)


def oracle_split_ceiling(sigma: float, n: int, n_held_out: int, rng) -> float:
    """Median certificate of an oracle split: the best threshold known in advance, the
    Clopper-Pearson bound on binomial counts of ``n_held_out`` trials (20,001 draws),
    as a fraction of the limit at n. No split design holding out n_held_out trials
    can expect more."""
    sigma_grid = np.linspace(-10 * sigma, 1 + 10 * sigma, 200_001)
    fpr, fnr = norm.sf(sigma_grid / sigma), norm.cdf((sigma_grid - 1) / sigma)
    m = n_held_out
    best = int(np.argmax(epsilon_lower_bound(m * fpr, m, m * fnr, m, DELTA, ALPHA)))
    fp, fn = rng.binomial(m, fpr[best], 20_001), rng.binomial(m, fnr[best], 20_001)
    return float(np.median(epsilon_lower_bound(fp, m, fn, m, DELTA, ALPHA)))


def jax_privacy_auditing():
    """jax_privacy's auditing module when installed (``pip install jax-privacy``), else None."""
    try:
        from jax_privacy import auditing
    except Exception:  # noqa: BLE001  (not installed, or jax missing: the column is skipped)
        return None
    return auditing


def jax_privacy_best(auditing, mech, pair, n: int, seed: int, n_train: int) -> float:
    """jax_privacy's best Clopper-Pearson certificate on the audit's own outputs.

    The outputs are the ones ``audit(mech, pair, n, seed=seed)`` draws with ``n_train``
    training trials (the same blocks, seeds and block size: training and held-out
    trials, n per dataset); the
    score is the output itself (the optimal test for a 1-D Gaussian shift, so no trial
    is spent fitting one). ``CanaryScoreAuditor(D1 outputs, D0 outputs)
    .epsilon_clopper_pearson(alpha, delta, one_sided=False)`` with each of its
    threshold strategies (Bonferroni over every threshold; Split with 20 % and 50 %
    choosing the threshold, seed 0) and the largest is reported: generous to it, a
    maximum over strategies is not itself a certificate.
    """
    from dpclaims.audits.core import _block, _block_tasks

    outs = []
    for which in (0, 1):
        blocks = [_block(mech, (pair.d0, pair.d1), w, m, seed, key, None, None)
                  for phase, total in ((0, n_train), (1, n - n_train))
                  for w, m, key, _, _ in _block_tasks(which, phase, total, 65_536, None, None)]
        outs.append(np.concatenate(blocks).ravel())
    auditor = auditing.CanaryScoreAuditor(outs[1], outs[0])
    strategies = [auditing.Bonferroni(), auditing.Split(0.2, seed=0), auditing.Split(0.5, seed=0)]
    return max(auditor.epsilon_clopper_pearson(ALPHA, DELTA, one_sided=False,
                                               threshold_strategy=st) for st in strategies)


def run_cell(eps: float, n: int, reps: int, workers: int, auditing=None) -> dict:
    """R audits of the Gaussian mechanism at true epsilon ``eps`` with n trials per dataset."""
    sigma = dp_accounting.get_sigma_gaussian(eps, DELTA)
    mech = GaussianMechanism(sum_query, 1.0, sigma, DELTA, name=f"gaussian(eps={eps:g})")
    true_eps = mech.claim.epsilon
    pair = replace_one(np.zeros(10), 0, 1.0)
    limit = statistical_limit(sigma, n)
    certs, gdps, creds, theirs, ranks, autos, auto_theirs = [], [], [], [], [], [], []
    for seed in range(reps):
        r = audit(mech, pair, n, alpha=ALPHA, seed=seed, workers=workers, threshold="split")
        ranks.append(audit(mech, pair, n, alpha=ALPHA, seed=seed, workers=workers,
                           threshold="rank").epsilon_lower_bound)
        a = audit(mech, pair, n, alpha=ALPHA, seed=seed, workers=workers, threshold="auto")
        autos.append(a.epsilon_lower_bound)
        certs.append(r.epsilon_lower_bound)
        gdps.append(np.nan if r.epsilon_gdp_estimate is None else r.epsilon_gdp_estimate)
        creds.append(r.epsilon_credible_lower)
        if auditing is not None:
            theirs.append(jax_privacy_best(auditing, mech, pair, n, seed, r.n_train))
            auto_theirs.append(jax_privacy_best(auditing, mech, pair, n, seed, a.n_train))
    certs, ranks, autos = np.asarray(certs), np.asarray(ranks), np.asarray(autos)
    ceiling = oracle_split_ceiling(sigma, n, r.n_held_out, np.random.default_rng(7))
    ratio = rank_ratio = auto_ratio = np.nan
    if theirs:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = float(np.median(certs / np.asarray(theirs)))
            rank_ratio = float(np.median(ranks / np.asarray(theirs)))
            auto_ratio = float(np.median(autos / np.asarray(auto_theirs)))
    if max(certs.max(), ranks.max(), autos.max()) > true_eps:
        print(f"REFUTED a correct claim: eps {eps:g}, n {n}: split {certs.max():.4f}, "
              f"rank {ranks.max():.4f}, auto {autos.max():.4f} > {true_eps:.4f}")
    lo, hi = median_interval(autos / limit)
    return {
        "eps": eps, "n": n, "reps": reps,
        "limit/eps": limit / true_eps,
        "cert/eps": np.median(certs) / true_eps,
        "cert/limit": np.median(certs) / limit,
        "min c/limit": certs.min() / limit,
        "oracle/limit": ceiling / limit,
        "vs jax_priv": ratio,
        "gdp/eps": np.nanmedian(gdps) / true_eps if not np.all(np.isnan(gdps)) else np.nan,
        "cred/eps": np.median(creds) / true_eps,
        "rank/limit": np.median(ranks) / limit,
        "rank min": ranks.min() / limit,
        "rank vs jax": rank_ratio,
        "auto/limit": np.median(autos) / limit,
        "auto med lo": lo,
        "auto med hi": hi,
        "auto min": autos.min() / limit,
        "auto vs jax": auto_ratio,
    }


def median_interval(x, level: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval for the median of the R values ``x``: the order
    statistics x_(j) and x_(R + 1 - j) with j the largest integer such that
    P(Bin(R, 1/2) < j) <= (1 - level) / 2 (coverage at least ``level``; David &
    Nagaraja, Order Statistics, Sec. 7.1). (nan, nan) when R is too small."""
    x = np.sort(np.asarray(x, dtype=float))
    j = int(binom.ppf((1 - level) / 2, len(x), 0.5))  # P(Bin <= j - 1) <= (1 - level) / 2
    while j > 0 and binom.cdf(j - 1, len(x), 0.5) > (1 - level) / 2:
        j -= 1
    if j < 1:
        return np.nan, np.nan
    return float(x[j - 1]), float(x[len(x) - j])


POWER_CASES = ((1.0, 2.0), (1.0, 1.5), (0.5, 2.0), (2.0, 1.5), (1.0, 1.25))  # (claim, shrink)


def power_row(claimed: float, shrink: float, n: int, reps: int, workers: int) -> dict:
    """Refutation rates and median certificates of both designs over seeds 0..reps-1."""
    claim_sigma = dp_accounting.get_sigma_gaussian(claimed, DELTA)
    sigma = claim_sigma / shrink
    # the claim's noise multiplier, with noise calibrated to 1 / shrink of the sensitivity
    mech = GaussianMechanism(sum_query, 1.0, claim_sigma, DELTA, calibrated_to=1 / shrink)
    pair = replace_one(np.zeros(10), 0, 1.0)
    limit = statistical_limit(sigma, n)
    out = {"claim": claimed, "true eps": dp_accounting.get_epsilon_gaussian(sigma, DELTA),
           "n": n, "R": reps}
    for name, threshold in (("split", "split"), ("rank", "rank"), ("auto", "auto")):
        c = np.array([audit(mech, pair, n, alpha=ALPHA, seed=s, workers=workers,
                            threshold=threshold).epsilon_lower_bound for s in range(reps)])
        out[f"refuted {name}"] = float(np.mean(c > claimed))
        out[f"{name}/limit"] = float(np.median(c) / limit)
    return out


def rr_row(n: int, reps: int, workers: int) -> dict:
    """Randomised response that is exactly (1, 1e-3)-DP (every threshold tight): the
    median certificate / the claim of each design over seeds 0..reps-1, and how many
    audits certified 0; a refutation of this correct claim is counted and printed."""
    from false_refutation import RandomisedResponseDelta

    mech = RandomisedResponseDelta()
    pair = mech.neighbouring_pairs()[0]
    out = {"n": n, "R": reps}
    for name in ("split", "rank", "auto"):
        c = np.array([audit(mech, pair, n, alpha=ALPHA, seed=s, workers=workers,
                            threshold=name).epsilon_lower_bound for s in range(reps)])
        out[f"{name}/claim"] = float(np.median(c) / mech.eps)
        out[f"{name} zero"] = int(np.sum(c == 0))
        out[f"{name} refuted"] = int(np.sum(c > mech.eps))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="R = 2 and n <= 1e5 (a smoke run)")
    parser.add_argument("--workers", type=int, default=1, help="processes passed to audit")
    parser.add_argument("--reps-small", type=int, default=1001,
                        help="seeds per cell at 10^4 trials (default 1001)")
    parser.add_argument("--no-rr", action="store_true",
                        help="skip the randomised-response rows")
    parser.add_argument("--only-small", action="store_true",
                        help="only the cells at 10^4 trials (with the power rows at 10^4)")
    parser.add_argument("--no-power", action="store_true",
                        help="skip the power table (mechanisms that break their claim)")
    args = parser.parse_args(argv)

    sizes = (10_000, 100_000) if args.quick else (10_000, 100_000, 1_000_000)
    auditing = jax_privacy_auditing()
    start = time.perf_counter()
    load = os.getloadavg()[0]
    rows = []
    for eps in EPSILONS:
        for n in sizes:
            if args.only_small and n > 10_000:
                continue
            reps = 2 if args.quick else (args.reps_small if n == 10_000 else
                                         15 if n <= 100_000 else 7)
            rows.append(run_cell(eps, n, reps, args.workers, auditing))
    power = [] if args.no_power else [
        power_row(c, shrink, n, (2 if args.quick else r), args.workers)
        for n, r in ((10_000, 101), (100_000, 41)) for c, shrink in POWER_CASES
        if not (args.only_small and n > 10_000)]
    rr = [] if args.no_rr else [rr_row(n, 2 if args.quick else 21, args.workers)
                                for n in (20_000,)]
    wall = time.perf_counter() - start

    cols = ["limit/eps", "cert/eps", "cert/limit", "min c/limit", "oracle/limit", "vs jax_priv",
            "gdp/eps", "cred/eps", "rank/limit", "rank min", "rank vs jax", "auto/limit",
            "auto med lo", "auto med hi", "auto min", "auto vs jax"]
    print(f"Gaussian mechanism, delta = {DELTA:g}, alpha = {ALPHA}; cert: split threshold "
          f"(certificate on the held-out 80 %), rank, auto; workers = {args.workers}; jax_privacy "
          f"{'installed' if auditing else 'not installed (vs jax_priv: nan)'}; load average "
          f"{load:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"{'eps':>5}{'n':>9}{'R':>3}" + "".join(f"{c:>13}" for c in cols) + f"{'target':>8}")
    for row in rows:
        ok = "yes" if row["cert/limit"] >= TARGET else "NO"
        print(f"{row['eps']:>5g}{row['n']:>9.0e}{row['reps']:>3d}"
              + "".join(f"{row[c]:>13.3f}" for c in cols) + f"{ok:>8}")
    met = sum(row["cert/limit"] >= TARGET for row in rows)
    print(f"target (median certificate >= {TARGET} x limit) met in {met} of {len(rows)} cells")
    for col in ("cert/limit", "rank/limit", "auto/limit"):
        high = sum(row[col] >= ISSUE_23_TARGET for row in rows)
        print(f"issue 23's target (median >= {ISSUE_23_TARGET} x limit), {col}: met in {high} "
              f"of {len(rows)} cells")
    if power:
        print("\npower against mechanisms with less noise than their claim needs "
              "(x/limit: median certificate / the true mechanism's limit)")
        pcols = list(power[0])
        print("".join(f"{c:>14}" for c in pcols))
        for row in power:
            print("".join(f"{row[c]:>14d}" if c in ("n", "R") else f"{row[c]:>14.3f}"
                          for c in pcols))
    if rr:
        print("\nrandomised response that is exactly (1, 1e-3)-DP (false_refutation.py's "
              "RandomisedResponseDelta), automatic score: median certificate / claim, and the "
              "audits that certified 0")
        for row in rr:
            print("  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                            for k, v in row.items()))
    print(f"total wall time: {wall:.1f} s")


if __name__ == "__main__":
    main()
