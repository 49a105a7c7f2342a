"""One-run audits of the d3p example (issue 42): certificates against the claims.

For ``correct``, ``planted_bug`` and ``d3p_own_claim``, :func:`dpclaims.audits.one_run.
audit_one_run` with m Dirac gradient canaries per run (``d3p_dpvi.dpvi.train_slots``: the
canaries join each step with probability B / N beside d3p's fixed-size batches) and R
runs pooled, at each seed; one line per (variant, m, R): the claim, the certificate at
each seed (95 %, finite-sample), how many seeds refute the claim, and the median wall
time of one audit once compiled (the first call of each variant, which compiles, is
timed apart). A chunk is 10 runs (``canary_chunk``), so R = 1 costs one chunk as R = 10
does.

``nice .venv-d3p/bin/python examples/d3p_dpvi/benchmarks/one_run.py [--seeds 0 1 ...]
[--m 1000 2000] [--runs 1 10]``
"""

import argparse
import os
import statistics
import time

import d3p_dpvi

from dpclaims.audits.one_run import audit_one_run

CASES = (("correct", d3p_dpvi.correct), ("planted_bug", d3p_dpvi.planted_bug),
         ("d3p_own_claim", d3p_dpvi.d3p_own_claim))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    ap.add_argument("--m", type=int, nargs="+", default=[1000, 2000])
    ap.add_argument("--runs", type=int, nargs="+", default=[1, 10])
    args = ap.parse_args()
    print(f"load average at start {os.getloadavg()}", flush=True)
    print("| variant | claim (relation) | m | R | certificates, seeds "
          f"{args.seeds[0]}-{args.seeds[-1]} | refuted | s per audit |")
    print("|---|---|---|---|---|---|---|")
    for label, factory in CASES:
        alg = factory()
        t = time.perf_counter()
        audit_one_run(alg, args.m[0], runs=1, seed=args.seeds[0])
        first = time.perf_counter() - t
        for m in args.m:
            for runs in args.runs:
                certs, times = [], []
                for seed in args.seeds:
                    t = time.perf_counter()
                    a = audit_one_run(alg, m, runs=runs, seed=seed)
                    times.append(time.perf_counter() - t)
                    certs.append(a.epsilon_lower_bound)
                refuted = sum(c > alg.claim.epsilon for c in certs)
                print(f"| {label} | {alg.claim.epsilon:.4g} ({alg.claim.relation}) | {m} | "
                      f"{runs} | {' '.join(f'{c:.2f}' for c in certs)} | "
                      f"{refuted}/{len(certs)} | {statistics.median(times):.1f} |", flush=True)
        print(f"({label}: first audit, with the compile, {first:.1f} s)", flush=True)
    print(f"load average at end {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
