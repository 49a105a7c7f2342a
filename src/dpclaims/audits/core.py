"""Empirical privacy audits: certified epsilon lower bounds from a distinguishing attack.

The statistics (Jagielski et al. 2020; Nasr et al. 2021; Kairouz et al. 2015)
-----------------------------------------------------------------------------
A mechanism M is (epsilon, delta)-DP only if every test of H0: "the output came
from D0" against H1: "from D1" has false-positive rate FPR and false-negative
rate FNR with

    FPR + e^epsilon FNR >= 1 - delta   and   FNR + e^epsilon FPR >= 1 - delta.

Given one-sided Clopper-Pearson upper bounds FPR_u, FNR_u, each at level alpha/2
(Bonferroni: both hold together with probability >= 1 - alpha), the certificate is

    epsilon_lb = max(0, log((1 - delta - FNR_u) / FPR_u), log((1 - delta - FPR_u) / FNR_u)),

which is <= the true epsilon with probability >= 1 - alpha whatever the mechanism.

Threshold strategy "split": half of each sample (the training split) fits the score
(a linear projection, the likelihood-ratio statistic for Gaussian noise of equal
isotropic covariance: w = mean_1 - mean_0 of the training outputs) and chooses the
threshold that maximises the training-split bound; the other half, never used for
those choices, gives the counts the certificate rests on. One significance budget
alpha per audit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from dpclaims.analysis.validation import (
    check_count,
    check_delta,
    check_finite_array,
    check_probability,
)


def clopper_pearson_upper(count, nobs, level_alpha: float) -> np.ndarray:
    """One-sided (1 - level_alpha) Clopper-Pearson upper bound on a binomial rate.

    ``count`` and ``nobs`` broadcast; uses statsmodels' "beta" interval with
    two-sided alpha = 2 * level_alpha (its upper end is the one-sided bound).
    """
    _, upper = proportion_confint(np.asarray(count), np.asarray(nobs),
                                  alpha=2 * level_alpha, method="beta")
    return np.asarray(upper, dtype=float)


def epsilon_lower_bound(fp, n_negative, fn, n_positive, delta: float, alpha: float):
    """Certified epsilon lower bound from attack error counts (module docstring).

    Parameters
    ----------
    fp, fn : int or array
        False positives among ``n_negative`` outputs of D0; false negatives among
        ``n_positive`` outputs of D1 (arrays broadcast: one bound per threshold).
    delta : float
        The claim's delta, in [0, 1).
    alpha : float
        Total significance, in (0, 1); alpha/2 per error rate.

    Returns
    -------
    float or ndarray
        epsilon_lb >= 0 (nats).
    """
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    fpr_u = clopper_pearson_upper(fp, n_negative, alpha / 2)
    fnr_u = clopper_pearson_upper(fn, n_positive, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(np.clip(1 - delta - fnr_u, 0, None) / fpr_u)
        b = np.log(np.clip(1 - delta - fpr_u, 0, None) / fnr_u)
    out = np.maximum(0.0, np.nan_to_num(np.maximum(a, b), nan=0.0, neginf=0.0))
    return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_samples`.

    Attributes
    ----------
    epsilon_lower_bound : float
        The certificate (holds with probability >= 1 - alpha).
    claimed_epsilon, delta, alpha : float
    refutes_claim : bool
        True only when the certificate exceeds ``claimed_epsilon``.
    n_trials : int
        Outputs per dataset (both splits).
    threshold : float
        Chosen on the training split.
    false_positives, false_negatives, n_held_out : int
        Held-out counts behind the certificate.
    fpr_upper, fnr_upper : float
        Their Clopper-Pearson upper bounds (alpha/2 each).
    auroc : float
        Held-out area under the attack's ROC curve (an estimate).
    threshold_strategy : str
    seed : int
    """

    epsilon_lower_bound: float
    claimed_epsilon: float | None
    delta: float
    alpha: float
    refutes_claim: bool
    n_trials: int
    threshold: float
    false_positives: int
    false_negatives: int
    n_held_out: int
    fpr_upper: float
    fnr_upper: float
    auroc: float
    threshold_strategy: str
    seed: int

    def to_dict(self) -> dict:
        return asdict(self)


def fit_attack(train0, train1, delta: float, alpha: float) -> tuple[np.ndarray, float]:
    """Fit the linear score and choose the threshold on training outputs only.

    Parameters
    ----------
    train0, train1 : array (m, k)
        Training outputs on D0 and D1 (never reused for the certificate).

    Returns
    -------
    (w (k,), threshold)
        Score s(o) = o @ w with w = mean(train1) - mean(train0) (the likelihood
        ratio statistic for equal isotropic Gaussian noise); the threshold maximises
        the training-split certificate. "Guess D1" when s > threshold.
    """
    w = train1.mean(axis=0) - train0.mean(axis=0)
    if not np.any(w):
        w = np.ones_like(w)
    sorted0, sorted1 = np.sort(train0 @ w), np.sort(train1 @ w)
    m0, m1 = len(sorted0), len(sorted1)
    cands = np.unique(np.concatenate([sorted0, sorted1]))
    if cands.size > 4000:
        cands = cands[np.linspace(0, cands.size - 1, 4000).astype(int)]
    fp = m0 - np.searchsorted(sorted0, cands, side="right")
    fn = np.searchsorted(sorted1, cands, side="right")
    bounds = epsilon_lower_bound(fp, m0, fn, m1, delta, alpha)
    return w, float(cands[int(np.argmax(bounds))])


def certify(scores0, scores1, threshold: float, *, delta: float, alpha: float,
            claimed_epsilon: float | None, n_trials: int, seed: int,
            threshold_strategy: str) -> AuditResult:
    """The certificate from held-out scores (n0,), (n1,) at a fixed threshold."""
    n0, n1 = len(scores0), len(scores1)
    fp = int(np.sum(scores0 > threshold))
    fn = int(np.sum(scores1 <= threshold))
    eps_lb = float(epsilon_lower_bound(fp, n0, fn, n1, delta, alpha))
    return AuditResult(
        epsilon_lower_bound=eps_lb,
        claimed_epsilon=claimed_epsilon,
        delta=delta,
        alpha=alpha,
        refutes_claim=bool(claimed_epsilon is not None and eps_lb > claimed_epsilon),
        n_trials=n_trials,
        threshold=float(threshold),
        false_positives=fp,
        false_negatives=fn,
        n_held_out=min(n0, n1),
        fpr_upper=float(clopper_pearson_upper(fp, n0, alpha / 2)),
        fnr_upper=float(clopper_pearson_upper(fn, n1, alpha / 2)),
        auroc=_auroc(scores0, scores1),
        threshold_strategy=threshold_strategy,
        seed=seed,
    )


SPLIT = "split (50% train: score direction and threshold; 50% held out for the certificate)"


def audit_samples(
    outputs0,
    outputs1,
    *,
    delta: float,
    alpha: float = 0.05,
    claimed_epsilon: float | None = None,
    seed: int = 0,
) -> tuple[AuditResult, dict]:
    """Certify an epsilon lower bound from outputs of a mechanism on D0 and on D1.

    Parameters
    ----------
    outputs0, outputs1 : array (n, ...)
        n independent outputs on each dataset (flattened to (n, k)).
    delta : float
        The claim's delta.
    alpha : float
        Significance of the certificate.
    claimed_epsilon : float, optional
        If given, ``refutes_claim`` compares the certificate with it.
    seed : int
        Seeds the random train/held-out split.

    Returns
    -------
    (AuditResult, dict)
        The result and the held-out scores of both samples (for figures).

    Raises
    ------
    ValueError
        On non-finite outputs, mismatched shapes, fewer than 4 outputs, or bad
        delta / alpha.
    """
    x0 = check_finite_array(outputs0, "outputs0")
    x1 = check_finite_array(outputs1, "outputs1")
    if x0.shape != x1.shape:
        raise ValueError(f"outputs0 {x0.shape} and outputs1 {x1.shape} must have equal shapes")
    n = check_count(x0.shape[0] if x0.ndim else 0, "number of outputs", minimum=4)
    x0 = x0.reshape(n, -1)
    x1 = x1.reshape(n, -1)
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    rng = np.random.default_rng(seed)
    p0, p1 = rng.permutation(n), rng.permutation(n)
    half = n // 2
    w, threshold = fit_attack(x0[p0[:half]], x1[p1[:half]], delta, alpha)
    s0, s1 = x0[p0[half:]] @ w, x1[p1[half:]] @ w
    result = certify(s0, s1, threshold, delta=delta, alpha=alpha,
                     claimed_epsilon=claimed_epsilon, n_trials=n, seed=seed,
                     threshold_strategy=SPLIT)
    return result, {"scores0": s0, "scores1": s1, "threshold": threshold}


def audit_mechanism(release, data0, data1, n_trials: int, *, delta: float,
                    alpha: float = 0.05, claimed_epsilon: float | None = None,
                    seed: int = 0, block_size: int = 50_000) -> tuple[AuditResult, dict]:
    """Audit ``release(data, rng, n) -> (n, ...)`` on a neighbouring pair, in blocks.

    Half of the ``n_trials`` outputs per dataset train the attack (:func:`fit_attack`);
    the other half are generated block by block and reduced to scores at once, so
    memory stays O(block_size). Each block has its own child of
    ``numpy.random.SeedSequence(seed)``: the same seed gives the same result.

    Raises ValueError for n_trials < 4 or a release of the wrong shape / non-finite.
    """
    n_trials = check_count(n_trials, "n_trials", minimum=4)
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    block_size = check_count(block_size, "block_size")
    half = n_trials // 2
    sizes = [min(block_size, half - i) for i in range(0, half, block_size)]
    held = n_trials - half
    sizes_ho = [min(block_size, held - i) for i in range(0, held, block_size)]
    children = np.random.SeedSequence(seed).spawn(2 * (len(sizes) + len(sizes_ho)))
    rngs = iter(np.random.default_rng(c) for c in children)

    def draw(data, n):
        out = check_finite_array(release(data, next(rngs), n), "release output")
        if out.shape[0] != n:
            raise ValueError(f"release returned {out.shape[0]} outputs, expected {n}")
        return out.reshape(n, -1)

    train0 = np.concatenate([draw(data0, m) for m in sizes])
    train1 = np.concatenate([draw(data1, m) for m in sizes])
    w, threshold = fit_attack(train0, train1, delta, alpha)
    s0 = np.concatenate([draw(data0, m) @ w for m in sizes_ho])
    s1 = np.concatenate([draw(data1, m) @ w for m in sizes_ho])
    result = certify(s0, s1, threshold, delta=delta, alpha=alpha,
                     claimed_epsilon=claimed_epsilon, n_trials=n_trials, seed=seed,
                     threshold_strategy=SPLIT)
    return result, {"scores0": s0, "scores1": s1, "threshold": threshold}


def _auroc(s0, s1) -> float:
    """P(score1 > score0) + 0.5 P(tie), by ranks (Mann-Whitney U / (n0 n1))."""
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([s0, s1]))
    n0, n1 = len(s0), len(s1)
    u = ranks[n0:].sum() - n1 * (n1 + 1) / 2
    return float(u / (n0 * n1))
