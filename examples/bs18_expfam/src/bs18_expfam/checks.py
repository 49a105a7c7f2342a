"""The checks: each turns a claim of :mod:`bs18_expfam.claims` into verdicts through
dpclaims' verdict kernel (``decide``, ``decide_all``, ``audit_verdict``), never by hand.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import dp_accounting
import numpy as np

from bs18_expfam import model
from bs18_expfam.claims import ADD_REMOVE, REPLACE_ONE
from dpclaims.plugin import (
    Bound,
    Claimed,
    Direction,
    Part,
    PrivacyClaim,
    Reading,
    ReadingKind,
    account_event,
    add_one,
    audit,
    audit_verdict,
    clopper_pearson,
    decide,
    decide_all,
    epsilon_bounds,
    rng_for,
    seed_sequence,
)

EPSILON = 0.1  # driver.py: epsilon = .1
CODE_N = 1000  # driver.py: N = 1e3
NOMINAL = 0.9
ALPHA = 0.05   # every Monte Carlo or audit certificate here holds at 95 %


# --------------------------------------------------------------------------- sensitivity
def exact_sensitivity(statistic, domain, relation: str) -> tuple[float, str]:
    """The exact L1 sensitivity of a SUM statistic over a finite record domain.

    Adding or removing a record x changes a sum by statistic(x); replacing x by x'
    changes it by statistic(x') - statistic(x), whatever the rest of the data. So the
    maximum over the domain (add-remove) or over its pairs (replace-one) is the exact
    sensitivity: a certified value, both a lower and an upper bound.
    """
    if relation == "add-remove":
        values = [np.abs(statistic(x)).sum() for x in domain]
        return float(max(values)), f"max over the {len(domain)} records of |s(x)|_1"
    values = [np.abs(statistic(b) - statistic(a)).sum()
              for a, b in itertools.permutations(domain, 2)]
    return float(max(values)), f"max over the {len(values)} ordered record pairs"


def one_hot_statistic(k):
    return lambda x: model.multinomial_statistics([x], k)


def check_sensitivity(claim, statistic, domain, seed: int) -> list:
    out = []
    for reading, relation in ((ADD_REMOVE, "add-remove"), (REPLACE_ONE, "replace-one")):
        value, how = exact_sensitivity(statistic, domain, relation)
        source = f"exact, {how} (a sum statistic: {relation})"
        b = Bound(value, source, basis="exact")
        out.append(decide(claim, reading, Claimed("L1 sensitivity", model.CODE_SENSITIVITY),
                          lower=b, upper=b, evidence={"relation": relation,
                                                      "exact_sensitivity": value},
                          seed=seed))
    return out


# ------------------------------------------------------------------------------ privacy
def check_release_privacy(claim, seed: int) -> list:
    """The Laplace release's epsilon at the exact add-remove sensitivity."""
    true_sens, _ = exact_sensitivity(lambda x: np.array([float(x)]), (0, 1), "add-remove")
    multiplier = (model.CODE_SENSITIVITY / EPSILON) / true_sens  # scale over sensitivity
    res = account_event(dp_accounting.LaplaceDpEvent(multiplier), 0.0, "add-remove",
                        query="general")
    claimed = Claimed("epsilon", EPSILON)
    lower, upper, res = epsilon_bounds(res, claimed, f"Laplace, scale {1 / EPSILON:g}, "
                                                     f"L1 sensitivity {true_sens:g}")
    return [decide(claim, ADD_REMOVE, claimed, lower=lower, upper=upper,
                   context="Every reported computation is post-processing of y.",
                   evidence={"accounting": res.to_dict()}, seed=seed)]


@dataclass
class LaplaceRelease:
    """A dpclaims mechanism (``name``, ``claim``, ``release``): the code's release of
    a statistic of the data plus Laplace(1 / epsilon) noise, shared or independent
    across coordinates (:func:`bs18_expfam.model.laplace_release`)."""

    name: str
    statistic: object
    shared: bool = False
    claim: PrivacyClaim = PrivacyClaim(EPSILON, 0.0, "add-remove")

    def release(self, data, rng, n):
        return model.laplace_release(self.statistic(data), EPSILON, rng, n, self.shared)


def _fair_affairs() -> np.ndarray:
    """statsmodels' fair data (6,366 women): 1 for a reported affair, 0 for none."""
    from statsmodels.datasets import fair

    return (fair.load_pandas().data["affairs"].to_numpy() > 0).astype(float)


def check_bernoulli_audit(claim, trials: int, seed: int) -> list:
    data = _fair_affairs()
    mech = LaplaceRelease("Beta-Bernoulli release", model.bernoulli_statistic)
    pair = add_one(data, 1.0)
    r = audit(mech, pair, trials, alpha=ALPHA, seed=seed)
    return [audit_verdict(claim, ADD_REMOVE, r, evidence={
        "data": f"statsmodels fair, {data.size} records, {int(data.sum())} ones"}, seed=seed)]


def check_multinomial_audit(claim, trials: int, seed: int) -> list:
    rng = rng_for(seed, "bs18", "multinomial data")
    data = rng.choice(3, size=CODE_N, p=rng.dirichlet([5.0, 5.0, 5.0]))  # the code's prior
    pair = add_one(data, 0)  # one more record of the first category
    out = []
    for shared, reading in ((True, ADD_REMOVE.joined(
            "the released driver: one Laplace draw added to every count", ", ")),
                            (False, Reading(
                                "independent noise per count (the Gibbs sampler's diagonal "
                                "noise model)", ReadingKind.CORRECTION))):
        mech = LaplaceRelease("Dirichlet-Multinomial release", model.multinomial_statistics,
                              shared=shared)
        r = audit(mech, pair, trials, alpha=ALPHA, seed=seed,
                  score=lambda out: out[:, 0] - out[:, 1])
        out.append(audit_verdict(claim, reading, r, evidence={
            "counts": model.multinomial_statistics(data).tolist(), "shared_noise": shared},
            context=("With one noise value on every count, y1 - y2 = s1 - s2 exactly: the "
                     "difference of the counts is released without noise." if shared else
                     ""), seed=seed))
    return out


# -------------------------------------------------------------------------- calibration
def _bracket(hits: int, n: int, alpha: float) -> tuple[float, float]:
    lo, hi = clopper_pearson(hits, n, alpha)
    return float(lo), float(hi)


def check_calibration(claims, settings, levels, trials: int, burnin: int, iterations: int,
                      seed: int) -> list:
    studies = {}
    for n_records, eps in settings:
        rng = rng_for(seed, "bs18", "calibration", n_records, f"{eps:g}")
        studies[(n_records, eps)] = model.coverage_study(
            n_records, eps, trials, levels, rng, burnin=burnin, iterations=iterations)
    k = len(settings) * len(levels)
    parts, table = [], []
    for (n_records, eps), st in studies.items():
        for level in levels:
            hits = st["hits"]["noise-aware"][level]
            lo, hi = _bracket(hits, trials, ALPHA / k)
            src = (f"Clopper-Pearson, {trials} trials, N = {n_records}, epsilon = {eps:g}, "
                   f"Bonferroni over {k}")
            parts.append(Part(f"N = {n_records}, epsilon = {eps:g}, {level:.0%} interval",
                              Claimed(f"coverage of the {level:.0%} interval", level,
                                      Direction.EQUALS),
                              Bound(lo, src, confidence=1 - ALPHA, basis="finite-sample"),
                              Bound(hi, src, confidence=1 - ALPHA, basis="finite-sample")))
            table.append({"N": n_records, "epsilon": eps, "level": level, **{
                m: st["hits"][m][level] / trials for m in st["hits"]}})
    sampler = (f"the code's Gibbs sampler, {burnin} burn-in and {iterations} kept iterations"
               + ("" if (burnin, iterations) == (model.BURNIN, model.ITERATIONS) else
                  f" (the code: {model.BURNIN} and {model.ITERATIONS}; reduced by the budget)"))
    verdicts = [decide_all(
        claims["calibrated"], "coverage = nominal, theta drawn from the prior Beta(10, 10)",
        parts, context=(f"{sampler}. Calibration is an equality: a certified bracket can "
                        "exclude the nominal level (refuted) but never equal it, so the best "
                        "a calibrated method can get is inconclusive with a narrow bracket."),
        evidence={"coverage": table, "trials": trials}, seed=seed)]
    st = studies[(CODE_N, EPSILON)]
    hits = st["hits"]["naive"][NOMINAL]
    lo, hi = _bracket(hits, trials, ALPHA)
    src = f"Clopper-Pearson, {trials} trials, N = {CODE_N}, epsilon = {EPSILON:g}"
    verdicts.append(decide(
        claims["naive"], "naive coverage below nominal at the code's setting",
        Claimed(f"naive coverage of the {NOMINAL:.0%} interval", NOMINAL, Direction.AT_MOST),
        lower=Bound(lo, src, confidence=1 - ALPHA, basis="finite-sample"),
        upper=Bound(hi, src, confidence=1 - ALPHA, basis="finite-sample"),
        context="The claim is that the naive posterior is NOT calibrated: it holds when its "
                "coverage is certified below the nominal level.",
        evidence={"coverage": hits / trials, "trials": trials}, seed=seed))
    return verdicts, table


def seed_of(seed: int, name: str) -> int:
    """A check's own seed from the root seed and its name (stable across runs)."""
    return int(seed_sequence(seed, "bs18", name).generate_state(1)[0])
