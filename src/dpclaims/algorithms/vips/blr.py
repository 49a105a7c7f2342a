"""VIPS for Bayesian logistic regression with Polya-Gamma augmentation (VIPS Sec. 6).

Model (eq. 43): p(y_n = 1 | x_n, m) = sigmoid(m^T x_n), y_n in {0, 1}, prior
m ~ N(0, alpha^{-1} I), optionally alpha ~ Gam(a0, b0). Polya-Gamma augmentation
(eqs. 45-47) makes the likelihood conditionally conjugate, with sufficient statistics
[(y_n - 1/2) x_n ; vec(xi_n x_n x_n^T)]. At fixed variational parameters (mean mu,
covariance Sigma, second moment <m m^T> = Sigma + mu mu^T) the E-step gives
q(xi_n) = PG(1, c_n), c_n = sqrt(x_n^T <m m^T> x_n) (eq. 49), whose mean is

    <xi_n> = tanh(c_n / 2) / (2 c_n)  <=  1/4   (Sec. 6.2, Fig. 4; 1/4 at c_n = 0),

and the two expected sufficient statistics over a batch of S records are

    s1 = (1/S) sum_n (y_n - 1/2) x_n                  shape (d,)      (eq. 50, row 1)
    s2 = (1/S) sum_n <xi_n> x_n x_n^T                 shape (d, d)    (eq. 50, row 2)

(eq. 50 prints a second 1/N inside s_bar(D_n) as well as the outer 1/N; the M-step of
eq. 54, nu~ = [N s1 ; N s2 + <alpha> I] = [Sigma^{-1} mu ; Sigma^{-1}], only makes sense
with one, which is what is implemented.)

Privacy (Sec. 6.2). VIPS releases, every iteration::

    s1~ = s1 + Y,  Y_i iid N(0, sigma^2 Delta_s1^2)                            (eq. 56)
    s2~ = s2 + Z,  Z symmetric: upper triangle (diagonal included) iid
                   N(0, sigma^2 Delta_s2^2), copied to the lower one   (eq. 58, "Analyze Gauss")

with the paper's bounds "``Delta s1 ... <= max (2/N) |(y_n - 1/2)| |x_n|_2 <= 2/N``" (eq. 57)
and "``Delta s2 = max (2/N) |<xi_n> vec(x_n x_n^T)|_2 <= 1/(2N)``" (eq. 59), where with a
minibatch "the 1/N factor has to be changed to 1/S" (eq. 23). ``sensitivity_bound``
selects them:

``"paper"``  Delta_s1 = 2/S, Delta_s2 = 1/(2S)          (eqs. 57, 59 with eq. 23)
``"tight"``  Delta_s1 = 1/S, Delta_s2 = sqrt(2)/(4S)     (exact suprema under replace-one)

Tight bounds, replace-one, ||x|| <= 1, y in {0, 1}: s1 changes by
(1/S)[(y - 1/2) x - (y' - 1/2) x'], of norm <= (1/S)(1/2 + 1/2) = 1/S (attained at
x' = -x, y' = y). s2 changes by (1/S)(a x x^T - b x' x'^T) with a, b in (0, 1/4]; both
terms are positive semi-definite, so ||A - B||_F^2 = ||A||_F^2 + ||B||_F^2 - 2 tr(AB)
<= a^2 + b^2 <= 1/8, i.e. sqrt(2)/(4S) (approached by orthogonal unit x, x' with c -> 0).
The paper's values are valid, conservative L2 / Frobenius bounds (factor 2 and sqrt(2)).
The noise is added to the d(d+1)/2 upper-triangle entries; the L2 norm of the
upper-triangle change is at most its Frobenius norm, so calibrating to the Frobenius
bound is valid (conservative) for what is actually noised; the lower triangle is a
copy (post-processing).

One step is two Gaussian mechanisms on the same batch, each with noise multiplier
sigma relative to its own block's sensitivity; together they are one Gaussian
mechanism with multiplier sigma / sqrt(2) (Gaussian-DP: mu = sqrt(mu_1^2 + mu_2^2)),
which :class:`VIPSBLRStep` declares as ``ComposedDpEvent([Gaussian(sigma)] * 2)``.

A noised s2~ can be indefinite: "we project the negative eigenvalues to some value
near zero" (Sec. 6.2); the value is not stated, so it is ``psd_floor``. Projection is
post-processing and counted in the trace.

Stochastic VB (Algorithms 4, 5; Sec. 2.5.4): each iteration t = 1..J draws S records
without replacement, computes (s1, s2) at the current parameters (noised if sigma > 0),
sets nu~(t) = [N s1~ ; N s2~ + <alpha> I], mixes nu~ <- (1 - rho_t) nu~(t-1) + rho_t nu~(t)
with rho_t = (tau0 + t)^(-kappa), "kappa in (0.5, 1]", and, with a hyperprior,
updates q(alpha) = Gam(a0 + d/2, b0 + (mu^T mu + tr Sigma)/2) (eq. 53). nu~(0) is the
prior (mu = 0 unless ``init_mean``, Sigma = alpha^{-1} I).

Prediction: the posterior predictive p(y = 1 | x) = E_q[sigmoid(m^T x)] by the probit
approximation sigmoid(kappa(s^2) x^T mu), kappa(s^2) = (1 + pi s^2 / 8)^(-1/2),
s^2 = x^T Sigma x (MacKay 1992; Bishop 2006, eq. 4.153). Accuracy thresholds it at
1/2 (the same decision as sign(x^T mu)); AUC is the Mann-Whitney statistic (ties
counted 1/2).

References
----------
- [1] Park, Foulds, Chaudhuri, Welling, "Variational Bayes in private settings
  (VIPS)", JAIR 2020, Secs. 2.5.4, 3.2, 5, 6 (eqs. 22-23, 43-59; Algorithms 4-5).
- [2] Polson, Scott, Windle, "Bayesian inference for logistic models using
  Polya-Gamma latent variables", JASA 2013.
- [3] Dwork, Talwar, Thakurta, Zhang, "Analyze Gauss", STOC 2014.
- [4] Dong, Roth, Su, "Gaussian differential privacy", JRSS-B 2022 (composition).
- [5] MacKay, "The evidence framework applied to classification networks", 1992.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit
from scipy.stats import rankdata

from dpclaims.analysis.validation import (
    check_count,
    check_finite_array,
    check_positive,
)

PG_MEAN_MAX = 0.25
SENSITIVITY_BOUNDS = ("paper", "tight")
_NORM_TOL = 1e-12


# --------------------------------------------------------------------------- checks


def check_blr_data(x, y, *, unit_norm: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Return ``x`` (..., N, d) and ``y`` (..., N) as float arrays, checked.

    Raises
    ------
    ValueError
        Non-finite values, mismatched shapes, labels outside {0, 1} (the paper's
        likelihood, eq. 43; map {-1, +1} with (y + 1) / 2), or, with ``unit_norm``, a
        row of norm > 1 (Sec. 3.2.1: "the L_2 norm of any D_n is less than 1";
        nothing is clipped here).
    """
    x = check_finite_array(x, "x (features)")
    y = check_finite_array(y, "y (labels)")
    if x.ndim < 2 or y.shape != x.shape[:-1]:
        raise ValueError(f"x must have shape (..., N, d) and y (..., N); got {x.shape} and "
                         f"{y.shape}")
    if x.shape[-2] < 1:
        raise ValueError("the dataset is empty")
    bad = (y != 0) & (y != 1)
    if bad.any():
        raise ValueError(f"labels must be 0 or 1 (VIPS eq. 43), got {y[bad].ravel()[0]!r}; "
                         "map {-1, +1} labels with (y + 1) / 2")
    if unit_norm:
        norms = np.linalg.norm(x, axis=-1)
        if norms.max() > 1 + _NORM_TOL:
            i = np.unravel_index(int(np.argmax(norms)), norms.shape)
            raise ValueError(f"feature rows must have L2 norm <= 1 (VIPS Sec. 3.2.1); row "
                             f"{tuple(int(k) for k in i)} has norm {norms[i]!r}")
    return x, y


def _check_second_moment(second_moment, d: int) -> np.ndarray:
    mm = check_finite_array(second_moment, "second_moment <m m^T>")
    if mm.ndim < 2 or mm.shape[-2:] != (d, d):
        raise ValueError(f"second_moment must have shape (..., {d}, {d}), got {mm.shape}")
    if not np.allclose(mm, np.swapaxes(mm, -1, -2), rtol=1e-10, atol=1e-12):
        raise ValueError("second_moment <m m^T> must be symmetric")
    return mm


def _check_bound(bound: str) -> str:
    if bound not in SENSITIVITY_BOUNDS:
        raise ValueError(f"sensitivity_bound must be one of {SENSITIVITY_BOUNDS}, got {bound!r}")
    return bound


# --------------------------------------------------------------------------- statistics


def pg_mean(c) -> np.ndarray:
    """Mean of PG(1, c): tanh(c/2) / (2c), and 1/4 at c = 0 (VIPS Sec. 6.2, Fig. 4).

    Parameters
    ----------
    c : array_like (...)
        Tilting parameters c >= 0.

    Returns
    -------
    ndarray (...), values in (0, 1/4]; decreasing in c.

    Raises
    ------
    ValueError
        A negative or non-finite c.
    """
    c = check_finite_array(c, "c (Polya-Gamma parameter)")
    if (c < 0).any():
        raise ValueError(f"Polya-Gamma parameter c must be >= 0, got {c[c < 0].ravel()[0]!r}")
    small = c < 1e-4
    safe = np.where(small, 1.0, c)
    # series tanh(c/2)/(2c) = 1/4 - c^2/48 + c^4/480 - ... for small c
    return np.where(small, 0.25 - c * c / 48.0, np.tanh(safe / 2.0) / (2.0 * safe))


def pg_parameters(x, second_moment) -> np.ndarray:
    """c_n = sqrt(x_n^T <m m^T> x_n) (eq. 49); x (..., N, d), second_moment (..., d, d)."""
    x = np.asarray(x, dtype=float)
    quad = np.einsum("...ni,...ij,...nj->...n", x, second_moment, x)
    if (quad < -1e-10 * (1 + np.abs(quad).max())).any():
        raise ValueError("second_moment is not positive semi-definite: x^T <m m^T> x < 0")
    return np.sqrt(np.maximum(quad, 0.0))


def blr_statistics(x, y, second_moment) -> tuple[np.ndarray, np.ndarray]:
    """Expected sufficient statistics (s1, s2) of a batch at fixed variational parameters.

    s1 = mean_n (y_n - 1/2) x_n and s2 = mean_n <xi_n> x_n x_n^T with
    <xi_n> = :func:`pg_mean` (c_n), c_n = sqrt(x_n^T <m m^T> x_n) (VIPS eqs. 49-50).
    The PG parameters c_n enter through ``second_moment`` (they are a function of the
    record and of the public variational parameters).

    Parameters
    ----------
    x : array (..., S, d)
        Features, rows of L2 norm <= 1. Leading axes batch independent trials.
    y : array (..., S)
        Labels in {0, 1}.
    second_moment : array (..., d, d)
        <m m^T> = Sigma + mu mu^T of the current q(m), symmetric PSD.

    Returns
    -------
    s1 : ndarray (..., d)
    s2 : ndarray (..., d, d), symmetric PSD.

    Raises
    ------
    ValueError
        Bad data (:func:`check_blr_data`) or a second moment of the wrong shape,
        non-symmetric or indefinite.
    """
    x, y = check_blr_data(x, y)
    mm = _check_second_moment(second_moment, x.shape[-1])
    return _statistics(x, y, mm)


def _statistics(x, y, mm):
    s = x.shape[-2]
    s1 = np.einsum("...n,...ni->...i", y - 0.5, x) / s
    xi = pg_mean(pg_parameters(x, mm))
    s2 = np.einsum("...n,...ni,...nj->...ij", xi, x, x) / s
    return s1, s2


def blr_sensitivities(n_records: int, bound: str = "paper") -> tuple[float, float]:
    """Replace-one L2 sensitivities (Delta_s1, Delta_s2) of (s1, s2) over ``n_records`` rows.

    ``"paper"``: 2/S (eq. 57) and 1/(2S) (eq. 59), with S for N as eq. 23 says.
    ``"tight"``: 1/S and sqrt(2)/(4S), the exact suprema (module docstring).
    Delta_s2 is in Frobenius norm, which bounds the L2 norm of the noised upper
    triangle. Raises ValueError on n_records < 1 or an unknown bound.
    """
    n = check_count(n_records, "n_records", minimum=1)
    if _check_bound(bound) == "paper":
        return 2.0 / n, 1.0 / (2.0 * n)
    return 1.0 / n, math.sqrt(2.0) / (4.0 * n)


def symmetric_noise(rng: np.random.Generator, d: int, std: float, size=()) -> np.ndarray:
    """Analyze-Gauss noise: symmetric (size..., d, d), upper triangle iid N(0, std^2).

    "We first draw Gaussian random variables z ~ N(0, sigma^2 (Delta s2)^2 I). Using z,
    we construct a upper triangular matrix (including diagonal), then copy the upper
    part to the lower part" (VIPS Sec. 6.2). Every entry, diagonal or not, has standard
    deviation ``std``; Z_ij = Z_ji. Raises ValueError on d < 1 or std < 0.
    """
    d = check_count(d, "d", minimum=1)
    if not (math.isfinite(std) and std >= 0):
        raise ValueError(f"noise std must be a finite number >= 0, got {std!r}")
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    iu = np.triu_indices(d)
    z = std * rng.standard_normal(size + (iu[0].size,))
    out = np.zeros(size + (d, d))
    out[..., iu[0], iu[1]] = z
    out[..., iu[1], iu[0]] = z
    return out


def triu_vector(matrix) -> np.ndarray:
    """Upper triangle (diagonal included, row by row) of (..., d, d): shape (..., d(d+1)/2)."""
    matrix = np.asarray(matrix, dtype=float)
    iu = np.triu_indices(matrix.shape[-1])
    return matrix[..., iu[0], iu[1]]


def symmetric_from_triu(vector, d: int) -> np.ndarray:
    """Inverse of :func:`triu_vector`: (..., d(d+1)/2) -> symmetric (..., d, d)."""
    vector = np.asarray(vector, dtype=float)
    iu = np.triu_indices(d)
    if vector.shape[-1] != iu[0].size:
        raise ValueError(f"expected a last axis of length {iu[0].size} for d = {d}, "
                         f"got {vector.shape}")
    out = np.zeros(vector.shape[:-1] + (d, d))
    out[..., iu[0], iu[1]] = vector
    out[..., iu[1], iu[0]] = vector
    return out


def project_psd(matrix, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Raise negative eigenvalues of symmetric (..., d, d) to ``floor``; count them.

    "we project the negative eigenvalues to some value near zero" (VIPS Sec. 6.2).
    Only eigenvalues < 0 move. Returns (projected matrices, number of projected
    eigenvalues per matrix (...)). Raises ValueError on floor < 0.
    """
    if not (math.isfinite(floor) and floor >= 0):
        raise ValueError(f"psd_floor must be a finite number >= 0, got {floor!r}")
    sym = 0.5 * (matrix + np.swapaxes(matrix, -1, -2))
    vals, vecs = np.linalg.eigh(sym)
    neg = vals < 0
    vals = np.where(neg, floor, vals)
    return np.einsum("...ij,...j,...kj->...ik", vecs, vals, vecs), neg.sum(axis=-1)


# --------------------------------------------------------------------------- M-step


def _moments_from_nu(nu1, nu2):
    """(mu, Sigma, <m m^T>) from nu~ = [Sigma^{-1} mu ; Sigma^{-1}] (eq. 54)."""
    cov = np.linalg.inv(nu2)
    cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
    mean = np.einsum("...ij,...j->...i", cov, nu1)
    return mean, cov, cov + mean[..., :, None] * mean[..., None, :]


def _alpha_update(mean, cov, a0, b0):
    """<alpha> under q(alpha) = Gam(a0 + d/2, b0 + (mu^T mu + tr Sigma)/2) (eq. 53)."""
    d = mean.shape[-1]
    b_n = b0 + 0.5 * (np.einsum("...i,...i->...", mean, mean) + np.trace(cov, axis1=-2, axis2=-1))
    return (a0 + 0.5 * d) / b_n


def _check_prior(prior_precision, hyperprior):
    alpha0 = check_positive(prior_precision, "prior_precision")
    if hyperprior is None:
        return alpha0, None
    if len(hyperprior) != 2:
        raise ValueError(f"hyperprior must be (a0, b0), got {hyperprior!r}")
    a0 = check_positive(hyperprior[0], "hyperprior a0")
    b0 = check_positive(hyperprior[1], "hyperprior b0")
    return a0 / b0, (a0, b0)


# --------------------------------------------------------------------------- full-batch VB


@dataclass(frozen=True)
class BLRPosterior:
    """Gaussian q(m) = N(mean, cov) from :func:`vb_blr_full_batch`.

    Attributes: ``mean`` (d,), ``cov`` (d, d), ``alpha`` (<alpha>, the prior precision
    used at the fixed point), ``iterations`` (fixed-point iterations taken),
    ``change`` (max abs change of mean and cov at the last iteration).
    """

    mean: np.ndarray
    cov: np.ndarray
    alpha: float
    iterations: int
    change: float


def vb_blr_full_batch(x, y, *, prior_precision: float = 1.0,
                      hyperprior: tuple[float, float] | None = None, tol: float = 1e-10,
                      max_iter: int = 10_000) -> BLRPosterior:
    """Full-batch VB for BLR with PG augmentation: the fixed point the stochastic runs target.

    Iterates, with all N records, the E-step <xi_n> = tanh(c_n/2)/(2 c_n),
    c_n^2 = x_n^T (Sigma + mu mu^T) x_n, and the M-step Sigma^{-1} = <alpha> I +
    sum_n <xi_n> x_n x_n^T, mu = Sigma sum_n (y_n - 1/2) x_n (eqs. 49-54 with S = N and
    rho = 1). Since <xi_n> = 2 lambda(c_n) of Jaakkola & Jordan (2000), this is their
    variational bound's fixed point. With ``hyperprior`` (a0, b0), <alpha> follows
    eq. 53 each iteration.

    Parameters
    ----------
    x : array (N, d)
        Features (no norm requirement: this reference is not private).
    y : array (N,)
        Labels in {0, 1}.
    prior_precision : float
        alpha > 0 of p(m) = N(0, alpha^{-1} I) when ``hyperprior`` is None.
    hyperprior : (a0, b0) or None
        Gamma hyperprior on alpha (eq. 43); the start is <alpha> = a0 / b0.
    tol : float
        Stop when the max abs change of mean and covariance is < tol.
    max_iter : int

    Returns
    -------
    BLRPosterior

    Raises
    ------
    ValueError
        Bad data or parameters.
    RuntimeError
        No convergence within ``max_iter`` iterations (the change reached is stated).
    """
    x, y = check_blr_data(x, y, unit_norm=False)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (N, d), got {x.shape}")
    tol = check_positive(tol, "tol")
    max_iter = check_count(max_iter, "max_iter")
    alpha, hyper = _check_prior(prior_precision, hyperprior)
    n, d = x.shape
    t1 = (y - 0.5) @ x
    mean, cov = np.zeros(d), np.eye(d) / alpha
    change = np.inf
    for it in range(1, max_iter + 1):
        xi = pg_mean(pg_parameters(x, cov + np.outer(mean, mean)))
        new_mean, new_cov, _ = _moments_from_nu(t1, alpha * np.eye(d) + (x.T * xi) @ x)
        change = max(np.abs(new_mean - mean).max(), np.abs(new_cov - cov).max())
        mean, cov = new_mean, new_cov
        if hyper is not None:
            new_alpha = _alpha_update(mean, cov, *hyper)
            change = max(change, abs(new_alpha - alpha) / alpha)
            alpha = float(new_alpha)
        if change < tol:
            return BLRPosterior(mean, cov, float(alpha), it, float(change))
    raise RuntimeError(f"full-batch VB did not converge in {max_iter} iterations "
                       f"(last change {change:.3g} >= tol {tol:.3g})")


# --------------------------------------------------------------------------- stochastic VIPS


@dataclass
class VIPSBLRRun:
    """Result of :func:`run_vips_blr`; leading axis = trials (T), then iterations (J).

    Attributes
    ----------
    mean : ndarray (T, d)
        Final mu of q(m).
    cov : ndarray (T, d, d)
        Final Sigma of q(m).
    alpha : ndarray (T,)
        Final <alpha>.
    trace : dict of ndarray
        Every iteration's released quantities (empty unless ``record_trace``):
        ``"s1"`` (T, J, d), the released s1~; ``"s2"`` (T, J, d(d+1)/2), the released
        s2~'s upper triangle (:func:`symmetric_from_triu`), before the PSD projection;
        ``"mean"`` (T, J, d) and ``"second_moment"`` (T, J, d(d+1)/2), the expected
        natural parameters output after the M-step (eq. 55: [mu ; -<m m^T>/2]);
        ``"alpha"`` (T, J); ``"n_projected"`` (T, J) negative eigenvalues of s2~ raised
        to ``psd_floor``; ``"rho"`` (J,) the step sizes.
    info : dict
        Parameters of the run, the per-coordinate noise stds and sensitivities.
    """

    mean: np.ndarray
    cov: np.ndarray
    alpha: np.ndarray
    trace: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)


def step_sizes(iterations: int, tau0: float, kappa: float) -> np.ndarray:
    """rho_t = (tau0 + t)^(-kappa), t = 1..J (Sec. 2.5.4; "kappa in (0.5, 1]").

    Raises ValueError on tau0 < 0, kappa outside (0.5, 1], or iterations < 1.
    """
    iterations = check_count(iterations, "iterations")
    if not (math.isfinite(tau0) and tau0 >= 0):
        raise ValueError(f"tau0 must be a finite number >= 0, got {tau0!r}")
    if not 0.5 < kappa <= 1:
        raise ValueError(f"kappa must lie in (0.5, 1] (VIPS Sec. 2.5.4), got {kappa!r}")
    return (tau0 + np.arange(1, iterations + 1)) ** (-float(kappa))


def run_vips_blr(x, y, *, batch_size: int, iterations: int, rng: np.random.Generator,
                 noise_multiplier: float = 0.0, tau0: float = 1.0, kappa: float = 0.7,
                 prior_precision: float = 1.0, hyperprior: tuple[float, float] | None = None,
                 sensitivity_bound: str = "paper", psd_floor: float = 1e-4,
                 n_trials: int = 1, init_mean=None, record_trace: bool = True) -> VIPSBLRRun:
    """Stochastic VB (sigma = 0) or VIPS (sigma > 0) for BLR: Algorithms 4-5, vectorised.

    Parameters
    ----------
    x : array (N, d)
        Training features, rows of L2 norm <= 1 (checked, never clipped).
    y : array (N,)
        Labels in {0, 1}.
    batch_size : int
        S, records per iteration, drawn without replacement (1 <= S <= N); the
        sampling rate is S / N.
    iterations : int
        J.
    rng : numpy.random.Generator
        Source of minibatches and noise (same seed, same run).
    noise_multiplier : float
        sigma >= 0; 0 gives the non-private stochastic VB (Algorithm 4 with sigma = 0).
        Noise stds are sigma * Delta_s1 and sigma * Delta_s2 (eqs. 56, 58).
    tau0, kappa : float
        Step sizes rho_t = (tau0 + t)^(-kappa) (:func:`step_sizes`).
    prior_precision : float
        alpha of p(m) = N(0, alpha^{-1} I) when ``hyperprior`` is None.
    hyperprior : (a0, b0) or None
        Gamma hyperprior: q(alpha) updated by eq. 53 after each mixing step.
    sensitivity_bound : {"paper", "tight"}
        Which (Delta_s1, Delta_s2) the noise is calibrated to (:func:`blr_sensitivities`,
        with S records).
    psd_floor : float
        Value negative eigenvalues of s2~ are raised to (only when sigma > 0).
    n_trials : int
        T independent runs (own minibatches and noise) advanced together.
    init_mean : array (d,) or (T, d), optional
        Initial mu (default 0); the initial covariance is alpha^{-1} I.
    record_trace : bool
        Keep every iteration's released quantities (memory ~ T J d^2 floats).

    Returns
    -------
    VIPSBLRRun

    Raises
    ------
    ValueError
        Bad data (labels not in {0, 1}, a row of norm > 1), S > N, or any bad parameter.
    """
    x, y = check_blr_data(x, y)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (N, d), got {x.shape}")
    n, d = x.shape
    s = check_count(batch_size, "batch_size")
    if s > n:
        raise ValueError(f"batch_size S = {s} exceeds the number of records N = {n}")
    rho = step_sizes(iterations, tau0, kappa)
    j_total = rho.size
    if isinstance(noise_multiplier, bool) or not (
            math.isfinite(float(noise_multiplier)) and float(noise_multiplier) >= 0):
        raise ValueError(f"noise_multiplier must be a finite number >= 0, got "
                         f"{noise_multiplier!r}")
    sigma = float(noise_multiplier)
    t = check_count(n_trials, "n_trials")
    alpha0, hyper = _check_prior(prior_precision, hyperprior)
    delta1, delta2 = blr_sensitivities(s, sensitivity_bound)
    std1, std2 = sigma * delta1, sigma * delta2
    if not (math.isfinite(psd_floor) and psd_floor >= 0):
        raise ValueError(f"psd_floor must be a finite number >= 0, got {psd_floor!r}")

    mean = np.zeros((t, d))
    if init_mean is not None:
        init = check_finite_array(init_mean, "init_mean")
        if init.shape not in ((d,), (t, d)):
            raise ValueError(f"init_mean must have shape ({d},) or ({t}, {d}), got {init.shape}")
        mean = mean + init
    alpha = np.full(t, alpha0)
    eye = np.eye(d)
    nu2 = alpha[:, None, None] * eye
    nu1 = np.einsum("tij,tj->ti", nu2, mean)
    mean, cov, mm = _moments_from_nu(nu1, nu2)

    trace: dict = {}
    if record_trace:
        p = d * (d + 1) // 2
        trace = {"s1": np.empty((t, j_total, d)), "s2": np.empty((t, j_total, p)),
                 "mean": np.empty((t, j_total, d)), "second_moment": np.empty((t, j_total, p)),
                 "alpha": np.empty((t, j_total)),
                 "n_projected": np.zeros((t, j_total), dtype=int), "rho": rho}
    for j in range(j_total):
        batch = rng.random((t, n)).argpartition(s - 1, axis=1)[:, :s]   # S without replacement
        s1, s2 = _statistics(x[batch], y[batch], mm)
        if sigma > 0:
            s1 = s1 + std1 * rng.standard_normal(s1.shape)
            s2 = s2 + symmetric_noise(rng, d, std2, size=(t,))
        if record_trace:
            trace["s1"][:, j] = s1
            trace["s2"][:, j] = triu_vector(s2)
        if sigma > 0:
            s2, n_proj = project_psd(s2, psd_floor)
            if record_trace:
                trace["n_projected"][:, j] = n_proj
        new1 = n * s1
        new2 = n * s2 + alpha[:, None, None] * eye
        nu1 = (1 - rho[j]) * nu1 + rho[j] * new1
        nu2 = (1 - rho[j]) * nu2 + rho[j] * new2
        mean, cov, mm = _moments_from_nu(nu1, nu2)
        if hyper is not None:
            alpha = _alpha_update(mean, cov, *hyper)
        if record_trace:
            trace["mean"][:, j] = mean
            trace["second_moment"][:, j] = triu_vector(mm)
            trace["alpha"][:, j] = alpha
    return VIPSBLRRun(
        mean=mean, cov=cov, alpha=alpha, trace=trace,
        info={"n_records": n, "batch_size": s, "sampling_rate": s / n,
              "iterations": j_total, "noise_multiplier": sigma, "tau0": tau0, "kappa": kappa,
              "sensitivity_bound": sensitivity_bound, "sensitivities": (delta1, delta2),
              "noise_std": (std1, std2), "psd_floor": psd_floor, "hyperprior": hyper,
              "prior_precision": alpha0},
    )


# --------------------------------------------------------------------------- prediction


def predict_proba(x, mean, cov) -> np.ndarray:
    """Posterior predictive p(y = 1 | x) by the probit approximation.

    sigmoid(kappa(s^2) x^T mu), kappa(s^2) = (1 + pi s^2 / 8)^(-1/2), s^2 = x^T Sigma x
    (MacKay 1992; Bishop 2006, eq. 4.153).

    Parameters
    ----------
    x : array (M, d)
    mean : array (..., d)
    cov : array (..., d, d)

    Returns
    -------
    ndarray (..., M)

    Raises
    ------
    ValueError
        Non-finite input or mismatched shapes.
    """
    x = check_finite_array(x, "x", ndim=2)
    mean = check_finite_array(mean, "mean")
    cov = check_finite_array(cov, "cov")
    d = x.shape[1]
    if mean.shape[-1] != d or cov.shape[-2:] != (d, d) or cov.shape[:-2] != mean.shape[:-1]:
        raise ValueError(f"x {x.shape}, mean {mean.shape} and cov {cov.shape} do not match")
    mu_a = np.einsum("mi,...i->...m", x, mean)
    var_a = np.einsum("mi,...ij,mj->...m", x, cov, x)
    if (var_a < -1e-12).any():
        raise ValueError("cov is not positive semi-definite: x^T Sigma x < 0")
    return expit(mu_a / np.sqrt(1.0 + np.pi * np.maximum(var_a, 0.0) / 8.0))


def auc_score(y, score) -> np.ndarray:
    """Area under the ROC curve (Mann-Whitney U / (n1 n0), ties counted 1/2).

    y : array (M,) in {0, 1}, both classes present. score : array (..., M).
    Returns ndarray (...). Raises ValueError on bad labels or a single class.
    """
    y = check_finite_array(y, "y", ndim=1)
    score = check_finite_array(score, "score")
    if score.shape[-1] != y.size:
        raise ValueError(f"score has {score.shape[-1]} entries per row, y has {y.size}")
    if ((y != 0) & (y != 1)).any():
        raise ValueError("auc_score needs labels in {0, 1}")
    n1 = int(y.sum())
    n0 = y.size - n1
    if n1 == 0 or n0 == 0:
        raise ValueError("AUC needs both classes in y")
    ranks = rankdata(score, axis=-1)
    return (ranks[..., y == 1].sum(axis=-1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def evaluate(x, y, mean, cov) -> dict[str, np.ndarray]:
    """Test accuracy (threshold 1/2) and AUC of the probit-approximated predictive.

    x (M, d), y (M,) in {0, 1}, mean (..., d), cov (..., d, d). Returns
    {"accuracy": (...), "auc": (...)}. Raises ValueError as its parts do.
    """
    prob = predict_proba(x, mean, cov)
    y = check_finite_array(y, "y", ndim=1)
    if y.size != prob.shape[-1]:
        raise ValueError(f"y has {y.size} labels for {prob.shape[-1]} test rows")
    return {"accuracy": ((prob > 0.5) == (y == 1)).mean(axis=-1), "auc": auc_score(y, prob)}
