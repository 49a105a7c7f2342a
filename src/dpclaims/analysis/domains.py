"""Record domains: the set a mechanism's records come from.

A mechanism that declares its record domain can be judged without a dataset:
the property test of its sensitivity and the neighbouring-pair search draw
datasets from the domain (``dpclaims.property_tests.strategies.domain_records``
and ``neighbouring_datasets``). Three kinds, each a frozen value:

:class:`Box`
    Records x with ``low <= x <= high`` elementwise, of a stated shape (bounds
    broadcast to it), e.g. query answers of sensitivity-1 queries as records in
    ``[-1, 1]^k`` whose sum is the answer vector.
:class:`Ball`
    Records x with ``||x||_norm <= radius``, of a stated shape, e.g. clipped
    gradients.
:class:`FiniteSet`
    Records from a finite list, e.g. the bins of a histogram.

Each gives ``contains(record)``, ``centre()`` (a base record), ``patterns(relation)``:
the canary records that
the neighbouring-pair search tries first (extreme points, in the spirit of
StatDP's query-answer patterns; Ding, Wang, Wang, Zhang, Kifer, "Detecting
Violations of Differential Privacy", CCS 2018), and ``to_dict()`` for reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpclaims.analysis.validation import check_count, check_positive

# The difference patterns tried on a box: name -> sign of each coordinate's change
# (+1 up, -1 down, 0 unchanged), as functions of the number of coordinates k.
# Named after StatDP's query-answer patterns (Ding et al. 2018).
BOX_PATTERNS = {
    "one above": lambda k: np.r_[1, np.zeros(k - 1)],
    "one below": lambda k: np.r_[-1, np.zeros(k - 1)],
    "one above rest below": lambda k: np.r_[1, -np.ones(k - 1)],
    "one below rest above": lambda k: np.r_[-1, np.ones(k - 1)],
    "half half": lambda k: np.r_[np.ones(k // 2), -np.ones(k - k // 2)],
    "all above": lambda k: np.ones(k),
    "all below": lambda k: -np.ones(k),
    "x shape": lambda k: np.r_[np.ones(k // 2), np.zeros(k % 2), -np.ones(k // 2)],
}


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    try:
        out = tuple(int(v) for v in shape)
    except TypeError as exc:
        raise TypeError(f"shape must be an int or a tuple of ints, got {shape!r}") from exc
    if any(v < 1 for v in out):
        raise ValueError(f"shape must have positive sizes, got {shape!r}")
    return out


@dataclass(frozen=True)
class Box:
    """Records x of shape ``shape`` with ``low <= x <= high`` elementwise.

    Parameters
    ----------
    low, high : float or array broadcastable to ``shape``
        Finite bounds with low < high in every coordinate.
    shape : int or tuple, default ()
        The record's shape; () for scalar records.

    Raises
    ------
    ValueError
        Non-finite bounds, low >= high somewhere, bounds not broadcastable.
    """

    low: Any
    high: Any
    shape: tuple = ()

    def __post_init__(self):
        shape = _shape(self.shape) if self.shape != () else ()
        try:
            low = np.broadcast_to(np.asarray(self.low, dtype=float), shape).copy()
            high = np.broadcast_to(np.asarray(self.high, dtype=float), shape).copy()
        except ValueError as exc:
            raise ValueError(f"box bounds {self.low!r}, {self.high!r} do not broadcast to "
                             f"shape {shape}") from exc
        if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
            raise ValueError(f"box bounds must be finite, got low={self.low!r}, "
                             f"high={self.high!r}")
        if np.any(low >= high):
            raise ValueError(f"box needs low < high in every coordinate, got low={self.low!r}, "
                             f"high={self.high!r}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=int)) if self.shape else 1

    def contains(self, record) -> bool:
        x = np.asarray(record, dtype=float)
        return (x.shape == self.shape and bool(np.all(np.isfinite(x)))
                and bool(np.all((self.low <= x) & (x <= self.high))))

    def centre(self) -> np.ndarray:
        """The box's centre (the base record of the pattern pairs)."""
        return (self.low + self.high) / 2

    def patterns(self, relation: str) -> list[tuple[str, Any, Any]]:
        """Canary records ``(name, r0, r1)`` from :data:`BOX_PATTERNS`.

        A pattern's sign s_j maps to the levels: up = (low_j -> high_j), down =
        (high_j -> low_j), unchanged = (mid_j -> mid_j). Under replace-one the pair
        replaces r0 by r1; under add-remove r1 is the added record (r0 unused:
        None). For a sum query over a box [-1, 1]^k the added record is exactly
        the pattern, as in StatDP.
        """
        low, high = self.low.ravel(), self.high.ravel()
        mid = (low + high) / 2
        out, seen = [], set()
        for name, make in BOX_PATTERNS.items():
            s = make(self.size) if self.size > 1 else make(1)[:1]
            if relation == "add-remove":
                r1 = np.where(s > 0, high, np.where(s < 0, low, mid))
                r0 = None
            else:
                r0 = np.where(s > 0, low, np.where(s < 0, high, mid))
                r1 = np.where(s > 0, high, np.where(s < 0, low, mid))
            key = (None if r0 is None else r0.tobytes(), r1.tobytes())
            if key in seen:
                continue
            seen.add(key)
            out.append((name, None if r0 is None else r0.reshape(self.shape),
                        r1.reshape(self.shape)))
        return out

    def to_dict(self) -> dict:
        return {"kind": "box", "low": self.low.tolist(), "high": self.high.tolist(),
                "shape": list(self.shape)}


@dataclass(frozen=True)
class Ball:
    """Records x of shape ``shape`` with ``||ravel(x)||_norm <= radius``.

    Parameters
    ----------
    radius : float
        > 0.
    norm : {1, 2, inf}, default 2
    shape : int or tuple, default (1,)
    """

    radius: float
    norm: float = 2
    shape: tuple = (1,)

    def __post_init__(self):
        object.__setattr__(self, "radius", check_positive(self.radius, "radius"))
        if self.norm not in (1, 2, math.inf):
            raise ValueError(f"ball norm must be 1, 2 or inf, got {self.norm!r}")
        object.__setattr__(self, "shape", _shape(self.shape))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=int))

    def contains(self, record) -> bool:
        x = np.asarray(record, dtype=float)
        return (x.shape == self.shape and bool(np.all(np.isfinite(x)))
                and float(np.linalg.norm(x.ravel(), ord=self.norm)) <= self.radius * (1 + 1e-12))

    def centre(self) -> np.ndarray:
        """The origin (the base record of the pattern pairs)."""
        return np.zeros(self.shape)

    def patterns(self, relation: str) -> list[tuple[str, Any, Any]]:
        """Canaries on the sphere: along the first axis and along the diagonal.

        Replace-one: r -> -r (the diameter, the largest change of a sum). Add-remove:
        add r.
        """
        k = self.size
        axis = np.r_[self.radius, np.zeros(k - 1)]
        diag = np.ones(k)
        diag *= self.radius / np.linalg.norm(diag, ord=self.norm)
        out = []
        for name, r in (("axis", axis), ("diagonal", diag)):
            if relation == "add-remove":
                out.append((name, None, r.reshape(self.shape)))
            else:
                out.append((name, (-r).reshape(self.shape), r.reshape(self.shape)))
            if k == 1:
                break
        return out

    def to_dict(self) -> dict:
        return {"kind": "ball", "radius": self.radius, "norm": str(self.norm),
                "shape": list(self.shape)}


@dataclass(frozen=True)
class FiniteSet:
    """Records from a finite list (scalars or arrays of one shape).

    Parameters
    ----------
    records : sequence
        At least one record; all of one shape, finite.
    max_patterns : int, default 32
        How many records (add-remove) or ordered pairs (replace-one) the
        pair search tries first.
    """

    records: tuple
    max_patterns: int = 32

    def __post_init__(self):
        recs = tuple(np.asarray(r) for r in self.records)
        if not recs:
            raise ValueError("a finite record set needs at least one record")
        shapes = {r.shape for r in recs}
        if len(shapes) != 1:
            raise ValueError(f"the records of a finite set must share one shape, got {shapes}")
        for r in recs:
            if r.dtype.kind in "fc" and not np.all(np.isfinite(r)):
                raise ValueError(f"a finite record set contains a non-finite record {r!r}")
        object.__setattr__(self, "records", recs)
        check_count(self.max_patterns, "max_patterns")

    @property
    def shape(self) -> tuple:
        return self.records[0].shape

    def contains(self, record) -> bool:
        x = np.asarray(record)
        return any(x.shape == r.shape and np.array_equal(x, r) for r in self.records)

    def centre(self) -> np.ndarray:
        """The first record (the base record of the pattern pairs)."""
        return self.records[0]

    def patterns(self, relation: str) -> list[tuple[str, Any, Any]]:
        """Add each record (add-remove), or replace one by another (replace-one)."""
        recs = self.records
        if relation == "add-remove":
            return [(f"add record {i}", None, r) for i, r in
                    enumerate(recs[: self.max_patterns])]
        pairs = [(i, j) for i in range(len(recs)) for j in range(len(recs))
                 if i != j and not np.array_equal(recs[i], recs[j])]
        return [(f"replace record {i} by {j}", recs[i], recs[j])
                for i, j in pairs[: self.max_patterns]]

    def to_dict(self) -> dict:
        return {"kind": "finite set", "n_records": len(self.records),
                "records": [r.tolist() for r in self.records[:16]]}


Domain = Box | Ball | FiniteSet


def check_domain(domain) -> Domain:
    """Return ``domain`` if it is a :class:`Box`, :class:`Ball` or :class:`FiniteSet`.

    Raises TypeError naming the type otherwise.
    """
    if not isinstance(domain, (Box, Ball, FiniteSet)):
        raise TypeError(f"a record domain must be a Box, Ball or FiniteSet (dpclaims.analysis."
                        f"domains), got {type(domain).__name__}: {domain!r:.80}")
    return domain
