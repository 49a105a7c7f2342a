"""DPVIm (Jälkö, Prediger, Honkela, Kaski) as a paper plugin.

The claims are those of :mod:`dpclaims.claims.catalogues.dpvim` and DPVIm's reported
epsilons (:mod:`dpclaims.claims.catalogues.reported_privacy`); the checks run by
:func:`dpclaims.claims.checks.dpvim.run_dpvim_audit`. In a run beside the ``accounting``
paper the reported epsilons are left to it.
"""

from __future__ import annotations

from dpclaims.claims.catalogues import dpvim as catalogue
from dpclaims.claims.catalogues.reported_privacy import REPORTED
from dpclaims.claims.paper import Paper, PaperResult, RunContext, claims_of


def _run(ctx: RunContext) -> PaperResult:
    from dpclaims.claims.checks.dpvim import run_dpvim_audit

    return PaperResult(*run_dpvim_audit(
        ctx.budget, ctx.seed, ctx.progress, data_dir=ctx.data_dir, out_dir=ctx.out_dir,
        include_catalogue="accounting" not in ctx.companions))


PAPER = Paper(
    id="dpvim",
    title=("Jälkö, Prediger, Honkela, Kaski, DPVIm: differentially private variational "
           "inference improved"),
    texts=("dpvim.txt",),
    claims=claims_of(catalogue.CLAIMS, catalogue.EXPERIMENT_CLAIMS, [catalogue.AUDIT_CLAIM],
                     [e.claim() for e in REPORTED if e.id.startswith("dpvim/")]),
    budgets=catalogue.BUDGETS,
    run=_run,
    summary="DPVIm: identities, Thm. 3.1, OU noise, coverage, Adult, audit",
    order=30,
)
