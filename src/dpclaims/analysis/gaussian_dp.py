"""Exact (epsilon, delta) of the Gaussian mechanism in the standard library alone.

Balle & Wang (2018, Thm. 8; their eq. (6) in the form dp_accounting evaluates): the
Gaussian mechanism with noise multiplier sigma (noise std over the L2 sensitivity) is
(epsilon, delta)-DP if and only if

    delta >= Phi(1 / (2 sigma) - epsilon sigma) - e^epsilon Phi(-1 / (2 sigma) - epsilon sigma),

and a composition of Gaussian mechanisms with multipliers sigma_i is one Gaussian
mechanism with multiplier (sum_i sigma_i^-2)^(-1/2). The right-hand side falls in
epsilon, so the exact epsilon at a delta is a root found by bisection.

Why not dp_accounting's ``get_epsilon_gaussian``: it evaluates the same equation (with
scipy's ``log_ndtr``) by Brent's method, whose answer is not kept on either side of the
root, and importing it costs 1.2-2.5 s (dp_accounting's package imports scipy.signal
and scipy.stats): the whole budget of ``dpclaims account`` for a full-batch or
fixed-order event (issue 23: under a second). The accountants' ``analytic-gaussian``
row keeps dp_accounting's value (:func:`dpclaims.analysis.accounting.gaussian_epsilon_bracket`,
widened the same way, refused below the same :data:`MIN_NOISE_MULTIPLIER`); the fast
``account`` answer is this module's. It needs only :mod:`math`;
tests/test_gaussian_dp.py checks it against ``get_epsilon_gaussian`` to 2e-12 (absolute
plus relative) over sigma in [0.05, 500] and delta in [1e-12, 0.5].

Range: the bracket is certified for sigma >= 1e-8 (epsilon up to about 5e15). Below,
``epsilon + log Phi(-t)`` cancels between two terms of order epsilon, the rounding
exceeds the bracket's widening (a review found a relative miss of 2.4e-8 at sigma
1e-10, in dp_accounting's evaluation too), and :func:`gaussian_epsilon_bracket_exact`
refuses it.

References
----------
Balle, Wang, "Improving the Gaussian mechanism for differential privacy: analytical
calibration and optimal denoising", ICML 2018, Thm. 8 and eq. (6).
"""

from __future__ import annotations

import math

from dpclaims.analysis.validation import check_delta, check_positive

__all__ = ["gaussian_log_delta", "gaussian_epsilon_bracket_exact", "composed_multiplier",
           "exact_gaussian_note", "check_certifiable_multiplier", "MIN_NOISE_MULTIPLIER"]

# Below this, log Phi by its asymptotic (Mills ratio) series, whose 12 terms are exact to
# double precision there (erfc itself would serve down to about -37, where it underflows;
# the switch is early on purpose).
_TAIL = -30.0
_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# the absolute width at which the bisection stops (dp_accounting's brentq uses 1e-12)
_XTOL = 1e-12
# the smallest multiplier whose bracket is certified (module notes, "Range")
MIN_NOISE_MULTIPLIER = 1e-8


def _log_ndtr(x: float) -> float:
    """log Phi(x), the standard normal log-CDF, accurate to double precision."""
    if x > 0:
        return math.log1p(-0.5 * math.erfc(x / _SQRT2))
    if x > _TAIL:
        return math.log(0.5 * math.erfc(-x / _SQRT2))
    # Phi(x) = phi(x) / |x| * (1 - 1/x^2 + 3/x^4 - 15/x^6 + ...) for x -> -inf
    inv = 1.0 / (x * x)
    term, series = 1.0, 1.0
    for k in range(1, 12):
        term *= -(2 * k - 1) * inv
        series += term
    return -0.5 * x * x - math.log(-x) - _LOG_SQRT_2PI + math.log(series)


def gaussian_log_delta(noise_multiplier: float, epsilon: float) -> float:
    """log delta(epsilon) of the Gaussian mechanism (Balle & Wang 2018, eq. (6)).

    Parameters
    ----------
    noise_multiplier : float
        sigma > 0, noise std over the L2 sensitivity.
    epsilon : float
        epsilon >= 0.

    Returns
    -------
    float
        log of the smallest delta at which the mechanism is (epsilon, delta)-DP;
        ``-inf`` where that delta rounds to 0.
    """
    t = epsilon * noise_multiplier + 1.0 / (2.0 * noise_multiplier)
    x = _log_ndtr(1.0 / noise_multiplier - t)
    y = epsilon + _log_ndtr(-t)
    return x + math.log1p(-math.exp(y - x)) if y < x else -math.inf


def composed_multiplier(noise_multiplier: float, count: int) -> float:
    """sigma / sqrt(count): the one Gaussian a ``count``-fold composition equals."""
    return check_positive(noise_multiplier, "noise_multiplier") / math.sqrt(count)


def check_certifiable_multiplier(noise_multiplier: float) -> float:
    """``noise_multiplier`` as a float when its exact epsilon can be certified here.

    Raises
    ------
    ValueError
        Not finite and > 0, or below :data:`MIN_NOISE_MULTIPLIER` (1e-8: the rounding of
        Balle-Wang eq. (6) then exceeds the bracket's widening; module notes, "Range").
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    if sigma < MIN_NOISE_MULTIPLIER:
        raise ValueError(f"noise_multiplier {sigma!r} (of the composition) is below "
                         f"{MIN_NOISE_MULTIPLIER:g}, where epsilon (about 1 / (2 sigma^2) = "
                         f"{0.5 / sigma / sigma:.3g}) cannot be certified in double precision")
    return sigma


def exact_gaussian_note(effective_multiplier: float) -> str:
    """What the fast ``dpclaims account`` answer's ``analytic-gaussian`` row says it is."""
    return ("exact: a composition of Gaussians is one Gaussian with multiplier "
            f"(sum sigma_i^-2)^(-1/2) = {effective_multiplier:.6g}; epsilon by Balle-Wang "
            "2018 eq. (6) (dpclaims.analysis.gaussian_dp, a bisection to 1e-12 kept on "
            "both sides of the root; certified bracket widened to 1e-9); the same under "
            "either relation.")


def gaussian_epsilon_bracket_exact(
    noise_multiplier: float, delta: float
) -> tuple[float, tuple[float, float]]:
    """Exact epsilon of the Gaussian mechanism at ``delta``, with a certified bracket.

    Bisection on :func:`gaussian_log_delta` (which falls in epsilon) until the bracket
    is at most 1e-12 wide; each end is kept on its side of the root (the lower end
    violates delta, the upper end meets it), then widened by 1e-9 absolute plus 1e-9
    relative (floored at 0) for the rounding of the evaluation.

    Parameters
    ----------
    noise_multiplier : float
        sigma > 0 (noise std over the L2 sensitivity), finite.
    delta : float
        delta in (0, 1).

    Returns
    -------
    (epsilon, (lower, upper))
        epsilon the bracket's midpoint (0 when the mechanism is already (0, delta)-DP).

    Raises
    ------
    ValueError
        sigma not finite and > 0, or below :data:`MIN_NOISE_MULTIPLIER` (1e-8, where
        the evaluation's rounding exceeds the bracket: module notes); delta outside
        (0, 1).

    References
    ----------
    Balle & Wang 2018, Thm. 8 and eq. (6).
    """
    sigma = check_certifiable_multiplier(noise_multiplier)
    delta = check_delta(delta)
    if delta == 0:
        raise ValueError("delta must be > 0 for the Gaussian mechanism, got 0")
    log_delta = math.log(delta)
    if gaussian_log_delta(sigma, 0.0) <= log_delta:
        return 0.0, (0.0, 1e-9)
    lo, hi = 0.0, 1.0
    while gaussian_log_delta(sigma, hi) > log_delta:
        lo, hi = hi, hi * 10.0
    while hi - lo > _XTOL:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):  # adjacent floats
            break
        if gaussian_log_delta(sigma, mid) > log_delta:
            lo = mid
        else:
            hi = mid
    eps = 0.5 * (lo + hi)
    return eps, (max(0.0, lo - 1e-9 - 1e-9 * lo), hi + 1e-9 + 1e-9 * hi)
