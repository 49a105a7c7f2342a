"""Property-based checks of claimed sensitivity bounds (hypothesis).

A claimed L2 sensitivity Delta of a query F is a bound: for every neighbouring
pair (D, D'), ||F(D) - F(D')||_2 <= Delta. :func:`check_sensitivity` searches for
a pair violating it with hypothesis (guided by ``hypothesis.target`` towards large
ratios) and reports the largest ratio ||F(D) - F(D')|| / Delta it saw and, on a
violation, the counterexample hypothesis shrank.

Reproducibility: the same seed gives the same search, whatever script calls it and
whatever modules are loaded. hypothesis (6.170) mixes literal constants harvested
from every loaded local module into its draws (``hypothesis.internal.conjecture.
providers._get_local_constants``), which would make the search depend on the
caller; :func:`check_sensitivity` switches that harvesting off for the duration of
its search (:func:`_no_local_constants`, tied to the pinned hypothesis version: it
patches a private function, and fails loudly if that function disappears).

Only floating-point rounding is forgiven. A query like DP-SEP's theta_new is a
large vector (norm ~ N C) whose neighbouring difference is tiny (~ C / N), so the
difference of two computed values carries an absolute rounding error of order
eps * ||F(D)||. A pair is a violation when

    ||F(D) - F(D')|| > Delta (1 + 1e-9) + ROUNDING_ULPS * eps * magnitude(example)

where ``magnitude`` (optional, e.g. ||F(D)|| + ||F(D')||) is supplied by the caller
and eps is float64's machine epsilon. Both allowances are reported.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from random import Random
from typing import Any

import numpy as np
from hypothesis import HealthCheck, find, settings, target
from hypothesis.errors import NoSuchExample

from dpclaims.analysis.validation import check_count, check_positive

ROUNDING_RTOL = 1e-9
ROUNDING_ULPS = 64.0


@dataclass(frozen=True)
class SensitivityCheck:
    """Outcome of :func:`check_sensitivity`.

    Attributes
    ----------
    claimed : float
        The claimed L2 sensitivity.
    max_ratio : float
        Largest ||F(D) - F(D')||_2 / claimed over all examples hypothesis tried.
    n_examples : int
        Number of neighbouring pairs evaluated.
    violated : bool
        Whether some pair exceeded the claim by more than rounding.
    counterexample : Any
        The shrunk violating example (None if none was found).
    counterexample_ratio : float or None
        Its ratio.
    seed : int
    worst_example : Any
        The example with the largest ratio seen.
    counterexample_certified_ratio : float or None
        The counterexample's ratio less its rounding allowance: a certified lower bound
        on (true sensitivity) / claimed, above 1 for every violation; None without one.
    max_certified_ratio : float
        The largest ratio less its example's rounding allowance over all examples (0 if
        none is positive): a certified lower bound on (true sensitivity) / claimed.
    """

    claimed: float
    max_ratio: float
    n_examples: int
    violated: bool
    counterexample: Any
    counterexample_ratio: float | None
    seed: int
    worst_example: Any = None
    counterexample_certified_ratio: float | None = None
    max_certified_ratio: float = 0.0

    def to_dict(self) -> dict:
        return {
            "claimed_sensitivity": self.claimed,
            "max_ratio": self.max_ratio,
            "n_examples": self.n_examples,
            "violated": self.violated,
            "counterexample": _jsonable(self.counterexample),
            "counterexample_ratio": self.counterexample_ratio,
            "counterexample_certified_ratio": self.counterexample_certified_ratio,
            "max_certified_ratio": self.max_certified_ratio,
            "worst_example": _jsonable(self.worst_example),
            "seed": self.seed,
            "rounding_rtol": ROUNDING_RTOL,
            "rounding_ulps_of_magnitude": ROUNDING_ULPS,
        }


@contextmanager
def _no_local_constants():
    """Make hypothesis draw no constants harvested from loaded local modules.

    Patches ``providers._get_local_constants`` to return an empty pool and clears the
    constants cache on entry and exit, so the draws depend only on the seed.

    Raises
    ------
    RuntimeError
        If the pinned hypothesis no longer has the function (the patch would be a
        no-op and reproducibility silently lost).
    """
    from hypothesis.internal.conjecture import providers

    original = getattr(providers, "_get_local_constants", None)
    if (original is None or not hasattr(providers, "CONSTANTS_CACHE")
            or not hasattr(providers, "_local_constants")):
        raise RuntimeError("hypothesis.internal.conjecture.providers has no "
                           "_get_local_constants / CONSTANTS_CACHE / _local_constants "
                           "(they exist from hypothesis 6.131.9): update _no_local_constants")
    empty = type(providers._local_constants)()
    providers.CONSTANTS_CACHE.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()


def check_sensitivity(
    strategy,
    distance: Callable[[Any], float],
    claimed: float,
    *,
    max_examples: int = 500,
    seed: int = 0,
    magnitude: Callable[[Any], float] | None = None,
) -> SensitivityCheck:
    """Search for a neighbouring pair whose query distance exceeds ``claimed``.

    Parameters
    ----------
    strategy : hypothesis strategy
        Draws one example (a neighbouring pair together with whatever state the
        query needs).
    distance : callable
        example -> ||F(D) - F(D')||_2 (a float, in the units of the query).
    claimed : float
        Claimed L2 sensitivity (> 0).
    max_examples : int
        Hypothesis budget (examples tried before it gives up searching).
    seed : int
        Seeds hypothesis's search (same seed, same result).
    magnitude : callable, optional
        example -> size of the query values (e.g. ||F(D)|| + ||F(D')||), for the
        rounding allowance in the module docstring. None: no absolute allowance.

    Returns
    -------
    SensitivityCheck

    Raises
    ------
    ValueError
        For claimed <= 0 or max_examples < 1, or a non-finite distance.
    """
    claimed = check_positive(claimed, "claimed")
    max_examples = check_count(max_examples, "max_examples")
    seen = {"n": 0, "max": 0.0, "worst": None, "certified": 0.0}

    def ratio(example) -> float:
        value = float(distance(example))
        if not np.isfinite(value):
            raise ValueError(f"distance returned a non-finite value {value!r} for {example!r}")
        r = value / claimed
        seen["n"] += 1
        if r > seen["max"]:
            seen["max"], seen["worst"] = r, example
        return r

    eps = float(np.finfo(float).eps)

    def allowed_ratio(example) -> float:
        slack = 0.0 if magnitude is None else ROUNDING_ULPS * eps * float(magnitude(example))
        return 1.0 + ROUNDING_RTOL + slack / claimed

    def violates(example) -> bool:
        r = ratio(example)
        target(r, label="ratio to claimed sensitivity")
        allowed = allowed_ratio(example)
        seen["certified"] = max(seen["certified"], r - (allowed - 1.0))
        return r > allowed

    conf = settings(
        max_examples=max_examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    try:
        with _no_local_constants():
            example = find(strategy, violates, settings=conf, random=Random(seed))
        cex_ratio = float(distance(example)) / claimed
        certified = cex_ratio - (allowed_ratio(example) - 1.0)
        violated = True
    except NoSuchExample:
        example, cex_ratio, certified, violated = None, None, None, False
    return SensitivityCheck(
        claimed=claimed,
        max_ratio=seen["max"],
        n_examples=seen["n"],
        violated=violated,
        counterexample=example,
        counterexample_ratio=cex_ratio,
        seed=seed,
        worst_example=seen["worst"],
        counterexample_certified_ratio=certified,
        max_certified_ratio=max(seen["certified"], certified or 0.0),
    )


def _jsonable(obj):
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.ndarray):
        return np.round(obj, 12).tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "__dict__"):
        return {k: _jsonable(v) for k, v in vars(obj).items()}
    return repr(obj)
