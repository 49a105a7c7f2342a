"""The sampling a whole run performs, accounted; a library's own accountant as a reading.

A whole-run algorithm (:mod:`dpclaims.audits.whole_run`) may declare

``sampling``
    The sampler it performs, a :class:`~dpclaims.analysis.sampling.Sampling` (kind,
    N, B, steps). The claim's noise multiplier is read off the claim's ``dp_event`` (its
    one Gaussian noise multiplier, relative to the sensitivity under the claim's
    relation, :mod:`dpclaims.analysis.accounting`), and the claim is accounted for the
    sampling performed under the claim's relation (:func:`performed_accounting`):
    Poisson as it is; fixed-size batches (``without-replacement``) under replace-one by
    the accountants that support them (autodp, dp_accounting RDP: upper bounds), under
    add-remove by the Poisson pair of
    :func:`~dpclaims.analysis.accounting.fixed_size_add_remove_event` (RDP and
    pessimistic PLD rows upper bounds, the optimistic PLD a lower bound) plus the
    exact computation of the pair that attains it
    (:func:`~dpclaims.analysis.fixed_size_exact.exact_pair_row`, a lower bound that
    uses no accountant, up to :data:`~dpclaims.analysis.fixed_size_exact.MAX_EXACT_STEPS`
    steps); a shuffled pass as one unamplified Gaussian per epoch, under two readings
    as for ``performed_event`` (order known: exact, a stronger threat model; hidden:
    an upper bound only). The verdict is :func:`check_declared_sampling`'s, on the
    claim ``<name>/accounting-as-performed``.
``library_accounting``
    What a library's own accountant says of the run: a mapping ``{"name": "d3p's
    DPSVI.get_epsilon", "epsilon": 2.524, "delta": 1e-5, "relation": "add-remove",
    "assumes": "poisson"}`` (:func:`read_library_accounting`). It is a reading of its
    own, the claim ``<name>/library-accounting`` (:func:`check_library_accounting`):
    the library's epsilon, as the claim, against dpclaims' certified bracket for the
    sampling the code performs (``sampling``), at the library's delta. Refuted only on
    a certified lower bound above the library's epsilon, holds on a certified upper
    bound at most it (:mod:`dpclaims.claims.kernel`).

An explicit ``performed_event`` and a ``sampling`` that disagree (the event is not
:func:`~dpclaims.analysis.accounting.dp_event_for` of the claim's multiplier and the
sampling, or ``performed_is_shuffle`` does not match a shuffled ``sampling``) is bad
input; so is a ``sampling`` that is not a ``Sampling`` and a ``library_accounting`` with
a missing, unknown or bad key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import dp_accounting

from dpclaims.analysis import accounting as acc
from dpclaims.analysis.fixed_size_exact import exact_pair_row
from dpclaims.analysis.validation import InputError
from dpclaims.analysis.vocabulary import RELATIONS, SAMPLINGS
from dpclaims.audits.capabilities import read_algorithm
from dpclaims.claims.checks.bounds import epsilon_bounds
from dpclaims.claims.core import Claim, Reading, ReadingKind, Verdict
from dpclaims.claims.kernel import Claimed, decide, not_checkable

__all__ = [
    "LIBRARY_KEYS",
    "check_declared_sampling",
    "check_library_accounting",
    "claim_noise_multiplier",
    "performed_accounting",
    "read_library_accounting",
    "read_sampling",
]

#: The keys of a ``library_accounting`` mapping, all required.
LIBRARY_KEYS = ("name", "epsilon", "delta", "relation", "assumes")


# --------------------------------------------------------------------------- reading


def read_sampling(value) -> acc.Sampling | None:
    """An algorithm's ``sampling`` checked: a :class:`~dpclaims.analysis.sampling.Sampling`
    or None.

    Raises
    ------
    InputError
        Anything else (a kind given as a string is not converted: say how many records
        and steps too).
    """
    if value is None or isinstance(value, acc.Sampling):
        return value
    raise InputError(f"sampling must be a dpclaims.analysis.sampling.Sampling (kind, "
                     f"dataset_size, batch_size, steps), got {value!r}")


def read_library_accounting(value) -> dict | None:
    """An algorithm's ``library_accounting`` checked; None when absent.

    Parameters
    ----------
    value : mapping or None
        ``{"name": str, "epsilon": float >= 0, "delta": float in (0, 1), "relation":
        "add-remove" or "replace-one", "assumes": a sampling kind
        (:data:`~dpclaims.analysis.vocabulary.SAMPLINGS`)}``: the library's accountant,
        the epsilon it reports at that delta, and the relation and sampling it assumes.

    Returns
    -------
    dict or None
        The same keys, ``epsilon`` and ``delta`` as floats.

    Raises
    ------
    InputError
        Not a mapping; a key missing or unknown; a value of the wrong type or range (the
        message names the key).
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InputError(f"library_accounting must be a mapping with keys {LIBRARY_KEYS}, "
                         f"got {value!r}")
    missing = [k for k in LIBRARY_KEYS if k not in value]
    unknown = [k for k in value if k not in LIBRARY_KEYS]
    if missing or unknown:
        raise InputError(f"library_accounting must have exactly the keys {LIBRARY_KEYS}: "
                         + ", ".join(([f"missing {missing}"] if missing else [])
                                     + ([f"unknown {unknown}"] if unknown else [])))
    name = value["name"]
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"library_accounting['name'] must be a non-empty string naming "
                         f"the accountant, got {name!r}")
    out = {"name": name}
    for key, ok, want in (("epsilon", lambda x: math.isfinite(x) and x >= 0,
                           "a finite number >= 0"),
                          ("delta", lambda x: 0 < x < 1, "a number in (0, 1)")):
        x = value[key]
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not ok(float(x)):
            raise InputError(f"library_accounting[{key!r}] must be {want}, got {x!r}")
        out[key] = float(x)
    if value["relation"] not in RELATIONS:
        raise InputError(f"library_accounting['relation'] must be one of {RELATIONS}, got "
                         f"{value['relation']!r}")
    if value["assumes"] not in SAMPLINGS:
        raise InputError(f"library_accounting['assumes'] must be a sampling kind, one of "
                         f"{SAMPLINGS}, got {value['assumes']!r}")
    out["relation"], out["assumes"] = value["relation"], value["assumes"]
    return out


def claim_noise_multiplier(event) -> float | None:
    """The one Gaussian noise multiplier of a claim's DpEvent, or None when it has none
    or several different ones.

    Walks ``SelfComposedDpEvent``, ``ComposedDpEvent`` and the sampled events
    (Poisson, without and with replacement) down to their ``GaussianDpEvent``; the
    multiplier is relative to the sensitivity under the claim's relation (the
    accounting convention, :mod:`dpclaims.analysis.accounting`).
    """
    found: set[float] = set()

    def walk(e) -> bool:
        if isinstance(e, dp_accounting.GaussianDpEvent):
            found.add(float(e.noise_multiplier))
            return True
        if isinstance(e, dp_accounting.ComposedDpEvent):
            return all(walk(x) for x in e.events)
        if isinstance(e, (dp_accounting.SelfComposedDpEvent,
                          dp_accounting.PoissonSampledDpEvent,
                          dp_accounting.SampledWithoutReplacementDpEvent,
                          dp_accounting.SampledWithReplacementDpEvent)):
            return walk(e.event)
        return False

    if event is None or not walk(event) or len(found) != 1:
        return None
    return found.pop()


# --------------------------------------------------------------------------- accounting


def performed_accounting(noise_multiplier: float, sampling: acc.Sampling, delta: float,
                         relation: str, *, order_known: bool = True) -> acc.AccountingResult:
    """Every accountant's epsilon for the sampling performed, each row labelled upper,
    lower or exact (:attr:`~dpclaims.analysis.accounting.AccountantRow.bound`).

    Parameters
    ----------
    noise_multiplier : float
        sigma > 0, relative to the sensitivity under ``relation``.
    sampling : Sampling
        The sampler performed.
    delta : float
        In (0, 1).
    relation : {"add-remove", "replace-one"}
    order_known : bool, default True
        For a shuffled pass: account it as a pass in an order the adversary knows
        (``fixed-order``: the per-epoch composition, exact), else as a hidden shuffle
        (the same composition read as an upper bound only).

    Returns
    -------
    AccountingResult
        :func:`~dpclaims.analysis.accounting.account`'s rows; for fixed-size batches
        under add-remove also the exact computation of the pair that attains the
        reduction (:func:`~dpclaims.analysis.fixed_size_exact.exact_pair_row`, a lower
        bound; not computed beyond its step cap, the reason in its note).

    Raises
    ------
    ValueError
        As :func:`~dpclaims.analysis.accounting.account`.
    """
    plan = sampling
    if sampling.kind == "shuffle" and order_known:
        plan = replace(sampling, kind="fixed-order")
    result = acc.account(noise_multiplier, plan, delta, relation)
    if plan.kind == "without-replacement" and relation == "add-remove":
        result = result.with_rows(exact_pair_row(noise_multiplier, plan, delta))
    return result


def _rows_text(result: acc.AccountingResult) -> str:
    return ", ".join(f"{r.name} {r.epsilon:.4g} ({r.bound})" for r in result.rows
                     if r.epsilon is not None) or "none supported"


def _short(sampling: acc.Sampling) -> str:
    """``sampling`` in a few words: "without-replacement, N = 100, B = 50, 4 steps"."""
    sizes = "".join(f", {k} = {v:g}" for k, v in (("N", sampling.dataset_size),
                                                   ("B", sampling.batch_size))
                    if v is not None)
    count = sampling.num_steps
    return f"{sampling.kind}{sizes}, " + (f"{count} steps" if count is not None else
                                           f"{sampling.epochs} epochs")


def _claim(name: str, kind: str, statement: str, check: str) -> Claim:
    return Claim(f"{name}/{kind}", f"variant {name!r}", "user algorithm", statement, check,
                 kind="privacy-number")


def _check_agreement(alg, sampling: acc.Sampling, sigma: float | None) -> None:
    """InputError when an explicit ``performed_event`` / ``performed_is_shuffle`` and the
    declared ``sampling`` disagree (module docstring)."""
    if bool(alg.performed_is_shuffle) != (sampling.kind == "shuffle"):
        raise InputError(f"performed_is_shuffle={alg.performed_is_shuffle!r} disagrees with "
                         f"sampling {sampling!r}")
    if alg.performed_event is None or sigma is None:
        return
    expected = acc.dp_event_for(sigma, sampling)
    if alg.performed_event != expected:
        raise InputError(f"performed_event {alg.performed_event!r} disagrees with sampling "
                         f"{sampling!r}, which with the claim's noise multiplier {sigma:g} "
                         f"is {expected!r}")


def check_declared_sampling(alg, seed: int) -> list[Verdict]:
    """The claim accounted for the declared ``sampling`` (module docstring); [] without it.

    Readings: ``as performed`` (decided on the certified bracket of
    :func:`performed_accounting`), or for a shuffled pass ``as performed, order known to
    the adversary`` (a stronger threat model, never deciding the headline) and ``as
    performed, hidden shuffle`` (upper bound only). ``not-checkable`` when the claim's
    dp_event gives no single Gaussian noise multiplier, or no accountant supports the
    combination (each row's reason).

    Raises
    ------
    InputError
        A ``sampling`` that is not a ``Sampling``; ``performed_event`` or
        ``performed_is_shuffle`` disagreeing with it.
    """
    alg = read_algorithm(alg)
    sampling = read_sampling(alg.sampling)
    if sampling is None:
        return []
    c = alg.claim
    sigma = claim_noise_multiplier(c.dp_event)
    _check_agreement(alg, sampling, sigma)
    claim = _claim(alg.name, "accounting-as-performed",
                   f"the whole run, with the sampling it performs ({_short(sampling)}), is "
                   f"({c.epsilon:.6g}, {c.delta:g})-DP under {c.relation}",
                   "accounting recomputation for the sampling performed")
    shuffle = sampling.kind == "shuffle"
    readings = (((Reading("as performed, order known to the adversary",
                          ReadingKind.STRONGER_THREAT_MODEL), True),
                 ("as performed, hidden shuffle", False)) if shuffle
                else (("as performed", True),))
    base_ev = {"claimed_epsilon": c.epsilon, "sampling": sampling.to_dict(),
               "noise_multiplier": sigma,
               "noise_multiplier_source": "the claim's dp_event (its Gaussian's multiplier, "
                                          f"relative to the {c.relation} sensitivity)"}
    if sigma is None:
        return [not_checkable(claim, reading, [
            f"the noise multiplier: the claim's dp_event ({c.dp_event!r:.120}) has no single "
            "Gaussian noise multiplier to account the declared sampling with"],
            evidence=base_ev, seed=seed) for reading, _ in readings]
    claimed = Claimed("epsilon", c.epsilon)
    what = f"{sampling.kind}, {c.relation}, {sampling.num_steps} steps, delta {c.delta:g}"
    out = []
    for reading, known in readings:
        res = performed_accounting(sigma, sampling, c.delta, c.relation, order_known=known)
        ev = {**base_ev, "order_known": known if shuffle else None}
        if res.upper_bound is None and res.lower_bound is None:
            out.append(not_checkable(claim, reading, [
                "the epsilon of the sampling performed: no accountant computes it ("
                + "; ".join(f"{r.name}: {r.note}" for r in res.rows) + ")"],
                evidence={**ev, "accounting": res.to_dict()}, seed=seed))
            continue
        lower, upper, refined = epsilon_bounds(res, claimed, what, lower=known)
        context = (f"{sampling.describe(c.relation)} Noise multiplier {sigma:g} (the claim's "
                   f"dp_event). Every accountant: {_rows_text(refined)}.")
        if shuffle:
            context += (" The event is exact for an adversary who knows the pass order, a "
                        "threat model stronger than the claim's: shown, never deciding."
                        if known else " For a hidden shuffle the event's epsilon is only an "
                        "upper bound; no certified lower bound is computed (the whole-run "
                        "audit is the check that can refute it).")
        out.append(decide(claim, reading, claimed, lower=lower, upper=upper, context=context,
                          evidence={**ev, "accounting": refined.to_dict()}, seed=seed))
    return out


def _assumed_plan(sampling: acc.Sampling, kind: str) -> acc.Sampling | None:
    """The sampling the library's accountant assumes, with the performed one's N, B and
    steps; None when those do not make one (e.g. a full batch from a batch of B < N)."""
    try:
        if kind == "none":
            return acc.Sampling("none", sampling.dataset_size, steps=sampling.num_steps)
        return acc.Sampling(kind, sampling.dataset_size, sampling.batch_size,
                            steps=sampling.num_steps)
    except (TypeError, ValueError):
        return None


def check_library_accounting(alg, seed: int) -> list[Verdict]:
    """A library's own accountant as a reading of its own (module docstring); [] without
    ``library_accounting``.

    The claim ``<name>/library-accounting``: "the library's epsilon at its delta, under
    its relation", read as ``library_accounting["name"]`` and decided by the verdict
    kernel on dpclaims' certified bracket for the sampling the code performs
    (:func:`performed_accounting` of the declared ``sampling`` and the claim's noise
    multiplier; for a shuffled pass the hidden-order reading, an upper bound only). The
    context also shows dpclaims' accounting of the sampling the library assumes, which
    is what its number stands for. ``not-checkable``: no ``sampling`` declared, no single
    Gaussian noise multiplier in the claim's dp_event, or the library's relation is not
    the claim's (the multiplier is relative to the claim's relation; it is not
    converted).

    Raises
    ------
    InputError
        A bad ``library_accounting`` (:func:`read_library_accounting`) or ``sampling``.
    """
    alg = read_algorithm(alg)
    lib = read_library_accounting(alg.library_accounting)
    if lib is None:
        return []
    sampling = read_sampling(alg.sampling)
    c = alg.claim
    performs = ("the sampling it performs is not declared" if sampling is None else
                f"the code performs {_short(sampling)}")
    claim = _claim(alg.name, "library-accounting",
                   f"{lib['name']}: the whole run is ({lib['epsilon']:.6g}, "
                   f"{lib['delta']:g})-DP under {lib['relation']}, accounted as "
                   f"{lib['assumes']} sampling ({performs})",
                   "the library's own accountant against the accounting of the sampling "
                   "performed")
    reading = lib["name"]
    sigma = claim_noise_multiplier(c.dp_event)
    ev = {"library_accounting": lib, "noise_multiplier": sigma,
          "sampling": None if sampling is None else sampling.to_dict()}
    missing = []
    if sampling is None:
        missing.append("the sampling the code performs (declare `sampling`, a Sampling)")
    if sigma is None:
        missing.append(f"the noise multiplier: the claim's dp_event ({c.dp_event!r:.120}) "
                       "has no single Gaussian noise multiplier")
    if lib["relation"] != c.relation:
        missing.append(f"accounting under {lib['relation']}: the claim's noise multiplier is "
                       f"relative to the {c.relation} sensitivity (not converted)")
    if missing:
        return [not_checkable(claim, reading, missing, evidence=ev, seed=seed)]
    claimed = Claimed("epsilon", lib["epsilon"])
    relation, delta = lib["relation"], lib["delta"]
    res = performed_accounting(sigma, sampling, delta, relation, order_known=False)
    if res.upper_bound is None and res.lower_bound is None:
        return [not_checkable(claim, reading, [
            "the epsilon of the sampling performed: no accountant computes it ("
            + "; ".join(f"{r.name}: {r.note}" for r in res.rows) + ")"],
            evidence={**ev, "accounting": res.to_dict()}, seed=seed)]
    what = f"{sampling.kind}, {relation}, {sampling.num_steps} steps, delta {delta:g}"
    lower, upper, refined = epsilon_bounds(res, claimed, what,
                                           lower=sampling.kind != "shuffle")
    context = (f"{lib['name']} says epsilon = {lib['epsilon']:.6g} at delta = {delta:g} "
               f"under {relation}, assuming {lib['assumes']} sampling. "
               f"{sampling.describe(relation)} Noise multiplier {sigma:g} (the claim's "
               f"dp_event). dpclaims, for the sampling performed: {_rows_text(refined)}.")
    assumed = _assumed_plan(sampling, lib["assumes"])
    if assumed is not None and lib["assumes"] != sampling.kind:
        try:
            mine = acc.account(sigma, assumed, delta, relation,
                               accountants=("dp_accounting-pld", "dp_accounting-rdp"),
                               lower_bound=False)
        except ValueError as exc:  # out of range for the accountants: shown as such
            ev["assumed_sampling_accounting"] = f"not computed: {exc}"
        else:
            ev["assumed_sampling_accounting"] = mine.to_dict()
            context += (f" For the {lib['assumes']} sampling the library assumes, dpclaims "
                        f"gives {_rows_text(mine)}: the library's number stands for that "
                        "sampling, not the one performed.")
    return [decide(claim, reading, claimed, lower=lower, upper=upper, context=context,
                   evidence={**ev, "accounting": refined.to_dict()}, seed=seed)]
