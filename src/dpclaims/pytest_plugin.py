"""pytest plugin: audit your own mechanism in your own tests.

Installed with dpclaims (entry point ``pytest11``, name ``dpclaims``), so pytest
loads it in every session; this module imports only pytest and the standard
library, and the fixtures import :mod:`dpclaims.claims.checks.mechanism` (numpy,
hypothesis, the audit engine; re-exported for tests by :mod:`dpclaims.testing`) when a
test first asks for them. Disable it with ``-p no:dpclaims``.

Fixtures
--------
``audit``
    ``audit(mechanism, where=None, *, seed=None, score=None)``:
    :func:`dpclaims.testing.audit_mechanism` with the session's budget; returns an
    :class:`~dpclaims.testing.AuditOutcome` (``verdict`` "refuted" or
    "inconclusive", ``epsilon_lower_bound``, ``claimed_epsilon``, ``pair``,
    ``seed``, ``message``, the full ``result``). ``where``: a
    ``NeighbouringPair``, a list of them, a record domain, or None (the
    mechanism's own ``data`` / ``domain`` / ``neighbouring_pairs()``).
``check_sensitivity``
    ``check_sensitivity(mechanism, where=None, *, seed=None)``:
    :func:`dpclaims.testing.check_mechanism_sensitivity`; returns a
    :class:`~dpclaims.testing.SensitivityOutcome` (``verdict`` "refuted", with the
    shrunk counterexample, or "inconclusive": no counterexample in the searched pairs,
    and a search refutes a bound but cannot certify one). ``where``: a record domain, a
    hypothesis strategy of pairs, or None.
``dpclaims_budget``
    The session's :class:`~dpclaims.claims.budgets.VariantBudget`
    (``VariantBudget.for_tests(...)``).

Both verdicts come from the verdict kernel (:mod:`dpclaims.claims.kernel`), as in
``dpclaims check-variant``; an outcome's ``sentence`` is the kernel's. Pass an outcome
to :func:`dpclaims.testing.assert_not_refuted` to fail the test when it is refuted, with
the certified epsilon lower bound, the claimed epsilon, the pair and the seed (for a
sensitivity: the shrunk counterexample and the seed).

Seeds
-----
Unless ``seed=`` is given, the k-th check (k = 0, 1, ...) of a test gets
:func:`dpclaims.testing.seed_from_node_id` of the test's node id, the session's
base seed and k: every run of a test draws the same outputs, so a test passes or
fails the same way each time (a flaky privacy test would be noise), and different
tests draw independent ones. The seed is in every outcome and failure message.

Options
-------
Each is a command-line option and an ini key (``[tool.pytest.ini_options]`` in
pyproject.toml, or pytest.ini); the command line wins.

``--dpclaims-trials``, ``dpclaims_trials`` (default 20000)
    Outputs per dataset of each audit.
``--dpclaims-selection-trials``, ``dpclaims_selection_trials`` (default 2000)
    Pilot outputs per dataset and candidate pair when a pair is searched.
``--dpclaims-alpha``, ``dpclaims_alpha`` (default 0.05)
    Significance of the audit's certificate.
``--dpclaims-max-examples``, ``dpclaims_max_examples`` (default 100)
    Hypothesis examples of the sensitivity property test.
``--dpclaims-random-pairs``, ``dpclaims_random_pairs`` (default 8)
    Pairs drawn at random from a record domain for the pair search.
``--dpclaims-workers``, ``dpclaims_workers`` (default 1)
    Processes for an audit's trial blocks (results do not depend on it).
``--dpclaims-seed``, ``dpclaims_seed`` (default 0)
    The base seed.
"""

from __future__ import annotations

import pytest

# name, type, default, help: one command-line option and one ini key each.
OPTIONS = (
    ("trials", int, 20_000, "outputs per dataset of each audit"),
    ("selection_trials", int, 2_000, "pilot outputs per dataset and candidate pair when "
                                     "a pair is searched"),
    ("alpha", float, 0.05, "significance of the audit's certificate (a correct mechanism "
                           "is refuted with probability at most alpha)"),
    ("max_examples", int, 100, "hypothesis examples of the sensitivity property test"),
    ("random_pairs", int, 8, "neighbouring pairs drawn at random from a record domain"),
    ("workers", int, 1, "processes for an audit's trial blocks"),
    ("seed", int, 0, "base seed; each check's seed is derived from it and the test's node id"),
)


def pytest_addoption(parser):
    group = parser.getgroup("dpclaims", "dpclaims: privacy audits of mechanisms in tests")
    for name, kind, default, text in OPTIONS:
        group.addoption(f"--dpclaims-{name.replace('_', '-')}", dest=f"dpclaims_{name}",
                        type=kind, default=None, metavar=kind.__name__.upper(),
                        help=f"{text} (ini dpclaims_{name}; default {default})")
        parser.addini(f"dpclaims_{name}", f"dpclaims: {text} (default {default})",
                      default=str(default))


def _setting(config, name: str, kind):
    value = config.getoption(f"dpclaims_{name}")
    if value is not None:
        return value
    raw = config.getini(f"dpclaims_{name}")
    try:
        return kind(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"ini option dpclaims_{name} must be a {kind.__name__}, "
                                f"got {raw!r}") from None


def _settings(config) -> dict:
    return {name: _setting(config, name, kind) for name, kind, _, _ in OPTIONS}


@pytest.fixture(scope="session")
def dpclaims_budget(pytestconfig):
    """The session's :class:`dpclaims.claims.budgets.VariantBudget` (from the options above)."""
    from dpclaims.claims.budgets import VariantBudget

    s = _settings(pytestconfig)
    try:
        return VariantBudget.for_tests(
            n_trials=s["trials"], selection_trials=s["selection_trials"], alpha=s["alpha"],
            max_examples=s["max_examples"], n_random_pairs=s["random_pairs"],
            workers=s["workers"])
    except ValueError as exc:
        raise pytest.UsageError(f"dpclaims options: {exc}") from None


class _Seeds:
    """The seeds of one test's checks: k-th call -> seed_from_node_id(node id, base, k)."""

    def __init__(self, request):
        from dpclaims.claims.checks.mechanism import seed_from_node_id

        self._node_id = request.node.nodeid
        self._base = _setting(request.config, "seed", int)
        if self._base < 0:
            raise pytest.UsageError(f"--dpclaims-seed must be >= 0, got {self._base}")
        self._derive = seed_from_node_id
        self._calls = 0

    def next(self, seed):
        if seed is not None:
            return seed
        self._calls += 1
        return self._derive(self._node_id, self._base, self._calls - 1)


@pytest.fixture
def _dpclaims_seeds(request):
    return _Seeds(request)


@pytest.fixture
def audit(dpclaims_budget, _dpclaims_seeds):
    """``audit(mechanism, where=None, *, seed=None, score=None) -> AuditOutcome``.

    :func:`dpclaims.testing.audit_mechanism` with the session's budget and, unless
    given, a seed derived from the test's node id (module docstring).
    """
    from dpclaims.claims.checks.mechanism import audit_mechanism

    def run(mechanism, where=None, *, seed=None, score=None):
        return audit_mechanism(mechanism, where, budget=dpclaims_budget,
                               seed=_dpclaims_seeds.next(seed), score=score)

    return run


@pytest.fixture
def check_sensitivity(dpclaims_budget, _dpclaims_seeds):
    """``check_sensitivity(mechanism, where=None, *, seed=None) -> SensitivityOutcome``.

    :func:`dpclaims.testing.check_mechanism_sensitivity` with the session's
    ``max_examples`` and, unless given, a seed derived from the test's node id.
    """
    from dpclaims.claims.checks.mechanism import check_mechanism_sensitivity

    def run(mechanism, where=None, *, seed=None):
        return check_mechanism_sensitivity(mechanism, where, budget=dpclaims_budget,
                                           seed=_dpclaims_seeds.next(seed))

    return run
