"""The plain sentence of a verdict and of a claim (issue 41, item 4): written by the kernel
from the stored basis, numbers rounded toward their safe side and never cut, and the
terminal's claim lines (one per claim in a pipe, wrapped at spaces on a terminal)."""

from __future__ import annotations

import json

import pytest

from dpclaims.claims import Claim, ReadingKind, claims_summary
from dpclaims.claims.core import Reading, to_jsonable
from dpclaims.claims.headline import claim_sentence
from dpclaims.claims.kernel import (
    Bound,
    Claimed,
    Part,
    decide,
    decide_all,
    decide_by_tests,
    not_checkable,
    plain_sentence,
    reading_number,
    shortfall,
)
from dpclaims.cli import claim_lines

EPS = Claim("p/eps", "P v0", "Sec. 3", "the released posterior is (1, 1e-5)-DP", "accounting",
            kind="privacy-number")
EXACT = dict(basis="exact")


def _record(verdicts) -> dict:
    """The claim's results.json record, through JSON as a report reads it."""
    (record,) = json.loads(json.dumps(to_jsonable(claims_summary(verdicts))))
    return record


@pytest.mark.parametrize("x, toward, text", [
    (22.440477835, "down", "22.4"), (22.440477835, "up", "22.5"), (2.4851, "up", "2.49"),
    (400000.0, "nearest", "400000"), (1.631e-05, "down", "1.63e-05"), (0.5, "up", "0.5"),
    (float("inf"), "up", "inf"), ("inf", "down", "inf"), (-10.41, "up", "-10.4"),
    (-10.41, "down", "-10.5"), (0.3, "down", "0.3")])
def test_numbers_round_toward_their_safe_side(x, toward, text):
    assert reading_number(x, toward) == text


def test_reading_number_rejects_unknown_rounding():
    with pytest.raises(ValueError, match="toward"):
        reading_number(1.0, "sideways")
    with pytest.raises(ValueError, match="digits"):
        reading_number(1.0, "up", 0)


def test_refuted_says_how_many_times_too_small():
    v = decide(EPS, "shuffled pass", Claimed("epsilon", 1.0),
               lower=Bound(22.440477835, "exact composition (T = 100)", **EXACT))
    s = plain_sentence(v.verdict, v.evidence["basis"])
    assert s == ("Claimed epsilon at most 1; certified at least 22.4 (exact composition, "
                 "exact): the claim is at least 22.4x too small.")
    assert shortfall(v.evidence["basis"]) == pytest.approx([22.440477835])


def test_holds_with_an_upper_bound_rounded_up():
    v = decide(EPS, "pld", Claimed("epsilon", 2.52, printed="2.52"),
               upper=Bound(2.4851, "dp_accounting-pld", **EXACT))
    assert plain_sentence(v.verdict, v.evidence["basis"]) == (
        "Claimed epsilon at most 2.52; certified at most 2.49 (dp_accounting-pld, exact): "
        "holds.")


def test_a_bound_close_to_the_claim_keeps_its_side():
    # 3 digits would print 1 for a lower bound of 1.0004 refuting "at most 1"
    v = decide(EPS, "r", Claimed("epsilon", 1.0), lower=Bound(1.0004, "t", **EXACT))
    assert v.verdict == "refuted"
    assert "at least 1.0004 (t, exact)" in plain_sentence(v.verdict, v.evidence["basis"])
    # a search's largest ratio less its rounding allowance, just below the claim: its
    # digits say how close it came (3 digits, "1.99", would understate it)
    v = decide(EPS, "r", Claimed("epsilon", 2.0), lower=Bound(1.9999999, "t", **EXACT))
    assert "at least 1.9999999 (t, exact), no certified upper bound" in plain_sentence(
        v.verdict, v.evidence["basis"])
    # and an upper bound of 0.99996 holding "at most 1" is not printed as 1
    v = decide(EPS, "r", Claimed("epsilon", 1.0), upper=Bound(0.99996, "t", **EXACT))
    assert "at most 0.99996 (t, exact): holds." in plain_sentence(v.verdict,
                                                                   v.evidence["basis"])


def test_a_bound_equal_to_the_claim_is_said_so():
    """check-variant's accounting: the claimed epsilon is dp_accounting's own number, and
    its PLD upper bound equals it to the last digit."""
    eps = 2.52372260996747
    v = decide(EPS, "r", Claimed("epsilon", eps), upper=Bound(eps, "dp_accounting-pld",
                                                              **EXACT))
    assert plain_sentence(v.verdict, v.evidence["basis"]) == (
        "Claimed epsilon at most 2.524; certified at most the claimed 2.524 "
        "(dp_accounting-pld, exact): holds.")


def test_statistical_bounds_name_their_confidence_and_missing_end():
    v = decide(EPS, "audit", Claimed("epsilon", 3.418),
               lower=Bound(2.2419, "Clopper-Pearson audit, 4000 trials per dataset",
                           confidence=0.95, basis="finite-sample"))
    assert plain_sentence(v.verdict, v.evidence["basis"]) == (
        "Claimed epsilon at most 3.418; certified at least 2.24 (95% confidence), no "
        "certified upper bound: undecided.")


def test_not_checkable_names_what_it_needs_without_the_explanation():
    v = not_checkable(EPS, "r", "the UCI files (--data-dir): the embedded default is a "
                      "stand-in")
    assert plain_sentence(v.verdict, v.evidence["basis"]) == (
        "Not checkable: needs the UCI files (--data-dir).")


def test_tests_and_parts():
    v = decide_by_tests(EPS, "r", "A beats B", p_holds=0.007, p_refutes=0.99, level=0.05,
                        test="exact sign test over 8 paired runs (Bonferroni)")
    assert plain_sentence(v.verdict, v.evidence["basis"]) == (
        "Claimed: A beats B; exact sign test over 8 paired runs at level 0.05 (p = 0.007 "
        "for, 0.99 against): holds.")
    parts = [Part("a", Claimed("epsilon", 1.0), lower=Bound(1.42, "t", **EXACT)),
             Part("b", Claimed("epsilon", 1.0), lower=Bound(1.49, "t", **EXACT))]
    v = decide_all(EPS, "r", parts)
    assert plain_sentence(v.verdict, v.evidence["basis"]) == (
        "Refuted in 2 of 2 settings; a: Claimed epsilon at most 1; certified at least 1.42 "
        "(t, exact): the claim is at least 1.42x too small (1.42x to 1.49x over the 2 "
        "settings).")


def test_a_claim_refuted_only_beyond_the_papers_reading_says_so_with_the_ratio():
    """DP-SEP's Prop. 2 shape: under the paper's reading (a hidden shuffle) only an upper
    bound exists (inconclusive); with the pass order known to the adversary the exact
    composition refutes, 22x to 120x."""
    hidden = decide(EPS, Reading("hidden shuffle"), Claimed("epsilon", 1.0),
                    upper=Bound(22.440477858, "analytic-gaussian (hidden order)", **EXACT))
    known = [decide(EPS, Reading(f"order known ({k})", ReadingKind.STRONGER_THREAT_MODEL),
                    Claimed("epsilon", 1.0), lower=Bound(x, "exact composition", **EXACT))
             for k, x in (("wor", 22.440477835), ("T steps", 120.186265))]
    record = _record([hidden, *known])
    assert record["verdict"] == "inconclusive"
    assert claim_sentence(record) == (
        "Under the paper's reading 'hidden shuffle': Claimed epsilon at most 1; certified "
        "at most 22.5 (analytic-gaussian, exact), no certified lower bound: undecided. "
        "Under a threat model stronger than the paper's ('order known (wor)', 'order known "
        "(T steps)') it is refuted: the claim is at least 22.4x too small (up to 120x).")


def test_claim_lines_one_per_claim_in_a_pipe_wrapped_whole_on_a_terminal():
    v = decide(EPS, "shuffled pass", Claimed("epsilon", 1.0),
               lower=Bound(22.440477835, "exact composition (T = 100)", **EXACT))
    w = not_checkable(Claim("p/uci", "P v0", "Table 2", "RMSE", "experiment"), "r",
                      "the UCI files (--data-dir)")
    claims = [_record([v]), _record([w])]
    piped = claim_lines(claims)
    assert piped == [f"refuted       p/eps: {claim_sentence(claims[0])}",
                     f"not-checkable p/uci: {claim_sentence(claims[1])}"]
    wrapped = claim_lines(claims, width=40)
    assert all(len(x) <= 40 for x in wrapped) and len(wrapped) > 2
    # wrapping only moves spaces: every word (every number) is whole
    assert " ".join(x.strip() for x in wrapped).split() == " ".join(piped).split()
    with pytest.raises(ValueError, match="width"):
        claim_lines(claims, width=10)


def test_on_a_terminal_the_summary_wraps_at_its_width_and_cuts_nothing(monkeypatch, capsys):
    from dpclaims import cli

    class Terminal(cli._Console):
        def __init__(self, **kwargs):
            super().__init__(force_terminal=True, color_system=None, width=60, **kwargs)

    monkeypatch.setattr(cli, "_Console", Terminal)
    v = decide(EPS, "shuffled pass", Claimed("epsilon", 1.0),
               lower=Bound(22.440477835, "exact composition (T = 100)", **EXACT))
    cli._print_summary("title", [v], {"json": "results.json"})
    out = capsys.readouterr().out.splitlines()
    assert all(len(x) <= 60 for x in out), out
    words = " ".join(x.strip() for x in out).split()
    assert "not-checkable" in words and "22.4x" in words and "22.4" in words
    assert out[1].startswith("refuted       p/eps: Under the paper's reading")
