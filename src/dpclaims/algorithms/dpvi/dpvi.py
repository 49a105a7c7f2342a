"""DPVI and DPVIm: DP-SGD on the ELBO of a Gaussian variational posterior.

Reference implementation of Jälkö, Prediger, Honkela & Kaski, "DPVIm: Differentially
Private Variational Inference Improved" (``../shared/papers/dpvim.txt``), in numpy,
vectorised over ``n_runs`` independent runs (a leading axis of every array).

Parametrisation (Sec. 2.2)
--------------------------
* Mean-field: xi = (m_q, s_q), theta = m_q + T(s_q) * eta (eq. 6), T = softplus (the
  paper's experiments, Sec. 4.1) or exp; sigma_q = T(s_q).
* Full-rank: xi = (m_q, a_q), a_q of length d(d+1)/2 fills the lower triangle
  (row-major, ``numpy.tril_indices``) of the Cholesky factor L = T(a_q); the diagonal
  goes through T, the off-diagonal entries are a_q as they are; theta = m_q + L eta
  (eq. 19).

Per-example gradients (eqs. 9, 10): each record x contributes
``g_m,x = grad_theta log p(x | theta) + grad_theta log p(theta) / N`` and
``g_s,x = eta T'(s_q) g_m,x + grad_s H(q) / N`` (eq. 11 per example), N the data size.
Their sum over the whole data set is the single-sample reparametrisation gradient of
the ELBO (eqs. 7, 8): :func:`elbo_single_sample` is that objective, and the tests
compare its finite differences with these closed forms.

Variants (Sec. 3.1.1), one DP-SGD step each; C = ``clip``, sigma_DP = ``noise_multiplier``:

``vanilla``
    clip (g_m,x, g_s,x) jointly to C, sum, add N(0, sigma_DP^2 C^2 I).
``aligned``
    Algorithm 1: release only g~_m = sum clip(g_m,x) + sigma_DP C psi; then
    g~_s = eta T'(s_q) g~_m + (B/N) grad_s H(q)  (eq. 11, post-processing).
``preconditioned``
    eq. (17): (g_m,x, g_s,x / T'(s_q)) clipped jointly and noised.
``natural``
    eqs. (15), (16): per-example natural gradients (I_m^{-1} g_m,x,
    I_s^{-1} g_s,x) clipped jointly and noised.
``aligned-natural``
    Algorithm 2: release g~_m^nat = sum clip(I_m^{-1} g_m,x) + sigma_DP C
    psi; g~_s^nat = I_s^{-1}(eta T' I_m g~_m^nat + (B/N) grad_s H).
``full-rank-vanilla`` / ``full-rank-aligned``
    eq. (20) with g~_a = J_a(L eta) g~_m + (B/N) grad_a H for the aligned one.

Readings the paper leaves open (each is an option, reported where a verdict rests on it):

* ``entropy_weight``: Algorithm 1 line 5 adds grad_s H(q) to a sum over "x in D". With
  a mini-batch of B records, eq. (10) gives each record grad_s H / N, so the batch sum
  carries (B/N) grad_s H ("per-example", default); "as-printed" adds grad_s H in full to
  the batch sum (N/B times more entropy than eq. 10).
* ``alg2_line4``: Algorithm 2 line 4 prints ``sum gamma_x g_{m,x}`` (the plain gradient,
  clipped with the multiplier of the natural one) while the comment says it releases
  g_m^nat. "natural" (default) sums the clipped natural gradients; "as-printed" sums
  gamma_x g_{m,x}, whose norm is min(||g_m,x||, C / T(s)^2) for a common scale, i.e.
  not bounded by C when T(s) < 1.

Update: ascent on L(q) / N, estimated by the noisy sum divided by the (expected) batch
size B (= q N under Poisson sampling); SGD or Adam (Kingma & Ba 2015; the paper's
optimiser, App. F). Batches: ``sampling="wor"``, a fresh uniformly random set of exactly
B records each step (fixed size, without replacement: what d3p draws); ``"poisson"``,
each record independently with probability q (what the Fourier accountant assumes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, log_expit

from dpclaims.analysis.validation import (
    check_count,
    check_finite_array,
    check_positive,
    check_probability,
)

VARIANTS = ("vanilla", "aligned", "preconditioned", "natural", "aligned-natural",
            "full-rank-vanilla", "full-rank-aligned")
MEAN_FIELD_VARIANTS = VARIANTS[:5]
FULL_RANK_VARIANTS = VARIANTS[5:]
#: The variants that release only g_m under DP (the rest are post-processing).
ALIGNED_VARIANTS = ("aligned", "aligned-natural", "full-rank-aligned")
OPTIMISERS = ("sgd", "adam")
SAMPLINGS = ("wor", "poisson")


# --------------------------------------------------------------------------- transforms

@dataclass(frozen=True)
class Transform:
    """T : R -> R_+ mapping s_q to sigma_q (Sec. 2.2): "softplus" or "exp"."""

    name: str = "softplus"

    def __post_init__(self):
        if self.name not in ("softplus", "exp"):
            raise ValueError(f"transform must be 'softplus' or 'exp', got {self.name!r}")

    def __call__(self, s):
        return np.logaddexp(0.0, s) if self.name == "softplus" else np.exp(s)

    def derivative(self, s):
        """T'(s): sigmoid(s) for softplus (App. C), exp(s) for exp."""
        return expit(s) if self.name == "softplus" else np.exp(s)

    def inverse(self, sigma):
        """s with T(s) = sigma (sigma > 0 elementwise; ValueError otherwise)."""
        sigma = np.asarray(sigma, dtype=float)
        if not np.all(np.isfinite(sigma)) or np.any(sigma <= 0):
            raise ValueError(f"sigma_q must be finite and > 0, got {sigma!r}")
        if self.name == "exp":
            return np.log(sigma)
        return sigma + np.log(-np.expm1(-sigma))


# ------------------------------------------------------------------------------- models

class _GaussianPrior:
    """theta ~ N(0, prior_std^2 I), shared by the models."""

    prior_std: float

    def logprior(self, theta):
        """log N(theta; 0, prior_std^2 I), shape (R,)."""
        d = theta.shape[-1]
        return (-0.5 * np.sum(theta ** 2, axis=-1) / self.prior_std ** 2
                - 0.5 * d * np.log(2 * np.pi * self.prior_std ** 2))

    def grad_logprior(self, theta):
        """-theta / prior_std^2, shape (R, d)."""
        return -theta / self.prior_std ** 2


@dataclass(frozen=True)
class LogisticRegression(_GaussianPrior):
    """y ~ Bernoulli(sigmoid(x w)), w ~ N(0, prior_std^2 I) (DPVIm App. G.2, eqs. G.3-G.4).

    Labels y in {0, 1}. All functions take theta (R, d), x (R, B, d), y (R, B).
    """

    prior_std: float = 1.0
    name: str = "logistic-regression"

    def loglik(self, theta, x, y):
        """log p(y | x, theta) per record, shape (R, B)."""
        a = np.einsum("rbd,rd->rb", x, theta)
        return y * log_expit(a) + (1 - y) * log_expit(-a)

    def grad_loglik(self, theta, x, y):
        """grad_theta log p(y | x, theta) per record, shape (R, B, d): (y - sigmoid(x w)) x."""
        a = np.einsum("rbd,rd->rb", x, theta)
        return (y - expit(a))[..., None] * x


@dataclass(frozen=True)
class LinearRegression(_GaussianPrior):
    """y ~ N(x w, noise_std^2), w ~ N(0, prior_std^2 I) (DPVIm App. J, eqs. J.1-J.2).

    The noise std is known and fixed (App. J puts a Gamma(0.1, 0.1) prior on it; fixing
    it keeps the model conjugate, so the exact posterior, and hence the exact VI
    optimum, is known: :meth:`posterior`).
    """

    noise_std: float = 1.0
    prior_std: float = 1.0
    name: str = "linear-regression"

    def loglik(self, theta, x, y):
        r = y - np.einsum("rbd,rd->rb", x, theta)
        return -0.5 * r ** 2 / self.noise_std ** 2 - 0.5 * np.log(2 * np.pi * self.noise_std ** 2)

    def grad_loglik(self, theta, x, y):
        r = y - np.einsum("rbd,rd->rb", x, theta)
        return (r / self.noise_std ** 2)[..., None] * x

    def posterior(self, x, y):
        """Exact posterior N(mean (d,), cov (d, d)) of w given x (N, d), y (N,)."""
        x = check_finite_array(x, "x", ndim=2)
        y = check_finite_array(y, "y", ndim=1)
        if x.shape[0] != y.shape[0]:
            raise ValueError(f"x has {x.shape[0]} rows but y has {y.shape[0]}")
        prec = x.T @ x / self.noise_std ** 2 + np.eye(x.shape[1]) / self.prior_std ** 2
        cov = np.linalg.inv(prec)
        return cov @ (x.T @ y) / self.noise_std ** 2, 0.5 * (cov + cov.T)


# ------------------------------------------------------------------------------ families

@dataclass(frozen=True)
class MeanField:
    """Diagonal Gaussian q = N(m_q, diag(T(s_q))^2); xi = (m_q (d,), s_q (d,))."""

    dim: int
    transform: Transform = field(default_factory=Transform)
    name: str = "mean-field"

    @property
    def n_params(self) -> int:
        return 2 * self.dim

    @property
    def n_scale(self) -> int:
        return self.dim

    def split(self, xi):
        return xi[..., :self.dim], xi[..., self.dim:]

    def std(self, xi):
        """sigma_q = T(s_q), shape (..., d)."""
        return self.transform(self.split(xi)[1])

    def sample(self, xi, eta):
        """theta = m_q + T(s_q) eta (eq. 6); eta (..., d)."""
        m, s = self.split(xi)
        return m + self.transform(s) * eta

    def entropy(self, xi):
        """H(q) = sum log T(s_q) + d/2 log(2 pi e), shape (...)."""
        return (np.sum(np.log(self.std(xi)), axis=-1)
                + 0.5 * self.dim * np.log(2 * np.pi * np.e))

    def grad_entropy(self, xi):
        """grad_s H(q) = T'(s_q) / T(s_q), shape (..., d)."""
        s = self.split(xi)[1]
        return self.transform.derivative(s) / self.transform(s)

    def scale_jacobian_times(self, xi, eta, g):
        """J(eta) g: the data part of eq. (11), eta T'(s_q) g; g (..., d) -> (..., d)."""
        factor = eta * self.transform.derivative(self.split(xi)[1])
        if g.ndim == eta.ndim + 1:   # per-example g (R, B, d) with eta (R, d)
            return factor[..., None, :] * g
        return factor * g

    def init(self, mean, std, n_runs: int):
        """xi (n_runs, 2d) with m_q = mean and sigma_q = std (scalars or (d,) or (R, d))."""
        m = np.broadcast_to(np.asarray(mean, dtype=float), (n_runs, self.dim))
        s = np.broadcast_to(self.transform.inverse(std), (n_runs, self.dim))
        return np.concatenate([m, s], axis=-1).copy()


@dataclass(frozen=True)
class FullRank:
    """Full-rank Gaussian q = N(m_q, L L^T), L = T(a_q) lower triangular (Sec. 3.1.2)."""

    dim: int
    transform: Transform = field(default_factory=Transform)
    name: str = "full-rank"

    def __post_init__(self):
        rows, cols = np.tril_indices(self.dim)
        object.__setattr__(self, "_rows", rows)
        object.__setattr__(self, "_cols", cols)
        object.__setattr__(self, "_diag", rows == cols)

    @property
    def n_params(self) -> int:
        return self.dim + self.n_scale

    @property
    def n_scale(self) -> int:
        return self.dim * (self.dim + 1) // 2

    def split(self, xi):
        return xi[..., :self.dim], xi[..., self.dim:]

    def cholesky(self, xi):
        """L (..., d, d) from a_q."""
        a = self.split(xi)[1]
        vals = np.where(self._diag, self.transform(a), a)
        out = np.zeros(a.shape[:-1] + (self.dim, self.dim))
        out[..., self._rows, self._cols] = vals
        return out

    def std(self, xi):
        """Marginal standard deviations sqrt(diag(L L^T)), shape (..., d)."""
        L = self.cholesky(xi)
        return np.sqrt(np.sum(L ** 2, axis=-1))

    def sample(self, xi, eta):
        m = self.split(xi)[0]
        return m + np.einsum("...ij,...j->...i", self.cholesky(xi), eta)

    def entropy(self, xi):
        a = self.split(xi)[1]
        return (np.sum(np.log(self.transform(a[..., self._diag])), axis=-1)
                + 0.5 * self.dim * np.log(2 * np.pi * np.e))

    def grad_entropy(self, xi):
        """grad_a H = T'(a_ii) / T(a_ii) on the diagonal entries, 0 elsewhere."""
        a = self.split(xi)[1]
        return np.where(self._diag, self.transform.derivative(a) / self.transform(a), 0.0)

    def scale_jacobian_times(self, xi, eta, g):
        """J_a(L eta) g of eq. (20): entry (i, j) is g_i eta_j (times T'(a_ii) if i = j)."""
        a = self.split(xi)[1]
        factor = np.where(self._diag, self.transform.derivative(a), 1.0)
        if g.ndim == eta.ndim + 1:   # per-example g (R, B, d) with eta (R, d)
            return g[..., self._rows] * (eta[..., self._cols] * factor)[..., None, :]
        return g[..., self._rows] * eta[..., self._cols] * factor

    def init(self, mean, std, n_runs: int):
        """xi with m_q = mean, L = std * I."""
        m = np.broadcast_to(np.asarray(mean, dtype=float), (n_runs, self.dim))
        sd = np.broadcast_to(np.asarray(std, dtype=float), (self.dim,))
        a = np.zeros((n_runs, self.n_scale))
        a[:, self._diag] = self.transform.inverse(sd)
        return np.concatenate([m, a], axis=-1)


def family_for(variant: str, dim: int, transform: str = "softplus"):
    """The variational family a variant runs on (mean-field or full-rank)."""
    check_variant(variant)
    t = Transform(transform)
    return FullRank(dim, t) if variant in FULL_RANK_VARIANTS else MeanField(dim, t)


def check_variant(variant: str) -> str:
    """Return ``variant``; ValueError naming it unless it is one of :data:`VARIANTS`."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    return variant


# --------------------------------------------------------------------------- gradients

def per_example_gradients(model, family, xi, eta, x, y, n_total: int):
    """Per-example ELBO gradients (eqs. 9, 10) at one sample theta(eta; xi).

    Parameters
    ----------
    model : LogisticRegression | LinearRegression
    family : MeanField | FullRank
    xi : array (R, P)
        Variational parameters of R runs.
    eta : array (R, d)
        The standard normal draw of eq. (6) / (19).
    x, y : arrays (R, B, d), (R, B)
        The batch of each run.
    n_total : int
        N, the data set size (the prior and entropy are shared out as 1/N per record).

    Returns
    -------
    g_m : array (R, B, d)
        grad_theta log p(x | theta) + grad_theta log p(theta) / N.
    g_s : array (R, B, n_scale)
        J(eta) g_m + grad_scale H(q) / N.
    """
    theta = family.sample(xi, eta)
    g_m = model.grad_loglik(theta, x, y) + model.grad_logprior(theta)[:, None, :] / n_total
    g_s = (family.scale_jacobian_times(xi, eta, g_m)
           + family.grad_entropy(xi)[:, None, :] / n_total)
    return g_m, g_s


def elbo_single_sample(model, family, xi, eta, x, y):
    """log p(D, theta(eta; xi)) + H(q_xi) (eq. 5 with one Monte Carlo sample), shape (R,).

    ``x`` (R, N, d), ``y`` (R, N): the whole data set of each run. Its gradient in xi
    at fixed eta is the sum of :func:`per_example_gradients` over the data set.
    """
    theta = family.sample(xi, eta)
    return (np.sum(model.loglik(theta, x, y), axis=-1) + model.logprior(theta)
            + family.entropy(xi))


def fisher_blocks(family: MeanField, xi):
    """Fisher information of q w.r.t. (m_q, s_q), diagonal blocks (I_m, I_s), each (..., d).

    I_m = 1 / T(s)^2 and I_s = 2 T'(s)^2 / T(s)^2: the blocks implied by eqs. (15)-(16)
    (g_m^nat = T^2 g_m; g_s^nat = I_s^{-1} g_s); the (m, s) cross block is zero.
    """
    s = family.split(xi)[1]
    t, tp = family.transform(s), family.transform.derivative(s)
    return 1.0 / t ** 2, 2.0 * tp ** 2 / t ** 2


def clip_rows(g, clip: float):
    """Scale each last-axis vector to L2 norm <= clip: gamma = min(1, C / ||g||).

    Returns (clipped (same shape), gamma (shape[:-1])).
    """
    norm = np.linalg.norm(g, axis=-1)
    gamma = np.minimum(1.0, clip / np.maximum(norm, np.finfo(float).tiny))
    return g * gamma[..., None], gamma


@dataclass(frozen=True)
class StepOutput:
    """One DP step of R runs.

    released : (R, k) the vector the Gaussian mechanism releases (sum of clipped
        per-example vectors plus noise): g~_m for aligned variants, the joint gradient
        otherwise. direction : (R, P) the ascent direction for xi (an estimate of
        grad L(q) / N). clip_fraction : (R,) share of the batch's records clipped.
    """

    released: np.ndarray
    direction: np.ndarray
    clip_fraction: np.ndarray


def dp_step(variant, model, family, xi, eta, x, y, weights, n_total, clip, noise_multiplier,
            noise, batch_scale, *, entropy_weight="per-example", alg2_line4="natural",
            canary=None, canary_count=None):
    """The noisy gradient of one DP-SGD step for R runs (see the module docstring).

    Parameters
    ----------
    variant : str
        One of :data:`VARIANTS` (must match ``family``).
    xi : (R, P); eta : (R, d); x : (R, B, d); y : (R, B)
    weights : (R, B)
        1 for the records in the batch, 0 for padding (Poisson batches of varying size).
    n_total : int
        N.
    clip, noise_multiplier : float
        C > 0 and sigma_DP >= 0 (0 gives the non-private clipped gradient).
    noise : (R, k)
        Standard normal psi for the released vector (k = d for aligned variants, P else):
        passed in so that a test can fix the release.
    batch_scale : float
        B (or q N): the noisy sum is divided by it.
    canary : (R, k) or None
        A per-run extra contribution added to the released sum: the summed clipped
        contributions of the batch's gradient canaries (records whose gradient the
        adversary chooses, for audits). Must have norm <= canary_count * clip
        (ValueError otherwise).
    canary_count : (R,) or None
        How many canaries each run's ``canary`` sums (default: one per run).

    Returns
    -------
    StepOutput
    """
    g_m, g_s = per_example_gradients(model, family, xi, eta, x, y, n_total)
    w = weights[..., None]
    d = family.dim
    if variant in ALIGNED_VARIANTS:
        if variant == "aligned-natural":
            i_m, i_s = fisher_blocks(family, xi)
            g_nat = g_m / i_m[:, None, :]
            _, gamma = clip_rows(g_nat, clip)
            per = g_nat * gamma[..., None] if alg2_line4 == "natural" else g_m * gamma[..., None]
        else:
            per, gamma = clip_rows(g_m, clip)
        released = np.sum(per * w, axis=1)
        if canary is not None:
            released = released + _check_canary(canary, clip, released.shape, canary_count)
        released = released + noise_multiplier * clip * noise
        g_tilde = released / batch_scale
        ent_w = 1.0 / n_total if entropy_weight == "per-example" else 1.0 / batch_scale
        ent = family.grad_entropy(xi) * ent_w
        if variant == "aligned-natural":
            d_s = (family.scale_jacobian_times(xi, eta, i_m * g_tilde) + ent) / i_s
        else:
            d_s = family.scale_jacobian_times(xi, eta, g_tilde) + ent
        direction = np.concatenate([g_tilde, d_s], axis=-1)
    else:
        if variant == "preconditioned":
            g_s = g_s / family.transform.derivative(family.split(xi)[1])[:, None, :]
        elif variant == "natural":
            i_m, i_s = fisher_blocks(family, xi)
            g_m, g_s = g_m / i_m[:, None, :], g_s / i_s[:, None, :]
        joint, gamma = clip_rows(np.concatenate([g_m, g_s], axis=-1), clip)
        released = np.sum(joint * w, axis=1)
        if canary is not None:
            released = released + _check_canary(canary, clip, released.shape, canary_count)
        released = released + noise_multiplier * clip * noise
        direction = released / batch_scale
    clipped = (gamma < 1.0) * weights
    frac = clipped.sum(axis=1) / np.maximum(weights.sum(axis=1), 1)
    assert direction.shape[-1] == family.n_params and released.shape[-1] in (d, family.n_params)
    return StepOutput(released, direction, frac)


def _check_canary(canary, clip, shape, count=None):
    canary = np.asarray(canary, dtype=float)
    if canary.shape != shape:
        raise ValueError(f"canary must have shape {shape}, got {canary.shape}")
    count = np.ones(shape[0]) if count is None else np.asarray(count, dtype=float)
    if count.shape != shape[:1] or np.any(count < 0) or not np.all(np.isfinite(count)):
        raise ValueError(f"canary_count must be {shape[:1]} non-negative counts, got {count!r}")
    if np.any(np.linalg.norm(canary, axis=-1) > count * clip * (1 + 1e-12)):
        raise ValueError(f"canary gradients must have norm <= canary_count x clip = {clip}")
    return canary


def released_dim(variant: str, family) -> int:
    """Length of the vector the Gaussian mechanism releases in one step."""
    return family.dim if variant in ALIGNED_VARIANTS else family.n_params


# --------------------------------------------------------------------------- optimisers

class _SGD:
    def __init__(self, lr):
        self.lr = lr

    def step(self, xi, direction, t):
        return xi + self.lr * direction


class _Adam:
    """Adam (Kingma & Ba 2015, Alg. 1) for ascent, vectorised over runs."""

    def __init__(self, lr, shape, beta1=0.9, beta2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, beta1, beta2, eps
        self.m = np.zeros(shape)
        self.v = np.zeros(shape)

    def step(self, xi, direction, t):
        self.m = self.b1 * self.m + (1 - self.b1) * direction
        self.v = self.b2 * self.v + (1 - self.b2) * direction ** 2
        m_hat = self.m / (1 - self.b1 ** t)
        v_hat = self.v / (1 - self.b2 ** t)
        return xi + self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


# ------------------------------------------------------------------------------- running

@dataclass(frozen=True)
class DPVIConfig:
    """Settings of one DPVI run (validated; see :func:`run_dpvi`)."""

    variant: str = "aligned"
    clip: float = 3.0
    noise_multiplier: float = 1.0
    steps: int = 1000
    batch_size: int | None = 100
    sampling: str = "wor"
    sampling_rate: float | None = None
    optimiser: str = "adam"
    lr: float = 1e-3
    transform: str = "softplus"
    init_std: float = 1.0
    init_mean_std: float = 0.0
    record_every: int = 1
    entropy_weight: str = "per-example"
    alg2_line4: str = "natural"

    def __post_init__(self):
        check_variant(self.variant)
        check_positive(self.clip, "clip")
        if not (np.isfinite(self.noise_multiplier) and self.noise_multiplier >= 0):
            raise ValueError(f"noise_multiplier must be finite and >= 0, got "
                             f"{self.noise_multiplier!r}")
        check_count(self.steps, "steps")
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {SAMPLINGS}, got {self.sampling!r}")
        if self.sampling == "wor":
            check_count(self.batch_size, "batch_size")
        else:
            check_probability(self.sampling_rate, "sampling_rate")
        if self.optimiser not in OPTIMISERS:
            raise ValueError(f"optimiser must be one of {OPTIMISERS}, got {self.optimiser!r}")
        check_positive(self.lr, "lr")
        Transform(self.transform)
        check_positive(self.init_std, "init_std")
        if not (np.isfinite(self.init_mean_std) and self.init_mean_std >= 0):
            raise ValueError(f"init_mean_std must be >= 0, got {self.init_mean_std!r}")
        check_count(self.record_every, "record_every")
        if self.entropy_weight not in ("per-example", "as-printed"):
            raise ValueError("entropy_weight must be 'per-example' or 'as-printed', got "
                             f"{self.entropy_weight!r}")
        if self.alg2_line4 not in ("natural", "as-printed"):
            raise ValueError(f"alg2_line4 must be 'natural' or 'as-printed', got "
                             f"{self.alg2_line4!r}")


@dataclass
class DPVIResult:
    """Output of :func:`run_dpvi`.

    Attributes
    ----------
    trace : (K, R, P)
        The parameter iterates xi at ``trace_steps`` (K of them); the first row is
        the initial value (step 0).
    final : (R, P)
        The last iterate.
    clip_fraction : (R,)
        Share of clipped per-example gradients over the run.
    """

    config: DPVIConfig
    family: object
    trace: np.ndarray
    trace_steps: np.ndarray
    final: np.ndarray
    clip_fraction: np.ndarray
    n_total: int
    seed: int


def _check_data(x, y):
    x = check_finite_array(x, "x", ndim=2)
    y = check_finite_array(y, "y", ndim=1)
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x has {x.shape[0]} rows but y has {y.shape[0]}")
    return x, y


def draw_batches(rng, n_runs: int, n_total: int, config: DPVIConfig):
    """Indices (R, B_max) and weights (R, B_max) of one step's batches.

    "wor": exactly B distinct records per run (uniform subset). "poisson": each record
    with probability q; realised as the K ~ Binomial(N, q) smallest of N uniform keys,
    padded to the largest K with weight 0.
    """
    keys = rng.random((n_runs, n_total))
    if config.sampling == "wor":
        b = config.batch_size
        idx = np.argpartition(keys, b - 1, axis=1)[:, :b] if b < n_total else \
            np.tile(np.arange(n_total), (n_runs, 1))
        return idx, np.ones((n_runs, b))
    k = rng.binomial(n_total, config.sampling_rate, size=n_runs)
    kmax = max(int(k.max()), 1)
    idx = np.argpartition(keys, kmax - 1, axis=1)[:, :kmax] if kmax < n_total else \
        np.tile(np.arange(n_total), (n_runs, 1))
    order = np.argsort(np.take_along_axis(keys, idx, axis=1), axis=1)
    idx = np.take_along_axis(idx, order, axis=1)
    return idx, (np.arange(kmax)[None, :] < k[:, None]).astype(float)


def run_dpvi(model, x, y, config: DPVIConfig, *, n_runs: int = 1, seed: int = 0,
             init=None) -> DPVIResult:
    """Run DPVI (any variant of :data:`VARIANTS`) for ``n_runs`` independent runs at once.

    Parameters
    ----------
    model : LogisticRegression | LinearRegression
    x : array (N, d); y : array (N,)
    config : DPVIConfig
        ``batch_size`` must not exceed N.
    n_runs : int
        R runs, vectorised (leading axis of every array); each gets its own batches,
        eta and noise from one seeded generator.
    seed : int
    init : array (R, P) or None
        Initial xi; default m_q ~ N(0, init_mean_std^2), sigma_q = init_std.

    Returns
    -------
    DPVIResult

    Raises
    ------
    ValueError
        Bad data (NaN, mismatched rows), batch larger than the data, bad init shape.
    """
    x, y = _check_data(x, y)
    n_total, d = x.shape
    if config.sampling == "wor" and config.batch_size > n_total:
        raise ValueError(f"batch_size = {config.batch_size} exceeds the data size N = "
                         f"{n_total}")
    check_count(n_runs, "n_runs")
    family = family_for(config.variant, d, config.transform)
    rng = np.random.default_rng(seed)
    if init is None:
        xi = family.init(config.init_mean_std * rng.standard_normal((n_runs, d)),
                         config.init_std, n_runs)
    else:
        xi = check_finite_array(init, "init", ndim=2).copy()
        if xi.shape != (n_runs, family.n_params):
            raise ValueError(f"init must have shape {(n_runs, family.n_params)}, got "
                             f"{xi.shape}")
    batch_scale = (config.batch_size if config.sampling == "wor"
                   else config.sampling_rate * n_total)
    opt = (_SGD(config.lr) if config.optimiser == "sgd"
           else _Adam(config.lr, xi.shape))
    k = released_dim(config.variant, family)
    rec = [xi.copy()]
    rec_steps = [0]
    clipped = np.zeros(n_runs)
    for t in range(1, config.steps + 1):
        idx, w = draw_batches(rng, n_runs, n_total, config)
        eta = rng.standard_normal((n_runs, d))
        psi = rng.standard_normal((n_runs, k))
        out = dp_step(config.variant, model, family, xi, eta, x[idx], y[idx], w, n_total,
                      config.clip, config.noise_multiplier, psi, batch_scale,
                      entropy_weight=config.entropy_weight, alg2_line4=config.alg2_line4)
        xi = opt.step(xi, out.direction, t)
        if not np.all(np.isfinite(xi)):
            raise FloatingPointError(f"DPVI diverged at step {t} (non-finite parameters); "
                                     f"lower lr = {config.lr}")
        clipped += out.clip_fraction
        if t % config.record_every == 0 or t == config.steps:
            rec.append(xi.copy())
            rec_steps.append(t)
    return DPVIResult(config, family, np.stack(rec), np.array(rec_steps), xi,
                      clipped / config.steps, n_total, seed)


# ------------------------------------------------------------------- non-private optimum

def vi_optimum(model, family: MeanField | FullRank, x, y, *, n_quadrature: int = 40):
    """The non-private VI optimum xi* (P,) of the exact ELBO (not a Monte Carlo one).

    Linear regression: closed form from the exact posterior N(mu, Sigma): the full-rank
    optimum is q = p(w | D) (L = chol(Sigma)); the mean-field one has m = mu and
    sigma_j = 1 / sqrt(Lambda_jj), Lambda = Sigma^{-1} (Bishop 2006, Sec. 10.1.2).
    Logistic regression (mean-field only): maximises the ELBO, whose likelihood term
    E_q log p(y | x w) is a one-dimensional Gaussian expectation per record
    (x w ~ N(x m, sum_j x_j^2 sigma_j^2)) computed by Gauss-Hermite quadrature with
    ``n_quadrature`` nodes, with scipy's L-BFGS-B and the analytic gradient.
    """
    from scipy.optimize import minimize

    x, y = _check_data(x, y)
    t = family.transform
    if isinstance(model, LinearRegression):
        mu, cov = model.posterior(x, y)
        if isinstance(family, FullRank):
            L = np.linalg.cholesky(cov)
            a = L[family._rows, family._cols].copy()
            a[family._diag] = t.inverse(np.diag(L))
            return np.concatenate([mu, a])
        prec = np.linalg.inv(cov)
        return np.concatenate([mu, t.inverse(1.0 / np.sqrt(np.diag(prec)))])
    if not isinstance(family, MeanField):
        raise ValueError("vi_optimum for logistic regression supports the mean-field family")
    nodes, wts = np.polynomial.hermite_e.hermegauss(n_quadrature)
    wts = wts / wts.sum()
    d = family.dim
    v0 = model.prior_std ** 2

    def neg_elbo(xi):
        m, s = xi[:d], xi[d:]
        sd, tp = t(s), t.derivative(s)
        mu_a = x @ m
        var_a = (x ** 2) @ (sd ** 2)
        sa = np.sqrt(var_a)
        a = mu_a[:, None] + sa[:, None] * nodes[None, :]
        ll = y[:, None] * log_expit(a) + (1 - y[:, None]) * log_expit(-a)
        dll = y[:, None] - expit(a)
        e_ll = ll @ wts
        e_d = dll @ wts
        e_dz = (dll * nodes[None, :]) @ wts          # E[f'(a) z]
        val = e_ll.sum() - 0.5 * np.sum(m ** 2 + sd ** 2) / v0 + np.sum(np.log(sd))
        g_m = x.T @ e_d - m / v0
        dvar = e_dz / (2 * np.maximum(sa, 1e-300))   # d E f / d var_a
        g_sd = 2 * sd * ((x ** 2).T @ dvar) - sd / v0 + 1 / sd
        return -val, -np.concatenate([g_m, g_sd * tp])

    x0 = np.concatenate([np.zeros(d), t.inverse(np.full(d, 0.1))])
    res = minimize(neg_elbo, x0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 5000, "gtol": 1e-9})
    if not res.success and np.max(np.abs(res.jac)) > 1e-4:
        raise RuntimeError(f"ELBO optimisation did not converge: {res.message}")
    return res.x


# ------------------------------------------------------------------------ App. J data

def correlation_matrix_alg_j1(d: int, rho: float, rng, alpha: float = 8.0,
                              beta: float = 10.0) -> np.ndarray:
    """Algorithm J.1 as printed: I_d plus K = floor(rho d(d-1)/2) random off-diagonal
    pairs set to +-c, c ~ Beta(alpha, beta). Returns C (d, d), symmetric, unit diagonal;
    it is **not** guaranteed positive semi-definite (see :func:`simulate_app_j`)."""
    check_count(d, "d", minimum=2)
    if not (0 <= rho <= 1):
        raise ValueError(f"rho must lie in [0, 1], got {rho!r}")
    check_positive(alpha, "alpha")
    check_positive(beta, "beta")
    rows, cols = np.triu_indices(d, k=1)
    k = int(np.floor(round(rho * d * (d - 1) / 2, 9)))   # floor without float slips
    pick = rng.choice(rows.size, size=k, replace=False)
    c = rng.beta(alpha, beta, size=k) * rng.choice([-1.0, 1.0], size=k)
    out = np.eye(d)
    out[rows[pick], cols[pick]] = c
    out[cols[pick], rows[pick]] = c
    return out


def simulate_app_j(d: int, rho: float, n: int, seed: int, *, repair: str = "none",
                   noise_std: float = 1.0):
    """Appendix J's data: x ~ N(0, D C D), w ~ N(0, I), y ~ N(x w, noise_std^2).

    Parameters
    ----------
    d, rho, n : dimension, correlation density, number of points (App. J: d in
        {100, 200}, rho in {0.2, 0.8}, N = 10,000).
    seed : int
    repair : {"none", "eigen-clip"}
        Algorithm J.1's matrix is usually indefinite, so "sample x ~ N(0, Sigma)" is
        undefined. "none" raises ValueError then (naming the smallest eigenvalue);
        "eigen-clip" sets eigenvalues below 1e-3 to 1e-3 and rescales to unit
        diagonal (our choice; the paper does not say what its code did).

    Returns
    -------
    x (n, d), y (n,), w (d,), info dict (smallest eigenvalue before repair, repair used).
    """
    check_count(n, "n")
    check_positive(noise_std, "noise_std")
    if repair not in ("none", "eigen-clip"):
        raise ValueError(f"repair must be 'none' or 'eigen-clip', got {repair!r}")
    rng = np.random.default_rng(seed)
    corr = correlation_matrix_alg_j1(d, rho, rng)
    lam_min = float(np.linalg.eigvalsh(corr)[0])
    if lam_min < 0:
        if repair == "none":
            raise ValueError(f"Algorithm J.1 gave an indefinite matrix (smallest eigenvalue "
                             f"{lam_min:.3g}) for d = {d}, rho = {rho}; pass repair="
                             "'eigen-clip' to repair it")
        vals, vecs = np.linalg.eigh(corr)
        corr = (vecs * np.maximum(vals, 1e-3)) @ vecs.T
        dd = np.sqrt(np.diag(corr))
        corr = corr / np.outer(dd, dd)
    scales = np.exp(rng.normal(0.0, 0.2, size=d))   # D_ii ~ exp(N(0, 0.2^2)) (step 2)
    cov = corr * np.outer(scales, scales)
    x = rng.multivariate_normal(np.zeros(d), cov, size=n, method="cholesky")
    w = rng.standard_normal(d)
    y = x @ w + noise_std * rng.standard_normal(n)
    return x, y, w, {"min_eigenvalue_alg_j1": lam_min, "repair": repair if lam_min < 0
                     else "not needed"}
