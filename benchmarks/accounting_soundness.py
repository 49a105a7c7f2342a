"""Soundness of the accounting verdicts in both directions (issue 21).

    python benchmarks/accounting_soundness.py [--settings 50] [--workers 2] [--seed 0]

Fifty DP-SGD settings drawn with a fixed seed (dataset size, batch size, noise
multiplier, epochs, delta), spread over three samplings (Poisson; a shuffled pass whose
order the adversary knows, ``fixed-order``; a hidden shuffle) and both neighbouring
relations. For each, a reference bracket on the true epsilon is computed apart from the
check: the pessimistic PLD (an upper bound) and the optimistic PLD refined until it is
within 0.1 % of it or the grid cap stops it (a lower bound); for a known order the exact
Gaussian composition; for a hidden shuffle only the upper end exists. Claims at 0.90,
0.97, 0.99, 1.00, 1.01 and 1.10 times the reference value (the pessimistic PLD, or the
exact value) are printed to four significant digits and checked through the claims-file
path (:func:`dpclaims.claims.checks.privacy_numbers.check_reported`), as ``dpclaims
check`` does.

Two failures are counted, each a soundness violation:

* a claim whose largest reading (its printed precision) lies below the reference lower
  bound (so below the true epsilon) that *holds*;
* a claim at or above the reference upper bound (so at or above the true epsilon) that
  is *refuted*.

The table gives the verdicts per sampling and factor. Exit status 1 on any violation.
The figures are a run's, with the load average printed beside them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

FACTORS = (0.90, 0.97, 0.99, 1.00, 1.01, 1.10)
FAMILIES = ("poisson", "fixed-order", "shuffle")


@dataclass(frozen=True)
class Setting:
    index: int
    family: str
    relation: str
    n: int
    batch: int
    sigma: float
    epochs: int
    delta: float


def settings(count: int, seed: int) -> list[Setting]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = int(rng.choice([10_000, 50_000, 60_000, 100_000]))
        out.append(Setting(
            index=i, family=FAMILIES[i % 3], relation=("add-remove", "replace-one")[(i // 3) % 2],
            n=n, batch=int(rng.choice([64, 128, 256, 512, 1024])),
            sigma=round(float(rng.uniform(0.7, 3.0)), 2),
            epochs=int(rng.choice([1, 5, 10, 20, 40])),
            delta=float(rng.choice([1e-5, 1e-6]))))
    return out


def _printed(x: float) -> str:
    return f"{x:.4g}"


def run_setting(s: Setting) -> list[dict]:
    from dataclasses import replace

    from absl import logging as absl_logging  # dp_accounting's RDP warns per order

    absl_logging.set_verbosity(absl_logging.ERROR)

    from dpclaims.analysis import accounting as acc
    from dpclaims.analysis.validation import steps_for_epochs
    from dpclaims.claims.checks.privacy_numbers import check_reported
    from dpclaims.claims.kernel import Claimed
    from dpclaims.papers.vips.privacy_numbers import ENTRIES as REPORTED

    steps, _ = steps_for_epochs(s.epochs, s.n, s.batch)
    plan = acc.Sampling(s.family, s.n, s.batch, steps=steps)
    ref = acc.account(s.sigma, plan, s.delta, s.relation)
    if s.family == "poisson":
        up = ref.row("dp_accounting-pld").epsilon
        ref = acc.refine_lower_bound(ref, up * (1 - 1e-3), max_halvings=16)
        tight = up
    else:
        tight = ref.row("analytic-gaussian").epsilon
    lower = ref.lower_bound[1] if ref.lower_bound else None
    upper = ref.upper_bound[1]
    base = replace(REPORTED[0], id=f"bench/{s.index}", deltas=(s.delta,), delta_stated=True,
                   noise_multipliers=(s.sigma,), sigma_stated=True, dataset_size=s.n,
                   batch_size=s.batch, steps=(steps,), steps_stated=True,
                   paper_sampling=s.family, paper_relation=s.relation,
                   real_sampling=s.family, paper_accounting="stated")
    rows = []
    for f in FACTORS:
        text = _printed(f * tight)
        entry = replace(base, reported_epsilon=float(text), reported_epsilon_text=text)
        t0 = time.perf_counter()
        [v] = check_reported(entry)
        seconds = time.perf_counter() - t0
        claimed = Claimed("epsilon", float(text), printed=text)
        false_holds = v.verdict == "holds" and lower is not None and claimed.high < lower
        false_refuted = v.verdict == "refuted" and claimed.value >= upper
        rows.append({"setting": s, "factor": f, "claim": text, "verdict": v.verdict,
                     "ref_lower": lower, "ref_upper": upper, "seconds": seconds,
                     "violation": false_holds or false_refuted,
                     "kind": "false holds" if false_holds else
                             "false refuted" if false_refuted else ""})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--settings", type=int, default=50)
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        results = [r for rows in pool.map(run_setting, settings(args.settings, args.seed))
                   for r in rows]
    wall = time.perf_counter() - t0
    print(f"{args.settings} settings x {len(FACTORS)} claims, {args.workers} workers, "
          f"{wall:.0f} s; load average {load0:.2f} before, {os.getloadavg()[0]:.2f} after\n")
    print("| sampling | relation | " + " | ".join(f"{f:.2f} x" for f in FACTORS) + " |")
    print("|---|---|" + "---|" * len(FACTORS))
    for fam in FAMILIES:
        for rel in ("add-remove", "replace-one"):
            cells = []
            for f in FACTORS:
                vs = [r["verdict"] for r in results if r["setting"].family == fam
                      and r["setting"].relation == rel and r["factor"] == f]
                if not vs:
                    continue
                cells.append(" ".join(f"{vs.count(k)}{k[0].upper()}"
                                      for k in ("holds", "refuted", "inconclusive")
                                      if vs.count(k)))
            if cells:
                print(f"| {fam} | {rel} | " + " | ".join(cells) + " |")
    print("\nH holds, R refuted, I inconclusive (counts of settings).")
    bad = [r for r in results if r["violation"]]
    widths = [(r["ref_upper"] - r["ref_lower"]) / r["ref_upper"] for r in results
              if r["ref_lower"] is not None and r["factor"] == 1.0]
    print(f"reference bracket width (where a lower end exists): median "
          f"{np.median(widths):.2%}, max {np.max(widths):.2%}")
    print(f"slowest check: {max(r['seconds'] for r in results):.1f} s; median "
          f"{np.median([r['seconds'] for r in results]):.1f} s")
    print(f"soundness violations: {len(bad)}")
    for r in bad:
        print(f"  {r['kind']}: {r['setting']} claim {r['claim']} -> {r['verdict']} "
              f"(reference [{r['ref_lower']}, {r['ref_upper']}])")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
