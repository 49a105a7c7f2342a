"""Bernstein & Sheldon (NeurIPS 2018) as a dpclaims paper plugin.

Installed (``pip install ./examples/bs18_expfam``), it registers itself through the entry
point group ``dpclaims.papers`` (its ``pyproject.toml``), and ``dpclaims audit --paper
bs18`` checks it; nothing in dpclaims names it. Uninstalled, the same paper runs as
``dpclaims audit --paper examples/bs18_expfam/src/bs18_expfam/__init__.py:PAPER``.
"""

from __future__ import annotations

from dataclasses import dataclass

from bs18_expfam import checks
from bs18_expfam.claims import CLAIMS
from dpclaims.plugin import Budget, Paper, PaperResult, RunContext, Section, ran_on


@dataclass(frozen=True)
class BS18Budget(Budget):
    """``calibration_trials`` simulated releases per setting; ``gibbs_burnin`` and
    ``gibbs_iterations`` of each chain (the code: 500 and 1000); ``audit_trials``
    outputs per dataset of each audit; ``settings`` the (N, epsilon) of the calibration
    study (the first is the code's driver: N = 1000, epsilon = 0.1)."""

    calibration_trials: int
    gibbs_burnin: int
    gibbs_iterations: int
    audit_trials: int
    settings: tuple = ((1000, 0.1), (100, 0.1), (100, 1.0))


BUDGETS = {
    "smoke": BS18Budget("smoke", calibration_trials=200, gibbs_burnin=100,
                        gibbs_iterations=200, audit_trials=20_000),
    "quick": BS18Budget("quick", calibration_trials=2_000, gibbs_burnin=500,
                        gibbs_iterations=1_000, audit_trials=200_000),
    "standard": BS18Budget("standard", calibration_trials=10_000, gibbs_burnin=500,
                           gibbs_iterations=1_000, audit_trials=1_000_000),
    "full": BS18Budget("full", calibration_trials=40_000, gibbs_burnin=500,
                       gibbs_iterations=1_000, audit_trials=5_000_000,
                       settings=((1000, 0.1), (100, 0.1), (100, 1.0), (10, 1.0),
                                 (10_000, 0.01))),
}

LEVELS = (0.5, 0.9)


def run(ctx: RunContext) -> PaperResult:
    """Every check of the paper at ``ctx.budget``: (verdicts, sections, meta, timings)."""
    b, seed = ctx.budget, ctx.seed
    timed, verdicts = ctx.timer, []  # each check announced (ctx.progress) and timed

    s = checks.seed_of
    simulated = "simulated from the code's model (seeded)"
    verdicts += timed("sensitivities", lambda: (
        checks.check_sensitivity(CLAIMS["bernoulli-sensitivity"],
                                 lambda x: checks.model.bernoulli_statistic([x]), (0, 1),
                                 s(seed, "sensitivity"))
        + checks.check_sensitivity(CLAIMS["multinomial-sensitivity"], checks.one_hot_statistic(3),
                                   (0, 1, 2), s(seed, "sensitivity"))))
    verdicts = ran_on(verdicts, "none: every record in the statistic's domain")
    verdicts += ran_on(timed("Laplace accounting", lambda: checks.check_release_privacy(
        CLAIMS["bernoulli-privacy"], s(seed, "accounting"))), "no records: the mechanism's "
        "scale and sensitivity")
    verdicts += timed("audits", lambda: (
        ran_on(checks.check_bernoulli_audit(CLAIMS["bernoulli-audit"], b.audit_trials,
                                            s(seed, "bernoulli audit")), "statsmodels fair")
        + ran_on(checks.check_multinomial_audit(CLAIMS["multinomial-privacy"], b.audit_trials,
                                                s(seed, "multinomial audit")), simulated)))
    cal, table = timed("calibration", lambda: checks.check_calibration(
        CLAIMS, b.settings, LEVELS, b.calibration_trials, b.gibbs_burnin,
        b.gibbs_iterations, seed))
    verdicts += ran_on(cal, simulated)
    section = Section(
        title="Coverage of the three posteriors (simulation-based calibration)",
        text=(f"theta ~ Beta(10, 10), s ~ Binomial(N, theta), y = s + Laplace(1 / "
              f"epsilon); {b.calibration_trials} trials per setting. Columns: the "
              "fraction of trials whose central interval contains theta."),
        table={"columns": ["N", "epsilon", "level", "non-private", "naive", "noise-aware"],
               "rows": [[r["N"], r["epsilon"], r["level"], f"{r['non-private']:.3f}",
                         f"{r['naive']:.3f}", f"{r['noise-aware']:.3f}"] for r in table]},
    )
    meta = {"paper": "bs18", "seed": seed, "budget": b.to_dict(),
            "data": "statsmodels fair (the audit); simulated from the code's model (the rest)"}
    return PaperResult(verdicts, [section], meta, timed.timings)


PAPER = Paper(
    id="bs18",
    title=("Bernstein & Sheldon, Differentially Private Bayesian Inference for Exponential "
           "Families (NeurIPS 2018)"),
    texts=("NeurIPS 2018 proceedings, abstract and Sec. 1 (metadata page)",
           "code release gbernstein6/private_bayesian_expfam@4cd61ab"),
    claims=tuple(CLAIMS.values()),
    budgets=BUDGETS,
    run=run,
    summary="Laplace on sufficient statistics: sensitivities, privacy, audits, calibration",
)
