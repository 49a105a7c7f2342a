"""Fixed-size batches (B of N without replacement) under add-remove: the Poisson reduction
of :func:`dpclaims.analysis.accounting.fixed_size_add_remove_event` against the certified
epsilon of the pair that attains it (:mod:`dpclaims.analysis.fixed_size_exact`), and
issue 40's configuration (d3p 0.2.0: N = 100, B = 50, 4 steps, noise multiplier 2,
delta = 1e-5; its ``DPSVI.get_epsilon``, Poisson at multiplier 2, says 2.524)."""

from __future__ import annotations

import dp_accounting
import pytest

from dpclaims.analysis.accounting import (
    Sampling,
    account,
    calibrate_noise_multiplier,
    fixed_size_add_remove_event,
    fixed_size_add_remove_rate,
)
from dpclaims.analysis.fixed_size_exact import (
    batch_sum_mixture,
    pair_epsilon_bracket,
    worst_pair,
)

DELTA = 1e-5
UPPER = ("dp_accounting-pld", "dp_accounting-rdp", "autodp-rdp", "moments-accountant")
ISSUE = Sampling("without-replacement", dataset_size=100, batch_size=50, steps=4)


def test_the_reduction_is_poisson_at_b_over_n_with_half_the_multiplier():
    event = fixed_size_add_remove_event(2.0, ISSUE)
    assert event == dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.5, dp_accounting.GaussianDpEvent(1.0)), 4)
    # B = N: the smaller neighbour holds no batch; only the pair (N, N + 1) is left
    full = Sampling("without-replacement", dataset_size=10, batch_size=10, steps=1)
    assert fixed_size_add_remove_rate(full) == pytest.approx(10 / 11)
    with pytest.raises(ValueError, match="without-replacement"):
        fixed_size_add_remove_event(2.0, Sampling("poisson", dataset_size=10,
                                                  batch_size=2, steps=1))


def test_batch_sums_are_counted_exactly():
    means, weights = batch_sum_mixture([-1, -1, 1, 1, 0.5], 2)
    assert list(means) == [-2.0, -0.5, 0.0, 1.5, 2.0]
    assert list(weights) == pytest.approx([0.1, 0.2, 0.4, 0.2, 0.1])
    means, weights = batch_sum_mixture([-0.5] * 100 + [0.5], 50)  # two sums, no 10^29 loop
    assert list(means) == [-25.0, -24.0] and weights[1] == pytest.approx(50 / 101)


def test_issue_configuration():
    r = account(2.0, ISSUE, DELTA, "add-remove")
    rows = {x.name: x for x in r.rows}
    assert rows["dp_accounting-pld"].epsilon == pytest.approx(6.677, abs=2e-3)
    assert rows["dp_accounting-pld-optimistic"].bound == "lower"
    assert all(rows[n].bound == "upper" for n in UPPER)
    assert "Fixed-size batches under add-remove" in rows["dp_accounting-rdp"].note
    assert "rate 0.5" in r.note and "pushes another" in r.note
    # the audit's certified 3.485 and d3p's Poisson 2.524 lie below the lower bound
    d3p = account(2.0, Sampling("poisson", dataset_size=100, batch_size=50, steps=4),
                  DELTA, "add-remove").row("dp_accounting-pld").epsilon
    assert d3p == pytest.approx(2.524, abs=2e-3)
    assert d3p < 3.485 < r.lower_bound[1] <= r.upper_bound[1]
    # the pair that attains the reduction (99 records at -C, one added at +C), computed
    # without the reduction, brackets both PLD rows
    smaller, added = worst_pair(100, clip=0.5)
    lo, hi = pair_epsilon_bracket(smaller, added, 50, 1.0, 4, DELTA)
    assert lo <= rows["dp_accounting-pld"].epsilon
    assert rows["dp_accounting-pld-optimistic"].epsilon <= hi
    assert hi - lo < 0.01


def test_the_issue_pair_100_101_is_6_63():
    """The issue's "exact 6.63" is the pair (100, 101): rate 50 / 101, below B / N."""
    smaller, added = worst_pair(101, clip=0.5)
    lo, hi = pair_epsilon_bracket(smaller, added, 50, 1.0, 4, DELTA)
    assert 6.63 <= lo <= hi <= 6.64
    assert hi < account(2.0, ISSUE, DELTA, "add-remove").lower_bound[1]


# (larger dataset size M, B, T, noise multiplier): the grid of the small cases
GRID = [(3, 2, 1, 1.0), (5, 1, 3, 2.0), (5, 3, 1, 1.0), (8, 3, 3, 1.0), (12, 1, 1, 2.0),
        (12, 6, 3, 2.0)]


@pytest.mark.parametrize(("m", "b", "t", "sigma"), GRID)
def test_no_upper_bound_below_the_exact_epsilon_of_a_small_pair(m, b, t, sigma):
    """The worst pair's certified bracket contains the reduction's PLD (gap below
    discretisation); a mixed pair lies below every upper row; the Poisson accounting at
    the full multiplier (d3p's) lies below the worst pair."""
    plan = Sampling("without-replacement", dataset_size=m, batch_size=b, steps=t)
    r = account(sigma, plan, DELTA, "add-remove", pld_max_refinements=2)
    upper = min(r.row(n).epsilon for n in UPPER)
    smaller, added = worst_pair(m)
    lo, hi = pair_epsilon_bracket(smaller, added, b, sigma, t, DELTA, loss_interval=2e-3)
    assert lo <= upper
    assert r.row("dp_accounting-pld-optimistic").epsilon <= hi  # a true lower bound
    assert r.row("dp_accounting-pld").epsilon - lo < 0.01 * t  # the reduction is tight
    k = (m - 1) // 2  # half the smaller dataset at +C: a pair the reduction over-covers
    mixed = [-1.0] * (m - 1 - k) + [1.0] * k
    assert pair_epsilon_bracket(mixed, 1.0, b, sigma, t, DELTA, loss_interval=2e-3)[0] <= upper
    poisson = account(sigma, Sampling("poisson", dataset_size=m, batch_size=b, steps=t),
                      DELTA, "add-remove", pld_max_refinements=2,
                      accountants=("dp_accounting-pld",)).row("dp_accounting-pld").epsilon
    assert poisson < lo


def test_calibration_uses_the_reduction():
    plan = Sampling("without-replacement", dataset_size=1_000, batch_size=50, steps=100)
    sigma = calibrate_noise_multiplier(2.0, DELTA, plan, "add-remove", "dp_accounting-rdp")
    rdp = ("dp_accounting-rdp",)  # the row read (each accountant's row is its own)
    got = account(sigma, plan, DELTA, "add-remove", accountants=rdp).row(rdp[0]).epsilon
    assert got <= 2.0 < account(sigma * 0.98, plan, DELTA, "add-remove",
                                accountants=rdp).row(rdp[0]).epsilon
    poisson = Sampling("poisson", dataset_size=1_000, batch_size=50, steps=100)
    half = calibrate_noise_multiplier(2.0, DELTA, poisson, "add-remove", "dp_accounting-rdp")
    assert sigma == pytest.approx(2 * half, rel=1e-9)  # Poisson at sigma / 2


def _mixture_epsilon(sigma, gamma, steps, delta, interval=1e-2):
    """dp_accounting's own PLD of the pair a fixed-size batch gives under add-remove when
    every other record is at -C and the added one at +C, written directly as its Mixture
    of Gaussians mechanism (noise std sigma C, the sum moving by 0 or 2C with
    probabilities 1 - gamma, gamma; C = 1/2), not as a Poisson-subsampled Gaussian:
    pessimistic connect-the-dots, an upper bound on that pair's epsilon."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    p = pld.from_mixture_gaussian_mechanism(sigma / 2, [0.0, 1.0], [1 - gamma, gamma],
                                            value_discretization_interval=interval)
    return p.self_compose(steps).get_epsilon_for_delta(delta)


@pytest.mark.parametrize(("m", "b", "t", "sigma"), [(100, 50, 4, 2.0), (8, 3, 3, 1.0)])
def test_dp_accountings_mixture_of_gaussians_agrees(m, b, t, sigma):
    """Where dp_accounting has a comparable computation (its Mixture of Gaussians
    mechanism, another code path than the Poisson-subsampled Gaussian the reduction
    uses), its epsilon of the attaining pair (M - 1 records at -C, +C added, batches of
    exactly B) lies in the exact oracle's bracket up to its discretisation, and agrees
    with the reduction's PLD row at rate B / M."""
    mixture = _mixture_epsilon(sigma, b / m, t, DELTA)
    smaller, added = worst_pair(m)
    lo, hi = pair_epsilon_bracket(smaller, added, b, sigma, t, DELTA, loss_interval=2e-3)
    assert lo <= mixture <= hi + 0.01 * t
    # the reduction for a dataset of M records: rate B / M, the pair (M - 1, M)
    plan = Sampling("without-replacement", dataset_size=m, batch_size=b, steps=t)
    row = account(sigma, plan, DELTA, "add-remove", pld_max_refinements=2,
                  accountants=("dp_accounting-pld",)).row("dp_accounting-pld")
    assert row.epsilon == pytest.approx(mixture, abs=0.01 * t)


def test_the_exact_pair_row_is_a_certified_lower_bound():
    """exact_pair_row: the lower end of the attaining pair's bracket, labelled lower,
    below every upper row; the pair (N, N + 1) when B = N; not computed (with the
    reason) beyond its step cap."""
    from dpclaims.analysis.fixed_size_exact import EXACT_PAIR_ROW, exact_pair_row

    row = exact_pair_row(2.0, ISSUE, DELTA)
    assert row.name == EXACT_PAIR_ROW and row.bound == "lower"
    assert row.bracket == (row.epsilon, None)
    assert 6.66 < row.epsilon <= 6.677
    lo, hi = row.details["bracket_of_the_pair"]
    assert lo == row.epsilon and hi - lo < 0.01
    full = Sampling("without-replacement", dataset_size=6, batch_size=6, steps=1)
    assert exact_pair_row(1.0, full, DELTA).details["pair"]["larger_size"] == 7
    many = Sampling("without-replacement", dataset_size=100, batch_size=50, steps=17)
    capped = exact_pair_row(2.0, many, DELTA)
    assert capped.epsilon is None and "17 steps exceed" in capped.note
    with pytest.raises(ValueError, match="without-replacement"):
        exact_pair_row(2.0, Sampling("poisson", dataset_size=10, batch_size=2, steps=1),
                       DELTA)
