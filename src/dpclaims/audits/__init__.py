"""Empirical privacy audits: mechanisms, neighbouring pairs, certified epsilon lower bounds.

Public API: :class:`PrivacyClaim`, :class:`Sensitivity`, the :class:`Mechanism`
protocol (and :class:`GaussianMechanism`, the ground truth), :class:`NeighbouringPair`
with :func:`replace_one`, :func:`add_one`, :func:`remove_one`, :func:`canary_pair`,
the pair search (:func:`candidate_pairs`, :func:`select_pair`), the attack scores
(:mod:`dpclaims.audits.scores`), and :func:`audit` with its threshold strategies,
returning :class:`AuditResult`.

The names are loaded on first use (PEP 562), so that importing one light submodule
(``dpclaims.audits.scores``) does not import the audit engine and dp_accounting.
"""

from importlib import import_module

_WHERE = {
    "core": ("AuditResult", "BonferroniThresholds", "ExplicitThreshold", "RankThreshold",
             "SplitThreshold", "audit", "epsilon_lower_bound"),
    "mechanism": ("GaussianMechanism", "InvalidMechanismError", "Mechanism", "NeighbouringPair",
                  "PrivacyClaim", "Sensitivity", "add_one", "canary_pair", "remove_one",
                  "replace_one", "sensitivity_note", "sensitivity_of", "validate_mechanism"),
    "scores": ("SCORE_NAMES", "ClassifierScore", "FisherScore", "LikelihoodRatioScore",
               "ScoreError", "UserScore", "choose_score"),
    "search": ("PairSelection", "candidate_pairs", "select_pair"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [name for names in _WHERE.values() for name in names]


def __getattr__(name):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'dpclaims.audits' has no attribute {name!r}")
    value = getattr(import_module(f"dpclaims.audits.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
