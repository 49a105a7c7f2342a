"""Privacy accounting of Gaussian mechanisms under the sampling an algorithm really performs.

Several accountants are run side by side on one mechanism, each row saying what
it assumes, and disagreement between them is flagged. Nothing is substituted:
an accountant that does not support the (sampling, neighbouring relation)
combination gives ``epsilon=None`` and says why.

Conventions
-----------
**Noise multiplier.** ``noise_multiplier`` sigma is the ratio of the Gaussian
noise standard deviation to the L2 sensitivity Delta of the *un-sampled* query
(e.g. the sum over a batch) under the chosen neighbouring relation: noise std =
sigma * Delta. A Gaussian mechanism with multiplier sigma has the same privacy
curve, N(0, sigma^2 Delta^2) against N(Delta, sigma^2 Delta^2), under either
relation when sigma is relative to that relation's own sensitivity; only the
amplification by sampling differs by relation. For a sum of per-record
contributions clipped to norm C, Delta = C under add-remove and Delta = 2C under
replace-one, so DP-SGD's noise multiplier z (noise std z C) is sigma = z under
add-remove and sigma = z / 2 under replace-one.

``dp_accounting``'s RDP accountant and autodp use this convention under both
relations. ``dp_accounting``'s PLD accountant does not under ``REPLACE_ONE``: it
reads the multiplier relative to the per-record bound C = Delta / 2 (it compares
mu(x + C) with mu(x - C)), so :func:`account` hands it 2 sigma and says so. For
Poisson sampling under replace-one the sampled curve is not fixed by Delta
alone; the PLD's ``REPLACE`` model assumes per-record contributions in a ball of
radius Delta / 2 around 0 (clipping), the worst pair being f(z) = -f(z').

**Sampling** (:class:`Sampling`). ``poisson``: each record joins each step's
batch independently with probability q = B / N. ``without-replacement``: each
step uses a uniformly random subset of exactly B of the N records (under replace-one
N is public; under add-remove the neighbours hold N - 1 or N + 1 records and each step
still draws B: :func:`fixed_size_add_remove_event`). ``shuffle`` / ``fixed-order``:
each pass (epoch) touches each record exactly once, in batches that partition the data;
this is *not* subsampling. ``none``: every step uses the whole dataset.

Verified support (dp_accounting 0.6.0 [10]_, autodp 0.2.3.1; AR = add-remove,
RO = replace-one; "Gaussian" = shuffle, fixed-order and none)::

    accountant           Poisson AR  Poisson RO  WOR AR   WOR RO  Gaussian AR  Gaussian RO
    dp_accounting-rdp    yes         no          yes [+]  yes     yes          yes
    dp_accounting-pld    yes         yes [*]     yes [+]  no      yes          yes [*]
    autodp-rdp           yes         no          yes [+]  yes     yes          yes
    moments-accountant   yes         no          yes [+]  yes     yes          yes
    analytic-gaussian    no          no          no       no      yes          yes

    [*] given 2 sigma (see above). The moments accountant converts dp_accounting's
    RDP curve, so it has that accountant's support.
    [+] not by the libraries (dp_accounting 0.6.0 and its newest source accept
    ``SampledWithoutReplacementDpEvent`` under REPLACE_ONE only, in the RDP accountant
    only; autodp refuses an add_remove mechanism): :func:`account` accounts fixed-size
    batches under add-remove by a reduction to a Poisson-subsampled Gaussian pair,
    :func:`fixed_size_add_remove_event`, which every Poisson add-remove accountant then
    bounds. :func:`account_event` given a ``SampledWithoutReplacementDpEvent`` under
    add-remove still says "unsupported" (the event does not say that the noise is
    relative to the add-remove sensitivity).

References
----------
.. [1] Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar, Zhang, "Deep learning
   with differential privacy", CCS 2016 (moments accountant, Thm. 2).
.. [2] Mironov, "Renyi differential privacy", CSF 2017 (Prop. 3: RDP to (eps, delta)).
.. [3] Mironov, Talwar, Zhang, "Renyi differential privacy of the sampled
   Gaussian mechanism", arXiv:1908.10530, 2019.
.. [4] Wang, Balle, Kasiviswanathan, "Subsampled Renyi differential privacy and
   analytical moments accountant", AISTATS 2019 (Thm. 27: without replacement).
.. [5] Zhu, Wang, "Poisson subsampled Renyi differential privacy", ICML 2019 (Thm. 8).
.. [6] Balle, Barthe, Gaboardi, Hsu, Sato, "Hypothesis testing interpretations
   and Renyi differential privacy", AISTATS 2020 (Thm. 21: RDP to (eps, delta)).
.. [7] Canonne, Kamath, Steinke, "The discrete Gaussian for differential
   privacy", NeurIPS 2020 (Prop. 12: the conversion dp_accounting uses).
.. [8] Balle, Wang, "Improving the Gaussian mechanism for differential privacy:
   analytical calibration and optimal denoising", ICML 2018 (exact Gaussian eps).
.. [9] Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the dots: tighter
   discrete approximations of privacy loss distributions", PETS 2022.
.. [10] dp_accounting documentation and source,
   https://github.com/google/differential-privacy/tree/main/python/dp_accounting
.. [11] Balle, Barthe, Gaboardi, "Privacy amplification by subsampling: tight
   analyses via couplings and divergences", NeurIPS 2018 (couplings; joint convexity
   of the hockey-stick divergence).
.. [12] Zhu, Dong, Wang, "Optimal accounting of differential privacy via
   characteristic function", AISTATS 2022 (dominating pairs of distributions and their
   adaptive composition; add and remove taken together, Thm. 11; sampling without
   replacement under substitution, Prop. 30: the numbers as cited in the OpenReview
   discussion of [13]).
.. [13] Lebeda, Regehr, Kamath, Steinke, "Avoiding pitfalls for privacy accounting of
   subsampled mechanisms under composition", arXiv:2405.20769, 2024 (Poisson
   subsampling and sampling without replacement are not interchangeable in accounting;
   the dominating pair of a subsampled mechanism, (1 - gamma) P + gamma Q, Thm. 10 of
   the ICLR 2025 submission).
"""

from __future__ import annotations

import collections
import functools
import hashlib
import math
import os
import pickle
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dp_accounting
import numpy as np
from autodp import mechanism_zoo, transformer_zoo
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from dpclaims.analysis.gaussian_dp import MIN_NOISE_MULTIPLIER, check_certifiable_multiplier
from dpclaims.analysis.sampling import Sampling
from dpclaims.analysis.validation import (  # noqa: F401  (steps_for_epochs re-exported)
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
    steps_for_epochs,
)
from dpclaims.analysis.vocabulary import RELATIONS, SAMPLINGS, check_relation

__all__ = [
    "ACCOUNTANTS",
    "PURE_DP_ACCOUNTANT",
    "steps_for_epochs",
    "TIGHT_ACCOUNTANTS",
    "CALIBRATION_ACCOUNTANTS",
    "KINDS",
    "BOUNDS",
    "MAX_PLD_POINTS",
    "RELATIONS",
    "AccountantRow",
    "AccountingResult",
    "Sampling",
    "account",
    "account_event",
    "calibrate_noise_multiplier",
    "gaussian_epsilon_bracket",
    "composed_gaussian_sigma",
    "dp_event_for",
    "fixed_size_add_remove_event",
    "fixed_size_add_remove_rate",
]

KINDS = SAMPLINGS  # the sampling kinds (dpclaims.analysis.vocabulary.SamplingKind)
BOUNDS = ("upper", "lower", "exact", "model")
# The largest PLD grid (points of one probability mass function, before and after
# composition) the accountants here build: about 67 MB a float64 array, a few times
# that in the FFT of a composition. A finer interval that would need more is not tried
# (the row says so); a coarser one is still a valid bound (module notes).
MAX_PLD_POINTS = 2**23
ACCOUNTANTS = (
    "dp_accounting-rdp",
    "dp_accounting-pld",
    "dp_accounting-pld-optimistic",
    "autodp-rdp",
    "moments-accountant",
    "analytic-gaussian",
)
CALIBRATION_ACCOUNTANTS = ("autodp-rdp", "dp_accounting-rdp", "dp_accounting-pld")

_DPA_RELATION = {
    "replace-one": dp_accounting.NeighboringRelation.REPLACE_ONE,
    "add-remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
}


# --------------------------------------------------------------------------- sampling


def dp_event_for(noise_multiplier: float, sampling: Sampling) -> dp_accounting.DpEvent:
    """The ``dp_accounting.DpEvent`` of an iterative Gaussian mechanism under ``sampling``.

    Parameters
    ----------
    noise_multiplier : float
        sigma > 0: noise std over the L2 sensitivity of the un-sampled query under
        the neighbouring relation the event will be accounted under (module notes).
    sampling : Sampling

    Returns
    -------
    dp_accounting.DpEvent
        ``SelfComposedDpEvent(inner, count)`` with ``inner`` =
        ``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))`` and count = steps
        (``poisson``); ``SampledWithoutReplacementDpEvent(N, B,
        GaussianDpEvent(sigma))`` and count = steps (``without-replacement``);
        ``GaussianDpEvent(sigma)`` and count = passes (``shuffle``,
        ``fixed-order``: one unamplified Gaussian per epoch, see :class:`Sampling`);
        ``GaussianDpEvent(sigma)`` and count = steps (``none``).

    Raises
    ------
    ValueError
        ``noise_multiplier`` not a finite number > 0; a ``shuffle`` /
        ``fixed-order`` sampling whose number of passes is unknown cannot occur
        (``Sampling`` validates it).
    TypeError
        ``sampling`` is not a :class:`Sampling`.
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    if not isinstance(sampling, Sampling):
        raise TypeError(f"sampling must be a Sampling, got {sampling!r}")
    gaussian = dp_accounting.GaussianDpEvent(sigma)
    if sampling.kind == "poisson":
        inner = dp_accounting.PoissonSampledDpEvent(sampling.sampling_rate, gaussian)
        count = sampling.num_steps
    elif sampling.kind == "without-replacement":
        inner = dp_accounting.SampledWithoutReplacementDpEvent(
            sampling.dataset_size, sampling.batch_size, gaussian
        )
        count = sampling.num_steps
    elif sampling.kind in ("shuffle", "fixed-order"):
        inner, count = gaussian, sampling.passes
    else:
        inner, count = gaussian, sampling.num_steps
    return dp_accounting.SelfComposedDpEvent(inner, count)


def fixed_size_add_remove_rate(sampling: Sampling) -> float:
    """The sampling rate of the Poisson pair that bounds fixed-size batches under
    add-remove (:func:`fixed_size_add_remove_event`): B / N, or N / (N + 1) when B = N.

    Of a dataset of N records the neighbours under add-remove have N - 1 and N + 1
    records; a pair whose larger dataset has M records is bounded at rate B / M. The
    worst neighbour is the smaller one, M = N, when it still holds a batch (N - 1 >= B);
    when B = N it cannot be sampled from, and the only neighbours have N + 1 records.
    """
    from dpclaims.analysis.sampling import _fixed_size_rate

    return _fixed_size_rate(sampling.dataset_size, sampling.batch_size)


def fixed_size_add_remove_event(noise_multiplier: float,
                                sampling: Sampling) -> dp_accounting.DpEvent:
    """The DpEvent that bounds fixed-size batches (B of N, without replacement) under
    add-remove: ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma /
    2)), T)``, with q = :func:`fixed_size_add_remove_rate`, to be accounted under
    ADD_OR_REMOVE_ONE.

    Parameters
    ----------
    noise_multiplier : float
        sigma > 0, relative to the add-remove sensitivity Delta of the un-sampled query
        (C for a sum clipped to norm C: DP-SGD's and d3p's noise multiplier).
    sampling : Sampling
        Of kind ``without-replacement``.

    Notes
    -----
    **The reduction.** Let D hold M - 1 records and D' = D + {z} hold M; each step draws
    a uniformly random batch of exactly B records (B <= M - 1) and releases f(batch) +
    N(0, sigma^2 Delta^2 I), where f is a sum of per-record contributions of norm <= C
    (then Delta = C), or any query of add-remove sensitivity Delta. Let gamma = B / M.

    A batch of D' misses z with probability 1 - gamma, and is then a uniform B-subset
    of D; it holds z with probability gamma, and is then {z} + T with T a uniform
    (B - 1)-subset of D. A uniform B-subset of D is T + {y}, T a uniform (B - 1)-subset
    of D and y uniform on D \\ T. Index both outputs by the same (T, y), m = f(T + {y})::

        M(D)  = E_(T,y) [ N(m, s^2) ],
        M(D') = E_(T,y) [ (1 - gamma) N(m, s^2) + gamma N(m + v, s^2) ],
        v = f(T + {z}) - f(T + {y}),  |v| <= 2 Delta,

    (the second line integrates y out of the gamma term, which then no longer depends
    on it). The hockey-stick divergence is jointly convex [11]_, so both directions
    are bounded by the worst (T, y); by translation and rotation invariance and
    monotonicity in ``|v|`` of the Gaussian pair, that is ``|v| = 2 Delta``::

        H_a(M(D') || M(D)) <= H_a((1 - gamma) N(0, s^2) + gamma N(2 Delta, s^2) || N(0, s^2)),

    and the same with the arguments swapped. The right-hand pair is the Poisson-
    subsampled Gaussian's add-remove pair at rate gamma with sensitivity 2 Delta, i.e.
    noise multiplier sigma / 2: a dominating pair of each step for every query and every
    pair of datasets of sizes M - 1 and M, so the T-step adaptive composition is
    dominated by its T-fold product [12]_ and every accountant of Poisson sampling under
    add-remove (dp_accounting's RDP and PLD, autodp, the moments accountant) bounds it.
    An added record that enters a full batch pushes another out: that is the 2 Delta,
    which Poisson accounting at multiplier sigma (d3p 0.2.0's ``DPSVI.get_epsilon``)
    misses.

    **Which rate.** The rate is B over the size of the *larger* dataset of the pair. The
    neighbours of the N records actually used have N - 1 and N + 1 records: the pair
    (N - 1, N) is at rate B / N, the pair (N, N + 1) at B / (N + 1) < B / N, and epsilon
    increases with the rate, so B / N covers both (B / (N + 1) only the second: the
    issue's "exact" 6.63 for N = 100, B = 50, sigma = 2, 4 steps, delta = 1e-5 is the
    pair (100, 101); B / N gives 6.68). When B = N the smaller neighbour holds no batch,
    and the rate is N / (N + 1) (:func:`fixed_size_add_remove_rate`).

    **Tightness.** The bound is attained: take D with all M - 1 contributions equal to
    -C e and z = +C e (a fixed unit vector e; a 1-D clipped sum with records at -C and
    +C). Then m = -B C e for every (T, y), v = 2 C e, and M(D), M(D') *are* the pair
    above, translated; over T non-adaptive steps the product pair. So the pessimistic
    PLD of this event is an upper bound and its optimistic PLD a lower bound on the
    true epsilon (the supremum over queries of this class and neighbouring pairs
    touching the N records), RDP values are upper bounds, and none is exact.
    tests/test_accounting_fixed_size.py checks the lower end against an independent
    computation of that pair (:mod:`dpclaims.analysis.fixed_size_exact`).

    Lebeda et al. [13]_ show that Poisson and fixed-size (without replacement) sampling
    must not be accounted interchangeably; they analyse sampling without replacement
    under substitution, where the replaced record moves the sum by 2 C as well. The
    reduction above is this module's (the paper's text on add-remove was not available
    to the reading that wrote it); its ingredients are the coupling and joint convexity
    of [11]_ and the dominating pairs of [12]_.

    Raises
    ------
    ValueError
        ``noise_multiplier`` not a finite number > 0; ``sampling`` not of kind
        ``without-replacement``.
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    if not isinstance(sampling, Sampling) or sampling.kind != "without-replacement":
        raise ValueError(f"sampling must be a Sampling of kind 'without-replacement', "
                         f"got {sampling!r}")
    inner = dp_accounting.PoissonSampledDpEvent(
        fixed_size_add_remove_rate(sampling), dp_accounting.GaussianDpEvent(sigma / 2))
    return dp_accounting.SelfComposedDpEvent(inner, sampling.num_steps)


def _event_for(sigma: float, sampling: Sampling, relation: str) -> dp_accounting.DpEvent:
    """The event :func:`account` and :func:`calibrate_noise_multiplier` account under
    ``relation``: :func:`dp_event_for`, except fixed-size batches under add-remove,
    which are accounted by :func:`fixed_size_add_remove_event`."""
    if sampling.kind == "without-replacement" and relation == "add-remove":
        return fixed_size_add_remove_event(sigma, sampling)
    return dp_event_for(sigma, sampling)


#: What every row of fixed-size batches under add-remove adds to its note.
FIXED_SIZE_ADD_REMOVE_NOTE = (
    " Fixed-size batches under add-remove: accounted as the Poisson-subsampled Gaussian "
    "pair at rate {q:.6g} with noise multiplier sigma / 2 = {half:.6g} (an added record "
    "entering a batch pushes another out, moving a clipped sum by up to 2C; "
    "accounting.fixed_size_add_remove_event), a dominating pair attained by records at "
    "-C and +C."
)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class AccountantRow:
    """One accountant's answer.

    Attributes
    ----------
    name : str
        One of :data:`ACCOUNTANTS`.
    epsilon : float or None
        The epsilon at the result's delta (may be ``inf``); None where the
        accountant does not support the event under the relation.
    note : str
        What the accountant assumes, or why it is unsupported.
    details : mapping
        JSON-able extras (optimal order, discretisation interval, ...).
    bound : {"upper", "lower", "exact", "model"}
        What ``epsilon`` is with respect to the true epsilon of the event (module
        notes, "Certified bounds"): a certified upper bound, a certified lower bound,
        exact (up to ``details["bracket"]``, a certified [lower, upper]), or a value
        valid only under a modelling assumption not known to hold (never used as a
        bound).
    """

    name: str
    epsilon: float | None
    note: str
    details: Mapping[str, Any] = field(default_factory=dict)
    bound: str = "upper"

    def __post_init__(self):
        if self.bound not in BOUNDS:
            raise ValueError(f"bound must be one of {BOUNDS}, got {self.bound!r}")

    @property
    def bracket(self) -> tuple[float, float] | None:
        """The certified [lower, upper] this row gives on the true epsilon, with None for
        a missing end; None when the row gives no certified bound."""
        if self.epsilon is None or self.bound == "model":
            return None
        if self.bound == "exact":
            lo, hi = self.details.get("bracket", (self.epsilon, self.epsilon))
            return float(lo), float(hi)
        if self.bound == "lower":
            return self.epsilon, None
        return None, self.epsilon

    @property
    def supported(self) -> bool:
        return self.epsilon is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "epsilon": _json_float(self.epsilon),
            "bound": self.bound,
            "note": self.note,
            "details": {k: _json_value(v) for k, v in self.details.items()},
        }


@dataclass(frozen=True)
class AccountingResult:
    """Several accountants run on one mechanism, side by side.

    Attributes
    ----------
    noise_multiplier : float
    sampling : Sampling
    relation : {"replace-one", "add-remove"}
    delta : float
    event : str
        ``repr`` of the ``dp_accounting.DpEvent`` that was accounted.
    note : str
        What the sampling is and how it is accounted, and the sensitivity convention.
    rows : tuple of AccountantRow
        One per accountant (per accountant asked for, see :func:`account_event`), in the
        order of :data:`ACCOUNTANTS`.
    rtol : float
        Relative tolerance for the disagreement flag.
    lower_bound : (str, float) or None
        The largest certified lower bound on the true epsilon over the rows (the
        optimistic PLD, the lower end of an exact row's bracket): (row name, value).
    upper_bound : (str, float) or None
        The smallest certified upper bound over the rows (RDP, pessimistic PLD,
        moments accountant, the upper end of an exact row's bracket).
    max_epsilon : float or None
        Largest epsilon over the supported upper-bound and exact rows (the
        conservative answer); None if no accountant supports the event.
    disagreement : float or None
        Relative spread ``(max - min) / min`` of the supported rows' epsilons
        (0 if all equal, ``inf`` if min is 0 < max or some but not all are
        ``inf``); None with fewer than two supported rows.
    disagrees : bool
        ``disagreement > rtol``. RDP-based bounds typically exceed PLD ones by a
        few percent and the moments-accountant conversion is looser still, so a
        flag at 5 % says the choice of accountant matters at that resolution,
        not that an accountant is wrong.
    extremes : tuple of str or None
        Names of the rows with the smallest and the largest epsilon.
    tight_disagreement : float or None
        The same spread over the rows of :data:`TIGHT_ACCOUNTANTS` only (the
        accountants that claim tightness: the PLD accountant, exact up to its
        discretisation, and the exact Gaussian composition); None with fewer
        than two such rows. Disagreement there means a discretisation too coarse
        or a bug, not a looser bound by design.
    tight_disagrees : bool
        ``tight_disagreement > rtol``.
    discrepant_pairs : tuple of (str, str, float)
        Every pair of supported rows (smaller epsilon first) whose relative
        difference ``(larger - smaller) / smaller`` exceeds ``rtol``, with that
        difference. dp_accounting-rdp and autodp-rdp can appear here: both are
        valid upper bounds, but autodp evaluates the sampled Gaussian's RDP at
        integer orders and interpolates (looser when the optimal order is
        below about 11), while dp_accounting's default grid jumps from 63 to
        128, 256, ... (looser when the optimal order is large); measured ratios
        from 0.5 to 2 (tests/test_accounting_properties.py, benchmarks/accounting.py).
    """

    noise_multiplier: float | None
    sampling: Sampling | None
    relation: str
    delta: float
    event: str
    note: str
    rows: tuple[AccountantRow, ...]
    rtol: float
    dp_event: Any = field(default=None, repr=False, compare=False)
    lower_bound: tuple[str, float] | None = field(init=False)
    upper_bound: tuple[str, float] | None = field(init=False)
    max_epsilon: float | None = field(init=False)
    tight_disagreement: float | None = field(init=False)
    tight_disagrees: bool = field(init=False)
    disagreement: float | None = field(init=False)
    disagrees: bool = field(init=False)
    extremes: tuple[str, str] | None = field(init=False)
    discrepant_pairs: tuple[tuple[str, str, float], ...] = field(init=False)

    def __post_init__(self) -> None:
        lows = [(r.name, r.bracket[0]) for r in self.rows
                if r.bracket is not None and r.bracket[0] is not None]
        highs = [(r.name, r.bracket[1]) for r in self.rows
                 if r.bracket is not None and r.bracket[1] is not None]
        object.__setattr__(self, "lower_bound", max(lows, key=lambda x: x[1]) if lows
                           else None)
        object.__setattr__(self, "upper_bound", min(highs, key=lambda x: x[1]) if highs
                           else None)
        # the accountants' answers compared below: upper bounds and exact values (a
        # lower bound and a model-only value are not an accountant's epsilon)
        supported = [r for r in self.rows if r.epsilon is not None
                     and r.bound in ("upper", "exact")]
        values = [r.epsilon for r in supported]
        maximum = max(values) if values else None
        spread = extremes = None
        if len(values) >= 2:
            low = min(supported, key=lambda r: r.epsilon)
            high = max(supported, key=lambda r: r.epsilon)
            extremes = (low.name, high.name)
            spread = _relative_change(high.epsilon, low.epsilon)
        tight = [r.epsilon for r in supported if r.name in TIGHT_ACCOUNTANTS]
        tight_spread = (_relative_change(max(tight), min(tight)) if len(tight) >= 2
                        else None)
        object.__setattr__(self, "tight_disagreement", tight_spread)
        object.__setattr__(self, "tight_disagrees",
                           tight_spread is not None and tight_spread > self.rtol)
        object.__setattr__(self, "max_epsilon", maximum)
        object.__setattr__(self, "disagreement", spread)
        object.__setattr__(self, "disagrees", spread is not None and spread > self.rtol)
        object.__setattr__(self, "extremes", extremes)
        pairs = []
        for i, a in enumerate(supported):
            for b in supported[i + 1 :]:
                low, high = (a, b) if a.epsilon <= b.epsilon else (b, a)
                change = _relative_change(high.epsilon, low.epsilon)
                if change > self.rtol:
                    pairs.append((low.name, high.name, change))
        object.__setattr__(self, "discrepant_pairs", tuple(pairs))

    def with_rows(self, *extra: AccountantRow) -> AccountingResult:
        """The same result with ``extra`` rows appended (e.g. a certified lower bound
        computed without an accountant, :func:`dpclaims.analysis.fixed_size_exact.
        exact_pair_row`); the bounds, spreads and flags are recomputed over all rows."""
        return AccountingResult(noise_multiplier=self.noise_multiplier,
                                sampling=self.sampling, relation=self.relation,
                                delta=self.delta, event=self.event, note=self.note,
                                rows=self.rows + tuple(extra), rtol=self.rtol,
                                dp_event=self.dp_event)

    def row(self, name: str) -> AccountantRow:
        """The row of accountant ``name``; KeyError if there is none."""
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no accountant row named {name!r}; rows: {[r.name for r in self.rows]}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict; non-finite floats become the strings "inf" / "-inf" / "nan"."""
        return {
            "noise_multiplier": self.noise_multiplier,
            "sampling": None if self.sampling is None else
            {k: _json_value(v) for k, v in self.sampling.to_dict().items()},
            "relation": self.relation,
            "delta": self.delta,
            "event": self.event,
            "note": self.note,
            "rows": [r.to_dict() for r in self.rows],
            "rtol": self.rtol,
            "lower_bound": None if self.lower_bound is None else
            [self.lower_bound[0], _json_float(self.lower_bound[1])],
            "upper_bound": None if self.upper_bound is None else
            [self.upper_bound[0], _json_float(self.upper_bound[1])],
            "max_epsilon": _json_float(self.max_epsilon),
            "disagreement": _json_float(self.disagreement),
            "tight_disagreement": _json_float(self.tight_disagreement),
            "tight_disagrees": self.tight_disagrees,
            "disagrees": self.disagrees,
            "extremes": list(self.extremes) if self.extremes else None,
            "discrepant_pairs": [[a, b, _json_float(c)] for a, b, c in self.discrepant_pairs],
        }


# --------------------------------------------------------------------------- accounting

#: What an accountant's arithmetic raises when the event's numbers leave double precision
#: (sigma = 1e308 squares to inf, sigma = 1e-300 to 0, a PLD's exp overflows): the row
#: is then "not computed" with the reason, and the other rows still bound the event.
OUT_OF_RANGE = (OverflowError, ZeroDivisionError, FloatingPointError, MemoryError)


def _out_of_range(library: str, exc: BaseException) -> str:
    return (f"not computed: {library}'s arithmetic fails at these parameters (outside double "
            f"precision: {type(exc).__name__}: {exc})")


def account(
    noise_multiplier: float,
    sampling: Sampling,
    delta: float,
    relation: str = "replace-one",
    *,
    rtol: float = 0.05,
    pld_initial_interval: float = 1e-3,
    pld_max_refinements: int = 6,
    pld_rtol: float = 0.01,
    lower_bound: bool = True,
    accountants: tuple[str, ...] | None = None,
) -> AccountingResult:
    """Epsilon of an iterative Gaussian mechanism by every accountant, side by side.

    Parameters
    ----------
    noise_multiplier : float
        sigma > 0, relative to the L2 sensitivity of the un-sampled query under
        ``relation`` (module notes: the same curve under either relation for an
        un-sampled Gaussian; for clipped sums with norm C, Delta = C under
        add-remove and 2C under replace-one).
    sampling : Sampling
        What the algorithm really does each step.
    delta : float
        Target delta in (0, 1); ValueError at delta = 0, where every Gaussian
        mechanism has epsilon = inf.
    relation : {"replace-one", "add-remove"}
        Neighbouring relation.
    rtol : float, default 0.05
        Relative tolerance of the disagreement flag.
    pld_initial_interval : float, default 1e-3
        First ``value_discretization_interval`` of the PLD accountant.
    pld_max_refinements : int, default 6
        Maximum number of halvings of the interval (finest 1e-3 / 64 = 1.6e-5
        by default). The cost roughly doubles with each halving; the cap is a
        count, not a time, so that the result does not depend on the machine.
    pld_rtol : float, default 0.01
        Halving stops once epsilon changes by less than this fraction.
    lower_bound : bool, default True
        Compute the optimistic PLD row (a certified lower bound; as costly as the
        pessimistic PLD). Never computed for ``"shuffle"``, where it bounds only a
        known pass order (:func:`account_event`).
    accountants : tuple of str or None, default None
        Only these rows (names from :data:`ACCOUNTANTS`; None: all), as in
        :func:`account_event`.

    Returns
    -------
    AccountingResult
        One row per accountant in :data:`ACCOUNTANTS`:

        ``dp_accounting-rdp``: ``RdpAccountant`` at its default orders (1.1 to
        1024); Poisson by [3]_, without replacement by [4]_ (Thm. 27, replace-one
        only), conversion to (eps, delta) by [7]_ (Prop. 12).

        ``dp_accounting-pld``: ``PLDAccountant`` with pessimistic connect-the-dots
        discretisation [9]_, an upper bound at every interval; the interval is
        halved from ``pld_initial_interval`` until epsilon changes by less than
        ``pld_rtol``, or the row says it did not converge within
        ``pld_max_refinements`` halvings. Under replace-one it is given 2 sigma
        (module notes). No sampling without replacement under replace-one.

        Sampling without replacement under add-remove (fixed-size batches) is
        accounted by every row as the Poisson add-remove event of
        :func:`fixed_size_add_remove_event` (rate B / N, multiplier sigma / 2), a
        dominating pair that is attained: the RDP and pessimistic PLD rows are upper
        bounds and the optimistic PLD a lower bound on the true epsilon; each row's note
        says so.

        ``autodp-rdp``: autodp's RDP composition; Poisson by [5]_ (Thm. 8,
        ``improved_bound_flag=True``, evaluated at integer orders and
        interpolated between them: an upper bound, not the exact RDP), without
        replacement by [4]_ (Thm. 27, ``improved_bound_flag=True``, on a
        ``replace_one`` Gaussian), conversion by [6]_ (Thm. 21) minimised over
        real orders by Brent's method.

        ``moments-accountant``: the tail bound of [1]_ (Thm. 2),
        ``eps = min_lambda (alpha(lambda) + log(1/delta)) / lambda`` with the log
        moment ``alpha(lambda) = lambda * RDP(lambda + 1)`` ([2]_, Prop. 3 at
        order lambda + 1), over the integer lambda in {1, ..., 62, 127, 255,
        511, 1023} (the integer orders >= 2 of dp_accounting's default grid,
        minus one), from dp_accounting's RDP curve. Looser than the improved
        conversions by design: it is what papers using [1]_ report.

        ``analytic-gaussian``: exact epsilon [8]_ (``dp_accounting.get_epsilon_gaussian``)
        of a composition of plain Gaussians, which is one Gaussian with
        multiplier ``(sum_i sigma_i^-2)^(-1/2)``; unsupported when the event
        contains sampling.

    Raises
    ------
    ValueError
        ``noise_multiplier`` <= 0, ``delta`` outside [0, 1), unknown ``relation``,
        non-positive tolerances or interval, negative ``pld_max_refinements``.
    TypeError
        ``sampling`` is not a :class:`Sampling`.

    References
    ----------
    See the module docstring: [1]_ Abadi et al. 2016, [2]_ Mironov 2017, [3]_
    Mironov, Talwar, Zhang 2019, [4]_ Wang, Balle, Kasiviswanathan 2019, [5]_
    Zhu, Wang 2019, [6]_ Balle et al. 2020, [7]_ Canonne, Kamath, Steinke 2020,
    [8]_ Balle, Wang 2018, [9]_ Doroshenko et al. 2022, dp_accounting docs.

    Examples
    --------
    >>> s = Sampling("poisson", dataset_size=100_000, batch_size=100, steps=100_000)
    >>> r = account(3.0, s, 1e-5, "add-remove")
    >>> round(r.row("dp_accounting-rdp").epsilon, 3)
    0.41
    """
    sigma = check_positive(noise_multiplier, "noise_multiplier")
    if check_delta(delta) == 0:
        raise ValueError("delta must lie in (0, 1) for Gaussian accounting (epsilon is "
                         "infinite at delta = 0), got 0")
    if accountants is not None and not set(accountants) <= set(ACCOUNTANTS):
        raise ValueError(f"accountants must be names from {ACCOUNTANTS} for a Gaussian "
                         f"mechanism, got {accountants!r}")
    event = _event_for(sigma, sampling, relation)
    rows = account_event(event, delta, relation, rtol=rtol,
                         pld_initial_interval=pld_initial_interval,
                         pld_max_refinements=pld_max_refinements, pld_rtol=pld_rtol,
                         lower_bound=lower_bound and sampling.kind != "shuffle",
                         accountants=accountants).rows
    if sampling.kind == "shuffle":
        rows = [_hidden_shuffle_row(r) for r in rows]
    if sampling.kind == "without-replacement" and relation == "add-remove":
        from dataclasses import replace

        extra = FIXED_SIZE_ADD_REMOVE_NOTE.format(q=fixed_size_add_remove_rate(sampling),
                                                  half=sigma / 2)
        rows = [replace(r, note=r.note + extra) for r in rows]
    delta = check_delta(delta)
    note = sampling.accounting_note(sigma, relation)
    return AccountingResult(
        noise_multiplier=sigma,
        sampling=sampling,
        relation=relation,
        delta=delta,
        event=repr(event),
        note=note,
        rows=tuple(rows),
        rtol=rtol,
        dp_event=event,
    )


def _hidden_shuffle_row(row: AccountantRow) -> AccountantRow:
    """A row of the per-epoch composition read for a hidden shuffle: every value is an
    upper bound on the shuffle's epsilon (amplification by shuffling ignored), none a
    lower bound (an exact or optimistic value is exact only for a known order)."""
    from dataclasses import replace

    if row.bound == "exact":
        return replace(row, bound="upper", note=row.note + " For a hidden shuffle only an "
                       "upper bound (exact for a pass order the adversary knows: "
                       "fixed-order).")
    if row.bound == "lower" and row.epsilon is not None:
        return replace(row, bound="model", note=row.note + " Not a lower bound for a hidden "
                       "shuffle: it bounds the per-epoch composition, exact only for a known "
                       "order (fixed-order).")
    return row


#: A folder where :func:`account_event` and :func:`calibrate_noise_multiplier` keep their
#: results across processes, and the PLD epsilons beneath them (unset: nothing is kept).
#: The test suite sets one per session, so the smoke audits that repeat the same
#: accountings (the DP-SEP Prop. 2 calibrations, the privacy-number catalogue) compute
#: each once.
MEMO_ENV = "DPCLAIMS_ACCOUNTING_MEMO"


@functools.cache
def _memo_salt() -> str:
    """What a memoised result depends on besides the arguments: this module's source and
    the versions of the accounting libraries."""
    from dpclaims import fingerprint

    return fingerprint(("analysis/accounting.py",),
                       ("dp-accounting", "autodp", "numpy", "scipy"))


def _memoised(fn):
    """``fn`` with its results kept in ``$DPCLAIMS_ACCOUNTING_MEMO`` (when set), keyed by
    the ``repr`` of its arguments (exact for floats, dataclasses and dp_accounting's
    events), the grid cap :data:`MAX_PLD_POINTS` and :func:`_memo_salt`. A result is
    written atomically; a folder that cannot be read or written only costs the
    computation. An exception is never kept."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        root = os.environ.get(MEMO_ENV)
        if not root:
            return fn(*args, **kwargs)
        key = hashlib.sha256(repr((fn.__qualname__, args, sorted(kwargs.items()),
                                   MAX_PLD_POINTS, _memo_salt())).encode()).hexdigest()
        path = os.path.join(root, f"{fn.__name__}-{key}.pickle")
        try:
            with open(path, "rb") as fh:
                return pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError):
            pass
        out = fn(*args, **kwargs)
        try:
            os.makedirs(root, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                pickle.dump(out, fh)
            os.replace(tmp, path)
        except OSError:
            pass
        return out

    return wrapper


def _wanted_accountants(accountants: tuple[str, ...] | None) -> set[str]:
    """The names of the rows :func:`account_event` computes.

    Parameters
    ----------
    accountants : tuple of str or None
        Names from :data:`ACCOUNTANTS` and :data:`PURE_DP_ACCOUNTANT`; None: all.

    Returns
    -------
    set of str
        The names asked for.

    Raises
    ------
    ValueError
        On an empty tuple or an unknown name.
    """
    names = (*ACCOUNTANTS, PURE_DP_ACCOUNTANT)
    if accountants is not None:
        unknown = [a for a in accountants if a not in names]
        if unknown or not accountants:
            raise ValueError(f"accountants must be a non-empty tuple of names from {names}, "
                             f"got {accountants!r}")
    return set(names if accountants is None else accountants)


def _dpa_rdp_row(event, delta: float, relation: str, needs_delta: str):
    """dp_accounting's RDP row of an event, and its accountant for the moments row.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The event, multipliers relative to the sensitivity under ``relation``.
    delta : float
        Target delta in [0, 1).
    relation : str
        Neighbouring relation.
    needs_delta : str
        The row's note when ``delta = 0``.

    Returns
    -------
    tuple
        (row, accountant, reason): the ``dp_accounting-rdp`` row; the composed
        ``RdpAccountant``, or None when unsupported or out of range; and why not
        ("" when it is there).
    """
    rdp_reason = ""
    rdp_row = None
    try:
        rdp_accountant = _dpa_rdp_accountant(event, relation)
    except _Unsupported as exc:
        rdp_accountant, rdp_reason = None, exc.reason
    except OUT_OF_RANGE as exc:
        rdp_reason = _out_of_range("dp_accounting's RDP", exc)
        rdp_accountant, rdp_row = None, AccountantRow("dp_accounting-rdp", None, rdp_reason)
    if delta > 0 and rdp_accountant is not None:
        try:
            eps, order = rdp_accountant.get_epsilon_and_optimal_order(delta)
        except OUT_OF_RANGE as exc:
            rdp_reason = _out_of_range("dp_accounting's RDP", exc)
            rdp_accountant, rdp_row = None, AccountantRow("dp_accounting-rdp", None, rdp_reason)
    if rdp_row is None:
        if rdp_accountant is None:
            rdp_row = AccountantRow("dp_accounting-rdp", None, f"unsupported: {rdp_reason}")
        elif delta == 0:
            rdp_row = AccountantRow("dp_accounting-rdp", None, needs_delta)
        else:
            rdp_row = AccountantRow(
                "dp_accounting-rdp",
                float(eps),
                "dp_accounting RdpAccountant "
                f"({_DPA_RELATION[relation].name}), default orders 1.1..1024; "
                f"{_rdp_bound_text(event)}; (eps, delta) by Canonne-Kamath-Steinke 2020 "
                "Prop. 12.",
                {"optimal_order": float(order)},
            )
    return rdp_row, rdp_accountant, rdp_reason


@_memoised
def account_event(
    event: dp_accounting.DpEvent,
    delta: float,
    relation: str = "replace-one",
    *,
    rtol: float = 0.05,
    pld_initial_interval: float = 1e-3,
    pld_max_refinements: int = 6,
    pld_rtol: float = 0.01,
    query: str = "clipped-sum",
    lower_bound: bool = True,
    accountants: tuple[str, ...] | None = None,
) -> AccountingResult:
    """Epsilon of any ``dp_accounting.DpEvent`` by every accountant, side by side.

    The event is taken as given (e.g. a mechanism's claimed ``dp_event``): noise
    multipliers relative to the sensitivity under ``relation`` (module notes;
    a ``LaplaceDpEvent``'s multiplier is its scale over the L1 sensitivity).
    Rows and tolerances as in :func:`account`; ``noise_multiplier`` and
    ``sampling`` of the result are None.

    Pure differential privacy (``delta = 0``) is accepted. The RDP, PLD and
    moments-accountant rows then say that they need delta > 0 (epsilon None:
    their conversions to (epsilon, delta) give a finite epsilon only for
    delta > 0); the analytic Gaussian row gives epsilon = inf for a Gaussian
    (exact: no Gaussian mechanism is pure DP). A further row,
    ``pure-dp-composition``, appears when ``delta = 0`` or the event contains a
    ``LaplaceDpEvent``: the basic composition of the events' pure epsilons
    (a Laplace event with multiplier b is (1 / b)-DP; a Gaussian has none:
    inf). It is exact at delta = 0 for compositions of Laplace events (each
    privacy loss attains its bound 1 / b on a half-line, jointly with positive
    probability) and an upper bound at delta > 0; unsupported for sampled
    events.

    ``query`` says what the noised query is: ``"clipped-sum"`` (a sum of per-record
    contributions clipped to a ball, DP-SGD's; the default) or ``"general"`` (any query
    with the event's sensitivity, e.g. a user's mechanism). It matters only for Poisson
    sampling under replace-one, where dp_accounting's PLD models the clipped sum; for a
    general query that row is marked ``bound="model"`` and is not used as a bound.

    ``lower_bound=False`` leaves out the optimistic PLD (its row says "not computed"):
    :func:`account` does so for a hidden shuffle, where the optimistic PLD of the
    per-epoch composition is no lower bound, and it costs as much as the pessimistic one.

    ``accountants`` (a tuple of names from :data:`ACCOUNTANTS` and
    :data:`PURE_DP_ACCOUNTANT`; None, the default: all) computes only those rows, in the
    usual order; the others are left out (not "unsupported": not asked). The PLD rows
    cost seconds where the RDP rows cost milliseconds.

    Raises
    ------
    TypeError
        ``event`` is not a ``dp_accounting.DpEvent``.
    ValueError
        delta outside [0, 1), an unknown relation, query or accountant name, bad
        tolerances.
    """
    if not isinstance(event, dp_accounting.DpEvent):
        raise TypeError(f"event must be a dp_accounting.DpEvent, got {event!r}")
    delta = check_delta(delta)
    _check_relation(relation)
    if query not in ("clipped-sum", "general"):
        raise ValueError(f"query must be 'clipped-sum' or 'general', got {query!r}")
    rtol = check_positive(rtol, "rtol")
    refinement = _check_refinement(pld_initial_interval, pld_max_refinements, pld_rtol)
    wanted = _wanted_accountants(accountants)

    needs_delta = "needs delta > 0: its conversion to (epsilon, delta) is finite only then"
    rdp_row, rdp_accountant, rdp_reason = _dpa_rdp_row(event, delta, relation, needs_delta)
    rows = [rdp_row]
    if delta == 0:
        rows.append(AccountantRow("dp_accounting-pld", None, needs_delta))
        rows.append(AccountantRow("dp_accounting-pld-optimistic", None, needs_delta,
                                  bound="lower"))
        rows.append(AccountantRow("autodp-rdp", None, needs_delta))
        rows.append(AccountantRow("moments-accountant", None, needs_delta))
    else:
        if wanted & {"dp_accounting-pld", "dp_accounting-pld-optimistic"}:
            rows.extend(_pld_rows(event, delta, relation, refinement, query,
                                  lower_bound and "dp_accounting-pld-optimistic" in wanted))
        if "autodp-rdp" in wanted:
            rows.append(_guarded("autodp-rdp", "autodp", _autodp_row, event, delta, relation))
        rows.append(_guarded("moments-accountant", "the moments accountant", _moments_row,
                             rdp_accountant, rdp_reason, delta))
    rows.append(_guarded("analytic-gaussian", "the analytic Gaussian", _analytic_row, event,
                         delta, bound="exact"))
    if delta == 0 or _event_contains(event, dp_accounting.LaplaceDpEvent):
        rows.append(_guarded(PURE_DP_ACCOUNTANT, "basic composition", _pure_dp_row, event,
                             delta))
    rows = [r for r in rows if r.name in wanted]  # the RDP row is cheap and feeds the moments row

    return AccountingResult(
        noise_multiplier=None,
        sampling=None,
        relation=relation,
        delta=delta,
        event=repr(event),
        note=f"The DpEvent {event!r} as given, under {relation}.",
        rows=tuple(rows),
        rtol=rtol,
        dp_event=event,
    )


PURE_DP_ACCOUNTANT = "pure-dp-composition"


def _guarded(name: str, library: str, row, *args, bound: str = "upper") -> AccountantRow:
    """``row(*args)``, or a "not computed" row when its arithmetic leaves double precision
    (:data:`OUT_OF_RANGE`)."""
    try:
        return row(*args)
    except OUT_OF_RANGE as exc:
        return AccountantRow(name, None, _out_of_range(library, exc),
                             bound="upper" if bound == "exact" else bound)

# Accountants that claim tightness (exact, or exact up to a stated discretisation):
# their disagreement is a warning sign; RDP rows are upper bounds and the moments
# accountant's conversion is looser by design (AccountingResult.tight_disagreement).
TIGHT_ACCOUNTANTS = ("dp_accounting-pld", "analytic-gaussian")


def pure_dp_epsilon(event: dp_accounting.DpEvent) -> float | None:
    """Basic composition of the pure epsilons of ``event``'s parts (nats), or None.

    ``LaplaceDpEvent(b)``: 1 / b. ``GaussianDpEvent``: inf. ``NoOpDpEvent``: 0.
    Self-composition multiplies, composition adds. None for anything else
    (sampling, events without a pure-DP guarantee known here).
    """
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return 1.0 / event.noise_multiplier if event.noise_multiplier > 0 else math.inf
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return math.inf
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return 0.0
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        inner = pure_dp_epsilon(event.event)
        return None if inner is None else inner * event.count
    if isinstance(event, dp_accounting.ComposedDpEvent):
        parts = [pure_dp_epsilon(e) for e in event.events]
        return None if any(p is None for p in parts) else float(sum(parts))
    return None


def _pure_dp_row(event, delta) -> AccountantRow:
    eps = pure_dp_epsilon(event)
    if eps is None:
        return AccountantRow(PURE_DP_ACCOUNTANT, None,
                             "unsupported: the event contains sampling or a part without a "
                             "pure-DP epsilon known here")
    if delta == 0:
        note = ("exact at delta = 0: basic composition of pure epsilons (Laplace: 1 / noise "
                "multiplier; a Gaussian has none, epsilon = inf), attained jointly with "
                "positive probability")
    else:
        note = ("upper bound: basic composition of pure epsilons (Laplace: 1 / noise "
                "multiplier); at delta > 0 the PLD and RDP rows are tighter")
    return AccountantRow(PURE_DP_ACCOUNTANT, float(eps), note, {"exact": delta == 0},
                         bound="exact" if delta == 0 else "upper")


def composed_gaussian_sigma(epsilon: float, delta: float, releases: int) -> float:
    """Noise multiplier sigma making ``releases`` Gaussian releases exactly (eps, delta)-DP.

    T adaptive Gaussian mechanisms of L2 sensitivity Delta and noise std sigma Delta
    compose to exactly sqrt(T)/sigma-GDP (Dong, Roth & Su 2022, Cor. 3.3), whose
    privacy curve is that of one Gaussian mechanism of multiplier sigma / sqrt(T); so
    sigma = sqrt(T) * sigma_1 with sigma_1 dp_accounting's exact one-release
    calibration (``get_sigma_gaussian``, bisection to ~1e-12 in epsilon). No
    amplification: the accounting of a full-batch algorithm run T times, or of a
    record touched once per epoch in a pass whose order is known.

    Raises
    ------
    ValueError
        epsilon <= 0, delta outside (0, 1) (delta = 0 has no finite sigma), releases < 1.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise ValueError("delta must be > 0 for the Gaussian mechanism, got 0")
    releases = check_count(releases, "releases")
    return float(math.sqrt(releases) * dp_accounting.get_sigma_gaussian(epsilon, delta))


@_memoised
def calibrate_noise_multiplier(
    target_epsilon: float,
    delta: float,
    sampling: Sampling,
    relation: str = "replace-one",
    accountant: str = "dp_accounting-rdp",
    tol: float = 1e-3,
    *,
    pld_initial_interval: float = 1e-3,
    pld_max_refinements: int = 6,
    pld_rtol: float = 0.01,
    bounds: tuple[float, float] = (1e-3, 1e4),
) -> float:
    """The smallest noise multiplier whose epsilon under ``accountant`` is <= the target.

    Bisection on log sigma: epsilon is non-increasing in sigma for every
    accountant here. A bracket is grown from sigma = 1 by factors of 2 within
    ``bounds``, then halved (geometrically) until ``hi / lo <= 1 + tol``; ``hi``
    is returned, so the result always meets the target and ``hi / (1 + tol)``
    does not. autodp's ``calibrator_zoo.eps_delta_calibrator`` is not used: it
    minimises ``|eps - target|`` with a bounded scalar search, so its answer may
    lie on either side of the target. With ``dp_accounting-rdp`` a step first tries the
    five orders of dp_accounting's grid around the last full evaluation's optimal order
    and skips the full grid when they meet the target (the same branch, so the same
    sigma to the bit; ``meets`` in the source says why; benchmarks/calibration_shortcut.py
    compares the two paths and docs/benchmarks.md gives the work saved, about 30 %).

    Parameters
    ----------
    target_epsilon : float
        > 0.
    delta : float
        In (0, 1); at delta = 0 no Gaussian mechanism has finite epsilon.
    sampling : Sampling
    relation : {"replace-one", "add-remove"}
    accountant : {"autodp-rdp", "dp_accounting-rdp", "dp_accounting-pld"}
        As in :func:`account`, with the same PLD refinement at every evaluation,
        so that :func:`account` with the same ``pld_*`` arguments reports an
        epsilon <= the target for the returned sigma (about ten times slower
        than the RDP accountants).
    tol : float, default 1e-3
        Relative tolerance on sigma, in (0, 1).
    pld_initial_interval, pld_max_refinements, pld_rtol
        As in :func:`account`.
    bounds : (float, float), default (1e-3, 1e4)
        Search range for sigma.

    Returns
    -------
    float
        sigma, relative to the sensitivity under ``relation`` (module notes).

    Raises
    ------
    ValueError
        Bad arguments (non-positive epsilon, delta outside (0, 1), unknown
        relation or accountant, tol outside (0, 1)); the accountant does not
        support this sampling under this relation (the message says why); the
        target cannot be met within ``bounds``; the accountant's arithmetic leaves
        double precision (:data:`OUT_OF_RANGE`) or, for the PLD, its grid would exceed
        :data:`MAX_PLD_POINTS` (the bound on work :func:`account` keeps too); for the
        PLD, a target above :data:`PLD_MAX_EPSILON`, where its epsilons are not
        trusted (every sigma whose epsilon lies above it reads as infinite, so a
        bisection would end near the sigma of epsilon = PLD_MAX_EPSILON, not at the
        target's: a valid but not the smallest sigma).

    References
    ----------
    As :func:`account`.
    """
    target = check_epsilon(target_epsilon, "target_epsilon")
    delta = check_delta(delta)
    if delta == 0:
        raise ValueError("delta must be > 0 to calibrate a Gaussian mechanism, got 0")
    _check_relation(relation)
    if accountant not in CALIBRATION_ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {CALIBRATION_ACCOUNTANTS}, got {accountant!r}")
    tol = check_positive(tol, "tol")
    if tol >= 1:
        raise ValueError(f"tol must lie in (0, 1), got {tol!r}")
    refinement = _check_refinement(pld_initial_interval, pld_max_refinements, pld_rtol)
    low_bound = check_positive(bounds[0], "bounds[0]")
    high_bound = check_positive(bounds[1], "bounds[1]")
    if not low_bound < 1.0 < high_bound:
        raise ValueError(f"bounds must satisfy bounds[0] < 1 < bounds[1], got {bounds!r}")
    if accountant == "dp_accounting-pld" and target > PLD_MAX_EPSILON:
        raise ValueError(f"target_epsilon {target!r} is above {PLD_MAX_EPSILON:g} (nats), "
                         "where dp_accounting's PLD is not trusted (PLD_MAX_EPSILON): "
                         "calibrate with an RDP accountant")

    def epsilon_at(sigma: float) -> float:
        try:
            return _epsilon_at(sigma)
        except OUT_OF_RANGE as exc:
            raise ValueError(f"{accountant} at noise_multiplier {sigma:.4g}: "
                             f"{_out_of_range(accountant, exc)}") from None

    # dp_accounting-rdp: the orders around the last full evaluation's optimal order, which
    # meets() tries first (meets and _rdp_order_shortcut_applies say why it is exact)
    near: list[np.ndarray] = []

    def _epsilon_at(sigma: float) -> float:
        event = _event_for(sigma, sampling, relation)
        if accountant == "dp_accounting-rdp":
            rdp = _dpa_rdp_accountant(event, relation)
            # the same compute_epsilon(orders, rdp, delta)[0] as rdp.get_epsilon(delta)
            eps, order = rdp.get_epsilon_and_optimal_order(delta)
            around = _orders_around(rdp.orders, order)
            near[:] = [around] if _worth_trying(event, around, rdp.orders) else []
        elif accountant == "autodp-rdp":
            eps = _autodp_epsilon(event, delta, relation)
        else:
            try:
                eps = _pld_refined(event, delta, relation, refinement)[0]
            except _PldOutOfRange:
                eps = math.inf  # far above any target calibrated to
            except _GridTooLarge as exc:
                raise ValueError(f"the PLD at noise_multiplier {sigma:.4g} would need {exc} "
                                 f"(more than {MAX_PLD_POINTS:,}): calibrate with an RDP "
                                 "accountant") from None
        eps = float(eps)
        return math.inf if math.isnan(eps) else eps

    try:
        eps_one = epsilon_at(1.0)
    except _Unsupported as exc:
        raise ValueError(
            f"accountant {accountant!r} does not support sampling {sampling.kind!r} under "
            f"{relation}: {exc.reason}"
        ) from None
    shortcut = (accountant == "dp_accounting-rdp" and _RDP_ORDER_SHORTCUT
                and _rdp_orders_independent(_event_for(1.0, sampling, relation)))

    def meets(sigma: float) -> tuple[bool, float | None]:
        """Whether epsilon_at(sigma) <= target, and epsilon_at(sigma) (None when the
        orders around the last optimum decided it without the full evaluation).

        Exact: dp_accounting's RDP epsilon is max(0, min over the grid's orders of a
        conversion of that order alone) (rdp_privacy_accountant.compute_epsilon), and
        for the events _rdp_orders_independent admits each order's RDP is computed from
        that order alone (_compute_rdp_poisson_subsampled_gaussian and
        _compute_rdp_sample_wor_gaussian map each order through a scalar function;
        RdpAccountant._maybe_compose adds count * that array elementwise), so the same
        order gives the same float on any grid. The epsilon over a subset of the grid is
        then >= the full grid's, and a subset epsilon <= target means
        epsilon_at(sigma) <= target: the same branch as the full evaluation, which is
        skipped. A subset epsilon above the target decides nothing; the full evaluation
        runs (and updates the orders tried next). _rdp_order_shortcut_applies states the
        one further condition (no other order NaN or raising).
        """
        if shortcut and near and _rdp_order_shortcut_applies(sigma):
            eps_near = _rdp_epsilon_on_orders(_event_for(sigma, sampling, relation),
                                              relation, delta, near[0])
            if eps_near is not None and eps_near <= target:
                return True, None
        eps = epsilon_at(sigma)
        return eps <= target, eps

    if eps_one <= target:
        hi, lo = 1.0, max(0.5, low_bound)
        while meets(lo)[0]:
            if lo <= low_bound:
                raise ValueError(
                    f"target_epsilon {target!r} is met already at noise_multiplier "
                    f"{lo!r} (bounds[0]); widen bounds"
                )
            hi, lo = lo, max(lo / 2, low_bound)
    else:
        lo, hi = 1.0, min(2.0, high_bound)
        while not (m_hi := meets(hi))[0]:
            e_hi = m_hi[1]
            if hi >= high_bound:
                raise ValueError(
                    f"target_epsilon {target!r} is not met even at noise_multiplier "
                    f"{hi!r} (bounds[1]); epsilon there is {e_hi!r}"
                )
            lo, hi = hi, min(hi * 2, high_bound)
    while hi / lo > 1 + tol:
        mid = math.sqrt(lo * hi)
        if meets(mid)[0]:
            hi = mid
        else:
            lo = mid
    return hi


# --------------------------------------------------------------------------- internals


class _Unsupported(Exception):
    """An accountant cannot account this event under this relation; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _check_refinement(
    initial: float, max_refinements: int, rtol: float
) -> tuple[float, int, float]:
    return (
        check_positive(initial, "pld_initial_interval"),
        check_count(max_refinements, "pld_max_refinements", minimum=0),
        check_positive(rtol, "pld_rtol"),
    )


def _check_relation(relation: str) -> None:
    check_relation(relation)


def _library_reason(exc: Exception) -> str:
    """The short error message inside a dp_accounting UnsupportedEventError."""
    text = str(exc)
    match = re.search(r"Error: \[(.*)\] caused by subevent (\w+)", text, flags=re.S)
    if match:
        return f"{match.group(1)} (subevent {match.group(2)})"
    return text


def _dpa_rdp_accountant(event: dp_accounting.DpEvent, relation: str) -> RdpAccountant:
    accountant = RdpAccountant(neighboring_relation=_DPA_RELATION[relation])
    try:
        accountant.compose(event)
    except dp_accounting.UnsupportedEventError as exc:
        raise _Unsupported(f"dp_accounting RdpAccountant: {_library_reason(exc)}") from None
    return accountant


#: calibrate_noise_multiplier with dp_accounting-rdp tries the orders around the last
#: optimal order before the full grid (:func:`_rdp_epsilon_on_orders`); the sigma it
#: returns is the same either way. False: every evaluation on the full grid (the
#: comparison in benchmarks/calibration_shortcut.py).
_RDP_ORDER_SHORTCUT = True

#: How many orders of dp_accounting's default grid on each side of the last optimal order
#: the shortcut tries.
_SHORTCUT_HALF_WIDTH = 2

#: The noise multipliers at which the shortcut is tried (outside, every evaluation is
#: full): _rdp_order_shortcut_applies says why.
_SHORTCUT_SIGMA_RANGE = (1e-100, 1e4)

#: Sampling without replacement: the shortcut is tried only while the orders it tries
#: cost at most this fraction of the full grid (:func:`_worth_trying`).
_SHORTCUT_MAX_WOR_WORK = 0.25


def _orders_around(orders: np.ndarray, order: float) -> np.ndarray:
    """The orders of ``orders`` (1-d float array, a grid) within _SHORTCUT_HALF_WIDTH
    places of ``order``, one of them (dp_accounting's optimal order), as a new array of
    the same dtype."""
    i = int(np.flatnonzero(orders == order)[0])
    return np.array(orders[max(0, i - _SHORTCUT_HALF_WIDTH):i + _SHORTCUT_HALF_WIDTH + 1])


def _wor_work(orders: np.ndarray) -> float:
    """Roughly the operations dp_accounting 0.6 spends on the sampled-without-replacement
    RDP at ``orders``: O(alpha^2) forward differences up to order 256, for a fractional
    order at its floor and its ceiling; O(alpha) above (Stirling)."""
    def one(a: float) -> float:
        if a > 256:
            return a
        if float(a).is_integer():
            return a * a / 2
        return (math.floor(a) ** 2 + math.ceil(a) ** 2) / 2
    return sum(one(float(a)) for a in orders)


def _worth_trying(event: dp_accounting.DpEvent, around: np.ndarray,
                  grid: np.ndarray) -> bool:
    """Whether the shortcut's orders ``around`` cost little beside the full ``grid``:
    always, except for sampling without replacement with an optimal order of 63 or more,
    where the orders around it cost 40-50 % of the grid (:func:`_wor_work`) and a try
    that decides nothing (every step that raises the bracket's low end) would cost more
    than the skips save. Only the work depends on this; the sigma returned does not."""
    if not _event_contains(event, dp_accounting.SampledWithoutReplacementDpEvent):
        return True
    return _wor_work(around) <= _SHORTCUT_MAX_WOR_WORK * _wor_work(grid)


def _rdp_orders_independent(event: dp_accounting.DpEvent) -> bool:
    """Whether dp_accounting's RdpAccountant computes each order's RDP of ``event`` from
    that order alone: Gaussian, Poisson-sampled and sampled-without-replacement Gaussian
    events and their compositions (dp_accounting 0.6 rdp_privacy_accountant: each maps
    the grid through a per-order scalar function and adds count times it elementwise).
    Not, e.g., RepeatAndSelectDpEvent, whose RDP at one order uses the others."""
    leaves = (dp_accounting.GaussianDpEvent, dp_accounting.PoissonSampledDpEvent,
              dp_accounting.SampledWithoutReplacementDpEvent)
    if isinstance(event, leaves):
        return True
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _rdp_orders_independent(event.event)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return all(_rdp_orders_independent(e) for e in event.events)
    return False


def _rdp_order_shortcut_applies(sigma: float) -> bool:
    """Whether calibrate_noise_multiplier may skip the full evaluation at ``sigma`` when
    the orders around the last optimum meet the target.

    A subset of the orders bounds the full grid's epsilon from above only when no order
    outside it gives NaN (compute_epsilon's argmin returns the first NaN, which the
    calibration reads as inf) or raises (under numpy's default error handling). In
    dp_accounting 0.6 a NaN needs inf - inf in log space, i.e. (i^2 - i) / (2 sigma^2)
    or x (x + 1) / (2 sigma^2) overflowing: sigma below about 1e-150 at order 1024. An
    exception at some orders but not others: only the ValueError of math.log1p(-1.0) in
    _log_sub_sign, in the without-replacement forward differences of exp(cgf), which
    needs two neighbouring log-magnitudes in (-0.5, 0.5) within 2^-54 of each other.
    The first differences are >= 1 / sigma^2 apart in log (>= 1e-8 up to sigma = 1e4)
    and every k-th difference of exp(cgf) increases in its index (cgf a polynomial with
    positive coefficients); that is not a proof in floating point, so
    benchmarks/calibration_shortcut.py compares calibrations both ways. Hence the
    range _SHORTCUT_SIGMA_RANGE, whose upper end is the default bounds' upper end.
    """
    return _SHORTCUT_SIGMA_RANGE[0] <= sigma <= _SHORTCUT_SIGMA_RANGE[1]


def _rdp_epsilon_on_orders(event: dp_accounting.DpEvent, relation: str, delta: float,
                           orders: np.ndarray) -> float | None:
    """dp_accounting's RDP epsilon of ``event`` at ``delta`` over ``orders`` only (a
    float array taken from its default grid), or None when it is NaN or the library
    raises (the caller then evaluates the full grid, which decides as it always did)."""
    accountant = RdpAccountant(orders=orders, neighboring_relation=_DPA_RELATION[relation])
    try:
        accountant.compose(event)
        eps = float(accountant.get_epsilon(delta))
    except (*OUT_OF_RANGE, ValueError, dp_accounting.UnsupportedEventError):
        return None
    return None if math.isnan(eps) else eps


def _event_contains(event: dp_accounting.DpEvent, kind: type) -> bool:
    if isinstance(event, kind):
        return True
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _event_contains(event.event, kind)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return any(_event_contains(e, kind) for e in event.events)
    sampled = (dp_accounting.PoissonSampledDpEvent, dp_accounting.SampledWithoutReplacementDpEvent)
    if isinstance(event, sampled):
        return _event_contains(event.event, kind)
    return False


def _rdp_bound_text(event: dp_accounting.DpEvent) -> str:
    parts = ["Gaussian RDP alpha/(2 sigma^2)"]
    if _event_contains(event, dp_accounting.PoissonSampledDpEvent):
        parts.append("Poisson-sampled Gaussian by Mironov-Talwar-Zhang 2019 (add-remove)")
    if _event_contains(event, dp_accounting.SampledWithoutReplacementDpEvent):
        parts.append(
            "sampling without replacement by Wang-Balle-Kasiviswanathan 2019 Thm. 27 (replace-one)"
        )
    return ", ".join(parts)


def _scale_gaussian_noise(event: dp_accounting.DpEvent, factor: float) -> dp_accounting.DpEvent:
    """``event`` with every Gaussian noise multiplier multiplied by ``factor``."""
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return dp_accounting.GaussianDpEvent(event.noise_multiplier * factor)
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return dp_accounting.SelfComposedDpEvent(
            _scale_gaussian_noise(event.event, factor), event.count
        )
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return dp_accounting.ComposedDpEvent(
            [_scale_gaussian_noise(e, factor) for e in event.events]
        )
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        return dp_accounting.PoissonSampledDpEvent(
            event.sampling_probability, _scale_gaussian_noise(event.event, factor)
        )
    if isinstance(event, dp_accounting.SampledWithoutReplacementDpEvent):
        return dp_accounting.SampledWithoutReplacementDpEvent(
            event.source_dataset_size, event.sample_size, _scale_gaussian_noise(event.event, factor)
        )
    raise _Unsupported(
        f"cannot translate {type(event).__name__} to dp_accounting's PLD replace-one convention"
    )


class _GridTooLarge(Exception):
    """A PLD at this interval would need more than MAX_PLD_POINTS grid points."""

    def __init__(self, points: float):
        super().__init__(f"{points:.3g} grid points")
        self.points = points


# Tail mass of the privacy loss left out by dp_accounting's Gaussian PLD
# (log_mass_truncation_bound = -50: |x| beyond about 10 noise std), and the Chernoff
# width its self-composition keeps (tail_mass_truncation = 1e-15): in noise std.
_Z_SINGLE, _Z_COMPOSED = 10.0, 8.5
# dp_accounting's self-composition adds its truncated tail mass (1e-15 a call) to the
# mass at infinity even when the estimate is optimistic; the optimistic epsilon is read
# at delta + this slack a call so that it stays a lower bound (module notes).
_OPTIMISTIC_SLACK = 1e-15


@functools.lru_cache(maxsize=256)
def _sampled_gaussian_composed_width(sigma: float, q: float, count: int,
                                     single: float) -> float:
    """The range of the composed privacy loss of ``count`` Poisson-sampled Gaussians that
    dp_accounting's self-composition keeps (nats): its Chernoff truncation bounds
    (``common.compute_self_convolve_bounds``: tail mass 1e-15, orders j / range for j = 1
    .. 20), evaluated on the exact loss distribution by quadrature on a fine grid of the
    output, for the larger of the two directions. Used only to size a PLD grid (three
    times per PLD row, hence cached: a pure function of its arguments)."""
    from scipy.special import logsumexp

    x = np.linspace(-_Z_SINGLE * sigma, 1 + _Z_SINGLE * sigma, 20_001)
    log_q0 = -0.5 * (x / sigma) ** 2
    log_q1 = -0.5 * ((x - 1) / sigma) ** 2
    log_mix = np.logaddexp(np.log1p(-q) + log_q0, np.log(q) + log_q1) if q < 1 else log_q1
    orders = np.arange(1, 21) / max(single, 1e-12)
    log_tail = math.log(2 / 1e-15)
    widths = []
    for log_p, log_other in ((log_mix, log_q0), (log_q0, log_mix)):
        loss = log_p - log_other
        log_w = log_p - logsumexp(log_p)
        up = min((count * logsumexp(log_w + t * loss) + log_tail) / t for t in orders)
        down = max(-(count * logsumexp(log_w - t * loss) + log_tail) / t for t in orders)
        lo, hi = count * float(loss.min()), count * float(loss.max())
        widths.append(min(up, hi) - max(down, lo))
    return max(widths)


def _pld_width(event: dp_accounting.DpEvent, count: int = 1) -> float:
    """The range of the composed privacy loss a PLD of ``event`` spans (in nats, an
    estimate from above for sizing the grid; multipliers relative to the sensitivity)."""
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _pld_width(event.event, count * event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return float(sum(_pld_width(e, count) for e in event.events))
    if isinstance(event, dp_accounting.GaussianDpEvent):
        s = event.noise_multiplier / math.sqrt(count)  # composed as one Gaussian
        return (1 + 2 * _Z_SINGLE * s) / s**2
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        b = event.noise_multiplier
        return 2 / b + 2 * _Z_COMPOSED * math.sqrt(count) / b
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        inner = event.event
        if isinstance(inner, dp_accounting.GaussianDpEvent):
            sigma, q = inner.noise_multiplier, event.sampling_probability
            top = (1 + 2 * _Z_SINGLE * sigma) / (2 * sigma**2)  # unsampled loss at the edge
            if q >= 1:
                single = 2 * top
            else:  # the sampled loss log(1 - q + q exp(L)) over L in [-top, top]
                single = float(np.logaddexp(math.log1p(-q), math.log(q) + top)
                               - np.logaddexp(math.log1p(-q), math.log(q) - top))
            if count == 1:
                return single
            # x 1.5: dp_accounting's PMFs of the two directions measured up to 1.44 x this
            return max(single, 1.5 * _sampled_gaussian_composed_width(sigma, q, count, single))
        if isinstance(inner, dp_accounting.LaplaceDpEvent):
            b = inner.noise_multiplier
            return 2 / b + 2 * _Z_COMPOSED * math.sqrt(count) / b
    return 0.0


def _pld_leaf_width(event: dp_accounting.DpEvent, count: int = 1) -> float:
    """The smallest range of one part's privacy loss before composition (nats): a PLD
    whose interval leaves it a handful of grid points is meaningless, and dp_accounting
    composes a one-point PMF by a Python loop over the composition count."""
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _pld_leaf_width(event.event, count * event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        widths = [_pld_leaf_width(e, count) for e in event.events]
        return min(widths) if widths else 0.0
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return _pld_width(event, count)  # composed as one Gaussian
    return _pld_width(event, 1)


def _max_count(event: dp_accounting.DpEvent, count: int = 1) -> int:
    """The largest self-composition count of any part of ``event``."""
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _max_count(event.event, count * event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return max((_max_count(e, count) for e in event.events), default=count)
    return count


# dp_accounting keeps a PMF of at most 1000 points sparse, and before self-composing it
# computes size ** count as an exact integer: for a count of 10^9 that never ends. A
# grid leaves every part at least this many points when the count is large (dense).
_MIN_LEAF_POINTS = 2048


def _sparse_hazard(event: dp_accounting.DpEvent, interval: float) -> bool:
    """True when a part of ``event`` would be a sparse PMF self-composed so many times
    that dp_accounting's size ** count (about count x log2(size) bits) is out of reach."""
    width = _pld_leaf_width(event)
    if width <= 0:  # an event the PLD does not support: it says so itself
        return False
    points = width / interval + 1
    return points <= 1000 and _max_count(event) * math.log2(max(points, 2.0)) > 1e6


def _dense_if_sparse(event: dp_accounting.DpEvent, interval: float) -> float:
    """``interval``, or the finer one that leaves every part :data:`_MIN_LEAF_POINTS`
    points where ``interval`` is a :func:`_sparse_hazard` (the caller checks the cap)."""
    if _sparse_hazard(event, interval):
        return min(interval, _pld_leaf_width(event) / _MIN_LEAF_POINTS)
    return interval


def _check_grid(event: dp_accounting.DpEvent, interval: float) -> float:
    """Grid points of the PLD of ``event`` at ``interval``; _GridTooLarge above the cap
    or where dp_accounting's sparse composition would not end (:func:`_sparse_hazard`)."""
    points = _pld_width(event) / interval
    if points > MAX_PLD_POINTS:
        raise _GridTooLarge(points)
    if _sparse_hazard(event, interval):
        raise _GridTooLarge(_pld_width(event) / (_pld_leaf_width(event) / _MIN_LEAF_POINTS))
    return points


# Above this epsilon (nats) dp_accounting's PLD is not trusted: its hockey-stick
# arithmetic takes exp of the privacy loss, which leaves float64's range near 709, and
# its values were seen on the wrong side of the exact Gaussian's (770.5 optimistic against
# an exact 769.6). Such a row is reported as not computed; the RDP rows still bound it.
PLD_MAX_EPSILON = 500.0


class _PldOutOfRange(Exception):
    """A PLD epsilon above PLD_MAX_EPSILON."""


def _pld_epsilon(
    event: dp_accounting.DpEvent, delta: float, relation: str, interval: float
) -> float:
    """dp_accounting PLD epsilon at one interval (pessimistic connect-the-dots: an upper
    bound), in this module's sigma convention. _GridTooLarge above MAX_PLD_POINTS;
    _PldOutOfRange above PLD_MAX_EPSILON."""
    eps = _pessimistic_pld_value(event, delta, relation, interval)
    if eps > PLD_MAX_EPSILON:
        raise _PldOutOfRange(eps)
    return eps


# The two PLD readings are memoised (with MEMO_ENV set) beneath account_event and
# calibrate_noise_multiplier as well: the same event, delta, relation and interval recur
# under different calls of those (another accountant selection, another refinement
# path, another calibration's bracket), 10 of the test suite's 115 PLD CPU-s on
# 2026-11-28 (17 with the same event, relation and interval at any delta). What is kept
# is the float itself; PLD_MAX_EPSILON is applied after.
@_memoised
def _pessimistic_pld_value(
    event: dp_accounting.DpEvent, delta: float, relation: str, interval: float
) -> float:
    """The float :func:`_pld_epsilon` reads (before its PLD_MAX_EPSILON check)."""
    _check_grid(event, interval)
    if relation == "replace-one":
        event = _scale_gaussian_noise(event, 2.0)
    accountant = PLDAccountant(_DPA_RELATION[relation], value_discretization_interval=interval)
    try:
        accountant.compose(event)
    except dp_accounting.UnsupportedEventError as exc:
        raise _Unsupported(f"dp_accounting PLDAccountant: {_library_reason(exc)}") from None
    return float(accountant.get_epsilon(delta))


def _optimistic_pld(event, relation: str, interval: float, count: int = 1):
    """(PrivacyLossDistribution, self-compositions) of ``event`` with optimistic
    privacy-bucket discretisation: every privacy loss is rounded down, so every
    epsilon read from it is at most the true one (dp_accounting's own construction,
    ``pessimistic_estimate=False``, as its PLDAccountant composes each event)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    rel = _DPA_RELATION[relation]
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _optimistic_pld(event.event, relation, interval, count * event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        out, calls = None, 0
        for e in event.events:
            part, k = _optimistic_pld(e, relation, interval, count)
            out = part if out is None else out.compose(part)
            calls += k
        if out is None:
            raise _Unsupported("an empty composition")
        return out, calls
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return pld_lib.from_gaussian_mechanism(
            event.noise_multiplier / math.sqrt(count), pessimistic_estimate=False,
            value_discretization_interval=interval, use_connect_dots=False,
            neighboring_relation=rel), 0
    laplace_ok = relation == "add-remove"
    if isinstance(event, dp_accounting.LaplaceDpEvent) and laplace_ok:
        return pld_lib.from_laplace_mechanism(
            event.noise_multiplier, pessimistic_estimate=False,
            value_discretization_interval=interval,
            use_connect_dots=False).self_compose(count), 1
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        inner, q = event.event, event.sampling_probability
        if isinstance(inner, dp_accounting.GaussianDpEvent):
            return pld_lib.from_gaussian_mechanism(
                inner.noise_multiplier, pessimistic_estimate=False,
                value_discretization_interval=interval, sampling_prob=q,
                use_connect_dots=False, neighboring_relation=rel).self_compose(count), 1
        if isinstance(inner, dp_accounting.LaplaceDpEvent) and laplace_ok:
            return pld_lib.from_laplace_mechanism(
                inner.noise_multiplier, pessimistic_estimate=False,
                value_discretization_interval=interval, sampling_prob=q,
                use_connect_dots=False).self_compose(count), 1
    raise _Unsupported(f"no optimistic PLD of {type(event).__name__} under {relation}")


def _optimistic_pld_epsilon(event, delta: float, relation: str, interval: float) -> float:
    """A certified lower bound on epsilon: the optimistic PLD at ``interval``, read at
    delta plus dp_accounting's truncation slack. _GridTooLarge above MAX_PLD_POINTS."""
    eps = _optimistic_pld_value(event, delta, relation, interval)
    if eps > PLD_MAX_EPSILON:
        raise _PldOutOfRange(eps)
    return eps


@_memoised
def _optimistic_pld_value(event, delta: float, relation: str, interval: float) -> float:
    """The float :func:`_optimistic_pld_epsilon` reads (before its PLD_MAX_EPSILON
    check); memoised as :func:`_pessimistic_pld_value`."""
    _check_grid(event, interval)
    if relation == "replace-one":
        event = _scale_gaussian_noise(event, 2.0)
    pld, calls = _optimistic_pld(event, relation, interval)
    return float(pld.get_epsilon_for_delta(min(delta + _OPTIMISTIC_SLACK * (calls + 1), 1.0)))


def _pld_refined(
    event: dp_accounting.DpEvent,
    delta: float,
    relation: str,
    refinement: tuple[float, int, float],
) -> tuple[float, list[list[float]], bool]:
    """Pessimistic PLD epsilon, halving the interval until it changes by < rtol, the cap
    on halvings is hit, or a finer grid would exceed MAX_PLD_POINTS.

    ``refinement`` is ``(initial interval, max halvings, rtol)``. An initial interval
    whose grid exceeds the cap is widened (doubled) until it fits: a coarser pessimistic
    PLD is still an upper bound. Returns the last epsilon, the ``[interval, epsilon]``
    history and whether it converged. _Unsupported as the accountant.
    """
    initial, max_refinements, rtol = refinement
    interval = initial
    width = _pld_width(event)
    while width / interval > MAX_PLD_POINTS:
        interval *= 2
    history: list[list[float]] = []
    for _ in range(max_refinements + 1):
        # a halving can make a part sparse-hazardous (more points, still <= 1000): jump
        # to the dense grid instead, or stop at the last interval computed
        interval = _dense_if_sparse(event, interval)
        if width / interval > MAX_PLD_POINTS:
            if history:
                break
            raise _GridTooLarge(width / interval)
        eps = _pld_epsilon(event, delta, relation, interval)
        history.append([interval, eps])
        if len(history) >= 2 and _relative_change(history[-2][1], eps) < rtol:
            return eps, history, True
        if width / (interval / 2) > MAX_PLD_POINTS:
            break
        interval /= 2
    return history[-1][1], history, False


def _pld_failed_rows(reason: str) -> list[AccountantRow]:
    """The pessimistic and optimistic PLD rows when the PLD could not be computed.

    Parameters
    ----------
    reason : str
        Why, as both rows' note.

    Returns
    -------
    list of AccountantRow
        The two rows, epsilon None.
    """
    return [AccountantRow("dp_accounting-pld", None, reason),
            AccountantRow("dp_accounting-pld-optimistic", None, reason, bound="lower")]


def _pld_status(event, eps: float, history: list, converged: bool, refinement) -> str:
    """How the PLD's discretisation interval was refined, for the row's note.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The event accounted.
    eps : float
        The final epsilon.
    history : list of [interval, epsilon]
        The refinement history (:func:`_pld_refined`).
    converged : bool
        Whether the refinement converged.
    refinement : tuple
        (initial interval, max refinements, rtol).

    Returns
    -------
    str
        One clause: widened, converged, or did not converge (and why).
    """
    initial, max_refinements, rtol = refinement
    final_interval = history[-1][0]
    refinements = len(history) - 1
    capped = _pld_width(event) / (final_interval / 2) > MAX_PLD_POINTS
    if final_interval > initial:
        status = (f"value_discretization_interval widened from {initial:g} to "
                  f"{final_interval:.3g}: a finer grid would need more than "
                  f"{MAX_PLD_POINTS:,} points; still a valid (pessimistic) upper bound")
    elif converged:
        status = (
            f"value_discretization_interval halved from {initial:g}: epsilon changed by "
            f"< {rtol:.0%} at {final_interval:.3g} after {refinements} halving(s)"
        )
    else:
        last = (
            f"; last change {_relative_change(history[-2][1], eps):.1%}"
            if len(history) >= 2
            else ""
        )
        why = (f"a finer grid would need more than {MAX_PLD_POINTS:,} points" if capped
               else f"within {max_refinements} halving(s) of {initial:g}")
        status = (
            f"value_discretization_interval {final_interval:.3g}: did NOT converge to "
            f"{rtol:.0%} ({why}){last}; the value is still a valid (pessimistic) upper "
            "bound"
        )
    return status


def _pld_rows(event, delta, relation, refinement, query: str,
              lower_bound: bool = True) -> list[AccountantRow]:
    """The pessimistic PLD row (an upper bound) and the optimistic one at the same final
    interval (a lower bound)."""
    try:
        eps, history, converged = _pld_refined(event, delta, relation, refinement)
    except _Unsupported as exc:
        return _pld_failed_rows(f"unsupported: {exc.reason}")
    except _PldOutOfRange as exc:
        return _pld_failed_rows(
            f"not computed: the PLD gives epsilon {exc.args[0]:.4g}, above "
            f"{PLD_MAX_EPSILON:g} nats, where dp_accounting's PLD arithmetic leaves "
            "float64's range (exp of the privacy loss); the other accountants bound it")
    except _GridTooLarge as exc:
        return _pld_failed_rows(
            f"not computed: a grid dp_accounting can compose this many times (one "
            f"step's privacy loss on {_MIN_LEAF_POINTS} points or more) would need "
            f"{exc} (more than {MAX_PLD_POINTS:,}); the other accountants bound it")
    except OUT_OF_RANGE as exc:
        # dp_accounting's own arithmetic fails for extreme events (e.g. sigma = 1e-6: a
        # privacy loss near 1 / (2 sigma^2) overflows exp); the other rows still bound it
        return _pld_failed_rows(
            f"not computed: dp_accounting's PLD failed on this event "
            f"({type(exc).__name__}: {exc}); the other accountants bound it")
    final_interval = history[-1][0]
    refinements = len(history) - 1
    status = _pld_status(event, eps, history, converged, refinement)
    note = (
        f"dp_accounting PLDAccountant ({_DPA_RELATION[relation].name}), pessimistic "
        f"connect-the-dots discretisation (an upper bound at every interval); {status}."
    )
    poisson_ro = (relation == "replace-one"
                  and _event_contains(event, dp_accounting.PoissonSampledDpEvent))
    if relation == "replace-one":
        note += (
            " dp_accounting's PLD reads the multiplier under REPLACE_ONE relative to the "
            "per-record bound Delta/2, so it was given 2 sigma"
        )
        if poisson_ro:
            note += (
                "; for Poisson sampling it assumes per-record contributions in a ball of "
                "radius Delta/2 around 0 (clipping), worst pair f(z) = -f(z')"
            )
        note += "."
    bound = "upper"
    if poisson_ro and query == "general":
        bound = "model"
        note += (" Not used as a bound: the query is not known to be a clipped sum, and for "
                 "a general query of sensitivity Delta under replace-one the ball model "
                 "need not dominate.")
    details = {
        "value_discretization_interval": final_interval,
        "refinements": refinements,
        "converged": converged,
        "history": history,
    }
    rows = [AccountantRow("dp_accounting-pld", eps, note, details, bound=bound)]
    if lower_bound:
        rows.append(_optimistic_row(event, delta, relation, final_interval))
    else:
        rows.append(AccountantRow("dp_accounting-pld-optimistic", None,
                                  "not computed: no lower bound is wanted here (a hidden "
                                  "shuffle: the optimistic PLD of the per-epoch composition "
                                  "bounds only a known order)", bound="lower"))
    return rows


def _optimistic_row(event, delta, relation, interval) -> AccountantRow:
    name = "dp_accounting-pld-optimistic"
    try:
        eps = _optimistic_pld_epsilon(event, delta, relation, interval)
    except _Unsupported as exc:
        return AccountantRow(name, None, f"unsupported: {exc.reason}", bound="lower")
    except OUT_OF_RANGE as exc:
        return AccountantRow(name, None, f"not computed: dp_accounting's PLD failed "
                             f"({type(exc).__name__}: {exc})", bound="lower")
    except _PldOutOfRange as exc:
        return AccountantRow(name, None, f"not computed: epsilon {exc.args[0]:.4g} is above "
                             f"{PLD_MAX_EPSILON:g} nats (dp_accounting's PLD out of range)",
                             bound="lower")
    except _GridTooLarge as exc:
        return AccountantRow(name, None, f"not computed: the grid would need {exc}",
                             bound="lower")
    note = (f"dp_accounting PLD with optimistic privacy-bucket discretisation "
            f"(pessimistic_estimate=False) at interval {interval:.3g}: every privacy loss "
            "rounded down, a certified lower bound on epsilon (loose by up to the number of "
            "compositions times the interval; refined only where a claim needs it).")
    return AccountantRow(name, eps, note, {"value_discretization_interval": interval},
                         bound="lower")


def refine_lower_bound(result: AccountingResult, target: float, *,
                       max_halvings: int = 12) -> AccountingResult:
    """``result`` with its optimistic PLD row refined until it exceeds ``target``.

    The optimistic PLD's lower bound is loose by up to (compositions x interval); a
    claim just below the true epsilon needs a fine interval to be refuted. The interval
    is halved from the row's until the lower bound exceeds ``target``, reaches the
    pessimistic PLD's value to within 0.1 %, ``max_halvings`` is used up, or a finer
    grid would exceed :data:`MAX_PLD_POINTS`. Every value on the way is a certified
    lower bound; the row's details record the history and why it stopped.

    Parameters
    ----------
    result : AccountingResult
        From :func:`account` or :func:`account_event` (it carries its event).
    target : float
        The value the lower bound is wanted above (a claim's largest reading).

    Returns
    -------
    AccountingResult
        The same rows, the optimistic row replaced (unchanged when it needs no work or
        cannot be refined).
    """
    names = [r.name for r in result.rows]
    if result.dp_event is None or "dp_accounting-pld-optimistic" not in names:
        return result
    k = names.index("dp_accounting-pld-optimistic")
    row = result.rows[k]
    if row.epsilon is None or row.epsilon > target:
        return result
    upper = next((r.epsilon for r in result.rows if r.name == "dp_accounting-pld"), None)
    interval = float(row.details.get("value_discretization_interval", 1e-3))
    history = [[interval, row.epsilon]]
    eps, why = row.epsilon, f"{max_halvings} halving(s) used"
    for _ in range(max_halvings):
        if upper is not None and eps >= upper * (1 - 1e-3):
            why = "within 0.1 % of the pessimistic PLD"
            break
        finer = _dense_if_sparse(result.dp_event, interval / 2)
        try:
            eps_next = _optimistic_pld_epsilon(result.dp_event, result.delta,
                                               result.relation, finer)
        except _GridTooLarge as exc:
            why = f"a finer grid would need {exc} (more than {MAX_PLD_POINTS:,})"
            break
        except OUT_OF_RANGE as exc:
            why = f"dp_accounting's PLD failed at a finer grid ({type(exc).__name__})"
            break
        except _PldOutOfRange:
            why = f"epsilon above {PLD_MAX_EPSILON:g} nats (dp_accounting's PLD out of range)"
            break
        interval = finer
        eps = max(eps, eps_next)
        history.append([interval, eps_next])
        if eps > target:
            why = f"above the target {target:.6g}"
            break
    note = (f"dp_accounting PLD with optimistic privacy-bucket discretisation "
            f"(pessimistic_estimate=False), refined to interval {interval:.3g} ({why}): "
            "every privacy loss rounded down, a certified lower bound on epsilon.")
    new = AccountantRow(row.name, eps, note, {"value_discretization_interval": interval,
                                              "history": history, "target": target,
                                              "stopped": why}, bound="lower")
    rows = list(result.rows)
    rows[k] = new
    return AccountingResult(noise_multiplier=result.noise_multiplier,
                            sampling=result.sampling, relation=result.relation,
                            delta=result.delta, event=result.event, note=result.note,
                            rows=tuple(rows), rtol=result.rtol, dp_event=result.dp_event)


def _autodp_mechanism(event: dp_accounting.DpEvent, relation: str):
    """Translate a DpEvent into an autodp Mechanism (raises _Unsupported)."""
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        # multiplier relative to the sensitivity under `relation`: the same curve under both
        mech = mechanism_zoo.LaplaceMechanism(b=event.noise_multiplier, name="Laplace")
        mech.neighboring = "replace_one" if relation == "replace-one" else "add_remove"
        return mech
    if isinstance(event, dp_accounting.GaussianDpEvent):
        mech = mechanism_zoo.GaussianMechanism(event.noise_multiplier, name="Gaussian")
        mech.neighboring = "replace_one" if relation == "replace-one" else "add_remove"
        return mech
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return transformer_zoo.Composition()(
            [_autodp_mechanism(event.event, relation)], [event.count]
        )
    if isinstance(event, dp_accounting.ComposedDpEvent):
        mechs = [_autodp_mechanism(e, relation) for e in event.events]
        return transformer_zoo.Composition()(mechs, [1] * len(mechs))
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        if relation != "add-remove":
            raise _Unsupported(
                "autodp's AmplificationBySampling(PoissonSampling=True) refuses a "
                "replace_one mechanism ('incompatible with Privacy Amplification by "
                "Poisson sampling')"
            )
        if not isinstance(event.event, dp_accounting.GaussianDpEvent):
            raise _Unsupported("autodp Poisson sampling is used here only for a Gaussian")
        base = _autodp_mechanism(event.event, relation)
        return transformer_zoo.AmplificationBySampling(PoissonSampling=True)(
            base, event.sampling_probability, improved_bound_flag=True
        )
    if isinstance(event, dp_accounting.SampledWithoutReplacementDpEvent):
        if relation != "replace-one":
            raise _Unsupported(
                "autodp's AmplificationBySampling(PoissonSampling=False) refuses an "
                "add_remove mechanism: sampling without replacement is analysed under "
                "replace-one (Wang-Balle-Kasiviswanathan 2019)"
            )
        if not isinstance(event.event, dp_accounting.GaussianDpEvent):
            raise _Unsupported("autodp subsampling is used here only for a Gaussian")
        base = _autodp_mechanism(event.event, relation)
        return transformer_zoo.AmplificationBySampling(PoissonSampling=False)(
            base, event.sample_size / event.source_dataset_size, improved_bound_flag=True
        )
    raise _Unsupported(f"no autodp translation of {type(event).__name__}")


#: autodp's epsilons computed in this process, keyed by the event's ``repr`` (exact for
#: floats), delta and the relation: a calibration's last evaluation is the epsilon the
#: accounting of the calibrated sigma asks for next (DP-SEP's Prop. 2 does both).
_AUTODP_SEEN: collections.OrderedDict = collections.OrderedDict()
_AUTODP_SEEN_MAX = 256


def _autodp_epsilon(event: dp_accounting.DpEvent, delta: float, relation: str) -> float:
    # Composition at the top keeps the answer RDP-based even for one Gaussian (a bare
    # GaussianMechanism would return its exact analytic epsilon). autodp's Brent search
    # emits harmless RuntimeWarnings (division by zero in the parabola step); they are
    # silenced here and nowhere else.
    key = (repr(event), repr(float(delta)), relation)
    if key in _AUTODP_SEEN:
        _AUTODP_SEEN.move_to_end(key)
        return _AUTODP_SEEN[key]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mech = transformer_zoo.Composition()([_autodp_mechanism(event, relation)], [1])
        eps = float(mech.get_approxDP(delta))
    _AUTODP_SEEN[key] = eps
    while len(_AUTODP_SEEN) > _AUTODP_SEEN_MAX:
        _AUTODP_SEEN.popitem(last=False)
    return eps


def _autodp_row(event, delta, relation) -> AccountantRow:
    try:
        eps = _autodp_epsilon(event, delta, relation)
    except _Unsupported as exc:
        return AccountantRow("autodp-rdp", None, f"unsupported: {exc.reason}")
    autodp_relation = "replace_one" if relation == "replace-one" else "add_remove"
    parts = [f"autodp RDP composition ({autodp_relation})"]
    if _event_contains(event, dp_accounting.PoissonSampledDpEvent):
        parts.append(
            "Poisson sampling by Zhu-Wang 2019 Thm. 8 (improved_bound_flag; integer orders, "
            "interpolated)"
        )
    if _event_contains(event, dp_accounting.SampledWithoutReplacementDpEvent):
        parts.append(
            "sampling without replacement by Wang-Balle-Kasiviswanathan 2019 "
            "Thm. 27 (improved_bound_flag)"
        )
    parts.append("(eps, delta) by Balle et al. 2020 Thm. 21, Brent search over real orders")
    return AccountantRow("autodp-rdp", eps, "; ".join(parts) + ".")


def _moments_row(rdp_accountant: RdpAccountant | None, reason: str, delta: float) -> AccountantRow:
    name = "moments-accountant"
    if rdp_accountant is None:
        return AccountantRow(name, None, f"unsupported: needs dp_accounting's RDP curve; {reason}")
    orders = rdp_accountant.orders
    rdp = rdp_accountant.rdp
    keep = (orders >= 2) & (orders == np.round(orders))
    lambdas = orders[keep] - 1
    if delta == 0:
        eps, best = math.inf, None
    else:
        bounds = (lambdas * rdp[keep] + math.log(1 / delta)) / lambdas
        i = int(np.argmin(bounds))
        eps, best = float(bounds[i]), float(lambdas[i])
    note = (
        "Abadi et al. 2016 Thm. 2 tail bound eps = min_lambda (alpha(lambda) + log(1/delta)) "
        "/ lambda, log moment alpha(lambda) = lambda * RDP(lambda + 1) from dp_accounting's "
        "RdpAccountant, integer lambda in {1..62, 127, 255, 511, 1023}; looser than the "
        "improved RDP conversions by design."
    )
    return AccountantRow(name, eps, note, {"optimal_lambda": best})


def _effective_gaussian_sigma(event: dp_accounting.DpEvent) -> float | None:
    """sigma of the one Gaussian equal to a composition of plain Gaussians, else None."""
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return event.noise_multiplier
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        inner = _effective_gaussian_sigma(event.event)
        return None if inner is None else inner / math.sqrt(event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        sigmas = [_effective_gaussian_sigma(e) for e in event.events]
        if any(s is None for s in sigmas):
            return None
        return sum(s**-2 for s in sigmas) ** -0.5
    return None


def _analytic_row(event, delta) -> AccountantRow:
    name = "analytic-gaussian"
    sigma = _effective_gaussian_sigma(event)
    if sigma is None:
        return AccountantRow(
            name,
            None,
            "unsupported: the event is not a composition of plain Gaussian mechanisms "
            "(it contains sampling or another mechanism), so it has no closed form here.",
        )
    if delta == 0:  # no Gaussian mechanism is pure DP: exactly inf
        eps, (lo, hi) = math.inf, (math.inf, math.inf)
    elif sigma < MIN_NOISE_MULTIPLIER:
        return AccountantRow(
            name, None, f"unsupported: the composition's multiplier {sigma:.3g} is below "
            f"{MIN_NOISE_MULTIPLIER:g}, where the exact epsilon cannot be certified in double "
            "precision (rounding in Balle-Wang eq. (6) exceeds the bracket's widening; "
            "dpclaims.analysis.gaussian_dp).")
    else:
        eps, (lo, hi) = gaussian_epsilon_bracket(sigma, delta)
    note = (
        "exact: a composition of Gaussians is one Gaussian with multiplier "
        f"(sum sigma_i^-2)^(-1/2) = {sigma:.6g}; epsilon by Balle-Wang 2018 "
        "(dp_accounting.get_epsilon_gaussian, a root search to 1e-12; certified bracket "
        "widened to 1e-9); the same under either relation."
    )
    return AccountantRow(name, eps, note, {"effective_noise_multiplier": sigma,
                                           "bracket": [lo, hi]}, bound="exact")


def gaussian_epsilon_bracket(sigma: float, delta: float) -> tuple[float, tuple[float, float]]:
    """Exact epsilon of the Gaussian mechanism (multiplier sigma) at ``delta``, with a
    certified bracket.

    dp_accounting's ``get_epsilon_gaussian`` solves Balle & Wang (2018, eq. 6) for epsilon
    with Brent's method to an absolute tolerance of 1e-12; the bracket widens its answer
    by 1e-9 absolute plus 1e-9 relative on each side (floored at 0), far more than that
    tolerance, so that the true value lies inside it.

    Returns
    -------
    (epsilon, (lower, upper))

    Raises
    ------
    ValueError
        sigma not finite and > 0 or below 1e-8 (where the evaluation's rounding exceeds
        the widening, :data:`dpclaims.analysis.gaussian_dp.MIN_NOISE_MULTIPLIER`); delta
        outside (0, 1).
    """
    sigma = check_certifiable_multiplier(sigma)
    delta = check_delta(delta)
    if delta == 0:
        raise ValueError("delta must be > 0 for the Gaussian mechanism, got 0")
    eps = float(dp_accounting.get_epsilon_gaussian(sigma, delta))
    slack = 1e-9 + 1e-9 * eps
    return eps, (max(0.0, eps - slack), eps + slack)


def _relative_change(a: float, b: float) -> float:
    """|a - b| / |b|, with 0 for equal values (inf included) and inf for b = 0 != a."""
    if a == b:
        return 0.0
    if b == 0 or math.isinf(a) or math.isinf(b):
        return math.inf
    return abs(a - b) / abs(b)


def _json_float(x: float | None) -> float | str | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else str(x)


def _json_value(v: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        return _json_float(v)
    if isinstance(v, list | tuple):
        return [_json_value(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _json_value(x) for k, x in v.items()}
    return repr(v)
