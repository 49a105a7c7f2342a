"""Empirical privacy audits: mechanisms, neighbouring pairs, certified epsilon lower bounds.

Public API: :class:`PrivacyClaim`, :class:`Sensitivity`, the :class:`Mechanism`
protocol (and :class:`GaussianMechanism`, the ground truth), :class:`NeighbouringPair`
with :func:`replace_one`, :func:`add_one`, :func:`remove_one`, :func:`canary_pair`,
and :func:`audit` with its threshold strategies, returning :class:`AuditResult`.
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
    validate_mechanism,
)

__all__ = [
    "AuditResult", "BonferroniThresholds", "ExplicitThreshold", "SplitThreshold", "audit",
    "epsilon_lower_bound", "GaussianMechanism", "InvalidMechanismError", "Mechanism",
    "NeighbouringPair", "PrivacyClaim", "Sensitivity", "add_one", "canary_pair", "remove_one",
    "replace_one", "validate_mechanism",
]
