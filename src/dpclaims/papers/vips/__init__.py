"""VIPS (Park, Foulds, Chaudhuri, Welling) as a paper plugin.

The claims are those of :mod:`dpclaims.papers.vips.catalogue` and VIPS's reported
epsilons (:mod:`dpclaims.papers.vips.privacy_numbers`); the checks run by
:func:`dpclaims.papers.vips.checks.run_vips_audit`. In a run beside the ``accounting``
paper the reported epsilons are left to it (each claim once in a report).
"""

from __future__ import annotations

from dpclaims.claims.paper import Paper, PaperResult, RunContext, claims_of
from dpclaims.papers.vips import catalogue
from dpclaims.papers.vips.captions import CAPTIONS
from dpclaims.papers.vips.privacy_numbers import ENTRIES


def _run(ctx: RunContext) -> PaperResult:
    from dpclaims.papers.vips.checks import run_vips_audit

    return run_vips_audit(ctx)


PAPER = Paper(
    id="vips",
    title="Park, Foulds, Chaudhuri, Welling, Variational Bayes in private settings (VIPS)",
    texts=("vips.txt",),
    claims=claims_of(catalogue.CLAIMS, catalogue.LDA_CLAIMS, catalogue.ACCURACY_CLAIMS,
                     [e.claim() for e in ENTRIES]),
    budgets=catalogue.BUDGETS,
    run=_run,
    summary="VIPS: log moment, sensitivities, step audits, LDA / BLR / SBN experiments",
    order=20,
    captions=CAPTIONS,
    data={"adult": "statsmodels fair (BLR, SBN)",
          "wikipedia": "seeded synthetic corpus (LDA)"},
)
