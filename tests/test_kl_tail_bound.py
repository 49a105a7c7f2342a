"""Tests of dpclaims.analysis.kl_tail_bound (DP-SEP Theorem 4.1, supplement Sec. 8.1)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpclaims.analysis.gaussian import gaussian_kl
from dpclaims.analysis.kl_tail_bound import (
    V_READINGS,
    expected_lambda_max_bound,
    kl_q_p,
    kl_tail_bound,
    kl_tail_study,
    matrix_series_basis,
    matrix_variance_statistic,
    sample_noise,
)


def random_spd(rng: np.random.Generator, d: int, spread: float = 1.0) -> np.ndarray:
    """A random SPD matrix with log-eigenvalues N(0, spread^2) and a random basis."""
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = np.exp(spread * rng.standard_normal(d))
    out = (q * lam) @ q.T
    return 0.5 * (out + out.T)


# ------------------------------------------------------------------------------ exact KL


@pytest.mark.parametrize("d", [1, 2, 4])
def test_kl_q_p_agrees_with_gaussian_kl(d):
    rng = np.random.default_rng(100 + d)
    sigma_q = random_spd(rng, d)
    mu_q = rng.standard_normal(d)
    e, E = sample_noise(rng, 500, d, sigma_1=0.4, sigma_2=0.3 * np.linalg.eigvalsh(sigma_q)[0])
    ours = kl_q_p(sigma_q, e, E)
    ref = gaussian_kl(mu_q, sigma_q, mu_q + e, sigma_q + E)
    assert ours.shape == (500,)
    assert np.array_equal(np.isfinite(ours), np.isfinite(ref))
    assert np.isfinite(ref).mean() > 0.5
    finite = np.isfinite(ref)
    np.testing.assert_allclose(ours[finite], ref[finite], rtol=1e-8, atol=1e-10)
    assert np.all(ours[finite] >= -1e-12)


def test_kl_q_p_is_infinite_when_sigma_p_not_pd_and_zero_without_noise():
    sigma_q = np.array([[2.0, 0.5], [0.5, 1.0]])
    E = np.stack([np.zeros((2, 2)), -3.0 * np.eye(2), np.diag([0.0, -1.5])])
    e = np.array([[0.0, 0.0], [0.1, 0.2], [0.0, 0.0]])
    kl = kl_q_p(sigma_q, e, E)
    assert kl[0] == pytest.approx(0.0, abs=1e-14)
    assert np.isposinf(kl[1])  # Sigma_p = Sigma_q - 3 I has negative eigenvalues
    assert np.isposinf(kl[2])  # Sigma_p = [[2, .5], [.5, -.5]] is indefinite


def test_kl_q_p_eigenvector_fallback_agrees_with_the_solve(monkeypatch):
    """The quadratic form e^T Σ_p^{-1} e comes from one batched solve; where that raises
    (a PD matrix singular to working precision), the chunk falls back to eigenvectors.
    Both paths must give the same KL, inf where Σ_p is not PD."""
    rng = np.random.default_rng(7)
    sigma_q = random_spd(rng, 5)
    e, E = sample_noise(rng, 400, 5, sigma_1=0.5, sigma_2=0.6 * np.linalg.eigvalsh(sigma_q)[0])
    by_solve = kl_q_p(sigma_q, e, E)
    assert 0.05 < np.isinf(by_solve).mean() < 0.95  # both PD and non-PD draws are present

    def singular(*args, **kwargs):
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(np.linalg, "solve", singular)
    by_eigenvectors = kl_q_p(sigma_q, e, E)
    assert np.array_equal(np.isinf(by_solve), np.isinf(by_eigenvectors))
    finite = np.isfinite(by_solve)
    np.testing.assert_allclose(by_eigenvectors[finite], by_solve[finite], rtol=1e-9)


def test_spectral_bytes_do_not_depend_on_blocks_or_on_how_E_is_given(monkeypatch):
    """The spectra are computed per draw: blocks of 7 draws, E given whole or as its upper
    triangle, give the same bytes as one block; sample_noise's E is the scatter of the
    upper-triangle draws (the same normals in the same order)."""
    from dpclaims.analysis import kl_tail_bound as ktb

    rng_seed, d, n = 9, 5, 300
    sigma_q = random_spd(np.random.default_rng(8), d)
    sigma_2 = 0.6 * np.linalg.eigvalsh(sigma_q)[0]
    e, E = sample_noise(np.random.default_rng(rng_seed), n, d, 0.5, sigma_2)
    rng = np.random.default_rng(rng_seed)
    e_ref = 0.5 * rng.standard_normal((n, d))
    upper = sigma_2 * rng.standard_normal((n, d * (d + 1) // 2))
    iu, ju = np.triu_indices(d)
    E_ref = np.zeros((n, d, d))
    E_ref[:, iu, ju] = upper
    E_ref[:, ju, iu] = upper
    assert e.tobytes() == e_ref.tobytes() and E.tobytes() == E_ref.tobytes()
    chol_inv = ktb._chol_inv(sigma_q)
    whole = ktb._spectral(chol_inv, e, E)
    assert 0.05 < np.isinf(whole[1]).mean() < 0.95  # PD and non-PD draws in every run
    monkeypatch.setattr(ktb, "_BLOCK_BYTES", 7 * 8 * d * d)
    for got in (ktb._spectral(chol_inv, e, E), ktb._spectral(chol_inv, e, upper=upper)):
        assert got[0].tobytes() == whole[0].tobytes()
        assert got[1].tobytes() == whole[1].tobytes()


# ------------------------------------------------------------------------ series basis


@pytest.mark.parametrize("d", [1, 3, 5])
def test_basis_reproduces_sigma_q_inv_times_E(d):
    rng = np.random.default_rng(7)
    sigma_q_inv = random_spd(rng, d)
    sigma_2, n = 0.7, 6
    e, E = sample_noise(np.random.default_rng(11), n, d, sigma_1=1.0, sigma_2=sigma_2)
    # Replay the same stream: first the n*d normals of e, then the (n, K) upper triangle.
    replay = np.random.default_rng(11)
    replay.standard_normal((n, d))
    g = replay.standard_normal((n, d * (d + 1) // 2))
    basis = matrix_series_basis(sigma_q_inv)
    assert basis.shape == (d * (d + 1) // 2, d, d)
    series = np.einsum("nk,kij->nij", g, sigma_2 * basis)
    np.testing.assert_allclose(series, sigma_q_inv @ E, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(E, np.swapaxes(E, -1, -2))


# ----------------------------------------------------------------- variance statistic


@pytest.mark.parametrize("d", [1, 2, 3, 6])
def test_variance_statistic_identity_closed_form(d):
    # Sigma_q = I: sum_k S_k^2 = d I (each index i is one diagonal pair and in d - 1
    # off-diagonal pairs), so every reading equals d sigma_2^2.
    sigma_2 = 0.37
    for reading in V_READINGS:
        assert matrix_variance_statistic(np.eye(d), sigma_2, reading) == pytest.approx(
            d * sigma_2**2, rel=1e-12
        )
    s_printed = math.sqrt(2 * d * sigma_2**2 * math.log(2 * d))
    assert expected_lambda_max_bound(np.eye(d), sigma_2) == pytest.approx(s_printed, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_variance_statistic_readings_on_random_sigma_q(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 6))
    p = random_spd(rng, d, spread=1.5)  # Sigma_q^{-1}
    sigma_2 = 0.2
    printed = matrix_variance_statistic(p, sigma_2, "as-printed")
    tropp = matrix_variance_statistic(p, sigma_2, "tropp-rectangular")
    herm = matrix_variance_statistic(p, sigma_2, "hermitian")
    p2 = p @ p
    lam_max = np.linalg.eigvalsh(p)[-1]
    # Closed forms: sum A_k A_k^T = d P^2; sum A_k^T A_k = Tr(P^2) I + P^2 - Diag(P^2).
    assert printed == pytest.approx(d * sigma_2**2 * lam_max**2, rel=1e-10)
    col = np.linalg.norm(np.trace(p2) * np.eye(d) + p2 - np.diag(np.diag(p2)), 2)
    assert tropp == pytest.approx(sigma_2**2 * max(d * lam_max**2, col), rel=1e-10)
    assert tropp >= printed * (1 - 1e-12)
    # ... and the column term never exceeds the row term here (proof in the module docstring).
    assert tropp == pytest.approx(printed, rel=1e-10)
    # Hermitian: sigma_2^2 || P^{1/2} (Tr(P) I + P - Diag(P)) P^{1/2} ||.
    w, v = np.linalg.eigh(p)
    root = (v * np.sqrt(w)) @ v.T
    inner = np.trace(p) * np.eye(d) + p - np.diag(np.diag(p))
    assert herm == pytest.approx(sigma_2**2 * np.linalg.norm(root @ inner @ root, 2), rel=1e-10)
    # sqrt(2 v_herm log d) <= sqrt(2 v_printed log 2d) always (module docstring).
    assert expected_lambda_max_bound(p, sigma_2, "hermitian") <= expected_lambda_max_bound(
        p, sigma_2, "as-printed"
    )


def test_eq14_monte_carlo_tropp_and_hermitian_readings():
    # Eq. 14: E[lambda_max(Sigma_q^{-1} E)] <= sqrt(2 v log 2d). Fixed seed; the estimate is
    # more than 100 standard errors below both bounds, so the false-alarm probability of
    # this check is below 1e-12 (Gaussian tail of the sample mean).
    rng = np.random.default_rng(3)
    sigma_q = random_spd(rng, 4, spread=0.7)
    study = kl_tail_study(sigma_q, 0.1, 0.15, [1.0], n_draws=20_000, seed=2024)
    for reading in ("tropp-rectangular", "hermitian"):
        bound = study.lambda_max_bound[reading]
        assert study.mean_lambda_max + 10 * study.se_lambda_max < bound
    assert study.se_lambda_max < 0.01 * study.lambda_max_bound["hermitian"]


# ----------------------------------------------------------------------------- the bound


def test_kl_tail_bound_matches_hand_formula_and_may_be_negative():
    d, s1, s2, tau, A = 2, 0.5, 0.3, 0.5, 2.0
    s = math.sqrt(2 * d * s2**2 * math.log(2 * d))  # Sigma_q = I
    trace_inv = d
    for a in (0.5, 3.0):
        expected = (
            d / (2 * a) * math.log(1 + s)
            - d / (2 * a)
            + d / (2 * a) * (s1**2 * trace_inv + 1) * (A + tau + s - 1) / (A * tau)
        )
        assert kl_tail_bound(a, d, np.eye(d), s1, s2, tau, A) == pytest.approx(expected)
    grid = kl_tail_bound(np.array([1.0, 2.0]), d, np.eye(d), s1, s2, tau, A)
    assert grid.shape == (2,) and grid[0] == pytest.approx(2 * grid[1])
    # s + A + tau < 1: the printed right-hand side is negative (returned raw).
    assert kl_tail_bound(1.0, d, np.eye(d), s1, s2, 0.05, 0.2) < 0


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"a": 0.0}, "a must"),
        ({"a": -1.0}, "a must"),
        ({"a": np.array([1.0, -2.0])}, "-2.0"),
        ({"tau": 2.0, "A": 2.0}, "tau must be < A"),
        ({"tau": 3.0, "A": 2.0}, "tau = 3.0"),
        ({"tau": 0.0}, "tau must"),
        ({"sigma_1": 0.0}, "sigma_1"),
        ({"sigma_2": float("nan")}, "sigma_2"),
        ({"sigma_q": np.array([[1.0, np.nan], [np.nan, 1.0]])}, "sigma_q contains"),
        ({"sigma_q": np.array([[1.0, 0.2], [0.0, 1.0]])}, "symmetric"),
        ({"sigma_q": np.array([[1.0, 2.0], [2.0, 1.0]])}, "positive definite"),
        ({"d": 3}, "d = 3"),
        ({"reading": "tropp"}, "'tropp'"),
    ],
)
def test_kl_tail_bound_rejects_bad_input(kwargs, fragment):
    args = {
        "a": 1.0,
        "d": 2,
        "sigma_q": np.eye(2),
        "sigma_1": 0.1,
        "sigma_2": 0.1,
        "tau": 0.5,
        "A": 2.0,
        "reading": "as-printed",
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        kl_tail_bound(**args)


def test_study_rejects_bad_input():
    with pytest.raises(ValueError, match="a must"):
        kl_tail_study(np.eye(2), 0.1, 0.1, [1.0, 0.0], 100, seed=0)
    with pytest.raises(ValueError, match="tau must be < A"):
        kl_tail_study(np.eye(2), 0.1, 0.1, [1.0], 100, seed=0, tau=1.0, A=0.5)
    with pytest.raises(ValueError, match="both tau and A"):
        kl_tail_study(np.eye(2), 0.1, 0.1, [1.0], 100, seed=0, tau=0.5)
    with pytest.raises(ValueError, match="sigma_q contains"):
        kl_tail_study(np.array([[np.nan]]), 0.1, 0.1, [1.0], 100, seed=0)


# --------------------------------------------------------------------- Monte Carlo study


def test_study_falls_back_to_given_tau_A_only_when_no_pilot_draw_is_pd():
    """tau_A_if_not_pd: a pilot with no Σ_q + E PD gives the study with those (τ, A) given;
    a pilot with a PD draw gives the study without the option (the pilot's τ, A)."""
    swamped = 1e-4 * np.eye(6)  # noise sd 0.1: no Σ_p is PD among 300 pilot draws
    with pytest.raises(ValueError, match="no positive definite"):
        kl_tail_study(swamped, 0.1, 0.1, [1.0, 10.0], 200, seed=3, n_pilot=300)
    fallback = kl_tail_study(swamped, 0.1, 0.1, [1.0, 10.0], 200, seed=3, n_pilot=300,
                             tau_A_if_not_pd=(0.5, 2.0))
    given = kl_tail_study(swamped, 0.1, 0.1, [1.0, 10.0], 200, seed=3, tau=0.5, A=2.0)
    assert fallback.tau_A_source == "given" and fallback.n_pilot == 0
    assert json.dumps(fallback.to_dict()) == json.dumps(given.to_dict())
    broad = np.eye(6)
    with_option = kl_tail_study(broad, 0.1, 0.1, [1.0, 10.0], 200, seed=3, n_pilot=300,
                                tau_A_if_not_pd=(0.5, 2.0))
    plain = kl_tail_study(broad, 0.1, 0.1, [1.0, 10.0], 200, seed=3, n_pilot=300)
    assert with_option.tau_A_source == "pilot" and with_option.tau != 0.5
    assert json.dumps(with_option.to_dict()) == json.dumps(plain.to_dict())


def test_unconditional_tail_certifiably_exceeds_bound():
    # Sigma_q = I, d = 2, sigma_2 = 1: Sigma_p is not PD with probability about 0.52, so
    # P(KL >= a) >= 0.5 for every a, while the bound decays like 1/a. The certificate uses
    # Clopper-Pearson lower bounds, simultaneous over the grid and both tails at
    # alpha = 1e-6: a false alarm (violated although the bound holds) has probability
    # below 1e-6 for any seed.
    a_grid = np.array([1.0, 100.0, 1e4])
    study = kl_tail_study(
        np.eye(2), 1.0, 1.0, a_grid, n_draws=20_000, seed=5, tau=0.5, A=3.0, alpha=1e-6
    )
    assert 0.45 < study.frac_not_pd < 0.6
    assert study.ci_unconditional[0, 0] > study.frac_not_pd - 0.05
    for reading in V_READINGS:
        assert study.violated_unconditional[reading][1:].all()
        assert not study.violated_unconditional[reading][0]  # bound > 1 at a = 1
    np.testing.assert_array_less(study.ci_unconditional[:, 0], study.tail_unconditional + 1e-15)
    # Pilot-chosen (tau, A) gives a bound about 1e5 / a: still certifiably violated at large a.
    pilot = kl_tail_study(np.eye(2), 1.0, 1.0, [1e9], n_draws=20_000, seed=5, alpha=1e-6)
    assert pilot.tau_A_source == "pilot" and 0 < pilot.tau < 1e-2
    assert pilot.violated_unconditional["as-printed"].all()
    assert pilot.frac_condition_fails == pytest.approx(
        pilot.frac_not_pd, abs=0.01
    )  # the pilot's interval covers nearly every PD draw


def test_conditional_tail_violated_when_bound_negative():
    # sigma_2 = 0.3, Sigma_q = I, d = 2: s = 0.706 and tau + A + s < 1, so the printed RHS is
    # negative while the event tau < 1 + lambda_min < A has positive probability. Same
    # simultaneous alpha = 1e-6 certificate as above (false-alarm rate < 1e-6).
    study = kl_tail_study(
        np.eye(2), 0.3, 0.3, [0.5, 2.0], n_draws=40_000, seed=9, tau=0.05, A=0.2, alpha=1e-6
    )
    assert study.n_conditional > 20
    assert study.bound["as-printed"][0] < 0
    assert study.violated_conditional["as-printed"].all()
    # Eq. 21's premise E[1 + lambda_min | event] >= 1 - s fails under conditioning.
    assert 1 + study.mean_lambda_min_conditional < 1 - study.lambda_max_bound["as-printed"]


def test_study_is_deterministic_json_and_consistent():
    kwargs = {"n_draws": 3000, "seed": 42, "chunk_size": 700}
    one = kl_tail_study(np.diag([1.0, 0.5]), 0.2, 0.3, [0.1, 1.0, 10.0], **kwargs)
    two = kl_tail_study(np.diag([1.0, 0.5]), 0.2, 0.3, [0.1, 1.0, 10.0], **kwargs)
    text = json.dumps(one.to_dict(), allow_nan=False)
    assert text == json.dumps(two.to_dict(), allow_nan=False)
    assert np.all(np.diff(one.tail_unconditional) <= 0)
    assert one.tail_unconditional[-1] >= one.frac_not_pd
    lo, hi = one.ci_unconditional.T
    assert np.all((lo <= one.tail_unconditional) & (one.tail_unconditional <= hi))
    assert one.ci_level == pytest.approx(1 - 0.05 / 6)
    assert 0 <= one.frac_lambda_max_nonpositive <= 1
    # The chord inequality E[1/X] <= (A + tau - E X)/(A tau) holds for the event draws.
    x_mean = 1 + one.mean_lambda_min_conditional
    chord = (one.A + one.tau - x_mean) / (one.A * one.tau)
    assert one.mean_inv_lambda_min_conditional <= chord * (1 + 1e-9)
