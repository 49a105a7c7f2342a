"""DP-SEP (Vinaroz & Park; three versions of one paper) as a paper plugin.

The claims are those of :mod:`dpclaims.papers.dpsep.catalogue` and
:mod:`dpclaims.papers.dpsep.tables`; the checks run by
:func:`dpclaims.papers.dpsep.checks.run_dpsep_audit`.
"""

from __future__ import annotations

from dpclaims.claims.paper import Paper, PaperResult, RunContext, claims_of
from dpclaims.papers.dpsep import catalogue, tables
from dpclaims.papers.dpsep.captions import CAPTIONS


def _run(ctx: RunContext) -> PaperResult:
    from dpclaims.papers.dpsep.checks import run_dpsep_audit

    return run_dpsep_audit(ctx)


PAPER = Paper(
    id="dpsep",
    title=("Vinaroz & Park, Differentially private stochastic expectation propagation "
           "(DP-SEP)"),
    texts=("dpsep_full_v0.txt", "dpsep_v1.txt", "dpsep_v2.txt"),
    claims=claims_of(catalogue.CLAIMS, catalogue.CLAIMS_THM41_REMARKS,
                     [t.claim() for t in tables.PAPER_TABLES], [tables.TABLE4_CLAIM],
                     tables.STATEMENTS),
    budgets=catalogue.BUDGETS,
    run=_run,
    summary="DP-SEP: sensitivity, accounting, KL bound, audit, MoG and BNN experiments",
    order=10,
    captions=CAPTIONS,
    # the UCI sets of Sec. 6.2 (experiment_bnn.UCI_FOLDERS); without them, randhie
    data={f"uci/{f}": "statsmodels randhie"
          for f in ("wine-quality-red", "kin8nm", "power-plant", "naval-propulsion-plant",
                    "protein-tertiary-structure")},
)
