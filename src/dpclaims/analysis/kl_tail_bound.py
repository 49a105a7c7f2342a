r"""DP-SEP Theorem 4.1: the KL tail bound between the SEP and DP-SEP posteriors.

The claim (DP-SEP v0, Sec. 4, Theorem 4.1; v1, Sec. 4 with proof in Appendix B.1)
---------------------------------------------------------------------------------
"Denote the posterior distribution of DP-SEP (Algorithm 3) by
$p := \mathcal{N}(\boldsymbol{\mu}_p, \Sigma_p)$. Denote the posterior distribution of
SEP (Algorithm 2) by $q := \mathcal{N}(\boldsymbol{\mu}_q, \Sigma_q)$, where
$\boldsymbol{\mu}_p = \boldsymbol{\mu}_q + \mathbf{e}$ and $\Sigma_p = \Sigma_q + \mathbf{E}$,
where each entry of the vector \mathbf{e} is iid drawn from $\mathcal{N}(0, \sigma_1^2)$ and
the upper triangular part of the matrix \mathbf{E} is iid drawn $\mathcal{N}(0, \sigma_2^2)$
and the lower triangular part is copied from the upper triangular part for symmetry.

Then, the probability that the KL divergence between the two is bounded by

$$\begin{aligned} & P(D_{kl}[q||p] \geq a) \\
& \leq \frac{d}{2a} \log \left(1 + \sqrt{2v(Z) \log(2d)} \right) - \frac{d}{2a} \\
& \quad + \frac{d}{2a} (\sigma_1^2 \text{Tr}[\Sigma_q^{-1}] + 1)
\frac{A + \tau + \sqrt{2v(Z) \log(2d)} - 1}{A\tau} \end{aligned}$$

for any non-negative value $a > 0$ and $\tau, A > 0$ such that
$\tau < 1 + \lambda_{\min}(\Sigma_q^{-1}\mathbf{E}) < A$.

Here the matrix variance statistic is denoted by $v(Z) = \|\sum_k \sigma_2^2 A_k A_k^T\|$,
where the norm is spectral norm and $Z := \sum_{k=1}^{\frac{d(d+1)}{2}} e_k \sigma_2 A_k$
where e_k is a standard normal Gaussian random variable and A_k has shuffled elements of
Σ_q^{-1} , such that $\sum_{k=1}^{\frac{d(d+1)}{2}} e_k \sigma_2 A_k = \Sigma_q^{-1}\mathbf{E}$."

The proof (v0 supplement Sec. 8.1, eqs. 5-22; v1 Appendix B.1, eqs. 13-29) is
Markov's inequality (eq. 5) applied to the closed-form KL (eq. 6)

    D_kl[q||p] = 1/2 (log|I + Σ_q^{-1}E| + e^T Σ_p^{-1} e + Tr[Σ_p^{-1} Σ_q] - d),

followed by: eq. 9 "≤ 1/2 E_E[d log(1 + λ_max(Σ_q^{-1}E))], by assuming λ_max > 0";
eq. 10 Jensen; eq. 14 "E_E[λ_max(Z)] ≤ sqrt(2v(Z) log(2d))" "due to Theorem 4.1.1. in
[Tropp, 2015]"; eq. 15 "E_E[λ_min(Z)] ≥ -sqrt(2v(Z) log(2d))"; eq. 17
"Tr[(I + Σ_q^{-1}E)^{-1} Σ_q^{-1}] ≤ Tr[(I + Σ_q^{-1}E)^{-1}] Tr[Σ_q^{-1}]"; eq. 20
"≤ d E_E(1/λ_min(I + Σ_q^{-1}E))"; the chord inequality "for a bounded random variable
X, where a ≤ X ≤ A, E[1/X] ≤ (A+a-E(X))/(Aa)" and eq. 21
"E_E(1/λ_min(I + Σ_q^{-1}E)) ≤ (A + τ + sqrt(2v(Z) log(2d)) - 1)/(Aτ), due to eq. 15".

Readings implemented here
-------------------------
Matrix variance statistic (``reading`` argument; :data:`V_READINGS`):

``"as-printed"``
    v = ||σ_2² Σ_k A_k A_k^T|| with A_k = Σ_q^{-1} S_k (S_k defined in
    :func:`matrix_series_basis`), used in sqrt(2 v log(2d)) as printed. Closed form:
    Σ_k A_k A_k^T = d Σ_q^{-2}, so v = d σ_2² / λ_min(Σ_q)².
``"tropp-rectangular"``
    The cited result, Tropp (2015) Thm. 4.1.1, is for a general (rectangular,
    non-Hermitian) Gaussian series Z = Σ_k γ_k B_k and bounds
    E||Z|| ≤ sqrt(2 v log(d_1 + d_2)) with v = max(||Σ B_k B_k^*||, ||Σ B_k^* B_k||).
    Here d_1 = d_2 = d (hence the log(2d)) and B_k = σ_2 A_k. Closed form:
    Σ_k A_k^T A_k = Σ_k S_k Σ_q^{-2} S_k = Tr(Σ_q^{-2}) I + Σ_q^{-2} - Diag(Σ_q^{-2}).
    Since Z = Σ_q^{-1}E is similar to a symmetric matrix, λ_max(Z) ≤ ||Z|| and eq. 14
    follows rigorously under this reading.

    For this particular series the two readings coincide: for any PSD M,
    ||Σ_k S_k M S_k|| = Tr M + λ_max(M - Diag M) ≤ d ||M||. (Take the unit top
    eigenvector x of M - Diag M: x^T M x - Σ_i M_ii x_i² + Σ_i M_ii
    ≤ ||M|| + Σ_i M_ii (1 - x_i²) ≤ ||M|| + (d - 1) ||M||, as M_ii ≤ ||M||.) With
    M = Σ_q^{-2} this gives ||Σ A_k^T A_k|| ≤ ||Σ A_k A_k^T||, so the max is the printed
    term. The objection "the printed v omits Σ B_k^* B_k" is therefore harmless here.
``"hermitian"``
    Not the printed formula. Z is similar to the symmetric series
    W = Σ_q^{-1/2} E Σ_q^{-1/2} = Σ_k e_k H_k, H_k = σ_2 Σ_q^{-1/2} S_k Σ_q^{-1/2}, with the
    same eigenvalues. Tropp (2015) Thm. 4.6.1 (Hermitian case) gives
    E λ_max(W) ≤ sqrt(2 v_herm log d), v_herm = ||Σ_k H_k²||
    = σ_2² ||Σ_q^{-1/2}(Tr(Σ_q^{-1}) I + Σ_q^{-1} - Diag(Σ_q^{-1}))Σ_q^{-1/2}||.
    Under this reading every sqrt(2 v(Z) log(2d)) of the theorem is replaced by
    sqrt(2 v_herm log d) (see :func:`expected_lambda_max_bound`).

    One can show sqrt(2 v_herm log d) ≤ sqrt(2 v_printed log(2d)) for every Σ_q:
    with P = Σ_q^{-1}, p_1 = λ_max(P), ||P - Diag(P)|| ≤ p_1 (as -Diag(P) ≤ P - Diag(P) ≤ P)
    and Tr P ≤ d p_1, so v_herm ≤ (d + 1) σ_2² p_1², v_printed = d σ_2² p_1², and
    (d + 1) log d ≤ d log(2d) iff log d ≤ d log 2. Hence eq. 14 *as printed* (a bound on
    E λ_max, not on E||Z||) is true, though not by the theorem the paper cites.

Tail (``tail reading``; :data:`TAIL_READINGS`), used by :func:`kl_tail_study`:

``"unconditional"``
    P(KL[q||p] ≥ a) over all noise draws, with KL = +inf where Σ_p = Σ_q + E is not
    positive definite ("Otherwise, ∞", supplement Sec. 8.1). The hypothesis
    "τ < 1 + λ_min(Σ_q^{-1}E) < A ... for any E" cannot hold surely for Gaussian E.
    E[KL] = +inf whenever P(Σ_p not PD) > 0, and even conditionally on Σ_p PD
    (λ_min(I + Σ_q^{-1}E) has a positive density at 0, so E[1/λ_min] diverges), so
    Markov's inequality gives nothing; for large a, P(KL ≥ a) ≥ P(Σ_p not PD) while the
    bound decays like 1/a.
``"conditional"``
    P(KL[q||p] ≥ a | τ < 1 + λ_min(Σ_q^{-1}E) < A), the reading under which the proof's
    Markov step has a finite expectation. Eqs. 14-15 are still unconditional statements,
    so the proof does not justify this reading either; eq. 21 needs
    E[1 + λ_min | event] ≥ 1 - sqrt(2 v log 2d), which fails when A ≤ 1 - sqrt(2 v log 2d).
    If moreover s + A + τ < 1 (s = sqrt(2 v log 2d)), the printed RHS is negative (then
    s < 1, so log(1 + s) - 1 < 0, and the last term is negative too) while the event has
    positive probability for Gaussian E, so this reading is false for some admissible
    (τ, A). With a wide (τ, A) it is not contradicted by simulation.

References
----------
DP-SEP v0 (``papers/dpsep_full_v0.txt``), Sec. 4 Theorem 4.1 and supplement Sec. 8.1,
eqs. 5-22. DP-SEP v1 (``papers/dpsep_extended_v1.txt``), Theorem 4.1 and Appendix B.1,
eqs. 13-29 (same statement; v1 eq. 29 drops the factor 1/2 of v0 eq. 22).
J. A. Tropp (2015), An Introduction to Matrix Concentration Inequalities, Thm. 4.1.1
(rectangular Gaussian series) and Thm. 4.6.1 (Hermitian Gaussian series).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats
from scipy.linalg import solve_triangular

from dpclaims.analysis.intervals import clopper_pearson
from dpclaims.analysis.validation import check_count, check_finite_array, check_positive

__all__ = [
    "CLAIM_ID",
    "TAIL_READINGS",
    "V_READINGS",
    "KLTailStudy",
    "clopper_pearson",
    "expected_lambda_max_bound",
    "kl_q_p",
    "kl_tail_bound",
    "kl_tail_study",
    "loglog_slope",
    "matrix_series_basis",
    "matrix_variance_statistic",
    "moment_noise_summary",
    "natural_noise_moments",
    "NaturalNoiseDraws",
    "quantile_interval",
    "sample_noise",
]

CLAIM_ID = "dpsep/thm41-kl-tail-bound"
#: Readings of the matrix variance statistic v(Z) (see the module docstring).
V_READINGS = ("as-printed", "tropp-rectangular", "hermitian")
#: Readings of the tail probability P(KL ≥ a) (see the module docstring).
TAIL_READINGS = ("unconditional", "conditional")

_SYMMETRY_RTOL = 1e-10


# ----------------------------------------------------------------------------- validation


def _check_spd(matrix, name: str) -> np.ndarray:
    """Return ``matrix`` as a symmetrised (d, d) float array; raise unless symmetric PD."""
    out = check_finite_array(matrix, name, ndim=2)
    d = out.shape[0]
    if out.shape != (d, d) or d < 1:
        raise ValueError(f"{name} must be a square (d, d) matrix, got shape {out.shape}")
    scale = max(float(np.max(np.abs(out))), np.finfo(float).tiny)
    asym = float(np.max(np.abs(out - out.T)))
    if asym > _SYMMETRY_RTOL * scale:
        raise ValueError(f"{name} must be symmetric; max |M - M^T| = {asym!r}")
    out = 0.5 * (out + out.T)
    try:
        np.linalg.cholesky(out)
    except np.linalg.LinAlgError:
        lam_min = float(np.linalg.eigvalsh(out)[0])
        raise ValueError(
            f"{name} must be positive definite; smallest eigenvalue is {lam_min!r}"
        ) from None
    return out


def _check_reading(reading: str) -> str:
    if reading not in V_READINGS:
        raise ValueError(f"reading must be one of {V_READINGS}, got {reading!r}")
    return reading


def _check_dim(d, sigma_q: np.ndarray) -> int:
    if isinstance(d, bool) or not float(d).is_integer() or int(d) < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    if int(d) != sigma_q.shape[0]:
        raise ValueError(f"d = {d!r} does not match sigma_q of shape {sigma_q.shape}")
    return int(d)


def _check_tau_A(tau, A) -> tuple[float, float]:
    tau = check_positive(tau, "tau")
    A = check_positive(A, "A")
    if not tau < A:
        raise ValueError(f"tau must be < A, got tau = {tau!r} and A = {A!r}")
    return tau, A


# ------------------------------------------------------------------ matrix Gaussian series


def matrix_series_basis(sigma_q_inv) -> np.ndarray:
    r"""The matrices A_k of the Gaussian series Σ_q^{-1}E = Σ_k e_k σ_2 A_k (eqs. 12-13).

    With K = d(d+1)/2 upper-triangular index pairs (i, j), i ≤ j, in the order of
    ``numpy.triu_indices(d)`` (row by row), S_k is the symmetric 0/1 matrix with ones at
    (i, j) and (j, i), and A_k = Σ_q^{-1} S_k: the paper's "shuffled elements of
    Σ_q^{-1}" (column i of A_k is column j of Σ_q^{-1} and vice versa, other columns 0).
    If E_{ij} = σ_2 e_k for the k-th pair, then E = σ_2 Σ_k e_k S_k and
    Σ_q^{-1}E = Σ_k e_k σ_2 A_k exactly.

    Parameters
    ----------
    sigma_q_inv : array_like, shape (d, d)
        Σ_q^{-1}, the SEP posterior precision (symmetric positive definite).

    Returns
    -------
    ndarray, shape (K, d, d), K = d(d+1)/2
        A_k = Σ_q^{-1} S_k.

    Raises
    ------
    ValueError
        If ``sigma_q_inv`` is not a finite symmetric positive definite matrix.

    References
    ----------
    DP-SEP v0 supplement Sec. 8.1, eqs. 12-13; Theorem 4.1 ("A_k has shuffled elements of
    Σ_q^{-1}").
    """
    p = _check_spd(sigma_q_inv, "sigma_q_inv")
    return p @ _symmetric_units(p.shape[0])


def _symmetric_units(d: int) -> np.ndarray:
    """S_k, shape (K, d, d): ones at (i, j) and (j, i) for the k-th pair of triu_indices(d)."""
    iu, ju = np.triu_indices(d)
    s = np.zeros((iu.size, d, d))
    k = np.arange(iu.size)
    s[k, iu, ju] = 1.0
    s[k, ju, iu] = 1.0
    return s


def matrix_variance_statistic(sigma_q_inv, sigma_2: float, reading: str = "as-printed") -> float:
    r"""Matrix variance statistic v(Z) of Z = Σ_q^{-1}E under one reading.

    Parameters
    ----------
    sigma_q_inv : array_like, shape (d, d)
        Σ_q^{-1} (symmetric positive definite), in inverse units of Σ_q.
    sigma_2 : float
        Standard deviation of each upper-triangular entry of E (units of Σ_q), > 0.
    reading : {"as-printed", "tropp-rectangular", "hermitian"}
        ``"as-printed"``: ||Σ_k σ_2² A_k A_k^T|| = d σ_2² ||Σ_q^{-1}||².
        ``"tropp-rectangular"``: max(||Σ_k σ_2² A_k A_k^T||, ||Σ_k σ_2² A_k^T A_k||), the
        variance of Tropp (2015) Thm. 4.1.1 for a non-Hermitian series.
        ``"hermitian"``: ||Σ_k H_k²||, H_k = σ_2 Σ_q^{-1/2} S_k Σ_q^{-1/2} (Thm. 4.6.1 applied
        to the symmetric matrix similar to Z). The norm is the spectral norm throughout.

    Returns
    -------
    float
        v(Z), in squared units of Σ_q^{-1}E (dimensionless when E has the units of Σ_q).

    Raises
    ------
    ValueError
        If ``sigma_q_inv`` is not symmetric PD, ``sigma_2`` is not finite and > 0, or
        ``reading`` is unknown.

    Notes
    -----
    For Σ_q = I all three readings equal d σ_2²: Σ_k S_k² = d I because S_k² = e_i e_i^T for
    a diagonal pair and e_i e_i^T + e_j e_j^T for an off-diagonal one, so each index i
    appears once as a diagonal pair and d - 1 times in an off-diagonal pair.

    References
    ----------
    DP-SEP v0 Theorem 4.1 and supplement eq. 14; Tropp (2015) Thms. 4.1.1 and 4.6.1.
    """
    p = _check_spd(sigma_q_inv, "sigma_q_inv")
    s2 = check_positive(sigma_2, "sigma_2") ** 2
    _check_reading(reading)
    units = _symmetric_units(p.shape[0])
    if reading == "hermitian":
        lam, vec = np.linalg.eigh(p)
        root = (vec * np.sqrt(lam)) @ vec.T
        h = root @ units @ root
        return float(s2 * np.linalg.norm(np.sum(h @ h, axis=0), 2))
    basis = p @ units
    row = float(np.linalg.norm(np.sum(basis @ np.swapaxes(basis, -1, -2), axis=0), 2))
    if reading == "as-printed":
        return s2 * row
    col = float(np.linalg.norm(np.sum(np.swapaxes(basis, -1, -2) @ basis, axis=0), 2))
    return s2 * max(row, col)


def expected_lambda_max_bound(sigma_q_inv, sigma_2: float, reading: str = "as-printed") -> float:
    r"""Right-hand side of eq. 14, the bound on E_E[λ_max(Σ_q^{-1}E)] under one reading.

    Parameters
    ----------
    sigma_q_inv : array_like, shape (d, d)
        Σ_q^{-1} (symmetric positive definite).
    sigma_2 : float
        Standard deviation of the upper-triangular entries of E, > 0.
    reading : {"as-printed", "tropp-rectangular", "hermitian"}
        See :func:`matrix_variance_statistic`.

    Returns
    -------
    float
        sqrt(2 v(Z) log(2d)) for ``"as-printed"`` and ``"tropp-rectangular"`` (eq. 14 as
        printed); sqrt(2 v_herm log d) for ``"hermitian"`` (Tropp Thm. 4.6.1; 0 when d = 1).

    Raises
    ------
    ValueError
        As :func:`matrix_variance_statistic`.

    References
    ----------
    DP-SEP v0 supplement eq. 14: "E_E[λ_max(Z)] ≤ sqrt(2v(Z) log(2d))".
    """
    v = matrix_variance_statistic(sigma_q_inv, sigma_2, reading)
    d = np.asarray(sigma_q_inv).shape[0]
    dim = d if reading == "hermitian" else 2 * d
    return math.sqrt(2.0 * v * math.log(dim))


# ---------------------------------------------------------------------------- the bound


def _bound_numerator(sigma_q, sigma_1, s, tau, A) -> float:
    """a times the theorem's RHS: the proof's bound on E_e E_E[D_kl[q||p]] (eqs. 11, 16-22)."""
    d = sigma_q.shape[0]
    trace_inv = float(np.trace(np.linalg.inv(sigma_q)))
    return (
        0.5 * d * math.log1p(s)
        - 0.5 * d
        + 0.5 * d * (sigma_1**2 * trace_inv + 1.0) * (A + tau + s - 1.0) / (A * tau)
    )


def kl_tail_bound(
    a,
    d: int,
    sigma_q,
    sigma_1: float,
    sigma_2: float,
    tau: float,
    A: float,
    reading: str = "as-printed",
):
    r"""The right-hand side of DP-SEP Theorem 4.1, exactly as printed.

    .. math::

        \frac{d}{2a} \log\left(1 + \sqrt{2v(Z) \log(2d)}\right) - \frac{d}{2a}
        + \frac{d}{2a} (\sigma_1^2 \text{Tr}[\Sigma_q^{-1}] + 1)
        \frac{A + \tau + \sqrt{2v(Z) \log(2d)} - 1}{A\tau}

    with sqrt(2 v(Z) log(2d)) replaced by :func:`expected_lambda_max_bound` under
    ``reading`` (which is the printed expression except for ``"hermitian"``).

    Parameters
    ----------
    a : float or array_like of shape (m,)
        KL threshold(s) in nats, each > 0.
    d : int
        Dimension of θ; must equal ``sigma_q.shape[0]``.
    sigma_q : array_like, shape (d, d)
        Σ_q, the SEP posterior covariance (symmetric positive definite).
    sigma_1 : float
        Standard deviation of each entry of the mean noise e (units of μ), > 0.
    sigma_2 : float
        Standard deviation of each upper-triangular entry of E (units of Σ_q), > 0.
    tau, A : float
        The theorem's constants, 0 < tau < A (dimensionless, bounds on
        1 + λ_min(Σ_q^{-1}E)).
    reading : {"as-printed", "tropp-rectangular", "hermitian"}
        Reading of v(Z); see :func:`matrix_variance_statistic`.

    Returns
    -------
    float or ndarray of shape (m,)
        The raw bound: it is not clipped to [0, 1] and may be negative or exceed 1.
        A float if ``a`` is a scalar.

    Raises
    ------
    ValueError
        If some a ≤ 0 or is not finite, tau or A is not > 0, tau ≥ A, sigma_1 or sigma_2 is
        not > 0, ``d`` does not match ``sigma_q``, ``sigma_q`` is not finite symmetric
        positive definite, or ``reading`` is unknown. The message names the value.

    References
    ----------
    DP-SEP v0 Sec. 4, Theorem 4.1; supplement Sec. 8.1 eqs. 5-22.
    """
    a_arr = np.asarray(a, dtype=float)
    for value in np.atleast_1d(a_arr).ravel():
        check_positive(value, "a")
    tau, A = _check_tau_A(tau, A)
    sigma_1 = check_positive(sigma_1, "sigma_1")
    sigma_2 = check_positive(sigma_2, "sigma_2")
    sigma_q = _check_spd(sigma_q, "sigma_q")
    _check_dim(d, sigma_q)
    _check_reading(reading)
    s = expected_lambda_max_bound(np.linalg.inv(sigma_q), sigma_2, reading)
    out = _bound_numerator(sigma_q, sigma_1, s, tau, A) / a_arr
    return float(out) if out.ndim == 0 else out


# ------------------------------------------------------------------- noise and exact KL


def sample_noise(
    rng: np.random.Generator, n: int, d: int, sigma_1: float, sigma_2: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Draw n copies of Theorem 4.1's noise (e, E) in one vectorised call.

    e has iid N(0, σ_1²) entries; the upper triangle of E (diagonal included) is iid
    N(0, σ_2²) and the lower triangle is copied from it. The upper-triangular entries are
    drawn as an (n, K) array in ``numpy.triu_indices(d)`` order, so E[m] = σ_2 Σ_k g_{mk} S_k
    with the S_k of :func:`matrix_series_basis`.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (consumed: first n·d normals for e, then n·K for E).
    n : int
        Number of draws, >= 1.
    d : int
        Dimension, >= 1.
    sigma_1, sigma_2 : float
        Noise standard deviations of e and of the entries of E, > 0.

    Returns
    -------
    e : ndarray, shape (n, d)
    E : ndarray, shape (n, d, d), symmetric

    Raises
    ------
    ValueError
        If n or d is not an integer >= 1 or a sigma is not > 0.

    References
    ----------
    DP-SEP v0 Theorem 4.1 (noise model); DP-SEP Algorithm 3.
    """
    e, upper = _draw_noise(rng, n, d, sigma_1, sigma_2)
    return e, _symmetric_from_upper(upper, d)


def _draw_noise(rng: np.random.Generator, n: int, d: int, sigma_1: float, sigma_2: float):
    """:func:`sample_noise`'s draws before E is built: e (n, d) and upper(E) (n, K).

    The same normals in the same order (n·d for e, then n·K for the upper triangle in
    ``numpy.triu_indices(d)`` order); raises as :func:`sample_noise`.
    """
    n, d = check_count(n, "n"), check_count(d, "d")
    sigma_1 = check_positive(sigma_1, "sigma_1")
    sigma_2 = check_positive(sigma_2, "sigma_2")
    e = sigma_1 * rng.standard_normal((n, d))
    upper = rng.standard_normal((n, d * (d + 1) // 2))
    upper *= sigma_2  # in place: the same products as sigma_2 * draws
    return e, upper


def _symmetric_from_upper(upper: np.ndarray, d: int) -> np.ndarray:
    """E (n, d, d) with upper(E) = ``upper`` (n, K) and the lower triangle copied from it.

    One gather (``numpy.take`` of the position of (min(i, j), max(i, j)) in the
    ``triu_indices(d)`` order for every entry (i, j)) instead of zeros and two
    scatters: the same values, about half the time at d = 20.
    """
    return np.take(upper, _upper_position(d), axis=1).reshape(upper.shape[0], d, d)


@functools.lru_cache(maxsize=64)
def _upper_position(d: int) -> np.ndarray:
    """(d·d,) intp: entry (i, j) of a d x d matrix -> its pair's index in triu_indices(d).

    Cached (one per d); read-only.
    """
    iu, ju = np.triu_indices(d)
    pos = np.empty((d, d), dtype=np.intp)
    pos[iu, ju] = np.arange(iu.size)
    pos[ju, iu] = np.arange(iu.size)
    pos.flags.writeable = False
    return pos.ravel()


#: Bytes of one (block, d, d) array in :func:`_spectral`: the block's temporaries stay in
#: the cache (a whole chunk's are 16 MB each). Per-draw results do not depend on it.
_BLOCK_BYTES = 2**20


def _spectral(chol_inv: np.ndarray, e: np.ndarray, E: np.ndarray | None = None, *,
              upper: np.ndarray | None = None, eigenvectors: bool = False):
    """Eigenvalues (n, d) ascending of Σ_q^{-1}E and KL[q||p] (n,), +inf where not PD.

    Σ_q = L L^T; Σ_q^{-1}E is similar to W = L^{-1} E L^{-T} (symmetric). With λ the
    eigenvalues of W and u = L^{-1} e:
    log|I + Σ_q^{-1}E| = Σ log(1 + λ_i), Tr[Σ_p^{-1}Σ_q] = Σ 1/(1 + λ_i),
    e^T Σ_p^{-1} e = u^T (I + W)^{-1} u.
    The eigenvalues are reported, so they come from ``eigvalsh`` (no eigenvectors), and
    the quadratic form from one batched LU solve: 1.4x the draws per second of ``eigh``
    with eigenvectors at d = 10 (issue 23, ``benchmarks/audit_throughput.py``). Where a
    PD matrix is singular to working precision the solve raises, and the whole call is
    done as with ``eigenvectors=True`` (the form before issue 23, which the benchmark
    times as its baseline): W = V diag(λ) V^T from ``eigh`` and
    e^T Σ_p^{-1} e = Σ (V^T u)_i² / (1 + λ_i).

    E is given whole (n, d, d), or as ``upper`` (n, K), its upper triangle in
    ``triu_indices`` order (:func:`_draw_noise`). The draws are processed in blocks of
    about :data:`_BLOCK_BYTES` per (block, d, d) array; every step is per draw (one LAPACK
    or BLAS call per matrix, row-wise sums), so a draw's numbers do not depend on the
    blocks. The solve runs on the PD draws only (a draw that is not PD has KL = +inf).
    """
    n, d = e.shape
    u = e @ chol_inv.T
    step = max(1, _BLOCK_BYTES // (8 * d * d))
    lam, kl = np.empty((n, d)), np.empty(n)

    def every_block(with_eigenvectors: bool):
        for start in range(0, n, step):
            block = slice(start, min(start + step, n))
            lam[block], kl[block] = _spectral_block(
                chol_inv, u[block], _block_E(E, upper, block, d), with_eigenvectors)
        return lam, kl

    if not eigenvectors:
        try:
            return every_block(False)
        except np.linalg.LinAlgError:
            pass
    return every_block(True)


def _block_E(E, upper, block: slice, d: int) -> np.ndarray:
    """Rows ``block`` of E, from E itself or built from its upper triangle."""
    return E[block] if upper is None else _symmetric_from_upper(upper[block], d)


def _spectral_block(chol_inv, u, E, eigenvectors: bool):
    """:func:`_spectral` on one block: u = L^{-1} e (b, d), E (b, d, d) (not modified)."""
    d = chol_inv.shape[0]
    w = chol_inv @ E @ chol_inv.T
    sym = w + np.swapaxes(w, -1, -2)
    sym *= 0.5  # the same values as 0.5 * (w + w^T), one temporary fewer
    w = sym
    if eigenvectors:
        lam, vec = np.linalg.eigh(w)
        pd = lam[:, 0] > -1.0
    else:
        lam = np.linalg.eigvalsh(w)
        pd = lam[:, 0] > -1.0
        quad = np.zeros(u.shape[0])
        if pd.any():
            # I + W on the PD draws (w is not used again); the solve raises where one is
            # singular to working precision
            m = w[pd] if not pd.all() else w
            m.reshape(m.shape[0], d * d)[:, :: d + 1] += 1.0
            up = u[pd]
            quad[pd] = np.einsum("ni,ni->n", up, np.linalg.solve(m, up[..., None])[..., 0])
    one_plus = np.where(pd[:, None], 1.0 + lam, 1.0)
    if eigenvectors:
        quad = np.sum(np.einsum("nji,nj->ni", vec, u) ** 2 / one_plus, axis=1)
    kl = 0.5 * (
        np.sum(np.log(one_plus), axis=1)
        + quad
        + np.sum(1.0 / one_plus, axis=1)
        - d
    )
    return lam, np.where(pd, kl, np.inf)


def _chol_inv(sigma_q: np.ndarray) -> np.ndarray:
    chol = np.linalg.cholesky(sigma_q)
    return solve_triangular(chol, np.eye(chol.shape[0]), lower=True)


def kl_q_p(sigma_q, e, E) -> np.ndarray:
    r"""KL[q||p] in closed form for q = N(μ_q, Σ_q), p = N(μ_q + e, Σ_q + E), batched.

    Supplement eq. 6:
    "D_kl[q||p] = 1/2 E_e E_E(log|I + Σ_q^{-1}E| + e^T Σ_p^{-1} e + Tr[Σ_p^{-1}Σ_q] - d)",
    here without the expectations, evaluated per draw through the eigenvalues of
    Σ_q^{-1}E (computed on the similar symmetric matrix L^{-1} E L^{-T}, Σ_q = L L^T).

    Parameters
    ----------
    sigma_q : array_like, shape (d, d)
        Σ_q (symmetric positive definite).
    e : array_like, shape (n, d)
        Mean noise draws.
    E : array_like, shape (n, d, d)
        Symmetric covariance noise draws.

    Returns
    -------
    ndarray, shape (n,)
        KL[q||p] in nats; +inf where Σ_p = Σ_q + E is not positive definite
        ("Otherwise, ∞", supplement Sec. 8.1).

    Raises
    ------
    ValueError
        If ``sigma_q`` is not finite symmetric PD, shapes do not match, or e / E contain
        non-finite values.

    References
    ----------
    DP-SEP v0 supplement Sec. 8.1, eqs. 6-7.
    """
    sigma_q = _check_spd(sigma_q, "sigma_q")
    d = sigma_q.shape[0]
    e = check_finite_array(e, "e", ndim=2)
    E = check_finite_array(E, "E", ndim=3)
    if e.shape[1] != d or E.shape[1:] != (d, d) or E.shape[0] != e.shape[0]:
        raise ValueError(
            f"e of shape {e.shape} and E of shape {E.shape} do not match sigma_q of shape "
            f"{sigma_q.shape}; expected (n, {d}) and (n, {d}, {d})"
        )
    return _spectral(_chol_inv(sigma_q), e, E)[1]


# ---------------------------------------------------------------------- Monte Carlo study


@dataclass(frozen=True)
class KLTailStudy:
    r"""Monte Carlo evidence on DP-SEP Theorem 4.1 for one (Σ_q, σ_1, σ_2).

    Arrays indexed by the a grid have shape (m,). Dicts keyed by a v(Z) reading
    (:data:`V_READINGS`) hold the bound's quantities under that reading.

    Attributes
    ----------
    sigma_q : ndarray (d, d)
    sigma_1, sigma_2 : float
    a_grid : ndarray (m,)
        KL thresholds, nats.
    n_draws : int
        Main Monte Carlo draws used for the tails.
    seed : dict
        ``{"entropy": ..., "spawn_key": [...]}`` of the root ``SeedSequence``.
    chunk_size : int
        Draws per chunk; chunk c uses child seed spawn_key + (1, c).
    alpha : float
        Family-wise significance of the intervals (see ``ci_level``).
    ci_level : float
        Level of each two-sided Clopper-Pearson interval: 1 - alpha / (2 m) when
        ``simultaneous`` (Bonferroni over the a grid and both tails), else 1 - alpha.
    simultaneous : bool
    tau, A : float
        Constants used in the bound and in the conditioning event.
    tau_A_source : str
        ``"given"``, or ``"pilot"``: chosen on ``n_pilot`` independent pilot draws
        (child seed spawn_key + (0,)) as 0.999 · min and 1.001 · max of 1 + λ_min(Σ_q^{-1}E)
        over the pilot's positive definite draws. These are data-dependent (on data not
        reused for the tails) and the most favourable choice for the theorem's hypothesis:
        the narrowest interval that still holds on every PD pilot draw.
    n_pilot : int
    v, lambda_max_bound : dict[str, float]
        v(Z) and the eq. 14 right-hand side per reading.
    expected_kl_bound : dict[str, float]
        a · bound: the proof's bound on E[KL[q||p]] (eqs. 11, 16-22), per reading.
    eq21_bound : dict[str, float]
        (A + τ + s - 1)/(Aτ), eq. 21's bound on E[1/λ_min(I + Σ_q^{-1}E)], per reading.
    bound : dict[str, ndarray (m,)]
        Theorem 4.1's RHS per reading (raw, may be < 0 or > 1).
    count_unconditional, tail_unconditional, ci_unconditional
        Draws with KL ≥ a (KL = +inf counted), their fraction, and (m, 2) CP interval.
    n_conditional : int
        Draws in the event τ < 1 + λ_min(Σ_q^{-1}E) < A.
    count_conditional, tail_conditional, ci_conditional
        Same, among the n_conditional draws (NaN / (0, 1) if there are none).
    violated_unconditional, violated_conditional : dict[str, ndarray (m,) of bool]
        Certificate: the CP lower bound of the tail exceeds the bound. The chance that
        any entry is True while the theorem's bound holds (for that reading of the tail)
        is at most alpha / 2 when ``simultaneous`` (only the lower side matters).
    frac_not_pd : float
        Fraction of draws where I + Σ_q^{-1}E (equivalently Σ_p) is not PD.
    frac_lambda_max_nonpositive : float
        Fraction with λ_max(Σ_q^{-1}E) ≤ 0 (eq. 9 "by assuming λ_max > 0").
    frac_condition_fails : float
        Fraction outside τ < 1 + λ_min(Σ_q^{-1}E) < A.
    mean_lambda_max, se_lambda_max : float
        Empirical E[λ_max(Σ_q^{-1}E)] over all draws and its standard error (eq. 14 check).
    mean_lambda_max_conditional, mean_lambda_min_conditional : float
        E[λ_max | event] and E[λ_min | event]: eqs. 14-15 are used under the event in the
        conditional reading but proved only unconditionally.
    mean_inv_lambda_min_pd : float
        Mean of 1/λ_min(I + Σ_q^{-1}E) over PD draws: an estimate of a quantity that is
        +inf in truth (positive density at 0), so it grows with n_draws.
    mean_inv_lambda_min_conditional : float
        Same over the event draws (compare with ``eq21_bound``).
    mean_kl_conditional : float
        Mean KL over the event draws (compare with ``expected_kl_bound``); an estimate.
    """

    sigma_q: np.ndarray
    sigma_1: float
    sigma_2: float
    a_grid: np.ndarray
    n_draws: int
    seed: dict
    chunk_size: int
    alpha: float
    ci_level: float
    simultaneous: bool
    tau: float
    A: float
    tau_A_source: str
    n_pilot: int
    v: dict
    lambda_max_bound: dict
    expected_kl_bound: dict
    eq21_bound: dict
    bound: dict
    count_unconditional: np.ndarray
    tail_unconditional: np.ndarray
    ci_unconditional: np.ndarray
    n_conditional: int
    count_conditional: np.ndarray
    tail_conditional: np.ndarray
    ci_conditional: np.ndarray
    violated_unconditional: dict
    violated_conditional: dict
    frac_not_pd: float
    frac_lambda_max_nonpositive: float
    frac_condition_fails: float
    mean_lambda_max: float
    se_lambda_max: float
    mean_lambda_max_conditional: float
    mean_lambda_min_conditional: float
    mean_inv_lambda_min_pd: float
    mean_inv_lambda_min_conditional: float
    mean_kl_conditional: float
    claim: str = field(default=CLAIM_ID)

    def to_dict(self) -> dict:
        """JSON-able dict (lists and floats; NaN and ±inf become None)."""
        return {name: _jsonable(getattr(self, name)) for name in self.__dataclass_fields__}


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def _child(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """Deterministic child of ``root`` (does not mutate it, unlike ``spawn``)."""
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + key)


def _spectral_chunks(root, key, n, chunk_size, chol_inv, sigma_1, sigma_2):
    """Spectra of ``n`` noise draws, ``chunk_size`` at a time, each chunk its own stream.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        Root seed; chunk ``c`` draws from the child ``(*key, c)``.
    key : tuple of int
        The study's stream key (0 pilot, 1 main).
    n, chunk_size : int
        Total draws and draws per chunk.
    chol_inv : ndarray (d, d)
        Inverse Cholesky factor of Σ_q (:func:`_chol_inv`).
    sigma_1, sigma_2 : float
        Noise standard deviations.

    Returns
    -------
    iterator of (ndarray (k, d), ndarray (k,))
        Per chunk, the ascending eigenvalues of Σ_q^{-1}E and KL[q||p] (:func:`_spectral`).
    """
    d = chol_inv.shape[0]
    for c, start in enumerate(range(0, n, chunk_size)):
        rng = np.random.default_rng(_child(root, *key, c))
        e, upper = _draw_noise(rng, min(chunk_size, n - start), d, sigma_1, sigma_2)
        yield _spectral(chol_inv, e, upper=upper)


#: A generous multiple of d·ε for the rounding of the computed spectra (see
#: :func:`_pilot_spectra`).
_ROUNDING = 1e3


def _pilot_spectra(root, n_pilot, chunk_size, chol_inv, sigma_q, sigma_1, sigma_2,
                   keep_candidates: bool):
    """The pilot's spectra, and the draws that may have Σ_q + E positive definite.

    Parameters
    ----------
    root, n_pilot, chunk_size, chol_inv, sigma_1, sigma_2
        As :func:`_spectral_chunks`, with key (0,): the pilot's stream.
    sigma_q : ndarray (d, d)
        Σ_q (its condition number bounds the rounding below).
    keep_candidates : bool
        Whether to keep the candidates (else ``candidates`` is None).

    Returns
    -------
    spectra : list of (ndarray (k, d), None)
        Per chunk, the ascending eigenvalues of Σ_q^{-1}E (for :func:`_pilot_tau_A`).
    candidates : tuple (x (c,), upper (c, K)) or None
        1 + λ_min(Σ_q^{-1}E) and upper(E) of every draw except those with
        1 + λ_min ≤ -1/2: such a draw has λ_min(Σ_q + E) ≤ λ_min(Σ_q) (1 + λ_min) ≤
        -λ_min(Σ_q)/2 (for M = I + W with λ_min(M) < 0, λ_min(L M L^T) ≤ λ_min(M) λ_min(Σ_q)),
        so ``eigvalsh(Σ_q + E)`` finds it not PD whenever the rounding of both computed
        spectra, at most about d·ε·κ(Σ_q)·(1 + max |λ|) each, is far below 1/4. Where
        :data:`_ROUNDING` times that is not below 1/4, every draw is kept.
    """
    d = chol_inv.shape[0]
    cond = float(np.linalg.cond(sigma_q))
    spectra, xs, uppers = [], [], []
    for c, start in enumerate(range(0, n_pilot, chunk_size)):
        rng = np.random.default_rng(_child(root, 0, c))
        e, upper = _draw_noise(rng, min(chunk_size, n_pilot - start), d, sigma_1, sigma_2)
        lam = _spectral(chol_inv, e, upper=upper)[0]
        spectra.append((lam, None))
        if keep_candidates:
            x = 1.0 + lam[:, 0]
            size = float(np.max(np.abs(lam[:, [0, -1]])))
            safe = _ROUNDING * d * np.finfo(float).eps * cond * (1.0 + size) < 0.25
            keep = x > -0.5 if safe else np.ones(x.size, dtype=bool)
            xs.append(x[keep])
            uppers.append(upper[keep])
    if not keep_candidates:
        return spectra, None
    return spectra, (np.concatenate(xs), np.concatenate(uppers))


def _any_sigma_p_pd(sigma_q, candidates, first: int = 8) -> bool:
    """Whether some candidate draw has ``eigvalsh(Σ_q + E)`` smallest eigenvalue > 0.

    The candidates most likely PD (largest 1 + λ_min(Σ_q^{-1}E)) are tried first, the
    rest only if none of them is; ``eigvalsh`` works matrix by matrix, so each draw's
    answer is the one it gets in any batch.

    Parameters
    ----------
    sigma_q : ndarray (d, d)
    candidates : tuple (x (c,), upper (c, K))
        From :func:`_pilot_spectra`.
    first : int
        How many to try first.
    """
    x, upper = candidates
    d = sigma_q.shape[0]
    order = np.argsort(-x, kind="stable")

    def some_pd(rows) -> bool:
        if rows.size == 0:
            return False
        E = _symmetric_from_upper(upper[rows], d)
        return bool(np.any(np.linalg.eigvalsh(sigma_q + E)[:, 0] > 0))

    return some_pd(order[:first]) or some_pd(order[first:])


def _pilot_tau_A(chunks, n_pilot: int) -> tuple[float, float]:
    """Theorem 4.1's tau and A from a pilot sample: just outside its range of λ_min + 1.

    Parameters
    ----------
    chunks : iterator of (ndarray, ndarray)
        The pilot's spectra (:func:`_spectral_chunks`).
    n_pilot : int
        Pilot draws, for the error message.

    Returns
    -------
    tuple of float
        (0.999 * smallest, 1.001 * largest) positive 1 + λ_min over the pilot.

    Raises
    ------
    ValueError
        If no pilot draw has a positive definite Σ_p.
    """
    low, high = np.inf, -np.inf
    for lam, _ in chunks:
        x = 1.0 + lam[:, 0]
        x = x[x > 0]
        if x.size:
            low, high = min(low, float(x.min())), max(high, float(x.max()))
    if not np.isfinite(low):
        raise ValueError(
            f"no positive definite Sigma_p among {n_pilot} pilot draws; give tau and A"
        )
    return 0.999 * low, 1.001 * high


class _TailSums:
    """Running counts and sums of the main sample, chunk by chunk (order of sums kept).

    Parameters
    ----------
    m : int
        Number of KL thresholds.
    """

    def __init__(self, m: int):
        self.count_unc = np.zeros(m, dtype=np.int64)
        self.count_cond = np.zeros(m, dtype=np.int64)
        self.n_cond = self.n_not_pd = self.n_lmax_nonpos = self.n_pd = 0
        self.sum_lmax = self.sum_lmax2 = self.sum_lmax_cond = self.sum_lmin_cond = 0.0
        self.sum_inv_pd = self.sum_inv_cond = self.sum_kl_cond = 0.0

    def add(self, lam, kl, tau: float, A: float, a_grid: np.ndarray) -> None:
        """Add one chunk's spectra ``lam`` (k, d) and divergences ``kl`` (k,)."""
        x = 1.0 + lam[:, 0]
        pd = x > 0
        event = (tau < x) & (x < A)
        exceed = kl[:, None] >= a_grid[None, :]
        self.count_unc += exceed.sum(axis=0)
        self.count_cond += exceed[event].sum(axis=0)
        self.n_cond += int(event.sum())
        self.n_pd += int(pd.sum())
        self.n_not_pd += int((~pd).sum())
        lmax = lam[:, -1]
        self.n_lmax_nonpos += int((lmax <= 0).sum())
        self.sum_lmax += float(lmax.sum())
        self.sum_lmax2 += float((lmax**2).sum())
        self.sum_lmax_cond += float(lmax[event].sum())
        self.sum_lmin_cond += float(lam[event, 0].sum())
        self.sum_inv_pd += float((1.0 / x[pd]).sum())
        self.sum_inv_cond += float((1.0 / x[event]).sum())
        self.sum_kl_cond += float(kl[event].sum())


def _bounds_by_reading(sigma_q, sigma_1, sigma_2, tau, A, a_grid, ci_unc, ci_cond) -> dict:
    """Theorem 4.1's constants and bound under every v(Z) reading, and its violations.

    Parameters
    ----------
    sigma_q : ndarray (d, d)
        Σ_q.
    sigma_1, sigma_2, tau, A : float
        The theorem's noise scales and constants.
    a_grid : ndarray (m,)
        KL thresholds.
    ci_unc, ci_cond : ndarray (m, 2)
        Clopper-Pearson intervals on the unconditional and conditional tails.

    Returns
    -------
    dict
        The :class:`KLTailStudy` fields ``v``, ``lambda_max_bound``,
        ``expected_kl_bound``, ``eq21_bound``, ``bound``, ``violated_unconditional``
        and ``violated_conditional``, each a dict keyed by reading.
    """
    sigma_q_inv = np.linalg.inv(sigma_q)
    v, s_bound, ekl, eq21, bound, viol_unc, viol_cond = {}, {}, {}, {}, {}, {}, {}
    for reading in V_READINGS:
        v[reading] = matrix_variance_statistic(sigma_q_inv, sigma_2, reading)
        s = expected_lambda_max_bound(sigma_q_inv, sigma_2, reading)
        s_bound[reading] = s
        ekl[reading] = _bound_numerator(sigma_q, sigma_1, s, tau, A)
        eq21[reading] = (A + tau + s - 1.0) / (A * tau)
        bound[reading] = ekl[reading] / a_grid
        viol_unc[reading] = ci_unc[:, 0] > bound[reading]
        viol_cond[reading] = ci_cond[:, 0] > bound[reading]
    return {
        "v": v,
        "lambda_max_bound": s_bound,
        "expected_kl_bound": ekl,
        "eq21_bound": eq21,
        "bound": bound,
        "violated_unconditional": viol_unc,
        "violated_conditional": viol_cond,
    }


def _check_study_args(sigma_q, sigma_1, sigma_2, a_grid, n_draws, alpha, chunk_size):
    """Validated inputs of :func:`kl_tail_study`, ``chunk_size`` defaulted.

    Parameters
    ----------
    sigma_q, sigma_1, sigma_2, a_grid, n_draws, alpha, chunk_size
        As :func:`kl_tail_study`.

    Returns
    -------
    tuple
        (sigma_q, sigma_1, sigma_2, a_grid, n_draws, alpha, chunk_size), checked.

    Raises
    ------
    ValueError
        As :func:`kl_tail_study`, for these arguments.
    """
    sigma_q = _check_spd(sigma_q, "sigma_q")
    d = sigma_q.shape[0]
    sigma_1 = check_positive(sigma_1, "sigma_1")
    sigma_2 = check_positive(sigma_2, "sigma_2")
    a_grid = check_finite_array(a_grid, "a_grid", ndim=1)
    if a_grid.size == 0:
        raise ValueError("a_grid must contain at least one threshold, got an empty array")
    for value in a_grid:
        check_positive(value, "a")
    n_draws = check_count(n_draws, "n_draws")
    alpha = check_positive(alpha, "alpha")
    if not alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if chunk_size is None:
        chunk_size = max(1, 2**21 // (d * d))
    chunk_size = check_count(chunk_size, "chunk_size")
    return sigma_q, sigma_1, sigma_2, a_grid, n_draws, alpha, chunk_size


def _sample_summary(sums: _TailSums, n_draws: int, m: int) -> dict:
    """The :class:`KLTailStudy` fields that are frequencies and means of the main sample.

    Parameters
    ----------
    sums : _TailSums
        The main sample's counts and sums.
    n_draws : int
        Main draws.
    m : int
        Number of thresholds.

    Returns
    -------
    dict
        Tails, fractions and means (NaN where their conditioning set is empty).
    """
    nan = float("nan")
    n_cond = sums.n_cond

    def ratio(num: float, den: int) -> float:
        return num / den if den else nan

    mean_lmax = sums.sum_lmax / n_draws
    var_lmax = max(sums.sum_lmax2 / n_draws - mean_lmax**2, 0.0)
    return {
        "tail_unconditional": sums.count_unc / n_draws,
        "tail_conditional": sums.count_cond / n_cond if n_cond else np.full(m, nan),
        "frac_not_pd": sums.n_not_pd / n_draws,
        "frac_lambda_max_nonpositive": sums.n_lmax_nonpos / n_draws,
        "frac_condition_fails": 1.0 - n_cond / n_draws,
        "mean_lambda_max": mean_lmax,
        "se_lambda_max": math.sqrt(var_lmax / n_draws),
        "mean_lambda_max_conditional": ratio(sums.sum_lmax_cond, n_cond),
        "mean_lambda_min_conditional": ratio(sums.sum_lmin_cond, n_cond),
        "mean_inv_lambda_min_pd": ratio(sums.sum_inv_pd, sums.n_pd),
        "mean_inv_lambda_min_conditional": ratio(sums.sum_inv_cond, n_cond),
        "mean_kl_conditional": ratio(sums.sum_kl_cond, n_cond),
    }


def kl_tail_study(
    sigma_q,
    sigma_1: float,
    sigma_2: float,
    a_grid,
    n_draws: int,
    seed,
    tau: float | None = None,
    A: float | None = None,
    alpha: float = 0.05,
    *,
    simultaneous: bool = True,
    n_pilot: int | None = None,
    chunk_size: int | None = None,
    tau_A_if_not_pd: tuple[float, float] | None = None,
) -> KLTailStudy:
    r"""Monte Carlo check of DP-SEP Theorem 4.1 and of the proof's intermediate steps.

    Draws (e, E) from the theorem's noise model (:func:`sample_noise`), computes
    KL[q||p] exactly (:func:`kl_q_p`) and the eigenvalues of Σ_q^{-1}E, in chunks of
    ``chunk_size`` draws (one vectorised numpy call per chunk), and compares the
    empirical tails with the theorem's bound under every v(Z) reading.

    Parameters
    ----------
    sigma_q : array_like, shape (d, d)
        Σ_q, symmetric positive definite.
    sigma_1, sigma_2 : float
        Noise standard deviations, > 0.
    a_grid : array_like, shape (m,)
        KL thresholds in nats, each > 0.
    n_draws : int
        Main Monte Carlo draws, >= 1.
    seed : int or numpy.random.SeedSequence
        Root seed; the same seed (and chunk_size) gives the same result.
    tau, A : float or None
        The theorem's constants. Both None: chosen on an independent pilot sample (see
        :class:`KLTailStudy` ``tau_A_source``). Give both or neither.
    alpha : float
        Family-wise significance in (0, 1) of the Clopper-Pearson intervals.
    simultaneous : bool, keyword-only
        If True (default) each two-sided interval has level 1 - alpha / (2 m)
        (Bonferroni over the m thresholds and the two tails); else 1 - alpha each.
    n_pilot : int or None, keyword-only
        Pilot draws for tau / A (default ``n_draws``); ignored when they are given.
    chunk_size : int or None, keyword-only
        Draws per vectorised chunk (default about 2**21 / d² to bound memory).
    tau_A_if_not_pd : (float, float) or None, keyword-only
        With tau and A not given: the (tau, A) to use (``tau_A_source`` ``"given"``,
        ``n_pilot`` 0, as if given) when no pilot draw has Σ_p = Σ_q + E positive
        definite by ``numpy.linalg.eigvalsh(Σ_q + E)`` (smallest eigenvalue > 0), instead
        of raising. The pilot is drawn and decomposed once for both uses.

    Returns
    -------
    KLTailStudy

    Raises
    ------
    ValueError
        On invalid Σ_q, sigmas, a_grid (empty, non-finite or ≤ 0), counts, alpha, only one of
        tau / A given, tau ≥ A, or a pilot with no positive definite draw (without
        ``tau_A_if_not_pd``, or when ``eigvalsh(Σ_q + E)`` finds one but no draw has
        1 + λ_min(Σ_q^{-1}E) > 0).

    References
    ----------
    DP-SEP v0 Sec. 4 Theorem 4.1 and supplement Sec. 8.1 (eqs. 5-22); Clopper & Pearson
    (1934) via ``statsmodels.stats.proportion.proportion_confint(method="beta")``.
    """
    sigma_q, sigma_1, sigma_2, a_grid, n_draws, alpha, chunk_size = _check_study_args(
        sigma_q, sigma_1, sigma_2, a_grid, n_draws, alpha, chunk_size
    )
    if isinstance(seed, np.random.SeedSequence):
        root = seed
    else:
        root = np.random.SeedSequence(seed)
    chol_inv = _chol_inv(sigma_q)

    def chunks(n: int, *key: int):
        return _spectral_chunks(root, key, n, chunk_size, chol_inv, sigma_1, sigma_2)

    if (tau is None) != (A is None):
        raise ValueError(f"give both tau and A or neither, got tau = {tau!r} and A = {A!r}")
    if tau is None:
        n_pilot = n_draws if n_pilot is None else check_count(n_pilot, "n_pilot")
        spectra, candidates = _pilot_spectra(root, n_pilot, chunk_size, chol_inv, sigma_q,
                                             sigma_1, sigma_2, tau_A_if_not_pd is not None)
        if candidates is not None and not _any_sigma_p_pd(sigma_q, candidates):
            (tau, A), n_pilot, source = tau_A_if_not_pd, 0, "given"
        else:
            tau, A = _pilot_tau_A(spectra, n_pilot)
            source = "pilot"
    else:
        n_pilot, source = 0, "given"
    tau, A = _check_tau_A(tau, A)

    m = a_grid.size
    sums = _TailSums(m)
    for lam, kl in chunks(n_draws, 1):
        sums.add(lam, kl, tau, A, a_grid)

    n_intervals = 2 * m if simultaneous else 1
    alpha_each = alpha / n_intervals
    ci_unc = clopper_pearson(sums.count_unc, n_draws, alpha_each)
    ci_cond = clopper_pearson(sums.count_cond, sums.n_cond, alpha_each)
    return KLTailStudy(
        sigma_q=sigma_q,
        sigma_1=sigma_1,
        sigma_2=sigma_2,
        a_grid=a_grid,
        n_draws=n_draws,
        seed={"entropy": root.entropy, "spawn_key": list(root.spawn_key)},
        chunk_size=chunk_size,
        alpha=alpha,
        ci_level=1.0 - alpha_each,
        simultaneous=bool(simultaneous),
        tau=tau,
        A=A,
        tau_A_source=source,
        n_pilot=int(n_pilot),
        count_unconditional=sums.count_unc,
        ci_unconditional=ci_unc,
        n_conditional=sums.n_cond,
        count_conditional=sums.count_cond,
        ci_conditional=ci_cond,
        **_bounds_by_reading(sigma_q, sigma_1, sigma_2, tau, A, a_grid, ci_unc, ci_cond),
        **_sample_summary(sums, n_draws, m),
    )



# ------------------------------------------------- DP-SEP's own noise, mapped to moments


@dataclass(frozen=True)
class NaturalNoiseDraws:
    r"""Moments of p when DP-SEP's noise is added to q's natural parameters (n draws).

    Attributes
    ----------
    pd : ndarray (n,) of bool
        Whether the noised precision Λ_p = Σ_q^{-1} + N_Λ is positive definite (else p is
        not a distribution and its moments are undefined).
    e : ndarray (n, d)
        μ_p − μ_q; NaN on draws that are not PD (never dropped: ``pd`` marks them).
    E : ndarray (n, d, d)
        Σ_p − Σ_q; NaN on draws that are not PD.
    lam : ndarray (n, d)
        Eigenvalues of Σ_q^{-1}E ascending (NaN where not PD): Theorem 4.1's λ(Σ_q^{-1}E)
        for this noise.
    kl : ndarray (n,)
        KL[q||p] in nats; +inf where not PD.
    """

    pd: np.ndarray
    e: np.ndarray
    E: np.ndarray
    lam: np.ndarray
    kl: np.ndarray


def natural_noise_moments(sigma_q, mu_q, noise) -> NaturalNoiseDraws:
    r"""Map noise on q's natural parameters to moment noise (e, E) and KL[q||p], batched.

    DP-SEP Algorithm 3 step 8 adds noise to the natural parameters, "θ̃_new = θ_new + n
    where n ~ N(0, σ² Δ² I)"; Theorem 4.1 instead models noise on the moments,
    "μ_p = μ_q + e and Σ_p = Σ_q + E". This function gives the exact map between them
    for q = N(μ_q, Σ_q): with θ = (h = Σ_q^{-1}μ_q, upper triangle of Λ = Σ_q^{-1}) in the
    layout of :func:`dpclaims.analysis.gaussian.flatten_natural` and noise (n_h, N_Λ)
    (N_Λ mirrored to the lower triangle),

        Λ_p = Λ + N_Λ,  Σ_p = Λ_p^{-1},  μ_p = Σ_p (h + n_h),
        e = μ_p − μ_q = Λ_p^{-1} (n_h − N_Λ μ_q),  E = Σ_p − Σ_q.

    With Σ_q = L L^T and M = L^T Λ_p L = V diag(m) V^T: Σ_p = L V diag(1/m) V^T L^T, the
    eigenvalues of Σ_q^{-1}E are 1/m − 1, and

        KL[q||p] = 1/2 (Σ m_i − d − Σ log m_i + r^T Λ_p^{-1} r),  r = n_h − N_Λ μ_q.

    To first order E ≈ −Σ_q N_Λ Σ_q and e ≈ Σ_q (n_h − N_Λ μ_q): the moment noise is
    neither iid across entries nor Gaussian (see :func:`moment_noise_summary`).

    Parameters
    ----------
    sigma_q : array_like, shape (d, d)
        Σ_q of the non-private posterior, symmetric positive definite.
    mu_q : array_like, shape (d,)
        μ_q.
    noise : array_like, shape (n, p), p = d + d(d+1)/2
        Natural-parameter noise draws in ``flatten_natural`` layout (h first, then the
        upper triangle of the precision row by row).

    Returns
    -------
    NaturalNoiseDraws

    Raises
    ------
    ValueError
        If ``sigma_q`` is not finite symmetric PD, or shapes do not match, or inputs are
        not finite.

    References
    ----------
    DP-SEP v0 Algorithm 3 step 8; Sec. 4 Theorem 4.1 (moment-noise model); supplement
    Sec. 8.1 eq. 6 (closed-form KL).
    """
    sigma_q = _check_spd(sigma_q, "sigma_q")
    d = sigma_q.shape[0]
    mu_q = check_finite_array(mu_q, "mu_q", ndim=1)
    noise = check_finite_array(noise, "noise", ndim=2)
    p = d + d * (d + 1) // 2
    if mu_q.shape != (d,) or noise.shape[1] != p:
        raise ValueError(
            f"mu_q of shape {mu_q.shape} and noise of shape {noise.shape} do not match "
            f"sigma_q of shape {sigma_q.shape}; expected ({d},) and (n, {p})"
        )
    n = noise.shape[0]
    iu, ju = np.triu_indices(d)
    n_h = noise[:, :d]
    n_lam = np.zeros((n, d, d))
    n_lam[:, iu, ju] = noise[:, d:]
    n_lam[:, ju, iu] = noise[:, d:]
    chol = np.linalg.cholesky(sigma_q)
    m_mat = np.eye(d) + np.swapaxes(chol, 0, 1) @ n_lam @ chol
    m_mat = 0.5 * (m_mat + np.swapaxes(m_mat, -1, -2))
    m, vec = np.linalg.eigh(m_mat)
    pd = m[:, 0] > 0
    m_safe = np.where(pd[:, None], m, 1.0)
    r = n_h - n_lam @ mu_q
    coef = np.einsum("nji,nj->ni", vec, r @ chol)  # V^T L^T r
    kl = 0.5 * (np.sum(m_safe - 1.0 - np.log(m_safe), axis=1) + np.sum(coef**2 / m_safe, axis=1))
    kl = np.where(pd, kl, np.inf)
    # Σ_p − Σ_q = L V diag(1/m − 1) V^T L^T ; e = Λ_p^{-1} r = L V diag(1/m) V^T L^T r.
    lv = chol @ vec
    E = np.einsum("nik,nk,njk->nij", lv, 1.0 / m_safe - 1.0, lv)
    e = np.einsum("nik,nk->ni", lv, coef / m_safe)
    nan = np.nan
    E = np.where(pd[:, None, None], E, nan)
    e = np.where(pd[:, None], e, nan)
    lam = np.where(pd[:, None], (1.0 / m_safe - 1.0)[:, ::-1], nan)
    return NaturalNoiseDraws(pd=pd, e=e, E=E, lam=lam, kl=kl)


def moment_noise_summary(e, E) -> dict:
    r"""How far the moment noise (e, E) is from Theorem 4.1's iid Gaussian model.

    Theorem 4.1 assumes "each entry of the vector e is iid drawn from N(0, σ_1²) and the
    upper triangular part of the matrix E is iid drawn N(0, σ_2²)". This summarises draws
    of (e, E) (e.g. from :func:`natural_noise_moments`, PD draws only) by the pooled
    standard deviations σ̂_1, σ̂_2 (the theorem's σ_1, σ_2 matched in second moment), robust
    scales (1.4826 · median absolute deviation, equal to the std for a Gaussian), the ratio
    of off-diagonal to diagonal std of E (1 under the theorem), the largest absolute
    correlation between distinct entries of (e, upper(E)) (0 under the theorem), the
    excess kurtosis of the pooled entries (0 under the theorem) and the Kolmogorov-Smirnov
    distance of the pooled standardised entries from N(0, 1) with its asymptotic p-value
    (the entries of one draw are pooled and the scale is estimated from them, so the
    p-value is only indicative).

    Parameters
    ----------
    e : array_like, shape (n, d)
    E : array_like, shape (n, d, d), symmetric

    Returns
    -------
    dict
        ``sigma_1``, ``sigma_2``, ``robust_sigma_1``, ``robust_sigma_2``,
        ``offdiag_over_diag_std`` (NaN for d = 1), ``max_abs_correlation`` (NaN if there
        is only one entry), ``kurtosis_e``, ``kurtosis_E``, ``ks_e``, ``ks_E``,
        ``ks_pvalue_e``, ``ks_pvalue_E``, ``n``.

    Raises
    ------
    ValueError
        If inputs are not finite, have the wrong shapes, or n < 2.

    References
    ----------
    DP-SEP v0 Sec. 4, Theorem 4.1 (noise model).
    """
    e = check_finite_array(e, "e", ndim=2)
    E = check_finite_array(E, "E", ndim=3)
    n, d = e.shape
    if E.shape != (n, d, d):
        raise ValueError(f"E of shape {E.shape} does not match e of shape {e.shape}")
    if n < 2:
        raise ValueError(f"need at least 2 draws, got n = {n}")
    iu, ju = np.triu_indices(d)
    upper = E[:, iu, ju]
    diag = iu == ju

    def pooled_std(x):
        return float(np.sqrt(np.mean(x**2)))

    def robust(x):
        return float(1.4826 * np.median(np.abs(x - np.median(x))))

    s1, s2 = pooled_std(e), pooled_std(upper)
    # The asymptotic Kolmogorov distribution (kstwobign at D sqrt(n); scipy's one-sample
    # "auto" always takes the exact kstwo): the p-value is indicative only (dependent
    # entries pooled, the scale estimated from them), and the exact one, at p-values near
    # 1e-50, took 0.18 s a call, 3.5 of make audit's CPU-s (the Thm. 4.1 study's 20 calls,
    # profiled 2026-11-28)
    ks_e = stats.kstest(e.ravel() / s1, "norm", method="asymp") if s1 > 0 else None
    ks_E = stats.kstest(upper.ravel() / s2, "norm", method="asymp") if s2 > 0 else None
    joint = np.concatenate([e, upper], axis=1)
    nan = float("nan")
    if joint.shape[1] > 1:
        with np.errstate(invalid="ignore", divide="ignore"):
            corr = np.corrcoef(joint, rowvar=False)
        off = corr[~np.eye(corr.shape[0], dtype=bool)]
        max_corr = float(np.nanmax(np.abs(off))) if np.isfinite(off).any() else nan
    else:
        max_corr = nan
    return {
        "n": int(n),
        "sigma_1": s1,
        "sigma_2": s2,
        "robust_sigma_1": robust(e.ravel()),
        "robust_sigma_2": robust(upper.ravel()),
        "offdiag_over_diag_std": (pooled_std(upper[:, ~diag]) / pooled_std(upper[:, diag])
                                  if d > 1 else nan),
        "max_abs_correlation": max_corr,
        "kurtosis_e": float(stats.kurtosis(e.ravel())),
        "kurtosis_E": float(stats.kurtosis(upper.ravel())),
        "ks_e": float(ks_e.statistic) if ks_e is not None else nan,
        "ks_E": float(ks_E.statistic) if ks_E is not None else nan,
        "ks_pvalue_e": float(ks_e.pvalue) if ks_e is not None else nan,
        "ks_pvalue_E": float(ks_E.pvalue) if ks_E is not None else nan,
    }


# -------------------------------------------------------- quantiles and scaling slopes


def quantile_interval(samples, q: float, alpha: float):
    r"""Exact distribution-free confidence interval for the q-quantile, per row.

    For m iid draws with order statistics X_(1) ≤ ... ≤ X_(m), the count B of draws
    ≤ ξ_q is Binomial(m, q) (for a continuous law; with atoms, e.g. KL = +inf, the
    coverage only grows). Then X_(l) ≤ ξ_q with probability P(B ≥ l) and X_(u) ≥ ξ_q with
    probability ≥ P(B ≤ u − 1). l − 1 is the largest k with P(B ≤ k) ≤ α/2 and
    u − 1 = F_B^{-1}(1 − α/2), so [X_(l), X_(u)] covers ξ_q with probability ≥ 1 − α: a
    certificate, not an estimate. Where no such order statistic exists the end is ∓inf.

    Parameters
    ----------
    samples : array_like, shape (k, m) or (m,)
        Draws (±inf allowed, NaN not), one row per population.
    q : float
        Quantile level in (0, 1).
    alpha : float
        Two-sided miscoverage in (0, 1) for each row (Bonferroni over rows is the
        caller's choice).

    Returns
    -------
    point, low, high : ndarray, shape (k,) (or floats for 1-d input)
        The sample quantile X_(ceil(q m)) and the interval ends.

    Raises
    ------
    ValueError
        If samples contain NaN or are empty, or q, alpha are outside (0, 1).

    References
    ----------
    Thompson (1936); David & Nagaraja, Order Statistics (2003), Sec. 7.1.
    """
    arr = np.asarray(samples, dtype=float)
    one = arr.ndim == 1
    arr = np.atleast_2d(arr)
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"samples must have shape (k, m) with m >= 1, got {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"samples contain {int(np.isnan(arr).sum())} NaN value(s)")
    q = _check_open_unit(q, "q")
    alpha = _check_open_unit(alpha, "alpha")
    m = arr.shape[1]
    srt = np.sort(arr, axis=1)
    cdf = stats.binom.cdf(np.arange(m + 1), m, q)
    below = np.nonzero(cdf <= alpha / 2)[0]
    lo_idx = int(below[-1]) if below.size else -1  # 0-based index l - 1 of X_(l)
    hi_idx = int(np.searchsorted(cdf, 1.0 - alpha / 2))  # 0-based index u - 1
    point = srt[:, max(math.ceil(q * m), 1) - 1]
    low = srt[:, lo_idx] if lo_idx >= 0 else np.full(arr.shape[0], -np.inf)
    high = srt[:, hi_idx] if hi_idx < m else np.full(arr.shape[0], np.inf)
    if one:
        return float(point[0]), float(low[0]), float(high[0])
    return point, low, high


def _check_open_unit(value, name: str) -> float:
    out = float(value)
    if not 0.0 < out < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {value!r}")
    return out


def _ols_slope(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """OLS slope of y (..., k) on x (k,), along the last axis."""
    xc = x - x.mean()
    return np.sum(xc * (y - y.mean(axis=-1, keepdims=True)), axis=-1) / np.sum(xc**2)


def loglog_slope(n_values, samples, seed, q: float = 0.5, alpha: float = 0.05,
                 n_boot: int = 2000) -> dict:
    r"""Log-log slope of a quantile (and of the mean) of a positive quantity against N.

    Used for the remark after DP-SEP Theorem 4.1, "the divergence between the private
    posterior and non-private posterior distributions scales with 1/N with fixed ε, δ"
    (slope −1 on a log-log plot).

    Three intervals, labelled by what they are:

    ``certified_endpoint_slope``
        From :func:`quantile_interval` at every N (level 1 − alpha / k each, Bonferroni
        over the k values of N, so all k intervals hold together with probability
        ≥ 1 − alpha): the slope between the first and last N lies in
        [(log lo_k − log hi_1)/(log N_k − log N_1), (log hi_k − log lo_1)/(...)]. A
        certificate for the average log-log slope of the quantile over [N_1, N_k].
    ``certified_local_slopes``
        The same for each consecutive pair (N_i, N_{i+1}), under the same simultaneous
        intervals.
    ``bootstrap_ci``
        Percentile interval (level 1 − alpha) of the OLS slope of log quantile on log N,
        from the exact bootstrap law of the sample quantile (the bootstrap q-quantile of
        m draws is X_(J) with P(J ≤ j) = P(Binomial(m, j/m) ≥ ceil(q m)), sampled by
        inversion): an estimate.
    ``mean_slope`` / ``mean_ci``
        OLS slope of log mean on log N and a parametric-bootstrap interval (means drawn
        from N(mean, se²)); only when every mean is finite and positive (else NaN): an
        estimate.

    Parameters
    ----------
    n_values : array_like, shape (k,)
        The N values, > 0, strictly increasing, k ≥ 2.
    samples : array_like, shape (k, m)
        Draws of the quantity (e.g. KL, nats) at each N; > 0 or +inf, no NaN.
    seed : int or numpy.random.SeedSequence
    q : float
        Quantile level (0.5: the median).
    alpha : float
        Family-wise miscoverage of the certified intervals; level of the bootstrap ones.
    n_boot : int
        Bootstrap replicates.

    Returns
    -------
    dict
        ``slope`` (OLS on sample quantiles), ``bootstrap_ci``, ``certified_endpoint_slope``
        (low, high), ``certified_local_slopes`` (k − 1, 2), ``quantile``, ``quantile_low``,
        ``quantile_high`` (k,), ``mean``, ``mean_se``, ``mean_slope``, ``mean_ci``.

    Raises
    ------
    ValueError
        On bad shapes, non-increasing or non-positive N, NaN or non-positive samples, or
        q / alpha outside (0, 1).
    """
    n_values = check_finite_array(n_values, "n_values", ndim=1)
    arr = np.asarray(samples, dtype=float)
    k = n_values.size
    if arr.ndim != 2 or arr.shape[0] != k or k < 2 or arr.shape[1] < 2:
        raise ValueError(f"samples must have shape ({k}, m >= 2) with k >= 2, got {arr.shape}")
    if np.any(n_values <= 0) or np.any(np.diff(n_values) <= 0):
        raise ValueError(f"n_values must be > 0 and strictly increasing, got {n_values!r}")
    if np.isnan(arr).any() or np.any(arr <= 0):
        raise ValueError("samples must be > 0 (or +inf) without NaN")
    q = _check_open_unit(q, "q")
    alpha = _check_open_unit(alpha, "alpha")
    n_boot = check_count(n_boot, "n_boot", minimum=10)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rng = np.random.default_rng(root)
    m = arr.shape[1]
    x = np.log(n_values)
    point, low, high = quantile_interval(arr, q, alpha / k)
    with np.errstate(divide="ignore"):
        lp, ll, lh = np.log(point), np.log(low), np.log(high)
    slope = float(_ols_slope(x, lp)) if np.all(np.isfinite(lp)) else float("nan")

    def pair(i, j):
        dx = x[j] - x[i]
        return [float((ll[j] - lh[i]) / dx), float((lh[j] - ll[i]) / dx)]

    endpoint = pair(0, k - 1)
    local = [pair(i, i + 1) for i in range(k - 1)]
    # exact bootstrap of the sample quantile: J = index of X*_(r), r = ceil(q m)
    r = max(math.ceil(q * m), 1)
    law = stats.binom.sf(r - 1, m, np.arange(1, m + 1) / m)  # P(J <= j), j = 1..m
    srt = np.sort(arr, axis=1)
    j = np.minimum(np.searchsorted(law, rng.random((n_boot, k))), m - 1)
    boot_q = srt[np.arange(k)[None, :], j]
    with np.errstate(divide="ignore", invalid="ignore"):
        boot_slopes = _ols_slope(x, np.log(boot_q))
    finite = np.isfinite(boot_slopes)
    boot_ci = (np.quantile(boot_slopes[finite], [alpha / 2, 1 - alpha / 2]).tolist()
               if finite.all() else [float("nan"), float("nan")])
    mean = np.mean(arr, axis=1)
    se = np.std(arr, axis=1, ddof=1) / math.sqrt(m) if np.all(np.isfinite(mean)) else (
        np.full(k, np.nan))
    if np.all(np.isfinite(mean)) and np.all(mean > 0):
        mean_slope = float(_ols_slope(x, np.log(mean)))
        draws = mean[None, :] + se[None, :] * rng.standard_normal((n_boot, k))
        ok = np.all(draws > 0, axis=1)
        ms = _ols_slope(x, np.log(np.where(draws > 0, draws, 1.0)))[ok]
        mean_ci = np.quantile(ms, [alpha / 2, 1 - alpha / 2]).tolist() if ms.size else [
            float("nan")] * 2
    else:
        mean_slope, mean_ci = float("nan"), [float("nan"), float("nan")]
    return {
        "n_values": n_values,
        "q": q,
        "alpha": alpha,
        "slope": slope,
        "bootstrap_ci": boot_ci,
        "certified_endpoint_slope": endpoint,
        "certified_local_slopes": local,
        "quantile": point,
        "quantile_low": low,
        "quantile_high": high,
        "mean": mean,
        "mean_se": se,
        "mean_slope": mean_slope,
        "mean_ci": mean_ci,
    }
