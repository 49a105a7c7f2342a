"""Paired tests over seeds: the exact one-sided sign test that decides the papers'
comparative statements ("method A beats method B") from paired runs.

This module computes the tests' p-values only; the verdict kernel
(:func:`dpclaims.claims.kernel.decide_by_tests`) turns them into ``holds`` /
``refuted`` / ``inconclusive`` at a stated level, each wrong decision having
probability at most that level under no difference.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

LEVEL = 0.05          # one-sided sign test, per verdict


def min_pairs(level: float = LEVEL) -> int:
    """Fewest untied pairs with which a one-sided sign test can reach ``level``."""
    return math.ceil(math.log(level) / math.log(0.5))


def sign_test(differences) -> dict:
    """Exact one-sided sign tests on paired differences d (ties d = 0 dropped).

    Returns the counts and ``p_stated_direction`` = P(Binom(n, 1/2) >= #{d > 0}),
    ``p_opposite_direction`` = the same for #{d < 0} (scipy.stats.binomtest), with n
    the untied pairs (p = 1 when n = 0).
    """
    d = np.asarray(differences, dtype=float).ravel()
    n_pos, n_neg = int((d > 0).sum()), int((d < 0).sum())
    n = n_pos + n_neg
    p_s = stats.binomtest(n_pos, n, 0.5, alternative="greater").pvalue if n else 1.0
    p_o = stats.binomtest(n_neg, n, 0.5, alternative="greater").pvalue if n else 1.0
    return {"n_pairs": int(d.size), "n_in_stated_direction": n_pos, "n_opposite": n_neg,
            "n_ties": int(d.size - n), "p_stated_direction": float(p_s),
            "p_opposite_direction": float(p_o)}


def paired_comparison(better, worse, level: float = LEVEL) -> dict:
    """The tests of "``better`` has lower perplexity than ``worse``" over paired seeds.

    Exact one-sided sign tests on d_i = worse_i - better_i (ties dropped):
    ``p_stated_direction`` = P(Binom(n, 1/2) >= #{d_i > 0}) (its rejection supports the
    statement), ``p_opposite_direction`` the same for #{d_i < 0} (its rejection refutes
    it). The one-sided paired t-test p-value is reported, not used.

    Parameters
    ----------
    better, worse : array_like, shape (n,)
        Perplexities per seed of the method the statement says is better, and of the other.
    level : float
        The level the caller decides at (recorded with ``min_pairs_for_level``).

    Returns
    -------
    dict (JSON-able)

    Raises
    ------
    ValueError
        Empty or non-finite inputs.
    """
    b = np.asarray(better, dtype=float).ravel()
    w = np.broadcast_to(np.asarray(worse, dtype=float), b.shape).ravel()
    if b.size == 0 or not (np.isfinite(b).all() and np.isfinite(w).all()):
        raise ValueError("better and worse must be non-empty finite arrays of one length")
    d = w - b
    st = sign_test(d)
    t_p = None
    if d.size >= 2 and np.std(d) > 0:
        t_p = float(stats.ttest_1samp(d, 0.0, alternative="greater").pvalue)
    return {
        "test": "exact one-sided sign test over seeds (ties dropped)", "level": level,
        **st, "min_pairs_for_level": min_pairs(level),
        "paired_t_p_stated_direction": t_p,
        "mean_better": float(b.mean()), "mean_worse": float(w.mean()),
        "relative_gap": float((w.mean() - b.mean()) / w.mean()),
    }
