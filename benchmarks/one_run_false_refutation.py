"""False refutations of one-run audits: correct mechanisms and algorithms, many audits.

Run: ``.venv/bin/python benchmarks/one_run_false_refutation.py [--audits N] [--m M]``.

Each audit is a one-run audit (:mod:`dpclaims.audits.one_run`) at alpha = 0.05 with its
own seed; a correct mechanism or algorithm is refuted when the certificate exceeds the
claimed epsilon, which the certificate allows with probability at most alpha (the
Bonferroni union over the guess grid and the analyses). The rate's Clopper-Pearson 95 %
interval is printed (:func:`dpclaims.analysis.intervals.clopper_pearson`).

* ``gaussian``: the Gaussian mechanism of the vector sum query at its exact claim (eps 1,
  2, 4; add-remove, delta 1e-5), :func:`~dpclaims.audits.one_run.audit_one_run` per seed
  (one release each; the f-DP tests certify: the claim is Gaussian-DP).
* ``dpvi``: DPVI (aligned, N = 20, T = 10, q = 0.5, sigma = 1 and 4, C = 1) with m Dirac
  gradient canaries: N audits of one run each, drawn in one vectorised call of
  ``run_gradient_canaries`` (one run per audit on the run axis, each with its own
  inclusions), certified together (:func:`~dpclaims.audits.one_run.one_run_certificate`).
"""

from __future__ import annotations

import argparse
import logging
import time

import dp_accounting
import numpy as np

from dpclaims.algorithms.dpvi.whole_run import DPVIRun
from dpclaims.analysis.guessing_game import gdp_mu_of_event
from dpclaims.analysis.intervals import clopper_pearson
from dpclaims.analysis.seeds import rng_for
from dpclaims.audits.mechanism import GaussianMechanism
from dpclaims.audits.one_run import (
    algorithm_canary_scores,
    audit_one_run,
    one_run_certificate,
    vector_sum,
)

ALPHA, DELTA = 0.05, 1e-5


def report(name: str, claim: float, bounds: np.ndarray, seconds: float) -> None:
    n, k = len(bounds), int(np.sum(bounds > claim))
    lo, hi = clopper_pearson(k, n, 0.05)
    print(f"{name:38} {claim:>7.3f} {n:>6} {k:>7} {k / n:>7.3f}  [{lo:.3f}, {hi:.3f}]  "
          f"{np.median(bounds):>7.3f} {bounds.max():>7.3f} {seconds:>7.1f}", flush=True)


def main() -> None:
    logging.getLogger("absl").setLevel(logging.ERROR)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--audits", type=int, default=300)
    p.add_argument("--m", type=int, default=1000, help="canaries per audit")
    args = p.parse_args()
    n, m = args.audits, args.m
    print(f"One-run audits of correct mechanisms and algorithms: {n} audits each, m = {m} "
          f"canaries, alpha = {ALPHA}, delta = {DELTA:g}")
    head = (f"{'setting':38} {'claim':>7} {'audits':>6} {'refuted':>7} {'rate':>7}  "
            f"{'CP 95% interval':16} {'median':>7} {'max':>7} {'s':>7}")
    print(head)
    print("-" * len(head))
    for eps in (1.0, 2.0, 4.0):
        sigma = dp_accounting.get_sigma_gaussian(eps, DELTA)
        mech = GaussianMechanism(vector_sum, 1.0, sigma, DELTA, relation="add-remove")
        t0 = time.perf_counter()
        bounds = np.array([audit_one_run(mech, m, seed=s).epsilon_lower_bound
                           for s in range(n)])
        report(f"gaussian eps={eps:g}", mech.claim.epsilon, bounds, time.perf_counter() - t0)
    for sigma in (1.0, 4.0):
        alg = DPVIRun(n_records=20, steps=10, noise_multiplier=sigma, sampling_rate=0.5,
                      clip=1.0, dim=2 + m, canary_slots=m)
        t0 = time.perf_counter()
        inc = rng_for(0, "one-run-false-refutation", "inclusions").random((n, m)) < 0.5
        scores, _ = algorithm_canary_scores(alg, inc, rng_for(0, "one-run-false-refutation",
                                                              "runs"))
        assert gdp_mu_of_event(alg.claim.dp_event) is None   # f-DP: an estimate only
        cert = one_run_certificate(scores, inc, alg.claim.delta, ALPHA)
        report(f"dpvi sigma={sigma:g} (one run per audit)", alg.claim.epsilon,
               cert.epsilon_lower_bound(), time.perf_counter() - t0)


if __name__ == "__main__":
    main()
