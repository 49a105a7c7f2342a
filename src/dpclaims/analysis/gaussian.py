"""Gaussian exponential-family algebra over theta in R^d, batched over leading axes.

Parametrisation (DP-SEP, v0 Sec. 3: "the natural parameters of the approximate
posterior"): a Gaussian N(mu, Sigma) has natural parameters

    h      = Lambda mu        (precision-times-mean, shape (..., d))
    Lambda = Sigma^{-1}       (precision, shape (..., d, d), symmetric)

Sites (EP/SEP factors f) are unnormalised Gaussians in the same parametrisation;
their precision may be indefinite.

Flattening for the L2 norm (used identically for clipping, sensitivity and
noise everywhere in the suite): the flat natural-parameter vector is

    theta = [h_1, ..., h_d, Lambda_11, Lambda_12, ..., Lambda_1d, Lambda_22, ..., Lambda_dd]

i.e. ``h`` followed by the upper triangle of ``Lambda`` (diagonal included) read
row by row, of length ``p = d + d (d + 1) / 2``. Each off-diagonal entry is
counted once. Gaussian noise added i.i.d. to this vector and mirrored to the
lower triangle is exactly the noise model of DP-SEP's Thm. 4.1 ("the upper
triangular part of the matrix E is iid ... the lower triangular part is copied").

Products and powers of factors are linear in natural parameters: the factor
f_1^{a_1} f_2^{a_2} ... has flat parameters a_1 theta_1 + a_2 theta_2 + ...
(:func:`factor_product`).
"""

from __future__ import annotations

import numpy as np

from dpclaims.analysis.validation import check_finite_array, check_positive


def natural_dim(d: int) -> int:
    """Length ``p = d + d (d + 1) / 2`` of the flat natural-parameter vector in R^d."""
    if d < 1:
        raise ValueError(f"dimension d must be >= 1, got {d!r}")
    return d + d * (d + 1) // 2


def dim_from_natural(p: int) -> int:
    """Invert :func:`natural_dim`; raise ValueError if ``p`` is not of that form."""
    if p < 2:
        raise ValueError(f"{p} is not d + d(d+1)/2 for any integer d >= 1")
    d = int((np.sqrt(8 * p + 9) - 3) / 2)
    for cand in (d - 1, d, d + 1):
        if cand >= 1 and natural_dim(cand) == p:
            return cand
    raise ValueError(f"{p} is not d + d(d+1)/2 for any integer d >= 1")


def flatten_natural(h: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """Flat natural-parameter vector(s) from ``h`` (..., d) and ``precision`` (..., d, d).

    Returns shape (..., p). Raises ValueError on mismatched shapes.
    """
    h = np.asarray(h, dtype=float)
    precision = np.asarray(precision, dtype=float)
    d = h.shape[-1]
    if precision.shape[-2:] != (d, d) or precision.shape[:-2] != h.shape[:-1]:
        raise ValueError(
            f"h of shape {h.shape} and precision of shape {precision.shape} do not match"
        )
    iu = np.triu_indices(d)
    return np.concatenate([h, precision[..., iu[0], iu[1]]], axis=-1)


def unflatten_natural(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split flat vector(s) ``theta`` (..., p) into ``h`` (..., d) and a symmetric precision.

    Inverse of :func:`flatten_natural`; the lower triangle mirrors the upper one.
    """
    theta = np.asarray(theta, dtype=float)
    d = dim_from_natural(theta.shape[-1])
    h = theta[..., :d]
    iu = np.triu_indices(d)
    precision = np.zeros(theta.shape[:-1] + (d, d))
    precision[..., iu[0], iu[1]] = theta[..., d:]
    precision[..., iu[1], iu[0]] = theta[..., d:]
    return h, precision


def moments_to_natural(mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Flat natural parameters (..., p) of N(mean, cov); mean (..., d), cov (..., d, d) PD.

    Raises numpy.linalg.LinAlgError if a covariance is singular.
    """
    mean = np.asarray(mean, dtype=float)
    precision = np.linalg.inv(np.asarray(cov, dtype=float))
    precision = 0.5 * (precision + np.swapaxes(precision, -1, -2))
    return flatten_natural(np.einsum("...ij,...j->...i", precision, mean), precision)


def natural_to_moments(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean (..., d) and covariance (..., d, d) of flat natural parameters (..., p).

    Raises ValueError if any precision is not positive definite (the result would
    not be a distribution); project first with :func:`nearest_positive_definite`.
    """
    h, precision = unflatten_natural(theta)
    if not np.all(is_positive_definite(precision)):
        bad = int(np.sum(~is_positive_definite(precision)))
        raise ValueError(f"{bad} precision matrix(es) are not positive definite")
    cov = np.linalg.inv(precision)
    cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
    return np.einsum("...ij,...j->...i", cov, h), cov


def factor_product(thetas, powers) -> np.ndarray:
    """Flat parameters of prod_i f_i^{a_i}: sum_i a_i theta_i (DP-SEP eq. 4, SEP eqs. 2-3).

    ``thetas`` is a sequence of arrays broadcastable to a common shape (..., p);
    ``powers`` a sequence of scalars of the same length.
    """
    thetas = list(thetas)
    powers = list(powers)
    if len(thetas) != len(powers):
        raise ValueError(f"{len(thetas)} factors but {len(powers)} powers")
    return sum(a * np.asarray(t, dtype=float) for t, a in zip(thetas, powers, strict=True))


def l2_norm(theta: np.ndarray) -> np.ndarray:
    """L2 norm of flat natural-parameter vector(s) over the last axis: shape (...)."""
    return np.linalg.norm(np.asarray(theta, dtype=float), axis=-1)


def clip_to_norm(theta: np.ndarray, clipping_norm: float) -> np.ndarray:
    """Scale each flat vector in ``theta`` (..., p) to L2 norm at most ``clipping_norm``.

    theta * min(1, C / ||theta||_2) (DP-SEP Alg. 3 steps 6 and 9). Raises
    ValueError for C <= 0 or non-finite theta.
    """
    c = check_positive(clipping_norm, "clipping_norm")
    theta = check_finite_array(theta, "theta")
    norms = l2_norm(theta)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norms > c, c / norms, 1.0)
    return theta * scale[..., None]


def is_positive_definite(matrix: np.ndarray) -> np.ndarray:
    """Boolean array (...) : whether each symmetric matrix (..., d, d) is positive definite."""
    matrix = np.asarray(matrix, dtype=float)
    finite = np.all(np.isfinite(matrix), axis=(-2, -1))
    safe = np.where(finite[..., None, None], matrix, 0.0)
    return finite & (np.linalg.eigvalsh(safe)[..., 0] > 0)


def nearest_positive_definite(matrix: np.ndarray, floor: float) -> np.ndarray:
    """Project symmetric matrices (..., d, d) to positive definite ones.

    Eigenvalues below ``floor`` are raised to ``floor`` (Frobenius-nearest matrix
    with spectrum >= floor). DP-SEP v1 Sec. 3.3: "we project the negative
    eigenvalues to some value near zero to maintain positive definiteness ...
    following [Park et al., 2017]"; the paper does not state the value, so
    ``floor`` is an argument. Raises ValueError for floor <= 0.
    """
    floor = check_positive(floor, "floor")
    matrix = check_finite_array(matrix, "matrix")
    sym = 0.5 * (matrix + np.swapaxes(matrix, -1, -2))
    vals, vecs = np.linalg.eigh(sym)
    vals = np.maximum(vals, floor)
    return np.einsum("...ij,...j,...kj->...ik", vecs, vals, vecs)


def gaussian_kl(
    mean0: np.ndarray, cov0: np.ndarray, mean1: np.ndarray, cov1: np.ndarray
) -> np.ndarray:
    """KL[N(mean0, cov0) || N(mean1, cov1)] in nats, batched: shape (...).

    0.5 (tr(S1^{-1} S0) + (m1 - m0)^T S1^{-1} (m1 - m0) - d + log|S1| - log|S0|).
    Returns +inf where cov1 is not positive definite (the second argument is then
    not a distribution; DP-SEP supplement Sec. 8: "Otherwise, infinity").
    Raises ValueError if cov0 is not positive definite.
    """
    mean0, mean1 = np.asarray(mean0, float), np.asarray(mean1, float)
    cov0, cov1 = np.asarray(cov0, float), np.asarray(cov1, float)
    if not np.all(is_positive_definite(cov0)):
        raise ValueError("cov0 must be positive definite")
    d = mean0.shape[-1]
    pd1 = is_positive_definite(cov1)
    eye = np.eye(d)
    cov1_safe = np.where(pd1[..., None, None], cov1, eye)
    chol1 = np.linalg.cholesky(cov1_safe)
    chol0 = np.linalg.cholesky(cov0)
    diff = np.broadcast_to(mean1 - mean0, np.broadcast_shapes(mean0.shape, mean1.shape))
    solve_cov = np.linalg.solve(cov1_safe, cov0)
    trace = np.trace(solve_cov, axis1=-2, axis2=-1)
    maha = np.einsum("...i,...i->...", diff, np.linalg.solve(cov1_safe, diff[..., None])[..., 0])
    logdet1 = 2 * np.sum(np.log(np.diagonal(chol1, axis1=-2, axis2=-1)), axis=-1)
    logdet0 = 2 * np.sum(np.log(np.diagonal(chol0, axis1=-2, axis2=-1)), axis=-1)
    kl = 0.5 * (trace + maha - d + logdet1 - logdet0)
    return np.where(pd1, kl, np.inf)
