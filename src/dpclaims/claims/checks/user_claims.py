"""``dpclaims check CLAIMS.toml``: a researcher's own paper, its claims as data.

A claims file states a paper's checkable claims of the kinds that need no new code;
each becomes a :class:`~dpclaims.claims.Claim` with the id, location and exact quote
given, checked by the same code as the three papers' catalogues:

``[[privacy]]`` a reported (epsilon, delta)
    The mechanism as a DP-SGD-style description: ``noise_multiplier`` (noise std
    over the L2 sensitivity of one step's sum under ``relation``; omitted: it is
    calibrated to the reported epsilon with the paper's accountant, and the
    question becomes what that sigma really gives), ``dataset_size``,
    ``batch_size`` (or ``sampling_rate``, batch = round(rate * N)), ``steps`` or
    ``epochs`` (steps = ceil(epochs * N / batch), rounded up and said so) or, where
    the paper does not state them, ``plausible_epochs`` (a list: the verdict is then
    at best inconclusive) or nothing (not-checkable),
    ``delta``, ``relation`` (default ``add-remove``, as DP-SGD and dp_accounting),
    ``sampling`` (what the paper's accountant assumed: ``poisson``,
    ``without-replacement``, ``shuffle``, ``fixed-order``, ``none``),
    ``real_sampling`` (what the implementation does; default ``sampling``),
    ``accounting`` (the paper's words for its accountant), ``reported_epsilon``.
    Checked by :func:`~dpclaims.claims.checks.privacy_numbers.check_reported` (every
    accountant side by side; refuted only by a near-exact number).
``[[sensitivity]]`` a claimed sensitivity
    ``query = "module:function"`` (or ``"file.py:function"``), ``value``, ``norm``
    (1, 2 or "inf"), ``relation`` and a record ``domain`` (``{kind = "box", low,
    high, shape}``, ``{kind = "ball", radius, norm, shape}`` or ``{kind = "finite",
    records}``); a hypothesis property test over neighbouring datasets drawn from
    the domain (:func:`~dpclaims.claims.checks.variant.check_sensitivity_claim`).
``[[audit]]`` a mechanism's privacy claim
    ``mechanism = "module:object"``: the empirical audit of ``check-variant``
    (:func:`~dpclaims.claims.checks.variant.check_audit_claim`) on a searched pair.

Every entry needs ``id``, ``location`` and ``statement`` (the paper's words,
quoted exactly). An unknown key, a missing one or a value of the wrong type is
bad input (:class:`~dpclaims.claims.InputError`, exit 2), naming the entry and the
key. Exit codes as ``check-variant``.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, published as tomli
    import tomli as tomllib

from dpclaims.analysis.accounting import steps_for_epochs
from dpclaims.analysis.domains import Ball, Box, FiniteSet
from dpclaims.analysis.validation import check_count, check_positive
from dpclaims.audits.mechanism import PrivacyClaim, Sensitivity
from dpclaims.claims import Claim, InputError, Verdict
from dpclaims.claims.catalogues.reported_privacy import ReportedPrivacy
from dpclaims.claims.checks.privacy_numbers import check_reported
from dpclaims.claims.checks.variant import (
    VariantBudget,
    check_audit_claim,
    check_sensitivity_claim,
    load_variant,
)

SAMPLINGS = ("poisson", "without-replacement", "shuffle", "fixed-order", "none")
RELATIONS = ("replace-one", "add-remove")
_COMMON = {"id", "location", "statement"}
_KEYS = {
    "privacy": _COMMON | {"reported_epsilon", "delta", "noise_multiplier", "sigma_note",
                          "dataset_size", "batch_size", "sampling_rate", "steps", "epochs",
                          "plausible_epochs",
                          "relation", "sampling", "real_sampling", "accounting", "missing"},
    "sensitivity": _COMMON | {"query", "value", "norm", "relation", "domain"},
    "audit": _COMMON | {"mechanism"},
}


def _need(entry: dict, key: str, kind: str, types, where: str):
    if key not in entry:
        raise InputError(f"{where}: missing key {key!r}")
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, types):
        raise InputError(f"{where}: {key} must be {_typename(types)}, got {value!r}")
    return value


def _typename(types) -> str:
    names = [t.__name__ for t in (types if isinstance(types, tuple) else (types,))]
    return " or ".join({"str": "a string", "int": "an integer", "float": "a number",
                        "dict": "a table", "list": "an array"}.get(n, n) for n in names)


def _positive(value, key, where, integer=False):
    """``value`` checked by analysis.validation (check_count / check_positive); a TOML
    boolean is not a number. InputError naming the entry and key otherwise."""
    if isinstance(value, bool):
        raise InputError(f"{where}: {key} must be a number, got {value!r}")
    try:
        return check_count(value, key) if integer else check_positive(value, key)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: {exc}") from exc


def privacy_entry(entry: dict, paper: str, where: str) -> tuple[ReportedPrivacy, list[str]]:
    """A ``[[privacy]]`` table as a :class:`ReportedPrivacy` and the notes on how it was read.

    Raises InputError naming the entry and key on a missing or bad value.
    """
    notes = []
    eps = _positive(_need(entry, "reported_epsilon", "privacy", (int, float), where),
                    "reported_epsilon", where)
    delta = _need(entry, "delta", "privacy", (int, float), where)
    if not 0 < delta < 1:
        raise InputError(f"{where}: delta must lie in (0, 1), got {delta!r}")
    n = _positive(_need(entry, "dataset_size", "privacy", int, where), "dataset_size", where,
                  integer=True)
    sampling = entry.get("sampling", "poisson")
    real = entry.get("real_sampling", sampling)
    relation = entry.get("relation", "add-remove")
    for key, value, allowed in (("sampling", sampling, SAMPLINGS),
                                ("real_sampling", real, SAMPLINGS),
                                ("relation", relation, RELATIONS)):
        if value not in allowed:
            raise InputError(f"{where}: {key} must be one of {', '.join(allowed)}, got {value!r}")
    if "relation" not in entry:
        notes.append("relation not given: add-remove assumed (DP-SGD's and dp_accounting's)")
    if ("batch_size" in entry) == ("sampling_rate" in entry):
        raise InputError(f"{where}: give exactly one of batch_size and sampling_rate")
    if "batch_size" in entry:
        batch = _positive(entry["batch_size"], "batch_size", where, integer=True)
    else:
        rate = _need(entry, "sampling_rate", "privacy", (int, float), where)
        if not 0 < rate <= 1:
            raise InputError(f"{where}: sampling_rate must lie in (0, 1], got {rate!r}")
        batch = max(1, round(rate * n))
        notes.append(f"batch size {batch} = round(sampling_rate {rate:g} x N {n})")
    given = [k for k in ("steps", "epochs", "plausible_epochs") if k in entry]
    if len(given) > 1:
        raise InputError(f"{where}: give at most one of steps, epochs and plausible_epochs, "
                         f"got {given}")
    steps_stated = "plausible_epochs" not in entry
    if "steps" in entry:
        steps = (_positive(entry["steps"], "steps", where, integer=True),)
    elif given:
        raw = entry[given[0]]
        epoch_list = raw if isinstance(raw, list) else [raw]
        if not epoch_list:
            raise InputError(f"{where}: {given[0]} is empty")
        steps = []
        for epochs in epoch_list:
            k, note = steps_for_epochs(_positive(epochs, given[0], where), n, batch)
            notes += [note] if note else []
            steps.append(k)
        steps = tuple(steps)
        if not steps_stated:
            notes.append(f"epochs not stated by the paper: plausible values {epoch_list} tried")
    else:
        steps = ()  # not stated: the claim is not checkable (check_reported says so)
    sigma = entry.get("noise_multiplier")
    if sigma is not None:
        _positive(sigma, "noise_multiplier", where)
    return ReportedPrivacy(
        id=_need(entry, "id", "privacy", str, where), paper=paper,
        location=_need(entry, "location", "privacy", str, where),
        statement=_need(entry, "statement", "privacy", str, where),
        reported_epsilon=float(eps), deltas=(float(delta),), delta_stated=True,
        noise_multipliers=() if sigma is None else (float(sigma),),
        sigma_stated=sigma is not None,
        sigma_note=entry.get("sigma_note", "noise std / L2 sensitivity of one step's sum "
                                           f"under {relation} (claims file)"),
        dataset_size=n, batch_size=batch, steps=steps, steps_stated=steps_stated,
        paper_accounting=entry.get("accounting", "not stated in the claims file"),
        paper_sampling=sampling, paper_relation=relation, real_sampling=real,
        missing="; ".join([entry.get("missing", "")] + notes).strip("; ")), notes


def domain_from(table: dict, where: str):
    """A ``domain`` table as a Box, Ball or FiniteSet (InputError on anything else)."""
    if not isinstance(table, dict) or "kind" not in table:
        raise InputError(f"{where}: domain must be a table with a kind (box, ball, finite)")
    kind = table["kind"]
    args = {k: v for k, v in table.items() if k != "kind"}
    try:
        if kind == "box":
            return Box(args["low"], args["high"], tuple(args.get("shape", ())))
        if kind == "ball":
            norm = args.get("norm", 2)
            return Ball(args["radius"], math.inf if norm == "inf" else norm,
                        tuple(args.get("shape", (1,))))
        if kind == "finite":
            return FiniteSet(tuple(args["records"]))
    except KeyError as exc:
        raise InputError(f"{where}: a {kind} domain needs {exc.args[0]!r}") from exc
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: domain: {exc}") from exc
    raise InputError(f"{where}: domain kind must be box, ball or finite, got {kind!r}")


@dataclasses.dataclass(frozen=True)
class _QueryOnly:
    """What the sensitivity property test needs: a query, its claim, and a domain."""

    name: str
    query: object
    sensitivity: Sensitivity
    domain: object
    claim: PrivacyClaim


def load_claims_file(path) -> dict:
    """Parse and validate a claims file: {"paper", "privacy", "sensitivity", "audit"}.

    Raises
    ------
    InputError
        A missing file, invalid TOML, an unknown section or key, a missing or bad
        value (the message names the entry and the key).
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"claims file not found: {path}")
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path} is not valid TOML: {exc}") from exc
    unknown = set(data) - {"paper", "privacy", "sensitivity", "audit"}
    if unknown:
        raise InputError(f"{path}: unknown section(s) {sorted(unknown)}; known: paper, "
                         "privacy, sensitivity, audit")
    paper = data.get("paper", {})
    if not isinstance(paper, dict) or not isinstance(paper.get("title"), str):
        raise InputError(f"{path}: needs [paper] with a title")
    title = paper["title"] + (f" ({paper['version']})" if paper.get("version") else "")
    out = {"paper": title, "privacy": [], "sensitivity": [], "audit": []}
    ids = set()
    for kind in ("privacy", "sensitivity", "audit"):
        entries = data.get(kind, [])
        if not isinstance(entries, list):
            raise InputError(f"{path}: [{kind}] must be an array of tables ([[{kind}]])")
        for i, e in enumerate(entries):
            where = f"{path}: [[{kind}]] #{i + 1} ({e.get('id', 'no id')})"
            extra = set(e) - _KEYS[kind]
            if extra:
                raise InputError(f"{where}: unknown key(s) {sorted(extra)}; known: "
                                 f"{sorted(_KEYS[kind])}")
            for key in ("id", "location", "statement"):
                _need(e, key, kind, str, where)
            if e["id"] in ids:
                raise InputError(f"{where}: duplicate id {e['id']!r}")
            ids.add(e["id"])
            out[kind].append((e, where))
    if not ids:
        raise InputError(f"{path}: no claims ([[privacy]], [[sensitivity]] or [[audit]])")
    return out


def check_claims_file(path, budget: VariantBudget, seed: int = 0, tick=lambda name: None):
    """Check every claim of a claims file; return (verdicts, sections, meta).

    Raises InputError on bad input (module docstring).
    """
    spec = load_claims_file(path)
    paper = spec["paper"]
    verdicts: list[Verdict] = []
    rows = []
    for e, where in spec["privacy"]:
        entry, notes = privacy_entry(e, paper, where)
        tick(entry.id)
        vs = check_reported(entry, seed=None)
        verdicts += vs
        for v in vs:
            c = (v.evidence.get("combinations") or [{}])[0]
            rows.append([entry.id, f"{entry.reported_epsilon:g}", v.reading,
                         ", ".join(f"{k} {x:.4g}" for k, x in
                                   c.get("paper_accounting", {}).items()) or "-",
                         ", ".join(f"{k} {x:.4g}" for k, x in
                                   c.get("real_sampling", {}).items()) or "-", v.verdict])
    for e, where in spec["sensitivity"]:
        tick(e["id"])
        claim = Claim(e["id"], paper, e["location"], e["statement"], "hypothesis property test",
                      kind="sensitivity")
        query = load_variant(_need(e, "query", "sensitivity", str, where), as_mechanism=False)
        if not callable(query):
            raise InputError(f"{where}: query {e['query']!r} is not callable")
        norm = e.get("norm", 2)
        norm = math.inf if norm == "inf" else norm
        relation = e.get("relation", "add-remove")
        if relation not in RELATIONS:
            raise InputError(f"{where}: relation must be one of {RELATIONS}, got {relation!r}")
        try:
            sens = Sensitivity(float(_need(e, "value", "sensitivity", (int, float), where)),
                               norm)
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from exc
        obj = _QueryOnly(e["id"], query, sens, domain_from(e.get("domain"), where),
                         PrivacyClaim(1.0, 0.0, relation))
        v = check_sensitivity_claim(obj, budget, seed)
        verdicts.append(dataclasses.replace(v, claim=claim))
    for e, where in spec["audit"]:
        tick(e["id"])
        claim = Claim(e["id"], paper, e["location"], e["statement"],
                      "empirical audit (Clopper-Pearson certificate)", kind="audit")
        mech = load_variant(_need(e, "mechanism", "audit", str, where))
        v, _ = check_audit_claim(mech, budget, seed)
        verdicts.append(dataclasses.replace(v, claim=claim))
    sections = []
    if rows:
        sections.append({
            "title": "Privacy numbers recomputed",
            "text": ("Each reported epsilon against every accountant, under the sampling the "
                     "paper's accountant assumed and under the sampling the implementation "
                     "performs (a shuffled pass: one unamplified Gaussian per epoch). "
                     "Reproduction tolerance 5 % relative."),
            "table": {"columns": ["claim", "reported", "reading", "paper's accounting",
                                  "real sampling", "verdict"], "rows": rows}})
    meta = {"claims file": str(path), "paper": paper, "seed": seed,
            "budget": budget.to_dict()}
    return verdicts, sections, meta
