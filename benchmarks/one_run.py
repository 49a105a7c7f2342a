"""One-run audits against jax_privacy's, on the same scores, and against the multi-run audit.

Run: ``.venv/bin/python benchmarks/one_run.py [--quick] [--seeds S] [--no-gap | --gap-only]``.

Table 1, for m = 100, 1,000, 10,000 canaries (``--quick``: 100 and 1,000) on

* ``gaussian``: the Gaussian mechanism of the sum query over vector records (add-remove,
  Delta = 1, delta = 1e-5) calibrated to epsilon 4 (exact claim, mu = 1/sigma):
  :func:`dpclaims.audits.one_run.audit_one_run` (Dirac canaries, one release);
* ``dp-sgd``: DPVI (aligned; DP-SGD on the ELBO; N = 20, T = 10, q = 0.5, sigma = 1,
  C = 1, claimed epsilon from dp_accounting's PLD) with m Dirac gradient canaries in one
  run, scored by the full-trace statistic sum_s <update_s, e_j> / C.

For each seed: our certificate's parts on the scores of one audit (the default strategy
"scores": each analysis' guess count chosen from the unlabeled scores, one test per
analysis at alpha / (number of tests); :mod:`dpclaims.audits.one_run`): the one-sided and
two-sided Steinke et al. bounds and the f-DP (GDP) bound (a certificate for the Gaussian
mechanism, whose claim is Gaussian-DP; an estimate for DPVI, whose Poisson-subsampled claim
is not), the certificate (their largest where each is a certificate), and ``grid``: the
certificate of the strategy "grid" (every k of a grid of 8 fractions of m, 24 tests).
Beside them, on the same scores,
jax_privacy 2.0's ``CanaryScoreAuditor(in_scores, out_scores).epsilon_one_run(alpha,
delta)`` and ``.epsilon_one_run_fdp(alpha, delta)`` (its default threshold strategy,
Bonferroni over its thresholds), run in its own venv (``make venv-jax-privacy``:
``.venv-jaxpriv`` with jax-privacy==2.0.0) as a subprocess on an .npz of the scores.
Columns: medians over seeds; ``min ratio`` the smallest over seeds of ours / theirs
(one-sided vs their one-sided; certificate vs their larger).

Table 2 (``--no-gap`` skips it): the gap to the multi-run audit on the same algorithm
(the Gaussian mechanism at epsilon 1 and 4; DPVI as above at sigma 1 and 4, correct and
with the noise std sigma * 0.25 instead of sigma * C):
the one-run certificate (m = 1,000, one run; and 10 runs pooled) against
:func:`~dpclaims.audits.core.audit` / :func:`~dpclaims.audits.whole_run.audit_whole_run`
with 100,000 trials (runs) per dataset, the Clopper-Pearson certificate, seed 0.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dp_accounting
import numpy as np

from dpclaims.algorithms.dpvi.whole_run import DPVIRun
from dpclaims.analysis.seeds import rng_for
from dpclaims.audits.core import audit
from dpclaims.audits.mechanism import GaussianMechanism, add_one
from dpclaims.audits.one_run import (
    algorithm_canary_scores,
    audit_one_run,
    inclusions,
    one_run_certificate,
    vector_sum,
)
from dpclaims.audits.whole_run import audit_whole_run

ALPHA, DELTA = 0.05, 1e-5
ROOT = Path(__file__).resolve().parents[1]
JAX_PYTHON = ROOT / ".venv-jaxpriv" / "bin" / "python"

JAX_SCRIPT = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import numpy as np
from jax_privacy import auditing
z = np.load(sys.argv[1])
alpha, delta = float(sys.argv[2]), float(sys.argv[3])
out = []
for i in range(z["scores"].shape[0]):
    s, inc = z["scores"][i], z["included"][i]
    a = auditing.CanaryScoreAuditor(s[inc], s[~inc])
    # its Bonferroni strategy's number of tests: the vertices of the empirical ROC's hull
    out.append([float(a.epsilon_one_run(alpha, delta)), float(a.epsilon_one_run_fdp(alpha, delta)),
                len(a._fn_counts)])
print(json.dumps(out))
"""


def gaussian(eps: float = 4.0) -> GaussianMechanism:
    sigma = dp_accounting.get_sigma_gaussian(eps, DELTA)
    return GaussianMechanism(vector_sum, 1.0, sigma, DELTA, relation="add-remove",
                             name=f"gaussian(eps={eps:g})")


def dpvi(m: int, sigma: float = 1.0, **kw) -> DPVIRun:
    return DPVIRun(n_records=20, steps=10, noise_multiplier=sigma, sampling_rate=0.5,
                   clip=1.0, dim=2 + m, canary_slots=m, **kw)


def audit_scores(setting: str, m: int, seed: int):
    """(scores (1, m), included (1, m), certificate) of one audit, as audit_one_run draws
    them (the same seeds)."""
    obj = gaussian() if setting == "gaussian" else dpvi(m)
    a = audit_one_run(obj, m, seed=seed)
    inc = inclusions(m, 1, seed)
    if setting == "gaussian":
        from dpclaims.audits.one_run import dirac_dataset

        data = dirac_dataset(inc[0], 1.0, "add-remove")
        scores = obj.release(data, rng_for(seed, "one-run", "run"), 1)
    else:
        scores, _ = algorithm_canary_scores(obj, inc, rng_for(seed, "one-run", "run"))
    mu = a.certificate.claim_mu
    cert = one_run_certificate(scores, inc, DELTA, ALPHA, claim_mu=mu, seed=seed)
    assert float(cert.epsilon_lower_bound()[0]) == a.epsilon_lower_bound  # the same scores
    grid = one_run_certificate(scores, inc, DELTA, ALPHA, claim_mu=mu, strategy="grid")
    return scores, inc, cert, grid, obj.claim.epsilon


def jax_privacy_bounds(scores: np.ndarray, included: np.ndarray) -> np.ndarray | None:
    """jax_privacy's (one-sided, f-DP, number of tests) per audit row (n, 3), from its own
    venv; None without it."""
    if not JAX_PYTHON.exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "scores.npz"
        np.savez(f, scores=scores, included=included)
        out = subprocess.run([str(JAX_PYTHON), "-c", JAX_SCRIPT, str(f), str(ALPHA), str(DELTA)],
                             capture_output=True, text=True, check=True)
    return np.array(json.loads(out.stdout.strip().splitlines()[-1]))


def table1(ms, seeds: int) -> None:
    print(f"Table 1: one-run bounds on the same scores, alpha {ALPHA}, delta {DELTA:g}, "
          f"{seeds} seeds (medians; min ratio over seeds)")
    head = (f"{'setting':10} {'m':>6} {'claim':>6} | {'ours 1-sided':>12} {'2-sided':>8} "
            f"{'f-DP':>8} {'certificate':>11} {'grid':>6} | {'jax 1-sided':>11} {'jax f-DP':>8} | "
            f"{'min ratio 1s':>12} {'min ratio cert':>14} | {'s ours':>6} {'s jax':>6}")
    print(head)
    print("-" * len(head))
    for setting in ("gaussian", "dp-sgd"):
        for m in ms:
            rows, scores_all, inc_all = [], [], []
            t0 = time.perf_counter()
            for seed in range(seeds):
                scores, inc, cert, grid, claim = audit_scores(setting, m, seed)
                fdp = float(cert.fdp_epsilon()[0])
                rows.append([float(cert.snj("one-sided")[0]), float(cert.snj("two-sided")[0]),
                             fdp, float(cert.epsilon_lower_bound()[0]),
                             float(grid.epsilon_lower_bound()[0])])
                scores_all.append(scores[0])
                inc_all.append(inc[0])
            t_ours = time.perf_counter() - t0
            t0 = time.perf_counter()
            theirs = jax_privacy_bounds(np.array(scores_all), np.array(inc_all))
            t_jax = time.perf_counter() - t0
            r = np.array(rows)
            med = np.median(r, axis=0)
            if theirs is None:
                j1 = jf = ratio1 = ratio_c = float("nan")
            else:
                theirs = theirs[:, :2]
                j1, jf = np.median(theirs, axis=0)
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio1 = float(np.min(r[:, 0] / theirs[:, 0]))
                    best_theirs = theirs[:, 0] if setting == "dp-sgd" else theirs.max(axis=1)
                    ratio_c = float(np.min(r[:, 3] / best_theirs))
            fdp_note = "" if setting == "gaussian" else "*"
            print(f"{setting:10} {m:>6} {claim:>6.3g} | {med[0]:>12.3f} {med[1]:>8.3f} "
                  f"{med[2]:>7.3f}{fdp_note or ' '} {med[3]:>11.3f} {med[4]:>6.3f} | "
                  f"{j1:>11.3f} {jf:>8.3f} | "
                  f"{ratio1:>12.3f} {ratio_c:>14.3f} | {t_ours:>6.1f} {t_jax:>6.1f}")
            sys.stdout.flush()
    print("* an estimate: DPVI's Poisson-subsampled claim is not Gaussian-DP, so the f-DP "
          "value is not part of the certificate (and the certificate is compared with "
          "jax_privacy's one-sided bound only)")


def table2() -> None:
    print("\nTable 2: one-run certificate against the multi-run audit on the same algorithm "
          "(seed 0)")
    head = (f"{'algorithm':34} {'claim':>6} | {'one run m=1000':>14} {'10 runs':>8} | "
            f"{'multi-run, 1e5 runs/dataset':>27} | {'s multi':>7}")
    print(head)
    print("-" * len(head))
    m = 1000
    for name, obj, multi in [
        ("gaussian eps=1", gaussian(1.0), None),
        ("gaussian eps=4", gaussian(), None),
        ("dpvi sigma=1 (correct)", dpvi(m), dpvi(m)),
        ("dpvi sigma=1, noise x0.25 (bug)", dpvi(m, noise_clip=0.25),
         dpvi(m, noise_clip=0.25)),
        ("dpvi sigma=4 (correct)", dpvi(m, 4.0), dpvi(m, 4.0)),
        ("dpvi sigma=4, noise x0.25 (bug)", dpvi(m, 4.0, noise_clip=0.25),
         dpvi(m, 4.0, noise_clip=0.25)),
    ]:
        one = audit_one_run(obj, m, seed=0).epsilon_lower_bound
        ten = (audit_one_run(obj, m, runs=10, seed=0).epsilon_lower_bound
               if multi is not None else float("nan"))
        t0 = time.perf_counter()
        if multi is None:
            res = audit(obj, add_one(np.zeros((1, 1)), np.ones(1)), 100_000, alpha=ALPHA, seed=0)
            many = res.epsilon_lower_bound
        else:
            # the multi-run audit's own single-canary algorithm: the same run without slots
            plain = DPVIRun(n_records=20, steps=10, noise_multiplier=multi.noise_multiplier,
                            sampling_rate=0.5, clip=1.0, noise_clip=multi.noise_clip)
            many = audit_whole_run(plain, 100_000, seed=0).epsilon_lower_bound
        dt = time.perf_counter() - t0
        print(f"{name:34} {obj.claim.epsilon:>6.3g} | {one:>14.3f} {ten:>8.3f} | {many:>27.3f} | "
              f"{dt:>7.1f}")
        sys.stdout.flush()


def main() -> None:
    logging.getLogger("absl").setLevel(logging.ERROR)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="m = 100 and 1,000 only")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--no-gap", action="store_true", help="skip table 2")
    p.add_argument("--gap-only", action="store_true", help="table 2 only")
    args = p.parse_args()
    if not JAX_PYTHON.exists():
        print(f"({JAX_PYTHON} not found: the jax_privacy columns are nan)")
    if not args.gap_only:
        table1((100, 1_000) if args.quick else (100, 1_000, 10_000), args.seeds)
    if not args.no_gap:
        table2()


if __name__ == "__main__":
    main()
