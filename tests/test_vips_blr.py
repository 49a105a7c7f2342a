"""Tests of VIPS Bayesian logistic regression (VIPS Sec. 6) and the Adult loader (Sec. 6.4)."""

from __future__ import annotations

import math
from pathlib import Path

import dp_accounting
import numpy as np
import pytest
from scipy.optimize import minimize

from dpclaims.algorithms.vips.blr import (
    auc_score,
    blr_sensitivities,
    blr_statistics,
    evaluate,
    pg_mean,
    predict_proba,
    project_psd,
    run_vips_blr,
    step_sizes,
    symmetric_from_triu,
    symmetric_noise,
    triu_vector,
    vb_blr_full_batch,
)
from dpclaims.algorithms.vips.step import VIPSBLRStep
from dpclaims.audits.mechanism import (
    Sensitivity,
    draw_release,
    replace_one,
    validate_mechanism,
)
from dpclaims.data.adult import load_adult
from dpclaims.data.datasets import load_fair

# ../shared/data relative to the repository root (tests/ -> repo -> its parent).
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_adult = pytest.mark.skipif(
    not (SHARED_DATA / "adult" / "adult.data").is_file(),
    reason=f"Adult data not found under {SHARED_DATA}",
)


def simulated(n=2000, d=4, seed=0):
    """Logistic data with rows scaled to max norm 1, labels in {0, 1}."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1).max()
    w = np.array([4.5, -6.0, 3.0, 1.5])[:d]
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ w))).astype(float)
    return x, y


def unit_rows(rng, shape):
    x = rng.normal(size=shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


# --------------------------------------------------------------------------- PG mean


def test_pg_mean_values_and_bound():
    c = np.array([0.0, 1e-6, 1e-3, 0.5, 1.0, 5.0, 50.0])
    got = pg_mean(c)
    with np.errstate(invalid="ignore", divide="ignore"):
        direct = np.tanh(c / 2) / (2 * c)
    np.testing.assert_allclose(got[2:], direct[2:], rtol=1e-12)
    assert got[0] == 0.25 and got[1] == pytest.approx(0.25, abs=1e-12)
    assert np.all(got <= 0.25) and np.all(np.diff(got) < 0)   # max 1/4 at c = 0 (Fig. 4)
    # continuity at the series switch (1e-4)
    assert pg_mean(1e-4 * (1 - 1e-9)) == pytest.approx(pg_mean(1e-4 * (1 + 1e-9)), rel=1e-12)


# --------------------------------------------------------------------------- VB / SVB


def test_full_batch_vb_is_a_fixed_point():
    x, y = simulated()
    post = vb_blr_full_batch(x, y, prior_precision=1.0)
    s1, s2 = blr_statistics(x, y, post.cov + np.outer(post.mean, post.mean))
    n, d = x.shape
    precision = np.eye(d) + n * s2           # eq. 54 with rho = 1
    np.testing.assert_allclose(np.linalg.inv(precision), post.cov, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(post.cov @ (n * s1), post.mean, rtol=1e-8)


def test_full_batch_vb_with_hyperprior_satisfies_eq53():
    x, y = simulated(n=500)
    post = vb_blr_full_batch(x, y, hyperprior=(1.0, 1.0))
    d = x.shape[1]
    expected = (1.0 + d / 2) / (1.0 + 0.5 * (post.mean @ post.mean + np.trace(post.cov)))
    assert post.alpha == pytest.approx(expected, rel=1e-8)


def test_nonprivate_svb_converges_to_full_batch_vb():
    """SVB (Alg. 4, sigma = 0; S = N/10, J = 3000, rho_t = (10 + t)^-0.9) reaches the
    full-batch VB fixed point: every trial's mean within 0.3 posterior sd of it, the
    trial-average within 0.1 sd, and the covariance within 3 % (max relative entry).
    Expected E[s-bar] = s-bar(D) at fixed parameters, so the fixed points coincide."""
    x, y = simulated()
    ref = vb_blr_full_batch(x, y, prior_precision=1.0)
    run = run_vips_blr(x, y, batch_size=200, iterations=3000, tau0=10.0, kappa=0.9,
                       n_trials=8, rng=np.random.default_rng(1), record_trace=False)
    sd = np.sqrt(np.diag(ref.cov))
    z = (run.mean - ref.mean) / sd
    assert np.abs(z).max() < 0.3
    assert np.abs(z.mean(axis=0)).max() < 0.1
    assert (np.abs(run.cov - ref.cov).max(axis=(1, 2)) / np.abs(ref.cov).max()).max() < 0.03


def test_trace_records_every_iteration_and_is_reproducible():
    x, y = simulated(n=300)
    kw = dict(batch_size=30, iterations=7, noise_multiplier=2.0, n_trials=3,
              hyperprior=(1.0, 1.0))
    a = run_vips_blr(x, y, rng=np.random.default_rng(5), **kw)
    b = run_vips_blr(x, y, rng=np.random.default_rng(5), **kw)
    d = x.shape[1]
    p = d * (d + 1) // 2
    assert a.trace["s1"].shape == (3, 7, d) and a.trace["s2"].shape == (3, 7, p)
    assert a.trace["mean"].shape == (3, 7, d) and a.trace["second_moment"].shape == (3, 7, p)
    assert a.trace["alpha"].shape == (3, 7) and a.trace["n_projected"].shape == (3, 7)
    np.testing.assert_allclose(a.trace["rho"], (1.0 + np.arange(1, 8)) ** -0.7)
    for key in ("s1", "s2", "mean", "second_moment", "alpha"):
        np.testing.assert_array_equal(a.trace[key], b.trace[key])
    np.testing.assert_array_equal(a.trace["mean"][:, -1], a.mean)
    assert a.info["noise_std"] == (2.0 * 2 / 30, 2.0 / (2 * 30))


def test_private_noise_has_the_stated_scale():
    """At sigma > 0 the released s1~ deviates from the noiseless s1 at the same
    parameters by N(0, (sigma 2/S)^2): checked on the first iteration (prior params)."""
    x, y = simulated(n=400)
    s, sigma = 40, 3.0
    run = run_vips_blr(x, y, batch_size=s, iterations=1, noise_multiplier=sigma,
                       n_trials=4000, rng=np.random.default_rng(2))
    # the spread of s1~ across trials = batch variation + noise; the noise dominates
    spread = run.trace["s1"][:, 0].std(axis=0)
    noiseless = run_vips_blr(x, y, batch_size=s, iterations=1, n_trials=4000,
                             rng=np.random.default_rng(2)).trace["s1"][:, 0].std(axis=0)
    np.testing.assert_allclose(np.sqrt(spread**2 - noiseless**2), sigma * 2 / s, rtol=0.06)


# --------------------------------------------------------------------------- fair


def _map_fit(x, y, alpha):
    def f(w):
        a = x @ w
        return np.sum(np.logaddexp(0, a) - y * a) + 0.5 * alpha * w @ w

    def g(w):
        return x.T @ (1 / (1 + np.exp(-x @ w)) - y) + alpha * w

    res = minimize(f, np.zeros(x.shape[1]), jac=g, method="L-BFGS-B",
                   options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 1000})
    assert np.abs(g(res.x)).max() < 1e-4          # stationary: the MAP
    return res.x


def test_fair_accuracy_and_auc_match_map_logistic_regression():
    """On statsmodels' fair (labels mapped {-1, +1} -> {0, 1}), full-batch VB and SVB
    (S = 500, J = 600) give test accuracy within 0.01 and AUC within 0.005 of a direct
    MAP logistic regression with the same N(0, I) prior (scipy BFGS)."""
    data = load_fair()
    y, y_test = (data.y_train + 1) / 2, (data.y_test + 1) / 2
    w = _map_fit(data.x_train, y, 1.0)
    map_metrics = evaluate(data.x_test, y_test, w, np.zeros((data.dim, data.dim)))
    vb = vb_blr_full_batch(data.x_train, y, prior_precision=1.0)
    svb = run_vips_blr(data.x_train, y, batch_size=500, iterations=600, tau0=10.0, kappa=0.9,
                       n_trials=2, rng=np.random.default_rng(3), record_trace=False)
    for mean, cov in ((vb.mean, vb.cov), (svb.mean, svb.cov)):
        got = evaluate(data.x_test, y_test, mean, cov)
        assert np.all(np.abs(got["accuracy"] - map_metrics["accuracy"]) <= 0.01)
        assert np.all(np.abs(got["auc"] - map_metrics["auc"]) <= 0.005)
    assert map_metrics["auc"] > 0.7


def test_auc_matches_pairwise_definition_and_prediction_shapes():
    rng = np.random.default_rng(4)
    y = (rng.random(60) < 0.4).astype(float)
    score = np.round(rng.normal(size=(3, 60)), 1)          # ties on purpose
    pos, neg = score[:, y == 1], score[:, y == 0]
    diff = pos[:, :, None] - neg[:, None, :]
    pairwise = ((diff > 0) + 0.5 * (diff == 0)).mean(axis=(1, 2))
    np.testing.assert_allclose(auc_score(y, score), pairwise, rtol=1e-12)
    x = rng.normal(size=(60, 2))
    prob = predict_proba(x, np.zeros((5, 2)) + 1.0, np.broadcast_to(np.eye(2), (5, 2, 2)))
    assert prob.shape == (5, 60) and np.all((prob > 0) & (prob < 1))
    # wider posterior shrinks the predictive towards 1/2 (probit approximation)
    narrow = predict_proba(x, np.ones(2), np.zeros((2, 2)))
    assert np.all(np.abs(prob[0] - 0.5) <= np.abs(narrow - 0.5) + 1e-15)


# --------------------------------------------------------------------------- sensitivity


@pytest.mark.parametrize("bound", ["paper", "tight"])
def test_statistics_change_is_within_stated_sensitivities(bound):
    """Replace-one pairs (400): worst-case-style records (unit norm, random labels),
    a random PSD <m m^T> of varying scale (small: <xi> near 1/4). The change of s1 (L2)
    and of s2 (Frobenius, and its upper triangle, which is what is noised) never
    exceeds blr_sensitivities(S, bound)."""
    rng = np.random.default_rng(6)
    pairs, s, d = 400, 25, 5
    x = unit_rows(rng, (pairs, s, d)) * rng.uniform(0.2, 1.0, (pairs, s, 1))
    y = (rng.random((pairs, s)) < 0.5).astype(float)
    x2, y2 = x.copy(), y.copy()
    x2[:, 0] = unit_rows(rng, (pairs, d))
    y2[:, 0] = rng.integers(0, 2, pairs)
    a = rng.normal(size=(pairs, d, d)) * np.exp(rng.uniform(-8, 2, (pairs, 1, 1)))
    mm = a @ np.swapaxes(a, -1, -2)
    s1, s2 = blr_statistics(x, y, mm)
    t1, t2 = blr_statistics(x2, y2, mm)
    d1, d2 = blr_sensitivities(s, bound)
    assert np.linalg.norm(s1 - t1, axis=-1).max() <= d1 * (1 + 1e-12)
    assert np.linalg.norm(s2 - t2, axis=(-2, -1)).max() <= d2 * (1 + 1e-12)
    assert np.all(np.linalg.norm(triu_vector(s2 - t2), axis=-1)
                  <= np.linalg.norm(s2 - t2, axis=(-2, -1)) + 1e-15)


def test_tight_bounds_are_approached():
    """The 'tight' values are (nearly) attained, so the paper's are loose by 2 and sqrt(2)."""
    s, d = 10, 3
    x = np.zeros((s, d))
    x[:, 2] = 0.5
    y = np.zeros(s)
    x0 = x.copy()
    x0[0] = [1.0, 0, 0]
    x1 = x.copy()
    x1[0] = [-1.0, 0, 0]
    mm = 1e-10 * np.eye(d)
    a1, _ = blr_statistics(x0, y, mm)
    b1, _ = blr_statistics(x1, y, mm)
    assert np.linalg.norm(a1 - b1) == pytest.approx(1 / s, rel=1e-12)
    x1[0] = [0, 1.0, 0]
    _, a2 = blr_statistics(x0, y, mm)
    _, b2 = blr_statistics(x1, y, mm)
    assert np.linalg.norm(a2 - b2) == pytest.approx(math.sqrt(2) / (4 * s), rel=1e-8)
    assert blr_sensitivities(s, "paper") == (2 / s, 1 / (2 * s))


# --------------------------------------------------------------------------- noise


def test_symmetric_noise_is_symmetric_with_per_entry_std():
    rng = np.random.default_rng(7)
    d, std, n = 4, 0.3, 40_000
    z = symmetric_noise(rng, d, std, size=n)
    assert z.shape == (n, d, d)
    np.testing.assert_array_equal(z, np.swapaxes(z, -1, -2))
    # each of the d(d+1)/2 distinct entries (diagonal and off-diagonal) has std 0.3:
    # the std estimate's relative error is ~ 1/sqrt(2n) = 0.35 %, tolerance 2 %
    np.testing.assert_allclose(z.std(axis=0), std, rtol=0.02)
    np.testing.assert_allclose(z.mean(axis=0), 0.0, atol=5 * std / math.sqrt(n))
    u = triu_vector(z)
    corr = np.corrcoef(u.T)
    np.testing.assert_allclose(corr - np.eye(u.shape[1]), 0.0, atol=0.03)
    np.testing.assert_array_equal(symmetric_from_triu(u, d), z)


def test_project_psd_moves_only_negative_eigenvalues():
    m = np.diag([2.0, 1e-3, -0.5])
    out, count = project_psd(m, 1e-4)
    np.testing.assert_allclose(np.linalg.eigvalsh(out), [1e-4, 1e-3, 2.0], atol=1e-14)
    assert count == 1


# --------------------------------------------------------------------------- mechanism


def _step(sigma=2.0, s=20, d=3, bound="paper"):
    rng = np.random.default_rng(8)
    mech = VIPSBLRStep(mean=rng.normal(size=d), cov=0.1 * np.eye(d), noise_multiplier=sigma,
                       delta=1e-5, batch_size=s, sensitivity_bound=bound)
    x = unit_rows(rng, (s, d)) * 0.9
    y = (rng.random(s) < 0.5).astype(float)
    return mech, (x, y)


def test_step_mechanism_protocol_claim_and_release():
    mech, data = _step()
    validate_mechanism(mech)
    d = mech.dim
    k = d + d * (d + 1) // 2
    out = draw_release(mech, data, np.random.default_rng(9), 30_000)
    assert out.shape == (30_000, k)
    q = mech.query(data)
    np.testing.assert_allclose(out.std(axis=0), mech.noise_std, rtol=0.03)
    np.testing.assert_allclose(mech.noise_std[:d], 2.0 * 2 / 20)
    np.testing.assert_allclose(mech.noise_std[d:], 2.0 / (2 * 20))
    np.testing.assert_allclose(out.mean(axis=0), q, atol=5 * mech.noise_std.max() / 170)
    s1, s2 = mech.unpack(out[:2])
    np.testing.assert_array_equal(s2, np.swapaxes(s2, -1, -2))
    # claim: two composed Gaussians (sigma each) = one Gaussian with sigma / sqrt(2)
    claim = mech.claim
    assert claim.relation == "replace-one"
    assert isinstance(claim.dp_event, dp_accounting.ComposedDpEvent)
    assert [e.noise_multiplier for e in claim.dp_event.events] == [2.0, 2.0]
    assert claim.epsilon == pytest.approx(
        dp_accounting.get_epsilon_gaussian(2.0 / math.sqrt(2), 1e-5), rel=1e-12)
    pld = dp_accounting.pld.PLDAccountant()
    pld.compose(claim.dp_event)
    assert pld.get_epsilon(1e-5) == pytest.approx(claim.epsilon, rel=0.02)
    assert mech.sensitivity == Sensitivity(math.hypot(2 / 20, 1 / 40), 2)


@pytest.mark.parametrize("bound", ["paper", "tight"])
def test_step_mechanism_query_distance_within_sensitivity(bound):
    mech, (x, y) = _step(bound=bound)
    rng = np.random.default_rng(10)
    for _ in range(200):
        rec = (unit_rows(rng, (mech.dim,)), float(rng.integers(0, 2)))
        pair = replace_one((x, y), int(rng.integers(0, x.shape[0])), rec)
        dist = mech.sensitivity.distance(mech.query(pair.d0), mech.query(pair.d1))
        assert dist <= mech.sensitivity.value * (1 + 1e-12)


# --------------------------------------------------------------------------- bad input


def test_bad_inputs_raise_value_errors():
    x, y = simulated(n=100)
    with pytest.raises(ValueError, match=r"\(y \+ 1\) / 2"):
        run_vips_blr(x, 2 * y - 1, batch_size=10, iterations=2, rng=np.random.default_rng())
    with pytest.raises(ValueError, match="norm <= 1"):
        blr_statistics(2 * x, y, np.eye(4))
    with pytest.raises(ValueError, match="batch_size S = 101"):
        run_vips_blr(x, y, batch_size=101, iterations=2, rng=np.random.default_rng())
    with pytest.raises(ValueError, match="kappa"):
        step_sizes(5, 1.0, 0.5)
    with pytest.raises(ValueError, match="noise_multiplier"):
        run_vips_blr(x, y, batch_size=10, iterations=2, noise_multiplier=-1.0,
                     rng=np.random.default_rng())
    with pytest.raises(ValueError, match="c must be >= 0"):
        pg_mean([-0.1])
    with pytest.raises(ValueError, match="n_records"):
        blr_sensitivities(0)
    with pytest.raises(ValueError, match="sensitivity_bound"):
        blr_sensitivities(10, "loose")
    with pytest.raises(ValueError, match="symmetric"):
        blr_statistics(x, y, np.triu(np.ones((4, 4))))
    with pytest.raises(ValueError, match="non-finite"):
        blr_statistics(np.where(x > 0.5, np.nan, x), y, np.eye(4))
    with pytest.raises(ValueError, match="prior_precision"):
        vb_blr_full_batch(x, y, prior_precision=0.0)
    mech, (xb, yb) = _step()
    with pytest.raises(ValueError, match="shape"):
        mech.query((xb[:-1], yb[:-1]))
    with pytest.raises(ValueError, match="noise_multiplier"):
        VIPSBLRStep(mean=np.zeros(2), cov=np.eye(2), noise_multiplier=0.0, delta=1e-5,
                    batch_size=5)
    with pytest.raises(ValueError, match="delta"):
        VIPSBLRStep(mean=np.zeros(2), cov=np.eye(2), noise_multiplier=1.0, delta=0.0,
                    batch_size=5)
    with pytest.raises(ValueError, match="both classes"):
        auc_score(np.ones(4), np.arange(4.0))


# --------------------------------------------------------------------------- Adult


def test_adult_missing_folder_errors_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match="data directory not found"):
        load_adult(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match=r"adult\.data"):
        load_adult(tmp_path)
    with pytest.raises(ValueError, match="split"):
        load_adult(tmp_path, split="random")


def test_adult_malformed_file_errors_clearly(tmp_path):
    folder = tmp_path / "adult"
    folder.mkdir()
    good = ("39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, "
            "White, Male, 2174, 0, 40, United-States, <=50K\n")
    (folder / "adult.data").write_text(good + good.replace("State-gov", "Space-gov"))
    (folder / "adult.test").write_text("|1x3 Cross validator\n" + good.replace("<=50K", ">50K."))
    with pytest.raises(ValueError, match="Space-gov"):
        load_adult(tmp_path)
    (folder / "adult.data").write_text(good + good.replace("<=50K", ">50K"))
    data = load_adult(tmp_path, split="standard")
    assert data.y_train.tolist() == [0.0, 1.0] and data.y_test.tolist() == [1.0]


@needs_adult
def test_adult_loader_matches_paper_description():
    data = load_adult(SHARED_DATA)
    assert data.task == "classification-01"
    assert data.n_train + data.x_test.shape[0] == 48_842          # "48,842 data samples"
    assert data.n_train == round(0.8 * 48_842)                    # "80% ... for training"
    assert data.dim == 6 + 99 + 1
    norms = np.linalg.norm(data.x_train, axis=1)
    assert norms.max() == pytest.approx(1.0, rel=1e-12) and np.all(norms <= 1 + 1e-12)
    assert set(np.unique(data.y_train)) == {0.0, 1.0}
    assert 0.22 < data.y_train.mean() < 0.26
    standard = load_adult(SHARED_DATA, split="standard", drop_missing=True)
    assert (standard.n_train, standard.x_test.shape[0]) == (30_162, 15_060)


@needs_adult
def test_adult_short_vips_runs():
    """Sec. 6.4 settings in miniature: sampling rate 0.004, 100 iterations; the
    non-private run reaches AUC > 0.88 (the full data's ~0.90), sigma = 1 stays above 0.75."""
    data = load_adult(SHARED_DATA)
    s = round(0.004 * data.n_train)
    aucs = {}
    for sigma in (0.0, 1.0):
        run = run_vips_blr(data.x_train, data.y_train, batch_size=s, iterations=100,
                           noise_multiplier=sigma, tau0=10.0, kappa=0.7, hyperprior=(1.0, 1.0),
                           n_trials=2, rng=np.random.default_rng(11), record_trace=False)
        aucs[sigma] = evaluate(data.x_test, data.y_test, run.mean, run.cov)["auc"]
    assert np.all(aucs[0.0] > 0.88)
    assert np.all(aucs[1.0] > 0.75)
