"""VIPS BLR sensitivities with a certified upper end (issue 38 item 4): eq. 22 per
coordinate and eqs. 57 / 59 hold by interval branch and bound; planted false variants
(a smaller factor or constant) are refuted; vips/alg2-noise-calibration keeps the
searches' brackets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpclaims.papers.vips import certified
from dpclaims.papers.vips.catalogue import CLAIMS
from dpclaims.papers.vips.checks import (
    _blr_change,
    _sens_verdict,
    blr_pairs,
    check_alg2_calibration,
    check_blr_sensitivity,
)
from dpclaims.property_tests.sensitivity import check_sensitivity


@pytest.fixture(scope="module")
def verdicts():
    return {(v.claim.id, v.reading): v for v in check_blr_sensitivity(10, seed=0)}


def test_eq22_and_blr_sensitivity_hold_with_a_certified_upper_end(verdicts):
    eq22 = verdicts[("vips/eq22-sensitivity", "BLR statistics, per coordinate")]
    assert eq22.verdict == "holds" and eq22.certificate
    assert eq22.evidence["basis"]["upper"]["basis"] == "exact"
    assert "interval branch and bound" in eq22.evidence["basis"]["upper"]["source"]
    # eq. 22 per coordinate is tight for s1: the bracket is [1, 1]
    assert eq22.evidence["basis"]["lower"]["value"] == 1.0
    assert eq22.evidence["basis"]["upper"]["value"] == 1.0
    for reading in ("s1 (eq. 57: 2/S)", "s2 (eq. 59: 1/(2S))", "joint (hypot of both)"):
        v = verdicts[("vips/blr-sensitivity", reading)]
        assert v.verdict == "holds", (reading, v.sentence)
        assert "search_lower" in v.evidence
    # eq. 23 is not part of this change: the search alone, inconclusive
    assert verdicts[("vips/eq23-minibatch-sensitivity",
                     "BLR statistics, per coordinate")].verdict == "inconclusive"


def test_the_brackets_contain_the_analytic_suprema():
    exact = certified.analytic_suprema()
    for part, r in certified.l2_ratios().items():
        assert r.lower <= exact[part] <= r.upper, part
        assert r.upper <= exact[part] * (1 + 2e-3)


def test_alg2_keeps_the_searches_brackets(verdicts):
    blr = check_blr_sensitivity(10, seed=0)
    plain = check_blr_sensitivity(10, seed=0, certify=False)
    a = check_alg2_calibration(blr, plain[:1], plain[:1])[0]
    b = check_alg2_calibration(plain, plain[:1], plain[:1])[0]
    assert (a.verdict, a.sentence, a.evidence) == (b.verdict, b.sentence, b.evidence)


def _planted_search(ratio):
    return check_sensitivity(blr_pairs(), ratio, 1.0, max_examples=10, seed=0)


def test_planted_eq22_with_factor_one_is_refuted():
    """eq. 22 with 1/N in place of 2/N: the per-coordinate ratio doubles to 2."""
    def ratio(ex):
        d1, d2, s = _blr_change(ex)
        return max(np.max(np.abs(d1)) / (1 / s * 0.5), np.max(np.abs(d2)) / (1 / s * 0.25))

    parts = list(certified.per_coordinate_ratio(factor=1.0).values())
    v = _sens_verdict(CLAIMS["eq22"], "planted: 1/N for 2/N", _planted_search(ratio),
                      "per-coordinate change over (1/|D|) max|<s_l>|", 0, certified=parts)
    assert v.verdict == "refuted" and v.certificate
    assert v.evidence["basis"]["lower"]["value"] == 2.0


@pytest.mark.parametrize("delta_s1, expected", [(0.9, "refuted"), (1.0, "holds")])
def test_planted_s1_constant(delta_s1, expected):
    """Delta s1 claimed at 0.9/N is false (the supremum is 1/N, x' = -x): refuted; 1/N is
    the exact supremum (a tight true claim): it holds, the bracket is [1, 1]."""
    def ratio(ex):
        d1, _, s = _blr_change(ex)
        return np.linalg.norm(d1) / (delta_s1 / s)

    part = certified.l2_ratios(claimed=(delta_s1, 0.5))["s1"]
    v = _sens_verdict(CLAIMS["blr"], f"planted: {delta_s1}/N", _planted_search(ratio),
                      "L2 change over the stated bound", 0, certified=[part])
    assert v.verdict == expected, v.sentence
    assert part.lower <= 1 / delta_s1 <= part.upper


def test_planted_s2_below_the_supremum_is_refuted():
    part = certified.l2_ratios(claimed=(2.0, 0.3))["s2"]
    assert part.lower > 1 and math.isclose(part.lower, math.sqrt(2) / 4 / 0.3, rel_tol=1e-9)
