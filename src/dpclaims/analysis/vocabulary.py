"""The closed vocabularies of privacy accounting, defined once.

:class:`Relation` (the neighbouring relation a claim is made under) and
:class:`SamplingKind` (how an algorithm draws its batches) are ``str`` enums: a member
compares equal to its value, so ``"replace-one"`` and ``Relation.REPLACE_ONE`` are the
same relation, and the tuples :data:`RELATIONS` and :data:`SAMPLINGS` list the values
in the order the suite reports them. The claims layer's vocabularies (verdicts, claim
kinds, reading kinds) are in :mod:`dpclaims.claims.core`; the whole-run threat models
in :mod:`dpclaims.audits.whole_run`.
"""

from __future__ import annotations

from enum import Enum


class Relation(str, Enum):
    """Neighbouring datasets: replace one record (bounded DP, N public) or add / remove
    one record (unbounded DP)."""

    REPLACE_ONE = "replace-one"
    ADD_REMOVE = "add-remove"


class SamplingKind(str, Enum):
    """How each step's batch is drawn: Poisson (each record independently), a uniformly
    random batch of fixed size without replacement, a shuffled pass cut into batches, a
    fixed-order pass, or the whole data (no sampling)."""

    POISSON = "poisson"
    WITHOUT_REPLACEMENT = "without-replacement"
    SHUFFLE = "shuffle"
    FIXED_ORDER = "fixed-order"
    NONE = "none"


#: The relations' values, in the order the suite reports them.
RELATIONS = tuple(r.value for r in Relation)
#: The samplings' values.
SAMPLINGS = tuple(s.value for s in SamplingKind)


def check_relation(relation: str) -> str:
    """``relation`` as its plain value; ValueError naming the known ones otherwise."""
    try:
        return Relation(relation).value
    except ValueError:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}") from None
