"""Clopper-Pearson intervals on a binomial rate: the one place the suite computes them.

Every certificate on a rate (an attack's false positive and negative rates in an
audit, a Monte Carlo tail probability, a coverage) is a Clopper-Pearson bound,
computed by statsmodels' ``proportion_confint(method="beta")``. The one-sided
upper bound alone (:func:`clopper_pearson_upper`, an audit's thousands of
candidate thresholds) evaluates the same expression statsmodels uses for its
upper end, ``scipy.stats.beta.isf(alpha, count + 1, nobs - count)`` (1 where
count = nobs), without also computing the lower end it would discard: half the
work, the same numbers (tested against statsmodels).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import beta as beta_distribution
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
    upper end of statsmodels' two-sided interval at alpha = 2 ``level_alpha``,
    ``beta.isf(level_alpha, count + 1, nobs - count)`` and 1 where count = nobs
    (module docstring).

    Returns
    -------
    ndarray of the broadcast shape (a 0-d array for scalars).
    """
    count = np.asarray(count, dtype=float)
    nobs = np.asarray(nobs, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        upper = np.asarray(beta_distribution.isf(level_alpha, count + 1, nobs - count),
                           dtype=float)
    return np.where(count == nobs, 1.0, upper)
