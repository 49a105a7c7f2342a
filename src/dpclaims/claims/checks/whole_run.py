"""Checks of an algorithm's claims: the update's sensitivity, the accounting, the whole run.

``dpclaims check-variant FILE.py:OBJECT`` on an object following the algorithm protocol
(:mod:`dpclaims.audits.whole_run`) gives one verdict per claim it makes (per reading for
the accounting of the sampling performed):

``<name>/step-sensitivity``  (when it has ``step``) hypothesis property test: from random
    states (``random_states``), does one noisy update on neighbouring batches move the
    release by at most ``step_sensitivity``? Both batches get the same ``rng`` seed, so
    the noise and the sampling coincide and the distance is that of the noiseless
    updates. A counterexample refutes; a search that finds none certifies nothing
    (inconclusive, :func:`~dpclaims.claims.checks.bounds.search_verdict`).
``<name>/accounting``  (when its claim has a dp_event) the whole-run event recomputed by
    every accountant (the same check as for a mechanism).
``<name>/accounting-as-performed``  (when it has ``sampling`` or ``performed_event``) the
    claim accounted for the sampling really performed (:func:`check_performed_sampling`).
``<name>/library-accounting``  (when it has ``library_accounting``) a library's own
    accountant as a reading of its own, against the sampling performed
    (:func:`~dpclaims.claims.checks.performed_sampling.check_library_accounting`).
``<name>/whole-run-audit``  (always) :func:`~dpclaims.audits.whole_run.audit_whole_run`
    with the gradient canary (or the input-space canary), under the algorithm's threat
    model: ``refuted`` when the Clopper-Pearson certificate exceeds the claimed epsilon
    at the claimed delta; ``inconclusive`` otherwise (an audit cannot prove privacy;
    :func:`~dpclaims.claims.checks.bounds.audit_verdict`). Given pilot runs (the
    budget's ``selection_trials``), the neighbouring datasets are chosen among the
    adversarial candidates by pilot audits on runs of their own
    (:func:`~dpclaims.audits.adversarial.audit_whole_run_searched`) and a full trace's
    statistic is chosen on the training split
    (:mod:`~dpclaims.audits.trace_statistics`); the evidence names the dataset that
    decided, every pilot, and the statistic.
``<name>/one-run-audit``  (instead of the whole-run audit when the budget's ``one_run``
    is set: ``check-variant --one-run M``) :func:`~dpclaims.audits.one_run.audit_one_run`
    with M Dirac gradient canaries in each of ``one_run_runs`` runs; ``not-checkable``
    with the reason when the algorithm lacks the capability
    (:class:`~dpclaims.audits.capabilities.HasGradientCanaries`) or has fewer slots
    (:func:`check_one_run_audit`).

Every verdict comes from the verdict kernel (:mod:`dpclaims.claims.kernel`) on certified
bounds, through the adapters of :mod:`dpclaims.claims.checks.bounds`. A correct
algorithm is refuted by the audit with probability at most alpha (the certificate's
confidence is 1 - alpha).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from dpclaims.analysis.accounting import account_event
from dpclaims.analysis.records import dataset_as_lists, get_record, n_records
from dpclaims.audits.adversarial import audit_whole_run_searched, dataset_summary
from dpclaims.audits.capabilities import read_algorithm
from dpclaims.audits.mechanism import InvalidMechanismError, Sensitivity
from dpclaims.audits.one_run import audit_one_run, offers_gradient_canaries
from dpclaims.audits.whole_run import (
    STATISTICS,
    THREAT_MODEL_TEXT,
    audit_whole_run,
    default_canary,
    validate_algorithm,
)
from dpclaims.claims.checks.bounds import (
    audit_verdict,
    epsilon_bounds,
    one_run_verdict,
    search_verdict,
)
from dpclaims.claims.checks.performed_sampling import (
    check_declared_sampling,
    check_library_accounting,
    read_library_accounting,
    read_sampling,
)
from dpclaims.claims.core import Claim, InputError, Reading, ReadingKind, Verdict
from dpclaims.claims.kernel import Claimed, decide, not_checkable
from dpclaims.property_tests.sensitivity import check_sensitivity
from dpclaims.property_tests.strategies import neighbouring_datasets

#: Random states per property-test example (the distance is the largest over them).
STATES_PER_EXAMPLE = 8


def _claim(alg, kind: str, statement: str, check: str) -> Claim:
    kinds = {"step-sensitivity": "sensitivity", "accounting-as-performed": "privacy-number",
             "whole-run-audit": "audit", "one-run-audit": "audit"}
    return Claim(f"{alg.name}/{kind}", f"variant {alg.name!r}", "user algorithm",
                 statement, check, kind=kinds.get(kind))


def _records(data) -> list:
    return [get_record(data, i) for i in range(n_records(data))]


def _batch(alg):
    """The base batch of the property test: the first ``batch_size`` records of ``data``
    (one record for a DP-SEP-like step, ``step_batch_size`` if the algorithm states it)."""
    alg = read_algorithm(alg)
    data = alg.data
    b = alg.step_batch_size or alg.batch_size
    if b is None:
        b = 1 if alg.relation == "replace-one" else min(n_records(data), 4)
    recs = [get_record(data, i) for i in range(int(b))]
    if isinstance(recs[0], tuple):
        return tuple(np.stack([r[j] for r in recs]) for j in range(len(recs[0])))
    return np.stack(recs)


def check_step_sensitivity(alg, max_examples: int, seed: int) -> Verdict | None:
    """The property test of the update's claimed sensitivity (module docstring); None when
    the algorithm has no ``step``."""
    alg = read_algorithm(alg)
    if alg.step is None:
        return None
    sens = alg.step_sensitivity
    if not isinstance(sens, Sensitivity):
        sens = Sensitivity(float(sens), 2)      # a plain number: the L2 sensitivity
    relation = alg.claim.relation
    claim = _claim(alg, "step-sensitivity",
                   f"one update from any state moves its release by at most {sens.value:.6g} "
                   f"(L{sens.norm}) between {relation} neighbouring batches",
                   "hypothesis property test from random states")
    data = alg.data
    if data is None:
        return not_checkable(claim, "as-given", "`data` to draw batches from: the algorithm "
                             "has `step` but no `data`", seed=seed)
    records = _records(data) + list(alg.candidates or [])
    base = _batch(alg)
    pairs = neighbouring_datasets(st.sampled_from(records), relation, base=base)
    strategy = st.tuples(st.integers(0, 2**32 - 1), pairs)

    def releases(example):
        s, (d0, d1) = example
        states = alg.random_states(np.random.default_rng(s), STATES_PER_EXAMPLE)
        r0 = alg.step(states, d0, np.random.default_rng([s, 1]))
        r1 = alg.step(states, d1, np.random.default_rng([s, 1]))
        return np.asarray(r0, float), np.asarray(r1, float)

    def distance(example):
        r0, r1 = releases(example)
        return float(np.max(np.linalg.norm(r0 - r1, ord=sens.norm, axis=1)))

    def magnitude(example):
        r0, r1 = releases(example)
        return float(np.max(np.linalg.norm(r0, axis=1) + np.linalg.norm(r1, axis=1)))

    res = check_sensitivity(strategy, distance, sens.value, max_examples=max_examples,
                            seed=seed, magnitude=magnitude)
    ev = {"claimed": sens.value, "norm": str(sens.norm), "max_ratio": res.max_ratio,
          "n_examples": res.n_examples, "relation": relation,
          "states_per_example": STATES_PER_EXAMPLE,
          "batches": f"around the first {n_records(base)} record(s) of `data`, records from "
                     f"`data` and `candidates` ({len(records)} in all)"}
    if res.violated:
        s, (d0, d1) = res.counterexample
        ev["counterexample"] = {"state_seed": int(s), "ratio": res.counterexample_ratio,
                                "d0": dataset_as_lists(d0), "d1": dataset_as_lists(d1)}
    pairs = f"{relation} pairs of batches, {STATES_PER_EXAMPLE} random states each"
    context = (f"The counterexample moves the update by {res.counterexample_ratio:.4g} x the "
               f"claimed {sens.value:.4g} from a random state (its state seed and batches in "
               "the evidence)." if res.violated else
               f"The largest distance seen was {res.max_ratio:.4g} x the claimed "
               f"{sens.value:.4g}.")
    return search_verdict(claim, "as-given", res, quantity=f"L{sens.norm} sensitivity of "
                          "the update", pairs=pairs, context=context, evidence=ev, seed=seed)


def check_performed_sampling(alg, seed: int) -> list[Verdict]:
    """The claim accounted for the sampling the algorithm really performs: its declared
    ``sampling`` (a :class:`~dpclaims.analysis.sampling.Sampling`; the accounting follows
    it, :func:`~dpclaims.claims.checks.performed_sampling.check_declared_sampling`), else
    its ``performed_event`` (e.g. a shuffled pass: one unamplified Gaussian per epoch).
    A ``performed_event`` that disagrees with a declared ``sampling`` is bad input
    (InputError).

    Two readings, each decided by the verdict kernel on the accountants' certified
    bounds (:func:`~dpclaims.claims.checks.bounds.epsilon_bounds`; the query is the
    user's, ``query="general"``):

    ``as performed, order known to the adversary``
        The event is exact for an adversary who knows the pass order: the certified
        bracket of every accountant (e.g. the analytic Gaussian's). A threat model
        stronger than the claim's, so this reading is shown and never decides the
        claim's headline (a :class:`~dpclaims.claims.core.Reading` of kind
        STRONGER_THREAT_MODEL).
    ``as performed, hidden shuffle``
        For a hidden shuffle the event's epsilon is only an upper bound
        (:class:`~dpclaims.analysis.accounting.Sampling`): no certified lower bound, so
        it holds when an upper bound is at most the claim and is inconclusive otherwise
        (the whole-run audit is the check that can refute it).

    Both only when the algorithm declares ``performed_is_shuffle = True`` (its
    ``performed_event`` is a shuffled pass as one Gaussian per epoch). Any other
    ``performed_event`` is what the algorithm performs: one reading, ``as performed``,
    decided on the event's certified bracket.

    [] without ``sampling`` and ``performed_event``.
    """
    alg = read_algorithm(alg)
    if alg.sampling is not None:
        return check_declared_sampling(alg, seed)
    event = alg.performed_event
    if event is None:
        return []
    c = alg.claim
    claim = _claim(alg, "accounting-as-performed",
                   f"the whole run, with the sampling it performs ({event!r:.120}), is "
                   f"({c.epsilon:.6g}, {c.delta:g})-DP under {c.relation}",
                   "accounting recomputation for the sampling performed")
    res = account_event(event, c.delta, c.relation, query="general")
    claimed = Claimed("epsilon", c.epsilon)
    what = f"the performed event, {c.relation}, delta {c.delta:g}"
    out = []
    # a shuffled pass's event (one Gaussian per epoch) is exact only when the order is
    # known; any other performed event is what is performed, and decides as it is
    readings = (((Reading("as performed, order known to the adversary",
                          ReadingKind.STRONGER_THREAT_MODEL), True),
                 ("as performed, hidden shuffle", False))
                if alg.performed_is_shuffle else (("as performed", None),))
    for reading, known in readings:
        lower, upper, refined = epsilon_bounds(res, claimed, what, lower=known is not False)
        rows = ", ".join(f"{r.name} {r.epsilon:.4g}" for r in refined.rows
                         if r.epsilon is not None)
        context = (f"The sampling performed, by every accountant: {rows or 'none supported'}."
                   + ("" if known is None else
                      " The event is exact for an adversary who knows the pass order, a "
                      "threat model stronger than the claim's: shown, never deciding." if known
                      else " For a hidden shuffle the event's epsilon is only an upper bound; "
                      "no certified lower bound is computed (the whole-run audit is the check "
                      "that can refute it)."))
        ev = {"claimed_epsilon": c.epsilon, "performed_event": repr(event),
              "accounting": refined.to_dict()}
        out.append(decide(claim, reading, claimed, lower=lower, upper=upper, context=context,
                          evidence=ev, seed=seed))
    return out


def _whole_run_claim(alg, kind: str, check: str) -> Claim:
    """The claim "the whole run is (epsilon, delta)-DP" that an audit of ``kind`` checks."""
    c = alg.claim
    return _claim(alg, kind,
                  f"the whole run is ({c.epsilon:.6g}, {c.delta:g})-DP under {c.relation}"
                  + (f" (dp_event {c.dp_event!r:.120})" if c.dp_event is not None else ""),
                  check)


def check_whole_run_audit(alg, n_runs: int, alpha: float, seed: int, workers: int = 1,
                          pilot_runs: int | None = None):
    """The whole-run audit's verdict (module docstring); (verdict, WholeRunAudit or None).

    ``pilot_runs``: runs per dataset of each candidate dataset's pilot audit
    (:func:`~dpclaims.audits.adversarial.audit_whole_run_searched`); None: the quiet
    dataset only, with the declared statistic (no search).
    """
    alg = read_algorithm(alg)
    c = alg.claim
    claim = _whole_run_claim(alg, "whole-run-audit",
                             "whole-run audit (Clopper-Pearson certificate)")
    try:
        canary = default_canary(alg)
        if alg.data is None:
            raise ValueError("the algorithm has no `data`")
    except ValueError as exc:
        return not_checkable(claim, "as-given", f"`data` and a canary for a whole-run audit "
                             f"({exc})", seed=seed), None
    if pilot_runs is None:
        w = audit_whole_run(alg, n_runs, canary=canary, alpha=alpha, seed=seed,
                            workers=workers)
    else:
        w = audit_whole_run_searched(alg, n_runs, pilot_runs, canary=canary, alpha=alpha,
                                     seed=seed, workers=workers)
    r = w.result
    # no wall-clock figure here: results.json is determined by the seed
    ev = {"alpha": alpha, **w.to_dict(), "claimed_epsilon": c.epsilon, "delta": c.delta}
    if alg.to_dict is not None:
        ev["algorithm"] = alg.to_dict()
    chosen = f" ({w.trace_statistic})" if w.trace_statistic else ""
    data = "" if w.search is None else f", dataset '{w.dataset}' chosen by pilot audits"
    source = (f"Clopper-Pearson whole-run audit, {w.canary} canary, {w.threat_model} "
              f"threat model, statistic {w.statistic}{chosen}{data}, {n_runs} runs per "
              f"dataset, delta {c.delta:g}")
    return audit_verdict(claim, "as-given", r, source=source, evidence=ev, seed=seed), w


def check_one_run_audit(alg, m: int, runs: int, alpha: float, seed: int):
    """The one-run audit's verdict (module docstring); (verdict, OneRunAudit or None)."""
    alg = read_algorithm(alg)
    c = alg.claim
    claim = _whole_run_claim(alg, "one-run-audit",
                             "one-run audit (Steinke, Nasr & Jagielski 2023 certificate)")
    if not offers_gradient_canaries(alg):
        return not_checkable(claim, "as-given", "an algorithm that takes Dirac gradient "
                             "canaries for a one-run audit (`run_gradient_canaries`, "
                             "`gradient_canary_coordinates` and `gradient_canary_slots` >= 1; "
                             "dpclaims.audits.capabilities.HasGradientCanaries)",
                             seed=seed), None
    if m > alg.gradient_canary_slots:
        return not_checkable(claim, "as-given", f"room for {m} gradient canaries: the "
                             f"algorithm has {alg.gradient_canary_slots} slots", seed=seed), None
    a = audit_one_run(alg, m, runs=runs, alpha=alpha, seed=seed)
    ev = {"alpha": alpha, "claimed_epsilon": c.epsilon, "delta": c.delta,
          "threat_model": alg.threat_model}
    if alg.to_dict is not None:
        ev["algorithm"] = alg.to_dict()
    source = (f"one-run audit, {m} Dirac gradient canaries"
              + (f" in each of {runs} runs" if runs > 1 else " in one run")
              + f", {alg.threat_model} threat model, score: {a.statistic}, delta {c.delta:g}")
    return one_run_verdict(claim, "as-given", a, source=source, evidence=ev, seed=seed), a


def check_algorithm(alg, budget, seed: int = 0, tick=lambda name: None, *,
                    accounting_check=None):
    """Run the checks of every claim ``alg`` makes; return (verdicts, sections, meta).

    Parameters
    ----------
    alg : Algorithm
    budget : VariantBudget
        ``n_trials`` runs per dataset, ``max_examples`` property-test examples, ``alpha``,
        ``workers``, and ``pilot_trials`` (``selection_trials``) runs per dataset for
        each candidate dataset's pilot audit (:mod:`dpclaims.audits.adversarial`).
        ``score`` is not used: the statistic follows the threat model and the canary
        (:data:`~dpclaims.audits.whole_run.STATISTICS`; a full trace's is chosen on the
        training split).
    seed : int
    tick : callable
        Progress callback (the check's name).
    accounting_check : callable, optional
        ``(alg, seed) -> Verdict or None``: the accounting recomputation (the caller's,
        :func:`dpclaims.claims.checks.variant.check_accounting_claim`); None skips it.

    Raises
    ------
    InputError
        The object is not an algorithm, or a run misbehaves (wrong shape, non-finite).
    """
    try:
        alg = validate_algorithm(alg)
        read_sampling(alg.sampling)          # bad input before any check runs
        read_library_accounting(alg.library_accounting)
        verdicts = []
        tick("property test of the update's sensitivity")
        v = check_step_sensitivity(alg, budget.max_examples, seed)
        if v is not None:
            verdicts.append(v)
        if accounting_check is not None:
            tick("accounting of the whole run")
            v = accounting_check(alg, seed)
            if v is not None:
                verdicts.append(replace(v, claim=replace(v.claim, location="user algorithm")))
        verdicts += check_performed_sampling(alg, seed)
        verdicts += check_library_accounting(alg, seed)
        w = one = None
        if budget.one_run is None:
            tick("whole-run audit")
            v, w = check_whole_run_audit(alg, budget.n_trials, budget.alpha, seed,
                                         budget.workers, pilot_runs=budget.pilot_trials)
        else:
            tick("one-run audit")
            v, one = check_one_run_audit(alg, budget.one_run, budget.one_run_runs,
                                         budget.alpha, seed)
        verdicts.append(v)
    except InvalidMechanismError as exc:
        raise InputError(str(exc)) from exc
    sections = []
    if w is not None:
        r = w.result
        sections.append({
            "title": "Whole-run audit",
            "text": (f"Claimed epsilon {alg.claim.epsilon:.6g} at delta {alg.claim.delta:g} "
                     f"under {alg.claim.relation} for the whole run. Threat model: "
                     f"{THREAT_MODEL_TEXT[w.threat_model]}. Canary: {r.pair['description']}. "
                     f"{dataset_summary(w)} "
                     f"Statistic: {STATISTICS[w.statistic]}"
                     + (f"; chosen: {w.trace_statistic}" if w.trace_statistic else "")
                     + ". Certificate (Clopper-Pearson, "
                     f"holds with the stated confidence): epsilon >= "
                     f"{r.epsilon_lower_bound:.4g}. The GDP and credible values are "
                     "estimates and never refute."),
            "table": None,
        })
    if one is not None:
        row = one.certificate.row(0, one.runs)
        fdp = row.get("f_dp")
        sections.append({
            "title": "One-run audit",
            "text": (f"Claimed epsilon {alg.claim.epsilon:.6g} at delta {alg.claim.delta:g} "
                     f"under {alg.claim.relation} for the whole run. {row['basis']}. "
                     f"Certificate: epsilon >= {one.epsilon_lower_bound:.4g} (one-sided "
                     f"{row['one_sided']['epsilon']:.4g}, two-sided "
                     f"{row['two_sided']['epsilon']:.4g}"
                     + (f", f-DP {fdp['epsilon']:.4g} as {fdp['role']}" if fdp else "")
                     + "). A one-run bound is far from tight at small epsilon "
                     "(docs/guide/one-run.md)."),
            "table": None,
        })
    not_made = []
    if alg.step is None:
        not_made.append("step sensitivity (no `step`)")
    if alg.claim.dp_event is None:
        not_made.append("accounting (the claim has no dp_event)")
    meta = {"algorithm": alg.name, "claim": alg.claim.to_dict(), "seed": seed,
            "budget": budget.to_dict(), "threat_model": alg.threat_model,
            "claims not made": not_made}
    return verdicts, sections, meta
