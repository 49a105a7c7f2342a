"""Confidence intervals for Monte Carlo means, valid at every sample size.

A Monte Carlo check estimates a mean (an MSE, a coverage, a tail probability, a
utility) from n i.i.d. runs. This module bounds the true mean, not just the sample
mean, so that the bound can decide a claim (``basis = "finite-sample"``).

Bounded quantities: the betting interval
-----------------------------------------
For samples in a **known range** [lo, hi] (rescaled to [0, 1]), :func:`mean_interval`
returns the hedged-capital betting confidence interval of Waudby-Smith & Ramdas
(2024): for a candidate mean m the two capital processes

    K_t^+(m) = prod_{i <= t} (1 + lambda_i^+(m) (y_i - m)),
    K_t^-(m) = prod_{i <= t} (1 - lambda_i^-(m) (y_i - m)),

with the predictable plug-in bets lambda_i^+(m) = min(lambda_dot_i, c / m),
lambda_i^-(m) = min(lambda_dot_i, c / (1 - m)), c = 1/2, and

    lambda_dot_i = sqrt(2 log(1 / alpha_side) / (n sigma_hat^2_{i-1})),
    mu_hat_t = (1/2 + sum_{i<=t} y_i) / (t + 1),
    sigma_hat^2_t = (1/4 + sum_{i<=t} (y_i - mu_hat_i)^2) / (t + 1)

(their hedged capital process with predictable plug-in bets, tuned for a fixed n, as
the authors' own ``confseq.betting.betting_ci`` and ``betting_strategies.
lambda_predmix_eb(fixed_n=n)`` compute it; the paper's equation numbers were not
checked against the published text here), are nonnegative martingales under
the true mean m*. By Ville's inequality P(exists t <= n: K_t^+(m*) >= 1/alpha_side)
<= alpha_side, so the interval

    {m : max_{t <= n} K_t^+(m) < 1/alpha_side and max_{t <= n} K_t^-(m) < 1/alpha_side}

covers m* with probability >= 1 - alpha at every n (two-sided: alpha_side = alpha / 2
on each process, their Theorem 3 with theta = 1/2; one-sided: one process at alpha).
Each factor of K^+ falls in m (and each of K^- rises), so each set is a ray and its
end is found by a nested grid search (16 points a level) to 1e-10 in the rescaled
mean; the end reported is always a point the test rejected (the interval returned
contains the exact one), and a rejection counts only with a margin of 1e-9 in log
capital over the threshold (floating-point rounding widens the interval, never
narrows it).

``method="betting+bernstein"`` intersects the betting interval and Maurer & Pontil's
empirical-Bernstein interval, each at alpha / 2 (Bonferroni). The betting interval at
the full alpha is narrower in every case benchmarks/mean_bounds_coverage.py measures,
so it is the default.

Why not a library: ``confseq`` 0.0.11 (the authors' package, the only release since
2023) ships only an sdist that needs Boost headers and a C++ build (it fails here
without them), and imports matplotlib and ``multiprocess`` at run time;
``expectation`` 0.6.1 requires Python >= 3.12 (the suite supports 3.10). The formulas
above are confseq's, vectorised over the grid of candidate means.

A ratio of two means (:func:`mean_ratio_interval`): each mean's interval at alpha / 2
(Bonferroni: valid whether or not the two samples are independent, e.g. paired runs),
the ratio of their ends; an interval of the denominator that reaches 0 gives an upper
end of ``inf``.

Unbounded quantities
--------------------
A finite-sample interval for the mean of an unbounded quantity does not exist without
more assumptions (a heavy tail can hide any mean). Two routes:

(a) **a stated truncation**: state a range [lo, hi] the quantity cannot leave (a
    clipped loss, an MSE of predictions clipped to a known box) and call
    :func:`mean_interval`; a sample outside it is refused with a ValueError naming it,
    never clipped silently. The bound is then about the truncated quantity, which is
    the quantity the claim must be about.
(b) **an asymptotic interval**: :func:`mean_interval_asymptotic`, Student's t interval
    (scipy.stats.t), returned with ``basis = "asymptotic"``: the verdict kernel shows
    it as "approx." and never decides on it.

References
----------
I. Waudby-Smith, A. Ramdas, "Estimating means of bounded random variables by
betting", JRSS-B 86(1), 2024, Theorem 3 (the hedged capital process) and its
predictable plug-in bets; code: github.com/gostevehoward/confseq, ``confseq/betting.py``
(``betting_ci``, ``betting_mart``) and ``betting_strategies.py`` (``lambda_predmix_eb``),
release 0.0.11.
A. Maurer, M. Pontil, "Empirical Bernstein bounds and sample variance penalization",
COLT 2009, Theorem 4.
Balle & Wang, ICML 2018, Thm. 8 (:mod:`dpclaims.analysis.gaussian_dp`), for
:func:`epsilon_bracket_from_sensitivity`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpclaims.analysis.gaussian_dp import composed_multiplier, gaussian_epsilon_bracket_exact
from dpclaims.analysis.validation import check_count, check_finite_array

__all__ = ["MeanInterval", "mean_interval", "mean_ratio_interval",
           "mean_interval_asymptotic", "epsilon_bracket_from_sensitivity", "SIDES"]

SIDES = ("two-sided", "lower", "upper")
METHODS = ("betting", "betting+bernstein")

# the bet truncation c of lambda^+ = min(lambda_dot, c / m) (Waudby-Smith & Ramdas: 1/2)
_TRUNCATION = 0.5
# candidate means per level of the nested grid search, and the width it stops at
_GRID = 16
_TOL = 1e-10
# a rejection counts only when log capital exceeds the threshold by this much
_LOG_MARGIN = 1e-9


@dataclass(frozen=True)
class MeanInterval:
    """A confidence interval for a mean.

    Attributes
    ----------
    low, high : float
        The ends (in the quantity's units). A one-sided interval has the other end at
        the stated range's end (``mean_interval``) or at -inf / inf.
    alpha : float
        Miscoverage of the whole interval (two-sided: of the pair of ends).
    side : str
        "two-sided", "lower" (only ``low`` is a bound) or "upper" (only ``high``).
    method : str
        What computed it, in words (for a Bound's source).
    n : int
        Samples (for a ratio: the smaller of the two sample sizes).
    mean : float
        The sample mean (for a ratio: the ratio of the sample means); an estimate.
    basis : str
        "finite-sample" (valid at every n) or "asymptotic" (never decides).
    """

    low: float
    high: float
    alpha: float
    side: str
    method: str
    n: int
    mean: float
    basis: str = "finite-sample"


# ----------------------------------------------------------------------------- checks


def _check_alpha(alpha) -> float:
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}") from None
    if not 0.0 < value < 1.0:  # also refuses NaN
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return value


def _check_side(side) -> str:
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    return side


def _check_range(lo, hi, what: str = "") -> tuple[float, float]:
    name = f"{what} range" if what else "range"
    try:
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise ValueError(f"the {name} [lo, hi] must be two numbers, got {lo!r}, {hi!r}") \
            from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"the {name} [lo, hi] must be finite, got [{lo!r}, {hi!r}]")
    if not lo < hi:
        raise ValueError(f"the {name} needs lo < hi, got lo = {lo!r}, hi = {hi!r}")
    return lo, hi


def _check_samples(samples, lo: float, hi: float, name: str = "samples") -> np.ndarray:
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of shape (n,), got shape {x.shape}")
    if x.size == 0:
        raise ValueError(f"{name} is empty: a mean needs at least one sample")
    x = check_finite_array(x, name, ndim=1)
    outside = (x < lo) | (x > hi)
    if outside.any():
        i = int(np.argmax(outside))
        raise ValueError(f"{name}[{i}] = {float(x[i])!r} lies outside the stated range "
                         f"[{lo!r}, {hi!r}] ({int(outside.sum())} sample(s) outside); state "
                         "a range the quantity cannot leave (module docstring, route (a))")
    return x


# ----------------------------------------------------------------------------- betting


def _bets(y: np.ndarray, log_threshold: float) -> np.ndarray:
    """lambda_dot_i of the module docstring (before truncation), shape (n,)."""
    n = y.size
    t = np.arange(1, n + 1)
    mu = (0.5 + np.cumsum(y)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((y - mu) ** 2)) / (t + 1)
    sigma2_prev = np.concatenate(([0.25], sigma2[:-1]))
    return np.sqrt(2.0 * log_threshold / (n * sigma2_prev))


def _log_capital(y: np.ndarray, lam_dot: np.ndarray, m: np.ndarray) -> np.ndarray:
    """max_{t <= n} log K_t^+(m) for each candidate m (shape (G,)); y in [0, 1]."""
    m = m[:, None]
    with np.errstate(divide="ignore"):
        cap = np.where(m > 0, _TRUNCATION / m, np.inf)
    lam = np.minimum(lam_dot[None, :], cap)
    # each factor is >= 1 - c > 0: log1p is finite
    return np.cumsum(np.log1p(lam * (y[None, :] - m)), axis=1).max(axis=1)


def _betting_lower(y: np.ndarray, alpha_side: float) -> float:
    """The lower end (in [0, 1]) of the one-sided betting interval at ``alpha_side``: the
    largest candidate the test rejected (module docstring), 0 when it rejects none."""
    log_threshold = math.log(1.0 / alpha_side)
    lam_dot = _bets(y, log_threshold)

    def rejected(m):
        return _log_capital(y, lam_dot, m) >= log_threshold + _LOG_MARGIN

    if not rejected(np.array([0.0]))[0]:
        return 0.0
    a, b = 0.0, 1.0  # a rejected; K^+(1) <= 1 is never rejected
    while b - a > _TOL:
        grid = np.linspace(a, b, _GRID + 2)[1:-1]
        rej = rejected(grid)
        # K^+ falls in m: the rejected candidates come first
        k = int(rej.sum())
        new_a = grid[k - 1] if k else a
        new_b = grid[k] if k < grid.size else b
        if (new_a, new_b) == (a, b):  # adjacent floats
            break
        a, b = new_a, new_b
    return float(a)


def _bernstein_lower(y: np.ndarray, alpha_side: float) -> float:
    """Maurer & Pontil (2009) Thm. 4, lower end in [0, 1] at ``alpha_side`` (0 for n < 2)."""
    n = y.size
    if n < 2:
        return 0.0
    log_term = math.log(2.0 / alpha_side)
    var = float(np.var(y, ddof=1))
    width = math.sqrt(2.0 * var * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))
    return max(0.0, float(np.mean(y)) - width)


def _lower_end(y: np.ndarray, alpha_side: float, method: str) -> float:
    if method == "betting":
        return _betting_lower(y, alpha_side)
    # Bonferroni between the two intervals
    return max(_betting_lower(y, alpha_side / 2), _bernstein_lower(y, alpha_side / 2))


def mean_interval(samples, lo: float, hi: float, alpha: float = 0.05, *,
                  side: str = "two-sided", method: str = "betting") -> MeanInterval:
    """A confidence interval for the mean of i.i.d. samples in a known range, valid at
    every sample size (module docstring).

    Parameters
    ----------
    samples : array_like, shape (n,)
        i.i.d. draws of the quantity (its units), each in [lo, hi].
    lo, hi : float
        The known range of the quantity (finite, lo < hi): a stated truncation for a
        quantity that is otherwise unbounded (route (a) of the module docstring).
    alpha : float
        Miscoverage in (0, 1): of the pair of ends for a two-sided interval, of the one
        end for a one-sided one.
    side : {"two-sided", "lower", "upper"}
        Which ends are bounds; a one-sided interval's other end is the range's end.
    method : {"betting", "betting+bernstein"}
        The hedged-capital betting interval at alpha, or its intersection with the
        empirical-Bernstein interval, each at alpha / 2.

    Returns
    -------
    MeanInterval
        ``basis = "finite-sample"``; ``low <= mean <= high`` need not hold for a
        one-sided interval's missing end only in the trivial way (it is lo or hi).

    Raises
    ------
    ValueError
        Samples not 1-D, empty, with NaN or inf, or with a value outside [lo, hi]
        (naming the first); lo >= hi or not finite; alpha outside (0, 1); an unknown
        side or method.

    References
    ----------
    Waudby-Smith & Ramdas (2024), Theorem 3 (hedged capital); Maurer & Pontil (2009),
    Theorem 4.
    """
    lo, hi = _check_range(lo, hi)
    alpha = _check_alpha(alpha)
    side = _check_side(side)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    x = _check_samples(samples, lo, hi)
    scale = hi - lo
    y = np.clip((x - lo) / scale, 0.0, 1.0)
    alpha_side = alpha / 2 if side == "two-sided" else alpha
    low, high = lo, hi
    if side in ("two-sided", "lower"):
        a = _lower_end(y, alpha_side, method)
        low = max(lo, float(np.nextafter(lo + scale * a, -np.inf))) if a > 0 else lo
    if side in ("two-sided", "upper"):
        b = _lower_end(1.0 - y, alpha_side, method)  # the mirror image: 1 - upper end
        high = min(hi, float(np.nextafter(hi - scale * b, np.inf))) if b > 0 else hi
    name = ("hedged-capital betting" if method == "betting" else
            "hedged-capital betting and empirical Bernstein, Bonferroni")
    refs = "Waudby-Smith & Ramdas 2024" + ("" if method == "betting" else
                                           ", Maurer & Pontil 2009")
    text = (f"{name} interval for a mean in [{lo:g}, {hi:g}] from {x.size} samples "
            f"({refs})")
    return MeanInterval(low, high, alpha, side, text, int(x.size), float(np.mean(x)))


def mean_ratio_interval(numerator, denominator, *, numerator_range: tuple[float, float],
                        denominator_range: tuple[float, float], alpha: float = 0.05,
                        side: str = "two-sided",
                        method: str = "betting") -> MeanInterval:
    """A confidence interval for E[numerator] / E[denominator] (e.g. an MSE ratio of two
    methods), valid at every sample size.

    Each mean's interval (:func:`mean_interval`) is computed at alpha / 2 (Bonferroni:
    valid whether the two samples are independent or paired); the ratio's lower end is
    the numerator's lower end over the denominator's upper end, its upper end the
    numerator's upper end over the denominator's lower end (``inf`` when that reaches
    0). A one-sided ratio computes only the two one-sided ends it needs.

    Parameters
    ----------
    numerator, denominator : array_like, shapes (n1,) and (n2,)
        i.i.d. samples of two nonnegative quantities.
    numerator_range, denominator_range : (float, float)
        Their known ranges, each with 0 <= lo < hi.
    alpha, side, method
        As :func:`mean_interval`; ``alpha`` is the ratio interval's miscoverage.

    Returns
    -------
    MeanInterval
        ``n`` the smaller sample size; ``mean`` the ratio of the sample means (inf when
        the denominator's sample mean is 0).

    Raises
    ------
    ValueError
        As :func:`mean_interval`, for either sample; a range with a negative lower end.
    """
    alpha = _check_alpha(alpha)
    side = _check_side(side)
    ranges = []
    for what, rng in (("numerator", numerator_range), ("denominator", denominator_range)):
        try:
            r_lo, r_hi = rng
        except (TypeError, ValueError):
            raise ValueError(f"the {what} range must be a pair (lo, hi), got {rng!r}") \
                from None
        r_lo, r_hi = _check_range(r_lo, r_hi, what)
        if r_lo < 0:
            raise ValueError(f"a ratio of means needs nonnegative quantities: the {what} "
                             f"range starts at {r_lo!r} < 0")
        ranges.append((r_lo, r_hi))
    part = {"two-sided": ("two-sided", "two-sided"), "lower": ("lower", "upper"),
            "upper": ("upper", "lower")}[side]
    num = mean_interval(numerator, *ranges[0], alpha / 2, side=part[0], method=method)
    den = mean_interval(denominator, *ranges[1], alpha / 2, side=part[1], method=method)
    low, high = 0.0, math.inf
    if side in ("two-sided", "lower") and den.high > 0:
        low = max(0.0, float(np.nextafter(num.low / den.high, -np.inf)))
    if side in ("two-sided", "upper") and den.low > 0:
        high = float(np.nextafter(num.high / den.low, np.inf))
    estimate = num.mean / den.mean if den.mean > 0 else math.inf
    text = (f"ratio of two means, each by {num.method.split(' interval')[0]} at alpha/2 "
            f"(Bonferroni; {num.n} and {den.n} samples)")
    return MeanInterval(low, high, alpha, side, text, min(num.n, den.n), estimate)


def mean_interval_asymptotic(samples, alpha: float = 0.05, *,
                             side: str = "two-sided") -> MeanInterval:
    """Student's t interval for the mean of i.i.d. samples of an unbounded quantity: an
    asymptotic interval (route (b) of the module docstring) that never decides a claim.

    Parameters
    ----------
    samples : array_like, shape (n,), n >= 2
        i.i.d. draws, finite.
    alpha : float
        Miscoverage in (0, 1) (of the pair of ends when two-sided).
    side : {"two-sided", "lower", "upper"}
        A one-sided interval's other end is -inf or inf.

    Returns
    -------
    MeanInterval
        ``basis = "asymptotic"``.

    Raises
    ------
    ValueError
        Samples not 1-D, with fewer than 2 values, NaN or inf; alpha outside (0, 1); an
        unknown side.
    """
    from scipy.stats import t as student_t

    alpha = _check_alpha(alpha)
    side = _check_side(side)
    x = _check_samples(samples, -math.inf, math.inf)
    n = x.size
    if n < 2:
        raise ValueError(f"a t interval needs at least 2 samples, got {n}")
    mean = float(np.mean(x))
    se = float(np.std(x, ddof=1)) / math.sqrt(n)
    q = float(student_t.ppf(1 - (alpha / 2 if side == "two-sided" else alpha), n - 1))
    low = mean - q * se if side in ("two-sided", "lower") else -math.inf
    high = mean + q * se if side in ("two-sided", "upper") else math.inf
    return MeanInterval(low, high, alpha, side,
                        f"Student t interval from {n} samples (normal approximation)", n,
                        mean, basis="asymptotic")


# ----------------------------------------------------------------------------- epsilon


def epsilon_bracket_from_sensitivity(sensitivity_low: float, sensitivity_high: float,
                                     noise_std: float, delta: float, *,
                                     steps: int = 1) -> tuple[float, float]:
    """A certified bracket on the Gaussian mechanism's epsilon from a bracket on its L2
    sensitivity.

    The Gaussian mechanism with noise std s and sensitivity Delta has noise multiplier
    sigma = s / Delta; ``steps`` compositions of it are one Gaussian with multiplier
    sigma / sqrt(steps) (:func:`~dpclaims.analysis.gaussian_dp.composed_multiplier`).
    Its exact epsilon at ``delta`` rises with Delta / s, so the ends of a sensitivity
    bracket give the ends of an epsilon bracket: the lower end of the exact bracket
    (:func:`~dpclaims.analysis.gaussian_dp.gaussian_epsilon_bracket_exact`) at
    ``sensitivity_low`` and its upper end at ``sensitivity_high``.

    Parameters
    ----------
    sensitivity_low, sensitivity_high : float
        The certified bracket on the L2 sensitivity (units of the query), 0 <= low <=
        high, finite. A low end of 0 gives epsilon 0.
    noise_std : float
        The Gaussian noise's standard deviation (same units), finite and > 0.
    delta : float
        delta in (0, 1).
    steps : int
        Compositions of the same mechanism, >= 1.

    Returns
    -------
    (eps_low, eps_high) : (float, float)
        Certified ends: the true epsilon at delta of any sensitivity in the bracket lies
        in [eps_low, eps_high].

    Raises
    ------
    ValueError
        A sensitivity NaN, inf or negative, low > high; noise_std not finite and > 0;
        delta outside (0, 1); steps not an integer >= 1; a multiplier below
        :data:`~dpclaims.analysis.gaussian_dp.MIN_NOISE_MULTIPLIER` (epsilon not
        certifiable in double precision).

    References
    ----------
    Balle & Wang (2018), Thm. 8 and eq. (6).
    """
    values = {}
    for name, value in (("sensitivity_low", sensitivity_low),
                        ("sensitivity_high", sensitivity_high), ("noise_std", noise_std),
                        ("delta", delta)):
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a number, got {value!r}") from None
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, got {value!r}")
        values[name] = v
    s_low, s_high = values["sensitivity_low"], values["sensitivity_high"]
    for name, v in (("sensitivity_low", s_low), ("sensitivity_high", s_high)):
        if v < 0:
            raise ValueError(f"{name} must be >= 0, got {v!r}")
    if s_low > s_high:
        raise ValueError(f"sensitivity_low {s_low!r} exceeds sensitivity_high {s_high!r}")
    if values["noise_std"] <= 0:
        raise ValueError(f"noise_std must be > 0, got {noise_std!r}")
    if not 0 < values["delta"] < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    steps = check_count(steps, "steps")
    std, d = values["noise_std"], values["delta"]

    def end(sensitivity: float, which: int) -> float:
        if sensitivity == 0:
            return 0.0
        sigma = composed_multiplier(std / sensitivity, steps)
        return gaussian_epsilon_bracket_exact(sigma, d)[1][which]

    return end(s_low, 0), end(s_high, 1)
