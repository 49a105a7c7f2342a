"""Tests of the Thm. 4.1 study: natural-parameter noise -> moments, quantile intervals,
log-log slopes, the verdicts' brackets, and a smoke run of
claims.checks.dpsep_thm41.check_thm41_study."""

from __future__ import annotations

import numpy as np
import pytest

from dpclaims.analysis.gaussian import gaussian_kl
from dpclaims.analysis.kl_tail_bound import (
    loglog_slope,
    moment_noise_summary,
    natural_noise_moments,
    quantile_interval,
)


def _spd(rng, d):
    a = rng.standard_normal((d, d))
    return a @ a.T + d * np.eye(d)


# ------------------------------------------------------------------ the moment mapping
def test_natural_noise_moments_exact_in_one_dimension():
    s2, mu = 0.25, 1.3  # Σq = 0.25, μq = 1.3: h = 5.2, Λ = 4
    noise = np.array([[0.5, 1.0], [-0.2, -3.0], [0.0, -5.0]])  # (n_h, n_Λ)
    out = natural_noise_moments([[s2]], [mu], noise)
    lam_p = 4.0 + noise[:, 1]  # 5, 1, -1
    assert out.pd.tolist() == [True, True, False]
    ok = out.pd
    np.testing.assert_allclose(out.E[ok, 0, 0], 1 / lam_p[ok] - s2, rtol=1e-13)
    np.testing.assert_allclose(out.e[ok, 0], (mu / s2 + noise[ok, 0]) / lam_p[ok] - mu,
                               rtol=1e-13)
    ref = gaussian_kl(np.array([mu]), np.array([[s2]]), mu + out.e[ok],
                      (s2 + out.E[ok]))
    np.testing.assert_allclose(out.kl[ok], ref, rtol=1e-12)
    np.testing.assert_allclose(out.lam[ok, 0], (1 / lam_p[ok]) / s2 - 1, rtol=1e-13)
    assert np.isposinf(out.kl[2]) and np.isnan(out.e[2]).all() and np.isnan(out.E[2]).all()


def test_noise_on_h_only_moves_the_mean_by_sigma_q_times_noise():
    rng = np.random.default_rng(3)
    d = 3
    sigma_q = _spd(rng, d)
    mu = rng.standard_normal(d)
    noise = np.zeros((50, d + d * (d + 1) // 2))
    noise[:, :d] = rng.standard_normal((50, d))
    out = natural_noise_moments(sigma_q, mu, noise)
    assert out.pd.all()
    np.testing.assert_allclose(out.e, noise[:, :d] @ sigma_q.T, atol=1e-12)
    np.testing.assert_allclose(out.E, 0.0, atol=1e-12)
    # KL[q||p] = 1/2 e^T Σq^{-1} e = 1/2 n_h^T Σq n_h when only the mean moves
    np.testing.assert_allclose(out.kl, 0.5 * np.einsum("ni,ij,nj->n", noise[:, :d], sigma_q,
                                                       noise[:, :d]), rtol=1e-10)


def test_natural_noise_moments_agree_with_direct_inversion():
    rng = np.random.default_rng(4)
    d = 3
    sigma_q = _spd(rng, d) / 10
    mu = rng.standard_normal(d)
    noise = 0.5 * rng.standard_normal((400, d + d * (d + 1) // 2))
    out = natural_noise_moments(sigma_q, mu, noise)
    assert 0.1 < out.pd.mean() < 1.0  # both branches exercised
    iu, ju = np.triu_indices(d)
    lam = np.zeros((400, d, d))
    lam[:, iu, ju] = noise[:, d:]
    lam[:, ju, iu] = noise[:, d:]
    prec_p = np.linalg.inv(sigma_q) + lam
    ok = out.pd
    assert np.array_equal(ok, np.linalg.eigvalsh(prec_p)[:, 0] > 0)
    cov_p = np.linalg.inv(prec_p[ok])
    mu_p = np.einsum("nij,nj->ni", cov_p, np.linalg.solve(sigma_q, mu) + noise[ok, :d])
    np.testing.assert_allclose(out.E[ok], cov_p - sigma_q, atol=1e-10)
    np.testing.assert_allclose(out.e[ok], mu_p - mu, atol=1e-10)
    np.testing.assert_allclose(out.kl[ok], gaussian_kl(mu, sigma_q, mu_p, cov_p), rtol=1e-8)
    eig = np.sort(np.linalg.eigvals(np.linalg.solve(sigma_q, out.E[ok])).real, axis=1)
    np.testing.assert_allclose(out.lam[ok], eig, atol=1e-9)
    assert np.isposinf(out.kl[~ok]).all()


def test_natural_noise_moments_rejects_bad_shapes():
    with pytest.raises(ValueError, match="noise"):
        natural_noise_moments(np.eye(2), [0.0, 0.0], np.zeros((3, 4)))
    with pytest.raises(ValueError, match="sigma_q"):
        natural_noise_moments(-np.eye(2), [0.0, 0.0], np.zeros((3, 5)))


def test_moment_noise_summary_on_the_theorems_own_model():
    rng = np.random.default_rng(5)
    n, d = 20000, 3
    e = 0.3 * rng.standard_normal((n, d))
    iu, ju = np.triu_indices(d)
    up = 0.1 * rng.standard_normal((n, iu.size))
    E = np.zeros((n, d, d))
    E[:, iu, ju] = up
    E[:, ju, iu] = up
    s = moment_noise_summary(e, E)
    # std estimates from 60000 / 120000 normals: relative se < 0.3 %, tolerance 2 % (> 6 se)
    assert s["sigma_1"] == pytest.approx(0.3, rel=0.02)
    assert s["sigma_2"] == pytest.approx(0.1, rel=0.02)
    assert s["offdiag_over_diag_std"] == pytest.approx(1.0, rel=0.03)
    assert s["max_abs_correlation"] < 0.05  # |corr| se ~ 0.007; 7 se
    assert s["ks_E"] < 0.02  # KS distance of 120000 normals: 99.9 % quantile ~ 0.0056


# ------------------------------------------------------------- quantiles and slopes
def test_quantile_interval_uses_the_binomial_order_statistics():
    x = np.arange(10.0)[::-1]  # sorted: 0..9
    point, lo, hi = quantile_interval(x, 0.5, 0.05)
    # Bin(10, .5): cdf(1) = 0.0107 <= 0.025 < cdf(2) -> X_(2); ppf(0.975) = 8 -> X_(9)
    assert (point, lo, hi) == (4.0, 1.0, 8.0)
    _, lo, hi = quantile_interval(np.arange(3.0), 0.5, 0.05)
    assert lo == -np.inf and hi == np.inf  # too few draws for a 95 % interval
    with pytest.raises(ValueError, match="NaN"):
        quantile_interval([1.0, np.nan], 0.5, 0.05)


def test_quantile_interval_covers_the_true_median():
    # 400 independent 90 % intervals for the median of Exp(1) (= log 2): misses ~ Bin(400,
    # <= 0.1); P(more than 60 misses) < 1e-3 (the false-alarm rate of this assertion).
    rng = np.random.default_rng(6)
    x = rng.exponential(size=(400, 201))
    _, lo, hi = quantile_interval(x, 0.5, 0.10)
    misses = np.sum((lo > np.log(2)) | (hi < np.log(2)))
    assert misses <= 60


def test_loglog_slope_recovers_a_known_slope():
    rng = np.random.default_rng(7)
    n_values = np.array([100.0, 300.0, 1000.0, 3000.0, 10000.0])
    samples = 5.0 * n_values[:, None] ** -1.5 * rng.lognormal(0.0, 1.0, (5, 4000))
    res = loglog_slope(n_values, samples, seed=1)
    assert res["slope"] == pytest.approx(-1.5, abs=0.03)
    lo, hi = res["certified_endpoint_slope"]
    # the certified interval covers the true slope unless one of the simultaneous
    # intervals fails: probability <= 5 % (fixed seed, so the outcome is fixed)
    assert lo <= -1.5 <= hi and hi < -1.0
    assert res["bootstrap_ci"][0] <= -1.5 <= res["bootstrap_ci"][1]
    assert res["mean_slope"] == pytest.approx(-1.5, abs=0.05)
    with pytest.raises(ValueError, match="increasing"):
        loglog_slope(n_values[::-1], samples, seed=1)


# ------------------------------------------------------------------ verdict brackets
def test_slope_bracket_on_synthetic_studies():
    from dpclaims.claims.kernel import judge
    from dpclaims.papers.dpsep.checks_thm41 import slope_bracket

    rng = np.random.default_rng(8)
    n_values = np.array([100.0, 1000.0, 10000.0])
    one_over_n = 3.0 / n_values[:, None] * rng.exponential(size=(3, 4000))
    one_over_n2 = 3.0 / n_values[:, None] ** 2 * rng.exponential(size=(3, 4000))
    d1 = judge(*slope_bracket(loglog_slope(n_values, one_over_n, seed=2)))
    d2 = judge(*slope_bracket(loglog_slope(n_values, one_over_n2, seed=2)))
    # an exact exponent is never certified by an interval: a true 1/N law stays
    # inconclusive (its certified interval contains -1); 1/N^2 is refuted
    assert d1.verdict == "inconclusive" and "do not decide" in d1.sentence
    assert d2.verdict == "refuted" and "certifies endpoint log-log slope" in d2.sentence
    assert d2.basis["upper"]["value"] < -1 and d2.basis["upper"]["confidence"] == 0.95
    # the bootstrap is shown, never used
    assert d2.basis["estimates"] and d2.basis["rule"] == "bracket"


def test_shrink_bracket():
    from dpclaims.claims.kernel import judge
    from dpclaims.papers.dpsep.checks_thm41 import shrink_bracket

    assert judge(*shrink_bracket([5.0, 2.0, 1.0], [6.0, 3.0, 2.0])).verdict == "holds"
    assert judge(*shrink_bracket([1.0, 2.0, 7.0], [2.0, 3.0, 8.0])).verdict == "refuted"
    assert judge(*shrink_bracket([1.0, 1.5], [2.0, 2.5])).verdict == "inconclusive"
    # infinite medians (non-PD draws): inf - inf leaves that end missing, never NaN
    claimed, lower, upper = shrink_bracket([np.inf, np.inf], [np.inf, np.inf])
    assert lower is None and upper is None
    claimed, lower, upper = shrink_bracket([np.inf, 0.1], [np.inf, 0.2], confidence=0.99)
    assert upper.value == -np.inf and upper.confidence == 0.99
    assert judge(claimed, lower, upper).verdict == "holds"


def test_tail_excess_part():
    from dpclaims.claims.kernel import judge
    from dpclaims.papers.dpsep.checks_thm41 import tail_excess_part

    a = np.array([0.1, 1.0, 10.0])
    ci = np.array([[0.5, 0.6], [0.05, 0.08], [0.0, 0.001]])
    part, w = tail_excess_part("c", ci, [1.0, 0.1, 0.01], a, 0.01)
    assert judge(part.claimed, part.lower, part.upper).verdict == "holds"
    assert part.lower.confidence == pytest.approx(0.97)  # 3 intervals at 0.99
    part, w = tail_excess_part("c", ci, [1.0, 0.1, -0.01], a, 0.01)
    # a negative bound is exceeded by any probability, even a CP lower bound of 0
    assert judge(part.claimed, part.lower, part.upper).verdict == "refuted"
    assert (w["a"], w["cp_lower"], w["bound"]) == (10.0, 0.0, -0.01)
    part, _ = tail_excess_part("c", ci, [1.0, 0.07, 0.01], a, 0.01)
    assert judge(part.claimed, part.lower, part.upper).verdict == "inconclusive"
    with pytest.raises(ValueError, match="certify nothing"):
        tail_excess_part("c", ci, [1.0, 0.1, 0.01], a, 0.5)
