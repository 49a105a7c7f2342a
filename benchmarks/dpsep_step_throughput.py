"""Throughput of the DP-SEP step mechanism: vectorised release vs a per-trial loop.

Run: ``.venv/bin/python benchmarks/dpsep_step_throughput.py``. Prints a table of
trials per second and the ratio against the per-trial Python loop measured in the
same run (the baseline), and the time of a full audit at 10^6 trials per dataset.
"""

from __future__ import annotations

import time

import numpy as np

from dpclaims.algorithms.sep.likelihoods import Probit
from dpclaims.algorithms.sep.sep import DPSEPParams, run_sep
from dpclaims.algorithms.sep.step import DPSEPStep, neighbouring_datasets, worst_case_canary
from dpclaims.audits.core import audit
from dpclaims.data.datasets import load_fair
from dpclaims.papers.dpsep.checks import prior_natural


def main():
    data = load_fair()
    theta_0, _ = prior_natural(data.dim, 1.0)
    state = run_sep(data.x_train, data.y_train, Probit(), theta_0, epochs=1,
                    rng=np.random.default_rng(0)).theta_f[0]
    mech = DPSEPStep(DPSEPParams(1.0, 1.0, 1.0, "as-printed"), Probit(), state, theta_0,
                     data.n_train, index=0, delta=1e-5)
    canary = worst_case_canary(mech, data.x_train, data.y_train)
    pair = neighbouring_datasets(data.x_train, data.y_train, 0, canary)
    rng = np.random.default_rng(1)

    n_loop = 2_000
    t0 = time.perf_counter()
    for _ in range(n_loop):
        mech.release(pair.d0, rng, 1)
    loop_rate = n_loop / (time.perf_counter() - t0)

    n_vec = 1_000_000
    t0 = time.perf_counter()
    mech.release(pair.d0, rng, n_vec)
    vec_rate = n_vec / (time.perf_counter() - t0)

    t0 = time.perf_counter()
    result = audit(mech, pair, 1_000_000, seed=0)
    audit_seconds = time.perf_counter() - t0

    print(f"{'method':<34}{'trials/s':>14}{'ratio':>10}")
    print(f"{'per-trial Python loop (baseline)':<34}{loop_rate:>14.0f}{1.0:>10.1f}")
    print(f"{'vectorised release':<34}{vec_rate:>14.0f}{vec_rate / loop_rate:>10.1f}")
    print(f"audit of 10^6 trials per dataset: {audit_seconds:.1f} s "
          f"(certificate {result.epsilon_lower_bound:.4f}, claim {result.claim.epsilon:.4f})")


if __name__ == "__main__":
    main()
