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


def catalogue():
    """Every privacy number the three papers report, DP-SEP's first, in order."""
    from dpclaims.papers.dpsep.catalogue import privacy_numbers
    from dpclaims.papers.dpvim.privacy_numbers import ENTRIES as DPVIM
    from dpclaims.papers.vips.privacy_numbers import ENTRIES as VIPS

    return tuple(privacy_numbers()) + tuple(VIPS) + tuple(DPVIM)


def _entries(budget: AccountingBudget):
    if budget.entries_per_paper is None:
        return list(catalogue())
    taken: dict[str, list] = {}
    for e in catalogue():
        group = taken.setdefault(e.id.split("/")[0], [])
        if len(group) < budget.entries_per_paper:
            group.append(e)
    return [e for group in taken.values() for e in group]


def _claims():
    return tuple(e.claim() for e in catalogue())


def run_accounting_audit(ctx: RunContext) -> PaperResult:
    """The catalogue's entries that ``ctx.budget`` takes and ``ctx.wants`` (the paper's
    ``run``): :func:`catalogue_report` of them, and a not-checkable verdict for each entry
    the budget does not take."""
    from dpclaims.claims import ran_on
    from dpclaims.claims.checks.privacy_numbers import not_run_at_budget

    # a --claim selection recomputes only the entries it selects (the others are dropped)
    taken = [e for e in _entries(ctx.budget) if ctx.wants(e.id)]
    verdicts, sections, meta, timings = catalogue_report(ctx.seed, ctx.progress,
                                                         entries=taken)
    ids = {e.id for e in _entries(ctx.budget)}
    skipped = [e for e in catalogue() if e.id not in ids and ctx.wants(e.id)]
    per = ctx.budget.entries_per_paper
    verdicts += ran_on(not_run_at_budget(skipped, ctx.budget.name,
                                         f"the first {per} entr{'y' if per == 1 else 'ies'} "
                                         "of each paper"), "none: not run")
    return PaperResult(verdicts, sections, meta, timings)


def catalogue_report(seed: int = 0, tick=lambda name: None, entries=None):
    """The catalogue as a report: (verdicts, sections, meta, timings) like the paper audits.

    ``entries`` defaults to the whole :func:`catalogue` (about 3 minutes on 2 cores: the
    long DPVIm runs' PLD calibrations dominate).
    """
    import time

    from dpclaims.claims.checks.privacy_numbers import check_catalogue, end_text, fmt_rows

    entries = catalogue() if entries is None else entries

    t0 = time.perf_counter()
    from dpclaims.claims import ran_on

    verdicts = ran_on(check_catalogue(entries, seed=None, tick=tick),
                      "no records: the papers' reported privacy parameters")
    rows = []
    for v in verdicts:
        combos = v.evidence.get("combinations") or [{}]
        c = combos[0]
        real = c.get("real_sampling", {})
        basis = v.evidence.get("basis", {})
        lo, hi = basis.get("lower"), basis.get("upper")
        bracket = ("-" if basis.get("rule") != "bracket" else
                   f"[{end_text(lo)}, {end_text(hi)}]")
        rows.append([v.claim.id, v.reading, f"{v.evidence['entry']['reported_epsilon']:g}",
                     fmt_rows(c.get("paper_accounting", {})) or "-", fmt_rows(real) or "-", bracket,
                     v.verdict])
    sections = [{
        "title": "Reported epsilons recomputed",
        "text": ("Each paper's reported epsilon against every accountant under the paper's "
                 "assumed sampling and under the sampling the algorithm performs (first "
                 "parameter combination shown; all in results.json). Verdicts from the "
                 "certified bracket [lower, upper] of each reading against the reported "
                 "number read at its printed precision."),
        "table": {"columns": ["claim", "reading", "reported", "paper's accounting",
                              "real sampling", "certified bracket", "verdict"], "rows": rows},
    }]
    meta = {"seed": seed, "entries": len(verdicts),
            "note": "deterministic: no random procedure is involved"}
    return verdicts, sections, meta, {"accounting": round(time.perf_counter() - t0, 1)}


PAPER = Paper(
    id="accounting",
    title="The privacy numbers DP-SEP, VIPS and DPVIm report, recomputed",
    texts=("dpsep_full_v0.txt", "vips.txt", "dpvim.txt"),
    claims=_claims(),
    budgets=BUDGETS,
    run=run_accounting_audit,
    summary=("every reported (epsilon, delta) of the three papers against every "
             "accountant (deterministic; --budget smoke takes one entry per paper)"),
    data={},  # printed numbers only
    order=40,
    runs_beside_others=True,
)
