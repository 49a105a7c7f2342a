"""Tests of dpclaims.analysis.gaussian: flat natural parameters, moments, KL, projections."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from dpclaims.analysis.gaussian import (
    clip_to_norm,
    dim_from_natural,
    factor_product,
    flatten_natural,
    gaussian_kl,
    is_positive_definite,
    l2_norm,
    moments_to_natural,
    natural_dim,
    natural_to_moments,
    nearest_positive_definite,
    unflatten_natural,
)

BATCH_SHAPES = [(), (5,), (2, 3)]


def random_spd(rng, shape, d, jitter=0.5):
    """Random symmetric positive definite matrices of shape shape + (d, d)."""
    a = rng.standard_normal(shape + (d, d))
    return np.einsum("...ij,...kj->...ik", a, a) + jitter * np.eye(d)


def random_symmetric(rng, shape, d):
    a = rng.standard_normal(shape + (d, d))
    return 0.5 * (a + np.swapaxes(a, -1, -2))


# --------------------------------------------------------------------------- dimensions


@pytest.mark.parametrize(("d", "p"), [(1, 2), (2, 5), (3, 9), (4, 14), (10, 65)])
def test_natural_dim_known_values(d, p):
    assert natural_dim(d) == p
    assert dim_from_natural(p) == d


@pytest.mark.parametrize("d", range(1, 40))
def test_dim_from_natural_inverts_natural_dim(d):
    assert dim_from_natural(natural_dim(d)) == d


@pytest.mark.parametrize("p", [0, 1, 3, 4, 6, 7, 8, 10, 13, 15])
def test_dim_from_natural_rejects_invalid_length(p):
    with pytest.raises(ValueError, match=str(p)):
        dim_from_natural(p)


@pytest.mark.parametrize("d", [0, -1])
def test_natural_dim_rejects_non_positive(d):
    with pytest.raises(ValueError, match=str(d)):
        natural_dim(d)


# --------------------------------------------------------------------------- flatten


@pytest.mark.parametrize("shape", BATCH_SHAPES)
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_flatten_unflatten_round_trip(d, shape):
    rng = np.random.default_rng(100 + d)
    h = rng.standard_normal(shape + (d,))
    precision = random_symmetric(rng, shape, d)
    theta = flatten_natural(h, precision)
    assert theta.shape == shape + (natural_dim(d),)
    h2, precision2 = unflatten_natural(theta)
    np.testing.assert_array_equal(h2, h)
    np.testing.assert_array_equal(precision2, precision)
    # and the other way round: theta -> (h, Lambda) -> theta
    theta_random = rng.standard_normal(shape + (natural_dim(d),))
    np.testing.assert_array_equal(flatten_natural(*unflatten_natural(theta_random)), theta_random)


def test_flatten_layout_is_h_then_upper_triangle_row_by_row():
    h = np.array([1.0, 2.0, 3.0])
    precision = np.array([[11.0, 12.0, 13.0], [12.0, 22.0, 23.0], [13.0, 23.0, 33.0]])
    np.testing.assert_array_equal(
        flatten_natural(h, precision), [1, 2, 3, 11, 12, 13, 22, 23, 33]
    )


def test_unflatten_gives_symmetric_precision():
    theta = np.arange(1.0, 10.0)
    _, precision = unflatten_natural(theta)
    np.testing.assert_array_equal(precision, precision.T)


@pytest.mark.parametrize(
    ("h_shape", "prec_shape"),
    [((3,), (2, 2)), ((3,), (3, 2)), ((4, 3), (3, 3, 3)), ((2, 3), (3, 3))],
)
def test_flatten_mismatched_shapes_raise(h_shape, prec_shape):
    with pytest.raises(ValueError, match=r"do not match") as info:
        flatten_natural(np.zeros(h_shape), np.zeros(prec_shape))
    assert str(h_shape) in str(info.value)
    assert str(prec_shape) in str(info.value)


# --------------------------------------------------------------------------- moments


@pytest.mark.parametrize("shape", BATCH_SHAPES)
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_moments_natural_round_trip(d, shape):
    rng = np.random.default_rng(200 + d)
    mean = rng.standard_normal(shape + (d,))
    cov = random_spd(rng, shape, d)
    theta = moments_to_natural(mean, cov)
    mean2, cov2 = natural_to_moments(theta)
    np.testing.assert_allclose(mean2, mean, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(cov2, cov, rtol=1e-9, atol=1e-9)


def test_moments_to_natural_known_1d_value():
    # N(2, 4): precision 1/4, h = 2/4.
    np.testing.assert_allclose(moments_to_natural([2.0], [[4.0]]), [0.5, 0.25])


def test_natural_to_moments_rejects_indefinite_precision():
    theta = flatten_natural(np.zeros(2), np.diag([1.0, -1.0]))
    with pytest.raises(ValueError, match="not positive definite"):
        natural_to_moments(theta)


# --------------------------------------------------------------------------- KL


@pytest.mark.parametrize(
    ("m0", "s0", "m1", "s1"),
    [(0.0, 1.0, 0.0, 1.0), (0.0, 1.0, 1.0, 1.0), (1.5, 0.3, -2.0, 4.0), (-1.0, 2.0, 0.5, 0.7)],
)
def test_kl_1d_closed_form(m0, s0, m1, s1):
    expected = math.log(s1 / s0) + (s0**2 + (m0 - m1) ** 2) / (2 * s1**2) - 0.5
    got = gaussian_kl(np.array([m0]), np.array([[s0**2]]), np.array([m1]), np.array([[s1**2]]))
    assert float(got) == pytest.approx(expected, rel=1e-12, abs=1e-14)


def test_kl_batched_matches_scalar_calls():
    rng = np.random.default_rng(3)
    m0, m1 = rng.standard_normal((2, 6, 3))
    c0, c1 = random_spd(rng, (6,), 3), random_spd(rng, (6,), 3)
    batched = gaussian_kl(m0, c0, m1, c1)
    assert batched.shape == (6,)
    for i in range(6):
        assert batched[i] == pytest.approx(float(gaussian_kl(m0[i], c0[i], m1[i], c1[i])))


def test_kl_3d_matches_monte_carlo():
    rng = np.random.default_rng(2024)
    d = 3
    m0, m1 = rng.standard_normal(d), rng.standard_normal(d)
    c0, c1 = random_spd(rng, (), d), random_spd(rng, (), d)
    exact = float(gaussian_kl(m0, c0, m1, c1))
    n = 200_000
    z = rng.multivariate_normal(m0, c0, size=n)
    log_ratio = multivariate_normal(m0, c0).logpdf(z) - multivariate_normal(m1, c1).logpdf(z)
    estimate = log_ratio.mean()
    se = log_ratio.std(ddof=1) / math.sqrt(n)
    # |estimate - exact| > 5 SE has probability ~5.7e-7 under the CLT (false-alarm rate);
    # the seed is fixed, so the outcome is deterministic anyway.
    assert abs(estimate - exact) < 5 * se
    assert exact > 0


@pytest.mark.parametrize("d", [1, 2, 4])
def test_kl_of_a_distribution_with_itself_is_zero(d):
    rng = np.random.default_rng(d)
    m, c = rng.standard_normal((4, d)), random_spd(rng, (4,), d)
    np.testing.assert_allclose(gaussian_kl(m, c, m, c), 0.0, atol=1e-12)


def test_kl_is_nonnegative():
    rng = np.random.default_rng(11)
    m0, m1 = rng.standard_normal((2, 50, 3))
    kl = gaussian_kl(m0, random_spd(rng, (50,), 3), m1, random_spd(rng, (50,), 3))
    assert np.all(kl >= 0)


def test_kl_is_infinite_where_cov1_is_not_positive_definite():
    rng = np.random.default_rng(5)
    m = rng.standard_normal((3, 2))
    c0 = random_spd(rng, (3,), 2)
    c1 = np.stack([random_spd(rng, (), 2), np.diag([1.0, -0.5]), np.diag([1.0, 0.0])])
    kl = gaussian_kl(m, c0, m, c1)
    assert np.isfinite(kl[0])
    assert np.isinf(kl[1]) and kl[1] > 0
    assert np.isinf(kl[2]) and kl[2] > 0


def test_kl_rejects_indefinite_cov0():
    with pytest.raises(ValueError, match="cov0"):
        gaussian_kl(np.zeros(2), np.diag([1.0, -1.0]), np.zeros(2), np.eye(2))


# --------------------------------------------------------------------------- PD projection


@pytest.mark.parametrize("floor", [1e-6, 1e-2, 0.5])
def test_nearest_pd_raises_smallest_eigenvalue_to_floor(floor):
    rng = np.random.default_rng(7)
    m = random_symmetric(rng, (20,), 4)
    m[..., 0, 0] -= 10.0  # make sure every matrix has a negative eigenvalue
    assert not np.any(is_positive_definite(m))
    out = nearest_positive_definite(m, floor)
    vals = np.linalg.eigvalsh(out)
    np.testing.assert_allclose(vals[..., 0], floor, rtol=1e-6, atol=1e-12)
    assert np.all(is_positive_definite(out))
    np.testing.assert_allclose(out, np.swapaxes(out, -1, -2), atol=1e-12)
    # eigenvalues above the floor are kept
    orig = np.linalg.eigvalsh(m)
    np.testing.assert_allclose(vals, np.maximum(orig, floor), rtol=1e-9, atol=1e-9)


def test_nearest_pd_leaves_pd_matrices_above_floor_unchanged():
    rng = np.random.default_rng(8)
    m = random_spd(rng, (10,), 3, jitter=1.0)
    floor = 0.5
    assert np.all(np.linalg.eigvalsh(m)[..., 0] >= floor)
    np.testing.assert_allclose(nearest_positive_definite(m, floor), m, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("floor", [0.0, -1e-3, float("nan"), float("inf")])
def test_nearest_pd_rejects_bad_floor(floor):
    with pytest.raises(ValueError, match="floor") as info:
        nearest_positive_definite(np.eye(2), floor)
    assert repr(floor) in str(info.value)


def test_is_positive_definite():
    mats = np.stack([np.eye(2), np.diag([1.0, 0.0]), np.diag([1.0, -1.0]),
                     np.array([[1.0, np.nan], [np.nan, 1.0]])])
    np.testing.assert_array_equal(is_positive_definite(mats), [True, False, False, False])


# --------------------------------------------------------------------------- clipping


@pytest.mark.parametrize("c", [0.1, 1.0, 7.5])
def test_clip_to_norm(c):
    rng = np.random.default_rng(9)
    theta = rng.standard_normal((200, 9)) * 10 ** rng.uniform(-3, 1.5, size=(200, 1))
    clipped = clip_to_norm(theta, c)
    norms = l2_norm(theta)
    new_norms = l2_norm(clipped)
    assert np.all(new_norms <= c * (1 + 1e-12))
    below = norms <= c
    assert below.any() and (~below).any()
    np.testing.assert_array_equal(clipped[below], theta[below])
    np.testing.assert_allclose(new_norms[~below], c, rtol=1e-12)
    # direction preserved: clipped = positive multiple of theta
    cos = np.einsum("ij,ij->i", clipped, theta) / (new_norms * norms)
    np.testing.assert_allclose(cos, 1.0, rtol=1e-12)


def test_clip_to_norm_zero_vector_and_batch_shape():
    theta = np.zeros((2, 3, 5))
    out = clip_to_norm(theta, 1.0)
    assert out.shape == theta.shape
    np.testing.assert_array_equal(out, 0.0)


def test_clip_to_norm_rejects_nan_theta():
    theta = np.array([1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match=r"theta.*nan"):
        clip_to_norm(theta, 1.0)


@pytest.mark.parametrize("c", [0.0, -1.0, float("nan"), float("inf")])
def test_clip_to_norm_rejects_bad_clipping_norm(c):
    with pytest.raises(ValueError, match="clipping_norm") as info:
        clip_to_norm(np.ones(5), c)
    assert repr(c) in str(info.value)


# --------------------------------------------------------------------------- products


def test_factor_product_is_weighted_sum():
    rng = np.random.default_rng(10)
    t1, t2, t3 = rng.standard_normal((3, 4, 9))
    out = factor_product((t1, t2, t3), (0.5, -2.0, 3.0))
    np.testing.assert_allclose(out, 0.5 * t1 - 2.0 * t2 + 3.0 * t3, rtol=1e-14)


def test_factor_product_broadcasts_and_matches_density_product():
    # Product of two 1-D Gaussian densities: precisions and h add.
    a = moments_to_natural(np.array([1.0]), np.array([[2.0]]))
    b = moments_to_natural(np.array([-1.0]), np.array([[0.5]]))
    mean, cov = natural_to_moments(factor_product((a, b), (1.0, 1.0)))
    prec = 1 / 2.0 + 1 / 0.5
    assert cov[0, 0] == pytest.approx(1 / prec)
    assert mean[0] == pytest.approx((1.0 / 2.0 - 1.0 / 0.5) / prec)
    batch = np.ones((3, 2))
    np.testing.assert_allclose(factor_product((batch, a), (2.0, 1.0)),
                               np.broadcast_to(2.0 + a, (3, 2)))


def test_factor_product_mismatched_lengths_raise():
    with pytest.raises(ValueError, match="2 factors but 3 powers"):
        factor_product((np.ones(2), np.ones(2)), (1.0, 2.0, 3.0))
