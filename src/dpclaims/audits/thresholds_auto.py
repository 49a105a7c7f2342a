"""The automatic threshold design: the rank design at a rank the training data choose, or
the split where a rank design does not fit.

A threshold strategy in a module of its own (:class:`AutoThreshold`, named ``"auto"`` in
:data:`dpclaims.audits.registry.THRESHOLDS`), built from the two designs it chooses
between: the split's threshold (:func:`dpclaims.audits.thresholds.choose_thresholds`,
counted on the held-out outputs) and the rank design's order statistic
(:func:`dpclaims.audits.thresholds_rank.certify_at_rank`). The choice, its validity and
its measured cost are stated in the class docstring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import dp_accounting
import numpy as np
from scipy.stats import binom
from scipy.stats import norm as _normal

from dpclaims.analysis.intervals import clopper_pearson_upper
from dpclaims.analysis.validation import check_count, check_probability
from dpclaims.audits.certificate import Certificate, _sort_pair
from dpclaims.audits.thresholds import Choice, ThresholdStrategy, _chosen_on_training
from dpclaims.audits.thresholds_rank import (
    RankChoice,
    certify_at_rank,
    gaussian_best_ranks,
    rank_grid,
)

# the largest multiple of the claimed epsilon at which AutoThreshold anchors a rank (as
# RankThreshold's largest multiplier)
MAX_MULTIPLIER = 4.0


@dataclass(frozen=True)
class AutoThreshold(ThresholdStrategy):
    """A rank design whose rank the training split estimates, or the split design where a
    rank design does not fit; chosen on the training outputs alone.

    Training: for a claim with delta > 0, ``train_fraction`` of the trials per dataset
    (default 5 %) but at least ``min_training`` (default 400) and at most
    ``split_fraction`` (default 20 %); for a pure-DP claim (delta = 0), ``split_fraction``.
    The training outputs fit the score and make the choice; the other m trials per
    dataset are held out.

    The choice, from the training scores only:

    * a pure-DP claim, a discrete score (``levels``: randomised response, a histogram) or no
      training scores: the split's threshold (the choice of
      :class:`~dpclaims.audits.thresholds.SplitThreshold` at m held-out trials) and its
      certificate, the Clopper-Pearson bounds of the held-out counts at that threshold;
    * a continuous score: the rank design (the certificate of
      :class:`~dpclaims.audits.thresholds_rank.RankThreshold`: the threshold is the order
      statistic of D0's held-out scores with k above it), at a rank chosen from the binormal
      shift of the training scores, mu = sqrt(2) Phi^-1(AUROC), and the lower end mu_low of
      its one-sided normal interval (``z`` standard errors, default 1; the AUROC's standard
      error by DeLong, DeLong & Clarke-Pearson 1988, Biometrics 44, eq. 2-4); the AUROC, and
      so the choice, is the same for every increasing transform of the score. First the rank
      most likely to refute the claim (:func:`refutation_power` on the rank grid
      :func:`~dpclaims.audits.thresholds_rank.rank_grid` at mu, capped at the mu of the
      Gaussian mechanism at ``MAX_MULTIPLIER`` x the claimed epsilon), when that probability
      is at least ``power_floor`` (default 0.02); else the rank best on expected counts
      (:func:`~dpclaims.audits.thresholds_rank.gaussian_best_ranks`) at mu_low clipped to
      [the claim's mu, the cap]: the claim's own rank unless the training outputs show a
      stronger mechanism. When the upper end of mu's interval at 3 ``z`` standard errors
      lies below the claim's mu (a mechanism clearly weaker than its claim), the split's
      threshold: a score fitted on the training outputs (Fisher's on a whole run's trace)
      separates them better than the held-out ones, so their AUROC overstates mu and a
      rank from it would be too small (measured on ``examples/algorithms.py``'s
      dpsep_as_printed: training AUROC 0.542, held-out 0.523, certificate 0 at the rank
      it pointed to). Where that Gaussian model certifies nothing at m trials (a claim
      too small for the audit), the split's threshold.

    Why: at 10^4 trials the split spends 20 % of them on training and its certificate
    rests on two noisy counts at a threshold chosen from noisy training rates; the rank
    design fixes the false-positive count, and with 5 % training holds out 95 % (the
    held-out share alone caps a design at 0.95 of the statistical limit with 10 %
    training at eps 0.5 and 10^4 trials, at 0.976 with 5 %;
    ``benchmarks/audit_tightness.py``). For a mechanism at its claim the claim's rank is
    the best on expected counts; for a stronger one the certificate is more often above
    the claim at a smaller rank than the expected-count best, as its spread is larger
    there. At the claim the projected refutation probability is about 0 at every rank
    (below 1e-3 for eps 0.5 to 2 up to 1.5 x the claim's mu at 9500 trials), so the
    power rule moves only audits whose training outputs show a clearly stronger
    mechanism. The Gaussian model decides how tight and how powerful the audit is, never
    whether its certificate is valid: it is wrong for scores whose best test is far from
    the tails, which is why a discrete score gets the split.

    Validity: the choice (which design, which threshold or rank) is a function of the
    training scores, the claim and m only, all fixed before any held-out output is
    counted; the held-out outputs are independent of the training ones. Given the
    choice, the certificate is the chosen design's own bound at significance alpha (the
    Clopper-Pearson bounds of binomial counts at a fixed threshold; or Wilks' Beta(k +
    1, m - k) bound on the false-positive rate above D0's order statistic and the
    binomial count of D1 below it), so it holds with probability 1 - alpha conditionally
    on the training outputs, hence unconditionally; no union bound over the designs is
    needed, as only one is certified.
    """

    train_fraction: float = 0.05
    min_training: int = 400
    split_fraction: float = 0.2
    z: float = 1.0
    power_floor: float = 0.02

    def __post_init__(self):
        object.__setattr__(self, "train_fraction", check_probability(self.train_fraction,
                                                                     "train_fraction"))
        object.__setattr__(self, "split_fraction", check_probability(self.split_fraction,
                                                                     "split_fraction"))
        if self.train_fraction > self.split_fraction:
            raise ValueError(f"train_fraction ({self.train_fraction}) must be at most "
                             f"split_fraction ({self.split_fraction})")
        object.__setattr__(self, "min_training", check_count(self.min_training, "min_training"))
        if isinstance(self.z, bool) or not isinstance(self.z, (int, float)) \
                or not math.isfinite(self.z) or self.z < 0:
            raise ValueError(f"z must be a finite number >= 0, got {self.z!r}")
        object.__setattr__(self, "z", float(self.z))
        object.__setattr__(self, "power_floor", check_probability(self.power_floor,
                                                                  "power_floor"))

    def training_trials(self, n_trials: int, claim) -> int:
        if claim.delta == 0:
            n = self.split_fraction * n_trials
        else:
            n = min(self.split_fraction * n_trials,
                    max(self.train_fraction * n_trials, self.min_training))
        return min(max(1, round(n)), n_trials - 1)

    def choose(self, train_scores, *, levels, n_held_out, claim, alpha, threads=False) -> Choice:
        if claim.delta == 0 or levels is not None or train_scores is None:
            return self._split(train_scores, levels, n_held_out, claim, alpha, threads,
                               "pure DP" if claim.delta == 0 else
                               "a discrete score" if levels is not None else "no training")
        s0, s1 = train_scores
        if min(len(s0), len(s1)) < 2:
            return self._split(train_scores, levels, n_held_out, claim, alpha, threads,
                               "fewer than 2 training scores per dataset")
        area, se = auroc_with_standard_error(s0, s1)
        low = area - self.z * se
        mu_low = math.sqrt(2.0) * float(_normal.ppf(low)) if low > 0.5 else 0.0
        with np.errstate(divide="ignore"):  # as in claim_anchored_ranks
            mu_claim, mu_cap = (1.0 / dp_accounting.get_sigma_gaussian(c * claim.epsilon,
                                                                        claim.delta)
                                for c in (1.0, MAX_MULTIPLIER))
        mu_hat = math.sqrt(2.0) * float(_normal.ppf(area)) if area > 0.5 else 0.0
        fitted = (f"training AUROC {area:.4f} +- {se:.4f}, mu = {mu_hat:.4g}, mu_low = "
                  f"{mu_low:.4g}, claim's mu = {mu_claim:.4g}")
        ks = rank_grid(n_held_out)
        power = refutation_power(ks, n_held_out, min(mu_hat, mu_cap), claim.epsilon,
                                 claim.delta, alpha)
        best = int(np.argmax(power))
        if power[best] >= self.power_floor:
            return RankChoice(np.array([np.nan]), (
                f"auto: at rank {ks[best]} of the held-out D0 scores, the most likely to refute "
                f"the claim (projected probability {power[best]:.3f}; {fitted})"), int(ks[best]))
        # a mechanism clearly weaker than its claim (the upper end of mu's interval at 3 z
        # standard errors below the claim's mu): the split, whose threshold follows the
        # training scores wherever the best test lies (a score fitted on the training
        # outputs, e.g. Fisher's on a whole run's trace, separates them better than it
        # will the held-out ones, so a rank from their AUROC would be too small)
        high = min(area + 3 * self.z * se, 1 - 1e-12)
        mu_up = math.sqrt(2.0) * float(_normal.ppf(high)) if high > 0.5 else 0.0
        if mu_up < mu_claim:
            return self._split(train_scores, levels, n_held_out, claim, alpha, threads,
                               f"a mechanism weaker than its claim: {fitted}, upper end "
                               f"{mu_up:.4g}")
        mu = min(max(mu_low, mu_claim), mu_cap)
        (rank,), (expected,) = gaussian_best_ranks([mu], n_held_out, claim.delta, alpha)
        if not expected > 0:
            return self._split(train_scores, levels, n_held_out, claim, alpha, threads,
                               f"the Gaussian model at mu = {mu:.4g} certifies nothing at "
                               f"{n_held_out} held-out trials")
        anchor = "the claim's" if mu == mu_claim else "mu_low's"
        return RankChoice(np.array([np.nan]), (
            f"auto: at rank {rank} of the held-out D0 scores ({anchor} best rank on expected "
            f"counts; {fitted})"), int(rank))

    def _split(self, train_scores, levels, n_held_out, claim, alpha, threads, why) -> Choice:
        c = _chosen_on_training(train_scores, levels, n_held_out, claim.delta, alpha, 1, threads)
        return Choice(c.thresholds, f"auto: the split design ({why}), {c.record}")

    def certify(self, choice: Choice, held_out: tuple, alpha: float,
                delta: float) -> Certificate:
        if isinstance(choice, RankChoice):
            return certify_at_rank(choice, held_out, alpha, delta)
        return super().certify(choice, held_out, alpha, delta)

    def describe(self) -> str:
        return (f"auto: {self.train_fraction:.0%} of the trials per dataset (at least "
                f"{self.min_training}, at most {self.split_fraction:.0%}; {self.split_fraction:.0%}"
                " for a pure-DP claim) train the score and choose the design: for a continuous "
                "score an order statistic of D0's held-out scores at the rank best for the "
                "Gaussian shift the training AUROC bounds from below (at least the claim's), "
                "else the split's threshold; the held-out rest gives the certificate "
                "(significance alpha at one threshold)")


def refutation_power(ranks, n: int, mu: float, epsilon: float, delta: float,
                     alpha: float) -> np.ndarray:
    """The probability that the rank design's certificate exceeds the claimed ``epsilon``
    at each of ``ranks`` (k,), for outputs N(0, 1) against N(mu, 1) at n held-out trials
    per dataset, with the threshold at its expected place Phi^-1(1 - k / n) (the order
    statistic's own spread, which adds to the certificate's, is left out: a heuristic
    for a choice, never a bound).

    The certificate at rank k exceeds epsilon exactly when the Clopper-Pearson upper
    bound (alpha / 2) of the false-negative count lies below u* = max(1 - delta -
    e^epsilon fpr_u, (1 - delta - fpr_u) e^-epsilon), fpr_u the bound of k in n
    (:func:`~dpclaims.audits.certificate.epsilon_from_rates`), that is when the count is
    at most the largest c with P(Bin(n, u*) <= c) < alpha / 2; the probability is then
    P(Bin(n, Phi(Phi^-1(1 - k / n) - mu)) <= c). Returns (k,) probabilities.
    """
    ks = np.asarray(ranks, dtype=np.int64)
    fpr_u = clopper_pearson_upper(ks, n, alpha / 2)
    u = np.clip(np.maximum(1 - delta - np.exp(epsilon) * fpr_u,
                           (1 - delta - fpr_u) * np.exp(-epsilon)), 0.0, 1.0)
    c = binom.ppf(alpha / 2, n, u) - 1  # the largest count whose bound is below u*
    return binom.cdf(c, n, _normal.cdf(_normal.isf(ks / n) - mu))


def auroc_with_standard_error(scores0, scores1) -> tuple[float, float]:
    """(AUROC, its standard error) of "guess D1 when the score is high".

    AUROC = P(score1 > score0) + P(tie) / 2; its variance by DeLong, DeLong &
    Clarke-Pearson (1988, Biometrics 44, 837-845, eq. 2-4): var(V10) / n1 + var(V01) /
    n0 with the placements V10_i (the fraction of scores0 below scores1_i, ties a half)
    and V01_j (the fraction of scores1 above scores0_j). ``scores0`` (n0,), ``scores1``
    (n1,), any order. Raises ValueError with fewer than 2 scores per dataset or a
    non-finite score.
    """
    s0, s1 = (np.asarray(x, dtype=float).ravel() for x in (scores0, scores1))
    if min(s0.size, s1.size) < 2:
        raise ValueError(f"the AUROC's standard error needs at least 2 scores per dataset, "
                         f"got {s0.size} and {s1.size}")
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        raise ValueError("scores must be finite (NaN or inf found)")
    s0, s1 = _sort_pair(s0, s1, threads=False)
    v10 = (np.searchsorted(s0, s1, side="left") + np.searchsorted(s0, s1, side="right")) \
        / (2.0 * s0.size)
    v01 = 1.0 - (np.searchsorted(s1, s0, side="left") + np.searchsorted(s1, s0, side="right")) \
        / (2.0 * s1.size)
    area = float(v10.mean())
    return area, float(math.sqrt(v10.var(ddof=1) / s1.size + v01.var(ddof=1) / s0.size))

