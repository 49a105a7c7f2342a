"""The claims, quoted exactly, with where each is stated.

Paper: G. Bernstein and D. Sheldon, "Differentially Private Bayesian Inference for
Exponential Families", NeurIPS 2018, pp. 2919-2929 (arXiv 1809.02188). The text we
could read is the abstract and the first paragraph of Sec. 1 (the NeurIPS proceedings'
metadata page, papers.nips.cc, file 08040837089cdf46631a10aca5258e16-Metadata.json).
The sensitivity, the noise and the sampler are stated in the authors' code release
(github.com/gbernstein6/private_bayesian_expfam, commit 4cd61ab, ``Bounded_Suff_Stats``),
which its README calls "a code release as part of the paper": those claims are located
in the code, file by file.
"""

from __future__ import annotations

from dpclaims.plugin import Claim, Reading, ReadingKind

PAPER = ("Bernstein & Sheldon, NeurIPS 2018 (abstract, Sec. 1) and its code release "
         "gbernstein6/private_bayesian_expfam@4cd61ab")
CODE = "code: Bounded_Suff_Stats/"

ABSTRACT_CALIBRATION = ("Unlike other methods, it gives properly calibrated posterior "
                        "beliefs in the non-asymptotic data regime.")
SEC1_RELATION = ("A randomized algorithm that satisfies differential privacy offers "
                 "protection to individuals by guaranteeing that its output is insensitive "
                 "to changes caused by the data of any single individual entering or "
                 "leaving the data set.")
SEC1_MECHANISM = ("An algorithm can be made differentially private by applying one of "
                  "several general-purpose mechanisms to randomize the computation in an "
                  "appropriate way, for example, by adding noise calibrated to the "
                  "sensitivity of the quantity being computed, where sensitivity captures "
                  "how much the quantity depends on any individual's data [1].")
CODE_SENSITIVITY_DOC = ("self.sensitivity = maximum amount addition/removal of an individual "
                        "will change sufficient statistics")

#: The code's and Sec. 1's relation: an individual entering or leaving the data set.
ADD_REMOVE = Reading("add-remove (Sec. 1: 'entering or leaving the data set'; the code: "
                     "'addition/removal')")
#: The relation under which N is public, as the code's conjugate update Beta(a + s,
#: b + N - s) and its Gibbs sampler use N: not what the claim says, shown beside it.
REPLACE_ONE = Reading("replace-one (N public, as the code's inference uses it)",
                      ReadingKind.CORRECTION)

CLAIMS = {
    "bernoulli-sensitivity": Claim(
        id="bs18/beta-bernoulli-sensitivity", kind="sensitivity", paper=PAPER,
        location=CODE + "distributions.py, Beta_Binomial",
        statement=f"self.sensitivity = 1 [{CODE_SENSITIVITY_DOC}]",
        check="exact: the statistic is a sum, so adding or removing a record x changes it "
              "by x; the maximum over the record domain {0, 1}"),
    "multinomial-sensitivity": Claim(
        id="bs18/dirichlet-multinomial-sensitivity", kind="sensitivity", paper=PAPER,
        location=CODE + "distributions.py, Dirichlet_Multinomial",
        statement=f"self.sensitivity = 1 [{CODE_SENSITIVITY_DOC}] (K = 3 categories, the "
                  "K - 1 = 2 counts carried)",
        check="exact: the L1 change of the carried counts over every record (add-remove) or "
              "pair of records (replace-one) of the domain {0, 1, 2}"),
    "bernoulli-privacy": Claim(
        id="bs18/laplace-release-privacy", kind="privacy-number", paper=PAPER,
        location="Sec. 1, para. 1; " + CODE + "driver.py",
        statement=f"{SEC1_MECHANISM} [driver.py: epsilon = .1; laplace_scale = 1.0 * "
                  "conjugate_pair.sensitivity / epsilon]",
        check="accounting of the Laplace mechanism at the exact sensitivity (pure-DP "
              "composition, exact at delta = 0), under the claim's relation"),
    "bernoulli-audit": Claim(
        id="bs18/laplace-release-audit", kind="audit", paper=PAPER,
        location="Sec. 1, para. 1; " + CODE + "driver.py",
        statement=f"{SEC1_RELATION} [the Beta-Bernoulli release y = s + Laplace(1 / "
                  "epsilon), epsilon = 0.1]",
        check="empirical audit on statsmodels' fair data (an affair: 1, none: 0) and the "
              "same data with one record added; Clopper-Pearson epsilon lower bound"),
    "multinomial-privacy": Claim(
        id="bs18/multinomial-release-privacy", kind="audit", paper=PAPER,
        location=CODE + "driver.py (draw_laplace_noise; the Dirichlet_Multinomial line); "
                        "README.md",
        statement=f"{SEC1_MECHANISM} [driver.py: laplace_noise = "
                  "np.random.laplace(scale=laplace_scale); noisy_sufficient_statistics = "
                  "sufficient_statistics + noise; epsilon = .1; with '# conjugate_pair = "
                  "Dirichlet_Multinomial()'. README.md: 'Models are fully plug and play.']",
        check="empirical audit of the release of the carried counts, one record added; "
              "Clopper-Pearson epsilon lower bound (the attack statistic: the difference "
              "of the two noisy counts)"),
    "calibrated": Claim(
        id="bs18/noise-aware-calibrated", kind="monte-carlo-bound", paper=PAPER,
        location="Abstract",
        statement=ABSTRACT_CALIBRATION,
        check="simulation-based calibration: theta from the prior, data, a release; the "
              "coverage of the Gibbs posterior's central 50 % and 90 % intervals with "
              "Clopper-Pearson brackets, Bonferroni over settings and levels"),
    "naive": Claim(
        id="bs18/naive-not-calibrated", kind="monte-carlo-bound", paper=PAPER,
        location="Abstract",
        statement=ABSTRACT_CALIBRATION + " [the 'other methods': the naive posterior, the "
                  "conjugate update applied to the noisy statistic, the code's baseline]",
        check="the naive posterior's coverage of its central 90 % interval at the code's "
              "setting (N = 1000, epsilon = 0.1) below nominal: Clopper-Pearson upper "
              "bound"),
}
