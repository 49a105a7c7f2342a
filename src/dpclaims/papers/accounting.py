"""Every privacy number DP-SEP, VIPS and DPVIm report, recomputed with every accountant
(:mod:`dpclaims.claims.checks.privacy_numbers`), as a paper plugin. No randomness is
involved: the budgets differ only in how many entries they take (smoke: the first of
each paper)."""

from __future__ import annotations

from dataclasses import dataclass

from dpclaims.claims.paper import Budget, Paper, PaperResult, RunContext


@dataclass(frozen=True)
class AccountingBudget(Budget):
    """``entries_per_paper``: how many of each paper's entries (None: all)."""

    entries_per_paper: int | None = None


BUDGETS = {"smoke": AccountingBudget("smoke", entries_per_paper=1),
           **{n: AccountingBudget(n) for n in ("quick", "standard", "full")}}


def _entries(budget: AccountingBudget):
    from dpclaims.claims.checks.privacy_numbers import catalogue

    if budget.entries_per_paper is None:
        return list(catalogue())
    taken: dict[str, list] = {}
    for e in catalogue():
        group = taken.setdefault(e.id.split("/")[0], [])
        if len(group) < budget.entries_per_paper:
            group.append(e)
    return [e for group in taken.values() for e in group]


def _claims():
    from dpclaims.claims.catalogues.dpsep import privacy_numbers
    from dpclaims.claims.catalogues.reported_privacy import REPORTED

    return tuple(e.claim() for e in privacy_numbers() + tuple(REPORTED))


def _run(ctx: RunContext) -> PaperResult:
    from dpclaims.claims.checks.privacy_numbers import run_accounting_audit

    return PaperResult(*run_accounting_audit(ctx.seed, ctx.progress,
                                             entries=_entries(ctx.budget)))


PAPER = Paper(
    id="accounting",
    title="The privacy numbers DP-SEP, VIPS and DPVIm report, recomputed",
    texts=("dpsep_full_v0.txt", "vips.txt", "dpvim.txt"),
    claims=_claims(),
    budgets=BUDGETS,
    run=_run,
    summary=("every reported (epsilon, delta) of the three papers against every "
             "accountant (deterministic; --budget smoke takes one entry per paper)"),
    order=40,
    runs_beside_others=True,
)
