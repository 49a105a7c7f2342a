"""VIPS claims checked so far: the Gaussian log moment of Sec. 3.2.2."""

from __future__ import annotations

import numpy as np
import pytest

from dpclaims.reports.vips import (
    check_log_moment,
    exact_log_moment,
    printed_log_moment,
)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_exact_log_moment_is_lambda_lambda_plus_one_over_two_sigma_squared(sigma):
    lam = np.arange(1, 20.0)
    np.testing.assert_allclose(exact_log_moment(lam, sigma), lam * (lam + 1) / (2 * sigma**2),
                               rtol=1e-12)
    # the printed formula is the exact one when sigma is the absolute std and Delta = 1
    np.testing.assert_allclose(printed_log_moment(lam, 1.0, sigma),
                               exact_log_moment(lam, sigma), rtol=1e-12)


def test_log_moment_verdicts_by_reading():
    v = {x.reading: x for x in check_log_moment()}
    assert v["sigma-absolute"].verdict == "holds"
    m = v["sigma-multiplier"]
    assert m.verdict == "refuted" and m.certificate
    # printed / exact = Delta^2 with Delta = 2/N
    assert m.evidence["min_ratio_printed_over_exact"] == pytest.approx((2 / 39_074) ** 2,
                                                                       rel=1e-9)
    assert m.evidence["epsilon_single_release_from_printed"] < \
        m.evidence["epsilon_single_release_exact"]
