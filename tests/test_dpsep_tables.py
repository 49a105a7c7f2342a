"""The DP-SEP tables catalogue: printed numbers, arithmetic checks, statement verdicts."""

import numpy as np
import pytest

from dpclaims.claims.checks import dpsep_tables as T


def test_printed_numbers_spot_checks():
    # Values copied from the papers; a typo here would silently change a verdict.
    assert T.TABLES["v0-table2-rmse"].rows["Kin8nm"]["DP-SEP"] == (0.078, 0.0022)
    assert T.TABLES["v1-table1-mog"].rows["DP-EM (ε = 1)"]["F-norm on covariance"] == (
        57.8665, None)
    assert T.TABLES["v0-table3-loglik"].rows["Naval"]["VI"] == (3.734, 0.116)
    assert T.TABLES["v1-table5-point"].rows["Protein"]["Point Estimate"] == (4.539, 0.0288)
    # every table is a catalogue claim with a distinct id
    ids = [t.claim().id for t in T.PAPER_TABLES]
    assert len(ids) == len(set(ids)) == 8


def test_consistency_verdicts():
    v = {x.reading: x.verdict for x in T.table_consistency_verdicts(0, "smoke")}
    assert v["arithmetic: average F-norm = (mean + covariance) / 2"] == "holds"
    assert v["cross-version: the ε = 5.5 row"] == "refuted"
    assert v["cross-table: Table 5's DP-SEP column = Table 3's"] == "holds"


def test_less_decision_exact_sign_test():
    # 5 of 5 pairs in the stated direction: p = 1/32 <= 0.05 -> holds; reversed -> refuted
    assert T.less_decision([1, 1, 1, 1, 1], [2, 2, 2, 2, 2], 0.05)[0] == "holds"
    assert T.less_decision([2, 2, 2, 2, 2], [1, 1, 1, 1, 1], 0.05)[0] == "refuted"
    # 4 pairs can never reach 0.05 (1/16 > 0.05)
    assert T.less_decision([1, 1, 1, 1], [2, 2, 2, 2], 0.05)[0] == "inconclusive"
    with pytest.raises(ValueError, match="NaN"):
        T.less_decision([np.nan], [1.0], 0.05)


def test_within_margin_decision():
    a = np.array([1.0, 1.01, 0.99, 1.0, 1.02, 0.98])
    assert T.within_margin_decision(a, np.ones(6), 0.1, 0.05)[0] == "holds"
    assert T.within_margin_decision(a + 1, np.ones(6), 0.1, 0.05)[0] == "refuted"
    with pytest.raises(ValueError, match="margin"):
        T.within_margin_decision(a, a, 0.0, 0.05)


def test_combine_rules():
    assert T.combine({"a": "holds", "b": "holds"}, "all") == "holds"
    assert T.combine({"a": "holds", "b": "inconclusive"}, "all") == "inconclusive"
    assert T.combine({"a": "holds", "b": "refuted"}, "all") == "refuted"
    assert T.combine({"a": "holds", "b": "holds", "c": "refuted"}, "most") == "holds"
    assert T.combine({"a": "holds", "b": "refuted"}, "most") == "refuted"
    assert T.combine({"a": "holds", "b": "inconclusive", "c": "inconclusive"},
                     "most") == "inconclusive"


def test_bnn_statement_verdicts_on_synthetic_results():
    rng = np.random.default_rng(0)
    base = 0.09 + 0.001 * rng.standard_normal(8)

    def m(shift):
        return {"rmse": list(base + shift), "loglik": list(-base - shift), "info": {}}

    res = {"Kin8nm": {"methods": {
        "SEP": m(0.0), "EP": m(0.0), "VI": m(0.05), "point estimate": m(0.05),
        "SEP clipped [sep-invariant]": m(-0.01),
        "DP-SEP [honest σ, sep-invariant-recalibrated]": m(0.5),
        "DP-SEP [paper σ, sep-invariant]": m(-0.01)}}}
    out = {(v.claim.id, v.reading): v.verdict
           for v in T.bnn_statement_verdicts(res, 0, "smoke", "synthetic")}
    assert out[("dpsep/bnn-dpsep-better-kin8nm", "paper σ, sep-invariant")] == "holds"
    assert out[("dpsep/bnn-dpsep-better-kin8nm",
                "honest σ, sep-invariant-recalibrated")] == "refuted"
    assert out[("dpsep/bnn-dpsep-comparable-to-sep",
                "honest σ, sep-invariant-recalibrated")] == "refuted"
    assert out[("dpsep/bnn-clipping-reduces-rmse", "sep-invariant")] == "holds"
    assert out[("dpsep/bnn-ep-beats-vi", "test log-likelihood")] == "holds"
    assert out[("dpsep/bnn-dpsep-beats-point-estimate", "paper σ, sep-invariant")] == "holds"
