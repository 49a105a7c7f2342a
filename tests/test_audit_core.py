"""Tests of dpclaims.audits: Clopper-Pearson certificates, their soundness, planted bugs."""

from __future__ import annotations

import json
import math

import dp_accounting
import numpy as np
import pytest
from scipy.stats import beta, binom

from dpclaims.algorithms.likelihoods import LinearGaussian, Probit
from dpclaims.algorithms.sep import DPSEPParams
from dpclaims.analysis.gaussian import flatten_natural, natural_dim
from dpclaims.audits.core import (
    AuditResult,
    audit_mechanism,
    audit_samples,
    certify,
    clopper_pearson_upper,
    epsilon_lower_bound,
    fit_attack,
)
from dpclaims.audits.dpsep import DPSEPStep, neighbouring_datasets, worst_case_canary

DELTA = 1e-5
# False-alarm rate of each repeated-audit soundness test: P(Binomial(runs, alpha) > k) <= FA.
FALSE_ALARM = 1e-3


# --------------------------------------------------------------------------- hand values


@pytest.mark.parametrize("n", [10, 100, 1000, 50_000])
@pytest.mark.parametrize("level", [0.025, 0.005])
def test_clopper_pearson_upper_with_zero_count(n, level):
    # one-sided CP upper bound for 0 successes solves (1 - u)^n = level
    assert float(clopper_pearson_upper(0, n, level)) == pytest.approx(1 - level ** (1 / n),
                                                                      rel=1e-10)


@pytest.mark.parametrize(("k", "n"), [(1, 10), (7, 100), (500, 1000), (99, 100)])
def test_clopper_pearson_upper_matches_beta_quantile(k, n):
    level = 0.025
    assert float(clopper_pearson_upper(k, n, level)) == pytest.approx(
        beta.ppf(1 - level, k + 1, n - k), rel=1e-9)
    # the one-sided bound: P(Binomial(n, u) <= k) = level
    u = float(clopper_pearson_upper(k, n, level))
    assert binom.cdf(k, n, u) == pytest.approx(level, rel=1e-6)


def test_clopper_pearson_upper_with_all_successes_is_one():
    assert float(clopper_pearson_upper(20, 20, 0.025)) == 1.0


@pytest.mark.parametrize("n", [100, 1000, 10_000])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_epsilon_lower_bound_zero_errors(n, alpha):
    u = 1 - (alpha / 2) ** (1 / n)  # alpha/2 per error rate (Bonferroni)
    expected = math.log((1 - u) / u)
    got = epsilon_lower_bound(0, n, 0, n, delta=0.0, alpha=alpha)
    assert got == pytest.approx(expected, rel=1e-10)
    # with delta: log((1 - delta - u) / u)
    got_d = epsilon_lower_bound(0, n, 0, n, delta=0.01, alpha=alpha)
    assert got_d == pytest.approx(math.log((1 - 0.01 - u) / u), rel=1e-10)


def test_epsilon_lower_bound_asymmetric_counts():
    fp, n0, fn, n1, alpha, delta = 3, 500, 40, 800, 0.05, 1e-3
    fpr_u = beta.ppf(1 - alpha / 2, fp + 1, n0 - fp)
    fnr_u = beta.ppf(1 - alpha / 2, fn + 1, n1 - fn)
    expected = max(0.0, math.log((1 - delta - fnr_u) / fpr_u),
                   math.log((1 - delta - fpr_u) / fnr_u))
    assert epsilon_lower_bound(fp, n0, fn, n1, delta, alpha) == pytest.approx(expected, rel=1e-9)
    # symmetric in swapping the roles of the two error types
    assert epsilon_lower_bound(fn, n1, fp, n0, delta, alpha) == pytest.approx(expected,
                                                                              rel=1e-9)


def test_epsilon_lower_bound_is_vectorised_over_thresholds():
    fp = np.array([0, 5, 50, 250])
    fn = np.array([250, 50, 5, 0])
    out = epsilon_lower_bound(fp, 500, fn, 500, 0.0, 0.05)
    assert out.shape == (4,)
    for i in range(4):
        assert out[i] == pytest.approx(epsilon_lower_bound(int(fp[i]), 500, int(fn[i]), 500,
                                                           0.0, 0.05))


@pytest.mark.parametrize(("fp", "fn"), [(500, 500), (450, 550), (1000, 0), (0, 1000),
                                         (600, 600)])
def test_epsilon_lower_bound_is_zero_without_attack_power(fp, fn):
    # FPR + FNR >= 1: the attack does no better than guessing
    assert epsilon_lower_bound(fp, 1000, fn, 1000, 0.0, 0.05) == 0.0


def test_epsilon_lower_bound_decreases_with_confidence_and_delta():
    base = epsilon_lower_bound(2, 1000, 3, 1000, 0.0, 0.1)
    assert epsilon_lower_bound(2, 1000, 3, 1000, 0.0, 0.001) < base
    assert epsilon_lower_bound(2, 1000, 3, 1000, 0.2, 0.1) < base


# --------------------------------------------------------------------------- attack pieces


def test_fit_attack_direction_and_threshold():
    rng = np.random.default_rng(0)
    mu = np.array([3.0, 0.0, -4.0])
    train0 = rng.standard_normal((2000, 3))
    train1 = mu + rng.standard_normal((2000, 3))
    w, threshold = fit_attack(train0, train1, DELTA, 0.05)
    cos = w @ mu / (np.linalg.norm(w) * np.linalg.norm(mu))
    assert cos > 0.99
    # the threshold separates the projected means
    assert 0 < threshold < mu @ w


def test_certify_counts_and_fields():
    s0 = np.array([0.0, 1.0, 2.0, 3.0])
    s1 = np.array([1.5, 2.5, 3.5, 4.5, 5.5])
    res = certify(s0, s1, 2.0, delta=0.0, alpha=0.05, claimed_epsilon=0.5, n_trials=9,
                  seed=4, threshold_strategy="fixed")
    assert res.false_positives == 1  # 3.0 > 2
    assert res.false_negatives == 1  # 1.5 <= 2
    assert res.n_held_out == 4
    assert res.auroc == pytest.approx(17 / 20)  # pairs with s1 > s0
    assert res.fpr_upper == pytest.approx(float(clopper_pearson_upper(1, 4, 0.025)))
    assert res.epsilon_lower_bound == epsilon_lower_bound(1, 4, 1, 5, 0.0, 0.05)
    assert res.refutes_claim == (res.epsilon_lower_bound > 0.5)
    json.dumps(res.to_dict())


# --------------------------------------------------------------------------- soundness


def test_audit_samples_no_power_on_identical_distributions():
    rng = np.random.default_rng(1)
    o0, o1 = rng.standard_normal((2, 4000, 3))
    res, scores = audit_samples(o0, o1, delta=0.0, alpha=0.001, claimed_epsilon=0.1, seed=0)
    # The true epsilon is 0: a positive certificate has probability <= alpha = 1e-3
    # (the false-alarm rate of this assertion).
    assert res.epsilon_lower_bound == 0.0
    assert not res.refutes_claim
    assert 0.4 < res.auroc < 0.6
    assert scores["scores0"].shape == (2000,) and scores["scores1"].shape == (2000,)


@pytest.mark.parametrize("sigma", [1.0, 2.0])
def test_audit_samples_is_sound_on_the_gaussian_mechanism(sigma):
    """Over many independent audits, certificates exceed the true epsilon at rate <= alpha."""
    runs, n, alpha = 200, 2000, 0.05
    true_eps = dp_accounting.get_epsilon_gaussian(sigma, DELTA)  # sensitivity 1, std sigma
    rng = np.random.default_rng(12345)
    o0 = sigma * rng.standard_normal((runs, n, 1))
    o1 = 1.0 + sigma * rng.standard_normal((runs, n, 1))
    certs = np.array([audit_samples(o0[r], o1[r], delta=DELTA, alpha=alpha, seed=r)[0]
                      .epsilon_lower_bound for r in range(runs)])
    exceed = int(np.sum(certs > true_eps))
    # exceed ~ Binomial(runs, q) with q <= alpha; k is its (1 - 1e-3) quantile at q = alpha,
    # so this assertion fails with probability <= FALSE_ALARM = 1e-3 if the audit is sound.
    k = binom.ppf(1 - FALSE_ALARM, runs, alpha)
    assert exceed <= k
    # the audits have power (they are not trivially sound by always answering 0)
    assert np.median(certs) > 0.1 * true_eps
    assert np.mean(certs > 0) > 0.5


def test_audit_samples_is_sound_and_nearly_tight_on_randomised_response():
    """Binary randomised response: the linear attack is optimal and the bound nearly tight,
    so the exceedance rate really tests the Clopper-Pearson/Bonferroni construction."""
    runs, n, alpha, eps = 200, 2000, 0.1, 1.5
    p = 1 / (1 + math.exp(eps))  # FPR = FNR = p at the true epsilon, delta = 0
    rng = np.random.default_rng(2)
    o0 = (rng.random((runs, n, 1)) < p).astype(float)
    o1 = (rng.random((runs, n, 1)) < 1 - p).astype(float)
    certs = np.array([audit_samples(o0[r], o1[r], delta=0.0, alpha=alpha, seed=r)[0]
                      .epsilon_lower_bound for r in range(runs)])
    exceed = int(np.sum(certs > eps))
    k = binom.ppf(1 - FALSE_ALARM, runs, alpha)  # false-alarm rate 1e-3, as above
    assert exceed <= k
    assert np.median(certs) > 0.8 * eps  # tight enough to make the check meaningful


def gaussian_release(noise_std, direction=(0.6, 0.8, 0.0)):
    """Mechanism on a scalar 'dataset' d in {0, 1}: d * u + N(0, std^2 I), ||u|| = 1."""
    u = np.asarray(direction)

    def release(data, rng, n):
        return data * u + noise_std * rng.standard_normal((n, u.size))

    return release


def test_planted_half_sensitivity_bug_is_refuted_and_its_twin_is_not():
    # Claim: Gaussian mechanism with noise multiplier 1.5 for sensitivity 1. The bug
    # calibrates the noise to half the sensitivity (std 0.75), the twin correctly (1.5).
    sigma = 1.5
    claimed = dp_accounting.get_epsilon_gaussian(sigma, DELTA)
    buggy, _ = audit_mechanism(gaussian_release(sigma / 2), 0.0, 1.0, 100_000, delta=DELTA,
                               alpha=0.05, claimed_epsilon=claimed, seed=1, block_size=30_000)
    twin, _ = audit_mechanism(gaussian_release(sigma), 0.0, 1.0, 100_000, delta=DELTA,
                              alpha=0.05, claimed_epsilon=claimed, seed=1, block_size=30_000)
    # The buggy mechanism's true epsilon is ~ 2x the claim; its certificate exceeded the
    # claim by >= 0.7 nats over seeds 1-2 (seed fixed here: deterministic).
    assert buggy.refutes_claim and buggy.epsilon_lower_bound > claimed
    # A sound certificate exceeds the twin's true epsilon with probability <= alpha = 0.05
    # (this assertion's false-alarm rate; the fixed seed makes it deterministic).
    assert not twin.refutes_claim and twin.epsilon_lower_bound <= claimed
    assert buggy.n_trials == twin.n_trials == 100_000
    assert buggy.n_held_out == 50_000


# --------------------------------------------------------------------------- reproducibility


def test_same_seed_identical_audit_result():
    rng = np.random.default_rng(3)
    o0, o1 = rng.standard_normal((500, 2)), 0.5 + rng.standard_normal((500, 2))
    a, sa = audit_samples(o0, o1, delta=DELTA, claimed_epsilon=1.0, seed=11)
    b, sb = audit_samples(o0, o1, delta=DELTA, claimed_epsilon=1.0, seed=11)
    assert isinstance(a, AuditResult)
    assert a == b
    np.testing.assert_array_equal(sa["scores0"], sb["scores0"])
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    c, _ = audit_samples(o0, o1, delta=DELTA, claimed_epsilon=1.0, seed=12)
    assert c != a  # a different split

    release = gaussian_release(1.0)
    m1, _ = audit_mechanism(release, 0.0, 1.0, 2000, delta=DELTA, seed=5, block_size=300)
    m2, _ = audit_mechanism(release, 0.0, 1.0, 2000, delta=DELTA, seed=5, block_size=300)
    assert m1 == m2
    m3, _ = audit_mechanism(release, 0.0, 1.0, 2000, delta=DELTA, seed=6, block_size=300)
    assert m3 != m1


def test_audit_mechanism_blocks_cover_every_trial():
    calls = []

    def release(data, rng, n):
        calls.append(n)
        return data + rng.standard_normal((n, 1))

    res, scores = audit_mechanism(release, 0.0, 1.0, 1001, delta=DELTA, block_size=200)
    assert sum(calls) == 1001 * 2
    assert max(calls) <= 200
    assert len(scores["scores0"]) == len(scores["scores1"]) == 1001 - 500
    assert res.n_held_out == 501


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_alpha_raises(alpha):
    o = np.zeros((10, 1))
    with pytest.raises(ValueError, match="alpha"):
        audit_samples(o, o + 1, delta=DELTA, alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        epsilon_lower_bound(0, 10, 0, 10, DELTA, alpha)
    with pytest.raises(ValueError, match="alpha"):
        audit_mechanism(gaussian_release(1.0), 0.0, 1.0, 10, delta=DELTA, alpha=alpha)


@pytest.mark.parametrize("delta", [1.0, -1e-9, 2.0, float("nan")])
def test_bad_delta_raises(delta):
    o = np.zeros((10, 1))
    with pytest.raises(ValueError, match="delta"):
        audit_samples(o, o + 1, delta=delta)
    with pytest.raises(ValueError, match="delta"):
        epsilon_lower_bound(0, 10, 0, 10, delta, 0.05)


def test_nan_outputs_raise():
    o = np.zeros((10, 2))
    bad = o.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="outputs1.*non-finite"):
        audit_samples(o, bad, delta=DELTA)
    with pytest.raises(ValueError, match="outputs0.*non-finite"):
        audit_samples(bad, o, delta=DELTA)

    def nan_release(data, rng, n):
        return np.full((n, 2), np.nan)

    with pytest.raises(ValueError, match="release output"):
        audit_mechanism(nan_release, 0.0, 1.0, 10, delta=DELTA)


def test_mismatched_shapes_raise():
    with pytest.raises(ValueError, match="equal shapes"):
        audit_samples(np.zeros((10, 2)), np.zeros((12, 2)), delta=DELTA)
    with pytest.raises(ValueError, match="equal shapes"):
        audit_samples(np.zeros((10, 2)), np.zeros((10, 3)), delta=DELTA)

    def short_release(data, rng, n):
        return rng.standard_normal((n - 1, 2))

    with pytest.raises(ValueError, match="expected"):
        audit_mechanism(short_release, 0.0, 1.0, 10, delta=DELTA)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_too_few_outputs_raise(n):
    with pytest.raises(ValueError, match="number of outputs"):
        audit_samples(np.zeros((n, 1)), np.ones((n, 1)), delta=DELTA)
    with pytest.raises(ValueError, match="n_trials"):
        audit_mechanism(gaussian_release(1.0), 0.0, 1.0, n, delta=DELTA)


# --------------------------------------------------------------------------- DP-SEP step


def dpsep_step(reading, likelihood, y_scale):
    rng = np.random.default_rng(0)
    n, d = 200, 2
    x = rng.standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.sign(x[:, 0] + 0.1) if y_scale is None else y_scale * rng.standard_normal(n)
    params = DPSEPParams(clipping_norm=1.0, damping=1.0, noise_multiplier=2.0, reading=reading)
    theta_0 = flatten_natural(np.zeros(d), np.eye(d) * 0.5)
    theta_f = 0.3 * flatten_natural(np.zeros(d), np.eye(d)) / np.sqrt(2)
    mech = DPSEPStep(params, likelihood, theta_f, theta_0, n, index=7)
    return mech, x, y


@pytest.mark.parametrize(("likelihood", "y_scale"), [(Probit(), None), (LinearGaussian(), 1.0)])
def test_dpsep_step_release_and_canary(likelihood, y_scale):
    mech, x, y = dpsep_step("as-printed", likelihood, y_scale)
    p = natural_dim(2)
    out = mech.release((x, y), np.random.default_rng(1), 500)
    assert out.shape == (500, p)
    np.testing.assert_allclose(out.mean(axis=0), mech.query((x, y)),
                               atol=6 * mech.params.noise_std(len(y)) / np.sqrt(500))
    # (6 SE per coordinate: false-alarm rate < 1e-8 for 5 coordinates.)
    canary = worst_case_canary(mech, x, y, n_directions=16, seed=0)
    assert 0 < canary.site_distance <= 2 * mech.params.clipping_norm * (1 + 1e-12)
    d0, d1 = neighbouring_datasets(x, y, mech.index, canary)
    differ = np.any(d0[0] != d1[0], axis=1) | (d0[1] != d1[1])
    assert np.flatnonzero(differ).tolist() == [mech.index]
    # Prop. 1 under the printed update: the query moves by at most 2 gamma C / N
    dist = np.linalg.norm(mech.query(d0) - mech.query(d1))
    assert dist <= mech.params.claimed_sensitivity(len(y)) * (1 + 1e-9)
    assert dist == pytest.approx(mech.params.damping / len(y) * canary.site_distance, rel=1e-9)


def test_dpsep_step_audit_refutes_sep_invariant_reading_only():
    n_trials = 20_000
    verdicts = {}
    for reading in ("as-printed", "sep-invariant"):
        mech, x, y = dpsep_step(reading, Probit(), None)
        canary = worst_case_canary(mech, x, y, n_directions=16, seed=0)
        d0, d1 = neighbouring_datasets(x, y, mech.index, canary)
        claimed = dp_accounting.get_epsilon_gaussian(mech.params.noise_multiplier, DELTA)
        res, _ = audit_mechanism(mech.release, d0, d1, n_trials, delta=DELTA, alpha=0.05,
                                 claimed_epsilon=claimed, seed=3)
        verdicts[reading] = res
    # Sound certificate vs a true claim: refutation has probability <= alpha = 0.05
    # (false-alarm rate; deterministic under the fixed seed).
    assert not verdicts["as-printed"].refutes_claim
    # Under SEP's own update the signal is N = 200 times the noise scale: certain refutation.
    assert verdicts["sep-invariant"].refutes_claim
    assert verdicts["sep-invariant"].epsilon_lower_bound > 3 * claimed
