"""What a mechanism or an algorithm offers, read off the object once.

A user's mechanism (:class:`~dpclaims.audits.mechanism.Mechanism`) or algorithm
(:mod:`dpclaims.audits.whole_run`) has a few required members and several optional
ones. Each optional capability is a small named protocol below; an object offers it
when it has the members (a member that is None is absent). This module is the one
place that reads an object's members by name (``getattr``): :func:`read_mechanism`
and :func:`read_algorithm` turn the object into a frozen value,
:class:`MechanismCapabilities` or :class:`AlgorithmCapabilities`, and every check,
the pair search and the pytest plugin read that value.
:func:`~dpclaims.audits.mechanism.validate_mechanism` and
:func:`~dpclaims.audits.whole_run.validate_algorithm` check the values read and
return the value; a value passed to them again is returned as it is.

The value follows the protocol itself (``name``, ``claim`` and ``release``, resp.
``run``), so the audit engine runs it as it ran the object.

Capabilities
------------
===============================  =========================================================
:class:`HasQuery`                ``query(data)`` and its claimed ``sensitivity``
:class:`HasDomain`               ``domain``: the record domain
:class:`HasData`                 ``data`` and ``candidates`` (records to build pairs from)
:class:`HasGradientCanary`       ``gradient_canary(sign)``, ``canary_direction``, ``clip``
:class:`HasGradientCanaries`     ``run_gradient_canaries(data, rng, signs)``,
                                 ``gradient_canary_coordinates(m)``,
                                 ``gradient_canary_slots``, ``clip`` (one-run audits)
:class:`HasInputCanary`          ``input_canary``
:class:`HasTrace`                ``updates(releases)``, ``trace_reduction``, ``epoch_length``
:class:`HasStep`                 ``step(state, batch, rng)``, ``step_sensitivity``,
                                 ``random_states(rng, n)``
:class:`HasPerformedSampling`    ``performed_event``, ``performed_is_shuffle``
:class:`HasSampling`             ``sampling``: the sampler performed, a
                                 :class:`~dpclaims.analysis.sampling.Sampling`
:class:`HasLibraryAccounting`    ``library_accounting``: a library's own accountant's
                                 reading (``name``, ``epsilon``, ``delta``,
                                 ``relation``, ``assumes``)
===============================  =========================================================

A mechanism may also have ``records`` (a hypothesis strategy of records),
``neighbouring_pairs()`` and ``score``; an algorithm ``step_batch_size`` /
``batch_size``, its own ``relation`` and ``to_dict()``, ``max_runs_per_call`` (the runs
of one underlying call, e.g. a compiled chunk: the audit's blocks are multiples of it),
the ``sampling`` it performs (a :class:`~dpclaims.analysis.sampling.Sampling`), and
``starting_points`` with ``with_start(point) -> algorithm`` (starting parameters the
dataset search may try, :mod:`dpclaims.audits.adversarial`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class HasQuery(Protocol):
    """The noiseless ``query(data) -> ndarray`` and its claimed ``sensitivity``
    (a :class:`~dpclaims.audits.mechanism.Sensitivity` or a plain number: the L2 one)."""

    sensitivity: Any

    def query(self, data) -> np.ndarray: ...


@runtime_checkable
class HasDomain(Protocol):
    """``domain``: the record domain (:mod:`dpclaims.analysis.domains`)."""

    domain: Any


@runtime_checkable
class HasData(Protocol):
    """``data`` (a dataset of :mod:`dpclaims.analysis.records`) and ``candidates``
    (records the canary search and the property tests draw from)."""

    data: Any
    candidates: Any


@runtime_checkable
class HasGradientCanary(Protocol):
    """The gradient-canary hook (:mod:`dpclaims.audits.whole_run`): ``gradient_canary(sign)
    -> record``, the unit ``canary_direction`` and the contribution's norm ``clip``."""

    canary_direction: Any
    clip: float

    def gradient_canary(self, sign: float): ...


@runtime_checkable
class HasGradientCanaries(Protocol):
    """m Dirac gradient canaries in one run (:mod:`dpclaims.audits.one_run`).

    ``run_gradient_canaries(data, rng, signs) -> ndarray``: ``signs`` (R, m) in {-1, 0, +1};
    R independent runs on ``data`` (vectorised over R), in which canary i is a record whose
    clipped per-example contribution to each step that samples it (as the run samples any
    record) is ``signs[r, i] * clip * e_j``, j = ``gradient_canary_coordinates(m)[i]`` (a
    coordinate of a step's released statistic, the same in the final output for a
    final-iterate run); 0 is a canary left out (never passed under replace-one, where
    every canary is in the data and its sign is its inclusion). Returns what ``run``
    returns: (R, S, k) or (R, P). ``gradient_canary_slots``: the largest m the run has
    coordinates for (Steinke, Nasr & Jagielski 2023, Sec. 6; Nasr et al. 2023)."""

    gradient_canary_slots: int
    clip: float

    def run_gradient_canaries(self, data, rng: np.random.Generator, signs) -> np.ndarray: ...

    def gradient_canary_coordinates(self, m: int) -> np.ndarray: ...


@runtime_checkable
class HasInputCanary(Protocol):
    """``input_canary``: a record (add-remove) or a pair of records (replace-one)."""

    input_canary: Any


@runtime_checkable
class HasTrace(Protocol):
    """How a full trace is read: ``updates(releases) -> (n, S, k)``, ``trace_reduction``
    ("sum" or "max-per-epoch") and ``epoch_length``."""

    trace_reduction: str
    epoch_length: Any

    def updates(self, releases) -> np.ndarray: ...


@runtime_checkable
class HasStep(Protocol):
    """One noisy update for the property test of its sensitivity: ``step(state, batch,
    rng) -> (n, k)``, ``step_sensitivity`` and ``random_states(rng, n) -> (n, P)``."""

    step_sensitivity: Any

    def step(self, state, batch, rng: np.random.Generator) -> np.ndarray: ...

    def random_states(self, rng: np.random.Generator, n: int) -> np.ndarray: ...


@runtime_checkable
class HasPerformedSampling(Protocol):
    """``performed_event``: the DpEvent of the sampling really performed, and
    ``performed_is_shuffle`` (a shuffled pass as one Gaussian per epoch)."""

    performed_event: Any
    performed_is_shuffle: bool


@runtime_checkable
class HasSampling(Protocol):
    """``sampling``: the sampler the run performs, a
    :class:`~dpclaims.analysis.sampling.Sampling` (its kind, N, B and steps); the
    accounting of the sampling performed follows it
    (:mod:`dpclaims.claims.checks.performed_sampling`)."""

    sampling: Any


@runtime_checkable
class HasLibraryAccounting(Protocol):
    """``library_accounting``: what a library's own privacy accountant says of the run, a
    mapping ``{"name": "d3p's DPSVI.get_epsilon", "epsilon": float, "delta": float,
    "relation": str, "assumes": sampling kind}``; a reading of its own, checked against
    the sampling performed (:mod:`dpclaims.claims.checks.performed_sampling`)."""

    library_accounting: Any


class WholeRunAlgorithm:
    """Base of the families' whole runs: the algorithm protocol with every optional hook
    absent (None) until a subclass defines it.

    A subclass gives ``name``, ``claim``, ``threat_model`` and ``run(data, rng, n_runs)``
    and overrides the hooks it offers (module docstring).
    """

    data = None
    candidates = None
    input_canary = None
    gradient_canary = None
    canary_direction = None
    clip = None
    updates = None
    trace_reduction = "sum"
    epoch_length = None
    step = None
    step_sensitivity = None
    random_states = None
    performed_event = None
    performed_is_shuffle = False
    sampling = None
    library_accounting = None
    run_gradient_canaries = None
    gradient_canary_coordinates = None
    gradient_canary_slots = None

    def run(self, data, rng: np.random.Generator, n_runs: int) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must define run(data, rng, n_runs)")


def _member(obj, name: str, default=None):
    return getattr(obj, name, default)


def _callable_member(obj, name: str):
    value = getattr(obj, name, None)
    return value if callable(value) else None


@dataclass(frozen=True, eq=False)
class MechanismCapabilities:
    """A mechanism's members, read once (:func:`read_mechanism`).

    ``sensitivity`` is a :class:`~dpclaims.audits.mechanism.Sensitivity` after
    :func:`~dpclaims.audits.mechanism.validate_mechanism` (as given before), and
    ``sensitivity_note`` says how a plain number was read. ``source`` is the object.
    """

    source: Any
    name: Any
    claim: Any
    release: Any
    query: Any = None
    sensitivity: Any = None
    sensitivity_note: str = ""
    domain: Any = None
    data: Any = None
    candidates: Any = None
    records: Any = None
    neighbouring_pairs: Any = None
    score: Any = None
    validated: bool = False


@dataclass(frozen=True, eq=False)
class AlgorithmCapabilities:
    """An algorithm's members, read once (:func:`read_algorithm`); ``source`` is the object.

    ``to_dict`` is the object's own ``to_dict`` (None without one), ``relation`` its own
    ``relation`` member ("" without one; the claim's relation is ``claim.relation``).
    """

    source: Any
    name: Any
    claim: Any
    threat_model: Any
    run: Any
    data: Any = None
    candidates: Any = None
    domain: Any = None
    input_canary: Any = None
    gradient_canary: Any = None
    canary_direction: Any = None
    clip: Any = None
    updates: Any = None
    trace_reduction: Any = "sum"
    epoch_length: Any = None
    step: Any = None
    step_sensitivity: Any = None
    random_states: Any = None
    step_batch_size: Any = None
    batch_size: Any = None
    relation: Any = ""
    performed_event: Any = None
    performed_is_shuffle: Any = False
    sampling: Any = None
    starting_points: Any = None
    with_start: Any = None
    library_accounting: Any = None
    to_dict: Callable | None = None
    max_runs_per_call: Any = None
    run_gradient_canaries: Any = None
    gradient_canary_coordinates: Any = None
    gradient_canary_slots: Any = None
    validated: bool = False


def has_release(obj) -> bool:
    """True when ``obj`` has a callable ``release`` (the mechanism protocol)."""
    if isinstance(obj, MechanismCapabilities):
        return True
    return not isinstance(obj, AlgorithmCapabilities) and _callable_member(obj, "release") \
        is not None


def has_run(obj) -> bool:
    """True when ``obj`` has a callable ``run`` (the algorithm protocol)."""
    if isinstance(obj, AlgorithmCapabilities):
        return True
    return not isinstance(obj, MechanismCapabilities) and _callable_member(obj, "run") \
        is not None


def is_factory(obj) -> bool:
    """True for a class, or a callable with neither a ``release`` nor a ``run`` member (a
    zero-argument factory of a mechanism or an algorithm, as ``check-variant`` loads)."""
    if isinstance(obj, (MechanismCapabilities, AlgorithmCapabilities)):
        return False
    return isinstance(obj, type) or (not hasattr(obj, "release") and not hasattr(obj, "run")
                                     and callable(obj))


def object_name(obj, default=None):
    """``obj.name`` as it is (any type), ``default`` without one."""
    return _member(obj, "name", default)


def read_mechanism(obj) -> MechanismCapabilities:
    """The members of ``obj`` as a :class:`MechanismCapabilities` (unchecked; a value
    already read is returned as it is)."""
    if isinstance(obj, MechanismCapabilities):
        return obj
    return MechanismCapabilities(
        source=obj, name=_member(obj, "name"), claim=_member(obj, "claim"),
        release=_member(obj, "release"), query=_member(obj, "query"),
        sensitivity=_member(obj, "sensitivity"), domain=_member(obj, "domain"),
        data=_member(obj, "data"), candidates=_member(obj, "candidates"),
        records=_member(obj, "records"), neighbouring_pairs=_member(obj, "neighbouring_pairs"),
        score=_member(obj, "score"))


def read_algorithm(obj) -> AlgorithmCapabilities:
    """The members of ``obj`` as an :class:`AlgorithmCapabilities` (unchecked; a value
    already read is returned as it is)."""
    if isinstance(obj, AlgorithmCapabilities):
        return obj
    return AlgorithmCapabilities(
        source=obj, name=_member(obj, "name"), claim=_member(obj, "claim"),
        threat_model=_member(obj, "threat_model"), run=_member(obj, "run"),
        data=_member(obj, "data"), candidates=_member(obj, "candidates"),
        domain=_member(obj, "domain"), input_canary=_member(obj, "input_canary"),
        gradient_canary=_member(obj, "gradient_canary"),
        canary_direction=_member(obj, "canary_direction"), clip=_member(obj, "clip"),
        updates=_member(obj, "updates"), trace_reduction=_member(obj, "trace_reduction", "sum"),
        epoch_length=_member(obj, "epoch_length"), step=_member(obj, "step"),
        step_sensitivity=_member(obj, "step_sensitivity"),
        random_states=_member(obj, "random_states"),
        step_batch_size=_member(obj, "step_batch_size"), batch_size=_member(obj, "batch_size"),
        relation=_member(obj, "relation", ""), performed_event=_member(obj, "performed_event"),
        performed_is_shuffle=_member(obj, "performed_is_shuffle", False),
        sampling=_member(obj, "sampling"), starting_points=_member(obj, "starting_points"),
        with_start=_callable_member(obj, "with_start"),
        library_accounting=_member(obj, "library_accounting"),
        to_dict=_member(obj, "to_dict"), max_runs_per_call=_member(obj, "max_runs_per_call"),
        run_gradient_canaries=_callable_member(obj, "run_gradient_canaries"),
        gradient_canary_coordinates=_callable_member(obj, "gradient_canary_coordinates"),
        gradient_canary_slots=_member(obj, "gradient_canary_slots"))
