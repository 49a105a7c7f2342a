r"""DPVIm Sec. 3.2 / Appendix E: DP-SGD iterates near the optimum as an OU / AR(1) process.

The claims (DPVIm, Sec. 3.2 and Appendix E)
-------------------------------------------
Near the optimum ξ* of a locally quadratic loss L(ξ) ≈ ½(ξ-ξ*)ᵀA(ξ-ξ*), DP-SGD with
step size α, mini-batch size S, subsampling-noise covariance Z = BBᵀ and DP noise
N(0, σ_DP² I) added to the gradient is modelled as the Ornstein-Uhlenbeck process

    (E.5)  dξ = -αA(ξ-ξ*)dt + α(B/√S + σ_DP I) dW(t),

"with Gaussian stationary distribution" whose covariance Σ "satisfies the Lyapunov
equation"

    (E.7)  ΣA + AΣ = α(Z/S + σ_DP² I),

with time measured in iterations. Sec. 3.2 averages the last T_burn-out iterates and
chooses T_burn-out by a linear-regression slope test (quoted in :func:`linreg_burnout`);
Sec. 4.3 uses the slope threshold 0.05.

What this module provides
-------------------------
- :func:`fit_ar1`: per-parameter AR(1) fit (statsmodels ``AutoReg``) of a trace, and
  the OU process with the same law at the sampling times; the variance of the trace
  mean with and without the autocorrelation.
- :func:`var_of_mean_batch_means`: the non-parametric batch-means estimator of the
  same variance (no AR(1) assumption).
- :func:`linreg_burnout`: the paper's heuristic, as printed.
- :func:`rhat_burnout`: a principled alternative, rank-normalised split-R̂.
- :func:`lyapunov_stationary_cov`: the stationary covariance of constant-step SGD on a
  quadratic, exact (discrete Lyapunov) or the paper's continuous-time (E.7).

Shapes
------
A *trace* is an array of shape ``(T,)`` or ``(T, P)``: time axis first, P parameters.
Per-parameter results have shape ``(P,)`` for a 2-D trace and are 0-d arrays (shape
``()``) for a 1-D trace; per-candidate results have a leading candidate axis,
``(K, P)`` or ``(K,)``.

Notes on the paper's statements (checked in ``tests/test_ou.py``)
-----------------------------------------------------------------
- (E.1) rewrites B ν/√S + σ_DP ψ as (B/√S + σ_DP I)ψ' with one standard normal ψ'.
  That vector has covariance Z/S + σ_DP² I + σ_DP (B + Bᵀ)/√S, not Z/S + σ_DP² I; the
  correct single-noise form is B̂ψ'/√S with B̂B̂ᵀ = Z + Sσ_DP² I, which is Sec. 3.2's
  eq. (22). (E.7) is consistent with (22), not with (E.1)/(E.5) as printed.
- (E.7) is the continuous-time (small-α) limit. The iterates of constant-step SGD solve
  the discrete Lyapunov equation Σ = (I-αA)Σ(I-αA)ᵀ + α²N, i.e.
  AΣ + ΣAᵀ - αAΣAᵀ = αN; (E.7) drops the αAΣAᵀ term, a relative error O(α‖A‖),
  and it always *under*-states Σ (the difference solves a Lyapunov equation with a
  positive semi-definite right-hand side).
- For a non-symmetric drift matrix (e.g. a preconditioned step, as with Adam, whose use
  App. E invokes) the equation is AΣ + ΣAᵀ = αN, not ΣA + AΣ.
- Σ is linear in the noise covariance, hence affine in σ_DP² (Σ = Σ_Z/S + σ_DP² Σ_I);
  it "scales linearly with respect to σ_DP²" only when Z = 0.
- Sec. 3.2 proposes to "add the variance of the averaged traces to the variances of our
  posterior". The spread of the iterates (``AR1Fit.stationary_var``, what Sec. 4.3
  compares) and the error variance of their average (``AR1Fit.var_of_mean``, smaller by
  the effective sample size) differ by orders of magnitude; once the iterates are
  averaged, only the latter is uncertainty left in the estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.stats import norm, rankdata

from dpclaims.analysis.validation import (
    check_count,
    check_finite_array,
    check_positive,
)

#: Fewest time points (after burn-in) accepted by :func:`fit_ar1` and
#: :func:`var_of_mean_batch_means`, and needed for the default burn-out candidate grid.
MIN_TRACE_POINTS = 20

#: Smallest window in the default burn-out candidate grid.
MIN_DEFAULT_WINDOW = 10

#: Slope threshold used in DPVIm Sec. 4.3 ("we chose a slope of 0.05 as the threshold").
DPVIM_SLOPE_THRESHOLD = 0.05


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True)
class AR1Fit:
    r"""Per-parameter AR(1) fit x_t = c + φ x_{t-1} + e_t, e_t ~ N(0, s²), and its OU twin.

    Every array field has shape ``(P,)`` for a ``(T, P)`` trace and shape ``()`` for a
    ``(T,)`` trace. Fields that only exist for a stationary fit (``|phi| < 1``) are NaN
    where ``stationary`` is False; ``phi`` and ``intercept`` are always the fitted values
    (never clipped).

    Attributes
    ----------
    phi : ndarray
        Autoregressive coefficient φ (conditional least squares = conditional MLE).
    intercept : ndarray
        Constant c, in parameter units.
    innovation_var : ndarray
        Residual variance s² = RSS / (n - 1) (statsmodels ``sigma2``), units².
    mean : ndarray
        Stationary mean μ = c / (1 - φ); NaN if not stationary.
    stationary_var : ndarray
        Stationary variance γ₀ = s² / (1 - φ²), units²; NaN if not stationary.
    ou_theta : ndarray
        Mean-reversion rate θ = -log(φ) / dt of the OU process
        dX = -θ(X - μ)dt + σ_ou dW sampled every ``dt``; per unit of ``dt``.
        NaN unless 0 < φ < 1 (a negative φ has no OU twin).
    ou_diffusion_var : ndarray
        σ_ou² = 2 θ γ₀, so that the OU process has stationary variance γ₀; units² per
        unit of ``dt``. NaN where ``ou_theta`` is.
    ess : ndarray
        Effective sample size of the trace mean, exact for finite n:
        γ₀ / var_of_mean = n / [1 + 2 Σ_{k=1}^{n-1} (1 - k/n) φ^k]
        (→ n(1-φ)/(1+φ) as n → ∞). NaN if not stationary.
    var_of_mean : ndarray
        Variance of the mean of the n used points of a stationary AR(1),
        γ₀/n · [1 + 2 Σ_{k=1}^{n-1} (1 - k/n) φ^k] (closed form), units². NaN if not
        stationary.
    naive_var_of_mean : ndarray
        γ₀ / n: the same variance ignoring autocorrelation. NaN if not stationary.
    stationary : ndarray of bool
        ``|phi| < 1``.
    n_used : int
        Number of time points fitted, ``T - burn_in``.
    dt : float
        Sampling interval used for the OU quantities.
    """

    phi: np.ndarray
    intercept: np.ndarray
    innovation_var: np.ndarray
    mean: np.ndarray
    stationary_var: np.ndarray
    ou_theta: np.ndarray
    ou_diffusion_var: np.ndarray
    ess: np.ndarray
    var_of_mean: np.ndarray
    naive_var_of_mean: np.ndarray
    stationary: np.ndarray
    n_used: int
    dt: float


@dataclass(frozen=True)
class BurnoutResult:
    """The chosen burn-out window per parameter and the statistic on every candidate.

    Attributes
    ----------
    t_burnout : ndarray of int
        Chosen T_burn-out (number of final iterates judged converged) per parameter;
        0 where no candidate passed. Shape ``(P,)`` or ``()``.
    converged : ndarray of bool
        ``t_burnout > 0``. Shape ``(P,)`` or ``()``.
    candidates : ndarray of int
        Candidate window lengths, ascending, shape ``(K,)``.
    statistic : ndarray
        The test statistic per candidate and parameter, shape ``(K, P)`` or ``(K,)``:
        the regression slope (:func:`linreg_burnout`) or the split-R̂
        (:func:`rhat_burnout`).
    statistic_name : str
        ``"slope"`` or ``"split-rhat"``.
    threshold : float
        The threshold used: a candidate passes when ``|slope| < threshold`` or
        ``rhat < threshold``.
    """

    t_burnout: np.ndarray
    converged: np.ndarray
    candidates: np.ndarray
    statistic: np.ndarray
    statistic_name: str
    threshold: float


# ------------------------------------------------------------------------------ AR(1)


def fit_ar1(trace, burn_in: int = 0, dt: float = 1.0) -> AR1Fit:
    r"""Fit an AR(1) with constant to each parameter's trace and derive its OU twin.

    For each column x of ``trace[burn_in:]`` fits x_t = c + φ x_{t-1} + e_t by
    ``statsmodels.tsa.ar_model.AutoReg(x, lags=1, trend="c")``. An AR(1) sampled at
    interval dt is exactly an OU process dX = -θ(X - μ)dt + σ_ou dW observed at those
    times when φ = exp(-θ dt) and γ₀ = σ_ou² / (2θ); the OU fields use that map.

    Parameters
    ----------
    trace : array_like, shape (T,) or (T, P)
        Parameter iterates, time axis first; finite.
    burn_in : int
        Number of initial iterates to discard, 0 <= burn_in < T, leaving at least
        :data:`MIN_TRACE_POINTS` points.
    dt : float
        Time between iterates (> 0), the unit of ``ou_theta``. ``dt = 1`` measures time
        in iterations, the convention of DPVIm (E.5)-(E.7).

    Returns
    -------
    AR1Fit
        Per-parameter arrays of shape (P,), or 0-d for a 1-D trace. A fit with
        abs(φ) >= 1 is not an error: it is flagged ``stationary = False`` and its
        stationary quantities are NaN.

    Raises
    ------
    ValueError
        If the trace has the wrong ndim or a non-finite value, if ``burn_in`` is not an
        integer in [0, T), if fewer than :data:`MIN_TRACE_POINTS` points remain, if
        ``dt`` is not finite and > 0, or if a column is constant after burn-in (φ is
        then not identifiable).

    References
    ----------
    Hamilton, J. D. (1994). *Time Series Analysis*, Sec. 3.4 (AR(1) moments) and 7.2
    (variance of the sample mean). Mandt, Hoffman & Blei (2017), "Stochastic gradient
    descent as approximate Bayesian inference", JMLR 18, Sec. 3.2 (OU model of SGD).
    """
    x, squeeze = _as_trace(trace)
    dt = check_positive(dt, "dt")
    x = _after_burn_in(x, burn_in, "fit_ar1")
    _check_not_constant(x)
    n, p = x.shape

    from statsmodels.tsa.ar_model import AutoReg

    phi = np.empty(p)
    intercept = np.empty(p)
    innovation_var = np.empty(p)
    for j in range(p):
        res = AutoReg(x[:, j], lags=1, trend="c").fit()
        intercept[j], phi[j] = res.params
        innovation_var[j] = res.sigma2

    stationary = np.abs(phi) < 1.0
    nan = np.full(p, np.nan)
    mean, gamma0, factor = nan.copy(), nan.copy(), nan.copy()
    s = stationary
    mean[s] = intercept[s] / (1.0 - phi[s])
    gamma0[s] = innovation_var[s] / (1.0 - phi[s] ** 2)
    factor[s] = ar1_var_of_mean_factor(phi[s], n)
    var_of_mean = gamma0 * factor / n
    naive = gamma0 / n
    ess = n / factor

    has_ou = (phi > 0.0) & (phi < 1.0)
    theta = nan.copy()
    theta[has_ou] = -np.log(phi[has_ou]) / dt
    ou_diffusion_var = 2.0 * theta * gamma0

    shape = _shaper(squeeze)
    return AR1Fit(
        phi=shape(phi),
        intercept=shape(intercept),
        innovation_var=shape(innovation_var),
        mean=shape(mean),
        stationary_var=shape(gamma0),
        ou_theta=shape(theta),
        ou_diffusion_var=shape(ou_diffusion_var),
        ess=shape(ess),
        var_of_mean=shape(var_of_mean),
        naive_var_of_mean=shape(naive),
        stationary=shape(stationary),
        n_used=int(n),
        dt=dt,
    )


def ar1_var_of_mean_factor(phi: np.ndarray, n: int) -> np.ndarray:
    """1 + 2 Σ_{k=1}^{n-1} (1 - k/n) φ^k for abs(φ) < 1, in closed form, elementwise.

    n Var(mean of n stationary AR(1) points) / Var(one point): the inverse of the
    effective-sample-size fraction. ``phi`` (...,) with abs(phi) < 1 (not checked: callers
    pass stationary fits), n >= 1.

    Σ_{k=1}^{n-1} (1 - k/n) φ^k = φ/(1-φ) - φ(1-φ^n) / (n (1-φ)²).
    """
    phi = np.asarray(phi, dtype=float)
    one_minus_phi_n = np.empty_like(phi)
    pos = phi > 0
    # 1 - φ^n = -expm1(n log φ) keeps precision for φ near 1.
    one_minus_phi_n[pos] = -np.expm1(n * np.log(phi[pos]))
    one_minus_phi_n[~pos] = 1.0 - phi[~pos] ** n
    total = phi / (1.0 - phi) - phi * one_minus_phi_n / (n * (1.0 - phi) ** 2)
    return 1.0 + 2.0 * total


def var_of_mean_batch_means(trace, burn_in: int = 0, n_batches: int = 20) -> np.ndarray:
    r"""Batch-means estimate of the variance of the trace mean (no AR(1) assumption).

    With n = T - burn_in points, batch size b = n // n_batches and a = n_batches
    non-overlapping batches taken from the *end* of the trace (the earliest n - a·b
    points after burn-in are not used; with n divisible by a none are dropped), batch
    means Ȳ_k and grand mean Ȳ of the a·b used points:

        σ̂²_BM = b / (a - 1) · Σ_k (Ȳ_k - Ȳ)²,     Var(mean) ≈ σ̂²_BM / (a·b).

    Consistent for the long-run variance when both a and b grow (Flegal & Jones 2010
    recommend b ≈ √n); with a fixed number of batches it is unbiased only up to
    O(1/b) and has relative standard error ≈ √(2/(a-1)).

    Parameters
    ----------
    trace : array_like, shape (T,) or (T, P)
        Parameter iterates, time axis first; finite.
    burn_in : int
        Initial iterates to discard, 0 <= burn_in < T, leaving at least
        :data:`MIN_TRACE_POINTS` points.
    n_batches : int
        Number of batches a, 2 <= a <= T - burn_in.

    Returns
    -------
    ndarray, shape (P,) or ()
        Estimated variance of the mean of the a·b used points, units².

    Raises
    ------
    ValueError
        On a bad trace or burn_in (as :func:`fit_ar1`), or ``n_batches`` not an integer
        in [2, T - burn_in].

    References
    ----------
    Flegal, J. M. & Jones, G. L. (2010). "Batch means and spectral variance estimators
    in Markov chain Monte Carlo". Annals of Statistics 38(2), 1034-1070, Sec. 2.
    """
    x, squeeze = _as_trace(trace)
    x = _after_burn_in(x, burn_in, "var_of_mean_batch_means")
    n = x.shape[0]
    a = check_count(n_batches, "n_batches", minimum=2)
    if a > n:
        raise ValueError(
            f"n_batches must be <= the {n} points after burn_in, got n_batches={n_batches!r}"
        )
    b = n // a
    used = x[n - a * b :]
    batch_means = used.reshape(a, b, -1).mean(axis=1)
    sigma2_bm = b * batch_means.var(axis=0, ddof=1)
    return _shaper(squeeze)(sigma2_bm / (a * b))


# -------------------------------------------------------------------------- burn-out


def default_burnout_candidates(n_time: int, min_window: int = MIN_DEFAULT_WINDOW) -> np.ndarray:
    """Candidate windows: 10%, 15%, ..., 100% of ``n_time``, each at least ``min_window``.

    Window lengths are ``round(f * n_time)`` raised to ``min_window``, deduplicated,
    ascending, shape (K,). Raises ValueError if ``n_time < MIN_TRACE_POINTS`` or
    ``n_time < min_window``.
    """
    n_time = check_count(n_time, "n_time", minimum=1)
    min_window = check_count(min_window, "min_window", minimum=2)
    if n_time < max(MIN_TRACE_POINTS, min_window):
        raise ValueError(
            f"the default burn-out candidate grid needs a trace of at least "
            f"{max(MIN_TRACE_POINTS, min_window)} points, got T={n_time}"
        )
    fractions = np.arange(2, 21) / 20.0
    windows = np.maximum(np.rint(fractions * n_time).astype(int), min_window)
    return np.unique(np.minimum(windows, n_time))


def linreg_burnout(
    trace, slope_threshold: float = DPVIM_SLOPE_THRESHOLD, candidates=None
) -> BurnoutResult:
    r"""DPVIm's linear-regression convergence check for T_burn-out (Sec. 3.2), as printed.

    The paper: "For each of the traces, we fit linear regression models over different
    candidate T_burn-out. The regressor X_linreg is set to interval [0, 1] split to
    T_burn-out points in an ascending order. The responses y are set to the
    corresponding parameter values in the trace, e.g. y = {m_q^(t)}_{t=T-T_burn-out}^T.
    If the linear regression model has a sufficiently small slope coefficient, we
    consider the trace as converged and pick the longest T_burn-out for which this is
    the case." Sec. 4.3: "we chose a slope of 0.05 as the threshold for convergence".

    For each candidate w the regressor is ``linspace(0, 1, w)`` and the response the
    last w iterates (the printed index range t = T-w..T has w+1 points; w are used so
    that regressor and response have the same length). A candidate passes when the OLS
    slope satisfies ``|slope| < slope_threshold``; the chosen window is the longest
    passing candidate, whether or not shorter ones pass.

    The slope is the fitted change of the parameter across the whole window, in the
    parameter's own units: the threshold is therefore scale-dependent (rescaling a
    parameter by c rescales its slope by c), and a constant per-iteration drift r gives
    slope ≈ r·w, so longer windows are held to a stricter per-iteration standard. The
    slope's noise is not accounted for: its standard error, ≈ sd·√(12 τ / w) for a
    stationary trace with integrated autocorrelation time τ, can itself exceed the
    threshold for short windows or noisy parameters.

    Parameters
    ----------
    trace : array_like, shape (T,) or (T, P)
        Parameter iterates, time axis first; finite.
    slope_threshold : float
        Threshold on abs(slope) (> 0), in parameter units. Default 0.05 (Sec. 4.3).
    candidates : array_like of int, optional
        Window lengths to try, each in [2, T]; sorted and deduplicated. Default
        :func:`default_burnout_candidates` (needs T >= :data:`MIN_TRACE_POINTS`).

    Returns
    -------
    BurnoutResult
        ``statistic`` holds the slopes, shape (K, P) or (K,).

    Raises
    ------
    ValueError
        On a bad trace, a ``slope_threshold`` that is not finite and > 0, or a candidate
        that is not an integer in [2, T].

    References
    ----------
    DPVIm (Sec. 3.2, last paragraph; Sec. 4.3).
    """
    x, squeeze = _as_trace(trace)
    threshold = check_positive(slope_threshold, "slope_threshold")
    n_time = x.shape[0]
    cands = _candidates(candidates, n_time, min_window=2)
    slopes = np.empty((cands.size, x.shape[1]))
    for i, w in enumerate(cands):
        reg = np.linspace(0.0, 1.0, w)
        reg -= reg.mean()
        slopes[i] = reg @ x[n_time - w :] / (reg @ reg)
    return _burnout_result(cands, slopes, np.abs(slopes) < threshold, "slope", threshold, squeeze)


def split_rhat(windows: np.ndarray, n_splits: int = 4) -> np.ndarray:
    r"""Rank-normalised split-R̂ of one chain per column, max of bulk and folded.

    ``windows`` (shape (w,) or (w, P)) is cut into ``n_splits`` contiguous segments of
    m = w // n_splits points taken from the end (the earliest w mod n_splits points are
    not used). Following Vehtari et al. (2021), Sec. 4.2: the pooled draws are replaced
    by their normal scores z = Φ⁻¹((r - 3/8) / (S + 1/4)) (r = average rank, S = n_splits·m),
    then with segment means z̄_j, within-segment variance W (mean of the ddof=1
    variances) and between-segment B = m·var_j(z̄_j) (ddof=1),

        var⁺ = (m-1)/m · W + B/m,      R̂ = √(var⁺ / W).

    The same is computed on the folded draws abs(x - median(x)) and the larger of the two
    is returned (Vehtari et al.'s recommended R̂). NaN where W = 0 (a segment
    constant in rank).

    Raises ValueError if m < 2.

    References
    ----------
    Gelman, A. & Rubin, D. B. (1992). "Inference from iterative simulation using
    multiple sequences". Statistical Science 7(4), 457-472.
    Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. & Bürkner, P.-C. (2021).
    "Rank-normalization, folding, and localization: an improved R̂ for assessing
    convergence of MCMC". Bayesian Analysis 16(2), 667-718.
    """
    x, squeeze = _as_trace(windows, name="windows")
    n_splits = check_count(n_splits, "n_splits", minimum=2)
    m = x.shape[0] // n_splits
    if m < 2:
        raise ValueError(
            f"split-R̂ needs at least 2 points per segment: a window of {x.shape[0]} points "
            f"in n_splits={n_splits} segments gives {m}"
        )
    used = x[x.shape[0] - n_splits * m :]
    bulk = _rhat_of_normal_scores(used, n_splits, m)
    folded = _rhat_of_normal_scores(np.abs(used - np.median(used, axis=0)), n_splits, m)
    return _shaper(squeeze)(np.fmax(bulk, folded))


def _rhat_of_normal_scores(x: np.ndarray, n_splits: int, m: int) -> np.ndarray:
    s = x.shape[0]
    ranks = rankdata(x, axis=0)
    z = norm.ppf((ranks - 0.375) / (s + 0.25)).reshape(n_splits, m, -1)
    w = z.var(axis=1, ddof=1).mean(axis=0)
    b = m * z.mean(axis=1).var(axis=0, ddof=1)
    var_plus = (m - 1) / m * w + b / m
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(w > 0, np.sqrt(var_plus / w), np.nan)


def rhat_burnout(
    trace, threshold: float = 1.01, candidates=None, n_splits: int = 4
) -> BurnoutResult:
    r"""Longest final window whose rank-normalised split-R̂ is below ``threshold``.

    A principled alternative to :func:`linreg_burnout`, following DPVIm Sec. 5: "the
    (split) R-hat estimator (Gelman & Rubin, 1992; Vehtari et al., 2021) ... could be
    used to test the convergence of the parameter traces". For each candidate w the last
    w iterates are treated as one chain split into ``n_splits`` segments and
    :func:`split_rhat` is computed; the candidate passes when R̂ < threshold (NaN never
    passes). Unlike the slope, R̂ is invariant to rescaling and to monotone transforms
    of the parameter, and it accounts for the trace's own noise level.

    For an autocorrelated but stationary trace, R̂² - 1 ≈ (τ χ²_{n_splits-1}/(n_splits-1)
    - 1)/m with m the segment length and τ the integrated autocorrelation time, so the
    false-alarm rate of the default 1.01 falls quickly once m ≳ 100 τ.

    Parameters
    ----------
    trace : array_like, shape (T,) or (T, P)
        Parameter iterates, time axis first; finite; no column constant over the trace.
    threshold : float
        R̂ threshold, finite and > 1. Default 1.01 (Vehtari et al. 2021, Sec. 4.3).
    candidates : array_like of int, optional
        Window lengths, each in [2·n_splits, T]. Default: the grid of
        :func:`default_burnout_candidates` with minimum window max(10, 2·n_splits).
    n_splits : int
        Segments per window (>= 2). Default 4 (one chain → "two chains of two halves").

    Returns
    -------
    BurnoutResult
        ``statistic`` holds the R̂ values, shape (K, P) or (K,).

    Raises
    ------
    ValueError
        On a bad trace, a constant column, a threshold that is not finite and > 1, a
        bad ``n_splits``, or a candidate not an integer in [2·n_splits, T].
    """
    x, squeeze = _as_trace(trace)
    thr = float(threshold)
    if not (math.isfinite(thr) and thr > 1.0):
        raise ValueError(f"threshold must be a finite number > 1, got {threshold!r}")
    n_splits = check_count(n_splits, "n_splits", minimum=2)
    _check_not_constant(x)
    n_time = x.shape[0]
    cands = _candidates(
        candidates,
        n_time,
        min_window=max(MIN_DEFAULT_WINDOW, 2 * n_splits),
        min_allowed=2 * n_splits,
    )
    rhats = np.stack([split_rhat(x[n_time - w :], n_splits) for w in cands])
    with np.errstate(invalid="ignore"):
        passed = rhats < thr
    return _burnout_result(cands, rhats, passed, "split-rhat", thr, squeeze)


# ------------------------------------------------------------------------- Lyapunov


def lyapunov_stationary_cov(A, noise_cov, lr: float, form: str = "discrete") -> np.ndarray:
    r"""Stationary covariance of constant-step SGD on a quadratic loss.

    Model: ξ_{t+1} = ξ_t - lr·(A(ξ_t - ξ*) + ε_t), ε_t ~ N(0, noise_cov) i.i.d.; for
    DP-SGD with mini-batch size S, subsampling covariance Z and DP noise σ_DP,
    noise_cov = Z/S + σ_DP² I (DPVIm (E.7)).

    ``form="discrete"``: the exact stationary covariance of the iterates, solving::

        Σ = (I - lr·A) Σ (I - lr·A)ᵀ + lr²·noise_cov

    (``scipy.linalg.solve_discrete_lyapunov(a, q)`` solves X - aXaᴴ = q). Requires the
    spectral radius of I - lr·A to be < 1 (else the iterates do not converge).

    ``form="continuous"``: DPVIm's (E.7), the stationary covariance of the OU process
    dξ = -lr·A(ξ-ξ*)dt + lr·noise_cov^{1/2} dW with time in iterations, solving::

        A Σ + Σ Aᵀ = lr·noise_cov

    (``scipy.linalg.solve_continuous_lyapunov(a, q)`` solves aX + Xaᴴ = q; the usual
    control form MΣ + ΣMᵀ + Q = 0 with M = -lr·A, Q = lr²·noise_cov is the same
    equation divided by -lr). For symmetric A this is the paper's ΣA + AΣ. It equals
    the discrete solution up to a relative error O(lr·‖A‖).

    Parameters
    ----------
    A : array_like, shape (d, d)
        Hessian of the loss at the optimum (drift matrix). Need not be symmetric (a
        preconditioned step P·A is allowed) but every eigenvalue must have positive real
        part.
    noise_cov : array_like, shape (d, d)
        Covariance of the gradient noise; symmetric positive semi-definite.
    lr : float
        Step size α > 0 (per iteration).
    form : {"discrete", "continuous"}

    Returns
    -------
    ndarray, shape (d, d)
        Σ, symmetrised, in parameter units².

    Raises
    ------
    ValueError
        If A or noise_cov is not a finite square 2-D array, their shapes differ,
        noise_cov is not symmetric PSD (to 1e-10 relative), A has an eigenvalue with
        real part <= 0, lr is not finite and > 0, ``form`` is unknown, or (discrete)
        the spectral radius of I - lr·A is >= 1.

    References
    ----------
    DPVIm Appendix E, eq. (E.7); Mandt, Hoffman & Blei (2017), JMLR 18, Sec. 3.2.
    """
    a = check_finite_array(A, "A", ndim=2)
    q = check_finite_array(noise_cov, "noise_cov", ndim=2)
    lr = check_positive(lr, "lr")
    if form not in ("discrete", "continuous"):
        raise ValueError(f"form must be 'discrete' or 'continuous', got {form!r}")
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"A must be square, got shape {a.shape}")
    if q.shape != a.shape:
        raise ValueError(f"noise_cov must have the shape of A {a.shape}, got shape {q.shape}")
    scale = max(float(np.max(np.abs(q))), np.finfo(float).tiny)
    asym = float(np.max(np.abs(q - q.T)))
    if asym > 1e-10 * scale:
        raise ValueError(f"noise_cov must be symmetric; max |noise_cov - noise_cov.T| = {asym!r}")
    q = 0.5 * (q + q.T)
    min_eig_q = float(np.linalg.eigvalsh(q)[0])
    if min_eig_q < -1e-10 * scale:
        raise ValueError(
            f"noise_cov must be positive semi-definite; smallest eigenvalue {min_eig_q!r}"
        )
    eig_a = np.linalg.eigvals(a)
    if np.min(eig_a.real) <= 0:
        raise ValueError(
            f"A must have eigenvalues with positive real part (a stable drift -lr*A); "
            f"smallest real part {float(np.min(eig_a.real))!r}"
        )
    d = a.shape[0]
    if form == "discrete":
        m = np.eye(d) - lr * a
        rho = float(np.max(np.abs(np.linalg.eigvals(m))))
        if rho >= 1.0:
            raise ValueError(
                f"the discrete form needs spectral radius of (I - lr*A) < 1 for the "
                f"iterates to converge; got {rho!r} with lr={lr!r}"
            )
        sigma = scipy.linalg.solve_discrete_lyapunov(m, lr**2 * q)
    else:
        sigma = scipy.linalg.solve_continuous_lyapunov(a, lr * q)
    return 0.5 * (sigma + sigma.T)


# -------------------------------------------------------------------------- helpers


def _as_trace(trace, name: str = "trace") -> tuple[np.ndarray, bool]:
    """Return (2-D float trace (T, P), was_1d); raise on ndim not in (1, 2) or NaN/inf."""
    arr = np.asarray(trace, dtype=float)
    if arr.ndim not in (1, 2):
        raise ValueError(
            f"{name} must have shape (T,) or (T, P) (time axis first), got shape {arr.shape}"
        )
    arr = check_finite_array(arr, name)
    if arr.shape[0] == 0 or (arr.ndim == 2 and arr.shape[1] == 0):
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    return (arr[:, None], True) if arr.ndim == 1 else (arr, False)


def _after_burn_in(x: np.ndarray, burn_in: int, what: str) -> np.ndarray:
    n_time = x.shape[0]
    burn_in = check_count(burn_in, "burn_in", minimum=0)
    if burn_in >= n_time:
        raise ValueError(f"burn_in must be < T={n_time}, got burn_in={burn_in}")
    n = n_time - burn_in
    if n < MIN_TRACE_POINTS:
        raise ValueError(
            f"{what} needs at least {MIN_TRACE_POINTS} points after burn-in; the trace has "
            f"T={n_time} and burn_in={burn_in} leaves {n}"
        )
    return x[burn_in:]


def _check_not_constant(x: np.ndarray) -> None:
    const = np.ptp(x, axis=0) == 0
    if const.any():
        j = int(np.flatnonzero(const)[0])
        raise ValueError(
            f"trace column {j} is constant (value {x[0, j]!r}) over the {x.shape[0]} points "
            f"analysed; its autocorrelation is not identifiable"
        )


def _candidates(candidates, n_time: int, min_window: int, min_allowed: int = 2) -> np.ndarray:
    if candidates is None:
        return default_burnout_candidates(n_time, min_window=min_window)
    raw = np.atleast_1d(np.asarray(candidates))
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"candidates must be a non-empty 1-D sequence, got {candidates!r}")
    out = np.array([check_count(c, "candidate window", minimum=min_allowed) for c in raw.tolist()])
    too_long = out[out > n_time]
    if too_long.size:
        raise ValueError(f"candidate window {int(too_long[0])} exceeds the trace length T={n_time}")
    return np.unique(out)


def _burnout_result(cands, stat, passed, name, threshold, squeeze) -> BurnoutResult:
    # Longest passing candidate: candidates are ascending, so take the last True.
    any_pass = passed.any(axis=0)
    last = passed.shape[0] - 1 - np.argmax(passed[::-1], axis=0)
    t_burnout = np.where(any_pass, cands[last], 0).astype(int)
    shape = _shaper(squeeze)
    return BurnoutResult(
        t_burnout=shape(t_burnout),
        converged=shape(any_pass),
        candidates=cands.astype(int),
        statistic=stat[:, 0] if squeeze else stat,
        statistic_name=name,
        threshold=float(threshold),
    )


def _shaper(squeeze: bool):
    if squeeze:
        return lambda v: np.asarray(v)[..., 0] if np.ndim(v) else np.asarray(v)
    return np.asarray
