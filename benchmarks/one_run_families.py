"""One-run audits of DP-SEP and VIPS whole runs (issue 42): the gap to the multi-run audit
on the same algorithm, and false refutations of the correct configurations.

Run: ``nice .venv/bin/python benchmarks/one_run_families.py [--audits N] [--multi-runs R]
[--no-gap | --gap-only] [--no-power]`` (with ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``).

The algorithms are those of ``examples/algorithms.py`` (``dpsep_one_run``, ``vips_one_run``
and their planted bugs) with m = 100 canaries per run (VIPS's canaries are features of
their own, so its released s2 grows as d^2: 100 is what a run holds cheaply; DP-SEP's
100 slots use 13 quiet features):

* DP-SEP (Algorithm 3 as printed, N = 110 records of which 100 are canary slots, one
  epoch, gamma = C = 1, replace-one, one Gaussian(sigma) per epoch) at sigma = 2 and 0.5,
  and the planted bug (SEP's own update with the paper's noise, sigma = 2);
* VIPS (BLR, without replacement, N = 200 of which 100 are slots, S = 10, E = 3, J = 60,
  replace-one, dp_accounting RDP) at sigma = 3 and 1, and the planted bug (noise
  calibrated to an average over N = 200 records, sigma = 3).

Table A (``--no-gap`` skips it): the one-run certificate (:func:`dpclaims.audits.one_run.
audit_one_run`, one run of 100 canaries; and 10 runs pooled, 1,000 canaries) against the
multi-run audit (:func:`dpclaims.audits.whole_run.audit_whole_run`, 100,000 runs per
dataset, its default canary and declared statistic: DP-SEP's site canary with the
per-epoch maxima, VIPS's input canary with Fisher's discriminant on the summed trace) of
the same algorithm without slots (the same N, sigma, sampler and claim; d = 2), seed 0.

Table B (``--gap-only`` skips it): N one-run audits (one run each, 100 canaries) of each
correct configuration, all on the run axis of one vectorised call per block, each with its
own inclusions, certified together (:func:`~dpclaims.audits.one_run.one_run_certificate`,
the default strategy, the f-DP test certifying for DP-SEP's Gaussian-DP claim); a refutation
is a certificate above the claim, which a valid certificate allows with probability at most
alpha = 0.05. The Clopper-Pearson 95 % interval of the rate is printed.

Table C (``--gap-only`` or ``--no-power`` skip it): the same for the planted bugs, whose
refutation rate is the power of a one-run audit of one run.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from dataclasses import replace

import numpy as np
from one_run_false_refutation import report  # the same table row (benchmarks/ on sys.path)

from dpclaims.analysis.guessing_game import gdp_mu_of_event
from dpclaims.analysis.seeds import rng_for
from dpclaims.audits.one_run import algorithm_canary_scores, audit_one_run, one_run_certificate
from dpclaims.audits.whole_run import audit_whole_run
from dpclaims.execution.user_code import load_object

ALPHA, M, MULTI_RUNS = 0.05, 100, 100_000
EXAMPLES = "examples/algorithms.py"


def example(name: str, **changes):
    alg = load_object(f"{EXAMPLES}:{name}", "variant")()
    return replace(alg, **changes) if changes else alg


def settings():
    """(name, one-run algorithm) of Table A; the correct ones are Table B's."""
    return [
        ("dpsep as printed, sigma=2 (correct)", example("dpsep_one_run"), True),
        ("dpsep as printed, sigma=0.5 (correct)",
         example("dpsep_one_run", noise_multiplier=0.5, label=None), True),
        ("dpsep SEP update, paper noise (bug)", example("dpsep_one_run_sep_update"), False),
        ("vips wor, sigma=3 (correct)", example("vips_one_run"), True),
        ("vips wor, sigma=1 (correct)",
         example("vips_one_run", noise_multiplier=1.0, label=None), True),
        ("vips noise for N=200 (bug)", example("vips_one_run_noise_for_n"), False),
    ]


def without_slots(alg):
    """The same algorithm for the multi-run audit: no canary slots, d = 2, N background
    records (the same N, sigma, sampler and claim)."""
    return replace(alg, canary_slots=0, dim=2, label=None)


def table_a(multi_runs: int = MULTI_RUNS) -> None:
    print(f"Table A: one-run certificate (m = {M} canaries a run) against the multi-run "
          f"audit ({multi_runs:,} runs per dataset) on the same algorithm, seed 0, alpha "
          f"{ALPHA}")
    head = (f"{'algorithm':40} {'claim':>6} | {'one run':>8} {'10 runs':>8} | "
            f"{'multi-run':>9} | {'s one':>6} {'s ten':>6} {'s multi':>7}")
    print(head)
    print("-" * len(head))
    for name, alg, _ in settings():
        t0 = time.perf_counter()
        one = audit_one_run(alg, M, seed=0).epsilon_lower_bound
        t1 = time.perf_counter()
        ten = audit_one_run(alg, M, runs=10, seed=0).epsilon_lower_bound
        t2 = time.perf_counter()
        plain = without_slots(alg)
        assert math.isclose(plain.claim.epsilon, alg.claim.epsilon, rel_tol=1e-12)
        many = audit_whole_run(plain, multi_runs, seed=0).epsilon_lower_bound
        t3 = time.perf_counter()
        print(f"{name:40} {alg.claim.epsilon:>6.3f} | {one:>8.3f} {ten:>8.3f} | "
              f"{many:>9.3f} | {t1 - t0:>6.1f} {t2 - t1:>6.1f} {t3 - t2:>7.1f}", flush=True)


def table_b(n: int, correct: bool = True) -> None:
    """N one-run audits of each correct configuration (false refutations), or of each
    planted bug (``correct=False``: the refutation rate is the audit's power)."""
    what = ("the correct configurations" if correct else
            "the planted bugs (the refutation rate is the power)")
    print(f"\nTable {'B' if correct else 'C'}: one-run audits of {what}: {n} audits each "
          f"(one run of m = {M} canaries), alpha = {ALPHA}")
    head = (f"{'setting':38} {'claim':>7} {'audits':>6} {'refuted':>7} {'rate':>7}  "
            f"{'CP 95% interval':16} {'median':>7} {'max':>7} {'s':>7}")
    print(head)
    print("-" * len(head))
    for name, alg, ok in settings():
        if ok != correct:
            continue
        t0 = time.perf_counter()
        key = ("one-run-families-false-refutation", name)
        inc = rng_for(0, *key, "inclusions").random((n, M)) < 0.5
        block = 50
        scores = np.concatenate([
            algorithm_canary_scores(alg, inc[b:b + block], rng_for(0, *key, "runs", b))[0]
            for b in range(0, n, block)])
        mu = gdp_mu_of_event(alg.claim.dp_event)
        cert = one_run_certificate(scores, inc, alg.claim.delta, ALPHA, claim_mu=mu)
        report(name.replace(" (correct)", ""), alg.claim.epsilon, cert.epsilon_lower_bound(),
               time.perf_counter() - t0)


def main() -> None:
    logging.getLogger("absl").setLevel(logging.ERROR)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--audits", type=int, default=300)
    p.add_argument("--multi-runs", type=int, default=MULTI_RUNS,
                   help="runs per dataset of the multi-run audit")
    p.add_argument("--no-gap", action="store_true", help="skip table A")
    p.add_argument("--gap-only", action="store_true", help="table A only")
    p.add_argument("--no-power", action="store_true", help="skip table C")
    args = p.parse_args()
    if not args.no_gap:
        table_a(args.multi_runs)
    if not args.gap_only:
        table_b(args.audits)
        if not args.no_power:
            table_b(args.audits, correct=False)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
