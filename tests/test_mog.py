"""Tests of dpclaims.algorithms.sep.mog (DP-SEP v0/v1 Sec. 6.1) and its runner."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp

from dpclaims.algorithms.sep import mog
from dpclaims.algorithms.sep.mog import (
    MoGModel,
    dp_em_sensitivity,
    generate_mog_data,
    gibbs_mog,
    mog_metrics,
    prior_natural,
    run_dp_em,
    run_mog_ep,
    run_mog_sep,
    tilted_moments,
)
from dpclaims.algorithms.sep.sep import DPSEPParams
from dpclaims.analysis.accounting import composed_gaussian_sigma
from dpclaims.analysis.gaussian import gaussian_kl, unflatten_natural


def conjugate_posterior(x, model: MoGModel):
    """Exact posterior of mu for J = 1: N(b/a, I/a), a = 1/v + N/s^2."""
    s2, v = model.noise_std ** 2, model.prior_var
    a = 1 / v + x.shape[0] / s2
    return (model.prior_mean / v + x.sum(axis=0) / s2) / a, np.eye(x.shape[1]) / a


# --------------------------------------------------------------------------- tilted moments
def test_tilted_moments_match_importance_sampling():
    model = MoGModel(3, 2, 0.5)
    rng = np.random.default_rng(0)
    m = rng.standard_normal((1, 3, 2))
    a = rng.standard_normal((1, 3, 2, 2))
    V = a @ np.swapaxes(a, -1, -2) * 0.3 + 0.1 * np.eye(2)
    x = np.array([[0.3, -0.2]])
    mean, cov, r = tilted_moments(m, V, x, model)
    S = 400_000
    z = m[0] + np.einsum("jab,sjb->sja", np.linalg.cholesky(V[0]), rng.standard_normal((S, 3, 2)))
    lw = logsumexp(model.log_weights - np.sum((x[0] - z) ** 2, -1) / (2 * 0.25), axis=-1)
    w = np.exp(lw - lw.max())
    w /= w.sum()
    mc_mean = np.einsum("s,sja->ja", w, z)
    c = z - mc_mean
    mc_cov = np.einsum("s,sja,sjb->jab", w, c, c)
    # self-normalised IS with effective sample size ~1e5: MC sd of each moment < 1e-3;
    # tolerance 6e-3 is > 6 sd (false-alarm rate < 1e-8 per entry)
    assert np.abs(mean[0] - mc_mean).max() < 6e-3
    assert np.abs(cov[0] - mc_cov).max() < 6e-3
    assert np.allclose(r.sum(axis=-1), 1.0)


# --------------------------------------------------------------------------- J = 1: exact
@pytest.fixture(scope="module")
def one_component():
    return generate_mog_data(60, n_components=1, dim=2, noise_std=0.5, seed=3)


def test_ep_is_exact_for_one_component(one_component):
    d = one_component
    run = run_mog_ep(d.x, d.model, epochs=2, n_trials=3, rng=np.random.default_rng(1))
    mean, cov = conjugate_posterior(d.x, d.model)
    assert np.allclose(run.means[:, 0], mean, atol=1e-10)
    assert np.allclose(run.covs[:, 0], cov, atol=1e-12)


def test_sep_fixed_point_for_one_component(one_component):
    # J = 1: every site is the exact likelihood term s_n = (x_n/s^2, I/s^2) whatever the
    # cavity, and SEP's update theta_f <- (1 - g/N) theta_f + (g/N) s_n after T epochs
    # gives theta_f = rho f_init + sum_k w_k s_(pi(k)), rho = (1 - g/N)^{NT}. Its precision is
    # deterministic, (1 - rho) I/s^2, and E over the permutations of its h is
    # rho h_init + (1 - rho) mean_n(x_n)/s^2: the fixed point is the mean site, i.e. the
    # exact posterior q = p0 f^N.
    d = one_component
    N, T, g, trials = d.x.shape[0], 25, 1.0, 400
    run = run_mog_sep(d.x, d.model, epochs=T, n_trials=trials, rng=np.random.default_rng(2),
                      init_means=None)
    rho = (1 - g / N) ** (N * T)
    s2 = d.model.noise_std ** 2
    h_f, prec_f = unflatten_natural(run.theta_f)
    assert np.allclose(prec_f, (1 - rho) * np.eye(2) / s2, rtol=1e-9)
    target = (1 - rho) * d.x.mean(axis=0) / s2
    se = h_f.std(axis=0, ddof=1) / math.sqrt(trials)
    # z-test of the mean over independent trials, |z| < 4.5: false-alarm rate < 1e-5 each
    assert np.all(np.abs(h_f.mean(axis=0) - target) < 4.5 * se)
    # and the fixed point itself is the exact posterior
    mean, cov = conjugate_posterior(d.x, d.model)
    th0 = prior_natural(d.model)
    q = th0 + N * np.concatenate([d.x.mean(axis=0) / s2, [1 / s2, 0, 1 / s2]])
    qm, qc, _ = mog.mog_moments(q[None], 1)
    assert np.allclose(qm[0, 0], mean) and np.allclose(qc[0, 0], cov)


def test_gibbs_one_component_is_conjugate(one_component):
    d = one_component
    g = gibbs_mog(d.x, d.model, n_samples=2000, burn_in=10, n_chains=4, seed=5)
    mean, cov = conjugate_posterior(d.x, d.model)
    S = 8000  # J = 1: h is fixed, the draws of mu are i.i.d. from the posterior
    se = np.sqrt(np.diag(cov) / S)
    # |z| < 4.5 per coordinate: false-alarm rate < 1e-5 each
    assert np.all(np.abs(g.means[0] - mean) < 4.5 * se)
    # sample variance: relative sd sqrt(2/(S-1)) = 0.016; 5 sd = 0.08 (rate < 1e-6)
    assert np.allclose(np.diag(g.covs[0]), np.diag(cov), rtol=0.08)
    assert g.frac_relabelled == 0.0


def test_gibbs_label_switching_is_undone():
    model = MoGModel(3, 2, 0.5)
    true = np.array([[-6.0, 0.0], [0.0, 6.0], [6.0, 0.0]])
    rng = np.random.default_rng(7)
    labels = np.repeat(np.arange(3), 40)
    x = true[labels] + 0.5 * rng.standard_normal((120, 2))
    inits = np.stack([true[list(p)] for p in ([0, 1, 2], [2, 0, 1], [1, 2, 0], [2, 1, 0])])
    g = gibbs_mog(x, model, n_samples=1000, burn_in=20, n_chains=4, seed=8, init_means=inits,
                  anneal_fraction=0.0)
    # three of four chains are in another labelling: 3/4 of the draws relabelled
    assert g.frac_relabelled == pytest.approx(0.75)
    # clusters 12 sd apart: the assignments are certain, so the posterior is the
    # known-labels conjugate one
    s2 = 0.25
    for j in range(3):
        a = 1 + 40 / s2
        m = x[labels == j].sum(axis=0) / s2 / a
        k = int(np.argmin(np.sum((g.means - m) ** 2, axis=1)))
        assert k == j  # the first chain's (identity) labelling is the reference
        se = math.sqrt(1 / a / 4000)
        assert np.all(np.abs(g.means[k] - m) < 4.5 * se)  # false-alarm < 1e-5 each
    assert g.max_rhat < 1.05


# --------------------------------------------------------------------------- DP-SEP
@pytest.fixture(scope="module")
def small_data():
    return generate_mog_data(80, n_components=4, dim=2, seed=11)


@pytest.mark.parametrize("reading", ["as-printed", "sep-invariant",
                                     "sep-invariant-recalibrated"])
def test_dpsep_site_norm_bounded_after_step9(small_data, reading):
    d = small_data
    params = DPSEPParams(clipping_norm=1.0, noise_multiplier=1.0, reading=reading)
    run = run_mog_sep(d.x, d.model, epochs=1, n_trials=3, rng=np.random.default_rng(0),
                      params=params, prior_norm="clip")
    assert np.all(np.linalg.norm(run.theta_f, axis=1) <= 1.0 + 1e-12)
    assert np.linalg.norm(run.theta_0) == pytest.approx(1.0)  # clipped prior


@pytest.mark.parametrize("reading,sep_damping", [("as-printed", 1.0 / 80),
                                                 ("sep-invariant", 1.0),
                                                 ("sep-invariant-recalibrated", 1.0)])
def test_noiseless_huge_c_equals_sep(small_data, reading, sep_damping):
    d = small_data
    params = DPSEPParams(clipping_norm=1e9, noise_multiplier=None, reading=reading)
    a = run_mog_sep(d.x, d.model, epochs=2, n_trials=2, rng=np.random.default_rng(4),
                    params=params)
    b = run_mog_sep(d.x, d.model, epochs=2, n_trials=2, rng=np.random.default_rng(4),
                    damping=sep_damping)
    assert np.allclose(a.theta_q, b.theta_q, rtol=1e-9, atol=1e-9)
    # and the noised run differs (the noise is really added)
    c = run_mog_sep(d.x, d.model, epochs=2, n_trials=2, rng=np.random.default_rng(4),
                    params=DPSEPParams(clipping_norm=1e9, noise_multiplier=1e-9,
                                       reading=reading))
    assert not np.allclose(a.theta_q, c.theta_q)


def test_bad_inputs_raise(small_data):
    d = small_data
    rng = np.random.default_rng(0)
    dp = DPSEPParams(clipping_norm=1.0, noise_multiplier=1.0)
    with pytest.raises(ValueError, match="theta_0"):
        run_mog_sep(d.x, d.model, epochs=1, rng=rng, params=dp)  # sqrt(8) > C = 1
    with pytest.raises(ValueError, match="prior_norm"):
        run_mog_sep(d.x, d.model, epochs=1, rng=rng, params=dp, prior_norm="ignore")
    bad = d.x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        run_mog_sep(bad, d.model, epochs=1, rng=rng)
    with pytest.raises(ValueError, match="columns"):
        run_mog_ep(d.x[:, :1], d.model, epochs=1, rng=rng)
    with pytest.raises(ValueError, match="epochs"):
        run_mog_sep(d.x, d.model, epochs=0, rng=rng)
    with pytest.raises(ValueError, match="noise_multiplier"):
        DPSEPParams(noise_multiplier=-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        run_dp_em(d.x, d.model, iterations=2, rng=rng, epsilon=0.0, data_radius=3.0)
    with pytest.raises(ValueError, match="delta"):
        run_dp_em(d.x, d.model, iterations=2, rng=rng, epsilon=1.0, delta=1.0, data_radius=3.0)
    with pytest.raises(ValueError, match="data_radius"):
        run_dp_em(d.x, d.model, iterations=2, rng=rng, epsilon=1.0, data_radius=0.0)
    with pytest.raises(ValueError, match="init_means"):
        run_mog_sep(d.x, d.model, epochs=1, rng=rng, init_means=np.zeros((3, 2)))


def test_symmetric_start_never_separates(small_data):
    # the finding behind init_means: from q = prior every component gets the same update
    d = small_data
    run = run_mog_sep(d.x, d.model, epochs=1, rng=np.random.default_rng(0), init_means=None)
    assert np.allclose(run.means[0], run.means[0, :1])


# --------------------------------------------------------------------------- DP-EM
def test_dpem_calibration_is_exact():
    for eps, T in ((1.0, 100), (5.0, 7), (50.0, 1)):
        sigma = composed_gaussian_sigma(eps, 1e-5, T)
        got = dp_accounting.get_epsilon_gaussian(sigma / math.sqrt(T), 1e-5)
        assert got == pytest.approx(eps, rel=1e-8)
    d = generate_mog_data(50, 2, 2, seed=1)
    run = run_dp_em(d.x, d.model, iterations=5, rng=np.random.default_rng(0), epsilon=2.0,
                    data_radius=3.0)
    assert run.noise_std == pytest.approx(composed_gaussian_sigma(2.0, 1e-5, 5)
                                          * dp_em_sensitivity("means-only", 3.0))


@pytest.mark.parametrize("reading", ["means-only", "means-and-covariances"])
def test_dpem_sensitivity_is_attained_and_never_exceeded(reading):
    rng = np.random.default_rng(0)
    for R in (0.5, 3.0):
        bound = dp_em_sensitivity(reading, R)
        n, J, d = 20000, 3, 2

        def stat(r, x, n=n):
            y = [np.ones((n, 1)), x]
            if reading == "means-and-covariances":
                y.append(np.einsum("na,nb->nab", x, x).reshape(n, -1))
            return np.einsum("nj,nk->njk", r, np.concatenate(y, axis=1)).reshape(n, -1)

        def ball(k, n=n, d=d, R=R):
            z = rng.standard_normal((n, d))
            u = rng.uniform(0, 1, (n, 1)) ** k
            return R * z / np.linalg.norm(z, axis=1, keepdims=True) * u

        r1, r2 = rng.dirichlet(np.ones(J) * 0.2, n), rng.dirichlet(np.ones(J) * 0.2, n)
        dist = np.linalg.norm(stat(r1, ball(0.01)) - stat(r2, ball(0.01)), axis=1)
        assert dist.max() <= bound * (1 + 1e-12)
        # the maximiser stated in the docstring attains it
        e = np.eye(J)[None].repeat(n, 0)
        x = np.tile([R, 0.0], (n, 1))
        same = np.linalg.norm(stat(e[:, 0], x) - stat(e[:, 0], -x), axis=1)[0]
        other = np.linalg.norm(stat(e[:, 0], x) - stat(e[:, 1], x), axis=1)[0]
        assert max(same, other) == pytest.approx(bound)


def test_dpem_huge_epsilon_reduces_to_em():
    d = generate_mog_data(200, 4, 2, seed=2)
    kw = dict(iterations=10, n_trials=2, data_radius=10.0)
    em = run_dp_em(d.x, d.model, rng=np.random.default_rng(3), epsilon=None, **kw)
    big = run_dp_em(d.x, d.model, rng=np.random.default_rng(3), epsilon=1e6, **kw)
    # sigma(1e6, 1e-5, T=10) = 0.00224, Delta = 2R = 20: std 0.045 on counts of ~50
    assert big.noise_std == pytest.approx(0.0448564, rel=1e-4)
    assert np.allclose(em.means, big.means, atol=1e-2)
    assert not np.allclose(em.means, big.means, atol=1e-9)
    # hand-written EM iteration from the same start
    mu = em.trace_means[:, 0]
    for _ in range(10):
        sq = np.sum((d.x[None, :, None] - mu[:, None]) ** 2, axis=-1)
        r = np.exp(-sq / (2 * 0.25) - logsumexp(-sq / (2 * 0.25), axis=-1, keepdims=True))
        mu = np.einsum("tnj,nd->tjd", r, d.x) / r.sum(axis=1)[..., None]
    assert np.allclose(em.means, mu, atol=1e-10)


# --------------------------------------------------------------------------- metrics
def test_match_components_agrees_with_linear_sum_assignment():
    rng = np.random.default_rng(0)
    for J in (4, 7):
        cost = rng.random((5, J, J))
        got = mog._best_permutations(cost)
        for c, p in zip(cost, got, strict=True):
            rows, cols = linear_sum_assignment(c)
            assert c[np.arange(J), p].sum() == pytest.approx(c[rows, cols].sum())


def test_fnorms_hand_computed():
    truth_m = np.array([[0.0, 0.0], [3.0, 0.0]])
    truth_c = np.stack([np.eye(2), 2 * np.eye(2)])
    est_m = np.array([[3.0, 1.0], [0.0, 0.0]])        # swapped labels, one offset by 1
    est_c = np.stack([2 * np.eye(2) + 0.5, np.eye(2)])  # component of est 0 off by 0.5 each
    out = mog_metrics(est_m, est_c, truth_m, truth_c)
    assert list(out["perm"]) == [1, 0]
    assert out["fnorm_mean"] == pytest.approx(1.0)
    assert out["fnorm_cov"] == pytest.approx(1.0)       # sqrt(4 * 0.25)
    assert out["fnorm_avg"] == pytest.approx(1.0)


def test_nearest_and_hungarian_pairings_differ():
    truth_m = np.array([[0.0], [1.0]])
    truth_c = np.array([[[1.0]], [[1.0]]])
    est_m = np.array([[0.4], [5.0]])
    est_c = np.array([[[2.0]], [[1.0]]])
    out = mog_metrics(est_m, est_c, truth_m, truth_c)

    def kl(m0, v0, m1, v1):
        return 0.5 * (v0 / v1 + (m1 - m0) ** 2 / v1 - 1 + math.log(v1 / v0))

    # nearest: both truths pair with est 0 (at 0.4); hungarian: truth 1 with est 1 (at 5)
    assert out["kl_nearest"] == pytest.approx(0.5 * (kl(0, 1, 0.4, 2) + kl(1, 1, 0.4, 2)))
    assert out["kl_hungarian"] == pytest.approx(0.5 * (kl(0, 1, 0.4, 2) + kl(1, 1, 5, 1)))
    assert out["kl_rev_hungarian"] == pytest.approx(0.5 * (kl(0.4, 2, 0, 1) + kl(5, 1, 1, 1)))
    assert out["kl_hungarian"] != pytest.approx(out["kl_nearest"])
    # agrees with the library KL
    assert kl(0, 1, 0.4, 2) == pytest.approx(float(gaussian_kl(np.zeros(1), np.eye(1),
                                                               np.full(1, 0.4), 2 * np.eye(1))))


# --------------------------------------------------------------------------- runner
def test_runner_smoke(tmp_path):
    from dpclaims.papers.dpsep.experiment_mog import run_mog_experiment

    out = run_mog_experiment(dim=2, epochs=1, n_runs=2, n_records=60, gibbs_samples=40,
                             gibbs_burn_in=20, gibbs_chains=2, seed=0, out_dir=tmp_path,
                             sigma_for=lambda eps: 1.0 / eps, epsilons=(1.0, 50.0),
                             clip_norms=(1.0,))
    assert out["prior"]["exceeds_C"] and out["prior"]["theta_0_norm"] == pytest.approx(
        math.sqrt(8))
    names = set(out["methods"])
    assert {"EP", "SEP", "DP-SEP eps=1 [as-printed]", "DP-EM eps=50 [means-only]",
            "clipped SEP C=1 [sep-invariant]"} <= names
    for m in out["methods"].values():
        assert len(m["metrics"]["fnorm_mean"]["values"]) == 2
    assert (tmp_path / "mog_posteriors_d2.png").exists()
    assert (tmp_path / "mog_metrics_d2.png").exists()
