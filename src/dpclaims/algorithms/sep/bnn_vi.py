"""Baselines for DP-SEP's Bayesian neural network: Graves (2011) VI and an SGD point estimate.

The DP-SEP paper (``../shared/papers/dpsep_full_v0.txt`` Sec. 6.2;
``dpsep_extended_v1.txt`` Sec. 6.2 and Appendix C, Table 5) compares PBP-based
ADF/EP/SEP/DP-SEP with "a scalable VI method for neural networks described in
[Graves, 2011]" (v0, Sec. 6.2) and with "the point estimate (through the usual
stochastic gradient descent)" (v1, Appendix C). This module gives both, in numpy,
vectorised over a leading axis of ``R`` independent runs (each run has its own data,
minibatch order, initialisation and Monte Carlo noise); the only Python loop is over
sequential minibatch steps.

Model (v1 eqs. 5-12, with PBP's parametrisation)
------------------------------------------------
One hidden layer of ReLU units; every layer's input is augmented with a constant 1
(bias) and the pre-activation is divided by sqrt(n_inputs + 1), as in PBP
(Hernandez-Lobato & Adams 2015, Sec. 3), so that the weights are on the same scale as
in ``algorithms/sep/pbp.py``::

    a   = W0 [x; 1] / sqrt(d + 1)            W0: (H, d + 1)
    f(x) = w1 [relu(a); 1] / sqrt(H + 1)     w1: (H + 1,)

    "p(y|W0,w1, Xs, γ) = prod_{i=1}^{s} N(yi|z1,i, γ^{-1})"                  (v1 eq. 7)
    "p(W0) = prod_{i=1}^{hd} prod_j N(w0,ij |0, λ^{-1})"                     (v1 eq. 8)
    "p(w1) = prod_{k=1}^{hd} N(w1,k|0, λ^{-1})"                              (v1 eq. 9)
    "p(λ) = Gam(λ|αλ0, βλ0)",  "p(γ) = Gam(γ|αγ0, βγ0)"                      (v1 eqs. 10, 11)

with αλ0 = βλ0 = αγ0 = βγ0 = 6 (PBP's prior). One λ is shared by all weights (both
layers, biases included), as in eqs. (8)-(9).

Variational family (v1 eq. 12: "We use the same prior and posterior configurations as
in PBP in other comparison method such as ... a scalable VI method ... [Graves, 2011]")::

    q(W0, w1, λ, γ) = prod N(w | m, v) * Gam(λ | αλ, βλ) * Gam(γ | αγ, βγ)

ELBO and its gradient estimators (``estimator``)
------------------------------------------------
L(q) = sum_n E_q[log p(y_n | x_n, w, γ)] - KL(q(w) || p(w | λ)) (averaged over q(λ)) -
KL(q(λ) || p(λ)) - KL(q(γ) || p(γ)), estimated on a minibatch of B records by scaling
the data term by N / B and drawing ``n_mc`` weight samples w = m + sqrt(v) * eps per
run per step (one sample shared by the minibatch, as in Graves 2011 and Blundell et
al. 2015). The optimised parameters are (m, rho = log v).

``"graves"`` (default): Graves (2011), Sec. 3 and 5 (diagonal Gaussian posterior). The
  mean gradient is the Monte Carlo average of the ordinary backprop gradient at the
  sampled weights, grad_m L^E ~ (1/S) sum_k grad_w L^N(w^k, D); the variance gradient
  uses the identity grad_v E_q[L^N] = (1/2) E_q[grad_w^2 L^N] (Opper & Archambeau 2009)
  with Graves' diagonal Gauss-Newton / Fisher approximation of the second derivative
  by the sum over records of the squared per-record gradients,
  grad_v L^E ~ (1/2S) sum_k sum_{(x,y)} [grad_w L^N(w^k, x, y)]^2. This is biased
  (it is not the gradient of any fixed-noise objective) and is what Graves' paper
  describes; it is the reading of "the scalable VI method described in [Graves, 2011]".

``"reparameterization"``: the unbiased reparameterisation estimator (Blundell et al.
  2015, "Weight Uncertainty in Neural Networks", Sec. 3.1): the exact gradient of the
  single-draw ELBO estimate with the noise eps held fixed (grad_rho = g * eps * sqrt(v)/2).

The complexity (KL) terms are differentiated exactly in both.

Hyper-parameters
----------------
``prior="pbp"`` (default): λ has the Gam(6, 6) hyper-prior and a Gamma variational
  factor; given q(w) its optimal q(λ) is closed form, αλ = 6 + W/2,
  βλ = 6 + (1/2) sum_i (m_i^2 + v_i), and is set at every step (exact coordinate
  ascent; W = H(d+1) + H + 1 weights). E_q[λ] enters the KL gradient.

``prior="graves"``: Graves' adaptive Gaussian prior N(mu_p, sigma_p^2) shared by all
  weights, with the empirical-Bayes optimum of Graves (2011) Sec. 5,
  mu_p = mean_i m_i, sigma_p^2 = mean_i [v_i + (m_i - mu_p)^2], recomputed every step.

``prior=<float>``: a fixed prior precision λ, N(0, 1/λ).

``noise="gamma"`` (default): q(γ) = Gam(αγ, βγ) as in PBP. Its optimal value given q(w)
  is αγ = 6 + N/2, βγ = 6 + (1/2) sum_n E_q[(y_n - f(x_n))^2]; βγ is tracked by the
  stochastic natural-gradient step of stochastic variational inference (Hoffman et
  al. 2013, eq. 20 for a conjugate global factor), βγ <- (1 - r_t) βγ + r_t βγ_hat with
  βγ_hat the minibatch estimate (N/B scaling, the same weight samples) and
  r_t = max(``noise_step``, 1/(t+1)). The likelihood uses E[γ] = αγ/βγ and
  E[log γ] = digamma(αγ) - log βγ.

``noise="point"``: a point estimate of γ, the mode (αγ - 1)/βγ of the same
  Gamma (i.e. a MAP-II estimate under the Gam(6, 6) prior); the ELBO then carries
  log Gam(γ | 6, 6) in place of -KL(q(γ) || p(γ)).

Optimiser: Adam (Kingma & Ba 2015), or SGD with momentum (Graves 2011 used SGD with
momentum), on L(q)/N (ascent). Initialisation: m ~ N(0, 1) (the 1/sqrt(n+1) scaling
makes this a unit-variance pre-activation init), v = ``init_var``.

Predictive (``BnnVIFit.predict``): Monte Carlo over q(w) with ``n_predict`` weight draws
from a seed fixed at fit time: mean = sample mean of f(x), var = sample variance of f(x)
plus the noise variance, E_q[1/γ] = βγ/(αγ - 1) for ``"gamma"``, 1/γ for ``"point"``.

Settings of the experiment (what the sources say)
-------------------------------------------------
DP-SEP (v0 Sec. 6.2) uses "the same implementation protocol as in [Hernández-Lobato and
Adams, 2015]", 50 hidden units (100 for Protein and Year), "a total of T = 40 runs"
(epochs). PBP's paper (Sec. 5) compares with the VI method of Graves (2011) and with BP;
this module's defaults follow the DP-SEP paper for epochs (40) and width (50). The
minibatch size (32), learning rate (Adam, 1e-3), ``init_var`` and ``noise_step`` are this
module's choices: neither DP-SEP paper states them, and the PBP paper's text could not be
consulted when this module was written, so its VI/BP settings are NOT reproduced here.

Point estimate (:func:`fit_bnn_point`): the same network, minibatch Adam (or SGD) on
(1/2B) sum_batch (y - f(x))^2 + (weight_decay/2) ||theta||^2 (coupled L2, biases
included). Default weight_decay = 1e-4, an untuned choice: the DP-SEP paper gives no
value (PBP's BP baseline tuned it). The MAP reading λ/(γN) with λ = 1 and γ = 1 (1/N)
was tried and under-fits badly, because γ = 1 is far below the noise precision of
standardised targets. The predictive variance is the training residual variance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import digamma, gammaln

from dpclaims.analysis.validation import (
    check_count,
    check_finite_array,
    check_positive,
    check_probability,
)

ESTIMATORS = ("graves", "reparameterization")
PRIORS = ("pbp", "graves")
NOISES = ("gamma", "point")
OPTIMISERS = ("adam", "sgd")
#: PBP's Gamma(6, 6) hyper-priors on the prior precision λ and the noise precision γ.
ALPHA0 = 6.0
BETA0 = 6.0
_LOG_2PI = float(np.log(2.0 * np.pi))


# --------------------------------------------------------------------------- data


def _check_data(x_train, y_train, n_runs):
    """Return x (R, N, d), y (R, N) as float arrays; raise ValueError naming bad input."""
    x = check_finite_array(x_train, "x_train")
    y = check_finite_array(y_train, "y_train")
    if x.ndim == 2:
        n_runs = check_count(n_runs, "n_runs")
        if y.ndim != 1:
            raise ValueError(f"y_train must have shape (N,) when x_train is (N, d); got {y.shape}")
        x = np.broadcast_to(x, (n_runs,) + x.shape)
        y = np.broadcast_to(y, (n_runs,) + y.shape)
    elif x.ndim == 3:
        if y.ndim != 2:
            raise ValueError(
                f"y_train must have shape (R, N) when x_train is (R, N, d); got {y.shape}")
    else:
        raise ValueError(f"x_train must have shape (N, d) or (R, N, d), got {x.shape}")
    if y.shape != x.shape[:2]:
        raise ValueError(f"y_train shape {y.shape} does not match x_train shape {x.shape}")
    if x.shape[1] < 2:
        raise ValueError(f"x_train needs at least 2 records, got N = {x.shape[1]}")
    if x.shape[2] < 1:
        raise ValueError(f"x_train needs at least 1 feature, got d = {x.shape[2]}")
    return np.ascontiguousarray(x), np.ascontiguousarray(y)


def _check_predict_x(x, n_runs, d):
    x = check_finite_array(x, "x")
    if x.ndim == 2:
        x = np.broadcast_to(x, (n_runs,) + x.shape)
    if x.ndim != 3 or x.shape[0] != n_runs or x.shape[2] != d:
        raise ValueError(f"x must have shape (M, {d}) or ({n_runs}, M, {d}), got {x.shape}")
    return x


def _augment(x):
    """Append the bias input 1: (..., d) -> (..., d + 1)."""
    return np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)


def _rng(seed):
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def _epoch_orders(rng, n_runs, n):
    """One independent permutation of range(n) per run: (R, n)."""
    return rng.permuted(np.broadcast_to(np.arange(n), (n_runs, n)), axis=1)


# --------------------------------------------------------------------------- network


def _forward(w0, w1, xa):
    """Network outputs for sampled weights.

    w0 (R, S, H, D), w1 (R, S, H + 1), xa (R, B, D) with the bias column already
    appended (D = d + 1). Returns pre-activations a (R, S, B, H), augmented hidden
    units ha (R, S, B, H + 1) and outputs z (R, S, B).
    """
    c0 = 1.0 / np.sqrt(xa.shape[-1])
    c1 = 1.0 / np.sqrt(w1.shape[-1])
    a = c0 * (xa[:, None] @ np.swapaxes(w0, -1, -2))
    ha = np.concatenate([np.maximum(a, 0.0), np.ones(a.shape[:-1] + (1,))], axis=-1)
    z = c1 * (ha @ w1[..., None])[..., 0]
    return a, ha, z


def _backprop(w1, xa, a, ha, dz, squares):
    """Gradients of sum_b loss_b given dz = d loss_b / d z_b (R, S, B).

    Returns (g0 (R, S, H, D), g1 (R, S, H + 1)) summed over the batch and, if
    ``squares``, the sums over the batch of the squared per-record gradients
    (Graves' diagonal Gauss-Newton/Fisher term), else None for those.
    """
    c0 = 1.0 / np.sqrt(xa.shape[-1])
    c1 = 1.0 / np.sqrt(w1.shape[-1])
    delta = (c1 * dz)[..., None] * w1[:, :, None, :-1] * (a > 0)  # d loss / d a: (R,S,B,H)
    g1 = c1 * (dz[:, :, None, :] @ ha)[:, :, 0, :]
    g0 = c0 * (np.swapaxes(delta, -1, -2) @ xa[:, None])
    if not squares:
        return g0, g1, None, None
    s1 = c1**2 * ((dz**2)[:, :, None, :] @ ha**2)[:, :, 0, :]
    s0 = c0**2 * (np.swapaxes(delta**2, -1, -2) @ (xa**2)[:, None])
    return g0, g1, s0, s1


def _nll_grads(w0, w1, xa, y, e_gamma, *, squares=False):
    """Per-record negative log-likelihood loss (1/2) E[γ] (y - z)^2, its batch-summed
    gradients with respect to the weights, and optionally the squared per-record sums.

    w0 (R, S, H, D), w1 (R, S, H+1), xa (R, B, D), y (R, B), e_gamma (R,).
    Returns (z (R, S, B), g0, g1, s0, s1).
    """
    a, ha, z = _forward(w0, w1, xa)
    dz = e_gamma[:, None, None] * (z - y[:, None, :])
    g0, g1, s0, s1 = _backprop(w1, xa, a, ha, dz, squares)
    return z, g0, g1, s0, s1


# --------------------------------------------------------------------------- VI objective


def _prior_terms(m0, r0, m1, r1, prior):
    """KL(q(w) || p(w)) (+ KL(q(λ) || p(λ)) for "pbp") at the optimal hyper-parameters,
    and its exact gradients with respect to (m0, rho0, m1, rho1). Shapes (R, ...)."""
    v0, v1 = np.exp(r0), np.exp(r1)
    n_w = m0[0].size + m1[0].size
    sum_sq = (m0**2 + v0).sum(axis=(1, 2)) + (m1**2 + v1).sum(axis=1)
    sum_logv = r0.sum(axis=(1, 2)) + r1.sum(axis=1)
    if prior == "graves":
        mu_p = (m0.sum(axis=(1, 2)) + m1.sum(axis=1)) / n_w
        var_p = sum_sq / n_w - mu_p**2
        kl = 0.5 * (n_w * np.log(var_p) - sum_logv)  # sum_i (v_i+(m_i-mu_p)^2)/var_p = n_w
        prec, centre = 1.0 / var_p, mu_p
        hyper = {"prior_mean": mu_p, "prior_var": var_p}
    else:
        if prior == "pbp":
            a_l = ALPHA0 + 0.5 * n_w
            b_l = BETA0 + 0.5 * sum_sq
            e_l, e_log_l = a_l / b_l, digamma(a_l) - np.log(b_l)
            kl_l = _kl_gamma(a_l, b_l, ALPHA0, BETA0)
            hyper = {"lambda_alpha": np.full_like(b_l, a_l), "lambda_beta": b_l}
        else:
            e_l = np.full(m0.shape[0], float(prior))
            e_log_l, kl_l = np.log(e_l), 0.0
            hyper = {"lambda": e_l}
        kl = 0.5 * (e_l * sum_sq - n_w - sum_logv - n_w * e_log_l) + kl_l
        prec, centre = e_l, np.zeros_like(e_l)
    p0, p1 = prec[:, None, None], prec[:, None]
    c0, c1 = centre[:, None, None], centre[:, None]
    grads = (p0 * (m0 - c0), 0.5 * (p0 * v0 - 1.0), p1 * (m1 - c1), 0.5 * (p1 * v1 - 1.0))
    return kl, grads, hyper


def _kl_gamma(a, b, a0, b0):
    """KL(Gam(a, b) || Gam(a0, b0)), shape-rate parametrisation."""
    return ((a - a0) * digamma(a) - gammaln(a) + gammaln(a0) + a0 * (np.log(b) - np.log(b0))
            + a * (b0 - b) / b)


def _noise_moments(a_g, b_g, noise):
    """(E[γ], E[log γ], -KL or log-prior term, predictive noise variance), each (R,)."""
    if noise == "gamma":
        return (a_g / b_g, digamma(a_g) - np.log(b_g), -_kl_gamma(a_g, b_g, ALPHA0, BETA0),
                b_g / (a_g - 1.0))
    g = (a_g - 1.0) / b_g
    log_prior = (ALPHA0 * np.log(BETA0) - gammaln(ALPHA0) + (ALPHA0 - 1.0) * np.log(g)
                 - BETA0 * g)
    return g, np.log(g), log_prior, 1.0 / g


def elbo_estimate(params, xa, y, eps, n_total, *, estimator="reparameterization",
                  prior="pbp", e_gamma=None, e_log_gamma=None, noise_term=None):
    """Minibatch estimate of the ELBO and its gradient estimate for fixed noise draws.

    Parameters
    ----------
    params : tuple of arrays
        (m0 (R, H, D), rho0 (R, H, D), m1 (R, H+1), rho1 (R, H+1)); rho = log v.
        D = d + 1 (bias column included).
    xa : ndarray, shape (R, B, D)
        Minibatch inputs with the bias column 1 appended.
    y : ndarray, shape (R, B)
        Minibatch targets.
    eps : tuple of arrays
        (eps0 (R, S, H, D), eps1 (R, S, H+1)) standard normal draws; w = m + exp(rho/2) eps.
    n_total : int
        N, the training-set size (the data term is scaled by N / B).
    estimator : {"reparameterization", "graves"}
        See the module docstring. Only "reparameterization" is the exact gradient of the
        returned value.
    prior : {"pbp", "graves"} or float
        Weight prior; hyper-parameters at their closed-form optimum given q(w).
    e_gamma, e_log_gamma, noise_term : ndarray (R,), optional
        E[γ], E[log γ] and the ELBO's noise term (-KL(q(γ)||p(γ)) or log p(γ)); defaults
        1, 0, 0.

    Returns
    -------
    elbo : ndarray, shape (R,)
        The estimate of L(q) (nats, full-data scale).
    grads : tuple of arrays
        Estimated d elbo / d params, same shapes as ``params``.
    info : dict
        ``z`` (R, S, B) outputs at the sampled weights, hyper-parameters.

    References
    ----------
    Graves (2011), Secs. 3-5; Blundell et al. (2015), Sec. 3.1.
    """
    m0, r0, m1, r1 = params
    eps0, eps1 = eps
    n_runs, batch = m0.shape[0], xa.shape[1]
    if e_gamma is None:
        e_gamma, e_log_gamma, noise_term = np.ones(n_runs), np.zeros(n_runs), np.zeros(n_runs)
    s0, s1 = np.exp(0.5 * r0), np.exp(0.5 * r1)
    w0 = m0[:, None] + s0[:, None] * eps0
    w1 = m1[:, None] + s1[:, None] * eps1
    graves = estimator == "graves"
    z, g0, g1, q0, q1 = _nll_grads(w0, w1, xa, y, e_gamma, squares=graves)
    scale = n_total / batch
    sq_res = ((y[:, None, :] - z) ** 2).sum(axis=2).mean(axis=1)  # (R,)
    nll = 0.5 * (e_gamma * sq_res - batch * (e_log_gamma - _LOG_2PI))
    kl, kl_grads, hyper = _prior_terms(m0, r0, m1, r1, prior)
    elbo = -scale * nll - kl + noise_term
    gm0, gm1 = g0.mean(axis=1), g1.mean(axis=1)
    if graves:
        gr0 = 0.5 * q0.mean(axis=1) * s0**2
        gr1 = 0.5 * q1.mean(axis=1) * s1**2
    else:
        gr0 = 0.5 * (g0 * eps0).mean(axis=1) * s0
        gr1 = 0.5 * (g1 * eps1).mean(axis=1) * s1
    grads = (-scale * gm0 - kl_grads[0], -scale * gr0 - kl_grads[1],
             -scale * gm1 - kl_grads[2], -scale * gr1 - kl_grads[3])
    return elbo, grads, {"z": z, "sq_res": sq_res, **hyper}


# --------------------------------------------------------------------------- optimiser


class _Optimiser:
    """Adam (Kingma & Ba 2015, Algorithm 1) or SGD with momentum, for ascent or descent."""

    def __init__(self, kind, shapes, learning_rate, momentum=0.9, beta1=0.9, beta2=0.999,
                 eps=1e-8):
        self.kind, self.lr, self.mom = kind, learning_rate, momentum
        self.b1, self.b2, self.eps, self.t = beta1, beta2, eps, 0
        self.m = [np.zeros(s) for s in shapes]
        self.v = [np.zeros(s) for s in shapes] if kind == "adam" else None

    def step(self, params, grads, sign):
        """Return the updated params; ``sign`` = +1 ascends, -1 descends."""
        self.t += 1
        out = []
        for i, (p, g) in enumerate(zip(params, grads, strict=True)):
            if self.kind == "adam":
                self.m[i] = self.b1 * self.m[i] + (1 - self.b1) * g
                self.v[i] = self.b2 * self.v[i] + (1 - self.b2) * g * g
                mhat = self.m[i] / (1 - self.b1**self.t)
                vhat = self.v[i] / (1 - self.b2**self.t)
                out.append(p + sign * self.lr * mhat / (np.sqrt(vhat) + self.eps))
            else:
                self.m[i] = self.mom * self.m[i] + g
                out.append(p + sign * self.lr * self.m[i])
        return out


# --------------------------------------------------------------------------- fits


@dataclass(frozen=True)
class BnnVIFit:
    """A fitted mean-field Gaussian q(W0, w1) (+ q(γ)) for ``R`` runs.

    Attributes
    ----------
    m0, v0 : ndarray, shape (R, H, d + 1)
        Means and variances of the input-layer weights (last column: bias).
    m1, v1 : ndarray, shape (R, H + 1)
        Means and variances of the output weights (last entry: bias).
    noise_var : ndarray, shape (R,)
        Predictive noise variance E_q[1/γ] ("gamma") or 1/γ ("point"), y units squared.
    info : dict
        ``elbo_per_epoch`` (R, epochs): mean over the epoch's steps of the minibatch ELBO
        estimate divided by N (nats per record); ``gamma_alpha``, ``gamma_beta`` (R,);
        the final prior hyper-parameters; the settings used.
    """

    m0: np.ndarray
    v0: np.ndarray
    m1: np.ndarray
    v1: np.ndarray
    noise_var: np.ndarray
    predict_seed: int
    n_predict: int
    info: dict = field(default_factory=dict)

    def predict(self, x, *, n_samples=None, seed=None):
        """Monte Carlo predictive mean and variance over q(w).

        Parameters
        ----------
        x : array, shape (M, d) or (R, M, d)
            Test inputs (same standardisation as the training inputs).
        n_samples : int, optional
            Weight draws per run (default ``n_predict`` given at fit time).
        seed : int, optional
            Seed of the draws (default fixed at fit time: same fit, same prediction).

        Returns
        -------
        mean, var : ndarray, shape (R, M)
            Predictive mean and variance in the units of ``y_train``; ``var`` includes
            the noise variance.

        Raises
        ------
        ValueError
            If ``x`` has the wrong shape or non-finite values, or ``n_samples`` < 2.
        """
        n_runs, _, d1 = self.m0.shape
        xa = _augment(_check_predict_x(x, n_runs, d1 - 1))
        n_s = check_count(self.n_predict if n_samples is None else n_samples, "n_samples", 2)
        rng = np.random.default_rng(self.predict_seed if seed is None else seed)
        total = np.zeros(xa.shape[:2])
        total_sq = np.zeros(xa.shape[:2])
        chunk = 10
        for start in range(0, n_s, chunk):
            s = min(chunk, n_s - start)
            w0 = self.m0[:, None] + np.sqrt(self.v0)[:, None] * rng.standard_normal(
                (n_runs, s) + self.m0.shape[1:])
            w1 = self.m1[:, None] + np.sqrt(self.v1)[:, None] * rng.standard_normal(
                (n_runs, s) + self.m1.shape[1:])
            z = _forward(w0, w1, xa)[2]
            total += z.sum(axis=1)
            total_sq += (z**2).sum(axis=1)
        mean = total / n_s
        var = np.maximum(total_sq / n_s - mean**2, 0.0) * n_s / (n_s - 1)
        return mean, var + self.noise_var[:, None]


@dataclass(frozen=True)
class BnnPointFit:
    """A point-estimate network for ``R`` runs.

    Attributes
    ----------
    w0 : ndarray, shape (R, H, d + 1)
    w1 : ndarray, shape (R, H + 1)
    noise_var : ndarray, shape (R,)
        Training residual variance, mean of (y - f(x))^2 over the training set.
    info : dict
        ``loss_per_epoch`` (R, epochs): mean minibatch loss; the settings used.
    """

    w0: np.ndarray
    w1: np.ndarray
    noise_var: np.ndarray
    info: dict = field(default_factory=dict)

    def predict(self, x):
        """Network output and the residual noise variance.

        Parameters
        ----------
        x : array, shape (M, d) or (R, M, d)

        Returns
        -------
        mean, var : ndarray, shape (R, M)
            f(x) in the units of ``y_train``; ``var`` is ``noise_var`` broadcast.

        Raises
        ------
        ValueError
            If ``x`` has the wrong shape or non-finite values.
        """
        n_runs, _, d1 = self.w0.shape
        xa = _augment(_check_predict_x(x, n_runs, d1 - 1))
        z = _forward(self.w0[:, None], self.w1[:, None], xa)[2][:, 0]
        return z, np.broadcast_to(self.noise_var[:, None], z.shape).copy()


def _check_common(n_hidden, epochs, batch_size, learning_rate, optimizer, n):
    n_hidden = check_count(n_hidden, "n_hidden")
    epochs = check_count(epochs, "epochs")
    batch_size = check_count(batch_size, "batch_size")
    if batch_size > n:
        raise ValueError(f"batch_size must be <= N = {n}, got {batch_size}")
    learning_rate = check_positive(learning_rate, "learning_rate")
    if optimizer not in OPTIMISERS:
        raise ValueError(f"optimizer must be one of {OPTIMISERS}, got {optimizer!r}")
    return n_hidden, epochs, batch_size, learning_rate


def _batches(order, batch_size):
    n = order.shape[1]
    for start in range(0, n, batch_size):
        yield order[:, start:start + batch_size]


def _gather(x, y, idx):
    return (np.take_along_axis(x, idx[:, :, None], axis=1),
            np.take_along_axis(y, idx, axis=1))


def fit_bnn_vi(x_train, y_train, *, n_hidden=50, epochs=40, batch_size=32,
               learning_rate=1e-3, seed=0, n_mc=1, estimator="graves", prior="pbp",
               noise="gamma", optimizer="adam", init_var=1e-3, noise_step=0.1,
               n_predict=100, n_runs=1):
    """Mean-field Gaussian variational inference for the one-hidden-layer BNN (Graves 2011).

    Parameters
    ----------
    x_train : array, shape (N, d) or (R, N, d)
        Standardised training inputs; a 2-D array is shared by ``n_runs`` runs.
    y_train : array, shape (N,) or (R, N)
        Standardised training targets.
    n_hidden : int
        Hidden ReLU units H (DP-SEP: 50; 100 for Protein and Year).
    epochs : int
        Passes over the data (DP-SEP v0 Sec. 6.2: T = 40).
    batch_size : int
        Records per step B (the last step of an epoch takes the N mod B remainder).
    learning_rate : float
        Adam (or SGD) step size on L(q) / N.
    seed : int, SeedSequence or numpy Generator
        Initialisation, minibatch orders, weight noise, and the predictive seed.
    n_mc : int
        Weight draws per run per step S.
    estimator : {"graves", "reparameterization"}
        Gradient estimator (module docstring).
    prior : {"pbp", "graves"} or float > 0
        Weight prior (module docstring); a float is a fixed precision λ.
    noise : {"gamma", "point"}
        Gamma variational factor or point (MAP-II) estimate of the noise precision γ.
    optimizer : {"adam", "sgd"}
        Adam, or SGD with momentum 0.9.
    init_var : float
        Initial variance v of every weight factor.
    noise_step : float in (0, 1]
        Floor of the SVI step size for βγ.
    n_predict : int
        Default number of weight draws in ``predict``.
    n_runs : int
        R when ``x_train`` is 2-D (ignored otherwise).

    Returns
    -------
    BnnVIFit
        With ``predict(x) -> (mean (R, M), var (R, M))`` and ``info``.

    Raises
    ------
    ValueError
        Non-finite or mis-shaped data, non-positive sizes or rates, unknown options.

    References
    ----------
    A. Graves, "Practical variational inference for neural networks", NIPS 2011.
    C. Blundell et al., "Weight uncertainty in neural networks", ICML 2015.
    J. M. Hernandez-Lobato and R. P. Adams, "Probabilistic backpropagation", ICML 2015.
    DP-SEP: ``dpsep_full_v0.txt`` Sec. 6.2, ``dpsep_extended_v1.txt`` eqs. (5)-(12).
    """
    x, y = _check_data(x_train, y_train, n_runs)
    n_runs, n, d = x.shape
    n_hidden, epochs, batch_size, learning_rate = _check_common(
        n_hidden, epochs, batch_size, learning_rate, optimizer, n)
    n_mc = check_count(n_mc, "n_mc")
    n_predict = check_count(n_predict, "n_predict", 2)
    init_var = check_positive(init_var, "init_var")
    noise_step = check_probability(noise_step, "noise_step", open_interval=False)
    if noise_step == 0.0:
        raise ValueError(f"noise_step must lie in (0, 1], got {noise_step!r}")
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    if isinstance(prior, str):
        if prior not in PRIORS:
            raise ValueError(f"prior must be one of {PRIORS} or a positive float, got {prior!r}")
    else:
        prior = check_positive(prior, "prior")
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")

    rng = _rng(seed)
    xa_all = _augment(x)
    dim = d + 1
    m0 = rng.standard_normal((n_runs, n_hidden, dim))
    m1 = rng.standard_normal((n_runs, n_hidden + 1))
    r0 = np.full_like(m0, np.log(init_var))
    r1 = np.full_like(m1, np.log(init_var))
    params = [m0, r0, m1, r1]
    opt = _Optimiser(optimizer, [p.shape for p in params], learning_rate)
    a_g = ALPHA0 + 0.5 * n
    b_g = np.full(n_runs, BETA0 + 0.5 * n)  # overwritten at t = 0 (r_0 = 1)
    elbo_hist = np.zeros((n_runs, epochs))
    t = 0
    for epoch in range(epochs):
        order = _epoch_orders(rng, n_runs, n)
        acc, steps = np.zeros(n_runs), 0
        for idx in _batches(order, batch_size):
            xb, yb = _gather(xa_all, y, idx)
            eps = (rng.standard_normal((n_runs, n_mc, n_hidden, dim)),
                   rng.standard_normal((n_runs, n_mc, n_hidden + 1)))
            # SVI step for q(γ) on the residuals at this step's weight draws.
            w0 = params[0][:, None] + np.exp(0.5 * params[1])[:, None] * eps[0]
            w1 = params[2][:, None] + np.exp(0.5 * params[3])[:, None] * eps[1]
            z = _forward(w0, w1, xb)[2]
            b_hat = BETA0 + 0.5 * (n / idx.shape[1]) * ((yb[:, None] - z) ** 2).sum(2).mean(1)
            rate = max(noise_step, 1.0 / (t + 1))
            b_g = (1.0 - rate) * b_g + rate * b_hat
            e_g, e_log_g, noise_term, _ = _noise_moments(a_g, b_g, noise)
            elbo, grads, _ = elbo_estimate(
                tuple(params), xb, yb, eps, n, estimator=estimator, prior=prior,
                e_gamma=e_g, e_log_gamma=e_log_g, noise_term=noise_term)
            params = opt.step(params, [g / n for g in grads], +1.0)
            acc += elbo / n
            steps += 1
            t += 1
        elbo_hist[:, epoch] = acc / steps
    m0, r0, m1, r1 = params
    _, _, hyper = _prior_terms(m0, r0, m1, r1, prior)
    noise_var = _noise_moments(a_g, b_g, noise)[3]
    info = {
        "elbo_per_epoch": elbo_hist,
        "gamma_alpha": np.full(n_runs, a_g),
        "gamma_beta": b_g,
        **hyper,
        "settings": {"n_hidden": n_hidden, "epochs": epochs, "batch_size": batch_size,
                     "learning_rate": learning_rate, "n_mc": n_mc, "estimator": estimator,
                     "prior": prior, "noise": noise, "optimizer": optimizer,
                     "init_var": init_var, "noise_step": noise_step},
    }
    return BnnVIFit(m0=m0, v0=np.exp(r0), m1=m1, v1=np.exp(r1), noise_var=noise_var,
                    predict_seed=int(rng.integers(2**63)), n_predict=n_predict, info=info)


def point_loss(params, xa, y, weight_decay):
    """Point-estimate minibatch loss and its gradient.

    L(theta) = (1/2B) sum_b (y_b - f(x_b))^2 + (weight_decay/2) ||theta||^2.

    Parameters
    ----------
    params : (w0 (R, H, D), w1 (R, H + 1))
    xa : ndarray, shape (R, B, D), bias column appended.
    y : ndarray, shape (R, B)
    weight_decay : float >= 0

    Returns
    -------
    loss : ndarray, shape (R,)
    grads : (g0 (R, H, D), g1 (R, H + 1))
    """
    w0, w1 = params
    batch = xa.shape[1]
    z, g0, g1, _, _ = _nll_grads(w0[:, None], w1[:, None], xa, y, np.full(w0.shape[0], 1.0))
    loss = (0.5 * ((y - z[:, 0]) ** 2).mean(axis=1)
            + 0.5 * weight_decay * ((w0**2).sum(axis=(1, 2)) + (w1**2).sum(axis=1)))
    return loss, (g0[:, 0] / batch + weight_decay * w0, g1[:, 0] / batch + weight_decay * w1)


def fit_bnn_point(x_train, y_train, *, n_hidden=50, epochs=40, batch_size=32,
                  learning_rate=1e-3, weight_decay=1e-4, seed=0, optimizer="adam",
                  n_runs=1):
    """Point estimate of the same network by minibatch SGD/Adam with L2 weight decay.

    "the point estimate (through the usual stochastic gradient descent)"
    (DP-SEP ``dpsep_extended_v1.txt`` Sec. 6.2 and Appendix C, Table 5).

    Parameters
    ----------
    x_train : array, shape (N, d) or (R, N, d)
    y_train : array, shape (N,) or (R, N)
    n_hidden, epochs, batch_size : int
    learning_rate : float
    weight_decay : float >= 0
        L2 coefficient (default 1e-4, untuned; see the module docstring).
    seed : int, SeedSequence or numpy Generator
    optimizer : {"adam", "sgd"}
        Adam, or SGD with momentum 0.9.
    n_runs : int
        R when ``x_train`` is 2-D.

    Returns
    -------
    BnnPointFit
        ``predict(x) -> (mean (R, M), var (R, M))``, var the training residual variance.

    Raises
    ------
    ValueError
        Non-finite or mis-shaped data, non-positive sizes or rates, negative weight decay.
    """
    x, y = _check_data(x_train, y_train, n_runs)
    n_runs, n, d = x.shape
    n_hidden, epochs, batch_size, learning_rate = _check_common(
        n_hidden, epochs, batch_size, learning_rate, optimizer, n)
    wd = check_finite_array(weight_decay, "weight_decay", ndim=0)
    if wd < 0:
        raise ValueError(f"weight_decay must be >= 0, got {weight_decay!r}")
    weight_decay = float(wd)
    rng = _rng(seed)
    xa_all = _augment(x)
    params = [rng.standard_normal((n_runs, n_hidden, d + 1)),
              rng.standard_normal((n_runs, n_hidden + 1))]
    opt = _Optimiser(optimizer, [p.shape for p in params], learning_rate)
    loss_hist = np.zeros((n_runs, epochs))
    for epoch in range(epochs):
        acc, steps = np.zeros(n_runs), 0
        for idx in _batches(_epoch_orders(rng, n_runs, n), batch_size):
            xb, yb = _gather(xa_all, y, idx)
            loss, grads = point_loss(params, xb, yb, weight_decay)
            params = opt.step(params, grads, -1.0)
            acc += loss
            steps += 1
        loss_hist[:, epoch] = acc / steps
    w0, w1 = params
    z = _forward(w0[:, None], w1[:, None], xa_all)[2][:, 0]
    noise_var = ((y - z) ** 2).mean(axis=1)
    info = {"loss_per_epoch": loss_hist,
            "settings": {"n_hidden": n_hidden, "epochs": epochs, "batch_size": batch_size,
                         "learning_rate": learning_rate, "weight_decay": weight_decay,
                         "optimizer": optimizer}}
    return BnnPointFit(w0=w0, w1=w1, noise_var=noise_var, info=info)
