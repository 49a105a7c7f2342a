"""Tests of the numpy DPVI / DPVIm reference implementation (``dpclaims.algorithms.dpvi.dpvi``).

Paper: Jälkö, Prediger, Honkela & Kaski, "DPVIm" (``../shared/papers/dpvim.txt``):
Sec. 2.2 (eqs. 6-10), Sec. 3.1 (eqs. 11-20, Algorithms 1-2), App. B-D, App. J.

Everything is seeded, so each test is deterministic; for every statistical assertion the
comment states the probability that it would fail under a fresh seed although the code is
right (its false-alarm rate). Data are small (N <= 200, d <= 4) to keep the file fast.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit, log_expit

from dpclaims.algorithms.dpvi.dpvi import (
    VARIANTS,
    DPVIConfig,
    FullRank,
    LinearRegression,
    LogisticRegression,
    MeanField,
    Transform,
    _Adam,
    correlation_matrix_alg_j1,
    dp_step,
    draw_batches,
    elbo_single_sample,
    family_for,
    fisher_blocks,
    per_example_gradients,
    released_dim,
    run_dpvi,
    simulate_app_j,
    vi_optimum,
)

TRANSFORMS = ("softplus", "exp")
FAMILIES = (MeanField, FullRank)
MODELS = (LogisticRegression(prior_std=1.3), LinearRegression(noise_std=0.7, prior_std=1.3))


# ----------------------------------------------------------------------- test helpers
# Written independently of the module (own transforms, Cholesky filling, densities), so
# that the checks below do not reuse the code they check.

def t_fn(name, s):
    return np.log1p(np.exp(s)) if name == "softplus" else np.exp(s)


def t_prime(name, s):
    return 1.0 / (1.0 + np.exp(-s)) if name == "softplus" else np.exp(s)


def t_inv(name, sigma):
    return np.log(np.expm1(sigma)) if name == "softplus" else np.log(sigma)


def chol_from(family, xi):
    """L (R, d, d) from xi (R, P): row-major lower triangle, T on the diagonal."""
    d = family.dim
    a = xi[:, d:]
    L = np.zeros((xi.shape[0], d, d))
    k = 0
    for i in range(d):
        for j in range(i + 1):
            L[:, i, j] = t_fn(family.transform.name, a[:, k]) if i == j else a[:, k]
            k += 1
    return L


def my_theta(family, xi, eta):
    d = family.dim
    if isinstance(family, MeanField):
        return xi[:, :d] + t_fn(family.transform.name, xi[:, d:]) * eta
    return xi[:, :d] + np.einsum("rij,rj->ri", chol_from(family, xi), eta)


def my_loglik(model, theta, x, y):
    """log p(y | x, theta) per record (R, B) via scipy.stats."""
    a = np.einsum("rbd,rd->rb", x, theta)
    if isinstance(model, LinearRegression):
        return stats.norm.logpdf(y, loc=a, scale=model.noise_std)
    return y * log_expit(a) + (1 - y) * log_expit(-a)


def my_logprior(model, theta):
    return stats.norm.logpdf(theta, scale=model.prior_std).sum(axis=-1)


def my_entropy(family, xi):
    """H(q) = 1/2 log det(2 pi e Sigma) per run."""
    d = family.dim
    if isinstance(family, MeanField):
        cov = np.stack([np.diag(v) for v in t_fn(family.transform.name, xi[:, d:]) ** 2])
    else:
        L = chol_from(family, xi)
        cov = L @ np.swapaxes(L, -1, -2)
    return 0.5 * np.linalg.slogdet(2 * np.pi * np.e * cov)[1]


def my_elbo(model, family, xi, eta, x, y):
    theta = my_theta(family, xi, eta)
    return (my_loglik(model, theta, x, y).sum(-1) + my_logprior(model, theta)
            + my_entropy(family, xi))


def random_xi(family, n_runs, rng, sigma_range=(0.3, 1.2)):
    """Distinct xi per run: m ~ N(0, 0.5^2), scales T(.) in sigma_range, off-diagonal
    Cholesky entries ~ N(0, 0.3^2)."""
    d, name = family.dim, family.transform.name
    m = 0.5 * rng.standard_normal((n_runs, d))
    if isinstance(family, MeanField):
        scale = t_inv(name, rng.uniform(*sigma_range, size=(n_runs, d)))
    else:
        scale = 0.3 * rng.standard_normal((n_runs, family.n_scale))
        diag = [i * (i + 1) // 2 + i for i in range(d)]
        scale[:, diag] = t_inv(name, rng.uniform(*sigma_range, size=(n_runs, d)))
    return np.concatenate([m, scale], axis=1)


def random_data(model, n_runs, n, d, rng):
    """A different data set per run: x (R, n, d), y (R, n)."""
    x = rng.standard_normal((n_runs, n, d))
    w = rng.standard_normal((n_runs, d))
    a = np.einsum("rnd,rd->rn", x, w)
    if isinstance(model, LinearRegression):
        return x, a + model.noise_std * rng.standard_normal((n_runs, n))
    return x, (rng.random((n_runs, n)) < expit(a)).astype(float)


def finite_diff(f, xi, h=1e-6):
    """Central differences of f: (R, P) -> (R,), one run's coordinate at a time.

    Also asserts that moving run r's parameters leaves every other run's value unchanged
    (the runs of the leading axis must not interact).
    """
    n_runs, n_par = xi.shape
    base = f(xi)
    out = np.empty_like(xi)
    for r in range(n_runs):
        others = np.arange(n_runs) != r
        for p in range(n_par):
            xp, xm = xi.copy(), xi.copy()
            xp[r, p] += h
            xm[r, p] -= h
            fp, fm = f(xp), f(xm)
            assert np.array_equal(fp[others], base[others])
            out[r, p] = (fp[r] - fm[r]) / (2 * h)
    return out


def combos():
    return [pytest.param(fam, model, t, id=f"{fam.__name__}-{model.name}-{t}")
            for fam in FAMILIES for model in MODELS for t in TRANSFORMS]


# ------------------------------------------------------------- 1. gradients (eqs. 7-11)

@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform_derivative_inverse_and_app_c_bound(name):
    tr = Transform(name)
    s = np.linspace(-6, 3, 41)
    h = 1e-6
    np.testing.assert_allclose(tr(s), t_fn(name, s), rtol=1e-13)
    np.testing.assert_allclose(tr.derivative(s), (tr(s + h) - tr(s - h)) / (2 * h), rtol=1e-7)
    np.testing.assert_allclose(tr.inverse(tr(s)), s, rtol=1e-9, atol=1e-12)
    # App. C: T'(s) <= T(s) for softplus and exp.
    assert np.all(tr.derivative(s) <= tr(s) * (1 + 1e-15))


@pytest.mark.parametrize(("fam_cls", "model", "tname"), combos())
def test_elbo_single_sample_matches_independent_formula(fam_cls, model, tname):
    rng = np.random.default_rng(11)
    family = fam_cls(3, Transform(tname))
    n_runs = 4
    xi = random_xi(family, n_runs, rng)
    eta = rng.standard_normal((n_runs, 3))
    x, y = random_data(model, n_runs, 7, 3, rng)
    np.testing.assert_allclose(elbo_single_sample(model, family, xi, eta, x, y),
                               my_elbo(model, family, xi, eta, x, y), rtol=1e-12)
    np.testing.assert_allclose(family.entropy(xi), my_entropy(family, xi), rtol=1e-12)
    np.testing.assert_allclose(family.sample(xi, eta), my_theta(family, xi, eta), rtol=1e-13)


@pytest.mark.parametrize(("fam_cls", "model", "tname"), combos())
def test_summed_per_example_gradients_equal_finite_differences_of_elbo(fam_cls, model, tname):
    """Sum over the whole data of (g_m,x, g_s,x) (eqs. 9, 10) = grad_xi of the objective.

    R = 3 runs with different xi, eta and data, so that a broadcasting mistake across the
    leading axis (which R = 1 hides) shows up.
    """
    rng = np.random.default_rng(12)
    d, n, n_runs = 3, 8, 3
    family = fam_cls(d, Transform(tname))
    xi = random_xi(family, n_runs, rng)
    eta = rng.standard_normal((n_runs, d))
    x, y = random_data(model, n_runs, n, d, rng)
    g_m, g_s = per_example_gradients(model, family, xi, eta, x, y, n)
    assert g_m.shape == (n_runs, n, d) and g_s.shape == (n_runs, n, family.n_scale)
    analytic = np.concatenate([g_m.sum(axis=1), g_s.sum(axis=1)], axis=-1)
    numeric = finite_diff(lambda z: elbo_single_sample(model, family, z, eta, x, y), xi)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("fam_cls", "model", "tname"), combos())
def test_each_per_example_gradient_equals_finite_differences(fam_cls, model, tname):
    """Record x's share: log p(x | theta) + (log p(theta) + H(q)) / N (eqs. 9, 10)."""
    rng = np.random.default_rng(13)
    d, n, n_runs = 3, 5, 3
    family = fam_cls(d, Transform(tname))
    xi = random_xi(family, n_runs, rng)
    eta = rng.standard_normal((n_runs, d))
    x, y = random_data(model, n_runs, n, d, rng)
    g_m, g_s = per_example_gradients(model, family, xi, eta, x, y, n)
    for i in range(n):
        def share(z, i=i):
            theta = my_theta(family, z, eta)
            return (my_loglik(model, theta, x[:, i:i + 1], y[:, i:i + 1])[:, 0]
                     + (my_logprior(model, theta) + my_entropy(family, z)) / n)
        numeric = finite_diff(share, xi)
        analytic = np.concatenate([g_m[:, i], g_s[:, i]], axis=-1)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7)


def test_eq11_scale_gradient_is_eta_tprime_gm_plus_entropy():
    """Proposition 3.1 per example: g_s,x = eta T'(s) g_m,x + grad_s H / N."""
    rng = np.random.default_rng(14)
    family = MeanField(3, Transform("softplus"))
    model = MODELS[0]
    xi = random_xi(family, 3, rng)
    eta = rng.standard_normal((3, 3))
    x, y = random_data(model, 3, 6, 3, rng)
    g_m, g_s = per_example_gradients(model, family, xi, eta, x, y, 50)
    s = xi[:, 3:]
    expected = (eta * t_prime("softplus", s))[:, None, :] * g_m + \
        (t_prime("softplus", s) / t_fn("softplus", s))[:, None, :] / 50
    np.testing.assert_allclose(g_s, expected, rtol=1e-12)


# ------------------------------------------------------------------ 2. the VI optimum

def linreg_data(n=100, d=3, seed=21):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)) @ np.array([[1.0, 0.6, 0.0], [0.0, 0.8, 0.5],
                                                [0.0, 0.0, 0.7]])[:d, :d]
    y = x @ np.array([1.0, -0.5, 0.25])[:d] + 0.7 * rng.standard_normal(n)
    return x, y


@pytest.mark.parametrize("tname", TRANSFORMS)
def test_vi_optimum_linear_regression_mean_field(tname):
    model = LinearRegression(noise_std=0.7, prior_std=1.3)
    x, y = linreg_data()
    prec = x.T @ x / 0.7 ** 2 + np.eye(3) / 1.3 ** 2
    mu = np.linalg.solve(prec, x.T @ y / 0.7 ** 2)
    family = MeanField(3, Transform(tname))
    xi = vi_optimum(model, family, x, y)
    np.testing.assert_allclose(xi[:3], mu, rtol=1e-10)
    np.testing.assert_allclose(t_fn(tname, xi[3:]), 1 / np.sqrt(np.diag(prec)), rtol=1e-10)
    # The correlated design makes the mean-field sigma strictly smaller than the marginal
    # posterior std (so the assertion above is not the marginal-variance reading).
    assert np.all(t_fn(tname, xi[3:]) < np.sqrt(np.diag(np.linalg.inv(prec))) * 0.99)


@pytest.mark.parametrize("tname", TRANSFORMS)
def test_vi_optimum_linear_regression_full_rank_is_the_posterior(tname):
    model = LinearRegression(noise_std=0.7, prior_std=1.3)
    x, y = linreg_data()
    prec = x.T @ x / 0.7 ** 2 + np.eye(3) / 1.3 ** 2
    cov = np.linalg.inv(prec)
    family = FullRank(3, Transform(tname))
    xi = vi_optimum(model, family, x, y)
    np.testing.assert_allclose(xi[:3], cov @ x.T @ y / 0.7 ** 2, rtol=1e-10)
    L = chol_from(family, xi[None])[0]
    np.testing.assert_allclose(L @ L.T, cov, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(family.cholesky(xi[None])[0], L, rtol=1e-12)


def logistic_data(n=100, d=2, seed=2):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    y = (rng.random(n) < expit(x @ np.array([1.5, -1.0])[:d])).astype(float)
    return x, y


def gh_elbo(xi, x, y, tname, prior_std, n_nodes=80):
    """Exact ELBO (up to a constant) of mean-field logistic regression, by Gauss-Hermite."""
    d = x.shape[1]
    nodes, w = np.polynomial.hermite.hermgauss(n_nodes)   # physicists': weight e^{-t^2}
    m, sd = xi[:d], t_fn(tname, xi[d:])
    mu_a, sd_a = x @ m, np.sqrt((x ** 2) @ sd ** 2)
    a = mu_a[:, None] + np.sqrt(2.0) * sd_a[:, None] * nodes[None, :]
    ll = (y[:, None] * log_expit(a) + (1 - y[:, None]) * log_expit(-a)) @ w / np.sqrt(np.pi)
    return ll.sum() - 0.5 * np.sum(m ** 2 + sd ** 2) / prior_std ** 2 + np.sum(np.log(sd))


@pytest.mark.parametrize("tname", TRANSFORMS)
def test_vi_optimum_logistic_is_stationary_by_quadrature(tname):
    """Newton step of our own Gauss-Hermite ELBO at xi* is < 1e-4 (deterministic)."""
    model = LogisticRegression(prior_std=1.0)
    x, y = logistic_data()
    xi = vi_optimum(model, MeanField(2, Transform(tname)), x, y)
    h = 1e-4
    f = lambda z: gh_elbo(z, x, y, tname, 1.0)  # noqa: E731
    eye = np.eye(4)
    grad = np.array([(f(xi + h * e) - f(xi - h * e)) / (2 * h) for e in eye])
    hess = np.array([[(f(xi + h * (ei + ej)) - f(xi + h * (ei - ej)) - f(xi - h * (ei - ej))
                       + f(xi - h * (ei + ej))) / (4 * h * h) for ej in eye] for ei in eye])
    assert np.all(np.linalg.eigvalsh(0.5 * (hess + hess.T)) < 0)   # a maximum
    newton = np.linalg.solve(hess, grad)
    # posterior std here is ~0.3, so 1e-4 in xi is far below any relevant error
    assert np.max(np.abs(newton)) < 1e-4, (grad, newton)


@pytest.mark.parametrize("tname", TRANSFORMS)
def test_vi_optimum_logistic_monte_carlo_gradient_is_zero(tname):
    """E_eta[sum_x (g_m,x, g_s,x)] = grad of the exact ELBO, ~0 at xi*.

    M = 10,000 eta draws; each of the 4 coordinates' means within 5 standard errors (CLT):
    false-alarm rate <= 4 * 5.7e-7 < 3e-6. Power: moving one coordinate of xi* by 0.1
    (a third of a posterior std) pushes that coordinate's mean beyond 5 SE.
    """
    model = LogisticRegression(prior_std=1.0)
    x, y = logistic_data()
    n, d = x.shape
    family = MeanField(d, Transform(tname))
    xi_star = vi_optimum(model, family, x, y)
    n_draws = 10_000
    eta = np.random.default_rng(22).standard_normal((n_draws, d))
    xs, ys = np.broadcast_to(x, (n_draws, n, d)), np.broadcast_to(y, (n_draws, n))

    def mc(xi):
        g_m, g_s = per_example_gradients(model, family, np.broadcast_to(xi, (n_draws, 2 * d)),
                                         eta, xs, ys, n)
        g = np.concatenate([g_m.sum(1), g_s.sum(1)], axis=-1)
        return g.mean(0), g.std(0, ddof=1) / math.sqrt(n_draws)

    mean, se = mc(xi_star)
    assert np.all(np.abs(mean) < 5 * se), (mean, se)
    for j in range(2 * d):
        moved = xi_star.copy()
        moved[j] += 0.1
        mean_j, se_j = mc(moved)
        assert abs(mean_j[j]) > 5 * se_j[j]


def test_vi_optimum_logistic_full_rank_rejected():
    x, y = logistic_data()
    with pytest.raises(ValueError, match="mean-field"):
        vi_optimum(LogisticRegression(), FullRank(2), x, y)


# ------------------------------------------------------------ 3. Fisher information

@pytest.mark.parametrize("tname", TRANSFORMS)
def test_fisher_blocks_match_monte_carlo_score_outer_product(tname):
    """I = E[(grad_xi log q)(grad_xi log q)^T], xi = (m, s), mean-field q.

    Score (written here): d/dm log q = z / sigma, d/ds log q = T'(s)/sigma (z^2 - 1),
    z = (theta - m) / sigma. M = 200,000 draws; each of the 21 distinct entries within 5 of
    its own standard errors: false-alarm rate <= 21 * 5.7e-7 < 1.3e-5 per transform.
    """
    d, n_draws = 3, 200_000
    family = MeanField(d, Transform(tname))
    m = np.array([0.3, -1.0, 2.0])
    s = t_inv(tname, np.array([0.3, 0.8, 2.0]))
    xi = np.concatenate([m, s])[None]
    sigma, tp = t_fn(tname, s), t_prime(tname, s)
    rng = np.random.default_rng(31)
    theta = m + sigma * rng.standard_normal((n_draws, d))
    z = (theta - m) / sigma
    score = np.concatenate([z / sigma, tp / sigma * (z ** 2 - 1)], axis=1)   # (M, 2d)
    prods = score[:, :, None] * score[:, None, :]
    est = prods.mean(0)
    se = prods.std(0, ddof=1) / math.sqrt(n_draws)
    i_m, i_s = fisher_blocks(family, xi)
    assert i_m.shape == (1, d) and i_s.shape == (1, d)
    exact = np.zeros((2 * d, 2 * d))
    exact[:d, :d] = np.diag(i_m[0])
    exact[d:, d:] = np.diag(i_s[0])          # the (m, s) cross block stays zero
    assert np.all(np.abs(est - exact) < 5 * se), np.abs(est - exact) / se
    # The tolerance is tight enough to see a factor-2 slip in I_s (5 SE < 10 % of I_s).
    assert np.all(5 * np.diag(se)[d:] < 0.1 * i_s[0])
    # ... and eqs. (15)-(16): I_m^{-1} = T^2, I_s^{-1} g_s = (eta g^nat + T^2/T' grad H)/(2T').
    np.testing.assert_allclose(1 / i_m[0], sigma ** 2, rtol=1e-12)


# ----------------------------------------------------------------------- 4. dp_step

def step_inputs(variant, seed, *, d=3, n_runs=3, b=6, n_total=50, tname="softplus",
                sigma_range=(0.3, 0.9)):
    rng = np.random.default_rng(seed)
    family = family_for(variant, d, tname)
    model = LinearRegression(noise_std=0.5)
    xi = random_xi(family, n_runs, rng, sigma_range)
    eta = rng.standard_normal((n_runs, d))
    x, y = random_data(model, n_runs, b, d, rng)
    psi = rng.standard_normal((n_runs, released_dim(variant, family)))
    return rng, model, family, xi, eta, x, y, psi, n_total


def test_dp_step_vanilla_nonprivate_direction_is_gradient_sum_over_batch_scale():
    _, model, family, xi, eta, x, y, psi, n_total = step_inputs("vanilla", 41)
    w = np.array([[1, 1, 1, 1, 1, 1], [1, 0, 1, 1, 0, 1], [1, 1, 1, 1, 1, 0]], dtype=float)
    out = dp_step("vanilla", model, family, xi, eta, x, y, w, n_total, 1e12, 0.0, psi, 4.5)
    g_m, g_s = per_example_gradients(model, family, xi, eta, x, y, n_total)
    full = np.concatenate([g_m, g_s], axis=-1)
    expected = np.einsum("rb,rbp->rp", w, full)
    np.testing.assert_allclose(out.released, expected, rtol=1e-13)
    np.testing.assert_allclose(out.direction, expected / 4.5, rtol=1e-13)
    np.testing.assert_array_equal(out.clip_fraction, 0.0)


@pytest.mark.parametrize("variant", ["preconditioned", "natural", "full-rank-vanilla"])
def test_dp_step_nonprivate_direction_of_the_joint_variants(variant):
    """C huge, sigma_DP = 0: per-example eq. (17) (preconditioned), eqs. (15)-(16) in the
    form printed (natural: g_s^nat = (eta g_m^nat + T^2/T' grad H / N) / (2 T')), or the
    plain (g_m, g_a) (full-rank vanilla), summed over the batch and divided by B."""
    _, model, family, xi, eta, x, y, psi, n_total = step_inputs(variant, 48)
    w = np.ones(x.shape[:2])
    out = dp_step(variant, model, family, xi, eta, x, y, w, n_total, 1e12, 0.0, psi, 6.0)
    g_m, g_s = per_example_gradients(model, family, xi, eta, x, y, n_total)
    if variant == "full-rank-vanilla":
        m_part, s_part = g_m, g_s
    else:
        s = xi[:, None, 3:]
        sig, tp = t_fn("softplus", s), t_prime("softplus", s)
        grad_h = tp / sig / n_total
        if variant == "preconditioned":
            m_part, s_part = g_m, eta[:, None, :] * g_m + grad_h / tp
        else:
            m_part = sig ** 2 * g_m
            s_part = (eta[:, None, :] * m_part + sig ** 2 / tp * grad_h) / (2 * tp)
    expected = np.concatenate([m_part.sum(1), s_part.sum(1)], axis=-1) / 6.0
    np.testing.assert_allclose(out.direction, expected, rtol=1e-12)


@pytest.mark.parametrize("entropy_weight", ["per-example", "as-printed"])
@pytest.mark.parametrize("tname", TRANSFORMS)
def test_dp_step_aligned_is_eq11_applied_to_release(tname, entropy_weight):
    """Algorithm 1 line 5 (per batch, divided by B): d_s = eta T'(s) g~_m + grad H / N.

    The "as-printed" reading adds grad H once to the batch sum, i.e. grad H / B after the
    division.
    """
    _, model, family, xi, eta, x, y, psi, n_total = step_inputs("aligned", 42, tname=tname)
    w = np.ones(x.shape[:2])
    b = 6
    out = dp_step("aligned", model, family, xi, eta, x, y, w, n_total, 0.5, 1.3, psi, b,
                  entropy_weight=entropy_weight)
    assert out.released.shape == (3, 3) and out.direction.shape == (3, 6)
    g_m, _ = per_example_gradients(model, family, xi, eta, x, y, n_total)
    norms = np.linalg.norm(g_m, axis=-1, keepdims=True)
    assert np.any(norms > 0.5)                     # clipping is active in this batch
    rel = (g_m * np.minimum(1, 0.5 / norms)).sum(1) + 1.3 * 0.5 * psi
    np.testing.assert_allclose(out.released, rel, rtol=1e-13)
    g_tilde = out.direction[:, :3]
    np.testing.assert_allclose(g_tilde, rel / b, rtol=1e-13)
    s = xi[:, 3:]
    grad_h = t_prime(tname, s) / t_fn(tname, s)
    ent = grad_h / n_total if entropy_weight == "per-example" else grad_h / b
    np.testing.assert_allclose(out.direction[:, 3:], eta * t_prime(tname, s) * g_tilde + ent,
                               rtol=1e-12)


def test_dp_step_full_rank_aligned_is_eq20_applied_to_release():
    """g~_a = J_a(L eta)^T g~_m + grad_a H / N with J_a from finite differences of theta."""
    _, model, family, xi, eta, x, y, psi, n_total = step_inputs("full-rank-aligned", 43)
    w = np.ones(x.shape[:2])
    out = dp_step("full-rank-aligned", model, family, xi, eta, x, y, w, n_total, 0.5, 1.0,
                  psi, 6.0)
    g_tilde = out.direction[:, :3]
    h = 1e-6
    jac = np.empty((3, family.n_scale, 3))              # d theta / d a, per run
    for k in range(family.n_scale):
        xp, xm = xi.copy(), xi.copy()
        xp[:, 3 + k] += h
        xm[:, 3 + k] -= h
        jac[:, k] = (my_theta(family, xp, eta) - my_theta(family, xm, eta)) / (2 * h)
    grad_h = np.stack([finite_diff(lambda z: my_entropy(family, z), xi)])[0][:, 3:]
    expected = np.einsum("rkd,rd->rk", jac, g_tilde) + grad_h / n_total
    np.testing.assert_allclose(out.direction[:, 3:], expected, rtol=1e-6, atol=1e-9)


def test_dp_step_aligned_natural_is_algorithm2():
    _, model, family, xi, eta, x, y, psi, n_total = step_inputs("aligned-natural", 44)
    w = np.ones(x.shape[:2])
    clip, b = 0.05, 6
    out = dp_step("aligned-natural", model, family, xi, eta, x, y, w, n_total, clip, 0.8, psi, b)
    g_m, _ = per_example_gradients(model, family, xi, eta, x, y, n_total)
    s = xi[:, 3:]
    sig, tp = t_fn("softplus", s), t_prime("softplus", s)
    g_nat = sig[:, None, :] ** 2 * g_m                 # eq. (15) per example
    norms = np.linalg.norm(g_nat, axis=-1, keepdims=True)
    rel = (g_nat * np.minimum(1, clip / norms)).sum(1) + 0.8 * clip * psi
    np.testing.assert_allclose(out.released, rel, rtol=1e-13)
    g_tilde = rel / b
    i_m, i_s = 1 / sig ** 2, 2 * tp ** 2 / sig ** 2
    expected_s = (eta * tp * i_m * g_tilde + tp / sig / n_total) / i_s
    np.testing.assert_allclose(out.direction, np.concatenate([g_tilde, expected_s], -1),
                               rtol=1e-12)


def released_noiseless(variant, model, family, xi, eta, x, y, w, n_total, clip, **kw):
    k = released_dim(variant, family)
    zeros = np.zeros((xi.shape[0], k))
    return dp_step(variant, model, family, xi, eta, x, y, w, n_total, clip, 0.0, zeros, 1.0,
                   **kw).released


@pytest.mark.parametrize("variant", VARIANTS)
def test_dp_step_release_sensitivity(variant):
    """Replace-one moves the noiseless release by <= 2C, add-one by <= C (and = C for a
    record with a huge gradient, so clipping is what bounds it). Deterministic."""
    rng, model, family, xi, eta, x, y, _, n_total = step_inputs(variant, 45)
    clip = 0.7
    n_runs, b, d = x.shape
    cands = []
    for scale_x in (0.1, 1.0, 30.0):
        for y_new in (-1e3, -1.0, 0.0, 2.0, 1e3):
            cands.append((scale_x * rng.standard_normal((n_runs, d)),
                          np.full(n_runs, y_new)))
    w = np.ones((n_runs, b))
    base = released_noiseless(variant, model, family, xi, eta, x, y, w, n_total, clip)
    w_pad = np.concatenate([w, np.zeros((n_runs, 1))], axis=1)
    w_add = np.ones((n_runs, b + 1))
    max_add = 0.0
    for x_new, y_new in cands:
        xr, yr = x.copy(), y.copy()
        xr[:, 0], yr[:, 0] = x_new, y_new
        rep = released_noiseless(variant, model, family, xi, eta, xr, yr, w, n_total, clip)
        assert np.all(np.linalg.norm(rep - base, axis=-1) <= 2 * clip * (1 + 1e-12))
        xa = np.concatenate([x, x_new[:, None]], axis=1)
        ya = np.concatenate([y, y_new[:, None]], axis=1)
        without = released_noiseless(variant, model, family, xi, eta, xa, ya, w_pad, n_total,
                                     clip)
        np.testing.assert_allclose(without, base, rtol=1e-13, atol=1e-13)
        with_one = released_noiseless(variant, model, family, xi, eta, xa, ya, w_add, n_total,
                                      clip)
        diff = np.linalg.norm(with_one - without, axis=-1)
        assert np.all(diff <= clip * (1 + 1e-12))
        max_add = max(max_add, diff.max())
    assert max_add >= clip * (1 - 1e-9)


def test_alg2_line4_as_printed_release_exceeds_clip_when_sigma_below_one():
    """Algorithm 2 line 4 as printed sums gamma_x g_m,x with gamma_x from the *natural*
    gradient: a record's contribution has norm min(||g_m,x||, C / T(s)^2), i.e. 4C at
    T(s) = 1/2 (unbounded by C). The "natural" reading stays <= C; at T(s) = 2 both do.
    """
    d, n_runs, b, n_total, clip = 3, 2, 5, 50, 0.5
    model = LinearRegression(noise_std=0.5)
    family = MeanField(d, Transform("softplus"))
    rng = np.random.default_rng(46)
    x, y = random_data(model, n_runs, b, d, rng)
    eta = rng.standard_normal((n_runs, d))
    x_new = 50.0 * rng.standard_normal((n_runs, 1, d))
    y_new = np.full((n_runs, 1), 1e4)
    xa, ya = np.concatenate([x, x_new], 1), np.concatenate([y, y_new], 1)
    w_pad = np.concatenate([np.ones((n_runs, b)), np.zeros((n_runs, 1))], 1)
    w_add = np.ones((n_runs, b + 1))

    def add_one_change(sigma, line4):
        xi = np.concatenate([np.zeros((n_runs, d)),
                             np.full((n_runs, d), t_inv("softplus", sigma))], 1)
        kw = {"alg2_line4": line4}
        r0 = released_noiseless("aligned-natural", model, family, xi, eta, xa, ya, w_pad,
                                n_total, clip, **kw)
        r1 = released_noiseless("aligned-natural", model, family, xi, eta, xa, ya, w_add,
                                n_total, clip, **kw)
        return np.linalg.norm(r1 - r0, axis=-1)

    printed = add_one_change(0.5, "as-printed")
    assert np.all(printed > clip)
    np.testing.assert_allclose(printed, clip / 0.5 ** 2, rtol=1e-9)   # = 4C
    assert np.all(add_one_change(0.5, "natural") <= clip * (1 + 1e-12))
    assert np.all(add_one_change(2.0, "as-printed") <= clip * (1 + 1e-12))


@pytest.mark.parametrize("variant", ["vanilla", "aligned", "aligned-natural",
                                     "full-rank-aligned"])
def test_dp_step_canary_added_exactly_and_oversized_rejected(variant):
    rng, model, family, xi, eta, x, y, psi, n_total = step_inputs(variant, 47)
    clip, nm, b = 0.6, 1.1, 6.0
    w = np.ones(x.shape[:2])
    k = released_dim(variant, family)
    canary = rng.standard_normal((3, k))
    canary *= clip / np.linalg.norm(canary, axis=-1, keepdims=True)    # norm exactly C
    plain = dp_step(variant, model, family, xi, eta, x, y, w, n_total, clip, nm, psi, b)
    with_c = dp_step(variant, model, family, xi, eta, x, y, w, n_total, clip, nm, psi, b,
                     canary=canary)
    np.testing.assert_allclose(with_c.released - plain.released, canary, atol=1e-12)
    # g~_m (aligned) or the whole direction (vanilla) moves by canary / B
    np.testing.assert_allclose(with_c.direction[:, :k] - plain.direction[:, :k], canary / b,
                               atol=1e-12)
    # The noise is sigma_DP * C * psi on top of the clipped sum.
    noiseless = dp_step(variant, model, family, xi, eta, x, y, w, n_total, clip, 0.0, psi, b)
    np.testing.assert_allclose(plain.released - noiseless.released, nm * clip * psi,
                               atol=1e-12)
    with pytest.raises(ValueError, match="canary"):
        dp_step(variant, model, family, xi, eta, x, y, w, n_total, clip, nm, psi, b,
                canary=canary * 1.01)
    with pytest.raises(ValueError, match="canary must have shape"):
        dp_step(variant, model, family, xi, eta, x, y, w, n_total, clip, nm, psi, b,
                canary=canary[:, :-1])
    # several canaries: their summed contribution is bounded by count x C
    two = dp_step(variant, model, family, xi, eta, x, y, w, n_total, clip, nm, psi, b,
                  canary=2 * canary, canary_count=np.full(3, 2.0))
    np.testing.assert_allclose(two.released - plain.released, 2 * canary, atol=1e-12)
    with pytest.raises(ValueError, match="canary_count"):
        dp_step(variant, model, family, xi, eta, x, y, w, n_total, clip, nm, psi, b,
                canary=2 * canary, canary_count=np.ones(3))
    with pytest.raises(ValueError, match="canary_count"):
        dp_step(variant, model, family, xi, eta, x, y, w, n_total, clip, nm, psi, b,
                canary=canary, canary_count=np.ones(2))


def test_dp_step_clip_fraction_on_hand_made_batch():
    """d = 1, m = 0, eta = 0: theta = 0 and g_m,x = x y / noise^2 = y (x = 1) exactly."""
    model = LinearRegression(noise_std=1.0, prior_std=1.0)
    family = MeanField(1, Transform("softplus"))
    xi = np.array([[0.0, 0.3]] * 3)
    eta = np.zeros((3, 1))
    x = np.ones((3, 4, 1))
    y = np.array([[0.5, 2.0, 1.0, 3.0],      # 2.0, 3.0 clipped; 1.0 = C is not: 2/4
                  [0.5, 2.0, 0.1, 3.0],      # weight 0 on the last: 1/3
                  [5.0, 5.0, 5.0, 5.0]])     # empty batch: 0
    w = np.array([[1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0]], dtype=float)
    psi = np.zeros((3, 1))
    out = dp_step("aligned", model, family, xi, eta, x, y, w, 100, 1.0, 0.0, psi, 4.0)
    np.testing.assert_allclose(out.clip_fraction, [0.5, 1 / 3, 0.0], rtol=1e-15)
    np.testing.assert_allclose(out.released[:, 0], [0.5 + 1 + 1 + 1, 0.5 + 1 + 0.1, 0.0])
    # vanilla clips (g_m, g_s) jointly: g_s = grad H / N > 0 pushes the record at
    # ||g_m|| = C over the threshold.
    psi2 = np.zeros((3, 2))
    out = dp_step("vanilla", model, family, xi, eta, x, y, w, 100, 1.0, 0.0, psi2, 4.0)
    np.testing.assert_allclose(out.clip_fraction, [0.75, 1 / 3, 0.0], rtol=1e-15)


# ------------------------------------------------------------------ 5. draw_batches

def test_draw_batches_wor_distinct_and_uniform():
    """Each run: B distinct indices. Inclusion counts over R = 4,000 runs: each index
    ~ Binomial(R, B/N), within 5 SD: false-alarm rate <= 20 * 5.7e-7 < 1.2e-5."""
    n_runs, n, b = 4000, 20, 5
    idx, w = draw_batches(np.random.default_rng(51), n_runs, n,
                          DPVIConfig(sampling="wor", batch_size=b))
    assert idx.shape == (n_runs, b) and np.array_equal(w, np.ones((n_runs, b)))
    assert np.all((idx >= 0) & (idx < n))
    srt = np.sort(idx, axis=1)
    assert np.all(np.diff(srt, axis=1) > 0)
    counts = np.bincount(idx.ravel(), minlength=n)
    p = b / n
    assert np.all(np.abs(counts - n_runs * p) < 5 * math.sqrt(n_runs * p * (1 - p)))
    # B = N: the whole data set, once each
    idx, _ = draw_batches(np.random.default_rng(0), 3, n,
                          DPVIConfig(sampling="wor", batch_size=n))
    assert np.all(np.sort(idx, axis=1) == np.arange(n))


def test_draw_batches_poisson_binomial_counts_and_distinct():
    """Weights sum to K ~ Binomial(N, q) per run.

    R = 4,000 runs, N = 50, q = 0.1: mean of K within 5 SE of qN; sample variance within
    5 SE of Nq(1-q) (SE from the Binomial's 4th central moment); each record's inclusion
    count within 5 SD of Rq. False-alarm rate <= 52 * 5.7e-7 < 3e-5.
    """
    n_runs, n, q = 4000, 50, 0.1
    cfg = DPVIConfig(sampling="poisson", sampling_rate=q)
    idx, w = draw_batches(np.random.default_rng(52), n_runs, n, cfg)
    assert idx.shape == w.shape
    assert set(np.unique(w)) <= {0.0, 1.0}
    k = w.sum(1)
    # weights are a prefix of ones, and the selected (and all padded) indices are distinct
    assert np.array_equal(w, (np.arange(w.shape[1]) < k[:, None]).astype(float))
    assert np.all(np.diff(np.sort(idx, axis=1), axis=1) > 0)
    var = n * q * (1 - q)
    mu4 = 3 * var ** 2 + var * (1 - 6 * q * (1 - q))
    assert abs(k.mean() - n * q) < 5 * math.sqrt(var / n_runs)
    assert abs(k.var(ddof=1) - var) < 5 * math.sqrt((mu4 - var ** 2) / n_runs)
    counts = np.bincount(idx[w > 0], minlength=n)
    assert np.all(np.abs(counts - n_runs * q) < 5 * math.sqrt(n_runs * q * (1 - q)))


# ---------------------------------------------------------------------- 6. run_dpvi

def small_linreg(n=40, d=2, seed=61):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    return x, x @ np.array([1.0, -0.5])[:d] + rng.standard_normal(n)


@pytest.mark.parametrize("variant", ["aligned", "full-rank-vanilla"])
def test_run_dpvi_trace_shape_and_init(variant):
    x, y = small_linreg()
    cfg = DPVIConfig(variant=variant, steps=10, record_every=3, batch_size=8, lr=1e-2)
    family = family_for(variant, 2)
    init = random_xi(family, 3, np.random.default_rng(0))
    res = run_dpvi(LinearRegression(), x, y, cfg, n_runs=3, seed=1, init=init)
    assert res.trace.shape == (5, 3, family.n_params)
    np.testing.assert_array_equal(res.trace_steps, [0, 3, 6, 9, 10])
    np.testing.assert_array_equal(res.trace[0], init)
    np.testing.assert_array_equal(res.trace[-1], res.final)
    assert res.clip_fraction.shape == (3,)
    assert not np.array_equal(res.final[0], res.final[1])     # runs are independent
    # default init: m = 0 (init_mean_std = 0), sigma = init_std
    res = run_dpvi(LinearRegression(), x, y,
                   DPVIConfig(variant=variant, steps=4, batch_size=8, init_std=0.4),
                   n_runs=2, seed=1)
    assert res.trace.shape == (5, 2, family.n_params)
    np.testing.assert_array_equal(res.trace[0][:, :2], 0.0)
    np.testing.assert_allclose(family.std(res.trace[0]), 0.4, rtol=1e-12)


def test_run_dpvi_seed_reproducible():
    x, y = small_linreg()
    cfg = DPVIConfig(variant="aligned", steps=20, batch_size=8, lr=1e-2)
    a = run_dpvi(LinearRegression(), x, y, cfg, n_runs=2, seed=5)
    b = run_dpvi(LinearRegression(), x, y, cfg, n_runs=2, seed=5)
    c = run_dpvi(LinearRegression(), x, y, cfg, n_runs=2, seed=6)
    np.testing.assert_array_equal(a.trace, b.trace)
    np.testing.assert_array_equal(a.clip_fraction, b.clip_fraction)
    assert not np.allclose(a.final, c.final)
    cfg_p = DPVIConfig(variant="vanilla", steps=20, sampling="poisson", sampling_rate=0.2)
    p1 = run_dpvi(LinearRegression(), x, y, cfg_p, n_runs=2, seed=5)
    p2 = run_dpvi(LinearRegression(), x, y, cfg_p, n_runs=2, seed=5)
    np.testing.assert_array_equal(p1.trace, p2.trace)


@pytest.mark.parametrize("tname", TRANSFORMS)
def test_run_dpvi_nonprivate_converges_to_vi_optimum(tname):
    """Non-private full-batch SGD (sigma_DP = 0, C = 1e9, B = N = 50, lr = 0.2, 2,000 steps)
    from m = m* + 5 sigma* (1, -1), sigma = 0.5 (~3 sigma*) to the mean-field optimum.

    The one-sample eta noise stays, so we average the last 1,000 iterates of each of R = 8
    runs and compare the mean over runs. Calibration (400 runs, both transforms): the
    per-run averaged error has SD 0.032 posterior std for m and 0.021 for sigma / sigma*,
    bias < 0.003 for m and < 0.006 for sigma (constant-lr bias of the nonlinear s update).
    The tolerances 0.07 (m, in posterior stds) and 0.05 (relative sigma) are > 6 SD of an
    8-run mean (0.011, 0.0075) plus that bias: false-alarm rate < 4 * 2e-9.
    """
    x, y = small_linreg(n=50, seed=1)
    model = LinearRegression()
    family = MeanField(2, Transform(tname))
    opt = vi_optimum(model, family, x, y)
    sd_opt = family.std(opt)
    cfg = DPVIConfig(variant="vanilla", clip=1e9, noise_multiplier=0.0, steps=2000,
                     batch_size=50, optimiser="sgd", lr=0.2, transform=tname)
    init = family.init(opt[:2] + 5 * sd_opt * np.array([1.0, -1.0]), 0.5, 8)
    res = run_dpvi(model, x, y, cfg, n_runs=8, seed=3, init=init)
    assert np.all(res.clip_fraction == 0)
    avg = res.trace[-1000:].mean(axis=0)                 # (R, P)
    m_err = (avg[:, :2] - opt[:2]) / sd_opt
    sd_err = family.std(avg) / sd_opt - 1
    assert np.all(np.abs(m_err.mean(0)) < 0.07), m_err.mean(0)
    assert np.all(np.abs(sd_err.mean(0)) < 0.05), sd_err.mean(0)


def test_adam_matches_hand_written_scalar_adam():
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    grads = [np.array([[0.5, -2.0], [3.0, 1e-3]]), np.array([[-0.1, 1.0], [2.0, 0.0]]),
             np.array([[0.7, 0.2], [-4.0, 5.0]])]
    xi = np.array([[1.0, -1.0], [0.0, 2.0]])
    opt = _Adam(lr, xi.shape)
    out = xi.copy()
    for t, g in enumerate(grads, start=1):
        out = opt.step(out, g, t)
    for r in range(2):
        for p in range(2):
            v, m1, m2 = float(xi[r, p]), 0.0, 0.0
            for t, g in enumerate(grads, start=1):
                gi = float(g[r, p])
                m1 = b1 * m1 + (1 - b1) * gi
                m2 = b2 * m2 + (1 - b2) * gi * gi
                v += lr * (m1 / (1 - b1 ** t)) / (math.sqrt(m2 / (1 - b2 ** t)) + eps)
            assert out[r, p] == pytest.approx(v, rel=1e-13, abs=1e-15)


# --------------------------------------------------------------------- 7. bad input

def _match(name, value):
    return re.escape(name) + r".*" + re.escape(f"got {value!r}")


@pytest.mark.parametrize(("kwargs", "name", "value"), [
    ({"clip": 0.0}, "clip", 0.0),
    ({"clip": -1.0}, "clip", -1.0),
    ({"clip": float("nan")}, "clip", float("nan")),
    ({"noise_multiplier": -0.5}, "noise_multiplier", -0.5),
    ({"noise_multiplier": float("nan")}, "noise_multiplier", float("nan")),
    ({"noise_multiplier": float("inf")}, "noise_multiplier", float("inf")),
    ({"batch_size": 0}, "batch_size", 0),
    ({"variant": "bogus"}, "variant", "bogus"),
    ({"sampling": "bogus"}, "sampling", "bogus"),
    ({"optimiser": "bogus"}, "optimiser", "bogus"),
    ({"transform": "bogus"}, "transform", "bogus"),
    ({"sampling": "poisson", "sampling_rate": 0.0}, "sampling_rate", 0.0),
    ({"sampling": "poisson", "sampling_rate": 1.0}, "sampling_rate", 1.0),
    ({"sampling": "poisson", "sampling_rate": 1.5}, "sampling_rate", 1.5),
    ({"sampling": "poisson", "sampling_rate": -0.2}, "sampling_rate", -0.2),
    ({"sampling": "poisson", "sampling_rate": float("nan")}, "sampling_rate", float("nan")),
    ({"steps": 0}, "steps", 0),
    ({"lr": -1e-3}, "lr", -1e-3),
    ({"record_every": 0}, "record_every", 0),
    ({"entropy_weight": "bogus"}, "entropy_weight", "bogus"),
    ({"alg2_line4": "bogus"}, "alg2_line4", "bogus"),
])
def test_config_rejects_bad_values(kwargs, name, value):
    with pytest.raises(ValueError, match=_match(name, value)):
        DPVIConfig(**kwargs)


def test_config_poisson_without_rate_is_rejected():
    # A missing rate is a TypeError from the shared validator (not a ValueError).
    with pytest.raises(TypeError, match="sampling_rate must be a number, got None"):
        DPVIConfig(sampling="poisson")


def test_run_dpvi_rejects_bad_data_and_init():
    x, y = small_linreg(n=40)
    model = LinearRegression()
    cfg = DPVIConfig(steps=2, batch_size=8)
    with pytest.raises(ValueError, match=r"batch_size = 41 exceeds the data size N = 40"):
        run_dpvi(model, x, y, DPVIConfig(steps=2, batch_size=41))
    bad = x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"x contains 1 non-finite value.*\(3, 1\).*nan"):
        run_dpvi(model, bad, y, cfg)
    with pytest.raises(ValueError, match="x has 40 rows but y has 39"):
        run_dpvi(model, x, y[:-1], cfg)
    with pytest.raises(ValueError, match=re.escape("init must have shape (2, 4), got (2, 3)")):
        run_dpvi(model, x, y, cfg, n_runs=2, init=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="n_runs"):
        run_dpvi(model, x, y, cfg, n_runs=0)
    with pytest.raises(ValueError, match="x has 40 rows but y has 39"):
        vi_optimum(model, MeanField(2), x, y[:-1])


def test_simulate_app_j_rejects_indefinite_and_bad_rho():
    with pytest.raises(ValueError, match=r"indefinite.*smallest eigenvalue -\d.*d = 100, "
                                         r"rho = 0\.8"):
        simulate_app_j(100, 0.8, 50, seed=0, repair="none")
    for rho in (-0.1, 1.1, float("nan")):
        with pytest.raises(ValueError, match=_match("rho", rho)):
            simulate_app_j(4, rho, 50, seed=0)
        with pytest.raises(ValueError, match=_match("rho", rho)):
            correlation_matrix_alg_j1(4, rho, np.random.default_rng(0))


def test_simulate_app_j_rejects_unknown_repair_even_when_not_needed():
    with pytest.raises(ValueError, match="repair"):
        simulate_app_j(4, 0.0, 50, seed=0, repair="bogus")     # rho = 0: C = I is PSD


@pytest.mark.parametrize("noise_std", [float("nan"), -1.0])
def test_simulate_app_j_rejects_bad_noise_std(noise_std):
    with pytest.raises(ValueError, match="noise_std"):
        simulate_app_j(3, 0.0, 5, seed=0, noise_std=noise_std)


# -------------------------------------------------------------- 8. App. J (Alg. J.1)

@pytest.mark.parametrize(("d", "rho", "seed"), [(2, 1.0, 0), (4, 0.5, 1), (4, 1.0, 2),
                                                (10, 0.3, 3), (25, 0.8, 4), (7, 0.0, 5)])
def test_correlation_matrix_alg_j1_structure(d, rho, seed):
    c = correlation_matrix_alg_j1(d, rho, np.random.default_rng(seed))
    assert c.shape == (d, d)
    np.testing.assert_array_equal(c, c.T)
    np.testing.assert_array_equal(np.diag(c), 1.0)
    upper = c[np.triu_indices(d, k=1)]
    nz = upper[upper != 0]
    assert nz.size == math.floor(rho * d * (d - 1) / 2 + 1e-9)   # exact for these (d, rho)
    assert np.all((np.abs(nz) > 0) & (np.abs(nz) < 1))


def test_correlation_matrix_alg_j1_count_is_exact_floor():
    from fractions import Fraction
    d, rho = 36, 0.3
    c = correlation_matrix_alg_j1(d, rho, np.random.default_rng(0))
    expected = math.floor(Fraction(str(rho)) * d * (d - 1) / 2)      # 189
    assert np.count_nonzero(c[np.triu_indices(d, k=1)]) == expected


def test_simulate_app_j_eigen_clip_repair():
    """d = 4, rho = 1, seed 20: Algorithm J.1's matrix has eigenvalue -0.33.

    The repaired correlation (our own eigen-clip at 1e-3, rescaled to unit diagonal) is a
    valid correlation matrix, and the data's sample correlations agree with it: Fisher z
    within 5 / sqrt(n - 3) for each of the 6 pairs, false-alarm rate <= 6 * 5.7e-7 < 4e-6.
    """
    d, rho, n, seed = 4, 1.0, 200, 20
    x, y, w, info = simulate_app_j(d, rho, n, seed, repair="eigen-clip")
    assert x.shape == (n, d) and y.shape == (n,) and w.shape == (d,)
    # Alg. J.1's draw comes first from default_rng(seed), so it can be replayed:
    c_j1 = correlation_matrix_alg_j1(d, rho, np.random.default_rng(seed))
    lam = np.linalg.eigvalsh(c_j1)
    assert lam[0] < -0.3
    assert info["repair"] == "eigen-clip"
    assert info["min_eigenvalue_alg_j1"] == pytest.approx(lam[0], rel=1e-12)
    vals, vecs = np.linalg.eigh(c_j1)
    rep = (vecs * np.maximum(vals, 1e-3)) @ vecs.T
    rep /= np.sqrt(np.outer(np.diag(rep), np.diag(rep)))
    assert np.linalg.eigvalsh(rep)[0] > 0
    r = np.corrcoef(x, rowvar=False)
    assert np.linalg.eigvalsh(np.cov(x, rowvar=False))[0] > 0
    iu = np.triu_indices(d, k=1)
    z_gap = np.abs(np.arctanh(r[iu]) - np.arctanh(rep[iu]))
    assert np.all(z_gap < 5 / math.sqrt(n - 3)), z_gap
    # a PSD J.1 matrix needs no repair
    _, _, _, info = simulate_app_j(4, 0.0, 20, 0, repair="eigen-clip")
    assert info == {"min_eigenvalue_alg_j1": 1.0, "repair": "not needed"}
