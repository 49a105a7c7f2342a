"""Threshold strategies: how an audit fixes the test "guess D1 when score > t".

A certificate is a Clopper-Pearson bound on the error rates of one test, valid only when
t was fixed without the outputs that are counted (:mod:`dpclaims.audits.core`). A
strategy is an explicit type, as in jax_privacy's auditing module: a small frozen value
that says what it needs and implements the audit's hooks (:class:`ThresholdStrategy`).
:class:`SplitThreshold`, :class:`BonferroniThresholds` and
:class:`ExplicitThreshold` are here; :class:`~dpclaims.audits.thresholds_rank.RankThreshold`
and the default, :class:`~dpclaims.audits.thresholds_auto.AutoThreshold` (which uses the
split's choice for pure-DP claims and discrete scores), are in modules of their own, as a
new strategy would be. The names an audit accepts
(``threshold="split"``) are those of :data:`dpclaims.audits.registry.THRESHOLDS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm as _normal

from dpclaims.analysis.intervals import clopper_pearson_upper
from dpclaims.analysis.validation import check_count, check_probability
from dpclaims.audits.certificate import (
    Certificate,
    _sort_pair,
    epsilon_lower_bound,
    error_counts,
)
from dpclaims.audits.registry import THRESHOLDS, quoted
from dpclaims.audits.scores import _in_threads

# --------------------------------------------------------------------------- the protocol


@dataclass(frozen=True)
class Choice:
    """The threshold(s) a strategy fixed from the training scores alone.

    ``thresholds`` (k,), in the units of the (tie-broken) scores; NaN where the strategy
    fixes a threshold from the held-out scores by a rule stated in advance (an order
    statistic). ``record``: how they were fixed, for the audit's evidence.
    """

    thresholds: np.ndarray
    record: str


class ThresholdStrategy:
    """The protocol of a threshold strategy, with its default hooks.

    A strategy is a frozen dataclass with a ``train_fraction`` (the share of the trials
    per dataset spent on training when any are) and ``describe() -> str``; the audit
    (:func:`dpclaims.audits.core.audit`) calls, in its phases:

    ``given_thresholds``
        True when the thresholds are fixed before any trial (default False): with a
        given score no trials are then spent on training.
    ``training_trials(n_trials, claim)``
        The trials per dataset spent on training, in [1, n_trials - 1] (default:
        ``train_fraction`` of n_trials, rounded).
    ``check(mechanism_name, claim, n_trials, n_held_out)``
        Raise ValueError for a claim or a size the strategy cannot certify (default:
        nothing).
    ``choose(train_scores, *, levels, n_held_out, claim, alpha, threads) -> Choice``
        The threshold(s), from the training scores (two arrays, tie-broken; None when no
        trials were spent on training) and never from the held-out ones. ``levels``: a
        discrete score's levels (None for a continuous score).
    ``certify(choice, held_out, alpha, delta) -> Certificate``
        The certificate on the sorted held-out scores (default: the counts at the
        chosen thresholds, alpha / k each over k thresholds).
    """

    train_fraction: float
    given_thresholds: bool = False

    def training_trials(self, n_trials: int, claim) -> int:
        return min(max(1, round(self.train_fraction * n_trials)), n_trials - 1)

    def check(self, mechanism_name: str, claim, n_trials: int, n_held_out: int) -> None:
        return None

    def choose(self, train_scores, *, levels, n_held_out: int, claim, alpha: float,
               threads: bool = False) -> Choice:
        raise NotImplementedError

    def certify(self, choice: Choice, held_out: tuple, alpha: float,
                delta: float) -> Certificate:
        ss0, ss1 = held_out
        t = np.asarray(choice.thresholds)
        fp, fn = error_counts(ss0, ss1, t)
        return Certificate(held_out, t, fp, fn, fp, alpha, delta, choice.record)

    def describe(self) -> str:
        raise NotImplementedError


def _chosen_on_training(train_scores, levels, n_held_out, delta, alpha, k,
                        threads) -> Choice:
    """k thresholds by :func:`choose_thresholds` at alpha / k each (a discrete score's
    candidates: :func:`discrete_threshold_grid`)."""
    cands = None if levels is None else discrete_threshold_grid(len(levels))
    grid, method = choose_thresholds(*train_scores, n_held_out, delta, alpha / k, k, cands,
                                     threads=threads)
    return Choice(grid, f"chosen on the training split by the {method} ranking")


# --------------------------------------------------------------------------- strategies


def _check_fraction(value: float) -> float:
    return check_probability(value, "train_fraction")


@dataclass(frozen=True)
class SplitThreshold(ThresholdStrategy):
    """Choose the threshold on a training split; certify on the held-out rest.

    ``train_fraction`` of the trials on each dataset (default 0.2) fit the score
    (if none is given) and choose the threshold that maximises the certificate
    projected to the held-out size (training error rates times the held-out
    counts, a smooth stand-in for the unseen counts); the held-out trials give
    the counts, at significance alpha.
    """

    train_fraction: float = 0.2

    def __post_init__(self):
        object.__setattr__(self, "train_fraction", _check_fraction(self.train_fraction))

    def choose(self, train_scores, *, levels, n_held_out, claim, alpha, threads=False) -> Choice:
        return _chosen_on_training(train_scores, levels, n_held_out, claim.delta, alpha, 1,
                                   threads)

    def describe(self) -> str:
        return (f"split: {self.train_fraction:.0%} of the trials per dataset train the score and "
                f"choose the threshold; the other {1 - self.train_fraction:.0%} are held out "
                "for the certificate (significance alpha at one threshold)")


@dataclass(frozen=True)
class BonferroniThresholds(ThresholdStrategy):
    """Certify at each of k thresholds with alpha / k each; report the largest bound.

    ``grid``: the k thresholds, stated in advance (score units). Without a grid,
    the k = ``size`` thresholds with the largest projected bound on the training
    split (``train_fraction`` of the trials) are used. With a given ``score`` and
    a given ``grid`` no trials are spent on training.
    """

    grid: tuple | None = None
    size: int = 16
    train_fraction: float = 0.2

    def __post_init__(self):
        if self.grid is not None:
            g = np.asarray(self.grid, dtype=float).ravel()
            if g.size == 0 or not np.all(np.isfinite(g)):
                raise ValueError(f"Bonferroni grid must be a non-empty list of finite "
                                 f"thresholds, got {self.grid!r}")
            object.__setattr__(self, "grid", tuple(float(v) for v in np.unique(g)))
        check_count(self.size, "Bonferroni grid size")
        object.__setattr__(self, "train_fraction", _check_fraction(self.train_fraction))

    @property
    def given_thresholds(self) -> bool:
        return self.grid is not None

    def choose(self, train_scores, *, levels, n_held_out, claim, alpha, threads=False) -> Choice:
        if self.grid is not None:
            return Choice(np.asarray(self.grid), "given in advance")
        return _chosen_on_training(train_scores, levels, n_held_out, claim.delta, alpha,
                                   self.size, threads)

    def describe(self) -> str:
        if self.grid is not None:
            return (f"Bonferroni over a stated grid of {len(self.grid)} thresholds "
                    f"(alpha/{len(self.grid)} each)")
        return (f"Bonferroni over the {self.size} best thresholds of a {self.train_fraction:.0%} "
                f"training split (alpha/{self.size} each on the held-out rest)")


@dataclass(frozen=True)
class ExplicitThreshold(ThresholdStrategy):
    """One threshold given in advance (score units): "guess D1 when score > threshold"."""

    threshold: float
    train_fraction: float = 0.2
    given_thresholds = True  # a class attribute, not a field

    def __post_init__(self):
        t = float(self.threshold)
        if not math.isfinite(t):
            raise ValueError(f"explicit threshold must be finite, got {self.threshold!r}")
        object.__setattr__(self, "threshold", t)
        object.__setattr__(self, "train_fraction", _check_fraction(self.train_fraction))

    def choose(self, train_scores, *, levels, n_held_out, claim, alpha, threads=False) -> Choice:
        return Choice(np.array([self.threshold]), "given in advance")

    def describe(self) -> str:
        return f"explicit threshold {self.threshold:.6g} (significance alpha at one threshold)"


# The threshold proposals of choose_thresholds (claims with delta > 0, and pure-DP
# claims), and the one-sided tail of the Clopper-Pearson upper bounds at which training
# error rates are ranked (0.16: one standard error of pessimism against the winner's
# curse of picking the best of many noisy candidates; 0.01: "cautious") and at which
# the proposals are compared on the validation half (benchmarks/literature_audit.py).
PROPOSALS = ("normal", "empirical")
PROPOSALS_PURE_DP = ("normal", "empirical", "empirical-cautious")
RANKING_TAILS = {"empirical": 0.16, "empirical-cautious": 0.01}
VALIDATION_TAIL = 0.16


def _candidates(s0, s1, max_candidates=6000) -> np.ndarray:
    """Thresholds at the training scores: every extreme order statistic, the middle thinned."""
    cands = np.unique(np.concatenate([s0, s1]))
    if cands.size > max_candidates:
        edge = max_candidates // 4
        mid = np.linspace(edge, cands.size - edge - 1, max_candidates - 2 * edge).astype(int)
        cands = cands[np.unique(np.concatenate([np.arange(edge), mid,
                                                np.arange(cands.size - edge, cands.size)]))]
    return cands


def _projected(fpr, fnr, n_ho, delta, alpha_each, threads: bool = False) -> np.ndarray:
    return np.atleast_1d(epsilon_lower_bound(fpr * n_ho, n_ho, fnr * n_ho, n_ho, delta,
                                             alpha_each, threads=threads))


def _propose(s0, s1, n_ho, delta, alpha_each, method: str,
             cands=None, threads: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Thresholds ranked by the certificate projected to the held-out size n_ho.

    ``empirical``: training error rates at their one-sided 84 % Clopper-Pearson
    upper bound (one standard error of pessimism against the winner's curse of
    picking the best of many noisy candidates); ``empirical-cautious``: at their
    99 % upper bound. ``normal``: rates from a normal
    fit to each sample's scores (smooth; exact for Gaussian mechanisms).
    ``cands``: the candidate thresholds (default: the training scores,
    :func:`_candidates`). ``threads``: the two error rates' bounds in two threads.
    """
    s0, s1 = _sort_pair(s0, s1, threads)
    cands = _candidates(s0, s1) if cands is None else np.asarray(cands, dtype=float)
    if method == "normal":
        sd0, sd1 = max(s0.std(), 1e-300), max(s1.std(), 1e-300)
        fpr = _normal.sf((cands - s0.mean()) / sd0)
        fnr = _normal.cdf((cands - s1.mean()) / sd1)
    else:
        tail = RANKING_TAILS[method]
        fp, fn = error_counts(s0, s1, cands)
        fpr, fnr = _in_threads([lambda: clopper_pearson_upper(fp, len(s0), tail),
                                lambda: clopper_pearson_upper(fn, len(s1), tail)], threads)
    bounds = _projected(fpr, fnr, n_ho, delta, alpha_each, threads)
    order = np.argsort(-bounds, kind="stable")
    return cands[order], bounds[order]


def choose_thresholds(train0, train1, n_ho: int, delta: float, alpha_each: float,
                      k: int = 1, candidates=None, *,
                      threads: bool = False) -> tuple[np.ndarray, str]:
    """Choose k thresholds from training scores only (never the held-out ones).

    Proposals are made on the first half of each training sample (the
    ``empirical`` and ``normal`` rankings of :func:`_propose`, and for a pure-DP
    claim, delta = 0, also ``empirical-cautious``), their top k thresholds are
    scored on the second half (empirical rates at their 84 % upper bound,
    projected to n_ho; ties go to ``normal``), and the winner's thresholds are
    returned. Fewer than 4 training outputs: the empirical ranking on all of them.

    Why a cautious proposal at delta = 0 only: under pure DP the certificate
    ``log(TPR / FPR)`` of a threshold cannot exceed the largest privacy loss, which
    e.g. the Laplace mechanism attains on a whole half-line; every threshold there
    is equally good in truth and the one with most outputs is best, so ranking by
    a strongly pessimistic rate (1 % upper bound) costs nothing and avoids tail
    thresholds that only look good by chance (at eps = 0.1, 10^5 trials: median
    0.99 of the statistical limit instead of 0.55). With delta > 0 the best
    threshold of a Gaussian lies in the tail and such pessimism costs 5-10 %.

    With a short list of ``candidates`` (a discrete score's randomised
    thresholds, :func:`discrete_threshold_grid`), the empirical ranking on all
    the training scores picks among them: a coarse grid leaves no room for the
    winner's curse that slicing a level into thousands of random fractions would
    invite, and a normal fit means nothing for a discrete score.

    ``threads``: the statistics in two threads (the same thresholds; for an audit
    given two or more workers).

    Returns (thresholds (k,), method name).
    """
    if candidates is not None:
        t, _ = _propose(train0, train1, n_ho, delta, alpha_each, "empirical", candidates,
                        threads)
        return np.sort(t[:k]), "empirical (level grid)"
    h0, h1 = len(train0) // 2, len(train1) // 2
    if h0 < 2 or h1 < 2:
        t, _ = _propose(train0, train1, n_ho, delta, alpha_each, "empirical", None, threads)
        return np.sort(t[:k]), "empirical"
    v0, v1 = _sort_pair(train0[h0:], train1[h1:], threads)
    proposals, score = {}, {}
    methods = PROPOSALS_PURE_DP if delta == 0 else PROPOSALS
    for m in methods:
        t, _ = _propose(train0[:h0], train1[:h1], n_ho, delta, alpha_each, m, None, threads)
        proposals[m] = np.sort(t[:k])
        fp, fn = error_counts(v0, v1, proposals[m])
        fpr = clopper_pearson_upper(fp, len(v0), VALIDATION_TAIL)
        fnr = clopper_pearson_upper(fn, len(v1), VALIDATION_TAIL)
        score[m] = float(np.max(_projected(fpr, fnr, n_ho, delta, alpha_each)))
    method = max(methods, key=lambda m: (score[m], m == "normal"))
    return proposals[method], method


def discrete_threshold_grid(n_levels: int, fractions=(1.0, 0.75, 0.5, 0.25)) -> np.ndarray:
    """Thresholds on v = 2 rank(s) + u: "s above level j, and s = level j with probability p".

    For each level j and each p in ``fractions``: 2 j + (1 - p). Returns (n_levels x
    len(fractions),) sorted values.
    """
    j = np.arange(n_levels)[:, None]
    return np.sort((2.0 * j + (1.0 - np.asarray(fractions, dtype=float))[None]).ravel())




def as_threshold_strategy(threshold) -> ThresholdStrategy:
    """A name in :data:`~dpclaims.audits.registry.THRESHOLDS` / a number (an
    :class:`ExplicitThreshold`) / a strategy instance -> a strategy instance."""
    if isinstance(threshold, ThresholdStrategy):
        return threshold
    if isinstance(threshold, str) and threshold in THRESHOLDS:
        return THRESHOLDS[threshold].build()
    if isinstance(threshold, (int, float, np.floating)) and not isinstance(threshold, bool):
        return ExplicitThreshold(float(threshold))
    raise ValueError(f"threshold must be {quoted(THRESHOLDS)}, a number or a "
                     f"threshold strategy, got {threshold!r}")
