"""False refutations of correct whole-run algorithms with the adversarial dataset search.

Run: ``.venv/bin/python benchmarks/whole_run_false_refutation.py [--audits 100]
[--runs 5000] [--pilot 1000] [--processes 1] [--json F]``; the d3p example's correct
configuration (``examples/d3p_dpvi``, d3p 0.2.0's DPSVI through the JAX adapter) in its
own venv: ``.venv-d3p/bin/python benchmarks/whole_run_false_refutation.py --d3p``
(every audit of that run is of ``d3p_dpvi.correct``; ``make test-d3p`` builds the venv).

Audit j = 0, 1, ... is one independent run of what ``dpclaims check-variant`` does for
a whole-run claim, with root seed j: the correct whole-run algorithms of
``examples/algorithms.py`` in turn (``dpvi_aligned``, ``dpvi_vanilla``, ``dpvi_natural``,
``dpvi_aligned_final``, ``dpsep_as_printed``, ``vips_wor``), each audited by
:func:`dpclaims.audits.adversarial.audit_whole_run_searched`: the candidate datasets
(quiet, aligned against, aligned with, duplicated canary, batch-boundary sizes where a
batch size is declared) selected by pilot audits of ``--pilot`` runs per dataset on
seeds of their own, the full-trace statistic chosen on the training split, then the
certificate on ``--runs`` fresh runs per dataset at alpha = 0.05.

It prints the refutations per algorithm and overall, the rate and its two-sided 95 %
Clopper-Pearson interval (statsmodels ``proportion_confint(method="beta")``); the
requirement is a rate <= alpha, which the data support when the interval's lower end is
at most alpha (and show when its upper end is below 0.1).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from statsmodels.stats.proportion import proportion_confint

from dpclaims.audits.adversarial import audit_whole_run_searched

ALPHA = 0.05
CORRECT = ("dpvi_aligned", "dpvi_vanilla", "dpvi_natural", "dpvi_aligned_final",
           "dpsep_as_printed", "vips_wor")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "algorithms.py"


def _examples():
    spec = importlib.util.spec_from_file_location("dpclaims_examples_algorithms", EXAMPLES)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_ALGORITHMS: dict = {}  # one object per name and process: a JAX object compiles once


def _algorithm(name: str):
    if name not in _ALGORITHMS:
        if name == "d3p_correct":
            import d3p_dpvi  # only in .venv-d3p

            # chunks of 1,024 runs: the search's pilots are 1,000 runs per dataset, and
            # every compiled call computes a whole chunk
            _ALGORITHMS[name] = d3p_dpvi.correct(chunk=1024)
        else:
            _ALGORITHMS[name] = getattr(_examples(), name)()
    return _ALGORITHMS[name]


def one_audit(args) -> dict:
    j, runs, pilot, names = args
    name = names[j % len(names)]
    alg = _algorithm(name)
    t0 = time.perf_counter()
    w = audit_whole_run_searched(alg, runs, pilot, alpha=ALPHA, seed=j)
    return {"seed": j, "algorithm": name, "claim": alg.claim.epsilon,
            "certificate": w.epsilon_lower_bound, "refuted": bool(w.refutes_claim),
            "dataset": w.dataset, "statistic": w.trace_statistic or w.statistic,
            "seconds": time.perf_counter() - t0}


def summary(rows, key=None):
    groups = {}
    for r in rows:
        groups.setdefault("all" if key is None else r[key], []).append(r["refuted"])
    out = []
    for g, flags in groups.items():
        k, n = sum(flags), len(flags)
        lo, hi = proportion_confint(k, n, alpha=0.05, method="beta")
        out.append((g, k, n, k / n, float(lo), float(hi)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--audits", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5_000)
    ap.add_argument("--pilot", type=int, default=1_000)
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument("--d3p", action="store_true",
                    help="audit the d3p example's correct configuration (in .venv-d3p)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    names = ("d3p_correct",) if args.d3p else CORRECT
    print(f"load average at start {os.getloadavg()}", flush=True)
    tasks = [(j, args.runs, args.pilot, names) for j in range(args.audits)]
    if args.processes > 1:
        # spawned, never forked: the d3p audits run JAX, whose threads a fork would copy
        with ProcessPoolExecutor(args.processes, mp_context=get_context("spawn")) as pool:
            rows = list(pool.map(one_audit, tasks))
    else:
        rows = []
        for t in tasks:
            rows.append(one_audit(t))
            if len(rows) % 10 == 0:
                print(f"  {len(rows)} audits, {sum(r['refuted'] for r in rows)} refuted, "
                      f"{time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.1f}",
                      flush=True)
    print(f"load average at end {os.getloadavg()}", flush=True)
    print(f"{args.audits} audits, {args.runs} runs per dataset, pilot {args.pilot}, alpha "
          f"{ALPHA}, {time.perf_counter() - t0:.0f} s\n")
    print(f"{'group':24s} {'refuted':>8s} {'audits':>7s} {'rate':>7s}  95% CP interval")
    for key in ("algorithm", None):
        for g, k, n, rate, lo, hi in summary(rows, key):
            print(f"{g:24s} {k:8d} {n:7d} {rate:7.3f}  [{lo:.3f}, {hi:.3f}]")
    chosen = {}
    for r in rows:
        chosen[(r["algorithm"], r["dataset"], r["statistic"])] = chosen.get(
            (r["algorithm"], r["dataset"], r["statistic"]), 0) + 1
    print("\nchosen (algorithm, dataset, statistic): audits")
    for k, v in sorted(chosen.items()):
        print(f"  {k}: {v}")
    _, k, n, rate, lo, hi = summary(rows)[0]
    print(f"\nrate {rate:.3f}, 95% CP interval [{lo:.3f}, {hi:.3f}] against alpha {ALPHA}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"audits": n, "refuted": k, "rate": rate, "cp_low": lo, "cp_high": hi,
                       "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
