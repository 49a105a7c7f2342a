"""The DP-SEP tables catalogue: printed numbers, arithmetic checks, statement verdicts."""

import numpy as np
import pytest

from dpclaims.papers.dpsep import checks_tables as T


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
    v = {x.reading: x for x in T.table_consistency_verdicts(0, "smoke")}
    # The mean of two columns printed to 4 decimals is known only to ± 5e-05, the same
    # width as the printed average's own rounding: equality is certified only where the
    # mean of the printed inputs equals the printed average exactly (4 rows); the other
    # 6 rows are consistent with it (gap 5e-05) but not certified, and none is off.
    avg = v["arithmetic: average F-norm = (mean + covariance) / 2"]
    assert avg.verdict == "inconclusive" and not avg.certificate
    assert "4 of 10 part(s) hold, none is refuted" in avg.sentence
    assert avg.evidence["rows_off"] == []
    parts = {p["label"]: p["verdict"] for p in avg.evidence["basis"]["parts"]}
    assert parts["SEP (ε = ∞)"] == parts["DP-SEP (ε = 5)"] == "holds"      # exact means
    assert parts["DP-EM (ε = 5)"] == "inconclusive"  # (10.4548 + 3.7573) / 2 = 7.10605
    # v2's relabelled row: one of the two labels is wrong, but nothing bounds the privacy
    # level of the run behind it, so neither version's label is refuted.
    row = v["cross-version: the ε = 5.5 row"]
    assert row.verdict == "inconclusive" and not row.certificate
    assert "one of the two labels is wrong" in row.sentence
    assert row.evidence["identical"] and row.evidence["basis"]["rule"] == "undecided"
    same = v["cross-table: Table 5's DP-SEP column = Table 3's"]
    assert same.verdict == "holds" and same.certificate
    assert "Holds in all 11 part(s)" in same.sentence  # 6 means, 5 spreads (Year: ± NA)


def test_printed_bracket_is_the_printed_interval_only_when_equal():
    from decimal import Decimal

    lo, hi = T._bracket_of_printed(Decimal("0.0012"), 5e-05, "0.0012", "s")
    c = T.Claimed("x", 0.0012, T.Direction.EQUALS, printed="0.0012")
    assert (lo.value, hi.value) == (c.low, c.high)
    # touching the claimed interval at one point: widened, never decided by rounding
    lo, hi = T._bracket_of_printed(Decimal("0.0013"), 5e-05, "0.0012", "s")
    assert lo.value < c.high
    with pytest.raises(ValueError, match="decimals"):
        T._printed(0.12345, 4)


def test_dataset_size_verdict_exact_counts():
    ok = T.dataset_size_verdict({"Wine": (1599, 11)}, 0, "smoke")
    # one set checked: the table (6 sets, Year never available offline) is not certified
    assert ok.verdict == "inconclusive" and "2 of 12 part(s) hold" in ok.sentence
    every = T.dataset_size_verdict(dict(T.DATASET_SIZES), 0, "smoke")
    assert every.verdict == "holds" and every.certificate
    off = T.dataset_size_verdict({"Wine": (1598, 11)}, 0, "smoke")
    assert off.verdict == "refuted" and "Wine size <= 1598" in off.sentence


def test_less_tests_exact_sign_test():
    # 5 of 5 pairs in the stated direction: p = 1/32 for; reversed: 1/32 against
    st = T.less_tests([1, 1, 1, 1, 1], [2, 2, 2, 2, 2])
    assert st["p_holds"] == pytest.approx(1 / 32) and st["p_refutes"] == 1.0
    st = T.less_tests([2, 2, 2, 2, 2], [1, 1, 1, 1, 1])
    assert st["p_refutes"] == pytest.approx(1 / 32) and st["p_holds"] == 1.0
    # 4 pairs can never reach 0.05 (1/16 > 0.05); ties are dropped; +inf is worst
    assert T.less_tests([1, 1, 1, 1], [2, 2, 2, 2])["p_holds"] == pytest.approx(1 / 16)
    st = T.less_tests([1, 1, np.inf], [1, 2, 2])
    assert (st["n_ties"], st["n_in_stated_direction"], st["n_opposite"]) == (1, 1, 1)
    with pytest.raises(ValueError, match="NaN"):
        T.less_tests([np.nan], [1.0])


def test_within_margin_tests():
    a = np.array([1.0, 1.01, 0.99, 1.0, 1.02, 0.98])
    st = T.within_margin_tests(a, np.ones(6), 0.1)
    assert st["p_holds"] == pytest.approx(1 / 64) and st["p_refutes"] == 1.0
    # all six differences above the margin: 1/64, doubled for the two directions
    st = T.within_margin_tests(a + 1, np.ones(6), 0.1)
    assert st["p_refutes"] == pytest.approx(2 / 64) and st["p_holds"] == 1.0
    # a printed margin read at its precision: "within" must hold at its smallest value,
    # "outside" at its largest (differences of 0.1 are neither)
    st = T.within_margin_tests(np.full(6, 1.1), np.ones(6), 0.095, 0.105)
    assert st["p_holds"] == 1.0 and st["p_refutes"] == 1.0
    with pytest.raises(ValueError, match="margin"):
        T.within_margin_tests(a, a, 0.0)
    with pytest.raises(ValueError, match="margin"):
        T.within_margin_tests(a, a, 0.1, 0.05)


def test_combined_p_values_bonferroni_over_cases():
    def case(p_h, p_r):
        return {"p_holds": p_h, "p_refutes": p_r}

    per = {"a": case(0.01, 1.0), "b": case(0.02, 1.0), "c": case(0.5, 0.01)}
    # all: the largest p for (x3), the smallest against (x3)
    assert T.combined_p_values(per, "all")[:2] == pytest.approx((1.0, 0.03))
    # most (2 of 3 hold; fails when 2 of 3 fail): 2nd smallest for, 2nd smallest against
    assert T.combined_p_values(per, "most")[:2] == pytest.approx((0.06, 1.0))
    # any: the smallest for; fails only when all 3 fail: the largest against
    assert T.combined_p_values(per, "any")[:2] == pytest.approx((0.03, 1.0))
    assert T.combined_p_values({}, "all")[:2] == (None, None)
    with pytest.raises(ValueError, match="rule"):
        T.combined_p_values(per, "some")


def _bnn_results(shifts, n=8, sets=("Kin8nm",)):
    rng = np.random.default_rng(0)
    base = 0.09 + 0.001 * rng.standard_normal(n)

    def m(shift):
        return {"rmse": list(base + shift), "loglik": list(-base - shift), "info": {}}

    return {s: {"methods": {k: m(v) for k, v in shifts.items()}} for s in sets}


def test_bnn_statement_verdicts_on_synthetic_results():
    res = _bnn_results({
        "SEP": 0.0, "EP": 0.0, "VI": 0.05, "point estimate": 0.05,
        "SEP clipped [sep-invariant]": -0.01,
        "DP-SEP [honest σ, sep-invariant-recalibrated]": 0.5,
        "DP-SEP [paper σ, sep-invariant]": -0.01})
    out = {(v.claim.id, v.reading): v
           for v in T.bnn_statement_verdicts(res, 0, "smoke", "synthetic")}

    def check(key, reading, verdict, why):
        v = out[(key, reading)]
        assert v.verdict == verdict, v.sentence
        assert why in v.sentence, v.sentence
        assert v.evidence["basis"]["rule"] == "tests"
        assert v.certificate == (verdict != "inconclusive")

    # 8 of 8 splits in one direction: p = 1/256 <= 0.05
    check("dpsep/bnn-dpsep-better-kin8nm", "paper σ, sep-invariant", "holds",
          "rejects that it fails (p = 0.003906)")
    check("dpsep/bnn-dpsep-better-kin8nm", "honest σ, sep-invariant-recalibrated",
          "refuted", "rejects it (p = 0.003906)")
    # every difference (0.5) beyond the paper's ± for SEP on Kin8nm (0.0042, read as at
    # most 0.00425): 2/256 against
    check("dpsep/bnn-dpsep-comparable-to-sep", "honest σ, sep-invariant-recalibrated",
          "refuted", "rejects it (p = 0.007812)")
    check("dpsep/bnn-clipping-reduces-rmse", "sep-invariant", "holds", "p = 0.003906")
    check("dpsep/bnn-ep-beats-vi", "test log-likelihood", "holds", "p = 0.003906")
    check("dpsep/bnn-dpsep-beats-point-estimate", "paper σ, sep-invariant", "holds",
          "p = 0.003906")


def test_bnn_statement_verdicts_most_rule_and_stand_in():
    # DP-SEP better on 2 of 3 sets (8 of 8 splits each), worse on the third: 'most' holds
    # with p = 3 x 1/256 (the 2nd smallest p-value for, Bonferroni over 3 sets)
    sets = ("Kin8nm", "Wine", "Power")
    res = _bnn_results({"SEP": 0.0, "DP-SEP [paper σ, as-printed]": -0.01}, sets=sets)
    res["Power"]["methods"]["DP-SEP [paper σ, as-printed]"]["rmse"] = [
        x + 0.02 for x in res["Power"]["methods"]["SEP"]["rmse"]]
    out = {(v.claim.id, v.reading): v
           for v in T.bnn_statement_verdicts(res, 0, "smoke", "synthetic")}
    v = out[("dpsep/bnn-dpsep-better-than-sep", "paper σ, as-printed")]
    assert v.verdict == "holds" and v.evidence["basis"]["p_holds"] == pytest.approx(3 / 256)
    # 'comparable' must hold on every set: Wine (± 0.0436) and Power (± 0.1356) are within,
    # but on Kin8nm the difference 0.01 exceeds the printed ± 0.0042 in all 8 splits:
    # 2/256 for the two directions, times 3 sets
    v = out[("dpsep/bnn-dpsep-comparable-to-sep", "paper σ, as-printed")]
    assert v.verdict == "refuted"
    assert v.evidence["basis"]["p_refutes"] == pytest.approx(3 * 2 / 256)
    assert v.evidence["per_set"]["Wine"]["p_holds"] == pytest.approx(1 / 256)
    # the stand-in data decide nothing: not-checkable, with the tests' p-values as context
    stand = T.bnn_statement_verdicts(res, 0, "smoke", "synthetic", stand_in=True)
    assert {v.verdict for v in stand} == {"not-checkable"}
    v = next(v for v in stand if v.claim.id == "dpsep/bnn-dpsep-better-than-sep")
    assert "the paper's UCI data sets" in v.sentence and "p = 0.0117 for" in v.sentence
    assert "Holds" not in v.sentence and "Refuted" not in v.sentence
