"""Tests of SEP / EP / DP-SEP (dpclaims.algorithms.sep.sep) and the likelihood sites."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import chi2, norm

from dpclaims.algorithms.sep.likelihoods import LinearGaussian, Probit
from dpclaims.algorithms.sep.sep import (
    READINGS,
    DPSEPParams,
    cavity_moments,
    dpsep_theta_new,
    run_ep,
    run_sep,
)
from dpclaims.analysis.gaussian import (
    flatten_natural,
    moments_to_natural,
    natural_dim,
    natural_to_moments,
)

NOISE_VARIANCE = 0.5
PRIOR_VARIANCE = 4.0


def conjugate_problem(n_records=20, d=2, seed=0):
    """Simulated Bayesian linear regression: x (N, d), y (N,), prior theta_0, likelihood."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_records, d))
    w = rng.standard_normal(d)
    y = x @ w + math.sqrt(NOISE_VARIANCE) * rng.standard_normal(n_records)
    theta_0 = flatten_natural(np.zeros(d), np.eye(d) / PRIOR_VARIANCE)
    return x, y, theta_0, LinearGaussian(noise_variance=NOISE_VARIANCE)


def exact_posterior_natural(x, y, d):
    """Exact Bayesian linear-regression posterior, computed without the library's sites."""
    precision = np.eye(d) / PRIOR_VARIANCE + x.T @ x / NOISE_VARIANCE
    h = x.T @ y / NOISE_VARIANCE
    return flatten_natural(h, precision), h, precision


# --------------------------------------------------------------------------- (a) fixed point


@pytest.mark.parametrize("d", [1, 2, 3])
def test_sep_fixed_point_is_exact_posterior_on_conjugate_model(d):
    x, y, theta_0, lik = conjugate_problem(n_records=15, d=d, seed=d)
    n = len(y)
    sites = lik.site(None, None, x, y)
    assert sites.shape == (n, natural_dim(d))
    theta_f_star = sites.mean(axis=0)
    exact, h, precision = exact_posterior_natural(x, y, d)
    np.testing.assert_allclose(theta_0 + n * theta_f_star, exact, rtol=1e-12, atol=1e-12)
    # the posterior mean is the ridge-regression solution
    mean, _ = natural_to_moments(theta_0 + n * theta_f_star)
    np.testing.assert_allclose(mean, np.linalg.solve(precision, h), rtol=1e-10)
    # one expected SEP update from theta_f* (average over the record processed) is a no-op
    for gamma in (0.3, 1.0, 5.0):
        a = gamma / n
        expected_update = np.mean((1 - a) * theta_f_star + a * sites, axis=0)
        np.testing.assert_allclose(expected_update, theta_f_star, rtol=1e-12, atol=1e-14)


def test_linear_gaussian_site_ignores_cavity_and_is_exact():
    x, y, _, lik = conjugate_problem(n_records=4, d=2)
    rng = np.random.default_rng(1)
    mean, cov = rng.standard_normal((4, 2)), np.tile(np.eye(2), (4, 1, 1))
    np.testing.assert_array_equal(lik.site(mean, cov, x, y), lik.site(None, None, x, y))
    for n in range(4):
        expected = flatten_natural(x[n] * y[n] / NOISE_VARIANCE,
                                   np.outer(x[n], x[n]) / NOISE_VARIANCE)
        np.testing.assert_allclose(lik.site(None, None, x, y)[n], expected, rtol=1e-14)


# --------------------------------------------------------------------------- (b) SEP converges


def sep_error_bound(sites, gamma, epochs, theta_f_init_error):
    """Deterministic bound on ||theta_q - theta_q*|| after ``epochs`` SEP epochs (conjugate).

    With a = gamma/N, e = theta_f - theta_f* and u_n = site_n - theta_f* (sum u_n = 0),
    one epoch over a permutation pi gives

        e' = (1-a)^N e + a sum_k ((1-a)^{N-k} - c) u_pi(k)      for any constant c,

    so ||e'|| <= r ||e|| + B with r = (1-a)^N and B = a sum_k |w|_(k) ||u||_(k) (both
    sorted decreasingly: rearrangement inequality; c = midpoint of the weights). Hence
    ||e_T|| <= r^T ||e_0|| + B / (1 - r), whatever the permutations, and theta_q's error
    is N ||e_T||. The bound is O(gamma): the smaller the damping, the closer SEP lands.
    """
    n = len(sites)
    a = gamma / n
    u_norms = np.sort(np.linalg.norm(sites - sites.mean(axis=0), axis=1))[::-1]
    w = (1 - a) ** (n - np.arange(1, n + 1))
    w = np.sort(np.abs(w - 0.5 * (w.max() + w.min())))[::-1]
    r = (1 - a) ** n
    return n * (r**epochs * theta_f_init_error + a * np.sum(w * u_norms) / (1 - r))


@pytest.mark.parametrize(("gamma", "epochs"), [(0.2, 100), (0.1, 200)])
def test_sep_with_small_damping_lands_near_exact_posterior(gamma, epochs):
    x, y, theta_0, lik = conjugate_problem(n_records=20, d=2)
    exact, _, _ = exact_posterior_natural(x, y, 2)
    sites = lik.site(None, None, x, y)
    run = run_sep(x, y, lik, theta_0, epochs=epochs, damping=gamma,
                  rng=np.random.default_rng(7))
    bound = sep_error_bound(sites, gamma, epochs, np.linalg.norm(sites.mean(axis=0)))
    # The bound is non-trivial (under 10% of ||theta_q*||, shrinking with gamma) ...
    assert bound < 0.1 * np.linalg.norm(exact)
    # ... and SEP respects it (deterministic: no false alarms).
    error = np.linalg.norm(run.theta_q[0] - exact)
    assert error <= bound
    assert run.n_projections == 0
    assert run.info["reading"] is None
    # the trace starts at the prior and ends at theta_q
    np.testing.assert_array_equal(run.trace[0, 0], theta_0)
    np.testing.assert_array_equal(run.trace[0, -1], run.theta_q[0])
    np.testing.assert_allclose(run.theta_q, theta_0 + len(y) * run.theta_f, rtol=1e-12)


# --------------------------------------------------------------------------- (c) probit site


def probit_tilted_by_site(m, v, x, y):
    """Tilted moments as the library defines them: cavity natural params + the site."""
    theta_cav = moments_to_natural(m, v)
    site = Probit().site(m[None], v[None], x[None], np.array([y]))[0]
    return natural_to_moments(theta_cav + site)


@pytest.mark.parametrize(
    ("m", "v", "x", "y"),
    [
        (0.0, 1.0, 1.0, 1.0),
        (0.5, 2.0, -1.5, 1.0),
        (2.0, 0.3, 0.7, -1.0),
        (-3.0, 1.0, 1.0, 1.0),  # cavity puts little mass where the likelihood is large
        (-8.0, 0.5, 1.0, 1.0),  # z ~ -6.5: r = phi/Phi must be computed in log space
        (1.0, 5.0, 0.01, -1.0),  # nearly uninformative record
    ],
)
def test_probit_tilted_moments_match_quadrature_1d(m, v, x, y):
    mean, cov = probit_tilted_by_site(np.array([m]), np.array([[v]]), np.array([x]), y)
    sd = math.sqrt(v)
    # log of the unnormalised tilted density, shifted by its maximum over a fine grid so
    # the integrals are O(1) even when Z is astronomically small.
    def log_tilted(t):
        return norm.logpdf(t, m, sd) + norm.logcdf(y * x * t)

    grid = np.linspace(m - 12 * sd, m + 12 * sd, 20001)
    peak = grid[np.argmax(log_tilted(grid))]
    shift = log_tilted(peak)
    lo, hi = m - 12 * sd, m + 12 * sd

    def moment(k):
        f = lambda t: t**k * math.exp(log_tilted(t) - shift)  # noqa: E731
        return integrate.quad(f, lo, hi, points=[peak], limit=200, epsabs=0, epsrel=1e-12)[0]

    z0, z1, z2 = moment(0), moment(1), moment(2)
    q_mean = z1 / z0
    q_var = z2 / z0 - q_mean**2
    assert mean[0] == pytest.approx(q_mean, rel=1e-7, abs=1e-8 * sd)
    assert cov[0, 0] == pytest.approx(q_var, rel=1e-6)


def test_probit_tilted_moments_match_importance_sampling_2d():
    rng = np.random.default_rng(42)
    m = np.array([0.4, -0.3])
    a = rng.standard_normal((2, 2))
    v = a @ a.T + 0.5 * np.eye(2)
    x = np.array([1.2, -0.8])
    y = -1.0
    mean, cov = probit_tilted_by_site(m, v, x, y)
    n = 400_000
    theta = rng.multivariate_normal(m, v, size=n)
    w = norm.cdf(y * theta @ x)
    w = w / w.sum()
    est_mean = w @ theta
    centred = theta - est_mean
    est_cov = np.einsum("n,ni,nj->ij", w, centred, centred)
    # Self-normalised importance-sampling standard errors (delta method):
    # SE(sum w g) ~ sqrt(sum w^2 (g - sum w g)^2).
    se_mean = np.sqrt(np.einsum("n,ni->i", w**2, centred**2))
    g = np.einsum("ni,nj->nij", centred, centred)
    se_cov = np.sqrt(np.einsum("n,nij->ij", w**2, (g - est_cov) ** 2))
    # 5 quantities, each outside 5 SE with probability ~5.7e-7: false-alarm rate < 3e-6
    # (CLT approximation; the seed is fixed so the outcome is reproducible).
    assert np.all(np.abs(mean - est_mean) < 5 * se_mean)
    assert np.all(np.abs(cov - est_cov) < 5 * se_cov)
    # The estimates are informative: the tilt moved the mean by many standard errors.
    assert np.linalg.norm(mean - m) > 20 * se_mean.max()


def test_probit_site_is_rank_one_along_x_and_psd():
    rng = np.random.default_rng(3)
    n, d = 50, 3
    m = 2 * rng.standard_normal((n, d))
    a = rng.standard_normal((n, d, d))
    v = np.einsum("nij,nkj->nik", a, a) + 0.1 * np.eye(d)
    x = rng.standard_normal((n, d))
    y = rng.choice([-1.0, 1.0], size=n)
    site = Probit().site(m, v, x, y)
    assert site.shape == (n, natural_dim(d))
    assert np.all(np.isfinite(site))
    from dpclaims.analysis.gaussian import unflatten_natural

    h, precision = unflatten_natural(site)
    # precision = pi x x^T with pi >= 0; h parallel to x
    pi = np.einsum("ni,nij,nj->n", x, precision, x) / np.einsum("ni,ni->n", x, x) ** 2
    assert np.all(pi >= 0)
    np.testing.assert_allclose(precision, pi[:, None, None] * np.einsum("ni,nj->nij", x, x),
                               rtol=1e-9, atol=1e-12)
    cross = h[:, :, None] * x[:, None, :] - x[:, :, None] * h[:, None, :]
    np.testing.assert_allclose(cross, 0.0, atol=1e-9)


# --------------------------------------------------------------------------- (d) EP


@pytest.mark.parametrize("d", [1, 2, 3])
def test_ep_is_exact_after_one_sweep_on_conjugate_model(d):
    x, y, theta_0, lik = conjugate_problem(n_records=12, d=d, seed=10 + d)
    exact, _, _ = exact_posterior_natural(x, y, d)
    run = run_ep(x, y, lik, theta_0, epochs=1, n_trials=2, rng=np.random.default_rng(0))
    assert run.theta_f is None
    assert run.trace.shape == (2, 2, natural_dim(d))
    np.testing.assert_allclose(run.theta_q, np.tile(exact, (2, 1)), rtol=1e-10, atol=1e-10)
    # further sweeps leave it there
    run3 = run_ep(x, y, lik, theta_0, epochs=3, rng=np.random.default_rng(0))
    np.testing.assert_allclose(run3.trace[0, 1:], np.tile(exact, (3, 1)), rtol=1e-10,
                               atol=1e-10)


# --------------------------------------------------------------------------- (e) readings

HUGE_C = 1e12


@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_sep_invariant_reading_without_noise_equals_plain_sep(gamma):
    x, y, theta_0, lik = conjugate_problem(n_records=10, d=2)
    params = DPSEPParams(clipping_norm=HUGE_C, damping=gamma, noise_multiplier=None,
                         reading="sep-invariant")
    dp = run_sep(x, y, lik, theta_0, epochs=5, n_trials=3, params=params,
                 rng=np.random.default_rng(123))
    plain = run_sep(x, y, lik, theta_0, epochs=5, n_trials=3, damping=gamma,
                    rng=np.random.default_rng(123))
    assert dp.n_projections == 0
    assert dp.info["noise_std"] == 0.0
    # Same permutations, same update; only the rounding of the two formulas differs.
    np.testing.assert_allclose(dp.theta_f, plain.theta_f, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dp.trace, plain.trace, rtol=1e-9, atol=1e-9)


def test_as_printed_step_moves_site_by_gamma_over_n_squared():
    rng = np.random.default_rng(5)
    p, n, gamma = natural_dim(2), 17, 1.7
    theta_f, theta_fn, theta_0 = rng.standard_normal((3, p))
    for reading, damping_factor in (("as-printed", gamma / n**2),
                                    ("sep-invariant", gamma / n),
                                    ("sep-invariant-recalibrated", gamma / n)):
        params = DPSEPParams(clipping_norm=HUGE_C, damping=gamma, reading=reading)
        theta_new = dpsep_theta_new(theta_f, theta_fn, theta_0, n, params)
        expected = (1 - damping_factor) * theta_f + damping_factor * theta_fn
        np.testing.assert_allclose((theta_new - theta_0) / n, expected, rtol=1e-12, atol=1e-14)


def test_as_printed_run_applies_gamma_over_n_squared_at_every_step():
    """Recover each step's site from the released sequence: a permutation of the sites."""
    x, y, theta_0, lik = conjugate_problem(n_records=8, d=2)
    n, gamma, epochs = len(y), 1.5, 2
    params = DPSEPParams(clipping_norm=HUGE_C, damping=gamma, reading="as-printed")
    run = run_sep(x, y, lik, theta_0, epochs=epochs, params=params, record_steps=True,
                  rng=np.random.default_rng(9))
    sites = lik.site(None, None, x, y)
    a = gamma / n**2
    f_seq = (run.released[0].reshape(epochs * n, -1) - theta_0) / n  # theta_f after each step
    f_prev = np.vstack([np.zeros((1, f_seq.shape[1])), f_seq[:-1]])
    recovered = (f_seq - (1 - a) * f_prev) / a
    dists = np.linalg.norm(recovered[:, None, :] - sites[None, :, :], axis=-1)
    used = np.argmin(dists, axis=1)
    scale = np.linalg.norm(sites, axis=1).max()
    assert np.all(dists[np.arange(len(used)), used] < 1e-6 * scale)
    for t in range(epochs):  # each epoch processes every record exactly once
        assert sorted(used[t * n:(t + 1) * n]) == list(range(n))
    np.testing.assert_allclose(run.theta_f[0], f_seq[-1], rtol=1e-12)


def test_clipped_sep_keeps_site_within_clipping_norm():
    x, y, theta_0, lik = conjugate_problem(n_records=10, d=2)
    c = 1.0
    params = DPSEPParams(clipping_norm=c, damping=1.0, noise_multiplier=None,
                         reading="sep-invariant")
    run = run_sep(x, y, lik, theta_0, epochs=3, n_trials=2, params=params,
                  rng=np.random.default_rng(0))
    site_norms = np.linalg.norm((run.trace[:, 1:] - theta_0) / len(y), axis=-1)
    assert np.all(site_norms <= c * (1 + 1e-12))
    # the unclipped sites are larger than C, so clipping was active
    assert np.linalg.norm(lik.site(None, None, x, y), axis=1).max() > c


# --------------------------------------------------------------------------- (f) noise


@pytest.mark.parametrize(
    ("reading", "expected_std", "expected_true"),
    [
        ("as-printed", 3.0 * 2 * 0.5 * 2.0 / 100, 2 * 0.5 * 2.0 / 100),
        ("sep-invariant", 3.0 * 2 * 0.5 * 2.0 / 100, 2 * 0.5 * 2.0),
        ("sep-invariant-recalibrated", 3.0 * 2 * 0.5 * 2.0, 2 * 0.5 * 2.0),
    ],
)
def test_noise_std_and_sensitivities(reading, expected_std, expected_true):
    params = DPSEPParams(clipping_norm=2.0, damping=0.5, noise_multiplier=3.0, reading=reading)
    assert params.noise_std(100) == pytest.approx(expected_std, rel=1e-14)
    assert params.claimed_sensitivity(100) == pytest.approx(2 * 0.5 * 2.0 / 100, rel=1e-14)
    assert params.true_sensitivity_bound(100) == pytest.approx(expected_true, rel=1e-14)
    clipped = DPSEPParams(clipping_norm=2.0, damping=0.5, noise_multiplier=None, reading=reading)
    assert clipped.noise_std(100) == 0.0


@pytest.mark.parametrize("reading", READINGS)
def test_released_noise_has_the_stated_std(reading):
    """First released step over many trials: residuals ~ N(0, noise_std^2) i.i.d."""
    n, d = 10, 2
    x = np.tile([[0.3, -0.2]], (n, 1))  # identical records: the first step is the same in
    y = np.full(n, 0.4)                 # every trial whatever the permutation
    theta_0 = flatten_natural(np.zeros(d), np.eye(d) * 0.5)
    lik = LinearGaussian(noise_variance=1.0)
    params = DPSEPParams(clipping_norm=1.0, damping=0.8, noise_multiplier=2.0, reading=reading)
    n_trials = 2000
    run = run_sep(x, y, lik, theta_0, epochs=1, n_trials=n_trials, params=params,
                  record_steps=True, rng=np.random.default_rng(77))
    std = params.noise_std(n)
    assert run.info["noise_std"] == std
    site = lik.site(None, None, x[:1], y[:1])[0]
    site = site * min(1.0, params.clipping_norm / np.linalg.norm(site))
    mean = dpsep_theta_new(np.zeros_like(site), site, theta_0, n, params)
    resid = run.released[:, 0, 0] - mean
    dof = resid.size
    stat = np.sum(resid**2) / std**2  # chi2(dof) if the std is right
    # Two-sided chi-square test at false-alarm rate 1e-6 (deterministic under the seed).
    assert chi2.ppf(0.5e-6, dof) < stat < chi2.ppf(1 - 0.5e-6, dof)
    # and the trials really differ (own noise per trial)
    assert len(np.unique(run.released[:, 0, 0, 0])) == n_trials


# --------------------------------------------------------------------------- (g) vectorisation


def test_vectorised_trials_shapes_independence_and_reproducibility():
    x, y, theta_0, lik = conjugate_problem(n_records=6, d=2)
    p = natural_dim(2)
    params = DPSEPParams(clipping_norm=50.0, damping=1.0, noise_multiplier=1.0,
                         reading="as-printed")
    kwargs = dict(epochs=2, n_trials=3, params=params, record_steps=True)
    a = run_sep(x, y, lik, theta_0, rng=np.random.default_rng(2024), **kwargs)
    b = run_sep(x, y, lik, theta_0, rng=np.random.default_rng(2024), **kwargs)
    c = run_sep(x, y, lik, theta_0, rng=np.random.default_rng(2025), **kwargs)
    assert a.theta_q.shape == (3, p)
    assert a.theta_f.shape == (3, p)
    assert a.trace.shape == (3, 3, p)
    assert a.released.shape == (3, 2, 6, p)
    for field in ("theta_q", "theta_f", "trace", "released"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert a.n_projections == b.n_projections
    assert not np.array_equal(a.theta_q, c.theta_q)
    # trials differ from one another
    for i in range(3):
        for j in range(i + 1, 3):
            assert not np.allclose(a.theta_q[i], a.theta_q[j])
    # no record_steps: nothing kept
    assert run_sep(x, y, lik, theta_0, epochs=1, rng=np.random.default_rng(0)).released is None


def test_probit_dp_sep_runs_with_projection_count():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((30, 2))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.where(x @ np.array([2.0, -1.0]) + 0.3 * rng.standard_normal(30) > 0, 1.0, -1.0)
    theta_0 = flatten_natural(np.zeros(2), np.eye(2))
    params = DPSEPParams(clipping_norm=2.0, damping=1.0, noise_multiplier=5.0,
                         reading="sep-invariant-recalibrated")
    run = run_sep(x, y, Probit(), theta_0, epochs=2, n_trials=4, params=params,
                  rng=np.random.default_rng(3))
    assert np.all(np.isfinite(run.theta_q))
    # big noise (std 20 per coordinate) makes indefinite cavities: they are projected
    assert run.n_projections > 0


def test_cavity_moments_projection():
    good = flatten_natural(np.array([1.0, 2.0]), np.diag([2.0, 4.0]))
    bad = flatten_natural(np.array([1.0, 2.0]), np.diag([2.0, -4.0]))
    mean, cov, projected = cavity_moments(np.stack([good, bad]), 1e-3)
    np.testing.assert_array_equal(projected, [False, True])
    np.testing.assert_allclose(mean[0], [0.5, 0.5])
    np.testing.assert_allclose(cov[1], np.diag([0.5, 1e3]))
    with pytest.raises(ValueError, match="not positive definite"):
        cavity_moments(np.stack([good, bad]), None)


# --------------------------------------------------------------------------- (h) bad input


def test_nan_in_features_raises():
    x, y, theta_0, lik = conjugate_problem(n_records=5)
    x[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"x \(features\).*nan"):
        run_sep(x, y, lik, theta_0, epochs=1, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"x \(features\)"):
        run_ep(x, y, lik, theta_0, epochs=1, rng=np.random.default_rng(0))


def test_mismatched_x_y_raises():
    x, y, theta_0, lik = conjugate_problem(n_records=5)
    with pytest.raises(ValueError, match="5 rows but y has 4"):
        run_sep(x, y[:4], lik, theta_0, epochs=1, rng=np.random.default_rng(0))


def test_wrong_theta_0_shape_raises():
    x, y, _, lik = conjugate_problem(n_records=5, d=2)
    with pytest.raises(ValueError, match=r"theta_0 must have shape \(5,\)"):
        run_sep(x, y, lik, np.ones(9), epochs=1, rng=np.random.default_rng(0))


def test_prior_outside_clipping_norm_raises_for_dp_run():
    x, y, _, lik = conjugate_problem(n_records=5, d=2)
    theta_0 = flatten_natural(np.zeros(2), 3.0 * np.eye(2))  # norm 3 * sqrt(2) = 4.24
    params = DPSEPParams(clipping_norm=1.0, noise_multiplier=1.0)
    with pytest.raises(ValueError, match=r"\|\|theta_0\|\| = 4\.24.*C = 1\.0"):
        run_sep(x, y, lik, theta_0, epochs=1, params=params, rng=np.random.default_rng(0))
    # plain SEP has no clipping norm: the same prior is fine
    run_sep(x, y, lik, theta_0, epochs=1, rng=np.random.default_rng(0))


def test_unknown_reading_raises():
    with pytest.raises(ValueError, match="'as printed'"):
        DPSEPParams(reading="as printed")


@pytest.mark.parametrize("sigma", [0.0, -1.0, float("nan")])
def test_non_positive_noise_multiplier_raises(sigma):
    with pytest.raises(ValueError, match="noise_multiplier") as info:
        DPSEPParams(noise_multiplier=sigma)
    assert repr(sigma) in str(info.value)


@pytest.mark.parametrize("field", ["clipping_norm", "damping", "pd_floor"])
def test_non_positive_hyperparameters_raise(field):
    with pytest.raises(ValueError, match=f"{field}.*-2"):
        DPSEPParams(**{field: -2.0})


def test_bad_counts_and_damping_raise():
    x, y, theta_0, lik = conjugate_problem(n_records=5)
    with pytest.raises(ValueError, match="epochs"):
        run_sep(x, y, lik, theta_0, epochs=0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_trials"):
        run_sep(x, y, lik, theta_0, epochs=1, n_trials=0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="damping.*0"):
        run_sep(x, y, lik, theta_0, epochs=1, damping=0.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="noise_variance"):
        LinearGaussian(noise_variance=0.0)


# --------------------------------------------------------------------------- the claims' verdicts
def test_prop1_verdicts_search_refutes_but_never_certifies():
    """Prop. 1 (dpclaims.papers.dpsep.checks.check_prop1): a search with no counterexample
    is inconclusive (it gives a lower bound, no upper bound); SEP's own update is refuted
    by a shrunk counterexample."""
    from dataclasses import replace

    from dpclaims.papers.dpsep.catalogue import BUDGETS
    from dpclaims.papers.dpsep.checks import check_prop1

    v = {x.reading: x for x in check_prop1(replace(BUDGETS["smoke"], property_examples=10), 0)}
    printed = v["as-printed"]
    assert printed.verdict == "inconclusive" and not printed.certificate
    assert "A search refutes a bound but cannot certify one" in printed.sentence
    assert all(p["upper"] is None and p["lower"]["value"] <= 1.0
               for p in printed.evidence["basis"]["parts"])
    inv = v["sep-invariant"]
    assert inv.verdict == "refuted" and inv.certificate
    assert "shrunk counterexample" in inv.sentence and "above the claimed" in inv.sentence
    assert {"probit", "linear-gaussian", "basis"} == set(inv.evidence)


def test_prop2_verdicts_exact_composition_and_hidden_shuffle():
    """Prop. 2 (check_prop2) on two small settings that share a name, as the paper's
    three MoG settings do: the exact T-fold Gaussian composition refutes epsilon = 1 for
    a pass order the adversary knows; for a hidden shuffle only upper bounds exist, so it
    is inconclusive (never refuted), each setting's bound from its own sigma (before the
    fix, every "mog" part carried the last one's)."""
    from dataclasses import replace

    from dpclaims.papers.dpsep.catalogue import BUDGETS
    from dpclaims.papers.dpsep.checks import check_prop2

    budget = replace(BUDGETS["smoke"], accounting_settings=0)
    verdicts, section = check_prop2(budget, 0, [("toy", 100, 5, 1.0), ("toy", 100, 5, 5.0)])
    assert len(verdicts) == 6 and section["table"]["rows"]
    for v in verdicts:
        setting = v.evidence["settings"][0]
        lo, hi = setting["exact_epsilon_known_order_bracket"]
        assert lo <= setting["exact_epsilon_known_order"] <= hi
        if v.reading.endswith("pass order known to the adversary"):
            assert v.verdict == "refuted" and v.certificate
            assert "exact composition, sqrt(T)/σ-GDP" in v.sentence
        else:
            assert v.reading.endswith("hidden shuffle")
            assert v.verdict == "inconclusive" and "no certified lower bound" in v.sentence
            uppers = [p["upper"]["value"] for p in v.evidence["basis"]["parts"]]
            exact = [s["exact_epsilon_known_order"] for s in v.evidence["settings"]]
            assert uppers[0] < uppers[1], uppers  # more noise for epsilon 1 than for 5
            # the hidden shuffle's upper end is the exact composition of its own sigma
            assert uppers == pytest.approx(exact, rel=1e-6), (uppers, exact)

