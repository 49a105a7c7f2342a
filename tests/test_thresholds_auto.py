"""Tests of the automatic threshold design (dpclaims.audits.thresholds_auto.AutoThreshold):
its training size, its choice between the rank and the split designs, the AUROC's
standard error it rests on, and the soundness of its certificate."""

from __future__ import annotations

import dp_accounting
import numpy as np
import pytest
from scipy.stats import binom

from dpclaims.audits import GaussianMechanism, PrivacyClaim, audit, replace_one
from dpclaims.audits.certificate import auroc, epsilon_lower_bound
from dpclaims.audits.thresholds import SplitThreshold, as_threshold_strategy
from dpclaims.audits.thresholds_auto import AutoThreshold, auroc_with_standard_error
from dpclaims.audits.thresholds_rank import RankChoice, claim_anchored_ranks

DELTA = 1e-5
# False-alarm rate of the repeated-audit soundness test: P(Binomial(runs, alpha) > k) <= FA.
FALSE_ALARM = 1e-3
PAIR = replace_one(np.zeros(5), 0, 1.0)


def total(data):
    """The sum query (sensitivity 1 for records in [0, 1])."""
    return np.sum(data)


def gaussian(sigma: float) -> GaussianMechanism:
    return GaussianMechanism(total, 1.0, sigma, DELTA)


def test_training_size_small_share_with_a_floor_and_the_split_for_pure_dp():
    auto = AutoThreshold()
    approx, pure = PrivacyClaim(1.0, DELTA), PrivacyClaim(1.0, 0.0)
    assert [auto.training_trials(n, approx) for n in (1000, 4000, 10_000, 10**6)] == \
        [200, 400, 500, 50_000]  # at most 20 %, at least 400, else 5 %
    assert [auto.training_trials(n, pure) for n in (1000, 10**6)] == [200, 200_000]
    assert auto.training_trials(2, approx) == 1
    assert as_threshold_strategy("auto") == auto


@pytest.mark.parametrize("kwargs", [dict(z=-1.0), dict(z=float("nan")), dict(z="1"),
                                    dict(train_fraction=0.0), dict(split_fraction=1.0),
                                    dict(train_fraction=0.3), dict(min_training=0)])
def test_bad_parameters_raise_naming_them(kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        AutoThreshold(**kwargs)


def test_auroc_standard_error_is_delongs_from_the_pairwise_definition():
    """Against the definition (DeLong et al. 1988, eq. 2-4), by pairwise comparison on a
    small sample with ties: the placements V10_i = mean_j psi(x1_i, x0_j), V01_j = mean_i
    psi(x1_i, x0_j), psi = 1 above, 1/2 at a tie."""
    x0 = np.array([0.1, 0.5, 0.5, 2.0, -1.0, 0.3, 0.5])
    x1 = np.array([0.5, 1.5, 2.0, 0.2, 3.0])
    psi = (x1[:, None] > x0[None]) + 0.5 * (x1[:, None] == x0[None])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    se = np.sqrt(v10.var(ddof=1) / x1.size + v01.var(ddof=1) / x0.size)
    area, got = auroc_with_standard_error(x0, x1)
    assert area == pytest.approx(psi.mean(), abs=1e-15) == pytest.approx(auroc(x0, x1))
    assert got == pytest.approx(se, rel=1e-12)
    with pytest.raises(ValueError, match="at least 2"):
        auroc_with_standard_error(x0, x1[:1])
    with pytest.raises(ValueError, match="finite"):
        auroc_with_standard_error(x0, np.array([1.0, np.nan]))


def test_choice_keeps_the_claims_rank_and_moves_for_a_stronger_mechanism():
    """Training scores of a Gaussian mechanism at its claim (eps 1): the claim's own rank,
    the best on expected counts for it; scores 4x as separated: a smaller rank (fewer
    errors), as a stronger mechanism is refuted more often there."""
    eps, m, alpha = 1.0, 9500, 0.05
    mu = 1.0 / dp_accounting.get_sigma_gaussian(eps, DELTA)
    rng = np.random.default_rng(0)
    x0, noise = rng.standard_normal(500), rng.standard_normal(500)
    claim = PrivacyClaim(eps, DELTA)
    choose = AutoThreshold().choose
    at_claim = choose((x0, noise + mu), levels=None, n_held_out=m, claim=claim, alpha=alpha)
    claim_rank = int(claim_anchored_ranks(eps, DELTA, m, alpha, (1.0,))[0])
    assert isinstance(at_claim, RankChoice) and at_claim.rank == claim_rank
    assert "the claim's best rank" in at_claim.record
    stronger = choose((x0, noise + 4 * mu), levels=None, n_held_out=m, claim=claim, alpha=alpha)
    assert isinstance(stronger, RankChoice) and stronger.rank < claim_rank / 2


def test_pure_dp_and_discrete_scores_get_the_splits_threshold():
    rng = np.random.default_rng(1)
    x0, x1 = rng.standard_normal(400), rng.standard_normal(400) + 1.0
    kw = dict(levels=None, n_held_out=1600, alpha=0.05)
    pure = AutoThreshold().choose((x0, x1), claim=PrivacyClaim(1.0, 0.0), **kw)
    split = SplitThreshold().choose((x0, x1), claim=PrivacyClaim(1.0, 0.0), **kw)
    assert not isinstance(pure, RankChoice)
    assert np.array_equal(pure.thresholds, split.thresholds) and "pure DP" in pure.record
    # a discrete score's randomised levels (2 rank + u over 3 levels): the level grid
    v0 = 2.0 * rng.integers(0, 3, 400) + rng.random(400)
    v1 = 2.0 * rng.integers(1, 3, 400) + rng.random(400)
    kw["levels"] = np.array([0.0, 1.0, 2.0])
    discrete = AutoThreshold().choose((v0, v1), claim=PrivacyClaim(1.0, DELTA), **kw)
    assert not isinstance(discrete, RankChoice) and "a discrete score" in discrete.record
    assert np.all(np.isin(discrete.thresholds, 2.0 * np.arange(3) + [[0.0], [0.25], [0.5],
                                                                      [0.75]]))


def test_audit_certificate_is_the_rank_designs_on_the_held_out_scores():
    sigma = dp_accounting.get_sigma_gaussian(1.0, DELTA)
    res = audit(gaussian(sigma), PAIR, 10_000, threshold="auto", seed=3)
    assert (res.n_train, res.n_held_out) == (500, 9500)
    k = int(res.threshold_strategy.split("at rank ")[1].split()[0])
    assert res.false_positives == k
    assert res.epsilon_lower_bound == epsilon_lower_bound(k, 9500, res.false_negatives, 9500,
                                                          DELTA, 0.05)


def test_auto_certificate_is_sound_on_the_gaussian_mechanism():
    """Over 150 audits at n = 2000 of the Gaussian mechanism exactly at its claim the
    certificate exceeds the true epsilon in no more than alpha of them (false alarm 1e-3,
    as the split's and the rank design's soundness tests)."""
    runs, alpha = 150, 0.05
    m = gaussian(1.0)
    certs = np.array([audit(m, PAIR, 2000, alpha=alpha, seed=3000 + r, threshold="auto",
                            posterior_samples=200).epsilon_lower_bound for r in range(runs)])
    assert np.sum(certs > m.claim.epsilon) <= binom.ppf(1 - FALSE_ALARM, runs, alpha)
    assert np.median(certs) > 0.2 * m.claim.epsilon


def test_refutation_power_is_the_binomial_probability_of_a_certificate_above_the_claim():
    """The closed form (the largest false-negative count whose bound is below u*) against
    the certificates themselves on 20,000 binomial draws at each of 4 ranks, for a
    mechanism at 2.15 x the claim's mu (eps 1, 9500 trials): within 4.5 Monte Carlo
    standard errors (false alarm below 1e-5 per rank); and about 0 at the claim's own mu."""
    from scipy.stats import norm

    from dpclaims.audits.thresholds_auto import refutation_power

    eps, n, alpha = 1.0, 9500, 0.05
    mu_claim = 1.0 / dp_accounting.get_sigma_gaussian(eps, DELTA)
    ks = np.array([20, 64, 84, 277])
    power = refutation_power(ks, n, 2.15 * mu_claim, eps, DELTA, alpha)
    fn = np.random.default_rng(5).binomial(n, norm.cdf(norm.isf(ks / n) - 2.15 * mu_claim),
                                           size=(20_000, ks.size))
    hits = np.mean(epsilon_lower_bound(ks, n, fn, n, DELTA, alpha) > eps, axis=0)
    assert np.all(np.abs(hits - power) <= 4.5 * np.sqrt(power * (1 - power) / 20_000) + 1e-4)
    assert power.max() > 0.5  # a strong mechanism: a rank that refutes it more often than not
    assert refutation_power(ks, n, mu_claim, eps, DELTA, alpha).max() < 1e-3


def test_a_mechanism_clearly_weaker_than_its_claim_gets_the_splits_threshold():
    """Training scores with no separation under a claim of eps 1 (mu 0.27): the upper end
    of mu's interval is below the claim's, so the split's threshold, not a rank."""
    rng = np.random.default_rng(2)
    x0, x1 = rng.standard_normal(1000), rng.standard_normal(1000)
    claim = PrivacyClaim(1.0, DELTA)
    got = AutoThreshold().choose((x0, x1), levels=None, n_held_out=19_000, claim=claim,
                                 alpha=0.05)
    split = SplitThreshold().choose((x0, x1), levels=None, n_held_out=19_000, claim=claim,
                                    alpha=0.05)
    assert not isinstance(got, RankChoice) and "weaker than its claim" in got.record
    assert np.array_equal(got.thresholds, split.thresholds)
