"""VIPS for a one-hidden-layer sigmoid belief network (Park et al., VIPS, Sec. 7, Alg. 6).

Model (VIPS Eq. 61, Fig. 7): K binary hidden units z_n, J binary visible units y_n,

    p(z_nk = 1 | b) = sigma(b_k),    p(y_nj = 1 | z_n, W, c) = sigma(w_j^T z_n + c_j),

with Gaussian priors W_jk ~ N(0, prior_var_w), b ~ N(0, prior_var_b I), c ~ N(0, prior_var_c I).
(The paper puts a TPBN shrinkage prior on W, following Gan et al. 2015; it is "one step away
from the data" (Sec. 7) and plays no part in the privacy analysis, so a fixed Gaussian prior is
used here.)

Variational family: q(w_j) = N(mu_w[j], cov_w[j]) (full K x K covariance per row j),
q(b_k) = N(mu_b[k], var_b[k]), q(c_j) = N(mu_c[j], var_c[j]), q(z_nk) = Bern(pi_nk), and the
Polya-Gamma posteriors q(xi_nj^(0)) = PG(1, sqrt<psi_nj^2>) (Eq. 67), q(xi_k^(1)) =
PG(1, sqrt<b_k^2>) (Eq. 68), whose means are tanh(c/2) / (2c) (<= 1/4, Fig. 4).

The E-step computes, per record and at fixed global parameters, q(xi_n^(0)) and q(z_n) (Eqs. 67,
69-71) by a few local coordinate-ascent sweeps, then the seven released statistics of the
appendix, Sec. 4 (averages over the S records of the minibatch, "the 1/N factor has to be
changed to 1/S"):

    A = mean_n <z_n>                               (K,)      Delta A <= sqrt(K) / S   (Eq. 79)
    B = <xi^(1)>                                   (K,)      Delta B <= sqrt(K) / 4
    C = mean_n y_n                                 (J,)      Delta C <= sqrt(J) / S   (Eq. 80)
    D = mean_n <xi_n^(0)>                          (J,)      Delta D <= sqrt(J) / (4S) (Eq. 81)
    E = mean_n <xi_n^(0)> <z_n>^T                  (J, K)    Delta E <= sqrt(JK) / (4S) (Eq. 82)
    F = mean_n y_n <z_n>^T                         (J, K)    Delta F <= sqrt(JK) / S  (Eq. 83)
    G_j = mean_n <xi_nj^(0)> <z_n z_n^T>           (J, K, K) Delta G <= sqrt(J) K / (4S) (Eq. 84)

The private step (Sec. 7, "Applying Moments Accountant's Composability", Eq. 72) divides each
statistic by its stated sensitivity C_i, adds ONE Gaussian draw of standard deviation
sqrt(7) sigma to the concatenated vector (whose L2 sensitivity is then sqrt(7)), and multiplies
each chunk back by C_i. The M-step (appendix Sec. 5) uses only the seven statistics, so it is
post-processing. Before the M-step the noisy statistics are projected onto their ranges (A, C, F
into [0, 1], B, D, E into [0, 1/4], each G_j symmetrised and its eigenvalues clipped at 0): the
paper does not say how it keeps noisy precisions valid for the SBN; the projection is our
choice and is privacy-neutral post-processing.

B does not depend on the data at fixed variational parameters (Eq. 68): its true replace-one
sensitivity is 0, the stated sqrt(K)/4 is a (loose) bound.

Held-out metric: :func:`prediction_accuracy` is the paper's pixel-wise prediction accuracy
(Sec. 7.1, Fig. 8): reconstruct each test image through q(z | y), threshold the predicted pixel
probabilities at 1/2 and report 1 - the mean squared distance to the test image. The training
objective :func:`elbo_per_datapoint` is a variational lower bound on log p(D) / N.

References
----------
M. Park, J. Foulds, K. Chaudhuri, M. Welling. Variational Bayes in Private Settings (VIPS).
JAIR 2020. Sec. 5 (Polya-Gamma augmentation, Eqs. 34-42), Sec. 7 (Alg. 6, Eqs. 61-72),
appendix Secs. 4-5 (Eqs. 79-88).
Z. Gan, R. Henao, D. Carlson, L. Carin. Learning deep sigmoid belief networks with data
augmentation. AISTATS 2015.
T. Jaakkola, M. Jordan. Bayesian parameter estimation via variational methods. Stat. Comput.
10 (2000) (the bound that PG-augmented VB attains at the optimal q(xi)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import dp_accounting
import numpy as np
from scipy.special import expit

from dpclaims.algorithms.vips.blr import pg_mean
from dpclaims.analysis.validation import (
    check_count,
    check_finite_array,
    check_positive,
    check_probability,
)

STATISTIC_NAMES = ("A", "B", "C", "D", "E", "F", "G")
"""The seven released statistics, in the order of the concatenated vector (appendix Sec. 4)."""

JOINT_SENSITIVITY = math.sqrt(7.0)
"""The paper's L2 sensitivity of the rescaled concatenated vector s' (Sec. 7): sqrt(7)."""


# --------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class SBNParams:
    """Variational parameters of q(W) q(b) q(c) (the global factors).

    Parameters
    ----------
    mu_w : ndarray (J, K)
        Means of the rows w_j of W.
    cov_w : ndarray (J, K, K)
        Covariances of q(w_j), symmetric positive semi-definite.
    mu_b, var_b : ndarray (K,)
        Mean and variance (> 0) of q(b_k).
    mu_c, var_c : ndarray (J,)
        Mean and variance (> 0) of q(c_j).

    Raises
    ------
    ValueError
        Non-finite entries, inconsistent shapes, variances <= 0, or a ``cov_w`` that is not
        symmetric positive semi-definite (smallest eigenvalue below -1e-10 times its scale).
    """

    mu_w: np.ndarray
    cov_w: np.ndarray
    mu_b: np.ndarray
    var_b: np.ndarray
    mu_c: np.ndarray
    var_c: np.ndarray

    def __post_init__(self) -> None:
        mu_w = check_finite_array(self.mu_w, "mu_w", ndim=2)
        J, K = mu_w.shape
        if J < 1 or K < 1:
            raise ValueError(f"mu_w must have shape (J, K) with J, K >= 1, got {mu_w.shape}")
        cov_w = check_finite_array(self.cov_w, "cov_w", ndim=3)
        if cov_w.shape != (J, K, K):
            raise ValueError(f"cov_w must have shape (J, K, K) = {(J, K, K)}, got {cov_w.shape}")
        if not np.allclose(cov_w, np.swapaxes(cov_w, 1, 2), atol=1e-10, rtol=1e-8):
            raise ValueError("cov_w must be symmetric in its last two axes")
        lo = np.linalg.eigvalsh(cov_w).min(axis=1)
        scale = np.maximum(1.0, np.abs(cov_w).max(axis=(1, 2)))
        if np.any(lo < -1e-10 * scale):
            j = int(np.argmin(lo / scale))
            raise ValueError(f"cov_w[{j}] is not positive semi-definite: smallest eigenvalue "
                             f"{lo[j]!r}")
        arrays = {"mu_w": mu_w, "cov_w": cov_w}
        for name, shape in (("mu_b", (K,)), ("var_b", (K,)), ("mu_c", (J,)), ("var_c", (J,))):
            arr = check_finite_array(getattr(self, name), name, ndim=1)
            if arr.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
            if name.startswith("var") and np.any(arr <= 0):
                i = int(np.argmin(arr))
                raise ValueError(f"{name} must be > 0, got {name}[{i}] = {arr[i]!r}")
            arrays[name] = arr
        for name, arr in arrays.items():
            object.__setattr__(self, name, arr)

    @property
    def n_visible(self) -> int:
        """J."""
        return self.mu_w.shape[0]

    @property
    def n_hidden(self) -> int:
        """K."""
        return self.mu_w.shape[1]

    @property
    def second_moment_w(self) -> np.ndarray:
        """<w_j w_j^T> = cov_w[j] + mu_w[j] mu_w[j]^T, shape (J, K, K)."""
        return self.cov_w + self.mu_w[:, :, None] * self.mu_w[:, None, :]


def init_sbn_params(n_visible: int, n_hidden: int, seed=0, *, scale: float = 0.1,
                    init_var: float = 0.01) -> SBNParams:
    """Data-independent initial q(theta): mu_w ~ N(0, scale^2), zero means for b and c.

    Parameters
    ----------
    n_visible, n_hidden : int
        J >= 1 and K >= 1.
    seed : int or numpy.random.SeedSequence
    scale : float
        Standard deviation (> 0) of the random initial means of W (symmetry breaking).
    init_var : float
        Initial variance (> 0) of every q(w_jk) (diagonal), q(b_k) and q(c_j).

    Raises
    ------
    ValueError
        J or K not an integer >= 1, ``scale`` or ``init_var`` not > 0.
    """
    J = check_count(n_visible, "n_visible")
    K = check_count(n_hidden, "n_hidden")
    check_positive(scale, "scale")
    check_positive(init_var, "init_var")
    rng = np.random.default_rng(seed)
    return SBNParams(mu_w=scale * rng.standard_normal((J, K)),
                     cov_w=np.broadcast_to(init_var * np.eye(K), (J, K, K)).copy(),
                     mu_b=np.zeros(K), var_b=np.full(K, init_var),
                     mu_c=np.zeros(J), var_c=np.full(J, init_var))


# --------------------------------------------------------------------------- E-step


def _check_binary(y, name: str, n_visible: int | None = None) -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ValueError(f"{name} must have shape (S, J) with S >= 1, got shape {arr.shape}")
    out = arr.astype(float)
    bad = ~((out == 0.0) | (out == 1.0))
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be binary (entries in {{0, 1}}); {name}{list(first)} = "
                         f"{arr[first]!r}")
    if n_visible is not None and out.shape[1] != n_visible:
        raise ValueError(f"{name} has J = {out.shape[1]} columns, the parameters have "
                         f"J = {n_visible}")
    return out


def _second_moment_psi(pi, params: SBNParams, mw) -> np.ndarray:
    """<psi_nj^2> = <(w_j^T z_n + c_j)^2> under q(W) q(c) q(z_n), shape (S, J)."""
    quad = np.einsum("sk,jkl,sl->sj", pi, mw, pi)
    quad += (pi * (1.0 - pi)) @ np.diagonal(mw, axis1=1, axis2=2).T
    return quad + 2.0 * params.mu_c * (pi @ params.mu_w.T) + params.mu_c ** 2 + params.var_c


def local_posteriors(y, params: SBNParams, *, local_sweeps: int = 3):
    """The E-step's local factors q(z_n) and q(xi_n^(0)) for each record (VIPS Eqs. 67, 69-71).

    Starting from the data-independent pi_n = sigma(mu_b), each sweep sets <xi_n^(0)> by Eq. 67
    and then updates pi_nk for k = 1..K in turn by Eq. 70 (coordinate ascent; each record only
    sees its own y_n and the global parameters). <xi^(0)> is recomputed from the final pi.

    Parameters
    ----------
    y : array_like (S, J)
        Binary records.
    params : SBNParams
    local_sweeps : int
        Number of sweeps (>= 1).

    Returns
    -------
    pi : ndarray (S, K)
        <z_n> = sigma(d_n).
    xi0 : ndarray (S, J)
        <xi_n^(0)>, in (0, 1/4].
    psi2 : ndarray (S, J)
        <psi_nj^2> at the final pi.

    Raises
    ------
    ValueError
        ``y`` not binary of shape (S, J) with J = ``params.n_visible``; ``local_sweeps`` < 1.
    """
    y = _check_binary(y, "y", params.n_visible)
    check_count(local_sweeps, "local_sweeps")
    mw = params.second_moment_w
    diag_mw = np.diagonal(mw, axis1=1, axis2=2)  # (J, K)
    yc = y - 0.5
    pi = np.broadcast_to(expit(params.mu_b), (y.shape[0], params.n_hidden)).copy()
    for _ in range(local_sweeps):
        xi0 = pg_mean(np.sqrt(_second_moment_psi(pi, params, mw)))
        for k in range(params.n_hidden):
            # <w_jk psi_nj^{\k}> = sum_{k' != k} <w_jk w_jk'> pi_nk' + <w_jk> <c_j>   (Eq. 71)
            cross = pi @ mw[:, k, :].T - pi[:, k:k + 1] * mw[:, k, k] + params.mu_w[:, k] * \
                params.mu_c
            d = (params.mu_b[k] + yc @ params.mu_w[:, k]
                 - 0.5 * (xi0 * (2.0 * cross + diag_mw[:, k])).sum(axis=1))
            pi[:, k] = expit(d)
    psi2 = _second_moment_psi(pi, params, mw)
    return pi, pg_mean(np.sqrt(psi2)), psi2


def sbn_statistics(y, params: SBNParams, *, local_sweeps: int = 3,
                   per_record: bool = False) -> dict[str, np.ndarray]:
    """The seven expected sufficient statistics A..G of one E-step (VIPS appendix Sec. 4).

    Parameters
    ----------
    y : array_like (S, J)
        The minibatch: binary records y_n in {0, 1}^J.
    params : SBNParams
        The current global variational parameters (held fixed: public).
    local_sweeps : int
        E-step sweeps, see :func:`local_posteriors`.
    per_record : bool
        If True, return each record's contribution (leading axis S) instead of the average;
        the average over that axis is the statistic. B's contribution is the same for every
        record (it does not depend on the data).

    Returns
    -------
    dict
        ``{"A": (K,), "B": (K,), "C": (J,), "D": (J,), "E": (J, K), "F": (J, K),
        "G": (J, K, K)}`` (with a leading S axis if ``per_record``), where
        A = mean <z_n>, B = <xi^(1)>, C = mean y_n, D = mean <xi_n^(0)>,
        E = mean <xi_n^(0)> <z_n>^T, F = mean y_n <z_n>^T,
        G[j] = mean <xi_nj^(0)> <z_n z_n^T> with <z z^T> = pi pi^T + diag(pi (1 - pi)).

    Raises
    ------
    ValueError
        As :func:`local_posteriors`.
    """
    y = _check_binary(y, "y", params.n_visible)
    pi, xi0, _ = local_posteriors(y, params, local_sweeps=local_sweeps)
    S, K = pi.shape
    zz = pi[:, :, None] * pi[:, None, :]
    idx = np.arange(K)
    zz[:, idx, idx] = pi
    xi1 = pg_mean(np.sqrt(params.mu_b ** 2 + params.var_b))
    rec = {
        "A": pi,
        "B": np.broadcast_to(xi1, (S, K)),
        "C": y,
        "D": xi0,
        "E": xi0[:, :, None] * pi[:, None, :],
        "F": y[:, :, None] * pi[:, None, :],
        "G": xi0[:, :, None, None] * zz[:, None, :, :],
    }
    if per_record:
        return rec
    return {name: value.mean(axis=0) for name, value in rec.items()}


def claimed_sensitivities(n_visible: int, n_hidden: int, batch_size: int) -> dict[str, float]:
    """The paper's per-statistic L2 sensitivities C_A..C_G (appendix Eqs. 79-84, 1/N -> 1/S).

    Quotes: "Delta A <= sqrt(K)/N" (79), "Delta B <= sqrt(K)/4", "Delta C <= sqrt(J)/N" (80),
    "Delta D <= sqrt(J)/(4N)" (81), "Delta E <= sqrt(JK)/(4N)" (82), "Delta F <= sqrt(JK)/N"
    (83), "Delta G <= sqrt(J) K/(4N)" (84); "the 1/N factor has to be changed to 1/S when using
    the subsampled data per iteration".

    Raises
    ------
    ValueError
        J, K or S not an integer >= 1.
    """
    J = check_count(n_visible, "n_visible")
    K = check_count(n_hidden, "n_hidden")
    S = check_count(batch_size, "batch_size")
    return {"A": math.sqrt(K) / S, "B": math.sqrt(K) / 4.0, "C": math.sqrt(J) / S,
            "D": math.sqrt(J) / (4.0 * S), "E": math.sqrt(J * K) / (4.0 * S),
            "F": math.sqrt(J * K) / S, "G": math.sqrt(J) * K / (4.0 * S)}


def concatenate_scaled(stats: dict[str, np.ndarray], sens: dict[str, float]) -> np.ndarray:
    """The rescaled concatenated vector s' = [s_A / C_A, ..., s_G / C_G], shape (dim,)."""
    return np.concatenate([np.ravel(stats[k]) / sens[k] for k in STATISTIC_NAMES])


def split_scaled(vector, sens: dict[str, float], n_visible: int,
                 n_hidden: int) -> dict[str, np.ndarray]:
    """Invert :func:`concatenate_scaled` on the last axis: chunk i times C_i, reshaped.

    ``vector`` has shape (..., dim); each statistic gets shape ``(..., *its shape)``.
    """
    J, K = n_visible, n_hidden
    shapes = {"A": (K,), "B": (K,), "C": (J,), "D": (J,), "E": (J, K), "F": (J, K),
              "G": (J, K, K)}
    vector = np.asarray(vector, dtype=float)
    dim = sum(math.prod(s) for s in shapes.values())
    if vector.shape[-1] != dim:
        raise ValueError(f"vector must have last axis {dim} for J = {J}, K = {K}, got "
                         f"shape {vector.shape}")
    out, start = {}, 0
    for name in STATISTIC_NAMES:
        size = math.prod(shapes[name])
        chunk = vector[..., start:start + size] * sens[name]
        out[name] = chunk.reshape(vector.shape[:-1] + shapes[name])
        start += size
    return out


def privatise_statistics(stats: dict[str, np.ndarray], sens: dict[str, float], sigma: float,
                         rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One joint Gaussian draw on the rescaled statistics, then rescaling (VIPS Eq. 72).

    s' = s / C (chunk-wise), s~' = s' + sqrt(7) sigma N(0, I), s~_i = C_i s~'_i.

    Parameters
    ----------
    stats : dict
        Output of :func:`sbn_statistics` (averages).
    sens : dict
        The C_i, e.g. :func:`claimed_sensitivities`.
    sigma : float
        Noise multiplier (> 0) relative to the joint sensitivity sqrt(7).
    rng : numpy.random.Generator

    Returns
    -------
    dict
        The released (noisy) statistics, same shapes as ``stats``.

    Raises
    ------
    ValueError
        ``sigma`` not > 0.
    """
    check_positive(sigma, "sigma")
    vec = concatenate_scaled(stats, sens)
    noisy = vec + JOINT_SENSITIVITY * sigma * rng.standard_normal(vec.size)
    J, K = stats["E"].shape
    return split_scaled(noisy, sens, J, K)


def project_statistics(stats: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Post-processing of noisy statistics onto valid values before the M-step.

    A, C, F are clipped to [0, 1] and B to [0, 1/4]. D, E, G are the blocks of the
    per-row matrices H_j = mean_n <xi_nj> [z_n; 1][z_n; 1]^T = [[G_j, E_j], [E_j^T, D_j]]
    ((K + 1) x (K + 1), positive semi-definite for exact statistics), which are the joint
    precision of (w_j, c_j) in the M-step: each noisy H_j is symmetrised, its eigenvalues
    clipped to [0, (K + 1) / 4], and D, E, G read back. Without this the mean-field q(W) q(c)
    updates diverge when noise makes H_j indefinite. Our choice: the paper does not state a
    projection for the SBN (for logistic regression it projects "negative eigenvalues to some
    value near zero", Sec. 6.2).
    """
    out = {k: np.clip(stats[k], 0.0, 1.0) for k in ("A", "C", "F")}
    out["B"] = np.clip(stats["B"], 0.0, 0.25)
    g, e, d = stats["G"], stats["E"], stats["D"]
    J, K = e.shape
    h = np.empty((J, K + 1, K + 1))
    h[:, :K, :K] = g
    h[:, :K, K] = e
    h[:, K, :K] = e
    h[:, K, K] = d
    h = 0.5 * (h + np.swapaxes(h, 1, 2))
    vals, vecs = np.linalg.eigh(h)
    vals = np.clip(vals, 0.0, 0.25 * (K + 1))
    h = np.einsum("jab,jb,jcb->jac", vecs, vals, vecs)
    out["G"] = 0.5 * (h[:, :K, :K] + np.swapaxes(h[:, :K, :K], 1, 2))
    out["E"] = 0.5 * (h[:, :K, K] + h[:, K, :K])
    out["D"] = h[:, K, K]
    return out


# --------------------------------------------------------------------------- M-step


def m_step(stats: dict[str, np.ndarray], n_total: int, params: SBNParams, *,
           prior_var_w: float = 1.0, prior_var_b: float = 1.0, prior_var_c: float = 1.0,
           rounds: int = 3) -> SBNParams:
    """q(W) q(b) q(c) from the seven statistics scaled by N (VIPS appendix Sec. 5, Eqs. 85-88).

    With statistics averaged over records and N = ``n_total``:
    q(w_j): precision I / prior_var_w + N G_j, precision-mean N (F_j - A / 2 - <c_j> E_j);
    q(c_j): precision 1 / prior_var_c + N D_j, precision-mean N (C_j - 1/2 - E_j . <w_j>);
    q(b_k): precision 1 / prior_var_b + N B_k, precision-mean N (A_k - 1/2) (Eqs. 85-86).
    q(W) and q(c) are coupled through <c_j> and <w_j>; ``rounds`` alternations are run,
    starting from ``params.mu_c``. Eq. 88 prints a factor -1/2 on the E-term of mu_c; the
    derivative of -<xi> psi^2 / 2 in c_j gives -<xi> <w_j>^T <z> (factor 1), used here.

    Raises
    ------
    ValueError
        ``n_total`` not an integer >= 1, non-positive prior variances.
    """
    N = check_count(n_total, "n_total")
    vw = check_positive(prior_var_w, "prior_var_w")
    vb = check_positive(prior_var_b, "prior_var_b")
    vc = check_positive(prior_var_c, "prior_var_c")
    check_count(rounds, "rounds")
    A, B, C, D, E, F, G = (stats[k] for k in STATISTIC_NAMES)
    J, K = E.shape
    prec_w = np.eye(K) / vw + N * G
    prec_w = 0.5 * (prec_w + np.swapaxes(prec_w, 1, 2))
    cov_w = np.linalg.inv(prec_w)
    cov_w = 0.5 * (cov_w + np.swapaxes(cov_w, 1, 2))
    var_c = 1.0 / (1.0 / vc + N * D)
    mu_c = params.mu_c.copy()
    for _ in range(rounds):
        h = N * (F - 0.5 * A - mu_c[:, None] * E)
        mu_w = np.einsum("jkl,jl->jk", cov_w, h)
        mu_c = var_c * N * (C - 0.5 - (E * mu_w).sum(axis=1))
    var_b = 1.0 / (1.0 / vb + N * B)
    mu_b = var_b * N * (A - 0.5)
    return SBNParams(mu_w=mu_w, cov_w=cov_w, mu_b=mu_b, var_b=var_b, mu_c=mu_c, var_c=var_c)


# --------------------------------------------------------------------------- objectives


def _log2cosh_half(x):
    """log(2 cosh(x / 2)), stable."""
    a = np.abs(x)
    return 0.5 * a + np.log1p(np.exp(-a))


def _kl_gauss_diag(mu, var, prior_var):
    return 0.5 * np.sum(var / prior_var + mu ** 2 / prior_var - 1.0 - np.log(var / prior_var))


def elbo_per_datapoint(y, params: SBNParams, *, local_sweeps: int = 3,
                       prior_var_w: float = 1.0, prior_var_b: float = 1.0,
                       prior_var_c: float = 1.0, include_kl: bool = True) -> float:
    """Variational lower bound on log p(y_1..y_N) / N under the PG-augmented family.

    At the optimal q(xi) = PG(1, c), c = sqrt(<psi^2>), the PG-augmented bound (VIPS Eq. 36,
    appendix Eqs. 76-78) is the Jaakkola-Jordan bound, giving per record

        sum_j [(y_nj - 1/2) <psi_nj> - log(2 cosh(c_nj / 2))]
        + sum_k [(pi_nk - 1/2) <b_k> - log(2 cosh(e_k / 2))] + H(Bern(pi_n)),

    with e_k = sqrt(<b_k^2>); minus KL(q(W, b, c) || p(W, b, c)) / N if ``include_kl``.
    Without the KL it is a lower bound on E_q(theta) log p(y | theta) per record (a held-out
    bound for test data).

    Parameters
    ----------
    y : array_like (N, J), binary
    params : SBNParams
    local_sweeps : int
    prior_var_w, prior_var_b, prior_var_c : float
        Prior variances (> 0), as in :func:`m_step`.
    include_kl : bool

    Returns
    -------
    float
        Nats per datapoint.

    Raises
    ------
    ValueError
        As :func:`local_posteriors`; prior variances not > 0.
    """
    y = _check_binary(y, "y", params.n_visible)
    vw = check_positive(prior_var_w, "prior_var_w")
    vb = check_positive(prior_var_b, "prior_var_b")
    vc = check_positive(prior_var_c, "prior_var_c")
    pi, _, psi2 = local_posteriors(y, params, local_sweeps=local_sweeps)
    mean_psi = pi @ params.mu_w.T + params.mu_c
    lik = ((y - 0.5) * mean_psi - _log2cosh_half(np.sqrt(psi2))).sum(axis=1)
    e = np.sqrt(params.mu_b ** 2 + params.var_b)
    prior_z = ((pi - 0.5) * params.mu_b - _log2cosh_half(e)).sum(axis=1)
    p = np.clip(pi, 1e-300, 1.0)
    q = np.clip(1.0 - pi, 1e-300, 1.0)
    entropy = -(pi * np.log(p) + (1.0 - pi) * np.log(q)).sum(axis=1)
    total = float(np.sum(lik + prior_z + entropy))
    if include_kl:
        K = params.n_hidden
        _, logdet = np.linalg.slogdet(params.cov_w)
        tr = np.trace(params.cov_w, axis1=1, axis2=2)
        kl_w = 0.5 * np.sum(tr / vw + (params.mu_w ** 2).sum(axis=1) / vw - K
                            + K * np.log(vw) - logdet)
        kl = (kl_w + _kl_gauss_diag(params.mu_b, params.var_b, vb)
              + _kl_gauss_diag(params.mu_c, params.var_c, vc))
        total -= float(kl)
    return total / y.shape[0]


def prediction_accuracy(y_test, params: SBNParams, *, local_sweeps: int = 3) -> float:
    """The paper's pixel-wise prediction accuracy (VIPS Sec. 7.1, Fig. 8, footnote 19).

    "converting the pixels of reconstructed images into probabilities (between 0 and 1); then
    converting the probabilities into binary variables; and averaging the squared distances
    between the predicted binary variables and the test images". Reconstruction: pi = q(z | y)
    from :func:`local_posteriors`, pixel probability sigma(<w_j>^T pi + <c_j>), thresholded at
    1/2. Returned as accuracy = 1 - mean squared distance (the fraction of pixels predicted
    correctly), which is what Fig. 8 plots as "prediction accuracy".

    Raises
    ------
    ValueError
        As :func:`local_posteriors`.
    """
    y = _check_binary(y_test, "y_test", params.n_visible)
    pi, _, _ = local_posteriors(y, params, local_sweeps=local_sweeps)
    prob = expit(pi @ params.mu_w.T + params.mu_c)
    pred = (prob > 0.5).astype(float)
    return float(1.0 - np.mean((pred - y) ** 2))


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class VIPSSBNRun:
    """Result of :func:`run_vips_sbn`.

    Attributes
    ----------
    params : SBNParams
        Final q(theta).
    trace : list of dict
        One entry per iteration t = 1..T: ``{"t", "rho", "released"}`` where ``released`` is
        the dict of the seven statistics as released (noisy, rescaled, before projection; the
        exact statistics if non-private). Empty if ``record_trace`` was False.
    elbo : list of (int, float)
        (t, :func:`elbo_per_datapoint` on the training data) every ``elbo_every`` iterations
        (t = 0 is the initial value).
    sigma : float or None
        Noise multiplier, None for non-private.
    dp_event : dp_accounting.DpEvent or None
        T-fold composition of the sampled-without-replacement Gaussian mechanism (relative to
        the sqrt(7) joint sensitivity), for accounting under replace-one.
    config : dict
    """

    params: SBNParams
    trace: list = field(default_factory=list)
    elbo: list = field(default_factory=list)
    sigma: float | None = None
    dp_event: dp_accounting.DpEvent | None = None
    config: dict = field(default_factory=dict)


def run_vips_sbn(y, n_hidden: int, *, n_iter: int, batch_size: int | None = None,
                 sigma: float | None = None, seed=0, tau0: float = 1.0, kappa: float = 0.6,
                 local_sweeps: int = 3, prior_var_w: float = 1.0, prior_var_b: float = 1.0,
                 prior_var_c: float = 1.0, init: SBNParams | None = None,
                 record_trace: bool = True, elbo_every: int | None = None) -> VIPSSBNRun:
    """(Private) stochastic variational Bayes for the SBN: VIPS Algorithm 6.

    For t = 1..T: draw a minibatch of S records without replacement; E-step at the current
    q(theta) (:func:`sbn_statistics`); if ``sigma`` is given, release the statistics through
    one joint Gaussian draw (:func:`privatise_statistics`) and project them
    (:func:`project_statistics`); blend nu~(t) <- (1 - rho_t) nu~(t-1) + rho_t (nu + N s~) with
    rho_t = (tau0 + t)^(-kappa); M-step (:func:`m_step`). Blending nu~ is blending the
    statistics, since nu~ = nu + N s~ is affine in s~; the first release initialises the running
    statistics (rho_1 := 1). ``batch_size = N`` with ``kappa = 0`` is batch VB.

    Parameters
    ----------
    y : array_like (N, J)
        Binary training records.
    n_hidden : int
        K >= 1.
    n_iter : int
        T >= 1.
    batch_size : int, optional
        S in [1, N]; default N.
    sigma : float, optional
        Noise multiplier (> 0); None runs non-private stochastic VB.
    seed : int or numpy.random.SeedSequence
        Spawns the initialisation, minibatch and noise streams.
    tau0, kappa : float
        Step sizes rho_t = (tau0 + t)^(-kappa); tau0 >= 0, kappa in [0, 1].
    local_sweeps : int
    prior_var_w, prior_var_b, prior_var_c : float
    init : SBNParams, optional
        Initial q(theta) (default :func:`init_sbn_params` with the spawned seed).
    record_trace : bool
        Keep every iteration's released statistics (J K^2 floats each for G).
    elbo_every : int, optional
        Record the training ELBO per datapoint every this many iterations.

    Returns
    -------
    VIPSSBNRun

    Raises
    ------
    ValueError
        Non-binary ``y``; K, T, S, ``local_sweeps`` not valid integers; S > N; sigma <= 0;
        tau0 < 0; kappa outside [0, 1]; ``init`` of the wrong shape.
    """
    y = _check_binary(y, "y")
    N, J = y.shape
    K = check_count(n_hidden, "n_hidden")
    T = check_count(n_iter, "n_iter")
    S = N if batch_size is None else check_count(batch_size, "batch_size")
    if S > N:
        raise ValueError(f"batch_size must be <= N = {N}, got {batch_size!r}")
    if sigma is not None:
        sigma = check_positive(sigma, "sigma")
    if not (math.isfinite(float(tau0)) and float(tau0) >= 0):
        raise ValueError(f"tau0 must be a finite number >= 0, got {tau0!r}")
    check_probability(kappa, "kappa", open_interval=False)
    check_count(local_sweeps, "local_sweeps")
    if elbo_every is not None:
        check_count(elbo_every, "elbo_every")
    priors = {"prior_var_w": prior_var_w, "prior_var_b": prior_var_b,
              "prior_var_c": prior_var_c}
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    init_ss, batch_ss, noise_ss = ss.spawn(3)
    params = init_sbn_params(J, K, init_ss) if init is None else init
    if (params.n_visible, params.n_hidden) != (J, K):
        raise ValueError(f"init has (J, K) = {(params.n_visible, params.n_hidden)}, expected "
                         f"{(J, K)}")
    batch_rng = np.random.default_rng(batch_ss)
    noise_rng = np.random.default_rng(noise_ss)
    sens = claimed_sensitivities(J, K, S)
    trace, elbo = [], []
    if elbo_every is not None:
        elbo.append((0, elbo_per_datapoint(y, params, local_sweeps=local_sweeps, **priors)))
    running = None
    for t in range(1, T + 1):
        idx = batch_rng.choice(N, size=S, replace=False) if S < N else np.arange(N)
        stats = sbn_statistics(y[idx], params, local_sweeps=local_sweeps)
        if sigma is not None:
            released = privatise_statistics(stats, sens, sigma, noise_rng)
            used = project_statistics(released)
        else:
            released = used = stats
        rho = 1.0 if running is None else float((tau0 + t) ** (-kappa))
        if running is None:
            running = {k: v.copy() for k, v in used.items()}
        else:
            running = {k: (1.0 - rho) * running[k] + rho * used[k] for k in STATISTIC_NAMES}
        params = m_step(running, N, params, **priors)
        if record_trace:
            trace.append({"t": t, "rho": rho, "released": released})
        if elbo_every is not None and t % elbo_every == 0:
            elbo.append((t, elbo_per_datapoint(y, params, local_sweeps=local_sweeps, **priors)))
    event = None
    if sigma is not None:
        step = dp_accounting.GaussianDpEvent(sigma)
        if S < N:
            step = dp_accounting.SampledWithoutReplacementDpEvent(N, S, step)
        event = dp_accounting.SelfComposedDpEvent(step, T)
    config = {"N": N, "J": J, "K": K, "T": T, "S": S, "sigma": sigma, "tau0": float(tau0),
              "kappa": float(kappa), "local_sweeps": local_sweeps, **priors,
              "sensitivities": sens}
    return VIPSSBNRun(params=params, trace=trace, elbo=elbo, sigma=sigma, dp_event=event,
                      config=config)


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class BinaryImages:
    """Binary images split into train and test; rows are flattened images in {0, 1}^J."""

    name: str
    train: np.ndarray
    test: np.ndarray
    preprocessing: str
    source: str

    @property
    def n_visible(self) -> int:
        return self.train.shape[1]


def load_digits_binary(seed=0, test_fraction: float = 0.2) -> BinaryImages:
    """scikit-learn's 8 x 8 digits (1797 images, pixel values 0..16) binarised, J = 64.

    A small stand-in for the paper's binarised MNIST (Sec. 7.1): pixel -> 1 if value >= 8
    else 0; a seeded random ``test_fraction`` of the images is held out.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
    test_fraction : float
        In (0, 1).

    Raises
    ------
    ImportError
        scikit-learn is not installed (install the ``vips`` extra).
    ValueError
        ``test_fraction`` outside (0, 1).
    """
    check_probability(test_fraction, "test_fraction")
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("load_digits_binary needs scikit-learn: install the `vips` extra "
                          "(pip install 'dpclaims[vips]') or `pip install scikit-learn`") from exc
    x = load_digits().data
    y = (x >= 8).astype(np.int8)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(y.shape[0])
    n_test = int(round(test_fraction * y.shape[0]))
    return BinaryImages(name="digits-8x8-binary", train=y[perm[n_test:]], test=y[perm[:n_test]],
                        preprocessing=f"pixel >= 8 -> 1 else 0 (values 0..16); random "
                                      f"{test_fraction:g} test split, seed {seed!r}",
                        source="sklearn.datasets.load_digits (UCI optical digits, test set)")
