"""DPVIm eq. (11) / (20) and Cor. 3.1 in interval arithmetic (issue 38 item 4): the true
identities hold (certified gap <= 2^-64), planted wrong ones are refuted; the interval
ELBO is the reference implementation's."""

from __future__ import annotations

import numpy as np
import pytest
from mpmath import iv

from dpclaims.analysis.enclosures import lower_float, precision, upper_float
from dpclaims.families.dpvi.dpvi import (
    FullRank,
    LinearRegression,
    LogisticRegression,
    MeanField,
    Transform,
    elbo_single_sample,
)
from dpclaims.papers.dpvim import exact
from dpclaims.papers.dpvim.checks import check_aligned_identity, check_corollary31


@pytest.mark.parametrize("full_rank", [False, True])
def test_interval_elbo_encloses_the_reference_elbo(full_rank):
    for p in exact.identity_points(3, full_rank, n=6):
        fam = (FullRank if full_rank else MeanField)(p["d"], Transform(p["transform"]))
        model = LogisticRegression() if p["logistic"] else LinearRegression()
        ref = elbo_single_sample(model, fam, np.array([p["xi"]]), np.array([p["eta"]]),
                                 np.array([p["x"]]), np.array([p["y"]]))[0]
        with precision(exact.PRECISION):
            val = exact._elbo([iv.mpf(v) for v in p["xi"]], p)
        assert lower_float(val) - 1e-9 * (1 + abs(ref)) <= ref <= upper_float(val) + 1e-9 * (
            1 + abs(ref))


def test_aligned_identity_holds_and_a_wrong_factor_is_refuted():
    good = check_aligned_identity(5, seed=0)
    assert [v.verdict for v in good] == ["holds", "holds"]
    assert all(v.evidence["basis"]["upper"]["value"] <= exact.IDENTITY_TOLERANCE
               for v in good)
    bad = check_aligned_identity(5, seed=0, factor=2.0)
    assert [v.verdict for v in bad] == ["refuted", "refuted"]
    assert all(v.evidence["basis"]["lower"]["value"] > 0.1 for v in bad)


def test_corollary31_holds_and_a_data_reading_scale_update_is_refuted():
    assert [v.verdict for v in check_corollary31(5, seed=0)] == ["holds", "holds"]
    assert [v.verdict for v in check_corollary31(5, seed=0, plant=True)] == ["refuted",
                                                                              "refuted"]


def test_without_certify_the_search_decides_alone():
    assert [v.verdict for v in check_aligned_identity(5, seed=0, certify=False)] == [
        "inconclusive", "inconclusive"]
