"""Empirical privacy audits: mechanisms, neighbouring pairs, certified epsilon lower bounds.

Public API: :class:`PrivacyClaim`, :class:`Sensitivity`, the :class:`Mechanism`
protocol (and :class:`GaussianMechanism`, the ground truth), :class:`NeighbouringPair`
with :func:`replace_one`, :func:`add_one`, :func:`remove_one`, :func:`canary_pair`,
the pair search (:func:`candidate_pairs`, :func:`select_pair`), the attack scores
(:mod:`dpclaims.audits.scores`), and :func:`audit` with its threshold strategies,
returning :class:`AuditResult`.
"""

from dpclaims.audits.core import (
    AuditResult,
    BonferroniThresholds,
    ExplicitThreshold,
    SplitThreshold,
    audit,
    epsilon_lower_bound,
)
from dpclaims.audits.mechanism import (
    GaussianMechanism,
    InvalidMechanismError,
    Mechanism,
    NeighbouringPair,
    PrivacyClaim,
    Sensitivity,
    add_one,
    canary_pair,
    remove_one,
    replace_one,
    sensitivity_note,
    sensitivity_of,
    validate_mechanism,
)
from dpclaims.audits.scores import (
    SCORE_NAMES,
    ClassifierScore,
    FisherScore,
    LikelihoodRatioScore,
    ScoreError,
    UserScore,
    choose_score,
)
from dpclaims.audits.search import PairSelection, candidate_pairs, select_pair

__all__ = [
    "AuditResult", "BonferroniThresholds", "ExplicitThreshold", "SplitThreshold", "audit",
    "epsilon_lower_bound", "GaussianMechanism", "InvalidMechanismError", "Mechanism",
    "NeighbouringPair", "PrivacyClaim", "Sensitivity", "add_one", "canary_pair", "remove_one",
    "replace_one", "sensitivity_note", "sensitivity_of", "validate_mechanism", "SCORE_NAMES",
    "ClassifierScore", "FisherScore", "LikelihoodRatioScore", "ScoreError", "UserScore",
    "choose_score", "PairSelection", "candidate_pairs", "select_pair",
]
