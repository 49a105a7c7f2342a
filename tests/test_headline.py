"""The headline rule (dpclaims.claims.headline) and results.json's claims list."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator, ValidationError

from dpclaims.claims import Claim, Verdict, headline
from dpclaims.reports import render

C = Claim("paper/c1", "P v0", "Sec. 2", "the mechanism is 1-DP", "audit")
D = Claim("paper/c2", "P v0", "Eq. 3", "the sensitivity is 2", "property test")


def v(reading, verdict, certificate=False, text=True, claim=C):
    return Verdict(claim, reading, verdict, f"{reading}: {verdict}.", certificate=certificate,
                   text_reading=text)


def test_refuted_needs_a_certificate_under_a_reading_of_the_text():
    verdict, sentence, reading = headline([v("a", "holds"), v("b", "refuted", True)])
    assert (verdict, reading) == ("refuted", "b") and "1 of 2" in sentence
    # an estimate alone never refutes
    assert headline([v("a", "holds"), v("b", "refuted", False)])[0] == "inconclusive"
    # the suite's own corrected reading never decides, but is mentioned
    verdict, sentence, _ = headline([v("a", "holds"), v("fix", "refuted", True, text=False)])
    assert verdict == "holds"
    verdict, sentence, _ = headline([v("a", "inconclusive"),
                                     v("fix", "refuted", True, text=False)])
    assert verdict == "inconclusive" and "fix" in sentence and "not the paper's, [fix]" in sentence


def test_holds_only_when_every_text_reading_holds():
    assert headline([v("a", "holds"), v("b", "holds")])[0] == "holds"
    verdict, sentence, reading = headline([v("a", "holds"), v("b", "inconclusive")])
    assert (verdict, reading) == ("inconclusive", "b") and "holds under [a]" in sentence
    assert headline([v("a", "not-checkable")])[0] == "not-checkable"
    assert headline([v("a", "not-checkable"), v("b", "holds")])[0] == "inconclusive"
    # only corrected readings: they decide, and the sentence says so
    verdict, sentence, _ = headline([v("fix", "holds", text=False)])
    assert verdict == "holds" and "only readings that are not the paper's" in sentence


def test_headline_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        headline([])
    with pytest.raises(ValueError, match="per claim"):
        headline([v("a", "holds"), v("a", "holds", claim=D)])


def test_results_json_has_one_claim_record_per_claim_and_validates(tmp_path):
    verdicts = [v("a", "holds"), v("b", "refuted", True), v("x", "holds", claim=D)]
    paths = render.write_report(tmp_path, title="t", meta={"seed": 0}, verdicts=verdicts,
                                sections=[])
    data = json.loads(paths["json"].read_text())
    assert data["schema_version"] == render.SCHEMA_VERSION
    assert [c["id"] for c in data["claims"]] == ["paper/c1", "paper/c2"]
    assert [c["verdict"] for c in data["claims"]] == ["refuted", "holds"]
    assert len(data["claims"][0]["readings"]) == 2
    schema = json.loads(render.SCHEMA_PATH.read_text())
    Draft202012Validator(schema).validate(data)
    data["claims"][0]["verdict"] = "probably"
    with pytest.raises(ValidationError):
        Draft202012Validator(schema).validate(data)
    # each reading is stored once, inside its claim; the reader gives the flat view
    assert "verdicts" not in data
    assert data["summary"] == {"claims": 2, "holds": 1, "refuted": 1, "inconclusive": 0,
                               "not-checkable": 0}
    from dpclaims.reports.results import load_results, reading_records

    flat = reading_records(load_results(tmp_path))
    assert [(r["claim_id"], r["reading"]) for r in flat] == [
        ("paper/c1", "a"), ("paper/c1", "b"), ("paper/c2", "x")]
    # the summary, then the headline table, then one section per claim, the quote once
    md = paths["markdown"].read_text()
    assert md.index("2 claims: 1 refuted, 1 holds") < md.index("## Claims") < md.index(
        "### `paper/c1`") < md.index("### `paper/c2`") < md.index("## Run")
    assert md.count("the mechanism is 1-DP") == 1 and "budget None" not in md
    html = paths["html"].read_text()
    assert html.index("class='summary'") < html.index("class='headline'") < html.index(
        "<section id='claim-paper-c1'>")
    assert "href='#claim-paper-c1'" in html and html.count("the mechanism is 1-DP") == 1


def test_load_results_refuses_an_old_or_missing_file(tmp_path):
    from dpclaims.claims import InputError
    from dpclaims.reports.results import load_results

    with pytest.raises(InputError, match="no results.json"):
        load_results(tmp_path)
    (tmp_path / "results.json").write_text(json.dumps({"schema_version": "2.1"}))
    with pytest.raises(InputError, match="schema_version '2.1'"):
        load_results(tmp_path / "results.json")


def test_a_holds_headline_carries_the_numbers_that_make_it_hold():
    from dpclaims.claims import claims_summary
    from dpclaims.claims.kernel import Bound, Claimed, decide

    held = decide(C, "as-printed", Claimed("epsilon", 1.0, printed="1.0"),
                  upper=Bound(0.8123, "dp_accounting RDP", basis="exact"))
    verdict, sentence, _ = headline([held])
    assert verdict == "holds"
    assert "epsilon <= 0.8123" in sentence and "dp_accounting RDP" in sentence
    (record,) = claims_summary([held])
    assert record["key"] == "epsilon <= 1.0 claimed; certified <= 0.8123 (exact)"
    refuted = decide(C, "b", Claimed("epsilon", 1.0),
                     lower=Bound(2.5, "audit", 0.95, basis="finite-sample"))
    assert claims_summary([refuted])[0]["key"] == (
        "epsilon <= 1 claimed; certified >= 2.5 (95%, finite-sample)")


def test_a_readings_kind_is_declared_never_read_off_its_name():
    from dpclaims.claims.core import Reading, ReadingKind

    # a plain string is a reading of the paper's text, whatever it says
    plain = Verdict(C, "real sampling: shuffled pass, order known to the adversary",
                    "refuted", "s", certificate=True)
    assert plain.text_reading is True
    known = Reading("order known to the adversary", ReadingKind.STRONGER_THREAT_MODEL)
    v = Verdict(C, known, "refuted", "s", certificate=True)
    assert v.text_reading is False
    assert v.to_dict()["reading_kind"] == "stronger-threat-model"
    assert v.to_dict()["reading"] == "order known to the adversary"
    fixed = Reading("sep-invariant-recalibrated", ReadingKind.CORRECTION)
    assert Reading("paper σ").joined(fixed).kind is ReadingKind.CORRECTION
    assert Reading("paper σ").joined("as-printed").kind is ReadingKind.TEXT
    assert fixed.joined(known).kind is ReadingKind.CORRECTION
    import pickle

    again = pickle.loads(pickle.dumps(fixed))
    assert again == fixed and again.kind is ReadingKind.CORRECTION
    with pytest.raises(ValueError):
        Reading("")
