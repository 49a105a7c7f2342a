"""Attack scores: the statistic an audit thresholds ("guess D1 when the score is high").

An audit (:func:`dpclaims.audits.core.audit`) turns a test "guess D1 when
score(output) > t" into a certified epsilon lower bound. The certificate is valid
for *any* score and threshold fixed before the held-out counts are seen; the score
decides only how strong the bound is. Every score here is fitted on the audit's
training split and never on the held-out outputs the certificate counts.

The scores
----------
``fisher``
    Fisher's linear discriminant ``w = (S + lambda I)^-1 (mean1 - mean0)``: the
    log-likelihood ratio of two Gaussians with a shared covariance, so the optimal
    test for Gaussian noise on a vector. Fitted on the whole training split (the
    threshold is chosen on the same outputs; k parameters against thousands of
    outputs overfit negligibly).
``likelihood-ratio``
    The exact likelihood ratio of a finite output space, estimated by counting:
    ``log (c1(x) + a) / (n1 + a K) - log (c0(x) + a) / (n0 + a K)``, with c_j(x)
    the number of training outputs of D_j equal to x (whole output rows compared
    bit for bit), K the number of distinct training outputs plus one bucket for
    every unseen output, and the pseudo-count ``a = prior`` (default 1/2, the
    Jeffreys / Krichevsky-Trofimov prior). An output never seen in training gets
    ``log (a / (n1 + a K)) - log (a / (n0 + a K))`` (0 when n0 = n1). By the
    Neyman-Pearson lemma, thresholding the likelihood ratio, randomised at the
    threshold, is the most powerful test on a finite output space.
``logistic``
    Logistic regression (scikit-learn, L2 penalty C = 1) on the standardised
    quadratic features ``(x_j, x_j^2)`` of every output coordinate j; the score
    is the fitted log-odds of D1 (monotone in the estimated posterior).
``gradient-boosting``
    scikit-learn's ``HistGradientBoostingClassifier`` (100 iterations, no early
    stopping, fixed ``random_state``) on the raw outputs; the score is its
    log-odds of D1. Non-linear: for mixed discrete-continuous outputs.

The two classifier scores follow DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev,
"DP-Sniper: Black-Box Discovery of Differential Privacy Violations using
Classifiers", IEEE S&P 2021): train a probabilistic classifier to tell the two
datasets' outputs apart, then threshold its estimated posterior. The fitted
scores other than Fisher's are fitted on the first half of the training split
and the threshold is chosen on the second half, so that the threshold sees
out-of-sample scores (an overfitted count or tree would otherwise look perfect
on its own outputs).

``auto`` (the default when no score is given) looks at the training outputs
only (:func:`choose_score`): a finite output space -> ``likelihood-ratio``;
every coordinate continuous -> ``fisher``; a mix -> ``gradient-boosting``. A
user's own ``score(outputs) -> (n,)`` is used as given (:class:`UserScore`).

A classifier is fitted on at most ``CLASSIFIER_MAX_TRAIN`` (50,000) training
outputs per dataset, and only by a final audit: the pair search's pilot audits
rank candidate pairs with a cheap score instead (:func:`pilot_score`: the counted
likelihood ratio or Fisher's discriminant).

Randomised thresholds
---------------------
A score with ties (a discrete one) is thresholded with randomisation at the
threshold, as DP-Sniper's optimal attack: "guess D1 when s > t, and with
probability p when s = t". This is implemented exactly by mapping the score s
to ``v = 2 rank(s) + u`` (rank of s among the finitely many training levels,
half-ranks between them, u ~ Uniform[0, 1) drawn per trial from a seeded stream
independent of the outputs) and thresholding v. Each held-out trial's decision
is then a Bernoulli draw independent of the others, so the error counts stay
exact binomials and the Clopper-Pearson certificate is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpclaims.analysis.validation import check_positive
from dpclaims.audits.registry import SCORES

SCORE_NAMES = tuple(SCORES)  # the names of dpclaims.audits.registry.SCORES

# choose_score's rule (stated in its docstring and in every audit's evidence)
DISCRETE_MAX_LEVELS = 10_000
DISCRETE_MIN_MEAN_COUNT = 10.0
CONTINUOUS_MIN_DISTINCT_FRACTION = 0.5
# a classifier is fitted on at most this many training outputs per dataset (stated in
# the score's description, hence in every audit's evidence)
CLASSIFIER_MAX_TRAIN = 50_000


class ScoreError(ValueError):
    """A score that cannot be used: an unknown name, or outputs it cannot score."""


# --------------------------------------------------------------------------- fitted scores


@dataclass(frozen=True)
class LinearScore:
    """``outputs (n, k) @ w (k,)``: Fisher's discriminant once fitted."""

    w: np.ndarray
    levels: Any = None

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        if outputs.shape[1] != self.w.size:
            raise ScoreError(f"outputs have {outputs.shape[1]} coordinates, the score was "
                             f"fitted on {self.w.size}")
        return outputs @ self.w


def _row_keys(outputs: np.ndarray) -> np.ndarray:
    """Each output row as one opaque (void) key, equal iff the rows are equal bit for bit.

    ``+ 0.0`` maps -0.0 to 0.0 so that the two zeros share a key.
    """
    x = np.ascontiguousarray(np.asarray(outputs, dtype=float) + 0.0)
    return x.view(np.dtype((np.void, x.dtype.itemsize * x.shape[1]))).ravel()


@dataclass(frozen=True)
class CountLikelihoodRatio:
    """The fitted likelihood-ratio score: a lookup table from output rows to log ratios.

    Attributes
    ----------
    keys : ndarray of void, sorted
        The distinct training outputs.
    values : ndarray (len(keys),)
        Their log likelihood ratios.
    unseen : float
        The log ratio of every output not in ``keys``.
    n_coordinates : int
        Output coordinates k the table was built on.
    levels : ndarray
        Sorted distinct values the score can take (for randomised thresholds).
    """

    keys: np.ndarray
    values: np.ndarray
    unseen: float
    n_coordinates: int
    levels: np.ndarray = field(repr=False)

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        if outputs.shape[1] != self.n_coordinates:
            raise ScoreError(f"outputs have {outputs.shape[1]} coordinates, the likelihood "
                             f"ratio was counted on {self.n_coordinates}")
        q = _row_keys(outputs)
        i = np.minimum(np.searchsorted(self.keys, q), len(self.keys) - 1)
        return np.where(self.keys[i] == q, self.values[i], self.unseen)


@dataclass(frozen=True)
class ClassifierLogOdds:
    """A fitted scikit-learn classifier: the score is its log-odds of D1."""

    model: Any
    quadratic: bool
    n_coordinates: int
    levels: Any = None
    # scikit-learn's OpenMP thread pool deadlocks in a forked worker: the audit's
    # process pool returns raw outputs and the parent applies this score
    score_in_parent: bool = field(default=True, init=False)

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        if outputs.shape[1] != self.n_coordinates:
            raise ScoreError(f"outputs have {outputs.shape[1]} coordinates, the classifier "
                             f"was fitted on {self.n_coordinates}")
        x = _quadratic(outputs) if self.quadratic else outputs
        return np.asarray(self.model.decision_function(x), dtype=float)


def _quadratic(x: np.ndarray) -> np.ndarray:
    return np.hstack([x, x * x])


# --------------------------------------------------------------------------- the protocol


@dataclass(frozen=True)
class TrainedScore:
    """The audit's score after its training phase.

    ``score``: the score used (``auto``'s choice); ``scorer``: outputs (n, ...) -> (n,);
    ``train_scores``: the training scores the threshold is chosen on (two arrays, D0's
    and D1's; None when no trials were spent on training); ``reason``: why this score;
    ``description``: the score as the audit's result names it.
    """

    score: AttackScore
    scorer: Callable
    train_scores: tuple | None
    reason: str
    description: str


class AttackScore:
    """The protocol of an attack score, with its default hooks.

    A score is a frozen dataclass with a ``name`` and ``describe() -> str``. A fitted
    score implements ``fit(train0, train1, seed) -> scorer`` (outputs (n, ...) -> (n,))
    and says with ``fit_half`` whether it is fitted on the first half of the training
    outputs (the threshold then sees out-of-sample scores). The audit
    (:func:`dpclaims.audits.core.audit`) calls:

    ``given_scorer()``
        The scorer when nothing is fitted (a user's score: the blocks are scored where
        they are drawn, and with thresholds given in advance no trials train); default
        None.
    ``train(draw, seed, apply, *, threads) -> TrainedScore``
        The training phase: ``draw(None)`` gives the raw training outputs of D0 and D1,
        ``draw(scorer)`` their scores (None when no trials train); ``apply(outputs,
        scorer)`` scores outputs, checking the scores' shape. Default: fit
        (:meth:`fitted_on`) on the raw outputs.
    ``for_pilot()``
        The score of the pair search's pilot audits (default: itself).
    """

    name: str
    fit_half: bool = False

    def given_scorer(self) -> Callable | None:
        return None

    def fit(self, train0: np.ndarray, train1: np.ndarray, seed: int) -> Callable:
        raise NotImplementedError(f"score {self.name!r} is not fitted")

    def train(self, draw: Callable, seed: int, apply: Callable, *,
              threads: bool = False) -> TrainedScore:
        return self.fitted_on(*draw(None), seed, apply, "named by the caller")

    def fitted_on(self, t0: np.ndarray, t1: np.ndarray, seed: int, apply: Callable,
                  reason: str) -> TrainedScore:
        """Fit on the training outputs t0, t1 (on their first halves with ``fit_half``,
        given at least 4 each) and score the training outputs the fit did not see (all
        of them without ``fit_half``)."""
        if self.fit_half and len(t0) >= 4 and len(t1) >= 4:
            h0, h1 = len(t0) // 2, len(t1) // 2
            scorer = self.fit(t0[:h0], t1[:h1], seed)
            train_s = (apply(t0[h0:], scorer), apply(t1[h1:], scorer))
        else:
            scorer = self.fit(t0, t1, seed)
            train_s = (apply(t0, scorer), apply(t1, scorer))
        return TrainedScore(self, scorer, train_s, reason, self.describe())

    def for_pilot(self) -> AttackScore:
        return self

    def describe(self) -> str:
        raise NotImplementedError


# --------------------------------------------------------------------------- score types


@dataclass(frozen=True)
class FisherScore(AttackScore):
    """Fisher's linear discriminant (module docstring), ridge ``ridge * tr(S) / k``."""

    ridge: float = 1e-6
    name: str = field(default="fisher", init=False)
    fit_half: bool = field(default=False, init=False)

    def __post_init__(self):
        check_positive(self.ridge, "ridge")

    def fit(self, train0: np.ndarray, train1: np.ndarray, seed: int) -> LinearScore:
        """Fit on training outputs (n0, k) and (n1, k); ``seed`` is unused (deterministic)."""
        diff = train1.mean(axis=0) - train0.mean(axis=0)
        k = diff.size
        if len(train0) + len(train1) <= k + 2:
            w = diff
        else:
            cov = np.atleast_2d((np.cov(train0, rowvar=False)
                                 + np.cov(train1, rowvar=False)) / 2)
            ridge = self.ridge * max(np.trace(cov) / k, 1e-300)
            w = np.linalg.solve(cov + ridge * np.eye(k), diff)
        if not np.any(w) or not np.all(np.isfinite(w)):
            w = np.ones(k)
        return LinearScore(w)

    def describe(self) -> str:
        return "Fisher linear discriminant fitted on the training split"


@dataclass(frozen=True)
class LikelihoodRatioScore(AttackScore):
    """The counted likelihood ratio of a finite output space (module docstring).

    Parameters
    ----------
    prior : float, default 0.5
        Pseudo-count a > 0 added to every output's count, seen or not.
    """

    prior: float = 0.5
    name: str = field(default="likelihood-ratio", init=False)
    fit_half: bool = field(default=True, init=False)

    def __post_init__(self):
        check_positive(self.prior, "prior")

    def fit(self, train0: np.ndarray, train1: np.ndarray, seed: int) -> CountLikelihoodRatio:
        """Count the distinct rows of (n0, k) and (n1, k) training outputs."""
        n0, n1 = len(train0), len(train1)
        k0, k1 = _row_keys(train0), _row_keys(train1)
        keys, inverse = np.unique(np.concatenate([k0, k1]), return_inverse=True)
        c0 = np.bincount(inverse[:n0], minlength=len(keys))
        c1 = np.bincount(inverse[n0:], minlength=len(keys))
        a = self.prior
        big_k = len(keys) + 1
        z0, z1 = np.log(n0 + a * big_k), np.log(n1 + a * big_k)
        values = (np.log(c1 + a) - z1) - (np.log(c0 + a) - z0)
        unseen = float((np.log(a) - z1) - (np.log(a) - z0))
        levels = np.unique(np.append(values, unseen))
        return CountLikelihoodRatio(keys, values, unseen, train0.shape[1], levels)

    def describe(self) -> str:
        return (f"likelihood ratio of the outputs counted on half the training split "
                f"(pseudo-count {self.prior:g} per output, seen or unseen), threshold "
                "randomised at ties")


@dataclass(frozen=True)
class ClassifierScore(AttackScore):
    """A probabilistic classifier's log-odds of D1 (DP-Sniper; module docstring).

    Parameters
    ----------
    model : {"logistic", "gradient-boosting"}
    """

    model: str = "gradient-boosting"
    max_train: int = CLASSIFIER_MAX_TRAIN
    fit_half: bool = field(default=True, init=False)

    def __post_init__(self):
        if self.model not in ("logistic", "gradient-boosting"):
            raise ScoreError(f"classifier model must be 'logistic' or 'gradient-boosting', "
                             f"got {self.model!r}")
        if isinstance(self.max_train, bool) or not isinstance(self.max_train, int) \
                or self.max_train < 2:
            raise ScoreError(f"max_train must be an integer >= 2, got {self.max_train!r}")

    @property
    def name(self) -> str:
        return self.model

    def for_pilot(self) -> AttackScore:
        return AutoScore(classifiers=False)

    def fit(self, train0: np.ndarray, train1: np.ndarray, seed: int) -> ClassifierLogOdds:
        """Fit on (n0, k) and (n1, k) training outputs, labels 0 and 1 (equal priors).

        At most ``max_train`` outputs per dataset are used: the first ones (the
        outputs are independent draws, so the first m are a sample of m).
        """
        train0, train1 = train0[:self.max_train], train1[:self.max_train]
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        x = np.vstack([train0, train1])
        y = np.concatenate([np.zeros(len(train0)), np.ones(len(train1))])
        if self.model == "logistic":
            model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
            model.fit(_quadratic(x), y)
            return ClassifierLogOdds(model, True, x.shape[1])
        model = HistGradientBoostingClassifier(max_iter=100, early_stopping=False,
                                               random_state=seed % (2**32))
        model.fit(x, y)
        return ClassifierLogOdds(model, False, x.shape[1])

    def describe(self) -> str:
        cap = f", at most {self.max_train:,} outputs per dataset"
        if self.model == "logistic":
            return ("logistic regression on standardised quadratic features (x_j, x_j^2), "
                    f"fitted on half the training split{cap} (DP-Sniper)")
        return ("HistGradientBoostingClassifier on the raw outputs, fitted on half the "
                f"training split{cap} (DP-Sniper)")


@dataclass(frozen=True)
class UserScore(AttackScore):
    """A user's ``score(outputs (n, k)) -> (n,)``, used as given (nothing fitted)."""

    fn: Callable
    name: str = field(default="user score", init=False)
    fit_half: bool = field(default=False, init=False)

    def __post_init__(self):
        if not callable(self.fn):
            raise ScoreError(f"a user score must be callable, got {self.fn!r}")

    def fit(self, train0, train1, seed):
        return self.fn

    def given_scorer(self) -> Callable:
        return self.fn

    def train(self, draw, seed, apply, *, threads=False) -> TrainedScore:
        return TrainedScore(self, self.fn, draw(self.fn), "given by the user", "user score")

    def describe(self) -> str:
        return f"user score {getattr(self.fn, '__name__', repr(self.fn))}"


@dataclass(frozen=True)
class AutoScore(AttackScore):
    """Choose the score from the training outputs (:func:`choose_score`).

    ``classifiers=False`` (the pair search's pilots, :func:`pilot_score`): never a
    classifier; mixed outputs get Fisher's discriminant.
    """

    classifiers: bool = True
    name: str = field(default="auto", init=False)

    def train(self, draw, seed, apply, *, threads=False) -> TrainedScore:
        """Choose the score on the first half of the training outputs, then fit it."""
        t0, t1 = draw(None)
        h0, h1 = max(1, len(t0) // 2), max(1, len(t1) // 2)
        chosen, reason = choose_score(t0[:h0], t1[:h1], self.classifiers, threads=threads)
        return chosen.fitted_on(t0, t1, seed, apply, reason)

    def for_pilot(self) -> AttackScore:
        return AutoScore(classifiers=False)

    def describe(self) -> str:
        return "auto: chosen from the training outputs (choose_score)"


def as_score(score) -> AttackScore:
    """None / a name in :data:`~dpclaims.audits.registry.SCORES` / a score instance / a
    callable (a :class:`UserScore`).

    Raises
    ------
    ScoreError
        An unknown name (the message lists the known ones) or another type.
    """
    if score is None:
        return AutoScore()
    if isinstance(score, AttackScore):
        return score
    if isinstance(score, str):
        if score not in SCORES:
            raise ScoreError(f"unknown score {score!r}; known scores: {', '.join(SCORE_NAMES)} "
                             "(or a callable outputs -> (n,))")
        return SCORES[score].build()
    if callable(score):
        return UserScore(score)
    raise ScoreError(f"score must be None, a name ({', '.join(SCORE_NAMES)}), a score "
                     f"instance or a callable, got {type(score).__name__}: {score!r:.80}")


def pilot_score(score) -> AttackScore:
    """The score for the pair search's pilot audits: ``score`` unless it fits a classifier.

    A pilot only ranks candidate pairs, so it uses a cheap score: a classifier
    (``logistic``, ``gradient-boosting``, or ``auto`` on mixed outputs) is replaced
    by ``auto`` without classifiers (the counted likelihood ratio on a finite
    output space, else Fisher's discriminant). The classifier is then fitted once,
    by the final audit on the chosen pair. Fisher, the likelihood ratio and a
    user's own score are kept as given.

    Raises
    ------
    ScoreError
        As :func:`as_score`.
    """
    return as_score(score).for_pilot()


def _in_threads(calls, threads: bool) -> list:
    """The values of the zero-argument ``calls``, in order; with ``threads`` they run in a
    pool of two threads. Used for the audit's statistics (here and in
    :mod:`dpclaims.audits.core`) when it is given two or more workers: numpy's sorts and
    searches and scipy's beta quantiles release the GIL, so two threads do them in about
    half the time. The values do not depend on it."""
    if not threads or len(calls) < 2:
        return [c() for c in calls]
    with ThreadPoolExecutor(2) as ex:
        futures = [ex.submit(c) for c in calls]
        return [f.result() for f in futures]


def _distinct_per_column(x: np.ndarray, threads: bool = False) -> np.ndarray:
    """Distinct values in each column of the finite array x (n, k): (k,) ints.

    ``threads``: the first and the second half of the columns are sorted in two threads
    (numpy's sort releases the GIL; the same counts).
    """
    columns = np.ascontiguousarray(x.T)  # one row per coordinate (sorting the strided
    h = columns.shape[0] // 2            # view in place of this copy took twice as long)
    _in_threads([lambda: columns[:h].sort(axis=1), lambda: columns[h:].sort(axis=1)],
                threads)
    return 1 + np.count_nonzero(columns[:, 1:] != columns[:, :-1], axis=1)


def _distinct_rows(x: np.ndarray, per_coord: np.ndarray) -> int:
    """Distinct rows of x (n, k) whose columns have ``per_coord`` distinct values."""
    if x.shape[1] == 1:
        return int(per_coord[0])
    # np.unique_values hashes where numpy has it (the count only, no sorted copy)
    return len(np.unique_values(_row_keys(x)))


def choose_score(train0: np.ndarray, train1: np.ndarray,
                 classifiers: bool = True, *, threads: bool = False) -> tuple[AttackScore, str]:
    """The score for these training outputs, and the sentence saying why.

    The rule (training outputs of both datasets pooled, n rows of k coordinates):

    * at most ``DISCRETE_MAX_LEVELS`` (10,000) distinct rows, seen on average at
      least ``DISCRETE_MIN_MEAN_COUNT`` (10) times each: a finite output space ->
      ``likelihood-ratio`` (the optimal test there);
    * otherwise, if every coordinate takes at least
      ``CONTINUOUS_MIN_DISTINCT_FRACTION`` (half) as many distinct values as there
      are rows: continuous -> ``fisher`` (optimal for Gaussian noise on a vector);
    * otherwise (some coordinates discrete, some continuous) -> ``gradient-boosting``
      (``fisher`` when ``classifiers`` is False: the pair search's cheap pilots).
    """
    x = np.vstack([train0, train1])
    n, k = x.shape
    # distinct values per coordinate: one sort of the contiguous columns (-0.0 == 0.0, as
    # in _row_keys). Distinct rows number at least the largest of them, so when a
    # coordinate alone has more than DISCRETE_MAX_LEVELS values the first rule fails
    # without hashing the rows (0.23 s of a 32-coordinate audit's 200,000 training
    # outputs, issue 23); the rows are counted exactly whenever their number is used.
    per_coord = _distinct_per_column(x, threads)
    distinct_rows = None
    if per_coord.max() <= DISCRETE_MAX_LEVELS:
        distinct_rows = _distinct_rows(x, per_coord)
        if (distinct_rows <= DISCRETE_MAX_LEVELS
                and n / distinct_rows >= DISCRETE_MIN_MEAN_COUNT):
            return LikelihoodRatioScore(), (
                f"auto: {distinct_rows} distinct outputs in {n} training outputs (finite "
                "output space) -> likelihood ratio")
    if np.all(per_coord >= CONTINUOUS_MIN_DISTINCT_FRACTION * n):
        return FisherScore(), (
            f"auto: every one of the {k} output coordinates is continuous (at least "
            f"{int(per_coord.min())} distinct values in {n} outputs) -> Fisher's linear "
            "discriminant")
    n_discrete = int(np.sum(per_coord < CONTINUOUS_MIN_DISTINCT_FRACTION * n))
    if distinct_rows is None:
        distinct_rows = _distinct_rows(x, per_coord)
    if not classifiers:
        return FisherScore(), (
            f"auto without classifiers (a pilot): mixed outputs ({n_discrete} of {k} "
            f"coordinates discrete, {distinct_rows} distinct rows in {n}) -> Fisher's linear "
            "discriminant")
    return ClassifierScore("gradient-boosting"), (
        f"auto: mixed outputs ({n_discrete} of {k} coordinates discrete, {distinct_rows} "
        f"distinct rows in {n}) -> gradient-boosting classifier")


# --------------------------------------------------------------------------- randomisation


def score_levels(fitted, train_scores: np.ndarray) -> np.ndarray | None:
    """The finite level set to randomise ties over, or None for a continuous score.

    A fitted score that knows its levels (the likelihood ratio) gives them; any
    other score is treated as discrete when fewer than half of its training scores
    are distinct, and its levels are then the distinct training scores.
    """
    levels = getattr(fitted, "levels", None)
    if levels is not None:
        return np.asarray(levels, dtype=float)
    distinct = np.unique(train_scores)
    if distinct.size < 0.5 * train_scores.size:
        return distinct
    return None


def randomise_ties(scores: np.ndarray, levels: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``v = 2 rank(s) + u``: a score whose thresholds are randomised thresholds of s.

    ``rank`` is the index of s in the sorted ``levels``; a value between two
    levels gets the odd half-rank between them. ``u`` (same shape as ``scores``)
    are independent Uniform[0, 1) draws. "v > t" with 2i <= t < 2i + 1 means
    "s > levels[i], or s = levels[i] with probability 2i + 1 - t".
    """
    i = np.searchsorted(levels, scores, side="left")
    hit = (i < len(levels)) & (levels[np.minimum(i, len(levels) - 1)] == scores)
    return 2.0 * i - np.where(hit, 0.0, 1.0) + u


def threshold_in_score_units(t: float, levels: np.ndarray | None) -> tuple[float, float | None]:
    """(threshold, probability of guessing D1 at a tie) for a threshold t on v.

    For a continuous score (``levels`` None) the threshold is t itself and there is
    no tie probability.
    """
    if levels is None:
        return float(t), None
    j = int(np.floor(t / 2))
    if j < 0:  # below every level: always "guess D1"
        return float(levels[0]), 1.0
    if j >= len(levels):  # above every level: never
        return float(levels[-1]), 0.0
    r = t - 2 * j
    # inside level j's band: randomised at s = levels[j]; in the gap above it: s > levels[j]
    return float(levels[j]), float(1 - r) if r < 1 else 0.0
