"""The neighbouring-pair search: candidate pairs, and a selection phase kept apart.

An audit's certificate holds for the pair it is computed on; the pair on which a
mechanism leaks most is not known in advance. The search proposes candidate
pairs and picks one *on trials of its own*, so that the certificate computed
afterwards on fresh trials never depends on the counts it is evaluated on: no
union bound over the candidates is needed (Bonferroni would spend alpha / K on
each of K candidates instead).

Candidates (:func:`candidate_pairs`), in this order, duplicates removed:

1. around the mechanism's ``data``: the canary search
   (:func:`~dpclaims.audits.mechanism.canary_pair`, the candidate records that
   move the ``query`` most) when it has a query, else record 0 replaced by (or a
   dataset extended with) a candidate record;
2. the mechanism's own ``neighbouring_pairs()`` (e.g. the pairs the literature
   audits a mechanism on);
3. from its record ``domain``: the domain's patterns
   (:meth:`~dpclaims.analysis.domains.Box.patterns`: for a box StatDP's
   query-answer patterns "one above", "one below", "one above rest below",
   "one below rest above", "half half", "all above", "all below", "x shape"),
   around ``data`` or, without data, around one record at the domain's centre;
4. ``n_random`` neighbouring pairs drawn with hypothesis from the domain
   (:func:`~dpclaims.property_tests.strategies.neighbouring_datasets`, seeded).

Selection (:func:`select_pair`): each candidate gets a pilot audit of
``n_trials`` outputs per dataset with its own seed (derived from the root seed
and the candidate's index, independent of the streams the final audit draws
from); the candidate with the largest pilot certificate wins (ties: the larger
credible bound, then the earlier candidate). The pilots use a cheap score
(:func:`~dpclaims.audits.scores.pilot_score`: never a classifier, which is fitted
once, by the final audit on the chosen pair).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpclaims.analysis.records import add_record, get_record, n_records, replace_record
from dpclaims.analysis.validation import check_count, check_probability
from dpclaims.audits.capabilities import read_mechanism
from dpclaims.audits.core import audit
from dpclaims.audits.mechanism import (
    InvalidMechanismError,
    NeighbouringPair,
    canary_pair,
    records_equal,
)
from dpclaims.audits.scores import pilot_score


def derived_seed(seed: int, *key: int) -> int:
    """A seed for a sub-procedure: ``SeedSequence([seed, *key])``'s first 63 bits."""
    state = np.random.SeedSequence([seed, *key]).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1]))


def data_candidates(mechanism) -> list | None:
    """The candidate canary records: ``mechanism.candidates``, else the records of ``data``."""
    caps = read_mechanism(mechanism)
    cands, data = caps.candidates, caps.data
    if cands is None and data is not None:
        cands = [get_record(data, i) for i in range(n_records(data))]
    return None if cands is None else list(cands)


def _data_pair(mech, data, cands, relation) -> NeighbouringPair | None:
    if mech.query is not None:
        if relation == "replace-one" and len(cands) >= 2:
            return canary_pair(mech, data, cands, index=0)
        if relation == "add-remove":
            return canary_pair(mech, data, cands, relation="add-remove")
        return None
    if relation == "add-remove":
        return NeighbouringPair(data, add_record(data, cands[0]), "add-remove",
                                "add the first candidate record")
    first = get_record(data, 0)
    other = next((r for r in cands if not records_equal(r, first)), None)
    if other is None:
        return None
    return NeighbouringPair(data, replace_record(data, 0, other), "replace-one",
                            "replace record 0 by a candidate")


def _pattern_pairs(domain, base, relation) -> list[NeighbouringPair]:
    out = []
    for name, r0, r1 in domain.patterns(relation):
        if relation == "add-remove":
            d1 = add_record(base, r1)
            out.append(NeighbouringPair(base, d1, relation,
                                        f"domain pattern '{name}': add it to "
                                        f"{n_records(base)} record(s)"))
        else:
            out.append(NeighbouringPair(replace_record(base, 0, r0), replace_record(base, 0, r1),
                                        relation, f"domain pattern '{name}': replace record 0 "
                                        f"of {n_records(base)}"))
    return out


def _key(pair: NeighbouringPair) -> tuple:
    """A hashable key of a pair's datasets (array, tuple or dict of arrays), for removing
    duplicate candidates."""
    def b(d):
        if isinstance(d, dict):
            return tuple((k, b(d[k])) for k in sorted(d))
        if isinstance(d, tuple):
            return tuple(b(c) for c in d)
        return np.asarray(d).shape, np.asarray(d, dtype=float).tobytes()
    return b(pair.d0), b(pair.d1)


def candidate_pairs(mechanism, *, seed: int = 0, n_random: int = 8) -> list[NeighbouringPair]:
    """Candidate neighbouring pairs for ``mechanism`` (module docstring), under its relation.

    Parameters
    ----------
    mechanism : Mechanism
        Its optional ``data``, ``candidates``, ``query``, ``neighbouring_pairs()``
        and ``domain`` are used.
    seed : int
        Seeds the hypothesis draws from the domain.
    n_random : int, default 8
        Pairs drawn at random from the domain (0: none).

    Returns
    -------
    list of NeighbouringPair
        Possibly empty (no data, no pairs, no domain).

    Raises
    ------
    InvalidMechanismError
        ``neighbouring_pairs()`` yields something other than a NeighbouringPair,
        or a pair under another relation than the claim's; ``data`` whose records
        do not have the domain's shape.
    """
    from dpclaims.property_tests.strategies import (
        domain_records,
        draw_examples,
        neighbouring_datasets,
    )

    mechanism = read_mechanism(mechanism)
    relation = mechanism.claim.relation
    data, domain = mechanism.data, mechanism.domain
    cands = data_candidates(mechanism)
    pairs: list[NeighbouringPair] = []
    if data is not None and cands:
        p = _data_pair(mechanism, data, cands, relation)
        if p is not None:
            pairs.append(p)
    own = mechanism.neighbouring_pairs
    if own is not None:
        for p in own():
            if not isinstance(p, NeighbouringPair):
                raise InvalidMechanismError(f"neighbouring_pairs() must yield NeighbouringPair "
                                            f"objects, got {type(p).__name__}")
            if p.relation != relation:
                raise InvalidMechanismError(f"neighbouring_pairs() gave a {p.relation} pair, but "
                                            f"the claim is under {relation}")
            pairs.append(p)
    if domain is not None:
        if data is not None and isinstance(data, tuple):
            base = None  # tuple datasets: records are tuples, the domain's are arrays
        elif data is not None:
            base = np.asarray(data, dtype=float)
            if base.shape[1:] != tuple(domain.shape):
                raise InvalidMechanismError(
                    f"mechanism {mechanism.name!r}: data records have shape {base.shape[1:]}, "
                    f"the domain's {tuple(domain.shape)}")
        else:
            base = np.asarray(domain.centre(), dtype=float)[None]
        if base is not None:
            pairs += _pattern_pairs(domain, base, relation)
            if n_random:
                strategy = neighbouring_datasets(
                    domain_records(domain), relation,
                    base=None if data is None else base, max_size=4)
                for i, (d0, d1) in enumerate(draw_examples(strategy, n_random, seed)):
                    pairs.append(NeighbouringPair(d0, d1, relation,
                                                  f"random pair {i} drawn from the domain"))
    unique, seen = [], set()
    for p in pairs:
        k = _key(p)
        if k in seen or k[0] == k[1]:
            continue
        seen.add(k)
        unique.append(p)
    return unique


@dataclass(frozen=True)
class PairSelection:
    """The outcome of :func:`select_pair`.

    Attributes
    ----------
    pair : NeighbouringPair
        The selected pair.
    index : int
        Its index among the candidates.
    n_candidates : int
    n_trials_each : int
        Pilot outputs per dataset and candidate (0: a single candidate, no pilot).
    pilots : list of dict
        Per candidate: description, pilot certificate, credible bound, AUROC, score.
    """

    pair: NeighbouringPair
    index: int
    n_candidates: int
    n_trials_each: int
    pilots: list = field(default_factory=list)

    def describe(self) -> str:
        if self.n_candidates == 1:
            return "one candidate pair: no selection"
        return (f"selected among {self.n_candidates} candidate pairs by pilot audits of "
                f"{self.n_trials_each} outputs per dataset each, on trials of their own (seeds "
                "derived from the root seed) with a cheap score (no classifier); the "
                "certificate is computed on fresh trials, so no union bound over the "
                "candidates is needed")

    def to_dict(self) -> dict:
        return {"selected": self.pair.description, "index": self.index,
                "n_candidates": self.n_candidates, "n_trials_each": self.n_trials_each,
                "rule": self.describe(), "pilots": list(self.pilots)}


def select_pair(mechanism, pairs, n_trials: int, *, alpha: float = 0.05, score=None,
                seed: int = 0, workers: int = 1) -> PairSelection:
    """Choose the pair to audit among ``pairs`` by pilot audits on separate trials.

    Parameters
    ----------
    mechanism : Mechanism
    pairs : sequence of NeighbouringPair
        At least one, under the claim's relation.
    n_trials : int
        Pilot outputs per dataset and candidate (>= 2).
    alpha : float
        The pilots' nominal level (it only ranks them; no certificate is reported
        from a pilot).
    score, workers
        As in :func:`~dpclaims.audits.core.audit`; a classifier score (or ``auto``
        choosing one) is replaced in the pilots by a cheap score
        (:func:`~dpclaims.audits.scores.pilot_score`): the classifier is fitted
        once, by the final audit on the chosen pair.
    seed : int
        Candidate j's pilot uses ``derived_seed(seed, 5, j)``.

    Returns
    -------
    PairSelection

    Raises
    ------
    ValueError
        No pairs, n_trials < 2, alpha outside (0, 1).
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("select_pair needs at least one candidate pair")
    if len(pairs) == 1:
        return PairSelection(pairs[0], 0, 1, 0)
    n_trials = check_count(n_trials, "n_trials", minimum=2)
    alpha = check_probability(alpha, "alpha")
    pilots, keys = [], []
    cheap = pilot_score(score)
    for j, p in enumerate(pairs):
        r = audit(mechanism, p, n_trials, alpha=alpha, score=cheap,
                  seed=derived_seed(seed, 5, j), workers=workers, posterior_samples=20_000)
        pilots.append({"pair": p.description, "pilot_certificate": round(r.epsilon_lower_bound, 6),
                       "pilot_credible_bound": round(r.epsilon_credible_lower, 6),
                       "pilot_auroc": round(r.auroc, 6), "score": r.score_name})
        keys.append((r.epsilon_lower_bound, r.epsilon_credible_lower, -j))
    best = max(range(len(pairs)), key=lambda j: keys[j])
    return PairSelection(pairs[best], best, len(pairs), n_trials, pilots)
