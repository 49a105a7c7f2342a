"""Checks of a user's own mechanism inside the user's own tests: one import for a test.

A facade: the checks live in :mod:`dpclaims.claims.checks.mechanism` (shared with
``dpclaims check-variant``), and no module of dpclaims imports this one.
:mod:`dpclaims.pytest_plugin` gives every test two fixtures, ``audit`` and
``check_sensitivity``, which call :func:`audit_mechanism` and
:func:`check_mechanism_sensitivity` with the session's :class:`VariantBudget`
(``VariantBudget.for_tests(...)``; ``CheckBudget`` is its deprecated former name) and a
seed derived from the test's node id (:func:`seed_from_node_id`). Both return a
value with a ``verdict``, decided by the verdict kernel (:mod:`dpclaims.claims.kernel`),
its ``sentence`` and a ``message``: ``refuted`` or ``inconclusive``, never ``holds`` (an
audit cannot prove privacy, and a search that finds no counterexample certifies no
bound). :func:`assert_not_refuted` fails a test with the message when the verdict is
``refuted``. Besides those, this module re-exports what a test of a mechanism needs:

- the hypothesis strategies of neighbouring datasets,
  :func:`~dpclaims.property_tests.strategies.neighbouring_datasets` (pairs
  ``(d0, d1)`` under a relation, optionally around a fixed dataset),
  :func:`~dpclaims.property_tests.strategies.domain_records` (single records of a
  record domain), :func:`~dpclaims.property_tests.strategies.records` and
  :func:`~dpclaims.property_tests.strategies.replace_one_pairs` (feature-label
  records and replace-one pairs of them);
- the record domains :class:`~dpclaims.analysis.domains.Box`,
  :class:`~dpclaims.analysis.domains.Ball`,
  :class:`~dpclaims.analysis.domains.FiniteSet`,
  :class:`~dpclaims.analysis.domains.Product`;
- the dataset helpers of :mod:`dpclaims.analysis.records` (``n_records``,
  ``add_record``, ``remove_record``, ``replace_record``);
- the mechanism protocol's values :class:`~dpclaims.audits.mechanism.PrivacyClaim`,
  :class:`~dpclaims.audits.mechanism.Sensitivity`,
  :class:`~dpclaims.audits.mechanism.NeighbouringPair` and its constructors
  ``replace_one``, ``add_one``, ``remove_one``.
"""

from __future__ import annotations

from dpclaims.analysis.domains import Ball, Box, FiniteSet, Product
from dpclaims.analysis.records import add_record, n_records, remove_record, replace_record
from dpclaims.audits.mechanism import (
    NeighbouringPair,
    PrivacyClaim,
    Sensitivity,
    add_one,
    remove_one,
    replace_one,
)
from dpclaims.claims.budgets import TEST_BUDGET, VariantBudget
from dpclaims.claims.checks.mechanism import (
    AuditOutcome,
    CheckBudget,
    SensitivityOutcome,
    assert_not_refuted,
    audit_mechanism,
    check_mechanism_sensitivity,
    seed_from_node_id,
)
from dpclaims.property_tests.strategies import (
    domain_records,
    neighbouring_datasets,
    records,
    replace_one_pairs,
)

__all__ = [
    "VariantBudget", "TEST_BUDGET", "CheckBudget", "AuditOutcome", "SensitivityOutcome",
    "audit_mechanism",
    "check_mechanism_sensitivity", "assert_not_refuted", "seed_from_node_id",
    "neighbouring_datasets", "domain_records", "records", "replace_one_pairs",
    "Box", "Ball", "FiniteSet", "Product", "n_records", "add_record", "remove_record",
    "replace_record",
    "PrivacyClaim", "Sensitivity", "NeighbouringPair", "replace_one", "add_one", "remove_one",
]
