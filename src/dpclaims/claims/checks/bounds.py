"""Results of the framework's tools as the verdict kernel's bounds.

Each tool gives its result in its own type: an accounting result, a property
test's search, an audit's Clopper-Pearson certificate. This module says, once, what
each certifies about the true quantity, as :class:`~dpclaims.claims.kernel.Bound`
values, and hands them to the kernel (:mod:`dpclaims.claims.kernel`), which decides:

* an **accounting** (:func:`epsilon_bounds`): the smallest certified upper bound and
  the largest certified lower bound over the accountants' rows
  (:attr:`~dpclaims.analysis.accounting.AccountingResult.upper_bound`,
  ``lower_bound``), the optimistic PLD refined toward the claim when needed;
* a **property test** (:func:`search_verdict`): the largest distance found is a
  certified lower bound on the true sensitivity (a real pair, less its rounding
  allowance when it is a violation); a search gives no upper bound, so a sensitivity
  that survives it is inconclusive, never holds;
* an **audit** (:func:`audit_verdict`): the Clopper-Pearson certificate is a lower
  bound on epsilon at confidence 1 - alpha; no upper bound, so an audit can only
  refute. An audit too small to certify anything above the claim (its capacity,
  :func:`audit_capacity`: even an attack without a single error on its held-out
  trials would stay at or below the claim) could not have refuted it whatever the
  mechanism: nothing was checked, ``not-checkable`` with that reason (exit 3 under
  ``check-variant``). An audit that could have refuted but whose certificate is 0
  is inconclusive with that reason.
* a **one-run audit** (:func:`one_run_verdict`): the one-run certificate
  (:mod:`dpclaims.audits.one_run`) is a lower bound on epsilon at confidence 1 - alpha,
  with the same capacity rule as an audit;
* a **Monte Carlo mean** (:func:`mean_bounds`): the ends of a
  :class:`~dpclaims.analysis.mean_bounds.MeanInterval`, finite-sample (they decide) or
  asymptotic (shown as "approx.", never deciding), each at confidence 1 - alpha.
"""

from __future__ import annotations

import math

from dpclaims.analysis import accounting as acc
from dpclaims.analysis.mean_bounds import MeanInterval
from dpclaims.audits.core import AuditResult, epsilon_lower_bound
from dpclaims.audits.one_run import OneRunAudit
from dpclaims.claims.core import RUN_SEED, Claim, Verdict
from dpclaims.claims.kernel import (
    Bound,
    Claimed,
    Estimate,
    best_lower,
    decide,
    not_checkable,
    undecided,
)
from dpclaims.property_tests.sensitivity import SensitivityCheck


def epsilon_bounds(result: acc.AccountingResult, claimed: Claimed, what: str, *,
                   lower: bool = True) -> tuple[Bound | None, Bound | None,
                                                acc.AccountingResult]:
    """Certified bounds on the true epsilon from an accounting result: (lower, upper,
    the result after any refinement).

    When the upper end lies above the claim and the lower end does not, the optimistic
    PLD is refined toward the claim (:func:`~dpclaims.analysis.accounting.refine_lower_bound`)
    so that a claim below the true epsilon can be refuted. ``lower=False`` drops the
    lower end (an accounting that is only an upper bound under the reading, e.g. the
    per-epoch composition for a hidden shuffle). ``what`` names the event in the
    bounds' sources ("poisson, add-remove, 14063 steps, delta 1e-05").
    """
    if (lower and result.upper_bound is not None and result.upper_bound[1] > claimed.high
            and (result.lower_bound is None or result.lower_bound[1] <= claimed.high)):
        result = acc.refine_lower_bound(result, claimed.high)
    lo = hi = None
    if lower and result.lower_bound is not None:
        lo = Bound(result.lower_bound[1], f"{result.lower_bound[0]} ({what})", basis="exact")
    if result.upper_bound is not None:
        hi = Bound(result.upper_bound[1], f"{result.upper_bound[0]} ({what})", basis="exact")
    return lo, hi, result


def mean_bounds(interval: MeanInterval, source: str = "") -> tuple[Bound | None,
                                                                   Bound | None]:
    """The kernel's bounds on a true mean (or ratio of means) from a confidence interval:
    (lower, upper).

    Each end is a :class:`~dpclaims.claims.kernel.Bound` with the interval's basis
    ("finite-sample" decides, "asymptotic" never does) and confidence 1 - alpha (for a
    two-sided interval, the joint confidence of the pair, as for every joint interval in
    the suite). An end that is not a bound (a one-sided interval's other end) or is
    infinite is None.

    Parameters
    ----------
    interval : MeanInterval
        From :func:`~dpclaims.analysis.mean_bounds.mean_interval`,
        :func:`~dpclaims.analysis.mean_bounds.mean_ratio_interval` or
        :func:`~dpclaims.analysis.mean_bounds.mean_interval_asymptotic`.
    source : str
        What the mean is of ("test MSE of DP-SEP over 300 seeds"); the interval's method
        is appended.
    """
    where = f"{source}: {interval.method}" if source else interval.method
    confidence = 1.0 - interval.alpha
    lower = upper = None
    if interval.side in ("two-sided", "lower") and math.isfinite(interval.low):
        lower = Bound(interval.low, where, confidence=confidence, basis=interval.basis)
    if interval.side in ("two-sided", "upper") and math.isfinite(interval.high):
        upper = Bound(interval.high, where, confidence=confidence, basis=interval.basis)
    return lower, upper


def search_verdict(claim: Claim, reading: str, res: SensitivityCheck, *, quantity: str,
                   pairs: str, context: str = "", evidence: dict | None = None,
                   seed: int | None = RUN_SEED, budget: str | None = None,
                   text_reading: bool | None = None, upper: Bound | None = None,
                   lower: Bound | None = None) -> Verdict:
    """The verdict of a claimed bound (``quantity <= res.claimed``) tested by a search.

    Every pair tried is real, so the largest distance seen, less its rounding allowance
    (:attr:`SensitivityCheck.max_certified_ratio`), is a certified lower bound: above the
    claim (a violation) it refutes; otherwise, without ``upper``, no upper bound exists
    and the verdict is inconclusive, with the search's size. ``pairs`` describes what was
    searched ("300 replace-one pairs around `data`").

    ``upper`` (and ``lower``): certified bounds on the same quantity from another tool
    (an interval branch and bound over the record domain,
    :mod:`dpclaims.analysis.enclosures`): the bracket is the larger of the two lower
    ends and ``upper``, so the claim can hold.
    """
    claimed = Claimed(quantity, res.claimed)
    # every pair tried is a real pair: the largest distance, less its rounding allowance,
    # is a certified lower bound (at least the shrunk counterexample's)
    found = Bound(res.claimed * res.max_certified_ratio,
                  f"the largest distance among {res.n_examples} {pairs} (rounding allowance "
                  "deducted" + ("; a shrunk counterexample is in the evidence)" if res.violated
                                else ")"), basis="exact")
    if lower is not None or upper is not None:
        evidence = {**(evidence or {}), "search_lower": found.to_dict()}
    lower = best_lower(found, lower)
    text = context
    if not res.violated:
        text = (f"No counterexample in {res.n_examples} {pairs}"
                + (": a search refutes a bound but cannot certify one." if upper is None
                   else " (the search's lower end).")
                + f" {context}").strip()
    return decide(claim, reading, claimed, lower=lower, upper=upper, context=text,
                  evidence=evidence, seed=seed, budget=budget, text_reading=text_reading)


def audit_capacity(r: AuditResult) -> float:
    """The largest certificate ``r``'s audit could have given: an attack with no error on
    its held-out trials, at the same Bonferroni split of alpha (nats)."""
    return float(epsilon_lower_bound(0, r.n_held_out, 0, r.n_held_out, r.delta,
                                     r.alpha / max(1, r.n_thresholds)))


def audit_verdict(claim: Claim, reading: str, r: AuditResult, *, quantity: str = "epsilon",
                  source: str = "", context: str = "", evidence: dict | None = None,
                  seed: int | None = RUN_SEED, budget: str | None = None,
                  figures=(), text_reading: bool | None = None) -> Verdict:
    """The verdict of a privacy claim from an audit's certificate (module docstring).

    ``source`` names the audit in the sentence (default: trials, score and pair);
    ``context`` is appended. The estimates (GDP, credible bound) are shown, never used.
    """
    claimed = Claimed(quantity, r.claimed_epsilon)
    where = source or (f"Clopper-Pearson audit, {r.n_trials} trials per dataset, score "
                       f"{r.score_name}, pair '{r.pair.get('description', '')}'")
    estimates = [Estimate(r.epsilon_credible_lower, "credible lower bound")]
    if r.epsilon_gdp_estimate is not None:
        estimates.insert(0, Estimate(r.epsilon_gdp_estimate, "GDP fit"))
    estimates.append(Estimate(r.auroc, "AUROC"))
    capacity = audit_capacity(r)
    too_small = (f"an audit large enough to refute the claimed {quantity} "
                 f"{r.claimed_epsilon:.4g}: the audit is too small to certify anything above "
                 f"it, as with {r.n_held_out} held-out trials per dataset even an attack "
                 f"without a single error would certify only {capacity:.4g} at "
                 f"{1 - r.alpha:.0%} confidence (certificate {r.epsilon_lower_bound:.4g}); "
                 "give more trials")
    zero = (f"the audit's certificate is 0 ({where}): the attack separated the two datasets "
            f"no better than the confidence level allows, so it says nothing about the "
            f"claimed {quantity} {r.claimed_epsilon:.4g}; an audit can refute privacy, "
            "never prove it.")
    return _certificate_verdict(claim, reading, claimed, r.epsilon_lower_bound, r.alpha,
                                capacity, where, too_small, zero,
                                "An audit can refute privacy but not prove it.",
                                context=context, estimates=estimates, evidence=evidence,
                                seed=seed, budget=budget, figures=figures,
                                text_reading=text_reading)


def _certificate_verdict(claim, reading, claimed: Claimed, value: float, alpha: float,
                         capacity: float, where: str, too_small: str, zero: str,
                         caveat: str, *, context, estimates, evidence, seed, budget=None,
                         figures=(), text_reading=None) -> Verdict:
    """An audit-like certificate (a lower bound ``value`` at 1 - alpha, no upper bound) to
    a verdict: not-checkable with ``too_small`` when ``capacity`` (the most the audit could
    certify) is not above the claim, undecided with ``zero`` at a certificate of 0, else
    the kernel's decision (``caveat`` prefixed when the bound does not refute)."""
    ev = dict(evidence or {})
    ev.setdefault("audit_capacity", capacity)
    if capacity <= claimed.high:
        # an audit can only refute; this one could not have, whatever the mechanism did
        return not_checkable(claim, reading, too_small, context=context, evidence=ev,
                             seed=seed, budget=budget, text_reading=text_reading)
    if value <= 0:
        return undecided(claim, reading, zero, context=context, estimates=estimates,
                         evidence=ev, seed=seed, budget=budget, figures=figures,
                         text_reading=text_reading)
    lower = Bound(value, where, confidence=1 - alpha, basis="finite-sample")
    text = context
    if value <= claimed.high:
        text = (caveat + " " + context).strip()
    return decide(claim, reading, claimed, lower=lower, upper=None, context=text,
                  estimates=estimates, evidence=ev, seed=seed, budget=budget,
                  figures=figures, text_reading=text_reading)


def one_run_verdict(claim: Claim, reading: str, a: OneRunAudit, *, source: str = "",
                    context: str = "", evidence: dict | None = None,
                    seed: int | None = RUN_SEED) -> Verdict:
    """The verdict of a privacy claim from a one-run audit's certificate
    (:mod:`dpclaims.audits.one_run`): the certified epsilon lower bound at 1 - alpha
    (finite-sample; Steinke et al.'s Thm. 5.2, and the f-DP analysis only for a Gaussian-DP
    claim), never an upper bound. ``not-checkable`` when even a guesser that is right every
    time could not certify above the claim (the audit's capacity); the f-DP value of a
    claim that is not Gaussian-DP is shown as an estimate.
    """
    cert = a.certificate
    claimed = Claimed("epsilon", a.claimed_epsilon)
    row = cert.row(0, a.runs)
    where = source or (f"one-run audit, {cert.canaries} canaries"
                       + (f" over {a.runs} runs" if a.runs > 1 else "")
                       + f", {cert.n_tests} tests at alpha / {cert.n_tests}")
    estimates = []
    if "f_dp" in row and row["f_dp"]["role"] == "estimate":
        estimates.append(Estimate(row["f_dp"]["epsilon"], "f-DP (GDP) one-run value; the "
                                  "claim is not Gaussian-DP"))
    capacity = a.capacity()
    too_small = (f"a one-run audit with more canaries: with {cert.canaries} canaries even a "
                 f"guesser right every time would certify only {capacity:.4g} at "
                 f"{1 - cert.alpha:.0%} confidence, not above the claimed epsilon "
                 f"{a.claimed_epsilon:.4g}")
    zero = (f"the one-run certificate is 0 ({where}): the guesses were no better than the "
            f"confidence level allows, so it says nothing about the claimed epsilon "
            f"{a.claimed_epsilon:.4g}; an audit can refute privacy, never prove it.")
    return _certificate_verdict(
        claim, reading, claimed, a.epsilon_lower_bound, cert.alpha, capacity, where,
        too_small, zero, "A one-run audit can refute privacy but not prove it, and its bound "
        "is far from tight at small epsilon.", context=context, estimates=estimates,
        evidence={**(evidence or {}), "one_run": a.to_dict()}, seed=seed)
