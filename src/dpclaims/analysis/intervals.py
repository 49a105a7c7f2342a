"""Clopper-Pearson intervals on a binomial rate: the one place the suite computes them.

Every certificate on a rate (an attack's false positive and negative rates in an
audit, a Monte Carlo tail probability, a coverage) is a Clopper-Pearson bound,
computed by statsmodels' ``proportion_confint(method="beta")``.
"""

from __future__ import annotations

import numpy as np
from statsmodels.stats.proportion import proportion_confint


def clopper_pearson(count, nobs, alpha: float) -> np.ndarray:
    """Two-sided Clopper-Pearson intervals at level 1 - ``alpha``.

    Parameters
    ----------
    count : array_like
        Successes (any shape).
    nobs : int
        Trials; 0 gives the uninformative [0, 1] (e.g. an empty conditioning event).
    alpha : float
        Two-sided significance in (0, 1).

    Returns
    -------
    ndarray of shape ``count.shape + (2,)``: the lower and upper ends.
    """
    count = np.asarray(count)
    if np.all(np.asarray(nobs) == 0):
        return np.tile([0.0, 1.0], count.shape + (1,))
    low, high = proportion_confint(count, nobs, alpha=alpha, method="beta")
    return np.stack([np.nan_to_num(low, nan=0.0), np.nan_to_num(high, nan=1.0)], axis=-1)


def clopper_pearson_upper(count, nobs, level_alpha: float) -> np.ndarray:
    """One-sided (1 - ``level_alpha``) Clopper-Pearson upper bound on a binomial rate.

    ``count`` and ``nobs`` broadcast (counts may be non-integer when projected); the
    upper end of the two-sided interval at alpha = 2 ``level_alpha``.
    """
    _, upper = proportion_confint(np.asarray(count), np.asarray(nobs),
                                  alpha=2 * level_alpha, method="beta")
    return np.asarray(upper, dtype=float)
