"""VIPS (Park, Foulds, Chaudhuri, Welling) as a paper plugin.

The claims are those of :mod:`dpclaims.claims.catalogues.vips` and VIPS's reported
epsilons (:mod:`dpclaims.claims.catalogues.reported_privacy`); the checks run by
:func:`dpclaims.claims.checks.vips.run_vips_audit`. In a run beside the ``accounting``
paper the reported epsilons are left to it (each claim once in a report).
"""

from __future__ import annotations

from dpclaims.claims.catalogues import vips as catalogue
from dpclaims.claims.catalogues.reported_privacy import REPORTED
from dpclaims.claims.paper import Paper, PaperResult, RunContext, claims_of


def _run(ctx: RunContext) -> PaperResult:
    from dpclaims.claims.checks.vips import run_vips_audit

    return PaperResult(*run_vips_audit(
        ctx.budget, ctx.seed, ctx.progress, data_dir=ctx.data_dir, out_dir=ctx.out_dir,
        include_catalogue="accounting" not in ctx.companions))


PAPER = Paper(
    id="vips",
    title="Park, Foulds, Chaudhuri, Welling, Variational Bayes in private settings (VIPS)",
    texts=("vips.txt",),
    claims=claims_of(catalogue.CLAIMS, catalogue.LDA_CLAIMS, catalogue.ACCURACY_CLAIMS,
                     [e.claim() for e in REPORTED if e.id.startswith("vips/")]),
    budgets=catalogue.BUDGETS,
    run=_run,
    summary="VIPS: log moment, sensitivities, step audits, LDA / BLR / SBN experiments",
    order=20,
)
