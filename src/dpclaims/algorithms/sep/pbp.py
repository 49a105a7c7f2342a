"""Probabilistic backpropagation (PBP) with ADF, EP, SEP, clipped SEP and DP-SEP sites.

The model (DP-SEP v1 Sec. 6.2, eqs. 5-12; Hernandez-Lobato & Adams 2015, "PBP")
-------------------------------------------------------------------------------
One hidden layer of ReLU units, linear output, every layer's input augmented with a
constant 1 (bias) and pre-activations scaled by 1/sqrt(n_in), n_in = inputs incl. bias
(PBP Sec. 3.2 / its code). Priors: w ~ N(0, lambda^{-1}) for every weight (v1 eqs. 8-9),
lambda ~ Gam(alpha0_lambda, beta0_lambda) (eq. 10), y ~ N(z, gamma^{-1}) (eq. 7),
gamma ~ Gam(alpha0_gamma, beta0_gamma) (eq. 11). q is factorised (eq. 12): a Gaussian
N(m, v) per weight and Gamma factors for lambda and gamma. Defaults are PBP's code:
alpha0 = beta0 = 6 for both Gammas (``a = 2 * 3``, ``b = 2 * 3 * var_targets`` with
var_targets = 1 on standardised targets); initial weight means ~ N(0, 1/(n_in)) with
n_in incl. bias (PBP: ``randn / sqrt(size_in + 1)``), initial variances beta0/(alpha0-1).

Weight vector and natural parameters
------------------------------------
Weights are flattened as [W1 (H, d+1) row-major, w2 (H+1)], W = H(d+1) + H + 1. The
natural-parameter vector of a Gaussian-Gamma factor (site or q) is

    theta = [m/v (W), 1/v (W), alpha - 1, -beta]          (P = 2W + 2 entries)

where the last two entries are the natural parameters of the noise-precision Gamma
Gam(gamma | alpha, beta) ∝ gamma^(alpha-1) exp(-beta gamma). This whole vector is what
SEP's site f, EP's sites f_n, and DP-SEP's clipped/noised quantities are: the Gamma
site of the noise precision is data-dependent and is therefore clipped and noised with
the weights (option ``noise_precision="learn"``). With ``noise_precision="fixed"`` the
Gamma is kept at its (public) prior for every method and its two entries of the site
are identically zero.

One datapoint's update (PBP Sec. 3 / its code)
-----------------------------------------------
Moments propagate forward (:func:`forward_moments`); with V = v_z + beta/(alpha-1),

    log Z = log N(y | m_z, V)                 (PBP's Gaussian approximation of the t)

and the gradients of log Z w.r.t. every (m, v) are computed analytically
(:func:`log_z_and_grads`). The moment-matched ("projected") q is (PBP eqs. 9-10)

    m_new = m + v dlogZ/dm,    v_new = v - v^2 [(dlogZ/dm)^2 - 2 dlogZ/dv]

and the noise Gamma (PBP eqs. with Z1, Z2 from alpha+1, alpha+2 i.e. Gam(alpha+1,.),
Gam(alpha+2,.), giving V1 = v_z + beta/alpha, V2 = v_z + beta/(alpha+1))

    alpha_new = [Z Z2 / Z1^2 (alpha+1)/alpha - 1]^{-1}
    beta_new  = [Z2/Z1 (alpha+1)/beta - Z1/Z alpha/beta]^{-1}.

PBP reverts any weight whose new variance is <= 1e-100 or NaN (``remove_invalid_
updates``); the same is done here for every method (counted: ``skipped_weights``), and a
Gamma update that is non-finite or has alpha_new <= 1 or beta_new <= 0 is skipped too
(counted: ``skipped_gamma``).

Prior factors (PBP's ``refine_prior``)
--------------------------------------
After every pass over the data, as PBP does, the prior factors N(w|0, 1/lambda) are
refined by EP, one weight after the other (sequential over weights, vectorised over
runs), each with a stored Gaussian site (on w) and Gamma site (on lambda), and the
global q(lambda) updated after each weight; the EP step is skipped unless the cavity
has 0 < v_cav < 1e6, beta_cav > 0, alpha_cav > 1 (PBP's conditions; counted:
``prior_skips``). Initial prior sites are PBP's: Gaussian site precision
(alpha0-1)/beta0, mean part 0, Gamma site 0. ``refine_prior=False`` turns this off.
In the SEP family the prior sites are theta_0 (the p0 of q = p0 f^N); refining them is
post-processing of released quantities, so privacy is unaffected.

Site updates (``method``)
-------------------------
``"adf"``
    PBP as published: q is updated directly by the projection above.
``"ep"``
    One site per datapoint (natural parameters, memory R x N x P floats), cavity
    q - f_n; the new site is proj[tilted] - cavity (optionally damped by ``damping``).
    A site may have negative precision (as in EP); a step whose cavity has any
    non-positive variance or an invalid Gamma (alpha <= 1 or beta <= 0) is skipped for
    that run (counted: ``skipped_steps``), as PBP/EP implementations do.
``"sep"``
    One shared site f, q = p0 f^N, cavity q_{-1} = p0 f^{N-1}, f_n = proj[tilted] / cavity,
    f <- f^{1 - g/N} f_n^{g/N} with g = ``damping`` (default 1: "damping factor 1/N").
``"sep-clipped"`` / ``"dp-sep"``
    DP-SEP Algorithm 3 (v0) on theta above, following
    :class:`dpclaims.algorithms.sep.sep.DPSEPParams` and its READINGS exactly: theta_fn is
    clipped to ||theta_fn|| <= C (step 6), theta_new from
    :func:`dpclaims.algorithms.sep.sep.dpsep_theta_new` (eq. 4 as printed: damping g/N^2;
    SEP-invariant: g/N), Gaussian noise of std ``DPSEPParams.noise_std(N)`` (step 8:
    sigma 2gC/N for "as-printed" and "sep-invariant", sigma 2gC for
    "sep-invariant-recalibrated"; none for sep-clipped), and f = clip((theta~_new -
    theta_0)/N, C) (step 9).

In the SEP family a cavity precision below ``pd_floor`` (or a Gamma cavity with
alpha - 1 < pd_floor or beta < pd_floor) is raised to the floor (v1 Sec. 3.3's PD
projection; per coordinate since q is factorised); the run-steps with any projection
and the projected coordinates are counted. A weight whose moment matching is invalid
gets theta_fn := theta_f for that weight (no change), inside the clipped vector.
PBP's random initial means m_0 (symmetry breaking) are data-independent and stay in q
for ever, as in PBP: in EP as an extra term of q, in the SEP family as a fixed term
m_0/v_0 of theta_0 (q = theta_0 + N theta_f, f starts at 0, so q_0 is PBP's). (Putting
them in the initial site instead lets SEP average them away within an epoch, and it
then fits markedly worse.)

Deviations / readings worth stating
-----------------------------------
* Alg. 3 requires ||theta_0|| <= C; PBP's prior has ||theta_0|| ~ sqrt(W) (alpha0-1)/beta0
  (about 20 for kin8nm), so with C = 1 that requirement cannot hold; it is not needed by
  Prop. 1's proof (theta_0 cancels) and is not enforced; its value is reported in
  ``info["prior_norm"]``.
* The paper does not say which vector is clipped; the vector above (all weights and the
  noise-precision Gamma) is this module's choice.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.special import erfcx, ndtr

from dpclaims.algorithms.sep.sep import DPSEPParams, dpsep_theta_new
from dpclaims.analysis.gaussian import clip_to_norm
from dpclaims.analysis.validation import check_count, check_finite_array, check_positive

METHODS = ("adf", "ep", "sep", "sep-clipped", "dp-sep")
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_INVALID_V = 1e-100  # PBP's remove_invalid_updates threshold


# --------------------------------------------------------------------------- moments
def relu_moments(mean, var):
    """Mean and variance of max(0, a) for a ~ N(mean, var) (PBP Sec. 3.2).

    With alpha = mean/sqrt(var) and gamma = phi(alpha)/Phi(alpha) (computed through
    erfcx, stable for all alpha):  m_a = Phi(alpha)(mean + sqrt(var) gamma),
    v_a = m_a (mean + sqrt(var) gamma) Phi(-alpha) + Phi(alpha) var (1 - gamma(gamma+alpha)).

    Parameters
    ----------
    mean, var : array_like, broadcastable; var > 0.

    Returns
    -------
    (m_a, v_a) : ndarrays of the broadcast shape.
    """
    m_a, v_a, _ = _relu(np.asarray(mean, float), np.asarray(var, float))
    return m_a, v_a


def _relu(m, v):
    s = np.sqrt(v)
    alpha = m / s
    cdf = ndtr(alpha)
    cdf_neg = ndtr(-alpha)
    pdf = np.exp(-0.5 * alpha * alpha) / _SQRT_2PI
    with np.errstate(over="ignore"):
        gam = math.sqrt(2.0 / math.pi) / erfcx(-alpha / math.sqrt(2.0))
    v_aux = m + s * gam
    m_a = cdf * v_aux
    v_a = m_a * v_aux * cdf_neg + cdf * v * (1.0 - gam * (gam + alpha))
    return m_a, v_a, (s, cdf, cdf_neg, pdf)


def _split(wvec, n_hidden, n_in1):
    k = n_hidden * n_in1
    lead = wvec.shape[:-1]
    return wvec[..., :k].reshape(*lead, n_hidden, n_in1), wvec[..., k:]


def _n_weights(d, n_hidden):
    return n_hidden * (d + 1) + n_hidden + 1


def forward_moments(m_w, v_w, x, n_hidden):
    """Mean and variance of the network output z under factorised Gaussian weights.

    Parameters
    ----------
    m_w, v_w : arrays (R, W)
        Weight means and variances, layout of the module docstring.
    x : array (M, d) or (R, M, d)
        Deterministic inputs (standardised units).
    n_hidden : int

    Returns
    -------
    (m_z, v_z) : arrays (R, M)

    Notes
    -----
    PBP Sec. 3.2: pre-activation mean (M1 x~)/sqrt(d+1), variance (V1 x~^2)/(d+1); ReLU
    moments (:func:`relu_moments`); output mean (m2 . a~)/sqrt(H+1), variance
    [v2 . (m_a~^2 + v_a~) + m2^2 . v_a~]/(H+1). Exact for a single input, since the
    hidden units are independent given x.
    """
    m_w = np.asarray(m_w, float)
    v_w = np.asarray(v_w, float)
    x = np.asarray(x, float)
    d = x.shape[-1]
    n1, n2 = d + 1, n_hidden + 1
    xa = np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)
    if xa.ndim == 2:
        xa = np.broadcast_to(xa, (m_w.shape[0],) + xa.shape)
    m1, m2 = _split(m_w, n_hidden, n1)
    v1, v2 = _split(v_w, n_hidden, n1)
    m_lin = np.matmul(xa, np.swapaxes(m1, 1, 2)) / math.sqrt(n1)  # (R, M, H)
    v_lin = np.matmul(xa * xa, np.swapaxes(v1, 1, 2)) / n1
    m_a, v_a, _ = _relu(m_lin, v_lin)
    m2h, v2h = m2[:, None, :n_hidden], v2[:, None, :n_hidden]
    m_z = ((m2h * m_a).sum(-1) + m2[:, None, n_hidden]) / math.sqrt(n2)
    v_z = ((v2h * (m_a * m_a + v_a)).sum(-1) + v2[:, None, n_hidden]
           + (m2h * m2h * v_a).sum(-1)) / n2
    return m_z, v_z


def log_z_and_grads(m_w, v_w, x, y, alpha, beta, n_hidden):
    """log Z of one datapoint per run and its gradients w.r.t. every weight's (m, v).

    Parameters
    ----------
    m_w, v_w : arrays (R, W)
    x : array (R, d); y : array (R,)
    alpha, beta : arrays (R,)
        Noise-precision Gamma (alpha > 1, beta > 0).
    n_hidden : int

    Returns
    -------
    dict with ``log_z`` (R,) = log N(y | m_z, v_z + beta/(alpha-1)) (PBP's
    approximation, incl. the -log(2 pi)/2 constant), ``grad_m``, ``grad_v`` (R, W),
    ``m_z``, ``v_z`` (R,).

    Notes
    -----
    Reverse-mode differentiation of :func:`forward_moments` written out by hand; for a
    ReLU of N(m, v): dm_a/dm = Phi, dm_a/dv = phi/(2 s), dv_a/dm = 2 m_a Phi(-alpha),
    dv_a/dv = Phi - m_a phi / s (from E[a^2] = (m^2+v)Phi + m s phi, whose derivatives
    are 2 m_a and Phi).
    """
    n_runs = m_w.shape[0]
    d = x.shape[-1]
    n1, n2 = d + 1, n_hidden + 1
    r1, r2 = math.sqrt(n1), math.sqrt(n2)
    xa = np.empty((n_runs, n1))
    xa[:, :d] = x
    xa[:, d] = 1.0
    xa2 = xa * xa
    m1, m2 = _split(m_w, n_hidden, n1)
    v1, v2 = _split(v_w, n_hidden, n1)
    m_lin = np.matmul(m1, xa[:, :, None])[..., 0] / r1  # (R, H)
    v_lin = np.matmul(v1, xa2[:, :, None])[..., 0] / n1
    m_a, v_a, (s, cdf, cdf_neg, pdf) = _relu(m_lin, v_lin)
    m2h, v2h = m2[:, :n_hidden], v2[:, :n_hidden]
    m_z = ((m2h * m_a).sum(-1) + m2[:, n_hidden]) / r2
    e_a2 = m_a * m_a + v_a
    v_z = ((v2h * e_a2).sum(-1) + v2[:, n_hidden] + (m2h * m2h * v_a).sum(-1)) / n2
    big_v = v_z + beta / (alpha - 1.0)
    resid = y - m_z
    log_z = -0.5 * np.log(2 * math.pi * big_v) - 0.5 * resid * resid / big_v
    d_mz = resid / big_v
    d_vz = 0.5 * (resid * resid / big_v - 1.0) / big_v
    grad_m = np.empty_like(m_w)
    grad_v = np.empty_like(v_w)
    g_m1, g_m2 = _split(grad_m, n_hidden, n1)
    g_v1, g_v2 = _split(grad_v, n_hidden, n1)
    dmz, dvz = d_mz[:, None], d_vz[:, None]
    g_m2[:, :n_hidden] = dmz * m_a / r2 + dvz * 2.0 * m2h * v_a / n2
    g_m2[:, n_hidden] = d_mz / r2
    g_v2[:, :n_hidden] = dvz * e_a2 / n2
    g_v2[:, n_hidden] = d_vz / n2
    d_ma = dmz * m2h / r2 + dvz * 2.0 * v2h * m_a / n2
    d_va = dvz * (v2h + m2h * m2h) / n2
    d_mlin = d_ma * cdf + d_va * 2.0 * m_a * cdf_neg
    d_vlin = d_ma * pdf / (2.0 * s) + d_va * (cdf - m_a * pdf / s)
    g_m1[...] = d_mlin[:, :, None] * xa[:, None, :] / r1
    g_v1[...] = d_vlin[:, :, None] * xa2[:, None, :] / n1
    return {"log_z": log_z, "grad_m": grad_m, "grad_v": grad_v, "m_z": m_z, "v_z": v_z}


def adf_weight_update(m, v, grad_m, grad_v):
    """PBP's moment-matching update (PBP eqs. 9-10), elementwise.

    m_new = m + v dlogZ/dm;  v_new = v - v^2 [(dlogZ/dm)^2 - 2 dlogZ/dv].
    """
    return m + v * grad_m, v - v * v * (grad_m * grad_m - 2.0 * grad_v)


def gamma_update(v_z, resid, alpha, beta):
    """PBP's ADF update of the noise-precision Gamma from Z, Z1, Z2 (arrays (R,)).

    log Z_k = log N(resid | 0, v_z + beta/(alpha - 1 + k)), k = 0, 1, 2; then
    alpha_new = 1 / (exp(logZ2 - 2 logZ1 + logZ)(alpha+1)/alpha - 1),
    beta_new = 1 / (exp(logZ2 - logZ1)(alpha+1)/beta - exp(logZ1 - logZ) alpha/beta).
    """
    lz = [-0.5 * (np.log(v_z + beta / (alpha - 1.0 + k))
                  + resid * resid / (v_z + beta / (alpha - 1.0 + k))) for k in range(3)]
    with np.errstate(all="ignore"):
        a_new = 1.0 / (np.exp(lz[2] - 2 * lz[1] + lz[0]) * (alpha + 1) / alpha - 1.0)
        b_new = 1.0 / (np.exp(lz[2] - lz[1]) * (alpha + 1) / beta
                       - np.exp(lz[1] - lz[0]) * alpha / beta)
    return a_new, b_new


def _project(m_c, v_c, a_c, b_c, x, y, n_hidden, learn_noise):
    """Moment matching of the tilted distribution; returns new moments and validity."""
    out = log_z_and_grads(m_c, v_c, x, y, a_c, b_c, n_hidden)
    with np.errstate(all="ignore"):
        m_new, v_new = adf_weight_update(m_c, v_c, out["grad_m"], out["grad_v"])
    ok_w = (v_new > _INVALID_V) & np.isfinite(m_new) & np.isfinite(v_new)
    if learn_noise:
        a_new, b_new = gamma_update(out["v_z"], y - out["m_z"], a_c, b_c)
        ok_g = np.isfinite(a_new) & np.isfinite(b_new) & (a_new > 1.0) & (b_new > 0.0)
    else:
        a_new, b_new, ok_g = a_c, b_c, np.ones(a_c.shape, bool)
    return m_new, v_new, a_new, b_new, ok_w, ok_g


# --------------------------------------------------------------------------- config
@dataclass(frozen=True)
class PBPConfig:
    """Configuration of :func:`fit_pbp`.

    Parameters
    ----------
    method : {"adf", "ep", "sep", "sep-clipped", "dp-sep"}
    n_hidden : int
        Hidden ReLU units (paper: 50; 100 for Protein and Year).
    epochs : int
        Passes over a fresh random permutation (paper: T = 40).
    dpsep : DPSEPParams or None
        Required for "sep-clipped" (noise_multiplier None) and "dp-sep"
        (noise_multiplier set); must be None otherwise. Its ``damping`` is gamma.
    damping : float
        EP: site damping (new = old + damping (proposed - old)), in (0, 1];
        SEP: gamma of f <- f^{1-gamma/N} f_n^{gamma/N}. Unused by ADF and DP methods.
    prior_alpha, prior_beta : float
        Gamma hyper-prior on the weight precision lambda (PBP: 6, 6).
    noise_alpha, noise_beta : float
        Gamma prior on the noise precision gamma (PBP: 6, 6 * var(y) = 6).
    noise_precision : {"learn", "fixed"}
        "learn": the noise Gamma is updated (and, for DP methods, part of the clipped
        and noised vector); "fixed": kept at its public prior.
    refine_prior : bool
        PBP's EP refinement of the prior factors after every epoch.
    pd_floor : float
        Precision floor of the SEP-family cavity projection (DP methods use
        ``dpsep.pd_floor``).
    n_runs : int
        R when ``x_train`` is 2-D (ignored when it is (R, N, d) unless inconsistent).
    """

    method: str = "adf"
    n_hidden: int = 50
    epochs: int = 40
    dpsep: DPSEPParams | None = None
    damping: float = 1.0
    prior_alpha: float = 6.0
    prior_beta: float = 6.0
    noise_alpha: float = 6.0
    noise_beta: float = 6.0
    noise_precision: str = "learn"
    refine_prior: bool = True
    pd_floor: float = 1e-6
    n_runs: int = 1

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        check_count(self.n_hidden, "n_hidden")
        check_count(self.epochs, "epochs")
        check_count(self.n_runs, "n_runs")
        check_positive(self.damping, "damping")
        if self.method == "ep" and self.damping > 1:
            raise ValueError(f"damping must lie in (0, 1] for EP, got {self.damping!r}")
        for name in ("prior_alpha", "prior_beta", "noise_alpha", "noise_beta", "pd_floor"):
            check_positive(getattr(self, name), name)
        if self.prior_alpha <= 1 or self.noise_alpha <= 1:
            raise ValueError(f"prior_alpha and noise_alpha must exceed 1 (beta/(alpha-1) is "
                             f"the prior variance), got {self.prior_alpha!r}, "
                             f"{self.noise_alpha!r}")
        if self.noise_precision not in ("learn", "fixed"):
            raise ValueError(f"noise_precision must be 'learn' or 'fixed', got "
                             f"{self.noise_precision!r}")
        if self.method in ("sep-clipped", "dp-sep"):
            if not isinstance(self.dpsep, DPSEPParams):
                raise ValueError(f"dpsep must be a DPSEPParams for method {self.method!r}, "
                                 f"got {self.dpsep!r}")
            if self.method == "sep-clipped" and self.dpsep.noise_multiplier is not None:
                raise ValueError("dpsep.noise_multiplier must be None for 'sep-clipped', got "
                                 f"{self.dpsep.noise_multiplier!r}")
            if self.method == "dp-sep" and self.dpsep.noise_multiplier is None:
                raise ValueError("dpsep.noise_multiplier must be set for 'dp-sep', got None")
        elif self.dpsep is not None:
            raise ValueError(f"dpsep must be None for method {self.method!r}")


@dataclass
class PBPFit:
    """Fitted factorised posterior(s) of :func:`fit_pbp`.

    Attributes
    ----------
    m_w, v_w : arrays (R, W)   weight means and variances of q.
    alpha, beta : arrays (R,)  noise-precision Gamma of q.
    lambda_alpha, lambda_beta : arrays (R,)  q(lambda) (PBP's prior refinement).
    n_hidden, d : int
    config : PBPConfig
    info : dict  diagnostics (see :func:`fit_pbp`).
    """

    m_w: np.ndarray
    v_w: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    lambda_alpha: np.ndarray
    lambda_beta: np.ndarray
    n_hidden: int
    d: int
    config: PBPConfig
    info: dict = field(default_factory=dict)

    def predict(self, x):
        """Predictive mean and variance (R, M) for x (M, d) or (R, M, d).

        Variance = v_z + beta/(alpha-1) (PBP's predictive, noise included), in the units
        of the y the model was trained on (undo any standardisation with
        :func:`regression_test_metrics`).
        """
        x = check_finite_array(x, "x")
        if x.ndim not in (2, 3) or x.shape[-1] != self.d:
            raise ValueError(f"x must have shape (M, {self.d}) or (R, M, {self.d}), got "
                             f"{x.shape}")
        if x.ndim == 3 and x.shape[0] != self.m_w.shape[0]:
            raise ValueError(f"x has {x.shape[0]} runs, the fit has {self.m_w.shape[0]}")
        m_z, v_z = forward_moments(self.m_w, self.v_w, x, self.n_hidden)
        return m_z, v_z + (self.beta / (self.alpha - 1.0))[:, None]


def regression_test_metrics(mean, var, y_test, y_scale):
    """Test RMSE and average test log-likelihood in original target units (PBP Sec. 5).

    Parameters
    ----------
    mean, var : arrays (R, M)   predictive mean / variance in standardised units.
    y_test : array (M,) or (R, M)   standardised test targets.
    y_scale : float or array (R,)   training target std (y_std) used to standardise.

    Returns
    -------
    (rmse, loglik) : arrays (R,):  rmse = y_std sqrt(mean (mean - y)^2);
    loglik = mean[log N(y | mean, var)] - log y_std (Gaussian predictive).
    """
    mean = check_finite_array(mean, "mean", ndim=2)
    var = check_finite_array(var, "var", ndim=2)
    y_test = check_finite_array(y_test, "y_test")
    scale = check_finite_array(y_scale, "y_scale")
    if mean.shape != var.shape:
        raise ValueError(f"mean {mean.shape} and var {var.shape} differ in shape")
    if np.any(var <= 0):
        raise ValueError(f"var must be > 0, minimum is {var.min()!r}")
    if np.any(scale <= 0):
        raise ValueError(f"y_scale must be > 0, got {y_scale!r}")
    y = np.broadcast_to(y_test, mean.shape) if y_test.shape in (mean.shape[1:], mean.shape) \
        else None
    if y is None:
        raise ValueError(f"y_test shape {y_test.shape} does not match mean {mean.shape}")
    err = mean - y
    scale = np.broadcast_to(scale, (mean.shape[0],))
    rmse = np.sqrt(np.mean(err * err, axis=1)) * scale
    ll = np.mean(-0.5 * np.log(2 * math.pi * var) - 0.5 * err * err / var, axis=1)
    return rmse, ll - np.log(scale)


# --------------------------------------------------------------------------- fitting
class _Prior:
    """PBP's prior factors: per-weight Gaussian + Gamma sites, and q(lambda)."""

    def __init__(self, n_runs, n_w, a0, b0):
        self.m_hat = np.zeros((n_runs, n_w))
        self.v_hat = np.full((n_runs, n_w), (a0 - 1.0) / b0)
        self.a_hat = np.zeros((n_runs, n_w))
        self.b_hat = np.zeros((n_runs, n_w))
        self.a = np.full(n_runs, a0)
        self.b = np.full(n_runs, b0)
        self.skips = 0

    def refine(self, eta1, eta2):
        """EP on each prior factor in turn (PBP ``refine_prior``); returns q's new eta."""
        eta1, eta2 = eta1.copy(), eta2.copy()
        for j in range(eta1.shape[1]):
            with np.errstate(all="ignore"):
                vc_nat = eta2[:, j] - self.v_hat[:, j]
                mc_nat = eta1[:, j] - self.m_hat[:, j]
                v_cav = 1.0 / vc_nat
                m_cav = mc_nat * v_cav
                a_cav = self.a - self.a_hat[:, j]
                b_cav = self.b + self.b_hat[:, j]  # b_hat is -(b site) in natural form
                ok = (v_cav > 0) & (b_cav > 0) & (a_cav > 1) & (v_cav < 1e6)
                v = v_cav + b_cav / (a_cav - 1)
                v1 = v_cav + b_cav / a_cav
                v2 = v_cav + b_cav / (a_cav + 1)
                lz = -0.5 * np.log(v) - 0.5 * m_cav ** 2 / v
                lz1 = -0.5 * np.log(v1) - 0.5 * m_cav ** 2 / v1
                lz2 = -0.5 * np.log(v2) - 0.5 * m_cav ** 2 / v2
                dm = -m_cav / v
                dv = -0.5 / v + 0.5 * m_cav ** 2 / v ** 2
                m_new = m_cav + v_cav * dm
                v_new = v_cav - v_cav ** 2 * (dm ** 2 - 2 * dv)
                a_new = 1.0 / (np.exp(lz2 - 2 * lz1 + lz) * (a_cav + 1) / a_cav - 1.0)
                b_new = 1.0 / (np.exp(lz2 - lz1) * (a_cav + 1) / b_cav
                               - np.exp(lz1 - lz) * a_cav / b_cav)
            ok &= np.isfinite(m_new) & (v_new > 0) & np.isfinite(a_new) & np.isfinite(b_new)
            self.skips += int((~ok).sum())
            if not ok.any():
                continue
            new1, new2 = m_new / v_new, 1.0 / v_new
            self.m_hat[:, j] = np.where(ok, new1 - mc_nat, self.m_hat[:, j])
            self.v_hat[:, j] = np.where(ok, new2 - vc_nat, self.v_hat[:, j])
            self.a_hat[:, j] = np.where(ok, a_new - a_cav, self.a_hat[:, j])
            self.b_hat[:, j] = np.where(ok, -b_new + b_cav, self.b_hat[:, j])
            eta1[:, j] = np.where(ok, new1, eta1[:, j])
            eta2[:, j] = np.where(ok, new2, eta2[:, j])
            self.a = np.where(ok, a_new, self.a)
            self.b = np.where(ok, b_new, self.b)
        return eta1, eta2


def _check_inputs(x, y, n_runs):
    x = check_finite_array(x, "x_train")
    y = check_finite_array(y, "y_train")
    if x.ndim == 2:
        if y.ndim != 1 or y.shape[0] != x.shape[0]:
            raise ValueError(f"y_train must have shape ({x.shape[0]},), got {y.shape}")
        r = n_runs
        x = np.broadcast_to(x, (r,) + x.shape)
        y = np.broadcast_to(y, (r,) + y.shape)
    elif x.ndim == 3:
        r = x.shape[0]
        if y.shape != x.shape[:2]:
            raise ValueError(f"y_train must have shape {x.shape[:2]}, got {y.shape}")
        if n_runs not in (1, r):
            raise ValueError(f"config.n_runs = {n_runs} but x_train has {r} runs")
    else:
        raise ValueError(f"x_train must have shape (N, d) or (R, N, d), got {x.shape}")
    if x.shape[1] < 2:
        raise ValueError(f"x_train needs at least 2 records, got {x.shape[1]}")
    return x, y


def fit_pbp(x_train, y_train, config: PBPConfig, rng: np.random.Generator) -> PBPFit:
    """Fit a one-hidden-layer Bayesian ReLU network by PBP with ``config.method`` sites.

    Parameters
    ----------
    x_train : array (N, d) or (R, N, d)
        Standardised inputs; 3-D: R independent runs (e.g. splits of equal size).
    y_train : array (N,) or (R, N)
        Standardised targets.
    config : PBPConfig
    rng : numpy.random.Generator
        Initial means, per-run permutations each epoch, DP noise. Same seed, same fit.

    Returns
    -------
    PBPFit
        ``info`` holds: ``method``, ``n_records``, ``seconds``, ``epoch_seconds``,
        ``skipped_weights`` (weight updates reverted, PBP rule), ``skipped_gamma``,
        ``skipped_steps`` (EP run-steps with an invalid cavity), ``prior_skips``,
        SEP family: ``cavity_projections`` (run-steps with any projected coordinate),
        ``projected_coordinates``; DP methods: ``reading``, ``noise_std``,
        ``claimed_sensitivity``, ``true_sensitivity``, ``site_clip_fraction``
        (fraction of run-steps with ||theta_fn|| > C, step 6), ``factor_clip_fraction``
        (step 9), ``site_clip_fraction_per_epoch``, ``site_norm_quantiles``
        (5/50/95 %), ``prior_norm`` (||theta_0|| at the start), ``dim`` (P); SEP family:
        ``theta_f`` (R, P) final site and ``theta_0`` (R, P) final prior term.

    Raises
    ------
    ValueError
        On non-finite data, shapes that do not match, or an invalid config.
    """
    if not isinstance(config, PBPConfig):
        raise ValueError(f"config must be a PBPConfig, got {type(config).__name__}")
    x, y = _check_inputs(x_train, y_train, config.n_runs)
    n_runs, n, d = x.shape
    h = config.n_hidden
    n_w = _n_weights(d, h)
    learn_noise = config.noise_precision == "learn"
    xs = x  # (R, N, d) (possibly a broadcast view)
    rows = np.arange(n_runs)

    # PBP initialisation.
    n_in = np.concatenate([np.full(h * (d + 1), d + 1.0), np.full(h + 1, h + 1.0)])
    m0 = rng.standard_normal((n_runs, n_w)) / np.sqrt(n_in)
    prior = _Prior(n_runs, n_w, config.prior_alpha, config.prior_beta)
    v0 = 1.0 / prior.v_hat
    a_n0, b_n0 = config.noise_alpha, config.noise_beta
    info = {"method": config.method, "n_records": n, "n_runs": n_runs, "dim": 2 * n_w + 2,
            "skipped_weights": 0, "skipped_gamma": 0, "skipped_steps": 0,
            "cavity_projections": 0, "projected_coordinates": 0, "epoch_seconds": []}
    t_start = time.perf_counter()
    method = config.method

    if method == "adf":
        m, v = m0, v0.copy()
        a, b = np.full(n_runs, a_n0), np.full(n_runs, b_n0)
        for _ in range(config.epochs):
            t0 = time.perf_counter()
            perms = rng.permuted(np.tile(np.arange(n), (n_runs, 1)), axis=1)
            for k in range(n):
                idx = perms[:, k]
                m_new, v_new, a_new, b_new, ok_w, ok_g = _project(
                    m, v, a, b, xs[rows, idx], y[rows, idx], h, learn_noise)
                info["skipped_weights"] += int(ok_w.size - ok_w.sum())
                info["skipped_gamma"] += int(ok_g.size - ok_g.sum())
                m = np.where(ok_w, m_new, m)
                v = np.where(ok_w, v_new, v)
                a = np.where(ok_g, a_new, a)
                b = np.where(ok_g, b_new, b)
            if config.refine_prior:
                e1, e2 = prior.refine(m / v, 1.0 / v)
                m, v = e1 / e2, 1.0 / e2
            info["epoch_seconds"].append(time.perf_counter() - t0)

    elif method == "ep":
        eta1, eta2 = m0 / v0, 1.0 / v0
        g1, g2 = np.full(n_runs, a_n0 - 1.0), np.full(n_runs, -b_n0)
        p = 2 * n_w + 2
        sites = np.zeros((n_runs, n, p))
        gamma_d = config.damping
        for _ in range(config.epochs):
            t0 = time.perf_counter()
            perms = rng.permuted(np.tile(np.arange(n), (n_runs, 1)), axis=1)
            for k in range(n):
                idx = perms[:, k]
                site = sites[rows, idx]
                c1o, c2o = eta1 - site[:, :n_w], eta2 - site[:, n_w:2 * n_w]
                cg1o, cg2o = g1 - site[:, -2], g2 - site[:, -1]
                c1, c2, cg1, cg2 = c1o, c2o, cg1o, cg2o
                valid = (c2 > 0).all(axis=1) & (cg1 > 0) & (cg2 < 0)
                info["skipped_steps"] += int(n_runs - valid.sum())
                if not valid.any():
                    continue
                # Invalid runs are evaluated at q (harmless) and not applied.
                c1 = np.where(valid[:, None], c1, eta1)
                c2 = np.where(valid[:, None], c2, eta2)
                cg1 = np.where(valid, cg1, g1)
                cg2 = np.where(valid, cg2, g2)
                v_c = 1.0 / c2
                m_c = c1 * v_c
                m_new, v_new, a_new, b_new, ok_w, ok_g = _project(
                    m_c, v_c, cg1 + 1.0, -cg2, xs[rows, idx], y[rows, idx], h, learn_noise)
                ok_w &= valid[:, None]
                ok_g &= valid
                info["skipped_weights"] += int((valid[:, None] & ~ok_w).sum())
                info["skipped_gamma"] += int((valid & ~ok_g).sum())
                with np.errstate(all="ignore"):
                    new = np.concatenate([m_new / v_new - c1, 1.0 / v_new - c2,
                                          (a_new - 1.0 - cg1)[:, None],
                                          (-b_new - cg2)[:, None]], axis=1)
                ok = np.concatenate([ok_w, ok_w, ok_g[:, None], ok_g[:, None]], axis=1)
                new = np.where(ok, site + gamma_d * (new - site), site)
                sites[rows, idx] = new
                # Invalid runs have new == site, so q is unchanged for them.
                eta1 = c1o + new[:, :n_w]
                eta2 = c2o + new[:, n_w:2 * n_w]
                g1 = cg1o + new[:, -2]
                g2 = cg2o + new[:, -1]
            if config.refine_prior:
                eta1, eta2 = prior.refine(eta1, eta2)
            info["epoch_seconds"].append(time.perf_counter() - t0)
        m, v = eta1 / eta2, 1.0 / eta2
        a, b = g1 + 1.0, -g2

    else:  # SEP family
        dp = config.dpsep
        floor = dp.pd_floor if dp is not None else config.pd_floor
        gam = dp.damping if dp is not None else config.damping
        p = 2 * n_w + 2

        def theta0_now():
            t = np.empty((n_runs, p))
            t[:, :n_w] = prior.m_hat + init_eta1
            t[:, n_w:2 * n_w] = prior.v_hat
            t[:, -2] = a_n0 - 1.0
            t[:, -1] = -b_n0
            return t

        init_eta1 = m0 / v0  # PBP's random initial means: a fixed term of theta_0
        theta0 = theta0_now()
        f = np.zeros((n_runs, p))
        if dp is not None:
            noise_std = dp.noise_std(n)
            info.update(reading=dp.reading, noise_std=noise_std,
                        claimed_sensitivity=dp.claimed_sensitivity(n),
                        true_sensitivity=dp.true_sensitivity_bound(n),
                        prior_norm=float(np.linalg.norm(theta0[0])))
            site_binds = factor_binds = 0
            per_epoch, norm_samples = [], []
        for _ in range(config.epochs):
            t0 = time.perf_counter()
            perms = rng.permuted(np.tile(np.arange(n), (n_runs, 1)), axis=1)
            ep_binds = 0
            for k in range(n):
                idx = perms[:, k]
                cav = theta0 + (n - 1) * f
                c1, c2 = cav[:, :n_w], cav[:, n_w:2 * n_w]
                cg1, cg2 = cav[:, -2], cav[:, -1]
                bad = c2 < floor
                bad_g1, bad_g2 = cg1 < floor, -cg2 < floor
                if learn_noise and (bad_g1.any() or bad_g2.any()):
                    cg1 = np.maximum(cg1, floor)
                    cg2 = np.minimum(cg2, -floor)
                if bad.any():
                    c2 = np.maximum(c2, floor)
                nbad = bad.sum(axis=1) + bad_g1 + bad_g2
                info["cavity_projections"] += int((nbad > 0).sum())
                info["projected_coordinates"] += int(nbad.sum())
                v_c = 1.0 / c2
                m_c = c1 * v_c
                m_new, v_new, a_new, b_new, ok_w, ok_g = _project(
                    m_c, v_c, cg1 + 1.0, -cg2, xs[rows, idx], y[rows, idx], h, learn_noise)
                info["skipped_weights"] += int(ok_w.size - ok_w.sum())
                info["skipped_gamma"] += int(ok_g.size - ok_g.sum())
                with np.errstate(all="ignore"):
                    fn = np.concatenate([m_new / v_new - c1, 1.0 / v_new - c2,
                                         (a_new - 1.0 - cg1)[:, None],
                                         (-b_new - cg2)[:, None]], axis=1)
                ok = np.concatenate([ok_w, ok_w, ok_g[:, None], ok_g[:, None]], axis=1)
                if not learn_noise:
                    ok[:, -2:] = False
                fn = np.where(ok, fn, f)
                if dp is None:
                    f = f + (gam / n) * (fn - f)
                    continue
                norms = np.linalg.norm(fn, axis=1)
                binds = norms > dp.clipping_norm
                ep_binds += int(binds.sum())
                if k % 16 == 0:
                    norm_samples.append(norms)
                fn = clip_to_norm(fn, dp.clipping_norm)
                theta_new = dpsep_theta_new(f, fn, theta0, n, dp)
                if noise_std > 0:
                    theta_new = theta_new + noise_std * rng.standard_normal(theta_new.shape)
                if not learn_noise:
                    theta_new[:, -2:] = theta0[:, -2:]  # public, fixed: nothing released
                f_raw = (theta_new - theta0) / n
                factor_binds += int((np.linalg.norm(f_raw, axis=1) > dp.clipping_norm).sum())
                f = clip_to_norm(f_raw, dp.clipping_norm)
            if dp is not None:
                site_binds += ep_binds
                per_epoch.append(ep_binds / (n * n_runs))
            if config.refine_prior:
                q = theta0 + n * f
                prior.refine(q[:, :n_w], np.maximum(q[:, n_w:2 * n_w], floor))
                theta0 = theta0_now()
            info["epoch_seconds"].append(time.perf_counter() - t0)
        q = theta0 + n * f
        info["theta_f"] = f
        info["theta_0"] = theta0
        q2 = q[:, n_w:2 * n_w]
        bad = q2 < floor
        qg1 = q[:, -2]
        qg2 = q[:, -1]
        info["prediction_projections"] = int(bad.sum() + (qg1 < floor).sum()
                                             + (-qg2 < floor).sum())
        q2 = np.maximum(q2, floor)
        m, v = q[:, :n_w] / q2, 1.0 / q2
        a, b = np.maximum(qg1, floor) + 1.0, np.maximum(-qg2, floor)
        if dp is not None:
            total = n * n_runs * config.epochs
            info["site_clip_fraction"] = site_binds / total
            info["factor_clip_fraction"] = factor_binds / total
            info["site_clip_fraction_per_epoch"] = per_epoch
            info["site_norm_quantiles"] = np.quantile(np.concatenate(norm_samples),
                                                      [0.05, 0.5, 0.95]).tolist()

    info["prior_skips"] = prior.skips
    info["seconds"] = time.perf_counter() - t_start
    return PBPFit(m_w=m, v_w=v, alpha=np.asarray(a, float), beta=np.asarray(b, float),
                  lambda_alpha=prior.a, lambda_beta=prior.b, n_hidden=h, d=d,
                  config=config, info=info)
