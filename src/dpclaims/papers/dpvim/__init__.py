"""DPVIm (Jälkö, Prediger, Honkela, Kaski) as a paper plugin.

The claims are those of :mod:`dpclaims.papers.dpvim.catalogue` and DPVIm's reported
epsilons (:mod:`dpclaims.papers.dpvim.privacy_numbers`); the checks run by
:func:`dpclaims.papers.dpvim.checks.run_dpvim_audit`. In a run beside the ``accounting``
paper the reported epsilons are left to it.
"""

from __future__ import annotations

from dpclaims.claims.paper import Paper, PaperResult, RunContext, claims_of
from dpclaims.papers.dpvim import catalogue
from dpclaims.papers.dpvim.captions import CAPTIONS
from dpclaims.papers.dpvim.privacy_numbers import ENTRIES


def _run(ctx: RunContext) -> PaperResult:
    from dpclaims.papers.dpvim.checks import run_dpvim_audit

    return run_dpvim_audit(ctx)


PAPER = Paper(
    id="dpvim",
    title=("Jälkö, Prediger, Honkela, Kaski, DPVIm: differentially private variational "
           "inference improved"),
    texts=("dpvim.txt",),
    claims=claims_of(catalogue.CLAIMS, catalogue.EXPERIMENT_CLAIMS, [catalogue.AUDIT_CLAIM],
                     [e.claim() for e in ENTRIES]),
    budgets=catalogue.BUDGETS,
    run=_run,
    summary="DPVIm: identities, Thm. 3.1, OU noise, coverage, Adult, audit",
    order=30,
    captions=CAPTIONS,
    data={"adult": "statsmodels fair"},
)
