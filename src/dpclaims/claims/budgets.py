"""The effort of the check commands, validated without importing the checks.

:class:`VariantBudget` is what ``check-variant`` and ``check`` spend: audit trials,
hypothesis examples, the audit's significance; :meth:`VariantBudget.for_tests`
(:data:`TEST_BUDGET`) is the smaller one of the checks run inside a test (the pytest
plugin's ``--dpclaims-*`` options, :mod:`dpclaims.testing`). It lives apart from the checks so
that the command line can refuse a bad option within a fraction of a second, before
the audit engine and the accountants are imported.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from dpclaims.analysis.validation import check_count, check_fits_in_memory, check_probability

#: The least an audit keeps per trial: one float64 score for each of the two datasets
#: (the outputs themselves are drawn in blocks, dpclaims.audits.core). A trial count whose
#: scores alone exceed the machine's physical memory is refused before any work.
MIN_BYTES_PER_TRIAL = 2 * 8

#: The defaults of the checks run inside a test (:meth:`VariantBudget.for_tests`): an
#: audit of 20,000 trials with 2,000 pilot trials a candidate pair, 100 hypothesis
#: examples; the other fields keep :class:`VariantBudget`'s defaults.
TEST_DEFAULTS = {"n_trials": 20_000, "selection_trials": 2_000, "max_examples": 100}


@dataclass(frozen=True)
class VariantBudget:
    """Effort of :func:`dpclaims.claims.checks.variant.check_variant`, of ``dpclaims check``
    and (:meth:`for_tests`) of the checks run inside a test.

    Attributes
    ----------
    n_trials : int
        Outputs per dataset of the final audit.
    max_examples : int
        Hypothesis examples of the property test.
    alpha : float
        The audit's significance (one budget: the selection phase spends none).
    workers : int
        Processes for the audit's trial blocks.
    selection_trials : int or None
        Pilot outputs per dataset and candidate pair; None: max(2000, n_trials // 10).
    n_random_pairs : int
        Pairs drawn at random from a record domain for the search.
    score : str or None
        The attack score's name (None: auto), unless the variant names its own.
    one_run : int or None
        An algorithm's one-run audit with this many gradient canaries per run instead of
        the whole-run audit (``check-variant --one-run M``); None: the whole-run audit.
    one_run_runs : int
        Runs of the one-run audit, their canaries pooled (``--one-run-runs``).
    """

    n_trials: int = 200_000
    max_examples: int = 300
    alpha: float = 0.05
    workers: int = 1
    selection_trials: int | None = None
    n_random_pairs: int = 8
    score: str | None = None
    one_run: int | None = None
    one_run_runs: int = 1

    def __post_init__(self):
        check_count(self.n_trials, "n_trials", minimum=2)
        check_fits_in_memory(self.n_trials, MIN_BYTES_PER_TRIAL, "n_trials (--n-trials)",
                             "2 datasets x one 8-byte score a trial")
        check_count(self.max_examples, "max_examples")
        check_probability(self.alpha, "alpha")
        check_count(self.workers, "workers")
        if self.selection_trials is not None:
            check_count(self.selection_trials, "selection_trials", minimum=2)
            check_fits_in_memory(self.selection_trials, MIN_BYTES_PER_TRIAL,
                                 "selection_trials (--selection-trials)",
                                 "2 datasets x one 8-byte score a trial")
        check_count(self.n_random_pairs, "n_random_pairs", minimum=0)
        if self.one_run is not None:
            check_count(self.one_run, "one_run (--one-run)", minimum=2)
        check_count(self.one_run_runs, "one_run_runs (--one-run-runs)")
        if self.score is not None:
            from dpclaims.audits.scores import SCORE_NAMES  # light: numpy only

            if self.score not in SCORE_NAMES:
                raise ValueError(f"unknown score {self.score!r}; known scores: "
                                 f"{', '.join(SCORE_NAMES)}")

    @classmethod
    def for_tests(cls, **overrides) -> VariantBudget:
        """The budget of the checks run inside a test: :data:`TEST_DEFAULTS`, then ``overrides``.

        The pytest plugin's defaults (``--dpclaims-trials`` 20,000,
        ``--dpclaims-selection-trials`` 2,000, ``--dpclaims-max-examples`` 100); the
        budget that :func:`dpclaims.testing.audit_mechanism` and
        :func:`~dpclaims.testing.check_mechanism_sensitivity` use when given none.
        """
        return cls(**{**TEST_DEFAULTS, **overrides})

    @property
    def pilot_trials(self) -> int:
        return self.selection_trials or max(2_000, self.n_trials // 10)

    def to_dict(self) -> dict:
        out = {"n_trials": self.n_trials, "max_examples": self.max_examples,
               "alpha": self.alpha, "selection_trials": self.pilot_trials,
               "n_random_pairs": self.n_random_pairs, "score": self.score or "auto"}
        if self.one_run is not None:   # only then: other reports stay byte-identical
            out.update(one_run=self.one_run, one_run_runs=self.one_run_runs)
        return out


#: The budget of the checks run inside a test (``VariantBudget.for_tests()``).
TEST_BUDGET = VariantBudget.for_tests()


def CheckBudget(n_trials: int = 20_000, selection_trials: int = 2_000, alpha: float = 0.05,  # noqa: N802
                max_examples: int = 100, n_random_pairs: int = 8,
                workers: int = 1) -> VariantBudget:
    """Deprecated: ``VariantBudget.for_tests(...)``, the same fields and defaults.

    The former budget type of the checks run inside a test, kept so that old imports
    (``dpclaims.testing.CheckBudget``, ``dpclaims.claims.checks.mechanism.CheckBudget``)
    and calls (positional arguments in its old order included) keep working.

    Warns
    -----
    DeprecationWarning
        Always.

    Returns
    -------
    VariantBudget
        ``VariantBudget.for_tests()`` with the given fields.
    """
    warnings.warn("CheckBudget is deprecated; use dpclaims.claims.budgets.VariantBudget."
                  "for_tests(...) (the same fields and defaults)", DeprecationWarning,
                  stacklevel=2)
    return VariantBudget.for_tests(n_trials=n_trials, selection_trials=selection_trials,
                                   alpha=alpha, max_examples=max_examples,
                                   n_random_pairs=n_random_pairs, workers=workers)
