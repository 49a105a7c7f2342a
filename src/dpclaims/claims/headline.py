"""A headline verdict per claim, from the verdicts of its readings.

A claim is checked under every reasonable reading of the paper; a reader wants
one bottom line per claim. The rule (stated in docs/design.rst and in every report):

1. **refuted** when a certificate refutes the claim under a reading of the
   paper's text (``Verdict.text_reading``); the headline names that reading
   (the first such, and how many refute);
2. **holds** only when every reading of the paper's text holds;
3. **not-checkable** when no reading of the paper's text could be checked;
4. otherwise **inconclusive**, saying which readings hold and which do not
   decide.

Readings that are not the paper's (``text_reading=False``: the suite's own
corrections, e.g. the noise recalibrated to the true sensitivity or the honest
accounting, and threat models stronger than the paper's, e.g. the order of a
shuffled pass known to the adversary) are listed with the claim but never decide
its headline; when such a reading is refuted, the headline says so in its
sentence. A claim with only such readings takes its
headline from them, and says that it does.
"""

from __future__ import annotations

from dpclaims.claims.core import Verdict

HEADLINE_RULE = (
    "refuted when a certificate refutes the claim under a reading of the paper's text "
    "(named); holds only when every such reading holds; not-checkable when none could be "
    "checked; inconclusive otherwise. Readings that are not the paper's (the suite's own "
    "corrections, threat models stronger than the paper's) are shown but do not decide.")


def headline(verdicts: list[Verdict]) -> tuple[str, str, str | None]:
    """(verdict, sentence, deciding reading or None) for the verdicts of one claim.

    Parameters
    ----------
    verdicts : list of Verdict
        All of one claim (same ``claim.id``), at least one.

    Raises
    ------
    ValueError
        An empty list, or verdicts of several claims.
    """
    if not verdicts:
        raise ValueError("a headline needs at least one verdict")
    ids = {v.claim.id for v in verdicts}
    if len(ids) != 1:
        raise ValueError(f"a headline is per claim; got verdicts of {sorted(ids)}")
    text = [v for v in verdicts if v.text_reading]
    own = [v for v in verdicts if not v.text_reading]
    deciding = text or own
    note = "" if text else " (only readings that are not the paper's were checked)"
    refuted = [v for v in deciding if v.verdict == "refuted" and v.certificate]
    n = len(deciding)
    own_refuted = [v.reading for v in own if v.verdict == "refuted"] if text else []
    extra = (f" Under reading(s) that are not the paper's, [{', '.join(own_refuted)}], "
             "it is refuted.") if own_refuted else ""
    if refuted:
        first = refuted[0]
        return ("refuted", f"Refuted under [{first.reading}] ({len(refuted)} of {n} "
                f"reading(s) refute it){note}: {first.sentence}{extra}", first.reading)
    kinds = [v.verdict for v in deciding]
    if all(k == "holds" for k in kinds):
        return ("holds", f"Holds under every reading checked ({n}){note}; under "
                f"[{deciding[0].reading}]: {deciding[0].sentence}{extra}", None)
    if all(k == "not-checkable" for k in kinds):
        return ("not-checkable", f"Not checkable under any reading ({n}){note}: "
                f"{deciding[0].sentence}", None)
    holds = [v.reading for v in deciding if v.verdict == "holds"]
    open_ = [v for v in deciding if v.verdict != "holds"]
    first = open_[0]
    said = f"holds under [{', '.join(holds)}]; " if holds else ""
    return ("inconclusive", f"Inconclusive{note}: {said}undecided under "
            f"[{', '.join(v.reading for v in open_)}]. {first.sentence}{extra}",
            first.reading)


#: A reading record's fields that are the claim's (said once, on the claim's record).
_CLAIM_FIELDS = ("claim_id", "paper", "location", "statement", "check")


def claims_summary(verdicts: list[Verdict]) -> list[dict]:
    """One record per claim, in order of first appearance (results.json ``claims``).

    ``{id, paper, location, statement, check, kind, verdict, headline, deciding_reading,
    key, data, readings: [reading records]}``; ``data`` lists the data its readings ran
    on (:attr:`Verdict.data`), each once. ``key`` is the numbers the headline rests on
    (:func:`~dpclaims.claims.kernel.basis_key` of the deciding reading, or of the first
    reading of the paper's text when none decides alone). A reading record is
    :meth:`Verdict.to_dict` without the claim's fields (``claim_id``, ``paper``,
    ``location``, ``statement``, ``check``: said once, on the claim) and with its own
    ``key``.
    """
    from dpclaims.claims.kernel import basis_key

    order: dict[str, list[Verdict]] = {}
    for v in verdicts:
        order.setdefault(v.claim.id, []).append(v)
    out = []
    for cid, vs in order.items():
        verdict, sentence, reading = headline(vs)
        c = vs[0].claim
        deciding = next((v for v in vs if v.reading == reading), None) or next(
            (v for v in vs if v.text_reading), vs[0])
        readings = []
        for v in vs:
            record = {k: x for k, x in v.to_dict().items() if k not in _CLAIM_FIELDS}
            record["key"] = basis_key(v.evidence.get("basis"))
            readings.append(record)
        out.append({"id": cid, "paper": c.paper, "location": c.location,
                    "statement": c.statement, "check": c.check, "kind": c.kind,
                    "verdict": verdict,
                    "headline": sentence, "deciding_reading": reading,
                    "key": basis_key(deciding.evidence.get("basis")),
                    "data": list(dict.fromkeys(v.data for v in vs if v.data is not None)),
                    "readings": readings})
    return out


# Exit codes of every command that checks claims (``audit``, ``check``, ``check-variant``).
#: Nothing refuted.
EXIT_OK = 0
#: A claim's headline is refuted.
EXIT_REFUTED = 1
#: Bad input: the user's options, files, claims or code.
EXIT_BAD_INPUT = 2
#: A claim not checkable, and none refuted.
EXIT_NOT_CHECKED = 3
#: The Dask cluster of ``audit --scheduler`` failed mid-run (EX_UNAVAILABLE of sysexits.h:
#: a service the run needs failed; neither a bug nor the user's input).
EXIT_CLUSTER_LOST = 69
#: An internal error of dpclaims (EX_SOFTWARE of sysexits.h).
EXIT_INTERNAL = 70
#: Interrupted (128 + SIGINT).
EXIT_INTERRUPTED = 130
#: Terminated (128 + SIGTERM: ``kill``, ``timeout``, a CI cancelling its job).
EXIT_TERMINATED = 143


def exit_code(verdicts: list[Verdict]) -> int:
    """The exit code of a finished check: 1 if a claim's headline is refuted; else 3 if
    one is not-checkable (or nothing was checked at all); else 0. Headlines follow
    :func:`headline`: a refutation under a reading that is not the paper's (a stronger
    threat model, the suite's own correction) does not count."""
    kinds = {c["verdict"] for c in claims_summary(verdicts)}
    if "refuted" in kinds:
        return EXIT_REFUTED
    if "not-checkable" in kinds or not verdicts:
        return EXIT_NOT_CHECKED
    return EXIT_OK


#: What the verdict words and the quoted reading names mean: under the claims in the
#: terminal and the report.
LEGEND = ("Legend: holds = a certified bound meets the claim; refuted = a certified bound "
          "contradicts it; inconclusive = no certified bound decides; not-checkable = "
          "nothing was checked (what is missing is named). A quoted name is a reading: one "
          "way to read an ambiguous claim; only the paper's readings decide, others are "
          "shown beside them. The report has every reading with its numbers.")

#: How a claim's sentence names whose reading it rests on (``reading_kind``).
WHOSE_READING = {"text": "the paper's reading", "correction": "our correction",
                 "stronger-threat-model": "a threat model stronger than the paper's"}


def claim_sentence(claim: dict) -> str:
    """One plain sentence for a claim's headline, from its results.json record
    (:func:`claims_summary`): the kernel's :func:`~dpclaims.claims.kernel.plain_sentence`
    of the reading that decides the headline (or of the first reading of the paper's
    text), prefixed by that reading; when a reading that is not the paper's is refuted
    and the headline is not, a second sentence says so, with how many times too small
    the claim is there (:func:`~dpclaims.claims.kernel.shortfall`, the smallest ratio of
    every refuted setting of those readings).

    Derived at render time from the stored verdicts: results.json does not change.

    Raises
    ------
    KeyError
        ``claim`` lacks ``verdict`` or ``readings``.
    """
    from dpclaims.claims.kernel import plain_sentence, reading_number, shortfall

    readings = claim["readings"]
    text = [r for r in readings if r.get("reading_kind", "text") == "text"]
    pool = text or readings
    deciding = next((r for r in pool if r["reading"] == claim.get("deciding_reading")),
                    None) or (pool[0] if pool else None)
    if deciding is None:
        return "No reading was checked."
    basis = deciding.get("evidence", {}).get("basis")
    own = plain_sentence(deciding["verdict"], basis)
    verdict = claim["verdict"]
    whose = WHOSE_READING.get(deciding.get("reading_kind", "text"), "the reading")
    sentence = f"Under {whose} '{deciding['reading']}': {own}"
    if verdict != "refuted" and text:
        other = [r for r in readings if r.get("reading_kind", "text") != "text"
                 and r["verdict"] == "refuted"]
        ratios = [k for r in other for k in shortfall(r.get("evidence", {}).get("basis"))]
        if other:
            kinds = sorted({WHOSE_READING.get(r.get("reading_kind"), "another reading")
                            for r in other})
            names = ", ".join(f"'{r['reading']}'" for r in other)
            sentence += f" Under {' and '.join(kinds)} ({names}) it is refuted"
            low, high = (reading_number(f(ratios), "down") for f in (min, max)) \
                if ratios else ("", "")
            sentence += (f": the claim is at least {low}x too small"
                         + (f" (up to {high}x)." if high != low else ".") if ratios else ".")
    return sentence
