"""The guessing game of one-run audits: certified epsilon lower bounds from correct guesses.

m canaries are each included in the input independently with probability 1/2
(S_i in {-1, +1} uniform); the algorithm runs once; a guesser looks at the output and
guesses T_i in {-1, 0, +1} (0: abstain) for each canary. Of its r non-zero guesses,
W = #{i : T_i = S_i} are correct. This module turns (m, r, W) into a certified lower
bound on the algorithm's epsilon at a given delta, by two analyses:

Steinke, Nasr & Jagielski (NeurIPS 2023), "Privacy auditing with one (1) training run"
    For an (epsilon, delta)-DP algorithm (in each canary's inclusion) and any guesser,
    their Theorem 5.2 (Theorem 3.1 for delta = 0) bounds the tail of W:

        P[W >= v] <= beta(v) + 2 m delta * max_{i = 1..v} (P[v - i <= B < v]) / i,
        beta(v) = P[B >= v],   B ~ Binomial(r, q),   q = e^eps / (1 + e^eps),

    the p-value of their Algorithm 2 (``p_value_DP_audit`` of their appendix code) and of
    jax_privacy 2.0's ``_one_run_p_value``. The certified epsilon is the largest eps at
    which that p-value is still <= alpha (:func:`snj_epsilon_lower_bound`). Guesses of
    either sign count (the theorem is stated for T in {-1, 0, +1}^m): the "two-sided"
    guesser guesses "included" for the k+ highest scores and "excluded" for the k- lowest
    (jax_privacy implements k- = 0 only).

    The rejection is a valid certificate only where the p-value grows with eps (a larger
    eps is a weaker null: every (eps*, delta)-DP algorithm is (eps, delta)-DP for eps >=
    eps*). beta grows with q; each term beta + c S_i / i (c = 2 m delta, S_i = P[v - i <=
    B < v]) has derivative r [(1 - c / i) P[B' = v - 1] + (c / i) P[B' = v - i - 1]] in q
    (B' ~ Binomial(r - 1, q)), >= 0 when c <= 1. So the bound is computed when
    2 m delta <= 1 and is 0 (with that reason) otherwise.

Mahloujifar, Melis & Chaudhuri (2024), "Auditing f-differential privacy in one run"
    (arXiv 2410.22235). Their analysis bounds the same game for an f-DP algorithm through
    the trade-off curve f; for the Gaussian family f = G_mu,
    G_mu(x) = Phi(Phi^-1(1 - x) - mu) (Dong, Roth & Su 2022, Def. 2.7). With k one-sided
    guesses of which c are correct, at level tau, their numerical audit (the recursion
    "audit_rh_with_cap" of their code, as jax_privacy 2.0's ``_epsilon_one_run_fdp``
    evaluates it) starts at r = tau c / m, h = tau (k - c) / m and for i = c - 1, ..., 0
    sets

        h' = max(h, G_mu(1 - r)),   r' = min(1, r + i / (k - i) (h' - h));

    the claim "f-DP with f = G_mu" is rejected when the final r + h exceeds k / m
    (:func:`gdp_rejects`). G_mu(1 - r) = Phi(Phi^-1(r) - mu) falls in mu, so the rejection
    is monotone in mu and a bisection gives the largest rejected mu; the certificate is a
    lower bound on the mu of any Gaussian-DP guarantee the algorithm can have, and the
    epsilon at delta of the mu-GDP mechanism (Balle & Wang 2018, Thm. 8; the certified
    lower end of :func:`~dpclaims.analysis.gaussian_dp.gaussian_epsilon_bracket_exact`).
    It refutes a claim only when the claim itself is a Gaussian-DP curve (a Gaussian
    mechanism, or Gaussian mechanisms composed without subsampling:
    :func:`gdp_mu_of_event`); for any other (epsilon, delta) claim it is an estimate.

The guess counts must not depend on the inclusions (they may depend on the output: the
scores). :mod:`dpclaims.audits.one_run` chooses them from the scores alone, on canaries set
apart, or tests every k of a grid that depends on m alone (:func:`guess_grid`), each test at
alpha / (number of tests) (Bonferroni); :func:`one_run_counts` counts the correct guesses.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit, ndtr, ndtri
from scipy.stats import binom

from dpclaims.analysis.gaussian_dp import gaussian_epsilon_bracket_exact
from dpclaims.analysis.validation import check_count, check_delta, check_probability

#: Fractions of the m canaries a guesser guesses on (each side); the grid of guess
#: counts is these fractions of m, rounded, at least 1, without repeats.
GUESS_FRACTIONS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
#: Bisection steps on epsilon (resp. mu): the bracket shrinks 2^-50 from <= 64.
BISECTION_STEPS = 50
#: The f-DP search: subdivisions of the bracket per round, and rounds after the first.
GRID_POINTS = 32
GRID_ROUNDS = 4
#: Largest epsilon (resp. mu) searched: beyond it a one-run audit of <= 10^8 canaries
#: cannot certify anything (q^r > alpha for every r at eps = 64).
UPPER_LIMIT = 64.0
#: Elements per block of the delta term's (rows, v) array.
_BLOCK = 2_000_000


def _as_counts(m, r, v):
    m = check_count(m, "m")
    r = np.asarray(r)
    v = np.asarray(v)
    if not (np.issubdtype(r.dtype, np.integer) and np.issubdtype(v.dtype, np.integer)):
        raise ValueError(f"r and v must be integer counts, got dtypes {r.dtype}, {v.dtype}")
    r, v = np.broadcast_arrays(r.astype(np.int64), v.astype(np.int64))
    if np.any(v < 0) or np.any(v > r) or np.any(r > m):
        raise ValueError(f"counts must satisfy 0 <= v <= r <= m = {m}; got r in "
                         f"[{r.min()}, {r.max()}], v in [{v.min()}, {v.max()}]")
    return m, r, v


def snj_p_value(m: int, r, v, epsilon, delta: float) -> np.ndarray:
    """The p-value of Steinke, Nasr & Jagielski's Theorem 5.2 (module docstring).

    Parameters
    ----------
    m : int
        Canaries, each included with probability 1/2.
    r, v : int arrays (broadcast)
        Guesses made and correct guesses, 0 <= v <= r <= m.
    epsilon : float array (broadcast with r, v)
        The null hypothesis' epsilon (nats, >= 0).
    delta : float
        Its delta, in [0, 1).

    Returns
    -------
    ndarray
        min(1, beta + 2 m delta max_i S_i / i): an upper bound on P[W >= v] for every
        (epsilon, delta)-DP algorithm and every guesser that makes r guesses.

    Raises
    ------
    ValueError
        Counts out of order, a negative or NaN epsilon, delta outside [0, 1).

    References
    ----------
    Steinke, Nasr, Jagielski, NeurIPS 2023, Thm. 5.2 and Algorithm 2 (appendix code
    ``p_value_DP_audit``).
    """
    m, r, v = _as_counts(m, r, v)
    delta = check_delta(delta)
    eps = np.asarray(epsilon, dtype=float)
    if np.any(~(eps >= 0)):
        raise ValueError(f"epsilon must be >= 0 and not NaN, got {eps}")
    r, v, eps = np.broadcast_arrays(r, v, eps)
    q = expit(eps)
    beta = binom.sf(v - 1, r, q)
    if delta == 0:
        return beta
    term = _delta_term(r.ravel(), v.ravel(), q.ravel()).reshape(r.shape)
    return np.minimum(1.0, beta + 2.0 * m * delta * term)


def _delta_term(r: np.ndarray, v: np.ndarray, q: np.ndarray) -> np.ndarray:
    """max_{i=1..v} P[v - i <= B < v] / i, B ~ Binomial(r, q), per element (0 for v = 0)."""
    out = np.zeros(r.shape)
    vmax = int(v.max(initial=0))
    if vmax == 0:
        return out
    i = np.arange(1, vmax + 1)
    rows = max(1, _BLOCK // vmax)
    for a in range(0, r.size, rows):
        sl = slice(a, a + rows)
        rr, vv, qq = r[sl, None], v[sl, None], q[sl, None]
        s = binom.cdf(vv - 1, rr, qq) - binom.cdf(vv - 1 - i, rr, qq)
        s = np.where(i <= vv, s / i, 0.0)
        out[sl] = s.max(axis=1)
    return out


def snj_epsilon_lower_bound(m: int, r, v, delta: float, alpha) -> np.ndarray:
    """Certified epsilon lower bound of Steinke, Nasr & Jagielski (module docstring).

    The largest epsilon whose p-value (:func:`snj_p_value`) is <= alpha, by bisection
    (:data:`BISECTION_STEPS` steps, vectorised over all counts; the lower end of the
    bracket, a value at which the p-value was seen <= alpha, is returned).

    Parameters
    ----------
    m : int
        Canaries.
    r, v : int arrays (broadcast)
        Guesses and correct guesses.
    delta : float
        The claim's delta, in [0, 1).
    alpha : float or array (broadcast)
        Significance of each bound, in (0, 1).

    Returns
    -------
    ndarray (broadcast shape)
        epsilon_lb >= 0 (nats): with probability >= 1 - alpha the algorithm is not
        (eps, delta)-DP for any eps < epsilon_lb. 0 where nothing is rejected, and
        everywhere when 2 m delta > 1 (module docstring: the p-value is then not shown to
        grow with eps).

    Raises
    ------
    ValueError
        As :func:`snj_p_value`, or alpha outside (0, 1).

    References
    ----------
    Steinke, Nasr, Jagielski, NeurIPS 2023, Thm. 5.2; appendix code ``get_eps_audit``.
    """
    m, r, v = _as_counts(m, r, v)
    delta = check_delta(delta)
    alpha = np.asarray(alpha, dtype=float)
    if np.any(~((alpha > 0) & (alpha < 1))):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    r, v, alpha = np.broadcast_arrays(r, v, alpha)
    shape = r.shape
    r, v, alpha = r.ravel(), v.ravel(), alpha.ravel()
    lo = np.zeros(r.size)
    if 2 * m * delta > 1:
        return lo.reshape(shape)
    ok = snj_p_value(m, r, v, lo, delta) <= alpha
    idx = np.flatnonzero(ok)
    if idx.size:
        lo[idx] = _bisect(lambda e, j: snj_p_value(m, r[j], v[j], e, delta) <= alpha[j], idx)
    return lo.reshape(shape)


def _bisect(rejects, idx: np.ndarray) -> np.ndarray:
    """The largest x in [0, UPPER_LIMIT] with ``rejects(x, idx)`` (monotone: true below a
    point), for rows ``idx`` where it holds at 0; the lower end of the final bracket."""
    lo = np.zeros(idx.size)
    hi = np.full(idx.size, 1.0)
    grow = rejects(hi, idx)
    while grow.any():  # double until not rejected (or the limit)
        lo = np.where(grow, hi, lo)
        hi = np.where(grow, np.minimum(2 * hi, UPPER_LIMIT), hi)
        done = grow & (lo >= UPPER_LIMIT)
        grow = grow & ~done
        if grow.any():
            grow[grow] = rejects(hi[grow], idx[grow])
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        ok = rejects(mid, idx)
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return lo


def gdp_rejects(m: int, k, c, mu, alpha) -> np.ndarray:
    """Whether k one-sided guesses with c correct reject "mu-GDP" at level alpha.

    The recursion of Mahloujifar, Melis & Chaudhuri (2024) for f = G_mu (module
    docstring), vectorised over all elements (a loop over the guess index i only).

    Parameters
    ----------
    m : int
        Canaries.
    k, c : int arrays (broadcast)
        Guesses ("included") and correct guesses, 0 <= c <= k <= m.
    mu : float array (broadcast)
        The null's mu >= 0.
    alpha : float array (broadcast)
        Level in (0, 1).

    Returns
    -------
    ndarray of bool
        True where the observation rejects mu-GDP.

    References
    ----------
    Mahloujifar, Melis, Chaudhuri, "Auditing f-differential privacy in one run", 2024
    (arXiv 2410.22235), the numerical audit with the cap r <= 1.
    """
    m, k, c = _as_counts(m, k, c)
    k, c, mu, alpha = np.broadcast_arrays(k, c, np.asarray(mu, float), np.asarray(alpha, float))
    shape = k.shape
    k, c, mu, alpha = (a.ravel().copy() for a in (k, c, mu, alpha))
    r = alpha * c / m
    h = alpha * (k - c) / m
    active = c > 0
    for i in range(int(c.max(initial=0)) - 1, -1, -1):
        rows = np.flatnonzero(active & (i < c))
        if rows.size == 0:
            if not active.any():
                break
            continue
        with np.errstate(divide="ignore"):
            g = ndtr(ndtri(r[rows]) - mu[rows])
        h_new = np.maximum(h[rows], g)
        unchanged = h_new == h[rows]
        active[rows[unchanged]] = False   # h and r cannot change any more
        ch = rows[~unchanged]
        hn = h_new[~unchanged]
        r[ch] = np.minimum(1.0, r[ch] + i / (k[ch] - i) * (hn - h[ch]))
        h[ch] = hn
    return (r + h > k / m).reshape(shape)


def gdp_mu_lower_bound(m: int, k, c, alpha) -> np.ndarray:
    """The largest mu that :func:`gdp_rejects` rejects (0 where it rejects none).

    A search on nested grids, vectorised over all elements and grid points (the recursion
    runs once per round, not once per bisection step): mu = 0, 1, ..., 64 first, then
    :data:`GRID_POINTS` subdivisions of the bracket per round for :data:`GRID_ROUNDS`
    rounds (a bracket of 64^-1 32^-4, about 1e-6); the lower end, a mu seen rejected, is
    returned. Rejection is monotone in mu (module docstring), so the bracket holds the
    largest rejected mu.

    Returns ndarray (broadcast shape of k, c, alpha): with probability >= 1 - alpha the
    algorithm is not mu-GDP for any mu below it.
    """
    m, k, c = _as_counts(m, k, c)
    k, c, alpha = np.broadcast_arrays(k, c, np.asarray(alpha, float))
    if np.any(~((alpha > 0) & (alpha < 1))):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    shape = k.shape
    k, c, alpha = k.ravel(), c.ravel(), alpha.ravel()
    lo = np.zeros(k.size)
    width = np.full(k.size, UPPER_LIMIT)
    steps = int(UPPER_LIMIT)
    for _ in range(GRID_ROUNDS + 1):
        grid = lo[:, None] + width[:, None] * np.arange(steps + 1) / steps   # (n, steps + 1)
        rej = gdp_rejects(m, k[:, None], c[:, None], grid, alpha[:, None])
        # the largest rejected grid point (rejection is monotone in mu: a prefix is True)
        last = np.where(rej.any(axis=1), rej.shape[1] - 1 - np.argmax(rej[:, ::-1], axis=1),
                        -1)
        found = last >= 0
        lo = np.where(found, grid[np.arange(k.size), np.maximum(last, 0)], 0.0)
        width = np.where(found, width / steps, 0.0)
        steps = GRID_POINTS
        if not found.any():
            break
    return lo.reshape(shape)


def gdp_epsilon(mu: float, delta: float) -> float:
    """Certified lower end of the epsilon at ``delta`` of the mu-GDP mechanism (0 for
    mu = 0), Balle & Wang 2018, Thm. 8 (:func:`~dpclaims.analysis.gaussian_dp.
    gaussian_epsilon_bracket_exact` with sigma = 1 / mu). ValueError: delta not in (0, 1)."""
    if not (isinstance(mu, (int, float, np.floating)) and mu >= 0 and math.isfinite(mu)):
        raise ValueError(f"mu must be a finite number >= 0, got {mu!r}")
    check_probability(delta, "delta")
    if mu == 0:
        return 0.0
    return gaussian_epsilon_bracket_exact(1.0 / mu, delta)[1][0]


def gdp_mu_of_event(dp_event) -> float | None:
    """The mu of a claim whose privacy curve is Gaussian-DP, else None.

    A ``GaussianDpEvent(sigma)`` is 1/sigma-GDP; ``SelfComposedDpEvent(e, T)`` is
    sqrt(T) mu_e-GDP and ``ComposedDpEvent`` sqrt(sum mu_i^2)-GDP when every part is
    Gaussian-DP (Dong, Roth & Su 2022, Cor. 3.3). Subsampled or other events: None (their
    curve is not G_mu, so a rejection of G_mu does not refute them).
    """
    import dp_accounting

    if isinstance(dp_event, dp_accounting.GaussianDpEvent):
        s = float(dp_event.noise_multiplier)
        return math.inf if s == 0 else 1.0 / s
    if isinstance(dp_event, dp_accounting.SelfComposedDpEvent):
        inner = gdp_mu_of_event(dp_event.event)
        return None if inner is None else inner * math.sqrt(dp_event.count)
    if isinstance(dp_event, dp_accounting.ComposedDpEvent):
        parts = [gdp_mu_of_event(e) for e in dp_event.events]
        if not parts or any(p is None for p in parts):
            return None
        return math.sqrt(sum(p * p for p in parts))
    return None


def guess_grid(m: int, fractions=GUESS_FRACTIONS) -> np.ndarray:
    """The guess counts k of a one-run audit of m canaries: round(f m) for each fraction,
    at least 1, without repeats, ascending (int array). Depends on m alone."""
    m = check_count(m, "m")
    f = np.asarray(fractions, dtype=float)
    if f.ndim != 1 or f.size == 0 or np.any(~((f > 0) & (f <= 0.5))):
        raise ValueError(f"fractions must be a non-empty list in (0, 1/2], got {fractions!r}")
    return np.unique(np.maximum(1, np.rint(f * m).astype(np.int64)))


def one_run_counts(scores, included, k_plus, k_minus) -> np.ndarray:
    """Correct guesses of the guesser "included for the k+ highest scores, excluded for
    the k- lowest" (abstain on the rest), for each audit and each (k+, k-).

    Parameters
    ----------
    scores : array (n, m)
        One row per audit: the canaries' scores (high: guess included). Ties are broken
        by the canary's index (a function of the output alone).
    included : bool array (n, m)
        Which canaries were included (S_i = +1).
    k_plus, k_minus : int arrays (g,) or (n, g)
        The guess counts of each of g guessers (the same in every audit, or per audit),
        k+ + k- <= m.

    Returns
    -------
    ndarray (n, g) of int
        W: correct guesses of each guesser in each audit (r = k+ + k- guesses each).

    Raises
    ------
    ValueError
        Shapes that differ, non-finite scores, counts out of range.
    """
    s = np.asarray(scores, dtype=float)
    inc = np.asarray(included)
    if s.ndim != 2 or inc.shape != s.shape:
        raise ValueError(f"scores and included must both have shape (n, m); got "
                         f"{s.shape} and {inc.shape}")
    if inc.dtype != bool:
        raise ValueError(f"included must be a bool array, got dtype {inc.dtype}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores contain NaN or infinite values")
    n, m = s.shape
    kp, km = np.broadcast_arrays(np.atleast_1d(np.asarray(k_plus, dtype=np.int64)),
                                 np.atleast_1d(np.asarray(k_minus, dtype=np.int64)))
    if kp.ndim == 1:
        kp, km = np.broadcast_to(kp, (n, kp.size)), np.broadcast_to(km, (n, km.size))
    if kp.ndim != 2 or kp.shape[0] != n or np.any(kp < 0) or np.any(km < 0) \
            or np.any(kp + km > m):
        raise ValueError(f"k_plus and k_minus must be counts (g,) or (n, g) with "
                         f"k+ + k- <= m = {m}")
    order = np.argsort(-s, axis=1, kind="stable")          # highest first
    inc_sorted = np.take_along_axis(inc, order, axis=1).astype(np.int64)
    top = np.concatenate([np.zeros((n, 1), np.int64),
                          np.cumsum(inc_sorted, axis=1)], axis=1)   # included among top j
    included_top = np.take_along_axis(top, kp, axis=1)
    included_bottom = top[:, -1:] - np.take_along_axis(top, m - km, axis=1)
    return included_top + km - included_bottom
