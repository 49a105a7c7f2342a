"""dpclaims.analysis.gaussian_dp: the standard-library Balle-Wang epsilon against
dp_accounting's get_epsilon_gaussian (the same equation, scipy's log_ndtr)."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.analysis.gaussian_dp import (
    _log_ndtr,
    composed_multiplier,
    gaussian_epsilon_bracket_exact,
    gaussian_log_delta,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(log_sigma=st.floats(math.log(0.05), math.log(500.0)),
       log_delta=st.floats(math.log(1e-12), math.log(0.5)))
def test_epsilon_equals_dp_accounting_and_its_bracket_holds_it(log_sigma, log_delta):
    sigma, delta = math.exp(log_sigma), math.exp(log_delta)
    reference = dp_accounting.get_epsilon_gaussian(sigma, delta)
    eps, (lo, hi) = gaussian_epsilon_bracket_exact(sigma, delta)
    # both root searches stop at an absolute width of 1e-12
    assert eps == pytest.approx(reference, rel=2e-12, abs=2e-12)
    assert lo <= reference <= hi and hi - lo <= 2.1e-9 + 2.1e-9 * eps


def test_the_bracket_is_on_both_sides_of_the_root():
    """The lower end violates delta and the upper end meets it (the widening moves them
    further out, so the widened ends do too)."""
    for sigma, delta in [(0.3, 1e-5), (1.0, 1e-5), (7.0, 1e-10), (50.0, 1e-3)]:
        _, (lo, hi) = gaussian_epsilon_bracket_exact(sigma, delta)
        assert gaussian_log_delta(sigma, lo) > math.log(delta)
        assert gaussian_log_delta(sigma, hi) <= math.log(delta)


def test_log_ndtr_matches_scipy_in_the_tail_and_the_bulk():
    from scipy.special import log_ndtr

    for x in np.concatenate([np.linspace(-200, -25, 50), np.linspace(-35, 8, 200)]):
        assert _log_ndtr(float(x)) == pytest.approx(float(log_ndtr(x)), rel=1e-13, abs=1e-300)


def test_already_zero_epsilon_and_composition():
    # delta above delta(0) = 2 Phi(1 / (2 sigma)) - 1: (0, delta)-DP
    assert gaussian_epsilon_bracket_exact(100.0, 0.1)[0] == 0.0
    assert composed_multiplier(3.0, 9) == pytest.approx(1.0)


@pytest.mark.parametrize(("sigma", "delta", "name"), [
    (0.0, 1e-5, "noise_multiplier"), (-1.0, 1e-5, "noise_multiplier"),
    (float("nan"), 1e-5, "noise_multiplier"), (1.0, 0.0, "delta"), (1.0, 1.0, "delta"),
    (1.0, float("nan"), "delta"), (1e-9, 1e-5, "noise_multiplier"),
])
def test_bad_input_names_the_value(sigma, delta, name):
    with pytest.raises(ValueError, match=name):
        gaussian_epsilon_bracket_exact(sigma, delta)
