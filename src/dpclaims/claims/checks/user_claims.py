"""``dpclaims check CLAIMS.toml``: a researcher's own paper, its claims as data.

The file is read and validated by :mod:`dpclaims.claims.claims_file` (which documents
every key, the printed-precision reading of a reported epsilon and the noise multiplier
convention); each claim becomes a :class:`~dpclaims.claims.Claim` with the id, location
and exact quote given, checked by the same code as the three papers' catalogues:
``[[privacy]]`` by :func:`~dpclaims.claims.checks.privacy_numbers.check_reported` (every
accountant side by side; a certified bracket decides), ``[[sensitivity]]`` by the
property test of :func:`~dpclaims.claims.checks.variant.check_sensitivity_claim`,
``[[audit]]`` by the audit of :func:`~dpclaims.claims.checks.variant.check_audit_claim`.
Exit codes as ``check-variant``.
"""

from __future__ import annotations

import dataclasses

from dpclaims.audits.mechanism import PrivacyClaim, Sensitivity
from dpclaims.audits.whole_run import is_algorithm
from dpclaims.claims import Claim, InputError, Verdict
from dpclaims.claims.checks.privacy_numbers import check_reported
from dpclaims.claims.checks.variant import (
    VariantBudget,
    bad_input,
    check_audit_claim,
    check_sensitivity_claim,
    load_variant,
)
from dpclaims.claims.checks.whole_run import check_whole_run_audit
from dpclaims.claims.claims_file import (  # noqa: F401  (re-exported)
    RELATIONS,
    SAMPLINGS,
    domain_from,
    load_claims_file,
    privacy_entry,
)


@dataclasses.dataclass(frozen=True)
class _QueryOnly:
    """What the sensitivity property test needs: a query, its claim, and a domain."""

    name: str
    query: object
    sensitivity: Sensitivity
    domain: object
    claim: PrivacyClaim


def check_claims_file(spec, budget: VariantBudget, seed: int = 0, tick=lambda name: None):
    """Check every claim of a claims file; return (verdicts, sections, meta).

    ``spec`` is a path or what :func:`~dpclaims.claims.claims_file.load_claims_file`
    returned. Raises InputError on bad input (module docstring).
    """
    if not isinstance(spec, dict):
        spec = load_claims_file(spec)
    path = spec["path"]
    paper = spec["paper"]
    verdicts: list[Verdict] = []
    rows = []
    for entry, _notes in spec["privacy"]:
        tick(entry.id)
        vs = check_reported(entry, seed=None)
        verdicts += vs
        for v in vs:
            c = (v.evidence.get("combinations") or [{}])[0]
            rows.append([entry.id, f"{entry.reported_epsilon:g}", v.reading,
                         ", ".join(f"{k} {x:.4g}" for k, x in
                                   c.get("paper_accounting", {}).items()) or "-",
                         ", ".join(f"{k} {x:.4g}" for k, x in
                                   c.get("real_sampling", {}).items()) or "-", v.verdict])
    for e, s, where in spec["sensitivity"]:
        tick(e["id"])
        claim = Claim(e["id"], paper, e["location"], e["statement"], "hypothesis property test",
                      kind="sensitivity")
        query = load_variant(s["query"], as_mechanism=False)
        if not callable(query):
            raise InputError(f"{where}: query {s['query']!r} is not callable")
        obj = _QueryOnly(e["id"], query, Sensitivity(s["value"], s["norm"]), s["domain"],
                         PrivacyClaim(1.0, 0.0, s["relation"]))
        with bad_input():
            v = check_sensitivity_claim(obj, budget, seed)
        verdicts.append(dataclasses.replace(v, claim=claim))
    for e, mechanism, _where in spec["audit"]:
        tick(e["id"])
        claim = Claim(e["id"], paper, e["location"], e["statement"],
                      "empirical audit (Clopper-Pearson certificate)", kind="audit")
        mech = load_variant(mechanism)  # validated as check-variant validates it
        with bad_input():
            if is_algorithm(mech):
                v, _ = check_whole_run_audit(mech, budget.n_trials, budget.alpha, seed,
                                             budget.workers, pilot_runs=budget.pilot_trials)
            else:
                v, _ = check_audit_claim(mech, budget, seed)
        verdicts.append(dataclasses.replace(v, claim=claim))
    sections = []
    if rows:
        sections.append({
            "title": "Privacy numbers recomputed",
            "text": ("Each reported epsilon against every accountant, under the sampling the "
                     "paper's accountant assumed and under the sampling the implementation "
                     "performs (a shuffled pass: one unamplified Gaussian per epoch). "
                     "Verdicts from the certified bracket of each reading against the "
                     "reported number read at its printed precision."),
            "table": {"columns": ["claim", "reported", "reading", "paper's accounting",
                                  "real sampling", "verdict"], "rows": rows}})
    meta = {"claims file": str(path), "paper": paper, "seed": seed,
            "budget": budget.to_dict()}
    return verdicts, sections, meta
