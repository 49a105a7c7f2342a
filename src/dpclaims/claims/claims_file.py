"""Claims files: a researcher's paper as data, read and validated before any work.

``dpclaims check CLAIMS.toml`` reads a TOML file with a ``[paper]`` table (``title``,
optional ``version``) and arrays of claims:

``[[privacy]]`` a reported (epsilon, delta)
    The mechanism as a DP-SGD-style description: ``reported_epsilon`` (read at the
    precision it is printed with: ``2.38`` stands for [2.375, 2.385]; an integer is a
    target, exact), ``delta``, ``noise_multiplier`` and ``noise_relative_to`` (below;
    omitted sigma: it is calibrated to the reported epsilon with the paper's
    accountant, and the question becomes what that sigma really gives),
    ``dataset_size``, ``batch_size`` (or ``sampling_rate``, batch = round(rate * N)),
    ``steps`` or ``epochs`` (steps = ceil(epochs * N / batch), rounded up and said
    so) or, where the paper does not state them, ``plausible_epochs`` (a list: the
    verdict is then at best inconclusive), ``relation`` (default ``add-remove``, as
    DP-SGD and dp_accounting), ``sampling`` (what the paper's accountant assumed:
    ``poisson``, ``without-replacement``, ``shuffle``, ``fixed-order``, ``none``),
    ``real_sampling`` (what the implementation does; default ``sampling``),
    ``accounting`` (the paper's words for its accountant), ``missing`` (notes).
    Every quantity a paper may leave unstated is optional, ``dataset_size`` included:
    the claim is then not-checkable, naming what is missing.
``[[sensitivity]]`` a claimed sensitivity
    ``query = "module:function"`` (or ``"file.py:function"``), ``value``, ``norm``
    (1, 2 or "inf"), ``relation`` and a record ``domain`` (``{kind = "box", low,
    high, shape}``, ``{kind = "ball", radius, norm, shape}``, ``{kind = "finite",
    records}`` or ``{kind = "product", factors = [{kind = "ball", radius = 1.0, shape =
    [3]}, {kind = "box", low = -1.0, high = 1.0}]}``: records concatenate one record
    of each factor, here [x_0, x_1, x_2, y]).
``[[audit]]`` a mechanism's privacy claim
    ``mechanism = "module:object"``.

Every entry needs ``id`` (unique in the file), ``location`` and ``statement`` (the
paper's words, quoted exactly). An unknown key, a missing one, a text left empty (or
only whitespace: ``id``, ``statement``, the paper's ``title``, any text given), or a
value of the wrong type (a string where a number belongs, a boolean, a float where a
count belongs) is bad input
(:class:`~dpclaims.claims.InputError`, exit 2) naming the entry and the key. This
module imports neither the accountants nor the audit engine: every such error
answers within a fraction of a second.

The noise multiplier convention (``noise_relative_to``)
-------------------------------------------------------
A paper's sigma is written as printed. ``noise_relative_to`` says what the paper's
noise standard deviation is a multiple of:

``"clipping-norm"`` (default)
    noise std = sigma x C, with C the clipping norm of each record's contribution:
    DP-SGD's noise multiplier (Abadi et al. 2016) and what most papers print. A sum
    of contributions clipped to C has L2 sensitivity C under add-remove and 2C under
    replace-one, so under replace-one the suite accounts sigma / 2 (the multiplier
    relative to the sensitivity), and says so.
``"sensitivity"``
    noise std = sigma x the L2 sensitivity of one step's query under ``relation``
    (the accounting libraries' convention): accounted as is.

Under add-remove the two coincide.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, published as tomli
    import tomli as tomllib

from dpclaims.analysis.validation import InputError, check_fits_in_memory, steps_for_epochs
from dpclaims.analysis.vocabulary import RELATIONS, SAMPLINGS
from dpclaims.claims.reported import ReportedPrivacy

NOISE_RELATIVE_TO = ("clipping-norm", "sensitivity")
_COMMON = {"id", "location", "statement"}
_KEYS = {
    "privacy": _COMMON | {"reported_epsilon", "delta", "noise_multiplier", "noise_relative_to",
                          "sigma_note", "dataset_size", "batch_size", "sampling_rate", "steps",
                          "epochs", "plausible_epochs", "relation", "sampling", "real_sampling",
                          "accounting", "missing"},
    "sensitivity": _COMMON | {"query", "value", "norm", "relation", "domain"},
    "audit": _COMMON | {"mechanism"},
}


class _Printed(float):
    """A TOML float that remembers its literal (the precision a number is printed with)."""

    text: str

    def __new__(cls, literal: str):
        out = super().__new__(cls, literal)
        out.text = literal.replace("_", "")
        return out


def _kind_of(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _number(entry: dict, key: str, where: str, *, integer: bool = False,
            positive: bool = True):
    """``entry[key]`` as a finite number (> 0 by default; an integer if ``integer``):
    InputError naming the entry, the key and the value otherwise."""
    value = entry[key]
    want = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            integer and not isinstance(value, int)):
        raise InputError(f"{where}: {key} must be {want}, got {_kind_of(value)} {value!r}")
    if not math.isfinite(value) or (positive and value <= 0):
        raise InputError(f"{where}: {key} must be a finite {want[3:] if integer else 'number'}"
                         f"{' > 0' if positive else ''}, got {value!r}")
    return value


def _string(entry: dict, key: str, where: str, allowed=None, default=None) -> str:
    if key not in entry:
        if default is None:
            raise InputError(f"{where}: missing key {key!r}")
        return default
    value = entry[key]
    if not isinstance(value, str):
        raise InputError(f"{where}: {key} must be a string, got {_kind_of(value)} {value!r}")
    if not value.strip():
        raise InputError(f"{where}: {key} must not be empty, got {value!r}")
    if allowed is not None and value not in allowed:
        raise InputError(f"{where}: {key} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _printed(value) -> str:
    if isinstance(value, _Printed):
        return value.text
    return str(int(value)) if isinstance(value, int) else repr(float(value))


def _batch_size(entry: dict, where: str, n, notes: list) -> int | None:
    """The entry's batch size, given or from ``sampling_rate`` x N (a note says so).

    Parameters
    ----------
    entry : dict
        The ``[[privacy]]`` table.
    where : str
        The entry's name, for error messages.
    n : int or None
        The dataset size, if given.
    notes : list of str
        Notes on how the entry was read; appended to.

    Returns
    -------
    int or None
        The batch size, or None if it cannot be known.

    Raises
    ------
    InputError
        On both keys given, a batch above N, or a rate outside (0, 1].
    """
    if "batch_size" in entry and "sampling_rate" in entry:
        raise InputError(f"{where}: give at most one of batch_size and sampling_rate")
    batch = None
    if "batch_size" in entry:
        batch = _number(entry, "batch_size", where, integer=True)
        if n is not None and batch > n:
            raise InputError(f"{where}: batch_size {batch} exceeds dataset_size {n}")
    elif "sampling_rate" in entry:
        rate = _number(entry, "sampling_rate", where)
        if not 0 < rate <= 1:
            raise InputError(f"{where}: sampling_rate must lie in (0, 1], got {rate!r}")
        if n is not None:
            batch = max(1, round(rate * n))
            notes.append(f"batch size {batch} = round(sampling_rate {rate:g} x N {n})")
    return batch


def _step_counts(entry: dict, where: str, n, batch, sampling: str,
                 notes: list) -> tuple[tuple, bool]:
    """The entry's step counts, given or from (plausible) epochs, and whether stated.

    Parameters
    ----------
    entry : dict
        The ``[[privacy]]`` table.
    where : str
        The entry's name, for error messages.
    n, batch : int or None
        The dataset and batch sizes, if known.
    sampling : str
        The paper's sampling.
    notes : list of str
        Notes on how the entry was read; appended to.

    Returns
    -------
    tuple
        (steps, steps_stated): the step counts (empty if unknown) and False when the
        paper gives only plausible epochs.

    Raises
    ------
    InputError
        On more than one of steps / epochs / plausible_epochs, or a bad value.
    """
    given = [k for k in ("steps", "epochs", "plausible_epochs") if k in entry]
    if len(given) > 1:
        raise InputError(f"{where}: give at most one of steps, epochs and plausible_epochs, "
                         f"got {given}")
    steps_stated = "plausible_epochs" not in entry
    steps: tuple = ()
    if "steps" in entry:
        steps = (_number(entry, "steps", where, integer=True),)
    elif given:
        raw = entry[given[0]]
        if given[0] == "plausible_epochs" and not isinstance(raw, list):
            raise InputError(f"{where}: plausible_epochs must be an array, got "
                             f"{_kind_of(raw)} {raw!r}")
        epoch_list = raw if isinstance(raw, list) else [raw]
        if not epoch_list:
            raise InputError(f"{where}: {given[0]} is empty")
        for i, _ in enumerate(epoch_list):
            _number({given[0]: epoch_list[i]}, given[0], where)
        needs = [k for k, v in (("dataset_size", n), ("a batch size", batch)) if v is None]
        if needs or sampling == "none":
            if sampling != "none":
                notes.append(f"{given[0]} given but not {' nor '.join(needs)}: the step count "
                             "is unknown")
        if not needs:
            out = []
            for epochs in epoch_list:
                k, note = steps_for_epochs(epochs, n, batch)
                notes += [note] if note else []
                out.append(k)
            steps = tuple(out)
        if not steps_stated:
            notes.append(f"epochs not stated by the paper: plausible values {epoch_list} tried")
    return steps, steps_stated


def _noise_multiplier(entry: dict, where: str, relation: str, notes: list):
    """The multiplier accounted (the printed one under the entry's convention) and its note.

    Parameters
    ----------
    entry : dict
        The ``[[privacy]]`` table.
    where : str
        The entry's name, for error messages.
    relation : str
        The neighbouring relation.
    notes : list of str
        Notes on how the entry was read; appended to.

    Returns
    -------
    tuple
        (sigma, accounted, sigma_note): the printed multiplier (None if not given), the
        one accounted (None likewise), and the note on sigma (None if there is none).

    Raises
    ------
    InputError
        On a bad value, or noise_relative_to without noise_multiplier.
    """
    sigma = accounted = None
    if "noise_multiplier" in entry:
        sigma = float(_number(entry, "noise_multiplier", where))
    relative_to = _string(entry, "noise_relative_to", where, NOISE_RELATIVE_TO, "clipping-norm")
    if "noise_relative_to" in entry and sigma is None:
        raise InputError(f"{where}: noise_relative_to is given but noise_multiplier is not")
    sigma_note = _string(entry, "sigma_note", where) if "sigma_note" in entry else None
    if sigma is not None:
        if relative_to == "clipping-norm" and relation == "replace-one":
            accounted = sigma / 2
            convention = (f"noise std = {sigma:g} x C (clipping norm, as printed); a sum "
                          f"clipped to C has sensitivity 2C under replace-one, so the "
                          f"multiplier accounted is {sigma:g} / 2 = {accounted:g}")
        else:
            accounted = sigma
            convention = (f"noise std = {sigma:g} x "
                          + ("C (clipping norm, as printed), the sensitivity under add-remove"
                             if relative_to == "clipping-norm" else
                             f"the step's L2 sensitivity under {relation}"))
        notes.append(convention)
        sigma_note = (sigma_note + "; " if sigma_note else "") + convention
    return sigma, accounted, sigma_note


def privacy_entry(entry: dict, paper: str, where: str) -> tuple[ReportedPrivacy, list[str]]:
    """A ``[[privacy]]`` table as a :class:`ReportedPrivacy` and the notes on how it was read.

    Parameters
    ----------
    entry : dict
        The ``[[privacy]]`` table as parsed from TOML.
    paper : str
        The paper's id.
    where : str
        The entry's name, for error messages.

    Returns
    -------
    tuple
        (reported, notes): the entry as a :class:`ReportedPrivacy` and the notes.

    Raises
    ------
    InputError
        Naming the entry and key, on a missing or bad value.
    """
    notes = []
    if "reported_epsilon" not in entry:
        raise InputError(f"{where}: missing key 'reported_epsilon'")
    eps = _number(entry, "reported_epsilon", where)
    delta = None
    if "delta" in entry:
        delta = _number(entry, "delta", where)
        if not 0 < delta < 1:
            raise InputError(f"{where}: delta must lie in (0, 1), got {delta!r}")
    n = _number(entry, "dataset_size", where, integer=True) if "dataset_size" in entry else None
    sampling = _string(entry, "sampling", where, SAMPLINGS, "poisson")
    real = _string(entry, "real_sampling", where, SAMPLINGS, sampling)
    relation = _string(entry, "relation", where, RELATIONS, "add-remove")
    if "relation" not in entry:
        notes.append("relation not given: add-remove assumed (DP-SGD's and dp_accounting's)")
    batch = _batch_size(entry, where, n, notes)
    steps, steps_stated = _step_counts(entry, where, n, batch, sampling, notes)
    sigma, accounted, sigma_note = _noise_multiplier(entry, where, relation, notes)
    for key in ("accounting", "missing", "id", "location", "statement"):
        if key in entry:
            _string(entry, key, where)
    reported = ReportedPrivacy(
        id=entry["id"], paper=paper, location=entry["location"],
        statement=entry["statement"], reported_epsilon=float(eps),
        deltas=() if delta is None else (float(delta),), delta_stated=delta is not None,
        noise_multipliers=() if sigma is None else (float(accounted),),
        sigma_stated=sigma is not None,
        sigma_note=sigma_note or "not stated in the claims file",
        dataset_size=n, batch_size=batch, steps=steps, steps_stated=steps_stated,
        paper_accounting=entry.get("accounting", "not stated in the claims file"),
        paper_sampling=sampling, paper_relation=relation, real_sampling=real,
        missing="; ".join([entry.get("missing", "")] + notes).strip("; "),
        reported_epsilon_text=_printed(eps))
    return reported, notes


_DOMAIN_KEYS = {"box": {"low", "high", "shape"}, "ball": {"radius", "norm", "shape"},
                "finite": {"records"}, "product": {"factors", "shape"}}


def domain_from(table, where: str):
    """A ``domain`` table as a record domain (:mod:`dpclaims.analysis.domains`).

    Parameters
    ----------
    table : dict
        ``{kind = "box", low, high, shape}``, ``{kind = "ball", radius, norm, shape}``
        (norm 1, 2 or "inf", as in a report), ``{kind = "finite", records}`` or
        ``{kind = "product", factors = [table, ...]}`` (each factor a table of this
        form; a nested product is flattened; an optional ``shape`` must be the
        product's, ``[n]``, as in a report's ``to_dict()``).
    where : str
        The entry, for the messages.

    Returns
    -------
    Box, Ball, FiniteSet or Product

    Raises
    ------
    InputError
        Not a table, an unknown kind, a missing or unknown key, or a value the domain
        refuses, naming the entry, the factor and the value.
    """
    from dpclaims.analysis.domains import Ball, Box, FiniteSet, Product

    if not isinstance(table, dict) or "kind" not in table:
        raise InputError(f"{where}: domain must be a table with a kind (box, ball, finite, "
                         f"product), got {_kind_of(table)} {table!r:.80}")
    kind = table["kind"]
    if not isinstance(kind, str) or kind not in _DOMAIN_KEYS:
        raise InputError(f"{where}: domain kind must be box, ball, finite or product, got "
                         f"{kind!r}")
    args = {k: v for k, v in table.items() if k != "kind"}
    unknown = sorted(set(args) - _DOMAIN_KEYS[kind])
    if unknown:
        raise InputError(f"{where}: unknown key(s) {unknown} in a {kind} domain (allowed: "
                         f"{sorted(_DOMAIN_KEYS[kind])})")
    given = args.get("shape", ())
    if isinstance(given, list) and all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                       for v in given):
        # a record the property test holds several times over (bounds, pairs) must fit
        try:
            check_fits_in_memory(math.prod(given), 8, f"domain shape {given}",
                                 "values of one record, 8 bytes each")
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from None

    def shape(default):
        value = args.get("shape", default)
        return tuple(value) if isinstance(value, list) else value

    try:
        if kind == "box":
            return Box(args["low"], args["high"], shape(()))
        if kind == "ball":
            norm = args.get("norm", 2)
            norm = {"1": 1, "2": 2, "inf": math.inf}.get(norm, norm) if isinstance(norm, str) \
                else norm
            return Ball(args["radius"], norm, shape((1,)))
        if kind == "finite":
            return FiniteSet(tuple(args["records"]))
        factors = args["factors"]
        if not isinstance(factors, list) or not factors:
            raise InputError(f"{where}: a product domain needs factors = [table, ...] (at "
                             f"least one), got {_kind_of(factors)} {factors!r:.80}")
        out = Product(*(domain_from(f, f"{where}: product factor {i}")
                        for i, f in enumerate(factors)))
        if "shape" in args and args["shape"] not in (list(out.shape), out.shape[0]):
            raise InputError(f"{where}: a product domain's shape is [{out.shape[0]}] (the "
                             f"sum of its factors' sizes), got shape = {args['shape']!r}")
        return out
    except KeyError as exc:
        raise InputError(f"{where}: a {kind} domain needs {exc.args[0]!r}") from exc
    except InputError:
        raise
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: domain: {exc}") from exc


def _spec(entry: dict, key: str, where: str) -> str:
    value = _string(entry, key, where)
    file, sep, name = value.rpartition(":")
    if not sep or not file or not name.isidentifier():
        raise InputError(f"{where}: {key} must be 'module:name' or 'file.py:name', got "
                         f"{value!r}")
    return value


def sensitivity_entry(entry: dict, where: str) -> dict:
    """A ``[[sensitivity]]`` table, validated: {query, value, norm, relation, domain}."""
    if "value" not in entry:
        raise InputError(f"{where}: missing key 'value'")
    norm = entry.get("norm", 2)
    if norm not in (1, 2, "inf") or isinstance(norm, bool):
        raise InputError(f"{where}: norm must be 1, 2 or \"inf\", got {norm!r}")
    return {"query": _spec(entry, "query", where),
            "value": float(_number(entry, "value", where)),
            "norm": math.inf if norm == "inf" else norm,
            "relation": _string(entry, "relation", where, RELATIONS, "add-remove"),
            "domain": domain_from(entry.get("domain"), where)}


def load_claims_file(path) -> dict:
    """Parse and validate a claims file.

    Returns
    -------
    dict
        ``{"path", "paper", "privacy": [(ReportedPrivacy, notes), ...],
        "sensitivity": [(entry, validated, where), ...], "audit": [(entry, spec,
        where), ...]}``.

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
        data = tomllib.loads(p.read_text(), parse_float=_Printed)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path} is not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text: {exc}") from exc
    unknown = set(data) - {"paper", "privacy", "sensitivity", "audit"}
    if unknown:
        raise InputError(f"{path}: unknown section(s) {sorted(unknown)}; known: paper, "
                         "privacy, sensitivity, audit")
    paper = data.get("paper", {})
    if not isinstance(paper, dict) or not isinstance(paper.get("title"), str):
        raise InputError(f"{path}: needs [paper] with a title")
    _string(paper, "title", f"{path}: [paper]")
    version = _string(paper, "version", f"{path}: [paper]") if "version" in paper else None
    title = paper["title"] + (f" ({version})" if version else "")
    out = {"path": str(path), "paper": title, "privacy": [], "sensitivity": [], "audit": []}
    ids = set()
    for kind in ("privacy", "sensitivity", "audit"):
        entries = data.get(kind, [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise InputError(f"{path}: [{kind}] must be an array of tables ([[{kind}]])")
        for i, e in enumerate(entries):
            label = e.get("id")
            if label is None or not str(label).strip():
                label = "no id"
            where = f"{path}: [[{kind}]] #{i + 1} ({label})"
            extra = set(e) - _KEYS[kind]
            if extra:
                raise InputError(f"{where}: unknown key(s) {sorted(extra)}; known: "
                                 f"{sorted(_KEYS[kind])}")
            for key in ("id", "location", "statement"):
                _string(e, key, where)
            if e["id"] in ids:
                raise InputError(f"{where}: duplicate id {e['id']!r}")
            ids.add(e["id"])
            if kind == "privacy":
                out[kind].append(privacy_entry(e, title, where))
            elif kind == "sensitivity":
                out[kind].append((e, sensitivity_entry(e, where), where))
            else:
                out[kind].append((e, _spec(e, "mechanism", where), where))
    if not ids:
        raise InputError(f"{path}: no claims ([[privacy]], [[sensitivity]] or [[audit]])")
    return out
