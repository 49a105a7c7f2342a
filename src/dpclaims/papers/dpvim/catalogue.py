"""DPVIm's claims as data (Jälkö, Prediger, Honkela, Kaski; ``../shared/papers/dpvim.txt``).

Every claim the suite checks for DPVIm, quoted exactly: the analytic ones
(:data:`CLAIMS`), the experiments' statements (:data:`EXPERIMENT_CLAIMS`: OU noise
scaling, iterate averaging, coverage, Adult) and the empirical audit of aligned DPVI
(:data:`AUDIT_CLAIM`, its readings :data:`AUDIT_READINGS`). The privacy numbers DPVIm
reports are in :mod:`dpclaims.papers.dpvim.privacy_numbers`. The checks are in
:mod:`dpclaims.papers.dpvim.checks`, ``dpvim_experiments`` and ``dpvim_audit``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from dpclaims.claims import Claim, InputError
from dpclaims.claims.paper import Budget
from dpclaims.papers.dpvim.privacy_numbers import DPVIM_PAPER

PAPER = DPVIM_PAPER  # one spelling, shared with the accounting catalogue


@dataclass(frozen=True)
class DpvimBudget(Budget):
    """DPVIm's budget (a :class:`dpclaims.claims.paper.Budget`).

    ``examples`` hypothesis examples; ``mc`` Monte Carlo draws of Thm. 3.1; ``ou_runs`` /
    ``ou_steps`` the OU scaling runs; ``cover_runs`` / ``cover_steps`` / ``cover_n`` the
    coverage study; ``adult_*`` the Fig. 5 reproduction (steps, epsilons, runs, learning
    rate); ``clip_readings`` the readings of Table F1's clipping; ``audit_trials`` outputs
    per dataset of the audit; ``catalogue`` how many reported epsilons.
    """

    examples: int
    mc: int
    ou_runs: int
    ou_steps: int
    cover_runs: int
    cover_steps: int
    cover_n: int
    adult_steps: int
    adult_eps: tuple
    adult_runs: int
    adult_lr: float
    clip_readings: tuple
    audit_trials: int
    catalogue: int



def as_dpvim_budget(budget) -> DpvimBudget:
    """``budget`` as a :class:`DpvimBudget`: as is, or a dict (the former argument of the
    checks and runs, still accepted) converted, its entries becoming the fields (those it
    lacks None; a run reads only its own) and its name ``"dict"`` unless it gives one.

    Raises
    ------
    InputError
        Neither a DpvimBudget nor a dict.
    """
    if isinstance(budget, DpvimBudget):
        return budget
    if isinstance(budget, dict):
        return DpvimBudget(**{f.name: budget.get(f.name) for f in fields(DpvimBudget)
                              if f.name != "name"}, name=budget.get("name") or "dict")
    raise InputError(f"budget must be a DpvimBudget (or a dict), got {budget!r}")


BUDGETS = {
    "smoke": DpvimBudget("smoke", examples=20, mc=2_000, ou_runs=40, ou_steps=400,
                         cover_runs=20, cover_steps=400, cover_n=1_000, adult_steps=300,
                         adult_eps=(1.0,), adult_runs=6, adult_lr=1e-2,
                         clip_readings=("table-f1",), audit_trials=4_000, catalogue=1),
    "quick": DpvimBudget("quick", examples=100, mc=20_000, ou_runs=200, ou_steps=3_000,
                         cover_runs=100, cover_steps=3_000, cover_n=5_000, adult_steps=3_000,
                         adult_eps=(1.0,), adult_runs=10, adult_lr=1e-2,
                         clip_readings=("table-f1", "quantile-rule"), audit_trials=50_000,
                         catalogue=2),
    "standard": DpvimBudget("standard", examples=300, mc=50_000, ou_runs=400, ou_steps=5_000,
                            cover_runs=200, cover_steps=5_000, cover_n=10_000,
                            adult_steps=5_000, adult_eps=(1.0, 4.0), adult_runs=10,
                            adult_lr=1e-2, clip_readings=("table-f1", "quantile-rule"),
                            audit_trials=200_000, catalogue=9),
    "full": DpvimBudget("full", examples=1_000, mc=200_000, ou_runs=1_000, ou_steps=10_000,
                        cover_runs=500, cover_steps=10_000, cover_n=30_000,
                        adult_steps=40_000, adult_eps=(0.5, 1.0, 2.0, 4.0), adult_runs=20,
                        adult_lr=1e-3, clip_readings=("table-f1", "quantile-rule"),
                        audit_trials=1_000_000, catalogue=9),
}


CLAIMS = {
    "aligned-identity": Claim(
        id="dpvim/aligned-identity", kind="identity",
        paper=PAPER, location="Sec. 3.1, Prop. 3.1, eq. (11); "
        "Sec. 3.1.2, eq. (20)",
        statement=("Proposition 3.1. Assume q to be diagonal Gaussian, then the gradient "
                   "\\mathbf{g}_s in Equation (8) becomes"),
        check="hypothesis property test: central finite differences of the single-sample "
              "ELBO (eq. 5 with theta of eq. 6) against eta T'(s_q) g_m + grad_s H(q)"),
    "corollary31": Claim(
        id="dpvim/corollary31-no-extra-cost", kind="identity",
        paper=PAPER, location="Sec. 3.1.1, Cor. 3.1",
        statement=("As the $\\boldsymbol{\\eta}, T'(\\mathbf{s}_q)$ and the entropy "
                   "contribution $\\nabla_{\\mathbf{s}_q}H(q)$ are independent of the data, "
                   "the $\\tilde{\\mathbf{g}}_s^{aligned}$ satisfies the same privacy "
                   "guarantee through post-processing immunity (Property 2.1)."),
        check="hypothesis property test: two data sets whose releases g~_m are made equal "
              "(by choice of the noise draw) must give the same aligned g~_s"),
    "alg2-sensitivity": Claim(
        id="dpvim/alg2-release-sensitivity", kind="sensitivity",
        paper=PAPER, location="Algorithm 2, lines 3-4",
        statement=("4: $\\tilde{\\mathbf{g}}_m^{nat} \\leftarrow \\sum_{\\mathbf{x} \\in D} "
                   "\\gamma_{\\mathbf{x}}\\mathbf{g}_{m,\\mathbf{x}} + \\sigma_{DP}C"
                   "\\boldsymbol{\\psi}$"),
        check="hypothesis property test: the released sum changes by at most C when a "
              "record is added (add-remove), under both readings of line 4"),
    "thm31": Claim(
        id="dpvim/thm31-variance-reduction", kind="monte-carlo-bound",
        paper=PAPER, location="Sec. 3.1.1, Thm. 3.1; "
        "App. D",
        statement=("Theorem 3.1. Assume that $C^{vanilla} \\geq C^{aligned}$. If we obtain "
                   "σ_q through transformation T such that $T'(s) \\leq 1$, then for any "
                   "fixed batch,"),
        check="variance difference per coordinate on fixed batches: the noise's share exact, "
              "the eta share bracketed by Clopper-Pearson limits on bounded statistics "
              "(Bonferroni over every part); the z-tests are shown as estimates"),
    "eq12": Claim(
        id="dpvim/eq12", kind="identity", paper=PAPER, location="Sec. 3.1, eq. (12); App. C",
        statement=("We have $\\Pr[|\\boldsymbol{\\eta}_j| < 2] > 97.5\\%$ and "
                   "$T'(\\mathbf{s}_q) \\leq \\boldsymbol{\\sigma}_q$ for common choices of T"),
        check="exact computation (normal cdf); T'(s) <= T(s) searched on a grid and by "
              "hypothesis (a search: it can refute, not certify)"),
    "fisher-blocks": Claim(
        id="dpvim/fisher-blocks", kind="identity",
        paper=PAPER, location="Sec. 3.1.1, eqs. (13)-(16)",
        statement=("$$\\mathcal{I} = \\mathbb{E}_{\\boldsymbol{\\theta}|\\mathbf{s}_q, "
                   "\\mathbf{m}_q} [(\\nabla_{\\boldsymbol{\\theta}} \\log q(\\boldsymbol{"
                   "\\theta}))(\\nabla_{\\boldsymbol{\\theta}} \\log q(\\boldsymbol{\\theta}))"
                   "^T] \\quad (13)$$"),
        check="exact symbolic expectation of the score outer product (Gaussian moments, "
              "rational arithmetic) against the blocks implied by eqs. (15)-(16); a Monte "
              "Carlo estimate shown beside it"),
    "e1": Claim(
        id="dpvim/e1-noise-combination", kind="identity", paper=PAPER, location="App. E, eq. (E.1)",
        statement=("\\left(\\frac{1}{\\sqrt{S}} \\mathbf{B} + \\sigma_{DP} \\mathbf{I} "
                   "\\right) \\boldsymbol{\\psi}' \\right), \\boldsymbol{\\psi}' \\sim "
                   "\\mathcal{N}(\\mathbf{0}, \\mathbf{I})"),
        check="exact: covariance of (B/sqrt(S)) nu + sigma_DP psi against that of "
              "(B/sqrt(S) + sigma_DP I) psi'"),
    "alg-j1": Claim(
        id="dpvim/alg-j1-correlation", kind="identity",
        paper=PAPER, location="App. J, Algorithm J.1",
        statement="Ensure: correlation matrix \\mathbf{C}",
        check="exact eigenvalues of Algorithm J.1's output at the paper's (d, rho)"),
    "adult-steps": Claim(
        id="dpvim/adult-steps", kind="identity", paper=PAPER, location="App. F",
        statement=("The training was run for 4 000 epochs with subsampling ratio of 0.01, "
                   "corresponding to total of 400 000 gradient steps."),
        check="arithmetic"),
}


EXPERIMENT_CLAIMS = {
    "ou-scaling": Claim(
        id="dpvim/ou-noise-scaling", kind="experiment-statement",
        paper=PAPER, location="App. E, eq. (E.7) and below",
        statement=("Even without determining \\mathbf{A} we can already make an important "
                   "discovery from this: Since \\mathbf{A} is fixed around the optimum, we see "
                   "that the noise covariance of our OU process scales linearly with respect "
                   "to σ_{DP}^2 ."),
        check="simulation: across-run variance of the iterates at four sigma_DP, SGD and Adam"),
    "averaging": Claim(
        id="dpvim/iterate-averaging-gain", kind="experiment-statement",
        paper=PAPER, location="Sec. 3.2",
        statement=("Compared to using the final iterate of the chain (also an unbiased "
                   "estimator of $\\boldsymbol{\\xi}^*$), the averaged trace reduces the "
                   "variance of the estimator by up to a factor of "
                   "$T_{\\text{burn-out}}^{-1}$."),
        check="simulation: variance of the window mean vs of the last iterate across runs"),
    "coverage": Claim(
        id="dpvim/noise-aware-coverage", kind="experiment-statement",
        paper=PAPER, location="Sec. 3.2",
        statement=("we can add the variance of the averaged traces to the variances of our "
                   "posterior to absorb the remaining uncertainty due to the inference "
                   "process, and recover a noise-aware posterior approximation."),
        check="simulation: coverage of the non-private optimum over independent runs"),
    "adult-best": Claim(
        id="dpvim/adult-aligned-natural-best", kind="experiment-statement",
        paper=PAPER, location="Sec. 4.3, Fig. 5a",
        statement=("From this figure we see that the aligned natural gradient method clearly "
                   "outperforms all the other variants in this setting."),
        check="reduced-size reproduction; exact one-sided sign tests over runs"),
    "trace-std": Claim(
        id="dpvim/trace-std-matches-spread", kind="experiment-statement",
        paper=PAPER, location="Sec. 4.3, Fig. 5b",
        statement=("Figure 5b shows that the noise std estimated from the converged traces "
                   "is close to the noise std we have across the last iterates of multiple "
                   "independent repeats."),
        check="reduced-size reproduction; MSE against the paper's baseline, sign test over "
              "parameters"),
}


AUDIT_CLAIM = Claim(
    id="dpvim/empirical-audit", kind="audit",
    paper=PAPER,
    location="Sec. 3.1.1, Cor. 3.1; Sec. 4.1 (Fourier accountant); App. F (delta = 1/N)",
    statement=("Corollary 3.1. Let $\\delta(\\epsilon; \\sigma_{DP}, T)$ be any privacy "
               "accounting oracle. Let $\\epsilon > 0, \\sigma_{DP} > 0$. Then aligned DPVI "
               "consisting of T iterations of Alg. 1 is $(\\epsilon, \\delta(\\epsilon; "
               "\\sigma_{DP}, T))$ -DP."),
    check="empirical audit: T steps of aligned DPVI (SGD, all iterates released) with a "
          "gradient canary; Clopper-Pearson epsilon lower bound on the canary statistic "
          "sum_t <u, g~_t> / C, against the claimed epsilon",
)

AUDIT_READINGS = {
    "full-batch": ("full batch, add-remove (canary added), aligned: claim = exact T-fold "
                   "Gaussian composition"),
    "wor-replace-one": ("the paper's accountant (Poisson q = B/N, add-remove, PLD) read as a "
                        "replace-one guarantee of fixed-size batches without replacement "
                        "(d3p)"),
}
