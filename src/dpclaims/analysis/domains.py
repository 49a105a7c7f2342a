"""Record domains: the set a mechanism's records come from.

A mechanism that declares its record domain can be judged without a dataset:
the property test of its sensitivity and the neighbouring-pair search draw
datasets from the domain (``dpclaims.property_tests.strategies.domain_records``
and ``neighbouring_datasets``). Four kinds, each a frozen value:

:class:`Box`
    Records x with ``low <= x <= high`` elementwise, of a stated shape (bounds
    broadcast to it), e.g. query answers of sensitivity-1 queries as records in
    ``[-1, 1]^k`` whose sum is the answer vector.
:class:`Ball`
    Records x with ``||x||_norm <= radius``, of a stated shape, e.g. clipped
    gradients.
:class:`FiniteSet`
    Records from a finite list, e.g. the bins of a histogram.
:class:`Product`
    Records that are the concatenation of one record of each factor domain, e.g.
    ``Product(Ball(1, shape=(3,)), Box(-1, 1))``: a feature vector x in the unit
    ball of R^3 and a label y in [-1, 1], as the flat record ``[x_0, x_1, x_2, y]``.

Each gives ``contains(record)``, ``centre()`` (a base record), ``patterns(relation)``:
the canary records that
the neighbouring-pair search tries first (extreme points, in the spirit of
StatDP's query-answer patterns; Ding, Wang, Wang, Zhang, Kifer, "Detecting
Violations of Differential Privacy", CCS 2018), and ``to_dict()`` for reports.
Equal domains compare equal and hash alike (a Box's bounds compare by value).
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
    except (TypeError, ValueError) as exc:
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

    def _key(self) -> tuple:
        return self.shape, tuple(self.low.ravel().tolist()), tuple(self.high.ravel().tolist())

    def __eq__(self, other):
        return isinstance(other, Box) and self._key() == other._key()

    def __hash__(self):
        return hash(("box", self._key()))

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

    def _key(self) -> tuple:
        return (tuple((r.shape, tuple(r.ravel().tolist())) for r in self.records),
                self.max_patterns)

    def __eq__(self, other):
        return isinstance(other, FiniteSet) and self._key() == other._key()

    def __hash__(self):
        return hash(("finite set", self._key()))

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


def _size(shape: tuple) -> int:
    return int(np.prod(shape, dtype=int))


def _by_index_sum(sizes: list[int]):
    """Index tuples into lists of the given sizes, by increasing sum of the indices
    (lexicographic within one sum): every list's first entries come first."""
    def compositions(total, rest):
        if len(rest) == 1:
            if total < rest[0]:
                yield (total,)
            return
        for i in range(min(total, rest[0] - 1) + 1):
            for tail in compositions(total - i, rest[1:]):
                yield (i, *tail)

    for total in range(sum(n - 1 for n in sizes) + 1):
        yield from compositions(total, sizes)


class Product:
    """Records that concatenate one record of each factor: ``Product(A, B, ...)``.

    A record of the product is the flat vector ``concatenate([ravel(a), ravel(b),
    ...])`` of a record ``a`` of A, ``b`` of B, ...: each factor contributes
    ``prod(factor.shape)`` coordinates in C order, a scalar factor (shape ``()``)
    exactly one. The product's records have shape ``(n,)``, n the sum of those
    sizes: ``Product(Ball(1, shape=(3,)), Box(-1, 1))`` has records
    ``[x_0, x_1, x_2, y]``, shape (4,). :meth:`split` and :meth:`join` convert
    between a record and its factors' records.

    A nested product is flattened (concatenation is associative):
    ``Product(Product(A, B), C) == Product(A, B, C)``.

    Parameters
    ----------
    *factors : Box, Ball, FiniteSet or Product
        At least one. A FiniteSet factor's records must be real numbers (they
        become coordinates of a float vector).
    max_patterns : int, default 32
        Cap on the canary records (add-remove) or pairs (replace-one) of
        :meth:`patterns`.

    Raises
    ------
    ValueError
        No factor; a ``max_patterns`` that is not a positive integer.
    TypeError
        A factor that is not a record domain (naming its position and value), or a
        FiniteSet factor with non-numeric records.
    """

    __slots__ = ("factors", "max_patterns", "shape", "_sizes")

    def __init__(self, *factors, max_patterns: int = 32):
        if not factors:
            raise ValueError("a product domain needs at least one factor, got Product()")
        flat = []
        for i, f in enumerate(factors):
            if isinstance(f, Product):
                flat.extend(f.factors)
            elif isinstance(f, (Box, Ball, FiniteSet)):
                if isinstance(f, FiniteSet) and f.records[0].dtype.kind not in "biuf":
                    raise TypeError(f"product factor {i}: a FiniteSet factor needs real-number "
                                    f"records, got dtype {f.records[0].dtype} in {f!r:.80}")
                flat.append(f)
            else:
                hint = (": pass the factors as separate arguments, Product(a, b)"
                        if isinstance(f, (list, tuple)) else "")
                raise TypeError(f"product factor {i} must be a record domain (Box, Ball, "
                                f"FiniteSet or Product), got {type(f).__name__}: "
                                f"{f!r:.80}{hint}")
        sizes = tuple(_size(f.shape) for f in flat)
        object.__setattr__(self, "factors", tuple(flat))
        object.__setattr__(self, "max_patterns", check_count(max_patterns, "max_patterns"))
        object.__setattr__(self, "shape", (sum(sizes),))
        object.__setattr__(self, "_sizes", sizes)

    def __setattr__(self, name, value):
        raise AttributeError(f"a Product domain is frozen: cannot set {name!r}")

    def __eq__(self, other):
        return (isinstance(other, Product) and self.factors == other.factors
                and self.max_patterns == other.max_patterns)

    def __hash__(self):
        return hash(("product", self.factors, self.max_patterns))

    def __repr__(self):
        extra = "" if self.max_patterns == 32 else f", max_patterns={self.max_patterns}"
        return f"Product({', '.join(repr(f) for f in self.factors)}{extra})"

    def __reduce__(self):
        return _product, (self.factors, self.max_patterns)

    @property
    def size(self) -> int:
        return self.shape[0]

    def split(self, record) -> list[np.ndarray]:
        """The factors' records of a product record.

        Parameters
        ----------
        record : array_like, shape (n,)
            A flat vector of real numbers, n = ``self.shape[0]``.

        Returns
        -------
        list of ndarray
            Part i has factor i's shape (a 0-d array for a scalar factor).

        Raises
        ------
        ValueError
            ``record`` is not a flat vector of n real numbers (naming its shape and value).
        """
        try:
            x = np.asarray(record, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"a record of {self!r:.120} must be a flat vector of "
                             f"{self.size} real numbers, got {record!r:.80}") from exc
        if x.shape != self.shape:
            raise ValueError(f"a record of {self!r:.120} must be a flat vector of "
                             f"{self.size} numbers ({self._layout()}), got shape {x.shape}: "
                             f"{record!r:.80}")
        ends = np.cumsum((0,) + self._sizes)
        return [x[a:b].reshape(f.shape)
                for f, a, b in zip(self.factors, ends[:-1], ends[1:], strict=True)]

    def join(self, parts) -> np.ndarray:
        """The product record of one record per factor (their concatenation, raveled).

        Parameters
        ----------
        parts : sequence
            One record per factor, each with that factor's number of coordinates.

        Returns
        -------
        ndarray, shape (n,)

        Raises
        ------
        ValueError
            The wrong number of parts, or a part of the wrong size (naming it).
        """
        parts = list(parts)
        if len(parts) != len(self.factors):
            raise ValueError(f"a record of {self!r:.120} joins {len(self.factors)} parts, "
                             f"got {len(parts)}")
        out = []
        for i, (p, n) in enumerate(zip(parts, self._sizes, strict=True)):
            v = np.asarray(p, dtype=float).ravel()
            if v.size != n:
                raise ValueError(f"part {i} of a record of {self!r:.120} needs {n} "
                                 f"number(s), got {p!r:.80}")
            out.append(v)
        return np.concatenate(out)

    def _layout(self) -> str:
        return " then ".join(f"{type(f).__name__} {f.shape}" for f in self.factors)

    def misfit(self, record) -> str | None:
        """Why ``record`` is not in the product, for error messages.

        Parameters
        ----------
        record : array_like

        Returns
        -------
        str or None
            The wrong shape, or the first factor whose coordinates lie outside it (their
            indices and values); None when ``record`` is in the product.
        """
        try:
            parts = self.split(record)
        except ValueError as exc:
            return str(exc)
        start = 0
        for i, (f, part, n) in enumerate(zip(self.factors, parts, self._sizes, strict=True)):
            if not bool(np.all(np.isfinite(part))) or not f.contains(part):
                where = f"coordinate {start}" if n == 1 else f"coordinates {start}..{start + n - 1}"
                return f"has {where} = {part.tolist()!r} outside factor {i} {f.to_dict()}"
            start += n
        return None

    def contains(self, record) -> bool:
        """Whether ``record`` is a flat vector of ``shape`` whose parts lie in their factors.

        Parameters
        ----------
        record : array_like

        Returns
        -------
        bool
            False (never an error) for anything else: a wrong length, non-numbers,
            non-finite values (:meth:`misfit` says why).
        """
        try:
            parts = self.split(record)
        except ValueError:
            return False
        return all(bool(np.all(np.isfinite(p))) and f.contains(p)
                   for f, p in zip(self.factors, parts, strict=True))

    def centre(self) -> np.ndarray:
        """The factors' centres, concatenated (the base record of the pattern pairs)."""
        return self.join(f.centre() for f in self.factors)

    def _options(self, factor, relation: str) -> list[tuple[str, Any, Any]]:
        """One factor's part of a product pattern: ``(name, r0, r1)``.

        Add-remove: the points of its patterns, then its centre (r0 None).
        Replace-one: its patterns that move (r0 != r1), then held points (r0 = r1):
        the endpoints of its patterns, then its centre.
        """
        pats = factor.patterns(relation)
        centre = np.asarray(factor.centre(), dtype=float)
        seen, points = set(), []

        def point(name, p):
            p = np.asarray(p, dtype=float)
            if p.tobytes() not in seen:
                seen.add(p.tobytes())
                points.append((name, p))

        if relation == "add-remove":
            for name, _, r1 in pats:
                point(name, r1)
            point("centre", centre)
            return [(name, None, p) for name, p in points]
        for name, r0, r1 in pats:
            point(f"held at {name} (end)", r1)
            point(f"held at {name} (start)", r0)
        point("held at centre", centre)
        moves = [(name, np.asarray(r0, dtype=float), np.asarray(r1, dtype=float))
                 for name, r0, r1 in pats]
        moves = [m for m in moves if not np.array_equal(m[1], m[2])]  # e.g. a scalar box's
        # "x shape" (mid -> mid): a held point, not a move
        return moves + [(name, p, p) for name, p in points]

    def patterns(self, relation: str) -> list[tuple[str, Any, Any]]:
        """Canary records ``(name, r0, r1)``: combinations of the factors' own patterns.

        Each factor offers options (:meth:`_options`). Add-remove: the added record
        joins one point of each factor (its patterns' records, then its centre).
        Replace-one: each factor either moves along one of its own patterns
        (r0 -> r1) or is held at one point (an endpoint of its patterns, or its
        centre), and at least one factor moves; holding a factor matters when the
        statistic multiplies factors, e.g. y x with x moved and y held at 1. The
        combinations are taken in order of increasing sum of the option indices
        (every factor's first options first; its moves before its held points),
        duplicates and r0 == r1 removed, and cut at ``max_patterns``.
        """
        from dpclaims.analysis.vocabulary import check_relation

        check_relation(relation)
        options = [self._options(f, relation) for f in self.factors]
        out, seen = [], set()
        for idx in _by_index_sum([len(o) for o in options]):
            chosen = [o[i] for o, i in zip(options, idx, strict=True)]
            r1 = self.join(c[2] for c in chosen)
            r0 = None if relation == "add-remove" else self.join(c[1] for c in chosen)
            if r0 is not None and np.array_equal(r0, r1):
                continue
            key = (None if r0 is None else r0.tobytes(), r1.tobytes())
            if key in seen:
                continue
            seen.add(key)
            name = ", ".join(f"factor {i} {c[0]}" for i, c in enumerate(chosen))
            out.append((name, r0, r1))
            if len(out) >= self.max_patterns:
                break
        return out

    def to_dict(self) -> dict:
        """``{"kind": "product", "factors": [...], "shape": [n]}``: for reports, and read
        back by :func:`dpclaims.claims.claims_file.domain_from` (when its factors are)."""
        return {"kind": "product", "factors": [f.to_dict() for f in self.factors],
                "shape": list(self.shape)}


def _product(factors, max_patterns):
    return Product(*factors, max_patterns=max_patterns)


Domain = Box | Ball | FiniteSet | Product


def check_domain(domain) -> Domain:
    """Return ``domain`` if it is a record domain of this module.

    Parameters
    ----------
    domain : object

    Returns
    -------
    Box, Ball, FiniteSet or Product
        ``domain`` itself.

    Raises
    ------
    TypeError
        Naming the type and value of anything else.
    """
    if not isinstance(domain, (Box, Ball, FiniteSet, Product)):
        raise TypeError(f"a record domain must be a Box, Ball, FiniteSet or Product (dpclaims."
                        f"analysis.domains), got {type(domain).__name__}: {domain!r:.80}")
    return domain
