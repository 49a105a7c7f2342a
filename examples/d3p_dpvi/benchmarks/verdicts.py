"""The d3p example's whole-run audit verdicts at the default budget, seeds 0-4.

Issue 40's criterion: ``check-variant`` refutes ``planted_bug`` and ``d3p_own_claim`` (on
the adversarial dataset the audit's search finds) and does not refute ``correct``
(default budget, seeds 0-4). Runs ``check_variant`` with ``VariantBudget()`` (200,000 runs
per dataset, pilots of 20,000) on each variant's own data and prints one line each: the
whole-run audit's verdict, the certificate, the dataset the search chose and the wall
time. ``taskset -c 1 .venv-d3p/bin/python
examples/d3p_dpvi/benchmarks/verdicts.py [--seeds 0 1 2 3 4]``; about 2 min per line on
one loaded core.
"""

import argparse
import os
import time

import d3p_dpvi

from dpclaims.claims.budgets import VariantBudget
from dpclaims.claims.checks.variant import check_variant

CASES = (("correct", d3p_dpvi.correct, None),
         ("planted_bug", d3p_dpvi.planted_bug, None),
         ("d3p_own_claim", d3p_dpvi.d3p_own_claim, None))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = ap.parse_args()
    print(f"load average at start {os.getloadavg()}", flush=True)
    algs = [(label, factory(None if data is None else data())) for label, factory, data in CASES]
    for seed in args.seeds:
        for label, alg in algs:
            t = time.perf_counter()
            verdicts, _, _ = check_variant(alg, VariantBudget(), seed)
            v = next(v for v in verdicts if v.claim.id.endswith("/whole-run-audit"))
            cert = v.evidence.get("audit", {}).get("epsilon_lower_bound")
            chosen = (v.evidence.get("dataset_search") or {}).get("selected", "-")
            print(f"seed {seed} | {label} | claim {alg.claim.epsilon:.4g} "
                  f"({alg.claim.relation}) | {v.verdict} | certificate {cert} | "
                  f"dataset {chosen} | {time.perf_counter() - t:.0f} s", flush=True)
    print(f"load average at end {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
