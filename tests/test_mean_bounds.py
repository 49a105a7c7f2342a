"""Finite-sample intervals for Monte Carlo means (dpclaims.analysis.mean_bounds) and their
kernel bounds (dpclaims.claims.checks.bounds.mean_bounds)."""

import math

import numpy as np
import pytest
from scipy.stats import binom

from dpclaims.analysis.gaussian_dp import gaussian_epsilon_bracket_exact
from dpclaims.analysis.intervals import clopper_pearson
from dpclaims.analysis.mean_bounds import (
    MeanInterval,
    epsilon_bracket_from_sensitivity,
    mean_interval,
    mean_interval_asymptotic,
    mean_ratio_interval,
)
from dpclaims.claims import Claim
from dpclaims.claims.checks.bounds import mean_bounds
from dpclaims.claims.kernel import Claimed, Direction, decide

CLAIM = Claim("x/mse", "paper", "Table 1", "MSE = 0.30", "monte-carlo")


# ----------------------------------------------------------------------------- known cases


@pytest.mark.parametrize("value", [0.0, 0.4, 1.0])
def test_all_samples_equal(value):
    x = np.full(400, value)
    ci = mean_interval(x, 0.0, 1.0, 0.05)
    assert ci.low <= value <= ci.high
    assert ci.high - ci.low < 0.06
    assert ci.basis == "finite-sample" and ci.n == 400 and ci.mean == pytest.approx(value)
    if value == 0.0:
        assert ci.low == 0.0  # no bet against m = 0 can win on zeros
    if value == 1.0:
        assert ci.high == 1.0
    # more samples, a narrower interval
    wider = mean_interval(x[:40], 0.0, 1.0, 0.05)
    assert wider.high - wider.low > ci.high - ci.low


def test_range_rescaling_is_affine():
    rng = np.random.default_rng(3)
    y = rng.beta(2, 5, 200)
    unit = mean_interval(y, 0, 1, 0.05)
    moved = mean_interval(-2 + 4 * y, -2, 2, 0.05)
    assert moved.low == pytest.approx(-2 + 4 * unit.low, abs=1e-9)
    assert moved.high == pytest.approx(-2 + 4 * unit.high, abs=1e-9)


@pytest.mark.parametrize("n, p", [(50, 0.3), (300, 0.3), (300, 0.05), (2000, 0.5)])
def test_bernoulli_comparable_to_clopper_pearson(n, p):
    """On Bernoulli samples the betting interval is close to the exact binomial one
    (Waudby-Smith & Ramdas 2024, Sec. 5, Fig. 6: comparable widths)."""
    x = (np.random.default_rng(n).random(n) < p).astype(float)
    ci = mean_interval(x, 0, 1, 0.05)
    cp_low, cp_high = clopper_pearson(x.sum(), n, 0.05)
    assert ci.low <= x.mean() <= ci.high
    ratio = (ci.high - ci.low) / (cp_high - cp_low)
    assert 0.8 < ratio < 1.5, ratio
    # both intervals overlap heavily
    assert ci.low < cp_high and cp_low < ci.high


def test_one_sided_ends():
    x = np.random.default_rng(5).beta(2, 5, 300)
    two = mean_interval(x, 0, 1, 0.1)
    low = mean_interval(x, 0, 1, 0.05, side="lower")
    high = mean_interval(x, 0, 1, 0.05, side="upper")
    assert low.high == 1.0 and high.low == 0.0
    # a one-sided end at alpha is the two-sided end at 2 alpha
    assert low.low == pytest.approx(two.low, abs=1e-9)
    assert high.high == pytest.approx(two.high, abs=1e-9)


def test_betting_and_bernstein_is_valid_and_wider_here():
    x = np.random.default_rng(6).beta(0.5, 0.5, 500)
    bet = mean_interval(x, 0, 1, 0.05)
    both = mean_interval(x, 0, 1, 0.05, method="betting+bernstein")
    assert both.low <= x.mean() <= both.high
    assert both.high - both.low >= bet.high - bet.low
    assert "Bernstein" in both.method or "Bonferroni" in both.method


# ----------------------------------------------------------------------------- coverage

ALPHA = 0.05
REPS = 300
N = 60
FALSE_ALARM = 1e-3


def _draw(name, rng, size):
    if name == "beta(0.5,0.5)":
        return rng.beta(0.5, 0.5, size), 0.5, (0.0, 1.0)
    if name == "beta(2,5)":
        return rng.beta(2, 5, size), 2 / 7, (0.0, 1.0)
    if name == "bernoulli(0.1)":
        return (rng.random(size) < 0.1).astype(float), 0.1, (0.0, 1.0)
    # two points at the ends of [-1, 3], P(3) = 0.8
    return np.where(rng.random(size) < 0.8, 3.0, -1.0), -1 + 4 * 0.8, (-1.0, 3.0)


@pytest.mark.parametrize("name", ["beta(0.5,0.5)", "beta(2,5)", "bernoulli(0.1)",
                                  "two-point"])
def test_coverage_by_simulation(name):
    """300 intervals at alpha = 0.05 from n = 60 samples each (seed fixed). The count of
    misses is Binom(300, q) with q <= alpha if the interval is valid; the test fails only
    if P(Binom(300, alpha) >= misses) < 1e-3, so a valid interval fails it with
    probability at most 1e-3 (and, the seed being fixed, either always or never)."""
    rng = np.random.default_rng(np.random.SeedSequence(38, spawn_key=(len(name),)))
    data, mean, (lo, hi) = _draw(name, rng, (REPS, N))
    misses = 0
    for row in data:
        ci = mean_interval(row, lo, hi, ALPHA)
        misses += not (ci.low <= mean <= ci.high)
    p_value = binom.sf(misses - 1, REPS, ALPHA)
    assert p_value >= FALSE_ALARM, (name, misses, p_value)


def test_ratio_coverage_by_simulation():
    """The ratio interval at alpha = 0.05, 300 repetitions; the same binomial test at
    false-alarm rate 1e-3 as test_coverage_by_simulation."""
    rng = np.random.default_rng(np.random.SeedSequence(381))
    num = rng.beta(2, 5, (REPS, N))
    den = rng.beta(5, 2, (REPS, N))
    truth = (2 / 7) / (5 / 7)
    misses = 0
    for a, b in zip(num, den, strict=True):
        ci = mean_ratio_interval(a, b, numerator_range=(0, 1), denominator_range=(0, 1),
                                 alpha=ALPHA)
        misses += not (ci.low <= truth <= ci.high)
    assert binom.sf(misses - 1, REPS, ALPHA) >= FALSE_ALARM, misses


# ----------------------------------------------------------------------------- ratio


def test_ratio_is_the_ratio_of_bonferroni_intervals():
    rng = np.random.default_rng(7)
    a, b = rng.beta(2, 5, 200), rng.beta(5, 2, 150)
    r = mean_ratio_interval(a, b, numerator_range=(0, 1), denominator_range=(0, 1),
                            alpha=0.1)
    na, nb = mean_interval(a, 0, 1, 0.05), mean_interval(b, 0, 1, 0.05)
    assert r.low == pytest.approx(na.low / nb.high, rel=1e-12)
    assert r.high == pytest.approx(na.high / nb.low, rel=1e-12)
    assert r.low <= r.mean <= r.high and r.n == 150 and r.basis == "finite-sample"


def test_ratio_with_a_denominator_reaching_zero():
    rng = np.random.default_rng(8)
    r = mean_ratio_interval(rng.random(40), np.zeros(40), numerator_range=(0, 1),
                            denominator_range=(0, 1))
    assert r.high == math.inf and r.low > 0 and r.mean == math.inf
    lower, upper = mean_bounds(r, "MSE ratio")
    assert upper is None and lower is not None


def test_ratio_refuses_a_negative_range():
    with pytest.raises(ValueError, match="nonnegative.*denominator.*-1"):
        mean_ratio_interval([0.5], [0.5], numerator_range=(0, 1), denominator_range=(-1, 1))


# ----------------------------------------------------------------------------- asymptotic


def test_asymptotic_route_never_decides():
    x = np.random.default_rng(9).normal(0.3, 0.01, 1000)
    ci = mean_interval_asymptotic(x, 0.05)
    assert ci.basis == "asymptotic" and ci.low < 0.3 < ci.high
    lower, upper = mean_bounds(ci, "MSE over 1000 seeds")
    assert lower.basis.value == upper.basis.value == "asymptotic"
    assert lower.confidence == upper.confidence == 0.95
    # the interval lies far below 0.5: a finite-sample bound would decide, this one cannot
    v = decide(CLAIM, "as printed", Claimed("MSE", 0.5, Direction.AT_MOST), lower=lower,
               upper=upper)
    assert v.verdict == "inconclusive" and "approx." in v.sentence


def test_finite_sample_bounds_decide():
    x = np.random.default_rng(10).beta(2, 5, 500)
    lower, upper = mean_bounds(mean_interval(x, 0, 1, 0.05), "loss over 500 seeds")
    assert lower.basis.value == "finite-sample" and lower.confidence == 0.95
    assert decide(CLAIM, "r", Claimed("loss", 0.5), lower=lower, upper=upper).verdict == \
        "holds"
    assert decide(CLAIM, "r", Claimed("loss", 0.1), lower=lower, upper=upper).verdict == \
        "refuted"
    one = mean_bounds(mean_interval(x, 0, 1, 0.05, side="upper"), "loss")
    assert one[0] is None and one[1].value <= 1


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("samples, lo, hi, alpha, match", [
    ([0.1, float("nan")], 0, 1, 0.05, "nan"),
    ([], 0, 1, 0.05, "empty"),
    ([[0.1, 0.2]], 0, 1, 0.05, "1-D"),
    ([0.1, 1.5, 2.0], 0, 1, 0.05, r"samples\[1\] = 1.5 .*outside"),
    ([0.1], 1, 1, 0.05, "lo < hi.*lo = 1"),
    ([0.1], 0, float("inf"), 0.05, "finite"),
    ([0.1], 0, 1, 0.0, "alpha.*0.0"),
    ([0.1], 0, 1, 1.5, "alpha.*1.5"),
    ([0.1], 0, 1, float("nan"), "alpha.*nan"),
])
def test_bad_input_is_named(samples, lo, hi, alpha, match):
    with pytest.raises(ValueError, match=match):
        mean_interval(samples, lo, hi, alpha)


def test_bad_side_and_method():
    with pytest.raises(ValueError, match="side.*'both'"):
        mean_interval([0.1], 0, 1, side="both")
    with pytest.raises(ValueError, match="method.*'hoeffding'"):
        mean_interval([0.1], 0, 1, method="hoeffding")
    with pytest.raises(ValueError, match="at least 2"):
        mean_interval_asymptotic([0.1])


# ----------------------------------------------------------------------------- epsilon


@pytest.mark.parametrize("s_low, s_high, std, delta", [
    (0.5, 1.0, 1.0, 1e-5), (0.9, 1.1, 3.0, 1e-6), (2.0, 2.0, 1.5, 1e-3)])
def test_epsilon_bracket_is_the_exact_bracket_at_both_ends(s_low, s_high, std, delta):
    lo, hi = epsilon_bracket_from_sensitivity(s_low, s_high, std, delta)
    assert lo == gaussian_epsilon_bracket_exact(std / s_low, delta)[1][0]
    assert hi == gaussian_epsilon_bracket_exact(std / s_high, delta)[1][1]
    assert 0 <= lo <= hi


def test_epsilon_bracket_is_monotone_and_composes():
    grid = np.linspace(0.1, 3, 12)
    highs = [epsilon_bracket_from_sensitivity(s, s, 1.0, 1e-5)[1] for s in grid]
    assert all(a < b for a, b in zip(highs, highs[1:], strict=False))
    # 4 compositions of sigma are one Gaussian of multiplier sigma / 2: sensitivity x 2
    four = epsilon_bracket_from_sensitivity(0.5, 1.0, 2.0, 1e-5, steps=4)
    one = epsilon_bracket_from_sensitivity(1.0, 2.0, 2.0, 1e-5)
    assert four == pytest.approx(one, rel=1e-9, abs=1e-12)
    assert epsilon_bracket_from_sensitivity(0.0, 1.0, 1.0, 1e-5)[0] == 0.0
    assert epsilon_bracket_from_sensitivity(0.0, 0.0, 1.0, 1e-5) == (0.0, 0.0)


@pytest.mark.parametrize("args, kwargs, match", [
    ((float("nan"), 1.0, 1.0, 1e-5), {}, "sensitivity_low.*nan"),
    ((-0.1, 1.0, 1.0, 1e-5), {}, "sensitivity_low.*-0.1"),
    ((1.0, 0.5, 1.0, 1e-5), {}, "sensitivity_low 1.0 exceeds sensitivity_high 0.5"),
    ((0.5, 1.0, 0.0, 1e-5), {}, "noise_std.*0.0"),
    ((0.5, 1.0, -1.0, 1e-5), {}, "noise_std.*-1.0"),
    ((0.5, 1.0, 1.0, 0.0), {}, "delta.*0.0"),
    ((0.5, 1.0, 1.0, 1.0), {}, "delta.*1.0"),
    ((0.5, 1.0, 1.0, 1e-5), {"steps": 0}, "steps.*0"),
    ((0.5, 1.0, 1.0, 1e-5), {"steps": 1.5}, "steps.*1.5"),
])
def test_epsilon_bracket_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        epsilon_bracket_from_sensitivity(*args, **kwargs)


def test_mean_interval_is_a_frozen_value():
    ci = MeanInterval(0.1, 0.2, 0.05, "two-sided", "m", 3, 0.15)
    with pytest.raises(AttributeError):
        ci.low = 0.0
