"""Property tests of dpclaims.analysis.accounting: monotonicity, calibration, agreement, bad input.

Every test runs with ``derandomize=True`` (the examples are a function of the test alone)
and small ``max_examples``: one call of :func:`account` costs 10-300 ms. The costliest
tests (the subsampled monotonicity tests, the RDP calibration, the RDP agreement; 40 of
the file's 53 CPU-s in ``make test`` on 2026-11-28) draw half the examples they drew
before (every assertion unchanged; docs/benchmarks.md). PLD rows are
computed at a fixed ``value_discretization_interval`` (``pld_max_refinements=0``) except
where the adaptive refinement is itself under test, so that they are one function of the
parameters and cheap.

Tolerances
----------
``MONOTONE_RTOL = 1e-9``: epsilon is asserted non-decreasing (``eps_hi >= eps_lo * (1 -
1e-9)``), not strictly increasing. The RDP rows minimise over a fixed order grid, so
epsilon is flat in the limit of vanishing parameter changes and exactly flat where it is
0 or inf; autodp minimises by Brent's method, whose answer carries relative noise far
below 1e-9 at the perturbations drawn here (factors >= 1.001, counts + 1). A violation
larger than 1e-9 is therefore a real inversion, not rounding.
"""

from __future__ import annotations

import math
import re

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dpclaims.analysis.accounting import (
    ACCOUNTANTS,
    RELATIONS,
    AccountingResult,
    Sampling,
    account,
    account_event,
    calibrate_noise_multiplier,
    dp_event_for,
)

MONOTONE_RTOL = 1e-9
ALL = frozenset(ACCOUNTANTS) - {"dp_accounting-pld-optimistic"}  # a lower bound
RDP_FAMILY = frozenset({"dp_accounting-rdp", "autodp-rdp", "moments-accountant"})
# The support table of the module docstring, (sampling kind, relation) -> supported rows.
GAUSSIAN_KINDS = ("shuffle", "fixed-order", "none")
SUPPORT = {
    ("poisson", "add-remove"): RDP_FAMILY | {"dp_accounting-pld"},
    ("poisson", "replace-one"): frozenset({"dp_accounting-pld"}),
    ("without-replacement", "replace-one"): RDP_FAMILY,
    **{(kind, relation): ALL for kind in GAUSSIAN_KINDS for relation in RELATIONS},
}


def _settings(n: int) -> settings:
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


def log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(math.log10(low), math.log10(high)).map(lambda e: 10.0**e)


DELTAS = log_uniform(1e-9, 1e-3)
SIGMAS = st.floats(0.6, 8.0)
FACTORS = st.floats(1.001, 2.0)  # sigma is multiplied by this; never an invisible change


def run(sigma: float, sampling: Sampling, delta: float, relation: str,
        accountants: tuple[str, ...] | None = None) -> AccountingResult:
    """Every accountant's row, or only ``accountants``' (the PLD costs seconds a row)."""
    return account(sigma, sampling, delta, relation, pld_max_refinements=0, lower_bound=False,
                   accountants=accountants)


def supported(result: AccountingResult) -> set[str]:
    """The accountants' answers (upper bounds and exact values); the optimistic PLD's
    lower bound is not monotone in its interval and is tested in test_accounting.py."""
    return {r.name for r in result.rows
            if r.supported and r.name != "dp_accounting-pld-optimistic"}


def assert_not_decreasing(lo: AccountingResult, hi: AccountingResult, change: str) -> None:
    """Every supported row of ``hi`` is >= the same row of ``lo`` up to MONOTONE_RTOL."""
    key = (lo.sampling.kind, lo.relation)
    assert supported(lo) == supported(hi) == set(SUPPORT[key]), key
    for a, b in zip(lo.rows, hi.rows, strict=True):
        if a.epsilon is None or a.name == "dp_accounting-pld-optimistic":
            continue
        assert b.epsilon >= a.epsilon * (1 - MONOTONE_RTOL), (
            f"{a.name} under {key}: epsilon fell from {a.epsilon!r} to {b.epsilon!r} "
            f"when {change}"
        )


@st.composite
def subsampled(draw, kind: str, max_rate: float = 0.2, max_steps: int = 2000):
    """(N, B, T) for Poisson (B may be fractional) or without-replacement sampling."""
    n = draw(st.integers(100, 100_000))
    b = draw(st.integers(1, max(1, int(max_rate * n))))
    steps = draw(st.integers(1, max_steps))
    return n, b, steps


# --------------------------------------------------------------------------- monotonicity
# Poisson: add-remove (four rows) and replace-one (PLD only, given 2 sigma).


@_settings(10)
@given(subsampled("poisson"), SIGMAS, FACTORS, DELTAS, st.sampled_from(RELATIONS))
def test_poisson_epsilon_decreases_in_sigma(sizes, sigma, factor, delta, relation):
    n, b, steps = sizes
    s = Sampling("poisson", dataset_size=n, batch_size=b, steps=steps)
    lo, hi = run(sigma * factor, s, delta, relation), run(sigma, s, delta, relation)
    assert_not_decreasing(lo, hi, f"sigma went down from {sigma * factor!r} to {sigma!r}")


@_settings(10)
@given(subsampled("poisson"), st.integers(1, 500), SIGMAS, DELTAS, st.sampled_from(RELATIONS))
def test_poisson_epsilon_increases_in_steps(sizes, more, sigma, delta, relation):
    n, b, steps = sizes
    lo = run(sigma, Sampling("poisson", dataset_size=n, batch_size=b, steps=steps), delta,
             relation)
    hi = run(sigma, Sampling("poisson", dataset_size=n, batch_size=b, steps=steps + more),
             delta, relation)
    assert_not_decreasing(lo, hi, f"steps went up from {steps} to {steps + more}")


@_settings(10)
@given(subsampled("poisson"), st.integers(1, 500), SIGMAS, DELTAS, st.sampled_from(RELATIONS))
def test_poisson_epsilon_increases_in_sampling_rate(sizes, more, sigma, delta, relation):
    n, b, steps = sizes
    b2 = min(n, b + more)
    assume(b2 > b)
    lo = run(sigma, Sampling("poisson", dataset_size=n, batch_size=b, steps=steps), delta,
             relation)
    hi = run(sigma, Sampling("poisson", dataset_size=n, batch_size=b2, steps=steps), delta,
             relation)
    assert_not_decreasing(lo, hi, f"batch_size went up from {b} to {b2} (N = {n})")


# Sampling without replacement under replace-one (under add-remove account() reduces it to
# the Poisson add-remove pair at sigma / 2: tests/test_accounting_fixed_size.py).


@_settings(5)
@given(subsampled("without-replacement"), SIGMAS, FACTORS, DELTAS)
def test_without_replacement_epsilon_decreases_in_sigma(sizes, sigma, factor, delta):
    n, b, steps = sizes
    s = Sampling("without-replacement", dataset_size=n, batch_size=b, steps=steps)
    lo, hi = run(sigma * factor, s, delta, "replace-one"), run(sigma, s, delta, "replace-one")
    assert_not_decreasing(lo, hi, f"sigma went down from {sigma * factor!r} to {sigma!r}")


@_settings(5)
@given(subsampled("without-replacement"), st.integers(1, 500), SIGMAS, DELTAS)
def test_without_replacement_epsilon_increases_in_steps(sizes, more, sigma, delta):
    n, b, steps = sizes
    lo = run(sigma, Sampling("without-replacement", dataset_size=n, batch_size=b, steps=steps),
             delta, "replace-one")
    hi = run(sigma, Sampling("without-replacement", dataset_size=n, batch_size=b,
                             steps=steps + more), delta, "replace-one")
    assert_not_decreasing(lo, hi, f"steps went up from {steps} to {steps + more}")


@_settings(5)
@given(subsampled("without-replacement"), st.integers(1, 500), SIGMAS, DELTAS)
def test_without_replacement_epsilon_increases_in_batch_size(sizes, more, sigma, delta):
    n, b, steps = sizes
    b2 = min(n, b + more)
    assume(b2 > b)
    lo = run(sigma, Sampling("without-replacement", dataset_size=n, batch_size=b, steps=steps),
             delta, "replace-one")
    hi = run(sigma, Sampling("without-replacement", dataset_size=n, batch_size=b2, steps=steps),
             delta, "replace-one")
    assert_not_decreasing(lo, hi, f"batch_size went up from {b} to {b2} (N = {n})")


# Passes over the data (shuffle, fixed-order) and full batch: every row, both relations.


@st.composite
def passes(draw):
    """(kind, N, B, unit, count) of a shuffle / fixed-order / none Sampling with <= 30 passes;
    ``unit`` is "steps" or "epochs" (N and B are None unless a pass length is needed)."""
    kind = draw(st.sampled_from(GAUSSIAN_KINDS))
    if kind == "none":
        return kind, None, None, "steps", draw(st.integers(1, 30))
    if draw(st.booleans()):
        return kind, None, None, "epochs", draw(st.integers(1, 30))
    n = draw(st.integers(1, 1000))
    b = draw(st.integers(1, n))
    return kind, n, b, "steps", draw(st.integers(1, 30 * math.ceil(n / b)))


def pass_sampling(kind, n, b, unit, count) -> Sampling:
    return Sampling(kind, dataset_size=n, batch_size=b, **{unit: count})


@_settings(20)
@given(passes(), st.floats(0.8, 8.0), FACTORS, DELTAS, st.sampled_from(RELATIONS))
def test_passes_epsilon_decreases_in_sigma(spec, sigma, factor, delta, relation):
    s = pass_sampling(*spec)
    lo, hi = run(sigma * factor, s, delta, relation), run(sigma, s, delta, relation)
    assert_not_decreasing(lo, hi, f"sigma went down from {sigma * factor!r} to {sigma!r}")


@_settings(20)
@given(passes(), st.integers(1, 500), st.floats(0.8, 8.0), DELTAS, st.sampled_from(RELATIONS))
def test_passes_epsilon_increases_in_count(spec, more, sigma, delta, relation):
    kind, n, b, unit, count = spec
    # At most 30 more passes, to keep the PLD cheap.
    more = min(more, 30 if n is None else 30 * math.ceil(n / b))
    lo = run(sigma, pass_sampling(kind, n, b, unit, count), delta, relation)
    hi = run(sigma, pass_sampling(kind, n, b, unit, count + more), delta, relation)
    assert_not_decreasing(lo, hi, f"{unit} went up from {count} to {count + more}")


@_settings(15)
@given(st.sampled_from(("shuffle", "fixed-order")), st.integers(2, 1000), st.data(),
       st.floats(0.8, 8.0), DELTAS, st.sampled_from(RELATIONS))
def test_passes_epsilon_increases_in_batch_size(kind, n, data, sigma, delta, relation):
    # At a fixed number of steps a larger batch makes a pass shorter, hence more passes.
    b = data.draw(st.integers(1, n - 1), label="batch_size")
    b2 = data.draw(st.integers(b + 1, n), label="larger batch_size")
    steps = data.draw(st.integers(1, 30 * math.ceil(n / b2)), label="steps")
    lo = run(sigma, Sampling(kind, dataset_size=n, batch_size=b, steps=steps), delta, relation)
    hi = run(sigma, Sampling(kind, dataset_size=n, batch_size=b2, steps=steps), delta, relation)
    assert hi.sampling.passes >= lo.sampling.passes
    assert_not_decreasing(lo, hi, f"batch_size went up from {b} to {b2} (N = {n})")


@_settings(4)
@given(st.floats(0.8, 4.0), FACTORS, st.integers(1, 300), DELTAS)
def test_refined_pld_decreases_in_sigma(sigma, factor, steps, delta):
    # The default adaptive refinement stops at a sigma-dependent interval; its answer must
    # still fall as sigma grows (calibrate_noise_multiplier relies on it).
    s = Sampling("poisson", dataset_size=10_000, batch_size=100, steps=steps)
    pld = ("dp_accounting-pld",)  # the row compared; the others are not read
    hi = account(sigma, s, delta, "add-remove", lower_bound=False, accountants=pld).row(
        "dp_accounting-pld").epsilon
    lo = account(sigma * factor, s, delta, "add-remove", lower_bound=False,
                 accountants=pld).row("dp_accounting-pld").epsilon
    assert hi >= lo * (1 - MONOTONE_RTOL), (sigma, factor, steps, delta, lo, hi)


# --------------------------------------------------------------------------- calibration


@st.composite
def calibration_cases(draw):
    """(sampling, relation) supported by the RDP accountants, sized so that sigma* lies in
    roughly [0.3, 50] for targets in [0.3, 4]."""
    family = draw(st.sampled_from(("poisson", "without-replacement", "passes")))
    if family == "passes":
        kind = draw(st.sampled_from(GAUSSIAN_KINDS))
        return Sampling(kind, epochs=draw(st.integers(1, 30))), draw(st.sampled_from(RELATIONS))
    n = draw(st.integers(1_000, 100_000))
    b = draw(st.integers(max(1, n // 200), n // 10))
    steps = draw(st.integers(10, 1_000))
    relation = "add-remove" if family == "poisson" else "replace-one"
    return Sampling(family, dataset_size=n, batch_size=b, steps=steps), relation


@_settings(6)
@given(calibration_cases(), st.sampled_from(("dp_accounting-rdp", "autodp-rdp")),
       st.floats(0.3, 4.0), log_uniform(1e-8, 1e-4), st.sampled_from((1e-2, 3e-3)))
def test_calibrated_sigma_meets_target_and_is_minimal(case, accountant, target, delta, tol):
    # Docstring: the returned hi has epsilon(hi) <= target and hi / (1 + tol) does not meet
    # it; so epsilon(sigma) <= target exactly (stronger than target * (1 + tol)) and, by
    # monotonicity, epsilon(sigma * (1 - 2 tol)) > target, as sigma (1 - 2 tol) < sigma / (1 + tol).
    sampling, relation = case
    sigma = calibrate_noise_multiplier(target, delta, sampling, relation, accountant, tol)
    got = run(sigma, sampling, delta, relation, (accountant,)).row(accountant).epsilon
    assert got <= target, (sigma, got)
    smaller = run(sigma * (1 - 2 * tol), sampling, delta, relation,
                  (accountant,)).row(accountant).epsilon
    assert smaller > target, (sigma, smaller)


@_settings(3)
@given(st.sampled_from(["poisson-replace-one", *GAUSSIAN_KINDS]), st.floats(0.5, 4.0),
       log_uniform(1e-8, 1e-4))
def test_calibration_with_pld_meets_target_and_is_minimal(kind, target, delta):
    tol = 1e-2
    if kind == "poisson-replace-one":
        sampling = Sampling("poisson", dataset_size=1000, batch_size=20, steps=50)
        relation = "replace-one"
    else:
        sampling, relation = Sampling(kind, epochs=5), "add-remove"
    sigma = calibrate_noise_multiplier(target, delta, sampling, relation, "dp_accounting-pld", tol)
    pld = "dp_accounting-pld"
    assert account(sigma, sampling, delta, relation, lower_bound=False,
                   accountants=(pld,)).row(pld).epsilon <= target
    smaller = account(sigma * (1 - 2 * tol), sampling, delta, relation,
                      lower_bound=False, accountants=(pld,)).row(pld).epsilon
    assert smaller > target


# --------------------------------------------------------------------------- agreement
# dp_accounting-rdp and autodp-rdp use the same (eps, delta) conversion (Canonne-Kamath-
# Steinke Prop. 12 = Balle et al. Thm. 21) but different orders: dp_accounting a fixed grid
# (1.1..10.9 by 0.1, 11..63, then 128, 256, 512, 1024), autodp all real orders, with the
# sampled Gaussian's RDP evaluated exactly at integers and interpolated in between. They
# meet at 1e-6 exactly where both evaluate the same orders: (a) sampled events whose
# dp_accounting optimum is an integer order with integer neighbours (12..62); (b) plain
# Gaussian compositions against dp_accounting on a fine order grid. Elsewhere they differ
# by design (see the module report): below order 11 autodp's interpolation is looser (up to
# 2x at sigma ~ 0.35), above 63 dp_accounting's sparse grid is looser (up to ~50 %).


@_settings(8)
@given(st.sampled_from(("poisson", "without-replacement")), st.integers(10_000, 100_000),
       log_uniform(2e-3, 0.08), st.integers(10, 3_000), st.floats(1.5, 5.0),
       log_uniform(1e-10, 1e-5))
def test_rdp_rows_agree_where_their_orders_coincide(kind, n, rate, steps, sigma, delta):
    relation = "add-remove" if kind == "poisson" else "replace-one"
    s = Sampling(kind, dataset_size=n, batch_size=max(1, round(rate * n)), steps=steps)
    result = run(sigma, s, delta, relation,
                 ("dp_accounting-rdp", "autodp-rdp", "moments-accountant"))
    dpa = result.row("dp_accounting-rdp")
    assume(12 <= dpa.details["optimal_order"] <= 62)
    assert result.row("autodp-rdp").epsilon == pytest.approx(dpa.epsilon, rel=1e-6)
    # Mironov's Prop. 3 at integer orders is never below the improved conversion.
    assert result.row("moments-accountant").epsilon >= dpa.epsilon


FINE_ORDERS = list(1 + np.geomspace(1e-3, 1e4, 40_001))


@_settings(15)
@given(passes(), st.floats(0.5, 10.0), log_uniform(1e-10, 1e-2), st.sampled_from(RELATIONS))
def test_autodp_is_dp_accounting_on_a_fine_order_grid_for_gaussians(spec, sigma, delta,
                                                                     relation):
    s = pass_sampling(*spec)
    result = run(sigma, s, delta, relation,
                 ("dp_accounting-rdp", "autodp-rdp", "analytic-gaussian"))
    fine = RdpAccountant(FINE_ORDERS, _relation(relation))
    fine.compose(dp_event_for(sigma, s))
    reference = fine.get_epsilon(delta)
    autodp = result.row("autodp-rdp").epsilon
    assert autodp == pytest.approx(reference, rel=1e-6)
    # Real orders contain the default grid; both bound the exact epsilon from above.
    assert autodp <= result.row("dp_accounting-rdp").epsilon * (1 + 1e-9)
    assert result.row("analytic-gaussian").epsilon <= autodp * (1 + 1e-9)


def _relation(relation: str) -> dp_accounting.NeighboringRelation:
    return {
        "add-remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
        "replace-one": dp_accounting.NeighboringRelation.REPLACE_ONE,
    }[relation]


@_settings(8)
@given(st.sampled_from(("poisson", *GAUSSIAN_KINDS)), st.integers(1, 500),
       st.floats(0.8, 6.0), log_uniform(1e-9, 1e-3), st.sampled_from(RELATIONS))
def test_pld_is_not_above_rdp(kind, steps, sigma, delta, relation):
    # PLD is (nearly) tight, the RDP conversion loses >= ~5 % in every regime sampled while
    # writing this test; the 1 % margin is PLD's own refinement tolerance (pld_rtol), since
    # its pessimistic discretisation may sit up to that much above its converged value.
    if kind == "poisson":
        relation = "add-remove"  # under replace-one only the PLD supports Poisson sampling
        s = Sampling("poisson", dataset_size=10_000, batch_size=100, steps=steps)
    else:
        unit = "steps" if kind == "none" else "epochs"
        s = Sampling(kind, **{unit: min(steps, 30)})
    result = account(sigma, s, delta, relation,
                     accountants=("dp_accounting-pld", *RDP_FAMILY, "analytic-gaussian"))
    pld = result.row("dp_accounting-pld").epsilon
    for name in RDP_FAMILY:
        assert pld <= result.row(name).epsilon * 1.01, name
    exact = result.row("analytic-gaussian").epsilon
    if exact is not None:
        assert exact * (1 - 1e-9) <= pld <= exact * 1.01


# --------------------------------------------------------------------------- bad input


def names(*values) -> str:
    """A regex matching a message that contains every value's repr, in order."""
    return ".*".join(re.escape(repr(v)) for v in values)


NOT_POSITIVE = st.one_of(st.floats(max_value=0.0), st.just(math.nan), st.just(math.inf))
NOT_A_DELTA = st.one_of(
    st.floats(max_value=-1e-300), st.floats(min_value=1.0), st.just(math.nan)
)
NOT_A_RELATION = st.one_of(st.text(max_size=12), st.none()).filter(lambda r: r not in RELATIONS)
GOOD = Sampling("poisson", dataset_size=1000, batch_size=10, steps=10)


@_settings(25)
@given(st.sampled_from(("poisson", "without-replacement", "shuffle", "fixed-order")),
       st.integers(1, 10**9), st.integers(1, 10**9))
def test_batch_larger_than_dataset_is_rejected(kind, n, extra):
    with pytest.raises(ValueError, match=names(n + extra, n)):
        Sampling(kind, dataset_size=n, batch_size=n + extra, steps=1)


@_settings(25)
@given(st.integers(1, 10**6), st.floats(0.0, 1.0, exclude_min=True, exclude_max=True))
def test_fractional_poisson_batch_larger_than_dataset_is_rejected(n, frac):
    # A Poisson batch size may be fractional (an expectation), so q = B / N > 1 is possible.
    b = n + frac
    assume(b > n and not b.is_integer())  # an integral float is stored (and named) as an int
    with pytest.raises(ValueError, match=names(b, n)):
        Sampling("poisson", dataset_size=n, batch_size=b, steps=1)


@_settings(25)
@given(st.sampled_from(("steps", "epochs")), st.one_of(
    st.integers(max_value=0), st.floats(allow_nan=True).filter(lambda x: not float(x).is_integer()
                                                               or x < 1)))
def test_counts_below_one_or_fractional_are_rejected(which, count):
    kwargs = {"dataset_size": 100, "batch_size": 10, which: count}
    with pytest.raises(ValueError, match=re.escape(which) + ".*" + re.escape(repr(count))):
        Sampling("poisson", **kwargs)


@_settings(25)
@given(NOT_POSITIVE)
def test_non_positive_noise_multiplier_is_rejected(sigma):
    with pytest.raises(ValueError, match="noise_multiplier.*" + names(sigma)):
        account(sigma, GOOD, 1e-5, "add-remove")
    with pytest.raises(ValueError, match="noise_multiplier.*" + names(sigma)):
        dp_event_for(sigma, GOOD)


@_settings(25)
@given(NOT_A_DELTA)
def test_delta_outside_unit_interval_is_rejected(delta):
    pattern = "delta.*" + names(delta)
    with pytest.raises(ValueError, match=pattern):
        account(1.0, GOOD, delta, "add-remove")
    with pytest.raises(ValueError, match=pattern):
        account_event(dp_event_for(1.0, GOOD), delta, "add-remove")
    with pytest.raises(ValueError, match=pattern):
        calibrate_noise_multiplier(1.0, delta, GOOD, "add-remove")


def test_delta_zero_is_rejected():
    # every Gaussian mechanism has epsilon = inf at delta = 0: the bad input
    with pytest.raises(ValueError, match="delta.*0"):
        calibrate_noise_multiplier(1.0, 0.0, GOOD, "add-remove")
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\).*got 0"):
        account(1.0, GOOD, 0.0, "add-remove")


@_settings(25)
@given(NOT_A_RELATION)
def test_unknown_relation_is_rejected(relation):
    pattern = "relation.*" + names(relation)
    with pytest.raises(ValueError, match=pattern):
        account(1.0, GOOD, 1e-5, relation)
    with pytest.raises(ValueError, match=pattern):
        account_event(dp_event_for(1.0, GOOD), 1e-5, relation)
    with pytest.raises(ValueError, match=pattern):
        calibrate_noise_multiplier(1.0, 1e-5, GOOD, relation)
