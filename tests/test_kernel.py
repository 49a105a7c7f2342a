"""The verdict kernel (dpclaims.claims.kernel): the rule, the printed precision, the
sentences, and soundness in both directions as a property of any bracket."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclaims.claims import Claim
from dpclaims.claims.kernel import (
    Bound,
    Claimed,
    Direction,
    Estimate,
    Part,
    basis_key,
    decide,
    decide_all,
    decide_by_tests,
    not_checkable,
    outcome,
    printed_half_unit,
    undecided,
)

CLAIM = Claim("x/eps", "paper", "Sec. 1", "epsilon = 2.38", "accounting", kind="privacy-number")


@pytest.mark.parametrize("printed, half", [
    ("2.38", 0.005), ("0.5", 0.05), ("1.0", 0.05), ("2.50", 0.005), ("1.26e-3", 5e-6),
    ("8", 0.0), ("60000", 0.0), ("1e-5", 0.0), ("-0.25", 0.005), ("3.", 0.0),
])
def test_printed_half_unit(printed, half):
    assert printed_half_unit(printed) == pytest.approx(half, rel=1e-12, abs=0)


@pytest.mark.parametrize("bad", ["two", "", "1.2.3", "nan-ish"])
def test_printed_must_be_a_number(bad):
    with pytest.raises(ValueError, match="decimal number"):
        printed_half_unit(bad)


def test_printed_must_stand_for_the_value():
    with pytest.raises(ValueError, match="does not stand for"):
        Claimed("epsilon", 2.4, printed="2.38")
    with pytest.raises(ValueError, match="NaN"):
        Claimed("epsilon", math.nan)


# The issue's example: "2.38" stands for [2.375, 2.385]; 2.3824 does not refute it,
# 2.3876 does; a relative tolerance is not a generosity.
@pytest.mark.parametrize("lower, verdict", [(2.3824, "inconclusive"), (2.3876, "refuted"),
                                            (2.385, "inconclusive"), (2.38501, "refuted")])
def test_printed_precision_is_the_only_generosity(lower, verdict):
    c = Claimed("epsilon", 2.38, printed="2.38")
    assert outcome(c, Bound(lower, "exact", basis="exact"), None) == verdict


def test_a_claim_in_code_is_exact():
    c = Claimed("epsilon", 2.38)
    assert outcome(c, Bound(2.3801, "t", basis="exact"), None) == "refuted"
    assert outcome(c, None, Bound(2.3801, "t", basis="exact")) == "inconclusive"
    assert outcome(c, None, Bound(2.38, "t", basis="exact")) == "holds"


def test_the_false_holds_of_issue_21_cannot_happen():
    # a claim 3.66 against a true epsilon in [3.756, 3.776]: refuted, never holds
    c = Claimed("epsilon", 3.66, printed="3.66")
    assert outcome(c, Bound(3.756, "optimistic PLD", basis="exact"),
                   Bound(3.776, "pessimistic PLD", basis="exact")) == "refuted"
    assert outcome(c, None, Bound(3.776, "pessimistic PLD", basis="exact")) == "inconclusive"


@pytest.mark.parametrize("direction, lo, hi, verdict", [
    (Direction.AT_MOST, 0.5, 0.9, "holds"),
    (Direction.AT_MOST, 1.1, 1.3, "refuted"),
    (Direction.AT_MOST, 0.9, 1.1, "inconclusive"),
    (Direction.AT_LEAST, 1.1, 1.3, "holds"),
    (Direction.AT_LEAST, 0.5, 0.9, "refuted"),
    (Direction.AT_LEAST, 0.9, 1.1, "inconclusive"),
    (Direction.EQUALS, 1.0, 1.0, "holds"),
    (Direction.EQUALS, 1.1, 1.2, "refuted"),
    (Direction.EQUALS, 0.8, 0.9, "refuted"),
    (Direction.EQUALS, 0.9, 1.1, "inconclusive"),
])
def test_directions(direction, lo, hi, verdict):
    c = Claimed("q", 1.0, direction)
    assert outcome(c, Bound(lo, "a", basis="exact"), Bound(hi, "b", basis="exact")) == verdict


def test_contradicting_bounds_decide_nothing():
    c = Claimed("epsilon", 1.0)
    v = decide(CLAIM, "r", c, lower=Bound(2.0, "tool A", basis="exact"),
               upper=Bound(0.5, "tool B", basis="exact"))
    assert v.verdict == "inconclusive"
    assert "contradict" in v.sentence and "tool A" in v.sentence and "tool B" in v.sentence


def test_sentences_are_built_from_the_values():
    c = Claimed("epsilon", 2.38, printed="2.38")
    v = decide(CLAIM, "as-reported", c, lower=Bound(2.3851, "optimistic PLD", basis="exact"),
               upper=Bound(2.40, "pessimistic PLD", basis="exact"),
               context="sigma 1.1, 4680 steps.",
               estimates=[Estimate(2.39, "GDP fit")], seed=3)
    assert v.verdict == "refuted" and v.certificate
    assert v.sentence.startswith("Refuted: optimistic PLD (exact) certifies epsilon >= 2.3851")
    assert "read at its printed precision as <= 2.385" in v.sentence
    assert "sigma 1.1, 4680 steps." in v.sentence and "never deciding" in v.sentence
    basis = v.evidence["basis"]
    assert basis["claimed"]["stands_for"] == [pytest.approx(2.375), pytest.approx(2.385)]
    assert basis["lower"]["source"] == "optimistic PLD" and basis["upper"]["value"] == 2.40
    held = decide(CLAIM, "r", c, upper=Bound(2.3, "RDP", confidence=None, basis="exact"))
    assert held.verdict == "holds" and held.sentence.startswith("Holds: RDP (exact) certifies")
    open_ = decide(CLAIM, "r", c, lower=Bound(1.0, "audit", confidence=0.95, basis="finite-sample"))
    assert open_.verdict == "inconclusive" and not open_.certificate
    assert "95% confidence" in open_.sentence and "no certified upper bound" in open_.sentence


def test_certified_bounds_print_rounded_toward_their_safe_side():
    """A lower bound of 3.07975 never prints as 3.08 (nearest rounding would overstate
    it), an upper bound of 2.30011 never as 2.3; the refutation's printed pair keeps its
    relation (lower bound above the claim) however close the two numbers are."""
    c = Claimed("epsilon", 1.0)
    v = decide(CLAIM, "r", c, lower=Bound(3.07975, "audit", confidence=0.95,
                                          basis="finite-sample"))
    assert v.verdict == "refuted" and "epsilon >= 3.079," in v.sentence
    assert ">= 3.079 (95%" in basis_key(v.evidence["basis"])
    held = decide(CLAIM, "r", Claimed("epsilon", 2.4), upper=Bound(2.30011, "RDP", basis="exact"))
    assert "epsilon <= 2.301," in held.sentence and "<= 2.301" in basis_key(held.evidence["basis"])
    both = decide(CLAIM, "r", Claimed("epsilon", 1.5), lower=Bound(1.00049, "a", basis="exact"),
                  upper=Bound(2.00001, "b", basis="exact"))
    assert "lower bound 1 (" in both.sentence and "upper bound 2.001 (" in both.sentence
    close = decide(CLAIM, "r", Claimed("epsilon", 2.0), lower=Bound(2.00004, "a", basis="exact"))
    assert "epsilon >= 2.00004, above" in close.sentence


def test_evidence_basis_is_the_kernels():
    with pytest.raises(ValueError, match="basis"):
        decide(CLAIM, "r", Claimed("e", 1.0), evidence={"basis": 1})


def test_decide_all():
    parts = [Part("d=2", Claimed("P", 0.1), upper=Bound(0.05, "CP", basis="exact")),
             Part("d=4", Claimed("P", 0.1), lower=Bound(0.2, "CP", basis="exact"))]
    v = decide_all(CLAIM, "r", parts)
    assert v.verdict == "refuted" and "d=4" in v.sentence and "1 of 2" in v.sentence
    v = decide_all(CLAIM, "r", parts[:1])
    assert v.verdict == "holds"
    v = decide_all(CLAIM, "r", [parts[0], Part("d=8", Claimed("P", 0.1))])
    assert v.verdict == "inconclusive" and "d=8" in v.sentence
    with pytest.raises(ValueError):
        decide_all(CLAIM, "r", [])


@pytest.mark.parametrize("p_holds, p_refutes, verdict", [
    (0.01, 0.9, "holds"), (0.9, 0.01, "refuted"), (0.2, 0.3, "inconclusive"),
    (0.01, 0.01, "inconclusive"), (None, None, "inconclusive"), (0.05, 1.0, "holds"),
])
def test_decide_by_tests(p_holds, p_refutes, verdict):
    v = decide_by_tests(CLAIM, "r", "A beats B", p_holds=p_holds, p_refutes=p_refutes,
                        level=0.05, test="exact sign test")
    assert v.verdict == verdict
    assert "A beats B" in v.sentence


def test_not_checkable_and_undecided_name_their_reason():
    v = not_checkable(CLAIM, "r", ["the dataset size N", "delta"])
    assert v.verdict == "not-checkable" and "the dataset size N; delta" in v.sentence
    with pytest.raises(ValueError):
        not_checkable(CLAIM, "r", [])
    v = undecided(CLAIM, "r", "the audit has 2 trials, fewer than the 1000 it needs.")
    assert v.verdict == "inconclusive" and "2 trials" in v.sentence


# Soundness, both directions: whatever the true value t and whatever valid bracket
# around it, "holds" implies the claim is true and "refuted" that it is false.
finite = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(t=finite, c=finite, below=st.floats(0, 10) | st.none(),
       above=st.floats(0, 10) | st.none(),
       direction=st.sampled_from(list(Direction)),
       printed=st.sampled_from([None, 2, 3]))
def test_verdicts_are_sound_for_any_valid_bracket(t, c, below, above, direction, printed):
    if printed is not None:
        c = round(c, printed)
        claimed = Claimed("q", c, direction, printed=f"{c:.{printed}f}")
    else:
        claimed = Claimed("q", c, direction)
    lower = None if below is None else Bound(t - below, "lo", basis="exact")
    upper = None if above is None else Bound(t + above, "hi", basis="exact")
    v = outcome(claimed, lower, upper)
    true_claim = {Direction.AT_MOST: t <= claimed.high,
                  Direction.AT_LEAST: t >= claimed.low,
                  Direction.EQUALS: claimed.low <= t <= claimed.high}[direction]
    if v == "holds":
        assert true_claim
    if v == "refuted":
        assert not true_claim


def test_a_bonferroni_confidence_never_prints_as_100_percent():
    from dpclaims.claims.kernel import Bound

    b = Bound(0.1, "Clopper-Pearson, 72 parts", confidence=1 - 0.001 / 72, basis="finite-sample")
    assert "99.9986% confidence" in b.describe() and "100%" not in b.describe()
    assert "95% confidence" in Bound(0.1, "x", confidence=0.95, basis="finite-sample").describe()


# ----------------------------------------------------------- issue 38: every bound's basis
def test_a_bound_without_a_basis_is_refused():
    with pytest.raises(ValueError, match="has no basis"):
        Bound(1.0, "a tool")
    with pytest.raises(ValueError, match="basis must be one of"):
        Bound(1.0, "a tool", basis="vibes")
    with pytest.raises(ValueError, match="needs its confidence"):
        Bound(1.0, "CP", basis="finite-sample")
    with pytest.raises(ValueError, match="has no confidence"):
        Bound(1.0, "RDP", confidence=0.95, basis="exact")
    with pytest.raises(ValueError, match="only a proof names"):
        Bound(1.0, "RDP", basis="exact", proves="x/y")


@pytest.mark.parametrize("lower, upper", [(2.5, None), (None, 0.5), (0.9, 0.95),
                                          (1.5, 1.6), (-1.0, 0.2)])
def test_an_asymptotic_bound_never_decides(lower, upper):
    """Whatever its value, a normal-approximation bound is shown (as approx.), never
    decides: the verdict is the one with no bound at all."""
    c = Claimed("MSE ratio", 1.0)

    def approx(v):
        return None if v is None else Bound(v, "normal approximation", confidence=0.95,
                                            basis="asymptotic")

    v = decide(CLAIM, "r", c, lower=approx(lower), upper=approx(upper))
    assert v.verdict == "inconclusive" and not v.certificate
    assert "Shown, not deciding" in v.sentence and "approx." in v.sentence
    key = basis_key(v.evidence["basis"])
    assert key.startswith("MSE ratio <= 1 claimed; no certified bound; shown: ")
    assert "certified >=" not in key and "certified <=" not in key
    # the same numbers with a finite-sample basis decide
    if upper is not None and upper <= 1.0:
        fs = Bound(upper, "betting CI", confidence=0.95, basis="finite-sample")
        assert decide(CLAIM, "r", c, upper=fs).verdict == "holds"


def test_a_proof_never_decides_the_claim_it_proves_but_decides_others():
    c = Claimed("sensitivity", 2.0)
    own = Bound(2.0, "Lemma 3 of the paper", basis="proof", proves=CLAIM.id)
    v = decide(CLAIM, "r", c, upper=own)
    assert v.verdict == "inconclusive"
    assert "by proof of x/eps" in basis_key(v.evidence["basis"])
    other = Claim("x/privacy", "paper", "Thm. 1", "(1, 1e-5)-DP", "accounting")
    derived = Bound(0.8, "Balle-Wang at the sensitivity of Lemma 3", basis="proof",
                    proves=CLAIM.id)
    w = decide(other, "r", Claimed("epsilon", 1.0), upper=derived)
    assert w.verdict == "holds"
    assert basis_key(w.evidence["basis"]) == (
        "epsilon <= 1 claimed; certified <= 0.8 (by proof of x/eps)")
    # a proof that names no claim decides nothing
    bare = Bound(0.8, "a lemma", basis="proof")
    assert decide(other, "r", Claimed("epsilon", 1.0), upper=bare).verdict == "inconclusive"
    part = Part("p", Claimed("sensitivity", 2.0), upper=own)
    assert decide_all(CLAIM, "r", [part]).verdict == "inconclusive"
