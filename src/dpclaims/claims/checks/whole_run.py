"""Checks of an algorithm's claims: the update's sensitivity, the accounting, the whole run.

``dpclaims check-variant FILE.py:OBJECT`` on an object following the algorithm protocol
(:mod:`dpclaims.audits.whole_run`) gives one verdict per claim it makes:

``<name>/step-sensitivity``  (when it has ``step``) hypothesis property test: from random
    states (``random_states``), does one noisy update on neighbouring batches move the
    release by at most ``step_sensitivity``? Both batches get the same ``rng`` seed, so
    the noise and the sampling coincide and the distance is that of the noiseless
    updates.
``<name>/accounting``  (when its claim has a dp_event) the whole-run event recomputed by
    every accountant (the same check as for a mechanism).
``<name>/accounting-as-performed``  (when it has ``performed_event``) the claim accounted
    for the sampling really performed (:func:`check_performed_sampling`).
``<name>/whole-run-audit``  (always) :func:`~dpclaims.audits.whole_run.audit_whole_run`
    with the gradient canary (or the input-space canary), under the algorithm's threat
    model: ``refuted`` when the Clopper-Pearson certificate exceeds the claimed epsilon
    at the claimed delta; ``inconclusive`` otherwise (an audit cannot prove privacy).

A correct algorithm is refuted by the audit with probability at most alpha (the
certificate's confidence is 1 - alpha).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from dpclaims.analysis.accounting import account_event
from dpclaims.analysis.records import dataset_as_lists, get_record, n_records
from dpclaims.audits.mechanism import InvalidMechanismError, Sensitivity
from dpclaims.audits.whole_run import (
    STATISTICS,
    THREAT_MODEL_TEXT,
    audit_whole_run,
    default_canary,
    validate_algorithm,
)
from dpclaims.claims.core import Claim, InputError, Verdict
from dpclaims.property_tests.sensitivity import check_sensitivity
from dpclaims.property_tests.strategies import neighbouring_datasets

#: Random states per property-test example (the distance is the largest over them).
STATES_PER_EXAMPLE = 8


def _claim(alg, kind: str, statement: str, check: str) -> Claim:
    kinds = {"step-sensitivity": "sensitivity", "accounting-as-performed": "privacy-number",
             "whole-run-audit": "audit"}
    return Claim(f"{alg.name}/{kind}", f"variant {alg.name!r}", "user algorithm",
                 statement, check, kind=kinds.get(kind))


def _records(data) -> list:
    return [get_record(data, i) for i in range(n_records(data))]


def _batch(alg):
    """The base batch of the property test: the first ``batch_size`` records of ``data``
    (one record for a DP-SEP-like step, ``step_batch_size`` if the algorithm states it)."""
    data = alg.data
    b = getattr(alg, "step_batch_size", None) or getattr(alg, "batch_size", None)
    if b is None:
        b = 1 if getattr(alg, "relation", "") == "replace-one" else min(n_records(data), 4)
    recs = [get_record(data, i) for i in range(int(b))]
    if isinstance(recs[0], tuple):
        return tuple(np.stack([r[j] for r in recs]) for j in range(len(recs[0])))
    return np.stack(recs)


def check_step_sensitivity(alg, max_examples: int, seed: int) -> Verdict | None:
    """The property test of the update's claimed sensitivity (module docstring); None when
    the algorithm has no ``step``."""
    if getattr(alg, "step", None) is None:
        return None
    sens = alg.step_sensitivity
    if not isinstance(sens, Sensitivity):
        sens = Sensitivity(float(sens), 2)      # a plain number: the L2 sensitivity
    relation = alg.claim.relation
    claim = _claim(alg, "step-sensitivity",
                   f"one update from any state moves its release by at most {sens.value:.6g} "
                   f"(L{sens.norm}) between {relation} neighbouring batches",
                   "hypothesis property test from random states")
    data = getattr(alg, "data", None)
    if data is None:
        return Verdict(claim, "as-given", "not-checkable",
                       "Not checked: the algorithm has `step` but no `data` to draw batches "
                       "from.", seed=seed)
    records = _records(data) + list(getattr(alg, "candidates", None) or [])
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
        return Verdict(claim, "as-given", "refuted",
                       f"Refuted: from a random state, a {relation} pair of batches moves the "
                       f"update by {res.counterexample_ratio:.4g} x the claimed "
                       f"{sens.value:.4g} (shrunk counterexample in the evidence).",
                       evidence=ev, seed=seed, certificate=True)
    return Verdict(claim, "as-given", "holds",
                   f"No counterexample in {res.n_examples} {relation} pairs of batches, "
                   f"{STATES_PER_EXAMPLE} random states each; the largest distance was "
                   f"{res.max_ratio:.4g} x the claimed {sens.value:.4g}.",
                   evidence=ev, seed=seed)


def check_performed_sampling(alg, seed: int) -> list[Verdict]:
    """The claim accounted for the sampling the algorithm really performs
    (``performed_event``, e.g. a shuffled pass: one unamplified Gaussian per epoch).

    The event's epsilon is exact when the pass order is known to the adversary and an
    upper bound for a hidden shuffle (:class:`~dpclaims.analysis.accounting.Sampling`).
    At most the claimed epsilon: ``holds`` (for a hidden shuffle too). Above it:
    ``refuted`` under the reading "order known to the adversary" (a threat model
    stronger than the claim's: shown, never deciding) and ``inconclusive`` for a hidden
    shuffle (no certified lower bound is computed for it). [] without ``performed_event``.
    """
    event = getattr(alg, "performed_event", None)
    if event is None:
        return []
    c = alg.claim
    claim = _claim(alg, "accounting-as-performed",
                   f"the whole run, with the sampling it performs ({event!r:.120}), is "
                   f"({c.epsilon:.6g}, {c.delta:g})-DP under {c.relation}",
                   "accounting recomputation for the sampling performed")
    res = account_event(event, c.delta, c.relation)
    rows = {r.name: r.epsilon for r in res.rows if r.epsilon is not None}
    exact = rows.get("analytic-gaussian")
    ev = {"claimed_epsilon": c.epsilon, "performed_event": repr(event),
          "accounting": res.to_dict()}
    if exact is None:
        return [Verdict(claim, "as performed", "inconclusive",
                        "Inconclusive: no exact accountant for the performed sampling "
                        f"({', '.join(f'{k} {v:.4g}' for k, v in rows.items())}).",
                        evidence=ev, seed=seed)]
    if exact <= c.epsilon * (1 + 1e-6):
        return [Verdict(claim, "as performed", "holds",
                        f"Holds: the sampling performed gives epsilon {exact:.4g} <= claimed "
                        f"{c.epsilon:.4g} even with the pass order known to the adversary "
                        "(exact there; an upper bound for a hidden shuffle).",
                        evidence=ev, seed=seed)]
    return [Verdict(claim, "as performed, order known to the adversary", "refuted",
                    f"Refuted with the pass order known to the adversary: the sampling "
                    f"performed gives exactly epsilon {exact:.4g} > claimed {c.epsilon:.4g} "
                    "(a threat model stronger than the claim's: shown, not deciding).",
                    evidence=ev, seed=seed, certificate=True),
            Verdict(claim, "as performed, hidden shuffle", "inconclusive",
                    f"Inconclusive for a hidden shuffle: {exact:.4g} is only an upper bound "
                    f"there, above the claimed {c.epsilon:.4g}; no certified lower bound "
                    "for a hidden shuffle is computed (the whole-run audit is the check).",
                    evidence=ev, seed=seed)]



def check_whole_run_audit(alg, n_runs: int, alpha: float, seed: int, workers: int = 1):
    """The whole-run audit's verdict (module docstring); (verdict, WholeRunAudit or None)."""
    c = alg.claim
    claim = _claim(alg, "whole-run-audit",
                   f"the whole run is ({c.epsilon:.6g}, {c.delta:g})-DP under {c.relation}"
                   + (f" (dp_event {c.dp_event!r:.120})" if c.dp_event is not None else ""),
                   "whole-run audit (Clopper-Pearson certificate)")
    try:
        canary = default_canary(alg)
        if getattr(alg, "data", None) is None:
            raise ValueError("the algorithm has no `data`")
    except ValueError as exc:
        return Verdict(claim, "as-given", "not-checkable",
                       f"Not checked: {exc}; a whole-run audit needs `data` and a canary.",
                       seed=seed), None
    w = audit_whole_run(alg, n_runs, canary=canary, alpha=alpha, seed=seed, workers=workers)
    r = w.result
    ev = {"alpha": alpha, **w.to_dict(), "claimed_epsilon": c.epsilon, "delta": c.delta,
          "runs_per_second": 2 * n_runs / max(w.seconds, 1e-9)}
    if hasattr(alg, "to_dict"):
        ev["algorithm"] = alg.to_dict()
    est = ("" if r.epsilon_gdp_estimate is None else f"GDP estimate {r.epsilon_gdp_estimate:.3g}, ")
    how = (f"{w.canary} canary, {w.threat_model} threat model, statistic {w.statistic}; "
           f"{n_runs} runs per dataset, {1 - alpha:.0%} confidence; {est}AUROC {r.auroc:.3f}")
    if r.refutes_claim:
        return Verdict(claim, "as-given", "refuted",
                       f"Refuted: certified epsilon >= {r.epsilon_lower_bound:.4g} > claimed "
                       f"{c.epsilon:.4g} at delta {c.delta:g} ({how}).",
                       evidence=ev, seed=seed, certificate=True), w
    return Verdict(claim, "as-given", "inconclusive",
                   f"Not refuted: the certificate is epsilon >= {r.epsilon_lower_bound:.4g} "
                   f"against the claimed {c.epsilon:.4g} ({how}). An audit can refute privacy "
                   "but not prove it.", evidence=ev, seed=seed, certificate=True), w


def check_algorithm(alg, budget, seed: int = 0, tick=lambda name: None, *,
                    accounting_check=None):
    """Run the checks of every claim ``alg`` makes; return (verdicts, sections, meta).

    Parameters
    ----------
    alg : Algorithm
    budget : VariantBudget
        ``n_trials`` runs per dataset, ``max_examples`` property-test examples, ``alpha``,
        ``workers``. ``score`` and ``selection_trials`` are not used: the statistic
        follows the threat model and the canary (:data:`~dpclaims.audits.whole_run.
        STATISTICS`), and the pair is the canary's (no pair search).
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
        verdicts = []
        tick("property test of the update's sensitivity")
        v = check_step_sensitivity(alg, budget.max_examples, seed)
        if v is not None:
            verdicts.append(v)
        if accounting_check is not None:
            tick("accounting of the whole run")
            v = accounting_check(alg, seed)
            if v is not None:
                v.claim = replace(v.claim, location="user algorithm")
                verdicts.append(v)
        verdicts += check_performed_sampling(alg, seed)
        tick("whole-run audit")
        v, w = check_whole_run_audit(alg, budget.n_trials, budget.alpha, seed, budget.workers)
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
                     f"Statistic: {STATISTICS[w.statistic]}. Certificate (Clopper-Pearson, "
                     f"holds with the stated confidence): epsilon >= "
                     f"{r.epsilon_lower_bound:.4g}. The GDP and credible values are "
                     "estimates and never refute."),
            "table": None,
        })
    not_made = []
    if getattr(alg, "step", None) is None:
        not_made.append("step sensitivity (no `step`)")
    if alg.claim.dp_event is None:
        not_made.append("accounting (the claim has no dp_event)")
    meta = {"algorithm": alg.name, "claim": alg.claim.to_dict(), "seed": seed,
            "budget": budget.to_dict(), "threat_model": alg.threat_model,
            "claims not made": not_made}
    return verdicts, sections, meta
