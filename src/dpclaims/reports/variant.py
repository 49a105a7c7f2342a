"""``dpclaims check-variant``: check a user's mechanism the way the papers' are checked.

A variant is any object following the :class:`~dpclaims.audits.mechanism.Mechanism`
protocol (or a zero-argument factory returning one). Besides the protocol's
``name``, ``claim`` and ``release``, the checks use these optional attributes:

``query(data)`` and ``sensitivity``
    The property test of the claimed sensitivity, and the canary search.
``data``
    The dataset the neighbouring pairs are built around (required for the audit).
``candidates``
    Records the canary search and the property test draw from (default: the
    records of ``data``).
``records``
    A hypothesis strategy of single records for the property test (default:
    ``sampled_from(candidates)``).
``neighbouring_pairs()``
    Pairs to audit on, in addition to the searched canary pair.

Three claims are checked, each with a computed verdict:

``<name>/sensitivity``  property test: is ``sensitivity.value`` a bound on
    ``||query(D) - query(D')||`` over neighbours under the claim's relation?
``<name>/accounting``  the claim's ``dp_event`` recomputed by every accountant
    (:func:`~dpclaims.analysis.accounting.account_event`): ``refuted`` when an
    exact accountant (a composition of plain Gaussians) gives a larger epsilon,
    ``holds`` when an upper-bound accountant (RDP or pessimistic PLD) gives at
    most the claimed epsilon, ``inconclusive`` otherwise.
``<name>/empirical-audit``  :func:`~dpclaims.audits.core.audit` on every pair,
    with the significance alpha split equally over the pairs (one budget).
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from dpclaims.analysis.accounting import account_event
from dpclaims.analysis.validation import check_count, check_probability
from dpclaims.audits.core import audit
from dpclaims.audits.mechanism import (
    InvalidMechanismError,
    NeighbouringPair,
    add_record,
    canary_pair,
    get_record,
    n_records,
    records_equal,
    remove_record,
    replace_record,
    validate_mechanism,
)
from dpclaims.property_tests.sensitivity import check_sensitivity
from dpclaims.reports.claims import Claim, InputError, Verdict

EXACT_ACCOUNTANTS = ("analytic-gaussian",)
UPPER_BOUND_ACCOUNTANTS = ("dp_accounting-pld", "dp_accounting-rdp", "autodp-rdp")


@dataclass(frozen=True)
class VariantBudget:
    """Effort of :func:`check_variant`: audit trials per dataset, property-test examples."""

    n_trials: int = 200_000
    max_examples: int = 300
    alpha: float = 0.05
    workers: int = 1

    def __post_init__(self):
        check_count(self.n_trials, "n_trials", minimum=2)
        check_count(self.max_examples, "max_examples")
        check_probability(self.alpha, "alpha")
        check_count(self.workers, "workers")


def load_variant(spec: str):
    """Load ``FILE.py:OBJECT``: the object, or the result of calling it if it is a factory.

    The file is imported as a module named after it (registered in ``sys.modules``
    so that worker processes can unpickle its classes).

    Raises
    ------
    InputError
        A malformed spec, a missing file, an import error in the file, a missing
        object, or an object that is not a mechanism (with the reason).
    """
    if ":" not in spec:
        raise InputError(f"expected FILE.py:OBJECT, got {spec!r}")
    file, _, obj_name = spec.rpartition(":")
    path = Path(file)
    if not path.is_file():
        raise InputError(f"variant file not found: {file}")
    if not obj_name.isidentifier():
        raise InputError(f"OBJECT must be a Python name, got {obj_name!r}")
    mod_name = f"dpclaims_variant_{path.stem}"
    loader = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(loader)
    sys.modules[mod_name] = module
    try:
        loader.loader.exec_module(module)
    except Exception as exc:  # the user's file: any error is bad input
        raise InputError(f"importing {file} failed: {type(exc).__name__}: {exc}") from exc
    if not hasattr(module, obj_name):
        names = sorted(n for n in vars(module) if not n.startswith("_"))
        raise InputError(f"{file} has no object {obj_name!r}; it defines {names}")
    obj = getattr(module, obj_name)
    if isinstance(obj, type) or (not hasattr(obj, "release") and callable(obj)):
        try:
            obj = obj()
        except Exception as exc:
            raise InputError(f"calling the factory {obj_name}() failed: "
                             f"{type(exc).__name__}: {exc}") from exc
    try:
        return validate_mechanism(obj)
    except InvalidMechanismError as exc:
        raise InputError(str(exc)) from exc


def _claim(mech, kind: str, statement: str, check: str) -> Claim:
    return Claim(f"{mech.name}/{kind}", f"variant {mech.name!r}", "user mechanism",
                 statement, check)


def _candidates(mech):
    cands = getattr(mech, "candidates", None)
    data = getattr(mech, "data", None)
    if cands is None and data is not None:
        cands = [get_record(data, i) for i in range(n_records(data))]
    return None if cands is None else list(cands)


def neighbouring_strategy(mech, data, candidates, relation: str):
    """Hypothesis strategy of (d0, d1) neighbours under ``relation``, built around ``data``.

    Replace-one: record i of ``data`` set to r0 in d0 and r1 in d1. Add-remove:
    d0 as before, d1 = d0 plus r1 or minus record j. Records r0, r1 come from
    ``mech.records`` (a strategy) if present, else from ``candidates``.
    """
    records = getattr(mech, "records", None) or st.sampled_from(candidates)
    n = n_records(data)
    base = st.tuples(st.integers(0, n - 1), records).map(
        lambda t: replace_record(data, t[0], t[1]))
    if relation == "replace-one":
        return st.tuples(st.integers(0, n - 1), records, records).map(
            lambda t: (replace_record(data, t[0], t[1]), replace_record(data, t[0], t[2])))
    add = st.tuples(base, records).map(lambda t: (t[0], add_record(t[0], t[1])))
    if n < 2:
        return add
    remove = st.tuples(base, st.integers(0, n - 1)).map(lambda t: (t[0], remove_record(t[0], t[1])))
    return st.one_of(add, remove)


def check_sensitivity_claim(mech, budget: VariantBudget, seed: int) -> Verdict:
    """The property test of ``mech.sensitivity`` (see module docstring)."""
    sens = getattr(mech, "sensitivity", None)
    query = getattr(mech, "query", None)
    claim = _claim(mech, "sensitivity",
                   f"||query(D) - query(D')||_{sens.norm if sens else 2} <= "
                   f"{sens.value if sens else '?'} for {mech.claim.relation} neighbours",
                   "hypothesis property test")
    data, cands = getattr(mech, "data", None), _candidates(mech)
    if sens is None or query is None or data is None or not cands:
        missing = [n for n, v in (("query", query), ("sensitivity", sens), ("data", data),
                                  ("candidate records", cands or None)) if v is None]
        return Verdict(claim, "as-given", "not-checkable",
                       f"The variant has no {', '.join(missing)}: nothing to property-test.",
                       seed=seed)
    strategy = neighbouring_strategy(mech, data, cands, mech.claim.relation)

    def q(d):
        return np.asarray(query(d), dtype=float)

    res = check_sensitivity(
        strategy, lambda p: sens.distance(q(p[0]), q(p[1])), sens.value,
        max_examples=budget.max_examples, seed=seed,
        magnitude=lambda p: float(np.linalg.norm(q(p[0])) + np.linalg.norm(q(p[1]))))
    ev = {"claimed": sens.value, "norm": str(sens.norm), "max_ratio": res.max_ratio,
          "n_examples": res.n_examples, "relation": mech.claim.relation}
    if res.violated:
        d0, d1 = res.counterexample
        ev["counterexample"] = {"d0": _as_lists(d0), "d1": _as_lists(d1),
                                "ratio": res.counterexample_ratio}
        return Verdict(claim, "as-given", "refuted",
                       f"Refuted: a {mech.claim.relation} pair moves the query by "
                       f"{res.counterexample_ratio:.4g} x the claimed sensitivity "
                       f"{sens.value:.4g} (shrunk counterexample in the evidence); the "
                       f"largest ratio seen in {res.n_examples} pairs was {res.max_ratio:.4g}.",
                       evidence=ev, seed=seed, certificate=True)
    return Verdict(claim, "as-given", "holds",
                   f"No counterexample in {res.n_examples} {mech.claim.relation} pairs; the "
                   f"largest distance was {res.max_ratio:.4g} x the claimed {sens.value:.4g}.",
                   evidence=ev, seed=seed)


def _as_lists(data):
    """A dataset as nested lists (tuples of arrays as a list of them), for the JSON."""
    if isinstance(data, tuple):
        return [np.asarray(c).tolist() for c in data]
    return np.asarray(data).tolist()


def check_accounting_claim(mech, seed: int) -> Verdict:
    """The claim's ``dp_event`` recomputed by every accountant (module docstring)."""
    c = mech.claim
    claim = _claim(mech, "accounting", f"the dp_event is ({c.epsilon:.6g}, {c.delta:g})-DP "
                   f"under {c.relation}", "accounting recomputation")
    if c.dp_event is None:
        return Verdict(claim, "as-given", "not-checkable",
                       "The claim has no dp_event: nothing to recompute.", seed=seed)
    res = account_event(c.dp_event, c.delta, c.relation)
    ev = {"claimed_epsilon": c.epsilon, "accounting": res.to_dict()}
    rows = {r.name: r.epsilon for r in res.rows if r.epsilon is not None}
    exact = {k: v for k, v in rows.items() if k in EXACT_ACCOUNTANTS}
    upper_names = UPPER_BOUND_ACCOUNTANTS
    if c.relation == "replace-one" and "PoissonSampled" in repr(c.dp_event):
        # dp_accounting's PLD models replace-one Poisson sampling with contributions in a
        # centred ball (radius Delta/2): not an upper bound for a general query.
        upper_names = tuple(n for n in upper_names if n != "dp_accounting-pld")
        ev["note"] = ("PLD not used as an upper bound: under replace-one with Poisson "
                      "sampling it assumes contributions centred in a ball of radius Delta/2")
    upper = {k: v for k, v in rows.items() if k in upper_names}
    tol = 1e-6
    table = ", ".join(f"{k} {v:.4g}" for k, v in rows.items())
    if exact:
        k = max(exact, key=exact.get)
        if exact[k] > c.epsilon * (1 + tol):
            return Verdict(claim, "as-given", "refuted",
                           f"Refuted: the event's exact epsilon ({k}) is {exact[k]:.4g} > "
                           f"claimed {c.epsilon:.4g} at delta = {c.delta:g} ({table}).",
                           evidence=ev, seed=seed, certificate=True)
        return Verdict(claim, "as-given", "holds",
                       f"Holds: the event's exact epsilon ({k}) is {exact[k]:.4g} <= claimed "
                       f"{c.epsilon:.4g} (relative tolerance {tol:g}; {table}).",
                       evidence=ev, seed=seed)
    if any(v <= c.epsilon * (1 + tol) for v in upper.values()):
        k = min(upper, key=upper.get)
        return Verdict(claim, "as-given", "holds",
                       f"Holds: {k} bounds epsilon by {upper[k]:.4g} <= claimed "
                       f"{c.epsilon:.4g} (relative tolerance {tol:g}; {table}).",
                       evidence=ev, seed=seed)
    return Verdict(claim, "as-given", "inconclusive",
                   f"Inconclusive: every supported accountant gives an upper bound above "
                   f"the claimed {c.epsilon:.4g} ({table or 'none supported'}), and none is "
                   "exact.", evidence=ev, seed=seed)


def audit_pairs(mech, seed: int) -> list[NeighbouringPair]:
    """The searched canary pair (if the variant has a query) and the variant's own pairs."""
    pairs = []
    data, cands = getattr(mech, "data", None), _candidates(mech)
    if data is not None and cands:
        if getattr(mech, "query", None) is not None:
            if mech.claim.relation == "replace-one" and len(cands) >= 2:
                pairs.append(canary_pair(mech, data, cands, index=0))
            elif mech.claim.relation == "add-remove":
                pairs.append(canary_pair(mech, data, cands, relation="add-remove"))
        elif mech.claim.relation == "add-remove":
            pairs.append(NeighbouringPair(data, add_record(data, cands[0]), "add-remove",
                                          "add the first candidate record"))
        elif len(cands) >= 2:
            first = get_record(data, 0)
            other = next((r for r in cands if not records_equal(r, first)), None)
            if other is not None:
                pairs.append(NeighbouringPair(data, replace_record(data, 0, other),
                                              "replace-one", "replace record 0 by a candidate"))
    own = getattr(mech, "neighbouring_pairs", None)
    if own is not None:
        for p in own():
            if not isinstance(p, NeighbouringPair):
                raise InputError(f"neighbouring_pairs() must yield NeighbouringPair objects, "
                                 f"got {type(p).__name__}")
            if p.relation != mech.claim.relation:
                raise InputError(f"neighbouring_pairs() gave a {p.relation} pair, but the claim "
                                 f"is under {mech.claim.relation}")
            pairs.append(p)
    return pairs


def check_audit_claim(mech, budget: VariantBudget, seed: int) -> tuple[Verdict, list]:
    """Audit every pair with alpha / (number of pairs) each (module docstring)."""
    c = mech.claim
    claim = _claim(mech, "empirical-audit", f"each release is ({c.epsilon:.6g}, {c.delta:g})-DP "
                   f"under {c.relation}", "empirical audit (Clopper-Pearson certificate)")
    pairs = audit_pairs(mech, seed)
    if not pairs:
        return Verdict(claim, "as-given", "not-checkable",
                       "The variant has no `data` (or fewer than two distinct candidate records) "
                       "and no `neighbouring_pairs()`: no pair to audit on.", seed=seed), []
    alpha_each = budget.alpha / len(pairs)
    results = [audit(mech, p, budget.n_trials, alpha=alpha_each, seed=seed + i,
                     workers=budget.workers) for i, p in enumerate(pairs)]
    best = max(results, key=lambda r: r.epsilon_lower_bound)
    ev = {"alpha_total": budget.alpha, "alpha_per_pair": alpha_each,
          "audits": [r.to_dict() for r in results]}
    where = f"pair '{best.pair['description']}'"
    est = (f"estimates: GDP {best.epsilon_gdp_estimate:.3g}, "
           if best.epsilon_gdp_estimate is not None else "estimates: ")
    est += f"credible bound {best.epsilon_credible_lower:.3g}, AUROC {best.auroc:.3f}"
    if best.refutes_claim:
        return Verdict(claim, "as-given", "refuted",
                       f"Refuted: certified epsilon >= {best.epsilon_lower_bound:.4g} > claimed "
                       f"{c.epsilon:.4g} on {where} ({budget.n_trials} trials per dataset, "
                       f"{1 - budget.alpha:.0%} confidence over {len(pairs)} pair(s); {est}).",
                       evidence=ev, seed=seed, certificate=True), results
    return Verdict(claim, "as-given", "inconclusive",
                   f"Not refuted: the largest certificate is epsilon >= "
                   f"{best.epsilon_lower_bound:.4g} against the claimed {c.epsilon:.4g} "
                   f"({where}; {budget.n_trials} trials per dataset; {est}). An audit can "
                   "refute privacy but not prove it.", evidence=ev, seed=seed,
                   certificate=True), results


def check_variant(mech, budget: VariantBudget, seed: int = 0, tick=lambda name: None):
    """Run the three checks on ``mech``; return (verdicts, sections, meta).

    Raises InputError when the variant misbehaves (a release of the wrong shape,
    non-finite values, pairs under the wrong relation).
    """
    try:
        mech = validate_mechanism(mech)
        tick("property test of the sensitivity")
        verdicts = [check_sensitivity_claim(mech, budget, seed)]
        tick("accounting")
        verdicts.append(check_accounting_claim(mech, seed))
        tick("empirical audit")
        v, results = check_audit_claim(mech, budget, seed)
        verdicts.append(v)
    except InvalidMechanismError as exc:
        raise InputError(str(exc)) from exc
    rows = [[r.pair["description"], f"{r.epsilon_lower_bound:.4g}",
             "-" if r.epsilon_gdp_estimate is None else f"{r.epsilon_gdp_estimate:.4g}",
             f"{r.epsilon_credible_lower:.4g}", f"{r.auroc:.3f}", r.threshold_strategy]
            for r in results]
    sections = [{
        "title": "Audits",
        "text": (f"Claimed epsilon {mech.claim.epsilon:.6g} at delta {mech.claim.delta:g} "
                 f"under {mech.claim.relation}. The certificate is a Clopper-Pearson bound "
                 "(holds with the stated confidence); the GDP and credible values are "
                 "estimates and never refute."),
        "table": {"columns": ["pair", "certificate", "GDP estimate", "credible bound",
                              "AUROC", "threshold strategy"], "rows": rows},
    }]
    meta = {"mechanism": mech.name, "claim": mech.claim.to_dict(), "seed": seed,
            "budget": {"n_trials": budget.n_trials, "max_examples": budget.max_examples,
                       "alpha": budget.alpha}}
    return verdicts, sections, meta
