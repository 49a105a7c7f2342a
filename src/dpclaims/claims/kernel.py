"""The verdict kernel: the one place where computed results become verdicts.

Every check computes numbers; this module turns them into a :class:`Verdict` and
writes the verdict's sentence from those numbers. No check words its own decision.

The rule
--------
A claim states a bound on a quantity: ``quantity <= c`` (an epsilon, a sensitivity,
a tail probability; :attr:`Direction.AT_MOST`), ``quantity >= c`` (a coverage, an
improvement; :attr:`Direction.AT_LEAST`) or ``quantity = c`` (a printed table value,
an identity; :attr:`Direction.EQUALS`). A check brings a certified **bracket**: a
lower bound and an upper bound on the true quantity, each a :class:`Bound` that
names the tool that gave it and, for a statistical bound, its confidence. Either
end may be missing (an audit has no upper bound; a search for a counterexample
has no upper bound; an RDP accountant has no lower bound).

For ``quantity <= c``:

* **holds** only when a certified upper bound is at most c;
* **refuted** only when a certified lower bound exceeds c;
* **inconclusive** otherwise (and when the two ends contradict each other).

``quantity >= c`` is the mirror image, and ``quantity = c`` holds when the whole
bracket lies within what c stands for and is refuted when the bracket lies
wholly outside it.

The only generosity: a number is read at the precision it is printed with
(:class:`Claimed` ``printed``): "2.38" stands for every value that rounds to it,
[2.375, 2.385], so a certified lower bound of 2.3824 does not refute it and
2.3876 does. A number with no printed text (a claim made in code), an integer
("epsilon = 8", a target the noise was calibrated to) and a number in scientific
notation with an integer mantissa ("1e-5") are exact. No relative tolerance
exists: a numeric slack (a discretisation, a Monte Carlo error) belongs inside the
bracket, which widens it and so moves the verdict toward inconclusive, never
toward holds or refuted.

A claim that is decided by hypothesis tests rather than by a bracket (a comparison
of two methods over paired runs) goes through :func:`decide_by_tests`: holds when
the test of "the claim is false" rejects at the stated level, refuted when the test
of "the claim is true" rejects, inconclusive otherwise. Several bounds that must
all hold (one per configuration) go through :func:`decide_all`. Nothing checked is
:func:`not_checkable`, naming what is missing.

Every verdict's evidence gets a ``basis`` record: the claimed value and what it
stands for, the bracket with its sources, and any estimates (which are shown,
never used: an estimate alone neither holds nor refutes).

References
----------
docs/architecture.md ("The verdict kernel"); docs/design.rst ("One place decides").
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from dpclaims.claims.core import RUN_SEED, Claim, Verdict


class Direction(str, Enum):
    """What a claim states about its quantity."""

    AT_MOST = "at-most"
    AT_LEAST = "at-least"
    EQUALS = "equals"


_OP = {Direction.AT_MOST: "<=", Direction.AT_LEAST: ">=", Direction.EQUALS: "="}


def printed_half_unit(printed: str) -> float:
    """Half a unit in the last printed place of ``printed`` (0 for an exact number).

    "2.38" -> 0.005; "0.5" -> 0.05; "1.26e-3" -> 5e-6; "8", "1e-5", "60000" -> 0
    (integers and integer mantissas are exact: targets, sizes, deltas).

    Raises
    ------
    ValueError
        ``printed`` is not a decimal number.
    """
    text = str(printed).strip().lower().replace("_", "")
    mantissa, _, exponent = text.partition("e")
    try:
        float(text)
        power = int(exponent) if exponent else 0
    except ValueError:
        raise ValueError(f"printed must be a decimal number as printed, got {printed!r}") \
            from None
    if "." not in mantissa:
        return 0.0
    decimals = len(mantissa.split(".", 1)[1])
    if decimals == 0:
        return 0.0
    return 0.5 * 10.0 ** (power - decimals)


@dataclass(frozen=True)
class Claimed:
    """The number a claim states, and how it is read.

    Parameters
    ----------
    quantity : str
        What the number is, in words ("epsilon", "sensitivity", "P(KL >= a)").
    value : float
        The stated number (finite; ``inf`` is allowed for a claim of "unbounded").
    direction : Direction, default AT_MOST
        ``quantity <= value``, ``>= value`` or ``= value``.
    printed : str, optional
        The number exactly as the paper prints it ("2.38", "1.0"): it is read at
        that precision (:func:`printed_half_unit`). None: exact (a claim made in code).

    Raises
    ------
    ValueError
        NaN value, an unknown direction, or ``printed`` that is not a decimal number
        or does not round to ``value``.
    """

    quantity: str
    value: float
    direction: Direction = Direction.AT_MOST
    printed: str | None = None

    def __post_init__(self):
        value = float(self.value)
        if math.isnan(value):
            raise ValueError(f"the claimed {self.quantity} is NaN")
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "direction", Direction(self.direction))
        if self.printed is not None:
            half = printed_half_unit(self.printed)
            if abs(float(self.printed) - value) > half + 1e-12 * max(1.0, abs(value)):
                raise ValueError(f"printed {self.printed!r} does not stand for the claimed "
                                 f"{self.quantity} {value!r}")

    @property
    def half_unit(self) -> float:
        return 0.0 if self.printed is None else printed_half_unit(self.printed)

    @property
    def low(self) -> float:
        """The smallest value the printed number stands for."""
        return self.value - self.half_unit

    @property
    def high(self) -> float:
        """The largest value the printed number stands for."""
        return self.value + self.half_unit

    def describe(self) -> str:
        """e.g. "the claimed epsilon <= 2.38 (printed to 0.01: read as <= 2.385)"."""
        shown = self.printed if self.printed is not None else _num(self.value)
        text = f"the claimed {self.quantity} {_OP[self.direction]} {shown}"
        if self.half_unit == 0:
            return text
        if self.direction is Direction.AT_MOST:
            read = f"<= {_num(self.high)}"
        elif self.direction is Direction.AT_LEAST:
            read = f">= {_num(self.low)}"
        else:
            read = f"in [{_num(self.low)}, {_num(self.high)}]"
        return f"{text} (read at its printed precision as {read})"

    def to_dict(self) -> dict:
        return {"quantity": self.quantity, "value": _json(self.value),
                "direction": self.direction.value, "printed": self.printed,
                "stands_for": [_json(self.low), _json(self.high)]}


def _percent(confidence: float) -> str:
    """A confidence as a percentage with enough digits to differ from 100 % (1 - 2e-5
    prints as 99.998 %, never as 100 %)."""
    miss = 100 * (1 - confidence)
    digits = max(0, -math.floor(math.log10(miss)) + 1) if miss < 1 else 0
    text = f"{100 * confidence:.{digits}f}".rstrip("0").rstrip(".") if digits else \
        f"{100 * confidence:.4g}"
    return text + "%"


class Basis(str, Enum):
    """What a :class:`Bound` rests on, which fixes whether it may decide a claim.

    ``exact``
        A recomputation: a closed form, an exact count, a rigorous enclosure (floating
        point rounding inside the bracket). Decides.
    ``finite-sample``
        A statistical bound valid at every sample size at its stated confidence
        (Clopper-Pearson, an exact test, a betting confidence interval for a mean).
        Decides.
    ``proof``
        An analytic bound with its citation (the paper's lemma or the user's). It never
        decides the claim it proves (that would be circular): it decides only a claim
        other than the one named in ``Bound.proves``, and the key says it rests on it.
    ``asymptotic``
        A normal approximation, a delta method, a bootstrap: shown as "approx.", never
        decides.
    """

    EXACT = "exact"
    FINITE_SAMPLE = "finite-sample"
    PROOF = "proof"
    ASYMPTOTIC = "asymptotic"


@dataclass(frozen=True)
class Bound:
    """One end of a bracket on the true quantity.

    Parameters
    ----------
    value : float
        The bound (may be +-inf).
    source : str
        The tool and setting that gave it ("dp_accounting PLD, optimistic, interval
        1e-4", "Clopper-Pearson on 10^6 trials"); for a proof, its citation.
    confidence : float, optional
        For a statistical bound, the probability that it holds (e.g. 0.95); None for
        a deterministic bound (exact up to floating point, or a proof).
    basis : Basis or str
        What the bound rests on (:class:`Basis`): required, and consistent with
        ``confidence`` (a statistical bound is ``finite-sample`` or ``asymptotic``, a
        deterministic one ``exact`` or ``proof``).
    proves : str, optional
        For a ``proof`` bound: the id of the claim the proof establishes. The bound
        never decides that claim; it decides other claims (e.g. an epsilon computed
        from a sensitivity the paper's lemma proves), and their keys name it. A proof
        bound without ``proves`` decides nothing.

    Raises
    ------
    ValueError
        NaN value, confidence outside (0, 1), no basis or an unknown one, a basis that
        does not fit ``confidence``, or ``proves`` on a bound that is not a proof.
    """

    value: float
    source: str
    confidence: float | None = None
    basis: Basis | str | None = None
    proves: str | None = None

    def __post_init__(self):
        value = float(self.value)
        if math.isnan(value):
            raise ValueError(f"a bound from {self.source!r} is NaN")
        object.__setattr__(self, "value", value)
        if self.confidence is not None and not 0 < self.confidence < 1:
            raise ValueError(f"confidence must lie in (0, 1), got {self.confidence!r}")
        if self.basis is None:
            raise ValueError(f"the bound {value!r} from {self.source!r} has no basis: give "
                             f"basis= one of {[b.value for b in Basis]}")
        try:
            basis = Basis(self.basis)
        except ValueError:
            raise ValueError(f"basis must be one of {[b.value for b in Basis]}, got "
                             f"{self.basis!r}") from None
        object.__setattr__(self, "basis", basis)
        statistical = basis in (Basis.FINITE_SAMPLE, Basis.ASYMPTOTIC)
        if statistical != (self.confidence is not None):
            raise ValueError(
                f"the bound from {self.source!r}: a {basis.value} bound "
                + ("needs its confidence" if statistical else "has no confidence (it is "
                   "deterministic; a statistical bound is finite-sample or asymptotic)"))
        if self.proves is not None and basis is not Basis.PROOF:
            raise ValueError(f"the bound from {self.source!r}: only a proof names the "
                             f"claim it proves, got proves={self.proves!r} on a "
                             f"{basis.value} bound")

    def decides(self, claim_id: str | None = None) -> bool:
        """Whether this bound may decide the claim ``claim_id`` (:class:`Basis`)."""
        if self.basis is Basis.ASYMPTOTIC:
            return False
        if self.basis is Basis.PROOF:
            return self.proves is not None and self.proves != claim_id
        return True

    def describe(self) -> str:
        conf = "" if self.confidence is None else f", {_percent(self.confidence)} confidence"
        return f"{self.source} ({_basis_label(self.basis.value, self.proves)}{conf})"

    def to_dict(self) -> dict:
        out = {"value": _json(self.value), "source": self.source,
               "confidence": self.confidence, "basis": self.basis.value}
        if self.proves is not None:
            out["proves"] = self.proves
        return out


def _basis_label(basis: str | None, proves: str | None = None) -> str:
    if basis == Basis.PROOF.value:
        return f"by proof of {proves}" if proves else "proof; does not decide"
    if basis == Basis.ASYMPTOTIC.value:
        return "approx.; does not decide"
    return basis or "no basis"


def best_lower(*bounds: Bound | None) -> Bound | None:
    """The largest of the given lower bounds (None entries are skipped)."""
    given = [b for b in bounds if b is not None]
    return max(given, key=lambda b: b.value) if given else None


def best_upper(*bounds: Bound | None) -> Bound | None:
    """The smallest of the given upper bounds (None entries are skipped)."""
    given = [b for b in bounds if b is not None]
    return min(given, key=lambda b: b.value) if given else None


@dataclass(frozen=True)
class Estimate:
    """A useful number that can be wrong in either direction (shown, never deciding)."""

    value: float
    source: str

    def to_dict(self) -> dict:
        return {"value": _json(self.value), "source": self.source}


def outcome(claimed: Claimed, lower: Bound | None, upper: Bound | None,
            claim_id: str | None = None) -> str:
    """The verdict of a bracket against a claimed value (module docstring), without a
    sentence: "holds", "refuted" or "inconclusive". Only the ends that may decide the
    claim ``claim_id`` count (:meth:`Bound.decides`: never an asymptotic bound, nor a
    proof of the claim itself)."""
    lower, upper = _deciding(lower, claim_id), _deciding(upper, claim_id)
    lo = None if lower is None else lower.value
    hi = None if upper is None else upper.value
    if lo is not None and hi is not None and lo > hi:
        return "inconclusive"  # the bounds contradict each other: nothing is decided
    d = claimed.direction
    if d is Direction.AT_MOST:
        if lo is not None and lo > claimed.high:
            return "refuted"
        if hi is not None and hi <= claimed.high:
            return "holds"
    elif d is Direction.AT_LEAST:
        if hi is not None and hi < claimed.low:
            return "refuted"
        if lo is not None and lo >= claimed.low:
            return "holds"
    else:
        if (hi is not None and hi < claimed.low) or (lo is not None and lo > claimed.high):
            return "refuted"
        if lo is not None and hi is not None and claimed.low <= lo and hi <= claimed.high:
            return "holds"
    return "inconclusive"


def _deciding(bound: Bound | None, claim_id: str | None) -> Bound | None:
    return bound if bound is not None and bound.decides(claim_id) else None


def _shown_only(claimed: Claimed, lower: Bound | None, upper: Bound | None) -> str:
    """The sentence's note on the ends that are shown but do not decide."""
    q, out = claimed.quantity, []
    for end, op, toward in ((lower, ">=", "down"), (upper, "<=", "up")):
        if end is not None:
            out.append(f"{end.describe()} gives {q} {op} {_safe(end.value, toward)}")
    return (" Shown, not deciding: " + "; ".join(out) + ".") if out else ""


def _sentence(verdict: str, claimed: Claimed, lower: Bound | None, upper: Bound | None) -> str:
    q = claimed.quantity
    desc = claimed.describe()
    lo = None if lower is None else lower.value
    hi = None if upper is None else upper.value
    if lo is not None and hi is not None and lo > hi:
        a, b = _safe_pair(lo, "down", hi, "up", operator.gt)
        return (f"Inconclusive: the bounds contradict each other ({lower.describe()} gives "
                f"{q} >= {a}, {upper.describe()} gives {q} <= {b}); one tool is wrong, so "
                f"nothing is decided about {desc}.")
    d = claimed.direction
    if verdict == "refuted":
        if d is Direction.AT_MOST or (d is Direction.EQUALS and lo is not None
                                      and lo > claimed.high):
            a, b = _safe_pair(lo, "down", claimed.high, "nearest", operator.gt)
            return f"Refuted: {lower.describe()} certifies {q} >= {a}, above {desc}."
        a, b = _safe_pair(hi, "up", claimed.low, "nearest", operator.lt)
        return f"Refuted: {upper.describe()} certifies {q} <= {a}, below {desc}."
    if verdict == "holds":
        if d is Direction.AT_MOST:
            a, _ = _safe_pair(hi, "up", claimed.high, "nearest", operator.le)
            return f"Holds: {upper.describe()} certifies {q} <= {a}, within {desc}."
        if d is Direction.AT_LEAST:
            a, _ = _safe_pair(lo, "down", claimed.low, "nearest", operator.ge)
            return f"Holds: {lower.describe()} certifies {q} >= {a}, within {desc}."
        return (f"Holds: {q} lies in [{_safe(lo, 'down')}, {_safe(hi, 'up')}] ({lower.describe()}; "
                f"{upper.describe()}), within {desc}.")
    # inconclusive
    parts = []
    parts.append(f"a certified lower bound {_safe(lo, 'down')} ({lower.describe()})" if lower
                 else "no certified lower bound")
    parts.append(f"a certified upper bound {_safe(hi, 'up')} ({upper.describe()})" if upper
                 else "no certified upper bound")
    if lower is None and upper is None:
        return f"Inconclusive: no certified bound on {q} was computed, so {desc} is not decided."
    return (f"Inconclusive: {parts[0]} and {parts[1]} on {q} do not decide {desc}.")


def _basis(claimed, lower, upper, estimates, claim_id=None) -> dict:
    def end(b):
        return None if b is None else {**b.to_dict(), "decides": b.decides(claim_id)}

    return {"rule": "bracket", "claimed": claimed.to_dict(), "lower": end(lower),
            "upper": end(upper), "estimates": [e.to_dict() for e in estimates]}


def _with_basis(evidence: dict | None, basis: dict) -> dict:
    out = dict(evidence or {})
    if "basis" in out:
        raise ValueError("evidence already has a 'basis' entry: it is the kernel's")
    out["basis"] = basis
    return out


def _tail(context: str, estimates: Sequence[Estimate]) -> str:
    text = ""
    if context:
        text += " " + context.strip()
    if estimates:
        text += (" Estimates (shown, never deciding): "
                 + ", ".join(f"{e.source} {_num(e.value)}" for e in estimates) + ".")
    return text


@dataclass
class Decision:
    """What :func:`decide` returns besides the verdict, for checks that combine verdicts."""

    verdict: str
    sentence: str
    basis: dict = field(default_factory=dict)


def judge(claimed: Claimed, lower: Bound | None = None, upper: Bound | None = None,
          estimates: Sequence[Estimate] = (), claim_id: str | None = None) -> Decision:
    """The verdict and its sentence for a bracket: the core of :func:`decide`, for checks
    that report several brackets of one claim. ``claim_id`` is the claim decided (a
    proof of it never decides it; :meth:`Bound.decides`)."""
    dl, du = _deciding(lower, claim_id), _deciding(upper, claim_id)
    v = outcome(claimed, dl, du)
    sentence = _sentence(v, claimed, dl, du) + _shown_only(
        claimed, lower if dl is None else None, upper if du is None else None)
    return Decision(v, sentence, _basis(claimed, lower, upper, estimates, claim_id))


def decide(claim: Claim, reading: str, claimed: Claimed, *, lower: Bound | None = None,
           upper: Bound | None = None, context: str = "",
           estimates: Sequence[Estimate] = (), evidence: dict | None = None,
           seed: int | None = RUN_SEED, budget: str | None = None,
           figures: Sequence[str] = (), text_reading: bool | None = None) -> Verdict:
    """The verdict of ``claim`` under ``reading`` from a certified bracket (module rule).

    Parameters
    ----------
    claim, reading
        The claim and the reading of the paper the bracket was computed under.
    claimed : Claimed
        The stated number and its direction.
    lower, upper : Bound, optional
        Certified bounds on the true quantity (either may be missing).
    context : str
        What was computed, in words, appended to the kernel's sentence (never the
        decision itself).
    estimates : sequence of Estimate
        Numbers shown beside the bracket that never decide.
    evidence : dict
        The check's numbers; the kernel adds ``basis``.
    seed, budget, figures, text_reading
        As :class:`~dpclaims.claims.core.Verdict`.

    Returns
    -------
    Verdict
        ``certificate`` is True exactly when a certified bound decided it.
    """
    d = judge(claimed, lower, upper, estimates, claim_id=claim.id)
    return Verdict(claim, reading, d.verdict, d.sentence + _tail(context, estimates),
                   evidence=_with_basis(evidence, d.basis), seed=seed, budget=budget,
                   certificate=d.verdict in ("holds", "refuted"), figures=list(figures),
                   text_reading=text_reading)


@dataclass(frozen=True)
class Part:
    """One bracket among several that must all hold (:func:`decide_all`)."""

    label: str
    claimed: Claimed
    lower: Bound | None = None
    upper: Bound | None = None


def decide_all(claim: Claim, reading: str, parts: Sequence[Part], *, context: str = "",
               evidence: dict | None = None, seed: int | None = RUN_SEED,
               budget: str | None = None, figures: Sequence[str] = (),
               text_reading: bool | None = None) -> Verdict:
    """One verdict for a claim that must hold in every part (every configuration, every
    coordinate): refuted when a part is refuted (the first is named, and how many),
    holds when every part holds, inconclusive otherwise. A statistical bound's
    confidence is the caller's to correct for the number of parts (e.g. Bonferroni).

    Raises
    ------
    ValueError
        No parts.
    """
    if not parts:
        raise ValueError("decide_all needs at least one part")
    decisions = [(p, judge(p.claimed, p.lower, p.upper, claim_id=claim.id)) for p in parts]
    refuted = [(p, d) for p, d in decisions if d.verdict == "refuted"]
    holding = [(p, d) for p, d in decisions if d.verdict == "holds"]
    n = len(parts)
    if refuted:
        p, d = refuted[0]
        verdict = "refuted"
        sentence = (f"Refuted in {len(refuted)} of {n} part(s); first, {p.label}: "
                    f"{d.sentence}")
    elif len(holding) == n:
        verdict = "holds"
        worst = holding[0]
        sentence = f"Holds in all {n} part(s); e.g. {worst[0].label}: {worst[1].sentence}"
    else:
        verdict = "inconclusive"
        p, d = next((p, d) for p, d in decisions if d.verdict == "inconclusive")
        sentence = (f"Inconclusive: {len(holding)} of {n} part(s) hold, none is refuted; "
                    f"first undecided, {p.label}: {d.sentence}")
    basis = {"rule": "all parts", "parts": [{"label": p.label, "verdict": d.verdict,
                                             **d.basis} for p, d in decisions]}
    return Verdict(claim, reading, verdict, sentence + _tail(context, ()),
                   evidence=_with_basis(evidence, basis), seed=seed, budget=budget,
                   certificate=verdict in ("holds", "refuted"), figures=list(figures),
                   text_reading=text_reading)


def decide_by_tests(claim: Claim, reading: str, statement: str, *, p_holds: float | None,
                    p_refutes: float | None, level: float, test: str, context: str = "",
                    estimates: Sequence[Estimate] = (), evidence: dict | None = None,
                    seed: int | None = RUN_SEED, budget: str | None = None,
                    figures: Sequence[str] = (), text_reading: bool | None = None) -> Verdict:
    """The verdict of a claim decided by two one-sided hypothesis tests at ``level``.

    Parameters
    ----------
    statement : str
        What is claimed, in words ("method A's test RMSE is below method B's").
    p_holds : float or None
        p-value of the test whose null hypothesis is that ``statement`` is false: its
        rejection (p <= level) makes the claim hold. None: not computed.
    p_refutes : float or None
        p-value of the test whose null hypothesis is that ``statement`` is true: its
        rejection refutes the claim. None: not computed.
    level : float
        The false-alarm rate of each direction, in (0, 1).
    test : str
        The test by name ("exact sign test over 8 paired runs").

    Raises
    ------
    ValueError
        level outside (0, 1), a p-value outside [0, 1] or NaN.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    for name, p in (("p_holds", p_holds), ("p_refutes", p_refutes)):
        if p is not None and not 0 <= p <= 1:
            raise ValueError(f"{name} must lie in [0, 1], got {p!r}")
    yes = p_holds is not None and p_holds <= level
    no = p_refutes is not None and p_refutes <= level
    ps = f"p = {_num(p_holds)} for, {_num(p_refutes)} against"
    if yes and no:
        verdict, sentence = "inconclusive", (
            f"Inconclusive: the {test} rejects both directions at level {level:g} ({ps}); "
            f"the tests contradict each other, so nothing is decided about: {statement}.")
    elif yes:
        verdict, sentence = "holds", (
            f"Holds at level {level:g}: the {test} rejects that it fails (p = "
            f"{_num(p_holds)}): {statement}.")
    elif no:
        verdict, sentence = "refuted", (
            f"Refuted at level {level:g}: the {test} rejects it (p = {_num(p_refutes)}): "
            f"{statement}.")
    else:
        verdict, sentence = "inconclusive", (
            f"Inconclusive at level {level:g}: the {test} rejects neither direction "
            f"({ps}): {statement}.")
    basis = {"rule": "tests", "statement": statement, "test": test, "level": level,
             "p_holds": p_holds, "p_refutes": p_refutes,
             "estimates": [e.to_dict() for e in estimates]}
    return Verdict(claim, reading, verdict, sentence + _tail(context, estimates),
                   evidence=_with_basis(evidence, basis), seed=seed, budget=budget,
                   certificate=verdict in ("holds", "refuted"), figures=list(figures),
                   text_reading=text_reading)


def not_checkable(claim: Claim, reading: str, missing: str | Sequence[str], *,
                  context: str = "", evidence: dict | None = None, seed: int | None = RUN_SEED,
                  budget: str | None = None, text_reading: bool | None = None) -> Verdict:
    """Nothing was checked: ``missing`` names what the check needs and does not have.

    Raises
    ------
    ValueError
        Nothing named as missing.
    """
    items = [missing] if isinstance(missing, str) else list(missing)
    if not items or not all(items):
        raise ValueError("not_checkable must name what is missing")
    sentence = f"Not checkable: missing {'; '.join(items)}. Nothing was checked."
    basis = {"rule": "not-checkable", "missing": items}
    return Verdict(claim, reading, "not-checkable", sentence + _tail(context, ()),
                   evidence=_with_basis(evidence, basis), seed=seed, budget=budget,
                   text_reading=text_reading)


def undecided(claim: Claim, reading: str, reason: str, *, context: str = "",
              estimates: Sequence[Estimate] = (), evidence: dict | None = None,
              seed: int | None = RUN_SEED, budget: str | None = None,
              figures: Sequence[str] = (), text_reading: bool | None = None) -> Verdict:
    """Inconclusive for a stated ``reason`` when the check ran but produced no bound
    that could decide (e.g. an audit too small to certify anything)."""
    if not reason:
        raise ValueError("undecided needs a reason")
    basis = {"rule": "undecided", "reason": reason,
             "estimates": [e.to_dict() for e in estimates]}
    return Verdict(claim, reading, "inconclusive",
                   f"Inconclusive: {reason.strip()}" + _tail(context, estimates),
                   evidence=_with_basis(evidence, basis), seed=seed, budget=budget,
                   figures=list(figures), text_reading=text_reading)


# ----------------------------------------------------------------------------- numbers


def _num(x: float | str | None) -> str:
    if x is None:
        return "none"
    if isinstance(x, str):  # a JSON-ed infinity ("inf", "-inf")
        return x
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.4g}"


def _safe(x: float | str | None, toward: str) -> str:
    """A certified bound in a headline: 4 significant digits, rounded toward the side that
    keeps it true ("down" for a lower bound: 3.07975 -> "3.079", never "3.08"; "up" for an
    upper bound), by :func:`reading_number`."""
    return reading_number(x, toward, 4)


def _safe_pair(a: float, a_toward: str, b: float, b_toward: str, relation) -> tuple[str, str]:
    """``a`` and ``b`` rounded toward their safe sides (:func:`_safe`) with the fewest
    significant digits (at least 4) at which the printed numbers still satisfy
    ``relation(a, b)`` (e.g. ``operator.gt`` for "a lower bound above the claim"), so a
    printed "a > b" is never "2.385 > 2.385"; ``repr`` where 17 digits do not."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return _safe(a, a_toward), _safe(b, b_toward)
    for digits in range(4, 18):
        sa, sb = reading_number(a, a_toward, digits), reading_number(b, b_toward, digits)
        if relation(float(sa), float(sb)):
            return sa, sb
    return repr(a), repr(b)


def _json(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


# ----------------------------------------------------------------------------- key numbers


def basis_key(basis: dict | None, limit: int = 160) -> str:
    """The numbers a verdict rests on, in one short line, from its evidence's ``basis``.

    A bracket: "epsilon <= 2.38 claimed; certified >= 2.354 (95%)" (the ends that
    exist, each with its confidence when statistical); several parts: how many hold,
    are refuted and undecided, then the first deciding part's key; tests: the
    p-values and the level; not checkable: what is missing; undecided: the reason.
    Cut to ``limit`` characters at a word boundary. An unknown or missing basis gives
    "-" (a verdict written before the kernel existed has none).

    Parameters
    ----------
    basis : dict or None
        ``Verdict.evidence["basis"]`` as the kernel writes it (JSON-able: infinities
        may be the strings "inf" / "-inf").
    limit : int
        The longest line returned, in characters (>= 20).

    Raises
    ------
    ValueError
        ``limit`` below 20.
    """
    if limit < 20:
        raise ValueError(f"limit must be >= 20 characters, got {limit!r}")
    text = _basis_key(basis or {})
    one = " ".join(text.split())
    if len(one) <= limit:
        return one
    return one[:limit - 4].rsplit(" ", 1)[0] + " ..."


def _basis_key(b: dict) -> str:
    rule = b.get("rule")
    if rule == "bracket":
        c = b["claimed"]
        op = _OP[Direction(c["direction"])]
        shown = c["printed"] if c.get("printed") is not None else _num(float(c["value"]))
        lo, hi = b.get("lower"), b.get("upper")
        if (lo is not None and hi is not None and lo["value"] == hi["value"]
                and lo.get("confidence") is None and hi.get("confidence") is None
                and lo.get("basis") == hi.get("basis") and lo.get("decides", True)
                and hi.get("decides", True)):
            label = f" ({lo['basis']})" if lo.get("basis") else ""
            return (f"{c['quantity']} {op} {shown} claimed; computed = "
                    f"{_num(lo['value'])}{label}")
        ends, shown_only = [], []
        for name, op_b, toward in (("lower", ">=", "down"), ("upper", "<=", "up")):
            end = b.get(name)
            if end is None:
                continue
            conf, basis = end.get("confidence"), end.get("basis")
            bits = ([_percent(conf)] if conf is not None else []) + (
                [_basis_label(basis, end.get("proves"))] if basis else [])
            text = f"{op_b} {_safe(float(end['value']), toward)}" + (
                f" ({', '.join(bits)})" if bits else "")
            (ends if end.get("decides", True) else shown_only).append(text)
        got = "certified " + " and ".join(ends) if ends else "no certified bound"
        if shown_only:
            got += "; shown: " + " and ".join(shown_only)
        return f"{c['quantity']} {op} {shown} claimed; {got}"
    if rule == "all parts":
        parts = b.get("parts", [])
        counts = {k: sum(p.get("verdict") == k for p in parts)
                  for k in ("holds", "refuted", "inconclusive")}
        first = next((p for p in parts if p.get("verdict") == "refuted"), None) or next(
            (p for p in parts if p.get("verdict") == "inconclusive"), None) or (
            parts[0] if parts else None)
        head = (f"{counts['holds']} of {len(parts)} parts hold, {counts['refuted']} refuted, "
                f"{counts['inconclusive']} undecided")
        return head + (f"; {first['label']}: {_basis_key(first)}" if first else "")
    if rule == "tests":
        return (f"p = {_num(b.get('p_holds'))} for, {_num(b.get('p_refutes'))} against, "
                f"level {b.get('level')}")
    if rule == "not-checkable":
        return "missing: " + "; ".join(b.get("missing", []))
    if rule == "undecided":
        return b.get("reason", "-")
    return "-"


# ----------------------------------------------------------------------------- plain sentences


def reading_number(x: float | str | None, toward: str = "nearest", digits: int = 3) -> str:
    """``x`` rounded to ``digits`` significant digits for a reader, never cut.

    ``toward`` is the direction of rounding that keeps a certified bound true: "down"
    for a lower bound (22.4405 -> "22.4"), "up" for an upper bound (2.4851 -> "2.49"),
    "nearest" for a claimed or estimated value. Integers print in full (400000, never
    "4e+05"); very small or large numbers in scientific notation ("1.63e-05").

    Raises
    ------
    ValueError
        ``toward`` not one of "down", "up", "nearest"; ``digits`` below 1.
    """
    import decimal

    modes = {"down": decimal.ROUND_FLOOR, "up": decimal.ROUND_CEILING,
             "nearest": decimal.ROUND_HALF_EVEN}
    if toward not in modes:
        raise ValueError(f"toward must be one of {tuple(modes)}, got {toward!r}")
    if digits < 1:
        raise ValueError(f"digits must be >= 1, got {digits!r}")
    if x is None:
        return "none"
    if isinstance(x, str):  # a JSON-ed infinity
        return x
    x = float(x)
    if not math.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    d = decimal.Decimal(repr(x))  # the number as stored (JSON), not its binary expansion
    exp = d.adjusted() - digits + 1
    r = d.scaleb(-exp).to_integral_value(rounding=modes[toward]).scaleb(exp)
    v = float(r)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.{digits}g}"


def _bound_number(x: float, toward: str, claim: float, shown: str | None = None) -> str:
    """A bound rounded toward its safe side (:func:`reading_number`) to 3 significant
    digits, or more when 3 would move it by more than half its distance to ``claim`` (a
    lower bound of 1.9999999 against a claimed 2 is "1.9999999", not "1.99"), so the
    rounded number stays on its side of the claim and says how close it is; a bound
    equal to ``claim`` is "the claimed ``shown``" (not the claim's every digit)."""
    if shown is not None and x == claim:
        return f"the claimed {shown}"
    if not math.isfinite(x) or not math.isfinite(claim):
        return reading_number(x, toward)
    for digits in range(3, 18):
        text = reading_number(x, toward, digits)
        if x != claim and abs(float(text) - x) <= abs(x - claim) / 2:
            return text
    return repr(x)


def _tool(end: dict) -> str:
    """What a bound rests on, in a few words: "exact", "95% confidence", with the tool
    when its name is short ("dp_accounting-pld, exact")."""
    bits = []
    source = str(end.get("source", "")).split(" (")[0].strip()
    if source and len(source) <= 40:
        bits.append(source)
    if end.get("confidence") is not None:
        bits.append(f"{_percent(end['confidence'])} confidence")
    elif end.get("basis"):
        bits.append(_basis_label(end["basis"], end.get("proves")))
    return ", ".join(bits)


def _head(text: str) -> str:
    """The part of ``text`` before its first ": " outside brackets (the name of what is
    missing, without the explanation after it)."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and text.startswith(": ", i):
            return text[:i]
    return text


def shortfall(basis: dict | None) -> list[float]:
    """How many times too small each refuted "at most c" bracket of ``basis`` shows the
    claim to be: its certified lower bound over c (c > 0), one ratio per refuted part;
    empty when nothing in ``basis`` is refuted that way. A ratio is a certified "at
    least k times": the lower bound is certified."""
    b = basis or {}
    if b.get("rule") == "all parts":
        return [r for p in b.get("parts", []) if p.get("verdict") == "refuted"
                for r in shortfall(p)]
    if b.get("rule") != "bracket":
        return []
    c, lo = b["claimed"], b.get("lower")
    high = float(c["stands_for"][1])  # "inf" too
    if (c["direction"] != Direction.AT_MOST.value or lo is None or not lo.get("decides", True)
            or high <= 0 or isinstance(lo["value"], str) or float(lo["value"]) <= high):
        return []
    return [float(lo["value"]) / high]


def plain_sentence(verdict: str, basis: dict | None) -> str:
    """One plain English sentence for a verdict from its evidence's ``basis`` (the record
    the kernel stores): what was claimed, what was found, how far apart.

    "Claimed epsilon at most 1; certified at least 22.4 (exact): the claim is at least
    22.4x too small." / "Claimed epsilon at most 2.52; certified at most 2.49
    (dp_accounting-pld, exact): holds." / "Not checkable: needs the paper's UCI data
    sets (...)." Bounds are rounded toward their safe side (:func:`reading_number`: a
    lower bound down, an upper bound up) with enough digits to stay on their side of
    the claim; nothing is cut. Derived from the stored basis, so a report written from
    results.json says the same as the run that wrote it.

    Parameters
    ----------
    verdict : str
        The verdict word the basis decided ("holds", "refuted", "inconclusive",
        "not-checkable").
    basis : dict or None
        ``Verdict.evidence["basis"]`` (JSON form). None or an unknown rule: a sentence
        saying that the verdict states no basis.
    """
    b = basis or {}
    rule = b.get("rule")
    if rule == "bracket":
        return _bracket_plain(verdict, b)
    if rule == "all parts":
        parts = b.get("parts", [])
        n = len(parts)
        refuted = [p for p in parts if p.get("verdict") == "refuted"]
        held = [p for p in parts if p.get("verdict") == "holds"]
        if verdict == "refuted" and refuted:
            ratios = shortfall(b)
            first = refuted[0]
            text = (f"Refuted in {len(refuted)} of {n} settings; {first.get('label', '')}: "
                    f"{_bracket_plain('refuted', first)}")
            low, high = (reading_number(f(ratios), "down") for f in (min, max)) \
                if ratios else ("", "")
            if low != high:
                text = text[:-1] + f" ({low}x to {high}x over the {len(ratios)} settings)."
            return text
        if verdict == "holds":
            first = held[0] if held else (parts[0] if parts else {})
            return (f"Holds in all {n} settings; e.g. {first.get('label', '')}: "
                    f"{_bracket_plain('holds', first)}")
        first = next((p for p in parts if p.get("verdict") != "holds"), parts[0] if parts
                     else {})
        return (f"{len(held)} of {n} settings hold, none is refuted; undecided, e.g. "
                f"{first.get('label', '')}: {_bracket_plain('inconclusive', first)}")
    if rule == "tests":
        test = _head(str(b.get("test", "test")).split(" (")[0])
        level = b.get("level")
        ps = f"p = {_num(b.get('p_holds'))} for, {_num(b.get('p_refutes'))} against"
        found = {"holds": "holds", "refuted": "refuted"}.get(verdict, "undecided")
        return (f"Claimed: {b.get('statement', '')}; {test} at level {level:g} ({ps}): "
                f"{found}.")
    if rule == "not-checkable":
        return "Not checkable: needs " + "; ".join(_head(m) for m in b.get("missing", [])) + "."
    if rule == "undecided":
        return "Undecided: " + str(b.get("reason", "")).strip()
    return f"{verdict.capitalize()} (this verdict states no basis)."


def _bracket_plain(verdict: str, b: dict) -> str:
    c = b["claimed"]
    q, d = c["quantity"], Direction(c["direction"])
    value = c["printed"] if c.get("printed") is not None else reading_number(
        c["value"], "nearest", 4)
    low, high = (float(x) for x in c["stands_for"])  # "inf" and "-inf" too
    said = {Direction.AT_MOST: "at most", Direction.AT_LEAST: "at least",
            Direction.EQUALS: "="}[d]
    head = f"Claimed {q} {said} {value}"
    exact = value if low == high else None  # a printed claim stands for an interval
    lo, hi = b.get("lower"), b.get("upper")
    lo = lo if lo is not None and lo.get("decides", True) else None
    hi = hi if hi is not None and hi.get("decides", True) else None
    lv = None if lo is None else float(lo["value"])
    hv = None if hi is None else float(hi["value"])
    if lv is not None and hv is not None and lv == hv and lo.get("confidence") is None \
            and hi.get("confidence") is None:
        found = f"computed {reading_number(lv, 'nearest', 4)} ({_tool(lo)})"
    else:
        ends = []
        if lo is not None:
            ref_lo = high if d is not Direction.AT_LEAST else low
            ends.append(f"at least {_bound_number(lv, 'down', ref_lo, exact)} "
                        f"({_tool(lo)})")
        if hi is not None:
            ref_hi = low if d is not Direction.AT_MOST else high
            ends.append(f"at most {_bound_number(hv, 'up', ref_hi, exact)} "
                        f"({_tool(hi)})")
        found = ("certified " + " and ".join(ends)) if ends else "no certified bound"
    if verdict == "refuted":
        ratios = shortfall(b)
        if ratios:
            how = f"the claim is at least {reading_number(ratios[0], 'down')}x too small"
        elif d is Direction.AT_MOST or (lv is not None and lv > high):
            how = f"above the claim by at least {reading_number(lv - high, 'down')}"
        else:
            how = f"below the claim by at least {reading_number(low - hv, 'down')}"
        return f"{head}; {found}: {how}."
    if verdict == "holds":
        return f"{head}; {found}: holds."
    missing = ("" if lo is not None and hi is not None else
               ", no certified lower bound" if lo is None and hi is not None else
               ", no certified upper bound" if lo is not None else "")
    return f"{head}; {found}{missing}: undecided."
