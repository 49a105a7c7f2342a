"""The claims layer: claims and verdicts as values, and the headline rule.

:class:`Claim` (one quoted statement of a paper, of one of the :data:`CLAIM_KINDS`),
:class:`Reading` (a reading's name with its declared :class:`ReadingKind`),
:class:`Verdict` (the outcome of its check under one reading), :class:`InputError`
(bad user input, CLI exit 2),
:class:`CheckTimer` (the checks' runner, from :mod:`dpclaims.execution`), and
:func:`headline` / :func:`claims_summary` (one bottom line per claim,
:data:`HEADLINE_RULE`), :func:`exit_code` and the ``EXIT_*`` codes; the verdict kernel
is :mod:`dpclaims.claims.kernel`.
"""

from dpclaims.claims.core import (
    CLAIM_KINDS,
    VERDICTS,
    Claim,
    InputError,
    Reading,
    ReadingKind,
    Verdict,
    ran_on,
)
from dpclaims.claims.headline import (
    EXIT_BAD_INPUT,
    EXIT_CLUSTER_LOST,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NOT_CHECKED,
    EXIT_OK,
    EXIT_REFUTED,
    EXIT_TERMINATED,
    HEADLINE_RULE,
    claims_summary,
    exit_code,
    headline,
)
from dpclaims.execution.checks import CheckTimer  # its home since issue 39

__all__ = ["CLAIM_KINDS", "VERDICTS", "CheckTimer", "Claim", "InputError", "Reading",
           "ReadingKind", "Verdict", "ran_on",
           "HEADLINE_RULE", "claims_summary", "headline", "exit_code", "EXIT_OK",
           "EXIT_REFUTED", "EXIT_BAD_INPUT", "EXIT_NOT_CHECKED", "EXIT_CLUSTER_LOST",
           "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_TERMINATED"]
