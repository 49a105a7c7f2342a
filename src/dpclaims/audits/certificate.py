"""The certificate and the estimates, computed from the held-out scores.

The statistics of an audit (:func:`dpclaims.audits.core.audit`, whose module docstring
states the certificate and the estimates with their references), and
:class:`Certificate`, the value the audit's last phase computes them from: the held-out
scores, the threshold(s) a strategy fixed before they were seen
(:mod:`dpclaims.audits.thresholds`), the error counts there, alpha, delta and the
strategy's record of how it chose. Its methods give the epsilon lower bound (the
certificate), the Clopper-Pearson bounds it rests on, and the estimates: the GDP mu
and its epsilon, the Bayesian credible bound, the AUROC and the trade-off curve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import dp_accounting
import numpy as np
from scipy.stats import norm as _normal

from dpclaims.analysis.intervals import clopper_pearson_upper
from dpclaims.analysis.validation import check_delta, check_probability
from dpclaims.audits.scores import _in_threads

# --------------------------------------------------------------------------- statistics


def epsilon_from_rates(fpr, fnr, delta: float) -> np.ndarray:
    """max(0, log((1-delta-FNR)/FPR), log((1-delta-FPR)/FNR)), elementwise (nats)."""
    fpr, fnr = np.asarray(fpr, float), np.asarray(fnr, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(np.clip(1 - delta - fnr, 0, None) / fpr)
        b = np.log(np.clip(1 - delta - fpr, 0, None) / fnr)
    return np.maximum(0.0, np.nan_to_num(np.maximum(a, b), nan=0.0, neginf=0.0))


def epsilon_lower_bound(fp, n_negative, fn, n_positive, delta: float, alpha: float, *,
                        threads: bool = False):
    """Certified epsilon lower bound from attack error counts (module docstring).

    Parameters
    ----------
    fp, fn : int or array
        False positives among ``n_negative`` outputs of D0; false negatives among
        ``n_positive`` outputs of D1 (arrays broadcast: one bound per threshold).
    delta : float
        The claim's delta, in [0, 1).
    alpha : float
        Significance of this one bound, in (0, 1); alpha/2 per error rate.
    threads : bool, default False
        Compute the two rates' bounds in two threads (the same values; for many
        thresholds at once).

    Returns
    -------
    float or ndarray
        epsilon_lb >= 0 (nats).

    Raises
    ------
    ValueError
        delta outside [0, 1) or alpha outside (0, 1).
    """
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    fpr_u, fnr_u = _in_threads([lambda: clopper_pearson_upper(fp, n_negative, alpha / 2),
                                lambda: clopper_pearson_upper(fn, n_positive, alpha / 2)],
                               threads)
    out = epsilon_from_rates(fpr_u, fnr_u, delta)
    return float(out) if np.ndim(out) == 0 else out


def auroc(scores0, scores1, *, presorted: bool = False) -> float:
    """Area under the ROC curve of "guess D1 when the score is high".

    P(score1 > score0) + P(tie) / 2 (the Mann-Whitney U statistic over n0 n1),
    counted by binary search in the sorted scores0: O((n0 + n1) log(n0 + n1)). The
    queries are sorted too: the sum does not depend on their order, and binary searches
    in order walk memory in order (17x faster at 5e6 scores each than unsorted queries,
    measured for issue 23). ``presorted``: both arrays are sorted ascending already.
    """
    s0, s1 = _sorted_pair(scores0, scores1, presorted)
    below = np.searchsorted(s0, s1, side="left")
    ties = np.searchsorted(s0, s1, side="right") - below
    return float((below.sum() + 0.5 * ties.sum()) / (len(s0) * len(s1)))


def error_counts(sorted0: np.ndarray, sorted1: np.ndarray, thresholds) -> tuple:
    """(fp, fn) of "guess D1 when score > t" for each t, from sorted scores."""
    t = np.asarray(thresholds, float)
    fp = len(sorted0) - np.searchsorted(sorted0, t, side="right")
    fn = np.searchsorted(sorted1, t, side="right")
    return fp, fn


def _sorted_pair(scores0, scores1, presorted: bool):
    s0, s1 = np.asarray(scores0, dtype=float), np.asarray(scores1, dtype=float)
    return (s0, s1) if presorted else _sort_pair(s0, s1, threads=False)


def _sort_pair(s0: np.ndarray, s1: np.ndarray, threads: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(np.sort(s0), np.sort(s1))``, in two threads with ``threads``."""
    a, b = _in_threads([lambda: np.sort(s0), lambda: np.sort(s1)], threads)
    return a, b


def _pooled(s0: np.ndarray, s1: np.ndarray) -> np.ndarray:
    """The pooled scores, sorted, from two sorted arrays: merged by a stable sort
    (timsort: linear on two sorted runs)."""
    return np.sort(np.concatenate([s0, s1]), kind="stable")


def _pooled_quantiles(s0: np.ndarray, s1: np.ndarray, probs: np.ndarray,
                      pooled: np.ndarray | None = None) -> np.ndarray:
    """``np.quantile`` of the pooled scores from two sorted arrays (``pooled``: their
    merge, :func:`_pooled`, when already computed): the quantiles of a sorted array need
    no partition of the unsorted pool (the same numbers: a quantile does not depend on
    the order of its input)."""
    return np.quantile(_pooled(s0, s1) if pooled is None else pooled, probs)


def tradeoff_curve(scores0, scores1, n_points: int = 101, *, presorted: bool = False,
                   pooled: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Empirical trade-off points (FPR, FNR) at ``n_points`` quantiles of the pooled scores
    (``presorted``: both arrays are sorted ascending already; ``pooled``: with
    ``presorted``, both merged and sorted, when the caller has them)."""
    s0, s1 = _sorted_pair(scores0, scores1, presorted)
    t = _pooled_quantiles(s0, s1, np.linspace(0, 1, n_points), pooled if presorted else None)
    t = np.concatenate([[-np.inf], t])
    fp, fn = error_counts(s0, s1, t)
    return fp / len(s0), fn / len(s1)


def gdp_mu_estimate(scores0, scores1, min_count: int = 20, n_thresholds: int = 999, *,
                    presorted: bool = False, pooled: np.ndarray | None = None) -> float | None:
    """Gaussian-DP mu fitted to the empirical trade-off (an estimate).

    At ``n_thresholds`` quantiles of the pooled scores, every threshold whose
    four counts (fp, tn, fn, tp) are all >= ``min_count`` gives
    mu_t = Phi^-1(1 - FPR_t) - Phi^-1(FNR_t), exact for a mu-GDP trade-off
    (Dong, Roth, Su 2022, Def. 2.7); the estimate is their median. None when no
    threshold qualifies (e.g. perfect separation). ``presorted``: both arrays are sorted
    ascending already; ``pooled``: with ``presorted``, both merged and sorted.
    """
    s0, s1 = _sorted_pair(scores0, scores1, presorted)
    n0, n1 = len(s0), len(s1)
    t = np.unique(_pooled_quantiles(s0, s1, np.linspace(0, 1, n_thresholds + 2)[1:-1],
                                    pooled if presorted else None))
    fp, fn = error_counts(s0, s1, t)
    ok = (fp >= min_count) & (n0 - fp >= min_count) & (fn >= min_count) & (n1 - fn >= min_count)
    if not ok.any():
        return None
    mu = _normal.isf(fp[ok] / n0) - _normal.ppf(fn[ok] / n1)
    return float(max(0.0, np.median(mu)))


def epsilon_from_gdp(mu: float | None, delta: float) -> float | None:
    """Epsilon of a mu-GDP mechanism at ``delta`` (exact; Dong, Roth, Su 2022, Cor. 2.13)."""
    if mu is None:
        return None
    if mu <= 0:
        return 0.0
    if delta == 0:
        return math.inf
    return float(dp_accounting.get_epsilon_gaussian(1.0 / mu, delta))


def credible_lower_bound(fp: int, n0: int, fn: int, n1: int, *, delta: float, level: float,
                         n_samples: int, rng: np.random.Generator) -> float:
    """Bayesian one-sided credible lower bound on epsilon at ``level`` (an estimate).

    FPR ~ Beta(fp + 1/2, n0 - fp + 1/2) and FNR ~ Beta(fn + 1/2, n1 - fn + 1/2)
    (Jeffreys prior, independent), epsilon(FPR, FNR) as in the certificate, the
    (1 - level)-quantile of ``n_samples`` posterior draws. After Zanella-Beguelin
    et al. (ICML 2023), who integrate the same joint posterior numerically.
    """
    fpr = rng.beta(fp + 0.5, n0 - fp + 0.5, n_samples)
    fnr = rng.beta(fn + 0.5, n1 - fn + 0.5, n_samples)
    return float(np.quantile(epsilon_from_rates(fpr, fnr, delta), 1 - level))



# --------------------------------------------------------------------------- the value


@dataclass(frozen=True)
class Certificate:
    """What the held-out scores certify at the threshold(s) fixed before they were seen.

    Attributes
    ----------
    held_out : (ndarray (m,), ndarray (m,))
        The held-out scores of D0 and D1, sorted ascending (for a discrete score, after
        the tie-breaking map v = 2 rank(s) + u; :mod:`dpclaims.audits.scores`).
    thresholds : ndarray (k,)
        The test "guess D1 when score > t" for each t (in the units of ``held_out``).
    false_positives, false_negatives : ndarray (k,)
        The held-out counts at each threshold.
    fp_bound : ndarray (k,)
        The false-positive count the bound is computed from: ``false_positives``, or a
        strategy's own (the rank k of :class:`~dpclaims.audits.thresholds_rank.RankThreshold`).
    alpha : float
        The audit's significance, alpha / k per threshold (Bonferroni).
    delta : float
        The claim's delta.
    record : str
        How the strategy fixed the threshold(s).
    """

    held_out: tuple
    thresholds: np.ndarray
    false_positives: np.ndarray
    false_negatives: np.ndarray
    fp_bound: np.ndarray
    alpha: float
    delta: float
    record: str

    @property
    def n_held_out(self) -> int:
        return len(self.held_out[0])

    @property
    def n_thresholds(self) -> int:
        return len(self.thresholds)

    def bounds(self) -> np.ndarray:
        """The epsilon lower bound at each threshold, alpha / k each: (k,)."""
        n = self.n_held_out
        return np.atleast_1d(epsilon_lower_bound(self.fp_bound, n, self.false_negatives, n,
                                                 self.delta, self.alpha / self.n_thresholds))

    def best(self) -> int:
        """The index of the threshold with the largest bound (the first of equals)."""
        return int(np.argmax(self.bounds()))

    def epsilon_lower_bound(self) -> float:
        """The certificate: the largest bound (<= the true epsilon with probability >=
        1 - alpha)."""
        return float(self.bounds()[self.best()])

    def rate_upper_bounds(self) -> tuple[float, float]:
        """(FPR, FNR) upper bounds at the best threshold (alpha / (2k) each)."""
        b, a = self.best(), self.alpha / (2 * self.n_thresholds)
        return (float(clopper_pearson_upper(int(self.fp_bound[b]), self.n_held_out, a)),
                float(clopper_pearson_upper(int(self.false_negatives[b]), self.n_held_out, a)))

    def credible_lower(self, n_samples: int, rng: np.random.Generator) -> float:
        """Estimate: :func:`credible_lower_bound` at the best threshold, level 1 - alpha."""
        b, n = self.best(), self.n_held_out
        return credible_lower_bound(int(self.false_positives[b]), n,
                                    int(self.false_negatives[b]), n, delta=self.delta,
                                    level=1 - self.alpha, n_samples=n_samples, rng=rng)

    def estimates(self, threads: bool = False) -> tuple:
        """Estimates from all held-out scores: (GDP mu or None, its epsilon at delta or
        None, (trade-off FPR, FNR), AUROC). ``threads``: in two threads (the same
        values)."""
        ss0, ss1 = self.held_out

        def curves():
            pooled = _pooled(ss0, ss1)  # sorted once for both
            return (gdp_mu_estimate(ss0, ss1, presorted=True, pooled=pooled),
                    tradeoff_curve(ss0, ss1, presorted=True, pooled=pooled))

        (mu, curve), area = _in_threads([curves, lambda: auroc(ss0, ss1, presorted=True)],
                                        threads)
        return mu, epsilon_from_gdp(mu, self.delta) if self.delta > 0 else None, curve, area
