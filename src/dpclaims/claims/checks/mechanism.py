"""The checks of a user's mechanism that ``check-variant`` and the pytest plugin share.

:mod:`dpclaims.pytest_plugin` gives every test two fixtures, ``audit`` and
``check_sensitivity``, which call :func:`audit_mechanism` and
:func:`check_mechanism_sensitivity` with the session's
:class:`~dpclaims.claims.budgets.VariantBudget` (``VariantBudget.for_tests(...)``) and a
seed derived from the test's node id (:func:`seed_from_node_id`). Both return a
value with a ``verdict``, decided by the verdict kernel (:mod:`dpclaims.claims.kernel`,
through :func:`~dpclaims.claims.checks.bounds.audit_verdict` and
:func:`~dpclaims.claims.checks.bounds.search_verdict`, as in ``check-variant``), its
``sentence`` and a ``message``: ``refuted`` or ``inconclusive``, never ``holds`` (an audit
cannot prove privacy, and a search that finds no counterexample certifies no bound).
:func:`assert_not_refuted` fails a test with the message when the verdict is
``refuted``. A user's test imports them from :mod:`dpclaims.testing`, which re-exports
them with what a test of a mechanism needs.

The checks are those of ``dpclaims check-variant``
(``dpclaims.claims.checks.variant``), built from the same pipeline:
:func:`record_strategy` and :func:`property_test` (the property test of the claimed
sensitivity, :func:`~dpclaims.property_tests.sensitivity.check_sensitivity`), the pair
search :func:`~dpclaims.audits.search.candidate_pairs` and :func:`select_and_audit`
(:func:`~dpclaims.audits.search.select_pair`, then the audit
:func:`~dpclaims.audits.core.audit`: a Clopper-Pearson certificate, an epsilon lower
bound that holds with probability >= 1 - alpha whatever the mechanism). Every check reads
the mechanism's capabilities once
(:func:`~dpclaims.audits.mechanism.validate_mechanism`,
:mod:`dpclaims.audits.capabilities`). Only the budget differs: a test-sized one
(:data:`~dpclaims.claims.budgets.TEST_BUDGET`, ``VariantBudget.for_tests()``; the
deprecated name :func:`CheckBudget` returns one), enough to refute a large bug (half the
Laplace noise) in well under a second, not to certify a small one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from dpclaims.analysis.domains import Ball, Box, FiniteSet, Product, check_domain
from dpclaims.analysis.validation import check_count
from dpclaims.audits.capabilities import read_mechanism
from dpclaims.audits.core import AuditResult, audit
from dpclaims.audits.mechanism import (
    NeighbouringPair,
    PrivacyClaim,
    Sensitivity,
    real_array,
    validate_mechanism,
)
from dpclaims.audits.search import (
    PairSelection,
    candidate_pairs,
    data_candidates,
    derived_seed,
    select_pair,
)
from dpclaims.claims.budgets import TEST_BUDGET, CheckBudget, VariantBudget  # noqa: F401
from dpclaims.claims.checks.bounds import audit_verdict, search_verdict
from dpclaims.claims.core import Claim
from dpclaims.property_tests.sensitivity import SensitivityCheck, check_sensitivity
from dpclaims.property_tests.strategies import domain_records, neighbouring_datasets


def seed_from_node_id(node_id: str, base_seed: int = 0, call: int = 0) -> int:
    """The seed of the ``call``-th check in the test ``node_id``.

    ``derived_seed(base_seed, 7, h0, h1, call)``
    (:func:`~dpclaims.audits.search.derived_seed`) with h0, h1 the first two 32-bit
    words of the SHA-256 of the node id (e.g.
    ``"tests/test_my_mechanism.py::test_audit[eps=1]"``, relative to pytest's
    rootdir): the same test gets the same seed in every run and on every machine,
    different tests (and parametrisations) get independent ones.

    Parameters
    ----------
    node_id : str
        pytest's node id of the test.
    base_seed : int, default 0
        The session's ``--dpclaims-seed`` (>= 0).
    call : int, default 0
        How many checks the test ran before this one (>= 0).

    Returns
    -------
    int
        A seed in [0, 2^63).

    Raises
    ------
    ValueError
        A negative base seed or call number.
    """
    check_count(base_seed, "base_seed", minimum=0)
    check_count(call, "call", minimum=0)
    digest = hashlib.sha256(node_id.encode()).digest()
    h0, h1 = int.from_bytes(digest[:4], "big"), int.from_bytes(digest[4:8], "big")
    return derived_seed(base_seed, 7, h0, h1, call)


def _short(data, limit: int = 160) -> str:
    """A dataset as one line, at most ``limit`` characters (values to 6 decimals)."""
    if isinstance(data, tuple):
        text = "(" + ", ".join(_short(c, limit) for c in data) + ")"
    else:
        arr = np.asarray(data)
        if arr.size <= 16:
            text = repr(np.round(arr, 6).tolist() if arr.dtype.kind in "fc" else arr.tolist())
        else:
            text = np.array2string(arr, threshold=12, precision=4, separator=", ")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _claim(mechanism, kind: str, statement: str, check: str) -> Claim:
    """The claim a check in a user's test decides (as ``check-variant``'s, in a test)."""
    kinds = {"sensitivity": "sensitivity", "empirical-audit": "audit"}
    return Claim(f"{mechanism.name}/{kind}", f"mechanism {mechanism.name!r}",
                 "user test", statement, check, kind=kinds[kind])


def _pair_text(pair: NeighbouringPair) -> str:
    return (f"{pair.description or 'the given pair'} ({pair.relation}); "
            f"d0 = {_short(pair.d0)}, d1 = {_short(pair.d1)}")


@dataclass(frozen=True)
class AuditOutcome:
    """The outcome of :func:`audit_mechanism`: a verdict on the claim, with its certificate.

    Attributes
    ----------
    verdict : {"refuted", "inconclusive"}
        ``refuted`` when the certificate exceeds the claimed epsilon; an audit
        cannot prove privacy, so a claim it does not refute is ``inconclusive``
        (decided by the verdict kernel,
        :func:`~dpclaims.claims.checks.bounds.audit_verdict`).
    mechanism : str
        The mechanism's name.
    claim : PrivacyClaim
        What the mechanism claims.
    epsilon_lower_bound : float
        The certificate (nats): <= the true epsilon with probability >= 1 - alpha.
    pair : NeighbouringPair
        The pair the certificate was computed on.
    seed : int
        The audit's seed: ``audit_mechanism(..., seed=seed)`` (or the fixture's
        ``seed=``) with the same budget reproduces every number.
    budget : VariantBudget
        The budget it ran with.
    result : AuditResult
        Everything :func:`~dpclaims.audits.core.audit` returned (estimates, counts,
        score, trade-off points).
    selection : PairSelection or None
        How the pair was chosen when several were candidates (None: one pair given).
    sentence : str
        The verdict kernel's sentence: what decided the verdict, or why nothing could
        (e.g. an audit too small to certify anything above the claim: not-checkable).
    """

    verdict: str
    mechanism: str
    claim: PrivacyClaim
    epsilon_lower_bound: float
    pair: NeighbouringPair
    seed: int
    budget: VariantBudget
    result: AuditResult
    selection: PairSelection | None = None
    sentence: str = ""

    @property
    def claimed_epsilon(self) -> float:
        """The claim's epsilon (nats)."""
        return self.claim.epsilon

    @property
    def message(self) -> str:
        """The verdict with its evidence, in the words of ``dpclaims check-variant``."""
        r, c = self.result, self.claim
        if self.verdict == "refuted":
            head = (f"dpclaims: the privacy claim of {self.mechanism!r} is refuted: certified "
                    f"epsilon >= {self.epsilon_lower_bound:.4g} > claimed epsilon "
                    f"{c.epsilon:.4g} (delta {c.delta:g}, {c.relation})")
        else:
            head = (f"dpclaims: the privacy claim of {self.mechanism!r} is not refuted "
                    f"(inconclusive): certified epsilon >= {self.epsilon_lower_bound:.4g} "
                    f"against the claimed {c.epsilon:.4g} (delta {c.delta:g}, {c.relation})")
        gdp = "n/a" if r.epsilon_gdp_estimate is None else f"{r.epsilon_gdp_estimate:.3g}"
        lines = [
            head,
            f"  pair: {_pair_text(self.pair)}",
            f"  certificate: Clopper-Pearson at {1 - r.alpha:.0%} confidence on "
            f"{r.n_held_out} held-out of {r.n_trials} outputs per dataset, score {r.score_name}"
            f"{'' if r.tie_probability is None else ' (randomised threshold)'}",
            f"  estimates (never refute): GDP epsilon {gdp}, credible bound "
            f"{r.epsilon_credible_lower:.3g}, AUROC {r.auroc:.3f}",
        ]
        if self.selection is not None:
            lines.append(f"  pair chosen among {self.selection.n_candidates} candidate(s) by "
                         f"pilot audits of {self.selection.n_trials_each} outputs each")
        lines.append(f"  seed: {self.seed} (reproduce with seed={self.seed} and "
                     f"{self.budget.n_trials} trials)")
        return "\n".join(lines)


@dataclass(frozen=True)
class SensitivityOutcome:
    """The outcome of :func:`check_mechanism_sensitivity`.

    Attributes
    ----------
    verdict : {"refuted", "inconclusive"}
        ``refuted`` when hypothesis found a neighbouring pair whose query distance
        exceeds the claimed sensitivity (beyond floating-point rounding);
        ``inconclusive`` when none was found within the search budget: a search
        refutes a bound but cannot certify one (the verdict kernel's rule,
        :func:`~dpclaims.claims.checks.bounds.search_verdict`).
    mechanism : str
        The mechanism's name.
    sensitivity : Sensitivity
        The claimed sensitivity (value and norm).
    relation : str
        The claim's neighbouring relation.
    seed : int
        The search's seed.
    result : SensitivityCheck
        The property test's outcome (largest ratio seen, number of examples, the
        shrunk counterexample).
    sentence : str
        The verdict kernel's sentence (the certified lower bound the search found, and
        why it does or does not decide the claim).
    """

    verdict: str
    mechanism: str
    sensitivity: Sensitivity
    relation: str
    seed: int
    result: SensitivityCheck
    sentence: str = ""

    @property
    def message(self) -> str:
        """The verdict with its evidence (the shrunk counterexample when refuted)."""
        s, r = self.sensitivity, self.result
        norm = {1: "L1", 2: "L2"}.get(s.norm, "L-inf")
        if self.verdict == "refuted":
            d0, d1 = r.counterexample
            return "\n".join([
                f"dpclaims: the claimed {norm} sensitivity {s.value:.6g} of {self.mechanism!r} "
                f"is refuted: a {self.relation} pair moves the query by "
                f"{r.counterexample_ratio:.4g} x the claim",
                f"  pair (shrunk by hypothesis): d0 = {_short(d0)}, d1 = {_short(d1)}",
                f"  largest ratio in {r.n_examples} examples: {r.max_ratio:.4g}",
                f"  seed: {self.seed}",
            ])
        return "\n".join([
            f"dpclaims: the claimed {norm} sensitivity {s.value:.6g} of {self.mechanism!r} "
            f"is not refuted (inconclusive): no counterexample in {r.n_examples} "
            f"{self.relation} pairs (largest ratio {r.max_ratio:.4g} x the claim); a search "
            "refutes a bound but cannot certify one",
            f"  seed: {self.seed}",
        ])


def _is_domain(obj) -> bool:
    return isinstance(obj, (Box, Ball, FiniteSet, Product))


def record_strategy(mechanism, domain=None, records_attr: bool = True):
    """The records neighbouring datasets of ``mechanism`` are built from, or None.

    In order: the mechanism's ``records`` strategy (when ``records_attr``), records drawn
    from ``domain`` (:func:`~dpclaims.property_tests.strategies.domain_records`), the
    distinct records of its ``data`` and ``candidates``
    (:func:`~dpclaims.audits.search.data_candidates`). Shared by
    :func:`check_mechanism_sensitivity` and ``check-variant``.
    """
    recs = read_mechanism(mechanism).records if records_attr else None
    if recs is None and domain is not None:
        recs = domain_records(domain)
    cands = data_candidates(mechanism)
    if recs is None and cands:
        recs = st.sampled_from(cands)
    return recs


def property_test(query, sens: Sensitivity, strategy, max_examples: int,
                  seed: int, name: str = "") -> SensitivityCheck:
    """:func:`~dpclaims.property_tests.sensitivity.check_sensitivity` of ``query``'s claimed
    ``sens`` over the neighbouring pairs of ``strategy`` (distance in ``sens``'s norm,
    magnitude the sum of the two outputs' L2 norms). Shared by
    :func:`check_mechanism_sensitivity` and ``check-variant``.

    Raises InvalidMechanismError when ``query`` returns anything but real numbers
    (:func:`~dpclaims.audits.mechanism.real_array`); ``name`` names its owner."""
    what = f"mechanism {name!r}: query(data)" if name else "query(data)"

    def q(d):
        return real_array(query(d), what)

    return check_sensitivity(
        strategy, lambda p: sens.distance(q(p[0]), q(p[1])), sens.value,
        max_examples=max_examples, seed=seed,
        magnitude=lambda p: float(np.linalg.norm(q(p[0])) + np.linalg.norm(q(p[1]))))


def select_and_audit(mechanism, pairs, *, n_trials: int, selection_trials: int, alpha: float,
                     score, seed: int, workers: int) -> tuple[PairSelection, AuditResult]:
    """Pick the pair with the largest pilot certificate
    (:func:`~dpclaims.audits.search.select_pair`, pilots on their own seeds), then audit
    it on fresh trials at the full ``alpha`` (:func:`~dpclaims.audits.core.audit`, seed
    ``seed``). Shared by :func:`audit_mechanism` and ``check-variant``."""
    selection = select_pair(mechanism, pairs, selection_trials, alpha=alpha, score=score,
                            seed=seed, workers=workers)
    r = audit(mechanism, selection.pair, n_trials, alpha=alpha, score=score, seed=seed,
              workers=workers)
    return selection, r


def audit_mechanism(mechanism, where=None, *, budget: VariantBudget | None = None,
                    seed: int = 0, score=None) -> AuditOutcome:
    """Audit ``mechanism``'s privacy claim as ``dpclaims check-variant`` does, on a test budget.

    Parameters
    ----------
    mechanism : Mechanism
        Follows :class:`~dpclaims.audits.mechanism.Mechanism` (``name``, ``claim``,
        ``release(data, rng, n) -> (n, ...)``; optional ``query``, ``sensitivity``,
        ``data``, ``domain``, ``candidates``, ``neighbouring_pairs()``, ``score``).
    where : NeighbouringPair, sequence of NeighbouringPair, Box, Ball, FiniteSet, Product or None
        What to audit on. A pair: that pair, no search. Several pairs: the one
        with the largest pilot certificate
        (:func:`~dpclaims.audits.search.select_pair`). A record domain: the
        candidates :func:`~dpclaims.audits.search.candidate_pairs` builds from it
        (and from the mechanism's ``data`` and ``neighbouring_pairs()``), then
        selected. None: the same from the mechanism's own attributes.
    budget : VariantBudget, optional
        Default :data:`~dpclaims.claims.budgets.TEST_BUDGET` (``VariantBudget.for_tests()``).
    seed : int, default 0
        Candidate pairs are drawn with ``derived_seed(seed, 6)``, pilot j with
        ``derived_seed(seed, 5, j)``, the final audit with ``seed``: as in
        ``check-variant``.
    score : str, callable or None
        The attack score (:func:`~dpclaims.audits.core.audit`); None: the
        mechanism's own ``score`` attribute, else "auto".

    Returns
    -------
    AuditOutcome
        ``verdict`` "refuted", "inconclusive" or, for an audit too small to certify
        anything above the claim, "not-checkable" (decided by the verdict kernel), its
        ``sentence``, the certificate and its evidence.

    Raises
    ------
    InvalidMechanismError
        Not a mechanism, or a release of the wrong or a changing shape or with
        non-finite values (a TypeError and a ValueError).
    ValueError
        No pair to audit on (no ``data``, no ``domain``, no ``neighbouring_pairs()``
        and no ``where``), a pair under another relation than the claim's, an
        empty sequence of pairs.
    TypeError
        ``where`` of another type.
    """
    budget = TEST_BUDGET if budget is None else budget
    mechanism = validate_mechanism(mechanism)
    score = score or mechanism.score
    selection = None
    if isinstance(where, NeighbouringPair):
        pair = where
        r = audit(mechanism, pair, budget.n_trials, alpha=budget.alpha, score=score, seed=seed,
                  workers=budget.workers)
    else:
        if where is None or _is_domain(where):
            searched = mechanism if where is None else replace(mechanism,
                                                               domain=check_domain(where))
            pairs = candidate_pairs(searched, seed=derived_seed(seed, 6),
                                    n_random=budget.n_random_pairs)
            if not pairs:
                raise ValueError(
                    f"nothing to audit {mechanism.name!r} on: give a NeighbouringPair or a "
                    "record domain (Box, Ball, FiniteSet, Product), or give the mechanism "
                    "`data`, a `domain` or `neighbouring_pairs()`")
        elif isinstance(where, (list, tuple)) and all(isinstance(p, NeighbouringPair)
                                                      for p in where):
            pairs = list(where)
            if not pairs:
                raise ValueError("an empty list of neighbouring pairs: nothing to audit on")
        else:
            raise TypeError(f"where must be a NeighbouringPair, a list of them, a record domain "
                            f"(Box, Ball, FiniteSet, Product) or None, got {type(where).__name__}")
        selection, r = select_and_audit(
            mechanism, pairs, n_trials=budget.n_trials,
            selection_trials=budget.pilot_trials, alpha=budget.alpha, score=score,
            seed=seed, workers=budget.workers)
        pair = selection.pair
        if selection.n_candidates == 1:
            selection = None
    c = mechanism.claim
    v = audit_verdict(_claim(mechanism, "empirical-audit",
                             f"each release is ({c.epsilon:.6g}, {c.delta:g})-DP under "
                             f"{c.relation}", "empirical audit (Clopper-Pearson certificate)"),
                      "as-given", r, seed=seed)
    return AuditOutcome(v.verdict, mechanism.name, c, r.epsilon_lower_bound, pair, seed,
                        budget, r, selection, sentence=v.sentence)


def check_mechanism_sensitivity(mechanism, where=None, *, budget: VariantBudget | None = None,
                                seed: int = 0) -> SensitivityOutcome:
    """Property test of ``mechanism``'s claimed sensitivity, as ``dpclaims check-variant``'s.

    Is ``sensitivity.distance(query(d0), query(d1)) <= sensitivity.value`` for every
    neighbouring pair (d0, d1) under the claim's relation? Hypothesis searches for a
    violation (:func:`~dpclaims.property_tests.sensitivity.check_sensitivity`,
    guided towards large ratios, only floating-point rounding forgiven) and shrinks
    the one it finds.

    Parameters
    ----------
    mechanism : Mechanism
        Needs ``query(data)`` and ``sensitivity`` (a :class:`Sensitivity`, or a plain
        number read as the L2 sensitivity).
    where : Box, Ball, FiniteSet, Product, hypothesis strategy or None
        Where the pairs come from. A strategy: it draws pairs ``(d0, d1)`` itself
        (e.g. :func:`~dpclaims.property_tests.strategies.neighbouring_datasets`). A
        record domain, or None for the mechanism's own: records drawn from it
        (:func:`~dpclaims.property_tests.strategies.domain_records`), or from the
        mechanism's ``records`` strategy or ``candidates`` (default: the records of
        its ``data``); the pairs are built around the mechanism's ``data`` when it
        has one, else drawn whole (1 to 8 records).
    budget : VariantBudget, optional
        Default :data:`~dpclaims.claims.budgets.TEST_BUDGET` (``VariantBudget.for_tests()``).
        Its ``max_examples`` is the hypothesis budget.
    seed : int, default 0
        Seeds the search (same seed, same examples).

    Returns
    -------
    SensitivityOutcome
        ``verdict`` "refuted" or "inconclusive" (no counterexample found: a search
        certifies no bound), the kernel's ``sentence``, the largest ratio and the
        counterexample.

    Raises
    ------
    ValueError
        The mechanism states no sensitivity, has no ``query``, or has nothing to draw
        datasets from (no ``where``, no ``data``, no ``domain``).
    InvalidMechanismError
        Not a mechanism (a TypeError and a ValueError).
    """
    budget = TEST_BUDGET if budget is None else budget
    mechanism = validate_mechanism(mechanism)
    sens, query = mechanism.sensitivity, mechanism.query
    if sens is None or query is None:
        raise ValueError(f"mechanism {mechanism.name!r} needs a `query(data)` and a claimed "
                         "`sensitivity` for the sensitivity property test")
    relation = mechanism.claim.relation
    if isinstance(where, SearchStrategy):
        strategy = where
    else:
        domain = mechanism.domain if where is None else check_domain(where)
        data = mechanism.data
        recs = record_strategy(mechanism, domain, records_attr=where is None)
        if recs is None or (data is None and domain is None):
            raise ValueError(f"nothing to draw neighbouring datasets of {mechanism.name!r} from: "
                             "give a record domain (Box, Ball, FiniteSet, Product) or a "
                             "strategy of pairs, or give the mechanism `data` or a `domain`")
        strategy = neighbouring_datasets(recs, relation, base=data)
    res = property_test(query, sens, strategy, budget.max_examples, seed, mechanism.name)
    norm = {1: "L1", 2: "L2"}.get(sens.norm, "L-inf")
    claim = _claim(mechanism, "sensitivity",
                   f"||query(D) - query(D')||_{sens.norm} <= {sens.value:.6g} for {relation} "
                   "neighbours", "hypothesis property test")
    v = search_verdict(claim, "as-given", res, quantity=f"{norm} sensitivity",
                       pairs=f"{relation} pairs", seed=seed)
    return SensitivityOutcome(v.verdict, mechanism.name, sens, relation, seed, res,
                              sentence=v.sentence)


def assert_not_refuted(outcome: AuditOutcome | SensitivityOutcome) -> None:
    """Fail (AssertionError with ``outcome.message``) when ``outcome.verdict`` is refuted.

    For an audit the message gives the certified epsilon lower bound, the claimed
    epsilon, the pair (its description and both datasets, abridged) and the seed;
    for a sensitivity test the shrunk counterexample and the seed.

    Raises
    ------
    AssertionError
        The verdict is ``refuted``.
    TypeError
        ``outcome`` is not an :class:`AuditOutcome` or :class:`SensitivityOutcome`.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    if not isinstance(outcome, (AuditOutcome, SensitivityOutcome)):
        raise TypeError(f"assert_not_refuted takes the outcome of the `audit` or "
                        f"`check_sensitivity` fixture, got {type(outcome).__name__}")
    if outcome.verdict == "refuted":
        raise AssertionError(outcome.message)

