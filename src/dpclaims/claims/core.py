"""The vocabulary of the claims layer: claims, readings, verdicts and their evidence
(docs/architecture.md).

A :class:`Claim` is one checkable statement from a paper, quoted exactly. Its
check produces one :class:`Verdict` per reading of the paper it rests on. A
verdict is computed by the check, never typed in:

``holds``
    The check ran at its stated strength and found nothing against the claim
    (an exact recomputation agrees; a property search found no counterexample; a
    Monte Carlo certificate found no violation).
``refuted``
    A certificate contradicts the claim: a property-test counterexample, a
    Clopper-Pearson epsilon lower bound above the claimed epsilon, a Monte Carlo
    confidence bound beyond a stated bound, or the claim's own parameters
    accounted for the sampling the algorithm really performs giving a larger
    epsilon than claimed. An estimate alone never refutes.
``inconclusive``
    The check ran but cannot decide (an audit whose certificate stays below the
    claim: audits can refute, never prove, privacy).
``not-checkable``
    The paper leaves out what the check needs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from dpclaims.analysis.validation import InputError  # noqa: F401  (re-exported)


class VerdictWord(str, Enum):
    """The four verdicts (module docstring)."""

    HOLDS = "holds"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    NOT_CHECKABLE = "not-checkable"


#: The verdicts' values, in the report's order.
VERDICTS = tuple(v.value for v in VerdictWord)


class ReadingKind(str, Enum):
    """Whose reading a verdict rests on (:class:`Reading`)."""

    #: what the paper's text (or its released code) says, or a reading it admits
    TEXT = "text"
    #: the suite's own correction of the paper (e.g. the noise recalibrated to the true
    #: sensitivity, the honest accounting of a shuffled pass)
    CORRECTION = "correction"
    #: a threat model stronger than the paper's (e.g. the order of a shuffled pass
    #: released to the adversary)
    STRONGER_THREAT_MODEL = "stronger-threat-model"


class Reading(str):
    """A reading's name (it is a ``str``) with its :class:`ReadingKind`.

    Declared where the reading is defined (a catalogue, a check), never inferred from
    the name. A plain ``str`` given as a verdict's reading is a reading of the paper's
    text. ``Reading("sep-invariant-recalibrated", ReadingKind.CORRECTION)``.

    Raises
    ------
    ValueError
        An empty name or an unknown kind.
    """

    kind: ReadingKind

    def __new__(cls, name: str, kind: ReadingKind | str = ReadingKind.TEXT):
        if not isinstance(name, str) or not name:
            raise ValueError(f"a reading needs a non-empty name, got {name!r}")
        obj = super().__new__(cls, name)
        obj.kind = ReadingKind(kind)
        return obj

    def __reduce__(self):
        return (Reading, (str(self), self.kind))

    @property
    def is_text(self) -> bool:
        return self.kind is ReadingKind.TEXT

    def joined(self, other: str, sep: str = "; ") -> Reading:
        """``self + sep + other`` as one reading: a reading of the paper's text only if
        both parts are (a correction or a stronger threat model in either part wins;
        CORRECTION before STRONGER_THREAT_MODEL when both)."""
        kinds = {reading_kind(self), reading_kind(other)}
        kind = next((k for k in (ReadingKind.CORRECTION, ReadingKind.STRONGER_THREAT_MODEL)
                     if k in kinds), ReadingKind.TEXT)
        return Reading(f"{self}{sep}{other}", kind)


def reading_kind(reading: str) -> ReadingKind:
    """The kind of ``reading``: its declared kind for a :class:`Reading`, TEXT for a
    plain ``str``."""
    return reading.kind if isinstance(reading, Reading) else ReadingKind.TEXT


class ClaimKind(str, Enum):
    """What a claim states, which fixes how it is checked (``Claim.kind``)."""

    SENSITIVITY = "sensitivity"
    PRIVACY_NUMBER = "privacy-number"
    AUDIT = "audit"
    MONTE_CARLO_BOUND = "monte-carlo-bound"
    IDENTITY = "identity"
    EXPERIMENT_STATEMENT = "experiment-statement"
    TABLE = "table"


#: Each claim kind and how it is checked, in words (the report's legend).
CLAIM_KINDS = {
    ClaimKind.SENSITIVITY.value: (
        "a stated sensitivity bound: hypothesis property test over neighbouring "
        "datasets (and random states)"),
    ClaimKind.PRIVACY_NUMBER.value: (
        "a reported (epsilon, delta): the accounting recomputed with every accountant, "
        "under the sampling assumed and the sampling performed"),
    ClaimKind.AUDIT.value: (
        "a privacy guarantee of a released statistic or a whole run: empirical audit "
        "with a Clopper-Pearson epsilon lower bound"),
    ClaimKind.MONTE_CARLO_BOUND.value: (
        "a stated bound or rate: Monte Carlo with certified (exact binomial or order-"
        "statistic) intervals"),
    ClaimKind.IDENTITY.value: (
        "an equation, a derivation or an arithmetic statement: exact recomputation or a"
        " property test of the identity"),
    ClaimKind.EXPERIMENT_STATEMENT.value: (
        "a comparative statement about experiments: paired runs at a stated size with "
        "an exact test"),
    ClaimKind.TABLE.value: (
        "a printed table: its numbers beside our runs, exact arithmetic checks"),
}


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper.

    Attributes
    ----------
    id : str
        e.g. ``dpsep/prop1-sensitivity``.
    paper : str
        Paper and version, e.g. ``DP-SEP v0 (dpsep_full_v0.txt)``.
    location : str
        Section / equation / table.
    statement : str
        The statement quoted exactly.
    check : str
        How it is checked, in words (property test, accounting, audit, Monte Carlo).
    kind : ClaimKind or str, optional
        One of :class:`ClaimKind` (stored as its value; declared in the catalogues; None
        for claims built on the fly without one). Raises ValueError for any other value.
    """

    id: str
    paper: str
    location: str
    statement: str
    check: str
    kind: str | None = None

    def __post_init__(self):
        if self.kind is not None:
            if self.kind not in CLAIM_KINDS:
                raise ValueError(f"kind must be one of {tuple(CLAIM_KINDS)} or None, got "
                                 f"{self.kind!r}")
            object.__setattr__(self, "kind", ClaimKind(self.kind).value)


class _RunSeed(Enum):
    """The seed of a verdict whose check names none (:data:`RUN_SEED`)."""

    RUN = "the run's root seed"

    def __repr__(self) -> str:
        return "RUN_SEED"


#: A verdict's ``seed`` when its check does not name one (the kernel's default): the
#: run's root seed, stamped by the runner (:meth:`Verdict.stamped`); ``None`` in
#: :meth:`Verdict.to_dict` until then. A check that draws nothing at random says
#: ``seed=None``; one that draws from a seed of its own (a child seed) names it.
RUN_SEED = _RunSeed.RUN


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check of ``claim`` under one ``reading`` (a frozen value).

    ``evidence`` holds the numbers (JSON-able), ``sentence`` what a reviewer reads,
    ``certificate`` whether the deciding number is a certificate (vs an estimate).
    ``seed``: the seed the check drew from; :data:`RUN_SEED` (the default) until the
    runner stamps the run's root seed, None for a check that draws nothing at random.
    ``budget``: the budget's name, None until the runner stamps it.
    ``data`` names the data the check ran on ("UCI kin8nm, the paper's data, from
    ~/.cache/dpclaims/uci", "statsmodels fair (embedded stand-in)", "none: synthetic
    inputs from the seed"); None when the check did not say (:func:`ran_on` stamps it).
    ``text_reading`` is False for a reading that is not the paper's (a
    :class:`Reading` of kind CORRECTION or STRONGER_THREAT_MODEL): such a reading
    never decides a claim's headline verdict (:func:`~dpclaims.claims.headline`).
    Left as None it is the reading's declared kind (:func:`reading_kind`; a plain
    ``str`` is a reading of the paper's text).

    A verdict is never changed: :meth:`stamped` gives a copy with what is missing
    filled in.
    """

    claim: Claim
    reading: str
    verdict: str
    sentence: str
    evidence: dict = field(default_factory=dict)
    seed: int | None = RUN_SEED
    budget: str | None = None
    certificate: bool = False
    figures: list[str] = field(default_factory=list)
    text_reading: bool | None = None
    data: str | None = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.text_reading is None:
            object.__setattr__(self, "text_reading",
                               reading_kind(self.reading) is ReadingKind.TEXT)

    __hash__ = None  # a value with a dict and a list inside: compared, never hashed

    def stamped(self, *, seed: int | None = None, budget: str | None = None,
                data: str | None = None) -> Verdict:
        """This verdict with what it does not say yet filled in (the runner's stamp):
        ``seed`` when its seed is :data:`RUN_SEED`, ``budget`` and ``data`` when they are
        None. What the check said itself (a child seed, "no seed", its own data) is
        kept. Returns ``self`` when nothing changes."""
        changes = {k: v for k, v, missing in (
            ("seed", seed, self.seed is RUN_SEED), ("budget", budget, self.budget is None),
            ("data", data, self.data is None)) if missing and v is not None}
        return dataclasses.replace(self, **changes) if changes else self

    def to_dict(self) -> dict:
        return {
            "claim_id": self.claim.id,
            "paper": self.claim.paper,
            "location": self.claim.location,
            "statement": self.claim.statement,
            "check": self.claim.check,
            "reading": str(self.reading),
            "reading_kind": reading_kind(self.reading).value,
            "verdict": self.verdict,
            "sentence": self.sentence,
            "certificate": self.certificate,
            "seed": None if self.seed is RUN_SEED else self.seed,
            "budget": self.budget,
            "figures": list(self.figures),
            "text_reading": self.text_reading,
            "data": self.data,
            "evidence": self.evidence,
        }


def to_jsonable(obj):
    """Recursively turn numpy values, NaN/inf and dataclasses into JSON-able values."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return to_jsonable(obj.item())
    if isinstance(obj, float):
        if math.isnan(obj):
            return "nan"
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return obj
    if hasattr(obj, "to_dict"):
        return to_jsonable(obj.to_dict())
    return obj


def ran_on(verdicts, data: str) -> list:
    """A new list of ``verdicts``, each that does not name its data yet stamped with
    ``data`` (:meth:`Verdict.stamped`); for chaining: ``verdicts += ran_on(check(...),
    "...")``.

    Raises
    ------
    ValueError
        An empty ``data``.
    """
    if not isinstance(data, str) or not data.strip():
        raise ValueError(f"ran_on needs the data named, got {data!r}")
    return [v.stamped(data=data) for v in verdicts]


#: Names that moved to :mod:`dpclaims.execution.checks` (issue 39): still importable
#: from here, with a DeprecationWarning.
_MOVED = ("CheckTimer", "_Handle", "_run_on_worker", "_portable")


def __getattr__(name):
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    from dpclaims.execution import checks

    warnings.warn(f"dpclaims.claims.core.{name} is deprecated: it moved to "
                  f"dpclaims.execution.checks.{name}", DeprecationWarning, stacklevel=2)
    return getattr(checks, name)
