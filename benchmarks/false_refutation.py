"""False refutations: how often the audit refutes a true claim (must be <= alpha).

Run: ``.venv/bin/python benchmarks/false_refutation.py [--audits 300] [--trials 20000]
[--processes 2] [--threshold split|rank|auto] [--json F]``.

Each audit j = 0, 1, ... is one independent run of what ``dpclaims check-variant``
does for its empirical-audit claim, with root seed j:

* the mechanism: correct zoo mechanisms (:mod:`dpclaims.mechanisms`) in turn:
  ``gaussian_replace_one`` (claim = its exact epsilon, Balle & Wang 2018),
  ``laplace`` and ``noisy_histogram`` (claim = exact epsilon 1: the privacy loss
  attains 1 on a half-line), ``report_noisy_max_index`` and ``svt_alg1`` (claims
  proved by Dwork & Roth and by Lyu et al., not known to be attained: a sound audit
  refutes them even less often);
* the score: ``auto``, ``fisher``, ``likelihood-ratio``, ``logistic``,
  ``gradient-boosting`` in turn (the cycles of 5 mechanisms and 5 scores give all
  25 combinations every 25 audits);
* the pair: searched (:func:`dpclaims.audits.candidate_pairs`, 4 random domain
  pairs) and selected by pilot audits on trials of their own
  (:func:`dpclaims.audits.select_pair`, ``--pilot`` outputs per dataset), then
  the certificate on fresh trials (``--trials`` per dataset) at alpha = 0.05.

With ``--threshold rank`` the certificate uses :class:`~dpclaims.audits.core.RankThreshold`,
which needs a claim with delta > 0, so the mechanisms are the two correct ones whose
claims have delta > 0: ``gaussian_replace_one`` and :class:`RandomisedResponseDelta`,
randomised response whose privacy curve is exactly its (1, 1e-3) claim (tight at
every threshold, the hardest case for soundness); the scores cycle as above. With
``--threshold auto`` (:class:`~dpclaims.audits.thresholds_auto.AutoThreshold`) the same
two: on a pure-DP claim that design is the split's, so only claims with delta > 0
test anything new.

It prints the number of refutations, their rate and its two-sided 95 %
Clopper-Pearson interval (statsmodels ``proportion_confint(method="beta")``), per
mechanism and per score, and overall; the requirement is a rate <= alpha, shown by
the interval's upper end below 0.1. With ``--json`` the per-audit rows are written.
Audits run in ``--processes`` worker processes; each audit's numbers depend only on
its seed.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from dpclaims.audits import PrivacyClaim, audit, candidate_pairs, replace_one, select_pair
from dpclaims.audits.search import derived_seed
from dpclaims.mechanisms import ZOO

ALPHA = 0.05
MECHANISMS = ("gaussian_replace_one", "laplace", "noisy_histogram", "report_noisy_max_index",
              "svt_alg1")
SCORES = ("auto", "fisher", "likelihood-ratio", "logistic", "gradient-boosting")


@dataclass(frozen=True)
class RandomisedResponseDelta:
    """Randomised response on record 0's bit b with a delta of its own: with probability
    ``delta`` the output is 2 + b (b revealed), otherwise b with probability
    e^eps / (1 + e^eps) and 1 - b else. Its hockey-stick divergence at eps is exactly
    delta in both directions, so the (eps, delta) claim is tight (Kairouz, Oh &
    Viswanath 2015). Replace-one; outputs (n, 1)."""

    eps: float = 1.0
    delta: float = 1e-3
    name: str = "randomised-response-delta"

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.eps, self.delta, "replace-one")

    def neighbouring_pairs(self):
        return [replace_one(np.zeros(3), 0, 1.0)]

    def release(self, data, rng, n: int) -> np.ndarray:
        b = float(np.asarray(data, dtype=float)[0])
        u, v = rng.random(n), rng.random(n)
        keep = v < math.exp(self.eps) / (1 + math.exp(self.eps))
        rr = np.where(keep, b, 1.0 - b)
        return np.where(u < self.delta, 2.0 + b, rr)[:, None]


MECHANISMS_RANK = ("gaussian_replace_one", "randomised_response_delta")
FACTORIES = dict(ZOO, randomised_response_delta=RandomisedResponseDelta)


def one_audit(args) -> dict:
    """Audit j: (j, trials, pilot, threshold) -> a row with the certificate and whether it
    refutes."""
    j, trials, pilot, threshold = args
    names = MECHANISMS_RANK if threshold in ("rank", "auto") else MECHANISMS
    name = names[j % len(names)]
    score = SCORES[(j // len(names)) % len(SCORES)]
    mech = FACTORIES[name]()
    s = None if score == "auto" else score
    pairs = candidate_pairs(mech, seed=derived_seed(j, 6), n_random=4)
    sel = select_pair(mech, pairs, pilot, alpha=ALPHA, score=s, seed=j)
    r = audit(mech, sel.pair, trials, alpha=ALPHA, score=s, seed=j, threshold=threshold)
    return {"seed": j, "mechanism": name, "score": score, "score_used": r.score_name,
            "pair": sel.pair.description, "claim": mech.claim.epsilon,
            "certificate": r.epsilon_lower_bound, "refuted": bool(r.refutes_claim)}


def summary(rows, key=None) -> list[tuple[str, int, int, float, float, float]]:
    groups = {}
    for r in rows:
        groups.setdefault("all" if key is None else r[key], []).append(r["refuted"])
    out = []
    for g, flags in groups.items():
        k, n = sum(flags), len(flags)
        lo, hi = proportion_confint(k, n, alpha=0.05, method="beta")
        out.append((g, k, n, k / n, float(lo), float(hi)))
    return out


def run(n_audits: int, trials: int, pilot: int, processes: int,
        threshold: str = "split") -> list[dict]:
    tasks = [(j, trials, pilot, threshold) for j in range(n_audits)]
    if processes > 1:
        with ProcessPoolExecutor(processes) as pool:
            return list(pool.map(one_audit, tasks))
    return [one_audit(t) for t in tasks]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--audits", type=int, default=300)
    ap.add_argument("--trials", type=int, default=20_000)
    ap.add_argument("--pilot", type=int, default=2_000)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--threshold", choices=("split", "rank", "auto"), default="split")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = run(args.audits, args.trials, args.pilot, args.processes, args.threshold)
    print(f"{args.audits} audits, {args.trials} trials per dataset, pilot {args.pilot}, "
          f"threshold {args.threshold}, alpha {ALPHA}, {time.perf_counter() - t0:.0f} s\n")
    print(f"{'group':28s} {'refuted':>8s} {'audits':>7s} {'rate':>7s}  95% CP interval")
    for key in ("mechanism", "score", None):
        for g, k, n, rate, lo, hi in summary(rows, key):
            print(f"{g:28s} {k:8d} {n:7d} {rate:7.3f}  [{lo:.3f}, {hi:.3f}]")
    _, k, n, rate, lo, hi = summary(rows)[0]
    ok = hi < 0.1
    print(f"\nrequirement (rate <= alpha, CP upper end < 0.1): {'met' if ok else 'NOT met'}")
    result = {"audits": n, "refuted": k, "rate": rate, "cp_low": lo, "cp_high": hi,
              "requirement_met": ok, "rows": rows}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()
