"""VIPS's claims as data (Park, Foulds, Chaudhuri, Welling; ``../shared/papers/vips.txt``).

Every claim the suite checks for VIPS, quoted exactly: the analytic ones
(:data:`CLAIMS`: the log moment, the sensitivities of eqs. 22, 57 and 59, Algorithm 2's
calibration, the step audits), the LDA accuracy statements (:data:`LDA_CLAIMS`) and the
BLR / SBN accuracy statements (:data:`ACCURACY_CLAIMS`), with the readings of sigma
(:data:`READINGS`). The privacy numbers VIPS reports are in
:mod:`dpclaims.papers.vips.privacy_numbers`. The checks are in
:mod:`dpclaims.papers.vips.checks`, ``vips_lda_accuracy`` and ``vips_blr_sbn_accuracy``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from dpclaims.claims import Claim, InputError
from dpclaims.claims.paper import Budget

PAPER = "VIPS (vips.txt)"


@dataclass(frozen=True)
class VipsBudget(Budget):
    """VIPS's budget (a :class:`dpclaims.claims.paper.Budget`).

    Attributes: ``examples`` hypothesis examples per sensitivity test; ``audit_trials``
    outputs per dataset of each step audit; ``catalogue`` how many of the reported
    epsilons (None: all); ``lda_seeds`` / ``lda_epochs`` the LDA reproduction (Fig. 3);
    ``blr_seeds`` / ``blr_iterations`` the BLR reproduction (Fig. 6); ``sbn_seeds`` /
    ``sbn_iterations`` the SBN reproduction (Fig. 8).
    """

    examples: int
    audit_trials: int
    catalogue: int | None
    lda_seeds: int
    lda_epochs: int
    blr_seeds: int
    blr_iterations: int
    sbn_seeds: int
    sbn_iterations: int


def as_vips_budget(budget, keys) -> VipsBudget:
    """``budget`` as a :class:`VipsBudget`, its ``keys`` validated (integers >= 1).

    The accuracy checks take the typed budget (``BUDGETS[name]``, or
    ``dataclasses.replace`` of one); a dict (their former argument, still accepted from
    callers outside the package) is converted: its entries become the fields (those it
    lacks are None; only ``keys`` are read), and without a ``name`` the name is the
    ``keys`` with their values (``"lda_seeds=2, lda_epochs=1"``), as the verdicts record it.

    Raises
    ------
    InputError
        Neither a VipsBudget nor a dict, or a key that is not an integer >= 1.
    """
    import numpy as np

    if isinstance(budget, dict):
        known = {f.name for f in fields(VipsBudget)}
        budget = VipsBudget(**{f: budget.get(f) for f in known})
    elif not isinstance(budget, VipsBudget):
        raise InputError(f"budget must be a VipsBudget (or a dict with keys {keys}), got "
                         f"{budget!r}")
    values, checked = budget.values(), {}
    for key in keys:
        v = values[key]
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise InputError(f"budget[{key!r}] must be an integer >= 1, got {v!r}")
        checked[key] = int(v)
    if not budget.name:
        checked["name"] = ", ".join(f"{k}={checked[k]}" for k in keys)
    return replace(budget, **checked)


BUDGETS = {
    # smoke exists for the project's tests: every check runs, small; the accounting
    # catalogue on its first VIPS entry only (as the accounting paper's smoke budget
    # takes it: a second, 6.7 CPU-s of 26 in a VIPS smoke audit, checked nothing new)
    "smoke": VipsBudget("smoke", examples=25, audit_trials=20_000, catalogue=1,
                        lda_seeds=2, lda_epochs=1, blr_seeds=4, blr_iterations=30,
                        sbn_seeds=6, sbn_iterations=10),
    "quick": VipsBudget("quick", examples=150, audit_trials=2_000_000, catalogue=None,
                        lda_seeds=5, lda_epochs=2, blr_seeds=10, blr_iterations=100,
                        sbn_seeds=10, sbn_iterations=15),
    "standard": VipsBudget("standard", examples=600, audit_trials=5_000_000, catalogue=None,
                           lda_seeds=10, lda_epochs=3, blr_seeds=20, blr_iterations=100,
                           sbn_seeds=10, sbn_iterations=30),
    "full": VipsBudget("full", examples=2_000, audit_trials=20_000_000, catalogue=None,
                       lda_seeds=20, lda_epochs=5, blr_seeds=20, blr_iterations=100,
                       sbn_seeds=20, sbn_iterations=60),
}

CLAIMS = {
    "log-moment": Claim(
        id="vips/log-moment-gaussian", kind="identity",
        paper=PAPER,
        location="Sec. 3.2.2",
        statement=("From Proposition 1.6 of Bun & Steinke (2016) along with simple algebra, "
                   "the log moment function of the Gaussian Mechanism \\mathcal{M} is "
                   "$\\alpha_{\\mathcal{M}}(\\lambda) = \\frac{\\lambda(\\lambda+1)\\Delta^2}"
                   "{2\\sigma^2}$."),
        check="exact recomputation (autodp's Gaussian RDP, Mironov 2017 Prop. 3)",
    ),
}

# The same section fixes the noise: "perturbs it using the Gaussian mechanism with
# variance $\Delta^2\sigma^2I_d$, where Δ is the L2-sensitivity" (Alg. 2: N(0, sigma^2
# Delta^2 I)); Sec. 2.2.1 instead writes Z ~ N(0, sigma^2) with sigma an absolute std.
READINGS = {
    "sigma-multiplier": ("sigma is the noise multiplier of Algorithm 2 and Sec. 3.2.2 (noise "
                         "variance Delta^2 sigma^2)"),
    "sigma-absolute": "sigma is the absolute noise std (Sec. 2.2.1: Z ~ N(0, sigma^2))",
}

CLAIMS.update({
    "eq22": Claim(
        id="vips/eq22-sensitivity", kind="sensitivity", paper=PAPER, location="Sec. 3.2.1, eq. 22",
        statement=(
            "$$\\Delta M_l = \\max_{\\substack{\\mathcal{D}, \\mathcal{D}' \\\\ \\mathrm{d}"
            "(\\mathcal{D}, \\mathcal{D}') \\le 1}} |M_l(\\mathcal{D}) - M_l(\\mathcal{D"
            "}')| \\le \\max_{\\substack{\\mathcal{D}_N, q(\\boldsymbol{l}_N)}} \\frac{2}"
            '{N} |\\mathbb{E}_{q(\\boldsymbol{l}_N)} \\mathbf{s}_l(\\mathcal{D}_N, \\bol'
            'dsymbol{l}_N)|. \\tag{22}$$'),
        check="hypothesis property test (BLR statistics, per coordinate, N records)"),
    "eq23": Claim(
        id="vips/eq23-minibatch-sensitivity", kind="sensitivity",
        paper=PAPER, location="Sec. 3.2.3, eq. 23",
        statement=(
            '$$\\Delta M_l \\le \\max_{\\mathcal{D}_S, q(l_S)} \\frac{2}{S} |\\mathbb{E}_'
            '{q(l_S)} \\mathbf{s}_l(\\mathcal{D}_S, l_S)| . \\tag{23}$$'),
        check="hypothesis property test (BLR statistics, per coordinate, S records)"),
    "blr": Claim(
        id="vips/blr-sensitivity", kind="sensitivity", paper=PAPER, location="App., eqs. 57 and 59",
        statement=("\\le \\max_{\\mathbf{x}_n, y_n} \\frac{2}{N} |(y_n - \\frac{1}{2})| "
                   "|\\mathbf{x}_n|_2 \\le \\frac{2}{N}, \\tag{57}"),
        check="hypothesis property test of s1, s2 and the joint vector (L2)"),
    "lda": Claim(
        id="vips/lda-sensitivity", kind="sensitivity",
        paper=PAPER, location="Sec. 4.2 (clipping), App. Sec. 2",
        statement=("After this the procedure, the sensitivity of the clipped expected "
                   "sufficient statistics matrix becomes $a\\Delta\\bar{\\mathbf{s}}$ (i.e., "
                   "$a\\frac{N}{S}$), and we add noise on this scale to the clipped expected "
                   "sufficient statistics."),
        check="hypothesis property test (documents as word-count vectors, replace-one)"),
    "sbn": Claim(
        id="vips/sbn-sensitivity", kind="sensitivity", paper=PAPER, location="Sec. 7 (SBN), eq. 72",
        statement=("We first scale down each sufficient statistic vector by its own "
                   "sensitivity, i.e., $\\mathbf{s}'_i = \\bar{\\mathbf{s}}_i/C_i$, so that the "
                   "concatenated vector (denoted by \\mathbf{s}')'s sensitivity becomes simply "
                   "$\\sqrt{7}$."),
        check="hypothesis property test of the rescaled joint vector"),
    "alg2": Claim(
        id="vips/alg2-noise-calibration", kind="sensitivity", paper=PAPER, location="Algorithm 2",
        statement=("Compute the L2-sensitivity Δ of the expected sufficient statistics."),
        check="property tests: is each model's stated Delta an L2 bound for the released "
              "vector (not a per-coordinate one)?"),
})

CLAIMS.update({
    "audit-lda": Claim(
        id="vips/empirical-audit-lda", kind="audit", paper=PAPER, location="Algorithm 3",
        statement=("Output the perturbed expected sufficient statistics \\tilde{\\mathbf{s}}_k^v "
                   "= \\bar{\\mathbf{s}} + Y_k^v, where Y_k^v is Gaussian noise given in Eq. "
                   "27, but using clipped sensitivity a\\frac{N}{S}."),
        check="empirical audit of one released step (Clopper-Pearson certificate)"),
    "audit-blr": Claim(
        id="vips/empirical-audit-blr", kind="audit", paper=PAPER, location="Algorithms 4 and 5",
        statement=("Using the sensitivity of the expected sufficient statistics given in Eq. "
                   "57 and Eq. 59"),
        check="empirical audit of one released step (Clopper-Pearson certificate)"),
})


LDA_LOCATION = "Sec. 4.3, Fig. 2 (and Fig. 3)"

LDA_CHECK = ("reduced-size reproduction: held-out perplexity per seed at the same total "
         "(epsilon, delta), exact one-sided sign test over seeds")

LDA_CLAIMS = {
    "strong": Claim(
        id="vips/lda-ma-beats-strong-composition", kind="experiment-statement",
        paper=PAPER, location=LDA_LOCATION,
        statement=("We found that the moments accountant composition substantially "
                   "outperformed strong composition in each of these settings."),
        check=LDA_CHECK),
    "clipping": Claim(
        id="vips/lda-clipping-helps", kind="experiment-statement",
        paper=PAPER, location=LDA_LOCATION,
        statement=("Our proposed method, which implements the clipping procedure described "
                   "in the previous section, also outperformed a baseline in which the "
                   "clipping step was not applied."),
        check=LDA_CHECK),
    "word-frequency": Claim(
        id="vips/lda-ma-beats-word-frequency", kind="experiment-statement",
        paper=PAPER, location=LDA_LOCATION,
        statement=("The moments accountant was able to consistently beat a simple non-private "
                   "baseline, predicting based on empirical word frequencies"),
        check=LDA_CHECK),
}


ACCURACY_CLAIMS = {
    "blr": Claim(
        id="vips/blr-approaches-nonprivate", kind="experiment-statement", paper=PAPER,
        location="Sec. 6.4, Fig. 6 (a derived claim: no sentence states it)",
        statement=(
            "For $\\sigma = 0$, the algorithm is equivalent to the non-private training under "
            "the logistic regression model."),
        check=("derived from Fig. 6's boxes (the paper states no sentence of it): private "
               "BLR approaches the non-private AUC as epsilon grows. Reduced-size "
               "reproduction of Fig. 6: test AUC per seed at sigma in "
               "{0, 1, 6, 12}; Page's exact trend test over seeds (blocks), level 0.05")),
    "sbn": Claim(
        id="vips/sbn-ma-beats-strong-composition", kind="experiment-statement", paper=PAPER,
        location="Sec. 7.1, Fig. 8 caption",
        statement=(
            "The private version using strong composition (blue) performed worse than when "
            "using moments accountant (red) regardless of the size of mini-batches, since "
            "the level of additive noise per iteration in strong composition is higher than "
            "that of the moments accountant."),
        check=("reduced-size reproduction of Fig. 8: held-out prediction accuracy per paired "
               "seed, MA vs SC at the same total (epsilon, delta); exact one-sided sign test "
               "per minibatch size, level 0.05")),
}
