"""Everything a paper plugin needs from dpclaims, in one module (docs/architecture.md,
"Adding a paper"): ``from dpclaims.plugin import Claim, Paper, decide, ...``.

The paper interface
    :class:`Paper`, :class:`RunContext` (with ``ctx.timer``, the check runner),
    :class:`PaperResult`, :class:`Budget`, :class:`Section`, :data:`BUDGET_NAMES`,
    :func:`claims_of`, :class:`InputError`.
Claims, readings and verdicts
    :class:`Claim`, :class:`ClaimKind`, :class:`Reading`, :class:`ReadingKind`,
    :class:`Verdict` (a frozen value; the runner stamps the run's seed and budget),
    :func:`ran_on` (names the data verdicts ran on).
The verdict kernel (the only place a verdict is made)
    :class:`Bound`, :class:`Basis`, :class:`Claimed`, :class:`Direction`, :class:`Part`,
    :class:`Estimate`, :func:`decide`, :func:`decide_all`, :func:`decide_by_tests`,
    :func:`not_checkable`, :func:`undecided`.
Adapters from the framework's tools to the kernel
    :func:`epsilon_bounds` (an accounting), :func:`audit_verdict` (an audit's
    certificate), :func:`search_verdict` (a sensitivity search), :func:`mean_bounds` (a
    Monte Carlo mean).
The tools
    Audits: :func:`audit`, :class:`PrivacyClaim`, :func:`add_one`, :func:`replace_one`,
    :func:`remove_one`, :class:`NeighbouringPair`. Accounting: :func:`account_event`,
    :class:`Relation`. Intervals: :func:`clopper_pearson`. Sensitivity search:
    :func:`check_sensitivity`. Seeds: :func:`rng_for`, :func:`seed_sequence`. Record
    domains: :class:`Box`, :class:`Ball`, :class:`FiniteSet`, :class:`Product`.

A name is imported from its home module on first use (PEP 562), so importing this module
is cheap and a plugin that uses no audit does not load the audit engine. The homes
(``dpclaims.claims``, ``dpclaims.claims.kernel``, ...) stay importable: a plugin written
against them keeps working.
"""

from __future__ import annotations

from importlib import import_module

_WHERE = {
    "dpclaims.claims.paper": ("BUDGET_NAMES", "Budget", "Paper", "PaperResult", "RunContext",
                              "Section", "claims_of"),
    "dpclaims.claims.core": ("Claim", "ClaimKind", "InputError", "Reading", "ReadingKind",
                             "Verdict", "ran_on"),
    "dpclaims.claims.kernel": ("Basis", "Bound", "Claimed", "Direction", "Estimate", "Part",
                               "decide", "decide_all", "decide_by_tests", "not_checkable",
                               "undecided"),
    "dpclaims.claims.checks.bounds": ("audit_verdict", "epsilon_bounds", "mean_bounds",
                                      "search_verdict"),
    "dpclaims.audits": ("NeighbouringPair", "PrivacyClaim", "add_one", "audit", "remove_one",
                        "replace_one"),
    "dpclaims.analysis.accounting": ("account_event",),
    "dpclaims.analysis.vocabulary": ("Relation",),
    "dpclaims.analysis.intervals": ("clopper_pearson",),
    "dpclaims.analysis.seeds": ("rng_for", "seed_sequence"),
    "dpclaims.analysis.domains": ("Ball", "Box", "FiniteSet", "Product"),
    "dpclaims.property_tests.sensitivity": ("check_sensitivity",),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'dpclaims.plugin' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
