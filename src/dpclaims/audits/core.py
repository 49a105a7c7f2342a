"""The audit engine: certified epsilon lower bounds for any mechanism, and estimates.

The certificate (Kairouz, Oh, Viswanath 2015; Jagielski, Ullman, Oprea 2020;
Nasr et al. 2021)
----------------------------------------------------------------------------
A mechanism M is (epsilon, delta)-DP only if every test of H0: "the output came
from D0" against H1: "from D1" has false-positive rate FPR and false-negative
rate FNR with

    FPR + e^epsilon FNR >= 1 - delta   and   FNR + e^epsilon FPR >= 1 - delta.

Given one-sided Clopper-Pearson upper bounds FPR_u, FNR_u, each at level a/2
(Bonferroni: both hold together with probability >= 1 - a), the certificate is

    epsilon_lb = max(0, log((1 - delta - FNR_u) / FPR_u), log((1 - delta - FPR_u) / FNR_u)),

which is <= the true epsilon with probability >= 1 - a whatever the mechanism,
provided the test (score and threshold) was fixed without looking at the counts
it is evaluated on. One significance budget ``alpha`` per audit: a = alpha for
one threshold, a = alpha / k for each of k thresholds (Bonferroni).

Threshold strategies (explicit types, as in jax_privacy's auditing module)
--------------------------------------------------------------------------
:class:`SplitThreshold`: a training split of the trials fits the score (when
none is given) and chooses the threshold; the held-out rest gives the counts.
:class:`BonferroniThresholds`: k thresholds stated before the held-out counts
are seen (given, or chosen on the training split), alpha / k each.
:class:`ExplicitThreshold`: one threshold given by the user.
:class:`RankThreshold` (claims with delta > 0): a small training split fits the score
and chooses a rank k among ranks anchored at the claim; the threshold is the order
statistic of D0's held-out scores with k of them above it, whose false-positive rate
is Beta(k + 1, m - k) distributed (Wilks 1941), so the Clopper-Pearson bound of k
errors in m bounds it exactly as it bounds a binomial count.

Estimates (can be wrong in either direction; never refute)
----------------------------------------------------------
``epsilon_gdp_estimate``: a Gaussian-DP mu fitted to the held-out trade-off
curve (Dong, Roth, Su 2022: a mu-GDP test has FNR = Phi(Phi^-1(1 - FPR) - mu)),
converted to epsilon at the claim's delta with the exact GDP conversion
(dp_accounting's ``get_epsilon_gaussian(1/mu, delta)``).
``epsilon_credible_lower``: a Bayesian one-sided credible bound at level 1 - alpha
(Zanella-Beguelin et al., "Bayesian estimation of differential privacy", ICML
2023): independent Jeffreys Beta posteriors for FPR and FNR at the certificate's
threshold, pushed through the epsilon formula above by Monte Carlo.
"""

from __future__ import annotations

import math
import mmap
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import dp_accounting
import numpy as np
from scipy.stats import norm as _normal

from dpclaims.analysis.intervals import clopper_pearson_upper  # noqa: F401  (re-exported)
from dpclaims.analysis.validation import (
    check_count,
    check_delta,
    check_epsilon,
    check_probability,
)
from dpclaims.audits.mechanism import (
    InvalidMechanismError,
    NeighbouringPair,
    PrivacyClaim,
    check_follows_rng,
    draw_release,
    output_shape,
    twin_generator,
    validate_mechanism,
)
from dpclaims.audits.scores import (
    AutoScore,
    ScoreError,
    UserScore,
    _in_threads,
    as_score,
    choose_score,
    randomise_ties,
    score_levels,
    threshold_in_score_units,
)

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


# --------------------------------------------------------------------------- strategies


def _check_fraction(value: float) -> float:
    return check_probability(value, "train_fraction")


@dataclass(frozen=True)
class SplitThreshold:
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

    def describe(self) -> str:
        return (f"split: {self.train_fraction:.0%} of the trials per dataset train the score and "
                f"choose the threshold; the other {1 - self.train_fraction:.0%} are held out "
                "for the certificate (significance alpha at one threshold)")


@dataclass(frozen=True)
class BonferroniThresholds:
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

    def describe(self) -> str:
        if self.grid is not None:
            return (f"Bonferroni over a stated grid of {len(self.grid)} thresholds "
                    f"(alpha/{len(self.grid)} each)")
        return (f"Bonferroni over the {self.size} best thresholds of a {self.train_fraction:.0%} "
                f"training split (alpha/{self.size} each on the held-out rest)")


@dataclass(frozen=True)
class ExplicitThreshold:
    """One threshold given in advance (score units): "guess D1 when score > threshold"."""

    threshold: float
    train_fraction: float = 0.2

    def __post_init__(self):
        t = float(self.threshold)
        if not math.isfinite(t):
            raise ValueError(f"explicit threshold must be finite, got {self.threshold!r}")
        object.__setattr__(self, "threshold", t)
        object.__setattr__(self, "train_fraction", _check_fraction(self.train_fraction))

    def describe(self) -> str:
        return f"explicit threshold {self.threshold:.6g} (significance alpha at one threshold)"


# the claim multipliers of RankThreshold's candidate ranks (benchmarks/audit_tightness.py)
RANK_MULTIPLIERS = (1.0, 1.5, 2.0, 3.0, 4.0)


@dataclass(frozen=True)
class RankThreshold:
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
    the Gaussian mechanism in ``benchmarks/audit_tightness.py`` (README, "Benchmarks").
    They do not suit a score whose best threshold sits at a level far from the tails:
    on randomised response that is exactly (1, 1e-3)-DP, over seeds 0-20 at 20,000
    trials, the split's median certificate was 0.96 (auto score) and the rank
    design's 0.23 (0 with Fisher's score): the anchored ranks put at most 1.3 % of
    D0's outputs above the threshold, the best test 27 %. Outside the claims it was
    made for (delta well below 1/n, a certificate above 0 attainable at the claim)
    the anchored ranks can be erratic, and where no rank gives a positive expected
    certificate every anchor falls to k = 1. The default stays :class:`SplitThreshold`.
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

    def describe(self) -> str:
        return (f"rank: {self.train_fraction:.0%} of the trials per dataset train the score and "
                f"choose a rank among those anchored at {len(self.multipliers)} multiples of "
                f"the claimed epsilon; the threshold is that order statistic of the other "
                f"{1 - self.train_fraction:.0%} of D0's scores, which give the certificate "
                "(significance alpha at one threshold)")


ThresholdStrategy = SplitThreshold | BonferroniThresholds | ExplicitThreshold | RankThreshold


def as_threshold_strategy(threshold) -> ThresholdStrategy:
    """"split" / "bonferroni" / "rank" / a number / a strategy instance -> a strategy
    instance."""
    if isinstance(threshold, (SplitThreshold, BonferroniThresholds, ExplicitThreshold,
                              RankThreshold)):
        return threshold
    if threshold == "split":
        return SplitThreshold()
    if threshold == "bonferroni":
        return BonferroniThresholds()
    if threshold == "rank":
        return RankThreshold()
    if isinstance(threshold, (int, float, np.floating)) and not isinstance(threshold, bool):
        return ExplicitThreshold(float(threshold))
    raise ValueError(f"threshold must be 'split', 'bonferroni', 'rank', a number or a "
                     f"threshold strategy, got {threshold!r}")


# --------------------------------------------------------------------------- result


@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit`.

    Attributes
    ----------
    mechanism : str
        The mechanism's name.
    claim : PrivacyClaim
    pair : dict
        The neighbouring pair's description (:meth:`NeighbouringPair.to_dict`).
    epsilon_lower_bound : float
        The certificate: <= the true epsilon with probability >= 1 - alpha.
    refutes_claim : bool
        True only when the certificate exceeds ``claim.epsilon``.
    epsilon_gdp_estimate, gdp_mu_estimate : float or None
        Estimate: GDP mu fitted to the held-out trade-off, and its epsilon at
        ``claim.delta`` (None where no threshold has enough errors to fit, and the
        epsilon None for a pure-DP claim, delta = 0, where a GDP curve has none).
    epsilon_credible_lower : float
        Estimate: Bayesian credible lower bound at level 1 - alpha.
    auroc : float
        Held-out AUROC of the attack (estimate).
    tradeoff_fpr, tradeoff_fnr : tuple of float
        Empirical trade-off points on the held-out scores.
    threshold_strategy : str
        Its description.
    threshold : float
        The threshold the certificate rests on (the best one under Bonferroni), in
        score units.
    n_thresholds : int
        Thresholds certified (Bonferroni k; 1 otherwise).
    score : str
        Which score was used, described.
    n_trials, n_train, n_held_out : int
        Outputs per dataset: all, spent on training, behind the certificate.
    false_positives, false_negatives : int
        Held-out counts at ``threshold``.
    fpr_upper, fnr_upper : float
        Their Clopper-Pearson upper bounds (alpha / (2k) each). With
        :class:`RankThreshold`, ``fpr_upper`` is the bound of the rank k (Wilks), which
        is at least the count's: fewer than k scores lie above the threshold only when
        scores tie at it.
    alpha : float
    seed : int
    block_size, posterior_samples : int
        Together with ``seed``, they determine every number above.
    score_name : str
        The score's name ("fisher", "likelihood-ratio", "logistic",
        "gradient-boosting", "user score").
    score_choice : str
        Why that score: the rule of ``auto`` with the numbers it saw, or who named it.
    tie_probability : float or None
        For a discrete score: the probability of guessing D1 when the score equals
        ``threshold`` (the randomised threshold); None for a continuous score.
    held_out_scores : (ndarray, ndarray)
        The held-out scores on D0 and D1 (for figures; not in :meth:`to_dict`); for
        a discrete score, after the tie-breaking map v = 2 rank(s) + u.
    """

    mechanism: str
    claim: PrivacyClaim
    pair: dict
    epsilon_lower_bound: float
    refutes_claim: bool
    epsilon_gdp_estimate: float | None
    gdp_mu_estimate: float | None
    epsilon_credible_lower: float
    auroc: float
    tradeoff_fpr: tuple
    tradeoff_fnr: tuple
    threshold_strategy: str
    threshold: float
    n_thresholds: int
    score: str
    n_trials: int
    n_train: int
    n_held_out: int
    false_positives: int
    false_negatives: int
    fpr_upper: float
    fnr_upper: float
    alpha: float
    seed: int
    block_size: int
    posterior_samples: int
    score_name: str = "fisher"
    score_choice: str = ""
    tie_probability: float | None = None
    held_out_scores: tuple = field(default=(), repr=False, compare=False)

    @property
    def claimed_epsilon(self) -> float:
        return self.claim.epsilon

    @property
    def delta(self) -> float:
        return self.claim.delta

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "held_out_scores"}
        out["claim"] = self.claim.to_dict()
        out["tradeoff_fpr"] = [round(float(v), 6) for v in self.tradeoff_fpr]
        out["tradeoff_fnr"] = [round(float(v), 6) for v in self.tradeoff_fnr]
        return out


# --------------------------------------------------------------------------- blocks

_WORKER: dict = {}


def _init_worker(mechanism, datasets) -> None:
    # one BLAS thread per worker process: with the default (one per core) two workers
    # on two cores ran four threads and a 32-coordinate Gaussian audit was no faster
    # than one process (issue 23); the audit's parallelism is its processes
    from threadpoolctl import threadpool_limits

    _WORKER.update(mechanism=mechanism, datasets=datasets,
                   blas=threadpool_limits(limits=1, user_api="blas"))


def _run_in_worker(task):
    *args, start = task
    out = _block(_WORKER["mechanism"], _WORKER["datasets"], *args)
    if start is None:
        return out
    # training outputs go to the memory shared with the parent (no pickling through a pipe)
    which = args[0]
    _WORKER["shared"][which, start:start + len(out)] = out
    return None


def _shared_training_buffer(n_train: int, shape: tuple) -> np.ndarray | None:
    """A (2, n_train, k) float array in anonymous shared memory, which worker processes
    forked after its creation write the training outputs into (None when the platform
    cannot fork). Shipping them back through a pipe cost more than drawing them: a
    32-coordinate Gaussian's 2 x 200,000 training outputs took 0.46 s on 2 workers
    against 0.19 s drawn in one process (issue 23)."""
    if "fork" not in multiprocessing.get_all_start_methods() or n_train == 0:
        return None
    k = int(np.prod(shape, dtype=np.int64))
    nbytes = 2 * n_train * k * 8
    if nbytes == 0:
        return None
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=float).reshape(2, n_train, k)


def _block(mechanism, datasets, which: int, n: int, seed: int, key: tuple, scorer, shape):
    """One block: n outputs on dataset ``which`` with seed (seed, spawn_key=key).

    Returns the raw outputs (n, k) when ``scorer`` is None (training a fitted
    score), else their scores (n,). Every output must have the trailing ``shape``
    (None: not checked, the probe that fixes it).

    The first block of the training phase (key ``(which, 0, 0)``) is drawn twice, the
    second time from a twin generator (:func:`~dpclaims.audits.mechanism.check_follows_rng`):
    the probe of :func:`~dpclaims.audits.mechanism.output_shape` checks at n = 2 that the
    release follows its rng, this at the size the audit really draws (a release that
    follows its rng for small n only would otherwise pass). The block's own outputs,
    and so the audit's result, are those of the first draw.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))
    twin = twin_generator(rng) if key[1:] == (0, 0) else None
    out = draw_release(mechanism, datasets[which], rng, n, shape=shape)
    if twin is not None:
        check_follows_rng(mechanism, out, draw_release(mechanism, datasets[which], twin, n,
                                                       shape=shape), n)
    if scorer is None:
        return out
    return _apply_score(out, scorer, mechanism.name)


def _apply_score(outputs, scorer, name):
    try:
        s = np.asarray(scorer(outputs), dtype=float)
    except ScoreError as exc:
        raise InvalidMechanismError(f"mechanism {name!r}: {exc}") from exc
    if s.shape != (outputs.shape[0],) or not np.all(np.isfinite(s)):
        raise InvalidMechanismError(f"score must map outputs (n, ...) of {name!r} to n finite "
                                    f"reals, got shape {s.shape}")
    return s


def _submit_blocks(tasks, mechanism, datasets, seed, client, pool, shared=None,
                   block_size=None) -> Callable:
    """Start block tasks [(which, n, key, scorer, shape)]; returns ``gather()``, which
    waits for them and returns their results in order. On a process pool or a Dask
    cluster the blocks run while the caller goes on (the audit chooses its thresholds
    meanwhile); in one process they run when gathered. The results do not depend on
    how: every block draws from its own seed. ``shared`` (a pool's training phase,
    :func:`_shared_training_buffer`): the workers write the raw outputs of block b at
    row b x ``block_size`` of it and ``gather()`` returns views of it."""
    if client is not None:  # mechanism and datasets: futures scattered once by audit()
        futures = [client.submit(_block, mechanism, datasets, which, n, seed, key, scorer,
                                 shape, pure=False)
                   for which, n, key, scorer, shape in tasks]
        return lambda: client.gather(futures)
    if pool is not None:
        # a scorer that is not fork-safe (scikit-learn's OpenMP thread pool deadlocks in a
        # forked child) scores the workers' raw outputs here, in the parent
        parent = [bool(getattr(scorer, "score_in_parent", False)) for *_, scorer, _ in tasks]
        store = [None if shared is None or scorer is not None else key[2] * block_size
                 for (_, _, key, scorer, _) in tasks]
        futures = [pool.submit(_run_in_worker, (which, n, seed, key, None if p else scorer,
                                                shape, start))
                   for (which, n, key, scorer, shape), p, start
                   in zip(tasks, parent, store, strict=True)]

        def result(f, task, p, start):
            out = f.result()
            if start is not None:
                out = shared[task[0], start:start + task[1]]
            return _apply_score(out, task[3], mechanism.name) if p else out

        def gather():
            return [result(*x) for x in zip(futures, tasks, parent, store, strict=True)]
        return gather
    return lambda: [_block(mechanism, datasets, which, n, seed, key, scorer, shape)
                    for which, n, key, scorer, shape in tasks]


def _block_tasks(which, phase, total, block_size, scorer, shape):
    return [(which, min(block_size, total - start), (which, phase, b), scorer, shape)
            for b, start in enumerate(range(0, total, block_size))]


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
    ks = np.unique(np.round(np.geomspace(1, max(1, n // 2), 400)).astype(np.int64))
    z = _normal.isf(ks / n)
    ranks = []
    for c in multipliers:
        with np.errstate(divide="ignore"):  # log1p(-1) at its search's ends: -inf, handled
            mu = 1.0 / dp_accounting.get_sigma_gaussian(c * epsilon, delta)
        bounds = epsilon_lower_bound(ks, n, n * _normal.cdf(z - mu), n, delta, alpha)
        ranks.append(int(ks[int(np.argmax(bounds))]))
    return np.array(ranks, dtype=np.int64)


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


def discrete_threshold_grid(n_levels: int, fractions=(1.0, 0.75, 0.5, 0.25)) -> np.ndarray:
    """Thresholds on v = 2 rank(s) + u: "s above level j, and s = level j with probability p".

    For each level j and each p in ``fractions``: 2 j + (1 - p). Returns (n_levels x
    len(fractions),) sorted values.
    """
    j = np.arange(n_levels)[:, None]
    return np.sort((2.0 * j + (1.0 - np.asarray(fractions, dtype=float))[None]).ravel())


# --------------------------------------------------------------------------- audit


def audit(mechanism, pair: NeighbouringPair, n_trials: int, alpha: float = 0.05,
          threshold="split", score=None, seed: int = 0,
          workers: int = 1, *, client=None, block_size: int = 65_536,
          posterior_samples: int = 100_000) -> AuditResult:
    """Audit ``mechanism``'s claim on ``pair``: a certified epsilon lower bound and estimates.

    Parameters
    ----------
    mechanism : Mechanism
        Follows :class:`~dpclaims.audits.mechanism.Mechanism`; its claim gives
        delta (0 for pure epsilon-DP) and the relation.
    pair : NeighbouringPair
        Under the claim's relation.
    n_trials : int
        Outputs drawn per dataset (>= 2), generated in blocks of ``block_size``.
    alpha : float, default 0.05
        The audit's one significance budget, in (0, 1): the certificate holds with
        probability >= 1 - alpha; the credible bound is at level 1 - alpha.
    threshold : "split" | "bonferroni" | "rank" | float | strategy, default "split"
        See :class:`SplitThreshold`, :class:`BonferroniThresholds`,
        :class:`RankThreshold` (claims with delta > 0) and :class:`ExplicitThreshold`
        (a float means an explicit threshold).
    score : None | str | score instance | callable, default None
        The attack statistic (:mod:`dpclaims.audits.scores`): a name in
        ``SCORE_NAMES`` ("auto", "fisher", "likelihood-ratio", "logistic",
        "gradient-boosting"), an instance of one of its score types, or a callable
        mapping outputs (n, k) to n reals ("guess D1" when high). None means
        "auto": chosen from the training outputs by
        :func:`~dpclaims.audits.scores.choose_score` (Fisher's discriminant for
        continuous vectors, the counted likelihood ratio for finite output
        spaces, a gradient-boosting classifier for mixed outputs). Fitted scores
        never see the held-out outputs; discrete scores are thresholded with
        randomisation at ties (exact binomial counts; module docstring of
        :mod:`~dpclaims.audits.scores`).
    seed : int
        Block b of dataset j in phase p (0 training, 1 held out) draws from
        ``SeedSequence(seed, spawn_key=(j, p, b))``; the tie-breaking uniforms of
        dataset j in phase p from ``(3, j, p)``; a two-output probe that fixes the
        output shape from ``(4, j)``. The same seed (and block size) gives the same
        result whatever ``workers`` or ``client``.
    workers : int, default 1
        Processes for the blocks (fork start method where available; elsewhere the
        mechanism must be picklable).
    client : dask.distributed.Client, optional
        Run the blocks on a Dask cluster instead (mechanism and data are scattered
        once); ``workers`` is then ignored.
    block_size : int
        Trials per block (memory is O(block_size x output size) per process).
    posterior_samples : int
        Monte Carlo draws for the credible bound.

    Returns
    -------
    AuditResult

    Raises
    ------
    InvalidMechanismError
        ``mechanism`` is not a mechanism; a release of the wrong length, of a shape
        that changes between calls or between the two datasets, or with non-finite
        values; a score of the wrong shape or with non-finite values.
    ScoreError
        An unknown score name (a ValueError).
    ValueError
        n_trials < 2, alpha outside (0, 1), a pair whose relation differs from the
        claim's, an unknown threshold strategy, ``"rank"`` for a claim with delta = 0,
        workers < 1.
    """
    mechanism = validate_mechanism(mechanism)
    claim: PrivacyClaim = mechanism.claim
    if not isinstance(pair, NeighbouringPair):
        raise TypeError(f"pair must be a NeighbouringPair, got {type(pair).__name__}")
    if pair.relation != claim.relation:
        raise ValueError(f"the pair is {pair.relation} but {mechanism.name!r} claims privacy "
                         f"under {claim.relation}: audit it on a {claim.relation} pair")
    n_trials = check_count(n_trials, "n_trials", minimum=2)
    alpha = check_probability(alpha, "alpha")
    strategy = as_threshold_strategy(threshold)
    workers = check_count(workers, "workers")
    block_size = check_count(block_size, "block_size")
    posterior_samples = check_count(posterior_samples, "posterior_samples")
    seed = check_count(seed, "seed", minimum=0)
    spec = as_score(score)
    delta = claim.delta
    if isinstance(strategy, RankThreshold) and delta == 0:
        raise ValueError(f"threshold 'rank' anchors its ranks at Gaussian mechanisms and needs "
                         f"a claim with delta > 0; {mechanism.name!r} claims delta = 0 (pure "
                         "DP): use 'split'")

    given_thresholds = (isinstance(strategy, ExplicitThreshold)
                        or (isinstance(strategy, BonferroniThresholds)
                            and strategy.grid is not None))
    needs_training = not (isinstance(spec, UserScore) and given_thresholds)
    n_train = min(max(1, round(strategy.train_fraction * n_trials)), n_trials - 1) \
        if needs_training else 0
    n_ho = n_trials - n_train
    if isinstance(strategy, RankThreshold) and n_ho < 2:
        raise ValueError(f"threshold 'rank' needs at least 2 held-out trials per dataset; "
                         f"n_trials = {n_trials} leaves {n_ho}")
    datasets = (pair.d0, pair.d1)

    # the output shape, fixed by a probe of two outputs per dataset before any trial; the
    # release's use of its rng is checked there at n = 2 and on the first training block
    # at its full size (_block); without a training phase, by the probe at the size of
    # the first held-out block
    sizes = (2,) if n_train else (2, min(block_size, n_ho))
    shapes = [output_shape(mechanism, d, np.random.default_rng(
        np.random.SeedSequence(seed, spawn_key=(4, j))), sizes) for j, d in enumerate(datasets)]
    if shapes[0] != shapes[1]:
        raise InvalidMechanismError(
            f"mechanism {mechanism.name!r}: outputs on d0 have shape {shapes[0]}, on d1 "
            f"{shapes[1]}: the two datasets' outputs must have one shape to be compared")
    shape = shapes[0]

    pool, shared = None, None
    if client is None and workers > 1:
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        if not isinstance(spec, UserScore):  # raw training outputs come back: share them
            shared = _shared_training_buffer(n_train, shape)
        _WORKER["shared"] = shared  # inherited by the forked workers
        pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                   initargs=(mechanism, datasets))
    remote = (mechanism, datasets)
    if client is not None:  # unique keys (hash=False), held until the audit ends
        remote = (client.scatter(mechanism, broadcast=True, hash=False),
                  client.scatter(datasets, broadcast=True, hash=False))
    threads = workers > 1 and client is None  # the statistics in two threads
    try:
        def submit(tasks, share=False):
            return _submit_blocks(tasks, *remote, seed, client, pool,
                                  shared if share else None, block_size)

        scorer, train_s, score_reason = None, None, ""
        if isinstance(spec, UserScore):
            scorer = spec.fn
            if n_train:
                tr = submit(_block_tasks(0, 0, n_train, block_size, scorer, shape)
                            + _block_tasks(1, 0, n_train, block_size, scorer, shape))()
                nb = len(tr) // 2
                train_s = (np.concatenate(tr[:nb]), np.concatenate(tr[nb:]))
            score_reason = "given by the user"
        else:
            tr = submit(_block_tasks(0, 0, n_train, block_size, None, shape)
                        + _block_tasks(1, 0, n_train, block_size, None, shape), share=True)()
            nb = len(tr) // 2
            t0, t1 = np.concatenate(tr[:nb]), np.concatenate(tr[nb:])  # copies
            if isinstance(spec, AutoScore):
                h0, h1 = max(1, len(t0) // 2), max(1, len(t1) // 2)
                spec, score_reason = choose_score(t0[:h0], t1[:h1], spec.classifiers,
                                                   threads=threads)
            else:
                score_reason = "named by the caller"
            if spec.fit_half and len(t0) >= 4 and len(t1) >= 4:
                h0, h1 = len(t0) // 2, len(t1) // 2
                scorer = spec.fit(t0[:h0], t1[:h1], seed)
                train_s = (_apply_score(t0[h0:], scorer, mechanism.name),
                           _apply_score(t1[h1:], scorer, mechanism.name))
            else:
                scorer = spec.fit(t0, t1, seed)
                train_s = (_apply_score(t0, scorer, mechanism.name),
                           _apply_score(t1, scorer, mechanism.name))
        # the held-out blocks run in the workers (or on the cluster) while the thresholds
        # are chosen here from the training scores alone
        gather_held_out = submit(_block_tasks(0, 1, n_ho, block_size, scorer, shape)
                                 + _block_tasks(1, 1, n_ho, block_size, scorer, shape))

        # discrete scores: randomised thresholds through independent seeded tie-breakers
        levels = None
        if train_s is not None and not given_thresholds:
            levels = score_levels(scorer, np.concatenate(train_s))

        def tie_break(x, which, phase):
            if levels is None:
                return x
            u = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(3, which, phase)))
            return randomise_ties(x, levels, u.random(len(x)))

        if levels is not None:
            train_s = (tie_break(train_s[0], 0, 0), tie_break(train_s[1], 1, 0))

        # thresholds fixed before the held-out counts are looked at
        selection = "given in advance"
        rank = None
        if isinstance(strategy, RankThreshold):
            candidates = claim_anchored_ranks(claim.epsilon, delta, n_ho, alpha,
                                              strategy.multipliers)
            rank, fitted = choose_rank(*train_s, candidates, n_ho, delta, alpha)
            grid = np.array([np.nan])  # the order statistic, once the held-out scores are in
            how = ("chosen on the training split by a normal fit" if fitted else
                   "the first, as the training scores have no spread to fit")
            selection = (f"at rank {rank} of the held-out D0 scores, {how}, from the ranks "
                         f"{candidates.tolist()} anchored at "
                         f"{', '.join(f'{c:g}' for c in strategy.multipliers)} x the claim")
        elif isinstance(strategy, ExplicitThreshold):
            grid = np.array([strategy.threshold])
        elif isinstance(strategy, BonferroniThresholds) and strategy.grid is not None:
            grid = np.asarray(strategy.grid)
        else:
            k = 1 if isinstance(strategy, SplitThreshold) else strategy.size
            cands = None if levels is None else discrete_threshold_grid(len(levels))
            grid, method = choose_thresholds(*train_s, n_ho, delta, alpha / k, k, cands,
                                             threads=threads)
            selection = f"chosen on the training split by the {method} ranking"
        ho = gather_held_out()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
            _WORKER.pop("shared", None)
    nb = len(ho) // 2
    s0, s1 = tie_break(np.concatenate(ho[:nb]), 0, 1), tie_break(np.concatenate(ho[nb:]), 1, 1)
    k = len(grid)
    ss0, ss1 = _sort_pair(s0, s1, threads)
    if rank is not None:
        grid = ss0[[n_ho - rank - 1]]
    fp, fn = error_counts(ss0, ss1, grid)
    # RankThreshold: k = rank of D0's held-out scores lie above t (fewer only at ties at
    # t); the false-positive bound uses k itself, as P0(score > t) <= Beta(k + 1, m - k)
    # for any distribution (Wilks), while false_positives reports the count
    fp_bound = fp if rank is None else np.array([rank])
    certs = np.atleast_1d(epsilon_lower_bound(fp_bound, n_ho, fn, n_ho, delta, alpha / k))
    best = int(np.argmax(certs))
    eps_lb = float(certs[best])
    fp_b, fn_b = int(fp[best]), int(fn[best])
    t_best, tie_p = threshold_in_score_units(float(grid[best]), levels)

    # the held-out scores are sorted once (ss0, ss1) for every estimate below
    def curves():
        pooled = _pooled(ss0, ss1)
        return (gdp_mu_estimate(ss0, ss1, presorted=True, pooled=pooled),
                tradeoff_curve(ss0, ss1, presorted=True, pooled=pooled))

    (mu, (tr_fpr, tr_fnr)), area = _in_threads(
        [curves, lambda: auroc(ss0, ss1, presorted=True)], threads)
    post_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
    score_name = spec.describe() if not isinstance(spec, UserScore) else "user score"
    if levels is not None:
        score_name += f"; randomised at ties over {len(levels)} levels"
    return AuditResult(
        mechanism=mechanism.name,
        claim=claim,
        pair=pair.to_dict(),
        epsilon_lower_bound=eps_lb,
        refutes_claim=bool(eps_lb > claim.epsilon),
        epsilon_gdp_estimate=epsilon_from_gdp(mu, delta) if delta > 0 else None,
        gdp_mu_estimate=mu,
        epsilon_credible_lower=credible_lower_bound(
            fp_b, n_ho, fn_b, n_ho, delta=delta, level=1 - alpha,
            n_samples=posterior_samples, rng=post_rng),
        auroc=area,
        tradeoff_fpr=tuple(tr_fpr),
        tradeoff_fnr=tuple(tr_fnr),
        threshold_strategy=f"{strategy.describe()}; threshold(s) {selection}",
        threshold=t_best,
        n_thresholds=k,
        score=score_name,
        n_trials=n_trials,
        n_train=n_train,
        n_held_out=n_ho,
        false_positives=fp_b,
        false_negatives=fn_b,
        fpr_upper=float(clopper_pearson_upper(int(fp_bound[best]), n_ho, alpha / (2 * k))),
        fnr_upper=float(clopper_pearson_upper(fn_b, n_ho, alpha / (2 * k))),
        alpha=alpha,
        seed=seed,
        block_size=block_size,
        posterior_samples=posterior_samples,
        score_name=spec.name,
        score_choice=score_reason,
        tie_probability=tie_p,
        held_out_scores=(s0, s1),
    )


def optimal_cp_limit(fpr_of: Callable, fnr_of: Callable, thresholds, n: int, delta: float,
                     alpha: float) -> float:
    """The statistical limit: the best Clopper-Pearson bound at n trials per dataset.

    Uses the known output distributions (``fpr_of(t)``, ``fnr_of(t)`` vectorised),
    their expected counts n FPR(t), n FNR(t) and the best threshold on the grid
    ``thresholds``; no trials spent on training. Benchmarks compare certificates
    with it.
    """
    t = np.asarray(thresholds, float)
    bounds = epsilon_lower_bound(n * fpr_of(t), n, n * fnr_of(t), n, delta, alpha)
    return float(np.max(bounds))
