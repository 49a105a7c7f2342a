"""Why the one-run certificate loses to jax_privacy's at m = 100 canaries: many audits.

Run: ``.venv/bin/python benchmarks/one_run_small_m.py [--audits N] [--m M]``.

N audits (default 200) of m canaries (default 100), drawn in one vectorised call each:

* ``gaussian``: the Gaussian mechanism of the vector sum (add-remove, Delta = 1,
  epsilon 4, delta 1e-5; Dirac canaries): the score of canary i is S_i + sigma Z_i
  (the released coordinate i), the same distribution as
  :func:`~dpclaims.audits.one_run.audit_one_run` draws;
* ``dp-sgd``: DPVI (aligned, N = 20, T = 10, q = 0.5, sigma = 1, C = 1) with m Dirac
  gradient canaries, one run per audit on the run axis, full-trace score.

Per setting, over the N audits: our certificate under each strategy (``--strategies``),
its parts, and jax_privacy 2.0's ``epsilon_one_run`` / ``epsilon_one_run_fdp`` on the same
scores (its default ``Bonferroni`` strategy, in ``.venv-jaxpriv``); the median of each,
the median per-audit ratio ours / theirs, the fraction of audits where ours < theirs, and
diagnostics of the loss: the one-sided bound at the k our strategy chose against the best
k chosen *with the labels* (an oracle, not a valid bound) at the same level, the same k
at the full alpha (the Bonferroni factor's cost), and the number of jax_privacy's tests
(the vertices of the empirical ROC's convex hull, chosen with the labels).
"""

from __future__ import annotations

import argparse
import logging
import time

import dp_accounting
import numpy as np
from one_run import ALPHA, DELTA, jax_privacy_bounds  # benchmarks/one_run.py

from dpclaims.algorithms.dpvi.whole_run import DPVIRun
from dpclaims.analysis.guessing_game import snj_epsilon_lower_bound
from dpclaims.analysis.seeds import rng_for
from dpclaims.audits.one_run import (
    SELECTION_CANDIDATES,
    algorithm_canary_scores,
    one_run_certificate,
)


def draw(setting: str, n: int, m: int):
    """(scores (n, m), included (n, m), claim_mu or None) of n audits."""
    inc = rng_for(0, "one-run-small-m", setting, "inclusions").random((n, m)) < 0.5
    rng = rng_for(0, "one-run-small-m", setting, "runs")
    if setting == "gaussian":
        sigma = dp_accounting.get_sigma_gaussian(4.0, DELTA)
        return inc + sigma * rng.standard_normal((n, m)), inc, 1.0 / sigma
    alg = DPVIRun(n_records=20, steps=10, noise_multiplier=1.0, sampling_rate=0.5,
                  clip=1.0, dim=2 + m, canary_slots=m)
    scores, _ = algorithm_canary_scores(alg, inc, rng)
    return scores, inc, None


def oracle_one_sided(scores, included, level: float) -> np.ndarray:
    """The best one-sided bound over the strategy's candidate k, chosen with the labels
    (not a valid bound: the diagnosis' ceiling for the choice of k)."""
    from dpclaims.analysis.guessing_game import one_run_counts

    m = scores.shape[1]
    cand = np.unique(np.rint(np.geomspace(1, max(1, m // 2),
                                          SELECTION_CANDIDATES)).astype(np.int64))
    c = one_run_counts(scores, included, cand, np.zeros_like(cand))
    return snj_epsilon_lower_bound(m, np.broadcast_to(cand, c.shape), c, DELTA,
                                   level).max(axis=1)


def main() -> None:
    logging.getLogger("absl").setLevel(logging.ERROR)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--audits", type=int, default=200)
    p.add_argument("--m", type=int, default=100)
    p.add_argument("--strategies", default="scores,grid")
    args = p.parse_args()
    n, m = args.audits, args.m
    strategies = args.strategies.split(",")
    print(f"{n} audits of m = {m} canaries, alpha {ALPHA}, delta {DELTA:g}")
    for setting in ("gaussian", "dp-sgd"):
        scores, inc, mu = draw(setting, n, m)
        t0 = time.perf_counter()
        theirs = jax_privacy_bounds(scores, inc)
        t_jax = time.perf_counter() - t0
        best_theirs = None
        if theirs is not None:
            best_theirs = theirs[:, :2].max(axis=1) if mu is not None else theirs[:, 0]
            print(f"\n{setting}: jax_privacy ({t_jax:.1f} s): median one-sided "
                  f"{np.median(theirs[:, 0]):.3f}, f-DP {np.median(theirs[:, 1]):.3f}, "
                  f"compared {np.median(best_theirs):.3f}; its tests (hull vertices): "
                  f"median {np.median(theirs[:, 2]):.0f}, range [{theirs[:, 2].min():.0f}, "
                  f"{theirs[:, 2].max():.0f}]; audits at 0: {np.sum(best_theirs == 0)}")
        for strategy in strategies:
            t0 = time.perf_counter()
            cert = one_run_certificate(scores, inc, DELTA, ALPHA, claim_mu=mu,
                                       strategy=strategy)
            dt = time.perf_counter() - t0
            ours = cert.epsilon_lower_bound()
            fdp = cert.fdp_epsilon()
            line = (f"  {strategy:>12} ({dt:5.1f} s, {cert.n_tests} tests): median "
                    f"cert {np.median(ours):.3f}, 1-sided {np.median(cert.one_sided):.3f}, "
                    f"2-sided {np.median(cert.two_sided):.3f}, f-DP {np.median(fdp):.3f}; "
                    f"at 0: {np.sum(ours == 0)}")
            if best_theirs is not None:
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = np.where(best_theirs > 0, ours / best_theirs, np.inf)
                line += (f"; vs jax: median ratio {np.median(ratio):.3f}, ours < theirs in "
                         f"{np.sum(ours < best_theirs)}/{n}, q10 ratio "
                         f"{np.quantile(ratio, 0.1):.3f}, min {ratio.min():.3f}")
            print(line, flush=True)
        # diagnosis of the default strategy's one-sided test
        cert = one_run_certificate(scores, inc, DELTA, ALPHA, claim_mu=mu)
        level = ALPHA / cert.n_tests
        orc = oracle_one_sided(scores, inc, level)
        full = snj_epsilon_lower_bound(m, cert.k_one, cert.correct_one, DELTA, ALPHA)
        print(f"  diagnosis (default, one-sided): chosen k median {np.median(cert.k_one):.0f} "
              f"[q10 {np.quantile(cert.k_one, .1):.0f}, q90 {np.quantile(cert.k_one, .9):.0f}]"
              f", k = 1 in {np.sum(cert.k_one == 1)}; bound {np.median(cert.one_sided):.3f}; "
              f"label oracle k at the same level {np.median(orc):.3f}; chosen k at alpha "
              f"(no Bonferroni) {np.median(full):.3f}")


if __name__ == "__main__":
    main()
