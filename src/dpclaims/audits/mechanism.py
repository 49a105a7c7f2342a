"""Mechanisms, privacy claims and neighbouring pairs: what an audit is run on.

The vocabulary is docs/architecture.md's. A **mechanism** is a randomised function of a
dataset with a privacy claim; the library's protocol (:class:`Mechanism`) asks
for a ``name``, a :class:`PrivacyClaim` and a vectorised
``release(data, rng, n) -> ndarray (n, ...)`` giving n independent outputs in one
call. Optionally it has the noiseless ``query(data) -> ndarray`` and its claimed
``sensitivity`` (:class:`Sensitivity`, or a plain number read as the L2
sensitivity), which property tests and the canary search use, and its record
``domain`` (:mod:`dpclaims.analysis.domains`), from which they draw datasets when
no ``data`` is given.

Datasets (:mod:`dpclaims.analysis.records`)
-------------------------------------------
A dataset is either an array whose leading axis indexes records, shape
``(N, ...)``, or a tuple of such arrays sharing the leading axis (e.g.
``(x (N, d), y (N,))``); a record is then ``data[i]``, respectively the tuple of
``component[i]``. :class:`NeighbouringPair` holds two datasets at distance one
under a stated relation, and checks that they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

import dp_accounting
import numpy as np

from dpclaims.analysis.domains import check_domain
from dpclaims.analysis.records import (  # noqa: F401  (re-exported: the dataset helpers)
    add_record,
    differing_records,
    get_record,
    n_records,
    records_equal,
    remove_record,
    replace_record,
)
from dpclaims.analysis.validation import check_count, check_delta, check_epsilon
from dpclaims.analysis.vocabulary import RELATIONS  # noqa: F401  (re-exported)
from dpclaims.analysis.vocabulary import check_relation as _vocabulary_relation
from dpclaims.audits.capabilities import (
    AlgorithmCapabilities,
    MechanismCapabilities,
    read_mechanism,
)


class InvalidMechanismError(TypeError, ValueError):
    """An object is not a usable mechanism, or its release misbehaved.

    Subclasses both TypeError (not a mechanism) and ValueError (a release of the
    wrong shape or with non-finite values), so callers may catch either.
    """


_COMPLEX_ADVICE = ("return the real and imaginary parts as separate real coordinates, "
                   "e.g. np.concatenate([z.real, z.imag], axis=-1)")


def real_array(value, what: str) -> np.ndarray:
    """``value`` (a user's output, data or records) as a float array, or a clear error.

    The one conversion of what a user's code returns: numbers, booleans (read as 0 and
    1), nested lists of numbers, a pandas object of numbers and a masked array without
    masked entries are accepted; nothing is dropped or guessed.

    Parameters
    ----------
    value : array-like
    what : str
        Who produced it, for the message (e.g. ``"mechanism 'm': release(data, rng, n=2)"``).

    Raises
    ------
    InvalidMechanismError
        Naming ``what`` and the type or dtype got: strings (even numeric ones), dicts or
        other objects, ragged nested sequences, complex numbers (whose imaginary part a
        float conversion would drop: the message says to return the real and imaginary
        parts as separate real coordinates), dates, structured arrays, masked entries.
    """
    got = type(value).__name__
    if isinstance(value, np.ma.MaskedArray):
        masked = int(np.ma.count_masked(value))
        if masked:
            raise InvalidMechanismError(f"{what} gave a masked array with {masked} masked "
                                        "value(s): give every value (a masked value is not "
                                        "a number the audit can use)")
        value = value.data
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise InvalidMechanismError(f"{what} must give an array of real numbers, got a "
                                    f"{got} that numpy cannot make one array of ({exc})"
                                    ) from exc
    kind = raw.dtype.kind
    dtype = f"{got}, dtype {raw.dtype}"
    if kind == "c" or (kind == "O" and any(isinstance(x, complex) for x in raw.flat)):
        raise InvalidMechanismError(f"{what} gave complex numbers ({dtype}): dpclaims audits "
                                    "real numbers only, and dropping the imaginary part "
                                    "would audit another mechanism; " + _COMPLEX_ADVICE)
    if kind in "US" or (kind == "O" and any(isinstance(x, (str, bytes)) for x in raw.flat)):
        raise InvalidMechanismError(f"{what} must give real numbers, got strings ({dtype})")
    if kind not in "biufO":
        raise InvalidMechanismError(f"{what} must give real numbers, got {dtype}")
    try:
        return np.asarray(raw, dtype=float)
    except (TypeError, ValueError) as exc:
        kinds = sorted({type(x).__name__ for x in raw.flat})[:5]
        raise InvalidMechanismError(f"{what} must give real numbers, got {dtype} holding "
                                    f"{', '.join(kinds)} ({exc})") from exc


def check_relation(relation: str) -> str:
    """Return ``relation``; raise ValueError unless it is one of :data:`RELATIONS`."""
    return _vocabulary_relation(relation)


@dataclass(frozen=True)
class PrivacyClaim:
    """What a mechanism claims: (epsilon, delta)-DP under a neighbouring relation.

    Parameters
    ----------
    epsilon : float
        Claimed epsilon (nats), finite and > 0.
    delta : float
        Claimed delta, in [0, 1).
    relation : {"replace-one", "add-remove"}
        Neighbouring relation the claim is made under: replace one record
        (bounded DP, N public) or add / remove one record (unbounded DP).
    dp_event : dp_accounting.DpEvent, optional
        What the mechanism does, for accounting (e.g.
        ``GaussianDpEvent(noise_multiplier)`` composed over steps). The noise
        multiplier is relative to the sensitivity under ``relation``.

    Raises
    ------
    ValueError
        epsilon <= 0 or not finite, delta outside [0, 1), an unknown relation.
    TypeError
        ``dp_event`` that is not a ``dp_accounting.DpEvent``.
    """

    epsilon: float
    delta: float
    relation: str = "replace-one"
    dp_event: dp_accounting.DpEvent | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        check_relation(self.relation)
        if self.dp_event is not None and not isinstance(self.dp_event, dp_accounting.DpEvent):
            raise TypeError(f"dp_event must be a dp_accounting.DpEvent or None, got "
                            f"{type(self.dp_event).__name__}: {self.dp_event!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "relation": self.relation,
                "dp_event": None if self.dp_event is None else repr(self.dp_event)}


@dataclass(frozen=True)
class Sensitivity:
    """A claimed sensitivity of a query: sup ||q(D) - q(D')||_norm over neighbours.

    Parameters
    ----------
    value : float
        The bound, finite and > 0, in the query's units.
    norm : {1, 2, inf}, default 2
        The vector norm (``numpy.linalg.norm`` order) of the difference.
    """

    value: float
    norm: float = 2

    def __post_init__(self) -> None:
        v = float(self.value)
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"sensitivity value must be a finite number > 0, got {self.value!r}")
        object.__setattr__(self, "value", v)
        if self.norm not in (1, 2, math.inf):
            raise ValueError(f"sensitivity norm must be 1, 2 or inf, got {self.norm!r}")

    def distance(self, a, b) -> float:
        """``||ravel(a) - ravel(b)||_norm``; ValueError on mismatched shapes."""
        a, b = np.asarray(a, float), np.asarray(b, float)
        if a.shape != b.shape:
            raise ValueError(f"query outputs have different shapes {a.shape} and {b.shape}")
        return float(np.linalg.norm((a - b).ravel(), ord=self.norm))


@runtime_checkable
class Mechanism(Protocol):
    """The mechanism protocol (docs/architecture.md, "Adding an algorithm family").

    Required: ``name`` (str), ``claim`` (:class:`PrivacyClaim`) and
    ``release(data, rng, n) -> ndarray`` of shape ``(n, ...)``: n independent
    outputs of the mechanism on ``data``, drawn with the ``numpy.random.Generator``
    ``rng`` in one vectorised call. Optional: ``query(data) -> ndarray`` (the
    noiseless statistic) with ``sensitivity`` (:class:`Sensitivity`, or a plain
    number meaning the L2 sensitivity), and ``domain`` (a
    :class:`~dpclaims.analysis.domains.Box`, ``Ball``, ``FiniteSet`` or ``Product``: the set
    records come from).
    """

    name: str
    claim: PrivacyClaim

    def release(self, data, rng: np.random.Generator, n: int) -> np.ndarray: ...


def validate_mechanism(obj) -> MechanismCapabilities:
    """``obj``'s members read once (:func:`~dpclaims.audits.capabilities.read_mechanism`)
    and checked against the :class:`Mechanism` protocol.

    Returns
    -------
    MechanismCapabilities
        With ``sensitivity`` as a :class:`Sensitivity` (or None) and its
        ``sensitivity_note``; itself a mechanism (``name``, ``claim``, ``release``). A
        value already validated is returned as it is.

    Raises
    ------
    InvalidMechanismError
        Naming the missing or wrong attribute: no string ``name``, no
        :class:`PrivacyClaim` ``claim``, no callable ``release``, a ``query``
        that is not callable, a ``sensitivity`` that is neither a
        :class:`Sensitivity` nor a positive number, or a ``domain`` that is not a
        record domain.
    """
    if isinstance(obj, MechanismCapabilities) and obj.validated:
        return obj
    caps = read_mechanism(obj)
    name = caps.name
    if not isinstance(name, str) or not name:
        what = f"{type(caps.source).__name__} object {caps.source!r:.80}"
        raise InvalidMechanismError(f"{what} is not a mechanism: it needs a non-empty str "
                                    f"attribute `name`, got {name!r}")
    claim = caps.claim
    if not isinstance(claim, PrivacyClaim):
        raise InvalidMechanismError(f"mechanism {name!r}: `claim` must be a PrivacyClaim, got "
                                    f"{type(claim).__name__}")
    if not callable(caps.release):
        raise InvalidMechanismError(f"mechanism {name!r} has no callable "
                                    "`release(data, rng, n)`")
    if caps.query is not None and not callable(caps.query):
        raise InvalidMechanismError(f"mechanism {name!r}: `query` must be callable")
    sensitivity = _as_sensitivity(caps.sensitivity, name)
    if caps.domain is not None:
        try:
            check_domain(caps.domain)
        except TypeError as exc:
            raise InvalidMechanismError(f"mechanism {name!r}: `domain`: {exc}") from exc
    return replace(caps, sensitivity=sensitivity, validated=True,
                   sensitivity_note=_sensitivity_note(caps.sensitivity))


def validate_data(obj) -> None:
    """Check the records a mechanism (or an algorithm) brings, before any work.

    ``data`` must be a dataset (:mod:`dpclaims.analysis.records`) of finite numbers;
    with a record ``domain``, every record of ``data`` and every one of ``candidates``
    must lie in it (a record outside the declared domain is bad input, not a finding);
    without one, ``candidates`` must be finite.

    Raises
    ------
    InvalidMechanismError
        Naming the attribute, the first offending record's index and why (non-finite,
        wrong shape for the domain, outside the domain).
    """
    from dpclaims.analysis.records import get_record

    caps = obj if isinstance(obj, (MechanismCapabilities, AlgorithmCapabilities)) \
        else read_mechanism(obj)
    name = "?" if caps.name is None else caps.name
    domain, data = caps.domain, caps.data

    def finite(record, what: str) -> bool:
        parts = tuple(record.values()) if isinstance(record, dict) \
            else record if isinstance(record, tuple) else (record,)
        return all(bool(np.all(np.isfinite(real_array(p, what)))) for p in parts)

    def describe_misfit(record) -> str:
        shape = getattr(domain, "shape", None)
        got = np.shape(record) if not isinstance(record, tuple) else "a tuple"
        if shape is not None and got != tuple(shape):
            return f"has shape {got}, but the domain's records have shape {tuple(shape)}"
        why = getattr(domain, "misfit", None)  # a Product names the factor
        if why is not None and why(record) is not None:
            return f"{why(record)} of the declared domain"
        return f"lies outside the declared domain {domain.to_dict()}"

    if data is not None:
        try:
            n = n_records(data)
        except ValueError as exc:
            raise InvalidMechanismError(f"mechanism {name!r}: `data`: {exc}") from exc
        comps = tuple(data.values()) if isinstance(data, dict) \
            else data if isinstance(data, tuple) else (data,)
        for c in comps:
            arr = real_array(c, f"mechanism {name!r}: `data`")
            bad = ~np.isfinite(arr)
            if bad.any():
                first = tuple(int(i) for i in np.argwhere(bad)[0])
                raise InvalidMechanismError(
                    f"mechanism {name!r}: `data` has {int(bad.sum())} non-finite value(s); "
                    f"first in record {first[0]} at index {first}: {arr[first]!r}")
        if domain is not None:
            for i in range(n):
                record = get_record(data, i)
                if not domain.contains(record):
                    raise InvalidMechanismError(
                        f"mechanism {name!r}: record {i} of `data` {describe_misfit(record)}")
    candidates = caps.candidates
    if candidates is not None:
        try:
            items = list(candidates)
        except TypeError as exc:
            raise InvalidMechanismError(f"mechanism {name!r}: `candidates` must be a "
                                        f"sequence of records: {exc}") from exc
        for i, record in enumerate(items):
            if not finite(record, f"mechanism {name!r}: candidate {i} of `candidates`"):
                raise InvalidMechanismError(f"mechanism {name!r}: candidate {i} has "
                                            f"non-finite values: {record!r:.80}")
            if domain is not None and not domain.contains(record):
                raise InvalidMechanismError(f"mechanism {name!r}: candidate {i} "
                                            f"{describe_misfit(record)}")


def sensitivity_of(mechanism) -> Sensitivity | None:
    """The mechanism's claimed sensitivity as a :class:`Sensitivity`, or None.

    A plain int or float ``v`` means ``Sensitivity(v, 2)``: the L2 sensitivity
    (reports say so, :func:`sensitivity_note`).

    Raises
    ------
    InvalidMechanismError
        A ``sensitivity`` of another type (a bool, a string, a tuple ...), or a
        plain number that is not finite and > 0.
    """
    caps = read_mechanism(mechanism)
    if caps.validated:
        return caps.sensitivity
    return _as_sensitivity(caps.sensitivity, "?" if caps.name is None else caps.name)


def _as_sensitivity(sens, name) -> Sensitivity | None:
    if sens is None or isinstance(sens, Sensitivity):
        return sens
    if isinstance(sens, (int, float, np.integer, np.floating)) and not isinstance(sens, bool):
        try:
            return Sensitivity(float(sens), 2)
        except ValueError as exc:
            raise InvalidMechanismError(f"mechanism {name!r}: `sensitivity` {exc}") from exc
    raise InvalidMechanismError(f"mechanism {name!r}: `sensitivity` must be a Sensitivity(value, "
                                f"norm) or a plain number (the L2 sensitivity), got "
                                f"{type(sens).__name__}: {sens!r:.60}")


def sensitivity_note(mechanism) -> str:
    """How the claimed sensitivity was read, for reports ("" for a Sensitivity)."""
    caps = read_mechanism(mechanism)
    return caps.sensitivity_note if caps.validated else _sensitivity_note(caps.sensitivity)


def _sensitivity_note(sens) -> str:
    if sens is None or isinstance(sens, Sensitivity):
        return ""
    return (f"sensitivity given as the plain number {float(sens):g}: read as the L2 "
            "sensitivity (give Sensitivity(value, norm) for another norm)")


def draw_release(mechanism: Mechanism, data, rng: np.random.Generator, n: int,
                 shape: tuple | None = None) -> np.ndarray:
    """``mechanism.release(data, rng, n)`` as a float array (n, k), checked.

    ``shape``: the trailing shape every output must have (e.g. from
    :func:`output_shape`); None checks nothing about it.

    Raises InvalidMechanismError when the output's leading axis is not n, its
    trailing shape differs from ``shape``, or any value is NaN or infinite.
    """
    return _checked(mechanism, mechanism.release(data, rng, n), n, shape).reshape(n, -1)


def twin_generator(rng: np.random.Generator) -> np.random.Generator:
    """A generator in ``rng``'s state, independent of it afterwards (``rng`` is not advanced)."""
    twin = np.random.Generator(type(rng.bit_generator)())
    twin.bit_generator.state = rng.bit_generator.state
    return twin


def check_follows_rng(mechanism, first: np.ndarray, second: np.ndarray, n: int) -> None:
    """Raise InvalidMechanismError unless ``first`` and ``second``, two releases of n
    outputs from generators in one state, are equal (:func:`output_shape`)."""
    if not np.array_equal(first, second):
        raise InvalidMechanismError(
            f"mechanism {mechanism.name!r}: release does not follow its rng: two calls "
            f"release(data, rng, n={n}) with generators in the same state gave different "
            "outputs. Draw every random number from the `rng` argument (not numpy's global "
            "state, a generator of its own or the clock), so that the same seed gives the "
            "same audit.")


def output_shape(mechanism: Mechanism, data, rng: np.random.Generator,
                 sizes: tuple = (2,)) -> tuple:
    """The trailing shape of ``mechanism``'s outputs on ``data`` (a checked draw of two),
    and a check that the release follows its ``rng``.

    At each n of ``sizes`` the draw is made twice, from ``rng`` and from a twin generator
    in the same state: a release whose outputs differ draws randomness from somewhere
    else (numpy's global state, a generator of its own, the clock), and the same seed
    would then give a different audit each run. The audit also checks its first
    training block this way (:func:`~dpclaims.audits.core.audit`), at the size it draws.

    Raises
    ------
    InvalidMechanismError
        As :func:`draw_release`; and when the two draws differ.
    """
    shape = None
    for n in sizes:
        twin = twin_generator(rng)
        first = _checked(mechanism, mechanism.release(data, rng, n), n, shape)
        shape = first.shape[1:]
        second = _checked(mechanism, mechanism.release(data, twin, n), n, shape)
        check_follows_rng(mechanism, first, second, n)
    return shape


def _checked(mechanism, out, n: int, shape) -> np.ndarray:
    out = real_array(out, f"mechanism {mechanism.name!r}: release(data, rng, n={n})")
    if out.ndim == 0 or out.shape[0] != n:
        raise InvalidMechanismError(f"mechanism {mechanism.name!r}: release(data, rng, n={n}) "
                                    f"must return shape (n, ...), got {out.shape}")
    if shape is not None and out.shape[1:] != tuple(shape):
        raise InvalidMechanismError(f"mechanism {mechanism.name!r}: release returned outputs "
                                    f"of shape {out.shape[1:]} after outputs of shape "
                                    f"{tuple(shape)}: every output must have one shape")
    bad = ~np.isfinite(out)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidMechanismError(f"mechanism {mechanism.name!r}: release returned "
                                    f"{int(bad.sum())} non-finite value(s), first at "
                                    f"{first}: {out[first]!r}")
    return out


# --------------------------------------------------------------------------- pairs


@dataclass(frozen=True)
class NeighbouringPair:
    """Datasets ``d0`` and ``d1`` at distance one under ``relation``.

    ``replace-one``: equal size, at most one record differs. ``add-remove``: one
    dataset is the other with one record added. Checked on construction.

    Attributes
    ----------
    d0, d1 : dataset (module notes)
    relation : {"replace-one", "add-remove"}
    description : str
        How the pair was built (for reports).
    search_cost : dict
        For a searched canary: query evaluations, distances computed, the
        query distance reached.

    Raises
    ------
    ValueError
        An unknown relation, or datasets that are not neighbours under it.
    """

    d0: Any
    d1: Any
    relation: str = "replace-one"
    description: str = ""
    search_cost: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_relation(self.relation)
        n0, n1 = n_records(self.d0), n_records(self.d1)
        for name, d in (("d0", self.d0), ("d1", self.d1)):
            for comp in d if isinstance(d, tuple) else (d,):
                arr = np.asarray(comp)
                if arr.dtype.kind in "fc" and np.isnan(arr).any():
                    raise ValueError(f"{name} contains NaN records: a neighbouring pair needs "
                                     "comparable records")
        if isinstance(self.d0, tuple) != isinstance(self.d1, tuple):
            raise ValueError("d0 and d1 must both be arrays or both be tuples of arrays")
        if self.relation == "replace-one":
            if n0 != n1:
                raise ValueError(f"replace-one neighbours have equal sizes, got {n0} and {n1}")
            diff = differing_records(self.d0, self.d1)
            if diff.size > 1:
                raise ValueError(f"replace-one neighbours differ in at most one record; these "
                                 f"differ in {diff.size} (indices {diff[:5].tolist()}...)")
        else:
            if abs(n0 - n1) != 1:
                raise ValueError(f"add-remove neighbours differ in size by one, got {n0} and {n1}")
            big, small = (self.d0, self.d1) if n0 > n1 else (self.d1, self.d0)
            ns = min(n0, n1)
            first = next((i for i in range(ns)
                          if not records_equal(get_record(big, i), get_record(small, i))), ns)
            if differing_records(remove_record(big, first), small).size:
                raise ValueError("add-remove neighbours: the larger dataset minus one record "
                                 "must equal the smaller one")

    def to_dict(self) -> dict[str, Any]:
        return {"relation": self.relation, "description": self.description,
                "n_records": [n_records(self.d0), n_records(self.d1)],
                "search_cost": dict(self.search_cost)}


def replace_one(data, index: int, record, *, baseline_record=None) -> NeighbouringPair:
    """Replace-one pair: ``d1`` is ``data`` with record ``index`` replaced by ``record``.

    With ``baseline_record``, ``d0`` has that record at ``index`` instead of the
    data's own (a two-canary pair). Raises ValueError on a bad index or record shape.
    """
    d0 = data if baseline_record is None else replace_record(data, index, baseline_record)
    return NeighbouringPair(d0, replace_record(data, index, record), "replace-one",
                            f"replace record {index} of {n_records(data)}")


def add_one(data, record) -> NeighbouringPair:
    """Add-remove pair: ``d0 = data``, ``d1 = data`` with ``record`` appended."""
    return NeighbouringPair(data, add_record(data, record), "add-remove",
                            f"add one record to {n_records(data)}")


def remove_one(data, index: int) -> NeighbouringPair:
    """Add-remove pair: ``d0 = data``, ``d1 = data`` without record ``index``."""
    return NeighbouringPair(data, remove_record(data, index), "add-remove",
                            f"remove record {index} of {n_records(data)}")


def canary_pair(mechanism: Mechanism, data, candidates, *, relation: str | None = None,
                index: int = 0) -> NeighbouringPair:
    """The neighbouring pair, among candidate records, that moves the query most.

    Like the sensitivity searches of DP-Auditorium (Kong et al. 2024) and
    Delta-Siege (Lokna et al. 2023), restricted to a finite candidate set: the
    result is a lower bound on the worst case, so an audit on it stays sound.

    ``replace-one``: each candidate c_k is put at position ``index`` and the
    query evaluated (K evaluations); the pair (c_a, c_b) with the largest
    ``sensitivity.distance(q_a, q_b)`` (K (K - 1) / 2 distances) is returned.
    ``add-remove``: each candidate appended (K evaluations) and each existing
    record removed (N evaluations) is compared with ``query(data)``; the largest
    change wins.

    Parameters
    ----------
    mechanism : Mechanism
        Must have ``query``; ``sensitivity`` chooses the norm (L2 otherwise).
    data : dataset
    candidates : sequence of records, length K >= 1 (>= 2 for replace-one)
    relation : str, optional
        Defaults to the mechanism's claim's relation.
    index : int
        Position of the replaced record (replace-one).

    Returns
    -------
    NeighbouringPair
        With ``search_cost`` = {"query_evaluations", "distances", "query_distance",
        "claimed_sensitivity"}.

    Raises
    ------
    InvalidMechanismError
        The mechanism has no ``query``.
    ValueError
        Too few candidates, a bad index or record shape, non-finite query outputs.
    """
    mechanism = validate_mechanism(mechanism)
    query = mechanism.query
    if query is None:
        raise InvalidMechanismError(f"mechanism {mechanism.name!r} has no `query`: a canary "
                                    "search needs the noiseless query")
    relation = check_relation(relation or mechanism.claim.relation)
    sens = mechanism.sensitivity
    measure = sens if sens is not None else Sensitivity(1.0, 2)
    cands = list(candidates)

    def q(d):
        out = real_array(query(d), f"mechanism {mechanism.name!r}: query(data)")
        if not np.all(np.isfinite(out)):
            raise ValueError(f"mechanism {mechanism.name!r}: query returned non-finite values")
        return out.ravel()

    cost = {"claimed_sensitivity": None if sens is None else sens.value,
            "norm": measure.norm}
    if relation == "replace-one":
        check_count(len(cands), "number of candidates", minimum=2)
        qs = np.stack([q(replace_record(data, index, c)) for c in cands])
        diff = qs[:, None, :] - qs[None, :, :]
        dist = np.linalg.norm(diff, ord=measure.norm, axis=-1)
        a, b = np.unravel_index(int(np.argmax(dist)), dist.shape)
        cost.update(query_evaluations=len(cands), distances=len(cands) * (len(cands) - 1) // 2,
                    query_distance=float(dist[a, b]))
        pair = replace_one(data, index, cands[b], baseline_record=cands[a])
        desc = (f"canary search (replace-one at record {index}): best of {len(cands)} candidates, "
                f"query distance {dist[a, b]:.6g}")
        return NeighbouringPair(pair.d0, pair.d1, "replace-one", desc, cost)
    check_count(len(cands), "number of candidates", minimum=1)
    base = q(data)
    n = n_records(data)
    added = [measure.distance(q(add_record(data, c)), base) for c in cands]
    removed = [measure.distance(q(remove_record(data, i)), base) for i in range(n)] if n > 1 else []
    best_add = int(np.argmax(added))
    cost.update(query_evaluations=len(cands) + len(removed) + 1,
                distances=len(cands) + len(removed))
    if removed and max(removed) > added[best_add]:
        i = int(np.argmax(removed))
        cost["query_distance"] = float(removed[i])
        return NeighbouringPair(data, remove_record(data, i), "add-remove",
                                f"canary search (add-remove): remove record {i}, query distance "
                                f"{removed[i]:.6g}", cost)
    cost["query_distance"] = float(added[best_add])
    return NeighbouringPair(data, add_record(data, cands[best_add]), "add-remove",
                            f"canary search (add-remove): add candidate {best_add} of "
                            f"{len(cands)}, query distance {added[best_add]:.6g}", cost)


@dataclass(frozen=True)
class GaussianMechanism:
    """The Gaussian mechanism q(D) + N(0, (sigma Delta)^2 I): the audit's ground truth.

    Its claim is exact: (epsilon, delta)-DP with epsilon =
    ``dp_accounting.get_epsilon_gaussian(sigma, delta)`` (Balle & Wang 2018,
    Thm. 8), under ``relation`` with Delta the L2 sensitivity under that relation.

    Parameters
    ----------
    query : callable
        Dataset -> ndarray (k,) (or scalar), the noiseless statistic.
    l2_sensitivity : float
        Delta > 0, the claimed L2 sensitivity of ``query``.
    noise_multiplier : float
        sigma > 0: noise std sigma * ``calibrated_to``.
    delta : float
        In (0, 1).
    relation : {"replace-one", "add-remove"}
    name : str
    calibrated_to : float, optional
        The sensitivity the noise is actually calibrated to (default Delta). A
        value below Delta plants the classic bug: the claim says sigma but the
        noise is smaller.
    """

    query: Any
    l2_sensitivity: float
    noise_multiplier: float
    delta: float
    relation: str = "replace-one"
    name: str = "gaussian"
    calibrated_to: float | None = None

    def __post_init__(self) -> None:
        from dpclaims.analysis.validation import check_positive

        check_positive(self.l2_sensitivity, "l2_sensitivity")
        check_positive(self.noise_multiplier, "noise_multiplier")
        if self.calibrated_to is not None:
            check_positive(self.calibrated_to, "calibrated_to")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1) for a Gaussian mechanism, "
                             f"got {self.delta!r}")
        check_relation(self.relation)
        if not callable(self.query):
            raise TypeError(f"query must be callable, got {self.query!r}")

    @property
    def claim(self) -> PrivacyClaim:
        eps = dp_accounting.get_epsilon_gaussian(self.noise_multiplier, self.delta)
        return PrivacyClaim(eps, self.delta, self.relation,
                            dp_accounting.GaussianDpEvent(self.noise_multiplier))

    @property
    def sensitivity(self) -> Sensitivity:
        return Sensitivity(self.l2_sensitivity, 2)

    @property
    def noise_std(self) -> float:
        scale = self.l2_sensitivity if self.calibrated_to is None else self.calibrated_to
        return self.noise_multiplier * scale

    def release(self, data, rng: np.random.Generator, n: int) -> np.ndarray:
        """n outputs, shape (n, k): q(data) + noise_std * N(0, I_k)."""
        q = np.atleast_1d(np.asarray(self.query(data), dtype=float)).ravel()
        return q + self.noise_std * rng.standard_normal((n, q.size))
