"""The rank threshold: a threshold at an order statistic of D0's held-out scores.

A threshold strategy in a module of its own (:class:`RankThreshold`, with the helpers
that choose its rank, :func:`claim_anchored_ranks` and :func:`choose_rank`): it
implements the hooks of :class:`~dpclaims.audits.thresholds.ThresholdStrategy` and is
named ``"rank"`` in :data:`dpclaims.audits.registry.THRESHOLDS`; nothing else knows
it. Its certificate and its validity are stated in the class docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

import dp_accounting
import numpy as np
from scipy.stats import norm as _normal

from dpclaims.analysis.validation import check_count, check_delta, check_epsilon
from dpclaims.audits.certificate import Certificate, epsilon_lower_bound, error_counts
from dpclaims.audits.thresholds import Choice, ThresholdStrategy, _check_fraction


@dataclass(frozen=True)
class RankChoice(Choice):
    """A :class:`~dpclaims.audits.thresholds.Choice` of a rank: the threshold is the
    order statistic of D0's held-out scores with ``rank`` of them above it."""

    rank: int


# the claim multipliers of RankThreshold's candidate ranks (benchmarks/audit_tightness.py)
RANK_MULTIPLIERS = (1.0, 1.5, 2.0, 3.0, 4.0)


@dataclass(frozen=True)
class RankThreshold(ThresholdStrategy):
    """A threshold at an order statistic of D0's held-out scores, at a rank chosen on a
    small training split among ranks anchored at the claim (claims with delta > 0).

    ``train_fraction`` of the trials per dataset (default 0.1) fit the score (if none
    is given) and choose the rank k; the other m trials per dataset are held out. The
    threshold is t = the (m - k)-th smallest held-out D0 score (k of them above it):
    "guess D1 when score > t". For any output distribution the false-positive rate
    P0(score > t) is at most a Beta(k + 1, m - k) variable (Wilks 1941; David &
    Nagaraja, *Order Statistics*, 3rd ed., Sec. 7.2; exactly Beta for a continuous
    score), whose upper alpha/2 quantile is the Clopper-Pearson upper bound of k
    errors in m; t depends on D0's outputs only, so D1's held-out count below it is
    binomial. The certificate is :func:`epsilon_lower_bound` of (k, m, that count,
    m) at significance alpha.

    The candidate ranks: for each c in ``multipliers`` (default 1, 1.5, 2, 3, 4), the
    rank that maximises the certificate on expected counts at m trials for the
    Gaussian mechanism that is exactly (c epsilon, delta)-DP
    (:func:`claim_anchored_ranks`). The training scores choose among them by a normal
    fit to each dataset's scores (:func:`choose_rank`). Both are heuristics: they
    decide how tight and how powerful the audit is, never whether its certificate is
    valid. They suit mechanisms whose scores look Gaussian, with the best threshold in
    a tail (Gaussian noise: DP-SGD, the papers' steps); measured against the split on
    the Gaussian mechanism in ``benchmarks/audit_tightness.py`` (docs/benchmarks.md).
    They do not suit a score whose best threshold sits at a level far from the tails:
    on randomised response that is exactly (1, 1e-3)-DP, over seeds 0-20 at 20,000
    trials, the split's median certificate was 0.96 (auto score) and the rank
    design's 0.23 (0 with Fisher's score): the anchored ranks put at most 1.3 % of
    D0's outputs above the threshold, the best test 27 %. Outside the claims it was
    made for (delta well below 1/n, a certificate above 0 attainable at the claim)
    the anchored ranks can be erratic, and where no rank gives a positive expected
    certificate every anchor falls to k = 1. The default,
    :class:`~dpclaims.audits.thresholds_auto.AutoThreshold`, uses this design's certificate
    at a rank it chooses from the training AUROC, and the split for discrete scores.
    """

    train_fraction: float = 0.1
    multipliers: tuple = RANK_MULTIPLIERS

    def __post_init__(self):
        object.__setattr__(self, "train_fraction", _check_fraction(self.train_fraction))
        message = (f"rank multipliers must be a non-empty list of finite positive numbers, "
                   f"got {self.multipliers!r}")
        if not isinstance(self.multipliers, (list, tuple, np.ndarray)):
            raise ValueError(message)
        try:
            m = np.asarray(self.multipliers, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(message) from None
        if m.ndim != 1 or m.size == 0 or not np.all(np.isfinite(m)) or np.any(m <= 0):
            raise ValueError(message)
        object.__setattr__(self, "multipliers", tuple(float(v) for v in m))

    def check(self, mechanism_name: str, claim, n_trials: int, n_held_out: int) -> None:
        if claim.delta == 0:
            raise ValueError(f"threshold 'rank' anchors its ranks at Gaussian mechanisms and "
                             f"needs a claim with delta > 0; {mechanism_name!r} claims delta = "
                             "0 (pure DP): use 'split'")
        if n_held_out < 2:
            raise ValueError(f"threshold 'rank' needs at least 2 held-out trials per dataset; "
                             f"n_trials = {n_trials} leaves {n_held_out}")

    def choose(self, train_scores, *, levels, n_held_out, claim, alpha,
               threads=False) -> RankChoice:
        candidates = claim_anchored_ranks(claim.epsilon, claim.delta, n_held_out, alpha,
                                          self.multipliers)
        rank, fitted = choose_rank(*train_scores, candidates, n_held_out, claim.delta, alpha)
        how = ("chosen on the training split by a normal fit" if fitted else
               "the first, as the training scores have no spread to fit")
        record = (f"at rank {rank} of the held-out D0 scores, {how}, from the ranks "
                  f"{candidates.tolist()} anchored at "
                  f"{', '.join(f'{c:g}' for c in self.multipliers)} x the claim")
        # the threshold: the order statistic, once the held-out scores are in
        return RankChoice(np.array([np.nan]), record, rank)

    def certify(self, choice: RankChoice, held_out: tuple, alpha: float,
                delta: float) -> Certificate:
        return certify_at_rank(choice, held_out, alpha, delta)

    def describe(self) -> str:
        return (f"rank: {self.train_fraction:.0%} of the trials per dataset train the score and "
                f"choose a rank among those anchored at {len(self.multipliers)} multiples of "
                f"the claimed epsilon; the threshold is that order statistic of the other "
                f"{1 - self.train_fraction:.0%} of D0's scores, which give the certificate "
                "(significance alpha at one threshold)")



def claim_anchored_ranks(epsilon: float, delta: float, n: int, alpha: float,
                         multipliers=RANK_MULTIPLIERS) -> np.ndarray:
    """The candidate ranks of :class:`RankThreshold`, one per multiplier, in their order.

    For each c in ``multipliers``: the rank k in [1, n / 2] (400 geometrically spaced
    values) that maximises :func:`epsilon_lower_bound` on expected counts (k false
    positives and n Phi(Phi^-1(1 - k / n) - mu) false negatives in n per dataset,
    significance ``alpha``) for the Gaussian mechanism that is exactly (c epsilon,
    delta)-DP: mu = 1 / sigma with sigma = ``dp_accounting.get_sigma_gaussian(c
    epsilon, delta)`` (Dong, Roth & Su 2022: its outputs are N(0, 1) against N(mu, 1)
    up to scale). Returns (len(multipliers),) ints; equal ranks may repeat. Where every
    k gives an expected certificate of 0 (a claim too small to certify at n trials,
    or a delta that is not small) the rank is 1, the first of the grid.

    Raises ValueError for epsilon <= 0, delta outside (0, 1) or n < 2.
    """
    epsilon = check_epsilon(epsilon)
    if check_delta(delta) == 0:
        raise ValueError("the ranks are anchored at a Gaussian mechanism and need delta > 0, "
                         "got delta = 0")
    n = check_count(n, "n", minimum=2)
    with np.errstate(divide="ignore"):  # log1p(-1) at its search's ends: -inf, handled
        mus = [1.0 / dp_accounting.get_sigma_gaussian(c * epsilon, delta) for c in multipliers]
    return gaussian_best_ranks(mus, n, delta, alpha)[0]


def gaussian_best_ranks(mus, n: int, delta: float, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(ranks, bounds): for each Gaussian-DP parameter mu in ``mus``, the rank k in [1,
    n / 2] (400 geometrically spaced values) whose threshold maximises
    :func:`epsilon_lower_bound` on expected counts at n trials per dataset (k false
    positives, n Phi(Phi^-1(1 - k / n) - mu) false negatives; significance ``alpha``)
    for outputs N(0, 1) against N(mu, 1), and that maximal expected certificate (nats).
    Where every k gives 0 the rank is 1. Shapes (len(mus),). Used by
    :func:`claim_anchored_ranks` and :class:`~dpclaims.audits.thresholds_auto.AutoThreshold`.
    """
    ks = rank_grid(n)
    z = _normal.isf(ks / n)
    ranks, best = [], []
    for mu in mus:
        bounds = epsilon_lower_bound(ks, n, n * _normal.cdf(z - mu), n, delta, alpha)
        ranks.append(int(ks[int(np.argmax(bounds))]))
        best.append(float(np.max(bounds)))
    return np.array(ranks, dtype=np.int64), np.array(best)


def rank_grid(n: int) -> np.ndarray:
    """The candidate ranks at n held-out trials: 400 geometrically spaced integers in [1,
    n / 2], without repeats (int64)."""
    return np.unique(np.round(np.geomspace(1, max(1, n // 2), 400)).astype(np.int64))


def certify_at_rank(choice: RankChoice, held_out: tuple, alpha: float,
                    delta: float) -> Certificate:
    """The certificate of :class:`RankThreshold` (its docstring): the threshold at the
    order statistic of the sorted held-out D0 scores with ``choice.rank`` above it."""
    # k = rank of D0's held-out scores lie above t (fewer only at ties at t); the
    # false-positive bound uses k itself, as P0(score > t) <= Beta(k + 1, m - k) for
    # any distribution (Wilks), while false_positives reports the count
    ss0, ss1 = held_out
    t = ss0[[len(ss0) - choice.rank - 1]]
    fp, fn = error_counts(ss0, ss1, t)
    return Certificate(held_out, t, fp, fn, np.array([choice.rank]), alpha, delta,
                       choice.record)


def choose_rank(train0: np.ndarray, train1: np.ndarray, ranks, n_ho: int, delta: float,
                alpha: float) -> tuple[int, bool]:
    """(rank, fitted): the rank among ``ranks`` with the largest certificate projected to
    n_ho held-out trials per dataset from normal fits to the training scores (train0 of
    D0, train1 of D1; "D1 high"): the threshold of rank k at mean0 + sd0 Phi^-1(1 - k /
    n_ho), its false negatives n_ho Phi((t - mean1) / sd1). Ties go to the earlier rank.
    Training scores without spread (fewer than two per dataset, or a constant score)
    leave nothing to fit: the first rank (:func:`claim_anchored_ranks` puts the claim's
    own first by default), with ``fitted`` False."""
    ranks = np.asarray(ranks, dtype=np.int64)
    train0, train1 = np.asarray(train0, dtype=float), np.asarray(train1, dtype=float)
    if min(train0.size, train1.size) < 2:
        return int(ranks[0]), False
    sd0, sd1 = train0.std(), train1.std()
    if not (sd0 > 0 and sd1 > 0):
        return int(ranks[0]), False
    t = train0.mean() + sd0 * _normal.isf(ranks / n_ho)
    fnr = _normal.cdf((t - train1.mean()) / sd1)
    bounds = np.atleast_1d(epsilon_lower_bound(ranks, n_ho, n_ho * fnr, n_ho, delta, alpha))
    return int(ranks[int(np.argmax(bounds))]), True
