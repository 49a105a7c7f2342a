"""Certified epsilon of one pair of small datasets under fixed-size batches, add-remove.

An independent check of :func:`dpclaims.analysis.accounting.fixed_size_add_remove_event`
(the reduction of fixed-size batches under add-remove to a Poisson-subsampled Gaussian
pair): for a 1-D clipped sum over a small dataset D and D + {z}, each step releases
the sum over a uniformly random batch of exactly B records plus N(0, s^2), so each
step's output is a finite Gaussian mixture over the batches, and T non-adaptive steps
on the same pair are the T-fold product of that pair of mixtures.
:func:`pair_epsilon_bracket` computes a certified [lower, upper] on that pair's
epsilon at delta, with no accountant and no use of the reduction; by the reduction's
argument the pair with every record of D at -C and z at +C attains the reduced pair,
so its bracket must contain the reduction's epsilon, and every other pair's lower end
must lie below it.

Method. For a pair (A, B) of mixtures with common std s the privacy loss
L(x) = log a(x) / b(x) has ``|L'(x)| <= R / s^2``, R the range of all component means
(d/dx log a(x) = (posterior mean of the components at x - x) / s^2). The real line
is cut into cells of width h on [min mean - 12 s, max mean + 12 s]; each cell's mass
under A is exact (normal CDFs), and L on the cell lies within h R / (2 s^2) of its
value at the midpoint. Rounding every cell's loss down (up) to a grid of width
``loss_interval`` and dropping (counting at +inf) the mass outside the cut gives a
discrete loss variable below (above) the true one, pointwise; the T-fold loss is the
sum of T independent copies (a convolution), and delta(eps) = E[(1 - exp(eps - L))_+]
is increasing in L, so the two give a lower and an upper bound on delta(eps), hence
on epsilon(delta). Both directions (A, B) = (M(D + z), M(D)) and (M(D), M(D + z)) are
taken, epsilon being their maximum. An explicit slack covers the rounding of the
masses in double precision.

Cost: the batch sums are counted by distinct value (states capped at
:data:`MAX_SUBSETS`), the grid has about (R + 24 s) 4 R / (loss_interval s^2) cells,
and the T-fold convolution is an FFT over the loss grid: well under a second for
N <= 12, B <= 6, T <= 3.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import logsumexp, ndtr

from dpclaims.analysis.validation import check_count, check_positive

__all__ = ["EXACT_PAIR_ROW", "MAX_EXACT_STEPS", "MAX_SUBSETS", "batch_sum_mixture",
           "exact_pair_row", "pair_epsilon_bracket", "worst_pair"]

#: The name of the accounting row of :func:`exact_pair_row`.
EXACT_PAIR_ROW = "fixed-size-exact-pair"
#: The most steps :func:`exact_pair_row` composes (T - 1 FFT convolutions of a growing
#: loss grid: 1.6 s at T = 4, 5 s at T = 32 for N = 100, B = 50, sigma = 2).
MAX_EXACT_STEPS = 16
#: The most (records chosen, sum) states :func:`batch_sum_mixture` keeps.
MAX_SUBSETS = 200_000
_Z = 12.0  # the grid spans the component means +- _Z s


def batch_sum_mixture(values: Sequence[float], batch_size: int) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """The sums of the uniformly random batches of exactly ``batch_size`` of ``values``
    and their probabilities: ``(means, weights)``, sorted by mean.

    Counted exactly by distinct value (a multivariate hypergeometric law: choosing j
    of the n_v records equal to v in C(n_v, j) ways), so that many equal records cost
    nothing: 100 records at -C and one at +C have two batch sums.

    Raises
    ------
    ValueError
        ``batch_size`` not in 1..len(values), or more than :data:`MAX_SUBSETS`
        (count, sum) states.
    """
    b = check_count(batch_size, "batch_size")
    if b > len(values):
        raise ValueError(f"batch_size {b} exceeds the {len(values)} records")
    states: dict[tuple[int, float], int] = {(0, 0.0): 1}
    for v, n_v in sorted(Counter(float(x) for x in values).items()):
        grown: dict[tuple[int, float], int] = {}
        for (k, total), ways in states.items():
            for j in range(min(n_v, b - k) + 1):
                key = (k + j, total + j * v)
                grown[key] = grown.get(key, 0) + ways * math.comb(n_v, j)
        if len(grown) > MAX_SUBSETS:
            raise ValueError(f"{len(grown)} (count, sum) states exceed MAX_SUBSETS = "
                             f"{MAX_SUBSETS}")
        states = grown
    full = sorted((total, ways) for (k, total), ways in states.items() if k == b)
    denominator = math.comb(len(values), b)
    means = np.array([m for m, _ in full])
    weights = np.array([w / denominator for _, w in full])
    return means, weights


def worst_pair(larger_size: int, clip: float = 1.0) -> tuple[list[float], float]:
    """The pair that attains the reduction: ``larger_size - 1`` records at ``-clip``
    and the added record at ``+clip``."""
    m = check_count(larger_size, "larger_size", minimum=2)
    return [-float(clip)] * (m - 1), float(clip)


def _loss_pmf(a, b, s, loss_interval, pessimistic):
    """Discrete privacy loss of mixture ``a`` against ``b`` under ``a`` (means,
    weights), every loss rounded down (optimistic) or up (pessimistic): (offset index,
    pmf over offset + arange, mass at +inf, number of cells)."""
    means = np.concatenate([a[0], b[0]])
    lo_m, hi_m = float(means.min()), float(means.max())
    r = hi_m - lo_m
    if r == 0:  # identical mixtures: loss 0
        return 0, np.array([1.0]), 0.0, 1
    h = loss_interval * s**2 / (2 * r)  # Lipschitz slack h r / (2 s^2) = interval / 4
    lo, hi = lo_m - _Z * s, hi_m + _Z * s
    cells = int(math.ceil((hi - lo) / h))
    edges = lo + h * np.arange(cells + 1)
    mid = 0.5 * (edges[:-1] + edges[1:])

    def log_density(mix, x):
        m, w = mix
        return logsumexp(np.log(w)[:, None] - 0.5 * ((x[None, :] - m[:, None]) / s) ** 2,
                         axis=0)

    def mass(mix, left, right):
        m, w = mix
        za = (left[None, :] - m[:, None]) / s
        zb = (right[None, :] - m[:, None]) / s
        per = np.where(za > 0, ndtr(-za) - ndtr(-zb), ndtr(zb) - ndtr(za))
        return w @ np.clip(per, 0.0, None)

    width = h * r / (2 * s**2) + 1e-9  # + rounding of the log-densities
    loss = log_density(a, mid) - log_density(b, mid)
    p = mass(a, edges[:-1], edges[1:])
    tail = float(a[1] @ (ndtr((lo - a[0]) / s) + ndtr((a[0] - hi) / s)))
    if pessimistic:
        idx = np.ceil((loss + width) / loss_interval).astype(np.int64)
    else:
        idx = np.floor((loss - width) / loss_interval).astype(np.int64)
    offset = int(idx.min())
    pmf = np.bincount(idx - offset, weights=p)
    return offset, pmf, (tail if pessimistic else 0.0), cells


def _delta_curve(offset, pmf, m_inf, loss_interval, shift):
    """delta(eps) of the discrete loss (plus ``shift``, the rounding slack) and the
    largest finite loss."""
    losses = (offset + np.arange(len(pmf))) * loss_interval
    keep = pmf > 0
    losses, pmf = losses[keep], pmf[keep]

    def delta(eps):
        above = losses > eps
        return m_inf + float(pmf[above] @ -np.expm1(eps - losses[above])) + shift

    top = float(losses.max()) if len(losses) else 0.0
    return delta, top


def _epsilon(delta_of, top, delta, lower):
    """The smallest eps >= 0 with delta_of(eps) <= delta, bracketed by bisection: its
    lower end when ``lower`` (a lower bound), else its upper end; inf when even the
    largest loss leaves more than delta (mass at +inf)."""
    if delta_of(0.0) <= delta:
        return 0.0
    if delta_of(top) > delta:
        return math.inf
    a, b = 0.0, top
    for _ in range(80):
        mid = 0.5 * (a + b)
        if delta_of(mid) > delta:
            a = mid
        else:
            b = mid
    return a if lower else b


def pair_epsilon_bracket(smaller: Sequence[float], added: float, batch_size: int,
                         noise_std: float, steps: int, delta: float, *,
                         loss_interval: float = 1e-3) -> tuple[float, float]:
    """Certified [lower, upper] on the epsilon at ``delta`` of T = ``steps`` steps of a
    1-D sum over a batch of exactly B records plus N(0, noise_std^2), between the
    datasets ``smaller`` and ``smaller + [added]`` (module notes).

    Parameters
    ----------
    smaller : sequence of float
        The records of the smaller dataset (their clipped contributions); at least
        ``batch_size`` of them.
    added : float
        The added record.
    batch_size : int
        B, drawn without replacement from each dataset.
    noise_std : float
        The noise standard deviation (noise multiplier times C).
    steps : int
        T, the same pair each step (non-adaptive).
    delta : float
        In (0, 1).
    loss_interval : float, default 1e-3
        The loss grid; the bracket's width is a few times ``steps * loss_interval``.

    Returns
    -------
    (lower, upper) : tuple of float

    Raises
    ------
    ValueError
        A non-positive size, std or interval; delta outside (0, 1); fewer records than
        B; too many batch sums (:data:`MAX_SUBSETS`).
    """
    s = check_positive(noise_std, "noise_std")
    t = check_count(steps, "steps")
    g = check_positive(loss_interval, "loss_interval")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if len(smaller) < batch_size:
        raise ValueError(f"the smaller dataset holds {len(smaller)} records, fewer than "
                         f"batch_size {batch_size}")
    q_mix = batch_sum_mixture(smaller, batch_size)
    p_mix = batch_sum_mixture([*smaller, added], batch_size)
    bounds = []
    for lower in (True, False):
        eps = 0.0
        for a, b in ((p_mix, q_mix), (q_mix, p_mix)):
            offset, pmf, m_inf, cells = _loss_pmf(a, b, s, g, pessimistic=not lower)
            composed, off = pmf, offset
            for _ in range(t - 1):
                composed = np.clip(fftconvolve(composed, pmf), 0.0, None)
                off += offset
            m_total = min(1.0, t * m_inf)
            # double-precision rounding of the cell masses, and of the FFT convolutions
            # (each entry off by at most a few units of 1e-16 times log2 of the length,
            # for pmfs of total mass <= 1): generously 1e-13 an entry
            slack = cells * t * 4e-16 + len(composed) * 1e-13 * (t - 1) + 1e-15
            delta_of, top = _delta_curve(off, composed, m_total, g,
                                         -slack if lower else slack)
            eps = max(eps, _epsilon(delta_of, max(top, 0.0), delta, lower))
        bounds.append(eps)
    return bounds[0], bounds[1]


def exact_pair_row(noise_multiplier: float, sampling, delta: float, *,
                   max_steps: int = MAX_EXACT_STEPS, loss_interval: float = 1e-3):
    """A certified lower bound on the epsilon of fixed-size batches under add-remove from
    one pair of datasets, as an accounting row (bound ``"lower"``).

    The pair is :func:`worst_pair` of the larger size M = N (N - 1 records at -C, the
    added record at +C; M = N + 1 when B = N, the smaller dataset then holding no
    batch): the records of a 1-D sum clipped to C, each step releasing the sum over a
    uniformly random batch of exactly B records plus N(0, sigma^2 C^2). The lower end of
    :func:`pair_epsilon_bracket` is a certified lower bound on that pair's epsilon, hence
    on the epsilon of every mechanism of this class (a Gaussian-noised sum of
    contributions clipped to C, its noise multiplier relative to the add-remove
    sensitivity C) on datasets of N records and their neighbours: no accountant and
    no reduction enter it. For a library's clipped-gradient algorithm it bounds the
    run on a dataset whose clipped gradients are those records (every other record's
    at -C u, the added one's at +C u).

    Parameters
    ----------
    noise_multiplier : float
        sigma > 0, relative to the add-remove sensitivity C.
    sampling : dpclaims.analysis.sampling.Sampling
        Of kind ``without-replacement``: N, B and T steps.
    delta : float
        In (0, 1).
    max_steps : int, default :data:`MAX_EXACT_STEPS`
        More steps than this: the row is not computed (``epsilon=None``, the reason in
        its note).
    loss_interval : float, default 1e-3
        As :func:`pair_epsilon_bracket`.

    Returns
    -------
    dpclaims.analysis.accounting.AccountantRow
        Named :data:`EXACT_PAIR_ROW`, ``bound="lower"``; ``details`` hold the pair's
        sizes and the bracket [lower, upper] of that pair's epsilon.

    Raises
    ------
    ValueError
        ``sampling`` not of kind ``without-replacement``; a non-positive sigma or
        interval; delta outside (0, 1).

    References
    ----------
    The pair attains the reduction of
    :func:`dpclaims.analysis.accounting.fixed_size_add_remove_event` (its notes), so
    this row and that event's PLD rows must agree to the discretisation
    (tests/test_accounting_fixed_size.py).
    """
    from dpclaims.analysis.accounting import AccountantRow
    from dpclaims.analysis.sampling import Sampling

    if not isinstance(sampling, Sampling) or sampling.kind != "without-replacement":
        raise ValueError(f"sampling must be a Sampling of kind 'without-replacement', got "
                         f"{sampling!r}")
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    n, b, t = sampling.dataset_size, sampling.batch_size, sampling.num_steps
    m = n if n - 1 >= b else n + 1
    if t > max_steps:
        return AccountantRow(EXACT_PAIR_ROW, None, (
            f"not computed: {t} steps exceed the {max_steps} the exact computation of one "
            "pair composes (max_steps)"), bound="lower")
    smaller, added = worst_pair(m)
    try:
        lo, hi = pair_epsilon_bracket(smaller, added, b, sigma, t, delta,
                                      loss_interval=loss_interval)
    except (ValueError, MemoryError) as exc:
        return AccountantRow(EXACT_PAIR_ROW, None, f"not computed: {exc}", bound="lower")
    note = (f"Exact computation of one pair, no accountant: {m - 1} records at -C and the "
            f"added one at +C, batches of exactly {b}, {t} steps, noise std {sigma:g} C; "
            f"that pair's epsilon lies in [{lo:.6g}, {hi:.6g}], so the lower end is a "
            "certified lower bound on the true epsilon (dpclaims.analysis.fixed_size_exact).")
    return AccountantRow(EXACT_PAIR_ROW, lo, note,
                         {"pair": {"smaller_size": m - 1, "larger_size": m,
                                   "smaller_records": -1.0, "added_record": 1.0,
                                   "clip": 1.0},
                          "bracket_of_the_pair": [lo, hi], "loss_interval": loss_interval},
                         bound="lower")
