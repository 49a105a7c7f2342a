"""DP-SEP's mixture-of-Gaussians experiment (v0 Sec. 6.1, v1 Sec. 6.1): EP, SEP, DP-SEP, DP-EM.

Model (v0 Sec. 6.1, after Li, Hernández-Lobato & Turner 2015, "Stochastic expectation
propagation", Sec. 5.1)
-------------------------------------------------------------------------------
"We generate a synthetic dataset containing N = 1000 datapoints drawn from J = 4
Gaussians with the following assumptions: each mean is sampled from a Gaussian
distribution p(mu_j) = N(mu; m, I), each mixture component is isotropic
p(x|h_n) = N(x; mu_{h_n}, 0.5^2 I) and the cluster identity variables are sampled from a
categorical uniform distribution p(h_n = j) = 1/4 ... Following [Li et al., 2015], we
also assume the rest of the parameters to be known." The paper does not give m: we use
m = 0 (``MoGModel.prior_mean``). v0's Figure 1 is two-dimensional (d = 2); v1 says
"4-dimensional inputs" (d = 4); ``dim`` is an argument.

Approximate posterior and sites
-------------------------------
q(mu) = prod_j N(mu_j; m_j, V_j) with full covariances. The assignment h_n is summed
out inside each tilted distribution

    p~_n(mu) ∝ q_{-1}(mu) sum_j pi_j N(x_n; mu_j, s^2 I),

a mixture over "which component generated x_n". Its marginal for mu_j is, with the
responsibility r_j ∝ pi_j N(x_n; m_j, V_j + s^2 I) (cavity moments m_j, V_j), the
conjugate update N(m_j + K_j (x_n - m_j), V_j - K_j V_j), K_j = V_j (V_j + s^2 I)^{-1},
with probability r_j and the cavity otherwise, so (:func:`tilted_moments`)

    E[mu_j]   = m_j + r_j K_j (x_n - m_j)
    Cov[mu_j] = V_j - r_j K_j V_j + r_j (1 - r_j) K_j (x_n - m_j) (x_n - m_j)^T K_j^T.

The projection onto the factorised family matches each component's marginal; the site
is the projected tilted distribution divided by the cavity, per component. Its
precision can be indefinite (the last term above inflates the covariance).

Natural parameters of the whole approximation: the concatenation over j of
``flatten_natural(h_j, Lambda_j)`` (:mod:`dpclaims.analysis.gaussian`), a vector of
length P = J (d + d(d+1)/2). That whole vector is what DP-SEP clips (Alg. 3 steps 6 and
9, L2 norm C) and noises (step 8).

DP-SEP readings
---------------
Exactly those of :mod:`dpclaims.algorithms.sep.sep` (``DPSEPParams.reading``): "as-printed"
(eq. 4, site damping gamma/N^2, noise sigma 2 gamma C / N), "sep-invariant" (SEP's
gamma/N damping, the printed noise) and "sep-invariant-recalibrated" (SEP's damping,
noise sigma 2 gamma C). Cavity precisions that are not positive definite are projected
(eigenvalues raised to ``pd_floor``) in private/clipped runs and counted; in non-private
runs (``params`` None, EP) they raise ValueError, as in ``sep.run_sep``/``sep.run_ep``.

The prior's norm (a finding about the paper's setting)
------------------------------------------------------
Alg. 3 requires "Initial natural parameters (bounded by C)" and Sec. 3 says "We clip the
natural parameters to have the desired norm". The prior N(m, I) on each of J means in
R^d has theta_0 = [m, upper triangle of I] per component, so ||theta_0|| =
sqrt(J (d + ||m||^2)) = sqrt(J d) at m = 0: 2.83 for d = 2 and 4 for d = 4, both above the
paper's C = 1. Algorithm 3 therefore cannot be run as stated with the stated prior and
C. ``prior_norm`` makes the choice explicit:

``"raise"`` (default)
    ValueError, as ``sep.run_sep`` does.
``"clip"``
    theta_0 <- theta_0 min(1, C / ||theta_0||), Sec. 3's "we clip". At m = 0 this is the
    prior N(0, (||theta_0|| / C) I): a different, broader prior (variance 2.83 at d = 2,
    C = 1), so the run targets a slightly different posterior than the ground truth.
``"allow"``
    Keep the model's prior. theta_0 is data-independent and cancels in Prop. 1's
    difference theta_new - theta'_new, so the bound on ||theta_0|| plays no role in the
    privacy argument; the requirement only changes the model.

DP-EM (Park, Foulds, Chaudhuri & Welling 2017, AISTATS)
-------------------------------------------------------
See :func:`run_dp_em`: EM for the same GMM whose M-step statistics are released with
Gaussian noise every iteration, full data each iteration, composed exactly.

Findings about the paper's setting (measured with this module; see the runner)
------------------------------------------------------------------------------
- ||theta_0|| = sqrt(J d) > C = 1 (above): Alg. 3's precondition fails as stated.
- Starting q at the prior (identical for every component) is a fixed point of the
  symmetry: all J posteriors stay identical (:func:`initial_site`); some symmetry-
  breaking initialisation, unstated in the paper, is required.
- Eq. 4 as printed moves the site by gamma/N^2 per step: after T epochs a fraction
  1 - (1 - gamma/N^2)^{NT} ~ gamma T / N = 0.1 of the way (N = 1000, T = 100), while its
  noise (std sigma 2 gamma C / N on theta_new, i.e. sigma 2 gamma C / N^2 on theta_f)
  random-walks: q is far from converged and often indefinite.
- Under SEP's own update with the printed noise ("sep-invariant") the noise is N times
  below the sensitivity and DP-SEP behaves like clipped SEP with the same C.

Ground truth
------------
v0/v1 fit the ground truth with NUTS; here a conjugate Gibbs sampler
(:func:`gibbs_mog`) with explicit label matching.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp
from scipy.stats import chi2

from dpclaims.algorithms.sep.sep import READINGS, DPSEPParams
from dpclaims.analysis.accounting import composed_gaussian_sigma
from dpclaims.analysis.gaussian import (
    flatten_natural,
    gaussian_kl,
    is_positive_definite,
    moments_to_natural,
    natural_dim,
    nearest_positive_definite,
    unflatten_natural,
)
from dpclaims.analysis.ou import split_rhat
from dpclaims.analysis.validation import (
    check_count,
    check_delta,
    check_finite_array,
    check_positive,
)

PRIOR_NORM_OPTIONS = ("raise", "clip", "allow")
DPEM_READINGS = ("means-only", "means-and-covariances")
PAIRINGS = ("nearest", "hungarian")

__all__ = [
    "DPEM_READINGS", "PAIRINGS", "PRIOR_NORM_OPTIONS", "READINGS",
    "MoGModel", "MoGData", "MoGRun", "GibbsResult", "DPEMRun",
    "generate_mog_data", "tilted_moments", "mog_site", "mog_moments",
    "prior_natural", "initial_site", "run_mog_ep", "run_mog_sep", "run_mog_sep_batch",
    "gibbs_mog", "match_components", "mog_metrics", "responsibilities",
    "dp_em_sensitivity", "default_data_radius", "run_dp_em",
]


# --------------------------------------------------------------------------- model, data
@dataclass(frozen=True)
class MoGModel:
    """The known parts of the GMM: J, d, component std s, prior N(m 1, v I), uniform weights.

    Parameters
    ----------
    n_components : int
        J (the paper: 4).
    dim : int
        d (v0's figure: 2; v1: 4).
    noise_std : float
        s, each component is N(mu_j, s^2 I) (the paper: 0.5).
    prior_mean : float
        m, every coordinate of every prior mean (unspecified in the paper; 0 here).
    prior_var : float
        v, prior covariance v I (the paper: 1).
    """

    n_components: int = 4
    dim: int = 2
    noise_std: float = 0.5
    prior_mean: float = 0.0
    prior_var: float = 1.0

    def __post_init__(self):
        check_count(self.n_components, "n_components", minimum=1)
        check_count(self.dim, "dim", minimum=1)
        check_positive(self.noise_std, "noise_std")
        check_positive(self.prior_var, "prior_var")
        if not math.isfinite(self.prior_mean):
            raise ValueError(f"prior_mean must be finite, got {self.prior_mean!r}")

    @property
    def log_weights(self) -> np.ndarray:
        """log pi_j = -log J, shape (J,)."""
        return np.full(self.n_components, -math.log(self.n_components))

    @property
    def component_dim(self) -> int:
        """Length d + d(d+1)/2 of one component's flat natural parameters."""
        return natural_dim(self.dim)

    @property
    def natural_size(self) -> int:
        """P = J (d + d(d+1)/2): length of the whole approximation's natural parameters."""
        return self.n_components * self.component_dim


@dataclass(frozen=True)
class MoGData:
    """A synthetic data set: ``x`` (N, d), ``labels`` (N,), ``true_means`` (J, d), model, seed."""

    x: np.ndarray
    labels: np.ndarray
    true_means: np.ndarray
    model: MoGModel
    seed: int | None = None


def generate_mog_data(n: int = 1000, n_components: int = 4, dim: int = 2,
                      noise_std: float = 0.5, seed: int = 0, *, prior_mean: float = 0.0,
                      prior_var: float = 1.0) -> MoGData:
    """Draw a data set from the v0 Sec. 6.1 generative model.

    mu_j ~ N(m 1, v I) (j = 1..J), h_n ~ Uniform{1..J}, x_n ~ N(mu_{h_n}, s^2 I).

    Returns
    -------
    MoGData
        ``x`` (n, dim), ``labels`` (n,) ints, ``true_means`` (n_components, dim).

    Raises
    ------
    ValueError
        For n < 1 or a bad model parameter.
    """
    n = check_count(n, "n", minimum=1)
    model = MoGModel(n_components, dim, noise_std, prior_mean, prior_var)
    rng = np.random.default_rng(seed)
    means = prior_mean + math.sqrt(prior_var) * rng.standard_normal((n_components, dim))
    labels = rng.integers(n_components, size=n)
    x = means[labels] + noise_std * rng.standard_normal((n, dim))
    return MoGData(x=x, labels=labels, true_means=means, model=model, seed=seed)


def _check_x(x, model: MoGModel) -> np.ndarray:
    x = check_finite_array(x, "x (data)", ndim=2)
    if x.shape[1] != model.dim:
        raise ValueError(f"x has {x.shape[1]} columns but the model has dim = {model.dim}")
    if x.shape[0] < 1:
        raise ValueError("the dataset is empty")
    return x


def prior_natural(model: MoGModel) -> np.ndarray:
    """Flat natural parameters (P,) of the prior prod_j N(mu_j; m 1, v I).

    Per component [m/v 1, upper triangle of I/v]; its L2 norm is sqrt(J d (1 + m^2)) / v.
    """
    d, J = model.dim, model.n_components
    prec = np.eye(d) / model.prior_var
    h = np.full(d, model.prior_mean / model.prior_var)
    return np.tile(flatten_natural(h, prec), J)


# --------------------------------------------------------------------------- tilted moments
def tilted_moments(cavity_mean, cavity_cov, x, model: MoGModel):
    """Moments of the tilted distribution's per-component marginals (closed form).

    Parameters
    ----------
    cavity_mean : array (n, J, d)
    cavity_cov : array (n, J, d, d), positive definite
    x : array (n, d)
        The record of each trial.
    model : MoGModel

    Returns
    -------
    mean : (n, J, d), cov : (n, J, d, d), responsibilities : (n, J)
        E and Cov of mu_j under p~_n(mu) ∝ q_{-1}(mu) sum_j pi_j N(x; mu_j, s^2 I) (module
        docstring), and r_j ∝ pi_j N(x; m_j, V_j + s^2 I).
    """
    m = np.asarray(cavity_mean, dtype=float)
    V = np.asarray(cavity_cov, dtype=float)
    x = np.asarray(x, dtype=float)
    d = m.shape[-1]
    s2 = model.noise_std ** 2
    S = V + s2 * np.eye(d)
    diff = x[:, None, :] - m
    chol = np.linalg.cholesky(S)
    sol = np.linalg.solve(S, diff[..., None])[..., 0]          # S^{-1}(x - m)
    logdet = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    log_lik = -0.5 * (d * math.log(2 * math.pi) + logdet + np.sum(diff * sol, axis=-1))
    logr = model.log_weights + log_lik
    r = np.exp(logr - logsumexp(logr, axis=-1, keepdims=True))
    v = np.einsum("...ab,...b->...a", V, sol)                  # K (x - m)
    kv = V @ np.linalg.solve(S, V)                             # K V
    mean = m + r[..., None] * v
    cov = (V - r[..., None, None] * kv
           + (r * (1 - r))[..., None, None] * np.einsum("...a,...b->...ab", v, v))
    cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
    return mean, cov, r


def mog_site(cavity_mean, cavity_cov, x, model: MoGModel, cavity_natural=None) -> np.ndarray:
    """Site natural parameters (n, P): Proj[p~_n] / q_{-1}, per component, concatenated.

    ``cavity_natural`` (n, P) may be passed to avoid re-inverting the cavity covariance
    (it must be the natural parameters of ``cavity_mean``, ``cavity_cov``).
    """
    mean, cov, _ = tilted_moments(cavity_mean, cavity_cov, x, model)
    n = mean.shape[0]
    # inverse through eigh: a numerically singular tilted covariance (possible only
    # after a huge noised cavity was projected) gives huge but finite parameters, which
    # DP runs then clip, instead of a LinAlgError
    vals, vecs = np.linalg.eigh(cov)
    vals = np.maximum(vals, np.finfo(float).tiny)
    prec = np.einsum("...ij,...j,...kj->...ik", vecs, 1.0 / vals, vecs)
    tilted = flatten_natural(np.einsum("...ij,...j->...i", prec, mean), prec).reshape(n, -1)
    if cavity_natural is None:
        cavity_natural = moments_to_natural(cavity_mean, cavity_cov).reshape(n, -1)
    return tilted - cavity_natural


def _moments(theta, J: int, floor):
    """Means (n,J,d), covs (n,J,d,d), projected natural params (n,P), projected mask (n,J).

    ``floor`` (n,) per-trial eigenvalue floors; a precision whose smallest eigenvalue is
    <= its floor is projected (eigenvalues raised to the floor).
    """
    n = theta.shape[0]
    h, prec = unflatten_natural(theta.reshape(n, J, -1))
    vals, vecs = np.linalg.eigh(prec)
    fl = np.asarray(floor, dtype=float)[:, None]
    projected = vals[..., 0] <= fl
    if projected.any():
        vals = np.maximum(vals, fl[..., None])
        prec = np.einsum("...ij,...j,...kj->...ik", vecs, vals, vecs)
        theta = flatten_natural(h, prec).reshape(n, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = np.einsum("...ij,...j,...kj->...ik", vecs, 1.0 / vals, vecs)
        mean = np.einsum("...ij,...j->...i", cov, h)
    return mean, cov, theta, projected


def mog_moments(theta, n_components: int, pd_floor: float | None = None):
    """Posterior means (..., J, d) and covariances (..., J, d, d) of flat natural params.

    Parameters
    ----------
    theta : array (..., P)
    n_components : int
    pd_floor : float or None
        None: raise ValueError on an indefinite precision. Otherwise raise its
        eigenvalues to ``pd_floor`` (v1 Sec. 3.3; post-processing).

    Returns
    -------
    means, covs, projected : arrays (..., J, d), (..., J, d, d), bool (..., J)
    """
    theta = check_finite_array(theta, "theta")
    lead = theta.shape[:-1]
    flat = theta.reshape(-1, theta.shape[-1])
    floor = 0.0 if pd_floor is None else check_positive(pd_floor, "pd_floor")
    mean, cov, _, proj = _moments(flat, n_components, np.full(flat.shape[0], floor))
    if pd_floor is None and proj.any():
        raise ValueError(f"{int(proj.sum())} precision matrix(es) are not positive definite")
    J, d = mean.shape[1:]
    return mean.reshape(lead + (J, d)), cov.reshape(lead + (J, d, d)), proj.reshape(lead + (J,))


def responsibilities(x, means, covs, model: MoGModel) -> np.ndarray:
    """r_nj ∝ pi_j N(x_n; means_j, covs_j): shape (..., N, J) for means (..., J, d).

    For an approximate posterior pass covs = V_j + s^2 I (the predictive); for an EM
    point estimate the component covariances.
    """
    x = np.asarray(x, dtype=float)
    means = np.asarray(means, dtype=float)
    covs = np.asarray(covs, dtype=float)
    d = x.shape[-1]
    chol = np.linalg.cholesky(covs)                                   # (..., J, d, d)
    diff = x - means[..., :, None, :]                                 # (..., J, N, d)
    L = np.linalg.inv(chol)                                           # (..., J, d, d)
    w = np.einsum("...jab,...jnb->...jna", L, diff)
    logdet = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    ll = -0.5 * (d * math.log(2 * math.pi) + logdet[..., None] + np.sum(w * w, axis=-1))
    logr = np.swapaxes(ll, -1, -2) + model.log_weights                # (..., N, J)
    return np.exp(logr - logsumexp(logr, axis=-1, keepdims=True))


# --------------------------------------------------------------------------- runs
@dataclass
class MoGRun:
    """Result of :func:`run_mog_ep` / :func:`run_mog_sep`.

    Attributes
    ----------
    theta_q : (n_trials, P)
        Final natural parameters of q.
    theta_f : (n_trials, P) or None
        Final SEP site (None for EP).
    means : (n_trials, J, d), covs : (n_trials, J, d, d)
        Moments of the final q (an indefinite precision is projected with the run's
        ``pd_floor``, counted in ``final_projections``).
    trace_means : (n_trials, epochs + 1, J, d)
        Posterior means at the start and after every epoch.
    projections : (n_trials,) int
        Cavity components projected to positive definite during the run.
    final_projections : (n_trials,) int
        Components of the final q projected.
    theta_0 : (P,) or (n_trials, P)
        The prior natural parameters used (after ``prior_norm``).
    """

    theta_q: np.ndarray
    theta_f: np.ndarray | None
    means: np.ndarray
    covs: np.ndarray
    trace_means: np.ndarray
    projections: np.ndarray
    final_projections: np.ndarray
    theta_0: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def n_projections(self) -> int:
        """Total cavity projections over all trials (as ``SEPRun.n_projections``)."""
        return int(self.projections.sum())


INIT_OPTIONS = ("random", None)


def initial_site(model: MoGModel, init_means, n_records: int, n_trials: int,
                 rng: np.random.Generator) -> np.ndarray:
    """Initial SEP site (n_trials, P) that breaks the symmetry between components.

    With q started at the prior (site zero) every component has the same cavity, the
    same responsibility 1/J for every record and hence the same update: EP, SEP and
    noiseless DP-SEP then never separate the components (all J posteriors coincide).
    The paper does not say how it initialised. Here the site has zero precision and
    h = (m_init_j - m) / (v N), so that q = p0 f^N = prod_j N(m_init_j, v I) at the start.

    Parameters
    ----------
    init_means : "random", None, or array (J, d) / (n_trials, J, d)
        "random": m_init_j ~ N(m 1, v I) drawn per trial from ``rng`` (the prior: data
        independent, so no privacy cost); None: the symmetric start (site zero).
    """
    J, d, P = model.n_components, model.dim, model.natural_size
    if init_means is None:
        return np.zeros((n_trials, P))
    if isinstance(init_means, str):
        if init_means != "random":
            raise ValueError(f"init_means must be 'random', None or an array, got "
                             f"{init_means!r}")
        m_init = model.prior_mean + math.sqrt(model.prior_var) * rng.standard_normal(
            (n_trials, J, d))
    else:
        m_init = check_finite_array(init_means, "init_means")
        if m_init.shape not in ((J, d), (n_trials, J, d)):
            raise ValueError(f"init_means must have shape ({J}, {d}) or ({n_trials}, {J}, "
                             f"{d}), got {m_init.shape}")
        m_init = np.broadcast_to(m_init, (n_trials, J, d))
    h = (m_init - model.prior_mean) / (model.prior_var * n_records)
    return flatten_natural(h, np.zeros((n_trials, J, d, d))).reshape(n_trials, P)


def _permutations(rng, n_trials, n_records):
    return rng.permuted(np.tile(np.arange(n_records), (n_trials, 1)), axis=1)


def _clip_rows(theta, c):
    norms = np.linalg.norm(theta, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norms > c, c / norms, 1.0)
    return theta * scale[..., None]


def _prior_for(theta_0, params: DPSEPParams | None, prior_norm: str) -> np.ndarray:
    if params is None:
        return theta_0
    norm = float(np.linalg.norm(theta_0))
    c = params.clipping_norm
    if norm <= c * (1 + 1e-12):
        return theta_0
    if prior_norm == "raise":
        raise ValueError(
            f"||theta_0|| = {norm:.6g} exceeds the clipping norm C = {c} (Alg. 3 requires "
            "initial natural parameters bounded by C); pass prior_norm='clip' or 'allow'")
    if prior_norm == "clip":
        return theta_0 * (c / norm)
    return theta_0


def _check_batch_settings(settings, damping, prior_norm: str, theta_0, model: MoGModel):
    """Validated settings, damping and prior of :func:`run_mog_sep_batch`.

    Parameters
    ----------
    settings, damping, prior_norm, theta_0, model
        As :func:`run_mog_sep_batch`.

    Returns
    -------
    tuple
        (settings as a list, gamma, theta_0 or the default prior, shape (P,)).

    Raises
    ------
    ValueError
        On damping <= 0, an unknown prior_norm, no setting or a setting of another type,
        or a theta_0 of the wrong shape.
    """
    P = model.natural_size
    gamma = check_positive(damping, "damping")
    if prior_norm not in PRIOR_NORM_OPTIONS:
        raise ValueError(f"prior_norm must be one of {PRIOR_NORM_OPTIONS}, got {prior_norm!r}")
    settings = list(settings)
    if not settings:
        raise ValueError("settings is empty")
    for s in settings:
        if s is not None and not isinstance(s, DPSEPParams):
            raise ValueError(f"each setting must be DPSEPParams or None, got {s!r}")
    base = prior_natural(model) if theta_0 is None else check_finite_array(theta_0, "theta_0",
                                                                          ndim=1)
    if base.shape != (P,):
        raise ValueError(f"theta_0 must have shape ({P},), got {base.shape}")
    return settings, gamma, base


def _trial_arrays(settings, gamma: float, N: int, n_trials: int):
    """Per-trial constants of the batched run, each setting repeated ``n_trials`` times.

    Parameters
    ----------
    settings : list of DPSEPParams or None
        The settings (None: plain SEP).
    gamma : float
        Damping of the plain-SEP settings.
    N : int
        Number of records.
    n_trials : int
        Runs per setting.

    Returns
    -------
    tuple of ndarray, each (len(settings) * n_trials,)
        (w_site, w_f, clip_c, noise, floor, priv): the weights of the new site and of
        the old one in the update, the clipping norm (inf: none), the noise std, the
        positive-definiteness floor, and whether the setting is private.
    """
    w_site, w_f, clip_c, noise, floor, priv = [], [], [], [], [], []
    for s in settings:
        if s is None:
            w_site.append(gamma)
            w_f.append(N - gamma)
            clip_c.append(np.inf)
            noise.append(0.0)
            floor.append(0.0)
            priv.append(False)
        else:
            g = s.damping
            a, b = (g / N, N - g / N) if s.reading == "as-printed" else (g, N - g)
            w_site.append(a)
            w_f.append(b)
            clip_c.append(s.clipping_norm)
            noise.append(s.noise_std(N))
            floor.append(s.pd_floor)
            priv.append(True)

    def rep(v):
        return np.repeat(np.asarray(v, dtype=float), n_trials, axis=0)

    return (*map(rep, (w_site, w_f, clip_c, noise, floor)),
            np.repeat(np.asarray(priv), n_trials))


def run_mog_sep_batch(x, model: MoGModel, settings, *, epochs: int, n_trials: int = 1,
                      rng: np.random.Generator, damping: float = 1.0,
                      prior_norm: str = "raise", theta_0=None,
                      init_means="random") -> list[MoGRun]:
    """Run several SEP / clipped SEP / DP-SEP settings together, ``n_trials`` runs each.

    One loop over the N T sequential steps advances every trial of every setting (the
    trial axis stacks settings x runs); each trial has its own permutation per epoch
    (Alg. 3 step 2) and its own noise. The semantics per setting are those of
    :func:`run_mog_sep`.

    Parameters
    ----------
    x : array (N, d)
    model : MoGModel
    settings : sequence of DPSEPParams or None
        None: plain SEP (Alg. 2) with damping ``damping``/N.
    epochs : int
        T, passes over the data. The paper's "after 100 iterations" may mean 100 passes
        or 100 single-record steps; the caller chooses.
    n_trials : int
        Independent runs per setting.
    rng : numpy.random.Generator
    damping : float
        gamma of the plain-SEP settings.
    prior_norm : {"raise", "clip", "allow"}
        What to do when ||theta_0|| > C in a clipped/private setting (module docstring).
    theta_0 : array (P,), optional
        Prior natural parameters (default :func:`prior_natural`).
    init_means : "random", None or array
        Initial site (:func:`initial_site`); "random" draws per trial from ``rng``.
        Alg. 3 requires ||theta_f|| <= C at the start: the initial site is clipped to C
        (its norm is ||m_init - m|| / (v N), far below C at the paper's sizes).

    Returns
    -------
    list of MoGRun, one per setting.

    Raises
    ------
    ValueError
        Bad data or arguments; ||theta_0|| > C with ``prior_norm="raise"``; a cavity that
        is not positive definite in a plain-SEP trial.
    """
    x = _check_x(x, model)
    N = x.shape[0]
    J = model.n_components
    P = model.natural_size
    epochs = check_count(epochs, "epochs", minimum=1)
    n_trials = check_count(n_trials, "n_trials", minimum=1)
    settings, gamma, base = _check_batch_settings(settings, damping, prior_norm, theta_0,
                                                  model)

    priors = [_prior_for(base, s, prior_norm) for s in settings]
    w_site, w_f, clip_c, noise, floor, priv = _trial_arrays(settings, gamma, N, n_trials)
    th0 = np.repeat(np.asarray(np.stack(priors), dtype=float), n_trials, axis=0)
    B = th0.shape[0]
    any_noise = bool(np.any(noise > 0))

    theta_f = _clip_rows(initial_site(model, init_means, N, B, rng), clip_c)
    counts = np.zeros(B, dtype=np.int64)
    trace = np.empty((B, epochs + 1, J, model.dim))
    trace[:, 0] = _moments(th0, J, np.maximum(floor, 1e-12))[0]
    for t in range(epochs):
        perms = _permutations(rng, B, N)
        for k in range(N):
            theta_cav = th0 + (N - 1) * theta_f
            mean, cov, nat, proj = _moments(theta_cav, J, floor)
            if proj.any():
                bad = proj & ~priv[:, None]
                if bad.any():
                    raise ValueError(
                        f"{int(bad.sum())} cavity precision(s) of a non-private SEP run are "
                        "not positive definite")
                counts += proj.sum(axis=1)
            theta_fn = mog_site(mean, cov, x[perms[:, k]], model, cavity_natural=nat)
            theta_fn = _clip_rows(theta_fn, clip_c)
            theta_new = (w_site[:, None] * theta_fn + w_f[:, None] * theta_f + th0)
            if any_noise:
                theta_new = theta_new + noise[:, None] * rng.standard_normal((B, P))
            theta_f = _clip_rows((theta_new - th0) / N, clip_c)
        trace[:, t + 1] = _moments(th0 + N * theta_f, J, np.maximum(floor, 1e-12))[0]
    theta_q = th0 + N * theta_f
    means, covs, _, fproj = _moments(theta_q, J, np.maximum(floor, 1e-12))
    out = []
    for i, s in enumerate(settings):
        sl = slice(i * n_trials, (i + 1) * n_trials)
        out.append(MoGRun(
            theta_q=theta_q[sl], theta_f=theta_f[sl], means=means[sl], covs=covs[sl],
            trace_means=trace[sl], projections=counts[sl].copy(),
            final_projections=fproj[sl].sum(axis=1), theta_0=priors[i],
            info={"reading": None if s is None else s.reading,
                  "noise_std": float(noise[i * n_trials]),
                  "damping_factor": float(w_site[i * n_trials] / N),
                  "prior_norm": prior_norm,
                  "theta_0_norm": float(np.linalg.norm(priors[i])),
                  "init_means": init_means if isinstance(init_means, str | None) else "array",
                  "epochs": epochs, "n_records": N}))
    return out


def run_mog_sep(x, model: MoGModel, *, epochs: int, n_trials: int = 1,
                rng: np.random.Generator, params: DPSEPParams | None = None,
                damping: float = 1.0, prior_norm: str = "raise", theta_0=None,
                init_means="random") -> MoGRun:
    """SEP (v0 Alg. 2), clipped SEP or DP-SEP (Alg. 3) on the MoG model, vectorised.

    Mirrors :func:`dpclaims.algorithms.sep.sep.run_sep`: q = p0 f^N, cavity p0 f^{N-1};
    ``params`` None is plain SEP with damping gamma/N; ``params`` with
    ``noise_multiplier=None`` is clipped SEP (steps 6 and 9, no noise) and otherwise
    DP-SEP, each under ``params.reading``:

        theta_new = (gamma/N) theta_fn + (N - gamma/N) theta_f + theta_0     (eq. 4, "as-printed")
        theta_new = gamma theta_fn + (N - gamma) theta_f + theta_0           (SEP-invariant)

    then theta~_new = theta_new + N(0, noise_std^2 I) and
    theta_f <- clip((theta~_new - theta_0)/N, C) (step 9); theta_fn is clipped to C first
    (step 6). All clipping and noise act on the whole P = J(d + d(d+1)/2) vector.

    Parameters
    ----------
    x : array (N, d); model : MoGModel
    epochs : int
        Passes over a fresh random permutation (per trial).
    n_trials : int
    rng : numpy.random.Generator
    params : DPSEPParams or None
    damping : float
        gamma for plain SEP (DP runs use ``params.damping``).
    prior_norm : {"raise", "clip", "allow"}
        Module docstring: the paper's prior has ||theta_0|| = sqrt(J d) > C = 1.
    theta_0 : array (P,), optional
        Default :func:`prior_natural` (model).
    init_means : "random", None or array
        Symmetry-breaking initial site (:func:`initial_site`); None starts at the prior,
        where all components stay identical.

    Returns
    -------
    MoGRun

    Raises
    ------
    ValueError
        As :func:`run_mog_sep_batch`.
    """
    return run_mog_sep_batch(x, model, [params], epochs=epochs, n_trials=n_trials, rng=rng,
                             damping=damping, prior_norm=prior_norm, theta_0=theta_0,
                             init_means=init_means)[0]


def run_mog_ep(x, model: MoGModel, *, epochs: int, n_trials: int = 1,
               rng: np.random.Generator, theta_0=None, init_means="random",
               damping: float = 1.0, invalid_cavity: str = "raise") -> MoGRun:
    """EP (v0 Alg. 1) on the MoG model: N sites per trial, random-permutation sweeps.

    q = p0 prod_n f_n; each step removes f_n (cavity), moment-matches the tilted
    distribution and replaces f_n by f_n^{1-a} f_new^a (a = ``damping``; 1 = plain EP).
    Memory n_trials N P. Every site starts at :func:`initial_site` (so that
    q = prod_j N(m_init_j, v I); ``init_means`` as in :func:`run_mog_sep`).

    ``invalid_cavity``: "raise" (as ``sep.run_ep``) or "skip": leave the site of a trial
    whose cavity is not positive definite unchanged for this step (the usual EP remedy,
    Minka 2001); the number of skipped updates is ``projections`` of the result.

    Returns
    -------
    MoGRun (``theta_f`` None)

    Raises
    ------
    ValueError
        Bad inputs, or a cavity that is not positive definite (no projection: EP is not
        private; as ``sep.run_ep``).
    """
    x = _check_x(x, model)
    N = x.shape[0]
    J, P = model.n_components, model.natural_size
    epochs = check_count(epochs, "epochs", minimum=1)
    n_trials = check_count(n_trials, "n_trials", minimum=1)
    th0 = prior_natural(model) if theta_0 is None else check_finite_array(theta_0, "theta_0",
                                                                         ndim=1)
    if th0.shape != (P,):
        raise ValueError(f"theta_0 must have shape ({P},), got {th0.shape}")
    alpha = check_positive(damping, "damping")
    if alpha > 1:
        raise ValueError(f"EP damping must lie in (0, 1], got {damping!r}")
    if invalid_cavity not in ("raise", "skip"):
        raise ValueError(f"invalid_cavity must be 'raise' or 'skip', got {invalid_cavity!r}")
    init = initial_site(model, init_means, N, n_trials, rng)
    sites = np.repeat(init[:, None, :], N, axis=1)
    theta_q = th0 + N * init
    zero = np.zeros(n_trials)
    skipped = np.zeros(n_trials, dtype=np.int64)
    trace = np.empty((n_trials, epochs + 1, J, model.dim))
    trace[:, 0] = _moments(theta_q, J, zero)[0]
    rows = np.arange(n_trials)
    for t in range(epochs):
        perms = _permutations(rng, n_trials, N)
        for k in range(N):
            idx = perms[:, k]
            theta_cav = theta_q - sites[rows, idx]
            mean, cov, nat, proj = _moments(theta_cav, J, zero)
            bad = proj.any(axis=1)
            if bad.any():
                if invalid_cavity == "raise":
                    raise ValueError(f"{int(proj.sum())} EP cavity precision(s) are not "
                                     f"positive definite (epoch {t}, step {k})")
                # the skipped trials' site is discarded below; compute it on a valid cavity
                mean, cov, nat, _ = _moments(np.where(bad[:, None], theta_q, theta_cav), J,
                                             zero)
            new_site = mog_site(mean, cov, x[idx], model, cavity_natural=nat)
            old = sites[rows, idx]
            new_site = (1 - alpha) * old + alpha * new_site
            new_site = np.where(bad[:, None], old, new_site)
            skipped += bad
            sites[rows, idx] = new_site
            theta_q = np.where(bad[:, None], theta_q, theta_cav + new_site)
        trace[:, t + 1] = _moments(theta_q, J, zero)[0]
    means, covs, _, fproj = _moments(theta_q, J, np.full(n_trials, 1e-12))
    return MoGRun(theta_q=theta_q, theta_f=None, means=means, covs=covs, trace_means=trace,
                  projections=skipped, final_projections=fproj.sum(axis=1), theta_0=th0,
                  info={"epochs": epochs, "n_records": N, "damping": alpha,
                        "invalid_cavity": invalid_cavity, "skipped_updates": int(skipped.sum())})


# --------------------------------------------------------------------------- matching
def _best_permutations(cost: np.ndarray) -> np.ndarray:
    """Minimum-cost assignment for cost (..., J, J) (rows: reference, cols: estimate).

    Returns (..., J): for reference j the estimate index. Exhaustive and vectorised over
    the J! permutations for J <= 6 (identical optimum to linear_sum_assignment up to
    ties), else scipy.optimize.linear_sum_assignment per problem.
    """
    J = cost.shape[-1]
    lead = cost.shape[:-2]
    if J <= 6:
        perms = np.array(list(itertools.permutations(range(J))))      # (J!, J)
        total = cost[..., np.arange(J), perms].sum(axis=-1)          # (..., J!)
        return perms[np.argmin(total, axis=-1)]
    flat = cost.reshape(-1, J, J)
    out = np.empty((flat.shape[0], J), dtype=np.int64)
    for i, c in enumerate(flat):
        rows, cols = linear_sum_assignment(c)
        out[i, rows] = cols
    return out.reshape(lead + (J,))


def match_components(est_means, ref_means) -> np.ndarray:
    """Hungarian matching of estimated components to reference ones on squared distances.

    Parameters
    ----------
    est_means : array (..., J, d)
    ref_means : array (J, d) or (..., J, d)

    Returns
    -------
    perm : int array (..., J)
        ``est[..., perm[..., j], :]`` is matched to reference component j (minimises the
        total squared distance, as scipy.optimize.linear_sum_assignment).
    """
    est = np.asarray(est_means, dtype=float)
    ref = np.asarray(ref_means, dtype=float)
    cost = np.sum((ref[..., :, None, :] - est[..., None, :, :]) ** 2, axis=-1)
    return _best_permutations(cost)


def _take(arr, perm):
    """arr (..., J, ...) permuted along the component axis (ndim of perm - 1)."""
    axis = perm.ndim - 1
    idx = perm.reshape(perm.shape + (1,) * (arr.ndim - perm.ndim))
    return np.take_along_axis(arr, idx, axis=axis)


# --------------------------------------------------------------------------- Gibbs
@dataclass
class GibbsResult:
    """Ground truth from :func:`gibbs_mog`.

    Attributes
    ----------
    means : (J, d), covs : (J, d, d)
        Posterior mean and covariance of each mu_j over all matched draws of all chains.
    draws : (n_chains, n_samples, J, d)
        Post-burn-in draws after label matching.
    rhat : (J, d)
        Rank-normalised split-R-hat (``dpclaims.analysis.ou.split_rhat``) per coordinate,
        each chain split in two halves.
    frac_relabelled : float
        Fraction of draws whose matching permutation is not the identity.
    matching_passes : int
        Passes until the reference stopped changing the permutations.
    """

    means: np.ndarray
    covs: np.ndarray
    draws: np.ndarray
    rhat: np.ndarray
    frac_relabelled: float
    matching_passes: int
    info: dict = field(default_factory=dict)

    @property
    def max_rhat(self) -> float:
        """Largest split-R-hat over all coordinates."""
        return float(np.nanmax(self.rhat))


def gibbs_mog(x, model: MoGModel, *, n_samples: int, burn_in: int, n_chains: int = 4,
              seed=0, init_means=None, max_matching_passes: int = 50,
              anneal_fraction: float = 0.5, anneal_start: float = 0.01) -> GibbsResult:
    """Conjugate Gibbs sampler for the MoG posterior over the means, vectorised over chains.

    Alternates h_n | mu, x ~ Categorical(r_n), r_nj ∝ pi_j N(x_n; mu_j, s^2 I) (drawn by the
    Gumbel-max trick) and mu_j | h, x ~ N(b_j / a_j, I / a_j) with
    a_j = 1/v + N_j / s^2, b_j = m/v + sum_{n: h_n = j} x_n / s^2.

    Label switching: every post-burn-in draw's components are matched to a reference by
    the minimum-total-squared-distance assignment (:func:`match_components`). The
    reference starts at chain 0's first post-burn-in draw; it is then replaced by chain
    0's post-burn-in average of the matched draws and the matching repeated, until no
    permutation changes (a fixed point) or ``max_matching_passes``.

    Tempered burn-in: during the first ``anneal_fraction`` of the burn-in the
    likelihood is raised to a power beta rising geometrically from ``anneal_start`` to 1
    (both conditionals use the tempered likelihood); later burn-in and all kept draws use
    beta = 1, so the kept chain targets the posterior. Without it, chains started from
    the prior often stay in a minor mode (e.g. one component covering two nearby
    clusters and two components splitting another; with the weights fixed at 1/J such a
    mode can be ~100 nats below the main one yet never be left). ``info["log_joint"]``
    gives each chain's mean log joint density over the kept draws; R-hat >> 1 signals
    chains in different modes.

    Parameters
    ----------
    x : array (N, d); model : MoGModel
    n_samples, burn_in : int
        Kept draws and discarded draws per chain.
    anneal_fraction : float in [0, 1]; anneal_start : float in (0, 1]
        Tempered part of the burn-in (0: none) and its initial power.
    n_chains : int
    seed : int or numpy.random.SeedSequence
    init_means : array (n_chains, J, d), optional
        Starting means (default: draws from the prior).

    Returns
    -------
    GibbsResult
    """
    x = _check_x(x, model)
    n_samples = check_count(n_samples, "n_samples", minimum=4)
    burn_in = check_count(burn_in, "burn_in", minimum=0)
    n_chains = check_count(n_chains, "n_chains", minimum=1)
    rng = np.random.default_rng(seed)
    J, d = model.n_components, model.dim
    s2, v, m0 = model.noise_std ** 2, model.prior_var, model.prior_mean
    if init_means is None:
        mu = m0 + math.sqrt(v) * rng.standard_normal((n_chains, J, d))
    else:
        mu = check_finite_array(init_means, "init_means").copy()
        if mu.shape != (n_chains, J, d):
            raise ValueError(f"init_means must have shape {(n_chains, J, d)}, got {mu.shape}")
    if not 0.0 <= anneal_fraction <= 1.0:
        raise ValueError(f"anneal_fraction must lie in [0, 1], got {anneal_fraction!r}")
    if not 0.0 < anneal_start <= 1.0:
        raise ValueError(f"anneal_start must lie in (0, 1], got {anneal_start!r}")
    n_anneal = int(anneal_fraction * burn_in)
    betas = np.ones(burn_in + n_samples)
    if n_anneal > 0:
        betas[:n_anneal] = np.geomspace(anneal_start, 1.0, n_anneal)
    logw = model.log_weights
    draws = np.empty((n_chains, n_samples, J, d))
    log_joint = np.zeros(n_chains)
    comps = np.arange(J)
    for it in range(burn_in + n_samples):
        beta = betas[it]
        sq = np.sum((x[None, :, None, :] - mu[:, None, :, :]) ** 2, axis=-1)   # (C, N, J)
        if it >= burn_in:   # log p(x, mu) with h summed out, at the current mu
            log_joint += (np.sum(logsumexp(logw - sq / (2 * s2), axis=-1), axis=-1)
                          - np.sum((mu - m0) ** 2, axis=(1, 2)) / (2 * v))
        logits = beta * (logw - sq / (2 * s2))
        h = np.argmax(logits + rng.gumbel(size=logits.shape), axis=-1)          # (C, N)
        onehot = (h[..., None] == comps).astype(float)
        counts = onehot.sum(axis=1)                                            # (C, J)
        sums = np.einsum("cnj,nd->cjd", onehot, x)
        a = 1.0 / v + beta * counts / s2
        mean = (m0 / v + beta * sums / s2) / a[..., None]
        mu = mean + rng.standard_normal((n_chains, J, d)) / np.sqrt(a)[..., None]
        if it >= burn_in:
            draws[:, it - burn_in] = mu
    log_joint /= n_samples
    ref = draws[0, 0]
    perm = None
    passes = 0
    while passes < max_matching_passes:
        passes += 1
        new = match_components(draws, ref)
        ref = _take(draws[0], new[0]).mean(axis=0)
        if perm is not None and np.array_equal(new, perm):
            break
        perm = new
    matched = _take(draws, perm)
    flat = matched.reshape(-1, J, d)
    means = flat.mean(axis=0)
    cen = flat - means
    covs = np.einsum("sja,sjb->jab", cen, cen) / (flat.shape[0] - 1)
    half = n_samples // 2
    windows = matched[:, n_samples - 2 * half:].reshape(n_chains * 2 * half, J * d)
    rhat = split_rhat(windows, n_splits=2 * n_chains).reshape(J, d)
    frac = float(np.mean(np.any(perm != comps, axis=-1)))
    return GibbsResult(means=means, covs=covs, draws=matched, rhat=rhat,
                       frac_relabelled=frac, matching_passes=passes,
                       info={"n_samples": n_samples, "burn_in": burn_in,
                             "n_chains": n_chains, "annealed_steps": n_anneal,
                             "log_joint": log_joint.tolist()})


# --------------------------------------------------------------------------- metrics
def _kl_or_inf(m0, c0, m1, c1):
    """KL[N(m0,c0) || N(m1,c1)] with +inf where either covariance is not PD."""
    pd0 = is_positive_definite(c0)
    eye = np.broadcast_to(np.eye(c0.shape[-1]), c0.shape)
    safe0 = np.where(pd0[..., None, None], c0, eye)
    kl = gaussian_kl(m0, safe0, m1, c1)
    return np.where(pd0, kl, np.inf)


def mog_metrics(est_means, est_covs, truth_means, truth_covs) -> dict:
    """Accuracy of estimated components against the ground truth, per leading index.

    Components are first matched to the truth by :func:`match_components` (Hungarian on
    squared distances of the means); then

    - ``fnorm_mean``: ||stack_j(m_j) - stack_j(m*_j)||_2, the "L2 distance between the
      parameters ... when the parameters are reshaped into a long vector" (v1 Sec. 6.1);
    - ``fnorm_cov``: the same on the stacked covariances (Frobenius);
    - ``fnorm_avg``: their mean (v1 Table 1 "average F-norm");
    - ``kl_{pairing}`` / ``kl_rev_{pairing}`` for pairing in ("nearest", "hungarian"):
      v0's proxy "We first pair two Gaussians in terms of their mean locations (i.e.,
      from a given Gaussian in ground truth, which estimated Gaussian is closest in terms
      of the mean estimate), and then compute the KL divergence between the paired
      Gaussians and averaged over those KL divergences across four paired Gaussians".
      "nearest" pairs each truth with its nearest estimate (two truths may share one
      estimate), "hungarian" one-to-one. ``kl_*`` is KL[truth || estimate] (main reading),
      ``kl_rev_*`` KL[estimate || truth]. +inf where an estimated covariance is not PD.

    Parameters
    ----------
    est_means : (..., J, d); est_covs : (..., J, d, d)
    truth_means : (J, d); truth_covs : (J, d, d)

    Returns
    -------
    dict of arrays of shape (...) plus ``perm`` (..., J) (the Hungarian matching).
    """
    em = check_finite_array(est_means, "est_means")
    ec = check_finite_array(est_covs, "est_covs")
    tm = check_finite_array(truth_means, "truth_means", ndim=2)
    tc = check_finite_array(truth_covs, "truth_covs", ndim=3)
    J, d = tm.shape
    if em.shape[-2:] != (J, d) or ec.shape[-3:] != (J, d, d) or ec.shape[:-3] != em.shape[:-2]:
        raise ValueError(f"shapes do not match: est_means {em.shape}, est_covs {ec.shape}, "
                         f"truth_means {tm.shape}")
    if tc.shape != (J, d, d):
        raise ValueError(f"truth_covs must have shape {(J, d, d)}, got {tc.shape}")
    perm = match_components(em, tm)
    mm, mc = _take(em, perm), _take(ec, perm)
    lead = em.shape[:-2]
    f_mean = np.linalg.norm((mm - tm).reshape(lead + (-1,)), axis=-1)
    f_cov = np.linalg.norm((mc - tc).reshape(lead + (-1,)), axis=-1)
    out = {"fnorm_mean": f_mean, "fnorm_cov": f_cov, "fnorm_avg": 0.5 * (f_mean + f_cov),
           "perm": perm}
    dist = np.sum((tm[:, None, :] - em[..., None, :, :]) ** 2, axis=-1)   # (..., J, J)
    pairs = {"nearest": np.argmin(dist, axis=-1), "hungarian": perm}
    for name, pr in pairs.items():
        pm, pc = _take(em, pr), _take(ec, pr)
        out[f"kl_{name}"] = np.mean(_kl_or_inf(tm, tc, pm, pc), axis=-1)
        out[f"kl_rev_{name}"] = np.mean(_kl_or_inf(pm, pc, tm, tc), axis=-1)
    return out


# --------------------------------------------------------------------------- DP-EM
def default_data_radius(model: MoGModel, quantile: float = 0.999) -> float:
    """A data-independent radius for DP-EM's record clipping: the prior-predictive quantile.

    Under the model x = mu + s z with mu ~ N(m 1, v I) and m = 0, ||x||^2 / (v + s^2) is
    chi^2_d, so R = sqrt((v + s^2) chi2.ppf(quantile, d)) (+ abs(m) sqrt(d)). It uses only
    the model, never the data, so it costs no privacy.
    """
    return float(math.sqrt((model.prior_var + model.noise_std ** 2) * chi2.ppf(quantile,
                                                                                 model.dim))
                 + abs(model.prior_mean) * math.sqrt(model.dim))


def dp_em_sensitivity(reading: str, radius: float) -> float:
    """Replace-one L2 sensitivity of one DP-EM release (all statistics jointly).

    The released vector is sum_n r_n ⊗ y_n with r_n in the simplex (E-step
    responsibilities) and y_n = (1, x_n) ("means-only": counts and sums) or
    y_n = (1, x_n, vec(x_n x_n^T)) ("means-and-covariances"), ||x_n|| <= R. Replacing
    record n changes it by r ⊗ y - r' ⊗ y', whose squared norm is
    ||r||^2 ||y||^2 + ||r'||^2 ||y'||^2 - 2 (r.r')(y.y').

    - means-only: y.y' = 1 + x.x' >= 1 - R^2. For R <= 1 the maximum is at r ⊥ r'
      one-hot: 2(1 + R^2); for R > 1 at r = r' one-hot, x' = -x: 4R^2. Delta =
      sqrt(max(2(1 + R^2), 4 R^2)).
    - means-and-covariances: y.y' = 1 + t + t^2 > 0 (t = x.x'), so the maximum is at
      r ⊥ r' one-hot with ||x|| = ||x'|| = R: Delta = sqrt(2 (1 + R^2 + R^4)).
    """
    r = check_positive(radius, "radius")
    if reading == "means-only":
        return math.sqrt(max(2 * (1 + r ** 2), 4 * r ** 2))
    if reading == "means-and-covariances":
        return math.sqrt(2 * (1 + r ** 2 + r ** 4))
    raise ValueError(f"reading must be one of {DPEM_READINGS}, got {reading!r}")


@dataclass
class DPEMRun:
    """Result of :func:`run_dp_em`.

    Attributes
    ----------
    means : (n_trials, J, d)
    component_covs : (n_trials, J, d, d)
        The known s^2 I ("means-only") or the estimated component covariances.
    trace_means : (n_trials, iterations + 1, J, d)
    noise_multiplier, noise_std, sensitivity : float
    n_clipped_records : int
        Records with ||x|| > R scaled onto the sphere of radius R.
    count_floorings, pd_projections : int
        Noisy counts raised to ``count_floor`` and covariances projected (all trials).
    """

    means: np.ndarray
    component_covs: np.ndarray
    trace_means: np.ndarray
    noise_multiplier: float
    noise_std: float
    sensitivity: float
    n_clipped_records: int
    count_floorings: int
    pd_projections: int
    info: dict = field(default_factory=dict)


def run_dp_em(x, model: MoGModel, *, iterations: int, n_trials: int = 1,
              rng: np.random.Generator, epsilon: float | None, delta: float = 1e-5,
              reading: str = "means-only", data_radius: float, count_floor: float = 1.0,
              pd_floor: float = 1e-6, init_means=None) -> DPEMRun:
    """DP-EM (Park, Foulds, Chaudhuri & Welling 2017) for the GMM, vectorised over trials.

    Each iteration: E-step r_nj ∝ pi_j N(x_n; mu_j, Sigma_j) with the known weights; the
    expected sufficient statistics (counts sum_n r_nj, sums sum_n r_nj x_n and, in the
    "means-and-covariances" reading, sum_n r_nj x_n x_n^T, full d x d) are released
    together with i.i.d. Gaussian noise of std sigma Delta per coordinate (no subsampling:
    the full data every iteration); M-step mu_j = S_j / N_j and
    Sigma_j = PD(SS_j / N_j - mu_j mu_j^T) (symmetrised; eigenvalues raised to
    ``pd_floor``). Noisy counts below ``count_floor`` are raised to it. Both are
    post-processing.

    Readings: "means-only" (the model's variance s^2 and weights known, as v0 says "we
    assume the rest of the parameters to be known"; Sigma_j = s^2 I throughout) and
    "means-and-covariances" (v1 Table 1 reports an F-norm on covariance for DP-EM; the
    component covariances are estimated, starting at v I).

    Privacy: neighbouring relation replace-one; records are first clipped to
    ||x_n|| <= ``data_radius`` (x_n min(1, R / ||x_n||); the number clipped is reported).
    Sensitivity Delta from :func:`dp_em_sensitivity`; sigma from
    :func:`dpclaims.analysis.accounting.composed_gaussian_sigma` so that the whole run
    of ``iterations`` releases is exactly (epsilon, delta)-DP (sqrt(T)/sigma-GDP). The
    initial means are drawn from the prior (data-independent).

    Parameters
    ----------
    x : array (N, d); model : MoGModel
    iterations : int
        T EM iterations (the paper: "100 iterations").
    n_trials : int
    rng : numpy.random.Generator
    epsilon : float or None
        None: non-private EM (no noise; records still clipped to ``data_radius``).
    delta : float
    reading : {"means-only", "means-and-covariances"}
    data_radius : float
        R > 0; required (explicit), see :func:`default_data_radius`.
    count_floor, pd_floor : float
    init_means : array (J, d) or (n_trials, J, d), optional

    Returns
    -------
    DPEMRun

    Raises
    ------
    ValueError
        Bad data or arguments (epsilon <= 0, delta outside [0, 1), R <= 0, unknown reading).
    """
    x = _check_x(x, model)
    if reading not in DPEM_READINGS:
        raise ValueError(f"reading must be one of {DPEM_READINGS}, got {reading!r}")
    T = check_count(iterations, "iterations", minimum=1)
    n_trials = check_count(n_trials, "n_trials", minimum=1)
    R = check_positive(data_radius, "data_radius")
    count_floor = check_positive(count_floor, "count_floor")
    pd_floor = check_positive(pd_floor, "pd_floor")
    delta = check_delta(delta)
    delta_s = dp_em_sensitivity(reading, R)
    if epsilon is None:
        sigma = 0.0
    else:
        sigma = composed_gaussian_sigma(epsilon, delta, T)
    std = sigma * delta_s
    norms = np.linalg.norm(x, axis=1)
    clipped = norms > R
    xc = x * np.where(clipped, R / np.where(clipped, norms, 1.0), 1.0)[:, None]
    J, d = model.n_components, model.dim
    s2 = model.noise_std ** 2
    if init_means is None:
        mu = model.prior_mean + math.sqrt(model.prior_var) * rng.standard_normal((n_trials, J, d))
    else:
        mu = np.broadcast_to(check_finite_array(init_means, "init_means"),
                             (n_trials, J, d)).copy()
    full = reading == "means-and-covariances"
    sig = np.broadcast_to((s2 if not full else model.prior_var) * np.eye(d),
                          (n_trials, J, d, d)).copy()
    trace = np.empty((n_trials, T + 1, J, d))
    trace[:, 0] = mu
    floorings = projections = 0
    outer = np.einsum("na,nb->nab", xc, xc)
    for t in range(T):
        r = responsibilities(xc, mu, sig, model)                  # (n, N, J)
        counts = r.sum(axis=1)
        sums = np.einsum("tnj,nd->tjd", r, xc)
        if std > 0:
            counts = counts + std * rng.standard_normal(counts.shape)
            sums = sums + std * rng.standard_normal(sums.shape)
        low = counts < count_floor
        floorings += int(low.sum())
        counts = np.maximum(counts, count_floor)
        mu = sums / counts[..., None]
        if full:
            second = np.einsum("tnj,nab->tjab", r, outer)
            if std > 0:
                second = second + std * rng.standard_normal(second.shape)
            cov = second / counts[..., None, None] - np.einsum("tja,tjb->tjab", mu, mu)
            cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
            bad = ~is_positive_definite(cov) | (np.linalg.eigvalsh(cov)[..., 0] < pd_floor)
            projections += int(bad.sum())
            sig = nearest_positive_definite(cov, pd_floor)
        trace[:, t + 1] = mu
    return DPEMRun(means=mu, component_covs=sig, trace_means=trace, noise_multiplier=sigma,
                   noise_std=std, sensitivity=delta_s, n_clipped_records=int(clipped.sum()),
                   count_floorings=floorings, pd_projections=projections,
                   info={"reading": reading, "epsilon": epsilon, "delta": delta,
                         "iterations": T, "data_radius": R, "relation": "replace-one"})
