"""A reported privacy number recomputed side by side by every accountant.

Each :class:`~dpclaims.claims.reported.ReportedPrivacy` entry (a paper's own, e.g.
:mod:`dpclaims.papers.vips.privacy_numbers`, or one from a claims file) becomes a claim
checked by :func:`check_reported`:

1. **The paper's accounting.** For every combination of the stated (or, where
   unstated, plausible) delta, noise multiplier and step count, epsilon is
   recomputed by every accountant (:func:`~dpclaims.analysis.accounting.account`)
   under the sampling and neighbouring relation the paper's accountant assumed. A
   combination *reproduces* the reported epsilon when an accountant's value rounds
   to the number as printed (it lies in what the printed number stands for, e.g.
   [2.375, 2.385] for "2.38"); the nearest value is recorded either way. Where the
   paper states no sigma, sigma is calibrated to the reported epsilon with the
   paper's accountant (autodp for papers that say they used autodp / Wang et al.
   2019, dp_accounting RDP otherwise): the number is then reproduced by construction
   and the question becomes what that sigma really gives.
2. **The sampling the algorithm really performs.** The same sigma and steps are
   accounted for the algorithm's real sampling, under the paper's relation. For a
   shuffled or fixed-order pass that is the composition of one unamplified Gaussian per
   epoch, exact for an adversary who knows the order (``analytic-gaussian``) and only
   an upper bound for a hidden order. For sampling without replacement (fixed-size
   batches) under replace-one the RDP rows (autodp, dp_accounting) are upper bounds;
   under add-remove every row accounts the Poisson pair of
   :func:`~dpclaims.analysis.accounting.fixed_size_add_remove_event` (rate B / N, half
   the noise multiplier), a dominating pair that is attained: RDP and pessimistic PLD
   rows are upper bounds, the optimistic PLD a lower bound. Beside them the same noise
   accounted as replace-one fixed-size batches (sigma / 2 relative to 2C) is shown as
   evidence (``real_sampling_replace_one``), never deciding an add-remove claim.
3. **Under each relation.** The sigma needed for the reported epsilon under
   replace-one and under add-remove (same sampling), as evidence.

Verdicts
--------
Every verdict comes from the verdict kernel (:func:`dpclaims.claims.kernel.decide`)
on a certified bracket of the true epsilon: the upper end the smallest certified
upper bound of any accountant (RDP conversions, the pessimistic PLD, the moments
accountant, the exact Gaussian's bracket), the lower end the largest certified lower
bound (the optimistic PLD, refined by halving its interval when the claim lies inside
the bracket; the exact Gaussian's bracket). *holds* when the upper end is at most the
reported epsilon (read at its printed precision), *refuted* when the lower end
exceeds it, *inconclusive* otherwise; no relative tolerance.

Readings: where the algorithm samples as the paper's accountant assumed, one
reading, ``as-reported``. Where it does not, the claim is read under the paper's
own accounting (``paper's accounting: <sampling>``: is the accounted mechanism as
private as stated?) and under the sampling performed (``real sampling: ...``); a
shuffled pass under two readings, the order known to the adversary (exact
composition, a stronger threat model than the paper's, shown but never deciding)
and hidden (only an upper bound). A reading whose parameters the paper does not
all state (delta, the step count, or sigma for the paper's accounting) is
inconclusive, naming what is missing and which plausible values reproduce the
number; so is a real-sampling reading whose sigma is unstated and whose paper used an
accountant the suite does not run (strong composition): the calibrated sigma is then a
stand-in. ``not-checkable``: N, B, delta or the step count is missing with no
plausible value, or the reading is the paper's own accounting and sigma is unstated
(calibrated to the reported number, it reproduces it by construction).
"""

from __future__ import annotations

import itertools

from dpclaims.analysis import accounting as acc
from dpclaims.analysis.vocabulary import RELATIONS
from dpclaims.claims import Reading, ReadingKind, Verdict, ran_on
from dpclaims.claims.checks.bounds import epsilon_bounds
from dpclaims.claims.kernel import Claimed, decide, not_checkable, undecided
from dpclaims.claims.reported import ReportedPrivacy


def _plan(entry: ReportedPrivacy, kind: str, steps: int) -> acc.Sampling:
    batch = entry.batch_size
    if kind == "none":
        return acc.Sampling("none", entry.dataset_size, steps=steps)
    return acc.Sampling(kind, entry.dataset_size, batch_size=batch, steps=steps)


# The suite's accountant that stands for a paper's, by what its accounting text names
# (first match wins). A text naming none of them (strong composition, or nothing) has no
# counterpart here: a sigma calibrated for it is only a stand-in.
_PAPER_ACCOUNTANTS = (
    (("autodp", "auto-dp", "wang et al"), "autodp-rdp"),
    (("pld", "privacy loss distribution", "fourier"), "dp_accounting-pld"),
    (("moments accountant", "moments account", "rdp", "renyi", "rényi"), "dp_accounting-rdp"),
)


def _paper_accountant(entry: ReportedPrivacy) -> str | None:
    """The suite's accountant for the paper's own procedure, or None when the paper used
    one the suite does not run."""
    text = entry.paper_accounting.lower()
    return next((name for keys, name in _PAPER_ACCOUNTANTS if any(k in text for k in keys)),
                None)


def _calibration_accountant(entry: ReportedPrivacy) -> str:
    """The accountant sigma is calibrated with when the paper states none: the paper's
    own (:func:`_paper_accountant`), else dp_accounting's RDP as a stand-in."""
    return _paper_accountant(entry) or "dp_accounting-rdp"


def _rows(result: acc.AccountingResult) -> dict:
    """Supported rows by name: {name: epsilon} (evidence; the bounds are in the basis)."""
    return {r.name: r.epsilon for r in result.rows if r.epsilon is not None}


def _what(kind: str, relation: str, steps: int, delta: float) -> str:
    return f"{kind}, {relation}, {steps} steps, delta {delta:g}"


def check_reported(entry: ReportedPrivacy, seed: int | None = None) -> list[Verdict]:
    """Recompute ``entry`` with every accountant; return its verdicts (module docstring).

    One verdict when the algorithm samples as the paper's accountant assumed; else
    one under the paper's accounting and one (two for a shuffled pass: the order known
    to the adversary, and hidden) under the sampling performed.
    """
    claim = entry.claim()
    claimed = Claimed("epsilon", entry.reported_epsilon, printed=entry.printed_epsilon)
    missing = []
    if entry.dataset_size is None:
        missing.append("the dataset size N")
    if entry.batch_size is None and entry.paper_sampling != "none":
        missing.append("the batch size B")
    if not entry.deltas:
        missing.append("delta (no plausible value registered)")
    if not entry.steps:
        missing.append("the number of steps (no plausible value registered)")
    if missing:
        return [not_checkable(claim, "as-reported", missing, context=entry.missing,
                              evidence={"entry": _entry(entry)}, seed=seed)]
    sigma_known = bool(entry.noise_multipliers)
    sigmas = entry.noise_multipliers if sigma_known else (None,)
    # every (sampling, relation) pair is accounted under the stated relation (fixed-size
    # batches under add-remove by accounting.fixed_size_add_remove_event); a row that
    # does not support it says so, and a reading whose rows all fail is not-checkable
    paper_rel = entry.paper_relation
    combos, results = [], []
    for delta, sigma, steps in itertools.product(entry.deltas, sigmas, entry.steps):
        paper_plan = _plan(entry, entry.paper_sampling, steps)
        combo = {"delta": delta, "steps": steps, "paper_reading": sigma == sigmas[0]}
        if sigma is None:
            accountant = _calibration_accountant(entry)
            combo["sigma_calibrated_by"] = accountant
            try:
                sigma = acc.calibrate_noise_multiplier(claimed.value, delta, paper_plan,
                                                       paper_rel, accountant)
            except ValueError as exc:  # unsupported, out of range, or beyond the work bound
                combo.update(sigma=None, paper_accounting={}, reproduced_by=[], nearest=None,
                             not_computed=f"{accountant}: {exc}")
                combos.append(combo)
                results.append((None, None))
                continue
        combo["sigma"] = sigma
        paper_result = acc.account(sigma, paper_plan, delta, paper_rel)
        paper = _rows(paper_result)
        combo["paper_accounting"] = paper
        combo["paper_accounting_bounds"] = _bounds(paper_result)
        if entry.paper_sampling == "without-replacement" and paper_rel == "add-remove":
            combo["paper_accounting_replace_one"] = _replace_one_rows(sigma, paper_plan,
                                                                      delta)
        combo["reproduced_by"] = sorted(k for k, v in paper.items()
                                        if claimed.low <= v <= claimed.high)
        nearest = min(paper.items(), key=lambda kv: abs(kv[1] - claimed.value), default=None)
        combo["nearest"] = None if nearest is None else list(nearest)
        if not paper:
            combo["not_computed"] = _no_row(paper_result)
        real_result = None
        if entry.real_sampling != entry.paper_sampling:
            combo["real_relation"] = paper_rel
            # a shuffled pass is accounted as the per-epoch composition with the order
            # known (fixed-order: exact); the hidden-order reading keeps its upper end only
            kind = "fixed-order" if entry.real_sampling == "shuffle" else entry.real_sampling
            real_plan = _plan(entry, kind, steps)
            real_result = acc.account(sigma, real_plan, delta, paper_rel)
            combo["real_sampling"] = _rows(real_result)
            combo["real_sampling_bounds"] = _bounds(real_result)
            if not combo["real_sampling"]:
                combo["real_not_computed"] = _no_row(real_result)
            if kind == "without-replacement" and paper_rel == "add-remove":
                combo["real_sampling_replace_one"] = _replace_one_rows(sigma, real_plan,
                                                                       delta)
        combos.append(combo)
        results.append((paper_result, real_result))
    ev = {"entry": _entry(entry), "combinations": combos,
          "sigma_needed_for_reported_epsilon": _sigma_under_each_relation(entry, combos)}
    readings = _readings(entry)
    out = []
    for reading, kind, order_known in readings:
        out.append(_decide(claim, entry, claimed, combos, results, ev, seed, reading, kind,
                           order_known))
    return out


def _bounds(result: acc.AccountingResult) -> dict:
    """Supported rows by name: {name: "upper" / "lower" / "exact"} (what each row's
    epsilon is with respect to the true epsilon)."""
    return {r.name: r.bound for r in result.rows if r.epsilon is not None}


#: The replace-one rows of fixed-size batches shown beside their add-remove accounting.
REPLACE_ONE_ROWS = ("autodp-rdp", "dp_accounting-rdp")


def _replace_one_rows(sigma: float, plan: acc.Sampling, delta: float) -> dict:
    """Fixed-size batches of the same noise accounted under replace-one, as evidence
    beside their add-remove accounting: the noise std sigma C of a sum clipped to C is
    sigma / 2 relative to the replace-one sensitivity 2C. The rows of
    :data:`REPLACE_ONE_ROWS` (Wang, Balle, Kasiviswanathan 2019, Thm. 27), each
    ``{"epsilon", "bound"}``, or ``{"not_computed": reason}``; a replace-one guarantee
    is not an add-remove one, so these never decide an add-remove claim."""
    result = acc.account(_convert_sigma(sigma, "add-remove", "replace-one"), plan, delta,
                         "replace-one", accountants=REPLACE_ONE_ROWS, lower_bound=False)
    out = {"relation": "replace-one",
           "noise_multiplier": _convert_sigma(sigma, "add-remove", "replace-one")}
    for r in result.rows:
        out[r.name] = ({"epsilon": r.epsilon, "bound": r.bound} if r.epsilon is not None
                       else {"not_computed": r.note})
    return out


def _no_row(result: acc.AccountingResult) -> str:
    """Why no accountant gave a number for ``result`` (each row's reason, as it says)."""
    return ("no accountant computes it (" + "; ".join(f"{r.name}: {r.note}"
                                                      for r in result.rows) + ")")


def _computed(combos) -> list[dict]:
    """The combinations with the paper's accounting computed (a number from some row)."""
    return [c for c in combos if "not_computed" not in c]


def _not_computed(combos) -> list[str]:
    """What could not be computed, one item per distinct reason (for not_checkable)."""
    out = []
    for c in combos:
        why = (f"the epsilon of sigma = {c['sigma']:.4g}" if c.get("sigma") else
               "a sigma calibrated to the reported epsilon") + (
            f" at delta = {c['delta']:g}, steps = {c['steps']}: not computed "
            f"({c['not_computed']})")
        if c["not_computed"] not in " ".join(out):
            out.append(why)
    return out


def _readings(entry) -> list[tuple[str, str, bool]]:
    """(reading name, "paper" or "real", order known) for an entry (module docstring)."""
    if entry.real_sampling == entry.paper_sampling:
        return [("as-reported", "paper", True)]
    out = [(f"paper's accounting: {entry.paper_sampling}", "paper", True)]
    if entry.real_sampling == "shuffle":
        out += [(Reading("real sampling: shuffled pass, order known to the adversary",
                         ReadingKind.STRONGER_THREAT_MODEL), "real", True),
                ("real sampling: shuffled pass, hidden order", "real", False)]
    else:
        out.append((f"real sampling: {entry.real_sampling}", "real", True))
    return out


def _alternatives(combos) -> str:
    """Sentence listing the epsilons under readings of sigma other than the paper's own.

    Parameters
    ----------
    combos : list of dict
        The entry's combinations (each with ``paper_reading``).

    Returns
    -------
    str
        Empty when there is no other reading, else a sentence with a leading space.
    """
    others = [c for c in _computed(combos) if not c["paper_reading"]]
    if not others:
        return ""
    shown = "; ".join(
        f"sigma = {c['sigma']:.4g}, delta = {c['delta']:g}: "
        f"{min(c['paper_accounting'].items(), key=lambda kv: kv[1])[0]} "
        f"{min(c['paper_accounting'].values()):.4g}" for c in others[:4])
    return (f" Other readings of sigma (entry's sigma_note; the verdict rests on "
            f"the paper's own): {shown}.")


def _calibrated_paper_verdict(claim, entry, combos, ev, seed, reading,
                              alternatives) -> Verdict:
    """The paper's accounting with a sigma calibrated to its own number: not checkable.

    It reproduces the number by construction, so nothing is checked under this reading.

    Parameters
    ----------
    claim, entry, combos, ev, seed, reading
        As :func:`_decide`.
    alternatives : str
        :func:`_alternatives` of ``combos``.

    Returns
    -------
    Verdict
        ``not-checkable``, naming what was (or could not be) computed.
    """
    by = combos[0].get("sigma_calibrated_by")
    if not _computed(combos):
        return not_checkable(
            claim, reading, ["sigma (the paper does not state it)"]
            + _not_computed([c for c in combos if "not_computed" in c]),
            context=f"Missing: {entry.missing}" + alternatives, evidence=ev, seed=seed)
    gives = "; ".join(f"{c['nearest'][0]} {c['nearest'][1]:.4g} at delta = "
                      f"{c['delta']:g}, steps = {c['steps']}"
                      for c in _computed(combos)[:3])
    return not_checkable(
        claim, reading,
        [f"sigma (the paper does not state it; calibrated here to the reported "
         f"epsilon by {by}, the paper's accounting reproduces it by construction: "
         f"{gives})"],
        context=f"Missing: {entry.missing}" + alternatives, evidence=ev, seed=seed)


def _unstated_reason(combos, claimed, unstated, sigma_stated) -> str:
    """Why a number with unstated parameters is undecided, and which values reproduce it.

    Parameters
    ----------
    combos : list of dict
        The computed combinations.
    claimed : Claimed
        The reported epsilon.
    unstated : list of str
        What the paper does not state.
    sigma_stated : bool
        Whether the paper states sigma (else it was calibrated).

    Returns
    -------
    str
        The verdict's reason, one sentence.
    """
    reproducing = [c for c in combos if c["reproduced_by"]]
    values = [f"delta={x['delta']:g}, steps={x['steps']}, sigma={x['sigma']:.4g}"
              for x in reproducing]
    nearest = min(combos, key=lambda c: abs(c["nearest"][1] - claimed.value))
    return (f"the paper does not state {', '.join(unstated)}; "
            + (f"the number is reproduced (to its printed precision) with "
               f"{'; '.join(values[:4])}" if values else
               f"no plausible value reproduces it to its printed precision (nearest: "
               f"{nearest['nearest'][0]} {nearest['nearest'][1]:.4g} at delta = "
               f"{nearest['delta']:g}, steps = {nearest['steps']})")
            + (f" (sigma calibrated to it by {combos[0].get('sigma_calibrated_by')})"
               if not sigma_stated else "") + ".")


def _stated_reading(entry, c, paper_result, real_result, kind, sigma_stated, order_known):
    """What one reading decides on when every parameter is stated.

    Parameters
    ----------
    entry : ReportedPrivacy
        The reported privacy number and its parameters.
    c : dict
        The paper's own combination.
    paper_result, real_result
        Accounting results under the paper's and the real sampling.
    kind : str
        ``"paper"`` or ``"real"``.
    sigma_stated : bool
        Whether the paper states sigma.
    order_known : bool
        For a shuffled pass: whether the adversary knows the order.

    Returns
    -------
    tuple
        (result, what, lower, context): the result to decide on, its description for
        :func:`epsilon_bounds`, whether a certified lower bound is computed, and the
        verdict's context with a ``{rows}`` placeholder.
    """
    steps, delta = c["steps"], c["delta"]
    if kind == "paper":
        what = _what(entry.paper_sampling, paper_result.relation, steps, delta)
        context = (f"sigma = {c['sigma']:.4g} (stated), {steps} steps, delta = {delta:g}, "
                   f"{entry.paper_sampling} as the paper accounted it; every accountant: "
                   "{rows}.")
        if entry.real_sampling != entry.paper_sampling:
            context += (f" The algorithm performs {entry.real_sampling}: see the readings "
                        "of the real sampling.")
        return (paper_result, what, True,
                context + _replace_one_text(c.get("paper_accounting_replace_one")))
    what = _what(entry.real_sampling, real_result.relation, steps, delta)
    origin = "stated" if sigma_stated else "from the paper's procedure"
    hidden = entry.real_sampling == "shuffle" and not order_known
    context = (f"sigma = {c['sigma']:.4g} ({origin}), {steps} steps, delta = {delta:g}, "
               f"the {entry.real_sampling} the algorithm performs (the paper accounted "
               f"{entry.paper_sampling}: {fmt_rows(c['paper_accounting'])}); every "
               "accountant: {rows}.")
    if entry.real_sampling == "shuffle":
        context += (" The per-epoch composition is exact for an adversary who knows the "
                    "pass order" + (", a threat model stronger than the paper's." if
                                    order_known else "; for a hidden order it is only "
                                    "an upper bound, and no certified lower bound is "
                                    "computed."))
    context += _replace_one_text(c.get("real_sampling_replace_one"))
    return real_result, what, not hidden, context


def _replace_one_text(ro: dict | None) -> str:
    """The sentence on the replace-one rows shown beside fixed-size batches under
    add-remove (:func:`_replace_one_rows`); empty without them."""
    if ro is None:
        return ""
    shown = ", ".join(
        f"{name} {v['epsilon']:.4g} ({v['bound']})" if "epsilon" in v else
        f"{name} not computed" for name, v in ro.items() if isinstance(v, dict))
    return (" Fixed-size batches under add-remove are accounted by the Poisson pair at "
            "rate B/N with sigma / 2 (an added record entering a batch pushes another out: "
            "accounting.fixed_size_add_remove_event); the same noise read as replace-one "
            f"fixed-size batches (sigma = {ro['noise_multiplier']:.4g} relative to 2C): "
            f"{shown}, a replace-one guarantee, shown and not deciding this add-remove "
            "claim.")


def _decide(claim, entry, claimed, combos, results, ev, seed, reading, kind,
            order_known) -> Verdict:
    """One reading's verdict (module docstring)."""
    alternatives = _alternatives(combos)
    own = [(c, r) for c, r in zip(combos, results, strict=True) if c["paper_reading"]]
    stated_all = entry.delta_stated and entry.steps_stated
    sigma_stated = bool(entry.noise_multipliers) and entry.sigma_stated
    unstated = [n for n, ok in (("delta", entry.delta_stated),
                                ("the step count", entry.steps_stated)) if not ok]
    if kind == "paper" and not sigma_stated:
        return _calibrated_paper_verdict(claim, entry, combos, ev, seed, reading,
                                         alternatives)
    if kind == "real" and not sigma_stated and _paper_accountant(entry) is None:
        procedure = entry.paper_accounting.split(":")[0].split("(")[0].strip()
        unstated.append(
            f"sigma, and its accountant is not one the suite runs ({procedure}): "
            f"the sigma calibrated by {combos[0].get('sigma_calibrated_by')} is a stand-in, "
            "not the paper's")
    if unstated and not _computed(combos):
        return not_checkable(claim, reading, _not_computed(combos),
                             context=f"The paper does not state {', '.join(unstated)}. "
                                     f"Missing: {entry.missing}" + alternatives,
                             evidence=ev, seed=seed)
    if unstated:
        # the ones not computed are in the evidence
        reason = _unstated_reason(_computed(combos), claimed, unstated, sigma_stated)
        return undecided(claim, reading, reason, context=f"Missing: {entry.missing}"
                         + alternatives, evidence=ev, seed=seed)
    assert stated_all and len(own) == 1, "every parameter stated: one own combination"
    c, (paper_result, real_result) = own[0]
    steps, delta = c["steps"], c["delta"]
    if "not_computed" in c and (kind == "paper" or real_result is None):
        return not_checkable(claim, reading, _not_computed([c]),
                             context=f"Missing: {entry.missing}" + alternatives, evidence=ev,
                             seed=seed)
    if kind == "real" and "real_not_computed" in c:
        return not_checkable(
            claim, reading, [f"the epsilon of sigma = {c['sigma']:.4g} under the "
                             f"{entry.real_sampling} performed, at delta = {delta:g}, steps = "
                             f"{steps}: not computed ({c['real_not_computed']})"],
            context=f"Missing: {entry.missing}" + alternatives, evidence=ev, seed=seed)
    result, what, lower, context = _stated_reading(
        entry, c, paper_result, real_result, kind, sigma_stated, order_known)
    lo, hi, refined = epsilon_bounds(result, claimed, what, lower=lower)
    context = context.replace("{rows}", fmt_bounded_rows(refined))  # after any refinement
    return decide(claim, reading, claimed, lower=lo, upper=hi,
                  context=context + alternatives,
                  evidence={**ev, "accounting": refined.to_dict()}, seed=seed)


def _convert_sigma(sigma: float, relation_from: str, relation_to: str) -> float:
    """Noise multiplier of the same noise under another relation, for a clipped sum.

    The accounting convention: sigma is relative to the relation's L2 sensitivity, C
    under add-remove and 2C under replace-one for a sum of records clipped to C.
    """
    if relation_from == relation_to:
        return sigma
    return sigma / 2 if relation_to == "replace-one" else sigma * 2


def _sigma_under_each_relation(entry: ReportedPrivacy, combos) -> dict:
    """Sigma needed for the reported epsilon under each relation (paper's sampling), as
    evidence (never a verdict's input).

    Calibrated, to 1 % in sigma, with the cheapest accountant that supports the
    combination: the exact Gaussian composition for unsampled passes
    (:func:`~dpclaims.analysis.accounting.composed_gaussian_sigma`), dp_accounting RDP
    for Poisson sampling under add-remove and for sampling without replacement (under
    add-remove through :func:`~dpclaims.analysis.accounting.fixed_size_add_remove_event`),
    the PLD at one interval (1e-3, pessimistic) for Poisson under
    replace-one, which no RDP accountant here supports. ``noise_std_over_C`` is the
    noise standard deviation over the clipping norm for a clipped sum (DP-SGD's noise
    multiplier): sigma under add-remove, 2 sigma under replace-one.
    """
    out = {}
    c = combos[0]
    plan = _plan(entry, entry.paper_sampling, c["steps"])
    for relation in RELATIONS:
        try:
            if entry.paper_sampling in ("shuffle", "fixed-order", "none"):
                accountant = "analytic-gaussian"
                releases = plan.num_steps if entry.paper_sampling == "none" else plan.passes
                sigma = acc.composed_gaussian_sigma(entry.reported_epsilon, c["delta"],
                                                    releases)
            elif entry.paper_sampling == "poisson" and relation == "replace-one":
                accountant = "dp_accounting-pld"
                sigma = acc.calibrate_noise_multiplier(
                    entry.reported_epsilon, c["delta"], plan, relation, accountant, tol=1e-2,
                    pld_max_refinements=0)
            else:
                accountant = "dp_accounting-rdp"
                sigma = acc.calibrate_noise_multiplier(entry.reported_epsilon, c["delta"],
                                                       plan, relation, accountant, tol=1e-2)
        except ValueError as exc:
            out[relation] = f"unsupported: {exc}"
            continue
        out[relation] = {"sigma": sigma, "accountant": accountant,
                         "noise_std_over_C": _convert_sigma(sigma, relation, "add-remove")}
    return out


def end_text(bound: dict | None) -> str:
    """One end of a verdict's basis bracket as printed ("none" when missing)."""
    if bound is None:
        return "none"
    value = bound["value"]
    return value if isinstance(value, str) else f"{value:.4g}"


def fmt_rows(rows: dict) -> str:
    """Accounting rows ``{name: epsilon}`` as one line."""
    return ", ".join(f"{k} {v:.4g}" for k, v in rows.items())


def fmt_bounded_rows(result: acc.AccountingResult) -> str:
    """An accounting's supported rows as one line, each labelled with what it is (upper,
    lower, exact, model)."""
    return ", ".join(f"{r.name} {r.epsilon:.4g} ({r.bound})" for r in result.rows
                     if r.epsilon is not None)


def _entry(entry: ReportedPrivacy) -> dict:
    d = {k: getattr(entry, k) for k in entry.__dataclass_fields__}
    for k in ("deltas", "noise_multipliers", "steps"):
        d[k] = list(d[k])
    return d


def check_catalogue(entries, seed: int | None = None, tick=lambda name: None):
    """Verdicts for ``entries`` (ReportedPrivacy values), one per entry."""
    out = []
    for e in entries:
        tick(e.id)
        out.extend(check_reported(e, seed))
    return out


def reported_epsilons(ctx, entries, count: int) -> list[Verdict]:
    """A paper's reported privacy numbers in its own audit: the first ``count`` of
    ``entries`` (ReportedPrivacy values) recomputed (:func:`check_catalogue`, timed as
    "reported epsilons" through ``ctx.timer``), a not-checkable verdict for each later one
    (:func:`not_run_at_budget`), each with the data it ran on; under a ``--claim``
    selection (``ctx.wants``) only the selected entries, and nothing is timed when none of
    the first ``count`` is selected.

    ``ctx``: the paper's :class:`~dpclaims.claims.paper.RunContext`. Returns the verdicts
    in the order of ``entries``.
    """
    entries = list(entries)
    taken = entries[:count]
    chosen = [e for e in taken if ctx.wants(e.id)]
    out = []
    if chosen:
        out += ran_on(ctx.timer("reported epsilons", lambda: check_catalogue(chosen)),
                      "no records: the paper's reported privacy parameters")
    out += ran_on(not_run_at_budget([e for e in entries[len(taken):] if ctx.wants(e.id)],
                                    ctx.budget.name,
                                    f"the first {len(taken)} of {len(entries)}"),
                  "none: not run")
    return out


def not_run_at_budget(entries, budget: str, taken: str) -> list[Verdict]:
    """A ``not-checkable`` verdict (from the kernel) for each of ``entries`` (ReportedPrivacy
    values) a budget does not recompute; ``taken`` says which it does ("the first entry
    of each paper"), the reason names the budgets that run them all."""
    return [not_checkable(
        e.claim(), "as reported",
        f"a run at a larger budget: budget {budget} recomputes {taken}; quick, standard and "
        "full recompute every reported epsilon", seed=None, budget=budget) for e in entries]

