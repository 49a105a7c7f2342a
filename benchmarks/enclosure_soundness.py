"""Soundness and tightness of the interval branch and bound (issue 38 item 4).

    PYTHONPATH=src python benchmarks/enclosure_soundness.py [--cases 20] [--seed 0] \
        [--max-boxes 4000] [--tol 1e-2]

Random smooth per-record contributions in 2 to 6 dimensions on [-1, 1]^d, two
families per dimension:

* ``bump``: f(x) = a exp(-s ||x - c||^2), a known supremum by construction: exactly a,
  at c (a float point of the box);
* ``tanh``: f(x) = sum_k a_k tanh(w_k . x + b_k) (k = 3), |f| maximised; its supremum is
  not known in closed form, so a very dense lower check stands in for it: 200 000
  uniform points plus the 2^d corners, then scipy's L-BFGS-B from the best 20 (every
  value is attained at a real point, so it is <= the true supremum).

For each case :func:`dpclaims.analysis.enclosures.sup_norm` runs to ``--tol`` or
``--max-boxes``; a **soundness violation** is a certified upper bound below the known
supremum (or the dense lower check), or a certified lower bound above it. The table
gives, per family and dimension, the violations (must be 0), the tightness upper /
reference (median and max), the boxes and the seconds. Exit status 1 on any violation.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from mpmath import iv
from scipy.optimize import minimize

from dpclaims.analysis import enclosures as E


def bump_case(rng, d):
    a = float(rng.uniform(0.5, 2.0))
    s = float(rng.uniform(0.5, 4.0))
    c = tuple(float(v) for v in np.round(rng.uniform(-0.9, 0.9, d), 3))

    def f(b):
        return a * E.exp(-s * sum(((b[i] - c[i]) ** 2 for i in range(d)), iv.mpf(0)))

    return f, a, f"bump a={a:.3g}"


def tanh_case(rng, d, k=3):
    w, b, a = rng.normal(size=(k, d)), rng.normal(size=k), rng.normal(size=k)

    def f(box):
        return sum((float(a[j]) * E.tanh(sum((float(w[j, i]) * box[i] for i in range(d)),
                                             iv.mpf(0)) + float(b[j])) for j in range(k)),
                   iv.mpf(0))

    def g(x):
        return np.abs(np.tanh(np.atleast_2d(x) @ w.T + b) @ a)

    x = rng.uniform(-1, 1, (200_000, d))
    corners = np.array(np.meshgrid(*[[-1.0, 1.0]] * d)).reshape(d, -1).T
    x = np.concatenate([x, corners])
    vals = g(x)
    best = float(vals.max())
    for i in np.argsort(vals)[-20:]:
        r = minimize(lambda z: -g(z)[0], x[i], bounds=[(-1, 1)] * d, method="L-BFGS-B")
        best = max(best, float(g(np.clip(r.x, -1, 1))[0]))
    return f, best, "tanh (dense lower check)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=20, help="cases per family and dimension")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-boxes", type=int, default=4000)
    ap.add_argument("--tol", type=float, default=1e-2)
    args = ap.parse_args(argv)
    print(f"# enclosure soundness: {args.cases} cases per row, tol {args.tol:g}, "
          f"max boxes {args.max_boxes}, seed {args.seed}")
    print(f"{'family':<6} {'d':>2} {'cases':>5} {'violations':>10} {'upper/ref med':>13} "
          f"{'upper/ref max':>13} {'boxes med':>9} {'budget hit':>10} {'s/case':>7}")
    total_bad = 0
    for family, make in (("bump", bump_case), ("tanh", tanh_case)):
        for d in range(2, 7):
            rng = np.random.default_rng([args.seed, d, len(family)])
            ratios, boxes, bad, budget, secs = [], [], 0, 0, 0.0
            for _ in range(args.cases):
                f, ref, _ = make(rng, d)
                t = time.perf_counter()
                r = E.sup_norm(f, E.Domain.box([-1] * d, [1] * d), tol=args.tol,
                               max_boxes=args.max_boxes)
                secs += time.perf_counter() - t
                if r.upper < ref or (family == "bump" and r.lower > ref):
                    bad += 1
                ratios.append(r.upper / ref)
                boxes.append(r.boxes)
                budget += r.stopped == "box budget"
            total_bad += bad
            print(f"{family:<6} {d:>2} {args.cases:>5} {bad:>10} {np.median(ratios):>13.4f} "
                  f"{max(ratios):>13.4f} {int(np.median(boxes)):>9} {budget:>10} "
                  f"{secs / args.cases:>7.2f}")
    print(f"# soundness violations: {total_bad}")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
