"""EP, SEP and DP-SEP (Vinaroz & Park, DP-SEP v0 Algorithms 1-3), vectorised over trials.

State and parametrisation
-------------------------
All natural parameters are flat vectors (:mod:`dpclaims.analysis.gaussian`:
``h`` then the upper triangle of the precision); one L2 norm serves clipping,
sensitivity and noise. The leading axis of every state is the trial axis: ``n``
independent runs (own permutations, own noise) advance together in one numpy call
per step. One epoch is one pass over a random permutation of the N records
(Alg. 3 step 2: "for n in {1, ..., N}, uniformly random without replacement").

SEP keeps one site f with q = p0 f^N (eq. 2) and cavity q_{-1} = p0 f^{N-1} (eq. 3).

The readings of DP-SEP (Algorithm 3)
------------------------------------
Alg. 3 step 7 and eq. 4 set

    theta_new = (gamma/N) theta_fn + (N - gamma/N) theta_f + theta_0            (eq. 4)

and step 9 sets theta_f^new = (theta~_new - theta_0) / N. Composed, the site moves by
(gamma/N^2)(theta_fn - theta_f): a damping of gamma/N^2. SEP's own implicit update
(Alg. 2 step 5, f <- f^{1-gamma/N} f_n^{gamma/N}) with the invariant q = p0 f^N gives

    theta_new = gamma theta_fn + (N - gamma) theta_f + theta_0,

a damping of gamma/N, whose replace-one sensitivity is 2 gamma C, N times the
2 gamma C / N of Prop. 1. The two disagree, so both are implemented:

``"as-printed"``
    eq. 4 literally; noise std sigma * 2 gamma C / N (step 8 with Prop. 1's Delta).
``"sep-invariant"``
    SEP's update with q = p0 f^N; the printed noise std sigma * 2 gamma C / N.
``"sep-invariant-recalibrated"``
    SEP's update with noise calibrated to its true sensitivity: std sigma * 2 gamma C.

In every reading the released quantity is theta~_new (step 8), and the next site is
clip((theta~_new - theta_0) / N, C) (step 9). A noised precision can be indefinite;
where a positive definite matrix is needed (the cavity's moments) its eigenvalues are
raised to ``pd_floor`` (v1 Sec. 3.3; post-processing, so privacy is unaffected) and
the number of such projections is counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpclaims.analysis.gaussian import (
    clip_to_norm,
    factor_product,
    natural_dim,
    unflatten_natural,
)
from dpclaims.analysis.validation import (
    check_count,
    check_finite_array,
    check_positive,
)

READINGS = ("as-printed", "sep-invariant", "sep-invariant-recalibrated")


@dataclass(frozen=True)
class DPSEPParams:
    """Hyperparameters of DP-SEP (Algorithm 3) and the reading of its update.

    Parameters
    ----------
    clipping_norm : float
        C > 0: bound on the L2 norm of theta_fn (step 6) and theta_f (step 9).
    damping : float
        gamma > 0; the damping factor is gamma / N.
    noise_multiplier : float or None
        sigma > 0 (step 8: n ~ N(0, sigma^2 Delta^2 I)); None for clipped SEP
        (clipping without noise, the paper's "SEP clipped").
    reading : str
        One of :data:`READINGS` (module docstring).
    pd_floor : float
        Eigenvalue floor of the positive-definite projection (v1 Sec. 3.3).
    """

    clipping_norm: float = 1.0
    damping: float = 1.0
    noise_multiplier: float | None = None
    reading: str = "as-printed"
    pd_floor: float = 1e-6

    def __post_init__(self):
        check_positive(self.clipping_norm, "clipping_norm")
        check_positive(self.damping, "damping")
        check_positive(self.pd_floor, "pd_floor")
        if self.noise_multiplier is not None:
            check_positive(self.noise_multiplier, "noise_multiplier")
        if self.reading not in READINGS:
            raise ValueError(f"reading must be one of {READINGS}, got {self.reading!r}")

    def claimed_sensitivity(self, n_records: int) -> float:
        """Prop. 1's L2 sensitivity of theta_new: 2 gamma C / N."""
        return 2.0 * self.damping * self.clipping_norm / n_records

    def true_sensitivity_bound(self, n_records: int) -> float:
        """Replace-one L2 sensitivity bound of theta_new under this reading's update.

        2 gamma C / N for "as-printed", 2 gamma C for the SEP-invariant readings
        (the triangle inequality on the theta_fn term, as in Prop. 1's proof).
        """
        if self.reading == "as-printed":
            return self.claimed_sensitivity(n_records)
        return 2.0 * self.damping * self.clipping_norm

    def noise_std(self, n_records: int) -> float:
        """Std of each coordinate of the step-8 noise (0 when noise_multiplier is None)."""
        if self.noise_multiplier is None:
            return 0.0
        if self.reading == "sep-invariant-recalibrated":
            return self.noise_multiplier * self.true_sensitivity_bound(n_records)
        return self.noise_multiplier * self.claimed_sensitivity(n_records)


def cavity_moments(theta_cavity: np.ndarray, pd_floor: float | None = None):
    """Mean (n, d) and covariance (n, d, d) of cavities (n, p), and a mask of projections.

    If ``pd_floor`` is given, precision eigenvalues below it are raised to it
    (v1 Sec. 3.3) and the returned boolean mask (n,) says which rows were projected;
    otherwise a non positive definite precision raises ValueError.
    """
    h, precision = unflatten_natural(theta_cavity)
    vals, vecs = np.linalg.eigh(precision)
    projected = vals[:, 0] <= (0.0 if pd_floor is None else pd_floor)
    if projected.any():
        if pd_floor is None:
            raise ValueError(
                f"{int(projected.sum())} cavity precision(s) are not positive definite "
                f"(smallest eigenvalue {vals[projected, 0].min():.3g})"
            )
        vals = np.maximum(vals, pd_floor)
    cov = np.einsum("nij,nj,nkj->nik", vecs, 1.0 / vals, vecs)
    mean = np.einsum("nij,nj->ni", cov, h)
    return mean, cov, projected


def dpsep_theta_new(theta_f, theta_fn, theta_0, n_records: int, params: DPSEPParams):
    """Noiseless theta_new (..., p) of one DP-SEP step under ``params.reading``.

    ``theta_fn`` must already be clipped (step 6). As-printed: eq. 4,
    (gamma/N) theta_fn + (N - gamma/N) theta_f + theta_0. SEP-invariant readings:
    gamma theta_fn + (N - gamma) theta_f + theta_0.
    """
    g, N = params.damping, n_records
    if params.reading == "as-printed":
        weights = (g / N, N - g / N, 1.0)
    else:
        weights = (g, N - g, 1.0)
    return factor_product((theta_fn, theta_f, theta_0), weights)


@dataclass
class SEPRun:
    """Result of :func:`run_sep` / :func:`run_ep`.

    Attributes
    ----------
    theta_q : ndarray (n_trials, p)
        Natural parameters of the final approximate posterior.
    theta_f : ndarray (n_trials, p) or None
        Final SEP site (None for EP).
    trace : ndarray (n_trials, epochs + 1, p)
        theta_q at the start and after every epoch.
    released : ndarray (n_trials, epochs, N, p) or None
        Every released theta~_new (DP-SEP only, when ``record_steps``).
    n_projections : int
        Cavities projected to positive definite over the run (all trials).
    """

    theta_q: np.ndarray
    theta_f: np.ndarray | None
    trace: np.ndarray
    released: np.ndarray | None = None
    n_projections: int = 0
    info: dict = field(default_factory=dict)


def _check_data(x, y):
    x = check_finite_array(x, "x (features)", ndim=2)
    y = check_finite_array(y, "y (targets)", ndim=1)
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x has {x.shape[0]} rows but y has {y.shape[0]}")
    if x.shape[0] < 1:
        raise ValueError("the dataset is empty")
    return x, y


def _permutations(rng, n_trials, n_records):
    return rng.permuted(np.tile(np.arange(n_records), (n_trials, 1)), axis=1)


def run_sep(
    x,
    y,
    likelihood,
    theta_0,
    *,
    epochs: int,
    n_trials: int = 1,
    params: DPSEPParams | None = None,
    rng: np.random.Generator,
    theta_f_init=None,
    record_steps: bool = False,
    damping: float = 1.0,
) -> SEPRun:
    """Run SEP (Alg. 2), clipped SEP, or DP-SEP (Alg. 3) for ``n_trials`` runs at once.

    Parameters
    ----------
    x : array (N, d)
        Features. y : array (N,) targets.
    likelihood : LinearGaussian or Probit
        Supplies ``site(cavity_mean, cavity_cov, x, y)``.
    theta_0 : array (p,)
        Prior natural parameters, p = d + d(d+1)/2. Alg. 3 requires ||theta_0|| <= C;
        a larger prior raises ValueError for DP runs (nothing is clipped silently).
    epochs : int
        T, passes over a fresh random permutation per trial.
    n_trials : int
        Independent runs advanced together (leading axis).
    params : DPSEPParams or None
        None: plain SEP with damping gamma/N and the invariant q = p0 f^N.
        With ``noise_multiplier=None``: clipped SEP (steps 6 and 9's clipping, no
        noise), under ``params.reading``. Otherwise DP-SEP.
    rng : numpy.random.Generator
        Source of permutations and noise (seed it: same seed, same result).
    theta_f_init : array (p,) or (n_trials, p), optional
        Initial site (default zero: q = p0 at the start).
    record_steps : bool
        Keep every released theta~_new (memory n_trials * T * N * p floats).
    damping : float
        gamma of plain SEP (``params`` None); DP runs use ``params.damping``.

    Returns
    -------
    SEPRun

    Raises
    ------
    ValueError
        On NaN in the data, mismatched shapes, or ||theta_0|| > C in a DP run.
    """
    x, y = _check_data(x, y)
    n_records, d = x.shape
    p = natural_dim(d)
    epochs = check_count(epochs, "epochs", minimum=1)
    n_trials = check_count(n_trials, "n_trials", minimum=1)
    theta_0 = check_finite_array(theta_0, "theta_0", ndim=1)
    if theta_0.shape != (p,):
        raise ValueError(f"theta_0 must have shape ({p},) for d = {d}, got {theta_0.shape}")
    if params is not None and np.linalg.norm(theta_0) > params.clipping_norm * (1 + 1e-12):
        raise ValueError(
            f"||theta_0|| = {np.linalg.norm(theta_0):.6g} exceeds the clipping norm "
            f"C = {params.clipping_norm} (Alg. 3 requires initial natural parameters "
            "bounded by C)"
        )
    theta_f = np.zeros((n_trials, p))
    if theta_f_init is not None:
        init = check_finite_array(theta_f_init, "theta_f_init")
        if init.shape not in ((p,), (n_trials, p)):
            raise ValueError(f"theta_f_init must have shape ({p},) or ({n_trials}, {p}), "
                             f"got {init.shape}")
        theta_f = theta_f + init
    gamma = check_positive(damping, "damping") if params is None else params.damping
    noise_std = 0.0 if params is None else params.noise_std(n_records)
    pd_floor = None if params is None else params.pd_floor
    trace = np.empty((n_trials, epochs + 1, p))
    trace[:, 0] = theta_0 + n_records * theta_f
    released = np.empty((n_trials, epochs, n_records, p)) if record_steps else None
    n_proj = 0
    for t in range(epochs):
        perms = _permutations(rng, n_trials, n_records)
        for k in range(n_records):
            idx = perms[:, k]
            theta_cav = theta_0 + (n_records - 1) * theta_f
            mean, cov, projected = cavity_moments(theta_cav, pd_floor)
            n_proj += int(projected.sum())
            theta_fn = likelihood.site(mean, cov, x[idx], y[idx])
            if params is None:
                theta_f = factor_product((theta_f, theta_fn), (1 - gamma / n_records,
                                                               gamma / n_records))
                continue
            theta_fn = clip_to_norm(theta_fn, params.clipping_norm)
            theta_new = dpsep_theta_new(theta_f, theta_fn, theta_0, n_records, params)
            if noise_std > 0:
                theta_new = theta_new + noise_std * rng.standard_normal(theta_new.shape)
            if record_steps:
                released[:, t, k] = theta_new
            theta_f = clip_to_norm((theta_new - theta_0) / n_records, params.clipping_norm)
        trace[:, t + 1] = theta_0 + n_records * theta_f
    return SEPRun(
        theta_q=theta_0 + n_records * theta_f,
        theta_f=theta_f,
        trace=trace,
        released=released,
        n_projections=n_proj,
        info={"reading": None if params is None else params.reading, "noise_std": noise_std},
    )


def run_ep(x, y, likelihood, theta_0, *, epochs: int, n_trials: int = 1,
           rng: np.random.Generator) -> SEPRun:
    """Run EP (Algorithm 1): one site per record, refined in random-permutation sweeps.

    Keeps all N sites (n_trials, N, p): the memory cost SEP removes. Parameters
    and returns as :func:`run_sep` (``theta_f`` is None). Raises ValueError if a
    cavity is not positive definite (no projection: EP is not private).
    """
    x, y = _check_data(x, y)
    n_records, d = x.shape
    p = natural_dim(d)
    epochs = check_count(epochs, "epochs", minimum=1)
    n_trials = check_count(n_trials, "n_trials", minimum=1)
    theta_0 = check_finite_array(theta_0, "theta_0", ndim=1)
    if theta_0.shape != (p,):
        raise ValueError(f"theta_0 must have shape ({p},) for d = {d}, got {theta_0.shape}")
    sites = np.zeros((n_trials, n_records, p))
    theta_q = np.tile(theta_0, (n_trials, 1))
    trace = np.empty((n_trials, epochs + 1, p))
    trace[:, 0] = theta_q
    rows = np.arange(n_trials)
    for t in range(epochs):
        perms = _permutations(rng, n_trials, n_records)
        for k in range(n_records):
            idx = perms[:, k]
            theta_cav = theta_q - sites[rows, idx]
            mean, cov, _ = cavity_moments(theta_cav, None)
            new_site = likelihood.site(mean, cov, x[idx], y[idx])
            sites[rows, idx] = new_site
            theta_q = theta_cav + new_site
        trace[:, t + 1] = theta_q
    return SEPRun(theta_q=theta_q, theta_f=None, trace=trace)
