"""The literature's mechanisms: the standard test set of DP checkers, correct and incorrect.

Each mechanism here follows the :class:`~dpclaims.audits.mechanism.Mechanism`
protocol (vectorised over trials), states its published claim, the neighbouring
datasets the literature audits it on (``neighbouring_pairs()``), its record
``domain`` (so that ``dpclaims check-variant`` can search further), its noiseless
``query`` with its ``sensitivity``, and what is known of its true epsilon
(``literature``). Run any of them with::

    dpclaims check-variant dpclaims.mechanisms:svt_alg4

Queries as records
------------------
StatDP (Ding, Wang, Wang, Zhang, Kifer, "Detecting Violations of Differential
Privacy", CCS 2018) and DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper:
Black-Box Discovery of Differential Privacy Violations using Classifiers", IEEE
S&P 2021) feed these mechanisms vectors of query answers q in R^k whose
neighbours differ by at most 1 in every coordinate ("ALL_DIFFER", for Report Noisy
Max and the sparse vector technique) or in one coordinate ("ONE_DIFFER", for the
Laplace mechanism and histograms). Here a dataset is a set of records and the
answers are their sum: records in the box [-1, 1]^k, so that adding or removing
one record moves every answer by at most 1 (k sensitivity-1 queries, not
necessarily monotone), under the add-remove relation. StatDP's base answers
[1, ..., 1] are the one record (1, ..., 1); its pattern q(D2) is D1 plus the
record q(D2) - q(D1). Histograms take records from the finite set of bins.

Definitions and sources
-----------------------
The sparse vector technique's variants are those of Lyu, Su, Li, "Understanding
the Sparse Vector Technique for Differential Privacy", PVLDB 10(6):637-648, 2017
(arXiv:1603.01699), numbered as there: "most variants of SVT are actually not
private" (their abstract). With query sensitivity Delta, cutoff c (the
algorithm halts after c positive answers), threshold T and eps2 = eps - eps1,
each compares ``q_i(D) + nu_i >= T + rho``:

====  =====================  =======  =============  =============  =====  =================
Alg.  source (Lyu et al.)    eps1     rho            nu_i           halts  privacy
====  =====================  =======  =============  =============  =====  =================
1     Lyu et al.             eps / 2  Lap(D/eps1)    Lap(2cD/eps2)  yes    eps-DP
2     Dwork & Roth 2014      eps / 2  Lap(cD/eps1),  Lap(2cD/eps1)  yes    eps-DP
                                      redrawn after
                                      each positive
3     Roth 2011 (notes)      eps / 2  Lap(D/eps1)    Lap(cD/eps2)   yes    not private
                                                                           (outputs q_i+nu_i)
4     Lee & Clifton 2014     eps / 4  Lap(D/eps1)    Lap(D/eps2)    yes    ((1+6c)/4) eps-DP
5     Stoddard et al. 2014   eps / 2  Lap(D/eps1)    0              no     not private
6     Chen et al. 2015       eps / 2  Lap(D/eps1)    Lap(D/eps2)    no     not private
====  =====================  =======  =============  =============  =====  =================

The paper's own text (its Figure 1 and Table 1) was not available offline when
this module was written; the table above was rebuilt from the implementations of
the DP-Sniper and StatDP authors (eth-sri/dp-sniper
``dpsniper/mechanisms/sparse_vector_technique.py``, each class documented "Alg. k
from: M. Lyu, D. Su, and N. Li. 2017. Understanding the Sparse Vector Technique
for Differential Privacy"; cmla-psu/statdp ``statdp/algorithms.py``, whose
incorrect variants carry comments such as "INCORRECT: no noise added to the
queries" (Alg. 5), "INCORRECT: noise added to queries doesn't scale with N"
(Alg. 6), "INCORRECT: Output the noisy query instead of True" (Alg. 3)). Their
output encoding is ours: 1 for a positive answer, 0 for a negative one, -1 for
a query not answered after the cutoff.

Report Noisy Max (Dwork & Roth, "The Algorithmic Foundations of Differential
Privacy", 2014, Sec. 3.3): add Laplace noise to each answer and return the index
of the largest noisy answer; with Lap(2 / eps) it is eps-DP for sensitivity-1
queries that may move in opposite directions (StatDP's and DP-Sniper's
``noisy_max_v1a`` / ReportNoisyMax1). Returning the noisy maximum *value* instead
("INCORRECT: returning maximum value instead of the index", StatDP) is
(k eps / 2)-DP for k queries that may all move by 1, not eps-DP: the density of
max_i (q_i + Lap(b)) is proportional to e^{k x / b} in its left tail, so moving
every answer by 1 changes it by a factor e^{k / b} there (derived here; DP-Sniper
measures 0.249 for k = 5, eps = 0.1, against k eps / 2 = 0.25).

The noisy histogram (Ding et al. 2018, Alg. 9 and 10 as DP-Sniper numbers them):
each bin plus Lap(1 / eps) is eps-DP (one record moves one bin by 1); plus
Lap(eps) ("INCORRECT: using (epsilon) noise instead of (1 / epsilon)", StatDP) is
(1 / eps)-DP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import dp_accounting
import numpy as np

from dpclaims.analysis.domains import Ball, Box, FiniteSet
from dpclaims.analysis.records import add_record, remove_record
from dpclaims.analysis.validation import check_count, check_epsilon, check_positive
from dpclaims.analysis.vocabulary import RELATIONS
from dpclaims.audits.mechanism import NeighbouringPair, PrivacyClaim, Sensitivity

# StatDP's query-answer patterns (statdp/generators.py; DP-Sniper's
# dpsniper/input/pattern_generator.py uses the same vectors): the base answers and,
# for each pattern, the neighbouring answers. Names follow the StatDP paper's table.
STATDP_PATTERNS = {
    "one above": lambda k: (np.ones(k), np.r_[2.0, np.ones(k - 1)]),
    "one below": lambda k: (np.ones(k), np.r_[0.0, np.ones(k - 1)]),
    "one above rest below": lambda k: (np.ones(k), np.r_[2.0, np.zeros(k - 1)]),
    "one below rest above": lambda k: (np.ones(k), np.r_[0.0, 2 * np.ones(k - 1)]),
    "half half": lambda k: (np.ones(k), np.r_[2 * np.ones(k // 2), np.zeros(k - k // 2)]),
    "all above": lambda k: (np.ones(k), 2 * np.ones(k)),
    "all below": lambda k: (np.ones(k), np.zeros(k)),
    "x shape": lambda k: (np.r_[np.ones(k // 2), np.zeros(k - k // 2)],
                          np.r_[np.zeros(k // 2), np.ones(k - k // 2)]),
}


def answers_pair(a0, a1, name: str = "") -> NeighbouringPair:
    """The add-remove pair of datasets whose summed answers are ``a0`` and ``a1``.

    d0 is the one record ``a0`` (which must lie in [-1, 1]^k) and d1 adds the
    record ``a1 - a0`` (which must too).

    Raises
    ------
    ValueError
        Shapes differ, or a record falls outside [-1, 1]^k.
    """
    a0, a1 = np.asarray(a0, dtype=float), np.asarray(a1, dtype=float)
    if a0.shape != a1.shape or a0.ndim != 1:
        raise ValueError(f"answer vectors must be 1-d of one length, got {a0.shape}, {a1.shape}")
    step = a1 - a0
    for what, r in (("base answers", a0), ("answer difference", step)):
        if np.any(np.abs(r) > 1):
            raise ValueError(f"the {what} {r.tolist()} leave the record box [-1, 1]^k")
    d0 = a0[None]
    return NeighbouringPair(d0, add_record(d0, step), "add-remove",
                            f"StatDP pattern '{name}': answers {a0.tolist()} vs {a1.tolist()}")


def statdp_pairs(k: int, patterns=None) -> list[NeighbouringPair]:
    """StatDP's pattern pairs for k queries (all of :data:`STATDP_PATTERNS` by default)."""
    names = list(STATDP_PATTERNS) if patterns is None else list(patterns)
    return [answers_pair(*STATDP_PATTERNS[n](k), n) for n in names]


def _sum_query(data) -> np.ndarray:
    d = np.asarray(data, dtype=float)
    return d.sum(axis=0) if d.ndim > 1 else np.atleast_1d(d.sum())


@dataclass(frozen=True)
class Literature:
    """What is known of a zoo mechanism: the true epsilon and published lower bounds.

    Attributes
    ----------
    correct : bool
        Whether the published claim is true.
    true_epsilon : float or None
        The exact epsilon where known (inf for "not private"), None where not.
    source : str
        Where the mechanism and its privacy come from.
    dpsniper_lower_bound, statdp_lower_bound : float or None
        The lower bounds DP-Sniper (logistic regression, 90 % confidence, 2e8 samples)
        and StatDP (as re-verified by DP-Sniper's authors) report at eps = 0.1, from
        the reference logs of eth-sri/dp-sniper (``eval_sp2021/reference-results``),
        the data behind the paper's evaluation figure; None where not evaluated.
    """

    correct: bool
    true_epsilon: float | None
    source: str
    dpsniper_lower_bound: float | None = None
    statdp_lower_bound: float | None = None


# --------------------------------------------------------------------------- Laplace


@dataclass(frozen=True)
class LaplaceMechanism:
    """Sum of scalar records in [0, 1] plus Lap(scale_factor / eps): claims eps-DP.

    ``scale_factor = 1`` is the Laplace mechanism (Dwork, McSherry, Nissim, Smith
    2006; sensitivity 1 under add-remove); 0.5 plants the half-scale bug (true
    epsilon 2 eps).
    """

    eps: float = 1.0
    scale_factor: float = 1.0
    name: str = "laplace"
    domain: Any = field(default=Box(0.0, 1.0), repr=False)

    def __post_init__(self):
        check_epsilon(self.eps, "eps")
        check_positive(self.scale_factor, "scale_factor")

    @property
    def data(self):
        return np.array([0.5])

    @property
    def claim(self):
        return PrivacyClaim(self.eps, 0.0, "add-remove", dp_accounting.LaplaceDpEvent(1 / self.eps))

    @property
    def sensitivity(self):
        return Sensitivity(1.0, 1)

    @property
    def literature(self):
        return Literature(self.scale_factor >= 1, self.eps / self.scale_factor,
                          "Dwork, McSherry, Nissim, Smith 2006",
                          0.097 if self.scale_factor == 1 else None,
                          0.100 if self.scale_factor == 1 else None)

    def query(self, data):
        return _sum_query(data)

    def neighbouring_pairs(self):
        return [NeighbouringPair(self.data, add_record(self.data, 1.0), "add-remove",
                                 "add a record 1 (answers 0.5 vs 1.5)")]

    def release(self, data, rng, n):
        return self.query(data) + rng.laplace(0.0, self.scale_factor / self.eps, (n, 1))


# --------------------------------------------------------------------------- histogram


@dataclass(frozen=True)
class NoisyHistogram:
    """Counts of records in k bins plus independent Laplace noise per bin: claims eps-DP.

    ``noise="1/eps"``: Lap(1 / eps), eps-DP under add-remove (L1 sensitivity 1).
    ``noise="eps"``: Lap(eps), the published bug (Ding et al. 2018's incorrect
    histogram), (1 / eps)-DP.
    """

    eps: float = 1.0
    noise: str = "1/eps"
    k: int = 5
    name: str = "noisy-histogram"

    def __post_init__(self):
        check_epsilon(self.eps, "eps")
        check_count(self.k, "k")
        if self.noise not in ("1/eps", "eps"):
            raise ValueError(f"noise must be '1/eps' or 'eps', got {self.noise!r}")

    @property
    def scale(self) -> float:
        return 1 / self.eps if self.noise == "1/eps" else self.eps

    @property
    def domain(self):
        return FiniteSet(tuple(range(self.k)))

    @property
    def data(self):
        return np.arange(self.k)  # one record per bin: counts [1, ..., 1]

    @property
    def claim(self):
        return PrivacyClaim(self.eps, 0.0, "add-remove", dp_accounting.LaplaceDpEvent(1 / self.eps))

    @property
    def sensitivity(self):
        return Sensitivity(1.0, 1)

    @property
    def literature(self):
        ok = self.noise == "1/eps"
        return Literature(ok, self.eps if ok else 1 / self.eps,
                          "Ding et al. 2018 (StatDP), Alg. 9 / 10 as DP-Sniper numbers them",
                          0.098 if ok else 4.602, 0.099 if ok else 10.002)

    def query(self, data):
        return np.bincount(np.asarray(data, dtype=int).ravel(), minlength=self.k)[: self.k] \
            .astype(float)

    def neighbouring_pairs(self):
        d = self.data
        return [NeighbouringPair(d, add_record(d, 0), "add-remove", "one above: add a record "
                                 "to bin 0"),
                NeighbouringPair(d, remove_record(d, 0), "add-remove", "one below: remove the "
                                 "record of bin 0")]

    def release(self, data, rng, n):
        return self.query(data) + rng.laplace(0.0, self.scale, (n, self.k))


# --------------------------------------------------------------------------- noisy max


class _AnswerMechanism:
    """Shared parts of the mechanisms on k sensitivity-1 answers (records in [-1, 1]^k)."""

    k: int

    @property
    def domain(self):
        return Box(-1.0, 1.0, (self.k,))

    @property
    def data(self):
        return np.ones((1, self.k))

    @property
    def sensitivity(self):
        return Sensitivity(1.0, math.inf)

    def query(self, data):
        return _sum_query(data)

    def neighbouring_pairs(self):
        return statdp_pairs(self.k)


@dataclass(frozen=True)
class ReportNoisyMax(_AnswerMechanism):
    """argmax (or max) of q + Lap(2 / eps) over k answers: claims eps-DP.

    ``returns="index"``: Report Noisy Max (eps-DP). ``returns="value"``: the noisy
    maximum value, the published bug (true epsilon k eps / 2, module docstring).
    """

    eps: float = 1.0
    returns: str = "index"
    k: int = 5
    name: str = "report-noisy-max"

    def __post_init__(self):
        check_epsilon(self.eps, "eps")
        check_count(self.k, "k")
        if self.returns not in ("index", "value"):
            raise ValueError(f"returns must be 'index' or 'value', got {self.returns!r}")

    @property
    def claim(self):
        return PrivacyClaim(self.eps, 0.0, "add-remove")

    @property
    def literature(self):
        if self.returns == "index":
            return Literature(True, None, "Dwork & Roth 2014 Sec. 3.3 (Lap(2/eps) for "
                              "non-monotone queries); DP-Sniper ReportNoisyMax1", 0.092, 0.092)
        return Literature(False, self.k * self.eps / 2, "Ding et al. 2018 noisy_max_v1b; "
                          "DP-Sniper ReportNoisyMax3", 0.248, 0.199)

    def release(self, data, rng, n):
        noisy = self.query(data) + rng.laplace(0.0, 2 / self.eps, (n, self.k))
        if self.returns == "index":
            return np.argmax(noisy, axis=1)[:, None].astype(float)
        return noisy.max(axis=1, keepdims=True)


# --------------------------------------------------------------------------- SVT


@dataclass(frozen=True)
class SparseVectorTechnique(_AnswerMechanism):
    """Lyu, Su, Li (2017)'s Algorithm ``alg`` (1 to 6) of the sparse vector technique.

    Parameters
    ----------
    alg : int
        1 to 6 (module docstring's table).
    eps : float
        The claimed epsilon.
    k : int
        Number of queries (answers).
    c : int
        Cutoff (positive answers before the algorithm halts; Alg. 5 and 6 never halt).
    threshold : float
        T.

    Outputs (n, k): 1 positive, 0 negative, -1 not answered (after the cutoff);
    Alg. 3 releases (n, 2k): those codes and, for each positive answer, the noisy
    answer q_i + nu_i (0 elsewhere).
    """

    alg: int = 1
    eps: float = 1.0
    k: int = 10
    c: int = 1
    threshold: float = 1.0
    name: str = "svt"

    def __post_init__(self):
        if self.alg not in range(1, 7):
            raise ValueError(f"alg must be one of Lyu et al.'s Algorithms 1 to 6, got {self.alg!r}")
        check_epsilon(self.eps, "eps")
        check_count(self.k, "k")
        check_count(self.c, "c")
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold must be finite, got {self.threshold!r}")

    @property
    def claim(self):
        return PrivacyClaim(self.eps, 0.0, "add-remove")

    @property
    def literature(self):
        published = {1: (0.086, 0.030), 2: (0.086, 0.032), 3: (0.172, 0.023),
                     4: (0.169, 0.171), 5: (1.761, 14.314), 6: (0.272, 0.322)}[self.alg]
        true = {1: None, 2: None, 3: math.inf, 4: (1 + 6 * self.c) / 4 * self.eps,
                5: math.inf, 6: math.inf}[self.alg]
        source = {1: "Lyu et al. 2017", 2: "Dwork & Roth 2014", 3: "Roth 2011 lecture notes",
                  4: "Lee & Clifton 2014", 5: "Stoddard et al. 2014", 6: "Chen et al. 2015"}
        return Literature(self.alg in (1, 2), true,
                          f"Lyu, Su, Li 2017, Alg. {self.alg} ({source[self.alg]})", *published)

    def _scales(self):
        """(rho scale, nu scale, halts) for Delta = 1."""
        eps, c = self.eps, self.c
        eps1 = eps / 4 if self.alg == 4 else eps / 2
        eps2 = eps - eps1
        return {1: (1 / eps1, 2 * c / eps2, True), 2: (c / eps1, 2 * c / eps1, True),
                3: (1 / eps1, c / eps2, True), 4: (1 / eps1, 1 / eps2, True),
                5: (1 / eps1, 0.0, False), 6: (1 / eps1, 1 / eps2, False)}[self.alg]

    def release(self, data, rng, n):
        q = self.query(data)
        rho_scale, nu_scale, halts = self._scales()
        rho = rng.laplace(0.0, rho_scale, n)
        nu = rng.laplace(0.0, nu_scale, (n, self.k)) if nu_scale > 0 else np.zeros((n, self.k))
        noisy = q + nu
        if self.alg == 2:  # rho redrawn after every positive answer: one query at a time
            state = np.empty((n, self.k))
            count = np.zeros(n, dtype=int)
            for i in range(self.k):
                active = count < self.c
                above = noisy[:, i] >= self.threshold + rho
                state[:, i] = np.where(active, above, -1)
                hit = active & above
                count += hit
                rho = np.where(hit, rng.laplace(0.0, rho_scale, n), rho)
        else:
            above = noisy >= self.threshold + rho[:, None]
            state = above.astype(float)
            if halts:
                before = np.cumsum(above, axis=1) - above  # positives strictly before i
                state = np.where(before < self.c, state, -1.0)
        if self.alg == 3:
            return np.hstack([state, np.where(state == 1, noisy, 0.0)])
        return state


# --------------------------------------------------------------------------- Gaussian


@dataclass(frozen=True)
class ClippedSumGaussian:
    """Sum of records in the L2 ball of radius C plus N(0, (sigma * calibration)^2 I).

    The claim is replace-one: (eps(sigma), delta) with eps(sigma) the exact epsilon
    of the Gaussian mechanism (Balle & Wang 2018) at noise multiplier sigma relative
    to the replace-one sensitivity 2C. ``calibration="replace-one"`` uses noise
    std 2 C sigma (correct); ``"add-remove"`` uses C sigma, the add-remove
    sensitivity (the bug: its true epsilon is eps(sigma / 2)).
    """

    sigma: float = 2.0
    delta: float = 1e-5
    clipping_norm: float = 1.0
    calibration: str = "replace-one"
    name: str = "clipped-sum-gaussian"

    def __post_init__(self):
        check_positive(self.sigma, "sigma")
        check_positive(self.clipping_norm, "clipping_norm")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta!r}")
        if self.calibration not in RELATIONS:
            raise ValueError(f"calibration must be 'replace-one' or 'add-remove', got "
                             f"{self.calibration!r}")

    @property
    def domain(self):
        return Ball(self.clipping_norm, 2, (2,))

    @property
    def data(self):
        return np.tile([[0.5 * self.clipping_norm, 0.0]], (4, 1))

    @property
    def claim(self):
        eps = dp_accounting.get_epsilon_gaussian(self.sigma, self.delta)
        return PrivacyClaim(eps, self.delta, "replace-one",
                            dp_accounting.GaussianDpEvent(self.sigma))

    @property
    def sensitivity(self):
        return Sensitivity(2 * self.clipping_norm, 2)

    @property
    def noise_std(self) -> float:
        scale = 2 if self.calibration == "replace-one" else 1
        return self.sigma * scale * self.clipping_norm

    @property
    def literature(self):
        ok = self.calibration == "replace-one"
        true = dp_accounting.get_epsilon_gaussian(self.sigma if ok else self.sigma / 2,
                                                  self.delta)
        return Literature(ok, float(true), "Balle & Wang 2018 (exact Gaussian epsilon); the "
                          "add-remove sensitivity under a replace-one claim")

    def query(self, data):
        return _sum_query(data)

    def neighbouring_pairs(self):
        c = self.clipping_norm
        d0 = self.data.copy()
        d0[0] = [-c, 0.0]
        d1 = self.data.copy()
        d1[0] = [c, 0.0]
        return [NeighbouringPair(d0, d1, "replace-one", "replace a record by its antipode")]

    def release(self, data, rng, n):
        q = self.query(data)
        return q + self.noise_std * rng.standard_normal((n, q.size))


# --------------------------------------------------------------------------- the zoo


def laplace():
    """The Laplace mechanism, eps = 1 (correct)."""
    return LaplaceMechanism(name="laplace")


def laplace_half_scale():
    """The Laplace mechanism at half the scale its eps = 1 claim needs (incorrect)."""
    return LaplaceMechanism(scale_factor=0.5, name="laplace-half-scale")


def report_noisy_max_index():
    """Report Noisy Max, Lap(2 / eps), returning the index, eps = 1 (correct)."""
    return ReportNoisyMax(returns="index", name="report-noisy-max-index")


def report_noisy_max_value():
    """Report Noisy Max, Lap(2 / eps), returning the noisy maximum value (incorrect)."""
    return ReportNoisyMax(returns="value", name="report-noisy-max-value")


def noisy_histogram():
    """The noisy histogram with Lap(1 / eps), eps = 1 (correct)."""
    return NoisyHistogram(noise="1/eps", name="noisy-histogram")


def noisy_histogram_scale_eps():
    """The noisy histogram with Lap(eps) instead of Lap(1 / eps), eps = 0.5 (incorrect)."""
    return NoisyHistogram(eps=0.5, noise="eps", name="noisy-histogram-scale-eps")


def _svt(alg: int, threshold: float = 1.0):
    return SparseVectorTechnique(alg=alg, threshold=threshold, name=f"svt-alg{alg}")


def svt_alg1():
    """Lyu et al.'s Algorithm 1, eps = 1, c = 1, T = 0.5, 10 queries (correct)."""
    return _svt(1, threshold=0.5)


def svt_alg2():
    """Lyu et al.'s Algorithm 2 (Dwork & Roth), eps = 1, c = 1, T = 1 (correct)."""
    return _svt(2)


def svt_alg3():
    """Lyu et al.'s Algorithm 3 (Roth 2011): outputs the noisy answers (incorrect)."""
    return _svt(3)


def svt_alg4():
    """Lyu et al.'s Algorithm 4 (Lee & Clifton 2014): ((1 + 6c) / 4) eps-DP (incorrect)."""
    return _svt(4)


def svt_alg5():
    """Lyu et al.'s Algorithm 5 (Stoddard et al. 2014): no query noise (incorrect)."""
    return _svt(5)


def svt_alg6():
    """Lyu et al.'s Algorithm 6 (Chen et al. 2015): no cutoff (incorrect)."""
    return _svt(6)


def gaussian_replace_one():
    """The clipped-sum Gaussian calibrated to the replace-one sensitivity 2C (correct)."""
    return ClippedSumGaussian(calibration="replace-one", name="gaussian-replace-one")


def gaussian_add_remove_calibrated():
    """The clipped-sum Gaussian calibrated to the add-remove sensitivity C under a
    replace-one claim (incorrect)."""
    return ClippedSumGaussian(calibration="add-remove", name="gaussian-add-remove-calibrated")


ZOO = {f.__name__: f for f in (
    laplace, laplace_half_scale, report_noisy_max_index, report_noisy_max_value,
    noisy_histogram, noisy_histogram_scale_eps, svt_alg1, svt_alg2, svt_alg3, svt_alg4,
    svt_alg5, svt_alg6, gaussian_replace_one, gaussian_add_remove_calibrated)}
"""Every zoo mechanism by its factory's name (``dpclaims check-variant
dpclaims.mechanisms:NAME``)."""
