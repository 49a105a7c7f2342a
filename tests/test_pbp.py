"""Tests of PBP with ADF / EP / SEP / clipped SEP / DP-SEP sites (dpclaims.algorithms.sep.pbp)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dpclaims.algorithms.sep.pbp import (
    METHODS,
    PBPConfig,
    adf_weight_update,
    fit_pbp,
    forward_moments,
    log_z_and_grads,
    regression_test_metrics,
    relu_moments,
)
from dpclaims.algorithms.sep.sep import DPSEPParams
from dpclaims.data.datasets import load_uci_standardised

DATA_DIR = Path("/work/shared/data")


def _n_w(d, h):
    return h * (d + 1) + h + 1


def test_relu_moments_match_monte_carlo():
    rng = np.random.default_rng(0)
    means = np.array([-3.0, -0.7, 0.0, 0.4, 2.5])
    var = np.array([0.5, 2.0, 1.0, 0.1, 4.0])
    s = 400_000
    a = np.maximum(means + np.sqrt(var) * rng.standard_normal((s, 5)), 0.0)
    m_a, v_a = relu_moments(means, var)
    se_m = a.std(0) / math.sqrt(s)
    c = a - a.mean(0)
    se_v = np.sqrt(((c ** 4).mean(0) - a.var(0) ** 2) / s)
    # 5 standard errors per check: two-sided false-alarm rate < 6e-7 each (normal approx).
    assert np.all(np.abs(a.mean(0) - m_a) < 5 * se_m)
    assert np.all(np.abs(a.var(0) - v_a) < 5 * se_v)
    # far tails: no NaN, non-negative, and the large-alpha limit is the identity
    m_big, v_big = relu_moments(np.array([60.0, -60.0]), np.array([1.0, 1.0]))
    assert np.allclose(m_big, [60.0, 0.0]) and np.allclose(v_big, [1.0, 0.0], atol=1e-12)


def test_forward_moments_match_monte_carlo():
    rng = np.random.default_rng(1)
    d, h, r = 3, 6, 2
    w = _n_w(d, h)
    m = rng.normal(size=(r, w))
    v = rng.uniform(0.05, 0.8, size=(r, w))
    x = rng.normal(size=(1, d))
    m_z, v_z = forward_moments(m, v, x, h)
    s = 200_000
    for k in range(r):
        wts = m[k] + np.sqrt(v[k]) * rng.standard_normal((s, w))
        w1 = wts[:, : h * (d + 1)].reshape(s, h, d + 1)
        w2 = wts[:, h * (d + 1):]
        xa = np.append(x[0], 1.0)
        hid = np.maximum(w1 @ xa / math.sqrt(d + 1), 0.0)
        z = (np.einsum("sh,sh->s", w2[:, :h], hid) + w2[:, h]) / math.sqrt(h + 1)
        c = z - z.mean()
        se_m = z.std() / math.sqrt(s)
        se_v = math.sqrt(((c ** 4).mean() - z.var() ** 2) / s)
        # 5 SE: two-sided false-alarm rate < 6e-7 per check (normal approx of the CLT).
        assert abs(z.mean() - m_z[k, 0]) < 5 * se_m
        assert abs(z.var() - v_z[k, 0]) < 5 * se_v


def test_log_z_gradients_match_central_differences():
    rng = np.random.default_rng(2)
    d, h, r = 3, 4, 2
    w = _n_w(d, h)
    m = rng.normal(size=(r, w))
    v = rng.uniform(0.1, 1.0, size=(r, w))
    x = rng.normal(size=(r, d))
    y = rng.normal(size=r)
    a, b = np.array([5.0, 7.0]), np.array([3.0, 2.0])
    out = log_z_and_grads(m, v, x, y, a, b, h)
    eps = 1e-6
    num_m, num_v = np.zeros_like(m), np.zeros_like(v)
    for j in range(w):
        e = np.zeros_like(m)
        e[:, j] = eps
        num_m[:, j] = (log_z_and_grads(m + e, v, x, y, a, b, h)["log_z"]
                       - log_z_and_grads(m - e, v, x, y, a, b, h)["log_z"]) / (2 * eps)
        num_v[:, j] = (log_z_and_grads(m, v + e, x, y, a, b, h)["log_z"]
                       - log_z_and_grads(m, v - e, x, y, a, b, h)["log_z"]) / (2 * eps)
    np.testing.assert_allclose(out["grad_m"], num_m, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(out["grad_v"], num_v, rtol=1e-6, atol=1e-8)
    # log Z is PBP's Gaussian approximation with V = v_z + beta/(alpha-1)
    big_v = out["v_z"] + b / (a - 1)
    expect = -0.5 * np.log(2 * np.pi * big_v) - 0.5 * (y - out["m_z"]) ** 2 / big_v
    np.testing.assert_allclose(out["log_z"], expect, rtol=1e-12)


def test_adf_matches_conjugate_posterior_of_a_linear_output_weight():
    # One hidden unit with (numerically) deterministic pre-activation c*x > 0 makes the
    # output z = (w c x + b)/sqrt(2) linear in the output weight w; with known noise
    # sigma^2 (alpha huge, beta = sigma^2 (alpha - 1)) sequential ADF is exact.
    rng = np.random.default_rng(3)
    c, sigma2, m0, v0 = 1.3, 0.25, 0.2, 2.0
    m = np.array([[c * math.sqrt(2.0), 0.0, m0, 0.0]])
    v = np.array([[1e-24, 1e-24, v0, 1e-24]])
    alpha = np.array([1e12])
    beta = sigma2 * (alpha - 1)
    xs = rng.uniform(0.5, 2.0, size=7)
    ys = 0.8 * c * xs / math.sqrt(2) + math.sqrt(sigma2) * rng.standard_normal(7)
    for xi, yi in zip(xs, ys, strict=True):
        g = log_z_and_grads(m, v, np.array([[xi]]), np.array([yi]), alpha, beta, 1)
        m, v = adf_weight_update(m, v, g["grad_m"], g["grad_v"])
    phi = c * xs / math.sqrt(2)
    prec = 1 / v0 + (phi ** 2).sum() / sigma2
    mean = (m0 / v0 + (phi * ys).sum() / sigma2) / prec
    np.testing.assert_allclose(v[0, 2], 1 / prec, rtol=1e-8)
    np.testing.assert_allclose(m[0, 2], mean, rtol=1e-8)


def _toy(seed=0, n=200):
    rng = np.random.default_rng(seed)
    xs = rng.uniform(-3, 3, (n, 1))
    ys = np.sin(xs[:, 0]) + 0.1 * rng.normal(size=n)
    xe = rng.uniform(-3, 3, (300, 1))
    ye = np.sin(xe[:, 0]) + 0.1 * rng.normal(size=300)
    xm, xsd, ym, ysd = xs.mean(), xs.std(), ys.mean(), ys.std()
    return (xs - xm) / xsd, (ys - ym) / ysd, (xe - xm) / xsd, (ye - ym) / ysd, ysd


def _dpsep(method, **kw):
    if method == "sep-clipped":
        return DPSEPParams(clipping_norm=1.0, reading="sep-invariant", **kw)
    if method == "dp-sep":
        return DPSEPParams(clipping_norm=1.0, noise_multiplier=0.1, reading="sep-invariant", **kw)
    return None


@pytest.mark.parametrize("method", METHODS)
def test_every_method_beats_the_mean_on_a_toy_regression(method):
    xt, yt, xe, ye, ysd = _toy()
    cfg = PBPConfig(method=method, epochs=10, n_runs=2, dpsep=_dpsep(method))
    fit = fit_pbp(xt, yt, cfg, np.random.default_rng(1))
    mu, var = fit.predict(xe)
    assert mu.shape == var.shape == (2, 300)
    rmse, ll = regression_test_metrics(mu, var, ye, ysd)
    base = np.sqrt(np.mean((ye - yt.mean()) ** 2)) * ysd
    assert np.all(rmse < 0.6 * base), (rmse, base)
    assert np.all(np.isfinite(ll))
    # same seed, same fit
    again = fit_pbp(xt, yt, cfg, np.random.default_rng(1))
    np.testing.assert_array_equal(again.m_w, fit.m_w)


def test_ep_first_epoch_equals_adf():
    # With all sites at 0, EP's cavity is q, so its first pass is PBP's ADF pass.
    xt, yt, *_ = _toy(n=60)
    cfg = dict(epochs=1, n_runs=2, refine_prior=False, n_hidden=10)
    a = fit_pbp(xt, yt, PBPConfig(method="adf", **cfg), np.random.default_rng(4))
    e = fit_pbp(xt, yt, PBPConfig(method="ep", **cfg), np.random.default_rng(4))
    np.testing.assert_allclose(e.m_w, a.m_w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(e.beta / (e.alpha - 1), a.beta / (a.alpha - 1), rtol=1e-9)


def test_sep_clipped_with_huge_c_equals_sep_and_clipping_bounds_the_site():
    xt, yt, *_ = _toy(n=80)
    cfg = dict(epochs=2, n_runs=2, n_hidden=10)
    s = fit_pbp(xt, yt, PBPConfig(method="sep", **cfg), np.random.default_rng(5))
    big = DPSEPParams(clipping_norm=1e12, reading="sep-invariant")
    c = fit_pbp(xt, yt, PBPConfig(method="sep-clipped", dpsep=big, **cfg),
                np.random.default_rng(5))
    np.testing.assert_allclose(c.m_w, s.m_w, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(c.v_w, s.v_w, rtol=1e-8)
    assert c.info["site_clip_fraction"] == 0.0
    small = DPSEPParams(clipping_norm=0.3, reading="sep-invariant")
    k = fit_pbp(xt, yt, PBPConfig(method="sep-clipped", dpsep=small, **cfg),
                np.random.default_rng(5))
    assert np.all(np.linalg.norm(k.info["theta_f"], axis=1) <= 0.3 * (1 + 1e-12))
    assert k.info["site_clip_fraction"] > 0.5  # the bound binds: the test is not vacuous
    assert not np.allclose(k.m_w, s.m_w)


@pytest.mark.parametrize("reading,factor", [("as-printed", 1 / 80), ("sep-invariant", 1 / 80),
                                            ("sep-invariant-recalibrated", 1.0)])
def test_dp_sep_noise_std_follows_the_reading(reading, factor):
    xt, yt, *_ = _toy(n=80)
    dp = DPSEPParams(clipping_norm=0.5, damping=1.0, noise_multiplier=0.3, reading=reading)
    fit = fit_pbp(xt, yt, PBPConfig(method="dp-sep", epochs=1, n_hidden=5, dpsep=dp),
                  np.random.default_rng(6))
    assert fit.info["noise_std"] == pytest.approx(0.3 * 2 * 0.5 * factor)
    assert fit.info["reading"] == reading
    other = fit_pbp(xt, yt, PBPConfig(method="dp-sep", epochs=1, n_hidden=5, dpsep=dp),
                    np.random.default_rng(7))
    assert not np.allclose(other.m_w, fit.m_w)  # noise is drawn from rng


def test_bad_input_raises_naming_it():
    xt, yt, *_ = _toy(n=20)
    with pytest.raises(ValueError, match="method"):
        PBPConfig(method="vi")
    with pytest.raises(ValueError, match="dpsep"):
        PBPConfig(method="dp-sep")
    with pytest.raises(ValueError, match="noise_multiplier"):
        PBPConfig(method="dp-sep", dpsep=DPSEPParams())
    with pytest.raises(ValueError, match="damping"):
        PBPConfig(method="sep", damping=-1.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        DPSEPParams(noise_multiplier=0.0)
    bad = xt.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="x_train"):
        fit_pbp(bad, yt, PBPConfig(epochs=1), np.random.default_rng(0))
    with pytest.raises(ValueError, match="y_train"):
        fit_pbp(xt, yt[:-1], PBPConfig(epochs=1), np.random.default_rng(0))
    with pytest.raises(ValueError, match="var"):
        regression_test_metrics(np.zeros((1, 3)), np.zeros((1, 3)), np.zeros(3), 1.0)


def test_regression_metrics_undo_the_standardisation():
    mean = np.array([[0.0, 1.0], [1.0, 1.0]])
    var = np.full((2, 2), 0.5)
    y = np.array([0.0, 2.0])
    rmse, ll = regression_test_metrics(mean, var, y, 3.0)
    np.testing.assert_allclose(rmse, [3.0 * math.sqrt(0.5), 3.0 * 1.0])
    lp = -0.5 * np.log(2 * np.pi * 0.5) - 0.5 * np.array([[0, 1], [1, 1]]) / 0.5
    np.testing.assert_allclose(ll, lp.mean(1) - np.log(3.0))


@pytest.mark.skipif(not (DATA_DIR / "uci" / "wine-quality-red").is_dir(),
                    reason="shared UCI data not available")
def test_loader_uses_training_statistics_only():
    out = load_uci_standardised(DATA_DIR, "wine-quality-red", 0)
    xtr, ytr = out["x_train"], out["y_train"]
    np.testing.assert_allclose(xtr.mean(0), 0.0, atol=1e-10)
    np.testing.assert_allclose(xtr.std(0), 1.0, rtol=1e-10)
    assert abs(ytr.mean()) < 1e-10 and abs(ytr.std() - 1) < 1e-10
    folder = DATA_DIR / "uci" / "wine-quality-red"
    raw = np.loadtxt(folder / "data.txt")
    train = np.loadtxt(folder / "index_train_0.txt", dtype=int)
    test = np.loadtxt(folder / "index_test_0.txt", dtype=int)
    target = int(np.loadtxt(folder / "index_target.txt", dtype=int))
    assert out["y_mean"] == pytest.approx(raw[train, target].mean())
    assert out["y_std"] == pytest.approx(raw[train, target].std())
    np.testing.assert_allclose(out["y_test"] * out["y_std"] + out["y_mean"], raw[test, target])
    assert abs(out["y_test"].mean()) > 1e-6  # test split was NOT re-standardised
    with pytest.raises(FileNotFoundError, match="index_train_999"):
        load_uci_standardised(DATA_DIR, "wine-quality-red", 999)
