"""Tests of dpclaims.analysis.ou (DPVIm Sec. 3.2 and Appendix E: OU / AR(1) model of DP-SGD).

Statistical tests use fixed seeds (so they are deterministic) and z-tests at 4 standard
errors; the false-alarm rate of one such test under the model is 2·Φ(-4) ≈ 6.3e-5, stated
per test with the number of such comparisons.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import lfilter

from dpclaims.analysis.ou import (
    AR1Fit,
    BurnoutResult,
    default_burnout_candidates,
    fit_ar1,
    linreg_burnout,
    lyapunov_stationary_cov,
    rhat_burnout,
    split_rhat,
    var_of_mean_batch_means,
)

Z4 = 4.0  # two-sided false-alarm rate 2*Phi(-4) = 6.3e-5 per comparison


def simulate_ar1(rng, phi, mu, innovation_var, n, reps=()):
    """Stationary AR(1) x_t = mu + phi (x_{t-1} - mu) + e_t, shape (n, *reps); started in
    the stationary law so there is no transient. Vectorised with scipy.signal.lfilter."""
    reps = tuple(np.atleast_1d(reps)) if reps != () else ()
    gamma0 = innovation_var / (1.0 - phi**2)
    eps = rng.normal(scale=np.sqrt(innovation_var), size=(n, *reps))
    x_prev = rng.normal(scale=np.sqrt(gamma0), size=(1, *reps))
    y, _ = lfilter([1.0], [1.0, -phi], eps, axis=0, zi=phi * x_prev)
    return mu + y


def exact_var_of_mean(phi, gamma0, n):
    """Direct sum gamma0/n [1 + 2 sum_{k=1}^{n-1} (1 - k/n) phi^k] (independent of ou.py)."""
    k = np.arange(1, n)
    return gamma0 / n * (1.0 + 2.0 * np.sum((1.0 - k / n) * phi**k))


def random_rotation(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def spd(rng, eigenvalues):
    q = random_rotation(rng, len(eigenvalues))
    out = (q * np.asarray(eigenvalues)) @ q.T
    return 0.5 * (out + out.T)


# ------------------------------------------------------------------------ AR(1) recovery


@pytest.mark.parametrize("phi", [0.5, 0.9, 0.98])
def test_ar1_recovers_phi_mean_and_variances(phi):
    # 4 z-tests at 4 SE from asymptotic (Gaussian AR(1)) standard errors:
    # false-alarm rate <= 4 * 6.3e-5 = 2.5e-4 per phi.
    rng = np.random.default_rng(int(phi * 1000))
    n, mu, s2 = 20_000, 3.0, 0.25
    x = simulate_ar1(rng, phi, mu, s2, n)
    fit = fit_ar1(x)
    assert isinstance(fit, AR1Fit)
    assert fit.phi.shape == () and fit.n_used == n and bool(fit.stationary)
    gamma0 = s2 / (1 - phi**2)
    se_phi = np.sqrt((1 - phi**2) / n)
    se_mean = np.sqrt(exact_var_of_mean(phi, gamma0, n))
    se_gamma0 = np.sqrt(2 * gamma0**2 / n * (1 + phi**2) / (1 - phi**2))
    se_s2 = np.sqrt(2 * s2**2 / n)
    assert abs(fit.phi - phi) < Z4 * se_phi
    assert abs(fit.mean - mu) < Z4 * se_mean
    assert abs(fit.stationary_var - gamma0) < Z4 * se_gamma0
    assert abs(fit.innovation_var - s2) < Z4 * se_s2
    # Deterministic identities between the fields.
    assert fit.mean == pytest.approx(fit.intercept / (1 - fit.phi), rel=1e-12)
    assert fit.ess == pytest.approx(fit.stationary_var / fit.var_of_mean, rel=1e-12)
    assert fit.naive_var_of_mean == pytest.approx(fit.stationary_var / n, rel=1e-12)


@pytest.mark.parametrize("phi", [-0.6, 0.3, 0.95, 0.999])
def test_var_of_mean_closed_form_equals_direct_sum(phi):
    # Deterministic: the module's closed form vs the direct sum at the fitted phi.
    rng = np.random.default_rng(7)
    x = simulate_ar1(rng, phi, 0.0, 1.0, 3000)
    fit = fit_ar1(x)
    n = fit.n_used
    assert fit.var_of_mean == pytest.approx(
        exact_var_of_mean(float(fit.phi), float(fit.stationary_var), n), rel=1e-9
    )
    assert fit.ess == pytest.approx(
        float(fit.stationary_var) / exact_var_of_mean(float(fit.phi), 1.0 * fit.stationary_var, n),
        rel=1e-9,
    )
    if fit.phi < 0:
        assert np.isnan(fit.ou_theta) and fit.ess > n  # no OU twin; negative correlation helps


def test_two_dimensional_trace_gives_per_parameter_arrays_and_burn_in():
    rng = np.random.default_rng(3)
    x = np.column_stack([simulate_ar1(rng, p, 0.0, 1.0, 500) for p in (0.2, 0.7)])
    fit = fit_ar1(x, burn_in=100)
    assert fit.phi.shape == (2,) and fit.stationary.dtype == bool and fit.n_used == 400
    # Same numbers as fitting each column after slicing by hand.
    for j in range(2):
        single = fit_ar1(x[100:, j])
        assert single.phi == pytest.approx(fit.phi[j], rel=1e-12)
        assert single.var_of_mean == pytest.approx(fit.var_of_mean[j], rel=1e-12)


def test_non_stationary_fit_is_flagged_not_clipped():
    rng = np.random.default_rng(11)
    n = 200
    eps = rng.standard_normal(n)
    explosive = lfilter([1.0], [1.0, -1.05], eps)  # x_t = 1.05 x_{t-1} + e_t
    stable = simulate_ar1(rng, 0.5, 0.0, 1.0, n)
    fit = fit_ar1(np.column_stack([explosive, stable]))
    assert fit.stationary.tolist() == [False, True]
    assert fit.phi[0] > 1.0  # reported as fitted, not clipped to 1
    for field in (
        "mean",
        "stationary_var",
        "var_of_mean",
        "naive_var_of_mean",
        "ess",
        "ou_theta",
        "ou_diffusion_var",
    ):
        value = getattr(fit, field)
        assert np.isnan(value[0]) and np.isfinite(value[1]), field


# -------------------------------------------------------------------------- OU recovery


def test_ou_recovery_from_exact_discretisation():
    # Exact OU transition:
    # X_{t+dt} = mu + e^{-theta dt}(X_t - mu) + N(0, s^2/(2theta) (1 - e^{-2 theta dt})).
    # 3 z-tests at 4 SE (delta-method SEs): false-alarm rate <= 1.9e-4.
    theta, sigma, dt, mu, n = 0.5, 0.8, 0.1, -1.0, 40_000
    phi = np.exp(-theta * dt)
    gamma0 = sigma**2 / (2 * theta)
    x = simulate_ar1(np.random.default_rng(2024), phi, mu, gamma0 * (1 - phi**2), n)
    fit = fit_ar1(x, dt=dt)
    se_phi = np.sqrt((1 - phi**2) / n)
    se_theta = se_phi / (phi * dt)  # d(-log phi / dt)/d phi = -1/(phi dt)
    rse_gamma0 = np.sqrt(2 / n * (1 + phi**2) / (1 - phi**2))
    assert abs(fit.ou_theta - theta) < Z4 * se_theta
    assert abs(fit.stationary_var - gamma0) < Z4 * rse_gamma0 * gamma0
    # sigma_ou^2 = 2 theta gamma0: relative SE <= rse(theta) + rse(gamma0) (triangle inequality)
    rse_diff = se_theta / theta + rse_gamma0
    assert abs(fit.ou_diffusion_var / sigma**2 - 1) < Z4 * rse_diff
    assert fit.ou_diffusion_var == pytest.approx(2 * fit.ou_theta * fit.stationary_var, rel=1e-12)


# -------------------------------------------------------------------------- var of mean


@pytest.fixture(scope="module")
def replicate_traces():
    """4000 independent stationary AR(1) traces (phi = 0.9), shape (n=2000, R=4000)."""
    rng = np.random.default_rng(90)
    return simulate_ar1(rng, 0.9, 1.5, 1.0, 2000, reps=4000)


def test_var_of_mean_matches_replicate_variance_and_naive_is_too_small(replicate_traces):
    x = replicate_traces
    n, reps = x.shape
    phi, gamma0 = 0.9, 1.0 / (1 - 0.81)
    true_vom = exact_var_of_mean(phi, gamma0, n)
    means = x.mean(axis=0)
    emp = means.var(ddof=1)
    rse_emp = np.sqrt(2 / (reps - 1))  # means are Gaussian: Var(s^2)/sigma^4 = 2/(R-1)
    # (a) the exact AR(1) formula at the true phi vs the replicate variance.
    #     One z-test at 4 SE: false-alarm rate 6.3e-5.
    assert abs(emp / true_vom - 1) < Z4 * rse_emp

    # (b) fit_ar1 on 64 replicates (as a (n, 64) trace): the average fitted var_of_mean.
    #     SE from the spread of the 64 fits; plus an allowance for the known first-order
    #     downward bias of phi-hat, -(1+3 phi)/n (Kendall 1954), which lowers var_of_mean by
    #     about 2 (1+3 phi)/(n (1-phi)) = 3.7 %. One z-test at 4 SE: false alarm 6.3e-5.
    fit = fit_ar1(x[:, :64])
    fitted = fit.var_of_mean
    se_fit = fitted.std(ddof=1) / np.sqrt(fitted.size)
    bias_allowance = 2 * (1 + 3 * phi) / (n * (1 - phi)) * true_vom
    assert abs(fitted.mean() - emp) < Z4 * np.hypot(se_fit, rse_emp * emp) + bias_allowance
    # The naive variance, ignoring autocorrelation, is ~ (1-phi)/(1+phi) = 1/19 of the truth.
    assert fit.naive_var_of_mean.mean() < 0.1 * emp
    assert np.all(fit.ess < 0.1 * n)


def test_batch_means_matches_its_expectation_and_the_truth(replicate_traces):
    x = replicate_traces
    n, reps = x.shape
    phi, gamma0 = 0.9, 1.0 / (1 - 0.81)
    a = 20
    b = n // a
    bm = var_of_mean_batch_means(x, n_batches=a)  # all 4000 columns in one call
    assert bm.shape == (reps,)
    # Exact expectation of the batch-means estimator for a stationary series:
    # E[b/(a-1) sum_k (Ybar_k - Ybar)^2] / (ab) = (V_b - V_n)/(a-1), V_m = Var(mean of m points).
    expected = (exact_var_of_mean(phi, gamma0, b) - exact_var_of_mean(phi, gamma0, n)) / (a - 1)
    se = bm.std(ddof=1) / np.sqrt(reps)
    # One z-test at 4 SE on the average of 4000 estimates: false-alarm rate 6.3e-5.
    assert abs(bm.mean() - expected) < Z4 * se
    # Against the truth: with b = 100 ~ 5 autocorrelation times the estimator is biased low
    # by (expected/true - 1), about -10 %; the average agrees with the truth within that
    # bias plus 4 SE.
    true_vom = exact_var_of_mean(phi, gamma0, n)
    assert abs(bm.mean() - true_vom) < abs(expected - true_vom) + Z4 * se
    assert -0.15 < expected / true_vom - 1 < 0
    # More, longer batches reduce the bias (a = 10, b = 200).
    bm10 = var_of_mean_batch_means(x[:, :1000], n_batches=10).mean()
    assert abs(bm10 / true_vom - 1) < abs(bm.mean() / true_vom - 1) + 0.05


def test_batch_means_uses_the_last_batches_and_1d_shape():
    x = np.arange(45.0) ** 1.5
    out = var_of_mean_batch_means(x, n_batches=4)  # b = 11, the first 1 point unused
    used = x[1:].reshape(4, 11).mean(axis=1)
    assert out.shape == ()
    assert out == pytest.approx(11 * used.var(ddof=1) / 44, rel=1e-12)


# ---------------------------------------------------------- DP-SGD on a quadratic loss


def dp_sgd_noise_cov(Z, S, sigma_dp):
    return Z / S + sigma_dp**2 * np.eye(Z.shape[0])


def test_dp_sgd_stationary_covariance_matches_discrete_lyapunov():
    # 500 independent DP-SGD runs on L = 1/2 (xi - xi*)^T A (xi - xi*), gradient noise
    # N(0, Z/S + sigma_DP^2 I). Per-run time averages of (xi - xi*)(xi - xi*)^T over 2000
    # steps after 600 burn-in steps (0.95^1200 ~ 2e-27) are independent across runs, so
    # the SE of each entry's average is the spread over runs / sqrt(500).
    # 6 distinct entries, z-tests at 4 SE: family false-alarm rate <= 3.8e-4.
    rng = np.random.default_rng(5)
    d, runs, burn, steps, lr, S, sigma_dp = 3, 500, 600, 2000, 0.05, 10, 1.0
    A = spd(rng, [1.0, 2.0, 4.0])
    Z = spd(rng, [0.5, 3.0, 8.0])
    N = dp_sgd_noise_cov(Z, S, sigma_dp)
    L = np.linalg.cholesky(N)
    xi_star = np.array([1.0, -2.0, 0.5])
    xi = np.tile(xi_star, (runs, 1))
    acc = np.zeros((runs, d, d))
    noise = rng.standard_normal((burn + steps, runs, d)) @ L.T
    for t in range(burn + steps):
        xi = xi - lr * ((xi - xi_star) @ A.T + noise[t])
        if t >= burn:
            dev = xi - xi_star
            acc += dev[:, :, None] * dev[:, None, :]
    per_run = acc / steps
    emp = per_run.mean(axis=0)
    se = per_run.std(axis=0, ddof=1) / np.sqrt(runs)
    sigma_d = lyapunov_stationary_cov(A, N, lr, form="discrete")
    sigma_c = lyapunov_stationary_cov(A, N, lr, form="continuous")
    iu = np.triu_indices(d)
    z_discrete = (emp - sigma_d)[iu] / se[iu]
    assert np.all(np.abs(z_discrete) < Z4), z_discrete
    # At lr = 0.05 the continuous (E.7) form is off by O(lr ||A||) ~ 10 % on the stiffest
    # direction: the simulation resolves that (some |z| > 4 against E.7).
    z_continuous = (emp - sigma_c)[iu] / se[iu]
    assert np.max(np.abs(z_continuous)) > Z4


def test_diagonal_A_ar1_fit_matches_discrete_lyapunov_diagonal():
    # Diagonal A: each coordinate is marginally AR(1) with phi_i = 1 - lr a_i and
    # innovation variance lr^2 N_ii (the noise may be correlated across coordinates).
    # One long run of 60000 steps, vectorised per coordinate with lfilter.
    # 6 z-tests at 4 SE: false-alarm rate <= 3.8e-4.
    rng = np.random.default_rng(17)
    a = np.array([0.5, 1.0, 2.0])
    lr, S, sigma_dp, n = 0.05, 20, 0.7, 60_000
    Z = spd(rng, [1.0, 4.0, 9.0])
    N = dp_sgd_noise_cov(Z, S, sigma_dp)
    eps = rng.standard_normal((n, 3)) @ np.linalg.cholesky(N).T
    phis = 1 - lr * a
    trace = np.column_stack(
        [lfilter([1.0], [1.0, -phis[i]], -lr * eps[:, i]) for i in range(3)]
    )  # xi* = 0, started at xi*
    sigma_d = lyapunov_stationary_cov(np.diag(a), N, lr, form="discrete")
    fit = fit_ar1(trace, burn_in=2000)  # 0.975^4000 ~ 1e-44: transient gone
    m = fit.n_used
    gamma0 = np.diag(sigma_d)
    assert np.all(np.abs(fit.phi - phis) < Z4 * np.sqrt((1 - phis**2) / m))
    se_gamma0 = np.sqrt(2 * gamma0**2 / m * (1 + phis**2) / (1 - phis**2))
    assert np.all(np.abs(fit.stationary_var - gamma0) < Z4 * se_gamma0)
    # Closed forms for diagonal A: discrete lr N_ii / (a (2 - lr a)); continuous lr N_ii / (2a).
    np.testing.assert_allclose(gamma0, lr * np.diag(N) / (a * (2 - lr * a)), rtol=1e-10)
    sigma_c = lyapunov_stationary_cov(np.diag(a), N, lr, form="continuous")
    np.testing.assert_allclose(np.diag(sigma_c), lr * np.diag(N) / (2 * a), rtol=1e-10)


def test_continuous_form_differs_from_discrete_by_order_lr():
    rng = np.random.default_rng(23)
    A = spd(rng, [0.3, 1.0, 2.5])
    N = dp_sgd_noise_cov(spd(rng, [1.0, 2.0, 5.0]), 16, 0.8)
    lrs = np.array([0.08, 0.04, 0.02, 0.01, 0.005])
    gaps = []
    for lr in lrs:
        sd = lyapunov_stationary_cov(A, N, lr, "discrete")
        sc = lyapunov_stationary_cov(A, N, lr, "continuous")
        # Exact relations: discrete solves A S + S A - lr A S A = lr N; continuous E.7.
        np.testing.assert_allclose(A @ sd + sd @ A - lr * A @ sd @ A, lr * N, atol=1e-12)
        np.testing.assert_allclose(sc @ A + A @ sc, lr * N, atol=1e-12)
        # E.7 understates: S_d - S_c solves a Lyapunov equation with PSD right-hand side.
        assert np.linalg.eigvalsh(sd - sc)[0] > -1e-14
        gaps.append(np.linalg.norm(sd - sc) / np.linalg.norm(sd))
    gaps = np.array(gaps)
    ratios = gaps[:-1] / gaps[1:]  # halving lr should halve the relative gap
    assert np.all((ratios > 1.9) & (ratios < 2.1)), ratios
    assert np.all(gaps / lrs < 1.5 * np.max(np.linalg.eigvalsh(A)))  # O(lr ||A||)


@pytest.mark.parametrize("form", ["discrete", "continuous"])
def test_stationary_cov_is_linear_in_sigma_dp_squared_only_when_Z_is_zero(form):
    rng = np.random.default_rng(31)
    A = spd(rng, [0.5, 1.5])
    lr, S = 0.02, 8
    zero = np.zeros((2, 2))
    s1 = lyapunov_stationary_cov(A, dp_sgd_noise_cov(zero, S, 1.0), lr, form)
    s2 = lyapunov_stationary_cov(A, dp_sgd_noise_cov(zero, S, np.sqrt(2.0)), lr, form)
    np.testing.assert_allclose(s2, 2 * s1, rtol=1e-12)
    if form == "continuous":
        np.testing.assert_allclose(s1, lr / 2 * np.linalg.inv(A), rtol=1e-12)
    # With Z != 0 it is affine: doubling sigma_DP^2 does not double Sigma, but the
    # increments are equal.
    Z = spd(rng, [2.0, 6.0])
    t0 = lyapunov_stationary_cov(A, dp_sgd_noise_cov(Z, S, 0.0), lr, form)
    t1 = lyapunov_stationary_cov(A, dp_sgd_noise_cov(Z, S, 1.0), lr, form)
    t2 = lyapunov_stationary_cov(A, dp_sgd_noise_cov(Z, S, np.sqrt(2.0)), lr, form)
    np.testing.assert_allclose(t2 - t1, t1 - t0, rtol=1e-10, atol=1e-15)
    assert np.linalg.norm(t2 - 2 * t1) > 0.1 * np.linalg.norm(t1)


def test_e1_combined_noise_does_not_have_the_e7_covariance():
    # (E.1) replaces B nu / sqrt(S) + sigma psi by (B / sqrt(S) + sigma I) psi'. The
    # covariance of the latter is Z/S + sigma^2 I + sigma (B + B^T)/sqrt(S) != Z/S + sigma^2 I.
    rng = np.random.default_rng(41)
    Z, S, sigma = spd(rng, [1.0, 3.0]), 4, 0.9
    B = np.linalg.cholesky(Z)
    M = B / np.sqrt(S) + sigma * np.eye(2)
    target = dp_sgd_noise_cov(Z, S, sigma)
    np.testing.assert_allclose(M @ M.T, target + sigma * (B + B.T) / np.sqrt(S), rtol=1e-12)
    assert np.linalg.norm(M @ M.T - target) > 0.3 * np.linalg.norm(target)
    # Eq. (22)'s B_hat with B_hat B_hat^T = Z + S sigma^2 I gives the right covariance.
    B_hat = np.linalg.cholesky(Z + S * sigma**2 * np.eye(2))
    np.testing.assert_allclose(B_hat @ B_hat.T / S, target, rtol=1e-12)


# ---------------------------------------------------------------------------- burn-out


def drift_then_stationary(seed, T=8000, start=5.0, sd=0.05, phi=0.5):
    """Linear drift from `start` to 0 over the first half, then stationary AR(1) around 0."""
    rng = np.random.default_rng(seed)
    drift = np.concatenate([np.linspace(start, 0.0, T // 2), np.zeros(T - T // 2)])
    return drift + simulate_ar1(rng, phi, 0.0, sd**2 * (1 - phi**2), T)


def test_default_candidates_grid():
    c = default_burnout_candidates(1000)
    assert c[0] == 100 and c[-1] == 1000 and np.all(np.diff(c) == 50)
    assert default_burnout_candidates(40).tolist()[0] == 10  # at least 10 points
    assert np.all(np.diff(default_burnout_candidates(40)) > 0)


def test_linreg_burnout_finds_the_stationary_half():
    # Stationary half (4000 pts, sd 0.05, phi 0.5): slope SE ~ sd sqrt(12 tau / w)
    # = 0.05 * sqrt(12 * 3 / 4000) = 0.0047, so the 0.05 threshold is ~10 SE (false
    # non-convergence ~1e-23). A window reaching 5 % of T into the drift has slope ~ -0.13.
    x = drift_then_stationary(1)
    T = x.shape[0]
    res = linreg_burnout(x)
    assert isinstance(res, BurnoutResult) and res.statistic_name == "slope"
    assert res.t_burnout.shape == () and bool(res.converged)
    step = T // 20
    assert abs(int(res.t_burnout) - T // 2) <= step
    assert res.statistic.shape == res.candidates.shape
    passed = np.abs(res.statistic) < 0.05
    assert res.t_burnout == res.candidates[passed].max()


def test_linreg_burnout_pure_drift_does_not_converge_and_is_scale_dependent():
    rng = np.random.default_rng(2)
    T = 4000
    drift = np.linspace(5.0, 0.0, T) + 0.05 * rng.standard_normal(T)
    stationary = simulate_ar1(rng, 0.5, 0.0, 0.05**2 * 0.75, T)
    res = linreg_burnout(np.column_stack([drift, stationary]))
    assert res.converged.tolist() == [False, True]
    assert res.t_burnout[0] == 0 and res.t_burnout[1] == T
    assert res.statistic.shape == (res.candidates.size, 2)
    # Scale dependence: the same stationary trace in units 1000x smaller "fails" the test
    # at short windows, where the slope's noise exceeds the threshold.
    scaled = linreg_burnout(1000 * stationary, candidates=[400, 800])
    assert not bool(scaled.converged)


def test_linreg_slope_by_hand():
    # y = [1, 3, 2] on x = [0, .5, 1]: slope = sum (x - .5)(y) / sum (x - .5)^2 = 0.5/0.5 = 1.
    # y = [0, 0, 1, 3, 2] on x = [0, .25, .5, .75, 1]: 1.75 / 0.625 = 2.8.
    res = linreg_burnout([0.0, 0.0, 1.0, 3.0, 2.0], slope_threshold=1.5, candidates=[5, 3])
    assert res.candidates.tolist() == [3, 5]
    np.testing.assert_allclose(res.statistic, [1.0, 2.8], rtol=1e-12)
    assert int(res.t_burnout) == 3 and bool(res.converged)


def test_rhat_burnout_finds_the_stationary_half():
    # Stationary windows: R-hat^2 - 1 ~ (tau chi2_3 / 3 - 1)/m with tau = 3, m = 1000 at the
    # 50 % window, so R-hat > 1.01 needs chi2_3 > 21 (p ~ 1e-4, doubled for the folded R-hat);
    # a window reaching 400 points into the drift has R-hat ~ 1.05.
    x = drift_then_stationary(1)
    T = x.shape[0]
    res = rhat_burnout(x)
    assert res.statistic_name == "split-rhat" and bool(res.converged)
    assert abs(int(res.t_burnout) - T // 2) <= T // 20
    assert np.all(res.statistic[res.candidates > T // 2 + T // 20] > 1.01)


def test_rhat_burnout_pure_drift_and_invariance():
    rng = np.random.default_rng(4)
    T = 4000
    drift = np.linspace(5.0, 0.0, T) + 0.05 * rng.standard_normal(T)
    stationary = simulate_ar1(rng, 0.3, 0.0, 0.05**2 * 0.91, T)
    res = rhat_burnout(np.column_stack([drift, stationary]))
    assert res.converged.tolist() == [False, True]
    assert res.t_burnout[0] == 0 and np.all(res.statistic[:, 0] > 1.5)
    # Rank-normalised R-hat is invariant to increasing transforms (units), unlike the slope.
    np.testing.assert_allclose(
        split_rhat(stationary), split_rhat(1000 * stationary + 7), rtol=1e-12
    )
    np.testing.assert_allclose(split_rhat(stationary), split_rhat(np.exp(stationary)), rtol=1e-12)


def test_split_rhat_hand_case():
    # Two segments [0,1,2,3] and [4,5,6,7] (pure trend): ranks = values + 1, so
    # normal scores are monotone and the segment means are far apart: R-hat well above 1.
    x = np.arange(8.0)
    assert split_rhat(x, n_splits=2) > 1.5
    # Interleaved segments with equal means and spreads: bulk R-hat < 1 (var+ < W).
    y = np.array([0.0, 3.0, 1.0, 2.0, 3.0, 0.0, 2.0, 1.0])
    assert split_rhat(y, n_splits=2) < 1.0


# -------------------------------------------------------------------------- bad inputs


def _ok(n=100, p=None, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n if p is None else (n, p))


def _with(value, index=3):
    x = _ok()
    x[index] = value
    return x


A2 = np.diag([1.0, 2.0])
N2 = np.eye(2)

BAD_INPUTS = [
    (lambda: fit_ar1(_with(np.nan)), r"non-finite.*index \(3,\):.*nan"),
    (lambda: fit_ar1(_with(np.inf)), r"non-finite.*inf"),
    (lambda: fit_ar1(np.zeros((2, 3, 4))), r"shape \(2, 3, 4\)"),
    (lambda: fit_ar1(_ok(), burn_in=-1), r"burn_in must be an integer >= 0, got -1"),
    (lambda: fit_ar1(_ok(), burn_in=100), r"burn_in must be < T=100, got burn_in=100"),
    (lambda: fit_ar1(_ok(), burn_in=2.5), r"burn_in .* got 2\.5"),
    (lambda: fit_ar1(_ok(15)), r"at least 20 points .* T=15 and burn_in=0 leaves 15"),
    (lambda: fit_ar1(_ok(30), burn_in=20), r"at least 20 points .* T=30 and burn_in=20 leaves 10"),
    (lambda: fit_ar1(_ok(), dt=0.0), r"dt must be .* > 0, got 0\.0"),
    (lambda: fit_ar1(np.column_stack([_ok(), np.full(100, 2.5)])), r"column 1 is constant.*2\.5"),
    (lambda: var_of_mean_batch_means(_with(np.nan)), r"non-finite.*nan"),
    (lambda: var_of_mean_batch_means(_ok(19)), r"at least 20 points .* leaves 19"),
    (lambda: var_of_mean_batch_means(_ok(), n_batches=1), r"n_batches .* got 1"),
    (lambda: var_of_mean_batch_means(_ok(), n_batches=101), r"100 points .* n_batches=101"),
    (lambda: linreg_burnout(_ok(), slope_threshold=0.0), r"slope_threshold .* got 0\.0"),
    (lambda: linreg_burnout(_ok(), slope_threshold=-0.05), r"slope_threshold .* got -0\.05"),
    (lambda: linreg_burnout(_with(-np.inf)), r"non-finite.*-inf"),
    (lambda: linreg_burnout(np.zeros((5, 2, 2))), r"shape \(5, 2, 2\)"),
    (lambda: linreg_burnout(_ok(15)), r"at least 20 points, got T=15"),
    (lambda: linreg_burnout(_ok(), candidates=[50, 200]), r"window 200 exceeds .* T=100"),
    (lambda: linreg_burnout(_ok(), candidates=[1, 50]), r"candidate window .* >= 2, got 1"),
    (lambda: linreg_burnout(_ok(), candidates=[12.5]), r"candidate window .* got 12\.5"),
    (lambda: rhat_burnout(_ok(), threshold=1.0), r"threshold .* > 1, got 1\.0"),
    (lambda: rhat_burnout(_ok(), threshold=np.nan), r"threshold .* > 1, got nan"),
    (lambda: rhat_burnout(_ok(), n_splits=1), r"n_splits .* got 1"),
    (lambda: rhat_burnout(_ok(), candidates=[6]), r"candidate window .* >= 8, got 6"),
    (lambda: rhat_burnout(_with(np.nan)), r"non-finite.*nan"),
    (lambda: lyapunov_stationary_cov(A2, N2, 0.0), r"lr must be .* > 0, got 0\.0"),
    (lambda: lyapunov_stationary_cov(A2, N2, -0.1), r"lr must be .* > 0, got -0\.1"),
    (lambda: lyapunov_stationary_cov(A2, np.eye(3), 0.1), r"shape of A \(2, 2\).*\(3, 3\)"),
    (lambda: lyapunov_stationary_cov(np.ones((2, 3)), N2, 0.1), r"square.*\(2, 3\)"),
    (lambda: lyapunov_stationary_cov(np.ones(2), N2, 0.1), r"A must have 2 dim.*\(2,\)"),
    (lambda: lyapunov_stationary_cov(np.diag([1.0, -0.5]), N2, 0.1), r"real part -0\.5"),
    (lambda: lyapunov_stationary_cov(A2, N2, 1.1, "discrete"), r"spectral radius.*1\.2.*lr=1\.1"),
    (lambda: lyapunov_stationary_cov(A2, [[1.0, 0.5], [0.0, 1.0]], 0.1), r"symmetric.*0\.5"),
    (lambda: lyapunov_stationary_cov(A2, np.diag([1.0, -2.0]), 0.1), r"semi-definite.*-2\.0"),
    (lambda: lyapunov_stationary_cov(A2, N2, 0.1, form="exact"), r"form .* got 'exact'"),
    (
        lambda: lyapunov_stationary_cov([[np.nan, 0], [0, 1]], N2, 0.1),
        r"A contains .*index \(0, 0\):.*nan",
    ),
]


@pytest.mark.parametrize("call, match", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_value(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_continuous_form_accepts_a_step_size_the_discrete_form_rejects():
    # Not a silent clip: the continuous OU formula exists for any lr > 0, while the
    # discrete iterates diverge when rho(I - lr A) >= 1, which is reported.
    out = lyapunov_stationary_cov(A2, N2, 1.1, "continuous")
    np.testing.assert_allclose(out, 1.1 / 2 * np.linalg.inv(A2))
