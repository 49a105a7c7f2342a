"""VIPS claims checked so far: the Gaussian log moment of Sec. 3.2.2."""

from __future__ import annotations

import numpy as np
import pytest

from dpclaims.papers.vips.checks import (
    check_log_moment,
    exact_log_moment,
    log_moment_gap_exact,
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
    # exact rational arithmetic: the printed formula is the log moment when sigma is the
    # absolute std (gap exactly 0) and Delta^2 times it when sigma is a multiplier
    a = v["sigma-absolute"]
    assert a.verdict == "holds" and a.certificate
    assert a.evidence["max_relative_gap_exact"] == 0
    assert "exact rational arithmetic" in a.sentence
    m = v["sigma-multiplier"]
    assert m.verdict == "refuted" and m.certificate
    assert m.evidence["max_relative_gap_exact"] == pytest.approx(1 - (2 / 39_074) ** 2)
    # printed / exact = Delta^2 with Delta = 2/N
    assert m.evidence["min_ratio_printed_over_exact"] == pytest.approx((2 / 39_074) ** 2,
                                                                       rel=1e-9)
    assert m.evidence["epsilon_single_release_from_printed"] < \
        m.evidence["epsilon_single_release_exact"]


def test_every_vips_claim_is_quoted_exactly():
    from pathlib import Path

    from dpclaims.papers.vips.checks import CLAIMS

    paper = Path(__file__).resolve().parents[2] / "shared" / "papers" / "vips.txt"
    if not paper.is_file():
        pytest.skip(f"paper text not found at {paper}")
    text = " ".join(paper.read_text().split())
    for c in CLAIMS.values():
        assert " ".join(c.statement.split()) in text, c.id


def test_blr_audit_uses_the_papers_claim_and_cannot_refute():
    from dpclaims.papers.vips.checks import audit_blr_step

    step, pair, res, exact = audit_blr_step(20_000, 0)
    # the paper's reading: one Gaussian of multiplier sigma per step
    import dp_accounting
    assert res.claim.epsilon == pytest.approx(dp_accounting.get_epsilon_gaussian(1.0, 1e-3))
    # the loose bounds make the pair's exact epsilon smaller than the claim
    assert exact < res.claim.epsilon and pair.search_cost["mu"] <= (0.75 ** 0.5) + 1e-9


def test_log_moment_gap_exact():
    from fractions import Fraction

    assert log_moment_gap_exact([1, 2, 64], 100, Fraction(3), multiplier=False) == 0
    assert log_moment_gap_exact([1, 2], 100, Fraction(1), multiplier=True) == \
        1 - Fraction(2, 100) ** 2


def test_sensitivity_searches_without_counterexample_are_inconclusive():
    """A search alone (certify=False) bounds a sensitivity from below only: without a
    counterexample it is inconclusive. With the certified upper ends (the default) the
    true claims of eq. 22 and eqs. 57 / 59 hold, eq. 23 (search only) stays inconclusive."""
    from dpclaims.papers.vips.checks import check_alg2_calibration, check_blr_sensitivity

    certified = check_blr_sensitivity(20, seed=0)
    by = {(v.claim.id, str(v.reading)): v.verdict for v in certified}
    assert by[("vips/eq22-sensitivity", "BLR statistics, per coordinate")] == "holds"
    assert {k: x for k, x in by.items() if k[0] == "vips/blr-sensitivity"} and all(
        x == "holds" for k, x in by.items() if k[0] == "vips/blr-sensitivity")
    assert all(x == "inconclusive" for k, x in by.items()
               if k[0] == "vips/eq23-minibatch-sensitivity")
    blr = check_blr_sensitivity(20, seed=0, certify=False)
    for v in blr:
        assert v.verdict == "inconclusive" and "No counterexample" in v.sentence
        assert v.evidence["basis"]["upper"] is None and not v.certificate
    calib = check_alg2_calibration(blr, blr[-1:], blr[-1:])
    assert [c.verdict for c in calib] == ["inconclusive"] * 3
    assert calib[0].evidence["basis"]["rule"] == "all parts"
