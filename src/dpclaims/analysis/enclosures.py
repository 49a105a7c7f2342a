"""Rigorous enclosures: certified bounds on sensitivities and on the gaps of identities.

A hypothesis search for a neighbouring pair gives a certified *lower* bound on a
sensitivity (a real pair), never an upper bound. For a statistic that is a sum of
per-record contributions f(r) over records r in a low-dimensional domain, interval
arithmetic gives the upper bound too:

* add-remove sensitivity = sup_r ||f(r)||;
* replace-one sensitivity = sup_{r, r'} ||f(r) - f(r')||;

and interval **branch and bound** (Moore, Kearfott & Cloud 2009, ch. 9; Hansen &
Walster 2004) computes both ends: split the domain into boxes, enclose the objective
on each box with interval arithmetic (an upper end valid for every point of the box,
rounding included: mpmath's ``iv`` context rounds every endpoint outward), evaluate it
at real points of the domain (a certified lower end: the point is a real record), and
refine the box whose enclosure is highest until the two ends meet within a tolerance
or a box budget runs out. The upper bound is the largest enclosure among the boxes
left, so it is a bound on the supremum whatever the budget; the budget only decides
how tight it is.

A domain is a box, optionally intersected with L2 balls on groups of its coordinates
(a record x with ||x||_2 <= 1 is the ball's bounding box with the ball constraint:
boxes wholly outside a ball are discarded, checked rigorously; a box that straddles
the sphere is enclosed over the whole box, which only enlarges the bound), times an
optional finite set of labels (y in {0, 1}): ``f(point, label)``.

``f`` is written with interval-capable operations: ``+ - * /``, ``**`` with an integer
exponent, ``abs``, and :func:`exp`, :func:`log`, :func:`sqrt`, :func:`tanh`,
:func:`sigmoid`, :func:`softplus`, :func:`log_sigmoid`, :func:`imin`, :func:`imax` of
this module (or ``mpmath.iv``'s own). Code that reaches numpy ufuncs, ``math`` or
``float()`` raises on an interval input (mpmath refuses to turn an interval into a float
and numpy finds no method), and is reported as "cannot enclose": it is never silently
evaluated at a midpoint.

For identities, :func:`identity_gap` evaluates both sides at given points in interval
arithmetic at high precision and returns a certified bracket on the largest (relative)
gap; :class:`Dual` (forward-mode automatic differentiation over intervals) gives exact
derivatives, enclosed, for identities between gradients. The bracket is on the largest
gap over those points only: for an identity claimed for every input it is a certified
lower bound (it can refute), never an upper bound over the inputs not evaluated (a
universal identity needs a proof, e.g. ``dpclaims.papers.dpvim.exact``'s sympy one).

Nothing here decides a claim: the results are numbers with what was computed
(:meth:`SupBound.source`); the verdict kernel decides (``dpclaims.claims.kernel``).

References
----------
- R. E. Moore, R. B. Kearfott, M. J. Cloud, "Introduction to Interval Analysis",
  SIAM 2009 (interval extensions: ch. 5; global optimisation by branch and bound:
  ch. 9).
- E. Hansen, G. W. Walster, "Global Optimization Using Interval Analysis", 2nd ed.,
  Marcel Dekker 2004.
- L. B. Rall, "Automatic Differentiation: Techniques and Applications", LNCS 120, 1981
  (forward mode over intervals).
- mpmath's interval context ``mpmath.iv`` (outward-rounded endpoints).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import mpmath.libmp as _libmp
from mpmath import iv

#: The largest dimension branch and bound is run in: the number of boxes needed to a
#: given tolerance grows like (1 / tolerance)^dimension.
MAX_DIMENSION = 6
NORMS = ("l2", "l1", "linf")


class EnclosureError(ValueError):
    """An enclosure cannot be computed (the message says why: the dimension, ``f``
    raising on interval input, an ill-formed domain)."""


# ------------------------------------------------------------------------- intervals

@contextmanager
def precision(bits: int):
    """Run the block with ``mpmath.iv`` at ``bits`` bits of working precision (restored
    after; the context is mpmath's global one, so do not share it across threads)."""
    if not isinstance(bits, int) or bits < 24:
        raise ValueError(f"precision must be an integer >= 24 bits, got {bits!r}")
    old = iv.prec
    iv.prec = bits
    try:
        yield
    finally:
        iv.prec = old


def interval(lo, hi=None):
    """The interval [lo, hi] (a point when ``hi`` is None); floats are exact."""
    return iv.mpf(lo) if hi is None else iv.mpf([lo, hi])


def _ends(x) -> tuple:
    """(lower, upper) endpoints of an interval or an exact number, as raw mpf tuples."""
    if not isinstance(x, iv.mpf):
        x = iv.mpf(x)
    return x._mpi_


def lower_float(x) -> float:
    """The lower end of interval ``x`` rounded down to a float (a certified lower bound)."""
    return _libmp.to_float(_ends(x)[0], rnd=_libmp.round_floor)


def upper_float(x) -> float:
    """The upper end of interval ``x`` rounded up to a float (a certified upper bound)."""
    return _libmp.to_float(_ends(x)[1], rnd=_libmp.round_ceiling)


def _hull(lo, hi):
    return iv.mpf([iv.mpf(lo).a, iv.mpf(hi).b])


def imin(a, b):
    """min(a, b) for intervals: [min of lower ends, min of upper ends]."""
    if isinstance(a, Dual) or isinstance(b, Dual):
        raise EnclosureError("imin of dual numbers is not differentiable; take it on values")
    a, b = iv.mpf(a), iv.mpf(b)
    return iv.mpf([min(a.a, b.a), min(a.b, b.b)])


def imax(a, b):
    """max(a, b) for intervals: [max of lower ends, max of upper ends]."""
    if isinstance(a, Dual) or isinstance(b, Dual):
        raise EnclosureError("imax of dual numbers is not differentiable; take it on values")
    a, b = iv.mpf(a), iv.mpf(b)
    return iv.mpf([max(a.a, b.a), max(a.b, b.b)])


def nonneg_sqrt(x):
    """sqrt of an interval whose true value is known to be >= 0 (a squared norm written
    as a sum with cancellations): the part of the enclosure below 0 is dropped. Sound only
    when the exact value is >= 0 for every point enclosed."""
    x = iv.mpf(x)
    if x.b < 0:
        raise EnclosureError("nonneg_sqrt of an interval wholly below 0: the value is not "
                             "a square")
    return iv.sqrt(iv.mpf([max(x.a, 0), x.b]))


# ------------------------------------------------------------------- dual numbers (AD)

class Dual:
    """A value and its gradient, both intervals: forward-mode automatic differentiation.

    ``Dual(value, grad)``: ``value`` an interval, ``grad`` a tuple of intervals (the
    derivatives with respect to the seeded variables). Arithmetic with numbers, intervals
    and other duals follows the chain rule; the elementary functions of this module accept
    duals. The gradient enclosures contain the exact derivatives of the function as
    written (Rall 1981).
    """

    __slots__ = ("v", "g")

    def __init__(self, value, grad):
        self.v = iv.mpf(value) if not isinstance(value, iv.mpf) else value
        self.g = tuple(grad)

    @staticmethod
    def variables(values) -> list[Dual]:
        """Seeded duals for the given values: the k-th has gradient e_k."""
        n = len(values)
        zero, one = iv.mpf(0), iv.mpf(1)
        return [Dual(v, [one if j == k else zero for j in range(n)])
                for k, v in enumerate(values)]

    def _lift(self, other):
        if isinstance(other, Dual):
            return other
        return Dual(other, [iv.mpf(0)] * len(self.g))

    def __add__(self, other):
        o = self._lift(other)
        return Dual(self.v + o.v, [a + b for a, b in zip(self.g, o.g, strict=True)])

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.v, [-a for a in self.g])

    def __sub__(self, other):
        return self + (-self._lift(other))

    def __rsub__(self, other):
        return self._lift(other) - self

    def __mul__(self, other):
        o = self._lift(other)
        return Dual(self.v * o.v, [a * o.v + self.v * b for a, b in zip(self.g, o.g, strict=True)])

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = self._lift(other)
        q = self.v / o.v
        return Dual(q, [(a - q * b) / o.v for a, b in zip(self.g, o.g, strict=True)])

    def __rtruediv__(self, other):
        return self._lift(other) / self

    def __pow__(self, k):
        if not isinstance(k, int):
            raise EnclosureError("Dual ** k needs an integer k")
        if k == 0:
            return Dual(1, [iv.mpf(0)] * len(self.g))
        return Dual(self.v ** k, [k * self.v ** (k - 1) * a for a in self.g])

    def _chain(self, value, derivative):
        return Dual(value, [derivative * a for a in self.g])

    def __repr__(self):
        return f"Dual({self.v!r}, {list(self.g)!r})"


def _unary(x, f, df):
    if isinstance(x, Dual):
        return x._chain(f(x.v), df(x.v))
    return f(x if isinstance(x, iv.mpf) else iv.mpf(x))


def exp(x):
    """exp, on intervals and duals."""
    return _unary(x, iv.exp, iv.exp)


def log(x):
    """Natural log, on intervals (> 0) and duals."""
    return _unary(x, iv.log, lambda v: 1 / v)


def sqrt(x):
    """Square root, on intervals (>= 0) and duals (> 0)."""
    return _unary(x, iv.sqrt, lambda v: 1 / (2 * iv.sqrt(v)))


def _sigmoid_iv(v):
    return 1 / (1 + iv.exp(-v))  # one occurrence of v: the exact range, rounded outward


def sigmoid(x):
    """1 / (1 + exp(-x)), on intervals and duals (derivative sigmoid (1 - sigmoid))."""
    return _unary(x, _sigmoid_iv, lambda v: _sigmoid_iv(v) * _sigmoid_iv(-v))


def _tanh_iv(v):
    return 1 - 2 / (iv.exp(2 * v) + 1)  # monotone in v, one occurrence: no dependency


def tanh(x):
    """tanh via exp, on intervals and duals (derivative 1 - tanh^2)."""
    return _unary(x, _tanh_iv, lambda v: 1 - _tanh_iv(v) ** 2)


def _softplus_iv(v):
    return iv.log(1 + iv.exp(v))


def softplus(x):
    """log(1 + exp(x)), on intervals and duals (derivative sigmoid)."""
    return _unary(x, _softplus_iv, _sigmoid_iv)


def log_sigmoid(x):
    """log sigmoid(x) = -softplus(-x), on intervals and duals (derivative sigmoid(-x))."""
    return _unary(x, lambda v: -_softplus_iv(-v), lambda v: _sigmoid_iv(-v))


def gradient(f: Callable, values: Sequence) -> tuple:
    """(f(values), grad f(values)) enclosed, by forward-mode AD: ``f`` takes a list of
    :class:`Dual` and returns a Dual. ``values``: numbers or intervals."""
    out = f(Dual.variables([iv.mpf(v) for v in values]))
    if not isinstance(out, Dual):
        out = Dual(out, [iv.mpf(0)] * len(values))
    return out.v, out.g


# ---------------------------------------------------------------------------- domains

@dataclass(frozen=True)
class Domain:
    """A record domain: a box, intersected with L2 balls on groups of coordinates, times
    a finite set of labels.

    Parameters
    ----------
    lows, highs : sequence of float
        The box [lows, highs] (finite, lows <= highs), of dimension <= 6.
    balls : sequence of (indices, center, radius)
        Constraints ||x[indices] - center||_2 <= radius.
    labels : sequence, optional
        Finite choices; when given, ``f(point, label)`` is called for each.

    Raises
    ------
    EnclosureError
        A malformed or empty box, a ball index outside the box, a negative radius.
    """

    lows: tuple
    highs: tuple
    balls: tuple = ()
    labels: tuple = ()

    def __post_init__(self):
        lows = tuple(float(v) for v in self.lows)
        highs = tuple(float(v) for v in self.highs)
        if len(lows) != len(highs) or not lows:
            raise EnclosureError(f"lows and highs must have one equal, positive length; got "
                                 f"{len(lows)} and {len(highs)}")
        if not all(math.isfinite(a) and math.isfinite(b) and a <= b
                   for a, b in zip(lows, highs, strict=True)):
            raise EnclosureError("the box must be finite with lows <= highs")
        balls = []
        for idx, center, radius in self.balls:
            idx = tuple(int(i) for i in idx)
            center = tuple(float(c) for c in center)
            if len(idx) != len(center) or not all(0 <= i < len(lows) for i in idx):
                raise EnclosureError(f"ball on coordinates {idx} with center {center} does "
                                     f"not fit a box of dimension {len(lows)}")
            if not (math.isfinite(radius) and radius >= 0):
                raise EnclosureError(f"a ball radius must be finite and >= 0, got {radius!r}")
            balls.append((idx, center, float(radius)))
        object.__setattr__(self, "lows", lows)
        object.__setattr__(self, "highs", highs)
        object.__setattr__(self, "balls", tuple(balls))
        object.__setattr__(self, "labels", tuple(self.labels))

    @classmethod
    def box(cls, lows, highs, labels=()) -> Domain:
        return cls(tuple(lows), tuple(highs), (), tuple(labels))

    @classmethod
    def ball(cls, center, radius, labels=()) -> Domain:
        """The L2 ball ||x - center|| <= radius (its bounding box with the constraint)."""
        c = tuple(float(v) for v in center)
        return cls(tuple(v - radius for v in c), tuple(v + radius for v in c),
                   ((tuple(range(len(c))), c, radius),), tuple(labels))

    @property
    def dim(self) -> int:
        return len(self.lows)

    def squared(self) -> Domain:
        """The domain of pairs (r, r'): the box twice, each ball twice, the label pairs."""
        d = self.dim
        balls = self.balls + tuple((tuple(i + d for i in idx), c, r)
                                   for idx, c, r in self.balls)
        labels = tuple(itertools.product(self.labels, repeat=2)) if self.labels else ()
        return Domain(self.lows * 2, self.highs * 2, balls, labels)

    def describe(self) -> str:
        sides = zip(self.lows, self.highs, strict=True)
        text = "box " + " x ".join(f"[{a:g}, {b:g}]" for a, b in sides)
        for idx, c, r in self.balls:
            text += f", ||x{list(idx)} - {list(c)}|| <= {r:g}"
        if self.labels:
            text += f", labels {list(self.labels)}"
        return text


def _ball_status(box, balls) -> str:
    """"outside" when the box misses some ball (certified), else "maybe"."""
    for idx, center, radius in balls:
        total = iv.mpf(0)
        for i, c in zip(idx, center, strict=True):
            total += (box[i] - c) ** 2
        if total.a > _sq(radius):
            return "outside"
    return "maybe"


def _sq(r: float):
    return (iv.mpf(r) ** 2).b  # the upper end of r^2: "outside" only when certainly so


def _inside(point, balls) -> bool:
    """Whether a real point lies in every ball, certified (sum of squares enclosed)."""
    for idx, center, radius in balls:
        total = iv.mpf(0)
        for i, c in zip(idx, center, strict=True):
            total += (iv.mpf(point[i]) - c) ** 2
        if not total.b <= (iv.mpf(radius) ** 2).a:
            return False
    return True


# -------------------------------------------------------------------------- the norms

def norm_enclosure(values, norm: str = "l2"):
    """An interval containing ||v|| for every v in the interval vector ``values``."""
    vals = [iv.mpf(v) for v in values]
    if norm == "l2":
        return iv.sqrt(sum((abs(v) ** 2 for v in vals), iv.mpf(0)))
    if norm == "l1":
        return sum((abs(v) for v in vals), iv.mpf(0))
    if norm == "linf":
        absv = [abs(v) for v in vals]
        return iv.mpf([max(a.a for a in absv), max(a.b for a in absv)])
    raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")


def _as_vector(out) -> list:
    if isinstance(out, (iv.mpf, int, float)):
        return [iv.mpf(out)]
    try:
        items = list(out.ravel()) if hasattr(out, "ravel") else list(out)
    except TypeError:
        raise EnclosureError(f"f returned {type(out).__name__}, not an interval or a "
                             "sequence of intervals") from None
    vec = []
    for v in items:
        if isinstance(v, float) and math.isnan(v):
            raise EnclosureError("f returned NaN")
        if not isinstance(v, (iv.mpf, int, float)):
            raise EnclosureError(f"f returned an element of type {type(v).__name__}, not an "
                                 "interval")
        vec.append(iv.mpf(v))
    return vec


# ----------------------------------------------------------------- branch and bound

@dataclass(frozen=True)
class SupBound:
    """A certified bracket on a supremum, from :func:`maximise`.

    Attributes
    ----------
    lower : float
        A certified lower bound: the objective enclosed at a real point of the domain
        (``argmax``, ``label``), lower end rounded down.
    upper : float
        A certified upper bound on the supremum over the whole domain (``inf`` when the
        enclosures stayed unbounded).
    boxes : int
        Boxes enclosed.
    stopped : str
        Why it stopped: "tolerance", "below target", "above target", "box budget",
        "unbounded enclosure", "exhausted" (every box pruned or discarded).
    argmax : tuple of float
        The real point of the lower bound (empty when none was found).
    label : object
        Its label (None without labels).
    precision : int
        Bits of working precision.
    seconds : float
        Wall time.
    what : str
        The objective, in words.
    domain : str
        The domain, in words.
    """

    lower: float
    upper: float
    boxes: int
    stopped: str
    argmax: tuple = ()
    label: object = None
    precision: int = 53
    seconds: float = 0.0
    what: str = ""
    domain: str = ""
    notes: tuple = field(default_factory=tuple)

    def source(self) -> str:
        """What was computed, for a bound's ``source``."""
        return (f"interval branch and bound over {self.domain or 'the record domain'}"
                f"{' of ' + self.what if self.what else ''}, {self.boxes} boxes, mpmath iv at "
                f"{self.precision} bits, stopped: {self.stopped}")

    def to_dict(self) -> dict:
        """JSON-able, without the wall time (the same inputs give the same dict)."""
        return {"lower": self.lower, "upper": _finite_or_str(self.upper),
                "boxes": self.boxes, "stopped": self.stopped,
                "argmax": list(self.argmax), "label": _jsonable(self.label),
                "precision": self.precision, "what": self.what, "domain": self.domain,
                "notes": list(self.notes)}


def _finite_or_str(x: float):
    return x if math.isfinite(x) else str(x)


def _jsonable(x):
    if x is None or isinstance(x, (int, float, str)):
        return x
    if isinstance(x, tuple):
        return [_jsonable(v) for v in x]
    return repr(x)


def _call(f, box, label, labelled):
    try:
        return f(box, label) if labelled else f(box)
    except EnclosureError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure means no enclosure
        raise EnclosureError(
            f"cannot enclose: f raised {type(exc).__name__} ({exc}) on interval input; write "
            "it with interval-capable operations (+ - * /, integer powers, abs, and "
            "dpclaims.analysis.enclosures exp/log/sqrt/tanh/sigmoid), not numpy ufuncs, "
            "math or float()") from exc


def _check_maximise_args(domain: Domain, tol: float, max_boxes: int) -> None:
    """Reject what :func:`maximise` cannot do.

    Parameters
    ----------
    domain : Domain
        The domain searched.
    tol : float
        Relative tolerance.
    max_boxes : int
        Box budget.

    Raises
    ------
    EnclosureError
        Dimension above :data:`MAX_DIMENSION`.
    ValueError
        tol <= 0, max_boxes < 1.
    """
    if domain.dim > MAX_DIMENSION:
        raise EnclosureError(
            f"cannot enclose: dimension {domain.dim} > {MAX_DIMENSION}; branch and bound "
            "needs ~(1/tol)^dimension boxes. Reduce the dimension by a symmetry argument "
            "(e.g. a contribution that depends on x only through ||x|| and one inner "
            "product) or leave the claim undecided")
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    if max_boxes < 1:
        raise ValueError(f"max_boxes must be >= 1, got {max_boxes!r}")


def _stop_reason(upper: float, lower: float, target: float | None, tol: float, boxes: int,
                 max_boxes: int) -> str | None:
    """Why branch and bound stops with this bracket, or None to go on.

    Parameters
    ----------
    upper, lower : float
        The current bracket on the sup.
    target : float or None
        A claim's value, enough to decide it.
    tol : float
        Relative tolerance.
    boxes, max_boxes : int
        Boxes enclosed so far and the budget.

    Returns
    -------
    str or None
        ``"below target"``, ``"above target"``, ``"tolerance"``, ``"unbounded
        enclosure"`` or ``"box budget"``; None if none applies.
    """
    if target is not None and upper <= target:
        return "below target"
    if target is not None and lower > target:
        return "above target"
    if math.isfinite(upper) and upper - lower <= tol * max(abs(upper), 1e-300):
        return "tolerance"
    if boxes >= max_boxes:
        return "unbounded enclosure" if not math.isfinite(upper) else "box budget"
    return None


def maximise(objective: Callable, domain: Domain, *, tol: float = 1e-3,
             max_boxes: int = 20_000, target: float | None = None, prec: int = 53,
             hints: Sequence = (), what: str = "") -> SupBound:
    """Certified bracket on sup of a scalar ``objective`` over ``domain`` by interval
    branch and bound.

    Parameters
    ----------
    objective : callable
        ``objective(box)`` (or ``objective(box, label)`` when the domain has labels):
        ``box`` is a list of ``mpmath.iv`` intervals, one per coordinate; it returns an
        interval containing the objective's value at every point of the box (a point
        box gives the value at that point, enclosed).
    domain : Domain
        Dimension <= :data:`MAX_DIMENSION`.
    tol : float
        Stop when ``upper - lower <= tol * max(abs(upper), 1e-300)`` (relative).
    max_boxes : int
        Stop after enclosing this many boxes (the upper bound stays valid).
    target : float, optional
        Stop as soon as the upper bound is <= target or the lower bound is > target
        (a claim's value: enough to decide it).
    prec : int
        Bits of interval working precision.
    hints : sequence of (point, label) or points
        Real points evaluated first for the lower bound (e.g. a known maximiser); a
        point outside the domain is skipped.
    what : str
        The objective in words (for :meth:`SupBound.source`).

    Returns
    -------
    SupBound

    Raises
    ------
    EnclosureError
        Dimension above :data:`MAX_DIMENSION`; ``objective`` raising on interval input
        (non-elementary code), returning something that is not an interval.
    ValueError
        tol <= 0, max_boxes < 1.

    References
    ----------
    Moore, Kearfott & Cloud (2009), "Introduction to Interval Analysis", SIAM, ch. 9
    (the Moore-Skelboe algorithm: refine the box with the highest upper end).
    """
    _check_maximise_args(domain, tol, max_boxes)
    labelled = bool(domain.labels)
    labels = domain.labels if labelled else (None,)
    start = time.perf_counter()
    with precision(prec):
        best = [-math.inf, (), None]  # lower bound, point, label

        def try_point(point, label):
            if not _inside(point, domain.balls):
                return
            sides = zip(point, domain.lows, domain.highs, strict=True)
            if any(not (a <= p <= b) for p, a, b in sides):
                return
            val = iv.mpf(_call(objective, [iv.mpf(p) for p in point], label, labelled))
            lo = lower_float(val)
            if lo > best[0]:
                best[:] = [lo, tuple(float(p) for p in point), label]

        for h in hints:
            point, label = (h if labelled else (h, None))
            try_point(tuple(point), label)
        heap, counter, boxes = [], itertools.count(), 0
        unbounded = False
        for label in labels:
            box = [iv.mpf([a, b]) for a, b in zip(domain.lows, domain.highs, strict=True)]
            if domain.balls and _ball_status(box, domain.balls) == "outside":
                continue
            val = iv.mpf(_call(objective, box, label, labelled))
            boxes += 1
            hi = upper_float(val)
            heapq.heappush(heap, (-hi, next(counter), box, label))
            try_point(tuple(float(b.mid) for b in box), label)
        stopped = "exhausted"
        upper = best[0]
        while heap:
            upper = max(-heap[0][0], best[0])
            if not math.isfinite(upper):
                unbounded = True
            reason = _stop_reason(upper, best[0], target, tol, boxes, max_boxes)
            if reason is not None:
                stopped = reason
                break
            neg_hi, _, box, label = heapq.heappop(heap)
            if -neg_hi <= best[0]:
                continue  # cannot hold a larger value than a point already certified
            k = max(range(len(box)), key=lambda i: box[i].delta)
            mid = box[k].mid
            for half in (iv.mpf([box[k].a, mid]), iv.mpf([mid, box[k].b])):
                child = list(box)
                child[k] = half
                if domain.balls and _ball_status(child, domain.balls) == "outside":
                    continue
                val = iv.mpf(_call(objective, child, label, labelled))
                boxes += 1
                hi = upper_float(val)
                try_point(tuple(float(c.mid) for c in child), label)
                if hi > best[0]:
                    heapq.heappush(heap, (-hi, next(counter), child, label))
        else:
            upper = best[0]
        notes = ("the enclosures stayed unbounded (a division by an interval holding 0, "
                 "or a singular point): no finite upper bound",) if unbounded else ()
    return SupBound(lower=best[0], upper=upper, boxes=boxes, stopped=stopped,
                    argmax=best[1], label=best[2], precision=prec,
                    seconds=time.perf_counter() - start, what=what,
                    domain=domain.describe(), notes=notes)


def sup_norm(f: Callable, domain: Domain, *, norm: str = "l2", **options) -> SupBound:
    """Certified bracket on sup_r ||f(r)|| (the add-remove sensitivity of sum_r f(r)).

    Parameters
    ----------
    f : callable
        The per-record contribution, ``f(point)`` or ``f(point, label)``, written with
        interval-capable operations (module docstring); returns an interval or a
        sequence of intervals.
    domain : Domain
    norm : {"l2", "l1", "linf"}
    **options
        As :func:`maximise` (``tol``, ``max_boxes``, ``target``, ``prec``, ``hints``).

    Returns
    -------
    SupBound

    Raises
    ------
    EnclosureError, ValueError
        As :func:`maximise`; an unknown norm.

    References
    ----------
    Moore, Kearfott & Cloud (2009), "Introduction to Interval Analysis", SIAM, ch. 9.
    """
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    labelled = bool(domain.labels)

    def objective(box, label=None):
        out = f(box, label) if labelled else f(box)
        return norm_enclosure(_as_vector(out), norm)

    options.setdefault("what", f"||f(r)||_{norm[1:]}")
    return maximise(objective, domain, **options)


def sensitivity(f: Callable, domain: Domain, *, relation: str = "replace-one",
                norm: str = "l2", **options) -> SupBound:
    """Certified bracket on the sensitivity of sum_r f(r) over records r in ``domain``.

    add-remove: sup_r ||f(r)||. replace-one: sup_{r, r'} ||f(r) - f(r')||, by branch
    and bound over the domain of pairs (dimension 2 d, so d <= 3); labels are paired too.

    Parameters
    ----------
    f : callable
        The per-record contribution (as :func:`sup_norm`).
    domain : Domain
        The record domain (dimension <= 6 for add-remove, <= 3 for replace-one).
    relation : {"replace-one", "add-remove"}
    norm : {"l2", "l1", "linf"}
    **options
        As :func:`maximise`.

    Returns
    -------
    SupBound
        For replace-one, ``argmax`` is the pair (r, r') concatenated and ``label`` the
        pair of labels.

    Raises
    ------
    EnclosureError
        The (pair) dimension above :data:`MAX_DIMENSION`, ``f`` not enclosable.
    ValueError
        An unknown relation or norm.

    References
    ----------
    Moore, Kearfott & Cloud (2009), "Introduction to Interval Analysis", SIAM, ch. 9.
    """
    if relation == "add-remove":
        return sup_norm(f, domain, norm=norm, **options)
    if relation != "replace-one":
        raise ValueError(f"relation must be 'replace-one' or 'add-remove', got {relation!r}")
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if 2 * domain.dim > MAX_DIMENSION:
        raise EnclosureError(
            f"cannot enclose: replace-one over pairs of records needs dimension 2 x "
            f"{domain.dim} = {2 * domain.dim} > {MAX_DIMENSION}")
    d, labelled = domain.dim, bool(domain.labels)

    def objective(box, labels=None):
        if labelled:
            a, b = f(box[:d], labels[0]), f(box[d:], labels[1])
        else:
            a, b = f(box[:d]), f(box[d:])
        va, vb = _as_vector(a), _as_vector(b)
        return norm_enclosure([x - y for x, y in zip(va, vb, strict=True)], norm)

    options.setdefault("what", f"||f(r) - f(r')||_{norm[1:]} over pairs")
    return maximise(objective, domain.squared(), **options)


# --------------------------------------------------------------------------- identities

@dataclass(frozen=True)
class GapBound:
    """A certified bracket on the largest gap between two sides of an identity.

    ``lower``/``upper``: certified bounds on max over the points of the gap; ``points``
    how many; ``worst`` the index of the point with the largest upper end; ``precision``
    bits; ``relative`` whether the gap is ``|l - r| / (1 + |l| + |r|)`` per coordinate (else
    ``|l - r|``).
    """

    lower: float
    upper: float
    points: int
    worst: int
    precision: int
    relative: bool
    seconds: float = 0.0

    def source(self) -> str:
        what = "relative gap |l - r| / (1 + |l| + |r|)" if self.relative else "gap |l - r|"
        return (f"both sides in interval arithmetic (mpmath iv at {self.precision} bits) at "
                f"{self.points} points; the {what} enclosed")

    def to_dict(self) -> dict:
        return {"lower": self.lower, "upper": self.upper, "points": self.points,
                "worst": self.worst, "precision": self.precision, "relative": self.relative}


def identity_gap(lhs: Callable, rhs: Callable, points: Sequence, *, prec: int = 113,
                 relative: bool = True) -> GapBound:
    """Certified bracket on max over ``points`` of the gap between two sides of an identity.

    Both sides are evaluated in interval arithmetic at ``prec`` bits (the working
    precision is set around the calls), so the bracket contains the exact gap of the
    exact values at every point: a true identity gives [0, u] with u of the order of
    2^-prec times the values' size; a false one gives a lower end above 0.

    Parameters
    ----------
    lhs, rhs : callable
        ``side(point)`` -> an interval or a sequence of intervals (the same length for
        both sides), computed with interval-capable operations (:class:`Dual` for
        derivatives).
    points : sequence
        The points (any objects the sides accept), at least one.
    prec : int
        Bits of working precision.
    relative : bool
        Per coordinate ``|l - r| / (1 + |l| + |r|)`` (default) or ``|l - r|``; the largest over
        coordinates and points.

    Returns
    -------
    GapBound

    Raises
    ------
    EnclosureError
        A side raising on interval input, sides of different lengths, no points.

    References
    ----------
    Moore, Kearfott & Cloud (2009), "Introduction to Interval Analysis", SIAM, ch. 5-6.
    """
    points = list(points)
    if not points:
        raise EnclosureError("identity_gap needs at least one point")
    start = time.perf_counter()
    lo_best, hi_best, worst = 0.0, 0.0, 0
    with precision(prec):
        for k, p in enumerate(points):
            left = _as_vector(_call(lambda b: lhs(b), p, None, False))
            right = _as_vector(_call(lambda b: rhs(b), p, None, False))
            if len(left) != len(right):
                raise EnclosureError(f"the sides have {len(left)} and {len(right)} "
                                     f"coordinates at point {k}")
            for a, b in zip(left, right, strict=True):
                gap = abs(a - b)
                if relative:
                    gap = gap / (1 + abs(a) + abs(b))
                lo, hi = lower_float(gap), upper_float(gap)
                lo_best = max(lo_best, lo)
                if hi > hi_best:
                    hi_best, worst = hi, k
    return GapBound(lower=max(lo_best, 0.0), upper=hi_best, points=len(points), worst=worst,
                    precision=prec, relative=relative, seconds=time.perf_counter() - start)
